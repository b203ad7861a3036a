//! CallTarget-style wrapping in a running CoreCLR: the `call_target`
//! example wraps methods of the `CallTarget` program so that they call the
//! `CallTargetProbe` helper, which the program never referenced and which
//! the host loads through `DOTNET_STARTUP_HOOKS` (docs/instrumentation.md).
//!
//! Each test checks that the program's own stdout and exit code are those
//! of an unprofiled run (written out below), that every `begin` line is
//! closed by exactly one `end` or `exception` line (properly nested: the
//! probes run on one thread here), and the values the probes saw.

// The real-runtime harness (tests/common/dotnet.rs) is Unix only.
#![cfg(unix)]

mod common;

use common::dotnet::{self, Profiler, RunOutput, Runtime};
use common::expected;
use common::runtime_async::{
    run_runtime_async, runtime_async_output, RUNTIME_ASYNC_CALLS, RUNTIME_ASYNC_METHODS,
};
use common::web::{wrk, WebServer};
use std::fs;
use std::path::{Path, PathBuf};

const CALL_TARGET: &str = "8D2E4A61-3B7C-4F59-A0E8-C51F9B27D364";
const EXIT: i32 = 44;

/// What `CallTarget` prints without a profiler.
const OUTPUT: &[&str] = expected::CALL_TARGET;

/// Every method of the program that covers a case of the wrapper.
const ALL_TARGETS: &[&str] = &[
    "Program::Add",        // static, value-type return
    "Greeter::Greet",      // instance void, reference-type this
    "Program::Fail",       // void, body ends in throw
    "Point::Sum",          // value-type this
    "Program::Echo",       // generic method
    "Holder`1::Get",       // method of a generic type
    "Program::Divide",     // ref and out parameters
    "Program::Fib",        // recursion
    "Program::Guarded",    // try/catch/finally + filter inside
    "Program::Thrower",    // returns on one path, throws on the other
    "Program::Describe",   // reference-type argument and return, null
    "Pair`1::Show",        // value-type this of a generic struct
    "Program::Rethrows",   // exception caught inside, another thrown out
    "Program::Mirror",     // struct argument and struct result
    "Program::TryName",    // out parameter of a reference type
    "Program::Maybe",      // Nullable<int> argument
    "Program::SpanLength", // by-ref-like argument: passed as null
    "Program::Tail",       // by-ref-like result: passed as null
    "Holder`1::Make",      // static method of a generic type
];

fn spec(targets: &[&str]) -> String {
    targets
        .iter()
        .map(|t| format!("CallTarget!E2E.CallTarget.{t}"))
        .collect::<Vec<_>>()
        .join(";")
}

fn helper(runtime: &Runtime) -> PathBuf {
    let path = runtime
        .programs_dir
        .join("CallTargetProbe")
        .join("CallTargetProbe.dll");
    assert!(path.is_file(), "no helper at {}", path.display());
    path
}

/// The profiler with the helper configured and loaded as a startup hook,
/// tiered compilation off (every method compiled once, optimized).
fn call_target(runtime: &Runtime, targets: &str) -> Profiler {
    call_target_at_defaults(runtime, targets).with_env("COMPlus_TieredCompilation", "0")
}

/// The profiler with the helper configured and loaded as a startup hook,
/// at the runtime's defaults (tiered compilation on, ReadyToRun code used)
/// and the example's.
fn call_target_at_defaults(runtime: &Runtime, targets: &str) -> Profiler {
    let library = dotnet::build_example("call_target")
        .unwrap_or_else(|error| panic!("building example call_target: {error}"));
    let helper = runtime.program_path(&helper(runtime));
    let helper = helper.as_str();
    Profiler::new(library, CALL_TARGET)
        .with_env("CORPROF_CALLTARGET", targets)
        .with_env("CORPROF_CALLTARGET_HELPER", helper)
        .with_env("DOTNET_STARTUP_HOOKS", helper)
}

/// The probe lines (`calltarget begin|end|exception|this ...`) in order.
fn probe_lines(run: &RunOutput) -> Vec<&str> {
    run.stderr
        .lines()
        .filter(|l| {
            ["begin ", "end ", "exception ", "this "]
                .iter()
                .any(|k| l.starts_with(&format!("calltarget {k}")))
        })
        .collect()
}

/// Every `begin M(...)` is closed by exactly one `end M -> ...` or
/// `exception M ...`, innermost first; returns the number of begins.
#[track_caller]
fn assert_balanced(run: &RunOutput) -> usize {
    let mut open: Vec<&str> = Vec::new();
    let mut begins = 0;
    for line in probe_lines(run) {
        if let Some(rest) = line.strip_prefix("calltarget begin ") {
            let name = rest.split('(').next().unwrap();
            open.push(name);
            begins += 1;
        } else if let Some(rest) = line
            .strip_prefix("calltarget end ")
            .or_else(|| line.strip_prefix("calltarget exception "))
        {
            let name = rest.split(' ').next().unwrap();
            assert_eq!(
                open.pop(),
                Some(name),
                "{line:?} closes no open begin\n{}",
                run.describe()
            );
        }
    }
    assert!(open.is_empty(), "unclosed: {open:?}\n{}", run.describe());
    begins
}

#[track_caller]
fn assert_unchanged(run: &RunOutput) {
    assert!(!run.crashed(), "the process crashed\n{}", run.describe());
    run.assert_exit(EXIT).assert_stdout(OUTPUT);
}

#[track_caller]
fn assert_has(run: &RunOutput, needle: &str) {
    assert!(
        run.stderr.contains(needle),
        "stderr lacks {needle:?}\n{}",
        run.describe()
    );
}

#[test]
fn without_a_profiler_the_program_prints_the_expected_lines() {
    let runtime = dotnet::runtime();
    let run = runtime.run("CallTarget", &[], None);
    assert_unchanged(&run);
    assert!(probe_lines(&run).is_empty(), "{}", run.describe());
}

#[test]
fn the_helper_alone_changes_nothing() {
    // Loaded as a startup hook without the profiler, the helper does
    // nothing: the program cannot reach it.
    let runtime = dotnet::runtime();
    let helper = helper(&runtime);
    let quiet = Profiler::new(dotnet::build_example("call_target").unwrap(), CALL_TARGET)
        .with_env("DOTNET_STARTUP_HOOKS", runtime.program_path(&helper));
    // No CORPROF_CALLTARGET: the profiler says why it does nothing.
    let run = runtime.run("CallTarget", &[], Some(&quiet));
    assert_unchanged(&run);
    assert_has(
        &run,
        "calltarget: not instrumenting: CORPROF_CALLTARGET: no targets",
    );
    assert!(probe_lines(&run).is_empty(), "{}", run.describe());
}

#[test]
fn a_precompiled_framework_method_is_wrapped_at_the_default_settings() {
    // `System.Console.WriteLine` (every overload) lives in a ReadyToRun
    // framework assembly: its precompiled code runs without a JIT
    // compilation. At the runtime's defaults the profiler finds the module
    // precompiled (it prepares the targets for ReJIT), sets the precompiled
    // code aside, and every line the program prints goes through the
    // integration. On .NET 8 a ReJIT (prepared at module load) also reaches
    // the precompiled methods that inlined it; 3.1 has no safe way to.
    let runtime = dotnet::runtime();
    let profiler = call_target_at_defaults(&runtime, "System.Console!System.Console::WriteLine")
        .with_env(
            "CORPROF_CALLTARGET_INTEGRATION",
            "CorProf.CallTarget.CountingIntegration",
        );
    let run = runtime.run("CallTarget", &[], Some(&profiler));
    assert_unchanged(&run);
    if runtime.major() == 3 {
        assert_has(
            &run,
            "calltarget: System.Console::WriteLine is precompiled: wrapped at first JIT\n",
        );
    } else {
        assert_has(
            &run,
            "calltarget: prepared System.Console::WriteLine for ReJIT\n",
        );
        // Every overload, with the precompiled methods that inlined one.
        assert!(
            run.stderr
                .lines()
                .any(|l| l.starts_with("calltarget: RequestReJIT of ")
                    && l.ends_with(" methods succeeded (and their inliners)")),
            "{}",
            run.describe()
        );
    }
    assert!(
        run.stderr
            .contains("calltarget: wrapped System.Console::WriteLine\n")
            || run
                .stderr
                .contains("calltarget: ReJIT wrapped System.Console::WriteLine\n"),
        "{}",
        run.describe()
    );
    assert_has(
        &run,
        &format!(
            "calltarget counts begin {n} end {n} exception 0\n",
            n = OUTPUT.len()
        ),
    );
    assert!(!run.stderr.contains("left unchanged"), "{}", run.describe());
}

#[test]
fn a_web_server_counts_every_request_in_a_framework_method_and_in_its_own_handler() {
    // The ASP.NET Core web app (tests/e2e/roslyn/WebApp) at the runtime's
    // and the example's defaults, with a framework method (ReadyToRun:
    // the profiler prepares it for ReJIT and sets its precompiled code
    // aside) and one of the app's own wrapped for CountingIntegration.
    // Every /json request runs EndpointMiddleware.Invoke once (its task
    // ends the request) and Handlers.Json once; the one /stats request
    // runs EndpointMiddleware.Invoke once more.
    let runtime = dotnet::runtime();
    let profiler = call_target_at_defaults(
        &runtime,
        "Microsoft.AspNetCore.Routing!Microsoft.AspNetCore.Routing.EndpointMiddleware::Invoke;\
         WebApp!WebApp.Handlers::Json",
    )
    .with_env(
        "CORPROF_CALLTARGET_INTEGRATION",
        "CorProf.CallTarget.CountingIntegration",
    );
    let server = WebServer::start(&runtime, Some(&profiler));
    let load = wrk(&server.url("/json"), 2, 16, 3);
    assert!(load.requests > 1000, "{load:?}");
    assert_eq!((load.non_2xx, load.socket_errors), (0, 0), "{load:?}");
    let stats = server.get("/stats");
    let json: u64 = stats
        .split_whitespace()
        .find_map(|kv| kv.strip_prefix("json="))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no json count in {stats:?}"));
    assert!(json >= load.requests, "{json} handled, {load:?}");
    let stopped = server.stop();
    let describe = format!("{stopped:?}");
    assert_eq!(stopped.status.code(), Some(0), "{describe}");
    let has = |needle: &str| stopped.stderr.contains(needle);
    // The server runs its own runtime's ASP.NET Core, whose ReadyToRun code
    // the runtime would use: its precompiled code is set aside and the
    // wrapped framework method is compiled at its first JIT; on runtimes
    // whose ReJIT also reaches the precompiled methods that inlined it
    // (component.rs, BLOCK_INLINING_FROM_MAJOR) it is wrapped by ReJIT.
    if runtime.major() == 3 {
        assert!(
            has("calltarget: Microsoft.AspNetCore.Routing.EndpointMiddleware::Invoke is precompiled: wrapped at first JIT\n"),
            "the framework module is precompiled: {describe}"
        );
    } else {
        assert!(
            has(
                "calltarget: ReJIT wrapped Microsoft.AspNetCore.Routing.EndpointMiddleware::Invoke"
            ),
            "the precompiled framework method is wrapped by ReJIT: {describe}"
        );
    }
    assert!(
        has("calltarget: wrapped Microsoft.AspNetCore.Routing.EndpointMiddleware::Invoke\n")
            || has("calltarget: ReJIT wrapped Microsoft.AspNetCore.Routing.EndpointMiddleware::Invoke\n"),
        "{describe}"
    );
    assert!(
        has("calltarget: wrapped WebApp.Handlers::Json\n"),
        "{describe}"
    );
    assert!(!has("left unchanged"), "{describe}");
    let n = 2 * json + 1;
    assert!(
        has(&format!(
            "calltarget counts begin {n} end {n} exception 0\n"
        )),
        "expected begin = end = {n} ({json} /json requests, one /stats): {describe}"
    );
}

#[test]
fn a_small_target_is_not_inlined_into_a_caller_compiled_first() {
    // `Program::Add` is small enough to be inlined into `Main`, which is
    // compiled (optimized: tiering off here) before `Add` is called. With
    // inlining on for the process (the example's default), the profiler
    // answers `JITInlining` with no for a target; answering yes, this test
    // saw no probe line for `Add` (its inlined copy ran unwrapped).
    let runtime = dotnet::runtime();
    let profiler = call_target(&runtime, &spec(&["Program::Add"]));
    let run = runtime.run("CallTarget", &[], Some(&profiler));
    assert_unchanged(&run);
    assert_has(&run, "calltarget: wrapped E2E.CallTarget.Program::Add\n");
    assert_eq!(
        probe_lines(&run),
        [
            "calltarget begin E2E.CallTarget.Program::Add(2, 3)",
            "calltarget end E2E.CallTarget.Program::Add -> 5",
        ],
        "{}",
        run.describe()
    );
}

/// The probe lines of one call, in order: `outcome` is `THIS||EVENT`,
/// `@` in `EVENT` standing for the method's name.
fn call(name: &str, args: &str, outcome: &str) -> Vec<String> {
    let (this, event) = outcome.split_once("||").expect("THIS||EVENT");
    let full = format!("E2E.CallTarget.{name}");
    vec![
        format!("calltarget begin {full}({args})"),
        format!("calltarget this {full} {this}"),
        format!("calltarget {}", event.replace('@', &full)),
    ]
}

#[test]
fn wraps_every_case_at_first_jit_without_changing_the_program() {
    let runtime = dotnet::runtime();
    let profiler =
        call_target(&runtime, &spec(ALL_TARGETS)).with_env("CORPROF_CALLTARGET_SHOW_THIS", "1");
    let run = runtime.run("CallTarget", &[], Some(&profiler));
    assert_unchanged(&run);
    for target in ALL_TARGETS {
        let line = format!("calltarget: wrapped E2E.CallTarget.{target}\n");
        assert_eq!(
            run.stderr.matches(&line).count(),
            1,
            "{target} wrapped once\n{}",
            run.describe()
        );
    }
    assert!(!run.stderr.contains("left unchanged"), "{}", run.describe());
    // Fib(5) makes 15 calls; the others 27: Add, Greet, Fail, Sum, Show,
    // Rethrows, Mirror, TryName, SpanLength, Tail once, Echo, Get, Divide,
    // Thrower, Describe, Maybe, Make twice, Guarded three times.
    assert_eq!(assert_balanced(&run), 15 + 27, "{}", run.describe());

    // The calls that are not recursive, each as begin / this / end-or-exception.
    let mut expected: Vec<String> = Vec::new();
    for (name, args, outcome) in [
        ("Program::Add", "2, 3", "null||end @ -> 5"),
        ("Greeter::Greet", "world", "Greeter(corprof)||end @ -> void"),
        (
            "Program::Fail",
            "boom",
            "null||exception @ System.InvalidOperationException",
        ),
        ("Point::Sum", "3", "(1,2)||end @ -> 6"),
        ("Program::Echo", "7", "null||end @ -> 7"),
        ("Program::Echo", "seven", "null||end @ -> seven"),
        ("Holder`1::Get", "", "Holder(42)||end @ -> 42"),
        ("Holder`1::Get", "", "Holder(forty-two)||end @ -> forty-two"),
        // ref/out: the values the references point to at entry.
        ("Program::Divide", "7, 2, 0, 0", "null||end @ -> True"),
        ("Program::Divide", "1, 0, 1, 3", "null||end @ -> False"),
    ] {
        expected.extend(call(name, args, outcome));
    }
    let lines = probe_lines(&run);
    let fib_start = lines
        .iter()
        .position(|l| l.contains("Program::Fib"))
        .expect("Fib was called");
    assert_eq!(lines[..fib_start], expected[..], "{}", run.describe());
    // Fib: 15 begins and 15 ends, outermost last.
    let fib: Vec<&&str> = lines.iter().filter(|l| l.contains("::Fib")).collect();
    assert_eq!(fib.len(), 15 * 3, "{}", run.describe());
    assert_eq!(*fib[0], "calltarget begin E2E.CallTarget.Program::Fib(5)");
    assert_eq!(
        **fib.last().unwrap(),
        "calltarget end E2E.CallTarget.Program::Fib -> 5"
    );
    let after_fib: Vec<&str> = lines[fib_start + fib.len()..].to_vec();
    let mut expected: Vec<String> = Vec::new();
    for (name, args, outcome) in [
        // An exception thrown, caught and filtered inside is not the probe's.
        ("Program::Guarded", "5", "null||end @ -> 1020"),
        ("Program::Guarded", "0", "null||end @ -> 999"),
        ("Program::Guarded", "-1", "null||end @ -> -2"),
        ("Program::Thrower", "4", "null||end @ -> 4"),
        (
            "Program::Thrower",
            "-1",
            "null||exception @ System.ArgumentOutOfRangeException",
        ),
        ("Program::Describe", "null", "null||end @ -> nothing"),
        ("Program::Describe", "(1,2)", "null||end @ -> <(1,2)>"),
        ("Pair`1::Show", "-", "(1|2)||end @ -> 1-2"),
        (
            "Program::Rethrows",
            "",
            "null||exception @ System.InvalidOperationException",
        ),
        ("Program::Mirror", "(1,2)", "null||end @ -> (2,1)"),
        // The out string is null at entry.
        ("Program::TryName", "3, null", "null||end @ -> True"),
        // A boxed Nullable<int> is the int or null.
        ("Program::Maybe", "5", "null||end @ -> some 5"),
        ("Program::Maybe", "null", "null||end @ -> none"),
        // Span<int> cannot be boxed: the probes get null.
        ("Program::SpanLength", "null", "null||end @ -> 3"),
        ("Program::Tail", "System.Int32[]", "null||end @ -> null"),
        ("Holder`1::Make", "8", "null||end @ -> Holder(8)"),
        ("Holder`1::Make", "eight", "null||end @ -> Holder(eight)"),
    ] {
        expected.extend(call(name, args, outcome));
    }
    assert_eq!(after_fib, expected, "{}", run.describe());
}

/// The `Probes { ... }` of each wrapped method (CORPROF_CALLTARGET_VERBOSE).
fn probes_of(run: &RunOutput) -> Vec<&str> {
    run.stderr
        .lines()
        .filter_map(|l| l.split_once(": Probes { ").map(|(_, p)| p))
        .collect()
}

/// The part of a `Probes { ... }` every method of a module shares: the
/// contract's TypeRefs and `System.Exception`.
fn shared_part(probes: &str) -> &str {
    let from = probes.find("state: ").expect("a state token");
    probes[from..].split(", method_name").next().unwrap()
}

#[test]
fn every_method_of_a_module_uses_the_same_references() {
    // The references are looked up before they are defined: wrapping 19
    // methods adds one AssemblyRef, the contract's TypeRefs and one
    // MemberRef per integration method (one OnMethodBegin per argument
    // count), so every wrapped body names the same tokens for them; the
    // MethodSpecs are the methods' own.
    let runtime = dotnet::runtime();
    let profiler =
        call_target(&runtime, &spec(ALL_TARGETS)).with_env("CORPROF_CALLTARGET_VERBOSE", "1");
    let run = runtime.run("CallTarget", &[], Some(&profiler));
    assert_unchanged(&run);
    let probes = probes_of(&run);
    assert_eq!(probes.len(), ALL_TARGETS.len(), "{}", run.describe());
    let shared: Vec<&str> = probes.iter().map(|p| shared_part(p)).collect();
    assert!(
        shared.iter().all(|p| *p == shared[0]),
        "{shared:#?}\n{}",
        run.describe()
    );
    // TypeRefs for the contract's types and System.Exception.
    assert!(shared[0].starts_with("state: Token(0x01"), "{}", shared[0]);
    assert!(shared[0].contains("exception: Token(0x01"), "{}", shared[0]);
    // MemberRefs of the integration's methods: the program's targets take
    // 0 to 4 arguments, so at most five OnMethodBegin references, and the
    // two OnMethodEnd ones.
    let field = |p: &str, name: &str| {
        let rest = &p[p.find(name).unwrap() + name.len()..];
        rest.split(')').next().unwrap().to_string()
    };
    let begins: std::collections::HashSet<String> =
        probes.iter().map(|p| field(p, "begin: ")).collect();
    let ends: std::collections::HashSet<String> =
        probes.iter().map(|p| field(p, " end: ")).collect();
    assert!(
        begins.iter().all(|b| b.starts_with("Some(Token(0x0A")),
        "{begins:?}"
    );
    assert!((2..=5).contains(&begins.len()), "{begins:?}");
    assert!(
        ends.iter().all(|e| e.starts_with("Some(Token(0x0A")),
        "{ends:?}"
    );
    assert_eq!(ends.len(), 2, "{ends:?}");
    // The method names are user strings of their own.
    let names: std::collections::HashSet<&str> = run
        .stderr
        .lines()
        .filter_map(|l| l.split_once("method_name: ").map(|(_, n)| n))
        .collect();
    assert_eq!(names.len(), ALL_TARGETS.len(), "{}", run.describe());
    // The listing shows the shape: the begin call through a MethodSpec
    // (0x2B) with the name, no array and no box, the new clauses last.
    assert_has(&run, ": ldstr 0x70");
    assert_has(&run, ": call 0x2B");
    // Add(int, int): its arguments by address, no array, no box; begin
    // and end (twice: the normal and the exceptional path) through
    // MethodSpecs, the result through GetReturnValue.
    let add = listing(&run, "E2E.CallTarget.Program::Add");
    for needle in ["ldarga.s 0", "ldarga.s 1", "call 0x2B", "call 0x0A"] {
        assert!(add.contains(needle), "{needle}: {add}");
    }
    assert_eq!(add.matches("call 0x2B").count(), 3, "{add}");
    assert_eq!(add.matches(".try ").count(), 4, "{add}");
    for absent in ["newarr", "box", "stelem", "finally"] {
        assert!(!add.contains(absent), "{absent}: {add}");
    }
}

/// The IL listing CORPROF_CALLTARGET_VERBOSE printed for `method`.
fn listing(run: &RunOutput, method: &str) -> String {
    let head = format!("calltarget: {method}: Probes {{");
    let at = run
        .stderr
        .find(&head)
        .unwrap_or_else(|| panic!("no listing of {method}\n{}", run.describe()));
    run.stderr[at..]
        .lines()
        .skip(1)
        .take_while(|l| l.starts_with("IL_") || l.starts_with(".try") || l.starts_with("  "))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn methods_first_compiled_on_eight_threads_at_once_share_the_references() {
    // Eight threads released together each JIT-compile their own target:
    // the wrappers add the same references concurrently, and still every
    // body names the same tokens (one ask-then-define at a time), the
    // MethodSpecs included (the eight targets have the same shape).
    let runtime = dotnet::runtime();
    let targets: Vec<String> = (0..8).map(|i| format!("Program::W{i}")).collect();
    let targets: Vec<&str> = targets.iter().map(String::as_str).collect();
    let profiler =
        call_target(&runtime, &spec(&targets)).with_env("CORPROF_CALLTARGET_VERBOSE", "1");
    let run = runtime.run("CallTarget", &["--threads"], Some(&profiler));
    assert!(!run.crashed(), "{}", run.describe());
    run.assert_exit(EXIT)
        .assert_stdout(&["threads=0,2,4,6,8,10,12,14"]);
    assert_eq!(assert_balanced_per_method(&run), 8, "{}", run.describe());
    let probes: Vec<&str> = probes_of(&run)
        .into_iter()
        .map(|p| p.split(", method_name").next().unwrap())
        .collect();
    assert_eq!(probes.len(), 8, "{}", run.describe());
    assert!(probes.iter().all(|p| *p == probes[0]), "{probes:#?}");
}

/// For calls on several threads (lines interleave): each method's lines
/// are begin then end, once; returns the number of begins.
#[track_caller]
fn assert_balanced_per_method(run: &RunOutput) -> usize {
    let lines = probe_lines(run);
    let begins: Vec<&str> = lines
        .iter()
        .filter_map(|l| l.strip_prefix("calltarget begin "))
        .collect();
    for b in &begins {
        let name = b.split('(').next().unwrap();
        let ends = lines
            .iter()
            .filter(|l| {
                l.strip_prefix("calltarget end ")
                    .or_else(|| l.strip_prefix("calltarget exception "))
                    .is_some_and(|r| r.split(' ').next() == Some(name))
            })
            .count();
        assert_eq!(ends, 1, "{name}\n{}", run.describe());
    }
    begins.len()
}

#[test]
fn without_the_probe_lines_of_show_this_the_format_is_exactly_the_documented_one() {
    let runtime = dotnet::runtime();
    let profiler = call_target(&runtime, &spec(&["Program::Add", "Program::Fail"]));
    let run = runtime.run("CallTarget", &[], Some(&profiler));
    assert_unchanged(&run);
    assert_eq!(
        probe_lines(&run),
        [
            "calltarget begin E2E.CallTarget.Program::Add(2, 3)",
            "calltarget end E2E.CallTarget.Program::Add -> 5",
            "calltarget begin E2E.CallTarget.Program::Fail(boom)",
            "calltarget exception E2E.CallTarget.Program::Fail System.InvalidOperationException",
        ],
        "{}",
        run.describe()
    );
}

#[test]
fn unknown_targets_and_constructors_are_reported_and_left_alone() {
    let runtime = dotnet::runtime();
    let profiler = call_target(
        &runtime,
        &format!(
            "{};CallTarget!E2E.CallTarget.Program::Nope;CallTarget!E2E.CallTarget.Nowhere::Add;\
             CallTarget!E2E.CallTarget.Greeter::.ctor;Missing!A.B::C",
            spec(&["Program::Add"])
        ),
    );
    let run = runtime.run("CallTarget", &[], Some(&profiler));
    assert_unchanged(&run);
    assert_has(
        &run,
        "calltarget: unknown target CallTarget!E2E.CallTarget.Program::Nope: no method Nope in E2E.CallTarget.Program\n",
    );
    assert_has(
        &run,
        "calltarget: unknown target CallTarget!E2E.CallTarget.Nowhere::Add: no type E2E.CallTarget.Nowhere",
    );
    assert_has(
        &run,
        "calltarget: left unchanged: E2E.CallTarget.Greeter..ctor: unsupported: constructor\n",
    );
    assert_has(
        &run,
        "calltarget: target Missing!A.B::C was never found: its assembly did not load or define it\n",
    );
    // The valid target is still wrapped.
    assert_has(&run, "calltarget end E2E.CallTarget.Program::Add -> 5\n");
    assert_eq!(assert_balanced(&run), 1);
}

#[test]
fn bad_configuration_leaves_the_program_unprofiled_and_says_why() {
    let runtime = dotnet::runtime();
    let good = spec(&["Program::Add"]);
    let missing = runtime.programs_dir.join("CallTargetProbe/Nope.dll");
    let missing = runtime.program_path(&missing);
    let missing = missing.as_str();
    let cases: Vec<(Profiler, &str)> = vec![
        (
            call_target(&runtime, "CallTarget:E2E.CallTarget.Program::Add"),
            "calltarget: not instrumenting: CORPROF_CALLTARGET: bad target \"CallTarget:E2E.CallTarget.Program::Add\": no `!`",
        ),
        (
            call_target(&runtime, &good).with_env("CORPROF_CALLTARGET_HELPER", missing),
            "calltarget: not instrumenting: helper ",
        ),
        (
            call_target(&runtime, &good).with_env("DOTNET_STARTUP_HOOKS", ""),
            "is not in DOTNET_STARTUP_HOOKS, so the runtime would not find it",
        ),
    ];
    for (profiler, message) in cases {
        let run = runtime.run("CallTarget", &[], Some(&profiler));
        assert_unchanged(&run);
        assert_has(&run, message);
        assert!(probe_lines(&run).is_empty(), "{}", run.describe());
    }
}

/// `call_target` with `helper` in place of the runtime's `CallTargetProbe`.
fn call_target_with_helper(runtime: &Runtime, targets: &str, helper: &Path) -> Profiler {
    let helper = runtime.program_path(helper);
    call_target(runtime, targets)
        .with_env("CORPROF_CALLTARGET_HELPER", helper.as_str())
        .with_env("DOTNET_STARTUP_HOOKS", helper.as_str())
}

fn u16_at(bytes: &[u8], at: usize) -> usize {
    u16::from_le_bytes([bytes[at], bytes[at + 1]]).into()
}

fn u32_at(bytes: &[u8], at: usize) -> usize {
    u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap()) as usize
}

/// A copy of the runtime's `CallTargetProbe.dll` (in a directory of its
/// own, under the same name) whose reference to `assembly` names
/// `version`: a helper compiled against a newer `assembly` than the
/// runtime's. The AssemblyRef row (ECMA-335 II.22.5: version, Flags,
/// PublicKeyOrToken, Name, Culture, HashValue; 2-byte heap indexes in an
/// assembly this small) is found by its Name, an index into the
/// `#Strings` heap (II.24.2.2-24.2.3), and must be the only match.
fn helper_referencing(runtime: &Runtime, assembly: &str, version: [u16; 4]) -> PathBuf {
    let dir = sync_dir(&format!("helper-{assembly}"));
    let path = dir.join("CallTargetProbe.dll");
    let mut bytes = fs::read(helper(runtime)).unwrap();
    let find = |hay: &[u8], needle: &[u8]| -> Vec<usize> {
        hay.windows(needle.len())
            .enumerate()
            .filter(|(_, w)| *w == needle)
            .map(|(i, _)| i)
            .collect()
    };
    let roots = find(&bytes, b"BSJB");
    assert_eq!(roots.len(), 1, "one metadata root in the helper");
    let root = roots[0];
    let mut at = root + 16 + u32_at(&bytes, root + 12) + 2;
    let count = u16_at(&bytes, at);
    at += 2;
    let (mut tables, mut strings) = (None, None);
    for _ in 0..count {
        let (offset, size) = (u32_at(&bytes, at), u32_at(&bytes, at + 4));
        let name_len = bytes[at + 8..].iter().position(|&b| b == 0).unwrap();
        let stream = root + offset..root + offset + size;
        match &bytes[at + 8..at + 8 + name_len] {
            b"#~" => tables = Some(stream),
            b"#Strings" => strings = Some(stream),
            _ => {}
        }
        at += 8 + ((name_len + 4) & !3);
    }
    let (tables, strings) = (tables.unwrap(), strings.unwrap());
    let named = find(
        &bytes[strings.clone()],
        format!("\0{assembly}\0").as_bytes(),
    );
    assert_eq!(named.len(), 1, "{assembly} once in the #Strings heap");
    let name = u16::try_from(named[0] + 1).unwrap().to_le_bytes();
    let rows: Vec<usize> = bytes[tables.clone()]
        .windows(16)
        .enumerate()
        .filter(|(_, row)| row[8..12] == [0; 4] && row[14..16] == name)
        .map(|(i, _)| tables.start + i)
        .collect();
    assert_eq!(rows.len(), 1, "one AssemblyRef row names {assembly}");
    for (n, part) in version.iter().enumerate() {
        bytes[rows[0] + 2 * n..rows[0] + 2 * n + 2].copy_from_slice(&part.to_le_bytes());
    }
    fs::write(&path, bytes).unwrap();
    path
}

#[test]
fn a_helper_built_for_a_newer_runtime_is_refused_before_its_startup_hook_fails() {
    // A helper whose System.Runtime reference is newer than the runtime's
    // cannot load: the host's startup hook dies of it before Main, with or
    // without a profiler. The profiler, which sees System.Private.CoreLib
    // load first, says why and names the remedy before that happens.
    let runtime = dotnet::runtime();
    let helper = helper_referencing(&runtime, "System.Runtime", [99, 0, 0, 0]);
    let path = runtime.program_path(&helper);
    let profiler = call_target_with_helper(&runtime, &spec(ALL_TARGETS), &helper);
    let run = runtime.run("CallTarget", &[], Some(&profiler));
    // The precondition: the runtime could not load the helper.
    let failure = "Could not load file or assembly 'System.Runtime, Version=99.0.0.0";
    assert_has(&run, failure);
    assert!(
        run.stdout.is_empty() && run.code() != Some(EXIT),
        "{}",
        run.describe()
    );
    let refusal = format!(
        "calltarget: not instrumenting: helper {path} references System.Runtime 99.0.0.0, \
         newer than this runtime's "
    );
    assert_has(&run, &refusal);
    assert_has(
        &run,
        "the runtime cannot load the helper (its startup hook fails too), so no call could be \
         wrapped; build it for the oldest runtime it must run on (netcoreapp3.1 loads on every \
         runtime from 3.1 on)",
    );
    assert!(
        run.stderr.find(&refusal) < run.stderr.find(failure),
        "the profiler speaks first\n{}",
        run.describe()
    );
    assert!(
        !run.stderr.contains("calltarget: wrapped"),
        "{}",
        run.describe()
    );
}

#[test]
fn a_helper_built_for_net10_is_refused_by_older_runtimes_and_used_by_newer_ones() {
    // CallTargetProbeNet10: the same helper compiled against .NET 10's
    // reference pack (System.Runtime 10.0.0.0), whatever the runtime.
    let runtime = dotnet::runtime();
    let helper = runtime
        .programs_dir
        .join("CallTargetProbeNet10")
        .join("CallTargetProbe.dll");
    let profiler = call_target_with_helper(&runtime, &spec(&["Program::Add"]), &helper);
    let run = runtime.run("CallTarget", &[], Some(&profiler));
    let refusal = "references System.Runtime 10.0.0.0, newer than this runtime's ";
    if runtime.major() < 10 {
        assert_has(
            &run,
            &format!(
                "calltarget: not instrumenting: helper {}",
                runtime.program_path(&helper)
            ),
        );
        assert_has(&run, refusal);
        assert_has(
            &run,
            "Could not load file or assembly 'System.Runtime, Version=10.0.0.0",
        );
        assert!(probe_lines(&run).is_empty(), "{}", run.describe());
    } else {
        assert_unchanged(&run);
        assert!(!run.stderr.contains(refusal), "{}", run.describe());
        assert!(!run.stderr.contains("newer than"), "{}", run.describe());
        assert_eq!(
            probe_lines(&run),
            [
                "calltarget begin E2E.CallTarget.Program::Add(2, 3)",
                "calltarget end E2E.CallTarget.Program::Add -> 5"
            ],
            "{}",
            run.describe()
        );
    }
}

#[test]
fn a_helper_reference_newer_than_the_runtimes_copy_is_said_and_the_program_runs() {
    // Only System.Console too new: the helper loads (its startup hook and
    // the contract's types need System.Runtime alone), but LogIntegration's
    // probes, which write with System.Console, fail at every call, and the
    // wrapped methods swallow that. The profiler says so at start-up.
    let runtime = dotnet::runtime();
    let helper = helper_referencing(&runtime, "System.Console", [99, 0, 0, 0]);
    let path = runtime.program_path(&helper);
    let profiler = call_target_with_helper(&runtime, &spec(ALL_TARGETS), &helper);
    let run = runtime.run("CallTarget", &[], Some(&profiler));
    assert_unchanged(&run);
    assert_has(
        &run,
        &format!(
            "calltarget: helper {path} references assemblies newer than this runtime's: \
             System.Console 99.0.0.0 (this runtime's: "
        ),
    );
    assert_has(
        &run,
        "unless the application carries those versions, every call of the helper into them \
         fails, and the wrapped methods swallow what their probes throw",
    );
    // The precondition: the methods were wrapped, and no probe ran.
    assert_has(&run, "calltarget: wrapped E2E.CallTarget.Program::Add");
    assert!(probe_lines(&run).is_empty(), "{}", run.describe());
}

#[test]
fn a_helper_that_never_loads_is_said_at_shutdown() {
    // The helper under another file name: the startup hook loads it (as
    // CallTargetProbe), but the profiler references and waits for an
    // assembly named after the file, which never loads.
    let runtime = dotnet::runtime();
    let dir = sync_dir("renamed-helper");
    let renamed = dir.join("Renamed.dll");
    fs::copy(helper(&runtime), &renamed).unwrap();
    let profiler = call_target_with_helper(&runtime, &spec(&["Program::Add"]), &renamed);
    let run = runtime.run("CallTarget", &[], Some(&profiler));
    assert_unchanged(&run);
    assert_has(
        &run,
        &format!(
            "calltarget: the helper Renamed never loaded, so no call was wrapped: its startup \
             hook did not run or failed, or {} holds no assembly named Renamed",
            runtime.program_path(&renamed)
        ),
    );
    assert!(probe_lines(&run).is_empty(), "{}", run.describe());
}

fn sync_dir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("e2e_calltarget")
        .join(format!("{name}-{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).expect("create the sync dir");
    dir
}

#[test]
fn rejit_wraps_add_while_the_program_runs_and_revert_unwraps_it() {
    let runtime = dotnet::runtime();
    let dir = sync_dir("rejit");
    let dir_text = runtime.program_path(&dir);
    let dir_text = dir_text.as_str();
    let profiler = call_target(&runtime, &spec(&["Program::Add"]))
        .with_env("CORPROF_CALLTARGET_REJIT", "1")
        .with_env("CORPROF_CALLTARGET_SYNC_DIR", dir_text);
    let run = runtime.run(
        "CallTarget",
        &["--rejit", "--sync-dir", dir_text, "--timeout-ms", "30000"],
        Some(&profiler),
    );
    assert!(!run.crashed(), "{}", run.describe());
    run.assert_exit(EXIT).assert_stdout(&[
        "rejit: phase 1 sum=15",
        "rejit: phase 2 sum=15",
        "rejit: phase 3 sum=15",
        "done",
    ]);
    let stderr = &run.stderr;
    let at = |needle: &str| {
        stderr
            .find(needle)
            .unwrap_or_else(|| panic!("stderr lacks {needle:?}\n{}", run.describe()))
    };
    let phase1 = at("phase 1 done\n");
    let phase2 = at("phase 2 done\n");
    let phase3 = at("phase 3 done\n");
    // Phase 1: not wrapped; phase 2: wrapped (3 calls); phase 3: reverted.
    let begins = |from: usize, to: usize| {
        stderr[from..to]
            .matches("calltarget begin E2E.CallTarget.Program::Add(2, 3)\n")
            .count()
    };
    assert_eq!(begins(0, phase1), 0, "{}", run.describe());
    assert_eq!(begins(phase1, phase2), 3, "{}", run.describe());
    assert_eq!(begins(phase2, phase3), 0, "{}", run.describe());
    assert_eq!(
        stderr[phase1..phase2]
            .matches("calltarget end E2E.CallTarget.Program::Add -> 5\n")
            .count(),
        3
    );
    let order = [
        at("calltarget: prepared E2E.CallTarget.Program::Add for ReJIT\n"),
        at("calltarget: RequestReJIT of 1 methods succeeded"),
        at("calltarget: ReJIT wrapped E2E.CallTarget.Program::Add\n"),
        at("calltarget: RequestRevert succeeded"),
    ];
    assert!(
        order[0] < phase1 && order[1] > phase1 && order.windows(2).all(|w| w[0] < w[1]),
        "prepared at module load, ReJIT after phase 1\n{}",
        run.describe()
    );
    assert!(order[3] > phase2 && order[3] < phase3, "{}", run.describe());
    assert!(
        !stderr.contains("calltarget: wrapped "),
        "no wrapping at first JIT in ReJIT mode\n{}",
        run.describe()
    );
}

/// `TailCaller`'s body as the C# compiler writes it (tiny header, 11 bytes of code) and
/// as patched: `ldarg.0; ldarg.1; nop; tail. call Add; ret`.
const TAIL_CALLER: [u8; 6] = [0x02, 0x1F, 0x64, 0x03, 0x58, 0x28];
const TAIL_CALLER_PATCHED: [u8; 6] = [0x02, 0x03, 0x00, 0xFE, 0x14, 0x28];

/// A runtime whose `CallTarget` is a copy with `TailCaller` patched to make
/// a `tail.` call (no C# compiler writes one).
fn with_tail_call(runtime: &Runtime) -> Runtime {
    let dir = sync_dir("tail").join("CallTarget");
    fs::create_dir_all(&dir).unwrap();
    for file in ["CallTarget.dll", "CallTarget.runtimeconfig.json"] {
        fs::copy(
            runtime.programs_dir.join("CallTarget").join(file),
            dir.join(file),
        )
        .unwrap();
    }
    let dll = dir.join("CallTarget.dll");
    let mut bytes = fs::read(&dll).unwrap();
    let at: Vec<usize> = bytes
        .windows(TAIL_CALLER.len())
        .enumerate()
        .filter(|(_, w)| *w == TAIL_CALLER)
        .map(|(i, _)| i)
        .collect();
    assert_eq!(at.len(), 1, "TailCaller's code is in the dll exactly once");
    // The tiny header before it: 11 bytes of code.
    assert_eq!(bytes[at[0] - 1], (11 << 2) | 2);
    bytes[at[0]..at[0] + TAIL_CALLER.len()].copy_from_slice(&TAIL_CALLER_PATCHED);
    fs::write(&dll, bytes).unwrap();
    Runtime {
        programs_dir: dir.parent().unwrap().to_path_buf(),
        ..runtime.clone()
    }
}

#[test]
fn a_tail_call_is_wrapped_without_its_prefix() {
    let runtime = dotnet::runtime();
    let patched = with_tail_call(&runtime);
    let tail_output: Vec<&str> = OUTPUT
        .iter()
        .map(|l| if *l == "tail=103" { "tail=3" } else { l })
        .collect();
    // Precondition: the patched copy runs and makes the tail call.
    let plain = patched.run("CallTarget", &[], None);
    plain.assert_exit(EXIT).assert_stdout(&tail_output);
    let profiler = call_target(&runtime, &spec(&["Program::TailCaller", "Program::Plus"]));
    let run = patched.run("CallTarget", &[], Some(&profiler));
    assert!(!run.crashed(), "{}", run.describe());
    run.assert_exit(EXIT).assert_stdout(&tail_output);
    assert_has(
        &run,
        "calltarget: wrapped E2E.CallTarget.Program::TailCaller\n",
    );
    let lines = probe_lines(&run);
    let at = lines
        .iter()
        .position(|l| l.contains("TailCaller"))
        .expect("TailCaller's probes ran");
    assert_eq!(
        lines[at..],
        [
            "calltarget begin E2E.CallTarget.Program::TailCaller(1, 2)",
            "calltarget begin E2E.CallTarget.Program::Plus(1, 2)",
            "calltarget end E2E.CallTarget.Program::Plus -> 3",
            "calltarget end E2E.CallTarget.Program::TailCaller -> 3",
        ],
        "{}",
        run.describe()
    );
}

/// A method with a hot loop, wrapped under the runtime's default tiering:
/// on .NET 8 the runtime compiles it again by on-stack replacement, from the
/// wrapped IL (the profiler says so and does not wrap it twice), and the
/// program's output is unchanged: one begin and one end per call. On 3.1 a
/// method with a loop is compiled once.
#[test]
fn a_hot_loop_wrapped_under_default_tiering_runs_unchanged() {
    let runtime = dotnet::runtime();
    const N: i32 = 3_000_000;
    let total: i64 = (0..N).map(|i| i64::from(i % 7)).sum();
    let helper = runtime.program_path(&helper(&runtime));
    let profiler = Profiler::new(dotnet::build_example("call_target").unwrap(), CALL_TARGET)
        .with_env("CORPROF_CALLTARGET", "Rewrite!E2E.Rewrite.Program::HotLoop")
        .with_env("CORPROF_CALLTARGET_HELPER", &helper)
        .with_env("DOTNET_STARTUP_HOOKS", &helper);
    let run = runtime.run("Rewrite", &["--hot-loop", &N.to_string()], Some(&profiler));
    run.assert_exit(43).assert_stdout(&[
        &format!("hot loop total={total}"),
        &format!("hot loop again total={total}"),
        "hits=0",
        "done",
    ]);
    let end = format!("calltarget end E2E.Rewrite.Program::HotLoop -> {total}");
    let begin = format!("calltarget begin E2E.Rewrite.Program::HotLoop({N})");
    assert_eq!(
        probe_lines(&run),
        [&begin, &end, &begin, &end],
        "{}",
        run.describe()
    );
    let again = run
        .stderr
        .lines()
        .filter(|l| l.contains("JIT-compiled again: it keeps its wrapped IL"))
        .count();
    if runtime.major() == 3 {
        assert_eq!(
            again, 0,
            "CoreCLR 3.1 compiles HotLoop once:\n{}",
            run.stderr
        );
    } else {
        assert!(
            again >= 1,
            ".NET 8 compiles HotLoop again (OSR):\n{}",
            run.stderr
        );
    }
}

/// `OUTPUT` with the line `from` replaced by `to`.
fn output_with(from: &str, to: &str) -> Vec<&'static str> {
    let to: &'static str = Box::leak(to.to_string().into_boxed_str());
    OUTPUT
        .iter()
        .map(|l| if *l == from { to } else { *l })
        .collect()
}

#[test]
fn an_integration_changes_an_argument_and_replaces_the_return_value() {
    // ChangeIntegration (tests/e2e/programs/CallTargetProbe): Add's `a`
    // += 100 through its `ref`, the result + 1000 through
    // CallTargetReturn<int>; Fail keeps the default LogIntegration.
    let runtime = dotnet::runtime();
    let targets = format!(
        "CallTarget!E2E.CallTarget.Program::Add=E2E.CallTargetTest.ChangeIntegration;{}",
        spec(&["Program::Fail"])
    );
    let run = runtime.run("CallTarget", &[], Some(&call_target(&runtime, &targets)));
    assert!(!run.crashed(), "{}", run.describe());
    // Add(2, 3) = (2 + 100) + 3, replaced by 105 + 1000.
    run.assert_exit(EXIT)
        .assert_stdout(&output_with("add=5", "add=1105"));
    assert_has(&run, "calltarget: wrapped E2E.CallTarget.Program::Add\n");
    assert_eq!(
        probe_lines(&run),
        [
            "calltarget begin E2E.CallTarget.Program::Fail(boom)",
            "calltarget exception E2E.CallTarget.Program::Fail System.InvalidOperationException",
        ],
        "{}",
        run.describe()
    );
}

#[test]
fn exceptions_of_the_integration_never_reach_the_program() {
    // ThrowingIntegration throws from every OnMethodBegin (0 to 2
    // arguments) and OnMethodEnd; the program's own exceptions (Fail,
    // Thrower(-1), Rethrows) still reach it unchanged.
    let runtime = dotnet::runtime();
    let wrapped = [
        "Program::Add",
        "Greeter::Greet",
        "Program::Fail",
        "Program::Fib",
        "Program::Thrower",
        "Program::Rethrows",
        "Program::Echo",
        "Holder`1::Get",
        "Point::Sum",
    ];
    let profiler = call_target(&runtime, &spec(&wrapped)).with_env(
        "CORPROF_CALLTARGET_INTEGRATION",
        "E2E.CallTargetTest.ThrowingIntegration",
    );
    let run = runtime.run("CallTarget", &[], Some(&profiler));
    assert_unchanged(&run);
    for target in wrapped {
        assert_has(
            &run,
            &format!("calltarget: wrapped E2E.CallTarget.{target}\n"),
        );
    }
    assert!(!run.stderr.contains("left unchanged"), "{}", run.describe());
}

#[test]
fn the_counting_and_noop_integrations_see_every_call() {
    let runtime = dotnet::runtime();
    let counting = call_target(&runtime, &spec(ALL_TARGETS)).with_env(
        "CORPROF_CALLTARGET_INTEGRATION",
        "CorProf.CallTarget.CountingIntegration",
    );
    let run = runtime.run("CallTarget", &[], Some(&counting));
    assert_unchanged(&run);
    assert!(probe_lines(&run).is_empty(), "{}", run.describe());
    // As LogIntegration sees them (the first test): 42 calls, three of
    // which end in an exception (Fail, Thrower(-1), Rethrows).
    let counts: Vec<&str> = run
        .stderr
        .lines()
        .filter(|l| l.starts_with("calltarget counts "))
        .collect();
    assert_eq!(
        counts,
        ["calltarget counts begin 42 end 42 exception 3"],
        "{}",
        run.describe()
    );

    let noop = call_target(&runtime, &spec(ALL_TARGETS)).with_env(
        "CORPROF_CALLTARGET_INTEGRATION",
        "CorProf.CallTarget.NoopIntegration",
    );
    let run = runtime.run("CallTarget", &[], Some(&noop));
    assert_unchanged(&run);
    for target in ALL_TARGETS {
        assert_has(
            &run,
            &format!("calltarget: wrapped E2E.CallTarget.{target}\n"),
        );
    }
    assert!(
        !run.stderr.contains("calltarget counts") && probe_lines(&run).is_empty(),
        "{}",
        run.describe()
    );
}

#[test]
fn missing_integrations_and_shapes_are_reported_once_and_left_unwrapped() {
    let runtime = dotnet::runtime();
    // No.Such does not exist (two targets name it: one report); EndOnly
    // has only the void OnMethodEnd and an OnMethodBegin of another
    // shape (reported, never called).
    let targets = [
        "CallTarget!E2E.CallTarget.Program::Add=No.Such",
        "CallTarget!E2E.CallTarget.Program::Fail=No.Such",
        "CallTarget!E2E.CallTarget.Program::Describe=E2E.CallTargetTest.EndOnlyIntegration",
        "CallTarget!E2E.CallTarget.Greeter::Greet=E2E.CallTargetTest.EndOnlyIntegration",
    ]
    .join(";");
    let run = runtime.run("CallTarget", &[], Some(&call_target(&runtime, &targets)));
    assert_unchanged(&run);
    let reports = run
        .stderr
        .matches("calltarget: integration No.Such: no integration type No.Such in the helper")
        .count();
    assert_eq!(reports, 1, "{}", run.describe());
    assert_has(&run, "; its targets stay unwrapped\n");
    assert_has(
        &run,
        "calltarget: integration E2E.CallTargetTest.EndOnlyIntegration: ignored OnMethodBegin`2(2 parameters)",
    );
    assert_eq!(
        run.stderr
            .matches("ignored OnMethodBegin`2(2 parameters)")
            .count(),
        1,
        "{}",
        run.describe()
    );
    assert_has(
        &run,
        "calltarget: left unchanged: E2E.CallTarget.Program.Describe: integration E2E.CallTargetTest.EndOnlyIntegration has no OnMethodEnd for a non-void method and no OnMethodBegin\n",
    );
    // Greet is void: wrapped with the end probe alone.
    assert_has(&run, "calltarget: wrapped E2E.CallTarget.Greeter::Greet\n");
    assert_eq!(
        run.stderr.matches("calltarget endonly ok\n").count(),
        1,
        "{}",
        run.describe()
    );
    for unwrapped in ["Program::Add", "Program::Fail", "Program::Describe"] {
        assert!(
            !run.stderr
                .contains(&format!("calltarget: wrapped E2E.CallTarget.{unwrapped}\n")),
            "{unwrapped}\n{}",
            run.describe()
        );
    }
    assert!(probe_lines(&run).is_empty(), "{}", run.describe());
}

/// The value of `key=` in CallTargetBench's line.
#[track_caller]
fn bench_field(run: &RunOutput, key: &str) -> u64 {
    assert!(!run.crashed(), "{}", run.describe());
    run.assert_exit(0);
    let line = run
        .stdout
        .lines()
        .find(|l| l.starts_with("calls="))
        .unwrap_or_else(|| panic!("no result line\n{}", run.describe()));
    line.split(' ')
        .find_map(|f| f.strip_prefix(key)?.strip_prefix('='))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no {key}= in {line:?}"))
}

/// `allocated=N` of CallTargetBench's line.
#[track_caller]
fn allocated(run: &RunOutput) -> u64 {
    bench_field(run, "allocated")
}

/// `warmup_calls=N` of CallTargetBench's line.
#[track_caller]
fn warmup_calls(run: &RunOutput) -> u64 {
    bench_field(run, "warmup_calls")
}

#[test]
fn noop_and_counting_integrations_allocate_nothing_per_call() {
    // The allocation guard (docs/performance.md): CallTargetBench calls
    // `NoInlining int Add(int, int)` CALLS times and prints the bytes its
    // thread allocated meanwhile (GC.GetAllocatedBytesForCurrentThread).
    // Wrapped for NoopIntegration and CountingIntegration, with inlining
    // on (the default) and off, it must allocate exactly what it does
    // unwrapped: not one byte per call.
    const CALLS: u64 = 1_000_000;
    let runtime = dotnet::runtime();
    let calls = CALLS.to_string();
    let bench = |target: &str, integration: &str, disable_inlining: &str, extra: &[&str]| {
        let profiler = call_target(
            &runtime,
            &format!("CallTargetBench!E2E.CallTargetBench.Program::{target}"),
        )
        .with_env("CORPROF_CALLTARGET_INTEGRATION", integration)
        .with_env("CORPROF_CALLTARGET_DISABLE_INLINING", disable_inlining);
        let mut args = vec![calls.as_str(), "--warmup-rounds", "1"];
        args.extend_from_slice(extra);
        runtime.run("CallTargetBench", &args, Some(&profiler))
    };
    // Precondition: the meter sees one box per call.
    let boxed = bench(
        "Unused",
        "CorProf.CallTarget.NoopIntegration",
        "0",
        &["--box"],
    );
    assert!(allocated(&boxed) >= 24 * CALLS, "{}", boxed.describe());
    for disable_inlining in ["0", "1"] {
        let plain = bench(
            "Unused",
            "CorProf.CallTarget.NoopIntegration",
            disable_inlining,
            &[],
        );
        let baseline = allocated(&plain);
        assert!(baseline < 1024, "{}", plain.describe());
        assert!(
            !plain.stderr.contains("calltarget: wrapped"),
            "{}",
            plain.describe()
        );
        for integration in ["NoopIntegration", "CountingIntegration"] {
            let run = bench(
                "Add",
                &format!("CorProf.CallTarget.{integration}"),
                disable_inlining,
                &[],
            );
            assert_has(
                &run,
                "calltarget: wrapped E2E.CallTargetBench.Program::Add\n",
            );
            assert_eq!(
                allocated(&run),
                baseline,
                "{integration} (inlining disabled: {disable_inlining}) allocated per call\n{}",
                run.describe()
            );
            if integration == "CountingIntegration" {
                // Warm-up and measured calls all went through it.
                let line = format!(
                    "calltarget counts begin {n} end {n} exception 0\n",
                    n = CALLS + warmup_calls(&run)
                );
                assert_has(&run, &line);
            }
        }
    }
}

/// What `CallTargetAsync` prints without a profiler.
const ASYNC_OUTPUT: &[&str] = &[
    "compute=42",
    "fault=bad",
    "faulted=True,1,InvalidOperationException",
    "paused",
    "quick=2",
    "later=x!",
    "eager=negative",
    "cancelled=True",
];

#[test]
fn async_methods_end_when_their_task_completes() {
    // LogIntegration's OnAsyncMethodEnd runs when the task completes: with
    // the awaited value (not the Task), `void` for Task, the fault of a
    // faulting task; the awaited tasks behave as unprofiled (same values,
    // same exception, same single inner exception, same cancellation).
    let runtime = dotnet::runtime();
    let plain = runtime.run("CallTargetAsync", &[], None);
    plain.assert_exit(45).assert_stdout(ASYNC_OUTPUT);
    let targets = [
        "Compute",
        "Pause",
        "Fault",
        "Quick",
        "Later",
        "Eager",
        "Cancelled",
    ]
    .iter()
    .map(|m| format!("CallTargetAsync!E2E.CallTargetAsync.Program::{m}"))
    .collect::<Vec<_>>()
    .join(";");
    let profiler = call_target(&runtime, &targets).with_env("CORPROF_CALLTARGET_VERBOSE", "1");
    let run = runtime.run("CallTargetAsync", &[], Some(&profiler));
    assert!(!run.crashed(), "{}", run.describe());
    run.assert_exit(45).assert_stdout(ASYNC_OUTPUT);
    assert!(!run.stderr.contains("left unchanged"), "{}", run.describe());
    assert_eq!(assert_balanced(&run), 8, "{}", run.describe());
    let p = "E2E.CallTargetAsync.Program";
    assert_eq!(
        probe_lines(&run),
        [
            format!("calltarget begin {p}::Compute(21)"),
            format!("calltarget end {p}::Compute -> 42"),
            format!("calltarget begin {p}::Fault(bad)"),
            format!("calltarget exception {p}::Fault System.InvalidOperationException"),
            format!("calltarget begin {p}::Fault(again)"),
            format!("calltarget exception {p}::Fault System.InvalidOperationException"),
            format!("calltarget begin {p}::Pause(5)"),
            format!("calltarget end {p}::Pause -> void"),
            format!("calltarget begin {p}::Quick(1)"),
            format!("calltarget end {p}::Quick -> 2"),
            format!("calltarget begin {p}::Later(x)"),
            format!("calltarget end {p}::Later -> x!"),
            // Thrown before any task: at once, through OnAsyncMethodEnd.
            format!("calltarget begin {p}::Eager(-1)"),
            format!("calltarget exception {p}::Eager System.ArgumentException"),
            format!("calltarget begin {p}::Cancelled()"),
            format!(
                "calltarget exception {p}::Cancelled System.Threading.Tasks.TaskCanceledException"
            ),
        ],
        "{}",
        run.describe()
    );
    // The end goes through CallTargetAsync with a delegate to
    // OnAsyncMethodEnd (ldftn of a MethodSpec), not OnMethodEnd.
    let compute = listing(&run, &format!("{p}::Compute"));
    assert!(compute.contains("ldftn 0x2B"), "{compute}");
    assert!(compute.contains("newobj 0x0A"), "{compute}");
}

fn runtime_async_targets() -> String {
    RUNTIME_ASYNC_METHODS
        .iter()
        .map(|m| format!("RuntimeAsync!E2E.RuntimeAsync.Program::{m}"))
        .collect::<Vec<_>>()
        .join(";")
}

#[test]
fn runtime_async_methods_end_once_with_the_awaited_value_across_suspensions() {
    // Runtime-async methods (found by their MethodImplAttributes.Async, not
    // by name): begin once per call, OnAsyncMethodEnd once per call with
    // the value the body returned after its awaits (`void` for Task), or
    // the exception thrown after an await, which the caller still catches;
    // the program's output is unchanged.
    let runtime = dotnet::runtime();
    let profiler =
        call_target(&runtime, &runtime_async_targets()).with_env("CORPROF_CALLTARGET_VERBOSE", "1");
    let Some(run) = run_runtime_async(&runtime, &profiler, RUNTIME_ASYNC_CALLS) else {
        return;
    };
    assert!(!run.stderr.contains("left unchanged"), "{}", run.describe());
    assert_eq!(
        assert_balanced(&run),
        RUNTIME_ASYNC_METHODS.len() * RUNTIME_ASYNC_CALLS,
        "{}",
        run.describe()
    );
    let p = "E2E.RuntimeAsync.Program";
    let mut expected = Vec::new();
    for i in 0..RUNTIME_ASYNC_CALLS {
        expected.extend([
            format!("calltarget begin {p}::Twice({})", i + 20),
            format!("calltarget end {p}::Twice -> {}", (i + 20) * 2),
            format!("calltarget begin {p}::Shout(hi{i})"),
            format!("calltarget end {p}::Shout -> hi{i}!"),
            format!("calltarget begin {p}::Pause(1)"),
            format!("calltarget end {p}::Pause -> void"),
            format!("calltarget begin {p}::Fail(bad{i})"),
            format!("calltarget exception {p}::Fail System.InvalidOperationException"),
            // Generic: TResult is the method's T (`!!0`), here string.
            format!("calltarget begin {p}::Echo(e{i})"),
            format!("calltarget end {p}::Echo -> e{i}"),
            format!("calltarget begin {p}::Tick(2)"),
            format!("calltarget end {p}::Tick -> void"),
        ]);
    }
    assert_eq!(probe_lines(&run), expected, "{}", run.describe());
    // OnAsyncMethodEnd is called directly: no continuation, no delegate.
    for m in RUNTIME_ASYNC_METHODS {
        let il = listing(&run, &format!("{p}::{m}"));
        assert!(!il.contains("ldftn"), "{il}");
    }
}

#[test]
fn runtime_async_methods_are_counted_exactly_at_the_default_settings() {
    // Tiered compilation on (the async variant and the Task-returning
    // thunk of each method compiled at tier 0, "JIT-compiled again", and
    // again at tier 1 when the runtime gets to it; the variant always from
    // the wrapped IL), many calls resuming on pool threads: every call has
    // one begin and one end; OnAsyncMethodEnd counts on the thread the body
    // completes on.
    let runtime = dotnet::runtime();
    let calls = 200;
    let profiler = call_target_at_defaults(&runtime, &runtime_async_targets()).with_env(
        "CORPROF_CALLTARGET_INTEGRATION",
        "CorProf.CallTarget.CountingIntegration",
    );
    let Some(run) = run_runtime_async(&runtime, &profiler, calls) else {
        return;
    };
    assert!(!run.stderr.contains("left unchanged"), "{}", run.describe());
    let calls = calls * RUNTIME_ASYNC_METHODS.len();
    let failed = calls / RUNTIME_ASYNC_METHODS.len();
    assert_has(
        &run,
        &format!("calltarget counts begin {calls} end {calls} exception {failed}\n"),
    );
}

#[test]
fn runtime_async_methods_fall_back_to_the_synchronous_end_with_the_awaited_value() {
    // An integration without OnAsyncMethodEnd: the synchronous OnMethodEnd
    // gets the body's value and its type (int, string; the non-generic end
    // for Task), or the exception; one that throws from every probe changes
    // nothing the program sees.
    let runtime = dotnet::runtime();
    let profiler = call_target(&runtime, &runtime_async_targets()).with_env(
        "CORPROF_CALLTARGET_INTEGRATION",
        "E2E.CallTargetTest.SyncEndIntegration",
    );
    let Some(run) = run_runtime_async(&runtime, &profiler, 2) else {
        return;
    };
    assert!(!run.stderr.contains("left unchanged"), "{}", run.describe());
    let ends: Vec<&str> = run
        .stderr
        .lines()
        .filter(|l| l.starts_with("calltarget syncend "))
        .collect();
    let mut expected = Vec::new();
    for i in 0..2 {
        expected.extend([
            format!("calltarget syncend System.Int32 {}", (i + 20) * 2),
            format!("calltarget syncend System.String hi{i}!"),
            "calltarget syncend void -".to_string(),
            "calltarget syncend System.Int32 System.InvalidOperationException".to_string(),
            format!("calltarget syncend System.String e{i}"),
            "calltarget syncend void -".to_string(),
        ]);
    }
    assert_eq!(ends, expected, "{}", run.describe());

    let profiler = call_target(&runtime, &runtime_async_targets()).with_env(
        "CORPROF_CALLTARGET_INTEGRATION",
        "E2E.CallTargetTest.ThrowingIntegration",
    );
    let run = run_runtime_async(&runtime, &profiler, 2).expect("11.0 ran it above");
    for m in RUNTIME_ASYNC_METHODS {
        assert_has(
            &run,
            &format!("calltarget: wrapped E2E.RuntimeAsync.Program::{m}\n"),
        );
    }
}

/// The Kestrel and hosting methods of [`a_web_servers_runtime_async_framework_methods_are_wrapped`].
const PROCESS_REQUESTS: &str =
    "Microsoft.AspNetCore.Server.Kestrel.Core.Internal.HttpConnection::ProcessRequestsAsync";
const START: &str = "Microsoft.AspNetCore.Hosting.GenericWebHostService::StartAsync";

#[test]
fn a_web_servers_runtime_async_framework_methods_are_wrapped() {
    // ASP.NET Core 11.0 compiles Kestrel's HttpConnection.ProcessRequestsAsync
    // (once per connection) and GenericWebHostService.StartAsync (once per
    // server) with runtime async; earlier versions as state machines. At
    // the runtime's defaults (their ReadyToRun code set aside, or ReJIT),
    // under wrk, each is wrapped and every call has one begin and one end,
    // no exception, on every runtime.
    let runtime = dotnet::runtime();
    let profiler = call_target_at_defaults(
        &runtime,
        &format!(
            "Microsoft.AspNetCore.Server.Kestrel.Core!{PROCESS_REQUESTS};\
             Microsoft.AspNetCore.Hosting!{START}"
        ),
    )
    .with_env("CORPROF_CALLTARGET_VERBOSE", "1");
    let server = WebServer::start(&runtime, Some(&profiler));
    let connections = 16;
    let load = wrk(&server.url("/json"), 2, connections, 3);
    assert!(load.requests > 1000, "{load:?}");
    assert_eq!((load.non_2xx, load.socket_errors), (0, 0), "{load:?}");
    let stopped = server.stop();
    let describe = format!("{stopped:?}");
    assert_eq!(stopped.status.code(), Some(0), "{describe}");
    let lines: Vec<&str> = stopped.stderr.lines().collect();
    let count = |prefix: &str| lines.iter().filter(|l| l.starts_with(prefix)).count();
    for method in [PROCESS_REQUESTS, START] {
        let short = method.replace("::", ".");
        assert!(
            lines
                .iter()
                .any(|l| *l == format!("calltarget: wrapped {method}")
                    || *l == format!("calltarget: ReJIT wrapped {method}")),
            "{method} wrapped: {describe}"
        );
        // What the profiler read of its flags: on 11.0 the body returns
        // nothing (Task), so OnAsyncMethodEnd is called in place; earlier,
        // through CallTargetAsync's continuation.
        let probes = lines
            .iter()
            .find(|l| l.starts_with(&format!("calltarget: {method}: Probes {{")))
            .unwrap_or_else(|| panic!("no listing of {method}: {describe}"));
        let in_place = probes.contains("continuation: None");
        assert_eq!(in_place, runtime.major() >= 11, "{short}: {probes}");
        assert_eq!(
            count(&format!("calltarget exception {method}")),
            0,
            "{describe}"
        );
    }
    assert!(!stopped.stderr.contains("left unchanged"), "{describe}");
    assert_eq!(
        count(&format!("calltarget begin {START}(")),
        1,
        "{describe}"
    );
    assert_eq!(
        count(&format!("calltarget end {START} -> void")),
        1,
        "{describe}"
    );
    let begins = count(&format!("calltarget begin {PROCESS_REQUESTS}("));
    let ends = count(&format!("calltarget end {PROCESS_REQUESTS} -> void"));
    assert!(
        begins >= connections as usize,
        "{begins} connections: {describe}"
    );
    assert_eq!(begins, ends, "{describe}");
}

#[test]
fn runtime_async_methods_are_rejitted_while_the_program_runs_and_reverted() {
    // ReJIT mode with the handshake: phase 1 runs the methods unwrapped
    // (compiled), the ReJIT requested after it wraps them for phase 2, the
    // revert after phase 2 unwraps them for phase 3. For a runtime-async
    // method the ReJIT must reach the async variant (which runs the body),
    // not only the Task-returning thunk the token names.
    let runtime = dotnet::runtime();
    let dir = sync_dir("rejit-runtime-async");
    let dir_text = runtime.program_path(&dir);
    let dir_text = dir_text.as_str();
    let profiler = call_target(&runtime, &runtime_async_targets())
        .with_env("CORPROF_CALLTARGET_REJIT", "1")
        .with_env("CORPROF_CALLTARGET_SYNC_DIR", dir_text);
    let run = runtime.run("RuntimeAsync", &["--sync-dir", dir_text], Some(&profiler));
    if runtime.major() < 11 {
        assert_eq!(run.signal(), Some(6), "{}", run.describe()); // refused, as above
        return;
    }
    assert!(!run.crashed(), "{}", run.describe());
    let mut expected: Vec<String> = runtime_async_output(0)[..RUNTIME_ASYNC_METHODS.len()].to_vec();
    for phase in 1..=3 {
        expected.extend(["shout=hi0!", "fail=bad0", "echo=e0"].map(String::from));
        expected.push(format!("phase {phase} sum=40"));
    }
    let expected: Vec<&str> = expected.iter().map(String::as_str).collect();
    run.assert_exit(0).assert_stdout(&expected);
    let stderr = &run.stderr;
    let at = |needle: &str| {
        stderr
            .find(needle)
            .unwrap_or_else(|| panic!("stderr lacks {needle:?}\n{}", run.describe()))
    };
    let phases = [
        0,
        at("phase 1 done\n"),
        at("phase 2 done\n"),
        at("phase 3 done\n"),
    ];
    let begins: Vec<usize> = phases
        .windows(2)
        .map(|w| stderr[w[0]..w[1]].matches("calltarget begin ").count())
        .collect();
    let ends: Vec<usize> = phases
        .windows(2)
        .map(|w| {
            stderr[w[0]..w[1]].matches("calltarget end ").count()
                + stderr[w[0]..w[1]].matches("calltarget exception ").count()
        })
        .collect();
    let n = RUNTIME_ASYNC_METHODS.len();
    assert_eq!(
        (begins, ends),
        (vec![0, n, 0], vec![0, n, 0]),
        "{}",
        run.describe()
    );
    assert!(
        stderr.contains("calltarget: RequestRevert succeeded"),
        "{}",
        run.describe()
    );
}
