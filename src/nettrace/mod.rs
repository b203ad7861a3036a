//! A streaming reader of the runtime's trace format ("nettrace"): the
//! `.nettrace` files `dotnet-trace` writes and the stream an EventPipe
//! session sends over the diagnostics IPC channel (`no_std` with `alloc`,
//! no dependencies).
//!
//! Feed bytes as they arrive to a [`Parser`] and take the [`Event`]s it has
//! decoded; or, with `std`, wrap any `std::io::Read` in a [`NettraceReader`]
//! and iterate. Each event carries its provider, id, version, thread,
//! timestamps (QPC ticks, and wall time through [`TraceInfo`]), its stack
//! (instruction pointers) and its payload, decoded by [`Event::fields`] with
//! the metadata the stream carries or, for the runtime's own events (whose
//! metadata names no fields, dotnet/runtime#96365), with the layouts of
//! [`clr_fields`], transcribed from the runtime's manifest.
//!
//! # The format
//!
//! Transcribed from microsoft/perfview `src/TraceEvent/EventPipe/
//! NetTraceFormat_v5.md` (versions 4 and 5) and `NetTraceFormat.md`
//! (version 6), and from the writer in dotnet/runtime `src/native/eventpipe/`
//! (`ep-file.c`, `ep-block.c`, `ep-metadata-generator.c`):
//!
//! | part | bytes |
//! | --- | --- |
//! | magic | `Nettrace` |
//! | serializer | `u32` 20, `!FastSerialization.1` |
//! | objects | `5` (BeginPrivateObject), a type (`5`, `1` NullReference, `i32` version, `i32` minimum reader version, `u32` length and the UTF-8 name, `6` EndObject), the object's fields, `6` |
//! | end | `1` (NullReference) |
//!
//! The first object is the `Trace` (start time as a `SYSTEMTIME`, QPC at
//! that time, QPC frequency, pointer size, process id, processor count,
//! sampling rate). Then, in any order, `MetadataBlock`, `StackBlock`,
//! `EventBlock` and `SPBlock` objects: a `u32` block size, zero padding to a
//! 4-byte offset *from the start of the stream*, then the block. Event and
//! metadata blocks start with a header (`u16` header size, `u16` flags, `i64`
//! minimum and maximum timestamps) and hold event blobs, with compressed
//! headers when flag 1 is set (a flags byte, then only the fields that
//! changed from the previous blob of the block, as LEB128 varints and
//! deltas). A metadata blob's payload describes one kind of event (its
//! metadata id, provider, event id, name, keywords, version, level, fields,
//! and from format version 5 optional tags: opcode, V2 field descriptions
//! with arrays). Stack blocks hold numbered stacks of pointer-sized
//! instruction pointers. A sequence point (`SPBlock`) lists each thread's
//! last sequence number: the reader checks them and reports lost events, and
//! forgets the stacks (events never refer to a stack across a sequence
//! point).
//!
//! Version 6 (a different header: `Nettrace`, `u32` 0, `u32` major, `u32`
//! minor, then kind-tagged blocks) is recognised and refused with
//! [`ErrorKind::UnsupportedVersion`]: the runtimes this crate supports
//! (.NET Core 3.1 to .NET 11) write version 4 with version 5's metadata tags.
//!
//! Where the runtime's writer departs from the documents, the reader follows
//! the writer:
//! * the high bit of an uncompressed blob's metadata id is set when the
//!   event is *not* sorted (`ep-block.c` sets it for `!is_sorted_event`; the
//!   document calls it the IsSorted flag);
//! * a compressed header's sequence number is stored as the delta minus one
//!   and incremented only for events (metadata id not 0), never for metadata
//!   blobs;
//! * the block size counts the block's header;
//! * EventSource's self-describing events (`EventSource.Write`,
//!   `EventCounters`) describe their payload as one unnamed struct: the
//!   reader gives its fields as the event's.
//!
//! Bad input (truncated, corrupt or hostile) gives an [`Error`] with the
//! byte offset in the stream, never a panic: every length is checked
//! against the bytes that hold it, a block larger than [`MAX_BLOCK_SIZE`] is
//! refused before it is buffered, and stacks and metadata are shared, not
//! copied per event.

mod error;
#[cfg(feature = "std")]
mod io;
mod parser;

pub use crate::event_format::{
    clr_fields, RUNDOWN_PROVIDER, RUNTIME_PROVIDER, SAMPLE_PROFILER_PROVIDER,
};
pub use crate::event_format::{decode_fields, PayloadError, Value};
pub use crate::event_format::{Field, FieldType, Length, Metadata};
pub use error::{Error, ErrorKind};
#[cfg(feature = "std")]
pub use io::NettraceReader;
pub use parser::{Event, Parser, Stats, SystemTime, TraceInfo, MAX_BLOCK_SIZE};
