//! The error type shared by every decoder, encoder and editor of the CIL codec.

use core::fmt;

use super::instruction::Token;
use crate::support::bytes::{ByteReader, CompressedError, Truncated};

/// What went wrong while decoding, encoding, editing or analysing CIL.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The input ended before a complete item could be read.
    UnexpectedEnd,
    /// A byte (or `0xFE`-prefixed pair, as `0xFExx`) that is not a CIL opcode.
    UnknownOpcode(u16),
    /// The method header is malformed; the text says how.
    InvalidHeader(&'static str),
    /// An extra data (exception handling) section is malformed; the text says how.
    InvalidSection(&'static str),
    /// A branch target or exception-clause offset that is not the start of an
    /// instruction nor the end of the code (the value is the IL offset).
    InvalidTarget(i64),
    /// A signature blob is malformed; the text says how.
    InvalidSignature(&'static str),
    /// A compressed integer is malformed (lead bits `111`) or out of range.
    InvalidCompressedInt,
    /// The input continues after a complete item that should have consumed it all.
    TrailingBytes,
    /// A signature nests deeper than [`MAX_SIG_DEPTH`](super::MAX_SIG_DEPTH).
    TooDeep,
    /// An operand does not fit the operand kind of its opcode.
    OperandMismatch(&'static str),
    /// A label that names no instruction of the body.
    UnknownLabel,
    /// The body cannot be encoded; the text says why.
    Unencodable(&'static str),
    /// Stack-effect analysis failed; the text says why.
    InvalidStack(&'static str),
    /// The call-site resolver knew nothing about this token.
    UnresolvedToken(Token),
    /// The operation does not handle this method; the text says why.
    Unsupported(&'static str),
}

/// An error of the CIL codec: what went wrong ([`ErrorKind`]) and where.
///
/// For decoders, [`offset`](Error::offset) is the byte offset in the input
/// buffer handed to the decoder. For editing, encoding and stack analysis it is
/// the IL offset (in the last computed layout) of the instruction concerned,
/// or 0 when no instruction is concerned.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    offset: usize,
    kind: ErrorKind,
}

impl Error {
    /// Builds an error.
    pub fn new(offset: usize, kind: ErrorKind) -> Self {
        Error { offset, kind }
    }

    /// The byte offset (decoders) or IL offset (editing, analysis) concerned.
    pub fn offset(&self) -> usize {
        self.offset
    }

    /// What went wrong.
    pub fn kind(&self) -> &ErrorKind {
        &self.kind
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ErrorKind::UnexpectedEnd => f.write_str("unexpected end of input"),
            ErrorKind::UnknownOpcode(op) if *op > 0xFF => write!(f, "unknown opcode 0x{op:04X}"),
            ErrorKind::UnknownOpcode(op) => write!(f, "unknown opcode 0x{op:02X}"),
            ErrorKind::InvalidHeader(s) => write!(f, "invalid method header: {s}"),
            ErrorKind::InvalidSection(s) => write!(f, "invalid extra data section: {s}"),
            ErrorKind::InvalidTarget(t) => {
                write!(f, "target IL offset {t} is not an instruction boundary")
            }
            ErrorKind::InvalidSignature(s) => write!(f, "invalid signature: {s}"),
            ErrorKind::InvalidCompressedInt => f.write_str("invalid compressed integer"),
            ErrorKind::TrailingBytes => f.write_str("unexpected trailing bytes"),
            ErrorKind::TooDeep => f.write_str("signature nested too deeply"),
            ErrorKind::OperandMismatch(s) => write!(f, "operand does not fit the opcode: {s}"),
            ErrorKind::UnknownLabel => f.write_str("label names no instruction of this body"),
            ErrorKind::Unencodable(s) => write!(f, "cannot encode: {s}"),
            ErrorKind::InvalidStack(s) => write!(f, "stack analysis failed: {s}"),
            ErrorKind::UnresolvedToken(t) => write!(f, "no call-site information for token {t}"),
            ErrorKind::Unsupported(s) => write!(f, "unsupported: {s}"),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "at offset {} (0x{:X}): {}",
            self.offset, self.offset, self.kind
        )
    }
}

impl core::error::Error for Error {}

impl From<Error> for crate::Error {
    /// Keeps the CIL codec's error as the source (its text and offset in the
    /// message), with the code `E_FAIL`: `?` on `MethodBody::decode` or
    /// `encode` inside a `Profiler` callback.
    ///
    /// ```
    /// fn body_len(il: &[u8]) -> Result<usize, corprof::Error> {
    ///     Ok(corprof::cil::MethodBody::decode(il)?.encode()?.len())
    /// }
    /// let error = body_len(&[]).unwrap_err();
    /// assert_eq!(error.code(), corprof::E_FAIL);
    /// assert!(core::error::Error::source(&error).is_some());
    /// ```
    fn from(error: Error) -> crate::Error {
        crate::Error::with_source(crate::E_FAIL, "", error)
    }
}

/// The crate's byte reader ([`ByteReader`]) with the codec's errors.
///
/// `base` is added to positions in errors, so that errors name offsets in the
/// caller's whole buffer.
pub(crate) struct Reader<'a> {
    bytes: ByteReader<'a>,
    base: usize,
}

impl<'a> Reader<'a> {
    pub(crate) fn new(data: &'a [u8], base: usize) -> Self {
        Reader {
            bytes: ByteReader::new(data),
            base,
        }
    }

    /// Position relative to the start of `data`.
    pub(crate) fn pos(&self) -> usize {
        self.bytes.pos()
    }

    /// Absolute position (base + pos), for errors.
    pub(crate) fn abs(&self) -> usize {
        self.base + self.pos()
    }

    pub(crate) fn remaining(&self) -> usize {
        self.bytes.remaining()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    pub(crate) fn err(&self, kind: ErrorKind) -> Error {
        Error::new(self.abs(), kind)
    }

    /// [`ErrorKind::UnexpectedEnd`] where the short read started.
    fn end(&self, t: Truncated) -> Error {
        Error::new(self.base + t.offset, ErrorKind::UnexpectedEnd)
    }

    pub(crate) fn bytes(&mut self, n: usize) -> Result<&'a [u8], Error> {
        self.bytes.take(n).map_err(|t| self.end(t))
    }

    pub(crate) fn peek_u8(&self) -> Result<u8, Error> {
        self.bytes.peek_u8().map_err(|t| self.end(t))
    }

    pub(crate) fn u8(&mut self) -> Result<u8, Error> {
        self.bytes.u8().map_err(|t| self.end(t))
    }

    pub(crate) fn u16(&mut self) -> Result<u16, Error> {
        self.bytes.u16().map_err(|t| self.end(t))
    }

    pub(crate) fn u32(&mut self) -> Result<u32, Error> {
        self.bytes.u32().map_err(|t| self.end(t))
    }

    pub(crate) fn u64(&mut self) -> Result<u64, Error> {
        self.bytes.u64().map_err(|t| self.end(t))
    }

    fn compressed_err(&self, e: CompressedError) -> Error {
        match e {
            CompressedError::Truncated(t) => self.end(t),
            CompressedError::Invalid { offset } => {
                Error::new(self.base + offset, ErrorKind::InvalidCompressedInt)
            }
        }
    }

    /// A compressed unsigned integer (II.23.2).
    pub(crate) fn compressed_u32(&mut self) -> Result<u32, Error> {
        self.bytes
            .compressed_u32()
            .map_err(|e| self.compressed_err(e))
    }

    /// A compressed signed integer (II.23.2).
    pub(crate) fn compressed_i32(&mut self) -> Result<i32, Error> {
        self.bytes
            .compressed_i32()
            .map_err(|e| self.compressed_err(e))
    }
}
