//! Decoding the events of an in-process EventPipe session
//! (`ProfilerInfo::event_pipe_start_session`, delivered to
//! `Profiler::event_pipe_event_delivered`): the metadata blob
//! the runtime passes with each event, and the payload read by the fields it
//! describes, every length checked (a bad blob is an `Error`, never a
//! crash). The format is the one a trace file's metadata and payloads use:
//! the parser and decoder are shared with `corprof::nettrace`, and so are
//! `Field`, `FieldType`, `Value` and `Error` (`nettrace`'s `PayloadError`).
//!
//! The runtime's own provider (`Microsoft-Windows-DotNETRuntime`) delivers
//! its events with metadata that names no fields (measured on CoreCLR 8.0.4:
//! a 26-byte blob with an empty name and a field count of 0), because its
//! consumers read the layouts from the runtime's manifest. For those events
//! `runtime_fields` gives the layouts, transcribed from that manifest
//! (`src/coreclr/vm/ClrEtwAll.man`), for the events it knows; events that
//! carry their own field descriptions (profiler-defined events,
//! `EventSource`s) are decoded by them.

mod metadata;
mod payload;
mod runtime;

pub use crate::event_format::{Field, FieldType, Length, PayloadError as Error, Value};
pub use metadata::EventMetadata;
pub use payload::decode_payload;
pub use runtime::{gc_reason_name, runtime_fields, RUNTIME_PROVIDER};
