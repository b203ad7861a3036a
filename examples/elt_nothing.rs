//! Fast-path ELT hooks that do nothing: the Rust side of the hooks
//! benchmark (`scripts/bench-hooks.sh`), measured against a C profiler whose
//! hooks do the same nothing. Hooks every function (the mapper answers `()`
//! for each) and disables inlining, like the C floor.
//!
//! Build with `cargo build --release --example elt_nothing`; CLSID
//! `{6D2A9E41-0B7C-4F35-8E16-C94A2B7D3F58}`.

use std::sync::Arc;

use corprof::facade::{FunctionHooks, HookMode, Profiler, ProfilerInfo, Result};
use corprof::profiling::*;

/// Hooks whose bodies are the trait's empty defaults.
struct Nothing;

impl FunctionHooks for Nothing {
    type Client = ();

    fn map_function(&self, _info: &ProfilerInfo, _function: FunctionID) -> Option<()> {
        Some(())
    }
}

#[derive(Default)]
struct EltNothing;

impl Profiler for EltNothing {
    fn initialize(&self, info: &ProfilerInfo) -> Result<()> {
        info.set_event_mask(COR_PRF_DISABLE_INLINING, COR_PRF_HIGH_MONITOR::empty())?;
        info.set_function_hooks(Arc::new(Nothing), HookMode::FastPath)
    }
}

corprof::profiler!(EltNothing, "{6D2A9E41-0B7C-4F35-8E16-C94A2B7D3F58}");
