//! [`RejitProfiler`]: the ReJIT callbacks as a [`Profiler`] part, so that
//! a profiler that re-JIT-compiles methods forwards none of them by hand.

use alloc::format;
use alloc::string::String;
use alloc::sync::Arc;
use core::fmt::Display;
use std::io::Write as _;

use super::rejit::RejitBodies;
use crate::facade::{Profiler, ProfilerInfo, Result};
use crate::metadata::mdMethodDef;
use crate::profiling::{
    FunctionID, ICorProfilerFunctionControl, ModuleID, ReJITID, COR_PRF_ENABLE_REJIT,
};
use crate::{ComRef, HRESULT};

/// The ReJIT side of a profiler, as one part of a tuple
/// (`profiler!((MyPart, RejitProfiler), "CLSID", new)`): it holds the
/// [`RejitBodies`] (share them with [`bodies`](Self::bodies)), asks for
/// `COR_PRF_ENABLE_REJIT` in `initialize`, answers
/// [`get_rejit_parameters`](Profiler::get_rejit_parameters) with the body
/// kept for the method, and, when made [`logging`](Self::logging), reports
/// on stderr (one line each, `PREFIX: ` first):
///
/// - `new IL set: NOTE` when the runtime took a kept body, or
///   `SetILFunctionBody failed for NOTE: ERROR`;
/// - `ReJIT compiled Type.Method: STATUS` when a method with a kept body
///   was compiled again (`rejit_compilation_finished`);
/// - `ReJIT error for Type.Method: STATUS` (`rejit_error`).
///
/// Your part makes the bodies (with [`IlEdit::prepare_rejit`](super::IlEdit::prepare_rejit)
/// or [`RejitBodies::insert`]) and requests the ReJIT from a thread of its
/// own ([`RejitBodies::request_rejit`], [`RejitBodies::request_revert`]).
/// It accepts an attach (`initialize_for_attach`), adding
/// `COR_PRF_ENABLE_REJIT` there too, which CoreCLR allows after attach
/// since 3.0.
pub struct RejitProfiler<T = String> {
    bodies: Arc<RejitBodies<T>>,
    prefix: Option<&'static str>,
}

impl<T> Default for RejitProfiler<T> {
    fn default() -> Self {
        RejitProfiler {
            bodies: Arc::default(),
            prefix: None,
        }
    }
}

impl<T> RejitProfiler<T> {
    /// A part that reports nothing.
    pub fn new() -> Self {
        RejitProfiler::default()
    }

    /// A part that reports what the runtime did on stderr, each line
    /// starting with `prefix: `.
    pub fn logging(prefix: &'static str) -> Self {
        RejitProfiler {
            prefix: Some(prefix),
            ..RejitProfiler::default()
        }
    }

    /// The bodies this part gives the runtime: keep a clone in the part
    /// that makes them.
    pub fn bodies(&self) -> Arc<RejitBodies<T>> {
        Arc::clone(&self.bodies)
    }

    fn log(&self, text: core::fmt::Arguments<'_>) {
        if let Some(prefix) = self.prefix {
            // One write per line: the program's threads share stderr.
            let line = format!("{prefix}: {text}\n");
            let _ = std::io::stderr().write_all(line.as_bytes());
        }
    }

    /// The name of `function` when it is one of the kept methods.
    fn kept(&self, info: &ProfilerInfo, function: FunctionID) -> Option<String> {
        let f = info.function_info(function).ok()?;
        if !self.bodies.contains(f.module, f.token) {
            return None;
        }
        let name = info.function_name(function);
        Some(name.map_or_else(|_| format!("{:?}", f.token), |n| format!("{n}")))
    }
}

impl<T: Clone + Display + Send + Sync + 'static> Profiler for RejitProfiler<T> {
    fn initialize(&self, info: &ProfilerInfo) -> Result<()> {
        // Only at startup: ReJIT cannot be enabled later.
        info.add_event_mask(COR_PRF_ENABLE_REJIT)
    }

    fn initialize_for_attach(&self, info: &ProfilerInfo, _client_data: &[u8]) -> Result<()> {
        info.add_event_mask(COR_PRF_ENABLE_REJIT)
    }

    fn get_rejit_parameters(
        &self,
        _info: &ProfilerInfo,
        module: ModuleID,
        method: mdMethodDef,
        control: ComRef<'_, ICorProfilerFunctionControl>,
    ) -> Result<()> {
        match self.bodies.set_il(module, method, control.into()) {
            Some((note, Ok(()))) => self.log(format_args!("new IL set: {note}")),
            Some((note, Err(e))) => {
                self.log(format_args!("SetILFunctionBody failed for {note}: {e}"))
            }
            None => {}
        }
        Ok(())
    }

    fn rejit_compilation_finished(
        &self,
        info: &ProfilerInfo,
        function: FunctionID,
        _rejit: ReJITID,
        status: HRESULT,
        _is_safe_to_block: bool,
    ) -> Result<()> {
        if self.prefix.is_some() {
            if let Some(name) = self.kept(info, function) {
                self.log(format_args!("ReJIT compiled {name}: {status}"));
            }
        }
        Ok(())
    }

    fn rejit_error(
        &self,
        info: &ProfilerInfo,
        module: ModuleID,
        method: mdMethodDef,
        _function: FunctionID,
        status: HRESULT,
    ) -> Result<()> {
        let import = info.module_metadata(module).ok().flatten();
        let name = import.and_then(|i| i.method_name(method).ok());
        let name = name.map_or_else(|| format!("{method:?}"), |n| format!("{n}"));
        self.log(format_args!("ReJIT error for {name}: {status}"));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::instrument::rejit::tests::control;
    use crate::{E_FAIL, S_OK};

    /// A `ProfilerInfo` that answers nothing: `get_rejit_parameters` does
    /// not use it.
    struct Info;
    impl crate::profiling::ICorProfilerInfo_Impl for Info {}

    const M: ModuleID = ModuleID(0x100);
    const F: mdMethodDef = mdMethodDef::from_rid(1);
    const G: mdMethodDef = mdMethodDef::from_rid(2);
    /// `ldc.i4.1; ret`.
    const ONE: [u8; 3] = [0x0A, 0x17, 0x2A];

    #[test]
    fn the_part_gives_the_runtime_the_body_its_bodies_keep() {
        let part = RejitProfiler::<String>::logging("test");
        // SAFETY: never given to a runtime; the double only copies it.
        unsafe { part.bodies().insert(M, F, ONE.to_vec(), "f".into()) };
        let exported: crate::profiling::ICorProfilerInfo = crate::export(Info);
        let unknown: crate::IUnknown = exported.cast().unwrap();
        let info = ProfilerInfo::from_unknown(&unknown).unwrap();
        for (answer, method, given) in [(S_OK, F, 1), (S_OK, G, 0), (E_FAIL, F, 1)] {
            let (raw, object) = control(answer);
            // SAFETY: `raw` keeps the object alive for the borrow.
            let view = unsafe { ComRef::from_raw(raw.as_raw()) }.unwrap();
            // A failure is reported, not returned: the runtime compiles the
            // method as it was.
            assert_eq!(part.get_rejit_parameters(&info, M, method, view), Ok(()));
            let bodies = object.bodies.lock().unwrap();
            assert_eq!(bodies.len(), given, "{method:?} {answer}");
            assert!(bodies.iter().all(|b| b[..] == ONE[..]));
        }
    }
}
