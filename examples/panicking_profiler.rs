//! A profiler whose callback panics on every JIT compilation: the COM core
//! turns each panic into `E_FAIL` for the runtime, so the profiled program
//! runs to completion unchanged. The end-to-end tests load it to prove that.

use corprof::facade::{Profiler, ProfilerInfo, Result};
use corprof::profiling::{FunctionID, COR_PRF_MONITOR_JIT_COMPILATION};

#[derive(Default)]
struct Panicking;

impl Profiler for Panicking {
    fn initialize(&self, info: &ProfilerInfo) -> Result<()> {
        // Silence the default hook's message for each of the many panics.
        std::panic::set_hook(Box::new(|_| {}));
        info.set_event_mask(COR_PRF_MONITOR_JIT_COMPILATION)
    }

    fn jit_compilation_started(
        &self,
        _info: &ProfilerInfo,
        function: FunctionID,
        _safe: bool,
    ) -> Result<()> {
        panic!("deliberate panic while {function:?} is being compiled");
    }

    fn shutdown(&self, _info: &ProfilerInfo) -> Result<()> {
        eprintln!("panicking_profiler: shutdown reached");
        Ok(())
    }
}

corprof::profiler!(Panicking, "0F6E2A9C-5D1B-4E8A-B3C7-9A2D4F6E8B10");
