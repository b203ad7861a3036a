//! The incident rules as the sampler evaluates them ([`Armed`]): when
//! each fired last (a rule fires at most once per interval), the exception
//! and heap-growth rules' windows, the process CPU's readings. Pure: times
//! and values come from the caller, so every rule is tested here without a
//! runtime. The rules' syntax and typed form are `triggers.rs`'s.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use core::time::Duration;
use std::collections::VecDeque;
use std::time::Instant;

use super::triggers::{Trigger, TriggerKind};

/// A rule that fired: which, and the value that crossed it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Firing {
    /// Its index in the rules.
    pub(crate) rule: usize,
    /// The value that crossed the threshold, said (`pause 412 ms`).
    pub(crate) value: String,
}

/// The rules as the sampler evaluates them: when each fired last (a rule
/// fires at most once per `interval`), the exception and heap-growth
/// rules' windows, the process's CPU readings. Bounded: an exception window
/// holds at most its count plus one entries, a heap-growth window at most
/// [`GROWTH_READINGS`] + 1, the CPU readings one per reading in the longest
/// CPU window.
#[derive(Debug)]
pub(crate) struct Armed {
    pub(crate) rules: Vec<Trigger>,
    interval: Duration,
    fired: Vec<Option<Instant>>,
    /// Per rule: an exception rule's (when, how many) of the exceptions
    /// counted in its window; a heap-growth rule's (when, bytes) of the
    /// heap after a GC, rising from the front (the lowest of the window).
    windows: Vec<VecDeque<(Instant, u64)>>,
    /// (when, the process's CPU nanoseconds) read.
    cpu: VecDeque<(Instant, u64)>,
}

impl Armed {
    pub(crate) fn new(rules: Vec<Trigger>, interval: Duration) -> Armed {
        let n = rules.len();
        Armed {
            rules,
            interval,
            fired: alloc::vec![None; n],
            windows: (0..n).map(|_| VecDeque::new()).collect(),
            cpu: VecDeque::new(),
        }
    }

    /// Whether a rule watches the process's CPU.
    pub(crate) fn watches_cpu(&self) -> bool {
        self.rules
            .iter()
            .any(|r| matches!(r.kind, TriggerKind::Cpu { .. }))
    }

    /// Whether a rule watches the GC heap (`gc-heap`, `heap-growth`).
    pub(crate) fn watches_heap(&self) -> bool {
        self.rules.iter().any(|r| {
            matches!(
                r.kind,
                TriggerKind::GcHeap { .. } | TriggerKind::HeapGrowth { .. }
            )
        })
    }

    /// Rule `rule` fires at `now` unless it fired within the interval.
    fn fire(&mut self, rule: usize, now: Instant, value: String, out: &mut Vec<Firing>) {
        if self.fired[rule].is_some_and(|last| now.saturating_duration_since(last) < self.interval)
        {
            return;
        }
        self.fired[rule] = Some(now);
        out.push(Firing { rule, value });
    }

    /// A GC suspension of `nanos` ended at `now`.
    pub(crate) fn gc_pause(&mut self, nanos: u64, now: Instant) -> Vec<Firing> {
        let mut out = Vec::new();
        for rule in 0..self.rules.len() {
            if let TriggerKind::GcPause { longer_than } = self.rules[rule].kind {
                if u128::from(nanos) > longer_than.as_nanos() {
                    let value = format!("GC pause {:.1} ms", nanos as f64 / 1e6);
                    self.fire(rule, now, value, &mut out);
                }
            }
        }
        out
    }

    /// A GC ended at `now` with `bytes` in the GC heap.
    pub(crate) fn gc_heap(&mut self, bytes: u64, now: Instant) -> Vec<Firing> {
        let mut out = Vec::new();
        for rule in 0..self.rules.len() {
            match self.rules[rule].kind {
                TriggerKind::GcHeap { bytes: limit } if bytes > limit => {
                    let value = format!("GC heap {} after a GC ({bytes} bytes)", mb(bytes));
                    self.fire(rule, now, value, &mut out);
                }
                TriggerKind::HeapGrowth {
                    bytes: limit,
                    window,
                } => {
                    let Some((then, low)) = lowest(&mut self.windows[rule], window, bytes, now)
                    else {
                        continue;
                    };
                    let grown = bytes - low;
                    if grown > limit {
                        let value = format!(
                            "GC heap grew {} in {} ms (from {low} to {bytes} bytes)",
                            mb(grown),
                            now.saturating_duration_since(then).as_millis()
                        );
                        self.fire(rule, now, value, &mut out);
                    }
                }
                _ => {}
            }
        }
        out
    }

    /// `count` exceptions (a sampled one's weight) of `type_name` thrown
    /// at `now`.
    pub(crate) fn exception(&mut self, type_name: &str, count: u64, now: Instant) -> Vec<Firing> {
        let mut out = Vec::new();
        for rule in 0..self.rules.len() {
            let TriggerKind::Exception {
                type_name: wanted,
                count: limit,
                window,
            } = &self.rules[rule].kind
            else {
                continue;
            };
            if wanted.as_deref().is_some_and(|w| w != type_name) {
                continue;
            }
            let (limit, window) = (*limit, *window);
            let seen = &mut self.windows[rule];
            while seen
                .front()
                .is_some_and(|&(at, _)| now.saturating_duration_since(at) >= window)
            {
                seen.pop_front();
            }
            seen.push_back((now, count));
            let total: u64 = seen.iter().map(|&(_, c)| c).sum();
            if total > limit {
                seen.clear();
                let value = format!("{total} {type_name} thrown in {} ms", window.as_millis());
                self.fire(rule, now, value, &mut out);
            }
        }
        out
    }

    /// The process had used `cpu_nanos` of CPU at `now`, on a machine of
    /// `cores` cores.
    pub(crate) fn cpu(&mut self, cpu_nanos: u64, cores: u32, now: Instant) -> Vec<Firing> {
        let mut out = Vec::new();
        let longest = self
            .rules
            .iter()
            .filter_map(|r| match r.kind {
                TriggerKind::Cpu { window, .. } => Some(window),
                _ => None,
            })
            .max();
        let Some(longest) = longest else {
            return out;
        };
        self.cpu.push_back((now, cpu_nanos));
        // Keep the newest reading at least `longest` old, none older.
        while self.cpu.len() > 1 && now.saturating_duration_since(self.cpu[1].0) >= longest {
            self.cpu.pop_front();
        }
        for rule in 0..self.rules.len() {
            let TriggerKind::Cpu { percent, window } = self.rules[rule].kind else {
                continue;
            };
            // The newest reading at least `window` before `now`.
            let Some(&(then, before)) = self
                .cpu
                .iter()
                .rev()
                .find(|&&(at, _)| now.saturating_duration_since(at) >= window)
            else {
                continue;
            };
            let elapsed = now.saturating_duration_since(then).as_nanos() as f64;
            let used = cpu_nanos.saturating_sub(before) as f64;
            let share = 100.0 * used / (elapsed * f64::from(cores.max(1)));
            if share > f64::from(percent) {
                let value = format!(
                    "process CPU {share:.1}% of {cores} cores over {} ms",
                    (elapsed / 1e6) as u64
                );
                self.fire(rule, now, value, &mut out);
            }
        }
        out
    }
}

/// The most readings a heap-growth window keeps besides its newest: one
/// per 128th of the window.
pub(crate) const GROWTH_READINGS: u32 = 128;

/// `bytes` as `104.3 MB`.
fn mb(bytes: u64) -> String {
    format!("{:.1} MB", bytes as f64 / f64::from(1u32 << 20))
}

/// A heap-growth window takes the reading `bytes` at `now`: the readings
/// older than `window` leave, those not below it too (never the lowest
/// again), and it is kept unless the last kept reading is within a
/// [`GROWTH_READINGS`]th of the window. Returns the lowest reading of the
/// window before this one, when it is below `bytes`.
fn lowest(
    kept: &mut VecDeque<(Instant, u64)>,
    window: Duration,
    bytes: u64,
    now: Instant,
) -> Option<(Instant, u64)> {
    while kept
        .front()
        .is_some_and(|&(at, _)| now.saturating_duration_since(at) > window)
    {
        kept.pop_front();
    }
    let low = kept.front().copied().filter(|&(_, b)| b < bytes);
    while kept.back().is_some_and(|&(_, b)| b >= bytes) {
        kept.pop_back();
    }
    let close = window / GROWTH_READINGS;
    if kept
        .back()
        .is_none_or(|&(at, _)| now.saturating_duration_since(at) >= close)
    {
        kept.push_back((now, bytes));
    }
    low
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules(text: &str, interval: u64) -> Armed {
        Armed::new(
            Trigger::parse_list(text).unwrap(),
            Duration::from_secs(interval),
        )
    }

    /// A pause above the threshold fires, once per interval.
    #[test]
    fn gc_pause_fires_once_per_interval() {
        let mut armed = rules("gc-pause:200ms", 10);
        let t0 = Instant::now();
        assert_eq!(armed.gc_pause(200_000_000, t0), []);
        let fired = armed.gc_pause(412_000_000, t0);
        assert_eq!(fired.len(), 1);
        assert_eq!(fired[0].value, "GC pause 412.0 ms");
        assert_eq!(armed.gc_pause(500_000_000, t0 + Duration::from_secs(9)), []);
        assert_eq!(
            armed
                .gc_pause(500_000_000, t0 + Duration::from_secs(10))
                .len(),
            1
        );
    }

    /// More than N of the type within the window fires; other types and
    /// older exceptions do not count.
    #[test]
    fn exceptions_in_a_window() {
        let mut armed = rules(
            "exception:System.TimeoutException:3:2s;exception:*:5:1s",
            60,
        );
        let t0 = Instant::now();
        let ms = Duration::from_millis;
        // Three of the type, then one of another: none above 3 / 5 yet.
        for i in 0..3 {
            assert_eq!(
                armed.exception("System.TimeoutException", 1, t0 + ms(i)),
                []
            );
        }
        assert_eq!(armed.exception("System.IOException", 1, t0 + ms(3)), []);
        // Two seconds later the first three have left the window.
        assert_eq!(
            armed.exception("System.TimeoutException", 1, t0 + ms(2_500)),
            []
        );
        let fired = armed.exception("System.TimeoutException", 3, t0 + ms(2_600));
        assert_eq!(fired.len(), 1, "{fired:?}");
        assert_eq!(fired[0].rule, 0);
        assert_eq!(
            fired[0].value,
            "4 System.TimeoutException thrown in 2000 ms"
        );
        // `*` counts every type: 1 + 3 + 2 in its last second.
        let fired = armed.exception("System.IOException", 2, t0 + ms(2_700));
        assert_eq!(fired.iter().map(|f| f.rule).collect::<Vec<_>>(), [1]);
    }

    /// The heap after a GC above the threshold fires, once per interval.
    #[test]
    fn gc_heap_fires_above_once_per_interval() {
        let mut armed = rules("gc-heap:64MB", 10);
        let t0 = Instant::now();
        let s = Duration::from_secs;
        assert_eq!(armed.gc_heap(64 << 20, t0), []);
        let fired = armed.gc_heap(100 << 20, t0 + s(1));
        assert_eq!(fired.len(), 1);
        assert_eq!(
            fired[0].value,
            "GC heap 100.0 MB after a GC (104857600 bytes)"
        );
        assert_eq!(armed.gc_heap(200 << 20, t0 + s(10)), []);
        assert_eq!(armed.gc_heap(200 << 20, t0 + s(11)).len(), 1);
    }

    /// Growth above the threshold from the lowest heap of the window:
    /// a drop resets the base, an old low leaves the window.
    #[test]
    fn heap_growth_from_the_lowest_of_the_window() {
        let mut armed = rules("heap-growth:50MB:10s", 60);
        let t0 = Instant::now();
        let ms = |n: u64| t0 + Duration::from_millis(n);
        const MB: u64 = 1 << 20;
        // 10 MB, 40 MB, then 100 MB a second after the first: 90 MB above
        // the window's lowest.
        assert_eq!(armed.gc_heap(10 * MB, ms(0)), []);
        assert_eq!(armed.gc_heap(40 * MB, ms(500)), []);
        let fired = armed.gc_heap(100 * MB, ms(1_000));
        assert_eq!(fired.len(), 1);
        assert_eq!(
            fired[0].value,
            "GC heap grew 90.0 MB in 1000 ms (from 10485760 to 104857600 bytes)"
        );
        // The same, with the 10 MB reading out of the window (11 s).
        let mut armed = rules("heap-growth:50MB:10s", 60);
        assert_eq!(armed.gc_heap(10 * MB, ms(0)), []);
        assert_eq!(armed.gc_heap(30 * MB, ms(2_000)), []);
        assert_eq!(armed.gc_heap(50 * MB, ms(5_000)), []);
        // At 11 s the lowest is 30 MB (2 s): 79 MB is 49 MB above it.
        assert_eq!(armed.gc_heap(79 * MB, ms(11_000)), []);
        // A drop to 20 MB: the base from then on.
        assert_eq!(armed.gc_heap(20 * MB, ms(11_500)), []);
        assert_eq!(armed.gc_heap(70 * MB, ms(12_000)), []);
        let fired = armed.gc_heap(71 * MB, ms(12_100));
        assert_eq!(fired.len(), 1, "{fired:?}");
        assert!(
            fired[0].value.starts_with("GC heap grew 51.0 MB in 600 ms"),
            "{fired:?}"
        );
        // Fired: not again within the interval.
        assert_eq!(armed.gc_heap(500 * MB, ms(13_000)), []);
    }

    /// A heap-growth window keeps at most GROWTH_READINGS + 1 readings,
    /// however many GCs: here 10,000 GCs in 10 s of a rising heap.
    #[test]
    fn a_growth_window_is_bounded() {
        let mut armed = rules("heap-growth:1GB:10s", 60);
        let t0 = Instant::now();
        for i in 0..10_000u64 {
            let at = t0 + Duration::from_millis(i);
            assert_eq!(armed.gc_heap(i << 10, at), []);
            assert!(armed.windows[0].len() <= GROWTH_READINGS as usize + 1);
        }
        // Rising: it kept a reading per 78 ms of the 10 s.
        assert!(armed.windows[0].len() >= 100, "{}", armed.windows[0].len());
        // The lowest is still the first: 10,000 KB - 0 fires at 1 GB.
        let mut small = rules("heap-growth:9MB:10s", 60);
        for i in 0..10_000u64 {
            let fired = small.gc_heap(i << 10, t0 + Duration::from_millis(i));
            if !fired.is_empty() {
                assert_eq!(i, 9 * 1024 + 1);
                return;
            }
        }
        panic!("never fired");
    }

    /// The CPU over the window, of all cores: fires when above, not before
    /// the window is covered.
    #[test]
    fn cpu_over_the_window() {
        let mut armed = rules("cpu:40%:2s", 60);
        let t0 = Instant::now();
        let ms = Duration::from_millis;
        // One core of two busy (50%), but less than 2 s seen.
        assert_eq!(armed.cpu(0, 2, t0), []);
        assert_eq!(armed.cpu(1_000_000_000, 2, t0 + ms(1_000)), []);
        let fired = armed.cpu(2_000_000_000, 2, t0 + ms(2_000));
        assert_eq!(fired.len(), 1);
        assert_eq!(fired[0].value, "process CPU 50.0% of 2 cores over 2000 ms");
        // An idle process: 10%, below.
        let mut idle = rules("cpu:40%:2s", 60);
        for i in 0..10u64 {
            assert_eq!(idle.cpu(i * 100_000_000, 2, t0 + ms(i * 500)), []);
        }
        assert!(idle.cpu.len() <= 6, "{}", idle.cpu.len());
    }
}
