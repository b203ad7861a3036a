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

mod adapter;
mod args;
mod attach;
mod compose;
mod emit;
mod enumerators;
// The capabilities' boolean variables (coverage's today; the sampler has
// none yet, so with sampling alone it is unused).
#[cfg(any(feature = "sampling", feature = "coverage"))]
#[cfg_attr(not(feature = "coverage"), allow(dead_code))]
pub(crate) mod env;
mod event_mask;
mod eventpipe;
#[cfg(test)]
pub(crate) mod fake_scope;
mod heap;
mod info;
mod machinery;
mod metadata;
mod module_cache;
mod name_writer;
mod names;
mod profiler;
mod rewritten;
mod shutdown;
mod stack;
mod statics;
pub(crate) mod strings;
mod suspend;
pub(crate) mod sync;
mod termination;

pub use crate::Error;
pub use adapter::ProfilerCallback;
pub use args::*;
pub use attach::not_allowed_after_attach;
pub use emit::{AssemblyReference, MetadataEmit};
pub use enumerators::{FunctionIter, ModuleIter, ObjectIter, ThreadIter};
pub use event_mask::EventMask;
pub use eventpipe::{EventPipeEventDefinition, EventPipeParam, EventPipeProvider};
pub use heap::{HeapObject, ObjectHandle};
pub use info::{
    AssemblyInfo, FunctionControl, FunctionInfo, ModuleInfo, ProfilerInfo, Result, RuntimeInfo,
    AFTER_SHUTDOWN,
};
pub use machinery::RuntimeMachinery;
pub use metadata::{MetadataImport, MethodName, MethodProps};
pub use profiler::Profiler;
pub use shutdown::{ShutdownFlag, Waited};
pub use stack::{FrameInfo, StackFrame};
pub use statics::{FieldProps, FD_LITERAL, FD_STATIC};
pub use suspend::SuspendedRuntime;
pub use termination::{TerminationHandler, DEFAULT_SIGTERM_FLUSH};

use crate::profiling::ICorProfilerCallback11;
use crate::IUnknown;

/// Exports `profiler` as the runtime's callback object
/// (`ICorProfilerCallback11`, which answers every lower version too) and
/// returns its `IUnknown`. [`profiler!`](crate::profiler) calls it.
pub fn export_profiler<P: Profiler>(profiler: P) -> IUnknown {
    let callback: ICorProfilerCallback11 = crate::export(ProfilerCallback::new(profiler));
    // SAFETY: `into_raw` hands over the exported object's reference, and
    // every COM vtable begins with IUnknown's.
    unsafe { IUnknown::from_raw(callback.into_raw()) }.expect("export never returns null")
}

/// Registers a [`Profiler`] type as this `cdylib`'s profiler: exports
/// `DllGetClassObject` (answering only the given CLSID) and
/// `DllCanUnloadNow`.
///
/// `profiler!(Type, "CLSID")` creates instances with `Type::default()`;
/// `profiler!(Type, "CLSID", constructor)` with a `fn() -> Type`. The CLSID
/// is what `CORECLR_PROFILER` names; a malformed one is a compile error.
///
/// ```no_run
/// #[derive(Default)]
/// struct Quiet;
/// impl corprof::facade::Profiler for Quiet {}
/// corprof::profiler!(Quiet, "{DF63A541-5A33-4611-8829-F4E495985EE3}");
/// ```
#[macro_export]
macro_rules! profiler {
    ($ty:ty, $clsid:expr $(,)?) => {
        $crate::profiler!(
            $ty,
            $clsid,
            <$ty as $crate::__private::core::default::Default>::default
        );
    };
    ($ty:ty, $clsid:expr, $constructor:expr $(,)?) => {
        $crate::com_class!($clsid, || {
            let constructor: fn() -> $ty = $constructor;
            $crate::facade::export_profiler::<$ty>(constructor())
        });
    };
}
