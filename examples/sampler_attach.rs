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
//! Client data: `seconds=N` (1 to 3600, default 10), `dir=PATH` (where
//! `profile-<start>-<seq>.pb.gz` goes) and/or `push=http://host:port` (a
//! Pyroscope-compatible server, as application `app=NAME`, default
//! `dotnet-app`), `hz=N` (default 99), separated by `;`. After the attach the sampler has CPU and wall time, exceptions,
//! and on .NET 5 and later allocations (`GCAllocationTick`) and lock
//! contention; not allocations on 3.1 (`ObjectAllocated` can only be
//! enabled at startup). Then it stops its threads and asks the runtime to
//! detach it (`RequestProfilerDetach`); the process's stderr says
//! `sampler_attach: detached` when the runtime has unloaded it.
//!
//! CLSID `{3C9E5A17-6B2D-4E81-9F40-A7D2C8B5E163}`.

use std::io::Write as _;
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use corprof::facade::{EventPipeEvent, Profiler, ProfilerInfo, Result};
use corprof::profiling::{ObjectID, ThreadID};
use corprof::sampling::export::{
    DirectoryExporter, Exporter, PushExporter, PushOptions, PushTarget,
};
use corprof::sampling::{Sampler, SamplerOptions, SamplingMode};
use corprof::E_INVALIDARG;

fn say(text: &str) {
    let _ = std::io::stderr().write_all(format!("sampler_attach: {text}\n").as_bytes());
}

/// What the client data asks for.
struct Request {
    seconds: u64,
    dir: Option<PathBuf>,
    push: Option<PushTarget>,
    app: String,
    hz: u32,
}

fn parse(client_data: &[u8]) -> std::result::Result<Request, String> {
    let text = std::str::from_utf8(client_data).map_err(|_| "client data is not UTF-8")?;
    let (mut seconds, mut dir, mut hz) = (10, None, 99);
    let (mut push, mut app) = (None, String::from("dotnet-app"));
    for item in text.split(';').map(str::trim).filter(|i| !i.is_empty()) {
        let number = |v: &str, max: u64| v.parse::<u64>().ok().filter(|n| (1..=max).contains(n));
        match item.split_once('=') {
            Some(("seconds", v)) => seconds = number(v, 3600).ok_or("seconds: 1 to 3600")?,
            Some(("hz", v)) => hz = number(v, 10_000).ok_or("hz: 1 to 10000")? as u32,
            Some(("dir", v)) if !v.is_empty() => dir = Some(PathBuf::from(v)),
            Some(("push", v)) => {
                push = Some(PushTarget::parse(v).map_err(|e| format!("push: {e}"))?)
            }
            Some(("app", v)) if !v.is_empty() => app = String::from(v),
            _ => {
                return Err(format!(
                    "{item:?} is not seconds=N, dir=PATH, push=URL, app=NAME or hz=N"
                ))
            }
        }
    }
    if dir.is_none() && push.is_none() {
        return Err(String::from(
            "say where the profile goes: dir=PATH or push=URL",
        ));
    }
    Ok(Request {
        seconds,
        dir,
        push,
        app,
        hz,
    })
}

#[derive(Default)]
struct OnDemand {
    sampler: OnceLock<Arc<Sampler>>,
}

impl OnDemand {
    fn with_sampler(&self, f: impl FnOnce(&Sampler)) {
        if let Some(sampler) = self.sampler.get() {
            f(sampler);
        }
    }
}

impl Profiler for OnDemand {
    fn initialize_for_attach(&self, info: &ProfilerInfo, client_data: &[u8]) -> Result<()> {
        let request = parse(client_data).map_err(|e| {
            say(&format!("{e}; not attaching"));
            E_INVALIDARG
        })?;
        let mut options = SamplerOptions::default();
        options.hz = request.hz;
        // ObjectAllocated cannot be enabled after startup.
        options.allocation_mean_bytes = options
            .allocation_mean_bytes
            .filter(|_| info.version() >= 12);
        // One period: the whole run, cut when the sampler stops.
        options.period = Duration::from_secs(request.seconds + 3600);
        // Signal mode arms each thread's timer as the runtime reports it
        // created; an attached profiler is told of no thread that ran
        // before it, so it suspends the runtime to walk them all.
        options.mode = SamplingMode::SuspendRuntime;
        info.set_event_mask(options.event_masks(info)?)?;
        let mut exporters: Vec<Box<dyn Exporter>> = Vec::new();
        if let Some(dir) = &request.dir {
            match DirectoryExporter::new(dir, 1000) {
                Ok(exporter) => exporters.push(Box::new(exporter)),
                Err(e) => {
                    say(&format!("{}: {e}; not attaching", dir.display()));
                    return Err(E_INVALIDARG.into());
                }
            }
        }
        if let Some(target) = request.push.clone() {
            match PushExporter::start(target, &request.app, PushOptions::default()) {
                Ok(exporter) => exporters.push(Box::new(exporter)),
                Err(e) => {
                    say(&format!(
                        "cannot start the push thread ({e}); not attaching"
                    ));
                    return Err(E_INVALIDARG.into());
                }
            }
        }
        let sampler = Arc::new(Sampler::start_exporting(info, options, exporters)?);
        let _ = self.sampler.set(Arc::clone(&sampler));
        let info = info.clone();
        let timer = std::thread::Builder::new()
            .name(String::from("corprof-on-demand"))
            .spawn(move || {
                std::thread::sleep(Duration::from_secs(request.seconds));
                let profile = sampler.stop();
                let stats = sampler.export_stats();
                let delivered: Vec<String> = stats
                    .exporters
                    .iter()
                    .map(|e| format!("{} {}", e.name, e.exported))
                    .collect();
                say(&format!(
                    "{} samples in {:.1} s, profiles delivered: {}",
                    profile.stats.suspensions,
                    profile.duration.as_secs_f64(),
                    delivered.join(", ")
                ));
                if !sampler.threads_ended() {
                    say("a thread of the sampler is still running: staying loaded");
                    return;
                }
                drop(sampler);
                // SAFETY: the sampler's threads have ended (checked above),
                // and this one returns at once, well within the 500 ms the
                // runtime waits before it unloads the library.
                if let Err(hr) = unsafe { info.request_profiler_detach(500) } {
                    say(&format!(
                        "the runtime refused to detach ({hr}): staying loaded"
                    ));
                }
            });
        if timer.is_err() {
            say("cannot start the timer thread; detaching at once is not possible");
        }
        Ok(())
    }

    fn profiler_detach_succeeded(&self, _info: &ProfilerInfo) -> Result<()> {
        say("detached");
        Ok(())
    }

    fn thread_name_changed(&self, _: &ProfilerInfo, thread: ThreadID, name: String) -> Result<()> {
        self.with_sampler(|s| s.thread_name_changed(thread, &name));
        Ok(())
    }

    fn thread_destroyed(&self, _info: &ProfilerInfo, thread: ThreadID) -> Result<()> {
        self.with_sampler(|s| s.thread_destroyed(thread));
        Ok(())
    }

    fn exception_thrown(&self, _info: &ProfilerInfo, thrown: ObjectID) -> Result<()> {
        let mut result = Ok(());
        // SAFETY: forwarded from the callback that handed `thrown` over, on
        // its thread.
        self.with_sampler(|s| result = unsafe { s.exception_thrown(thrown) });
        result
    }

    fn event_pipe_event_delivered(
        &self,
        _: &ProfilerInfo,
        event: &EventPipeEvent<'_>,
    ) -> Result<()> {
        let mut result = Ok(());
        self.with_sampler(|s| result = s.event_pipe_event_delivered(event));
        result
    }
}

corprof::profiler!(
    OnDemand,
    "{3C9E5A17-6B2D-4E81-9F40-A7D2C8B5E163}",
    OnDemand::default
);
