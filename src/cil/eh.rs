//! Exception-handling sections (ECMA-335 II.25.4.5 and II.25.4.6).

use alloc::vec::Vec;

use super::error::{Error, ErrorKind, Reader};
use super::instruction::{Label, Token};

/// `CorILMethod_Sect_EHTable`.
pub(crate) const SECT_EH_TABLE: u8 = 0x1;
/// `CorILMethod_Sect_FatFormat`.
pub(crate) const SECT_FAT_FORMAT: u8 = 0x40;
/// `CorILMethod_Sect_MoreSects`.
pub(crate) const SECT_MORE_SECTS: u8 = 0x80;

/// The kind of an exception clause and its kind-specific data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClauseKind {
    /// A typed handler (`COR_ILEXCEPTION_CLAUSE_EXCEPTION`, flags 0) catching this class.
    Catch(Token),
    /// A filtered handler (flags 1); the filter code starts at this label.
    Filter(Label),
    /// A `finally` handler (flags 2).
    Finally,
    /// A `fault` handler (flags 4).
    Fault,
}

impl ClauseKind {
    /// The clause flags value.
    pub fn flags(self) -> u32 {
        match self {
            ClauseKind::Catch(_) => 0,
            ClauseKind::Filter(_) => 1,
            ClauseKind::Finally => 2,
            ClauseKind::Fault => 4,
        }
    }
}

/// One exception clause, with its ranges given as labels: `try_start` is the
/// first instruction of the protected block and `try_end` the first
/// instruction after it (or [`Label::END`]); likewise for the handler.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExceptionClause {
    /// Catch, filter, finally or fault.
    pub kind: ClauseKind,
    /// First instruction of the protected block.
    pub try_start: Label,
    /// First instruction after the protected block.
    pub try_end: Label,
    /// First instruction of the handler.
    pub handler_start: Label,
    /// First instruction after the handler.
    pub handler_end: Label,
    /// Index of the section this clause was decoded from (`u32::MAX`: the last one).
    pub(crate) section: u32,
    /// The raw class-token/filter-offset field for finally and fault clauses.
    pub(crate) extra: u32,
}

impl ExceptionClause {
    /// A new clause; it is encoded in the last exception section of the body
    /// (a new small section when the body has none).
    pub fn new(
        kind: ClauseKind,
        try_start: Label,
        try_end: Label,
        handler_start: Label,
        handler_end: Label,
    ) -> Self {
        ExceptionClause {
            kind,
            try_start,
            try_end,
            handler_start,
            handler_end,
            section: u32::MAX,
            extra: 0,
        }
    }
}

/// A clause as stored in the section, with raw offsets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct RawClause {
    pub(crate) flags: u32,
    pub(crate) try_offset: u32,
    pub(crate) try_length: u32,
    pub(crate) handler_offset: u32,
    pub(crate) handler_length: u32,
    pub(crate) class_or_filter: u32,
}

impl RawClause {
    pub(crate) fn fits_small(&self) -> bool {
        self.try_offset <= 0xFFFF
            && self.try_length <= 0xFF
            && self.handler_offset <= 0xFFFF
            && self.handler_length <= 0xFF
            && self.flags <= 0xFFFF
    }
}

/// A decoded section: its format and clauses.
pub(crate) struct RawSection {
    pub(crate) fat: bool,
    pub(crate) clauses: Vec<RawClause>,
}

/// Decodes the extra data sections that start at `start` in `bytes` (already
/// 4-byte aligned by the caller).
pub(crate) fn decode_sections(bytes: &[u8], start: usize) -> Result<Vec<RawSection>, Error> {
    let mut out = Vec::new();
    let mut pos = start;
    loop {
        let rest = bytes.get(pos..).unwrap_or(&[]);
        let mut r = Reader::new(rest, pos);
        let kind = r.u8()?;
        if kind & 0x3F != SECT_EH_TABLE {
            return Err(Error::new(
                pos,
                ErrorKind::InvalidSection("section kind is not an exception table"),
            ));
        }
        let fat = kind & SECT_FAT_FORMAT != 0;
        let data_size = if fat {
            let b = r.bytes(3)?;
            u32::from_le_bytes([b[0], b[1], b[2], 0]) as usize
        } else {
            let n = usize::from(r.u8()?);
            r.u16()?; // reserved
            n
        };
        let clause_size = if fat { 24 } else { 12 };
        if data_size < 4 {
            return Err(Error::new(
                pos,
                ErrorKind::InvalidSection("data size smaller than the section header"),
            ));
        }
        let count = (data_size - 4) / clause_size;
        if count > r.remaining() / clause_size {
            return Err(Error::new(
                pos + rest.len().min(data_size),
                ErrorKind::UnexpectedEnd,
            ));
        }
        let mut clauses = Vec::with_capacity(count);
        for _ in 0..count {
            let c = if fat {
                RawClause {
                    flags: r.u32()?,
                    try_offset: r.u32()?,
                    try_length: r.u32()?,
                    handler_offset: r.u32()?,
                    handler_length: r.u32()?,
                    class_or_filter: r.u32()?,
                }
            } else {
                RawClause {
                    flags: u32::from(r.u16()?),
                    try_offset: u32::from(r.u16()?),
                    try_length: u32::from(r.u8()?),
                    handler_offset: u32::from(r.u16()?),
                    handler_length: u32::from(r.u8()?),
                    class_or_filter: r.u32()?,
                }
            };
            clauses.push(c);
        }
        out.push(RawSection { fat, clauses });
        if kind & SECT_MORE_SECTS == 0 {
            break;
        }
        // Next section starts 4-byte aligned after this one's declared size.
        let next = pos
            .checked_add(data_size)
            .ok_or_else(|| Error::new(pos, ErrorKind::UnexpectedEnd))?;
        pos = (next + 3) & !3;
        if pos >= bytes.len() {
            return Err(Error::new(pos, ErrorKind::UnexpectedEnd));
        }
    }
    Ok(out)
}

/// Encodes one section; `fat` selects the format; `more` sets MoreSects.
pub(crate) fn encode_section(
    out: &mut Vec<u8>,
    fat: bool,
    more: bool,
    clauses: &[RawClause],
) -> Result<(), ErrorKind> {
    let mut kind = SECT_EH_TABLE;
    if more {
        kind |= SECT_MORE_SECTS;
    }
    if fat {
        kind |= SECT_FAT_FORMAT;
        let size = clauses
            .len()
            .checked_mul(24)
            .and_then(|n| n.checked_add(4))
            .filter(|&n| n <= 0xFF_FFFF)
            .ok_or(ErrorKind::Unencodable("too many exception clauses"))?;
        out.push(kind);
        out.extend_from_slice(&(size as u32).to_le_bytes()[..3]);
        for c in clauses {
            for v in [
                c.flags,
                c.try_offset,
                c.try_length,
                c.handler_offset,
                c.handler_length,
                c.class_or_filter,
            ] {
                out.extend_from_slice(&v.to_le_bytes());
            }
        }
    } else {
        let size = 4 + 12 * clauses.len();
        if size > 0xFF {
            return Err(ErrorKind::Unencodable(
                "too many clauses for a small section",
            ));
        }
        out.push(kind);
        out.push(size as u8);
        out.extend_from_slice(&[0, 0]);
        for c in clauses {
            if !c.fits_small() {
                return Err(ErrorKind::Unencodable(
                    "clause does not fit a small section",
                ));
            }
            out.extend_from_slice(&(c.flags as u16).to_le_bytes());
            out.extend_from_slice(&(c.try_offset as u16).to_le_bytes());
            out.push(c.try_length as u8);
            out.extend_from_slice(&(c.handler_offset as u16).to_le_bytes());
            out.push(c.handler_length as u8);
            out.extend_from_slice(&c.class_or_filter.to_le_bytes());
        }
    }
    Ok(())
}
