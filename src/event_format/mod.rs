//! EventPipe's event format, shared by the in-process decoder
//! (`crate::eventpipe`) and the trace reader (`crate::nettrace`): metadata
//! blobs (an event's id, name, keywords, version, level and field
//! descriptions), payloads decoded by those fields, every length checked,
//! and the layouts of the runtime's own events, whose metadata names no
//! fields. Never public itself: each of the two modules re-exports the
//! types it hands out.

// Without `nettrace`, its trace-only parts (the `Metadata` of a stream,
// `decode_fields` with names) go unused.
#![cfg_attr(not(feature = "nettrace"), allow(dead_code, unreachable_pub))]

mod layouts;
mod metadata;
mod payload;

// Each user takes what it needs.
#[allow(unused_imports)]
pub use layouts::{clr_fields, RUNDOWN_PROVIDER, RUNTIME_PROVIDER, SAMPLE_PROFILER_PROVIDER};
#[cfg(feature = "nettrace")]
pub use metadata::Metadata;
#[allow(unused_imports)]
pub(crate) use metadata::{parse_event, MetaError};
#[allow(unused_imports)]
pub use metadata::{Field, FieldType, Length};
#[cfg(feature = "nettrace")]
pub use payload::decode_fields;
#[allow(unused_imports)]
pub(crate) use payload::decode_values;
#[allow(unused_imports)]
pub use payload::{PayloadError, Value};
