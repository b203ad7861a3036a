//! [`SamplingMode::SuspendRuntime`]: the sampler thread suspends the whole
//! runtime at every beat, walks every managed thread with `DoStackSnapshot`,
//! resumes it, and only then names and records the walks.
//!
//! CPU time goes where it was spent. A walk finds a thread wherever the
//! suspension stopped it, running or asleep, while its CPU clock counts what
//! it spent since the last beat: credited to the walked stack, a thread
//! that bursts and sleeps would show its CPU in `Thread.Sleep`. So each
//! thread's CPU clock is read just before the suspension and again while
//! suspended: a thread whose clock moved in between was running when it
//! was stopped, and its CPU since it was last credited goes to the stack
//! found; a thread that did not run keeps its CPU for the next beat that
//! finds it running (none is lost, it is only credited later).

use alloc::collections::{BTreeMap, BTreeSet};
use alloc::vec::Vec;
use core::ops::ControlFlow;
use core::time::Duration;
use std::time::Instant;

use super::clock::thread_cpu_nanos;
use super::options::{sample_interval, CPU, SAMPLE_TYPES, WALL};
use super::record::{push_frame, Core, Sample};
use super::state::{Pause, SpanIds, MAX_PAUSES};
use super::ticker::{beats, Host};
use crate::profiling::{FunctionID, ThreadID};
use crate::support::sync::lock;
use crate::E_NOTIMPL;

/// One thread's walk in a suspension: its frames innermost first
/// (`FunctionID::NULL` for a native run).
struct Walked {
    thread: ThreadID,
    os_thread: u32,
    frames: Vec<FunctionID>,
    ok: bool,
    /// Its CPU clock while suspended (`None`: unreadable).
    cpu: Option<u64>,
}

/// One thread's CPU accounting across beats: the OS thread it ran on and
/// its CPU clock when CPU was last credited to a stack.
#[derive(Clone, Copy)]
struct Credited {
    os_thread: u32,
    cpu: u64,
}

/// The CPU time to credit to a walk of `thread` found with `cpu_now` on
/// its clock, `before` read just before the suspension: the time since it
/// was last credited when the clock moved in between (it was running when
/// stopped), else 0 and kept for later. A thread seen first, or moved to
/// another OS thread, starts its count here.
fn cpu_to_credit(
    credited: &mut BTreeMap<ThreadID, Credited>,
    thread: ThreadID,
    os_thread: u32,
    before: Option<u64>,
    cpu_now: Option<u64>,
) -> u64 {
    let Some(now) = cpu_now else {
        credited.remove(&thread);
        return 0;
    };
    match credited.get_mut(&thread) {
        Some(last) if last.os_thread == os_thread => {
            let ran = before.is_some_and(|before| now > before);
            if !ran {
                return 0;
            }
            let spent = now.saturating_sub(last.cpu);
            last.cpu = now;
            spent
        }
        _ => {
            credited.insert(
                thread,
                Credited {
                    os_thread,
                    cpu: now,
                },
            );
            0
        }
    }
}

/// The sampler thread in suspend-runtime mode, until the stop.
pub(super) fn run_loop(host: &dyn Host) {
    let inner = host.core();
    let info = &inner.info;
    let _ = info.initialize_current_thread();
    let period = sample_interval(inner.options.hz);
    let mut last_sample: Option<Instant> = None;
    let mut walked: Vec<Walked> = Vec::new();
    let mut spare: Vec<Vec<FunctionID>> = Vec::new();
    let mut credited: BTreeMap<ThreadID, Credited> = BTreeMap::new();
    let mut before: BTreeMap<u32, u64> = BTreeMap::new();
    beats(host, |began| {
        // The CPU clocks of the threads the last beat found, just before
        // this suspension (a thread new since then has none: it is
        // credited from its next beat on).
        before.clear();
        for w in &walked {
            if let Some(cpu) = thread_cpu_nanos(w.os_thread) {
                before.insert(w.os_thread, cpu);
            }
        }
        spare.extend(walked.drain(..).map(|mut w| {
            w.frames.clear();
            w.frames
        }));
        let suspended = match info.suspend_runtime() {
            Ok(suspended) => suspended,
            Err(hr) => {
                lock(&inner.state).stats.failed_suspensions += 1;
                if hr == E_NOTIMPL {
                    return ControlFlow::Break(());
                }
                return ControlFlow::Continue(());
            }
        };
        if let Ok(threads) = info.threads() {
            for thread in threads {
                let mut frames = spare.pop().unwrap_or_else(|| Vec::with_capacity(64));
                let ok = info
                    .stack_snapshot(thread, |frame| {
                        push_frame(&mut frames, frame);
                        true
                    })
                    .is_ok();
                let os_thread = info.os_thread_id(thread).unwrap_or(0);
                walked.push(Walked {
                    thread,
                    os_thread,
                    frames,
                    ok,
                    cpu: thread_cpu_nanos(os_thread),
                });
            }
        }
        let _ = suspended.resume();
        let pause = began.elapsed();
        let wall = last_sample.map_or(period, |last| began - last);
        last_sample = Some(began);
        let cpu: Vec<u64> = walked
            .iter()
            .map(|w| {
                let before = before.get(&w.os_thread).copied();
                cpu_to_credit(&mut credited, w.thread, w.os_thread, before, w.cpu)
            })
            .collect();
        // Threads gone since the last beat (a set: a server has hundreds).
        let live: BTreeSet<ThreadID> = walked.iter().map(|w| w.thread).collect();
        credited.retain(|thread, _| live.contains(thread));
        record(inner, &walked, &cpu, pause, wall);
        ControlFlow::Continue(())
    });
}

/// Records one suspension's walks, each with the CPU time credited to it.
fn record(inner: &Core, walked: &[Walked], cpu: &[u64], pause: Duration, wall: Duration) {
    let stacks: Vec<_> = walked.iter().map(|w| inner.resolve(&w.frames)).collect();
    let mut state = lock(&inner.state);
    state.stats.suspensions += 1;
    if state.stats.pauses.len() < MAX_PAUSES {
        state
            .stats
            .pauses
            .push(Pause::new(pause.as_nanos() as u64, walked.len() as u32));
    }
    let mut values = [0; SAMPLE_TYPES.len()];
    values[WALL] = wall.as_nanos() as u64;
    for ((walk, stack), &cpu) in walked.iter().zip(stacks).zip(cpu) {
        values[CPU] = cpu;
        let sample = Sample {
            thread: walk.thread,
            stack,
            managed: walk.ok && walk.frames.iter().any(|f| !f.is_null()),
            walked: Some(walk.frames.len()),
            leaf: None,
            os_thread: Some(walk.os_thread),
            cpu_clock: None,
            values,
            span: SpanIds::NONE,
        };
        state.record(inner.periods, sample);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_is_credited_only_to_walks_of_a_running_thread_and_never_lost() {
        let mut credited = BTreeMap::new();
        let t = ThreadID(7);
        // Seen first: its count starts here.
        assert_eq!(cpu_to_credit(&mut credited, t, 70, None, Some(1_000)), 0);
        // Burst, then asleep at the next two beats: its clock did not move
        // between the read before the suspension and the walk, so nothing
        // is credited to the sleeping stack...
        assert_eq!(
            cpu_to_credit(&mut credited, t, 70, Some(5_000), Some(5_000)),
            0
        );
        assert_eq!(
            cpu_to_credit(&mut credited, t, 70, Some(5_000), Some(5_000)),
            0
        );
        // ...and all of it, burst included, to the next walk that finds it
        // running.
        assert_eq!(
            cpu_to_credit(&mut credited, t, 70, Some(9_000), Some(9_100)),
            8_100
        );
        assert_eq!(
            cpu_to_credit(&mut credited, t, 70, Some(9_500), Some(9_600)),
            500
        );
        // No clock before the suspension (a thread new at the last beat):
        // not known to have run, kept.
        assert_eq!(cpu_to_credit(&mut credited, t, 70, None, Some(9_900)), 0);
        assert_eq!(
            cpu_to_credit(&mut credited, t, 70, Some(9_900), Some(10_000)),
            400
        );
        // Moved to another OS thread: starts again, nothing carried over.
        assert_eq!(cpu_to_credit(&mut credited, t, 71, Some(50), Some(60)), 0);
        assert_eq!(cpu_to_credit(&mut credited, t, 71, Some(70), Some(80)), 20);
        // An unreadable clock forgets the thread.
        assert_eq!(cpu_to_credit(&mut credited, t, 71, Some(80), None), 0);
        assert!(credited.is_empty());
    }
}
