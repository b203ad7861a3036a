//! The OTLP exporter against a receiver that decodes with `protoc` under
//! the opentelemetry-proto v1.11.0 profiles schema (tests/common/otlp.rs):
//! each request decodes, every dictionary rule holds, the samples say what
//! the pprof said, and the receiver's answers (success, partial success,
//! 400, 503, no answer) are counted as OTLP asks, never waited for beyond
//! the deadline.
#![cfg(unix)]

mod common;

use std::net::TcpListener;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant, UNIX_EPOCH};

use common::otlp::{self, Receiver};
use corprof::profile::Pprof;
use corprof::sampling::export::{
    Exporter, ExporterStats, FailureCause, OtlpExporter, OtlpTarget, PeriodProfile, PushOptions,
};

const TYPES: [(&str, &str); 3] = [
    ("cpu", "nanoseconds"),
    ("wall", "nanoseconds"),
    ("exception", "count"),
];

/// A period of two threads of one name (their samples at one stack merge),
/// an exception at its throw stack, and a sample of zeros (left out).
fn period(seq: u64) -> PeriodProfile {
    let mut pprof = Pprof::new(&TYPES);
    pprof.set_period("cpu", "nanoseconds", 10_101_010);
    let start = UNIX_EPOCH + Duration::from_secs(1_700_000_000 + seq);
    pprof.set_time(
        1_700_000_000_000_000_000 + seq as i64 * 1_000_000_000,
        1_000_000_000,
    );
    let worker = [("thread", ".NET TP Worker")];
    pprof.add_sample(&["Hot", "Handler", "Main"], &[30, 40, 0], &worker);
    pprof.add_sample(&["Hot", "Handler", "Main"], &[5, 6, 0], &worker);
    pprof.add_sample(&["Idle", "Main"], &[0, 50, 0], &[("thread", "Main")]);
    pprof.add_sample(
        &["Throw", "Handler", "Main"],
        &[0, 0, 7],
        &[("thread", ".NET TP Worker"), ("exception_type", "Demo")],
    );
    pprof.add_sample(&["Nothing"], &[0, 0, 0], &worker);
    PeriodProfile {
        seq,
        start,
        duration: Duration::from_secs(1),
        pprof_gz: pprof.encode_gzip(),
        samples: pprof.sample_count(),
        pprof: Arc::new(pprof),
    }
}

fn send(target: OtlpTarget, periods: u64) -> ExporterStats {
    let mut options = PushOptions::default();
    options.backoff = Duration::from_millis(10);
    let mut exporter = OtlpExporter::start(target, options).unwrap();
    for seq in 0..periods {
        exporter.export(&period(seq));
    }
    exporter.finish(Instant::now() + Duration::from_secs(20));
    exporter.stats()
}

#[test]
fn each_request_decodes_under_the_schema_and_keeps_the_dictionary_rules() {
    let receiver = Receiver::start(TcpListener::bind("127.0.0.1:0").unwrap());
    let target = OtlpTarget::base(&receiver.url())
        .unwrap()
        .with_service_name("shop")
        .with_header("X-Scope-OrgID", "tenant-1")
        .unwrap()
        .with_gzip(true);
    let stats = send(target, 2);
    assert_eq!((stats.exported, stats.dropped), (2, 0), "{stats:?}");
    assert!(receiver.errors().is_empty(), "{:?}", receiver.errors());
    let received = receiver.received();
    assert_eq!(received.len(), 2);
    for (seq, request) in received.iter().enumerate() {
        assert_eq!(request.path, "/v1development/profiles");
        assert_eq!(request.headers["content-type"], "application/x-protobuf");
        assert_eq!(request.headers["content-encoding"], "gzip");
        assert_eq!(request.headers["x-scope-orgid"], "tenant-1");
        let text = otlp::decode(&request.body).unwrap();
        let decoded = otlp::check(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
        let r = &decoded.resource;
        assert_eq!(r["service.name"], "shop");
        assert_eq!(r["process.pid"], std::process::id().to_string());
        assert_eq!(r["process.runtime.name"], ".NET");
        assert_eq!(decoded.scope.0, "corprof");
        // One profile per sample type, in order, each with its time.
        let types: Vec<&str> = decoded
            .profiles
            .iter()
            .map(|p| p.sample_type.0.as_str())
            .collect();
        assert_eq!(types, ["cpu", "wall", "exception"]);
        for p in &decoded.profiles {
            assert_eq!(
                p.time_unix_nano,
                1_700_000_000_000_000_000 + seq as u64 * 1_000_000_000
            );
            assert_eq!(p.duration_nano, 1_000_000_000);
        }
        let (cpu, wall, exception) = (
            &decoded.profiles[0],
            &decoded.profiles[1],
            &decoded.profiles[2],
        );
        assert_eq!(cpu.period_type, Some(("cpu".into(), "nanoseconds".into())));
        assert_eq!((cpu.period, wall.period), (10_101_010, 10_101_010));
        assert_eq!((exception.period_type.clone(), exception.period), (None, 0));
        // The two samples of one thread name and stack are one.
        assert_eq!(cpu.samples.len(), 1, "{cpu:?}");
        assert_eq!(cpu.samples[0].stack, ["Hot", "Handler", "Main"]);
        assert_eq!(cpu.samples[0].values, [35]);
        assert_eq!(cpu.samples[0].attributes["thread"], ".NET TP Worker");
        assert_eq!(cpu.samples[0].link, 0);
        let mut walls: Vec<(Vec<String>, i64)> = wall
            .samples
            .iter()
            .map(|s| (s.stack.clone(), s.values[0]))
            .collect();
        walls.sort();
        assert_eq!(
            walls,
            [
                (vec!["Hot".into(), "Handler".into(), "Main".into()], 46),
                (vec!["Idle".into(), "Main".into()], 50)
            ]
        );
        assert_eq!(exception.samples.len(), 1);
        assert_eq!(exception.samples[0].attributes["exception_type"], "Demo");
        assert_eq!(exception.samples[0].values, [7]);
        // The sample of zeros is nowhere: its frame is no function.
        assert!(!text.contains("Nothing"), "{text}");
    }
}

/// The `trace_id`/`span_id` labels of a sample taken inside a span are its
/// `Link` (W3C hex to bytes; one link per pair, its samples merged), not
/// attributes; a sample outside spans has no link; ids that are not W3C
/// hex (or an all-zero trace id) stay plain attributes.
#[test]
fn span_labels_become_links() {
    let receiver = Receiver::start(TcpListener::bind("127.0.0.1:0").unwrap());
    let mut pprof = Pprof::new(&TYPES);
    pprof.set_time(1_700_000_000_000_000_000, 1_000_000_000);
    let trace = "4bf92f3577b34da6a3ce929d0e0e4736";
    let span = |id: &'static str| {
        [
            ("thread", ".NET TP Worker"),
            ("trace_id", trace),
            ("span_id", id),
        ]
    };
    pprof.add_sample(&["Hot", "Main"], &[10, 0, 0], &span("00f067aa0ba902b7"));
    pprof.add_sample(&["Hot", "Main"], &[5, 0, 0], &span("00f067aa0ba902b7"));
    pprof.add_sample(&["Hot", "Main"], &[7, 0, 0], &span("b7ad6b7169203331"));
    pprof.add_sample(
        &["Hot", "Main"],
        &[1, 0, 0],
        &[("thread", ".NET TP Worker")],
    );
    let zero = [
        ("thread", "T"),
        ("trace_id", "00000000000000000000000000000000"),
        ("span_id", "00f067aa0ba902b7"),
    ];
    pprof.add_sample(&["Odd"], &[2, 0, 0], &zero);
    let period = PeriodProfile {
        seq: 0,
        start: UNIX_EPOCH + Duration::from_secs(1_700_000_000),
        duration: Duration::from_secs(1),
        pprof_gz: pprof.encode_gzip(),
        samples: pprof.sample_count(),
        pprof: Arc::new(pprof),
    };
    let mut exporter = OtlpExporter::start(
        OtlpTarget::base(&receiver.url()).unwrap(),
        PushOptions::default(),
    )
    .unwrap();
    exporter.export(&period);
    exporter.finish(Instant::now() + Duration::from_secs(20));
    let received = receiver.received();
    assert_eq!(received.len(), 1, "{:?}", receiver.errors());
    let text = otlp::decode(&received[0].body).unwrap();
    let decoded = otlp::check(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    let trace_bytes = [
        0x4b, 0xf9, 0x2f, 0x35, 0x77, 0xb3, 0x4d, 0xa6, 0xa3, 0xce, 0x92, 0x9d, 0x0e, 0x0e, 0x47,
        0x36,
    ];
    assert_eq!(decoded.links.len(), 3, "{:?}", decoded.links);
    let cpu = &decoded.profiles[0];
    let mut seen: Vec<(Vec<u8>, Vec<u8>, i64)> = Vec::new();
    for sample in &cpu.samples {
        if sample.stack == ["Odd"] {
            assert_eq!(sample.link, 0);
            assert_eq!(
                sample.attributes["trace_id"],
                "00000000000000000000000000000000"
            );
            continue;
        }
        assert!(!sample.attributes.contains_key("trace_id"), "{sample:?}");
        assert!(!sample.attributes.contains_key("span_id"), "{sample:?}");
        if sample.link == 0 {
            assert_eq!(sample.values, [1]);
            continue;
        }
        let (t, s) = &decoded.links[sample.link];
        seen.push((t.clone(), s.clone(), sample.values[0]));
    }
    seen.sort();
    assert_eq!(
        seen,
        [
            (
                trace_bytes.to_vec(),
                vec![0x00, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7],
                15
            ),
            (
                trace_bytes.to_vec(),
                vec![0xb7, 0xad, 0x6b, 0x71, 0x69, 0x20, 0x33, 0x31],
                7
            ),
        ]
    );
}

#[test]
fn a_partial_success_is_delivered_and_its_rejection_counted() {
    let receiver = Receiver::start(TcpListener::bind("127.0.0.1:0").unwrap());
    receiver.mode.store(otlp::PARTIAL, Ordering::SeqCst);
    let stats = send(OtlpTarget::base(&receiver.url()).unwrap(), 1);
    assert_eq!(receiver.received().len(), 1);
    assert_eq!((stats.exported, stats.dropped), (1, 0), "{stats:?}");
    assert_eq!(stats.failures_of(FailureCause::Other("rejected")), 1);
    assert_eq!(
        stats.last_error.as_deref(),
        Some("1 profiles rejected: one")
    );
}

#[test]
fn a_400_is_not_retried_and_a_503_is() {
    let receiver = Receiver::start(TcpListener::bind("127.0.0.1:0").unwrap());
    receiver.mode.store(otlp::BAD_REQUEST, Ordering::SeqCst);
    let stats = send(OtlpTarget::base(&receiver.url()).unwrap(), 1);
    assert_eq!((stats.exported, stats.dropped), (0, 1), "{stats:?}");
    assert_eq!(stats.failures_of(FailureCause::Http4xx), 1);
    assert_eq!(stats.last_error.as_deref(), Some("HTTP 400: bad"));

    receiver.mode.store(otlp::UNAVAILABLE, Ordering::SeqCst);
    let stats = send(OtlpTarget::base(&receiver.url()).unwrap(), 1);
    assert_eq!((stats.exported, stats.dropped), (0, 1), "{stats:?}");
    // Every attempt (3) made, each a 503.
    assert_eq!(stats.failures_of(FailureCause::Http5xx), 3, "{stats:?}");
    assert_eq!(stats.last_error.as_deref(), Some("HTTP 503: busy"));
}

/// A receiver that takes requests and never answers: the queue holds at
/// most its capacity (the oldest dropped, counted), and `finish` returns
/// by its deadline with the thread ended.
#[test]
fn a_receiver_that_hangs_costs_the_deadline_and_drops_are_counted() {
    let receiver = Receiver::start(TcpListener::bind("127.0.0.1:0").unwrap());
    receiver.mode.store(otlp::HANG, Ordering::SeqCst);
    let target = OtlpTarget::base(&receiver.url())
        .unwrap()
        .with_timeout(Duration::from_secs(60));
    let mut options = PushOptions::default();
    options.capacity = 2;
    let mut exporter = OtlpExporter::start(target, options).unwrap();
    let handing = Instant::now();
    for seq in 0..6 {
        exporter.export(&period(seq));
    }
    assert!(
        handing.elapsed() < Duration::from_secs(2),
        "the export waited"
    );
    let finishing = Instant::now();
    exporter.finish(Instant::now() + Duration::from_secs(1));
    let took = finishing.elapsed();
    let stats = exporter.stats();
    assert!(took < Duration::from_secs(5), "{took:?}");
    assert!(!stats.running, "{stats:?}");
    assert_eq!(stats.exported, 0);
    // Six periods, none delivered: each one dropped and counted.
    assert_eq!(stats.dropped, 6, "{stats:?}");
}
