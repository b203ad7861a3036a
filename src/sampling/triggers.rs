//! The incident rules (`CORPROF_SAMPLER_TRIGGERS`, [`SamplerOptions::triggers`](super::SamplerOptions::triggers)):
//! their syntax parsed into typed [`Trigger`]s (evaluated by `armed.rs`).
//!
//! The syntax (issue 49; docs/sampling.md, "Incidents"): rules separated by
//! `;`, each `kind:threshold[:...]`:
//!
//! | rule | fires when |
//! |---|---|
//! | `cpu:90%:3s` | the process used more than 90% of all the machine's cores over the last 3 s |
//! | `gc-pause:200ms` | a GC suspended the runtime for more than 200 ms |
//! | `exception:System.TimeoutException:50:5s` | more than 50 of that type (`*`: any) were thrown in 5 s |
//! | `gc-heap:512MB` | the GC heap after a GC is above 512 MB |
//! | `heap-growth:50MB:60s` | the GC heap after a GC is more than 50 MB above its lowest after a GC within the last 60 s |
//! | `threadpool-queue:100:5s` | the thread pool's queue stayed above 100 for 5 s (not supported yet) |
//! | `endpoint-p99:/route:200ms:10s` | the route's request p99 over 10 s is above 200 ms (not supported yet) |
//!
//! Durations are `ms`, `s` or `m`; sizes `KB`, `MB`, `GB` (powers of 1024).
//!
//! The GC heap is the sum of the generations' sizes (gen 0 to gen 4) the
//! runtime's `GCHeapStats` event gives at the end of each GC (`gc_heap.rs`):
//! the heap rules see the heap at GCs only. A `heap-growth` rule keeps the
//! lowest heap of its window in a bounded list of readings: a reading
//! within a 128th of the window after the last one kept, and above it, is
//! not kept (for the 128th of the window after that one leaves the window,
//! the lowest is taken from later readings: the growth may be understated
//! then), so the list holds at most 129 readings whatever the GC rate.

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::time::Duration;

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
    /// `gc-heap:S`: the GC heap after a GC above `bytes`.
    GcHeap {
        /// The threshold.
        bytes: u64,
    },
    /// `heap-growth:S:W`: the GC heap after a GC more than `bytes` above
    /// its lowest after a GC within `window`.
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
pub const SUPPORTED_TRIGGERS: &str = "cpu, gc-pause, exception, gc-heap, heap-growth";

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
            TriggerKind::Cpu { .. }
                | TriggerKind::GcPause { .. }
                | TriggerKind::Exception { .. }
                | TriggerKind::GcHeap { .. }
                | TriggerKind::HeapGrowth { .. }
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
        assert!(Trigger::parse("gc-heap:1GB").unwrap().is_supported());
        assert!(Trigger::parse("heap-growth:1GB:1m").unwrap().is_supported());
        assert!(!Trigger::parse("threadpool-queue:1:1s")
            .unwrap()
            .is_supported());
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
}
