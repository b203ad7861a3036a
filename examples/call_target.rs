//! CallTarget instrumentation: wraps methods so that they call the generic
//! `OnMethodBegin`/`OnMethodEnd` methods of an integration in a managed
//! helper assembly the application never referenced (built from
//! calltarget/ by scripts/build-calltarget-helper.sh; see
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
//!   read from the helper's metadata when it loads.
//! * `CORPROF_CALLTARGET_REJIT=1`: wrap by ReJIT instead of at first JIT.
//!   The wrapped IL (and every metadata reference it needs) is prepared in
//!   `ModuleLoadFinished`, the documented time for metadata changes; a
//!   thread then requests the ReJIT;
//!   `CORPROF_CALLTARGET_SYNC_DIR=DIR` then waits for `DIR/ready-1`
//!   before the ReJIT (creating `DIR/go-2` after it) and for `DIR/ready-2`
//!   before reverting (creating `DIR/go-3`).
//! * `CORPROF_CALLTARGET_VERBOSE=1`: print each wrapped method's probe
//!   tokens and new IL.
//! * `CORPROF_CALLTARGET_INLINING=1`: leave inlining on (by default the
//!   profiler sets `COR_PRF_DISABLE_INLINING`, so that a small target is
//!   compiled, and wrapped, on its own rather than inlined into a caller
//!   compiled first). With it, the integration's small methods are inlined
//!   into the wrapped method (the cheapest wrapping); a target the JIT may
//!   inline must then be `NoInlining`, have exception handling, or be
//!   wrapped by ReJIT before its callers are compiled.
//!
//! Messages go to stderr as `calltarget: ...`; the integrations write their
//! own (LogIntegration: `calltarget begin ...`).

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use corprof::cil::MethodBody;
use corprof::facade::{AssemblyReference, Profiler, ProfilerInfo, Result, ShutdownFlag, Waited};
use corprof::instrument::{
    CallTarget, Integration, MethodTarget, MethodTargets, RejitBodies, DEFAULT_INTEGRATION,
};
use corprof::metadata::mdMethodDef;
use corprof::profiling::{
    FunctionID, ICorProfilerFunctionControl, ModuleID, COR_PRF_DISABLE_INLINING,
    COR_PRF_ENABLE_REJIT, COR_PRF_MONITOR_JIT_COMPILATION, COR_PRF_MONITOR_MODULE_LOADS,
};
use corprof::{ComRef, HRESULT};

fn log(text: std::fmt::Arguments<'_>) {
    use std::io::Write as _;
    // One write per line: the program's threads write to the same stderr,
    // and a line written in pieces (as `eprintln!` does) can be split by
    // theirs (seen on Windows).
    let line = format!("calltarget: {text}\n");
    let _ = std::io::stderr().write_all(line.as_bytes()); // stderr gone: nothing to do
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// What the environment asks for, checked.
struct Config {
    targets: MethodTargets,
    helper_name: String,
    /// `CORPROF_CALLTARGET_INTEGRATION`, or the default.
    integration: String,
    rejit: bool,
    sync_dir: Option<PathBuf>,
    /// `CORPROF_CALLTARGET_VERBOSE=1`: the probe tokens and new IL listing.
    verbose: bool,
    /// `CORPROF_CALLTARGET_INLINING=1`: inlining stays on.
    inlining: bool,
}

fn config() -> std::result::Result<Config, String> {
    let var = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
    let targets = MethodTarget::parse_list(&var("CORPROF_CALLTARGET").unwrap_or_default())
        .map_err(|e| format!("CORPROF_CALLTARGET: {}", e.message()))?;
    let helper = PathBuf::from(
        var("CORPROF_CALLTARGET_HELPER").ok_or("CORPROF_CALLTARGET_HELPER is not set")?,
    );
    if !helper.is_file() {
        return Err(format!("helper {} not found", helper.display()));
    }
    let hooks = var("DOTNET_STARTUP_HOOKS").unwrap_or_default();
    if !std::env::split_paths(&hooks).any(|p| p == helper) {
        return Err(format!(
            "helper {} is not in DOTNET_STARTUP_HOOKS, so the runtime would not find it",
            helper.display()
        ));
    }
    let helper_name = helper
        .file_stem()
        .and_then(|s| s.to_str())
        .ok_or("helper name is not UTF-8")?;
    Ok(Config {
        targets: MethodTargets::new(targets),
        helper_name: helper_name.to_string(),
        integration: var("CORPROF_CALLTARGET_INTEGRATION")
            .unwrap_or_else(|| DEFAULT_INTEGRATION.to_string()),
        rejit: var("CORPROF_CALLTARGET_REJIT").as_deref() == Some("1"),
        sync_dir: var("CORPROF_CALLTARGET_SYNC_DIR").map(PathBuf::from),
        verbose: var("CORPROF_CALLTARGET_VERBOSE").as_deref() == Some("1"),
        inlining: var("CORPROF_CALLTARGET_INLINING").as_deref() == Some("1"),
    })
}

#[derive(Default)]
struct CallTargetProfiler {
    config: Option<Config>,
    /// Methods given new IL at first JIT (a tier-1 rejit keeps it).
    wrapped: Mutex<HashSet<(ModuleID, mdMethodDef)>>,
    /// Raised at shutdown: the ReJIT thread makes no more calls.
    shut_down: Arc<ShutdownFlag>,
    /// ReJIT mode: the wrapped IL of each target (and its name), made at
    /// module load.
    rejit: Arc<RejitBodies<String>>,
    /// The helper's module, once loaded.
    helper: Mutex<Option<ModuleID>>,
    /// ReJIT mode: modules loaded before the helper, prepared when it loads.
    pending: Mutex<Vec<ModuleID>>,
    /// Each integration as read from the helper (an error reported once).
    integrations: Mutex<HashMap<String, Option<Arc<Integration>>>>,
}

impl CallTargetProfiler {
    /// The integration `name`, read from the helper's metadata once (what
    /// is missing is reported then, and `None` answered ever after).
    fn integration(&self, info: &ProfilerInfo, name: &str) -> Option<Arc<Integration>> {
        if let Some(known) = lock(&self.integrations).get(name) {
            return known.clone();
        }
        let helper = (*lock(&self.helper))?;
        let read = match info.module_metadata(helper) {
            Ok(Some(import)) => Integration::read(&import, name),
            Ok(None) => Err(corprof::Error::new(
                corprof::E_NOINTERFACE,
                "the helper has no metadata",
            )),
            Err(e) => Err(e.context("the helper's metadata")),
        };
        let mut known = lock(&self.integrations);
        if let Some(k) = known.get(name) {
            return k.clone();
        }
        let answer = match read {
            Ok(i) => {
                for shape in i.ignored() {
                    log(format_args!(
                        "integration {name}: ignored {shape}: not a shape of the contract"
                    ));
                }
                Some(Arc::new(i))
            }
            Err(why) => {
                log(format_args!(
                    "integration {name}: {why}; its targets stay unwrapped"
                ));
                None
            }
        };
        known.insert(name.to_string(), answer.clone());
        answer
    }

    /// The target methods of `module`, looked up once.
    fn targets_of(&self, info: &ProfilerInfo, module: ModuleID) -> Vec<mdMethodDef> {
        let Some(config) = &self.config else {
            return Vec::new();
        };
        config.targets.methods_of(info, module, |target, why| {
            log(format_args!("unknown target {target}: {}", why.message()))
        })
    }

    /// The wrapped IL of a method, or why not.
    fn wrapped_il(
        &self,
        info: &ProfilerInfo,
        module: ModuleID,
        method: mdMethodDef,
    ) -> std::result::Result<(Vec<u8>, String), String> {
        let config = self.config.as_ref().ok_or("not configured")?;
        let name = config
            .targets
            .target_of(module, method)
            .and_then(|t| t.integration.clone())
            .unwrap_or_else(|| config.integration.clone());
        if lock(&self.helper).is_none() {
            return Err(format!(
                "{method:?}: the helper {} is not loaded yet",
                config.helper_name
            ));
        }
        let integration = self
            .integration(info, &name)
            .ok_or_else(|| format!("{method:?}: no integration {name}"))?;
        let ct = CallTarget {
            assembly: AssemblyReference {
                name: &config.helper_name,
                ..AssemblyReference::default()
            },
            integration: &integration,
        };
        let w = ct.wrap_in_module(info, module, method).map_err(|e| {
            let import = info.module_metadata(module).ok().flatten();
            match import.and_then(|i| i.method_name(method).ok()) {
                Some(name) => format!("{name}: {e}"),
                None => format!("{method:?}: {e}"),
            }
        })?;
        if self.config.as_ref().is_some_and(|c| c.verbose) {
            let listing = MethodBody::decode(&w.il).map(|b| b.to_string());
            let listing = listing.unwrap_or_else(|e| e.to_string());
            log(format_args!(
                "{}: {:?}\n{}",
                w.name,
                w.probes,
                listing.trim_end()
            ));
        }
        Ok((w.il, w.name))
    }

    fn start_rejit_thread(&self, info: &ProfilerInfo) {
        let (info, shut_down) = (info.clone(), Arc::clone(&self.shut_down));
        let rejit = Arc::clone(&self.rejit);
        let dir = self.config.as_ref().and_then(|c| c.sync_dir.clone());
        let _ = std::thread::Builder::new()
            .name("calltarget-rejit".into())
            .spawn(move || {
                let ready = |n: &str| {
                    dir.as_ref()
                        .map_or(true, |d| wait_for(&shut_down, &d.join(n)))
                };
                let go = |n: &str| {
                    if let Some(d) = &dir {
                        let _ = std::fs::File::create(d.join(n));
                    }
                };
                if !ready("ready-1") {
                    return;
                }
                // Without a handshake: ReJIT once the targets' module is known.
                let known = || !rejit.is_empty();
                if shut_down.wait_until(Duration::from_secs(30), POLL, known) == Waited::ShutDown {
                    return;
                }
                match rejit.request_rejit(&info) {
                    Ok(n) => log(format_args!("RequestReJIT of {n} methods succeeded")),
                    Err(e) => log(format_args!("RequestReJIT failed: {e}")),
                }
                go("go-2");
                if dir.is_none() || !ready("ready-2") || shut_down.is_raised() {
                    return;
                }
                match rejit.request_revert(&info) {
                    Ok(st) if st.iter().all(|s| s.is_ok()) => {
                        log(format_args!("RequestRevert succeeded"))
                    }
                    Ok(st) => log(format_args!("RequestRevert failed: {st:?}")),
                    Err(e) => log(format_args!("RequestRevert failed: {e}")),
                }
                go("go-3");
            });
    }
}

const POLL: Duration = Duration::from_millis(5);

/// Waits (up to 60 s, or until shutdown) for `path` to exist.
fn wait_for(shut_down: &ShutdownFlag, path: &Path) -> bool {
    let waited = shut_down.wait_until(Duration::from_secs(60), POLL, || path.exists());
    if waited == Waited::TimedOut {
        log(format_args!("gave up waiting for {}", path.display()));
    }
    waited == Waited::Ready
}

impl Profiler for CallTargetProfiler {
    fn initialize(&self, info: &ProfilerInfo) -> Result<()> {
        let Some(config) = &self.config else {
            return Ok(());
        };
        // Module loads: the helper's, to read the integrations from.
        let mut events = COR_PRF_MONITOR_JIT_COMPILATION | COR_PRF_MONITOR_MODULE_LOADS;
        if !config.inlining {
            events |= COR_PRF_DISABLE_INLINING;
        }
        if config.rejit {
            events |= COR_PRF_ENABLE_REJIT;
        }
        info.set_event_mask(events)?;
        let targets: Vec<String> = config
            .targets
            .targets()
            .iter()
            .map(|t| t.to_string())
            .collect();
        let mode = if config.rejit {
            "by ReJIT"
        } else {
            "at first JIT"
        };
        log(format_args!("wrapping {} {mode}", targets.join(", ")));
        if config.rejit {
            self.start_rejit_thread(info);
        }
        Ok(())
    }

    fn jit_compilation_started(
        &self,
        info: &ProfilerInfo,
        function: FunctionID,
        _safe: bool,
    ) -> Result<()> {
        let Ok(f) = info.function_info(function) else {
            return Ok(());
        };
        let is_target = self.targets_of(info, f.module).contains(&f.token);
        let rejit = self.config.as_ref().is_some_and(|c| c.rejit);
        if !is_target || rejit {
            return Ok(());
        }
        if !lock(&self.wrapped).insert((f.module, f.token)) {
            // Tier 1, or on .NET 7 and later on-stack replacement: the runtime
            // compiles the IL installed first again; it must not be wrapped
            // twice (the facade would refuse it anyway).
            log(format_args!(
                "{:?} JIT-compiled again: it keeps its wrapped IL",
                f.token
            ));
            return Ok(());
        }
        match self.wrapped_il(info, f.module, f.token) {
            // SAFETY: the method's own IL wrapped by `corprof::cil::wrap`
            // (re-encoded with a recomputed max stack), whose new tokens were
            // all just defined in this module's metadata.
            Ok((il, name)) => match unsafe { info.set_il_function_body(f.module, f.token, &il) } {
                Ok(()) => log(format_args!("wrapped {name}")),
                Err(e) => log(format_args!("SetILFunctionBody failed for {name}: {e}")),
            },
            Err(why) => log(format_args!("left unchanged: {why}")),
        }
        Ok(())
    }

    fn module_load_finished(
        &self,
        info: &ProfilerInfo,
        module: ModuleID,
        _: HRESULT,
    ) -> Result<()> {
        let Some(config) = &self.config else {
            return Ok(());
        };
        let assembly = info
            .module_metadata(module)
            .ok()
            .flatten()
            .and_then(|m| m.assembly_name().ok());
        let is_helper = assembly.as_deref() == Some(config.helper_name.as_str());
        if is_helper {
            *lock(&self.helper) = Some(module);
        }
        // ReJIT mode only: metadata changes belong here, before ReJIT time
        // (once the helper, whose integrations say what to call, is known).
        if !config.rejit {
            return Ok(());
        }
        let modules = if is_helper {
            std::mem::take(&mut *lock(&self.pending))
        } else if lock(&self.helper).is_none() {
            lock(&self.pending).push(module);
            return Ok(());
        } else {
            vec![module]
        };
        for module in modules {
            self.prepare_rejit(info, module);
        }
        Ok(())
    }

    fn get_rejit_parameters(
        &self,
        _info: &ProfilerInfo,
        module: ModuleID,
        method: mdMethodDef,
        control: ComRef<'_, ICorProfilerFunctionControl>,
    ) -> Result<()> {
        match self.rejit.set_il(module, method, control.into()) {
            Some((name, Ok(()))) => log(format_args!("ReJIT wrapped {name}")),
            Some((name, Err(e))) => log(format_args!(
                "ReJIT SetILFunctionBody failed for {name}: {e}"
            )),
            None => {}
        }
        Ok(())
    }

    fn shutdown(&self, _info: &ProfilerInfo) -> Result<()> {
        self.shut_down.raise();
        for t in self.config.iter().flat_map(|c| c.targets.never_found()) {
            log(format_args!(
                "target {t} was never found: its assembly did not load or define it"
            ));
        }
        Ok(())
    }
}

impl CallTargetProfiler {
    /// ReJIT mode: the wrapped IL of `module`'s targets, kept for
    /// `get_rejit_parameters`.
    fn prepare_rejit(&self, info: &ProfilerInfo, module: ModuleID) {
        for method in self.targets_of(info, module) {
            match self.wrapped_il(info, module, method) {
                Ok((il, name)) => {
                    log(format_args!("prepared {name} for ReJIT"));
                    // SAFETY: as in `jit_compilation_started`; installed
                    // in `get_rejit_parameters`.
                    unsafe { self.rejit.insert(module, method, il, name) };
                }
                Err(why) => log(format_args!("left unchanged: {why}")),
            }
        }
    }
}

fn new_profiler() -> CallTargetProfiler {
    let config = config()
        .map_err(|why| log(format_args!("not instrumenting: {why}")))
        .ok();
    CallTargetProfiler {
        config,
        wrapped: Mutex::default(),
        shut_down: Arc::default(),
        rejit: Arc::default(),
        helper: Mutex::default(),
        pending: Mutex::default(),
        integrations: Mutex::default(),
    }
}

corprof::profiler!(
    CallTargetProfiler,
    "8D2E4A61-3B7C-4F59-A0E8-C51F9B27D364",
    new_profiler
);
