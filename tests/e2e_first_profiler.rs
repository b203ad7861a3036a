//! The `first_profiler` example (the profiler of issue 54's "Done when":
//! JIT counts per module with the slowest methods, every exception with its
//! type and thrower, `Answer` rewritten from 41 to 42; `?` throughout, no
//! `unsafe`) loaded into the `Rewrite` program, with tiering on (the
//! default): the program's output differs from its unprofiled output by
//! exactly `answer=42`, and stderr has the profiler's lines.

// The real-runtime harness (tests/common/dotnet.rs) is Unix only.
#![cfg(unix)]

mod common;

use common::dotnet::{self, Profiler};
use common::expected::REWRITE;

const FIRST_PROFILER: &str = "84F99E27-F8FB-40B1-AC2B-630BC26DE1C7";
const EXIT: i32 = 43;

#[test]
fn counts_jits_names_exceptions_and_rewrites_answer() {
    let runtime = dotnet::runtime();
    let library = dotnet::build_example("first_profiler")
        .unwrap_or_else(|error| panic!("building example first_profiler: {error}"));
    let profiler = Profiler::new(library, FIRST_PROFILER);
    let run = runtime.run("Rewrite", &[], Some(&profiler));
    let expected: Vec<&str> = REWRITE
        .iter()
        .map(|line| {
            if *line == "answer=41" {
                "answer=42"
            } else {
                line
            }
        })
        .collect();
    assert!(
        REWRITE.contains(&"answer=41"),
        "the program's unprofiled line"
    );
    run.assert_exit(EXIT).assert_stdout(&expected);
    let ours: Vec<&str> = run
        .stderr
        .lines()
        .filter(|l| l.starts_with("first_profiler: "))
        .collect();
    let has = |prefix: &str| ours.iter().filter(|l| l.starts_with(prefix)).count();
    // Rewritten once, whatever tier or OSR compiles it again; the summary
    // names the instruction as it was.
    assert_eq!(
        has("first_profiler: rewrote E2E.Rewrite.Program.Answer: ldc.i4.s 41 -> ldc.i4.s 42;"),
        1,
        "{ours:#?}"
    );
    // `Guarded(-1)` throws once, caught by itself.
    assert_eq!(
        has("first_profiler: exception System.ArgumentException thrown by E2E.Rewrite.Program.Guarded"),
        1,
        "{ours:#?}"
    );
    // The program's module: its methods counted, the slowest named with
    // their time.
    let program = ours
        .iter()
        .find(|l| l.starts_with("first_profiler: jit Rewrite.dll: "))
        .unwrap_or_else(|| panic!("no JIT line for Rewrite.dll: {ours:#?}"));
    let count: u64 = program
        .strip_prefix("first_profiler: jit Rewrite.dll: ")
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{program}"));
    // Main, Normal, Answer, Work, Guarded at least.
    assert!(count >= 5, "{program}");
    assert!(
        program.contains("; slowest: E2E.Rewrite.Program."),
        "{program}"
    );
    assert!(program.ends_with(" us"), "{program}");
    // One line per module (the framework's own appears where the runtime
    // JIT-compiled any of its methods: not on 11.0.0, whose CoreLib code
    // this program runs is all precompiled, measured).
    let mut modules: Vec<&str> = ours
        .iter()
        .filter_map(|l| l.strip_prefix("first_profiler: jit "))
        .filter_map(|l| l.split(':').next())
        .collect();
    let lines = modules.len();
    modules.sort_unstable();
    modules.dedup();
    assert_eq!(modules.len(), lines, "{ours:#?}");
    assert!(
        !run.stderr.contains("callback failed"),
        "{}",
        run.describe()
    );
}
