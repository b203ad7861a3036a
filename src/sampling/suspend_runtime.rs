//! [`SamplingMode::SuspendRuntime`]: the sampler thread suspends the whole
//! runtime at every beat, walks every managed thread with `DoStackSnapshot`,
//! resumes it, and only then names and records the walks.

use alloc::vec::Vec;
use core::ops::ControlFlow;
use core::time::Duration;
use std::time::Instant;

use super::clock::thread_cpu_nanos;
use super::options::{sample_interval, SAMPLE_TYPES, WALL};
use super::record::{push_frame, Core, Sample};
use super::state::{Pause, MAX_PAUSES};
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
    beats(host, |began| {
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
                walked.push(Walked {
                    thread,
                    os_thread: info.os_thread_id(thread).unwrap_or(0),
                    frames,
                    ok,
                });
            }
        }
        let _ = suspended.resume();
        let pause = began.elapsed();
        let wall = last_sample.map_or(period, |last| began - last);
        last_sample = Some(began);
        record(inner, &walked, pause, wall);
        ControlFlow::Continue(())
    });
}

/// Records one suspension's walks.
fn record(inner: &Core, walked: &[Walked], pause: Duration, wall: Duration) {
    let stacks: Vec<_> = walked.iter().map(|w| inner.resolve(&w.frames)).collect();
    let cpu_now: Vec<Option<u64>> = walked
        .iter()
        .map(|w| thread_cpu_nanos(w.os_thread))
        .collect();
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
    for ((walk, stack), cpu_now) in walked.iter().zip(stacks).zip(cpu_now) {
        let sample = Sample {
            thread: walk.thread,
            stack,
            managed: walk.ok && walk.frames.iter().any(|f| !f.is_null()),
            walked: Some(walk.frames.len()),
            leaf: None,
            os_thread: Some(walk.os_thread),
            cpu_clock: Some(cpu_now),
            values,
        };
        state.record(inner.periods, sample);
    }
}
