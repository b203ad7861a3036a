//! What a profiler attached to a running process may do, and how it
//! catches up on what happened before it arrived.
//!
//! An attached profiler gets
//! [`initialize_for_attach`](super::Profiler::initialize_for_attach) (with
//! the attaching tool's client data) instead of `initialize`, then
//! [`profiler_attach_complete`](super::Profiler::profiler_attach_complete).
//! In between it may only ask for the events of
//! [`COR_PRF_ALLOWABLE_AFTER_ATTACH`] and
//! [`COR_PRF_HIGH_ALLOWABLE_AFTER_ATTACH`]; the runtime refuses the rest, and
//! [`ProfilerInfo::set_event_mask`] returns that refusal as `Err`.
//! [`ProfilerInfo::set_event_mask_for_attach`] checks first and names the
//! offending flags.
//!
//! Which flags the runtime allows after attach depends on its version:
//! CoreCLR 3.1's `corprof.idl` allows threads, module, assembly and
//! app-domain loads, stack snapshots, GC, suspends, class loads,
//! exceptions, JIT compilation and ReJIT (and, in the high word, in-memory
//! symbol updates, dynamic function unloads, basic GC, moved objects and
//! large-object allocations). Later runtimes add
//! `COR_PRF_DISABLE_INLINING`, `COR_PRF_DISABLE_OPTIMIZATIONS` and
//! `COR_PRF_HIGH_MONITOR_EVENT_PIPE`, which the constants of this crate
//! include. The two `DISABLE_` flags were also immutable (set in
//! `Initialize` or never) up to 9, so 3.1, 8 and 9 answer an attached
//! profiler asking for `COR_PRF_DISABLE_INLINING` with `E_FAIL`; 10 and 11
//! accept it and the mask then holds it (made mutable by
//! dotnet/runtime#113924; both answers asserted in tests/e2e_attach.rs).
//! Everything else (enter/leave hooks, object
//! allocations, code transitions, remoting, ...) is startup-only on every
//! runtime.
//!
//! To catch up, a late profiler enumerates the modules already loaded
//! ([`ProfilerInfo::modules`]) and the functions already JIT-compiled
//! ([`ProfilerInfo::jited_functions`], or
//! [`ProfilerInfo::jited_functions2`], which also lists ReJIT-compiled
//! versions), best from `profiler_attach_complete`, while the events it
//! asked for already arrive: the same module may show up in both.

use super::enumerators::FunctionIter;
use super::info::{ProfilerInfo, Result};
use crate::profiling::{
    CORPROF_E_UNSUPPORTED_FOR_ATTACHING_PROFILER, COR_PRF_ALLOWABLE_AFTER_ATTACH,
    COR_PRF_HIGH_ALLOWABLE_AFTER_ATTACH, COR_PRF_HIGH_MONITOR, COR_PRF_MONITOR,
};

/// The flags of a mask that no runtime allows after attach (the complement
/// of [`COR_PRF_ALLOWABLE_AFTER_ATTACH`] and
/// [`COR_PRF_HIGH_ALLOWABLE_AFTER_ATTACH`]); empty when the mask may be
/// set. A runtime may refuse more (CoreCLR 3.1 also refuses
/// `COR_PRF_DISABLE_INLINING`, `COR_PRF_DISABLE_OPTIMIZATIONS` and
/// `COR_PRF_HIGH_MONITOR_EVENT_PIPE`; 8 and 9 the two `DISABLE_` flags).
///
/// ```
/// use corprof::facade::not_allowed_after_attach;
/// use corprof::profiling::*;
/// let (low, high) = not_allowed_after_attach(
///     COR_PRF_MONITOR_GC | COR_PRF_MONITOR_ENTERLEAVE,
///     COR_PRF_HIGH_MONITOR::empty(),
/// );
/// assert_eq!(low, COR_PRF_MONITOR_ENTERLEAVE);
/// assert!(high.is_empty());
/// ```
pub fn not_allowed_after_attach(
    events: COR_PRF_MONITOR,
    high: COR_PRF_HIGH_MONITOR,
) -> (COR_PRF_MONITOR, COR_PRF_HIGH_MONITOR) {
    (
        COR_PRF_MONITOR(events.0 & !COR_PRF_ALLOWABLE_AFTER_ATTACH.0),
        COR_PRF_HIGH_MONITOR(high.0 & !COR_PRF_HIGH_ALLOWABLE_AFTER_ATTACH.0),
    )
}

impl ProfilerInfo {
    /// [`set_event_mask`](ProfilerInfo::set_event_mask) for an attached
    /// profiler: `CORPROF_E_UNSUPPORTED_FOR_ATTACHING_PROFILER` without
    /// asking the runtime when the mask holds flags no runtime allows after
    /// attach ([`not_allowed_after_attach`]), otherwise the runtime's own
    /// answer (which may still be a refusal, as the `E_FAIL` of 3.1 to 9
    /// for `COR_PRF_DISABLE_INLINING`).
    pub fn set_event_mask_for_attach(
        &self,
        mask: impl Into<super::event_mask::EventMask>,
    ) -> Result<()> {
        let mask = mask.into();
        let (low_bad, high_bad) = not_allowed_after_attach(mask.low, mask.high);
        if !low_bad.is_empty() || !high_bad.is_empty() {
            return Err(crate::Error::new(
                CORPROF_E_UNSUPPORTED_FOR_ATTACHING_PROFILER,
                "flags not allowed after attach",
            ));
        }
        self.set_event_mask(mask)
    }

    /// The functions JIT-compiled so far, with a ReJIT id for each version
    /// compiled by ReJIT (`EnumJITedFunctions2`, version 4): what a profiler
    /// attached late needs to know about code that already runs.
    pub fn jited_functions2(&self) -> Result<FunctionIter> {
        let v4 = self.live_v4()?;
        let mut out: *mut core::ffi::c_void = core::ptr::null_mut();
        // SAFETY: a valid out-pointer; on success it holds null or one
        // ICorProfilerFunctionEnum reference, which `from_raw` takes over.
        unsafe {
            v4.EnumJITedFunctions2(&mut out)
                .ok_with("EnumJITedFunctions2")?;
            crate::com::interface::invoker::from_raw(out)
        }
        .map(FunctionIter::new)
        .ok_or(crate::E_POINTER.into())
    }
}
