//! IL rewriting and ReJIT in a running CoreCLR: the `il_rewriter` example
//! loaded into the `Rewrite` program (see docs/e2e.md and docs/cil.md), and
//! for the modes only these tests use (IL listings, the ReJIT handshake,
//! every JIT compilation) the fixture `tests/fixtures/il_rewriter_modes.rs`,
//! which writes the same `il_rewriter: ` lines.
//!
//! The program's output is compared with what it prints without a profiler
//! (`common::expected::REWRITE`), line by line: only the lines fed by the
//! rewritten methods may change, and exactly as intended.

// The real-runtime harness (tests/common/dotnet.rs) is Unix only.
#![cfg(unix)]

mod common;

use common::dotnet::{self, Profiler, RunOutput};
use common::expected::REWRITE;
use std::fs;
use std::path::{Path, PathBuf};

const IL_REWRITER: &str = "6C1F8E0B-2D4A-4B7C-9E35-A1D0F47B8C26";
const EXIT: i32 = 43;

fn il_rewriter() -> Profiler {
    let library = dotnet::build_example("il_rewriter")
        .unwrap_or_else(|error| panic!("building example il_rewriter: {error}"));
    Profiler::new(library, IL_REWRITER)
}

/// The fixture with the test-only modes (same CLSID, same messages).
fn il_rewriter_modes() -> Profiler {
    let library = dotnet::build_example("il_rewriter_modes")
        .unwrap_or_else(|error| panic!("building fixture il_rewriter_modes: {error}"));
    Profiler::new(library, IL_REWRITER)
}

/// An empty directory of this test's own, for the ReJIT handshake files.
fn sync_dir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("e2e_rewrite")
        .join(format!("{name}-{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).expect("create the sync dir");
    dir
}

/// `REWRITE` with `changes` (unprofiled line, profiled line) applied.
fn expected_with(changes: &[(&str, &str)]) -> Vec<String> {
    for (from, _) in changes {
        assert!(REWRITE.contains(from), "{from:?} is not a line of REWRITE");
    }
    REWRITE
        .iter()
        .map(|line| {
            changes
                .iter()
                .find(|(from, _)| from == line)
                .map_or(*line, |(_, to)| *to)
                .to_string()
        })
        .collect()
}

/// Asserts the run's stdout is `expected` line by line, naming the first
/// line that differs.
#[track_caller]
fn assert_lines(run: &RunOutput, expected: &[String]) {
    let lines = run.lines();
    for (i, want) in expected.iter().enumerate() {
        match lines.get(i) {
            Some(got) if got == want => {}
            Some(got) => panic!(
                "stdout line {} is {got:?}, expected {want:?}\n{}",
                i + 1,
                run.describe()
            ),
            None => panic!(
                "stdout ends before line {} ({want:?})\n{}",
                i + 1,
                run.describe()
            ),
        }
    }
    assert_eq!(
        lines.len(),
        expected.len(),
        "extra stdout lines\n{}",
        run.describe()
    );
}

#[track_caller]
fn assert_stderr_has(run: &RunOutput, needle: &str) {
    assert!(
        run.stderr.contains(needle),
        "stderr lacks {needle:?}\n{}",
        run.describe()
    );
}

/// No crash, the program's own exit code, and no error from the profiler.
#[track_caller]
fn assert_clean(run: &RunOutput) {
    assert!(!run.crashed(), "the process crashed\n{}", run.describe());
    run.assert_exit(EXIT);
    for bad in [
        "failed",
        "left unchanged",
        "ReJIT error",
        "gave up",
        "cannot",
    ] {
        assert!(
            !run.stderr
                .lines()
                .any(|l| l.starts_with("il_rewriter: ") && l.contains(bad)),
            "the profiler reported {bad:?}\n{}",
            run.describe()
        );
    }
}

/// The lines `Answer`, `Work` and `Guarded` feed, as rewritten at first JIT:
/// `answer=42`, `hits=5`, and `Guarded`'s lines unchanged.
fn rewritten_output() -> Vec<String> {
    expected_with(&[("answer=41", "answer=42"), ("hits=0", "hits=5")])
}

#[track_caller]
fn assert_rewrites_logged(run: &RunOutput) {
    assert_stderr_has(
        run,
        "il_rewriter: rewrote E2E.Rewrite.Program.Answer: ldc.i4.s 41 -> ldc.i4.s 42;",
    );
    assert_stderr_has(
        run,
        "il_rewriter: rewrote E2E.Rewrite.Program.Work: call E2E.Rewrite.Counter.Hit at entry; code 4 -> 9 bytes;",
    );
    // The try/catch/finally: two clauses, every boundary 5 bytes (the
    // `call`) further, checked by the profiler on the re-decoded bytes.
    assert_stderr_has(
        run,
        "il_rewriter: rewrote E2E.Rewrite.Program.Guarded: call E2E.Rewrite.Counter.Hit at entry;",
    );
    assert_stderr_has(run, "EH clauses: 2, boundaries moved by +5\n");
}

#[test]
fn without_a_profiler_rewrite_prints_the_expected_lines() {
    let runtime = dotnet::runtime();
    let run = runtime.run("Rewrite", &[], None);
    run.assert_exit(EXIT).assert_stdout(REWRITE);
}

#[test]
fn rewrites_answer_work_and_guarded_at_first_jit() {
    let runtime = dotnet::runtime();
    let profiler = il_rewriter().with_runtime_setting("TieredCompilation", "0");
    let run = runtime.run("Rewrite", &[], Some(&profiler));
    assert_clean(&run);
    assert_lines(&run, &rewritten_output());
    assert_rewrites_logged(&run);
    // Each target rewritten exactly once.
    for method in ["Answer", "Work", "Guarded"] {
        let prefix = format!("il_rewriter: rewrote E2E.Rewrite.Program.{method}:");
        let count = run
            .stderr
            .lines()
            .filter(|l| l.starts_with(&prefix))
            .count();
        assert_eq!(count, 1, "{method} rewritten once\n{}", run.describe());
    }
    assert_stderr_has(&run, "il_rewriter: shutdown");
}

#[test]
fn guarded_behaves_exactly_as_without_the_profiler() {
    let runtime = dotnet::runtime();
    let plain = runtime.run("Rewrite", &[], None);
    plain.assert_exit(EXIT);
    let profiler = il_rewriter_modes()
        .with_runtime_setting("TieredCompilation", "0")
        .with_env("IL_REWRITER_VERBOSE", "1");
    let run = runtime.run("Rewrite", &[], Some(&profiler));
    assert_clean(&run);
    let guarded = |out: &RunOutput| -> Vec<String> {
        out.lines()
            .into_iter()
            .filter(|l| l.starts_with("guarded("))
            .map(str::to_string)
            .collect()
    };
    assert_eq!(guarded(&run), guarded(&plain), "{}", run.describe());
    assert_eq!(guarded(&run).len(), 7, "{}", plain.describe());
    // The verbose listing shows the probe first and both clauses moved.
    assert_stderr_has(
        &run,
        "E2E.Rewrite.Program.Guarded after:\nIL_0000: call 0x06",
    );
    assert_stderr_has(&run, ".try IL_0005 to ");
    assert_rewrites_logged(&run);
}

#[test]
fn tiered_compilation_and_inlining_left_on_give_the_same_output() {
    // (No method of this run is hot enough for tier 1; that a rewritten
    // method keeps its new IL when tier 1 compiles it again is
    // `with_tiering_on_a_hot_method_is_jit_compiled_again`.)
    let runtime = dotnet::runtime();
    let profiler = il_rewriter().with_env("IL_REWRITER_ALLOW_INLINING", "1");
    let run = runtime.run("Rewrite", &[], Some(&profiler));
    assert_clean(&run);
    assert_lines(&run, &rewritten_output());
    assert_rewrites_logged(&run);
}

fn rejit_run(name: &str, profiler: Profiler) -> (RunOutput, PathBuf) {
    let runtime = dotnet::runtime();
    let dir = sync_dir(name);
    let dir_text = dir.to_str().expect("a UTF-8 target dir").to_string();
    let profiler = profiler
        .with_env("IL_REWRITER_SYNC_DIR", &dir_text)
        .with_env("IL_REWRITER_TIMEOUT_MS", "30000");
    let run = runtime.run(
        "Rewrite",
        &["--rejit", "--sync-dir", &dir_text, "--timeout-ms", "30000"],
        Some(&profiler),
    );
    (run, dir)
}

const REJIT_OUTPUT: &[&str] = &[
    "rejit: phase 1 answer=41",
    "rejit: phase 2 answer=42",
    "rejit: phase 3 answer=41",
    "done",
];

#[track_caller]
fn assert_rejit_run(run: &RunOutput, dir: &Path) {
    assert_clean(run);
    run.assert_stdout(REJIT_OUTPUT);
    for file in ["ready-1", "go-2", "ready-2", "go-3"] {
        assert!(dir.join(file).exists(), "no {file}\n{}", run.describe());
    }
    let stderr = &run.stderr;
    let at = |needle: &str| {
        stderr
            .find(needle)
            .unwrap_or_else(|| panic!("stderr lacks {needle:?}\n{}", run.describe()))
    };
    // In this order: Answer first compiled as it is, ReJIT requested, its
    // new IL supplied and compiled, then the revert.
    let order = [
        at("il_rewriter: ReJIT mode, sync dir "),
        at("il_rewriter: Answer JIT-compiled as it is (ReJIT mode)"),
        at("il_rewriter: RequestReJIT(Answer) succeeded"),
        at("il_rewriter: ReJIT IL set: E2E.Rewrite.Program.Answer: ldc.i4.s 41 -> ldc.i4.s 42;"),
        at("il_rewriter: ReJIT compiled E2E.Rewrite.Program.Answer: S_OK"),
        at("il_rewriter: RequestRevert(Answer) succeeded"),
    ];
    assert!(
        order.windows(2).all(|w| w[0] < w[1]),
        "events out of order\n{}",
        run.describe()
    );
    assert!(
        !stderr.contains("il_rewriter: rewrote E2E.Rewrite.Program.Answer"),
        "Answer must not be rewritten at its first JIT in ReJIT mode\n{}",
        run.describe()
    );
}

/// How often `Answer` was JIT-compiled (not ReJIT-compiled) in ReJIT mode.
fn answer_jit_count(run: &RunOutput) -> usize {
    run.stderr
        .lines()
        .filter(|l| *l == "il_rewriter: Answer JIT-compiled as it is (ReJIT mode)")
        .count()
}

#[test]
fn rejit_makes_answer_42_in_phase_2_and_revert_41_in_phase_3() {
    let profiler = il_rewriter_modes().with_runtime_setting("TieredCompilation", "0");
    let (run, dir) = rejit_run("rejit", profiler);
    assert_rejit_run(&run, &dir);
    // The precondition: tiering was off, so the hot `Answer` was
    // JIT-compiled once (the ReJIT compilations are separate callbacks).
    assert_eq!(answer_jit_count(&run), 1, "{}", run.describe());
}

#[test]
fn rejit_and_revert_with_tiered_compilation_and_inlining_left_on() {
    let profiler = il_rewriter_modes().with_env("IL_REWRITER_ALLOW_INLINING", "1");
    let (run, dir) = rejit_run("rejit-tiered", profiler);
    assert_rejit_run(&run, &dir);
    // No tier-1 compilation is expected here: the ReJIT request follows
    // phase 1 at once, and the ReJIT version replaces the tier-0 code. That
    // tiering is on by default in these runs is what
    // `with_tiering_on_a_hot_method_is_jit_compiled_again` shows.
}

/// `InlinedAnswer` is inlined into `CallsInlined` (inlining on, tiering
/// off: `CallsInlined` is compiled optimized at once). Re-JIT-compiling
/// `InlinedAnswer` alone (`RequestReJIT`) leaves the caller's inlined copy
/// returning 41; `RequestReJITWithInliners` (`ICorProfilerInfo10`) compiles
/// `CallsInlined` again too and the program sees 42; it refuses flags
/// without `COR_PRF_REJIT_BLOCK_INLINING` (`E_INVALIDARG`). The same on 3.1
/// and 8.0.
#[test]
fn rejit_with_inliners_reaches_the_callers_that_inlined_the_method() {
    let runtime = dotnet::runtime();
    let run_with = |name: &str, flags: Option<&str>| {
        let dir = sync_dir(name);
        let dir_text = dir.to_str().unwrap().to_string();
        let mut profiler = il_rewriter_modes()
            .with_runtime_setting("TieredCompilation", "0")
            .with_env("IL_REWRITER_ALLOW_INLINING", "1")
            .with_env("IL_REWRITER_REJIT_TARGET", "InlinedAnswer")
            .with_env("IL_REWRITER_SYNC_DIR", &dir_text)
            .with_env("IL_REWRITER_TIMEOUT_MS", "30000");
        if let Some(flags) = flags {
            profiler = profiler.with_env("IL_REWRITER_WITH_INLINERS", flags);
        }
        let run = runtime.run(
            "Rewrite",
            &[
                "--rejit",
                "--sync-dir",
                &dir_text,
                "--timeout-ms",
                "30000",
                "--target",
                "inlined",
            ],
            Some(&profiler),
        );
        run.assert_exit(43);
        run
    };
    let phases = |second: &str| {
        [
            "rejit: phase 1 answer=41".to_string(),
            format!("rejit: phase 2 answer={second}"),
            "rejit: phase 3 answer=41".to_string(),
            "done".to_string(),
        ]
    };
    let lines = |run: &RunOutput| run.stdout.lines().map(str::to_string).collect::<Vec<_>>();

    let plain = run_with("rejit-inlined-plain", None);
    assert_clean(&plain);
    assert!(
        plain
            .stderr
            .contains("il_rewriter: RequestReJIT(InlinedAnswer) succeeded"),
        "{}",
        plain.describe()
    );
    assert_eq!(
        lines(&plain),
        phases("41"),
        "the inlined copy keeps 41\n{}",
        plain.describe()
    );

    let with = run_with("rejit-inlined-with", Some("1"));
    assert_clean(&with);
    assert!(
        with.stderr
            .contains("il_rewriter: RequestReJITWithInliners(InlinedAnswer) succeeded"),
        "{}",
        with.describe()
    );
    assert!(
        with.stderr
            .contains("il_rewriter: ReJIT compiled E2E.Rewrite.Program.CallsInlined: S_OK"),
        "the inliner is compiled again\n{}",
        with.describe()
    );
    assert_eq!(lines(&with), phases("42"), "{}", with.describe());

    let refused = run_with("rejit-inlined-no-flags", Some("0"));
    assert!(
        refused
            .stderr
            .contains("il_rewriter: RequestReJITWithInliners(InlinedAnswer) failed: E_INVALIDARG"),
        "{}",
        refused.describe()
    );
    assert_eq!(lines(&refused), phases("41"), "{}", refused.describe());
}

#[test]
fn in_rejit_mode_answer_is_left_for_rejit_and_a_missing_handshake_is_harmless() {
    // The profiler waits for `ready-1`, which a normal run never creates:
    // Answer keeps 41 (it is left for ReJIT), the entry probes still run,
    // and the waiting thread neither blocks the exit nor crashes it.
    let runtime = dotnet::runtime();
    let dir = sync_dir("no-handshake");
    let profiler = il_rewriter_modes()
        .with_runtime_setting("TieredCompilation", "0")
        .with_env("IL_REWRITER_SYNC_DIR", dir.to_str().unwrap())
        .with_env("IL_REWRITER_TIMEOUT_MS", "100");
    let run = runtime.run("Rewrite", &[], Some(&profiler));
    assert!(!run.crashed(), "{}", run.describe());
    run.assert_exit(EXIT);
    assert_lines(&run, &expected_with(&[("hits=0", "hits=5")]));
    assert_stderr_has(
        &run,
        "il_rewriter: Answer JIT-compiled as it is (ReJIT mode)",
    );
    assert!(!dir.join("go-2").exists(), "{}", run.describe());
}

// ---------------------------------------------------------------------------
// Tiered compilation: the setting the tests above depend on takes effect.
// ---------------------------------------------------------------------------

/// Runs `Rewrite --rejit` without a sync dir, so the profiler is in its
/// rewrite-at-first-JIT mode while the program calls `Answer` (NoInlining)
/// 1000 times in each of 3 phases, pausing 300 ms (still calling) between
/// them: hot and long enough for a tier-1 recompilation when tiering is on.
/// Returns the run and how often `Answer` was JIT-compiled again.
fn hot_answer_run(profiler: Profiler) -> (RunOutput, usize) {
    let runtime = dotnet::runtime();
    let run = runtime.run(
        "Rewrite",
        &["--rejit", "--phases", "3", "--pause-ms", "300"],
        Some(&profiler),
    );
    assert_clean(&run);
    // Rewritten at its first JIT, and a tier-1 compilation keeps the new IL.
    run.assert_stdout(&[
        "rejit: phase 1 answer=42",
        "rejit: phase 2 answer=42",
        "rejit: phase 3 answer=42",
        "done",
    ]);
    assert_stderr_has(
        &run,
        "il_rewriter: rewrote E2E.Rewrite.Program.Answer: ldc.i4.s 41 -> ldc.i4.s 42;",
    );
    // Only `Answer` is a rewrite target that this mode calls.
    let again = run
        .stderr
        .lines()
        .filter(|l| {
            l.starts_with("il_rewriter: ")
                && l.ends_with("JIT-compiled again: it keeps the IL installed before")
        })
        .count();
    (run, again)
}

#[test]
fn with_tiering_off_a_hot_method_is_jit_compiled_exactly_once() {
    let profiler = il_rewriter().with_runtime_setting("TieredCompilation", "0");
    let (run, again) = hot_answer_run(profiler);
    assert_eq!(
        again,
        0,
        "COMPlus_TieredCompilation=0 took effect\n{}",
        run.describe()
    );
}

#[test]
fn with_tiering_on_a_hot_method_is_jit_compiled_again() {
    // The control for the test above: the same run is long enough for tier 1.
    let (run, again) = hot_answer_run(il_rewriter());
    assert!(
        again >= 1,
        "Answer was recompiled at tier 1\n{}",
        run.describe()
    );
}

#[test]
fn the_dotnet_prefix_alone_is_ignored_by_net_core_3() {
    // .NET Core 3.1 reads runtime settings only with the `COMPlus_` prefix;
    // `DOTNET_` is read from .NET 5 on.
    let runtime = dotnet::runtime();
    let profiler = il_rewriter().with_env("DOTNET_TieredCompilation", "0");
    let (run, again) = hot_answer_run(profiler);
    if runtime.version.starts_with("3.") {
        assert!(
            again >= 1,
            "tiering stayed on under {}\n{}",
            runtime.version,
            run.describe()
        );
    } else {
        assert_eq!(
            again,
            0,
            "tiering off under {}\n{}",
            runtime.version,
            run.describe()
        );
    }
}

/// The rewrite-once rule with a method that has a hot loop, under the
/// runtime's default tiering (`IL_REWRITER_EVERY_JIT=1`: the fixture asks
/// at every compilation and the facade refuses all but the first).
///
/// On .NET 8 `HotLoop` is compiled at tier 0 with a patchpoint, then again
/// mid-loop by on-stack replacement (and later at tier 1), each time from
/// the IL installed first: every compilation after the first is refused by
/// `ProfilerInfo::set_il_function_body` and the output is the program's.
/// On CoreCLR 3.1 a method with a loop skips tier 0 (`QuickJitForLoops` is
/// off there) and is compiled once.
#[test]
fn a_hot_loop_is_rewritten_once_however_often_the_runtime_compiles_it() {
    let runtime = dotnet::runtime();
    const N: i32 = 3_000_000;
    let total: i64 = (0..N).map(|i| i64::from(i % 7)).sum();
    let profiler = il_rewriter_modes()
        .with_env("IL_REWRITER_ALLOW_INLINING", "1")
        .with_env("IL_REWRITER_EVERY_JIT", "1");
    let run = runtime.run("Rewrite", &["--hot-loop", &N.to_string()], Some(&profiler));
    run.assert_exit(EXIT);
    // The entry probe ran once per call: the IL was set, and set once.
    let expected = [
        format!("hot loop total={total}"),
        format!("hot loop again total={total}"),
        "hits=2".to_string(),
        "done".to_string(),
    ];
    assert_eq!(
        run.stdout.lines().collect::<Vec<_>>(),
        expected,
        "{}",
        run.describe()
    );
    // Only HotLoop is a target that runs in this mode: each line is one of
    // its compilations.
    let compiled = run
        .stderr
        .lines()
        .filter(|l| l.contains("JIT-compiled; IL set before:"))
        .count();
    let rewrote = run
        .stderr
        .lines()
        .filter(|l| l.starts_with("il_rewriter: rewrote E2E.Rewrite.Program.HotLoop:"))
        .count();
    let refused = run
        .stderr
        .lines()
        .filter(|l| {
            l.contains("SetILFunctionBody failed")
                && l.contains("CORPROF_E_UNSUPPORTED_CALL_SEQUENCE")
        })
        .count();
    assert_eq!(rewrote, 1, "HotLoop rewritten once:\n{}", run.stderr);
    assert_eq!(
        refused,
        compiled - 1,
        "every later compilation refused:\n{}",
        run.stderr
    );
    if runtime.major() == 3 {
        assert_eq!(
            compiled, 1,
            "CoreCLR 3.1 compiles HotLoop once:\n{}",
            run.stderr
        );
    } else {
        assert!(
            compiled >= 2,
            ".NET 8 compiles HotLoop again (on-stack replacement):\n{}",
            run.stderr
        );
    }
}
