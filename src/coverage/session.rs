//! [`Coverage`]: the runtime part. It claims each method at its first
//! meeting with the JIT, rewrites its IL once with probes, decides which
//! inlinings keep the probes, and turns the counters into the reports.

use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::format;
use std::path::PathBuf;
use std::string::String;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;
use std::vec::Vec;

use super::claims::{Claim, ClaimGuard, Claims, Outcome};
use super::merge;
use super::naming::{catalog, naming};
use super::options::{CoverageOptions, CoverageStats};
use super::pdb::{self, PortablePdb};
use super::probes::{self, Counter};
use super::report::{self, BranchHits, MethodCoverage, PointHits};
use super::symbols::{log, ModuleState, Modules};
use crate::cil::MethodBody;
use crate::facade::{MetadataImport, ProfilerInfo, Result};
use crate::metadata::mdMethodDef;
use crate::profiling::{FunctionID, ModuleID};
use crate::support::sync::lock;

/// How long a JIT compilation waits for another thread to finish
/// instrumenting its method: far longer than a rewrite takes (tens of
/// microseconds), short of a hang if that thread is stuck.
const CLAIM_WAIT: Duration = Duration::from_secs(30);

/// A clock of the events that order IL reads: taken once a method's new IL
/// is installed, and at each `JITCompilationStarted`. SeqCst read-modify-
/// writes: one that reads a larger value happens after one that read a
/// smaller value.
static EPOCH: AtomicU64 = AtomicU64::new(1);

std::thread_local! {
    /// The JIT compilations under way on this thread, innermost last:
    /// (function, [`EPOCH`] at its `JITCompilationStarted`). More than one
    /// when loading a type for the JIT runs managed code that is compiled
    /// in turn.
    static COMPILING: RefCell<Vec<(usize, u64)>> = const { RefCell::new(Vec::new()) };
}

/// The earliest start of the compilations under way on this thread; `None`
/// when none is known (then nothing is known of when its IL was read).
fn compilations_started() -> Option<u64> {
    COMPILING
        .try_with(|stack| stack.borrow().iter().map(|&(_, epoch)| epoch).min())
        .ok()
        .flatten()
}

/// The method a callback is about.
struct FunctionInfoLite {
    module: ModuleID,
    token: mdMethodDef,
}

/// One instrumented method and its counters.
struct Instrumented {
    assembly: String,
    class: String,
    name: String,
    module: Arc<ModuleState>,
    token: u32,
    /// A state machine's `MoveNext` (an `async` or iterator method's body).
    state_machine: bool,
    points: Vec<pdb::SequencePoint>,
    counters: &'static [AtomicU64],
    plan: probes::ProbePlan,
}

/// Line and branch coverage at JIT time: call its methods from the
/// profiler's callbacks (see the `coverage` example).
pub struct Coverage {
    options: CoverageOptions,
    modules: Modules,
    seen: Claims<(ModuleID, u32)>,
    methods: Mutex<Vec<Instrumented>>,
    set_aside: Mutex<HashSet<(ModuleID, u32)>>,
    counts: [AtomicU64; 8],
    /// The runtime's interface, kept at the first instrumentation: the
    /// report reads the IL of the methods never compiled through it, for
    /// their branches.
    info: OnceLock<ProfilerInfo>,
    /// The branches of the methods never compiled of each module that
    /// unloaded (by its state's address), read while it was still loaded:
    /// its `ModuleID` means nothing once it is gone.
    unloaded: Mutex<HashMap<usize, HashMap<u32, Vec<BranchHits>>>>,
}

impl Coverage {
    /// Coverage with these options.
    pub fn new(options: CoverageOptions) -> Coverage {
        Coverage {
            options,
            modules: Modules::default(),
            seen: Claims::default(),
            methods: Mutex::default(),
            set_aside: Mutex::default(),
            counts: Default::default(),
            info: OnceLock::new(),
            unloaded: Mutex::default(),
        }
    }

    /// The options.
    pub fn options(&self) -> &CoverageOptions {
        &self.options
    }

    /// What coverage did so far.
    pub fn stats(&self) -> CoverageStats {
        let c = |i: usize| self.counts[i].load(Ordering::Relaxed);
        CoverageStats {
            instrumented: c(0),
            without_debug_info: c(1),
            excluded: c(2),
            failed: c(3),
            rewrite_nanos: c(4),
            inlined: c(5),
            precompiled: c(6),
            inlining_refused: c(7),
            compilations_waited: self.seen.waits(),
        }
    }

    fn count(&self, which: usize, n: u64) {
        self.counts[which].fetch_add(n, Ordering::Relaxed);
    }

    /// Whether the JIT may inline `callee` into the method it is
    /// compiling on this thread: yes when `callee` has no probes to lose, or
    /// when the IL the JIT read for it already carried them.
    ///
    /// RyuJIT reads an inline candidate's IL *before* it asks the runtime
    /// whether it may inline it, and inlines the IL it read: in
    /// `Compiler::impCheckCanInline` (src/coreclr/jit/importercalls.cpp of
    /// dotnet/runtime; `importer.cpp` in 3.1) `getMethodInfo(ftn, &methInfo)`
    /// comes first, then `impCanInlineIL`, `initClass`, and last
    /// `canInline(compiler->info.compMethodHnd, ftn)`, where `CEEInfo::
    /// canInline` calls the profiler's `JITInlining`; the inline then uses
    /// `pInfo->methInfo = methInfo`, the IL fetched before. So a callee
    /// instrumented *in* this callback (its first meeting with the JIT) is
    /// inlined without its probes if we say yes (issue 37: `return 1;` not
    /// counted under an optimized caller). A refusal is `INLINE_FAIL`,
    /// which the JIT notes as `CALLSITE_IS_VM_NOINLINE`: this call site
    /// only, the callee stays inlinable elsewhere.
    ///
    /// The same holds across threads: another thread may finish
    /// instrumenting `callee` between this JIT's `getMethodInfo` and its
    /// `canInline`. So an instrumented callee is inlined only when its new
    /// IL was installed before every compilation under way on this thread
    /// began ([`jit_compilation_started`](Coverage::jit_compilation_started)
    /// takes the time, [`jit_compilation_finished`](Coverage::jit_compilation_finished)
    /// drops it): every IL read of those compilations came later and saw the
    /// probes. Otherwise (instrumented since, being instrumented, or no
    /// compilation known on this thread) the inline is refused and counted
    /// in [`CoverageStats::inlining_refused`]; the call is then a call, and
    /// the callee's own compilation carries the probes. A callee to cover
    /// that was never compiled is instrumented here, so that later
    /// compilations may inline it.
    pub fn jit_inlining(&self, info: &ProfilerInfo, callee: FunctionID) -> bool {
        let allowed = match self.instrument(info, callee, false) {
            Outcome::Settled => return true,
            Outcome::Pending { .. } => false,
            Outcome::Instrumented { done } => compilations_started().is_some_and(|s| done < s),
        };
        self.count(if allowed { 5 } else { 7 }, 1);
        allowed
    }

    /// Whether the runtime may use `function`'s precompiled (ReadyToRun)
    /// code: not when coverage instruments it (its module has a PDB, it has
    /// sequence points, no filter or attribute leaves it out), since that
    /// code was compiled from the IL without probes; the JIT then compiles
    /// it, and [`jit_compilation_started`](Coverage::jit_compilation_started)
    /// instruments it. Called from `JITCachedFunctionSearchStarted`
    /// (`COR_PRF_MONITOR_CACHE_SEARCHES`, in [`CoverageOptions::event_mask`]).
    pub fn jit_cached_function_search_started(
        &self,
        info: &ProfilerInfo,
        function: FunctionID,
    ) -> bool {
        let Ok(function) = info.function_info(function) else {
            return true;
        };
        let Some(module) = self.modules.get(info, function.module) else {
            return true;
        };
        let Some(pdb) = &module.pdb else {
            return true;
        };
        if pdb
            .method(function.token.0)
            .is_none_or(|m| m.sequence_points.is_empty())
        {
            return true;
        }
        let Ok(Some(import)) = info.module_metadata(function.module) else {
            return true;
        };
        let catalog = catalog(&self.options, &import, pdb, &module);
        if catalog
            .binary_search_by_key(&function.token.0, |entry| entry.0)
            .is_err()
        {
            return true;
        }
        if lock(&self.set_aside).insert((function.module, function.token.0)) {
            self.count(6, 1);
        }
        false
    }

    /// Every method of `module` that the filters and attributes let in,
    /// Gives `function` its probes at its first JIT compilation, and notes
    /// when this compilation began (for [`jit_inlining`](Coverage::jit_inlining)).
    pub fn jit_compilation_started(&self, info: &ProfilerInfo, function: FunctionID) {
        let epoch = EPOCH.fetch_add(1, Ordering::SeqCst);
        let _ = COMPILING.try_with(|stack| stack.borrow_mut().push((function.0, epoch)));
        let _ = self.instrument(info, function, true);
    }

    /// The JIT compilation of `function` on this thread is over (call it
    /// from `JITCompilationFinished`). Compilations started after it and
    /// never said finished are dropped with it.
    pub fn jit_compilation_finished(&self, function: FunctionID) {
        let _ = COMPILING.try_with(|stack| {
            let mut stack = stack.borrow_mut();
            if let Some(at) = stack.iter().rposition(|&(f, _)| f == function.0) {
                stack.truncate(at);
            }
        });
    }

    /// Instruments `function` once; what became of it. With `wait` (a
    /// compilation of `function` itself), a method another thread is
    /// instrumenting is waited for ([`CLAIM_WAIT`] at most), so that the
    /// JIT never reads its IL before the probes are in.
    fn instrument(&self, info: &ProfilerInfo, function: FunctionID, wait: bool) -> Outcome {
        let Ok(function) = info.function_info(function) else {
            return Outcome::Settled;
        };
        let Some(module) = self.modules.get(info, function.module) else {
            return Outcome::Settled;
        };
        let Some(pdb) = &module.pdb else {
            return Outcome::Settled;
        };
        let key = (function.module, function.token.0);
        // Known and final (or pending, for a caller that does not wait).
        if let Some(state) = self
            .seen
            .get(key)
            .filter(|s| !wait || !matches!(s, Outcome::Pending { .. }))
        {
            return state;
        }
        if pdb
            .method(function.token.0)
            .is_none_or(|m| m.sequence_points.is_empty())
        {
            if self.seen.note(key, Outcome::Settled) {
                self.count(1, 1);
            }
            return Outcome::Settled;
        }
        // Claim the method; another thread may have been first.
        match self.seen.claim(key, wait.then_some(CLAIM_WAIT)) {
            Claim::Mine => {}
            Claim::Known(Outcome::Pending { by }) if wait && by != std::thread::current().id() => {
                log(format_args!(
                    "method {:#010x}: still being instrumented by another thread after {} s; \
                     compiled as it is",
                    function.token.0,
                    CLAIM_WAIT.as_secs()
                ));
                return Outcome::Pending { by };
            }
            Claim::Known(outcome) => return outcome,
        }
        // Settled at the end, or as `Settled` if this panics first.
        let claim = ClaimGuard::new(&self.seen, key);
        let outcome =
            if self.instrument_claimed(info, &module, pdb, function.module, function.token) {
                // After SetILFunctionBody returned: a compilation that
                // starts later reads the new IL.
                Outcome::Instrumented {
                    done: EPOCH.fetch_add(1, Ordering::SeqCst),
                }
            } else {
                Outcome::Settled
            };
        claim.settle(outcome);
        outcome
    }

    /// Instruments a method this thread claimed.
    fn instrument_claimed(
        &self,
        info: &ProfilerInfo,
        module: &Arc<ModuleState>,
        pdb: &PortablePdb,
        module_id: ModuleID,
        token: mdMethodDef,
    ) -> bool {
        let function = FunctionInfoLite {
            module: module_id,
            token,
        };
        let started = std::time::Instant::now();
        let _ = self.info.get_or_init(|| info.clone());
        let Some(debug) = pdb.method(function.token.0) else {
            return false;
        };
        let Ok(Some(import)) = info.module_metadata(function.module) else {
            return false;
        };
        catalog(&self.options, &import, pdb, module);
        let Some((class, name)) = naming(&self.options, &import, pdb, module, function.token)
        else {
            self.count(2, 1);
            return false;
        };
        let done = match self.rewrite(info, &import, function.module, function.token, debug) {
            Ok((counters, plan)) => {
                self.count(0, 1);
                lock(&self.methods).push(Instrumented {
                    assembly: module.assembly.clone(),
                    class,
                    name,
                    module: Arc::clone(module),
                    token: function.token.0,
                    state_machine: pdb.kickoff_method(function.token.0).is_some(),
                    points: debug.sequence_points.clone(),
                    counters,
                    plan,
                });
                true
            }
            Err(error) => {
                self.count(3, 1);
                log(format_args!("{name}: left uninstrumented: {error}"));
                false
            }
        };
        let nanos = started.elapsed().as_nanos().min(u128::from(u64::MAX)) as u64;
        self.count(4, nanos);
        done
    }

    /// Decodes, instruments and installs a method's IL.
    fn rewrite(
        &self,
        info: &ProfilerInfo,
        import: &MetadataImport,
        module: ModuleID,
        method: mdMethodDef,
        debug: &pdb::MethodDebugInfo,
    ) -> core::result::Result<(&'static [AtomicU64], probes::ProbePlan), String> {
        let original = info
            .il_function_body(module, method)
            .map_err(|e| format!("GetILFunctionBody: {e}"))?;
        let mut body = MethodBody::decode(&original).map_err(|e| format!("decode: {e}"))?;
        let visible: Vec<u32> = debug.sequence_points.iter().map(|p| p.il_offset).collect();
        let plan = probes::plan_with(
            &body,
            &visible,
            &debug.hidden_offsets,
            self.options.branches,
            &|token| awaits(import, token),
        );
        // The counters live as long as the process: the code refers to them.
        let counters: &'static [AtomicU64] = Vec::leak(
            (0..plan.counters.len().max(1))
                .map(|_| AtomicU64::new(0))
                .collect(),
        );
        let base = counters.as_ptr() as usize as u64;
        probes::apply(&mut body, &plan, base).map_err(|e| format!("insert probes: {e}"))?;
        body.update_max_stack(|token| import.stack_sig(token))
            .map_err(|e| format!("max stack: {e}"))?;
        let bytes = body.encode().map_err(|e| format!("encode: {e}"))?;
        MethodBody::decode(&bytes).map_err(|e| format!("re-decode: {e}"))?;
        // SAFETY: the method's own IL, decoded and edited with the codec
        // (branches and clauses follow labels), with stack-neutral probes
        // that store to `counters` (leaked: valid for the rest of the
        // process), max stack recomputed, encoded and decoded again; no new
        // tokens.
        unsafe { info.set_il_function_body(module, method, &bytes) }
            .map_err(|e| format!("SetILFunctionBody: {e}"))?;
        Ok((counters, plan))
    }

    /// The coverage gathered so far, one entry per instrumented method.
    pub fn snapshot(&self) -> Vec<MethodCoverage> {
        let methods = lock(&self.methods);
        let mut out = Vec::with_capacity(methods.len());
        for m in methods.iter() {
            let Some(pdb) = &m.module.pdb else { continue };
            let doc = |d: usize| {
                pdb.documents
                    .get(d)
                    .map_or_else(String::new, |d| d.name.clone())
            };
            let mut coverage = MethodCoverage {
                assembly: m.assembly.clone(),
                class: m.class.clone(),
                name: m.name.clone(),
                token: m.token,
                calls: 0,
                points: Vec::new(),
                branches: Vec::new(),
            };
            let mut entries = 0;
            for (slot, counter) in m.plan.counters.iter().enumerate() {
                let hits = m
                    .counters
                    .get(m.plan.counter_of(slot))
                    .map_or(0, |c| c.load(Ordering::Relaxed));
                match *counter {
                    Counter::Entry => entries = hits,
                    Counter::SequencePoint { il_offset } => {
                        // The points are by IL offset, strictly increasing
                        // (the blob's deltas are positive): by halves.
                        let at = m.points.binary_search_by_key(&il_offset, |p| p.il_offset);
                        if let Some(p) = at.ok().and_then(|at| m.points.get(at)) {
                            coverage.points.push(PointHits {
                                document: doc(p.document),
                                start_line: p.start_line,
                                end_line: p.end_line,
                                hits,
                            });
                        }
                    }
                    Counter::BranchArm { il_offset, arm } => {
                        coverage
                            .branches
                            .extend(branch_hits(pdb, &m.points, il_offset, arm, hits));
                    }
                }
            }
            coverage.calls = if m.state_machine {
                coverage.points.first().map_or(0, |p| p.hits)
            } else {
                entries
            };
            out.push(coverage);
        }
        // Methods never JIT-compiled: their lines, not hit.
        let done: HashSet<(*const ModuleState, u32)> = methods
            .iter()
            .map(|m| (Arc::as_ptr(&m.module), m.token))
            .collect();
        let gone = lock(&self.unloaded);
        for (module_id, module) in self.modules.all_with_ids() {
            let (Some(pdb), Some(catalog)) = (&module.pdb, module.catalog.get()) else {
                continue;
            };
            let key = Arc::as_ptr(&module) as usize;
            for (token, class, name) in catalog {
                if done.contains(&(Arc::as_ptr(&module), *token)) {
                    continue;
                }
                let Some(debug) = pdb.method(*token) else {
                    continue;
                };
                let points = debug
                    .sequence_points
                    .iter()
                    .map(|p| PointHits {
                        document: pdb
                            .documents
                            .get(p.document)
                            .map_or_else(String::new, |d| d.name.clone()),
                        start_line: p.start_line,
                        end_line: p.end_line,
                        hits: 0,
                    })
                    .collect();
                let branches = match (self.options.branches, gone.get(&key), self.info.get()) {
                    (false, _, _) => Vec::new(),
                    (true, Some(kept), _) => kept.get(token).cloned().unwrap_or_default(),
                    (true, None, Some(info)) => {
                        uncompiled_branches(info, module_id, *token, pdb, debug)
                    }
                    (true, None, None) => Vec::new(),
                };
                out.push(MethodCoverage {
                    assembly: module.assembly.clone(),
                    class: class.clone(),
                    name: name.clone(),
                    token: *token,
                    calls: 0,
                    points,
                    branches,
                });
            }
        }
        out
    }

    /// `module` is unloading (call it from `ModuleUnloadStarted`): the
    /// branches of its methods never compiled are read now, while its IL
    /// is there, for the report at shutdown (which then no longer asks
    /// the runtime about a `ModuleID` that is gone).
    pub fn module_unload_started(&self, info: &ProfilerInfo, module: ModuleID) {
        if !self.options.branches {
            return;
        }
        let Some(state) = self.modules.known(module) else {
            return;
        };
        let (Some(pdb), Some(catalog)) = (&state.pdb, state.catalog.get()) else {
            return;
        };
        let compiled: HashSet<u32> = lock(&self.methods)
            .iter()
            .filter(|m| Arc::ptr_eq(&m.module, &state))
            .map(|m| m.token)
            .collect();
        let kept = catalog
            .iter()
            .filter(|(token, _, _)| !compiled.contains(token))
            .filter_map(|(token, _, _)| {
                let debug = pdb.method(*token)?;
                Some((
                    *token,
                    uncompiled_branches(info, module, *token, pdb, debug),
                ))
            })
            .collect();
        lock(&self.unloaded)
            .entry(Arc::as_ptr(&state) as usize)
            .or_insert(kept);
    }

    /// Writes `coverage-<pid>.counts` ([`merge::write_counts`], with
    /// `summary`) into the output directory, which must exist; returns its
    /// path. The directory is `corprof coverage`'s private one: once it is
    /// gone, the run that made it has ended (interrupted, a process that
    /// outlived it), and making it again would leave it behind.
    pub fn write_counts(&self, summary: &str) -> std::io::Result<PathBuf> {
        let methods = self.snapshot();
        let dir = &self.options.output_dir;
        if !dir.is_dir() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::NotFound,
                format!(
                    "{} is gone (the corprof coverage run it was made for has ended)",
                    dir.display()
                ),
            ));
        }
        let path = dir.join(format!("coverage-{}.counts", std::process::id()));
        std::fs::write(&path, merge::write_counts(&methods, summary))?;
        Ok(path)
    }

    /// Writes `coverage-<pid>.info` and `coverage-<pid>.xml` into the
    /// output directory (created if missing); returns their paths.
    pub fn write_reports(&self) -> std::io::Result<(PathBuf, PathBuf)> {
        let methods = self.snapshot();
        let dir = &self.options.output_dir;
        std::fs::create_dir_all(dir)?;
        let pid = std::process::id();
        let info = dir.join(format!("coverage-{pid}.info"));
        let xml = dir.join(format!("coverage-{pid}.xml"));
        std::fs::write(&info, report::lcov(&methods))?;
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        std::fs::write(&xml, report::cobertura(&methods, now))?;
        Ok((info, xml))
    }
}

/// The report's entry of one branch arm: at the line of the last visible
/// sequence point at or before the branch (none before it: no entry).
fn branch_hits(
    pdb: &PortablePdb,
    points: &[pdb::SequencePoint],
    il_offset: u32,
    arm: u32,
    hits: u64,
) -> Option<BranchHits> {
    let before = points.partition_point(|p| p.il_offset <= il_offset);
    let p = before.checked_sub(1).and_then(|at| points.get(at))?;
    Some(BranchHits {
        document: pdb
            .documents
            .get(p.document)
            .map_or_else(String::new, |d| d.name.clone()),
        line: p.start_line,
        il_offset,
        arm,
        hits,
    })
}

/// Whether a call's token names an awaiter's `GetResult` (any awaiter:
/// `TaskAwaiter`, `ValueTaskAwaiter`, `ConfiguredTaskAwaitable`'s, a
/// custom one), for [`probes::plan_with`].
fn awaits(import: &MetadataImport, token: u32) -> bool {
    import
        .callee_name(crate::metadata::mdToken(token))
        .is_ok_and(|name| name == "GetResult")
}

/// The branch arms of a method never compiled, each not taken: its IL read
/// from the module (`GetILFunctionBody`) and planned as its first JIT
/// compilation would have been (`probes::plan`), so that the report's
/// denominators hold every branch of the code the PDB covers. A body the
/// runtime no longer gives (an unloaded module) or that does not decode has
/// none, as before.
fn uncompiled_branches(
    info: &ProfilerInfo,
    module: ModuleID,
    token: u32,
    pdb: &PortablePdb,
    debug: &pdb::MethodDebugInfo,
) -> Vec<BranchHits> {
    let Ok(il) = info.il_function_body(module, mdMethodDef(token)) else {
        return Vec::new();
    };
    let Ok(body) = MethodBody::decode(&il) else {
        return Vec::new();
    };
    let visible: Vec<u32> = debug.sequence_points.iter().map(|p| p.il_offset).collect();
    let Ok(Some(import)) = info.module_metadata(module) else {
        return Vec::new();
    };
    let plan = probes::plan_with(&body, &visible, &debug.hidden_offsets, true, &|token| {
        awaits(&import, token)
    });
    plan.counters
        .iter()
        .filter_map(|c| match *c {
            Counter::BranchArm { il_offset, arm } => {
                branch_hits(pdb, &debug.sequence_points, il_offset, arm, 0)
            }
            _ => None,
        })
        .collect()
}

/// `Result` of the facade, for the callbacks that forward to [`Coverage`].
pub type CoverageResult<T> = Result<T>;
