//! The metadata blob of an in-process EventPipe event: the event part of
//! EventPipe's metadata format (`crate::event_format`, shared with the
//! trace reader): `u32` event id, the name as NUL-terminated UTF-16, `u64`
//! keywords, `u32` version, `u32` level, `u32` field count, then per field
//! a `u32` type code (an element type code after it for arrays, a nested
//! description for objects) and the field's NUL-terminated UTF-16 name;
//! then any tags (a later format's field descriptions replace these).

use alloc::string::String;
use alloc::vec::Vec;

use crate::event_format::{parse_event, Field, PayloadError};
use crate::support::bytes::ByteReader;

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

impl EventMetadata {
    /// Parses a metadata blob. Truncated or inconsistent blobs, and fields
    /// of an unknown type code, are an error with the blob offset.
    pub fn parse(blob: &[u8]) -> Result<EventMetadata, PayloadError> {
        let mut r = ByteReader::new(blob);
        let part = parse_event(&mut r).map_err(|(offset, what)| PayloadError { offset, what })?;
        Ok(EventMetadata {
            id: part.event_id,
            name: part.name,
            keywords: part.keywords,
            version: part.version,
            level: part.level,
            fields: part.fields,
        })
    }
}
