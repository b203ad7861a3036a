//! The example profilers loaded into a real CoreCLR: what they report, and
//! that the profiled program's output and exit code stay unchanged.
//! See docs/e2e.md for provisioning.

// The real-runtime harness (tests/common/dotnet.rs) is Unix only.
#![cfg(unix)]

mod common;

use common::dotnet::{self, Profiler};
use common::expected::BASICS;
use std::fs;
use std::path::{Path, PathBuf};

const JIT_TRACER: &str = "DF63A541-5A33-4611-8829-F4E495985EE3";
const RUNTIME_EVENTS: &str = "C5E5A2F1-3B7D-4C59-9E1A-2F0B6D8C4A17";
const PANICKING: &str = "0F6E2A9C-5D1B-4E8A-B3C7-9A2D4F6E8B10";
const EVENTPIPE_EVENTS: &str = "3F6D1A2B-8C4E-4B7A-9D5F-1E2C3B4A5D6E";
const EVENTPIPE_PROVIDER: &str = "A4ED3F4C-F9DC-46E1-B14E-0092E33F55E9";

fn scratch_file(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("e2e_profilers");
    fs::create_dir_all(&dir).expect("create scratch dir");
    let file = dir.join(format!("{name}-{}.txt", std::process::id()));
    let _ = fs::remove_file(&file);
    file
}

fn example(name: &str, clsid: &str) -> Profiler {
    let library = dotnet::build_example(name)
        .unwrap_or_else(|error| panic!("building example {name}: {error}"));
    Profiler::new(library, clsid)
}

fn lines_with<'a>(text: &'a str, prefix: &str) -> Vec<&'a str> {
    text.lines()
        .filter(|line| line.starts_with(prefix))
        .collect()
}

#[test]
fn jit_tracer_names_the_programs_own_methods_and_leaves_it_unchanged() {
    let runtime = dotnet::runtime();
    let trace_file = scratch_file("jit_tracer");
    let profiler = example("jit_tracer", JIT_TRACER)
        .with_env("JIT_TRACER_OUTPUT", trace_file.to_str().unwrap())
        .with_runtime_setting("TieredCompilation", "0");
    let run = runtime.run("Basics", &[], Some(&profiler));
    run.assert_exit(42).assert_stdout(BASICS);
    let trace = fs::read_to_string(&trace_file)
        .unwrap_or_else(|e| panic!("no trace file: {e}\n{}", run.describe()));

    let initialize = lines_with(&trace, "initialize: ICorProfilerInfo");
    assert_eq!(initialize.len(), 1, "Initialize exactly once:\n{trace}");
    let version: u32 = initialize[0]
        .trim_start_matches("initialize: ICorProfilerInfo")
        .parse()
        .unwrap();
    assert!(
        version >= 11,
        "CoreCLR 3.1 offers ICorProfilerInfo11 or later, got {version}"
    );
    assert_eq!(
        lines_with(&trace, "shutdown").len(),
        1,
        "Shutdown exactly once:\n{trace}"
    );
    assert_eq!(
        trace.lines().last(),
        Some("shutdown"),
        "Shutdown comes last"
    );

    let jitted = lines_with(&trace, "jit: ");
    // With tiering off every method is compiled fully optimized at once, so
    // the small constructors `Box`1..ctor` and `MyException..ctor` are
    // inlined into their callers and never compiled on their own (they
    // showed up here only while the `DOTNET_` prefix, which 3.1 ignores,
    // left tiering on).
    for expected in [
        "jit: E2E.Basics.Program.Main",
        "jit: E2E.Basics.Program.Fib",
        "jit: E2E.Basics.Program.Identity",
        "jit: E2E.Basics.Program.Collect",
        "jit: E2E.Basics.Program.Threads",
        "jit: E2E.Basics.Box`1.Get",
        "jit: E2E.Basics.MyException.get_Code",
        "jit: E2E.Plugin.Greeter.Greet",
    ] {
        assert!(
            jitted.contains(&expected),
            "{expected:?} missing from the trace:\n{trace}"
        );
    }
    // With tiering off, each of the program's own non-generic methods is
    // compiled once. (Basics is too short for a tier-1 recompilation either
    // way; `jit_tracer_counts_a_hot_method_once_with_tiering_off_twice_with_it_on`
    // is the run that proves the setting.)
    assert_eq!(
        jitted
            .iter()
            .filter(|l| **l == "jit: E2E.Basics.Program.Fib")
            .count(),
        1
    );
    assert!(
        jitted.iter().all(|line| !line.contains("(no name")),
        "every method was named:\n{trace}"
    );
}

/// How often jit_tracer saw `Answer` JIT-compiled while `Rewrite --rejit`
/// (no sync dir) called it 1000 times in each of 3 phases, 300 ms apart.
fn hot_answer_compilations(profiler: Profiler, name: &str) -> usize {
    let runtime = dotnet::runtime();
    let trace_file = scratch_file(name);
    let profiler = profiler.with_env("JIT_TRACER_OUTPUT", trace_file.to_str().unwrap());
    let run = runtime.run(
        "Rewrite",
        &["--rejit", "--phases", "3", "--pause-ms", "300"],
        Some(&profiler),
    );
    run.assert_exit(43);
    let trace = fs::read_to_string(&trace_file)
        .unwrap_or_else(|e| panic!("no trace file: {e}\n{}", run.describe()));
    lines_with(&trace, "jit: E2E.Rewrite.Program.Answer")
        .iter()
        .filter(|l| **l == "jit: E2E.Rewrite.Program.Answer")
        .count()
}

#[test]
fn jit_tracer_counts_a_hot_method_per_tier_on_each_runtime() {
    let runtime = dotnet::runtime();
    let off = hot_answer_compilations(
        example("jit_tracer", JIT_TRACER).with_runtime_setting("TieredCompilation", "0"),
        "tiering-off",
    );
    assert_eq!(off, 1, "tiering off: Answer compiled once");
    let on = hot_answer_compilations(example("jit_tracer", JIT_TRACER), "tiering-on");
    if runtime.major() == 3 {
        assert_eq!(
            on, 2,
            "CoreCLR 3.1, tiering on (the default): tier 0, then tier 1"
        );
    } else {
        assert_eq!(
            on, 3,
            ".NET 8, tiering on (the default): tier 0, tier 0 instrumented (TieredPGO), tier 1"
        );
        let no_pgo = hot_answer_compilations(
            example("jit_tracer", JIT_TRACER).with_runtime_setting("TieredPGO", "0"),
            "tiering-on-no-pgo",
        );
        assert_eq!(no_pgo, 2, ".NET 8 with TieredPGO=0: tier 0, then tier 1");
    }
}

/// .NET Core 3.1 reads runtime settings only with the `COMPlus_` prefix;
/// .NET 5 and later read `DOTNET_` too (and still `COMPlus_`). Proven with
/// the tier count of a hot method: 1 when the setting took effect.
#[test]
fn runtime_settings_take_effect_under_the_prefixes_each_runtime_reads() {
    let runtime = dotnet::runtime();
    let dotnet_only = hot_answer_compilations(
        example("jit_tracer", JIT_TRACER).with_env("DOTNET_TieredCompilation", "0"),
        "dotnet-prefix-only",
    );
    let complus_only = hot_answer_compilations(
        example("jit_tracer", JIT_TRACER).with_env("COMPlus_TieredCompilation", "0"),
        "complus-prefix-only",
    );
    assert_eq!(
        complus_only, 1,
        "COMPlus_TieredCompilation=0 on {}",
        runtime.version
    );
    if runtime.major() == 3 {
        assert!(
            dotnet_only > 1,
            "CoreCLR 3.1 ignores DOTNET_TieredCompilation=0: {dotnet_only} compilations"
        );
    } else {
        assert_eq!(dotnet_only, 1, "DOTNET_TieredCompilation=0 on .NET 8");
    }
}

/// Notification-only profilers (.NET 7+): `jit_tracer`, listed in
/// `CORECLR_NOTIFICATION_PROFILERS` (`path={CLSID};` entries, each ended by
/// `;`) with `CORECLR_ENABLE_NOTIFICATION_PROFILERS=1`, runs beside
/// `runtime_events`, the main profiler, when it answers
/// `LoadAsNotificationOnly` with `true`: both see the program. Answering
/// `false` it asks for the main profiler's slot, which is taken, and is
/// refused. CoreCLR 3.1 has no such list: only the main profiler loads.
#[test]
fn a_notification_only_profiler_runs_beside_the_main_one_from_net7() {
    let runtime = dotnet::runtime();
    let jit = dotnet::build_example("jit_tracer").unwrap();
    let list = format!("{}={{{JIT_TRACER}}};", jit.display());
    for answer in ["1", "0"] {
        let trace_file = scratch_file(&format!("notification-jit-{answer}"));
        let report_file = scratch_file(&format!("notification-main-{answer}"));
        let profiler = example("runtime_events", RUNTIME_EVENTS)
            .with_env("RUNTIME_EVENTS_OUTPUT", report_file.to_str().unwrap())
            .with_env("CORECLR_ENABLE_NOTIFICATION_PROFILERS", "1")
            .with_env("CORECLR_NOTIFICATION_PROFILERS", &list)
            .with_env("JIT_TRACER_OUTPUT", trace_file.to_str().unwrap())
            .with_env("JIT_TRACER_NOTIFICATION_ONLY", answer);
        let run = runtime.run("Basics", &[], Some(&profiler));
        run.assert_exit(42).assert_stdout(BASICS);
        let report = fs::read_to_string(&report_file)
            .unwrap_or_else(|e| panic!("no report: {e}\n{}", run.describe()));
        assert_eq!(report.lines().next(), Some("runtime events summary"));
        assert!(
            report.contains("exception type=System.InvalidOperationException"),
            "the main profiler sees the program:\n{report}"
        );
        let trace = fs::read_to_string(&trace_file).unwrap_or_default();
        match (runtime.major(), answer) {
            (3, _) => assert_eq!(
                trace,
                "",
                "CoreCLR 3.1 loads no notification profiler:\n{}",
                run.describe()
            ),
            (_, "1") => {
                assert!(
                    trace.starts_with(
                        "load_as_notification_only: true\ninitialize: ICorProfilerInfo"
                    ),
                    "{trace}"
                );
                assert!(
                    trace.lines().any(|l| l == "jit: E2E.Basics.Program.Main"),
                    "the notification profiler sees the JIT:\n{trace}"
                );
                assert!(trace.ends_with("shutdown\n"), "{trace}");
            }
            (_, _) => assert_eq!(
                trace, "load_as_notification_only: false\n",
                "asking for the taken main slot is refused before Initialize"
            ),
        }
    }
}

#[test]
fn runtime_events_reports_gcs_exceptions_loads_and_threads() {
    let runtime = dotnet::runtime();
    let report_file = scratch_file("runtime_events");
    let profiler = example("runtime_events", RUNTIME_EVENTS)
        .with_env("RUNTIME_EVENTS_OUTPUT", report_file.to_str().unwrap())
        .with_env("RUNTIME_EVENTS_PROBE", "probe value");
    let run = runtime.run("Basics", &[], Some(&profiler));
    run.assert_exit(42).assert_stdout(BASICS);
    let report = fs::read_to_string(&report_file)
        .unwrap_or_else(|e| panic!("no report: {e}\n{}", run.describe()));
    assert_eq!(
        report.lines().next(),
        Some("runtime events summary"),
        "the summary is written at Shutdown:\n{report}"
    );

    // GC.Collect() and GC.Collect(2, Forced): induced, and at least one of generation 2.
    let induced: Vec<&str> = lines_with(&report, "gc reason=induced ");
    let induced_count: u32 = induced
        .iter()
        .map(|line| {
            line.rsplit("count=")
                .next()
                .unwrap()
                .parse::<u32>()
                .unwrap()
        })
        .sum();
    assert!(induced_count >= 2, "two induced GCs expected:\n{report}");
    assert!(
        induced.iter().any(|line| line.contains("generation=2")),
        "a generation-2 induced GC:\n{report}"
    );

    // The first exception, `new InvalidOperationException("state is
    // invalid")` at its throw, references its message and nothing else yet
    // (EnumerateObjectReferences, ICorProfilerInfo10: 3.1 and 8.0 alike).
    assert!(
        report
            .lines()
            .any(|line| line == "first exception references System.String"),
        "{report}"
    );
    for exception in ["System.InvalidOperationException", "E2E.Basics.MyException"] {
        assert!(
            report
                .lines()
                .any(|line| line.starts_with(&format!("exception type={exception} count="))),
            "{exception} thrown:\n{report}"
        );
    }
    let programs = runtime.programs_dir.join("Basics");
    let expected_module = programs.join("Basics.dll");
    let plugin_module = programs.join("Plugin.dll");
    for module in [&expected_module, &plugin_module] {
        let line = format!("module {}", runtime.program_path(module));
        assert!(
            report.lines().any(|l| l == line),
            "{line:?} missing:\n{report}"
        );
    }
    assert!(report
        .lines()
        .any(|l| l.starts_with("module ") && l.ends_with("System.Private.CoreLib.dll")));
    for assembly in [
        "assembly Basics",
        "assembly Plugin",
        "assembly System.Private.CoreLib",
    ] {
        assert!(
            report.lines().any(|l| l == assembly),
            "{assembly:?} missing:\n{report}"
        );
    }
    let threads: u32 = lines_with(&report, "threads created=")[0]
        .trim_start_matches("threads created=")
        .parse()
        .unwrap();
    assert!(
        threads >= 4,
        "the main thread and the three workers, at least: {threads}\n{report}"
    );

    // What later runtimes offer. ICorProfilerInfo10 and 11 are there on both
    // (3.1 offers up to 11): the LOH threshold, and the environment read,
    // missing and written through the runtime.
    for line in [
        "loh threshold=85000",
        "env RUNTIME_EVENTS_PROBE=Some(\"probe value\")",
        "env RUNTIME_EVENTS_UNSET_VARIABLE=None",
        "env set RUNTIME_EVENTS_SET=Some(\"from the profiler\")",
    ] {
        assert!(report.lines().any(|l| l == line), "{line:?}:\n{report}");
    }
    let not_implemented = "E_NOTIMPL (0x80004001): The method is not implemented.";
    let expected: Vec<String> = if runtime.major() == 3 {
        // No ICorProfilerInfo13/14: a clear E_NOTIMPL, and the program runs.
        vec![
            format!("handles weak: {not_implemented}, strong: {not_implemented}"),
            format!("non-gc heap: {not_implemented}"),
            format!("non-gc objects: {not_implemented}"),
        ]
    } else {
        // .NET 8: after the program's two induced collections, the weak
        // handle to the first exception is cleared and the strong one kept
        // the second alive; string literals live in the non-GC heap, whose
        // objects are all frozen.
        vec![
            "handles weak cleared, strong alive".to_string(),
            "non-gc heap ranges=1 bytes>0=true".to_string(),
            "non-gc objects>0=true all frozen=true".to_string(),
        ]
    };
    for line in &expected {
        assert!(
            report.lines().any(|l| l == line),
            "{} {line:?}:\n{report}",
            runtime.version
        );
    }

    // The in-process EventPipe session (ICorProfilerInfo12, .NET 5): on 8.0
    // it delivers one ExceptionThrown event per exception the profiler's own
    // callback counted; 3.1 has no ICorProfilerInfo12.
    let callbacks: u32 = lines_with(&report, "exception type=")
        .iter()
        .map(|l| l.rsplit("count=").next().unwrap().parse::<u32>().unwrap())
        .sum();
    assert!(callbacks >= 2, "{report}");
    let eventpipe = if runtime.major() == 3 {
        format!("eventpipe: {not_implemented}")
    } else {
        format!("eventpipe exception events={callbacks}")
    };
    assert!(
        report.lines().any(|l| l == eventpipe),
        "{eventpipe:?}:\n{report}"
    );
}

#[test]
fn a_panicking_profiler_does_not_change_the_program() {
    let runtime = dotnet::runtime();
    let run = runtime.run(
        "Basics",
        &[],
        Some(&example("panicking_profiler", PANICKING)),
    );
    assert!(
        !run.crashed(),
        "the process must not crash:\n{}",
        run.describe()
    );
    run.assert_exit(42).assert_stdout(BASICS);
    assert!(
        run.stderr.contains("panicking_profiler: shutdown reached"),
        "{}",
        run.describe()
    );
}

#[test]
fn a_wrong_clsid_is_refused_and_the_program_runs_without_profiler() {
    let runtime = dotnet::runtime();
    let trace_file = scratch_file("wrong_clsid");
    let profiler = Profiler::new(
        dotnet::build_example("jit_tracer").unwrap(),
        "00000000-1111-2222-3333-444444444444",
    )
    .with_env("JIT_TRACER_OUTPUT", trace_file.to_str().unwrap())
    .with_env("CORPROF_DEBUG", "1");
    let run = runtime.run("Basics", &[], Some(&profiler));
    run.assert_exit(42).assert_stdout(BASICS);
    assert!(
        !trace_file.exists(),
        "DllGetClassObject refused the CLSID, so no profiler was created"
    );
    // CORPROF_DEBUG=1 says why, on the runtime's stderr.
    assert!(
        run.stderr.contains(&format!(
            "corprof: DllGetClassObject was asked for CLSID \
             {{00000000-1111-2222-3333-444444444444}}, but this library serves {{{JIT_TRACER}}}; \
             answering CLASS_E_CLASSNOTAVAILABLE (check CORECLR_PROFILER)"
        )),
        "{}",
        run.describe()
    );
}

/// The `eventpipe_events` example: an in-process EventPipe session for the
/// runtime provider, its events decoded by `corprof::eventpipe`. On 8.0 the
/// exceptions Basics throws are counted exactly by type, its two
/// `GC.Collect` calls as `Induced` GCs, and allocation ticks by type; on 3.1
/// it says why it does nothing. The program's output is unchanged.
#[test]
fn eventpipe_events_counts_the_runtime_events_on_net8_and_explains_on_3_1() {
    let runtime = dotnet::runtime();
    let run = runtime.run(
        "Basics",
        &[],
        Some(&example("eventpipe_events", EVENTPIPE_EVENTS)),
    );
    run.assert_exit(42).assert_stdout(BASICS);
    let lines = lines_with(&run.stderr, "eventpipe ");
    if runtime.major() == 3 {
        assert!(
            run.stderr.contains(
                "eventpipe_events: in-process EventPipe needs .NET 5 or later (ICorProfilerInfo12); \
                 this runtime offers ICorProfilerInfo11: not profiling"
            ),
            "CoreCLR 3.1: {}",
            run.describe()
        );
        assert!(lines.is_empty(), "CoreCLR 3.1: {lines:?}");
        return;
    }
    let exceptions: Vec<&str> = lines
        .iter()
        .copied()
        .filter(|l| l.starts_with("eventpipe exception "))
        .collect();
    assert_eq!(
        exceptions,
        [
            "eventpipe exception E2E.Basics.MyException 1",
            "eventpipe exception System.InvalidOperationException 1",
        ],
        "{}",
        run.describe()
    );
    assert!(lines.contains(&"eventpipe gc Induced 2"), "{lines:?}");
    let allocs: Vec<(u64, u64)> = lines
        .iter()
        .filter_map(|l| l.strip_prefix("eventpipe alloc "))
        .map(|rest| {
            let mut words = rest.rsplitn(3, ' ');
            let bytes = words.next().unwrap().parse().unwrap();
            let ticks = words.next().unwrap().parse().unwrap();
            (ticks, bytes)
        })
        .collect();
    assert!(!allocs.is_empty(), "{lines:?}");
    assert!(
        allocs.iter().all(|&(ticks, bytes)| ticks >= 1 && bytes > 0),
        "{lines:?}"
    );
    assert!(
        !run.stderr.contains("undecoded") && !run.stderr.contains("not decoded"),
        "{}",
        run.stderr
    );
}

/// Profiler-defined events (`ICorProfilerInfo12`, .NET 5): the fixture
/// `eventpipe_provider` (`tests/fixtures/`) creates the provider
/// `CorProf-EventPipeEvents` with one event, `Ping(Int32 Value)`, enables it
/// in its own session, writes `Ping` with the values 1 to 1000 at the first
/// JIT compilation, and decodes the ones
/// delivered back by the fields of their metadata: all of them, with the
/// values written (sum 500,500). 3.1 has no in-process EventPipe.
#[test]
fn eventpipe_provider_receives_the_events_it_writes_on_net8() {
    let runtime = dotnet::runtime();
    let profiler = example("eventpipe_provider", EVENTPIPE_PROVIDER)
        .with_env("EVENTPIPE_PROVIDER_WRITE", "1000");
    let run = runtime.run("Basics", &[], Some(&profiler));
    run.assert_exit(42).assert_stdout(BASICS);
    let pings = lines_with(&run.stderr, "eventpipe profiler ");
    if runtime.major() == 3 {
        assert!(pings.is_empty(), "CoreCLR 3.1: {}", run.describe());
        assert!(
            run.stderr.contains("needs .NET 5 or later"),
            "{}",
            run.describe()
        );
        return;
    }
    assert!(
        run.stderr
            .contains("eventpipe_provider: provider CorProf-EventPipeEvents defines Ping\n"),
        "EventPipeGetProviderInfo names the provider:\n{}",
        run.describe()
    );
    assert!(
        run.stderr
            .contains("eventpipe_provider: wrote 1000 Ping events (0 failed)\n"),
        "{}",
        run.describe()
    );
    assert_eq!(
        pings,
        ["eventpipe profiler Ping 1000 500500"],
        "{}",
        run.describe()
    );
    assert!(
        !run.stderr.contains("eventpipe undecoded"),
        "{}",
        run.describe()
    );
}
