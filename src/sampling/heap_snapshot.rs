//! Heap snapshots (a part of the sampler's memory profiles of its own):
//! every so many seconds a thread of its own suspends the runtime, walks
//! every object of the GC heap with its references
//! (`EnumerateGCHeapObjects`, `ICorProfilerInfo15`, .NET 9 and later: no
//! garbage collection is induced) and the objects the statics of the loaded
//! classes hold, resumes the runtime, and makes of it a type histogram and
//! the shortest root path of every object ([`crate::profile::HeapGraph`]),
//! written as `heap-<start>.txt` (a table to read) and `heap-<start>.pb.gz`
//! (pprof, `heap_objects` and `heap_space` by root path) into the output
//! directory. One snapshot at a time, process-wide; the pause of each is
//! measured ([`HeapSnapshotStats`]).

use alloc::collections::BTreeMap;
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use core::sync::atomic::{AtomicBool, Ordering};
use core::time::Duration;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use crate::facade::{ProfilerInfo, FD_LITERAL, FD_STATIC};
use crate::metadata::mdFieldDef;
use crate::profile::{HeapGraph, HeapLimits, HeapSnapshot, Pprof};
use crate::profiling::{
    AppDomainID, ClassID, CORPROF_E_SUSPENSION_IN_PROGRESS, COR_PRF_FIELD_APP_DOMAIN_STATIC,
};
use crate::{Error, E_NOTIMPL};

/// The pprof sample types of a heap snapshot.
pub const HEAP_SNAPSHOT_TYPES: [(&str, &str); 2] =
    [("heap_objects", "count"), ("heap_space", "bytes")];

/// The most heap snapshots the output directory keeps (the oldest go).
pub const HEAP_SNAPSHOTS_KEPT: usize = 24;

/// The largest types whose retention `heap-<start>.txt` shows.
const RETENTION_TYPES: usize = 10;

/// What the heap snapshots of a run did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct HeapSnapshotStats {
    /// Snapshots taken and written.
    pub snapshots: u64,
    /// Snapshots that failed (the runtime refused, or writing failed).
    pub failed: u64,
    /// The last snapshot's pause (runtime suspended), nanoseconds.
    pub last_pause_nanos: u64,
    /// The longest pause, nanoseconds.
    pub max_pause_nanos: u64,
    /// The last snapshot's time outside the pause (statics, naming,
    /// paths, files), nanoseconds.
    pub last_work_nanos: u64,
    /// The last snapshot's objects.
    pub objects: u64,
    /// Their bytes.
    pub bytes: u64,
    /// The last snapshot's objects and references left out of its graph.
    pub dropped_objects: u64,
    /// See `dropped_objects`.
    pub dropped_edges: u64,
    /// The last snapshot's statics that held an object of the heap.
    pub named_roots: u64,
    /// The last failure's message.
    pub last_error: Option<String>,
    /// The run ended before the first interval did, and one snapshot was
    /// tried at the stop (taken or failed: `snapshots`, `failed`).
    pub at_stop: bool,
}

impl HeapSnapshotStats {
    /// Snapshots tried: taken or failed.
    fn attempts(&self) -> u64 {
        self.snapshots + self.failed
    }

    /// The `key=value` lines of `summary.txt`: `heap_snapshots` (`off`,
    /// `on`, or `not available (...)`: `state`), then the counters.
    pub(crate) fn summary_lines(&self, state: &str) -> String {
        let mut out = format!("heap_snapshots={state}\n");
        for (key, value) in [
            ("heap_snapshots_taken", self.snapshots),
            ("heap_snapshots_failed", self.failed),
            ("heap_snapshot_pause_ns", self.last_pause_nanos),
            ("heap_snapshot_pause_max_ns", self.max_pause_nanos),
            ("heap_snapshot_work_ns", self.last_work_nanos),
            ("heap_snapshot_objects", self.objects),
            ("heap_snapshot_bytes", self.bytes),
            ("heap_snapshot_dropped_objects", self.dropped_objects),
            ("heap_snapshot_dropped_edges", self.dropped_edges),
            ("heap_snapshot_static_roots", self.named_roots),
            ("heap_snapshot_at_stop", u64::from(self.at_stop)),
        ] {
            out.push_str(&format!("{key}={value}\n"));
        }
        if let Some(error) = &self.last_error {
            out.push_str(&format!(
                "heap_snapshot_error={}\n",
                error.replace('\n', " ")
            ));
        }
        out
    }
}

/// Set while a snapshot runs, process-wide: a second one is refused.
static RUNNING: AtomicBool = AtomicBool::new(false);

/// A static field of reference type of a loaded class.
struct StaticField {
    field: mdFieldDef,
    app_domain: AppDomainID,
    /// `[static Namespace.Type.field]`.
    name: String,
}

/// The classes loaded and not unloaded (`ClassLoadFinished`,
/// `ClassUnloadStarted`): the snapshot finds statics in these only, as
/// asking for a class that is not loaded (`GetClassFromToken`) loads it,
/// and that crashed 10.0.x from the snapshot's thread (measured).
pub(crate) type LoadedClasses = Arc<Mutex<BTreeMap<ClassID, ()>>>;

/// The statics of reference type of each loaded class seen so far (each
/// class read once, from the metadata).
#[derive(Default)]
pub(crate) struct Statics {
    classes: BTreeMap<ClassID, Vec<StaticField>>,
}

impl Statics {
    /// Reads the classes loaded since the last call, forgets the unloaded.
    fn refresh(&mut self, info: &ProfilerInfo, loaded: &LoadedClasses) {
        let loaded: Vec<ClassID> = loaded
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .keys()
            .copied()
            .collect();
        let mut next = BTreeMap::new();
        for class in loaded {
            let fields = match self.classes.remove(&class) {
                Some(fields) => fields,
                None => class_statics(info, class).unwrap_or_default(),
            };
            next.insert(class, fields);
        }
        self.classes = next;
    }
}

/// The application-domain statics of reference type of a loaded class.
fn class_statics(info: &ProfilerInfo, class: ClassID) -> crate::facade::Result<Vec<StaticField>> {
    let (module, typedef) = info.class_token(class)?;
    let app_domain = info
        .assembly_info(info.module_info(module)?.assembly)?
        .app_domain;
    let Some(import) = info.module_metadata(module)? else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    let mut type_name = None;
    for field in import.fields(typedef)? {
        let Ok(props) = import.field_props(field) else {
            continue;
        };
        if props.attributes & (FD_STATIC | FD_LITERAL) != FD_STATIC || !props.is_reference() {
            continue;
        }
        match info.static_field_info(class, field) {
            Ok(kind) if kind.contains(COR_PRF_FIELD_APP_DOMAIN_STATIC) => {}
            _ => continue,
        }
        if type_name.is_none() {
            type_name = Some(info.class_name(class)?);
        }
        let type_name = type_name.as_deref().unwrap_or("?");
        out.push(StaticField {
            field,
            app_domain,
            name: format!("[static {type_name}.{}]", props.name),
        });
    }
    Ok(out)
}

/// One snapshot: the heap walked under a suspension, then made into a
/// histogram and root paths. `Err` when another snapshot runs, before
/// .NET 9 (`E_NOTIMPL`), or when the runtime refuses.
pub(crate) fn take(
    info: &ProfilerInfo,
    statics: &mut Statics,
    loaded: &LoadedClasses,
    limits: HeapLimits,
) -> crate::facade::Result<(HeapSnapshot, Duration)> {
    if info.version() < 15 {
        return Err(Error::new(
            E_NOTIMPL,
            "heap snapshots need EnumerateGCHeapObjects (ICorProfilerInfo15, .NET 9)",
        ));
    }
    if RUNNING.swap(true, Ordering::SeqCst) {
        return Err(Error::new(
            CORPROF_E_SUSPENSION_IN_PROGRESS,
            "a heap snapshot is already running",
        ));
    }
    struct Done;
    impl Drop for Done {
        fn drop(&mut self) {
            RUNNING.store(false, Ordering::SeqCst);
        }
    }
    let _done = Done;
    let mut graph = HeapGraph::new(limits);
    let mut classes: Vec<ClassID> = Vec::new();
    let mut index: BTreeMap<ClassID, u32> = BTreeMap::new();
    // The sampler's own suspensions may be under way: a few tries.
    let mut tries = 0;
    let (suspended, started) = loop {
        let started = Instant::now();
        match info.suspend_runtime() {
            Ok(suspended) => break (suspended, started),
            Err(e) if tries < 50 && e.code() == CORPROF_E_SUSPENSION_IN_PROGRESS => {
                tries += 1;
                std::thread::sleep(Duration::from_millis(10));
            }
            Err(e) => return Err(e),
        }
    };
    // The loaded classes are read under the suspension, not before it: a
    // class of a collectible assembly unloaded before the suspension is out
    // of the list (its `ClassUnloadStarted` came first); one unloading while
    // managed code is stopped is the window left (collectible assemblies
    // only; docs/sampling.md, "Memory: heap snapshots"). The statics of a
    // class new since the last snapshot are looked up here (in the pause).
    statics.refresh(info, loaded);
    for (&class, fields) in &statics.classes {
        for s in fields {
            // SAFETY: `module_statics` kept application-domain statics of
            // reference type only (`is_reference`, `static_field_info`).
            if let Ok(object) = unsafe { suspended.static_object(class, s.field, s.app_domain) } {
                graph.add_root(s.name.clone(), object.as_raw() as u64);
            }
        }
    }
    let mut refs: Vec<u64> = Vec::new();
    let walked = suspended.enumerate_gc_heap_objects(|object| {
        let (Ok(class), Ok(size)) = (object.class(), object.size()) else {
            return true;
        };
        let next = classes.len() as u32;
        let kind = *index.entry(class).or_insert_with(|| {
            classes.push(class);
            next
        });
        refs.clear();
        if let Ok(references) = object.references() {
            refs.extend(references.into_iter().map(|r| r as u64));
        }
        graph.add_object(object.address() as u64, kind, size as u64, &refs);
        true
    });
    let resumed = suspended.resume();
    let pause = started.elapsed();
    walked?;
    resumed?;
    // Named after the resume: naming reads metadata, which may take locks
    // a suspended thread holds.
    let snapshot = graph.finish(|k| {
        let class = classes[k as usize];
        info.class_name(class)
            .unwrap_or_else(|_| format!("<class 0x{:x}>", class.as_raw()))
    });
    Ok((snapshot, pause))
}

/// The snapshot as pprof: one sample per root path (leaf first: the
/// objects' type, the types that hold them, the root), its objects in
/// `heap_objects` and bytes in `heap_space` (the default), labels
/// `object_type` and `root`.
pub(crate) fn to_pprof(snapshot: &HeapSnapshot, started: SystemTime, pause: Duration) -> Pprof {
    let mut pprof = Pprof::new(&HEAP_SNAPSHOT_TYPES);
    let time = started
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as i64);
    pprof.set_time(time, pause.as_nanos() as i64);
    pprof.set_default_sample_type("heap_space");
    for path in &snapshot.paths {
        let stack: Vec<&str> = path.frames.iter().rev().map(String::as_str).collect();
        let values = [
            path.objects.min(i64::MAX as u64) as i64,
            path.bytes.min(i64::MAX as u64) as i64,
        ];
        let labels = [("object_type", stack[0]), ("root", path.frames[0].as_str())];
        pprof.add_sample(&stack, &values, &labels);
    }
    pprof
}

/// The snapshot as a table: a header (time, objects, bytes, pause, what
/// was dropped), the histogram (objects, bytes, type; the most bytes
/// first), then the retention of the largest types (the root path that
/// holds the most of their bytes).
pub(crate) fn write_text(
    snapshot: &HeapSnapshot,
    stamp: &str,
    pause: Duration,
    mut out: impl io::Write,
) -> io::Result<()> {
    let s = &snapshot.stats;
    writeln!(
        out,
        "heap snapshot {stamp}: {} objects, {} bytes, {} types; runtime paused {:.3} ms",
        s.objects,
        s.bytes,
        snapshot.histogram.len(),
        pause.as_secs_f64() * 1e3
    )?;
    writeln!(
        out,
        "graph: {} references, {} to objects outside the heap walked, {} statics as roots; \
         left out: {} objects, {} references",
        s.edges, s.outside_edges, s.named_roots, s.dropped_objects, s.dropped_edges
    )?;
    writeln!(out)?;
    writeln!(out, "{:>12} {:>16}  type", "objects", "bytes")?;
    for row in &snapshot.histogram {
        writeln!(out, "{:>12} {:>16}  {}", row.objects, row.bytes, row.name)?;
    }
    writeln!(out)?;
    writeln!(
        out,
        "retention (the shortest path from a root, for the most bytes of each type):"
    )?;
    for row in snapshot.histogram.iter().take(RETENTION_TYPES) {
        let Some(path) = snapshot.retention(&row.name) else {
            continue;
        };
        writeln!(
            out,
            "{}: {} objects, {} bytes through {}",
            row.name,
            path.objects,
            path.bytes,
            path.frames.join(" -> ")
        )?;
    }
    Ok(())
}

/// Writes the snapshot's two files into `dir` (through temporary names,
/// renamed), then removes the oldest beyond [`HEAP_SNAPSHOTS_KEPT`].
fn write_files(
    dir: &Path,
    stamp: &str,
    snapshot: &HeapSnapshot,
    started: SystemTime,
    pause: Duration,
) -> io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let mut text = Vec::new();
    write_text(snapshot, stamp, pause, &mut text)?;
    let pb = to_pprof(snapshot, started, pause).encode_gzip();
    for (ext, bytes) in [("pb.gz", pb), ("txt", text)] {
        let tmp = dir.join(format!(".heap-{stamp}.{ext}.tmp"));
        std::fs::write(&tmp, bytes)?;
        std::fs::rename(&tmp, dir.join(format!("heap-{stamp}.{ext}")))?;
    }
    let mut names: Vec<String> = std::fs::read_dir(dir)?
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.starts_with("heap-") && n.ends_with(".txt"))
        .collect();
    names.sort();
    let excess = names.len().saturating_sub(HEAP_SNAPSHOTS_KEPT);
    for name in &names[..excess] {
        let _ = std::fs::remove_file(dir.join(name));
        let pb = format!("{}.pb.gz", name.trim_end_matches(".txt"));
        let _ = std::fs::remove_file(dir.join(pb));
    }
    Ok(())
}

/// Heap snapshots every so many seconds, from a thread of their own until
/// [`stop`](Self::stop); or, where they cannot be taken, the reason
/// (clones share the thread).
#[derive(Clone)]
pub(crate) struct HeapSnapshots {
    /// `on`, or `not available (...)`.
    state: String,
    stop: Arc<(Mutex<bool>, std::sync::Condvar)>,
    stats: Arc<Mutex<HeapSnapshotStats>>,
    thread: Arc<Mutex<Option<std::thread::JoinHandle<()>>>>,
    loaded: LoadedClasses,
}

impl HeapSnapshots {
    /// Snapshots that are not taken, for `reason` (in `summary.txt`:
    /// `heap_snapshots=not available (reason)`).
    pub(crate) fn unavailable(reason: &str) -> HeapSnapshots {
        HeapSnapshots {
            state: format!("not available ({reason})"),
            stop: Arc::new((Mutex::new(true), std::sync::Condvar::new())),
            stats: Arc::new(Mutex::new(HeapSnapshotStats::default())),
            thread: Arc::new(Mutex::new(None)),
            loaded: Arc::default(),
        }
    }

    /// Starts the thread: a snapshot every `every` into `dir`, each named
    /// by `stamp` (the UTC time of its start, `20261128T033000Z`, from the
    /// Unix seconds). Before .NET 9, or when the thread cannot start,
    /// [`unavailable`](Self::unavailable).
    pub(crate) fn start(
        info: &ProfilerInfo,
        every: Duration,
        dir: PathBuf,
        stamp: fn(u64) -> String,
    ) -> HeapSnapshots {
        if info.version() < 15 {
            return HeapSnapshots::unavailable("needs .NET 9");
        }
        let snapshots = HeapSnapshots {
            state: String::from("on"),
            ..HeapSnapshots::unavailable("")
        };
        *snapshots.stop.0.lock().unwrap_or_else(|e| e.into_inner()) = false;
        let (info, stop, stats, loaded) = (
            info.clone(),
            Arc::clone(&snapshots.stop),
            Arc::clone(&snapshots.stats),
            Arc::clone(&snapshots.loaded),
        );
        let thread = std::thread::Builder::new()
            .name(String::from("corprof-heap-snapshot"))
            .spawn(move || {
                let _ = info.initialize_current_thread();
                let mut statics = Statics::default();
                loop {
                    let (lock, wake) = &*stop;
                    let stopped = lock.lock().unwrap_or_else(|e| e.into_inner());
                    let (stopped, _) = wake
                        .wait_timeout_while(stopped, every, |s| !*s)
                        .unwrap_or_else(|e| e.into_inner());
                    let last = *stopped;
                    drop(stopped);
                    // At the stop, one snapshot if the run was shorter than
                    // the interval (as the period profile is written at
                    // the end whatever its period).
                    if last && stats.lock().unwrap_or_else(|e| e.into_inner()).attempts() > 0 {
                        return;
                    }
                    let result = snapshot_into(&info, &mut statics, &loaded, &dir, stamp);
                    let mut s = stats.lock().unwrap_or_else(|e| e.into_inner());
                    if last {
                        s.at_stop = true;
                    }
                    match result {
                        Ok((_, taken)) => taken.record(&mut s),
                        Err(error) => {
                            s.failed += 1;
                            s.last_error = Some(String::from(error.message()));
                        }
                    }
                    if last {
                        return;
                    }
                }
            });
        match thread {
            Ok(thread) => {
                *snapshots.thread.lock().unwrap_or_else(|e| e.into_inner()) = Some(thread);
                snapshots
            }
            Err(_) => HeapSnapshots::unavailable("cannot start its thread"),
        }
    }

    /// A class loaded (`ClassLoadFinished`, successful) or unloading
    /// (`ClassUnloadStarted`): statics are looked for in loaded classes.
    pub(crate) fn class_loaded(&self, class: ClassID, loaded: bool) {
        let mut classes = self.loaded.lock().unwrap_or_else(|e| e.into_inner());
        if loaded {
            classes.insert(class, ());
        } else {
            classes.remove(&class);
        }
    }

    /// The classes loaded, which the snapshots' statics are read from
    /// (shared with the incidents' snapshots).
    pub(crate) fn loaded(&self) -> LoadedClasses {
        Arc::clone(&self.loaded)
    }

    /// `on`, or `not available (...)`.
    pub(crate) fn state(&self) -> &str {
        &self.state
    }

    /// Stops the thread (a snapshot under way finishes first) and says
    /// what the snapshots did.
    pub(crate) fn stop(&self) -> HeapSnapshotStats {
        let (lock, wake) = &*self.stop;
        *lock.lock().unwrap_or_else(|e| e.into_inner()) = true;
        wake.notify_all();
        if let Some(thread) = self.thread.lock().unwrap_or_else(|e| e.into_inner()).take() {
            let _ = thread.join();
        }
        self.stats.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

/// A snapshot written: what [`HeapSnapshotStats`] records of it.
struct Taken {
    pause: Duration,
    work: Duration,
    stats: crate::profile::HeapStats,
}

impl Taken {
    fn record(&self, s: &mut HeapSnapshotStats) {
        let pause = self.pause.as_nanos().min(u64::MAX as u128) as u64;
        s.snapshots += 1;
        s.last_pause_nanos = pause;
        s.max_pause_nanos = s.max_pause_nanos.max(pause);
        s.last_work_nanos = self.work.as_nanos().min(u64::MAX as u128) as u64;
        s.objects = self.stats.objects;
        s.bytes = self.stats.bytes;
        s.dropped_objects = self.stats.dropped_objects;
        s.dropped_edges = self.stats.dropped_edges;
        s.named_roots = self.stats.named_roots;
    }
}

/// A snapshot at an incident (`incident.rs`), into its folder `dir`:
/// `heap-<stamp>.txt` and `heap-<stamp>.pb.gz`. Returns the text file's
/// name and the runtime's pause. `Err` before .NET 9, when another
/// snapshot runs, or when the runtime refuses or writing fails. Takes the
/// runtime's suspension: call it from a thread of the profiler's own
/// (`initialize_current_thread` called on it) holding no lock a managed
/// thread may wait for.
pub(crate) fn snapshot_for_incident(
    info: &ProfilerInfo,
    statics: &mut Statics,
    loaded: &LoadedClasses,
    dir: &Path,
    stamp: fn(u64) -> String,
) -> crate::facade::Result<(String, Duration)> {
    let (stamp, taken) = snapshot_into(info, statics, loaded, dir, stamp)?;
    Ok((format!("heap-{stamp}.txt"), taken.pause))
}

fn snapshot_into(
    info: &ProfilerInfo,
    statics: &mut Statics,
    loaded: &LoadedClasses,
    dir: &Path,
    stamp: fn(u64) -> String,
) -> crate::facade::Result<(String, Taken)> {
    let started = SystemTime::now();
    let clock = Instant::now();
    let (snapshot, pause) = take(info, statics, loaded, HeapLimits::default())?;
    let seconds = started
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let stamp = stamp(seconds);
    write_files(dir, &stamp, &snapshot, started, pause).map_err(|e| {
        Error::new(
            crate::E_FAIL,
            format!("writing heap-{stamp} into {}: {e}", dir.display()),
        )
    })?;
    let taken = Taken {
        pause,
        work: clock.elapsed().saturating_sub(pause),
        stats: snapshot.stats,
    };
    Ok((stamp, taken))
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;

    fn snapshot() -> HeapSnapshot {
        let mut graph = HeapGraph::new(HeapLimits::default());
        graph.add_object(0x10, 0, 32, &[0x20]);
        graph.add_object(0x20, 1, 56, &[0x30, 0x40]);
        graph.add_object(0x30, 2, 112, &[]);
        graph.add_object(0x40, 2, 112, &[]);
        graph.add_root("[static P.kept]".to_string(), 0x10);
        let names = ["List<Kept>", "Kept[]", "Kept"];
        graph.finish(|k| names[k as usize].to_string())
    }

    #[test]
    fn the_table_lists_types_by_bytes_and_the_retention_path() {
        let mut out = Vec::new();
        write_text(
            &snapshot(),
            "20261128T000000Z",
            Duration::from_micros(1500),
            &mut out,
        )
        .unwrap();
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[0],
            "heap snapshot 20261128T000000Z: 4 objects, 312 bytes, 3 types; runtime paused 1.500 ms"
        );
        let kept = lines.iter().position(|l| l.ends_with("  Kept")).unwrap();
        let list = lines
            .iter()
            .position(|l| l.ends_with("  List<Kept>"))
            .unwrap();
        assert!(kept < list, "{text}");
        assert!(
            lines[kept].split_whitespace().eq(["2", "224", "Kept"]),
            "{text}"
        );
        assert!(
            text.contains("Kept: 2 objects, 224 bytes through [static P.kept] -> List<Kept> -> Kept[] -> Kept"),
            "{text}"
        );
    }

    #[test]
    fn the_pprof_has_one_sample_per_path_leaf_first() {
        let pprof = to_pprof(&snapshot(), UNIX_EPOCH, Duration::ZERO);
        assert_eq!(pprof.sample_count(), 3);
    }
}
