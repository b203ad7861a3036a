//! On demand: attach the sampler to a running process, sample it for a
//! while, write the profile, and detach, leaving the process as it was (a
//! later attach works again). The way `dotnet-trace collect -p PID
//! --duration` is used, without the .NET SDK:
//!
//! ```sh
//! cargo build --release --example attach --example sampler_attach
//! target/release/examples/attach PID target/release/examples/libsampler_attach.so \
//!     3C9E5A17-6B2D-4E81-9F40-A7D2C8B5E163 'seconds=10;dir=/tmp/profiles'
//! ```
//!
//! Client data, separated by `;`: `seconds=N` (1 to 3600, default 10),
//! `dir=PATH` (where `profile-<start>-<seq>.pb.gz` goes) and/or
//! `push=http://host:port` (a Pyroscope-compatible server, as application
//! `app=NAME`, default `dotnet-app`), `hz=N` (default 99). After the attach
//! the sampler has CPU and wall time, exceptions, and on .NET 5 and later
//! allocations (`GCAllocationTick`) and lock contention; not allocations on
//! 3.1 (`ObjectAllocated` can only be enabled at startup). Then it stops its
//! threads and asks the runtime to detach it (`RequestProfilerDetach`); the
//! process's stderr says `sampler_attach: detached` when the runtime has
//! unloaded it.
//!
//! CLSID `{3C9E5A17-6B2D-4E81-9F40-A7D2C8B5E163}`.

use std::io::Write as _;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use corprof::facade::{EventPipeEvent, Profiler, ProfilerInfo, Result};
use corprof::profiling::{ObjectID, ThreadID};
use corprof::sampling::export::{DirectoryExporter, ExportOptions, Exporter, PushExporter};
use corprof::sampling::export::{PushOptions, PushTarget};
use corprof::sampling::{Sampler, SamplerOptions, SamplingMode};
use corprof::E_INVALIDARG;

fn say(text: &str) {
    let _ = std::io::stderr().write_all(format!("sampler_attach: {text}\n").as_bytes());
}

/// Says why on the target's stderr, and refuses the attach.
fn refuse(why: impl std::fmt::Display) -> corprof::Error {
    say(&format!("{why}; not attaching"));
    E_INVALIDARG.into()
}

const KEYS: &str = "seconds=N, dir=PATH, push=URL, app=NAME or hz=N";

/// The client data: how long to sample, how often, and where the profile goes.
fn parse(data: &[u8]) -> std::result::Result<(u64, SamplerOptions, ExportOptions), String> {
    let text = std::str::from_utf8(data).map_err(|_| "client data is not UTF-8")?;
    let (mut seconds, mut options, mut export) =
        (10, SamplerOptions::default(), ExportOptions::default());
    export.app = String::from("dotnet-app");
    let push = |v: &str| PushTarget::parse(v).map_err(|e| format!("push: {e}"));
    for item in text.split(';').map(str::trim).filter(|i| !i.is_empty()) {
        let number = |v: &str, max: u64| v.parse::<u64>().ok().filter(|n| (1..=max).contains(n));
        match item.split_once('=') {
            Some(("seconds", v)) => seconds = number(v, 3600).ok_or("seconds: 1 to 3600")?,
            Some(("hz", v)) => options.hz = number(v, 10_000).ok_or("hz: 1 to 10000")? as u32,
            Some(("dir", v)) if !v.is_empty() => export.dir = Some(v.into()),
            Some(("push", v)) => export.push = Some(push(v)?),
            Some(("app", v)) if !v.is_empty() => export.app = String::from(v),
            _ => return Err(format!("{item:?} is not {KEYS}")),
        }
    }
    if export.dir.is_none() && export.push.is_none() {
        return Err("say where the profile goes: dir=PATH or push=URL".into());
    }
    // One period: the whole run, cut when the sampler stops.
    options.period = Duration::from_secs(seconds + 3600);
    // Signal mode arms each thread's timer as the runtime reports it
    // created; an attached profiler is told of no thread that ran before
    // it, so it suspends the runtime to walk them all.
    options.mode = SamplingMode::SuspendRuntime;
    Ok((seconds, options, export))
}

/// Samples for `seconds`, then stops and asks the runtime to detach.
fn stop_after(seconds: u64, sampler: Arc<Sampler>, info: ProfilerInfo) {
    std::thread::sleep(Duration::from_secs(seconds));
    let profile = sampler.stop();
    let exporters = sampler.export_stats().exporters;
    let delivered: Vec<String> = exporters
        .iter()
        .map(|e| format!("{} {}", e.name, e.exported))
        .collect();
    let (samples, secs) = (profile.stats.suspensions, profile.duration.as_secs_f64());
    let delivered = delivered.join(", ");
    say(&format!(
        "{samples} samples in {secs:.1} s, profiles delivered: {delivered}"
    ));
    if !sampler.threads_ended() {
        return say("a thread of the sampler is still running: staying loaded");
    }
    drop(sampler);
    // SAFETY: the sampler's threads have ended (checked above), and this
    // one returns at once, well within the 500 ms the runtime waits before
    // it unloads the library.
    if let Err(hr) = unsafe { info.request_profiler_detach(500) } {
        say(&format!(
            "the runtime refused to detach ({hr}): staying loaded"
        ));
    }
}

#[derive(Default)]
struct OnDemand {
    sampler: OnceLock<Arc<Sampler>>,
}

impl Profiler for OnDemand {
    fn initialize_for_attach(&self, info: &ProfilerInfo, client_data: &[u8]) -> Result<()> {
        let (seconds, mut options, export) = parse(client_data).map_err(refuse)?;
        // ObjectAllocated cannot be enabled after startup.
        options.allocation_mean_bytes = options
            .allocation_mean_bytes
            .filter(|_| info.version() >= 12);
        info.set_event_mask(options.event_masks(info)?)?;
        let mut exporters: Vec<Box<dyn Exporter>> = Vec::new();
        if let Some(dir) = &export.dir {
            let exporter = DirectoryExporter::new(dir, 1000)
                .map_err(|e| refuse(format!("{}: {e}", dir.display())))?;
            exporters.push(Box::new(exporter));
        }
        if let Some(target) = export.push {
            let exporter = PushExporter::start(target, &export.app, PushOptions::default())
                .map_err(|e| refuse(format!("cannot start the push thread ({e})")))?;
            exporters.push(Box::new(exporter));
        }
        let sampler = Arc::new(Sampler::start_exporting(info, options, exporters)?);
        let _ = self.sampler.set(Arc::clone(&sampler));
        let (timer, info) = (std::thread::Builder::new(), info.clone());
        let timer = timer.name(String::from("corprof-on-demand"));
        let spawned = timer.spawn(move || stop_after(seconds, sampler, info));
        if spawned.is_err() {
            say("cannot start the timer thread; detaching at once is not possible");
        }
        Ok(())
    }

    fn profiler_detach_succeeded(&self, _info: &ProfilerInfo) -> Result<()> {
        say("detached");
        Ok(())
    }

    // The callbacks the sampler needs, handed to it once it runs.

    fn thread_name_changed(&self, _: &ProfilerInfo, thread: ThreadID, name: String) -> Result<()> {
        if let Some(sampler) = self.sampler.get() {
            sampler.thread_name_changed(thread, &name);
        }
        Ok(())
    }

    fn thread_destroyed(&self, _info: &ProfilerInfo, thread: ThreadID) -> Result<()> {
        if let Some(sampler) = self.sampler.get() {
            sampler.thread_destroyed(thread);
        }
        Ok(())
    }

    fn exception_thrown(&self, _info: &ProfilerInfo, thrown: ObjectID) -> Result<()> {
        // SAFETY: this callback's own argument, handed over on its thread.
        (self.sampler.get()).map_or(Ok(()), |s| unsafe { s.exception_thrown(thrown) })
    }

    fn event_pipe_event_delivered(&self, _: &ProfilerInfo, e: &EventPipeEvent<'_>) -> Result<()> {
        (self.sampler.get()).map_or(Ok(()), |s| s.event_pipe_event_delivered(e))
    }
}

corprof::profiler!(OnDemand, "{3C9E5A17-6B2D-4E81-9F40-A7D2C8B5E163}");
