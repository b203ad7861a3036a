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
//! The whole profiler is the library's `CoverageProfiler`, configured from
//! the environment (`CoverageOptions::from_env` has the table); a bad
//! filter is one message and a run without coverage. Messages go to
//! stderr, each line starting with `coverage: `. To cover inside a
//! profiler of your own, make it one part of a tuple (see the `composed`
//! example).

use corprof::coverage::CoverageProfiler;

corprof::profiler!(
    CoverageProfiler,
    "2B8C6E57-9E0D-4F1A-8C3B-5D7A1E9F4C60",
    CoverageProfiler::from_env
);
