//! Reading an in-process event's payload by its fields, with every length
//! checked (EventPipe's payload decoder, `crate::event_format`, shared with
//! the trace reader; pointers are this process's size).

use alloc::vec::Vec;

use crate::event_format::{decode_values, Field, PayloadError, Value};

/// Decodes `data` field by field. Fields past the end of a shorter payload
/// are an error; bytes after the last field are ignored (later event
/// versions append fields).
pub fn decode_payload(fields: &[Field], data: &[u8]) -> Result<Vec<Value>, PayloadError> {
    decode_values(fields, data, core::mem::size_of::<usize>() as u8)
}
