//! OpenTelemetry profiles from a live service: the web app of the suite
//! under the `sampler` example with 1-s periods, `wrk` load, and
//! `OTEL_EXPORTER_OTLP_ENDPOINT` at an OTLP receiver this test runs
//! (tests/common/otlp.rs: every request decoded by `protoc` and checked
//! against the dictionary rules):
//!
//! - one request per period, each decoding, every rule holding, the CPU
//!   handler's stack in the `cpu` profile, the resource named as set;
//! - a receiver that answers 503, then hangs: every response of the server
//!   is a 200, it stops in under 10 s, and every period is either
//!   delivered or counted as dropped.
#![cfg(unix)]

mod common;

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::thread;
use std::time::{Duration, Instant};

use common::dotnet::{self, Profiler};
use common::otlp::{self, Receiver};
use common::readers;
use common::web::{wrk, WebServer};

const SAMPLER: &str = "7A3E9C51-2B8D-4F06-9E1A-C4D5B6A70819";

fn out_dir(name: &str) -> PathBuf {
    dotnet::fresh_run_dir("e2e_otlp", name)
}

fn sampler(receiver: &Receiver, dir: &Path) -> Profiler {
    let library = dotnet::build_example("sampler")
        .unwrap_or_else(|error| panic!("building example sampler: {error}"));
    Profiler::new(library, SAMPLER)
        .with_env("CORPROF_SAMPLER_PERIOD", "1")
        .with_env("CORPROF_SAMPLER_DIR", dir.display().to_string())
        .with_env("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.url())
        .with_env("OTEL_SERVICE_NAME", "webapp")
        .with_env("OTEL_RESOURCE_ATTRIBUTES", "deployment.environment=test")
}

fn counter(dir: &Path, key: &str) -> u64 {
    let summary = readers::summary(&dir.join("summary.txt")).unwrap();
    summary
        .get(key)
        .unwrap_or_else(|| panic!("no {key}: {summary:?}"))
        .parse()
        .unwrap()
}

#[test]
fn each_period_reaches_the_otlp_receiver_and_decodes_under_the_schema() {
    let receiver = Receiver::start(TcpListener::bind("127.0.0.1:0").unwrap());
    let dir = out_dir("otlp");
    let server = WebServer::start(&dotnet::runtime(), Some(&sampler(&receiver, &dir)));
    let load = wrk(&server.url("/cpu"), 2, 8, 8);
    assert_eq!((load.non_2xx, load.socket_errors), (0, 0), "{load:?}");
    let stopped = server.stop();
    assert_eq!(stopped.status.code(), Some(0), "{stopped:?}");
    assert!(receiver.errors().is_empty(), "{:?}", receiver.errors());
    let received = receiver.received();
    // One request per period: every period completed was sent once.
    let periods = counter(&dir, "export_periods");
    assert!(periods >= 5, "{periods} periods");
    assert_eq!(counter(&dir, "export_otlp_exported"), periods);
    assert_eq!(received.len() as u64, periods);
    let mut handler_seen = 0;
    for (i, request) in received.iter().enumerate() {
        assert_eq!(request.path, "/v1development/profiles");
        assert_eq!(request.headers["content-type"], "application/x-protobuf");
        let text = otlp::decode(&request.body).unwrap_or_else(|e| panic!("request {i}: {e}"));
        let decoded = otlp::check(&text).unwrap_or_else(|e| panic!("request {i}: {e}"));
        let r = &decoded.resource;
        assert_eq!(r["service.name"], "webapp");
        assert_eq!(r["deployment.environment"], "test");
        assert_eq!(r["process.runtime.name"], ".NET");
        // .NET Core 3.1 answers 4.0.30319 for its version: none is sent.
        let major = dotnet::runtime().major();
        match r.get("process.runtime.version") {
            Some(version) => assert!(major >= 5 && version.starts_with(&format!("{major}."))),
            None => assert!(major < 5, "{r:?}"),
        }
        let kinds: Vec<&str> = decoded
            .profiles
            .iter()
            .map(|p| p.sample_type.0.as_str())
            .collect();
        assert_eq!(
            kinds.len(),
            corprof::sampling::SAMPLE_TYPES.len(),
            "{kinds:?}"
        );
        let cpu = &decoded.profiles[0];
        assert_eq!(cpu.sample_type.0, "cpu");
        if cpu
            .samples
            .iter()
            .any(|s| s.stack.iter().any(|f| f.contains("WebApp.Handlers.Cpu")))
        {
            handler_seen += 1;
        }
    }
    // The load ran 8 of the periods; the handler is in most of them.
    assert!(
        handler_seen >= 5,
        "the handler in {handler_seen} of {periods} periods"
    );
}

#[test]
fn a_receiver_that_answers_503_then_hangs_never_blocks_the_server() {
    let receiver = Receiver::start(TcpListener::bind("127.0.0.1:0").unwrap());
    receiver.mode.store(otlp::UNAVAILABLE, Ordering::SeqCst);
    let dir = out_dir("otlp-hostile");
    let server = WebServer::start(&dotnet::runtime(), Some(&sampler(&receiver, &dir)));
    let started = Instant::now();
    let url = server.url("/json");
    let load = thread::spawn(move || wrk(&url, 2, 8, 9));
    thread::sleep(Duration::from_secs(4));
    receiver.mode.store(otlp::HANG, Ordering::SeqCst);
    let load = load.join().unwrap();
    assert!(started.elapsed() < Duration::from_secs(20));
    assert!(load.requests > 1000, "{load:?}");
    assert_eq!((load.non_2xx, load.socket_errors), (0, 0), "{load:?}");
    let before_stop = Instant::now();
    let stopped = server.stop();
    assert_eq!(stopped.status.code(), Some(0), "{stopped:?}");
    let stop_took = before_stop.elapsed();
    assert!(
        stop_took < Duration::from_secs(10),
        "stop took {stop_took:?}"
    );
    assert!(counter(&dir, "export_otlp_failed_http_5xx") >= 1);
    assert!(counter(&dir, "export_otlp_failed_timeout") >= 1);
    assert_eq!(counter(&dir, "export_otlp_exported"), 0);
    // Nothing queued beyond the limit: every period handed to the
    // exporters was delivered or counted as dropped.
    let handed = counter(&dir, "export_exported");
    assert!(handed >= 8, "{handed}");
    assert_eq!(counter(&dir, "export_otlp_dropped"), handed);
    // The directory exporter went on meanwhile.
    assert_eq!(counter(&dir, "export_dir_exported"), handed);
}
