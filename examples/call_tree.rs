//! A call-tree profiler built on the enter/leave/tailcall hooks: a shadow
//! stack per thread (`hooks::CallTree`), and at shutdown these files in the
//! directory named by `CORPROF_CALLTREE_DIR` (nothing is written when it
//! is unset):
//!
//! - `calls.folded`: one line per call path, `Frame;Frame;Frame N`, where N
//!   is the number of calls that ended at that path (returned, tail-called
//!   out, or unwound by an exception);
//! - `time.folded`: the same paths with their inclusive time in microseconds;
//! - `flame.svg`: a self-contained flame graph of `time.folded` (paths
//!   narrower than 0.1 px are left out, and the picture says how many);
//! - `profile.pb.gz`: pprof, sample types `calls` (count) and `time` (self
//!   nanoseconds), for `go tool pprof` on trees too big for folded text.
//!
//! A last line on stderr says how many paths and threads there were and
//! whether every shadow stack balanced. Frames are named with their generic
//! instantiations (`E2E.CallTree.Util.Echo<System.Int32>`).
//! `CORPROF_CALLTREE_FILTER` is a namespace prefix: only functions whose
//! declaring type starts with it are hooked (through the function-ID
//! mapper, so the others cost nothing); empty or unset, everything is.
//! The hooks are the fast-path trampolines; exceptions that unwind hooked
//! frames pop them (`exception_unwind_function_*`, and
//! `exception_catcher_enter` for the unwinds the runtime leaves unfinished).
//!
//! Build with `cargo build --example call_tree`; CLSID
//! `{3C1F5E2A-7B9D-4E61-A8C4-5D2E9F0B1A73}`.

use std::fs::File;
use std::io::{BufWriter, Write as _};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use corprof::facade::{Profiler, ProfilerInfo, Result};
use corprof::hooks::{CallTree, FunctionHooks, HookMode, Hooked, ProfilerInfoHooks};
use corprof::profile::{inclusive_widths, write_flame, write_folded, FlameOptions, Pprof};
use corprof::profiling::*;

/// The hooks: what to hook, and the call tree they record.
struct Hooks {
    filter: String,
    tree: CallTree<String>,
}

impl FunctionHooks for Hooks {
    /// The function's instantiated name.
    type Client = String;

    fn map_function(&self, info: &ProfilerInfo, function: FunctionID) -> Option<String> {
        let plain = info.function_name(function).ok()?;
        if !plain.type_name.starts_with(&self.filter) {
            return None;
        }
        let name = info.instantiated_function_name(function);
        Some(name.unwrap_or_else(|_| plain.to_string()).replace(';', ":"))
    }

    fn function_enter(&self, function: &Hooked<String>) {
        self.tree.enter(function);
    }

    fn function_leave(&self, function: &Hooked<String>) {
        self.tree.leave(function);
    }

    fn function_tailcall(&self, function: &Hooked<String>) {
        self.tree.leave(function);
    }
}

struct CallTreeProfiler {
    hooks: Arc<Hooks>,
    dir: Option<PathBuf>,
}

impl Default for CallTreeProfiler {
    fn default() -> Self {
        let filter = std::env::var("CORPROF_CALLTREE_FILTER").unwrap_or_default();
        let tree = CallTree::new();
        let dir = std::env::var_os("CORPROF_CALLTREE_DIR").map(PathBuf::from);
        CallTreeProfiler {
            hooks: Arc::new(Hooks { filter, tree }),
            dir,
        }
    }
}

impl Profiler for CallTreeProfiler {
    fn initialize(&self, info: &ProfilerInfo) -> Result<()> {
        // Calls are counted where they happen: no method is inlined.
        info.set_event_mask(COR_PRF_DISABLE_INLINING | COR_PRF_MONITOR_EXCEPTIONS)?;
        info.set_function_hooks(self.hooks.clone(), HookMode::FastPath)
    }

    fn exception_unwind_function_enter(
        &self,
        _: &ProfilerInfo,
        function: FunctionID,
    ) -> Result<()> {
        self.hooks.tree.unwind_enter(function);
        Ok(())
    }

    fn exception_unwind_function_leave(&self, _info: &ProfilerInfo) -> Result<()> {
        self.hooks.tree.unwind_leave();
        Ok(())
    }

    fn exception_catcher_enter(
        &self,
        _: &ProfilerInfo,
        function: FunctionID,
        _exception: ObjectID,
    ) -> Result<()> {
        self.hooks.tree.catcher_enter(function);
        Ok(())
    }

    fn shutdown(&self, _info: &ProfilerInfo) -> Result<()> {
        if let Some(dir) = &self.dir {
            let written = self.write(dir);
            let line = written.unwrap_or_else(|e| format!("writing {}: {e}", dir.display()));
            let _ = writeln!(std::io::stderr(), "call_tree: {line}"); // never panics
        }
        Ok(())
    }
}

impl CallTreeProfiler {
    /// Writes the files; says what was written.
    fn write(&self, dir: &Path) -> std::io::Result<String> {
        let report = self.hooks.tree.report(|name| name);
        let (tree, frames) = (&report.tree, &report.frames);
        std::fs::create_dir_all(dir)?;
        let create = |name| File::create(dir.join(name)).map(BufWriter::new);
        write_folded(tree, frames, |v| v[0], create("calls.folded")?)?;
        write_folded(tree, frames, |v| v[1] / 1000, create("time.folded")?)?;
        let mut options = FlameOptions::default();
        options.title = "Flame graph (inclusive time)".into();
        (options.unit, options.divisor) = ("us".into(), 1000);
        let widths = inclusive_widths(tree, 1);
        write_flame(tree, frames, &widths, &options, create("flame.svg")?)?;
        // pprof sums self times up the stacks itself.
        let mut pprof = Pprof::new(&[("calls", "count"), ("time", "nanoseconds")]);
        pprof.set_default_sample_type("time");
        pprof.add_tree_by(tree, frames, &[], |v, out| {
            out.extend([v[0], v[2]].map(|v| v.min(i64::MAX as u64) as i64));
        });
        std::fs::write(dir.join("profile.pb.gz"), pprof.encode_gzip())?;
        Ok(format!(
            "wrote {}: {} paths, {} threads, unbalanced={} closed_without_leave={} open_frames={}",
            dir.display(),
            tree.len() - 1,
            report.threads,
            report.unbalanced,
            report.closed_without_leave,
            report.open_frames
        ))
    }
}

corprof::profiler!(CallTreeProfiler, "{3C1F5E2A-7B9D-4E61-A8C4-5D2E9F0B1A73}");
