//! The end-to-end harness and the C# test programs on a real CoreCLR, without
//! a profiler: each program's exact output and exit code, and the harness's
//! timeout, crash and environment handling. See docs/e2e.md.

// The real-runtime harness (tests/common/dotnet.rs) is Unix only.
#![cfg(unix)]

mod common;

use common::dotnet::{self, Profiler, RunOutput, Runtime};
use std::fs;
use std::path::{Path, PathBuf};
use std::thread;
use std::time::{Duration, Instant};

fn rt() -> Runtime {
    dotnet::runtime()
}

/// A fresh empty directory under cargo's temporary directory for tests.
fn scratch_dir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("e2e_runtime")
        .join(format!("{name}-{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).expect("create scratch dir");
    dir
}

use common::expected::{BASICS, REWRITE};

const REJIT: &[&str] = &[
    "rejit: phase 1 answer=41",
    "rejit: phase 2 answer=41",
    "rejit: phase 3 answer=41",
    "done",
];

/// Attribute `attribute` of the runtime `name` in tests/e2e/runtimes.props,
/// read here independently of the provisioning script.
fn pinned_attribute(name: &str, attribute: &str) -> String {
    let pins = fs::read_to_string(dotnet::repo_root().join("tests/e2e/runtimes.props"))
        .expect("tests/e2e/runtimes.props");
    let line = pins
        .lines()
        .find(|l| l.contains("<CorprofRuntime ") && l.contains(&format!("Include=\"{name}\"")))
        .unwrap_or_else(|| panic!("runtimes.props pins no runtime {name}"));
    let start = line
        .find(&format!(" {attribute}=\""))
        .unwrap_or_else(|| panic!("no {attribute} in {line}"))
        + attribute.len()
        + 3;
    line[start..].split('"').next().unwrap().to_string()
}

fn assert_clean(out: &RunOutput) {
    assert!(!out.crashed(), "{}", out.describe());
    assert!(!out.timed_out, "{}", out.describe());
    assert_eq!(out.stderr, "", "nothing on stderr: {}", out.describe());
}

#[test]
fn provisioning_reports_the_runtime_and_every_program() {
    let rt = rt();
    assert!(rt.host.is_file(), "{rt:?}");
    assert!(rt.runtime_dir.join("libcoreclr.so").is_file(), "{rt:?}");
    assert!(
        rt.runtime_dir.join("System.Private.CoreLib.dll").is_file(),
        "{rt:?}"
    );
    // The runtime CORPROF_RUNTIME asked for (the LTS, 10.0, when unset),
    // at the version tests/e2e/runtimes.props pins, as the host lists it.
    let asked = std::env::var("CORPROF_RUNTIME").unwrap_or_else(|_| "10.0".into());
    assert_eq!(rt.choice, asked, "{rt:?}");
    assert_eq!(rt.mode, "packs", "{rt:?}");
    let pin = pinned_attribute(&asked, "NetCore");
    assert_eq!(rt.version, pin, "CORPROF_RUNTIME={asked}: {rt:?}");
    assert_eq!(
        rt.aspnetcore_version,
        pinned_attribute(&asked, "AspNetCore"),
        "{rt:?}"
    );
    assert!(
        rt.runtime_dir
            .ends_with(format!("shared/Microsoft.NETCore.App/{pin}")),
        "{rt:?}"
    );
    let listed = std::process::Command::new(&rt.host)
        .arg("--list-runtimes")
        .output()
        .expect("dotnet --list-runtimes");
    let listed = String::from_utf8_lossy(&listed.stdout);
    assert!(
        listed.contains(&format!("Microsoft.NETCore.App {pin} ")),
        "{listed}"
    );
    assert!(
        rt.aspnetcore_dir.join("Microsoft.AspNetCore.dll").is_file(),
        "{rt:?}"
    );
    for p in ["Basics", "JitHeavy", "Rewrite"] {
        assert!(rt.programs.iter().any(|q| q == p), "{p} in {rt:?}");
        assert!(rt.program_dll(p).is_file(), "{p}");
        let config = fs::read_to_string(rt.runtimeconfig(p)).expect("runtimeconfig");
        assert!(config.contains("\"Microsoft.NETCore.App\""), "{config}");
        assert!(config.contains(&format!("\"{}\"", rt.version)), "{config}");
    }
    // A library, not a program: built, and copied next to Basics.
    assert!(!rt.programs.iter().any(|q| q == "Plugin"), "{rt:?}");
    assert!(rt.programs_dir.join("Basics/Plugin.dll").is_file());
    // Provisioning again in the same process reuses the first result.
    assert_eq!(dotnet::ensure_provisioned().as_ref(), Ok(&rt));
}

#[test]
fn provisioning_again_rebuilds_nothing() {
    let rt = rt();
    let mut cmd = std::process::Command::new("bash");
    cmd.arg(dotnet::repo_root().join("scripts/provision/provision-dotnet.sh"));
    let out = dotnet::run_with_timeout(cmd, Duration::from_secs(600)).expect("run the script");
    out.assert_exit(0);
    // Nothing restored, laid out, installed or built again: the script says
    // nothing at all.
    assert_eq!(out.stderr, "", "{}", out.describe());
    assert_eq!(dotnet::parse_summary(&out.stdout), Ok(rt.clone()));
    let env_file =
        fs::read_to_string(rt.programs_dir.parent().unwrap().join("env")).expect("env file");
    assert_eq!(env_file, out.stdout);
}

#[test]
fn basics_prints_its_lines_and_exits_42() {
    let out = rt().run("Basics", &[], None);
    assert_clean(&out);
    out.assert_exit(42).assert_stdout(BASICS);
}

#[test]
fn rewrite_prints_its_lines_and_exits_43() {
    let out = rt().run("Rewrite", &[], None);
    assert_clean(&out);
    out.assert_exit(43).assert_stdout(REWRITE);
}

#[test]
fn rewrite_rejit_mode_runs_its_phases_on_a_timer() {
    let args = ["--rejit", "--iterations", "300", "--pause-ms", "50"];
    let out = rt().run("Rewrite", &args, None);
    assert_clean(&out);
    out.assert_exit(43).assert_stdout(REJIT);
}

#[test]
fn rewrite_rejit_mode_waits_for_go_files() {
    let dir = scratch_dir("rejit-sync");
    let watcher = {
        let dir = dir.clone();
        thread::spawn(move || {
            // The part a profiler or test plays: see ready-P, act, then
            // create go-(P+1). Records the order it saw things in.
            let mut seen = Vec::new();
            let deadline = Instant::now() + Duration::from_secs(50);
            for phase in 1..=2 {
                let ready = dir.join(format!("ready-{phase}"));
                while !ready.exists() {
                    assert!(Instant::now() < deadline, "no {}", ready.display());
                    thread::sleep(Duration::from_millis(5));
                }
                // The program must be waiting: the next go file is missing.
                seen.push(format!("ready-{phase}"));
                thread::sleep(Duration::from_millis(100));
                fs::write(dir.join(format!("go-{}", phase + 1)), b"").expect("go file");
            }
            seen
        })
    };
    let dir_arg = dir.to_str().expect("utf-8 path");
    let args = ["--rejit", "--iterations", "300", "--sync-dir", dir_arg];
    let out = rt().run("Rewrite", &args, None);
    let seen = watcher.join().expect("watcher thread");
    assert_clean(&out);
    out.assert_exit(43).assert_stdout(REJIT);
    assert_eq!(seen, ["ready-1", "ready-2"]);
    assert!(
        !dir.join("ready-3").exists(),
        "no ready file after the last phase"
    );
}

#[test]
fn rewrite_rejit_mode_gives_up_when_no_go_file_comes() {
    let dir = scratch_dir("rejit-timeout");
    let dir_arg = dir.to_str().expect("utf-8 path");
    let args = [
        "--rejit",
        "--iterations",
        "10",
        "--sync-dir",
        dir_arg,
        "--timeout-ms",
        "300",
    ];
    let out = rt().run("Rewrite", &args, None);
    out.assert_exit(3).assert_stdout(&[
        "rejit: phase 1 answer=41",
        "rejit: timed out waiting for go-2",
    ]);
    assert!(dir.join("ready-1").exists());
}

#[test]
fn rewrite_rejects_bad_arguments_with_exit_2() {
    let rt = rt();
    for args in [
        &["--nope"][..],
        &["--rejit", "--phases"],
        &["--rejit", "--phases", "x"],
    ] {
        let out = rt.run("Rewrite", args, None);
        out.assert_exit(2);
        assert_eq!(out.stdout, "", "{}", out.describe());
        assert!(out.stderr.contains("usage: Rewrite"), "{}", out.describe());
    }
}

#[test]
fn jitheavy_prints_the_generated_checksum_and_exits_44() {
    let out = rt().run("JitHeavy", &[], None);
    assert_clean(&out);
    out.assert_exit(44).assert_stdout(&[
        "methods=2000",
        "generic instantiations=512",
        "checksum=0x60C19C30D1B452A1",
        "checksum matches generator: True",
        "done",
    ]);
}

#[test]
fn an_unhandled_exception_is_reported_as_a_crash() {
    let out = rt().run("Basics", &["--unhandled"], None);
    assert!(out.crashed(), "{}", out.describe());
    assert_eq!(out.signal(), Some(6), "{}", out.describe());
    assert_eq!(out.lines(), ["throwing an unhandled exception"]);
    assert!(
        out.stderr
            .contains("Unhandled exception. System.InvalidOperationException: state is invalid"),
        "{}",
        out.describe()
    );
    let text = out.describe();
    assert!(
        text.contains("CRASHED: killed by signal 6 (SIGABRT)"),
        "{text}"
    );
    assert!(text.contains("--- stderr ---"), "{text}");
}

#[test]
fn a_hung_program_is_killed_at_its_timeout() {
    let dir = scratch_dir("hang");
    let dir_arg = dir.to_str().expect("utf-8 path");
    let args = [
        "--rejit",
        "--iterations",
        "10",
        "--sync-dir",
        dir_arg,
        "--timeout-ms",
        "600000",
    ];
    let rt = rt();
    let start = Instant::now();
    let out = rt.run_with_timeout("Rewrite", &args, None, Duration::from_secs(3));
    assert!(
        start.elapsed() < Duration::from_secs(20),
        "{}",
        out.describe()
    );
    assert!(out.timed_out, "{}", out.describe());
    assert!(!out.crashed(), "a timeout is not a crash");
    assert_eq!(out.signal(), Some(9), "{}", out.describe());
    // What it printed before it was killed is kept.
    assert_eq!(out.lines(), ["rejit: phase 1 answer=41"]);
    assert!(out.describe().contains("timed out"), "{}", out.describe());
}

#[test]
fn profiler_variables_are_set_only_with_a_profiler() {
    let rt = rt();
    let env_of = |cmd: &std::process::Command, key: &str| {
        cmd.get_envs()
            .find(|(k, _)| *k == key)
            .map(|(_, v)| v.map(|v| v.to_string_lossy().into_owned()))
    };

    let plain = rt.command("Basics", &[], None);
    assert_eq!(
        env_of(&plain, "DOTNET_SYSTEM_GLOBALIZATION_INVARIANT"),
        Some(Some("1".into()))
    );
    for key in [
        "CORECLR_ENABLE_PROFILING",
        "CORECLR_PROFILER",
        "CORECLR_PROFILER_PATH",
    ] {
        // Explicitly removed, so an outer environment cannot leak in.
        assert_eq!(env_of(&plain, key), Some(None), "{key}");
    }

    let profiler = Profiler::new(
        "relative/libnothing.so",
        "01234567-89ab-cdef-0123-456789abcdef",
    )
    .with_env("CORPROF_TEST_SETTING", "yes");
    let cmd = rt.command("Basics", &[], Some(&profiler));
    assert_eq!(
        env_of(&cmd, "CORECLR_ENABLE_PROFILING"),
        Some(Some("1".into()))
    );
    assert_eq!(
        env_of(&cmd, "CORECLR_PROFILER"),
        Some(Some("{01234567-89ab-cdef-0123-456789abcdef}".into()))
    );
    let path = env_of(&cmd, "CORECLR_PROFILER_PATH")
        .flatten()
        .expect("path set");
    assert!(Path::new(&path).is_absolute(), "{path}");
    assert!(path.ends_with("relative/libnothing.so"), "{path}");
    assert_eq!(
        env_of(&cmd, "CORPROF_TEST_SETTING"),
        Some(Some("yes".into()))
    );
}

#[test]
fn a_profiler_that_cannot_load_leaves_the_program_running() {
    // CoreCLR logs a profiler it cannot load and carries on without it; this
    // proves the variables reach a real runtime without breaking it.
    let profiler = Profiler::new(
        "/nonexistent/libcorprof_missing.so",
        "{01234567-89AB-CDEF-0123-456789ABCDEF}",
    );
    let out = rt().run("Basics", &[], Some(&profiler));
    assert!(!out.crashed(), "{}", out.describe());
    out.assert_exit(42).assert_stdout(BASICS);
}

#[test]
fn building_a_missing_example_fails_with_one_sentence() {
    let err = dotnet::build_example("no_such_example_e2e").expect_err("there is no such example");
    assert!(
        err.starts_with("`cargo build --example no_such_example_e2e` failed: "),
        "{err}"
    );
    assert!(!err.contains('\n'), "{err}");
}
