//! The sampler's configuration from the environment: one table of
//! variables, read by [`SamplerOptions::from_env`] and
//! [`SamplingProfiler::from_env`](super::SamplingProfiler::from_env).

use alloc::format;
use alloc::string::String;

use super::mode::SamplingMode;
use super::options::{AllocationSource, SamplerOptions};
use super::triggers::{Trigger, SUPPORTED_TRIGGERS};
use crate::{Error, E_INVALIDARG};

/// Samples per second (`SamplerOptions::hz`): 1 to 10,000, default 99.
pub(crate) const SAMPLER_HZ: &str = "CORPROF_SAMPLER_HZ";
/// The mean allocation sampling interval in bytes
/// (`SamplerOptions::allocation_mean_bytes`): 0 (allocation sampling off)
/// to 2^40, default 524,288.
pub(crate) const SAMPLER_ALLOC_BYTES: &str = "CORPROF_SAMPLER_ALLOC_BYTES";
/// Where allocations come from (`SamplerOptions::allocation_source`):
/// `auto` (the default), `allocation-sampled`, `allocation-tick` or
/// `object-allocated`.
pub(crate) const SAMPLER_ALLOC_SOURCE: &str = "CORPROF_SAMPLER_ALLOC_SOURCE";
/// Whether GC pauses are measured (`SamplerOptions::gc_pauses`): a
/// boolean (`0`, `1`, `true`, `false`, `yes`, `no`, `on`, `off`), default on.
pub(crate) const SAMPLER_GC_PAUSES: &str = "CORPROF_SAMPLER_GC_PAUSES";
/// Whether samples carry their thread's span (`SamplerOptions::spans`): a
/// boolean, default off.
pub(crate) const SAMPLER_SPANS: &str = "CORPROF_SAMPLER_SPANS";
/// Blocking waits recorded in full per second
/// (`SamplerOptions::waits_per_second`): 0 (wait profiling off) to
/// 1,000,000, default 500.
pub(crate) const SAMPLER_WAITS: &str = "CORPROF_SAMPLER_WAITS";
/// Signal mode: the most threads signalled for a wall-time sample per tick
/// (`SamplerOptions::wall_threads_per_tick`): 1 to 1,024, default 5.
pub(crate) const SAMPLER_WALL_THREADS: &str = "CORPROF_SAMPLER_WALL_THREADS";
/// The most sampled objects the live heap tracks
/// (`SamplerOptions::heap_objects`): 0 (no live heap) to 1,000,000, default
/// 4,096.
pub(crate) const SAMPLER_HEAP_OBJECTS: &str = "CORPROF_SAMPLER_HEAP_OBJECTS";
/// Seconds between heap snapshots (`SamplerOptions::heap_snapshot_every`):
/// 0 (none, the default) to 86400.
pub(crate) const SAMPLER_HEAP_SNAPSHOT_EVERY: &str = "CORPROF_SAMPLER_HEAP_SNAPSHOT_EVERY";
/// The directory [`SamplingProfiler`](super::SamplingProfiler) writes its
/// outputs to at shutdown (created if missing); unset: nothing is written.
pub(crate) const SAMPLER_DIR: &str = "CORPROF_SAMPLER_DIR";
/// How stacks are sampled (`SamplerOptions::mode`): `signal` (the default
/// on Linux x86-64 and AArch64), `suspend-runtime` or `thread-suspend`.
pub(crate) const SAMPLER_MODE: &str = "CORPROF_SAMPLER_MODE";
/// The period of continuous profiles in seconds (`SamplerOptions::period`):
/// 1 to 86400, default 60.
pub(crate) const SAMPLER_PERIOD: &str = "CORPROF_SAMPLER_PERIOD";
/// How many period files the directory keeps: 1 to 1,000,000, default 60.
pub(crate) const SAMPLER_KEEP: &str = "CORPROF_SAMPLER_KEEP";
/// The Pyroscope-compatible profile server (`http://host:port`).
pub(crate) const SAMPLER_PUSH_URL: &str = "CORPROF_SAMPLER_PUSH_URL";
/// Which of Pyroscope's APIs the push speaks: `ingest` (the default) or
/// `push` (`push.v1.PusherService/Push`).
pub(crate) const SAMPLER_PUSH_API: &str = "CORPROF_SAMPLER_PUSH_API";
/// The tenant of a multi-tenant Pyroscope (`X-Scope-OrgID` of the push API).
pub(crate) const SAMPLER_TENANT: &str = "CORPROF_SAMPLER_TENANT";
/// The application's name on the profile server (default: the process's).
pub(crate) const SAMPLER_APP: &str = "CORPROF_SAMPLER_APP";

/// The incident rules (`SamplerOptions::triggers`): `;`-separated,
/// each `kind:threshold[:...]` (`triggers.rs`).
pub(crate) const SAMPLER_TRIGGERS: &str = "CORPROF_SAMPLER_TRIGGERS";
/// Seconds a rule stays quiet after it fired
/// (`SamplerOptions::trigger_interval`): 1 to 86400, default 300.
pub(crate) const SAMPLER_TRIGGER_INTERVAL: &str = "CORPROF_SAMPLER_TRIGGER_INTERVAL";
/// Seconds the flight recorder keeps (`SamplerOptions::recorder_seconds`):
/// 1 to 3600, default 60.
pub(crate) const SAMPLER_RECORDER_SECONDS: &str = "CORPROF_SAMPLER_RECORDER_SECONDS";

/// `name`'s value (`None` when unset), or an error naming it when it is not
/// Unicode.
pub(crate) fn var(name: &'static str) -> Result<Option<String>, Error> {
    match std::env::var(name) {
        Ok(value) => Ok(Some(value)),
        Err(std::env::VarError::NotPresent) => Ok(None),
        Err(std::env::VarError::NotUnicode(_)) => Err(Error::new(
            E_INVALIDARG,
            format!("{name} is not valid Unicode"),
        )),
    }
}

/// `name` as a number in `min..=max`, or `default` when unset.
pub(crate) fn number(name: &'static str, default: u64, min: u64, max: u64) -> Result<u64, Error> {
    let Some(text) = var(name)? else {
        return Ok(default);
    };
    match text.trim().parse::<u64>() {
        Ok(value) if (min..=max).contains(&value) => Ok(value),
        _ => Err(Error::new(
            E_INVALIDARG,
            format!("{name}={text:?} is not a number from {min} to {max}"),
        )),
    }
}

impl SamplerOptions {
    /// The options the environment asks for, the defaults for variables
    /// that are unset:
    ///
    /// | variable | meaning | values (default) |
    /// |---|---|---|
    /// | `CORPROF_SAMPLER_HZ` | samples per second ([`hz`](SamplerOptions::hz)) | 1 to 10000 (99) |
    /// | `CORPROF_SAMPLER_ALLOC_BYTES` | mean allocation sampling interval in bytes ([`allocation_mean_bytes`](SamplerOptions::allocation_mean_bytes)); `0` turns allocation sampling off | 0 to 2^40 (524288) |
    /// | `CORPROF_SAMPLER_ALLOC_SOURCE` | where allocations come from ([`allocation_source`](SamplerOptions::allocation_source)): `auto` is `allocation-sampled` on .NET 10 and later, `allocation-tick` on .NET 5 to 9, none before (`object-allocated` slows every allocation: only when asked) | `auto`, `allocation-sampled`, `allocation-tick`, `object-allocated` (`auto`) |
    /// | `CORPROF_SAMPLER_MODE` | how stacks are sampled ([`mode`](SamplerOptions::mode)) | `signal`, `suspend-runtime`, `thread-suspend` (`signal` on Linux x86-64 and AArch64, `thread-suspend` on Windows x64, `suspend-runtime` elsewhere) |
    /// | `CORPROF_SAMPLER_PERIOD` | seconds per continuous profile ([`period`](SamplerOptions::period)) | 1 to 86400 (60) |
    /// | `CORPROF_SAMPLER_HEAP_OBJECTS` | the most sampled objects the live heap tracks ([`heap_objects`](SamplerOptions::heap_objects); .NET 7 and later); `0` turns the live heap off | 0 to 1000000 (4096) |
    /// | `CORPROF_SAMPLER_HEAP_SNAPSHOT_EVERY` | seconds between heap snapshots ([`heap_snapshot_every`](SamplerOptions::heap_snapshot_every); .NET 9 and later; written into `CORPROF_SAMPLER_DIR`); `0` takes none | 0 to 86400 (0) |
    /// | `CORPROF_SAMPLER_TRIGGERS` | incident rules ([`triggers`](SamplerOptions::triggers)), `;`-separated: `cpu:90%:3s`, `gc-pause:200ms`, `exception:System.TimeoutException:50:5s`, `gc-heap:512MB`, `heap-growth:50MB:60s` (docs/sampling.md, "Incidents"); written into `CORPROF_SAMPLER_DIR` | (none) |
    /// | `CORPROF_SAMPLER_TRIGGER_INTERVAL` | seconds a rule stays quiet after it fired ([`trigger_interval`](SamplerOptions::trigger_interval)) | 1 to 86400 (300) |
    /// | `CORPROF_SAMPLER_RECORDER_SECONDS` | seconds the flight recorder keeps for an incident ([`recorder_seconds`](SamplerOptions::recorder_seconds)) | 1 to 3600 (60) |
    /// | `CORPROF_SAMPLER_WAITS` | blocking waits recorded in full per second, beyond which they are sampled ([`waits_per_second`](SamplerOptions::waits_per_second); .NET 9 and later); `0` turns wait profiling off | 0 to 1000000 (500) |
    /// | `CORPROF_SAMPLER_WALL_THREADS` | signal mode: the most threads signalled for a wall-time sample per tick, round-robin ([`wall_threads_per_tick`](SamplerOptions::wall_threads_per_tick)) | 1 to 1024 (5) |
    /// | `CORPROF_SAMPLER_SPANS` | whether CPU and wall samples carry the trace and span ids of the `Activity` current on their thread ([`spans`](SamplerOptions::spans); signal mode; needs the span helper in `DOTNET_STARTUP_HOOKS`, docs/sampling.md, "Samples tied to spans") | 0, 1, true, false, yes, no, on, off (off) |
    /// | `CORPROF_SAMPLER_GC_PAUSES` | whether GC pauses are measured ([`gc_pauses`](SamplerOptions::gc_pauses); .NET 5 and later) | 0, 1, true, false, yes, no, on, off (on) |
    ///
    /// ([`SamplingProfiler`](super::SamplingProfiler) also reads
    /// `CORPROF_SAMPLER_DIR`, where it writes its outputs and the period
    /// files, and the exporters' variables of
    /// [`ExportOptions::from_env`](super::export::ExportOptions::from_env):
    /// `CORPROF_SAMPLER_KEEP`, `CORPROF_SAMPLER_PUSH_URL`,
    /// `CORPROF_SAMPLER_PUSH_API`, `CORPROF_SAMPLER_TENANT`,
    /// `CORPROF_SAMPLER_APP`, and OpenTelemetry's `OTEL_EXPORTER_OTLP_*`,
    /// `OTEL_SERVICE_NAME` and `OTEL_RESOURCE_ATTRIBUTES`.) A bad value is
    /// an `E_INVALIDARG` [`Error`] whose message names the variable and
    /// says why: `CORPROF_SAMPLER_HZ="fast" is not a number from 1 to 10000`.
    pub fn from_env() -> Result<SamplerOptions, Error> {
        let hz = number(SAMPLER_HZ, 99, 1, u64::from(super::options::MAX_HZ))?;
        let alloc = number(SAMPLER_ALLOC_BYTES, 512 << 10, 0, 1 << 40)?;
        let source = match var(SAMPLER_ALLOC_SOURCE)? {
            None => AllocationSource::Auto,
            Some(text) => AllocationSource::from_name(text.trim()).ok_or_else(|| {
                Error::new(
                    E_INVALIDARG,
                    format!(
                        "{SAMPLER_ALLOC_SOURCE}={text:?} is not one of auto, allocation-sampled, allocation-tick, object-allocated"
                    ),
                )
            })?,
        };
        let mode = match var(SAMPLER_MODE)? {
            None => SamplingMode::default(),
            Some(text) => SamplingMode::from_name(text.trim()).ok_or_else(|| {
                Error::new(
                    E_INVALIDARG,
                    format!(
                        "{SAMPLER_MODE}={text:?} is not one of signal, suspend-runtime, thread-suspend"
                    ),
                )
            })?,
        };
        let period = number(SAMPLER_PERIOD, 60, 1, 86_400)?;
        let gc_pauses = crate::support::env::flag(SAMPLER_GC_PAUSES, true)?;
        let spans = crate::support::env::flag(SAMPLER_SPANS, false)?;
        let heap_objects = number(
            SAMPLER_HEAP_OBJECTS,
            u64::from(super::live_heap::HEAP_OBJECTS),
            0,
            1_000_000,
        )?;
        let snapshot_every = number(SAMPLER_HEAP_SNAPSHOT_EVERY, 0, 0, 86_400)?;
        let waits = number(
            SAMPLER_WAITS,
            u64::from(super::waits::WAITS_PER_SECOND),
            0,
            1_000_000,
        )?;
        let wall_threads = number(SAMPLER_WALL_THREADS, 5, 1, 1024)?;
        let triggers = match var(SAMPLER_TRIGGERS)? {
            None => alloc::vec::Vec::new(),
            Some(text) => Trigger::parse_list(&text)
                .map_err(|why| Error::new(E_INVALIDARG, format!("{SAMPLER_TRIGGERS}: {why}")))?,
        };
        if let Some(rule) = triggers.iter().find(|r| !r.is_supported()) {
            return Err(Error::new(
                E_INVALIDARG,
                format!(
                    "{SAMPLER_TRIGGERS}: trigger {:?}: {} is not supported yet (supported: {SUPPORTED_TRIGGERS})",
                    rule.text,
                    rule.kind_name()
                ),
            ));
        }
        let interval = number(SAMPLER_TRIGGER_INTERVAL, 300, 1, 86_400)?;
        let recorder = number(SAMPLER_RECORDER_SECONDS, 60, 1, 3600)?;
        Ok(SamplerOptions {
            hz: hz as u32,
            allocation_mean_bytes: (alloc != 0).then_some(alloc),
            allocation_source: source,
            mode,
            period: core::time::Duration::from_secs(period),
            gc_pauses,
            spans,
            heap_objects: (heap_objects != 0).then_some(heap_objects as u32),
            waits_per_second: (waits != 0).then_some(waits as u32),
            heap_snapshot_every: (snapshot_every != 0)
                .then(|| core::time::Duration::from_secs(snapshot_every)),
            triggers,
            trigger_interval: core::time::Duration::from_secs(interval),
            recorder_seconds: recorder as u32,
            wall_threads_per_tick: wall_threads as u32,
            ..SamplerOptions::default()
        })
    }
}
