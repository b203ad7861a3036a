//! An attach-time profiler: loaded into a running process by the `attach`
//! example, it reports what it sees from then on, and catches up on what
//! was loaded and compiled before it arrived.
//!
//! ```sh
//! cargo build --example attach --example attach_events
//! target/debug/examples/attach PID target/debug/examples/libattach_events.so \
//!     0B7A5E92-4C3D-4F1E-8A6B-9D2C1E0F3A48 hello
//! ```
//!
//! Every line goes to the target's stderr and starts with `attach_events: `:
//!
//! * `initialize_for_attach client_data="hello"`;
//! * `refused COR_PRF_MONITOR_ENTERLEAVE: ...` and
//!   `COR_PRF_DISABLE_INLINING after attach: ...`: the runtime's answers to
//!   flags it does not allow after attach;
//! * `event mask set: ...`: GC and JIT-compilation events, which it allows;
//! * at `profiler_attach_complete`, `catch-up: N modules, M functions
//!   JIT-compiled before attach`, then `already loaded: FILE` for each
//!   module and `already compiled: NAME` for the functions whose name starts
//!   with the prefix (and the same from `EnumJITedFunctions2`, as
//!   `already compiled (EnumJITedFunctions2): NAME`);
//! * then, as they happen, `gc reason=REASON` and `jit NAME` for functions
//!   whose name starts with the prefix.
//!
//! The client data is free text, logged as is; words in it of these forms
//! are settings:
//!
//! * `prefix=P`: name only functions whose full name starts with `P`
//!   (default `E2E.`, the namespace of the test programs; `prefix=MyShop.`
//!   for your own program, `prefix=` alone for every function);
//! * `sleep-ms=N`: `initialize_for_attach` sleeps N milliseconds first: a
//!   slow profiler, for testing what an attaching tool does when the answer
//!   is late or never comes.
//!
//! Loaded at startup instead (`CORECLR_PROFILER*`), it says
//! `initialize (startup)` and reports the same events.

use std::io::Write as _;
use std::sync::OnceLock;

use corprof::facade::{Bools, Profiler, ProfilerInfo, Result};
use corprof::profiling::{
    FunctionID, COR_PRF_DISABLE_INLINING, COR_PRF_FUNCTION, COR_PRF_GC_REASON, COR_PRF_MONITOR,
    COR_PRF_MONITOR_ENTERLEAVE, COR_PRF_MONITOR_GC, COR_PRF_MONITOR_JIT_COMPILATION,
};
use corprof::HRESULT;

/// By default only functions of the test programs are named, to keep the
/// output short.
const DEFAULT_PREFIX: &str = "E2E.";

fn log(text: std::fmt::Arguments<'_>) {
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "attach_events: {text}"); // stderr gone: nothing to do
}

/// The events this profiler asks for.
fn events() -> COR_PRF_MONITOR {
    COR_PRF_MONITOR_GC | COR_PRF_MONITOR_JIT_COMPILATION
}

#[derive(Default)]
struct AttachEvents {
    /// The `prefix=` of the client data, set once by `initialize_for_attach`.
    prefix: OnceLock<String>,
}

impl AttachEvents {
    fn prefix(&self) -> &str {
        self.prefix.get().map_or(DEFAULT_PREFIX, String::as_str)
    }
}

impl Profiler for AttachEvents {
    fn initialize(&self, info: &ProfilerInfo) -> Result<()> {
        log(format_args!("initialize (startup)"));
        info.set_event_mask(events())
    }

    fn initialize_for_attach(&self, info: &ProfilerInfo, client_data: &[u8]) -> Result<()> {
        log(format_args!(
            "initialize_for_attach client_data={:?}",
            String::from_utf8_lossy(client_data)
        ));
        let text = std::str::from_utf8(client_data).unwrap_or("");
        let setting = |key: &str| text.split_whitespace().find_map(|w| w.strip_prefix(key));
        if let Some(prefix) = setting("prefix=") {
            let _ = self.prefix.set(prefix.to_owned()); // set once per load
            log(format_args!("naming functions that start with {prefix:?}"));
        }
        if let Some(ms) = setting("sleep-ms=").and_then(|ms| ms.parse::<u64>().ok()) {
            std::thread::sleep(std::time::Duration::from_millis(ms));
            log(format_args!("slept {ms} ms"));
        }
        // Flags the runtime does not allow after attach: its refusal is an Err.
        match info.set_event_mask(COR_PRF_MONITOR_ENTERLEAVE) {
            Ok(()) => log(format_args!("COR_PRF_MONITOR_ENTERLEAVE accepted")),
            Err(error) => log(format_args!(
                "refused COR_PRF_MONITOR_ENTERLEAVE: {}",
                error.code()
            )),
        }
        match info.set_event_mask(events() | COR_PRF_DISABLE_INLINING) {
            Ok(()) => log(format_args!(
                "COR_PRF_DISABLE_INLINING after attach: accepted"
            )),
            Err(error) => log(format_args!(
                "COR_PRF_DISABLE_INLINING after attach: refused: {}",
                error.code()
            )),
        }
        info.set_event_mask_for_attach(events())?;
        log(format_args!("event mask set: GC, JIT compilation"));
        Ok(())
    }

    fn profiler_attach_complete(&self, info: &ProfilerInfo) -> Result<()> {
        let modules: Vec<_> = info.modules()?.collect();
        let functions: Vec<_> = info.jited_functions()?.collect();
        log(format_args!(
            "catch-up: {} modules, {} functions JIT-compiled before attach",
            modules.len(),
            functions.len()
        ));
        for module in modules {
            if let Ok(module) = info.module_info(module) {
                let name = module
                    .path
                    .rsplit(['/', '\\'])
                    .next()
                    .unwrap_or(&module.path);
                log(format_args!("already loaded: {name}"));
            }
        }
        let names = |functions: &[COR_PRF_FUNCTION]| {
            let mut names: Vec<String> = functions
                .iter()
                .filter_map(|f| info.function_name(f.functionId).ok())
                .map(|name| name.to_string())
                .filter(|name| name.starts_with(self.prefix()))
                .collect();
            names.sort();
            names.dedup();
            names
        };
        for name in names(&functions) {
            log(format_args!("already compiled: {name}"));
        }
        // Version 4's enumerator also lists ReJIT-compiled versions.
        let functions2: Vec<_> = info.jited_functions2()?.collect();
        for name in names(&functions2) {
            log(format_args!(
                "already compiled (EnumJITedFunctions2): {name}"
            ));
        }
        Ok(())
    }

    fn garbage_collection_started(
        &self,
        _info: &ProfilerInfo,
        _collected: Bools<'_>,
        reason: COR_PRF_GC_REASON,
    ) -> Result<()> {
        let reason = match reason.name() {
            Some(name) => name.trim_start_matches("COR_PRF_GC_").to_ascii_lowercase(),
            None => format!("{}", reason.0),
        };
        log(format_args!("gc reason={reason}"));
        Ok(())
    }

    fn jit_compilation_finished(
        &self,
        info: &ProfilerInfo,
        function: FunctionID,
        status: HRESULT,
        _is_safe_to_block: bool,
    ) -> Result<()> {
        if let Ok(name) = info.function_name(function) {
            let name = name.to_string();
            if name.starts_with(self.prefix()) {
                log(format_args!("jit {name} status={status:?}"));
            }
        }
        Ok(())
    }
}

corprof::profiler!(AttachEvents, "0B7A5E92-4C3D-4F1E-8A6B-9D2C1E0F3A48");
