//! Info calls made where the runtime refuses them, on a real CoreCLR:
//! `tests/fixtures/call_sequence.rs` tries them from `Initialize`, from
//! `ModuleLoadFinished`, from `GarbageCollectionStarted` and from a thread
//! of its own, and logs what the facade returned (`Ok`, or `Err(code)`
//! formatted with `Display`). These results are what `docs/safety.md`
//! cites. See docs/e2e.md for provisioning.

// The real-runtime harness (tests/common/dotnet.rs) is Unix only.
#![cfg(unix)]

mod common;

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

use common::dotnet::{self, Profiler};
use common::expected::BASICS;
use corprof::profiling::{
    CORPROF_E_CALL_ONLY_FROM_INIT, CORPROF_E_NOT_MANAGED_THREAD, CORPROF_E_REJIT_NOT_ENABLED,
    CORPROF_E_UNSUPPORTED_CALL_SEQUENCE,
};
use corprof::{E_FAIL, HRESULT};

const CALL_SEQUENCE: &str = "8E2B7C4D-1F3A-4B6E-9D5C-7A0F2E4B6C81";

/// Runs Basics under the profiler and returns its log as
/// experiment -> outcome (`ok ...` / `err ...`), and the raw text.
fn run_experiments() -> (BTreeMap<String, String>, String) {
    let runtime = dotnet::runtime();
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("e2e_call_sequence");
    fs::create_dir_all(&dir).expect("create scratch dir");
    let log_file = dir.join(format!("log-{}.txt", std::process::id()));
    let _ = fs::remove_file(&log_file);
    let library = dotnet::build_example("call_sequence")
        .unwrap_or_else(|error| panic!("building example call_sequence: {error}"));
    let profiler = Profiler::new(library, CALL_SEQUENCE)
        .with_env("CALL_SEQUENCE_OUTPUT", log_file.to_str().unwrap());
    let run = runtime.run("Basics", &[], Some(&profiler));
    run.assert_exit(42).assert_stdout(BASICS);
    let text =
        fs::read_to_string(&log_file).unwrap_or_else(|e| panic!("no log: {e}\n{}", run.describe()));
    let outcomes = text
        .lines()
        .filter_map(|line| line.split_once(": "))
        .map(|(experiment, outcome)| (experiment.to_string(), outcome.to_string()))
        .collect();
    (outcomes, text)
}

/// The one run all tests read (the profiled program runs once per process).
fn experiments() -> &'static (BTreeMap<String, String>, String) {
    static RUN: std::sync::OnceLock<(BTreeMap<String, String>, String)> =
        std::sync::OnceLock::new();
    RUN.get_or_init(run_experiments)
}

#[track_caller]
fn outcome(experiment: &str) -> &'static str {
    let (outcomes, text) = experiments();
    outcomes
        .get(experiment)
        .unwrap_or_else(|| panic!("experiment {experiment:?} did not run:\n{text}"))
}

/// Asserts the experiment failed with exactly `code`, and that the line is
/// the facade's `Display` of it: the code's name, hex value and meaning.
#[track_caller]
fn assert_refused(experiment: &str, code: HRESULT, name: &str) {
    let got = outcome(experiment);
    assert_eq!(got, format!("err {code}"), "{experiment}");
    assert!(got.contains(name), "{experiment}: {got}");
    assert!(
        got.contains(&format!("(0x{:08X})", code.0 as u32)),
        "{experiment}: {got}"
    );
    assert!(
        got.len() > format!("err {name} (0x00000000): ").len(),
        "{experiment}: the meaning follows the name: {got}"
    );
}

#[test]
fn the_log_is_complete_and_ends_at_shutdown() {
    let (outcomes, text) = experiments();
    assert_eq!(text.lines().last(), Some("shutdown"), "{text}");
    let probes = [
        "current_thread",
        "function_info",
        "function_name",
        "class_name",
        "module_info",
        "module_metadata",
        "modules",
        "event_mask",
    ];
    let mut expected: Vec<String> = [
        "initialize.set_event_mask",
        "module_load.set_event_mask_immutable",
        "module_load.set_event_mask_mutable",
        "module_load.set_event_mask_restore",
        "module_load.set_enter_leave_hooks",
        "module_load.request_rejit",
        "gc_started.request_rejit",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    for place in ["gc_started", "native_thread"] {
        expected.extend(probes.iter().map(|probe| format!("{place}.{probe}")));
    }
    expected.sort();
    let got: Vec<String> = outcomes.keys().cloned().collect();
    assert_eq!(
        got, expected,
        "every experiment wrote one line (a line `native_thread: ...` means the thread failed):\n{text}"
    );
}

#[test]
fn initialize_may_set_any_flag() {
    assert_eq!(outcome("initialize.set_event_mask"), "ok");
}

#[test]
fn an_immutable_flag_after_initialize_is_refused_with_e_fail() {
    // CoreCLR answers E_FAIL, not CORPROF_E_IMMUTABLE_FLAGS_SET (that code
    // is RequestProfilerDetach's); its source says so: "FUTURE: Should we
    // have a dedicated HRESULT for setting immutable flag?".
    assert_refused("module_load.set_event_mask_immutable", E_FAIL, "E_FAIL");
    // Mutable flags may change in any callback.
    assert_eq!(outcome("module_load.set_event_mask_mutable"), "ok");
    assert_eq!(outcome("module_load.set_event_mask_restore"), "ok");
}

#[test]
fn enter_leave_hooks_after_initialize_are_refused() {
    assert_refused(
        "module_load.set_enter_leave_hooks",
        CORPROF_E_CALL_ONLY_FROM_INIT,
        "CORPROF_E_CALL_ONLY_FROM_INIT",
    );
}

#[test]
fn rejit_without_enable_rejit_is_refused() {
    assert_refused(
        "module_load.request_rejit",
        CORPROF_E_REJIT_NOT_ENABLED,
        "CORPROF_E_REJIT_NOT_ENABLED",
    );
}

#[test]
fn calls_that_may_trigger_a_gc_are_refused_inside_garbage_collection_started() {
    for experiment in ["gc_started.modules", "gc_started.request_rejit"] {
        assert_refused(
            experiment,
            CORPROF_E_UNSUPPORTED_CALL_SEQUENCE,
            "CORPROF_E_UNSUPPORTED_CALL_SEQUENCE",
        );
    }
    // Calls that cannot trigger a GC work there.
    assert_eq!(
        outcome("gc_started.function_name"),
        "ok E2E.Basics.Program.Main"
    );
    assert_eq!(outcome("gc_started.class_name"), "ok E2E.Basics.Program");
    for experiment in [
        "gc_started.current_thread",
        "gc_started.function_info",
        "gc_started.module_metadata",
        "gc_started.event_mask",
    ] {
        assert!(
            outcome(experiment).starts_with("ok"),
            "{experiment}: {}",
            outcome(experiment)
        );
    }
    assert!(outcome("gc_started.module_info").ends_with("Basics.dll"));
}

#[test]
fn a_profiler_thread_may_call_the_runtime_but_is_no_managed_thread() {
    assert_refused(
        "native_thread.current_thread",
        CORPROF_E_NOT_MANAGED_THREAD,
        "CORPROF_E_NOT_MANAGED_THREAD",
    );
    // Outside every callback, on a thread the runtime does not know, the
    // calls refused inside GarbageCollectionStarted are allowed.
    assert!(
        outcome("native_thread.modules").ends_with(" modules")
            && outcome("native_thread.modules").starts_with("ok"),
        "{}",
        outcome("native_thread.modules")
    );
    assert_eq!(
        outcome("native_thread.function_name"),
        "ok E2E.Basics.Program.Main"
    );
}
