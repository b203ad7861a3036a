//! Fast-path ELT hooks that do nothing: the Rust side of the hooks
//! benchmark (`scripts/bench-hooks.sh`), measured against a C profiler whose
//! hooks do the same nothing. Hooks every function (the mapper answers `()`
//! for each) and disables inlining, like the C floor. With
//! `ELT_NOTHING_ENTER_ONLY=1` it installs enter hooks only
//! (`FunctionHooks::LEAVE` and `TAILCALL` are `false`).
//!
//! Build with `cargo build --release --example elt_nothing`; CLSID
//! `{6D2A9E41-0B7C-4F35-8E16-C94A2B7D3F58}`.

use std::sync::Arc;

use corprof::facade::{Profiler, ProfilerInfo, Result};
use corprof::hooks::{FunctionHooks, HookMode};
use corprof::profiling::*;

/// Hooks whose bodies are the trait's empty defaults.
struct Nothing;

impl FunctionHooks for Nothing {
    type Client = ();

    fn map_function(&self, _info: &ProfilerInfo, _function: FunctionID) -> Option<()> {
        Some(())
    }
}

/// Enter hooks only (`ELT_NOTHING_ENTER_ONLY=1`): no leave or tail-call
/// hook is installed, so the JIT calls its own one-`ret` stub for those.
struct EnterOnly;

impl FunctionHooks for EnterOnly {
    type Client = ();
    const LEAVE: bool = false;
    const TAILCALL: bool = false;

    fn map_function(&self, _info: &ProfilerInfo, _function: FunctionID) -> Option<()> {
        Some(())
    }
}

#[derive(Default)]
struct EltNothing;

impl Profiler for EltNothing {
    fn initialize(&self, info: &ProfilerInfo) -> Result<()> {
        info.set_event_mask(COR_PRF_DISABLE_INLINING)?;
        if std::env::var_os("ELT_NOTHING_ENTER_ONLY").is_some_and(|v| v == "1") {
            info.set_function_hooks(Arc::new(EnterOnly), HookMode::FastPath)
        } else {
            info.set_function_hooks(Arc::new(Nothing), HookMode::FastPath)
        }
    }
}

corprof::profiler!(EltNothing, "{6D2A9E41-0B7C-4F35-8E16-C94A2B7D3F58}");
