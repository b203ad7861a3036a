//! [`CallTargetProfiler`]: CallTarget as a [`Profiler`] part, with its
//! options ([`CallTargetOptions`], from the environment or built), the
//! module, JIT and ReJIT callbacks it needs, and the wrapped IL installed
//! by the library (no `unsafe` in the user's code).

use alloc::format;
use alloc::string::{String, ToString};
use alloc::sync::Arc;
use alloc::vec;
use alloc::vec::Vec;
use std::collections::{HashMap, HashSet};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use super::calltarget::DEFAULT_INTEGRATION;
use super::calltarget::{CallTarget, Integration, MethodTarget, MethodTargets};
use super::rejit::RejitBodies;
use crate::cil::MethodBody;
use crate::facade::{AssemblyReference, Profiler, ProfilerInfo, Result, ShutdownFlag, Waited};
use crate::metadata::mdMethodDef;
use crate::profiling::{
    FunctionID, ICorProfilerFunctionControl, ModuleID, COR_PRF_DISABLE_INLINING,
    COR_PRF_ENABLE_REJIT, COR_PRF_MONITOR_JIT_COMPILATION, COR_PRF_MONITOR_MODULE_LOADS,
};
use crate::{ComRef, Error, E_INVALIDARG, HRESULT};

/// What [`CallTargetProfiler`] wraps and how: [`Default`] (nothing to wrap)
/// then fields, or [`from_env`](CallTargetOptions::from_env).
/// `#[non_exhaustive]`: options may be added.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct CallTargetOptions {
    /// The methods to wrap (every overload of each).
    pub targets: Vec<MethodTarget>,
    /// The helper assembly's path: the wrapped code calls its integrations.
    /// The runtime must load it (list it in `DOTNET_STARTUP_HOOKS`);
    /// its file name without extension is the assembly name referenced.
    pub helper: PathBuf,
    /// The integration type of the targets that name none (default
    /// [`DEFAULT_INTEGRATION`]).
    pub integration: String,
    /// Wrap by ReJIT (prepared at module load, requested by a thread of its
    /// own) instead of at first JIT.
    pub rejit: bool,
    /// ReJIT mode: a handshake directory for scripts and tests: wait for
    /// `ready-1` before the ReJIT, create `go-2` after it; wait for
    /// `ready-2` before reverting, create `go-3` after.
    pub sync_dir: Option<PathBuf>,
    /// Print each wrapped method's probe tokens and new IL.
    pub verbose: bool,
    /// Leave inlining on (by default `COR_PRF_DISABLE_INLINING` is set, so
    /// that a small target is compiled, and wrapped, on its own).
    pub inlining: bool,
}

impl Default for CallTargetOptions {
    fn default() -> CallTargetOptions {
        CallTargetOptions {
            targets: Vec::new(),
            helper: PathBuf::new(),
            integration: DEFAULT_INTEGRATION.to_string(),
            rejit: false,
            sync_dir: None,
            verbose: false,
            inlining: false,
        }
    }
}

impl CallTargetOptions {
    /// The options the environment asks for:
    ///
    /// | variable | meaning |
    /// |---|---|
    /// | `CORPROF_CALLTARGET` | the targets, `;`-separated `Assembly!Namespace.Type::Method`, each optionally `=Namespace.IntegrationType` ([`MethodTarget::parse_list`]); required |
    /// | `CORPROF_CALLTARGET_HELPER` | the helper assembly's path, which must exist and be listed in `DOTNET_STARTUP_HOOKS`; required |
    /// | `CORPROF_CALLTARGET_INTEGRATION` | the integration of targets that name none (default `CorProf.CallTarget.LogIntegration`) |
    /// | `CORPROF_CALLTARGET_REJIT=1` | wrap by ReJIT instead of at first JIT |
    /// | `CORPROF_CALLTARGET_SYNC_DIR` | ReJIT mode: the handshake directory ([`sync_dir`](CallTargetOptions::sync_dir)) |
    /// | `CORPROF_CALLTARGET_VERBOSE=1` | print each wrapped method's probe tokens and new IL |
    /// | `CORPROF_CALLTARGET_INLINING=1` | leave inlining on |
    ///
    /// An empty variable counts as unset. A missing or bad value is an
    /// `E_INVALIDARG` [`Error`] whose message names the variable and says
    /// why (`CORPROF_CALLTARGET_HELPER is not set`).
    pub fn from_env() -> core::result::Result<CallTargetOptions, Error> {
        let var = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
        let bad = |text: String| Error::new(E_INVALIDARG, text);
        let targets = MethodTarget::parse_list(&var("CORPROF_CALLTARGET").unwrap_or_default())
            .map_err(|e| bad(format!("CORPROF_CALLTARGET: {}", e.message())))?;
        let helper = PathBuf::from(
            var("CORPROF_CALLTARGET_HELPER")
                .ok_or_else(|| bad("CORPROF_CALLTARGET_HELPER is not set".to_string()))?,
        );
        if !helper.is_file() {
            return Err(bad(format!("helper {} not found", helper.display())));
        }
        let hooks = var("DOTNET_STARTUP_HOOKS").unwrap_or_default();
        if !std::env::split_paths(&hooks).any(|p| p == helper) {
            return Err(bad(format!(
                "helper {} is not in DOTNET_STARTUP_HOOKS, so the runtime would not find it",
                helper.display()
            )));
        }
        Ok(CallTargetOptions {
            targets,
            helper,
            integration: var("CORPROF_CALLTARGET_INTEGRATION")
                .unwrap_or_else(|| DEFAULT_INTEGRATION.to_string()),
            rejit: var("CORPROF_CALLTARGET_REJIT").as_deref() == Some("1"),
            sync_dir: var("CORPROF_CALLTARGET_SYNC_DIR").map(PathBuf::from),
            verbose: var("CORPROF_CALLTARGET_VERBOSE").as_deref() == Some("1"),
            inlining: var("CORPROF_CALLTARGET_INLINING").as_deref() == Some("1"),
        })
    }
}

fn log(text: core::fmt::Arguments<'_>) {
    // One write per line: the program's threads write to the same stderr,
    // and a line written in pieces can be split by theirs.
    let line = format!("calltarget: {text}\n");
    let _ = std::io::stderr().write_all(line.as_bytes());
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Checked options.
struct Config {
    targets: MethodTargets,
    helper_name: String,
    integration: String,
    rejit: bool,
    sync_dir: Option<PathBuf>,
    verbose: bool,
    inlining: bool,
}

impl Config {
    fn new(options: CallTargetOptions) -> core::result::Result<Config, Error> {
        if options.targets.is_empty() {
            return Err(Error::new(E_INVALIDARG, "no targets"));
        }
        let helper_name = options
            .helper
            .file_stem()
            .and_then(|s| s.to_str())
            .filter(|s| !s.is_empty())
            .ok_or_else(|| Error::new(E_INVALIDARG, "helper name is not UTF-8"))?;
        Ok(Config {
            targets: MethodTargets::new(options.targets),
            helper_name: helper_name.to_string(),
            integration: options.integration,
            rejit: options.rejit,
            sync_dir: options.sync_dir,
            verbose: options.verbose,
            inlining: options.inlining,
        })
    }
}

/// CallTarget as a profiler, or a part of one
/// (`profiler!((CallTargetProfiler, MyPart), "CLSID")`): it wraps the
/// [`CallTargetOptions::targets`] so that they call their integration's
/// `OnMethodBegin`/`OnMethodEnd`, at first JIT or by ReJIT, and installs
/// the wrapped IL itself.
///
/// In `initialize` it adds JIT-compilation and module-load events (and
/// `COR_PRF_DISABLE_INLINING` unless [`inlining`](CallTargetOptions::inlining),
/// `COR_PRF_ENABLE_REJIT` in ReJIT mode) with
/// [`add_event_mask`](ProfilerInfo::add_event_mask); it handles
/// `module_load_finished` (finding the helper, preparing ReJIT bodies),
/// `jit_compilation_started` (wrapping each target once: a recompilation
/// keeps the IL installed first), `get_rejit_parameters` (only for the
/// methods it prepared) and `shutdown` (naming targets never found).
///
/// It reports on stderr, each line prefixed `calltarget: `; with bad
/// options it says why (`not instrumenting: ...`) and does nothing.
/// `Default` is [`from_env`](CallTargetProfiler::from_env).
pub struct CallTargetProfiler {
    config: core::result::Result<Config, Error>,
    /// Methods given new IL at first JIT (a tier-1 rejit keeps it).
    wrapped: Mutex<HashSet<(ModuleID, mdMethodDef)>>,
    /// Raised at shutdown: the ReJIT thread makes no more calls.
    shut_down: Arc<ShutdownFlag>,
    /// ReJIT mode: the wrapped IL of each target (and its name).
    rejit: Arc<RejitBodies<String>>,
    /// The helper's module, once loaded.
    helper: Mutex<Option<ModuleID>>,
    /// ReJIT mode: modules loaded before the helper, prepared when it loads.
    pending: Mutex<Vec<ModuleID>>,
    /// Each integration as read from the helper (an error reported once).
    integrations: Mutex<HashMap<String, Option<Arc<Integration>>>>,
}

impl CallTargetProfiler {
    /// Wraps what `options` says.
    pub fn new(options: CallTargetOptions) -> CallTargetProfiler {
        CallTargetProfiler::with_config(Config::new(options))
    }

    /// Configured by the environment ([`CallTargetOptions::from_env`]); a
    /// bad value is reported in `initialize`, and nothing is wrapped.
    pub fn from_env() -> CallTargetProfiler {
        CallTargetProfiler::with_config(CallTargetOptions::from_env().and_then(Config::new))
    }

    fn with_config(config: core::result::Result<Config, Error>) -> CallTargetProfiler {
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

    fn config(&self) -> Option<&Config> {
        self.config.as_ref().ok()
    }

    /// The integration `name`, read from the helper's metadata once (what
    /// is missing is reported then, and `None` answered ever after).
    fn integration(&self, info: &ProfilerInfo, name: &str) -> Option<Arc<Integration>> {
        if let Some(known) = lock(&self.integrations).get(name) {
            return known.clone();
        }
        let helper = (*lock(&self.helper))?;
        let read = match info.module_metadata(helper) {
            Ok(Some(import)) => Integration::read(&import, name),
            Ok(None) => Err(Error::new(
                crate::E_NOINTERFACE,
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
        let Some(config) = self.config() else {
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
    ) -> core::result::Result<(Vec<u8>, String), String> {
        let config = self.config().ok_or("not configured")?;
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
        if config.verbose {
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

    /// ReJIT mode: the wrapped IL of `module`'s targets, kept for
    /// `get_rejit_parameters`.
    fn prepare_rejit(&self, info: &ProfilerInfo, module: ModuleID) {
        for method in self.targets_of(info, module) {
            match self.wrapped_il(info, module, method) {
                Ok((il, name)) => {
                    log(format_args!("prepared {name} for ReJIT"));
                    // SAFETY: `cil::wrap`'s output for this very method
                    // (re-encoded with a recomputed max stack), whose new
                    // tokens were all just defined in this module's metadata.
                    unsafe { self.rejit.insert(module, method, il, name) };
                }
                Err(why) => log(format_args!("left unchanged: {why}")),
            }
        }
    }

    fn start_rejit_thread(&self, info: &ProfilerInfo) {
        let (info, shut_down) = (info.clone(), Arc::clone(&self.shut_down));
        let rejit = Arc::clone(&self.rejit);
        let dir = self.config().and_then(|c| c.sync_dir.clone());
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

impl Default for CallTargetProfiler {
    fn default() -> CallTargetProfiler {
        CallTargetProfiler::from_env()
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
        let config = match &self.config {
            Ok(config) => config,
            Err(why) => {
                log(format_args!("not instrumenting: {}", why.message()));
                return Ok(());
            }
        };
        // Module loads: the helper's, to read the integrations from.
        let mut events = COR_PRF_MONITOR_JIT_COMPILATION | COR_PRF_MONITOR_MODULE_LOADS;
        if !config.inlining {
            events |= COR_PRF_DISABLE_INLINING;
        }
        if config.rejit {
            events |= COR_PRF_ENABLE_REJIT;
        }
        info.add_event_mask(events)?;
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
        let Some(config) = self.config() else {
            return Ok(());
        };
        let Ok(f) = info.function_info(function) else {
            return Ok(());
        };
        // Looked up in ReJIT mode too: the first lookup of a module reports
        // its unknown targets.
        let is_target = self.targets_of(info, f.module).contains(&f.token);
        if !is_target || config.rejit {
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
        let Some(config) = self.config() else {
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
            core::mem::take(&mut *lock(&self.pending))
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
        for t in self.config().iter().flat_map(|c| c.targets.never_found()) {
            log(format_args!(
                "target {t} was never found: its assembly did not load or define it"
            ));
        }
        Ok(())
    }
}
