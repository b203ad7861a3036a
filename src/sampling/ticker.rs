//! The one ticker of the modes that sample from the sampler thread: the
//! beat ([`beats`], jittered), the wait for a beat or the stop
//! ([`wait_until`]), the periods' ends, and [`Host`], what a mode needs of
//! the sampler (its [`Core`] and the period cut), so that the modes never
//! name the sampler.

use core::ops::ControlFlow;
use core::time::Duration;
use std::time::{Instant, SystemTime};

use super::gc_threads::GcThreads;
use super::options::sample_interval;
use super::record::Core;
use crate::support::sync::lock;

/// What a sampling mode needs of the sampler: the shared [`Core`] and the
/// cut of a period for the exporters. The sampler (`sampler.rs`)
/// implements it; a mode's thread takes `&dyn Host`.
pub(super) trait Host: Sync {
    /// The shared core.
    fn core(&self) -> &Core;
    /// Ends the current period at `now` and hands its profile to the
    /// exporters (nothing without exporters).
    fn cut_period(&self, now: Instant);
}

impl Core {
    /// The end of the period after the one that ended at `end` (cut at
    /// `now`): one period later, or one period after `now` when the sampler
    /// is behind by more than a period.
    pub(super) fn next_period_end(&self, end: Instant, now: Instant) -> Instant {
        let following = end + self.options.period;
        if following > now {
            following
        } else {
            now + self.options.period
        }
    }
}

/// Waits until `deadline` or a stop; `true` on a stop.
pub(super) fn wait_until(inner: &Core, deadline: Instant) -> bool {
    let mut stop = lock(&inner.stop);
    loop {
        if *stop {
            return true;
        }
        let now = Instant::now();
        if now >= deadline {
            return false;
        }
        stop = inner
            .wake
            .wait_timeout(stop, deadline - now)
            .unwrap_or_else(|p| p.into_inner())
            .0;
    }
}

/// A seed that differs from run to run and from call to call: the wall
/// clock's nanoseconds, the process id, a stack address and a counter,
/// mixed (splitmix64's finalizer). Never 0.
pub(crate) fn random_seed() -> u64 {
    static CALLS: core::sync::atomic::AtomicU64 = core::sync::atomic::AtomicU64::new(0);
    let now = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    let local = 0u8;
    let calls = CALLS.fetch_add(1, core::sync::atomic::Ordering::Relaxed);
    let mut z = now
        ^ (u64::from(std::process::id()) << 32)
        ^ (core::ptr::addr_of!(local) as usize as u64)
        ^ calls.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    if z == 0 {
        0x9E37_79B9_7F4A_7C15
    } else {
        z
    }
}

/// The beat of the modes that sample every thread in turn from the sampler
/// thread: calls `sample` with the beat's start `hz` times a second (each
/// beat jittered by up to 10%), and between beats hands the periods to the
/// exporters, until the stop or `sample` breaks.
pub(super) fn beats(host: &dyn Host, mut sample: impl FnMut(Instant) -> ControlFlow<()>) {
    let inner = host.core();
    let period = sample_interval(inner.options.hz);
    let mut next = Instant::now() + period;
    // Never 0: xorshift would stay at 0, and the beat would not jitter.
    let mut jitter = random_seed() | 1;
    // The end of the current period, when exporting.
    let mut period_end = inner.periods.then(|| Instant::now() + inner.options.period);
    // The runtime's GC threads, which the modes do not walk.
    let mut gc = GcThreads::default();
    loop {
        {
            let mut stop = lock(&inner.stop);
            loop {
                if *stop {
                    drop(stop);
                    gc.force();
                    inner.poll_gc_threads(&mut gc, Instant::now());
                    return;
                }
                let now = Instant::now();
                if now >= next || period_end.is_some_and(|end| now >= end) {
                    break;
                }
                let wake = period_end.map_or(next, |end| end.min(next));
                stop = inner
                    .wake
                    .wait_timeout(stop, wake - now)
                    .unwrap_or_else(|p| p.into_inner())
                    .0;
            }
        }
        if let Some(end) = period_end.filter(|&end| Instant::now() >= end) {
            let now = Instant::now();
            host.cut_period(now);
            period_end = Some(inner.next_period_end(end, now));
            if now < next {
                continue;
            }
        }
        let began = Instant::now();
        // The next beat, one period later give or take 10% at random: a
        // strict beat would alias with periodic work of a period close to a
        // divisor of its own, and sample only a few phases of it.
        jitter ^= jitter << 13;
        jitter ^= jitter >> 7;
        jitter ^= jitter << 17;
        let offset = period.as_nanos() as u64 / 5;
        let delay = period - Duration::from_nanos(offset / 2)
            + Duration::from_nanos(jitter % offset.max(1));
        next = began + delay;
        if sample(began).is_break() {
            return;
        }
        inner.poll_gc_threads(&mut gc, Instant::now());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Seeds differ call to call and are never 0 (the jitter of the beat
    /// and the rate samplers' draws start from them).
    #[test]
    fn seeds_differ_and_are_never_zero() {
        let seeds: alloc::vec::Vec<u64> = (0..64).map(|_| random_seed()).collect();
        assert!(seeds.iter().all(|&s| s != 0));
        let distinct: std::collections::HashSet<u64> = seeds.iter().copied().collect();
        assert_eq!(distinct.len(), seeds.len());
    }
}
