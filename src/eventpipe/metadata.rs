//! The metadata blob of an EventPipe event (the runtime's
//! `ep_metadata_generator_generate_event_metadata`): `u32` event id, the
//! name as NUL-terminated UTF-16, `u64` keywords, `u32` version, `u32`
//! level, `u32` field count, then per field a `u32` type code (an element
//! type code after it for arrays) and the field's NUL-terminated UTF-16
//! name. Bytes after the fields (later format versions' tags) are ignored.

use alloc::string::String;
use alloc::vec::Vec;

use super::payload::{Error, Reader};

/// A field's type: the `TypeCode`s of `COR_PRF_EVENTPIPE_PARAM_TYPE`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FieldType {
    /// `Boolean` (4 bytes on the wire, as a Win32 `BOOL`).
    Boolean,
    /// `Char` (one UTF-16 unit).
    Char,
    /// `SByte`.
    SByte,
    /// `Byte`.
    Byte,
    /// `Int16`.
    Int16,
    /// `UInt16`.
    UInt16,
    /// `Int32`.
    Int32,
    /// `UInt32`.
    UInt32,
    /// `Int64`.
    Int64,
    /// `UInt64`.
    UInt64,
    /// `Single`.
    Single,
    /// `Double`.
    Double,
    /// `DateTime` (a `u64` FILETIME).
    DateTime,
    /// `Guid` (16 bytes).
    Guid,
    /// `String` (NUL-terminated UTF-16).
    String,
    /// A pointer-sized value (the manifest's `win:Pointer`; not a
    /// `TypeCode`: used by the runtime layouts only).
    Pointer,
}

impl FieldType {
    /// The type of a `TypeCode`, or `None` for one this decoder does not
    /// read (`Object`, `Decimal`, `Array`, unknown codes).
    pub fn from_code(code: u32) -> Option<FieldType> {
        Some(match code {
            3 => FieldType::Boolean,
            4 => FieldType::Char,
            5 => FieldType::SByte,
            6 => FieldType::Byte,
            7 => FieldType::Int16,
            8 => FieldType::UInt16,
            9 => FieldType::Int32,
            10 => FieldType::UInt32,
            11 => FieldType::Int64,
            12 => FieldType::UInt64,
            13 => FieldType::Single,
            14 => FieldType::Double,
            16 => FieldType::DateTime,
            17 => FieldType::Guid,
            18 => FieldType::String,
            _ => return None,
        })
    }
}

/// One field of an event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Field {
    /// Its name.
    pub name: String,
    /// Its type.
    pub ty: FieldType,
}

/// What an event's metadata blob says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EventMetadata {
    /// The event's id.
    pub id: u32,
    /// Its name (empty for the runtime provider's events).
    pub name: String,
    /// Its keywords.
    pub keywords: u64,
    /// Its version.
    pub version: u32,
    /// Its level.
    pub level: u32,
    /// Its fields, in payload order (none for the runtime provider's events).
    pub fields: Vec<Field>,
}

/// The most fields an event may declare: a larger count is a bad blob, not
/// an allocation.
const MAX_FIELDS: u32 = 1024;

impl EventMetadata {
    /// Parses a metadata blob. Truncated or inconsistent blobs, and fields
    /// of a type this decoder does not read, are an [`Error`].
    pub fn parse(blob: &[u8]) -> Result<EventMetadata, Error> {
        let mut r = Reader::new(blob);
        let id = r.u32()?;
        let name = r.string()?;
        let keywords = r.u64()?;
        let version = r.u32()?;
        let level = r.u32()?;
        // An event without fields may end here.
        let count = if r.remaining() == 0 { 0 } else { r.u32()? };
        if count > MAX_FIELDS {
            return Err(Error::TooManyFields(count));
        }
        let mut fields = Vec::with_capacity(count as usize);
        for _ in 0..count {
            let code = r.u32()?;
            if code == 19 {
                let element = r.u32()?;
                return Err(Error::Unsupported(alloc::format!(
                    "an array field (element type {element})"
                )));
            }
            let ty = FieldType::from_code(code)
                .ok_or_else(|| Error::Unsupported(alloc::format!("a field of type code {code}")))?;
            let name = r.string()?;
            fields.push(Field { name, ty });
        }
        Ok(EventMetadata {
            id,
            name,
            keywords,
            version,
            level,
            fields,
        })
    }
}
