//! Attaching profilers to a running CoreCLR through the diagnostics IPC
//! channel: the `attach` example (a program), the `attach_events` fixture
//! (`tests/fixtures/`) and the `live_patch` example (profilers) against the
//! `Attach` test program, which loops until told to stop (see
//! docs/attach.md and docs/e2e.md).
//!
//! Each test starts its own target, checks that the target's stdout and
//! exit code are what they are without any profiler (plus, for the live
//! patcher, exactly the value changes it asked for), and that every fault
//! gives the error it should within its time limit.

// The real-runtime harness (tests/common/dotnet.rs) is Unix only.
#![cfg(unix)]

mod common;

use std::fs;
use std::io::{BufRead, BufReader};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use common::dotnet::{self, Runtime};
use corprof::diagnostics::{discovery, DiagnosticsClient, Error, DS_IPC_E_UNKNOWN_COMMAND};

const ATTACH_EVENTS: &str = "0B7A5E92-4C3D-4F1E-8A6B-9D2C1E0F3A48";
/// The JIT tracer example's CLSID (a start-up profiler).
const JIT_TRACER: &str = "DF63A541-5A33-4611-8829-F4E495985EE3";
const LIVE_PATCH: &str = "7E4D2C1B-9A8F-4E3D-B2C1-0F9E8D7C6B5A";
const EXIT: i32 = 45;
const WAIT: Duration = Duration::from_secs(30);

/// The `attach` example program, built once per test process.
fn attach_bin() -> PathBuf {
    static BUILT: std::sync::OnceLock<Result<PathBuf, String>> = std::sync::OnceLock::new();
    BUILT
        .get_or_init(|| {
            let windows = dotnet::runtime().windows;
            // The Windows leg's cargo command line (scripts/ci/test-windows.sh
            // writes it to the wrapper it names), as the harness's
            // `build_example` uses.
            let cargo = match (&windows, std::env::var_os("CORPROF_E2E_WINDOWS_CARGO")) {
                (Some(_), Some(wrapper)) => wrapper,
                _ => std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()),
            };
            let mut cmd = Command::new(cargo);
            cmd.args(["build", "--quiet", "--example", "attach", "--manifest-path"])
                .arg(dotnet::repo_root().join("Cargo.toml"))
                .current_dir(dotnet::repo_root());
            if windows.is_some() {
                cmd.args(["--target", dotnet::WINDOWS_TARGET]);
            }
            let out = dotnet::run_with_timeout(cmd, Duration::from_secs(15 * 60))?;
            if out.code() != Some(0) {
                return Err(format!("cargo build --example attach: {}", out.stderr));
            }
            match windows {
                Some(w) => {
                    let dir = dotnet::target_dir()
                        .join(dotnet::WINDOWS_TARGET)
                        .join("debug/examples");
                    // The test-only ProcessPrng shim Wine 8 needs (see the harness).
                    w.install_shim(&dir)?;
                    Ok(dir.join("attach.exe"))
                }
                None => Ok(dotnet::target_dir().join("debug/examples/attach")),
            }
        })
        .clone()
        .unwrap_or_else(|e| panic!("{e}"))
}

fn profiler_lib(name: &str) -> PathBuf {
    dotnet::build_example(name).unwrap_or_else(|e| panic!("building example {name}: {e}"))
}

/// A profiler's path as `attach` passes it to the runtime (`Z:\...` on the
/// Windows runner).
fn lib_arg(lib: &Path) -> String {
    dotnet::runtime().program_path(lib)
}

/// The example `name` built, as `attach` passes it ([`lib_arg`]).
fn profiler_arg(name: &str) -> String {
    lib_arg(&profiler_lib(name))
}

/// Output of one run of `attach`.
struct AttachRun {
    code: Option<i32>,
    stdout: String,
    stderr: String,
    elapsed: Duration,
}

fn run_attach(args: &[&str], env: &[(&str, &str)]) -> AttachRun {
    // On the Windows runner, attach.exe under Wine (the named pipe lives
    // there); elsewhere the Linux build.
    let mut cmd = match dotnet::runtime().windows {
        Some(w) => {
            let mut cmd = Command::new(&w.wine);
            cmd.arg(attach_bin());
            cmd
        }
        None => Command::new(attach_bin()),
    };
    cmd.args(args);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = dotnet::run_with_timeout(cmd, Duration::from_secs(60)).unwrap();
    assert!(!out.timed_out, "attach {args:?} hung: {}", out.describe());
    AttachRun {
        code: out.code(),
        stdout: out.stdout.replace("\r\n", "\n"),
        stderr: out.stderr.replace("\r\n", "\n"),
        elapsed: out.elapsed,
    }
}

/// A running `Attach` program whose output is collected as it comes.
struct Target {
    child: Child,
    /// The pid the runtime knows (see `wait_ready`).
    pid: u32,
    /// On the Windows runner (where that pid is a Windows one).
    windows: bool,
    dir: PathBuf,
    stdout: Arc<Mutex<String>>,
    stderr: Arc<Mutex<String>>,
}

fn collect(pipe: impl std::io::Read + Send + 'static, into: Arc<Mutex<String>>) {
    thread::spawn(move || {
        for line in BufReader::new(pipe).lines() {
            let Ok(line) = line else { break };
            let mut text = into.lock().unwrap();
            text.push_str(&line);
            text.push('\n');
        }
    });
}

impl Target {
    fn start(rt: &Runtime, name: &str) -> Target {
        let mut target = Target::start_with(rt, name, &[]);
        target.wait_ready();
        target
    }

    /// Starts the program with more environment variables, without waiting
    /// for it to print anything.
    fn start_with(rt: &Runtime, name: &str, env: &[(&str, &str)]) -> Target {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
            .join("e2e_attach")
            .join(format!("{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        let dir_arg = dir.to_str().unwrap().to_string();
        let mut cmd = rt.command("Attach", &["--sync-dir", &dir_arg, "--seconds", "90"], None);
        for (k, v) in env {
            cmd.env(k, v);
        }
        cmd.stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0);
        let mut child = cmd.spawn().expect("start Attach");
        let stdout = Arc::new(Mutex::new(String::new()));
        let stderr = Arc::new(Mutex::new(String::new()));
        collect(child.stdout.take().unwrap(), Arc::clone(&stdout));
        collect(child.stderr.take().unwrap(), Arc::clone(&stderr));
        Target {
            pid: child.id(),
            windows: rt.windows.is_some(),
            child,
            dir,
            stdout,
            stderr,
        }
    }

    /// Waits for the first value, then takes the pid the runtime knows: the
    /// child's on Linux, a Windows pid under Wine (the program writes it
    /// before "ready").
    fn wait_ready(&mut self) {
        self.wait_stdout("value=41");
        let written = fs::read_to_string(self.dir.join("pid")).expect("Attach writes its pid");
        let pid: u32 = written.trim().parse().expect("a pid");
        if !self.windows {
            assert_eq!(pid, self.pid, "the program's own pid is the child's");
        }
        self.pid = pid;
    }

    fn stdout(&self) -> String {
        self.stdout.lock().unwrap().clone()
    }

    fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    #[track_caller]
    fn wait_for(&self, what: &str, text: &Mutex<String>, needle: &str) {
        let start = Instant::now();
        while start.elapsed() < WAIT {
            if text.lock().unwrap().contains(needle) {
                return;
            }
            thread::sleep(Duration::from_millis(10));
        }
        panic!(
            "no {needle:?} on the target's {what} within {WAIT:?}\nstdout:\n{}\nstderr:\n{}",
            self.stdout(),
            self.stderr()
        );
    }

    #[track_caller]
    fn wait_stdout(&self, needle: &str) {
        self.wait_for("stdout", &self.stdout, needle);
    }

    #[track_caller]
    fn wait_stderr(&self, needle: &str) {
        self.wait_for("stderr", &self.stderr, needle);
    }

    /// Makes the target run an induced GC and call `Late()`, and waits until
    /// it has.
    fn gc_and_late(&self) {
        fs::write(self.dir.join("gc"), b"").unwrap();
        let start = Instant::now();
        while !self.dir.join("gc-done").exists() {
            assert!(start.elapsed() < WAIT, "the target never ran its GC");
            thread::sleep(Duration::from_millis(10));
        }
    }

    /// Tells the target to stop; returns its exit status and output.
    fn stop(mut self) -> (ExitStatus, String, String) {
        fs::write(self.dir.join("stop"), b"").unwrap();
        let start = Instant::now();
        let status = loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                break status;
            }
            assert!(start.elapsed() < WAIT, "the target did not stop");
            thread::sleep(Duration::from_millis(10));
        };
        // Let the readers drain the pipes.
        thread::sleep(Duration::from_millis(100));
        (status, self.stdout(), self.stderr())
    }
}

impl Drop for Target {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

#[track_caller]
/// `attach` failed because the profiler's `initialize_for_attach` refused
/// with `E_INVALIDARG`, and said so.
fn assert_refused_with_invalid_arg(run: &AttachRun, data: &str) {
    assert_eq!(run.code, Some(1), "{data}: {}", run.stdout);
    assert!(
        run.stderr.starts_with("attach: load failed:"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("E_INVALIDARG"), "{}", run.stderr);
    assert!(
        run.stderr.contains("InitializeForAttach refused"),
        "{}",
        run.stderr
    );
}

fn assert_stopped(status: ExitStatus, stdout: &str, stderr: &str, expected: &[&str]) {
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(
        lines, expected,
        "stdout differs (status {status})\nstderr:\n{stderr}"
    );
    assert_eq!(status.code(), Some(EXIT), "{status}\nstderr:\n{stderr}");
}

/// The runtime of the run: 3.1 or 8.0 (`CORPROF_RUNTIME`). Attach and live
/// patching behave the same on both; what differs (the Process commands,
/// which 3.1's diagnostics server does not know) is asserted per runtime.
fn attach_runtime() -> Runtime {
    dotnet::runtime()
}

#[test]
fn list_shows_the_target_with_its_command_line() {
    let rt = attach_runtime();
    let target = Target::start(&rt, "list");
    let pid = target.pid;
    if rt.windows.is_some() {
        // Under Wine: `attach list` (attach.exe, built for Windows) finds the
        // process by its named pipe, through Toolhelp where listing
        // \\.\pipe\ fails; 3.1 does not answer ProcessInfo and Windows has
        // no /proc, so the command line is unknown there; from .NET 5 the
        // runtime's ProcessInfo gives it (`PID "...dotnet.exe" exec ...`).
        let run = run_attach(&["list"], &[]);
        assert_eq!(
            run.code,
            Some(0),
            "stdout:\n{}\nstderr:\n{}",
            run.stdout,
            run.stderr
        );
        let listed = |l: &str| {
            if rt.major() >= 5 {
                l.starts_with(&format!("{pid} \"")) && l.contains("Attach.dll")
            } else {
                l == format!("{pid} (command line unknown: runtime before .NET 5)")
            }
        };
        assert!(
            run.stdout.lines().any(listed),
            "Windows: pid {pid} not listed:\n{}\n{}",
            run.stdout,
            run.stderr
        );
        let (status, stdout, stderr) = target.stop();
        assert_stopped(status, &stdout, &stderr, &["ready", "value=41", "done"]);
        let run = run_attach(&["list"], &[]);
        assert!(!run
            .stdout
            .lines()
            .any(|l| l.starts_with(&format!("{pid} "))));
        return;
    }

    // The library finds its endpoint, named with the start time /proc gives.
    let endpoint = discovery::endpoint(pid).unwrap();
    let key = discovery::start_key(pid).unwrap();
    assert_eq!(
        endpoint.file_name().unwrap().to_str().unwrap(),
        format!("dotnet-diagnostic-{pid}-{key}-socket")
    );
    let client = DiagnosticsClient::for_process(pid).unwrap();
    let mut process_info = None;
    if rt.major() == 3 {
        // 3.1 does not know ProcessInfo (nor the other Process commands:
        // process_commands_answer_on_net8_and_are_unknown_on_3_1).
        let error = client.process_info().unwrap_err();
        assert_eq!(
            error.hresult(),
            Some(DS_IPC_E_UNKNOWN_COMMAND),
            "CoreCLR 3.1: {error}"
        );
    } else {
        // 8.0 answers ProcessInfo with this process, and ResumeRuntime (a
        // no-op for a runtime that was not started suspended) with OK.
        let info = client.process_info().expect("ProcessInfo on .NET 8");
        assert_eq!(info.process_id, u64::from(pid), "{info:?}");
        assert!(info.command_line.contains("Attach.dll"), "{info:?}");
        assert_eq!(info.os, "Linux", "{info:?}");
        assert_eq!(info.arch, "x64", "{info:?}");
        client.resume_runtime().expect("ResumeRuntime on .NET 8");
        process_info = Some(info);
    }

    let run = run_attach(&["list"], &[]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let line = run
        .stdout
        .lines()
        .find(|line| line.starts_with(&format!("{pid} ")))
        .unwrap_or_else(|| panic!("pid {pid} not listed:\n{}", run.stdout));
    let expected_args = format!(
        "Attach.dll --sync-dir {} --seconds 90",
        target.dir.display()
    );
    assert!(line.ends_with(&expected_args), "{line}");
    match process_info {
        // 3.1: the command line as /proc has it, host options included.
        None => assert!(line.contains("exec --runtimeconfig"), "CoreCLR 3.1: {line}"),
        // 8.0: the command line ProcessInfo answers, which is the runtime's
        // view (the host, the app and its arguments; no host options).
        Some(info) => assert_eq!(line, format!("{pid} {}", info.command_line), ".NET 8"),
    }

    let (status, stdout, stderr) = target.stop();
    assert_stopped(status, &stdout, &stderr, &["ready", "value=41", "done"]);
    // Once the runtime has exited, it is no longer listed.
    let run = run_attach(&["list"], &[]);
    assert!(!run
        .stdout
        .lines()
        .any(|l| l.starts_with(&format!("{pid} "))));
}

#[test]
fn attached_profiler_sees_what_happens_after_the_attach() {
    let rt = attach_runtime();
    let lib = profiler_arg("attach_events");
    let target = Target::start(&rt, "events");
    let pid = target.pid.to_string();
    // Precondition: nothing profiles the target yet.
    assert!(!target.stderr().contains("attach_events"));

    let run = run_attach(&[&pid, &lib, ATTACH_EVENTS, "hello"], &[]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert_eq!(
        run.stdout.trim(),
        format!("attached: profiler {ATTACH_EVENTS} loaded into process {pid}")
    );
    target.wait_stderr("catch-up:");
    let err = target.stderr();
    assert!(
        err.contains("initialize_for_attach client_data=\"hello\""),
        "{err}"
    );
    // Flags not allowed after attach: the runtime's refusal is an Err.
    // Enter/leave hooks are startup-only on every runtime.
    assert!(
        err.contains(
            "refused COR_PRF_MONITOR_ENTERLEAVE: CORPROF_E_UNSUPPORTED_FOR_ATTACHING_PROFILER"
        ),
        "{err}"
    );
    // COR_PRF_DISABLE_INLINING is immutable (set in `Initialize` or never)
    // up to 9, so an attached profiler's request is E_FAIL; 10 made it (and
    // COR_PRF_DISABLE_OPTIMIZATIONS) mutable and allowed after attach
    // (dotnet/runtime #113924), and the mask then holds it.
    let inlining = if rt.major() >= 10 {
        "COR_PRF_DISABLE_INLINING after attach: accepted, read back: true"
    } else {
        "COR_PRF_DISABLE_INLINING after attach: refused: E_FAIL"
    };
    assert!(err.contains(inlining), "runtime {}: {err}", rt.version);
    assert!(err.contains("event mask set: GC, JIT compilation"), "{err}");
    // Catching up: what was loaded and compiled before the attach.
    assert!(err.contains("already loaded: Attach.dll"), "{err}");
    assert!(
        err.contains("already loaded: System.Private.CoreLib.dll"),
        "{err}"
    );
    assert!(
        err.contains("already compiled: E2E.Attach.Program.Value"),
        "{err}"
    );
    assert!(!err.contains("Late"), "Late() must not have run yet: {err}");
    assert!(
        !err.contains("gc reason"),
        "no GC before the trigger: {err}"
    );

    // After the attach: an induced GC and a method compiled for the first time.
    target.gc_and_late();
    target.wait_stderr("jit E2E.Attach.Program.Late status=S_OK");
    target.wait_stderr("gc reason=induced");

    // One profiler per process: a second attach is refused, in words.
    let run = run_attach(&[&pid, &lib, ATTACH_EVENTS], &[]);
    assert_eq!(run.code, Some(1));
    assert!(
        run.stderr.starts_with("attach: profiler already loaded:"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("0x8013136A"), "{}", run.stderr);

    let (status, stdout, stderr) = target.stop();
    assert_stopped(
        status,
        &stdout,
        &stderr,
        &["ready", "value=41", "late=13", "done"],
    );
    assert_eq!(
        stderr.matches("initialize_for_attach").count(),
        1,
        "{stderr}"
    );
}

#[test]
fn attach_events_names_the_functions_of_the_prefix_its_client_data_gives() {
    let rt = attach_runtime();
    let lib = profiler_arg("attach_events");
    let target = Target::start(&rt, "prefix");
    let pid = target.pid.to_string();
    // Precondition: Main and Value have both run (Main prints, Value makes
    // the values it prints).
    target.wait_stdout("value=41");

    // Client data: free text, with a `prefix=` word that selects what is named.
    let data = "shop prefix=E2E.Attach.Program.Val";
    let run = run_attach(&[&pid, &lib, ATTACH_EVENTS, data], &[]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    target.wait_stderr("catch-up:");
    let err = target.stderr();
    assert!(
        err.contains("naming functions that start with \"E2E.Attach.Program.Val\""),
        "{err}"
    );
    assert!(
        err.contains("already compiled: E2E.Attach.Program.Value"),
        "{err}"
    );
    // Main was compiled before the attach too, but is outside the prefix
    // (with the default prefix `E2E.` it would be listed).
    assert!(!err.contains("E2E.Attach.Program.Main"), "{err}");
    // Late, compiled after the attach, is outside the prefix as well.
    target.gc_and_late();
    target.wait_stderr("gc reason=induced");
    let (status, stdout, stderr) = target.stop();
    assert!(!stderr.contains("jit E2E.Attach.Program.Late"), "{stderr}");
    assert_stopped(
        status,
        &stdout,
        &stderr,
        &["ready", "value=41", "late=13", "done"],
    );
}

#[test]
fn bad_targets_and_profilers_are_clear_errors() {
    let rt = attach_runtime();
    let lib = profiler_arg("attach_events");
    let lib = lib.as_str();

    // No such process (Linux pids stay below 2^22).
    let run = run_attach(&["4194305", lib, ATTACH_EVENTS], &[]);
    assert_eq!(run.code, Some(1));
    assert_eq!(run.stderr.trim_end(), "attach: no such process: 4194305");

    // A live process without a runtime: this test (on Linux; under Wine this
    // Linux process has no Windows pid, and the Windows runner's programs
    // all have a runtime).
    if rt.windows.is_none() {
        let me = std::process::id().to_string();
        let run = run_attach(&[&me, lib, ATTACH_EVENTS], &[]);
        assert_eq!(run.code, Some(1));
        assert!(
            run.stderr.starts_with("attach: no runtime listening"),
            "{}",
            run.stderr
        );
    }

    // Bad usage.
    let run = run_attach(&["12", lib, "not-a-guid"], &[]);
    assert_eq!(run.code, Some(2));
    assert!(run.stderr.contains("not a CLSID"), "{}", run.stderr);

    let target = Target::start(&rt, "faults");
    let pid = target.pid.to_string();

    // A profiler path that does not exist.
    let run = run_attach(&[&pid, "/nonexistent/libnope.so", ATTACH_EVENTS], &[]);
    assert_eq!(run.code, Some(1));
    assert!(
        run.stderr.starts_with("attach: load failed:"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("could not load the profiler library"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("0x8007007E"), "{}", run.stderr);
    // The path as attach made it absolute (Z:\nonexistent\libnope.so on Windows).
    let missing = rt.program_path(Path::new("/nonexistent/libnope.so"));
    assert!(
        run.stderr.contains(&format!("{missing} does not exist")),
        "{}",
        run.stderr
    );

    // A library that does not offer the CLSID.
    let wrong = "11111111-2222-3333-4444-555555555555";
    let run = run_attach(&[&pid, lib, wrong], &[]);
    assert_eq!(run.code, Some(1));
    assert!(
        run.stderr.starts_with("attach: load failed:"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("does not offer this CLSID"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("0x80040111"), "{}", run.stderr); // CLASS_E_CLASSNOTAVAILABLE

    // A start-up profiler that does not override `initialize_for_attach`
    // (the JIT tracer) refuses to attach instead of listening to nothing.
    let run = run_attach(&[&pid, &profiler_arg("jit_tracer"), JIT_TRACER], &[]);
    assert_eq!(run.code, Some(1), "{}", run.stderr);
    assert!(run.stderr.contains("0x80131368"), "{}", run.stderr); // CORPROF_E_PROFILER_NOT_ATTACHABLE

    // None left a profiler behind: a correct attach still succeeds.
    let run = run_attach(&[&pid, lib, ATTACH_EVENTS], &[]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    target.wait_stderr("catch-up:");

    let (status, stdout, stderr) = target.stop();
    assert_stopped(status, &stdout, &stderr, &["ready", "value=41", "done"]);
}

#[test]
fn slow_profilers_and_exiting_targets_do_not_hang_the_client() {
    let rt = attach_runtime();
    let lib = profiler_arg("attach_events");
    let lib = lib.as_str();

    // The profiler takes 8 s; the client waits its own 1 s limit plus the
    // 5 s attach timeout it passes to the runtime: 6 s.
    let target = Target::start(&rt, "slow");
    let pid = target.pid.to_string();
    let run = run_attach(
        &[&pid, lib, ATTACH_EVENTS, "sleep-ms=8000"],
        &[("ATTACH_TIMEOUT_MS", "1000")],
    );
    assert_eq!(run.code, Some(1));
    assert!(
        run.stderr.starts_with("attach: timed out"),
        "{}",
        run.stderr
    );
    assert!(
        run.elapsed < Duration::from_secs(7) + Duration::from_secs(2),
        "{:?}",
        run.elapsed
    );
    target.wait_stderr("slept 8000 ms");
    let (status, stdout, stderr) = target.stop();
    assert_stopped(status, &stdout, &stderr, &["ready", "value=41", "done"]);

    // The target dies while the runtime is loading the profiler.
    let mut target = Target::start(&rt, "dies");
    let pid = target.pid;
    let client = DiagnosticsClient::for_process(pid).unwrap();
    let attacher = thread::spawn(move || {
        let started = Instant::now();
        let result = client.attach_profiler(&corprof::diagnostics::AttachProfiler {
            attach_timeout: Duration::from_secs(5),
            clsid: corprof::GUID::parse(ATTACH_EVENTS),
            profiler_path: &profiler_lib("attach_events").to_string_lossy(),
            client_data: b"sleep-ms=5000",
        });
        (result, started.elapsed())
    });
    target.wait_stderr("initialize_for_attach");
    target.child.kill().unwrap();
    let status = target.child.wait().unwrap();
    let (result, elapsed) = attacher.join().unwrap();
    let error = result.unwrap_err();
    assert!(matches!(error, Error::Closed { .. }), "{error} ({status})");
    assert!(
        error.to_string().contains("did the process exit?"),
        "{error}"
    );
    assert!(elapsed < Duration::from_secs(5), "{elapsed:?}");
}

#[test]
fn live_patch_changes_a_running_loop_and_reverts() {
    let rt = attach_runtime();
    let lib = profiler_arg("live_patch");
    let target = Target::start(&rt, "patch");
    let pid = target.pid.to_string();
    // Precondition: Value() is compiled and running (value=41 printed).
    assert_eq!(target.stdout(), "ready\nvalue=41\n");

    // 100000 needs the long `ldc.i4` form: the body grows from 3 to 6 bytes.
    let data = "Attach!E2E.Attach.Program::Value 41 100000 3";
    let run = run_attach(&[&pid, &lib, LIVE_PATCH, data], &[]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    target.wait_stdout("value=100000");
    let patched_at = Instant::now();
    target.wait_stdout("value=100000\nvalue=41\n");
    let reverted_after = patched_at.elapsed();
    // Reverted 3 s after the ReJIT request, which came before the first
    // patched value was printed (allowing for a slow ReJIT on a busy machine).
    assert!(
        reverted_after > Duration::from_millis(1000) && reverted_after < Duration::from_secs(10),
        "{reverted_after:?}"
    );

    let (status, stdout, stderr) = target.stop();
    assert_stopped(
        status,
        &stdout,
        &stderr,
        &["ready", "value=41", "value=100000", "value=41", "done"],
    );
    // The method was found and its IL read and patched inside
    // InitializeForAttach (EnumModules, GetModuleInfo, GetAssemblyInfo,
    // GetModuleMetaData and GetILFunctionBody all answer there on 3.1),
    // before the attach was reported. The body: a 1-byte tiny header,
    // `ldc.i4 100000` (5 bytes), `ret`.
    let found = "live_patch: found in initialize_for_attach: \
                 Attach!E2E.Attach.Program::Value loads 41 (7-byte new body)";
    let (found_at, attached_at) = (stderr.find(found), stderr.find("live_patch: attached:"));
    assert!(
        found_at.is_some() && found_at < attached_at,
        "no {found:?} before `attached` in\n{stderr}"
    );
    for line in [
        "live_patch: ReJIT requested: Attach!E2E.Attach.Program::Value 41 -> 100000",
        "live_patch: new IL set: Attach!E2E.Attach.Program::Value loads 100000",
        "live_patch: reverted: Attach!E2E.Attach.Program::Value",
    ] {
        assert!(stderr.contains(line), "no {line:?} in\n{stderr}");
    }
}

#[test]
fn live_patch_refuses_bad_client_data_and_leaves_the_target_alone() {
    let rt = attach_runtime();
    let lib = profiler_arg("live_patch");
    let lib = lib.as_str();
    let target = Target::start(&rt, "patch-bad");
    let pid = target.pid.to_string();

    for data in [
        "garbage",
        "Attach!E2E.Attach.Program::Value 41",
        "Attach!E2E.Attach.Program::Value 41 x",
        "Attach!E2E.Attach.Program::Value 41 42 -3",
    ] {
        let run = run_attach(&[&pid, lib, LIVE_PATCH, data], &[]);
        assert_refused_with_invalid_arg(&run, data);
        assert!(
            run.stderr.contains("target process's stderr"),
            "{}",
            run.stderr
        );
        target.wait_stderr(&format!("live_patch: bad client data {data:?}"));
    }
    // Well-formed, but naming a method that is not there, or one without
    // the constant: `initialize_for_attach` looks before it accepts, so the
    // attach fails with the runtime's answer and the reason is on the
    // target's stderr.
    for (data, why) in [
        (
            "Attach!E2E.Attach.Program::Valeu 41 42",
            "no method Valeu in E2E.Attach.Program",
        ),
        (
            "Attach!E2E.Attach.Program::Value 99 1",
            "no `ldc.i4 99` in Attach!E2E.Attach.Program::Value",
        ),
        (
            "Nope!E2E.Attach.Program::Value 41 42",
            "no loaded assembly named Nope",
        ),
    ] {
        let run = run_attach(&[&pid, lib, LIVE_PATCH, data], &[]);
        assert_refused_with_invalid_arg(&run, data);
        target.wait_stderr(&format!("live_patch: cannot patch, not attaching: {why}"));
    }
    // Nothing was patched, and none of the refused attaches left a
    // profiler behind: another one still attaches.
    assert_eq!(target.stdout(), "ready\nvalue=41\n");
    let events = profiler_lib("attach_events");
    let run = run_attach(&[&pid, events.to_str().unwrap(), ATTACH_EVENTS], &[]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    target.wait_stderr("catch-up:");

    let (status, stdout, stderr) = target.stop();
    assert_stopped(status, &stdout, &stderr, &["ready", "value=41", "done"]);
    assert!(!stderr.contains("ReJIT requested"), "{stderr}");
    assert!(!stderr.contains("live_patch: attached"), "{stderr}");
}

#[test]
fn list_with_no_process_says_where_it_looked() {
    // An empty temporary directory: no endpoint can be there.
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("e2e_attach/empty-tmp-{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    assert_eq!(fs::read_dir(&dir).unwrap().count(), 0);
    let run = run_attach(&["list"], &[("TMPDIR", dir.to_str().unwrap())]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert_eq!(run.stdout, "", "nothing listed");
    let stderr = run.stderr;
    assert!(
        stderr.starts_with("attach: no .NET process of this user has a diagnostics endpoint in")
            && stderr.contains(&dir.display().to_string()),
        "{stderr}"
    );
}

/// The target on its own: its time limit and its usage errors.
#[test]
fn attach_program_alone_times_out_and_checks_its_arguments() {
    let rt = dotnet::runtime();
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("e2e_attach/alone-{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    let dir = dir.to_str().unwrap();
    let out = rt.run("Attach", &["--sync-dir", dir, "--seconds", "1"], None);
    out.assert_exit(3);
    out.assert_stdout(&["ready", "value=41", "timed out waiting for stop"]);
    for args in [
        &[][..],
        &["--sync-dir"],
        &["--seconds", "0", "--sync-dir", dir],
        &["--what"],
    ] {
        let out = rt.run("Attach", args, None);
        out.assert_exit(2);
        assert!(out.stderr.contains("usage: Attach"), "{}", out.describe());
    }
}

/// The Process commands of .NET 5 to 8 against a running program: on 8.0,
/// ProcessInfo2 names the entry point and the runtime version, the
/// environment comes back, a variable set through the client is in it, and
/// a startup hook applied to the running program runs; on 3.1 each is an
/// unknown command.
#[test]
fn process_commands_answer_on_net8_and_are_unknown_on_3_1() {
    let rt = attach_runtime();
    if rt.windows.is_some() {
        return refuse_the_windows_runner();
    }
    let target = Target::start(&rt, "process-commands");
    let client = DiagnosticsClient::for_process(target.pid).unwrap();
    if rt.major() == 3 {
        for (command, result) in [
            ("ProcessInfo", client.process_info().map(|_| ())),
            ("ResumeRuntime", client.resume_runtime()),
            ("ProcessInfo2", client.process_info_2().map(|_| ())),
            (
                "ProcessEnvironment",
                client.process_environment().map(|_| ()),
            ),
            (
                "SetEnvironmentVariable",
                client.set_environment_variable("CORPROF_E2E_SET", "x"),
            ),
            (
                "ApplyStartupHook",
                client.apply_startup_hook("/nonexistent/Hook.dll"),
            ),
        ] {
            let error = result.unwrap_err();
            assert_eq!(
                error.hresult(),
                Some(DS_IPC_E_UNKNOWN_COMMAND),
                "CoreCLR 3.1, {command}: {error}"
            );
        }
    } else {
        let info = client.process_info_2().expect("ProcessInfo2 on .NET 8");
        assert_eq!(info.info.process_id, u64::from(target.pid));
        assert_eq!(info.entrypoint_assembly, "Attach", "{info:?}");
        // The runtime provisioning laid out ("8.0.34", or with "+<commit>").
        assert!(
            info.runtime_version == rt.version
                || info
                    .runtime_version
                    .starts_with(&format!("{}+", rt.version)),
            "{info:?}"
        );
        assert_eq!(info.info, client.process_info().unwrap());

        // The harness sets DOTNET_SYSTEM_GLOBALIZATION_INVARIANT=1 on every run.
        let env = client
            .process_environment()
            .expect("ProcessEnvironment on .NET 8");
        assert!(
            env.iter()
                .any(|(k, v)| k == "DOTNET_SYSTEM_GLOBALIZATION_INVARIANT" && v == "1"),
            "{env:?}"
        );
        assert!(!env.iter().any(|(k, _)| k == "CORPROF_E2E_SET"), "{env:?}");
        client
            .set_environment_variable("CORPROF_E2E_SET", "from the client")
            .expect("SetEnvironmentVariable on .NET 8");
        let env = client.process_environment().unwrap();
        assert!(
            env.iter()
                .any(|(k, v)| k == "CORPROF_E2E_SET" && v == "from the client"),
            "{env:?}"
        );
        let hook = rt.programs_dir.join("StartupHook/StartupHook.dll");
        // Applied to a running .NET 8 process, the hook runs at once (on a
        // thread of the runtime's), in the middle of the program.
        client
            .apply_startup_hook(hook.to_str().unwrap())
            .expect("ApplyStartupHook on a running .NET 8");
        target.wait_stdout("startup hook ran\n");
    }
    let (status, stdout, stderr) = target.stop();
    let expected: &[&str] = if rt.major() == 3 {
        &["ready", "value=41", "done"]
    } else {
        &["ready", "value=41", "startup hook ran", "done"]
    };
    assert_stopped(status, &stdout, &stderr, expected);
}

/// A runtime started suspended (`DOTNET_DefaultDiagnosticPortSuspend=1`)
/// waits for ResumeRuntime before Main; a startup hook applied meanwhile
/// runs before Main once it resumes (.NET 8). CoreCLR 3.1 does not know the
/// setting and starts at once.
#[test]
fn a_suspended_runtime_runs_an_applied_startup_hook_when_resumed() {
    let rt = attach_runtime();
    if rt.windows.is_some() {
        return refuse_the_windows_runner();
    }
    let mut target = Target::start_with(
        &rt,
        "suspended",
        &[
            ("DOTNET_DefaultDiagnosticPortSuspend", "1"),
            ("COMPlus_DefaultDiagnosticPortSuspend", "1"),
        ],
    );
    if rt.major() == 3 {
        target.wait_ready();
        assert_eq!(
            target.stdout(),
            "ready\nvalue=41\n",
            "CoreCLR 3.1 does not suspend"
        );
    } else {
        // Suspended: nothing printed after a second.
        thread::sleep(Duration::from_secs(1));
        assert_eq!(target.stdout(), "", ".NET 8 waits for ResumeRuntime");
        let pid = target.child.id();
        let endpoint = discovery::endpoint(pid).expect("a suspended runtime listens");
        let client = DiagnosticsClient::at(endpoint);
        let hook = rt.programs_dir.join("StartupHook/StartupHook.dll");
        client
            .apply_startup_hook(hook.to_str().unwrap())
            .expect("ApplyStartupHook while suspended");
        client.resume_runtime().expect("ResumeRuntime");
        target.wait_ready();
        assert_eq!(target.stdout(), "startup hook ran\nready\nvalue=41\n");
    }
    let (status, stdout, stderr) = target.stop();
    let mut expected = vec!["ready", "value=41", "done"];
    if rt.major() != 3 {
        expected.insert(0, "startup hook ran");
    }
    assert_stopped(status, &stdout, &stderr, &expected);
}

/// For tests where the Linux test process drives the IPC client itself:
/// under Wine it cannot reach the named pipe (and the Windows runtime is 3.1,
/// whose answers the Linux 3.1 run pins). scripts/ci/test-windows.sh does not
/// select them; run by hand there, they say why instead of passing.
fn refuse_the_windows_runner() {
    panic!("run this test on Linux (scripts/ci/test-windows.sh does not select it)");
}
