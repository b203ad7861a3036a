//! Line and branch coverage of a .NET program at JIT time, without
//! rebuilding it: IL probes from the Portable PDB's sequence points, reports
//! in lcov and Cobertura.
//!
//! * [`pdb`](crate::coverage::pdb): a Portable PDB reader (documents, sequence points, state
//!   machines, Source Link) and [`pe`](crate::coverage::pe): the assembly's debug directory
//!   (the `.pdb` path of its CodeView entry, or the PDB embedded in it,
//!   inflated by [`inflate`](crate::coverage::inflate)).
//! * [`probes`](crate::coverage::probes): the counter increments inserted at each sequence point and
//!   on each arm of each conditional branch.
//! * [`Coverage`](crate::coverage::Coverage): the runtime part. At `JITCompilationStarted` it finds
//!   the method's sequence points, rewrites its IL once (tier 1, PGO and
//!   on-stack replacement compile the IL installed first) with counters in
//!   native memory, and lets the JIT inline an instrumented method only
//!   where the IL it read already carried the probes (see
//!   [`Coverage::jit_inlining`](crate::coverage::Coverage::jit_inlining)). At shutdown
//!   [`Coverage::write_reports`](crate::coverage::Coverage::write_reports) writes `coverage-<pid>.info` (lcov) and
//!   `coverage-<pid>.xml` (Cobertura).
//! * [`report`](crate::coverage::report): the two formats.
//! * [`merge`](crate::coverage::merge): each process's counts as a
//!   `.counts` file (with `CORPROF_COVERAGE_COUNTS`), read back and added
//!   up by `corprof coverage` into one report.
//!
//! The data's route, PDB -> probes -> counters -> report: a module's
//! Portable PDB is found (its CodeView path or embedded: `pe.rs`,
//! `inflate.rs`) and read (`pdb.rs`, `symbols.rs`) into sequence points;
//! at a method's first JIT the session (`session.rs`, claiming it once:
//! `claims.rs`, filtered by `filter.rs` and `options.rs`) rewrites its IL
//! with probes (`probes.rs`) that increment counters in native memory; at
//! shutdown the counters are read back, named (`naming.rs`) and written as
//! lcov and Cobertura (`report.rs`). `component.rs` is the `Profiler` part.
//!
//! Methods without sequence points, compiler-generated methods
//! (`[CompilerGenerated]` on the method) and methods under
//! `[ExcludeFromCodeCoverage]` (on the method, a declaring type, or the
//! `async`/iterator method a state machine belongs to) are left alone.
//! docs/coverage.md says how to run it and what it does not do.

mod claims;
mod component;
pub mod filter;
pub mod inflate;
pub mod merge;
mod naming;
mod options;
pub mod pdb;
pub mod pe;
pub mod probes;
pub mod report;
mod session;
mod symbols;

pub use component::CoverageProfiler;
pub use options::{CoverageOptions, CoverageStats};
pub use session::{Coverage, CoverageResult};
pub use symbols::load_pdb;
