//! Method headers (ECMA-335 II.25.4.2 and II.25.4.3): tiny and fat formats.

use alloc::vec::Vec;

use super::error::{Error, ErrorKind, Reader};
use super::instruction::Token;

/// `CorILMethod_TinyFormat`: low two bits of a tiny header.
pub(crate) const TINY_FORMAT: u8 = 0x2;
/// `CorILMethod_FatFormat`: low two bits of a fat header's flags.
pub(crate) const FAT_FORMAT: u16 = 0x3;
/// `CorILMethod_MoreSects`: extra data sections follow the code.
pub(crate) const MORE_SECTS: u16 = 0x8;
/// `CorILMethod_InitLocals`: zero-initialise locals.
pub(crate) const INIT_LOCALS: u16 = 0x10;

/// The largest code size a tiny header can hold.
pub(crate) const TINY_MAX_CODE_SIZE: u32 = 63;
/// The max stack implied by a tiny header.
pub(crate) const TINY_MAX_STACK: u16 = 8;

/// A decoded method header.
///
/// On encoding, a tiny header is kept tiny unless the body demands a fat one
/// (locals, exception sections, `init_locals`, max stack over 8, or code over
/// 63 bytes); a fat header stays fat.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MethodHeader {
    /// Whether the header is (or was decoded as) fat.
    pub fat: bool,
    /// Maximum evaluation-stack depth (8 for tiny headers).
    pub max_stack: u16,
    /// The `InitLocals` flag.
    pub init_locals: bool,
    /// The StandAloneSig token of the local variable signature, if any.
    pub local_var_sig: Option<Token>,
    pub(crate) code_size: u32,
    pub(crate) more_sects: bool,
    /// Fat flag bits other than format, MoreSects and InitLocals (kept verbatim).
    pub(crate) other_flags: u16,
}

impl MethodHeader {
    /// A tiny header for a new body (max stack 8, no locals).
    pub fn tiny() -> Self {
        MethodHeader {
            fat: false,
            max_stack: TINY_MAX_STACK,
            init_locals: false,
            local_var_sig: None,
            code_size: 0,
            more_sects: false,
            other_flags: 0,
        }
    }

    /// Code size in bytes, as decoded or as of the last layout.
    pub fn code_size(&self) -> u32 {
        self.code_size
    }

    /// Whether the decoded header announced extra data sections.
    pub fn more_sects(&self) -> bool {
        self.more_sects
    }

    /// Header size in bytes: 1 (tiny) or 12 (fat).
    pub fn size(&self) -> usize {
        if self.fat {
            12
        } else {
            1
        }
    }

    /// Decodes a header from the start of `bytes`, returning it and its size.
    pub fn decode(bytes: &[u8]) -> Result<(MethodHeader, usize), Error> {
        let mut r = Reader::new(bytes, 0);
        let first = r.peek_u8()?;
        match first & 0x3 {
            0x2 => {
                r.u8()?;
                let mut h = MethodHeader::tiny();
                h.code_size = u32::from(first >> 2);
                Ok((h, 1))
            }
            0x3 => {
                let flags_size = r.u16()?;
                let size = flags_size >> 12;
                if size != 3 {
                    return Err(Error::new(
                        1,
                        ErrorKind::InvalidHeader("fat header size must be 3 dwords"),
                    ));
                }
                let flags = flags_size & 0x0FFF;
                let max_stack = r.u16()?;
                let code_size = r.u32()?;
                let tok = r.u32()?;
                Ok((
                    MethodHeader {
                        fat: true,
                        max_stack,
                        init_locals: flags & INIT_LOCALS != 0,
                        local_var_sig: if tok == 0 { None } else { Some(Token(tok)) },
                        code_size,
                        more_sects: flags & MORE_SECTS != 0,
                        other_flags: flags & !(FAT_FORMAT | MORE_SECTS | INIT_LOCALS),
                    },
                    12,
                ))
            }
            _ => Err(Error::new(
                0,
                ErrorKind::InvalidHeader("format bits are neither tiny (2) nor fat (3)"),
            )),
        }
    }

    /// Whether encoding with these parameters needs a fat header.
    pub(crate) fn needs_fat(&self, code_size: u32, has_sections: bool) -> bool {
        self.fat
            || has_sections
            || self.local_var_sig.is_some()
            || self.init_locals
            || self.max_stack > TINY_MAX_STACK
            || code_size > TINY_MAX_CODE_SIZE
            || self.other_flags != 0
    }

    /// Appends the encoded header.
    pub(crate) fn encode(&self, out: &mut Vec<u8>, fat: bool, code_size: u32, more_sects: bool) {
        if !fat {
            out.push(((code_size as u8) << 2) | TINY_FORMAT);
            return;
        }
        let mut flags = FAT_FORMAT | self.other_flags;
        if more_sects {
            flags |= MORE_SECTS;
        }
        if self.init_locals {
            flags |= INIT_LOCALS;
        }
        out.extend_from_slice(&(flags | (3 << 12)).to_le_bytes());
        out.extend_from_slice(&self.max_stack.to_le_bytes());
        out.extend_from_slice(&code_size.to_le_bytes());
        out.extend_from_slice(&self.local_var_sig.map_or(0, |t| t.0).to_le_bytes());
    }
}
