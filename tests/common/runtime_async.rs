#![allow(dead_code)]
//! The `RuntimeAsync` test program (tests/e2e/roslyn/RuntimeAsync: methods
//! compiled with runtime async, which only .NET 11 runs): its expected
//! output, and a run that checks it (or, on older runtimes, the refusal).

use super::dotnet::{Profiler, RunOutput, Runtime};

/// The methods of `RuntimeAsync` compiled with runtime async, each called
/// [`RUNTIME_ASYNC_CALLS`] times.
pub(crate) const RUNTIME_ASYNC_METHODS: [&str; 6] =
    ["Twice", "Shout", "Pause", "Fail", "Echo", "Tick"];
pub(crate) const RUNTIME_ASYNC_CALLS: usize = 3;

/// What `RuntimeAsync` prints without a profiler on 11.0 (the lines are
/// the C# program's, not the profiler's): each method's
/// MethodImplementationFlags (Async 0x2000 | NoInlining 0x8), then what the
/// calls return.
pub(crate) fn runtime_async_output(calls: usize) -> Vec<String> {
    let mut lines: Vec<String> = RUNTIME_ASYNC_METHODS
        .iter()
        .map(|m| format!("impl {m} 0x2008"))
        .collect();
    for i in 0..calls {
        lines.push(format!("shout=hi{i}!"));
        lines.push(format!("fail=bad{i}"));
        lines.push(format!("echo=e{i}"));
    }
    let sum: usize = (0..calls).map(|i| (i + 20) * 2).sum();
    lines.push(format!("sum={sum} paused={calls} ticks={}", 2 * calls));
    lines
}

/// `RuntimeAsync` with `profiler`, each method called `calls` times: on
/// 11.0 its unprofiled output is checked (the flags prove the methods are
/// runtime-async), the profiled run's too (the same), and the profiled run
/// returned; older runtimes refuse the assembly, with or without a profiler
/// (asserted here), and `None` is returned.
pub(crate) fn run_runtime_async(
    runtime: &Runtime,
    profiler: &Profiler,
    calls: usize,
) -> Option<RunOutput> {
    let n = calls.to_string();
    let plain = runtime.run("RuntimeAsync", &[&n], None);
    let profiled = runtime.run("RuntimeAsync", &[&n], Some(profiler));
    if runtime.major() >= 11 {
        let expected = runtime_async_output(calls);
        let expected: Vec<&str> = expected.iter().map(String::as_str).collect();
        plain.assert_exit(0).assert_stdout(&expected);
        assert!(!profiled.crashed(), "{}", profiled.describe());
        profiled.assert_exit(0).assert_stdout(&expected);
        return Some(profiled);
    }
    // 10.0 loads the assembly and refuses the type whose methods carry
    // MethodImplAttributes.Async; older runtimes do not even have the
    // System.Runtime 10.0.0.0 it references (3.1 finds an older one).
    let refusal = match runtime.major() {
        10 => "System.TypeLoadException: Could not load type 'E2E.RuntimeAsync.Program'",
        3 => {
            "System.IO.FileLoadException: Could not load file or assembly 'System.Runtime, \
             Version=10.0.0.0"
        }
        _ => {
            "System.IO.FileNotFoundException: Could not load file or assembly 'System.Runtime, \
             Version=10.0.0.0"
        }
    };
    for run in [&plain, &profiled] {
        assert_eq!(run.signal(), Some(6), "{}", run.describe()); // SIGABRT
        assert!(run.stdout.is_empty(), "{}", run.describe());
        assert!(
            run.stderr
                .contains(&format!("Unhandled exception. {refusal}")),
            "runtime {}: {}",
            runtime.major(),
            run.describe()
        );
    }
    None
}
