//! Samples tied to spans (docs/sampling.md, "Samples tied to spans"): the
//! web app of the suite under the `sampler` example with
//! `CORPROF_SAMPLER_SPANS=1` and the span helper in `DOTNET_STARTUP_HOOKS`
//! (scripts/gen/build-span-helper.sh), loaded by `wrk` on the CPU-bound
//! route `/cpu` with a W3C `traceparent` header of a known trace id. The
//! profile, read by Go's pprof (`go tool pprof -raw`, not by corprof):
//!
//! - over 90% of the CPU samples whose stack holds the route's handler
//!   (`Handlers.Cpu`) carry the sent trace id as `trace_id`, each with a
//!   `span_id` of 16 hex digits (ASP.NET Core's request activity, a child
//!   of the sent parent: never the parent's id);
//! - no sample carries another trace id, and no sample outside a request
//!   carries one: none on the threads that run no request (the main
//!   thread, Kestrel's and the runtime's own; there are such samples), none
//!   of a thread-pool worker idle in the pool's semaphore;
//! - `go tool pprof -tagfocus trace_id=...` shows the handler's stack.
//!
//! .NET 8 and later (the helper's ActivityListener needs
//! System.Diagnostics.DiagnosticSource 5.0; on older runtimes the test
//! says so and passes without running).
#![cfg(unix)]

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::dotnet::{self, Profiler};
use common::otlp::{self, Receiver};
use common::readers;
use common::web::{parse_wrk, sdk, WebServer, WrkResult};

const SAMPLER: &str = "7A3E9C51-2B8D-4F06-9E1A-C4D5B6A70819";
const TRACE: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const PARENT: &str = "00f067aa0ba902b7";

fn out_dir(name: &str) -> PathBuf {
    dotnet::fresh_run_dir("e2e_spans", name)
}

/// The span helper, built once per test binary's target directory.
fn span_helper() -> PathBuf {
    let out = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("span-helper")
        .join("CorprofSpans.dll");
    let built = Command::new("bash")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/gen/build-span-helper.sh"))
        .arg(&out)
        .output()
        .expect("bash runs");
    assert!(
        built.status.success(),
        "build-span-helper.sh: {}",
        String::from_utf8_lossy(&built.stderr)
    );
    out
}

/// `go tool pprof ARGS`'s standard output (it must succeed).
fn pprof(args: &[&str]) -> String {
    readers::readers();
    let out = Command::new("go")
        .args(["tool", "pprof"])
        .args(args)
        .env("HOME", env!("CARGO_TARGET_TMPDIR"))
        .output()
        .expect("go is installed by scripts/provision/install-profile-readers.sh");
    assert!(
        out.status.success(),
        "go tool pprof {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// One sample of `go tool pprof -raw`: its values, its frames (leaf
/// first) and its string labels.
#[derive(Debug)]
struct RawSample {
    values: Vec<i64>,
    frames: Vec<String>,
    labels: Vec<(String, String)>,
}

/// Parses `-raw`'s `Samples:` (a line of values, `: `, location ids; label
/// lines `key:[value]` below) and `Locations` (`id: address M=n
/// function ...`, one frame per line, inlined frames on lines of their
/// own).
fn parse_raw(raw: &str) -> (Vec<String>, Vec<RawSample>) {
    let mut types = Vec::new();
    // Values, location ids, labels.
    type Parsed = (Vec<i64>, Vec<u64>, Vec<(String, String)>);
    let mut samples: Vec<Parsed> = Vec::new();
    let mut locations: std::collections::HashMap<u64, Vec<String>> = Default::default();
    let mut section = "";
    let mut last_location = None;
    for line in raw.lines() {
        match line.trim_end() {
            "Samples:" => {
                section = "samples";
                continue;
            }
            "Locations" => {
                section = "locations";
                continue;
            }
            "Mappings" => {
                section = "mappings";
                continue;
            }
            _ => {}
        }
        let text = line.trim();
        if text.is_empty() {
            continue;
        }
        match section {
            "samples" if types.is_empty() => {
                types = text.split_whitespace().map(String::from).collect();
            }
            "samples" => {
                if let Some((values, ids)) = text
                    .split_once(':')
                    .filter(|(v, _)| v.split_whitespace().all(|n| n.parse::<i64>().is_ok()))
                {
                    samples.push((
                        values
                            .split_whitespace()
                            .map(|v| v.parse().unwrap())
                            .collect(),
                        ids.split_whitespace().map(|v| v.parse().unwrap()).collect(),
                        Vec::new(),
                    ));
                } else {
                    // `key:[value] key:[value]`, values with spaces.
                    let labels = &mut samples
                        .last_mut()
                        .unwrap_or_else(|| panic!("a label before any sample: {text}"))
                        .2;
                    let mut rest = text;
                    while let Some((key, tail)) = rest.split_once(":[") {
                        let (value, tail) = tail
                            .split_once(']')
                            .unwrap_or_else(|| panic!("an unclosed label: {text}"));
                        labels.push((key.trim().to_string(), value.to_string()));
                        rest = tail;
                    }
                }
            }
            "locations" => {
                // `12: 0x0 M=1 WebApp.Handlers.Cpu :0:0 s=0`, then inlined
                // frames as `             Name :0:0 s=0`.
                let (id, rest) = match text.split_once(": ") {
                    Some((id, rest)) if id.parse::<u64>().is_ok() => {
                        (id.parse::<u64>().unwrap(), rest)
                    }
                    _ => (last_location.unwrap_or(0), text),
                };
                last_location = Some(id);
                let name = rest
                    .split_whitespace()
                    .find(|w| !w.starts_with("0x") && !w.starts_with("M="))
                    .unwrap_or("")
                    .to_string();
                locations.entry(id).or_default().push(name);
            }
            _ => {}
        }
    }
    let samples = samples
        .into_iter()
        .map(|(values, ids, labels)| RawSample {
            values,
            frames: ids
                .iter()
                .flat_map(|id| locations.get(id).cloned().unwrap_or_default())
                .collect(),
            labels,
        })
        .collect();
    (types, samples)
}

/// The web app under `profiler`, loaded for `seconds` on `/cpu` with the
/// `traceparent` of [`TRACE`], stopped: what `wrk` measured.
fn serve(profiler: &Profiler, seconds: u32) -> WrkResult {
    let server = WebServer::start(&dotnet::runtime(), Some(profiler));
    let mut wrk = Command::new(sdk().wrk);
    wrk.args(["-t2", "-c8", &format!("-d{seconds}s"), "--latency", "-H"])
        .arg(format!("traceparent: 00-{TRACE}-{PARENT}-01"))
        .arg(server.url("/cpu"));
    let load = wrk.output().expect("wrk runs");
    assert!(load.status.success(), "{load:?}");
    let load = parse_wrk(&String::from_utf8_lossy(&load.stdout)).unwrap();
    assert_eq!((load.non_2xx, load.socket_errors), (0, 0), "{load:?}");
    assert!(load.requests > 100, "{load:?}");
    let stopped = server.stop();
    assert_eq!(stopped.status.code(), Some(0), "{stopped:?}");
    load
}

/// The sampler with spans on and the span helper, writing into `dir`.
fn sampler(dir: &Path) -> Profiler {
    let library = dotnet::build_example("sampler")
        .unwrap_or_else(|error| panic!("building example sampler: {error}"));
    Profiler::new(library, SAMPLER)
        .with_env("CORPROF_SAMPLER_DIR", dir.display().to_string())
        .with_env("CORPROF_SAMPLER_SPANS", "1")
        .with_env("CORPROF_SAMPLER_ALLOC_BYTES", "0")
        .with_env("DOTNET_STARTUP_HOOKS", span_helper().display().to_string())
}

/// Whether the runtime can load the span helper (.NET 8 and later); says
/// so when not.
fn helper_loads() -> bool {
    let major = dotnet::runtime().major();
    if major < 8 {
        eprintln!(
            "e2e_spans: .NET {major} has no ActivityListener (the span helper needs .NET 8): skipped"
        );
    }
    major >= 8
}

fn label<'a>(sample: &'a RawSample, key: &str) -> Option<&'a str> {
    sample
        .labels
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
}

#[test]
fn cpu_samples_in_a_request_carry_its_trace_id_and_those_outside_none() {
    if !helper_loads() {
        return;
    }
    let started = std::time::Instant::now();
    let dir = out_dir("spans");
    let load = serve(&sampler(&dir), 8);

    let profile = dir.join("profile.pb.gz");
    let raw = pprof(&["-raw", profile.to_str().unwrap()]);
    let (types, samples) = parse_raw(&raw);
    let cpu = types
        .iter()
        .position(|t| t.starts_with("cpu/"))
        .unwrap_or_else(|| panic!("no cpu type in {types:?}"));
    let cpu_samples: Vec<&RawSample> = samples.iter().filter(|s| s.values[cpu] > 0).collect();
    let in_handler = |s: &&&RawSample| s.frames.iter().any(|f| f.contains("Handlers.Cpu"));
    let handler: Vec<&&RawSample> = cpu_samples.iter().filter(in_handler).collect();
    let tied: i64 = handler
        .iter()
        .filter(|s| label(s, "trace_id") == Some(TRACE))
        .map(|s| s.values[cpu])
        .sum();
    let all: i64 = handler.iter().map(|s| s.values[cpu]).sum();
    assert!(
        !handler.is_empty() && all > 0,
        "no CPU sample in the handler: {} samples",
        samples.len()
    );
    // CPU time, as pprof weighs it (each pprof sample is a stack's sum).
    assert!(
        tied * 10 > all * 9,
        "{tied} of {all} ns of the handler's CPU samples carry trace id {TRACE}"
    );
    for s in &samples {
        if let Some(trace) = label(s, "trace_id") {
            assert_eq!(trace, TRACE, "{s:?}");
            let span = label(s, "span_id").unwrap_or_else(|| panic!("no span_id: {s:?}"));
            assert_eq!(span.len(), 16, "{s:?}");
            assert!(span.bytes().all(|b| b.is_ascii_hexdigit()), "{s:?}");
            assert_ne!(
                span, PARENT,
                "the request's own span, not its parent: {s:?}"
            );
        }
    }
    // Outside requests: the threads that never run a request's work (the
    // main thread, Kestrel's and the runtime's own: requests run on the
    // thread pool's workers), and the workers idle between work items
    // (in the pool semaphore's Wait: the worker left the request's execution
    // context behind).
    let thread = |s: &RawSample| label(s, "thread").unwrap_or("").to_string();
    let outside: Vec<&RawSample> = samples
        .iter()
        .filter(|s| {
            thread(s) != ".NET TP Worker"
                || s.frames
                    .iter()
                    .any(|f| f.contains("LowLevelLifoSemaphore.Wait"))
        })
        .collect();
    assert!(
        outside.iter().any(|s| thread(s) != ".NET TP Worker"),
        "no sample outside the workers (the check below would prove nothing)"
    );
    for s in &outside {
        assert_eq!(
            label(s, "trace_id"),
            None,
            "a sample outside requests: {s:?}"
        );
    }
    // Several spans: one per request (each a child of the sent parent).
    let spans: std::collections::BTreeSet<&str> =
        samples.iter().filter_map(|s| label(s, "span_id")).collect();
    assert!(spans.len() > 10, "{} spans", spans.len());

    // Go's pprof, focused on the trace: the handler's own stack.
    let top = pprof(&[
        "-top",
        "-cum",
        "-sample_index=cpu",
        &format!("-tagfocus=trace_id={TRACE}"),
        profile.to_str().unwrap(),
    ]);
    assert!(top.contains("Handlers.Cpu"), "{top}");
    eprintln!(
        "e2e_spans: {} of {} ns of handler CPU tied ({:.1}%), {} spans, {} requests, {:.1} s",
        tied,
        all,
        100.0 * tied as f64 / all as f64,
        spans.len(),
        load.requests,
        started.elapsed().as_secs_f64()
    );
}

/// The same through the OTLP exporter (1-s periods): each request decodes
/// under the protocol's schema with every dictionary rule holding (the
/// link table's too: entry 0 the zero link, no duplicate, none
/// unreferenced); over 90% of the handler's CPU samples have a `Link` of
/// the sent trace id, no sample has a link of another, and the samples on
/// threads that run no request have none; the ids are no attributes.
#[test]
fn otlp_samples_in_a_request_link_to_its_trace() {
    if !helper_loads() {
        return;
    }
    let started = std::time::Instant::now();
    let receiver = Receiver::start(std::net::TcpListener::bind("127.0.0.1:0").unwrap());
    let dir = out_dir("otlp");
    let profiler = sampler(&dir)
        .with_env("CORPROF_SAMPLER_PERIOD", "1")
        .with_env("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.url());
    serve(&profiler, 6);
    assert!(receiver.errors().is_empty(), "{:?}", receiver.errors());
    let trace: Vec<u8> = (0..16)
        .map(|i| u8::from_str_radix(&TRACE[2 * i..2 * i + 2], 16).unwrap())
        .collect();
    let (mut tied, mut all, mut outside) = (0i64, 0i64, 0usize);
    let received = receiver.received();
    assert!(received.len() >= 4, "{} requests", received.len());
    for (i, request) in received.iter().enumerate() {
        let text = otlp::decode(&request.body).unwrap_or_else(|e| panic!("request {i}: {e}"));
        let decoded = otlp::check(&text).unwrap_or_else(|e| panic!("request {i}: {e}"));
        for (trace_id, span_id) in decoded.links.iter().skip(1) {
            assert_eq!(trace_id, &trace, "request {i}: a link of another trace");
            assert_eq!(span_id.len(), 8);
        }
        let cpu = &decoded.profiles[0];
        assert_eq!(cpu.sample_type.0, "cpu");
        for sample in &cpu.samples {
            assert!(
                !sample.attributes.contains_key("trace_id")
                    && !sample.attributes.contains_key("span_id"),
                "{sample:?}"
            );
            if sample.attributes.get("thread").map(String::as_str) != Some(".NET TP Worker") {
                outside += 1;
                assert_eq!(sample.link, 0, "a sample outside requests: {sample:?}");
            }
            if sample
                .stack
                .iter()
                .any(|f| f.contains("WebApp.Handlers.Cpu"))
            {
                all += sample.values[0];
                if sample.link != 0 && decoded.links[sample.link].0 == trace {
                    tied += sample.values[0];
                }
            }
        }
    }
    assert!(outside > 0, "no sample outside the workers");
    assert!(all > 0, "no CPU sample in the handler");
    assert!(
        tied * 10 > all * 9,
        "{tied} of {all} ns of the handler's CPU samples link to trace {TRACE}"
    );
    eprintln!(
        "e2e_spans otlp: {tied} of {all} ns of handler CPU linked ({:.1}%), {} requests, {:.1} s",
        100.0 * tied as f64 / all as f64,
        received.len(),
        started.elapsed().as_secs_f64()
    );
}
