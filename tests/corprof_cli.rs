//! The `corprof` command without a runtime: `trace convert` on streams
//! written by hand (tests/common/nettrace_writer.rs) and its errors, the
//! errors of `counters`, `stack` and `gcdump`, and the conventions of every
//! subcommand (`-h`, `--help`, `--version`, usage errors).

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
    trace_file_with(path, true);
}

/// [`trace_file`], with or without its rundown.
fn trace_file_with(path: &Path, rundown_events: bool) {
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
    let mut events = vec![sample(1, 1), sample(2, 2), sample(3, 3)];
    if rundown_events {
        events.push(rundown(4, method(0x1000, 0x100, "App.Program", "Main")));
        events.push(rundown(5, method(0x2000, 0x40, "App.Program", "Hot")));
    }
    s.block("EventBlock", &compressed_block(&events));
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
fn convert_without_a_rundown_says_where_names_come_from() {
    let dir = dir();
    let trace = dir.join("no-rundown.nettrace");
    trace_file_with(&trace, false);
    let (code, _, err) = corprof(&["trace", "convert", trace.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("3 samples, 0 methods named"), "{err}");
    assert!(
        err.contains("names no method") && err.contains("without --no-rundown"),
        "{err}"
    );
    let folded = std::fs::read_to_string(dir.join("no-rundown.folded")).unwrap();
    assert_eq!(folded, "[native] 3\n");
    // With the rundown: no such hint.
    let trace = dir.join("rundown.nettrace");
    trace_file(&trace);
    let (code, _, err) = corprof(&["trace", "convert", trace.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(!err.contains("names no method"), "{err}");
}

#[test]
fn bad_input_and_usage_are_errors() {
    let dir = dir();
    let trace = dir.join("cut.nettrace");
    trace_file(&trace);
    let bytes = std::fs::read(&trace).unwrap();
    std::fs::write(&trace, &bytes[..bytes.len() - 7]).unwrap();
    // Failures: exit 1, the message alone.
    let (code, _, err) = corprof(&["trace", "convert", trace.to_str().unwrap()]);
    assert_eq!(code, 1);
    assert!(
        err.contains("at byte") && err.contains("ends inside"),
        "{err}"
    );
    assert!(!err.contains("usage:"), "{err}");
    let (code, _, err) = corprof(&["trace", "convert", "/nonexistent.nettrace"]);
    assert_eq!(code, 1);
    assert!(err.contains("/nonexistent.nettrace"), "{err}");
    // No process has a pid over Linux's largest (2^22).
    let (code, _, err) = corprof(&["stack", "-p", "4000000000"]);
    assert_eq!(code, 1);
    assert!(
        err.contains("4000000000") && !err.contains("usage:"),
        "{err}"
    );
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
    assert!(
        err.starts_with("corprof: no command `corprof frobnicate`\nusage:\n"),
        "{err}"
    );
    let (code, out, _) = corprof(&["--help"]);
    assert_eq!(code, 0);
    assert!(out.contains("corprof trace collect"));
    assert!(out.contains("corprof counters collect"));
    assert!(out.contains("corprof stack -p PID"));
    assert!(out.contains("corprof gcdump -p PID"));
}

/// The subcommands `corprof --help` lists: the words after `corprof` on
/// each synopsis line, up to the first option or placeholder.
fn subcommands() -> Vec<Vec<String>> {
    let (code, out, err) = corprof(&["--help"]);
    assert_eq!(code, 0, "{err}");
    let mut found: Vec<Vec<String>> = Vec::new();
    for line in out.lines() {
        let Some(rest) = line.trim_start().strip_prefix("corprof ") else {
            continue;
        };
        let words: Vec<String> = rest
            .split_whitespace()
            .take_while(|w| w.chars().all(|c| c.is_ascii_lowercase()))
            .map(str::to_string)
            .collect();
        if !found.contains(&words) {
            found.push(words);
        }
    }
    found
}

#[test]
fn every_subcommand_has_its_help_and_usage_errors() {
    let all = subcommands();
    // Today's seven at least (a new one is checked as soon as it is listed).
    for known in [
        "ps",
        "trace collect",
        "trace convert",
        "counters monitor",
        "counters collect",
        "stack",
        "gcdump",
    ] {
        assert!(all.iter().any(|w| w.join(" ") == known), "{known}: {all:?}");
    }
    for words in &all {
        let command = words.join(" ");
        for flag in ["-h", "--help"] {
            let mut args: Vec<&str> = words.iter().map(String::as_str).collect();
            args.push(flag);
            let (code, out, err) = corprof(&args);
            assert_eq!(code, 0, "{command} {flag}: {err}");
            assert!(err.is_empty(), "{command} {flag}: {err}");
            // This subcommand's synopsis, no other's.
            assert!(
                out.starts_with(&format!("usage:\n  corprof {command}")),
                "{command} {flag}: {out}"
            );
            for line in out.lines().filter(|l| l.contains("corprof ")) {
                assert!(
                    line.trim_start().starts_with(&format!("corprof {command}")),
                    "{command} {flag}: {out}"
                );
            }
        }
    }
    // A group: its subcommands.
    let (code, out, _) = corprof(&["trace", "--help"]);
    assert_eq!(code, 0);
    assert!(out.contains("corprof trace collect") && out.contains("corprof trace convert"));
    assert!(!out.contains("corprof counters"), "{out}");
    let (code, out, _) = corprof(&["help", "counters", "collect"]);
    assert_eq!(code, 0);
    assert!(
        out.starts_with("usage:\n  corprof counters collect"),
        "{out}"
    );
    assert!(out.contains("counters: comma-separated"), "{out}");
    // `--version`: the crate's.
    let (code, out, _) = corprof(&["--version"]);
    assert_eq!(code, 0);
    assert_eq!(out, format!("corprof {}\n", env!("CARGO_PKG_VERSION")));
    // A usage error: exit 2, the wrong line, then the subcommand's usage
    // only.
    for (args, line, usage) in [
        (
            &["trace", "collect"][..],
            "trace collect needs -p PID",
            "corprof trace collect",
        ),
        (
            &["gcdump", "-p", "1", "--frob"],
            "unknown option --frob",
            "corprof gcdump",
        ),
        (&["ps", "x"], "no command `corprof ps x`", "corprof ps"),
        (
            &["trace", "frob"],
            "no command `corprof trace frob`",
            "corprof trace",
        ),
        (
            &["counters", "monitor", "-p", "x"],
            "-p takes a process id",
            "corprof counters monitor",
        ),
        (
            &["trace", "convert", "a", "b"],
            "trace convert takes one file",
            "corprof trace convert",
        ),
    ] {
        let (code, out, err) = corprof(args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(out.is_empty(), "{args:?}: {out}");
        assert!(
            err.starts_with(&format!("corprof: {line}\nusage:\n  {usage}")),
            "{args:?}: {err}"
        );
        for l in err
            .lines()
            .filter(|l| l.trim_start().starts_with("corprof "))
        {
            assert!(l.trim_start().starts_with(usage), "{args:?}: {err}");
        }
    }
}

/// `corprof heap diff A B`: two histograms (a heap snapshot's table and
/// gcdump's), the types whose objects and bytes grew, by bytes grown, with
/// the snapshot's retention path; a file with no histogram is an error, a
/// missing file too, a missing argument a usage error.
#[test]
fn heap_diff_names_the_types_that_grew() {
    let dir = dir().join("heap-diff");
    std::fs::create_dir_all(&dir).unwrap();
    let (a, b, empty) = (dir.join("a.txt"), dir.join("b.txt"), dir.join("e.txt"));
    // gcdump's printed table, then a snapshot's heap-<time>.txt.
    std::fs::write(
        &a,
        "       Count          Bytes  Type\n          10           3000  System.Byte[]\n          15           1500  Leak.Item\n",
    )
    .unwrap();
    std::fs::write(
        &b,
        "heap snapshot 20261207T170100Z: 165 objects, 17000 bytes, 2 types; runtime paused 1.000 ms\n\n     objects            bytes  type\n         150            15000  Leak.Item\n          15             2000  System.Byte[]\n\nretention (the shortest path from a root, for the most bytes of each type):\nLeak.Item: 150 objects, 15000 bytes through [static Leak.Program.kept] -> Leak.Item[]\n",
    )
    .unwrap();
    std::fs::write(&empty, "nothing here\n").unwrap();
    let (a, b, empty) = (
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        empty.to_str().unwrap(),
    );
    let (code, out, err) = corprof(&["heap", "diff", a, b]);
    assert_eq!(code, 0, "{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert!(
        lines[0].contains("25 -> 165 objects, 4500 -> 17000 bytes; 1 suspects"),
        "{out}"
    );
    assert!(
        lines[2].trim_start().starts_with("13500          135"),
        "{out}"
    );
    assert!(lines[2].ends_with("  Leak.Item"), "{out}");
    assert!(
        lines[3].contains("held through [static Leak.Program.kept] -> Leak.Item[]"),
        "{out}"
    );
    assert_eq!(
        lines.len(),
        4,
        "Byte[] grew in bytes, not in objects: {out}"
    );
    let (code, _, err) = corprof(&["heap", "diff", a, empty]);
    assert_eq!(code, 1);
    assert!(err.contains("e.txt: no type histogram"), "{err}");
    let (code, _, err) = corprof(&["heap", "diff", a, "/nonexistent/x.txt"]);
    assert_eq!(code, 1, "{err}");
    let (code, _, err) = corprof(&["heap", "diff", a]);
    assert_eq!(code, 2);
    assert!(err.contains("corprof heap diff A B [--top N]"), "{err}");
}
