//! `corprof`: the command-line tool (no dependencies).
//!
//! ```text
//! corprof ps
//! corprof trace collect -p PID [--duration SECONDS] [--providers LIST] [--no-rundown] [-o FILE]
//! corprof trace convert FILE [--format folded|pprof|speedscope] [-o FILE]
//! corprof counters monitor -p PID [--counters LIST] [--refresh-interval SECONDS] [--duration SECONDS]
//! corprof counters collect -p PID [--counters LIST] [--refresh-interval SECONDS] [--duration SECONDS] [--format csv|json] [-o FILE]
//! corprof stack -p PID [--duration SECONDS]
//! corprof gcdump -p PID [-o FILE.pb.gz] [--timeout SECONDS]
//! corprof heap diff A B [--top N]
//! corprof coverage [--include PATTERN]... [--exclude PATTERN]... [--profiler PATH] -o DIR -- COMMAND [ARGS...]
//! ```
//!
//! `ps` lists the .NET processes of this machine (their diagnostics
//! endpoints). `trace collect` starts an EventPipe session in a process
//! over the diagnostics IPC channel, writes its stream to a `.nettrace`
//! file (as `dotnet-trace` does) and stops it after the duration or when a
//! line is typed; the default providers sample every thread's stack
//! (`Microsoft-DotNETCore-SampleProfiler`) with the runtime's loader and
//! JIT events. `trace convert` turns the samples of a `.nettrace` file
//! into CPU stacks named through the methods of the rundown (and the JIT
//! events): folded stacks, pprof or speedscope. `counters` shows (monitor)
//! or writes (collect) EventCounters and `System.Diagnostics.Metrics`
//! instruments, as `dotnet-counters` does. `stack` prints every managed
//! thread's stack now, as `dotnet-stack` does. `gcdump` prints a type
//! histogram of the live heap and writes it as pprof, from a heap dump
//! asked for as `dotnet-gcdump` does. `heap diff` names the leak suspects
//! between two type histograms (heap snapshots' `heap-<time>.txt`, or
//! `gcdump`'s printed tables): the types whose objects and bytes grew,
//! by bytes grown. `coverage` runs a command (`dotnet test`)
//! with the coverage profiler in each of its .NET processes and writes one
//! lcov and one Cobertura report of them all.
//!
//! `-h` or `--help` after a subcommand prints its usage, `--version` the
//! crate's version (exit 0); a usage error exits 2, any other failure 1
//! (corprof/usage.rs).

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{self, BufWriter, Read, Write};
use std::process::ExitCode;
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use corprof::diagnostics::{
    discovery, DiagnosticsClient, EventPipeSession, Provider, Rundown, SessionConfig,
};
use corprof::nettrace::{
    Event, NettraceReader, RUNDOWN_PROVIDER, RUNTIME_PROVIDER, SAMPLE_PROFILER_PROVIDER,
};
use corprof::profile::{
    write_folded, write_speedscope, Frames, Pprof, SpeedscopeProfile, StackTree,
};

#[path = "corprof/counters.rs"]
mod counters;
#[path = "corprof/coverage.rs"]
mod coverage;
#[path = "corprof/gcdump.rs"]
mod gcdump;
#[path = "corprof/heap.rs"]
mod heap;
#[path = "corprof/interrupt.rs"]
mod interrupt;
#[path = "corprof/show.rs"]
mod show;
#[path = "corprof/stack.rs"]
mod stack;
#[path = "corprof/usage.rs"]
mod usage;

use usage::usage_error;

const USAGE: &str = "usage:
  corprof ps
  corprof trace collect -p PID [--duration SECONDS] [--providers LIST] [--no-rundown] [-o FILE]
  corprof trace convert FILE [--format folded|pprof|speedscope] [-o FILE]
  corprof counters monitor -p PID [--counters LIST] [--refresh-interval SECONDS] [--duration SECONDS]
  corprof counters collect -p PID [--counters LIST] [--refresh-interval SECONDS] [--duration SECONDS]
                           [--format csv|json] [-o FILE]
  corprof stack -p PID [--duration SECONDS]
  corprof gcdump -p PID [-o FILE.pb.gz] [--timeout SECONDS]
  corprof heap diff A B [--top N]
  corprof coverage [--include PATTERN]... [--exclude PATTERN]... [--profiler PATH] -o DIR -- COMMAND [ARGS...]

counters: comma-separated EventSource or Meter names, each maybe with its counters in
brackets (System.Runtime[cpu-usage,gc-heap-size]); default System.Runtime; interval 1 s.
providers: comma-separated Name[:Keywords[:Level[:key=value;...]]] (dotnet-trace's syntax);
default: Microsoft-DotNETCore-SampleProfiler,Microsoft-Windows-DotNETRuntime:0x18:4";

/// The runtime provider's loader (0x8) and JIT (0x10) keywords: module and
/// method load events, for the methods JIT-compiled during the session.
const DEFAULT_RUNTIME_KEYWORDS: u64 = 0x18;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    // Its own exit code (COMMAND's) and its own usage; before the `-h`
    // look-up below, which would take a `--help` meant for COMMAND.
    if let ["coverage", rest @ ..] = args.as_slice() {
        return coverage::coverage(rest);
    }
    if let Some(code) = usage::help_or_version(&args) {
        return code;
    }
    let result = match args.as_slice() {
        ["ps"] => ps(),
        ["trace", "collect", rest @ ..] => collect(rest),
        ["trace", "convert", rest @ ..] => convert(rest),
        ["counters", "monitor", rest @ ..] => counters::counters(rest, false),
        ["counters", "collect", rest @ ..] => counters::counters(rest, true),
        ["stack", rest @ ..] => stack::stack(rest),
        ["gcdump", rest @ ..] => gcdump::gcdump(rest),
        ["heap", rest @ ..] => heap::heap(rest),
        ["-h" | "--help" | "help"] => {
            println!("{USAGE}");
            Ok(())
        }
        _ => Err(USAGE.to_string()),
    };
    usage::finish(&args, result)
}

/// `--name value` options after the positional arguments.
struct Options<'a> {
    positional: Vec<&'a str>,
    named: BTreeMap<&'a str, &'a str>,
    flags: Vec<&'a str>,
}

impl<'a> Options<'a> {
    /// The options of `command` (`trace collect`, `stack`, ...), which
    /// takes no positional arguments and needs `-p PID`: the process id.
    fn pid(&self, command: &str) -> Result<u32, String> {
        if !self.positional.is_empty() {
            return Err(usage_error(format!(
                "unexpected `{}`",
                self.positional.join(" ")
            )));
        }
        self.named
            .get("-p")
            .ok_or_else(|| usage_error(format!("{command} needs -p PID")))?
            .parse()
            .map_err(|_| usage_error("-p takes a process id"))
    }

    /// A number of seconds given to `key` (more than 0, at most `max`), or
    /// `None` when the option is absent.
    fn seconds(&self, key: &str, max: f64) -> Result<Option<f64>, String> {
        let Some(text) = self.named.get(key) else {
            return Ok(None);
        };
        text.parse()
            .ok()
            .filter(|s: &f64| *s > 0.0 && *s <= max)
            .map(Some)
            .ok_or_else(|| {
                usage_error(format!(
                    "{key} takes a number of seconds, more than 0 and at most {max}"
                ))
            })
    }
}

/// Splits `args` into positional arguments, options that take a value
/// (`with_value`) and flags; any other `-x` is an error. Every subcommand's
/// one parser.
fn options<'a>(
    args: &[&'a str],
    with_value: &[&str],
    flags: &[&str],
) -> Result<Options<'a>, String> {
    let mut out = Options {
        positional: Vec::new(),
        named: BTreeMap::new(),
        flags: Vec::new(),
    };
    let mut i = 0;
    while i < args.len() {
        let arg = args[i];
        if with_value.contains(&arg) {
            let value = args
                .get(i + 1)
                .ok_or_else(|| usage_error(format!("{arg} needs a value")))?;
            out.named.insert(arg, value);
            i += 2;
        } else if flags.contains(&arg) {
            out.flags.push(arg);
            i += 1;
        } else if arg.starts_with('-') {
            return Err(usage_error(format!("unknown option {arg}")));
        } else {
            out.positional.push(arg);
            i += 1;
        }
    }
    Ok(out)
}

fn ps() -> Result<(), String> {
    let processes = discovery::list().map_err(|e| format!("listing processes: {e}"))?;
    let mut out = io::stdout().lock();
    let mut lines = vec![format!("{:>8}  COMMAND", "PID")];
    for process in processes {
        let client = DiagnosticsClient::at(&process.endpoint).with_timeout(Duration::from_secs(2));
        // ProcessInfo needs .NET 5; otherwise /proc on Linux.
        let command = match client.process_info() {
            Ok(info) => info.command_line,
            Err(_) => std::fs::read(format!("/proc/{}/cmdline", process.pid))
                .map(|b| {
                    String::from_utf8_lossy(&b)
                        .split('\0')
                        .filter(|s| !s.is_empty())
                        .collect::<Vec<_>>()
                        .join(" ")
                })
                .unwrap_or_default(),
        };
        lines.push(format!("{:>8}  {command}", process.pid));
    }
    for line in lines {
        // A closed pipe (`corprof ps | head`) ends the listing quietly.
        if writeln!(out, "{line}").is_err() {
            break;
        }
    }
    Ok(())
}

/// Starts a session in `pid`. A runtime that has just started creates its
/// socket before it listens on it: a refused connection is tried again for
/// a few seconds.
fn start_session(
    client: &DiagnosticsClient,
    config: &SessionConfig,
    pid: u32,
) -> Result<EventPipeSession, String> {
    let begin = std::time::Instant::now();
    loop {
        match client.start_session(config) {
            Err(corprof::diagnostics::Error::Connect { .. })
                if begin.elapsed() < Duration::from_secs(5) =>
            {
                thread::sleep(Duration::from_millis(50));
            }
            other => return other.map_err(|e| format!("starting the session in {pid}: {e}")),
        }
    }
}

/// Copies what is read to a file as it goes.
struct Tee<R, W> {
    source: R,
    copy: W,
}

impl<R: Read, W: Write> Read for Tee<R, W> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.source.read(buf)?;
        self.copy.write_all(&buf[..n])?;
        Ok(n)
    }
}

fn collect(args: &[&str]) -> Result<(), String> {
    let o = options(
        args,
        &["-p", "--duration", "--providers", "-o"],
        &["--no-rundown"],
    )?;
    let pid = o.pid("trace collect")?;
    // At most a year.
    let seconds = o.seconds("--duration", 86_400.0 * 365.0)?.unwrap_or(10.0);
    let providers = match o.named.get("--providers") {
        Some(list) => list
            .split(',')
            .filter(|p| !p.trim().is_empty())
            .map(Provider::parse)
            .collect::<Result<Vec<_>, _>>()
            .map_err(usage_error)?,
        None => vec![
            Provider::new(SAMPLE_PROFILER_PROVIDER),
            Provider::new(RUNTIME_PROVIDER)
                .keywords(DEFAULT_RUNTIME_KEYWORDS)
                .level(4),
        ],
    };
    let output = o
        .named
        .get("-o")
        .map(|s| s.to_string())
        .unwrap_or_else(|| format!("trace-{pid}.nettrace"));
    let mut config = SessionConfig::new(providers);
    if o.flags.contains(&"--no-rundown") {
        config.rundown = Rundown::None;
    }
    let client = DiagnosticsClient::for_process(pid).map_err(|e| e.to_string())?;
    let session = start_session(&client, &config, pid)?;
    let stopper = session.stopper();
    let file = File::create(&output).map_err(|e| format!("{output}: {e}"))?;
    eprintln!(
        "corprof: tracing {pid} ({}) for {seconds} s into {output}; press Enter to stop sooner",
        session.command()
    );
    // `true`: stop now (a line was typed); `false`: the stream has ended
    // (the process exited), nothing to stop.
    let (stop_tx, stop_rx) = mpsc::channel::<bool>();
    let enter = stop_tx.clone();
    thread::spawn(move || {
        let mut line = String::new();
        if io::stdin().read_line(&mut line).is_ok_and(|n| n > 0) {
            let _ = enter.send(true);
        }
    });
    let stopping =
        thread::spawn(
            move || match stop_rx.recv_timeout(Duration::from_secs_f64(seconds)) {
                Ok(false) => Ok(()),
                _ => stopper.stop(),
            },
        );
    // The file unbuffered: each piece of the stream is written as it
    // arrives (one write per read of the session, up to the reader's 64 KB),
    // so the file is current while the session runs.
    let mut reader = NettraceReader::new(Tee {
        source: session,
        copy: file,
    });
    let mut counts: BTreeMap<String, u64> = BTreeMap::new();
    let result = loop {
        match reader.next_event() {
            Ok(Some(event)) => *counts.entry(event.provider().to_string()).or_insert(0) += 1,
            Ok(None) => break Ok(()),
            Err(e) => break Err(e),
        }
    };
    let _ = stop_tx.send(false);
    let stats = reader.stats();
    let mut tee = reader.into_inner();
    tee.copy.flush().map_err(|e| format!("{output}: {e}"))?;
    match stopping.join() {
        Ok(Ok(())) => {}
        Ok(Err(e)) if result.is_ok() => eprintln!("corprof: stopping: {e}"),
        _ => {}
    }
    result.map_err(|e| format!("reading the trace: {e}"))?;
    for (provider, n) in &counts {
        eprintln!("corprof: {n:>8} {provider}");
    }
    eprintln!(
        "corprof: {} events, {} bytes, {} lost; wrote {output}",
        stats.events, stats.bytes, stats.lost_events
    );
    Ok(())
}

/// A method's code range and name, from a rundown or JIT event.
struct Method {
    start: u64,
    end: u64,
    name: String,
}

fn method_of(event: &Event) -> Option<Method> {
    let verbose = match event.provider() {
        RUNDOWN_PROVIDER => matches!(event.event_id(), 143 | 144),
        RUNTIME_PROVIDER => event.event_id() == 143,
        _ => false,
    };
    if !verbose {
        return None;
    }
    let fields = event.fields().ok()?;
    let get = |n: &str| fields.iter().find(|(f, _)| f == n).map(|(_, v)| v);
    let start = get("MethodStartAddress")?.as_u64()?;
    let size = get("MethodSize")?.as_u64()?;
    let namespace = get("MethodNamespace")?.as_str()?;
    let name = get("MethodName")?.as_str()?;
    Some(Method {
        start,
        end: start.saturating_add(size),
        name: if namespace.is_empty() {
            name.to_string()
        } else {
            format!("{namespace}.{name}")
        },
    })
}

/// The method whose code holds `ip` (`methods` sorted by start).
fn lookup(methods: &[Method], ip: u64) -> Option<&str> {
    let i = methods.partition_point(|m| m.start <= ip);
    let m = methods.get(i.checked_sub(1)?)?;
    (ip < m.end).then_some(m.name.as_str())
}

fn convert(args: &[&str]) -> Result<(), String> {
    let o = options(args, &["--format", "-o"], &[])?;
    let [input] = o.positional.as_slice() else {
        return Err(usage_error("trace convert takes one file"));
    };
    let format = o.named.get("--format").copied().unwrap_or("folded");
    if !["folded", "pprof", "speedscope"].contains(&format) {
        return Err(usage_error(format!(
            "unknown format {format} (folded, pprof, speedscope)"
        )));
    }
    let file = File::open(input).map_err(|e| format!("{input}: {e}"))?;
    let mut reader = NettraceReader::new(io::BufReader::new(file));
    let mut methods = Vec::new();
    let mut samples: Vec<std::sync::Arc<[u64]>> = Vec::new();
    for event in &mut reader {
        let event = event.map_err(|e| format!("{input}: {e}"))?;
        if event.provider() == SAMPLE_PROFILER_PROVIDER && event.event_id() == 0 {
            samples.push(event.stack.clone());
        } else if let Some(m) = method_of(&event) {
            methods.push(m);
        }
    }
    methods.sort_by_key(|m| m.start);
    let mut frames = Frames::new();
    let mut tree = StackTree::new(1);
    for stack in &samples {
        // Innermost first on the wire; the tree takes outermost first.
        // Consecutive frames the methods do not name are one `[native]`.
        let mut path = Vec::new();
        for &ip in stack.iter().rev() {
            let name = lookup(&methods, ip).unwrap_or("[native]");
            if name == "[native]" && path.last() == Some(&"[native]") {
                continue;
            }
            path.push(name);
        }
        let ids: Vec<_> = path.iter().map(|n| frames.intern(n)).collect();
        tree.add(ids, &[1]);
    }
    let default_out = format!(
        "{}.{}",
        input.strip_suffix(".nettrace").unwrap_or(input),
        match format {
            "folded" => "folded",
            "pprof" => "pb.gz",
            _ => "speedscope.json",
        }
    );
    let output = o
        .named
        .get("-o")
        .map(|s| s.to_string())
        .unwrap_or(default_out);
    let out = File::create(&output).map_err(|e| format!("{output}: {e}"))?;
    let mut out = BufWriter::new(out);
    let written = match format {
        "folded" => write_folded(&tree, &frames, |v| v[0], &mut out).map(|_| ()),
        "pprof" => {
            let mut pprof = Pprof::new(&[("samples", "count")]);
            pprof.add_tree(&tree, &frames, &[]);
            out.write_all(&pprof.encode_gzip())
        }
        _ => write_speedscope(
            input,
            &frames,
            &[SpeedscopeProfile {
                name: "samples",
                tree: &tree,
                value: 0,
                unit: "none",
            }],
            &mut out,
        ),
    };
    written
        .and_then(|()| out.flush())
        .map_err(|e| format!("{output}: {e}"))?;
    eprintln!(
        "corprof: {} samples, {} methods named; wrote {output}",
        samples.len(),
        methods.len()
    );
    if methods.is_empty() && !samples.is_empty() {
        eprintln!(
            "corprof: {input} names no method, so every frame is [native]: the names come from \
             the rundown at the session's end (trace collect without --no-rundown) and the \
             runtime's JIT events (keyword 0x10, in trace collect's default providers)"
        );
    }
    Ok(())
}
