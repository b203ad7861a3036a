//! A sampling profiler (`corprof::sampling`): CPU time, wall time and
//! allocations by stack, written at shutdown to the directory named by
//! `CORPROF_SAMPLER_DIR` (nothing is written when it is unset):
//!
//! - `profile.pb.gz`: pprof (`go tool pprof`, Grafana Pyroscope and other
//!   pprof readers), sample types `cpu`, `wall` (nanoseconds),
//!   `alloc_objects` (count), `alloc_space` (bytes) and `exception`
//!   (count: thrown exceptions by type, the leaf frame, and label
//!   `exception_type`), `lock-count` (count) and `lock-time` (nanoseconds:
//!   waits for locks, .NET 5 and later), a `thread` label per sample;
//! - `speedscope.json`: the same, for speedscope (one profile per thread
//!   and kind);
//! - `cpu.folded`, `wall.folded` (nanoseconds), `alloc.folded` (bytes):
//!   folded stacks, every thread merged;
//! - `flame.svg`: a flame graph of CPU time;
//! - `summary.txt`: `key=value` lines (samples, pauses, threads, exports).
//!
//! Continuously, every `CORPROF_SAMPLER_PERIOD` seconds (default 60), the
//! period's own profile goes to `profile-<start>-<seq>.pb.gz` in that
//! directory (the newest `CORPROF_SAMPLER_KEEP`, default 60, kept) and to
//! the Pyroscope-compatible server of `CORPROF_SAMPLER_PUSH_URL`
//! (`http://host:port`) as application `CORPROF_SAMPLER_APP`
//! (`corprof::sampling::export::ExportOptions::from_env`).
//!
//! Environment: `CORPROF_SAMPLER_HZ` (samples per second, default 99),
//! `CORPROF_SAMPLER_ALLOC_BYTES` (the mean allocation sampling interval in
//! bytes, default 524288; `0` turns allocation sampling off),
//! `CORPROF_SAMPLER_ALLOC_SOURCE` (where allocations come from: `auto`, the
//! default, is `allocation-tick` on .NET 5 and later and `object-allocated`
//! before; `corprof::sampling::AllocationSource`). A bad value is reported
//! on stderr and the profiler stays out of the way.
//!
//! Build with `cargo build --example sampler`; CLSID
//! `{7A3E9C51-2B8D-4F06-9E1A-C4D5B6A70819}`.

use std::io::Write as _;
use std::path::PathBuf;
use std::sync::OnceLock;

use corprof::facade::{EventPipeEvent, Profiler, ProfilerInfo, Result};
use corprof::profiling::*;
use corprof::sampling::export::{ExportOptions, ExportStats};
use corprof::sampling::{AllocationSource, Profile, Sampler, SamplerOptions};

#[derive(Default)]
struct SamplerProfiler {
    /// Set once in `initialize`; read without a lock by every callback (the
    /// runtime calls `event_pipe_event_delivered` from the thread that
    /// suspends it too, which must never wait for an allocating thread).
    sampler: OnceLock<Sampler>,
    dir: Option<PathBuf>,
}

fn say(text: &str) {
    let _ = std::io::stderr().write_all(format!("sampler: {text}\n").as_bytes());
}

/// `name` from the environment as a number in `range`, or `default`.
fn setting(
    name: &str,
    default: u64,
    range: std::ops::RangeInclusive<u64>,
) -> std::result::Result<u64, String> {
    match std::env::var(name) {
        Err(_) => Ok(default),
        Ok(text) => match text.trim().parse::<u64>() {
            Ok(value) if range.contains(&value) => Ok(value),
            _ => Err(format!(
                "{name}={text:?} is not a number from {} to {}",
                range.start(),
                range.end()
            )),
        },
    }
}

fn options() -> std::result::Result<SamplerOptions, String> {
    let hz = setting("CORPROF_SAMPLER_HZ", 99, 1..=10_000)?;
    let alloc = setting("CORPROF_SAMPLER_ALLOC_BYTES", 512 << 10, 0..=(1 << 40))?;
    let source = match std::env::var("CORPROF_SAMPLER_ALLOC_SOURCE") {
        Err(_) => AllocationSource::Auto,
        Ok(text) => AllocationSource::from_name(text.trim()).ok_or_else(|| {
            format!(
                "CORPROF_SAMPLER_ALLOC_SOURCE={text:?} is not one of auto, allocation-tick, object-allocated"
            )
        })?,
    };
    Ok(SamplerOptions {
        hz: hz as u32,
        allocation_mean_bytes: (alloc != 0).then_some(alloc),
        allocation_source: source,
        ..SamplerOptions::default()
    })
}

impl SamplerProfiler {
    fn new() -> SamplerProfiler {
        SamplerProfiler {
            sampler: OnceLock::new(),
            dir: std::env::var_os("CORPROF_SAMPLER_DIR").map(PathBuf::from),
        }
    }

    fn with_sampler(&self, f: impl FnOnce(&Sampler)) {
        if let Some(sampler) = self.sampler.get() {
            f(sampler);
        }
    }
}

impl Profiler for SamplerProfiler {
    fn initialize(&self, info: &ProfilerInfo) -> Result<()> {
        let (options, export) = match options().and_then(|o| Ok((o, ExportOptions::from_env()?))) {
            Ok(options) => options,
            Err(message) => {
                say(&format!("{message}; not sampling"));
                return Ok(());
            }
        };
        let (events, high) = match options.event_masks(info) {
            Ok(masks) => masks,
            Err(_) => {
                say(&format!(
                    "CORPROF_SAMPLER_ALLOC_SOURCE=allocation-tick needs in-process EventPipe (.NET 5 or later); \
                     this runtime offers ICorProfilerInfo{}: not sampling",
                    info.version()
                ));
                return Ok(());
            }
        };
        let exporters = match export.exporters() {
            Ok(exporters) => exporters,
            Err(error) => {
                say(&format!("{error}; not sampling"));
                return Ok(());
            }
        };
        let options = SamplerOptions {
            period: export.period,
            ..options
        };
        info.set_event_mask(events, high)?;
        match Sampler::start_exporting(info, options, exporters) {
            Ok(sampler) => {
                let _ = self.sampler.set(sampler);
            }
            Err(hr) => say(&format!(
                "cannot sample on this runtime ({hr}): SuspendRuntime needs .NET Core 3.0 or later"
            )),
        }
        Ok(())
    }

    fn thread_name_changed(
        &self,
        _info: &ProfilerInfo,
        thread: ThreadID,
        name: String,
    ) -> Result<()> {
        self.with_sampler(|s| s.thread_name_changed(thread, &name));
        Ok(())
    }

    fn thread_destroyed(&self, _info: &ProfilerInfo, thread: ThreadID) -> Result<()> {
        self.with_sampler(|s| s.thread_destroyed(thread));
        Ok(())
    }

    fn object_allocated(
        &self,
        _info: &ProfilerInfo,
        object: ObjectID,
        class: ClassID,
    ) -> Result<()> {
        let mut result = Ok(());
        self.with_sampler(|s| result = s.object_allocated(object, class));
        result
    }

    fn exception_thrown(&self, _info: &ProfilerInfo, thrown: ObjectID) -> Result<()> {
        let mut result = Ok(());
        self.with_sampler(|s| result = s.exception_thrown(thrown));
        result
    }

    fn event_pipe_event_delivered(
        &self,
        _info: &ProfilerInfo,
        event: &EventPipeEvent<'_>,
    ) -> Result<()> {
        let mut result = Ok(());
        self.with_sampler(|s| result = s.event_pipe_event_delivered(event));
        result
    }

    fn shutdown(&self, _info: &ProfilerInfo) -> Result<()> {
        let Some(sampler) = self.sampler.get() else {
            return Ok(());
        };
        let profile = sampler.stop();
        let stats = &profile.stats;
        say(&format!(
            "{} samples of {} threads, pause median {} us, p99 {} us, {} walks without managed frames",
            stats.suspensions,
            profile.threads.len(),
            stats.pause_quantile(0.5) / 1000,
            stats.pause_quantile(0.99) / 1000,
            stats.failed_walks
        ));
        if let Some(dir) = &self.dir {
            if let Err(error) = write(&profile, &sampler.export_stats(), dir) {
                say(&format!("writing {}: {error}", dir.display()));
            }
        }
        Ok(())
    }
}

fn write(profile: &Profile, export: &ExportStats, dir: &std::path::Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let stats = &profile.stats;
    let mut summary = String::new();
    let mut line = |key: &str, value: String| summary.push_str(&format!("{key}={value}\n"));
    line("suspensions", stats.suspensions.to_string());
    line("failed_suspensions", stats.failed_suspensions.to_string());
    line("walks", stats.walks.to_string());
    line("failed_walks", stats.failed_walks.to_string());
    line("frames", stats.frames.to_string());
    line("allocation_samples", stats.allocation_samples.to_string());
    line(
        "allocation_source",
        stats
            .allocation_source
            .map_or("off", AllocationSource::name)
            .to_string(),
    );
    line("allocation_ticks", stats.allocation_ticks.to_string());
    line("undecoded_ticks", stats.undecoded_ticks.to_string());
    line("exceptions_thrown", stats.exceptions_thrown.to_string());
    line("exceptions_recorded", stats.exceptions_recorded.to_string());
    line(
        "contention",
        String::from(if stats.contention_available {
            "on"
        } else {
            "not available (needs .NET 5)"
        }),
    );
    line("contentions", stats.contentions.to_string());
    line(
        "contentions_recorded",
        stats.contentions_recorded.to_string(),
    );
    line(
        "undecoded_contentions",
        stats.undecoded_contentions.to_string(),
    );
    line("sampler_cpu_ns", stats.sampler_cpu_nanos.to_string());
    line("pause_median_ns", stats.pause_quantile(0.5).to_string());
    line("pause_p99_ns", stats.pause_quantile(0.99).to_string());
    line("duration_ns", profile.duration.as_nanos().to_string());
    line("period_ns", profile.period_nanos.to_string());
    line(
        "threads",
        profile
            .threads
            .iter()
            .map(|t| t.name.as_str())
            .collect::<Vec<_>>()
            .join(","),
    );
    let written = corprof::sampling::write_outputs(profile, dir)?;
    line("pprof_samples", written.pprof_samples.to_string());
    line("pprof_bytes", written.pprof_bytes.to_string());
    line("flame_frames_drawn", written.flame.drawn.to_string());
    line("flame_frames_omitted", written.flame.omitted.to_string());
    summary.push_str(&export.summary_lines());
    std::fs::write(dir.join("summary.txt"), summary)?;
    Ok(())
}

corprof::profiler!(
    SamplerProfiler,
    "{7A3E9C51-2B8D-4F06-9E1A-C4D5B6A70819}",
    SamplerProfiler::new
);
