//! What the sampler records and how it is set: the sample types (the
//! value indexes of every tree, [`SAMPLE_TYPES`]), the allocation sources,
//! [`SamplerOptions`] with their validation ([`OptionError`]) and event
//! masks, and the runtime events' keywords and ids the sampler asks for.

use alloc::string::String;
use core::time::Duration;

use super::contention::CONTENTIONS_PER_SECOND;
use super::exceptions::EXCEPTIONS_PER_SECOND;
use super::live_heap::HEAP_OBJECTS;
use super::mode::SamplingMode;
use super::triggers::{Trigger, TriggerKind, SUPPORTED_TRIGGERS};
use super::waits::WAITS_PER_SECOND;
use crate::facade::{ProfilerInfo, Result};
use crate::profiling::{
    COR_PRF_ENABLE_OBJECT_ALLOCATED, COR_PRF_ENABLE_STACK_SNAPSHOT, COR_PRF_HIGH_MONITOR,
    COR_PRF_HIGH_MONITOR_EVENT_PIPE, COR_PRF_MONITOR, COR_PRF_MONITOR_EXCEPTIONS,
    COR_PRF_MONITOR_OBJECT_ALLOCATED, COR_PRF_MONITOR_THREADS,
};
use crate::E_NOTIMPL;

/// Index of the CPU time (nanoseconds) in each node's values.
pub const CPU: usize = 0;
/// Index of the wall time (nanoseconds).
pub const WALL: usize = 1;
/// Index of the estimated number of objects allocated.
pub const ALLOC_OBJECTS: usize = 2;
/// Index of the estimated bytes allocated.
pub const ALLOC_BYTES: usize = 3;
/// Index of the exceptions thrown (the leaf frame is their type).
pub const EXCEPTIONS: usize = 4;
/// Index of the lock contentions (waits for a lock) counted.
pub const LOCK_COUNT: usize = 5;
/// Index of the time waited for locks, in nanoseconds.
pub const LOCK_TIME: usize = 6;
/// Index of the time the runtime was suspended for GCs, in nanoseconds
/// (under a synthetic frame `[GC gen N reason]`, thread `GC`:
/// [`GC_THREAD`](super::GC_THREAD)).
pub const GC_PAUSE: usize = 7;
/// Index of the estimated objects alive at the profile's end, at their
/// allocation stacks (the live heap, on threads
/// [`LIVE_HEAP_THREAD`](super::LIVE_HEAP_THREAD)).
pub const INUSE_OBJECTS: usize = 8;
/// Index of the estimated bytes alive at the profile's end.
pub const INUSE_SPACE: usize = 9;
/// Index of the time threads waited in blocking waits, in nanoseconds
/// (.NET 9 and later: `WaitHandleWaitStart`/`Stop`; under a last frame
/// `[wait <source>]`, `waits.rs`).
pub const WAIT: usize = 10;

/// The sample types, in value order, as pprof names them (type, unit):
/// the names Datadog's and Pyroscope's .NET profilers use.
pub const SAMPLE_TYPES: [(&str, &str); 11] = [
    ("cpu", "nanoseconds"),
    ("wall", "nanoseconds"),
    ("alloc_objects", "count"),
    ("alloc_space", "bytes"),
    ("exception", "count"),
    ("lock-count", "count"),
    ("lock-time", "nanoseconds"),
    ("gc-pause", "nanoseconds"),
    ("inuse_objects", "count"),
    ("inuse_space", "bytes"),
    ("wait", "nanoseconds"),
];

/// The frame standing for a run of native frames.
pub const NATIVE_FRAME: &str = "[native code]";

/// The frame of a sample whose thread had no managed frame to walk.
pub const NO_MANAGED_FRAMES: &str = "[no managed frames]";

/// The runtime provider's GC keyword (`GCKeyword`, 0x1 in ClrEtwAll.man).
pub(super) const GC_KEYWORD: u64 = 0x1;
/// Verbose (5): `GCAllocationTick` is a verbose event.
pub(super) const VERBOSE: u32 = 5;
/// Informational (4): the contention events' level.
pub(super) const INFORMATIONAL: u32 = 4;
/// `GCAllocationTick`'s event id in the runtime provider.
pub(super) const ALLOCATION_TICK: u32 = 10;
/// `AllocationSampled`'s event id in the runtime provider (.NET 10).
pub(super) const ALLOCATION_SAMPLED: u32 = 303;
/// The keyword that enables it (`AllocationSamplingKeyword`).
pub(super) const ALLOCATION_SAMPLING_KEYWORD: u64 = 0x800_0000_0000;

/// Where the allocation sampler's allocations come from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum AllocationSource {
    /// [`AllocationSource::AllocationSampled`] on .NET 10 and later,
    /// [`AllocationSource::AllocationTick`] where the runtime has in-process
    /// EventPipe (`ICorProfilerInfo12`: .NET 5 to 9); before, no
    /// allocation sampling: the only source there,
    /// [`AllocationSource::ObjectAllocated`], takes every allocation of the
    /// process off the JIT's fast path, which a profiler left on in
    /// production must not do unasked (measured on CoreCLR 3.1.23: 4.5x
    /// on allocation-bound work; about 3% of a web server's CPU; see
    /// docs/sampling.md). Ask for it by name to have it.
    #[default]
    Auto,
    /// The `ObjectAllocated` callback, for every allocation: exact sizes,
    /// but every allocation leaves the JIT's inline fast path for the
    /// runtime's slow one and a call into the profiler (measured on
    /// CoreCLR 8.0.4: 10.8 ns per small allocation becomes 55 ns; see
    /// docs/sampling.md). Every runtime.
    ObjectAllocated,
    /// The runtime's own `GCAllocationTick` events, one per about 100 KB
    /// allocated, through an in-process EventPipe session of the sampler's
    /// own (forward [`Sampler::event_pipe_event_delivered`](crate::sampling::Sampler::event_pipe_event_delivered)): allocations
    /// keep their fast path (measured: +0.5 to 1.3 ns per small
    /// allocation). .NET 5 and later. The event names the object whose
    /// allocation crossed the threshold, which takes the runtime's slow
    /// path: large objects, which always do, are over-counted (see
    /// docs/sampling.md).
    AllocationTick,
    /// The runtime's `AllocationSampled` events (.NET 10 and later), through
    /// the same session: the runtime samples each allocated byte with
    /// probability 1/102,400, independently, and names the object holding
    /// a sampled byte; each event is weighed by the chance of its object's
    /// size to be sampled ([`allocation_sampled_weight`](super::allocation_sampled_weight)), which makes the
    /// estimate unbiased for every size.
    AllocationSampled,
}

impl AllocationSource {
    /// The source `Auto` stands for on this runtime (others unchanged):
    /// `None` when it stands for none (before .NET 5).
    pub fn resolve(self, info: &ProfilerInfo) -> Option<AllocationSource> {
        match self {
            AllocationSource::Auto if has_allocation_sampled(info) => {
                Some(AllocationSource::AllocationSampled)
            }
            AllocationSource::Auto if info.version() >= 12 => {
                Some(AllocationSource::AllocationTick)
            }
            AllocationSource::Auto => None,
            other => Some(other),
        }
    }

    /// Whether this runtime can give this source's allocations: the
    /// EventPipe sources need in-process EventPipe (`ICorProfilerInfo12`,
    /// .NET 5), [`AllocationSource::AllocationSampled`] .NET 10.
    pub fn is_available(self, info: &ProfilerInfo) -> bool {
        match self {
            AllocationSource::Auto | AllocationSource::ObjectAllocated => true,
            AllocationSource::AllocationTick => info.version() >= 12,
            AllocationSource::AllocationSampled => has_allocation_sampled(info),
        }
    }

    /// Its name: `auto`, `object-allocated`, `allocation-tick` or
    /// `allocation-sampled`.
    pub fn name(self) -> &'static str {
        match self {
            AllocationSource::Auto => "auto",
            AllocationSource::ObjectAllocated => "object-allocated",
            AllocationSource::AllocationTick => "allocation-tick",
            AllocationSource::AllocationSampled => "allocation-sampled",
        }
    }

    /// The source of a [`name`](AllocationSource::name) (`None` for any
    /// other text).
    pub fn from_name(name: &str) -> Option<AllocationSource> {
        [
            AllocationSource::Auto,
            AllocationSource::ObjectAllocated,
            AllocationSource::AllocationTick,
            AllocationSource::AllocationSampled,
        ]
        .into_iter()
        .find(|source| source.name() == name)
    }
}

/// Whether the runtime raises `AllocationSampled` (.NET 10 and later, with
/// in-process EventPipe).
fn has_allocation_sampled(info: &ProfilerInfo) -> bool {
    info.version() >= 12 && info.runtime_information().is_ok_and(|r| r.major >= 10)
}

/// How the sampler samples: [`Default`] or
/// [`from_env`](SamplerOptions::from_env), then the `with_*` setters
/// (`SamplerOptions::default().with_hz(250)`) or a field assigned
/// (`options.hz = 250`). `#[non_exhaustive]`, and not `Copy`: options may
/// be added (of any type), so a struct literal does not build outside the
/// crate. [`Sampler::start`](crate::sampling::Sampler::start) checks them ([`SamplerOptions::validate`]).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct SamplerOptions {
    /// Stack samples per second (default 99: not a multiple of common
    /// timer rates, so the samples do not beat with periodic work).
    pub hz: u32,
    /// The mean interval of the allocation sampler in bytes (default
    /// 512 KiB); `None` turns allocation sampling off (and with it the
    /// `ObjectAllocated` callback or the EventPipe session).
    pub allocation_mean_bytes: Option<u64>,
    /// Where allocations come from (default [`AllocationSource::Auto`]).
    pub allocation_source: AllocationSource,
    /// How often the sampler hands a profile of the period just ended to
    /// its exporters (default 60 s; [`Sampler::start_exporting`](crate::sampling::Sampler::start_exporting)).
    pub period: Duration,
    /// Exceptions recorded in full per second, beyond which they are
    /// sampled with upweighted counts (default 500; `exceptions.rs`);
    /// `None` turns exception profiling off (and the runtime's exception
    /// callbacks with it).
    pub exceptions_per_second: Option<u32>,
    /// Lock contentions recorded in full per second, beyond which they
    /// are sampled with upweighted counts and times (default 500); `None`
    /// turns contention profiling off. Needs in-process EventPipe (.NET 5
    /// and later): on older runtimes there is none
    /// ([`SamplerStats::contention_available`](crate::sampling::SamplerStats::contention_available)).
    pub contentions_per_second: Option<u32>,
    /// Blocking waits recorded in full per second, beyond which they are
    /// sampled with upweighted times (default 500); `None` turns wait
    /// profiling off. Needs the runtime's `WaitHandleWaitStart`/`Stop`
    /// events (.NET 9 and later): on older runtimes there is none
    /// ([`SamplerStats::waits_available`](crate::sampling::SamplerStats::waits_available)).
    pub waits_per_second: Option<u32>,
    /// How stacks are sampled (default: [`SamplingMode::default`]).
    pub mode: SamplingMode,
    /// [`SamplingMode::Signal`]: the most threads signalled for a wall-time
    /// sample per tick, round-robin (default 5).
    pub wall_threads_per_tick: u32,
    /// Whether GC pauses are measured (default `true`): from the runtime's
    /// GC events in the sampler's in-process EventPipe session, .NET 5 and
    /// later ([`SamplerStats::gc_pauses_available`](crate::sampling::SamplerStats::gc_pauses_available); `gc_pauses.rs`).
    pub gc_pauses: bool,
    /// Whether CPU and wall samples carry the trace and span ids of the
    /// `System.Diagnostics.Activity` current on their thread (default
    /// `false`): [`SamplingMode::Signal`] only, with the span helper loaded
    /// (spans/, docs/sampling.md, "Samples tied to spans").
    pub spans: bool,
    /// The most sampled objects the live heap tracks (default 4,096;
    /// `None`: no live heap). .NET 7 and later, with allocation sampling on
    /// ([`SamplerStats::live_heap_available`](crate::sampling::SamplerStats::live_heap_available); `live_heap.rs`).
    pub heap_objects: Option<u32>,
    /// How often a heap snapshot is taken (default `None`: never; 1 s to
    /// a day). .NET 9 and later; `heap_snapshot.rs`.
    pub heap_snapshot_every: Option<Duration>,
    /// The incident rules (default none; `CORPROF_SAMPLER_TRIGGERS`,
    /// [`Trigger::parse_list`]): with any, the flight recorder keeps the
    /// last [`recorder_seconds`](Self::recorder_seconds) and each rule
    /// that fires writes them into [`incident_dir`](Self::incident_dir).
    pub triggers: alloc::vec::Vec<Trigger>,
    /// A rule fires at most once per this interval (default 300 s).
    pub trigger_interval: Duration,
    /// The seconds the flight recorder keeps (default 60; 1 to 3600).
    pub recorder_seconds: u32,
    /// Where incidents are written (`incident-<time>-<kind>/` in it);
    /// [`SamplingProfiler`](crate::sampling::SamplingProfiler) sets its
    /// output directory. Rules without it are refused.
    pub incident_dir: Option<std::path::PathBuf>,
}

impl Default for SamplerOptions {
    fn default() -> SamplerOptions {
        SamplerOptions {
            hz: 99,
            allocation_mean_bytes: Some(512 << 10),
            allocation_source: AllocationSource::Auto,
            period: Duration::from_secs(60),
            exceptions_per_second: Some(EXCEPTIONS_PER_SECOND),
            contentions_per_second: Some(CONTENTIONS_PER_SECOND),
            waits_per_second: Some(WAITS_PER_SECOND),
            mode: SamplingMode::default(),
            wall_threads_per_tick: 5,
            gc_pauses: true,
            spans: false,
            heap_objects: Some(HEAP_OBJECTS),
            heap_snapshot_every: None,
            triggers: alloc::vec::Vec::new(),
            trigger_interval: Duration::from_secs(300),
            recorder_seconds: 60,
            incident_dir: None,
        }
    }
}

impl SamplerOptions {
    /// With [`hz`](Self::hz) set.
    #[must_use]
    pub fn with_hz(mut self, hz: u32) -> SamplerOptions {
        self.hz = hz;
        self
    }

    /// With [`allocation_mean_bytes`](Self::allocation_mean_bytes) set
    /// (`None`: no allocation sampling).
    #[must_use]
    pub fn with_allocation_mean_bytes(mut self, bytes: Option<u64>) -> SamplerOptions {
        self.allocation_mean_bytes = bytes;
        self
    }

    /// With [`allocation_source`](Self::allocation_source) set.
    #[must_use]
    pub fn with_allocation_source(mut self, source: AllocationSource) -> SamplerOptions {
        self.allocation_source = source;
        self
    }

    /// With [`period`](Self::period) set.
    #[must_use]
    pub fn with_period(mut self, period: Duration) -> SamplerOptions {
        self.period = period;
        self
    }

    /// With [`exceptions_per_second`](Self::exceptions_per_second) set
    /// (`None`: no exception profiling).
    #[must_use]
    pub fn with_exceptions_per_second(mut self, limit: Option<u32>) -> SamplerOptions {
        self.exceptions_per_second = limit;
        self
    }

    /// With [`contentions_per_second`](Self::contentions_per_second) set
    /// (`None`: no contention profiling).
    #[must_use]
    pub fn with_contentions_per_second(mut self, limit: Option<u32>) -> SamplerOptions {
        self.contentions_per_second = limit;
        self
    }

    /// With [`waits_per_second`](Self::waits_per_second) set (`None`: no
    /// wait profiling).
    #[must_use]
    pub fn with_waits_per_second(mut self, limit: Option<u32>) -> SamplerOptions {
        self.waits_per_second = limit;
        self
    }

    /// With [`mode`](Self::mode) set.
    #[must_use]
    pub fn with_mode(mut self, mode: SamplingMode) -> SamplerOptions {
        self.mode = mode;
        self
    }

    /// With [`heap_objects`](Self::heap_objects) set (`None`: no live
    /// heap).
    #[must_use]
    pub fn with_heap_objects(mut self, limit: Option<u32>) -> SamplerOptions {
        self.heap_objects = limit;
        self
    }

    /// With [`heap_snapshot_every`](Self::heap_snapshot_every) set.
    #[must_use]
    pub fn with_heap_snapshot_every(mut self, every: Option<Duration>) -> SamplerOptions {
        self.heap_snapshot_every = every;
        self
    }

    /// With [`triggers`](Self::triggers) set (`Trigger::parse_list`
    /// reads the syntax).
    #[must_use]
    pub fn with_triggers(mut self, triggers: alloc::vec::Vec<Trigger>) -> SamplerOptions {
        self.triggers = triggers;
        self
    }

    /// With [`incident_dir`](Self::incident_dir) set.
    #[must_use]
    pub fn with_incident_dir(mut self, dir: Option<std::path::PathBuf>) -> SamplerOptions {
        self.incident_dir = dir;
        self
    }

    /// With [`gc_pauses`](Self::gc_pauses) set.
    #[must_use]
    pub fn with_gc_pauses(mut self, on: bool) -> SamplerOptions {
        self.gc_pauses = on;
        self
    }

    /// With [`spans`](Self::spans) set.
    #[must_use]
    pub fn with_spans(mut self, on: bool) -> SamplerOptions {
        self.spans = on;
        self
    }

    /// With [`wall_threads_per_tick`](Self::wall_threads_per_tick) set.
    #[must_use]
    pub fn with_wall_threads_per_tick(mut self, threads: u32) -> SamplerOptions {
        self.wall_threads_per_tick = threads;
        self
    }

    /// Whether the sampler can start with these options: the first field
    /// whose value it refuses, named with the value and what it must be.
    /// [`Sampler::start`](crate::sampling::Sampler::start) checks this first (its `Err` is `E_INVALIDARG`
    /// with the [`OptionError`] as its source).
    pub fn validate(&self) -> core::result::Result<(), OptionError> {
        let refuse = |field, value: &dyn core::fmt::Debug, expected| {
            Err(OptionError {
                field,
                value: alloc::format!("{value:?}"),
                expected,
            })
        };
        if !(1..=MAX_HZ).contains(&self.hz) {
            return refuse("hz", &self.hz, "1 to 10000");
        }
        if self.allocation_mean_bytes == Some(0) {
            return refuse(
                "allocation_mean_bytes",
                &self.allocation_mean_bytes,
                "None (off) or at least 1",
            );
        }
        if self.period.is_zero() {
            return refuse("period", &self.period, "more than zero");
        }
        if self.exceptions_per_second == Some(0) {
            return refuse(
                "exceptions_per_second",
                &self.exceptions_per_second,
                "None (off) or at least 1",
            );
        }
        if self.contentions_per_second == Some(0) {
            return refuse(
                "contentions_per_second",
                &self.contentions_per_second,
                "None (off) or at least 1",
            );
        }
        if self.waits_per_second == Some(0) {
            return refuse(
                "waits_per_second",
                &self.waits_per_second,
                "None (off) or at least 1",
            );
        }
        if self.wall_threads_per_tick == 0 {
            return refuse("wall_threads_per_tick", &0u32, "at least 1");
        }
        if let Some(every) = self.heap_snapshot_every {
            if !(1..=86_400).contains(&every.as_secs()) {
                return refuse(
                    "heap_snapshot_every",
                    &every,
                    "None (off) or 1 s to 86400 s",
                );
            }
        }
        if self.heap_objects == Some(0) {
            return refuse(
                "heap_objects",
                &self.heap_objects,
                "None (off) or at least 1",
            );
        }
        self.validate_triggers()
    }

    /// The rules' part of [`validate`](Self::validate): every kind
    /// supported, a recorder of 1 to 3600 s, an interval of at least a
    /// second, a directory to write into.
    fn validate_triggers(&self) -> core::result::Result<(), OptionError> {
        if let Some(rule) = self.triggers.iter().find(|r| !r.is_supported()) {
            return Err(OptionError {
                field: "triggers",
                value: alloc::format!(
                    "{:?} ({} is not supported yet)",
                    rule.text,
                    rule.kind_name()
                ),
                expected: "rules of the kinds supported yet: cpu, gc-pause, exception, gc-heap, heap-growth",
            });
        }
        debug_assert_eq!(
            SUPPORTED_TRIGGERS,
            "cpu, gc-pause, exception, gc-heap, heap-growth"
        );
        if let Some(rule) = self
            .triggers
            .iter()
            .find(|r| matches!(r.kind, TriggerKind::Exception { .. }))
            .filter(|_| self.exceptions_per_second.is_none())
        {
            return Err(OptionError {
                field: "triggers",
                value: alloc::format!("{:?}", rule.text),
                expected: "exception rules with exception profiling on (exceptions_per_second)",
            });
        }
        if !(1..=3600).contains(&self.recorder_seconds) {
            return Err(OptionError {
                field: "recorder_seconds",
                value: alloc::format!("{:?}", self.recorder_seconds),
                expected: "1 to 3600",
            });
        }
        if self.trigger_interval < Duration::from_secs(1) {
            return Err(OptionError {
                field: "trigger_interval",
                value: alloc::format!("{:?}", self.trigger_interval),
                expected: "at least 1 s",
            });
        }
        if !self.triggers.is_empty() && self.incident_dir.is_none() {
            return Err(OptionError {
                field: "incident_dir",
                value: String::from("None"),
                expected: "a directory when there are triggers (CORPROF_SAMPLER_DIR)",
            });
        }
        Ok(())
    }

    /// The event masks the sampler needs on this runtime, to set in
    /// `initialize` (object allocation monitoring can only be enabled at
    /// startup): stack snapshots and threads, and `ObjectAllocated` or
    /// EventPipe by the allocation source.
    ///
    /// `E_NOTIMPL` for [`AllocationSource::AllocationTick`] on a runtime
    /// without in-process EventPipe (`ICorProfilerInfo12`: before .NET 5),
    /// and for [`AllocationSource::AllocationSampled`] before .NET 10.
    pub fn event_masks(
        &self,
        info: &ProfilerInfo,
    ) -> Result<(COR_PRF_MONITOR, COR_PRF_HIGH_MONITOR)> {
        let mut mask = COR_PRF_ENABLE_STACK_SNAPSHOT | COR_PRF_MONITOR_THREADS;
        let mut high = COR_PRF_HIGH_MONITOR::empty();
        if self.exceptions_per_second.is_some() {
            mask |= COR_PRF_MONITOR_EXCEPTIONS;
        }
        let live_heap = self.heap_objects.is_some() && self.allocation_mean_bytes.is_some();
        if (self.contentions_per_second.is_some()
            || self.waits_per_second.is_some()
            || self.gc_pauses
            || live_heap)
            && info.version() >= 12
        {
            high |= COR_PRF_HIGH_MONITOR_EVENT_PIPE;
        }
        if self.allocation_mean_bytes.is_some() {
            match self.allocation_source.resolve(info) {
                Some(source) if !source.is_available(info) => return Err(E_NOTIMPL.into()),
                Some(AllocationSource::AllocationTick | AllocationSource::AllocationSampled) => {
                    high |= COR_PRF_HIGH_MONITOR_EVENT_PIPE
                }
                Some(_) => {
                    mask |= COR_PRF_ENABLE_OBJECT_ALLOCATED | COR_PRF_MONITOR_OBJECT_ALLOCATED
                }
                None => {}
            }
        }
        Ok((mask, high))
    }
}

/// The most samples per second [`SamplerOptions::hz`] may ask for.
pub const MAX_HZ: u32 = 10_000;

/// The interval between two samples at `hz` samples per second (`hz` of 0
/// taken as 1): the one place the period of a rate is computed.
pub(crate) fn sample_interval(hz: u32) -> Duration {
    Duration::from_nanos(1_000_000_000 / u64::from(hz.max(1)))
}

/// A [`SamplerOptions`] field the sampler cannot start with
/// ([`SamplerOptions::validate`]): which, the value refused, and what it
/// must be. It converts into `E_INVALIDARG` (an `HRESULT`, or a
/// [`corprof::Error`](crate::Error) whose source it is).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct OptionError {
    /// The field's name, as in [`SamplerOptions`] (`hz`, `period`, ...).
    pub field: &'static str,
    /// The value refused, as `Debug` prints it (`0`, `Some(0)`, `0ns`).
    pub value: String,
    /// What the field must be (`1 to 10000`).
    pub expected: &'static str,
}

impl core::fmt::Display for OptionError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(
            f,
            "SamplerOptions::{} = {}: must be {}",
            self.field, self.value, self.expected
        )
    }
}

impl core::error::Error for OptionError {}

impl From<OptionError> for crate::HRESULT {
    /// `E_INVALIDARG`, what the runtime gets back for a bad argument.
    fn from(_: OptionError) -> crate::HRESULT {
        crate::E_INVALIDARG
    }
}

impl From<OptionError> for crate::Error {
    /// `E_INVALIDARG`, with the option error as its source (and its text
    /// in the message).
    fn from(error: OptionError) -> crate::Error {
        crate::Error::with_source(crate::E_INVALIDARG, "Sampler::start", error)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;

    /// Each refused option names its field and value, in `Display` too,
    /// and converts into `E_INVALIDARG` with the typed error as source.
    #[test]
    fn every_refused_option_names_its_field_and_value() {
        let d = SamplerOptions::default;
        assert_eq!(d().validate(), Ok(()));
        assert_eq!(d().with_hz(MAX_HZ).validate(), Ok(()));
        let cases = [
            (d().with_hz(0), "hz", "0"),
            (d().with_hz(MAX_HZ + 1), "hz", "10001"),
            (
                d().with_allocation_mean_bytes(Some(0)),
                "allocation_mean_bytes",
                "Some(0)",
            ),
            (d().with_period(Duration::ZERO), "period", "0ns"),
            (
                d().with_exceptions_per_second(Some(0)),
                "exceptions_per_second",
                "Some(0)",
            ),
            (
                d().with_contentions_per_second(Some(0)),
                "contentions_per_second",
                "Some(0)",
            ),
            (
                d().with_waits_per_second(Some(0)),
                "waits_per_second",
                "Some(0)",
            ),
            (
                d().with_wall_threads_per_tick(0),
                "wall_threads_per_tick",
                "0",
            ),
            (d().with_heap_objects(Some(0)), "heap_objects", "Some(0)"),
            (
                d().with_heap_snapshot_every(Some(Duration::from_millis(500))),
                "heap_snapshot_every",
                "500ms",
            ),
        ];
        for (options, field, value) in cases {
            let error = options.validate().unwrap_err();
            assert_eq!((error.field, error.value.as_str()), (field, value));
            let text = error.to_string();
            assert!(
                text.starts_with(&alloc::format!(
                    "SamplerOptions::{field} = {value}: must be "
                )),
                "{text}"
            );
            assert_eq!(crate::HRESULT::from(error.clone()), crate::E_INVALIDARG);
            let wrapped = crate::Error::from(error.clone());
            assert_eq!(wrapped.code(), crate::E_INVALIDARG);
            let source = core::error::Error::source(&wrapped).expect("a source");
            assert_eq!(source.downcast_ref::<OptionError>(), Some(&error));
            assert!(wrapped.to_string().contains(&text), "{wrapped}");
        }
        // `None` turns a feature off: not an error.
        let off = d()
            .with_allocation_mean_bytes(None)
            .with_exceptions_per_second(None)
            .with_contentions_per_second(None)
            .with_waits_per_second(None)
            .with_heap_objects(None);
        assert_eq!(off.validate(), Ok(()));
    }

    /// Rules need a directory; a kind not supported yet is refused, named.
    #[test]
    fn the_rules_are_checked_at_the_start() {
        let rules = |text| Trigger::parse_list(text).unwrap();
        let dir = Some(std::path::PathBuf::from("/tmp/x"));
        let ok = SamplerOptions::default()
            .with_triggers(rules("cpu:90%:3s;gc-pause:200ms"))
            .with_incident_dir(dir.clone());
        assert_eq!(ok.validate(), Ok(()));
        let no_dir = ok.clone().with_incident_dir(None).validate().unwrap_err();
        assert_eq!(no_dir.field, "incident_dir");
        let later = ok
            .clone()
            .with_triggers(rules("gc-pause:1s;endpoint-p99:/a:200ms:10s"))
            .validate()
            .unwrap_err();
        assert_eq!(later.field, "triggers");
        assert_eq!(
            later.value,
            "\"endpoint-p99:/a:200ms:10s\" (endpoint-p99 is not supported yet)"
        );
        let quiet = ok
            .clone()
            .with_triggers(rules("exception:*:5:1s"))
            .with_exceptions_per_second(None)
            .validate()
            .unwrap_err();
        assert_eq!(
            (quiet.field, quiet.value.as_str()),
            ("triggers", "\"exception:*:5:1s\"")
        );
        let mut short = ok;
        short.recorder_seconds = 0;
        assert_eq!(short.validate().unwrap_err().field, "recorder_seconds");
    }

    #[test]
    fn the_setters_set_their_field_only() {
        let options = SamplerOptions::default()
            .with_hz(250)
            .with_allocation_source(AllocationSource::ObjectAllocated)
            .with_period(Duration::from_secs(5))
            .with_mode(SamplingMode::SuspendRuntime)
            .with_wall_threads_per_tick(9)
            .with_gc_pauses(false)
            .with_spans(true)
            .with_heap_objects(Some(64));
        let expected = SamplerOptions {
            hz: 250,
            allocation_source: AllocationSource::ObjectAllocated,
            period: Duration::from_secs(5),
            mode: SamplingMode::SuspendRuntime,
            wall_threads_per_tick: 9,
            gc_pauses: false,
            spans: true,
            heap_objects: Some(64),
            ..SamplerOptions::default()
        };
        assert_eq!(options, expected);
        assert_ne!(options, SamplerOptions::default());
    }

    #[test]
    fn the_interval_of_a_rate() {
        assert_eq!(sample_interval(99), Duration::from_nanos(10_101_010));
        assert_eq!(sample_interval(1), Duration::from_secs(1));
        assert_eq!(sample_interval(MAX_HZ), Duration::from_micros(100));
        assert_eq!(sample_interval(0), Duration::from_secs(1));
    }
}
