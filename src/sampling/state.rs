//! What the sampler holds while it runs and hands out: each thread's
//! trees ([`Tracked`], by `ThreadID` in [`State`], the ended threads
//! gathered by name), the statistics ([`SamplerStats`]) and the
//! [`Profile`].

use alloc::string::String;
use alloc::vec::Vec;
use core::time::Duration;
use std::collections::{BTreeMap, HashMap};
use std::time::{Instant, SystemTime};

use super::gc_heap::GcHeapStats;
use super::gc_pauses::GcPauseStats;
use super::live_heap::LiveHeapStats;
use super::mode::{SamplingMode, SignalStats, ThreadSuspendStats};
use super::options::{AllocationSource, NATIVE_FRAME, NO_MANAGED_FRAMES, SAMPLE_TYPES};
use super::recorder::Recorder;
use crate::profile::{FrameId, Frames, StackTree};
use crate::profiling::ThreadID;

/// Most pause durations kept for the statistics (about 3 hours at 99 Hz);
/// later pauses are counted but not kept.
pub(super) const MAX_PAUSES: usize = 1 << 20;

/// One thread's samples.
#[derive(Clone, Debug)]
pub struct ThreadProfile {
    /// The managed thread's name, or `Thread <OS id>` when it has none.
    pub name: String,
    /// The OS thread it ran on when last sampled.
    pub os_thread: u32,
    /// Its stacks, with [`CPU`](crate::sampling::CPU), [`WALL`](crate::sampling::WALL), [`ALLOC_OBJECTS`](crate::sampling::ALLOC_OBJECTS) and
    /// [`ALLOC_BYTES`](crate::sampling::ALLOC_BYTES) values.
    pub tree: StackTree,
    /// The CPU and wall samples of `tree` taken while a span was current
    /// on the thread ([`SamplerOptions::spans`](crate::sampling::SamplerOptions::spans)),
    /// by span: each also counted in `tree`. Ordered by ids.
    pub spans: Vec<SpanTree>,
}

/// The samples a thread took inside one span (an `Activity` current on it).
#[derive(Clone, Debug)]
pub struct SpanTree {
    /// The W3C trace id's 16 bytes, in the order of its hex form.
    pub trace_id: [u8; 16],
    /// The span id's 8 bytes.
    pub span_id: [u8; 8],
    /// Its stacks, as [`ThreadProfile::tree`]'s.
    pub tree: StackTree,
}

impl SpanTree {
    /// The trace id in W3C form: 32 lowercase hex digits.
    pub fn trace_hex(&self) -> String {
        hex(&self.trace_id)
    }

    /// The span id in W3C form: 16 lowercase hex digits.
    pub fn span_hex(&self) -> String {
        hex(&self.span_id)
    }
}

fn hex(bytes: &[u8]) -> String {
    use core::fmt::Write;
    let mut text = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        let _ = write!(text, "{b:02x}");
    }
    text
}

/// A W3C trace id (16 bytes) and span id (8 bytes), in the order of their
/// hex form (`ActivityTraceId.CopyTo`, `ActivitySpanId.CopyTo`); an
/// all-zero trace id is none (W3C Trace Context: an all-zero trace id is
/// invalid).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(super) struct SpanIds {
    pub(super) trace: [u8; 16],
    pub(super) span: [u8; 8],
}

impl SpanIds {
    pub(super) const NONE: SpanIds = SpanIds {
        trace: [0; 16],
        span: [0; 8],
    };

    pub(super) fn absent(&self) -> bool {
        self.trace == [0; 16]
    }
}

/// The most spans a thread's run-long or period trees keep apart; the
/// samples of further spans are counted in the thread's tree only.
pub(super) const MAX_SPANS: usize = 4096;

/// `spans` as [`SpanTree`]s, their frames merged into `frames` from
/// `from`'s (or cloned as they are when `from` is `None`: the same
/// frames).
pub(super) fn span_trees(
    spans: &BTreeMap<SpanIds, StackTree>,
    mut frames: Option<(&mut Frames, &Frames)>,
) -> Vec<SpanTree> {
    spans
        .iter()
        .map(|(ids, tree)| SpanTree {
            trace_id: ids.trace,
            span_id: ids.span,
            tree: match frames.as_mut() {
                None => tree.clone(),
                Some((to, from)) => {
                    let mut merged = StackTree::new(SAMPLE_TYPES.len());
                    merged.merge(to, tree, from);
                    merged
                }
            },
        })
        .collect()
}

/// One suspension of the sampler ([`SamplerStats::pauses`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Pause {
    /// From suspend to resume, in nanoseconds.
    pub nanos: u64,
    /// Threads walked in it.
    pub threads: u32,
}

impl Pause {
    /// A pause of `nanos` in which `threads` were walked.
    pub fn new(nanos: u64, threads: u32) -> Pause {
        Pause { nanos, threads }
    }
}

/// What the sampler did.
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct SamplerStats {
    /// Successful suspensions (one stack sample of every thread each).
    pub suspensions: u64,
    /// Suspensions the runtime refused (the sample is skipped).
    pub failed_suspensions: u64,
    /// Threads walked.
    pub walks: u64,
    /// Walks that failed (threads with no managed frames, or not walkable
    /// at that moment): counted, recorded as [`NO_MANAGED_FRAMES`].
    pub failed_walks: u64,
    /// Frames recorded by the walks.
    pub frames: u64,
    /// Allocations sampled.
    pub allocation_samples: u64,
    /// Where they came from (`None` when allocation sampling was off).
    pub allocation_source: Option<AllocationSource>,
    /// `GCAllocationTick` events received
    /// ([`AllocationSource::AllocationTick`]).
    pub allocation_ticks: u64,
    /// Of those, the ones that could not be decoded (counted, skipped).
    pub undecoded_ticks: u64,
    /// `AllocationSampled` events received
    /// ([`AllocationSource::AllocationSampled`]).
    pub allocation_sampled_events: u64,
    /// Of those, the ones that could not be decoded (counted, skipped).
    pub undecoded_sampled_events: u64,
    /// Exceptions thrown ([`Sampler::exception_thrown`](crate::sampling::Sampler::exception_thrown)).
    pub exceptions_thrown: u64,
    /// Of those, the ones recorded (all up to the rate limit, a sample
    /// beyond it).
    pub exceptions_recorded: u64,
    /// Whether lock contention is profiled: asked for, and the runtime has
    /// in-process EventPipe (.NET 5 and later).
    pub contention_available: bool,
    /// Contentions that ended (`ContentionStop` events).
    pub contentions: u64,
    /// Of those, the ones recorded (all up to the rate limit, a sample
    /// beyond it).
    pub contentions_recorded: u64,
    /// Contention events that could not be decoded (counted, skipped).
    pub undecoded_contentions: u64,
    /// Whether blocking waits are profiled: asked for
    /// ([`SamplerOptions::waits_per_second`](crate::sampling::SamplerOptions::waits_per_second)),
    /// and the runtime writes wait events (.NET 9 and later).
    pub waits_available: bool,
    /// Waits that ended (`WaitHandleWaitStop` events after a start).
    pub waits: u64,
    /// Of those, the ones recorded (all up to the rate limit, a sample
    /// beyond it).
    pub waits_recorded: u64,
    /// CPU time of the runtime's GC threads that no mode samples (server
    /// GC's and background GC's native threads; Linux), in nanoseconds:
    /// the CPU profile holds it under `[GC thread]`.
    pub gc_threads_cpu_nanos: u64,
    /// Wait events that could not be decoded (counted, skipped).
    pub undecoded_waits: u64,
    /// Whether GC pauses are measured: asked for
    /// ([`SamplerOptions::gc_pauses`](crate::sampling::SamplerOptions::gc_pauses)), and the runtime has in-process
    /// EventPipe (.NET 5 and later).
    pub gc_pauses_available: bool,
    /// The GC pauses measured (count, total, longest, by kind).
    pub gc_pauses: GcPauseStats,
    /// Whether the live heap is tracked: asked for
    /// ([`SamplerOptions::heap_objects`](crate::sampling::SamplerOptions::heap_objects)) with allocation sampling, and the
    /// runtime has `ICorProfilerInfo13` (.NET 7 and later).
    pub live_heap_available: bool,
    /// What the live heap did (objects tracked, skipped, collected).
    pub live_heap: LiveHeapStats,
    /// Why the live heap, asked for, is not tracked: `needs .NET 7` (no
    /// `ICorProfilerInfo13`) or `no allocation samples`; `None` when it is
    /// tracked or was not asked for.
    pub live_heap_unavailable: Option<&'static str>,
    /// CPU time the sampler thread itself used, in nanoseconds (0 where the
    /// platform has no per-thread clock): walks, naming, recording.
    pub sampler_cpu_nanos: u64,
    /// Each suspension's pause and the threads walked in it; at most
    /// about a million kept.
    pub pauses: Vec<Pause>,
    /// The mode it sampled in.
    pub mode: SamplingMode,
    /// [`SamplingMode::Signal`]: signals, samples, cut walks, timers.
    pub signal: SignalStats,
    /// Incidents written (`SamplerOptions::triggers`).
    pub incidents: u64,
    /// The flight recorder's seconds (0: no recorder, no rule).
    pub recorder_seconds: u64,
    /// The most bytes the flight recorder's ring takes.
    pub recorder_bound_bytes: u64,
    /// Samples the recorder left out (a second's slice full).
    pub recorder_dropped: u64,
    /// The tree nodes the recorder held when the profile was taken.
    pub recorder_nodes: u64,
    /// The GC heap after each GC, as the heap rules saw it (`gc-heap`,
    /// `heap-growth`; all zero without such a rule).
    pub gc_heap: GcHeapStats,
    /// [`SamplingMode::ThreadSuspend`]: threads suspended, refused walks,
    /// samples per thread.
    pub thread_suspend: ThreadSuspendStats,
}

impl SamplerStats {
    /// The `q` quantile (0.0 to 1.0) of the pauses in nanoseconds (0 when
    /// there were none).
    pub fn pause_quantile(&self, q: f64) -> u64 {
        let mut pauses: Vec<u64> = self.pauses.iter().map(|p| p.nanos).collect();
        if pauses.is_empty() {
            return 0;
        }
        pauses.sort_unstable();
        let rank = (q.clamp(0.0, 1.0) * (pauses.len() - 1) as f64).round() as usize;
        pauses[rank]
    }
}

/// Everything sampled, for the writers.
#[derive(Clone, Debug)]
pub struct Profile {
    /// The frame names every tree uses.
    pub frames: Frames,
    /// One profile per managed thread sampled, in the order first seen.
    pub threads: Vec<ThreadProfile>,
    /// When sampling started.
    pub started: SystemTime,
    /// How long it ran.
    pub duration: Duration,
    /// The sampling period in nanoseconds.
    pub period_nanos: u64,
    /// What the sampler did.
    pub stats: SamplerStats,
}

impl Profile {
    /// Every thread's tree merged into one (frames shared).
    pub fn merged(&self) -> StackTree {
        let mut frames = self.frames.clone();
        let mut all = StackTree::new(SAMPLE_TYPES.len());
        for thread in &self.threads {
            all.merge(&mut frames, &thread.tree, &self.frames);
        }
        debug_assert_eq!(frames.len(), self.frames.len());
        all
    }
}

/// The name under which the ended threads without a name are gathered.
pub const ENDED_WITHOUT_NAME: &str = "ended threads without a name";

/// A thread as the sampler tracks it.
pub(super) struct Tracked {
    pub(super) name: Option<String>,
    pub(super) os_thread: u32,
    /// Its CPU clock at the last sample.
    pub(super) last_cpu: Option<u64>,
    pub(super) tree: StackTree,
    /// The current period's samples (only while exporting).
    pub(super) period: StackTree,
    /// The samples of `tree` and of `period` taken inside spans, by span
    /// (at most [`MAX_SPANS`] each).
    pub(super) spans: BTreeMap<SpanIds, StackTree>,
    pub(super) period_spans: BTreeMap<SpanIds, StackTree>,
    /// [`SamplingMode::Signal`]: its CPU and wall samples
    /// ([`SignalStats::per_thread`]).
    pub(super) signal_samples: (u64, u64),
}

impl Tracked {
    pub(super) fn new() -> Tracked {
        Tracked {
            name: None,
            os_thread: 0,
            last_cpu: None,
            tree: StackTree::new(SAMPLE_TYPES.len()),
            period: StackTree::new(SAMPLE_TYPES.len()),
            spans: BTreeMap::new(),
            period_spans: BTreeMap::new(),
            signal_samples: (0, 0),
        }
    }

    /// Whether it holds no sample.
    fn is_empty(&self) -> bool {
        self.tree.len() <= 1 && self.period.len() <= 1
    }

    /// Adds a sample to the run's tree and, `periods` set, the period's;
    /// one taken inside a span to that span's trees too.
    pub(super) fn add(&mut self, stack: &[FrameId], values: &[u64], periods: bool, span: SpanIds) {
        self.tree.add(stack.iter().copied(), values);
        if periods {
            self.period.add(stack.iter().copied(), values);
        }
        if span.absent() {
            return;
        }
        let mut maps = [Some(&mut self.spans), None];
        if periods {
            maps[1] = Some(&mut self.period_spans);
        }
        for map in maps.into_iter().flatten() {
            if map.len() >= MAX_SPANS && !map.contains_key(&span) {
                continue;
            }
            map.entry(span)
                .or_insert_with(|| StackTree::new(SAMPLE_TYPES.len()))
                .add(stack.iter().copied(), values);
        }
    }
}

pub(super) struct State {
    pub(super) frames: Frames,
    pub(super) native: FrameId,
    pub(super) no_managed: FrameId,
    pub(super) threads: Vec<Tracked>,
    pub(super) by_id: HashMap<ThreadID, usize>,
    /// Slots of `threads` free for the next new thread.
    pub(super) free: Vec<usize>,
    /// The slot that gathers the ended threads of a name (`None`: of no
    /// name).
    pub(super) ended: HashMap<Option<String>, usize>,
    pub(super) stats: SamplerStats,
    pub(super) started: SystemTime,
    pub(super) start: Instant,
    pub(super) stopped: Option<Instant>,
    /// When the current period started.
    pub(super) period_start: Instant,
    /// The flight recorder (`None`: no incident rule).
    pub(super) recorder: Option<Recorder>,
    /// The slots of the runtime's GC threads (`gc_threads.rs`) by OS
    /// thread ID: threads of their own, never in `by_id` (the runtime
    /// gives them no `ThreadID`) and never ended.
    pub(super) gc_slots: HashMap<u32, usize>,
}

impl State {
    /// No thread yet; `frames` holds [`NATIVE_FRAME`] and
    /// [`NO_MANAGED_FRAMES`] (interned here when not).
    pub(super) fn new(mut frames: Frames, stats: SamplerStats) -> State {
        let (native, no_managed) = (
            frames.intern(NATIVE_FRAME),
            frames.intern(NO_MANAGED_FRAMES),
        );
        State {
            frames,
            native,
            no_managed,
            threads: Vec::new(),
            by_id: HashMap::new(),
            free: Vec::new(),
            ended: HashMap::new(),
            stats,
            started: SystemTime::now(),
            start: Instant::now(),
            stopped: None,
            period_start: Instant::now(),
            recorder: None,
            gc_slots: HashMap::new(),
        }
    }

    pub(super) fn thread(&mut self, thread: ThreadID) -> &mut Tracked {
        let index = self.slot(thread);
        &mut self.threads[index]
    }

    /// The slot of `thread` in `threads`, taken when new.
    pub(super) fn slot(&mut self, thread: ThreadID) -> usize {
        match self.by_id.get(&thread) {
            Some(&index) => index,
            None => {
                let index = match self.free.pop() {
                    Some(index) => index,
                    None => {
                        self.threads.push(Tracked::new());
                        self.threads.len() - 1
                    }
                };
                self.by_id.insert(thread, index);
                index
            }
        }
    }

    /// `thread` ended: its samples join those of the ended threads of its
    /// name (one slot per name, which keeps the name and the first ended
    /// thread's OS id), and its slot is free for the next thread, so that
    /// the sampler's memory grows with the names of the program's threads,
    /// not with how many it ever started.
    pub(super) fn thread_ended(&mut self, thread: ThreadID) {
        let Some(index) = self.by_id.remove(&thread) else {
            return;
        };
        if self.threads[index].is_empty() {
            self.threads[index] = Tracked::new();
            self.free.push(index);
            return;
        }
        let key = self.threads[index].name.clone();
        match self.ended.get(&key) {
            // The first ended thread of its name gathers the next ones.
            None => {
                let gathered = &mut self.threads[index];
                gathered.last_cpu = None;
                if gathered.name.is_none() {
                    gathered.name = Some(String::from(ENDED_WITHOUT_NAME));
                }
                self.ended.insert(key, index);
            }
            Some(&gathering) => {
                if let Some(recorder) = &mut self.recorder {
                    recorder.moved(index, Some(gathering));
                }
                let ended = core::mem::replace(&mut self.threads[index], Tracked::new());
                let gathered = &mut self.threads[gathering];
                gathered.tree.absorb(&ended.tree);
                gathered.period.absorb(&ended.period);
                for (to, from) in [
                    (&mut gathered.spans, ended.spans),
                    (&mut gathered.period_spans, ended.period_spans),
                ] {
                    for (ids, tree) in from {
                        if let Some(kept) = to.get_mut(&ids) {
                            kept.absorb(&tree);
                        } else if to.len() < MAX_SPANS {
                            to.insert(ids, tree);
                        }
                    }
                }
                gathered.signal_samples.0 += ended.signal_samples.0;
                gathered.signal_samples.1 += ended.signal_samples.1;
                self.free.push(index);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sampling::options::CPU;

    /// A sample inside a span lands in the thread's tree and in the span's
    /// (the run's and the period's), one outside in the tree only; the ids
    /// read in W3C hex; spans past [`MAX_SPANS`] are counted in the tree
    /// only.
    #[test]
    fn span_samples_are_kept_apart_and_counted_in_the_tree() {
        let mut state = state();
        let work = state.frames.intern("Work");
        let mut values = [0; SAMPLE_TYPES.len()];
        values[CPU] = 10;
        let mut ids = SpanIds::NONE;
        ids.trace[0] = 0x4b;
        ids.trace[15] = 0x36;
        ids.span[7] = 0xb7;
        let thread = state.thread(id(9000));
        thread.add(&[work], &values, true, ids);
        thread.add(&[work], &values, true, SpanIds::NONE);
        let node = thread.tree.find([work]).unwrap();
        assert_eq!(thread.tree.values(node)[CPU], 20);
        for spans in [&thread.spans, &thread.period_spans] {
            assert_eq!(spans.len(), 1);
            let tree = &spans[&ids];
            assert_eq!(tree.values(tree.find([work]).unwrap())[CPU], 10);
        }
        let trees = span_trees(&thread.spans, None);
        assert_eq!(trees[0].trace_hex(), "4b000000000000000000000000000036");
        assert_eq!(trees[0].span_hex(), "00000000000000b7");
        for n in 0..MAX_SPANS as u32 + 5 {
            let mut other = ids;
            other.span[..4].copy_from_slice(&n.to_be_bytes());
            other.span[4] = 1;
            thread.add(&[work], &values, false, other);
        }
        assert_eq!(thread.spans.len(), MAX_SPANS);
        assert_eq!(thread.period_spans.len(), 1, "no period kept");
        let node = thread.tree.find([work]).unwrap();
        assert_eq!(
            thread.tree.values(node)[CPU],
            20 + 10 * (MAX_SPANS as u64 + 5)
        );
    }

    fn state() -> State {
        State::new(Frames::new(), SamplerStats::default())
    }

    fn id(n: usize) -> ThreadID {
        // SAFETY: never handed to the runtime; only a map key here.
        unsafe { ThreadID::from_raw(n) }
    }

    /// Threads that start and end without end keep the sampler's memory
    /// bounded by their names: each ended thread's samples join its
    /// name's, and its slot is reused.
    #[test]
    fn ended_threads_are_gathered_by_name_and_their_slots_reused() {
        let mut state = state();
        let work = state.frames.intern("Work");
        let mut values = [0; SAMPLE_TYPES.len()];
        values[CPU] = 10;
        for n in 1..=1000 {
            let thread = state.thread(id(n));
            thread.name = (n % 2 == 0).then(|| String::from("Worker"));
            thread.add(&[work], &values, true, SpanIds::NONE);
            state.thread_ended(id(n));
        }
        // A thread that never got a sample leaves nothing behind.
        state.thread(id(5000));
        state.thread_ended(id(5000));
        // A live one keeps its own slot.
        state
            .thread(id(7000))
            .add(&[work], &values, false, SpanIds::NONE);
        let live: Vec<usize> = (0..state.threads.len())
            .filter(|i| !state.free.contains(i))
            .collect();
        assert_eq!(live.len(), 3, "two gathered names and the live thread");
        assert!(state.threads.len() <= 4, "{} slots", state.threads.len());
        let named = &state.threads[state.ended[&Some(String::from("Worker"))]];
        assert_eq!(named.name.as_deref(), Some("Worker"));
        let unnamed = &state.threads[state.ended[&None]];
        assert_eq!(unnamed.name.as_deref(), Some(ENDED_WITHOUT_NAME));
        for gathered in [named, unnamed] {
            let node = gathered.tree.find([work]).unwrap();
            assert_eq!(gathered.tree.values(node)[CPU], 500 * 10);
            let node = gathered.period.find([work]).unwrap();
            assert_eq!(gathered.period.values(node)[CPU], 500 * 10);
        }
        // A thread ended twice, or never seen, changes nothing.
        state.thread_ended(id(1));
        state.thread_ended(id(9999));
        assert_eq!(state.by_id.len(), 1);
    }
}
