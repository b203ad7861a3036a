//! [`CallTargetProfiler`]: CallTarget as a [`Profiler`] part, with its
//! options ([`CallTargetOptions`], from the environment or built), the
//! module, JIT and ReJIT callbacks it needs, and the wrapped IL installed
//! by the library (no `unsafe` in the user's code).

use alloc::format;
use alloc::string::{String, ToString};
use alloc::sync::Arc;
use alloc::vec::Vec;
use std::collections::{HashMap, HashSet};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::Duration;

use super::calltarget::DEFAULT_INTEGRATION;
use super::calltarget::{CallTarget, Integration, MethodTarget, MethodTargets, WrapWhen};
use super::helper_check;
use super::rejit::{request_rejit_blocking_inlining, RejitBodies, BLOCK_INLINING_FROM_MAJOR};
use crate::cil::MethodBody;
use crate::facade::{AssemblyReference, Profiler, ProfilerInfo, Result, ShutdownFlag, Waited};
use crate::metadata::mdMethodDef;
use crate::profiling::{
    FunctionID, ICorProfilerFunctionControl, ModuleID, COR_PRF_DISABLE_INLINING,
    COR_PRF_ENABLE_REJIT, COR_PRF_MONITOR_CACHE_SEARCHES, COR_PRF_MONITOR_JIT_COMPILATION,
    COR_PRF_MONITOR_MODULE_LOADS,
};
use crate::support::sync::lock;
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
    /// Build it for the oldest runtime it must run on: a helper whose
    /// `System.Runtime` reference is newer than the runtime's is refused
    /// with a message when `System.Private.CoreLib` loads (the runtime could
    /// not load it).
    pub helper: PathBuf,
    /// The integration type of the targets that name none (default
    /// [`DEFAULT_INTEGRATION`]).
    pub integration: String,
    /// Wrap every target by ReJIT (prepared at module load, requested by a
    /// thread of its own) instead of at first JIT. Without it, targets are
    /// wrapped at their first JIT compilation, those of precompiled
    /// (ReadyToRun) modules too (their precompiled code set aside), and on
    /// .NET 8 and later the targets of precompiled modules are also ReJIT
    /// compiled with inlining blocked, so that precompiled callers that
    /// inlined them are compiled again.
    pub rejit: bool,
    /// ReJIT mode: a handshake directory for scripts and tests: wait for
    /// `ready-1` before the ReJIT, create `go-2` after it; wait for
    /// `ready-2` before reverting, create `go-3` after.
    pub sync_dir: Option<PathBuf>,
    /// Print each wrapped method's probe tokens and new IL.
    pub verbose: bool,
    /// Set `COR_PRF_DISABLE_INLINING` for the whole process (a lab
    /// setting: it costs a server a third of its throughput,
    /// docs/performance.md). By default inlining stays on and only the
    /// targets are never inlined into a caller (`JITInlining` answers no
    /// for them, and their ReJIT blocks inlining).
    pub disable_inlining: bool,
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
            disable_inlining: false,
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
    /// | `CORPROF_CALLTARGET_REJIT=1` | wrap every target by ReJIT instead of at first JIT |
    /// | `CORPROF_CALLTARGET_SYNC_DIR` | ReJIT mode: the handshake directory ([`sync_dir`](CallTargetOptions::sync_dir)) |
    /// | `CORPROF_CALLTARGET_VERBOSE=1` | print each wrapped method's probe tokens and new IL |
    /// | `CORPROF_CALLTARGET_DISABLE_INLINING=1` | set `COR_PRF_DISABLE_INLINING` for the whole process (a lab setting) |
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
            disable_inlining: var("CORPROF_CALLTARGET_DISABLE_INLINING").as_deref() == Some("1"),
        })
    }
}

fn log(text: core::fmt::Arguments<'_>) {
    // One write per line: the program's threads write to the same stderr,
    // and a line written in pieces can be split by theirs.
    let line = format!("calltarget: {text}\n");
    let _ = std::io::stderr().write_all(line.as_bytes());
}

/// Checked options.
struct Config {
    targets: MethodTargets,
    helper: PathBuf,
    helper_name: String,
    integration: String,
    rejit: bool,
    sync_dir: Option<PathBuf>,
    verbose: bool,
    disable_inlining: bool,
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
            helper: options.helper,
            integration: options.integration,
            rejit: options.rejit,
            sync_dir: options.sync_dir,
            verbose: options.verbose,
            disable_inlining: options.disable_inlining,
        })
    }
}

/// A method of a module.
type Method = (ModuleID, mdMethodDef);

/// CallTarget as a profiler, or a part of one
/// (`profiler!((CallTargetProfiler, MyPart), "CLSID")`): it wraps the
/// [`CallTargetOptions::targets`] so that they call their integration's
/// `OnMethodBegin`/`OnMethodEnd`, at first JIT or by ReJIT, and installs
/// the wrapped IL itself.
///
/// In `initialize` it adds JIT-compilation, cache-search and module-load
/// events (`COR_PRF_ENABLE_REJIT` where it uses ReJIT,
/// `COR_PRF_DISABLE_INLINING` only when
/// [`disable_inlining`](CallTargetOptions::disable_inlining)) with
/// [`add_event_mask`](ProfilerInfo::add_event_mask); it handles
/// `module_load_finished` (comparing the helper's references with the
/// runtime's assemblies when `System.Private.CoreLib` loads, finding the
/// helper, preparing ReJIT bodies),
/// `jit_inlining` (a target is never inlined),
/// `jit_cached_function_search_started` (a target's precompiled code is set
/// aside, so that it is JIT-compiled and wrapped at its first call),
/// `jit_compilation_started` (wrapping each target once: a recompilation
/// keeps the IL installed first), `get_rejit_parameters` (only for the
/// methods it prepared) and `shutdown` (naming targets never found, and
/// the helper if it never loaded). A target that cannot be wrapped is
/// reported once, with the reason.
///
/// It reports on stderr, each line prefixed `calltarget: `; with bad
/// options, or a helper built for a newer runtime, it says why
/// (`not instrumenting: ...`) and does nothing.
/// `Default` is [`from_env`](CallTargetProfiler::from_env).
pub struct CallTargetProfiler {
    config: core::result::Result<Config, Error>,
    /// Methods given new IL at first JIT (a tier-1 rejit keeps it).
    wrapped: Mutex<HashSet<Method>>,
    /// Targets that could not be wrapped (said once, per distinct reason).
    unwrapped: Mutex<(HashSet<Method>, HashSet<String>)>,
    /// Raised at shutdown: the ReJIT thread makes no more calls.
    shut_down: Arc<ShutdownFlag>,
    /// The wrapped IL of each target wrapped by ReJIT (and its name), made
    /// at module load.
    rejit: Arc<RejitBodies<String>>,
    /// The methods to request a ReJIT of, taken by the ReJIT thread.
    to_rejit: Arc<(Mutex<Vec<Method>>, Condvar)>,
    /// Whether the runtime's limit on reaching precompiled inliners was said.
    inliners_noted: AtomicBool,
    /// The targets whose precompiled code was set aside.
    set_aside: Mutex<HashSet<Method>>,
    /// The helper's module, once loaded.
    helper: Mutex<Option<ModuleID>>,
    /// Modules of targets to wrap by ReJIT loaded before the helper,
    /// prepared when it loads.
    pending: Mutex<Vec<ModuleID>>,
    /// Each integration as read from the helper (an error reported once).
    integrations: Mutex<HashMap<String, Option<Arc<Integration>>>>,
    /// Whether the helper was compared with the runtime's assemblies
    /// (when `System.Private.CoreLib` loads).
    helper_checked: AtomicBool,
    /// Raised when that comparison refused the helper: from then on
    /// nothing is wrapped, as with bad options.
    refused: AtomicBool,
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
            unwrapped: Mutex::default(),
            shut_down: Arc::default(),
            rejit: Arc::default(),
            to_rejit: Arc::default(),
            inliners_noted: AtomicBool::default(),
            set_aside: Mutex::default(),
            helper: Mutex::default(),
            pending: Mutex::default(),
            integrations: Mutex::default(),
            helper_checked: AtomicBool::default(),
            refused: AtomicBool::default(),
        }
    }

    /// The options, unless they were bad or the helper was refused.
    fn config(&self) -> Option<&Config> {
        if self.refused.load(Ordering::Acquire) {
            return None;
        }
        self.config.as_ref().ok()
    }

    /// Compares the helper's references with the assemblies of the runtime
    /// whose `System.Private.CoreLib` is `corelib` (`helper_check.rs`):
    /// a reference to a newer `System.Runtime` (or CoreLib, netstandard,
    /// mscorlib) refuses the helper, said once, and nothing is wrapped; a
    /// newer reference to another assembly of the runtime is a warning.
    fn check_helper(&self, config: &Config, corelib: &Path) {
        let Some(dir) = corelib.parent().filter(|_| corelib.is_file()) else {
            log(format_args!(
                "the helper's references were not compared with the runtime's assemblies: \
                 System.Private.CoreLib is not a file ({})",
                corelib.display()
            ));
            return;
        };
        let verdict = match helper_check::check(&config.helper, dir) {
            Ok(v) => v,
            Err(why) => {
                log(format_args!(
                    "could not read the helper's references: {why}"
                ));
                return;
            }
        };
        for (_, why) in &verdict.unreadable {
            log(format_args!(
                "a reference of the helper was not checked: {why}"
            ));
        }
        if let Some(newer) = verdict.blocking.first() {
            log(format_args!(
                "not instrumenting: {}",
                helper_check::refusal(&config.helper, newer)
            ));
            self.refused.store(true, Ordering::Release);
        } else if !verdict.other.is_empty() {
            log(format_args!(
                "{}",
                helper_check::warning(&config.helper, &verdict.other)
            ));
        }
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

    /// Notes that `method` could not be wrapped, and says why (each reason
    /// once: the overloads of a target usually share it).
    fn left_unchanged(&self, module: ModuleID, method: mdMethodDef, why: String) {
        let mut unwrapped = lock(&self.unwrapped);
        unwrapped.0.insert((module, method));
        if unwrapped.1.insert(why.clone()) {
            log(format_args!("left unchanged: {why}"));
        }
    }

    /// Whether `method` was found not to be wrappable.
    fn unwrappable(&self, module: ModuleID, method: mdMethodDef) -> bool {
        lock(&self.unwrapped).0.contains(&(module, method))
    }

    /// The module and token of `function` when it is a target.
    fn is_target(&self, info: &ProfilerInfo, function: FunctionID) -> Option<Method> {
        let f = info.function_info(function).ok()?;
        self.targets_of(info, f.module)
            .contains(&f.token)
            .then_some((f.module, f.token))
    }

    /// Whether targets are wrapped by ReJIT at all: when forced, and on
    /// runtimes whose ReJIT reaches the precompiled inliners of a target.
    fn uses_rejit(&self, info: &ProfilerInfo) -> bool {
        let forced = self.config().is_some_and(|c| c.rejit);
        forced || info.runtime_information().map_or(0, |r| r.major) >= BLOCK_INLINING_FROM_MAJOR
    }

    /// The wrapped IL of `module`'s targets, kept for
    /// `get_rejit_parameters`, and their ReJIT requested.
    fn prepare_rejit(&self, info: &ProfilerInfo, module: ModuleID) {
        // Set aside, a target's precompiled code never runs (see
        // `jit_cached_function_search_started`); the ReJIT is for the
        // methods whose precompiled code inlined it, which only the
        // runtimes that can block inlining reach.
        let major = info.runtime_information().map_or(0, |r| r.major);
        let rejit = self.uses_rejit(info);
        let mut prepared = Vec::new();
        for method in self.targets_of(info, module) {
            match self.wrapped_il(info, module, method) {
                Ok((il, name)) if rejit => {
                    log(format_args!("prepared {name} for ReJIT"));
                    // SAFETY: `instrument::wrap`'s output for this very method
                    // (re-encoded with a recomputed max stack), whose new
                    // tokens were all just defined in this module's metadata.
                    unsafe { self.rejit.insert(module, method, il, name) };
                    prepared.push((module, method));
                }
                Ok((_, name)) => {
                    log(format_args!("{name} is precompiled: wrapped at first JIT"));
                    if !self.inliners_noted.swap(true, Ordering::Relaxed) {
                        log(format_args!(
                            "precompiled methods that inlined a target, if any, keep their \
                             inlined copy until tiered compilation compiles them again: this \
                             runtime (version {major}) is older than .NET \
                             {BLOCK_INLINING_FROM_MAJOR}, whose ReJIT reaches them"
                        ));
                    }
                }
                Err(why) => self.left_unchanged(module, method, why),
            }
        }
        if !prepared.is_empty() {
            let (methods, added) = &*self.to_rejit;
            lock(methods).extend(prepared);
            added.notify_all();
        }
    }

    /// The thread that requests the ReJIT of each batch of methods
    /// prepared at module load (ReJIT may not be requested from a
    /// callback).
    fn start_rejit_thread(&self, info: &ProfilerInfo) {
        let (info, shut_down) = (info.clone(), Arc::clone(&self.shut_down));
        let (rejit, queue) = (Arc::clone(&self.rejit), Arc::clone(&self.to_rejit));
        let dir = self.config().and_then(|c| c.sync_dir.clone());
        let _ = std::thread::Builder::new()
            .name("calltarget-rejit".into())
            .spawn(move || {
                let ready = |n: &str| {
                    dir.as_ref()
                        .is_none_or(|d| wait_for(&shut_down, &d.join(n)))
                };
                let go = |n: &str| {
                    if let Some(d) = &dir {
                        let _ = std::fs::File::create(d.join(n));
                    }
                };
                if !ready("ready-1") {
                    return;
                }
                loop {
                    let batch = {
                        let (methods, added) = &*queue;
                        let mut methods = lock(methods);
                        while methods.is_empty() && !shut_down.is_raised() {
                            methods = added.wait(methods).unwrap_or_else(|p| p.into_inner());
                        }
                        core::mem::take(&mut *methods)
                    };
                    if shut_down.is_raised() {
                        return;
                    }
                    match request_rejit_blocking_inlining(&info, &batch) {
                        Ok(inliners) => log(format_args!(
                            "RequestReJIT of {} methods succeeded{}",
                            batch.len(),
                            if inliners {
                                " (and their inliners)"
                            } else {
                                ""
                            }
                        )),
                        Err(e) => log(format_args!("RequestReJIT failed: {e}")),
                    }
                    if dir.is_some() {
                        break;
                    }
                }
                go("go-2");
                if !ready("ready-2") || shut_down.is_raised() {
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
        // JIT compilations: to wrap targets at their first, and to keep
        // targets from being inlined (`JITInlining`). Cache searches: to set
        // a target's precompiled code aside. Module loads: the helper's, to
        // read the integrations from, and the precompiled modules', whose
        // targets are wrapped by ReJIT where it reaches their inliners.
        // ReJIT (only possible if asked for here): always when forced, and
        // where it reaches the precompiled inliners of a target.
        let mut events = COR_PRF_MONITOR_JIT_COMPILATION
            | COR_PRF_MONITOR_MODULE_LOADS
            | COR_PRF_MONITOR_CACHE_SEARCHES;
        let rejit = self.uses_rejit(info);
        if rejit {
            events |= COR_PRF_ENABLE_REJIT;
        }
        if config.disable_inlining {
            events |= COR_PRF_DISABLE_INLINING;
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
        if rejit {
            self.start_rejit_thread(info);
        }
        Ok(())
    }

    fn jit_inlining(
        &self,
        info: &ProfilerInfo,
        _caller: FunctionID,
        callee: FunctionID,
    ) -> Result<bool> {
        // A target inlined into its caller would run unwrapped there.
        Ok(self.is_target(info, callee).is_none())
    }

    fn jit_cached_function_search_started(
        &self,
        info: &ProfilerInfo,
        function: FunctionID,
    ) -> Result<bool> {
        // The runtime asks only for a method that has precompiled code
        // (ReadyToRunInfo::GetEntryPoint). A target's is set aside, so that
        // its first call JIT-compiles it, and wraps it, at once; the ReJIT
        // requested at module load then reaches the methods whose
        // precompiled code inlined it.
        if self.config().is_none_or(|c| c.rejit) {
            return Ok(true);
        }
        let Some((module, method)) = self.is_target(info, function) else {
            return Ok(true);
        };
        if self.unwrappable(module, method) {
            return Ok(true);
        }
        if lock(&self.set_aside).insert((module, method)) {
            let name = info.module_metadata(module).ok().flatten();
            let name = name.and_then(|m| m.method_name(method).ok());
            let name = name.map_or_else(|| format!("{method:?}"), |n| n.to_string());
            log(format_args!("{name}: its precompiled code set aside"));
        }
        Ok(false)
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
        // Looked up in ReJIT mode too: the first lookup of a module reports
        // its unknown targets.
        let Some((module, method)) = self.is_target(info, function) else {
            return Ok(());
        };
        if config.rejit || self.unwrappable(module, method) {
            return Ok(());
        }
        if !lock(&self.wrapped).insert((module, method)) {
            // Tier 1, or on .NET 7 and later on-stack replacement: the runtime
            // compiles the IL installed first again; it must not be wrapped
            // twice (the facade would refuse it anyway).
            log(format_args!(
                "{method:?} JIT-compiled again: it keeps its wrapped IL"
            ));
            return Ok(());
        }
        match self.wrapped_il(info, module, method) {
            // SAFETY: the method's own IL wrapped by `corprof::instrument::wrap`
            // (re-encoded with a recomputed max stack), whose new tokens were
            // all just defined in this module's metadata.
            Ok((il, name)) => match unsafe { info.set_il_function_body(module, method, &il) } {
                Ok(()) => log(format_args!("wrapped {name}")),
                Err(e) => log(format_args!("SetILFunctionBody failed for {name}: {e}")),
            },
            Err(why) => self.left_unchanged(module, method, why),
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
        // Named without opening the module's metadata (`assembly_name`).
        let assembly = super::assembly_name::assembly_of(info, module);
        // CoreLib loads first, long before the helper (whose startup hook
        // runs just before `Main`): its directory holds the runtime's
        // assemblies, which the helper's references are compared with.
        if assembly.as_deref() == Some("System.Private.CoreLib")
            && !self.helper_checked.swap(true, Ordering::AcqRel)
        {
            match info.module_info(module) {
                Ok(m) => self.check_helper(config, Path::new(&m.path)),
                Err(e) => log(format_args!(
                    "the helper's references were not compared with the runtime's \
                     assemblies: GetModuleInfo of System.Private.CoreLib failed ({e})"
                )),
            }
            if self.config().is_none() {
                return Ok(());
            }
        }
        let is_helper = assembly.as_deref() == Some(config.helper_name.as_str());
        if is_helper {
            *lock(&self.helper) = Some(module);
        }
        // Targets of a precompiled module are wrapped by ReJIT; metadata
        // changes belong here, before ReJIT time (once the helper, whose
        // integrations say what to call, is known).
        if !self.targets_of(info, module).is_empty() {
            let when = if config.rejit {
                Ok(WrapWhen::ReJit)
            } else {
                WrapWhen::of_module(info, module)
            };
            match when {
                Ok(WrapWhen::ReJit) => {
                    if lock(&self.helper).is_none() {
                        lock(&self.pending).push(module);
                    } else {
                        self.prepare_rejit(info, module);
                    }
                }
                Ok(_) => {}
                Err(e) => log(format_args!(
                    "GetModuleInfo2 failed ({e}): the targets of {} are wrapped at first JIT",
                    assembly.as_deref().unwrap_or("?")
                )),
            }
        }
        if is_helper {
            for module in core::mem::take(&mut *lock(&self.pending)) {
                self.prepare_rejit(info, module);
            }
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
        self.to_rejit.1.notify_all();
        let Some(config) = self.config() else {
            return Ok(());
        };
        if lock(&self.helper).is_none() {
            log(format_args!(
                "the helper {} never loaded, so no call was wrapped: its startup hook did not \
                 run or failed, or {} holds no assembly named {}",
                config.helper_name,
                config.helper.display(),
                config.helper_name
            ));
        }
        for t in config.targets.never_found() {
            log(format_args!(
                "target {t} was never found: its assembly did not load or define it"
            ));
        }
        Ok(())
    }
}
