//! EventPipe sessions over the diagnostics IPC channel, their stream read
//! live with `corprof::nettrace`, against the `Sampling` program (two
//! threads spinning in `Hot` and `Warm`, the main thread allocating).
//!
//! On every runtime: a few seconds of the sample profiler and the runtime
//! provider with rundown at stop (`CollectTracing2`, which .NET Core 3.1.3
//! knows too: measured), parsed end to end; the same without rundown. A
//! session without stacks needs `CollectTracing3`, one with the rundown's
//! keywords chosen `CollectTracing4`: .NET 9 and later run them, .NET Core
//! 3.1 and .NET 8 refuse them with the runtime's `DS_IPC_E_UNKNOWN_COMMAND`
//! (measured); one with an event filter `CollectTracing5`, which .NET 10
//! and later run and earlier runtimes refuse.
//!
//! The `corprof` command: `ps` lists the program, `trace collect` writes a
//! `.nettrace` file and `trace convert` names its samples (`Hot` among
//! them); and the reader reads what Microsoft's `dotnet-trace` writes
//! (installed into `.cache/tools` with `dotnet tool install`, pinned).

// The real-runtime harness (tests/common/dotnet.rs) is Unix only.
#![cfg(unix)]

mod common;

use std::collections::BTreeMap;
use std::os::unix::process::CommandExt;
use std::process::{Child, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use common::dotnet::{self, Runtime};
use corprof::diagnostics::{
    Command, DiagnosticsClient, Error, EventPipeSession, Provider, Rundown, SessionConfig,
    DS_IPC_E_UNKNOWN_COMMAND,
};
use corprof::nettrace::{
    Event, NettraceReader, Stats, TraceInfo, RUNDOWN_PROVIDER, RUNTIME_PROVIDER,
    SAMPLE_PROFILER_PROVIDER,
};

/// The runtime provider's GC (0x1), loader (0x8), JIT (0x10) and exception
/// (0x8000) keywords (ClrEtwAll.man).
const RUNTIME_KEYWORDS: u64 = 0x1 | 0x8 | 0x10 | 0x8000;

struct Target(Child);

impl Drop for Target {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts `Sampling` spinning for `seconds` and waits for its diagnostics
/// endpoint.
fn start_sampling(rt: &Runtime, seconds: u32) -> (Target, DiagnosticsClient) {
    let mut cmd = rt.command("Sampling", &[&seconds.to_string(), "500"], None);
    cmd.stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0);
    let child = Target(cmd.spawn().expect("start Sampling"));
    let pid = child.0.id();
    let start = Instant::now();
    loop {
        match DiagnosticsClient::for_process(pid) {
            Ok(client) => return (child, client),
            Err(e) if start.elapsed() > Duration::from_secs(30) => {
                panic!("no diagnostics endpoint for Sampling ({pid}) after 30 s: {e}")
            }
            Err(_) => thread::sleep(Duration::from_millis(20)),
        }
    }
}

fn config(rundown: Rundown) -> SessionConfig {
    let mut config = SessionConfig::new(vec![
        Provider::new(SAMPLE_PROFILER_PROVIDER),
        Provider::new(RUNTIME_PROVIDER)
            .keywords(RUNTIME_KEYWORDS)
            .level(4),
    ]);
    config.rundown = rundown;
    config
}

/// What one session read.
struct Collected {
    command: Command,
    trace: TraceInfo,
    events: Vec<Event>,
    stats: Stats,
}

/// Runs a session for `seconds`, reading its stream on another thread as
/// it comes, then stops it and reads to the end marker.
/// `start_session`, tried again while the endpoint refuses connections: a
/// runtime creates its socket (which discovery finds) before it listens on
/// it, and under load the window is wide enough to hit.
fn start(client: &DiagnosticsClient, config: &SessionConfig) -> Result<EventPipeSession, Error> {
    let begin = Instant::now();
    loop {
        match client.start_session(config) {
            Err(Error::Connect { .. }) if begin.elapsed() < Duration::from_secs(10) => {
                thread::sleep(Duration::from_millis(50));
            }
            other => return other,
        }
    }
}

fn collect(client: &DiagnosticsClient, config: &SessionConfig, seconds: u64) -> Collected {
    collect_until(client, config, Duration::from_secs(seconds), |_| false)
}

/// [`collect`], stopping as soon as `enough` says so of an event (or after
/// `limit`).
fn collect_until(
    client: &DiagnosticsClient,
    config: &SessionConfig,
    limit: Duration,
    mut enough: impl FnMut(&Event) -> bool + Send + 'static,
) -> Collected {
    let session = start(client, config).expect("start the session");
    let command = session.command();
    let stopper = session.stopper();
    // `false`: stop now; `true`: the stream has ended.
    let (tx, rx) = mpsc::channel::<bool>();
    let reader = thread::spawn(move || {
        let mut reader = NettraceReader::new(session);
        let mut events = Vec::new();
        let mut asked = false;
        let result = loop {
            match reader.next_event() {
                Ok(Some(event)) => {
                    if !asked && enough(&event) {
                        asked = true;
                        let _ = tx.send(false);
                    }
                    events.push(event);
                }
                Ok(None) => break Ok(()),
                Err(e) => break Err(e),
            }
        };
        let _ = tx.send(true);
        (result, reader.trace().cloned(), events, reader.stats())
    });
    let ended = matches!(rx.recv_timeout(limit), Ok(true));
    assert!(!ended, "the stream ended before StopTracing");
    stopper.stop().expect("StopTracing");
    // The rundown and the end marker follow the stop.
    let wait = Instant::now();
    while !matches!(rx.recv_timeout(Duration::from_secs(60)), Ok(true)) {
        assert!(
            wait.elapsed() < Duration::from_secs(60),
            "the stream ends within 60 s of StopTracing"
        );
    }
    let (result, trace, events, stats) = reader.join().unwrap();
    result.expect("the stream parses to its end marker");
    Collected {
        command,
        trace: trace.expect("a Trace object"),
        events,
        stats,
    }
}

fn count_by_provider(events: &[Event]) -> BTreeMap<&str, usize> {
    let mut counts = BTreeMap::new();
    for e in events {
        *counts.entry(e.provider()).or_insert(0) += 1;
    }
    counts
}

/// The code range of each method the rundown names `name`.
fn method_ranges(events: &[Event], name: &str) -> Vec<(u64, u64)> {
    let mut ranges = Vec::new();
    for e in events {
        if e.provider() != RUNDOWN_PROVIDER || e.event_id() != 144 {
            continue;
        }
        let fields = e.fields().expect("MethodDCEndVerbose decodes");
        let get = |n: &str| &fields.iter().find(|(f, _)| f == n).unwrap().1;
        if get("MethodName").as_str() == Some(name) {
            let start = get("MethodStartAddress").as_u64().unwrap();
            let size = get("MethodSize").as_u64().unwrap();
            ranges.push((start, start + size));
        }
    }
    ranges
}

#[test]
fn a_session_streams_samples_runtime_events_and_the_rundown() {
    let rt = dotnet::runtime();
    let (_target, client) = start_sampling(&rt, 20);
    // Let the spinners get going and the JIT compile `Hot`.
    thread::sleep(Duration::from_millis(500));
    let got = collect(&client, &config(Rundown::Default), 3);
    assert_eq!(
        got.command,
        Command::COLLECT_TRACING_2,
        "runtime {}",
        rt.major()
    );
    assert_eq!(got.trace.pointer_size, 8);
    assert_eq!(got.trace.process_id, _target.0.id());
    assert!(got.trace.qpc_frequency > 0);

    let counts = count_by_provider(&got.events);
    for provider in [SAMPLE_PROFILER_PROVIDER, RUNTIME_PROVIDER, RUNDOWN_PROVIDER] {
        assert!(
            counts.get(provider).copied().unwrap_or(0) > 0,
            "no events from {provider} (runtime {}): {counts:?}",
            rt.major()
        );
    }
    assert_eq!(got.stats.lost_events, 0, "{:?}", got.stats);
    assert!(got.stats.sequence_points > 0, "{:?}", got.stats);

    // Timestamps fall within the session: from its start to some seconds on.
    for e in &got.events {
        let t = got.trace.seconds_since_start(e.timestamp);
        assert!((-1.0..120.0).contains(&t), "{t} s: {e:?}");
    }
    // Every runtime event with a known layout decodes.
    for e in got.events.iter().filter(|e| e.layout().is_some()) {
        e.fields().unwrap_or_else(|err| {
            panic!("{} {} v{}: {err}", e.provider(), e.event_id(), e.version())
        });
    }
    // The rundown names the hot method, and samples land in its code.
    let hot = method_ranges(&got.events, "Hot");
    assert!(!hot.is_empty(), "the rundown does not name Hot");
    let samples: Vec<&Event> = got
        .events
        .iter()
        .filter(|e| e.provider() == SAMPLE_PROFILER_PROVIDER)
        .collect();
    let in_hot = samples
        .iter()
        .filter(|e| {
            e.stack
                .iter()
                .any(|ip| hot.iter().any(|&(a, b)| (a..b).contains(ip)))
        })
        .count();
    assert!(
        in_hot > 0,
        "none of {} samples has Hot ({hot:x?}) on its stack",
        samples.len()
    );
    let mut kinds: BTreeMap<(&str, u32, u32), usize> = BTreeMap::new();
    for e in &got.events {
        *kinds
            .entry((e.provider(), e.event_id(), e.version()))
            .or_insert(0) += 1;
    }
    eprintln!(
        "runtime {}: {counts:?}, {} samples in Hot, {:?}\n{kinds:?}",
        rt.major(),
        in_hot,
        got.stats
    );
}

#[test]
fn a_session_without_rundown() {
    let rt = dotnet::runtime();
    let (_target, client) = start_sampling(&rt, 20);
    let got = collect(&client, &config(Rundown::None), 2);
    assert_eq!(got.command, Command::COLLECT_TRACING_2);
    let counts = count_by_provider(&got.events);
    assert!(
        counts.get(SAMPLE_PROFILER_PROVIDER).copied().unwrap_or(0) > 0,
        "{counts:?}"
    );
    assert_eq!(counts.get(RUNDOWN_PROVIDER), None, "{counts:?}");
    assert_eq!(got.stats.lost_events, 0, "{:?}", got.stats);
}

#[test]
fn a_session_without_stacks() {
    let rt = dotnet::runtime();
    let (_target, client) = start_sampling(&rt, 20);
    let mut no_stacks = config(Rundown::None);
    no_stacks.stacks = false;
    assert_eq!(no_stacks.command(), Command::COLLECT_TRACING_3);
    if rt.major() < 9 {
        // Measured: 3.1.3 and 8.0.34 answer DS_IPC_E_UNKNOWN_COMMAND.
        let err = start(&client, &no_stacks).expect_err("CollectTracing3 needs .NET 9");
        assert_eq!(err.hresult(), Some(DS_IPC_E_UNKNOWN_COMMAND), "{err}");
        assert!(matches!(err, Error::Runtime(_)));
        assert!(
            err.to_string().contains("does not know this command"),
            "{err}"
        );
        return;
    }
    let got = collect(&client, &no_stacks, 2);
    assert_eq!(got.command, Command::COLLECT_TRACING_3);
    let runtime: Vec<&Event> = got
        .events
        .iter()
        .filter(|e| e.provider() == RUNTIME_PROVIDER)
        .collect();
    assert!(!runtime.is_empty());
    assert!(
        runtime.iter().all(|e| e.stack.is_empty()),
        "runtime events with stacks in a session without stacks"
    );
}

#[test]
fn a_session_with_rundown_keywords() {
    let rt = dotnet::runtime();
    let (_target, client) = start_sampling(&rt, 20);
    // Loader (0x8), JIT (0x10) and end (0x100) rundown: the methods and
    // modules, without the IL-to-native maps (0x20000) the default asks for.
    let chosen = config(Rundown::Keywords(0x8 | 0x10 | 0x100));
    assert_eq!(chosen.command(), Command::COLLECT_TRACING_4);
    if rt.major() < 9 {
        let err = start(&client, &chosen).expect_err("CollectTracing4 needs .NET 9");
        assert_eq!(err.hresult(), Some(DS_IPC_E_UNKNOWN_COMMAND), "{err}");
        return;
    }
    let got = collect(&client, &chosen, 2);
    assert_eq!(got.command, Command::COLLECT_TRACING_4);
    let rundown = |id| {
        got.events
            .iter()
            .filter(|e| e.provider() == RUNDOWN_PROVIDER && e.event_id() == id)
            .count()
    };
    assert!(rundown(144) > 0, "no MethodDCEndVerbose");
    assert_eq!(rundown(150), 0, "IL-to-native maps that were not asked for");
    assert!(!method_ranges(&got.events, "Hot").is_empty());
}

const CORPROF: &str = env!("CARGO_BIN_EXE_corprof");

fn out_dir(name: &str) -> std::path::PathBuf {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("e2e_trace")
        .join(format!("{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn run(cmd: &mut std::process::Command, what: &str) -> String {
    let out = cmd.output().unwrap_or_else(|e| panic!("{what}: {e}"));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{what}: {}\n{stderr}", out.status);
    String::from_utf8_lossy(&out.stdout).into_owned() + &stderr
}

/// The count of the folded stacks whose leaf is `leaf`.
fn folded_leaf_count(folded: &str, leaf: &str) -> u64 {
    folded
        .lines()
        .filter_map(|l| l.rsplit_once(' '))
        .filter(|(stack, _)| stack.rsplit(';').next() == Some(leaf))
        .map(|(_, n)| n.parse::<u64>().unwrap())
        .sum()
}

/// Reads `file` whole with the reader: its events, per provider.
fn read_file(file: &std::path::Path) -> (BTreeMap<String, usize>, Stats) {
    let mut reader = NettraceReader::new(std::fs::File::open(file).unwrap());
    let mut counts = BTreeMap::new();
    for event in &mut reader {
        let event = event.unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        *counts.entry(event.provider().to_string()).or_insert(0) += 1;
    }
    (counts, reader.stats())
}

#[test]
fn the_corprof_command_collects_and_converts() {
    let rt = dotnet::runtime();
    let (target, _client) = start_sampling(&rt, 20);
    let pid = target.0.id().to_string();
    thread::sleep(Duration::from_millis(500));
    let listing = run(std::process::Command::new(CORPROF).arg("ps"), "corprof ps");
    assert!(
        listing
            .lines()
            .any(|l| l.split_whitespace().next() == Some(pid.as_str())),
        "{pid} not in:\n{listing}"
    );
    let dir = out_dir("cli");
    let trace = dir.join("sampling.nettrace");
    let said = run(
        std::process::Command::new(CORPROF)
            .args(["trace", "collect", "-p", &pid, "--duration", "3", "-o"])
            .arg(&trace)
            .stdin(Stdio::null()),
        "corprof trace collect",
    );
    assert!(said.contains(", 0 lost;"), "{said}");
    let (counts, stats) = read_file(&trace);
    assert!(
        counts.get(SAMPLE_PROFILER_PROVIDER).copied().unwrap_or(0) > 0,
        "{counts:?}"
    );
    assert!(
        counts.get(RUNDOWN_PROVIDER).copied().unwrap_or(0) > 0,
        "{counts:?}"
    );
    assert_eq!(stats.lost_events, 0);
    let folded = dir.join("sampling.folded");
    run(
        std::process::Command::new(CORPROF)
            .args(["trace", "convert"])
            .arg(&trace)
            .args(["--format", "folded", "-o"])
            .arg(&folded),
        "corprof trace convert",
    );
    let text = std::fs::read_to_string(&folded).unwrap();
    let hot = folded_leaf_count(&text, "E2E.Sampling.Program.Hot");
    let warm = folded_leaf_count(&text, "E2E.Sampling.Program.Warm");
    assert!(hot > 0, "no samples in Hot:\n{text}");
    // Hot runs three times Warm's loop: more samples, whatever the noise.
    assert!(hot > warm, "Hot {hot} <= Warm {warm}:\n{text}");
    // The pprof, read by Go's pprof: the same samples in Hot.
    let pprof = dir.join("sampling.pb.gz");
    run(
        std::process::Command::new(CORPROF)
            .args(["trace", "convert"])
            .arg(&trace)
            .args(["--format", "pprof", "-o"])
            .arg(&pprof),
        "corprof trace convert --format pprof",
    );
    let top = common::readers::go_pprof(&["-top", "-nodecount=1000", pprof.to_str().unwrap()]);
    let flat_hot: u64 = top
        .lines()
        .find(|l| l.trim_end().ends_with(" E2E.Sampling.Program.Hot"))
        .and_then(|l| l.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no Hot in go tool pprof -top:\n{top}"));
    assert_eq!(flat_hot, hot, "{top}");
}

#[test]
fn reads_what_dotnet_trace_writes() {
    let rt = dotnet::runtime();
    let tool = common::tools::dotnet_tool("dotnet-trace");
    let (target, _client) = start_sampling(&rt, 20);
    thread::sleep(Duration::from_millis(500));
    let dir = out_dir("dotnet-trace");
    let trace = dir.join("theirs.nettrace");
    run(
        std::process::Command::new(&tool)
            .args(["collect", "-p", &target.0.id().to_string()])
            .args(["--duration", "00:00:00:03", "-o"])
            .arg(&trace)
            .stdin(Stdio::null())
            .env("DOTNET_CLI_TELEMETRY_OPTOUT", "1"),
        "dotnet-trace collect",
    );
    let (counts, stats) = read_file(&trace);
    for provider in [SAMPLE_PROFILER_PROVIDER, RUNDOWN_PROVIDER] {
        assert!(
            counts.get(provider).copied().unwrap_or(0) > 0,
            "{provider}: {counts:?}"
        );
    }
    assert_eq!(stats.lost_events, 0, "{stats:?}");
    let folded = dir.join("theirs.folded");
    run(
        std::process::Command::new(CORPROF)
            .args(["trace", "convert"])
            .arg(&trace)
            .arg("-o")
            .arg(&folded),
        "corprof trace convert",
    );
    let text = std::fs::read_to_string(&folded).unwrap();
    assert!(
        folded_leaf_count(&text, "E2E.Sampling.Program.Hot") > 0,
        "no samples in Hot:\n{text}"
    );
}

/// A heap dump as `dotnet-gcdump` asks for one: the runtime provider with
/// the GC (0x1), type (0x80000), heap dump (0x100000), heap collect
/// (0x800000, which makes the runtime run a GC at once) and type names
/// (0x1000000) keywords, read until the dump's GC ends; the bulk events
/// decode by the manifest's layouts, each with as many values as its
/// `Count`, and name `System.String` among the types.
#[test]
fn a_heap_dump_decodes_by_the_manifest_layouts() {
    let rt = dotnet::runtime();
    let (_target, client) = start_sampling(&rt, 20);
    thread::sleep(Duration::from_millis(500));
    let mut config = SessionConfig::new(vec![Provider::new(RUNTIME_PROVIDER)
        .keywords(0x1 | 0x8_0000 | 0x10_0000 | 0x80_0000 | 0x100_0000)
        .level(5)]);
    config.rundown = Rundown::None;
    // The dump is done at the end of its GC: the first GCEnd (2) after a
    // bulk node event (18). Up to 60 s on a loaded machine.
    let mut dumping = false;
    let got = collect_until(&client, &config, Duration::from_secs(60), move |e| {
        if e.provider() == RUNTIME_PROVIDER {
            match e.event_id() {
                18 => dumping = true,
                2 if dumping => return true,
                _ => {}
            }
        }
        false
    });
    let mut counts: BTreeMap<u32, usize> = BTreeMap::new();
    let mut type_names = Vec::new();
    for e in got
        .events
        .iter()
        .filter(|e| e.provider() == RUNTIME_PROVIDER)
    {
        if !matches!(e.event_id(), 15 | 16 | 18 | 19) {
            continue;
        }
        *counts.entry(e.event_id()).or_insert(0) += 1;
        let fields = e
            .fields()
            .unwrap_or_else(|err| panic!("event {} v{}: {err}", e.event_id(), e.version()));
        let get = |n: &str| &fields.iter().find(|(f, _)| f == n).unwrap().1;
        let values = get("Values").as_array().unwrap();
        assert_eq!(
            get("Count").as_u64(),
            Some(values.len() as u64),
            "event {}",
            e.event_id()
        );
        if e.event_id() == 15 {
            for v in values {
                type_names.push(v.field("Name").unwrap().as_str().unwrap().to_string());
            }
        }
    }
    for id in [15, 16, 18, 19] {
        assert!(
            counts.get(&id).copied().unwrap_or(0) > 0,
            "no event {id}: {counts:?}"
        );
    }
    // Strings are on the heap from the runtime's start.
    assert!(
        type_names.iter().any(|n| n == "System.String"),
        "no System.String among {} types",
        type_names.len()
    );
    assert_eq!(got.stats.lost_events, 0, "{:?}", got.stats);
}

/// `CollectTracing5`'s event filter: the runtime provider with only
/// `GCSuspendEEBegin` (9) among the events its keywords enable, beside the
/// sample profiler unfiltered. .NET 10 and later; earlier runtimes refuse
/// the command.
#[test]
fn a_session_with_an_event_filter() {
    let rt = dotnet::runtime();
    let (_target, client) = start_sampling(&rt, 20);
    let mut filtered = SessionConfig::new(vec![
        Provider::new(SAMPLE_PROFILER_PROVIDER),
        Provider::new(RUNTIME_PROVIDER)
            .keywords(RUNTIME_KEYWORDS)
            .level(4)
            .only_events(&[9]),
    ]);
    filtered.rundown = Rundown::None;
    assert_eq!(filtered.command(), Command::COLLECT_TRACING_5);
    if rt.major() < 10 {
        let err = start(&client, &filtered).expect_err("CollectTracing5 needs .NET 10");
        assert_eq!(err.hresult(), Some(DS_IPC_E_UNKNOWN_COMMAND), "{err}");
        return;
    }
    let got = collect(&client, &filtered, 2);
    assert_eq!(got.command, Command::COLLECT_TRACING_5);
    let runtime: BTreeMap<u32, usize> = got
        .events
        .iter()
        .filter(|e| e.provider() == RUNTIME_PROVIDER)
        .fold(BTreeMap::new(), |mut m, e| {
            *m.entry(e.event_id()).or_insert(0) += 1;
            m
        });
    assert!(runtime.get(&9).copied().unwrap_or(0) > 0, "{runtime:?}");
    assert_eq!(
        runtime.len(),
        1,
        "events the filter leaves out: {runtime:?}"
    );
    let counts = count_by_provider(&got.events);
    assert!(
        counts.get(SAMPLE_PROFILER_PROVIDER).copied().unwrap_or(0) > 0,
        "{counts:?}"
    );
}

/// A provider's `key=value` arguments reach the runtime: `System.Runtime`
/// with `EventCounterIntervalSec=1` sends its counters every second, as
/// `EventCounters` events whose metadata describes them (one unnamed
/// struct holding a `Payload` struct of named fields), decoded by that
/// metadata.
#[test]
fn provider_arguments_reach_the_runtime() {
    let rt = dotnet::runtime();
    let (_target, client) = start_sampling(&rt, 20);
    let mut config = SessionConfig::new(vec![Provider::new("System.Runtime")
        .keywords(0xFFFF_FFFF)
        .level(5)
        .argument("EventCounterIntervalSec", "1")]);
    config.rundown = Rundown::None;
    let got = collect(&client, &config, 3);
    let mut names = Vec::new();
    for e in got
        .events
        .iter()
        .filter(|e| e.provider() == "System.Runtime" && e.name() == "EventCounters")
    {
        let fields = e
            .fields()
            .unwrap_or_else(|err| panic!("EventCounters: {err}"));
        let payload = &fields.iter().find(|(n, _)| n == "Payload").unwrap().1;
        names.push(payload.field("Name").unwrap().as_str().unwrap().to_string());
    }
    assert!(
        names.iter().any(|n| n == "cpu-usage"),
        "no cpu-usage counter among {names:?} (runtime {})",
        rt.major()
    );
}

/// A process that exits during `corprof trace collect` ends the session:
/// the runtime sends the rundown and the stream's end as it shuts down,
/// and the command finishes then, not at the end of its duration.
#[test]
fn trace_collect_ends_when_the_process_exits() {
    let rt = dotnet::runtime();
    let (mut target, _client) = start_sampling(&rt, 4);
    let dir = out_dir("exit");
    let trace = dir.join("exit.nettrace");
    let start = Instant::now();
    let said = run(
        std::process::Command::new(CORPROF)
            .args(["trace", "collect", "-p", &target.0.id().to_string()])
            .args(["--duration", "120", "-o"])
            .arg(&trace)
            .stdin(Stdio::null()),
        "corprof trace collect",
    );
    let took = start.elapsed();
    assert!(took < Duration::from_secs(60), "took {took:?}: {said}");
    let status = target.0.wait().unwrap();
    assert_eq!(status.code(), Some(37), "Sampling's exit code");
    let (counts, stats) = read_file(&trace);
    assert!(
        counts.get(RUNDOWN_PROVIDER).copied().unwrap_or(0) > 0,
        "{counts:?}"
    );
    assert_eq!(stats.lost_events, 0);
}
