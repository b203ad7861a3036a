//! A profiler made of parts: the sampler, CallTarget and a JIT log of its
//! own, as one tuple. Each callback goes to every part in order, and each
//! part adds the events it needs to the others' (`add_event_mask`), so
//! nothing is forwarded by hand and no `unsafe` is written here.
//!
//! The parts read their settings from the environment: the sampler's
//! `CORPROF_SAMPLER_*` (`SamplerOptions::from_env`; the outputs go to
//! `CORPROF_SAMPLER_DIR`), CallTarget's `CORPROF_CALLTARGET*`
//! (`CallTargetOptions::from_env`: the methods to wrap and the helper
//! assembly). The JIT log writes `composed: jit NAME` lines to stderr.
//!
//! Build with `cargo build --example composed`; CLSID
//! `{5C0B7E3A-9D41-4E2F-8A6B-1F3C2D4E5A69}`.

use std::io::Write as _;

use corprof::facade::{Profiler, ProfilerInfo, Result};
use corprof::instrument::CallTargetProfiler;
use corprof::profiling::{FunctionID, COR_PRF_MONITOR_JIT_COMPILATION};
use corprof::sampling::SamplingProfiler;

/// The profiler's own part: logs every method the JIT compiles.
#[derive(Default)]
struct JitLog;

impl Profiler for JitLog {
    fn initialize(&self, info: &ProfilerInfo) -> Result<()> {
        info.add_event_mask(COR_PRF_MONITOR_JIT_COMPILATION)
    }

    fn jit_compilation_started(
        &self,
        info: &ProfilerInfo,
        function: FunctionID,
        _is_safe_to_block: bool,
    ) -> Result<()> {
        let name = info.function_name(function)?;
        // One write per line: the program's threads share stderr.
        let line = format!("composed: jit {name}\n");
        let _ = std::io::stderr().write_all(line.as_bytes());
        Ok(())
    }
}

corprof::profiler!(
    (SamplingProfiler, CallTargetProfiler, JitLog),
    "{5C0B7E3A-9D41-4E2F-8A6B-1F3C2D4E5A69}"
);
