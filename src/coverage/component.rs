//! [`CoverageProfiler`]: coverage as a [`Profiler`] part, configured in
//! `initialize`, fed by the JIT callbacks it needs and written out at
//! shutdown.

use alloc::format;
use std::io::{self, Write as _};
use std::sync::OnceLock;

use super::options::CoverageOptions;
use super::session::Coverage;
use crate::facade::{Profiler, ProfilerInfo, Result};
use crate::profiling::{FunctionID, ModuleID};
use crate::Error;

fn say(text: core::fmt::Arguments<'_>) {
    // One write per line: the program's threads share stderr.
    let _ = io::stderr().write_all(format!("coverage: {text}\n").as_bytes());
}

/// Line and branch coverage as a profiler, or a part of one
/// (`profiler!((CoverageProfiler, MyPart), "CLSID")`): in `initialize` it
/// adds the events it needs ([`CoverageOptions::event_mask`], with
/// [`add_event_mask`](ProfilerInfo::add_event_mask), so other parts keep
/// theirs); it instruments each method at its first JIT compilation, lets
/// the JIT inline an instrumented method only where the IL it read carried
/// the probes, sets aside the precompiled
/// (ReadyToRun) code of the methods it covers so that the JIT compiles
/// them from their instrumented IL, and writes the reports at shutdown.
///
/// It reports on stderr, each line prefixed `coverage: `. A bad
/// configuration is one message and a program that runs as without
/// coverage (`initialize` still succeeds, so other parts keep working).
///
/// `Default` is [`from_env`](CoverageProfiler::from_env).
pub struct CoverageProfiler {
    config: core::result::Result<CoverageOptions, Error>,
    coverage: OnceLock<Coverage>,
}

impl CoverageProfiler {
    /// Covers what `options` say.
    pub fn new(options: CoverageOptions) -> CoverageProfiler {
        CoverageProfiler {
            config: Ok(options),
            coverage: OnceLock::new(),
        }
    }

    /// Configured by the environment ([`CoverageOptions::from_env`]); a bad
    /// value is reported in `initialize`, and then nothing is covered.
    pub fn from_env() -> CoverageProfiler {
        CoverageProfiler {
            config: CoverageOptions::from_env(),
            coverage: OnceLock::new(),
        }
    }

    /// The running coverage, once `initialize` set it up.
    pub fn coverage(&self) -> Option<&Coverage> {
        self.coverage.get()
    }
}

impl Default for CoverageProfiler {
    fn default() -> CoverageProfiler {
        CoverageProfiler::from_env()
    }
}

impl Profiler for CoverageProfiler {
    fn initialize(&self, info: &ProfilerInfo) -> Result<()> {
        let options = match &self.config {
            Ok(options) => options.clone(),
            Err(error) => {
                say(format_args!(
                    "{}; the program runs without coverage",
                    error.message()
                ));
                return Ok(());
            }
        };
        info.add_event_mask(options.event_mask())?;
        say(format_args!(
            "reports go to {}",
            options.output_dir.display()
        ));
        let _ = self.coverage.set(Coverage::new(options));
        Ok(())
    }

    fn jit_compilation_started(
        &self,
        info: &ProfilerInfo,
        function: FunctionID,
        _is_safe_to_block: bool,
    ) -> Result<()> {
        if let Some(coverage) = self.coverage.get() {
            coverage.jit_compilation_started(info, function);
        }
        Ok(())
    }

    fn jit_compilation_finished(
        &self,
        _info: &ProfilerInfo,
        function: FunctionID,
        _status: crate::HRESULT,
        _is_safe_to_block: bool,
    ) -> Result<()> {
        if let Some(coverage) = self.coverage.get() {
            coverage.jit_compilation_finished(function);
        }
        Ok(())
    }

    fn module_unload_started(&self, info: &ProfilerInfo, module: ModuleID) -> Result<()> {
        if let Some(coverage) = self.coverage.get() {
            coverage.module_unload_started(info, module);
        }
        Ok(())
    }

    fn jit_cached_function_search_started(
        &self,
        info: &ProfilerInfo,
        function: FunctionID,
    ) -> Result<bool> {
        Ok(self
            .coverage
            .get()
            .is_none_or(|coverage| coverage.jit_cached_function_search_started(info, function)))
    }

    fn jit_inlining(
        &self,
        info: &ProfilerInfo,
        _caller: FunctionID,
        callee: FunctionID,
    ) -> Result<bool> {
        Ok(self
            .coverage
            .get()
            .is_none_or(|coverage| coverage.jit_inlining(info, callee)))
    }

    fn shutdown(&self, _info: &ProfilerInfo) -> Result<()> {
        let Some(coverage) = self.coverage.get() else {
            return Ok(());
        };
        let stats = coverage.stats();
        let summary = format!(
            "{} methods instrumented ({} of them precompiled, compiled again; {} without debug info, \
             {} excluded, {} failed; {:.1} us of rewriting per method; {} inlinings of \
             instrumented methods, {} refused)",
            stats.instrumented,
            stats.precompiled,
            stats.without_debug_info,
            stats.excluded,
            stats.failed,
            stats.rewrite_nanos as f64 / 1000.0 / stats.instrumented.max(1) as f64,
            stats.inlined,
            stats.inlining_refused,
        );
        // A process that ran none of the covered code (a build tool, a
        // test launcher) writes nothing: no empty report to trip a reader.
        if stats.instrumented == 0 {
            say(format_args!("{summary}; no report written"));
            return Ok(());
        }
        let written = if coverage.options().counts {
            coverage
                .write_counts(&summary)
                .map(|p| format!("{}", p.display()))
        } else {
            coverage
                .write_reports()
                .map(|(lcov, xml)| format!("{} and {}", lcov.display(), xml.display()))
        };
        match written {
            Ok(files) => say(format_args!("{summary}; wrote {files}")),
            Err(error) => say(format_args!("cannot write the reports: {error}")),
        }
        Ok(())
    }
}
