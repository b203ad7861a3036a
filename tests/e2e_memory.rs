//! The sampler's memory profiles on the runtime CORPROF_RUNTIME picks, with
//! the `Memory` program (tests/e2e/roslyn/Memory) under the `sampler`
//! example, 1-s periods:
//!
//! - GC pauses: `Memory gc 10` calls `GC.Collect(2)` ten times; the summary
//!   counts ten gen-2 induced pauses, and the `gc-pause` time of the frame
//!   `[GC gen 2 Induced]` in the period files adds up to the run's. On 3.1
//!   (no in-process EventPipe) the summary says "not available", and the
//!   profile has no GC frame.
//!
//! Profiles are read by Go's own pprof (`go tool pprof`, installed by
//! scripts/provision/install-profile-readers.sh, never skipped).
#![cfg(unix)]

mod common;

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use common::dotnet::{self, Profiler};
use common::readers::{self, go_pprof};

const SAMPLER: &str = "7A3E9C51-2B8D-4F06-9E1A-C4D5B6A70819";

/// A fresh output directory named by `name`.
fn out_dir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("e2e_memory")
        .join(format!(
            "{name}-{}-{}",
            dotnet::runtime().major(),
            std::process::id()
        ));
    let _ = fs::remove_dir_all(&dir);
    dir
}

/// Runs `Memory ARGS` under the sampler with 1-s periods into `dir`, `env`
/// added; returns its stdout and the summary.
fn run(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> (String, BTreeMap<String, String>) {
    let library = dotnet::build_example("sampler")
        .unwrap_or_else(|error| panic!("building example sampler: {error}"));
    let mut profiler = Profiler::new(library, SAMPLER)
        .with_env("CORPROF_SAMPLER_DIR", dir.to_str().unwrap())
        .with_env("CORPROF_SAMPLER_PERIOD", "1");
    for (key, value) in env {
        profiler = profiler.with_env(*key, *value);
    }
    let out = dotnet::runtime().run("Memory", args, Some(&profiler));
    out.assert_exit(0);
    let summary = readers::summary(&dir.join("summary.txt"))
        .unwrap_or_else(|e| panic!("no summary: {e}\n{}", out.describe()));
    (out.stdout, summary)
}

/// The values of sample type `index` by leaf frame in a profile, summed, as
/// `go tool pprof -raw` prints them (exact integers).
fn leaf_values(file: &Path, index: &str) -> BTreeMap<String, u64> {
    let raw = go_pprof(&["-raw", file.to_str().unwrap()]);
    // The header names the sample types in order: "Samples:", then
    // "cpu/nanoseconds[dflt] wall/nanoseconds ...".
    let mut lines = raw.lines();
    let header = lines
        .by_ref()
        .skip_while(|l| !l.starts_with("Samples:"))
        .nth(1)
        .unwrap_or_else(|| panic!("no sample types in:\n{raw}"));
    let column = header
        .split_whitespace()
        .position(|t| t.split('/').next() == Some(index))
        .unwrap_or_else(|| panic!("no {index} in {header:?}"));
    let mut values = BTreeMap::new();
    // Each sample: "  v1 v2 ...: loc1 loc2 ..." then its labels; the
    // locations are listed after "Locations" with their names.
    let mut samples: Vec<(u64, u64)> = Vec::new();
    for line in lines.by_ref() {
        if line.starts_with("Locations") {
            break;
        }
        let Some((numbers, locations)) = line.split_once(':') else {
            continue;
        };
        let numbers: Vec<&str> = numbers.split_whitespace().collect();
        if numbers.len() <= column || numbers.iter().any(|n| n.parse::<i64>().is_err()) {
            continue;
        }
        let value: u64 = numbers[column].parse().unwrap();
        let leaf = locations
            .split_whitespace()
            .next()
            .and_then(|l| l.parse().ok());
        if let (true, Some(leaf)) = (value > 0, leaf) {
            samples.push((value, leaf));
        }
    }
    // Locations: "    44: 0x0 M=1 [GC gen 2 Induced] :0 s=0".
    let mut names = BTreeMap::new();
    for line in lines {
        let Some((id, rest)) = line.trim_start().split_once(": ") else {
            continue;
        };
        let (Ok(id), Some((_, name))) = (id.parse::<u64>(), rest.split_once(" M=1 ")) else {
            continue;
        };
        let name = name.rsplit_once(" :").map_or(name, |(name, _)| name);
        names.insert(id, name.to_string());
    }
    for (value, leaf) in samples {
        let name = names
            .get(&leaf)
            .cloned()
            .unwrap_or_else(|| format!("#{leaf}"));
        *values.entry(name).or_insert(0) += value;
    }
    values
}

const INDUCED_GEN2: &str = "[GC gen 2 Induced]";

/// `GC.Collect(2)` ten times: ten gen-2 induced pauses in the summary, and
/// the periods' `gc-pause` time of `[GC gen 2 Induced]` adds up to the
/// run's; on 3.1, "not available".
#[test]
fn gc_collect_2_ten_times_shows_ten_gen2_induced_pauses() {
    const N: u32 = 10;
    let dir = out_dir("gc");
    let (stdout, summary) = run(&dir, &["gc", &N.to_string()], &[]);
    // The precondition: the program's ten collections were the only gen-2
    // GCs of the run.
    assert_eq!(
        stdout.lines().collect::<Vec<_>>(),
        [format!("collected {N} gen2 {N}").as_str(), "done"],
        "{stdout}"
    );
    let run_profile = dir.join("profile.pb.gz");
    if dotnet::runtime().major() < 5 {
        assert_eq!(summary["gc_pauses"], "not available (needs .NET 5)");
        assert_eq!(summary["gc_pause_count"], "0");
        assert_eq!(summary["gc_pause_kinds"], "");
        let values = leaf_values(&run_profile, "gc-pause");
        assert!(values.is_empty(), "{values:?}");
        return;
    }
    assert_eq!(summary["gc_pauses"], "on", "{summary:?}");
    assert_eq!(summary["undecoded_gc_events"], "0", "{summary:?}");
    let kinds: BTreeMap<&str, (u64, u64)> = summary["gc_pause_kinds"]
        .split(',')
        .map(|kind| {
            let (name, numbers) = kind.split_once(':').unwrap();
            let (count, nanos) = numbers.split_once('/').unwrap();
            (name, (count.parse().unwrap(), nanos.parse().unwrap()))
        })
        .collect();
    let (count, nanos) = kinds["2/Induced"];
    assert_eq!(count, u64::from(N), "{kinds:?}");
    // Each pause is real time: more than nothing, less than the run.
    assert!(nanos > 0 && nanos < 10_000_000_000, "{nanos} ns");
    let total: u64 = summary["gc_pause_total_ns"].parse().unwrap();
    let max: u64 = summary["gc_pause_max_ns"].parse().unwrap();
    let all: u64 = summary["gc_pause_count"].parse().unwrap();
    assert_eq!(all, kinds.values().map(|k| k.0).sum::<u64>());
    assert_eq!(total, kinds.values().map(|k| k.1).sum::<u64>());
    assert!(max * u64::from(N) >= nanos && max <= total, "{summary:?}");
    // The run's profile holds the same time under the synthetic frame.
    let run_values = leaf_values(&run_profile, "gc-pause");
    assert_eq!(run_values.get(INDUCED_GEN2), Some(&nanos), "{run_values:?}");
    // The periods hold it too, split among them, nothing lost.
    let files = readers::period_files(&dir);
    assert!(files.len() >= 2, "{files:?}");
    let mut periods = 0;
    let mut with_pauses = 0;
    for file in &files {
        let values = leaf_values(file, "gc-pause");
        let here = values.get(INDUCED_GEN2).copied().unwrap_or(0);
        with_pauses += usize::from(here > 0);
        periods += here;
    }
    assert_eq!(periods, nanos, "the periods' pauses against the run's");
    assert!(
        with_pauses >= 2,
        "pauses in {with_pauses} of {} periods",
        files.len()
    );
    eprintln!(
        "gc pauses: {count} gen-2 induced, {nanos} ns in all, max {max} ns, over {} periods",
        files.len()
    );
}

const KEPT: &str = "new E2E.Memory.Kept";
const DROPPED: &str = "new E2E.Memory.Dropped";

/// `Memory heap` lines: (level, objects kept, their true bytes, the period
/// file whose end saw that level).
fn levels(stdout: &str) -> Vec<(u32, u64, u64, String)> {
    stdout
        .lines()
        .filter(|l| l.starts_with("level "))
        .map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            assert_eq!(
                (f.len(), f[2], f[4], f[6]),
                (8, "kept", "bytes", "file"),
                "{l}"
            );
            (
                f[1].parse().unwrap(),
                f[3].parse().unwrap(),
                f[5].parse().unwrap(),
                f[7].to_string(),
            )
        })
        .collect()
}

/// The live heap over five levels of a growing list of `Kept` objects, each
/// level dropping as many `Dropped` ones: at the end of the period after
/// each level the kept type's `inuse_space` is within 20% of its true bytes
/// and grows level to level, the dropped type is absent; the run's profile
/// at the stop likewise. Every `AllocationSampled`/`GCAllocationTick` event
/// is kept (`CORPROF_SAMPLER_ALLOC_BYTES=1`), so that each level stands on
/// about 330 samples (a standard error of 5.5%). Before .NET 7: "not
/// available", and no live heap in the profile.
#[test]
fn the_live_heap_shows_the_kept_type_growing_and_the_dropped_type_absent() {
    const LEVELS: u32 = 5;
    let dir = out_dir("heap");
    fs::create_dir_all(&dir).unwrap();
    let (stdout, summary) = run(
        &dir,
        &["heap", &LEVELS.to_string(), dir.to_str().unwrap()],
        &[("CORPROF_SAMPLER_ALLOC_BYTES", "1")],
    );
    let levels = levels(&stdout);
    assert_eq!(levels.len(), LEVELS as usize, "{stdout}");
    let run_profile = dir.join("profile.pb.gz");
    if dotnet::runtime().major() < 7 {
        assert_eq!(summary["live_heap"], "not available (needs .NET 7)");
        assert_eq!(summary["live_heap_tracked"], "0");
        let values = leaf_values(&run_profile, "inuse_space");
        assert!(values.is_empty(), "{values:?}");
        return;
    }
    assert_eq!(summary["live_heap"], "on", "{summary:?}");
    assert_eq!(summary["live_heap_handle_errors"], "0", "{summary:?}");
    assert_eq!(summary["live_heap_skipped"], "0", "{summary:?}");
    let collected: u64 = summary["live_heap_collected"].parse().unwrap();
    assert!(collected > 0, "the dropped objects' handles: {summary:?}");
    let mut previous = 0;
    for (level, objects, bytes, file) in &levels {
        assert_ne!(file, "none", "no period after level {level}");
        let values = leaf_values(&dir.join(file), "inuse_space");
        let kept = values.get(KEPT).copied().unwrap_or(0);
        let ratio = kept as f64 / *bytes as f64;
        eprintln!(
            "level {level}: {objects} kept, {bytes} B; live heap {kept} B ({ratio:.3}) in {file}"
        );
        assert!(
            (0.8..=1.2).contains(&ratio),
            "level {level}: {kept} B of {KEPT} for {bytes} B kept: {values:?}"
        );
        assert_eq!(values.get(DROPPED), None, "level {level}: {values:?}");
        assert!(
            kept > previous,
            "level {level}: {kept} B after {previous} B"
        );
        previous = kept;
    }
    let (_, _, bytes, _) = levels.last().unwrap();
    let values = leaf_values(&run_profile, "inuse_space");
    let kept = values.get(KEPT).copied().unwrap_or(0);
    assert!(
        (0.8..=1.2).contains(&(kept as f64 / *bytes as f64)),
        "at the stop: {kept} B for {bytes} B: {values:?}"
    );
    assert_eq!(values.get(DROPPED), None, "{values:?}");
    // The objects' counts too: bytes over the known size.
    let objects = leaf_values(&run_profile, "inuse_objects");
    let (_, count, _, _) = levels.last().unwrap();
    let ratio = objects.get(KEPT).copied().unwrap_or(0) as f64 / *count as f64;
    assert!((0.8..=1.2).contains(&ratio), "{objects:?} for {count}");
}

/// A table of 100 objects: new objects beyond it are skipped and counted,
/// and it never holds more. Before .NET 7: "not available", nothing
/// tracked or skipped.
#[test]
fn the_table_limit_is_respected_and_counted() {
    let dir = out_dir("heap-limit");
    fs::create_dir_all(&dir).unwrap();
    let (stdout, summary) = run(
        &dir,
        &["heap", "2", dir.to_str().unwrap()],
        &[
            ("CORPROF_SAMPLER_ALLOC_BYTES", "1"),
            ("CORPROF_SAMPLER_HEAP_OBJECTS", "100"),
        ],
    );
    assert_eq!(levels(&stdout).len(), 2, "{stdout}");
    if dotnet::runtime().major() < 7 {
        assert_eq!(summary["live_heap"], "not available (needs .NET 7)");
        assert_eq!(
            (
                summary["live_heap_tracked"].as_str(),
                summary["live_heap_skipped"].as_str()
            ),
            ("0", "0")
        );
        return;
    }
    assert_eq!(summary["live_heap"], "on", "{summary:?}");
    assert_eq!(summary["live_heap_limit"], "100");
    let number = |key: &str| -> u64 { summary[key].parse().unwrap() };
    // About 660 kept samples for 100 places.
    assert!(number("live_heap_skipped") >= 300, "{summary:?}");
    assert!(number("live_heap_at_stop") <= 100, "{summary:?}");
    assert!(
        number("live_heap_tracked") <= 100 + number("live_heap_collected"),
        "{summary:?}"
    );
}

/// A heap snapshot (`CORPROF_SAMPLER_HEAP_SNAPSHOT_EVERY=1`) of `Memory
/// snapshot 200000`, taken a whole second after the program kept 200,000
/// `Kept` objects in a static list, dropped as many `Dropped` ones and
/// collected (a quiescent heap: the program only polls for the file):
/// `Kept` first in the histogram with exactly 200,000 objects, `Dropped`
/// absent, the retention of `Kept` through the static field `kept`, and the
/// pprof's `heap_objects` of the leaf `E2E.Memory.Kept` read by `go tool
/// pprof -raw` the same 200,000. Before .NET 9 (no
/// `EnumerateGCHeapObjects`): "not available", and no file.
#[test]
fn a_heap_snapshot_shows_the_kept_type_first_held_by_its_static() {
    const N: u64 = 200_000;
    let dir = out_dir("snapshot");
    fs::create_dir_all(&dir).unwrap();
    let (stdout, summary) = run(
        &dir,
        &["snapshot", &N.to_string(), dir.to_str().unwrap()],
        &[("CORPROF_SAMPLER_HEAP_SNAPSHOT_EVERY", "1")],
    );
    let line = stdout
        .lines()
        .find(|l| l.starts_with("snapshot kept "))
        .unwrap_or_else(|| panic!("{stdout}"));
    let fields: Vec<&str> = line.split_whitespace().collect();
    assert_eq!(
        (fields[2], fields[3]),
        (N.to_string().as_str(), "file"),
        "{line}"
    );
    let file = fields[4];
    if dotnet::runtime().major() < 9 {
        assert_eq!(summary["heap_snapshots"], "not available (needs .NET 9)");
        assert_eq!(summary["heap_snapshots_taken"], "0");
        assert_eq!(file, "none");
        let heap_files = fs::read_dir(&dir)
            .unwrap()
            .filter(|e| {
                let name = e.as_ref().unwrap().file_name();
                name.to_string_lossy().starts_with("heap-")
            })
            .count();
        assert_eq!(heap_files, 0);
        return;
    }
    assert_eq!(summary["heap_snapshots"], "on", "{summary:?}");
    assert_ne!(
        file, "none",
        "no snapshot after the collection: {summary:?}"
    );
    let taken: u64 = summary["heap_snapshots_taken"].parse().unwrap();
    let pause: u64 = summary["heap_snapshot_pause_ns"].parse().unwrap();
    assert!(taken >= 1 && pause > 0, "{summary:?}");
    assert_eq!(summary["heap_snapshots_failed"], "0", "{summary:?}");
    assert_eq!(summary["heap_snapshot_dropped_objects"], "0", "{summary:?}");
    let text = fs::read_to_string(dir.join(file)).unwrap();
    eprintln!("{}", text.lines().take(12).collect::<Vec<_>>().join("\n"));
    // The histogram: the first row after the header "objects bytes type".
    let mut rows = text
        .lines()
        .skip_while(|l| !l.trim_start().starts_with("objects"))
        .skip(1)
        .take_while(|l| !l.is_empty())
        .map(|l| l.split_whitespace().collect::<Vec<_>>());
    let first = rows.next().unwrap_or_else(|| panic!("{text}"));
    assert_eq!(first[2], "E2E.Memory.Kept", "{text}");
    assert_eq!(first[0], N.to_string(), "{text}");
    assert!(
        !text.contains("E2E.Memory.Dropped"),
        "the dropped type was collected:\n{text}"
    );
    let retention = format!(
        "E2E.Memory.Kept: {N} objects, {} bytes through [static E2E.Memory.Program.kept] -> \
         System.Collections.Generic.List<E2E.Memory.Kept> -> E2E.Memory.Kept[] -> E2E.Memory.Kept",
        first[1]
    );
    assert!(text.contains(&retention), "no {retention:?} in:\n{text}");
    let pprof = dir.join(file.replace(".txt", ".pb.gz"));
    let objects = leaf_values(&pprof, "heap_objects");
    assert_eq!(objects.get("E2E.Memory.Kept"), Some(&N), "{objects:?}");
}

/// A heap-snapshot interval longer than the run (the README's
/// `CORPROF_SAMPLER_HEAP_SNAPSHOT_EVERY=600` on a 1 s program) still gives
/// one snapshot, taken at the stop, as the period profile is written at
/// the end whatever its period: `heap_snapshot_at_stop=1`, one
/// `heap-*.txt` naming the program's kept type. Before .NET 9, none.
#[test]
fn an_interval_longer_than_the_run_still_gives_one_snapshot_at_the_stop() {
    let dir = out_dir("snapshot-at-stop");
    fs::create_dir_all(&dir).unwrap();
    let (_, summary) = run(
        &dir,
        &["gc", "2"],
        &[("CORPROF_SAMPLER_HEAP_SNAPSHOT_EVERY", "600")],
    );
    let heap_files: Vec<String> = fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with("heap-") && name.ends_with(".txt"))
        .collect();
    if dotnet::runtime().major() < 9 {
        assert_eq!(summary["heap_snapshots_taken"], "0", "{summary:?}");
        assert!(heap_files.is_empty(), "{heap_files:?}");
        return;
    }
    assert_eq!(summary["heap_snapshots_taken"], "1", "{summary:?}");
    assert_eq!(summary["heap_snapshots_failed"], "0", "{summary:?}");
    assert_eq!(summary["heap_snapshot_at_stop"], "1", "{summary:?}");
    assert_eq!(heap_files.len(), 1, "{heap_files:?}");
    let text = fs::read_to_string(dir.join(&heap_files[0])).unwrap();
    assert!(text.contains("System.String"), "{text}");
}
