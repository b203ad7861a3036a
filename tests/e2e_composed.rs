//! The `composed` example in a running CoreCLR: one profiler made of the
//! sampler, CallTarget and a JIT log of its own (a tuple of parts), run on
//! the `CallTarget` program. Each part must do its job as it does alone:
//! the program's output and exit code are those of an unprofiled run,
//! `Program::Add` is wrapped and its probes run, every method compiled is
//! logged, and the sampler writes its summary with the rate asked for.
//! The parts' event masks merge: on .NET 5+ the sampler's allocations come
//! from its EventPipe session (a high flag) while CallTarget's JIT events
//! (low flags) keep working.

// The real-runtime harness (tests/common/dotnet.rs) is Unix only.
#![cfg(unix)]

mod common;

use common::dotnet::{self, Profiler};
use common::expected;
use common::readers;
use std::fs;
use std::path::Path;

const COMPOSED: &str = "5C0B7E3A-9D41-4E2F-8A6B-1F3C2D4E5A69";
const EXIT: i32 = 44;
/// What `CallTarget` prints without a profiler.
const OUTPUT: &[&str] = expected::CALL_TARGET;

#[test]
fn samples_wraps_and_logs_jit_compilations_in_one_profiler() {
    let runtime = dotnet::runtime();
    let helper = runtime
        .programs_dir
        .join("CallTargetProbe")
        .join("CallTargetProbe.dll");
    assert!(helper.is_file(), "no helper at {}", helper.display());
    let helper = runtime.program_path(&helper);
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("e2e_composed")
        .join(format!("{}-{}", runtime.major(), std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    let library = dotnet::build_example("composed")
        .unwrap_or_else(|error| panic!("building example composed: {error}"));
    let profiler = Profiler::new(library, COMPOSED)
        .with_env("COMPlus_TieredCompilation", "0")
        .with_env(
            "CORPROF_CALLTARGET",
            "CallTarget!E2E.CallTarget.Program::Add",
        )
        .with_env("CORPROF_CALLTARGET_HELPER", helper.as_str())
        .with_env("DOTNET_STARTUP_HOOKS", helper.as_str())
        .with_env("CORPROF_SAMPLER_HZ", "1000")
        .with_env("CORPROF_SAMPLER_DIR", dir.to_str().unwrap());
    let run = runtime.run("CallTarget", &[], Some(&profiler));
    assert!(!run.crashed(), "the process crashed\n{}", run.describe());
    run.assert_exit(EXIT).assert_stdout(OUTPUT);
    let count = |line: &str| run.stderr.lines().filter(|l| *l == line).count();

    // CallTarget: Add wrapped once, its probes called around its one call.
    assert_eq!(
        count("calltarget: wrapped E2E.CallTarget.Program::Add"),
        1,
        "{}",
        run.describe()
    );
    assert_eq!(
        count("calltarget begin E2E.CallTarget.Program::Add(2, 3)"),
        1,
        "{}",
        run.describe()
    );
    assert_eq!(
        count("calltarget end E2E.CallTarget.Program::Add -> 5"),
        1,
        "{}",
        run.describe()
    );

    // The JIT log: the program's methods, each once (tiering off), Add too.
    for method in ["Main", "Add", "Fib"] {
        let line = format!("composed: jit E2E.CallTarget.Program.{method}");
        assert_eq!(count(&line), 1, "{line}\n{}", run.describe());
    }

    // The sampler: its summary at the rate asked for, with samples.
    let summary = readers::summary(&dir.join("summary.txt"))
        .unwrap_or_else(|e| panic!("no summary: {e}\n{}", run.describe()));
    assert_eq!(summary["period_ns"], "1000000", "{summary:?}");
    // Walks in every mode (suspensions only in suspend-runtime mode).
    let walks: u64 = summary["walks"].parse().unwrap();
    assert!(walks > 0, "{summary:?}\n{}", run.describe());
    // 3.1 has no allocation events: no allocation samples by default; 5
    // to 9 sample from GCAllocationTick, 10 and later from AllocationSampled.
    let source = match runtime.major() {
        10.. => "allocation-sampled",
        5.. => "allocation-tick",
        _ => "off",
    };
    assert_eq!(summary["allocation_source"], source, "{summary:?}");
    assert!(dir.join("profile.pb.gz").is_file());
    assert!(
        run.stderr
            .lines()
            .any(|l| l.starts_with("sampler: ") && l.contains(" walks of ")),
        "{}",
        run.describe()
    );
}
