//! The incidents: the rules ([`Armed`], `armed.rs`) fed by what the
//! sampler sees (GC pauses, the GC heap after each GC, exceptions, the
//! process's CPU), and the thread
//! that writes the flight recorder's window (`recorder.rs`) when one
//! fires, into `<dir>/incident-<time>-<kind>/`: the profile in every
//! format [`write_outputs`] has, a heap snapshot taken then at the heap
//! rules' incidents (.NET 9 and later, `heap_snapshot.rs`) and a
//! `reason.txt`.
//!
//! A rule that fires on an application's thread (an exception) or the
//! runtime's (a GC pause, the heap after a GC) only sends a request over a
//! channel: the window
//! is taken and written on the incidents' thread, which also reads the
//! process's CPU clock every [`CPU_EVERY`].

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::sync::atomic::{AtomicU64, Ordering};
use core::time::Duration;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError, Sender};
use std::sync::{Mutex, OnceLock};
use std::time::{Instant, SystemTime};

use super::armed::{Armed, Firing};
use super::clock::process_cpu_nanos;
use super::export::utc_stamp;
use super::gc_heap::{describe, heap_after_gc, GcHeapStats};
use super::heap_snapshot::{snapshot_for_incident, LoadedClasses, Statics};
use super::options::{sample_interval, SamplerOptions};
use super::output::write_outputs;
use super::record::Core;
use super::state::{Profile, SamplerStats, ThreadProfile};
use crate::profile::FrameId;
use crate::profiling::ThreadID;
use crate::support::sync::lock;

/// How often the incidents' thread reads the process's CPU clock.
pub(super) const CPU_EVERY: Duration = Duration::from_millis(250);

/// A rule that fired, for the incidents' thread.
struct Request {
    firing: Firing,
    /// The thread that crossed it, and its stack (outermost first).
    thread: Option<(ThreadID, Vec<FrameId>)>,
}

/// The rules and the channel to the incidents' thread.
pub(super) struct Incidents {
    armed: Mutex<Armed>,
    send: Mutex<Sender<Request>>,
    receive: Mutex<Option<Receiver<Request>>>,
    dir: PathBuf,
    /// Whether a rule watches the GC heap (`GCHeapStats` read only then).
    pub(super) watches_heap: bool,
    /// The `GCHeapStats` events read, and those that did not decode.
    heap_events: AtomicU64,
    heap_undecoded: AtomicU64,
    /// The heap after the last GC, bytes.
    heap_last: AtomicU64,
    /// What the first `GCHeapStats` event's metadata and payload said
    /// (`gc_heap::describe`).
    heap_event: OnceLock<String>,
    /// The heap snapshots at the incidents (.NET 9 and later): the classes
    /// loaded, and the statics read of them so far. Set once by the
    /// `Profiler` part that forwards the class loads.
    snapshots: OnceLock<Mutex<(LoadedClasses, Statics)>>,
}

impl Incidents {
    /// The rules of `options` (`None` without any, or without a
    /// directory: `SamplerOptions::validate` refuses that).
    pub(super) fn new(options: &SamplerOptions) -> Option<Incidents> {
        if options.triggers.is_empty() {
            return None;
        }
        let (send, receive) = channel();
        let armed = Armed::new(options.triggers.clone(), options.trigger_interval);
        Some(Incidents {
            watches_heap: armed.watches_heap(),
            armed: Mutex::new(armed),
            send: Mutex::new(send),
            receive: Mutex::new(Some(receive)),
            dir: options.incident_dir.clone()?,
            heap_events: AtomicU64::new(0),
            heap_undecoded: AtomicU64::new(0),
            heap_last: AtomicU64::new(0),
            heap_event: OnceLock::new(),
            snapshots: OnceLock::new(),
        })
    }

    /// Takes a heap snapshot into each incident's folder from now on, its
    /// statics read from the classes of `loaded` (.NET 9 and later; the
    /// caller forwards the class loads into `loaded`).
    pub(super) fn snapshot_heap(&self, loaded: LoadedClasses) {
        let _ = self.snapshots.set(Mutex::new((loaded, Statics::default())));
    }

    /// A `GCHeapStats` event of the runtime's (its metadata blob, version
    /// and payload), delivered at the end of a GC on the thread that ran
    /// it: the heap rules see the heap. Never calls the runtime; the rules'
    /// lock is held for a few comparisons.
    pub(super) fn gc_heap_stats(&self, metadata: &[u8], version: u32, data: &[u8]) {
        let heap = heap_after_gc(metadata, version, data);
        self.heap_events.fetch_add(1, Ordering::Relaxed);
        self.heap_event
            .get_or_init(|| describe(metadata, version, data, heap.is_some()));
        let Some(bytes) = heap else {
            self.heap_undecoded.fetch_add(1, Ordering::Relaxed);
            return;
        };
        self.heap_last.store(bytes, Ordering::Relaxed);
        let fired = lock(&self.armed).gc_heap(bytes, Instant::now());
        if !fired.is_empty() {
            self.request(fired, None);
        }
    }

    /// What the heap rules saw so far.
    pub(super) fn heap_stats(&self) -> GcHeapStats {
        GcHeapStats {
            events: self.heap_events.load(Ordering::Relaxed),
            undecoded_events: self.heap_undecoded.load(Ordering::Relaxed),
            last_bytes: self.heap_last.load(Ordering::Relaxed),
            first_event: self.heap_event.get().cloned(),
        }
    }

    fn request(&self, fired: Vec<Firing>, thread: Option<(ThreadID, Vec<FrameId>)>) {
        let send = lock(&self.send);
        for firing in fired {
            // The thread gone (stopped): nothing more is written.
            let _ = send.send(Request {
                firing,
                thread: thread.clone(),
            });
        }
    }

    /// A GC suspended the runtime for `nanos`, ended now.
    pub(super) fn gc_pause(&self, nanos: u64) {
        let fired = lock(&self.armed).gc_pause(nanos, Instant::now());
        self.request(fired, None);
    }

    /// `count` exceptions of `type_name` thrown now on `thread`, at
    /// `stack` (the one recorded).
    pub(super) fn exception(
        &self,
        type_name: &str,
        count: u64,
        thread: Option<ThreadID>,
        stack: Vec<FrameId>,
    ) {
        let fired = lock(&self.armed).exception(type_name, count, Instant::now());
        if !fired.is_empty() {
            self.request(fired, thread.map(|t| (t, stack)));
        }
    }
}

/// The incidents' thread: until the sampler stops, writes each request and
/// reads the process's CPU clock every [`CPU_EVERY`] for the CPU rules.
pub(super) fn run(core: &Core, incidents: &Incidents) {
    let Some(receive) = lock(&incidents.receive).take() else {
        return;
    };
    if core.info.version() >= 15 {
        // It may take heap snapshots, which suspend the runtime.
        let _ = core.info.initialize_current_thread();
    }
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get() as u32);
    let watches_cpu = lock(&incidents.armed).watches_cpu();
    loop {
        if *lock(&core.stop) {
            return;
        }
        match receive.recv_timeout(CPU_EVERY) {
            Ok(request) => write(core, incidents, request),
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => return,
        }
        if !watches_cpu {
            continue;
        }
        let Some(cpu) = process_cpu_nanos() else {
            continue;
        };
        let fired = lock(&incidents.armed).cpu(cpu, cores, Instant::now());
        for firing in fired {
            write(
                core,
                incidents,
                Request {
                    firing,
                    thread: None,
                },
            );
        }
    }
}

/// Writes one incident, or says on stderr why it could not.
fn write(core: &Core, incidents: &Incidents, request: Request) {
    let (rule, kind) = {
        let armed = lock(&incidents.armed);
        let trigger = &armed.rules[request.firing.rule];
        (trigger.text.clone(), trigger.kind_name())
    };
    let now = SystemTime::now();
    let unix = now
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let mut dir = incidents
        .dir
        .join(format!("incident-{}-{kind}", utc_stamp(unix)));
    for n in 2.. {
        if !dir.exists() {
            break;
        }
        dir = incidents
            .dir
            .join(format!("incident-{}-{kind}-{n}", utc_stamp(unix)));
    }
    let taking = Instant::now();
    let Some((profile, thread, stack)) = window(core, &request) else {
        return;
    };
    let held = taking.elapsed();
    // With no lock held: the snapshot suspends the runtime.
    let heap = match kind {
        "gc-heap" | "heap-growth" => heap_snapshot(core, incidents, &dir),
        _ => String::from("not taken (at the gc-heap and heap-growth rules' incidents only)"),
    };
    let result = std::fs::create_dir_all(&dir)
        .and_then(|()| write_outputs(&profile, &dir))
        .and_then(|_| {
            let said = Said {
                rule: &rule,
                kind,
                value: &request.firing.value,
                thread,
                stack: &stack,
                held,
                heap,
            };
            let reason = reason(&said, &profile);
            std::fs::write(dir.join("reason.txt"), reason)
        });
    match result {
        Ok(()) => lock(&core.state).stats.incidents += 1,
        Err(error) => say(&dir, &error),
    }
}

/// A heap snapshot into the incident's folder `dir`: `reason.txt`'s
/// `heap_snapshot` value (the file's name, `not available (needs .NET
/// 9)`, or why it failed). Taken at the heap rules' incidents only: it
/// suspends the runtime while it walks the heap (3.8 s for the 3 million
/// objects of the e2e program's gc-pause incident, debug build), and that
/// walk's CPU counts in the process's (it made the e2e run's cpu rule fire
/// before the CPU burst).
fn heap_snapshot(core: &Core, incidents: &Incidents, dir: &Path) -> String {
    if core.info.version() < 15 {
        return String::from("not available (needs .NET 9)");
    }
    let Some(snapshots) = incidents.snapshots.get() else {
        return String::from("not available (no class loads forwarded)");
    };
    let mut snapshots = lock(snapshots);
    let (loaded, statics) = &mut *snapshots;
    match snapshot_for_incident(&core.info, statics, loaded, dir, utc_stamp) {
        Ok((name, pause)) => format!(
            "{name} (runtime paused {:.1} ms)",
            pause.as_secs_f64() * 1e3
        ),
        Err(error) => format!("failed ({})", error.message()),
    }
}

fn say(dir: &Path, error: &io::Error) {
    use std::io::Write;
    let _ = io::stderr().write_all(
        format!("sampler: writing the incident {}: {error}\n", dir.display()).as_bytes(),
    );
}

/// The recorder's window as a profile, and the thread's name and stack
/// (innermost first) of the request's.
fn window(core: &Core, request: &Request) -> Option<(Profile, Option<String>, Vec<String>)> {
    let state = lock(&core.state);
    let recorder = state.recorder.as_ref()?;
    let now = state.start.elapsed();
    let (frames, trees) = recorder.window(now.as_secs(), &state.frames);
    let name = |slot: usize| {
        let t = &state.threads[slot];
        t.name
            .clone()
            .unwrap_or_else(|| format!("Thread {}", t.os_thread))
    };
    let threads = trees
        .into_iter()
        .map(|(slot, tree)| ThreadProfile {
            name: name(slot),
            os_thread: state.threads[slot].os_thread,
            tree,
            spans: Vec::new(),
        })
        .collect();
    let (thread, stack) = match &request.thread {
        Some((thread, stack)) => (
            state.by_id.get(thread).map(|&slot| name(slot)),
            stack
                .iter()
                .rev()
                .map(|&f| state.frames.name(f).to_string())
                .collect(),
        ),
        None => (None, Vec::new()),
    };
    let seconds = recorder.seconds().min(now.as_secs() + 1);
    let duration = Duration::from_secs(seconds);
    let stats = SamplerStats {
        allocation_source: state.stats.allocation_source,
        mode: state.stats.mode,
        ..SamplerStats::default()
    };
    let profile = Profile {
        frames,
        threads,
        started: SystemTime::now()
            .checked_sub(duration)
            .unwrap_or_else(SystemTime::now),
        duration,
        period_nanos: sample_interval(core.options.hz).as_nanos() as u64,
        stats,
    };
    Some((profile, thread, stack))
}

/// What `reason.txt` says besides the profile's window.
struct Said<'a> {
    rule: &'a str,
    kind: &'a str,
    value: &'a str,
    /// The thread that crossed the rule, and its stack (innermost first).
    thread: Option<String>,
    stack: &'a [String],
    /// How long the sampler's state was held to take the window.
    held: Duration,
    /// The heap snapshot's file, or why none.
    heap: String,
}

/// `reason.txt`: `key=value` lines, then the stack, innermost first.
fn reason(said: &Said<'_>, profile: &Profile) -> String {
    let mut text = format!(
        "rule={}\nkind={}\nvalue={}\nwindow_seconds={}\nthreads={}\nwindow_taken_us={}\nheap_snapshot={}\nthread={}\n",
        said.rule,
        said.kind,
        said.value,
        profile.duration.as_secs(),
        profile.threads.len(),
        said.held.as_micros(),
        said.heap,
        said.thread.as_deref().unwrap_or("(none: not one thread's)"),
    );
    if !said.stack.is_empty() {
        text.push_str("stack (innermost first):\n");
        for frame in said.stack {
            text.push_str(&format!("  {frame}\n"));
        }
    }
    text
}
