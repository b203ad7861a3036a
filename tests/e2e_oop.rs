//! Out of process against in process, and corprof against Microsoft's
//! tools, on real runtimes.
//!
//! - The same session read twice: the `EventAgree` program writes a known
//!   window of events (two EventSources, five exceptions) while the
//!   `eventpipe_agree` fixture counts them through an in-process session
//!   (`corprof::eventpipe`'s callback, `ICorProfilerInfo12`) and
//!   `corprof trace collect` records them over the diagnostics channel
//!   (read with `corprof::nettrace`): the counts per provider and event id
//!   agree, and match what the program writes.

// The real-runtime harness (tests/common/dotnet.rs) is Unix only.
#![cfg(unix)]

mod common;

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use common::dotnet::{self, Profiler};
use corprof::nettrace::{NettraceReader, Stats};

const CORPROF: &str = env!("CARGO_BIN_EXE_corprof");
const EVENTPIPE_AGREE: &str = "6C1B2D7E-0F4A-4E83-9B52-7A1D3C9E8F60";
const SOURCE_A: &str = "CorProf-Agree-A";
const SOURCE_B: &str = "CorProf-Agree-B";
const RUNTIME: &str = "Microsoft-Windows-DotNETRuntime";
/// How long any one step may take on a loaded machine.
const STEP: Duration = Duration::from_secs(120);

/// A child killed (with its process group) when dropped.
struct Guard(Child);

impl Drop for Guard {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A pipe read line by line on a thread of its own; every line is also
/// kept for messages.
struct Lines {
    rx: mpsc::Receiver<String>,
    seen: Vec<String>,
}

impl Lines {
    fn new(pipe: impl Read + Send + 'static) -> Lines {
        let (tx, rx) = mpsc::channel();
        thread::spawn(move || {
            for line in BufReader::new(pipe).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Lines {
            rx,
            seen: Vec::new(),
        }
    }

    /// Waits for a line that starts with `prefix`; panics after `STEP` or
    /// at the end of the pipe.
    fn wait_for(&mut self, prefix: &str, what: &str) -> String {
        let deadline = Instant::now() + STEP;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.rx.recv_timeout(left) {
                Ok(line) => {
                    self.seen.push(line.clone());
                    if line.starts_with(prefix) {
                        return line;
                    }
                }
                Err(e) => panic!(
                    "{what}: no line starting with {prefix:?} ({e:?}); so far:\n{}",
                    self.seen.join("\n")
                ),
            }
        }
    }

    /// Every line until the end of the pipe (at most `STEP`).
    fn rest(&mut self) -> String {
        let deadline = Instant::now() + STEP;
        while let Ok(line) = self
            .rx
            .recv_timeout(deadline.saturating_duration_since(Instant::now()))
        {
            self.seen.push(line);
        }
        self.seen.join("\n")
    }
}

fn out_dir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("e2e_oop")
        .join(format!("{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn send_line(stdin: &mut ChildStdin, what: &str) {
    stdin
        .write_all(b"\n")
        .and_then(|()| stdin.flush())
        .unwrap_or_else(|e| panic!("{what}: {e}"));
}

/// Waits for `child` to exit, at most `STEP`.
fn wait_exit(child: &mut Child, what: &str) -> std::process::ExitStatus {
    let deadline = Instant::now() + STEP;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        assert!(Instant::now() < deadline, "{what} still running after {STEP:?}");
        thread::sleep(Duration::from_millis(20));
    }
}

/// The events of a `.nettrace` file per (provider, event id), with the
/// reader's statistics.
fn counts_in_file(file: &Path) -> (BTreeMap<(String, u32), u64>, Stats) {
    let mut reader = NettraceReader::new(std::fs::File::open(file).unwrap());
    let mut counts = BTreeMap::new();
    for event in &mut reader {
        let event = event.unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        *counts
            .entry((event.provider().to_string(), event.event_id()))
            .or_insert(0) += 1;
    }
    (counts, reader.stats())
}

/// The `eventpipe_agree` fixture's counts from the program's stderr.
fn counts_in_process(stderr: &str) -> BTreeMap<(String, u32), u64> {
    stderr
        .lines()
        .filter_map(|l| l.strip_prefix("eventpipe_agree "))
        .filter(|l| !l.starts_with("window ") && !l.starts_with("unnamed "))
        .map(|l| {
            let f: Vec<&str> = l.split(' ').collect();
            assert_eq!(f.len(), 3, "{l}");
            ((f[0].to_string(), f[1].parse().unwrap()), f[2].parse().unwrap())
        })
        .collect()
}

/// The `EventAgree` program's window read by an in-process session (the
/// `eventpipe_agree` fixture) and by `corprof trace collect` at once.
///
/// The window is the program's: it writes nothing to its two sources and
/// throws nothing before a line on stdin, which the test sends only once
/// `trace collect` says its session runs, and the out-of-process session is
/// stopped (Enter) once the program says it has written everything, before
/// it exits. The fixture counts from `Begin` to `End` (see its docs). Both
/// must then hold every event of the window: the same count for each
/// provider and id, and the counts the program writes (its source, not the
/// code under test, gives them).
#[test]
fn in_process_and_out_of_process_agree_event_for_event() {
    let rt = dotnet::runtime();
    let library = dotnet::build_example("eventpipe_agree")
        .unwrap_or_else(|e| panic!("building eventpipe_agree: {e}"));
    let profiler = Profiler::new(library, EVENTPIPE_AGREE);
    let mut cmd = rt.command("EventAgree", &[], Some(&profiler));
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    let mut program = Guard(cmd.spawn().expect("start EventAgree"));
    let pid = program.0.id().to_string();
    let mut program_in = program.0.stdin.take().unwrap();
    let mut program_out = Lines::new(program.0.stdout.take().unwrap());
    let mut program_err = Lines::new(program.0.stderr.take().unwrap());
    program_out.wait_for("ready", "EventAgree");

    if rt.major() < 5 {
        // No in-process EventPipe before .NET 5: the fixture says so.
        send_line(&mut program_in, "EventAgree");
        program_out.wait_for("emitted", "EventAgree");
        send_line(&mut program_in, "EventAgree");
        assert_eq!(wait_exit(&mut program.0, "EventAgree").code(), Some(44));
        let stderr = program_err.rest();
        assert!(stderr.contains("needs .NET 5 or later"), "{stderr}");
        return;
    }

    let dir = out_dir("agree");
    let trace = dir.join("agree.nettrace");
    let providers = format!(
        "{SOURCE_A}:0xffffffffffffffff:5,{SOURCE_B}:0xffffffffffffffff:5,{RUNTIME}:0x8000:4"
    );
    let mut collect = Guard(
        Command::new(CORPROF)
            .args(["trace", "collect", "-p", &pid, "--no-rundown"])
            .args(["--duration", "600", "--providers", &providers, "-o"])
            .arg(&trace)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start corprof trace collect"),
    );
    let mut collect_in = collect.0.stdin.take().unwrap();
    let mut collect_err = Lines::new(collect.0.stderr.take().unwrap());
    collect_err.wait_for("corprof: tracing ", "corprof trace collect");

    send_line(&mut program_in, "EventAgree");
    let emitted = program_out.wait_for("emitted", "EventAgree");
    assert_eq!(emitted, "emitted 5");
    send_line(&mut collect_in, "corprof trace collect");
    let status = wait_exit(&mut collect.0, "corprof trace collect");
    let said = collect_err.rest();
    assert!(status.success(), "corprof trace collect: {status}\n{said}");
    assert!(said.contains(", 0 lost;"), "{said}");

    send_line(&mut program_in, "EventAgree");
    let status = wait_exit(&mut program.0, "EventAgree");
    let stderr = program_err.rest();
    assert_eq!(status.code(), Some(44), "EventAgree: {status}\n{stderr}");
    assert!(
        stderr.contains("eventpipe_agree window closed"),
        "the in-process session saw Begin and End:\n{stderr}"
    );
    assert!(!stderr.contains("eventpipe_agree unnamed"), "{stderr}");

    let inside = counts_in_process(&stderr);
    let (outside, stats) = counts_in_file(&trace);
    assert_eq!(stats.lost_events, 0, "{stats:?}");
    eprintln!("in process: {inside:?}\nout of process: {outside:?}");
    // The program's own events, as its source writes them.
    let written = [
        (SOURCE_A, 1, 1),
        (SOURCE_A, 2, 100),
        (SOURCE_A, 3, 30),
        (SOURCE_A, 4, 1),
        (SOURCE_B, 7, 300),
        (SOURCE_B, 9, 3),
        // ExceptionThrown_V1, once per exception.
        (RUNTIME, 80, 5),
    ];
    for (provider, id, count) in written {
        let key = (provider.to_string(), id);
        assert_eq!(inside.get(&key), Some(&count), "in process: {inside:?}");
    }
    // Out of process: the same providers (the session also carries the
    // runtime's own `Microsoft-DotNETCore-EventPipe` ProcessInfo event).
    let outside: BTreeMap<(String, u32), u64> = outside
        .into_iter()
        .filter(|((p, _), _)| [SOURCE_A, SOURCE_B, RUNTIME].contains(&p.as_str()))
        .collect();
    assert_eq!(
        inside, outside,
        "in process (left) and out of process (right) differ"
    );
}
