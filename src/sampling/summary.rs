//! `summary.txt`: the sampler's statistics as `key=value` lines, written
//! with the output files at the end of a run ([`write_dir`]).

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use std::io;
use std::path::Path;

use super::export::ExportStats;
use super::mode::SamplingMode;
use super::options::AllocationSource;
use super::output::{write_outputs, Written};
use super::state::Profile;

/// Creates `dir`, writes [`write_outputs`]'s files and `summary.txt` there
/// (the [`SamplerStats`](super::SamplerStats), the signals and timers of
/// signal mode, the period, duration, threads, what was written and the
/// exporters' counters).
pub(super) fn write_dir(
    profile: &Profile,
    export: &ExportStats,
    (gc_asked, heap_asked, waits_asked): (bool, bool, bool),
    heap_snapshots: &str,
    dir: &Path,
) -> io::Result<Written> {
    std::fs::create_dir_all(dir)?;
    let stats = &profile.stats;
    let mut summary = String::new();
    let mut line = |key: &str, value: String| summary.push_str(&format!("{key}={value}\n"));
    line("mode", stats.mode.name().to_string());
    line("incidents", stats.incidents.to_string());
    line("recorder_seconds", stats.recorder_seconds.to_string());
    line(
        "recorder_bound_bytes",
        stats.recorder_bound_bytes.to_string(),
    );
    line(
        "recorder_dropped_samples",
        stats.recorder_dropped.to_string(),
    );
    line("recorder_nodes", stats.recorder_nodes.to_string());
    for (key, value) in stats.gc_heap.summary_pairs() {
        line(key, value);
    }
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
    line(
        "allocation_sampled_events",
        stats.allocation_sampled_events.to_string(),
    );
    line(
        "undecoded_sampled_events",
        stats.undecoded_sampled_events.to_string(),
    );
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
    line(
        "waits",
        String::from(match (waits_asked, stats.waits_available) {
            (false, _) => "off",
            (true, true) => "on",
            (true, false) => "not available (needs .NET 9)",
        }),
    );
    line("waits_ended", stats.waits.to_string());
    line("waits_recorded", stats.waits_recorded.to_string());
    line("undecoded_waits", stats.undecoded_waits.to_string());
    let gc = &stats.gc_pauses;
    line(
        "gc_pauses",
        String::from(match (gc_asked, stats.gc_pauses_available) {
            (false, _) => "off",
            (true, true) => "on",
            (true, false) => "not available (needs .NET 5)",
        }),
    );
    line("gc_pause_count", gc.pauses.to_string());
    line("gc_pause_total_ns", gc.total_nanos.to_string());
    line("gc_pause_max_ns", gc.max_nanos.to_string());
    // gen/reason:count/nanoseconds, by generation then reason.
    line(
        "gc_pause_kinds",
        gc.by_kind
            .iter()
            .map(|(generation, reason, count, nanos)| {
                format!("{generation}/{reason}:{count}/{nanos}")
            })
            .collect::<Vec<_>>()
            .join(","),
    );
    line("undecoded_gc_events", gc.undecoded_events.to_string());
    let heap = &stats.live_heap;
    line(
        "live_heap",
        match (heap_asked, stats.live_heap_unavailable) {
            (false, _) => String::from("off"),
            (true, Some(why)) => format!("not available ({why})"),
            (true, None) => String::from("on"),
        },
    );
    line("live_heap_limit", heap.limit.to_string());
    line("live_heap_tracked", heap.tracked.to_string());
    line("live_heap_skipped", heap.skipped.to_string());
    line("live_heap_collected", heap.collected.to_string());
    line("live_heap_at_stop", heap.live.to_string());
    line("live_heap_handle_errors", heap.handle_errors.to_string());
    line("live_heap_gcs", heap.gcs.to_string());
    line("live_heap_sweeps", heap.sweeps.to_string());
    summary.push_str(heap_snapshots);
    let mut line = |key: &str, value: String| summary.push_str(&format!("{key}={value}\n"));
    line("sampler_cpu_ns", stats.sampler_cpu_nanos.to_string());
    line("gc_threads_cpu_ns", stats.gc_threads_cpu_nanos.to_string());
    line("pause_median_ns", stats.pause_quantile(0.5).to_string());
    line("pause_p99_ns", stats.pause_quantile(0.99).to_string());
    let signal = &stats.signal;
    line("signals_sent", signal.signals_sent.to_string());
    line("signals_handled", signal.signals_handled.to_string());
    line("signals_dropped", signal.dropped.to_string());
    line("signals_stale", signal.stale.to_string());
    line("signals_foreign", signal.foreign.to_string());
    line("cpu_samples", signal.cpu_samples.to_string());
    line("wall_samples", signal.wall_samples.to_string());
    line("managed_samples", signal.managed_samples.to_string());
    line("walks_cut_bounds", signal.cut_bounds.to_string());
    line("walks_cut_depth", signal.cut_depth.to_string());
    line("timers_created", signal.timers_created.to_string());
    line("timers_deleted", signal.timers_deleted.to_string());
    line(
        "timers_live_at_stop",
        signal.timers_live_at_stop.to_string(),
    );
    line(
        "kernel_timers_at_stop",
        signal
            .kernel_timers_at_stop
            .map_or("unknown".to_string(), |n| n.to_string()),
    );
    line(
        "registrations_failed",
        signal.registrations_failed.to_string(),
    );
    line("signals_late", signal.late.to_string());
    line("signal_handler_removed", signal.handler_removed.to_string());
    let suspend = &stats.thread_suspend;
    line("threads_suspended", suspend.threads_suspended.to_string());
    line("suspend_failures", suspend.suspend_failures.to_string());
    line("walks_unsafe", suspend.walks_unsafe.to_string());
    line(
        "walk_errors",
        suspend
            .walk_errors
            .iter()
            .map(|&(hr, n)| format!("{:#010x}:{n}", hr as u32))
            .collect::<Vec<_>>()
            .join(","),
    );
    line("walks_cut_frames", suspend.cut_depth.to_string());
    // Samples per thread: name:cpu/wall (signal mode; in thread-suspend
    // mode each sample carries both).
    let per_thread: Vec<(u32, u64, u64)> = match stats.mode {
        SamplingMode::ThreadSuspend => suspend
            .per_thread
            .iter()
            .map(|&(os, n)| (os, n, n))
            .collect(),
        _ => signal.per_thread.clone(),
    };
    line(
        "thread_samples",
        per_thread
            .iter()
            .map(|&(os, cpu, wall)| {
                let name = profile
                    .threads
                    .iter()
                    .find(|t| t.os_thread == os)
                    .map_or(format!("Thread {os}"), |t| t.name.clone());
                format!("{name}:{cpu}/{wall}")
            })
            .collect::<Vec<_>>()
            .join(","),
    );
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
    let written = write_outputs(profile, dir)?;
    line("pprof_samples", written.pprof_samples.to_string());
    line("pprof_bytes", written.pprof_bytes.to_string());
    line("flame_frames_drawn", written.flame.drawn.to_string());
    line("flame_frames_omitted", written.flame.omitted.to_string());
    summary.push_str(&export.summary_lines());
    std::fs::write(dir.join("summary.txt"), summary)?;
    Ok(written)
}
