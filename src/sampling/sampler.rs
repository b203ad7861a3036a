//! The sampler thread and the allocation sampler, recording into one
//! [`StackTree`] per managed thread.

use alloc::string::String;
use alloc::sync::Arc;
use alloc::vec::Vec;
use core::ops::ControlFlow;
use core::time::Duration;
use std::collections::HashMap;
use std::sync::{Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Instant, SystemTime};

use super::alloc::{allocation_sampled_weight, allocation_weight, AllocationCountdown};
use super::clock::current_thread_cpu_nanos;
use super::contention::{
    decode_contention, decode_contention_with, Contention, CONTENTIONS_PER_SECOND,
    CONTENTION_KEYWORD, CONTENTION_START, CONTENTION_STOP,
};
use super::exceptions::{RateSampler, EXCEPTIONS_PER_SECOND};
use super::export::{ExportStats, Exporter, Pipeline, FINISH_TIMEOUT};
use super::gc_pauses::{decode_gc_event, is_gc_event, GcEvent, GcPauseStats, GcPauses};
use super::live_heap::{LiveHeap, LiveHeapStats, LiveObject, NewObject, HEAP_OBJECTS};
use super::memory::{gc_thread, live_threads};
use super::signal::{self, SamplingMode, SignalStats};
use super::thread_suspend::ThreadSuspendStats;
use crate::eventpipe::{decode_payload, runtime_fields, EventMetadata, Value, RUNTIME_PROVIDER};
use crate::facade::{EventPipeEvent, EventPipeProvider, ProfilerInfo, Result, StackFrame};
use crate::profile::{FrameId, Frames, StackTree};
use crate::profiling::{
    ClassID, FunctionID, ObjectID, ThreadID, COR_PRF_ENABLE_OBJECT_ALLOCATED,
    COR_PRF_ENABLE_STACK_SNAPSHOT, COR_PRF_HIGH_MONITOR, COR_PRF_HIGH_MONITOR_EVENT_PIPE,
    COR_PRF_MONITOR, COR_PRF_MONITOR_EXCEPTIONS, COR_PRF_MONITOR_OBJECT_ALLOCATED,
    COR_PRF_MONITOR_THREADS, EVENTPIPE_PROVIDER, EVENTPIPE_SESSION,
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
/// The sample types, in value order, as pprof names them (type, unit):
/// the names Datadog's and Pyroscope's .NET profilers use.
pub const SAMPLE_TYPES: [(&str, &str); 10] = [
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
];

/// The frame standing for a run of native frames.
pub const NATIVE_FRAME: &str = "[native code]";
/// The frame of a sample whose thread had no managed frame to walk.
pub const NO_MANAGED_FRAMES: &str = "[no managed frames]";

/// Most pause durations kept for the statistics (about 3 hours at 99 Hz);
/// later pauses are counted but not kept.
pub(super) const MAX_PAUSES: usize = 1 << 20;

/// The runtime provider's GC keyword (`GCKeyword`, 0x1 in ClrEtwAll.man).
const GC_KEYWORD: u64 = 0x1;
/// Verbose (5): `GCAllocationTick` is a verbose event.
const VERBOSE: u32 = 5;
/// Informational (4): the contention events' level.
const INFORMATIONAL: u32 = 4;
/// `GCAllocationTick`'s event id in the runtime provider.
const ALLOCATION_TICK: u32 = 10;
/// `AllocationSampled`'s event id in the runtime provider (.NET 10).
const ALLOCATION_SAMPLED: u32 = 303;
/// The keyword that enables it (`AllocationSamplingKeyword`).
const ALLOCATION_SAMPLING_KEYWORD: u64 = 0x800_0000_0000;

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
    /// own (forward [`Sampler::event_pipe_event_delivered`]): allocations
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
/// crate. [`Sampler::start`] checks them ([`SamplerOptions::validate`]).
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
    /// its exporters (default 60 s; [`Sampler::start_exporting`]).
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
    /// ([`SamplerStats::contention_available`]).
    pub contentions_per_second: Option<u32>,
    /// How stacks are sampled (default: [`SamplingMode::default`]).
    pub mode: SamplingMode,
    /// [`SamplingMode::Signal`]: the most threads signalled for a wall-time
    /// sample per tick, round-robin (default 5).
    pub wall_threads_per_tick: u32,
    /// Whether GC pauses are measured (default `true`): from the runtime's
    /// GC events in the sampler's in-process EventPipe session, .NET 5 and
    /// later ([`SamplerStats::gc_pauses_available`]; `gc_pauses.rs`).
    pub gc_pauses: bool,
    /// The most sampled objects the live heap tracks (default 4,096;
    /// `None`: no live heap). .NET 7 and later, with allocation sampling on
    /// ([`SamplerStats::live_heap_available`]; `live_heap.rs`).
    pub heap_objects: Option<u32>,
    /// How often a heap snapshot is taken (default `None`: never; 1 s to
    /// a day). .NET 9 and later; `heap_snapshot.rs`.
    pub heap_snapshot_every: Option<Duration>,
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
            mode: SamplingMode::default(),
            wall_threads_per_tick: 5,
            gc_pauses: true,
            heap_objects: Some(HEAP_OBJECTS),
            heap_snapshot_every: None,
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

    /// With [`gc_pauses`](Self::gc_pauses) set.
    #[must_use]
    pub fn with_gc_pauses(mut self, on: bool) -> SamplerOptions {
        self.gc_pauses = on;
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
    /// [`Sampler::start`] checks this first (its `Err` is `E_INVALIDARG`
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
        if (self.contentions_per_second.is_some() || self.gc_pauses || live_heap)
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

/// A [`Sampler`] being assembled: its options and exporters
/// ([`Sampler::builder`]).
#[must_use = "a builder does nothing until started"]
pub struct SamplerBuilder {
    options: SamplerOptions,
    exporters: Vec<alloc::boxed::Box<dyn Exporter>>,
}

impl core::fmt::Debug for SamplerBuilder {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("SamplerBuilder")
            .field("options", &self.options)
            .field("exporters", &self.exporters.len())
            .finish()
    }
}

impl SamplerBuilder {
    /// Adds an exporter: every [`SamplerOptions::period`] it gets a profile
    /// of that period ([`Sampler::start_exporting`]).
    pub fn exporter(mut self, exporter: impl Exporter + 'static) -> SamplerBuilder {
        self.exporters.push(alloc::boxed::Box::new(exporter));
        self
    }

    /// Adds exporters already boxed (as
    /// [`ExportOptions::exporters`](super::export::ExportOptions::exporters)
    /// makes them).
    pub fn exporters(
        mut self,
        exporters: impl IntoIterator<Item = alloc::boxed::Box<dyn Exporter>>,
    ) -> SamplerBuilder {
        self.exporters.extend(exporters);
        self
    }

    /// The options it will start with.
    pub fn options(&self) -> &SamplerOptions {
        &self.options
    }

    /// Starts the sampler: [`Sampler::start_exporting`] with the options
    /// and the exporters added (the same errors; [`SamplingMode::ThreadSuspend`]
    /// refused: see [`start_forwarding_thread_destroyed`](Self::start_forwarding_thread_destroyed)).
    pub fn start(self, info: &ProfilerInfo) -> Result<Sampler> {
        Sampler::start_exporting(info, self.options, self.exporters)
    }

    /// Starts the sampler in any mode, [`SamplingMode::ThreadSuspend`] (the
    /// default on Windows x64) included: the sampler is handed to `publish`
    /// (to put it where the profiler's `thread_destroyed` finds it) before
    /// its thread starts sampling, then started. The errors of
    /// [`start`](Self::start), but for the mode.
    ///
    /// # Safety
    ///
    /// In [`SamplingMode::ThreadSuspend`], from `publish` on, every
    /// `ThreadDestroyed` the runtime raises while the sampler lives must
    /// reach [`Sampler::thread_destroyed`] of the sampler published, from
    /// that callback, before it returns: the sampler suspends and walks the
    /// managed threads one at a time, and it leaves out a destroyed thread
    /// only when told (the runtime frees the thread's `Thread` after the
    /// callback; `DoStackSnapshot` of it ends the process).
    /// [`SamplingProfiler`](super::SamplingProfiler) does this. Nothing is
    /// asked in the other modes.
    pub unsafe fn start_forwarding_thread_destroyed(
        self,
        info: &ProfilerInfo,
        publish: impl FnOnce(&Arc<Sampler>),
    ) -> Result<Arc<Sampler>> {
        check_forwarding(&self.options, true)?;
        let sampler = Arc::new(Sampler::prepare(info, self.options, self.exporters)?);
        publish(&sampler);
        sampler.launch()?;
        Ok(sampler)
    }
}

/// [`SamplingMode::ThreadSuspend`] only with `ThreadDestroyed` forwarded
/// (`forwarded`: the caller took on
/// [`SamplerBuilder::start_forwarding_thread_destroyed`]'s contract).
fn check_forwarding(options: &SamplerOptions, forwarded: bool) -> Result<()> {
    if options.mode == SamplingMode::ThreadSuspend && !forwarded {
        return Err(OptionError {
            field: "mode",
            value: alloc::format!("{:?}", options.mode),
            expected: "Signal or SuspendRuntime here: ThreadSuspend needs every ThreadDestroyed \
                       forwarded, SamplerBuilder::start_forwarding_thread_destroyed (unsafe)",
        }
        .into());
    }
    Ok(())
}

/// One thread's samples.
#[derive(Clone, Debug)]
pub struct ThreadProfile {
    /// The managed thread's name, or `Thread <OS id>` when it has none.
    pub name: String,
    /// The OS thread it ran on when last sampled.
    pub os_thread: u32,
    /// Its stacks, with [`CPU`], [`WALL`], [`ALLOC_OBJECTS`] and
    /// [`ALLOC_BYTES`] values.
    pub tree: StackTree,
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
    /// Exceptions thrown ([`Sampler::exception_thrown`]).
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
    /// Whether GC pauses are measured: asked for
    /// ([`SamplerOptions::gc_pauses`]), and the runtime has in-process
    /// EventPipe (.NET 5 and later).
    pub gc_pauses_available: bool,
    /// The GC pauses measured (count, total, longest, by kind).
    pub gc_pauses: GcPauseStats,
    /// Whether the live heap is tracked: asked for
    /// ([`SamplerOptions::heap_objects`]) with allocation sampling, and the
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
    /// [`SamplingMode::Signal`]: its CPU and wall samples
    /// ([`SignalStats::per_thread`]).
    pub(super) signal_samples: (u64, u64),
}

impl Tracked {
    fn new() -> Tracked {
        Tracked {
            name: None,
            os_thread: 0,
            last_cpu: None,
            tree: StackTree::new(SAMPLE_TYPES.len()),
            period: StackTree::new(SAMPLE_TYPES.len()),
            signal_samples: (0, 0),
        }
    }

    /// Whether it holds no sample.
    fn is_empty(&self) -> bool {
        self.tree.len() <= 1 && self.period.len() <= 1
    }

    /// Adds a sample to the run's tree and, `periods` set, the period's.
    pub(super) fn add(&mut self, stack: &[FrameId], values: &[u64], periods: bool) {
        self.tree.add(stack.iter().copied(), values);
        if periods {
            self.period.add(stack.iter().copied(), values);
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
}

impl State {
    /// No thread yet; `frames` holds [`NATIVE_FRAME`] and
    /// [`NO_MANAGED_FRAMES`] (interned here when not).
    fn new(mut frames: Frames, stats: SamplerStats) -> State {
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
        }
    }

    pub(super) fn thread(&mut self, thread: ThreadID) -> &mut Tracked {
        let index = match self.by_id.get(&thread) {
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
        };
        &mut self.threads[index]
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
                let ended = core::mem::replace(&mut self.threads[index], Tracked::new());
                let gathered = &mut self.threads[gathering];
                gathered.tree.absorb(&ended.tree);
                gathered.period.absorb(&ended.period);
                gathered.signal_samples.0 += ended.signal_samples.0;
                gathered.signal_samples.1 += ended.signal_samples.1;
                self.free.push(index);
            }
        }
    }
}

pub(super) struct Inner {
    pub(super) info: ProfilerInfo,
    pub(super) options: SamplerOptions,
    /// The allocation source resolved for this runtime (`None`: off).
    pub(super) source: Option<AllocationSource>,
    /// The sampler's EventPipe session ([`AllocationSource::AllocationTick`]).
    pub(super) session: Mutex<Option<EVENTPIPE_SESSION>>,
    /// Providers seen in delivered events: whether each is the runtime's.
    pub(super) providers: Mutex<Vec<(EVENTPIPE_PROVIDER, bool)>>,
    pub(super) stop: Mutex<bool>,
    pub(super) wake: Condvar,
    pub(super) state: Mutex<State>,
    /// Function names, resolved once per `FunctionID` (never while the
    /// runtime is suspended, and never with `state` held).
    pub(super) names: Mutex<HashMap<FunctionID, FrameId>>,
    /// The export thread, when there are exporters.
    pub(super) export: Option<Pipeline>,
    /// The exception sampler (`None`: off).
    pub(super) exceptions: Option<RateSampler>,
    /// The contention sampler (`None`: off or not available).
    pub(super) contentions: Option<RateSampler>,
    /// Whether the export thread and the exporters' threads have ended
    /// (set by `stop`; `true` without exporters).
    pub(super) threads_ended: Mutex<bool>,
    /// [`SamplingMode::ThreadSuspend`]: held while a thread is walked; the
    /// threads destroyed since the current beat's enumeration (`None` once
    /// the sampler thread has ended: nothing is walked any more).
    pub(super) walking: Mutex<Option<Vec<ThreadID>>>,
    /// The GC pauses (`None`: off or not available).
    pub(super) gc: Option<GcPauses>,
    /// The live heap (`None`: off or not available).
    pub(super) live: Option<Arc<LiveHeap>>,
}

pub(super) use crate::facade::sync::lock;

/// A sampling profiler: a thread of its own that, `hz` times a second,
/// suspends the runtime, walks every managed thread's stack, resumes it,
/// and records each stack with the wall time since the last sample and the
/// CPU time the thread used meanwhile; and an allocation sampler fed by
/// the runtime's `GCAllocationTick` events
/// ([`Sampler::event_pipe_event_delivered`]) or by
/// [`Sampler::object_allocated`] ([`AllocationSource`]).
///
/// Use: set [`SamplerOptions::event_masks`] in `initialize`, then
/// [`Sampler::start`]; forward `thread_name_changed`, `thread_destroyed`,
/// `object_allocated` and `event_pipe_event_delivered`; in `shutdown`,
/// [`Sampler::stop`] and write the [`Profile`]. The `sampler` example does
/// exactly that.
pub struct Sampler {
    inner: Arc<Inner>,
    thread: Mutex<Option<JoinHandle<()>>>,
}

impl core::fmt::Debug for Sampler {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Sampler")
            .field("options", &self.inner.options)
            .finish_non_exhaustive()
    }
}

impl Sampler {
    /// A builder: the sampler with `options`, the exporters added to it,
    /// started by [`SamplerBuilder::start`]
    /// (`Sampler::builder(options).exporter(e).start(info)`).
    pub fn builder(options: SamplerOptions) -> SamplerBuilder {
        SamplerBuilder {
            options,
            exporters: Vec::new(),
        }
    }

    /// Starts the sampler thread (named `corprof-sampler`) and, for
    /// [`AllocationSource::AllocationTick`], its EventPipe session (the
    /// event masks of [`SamplerOptions::event_masks`] must be set).
    ///
    /// `E_INVALIDARG` for options [`SamplerOptions::validate`] refuses,
    /// with the [`OptionError`] (the field, the value) as the error's
    /// source; `E_NOTIMPL` when the runtime lacks `ICorProfilerInfo10`
    /// (before .NET Core 3.0), or `ICorProfilerInfo12` for `AllocationTick`
    /// (before .NET 5); the runtime's error when the session cannot start;
    /// `E_FAIL` when the thread cannot be started.
    pub fn start(info: &ProfilerInfo, options: SamplerOptions) -> Result<Sampler> {
        Sampler::start_exporting(info, options, Vec::new())
    }

    /// Like [`start`](Self::start), and every [`SamplerOptions::period`]
    /// hands a profile of that period alone to `exporters`, from an export
    /// thread of its own (`corprof-export`, `corprof::sampling::export`):
    /// the sampler and the application never wait for an export. With no
    /// exporter, there are no periods. [`Sampler::builder`] does the same.
    ///
    /// [`SamplingMode::ThreadSuspend`] is refused (`E_INVALIDARG`, an
    /// [`OptionError`] on `mode`): it needs every `ThreadDestroyed`
    /// forwarded, which only
    /// [`SamplerBuilder::start_forwarding_thread_destroyed`] (`unsafe`)
    /// can be told.
    pub fn start_exporting(
        info: &ProfilerInfo,
        options: SamplerOptions,
        exporters: Vec<alloc::boxed::Box<dyn Exporter>>,
    ) -> Result<Sampler> {
        check_forwarding(&options, false)?;
        let sampler = Sampler::prepare(info, options, exporters)?;
        sampler.launch()?;
        Ok(sampler)
    }

    /// Everything but the sampler thread: the options checked, the export
    /// pipeline, the EventPipe session, signal mode's handler.
    fn prepare(
        info: &ProfilerInfo,
        options: SamplerOptions,
        exporters: Vec<alloc::boxed::Box<dyn Exporter>>,
    ) -> Result<Sampler> {
        options.validate()?;
        if !options.mode.is_available(info) {
            return Err(E_NOTIMPL.into());
        }
        let source = options
            .allocation_mean_bytes
            .and_then(|_| options.allocation_source.resolve(info));
        let export = match exporters.is_empty() {
            true => None,
            false => Some(Pipeline::start(exporters).ok_or(crate::E_FAIL)?),
        };
        // Stopped if the start fails after it (the pipeline, `export`,
        // closes itself when dropped).
        let mut session = SessionGuard {
            info,
            session: None,
        };
        let contention = options.contentions_per_second.is_some() && info.version() >= 12;
        let gc_pauses = options.gc_pauses && info.version() >= 12;
        let live_heap = options
            .heap_objects
            .filter(|_| source.is_some() && info.version() >= 13);
        let (mut keywords, mut level) = (0, INFORMATIONAL);
        if let Some(source) = source {
            if !source.is_available(info) {
                return Err(E_NOTIMPL.into());
            }
        }
        match source {
            Some(AllocationSource::AllocationTick) => (keywords, level) = (GC_KEYWORD, VERBOSE),
            Some(AllocationSource::AllocationSampled) => {
                (keywords, level) = (ALLOCATION_SAMPLING_KEYWORD, INFORMATIONAL);
            }
            _ => {}
        }
        if contention {
            keywords |= CONTENTION_KEYWORD;
        }
        if gc_pauses || live_heap.is_some() {
            // GCStart, GCEnd, GCSuspendEEBegin, GCRestartEEEnd: GC keyword,
            // Informational (a lower level than the ticks' Verbose).
            keywords |= GC_KEYWORD;
            level = level.max(INFORMATIONAL);
        }
        if keywords != 0 {
            session.session = Some(info.event_pipe_start_session(
                &[EventPipeProvider {
                    name: RUNTIME_PROVIDER,
                    keywords,
                    level,
                    filter: None,
                }],
                false,
            )?);
        }
        if options.mode == SamplingMode::Signal && !signal::start(options.hz) {
            // Another signal-mode sampler runs in this process.
            return Err(crate::E_FAIL.into());
        }
        let stats = SamplerStats {
            allocation_source: source,
            contention_available: contention,
            gc_pauses_available: gc_pauses,
            live_heap_available: live_heap.is_some(),
            live_heap_unavailable: match options.heap_objects {
                None => None,
                Some(_) if info.version() < 13 => Some("needs .NET 7"),
                Some(_) if source.is_none() => Some("no allocation samples"),
                Some(_) => None,
            },
            mode: options.mode,
            ..SamplerStats::default()
        };
        let seed = random_seed();
        let inner = Arc::new(Inner {
            info: info.clone(),
            options: options.clone(),
            source,
            session: Mutex::new(session.take()),
            providers: Mutex::new(Vec::new()),
            stop: Mutex::new(false),
            wake: Condvar::new(),
            state: Mutex::new(State::new(Frames::new(), stats)),
            names: Mutex::new(HashMap::new()),
            export,
            exceptions: options
                .exceptions_per_second
                .map(|limit| RateSampler::new(limit, seed)),
            contentions: options
                .contentions_per_second
                .filter(|_| contention)
                .map(|limit| RateSampler::new(limit, seed ^ 0x5DEE_CE66)),
            threads_ended: Mutex::new(true),
            walking: Mutex::new(Some(Vec::new())),
            gc: gc_pauses.then(GcPauses::default),
            live: live_heap.map(|limit| Arc::new(LiveHeap::new(limit))),
        });
        Ok(Sampler {
            inner,
            thread: Mutex::new(None),
        })
    }

    /// Starts the sampler thread of a [`prepare`](Self::prepare)d sampler
    /// (and the live heap's sweeper).
    fn launch(&self) -> Result<()> {
        let inner = &self.inner;
        if let Some(live) = &inner.live {
            // Without its thread the table fills up and stays: still bounded.
            let _ = live.start(&inner.info);
        }
        let worker = Arc::clone(inner);
        let thread = std::thread::Builder::new()
            .name(String::from("corprof-sampler"))
            .spawn(move || run(&worker));
        let Ok(thread) = thread else {
            if let Some(live) = &inner.live {
                live.request_stop();
            }
            inner.stop_session();
            if let Some(export) = &inner.export {
                export.close();
            }
            if inner.options.mode == SamplingMode::Signal {
                signal::stop(&mut SignalStats::default());
            }
            return Err(crate::E_FAIL.into());
        };
        *lock(&self.thread) = Some(thread);
        if inner.options.mode == SamplingMode::Signal {
            // The calling thread (`initialize`'s) may be managed already.
            if let Ok(thread) = inner.info.current_thread() {
                if let Ok(os) = inner.info.os_thread_id(thread) {
                    signal::register_current(thread.as_raw(), os);
                }
            }
        }
        Ok(())
    }

    /// The options it samples with.
    pub fn options(&self) -> &SamplerOptions {
        &self.inner.options
    }

    /// Names a thread (forward `Profiler::thread_name_changed`).
    pub fn thread_name_changed(&self, thread: ThreadID, name: &str) {
        lock(&self.inner.state).thread(thread).name = Some(String::from(name));
    }

    /// Marks a thread gone (forward `Profiler::thread_destroyed`): its
    /// samples are kept, and a new thread reusing its `ThreadID` gets a
    /// profile of its own.
    ///
    /// In [`SamplingMode::ThreadSuspend`] forwarding it is required (the
    /// contract of [`SamplerBuilder::start_forwarding_thread_destroyed`],
    /// the only start of that mode): it waits while the sampler walks that
    /// thread, and the sampler walks no thread destroyed (the runtime frees
    /// its `Thread` after the callback returns, and `DoStackSnapshot` of a
    /// destroyed thread ends the process).
    pub fn thread_destroyed(&self, thread: ThreadID) {
        match self.inner.options.mode {
            // The sampler thread ends the slot once it has recorded the
            // samples the thread's handler already wrote (a sample recorded
            // after that is dropped, not given a new slot).
            SamplingMode::Signal => {
                if signal::deregister(thread.as_raw()) {
                    return;
                }
            }
            SamplingMode::ThreadSuspend => {
                if let Some(destroyed) = lock(&self.inner.walking).as_mut() {
                    destroyed.push(thread);
                }
            }
            SamplingMode::SuspendRuntime => {}
        }
        lock(&self.inner.state).thread_ended(thread);
    }

    /// [`SamplingMode::Signal`]: registers a new thread for sampling when
    /// called on it (forward `Profiler::thread_created`; CoreCLR calls it
    /// on the new thread for threads that enter the runtime from outside).
    pub fn thread_created(&self, thread: ThreadID) {
        if self.inner.options.mode == SamplingMode::Signal {
            if let Ok(os) = self.inner.info.os_thread_id(thread) {
                signal::register_current(thread.as_raw(), os);
            }
        }
    }

    /// [`SamplingMode::Signal`]: registers a thread for sampling when
    /// called on it (forward `Profiler::thread_assigned_to_os_thread`;
    /// CoreCLR calls it on the thread as it starts running).
    pub fn thread_assigned_to_os_thread(&self, thread: ThreadID, os_thread: u32) {
        if self.inner.options.mode == SamplingMode::Signal {
            signal::register_current(thread.as_raw(), os_thread);
        }
    }

    /// Counts an allocation (forward `Profiler::object_allocated`; for
    /// [`AllocationSource::ObjectAllocated`]): on the allocating thread, by
    /// the Poisson countdown of `alloc.rs`; a sampled allocation walks the
    /// thread's stack and records its estimated objects and bytes under the
    /// stack and a last frame `new <Type>`.
    ///
    /// # Safety
    ///
    /// `object` must be the ID of a live object that the garbage collector
    /// cannot move or free during the call (the sampler asks the runtime
    /// for its size, [`ProfilerInfo::object_size`]): forward the arguments
    /// of `Profiler::object_allocated` from inside that callback, on its
    /// thread.
    ///
    /// [`ProfilerInfo::object_size`]: crate::facade::ProfilerInfo::object_size
    pub unsafe fn object_allocated(&self, object: ObjectID, class: ClassID) -> Result<()> {
        let (Some(mean), Some(AllocationSource::ObjectAllocated)) =
            (self.inner.options.allocation_mean_bytes, self.inner.source)
        else {
            return Ok(());
        };
        let info = &self.inner.info;
        // SAFETY: `object` is live and does not move (this function's
        // contract, which `Profiler::object_allocated`'s argument meets).
        let size = unsafe { info.object_size(object) }? as u64;
        if !countdown(size, mean) {
            return Ok(());
        }
        let weight = allocation_weight(size, mean);
        let type_name = info.class_name(class).unwrap_or_else(|_| String::from("?"));
        let object = NewObject::Initialised(object);
        // SAFETY: `object` is the callback's live object, on its thread
        // (this function's contract).
        unsafe {
            self.inner
                .record_allocation(&type_name, weight.objects, weight.bytes, Some(object))
        }
    }

    /// Counts the allocations a `GCAllocationTick` event stands for
    /// (forward `Profiler::event_pipe_event_delivered`; for
    /// [`AllocationSource::AllocationTick`]; other events are ignored).
    ///
    /// The runtime writes the event on the allocating thread each time
    /// about 100 KB have been allocated since the last one, naming the
    /// object whose allocation crossed the threshold: the event stands for
    /// `AllocationAmount64` bytes of that object's type, a size-biased
    /// sample. The Poisson countdown of `alloc.rs` runs over those amounts
    /// (so the mean interval still applies); a sampled event walks the
    /// thread's stack and records `amount / p` bytes and that divided by
    /// `ObjectSize` objects under the stack and a last frame `new <Type>`.
    /// An event that cannot be decoded is counted in
    /// [`SamplerStats::undecoded_ticks`], never an error.
    ///
    /// The live heap is not fed from here (its objects' handles need the
    /// event to be the runtime's own): forward the runtime's events with
    /// [`event_pipe_event_delivered_from_runtime`](Self::event_pipe_event_delivered_from_runtime)
    /// to have it.
    pub fn event_pipe_event_delivered(&self, event: &EventPipeEvent<'_>) -> Result<()> {
        self.delivered(event, false)
    }

    /// [`event_pipe_event_delivered`](Self::event_pipe_event_delivered),
    /// and each allocation recorded is also tracked by the live heap
    /// ([`SamplerOptions::heap_objects`]): a weak handle to its object,
    /// made on this thread after the object's MethodTable is written into
    /// its first word (`live_heap.rs`; the object is not initialised yet
    /// when the runtime writes the event).
    ///
    /// # Safety
    ///
    /// `event` must be the runtime's own, forwarded from inside
    /// `Profiler::event_pipe_event_delivered` on the thread the runtime
    /// called it on: the `Address` and `TypeID` of an `AllocationSampled`
    /// or `GCAllocationTick` event are then the object this thread is
    /// allocating and its MethodTable.
    pub unsafe fn event_pipe_event_delivered_from_runtime(
        &self,
        event: &EventPipeEvent<'_>,
    ) -> Result<()> {
        self.delivered(event, true)
    }

    /// The events; `trusted`: `event` is the runtime's own, on its thread.
    fn delivered(&self, event: &EventPipeEvent<'_>, trusted: bool) -> Result<()> {
        if (self.inner.gc.is_some() || self.inner.live.is_some())
            && is_gc_event(event.event_id)
            && self.inner.is_runtime_provider(event.provider)
            && !EventMetadata::parse(event.metadata).is_ok_and(|m| !m.fields.is_empty())
        {
            let decoded = decode_gc_event(event.event_id, event.event_version, event.data);
            if let (Some(live), Some(GcEvent::End)) = (&self.inner.live, decoded) {
                live.gc_ended();
            }
            if let Some(gc) = &self.inner.gc {
                gc.event(decoded, Instant::now());
            }
            return Ok(());
        }
        let contention = event.event_id == CONTENTION_START || event.event_id == CONTENTION_STOP;
        if contention
            && self.inner.contentions.is_some()
            && self.inner.is_runtime_provider(event.provider)
        {
            return self.inner.record_contention(event);
        }
        if self.inner.source == Some(AllocationSource::AllocationSampled) {
            return self.allocation_sampled(event, trusted);
        }
        let (Some(mean), Some(AllocationSource::AllocationTick)) =
            (self.inner.options.allocation_mean_bytes, self.inner.source)
        else {
            return Ok(());
        };
        if event.event_id != ALLOCATION_TICK || !self.inner.is_runtime_provider(event.provider) {
            return Ok(());
        }
        // Events that describe their own fields are the managed part of the
        // provider (its NativeRuntimeEventSource on .NET 8), not the GC's.
        if EventMetadata::parse(event.metadata).is_ok_and(|m| !m.fields.is_empty()) {
            return Ok(());
        }
        let tick = allocation_tick(event);
        {
            let mut state = lock(&self.inner.state);
            state.stats.allocation_ticks += 1;
            state.stats.undecoded_ticks += u64::from(tick.is_none());
        }
        let Some((amount, type_name, object_size, object)) = tick else {
            return Ok(());
        };
        if amount == 0 || !countdown(amount, mean) {
            return Ok(());
        }
        let weight = allocation_weight(amount, mean);
        let objects = match object_size {
            Some(size) if size > 0 => weight.bytes / size as f64,
            _ => weight.objects,
        };
        let object = object.filter(|_| trusted);
        // SAFETY: with `trusted`, the runtime's own event on its thread:
        // `object` is the object this thread is allocating.
        unsafe {
            self.inner
                .record_allocation(&type_name, objects, weight.bytes, object)
        }
    }

    /// An `AllocationSampled` event ([`AllocationSource::AllocationSampled`];
    /// others are ignored): the runtime sampled a byte of the object this
    /// thread just allocated. The event stands for
    /// [`allocation_sampled_weight`](super::allocation_sampled_weight) of its `ObjectSize`; the Poisson
    /// countdown of `alloc.rs` then runs over those bytes (so the mean
    /// interval still applies: with the default 512 KiB, about one event
    /// in five is kept), a kept event weighing `w / p'` bytes and objects,
    /// `p' = 1 - exp(-w / mean)` for its `w` estimated bytes. Both
    /// samplings are independent: the product is unbiased. A sampled event
    /// walks the thread's stack and records those under a last frame `new
    /// <Type>` (the event's `TypeName`, or the runtime's name of its
    /// `TypeID` when that is empty). An event that cannot be decoded is
    /// counted in [`SamplerStats::undecoded_sampled_events`].
    fn allocation_sampled(&self, event: &EventPipeEvent<'_>, trusted: bool) -> Result<()> {
        let Some(mean) = self.inner.options.allocation_mean_bytes else {
            return Ok(());
        };
        if event.event_id != ALLOCATION_SAMPLED || !self.inner.is_runtime_provider(event.provider) {
            return Ok(());
        }
        // As for the ticks: the provider's managed half is not the GC's.
        if EventMetadata::parse(event.metadata).is_ok_and(|m| !m.fields.is_empty()) {
            return Ok(());
        }
        let sampled = allocation_sampled(event);
        {
            let mut state = lock(&self.inner.state);
            state.stats.allocation_sampled_events += 1;
            state.stats.undecoded_sampled_events += u64::from(sampled.is_none());
        }
        let Some((size, type_id, type_name, address)) = sampled else {
            return Ok(());
        };
        let weight = allocation_sampled_weight(size);
        let estimated = weight.bytes.round() as u64;
        if !countdown(estimated, mean) {
            return Ok(());
        }
        let kept = allocation_weight(estimated, mean);
        let type_name = match type_name {
            Some(name) => name,
            // SAFETY: a TypeID the runtime just named for an object of this
            // thread: a loaded type's MethodTable, which is its ClassID.
            None => self
                .inner
                .info
                .class_name(unsafe { ClassID::from_raw(type_id) })
                .unwrap_or_else(|_| String::from("?")),
        };
        let object = trusted.then_some(NewObject::Uninitialised {
            address,
            method_table: type_id,
        });
        // SAFETY: with `trusted`, the runtime's own event on its thread:
        // `address` is the object this thread is allocating, `type_id` its
        // MethodTable.
        unsafe {
            self.inner.record_allocation(
                &type_name,
                weight.objects * kept.objects,
                kept.bytes,
                object,
            )
        }
    }

    /// Counts a thrown exception (forward `Profiler::exception_thrown`;
    /// the event masks of [`SamplerOptions::event_masks`] enable it): on
    /// the throwing thread, its stack and a last frame of the exception's
    /// type, with a count of 1, or beyond
    /// [`SamplerOptions::exceptions_per_second`] a uniform sample with
    /// upweighted counts.
    ///
    /// # Safety
    ///
    /// `thrown` must be the ID of a live object that the garbage collector
    /// cannot move or free during the call (the sampler asks the runtime for
    /// its class, [`ProfilerInfo::class_of`]): forward the argument of
    /// `Profiler::exception_thrown` from inside that callback, on its thread.
    ///
    /// [`ProfilerInfo::class_of`]: crate::facade::ProfilerInfo::class_of
    pub unsafe fn exception_thrown(&self, thrown: ObjectID) -> Result<()> {
        let Some(sampler) = &self.inner.exceptions else {
            return Ok(());
        };
        let weight = sampler.weigh(Instant::now());
        lock(&self.inner.state).stats.exceptions_thrown += 1;
        let Some(count) = weight else {
            return Ok(());
        };
        let info = &self.inner.info;
        // SAFETY: the caller's contract: `thrown` is live and does not move
        // during this call.
        let type_name = unsafe { info.class_of(thrown) }
            .and_then(|class| info.class_name(class))
            .unwrap_or_else(|_| String::from("?"));
        let mut values = [0; SAMPLE_TYPES.len()];
        values[EXCEPTIONS] = count;
        self.inner.record_here(Some(&type_name), &values, |stats| {
            stats.exceptions_recorded += 1;
        })
    }

    /// Stops the sampler thread and waits for it, and stops the EventPipe
    /// session (idempotent); call it in `shutdown`, before the runtime goes
    /// away. Returns what was sampled.
    pub fn stop(&self) -> Profile {
        self.inner.stop_session();
        *lock(&self.inner.stop) = true;
        self.inner.wake.notify_all();
        if let Some(thread) = lock(&self.thread).take() {
            let _ = thread.join();
            // The last, partial period, then what the exporters still hold.
            self.inner.cut_period(Instant::now());
            if let Some(export) = &self.inner.export {
                let ended = export.finish(FINISH_TIMEOUT);
                *lock(&self.inner.threads_ended) = ended;
            }
        }
        let profile = {
            let live = self.inner.live_snapshot();
            let mut state = lock(&self.inner.state);
            let stopped = *state.stopped.get_or_insert_with(Instant::now);
            let duration = stopped - state.start;
            self.inner.profile(&state, duration, live)
        };
        if let Some(live) = &self.inner.live {
            // Its handles go back before the runtime goes away.
            live.stop(&self.inner.info);
        }
        profile
    }

    /// Whether every thread the sampler started (sampling, export, and the
    /// exporters' own) has ended and no `SIGPROF` handler of the sampler's
    /// is installed ([`SamplingMode::Signal`]: the stop puts the previous
    /// one back): `true` after [`stop`](Self::stop) unless an exporter was
    /// left stuck or the handler had to stay (another signal-mode sampler
    /// runs, or a handler installed later chains to it). What a profiler
    /// that detaches must know: see `ProfilerInfo::request_profiler_detach`.
    pub fn threads_ended(&self) -> bool {
        lock(&self.thread).is_none()
            && *lock(&self.inner.threads_ended)
            && self
                .inner
                .live
                .as_ref()
                .map_or(true, |live| live.thread_ended())
            && !signal::handler_installed()
    }

    /// What the exporters did so far (all zero without exporters); after
    /// [`stop`](Self::stop), in full.
    pub fn export_stats(&self) -> ExportStats {
        self.inner
            .export
            .as_ref()
            .map_or_else(ExportStats::default, Pipeline::stats)
    }

    /// What was sampled so far (the sampler keeps running).
    pub fn profile(&self) -> Profile {
        let live = self.inner.live_snapshot();
        let state = lock(&self.inner.state);
        let duration = state.start.elapsed();
        self.inner.profile(&state, duration, live)
    }
}

impl Drop for Sampler {
    fn drop(&mut self) {
        if let Some(live) = &self.inner.live {
            live.request_stop();
        }
        *lock(&self.inner.stop) = true;
        self.inner.wake.notify_all();
        if let Some(export) = &self.inner.export {
            export.close();
        }
    }
}

/// The sampler's EventPipe session while `start_exporting` runs: stopped
/// when dropped, unless [`taken`](SessionGuard::take) by the sampler.
struct SessionGuard<'a> {
    info: &'a ProfilerInfo,
    session: Option<EVENTPIPE_SESSION>,
}

impl SessionGuard<'_> {
    fn take(&mut self) -> Option<EVENTPIPE_SESSION> {
        self.session.take()
    }
}

impl Drop for SessionGuard<'_> {
    fn drop(&mut self) {
        if let Some(session) = self.session.take() {
            // Nothing to do about a failure on an error path but go on.
            let _ = self.info.event_pipe_stop_session(session);
        }
    }
}

/// The calling thread's Poisson countdown over `size` bytes of mean
/// `mean`: `true` when this allocation is sampled.
fn countdown(size: u64, mean: u64) -> bool {
    std::thread_local! {
        // Seeded by the thread-local's own address and the time, so
        // that threads draw different intervals.
        static COUNTDOWN: AllocationCountdown = AllocationCountdown::new({
            let here = 0u8;
            let now = SystemTime::now()
                .duration_since(SystemTime::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos() as u64);
            (&here as *const u8 as u64) ^ now ^ 0x9E37_79B9_7F4A_7C15
        });
    }
    COUNTDOWN.with(|countdown| countdown.allocated(size, mean))
}

/// A `GCAllocationTick` event of the runtime, laid out by the manifest:
/// its `AllocationAmount64`, `TypeName` and `ObjectSize` (version 4 and
/// later). `None` when it does not decode.
#[allow(clippy::type_complexity)]
fn allocation_tick(
    event: &EventPipeEvent<'_>,
) -> Option<(u64, String, Option<u64>, Option<NewObject>)> {
    let fields = runtime_fields(event.event_id, event.event_version)?;
    let values = decode_payload(&fields, event.data).ok()?;
    let field = |name: &str| -> Option<&Value> {
        let index = fields.iter().position(|f| f.name == name)?;
        values.get(index)
    };
    let amount = field("AllocationAmount64")?.as_u64()?;
    let type_name = String::from(field("TypeName")?.as_str()?);
    let object_size = field("ObjectSize").and_then(Value::as_u64);
    // Version 3 and later: the object's address, and its MethodTable.
    let address = field("Address").and_then(Value::as_u64);
    let method_table = field("TypeID").and_then(Value::as_u64);
    let object = match (address, method_table) {
        (Some(address), Some(method_table)) => Some(NewObject::Uninitialised {
            address: usize::try_from(address).ok()?,
            method_table: usize::try_from(method_table).ok()?,
        }),
        _ => None,
    };
    Some((amount, type_name, object_size, object))
}

/// An `AllocationSampled` event of the runtime, laid out by the manifest:
/// its `ObjectSize`, `TypeID` and `TypeName` (`None` when empty). `None`
/// when it does not decode or names no size.
fn allocation_sampled(event: &EventPipeEvent<'_>) -> Option<(u64, usize, Option<String>, usize)> {
    let fields = runtime_fields(event.event_id, event.event_version)?;
    let values = decode_payload(&fields, event.data).ok()?;
    let field = |name: &str| -> Option<&Value> {
        let index = fields.iter().position(|f| f.name == name)?;
        values.get(index)
    };
    let size = field("ObjectSize")?.as_u64().filter(|&s| s > 0)?;
    let type_id = usize::try_from(field("TypeID")?.as_u64()?).ok()?;
    let name = field("TypeName")?.as_str()?;
    let name = (!name.is_empty()).then(|| String::from(name));
    let address = usize::try_from(field("Address")?.as_u64()?).ok()?;
    Some((size, type_id, name, address))
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

impl Inner {
    /// Stops the EventPipe session, if there is one (once).
    fn stop_session(&self) {
        if let Some(session) = lock(&self.session).take() {
            // Nothing to do about a failure at shutdown but go on.
            let _ = self.info.event_pipe_stop_session(session);
        }
    }

    /// Whether `provider` is the runtime's own (asked once per provider).
    fn is_runtime_provider(&self, provider: EVENTPIPE_PROVIDER) -> bool {
        if let Some(&(_, known)) = lock(&self.providers).iter().find(|p| p.0 == provider) {
            return known;
        }
        let runtime = self
            .info
            .event_pipe_provider_name(provider)
            .is_ok_and(|name| name == RUNTIME_PROVIDER);
        lock(&self.providers).push((provider, runtime));
        runtime
    }

    /// Records a sampled allocation on the calling (allocating) thread:
    /// its stack, a last frame `new <type_name>`, and the estimated objects
    /// and bytes it stands for.
    ///
    /// With the live heap on and `object` given, the object is tracked at
    /// the same stack and weights.
    ///
    /// # Safety
    ///
    /// `object`, if given, is the object the calling thread is allocating,
    /// inside the runtime's callback that reported it
    /// ([`LiveHeap::track`]'s contract).
    unsafe fn record_allocation(
        &self,
        type_name: &str,
        objects: f64,
        bytes: f64,
        object: Option<NewObject>,
    ) -> Result<()> {
        let values = [0, 0, objects.round() as u64, bytes.round() as u64];
        let leaf = String::from("new ") + type_name;
        let stack =
            self.record_here_stack(Some(&leaf), &values, |stats| stats.allocation_samples += 1)?;
        if let (Some(live), Some(object)) = (&self.live, object) {
            // SAFETY: this function's contract.
            unsafe { live.track(&self.info, object, stack, objects, bytes) };
        }
        Ok(())
    }

    /// A `ContentionStart` or `ContentionStop` event, on the waiting
    /// thread: a start is noted; a stop is counted, and recorded (its
    /// stack, a count and the time waited, from the event's `DurationNs`
    /// or from the start) up to the rate limit, sampled and upweighted
    /// beyond. An event that does not decode is counted, never an error.
    fn record_contention(&self, event: &EventPipeEvent<'_>) -> Result<()> {
        let now = Instant::now();
        let Some(sampler) = &self.contentions else {
            return Ok(());
        };
        // Events that describe their own fields (the provider's managed
        // half) are read by those fields, the others by the manifest's.
        let decoded = match EventMetadata::parse(event.metadata) {
            Ok(m) if !m.fields.is_empty() => {
                decode_contention_with(event.event_id, &m.fields, event.data)
            }
            _ => decode_contention(event.event_id, event.event_version, event.data),
        };
        let (native, duration) = match decoded {
            None => {
                lock(&self.state).stats.undecoded_contentions += 1;
                return Ok(());
            }
            Some(Contention::Start { .. }) => {
                super::contention::started(now);
                return Ok(());
            }
            Some(Contention::Stop {
                native,
                duration_nanos,
            }) => (native, duration_nanos),
        };
        let waited = super::contention::waited(now);
        let nanos = duration.map_or(waited.unwrap_or(0), |d| d.min(u64::MAX as f64) as u64);
        lock(&self.state).stats.contentions += 1;
        let Some(count) = sampler.weigh(now) else {
            return Ok(());
        };
        let mut values = [0; SAMPLE_TYPES.len()];
        values[LOCK_COUNT] = count;
        values[LOCK_TIME] = nanos.saturating_mul(count);
        let leaf = native.then_some("[native lock]");
        self.record_here(leaf, &values, |stats| stats.contentions_recorded += 1)
    }

    /// Records `values` on the calling thread: its stack and a last frame
    /// `leaf` if given; `count` updates the statistics.
    fn record_here(
        &self,
        leaf: Option<&str>,
        values: &[u64],
        count: impl FnOnce(&mut SamplerStats),
    ) -> Result<()> {
        self.record_here_stack(leaf, values, count).map(|_| ())
    }

    /// [`record_here`](Self::record_here), giving the stack recorded.
    fn record_here_stack(
        &self,
        leaf: Option<&str>,
        values: &[u64],
        count: impl FnOnce(&mut SamplerStats),
    ) -> Result<Vec<FrameId>> {
        let thread = self.info.current_thread()?;
        let mut frames = Vec::with_capacity(64);
        let walked = self
            .info
            .stack_snapshot(ThreadID::NULL, |frame| {
                push_frame(&mut frames, frame);
                true
            })
            .is_ok();
        let mut stack = self.resolve(&frames);
        let mut state = lock(&self.state);
        if !walked || stack.is_empty() {
            stack = alloc::vec![state.no_managed];
        }
        count(&mut state.stats);
        if let Some(leaf) = leaf {
            let leaf = state.frames.intern(leaf);
            stack.push(leaf);
        }
        let periods = self.export.is_some();
        state.thread(thread).add(&stack, values, periods);
        Ok(stack)
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

    /// Ends the current period at `now` and hands its profile to the
    /// export thread (nothing without exporters). The period's trees are
    /// moved out and rebuilt over a frame table of their own, so that the
    /// profile names only what the period holds.
    pub(super) fn cut_period(&self, now: Instant) {
        let Some(export) = &self.export else {
            return;
        };
        // Before `state`: the snapshot may wait for a sweep, which calls the
        // runtime; nothing that waits for the runtime holds `state`.
        let live = self.live_snapshot();
        let mut state = lock(&self.state);
        let state = &mut *state;
        let mut frames = Frames::new();
        let mut threads = Vec::new();
        for t in &mut state.threads {
            if t.period.len() <= 1 {
                continue;
            }
            let period = core::mem::replace(&mut t.period, StackTree::new(SAMPLE_TYPES.len()));
            let mut tree = StackTree::new(SAMPLE_TYPES.len());
            tree.merge(&mut frames, &period, &state.frames);
            threads.push(ThreadProfile {
                name: t
                    .name
                    .clone()
                    .unwrap_or_else(|| alloc::format!("Thread {}", t.os_thread)),
                os_thread: t.os_thread,
                tree,
            });
        }
        if let Some(gc) = &self.gc {
            threads.extend(gc_thread(&mut frames, &gc.take_period()));
        }
        if let Some(live) = &live {
            threads.extend(live_threads(&mut frames, &state.frames, live));
        }
        let started = state.started + (state.period_start - state.start);
        let duration = now.saturating_duration_since(state.period_start);
        state.period_start = now;
        let stats = SamplerStats {
            allocation_source: state.stats.allocation_source,
            ..SamplerStats::default()
        };
        export.hand(Profile {
            frames,
            threads,
            started,
            duration,
            period_nanos: sample_interval(self.options.hz).as_nanos() as u64,
            stats,
        });
    }

    /// The live heap's objects now (`None` without a live heap); taken
    /// with no lock of the sampler's held.
    fn live_snapshot(&self) -> Option<Vec<LiveObject>> {
        self.live.as_ref().map(|live| live.snapshot())
    }

    fn profile(&self, state: &State, duration: Duration, live: Option<Vec<LiveObject>>) -> Profile {
        let free: std::collections::HashSet<usize> = state.free.iter().copied().collect();
        let mut frames = state.frames.clone();
        let mut stats = state.stats.clone();
        let mut gc_threads = Vec::new();
        if let Some(gc) = &self.gc {
            gc_threads.extend(gc_thread(&mut frames, &gc.run()));
            stats.gc_pauses = gc.stats();
        }
        if let (Some(heap), Some(live)) = (&self.live, &live) {
            gc_threads.extend(live_threads(&mut frames, &state.frames, live));
            stats.live_heap = heap.stats();
        }
        let mut profile = Profile {
            frames,
            threads: state
                .threads
                .iter()
                .enumerate()
                .filter(|(index, _)| !free.contains(index))
                .map(|(_, t)| ThreadProfile {
                    name: t
                        .name
                        .clone()
                        .unwrap_or_else(|| alloc::format!("Thread {}", t.os_thread)),
                    os_thread: t.os_thread,
                    tree: t.tree.clone(),
                })
                .collect(),
            started: state.started,
            duration,
            period_nanos: sample_interval(self.options.hz).as_nanos() as u64,
            stats,
        };
        profile.threads.extend(gc_threads);
        profile
    }
}

/// The sampler thread; records its own CPU time when it ends.
fn run(inner: &Inner) {
    match inner.options.mode {
        SamplingMode::Signal => super::signal_loop::run_signal(inner),
        SamplingMode::ThreadSuspend => super::thread_suspend::run(inner),
        SamplingMode::SuspendRuntime => super::suspend_runtime::run_loop(inner),
    }
    if let Some(nanos) = current_thread_cpu_nanos() {
        lock(&inner.state).stats.sampler_cpu_nanos = nanos;
    }
}

/// Waits until `deadline` or a stop; `true` on a stop.
pub(super) fn wait_until(inner: &Inner, deadline: Instant) -> bool {
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
pub(super) fn beats(inner: &Inner, mut sample: impl FnMut(Instant) -> ControlFlow<()>) {
    let period = sample_interval(inner.options.hz);
    let mut next = Instant::now() + period;
    // Never 0: xorshift would stay at 0, and the beat would not jitter.
    let mut jitter = random_seed() | 1;
    // The end of the current period, when exporting.
    let mut period_end = inner
        .export
        .as_ref()
        .map(|_| Instant::now() + inner.options.period);
    loop {
        {
            let mut stop = lock(&inner.stop);
            loop {
                if *stop {
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
            inner.cut_period(now);
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
            .with_heap_objects(None);
        assert_eq!(off.validate(), Ok(()));
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
            .with_heap_objects(Some(64));
        let expected = SamplerOptions {
            hz: 250,
            allocation_source: AllocationSource::ObjectAllocated,
            period: Duration::from_secs(5),
            mode: SamplingMode::SuspendRuntime,
            wall_threads_per_tick: 9,
            gc_pauses: false,
            heap_objects: Some(64),
            ..SamplerOptions::default()
        };
        assert_eq!(options, expected);
        assert_ne!(options, SamplerOptions::default());
    }

    /// Safe code cannot start the thread-suspend mode (the unsafe start
    /// can; that safe code cannot call it is ui-tests/
    /// thread_suspend_needs_unsafe.rs).
    #[test]
    fn the_safe_start_refuses_the_thread_suspend_mode() {
        let options = SamplerOptions::default().with_mode(SamplingMode::ThreadSuspend);
        let error = check_forwarding(&options, false).unwrap_err();
        assert_eq!(error.code(), crate::E_INVALIDARG);
        let text = alloc::format!("{error}");
        assert!(
            text.contains("SamplerOptions::mode = ThreadSuspend: must be Signal or SuspendRuntime"),
            "{text}"
        );
        assert!(check_forwarding(&options, true).is_ok());
        for mode in [SamplingMode::Signal, SamplingMode::SuspendRuntime] {
            assert!(check_forwarding(&SamplerOptions::default().with_mode(mode), false).is_ok());
        }
    }

    #[test]
    fn the_interval_of_a_rate() {
        assert_eq!(sample_interval(99), Duration::from_nanos(10_101_010));
        assert_eq!(sample_interval(1), Duration::from_secs(1));
        assert_eq!(sample_interval(MAX_HZ), Duration::from_micros(100));
        assert_eq!(sample_interval(0), Duration::from_secs(1));
    }

    /// Seeds differ call to call and are never 0 (the jitter of the beat
    /// and the rate samplers' draws start from them).
    #[test]
    fn seeds_differ_and_are_never_zero() {
        let seeds: alloc::vec::Vec<u64> = (0..64).map(|_| random_seed()).collect();
        assert!(seeds.iter().all(|&s| s != 0));
        let distinct: std::collections::HashSet<u64> = seeds.iter().copied().collect();
        assert_eq!(distinct.len(), seeds.len());
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
            thread.add(&[work], &values, true);
            state.thread_ended(id(n));
        }
        // A thread that never got a sample leaves nothing behind.
        state.thread(id(5000));
        state.thread_ended(id(5000));
        // A live one keeps its own slot.
        state.thread(id(7000)).add(&[work], &values, false);
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
