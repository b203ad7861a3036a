//! The incidents: the rules ([`Armed`], `triggers.rs`) fed by what the
//! sampler sees (GC pauses, exceptions, the process's CPU), and the thread
//! that writes the flight recorder's window (`recorder.rs`) when one
//! fires, into `<dir>/incident-<time>-<kind>/`: the profile in every
//! format [`write_outputs`] has and a `reason.txt`.
//!
//! A rule that fires on an application's thread (an exception) or the
//! runtime's (a GC pause) only sends a request over a channel: the window
//! is taken and written on the incidents' thread, which also reads the
//! process's CPU clock every [`CPU_EVERY`].

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::time::Duration;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError, Sender};
use std::sync::Mutex;
use std::time::{Instant, SystemTime};

use super::clock::process_cpu_nanos;
use super::export::utc_stamp;
use super::options::{sample_interval, SamplerOptions};
use super::output::write_outputs;
use super::record::Core;
use super::state::{Profile, SamplerStats, ThreadProfile};
use super::triggers::{Armed, Firing};
use crate::profile::FrameId;
use crate::profiling::ThreadID;
use crate::support::sync::lock;

/// How often the incidents' thread reads the process's CPU clock.
pub(super) const CPU_EVERY: Duration = Duration::from_millis(250);

/// A rule that fired, for the incidents' thread.
struct Request {
    firing: Firing,
    /// The thread that crossed it, and its stack (outermost first).
    thread: Option<(ThreadID, Vec<FrameId>)>,
}

/// The rules and the channel to the incidents' thread.
pub(super) struct Incidents {
    armed: Mutex<Armed>,
    send: Mutex<Sender<Request>>,
    receive: Mutex<Option<Receiver<Request>>>,
    dir: PathBuf,
}

impl Incidents {
    /// The rules of `options` (`None` without any, or without a
    /// directory: `SamplerOptions::validate` refuses that).
    pub(super) fn new(options: &SamplerOptions) -> Option<Incidents> {
        if options.triggers.is_empty() {
            return None;
        }
        let (send, receive) = channel();
        Some(Incidents {
            armed: Mutex::new(Armed::new(
                options.triggers.clone(),
                options.trigger_interval,
            )),
            send: Mutex::new(send),
            receive: Mutex::new(Some(receive)),
            dir: options.incident_dir.clone()?,
        })
    }

    fn request(&self, fired: Vec<Firing>, thread: Option<(ThreadID, Vec<FrameId>)>) {
        let send = lock(&self.send);
        for firing in fired {
            // The thread gone (stopped): nothing more is written.
            let _ = send.send(Request {
                firing,
                thread: thread.clone(),
            });
        }
    }

    /// A GC suspended the runtime for `nanos`, ended now.
    pub(super) fn gc_pause(&self, nanos: u64) {
        let fired = lock(&self.armed).gc_pause(nanos, Instant::now());
        self.request(fired, None);
    }

    /// `count` exceptions of `type_name` thrown now on `thread`, at
    /// `stack` (the one recorded).
    pub(super) fn exception(
        &self,
        type_name: &str,
        count: u64,
        thread: Option<ThreadID>,
        stack: Vec<FrameId>,
    ) {
        let fired = lock(&self.armed).exception(type_name, count, Instant::now());
        if !fired.is_empty() {
            self.request(fired, thread.map(|t| (t, stack)));
        }
    }
}

/// The incidents' thread: until the sampler stops, writes each request and
/// reads the process's CPU clock every [`CPU_EVERY`] for the CPU rules.
pub(super) fn run(core: &Core, incidents: &Incidents) {
    let Some(receive) = lock(&incidents.receive).take() else {
        return;
    };
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get() as u32);
    let watches_cpu = lock(&incidents.armed).watches_cpu();
    loop {
        if *lock(&core.stop) {
            return;
        }
        match receive.recv_timeout(CPU_EVERY) {
            Ok(request) => write(core, incidents, request),
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => return,
        }
        if !watches_cpu {
            continue;
        }
        let Some(cpu) = process_cpu_nanos() else {
            continue;
        };
        let fired = lock(&incidents.armed).cpu(cpu, cores, Instant::now());
        for firing in fired {
            write(
                core,
                incidents,
                Request {
                    firing,
                    thread: None,
                },
            );
        }
    }
}

/// Writes one incident, or says on stderr why it could not.
fn write(core: &Core, incidents: &Incidents, request: Request) {
    let (rule, kind) = {
        let armed = lock(&incidents.armed);
        let trigger = &armed.rules[request.firing.rule];
        (trigger.text.clone(), trigger.kind_name())
    };
    let now = SystemTime::now();
    let unix = now
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let mut dir = incidents
        .dir
        .join(format!("incident-{}-{kind}", utc_stamp(unix)));
    for n in 2.. {
        if !dir.exists() {
            break;
        }
        dir = incidents
            .dir
            .join(format!("incident-{}-{kind}-{n}", utc_stamp(unix)));
    }
    let taking = Instant::now();
    let Some((profile, thread, stack)) = window(core, &request) else {
        return;
    };
    let held = taking.elapsed();
    let result = std::fs::create_dir_all(&dir)
        .and_then(|()| write_outputs(&profile, &dir))
        .and_then(|_| {
            let said = Said {
                rule: &rule,
                kind,
                value: &request.firing.value,
                thread,
                stack: &stack,
                held,
            };
            let reason = reason(&said, &profile);
            std::fs::write(dir.join("reason.txt"), reason)
        });
    match result {
        Ok(()) => lock(&core.state).stats.incidents += 1,
        Err(error) => say(&dir, &error),
    }
}

fn say(dir: &Path, error: &io::Error) {
    use std::io::Write;
    let _ = io::stderr().write_all(
        format!("sampler: writing the incident {}: {error}\n", dir.display()).as_bytes(),
    );
}

/// The recorder's window as a profile, and the thread's name and stack
/// (innermost first) of the request's.
fn window(core: &Core, request: &Request) -> Option<(Profile, Option<String>, Vec<String>)> {
    let state = lock(&core.state);
    let recorder = state.recorder.as_ref()?;
    let now = state.start.elapsed();
    let (frames, trees) = recorder.window(now.as_secs(), &state.frames);
    let name = |slot: usize| {
        let t = &state.threads[slot];
        t.name
            .clone()
            .unwrap_or_else(|| format!("Thread {}", t.os_thread))
    };
    let threads = trees
        .into_iter()
        .map(|(slot, tree)| ThreadProfile {
            name: name(slot),
            os_thread: state.threads[slot].os_thread,
            tree,
        })
        .collect();
    let (thread, stack) = match &request.thread {
        Some((thread, stack)) => (
            state.by_id.get(thread).map(|&slot| name(slot)),
            stack
                .iter()
                .rev()
                .map(|&f| state.frames.name(f).to_string())
                .collect(),
        ),
        None => (None, Vec::new()),
    };
    let seconds = recorder.seconds().min(now.as_secs() + 1);
    let duration = Duration::from_secs(seconds);
    let stats = SamplerStats {
        allocation_source: state.stats.allocation_source,
        mode: state.stats.mode,
        ..SamplerStats::default()
    };
    let profile = Profile {
        frames,
        threads,
        started: SystemTime::now()
            .checked_sub(duration)
            .unwrap_or_else(SystemTime::now),
        duration,
        period_nanos: sample_interval(core.options.hz).as_nanos() as u64,
        stats,
    };
    Some((profile, thread, stack))
}

/// What `reason.txt` says besides the profile's window.
struct Said<'a> {
    rule: &'a str,
    kind: &'a str,
    value: &'a str,
    /// The thread that crossed the rule, and its stack (innermost first).
    thread: Option<String>,
    stack: &'a [String],
    /// How long the sampler's state was held to take the window.
    held: Duration,
}

/// `reason.txt`: `key=value` lines, then the stack, innermost first.
fn reason(said: &Said<'_>, profile: &Profile) -> String {
    let mut text = format!(
        "rule={}\nkind={}\nvalue={}\nwindow_seconds={}\nthreads={}\nwindow_taken_us={}\nthread={}\n",
        said.rule,
        said.kind,
        said.value,
        profile.duration.as_secs(),
        profile.threads.len(),
        said.held.as_micros(),
        said.thread.as_deref().unwrap_or("(none: not one thread's)"),
    );
    if !said.stack.is_empty() {
        text.push_str("stack (innermost first):\n");
        for frame in said.stack {
            text.push_str(&format!("  {frame}\n"));
        }
    }
    text
}
