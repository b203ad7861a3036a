//! Metadata blobs: what each kind of event is, and the layout of its
//! payload, in the one format both of the runtime's EventPipe outputs use
//! (the runtime's `ep_metadata_generator_generate_event_metadata`).
//!
//! The event part, [`parse_event`]: `u32` event id, event name
//! (NUL-terminated UTF-16), `u64` keywords, `u32` version, `u32` level;
//! then, optionally, `u32` field count and the fields (`u32` `TypeCode`; for
//! `Object` (1) a nested field count and fields, for `Array` (19) the
//! element's type code; then the field's UTF-16 name); then, from nettrace
//! format version 5, tags (`u32` tag size, `u8` kind; kind 1 `OpCode`: one
//! byte; kind 2 `V2Params`: `u32` count, then per field `u32` size (itself
//! included), name, `u32` type code, for `Array` an element type code, for
//! `Object` a nested description). An in-process session
//! (`EventPipeEventDelivered`) passes the event part alone; a nettrace
//! stream's metadata blob (`NetTraceFormat_v5.md`, "Metadata event
//! encoding") puts a `u32` metadata id and the provider's name (UTF-16)
//! before it, [`Metadata`].

use alloc::boxed::Box;
use alloc::string::String;
use alloc::vec::Vec;

use crate::support::bytes::ByteReader;

/// A field's type.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum FieldType {
    /// `Boolean`: 4 bytes (a Win32 `BOOL`).
    Boolean,
    /// `Char`: one UTF-16 unit.
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
    /// `Decimal`: 16 bytes.
    Decimal,
    /// `DateTime`: a `u64` FILETIME.
    DateTime,
    /// `Guid`: 16 bytes.
    Guid,
    /// `String`: NUL-terminated UTF-16.
    String,
    /// A pointer, of the trace's pointer size (the manifest's `win:Pointer`;
    /// built-in layouts only).
    Pointer,
    /// A struct (`Object`): its fields in order.
    Struct(Vec<Field>),
    /// An array of `element`s, as many as `length` says.
    Array {
        /// The element type.
        element: Box<FieldType>,
        /// Where the element count is.
        length: Length,
    },
}

/// Where an array's element count comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Length {
    /// A `u16` count just before the elements (EventSource arrays, V2
    /// field descriptions).
    Prefixed,
    /// The value of an earlier field of the same struct or event, by name
    /// (the manifest's `count="Count"`).
    Field(&'static str),
}

/// One field of an event's payload.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Field {
    /// Its name.
    pub name: String,
    /// Its type.
    pub ty: FieldType,
}

/// What a metadata blob says about one kind of event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Metadata {
    /// The id events of this kind refer to.
    pub metadata_id: u32,
    /// The provider (`Microsoft-Windows-DotNETRuntime`, an EventSource's name).
    pub provider: String,
    /// The event id within the provider.
    pub event_id: u32,
    /// The event's name (empty for the runtime's own events).
    pub name: String,
    /// Its keywords.
    pub keywords: u64,
    /// Its version.
    pub version: u32,
    /// Its level (1 critical .. 5 verbose).
    pub level: u32,
    /// Its opcode, when the blob carries the `OpCode` tag.
    pub opcode: Option<u8>,
    /// Its payload's fields, as the blob describes them (V2 descriptions
    /// replace V1's); empty for the runtime's own events.
    pub fields: Vec<Field>,
}

/// Why a metadata blob could not be read: the offset in the blob and what.
pub(crate) type MetaError = (usize, &'static str);

/// How deep `Object` fields may nest: deeper blobs are refused, not
/// recursed into.
const MAX_DEPTH: u32 = 8;
/// The most fields one description may declare.
const MAX_FIELDS: u32 = 4096;

fn short(r: &ByteReader<'_>) -> MetaError {
    (r.pos(), "metadata blob truncated")
}

/// A NUL-terminated UTF-16 string.
pub(crate) fn utf16z(r: &mut ByteReader<'_>) -> Result<String, MetaError> {
    let at = r.pos();
    let units = r
        .utf16_until_nul()
        .map_err(|_| (at, "string without NUL"))?;
    String::from_utf16(&units).map_err(|_| (at, "string is not valid UTF-16"))
}

/// The event part of a metadata blob (see the module's documentation).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct EventPart {
    pub(crate) event_id: u32,
    pub(crate) name: String,
    pub(crate) keywords: u64,
    pub(crate) version: u32,
    pub(crate) level: u32,
    pub(crate) opcode: Option<u8>,
    pub(crate) fields: Vec<Field>,
}

/// Reads the event part of a metadata blob, to the end of `r`: the fields
/// and tags are optional (an event without fields may end after its
/// level).
pub(crate) fn parse_event(r: &mut ByteReader<'_>) -> Result<EventPart, MetaError> {
    let mut part = EventPart {
        event_id: r.u32().map_err(|_| short(r))?,
        name: utf16z(r)?,
        keywords: r.u64().map_err(|_| short(r))?,
        version: r.u32().map_err(|_| short(r))?,
        level: r.u32().map_err(|_| short(r))?,
        ..EventPart::default()
    };
    if r.is_empty() {
        return Ok(part);
    }
    part.fields = v1_fields(r, 0)?;
    // Format version 5's tags.
    while !r.is_empty() {
        let at = r.pos();
        let size = r.u32().map_err(|_| short(r))? as usize;
        let kind = r.u8().map_err(|_| short(r))?;
        let body = r
            .take(size)
            .map_err(|_| (at, "metadata tag runs past the blob"))?;
        let mut t = ByteReader::new(body);
        match kind {
            1 => part.opcode = Some(t.u8().map_err(|_| (at, "empty OpCode tag"))?),
            2 => {
                let count = t.u32().map_err(|_| (at, "V2Params tag truncated"))?;
                if count > MAX_FIELDS {
                    return Err((at, "too many fields"));
                }
                let mut fields = Vec::new();
                for _ in 0..count {
                    fields.push(v2_field(&mut t, 0).map_err(|(o, w)| (at + 5 + o, w))?);
                }
                part.fields = fields;
            }
            _ => {} // a later version's tag: skipped
        }
    }
    // EventSource's self-describing events (`EventSource.Write`, the
    // `EventCounters` of `System.Runtime`) describe their payload as one
    // unnamed struct; its fields are the event's (the same bytes).
    if let [Field {
        name,
        ty: FieldType::Struct(inner),
    }] = &mut part.fields[..]
    {
        if name.is_empty() {
            part.fields = core::mem::take(inner);
        }
    }
    Ok(part)
}

impl Metadata {
    /// Parses a nettrace metadata blob's payload: the metadata id, the
    /// provider, then the event part (absent in an empty description).
    pub(crate) fn parse(blob: &[u8]) -> Result<Metadata, MetaError> {
        let mut r = ByteReader::new(blob);
        let metadata_id = r.u32().map_err(|_| short(&r))?;
        let provider = utf16z(&mut r)?;
        let part = if r.is_empty() {
            EventPart::default()
        } else {
            parse_event(&mut r)?
        };
        Ok(Metadata {
            metadata_id,
            provider,
            event_id: part.event_id,
            name: part.name,
            keywords: part.keywords,
            version: part.version,
            level: part.level,
            opcode: part.opcode,
            fields: part.fields,
        })
    }
}

/// A V1 description: `u32` count, then the fields.
fn v1_fields(r: &mut ByteReader<'_>, depth: u32) -> Result<Vec<Field>, MetaError> {
    if depth > MAX_DEPTH {
        return Err((r.pos(), "fields nest too deep"));
    }
    let count = r.u32().map_err(|_| short(r))?;
    if count > MAX_FIELDS {
        return Err((r.pos(), "too many fields"));
    }
    let mut fields = Vec::new();
    for _ in 0..count {
        let at = r.pos();
        let code = r.u32().map_err(|_| short(r))?;
        let ty = match code {
            1 => FieldType::Struct(v1_fields(r, depth + 1)?),
            // An array: the element's type code follows; the elements come
            // after a `u16` count, as EventSource writes them.
            19 => {
                let at = r.pos();
                let element = r.u32().map_err(|_| short(r))?;
                FieldType::Array {
                    element: Box::new(
                        FieldType::from_code(element)
                            .ok_or((at, "unknown array element type code"))?,
                    ),
                    length: Length::Prefixed,
                }
            }
            _ => FieldType::from_code(code).ok_or((at, "unknown field type code"))?,
        };
        let name = utf16z(r)?;
        fields.push(Field { name, ty });
    }
    Ok(fields)
}

/// One V2 field: `u32` size (inclusive), name, type code, element type
/// for arrays, nested description for objects; padding up to the size.
fn v2_field(r: &mut ByteReader<'_>, depth: u32) -> Result<Field, MetaError> {
    if depth > MAX_DEPTH {
        return Err((r.pos(), "fields nest too deep"));
    }
    let start = r.pos();
    let size = r.u32().map_err(|_| short(r))? as usize;
    if size < 4 {
        return Err((start, "V2 field smaller than its size field"));
    }
    let body = ByteReader::at(r.rest(), 0)
        .take(size - 4)
        .map_err(|_| (start, "V2 field runs past its tag"))?;
    let mut b = ByteReader::new(body);
    let name = utf16z(&mut b).map_err(|(o, w)| (start + 4 + o, w))?;
    let ty = v2_type(&mut b, depth).map_err(|(o, w)| (start + 4 + o, w))?;
    // The rest up to `size` is padding; `take` above checked it is there.
    let _ = r.take(size - 4);
    Ok(Field { name, ty })
}

fn v2_type(b: &mut ByteReader<'_>, depth: u32) -> Result<FieldType, MetaError> {
    let at = b.pos();
    let code = b.u32().map_err(|_| short(b))?;
    match code {
        1 => v2_struct(b, depth),
        19 => {
            let element = v2_type(b, depth + 1)?;
            Ok(FieldType::Array {
                element: Box::new(element),
                length: Length::Prefixed,
            })
        }
        _ => FieldType::from_code(code).ok_or((at, "unknown field type code")),
    }
}

fn v2_struct(b: &mut ByteReader<'_>, depth: u32) -> Result<FieldType, MetaError> {
    if depth >= MAX_DEPTH {
        return Err((b.pos(), "fields nest too deep"));
    }
    let count = b.u32().map_err(|_| short(b))?;
    if count > MAX_FIELDS {
        return Err((b.pos(), "too many fields"));
    }
    let mut fields = Vec::new();
    for _ in 0..count {
        fields.push(v2_field(b, depth + 1)?);
    }
    Ok(FieldType::Struct(fields))
}

impl FieldType {
    /// The type of a `System.TypeCode` other than `Object` (1) and `Array`
    /// (19), the codes of `COR_PRF_EVENTPIPE_PARAM_TYPE`; `None` for those
    /// and unknown codes.
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
            15 => FieldType::Decimal,
            16 => FieldType::DateTime,
            17 => FieldType::Guid,
            18 => FieldType::String,
            _ => return None,
        })
    }
}
