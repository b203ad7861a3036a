//! The safe facade: write a profiler with no `unsafe`.
//!
//! Implement [`Profiler`] (snake_case callbacks with typed arguments, each
//! with a default), register the type with [`profiler!`](crate::profiler),
//! and build a `cdylib`:
//!
//! ```no_run
//! use corprof::facade::{Profiler, ProfilerInfo, Result};
//! use corprof::profiling::{FunctionID, COR_PRF_MONITOR_JIT_COMPILATION};
//!
//! #[derive(Default)]
//! struct JitTracer;
//!
//! impl Profiler for JitTracer {
//!     fn initialize(&self, info: &ProfilerInfo) -> Result<()> {
//!         info.set_event_mask(COR_PRF_MONITOR_JIT_COMPILATION)
//!     }
//!     fn jit_compilation_started(&self, info: &ProfilerInfo, function: FunctionID, _safe: bool) -> Result<()> {
//!         println!("{}", info.function_name(function)?);
//!         Ok(())
//!     }
//! }
//!
//! corprof::profiler!(JitTracer, "DF63A541-5A33-4611-8829-F4E495985EE3");
//! ```
//!
//! Whatever the facade lacks stays reachable: [`ProfilerInfo::v1`] ..
//! [`ProfilerInfo::v15`] and [`MetadataImport::raw`] are the raw invokers.

// The rooms, floor by floor (bottom first; each names only rooms below
// it: tests/layers.rs, ROOMS):
//
// * the facade's basics: `result` (the `Result` type), `strings` (UTF-16),
//   `args` (callback arguments), `shutdown`, `termination` (`SIGTERM`);
// * the metadata side: `enumerators`, `metadata` (import), then `emit`
//   and `rewritten`, then `module_cache` (the cache's data);
// * the info side: `info` (`ProfilerInfo` and its lifecycle; its child
//   `info/functions.rs`: IL bodies, ReJIT, `FunctionControl`), then the
//   rooms that add a job's methods to it: `event_mask`, `eventpipe`,
//   `stack`, `suspend`, then `attach`, `heap`, `statics` and `naming` (all
//   naming, with the module cache's lookups);
// * the profiler side: `profiler` (the trait), `compose`, `adapter`,
//   `export` (`export_profiler`, `profiler!`).
mod adapter;
mod args;
mod attach;
mod compose;
mod emit;
mod enumerators;
mod event_mask;
mod eventpipe;
mod export;
mod heap;
mod info;
mod metadata;
mod module_cache;
mod naming;
mod profiler;
mod result;
mod rewritten;
mod shutdown;
mod stack;
mod statics;
pub(crate) mod strings;
mod suspend;
mod termination;

pub use crate::Error;
pub use adapter::ProfilerCallback;
pub use args::*;
pub use attach::not_allowed_after_attach;
pub use emit::{AssemblyReference, MetadataEmit};
pub use enumerators::{FunctionIter, ModuleIter, ObjectIter, ThreadIter};
pub use event_mask::EventMask;
pub use eventpipe::{EventPipeEventDefinition, EventPipeParam, EventPipeProvider};
pub use export::export_profiler;
pub use heap::{CallbackObject, HeapObject, ObjectHandle};
pub use info::{
    AssemblyInfo, FunctionControl, FunctionInfo, ModuleInfo, ProfilerInfo, RuntimeInfo,
    AFTER_SHUTDOWN,
};
pub use metadata::{MetadataImport, MethodName, MethodProps};
pub use naming::machinery::RuntimeMachinery;
pub use profiler::Profiler;
pub use result::Result;
pub use shutdown::{ShutdownFlag, Waited};
pub use stack::{FrameInfo, StackFrame};
pub use statics::{FieldProps, FD_LITERAL, FD_STATIC};
pub use suspend::SuspendedRuntime;
pub use termination::{TerminationHandler, DEFAULT_SIGTERM_FLUSH};
