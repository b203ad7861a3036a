//! The incident rules (`CORPROF_SAMPLER_TRIGGERS`, [`SamplerOptions::triggers`](super::SamplerOptions::triggers)):
//! their syntax parsed into typed [`Trigger`]s, and [`Armed`], the rules'
//! state as the sampler evaluates them (the exception windows, the process
//! CPU's readings, when each rule last fired). Pure: times and values come
//! from the caller, so every rule is tested here without a runtime.
//!
//! The syntax (issue 49; docs/sampling.md, "Incidents"): rules separated by
//! `;`, each `kind:threshold[:...]`:
//!
//! | rule | fires when |
//! |---|---|
//! | `cpu:90%:3s` | the process used more than 90% of all the machine's cores over the last 3 s |
//! | `gc-pause:200ms` | a GC suspended the runtime for more than 200 ms |
//! | `exception:System.TimeoutException:50:5s` | more than 50 of that type (`*`: any) were thrown in 5 s |
//! | `gc-heap:512MB` | the GC heap is above 512 MB (not supported yet) |
//! | `heap-growth:50MB:60s` | the heap grew by more than 50 MB in 60 s (not supported yet) |
//! | `threadpool-queue:100:5s` | the thread pool's queue stayed above 100 for 5 s (not supported yet) |
//! | `endpoint-p99:/route:200ms:10s` | the route's request p99 over 10 s is above 200 ms (not supported yet) |
//!
//! Durations are `ms`, `s` or `m`; sizes `KB`, `MB`, `GB` (powers of 1024).

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::time::Duration;
use std::collections::VecDeque;
use std::time::Instant;

/// The most a count of a rule may be (an exception rule's `N`): the
/// exception window keeps at most `N + 1` entries.
pub const MAX_TRIGGER_COUNT: u64 = 1_000_000;

/// The longest window a rule may have (a day).
const MAX_WINDOW: Duration = Duration::from_secs(86_400);

/// What a rule watches, with its thresholds.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum TriggerKind {
    /// `cpu:P%:W`: the process's CPU time over the last `window` above
    /// `percent` of all the machine's cores.
    Cpu {
        /// 1 to 100.
        percent: u32,
        /// At least a second.
        window: Duration,
    },
    /// `gc-pause:D`: one GC suspension longer than `longer_than`.
    GcPause {
        /// The threshold.
        longer_than: Duration,
    },
    /// `exception:Type:N:W`: more than `count` exceptions of `type_name`
    /// thrown within `window`.
    Exception {
        /// The type's full name (`None`: any, `*`).
        type_name: Option<String>,
        /// 1 to [`MAX_TRIGGER_COUNT`].
        count: u64,
        /// At least a second.
        window: Duration,
    },
    /// `gc-heap:S`: the GC heap above `bytes` (not supported yet).
    GcHeap {
        /// The threshold.
        bytes: u64,
    },
    /// `heap-growth:S:W`: growth above `bytes` within `window` (not
    /// supported yet).
    HeapGrowth {
        /// The threshold.
        bytes: u64,
        /// At least a second.
        window: Duration,
    },
    /// `threadpool-queue:N:W`: the queue above `length` for `window` (not
    /// supported yet).
    ThreadPoolQueue {
        /// The threshold.
        length: u64,
        /// At least a second.
        window: Duration,
    },
    /// `endpoint-p99:/route:D:W`: the route's p99 over `window` above
    /// `threshold` (not supported yet).
    EndpointP99 {
        /// The route, as routing names it (`/api/{id:int}`).
        route: String,
        /// The threshold.
        threshold: Duration,
        /// At least a second.
        window: Duration,
    },
}

/// One rule: as written, and typed.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Trigger {
    /// The rule as written (`cpu:90%:3s`), named in `reason.txt`.
    pub text: String,
    /// What it watches.
    pub kind: TriggerKind,
}

/// The kinds this version evaluates.
pub const SUPPORTED_TRIGGERS: &str = "cpu, gc-pause, exception";

impl Trigger {
    /// The kind's name as the syntax has it (`gc-pause`), used in the
    /// incident folder's name.
    pub fn kind_name(&self) -> &'static str {
        match self.kind {
            TriggerKind::Cpu { .. } => "cpu",
            TriggerKind::GcPause { .. } => "gc-pause",
            TriggerKind::Exception { .. } => "exception",
            TriggerKind::GcHeap { .. } => "gc-heap",
            TriggerKind::HeapGrowth { .. } => "heap-growth",
            TriggerKind::ThreadPoolQueue { .. } => "threadpool-queue",
            TriggerKind::EndpointP99 { .. } => "endpoint-p99",
        }
    }

    /// Whether this version evaluates it ([`SUPPORTED_TRIGGERS`]).
    pub fn is_supported(&self) -> bool {
        matches!(
            self.kind,
            TriggerKind::Cpu { .. } | TriggerKind::GcPause { .. } | TriggerKind::Exception { .. }
        )
    }

    /// One rule, or why not (the message names the rule).
    pub fn parse(text: &str) -> Result<Trigger, String> {
        let text = text.trim();
        let bad = |why: &str| format!("trigger {text:?}: {why}");
        let parts: Vec<&str> = text.split(':').collect();
        let n = parts.len();
        let arity = |expected: usize, syntax: &str| -> Result<(), String> {
            (n == expected)
                .then_some(())
                .ok_or_else(|| bad(&format!("expected {syntax}")))
        };
        let kind = match parts[0] {
            "cpu" => {
                arity(3, "cpu:<percent>%:<duration>")?;
                let percent = parts[1]
                    .strip_suffix('%')
                    .and_then(|p| p.parse::<u32>().ok())
                    .filter(|p| (1..=100).contains(p))
                    .ok_or_else(|| bad("the threshold is a percent from 1% to 100%"))?;
                TriggerKind::Cpu {
                    percent,
                    window: window(parts[2]).map_err(|e| bad(&e))?,
                }
            }
            "gc-pause" => {
                arity(2, "gc-pause:<duration>")?;
                TriggerKind::GcPause {
                    longer_than: duration(parts[1]).map_err(|e| bad(&e))?,
                }
            }
            "exception" if n >= 4 => {
                let name = parts[1..n - 2].join(":");
                let type_name = match name.trim() {
                    "" => return Err(bad("the type name is empty (a full name, or *)")),
                    "*" => None,
                    name => Some(name.to_string()),
                };
                TriggerKind::Exception {
                    type_name,
                    count: count(parts[n - 2]).map_err(|e| bad(&e))?,
                    window: window(parts[n - 1]).map_err(|e| bad(&e))?,
                }
            }
            "exception" => return Err(bad("expected exception:<type or *>:<count>:<duration>")),
            "gc-heap" => {
                arity(2, "gc-heap:<size>")?;
                TriggerKind::GcHeap {
                    bytes: size(parts[1]).map_err(|e| bad(&e))?,
                }
            }
            "heap-growth" => {
                arity(3, "heap-growth:<size>:<duration>")?;
                TriggerKind::HeapGrowth {
                    bytes: size(parts[1]).map_err(|e| bad(&e))?,
                    window: window(parts[2]).map_err(|e| bad(&e))?,
                }
            }
            "threadpool-queue" => {
                arity(3, "threadpool-queue:<length>:<duration>")?;
                TriggerKind::ThreadPoolQueue {
                    length: count(parts[1]).map_err(|e| bad(&e))?,
                    window: window(parts[2]).map_err(|e| bad(&e))?,
                }
            }
            "endpoint-p99" if n >= 4 => {
                let route = parts[1..n - 2].join(":");
                if !route.starts_with('/') {
                    return Err(bad("the route starts with /"));
                }
                TriggerKind::EndpointP99 {
                    route,
                    threshold: duration(parts[n - 2]).map_err(|e| bad(&e))?,
                    window: window(parts[n - 1]).map_err(|e| bad(&e))?,
                }
            }
            "endpoint-p99" => return Err(bad("expected endpoint-p99:/<route>:<duration>:<duration>")),
            _ => {
                return Err(bad(
                    "unknown kind (cpu, gc-pause, exception, gc-heap, heap-growth, threadpool-queue, endpoint-p99)",
                ))
            }
        };
        Ok(Trigger {
            text: text.to_string(),
            kind,
        })
    }

    /// The rules of a `;`-separated list (empty entries skipped), or the
    /// first malformed one's message.
    pub fn parse_list(text: &str) -> Result<Vec<Trigger>, String> {
        text.split(';')
            .filter(|rule| !rule.trim().is_empty())
            .map(Trigger::parse)
            .collect()
    }
}

/// `200ms`, `3s`, `2m`: more than zero, at most a day.
fn duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let (digits, unit) = text.split_at(
        text.find(|c: char| !c.is_ascii_digit())
            .unwrap_or(text.len()),
    );
    let value: u64 = digits
        .parse()
        .map_err(|_| format!("{text:?} is not a duration (200ms, 3s, 2m)"))?;
    let value = match unit {
        "ms" => Duration::from_millis(value),
        "s" => Duration::from_secs(value),
        "m" => Duration::from_secs(value.saturating_mul(60)),
        _ => return Err(format!("{text:?} is not a duration (200ms, 3s, 2m)")),
    };
    if value.is_zero() || value > MAX_WINDOW {
        return Err(format!("{text:?} is not from 1ms to a day"));
    }
    Ok(value)
}

/// A window: a duration of at least a second.
fn window(text: &str) -> Result<Duration, String> {
    duration(text).and_then(|d| match d >= Duration::from_secs(1) {
        true => Ok(d),
        false => Err(format!("{:?}: a window is at least 1s", text.trim())),
    })
}

/// A count from 1 to [`MAX_TRIGGER_COUNT`].
fn count(text: &str) -> Result<u64, String> {
    text.trim()
        .parse::<u64>()
        .ok()
        .filter(|c| (1..=MAX_TRIGGER_COUNT).contains(c))
        .ok_or_else(|| {
            format!(
                "{:?} is not a count from 1 to {MAX_TRIGGER_COUNT}",
                text.trim()
            )
        })
}

/// `512MB`, `64KB`, `2GB` (powers of 1024), more than zero.
fn size(text: &str) -> Result<u64, String> {
    let text = text.trim();
    let (digits, unit) = text.split_at(
        text.find(|c: char| !c.is_ascii_digit())
            .unwrap_or(text.len()),
    );
    let shift = match unit {
        "KB" => 10,
        "MB" => 20,
        "GB" => 30,
        _ => return Err(format!("{text:?} is not a size (64KB, 512MB, 2GB)")),
    };
    digits
        .parse::<u64>()
        .ok()
        .filter(|&v| v > 0 && v < (1 << 33))
        .map(|v| v << shift)
        .ok_or_else(|| format!("{text:?} is not a size (64KB, 512MB, 2GB)"))
}

/// A rule that fired: which, and the value that crossed it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Firing {
    /// Its index in the rules.
    pub(crate) rule: usize,
    /// The value that crossed the threshold, said (`pause 412 ms`).
    pub(crate) value: String,
}

/// The rules as the sampler evaluates them: when each fired last (a rule
/// fires at most once per `interval`), the exception rules' windows, the
/// process's CPU readings. Bounded: an exception window holds at most its
/// count plus one entries, the CPU readings one per reading in the longest
/// CPU window.
#[derive(Debug)]
pub(crate) struct Armed {
    pub(crate) rules: Vec<Trigger>,
    interval: Duration,
    fired: Vec<Option<Instant>>,
    /// Per rule: (when, how many) of the exceptions counted in its window.
    exceptions: Vec<VecDeque<(Instant, u64)>>,
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
            exceptions: (0..n).map(|_| VecDeque::new()).collect(),
            cpu: VecDeque::new(),
        }
    }

    /// Whether a rule watches the process's CPU.
    pub(crate) fn watches_cpu(&self) -> bool {
        self.rules
            .iter()
            .any(|r| matches!(r.kind, TriggerKind::Cpu { .. }))
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
            let seen = &mut self.exceptions[rule];
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

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(text: &str) -> TriggerKind {
        Trigger::parse(text).unwrap().kind
    }

    /// The examples, each typed.
    #[test]
    fn the_syntax_of_every_kind() {
        let s = Duration::from_secs;
        assert_eq!(
            kind("cpu:90%:3s"),
            TriggerKind::Cpu {
                percent: 90,
                window: s(3)
            }
        );
        assert_eq!(
            kind("gc-pause:200ms"),
            TriggerKind::GcPause {
                longer_than: Duration::from_millis(200)
            }
        );
        assert_eq!(
            kind("exception:System.TimeoutException:50:5s"),
            TriggerKind::Exception {
                type_name: Some("System.TimeoutException".into()),
                count: 50,
                window: s(5)
            }
        );
        assert_eq!(
            kind("exception:*:10:1m"),
            TriggerKind::Exception {
                type_name: None,
                count: 10,
                window: s(60)
            }
        );
        assert_eq!(
            kind("gc-heap:512MB"),
            TriggerKind::GcHeap { bytes: 512 << 20 }
        );
        assert_eq!(
            kind("heap-growth:50MB:60s"),
            TriggerKind::HeapGrowth {
                bytes: 50 << 20,
                window: s(60)
            }
        );
        assert_eq!(
            kind("threadpool-queue:100:5s"),
            TriggerKind::ThreadPoolQueue {
                length: 100,
                window: s(5)
            }
        );
        assert_eq!(
            kind("endpoint-p99:/api/{id:int}:200ms:10s"),
            TriggerKind::EndpointP99 {
                route: "/api/{id:int}".into(),
                threshold: Duration::from_millis(200),
                window: s(10)
            }
        );
        let list = Trigger::parse_list(" cpu:90%:3s ; gc-pause:200ms;;exception:*:5:1s ").unwrap();
        let names: Vec<&str> = list.iter().map(Trigger::kind_name).collect();
        assert_eq!(names, ["cpu", "gc-pause", "exception"]);
        assert_eq!(list[0].text, "cpu:90%:3s");
        assert!(list.iter().all(Trigger::is_supported));
        assert!(!Trigger::parse("gc-heap:1GB").unwrap().is_supported());
        assert_eq!(Trigger::parse_list("").unwrap(), []);
    }

    /// Each malformed rule is refused, the message naming it.
    #[test]
    fn a_malformed_rule_is_named() {
        for bad in [
            "cpu:90:3s",
            "cpu:0%:3s",
            "cpu:101%:3s",
            "cpu:90%",
            "cpu:90%:500ms",
            "gc-pause:200",
            "gc-pause:0ms",
            "gc-pause:2h",
            "gc-pause:200ms:1s",
            "exception:System.X:0:5s",
            "exception::5:5s",
            "exception:System.X:5",
            "gc-heap:512",
            "gc-heap:0MB",
            "heap-growth:50MB",
            "threadpool-queue:x:5s",
            "endpoint-p99:route:200ms:10s",
            "endpoint-p99:/route:200ms",
            "memory:1GB",
            "",
        ] {
            let list = alloc::format!("gc-pause:100ms;{bad};cpu:50%:2s");
            let error = match bad {
                "" => continue,
                _ => Trigger::parse_list(&list).unwrap_err(),
            };
            assert!(
                error.starts_with(&alloc::format!("trigger {bad:?}: ")),
                "{bad}: {error}"
            );
        }
    }

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
