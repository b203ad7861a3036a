//! A runtime-events profiler: counts garbage collections by reason and
//! generation, exceptions by type, the assemblies and modules loaded (with
//! their paths) and the threads created, and prints a summary at shutdown.
//!
//! Build with `cargo build --example runtime_events`; load it with
//! `CORECLR_PROFILER={C5E5A2F1-3B7D-4C59-9E1A-2F0B6D8C4A17}` and
//! `CORECLR_PROFILER_PATH=.../libruntime_events.so`. The summary goes to
//! stderr, or to the file named by `RUNTIME_EVENTS_OUTPUT`.
//!
//! It also tries what later runtimes offer, and reports each answer (or the
//! error a runtime without it gives): the classes of the objects the first
//! exception references and the large-object threshold
//! (`ICorProfilerInfo10`), the variable `RUNTIME_EVENTS_PROBE` read and
//! `RUNTIME_EVENTS_SET` set through the runtime (`ICorProfilerInfo11`, .NET
//! 5), a weak GC handle to the first exception thrown and a strong one to
//! the second, read at shutdown after the program's collections
//! (`ICorProfilerInfo13`, .NET 7), and the non-GC heap's ranges and objects
//! (`ICorProfilerInfo14`, .NET 8), and an in-process EventPipe session
//! (`ICorProfilerInfo12`, .NET 5) that counts the runtime's own
//! `ExceptionThrown` events beside the profiler's exception callbacks.

use std::collections::BTreeMap;
use std::io::Write;
use std::sync::Mutex;

use corprof::facade::{
    Bools, EventPipeEvent, EventPipeProvider, ObjectHandle, Profiler, ProfilerInfo, Result,
};
use corprof::profiling::*;
use corprof::HRESULT;

#[derive(Default)]
struct Counts {
    /// (reason, oldest generation collected) -> collections. Reasons are
    /// named at shutdown, so a collection costs no allocation.
    gcs: BTreeMap<(COR_PRF_GC_REASON, usize), u32>,
    /// Exception type name -> throws.
    exceptions: BTreeMap<String, u32>,
    assemblies: Vec<String>,
    modules: Vec<String>,
    threads: u32,
    /// The weak handle (first exception) and the strong one (second), or
    /// why they could not be made.
    handles: Vec<std::result::Result<ObjectHandle, corprof::Error>>,
    /// The in-process EventPipe session (.NET 5), or why there is none.
    session: Option<std::result::Result<EVENTPIPE_SESSION, corprof::Error>>,
    /// `ExceptionThrown_V1` events (id 80) the session delivered.
    eventpipe_exceptions: u32,
    /// The classes of the objects the first exception references, or why
    /// they could not be enumerated.
    references: Option<std::result::Result<Vec<String>, corprof::Error>>,
}

#[derive(Default)]
struct RuntimeEvents {
    counts: Mutex<Counts>,
}

impl RuntimeEvents {
    fn counts(&self) -> std::sync::MutexGuard<'_, Counts> {
        self.counts
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// `COR_PRF_GC_INDUCED` -> `induced`.
fn reason_name(reason: COR_PRF_GC_REASON) -> String {
    match reason.name() {
        Some(name) => name.trim_start_matches("COR_PRF_GC_").to_ascii_lowercase(),
        None => format!("reason {}", reason.0),
    }
}

impl Profiler for RuntimeEvents {
    fn initialize(&self, info: &ProfilerInfo) -> Result<()> {
        // EventPipe events need ICorProfilerInfo12 (.NET 5); older runtimes
        // refuse a high flag they do not know.
        let eventpipe = info.version() >= 12;
        let events = COR_PRF_MONITOR_GC
            | COR_PRF_MONITOR_EXCEPTIONS
            | COR_PRF_MONITOR_ASSEMBLY_LOADS
            | COR_PRF_MONITOR_MODULE_LOADS
            | COR_PRF_MONITOR_THREADS;
        if eventpipe {
            info.set_event_mask(events | COR_PRF_HIGH_MONITOR_EVENT_PIPE)?;
        } else {
            info.set_event_mask(events)?;
        }
        // The runtime's own exception events (ExceptionKeyword 0x8000,
        // level 4 Informational), counted beside the profiler callbacks.
        let session = info.event_pipe_start_session(
            &[EventPipeProvider {
                name: "Microsoft-Windows-DotNETRuntime",
                keywords: 0x8000,
                level: 4,
                filter: None,
            }],
            false,
        );
        self.counts().session = Some(session);
        Ok(())
    }

    fn event_pipe_event_delivered(
        &self,
        _info: &ProfilerInfo,
        event: &EventPipeEvent<'_>,
    ) -> Result<()> {
        // ExceptionThrown_V1 is event 80 of the runtime provider (the only
        // provider of the session).
        if event.event_id == 80 {
            self.counts().eventpipe_exceptions += 1;
        }
        Ok(())
    }

    fn garbage_collection_started(
        &self,
        _info: &ProfilerInfo,
        collected: Bools<'_>,
        reason: COR_PRF_GC_REASON,
    ) -> Result<()> {
        // Entries 0..=2 are the generations; 3 (and 4 on newer runtimes) are
        // the large and pinned object heaps, collected along with generation 2.
        let oldest = collected.iter().take(3).rposition(|c| c).unwrap_or(0);
        *self.counts().gcs.entry((reason, oldest)).or_default() += 1;
        Ok(())
    }

    fn exception_thrown(&self, info: &ProfilerInfo, object: ObjectID) -> Result<()> {
        // SAFETY: the thrown object and the objects it references are live,
        // and no GC moves them while this callback runs on the throwing
        // thread (this call and those below).
        let name = unsafe { info.class_of(object) }.and_then(|class| info.class_name(class));
        let name = name.unwrap_or_else(|error| format!("<unknown: {:?}>", error.code()));
        // The first exception's references (`EnumerateObjectReferences`,
        // ICorProfilerInfo10): the object stays put during this callback.
        let references = if self.counts().references.is_none() {
            // SAFETY: as above.
            Some(unsafe { info.object_references(object) }.map(|refs| {
                refs.iter()
                    .map(|r| {
                        // SAFETY: as above.
                        unsafe { info.class_of(*r) }
                            .and_then(|c| info.class_name(c))
                            .unwrap_or_else(|e| format!("<unknown: {:?}>", e.code()))
                    })
                    .collect::<Vec<_>>()
            }))
        } else {
            None
        };
        let mut counts = self.counts();
        if references.is_some() {
            counts.references = references;
        }
        *counts.exceptions.entry(name).or_default() += 1;
        let kind = match counts.handles.len() {
            0 => COR_PRF_HANDLE_TYPE_WEAK,
            1 => COR_PRF_HANDLE_TYPE_STRONG,
            _ => return Ok(()),
        };
        // SAFETY: as above.
        counts
            .handles
            .push(unsafe { info.create_handle(object, kind) });
        Ok(())
    }

    fn assembly_load_finished(
        &self,
        info: &ProfilerInfo,
        assembly: AssemblyID,
        status: HRESULT,
    ) -> Result<()> {
        if status.is_ok() {
            let name = info.assembly_info(assembly)?.name;
            self.counts().assemblies.push(name);
        }
        Ok(())
    }

    fn module_load_finished(
        &self,
        info: &ProfilerInfo,
        module: ModuleID,
        status: HRESULT,
    ) -> Result<()> {
        if status.is_ok() {
            let path = info.module_info(module)?.path;
            self.counts().modules.push(path);
        }
        Ok(())
    }

    fn thread_created(&self, _info: &ProfilerInfo, _thread: ThreadID) -> Result<()> {
        self.counts().threads += 1;
        Ok(())
    }

    fn shutdown(&self, info: &ProfilerInfo) -> Result<()> {
        // Stopping the session delivers its last events first (outside the
        // lock: the delivery takes it).
        let session = self.counts().session.take();
        let stopped = match session {
            Some(Ok(session)) => info.event_pipe_stop_session(session).map(|()| session),
            Some(Err(error)) => Err(error),
            None => Err(corprof::Error::from(HRESULT(0))),
        };
        let mut counts = self.counts();
        let later = later_runtimes(info, std::mem::take(&mut counts.handles));
        let mut report = String::from("runtime events summary\n");
        for ((reason, generation), n) in &counts.gcs {
            let reason = reason_name(*reason);
            report += &format!("gc reason={reason} generation={generation} count={n}\n");
        }
        for (name, n) in &counts.exceptions {
            report += &format!("exception type={name} count={n}\n");
        }
        for name in &counts.assemblies {
            report += &format!("assembly {name}\n");
        }
        for path in &counts.modules {
            report += &format!("module {path}\n");
        }
        report += &format!("threads created={}\n", counts.threads);
        match &counts.references {
            Some(Ok(classes)) => {
                report += &format!("first exception references {}\n", classes.join(","))
            }
            Some(Err(error)) => report += &format!("first exception references: {error}\n"),
            None => {}
        }
        report += &later;
        match stopped {
            Ok(_) => {
                report += &format!(
                    "eventpipe exception events={}\n",
                    counts.eventpipe_exceptions
                )
            }
            Err(error) => report += &format!("eventpipe: {error}\n"),
        }
        match std::env::var_os("RUNTIME_EVENTS_OUTPUT") {
            Some(path) => {
                if let Err(error) = std::fs::write(&path, &report) {
                    eprintln!("runtime_events: cannot write {path:?}: {error}");
                }
            }
            None => {
                let _ = std::io::stderr().write_all(report.as_bytes());
            }
        }
        Ok(())
    }
}

/// The report's lines on what later runtimes offer (see the module docs).
fn later_runtimes(
    info: &ProfilerInfo,
    handles: Vec<std::result::Result<ObjectHandle, corprof::Error>>,
) -> String {
    let mut out = String::new();
    match info.loh_object_size_threshold() {
        Ok(bytes) => out += &format!("loh threshold={bytes}\n"),
        Err(error) => out += &format!("loh threshold: {error}\n"),
    }
    match info.environment_variable("RUNTIME_EVENTS_PROBE") {
        Ok(value) => out += &format!("env RUNTIME_EVENTS_PROBE={value:?}\n"),
        Err(error) => out += &format!("env: {error}\n"),
    }
    match info.environment_variable("RUNTIME_EVENTS_UNSET_VARIABLE") {
        Ok(value) => out += &format!("env RUNTIME_EVENTS_UNSET_VARIABLE={value:?}\n"),
        Err(error) => out += &format!("env unset: {error}\n"),
    }
    let set = info
        .set_environment_variable("RUNTIME_EVENTS_SET", Some("from the profiler"))
        .and_then(|()| info.environment_variable("RUNTIME_EVENTS_SET"));
    match set {
        Ok(value) => out += &format!("env set RUNTIME_EVENTS_SET={value:?}\n"),
        Err(error) => out += &format!("env set: {error}\n"),
    }
    // The program has collected twice since the exceptions: the first one's
    // weak handle is cleared, the second one's strong handle kept it.
    let mut read = Vec::new();
    for (kind, handle) in ["weak", "strong"].into_iter().zip(handles) {
        match handle.and_then(|h| {
            let object = info.object_from_handle(&h);
            info.destroy_handle(h)?;
            object
        }) {
            Ok(object) => read.push(format!(
                "{kind} {}",
                if object.is_null() { "cleared" } else { "alive" }
            )),
            Err(error) => read.push(format!("{kind}: {error}")),
        }
    }
    out += &format!("handles {}\n", read.join(", "));
    match info.non_gc_heap_ranges() {
        Ok(ranges) => {
            let bytes: usize = ranges.iter().map(|r| r.rangeLength).sum();
            out += &format!(
                "non-gc heap ranges={} bytes>0={}\n",
                ranges.len(),
                bytes > 0
            );
        }
        Err(error) => out += &format!("non-gc heap: {error}\n"),
    }
    match info.non_gc_objects() {
        Ok(objects) => {
            let objects: Vec<ObjectID> = objects.take(100).collect();
            let frozen = objects
                .iter()
                // SAFETY: objects on the non-GC heap are never moved or freed.
                .filter(|&&o| unsafe { info.is_frozen_object(o) } == Ok(true))
                .count();
            out += &format!(
                "non-gc objects>0={} all frozen={}\n",
                !objects.is_empty(),
                frozen == objects.len()
            );
        }
        Err(error) => out += &format!("non-gc objects: {error}\n"),
    }
    out
}

corprof::profiler!(RuntimeEvents, "C5E5A2F1-3B7D-4C59-9E1A-2F0B6D8C4A17");
