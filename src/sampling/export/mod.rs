//! Continuous profiles: at the end of each period
//! ([`SamplerOptions::period`](super::SamplerOptions::period)) the sampler
//! hands a self-contained delta profile of that period to an export thread
//! of its own (`corprof-export`), through a bounded queue, and goes on
//! sampling. The export thread encodes it (pprof, gzipped) and gives it to
//! each [`Exporter`]:
//!
//! - [`DirectoryExporter`]: one `profile-<start>-<seq>.pb.gz` file per
//!   period, written to a temporary name and renamed, the oldest removed
//!   beyond a count;
//! - [`PushExporter`]: `POST /ingest` to a Grafana Pyroscope–compatible
//!   server, from a thread and a bounded queue of its own, over plain
//!   HTTP/1.1 (a client of its own, whose errors are [`HttpError`]);
//! - [`OtlpExporter`]: the period's pprof (kept beside its gzip in
//!   [`PeriodProfile::pprof`]) as an OpenTelemetry profiles request, to an
//!   OTLP/HTTP receiver, with the same thread, queue and client
//!   (`sender.rs`).
//!
//! Nothing here ever makes the sampler or an application thread wait: the
//! hand-off queue drops its oldest period when full (counted in
//! [`ExportStats::dropped`]), and each exporter bounds its own work.

mod dir;
pub(in crate::sampling) mod http;
mod otlp;
pub(in crate::sampling) mod push;
mod queue;
mod sender;
pub(in crate::sampling) mod url;

use alloc::boxed::Box;
use alloc::format;
use alloc::string::String;
use alloc::sync::Arc;
use alloc::vec::Vec;
use core::time::Duration;
use std::path::PathBuf;
use std::sync::{Condvar, Mutex};
use std::time::{Instant, SystemTime};

pub use dir::{is_period_file, period_file_name, utc_stamp, DirectoryExporter};
pub use http::{HttpError, ResponseError, Timeouts};
pub use otlp::{OtlpExporter, OtlpTarget};
pub use push::{PushApi, PushExporter, PushTarget, PUSH_SERIES};
pub use sender::{PushOptions, PUSH_FAILURES};
pub use url::Url;

pub(crate) use crate::support::sync::lock;

use self::queue::Queue;
use crate::profile::Pprof;
use crate::sampling::env::{
    number, var, SAMPLER_APP, SAMPLER_DIR, SAMPLER_KEEP, SAMPLER_PUSH_API, SAMPLER_PUSH_URL,
    SAMPLER_TENANT,
};
use crate::sampling::state::Profile;
use crate::{Error, E_INVALIDARG};

/// One period's profile, encoded: what exporters get.
#[derive(Clone, Debug)]
pub struct PeriodProfile {
    /// The period's number in this run, from 0 (a period dropped before
    /// export leaves a gap).
    pub seq: u64,
    /// When the period started.
    pub start: SystemTime,
    /// How long it lasted.
    pub duration: Duration,
    /// The period as pprof, gzipped (`profile.proto`; its own
    /// `time_nanos`, `duration_nanos`, string and function tables).
    pub pprof_gz: Vec<u8>,
    /// pprof samples in it.
    pub samples: usize,
    /// The same profile before its encoding (what the OTLP exporter
    /// encodes, on its own thread).
    pub pprof: Arc<Pprof>,
}

impl PeriodProfile {
    /// When the period ended.
    pub fn end(&self) -> SystemTime {
        self.start + self.duration
    }
}

/// Why an export attempt failed, as [`ExporterStats`] counts it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum FailureCause {
    /// No connection (refused, unreachable, name not resolved).
    Connect,
    /// A timeout while connecting, writing or reading.
    Timeout,
    /// Another I/O error (a file not written, a connection broken).
    Io,
    /// The answer was not HTTP, or an unexpected status.
    BadResponse,
    /// The server refused the request (4xx: not retried).
    Http4xx,
    /// The server failed (5xx: retried).
    Http5xx,
    /// An exporter's own cause: its name in `summary.txt` (letters, digits
    /// and `_`).
    Other(&'static str),
}

impl FailureCause {
    /// The cause's name in `summary.txt` (`export_<exporter>_failed_<name>`):
    /// `connect`, `timeout`, `io`, `bad_response`, `http_4xx`, `http_5xx`,
    /// or an [`Other`](Self::Other)'s own.
    pub fn name(self) -> &'static str {
        match self {
            FailureCause::Connect => "connect",
            FailureCause::Timeout => "timeout",
            FailureCause::Io => "io",
            FailureCause::BadResponse => "bad_response",
            FailureCause::Http4xx => "http_4xx",
            FailureCause::Http5xx => "http_5xx",
            FailureCause::Other(name) => name,
        }
    }
}

impl core::fmt::Display for FailureCause {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.name())
    }
}

/// Failed attempts of one cause ([`ExporterStats::failures`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Failures {
    /// Why they failed.
    pub cause: FailureCause,
    /// How many attempts failed so.
    pub count: u64,
}

/// What one exporter did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ExporterStats {
    /// Its name (`dir`, `push`): the prefix of its lines in `summary.txt`.
    pub name: &'static str,
    /// Periods delivered (written, or accepted by the server).
    pub exported: u64,
    /// Periods given up: its queue was full, or every attempt failed.
    pub dropped: u64,
    /// Failed attempts by cause, causes in a fixed order (those given to
    /// [`new`](Self::new), then others as they first fail).
    pub failures: Vec<Failures>,
    /// The last failure, as text (`None` when there was none).
    pub last_error: Option<String>,
    /// Whether a thread of the exporter's own was still running when it
    /// was last asked (after [`Exporter::finish`]: left behind, stuck).
    pub running: bool,
}

impl ExporterStats {
    /// An exporter's stats with no failure yet, for `causes`.
    pub fn new(name: &'static str, causes: &[FailureCause]) -> ExporterStats {
        ExporterStats {
            name,
            failures: causes
                .iter()
                .map(|&cause| Failures { cause, count: 0 })
                .collect(),
            ..ExporterStats::default()
        }
    }

    /// Counts one failure of `cause` (one of the causes given to
    /// [`new`](Self::new); another is added).
    pub fn fail(&mut self, cause: FailureCause, error: String) {
        match self.failures.iter_mut().find(|f| f.cause == cause) {
            Some(entry) => entry.count += 1,
            None => self.failures.push(Failures { cause, count: 1 }),
        }
        self.last_error = Some(error);
    }

    /// The failures of `cause`.
    pub fn failures_of(&self, cause: FailureCause) -> u64 {
        self.failures
            .iter()
            .find(|f| f.cause == cause)
            .map_or(0, |f| f.count)
    }
}

/// Where periods go. The export thread calls [`export`](Self::export) for
/// each period in order, then [`finish`](Self::finish) once at shutdown.
/// An exporter must bound the time it takes: a slow destination gets a
/// queue and a thread of the exporter's own, as [`PushExporter`] does.
pub trait Exporter: Send {
    /// Exports one period (failures are counted in its stats).
    fn export(&mut self, period: &PeriodProfile);
    /// Delivers what is still queued, giving up at `deadline`.
    fn finish(&mut self, deadline: Instant) {
        let _ = deadline;
    }
    /// What it did so far.
    fn stats(&self) -> ExporterStats;
}

/// What the export pipeline did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ExportStats {
    /// Periods the sampler completed.
    pub periods: u64,
    /// Periods encoded and given to every exporter.
    pub exported: u64,
    /// Periods dropped because the export thread was behind (its queue
    /// holds [`HANDOFF_CAPACITY`] periods; the oldest goes).
    pub dropped: u64,
    /// Each exporter's own.
    pub exporters: Vec<ExporterStats>,
}

impl ExportStats {
    /// `key=value` lines for `summary.txt`: `export_periods`,
    /// `export_exported`, `export_dropped`, then per exporter
    /// `export_<name>_exported`, `_dropped` and `_failed_<cause>`.
    pub fn summary_lines(&self) -> String {
        let mut out = format!(
            "export_periods={}\nexport_exported={}\nexport_dropped={}\n",
            self.periods, self.exported, self.dropped
        );
        for e in &self.exporters {
            out.push_str(&format!(
                "export_{0}_exported={1}\nexport_{0}_dropped={2}\n",
                e.name, e.exported, e.dropped
            ));
            for f in &e.failures {
                out.push_str(&format!(
                    "export_{}_failed_{}={}\n",
                    e.name,
                    f.cause.name(),
                    f.count
                ));
            }
        }
        out
    }
}

/// Periods the hand-off queue holds before it drops the oldest.
pub const HANDOFF_CAPACITY: usize = 4;

/// How long [`Sampler::stop`](super::Sampler::stop) waits at most for the
/// exporters to deliver what is left (the push exporter's deadline).
pub const FINISH_TIMEOUT: Duration = Duration::from_secs(3);

/// The sampler's side of the export thread.
pub(crate) struct Pipeline {
    queue: Arc<Queue<(u64, Profile)>>,
    shared: Arc<Shared>,
    next_seq: Mutex<u64>,
    thread: Mutex<Option<std::thread::JoinHandle<()>>>,
}

struct Shared {
    stats: Mutex<ExportStats>,
    done: Mutex<bool>,
    finished: Condvar,
    deadline: Mutex<Option<Instant>>,
}

impl Pipeline {
    /// Starts the export thread (`None` when it cannot be started).
    pub(crate) fn start(mut exporters: Vec<Box<dyn Exporter>>) -> Option<Pipeline> {
        let queue = Arc::new(Queue::new(HANDOFF_CAPACITY));
        let shared = Arc::new(Shared {
            stats: Mutex::new(ExportStats {
                exporters: exporters.iter().map(|e| e.stats()).collect(),
                ..ExportStats::default()
            }),
            done: Mutex::new(false),
            finished: Condvar::new(),
            deadline: Mutex::new(None),
        });
        let (q, s) = (Arc::clone(&queue), Arc::clone(&shared));
        let thread = std::thread::Builder::new()
            .name(String::from("corprof-export"))
            .spawn(move || {
                while let Some((seq, profile)) = q.pop() {
                    let period = encode(seq, &profile);
                    drop(profile);
                    for exporter in exporters.iter_mut() {
                        exporter.export(&period);
                    }
                    let mut stats = lock(&s.stats);
                    stats.exported += 1;
                    stats.exporters = exporters.iter().map(|e| e.stats()).collect();
                }
                let deadline = lock(&s.deadline).unwrap_or_else(|| Instant::now() + FINISH_TIMEOUT);
                for exporter in exporters.iter_mut() {
                    exporter.finish(deadline);
                }
                lock(&s.stats).exporters = exporters.iter().map(|e| e.stats()).collect();
                *lock(&s.done) = true;
                s.finished.notify_all();
            })
            .ok()?;
        Some(Pipeline {
            queue,
            shared,
            next_seq: Mutex::new(0),
            thread: Mutex::new(Some(thread)),
        })
    }

    /// Hands a period over (never waits for the export thread).
    pub(crate) fn hand(&self, profile: Profile) {
        let seq = {
            let mut next = lock(&self.next_seq);
            *next += 1;
            *next - 1
        };
        let dropped = self.queue.push((seq, profile));
        let mut stats = lock(&self.shared.stats);
        stats.periods += 1;
        stats.dropped += dropped as u64;
    }

    /// Closes the queue and waits until the exporters are done or
    /// `timeout` has passed (a stuck exporter is left behind); `true` when
    /// the export thread has ended (joined).
    pub(crate) fn finish(&self, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        *lock(&self.shared.deadline) = Some(deadline);
        self.queue.close();
        let mut done = lock(&self.shared.done);
        while !*done {
            let now = Instant::now();
            if now >= deadline + Duration::from_millis(500) {
                return false;
            }
            done = self
                .shared
                .finished
                .wait_timeout(done, deadline + Duration::from_millis(500) - now)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
        drop(done);
        if let Some(thread) = lock(&self.thread).take() {
            let _ = thread.join();
        }
        let left = lock(&self.shared.stats).exporters.iter().any(|e| e.running);
        !left
    }

    /// Periods waiting for the export thread.
    #[cfg(test)]
    fn queue_len(&self) -> usize {
        self.queue.len()
    }

    /// Closes the queue without waiting (the export thread ends after
    /// what is queued).
    pub(crate) fn close(&self) {
        self.queue.close();
    }

    pub(crate) fn stats(&self) -> ExportStats {
        lock(&self.shared.stats).clone()
    }
}

/// A pipeline dropped without [`Pipeline::finish`] (a sampler that failed
/// to start after it, or dropped without a stop): the queue is closed, so
/// that the export thread exports what is queued, finishes the exporters
/// (their threads end too) and ends, rather than wait forever.
impl Drop for Pipeline {
    fn drop(&mut self) {
        self.queue.close();
    }
}

/// A period's profile as exporters get it.
fn encode(seq: u64, profile: &Profile) -> PeriodProfile {
    let pprof = profile.to_pprof();
    PeriodProfile {
        seq,
        start: profile.started,
        duration: profile.duration,
        samples: pprof.sample_count(),
        pprof_gz: pprof.encode_gzip(),
        pprof: Arc::new(pprof),
    }
}

/// Where continuous profiles go, as an operator sets it in the
/// environment ([`ExportOptions::from_env`]), or [`Default`] and then the
/// `with_*` setters or fields changed (`#[non_exhaustive]`: options may be
/// added). The period is not here: it is
/// [`SamplerOptions::period`](super::SamplerOptions::period), the one place
/// it is set (`CORPROF_SAMPLER_PERIOD` is read by
/// [`SamplerOptions::from_env`](super::SamplerOptions::from_env)).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ExportOptions {
    /// The directory of period files (`CORPROF_SAMPLER_DIR`).
    pub dir: Option<PathBuf>,
    /// How many period files to keep (`CORPROF_SAMPLER_KEEP`, 1 to
    /// 1,000,000; default 60).
    pub keep: usize,
    /// The profile server (`CORPROF_SAMPLER_PUSH_URL`, `http://host:port`).
    pub push: Option<PushTarget>,
    /// Which of its APIs ([`PushApi`]: `CORPROF_SAMPLER_PUSH_API`, `ingest`
    /// or `push`; default `ingest`, which every version takes).
    pub push_api: PushApi,
    /// The tenant, for a multi-tenant server (`CORPROF_SAMPLER_TENANT`:
    /// `X-Scope-OrgID` of the push API).
    pub tenant: Option<String>,
    /// The application's name on the server (`CORPROF_SAMPLER_APP`;
    /// default: the process's name, or for `dotnet App.dll` the
    /// assembly's, `App`).
    pub app: String,
    /// The OTLP receiver (`OTEL_EXPORTER_OTLP_PROFILES_ENDPOINT`,
    /// `OTEL_EXPORTER_OTLP_ENDPOINT` and the other variables of
    /// [`OtlpTarget::from_env`]).
    pub otlp: Option<OtlpTarget>,
}

impl Default for ExportOptions {
    fn default() -> ExportOptions {
        ExportOptions {
            dir: None,
            keep: 60,
            push: None,
            push_api: PushApi::Ingest,
            tenant: None,
            app: process_name(),
            otlp: None,
        }
    }
}

impl ExportOptions {
    /// With [`dir`](Self::dir) set (`None`: no period files).
    #[must_use]
    pub fn with_dir(mut self, dir: Option<PathBuf>) -> ExportOptions {
        self.dir = dir;
        self
    }

    /// With [`keep`](Self::keep) set.
    #[must_use]
    pub fn with_keep(mut self, keep: usize) -> ExportOptions {
        self.keep = keep;
        self
    }

    /// With [`push`](Self::push) set (`None`: no profile server).
    #[must_use]
    pub fn with_push(mut self, push: Option<PushTarget>) -> ExportOptions {
        self.push = push;
        self
    }

    /// With [`push_api`](Self::push_api) and [`tenant`](Self::tenant) set.
    #[must_use]
    pub fn with_push_api(mut self, api: PushApi, tenant: Option<String>) -> ExportOptions {
        self.push_api = api;
        self.tenant = tenant;
        self
    }

    /// With [`otlp`](Self::otlp) set (`None`: no OTLP receiver).
    #[must_use]
    pub fn with_otlp(mut self, otlp: Option<OtlpTarget>) -> ExportOptions {
        self.otlp = otlp;
        self
    }

    /// With [`app`](Self::app) set.
    #[must_use]
    pub fn with_app(mut self, app: impl Into<String>) -> ExportOptions {
        self.app = app.into();
        self
    }

    /// The options from the environment (`CORPROF_SAMPLER_DIR`,
    /// `CORPROF_SAMPLER_KEEP`, `CORPROF_SAMPLER_PUSH_URL`,
    /// `CORPROF_SAMPLER_APP`, and OpenTelemetry's of
    /// [`OtlpTarget::from_env`]); a bad value is an `Err` naming the variable
    /// and what it should be. (`CORPROF_SAMPLER_PERIOD` is
    /// [`SamplerOptions::from_env`](super::SamplerOptions::from_env)'s.)
    pub fn from_env() -> Result<ExportOptions, Error> {
        let keep = number(SAMPLER_KEEP, 60, 1, 1_000_000)?;
        let push = match var(SAMPLER_PUSH_URL)? {
            None => None,
            Some(url) => Some(PushTarget::parse(url.trim()).map_err(|e| {
                Error::new(E_INVALIDARG, format!("{SAMPLER_PUSH_URL}={url:?}: {e}"))
            })?),
        };
        let app = match var(SAMPLER_APP)? {
            None => process_name(),
            Some(app) if valid_app(app.trim()) => String::from(app.trim()),
            Some(app) => {
                return Err(Error::new(
                    E_INVALIDARG,
                    format!(
                        "{SAMPLER_APP}={app:?} is not a name of 1 to 200 letters, digits and . _ -"
                    ),
                ))
            }
        };
        let push_api = match var(SAMPLER_PUSH_API)? {
            None => PushApi::Ingest,
            Some(text) => PushApi::from_name(text.trim()).ok_or_else(|| {
                Error::new(
                    E_INVALIDARG,
                    format!("{SAMPLER_PUSH_API}={text:?} is not one of ingest, push"),
                )
            })?,
        };
        let tenant = match var(SAMPLER_TENANT)? {
            None => None,
            Some(t) if valid_tenant(t.trim()) => Some(String::from(t.trim())),
            Some(t) => {
                let why = "is not a tenant of 1 to 150 visible ASCII characters";
                let message = format!("{SAMPLER_TENANT}={t:?} {why}");
                return Err(Error::new(E_INVALIDARG, message));
            }
        };
        Ok(ExportOptions {
            dir: var(SAMPLER_DIR)?.map(PathBuf::from),
            keep: keep as usize,
            push,
            push_api,
            tenant,
            app,
            otlp: OtlpTarget::from_env()?,
        })
    }

    /// The exporters these options ask for (none: no continuous profile).
    /// `Err` saying what failed when the directory cannot be created or the
    /// push thread cannot be started.
    pub fn exporters(&self) -> Result<Vec<Box<dyn Exporter>>, Error> {
        let mut exporters: Vec<Box<dyn Exporter>> = Vec::new();
        if let Some(dir) = &self.dir {
            let exporter = DirectoryExporter::new(dir, self.keep)
                .map_err(|e| Error::from(e).context(format!("{SAMPLER_DIR}={}", dir.display())))?;
            exporters.push(Box::new(exporter));
        }
        if let Some(target) = &self.push {
            let tenant = self.tenant.as_deref();
            let options = PushOptions::default();
            let exporter =
                PushExporter::start_api(target.clone(), &self.app, self.push_api, tenant, options)
                    .map_err(|e| Error::from(e).context("cannot start the push thread"))?;
            exporters.push(Box::new(exporter));
        }
        if let Some(target) = &self.otlp {
            let exporter = OtlpExporter::start(target.clone(), PushOptions::default())
                .map_err(|e| Error::from(e).context("cannot start the OTLP thread"))?;
            exporters.push(Box::new(exporter));
        }
        Ok(exporters)
    }
}

/// A tenant id as a header value can carry it.
fn valid_tenant(tenant: &str) -> bool {
    (1..=150).contains(&tenant.len()) && tenant.bytes().all(|b| b.is_ascii_graphic())
}

/// A name Pyroscope takes as an application name.
fn valid_app(name: &str) -> bool {
    (1..=200).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b))
}

/// The process's name: its executable's, or for `dotnet App.dll` the
/// assembly's (`App`), made a valid application name.
fn process_name() -> String {
    let mut args = std::env::args_os().map(PathBuf::from);
    let exe = args.next();
    let name = match exe.as_ref().and_then(|e| e.file_stem()) {
        Some(stem) if stem == "dotnet" => args
            .find(|a| a.extension().is_some_and(|x| x == "dll"))
            .and_then(|dll| dll.file_stem().map(|s| s.to_string_lossy().into_owned())),
        Some(stem) => Some(stem.to_string_lossy().into_owned()),
        None => None,
    };
    let name: String = name
        .unwrap_or_default()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "._-".contains(c) {
                c
            } else {
                '_'
            }
        })
        .take(200)
        .collect();
    if name.is_empty() {
        String::from("dotnet-app")
    } else {
        name
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::{Frames, StackTree};
    use crate::sampling::options::{CPU, SAMPLE_TYPES};
    use crate::sampling::state::{SamplerStats, ThreadProfile};
    use std::sync::mpsc;

    /// A period whose one thread spent `cpu` nanoseconds in `Main`.
    fn period(cpu: u64) -> Profile {
        let mut frames = Frames::new();
        let main = frames.intern("Main");
        let mut tree = StackTree::new(SAMPLE_TYPES.len());
        let mut values = [0; SAMPLE_TYPES.len()];
        values[CPU] = cpu;
        tree.add([main], &values);
        Profile {
            frames,
            threads: alloc::vec![ThreadProfile {
                name: String::from("T"),
                os_thread: 1,
                tree,
                spans: Vec::new(),
            }],
            started: std::time::UNIX_EPOCH + Duration::from_secs(1_000),
            duration: Duration::from_secs(1),
            period_nanos: 10,
            stats: SamplerStats::default(),
        }
    }

    /// Records what it gets; the first export waits for a release.
    struct Recorder {
        got: Arc<Mutex<Vec<(u64, usize)>>>,
        release: Option<mpsc::Receiver<()>>,
        finished: Arc<Mutex<bool>>,
    }

    impl Exporter for Recorder {
        fn export(&mut self, period: &PeriodProfile) {
            if let Some(release) = self.release.take() {
                let _ = release.recv();
            }
            assert_eq!(&period.pprof_gz[..2], &[0x1f, 0x8b], "gzip");
            lock(&self.got).push((period.seq, period.samples));
        }
        fn finish(&mut self, _deadline: Instant) {
            *lock(&self.finished) = true;
        }
        fn stats(&self) -> ExporterStats {
            ExporterStats {
                exported: lock(&self.got).len() as u64,
                ..ExporterStats::new("test", &[])
            }
        }
    }

    /// The hand-off never waits: with the export thread stuck on period 0,
    /// the queue keeps the newest 4 of the next 5 and counts the drop; at
    /// finish everything queued is exported, in order, and the exporter
    /// finished and the thread joined.
    #[test]
    fn a_stuck_export_never_blocks_the_hand_off() {
        let (release, wait) = mpsc::channel();
        let got = Arc::new(Mutex::new(Vec::new()));
        let finished = Arc::new(Mutex::new(false));
        let recorder = Recorder {
            got: Arc::clone(&got),
            release: Some(wait),
            finished: Arc::clone(&finished),
        };
        let pipeline =
            Pipeline::start(alloc::vec![Box::new(recorder) as Box<dyn Exporter>]).unwrap();
        pipeline.hand(period(5));
        // Wait until the export thread has taken period 0 (and is stuck).
        let start = Instant::now();
        while pipeline.queue_len() > 0 {
            assert!(start.elapsed() < Duration::from_secs(10));
            std::thread::sleep(Duration::from_millis(1));
        }
        let handing = Instant::now();
        for cpu in 1..=5 {
            pipeline.hand(period(cpu));
        }
        assert!(
            handing.elapsed() < Duration::from_secs(1),
            "the hand-off waited"
        );
        release.send(()).unwrap();
        assert!(pipeline.finish(Duration::from_secs(10)));
        assert_eq!(*lock(&got), [(0, 1), (2, 1), (3, 1), (4, 1), (5, 1)]);
        assert!(*lock(&finished));
        let stats = pipeline.stats();
        assert_eq!((stats.periods, stats.exported, stats.dropped), (6, 5, 1));
        assert_eq!(stats.exporters[0].exported, 5);
    }

    /// Dropped without a finish (the error paths of a sampler's start):
    /// the export thread finishes the exporters and ends.
    #[test]
    fn a_dropped_pipeline_ends_its_thread() {
        let finished = Arc::new(Mutex::new(false));
        let recorder = Recorder {
            got: Arc::new(Mutex::new(Vec::new())),
            release: None,
            finished: Arc::clone(&finished),
        };
        let pipeline =
            Pipeline::start(alloc::vec![Box::new(recorder) as Box<dyn Exporter>]).unwrap();
        let shared = Arc::clone(&pipeline.shared);
        // Running: nothing ends it but a close.
        std::thread::sleep(Duration::from_millis(100));
        assert!(!*lock(&shared.done) && !*lock(&finished));
        drop(pipeline);
        let start = Instant::now();
        while !*lock(&shared.done) {
            assert!(start.elapsed() < Duration::from_secs(10), "still running");
            std::thread::sleep(Duration::from_millis(1));
        }
        assert!(*lock(&finished));
    }

    #[test]
    fn summary_lines_name_every_counter() {
        let mut push = ExporterStats::new("push", &[FailureCause::Connect, FailureCause::Http5xx]);
        push.exported = 3;
        push.fail(FailureCause::Http5xx, String::from("500"));
        push.fail(FailureCause::Http5xx, String::from("500"));
        push.fail(FailureCause::Other("quota"), String::from("full"));
        let stats = ExportStats {
            periods: 5,
            exported: 4,
            dropped: 1,
            exporters: alloc::vec![push],
        };
        assert_eq!(
            stats.summary_lines(),
            "export_periods=5\nexport_exported=4\nexport_dropped=1\n\
             export_push_exported=3\nexport_push_dropped=0\n\
             export_push_failed_connect=0\nexport_push_failed_http_5xx=2\n\
             export_push_failed_quota=1\n"
        );
    }

    #[test]
    fn push_apis_and_tenants() {
        assert_eq!(PushApi::from_name("push"), Some(PushApi::Push));
        assert_eq!(PushApi::from_name("ingest"), Some(PushApi::Ingest));
        assert_eq!(PushApi::from_name("grpc"), None);
        assert!(valid_tenant("team-a|team-b"));
        assert!(!valid_tenant(""));
        assert!(!valid_tenant("a b"));
        assert!(!valid_tenant("a\r\nX: y"));
    }

    #[test]
    fn application_names() {
        assert!(valid_app("my-app.v2_x"));
        assert!(!valid_app(""));
        assert!(!valid_app("a{b}"));
        assert!(!valid_app(&"a".repeat(201)));
        assert!(valid_app(&process_name()));
    }
}
