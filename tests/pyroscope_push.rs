//! The push exporter over Pyroscope's push API
//! (`push.v1.PusherService/Push`): the request decodes with `protoc` under
//! the transcribed `push.proto` (tests/common/otlp.rs), has one series per
//! profile type with the labels Pyroscope expects, and each series' pprof
//! reads with Go's own `go tool pprof`.
#![cfg(unix)]

mod common;

use std::net::TcpListener;
use std::sync::Arc;
use std::time::{Duration, Instant, UNIX_EPOCH};

use common::otlp::{self, Receiver};
use common::readers;
use corprof::profile::Pprof;
use corprof::sampling::export::{
    Exporter, PeriodProfile, PushApi, PushExporter, PushOptions, PushTarget,
};
use corprof::sampling::SAMPLE_TYPES;

/// A period with CPU and wall time, an allocation and a lock wait.
fn period() -> PeriodProfile {
    let mut pprof = Pprof::new(&SAMPLE_TYPES);
    pprof.set_period("cpu", "nanoseconds", 10_101_010);
    pprof.set_time(1_700_000_000_000_000_000, 1_000_000_000);
    let mut values = [0i64; SAMPLE_TYPES.len()];
    let at = |name: &str| SAMPLE_TYPES.iter().position(|t| t.0 == name).unwrap();
    values[at("cpu")] = 20_000_000;
    values[at("wall")] = 30_000_000;
    pprof.add_sample(&["Hot", "Main"], &values, &[("thread", "Main")]);
    let mut values = [0i64; SAMPLE_TYPES.len()];
    values[at("alloc_objects")] = 3;
    values[at("alloc_space")] = 96;
    values[at("lock-time")] = 5_000;
    values[at("lock-count")] = 1;
    pprof.add_sample(&["Alloc", "Main"], &values, &[("thread", "Main")]);
    PeriodProfile {
        seq: 0,
        start: UNIX_EPOCH + Duration::from_secs(1_700_000_000),
        duration: Duration::from_secs(1),
        pprof_gz: pprof.encode_gzip(),
        samples: pprof.sample_count(),
        pprof: Arc::new(pprof),
    }
}

#[test]
fn a_push_is_one_series_per_profile_type_and_each_pprof_reads() {
    let receiver = Receiver::start(TcpListener::bind("127.0.0.1:0").unwrap());
    let target = PushTarget::parse(&format!("{}/pyro", receiver.url())).unwrap();
    let mut exporter = PushExporter::start_api(
        target,
        "shop",
        PushApi::Push,
        Some("tenant-1"),
        PushOptions::default(),
    )
    .unwrap();
    exporter.export(&period());
    exporter.finish(Instant::now() + Duration::from_secs(20));
    let stats = exporter.stats();
    assert_eq!((stats.exported, stats.dropped), (1, 0), "{stats:?}");
    let received = receiver.received();
    assert_eq!(received.len(), 1, "{:?}", receiver.errors());
    let request = &received[0];
    assert_eq!(request.path, "/pyro/push.v1.PusherService/Push");
    assert_eq!(request.headers["content-type"], "application/proto");
    assert_eq!(request.headers["connect-protocol-version"], "1");
    assert_eq!(request.headers["x-scope-orgid"], "tenant-1");
    let text = otlp::decode_push(&request.body).unwrap();
    let top = otlp::parse(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("pyroscope-push");
    std::fs::create_dir_all(&dir).unwrap();
    let mut names = Vec::new();
    for series in top.messages("series") {
        let labels: Vec<(String, String)> = series
            .messages("labels")
            .iter()
            .map(|l| {
                let text = |f| String::from_utf8(l.bytes(f)).unwrap();
                (text("name"), text("value"))
            })
            .collect();
        let label = |name: &str| {
            labels
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, v)| v.clone())
                .unwrap_or_else(|| panic!("no {name}: {labels:?}"))
        };
        assert_eq!(label("service_name"), "shop");
        assert_eq!(label("spy_name"), "corprof");
        let name = label("__name__");
        let [sample] = series.messages("samples")[..] else {
            panic!("not one sample in {name}");
        };
        let raw = sample.bytes("raw_profile");
        assert_eq!(&raw[..2], [0x1f, 0x8b], "gzip");
        let file = dir.join(format!("{name}.pb.gz"));
        std::fs::write(&file, &raw).unwrap();
        let read = readers::go_pprof(&["-raw", file.to_str().unwrap()]);
        let types = read
            .lines()
            .skip_while(|l| !l.starts_with("Samples:"))
            .nth(1)
            .unwrap_or("")
            .to_string();
        names.push((name, types));
    }
    let expected = [
        ("process_cpu", "cpu/nanoseconds"),
        ("wall", "wall/nanoseconds"),
        (
            "memory",
            "alloc_objects/count alloc_space/bytes inuse_objects/count inuse_space/bytes",
        ),
        ("lock", "lock-count/count lock-time/nanoseconds"),
    ];
    assert_eq!(names.len(), expected.len(), "{names:?}");
    for ((name, types), (want, want_types)) in names.iter().zip(expected) {
        assert_eq!(name, want);
        let got: Vec<&str> = types
            .split_whitespace()
            .map(|t| t.trim_end_matches("[dflt]"))
            .collect();
        let want: Vec<&str> = want_types.split_whitespace().collect();
        assert_eq!(got, want, "{name}");
    }
}
