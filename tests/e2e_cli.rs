//! The `corprof` commands that read a running process's state, against the
//! `Diag` program (tests/e2e/roslyn/Diag: a Meter `Corprof.Diag` with a
//! counter `diag.requests` growing by 7 every 100 ms and a gauge
//! `diag.queue` always 42, from .NET 6; an 8 MB array kept alive; a thread
//! blocked in `Blocker.WaitHere`; a static list of N `DiagKept`).
//!
//! `counters collect` (csv and json) and `counters monitor` show the
//! runtime's `cpu-usage` and `gc-heap-size` EventCounters and the program's
//! instruments; on .NET Core 3.1, which has no `System.Diagnostics.Metrics`,
//! the EventCounters and the command's message saying so. `counters
//! monitor` draws at most a table a second, in place on a terminal, and
//! names a provider or counter that never reported (exit 1). `stack` shows
//! the `blocker` thread waiting in `Blocker.WaitHere` and the main thread
//! in `Program.Main`. `gcdump` counts the 1234 `DiagKept` objects the
//! program keeps, in its histogram and in its pprof (read by Go's pprof).

// The real-runtime harness (tests/common/dotnet.rs) is Unix only.
#![cfg(unix)]

mod common;

use std::io::{BufRead, BufReader};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};

use common::dotnet::{self, Runtime};
use common::readers;

const CORPROF: &str = env!("CARGO_BIN_EXE_corprof");

struct Target(Child);

impl Drop for Target {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts `Diag` for `seconds`, keeping `count` objects, and waits for its
/// `ready`.
fn start_diag(rt: &Runtime, seconds: u32, count: u32) -> Target {
    let mut cmd = rt.command("Diag", &[&seconds.to_string(), &count.to_string()], None);
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .process_group(0);
    let mut child = Target(cmd.spawn().expect("start Diag"));
    let stdout = child.0.stdout.take().expect("piped stdout");
    let mut line = String::new();
    BufReader::new(stdout)
        .read_line(&mut line)
        .expect("read Diag's output");
    assert_eq!(line.trim(), "ready", "Diag did not start");
    child
}

/// Runs `corprof ARGS`: (exit code, stdout, stderr).
fn corprof_status(args: &[&str]) -> (Option<i32>, String, String) {
    let out = Command::new(CORPROF)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("run corprof");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    (out.status.code(), stdout, stderr)
}

/// Runs `corprof ARGS`, which must succeed: (stdout, stderr).
fn corprof(args: &[&str]) -> (String, String) {
    let (code, stdout, stderr) = corprof_status(args);
    assert_eq!(code, Some(0), "corprof {args:?}:\n{stderr}");
    (stdout, stderr)
}

/// The CSV rows of `provider`'s `name`: their values.
fn values(csv: &str, provider: &str, name: &str, kind: &str) -> Vec<f64> {
    csv.lines()
        .skip(1)
        .map(|l| l.split(',').collect::<Vec<_>>())
        .filter(|f| f.len() == 6 && f[1] == provider && f[2] == name && f[3] == kind)
        .map(|f| f[5].parse::<f64>().expect("a number"))
        .collect()
}

#[test]
fn counters_show_the_runtime_and_a_custom_meter() {
    let rt = dotnet::runtime();
    let target = start_diag(&rt, 30, 10);
    let pid = target.0.id().to_string();
    let (code, csv, stderr) = corprof_status(&[
        "counters",
        "collect",
        "-p",
        &pid,
        "--counters",
        "System.Runtime[cpu-usage,gc-heap-size,alloc-rate],Corprof.Diag",
        "--duration",
        "5",
    ]);
    // Before .NET 6 the Meter cannot report: said, exit 1, the runtime's
    // values written all the same.
    let no_meter =
        "no values from Corprof.Diag: is the name right? (a Meter needs .NET 6 or later)";
    if rt.major() < 6 {
        assert_eq!(code, Some(1), "{stderr}");
        assert!(stderr.contains(no_meter), "{stderr}");
    } else {
        assert_eq!(code, Some(0), "{stderr}");
    }
    assert_eq!(
        csv.lines().next(),
        Some("Timestamp,Provider,Counter Name,Counter Type,Unit,Value")
    );
    let cpu = values(&csv, "System.Runtime", "cpu-usage", "Mean");
    let heap = values(&csv, "System.Runtime", "gc-heap-size", "Mean");
    assert!(cpu.len() >= 2, "cpu-usage: {cpu:?}\n{csv}\n{stderr}");
    assert!(
        cpu.iter().all(|v| (0.0..=100.0 * 64.0).contains(v)),
        "{cpu:?}"
    );
    assert!(heap.len() >= 2, "gc-heap-size: {heap:?}\n{csv}");
    // The program keeps an 8 MB array: at least that, not gigabytes (MB;
    // .NET Core 3.1 counts 10^6 bytes, later runtimes too).
    assert!(heap.iter().all(|v| *v >= 8.0 && *v < 1024.0), "{heap:?}");
    // A `Sum` counter: the bytes allocated per interval; the program
    // allocates about 10 KB a second.
    let alloc = values(&csv, "System.Runtime", "alloc-rate", "Sum");
    assert!(alloc.len() >= 2, "alloc-rate: {alloc:?}\n{csv}");
    assert!(alloc.iter().all(|v| *v >= 0.0), "{alloc:?}");
    assert!(alloc.iter().any(|v| *v >= 1000.0), "{alloc:?}");
    // The filter keeps only the three runtime counters.
    assert!(
        csv.lines().skip(1).all(|l| l.contains(",cpu-usage,")
            || l.contains(",gc-heap-size,")
            || l.contains(",alloc-rate,")
            || l.contains(",Corprof.Diag,")),
        "{csv}"
    );
    let requests = values(&csv, "Corprof.Diag", "diag.requests", "Rate");
    let queue = values(&csv, "Corprof.Diag", "diag.queue", "Gauge");
    if rt.major() < 6 {
        assert!(requests.is_empty() && queue.is_empty(), "{csv}");
        assert!(
            stderr.contains("System.Diagnostics.Metrics instruments need .NET 6 or later"),
            "{stderr}"
        );
        return;
    }
    assert!(!stderr.contains("need .NET 6"), "{stderr}");
    assert!(queue.len() >= 2, "diag.queue: {queue:?}\n{csv}");
    assert!(queue.iter().all(|v| *v == 42.0), "{queue:?}");
    assert!(requests.len() >= 2, "diag.requests: {requests:?}\n{csv}");
    // 7 per add, about 10 adds a second: each interval's increase is a
    // multiple of 7, and some interval saw several adds.
    assert!(
        requests.iter().all(|v| *v >= 0.0 && v % 7.0 == 0.0),
        "{requests:?}"
    );
    assert!(requests.iter().any(|v| *v >= 21.0), "{requests:?}");
    drop(target);
}

#[test]
fn counters_write_json_and_monitor_a_table() {
    let rt = dotnet::runtime();
    let target = start_diag(&rt, 30, 10);
    let pid = target.0.id().to_string();
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("e2e_cli")
        .join(format!("json-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("counters.json");
    let (code, _, stderr) = corprof_status(&[
        "counters",
        "collect",
        "-p",
        &pid,
        "--counters",
        "System.Runtime[cpu-usage],Corprof.Diag[diag.queue]",
        "--duration",
        "4",
        "--format",
        "json",
        "-o",
        file.to_str().unwrap(),
    ]);
    // Before .NET 6 the Meter gives nothing: exit 1 (the file complete).
    assert_eq!(code, Some(if rt.major() < 6 { 1 } else { 0 }), "{stderr}");
    let json = std::fs::read_to_string(&file).unwrap();
    assert!(
        json.starts_with(&format!("{{\"TargetProcess\":{pid},\"Events\":[{{")),
        "{json}"
    );
    assert!(json.trim_end().ends_with("}]}"), "{json}");
    assert!(
        json.contains("\"provider\":\"System.Runtime\",\"name\":\"cpu-usage\",\"counterType\":\"Mean\",\"unit\":\"%\""),
        "{json}\n{stderr}"
    );
    assert!(
        !json.contains("gc-heap-size") && !json.contains("diag.requests"),
        "{json}"
    );
    if rt.major() >= 6 {
        assert!(
            json.contains("\"provider\":\"Corprof.Diag\",\"name\":\"diag.queue\",\"counterType\":\"Gauge\",\"unit\":\"{item}\",\"value\":42}"),
            "{json}"
        );
    }

    let (code, table, stderr) = corprof_status(&[
        "counters",
        "monitor",
        "-p",
        &pid,
        "--counters",
        "System.Runtime,Corprof.Diag",
        "--duration",
        "4",
    ]);
    assert_eq!(code, Some(if rt.major() < 6 { 1 } else { 0 }), "{stderr}");
    let last = table.rsplit("\n\n").next().unwrap_or("");
    assert!(last.contains("[System.Runtime]\n"), "{table}\n{stderr}");
    assert!(last.contains("    gc-heap-size (MB) "), "{last}");
    if rt.major() >= 6 {
        let line = last
            .lines()
            .find(|l| l.trim_start().starts_with("diag.queue ({item})"))
            .unwrap_or_else(|| panic!("no diag.queue in {last}"));
        assert_eq!(line.split_whitespace().last(), Some("42"), "{line}");
    }
    drop(target);
}

/// Cursor home, erase below: the start of a frame drawn in place.
const HOME_AND_ERASE: &str = "\x1b[H\x1b[J";

#[test]
fn counters_monitor_draws_one_table_per_interval() {
    let rt = dotnet::runtime();
    let target = start_diag(&rt, 40, 10);
    let pid = target.0.id().to_string();
    let monitor = format!("{CORPROF} counters monitor -p {pid} --duration 5");
    // On a terminal (a pseudo-terminal of util-linux `script`; `-e`: its
    // exit code is the command's): each frame in place, at most one a
    // second and one at the end.
    let out = Command::new("script")
        .args(["-q", "-e", "-c", &monitor, "/dev/null"])
        .stdin(Stdio::null())
        .output()
        .expect("util-linux `script` (package bsdutils) runs");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "{}\n{text}", out.status);
    let frames: Vec<&str> = text.split(HOME_AND_ERASE).collect();
    let drawn = frames.len() - 1;
    assert!((2..=6).contains(&drawn), "{drawn} frames:\n{text}");
    // Before the first frame only the command's own line (stderr, on the
    // same terminal); each frame a title and the newest values.
    assert!(!frames[0].contains("[System.Runtime]"), "{text}");
    for frame in &frames[1..] {
        let title = format!("corprof counters monitor: {pid} every 1 s; press Enter to stop\r\n");
        assert!(frame.starts_with(&title), "{frame:?}");
        assert!(frame.contains("[System.Runtime]\r\n"), "{frame:?}");
        assert!(frame.contains("    cpu-usage (%) "), "{frame:?}");
    }
    // `alloc-rate`, a Sum: the bytes per interval.
    assert!(
        frames[drawn].contains("    alloc-rate (B / 1 s) "),
        "{text}"
    );
    assert!(
        text.contains(&format!(" values in {drawn} tables")),
        "{text}"
    );

    // Through a pipe: the same, one table after another, no escapes.
    let (code, table, stderr) =
        corprof_status(&["counters", "monitor", "-p", &pid, "--duration", "5"]);
    assert_eq!(code, Some(0), "{stderr}");
    let tables = table.matches("[System.Runtime]\n").count();
    assert!((2..=6).contains(&tables), "{tables} tables:\n{table}");
    assert!(!table.contains('\x1b'), "{table}");
    assert!(
        stderr.contains(&format!(" values in {tables} tables")),
        "{stderr}"
    );

    // A provider that never reports: named, exit 1.
    let (code, table, stderr) = corprof_status(&[
        "counters",
        "monitor",
        "-p",
        &pid,
        "--counters",
        "Nope.Source,System.Runtime[cpu-usage,cpu-usag]",
        "--duration",
        "3",
    ]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(table.contains("    cpu-usage (%) "), "{table}");
    assert!(
        stderr.contains("corprof: no values from Nope.Source: is the name right?"),
        "{stderr}"
    );
    assert!(
        stderr.contains(
            "corprof: no values of cpu-usag from System.Runtime: is the counter's name right?"
        ),
        "{stderr}"
    );
    drop(target);
}

/// The threads of `corprof stack`'s output: their frames, innermost first.
fn threads(out: &str) -> Vec<(String, Vec<String>)> {
    out.split("\n\n")
        .filter(|t| !t.trim().is_empty())
        .map(|t| {
            let mut lines = t.lines();
            let head = lines.next().unwrap_or("").to_string();
            let frames = lines.map(|l| l.trim().to_string()).collect();
            (head, frames)
        })
        .collect()
}

#[test]
fn stack_shows_the_blocked_thread_in_its_method() {
    let rt = dotnet::runtime();
    let target = start_diag(&rt, 30, 10);
    let pid = target.0.id().to_string();
    // 10 ms (dotnet-stack's default) is short on a loaded machine: 200 ms.
    let (out, stderr) = corprof(&["stack", "-p", &pid, "--duration", "0.2"]);
    let threads = threads(&out);
    assert!(
        threads
            .iter()
            .all(|(head, frames)| head.starts_with("Thread (0x")
                && head.ends_with("):")
                && !frames.is_empty()),
        "{out}\n{stderr}"
    );
    // The blocker: in `Blocker.WaitHere`, below the wait (what lies below
    // it differs: the thread's start, native on some runtimes), once.
    let blocked: Vec<_> = threads
        .iter()
        .filter(|(_, f)| f.iter().any(|f| f == "Blocker.WaitHere"))
        .collect();
    assert_eq!(blocked.len(), 1, "{out}\n{stderr}");
    let frames = &blocked[0].1;
    let at = frames.iter().position(|f| f == "Blocker.WaitHere").unwrap();
    assert!(
        frames[..at].iter().any(|f| f.contains("WaitOne")),
        "a wait above Blocker.WaitHere: {frames:?}"
    );
    // The main thread, in `Program.Main` (sleeping: `Thread.Sleep` is
    // native on 3.1, managed later); a different thread.
    let main: Vec<_> = threads
        .iter()
        .filter(|(_, f)| f.iter().any(|f| f == "Program.Main"))
        .collect();
    assert_eq!(main.len(), 1, "{out}");
    if rt.major() >= 5 {
        assert!(
            main[0]
                .1
                .iter()
                .any(|f| f == "System.Threading.Thread.Sleep"),
            "{:?}",
            main[0].1
        );
    }
    assert_ne!(main[0].0, blocked[0].0);
    drop(target);
}

/// `gcdump`'s rows: (count, bytes, type).
fn histogram(out: &str) -> Vec<(u64, u64, String)> {
    out.lines()
        .skip(1)
        .map(|l| {
            let mut parts = l.split_whitespace();
            let count = parts.next().unwrap().parse().unwrap();
            let bytes = parts.next().unwrap().parse().unwrap();
            (count, bytes, parts.collect::<Vec<_>>().join(" "))
        })
        .collect()
}

#[test]
fn gcdump_counts_the_objects_a_program_keeps() {
    let rt = dotnet::runtime();
    let target = start_diag(&rt, 60, 1234);
    let pid = target.0.id().to_string();
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("e2e_cli")
        .join(format!("gcdump-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let pprof = dir.join("heap.pb.gz");
    let (out, stderr) = corprof(&["gcdump", "-p", &pid, "-o", pprof.to_str().unwrap()]);
    assert_eq!(
        out.lines()
            .next()
            .map(|l| l.split_whitespace().collect::<Vec<_>>()),
        Some(vec!["Count", "Bytes", "Type"]),
        "{out}"
    );
    let rows = histogram(&out);
    // Largest first.
    assert!(rows.windows(2).all(|w| w[0].1 >= w[1].1), "{out}");
    // Exactly the 1234 objects the static list keeps (the program makes no
    // others), each the same size: a header and two longs (32 bytes on
    // 64-bit).
    let kept: Vec<_> = rows.iter().filter(|r| r.2 == "DiagKept").collect();
    assert_eq!(kept.len(), 1, "{out}\n{stderr}");
    assert_eq!(kept[0].0, 1234, "{out}");
    assert_eq!(kept[0].1 % 1234, 0, "{out}");
    assert!((24..=40).contains(&(kept[0].1 / 1234)), "{out}");
    // The 8 MB array: the largest type.
    assert_eq!(rows[0].2, "System.Byte[]", "{out}");
    assert!(rows[0].1 >= 8_000_000, "{out}");
    assert!(rows.iter().any(|r| r.2 == "System.String"), "{out}");
    // The same in pprof, read by Go's pprof: DiagKept's objects.
    let top = readers::go_pprof(&[
        "-top",
        "-nodecount=1000",
        "-sample_index=objects",
        pprof.to_str().unwrap(),
    ]);
    let line = top
        .lines()
        .find(|l| l.split_whitespace().last() == Some("DiagKept"))
        .unwrap_or_else(|| panic!("no DiagKept in:\n{top}"));
    assert_eq!(line.split_whitespace().next(), Some("1234"), "{top}");
    drop(target);
}
