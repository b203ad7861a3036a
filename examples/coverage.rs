//! Line and branch coverage of any .NET program, without rebuilding it:
//! probes at JIT time from the assemblies' Portable PDBs, reports at
//! shutdown in `CORPROF_COVERAGE_DIR` (`coverage-<pid>.info`, lcov, and
//! `coverage-<pid>.xml`, Cobertura).
//!
//! ```sh
//! cargo build --example coverage
//! CORECLR_ENABLE_PROFILING=1 \
//! CORECLR_PROFILER={2B8C6E57-9E0D-4F1A-8C3B-5D7A1E9F4C60} \
//! CORECLR_PROFILER_PATH=$PWD/target/debug/examples/libcoverage.so \
//! CORPROF_COVERAGE_DIR=coverage CORPROF_COVERAGE_INCLUDE='[MyApp]*' \
//! dotnet MyApp.dll
//! genhtml -o coverage/html coverage/coverage-*.info
//! ```
//!
//! Configuration comes from the environment ([`CoverageOptions::from_env`]);
//! a bad filter is one message and a run without the profiler. Messages go
//! to stderr, each line starting with `coverage: `.

use std::sync::OnceLock;

use corprof::coverage::{Coverage, CoverageOptions};
use corprof::facade::{Profiler, ProfilerInfo, Result};
use corprof::profiling::FunctionID;
use corprof::E_FAIL;

#[derive(Default)]
struct CoverageProfiler {
    coverage: OnceLock<Coverage>,
}

impl Profiler for CoverageProfiler {
    fn initialize(&self, info: &ProfilerInfo) -> Result<()> {
        let options = match CoverageOptions::from_env() {
            Ok(options) => options,
            Err(error) => {
                eprintln!("coverage: {error}; the program runs without coverage");
                return Err(E_FAIL.into());
            }
        };
        info.add_event_mask(options.event_mask())?;
        eprintln!("coverage: reports go to {}", options.output_dir.display());
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

    fn jit_inlining(
        &self,
        info: &ProfilerInfo,
        _caller: FunctionID,
        callee: FunctionID,
    ) -> Result<bool> {
        Ok(self
            .coverage
            .get()
            .map_or(true, |coverage| coverage.jit_inlining(info, callee)))
    }

    fn shutdown(&self, _info: &ProfilerInfo) -> Result<()> {
        let Some(coverage) = self.coverage.get() else {
            return Ok(());
        };
        let stats = coverage.stats();
        match coverage.write_reports() {
            Ok((lcov, xml)) => eprintln!(
                "coverage: {} methods instrumented ({} without debug info, {} excluded, {} failed; {:.1} us of rewriting per method; {} inlinings of instrumented methods); wrote {} and {}",
                stats.instrumented,
                stats.without_debug_info,
                stats.excluded,
                stats.failed,
                stats.rewrite_nanos as f64 / 1000.0 / stats.instrumented.max(1) as f64,
                stats.inlined,
                lcov.display(),
                xml.display()
            ),
            Err(error) => eprintln!("coverage: cannot write the reports: {error}"),
        }
        Ok(())
    }
}

corprof::profiler!(CoverageProfiler, "2B8C6E57-9E0D-4F1A-8C3B-5D7A1E9F4C60");
