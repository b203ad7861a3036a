//! [`SamplingMode::Signal`] (`signal.rs`): the sampler thread's side. Each
//! tick it signals a few threads for wall samples and records what the
//! handlers wrote, turning raw addresses into functions off the signal path.

use alloc::vec::Vec;
use core::time::Duration;
use std::time::Instant;

use super::gc_threads::GcThreads;
use super::mode::SignalStats;
use super::options::{sample_interval, CPU, SAMPLE_TYPES, WALL};
use super::record::{Core, Sample};
use super::resolver::Resolver;
use super::signal;
use super::slots::{drain, RawSample};
use super::ticker::{wait_until, Host};
use super::walk::{refresh_modules, WalkEnd};
use crate::profiling::{FunctionID, ThreadID};
use crate::support::sync::lock;

/// The sampler thread in signal mode: each tick, signals a few threads for
/// wall samples and records what the handlers wrote; at the stop, deletes
/// the timers and records what is left.
pub(super) fn run_signal(host: &dyn Host) {
    let inner = host.core();
    let _ = inner.info.initialize_current_thread();
    let period = sample_interval(inner.options.hz);
    let mut next = Instant::now() + period;
    let mut resolver = Resolver::default();
    let mut raw = Vec::new();
    let mut sent = 0;
    // The loaded modules' unwind tables, listed again every 100 ms (for
    // libraries loaded since).
    let mut listed = Instant::now();
    refresh_modules();
    // The end of the current period, when exporting (as in `run_loop`).
    let mut period_end = inner.periods.then(|| Instant::now() + inner.options.period);
    // The runtime's GC threads, which no signal of ours reaches.
    let mut gc = GcThreads::default();
    while !wait_until(inner, next) {
        next = (next + period).max(Instant::now());
        if let Some(end) = period_end.filter(|&end| Instant::now() >= end) {
            // What the handlers wrote before the end belongs to this period.
            drain(&mut raw);
            record_signal(inner, &mut resolver, &mut raw);
            let now = Instant::now();
            host.cut_period(now);
            period_end = Some(inner.next_period_end(end, now));
        }
        if listed.elapsed() >= Duration::from_millis(100) {
            refresh_modules();
            listed = Instant::now();
        }
        sent += signal::signal_wall(inner.options.wall_threads_per_tick as usize);
        drain(&mut raw);
        record_signal(inner, &mut resolver, &mut raw);
        inner.poll_gc_threads(&mut gc, Instant::now());
    }
    gc.force();
    inner.poll_gc_threads(&mut gc, Instant::now());
    // What the handlers wrote while the registrations were on (those of
    // ended threads dropped), then what is left once the stop ended them.
    drain(&mut raw);
    record_signal(inner, &mut resolver, &mut raw);
    let mut stats = SignalStats::default();
    signal::stop(&mut stats);
    drain(&mut raw);
    record_signal(inner, &mut resolver, &mut raw);
    let mut state = lock(&inner.state);
    let free: std::collections::HashSet<usize> = state.free.iter().copied().collect();
    stats.per_thread = state
        .threads
        .iter()
        .enumerate()
        .filter(|(index, t)| !free.contains(index) && t.signal_samples != (0, 0))
        .map(|(_, t)| (t.os_thread, t.signal_samples.0, t.signal_samples.1))
        .collect();
    let ours = &mut state.stats.signal;
    stats.signals_sent = sent;
    stats.cpu_samples = ours.cpu_samples;
    stats.wall_samples = ours.wall_samples;
    stats.managed_samples = ours.managed_samples;
    stats.cut_bounds = ours.cut_bounds;
    stats.cut_depth = ours.cut_depth;
    stats.late = ours.late;
    *ours = stats;
}

/// Records drained samples (and empties `raw`).
fn record_signal(inner: &Core, resolver: &mut Resolver, raw: &mut Vec<RawSample>) {
    for sample in raw.drain(..) {
        let mut frames = Vec::with_capacity(sample.ips.len());
        let mut inner_frame = None;
        for (i, &ip) in sample.ips.iter().enumerate() {
            // An OSR frame's record on .NET 11 (`Resolver::return_address`):
            // no call site, no frame of its own.
            if i > 0 && resolver.return_address(&inner.info, ip) {
                continue;
            }
            // A return address is the instruction after the call: the
            // call itself is one byte before.
            let ip = if i == 0 { ip } else { ip.wrapping_sub(1) };
            let function = resolver.function(&inner.info, ip);
            if let Some((inner_ip, inner_function)) = inner_frame {
                if !function.is_null() && function == inner_function {
                    // A method under itself: an OSR frame's tier-0 code,
                    // most likely (`Resolver::same_method`).
                    resolver.same_method(inner_ip, ip);
                }
            }
            inner_frame = Some((ip, function));
            if !function.is_null() || frames.last() != Some(&FunctionID::NULL) {
                frames.push(function);
            }
        }
        let managed = frames.iter().any(|f| !f.is_null());
        // DoStackSnapshot (the other modes) starts at the innermost managed
        // frame: the native code a managed frame called (a wait, a
        // runtime helper) is left out the same way here.
        if managed && frames.first() == Some(&FunctionID::NULL) {
            frames.remove(0);
        }
        let stack = inner.resolve(&frames);
        let mut state = lock(&inner.state);
        let state = &mut *state;
        // SAFETY: an ID the runtime gave the registration's callback.
        let id = unsafe { ThreadID::from_raw(sample.thread) };
        // A sample of a registration that has ended and whose slot is gone
        // (the thread destroyed, its slot ended by `end_destroyed` after
        // an earlier drain): dropped, not a new slot that nothing would
        // ever end.
        if !state.by_id.contains_key(&id) && !signal::is_live(sample.index, sample.serial) {
            state.stats.signal.late += 1;
            continue;
        }
        let stats = &mut state.stats.signal;
        stats.managed_samples += u64::from(managed);
        stats.cut_bounds += u64::from(sample.end == WalkEnd::Bounds);
        stats.cut_depth += u64::from(sample.end == WalkEnd::Depth);
        let mut values = [0; SAMPLE_TYPES.len()];
        if sample.cpu {
            stats.cpu_samples += 1;
            values[CPU] = sample.weight;
        } else {
            stats.wall_samples += 1;
            values[WALL] = sample.weight;
        }
        // As in the other modes: a walk without a managed frame (a
        // runtime thread, or a native frame the walk could not pass) is
        // one frame of its own (the record path's `[no managed frames]`).
        state.record(
            inner.periods,
            Sample {
                thread: id,
                stack,
                managed,
                walked: Some(frames.len()),
                leaf: None,
                os_thread: Some(sample.tid as u32),
                cpu_clock: None,
                values,
                span: sample.span,
            },
        );
        let thread = state.thread(id);
        if sample.cpu {
            thread.signal_samples.0 += 1;
        } else {
            thread.signal_samples.1 += 1;
        }
    }
    resolver.publish();
    end_destroyed(inner);
}

/// Ends the slots of the threads destroyed since the last call, now that
/// the samples their handlers wrote before are recorded.
fn end_destroyed(inner: &Core) {
    let destroyed = signal::take_destroyed();
    if destroyed.is_empty() {
        return;
    }
    let mut state = lock(&inner.state);
    for thread in destroyed {
        // SAFETY: the ID `Sampler::thread_destroyed` was given.
        state.thread_ended(unsafe { ThreadID::from_raw(thread) });
    }
}
