//! [`SamplingProfiler`]: the sampler as a [`Profiler`] part, started in
//! `initialize` and written out at shutdown, with the callbacks it needs.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use std::io::{self, Write as _};
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use super::attach::AttachRequest;
use super::env::{var, SAMPLER_DIR};
use super::export::ExportOptions;
use super::heap_snapshot::{HeapSnapshotStats, HeapSnapshots, LoadedClasses};
use super::options::{AllocationSource, SamplerOptions};
use super::sampler::{check_rules, incident_snapshots, Sampler};
use super::summary::write_dir;
use crate::facade::{CallbackObject, EventPipeEvent, Profiler, ProfilerInfo, Result};
use crate::profiling::{ClassID, ObjectID, ThreadID};
use crate::support::sync::lock;
use crate::Error;

/// The sampler as a profiler, or a part of one (`profiler!((SamplingProfiler,
/// MyPart), "CLSID")`): in `initialize` it adds the events it needs
/// ([`SamplerOptions::event_masks`], with
/// [`add_event_mask`](ProfilerInfo::add_event_mask), so other parts keep
/// theirs) and starts a [`Sampler`]; it handles the thread-name,
/// thread-destroyed, `ObjectAllocated` and EventPipe callbacks; at shutdown
/// it stops and, given a directory, writes every format of
/// [`write_outputs`](super::write_outputs) there and a `summary.txt` of `key=value` lines (the
/// [`SamplerStats`](super::SamplerStats), the period, duration, threads and
/// what was written).
///
/// It reports on stderr, each line prefixed `sampler: `, and stays out of
/// the way (the program runs unprofiled, `initialize` succeeds) when its
/// configuration is bad or the runtime cannot sample (before .NET Core 3.0,
/// or `allocation-tick` before .NET 5).
///
/// `Default` is [`from_env`](SamplingProfiler::from_env).
pub struct SamplingProfiler {
    config: core::result::Result<(SamplerOptions, ExportOptions), Error>,
    dir: Option<PathBuf>,
    /// Set once in `initialize`; read without a lock by every callback (the
    /// runtime calls `event_pipe_event_delivered` from the thread that
    /// suspends it too, which must never wait for an allocating thread).
    sampler: OnceLock<Arc<Sampler>>,
    /// The heap snapshots' thread, when asked for and available.
    snapshots: OnceLock<HeapSnapshots>,
    /// The classes loaded, for the incidents' heap snapshots when there
    /// is no snapshots' thread (whose own list they share otherwise).
    classes: OnceLock<LoadedClasses>,
}

fn say(text: &str) {
    // One write per line: the program's threads share stderr.
    let _ = io::stderr().write_all(format!("sampler: {text}\n").as_bytes());
}

impl SamplingProfiler {
    /// Samples with `options`; writes nothing unless
    /// [`write_to`](SamplingProfiler::write_to) names a directory.
    pub fn new(options: SamplerOptions) -> SamplingProfiler {
        SamplingProfiler {
            config: Ok((options, ExportOptions::default())),
            dir: None,
            sampler: OnceLock::new(),
            snapshots: OnceLock::new(),
            classes: OnceLock::new(),
        }
    }

    /// Configured by the environment: [`SamplerOptions::from_env`],
    /// [`ExportOptions::from_env`] (continuous profiles every period, to
    /// the directory and a profile server) and `CORPROF_SAMPLER_DIR` (the
    /// output directory). A bad value is reported in `initialize`, and then
    /// nothing is sampled.
    pub fn from_env() -> SamplingProfiler {
        let (config, dir) = match var(SAMPLER_DIR) {
            Ok(dir) => (
                SamplerOptions::from_env().and_then(|o| Ok((o, ExportOptions::from_env()?))),
                dir.map(PathBuf::from),
            ),
            Err(error) => (Err(error), None),
        };
        SamplingProfiler {
            config,
            dir,
            sampler: OnceLock::new(),
            snapshots: OnceLock::new(),
            classes: OnceLock::new(),
        }
    }

    /// Writes the outputs into `dir` at shutdown.
    pub fn write_to(mut self, dir: impl Into<PathBuf>) -> SamplingProfiler {
        self.dir = Some(dir.into());
        self
    }

    /// Hands each period's profile ([`SamplerOptions::period`]) to the
    /// exporters `export` asks for (none by default: no continuous
    /// profile).
    pub fn export(mut self, export: ExportOptions) -> SamplingProfiler {
        if let Ok((_, old)) = &mut self.config {
            *old = export;
        }
        self
    }

    /// Starts the heap snapshots `every` asks for (none: `None`) into
    /// `dir`, or says why not.
    fn start_snapshots(&self, info: &ProfilerInfo, every: Option<Duration>, dir: Option<PathBuf>) {
        let Some(every) = every else { return };
        let snapshots = match dir {
            Some(dir) => HeapSnapshots::start(info, every, dir, super::export::utc_stamp),
            None => {
                say("heap snapshots need an output directory (CORPROF_SAMPLER_DIR): none taken");
                HeapSnapshots::unavailable("no output directory")
            }
        };
        let _ = self.snapshots.set(snapshots);
    }

    /// Has the sampler's heap rules' incidents take a heap snapshot each
    /// (.NET 9 and later), their statics from the classes loaded: those of
    /// the snapshots' thread if there is one, else a list of its own.
    fn snapshot_heap_at_incidents(&self) {
        let Some(sampler) = self.sampler.get() else {
            return;
        };
        if !sampler.snapshots_heap_at_incidents() {
            return;
        }
        let loaded = match self.snapshots.get() {
            Some(snapshots) => snapshots.loaded(),
            None => Arc::clone(self.classes.get_or_init(LoadedClasses::default)),
        };
        sampler.snapshot_heap_at_incidents(loaded);
    }

    /// The running sampler, once `initialize` started it.
    pub fn sampler(&self) -> Option<&Sampler> {
        self.sampler.get().map(|sampler| &**sampler)
    }
}

impl Default for SamplingProfiler {
    fn default() -> SamplingProfiler {
        SamplingProfiler::from_env()
    }
}

impl Profiler for SamplingProfiler {
    fn initialize(&self, info: &ProfilerInfo) -> Result<()> {
        let (mut options, export) = match &self.config {
            Ok(config) => config.clone(),
            Err(error) => {
                say(&format!("{}; not sampling", error.message()));
                return Ok(());
            }
        };
        if options.incident_dir.is_none() {
            // Incidents go where the profile goes.
            options.incident_dir = self.dir.clone();
        }
        if let Err(error) = options
            .validate()
            .and_then(|()| check_rules(&options, info))
        {
            // Before the exporters: nothing is created when not sampling.
            say(&format!("{}; not sampling", Error::from(error)));
            return Ok(());
        }
        let Ok(mut mask) = options.event_masks(info) else {
            if options.allocation_source == AllocationSource::AllocationSampled {
                let version = info.runtime_information().map_or_else(
                    |_| String::from("?"),
                    |r| format!("{}.{}", r.major, r.minor),
                );
                say(&format!(
                    "CORPROF_SAMPLER_ALLOC_SOURCE=allocation-sampled needs the runtime's AllocationSampled \
                     events (.NET 10 or later); this runtime reports version {version}: not sampling"
                ));
            } else {
                say(&format!(
                    "CORPROF_SAMPLER_ALLOC_SOURCE=allocation-tick needs in-process EventPipe (.NET 5 or later); \
                     this runtime offers ICorProfilerInfo{}: not sampling",
                    info.version()
                ));
            }
            return Ok(());
        };
        if options.allocation_mean_bytes.is_some()
            && options.allocation_source.resolve(info).is_none()
        {
            say(&format!(
                "no allocation samples: this runtime (ICorProfilerInfo{}) has no allocation events, and \
                 CORPROF_SAMPLER_ALLOC_SOURCE=object-allocated, which slows every allocation, is not the default",
                info.version()
            ));
        }
        if !options.mode.is_available(info) {
            // Before the exporters: nothing is created when not sampling.
            say(&format!(
                "cannot sample in mode {} here: signal needs Linux on x86-64 or AArch64, \
                 thread-suspend Windows x64, suspend-runtime .NET Core 3.0 or later; not sampling",
                options.mode.name()
            ));
            return Ok(());
        }
        let mut export = export;
        if let Some(otlp) = export.otlp.as_mut().filter(|o| o.runtime_version.is_none()) {
            // .NET Core 3.x answers the desktop-compatible 4.0.30319, not
            // its own version: only .NET 5 and later name theirs.
            otlp.runtime_version = info
                .runtime_information()
                .ok()
                .filter(|r| r.major >= 5)
                .map(|r| format!("{}.{}.{}", r.major, r.minor, r.build));
        }
        let exporters = match export.exporters() {
            Ok(exporters) => exporters,
            Err(error) => {
                say(&format!("{error}; not sampling"));
                return Ok(());
            }
        };
        let snapshot_every = options.heap_snapshot_every;
        if snapshot_every.is_some() || incident_snapshots(&options, info) {
            // The classes whose statics name a snapshot's roots.
            mask.0 |= crate::profiling::COR_PRF_MONITOR_CLASS_LOADS;
        }
        info.add_event_mask(mask)?;
        let mode = options.mode;
        let builder = Sampler::builder(options).exporters(exporters);
        let publish = |sampler: &Arc<Sampler>| {
            let _ = self.sampler.set(Arc::clone(sampler));
        };
        // SAFETY: the sampler is published into `self.sampler` (empty: the
        // runtime initializes a profiler object once) before its thread
        // starts, and `thread_destroyed` below forwards every
        // ThreadDestroyed to it, from the callback.
        match unsafe { builder.start_forwarding_thread_destroyed(info, publish) } {
            Ok(_) => {
                self.start_snapshots(info, snapshot_every, self.dir.clone());
                self.snapshot_heap_at_incidents();
            }
            Err(error) if error.code() == crate::E_INVALIDARG => {
                say(&format!("{error}; not sampling"))
            }
            Err(error) => say(&format!(
                "cannot sample in mode {} here ({}): signal needs Linux on x86-64 or AArch64, \
                 thread-suspend Windows x64, suspend-runtime .NET Core 3.0 or later",
                mode.name(),
                error.code()
            )),
        }
        Ok(())
    }

    /// Attached to a running process: samples for the time the client data
    /// asks ([`AttachRequest`]), writes or pushes the profile, then asks
    /// the runtime to detach the profiler, leaving the process as it was.
    /// Bad client data refuses the attach with a message on the target's
    /// stderr. Allocations are sampled on .NET 5 and later only
    /// (`ObjectAllocated` cannot be enabled after startup).
    fn initialize_for_attach(&self, info: &ProfilerInfo, client_data: &[u8]) -> Result<()> {
        let refuse = |error: Error| {
            say(&format!("{}; not attaching", error.message()));
            error
        };
        let request = AttachRequest::parse(client_data).map_err(refuse)?;
        let mut options = request.options;
        options.allocation_mean_bytes = options
            .allocation_mean_bytes
            .filter(|_| info.version() >= 12);
        let exporters = request.export.exporters().map_err(refuse)?;
        let mut mask = options.event_masks(info)?;
        let snapshot_every = options.heap_snapshot_every;
        if snapshot_every.is_some() || incident_snapshots(&options, info) {
            // Classes loaded from now on only: statics of earlier ones
            // are not named (their objects show as unreferenced).
            mask.0 |= crate::profiling::COR_PRF_MONITOR_CLASS_LOADS;
        }
        info.add_event_mask(mask)?;
        let builder = Sampler::builder(options).exporters(exporters);
        let publish = |sampler: &Arc<Sampler>| {
            let _ = self.sampler.set(Arc::clone(sampler));
        };
        // SAFETY: as in `initialize`: published before it samples, and
        // every ThreadDestroyed forwarded to it (`thread_destroyed` below).
        let sampler = unsafe { builder.start_forwarding_thread_destroyed(info, publish) }?;
        self.start_snapshots(info, snapshot_every, request.export.dir.clone());
        self.snapshot_heap_at_incidents();
        let (seconds, info) = (request.seconds, info.clone());
        let timer = std::thread::Builder::new().name(String::from("corprof-on-demand"));
        let heap = self.snapshots.get().cloned();
        if timer
            .spawn(move || stop_and_detach(seconds, sampler, info, heap))
            .is_err()
        {
            say("cannot start the timer thread: sampling until the process exits");
        }
        Ok(())
    }

    fn profiler_detach_succeeded(&self, _info: &ProfilerInfo) -> Result<()> {
        say("detached");
        Ok(())
    }

    fn thread_name_changed(
        &self,
        _info: &ProfilerInfo,
        thread: ThreadID,
        name: String,
    ) -> Result<()> {
        if let Some(sampler) = self.sampler.get() {
            sampler.thread_name_changed(thread, &name);
        }
        Ok(())
    }

    fn class_load_finished(
        &self,
        _info: &ProfilerInfo,
        class: ClassID,
        status: crate::HRESULT,
    ) -> Result<()> {
        if let (Some(snapshots), true) = (self.snapshots.get(), status.is_ok()) {
            snapshots.class_loaded(class, true);
        }
        if let (Some(classes), true) = (self.classes.get(), status.is_ok()) {
            lock(classes).insert(class, ());
        }
        Ok(())
    }

    fn class_unload_started(&self, _info: &ProfilerInfo, class: ClassID) -> Result<()> {
        if let Some(snapshots) = self.snapshots.get() {
            snapshots.class_loaded(class, false);
        }
        if let Some(classes) = self.classes.get() {
            lock(classes).remove(&class);
        }
        Ok(())
    }

    fn thread_created(&self, _info: &ProfilerInfo, thread: ThreadID) -> Result<()> {
        if let Some(sampler) = self.sampler.get() {
            sampler.thread_created(thread);
        }
        Ok(())
    }

    fn thread_assigned_to_os_thread(
        &self,
        _info: &ProfilerInfo,
        thread: ThreadID,
        os_thread: u32,
    ) -> Result<()> {
        if let Some(sampler) = self.sampler.get() {
            sampler.thread_assigned_to_os_thread(thread, os_thread);
        }
        Ok(())
    }

    fn thread_destroyed(&self, _info: &ProfilerInfo, thread: ThreadID) -> Result<()> {
        if let Some(sampler) = self.sampler.get() {
            sampler.thread_destroyed(thread);
        }
        Ok(())
    }

    fn object_allocated(
        &self,
        _info: &ProfilerInfo,
        object: ObjectID,
        class: ClassID,
    ) -> Result<()> {
        match self.sampler.get() {
            // SAFETY: this callback's own arguments, forwarded on its thread.
            Some(sampler) => unsafe { sampler.object_allocated(object, class) },
            None => Ok(()),
        }
    }

    fn exception_thrown(&self, _info: &ProfilerInfo, thrown: CallbackObject<'_>) -> Result<()> {
        match self.sampler.get() {
            Some(sampler) => sampler.exception_thrown(thrown),
            None => Ok(()),
        }
    }

    fn event_pipe_event_delivered(
        &self,
        _info: &ProfilerInfo,
        event: &EventPipeEvent<'_>,
    ) -> Result<()> {
        match self.sampler.get() {
            // SAFETY: this callback's own event, forwarded on its thread.
            Some(sampler) => unsafe { sampler.event_pipe_event_delivered_from_runtime(event) },
            None => Ok(()),
        }
    }

    fn shutdown(&self, _info: &ProfilerInfo) -> Result<()> {
        let Some(sampler) = self.sampler.get() else {
            return Ok(());
        };
        let heap = self.snapshots.get().map(HeapSnapshots::stop);
        let profile = sampler.stop();
        let stats = &profile.stats;
        say(&format!(
            "mode {}: {} suspensions, {} walks of {} threads, pause median {} us, p99 {} us, {} walks without managed frames",
            stats.mode.name(),
            stats.suspensions,
            stats.walks,
            profile.threads.len(),
            stats.pause_quantile(0.5) / 1000,
            stats.pause_quantile(0.99) / 1000,
            stats.failed_walks
        ));
        if let Some(dir) = &self.dir {
            let options = sampler.options();
            let asked = (
                options.gc_pauses,
                options.heap_objects.is_some(),
                options.waits_per_second.is_some(),
            );
            let heap = match (self.snapshots.get(), heap) {
                (Some(snapshots), Some(stats)) => stats.summary_lines(snapshots.state()),
                _ => HeapSnapshotStats::default().summary_lines("off"),
            };
            match write_dir(&profile, &sampler.export_stats(), asked, &heap, dir) {
                Ok(written) => say(&format!(
                    "wrote the profile ({} pprof samples) into {}",
                    written.pprof_samples,
                    dir.display()
                )),
                Err(error) => say(&format!("writing {}: {error}", dir.display())),
            }
        } else {
            say("no output directory (CORPROF_SAMPLER_DIR, SamplingProfiler::write_to): the profile was not written");
        }
        Ok(())
    }
}

/// Samples for `seconds`, then stops the sampler (its exporters deliver the
/// profile) and asks the runtime to detach.
fn stop_and_detach(
    seconds: u64,
    sampler: Arc<Sampler>,
    info: ProfilerInfo,
    heap: Option<HeapSnapshots>,
) {
    std::thread::sleep(Duration::from_secs(seconds));
    if let Some(heap) = heap {
        let stats = heap.stop();
        say(&format!(
            "heap snapshots {}: {} taken, last pause {} us",
            heap.state(),
            stats.snapshots,
            stats.last_pause_nanos / 1000
        ));
    }
    let profile = sampler.stop();
    let delivered: Vec<String> = sampler
        .export_stats()
        .exporters
        .iter()
        .map(|e| format!("{} {}", e.name, e.exported))
        .collect();
    say(&format!(
        "{} walks in {:.1} s, profiles delivered: {}",
        profile.stats.walks,
        profile.duration.as_secs_f64(),
        delivered.join(", ")
    ));
    if !sampler.threads_ended() {
        return say(
            "a thread or the SIGPROF handler of the sampler is still there: staying loaded",
        );
    }
    drop(sampler);
    // SAFETY: the sampler's threads have ended and its signal handler is
    // gone (checked above), and this thread returns at once, well within
    // the 500 ms the runtime waits before it unloads the library.
    if let Err(error) = unsafe { info.request_profiler_detach(500) } {
        say(&format!(
            "the runtime refused to detach ({error}): staying loaded"
        ));
    }
}
