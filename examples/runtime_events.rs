//! A runtime-events profiler: counts garbage collections by reason and
//! generation, exceptions by type, the assemblies and modules loaded (with
//! their paths) and the threads created, and prints a summary at shutdown.
//!
//! Build with `cargo build --example runtime_events`; load it with
//! `CORECLR_PROFILER={C5E5A2F1-3B7D-4C59-9E1A-2F0B6D8C4A17}` and
//! `CORECLR_PROFILER_PATH=.../libruntime_events.so`. The summary goes to
//! stderr, or to the file named by `RUNTIME_EVENTS_OUTPUT`.

use std::collections::BTreeMap;
use std::io::Write;
use std::sync::Mutex;

use corprof::facade::{Bools, Profiler, ProfilerInfo, Result};
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
        info.set_event_mask(
            COR_PRF_MONITOR_GC
                | COR_PRF_MONITOR_EXCEPTIONS
                | COR_PRF_MONITOR_ASSEMBLY_LOADS
                | COR_PRF_MONITOR_MODULE_LOADS
                | COR_PRF_MONITOR_THREADS,
            COR_PRF_HIGH_MONITOR::empty(),
        )
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
        let name = info
            .class_of(object)
            .and_then(|class| info.class_name(class));
        let name = name.unwrap_or_else(|error| format!("<unknown: {error:?}>"));
        *self.counts().exceptions.entry(name).or_default() += 1;
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

    fn shutdown(&self, _info: &ProfilerInfo) -> Result<()> {
        let counts = self.counts();
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

corprof::profiler!(RuntimeEvents, "C5E5A2F1-3B7D-4C59-9E1A-2F0B6D8C4A17");
