//! CallTarget instrumentation: wraps methods so that they call the generic
//! `OnMethodBegin`/`OnMethodEnd` methods of an integration in a managed
//! helper assembly the application never referenced (built from
//! calltarget/ by scripts/gen/build-calltarget-helper.sh; see
//! docs/instrumentation.md, which walks through this example).
//!
//! * `CORPROF_CALLTARGET`: `;`-separated `Assembly!Namespace.Type::Method`
//!   (every overload of each), each optionally `=Namespace.IntegrationType`.
//! * `CORPROF_CALLTARGET_INTEGRATION`: the integration type of the targets
//!   that name none (default `CorProf.CallTarget.LogIntegration`). A
//!   missing integration type is reported once; its targets stay unwrapped.
//! * `CORPROF_CALLTARGET_HELPER`: the helper assembly's path. It must also
//!   be listed in `DOTNET_STARTUP_HOOKS`, which makes the host load it
//!   before `Main`; otherwise nothing is instrumented (the wrapped code
//!   could not bind to it) and the profiler says why. The integrations are
//!   read from the helper's metadata when it loads. A helper built for a
//!   newer runtime (its `System.Runtime` reference newer than the
//!   runtime's) cannot load: the profiler says so when
//!   `System.Private.CoreLib` loads and wraps nothing.
//! * Each target is wrapped at its first JIT compilation
//!   (`JITCompilationStarted`, the method's IL replaced). A method of a
//!   precompiled (ReadyToRun) module would run its precompiled code without
//!   being JIT-compiled: for a target the profiler sets that code aside
//!   (`JITCachedFunctionSearchStarted`), so it is JIT-compiled, and
//!   wrapped, at its first call. On .NET 8 and later such targets are also
//!   ReJIT compiled with inlining blocked (`RequestReJITWithInliners`), so
//!   that precompiled methods that inlined one are compiled again.
//! * `CORPROF_CALLTARGET_REJIT=1`: wrap every target by ReJIT.
//!   `CORPROF_CALLTARGET_SYNC_DIR=DIR` then waits for `DIR/ready-1`
//!   before the first ReJIT (creating `DIR/go-2` after it) and for
//!   `DIR/ready-2` before reverting (creating `DIR/go-3`).
//! * `CORPROF_CALLTARGET_VERBOSE=1`: print each wrapped method's probe
//!   tokens and new IL.
//! * Inlining stays on for the process; only the targets are never inlined
//!   into a caller (`JITInlining` answers no for them, and their ReJIT
//!   blocks inlining). `CORPROF_CALLTARGET_DISABLE_INLINING=1` sets
//!   `COR_PRF_DISABLE_INLINING` for the whole process instead (a lab
//!   setting: it costs a server a third of its throughput,
//!   docs/performance.md).
//!
//! A target that cannot be wrapped is reported once, with the reason.
//! Messages go to stderr as `calltarget: ...`; the integrations write their
//! own (LogIntegration: `calltarget begin ...`).
//!
//! The whole profiler is the library's `CallTargetProfiler`, configured by
//! `CallTargetOptions::from_env` (the table above): it asks for its events,
//! finds the helper and the targets as modules load, and installs the
//! wrapped IL at first JIT or by ReJIT. To wrap methods inside a profiler of
//! your own, make it one part of a tuple (see the `composed` example), or
//! build `CallTargetOptions` in code and pass them to
//! `CallTargetProfiler::new`.
//!
//! Build with `cargo build --example call_target`; CLSID
//! `{8D2E4A61-3B7C-4F59-A0E8-C51F9B27D364}`.

use corprof::instrument::CallTargetProfiler;

corprof::profiler!(
    CallTargetProfiler,
    "8D2E4A61-3B7C-4F59-A0E8-C51F9B27D364",
    CallTargetProfiler::from_env
);
