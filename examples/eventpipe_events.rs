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
//! unchanged.
//!
//! Build with `cargo build --example eventpipe_events`; load it with
//! `CORECLR_PROFILER={3F6D1A2B-8C4E-4B7A-9D5F-1E2C3B4A5D6E}` and
//! `CORECLR_PROFILER_PATH=.../libeventpipe_events.so`.

use std::collections::BTreeMap;
use std::io::Write as _;
use std::sync::Mutex;

use corprof::eventpipe::{
    decode_payload, gc_reason_name, runtime_fields, EventMetadata, RUNTIME_PROVIDER,
};
use corprof::facade::{EventPipeEvent, EventPipeProvider, Profiler, ProfilerInfo, Result};
use corprof::profiling::*;

/// GCKeyword (0x1) and ExceptionKeyword (0x8000) of the runtime provider.
const KEYWORDS: u64 = 0x1 | 0x8000;
/// Verbose (5): GCAllocationTick is a verbose event.
const LEVEL: u32 = 5;

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

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

fn say(text: &str) {
    // One write per line (the program's threads share stderr).
    let _ = std::io::stderr().write_all(format!("{text}\n").as_bytes());
}

impl EventPipeEvents {
    fn record(&self, event: &EventPipeEvent<'_>) -> std::result::Result<(), String> {
        let metadata = EventMetadata::parse(event.metadata).map_err(|e| e.to_string())?;
        // The runtime's native events come with metadata that names no
        // fields: their layouts come from the manifest
        // (corprof::eventpipe::runtime_fields). Events that describe their
        // fields are the managed part of the provider (on .NET 8 its
        // NativeRuntimeEventSource writes under the same name, with ids of
        // its own): not the events counted here.
        if !metadata.fields.is_empty() {
            return Ok(());
        }
        let Some(fields) = runtime_fields(event.event_id, event.event_version) else {
            return Ok(()); // an event this profiler does not count
        };
        let values = decode_payload(&fields, event.data).map_err(|e| e.to_string())?;
        let field = |name: &str| {
            fields
                .iter()
                .position(|f| f.name == name)
                .and_then(|i| values.get(i))
                .ok_or_else(|| format!("event {} has no field {name}", event.event_id))
        };
        let mut tallies = lock(&self.tallies);
        match event.event_id {
            80 => {
                let ty = field("ExceptionType")?.as_str().unwrap_or("?").to_string();
                *tallies.exceptions.entry(ty).or_default() += 1;
            }
            1 => {
                let reason = field("Reason")?.as_u64().unwrap_or(u64::MAX);
                let name = gc_reason_name(u32::try_from(reason).unwrap_or(u32::MAX));
                *tallies.gcs.entry(name).or_default() += 1;
            }
            10 => {
                let ty = field("TypeName")?.as_str().unwrap_or("?").to_string();
                let bytes = field("AllocationAmount64")?.as_u64().unwrap_or(0);
                let entry = tallies.allocs.entry(ty).or_default();
                entry.0 += 1;
                entry.1 += bytes;
            }
            _ => {}
        }
        Ok(())
    }
}

impl Profiler for EventPipeEvents {
    fn initialize(&self, info: &ProfilerInfo) -> Result<()> {
        if info.version() < 12 {
            say(&format!(
                "eventpipe_events: in-process EventPipe needs .NET 5 or later (ICorProfilerInfo12); \
                 this runtime offers ICorProfilerInfo{}: not profiling",
                info.version()
            ));
            return Ok(());
        }
        info.set_event_mask(COR_PRF_MONITOR::empty(), COR_PRF_HIGH_MONITOR_EVENT_PIPE)?;
        let provider = EventPipeProvider {
            name: RUNTIME_PROVIDER,
            keywords: KEYWORDS,
            level: LEVEL,
            filter: None,
        };
        match info.event_pipe_start_session(&[provider], false) {
            Ok(session) => *lock(&self.session) = Some(session),
            Err(error) => say(&format!(
                "eventpipe_events: cannot start a session: {error}"
            )),
        }
        Ok(())
    }

    fn event_pipe_event_delivered(
        &self,
        _info: &ProfilerInfo,
        event: &EventPipeEvent<'_>,
    ) -> Result<()> {
        if let Err(why) = self.record(event) {
            let mut tallies = lock(&self.tallies);
            if tallies.undecoded == 0 {
                say(&format!(
                    "eventpipe_events: event {} not decoded: {why}",
                    event.event_id
                ));
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
            say(&format!("eventpipe_events: stopping the session: {error}"));
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
