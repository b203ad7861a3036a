//! The sampler's shared core ([`Core`]: what the modes, the events and the
//! sampler all use) and the one record path: every sample of every kind (a
//! mode's walk, an allocation, an exception, a contention) becomes a
//! [`Sample`] and is recorded by [`State::record`].

use alloc::string::String;
use alloc::vec::Vec;
use std::collections::HashMap;
use std::sync::{Condvar, Mutex};

use super::gc_threads::{name_frame, GcCpu, GcThreads, GC_THREAD_FRAME};
use super::options::{SamplerOptions, CPU, SAMPLE_TYPES};
use super::state::{SamplerStats, SpanIds, State, Tracked};
use crate::facade::{ProfilerInfo, StackFrame};
use crate::profile::FrameId;
use crate::profiling::{FunctionID, ThreadID};
use crate::support::sync::lock;

/// What the sampling modes, the events and the sampler share: the runtime,
/// the options, the threads' trees and the name cache, the stop.
pub(super) struct Core {
    pub(super) info: ProfilerInfo,
    pub(super) options: SamplerOptions,
    /// Whether periods are kept for exporters (`Tracked::period`).
    pub(super) periods: bool,
    pub(super) stop: Mutex<bool>,
    pub(super) wake: Condvar,
    pub(super) state: Mutex<State>,
    /// Function names, resolved once per `FunctionID` (never while the
    /// runtime is suspended, and never with `state` held).
    pub(super) names: Mutex<HashMap<FunctionID, FrameId>>,
    /// [`SamplingMode::ThreadSuspend`](crate::sampling::SamplingMode::ThreadSuspend):
    /// held while a thread is walked; the threads destroyed since the
    /// current beat's enumeration (`None` once the sampler thread has ended:
    /// nothing is walked any more).
    pub(super) walking: Mutex<Option<Vec<ThreadID>>>,
}

/// One sample for [`State::record`]: a stack a mode walked, or the calling
/// thread's own at an event.
pub(super) struct Sample<'a> {
    /// The managed thread.
    pub(super) thread: ThreadID,
    /// Its stack, outermost first ([`Core::resolve`]).
    pub(super) stack: Vec<FrameId>,
    /// Whether the walk found a managed frame; if not, the sample is
    /// recorded under `[no managed frames]` alone (and its `leaf`).
    pub(super) managed: bool,
    /// A walk of the sampler's own (a mode's): the frames it gave, counted
    /// in [`SamplerStats::walks`], `frames` and `failed_walks`. `None`: an
    /// event's stack, counted by the caller.
    pub(super) walked: Option<usize>,
    /// A last frame: `new <Type>`, the exception's type, `[native lock]`.
    pub(super) leaf: Option<&'a str>,
    /// The OS thread it ran on (`None`: left as it was).
    pub(super) os_thread: Option<u32>,
    /// The modes that read the thread's CPU clock: its value now; the
    /// sample's [`CPU`] is then the time since the thread's previous sample
    /// on the same OS thread (none for a thread seen first or moved).
    /// `None`: `values[CPU]` as given.
    pub(super) cpu_clock: Option<Option<u64>>,
    /// One value per sample type ([`SAMPLE_TYPES`]).
    pub(super) values: [u64; SAMPLE_TYPES.len()],
    /// The span current on the thread ([`SpanIds::NONE`]: none).
    pub(super) span: SpanIds,
}

impl State {
    /// Records `sample` (the one record path): counts the walk, adds the
    /// stack (or `[no managed frames]`) and its leaf to the thread's tree
    /// and, `periods` set, its period's. Returns the stack recorded.
    pub(super) fn record(&mut self, periods: bool, sample: Sample<'_>) -> Vec<FrameId> {
        let Sample {
            thread,
            mut stack,
            managed,
            walked,
            leaf,
            os_thread,
            cpu_clock,
            mut values,
            span,
        } = sample;
        if let Some(frames) = walked {
            self.stats.walks += 1;
            self.stats.frames += frames as u64;
            self.stats.failed_walks += u64::from(!managed);
        }
        if !managed {
            stack = alloc::vec![self.no_managed];
        }
        if let Some(leaf) = leaf {
            let leaf = self.frames.intern(leaf);
            stack.push(leaf);
        }
        let slot = self.slot(thread);
        let tracked = &mut self.threads[slot];
        if let Some(now) = cpu_clock {
            // A thread that moved to another OS thread (or is seen first)
            // starts its CPU count here.
            values[CPU] = match (tracked.last_cpu, now) {
                (Some(last), Some(now)) if Some(tracked.os_thread) == os_thread => {
                    now.saturating_sub(last)
                }
                _ => 0,
            };
            tracked.last_cpu = now;
        }
        if let Some(os_thread) = os_thread {
            tracked.os_thread = os_thread;
        }
        self.add_at(slot, &stack, &values, periods, span);
        stack
    }

    /// Adds a sample to the thread of `slot` (its trees) and to the flight
    /// recorder: the end of every record path.
    fn add_at(
        &mut self,
        slot: usize,
        stack: &[FrameId],
        values: &[u64],
        periods: bool,
        span: SpanIds,
    ) {
        self.threads[slot].add(stack, values, periods, span);
        if let Some(recorder) = &mut self.recorder {
            recorder.add(self.start.elapsed().as_secs(), slot, stack, values);
        }
    }

    /// The OS threads of the threads the sampler tracks (not the GC
    /// threads' own slots): their CPU is sampled by the mode.
    pub(super) fn sampled_os_threads(&self) -> impl Iterator<Item = u32> + '_ {
        self.by_id
            .values()
            .filter_map(|&slot| self.threads.get(slot).map(|t| t.os_thread))
    }

    /// Records a GC thread's CPU (`gc_threads.rs`) under `[GC thread]` and
    /// the thread's name, in a slot of the thread's own (at most
    /// [`MAX_GC_SLOTS`]: beyond, threads of one name share one).
    pub(super) fn record_gc_cpu(&mut self, periods: bool, cpu: &GcCpu) {
        let slot = match self.gc_slots.get(&cpu.os_thread) {
            Some(&slot) => slot,
            None => {
                let shared = (self.gc_slots.len() >= MAX_GC_SLOTS)
                    .then(|| {
                        self.gc_slots
                            .values()
                            .copied()
                            .find(|&slot| self.threads[slot].name.as_deref() == Some(cpu.name))
                    })
                    .flatten();
                let slot = shared.unwrap_or_else(|| {
                    let mut tracked = Tracked::new();
                    tracked.name = Some(String::from(cpu.name));
                    tracked.os_thread = cpu.os_thread;
                    self.threads.push(tracked);
                    self.threads.len() - 1
                });
                self.gc_slots.insert(cpu.os_thread, slot);
                slot
            }
        };
        let stack = [
            self.frames.intern(GC_THREAD_FRAME),
            self.frames.intern(&name_frame(cpu.name)),
        ];
        let mut values = [0; SAMPLE_TYPES.len()];
        values[CPU] = cpu.nanos;
        self.stats.gc_threads_cpu_nanos = self.stats.gc_threads_cpu_nanos.saturating_add(cpu.nanos);
        self.add_at(slot, &stack, &values, periods, SpanIds::NONE);
    }
}

/// The most GC threads with a slot of their own (server GC starts one per
/// heap, at most one per core; background GC as many again).
pub(super) const MAX_GC_SLOTS: usize = 512;

impl Core {
    /// Reads the GC threads' CPU ([`GcThreads::poll`]; at most every
    /// [`POLL`](super::gc_threads::POLL)) and records it: from the sampler
    /// thread's loop, in every mode.
    pub(super) fn poll_gc_threads(&self, gc: &mut GcThreads, now: std::time::Instant) {
        if !gc.due(now) {
            return;
        }
        // The sampled threads, copied: /proc is read with no lock held.
        let sampled: Vec<u32> = lock(&self.state).sampled_os_threads().collect();
        let used = gc.poll(now, |os_thread| sampled.contains(&os_thread));
        if used.is_empty() {
            return;
        }
        let mut state = lock(&self.state);
        for cpu in &used {
            state.record_gc_cpu(self.periods, cpu);
        }
    }

    /// Records `sample` ([`State::record`]) with `count` applied to the
    /// statistics first; returns the stack recorded.
    pub(super) fn record(
        &self,
        sample: Sample<'_>,
        count: impl FnOnce(&mut SamplerStats),
    ) -> Vec<FrameId> {
        let mut state = lock(&self.state);
        count(&mut state.stats);
        state.record(self.periods, sample)
    }

    /// Frame IDs of walked frames (innermost first) as a stack, outermost
    /// first. Names are resolved with no lock held but the name cache's
    /// own, which the runtime's callbacks never wait on.
    pub(super) fn resolve(&self, walked: &[FunctionID]) -> Vec<FrameId> {
        let mut missing: Vec<FunctionID> = {
            let names = lock(&self.names);
            walked
                .iter()
                .filter(|f| !f.is_null() && !names.contains_key(f))
                .copied()
                .collect()
        };
        missing.sort_unstable();
        missing.dedup();
        let resolved: Vec<(FunctionID, String)> = missing
            .into_iter()
            .map(|function| {
                let name = self
                    .info
                    .instantiated_function_name(function)
                    .unwrap_or_else(|hr| alloc::format!("[function {:#x}: {hr}]", function.0));
                (function, name)
            })
            .collect();
        let mut state = lock(&self.state);
        let native = state.native;
        let mut names = lock(&self.names);
        for (function, name) in resolved {
            let id = state.frames.intern(&name);
            names.insert(function, id);
        }
        walked
            .iter()
            .rev()
            .map(|f| {
                if f.is_null() {
                    native
                } else {
                    names.get(f).copied().unwrap_or(native)
                }
            })
            .collect()
    }
}

/// Appends a walked frame, innermost first: a native run once.
pub(super) fn push_frame(frames: &mut Vec<FunctionID>, frame: StackFrame<'_>) {
    match frame {
        StackFrame::Managed { function, .. } => frames.push(function),
        StackFrame::Native { .. } => {
            if frames.last() != Some(&FunctionID::NULL) {
                frames.push(FunctionID::NULL);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::Frames;
    use crate::sampling::options::WALL;

    fn id(n: usize) -> ThreadID {
        // SAFETY: never handed to the runtime; only a map key here.
        unsafe { ThreadID::from_raw(n) }
    }

    fn sample(thread: usize, stack: Vec<FrameId>, managed: bool) -> Sample<'static> {
        Sample {
            thread: id(thread),
            stack,
            managed,
            walked: Some(3),
            leaf: None,
            os_thread: Some(7),
            cpu_clock: Some(Some(1_000)),
            values: [0; SAMPLE_TYPES.len()],
            span: SpanIds::NONE,
        }
    }

    /// Every kind goes through one path: walks counted, a walk without a
    /// managed frame under `[no managed frames]`, the leaf last, the CPU
    /// time since the thread's previous sample on the same OS thread.
    #[test]
    fn the_record_path_counts_falls_back_and_measures_cpu() {
        let mut state = State::new(Frames::new(), SamplerStats::default());
        let work = state.frames.intern("Work");
        let mut first = sample(1, alloc::vec![work], true);
        first.values[WALL] = 5;
        assert_eq!(state.record(true, first), [work]);
        let mut second = sample(1, alloc::vec![work], true);
        second.cpu_clock = Some(Some(1_600));
        state.record(false, second);
        let failed = state.record(false, sample(1, alloc::vec![work], false));
        assert_eq!(failed, [state.no_managed]);
        let mut event = sample(2, Vec::new(), false);
        event.walked = None;
        event.leaf = Some("new Foo");
        event.cpu_clock = None;
        event.os_thread = None;
        event.values[CPU] = 9;
        let stack = state.record(false, event);
        let leaf = state.frames.intern("new Foo");
        assert_eq!(stack, [state.no_managed, leaf]);
        assert_eq!(
            (
                state.stats.walks,
                state.stats.frames,
                state.stats.failed_walks
            ),
            (3, 9, 1)
        );
        let t = state.thread(id(1));
        let node = t.tree.find([work]).unwrap();
        // The first sample starts the CPU count; the second is 600 later.
        assert_eq!(
            (t.tree.values(node)[CPU], t.tree.values(node)[WALL]),
            (600, 5)
        );
        let node = t.period.find([work]).unwrap();
        assert_eq!(
            t.period.values(node)[WALL],
            5,
            "only the first kept a period"
        );
        assert_eq!((t.os_thread, t.last_cpu), (7, Some(1_000)));
        let no_managed = state.no_managed;
        let t = state.thread(id(2));
        let node = t.tree.find([no_managed, leaf]).unwrap();
        assert_eq!(t.tree.values(node)[CPU], 9);
        assert_eq!(t.os_thread, 0);
    }
}
