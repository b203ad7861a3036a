//! The GC heap walk (`ProfilerInfo::enumerate_gc_heap_objects`,
//! `ICorProfilerInfo15`, .NET 9) on a real CoreCLR: the fixture
//! `tests/fixtures/heap_walk.rs` in the `HeapWalk` program, which keeps
//! exactly 1,000 `Marker` objects alive (and never makes another) when the
//! fixture walks. Runtimes without the interface (3.1 and 8) answer
//! `E_NOTIMPL` to every walk, which is asserted there. See docs/safety.md
//! ("The GC heap walk").

// The real-runtime harness (tests/common/dotnet.rs) is Unix only.
#![cfg(unix)]

mod common;

use std::fs;
use std::path::Path;

use common::dotnet::{self, Profiler};

const HEAP_WALK: &str = "6B2D8E14-3C5A-4F97-A1E0-7D9C2B4F6A85";
const STDOUT: &str = "markers=1000 sum=499500\n";

/// The one line of `text` that starts with `prefix`, without it.
fn line<'a>(text: &'a str, prefix: &str) -> &'a str {
    let found: Vec<&str> = text
        .lines()
        .filter_map(|l| l.strip_prefix(prefix))
        .collect();
    assert_eq!(found.len(), 1, "one {prefix:?} line in\n{text}");
    found[0]
}

/// `objects=N markers=M sized=S` -> (N, M, S).
fn tally(text: &str) -> (usize, usize, usize) {
    let value = |key: &str| -> usize {
        text.split_whitespace()
            .find_map(|w| w.strip_prefix(key))
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("no {key} in {text:?}"))
    };
    (value("objects="), value("markers="), value("sized="))
}

#[test]
fn the_heap_walk_counts_exactly_the_objects_the_program_keeps_alive() {
    let rt = dotnet::runtime();
    // The program alone: what the profiled run must reproduce.
    let alone = rt.run("HeapWalk", &[], None);
    alone.assert_exit(44);
    assert_eq!(alone.stdout, STDOUT, "{}", alone.describe());

    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("e2e_heap_walk");
    fs::create_dir_all(&dir).unwrap();
    let output = dir.join(format!("walks-{}.txt", std::process::id()));
    let _ = fs::remove_file(&output);
    let library = dotnet::build_example("heap_walk")
        .unwrap_or_else(|error| panic!("building fixture heap_walk: {error}"));
    let profiler =
        Profiler::new(library, HEAP_WALK).with_env("HEAP_WALK_OUTPUT", output.to_str().unwrap());
    let out = rt.run("HeapWalk", &[], Some(&profiler));
    out.assert_exit(44);
    assert_eq!(out.stdout, STDOUT, "{}", out.describe());
    let text = fs::read_to_string(&output)
        .unwrap_or_else(|e| panic!("{}: {e}\n{}", output.display(), out.describe()));

    if rt.major() < 9 {
        // No ICorProfilerInfo15: the facade answers E_NOTIMPL, asking nothing.
        for prefix in ["jit: ", "stopped: ", "plain under suspension: ", "gc: "] {
            assert!(
                line(&text, prefix).starts_with("err E_NOTIMPL"),
                "runtime {}: {text}",
                rt.version
            );
        }
        // Suspending works there (ICorProfilerInfo10); the walk does not.
        let suspended = line(&text, "suspended: ");
        assert!(
            suspended.starts_with("err E_NOTIMPL") && suspended.ends_with(" resumed=true"),
            "runtime {}: {text}",
            rt.version
        );
        return;
    }
    // Walked from the JIT callback of Walk, the runtime suspending itself:
    // exactly the 1,000 markers, each 24 bytes (header, method table, int,
    // padding), among the other objects of the heap.
    let (objects, markers, sized) = tally(line(&text, "jit: "));
    assert_eq!((markers, sized), (1000, 1000), "{text}");
    assert!(objects > markers, "{text}");
    // A closure answering false stops the walk, which is then a success.
    assert_eq!(line(&text, "stopped: "), "ok visited=1", "{text}");
    // Under the profiler's own suspension, from its own thread: the plain
    // method refuses (the suspension could be resumed during the walk), the
    // one of SuspendedRuntime walks the same heap.
    assert!(
        line(&text, "plain under suspension: ")
            .starts_with("err CORPROF_E_UNSUPPORTED_CALL_SEQUENCE"),
        "{text}"
    );
    let suspended = line(&text, "suspended: ");
    assert!(suspended.ends_with(" resumed=true"), "{text}");
    let (objects, markers, sized) = tally(suspended);
    assert_eq!((markers, sized), (1000, 1000), "{text}");
    assert!(objects > markers, "{text}");
    // Inside a collection (the runtime suspended for it) the runtime refuses.
    assert!(
        line(&text, "gc: ").starts_with("err CORPROF_E_UNSUPPORTED_CALL_SEQUENCE"),
        "{text}"
    );
}
