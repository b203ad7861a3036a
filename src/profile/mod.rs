//! Profiles and their formats: the stack trie ([`StackTree`]) that the
//! sampler and the call-tree example fill, and the writers that stream it
//! out:
//!
//! - [`write_folded`]: folded stacks (`flamegraph.pl`, inferno, speedscope);
//! - [`write_flame`]: a flame-graph SVG that leaves out frames narrower
//!   than a minimum width;
//! - [`Pprof`]: pprof's `profile.proto`, gzipped ([`gzip`], no dependency),
//!   and the same as an OpenTelemetry profiles request ([`Pprof::to_otlp`])
//!   or a Pyroscope push request ([`push_request`]);
//! - [`write_speedscope`]: speedscope's JSON.
//!
//! The writers hold the current stack, never every path as text: memory is
//! bounded by the tree. The module knows nothing of the runtime: it stands
//! beside `cil`, below the capability modules that use it (`sampling`).

mod flame;
mod folded;
mod heap_graph;
mod otlp;
mod pprof;
mod pyroscope;
mod speedscope;
mod tree;

pub use crate::support::flate::deflate::{crc32, gzip};
pub use flame::{inclusive_widths, self_widths, write_flame, FlameOptions, FlameStats};
pub use folded::{write_folded, FoldedStats};
pub use heap_graph::{
    HeapGraph, HeapLimits, HeapSnapshot, HeapStats, PathRow, TypeRow, MAX_PATH, UNREACHED_CYCLE,
    UNREFERENCED,
};
pub use otlp::AttributeValue;
pub use pprof::Pprof;
pub use pyroscope::push_request;
pub use speedscope::{write_speedscope, SpeedscopeProfile};
pub use tree::{Children, FrameId, Frames, NodeId, StackTree};
