//! Info calls made where the runtime refuses them: what the runtime answers
//! and how the facade surfaces it. `tests/e2e_call_sequence.rs` loads this
//! profiler into `Basics` and checks the answers; `docs/safety.md` cites
//! them.
//!
//! Each experiment writes one line, `<where>.<what>: ok <detail>` or
//! `<where>.<what>: err <Display of the HRESULT>`, and the whole log goes at
//! shutdown to the file named by `CALL_SEQUENCE_OUTPUT` (else to stderr).
//!
//! - `initialize.*`: in `Initialize`, where everything is allowed.
//! - `module_load.*`: in `ModuleLoadFinished` of the program's own module,
//!   after `Initialize`: setting an immutable flag
//!   (`COR_PRF_ENABLE_OBJECT_ALLOCATED`), setting enter/leave hooks, and
//!   asking for a ReJIT without `COR_PRF_ENABLE_REJIT`.
//! - `gc_started.*`: in `GarbageCollectionStarted`, a callback that forbids
//!   garbage collection: Info methods that may trigger one are refused there.
//! - `native_thread.*`: from a thread the profiler created, outside any
//!   callback.
//!
//! Build with `cargo build --example call_sequence`; CLSID
//! `{8E2B7C4D-1F3A-4B6E-9D5C-7A0F2E4B6C81}`.

use std::fmt::Display;
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use corprof::facade::{Bools, Profiler, ProfilerInfo, Result};
use corprof::metadata::mdMethodDef;
use corprof::profiling::*;
use corprof::HRESULT;

/// The events asked for in `Initialize`.
fn events() -> COR_PRF_MONITOR {
    COR_PRF_MONITOR_JIT_COMPILATION | COR_PRF_MONITOR_MODULE_LOADS | COR_PRF_MONITOR_GC
}

/// What the experiments found, and what later ones need.
#[derive(Default)]
struct CallSequence {
    log: Mutex<Vec<String>>,
    module_done: AtomicBool,
    gc_done: AtomicBool,
    /// The native thread's log, received at shutdown.
    native: Mutex<Option<mpsc::Receiver<Vec<String>>>>,
}

/// `ok <detail>` or `err <Display of the HRESULT>`.
fn outcome<T>(result: Result<T>, detail: impl FnOnce(&T) -> String) -> String {
    match result {
        Ok(value) => format!("ok {}", detail(&value)),
        Err(error) => format!("err {}", error.code()),
    }
}

fn nothing<T>(_: &T) -> String {
    String::new()
}

fn shown<T: Display>(value: &T) -> String {
    value.to_string()
}

impl CallSequence {
    fn record(&self, experiment: &str, outcome: String) {
        self.log
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .push(format!("{experiment}: {}", outcome.trim_end()));
    }

    /// The Info calls tried in a callback, or from the native thread.
    fn probe(
        info: &ProfilerInfo,
        place: &str,
        target: (FunctionID, ModuleID, ClassID),
    ) -> Vec<String> {
        let (function, module, class) = target;
        let mut lines = Vec::new();
        let mut line = |what: &str, outcome: String| {
            lines.push(format!("{place}.{what}: {}", outcome.trim_end()));
        };
        line("current_thread", outcome(info.current_thread(), nothing));
        line(
            "function_info",
            outcome(info.function_info(function), nothing),
        );
        line(
            "function_name",
            outcome(info.function_name(function), shown),
        );
        line("class_name", outcome(info.class_name(class), shown));
        line(
            "module_info",
            outcome(info.module_info(module), |m| m.path.clone()),
        );
        line(
            "module_metadata",
            outcome(info.module_metadata(module), |m| {
                String::from(if m.is_some() { "some" } else { "none" })
            }),
        );
        line(
            "modules",
            outcome(info.modules().and_then(|m| m.count_all()), |n| {
                format!("{n} modules")
            }),
        );
        line(
            "event_mask",
            outcome(info.event_mask(), |mask| format!("0x{:08X}", mask.low.0)),
        );
        lines
    }
}

impl Profiler for CallSequence {
    fn initialize(&self, info: &ProfilerInfo) -> Result<()> {
        let set = info.set_event_mask(events());
        self.record("initialize.set_event_mask", outcome(set.clone(), nothing));
        set
    }

    fn jit_compilation_started(
        &self,
        info: &ProfilerInfo,
        function: FunctionID,
        _is_safe_to_block: bool,
    ) -> Result<()> {
        if MAIN.get().is_none() {
            if let Ok(name) = info.function_name(function) {
                if name.to_string() == "E2E.Basics.Program.Main" {
                    let where_ = info.function_info(function)?;
                    let _ = MAIN.set((function, where_.module, where_.token, where_.class));
                }
            }
        }
        Ok(())
    }

    fn module_load_finished(
        &self,
        info: &ProfilerInfo,
        module: ModuleID,
        status: HRESULT,
    ) -> Result<()> {
        if status.is_err() || self.module_done.load(Ordering::SeqCst) {
            return Ok(());
        }
        let path = info.module_info(module)?.path;
        if !path.ends_with("Basics.dll") {
            return Ok(());
        }
        self.module_done.store(true, Ordering::SeqCst);

        // An immutable flag, after Initialize.
        let immutable = info.set_event_mask(events() | COR_PRF_ENABLE_OBJECT_ALLOCATED);
        self.record(
            "module_load.set_event_mask_immutable",
            outcome(immutable, nothing),
        );
        // A mutable flag, after Initialize: allowed (and taken back).
        let mutable = info.set_event_mask(events() | COR_PRF_MONITOR_CLASS_LOADS);
        self.record(
            "module_load.set_event_mask_mutable",
            outcome(mutable, nothing),
        );
        let restore = info.set_event_mask(events());
        self.record(
            "module_load.set_event_mask_restore",
            outcome(restore, nothing),
        );
        // Enter/leave hooks may be set only in Initialize (a raw call: the
        // facade has no wrapper for it). Null hooks change nothing even if
        // the runtime accepted them.
        if let Some(v3) = info.v3() {
            // SAFETY: null hooks are allowed by the method's contract.
            let hooks = unsafe { v3.SetEnterLeaveFunctionHooks3(None, None, None) }
                .ok_with("SetEnterLeaveFunctionHooks3");
            self.record("module_load.set_enter_leave_hooks", outcome(hooks, nothing));
        }
        // ReJIT without COR_PRF_ENABLE_REJIT (Program.Main is MethodDef 1 or
        // later; any MethodDef token of the module will do).
        let rejit = info.request_rejit(&[(module, mdMethodDef(0x0600_0001))]);
        self.record("module_load.request_rejit", outcome(rejit, nothing));

        // A thread of the profiler's own, outside every callback. It waits
        // for Program.Main to be known, probes, and sends its log back.
        let runtime: ICorProfilerInfo = info.v1().clone();
        let (sender, receiver) = mpsc::channel();
        *self.native.lock().unwrap_or_else(|p| p.into_inner()) = Some(receiver);
        std::thread::spawn(move || {
            let lines = match ProfilerInfo::from_unknown(&runtime) {
                Ok(info) => {
                    let mut waited = 0;
                    while MAIN.get().is_none() && waited < 5000 {
                        std::thread::sleep(Duration::from_millis(1));
                        waited += 1;
                    }
                    match MAIN.get() {
                        Some(&(function, module, _, class)) => {
                            CallSequence::probe(&info, "native_thread", (function, module, class))
                        }
                        None => vec![String::from("native_thread: Program.Main never compiled")],
                    }
                }
                Err(hr) => vec![format!("native_thread.from_unknown: err {hr}")],
            };
            let _ = sender.send(lines);
        });
        Ok(())
    }

    fn garbage_collection_started(
        &self,
        info: &ProfilerInfo,
        _generations: Bools<'_>,
        _reason: COR_PRF_GC_REASON,
    ) -> Result<()> {
        let Some(&(function, module, token, class)) = MAIN.get() else {
            return Ok(());
        };
        if self.gc_done.swap(true, Ordering::SeqCst) {
            return Ok(());
        }
        let lines = CallSequence::probe(info, "gc_started", (function, module, class));
        self.log
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .extend(lines);
        let rejit = info.request_rejit(&[(module, token)]);
        self.record("gc_started.request_rejit", outcome(rejit, nothing));
        Ok(())
    }

    fn shutdown(&self, _info: &ProfilerInfo) -> Result<()> {
        let native = self
            .native
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take()
            .map(|receiver| receiver.recv_timeout(Duration::from_secs(10)));
        let mut log = self.log.lock().unwrap_or_else(|p| p.into_inner());
        match native {
            Some(Ok(lines)) => log.extend(lines),
            Some(Err(error)) => log.push(format!("native_thread: no answer ({error})")),
            None => log.push(String::from("native_thread: never started")),
        }
        log.push(String::from("shutdown"));
        let text = log.join("\n") + "\n";
        match std::env::var_os("CALL_SEQUENCE_OUTPUT") {
            Some(path) => {
                if let Err(error) = std::fs::write(&path, text) {
                    eprintln!("call_sequence: cannot write {path:?}: {error}");
                }
            }
            None => {
                let _ = std::io::stderr().write_all(text.as_bytes());
            }
        }
        Ok(())
    }
}

/// `E2E.Basics.Program.Main`: its function, module, token and class, seen
/// in `JITCompilationStarted`. A static, because the native thread needs it
/// too (a process has one profiler).
static MAIN: OnceLock<(FunctionID, ModuleID, mdMethodDef, ClassID)> = OnceLock::new();

corprof::profiler!(CallSequence, "8E2B7C4D-1F3A-4B6E-9D5C-7A0F2E4B6C81");
