//! An IL rewriter: changes what methods of the `Rewrite` test program do by
//! editing their IL before the JIT compiles them.
//!
//! Targets are found by name and signature in the module that defines
//! `E2E.Rewrite.Program` (see `tests/e2e/programs/Rewrite/Program.cs`):
//!
//! * `int Program.Answer()` returns 42 instead of 41 (its `ldc.i4.s 41`
//!   becomes `ldc.i4.s 42`: `IlEdit::ReplaceConstant`);
//! * `int Program.Work(int)`, `int Program.Guarded(int)` and
//!   `long Program.HotLoop(int)` get a `call void Counter.Hit()` at entry
//!   (`IlEdit::CallAtEntry`). `Guarded` has try/catch/finally: its
//!   exception clauses move with the instructions.
//!
//! Each edit is made and installed by the library at the method's first
//! JIT compilation (`IlEdit::install`: decode, edit, recompute max stack,
//! encode, check, `SetILFunctionBody`), with no `unsafe` here. A method is
//! rewritten once: tier 1 (and on .NET 7+ on-stack replacement) compiles
//! the IL installed first again (`ProfilerInfo::il_function_body_was_set`).
//!
//! The `Rewrite` program is built for the runtime the tests provision
//! (10.0.15 by default, which the SDK's own runtime may predate): run it
//! with that runtime's host, from the repository's root:
//!
//! ```sh
//! bash scripts/provision/provision-dotnet.sh   # once: .cache/dotnet, .cache/e2e/10.0
//! cargo build --example il_rewriter
//! CORECLR_ENABLE_PROFILING=1 \
//! CORECLR_PROFILER={6C1F8E0B-2D4A-4B7C-9E35-A1D0F47B8C26} \
//! CORECLR_PROFILER_PATH=$PWD/target/debug/examples/libil_rewriter.so \
//! .cache/dotnet/dotnet .cache/e2e/10.0/bin/Rewrite/Rewrite.dll
//! ```
//!
//! It prints `answer=42` and `hits=...` where the program alone prints
//! `answer=41` and `hits=0`, and exits 43.
//!
//! Messages go to stderr as `il_rewriter: ...`. The process runs with
//! `COR_PRF_DISABLE_INLINING` (which in CoreCLR 3.1 also keeps methods from
//! tiering up) unless `IL_REWRITER_ALLOW_INLINING=1`: the targets are
//! `NoInlining` anyway. ReJIT of a running method is the `live_patch`
//! example's.

use std::collections::HashMap;
use std::sync::Mutex;

use corprof::cil::{MethodSig, TypeSig};
use corprof::facade::{MetadataImport, Profiler, ProfilerInfo, Result};
use corprof::instrument::IlEdit;
use corprof::metadata::mdMethodDef;
use corprof::profiling::{
    FunctionID, ModuleID, COR_PRF_DISABLE_INLINING, COR_PRF_MONITOR_JIT_COMPILATION,
};

fn log(text: std::fmt::Arguments<'_>) {
    use std::io::Write as _;
    let _ = writeln!(std::io::stderr(), "il_rewriter: {text}"); // never panics
}

/// The edit of each target method of a module.
type Edits = HashMap<mdMethodDef, IlEdit>;

/// The targets of a module; empty when it does not define the program.
fn find_edits(import: &MetadataImport) -> Result<Edits> {
    let Ok(program) = import.find_type_def("E2E.Rewrite.Program", None) else {
        return Ok(Edits::new());
    };
    let counter = import.find_type_def("E2E.Rewrite.Counter", None)?;
    let find = |class, name, ret, params| {
        let sig = MethodSig::static_method(ret, params);
        import
            .find_method_sig(class, name, &sig)
            .map_err(|e| e.context(name))
    };
    let hit = IlEdit::CallAtEntry(find(counter, "Hit", TypeSig::Void, vec![])?);
    let answer = IlEdit::ReplaceConstant { old: 41, new: 42 };
    Ok(Edits::from([
        (find(program, "Answer", TypeSig::I4, vec![])?, answer),
        (find(program, "Work", TypeSig::I4, vec![TypeSig::I4])?, hit),
        (
            find(program, "Guarded", TypeSig::I4, vec![TypeSig::I4])?,
            hit,
        ),
        (
            find(program, "HotLoop", TypeSig::I8, vec![TypeSig::I4])?,
            hit,
        ),
    ]))
}

#[derive(Default)]
struct IlRewriter {
    /// The edits of every module seen so far (looked up once per module).
    modules: Mutex<HashMap<ModuleID, Edits>>,
}

impl IlRewriter {
    fn edit_of(
        &self,
        info: &ProfilerInfo,
        module: ModuleID,
        method: mdMethodDef,
    ) -> Option<IlEdit> {
        let mut modules = self.modules.lock().unwrap_or_else(|e| e.into_inner());
        let edits = modules.entry(module).or_insert_with(|| {
            let import = info.module_metadata(module).ok().flatten();
            let found = import.map_or(Ok(Edits::new()), |import| find_edits(&import));
            found.unwrap_or_else(|e| {
                log(format_args!(
                    "module {module:?} defines the program but {e}"
                ));
                Edits::new()
            })
        });
        edits.get(&method).copied()
    }
}

impl Profiler for IlRewriter {
    fn initialize(&self, info: &ProfilerInfo) -> Result<()> {
        let mut events = COR_PRF_MONITOR_JIT_COMPILATION;
        if std::env::var("IL_REWRITER_ALLOW_INLINING").as_deref() != Ok("1") {
            // No caller may inline a method before its IL is rewritten.
            events |= COR_PRF_DISABLE_INLINING;
        }
        log(format_args!("rewriting at first JIT"));
        info.add_event_mask(events)
    }

    fn jit_compilation_started(
        &self,
        info: &ProfilerInfo,
        function: FunctionID,
        _: bool,
    ) -> Result<()> {
        let f = info.function_info(function)?;
        let Some(edit) = self.edit_of(info, f.module, f.token) else {
            return Ok(());
        };
        if info.il_function_body_was_set(f.module, f.token) {
            let method = f.token;
            log(format_args!(
                "{method:?} JIT-compiled again: it keeps the IL installed before"
            ));
            return Ok(());
        }
        let name = info.function_name(function)?;
        match edit.install(info, f.module, f.token) {
            Ok(edited) => log(format_args!("rewrote {name}: {edited}")),
            Err(e) => log(format_args!("{name} left unchanged: {e}")),
        }
        Ok(())
    }

    fn shutdown(&self, _info: &ProfilerInfo) -> Result<()> {
        log(format_args!("shutdown"));
        Ok(())
    }
}

corprof::profiler!(IlRewriter, "6C1F8E0B-2D4A-4B7C-9E35-A1D0F47B8C26");
