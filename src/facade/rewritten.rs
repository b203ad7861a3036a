//! The methods whose IL a profiler has replaced with
//! [`ProfilerInfo::set_il_function_body`]: the ledger behind the
//! rewrite-once rule.
//!
//! `SetILFunctionBody` replaces a method's IL for good: every later
//! compilation of the method starts from the IL installed, not from the
//! module's. With tiered compilation the runtime compiles a hot method
//! several times (3.1: tier 0, then tier 1; .NET 8: tier 0, tier 0
//! instrumented by PGO, tier 1), and from .NET 7 on-stack replacement
//! compiles a method with a hot loop once more, mid-loop, at an IL offset
//! of the installed IL. A profiler that rewrote the method again at a later
//! `JITCompilationStarted` would instrument its own instrumentation and
//! shift the IL offsets the runtime already uses: on .NET 8 that ends in an
//! `InvalidProgramException`. So the facade refuses a second
//! `set_il_function_body` for the same method
//! ([`CORPROF_E_UNSUPPORTED_CALL_SEQUENCE`](crate::profiling::CORPROF_E_UNSUPPORTED_CALL_SEQUENCE)),
//! and [`ProfilerInfo::il_function_body_was_set`] lets a profiler skip the
//! work before it starts. docs/cil.md ("Tiering and on-stack replacement")
//! has the measured compilations per runtime.
//!
//! A `ModuleID` is reused once its module unloads, so the adapter forgets a
//! module's entries on `ModuleUnloadStarted` (with the module cache).

use alloc::collections::BTreeSet;
use alloc::sync::Arc;
use std::sync::Mutex;

use crate::metadata::mdMethodDef;
use crate::profiling::ModuleID;

/// (module, method) pairs whose IL was set; shared by a [`ProfilerInfo`]
/// and its clones.
///
/// [`ProfilerInfo`]: super::ProfilerInfo
#[derive(Default)]
pub(crate) struct RewrittenMethods {
    methods: Mutex<BTreeSet<(ModuleID, mdMethodDef)>>,
}

/// Shared by a [`ProfilerInfo`](super::ProfilerInfo) and its clones.
pub(crate) type SharedRewrittenMethods = Arc<RewrittenMethods>;

impl RewrittenMethods {
    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeSet<(ModuleID, mdMethodDef)>> {
        crate::support::sync::lock(&self.methods)
    }

    pub(crate) fn contains(&self, module: ModuleID, method: mdMethodDef) -> bool {
        self.lock().contains(&(module, method))
    }

    /// Runs `set` unless the method is in the ledger, and adds it when `set`
    /// succeeds; holds the lock throughout, so that two threads compiling
    /// the same method cannot both rewrite it. `None` when it was there.
    pub(crate) fn set_once<E>(
        &self,
        module: ModuleID,
        method: mdMethodDef,
        set: impl FnOnce() -> core::result::Result<(), E>,
    ) -> Option<core::result::Result<(), E>> {
        let mut methods = self.lock();
        if methods.contains(&(module, method)) {
            return None;
        }
        let result = set();
        if result.is_ok() {
            methods.insert((module, method));
        }
        Some(result)
    }

    /// Forgets every method of `module` (it is unloading).
    pub(crate) fn forget_module(&self, module: ModuleID) {
        self.lock().retain(|&(m, _)| m != module);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metadata::mdMethodDef;
    use crate::profiling::ModuleID;

    const M1: ModuleID = ModuleID(0x1000);
    const M2: ModuleID = ModuleID(0x2000);
    const F: mdMethodDef = mdMethodDef(0x0600_0001);
    const G: mdMethodDef = mdMethodDef(0x0600_0002);

    #[test]
    fn a_method_is_set_once_and_a_failed_set_does_not_count() {
        let ledger = RewrittenMethods::default();
        let mut calls = 0;
        assert_eq!(
            ledger.set_once(M1, F, || {
                calls += 1;
                Err::<(), _>("the runtime refused")
            }),
            Some(Err("the runtime refused"))
        );
        assert!(!ledger.contains(M1, F));
        assert_eq!(
            ledger.set_once(M1, F, || {
                calls += 1;
                Ok::<(), ()>(())
            }),
            Some(Ok(()))
        );
        assert!(ledger.contains(M1, F));
        assert_eq!(
            ledger.set_once(M1, F, || {
                calls += 1;
                Ok::<(), ()>(())
            }),
            None
        );
        assert_eq!(calls, 2, "the second successful set never ran");
        // Another method, or the same token in another module, is another entry.
        assert_eq!(ledger.set_once(M1, G, || Ok::<(), ()>(())), Some(Ok(())));
        assert_eq!(ledger.set_once(M2, F, || Ok::<(), ()>(())), Some(Ok(())));
    }

    #[test]
    fn an_unloaded_module_is_forgotten_and_its_id_can_be_reused() {
        let ledger = RewrittenMethods::default();
        assert!(ledger.set_once(M1, F, || Ok::<(), ()>(())).is_some());
        assert!(ledger.set_once(M2, F, || Ok::<(), ()>(())).is_some());
        ledger.forget_module(M1);
        assert!(!ledger.contains(M1, F));
        assert!(ledger.contains(M2, F));
        assert_eq!(ledger.set_once(M1, F, || Ok::<(), ()>(())), Some(Ok(())));
    }
}
