//! An in-process EventPipe profiler: opens a session for the runtime's own
//! provider (`Microsoft-Windows-DotNETRuntime`: GC, exception and
//! allocation-tick events) in `initialize`, decodes each event with
//! `corprof::eventpipe`, and at shutdown writes to stderr one line per kind:
//!
//! ```text
//! eventpipe exception <ExceptionType> <count>
//! eventpipe gc <reason> <count>
//! eventpipe alloc <TypeName> <ticks> <bytes>
//! ```
//!
//! (GC reasons by their names in the runtime's manifest, e.g. `Induced`;
//! allocation ticks are the runtime's sample of about every 100 KB
//! allocated, `bytes` the sum of their `AllocationAmount64`.) Events that
//! cannot be decoded are counted and reported as `eventpipe undecoded N`.
//!
//! In-process EventPipe needs .NET 5 or later (`ICorProfilerInfo12`): on an
//! older runtime the profiler says so on stderr and the program runs
//! unchanged. (A profiler can also define and write events of its own:
//! `event_pipe_create_provider`, `event_pipe_define_event` and
//! `event_pipe_write_event`, see docs/eventpipe.md.)
//!
//! Build with `cargo build --example eventpipe_events`; load it with
//! `CORECLR_PROFILER={3F6D1A2B-8C4E-4B7A-9D5F-1E2C3B4A5D6E}` and
//! `CORECLR_PROFILER_PATH=.../libeventpipe_events.so`.

use std::collections::BTreeMap;
use std::io::Write as _;
use std::sync::{Mutex, MutexGuard};

use corprof::eventpipe::{decode_payload, gc_reason_name, runtime_fields, EventMetadata};
use corprof::eventpipe::{Value, RUNTIME_PROVIDER};
use corprof::facade::{EventPipeEvent, EventPipeProvider, Profiler, ProfilerInfo, Result};
use corprof::profiling::{COR_PRF_HIGH_MONITOR_EVENT_PIPE, EVENTPIPE_SESSION};

/// GCKeyword (0x1) and ExceptionKeyword (0x8000) of the runtime provider, at
/// level Verbose (5): GCAllocationTick is a verbose event.
const RUNTIME: EventPipeProvider<'static> = EventPipeProvider {
    name: RUNTIME_PROVIDER,
    keywords: 0x1 | 0x8000,
    level: 5,
    filter: None,
};

#[derive(Default)]
struct Tallies {
    exceptions: BTreeMap<String, u64>,
    gcs: BTreeMap<String, u64>,
    /// Type name -> (ticks, bytes).
    allocs: BTreeMap<String, (u64, u64)>,
    undecoded: u64,
}

#[derive(Default)]
struct EventPipeEvents {
    session: Mutex<Option<EVENTPIPE_SESSION>>,
    tallies: Mutex<Tallies>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn say(text: &str) {
    // One write per line (the program's threads share stderr).
    let _ = std::io::stderr().write_all(format!("eventpipe_events: {text}\n").as_bytes());
}

impl EventPipeEvents {
    fn record(&self, event: &EventPipeEvent<'_>) -> std::result::Result<(), String> {
        let metadata = EventMetadata::parse(event.metadata).map_err(|e| e.to_string())?;
        // The runtime's native events come with metadata that names no
        // fields: their layouts come from the manifest (`runtime_fields`).
        // Events that describe their fields are the provider's managed part
        // (on .NET 8 it writes under the same name, with ids of its own).
        let fields = match runtime_fields(event.event_id, event.event_version) {
            Some(fields) if metadata.fields.is_empty() => fields,
            _ => return Ok(()), // an event this profiler does not count
        };
        let values = decode_payload(&fields, event.data).map_err(|e| e.to_string())?;
        let field = |name: &str| -> std::result::Result<&Value, String> {
            let index = fields.iter().position(|f| f.name == name);
            let missing = || format!("event {} has no field {name}", event.event_id);
            index.and_then(|i| values.get(i)).ok_or_else(missing)
        };
        let text = |name: &str| Ok::<_, String>(field(name)?.as_str().unwrap_or("?").to_string());
        let mut tallies = lock(&self.tallies);
        match event.event_id {
            80 => {
                let ty = text("ExceptionType")?;
                *tallies.exceptions.entry(ty).or_default() += 1;
            }
            1 => {
                let reason = field("Reason")?.as_u64().unwrap_or(u64::MAX);
                let name = gc_reason_name(u32::try_from(reason).unwrap_or(u32::MAX));
                *tallies.gcs.entry(name).or_default() += 1;
            }
            10 => {
                let bytes = field("AllocationAmount64")?.as_u64().unwrap_or(0);
                let entry = tallies.allocs.entry(text("TypeName")?).or_default();
                *entry = (entry.0 + 1, entry.1 + bytes);
            }
            _ => {}
        }
        Ok(())
    }
}

impl Profiler for EventPipeEvents {
    fn initialize(&self, info: &ProfilerInfo) -> Result<()> {
        if info.version() < 12 {
            let version = info.version();
            say(&format!(
                "in-process EventPipe needs .NET 5 or later (ICorProfilerInfo12); \
                 this runtime offers ICorProfilerInfo{version}: not profiling"
            ));
            return Ok(());
        }
        info.set_event_mask(COR_PRF_HIGH_MONITOR_EVENT_PIPE)?;
        match info.event_pipe_start_session(&[RUNTIME], false) {
            Ok(session) => *lock(&self.session) = Some(session),
            Err(error) => say(&format!("cannot start a session: {error}")),
        }
        Ok(())
    }

    fn event_pipe_event_delivered(&self, _: &ProfilerInfo, e: &EventPipeEvent<'_>) -> Result<()> {
        if let Err(why) = self.record(e) {
            let mut tallies = lock(&self.tallies);
            if tallies.undecoded == 0 {
                say(&format!("event {} not decoded: {why}", e.event_id));
            }
            tallies.undecoded += 1;
        }
        Ok(())
    }

    fn shutdown(&self, info: &ProfilerInfo) -> Result<()> {
        let Some(session) = lock(&self.session).take() else {
            return Ok(());
        };
        // Stopping delivers the session's last events first.
        if let Err(error) = info.event_pipe_stop_session(session) {
            say(&format!("stopping the session: {error}"));
        }
        let tallies = lock(&self.tallies);
        let mut out = String::new();
        for (ty, n) in &tallies.exceptions {
            out += &format!("eventpipe exception {ty} {n}\n");
        }
        for (reason, n) in &tallies.gcs {
            out += &format!("eventpipe gc {reason} {n}\n");
        }
        for (ty, (ticks, bytes)) in &tallies.allocs {
            out += &format!("eventpipe alloc {ty} {ticks} {bytes}\n");
        }
        if tallies.undecoded > 0 {
            out += &format!("eventpipe undecoded {}\n", tallies.undecoded);
        }
        let _ = std::io::stderr().write_all(out.as_bytes());
        Ok(())
    }
}

corprof::profiler!(EventPipeEvents, "3F6D1A2B-8C4E-4B7A-9D5F-1E2C3B4A5D6E");
