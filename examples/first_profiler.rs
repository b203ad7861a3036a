//! A first profiler, as a new user writes it from the README and the docs:
//! JIT compilations counted per module with the slowest methods, every
//! exception with its type and thrower, and `static int Answer() => 41`
//! rewritten to return 42. `?` throughout, no `unsafe`.
//!
//! Run against the `Rewrite` test program
//! (`tests/e2e/programs/Rewrite/Program.cs`, which prints `answer=42`
//! under this profiler and throws an `ArgumentException` in `Guarded`):
//!
//! ```sh
//! cargo build --example first_profiler
//! CORECLR_ENABLE_PROFILING=1 \
//! CORECLR_PROFILER={84F99E27-F8FB-40B1-AC2B-630BC26DE1C7} \
//! CORECLR_PROFILER_PATH=$PWD/target/debug/examples/libfirst_profiler.so \
//! dotnet Rewrite.dll
//! ```
//!
//! It writes `first_profiler: ...` lines to stderr: one per exception and
//! per rewrite, and at shutdown one per module with its JIT count and its
//! three slowest methods. The tests are `tests/e2e_first_profiler.rs`.

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use corprof::cil::{MethodSig, TypeSig};
use corprof::facade::{CallbackObject, Profiler, ProfilerInfo, Result, StackFrame};
use corprof::instrument::IlEdit;
use corprof::metadata::mdMethodDef;
use corprof::profiling::{
    FunctionID, ModuleID, ThreadID, COR_PRF_DISABLE_INLINING, COR_PRF_ENABLE_STACK_SNAPSHOT,
    COR_PRF_MONITOR_EXCEPTIONS, COR_PRF_MONITOR_JIT_COMPILATION, COR_PRF_MONITOR_MODULE_LOADS,
};
use corprof::HRESULT;

fn log(text: std::fmt::Arguments<'_>) {
    use std::io::Write as _;
    let _ = writeln!(std::io::stderr(), "first_profiler: {text}"); // never panics
}

/// Per module: its JIT compilations, and each method's longest.
type Jits = HashMap<ModuleID, (u64, HashMap<FunctionID, Duration>)>;

#[derive(Default)]
struct FirstProfiler {
    /// The compilations under way: when each started.
    started: Mutex<HashMap<FunctionID, Instant>>,
    jits: Mutex<Jits>,
    /// `Program.Answer` of each module that defines it (looked up once, when
    /// the module loads, not at every JIT).
    answers: Mutex<HashSet<(ModuleID, mdMethodDef)>>,
}

impl Profiler for FirstProfiler {
    fn initialize(&self, info: &ProfilerInfo) -> Result<()> {
        info.add_event_mask(
            COR_PRF_MONITOR_JIT_COMPILATION
                | COR_PRF_MONITOR_MODULE_LOADS
                | COR_PRF_MONITOR_EXCEPTIONS
                | COR_PRF_ENABLE_STACK_SNAPSHOT
                // No caller inlines `Answer` before its IL is rewritten.
                | COR_PRF_DISABLE_INLINING,
        )
    }

    fn module_load_finished(
        &self,
        info: &ProfilerInfo,
        module: ModuleID,
        _: HRESULT,
    ) -> Result<()> {
        let Some(import) = info.module_metadata(module)? else {
            return Ok(()); // a dynamic module
        };
        let Ok(program) = import.find_type_def("E2E.Rewrite.Program", None) else {
            return Ok(()); // not the program's module
        };
        let answer = MethodSig::static_method(TypeSig::I4, vec![]);
        let method = import.find_method_sig(program, "Answer", &answer)?;
        self.answers.lock().unwrap().insert((module, method));
        Ok(())
    }

    fn jit_compilation_started(
        &self,
        info: &ProfilerInfo,
        function: FunctionID,
        _: bool,
    ) -> Result<()> {
        self.started
            .lock()
            .unwrap()
            .insert(function, Instant::now());
        let f = info.function_info(function)?;
        let rewrite = self.answers.lock().unwrap().contains(&(f.module, f.token));
        // Once: tier 1 and OSR compile the IL installed first again.
        if rewrite && !info.il_function_body_was_set(f.module, f.token) {
            let edited =
                IlEdit::ReplaceConstant { old: 41, new: 42 }.install(info, f.module, f.token)?;
            log(format_args!(
                "rewrote {}: {edited}",
                info.function_name(function)?
            ));
        }
        Ok(())
    }

    fn jit_compilation_finished(
        &self,
        info: &ProfilerInfo,
        function: FunctionID,
        _: HRESULT,
        _: bool,
    ) -> Result<()> {
        let Some(start) = self.started.lock().unwrap().remove(&function) else {
            return Ok(());
        };
        let took = start.elapsed();
        let module = info.function_info(function)?.module;
        let mut jits = self.jits.lock().unwrap();
        let (count, slowest) = jits.entry(module).or_default();
        *count += 1;
        let slowest = slowest.entry(function).or_default();
        *slowest = (*slowest).max(took);
        Ok(())
    }

    fn exception_thrown(&self, info: &ProfilerInfo, thrown: CallbackObject<'_>) -> Result<()> {
        let type_name = info.class_name(thrown.class()?)?;
        // The thrower: the innermost managed frame of this thread.
        let mut thrower = None;
        info.stack_snapshot(ThreadID::NULL, |frame| {
            if let StackFrame::Managed { function, .. } = frame {
                thrower = Some(function);
            }
            thrower.is_none() // on until the first managed frame
        })?;
        let thrower = match thrower {
            Some(function) => info.function_name(function)?.to_string(),
            None => "native code".to_string(),
        };
        log(format_args!("exception {type_name} thrown by {thrower}"));
        Ok(())
    }

    fn shutdown(&self, info: &ProfilerInfo) -> Result<()> {
        for (module, (count, slowest)) in self.jits.lock().unwrap().iter() {
            let path = info.module_info(*module)?.path;
            let name = path.rsplit(['/', '\\']).next().unwrap_or(&path).to_string();
            let mut slowest: Vec<_> = slowest.iter().collect();
            slowest.sort_by(|a, b| b.1.cmp(a.1));
            let top = slowest.iter().take(3).map(|(function, took)| {
                Ok(format!(
                    "{} {} us",
                    info.function_name(**function)?,
                    took.as_micros()
                ))
            });
            let top = top.collect::<Result<Vec<_>>>()?.join(", ");
            log(format_args!("jit {name}: {count} methods; slowest: {top}"));
        }
        Ok(())
    }
}

corprof::profiler!(FirstProfiler, "84F99E27-F8FB-40B1-AC2B-630BC26DE1C7");
