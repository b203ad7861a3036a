//! Reading an event's payload by its fields, with every length checked.

use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

use super::metadata::{Field, FieldType};
use crate::bytes::{ByteReader, Truncated};
use crate::GUID;

/// Why a blob could not be decoded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Error {
    /// A field runs past the end of the blob.
    Truncated {
        /// Where the field starts.
        offset: usize,
        /// How many bytes it needs (for strings: at least).
        needed: usize,
    },
    /// A string is not valid UTF-16.
    InvalidUtf16 {
        /// Where the string starts.
        offset: usize,
    },
    /// The metadata declares more fields than any event has.
    TooManyFields(u32),
    /// Something this decoder does not read (named).
    Unsupported(String),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Truncated { offset, needed } => {
                write!(f, "truncated: a field at byte {offset} needs {needed} bytes more than the blob has")
            }
            Error::InvalidUtf16 { offset } => {
                write!(f, "the string at byte {offset} is not valid UTF-16")
            }
            Error::TooManyFields(n) => write!(f, "the metadata declares {n} fields"),
            Error::Unsupported(what) => write!(f, "{what} is not decoded"),
        }
    }
}

#[cfg(feature = "std")]
impl std::error::Error for Error {}

/// One decoded field value.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// `Boolean`.
    Bool(bool),
    /// `Char`.
    Char(u16),
    /// Signed integers (`SByte`, `Int16`, `Int32`, `Int64`).
    Int(i64),
    /// Unsigned integers (`Byte`, `UInt16`, `UInt32`, `UInt64`) and pointers.
    UInt(u64),
    /// `Single` and `Double`.
    Float(f64),
    /// `DateTime`, as the FILETIME ticks on the wire.
    DateTime(u64),
    /// `Guid`.
    Guid(GUID),
    /// `String`.
    String(String),
}

impl Value {
    /// The value as a signed integer, if it is an integer that fits.
    pub fn as_i64(&self) -> Option<i64> {
        match *self {
            Value::Int(v) => Some(v),
            Value::UInt(v) => i64::try_from(v).ok(),
            _ => None,
        }
    }

    /// The value as an unsigned integer, if it is one.
    pub fn as_u64(&self) -> Option<u64> {
        match *self {
            Value::UInt(v) => Some(v),
            Value::Int(v) => u64::try_from(v).ok(),
            _ => None,
        }
    }

    /// The value as a string, if it is one.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(s) => Some(s),
            _ => None,
        }
    }
}

/// Decodes `data` field by field. Fields past the end of a shorter payload
/// are an error; bytes after the last field are ignored (later event
/// versions append fields).
pub fn decode_payload(fields: &[Field], data: &[u8]) -> Result<Vec<Value>, Error> {
    let mut r = Reader::new(data);
    fields.iter().map(|field| r.value(field.ty)).collect()
}

/// The crate's byte reader ([`ByteReader`]) with this module's errors.
pub(super) struct Reader<'a> {
    bytes: ByteReader<'a>,
}

/// [`Error::Truncated`]: `needed` counts the bytes missing.
fn truncated(t: Truncated) -> Error {
    Error::Truncated {
        offset: t.offset,
        needed: t.needed - t.available,
    }
}

impl<'a> Reader<'a> {
    pub(super) fn new(data: &'a [u8]) -> Reader<'a> {
        Reader {
            bytes: ByteReader::new(data),
        }
    }

    pub(super) fn remaining(&self) -> usize {
        self.bytes.remaining()
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], Error> {
        self.bytes.array().map_err(truncated)
    }

    pub(super) fn u32(&mut self) -> Result<u32, Error> {
        self.bytes.u32().map_err(truncated)
    }

    pub(super) fn u64(&mut self) -> Result<u64, Error> {
        self.bytes.u64().map_err(truncated)
    }

    /// A NUL-terminated UTF-16 string; a missing NUL is truncated at the
    /// string's start.
    pub(super) fn string(&mut self) -> Result<String, Error> {
        let start = self.bytes.pos();
        let units = self.bytes.utf16_until_nul().map_err(|t| Error::Truncated {
            offset: start,
            needed: t.needed - t.available,
        })?;
        String::from_utf16(&units).map_err(|_| Error::InvalidUtf16 { offset: start })
    }

    fn value(&mut self, ty: FieldType) -> Result<Value, Error> {
        Ok(match ty {
            FieldType::Boolean => Value::Bool(self.u32()? != 0),
            FieldType::Char => Value::Char(u16::from_le_bytes(self.array()?)),
            FieldType::SByte => Value::Int(i8::from_le_bytes(self.array()?).into()),
            FieldType::Byte => Value::UInt(u8::from_le_bytes(self.array()?).into()),
            FieldType::Int16 => Value::Int(i16::from_le_bytes(self.array()?).into()),
            FieldType::UInt16 => Value::UInt(u16::from_le_bytes(self.array()?).into()),
            FieldType::Int32 => Value::Int(i32::from_le_bytes(self.array()?).into()),
            FieldType::UInt32 => Value::UInt(self.u32()?.into()),
            FieldType::Int64 => Value::Int(i64::from_le_bytes(self.array()?)),
            FieldType::UInt64 => Value::UInt(self.u64()?),
            FieldType::Single => Value::Float(f32::from_le_bytes(self.array()?).into()),
            FieldType::Double => Value::Float(f64::from_le_bytes(self.array()?)),
            FieldType::DateTime => Value::DateTime(self.u64()?),
            FieldType::Guid => Value::Guid(self.bytes.guid().map_err(truncated)?),
            FieldType::String => Value::String(self.string()?),
            FieldType::Pointer => {
                let bytes = self
                    .bytes
                    .take(core::mem::size_of::<usize>())
                    .map_err(truncated)?;
                let mut v = [0u8; 8];
                v[..bytes.len()].copy_from_slice(bytes);
                Value::UInt(u64::from_le_bytes(v))
            }
        })
    }
}
