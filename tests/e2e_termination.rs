//! Nothing lost when a console service is stopped by `SIGTERM`
//! (`docker stop`, Kubernetes): the coverage report and the sampler's last
//! period are written, and the process ends as it would without the
//! profiler.
//!
//! From .NET 10 the runtime installs no `SIGTERM` handler: a program that
//! registers none dies of the signal at once, and the profiler's
//! `Shutdown` callback never comes; `corprof::facade` then runs the
//! profiler's `shutdown` itself and re-raises the signal
//! (src/facade/termination.rs). Up to .NET 9 the runtime's own handler
//! shuts down (`ProcessExit`, then `Shutdown`): the same reports, without
//! corprof's handler. The program: tests/e2e/roslyn/Terminate.
#![cfg(target_os = "linux")]

mod common;

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use common::dotnet::{self, Profiler, Runtime};
use common::readers;

const COVERAGE: &str = "2B8C6E57-9E0D-4F1A-8C3B-5D7A1E9F4C60";
const SAMPLER: &str = "7A3E9C51-2B8D-4F06-9E1A-C4D5B6A70819";
/// What corprof's handler says when it runs the profiler's shutdown, with
/// `CORPROF_DEBUG=1` (which `run_and_terminate` sets unless the profiler's
/// environment sets it).
const FLUSHING: &str = "corprof: SIGTERM, which nothing else in the process handles";

/// How a run ended.
#[derive(Debug)]
struct Ended {
    status: ExitStatus,
    stdout: String,
    stderr: String,
    /// From the signal to the exit.
    after_signal: Duration,
}

impl Ended {
    fn signal(&self) -> Option<i32> {
        use std::os::unix::process::ExitStatusExt;
        self.status.signal()
    }
}

/// Runs the Terminate program in `mode`, sends it `SIGTERM` `work` after it
/// said "ready", and waits (at most 60 s) for it to end.
fn run_and_terminate(mode: &str, profiler: Option<&Profiler>, work: Duration) -> Ended {
    let rt = dotnet::runtime();
    let mut cmd = rt.command("Terminate", &[mode], profiler);
    if !profiler.is_some_and(|p| p.extra_env.iter().any(|(k, _)| k == "CORPROF_DEBUG")) {
        cmd.env("CORPROF_DEBUG", "1");
    }
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("start the Terminate program");
    let stdout = child.stdout.take().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let err = thread::spawn(move || {
        let mut text = String::new();
        let _ = stderr.read_to_string(&mut text);
        text
    });
    let (ready_tx, ready_rx) = mpsc::channel();
    let out = thread::spawn(move || {
        let mut text = String::new();
        for line in BufReader::new(stdout).lines() {
            let line = line.unwrap_or_default();
            if line == "ready" {
                let _ = ready_tx.send(());
            }
            text.push_str(&line);
            text.push('\n');
        }
        text
    });
    if ready_rx.recv_timeout(Duration::from_secs(60)).is_err() {
        let _ = child.kill();
        let _ = child.wait();
        panic!(
            "Terminate {mode} never said ready: {}\n{}",
            out.join().unwrap(),
            err.join().unwrap()
        );
    }
    thread::sleep(work);
    let sent = Instant::now();
    let killed = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if sent.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            let status = child.wait().unwrap();
            panic!(
                "Terminate {mode} still ran 60 s after SIGTERM ({status:?}): {}",
                err.join().unwrap()
            );
        }
        thread::sleep(Duration::from_millis(10));
    };
    Ended {
        status,
        after_signal: sent.elapsed(),
        stdout: out.join().unwrap(),
        stderr: err.join().unwrap(),
    }
}

fn fresh_dir(name: &str) -> PathBuf {
    dotnet::fresh_run_dir("e2e_termination", name)
}

fn coverage(dir: &Path) -> Profiler {
    let lib = dotnet::build_example("coverage").unwrap();
    Profiler::new(lib, COVERAGE).with_env("CORPROF_COVERAGE_DIR", dir.to_str().unwrap())
}

fn sampler(dir: &Path) -> Profiler {
    let lib = dotnet::build_example("sampler").unwrap();
    Profiler::new(lib, SAMPLER)
        .with_env("CORPROF_SAMPLER_PERIOD", "1")
        .with_env("CORPROF_SAMPLER_DIR", dir.to_str().unwrap())
}

/// The lcov report of `dir` (exactly one).
fn lcov(dir: &Path) -> String {
    let infos: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "info"))
        .collect();
    assert_eq!(
        infos.len(),
        1,
        "one lcov report in {}: {infos:?}",
        dir.display()
    );
    std::fs::read_to_string(&infos[0]).unwrap()
}

/// Hits of the line of Program.cs whose text contains `needle`, in the
/// lcov report `text`.
fn hits(text: &str, needle: &str) -> u64 {
    let source = dotnet::repo_root().join("tests/e2e/roslyn/Terminate/Program.cs");
    let source = std::fs::read_to_string(source).unwrap();
    let line = source
        .lines()
        .position(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("no line with {needle:?}"))
        + 1;
    text.lines()
        .find_map(|l| {
            let rest = l.strip_prefix("DA:")?;
            let (n, count) = rest.split_once(',')?;
            (n.parse::<usize>().ok()? == line).then(|| count.parse().unwrap())
        })
        .unwrap_or_else(|| panic!("no DA for line {line} ({needle:?}):\n{text}"))
}

/// A profiled run that SIGTERM ended ended as the unprofiled `plain` run
/// did (the same exit code or signal), and corprof's handler ran (said so
/// on stderr) exactly where the runtime itself does not shut down on the
/// signal.
fn assert_ends_as_without_the_profiler(rt: &Runtime, ended: &Ended, plain: &Ended) {
    assert_eq!(
        (ended.status.code(), ended.signal()),
        (plain.status.code(), plain.signal()),
        "as without the profiler: {plain:?}\n{ended:?}"
    );
    assert_eq!(
        ended.stderr.contains(FLUSHING),
        !runtime_handles_sigterm(rt),
        "{}",
        ended.stderr
    );
}

/// Before .NET 6 there is no `PosixSignalRegistration`: the program says
/// so and exits 3.
fn assert_needs_net6(rt: &Runtime, mode: &str) {
    let out = rt.run("Terminate", &[mode], None);
    out.assert_exit(3)
        .assert_stdout(&["no PosixSignalRegistration before .NET 6"]);
}

/// Whether this runtime handles `SIGTERM` itself (up to .NET 9).
fn runtime_handles_sigterm(rt: &Runtime) -> bool {
    rt.major() < 10
}

/// The baseline: without a profiler, a program with no handler of its own
/// dies of SIGTERM on 10+ (the runtime installs none), and exits through
/// the runtime's own handler (ProcessExit) before.
#[test]
fn without_a_profiler_the_signal_ends_the_program_as_the_runtime_decides() {
    let rt = dotnet::runtime();
    let ended = run_and_terminate("none", None, Duration::from_millis(300));
    if runtime_handles_sigterm(&rt) {
        assert_eq!(ended.signal(), None, "{ended:?}");
        assert!(ended.status.code().is_some(), "{ended:?}");
    } else {
        assert_eq!(ended.signal(), Some(15), "{ended:?}");
    }
    assert!(!ended.stderr.contains("corprof"), "{ended:?}");
}

/// Coverage: the report is written, with the lines that ran, and the
/// program ends exactly as it does without the profiler.
#[test]
fn coverage_is_reported_when_sigterm_ends_a_program_without_a_handler() {
    let rt = dotnet::runtime();
    let plain = run_and_terminate("none", None, Duration::from_millis(300));
    let dir = fresh_dir("coverage");
    let ended = run_and_terminate("none", Some(&coverage(&dir)), Duration::from_secs(1));
    assert_ends_as_without_the_profiler(&rt, &ended, &plain);
    let text = lcov(&dir);
    assert_eq!(hits(&text, "Console.WriteLine(\"ready\")"), 1, "{text}");
    assert!(hits(&text, "total += Work.Step(i)") > 1000, "{text}");
    assert!(hits(&text, "sum += (i + k) % 7") > 1000, "{text}");
    // The line after the loop never ran.
    assert_eq!(hits(&text, "Console.WriteLine(\"stopped \""), 0, "{text}");
    assert!(ended.after_signal < Duration::from_secs(10), "{ended:?}");
}

/// The flush at a SIGTERM writes nothing of its own to the application's
/// stderr unless `CORPROF_DEBUG=1` asks for it; the report is written.
#[test]
fn the_flush_says_nothing_on_the_hosts_stderr_unless_asked() {
    let dir = fresh_dir("quiet");
    let quiet = coverage(&dir).with_env("CORPROF_DEBUG", "0");
    let ended = run_and_terminate("none", Some(&quiet), Duration::from_millis(500));
    let text = lcov(&dir);
    assert_eq!(hits(&text, "Console.WriteLine(\"ready\")"), 1, "{text}");
    let ours: Vec<&str> = ended
        .stderr
        .lines()
        .filter(|l| l.starts_with("corprof: SIGTERM") || l.starts_with("corprof: shutdown done"))
        .collect();
    assert!(ours.is_empty(), "{ours:?}\n{}", ended.stderr);
}

/// The sampler: the summary and the last period are written, the last
/// period ending when the signal came.
#[test]
fn the_samplers_last_period_is_written_when_sigterm_ends_the_program() {
    let dir = fresh_dir("sampler");
    let plain = run_and_terminate("none", None, Duration::from_millis(300));
    let ended = run_and_terminate("none", Some(&sampler(&dir)), Duration::from_millis(2500));
    assert_ends_as_without_the_profiler(&dotnet::runtime(), &ended, &plain);
    let periods = readers::period_files(&dir);
    // 2.5 s of work: two whole periods and the last, partial one.
    assert!(periods.len() >= 3, "{periods:?}\n{}", ended.stderr);
    let mut args = vec!["-top", "-sample_index=cpu"];
    args.extend(periods.iter().map(|p| p.to_str().unwrap()));
    let top = readers::go_pprof(&args);
    assert!(top.contains("Work.Step"), "{periods:?}:\n{top}");
    let summary = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            p.file_name()
                .unwrap()
                .to_str()
                .unwrap()
                .starts_with("summary")
        })
        .unwrap_or_else(|| panic!("no summary in {}: {}", dir.display(), ended.stderr));
    let summary = readers::summary(&summary).unwrap();
    let number = |key: &str| -> u64 { summary[key].parse().unwrap() };
    // Every period was exported, the last one included, and the profile
    // runs until the signal (2.5 s after "ready"). CPU samples: at least
    // 10 of one busy thread's 2.5 s (250 at 100 Hz on an idle machine;
    // 2 of the 3 runs of 11.0 with four builds beside gave 108 and 120,
    // one fewer than 50).
    assert_eq!(
        number("export_periods"),
        periods.len() as u64,
        "{summary:?}"
    );
    assert!(number("duration_ns") >= 2_400_000_000, "{summary:?}");
    assert!(number("cpu_samples") >= 10, "{summary:?}");
}

/// An application that handles the signal itself and cancels it (a
/// graceful stop, as ASP.NET Core's host does) keeps it: its handler runs,
/// Main returns, exit 0, and the runtime's Shutdown writes the report
/// (corprof's handler never runs).
#[test]
fn an_application_that_cancels_the_signal_keeps_it() {
    let rt = dotnet::runtime();
    let dir = fresh_dir("cancel");
    if rt.major() < 6 {
        return assert_needs_net6(&rt, "cancel");
    }
    let ended = run_and_terminate("cancel", Some(&coverage(&dir)), Duration::from_millis(500));
    assert_eq!(ended.status.code(), Some(0), "{ended:?}");
    assert!(ended.stdout.contains("observed\n"), "{ended:?}");
    assert!(ended.stdout.contains("stopped True\n"), "{ended:?}");
    assert!(!ended.stderr.contains(FLUSHING), "{}", ended.stderr);
    let text = lcov(&dir);
    assert_eq!(hits(&text, "Console.WriteLine(\"stopped \""), 1, "{text}");
    assert_eq!(hits(&text, "context.Cancel = true"), 1, "{text}");
}

/// An application handler that only observes the signal: it runs, then the
/// signal's default action happens (on 10+: System.Native re-raises it to
/// the handler it replaced, corprof's, which flushes and ends the process
/// by the signal) — the report is complete in both cases.
#[test]
fn an_application_that_only_observes_the_signal_still_gets_the_report() {
    let rt = dotnet::runtime();
    let dir = fresh_dir("observe");
    if rt.major() < 6 {
        return assert_needs_net6(&rt, "observe");
    }
    let ended = run_and_terminate("observe", Some(&coverage(&dir)), Duration::from_millis(500));
    assert!(ended.stdout.contains("observed\n"), "{ended:?}");
    let plain = run_and_terminate("observe", None, Duration::from_millis(300));
    assert_ends_as_without_the_profiler(&rt, &ended, &plain);
    let text = lcov(&dir);
    assert_eq!(hits(&text, "Console.WriteLine(\"observed\")"), 1, "{text}");
    assert!(hits(&text, "total += Work.Step(i)") > 1000, "{text}");
}
