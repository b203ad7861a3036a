//! The public [`Sampler`]: its parts ([`Inner`]: the [`Core`] the modes and
//! the events share, the export pipeline, the EventPipe session, the memory
//! parts), the start of its thread in the mode asked for, the thread
//! callbacks, the stop, and the profiles it hands out.

use alloc::string::String;
use alloc::sync::Arc;
use alloc::vec::Vec;
use core::time::Duration;
use std::collections::HashMap;
use std::sync::{Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::Instant;

use super::clock::current_thread_cpu_nanos;
use super::contention::CONTENTION_KEYWORD;
use super::exceptions::RateSampler;
use super::export::{ExportStats, Exporter, Pipeline, FINISH_TIMEOUT};
use super::gc_pauses::GcPauses;
use super::heap_snapshot::LoadedClasses;
use super::incident::{self, Incidents};
use super::live_heap::{LiveHeap, LiveObject};
use super::memory::{gc_thread, live_threads};
use super::mode::{SamplingMode, SignalStats};
use super::options::{
    sample_interval, AllocationSource, OptionError, SamplerOptions, ALLOCATION_SAMPLING_KEYWORD,
    GC_KEYWORD, INFORMATIONAL, SAMPLE_TYPES, VERBOSE,
};
use super::record::Core;
use super::recorder::Recorder;
use super::signal;
use super::signal_loop;
use super::state::{span_trees, Profile, SamplerStats, State, ThreadProfile};
use super::suspend_runtime;
use super::thread_suspend;
use super::ticker::{random_seed, Host};
use super::triggers::TriggerKind;
use super::waits::WAIT_HANDLE_KEYWORD;
use crate::eventpipe::RUNTIME_PROVIDER;
use crate::facade::{EventPipeProvider, ProfilerInfo, Result};
use crate::profile::{Frames, StackTree};
use crate::profiling::{ThreadID, EVENTPIPE_PROVIDER, EVENTPIPE_SESSION};
use crate::support::sync::lock;
use crate::E_NOTIMPL;

/// The sampler's parts: the [`Core`] the modes and the events share (and
/// reached through it, `Deref`), and what only the sampler and the events
/// use (the session, the exporters, the rate samplers, the memory parts).
pub(super) struct Inner {
    /// What the modes and the events share.
    pub(super) core: Core,
    /// The allocation source resolved for this runtime (`None`: off).
    pub(super) source: Option<AllocationSource>,
    /// The sampler's EventPipe sessions: the runtime provider's events at
    /// one level, and the waits' (Verbose) in a session of their own.
    pub(super) session: Mutex<Vec<EVENTPIPE_SESSION>>,
    /// Providers seen in delivered events: whether each is the runtime's.
    pub(super) providers: Mutex<Vec<(EVENTPIPE_PROVIDER, bool)>>,
    /// The export thread, when there are exporters.
    pub(super) export: Option<Pipeline>,
    /// The exception sampler (`None`: off).
    pub(super) exceptions: Option<RateSampler>,
    /// The contention sampler (`None`: off or not available).
    pub(super) contentions: Option<RateSampler>,
    /// The wait sampler (`None`: off or not available).
    pub(super) waits: Option<RateSampler>,
    /// Whether the export thread and the exporters' threads have ended
    /// (set by `stop`; `true` without exporters).
    pub(super) threads_ended: Mutex<bool>,
    /// The GC pauses (`None`: off or not available).
    pub(super) gc: Option<GcPauses>,
    /// The live heap (`None`: off or not available).
    pub(super) live: Option<Arc<LiveHeap>>,
    /// The incident rules (`None`: none).
    pub(super) incidents: Option<Incidents>,
}

impl core::ops::Deref for Inner {
    type Target = Core;

    fn deref(&self) -> &Core {
        &self.core
    }
}

impl Host for Inner {
    fn core(&self) -> &Core {
        &self.core
    }

    /// Ends the current period at `now` and hands its profile to the
    /// export thread (nothing without exporters). The period's trees are
    /// moved out and rebuilt over a frame table of their own, so that the
    /// profile names only what the period holds.
    fn cut_period(&self, now: Instant) {
        let Some(export) = &self.export else {
            return;
        };
        // Before `state`: the snapshot may wait for a sweep, which calls the
        // runtime; nothing that waits for the runtime holds `state`.
        let live = self.live_snapshot();
        let mut state = lock(&self.state);
        let state = &mut *state;
        let mut frames = Frames::new();
        let mut threads = Vec::new();
        for t in &mut state.threads {
            if t.period.len() <= 1 {
                continue;
            }
            let period = core::mem::replace(&mut t.period, StackTree::new(SAMPLE_TYPES.len()));
            let mut tree = StackTree::new(SAMPLE_TYPES.len());
            tree.merge(&mut frames, &period, &state.frames);
            let spans = core::mem::take(&mut t.period_spans);
            threads.push(ThreadProfile {
                name: t
                    .name
                    .clone()
                    .unwrap_or_else(|| alloc::format!("Thread {}", t.os_thread)),
                os_thread: t.os_thread,
                tree,
                spans: span_trees(&spans, Some((&mut frames, &state.frames))),
            });
        }
        if let Some(gc) = &self.gc {
            threads.extend(gc_thread(&mut frames, &gc.take_period()));
        }
        if let Some(live) = &live {
            threads.extend(live_threads(&mut frames, &state.frames, live));
        }
        let started = state.started + (state.period_start - state.start);
        let duration = now.saturating_duration_since(state.period_start);
        state.period_start = now;
        let stats = SamplerStats {
            allocation_source: state.stats.allocation_source,
            ..SamplerStats::default()
        };
        export.hand(Profile {
            frames,
            threads,
            started,
            duration,
            period_nanos: sample_interval(self.options.hz).as_nanos() as u64,
            stats,
        });
    }
}

/// A sampling profiler: a thread of its own that, `hz` times a second,
/// suspends the runtime, walks every managed thread's stack, resumes it,
/// and records each stack with the wall time since the last sample and the
/// CPU time the thread used meanwhile; and an allocation sampler fed by
/// the runtime's `GCAllocationTick` events
/// ([`Sampler::event_pipe_event_delivered`]) or by
/// [`Sampler::object_allocated`] ([`AllocationSource`]).
///
/// Use: set [`SamplerOptions::event_masks`] in `initialize`, then
/// [`Sampler::start`]; forward `thread_name_changed`, `thread_destroyed`,
/// `object_allocated` and `event_pipe_event_delivered`; in `shutdown`,
/// [`Sampler::stop`] and write the [`Profile`]. The `sampler` example does
/// exactly that.
pub struct Sampler {
    pub(super) inner: Arc<Inner>,
    thread: Mutex<Option<JoinHandle<()>>>,
    /// The incidents' thread, with rules.
    incident_thread: Mutex<Option<JoinHandle<()>>>,
}

impl core::fmt::Debug for Sampler {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Sampler")
            .field("options", &self.inner.options)
            .finish_non_exhaustive()
    }
}

impl Sampler {
    /// Everything but the sampler thread: the options checked, the export
    /// pipeline, the EventPipe session, signal mode's handler.
    pub(super) fn prepare(
        info: &ProfilerInfo,
        options: SamplerOptions,
        exporters: Vec<alloc::boxed::Box<dyn Exporter>>,
    ) -> Result<Sampler> {
        options.validate()?;
        if !options.mode.is_available(info) {
            return Err(E_NOTIMPL.into());
        }
        let source = options
            .allocation_mean_bytes
            .and_then(|_| options.allocation_source.resolve(info));
        let export = match exporters.is_empty() {
            true => None,
            false => Some(Pipeline::start(exporters).ok_or(crate::E_FAIL)?),
        };
        // Stopped if the start fails after it (the pipeline, `export`,
        // closes itself when dropped).
        let mut session = SessionGuard {
            info,
            sessions: Vec::new(),
        };
        let contention = options.contentions_per_second.is_some() && info.version() >= 12;
        // The wait events are .NET 9's (and Verbose, unlike the others).
        let waits = options.waits_per_second.is_some()
            && info.version() >= 12
            && info.runtime_information().is_ok_and(|r| r.major >= 9);
        let gc_pauses = options.gc_pauses && info.version() >= 12;
        check_rules(&options, info)?;
        let live_heap = options
            .heap_objects
            .filter(|_| source.is_some() && info.version() >= 13);
        let (mut keywords, mut level) = (0, INFORMATIONAL);
        if let Some(source) = source {
            if !source.is_available(info) {
                return Err(E_NOTIMPL.into());
            }
        }
        match source {
            Some(AllocationSource::AllocationTick) => (keywords, level) = (GC_KEYWORD, VERBOSE),
            Some(AllocationSource::AllocationSampled) => {
                (keywords, level) = (ALLOCATION_SAMPLING_KEYWORD, INFORMATIONAL);
            }
            _ => {}
        }
        if contention {
            keywords |= CONTENTION_KEYWORD;
        }
        let heap_rules = info.version() >= 12 && options.triggers.iter().any(is_heap_rule);
        if gc_pauses || live_heap.is_some() || heap_rules {
            // GCStart, GCEnd, GCSuspendEEBegin, GCRestartEEEnd, and
            // GCHeapStats for the heap rules: GC keyword, Informational (a
            // lower level than the ticks' Verbose).
            keywords |= GC_KEYWORD;
            level = level.max(INFORMATIONAL);
        }
        if keywords != 0 {
            session.sessions.push(info.event_pipe_start_session(
                &[EventPipeProvider {
                    name: RUNTIME_PROVIDER,
                    keywords,
                    level,
                    filter: None,
                }],
                false,
            )?);
        }
        if waits {
            // A session of their own: a session's level is one per provider
            // (the provider named twice in one session: measured on 10.0.15,
            // only the first entry counts), and Verbose for the other
            // keywords would turn on the GC's verbose events.
            session.sessions.push(info.event_pipe_start_session(
                &[EventPipeProvider {
                    name: RUNTIME_PROVIDER,
                    keywords: WAIT_HANDLE_KEYWORD,
                    level: VERBOSE,
                    filter: None,
                }],
                false,
            )?);
        }
        if options.mode == SamplingMode::Signal {
            signal::track_spans(options.spans);
        }
        if options.mode == SamplingMode::Signal && !signal::start(options.hz) {
            // Another signal-mode sampler runs in this process.
            return Err(crate::E_FAIL.into());
        }
        let stats = SamplerStats {
            allocation_source: source,
            contention_available: contention,
            waits_available: waits,
            gc_pauses_available: gc_pauses,
            live_heap_available: live_heap.is_some(),
            live_heap_unavailable: match options.heap_objects {
                None => None,
                Some(_) if info.version() < 13 => Some("needs .NET 7"),
                Some(_) if source.is_none() => Some("no allocation samples"),
                Some(_) => None,
            },
            mode: options.mode,
            ..SamplerStats::default()
        };
        let seed = random_seed();
        let mut state = State::new(Frames::new(), stats);
        let incidents = Incidents::new(&options);
        if incidents.is_some() {
            let recorder = Recorder::new(options.recorder_seconds);
            state.stats.recorder_seconds = recorder.seconds();
            state.stats.recorder_bound_bytes = recorder.memory_bound() as u64;
            state.recorder = Some(recorder);
        }
        let inner = Arc::new(Inner {
            core: Core {
                info: info.clone(),
                options: options.clone(),
                periods: export.is_some(),
                stop: Mutex::new(false),
                wake: Condvar::new(),
                state: Mutex::new(state),
                names: Mutex::new(HashMap::new()),
                walking: Mutex::new(Some(Vec::new())),
            },
            source,
            session: Mutex::new(session.take()),
            providers: Mutex::new(Vec::new()),
            export,
            exceptions: options
                .exceptions_per_second
                .map(|limit| RateSampler::new(limit, seed)),
            contentions: options
                .contentions_per_second
                .filter(|_| contention)
                .map(|limit| RateSampler::new(limit, seed ^ 0x5DEE_CE66)),
            waits: options
                .waits_per_second
                .filter(|_| waits)
                .map(|limit| RateSampler::new(limit, seed ^ 0x2545_F491)),
            threads_ended: Mutex::new(true),
            gc: gc_pauses.then(GcPauses::default),
            live: live_heap.map(|limit| Arc::new(LiveHeap::new(limit))),
            incidents,
        });
        Ok(Sampler {
            inner,
            thread: Mutex::new(None),
            incident_thread: Mutex::new(None),
        })
    }

    /// Starts the sampler thread of a [`prepare`](Self::prepare)d sampler
    /// (and the live heap's sweeper).
    pub(super) fn launch(&self) -> Result<()> {
        let inner = &self.inner;
        if let Some(live) = &inner.live {
            // Without its thread the table fills up and stays: still bounded.
            let _ = live.start(&inner.info);
        }
        let worker = Arc::clone(inner);
        let thread = std::thread::Builder::new()
            .name(String::from("corprof-sampler"))
            .spawn(move || run(&worker));
        let Ok(thread) = thread else {
            if let Some(live) = &inner.live {
                live.request_stop();
            }
            inner.stop_session();
            if let Some(export) = &inner.export {
                export.close();
            }
            if inner.options.mode == SamplingMode::Signal {
                signal::stop(&mut SignalStats::default());
            }
            return Err(crate::E_FAIL.into());
        };
        *lock(&self.thread) = Some(thread);
        if inner.incidents.is_some() {
            let worker = Arc::clone(inner);
            // Without its thread no incident is written: said, not fatal.
            let thread = std::thread::Builder::new()
                .name(String::from("corprof-incidents"))
                .spawn(move || {
                    if let Some(incidents) = &worker.incidents {
                        incident::run(&worker.core, incidents);
                    }
                });
            *lock(&self.incident_thread) = thread.ok();
        }
        if inner.options.mode == SamplingMode::Signal {
            // The calling thread (`initialize`'s) may be managed already.
            if let Ok(thread) = inner.info.current_thread() {
                if let Ok(os) = inner.info.os_thread_id(thread) {
                    signal::register_current(thread.as_raw(), os);
                }
            }
        }
        Ok(())
    }

    /// Whether its incidents take heap snapshots (a gc-heap or
    /// heap-growth rule, .NET 9 and later).
    pub(super) fn snapshots_heap_at_incidents(&self) -> bool {
        incident_snapshots(&self.inner.options, &self.inner.info)
    }

    /// Takes a heap snapshot at each heap rule's incident from now on
    /// (.NET 9 and later; nothing without rules), the statics read from the
    /// classes of `loaded`, which the caller keeps up to date.
    pub(super) fn snapshot_heap_at_incidents(&self, loaded: LoadedClasses) {
        if let Some(incidents) = &self.inner.incidents {
            incidents.snapshot_heap(loaded);
        }
    }

    /// The options it samples with.
    pub fn options(&self) -> &SamplerOptions {
        &self.inner.options
    }

    /// Names a thread (forward `Profiler::thread_name_changed`).
    pub fn thread_name_changed(&self, thread: ThreadID, name: &str) {
        lock(&self.inner.state).thread(thread).name = Some(String::from(name));
    }

    /// Marks a thread gone (forward `Profiler::thread_destroyed`): its
    /// samples are kept, and a new thread reusing its `ThreadID` gets a
    /// profile of its own.
    ///
    /// In [`SamplingMode::ThreadSuspend`] forwarding it is required (the
    /// contract of [`SamplerBuilder::start_forwarding_thread_destroyed`](crate::sampling::SamplerBuilder::start_forwarding_thread_destroyed),
    /// the only start of that mode): it waits while the sampler walks that
    /// thread, and the sampler walks no thread destroyed (the runtime frees
    /// its `Thread` after the callback returns, and `DoStackSnapshot` of a
    /// destroyed thread ends the process).
    pub fn thread_destroyed(&self, thread: ThreadID) {
        match self.inner.options.mode {
            // The sampler thread ends the slot once it has recorded the
            // samples the thread's handler already wrote (a sample recorded
            // after that is dropped, not given a new slot).
            SamplingMode::Signal => {
                if signal::deregister(thread.as_raw()) {
                    return;
                }
            }
            SamplingMode::ThreadSuspend => {
                if let Some(destroyed) = lock(&self.inner.walking).as_mut() {
                    destroyed.push(thread);
                }
            }
            SamplingMode::SuspendRuntime => {}
        }
        lock(&self.inner.state).thread_ended(thread);
    }

    /// [`SamplingMode::Signal`]: registers a new thread for sampling when
    /// called on it (forward `Profiler::thread_created`; CoreCLR calls it
    /// on the new thread for threads that enter the runtime from outside).
    pub fn thread_created(&self, thread: ThreadID) {
        if self.inner.options.mode == SamplingMode::Signal {
            if let Ok(os) = self.inner.info.os_thread_id(thread) {
                signal::register_current(thread.as_raw(), os);
            }
        }
    }

    /// [`SamplingMode::Signal`]: registers a thread for sampling when
    /// called on it (forward `Profiler::thread_assigned_to_os_thread`;
    /// CoreCLR calls it on the thread as it starts running).
    pub fn thread_assigned_to_os_thread(&self, thread: ThreadID, os_thread: u32) {
        if self.inner.options.mode == SamplingMode::Signal {
            signal::register_current(thread.as_raw(), os_thread);
        }
    }

    /// Stops the sampler thread and waits for it, and stops the EventPipe
    /// session (idempotent); call it in `shutdown`, before the runtime goes
    /// away. Returns what was sampled.
    pub fn stop(&self) -> Profile {
        self.inner.stop_session();
        *lock(&self.inner.stop) = true;
        self.inner.wake.notify_all();
        if let Some(thread) = lock(&self.incident_thread).take() {
            let _ = thread.join();
        }
        if let Some(thread) = lock(&self.thread).take() {
            let _ = thread.join();
            // The last, partial period, then what the exporters still hold.
            self.inner.cut_period(Instant::now());
            if let Some(export) = &self.inner.export {
                let ended = export.finish(FINISH_TIMEOUT);
                *lock(&self.inner.threads_ended) = ended;
            }
        }
        let profile = {
            let live = self.inner.live_snapshot();
            let mut state = lock(&self.inner.state);
            let stopped = *state.stopped.get_or_insert_with(Instant::now);
            let duration = stopped - state.start;
            self.inner.profile(&state, duration, live)
        };
        if let Some(live) = &self.inner.live {
            // Its handles go back before the runtime goes away.
            live.stop(&self.inner.info);
        }
        profile
    }

    /// Whether every thread the sampler started (sampling, export, and the
    /// exporters' own) has ended and no `SIGPROF` handler of the sampler's
    /// is installed ([`SamplingMode::Signal`]: the stop puts the previous
    /// one back): `true` after [`stop`](Self::stop) unless an exporter was
    /// left stuck or the handler had to stay (another signal-mode sampler
    /// runs, or a handler installed later chains to it). What a profiler
    /// that detaches must know: see `ProfilerInfo::request_profiler_detach`.
    pub fn threads_ended(&self) -> bool {
        lock(&self.thread).is_none()
            && lock(&self.incident_thread).is_none()
            && *lock(&self.inner.threads_ended)
            && self
                .inner
                .live
                .as_ref()
                .is_none_or(|live| live.thread_ended())
            && !signal::handler_installed()
    }

    /// What the exporters did so far (all zero without exporters); after
    /// [`stop`](Self::stop), in full.
    pub fn export_stats(&self) -> ExportStats {
        self.inner
            .export
            .as_ref()
            .map_or_else(ExportStats::default, Pipeline::stats)
    }

    /// What was sampled so far (the sampler keeps running).
    pub fn profile(&self) -> Profile {
        let live = self.inner.live_snapshot();
        let state = lock(&self.inner.state);
        let duration = state.start.elapsed();
        self.inner.profile(&state, duration, live)
    }
}

impl Drop for Sampler {
    fn drop(&mut self) {
        if let Some(live) = &self.inner.live {
            live.request_stop();
        }
        *lock(&self.inner.stop) = true;
        self.inner.wake.notify_all();
        if let Some(export) = &self.inner.export {
            export.close();
        }
    }
}

/// The sampler's EventPipe session while `start_exporting` runs: stopped
/// when dropped, unless [`taken`](SessionGuard::take) by the sampler.
struct SessionGuard<'a> {
    info: &'a ProfilerInfo,
    sessions: Vec<EVENTPIPE_SESSION>,
}

impl SessionGuard<'_> {
    fn take(&mut self) -> Vec<EVENTPIPE_SESSION> {
        core::mem::take(&mut self.sessions)
    }
}

impl Drop for SessionGuard<'_> {
    fn drop(&mut self) {
        for session in self.sessions.drain(..) {
            // Nothing to do about a failure on an error path but go on.
            let _ = self.info.event_pipe_stop_session(session);
        }
    }
}

impl Inner {
    /// Stops the EventPipe sessions, if there are any (once).
    fn stop_session(&self) {
        let sessions = core::mem::take(&mut *lock(&self.session));
        for session in sessions {
            // Nothing to do about a failure at shutdown but go on.
            let _ = self.info.event_pipe_stop_session(session);
        }
    }

    /// The live heap's objects now (`None` without a live heap); taken
    /// with no lock of the sampler's held.
    fn live_snapshot(&self) -> Option<Vec<LiveObject>> {
        self.live.as_ref().map(|live| live.snapshot())
    }

    fn profile(&self, state: &State, duration: Duration, live: Option<Vec<LiveObject>>) -> Profile {
        let free: std::collections::HashSet<usize> = state.free.iter().copied().collect();
        let mut frames = state.frames.clone();
        let mut stats = state.stats.clone();
        if let Some(recorder) = &state.recorder {
            stats.recorder_dropped = recorder.dropped;
            stats.recorder_nodes = recorder.nodes() as u64;
        }
        if let Some(incidents) = &self.incidents {
            stats.gc_heap = incidents.heap_stats();
        }
        let mut gc_threads = Vec::new();
        if let Some(gc) = &self.gc {
            gc_threads.extend(gc_thread(&mut frames, &gc.run()));
            stats.gc_pauses = gc.stats();
        }
        if let (Some(heap), Some(live)) = (&self.live, &live) {
            gc_threads.extend(live_threads(&mut frames, &state.frames, live));
            stats.live_heap = heap.stats();
        }
        let mut profile = Profile {
            frames,
            threads: state
                .threads
                .iter()
                .enumerate()
                .filter(|(index, _)| !free.contains(index))
                .map(|(_, t)| ThreadProfile {
                    name: t
                        .name
                        .clone()
                        .unwrap_or_else(|| alloc::format!("Thread {}", t.os_thread)),
                    os_thread: t.os_thread,
                    tree: t.tree.clone(),
                    spans: span_trees(&t.spans, None),
                })
                .collect(),
            started: state.started,
            duration,
            period_nanos: sample_interval(self.options.hz).as_nanos() as u64,
            stats,
        };
        profile.threads.extend(gc_threads);
        profile
    }
}

/// Whether `options`' incidents will take heap snapshots here (a gc-heap
/// or heap-growth rule, .NET 9 and later): the class loads are then
/// monitored.
pub(super) fn incident_snapshots(options: &SamplerOptions, info: &ProfilerInfo) -> bool {
    info.version() >= 15 && options.triggers.iter().any(is_heap_rule)
}

/// Whether a rule watches the GC heap (`gc-heap`, `heap-growth`).
fn is_heap_rule(rule: &super::triggers::Trigger) -> bool {
    matches!(
        rule.kind,
        TriggerKind::GcHeap { .. } | TriggerKind::HeapGrowth { .. }
    )
}

/// Whether every rule of `options` can fire on this runtime: a gc-pause
/// rule needs GC pauses measured (`gc_pauses` on, .NET 5 and later), a
/// gc-heap or heap-growth rule the runtime's GC events (.NET 5 and later),
/// a cpu rule Linux; one that never could is refused, named, not armed and
/// silent.
pub(super) fn check_rules(
    options: &SamplerOptions,
    info: &ProfilerInfo,
) -> core::result::Result<(), OptionError> {
    let gc_pauses = options.gc_pauses && info.version() >= 12;
    if let Some(rule) = options
        .triggers
        .iter()
        .find(|r| is_heap_rule(r))
        .filter(|_| info.version() < 12)
    {
        return Err(OptionError {
            field: "triggers",
            value: alloc::format!("{:?}", rule.text),
            expected: "gc-heap and heap-growth rules with in-process EventPipe (.NET 5 or later)",
        });
    }
    match options
        .triggers
        .iter()
        .find(|r| matches!(r.kind, TriggerKind::GcPause { .. }))
    {
        Some(rule) if !gc_pauses => {
            return Err(OptionError {
                field: "triggers",
                value: alloc::format!("{:?}", rule.text),
                expected: "gc-pause rules with GC pauses measured (gc_pauses on, .NET 5 or later)",
            })
        }
        _ => {}
    }
    match options
        .triggers
        .iter()
        .find(|r| matches!(r.kind, TriggerKind::Cpu { .. }))
    {
        // The process's CPU clock is read on Linux only (`clock.rs`).
        Some(rule) if !cfg!(target_os = "linux") => Err(OptionError {
            field: "triggers",
            value: alloc::format!("{:?}", rule.text),
            expected: "cpu rules on Linux (the process's CPU clock is read there only)",
        }),
        _ => Ok(()),
    }
}

/// The sampler thread; records its own CPU time when it ends.
pub(super) fn run(inner: &Inner) {
    match inner.options.mode {
        SamplingMode::Signal => signal_loop::run_signal(inner),
        SamplingMode::ThreadSuspend => thread_suspend::run(inner),
        SamplingMode::SuspendRuntime => suspend_runtime::run_loop(inner),
    }
    if let Some(nanos) = current_thread_cpu_nanos() {
        lock(&inner.state).stats.sampler_cpu_nanos = nanos;
    }
}
