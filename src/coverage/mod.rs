//! Line and branch coverage of a .NET program at JIT time, without
//! rebuilding it: IL probes from the Portable PDB's sequence points, reports
//! in lcov and Cobertura.
//!
//! * [`pdb`](crate::coverage::pdb): a Portable PDB reader (documents, sequence points, state
//!   machines, Source Link) and [`pe`](crate::coverage::pe): the assembly's debug directory
//!   (the `.pdb` path of its CodeView entry, or the PDB embedded in it,
//!   inflated by [`inflate`](crate::coverage::inflate)).
//! * [`probes`](crate::coverage::probes): the counter increments inserted at each sequence point and
//!   on each arm of each conditional branch.
//! * [`Coverage`](crate::coverage::Coverage): the runtime part. At `JITCompilationStarted` it finds
//!   the method's sequence points, rewrites its IL once (tier 1, PGO and
//!   on-stack replacement compile the IL installed first) with counters in
//!   native memory, and lets the JIT inline an instrumented method only
//!   where the IL it read already carried the probes (see
//!   [`Coverage::jit_inlining`](crate::coverage::Coverage::jit_inlining)). At shutdown
//!   [`Coverage::write_reports`](crate::coverage::Coverage::write_reports) writes `coverage-<pid>.info` (lcov) and
//!   `coverage-<pid>.xml` (Cobertura).
//! * [`report`](crate::coverage::report): the two formats.
//!
//! Methods without sequence points, compiler-generated methods
//! (`[CompilerGenerated]` on the method) and methods under
//! `[ExcludeFromCodeCoverage]` (on the method, a declaring type, or the
//! `async`/iterator method a state machine belongs to) are left alone.
//! docs/coverage.md says how to run it and what it does not do.

mod component;
pub mod filter;
pub mod inflate;
pub mod pdb;
pub mod pe;
pub mod probes;
pub mod report;

use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::string::{String, ToString};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::vec::Vec;
use std::{format, vec};

use crate::cil::MethodBody;
use crate::facade::sync::lock;
use crate::facade::{EventMask, MetadataImport, ProfilerInfo, Result};
use crate::metadata::{mdMethodDef, mdToken, mdTypeDef};
use crate::profiling::{
    FunctionID, ModuleID, COR_PRF_MONITOR_CACHE_SEARCHES, COR_PRF_MONITOR_JIT_COMPILATION,
};
use crate::Error;
use filter::Filter;
use pdb::PortablePdb;
use probes::Counter;
use report::{BranchHits, MethodCoverage, PointHits};

pub use component::CoverageProfiler;

/// What to cover and where the reports go: [`Default`] or
/// [`from_env`](CoverageOptions::from_env), then the `with_*` setters
/// (`#[non_exhaustive]`: a struct literal does not build outside the
/// crate).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct CoverageOptions {
    /// Where `coverage-<pid>.info` and `.xml` are written.
    pub output_dir: PathBuf,
    /// Types covered (none: every type of every assembly with a PDB).
    pub include: Vec<Filter>,
    /// Types left out (they win over `include`).
    pub exclude: Vec<Filter>,
    /// Count branch arms too.
    pub branches: bool,
}

impl Default for CoverageOptions {
    fn default() -> Self {
        CoverageOptions {
            output_dir: PathBuf::from("."),
            include: Vec::new(),
            exclude: Vec::new(),
            branches: true,
        }
    }
}

impl CoverageOptions {
    /// Reads `CORPROF_COVERAGE_DIR` (default: the current directory),
    /// `CORPROF_COVERAGE_INCLUDE` and `CORPROF_COVERAGE_EXCLUDE` (lists of
    /// `[assembly-glob]type-glob`, separated by `,` or `;`) and
    /// `CORPROF_COVERAGE_BRANCHES` (a boolean, default on: `0`/`1`,
    /// `true`/`false`, `yes`/`no`, `on`/`off`, any case). A bad pattern or
    /// boolean is an `E_INVALIDARG` error that names the variable.
    pub fn from_env() -> core::result::Result<CoverageOptions, Error> {
        let var = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
        let mut options = CoverageOptions::default();
        if let Some(dir) = var("CORPROF_COVERAGE_DIR") {
            options.output_dir = PathBuf::from(dir);
        }
        if let Some(list) = var("CORPROF_COVERAGE_INCLUDE") {
            options.include = Filter::parse_list(&list)
                .map_err(|e| bad_setting(format!("CORPROF_COVERAGE_INCLUDE: {e}")))?;
        }
        if let Some(list) = var("CORPROF_COVERAGE_EXCLUDE") {
            options.exclude = Filter::parse_list(&list)
                .map_err(|e| bad_setting(format!("CORPROF_COVERAGE_EXCLUDE: {e}")))?;
        }
        options.branches = crate::facade::env::flag("CORPROF_COVERAGE_BRANCHES", true)?;
        Ok(options)
    }

    /// With [`output_dir`](Self::output_dir) set.
    #[must_use]
    pub fn with_output_dir(mut self, dir: impl Into<PathBuf>) -> CoverageOptions {
        self.output_dir = dir.into();
        self
    }

    /// With [`include`](Self::include) set.
    #[must_use]
    pub fn with_include(mut self, include: Vec<Filter>) -> CoverageOptions {
        self.include = include;
        self
    }

    /// With [`exclude`](Self::exclude) set.
    #[must_use]
    pub fn with_exclude(mut self, exclude: Vec<Filter>) -> CoverageOptions {
        self.exclude = exclude;
        self
    }

    /// With [`branches`](Self::branches) set.
    #[must_use]
    pub fn with_branches(mut self, branches: bool) -> CoverageOptions {
        self.branches = branches;
        self
    }

    /// The event mask coverage needs: JIT compilation (and with it the
    /// inlining callback) and cache searches (to set aside the precompiled
    /// code of the methods it covers).
    pub fn event_mask(&self) -> EventMask {
        (COR_PRF_MONITOR_JIT_COMPILATION | COR_PRF_MONITOR_CACHE_SEARCHES).into()
    }
}

/// Counts of what coverage did (more may be added: read the fields, do not
/// build one).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct CoverageStats {
    /// Methods given probes.
    pub instrumented: u64,
    /// Methods of modules with a PDB that have no sequence points.
    pub without_debug_info: u64,
    /// Methods left out by a filter or an attribute.
    pub excluded: u64,
    /// Methods whose IL could not be rewritten (a message each).
    pub failed: u64,
    /// Nanoseconds spent rewriting, in total.
    pub rewrite_nanos: u64,
    /// Times the JIT was let inline an instrumented method (its probes go
    /// with it).
    pub inlined: u64,
    /// Times the JIT was kept from inlining a method coverage instruments,
    /// because the IL it had read might not carry the probes yet (the
    /// method was instrumented during, or just before, that compilation).
    pub inlining_refused: u64,
    /// Covered methods whose precompiled (ReadyToRun) code was set aside,
    /// so that the JIT compiled them from their instrumented IL.
    pub precompiled: u64,
}

/// A bad `CORPROF_COVERAGE_*` value.
fn bad_setting(message: String) -> Error {
    Error::new(crate::E_INVALIDARG, message)
}

/// A module's PDB, once looked up.
struct ModuleState {
    assembly: String,
    pdb: Option<PortablePdb>,
    /// Every method with sequence points that the filters and attributes
    /// let in: (MethodDef token, class, name). Made at the module's first
    /// JIT compilation; the methods never compiled are reported with zero
    /// counts from it.
    catalog: OnceLock<Vec<(u32, String, String)>>,
}

/// Where a method stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Outcome {
    /// Being instrumented by a thread: not to be inlined yet.
    Pending,
    /// Excluded, failed or without sequence points: its IL is final.
    Settled,
    /// Given probes: its IL is final. `done`: the [`EPOCH`] taken once
    /// `SetILFunctionBody` had returned.
    Instrumented { done: u64 },
}

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
    counters: &'static [AtomicU32],
    plan: probes::ProbePlan,
}

/// Line and branch coverage at JIT time: call its methods from the
/// profiler's callbacks (see the `coverage` example).
pub struct Coverage {
    options: CoverageOptions,
    modules: Mutex<HashMap<ModuleID, Option<Arc<ModuleState>>>>,
    seen: Mutex<HashMap<(ModuleID, u32), Outcome>>,
    methods: Mutex<Vec<Instrumented>>,
    set_aside: Mutex<HashSet<(ModuleID, u32)>>,
    counts: [AtomicU64; 8],
}

/// One message on stderr, `coverage: ` first; write errors are ignored.
fn log(text: core::fmt::Arguments<'_>) {
    use std::io::Write as _;
    let _ = writeln!(std::io::stderr().lock(), "coverage: {text}");
}

const COMPILER_GENERATED: &str = "System.Runtime.CompilerServices.CompilerGeneratedAttribute";
const EXCLUDE_FROM_COVERAGE: &str =
    "System.Diagnostics.CodeAnalysis.ExcludeFromCodeCoverageAttribute";

/// Whether `token` carries the custom attribute `name`.
fn has_attribute(import: &MetadataImport, token: u32, name: &str) -> bool {
    let wide: Vec<u16> = name.encode_utf16().chain(Some(0)).collect();
    let mut data: *const core::ffi::c_void = core::ptr::null();
    let mut len = 0u32;
    // SAFETY: `wide` is NUL-terminated and outlives the call; the out
    // pointers are locals.
    let hr = unsafe {
        import
            .raw()
            .GetCustomAttributeByName(mdToken(token), wide.as_ptr(), &mut data, &mut len)
    };
    hr == crate::S_OK
}

/// The enclosing type of a nested type, if it is one.
fn enclosing(import: &MetadataImport, typedef: mdTypeDef) -> Option<mdTypeDef> {
    let mut outer = mdTypeDef(0);
    // SAFETY: the out pointer is a local.
    let hr = unsafe { import.raw().GetNestedClassProps(typedef, &mut outer) };
    (hr.is_ok() && outer.0 != 0).then_some(outer)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Finds and parses a module's Portable PDB: embedded in the assembly, or
/// beside it (`App.pdb`), or at its CodeView path. `Ok(None)`: no PDB.
pub fn load_pdb(assembly_path: &Path) -> core::result::Result<Option<PortablePdb>, String> {
    let image = std::fs::read(assembly_path).map_err(|e| format!("cannot read: {e}"))?;
    let directory = pe::debug_directory(&image).map_err(|e| e.to_string())?;
    if let Some(embedded) = directory.embedded_pdb {
        return PortablePdb::parse(&embedded)
            .map(Some)
            .map_err(|e| format!("embedded PDB: {e}"));
    }
    let mut candidates = vec![assembly_path.with_extension("pdb")];
    if let Some(path) = directory.codeview_path {
        candidates.push(PathBuf::from(path));
    }
    for candidate in &candidates {
        if let Ok(bytes) = std::fs::read(candidate) {
            let pdb =
                PortablePdb::parse(&bytes).map_err(|e| format!("{}: {e}", candidate.display()))?;
            // A PDB of another build would put probes at the wrong IL
            // offsets: the ids must match (PE-COFF.md, Portable CodeView).
            if let Some(expected) = directory.portable_pdb_id {
                if pdb.id != expected {
                    return Err(format!(
                        "{}: not the PDB this assembly was built with (PDB id {}, the assembly's \
                         CodeView entry names {})",
                        candidate.display(),
                        hex(&pdb.id),
                        hex(&expected)
                    ));
                }
            }
            return Ok(Some(pdb));
        }
    }
    let mut mdb = std::ffi::OsString::from(assembly_path.as_os_str());
    mdb.push(".mdb");
    if Path::new(&mdb).exists() {
        return Err(format!(
            "{}: Mono .mdb symbols are not supported; compile with -debug:portable",
            Path::new(&mdb).display()
        ));
    }
    Ok(None)
}

impl Coverage {
    /// Coverage with these options.
    pub fn new(options: CoverageOptions) -> Coverage {
        Coverage {
            options,
            modules: Mutex::default(),
            seen: Mutex::default(),
            methods: Mutex::default(),
            set_aside: Mutex::default(),
            counts: Default::default(),
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
        }
    }

    fn count(&self, which: usize, n: u64) {
        self.counts[which].fetch_add(n, Ordering::Relaxed);
    }

    /// The module's PDB, looked up once (one message if it is broken).
    fn module(&self, info: &ProfilerInfo, module: ModuleID) -> Option<Arc<ModuleState>> {
        if let Some(known) = lock(&self.modules).get(&module) {
            return known.clone();
        }
        let state = (|| {
            let module_info = info.module_info(module).ok()?;
            let path = PathBuf::from(&module_info.path);
            if !path.is_file() {
                return None;
            }
            let assembly = info
                .assembly_info(module_info.assembly)
                .map(|a| a.name)
                .unwrap_or_else(|_| {
                    path.file_stem()
                        .map_or_else(String::new, |s| s.to_string_lossy().into_owned())
                });
            let pdb = match load_pdb(&path) {
                Ok(pdb) => pdb,
                Err(error) => {
                    log(format_args!(
                        "{}: {error}; the module runs uninstrumented",
                        path.display()
                    ));
                    None
                }
            };
            Some(Arc::new(ModuleState {
                assembly,
                pdb,
                catalog: OnceLock::new(),
            }))
        })();
        lock(&self.modules).insert(module, state.clone());
        state
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
        let allowed = match self.instrument(info, callee) {
            Outcome::Settled => return true,
            Outcome::Pending => false,
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
        let Some(module) = self.module(info, function.module) else {
            return true;
        };
        let Some(pdb) = &module.pdb else {
            return true;
        };
        if pdb
            .method(function.token.0)
            .map_or(true, |m| m.sequence_points.is_empty())
        {
            return true;
        }
        let Ok(Some(import)) = info.module_metadata(function.module) else {
            return true;
        };
        let catalog = self.catalog(&import, pdb, &module);
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
    /// by token, made once.
    fn catalog<'m>(
        &self,
        import: &MetadataImport,
        pdb: &PortablePdb,
        module: &'m ModuleState,
    ) -> &'m [(u32, String, String)] {
        module.catalog.get_or_init(|| {
            let mut catalog = Vec::new();
            for (row, m) in pdb.methods.iter().enumerate() {
                let token = 0x0600_0001 + row as u32;
                if m.sequence_points.is_empty() {
                    continue;
                }
                if let Some((class, name)) = self.naming(import, pdb, module, mdMethodDef(token)) {
                    catalog.push((token, class, name));
                }
            }
            catalog
        })
    }

    /// Gives `function` its probes at its first JIT compilation, and notes
    /// when this compilation began (for [`jit_inlining`](Coverage::jit_inlining)).
    pub fn jit_compilation_started(&self, info: &ProfilerInfo, function: FunctionID) {
        let epoch = EPOCH.fetch_add(1, Ordering::SeqCst);
        let _ = COMPILING.try_with(|stack| stack.borrow_mut().push((function.0, epoch)));
        let _ = self.instrument(info, function);
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

    /// Instruments `function` once; what became of it.
    fn instrument(&self, info: &ProfilerInfo, function: FunctionID) -> Outcome {
        let Ok(function) = info.function_info(function) else {
            return Outcome::Settled;
        };
        let Some(module) = self.module(info, function.module) else {
            return Outcome::Settled;
        };
        let Some(pdb) = &module.pdb else {
            return Outcome::Settled;
        };
        let key = (function.module, function.token.0);
        if let Some(&state) = lock(&self.seen).get(&key) {
            return state;
        }
        if pdb
            .method(function.token.0)
            .map_or(true, |m| m.sequence_points.is_empty())
        {
            if lock(&self.seen).insert(key, Outcome::Settled).is_none() {
                self.count(1, 1);
            }
            return Outcome::Settled;
        }
        // Claim the method; another thread may have been first.
        {
            let mut seen = lock(&self.seen);
            if let Some(&state) = seen.get(&key) {
                return state;
            }
            seen.insert(key, Outcome::Pending);
        }
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
        lock(&self.seen).insert(key, outcome);
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
        let Some(debug) = pdb.method(function.token.0) else {
            return false;
        };
        let Ok(Some(import)) = info.module_metadata(function.module) else {
            return false;
        };
        self.catalog(&import, pdb, module);
        let Some((class, name)) = self.naming(&import, pdb, module, function.token) else {
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

    /// The class and name a method is reported under, or `None` when a
    /// filter or an attribute leaves it out.
    fn naming(
        &self,
        import: &MetadataImport,
        pdb: &PortablePdb,
        module: &ModuleState,
        method: mdMethodDef,
    ) -> Option<(String, String)> {
        let props = import.method_props(method).ok()?;
        // Compiler-generated methods are left out, but for property
        // accessors (auto-properties: `public int X { get; set; }`), whose
        // sequence points are the user's line, counted as coverlet counts
        // them (its `SkipAutoProps` is off by default).
        let accessor = props.name.starts_with("get_") || props.name.starts_with("set_");
        if (!accessor && has_attribute(import, method.0, COMPILER_GENERATED))
            || has_attribute(import, method.0, EXCLUDE_FROM_COVERAGE)
        {
            return None;
        }
        // A state machine's MoveNext is reported as its kickoff method.
        let (user_method, user_name) = match pdb.kickoff_method(method.0) {
            Some(kickoff) => {
                let kickoff = mdMethodDef(kickoff);
                if has_attribute(import, kickoff.0, EXCLUDE_FROM_COVERAGE) {
                    return None;
                }
                let name = import.method_props(kickoff).ok()?.name;
                (kickoff, name)
            }
            None => (method, props.name.clone()),
        };
        let user_type = import.method_props(user_method).ok()?.declaring_type;
        // The declaring type and its enclosing types.
        let mut outermost = props.declaring_type;
        let mut typedef = Some(props.declaring_type);
        let mut depth = 0;
        while let Some(t) = typedef {
            if has_attribute(import, t.0, EXCLUDE_FROM_COVERAGE) || depth > 32 {
                return None;
            }
            outermost = t;
            typedef = enclosing(import, t);
            depth += 1;
        }
        let type_name = import.type_name(user_type).ok()?;
        let full_type = import.type_name(props.declaring_type).ok()?;
        let options = &self.options;
        let included = options.include.is_empty()
            || options
                .include
                .iter()
                .any(|f| f.matches(&module.assembly, &full_type));
        if !included
            || options
                .exclude
                .iter()
                .any(|f| f.matches(&module.assembly, &full_type))
        {
            return None;
        }
        let class = import.type_name(outermost).ok()?;
        Some((class, format!("{type_name}::{user_name}")))
    }

    /// Decodes, instruments and installs a method's IL.
    fn rewrite(
        &self,
        info: &ProfilerInfo,
        import: &MetadataImport,
        module: ModuleID,
        method: mdMethodDef,
        debug: &pdb::MethodDebugInfo,
    ) -> core::result::Result<(&'static [AtomicU32], probes::ProbePlan), String> {
        let original = info
            .il_function_body(module, method)
            .map_err(|e| format!("GetILFunctionBody: {e}"))?;
        let mut body = MethodBody::decode(&original).map_err(|e| format!("decode: {e}"))?;
        let visible: Vec<u32> = debug.sequence_points.iter().map(|p| p.il_offset).collect();
        let plan = probes::plan(
            &body,
            &visible,
            &debug.hidden_offsets,
            self.options.branches,
        );
        // The counters live as long as the process: the code refers to them.
        let counters: &'static [AtomicU32] = Vec::leak(
            (0..plan.counters.len().max(1))
                .map(|_| AtomicU32::new(0))
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
                calls: 0,
                points: Vec::new(),
                branches: Vec::new(),
            };
            let mut entries = 0;
            for (slot, counter) in m.plan.counters.iter().enumerate() {
                let hits = m
                    .counters
                    .get(m.plan.counter_of(slot))
                    .map_or(0, |c| u64::from(c.load(Ordering::Relaxed)));
                match *counter {
                    Counter::Entry => entries = hits,
                    Counter::SequencePoint { il_offset } => {
                        if let Some(p) = m.points.iter().find(|p| p.il_offset == il_offset) {
                            coverage.points.push(PointHits {
                                document: doc(p.document),
                                start_line: p.start_line,
                                end_line: p.end_line,
                                hits,
                            });
                        }
                    }
                    Counter::BranchArm { il_offset, arm } => {
                        let Some(p) = m.points.iter().rev().find(|p| p.il_offset <= il_offset)
                        else {
                            continue;
                        };
                        coverage.branches.push(BranchHits {
                            document: doc(p.document),
                            line: p.start_line,
                            il_offset,
                            arm,
                            hits,
                        });
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
        let mut modules: Vec<Arc<ModuleState>> =
            lock(&self.modules).values().flatten().cloned().collect();
        modules.sort_by_key(|m| Arc::as_ptr(m) as usize);
        modules.dedup_by_key(|m| Arc::as_ptr(m) as usize);
        for module in modules {
            let (Some(pdb), Some(catalog)) = (&module.pdb, module.catalog.get()) else {
                continue;
            };
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
                out.push(MethodCoverage {
                    assembly: module.assembly.clone(),
                    class: class.clone(),
                    name: name.clone(),
                    calls: 0,
                    points,
                    branches: Vec::new(),
                });
            }
        }
        out
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

/// `Result` of the facade, for the callbacks that forward to [`Coverage`].
pub type CoverageResult<T> = Result<T>;
