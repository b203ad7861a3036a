//! [`CoverageOptions`]: what to cover and where the reports go, from code
//! or from the environment; [`CoverageStats`]: what coverage did.

use std::format;
use std::path::PathBuf;
use std::string::String;
use std::vec::Vec;

use super::filter::Filter;
use crate::facade::EventMask;
use crate::profiling::{
    COR_PRF_MONITOR_CACHE_SEARCHES, COR_PRF_MONITOR_JIT_COMPILATION, COR_PRF_MONITOR_MODULE_LOADS,
};
use crate::Error;

/// What to cover and where the reports go: [`Default`] or
/// [`from_env`](CoverageOptions::from_env), then the `with_*` setters
/// (`#[non_exhaustive]`: a struct literal does not build outside the
/// crate).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct CoverageOptions {
    /// Where `coverage-<pid>.info` and `.xml` are written.
    pub output_dir: PathBuf,
    /// Types covered (none: every type of every assembly with a PDB).
    pub include: Vec<Filter>,
    /// Types left out (they win over `include`).
    pub exclude: Vec<Filter>,
    /// Count branch arms too.
    pub branches: bool,
    /// Write the counts as `coverage-<pid>.counts` (for `corprof
    /// coverage` to add up, [`merge`](super::merge)) instead of the lcov
    /// and Cobertura reports.
    pub counts: bool,
}

impl Default for CoverageOptions {
    fn default() -> Self {
        CoverageOptions {
            output_dir: PathBuf::from("."),
            include: Vec::new(),
            exclude: Vec::new(),
            branches: true,
            counts: false,
        }
    }
}

impl CoverageOptions {
    /// Reads `CORPROF_COVERAGE_DIR` (default: the current directory),
    /// `CORPROF_COVERAGE_INCLUDE` and `CORPROF_COVERAGE_EXCLUDE` (lists of
    /// `[assembly-glob]type-glob`, separated by `,` or `;`) and
    /// `CORPROF_COVERAGE_BRANCHES` (a boolean, default on: `0`/`1`,
    /// `true`/`false`, `yes`/`no`, `on`/`off`, any case) and
    /// `CORPROF_COVERAGE_COUNTS` (a boolean, default off; `corprof
    /// coverage` sets it). A bad pattern or boolean is an `E_INVALIDARG`
    /// error that names the variable.
    pub fn from_env() -> core::result::Result<CoverageOptions, Error> {
        let var = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
        let mut options = CoverageOptions::default();
        if let Some(dir) = var("CORPROF_COVERAGE_DIR") {
            options.output_dir = PathBuf::from(dir);
        }
        if let Some(list) = var("CORPROF_COVERAGE_INCLUDE") {
            options.include = Filter::parse_list(&list)
                .map_err(|e| bad_setting(format!("CORPROF_COVERAGE_INCLUDE: {e}")))?;
        }
        if let Some(list) = var("CORPROF_COVERAGE_EXCLUDE") {
            options.exclude = Filter::parse_list(&list)
                .map_err(|e| bad_setting(format!("CORPROF_COVERAGE_EXCLUDE: {e}")))?;
        }
        options.branches = crate::support::env::flag("CORPROF_COVERAGE_BRANCHES", true)?;
        options.counts = crate::support::env::flag("CORPROF_COVERAGE_COUNTS", false)?;
        Ok(options)
    }

    /// With [`output_dir`](Self::output_dir) set.
    #[must_use]
    pub fn with_output_dir(mut self, dir: impl Into<PathBuf>) -> CoverageOptions {
        self.output_dir = dir.into();
        self
    }

    /// With [`include`](Self::include) set.
    #[must_use]
    pub fn with_include(mut self, include: Vec<Filter>) -> CoverageOptions {
        self.include = include;
        self
    }

    /// With [`exclude`](Self::exclude) set.
    #[must_use]
    pub fn with_exclude(mut self, exclude: Vec<Filter>) -> CoverageOptions {
        self.exclude = exclude;
        self
    }

    /// With [`branches`](Self::branches) set.
    #[must_use]
    pub fn with_branches(mut self, branches: bool) -> CoverageOptions {
        self.branches = branches;
        self
    }

    /// With [`counts`](Self::counts) set.
    #[must_use]
    pub fn with_counts(mut self, counts: bool) -> CoverageOptions {
        self.counts = counts;
        self
    }

    /// The event mask coverage needs: JIT compilation (and with it the
    /// inlining callback), cache searches (to set aside the precompiled
    /// code of the methods it covers) and module loads (an unloading
    /// module's never-compiled branches are read before it goes).
    pub fn event_mask(&self) -> EventMask {
        (COR_PRF_MONITOR_JIT_COMPILATION
            | COR_PRF_MONITOR_CACHE_SEARCHES
            | COR_PRF_MONITOR_MODULE_LOADS)
            .into()
    }
}

/// Counts of what coverage did (more may be added: read the fields, do not
/// build one).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct CoverageStats {
    /// Methods given probes.
    pub instrumented: u64,
    /// Methods of modules with a PDB that have no sequence points.
    pub without_debug_info: u64,
    /// Methods left out by a filter or an attribute.
    pub excluded: u64,
    /// Methods whose IL could not be rewritten (a message each).
    pub failed: u64,
    /// Nanoseconds spent rewriting, in total.
    pub rewrite_nanos: u64,
    /// Times the JIT was let inline an instrumented method (its probes go
    /// with it).
    pub inlined: u64,
    /// Times the JIT was kept from inlining a method coverage instruments,
    /// because the IL it had read might not carry the probes yet (the
    /// method was instrumented during, or just before, that compilation).
    pub inlining_refused: u64,
    /// Times a JIT compilation waited for another thread to finish
    /// writing its method's probes (instead of compiling the IL without
    /// them).
    pub compilations_waited: u64,
    /// Covered methods whose precompiled (ReadyToRun) code was set aside,
    /// so that the JIT compiled them from their instrumented IL.
    pub precompiled: u64,
}

/// A bad `CORPROF_COVERAGE_*` value.
fn bad_setting(message: String) -> Error {
    Error::new(crate::E_INVALIDARG, message)
}
