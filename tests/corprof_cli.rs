//! The `corprof` command without a runtime: `trace convert` on streams
//! written by hand (tests/common/nettrace_writer.rs) and its errors, and
//! the errors of `counters`, `stack` and `gcdump`.

mod common;

use std::path::{Path, PathBuf};

use common::nettrace_writer::{compressed_block, metadata, stack_block, utf16z, Blob, Stream};
use common::self_exec::target_binary;

const CORPROF: &str = env!("CARGO_BIN_EXE_corprof");

fn dir() -> PathBuf {
    let dir =
        Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("corprof_cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// MethodDCEndVerbose_V1 (ClrEtwAll.man `MethodLoadUnloadVerbose_V1`).
fn method(start: u64, size: u32, namespace: &str, name: &str) -> Vec<u8> {
    let mut v = 1u64.to_le_bytes().to_vec();
    v.extend(2u64.to_le_bytes());
    v.extend(start.to_le_bytes());
    v.extend(size.to_le_bytes());
    v.extend(0x0600_0001u32.to_le_bytes());
    v.extend(0u32.to_le_bytes());
    v.extend(utf16z(namespace));
    v.extend(utf16z(name));
    v.extend(utf16z("void  ()"));
    v.extend(0u16.to_le_bytes());
    v
}

/// Three samples: Main > Hot twice (once through a native frame), Main
/// alone once; the rundown names Main (0x1000..0x1100) and Hot
/// (0x2000..0x2040).
fn trace_file(path: &Path) {
    let mut s = Stream::new();
    s.trace(8);
    let meta = |id, provider: &str, event, version| Blob {
        payload: metadata(id, provider, event, "", version, &[], &[]),
        ..Blob::default()
    };
    s.block(
        "MetadataBlock",
        &compressed_block(&[
            meta(1, "Microsoft-DotNETCore-SampleProfiler", 0, 0),
            meta(2, "Microsoft-Windows-DotNETRuntimeRundown", 144, 1),
        ]),
    );
    // Innermost first.
    s.block(
        "StackBlock",
        &stack_block(
            1,
            &[&[0x2010, 0x1050], &[0x2020, 0x9999, 0x1080], &[0x1010]],
            8,
        ),
    );
    let sample = |seq: u32, stack_id| Blob {
        metadata_id: 1,
        sequence: seq,
        thread: 1,
        capture_thread: 1,
        stack_id,
        timestamp: i64::from(seq),
        payload: 1u32.to_le_bytes().to_vec(),
        ..Blob::default()
    };
    let rundown = |seq: u32, payload| Blob {
        metadata_id: 2,
        sequence: seq,
        thread: 1,
        capture_thread: 1,
        timestamp: i64::from(seq),
        payload,
        ..Blob::default()
    };
    s.block(
        "EventBlock",
        &compressed_block(&[
            sample(1, 1),
            sample(2, 2),
            sample(3, 3),
            rundown(4, method(0x1000, 0x100, "App.Program", "Main")),
            rundown(5, method(0x2000, 0x40, "App.Program", "Hot")),
        ]),
    );
    s.end();
    std::fs::write(path, s.bytes).unwrap();
}

fn corprof(args: &[&str]) -> (i32, String, String) {
    // Through the emulator of a cross-target run (scripts/ci/test-aarch64.sh).
    let out = target_binary(CORPROF).args(args).output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn convert_names_the_samples_through_the_rundown() {
    let dir = dir();
    let trace = dir.join("t.nettrace");
    trace_file(&trace);
    let folded = dir.join("t.folded");
    let (code, _, err) = corprof(&[
        "trace",
        "convert",
        trace.to_str().unwrap(),
        "--format",
        "folded",
        "-o",
        folded.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("3 samples, 2 methods named"), "{err}");
    assert_eq!(
        std::fs::read_to_string(&folded).unwrap(),
        "App.Program.Main 1\nApp.Program.Main;App.Program.Hot 1\nApp.Program.Main;[native];App.Program.Hot 1\n"
    );
    // pprof: gzip; speedscope: JSON naming the frames.
    let (code, _, err) = corprof(&[
        "trace",
        "convert",
        trace.to_str().unwrap(),
        "--format",
        "pprof",
    ]);
    assert_eq!(code, 0, "{err}");
    let pprof = std::fs::read(dir.join("t.pb.gz")).unwrap();
    assert_eq!(&pprof[..2], &[0x1F, 0x8B]);
    let (code, _, err) = corprof(&[
        "trace",
        "convert",
        trace.to_str().unwrap(),
        "--format",
        "speedscope",
    ]);
    assert_eq!(code, 0, "{err}");
    let json = std::fs::read_to_string(dir.join("t.speedscope.json")).unwrap();
    assert!(json.contains("\"App.Program.Hot\""), "{json}");
}

#[test]
fn bad_input_and_usage_are_errors() {
    let dir = dir();
    let trace = dir.join("cut.nettrace");
    trace_file(&trace);
    let bytes = std::fs::read(&trace).unwrap();
    std::fs::write(&trace, &bytes[..bytes.len() - 7]).unwrap();
    let (code, _, err) = corprof(&["trace", "convert", trace.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(
        err.contains("at byte") && err.contains("ends inside"),
        "{err}"
    );
    let (code, _, err) = corprof(&["trace", "convert", "/nonexistent.nettrace"]);
    assert_eq!(code, 2);
    assert!(err.contains("/nonexistent.nettrace"), "{err}");
    let (code, _, err) = corprof(&["trace", "convert", "x", "--format", "svg"]);
    assert_eq!(code, 2);
    assert!(err.contains("unknown format svg"), "{err}");
    let (code, _, err) = corprof(&["trace", "collect"]);
    assert_eq!(code, 2);
    assert!(err.contains("needs -p PID"), "{err}");
    let (code, _, err) = corprof(&["counters", "collect"]);
    assert_eq!(code, 2);
    assert!(err.contains("counters needs -p PID"), "{err}");
    for (list, says) in [
        ("System.Runtime[cpu-usage", "unbalanced brackets"),
        ("A]", "unbalanced brackets"),
        ("A[b]c", "has text after"),
        (",", "names no provider"),
        ("A;b=c", "is not a provider name"),
    ] {
        // The list is refused before the process is looked for.
        let (code, _, err) = corprof(&["counters", "monitor", "-p", "1", "--counters", list]);
        assert_eq!(code, 2, "{list}");
        assert!(err.contains(says), "{list}: {err}");
    }
    let (code, _, err) = corprof(&["counters", "collect", "-p", "1", "--format", "xml"]);
    assert_eq!(code, 2);
    assert!(err.contains("unknown format xml (csv, json)"), "{err}");
    let (code, _, err) = corprof(&["counters", "monitor", "-p", "1", "--format", "csv"]);
    assert_eq!(code, 2);
    assert!(err.contains("are collect's"), "{err}");
    let (code, _, err) = corprof(&["counters", "collect", "-p", "1", "--refresh-interval", "0"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("--refresh-interval takes a number of seconds"),
        "{err}"
    );
    let (code, _, err) = corprof(&["stack"]);
    assert_eq!(code, 2);
    assert!(err.contains("stack needs -p PID"), "{err}");
    let (code, _, err) = corprof(&["stack", "-p", "1", "--duration", "-1"]);
    assert_eq!(code, 2);
    assert!(err.contains("--duration takes a number"), "{err}");
    let (code, _, err) = corprof(&["gcdump"]);
    assert_eq!(code, 2);
    assert!(err.contains("gcdump needs -p PID"), "{err}");
    let (code, _, err) = corprof(&["gcdump", "-p", "1", "--timeout", "x"]);
    assert_eq!(code, 2);
    assert!(err.contains("--timeout takes a number"), "{err}");
    let (code, _, err) = corprof(&["frobnicate"]);
    assert_eq!(code, 2);
    assert!(err.contains("usage:"), "{err}");
    let (code, out, _) = corprof(&["--help"]);
    assert_eq!(code, 0);
    assert!(out.contains("corprof trace collect"));
    assert!(out.contains("corprof counters collect"));
    assert!(out.contains("corprof stack -p PID"));
    assert!(out.contains("corprof gcdump -p PID"));
}
