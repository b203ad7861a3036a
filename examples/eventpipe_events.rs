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
//! With `EVENTPIPE_EVENTS_WRITE=N` it is also a provider of its own,
//! `CorProf-EventPipeEvents`, defining `Ping(Int32 Value)`; its session
//! enables that provider too, it writes `Ping` 1..=N at the first JIT
//! compilation, and it prints `eventpipe profiler Ping <count> <sum>` for the
//! ones delivered back.
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
use corprof::facade::{
    EventPipeEvent, EventPipeEventDefinition, EventPipeParam, EventPipeProvider, Profiler,
    ProfilerInfo, Result,
};
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
    /// The profiler's own `Ping` events delivered: (count, sum of `Value`).
    pings: (u64, i64),
}

/// The profiler's own provider and event (`EVENTPIPE_EVENTS_WRITE`).
const OWN_PROVIDER: &str = "CorProf-EventPipeEvents";

#[derive(Default)]
struct EventPipeEvents {
    session: Mutex<Option<EVENTPIPE_SESSION>>,
    tallies: Mutex<Tallies>,
    /// The profiler's own provider and its `Ping` event, and how many
    /// events to write (`EVENTPIPE_EVENTS_WRITE`).
    own: Mutex<Option<(EVENTPIPE_PROVIDER, EVENTPIPE_EVENT, u32)>>,
    /// The events were written (once, at the first JIT compilation).
    written: std::sync::atomic::AtomicBool,
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
        let own = lock(&self.own).map(|(provider, _, _)| provider);
        if own == Some(event.provider) {
            // The profiler's own event: decoded by the fields its metadata
            // describes.
            let values = decode_payload(&metadata.fields, event.data).map_err(|e| e.to_string())?;
            let value = values
                .first()
                .and_then(|v| v.as_i64())
                .ok_or_else(|| format!("{} has no Int32 Value", metadata.name))?;
            let mut tallies = lock(&self.tallies);
            tallies.pings.0 += 1;
            tallies.pings.1 += value;
            return Ok(());
        }
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
        let writes = match std::env::var("EVENTPIPE_EVENTS_WRITE") {
            Err(_) => 0,
            Ok(text) => match text.trim().parse::<u32>() {
                Ok(n) if n <= 1_000_000 => n,
                _ => {
                    say(&format!(
                        "eventpipe_events: EVENTPIPE_EVENTS_WRITE={text:?} is not a number up to 1000000; writing none"
                    ));
                    0
                }
            },
        };
        let events = if writes > 0 {
            COR_PRF_MONITOR_JIT_COMPILATION
        } else {
            COR_PRF_MONITOR::empty()
        };
        info.set_event_mask(events | COR_PRF_HIGH_MONITOR_EVENT_PIPE)?;
        let mut providers = vec![EventPipeProvider {
            name: RUNTIME_PROVIDER,
            keywords: KEYWORDS,
            level: LEVEL,
            filter: None,
        }];
        if writes > 0 {
            // A provider of the profiler's own with one event, `Ping(Int32
            // Value)`, defined before the session that enables it starts.
            let own = info
                .event_pipe_create_provider(OWN_PROVIDER)
                .and_then(|provider| {
                    let ping = info.event_pipe_define_event(
                        provider,
                        &EventPipeEventDefinition {
                            name: "Ping",
                            id: 1,
                            keywords: 0x1,
                            version: 1,
                            level: 4,
                            opcode: 0,
                            need_stack: false,
                            params: &[EventPipeParam {
                                kind: COR_PRF_EVENTPIPE_INT32,
                                element: COR_PRF_EVENTPIPE_PARAM_TYPE(0),
                                name: "Value",
                            }],
                        },
                    )?;
                    let name = info.event_pipe_provider_name(provider)?;
                    say(&format!("eventpipe_events: provider {name} defines Ping"));
                    Ok((provider, ping))
                });
            match own {
                Ok((provider, ping)) => {
                    *lock(&self.own) = Some((provider, ping, writes));
                    providers.push(EventPipeProvider {
                        name: OWN_PROVIDER,
                        keywords: 0x1,
                        level: 4,
                        filter: None,
                    });
                }
                Err(error) => say(&format!("eventpipe_events: own provider: {error}")),
            }
        }
        match info.event_pipe_start_session(&providers, false) {
            Ok(session) => *lock(&self.session) = Some(session),
            Err(error) => say(&format!(
                "eventpipe_events: cannot start a session: {error}"
            )),
        }
        Ok(())
    }

    fn jit_compilation_started(
        &self,
        info: &ProfilerInfo,
        _function: FunctionID,
        _is_safe_to_block: bool,
    ) -> Result<()> {
        use std::sync::atomic::Ordering;
        // Once, on the first managed thread that compiles: Ping 1..=N,
        // with no lock held (delivery takes the tallies' lock).
        let own = *lock(&self.own);
        let Some((_, ping, writes)) = own else {
            return Ok(());
        };
        if self.written.swap(true, Ordering::AcqRel) {
            return Ok(());
        }
        let mut failed = 0;
        for value in 1..=writes as i32 {
            if info
                .event_pipe_write_event(ping, &[&value.to_le_bytes()])
                .is_err()
            {
                failed += 1;
            }
        }
        say(&format!(
            "eventpipe_events: wrote {} Ping events ({failed} failed)",
            writes
        ));
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
        if lock(&self.own).is_some() {
            out += &format!(
                "eventpipe profiler Ping {} {}\n",
                tallies.pings.0, tallies.pings.1
            );
        }
        if tallies.undecoded > 0 {
            out += &format!("eventpipe undecoded {}\n", tallies.undecoded);
        }
        let _ = std::io::stderr().write_all(out.as_bytes());
        Ok(())
    }
}

corprof::profiler!(EventPipeEvents, "3F6D1A2B-8C4E-4B7A-9D5F-1E2C3B4A5D6E");
