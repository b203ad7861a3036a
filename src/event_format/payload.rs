//! Decoding an event's payload by its fields, every length checked.

use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

use super::metadata::{Field, FieldType, Length};
use crate::support::bytes::ByteReader;
use crate::GUID;

/// One decoded value.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// `Boolean`.
    Bool(bool),
    /// `Char`: a UTF-16 unit.
    Char(u16),
    /// Signed integers.
    Int(i64),
    /// Unsigned integers and pointers.
    UInt(u64),
    /// `Single` and `Double`.
    Float(f64),
    /// `Decimal`: its 16 bytes as they are.
    Decimal([u8; 16]),
    /// `DateTime`: FILETIME ticks.
    DateTime(u64),
    /// `Guid`.
    Guid(GUID),
    /// `String`.
    String(String),
    /// A struct's fields, by name, in order.
    Struct(Vec<(String, Value)>),
    /// An array's elements.
    Array(Vec<Value>),
}

impl Value {
    /// The value as an unsigned integer, if it is a non-negative integer.
    pub fn as_u64(&self) -> Option<u64> {
        match *self {
            Value::UInt(v) => Some(v),
            Value::Int(v) => u64::try_from(v).ok(),
            _ => None,
        }
    }

    /// The value as a signed integer, if it is an integer that fits.
    pub fn as_i64(&self) -> Option<i64> {
        match *self {
            Value::Int(v) => Some(v),
            Value::UInt(v) => i64::try_from(v).ok(),
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

    /// The elements, if it is an array.
    pub fn as_array(&self) -> Option<&[Value]> {
        match self {
            Value::Array(v) => Some(v),
            _ => None,
        }
    }

    /// A field of a struct value, by name.
    pub fn field(&self, name: &str) -> Option<&Value> {
        match self {
            Value::Struct(fields) => fields.iter().find(|(n, _)| n == name).map(|(_, v)| v),
            _ => None,
        }
    }
}

/// Why a payload could not be decoded by its fields.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PayloadError {
    /// Where in the payload.
    pub offset: usize,
    /// What went wrong.
    pub what: &'static str,
}

impl fmt::Display for PayloadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "payload byte {}: {}", self.offset, self.what)
    }
}

#[cfg(feature = "std")]
impl std::error::Error for PayloadError {}

/// Decodes `data` by `fields`, pointers being `pointer_size` bytes (4 or 8).
/// Bytes after the last field are ignored (later event versions append
/// fields); a payload shorter than its fields is an error.
pub fn decode_fields(
    fields: &[Field],
    data: &[u8],
    pointer_size: u8,
) -> Result<Vec<(String, Value)>, PayloadError> {
    let values = decode_values(fields, data, pointer_size)?;
    Ok(fields.iter().map(|f| f.name.clone()).zip(values).collect())
}

/// [`decode_fields`] without the names: the values in field order.
pub(crate) fn decode_values(
    fields: &[Field],
    data: &[u8],
    pointer_size: u8,
) -> Result<Vec<Value>, PayloadError> {
    let mut d = Decoder {
        r: ByteReader::new(data),
        pointer_size,
    };
    d.values(fields)
}

struct Decoder<'a> {
    r: ByteReader<'a>,
    pointer_size: u8,
}

impl Decoder<'_> {
    fn err(&self, what: &'static str) -> PayloadError {
        PayloadError {
            offset: self.r.pos(),
            what,
        }
    }

    /// The values of `fields`, in order; an array's count field is found
    /// among the earlier ones by name.
    fn values(&mut self, fields: &[Field]) -> Result<Vec<Value>, PayloadError> {
        let mut out: Vec<Value> = Vec::with_capacity(fields.len());
        for field in fields {
            let value = self.value(&field.ty, &fields[..out.len()], &out)?;
            out.push(value);
        }
        Ok(out)
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], PayloadError> {
        let e = self.err("payload truncated");
        self.r.array().map_err(|_| e)
    }

    fn value(
        &mut self,
        ty: &FieldType,
        earlier_fields: &[Field],
        earlier: &[Value],
    ) -> Result<Value, PayloadError> {
        Ok(match ty {
            FieldType::Boolean => Value::Bool(u32::from_le_bytes(self.array()?) != 0),
            FieldType::Char => Value::Char(u16::from_le_bytes(self.array()?)),
            FieldType::SByte => Value::Int(i8::from_le_bytes(self.array()?).into()),
            FieldType::Byte => Value::UInt(u8::from_le_bytes(self.array()?).into()),
            FieldType::Int16 => Value::Int(i16::from_le_bytes(self.array()?).into()),
            FieldType::UInt16 => Value::UInt(u16::from_le_bytes(self.array()?).into()),
            FieldType::Int32 => Value::Int(i32::from_le_bytes(self.array()?).into()),
            FieldType::UInt32 => Value::UInt(u32::from_le_bytes(self.array()?).into()),
            FieldType::Int64 => Value::Int(i64::from_le_bytes(self.array()?)),
            FieldType::UInt64 => Value::UInt(u64::from_le_bytes(self.array()?)),
            FieldType::Single => Value::Float(f32::from_le_bytes(self.array()?).into()),
            FieldType::Double => Value::Float(f64::from_le_bytes(self.array()?)),
            FieldType::Decimal => Value::Decimal(self.array()?),
            FieldType::DateTime => Value::DateTime(u64::from_le_bytes(self.array()?)),
            FieldType::Guid => {
                let e = self.err("payload truncated");
                Value::Guid(self.r.guid().map_err(|_| e)?)
            }
            FieldType::String => {
                let e = self.err("string without NUL");
                let units = self.r.utf16_until_nul().map_err(|_| e.clone())?;
                Value::String(String::from_utf16(&units).map_err(|_| PayloadError {
                    what: "string is not valid UTF-16",
                    ..e
                })?)
            }
            FieldType::Pointer => match self.pointer_size {
                4 => Value::UInt(u32::from_le_bytes(self.array()?).into()),
                _ => Value::UInt(u64::from_le_bytes(self.array()?)),
            },
            FieldType::Struct(fields) => {
                let values = self.values(fields)?;
                Value::Struct(fields.iter().map(|f| f.name.clone()).zip(values).collect())
            }
            FieldType::Array { element, length } => {
                let count = match length {
                    Length::Prefixed => u64::from(u16::from_le_bytes(self.array()?)),
                    Length::Field(name) => earlier_fields
                        .iter()
                        .zip(earlier)
                        .rev()
                        .find(|(f, _)| f.name == *name)
                        .and_then(|(_, v)| v.as_u64())
                        .ok_or_else(|| self.err("array count field missing"))?,
                };
                let mut items = Vec::new();
                for _ in 0..count {
                    let before = self.r.pos();
                    items.push(self.value(element, &[], &[])?);
                    // Every element takes bytes: a count no payload can
                    // hold fails at the end of the payload, after at most
                    // one element per byte.
                    if self.r.pos() == before {
                        return Err(self.err("array of zero-size elements"));
                    }
                }
                Value::Array(items)
            }
        })
    }
}
