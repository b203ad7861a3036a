//! An IL rewriter: changes what methods of the `Rewrite` test program do by
//! editing their IL before the JIT compiles them, and re-JIT-compiles one of
//! them while the program runs.
//!
//! Targets are found by name in the module that defines
//! `E2E.Rewrite.Program` (see `tests/e2e/programs/Rewrite/Program.cs`):
//!
//! * `int Program.Answer()` returns 42 instead of 41 (its `ldc.i4.s 41`
//!   becomes `ldc.i4.s 42`);
//! * `int Program.Work(int)` and `int Program.Guarded(int)` get a
//!   `call void Counter.Hit()` at entry. `Guarded` has try/catch/finally, so
//!   its exception clauses must move with the instructions.
//!
//! Each edit decodes the method's IL ([`ProfilerInfo::il_function_body`]),
//! edits it with [`corprof::cil`], recomputes max stack with call-site
//! signatures read from the module's metadata, encodes it and installs it
//! with [`ProfilerInfo::set_il_function_body`] (memory from the module's
//! `IMethodMalloc`).
//!
//! **ReJIT mode.** When `IL_REWRITER_SYNC_DIR` names a directory, the
//! profiler enables ReJIT, leaves `Answer` alone at its first JIT, and
//! starts a thread that follows the handshake of `Rewrite --rejit
//! --sync-dir DIR`: at `DIR/ready-1` it calls `RequestReJIT` for `Answer`
//! (whose new IL, returning 42, it supplies in `get_rejit_parameters`) and
//! creates `DIR/go-2`; at `DIR/ready-2` it calls `RequestRevert` and creates
//! `DIR/go-3`. The program then prints `answer=41`, `42`, `41` for its
//! three phases.
//!
//! ```sh
//! cargo build --example il_rewriter
//! CORECLR_ENABLE_PROFILING=1 \
//! CORECLR_PROFILER={6C1F8E0B-2D4A-4B7C-9E35-A1D0F47B8C26} \
//! CORECLR_PROFILER_PATH=$PWD/target/debug/examples/libil_rewriter.so \
//! COMPlus_TieredCompilation=0 DOTNET_TieredCompilation=0 \
//! dotnet Rewrite.dll
//! ```
//!
//! Messages go to stderr, each line starting with `il_rewriter: `.
//! `IL_REWRITER_VERBOSE=1` adds the IL listings before and after each edit.
//! `IL_REWRITER_ALLOW_INLINING=1` leaves out `COR_PRF_DISABLE_INLINING`
//! (which, in CoreCLR 3.1, also keeps methods from tiering up): the targets
//! are `NoInlining` anyway, and a method JIT-compiled again at tier 1 keeps
//! the IL installed for tier 0.
//! `IL_REWRITER_EVERY_JIT=1` edits at every `JITCompilationStarted` of a
//! target instead of the first only, and leaves the once-only rule to the
//! facade, which refuses to set a method's IL a second time (tier 1, PGO's
//! instrumented tier and on-stack replacement all compile the IL installed
//! first; see `ProfilerInfo::set_il_function_body`).
//! `IL_REWRITER_REJIT_TARGET=InlinedAnswer` makes `InlinedAnswer` (which
//! the JIT inlines into `CallsInlined`, `Rewrite --rejit --target inlined`)
//! the ReJIT target instead of `Answer`; `IL_REWRITER_WITH_INLINERS=FLAGS`
//! asks with `RequestReJITWithInliners` and these `COR_PRF_REJIT_FLAGS` (1:
//! `COR_PRF_REJIT_BLOCK_INLINING`), which compiles the inliners again too.
//! `IL_REWRITER_TIMEOUT_MS` bounds each wait of the ReJIT thread for a
//! `ready` file (default 60000).
//!
//! The only `unsafe` is the two calls that install IL or keep it for
//! ReJIT: the runtime compiles whatever it is given, so the facade leaves
//! the proof of validity to the caller.

use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::thread;
use std::time::Duration;

use corprof::cil::{Label, MethodBody, OpCode, Operand, Token};
use corprof::facade::{MetadataImport, Profiler, ProfilerInfo, Result, ShutdownFlag, Waited};
use corprof::instrument::RejitBodies;
use corprof::metadata::{mdMethodDef, mdTypeDef};
use corprof::profiling::{
    FunctionID, ICorProfilerFunctionControl, ModuleID, ReJITID, COR_PRF_DISABLE_INLINING,
    COR_PRF_ENABLE_REJIT, COR_PRF_MONITOR_JIT_COMPILATION, COR_PRF_REJIT_FLAGS,
};
use corprof::{ComRef, HRESULT};

/// The type whose module is rewritten, and the type holding the probe.
const PROGRAM_TYPE: &str = "E2E.Rewrite.Program";
const COUNTER_TYPE: &str = "E2E.Rewrite.Counter";

/// MethodDefSig blobs (ECMA-335 II.23.2.1): calling convention `DEFAULT`
/// (static), parameter count, return type, parameter types.
const SIG_STATIC_VOID: &[u8] = &[0x00, 0x00, 0x01]; // static void ()
const SIG_STATIC_INT: &[u8] = &[0x00, 0x00, 0x08]; // static int ()
const SIG_STATIC_INT_INT: &[u8] = &[0x00, 0x01, 0x08, 0x08]; // static int (int)
const SIG_STATIC_LONG_INT: &[u8] = &[0x00, 0x01, 0x0A, 0x08]; // static long (int)

/// What `Answer` returns, before and after.
const OLD_ANSWER: i32 = 41;
const NEW_ANSWER: i32 = 42;

/// How often the ReJIT thread looks for a `ready` file.
const POLL: Duration = Duration::from_millis(5);
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

/// The methods of one module that defines `E2E.Rewrite.Program`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Targets {
    module: ModuleID,
    answer: mdMethodDef,
    inlined_answer: mdMethodDef,
    work: mdMethodDef,
    guarded: mdMethodDef,
    hot_loop: mdMethodDef,
    hit: mdMethodDef,
}

/// One edit of a method's IL.
#[derive(Clone, Copy, Debug)]
enum Edit {
    /// `ldc.i4 41` becomes `ldc.i4.s 42`.
    Answer,
    /// `call void Counter.Hit()` at entry.
    EntryProbe(mdMethodDef),
}

/// State shared with the ReJIT thread.
#[derive(Default)]
struct Shared {
    /// The first module found that defines `E2E.Rewrite.Program`.
    targets: OnceLock<Targets>,
    /// Set at `shutdown`: the thread makes no more calls into the runtime.
    shut_down: ShutdownFlag,
    /// `Answer`'s new IL (and a summary of the edit), made by the ReJIT
    /// thread before it asks for the ReJIT.
    rejit: RejitBodies<String>,
}

struct IlRewriter {
    /// ReJIT mode: the handshake directory.
    sync_dir: Option<PathBuf>,
    /// Leave inlining (and with it tiered compilation) as the runtime has it.
    allow_inlining: bool,
    verbose: bool,
    timeout: Duration,
    shared: Arc<Shared>,
    /// Every module examined so far, and its targets if it has them.
    modules: Mutex<HashMap<ModuleID, Option<Targets>>>,
    /// Methods already given new IL. With tiered compilation a method is
    /// JIT-compiled again (tier 1) from the IL installed for tier 0, so it
    /// must not be edited a second time.
    rewritten: Mutex<HashSet<(ModuleID, mdMethodDef)>>,
    /// `IL_REWRITER_EVERY_JIT=1`: leave the once-only rule to the facade.
    every_jit: bool,
    /// `IL_REWRITER_REJIT_TARGET=InlinedAnswer`: re-JIT-compile
    /// `InlinedAnswer` instead of `Answer`.
    rejit_inlined: bool,
    /// `IL_REWRITER_WITH_INLINERS=FLAGS`: `RequestReJITWithInliners` with
    /// these `COR_PRF_REJIT_FLAGS` (a decimal number).
    with_inliners: Option<u32>,
}

impl Default for IlRewriter {
    fn default() -> Self {
        let sync_dir = std::env::var_os("IL_REWRITER_SYNC_DIR")
            .filter(|dir| !dir.is_empty())
            .map(PathBuf::from);
        let flag = |name: &str| std::env::var(name).is_ok_and(|v| v == "1");
        let verbose = flag("IL_REWRITER_VERBOSE");
        let allow_inlining = flag("IL_REWRITER_ALLOW_INLINING");
        let every_jit = flag("IL_REWRITER_EVERY_JIT");
        let rejit_inlined =
            std::env::var("IL_REWRITER_REJIT_TARGET").is_ok_and(|v| v == "InlinedAnswer");
        let with_inliners = std::env::var("IL_REWRITER_WITH_INLINERS")
            .ok()
            .and_then(|v| v.trim().parse::<u32>().ok());
        let timeout = std::env::var("IL_REWRITER_TIMEOUT_MS")
            .ok()
            .and_then(|ms| ms.trim().parse::<u64>().ok())
            .filter(|&ms| ms > 0)
            .map_or(DEFAULT_TIMEOUT, Duration::from_millis);
        IlRewriter {
            sync_dir,
            allow_inlining,
            verbose,
            timeout,
            shared: Arc::default(),
            modules: Mutex::default(),
            rewritten: Mutex::default(),
            every_jit,
            rejit_inlined,
            with_inliners,
        }
    }
}

/// One line on stderr. Write errors are ignored: the program must go on.
fn log(text: std::fmt::Arguments<'_>) {
    use std::io::Write as _;
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "il_rewriter: {text}");
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Looks up the targets by name in a module's metadata; `None` when the
/// module does not define `E2E.Rewrite.Program`.
fn find_targets(
    module: ModuleID,
    import: &MetadataImport,
) -> std::result::Result<Option<Targets>, String> {
    let Ok(program) = import.find_type_def(PROGRAM_TYPE, None) else {
        return Ok(None);
    };
    let method = |class: mdTypeDef, class_name: &str, name: &str, sig: &[u8]| {
        import
            .find_method(class, name, sig)
            .map_err(|e| format!("no method {class_name}.{name} ({e})"))
    };
    let counter = import
        .find_type_def(COUNTER_TYPE, None)
        .map_err(|e| format!("no type {COUNTER_TYPE} ({e})"))?;
    Ok(Some(Targets {
        module,
        answer: method(program, PROGRAM_TYPE, "Answer", SIG_STATIC_INT)?,
        inlined_answer: method(program, PROGRAM_TYPE, "InlinedAnswer", SIG_STATIC_INT)?,
        work: method(program, PROGRAM_TYPE, "Work", SIG_STATIC_INT_INT)?,
        guarded: method(program, PROGRAM_TYPE, "Guarded", SIG_STATIC_INT_INT)?,
        hot_loop: method(program, PROGRAM_TYPE, "HotLoop", SIG_STATIC_LONG_INT)?,
        hit: method(counter, COUNTER_TYPE, "Hit", SIG_STATIC_VOID)?,
    }))
}

/// The offsets of every exception-clause boundary of a body, in order.
fn clause_offsets(body: &MethodBody) -> Vec<u32> {
    let offset = |label: Label| {
        body.get(label)
            .map_or(body.header().code_size(), |ins| ins.offset())
    };
    body.clauses()
        .iter()
        .flat_map(|c| [c.try_start, c.try_end, c.handler_start, c.handler_end])
        .map(offset)
        .collect()
}

/// A method's new IL and a one-line account of the edit.
struct Rewritten {
    bytes: Vec<u8>,
    summary: String,
    listings: Option<(String, String)>,
}

/// Decodes `original`, applies `edit`, recomputes max stack from the
/// module's signatures and encodes the result, checking it decodes again.
fn rewrite(
    original: &[u8],
    edit: Edit,
    import: &MetadataImport,
    verbose: bool,
) -> std::result::Result<Rewritten, String> {
    let mut body = MethodBody::decode(original).map_err(|e| format!("decode: {e}"))?;
    let before = verbose.then(|| body.to_string());
    let old_code = body.header().code_size();
    let old_clauses = clause_offsets(&body);
    let what = match edit {
        Edit::Answer => {
            let at = body
                .find(|ins| ins.i4_constant() == Some(OLD_ANSWER))
                .ok_or_else(|| format!("no `ldc.i4 {OLD_ANSWER}` in the body"))?;
            let (opcode, operand) = OpCode::ldc_i4(NEW_ANSWER);
            body.replace(at, opcode, operand)
                .map_err(|e| format!("replace: {e}"))?;
            format!("ldc.i4 {OLD_ANSWER} -> {opcode} {NEW_ANSWER}")
        }
        Edit::EntryProbe(hit) => {
            body.insert(0, OpCode::CALL, Operand::Token(Token(hit.0)))
                .map_err(|e| format!("insert: {e}"))?;
            format!("call {COUNTER_TYPE}.Hit at entry")
        }
    };
    let max_stack = body
        .update_max_stack(|token| import.stack_sig(token))
        .map_err(|e| format!("max stack: {e}"))?;
    let bytes = body.encode().map_err(|e| format!("encode: {e}"))?;

    // Look at the bytes as the JIT will: decoded afresh, with the clauses
    // read from the new EH section. The summary says how far their
    // boundaries moved (by the size of what was inserted before them).
    let check = MethodBody::decode(&bytes).map_err(|e| format!("re-decode: {e}"))?;
    let new_code = check.header().code_size();
    let new_clauses = clause_offsets(&check);
    if new_clauses.len() != old_clauses.len() {
        return Err(format!(
            "{} clause boundaries became {}",
            old_clauses.len(),
            new_clauses.len()
        ));
    }
    let mut shifts: Vec<i64> = old_clauses
        .iter()
        .zip(&new_clauses)
        .map(|(&old, &new)| i64::from(new) - i64::from(old))
        .collect();
    shifts.sort_unstable();
    shifts.dedup();
    let mut summary = format!(
        "{what}; code {old_code} -> {new_code} bytes; max stack {max_stack}; EH clauses: {}",
        check.clauses().len()
    );
    if !shifts.is_empty() {
        let shifts: Vec<String> = shifts.iter().map(|s| format!("{s:+}")).collect();
        let _ = write!(summary, ", boundaries moved by {}", shifts.join(" "));
    }
    Ok(Rewritten {
        bytes,
        summary,
        listings: before.map(|before| (before, check.to_string())),
    })
}

/// Builds the new IL of `method` for `edit`, logging what it did.
fn new_body(
    info: &ProfilerInfo,
    module: ModuleID,
    method: mdMethodDef,
    edit: Edit,
    verbose: bool,
) -> std::result::Result<(Vec<u8>, String), String> {
    let import = info
        .module_metadata(module)
        .map_err(|e| format!("no metadata ({e})"))?
        .ok_or("no metadata")?;
    let name = import
        .method_name(method)
        .map_or_else(|_| format!("{method:?}"), |n| n.to_string());
    let original = info
        .il_function_body(module, method)
        .map_err(|e| format!("{name}: GetILFunctionBody failed ({e})"))?;
    let rewritten =
        rewrite(&original, edit, &import, verbose).map_err(|e| format!("{name}: {e}"))?;
    if let Some((before, after)) = &rewritten.listings {
        log(format_args!(
            "{name} before:\n{before}il_rewriter: {name} after:\n{}",
            after.trim_end()
        ));
    }
    Ok((rewritten.bytes, format!("{name}: {}", rewritten.summary)))
}

impl IlRewriter {
    /// The targets of `module` (looked up once per module).
    fn targets_for(&self, info: &ProfilerInfo, module: ModuleID) -> Option<Targets> {
        let mut modules = lock(&self.modules);
        if let Some(known) = modules.get(&module) {
            return *known;
        }
        let found = match info.module_metadata(module) {
            Ok(Some(import)) => match find_targets(module, &import) {
                Ok(found) => found,
                Err(error) => {
                    log(format_args!(
                        "module {module:?} defines {PROGRAM_TYPE} but {error}"
                    ));
                    None
                }
            },
            Ok(None) | Err(_) => None,
        };
        if let Some(targets) = found {
            if self.shared.targets.set(targets).is_err() {
                let first = self.shared.targets.get().map(|t| t.module);
                log(format_args!(
                    "{PROGRAM_TYPE} is also in module {module:?}; ReJIT uses {first:?}"
                ));
            }
        }
        modules.insert(module, found);
        found
    }

    /// Starts the thread that drives the ReJIT handshake.
    fn start_rejit_thread(&self, info: &ProfilerInfo, dir: &Path) {
        let driver = RejitDriver {
            info: info.clone(),
            shared: Arc::clone(&self.shared),
            dir: dir.to_path_buf(),
            timeout: self.timeout,
            verbose: self.verbose,
            inlined: self.rejit_inlined,
            with_inliners: self.with_inliners,
        };
        let spawned = thread::Builder::new()
            .name("il_rewriter-rejit".into())
            .spawn(move || driver.run());
        if let Err(error) = spawned {
            log(format_args!("cannot start the ReJIT thread: {error}"));
        }
    }
}

/// The profiler's own thread: the runtime wants `RequestReJIT` and
/// `RequestRevert` called from such a thread, not from a callback.
struct RejitDriver {
    info: ProfilerInfo,
    shared: Arc<Shared>,
    /// The target is `InlinedAnswer` (else `Answer`).
    inlined: bool,
    /// Ask with `RequestReJITWithInliners` and these flags.
    with_inliners: Option<u32>,
    dir: PathBuf,
    timeout: Duration,
    verbose: bool,
}

impl RejitDriver {
    fn run(&self) {
        if !self.wait_for("ready-1") {
            return;
        }
        if let Some((module, answer)) = self.answer() {
            match new_body(&self.info, module, answer, Edit::Answer, self.verbose) {
                Ok((bytes, summary)) => {
                    // SAFETY: as in `jit_compilation_started`: `Answer`'s
                    // own IL with one constant replaced, re-encoded and
                    // checked.
                    unsafe { self.shared.rejit.insert(module, answer, bytes, summary) };
                    let (call, requested) = if let Some(flags) = self.with_inliners {
                        let flags = COR_PRF_REJIT_FLAGS(flags);
                        let asked = self
                            .shared
                            .rejit
                            .request_rejit_with_inliners(&self.info, flags);
                        ("RequestReJITWithInliners", asked)
                    } else {
                        ("RequestReJIT", self.shared.rejit.request_rejit(&self.info))
                    };
                    let name = self.target_name();
                    match requested {
                        Ok(_) => log(format_args!("{call}({name}) succeeded")),
                        Err(error) => log(format_args!("{call}({name}) failed: {}", error.code())),
                    }
                }
                Err(error) => log(format_args!("ReJIT left Answer unchanged: {error}")),
            }
        }
        self.create("go-2");
        if !self.wait_for("ready-2") {
            return;
        }
        if let Some(answer) = self.answer() {
            match self.info.request_revert(&[answer]) {
                Ok(statuses) if statuses.iter().all(|s| s.is_ok()) => log(format_args!(
                    "RequestRevert({}) succeeded",
                    self.target_name()
                )),
                Ok(statuses) => log(format_args!(
                    "RequestRevert({}) failed for the method: {:?}",
                    self.target_name(),
                    statuses
                )),
                Err(error) => log(format_args!(
                    "RequestRevert({}) failed: {error}",
                    self.target_name()
                )),
            }
        }
        self.create("go-3");
    }

    /// The ReJIT target's name.
    fn target_name(&self) -> &'static str {
        if self.inlined {
            "InlinedAnswer"
        } else {
            "Answer"
        }
    }

    /// The ReJIT target's (`Answer`'s, or `InlinedAnswer`'s) module and
    /// token, unless the runtime has shut down or the module was never
    /// seen.
    fn answer(&self) -> Option<(ModuleID, mdMethodDef)> {
        if self.shared.shut_down.is_raised() {
            log(format_args!("the runtime has shut down; no ReJIT"));
            return None;
        }
        match self.shared.targets.get() {
            Some(targets) if self.inlined => Some((targets.module, targets.inlined_answer)),
            Some(targets) => Some((targets.module, targets.answer)),
            None => {
                log(format_args!(
                    "no module defining {PROGRAM_TYPE} was JIT-compiled; no ReJIT"
                ));
                None
            }
        }
    }

    /// Waits (bounded) until `dir/name` exists.
    fn wait_for(&self, name: &str) -> bool {
        let path = self.dir.join(name);
        let waited = self
            .shared
            .shut_down
            .wait_until(self.timeout, POLL, || path.exists());
        if waited == Waited::TimedOut {
            log(format_args!(
                "gave up waiting for {} after {:.1}s",
                path.display(),
                self.timeout.as_secs_f64()
            ));
        }
        waited == Waited::Ready
    }

    /// Creates `dir/name`: the program's signal to go on.
    fn create(&self, name: &str) {
        let path = self.dir.join(name);
        if let Err(error) = File::create(&path) {
            log(format_args!("cannot create {}: {error}", path.display()));
        }
    }
}

impl Profiler for IlRewriter {
    fn initialize(&self, info: &ProfilerInfo) -> Result<()> {
        let mut events = COR_PRF_MONITOR_JIT_COMPILATION;
        if !self.allow_inlining {
            // No caller may inline a method before its IL is rewritten.
            events |= COR_PRF_DISABLE_INLINING;
        }
        if self.sync_dir.is_some() {
            // Only at startup: ReJIT cannot be enabled later.
            events |= COR_PRF_ENABLE_REJIT;
        }
        info.set_event_mask(events)?;
        match &self.sync_dir {
            Some(dir) => {
                log(format_args!("ReJIT mode, sync dir {}", dir.display()));
                self.start_rejit_thread(info, dir);
            }
            None => log(format_args!("rewriting at first JIT")),
        }
        Ok(())
    }

    fn jit_compilation_started(
        &self,
        info: &ProfilerInfo,
        function: FunctionID,
        _is_safe_to_block: bool,
    ) -> Result<()> {
        let Ok(function) = info.function_info(function) else {
            return Ok(());
        };
        let Some(targets) = self.targets_for(info, function.module) else {
            return Ok(());
        };
        let method = function.token;
        let edit = if method == targets.answer && self.sync_dir.is_none() {
            Edit::Answer
        } else if method == targets.work || method == targets.guarded || method == targets.hot_loop
        {
            Edit::EntryProbe(targets.hit)
        } else {
            if method == targets.answer {
                log(format_args!("Answer JIT-compiled as it is (ReJIT mode)"));
            }
            return Ok(());
        };
        if self.every_jit {
            // Asks at every compilation; the facade sets a method's IL once
            // and refuses the rest (see ProfilerInfo::set_il_function_body).
            log(format_args!(
                "{method:?} JIT-compiled; IL set before: {}",
                info.il_function_body_was_set(function.module, method)
            ));
        } else if !lock(&self.rewritten).insert((function.module, method)) {
            // Tier-1 recompilation: the runtime compiles the IL installed
            // for tier 0 again, so there is nothing to do.
            log(format_args!(
                "{method:?} JIT-compiled again: it keeps the IL installed before"
            ));
            return Ok(());
        }
        match new_body(info, function.module, method, edit, self.verbose) {
            Ok((bytes, summary)) => {
                // SAFETY: `bytes` is the method's own IL, decoded, edited
                // with the codec (branches and EH clauses follow labels),
                // given a recomputed max stack, encoded and decoded again;
                // the only new token is `Counter.Hit`, a MethodDef of this
                // very module with signature `static void ()`.
                match unsafe { info.set_il_function_body(function.module, method, &bytes) } {
                    Ok(()) => log(format_args!("rewrote {summary}")),
                    Err(error) => log(format_args!("SetILFunctionBody failed: {error}")),
                }
            }
            Err(error) => {
                log(format_args!("left unchanged: {error}"));
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
        match self.shared.rejit.set_il(module, method, control.into()) {
            Some((summary, Ok(()))) => log(format_args!("ReJIT IL set: {summary}")),
            Some((_, Err(error))) => log(format_args!("ReJIT SetILFunctionBody failed: {error}")),
            None => {}
        }
        Ok(())
    }

    fn rejit_compilation_finished(
        &self,
        info: &ProfilerInfo,
        function: FunctionID,
        _rejit: ReJITID,
        status: HRESULT,
        _is_safe_to_block: bool,
    ) -> Result<()> {
        let name = info
            .function_name(function)
            .map_or_else(|_| format!("{function:?}"), |n| n.to_string());
        log(format_args!("ReJIT compiled {name}: {status}"));
        Ok(())
    }

    fn rejit_error(
        &self,
        _info: &ProfilerInfo,
        module: ModuleID,
        method: mdMethodDef,
        _function: FunctionID,
        status: HRESULT,
    ) -> Result<()> {
        log(format_args!(
            "ReJIT error for {method:?} in module {module:?}: {status}"
        ));
        Ok(())
    }

    fn shutdown(&self, _info: &ProfilerInfo) -> Result<()> {
        self.shared.shut_down.raise();
        log(format_args!("shutdown"));
        Ok(())
    }
}

corprof::profiler!(IlRewriter, "6C1F8E0B-2D4A-4B7C-9E35-A1D0F47B8C26");
