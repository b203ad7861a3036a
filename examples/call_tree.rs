//! A call-tree profiler built on the enter/leave/tailcall hooks: a shadow
//! stack per thread, and at shutdown three files in the directory named by
//! `CORPROF_CALLTREE_DIR` (nothing is written when it is unset):
//!
//! - `calls.folded`: one line per call path, `Frame;Frame;Frame N`, where N
//!   is the number of calls that ended at that path (returned, tail-called
//!   out, or unwound by an exception);
//! - `time.folded`: the same paths with their inclusive time in microseconds;
//! - `flame.svg`: a self-contained flame graph of `time.folded` (one
//!   rectangle per path, width proportional to time, a `<title>` to hover;
//!   paths narrower than 0.1 px are left out, and the picture says how
//!   many);
//! - `profile.pb.gz`: pprof, sample types `calls` (count) and `time`
//!   (self nanoseconds: each path's inclusive time less its callees'), for
//!   `go tool pprof` on trees too big for folded text;
//! - `summary.txt`: `key=value` lines the tests read (event mask, balance).
//!
//! Frames are named with their generic instantiations
//! (`E2E.CallTree.Util.Echo<System.Int32>`). Environment:
//!
//! - `CORPROF_CALLTREE_FILTER`: a namespace prefix; only functions whose
//!   declaring type starts with it are hooked (through the function-ID
//!   mapper, so the others cost nothing). Empty or unset: everything.
//! - `CORPROF_CALLTREE_MODE`: `fast` (default: the fast-path trampolines),
//!   `with-info` (the WithInfo hooks; functions named `Args` then have their
//!   `int` and `string` arguments and `int` return value logged to
//!   `args.txt`), `nothing` (fast-path hooks that do nothing: no shadow
//!   stack, no files but `summary.txt`), or `late` (no hooks in
//!   `initialize`; the first `exception_thrown` tries to install them and
//!   writes what the runtime answered to `summary.txt` as `late_install`).
//!
//! Exceptions that unwind hooked frames pop them in
//! `exception_unwind_function_leave`. Each `exception_thrown` walks the
//! current thread's stack and logs the managed frames, innermost first, to
//! `exceptions.txt`.
//!
//! Build with `cargo build --example call_tree`; CLSID
//! `{3C1F5E2A-7B9D-4E61-A8C4-5D2E9F0B1A73}`.

use std::cell::RefCell;
use std::fmt::Write as _;
use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use corprof::facade::{Profiler, ProfilerInfo, Result, StackFrame};
use corprof::hooks::{EnterCall, FunctionHooks, HookMode, Hooked, LeaveCall};
use corprof::profile::{
    inclusive_widths, write_flame, write_folded, FlameOptions, Frames, NodeId, Pprof, StackTree,
};
use corprof::profiling::*;

/// What the hooks receive for each hooked function.
struct Function {
    /// The instantiated name (`Namespace.Type<Args>.Method<Args>`).
    name: String,
    /// Log this function's arguments and return value (WithInfo mode).
    log_args: bool,
}

/// One node of a thread's call tree.
struct Node {
    parent: usize,
    /// (key, node) of each child: a short list, searched linearly (call
    /// trees fan out little, and this is the hot path).
    children: Vec<(usize, usize)>,
    calls: u64,
    nanos: u64,
}

/// One thread's tree and shadow stack.
struct ThreadTree {
    nodes: Vec<Node>,
    /// Open frames: (node, entered at, function).
    stack: Vec<(usize, Instant, FunctionID)>,
    /// Leaves with no open frame, or whose function was not the top one.
    unbalanced: u64,
    /// The function an exception is unwinding, between the unwind-enter
    /// and unwind-leave callbacks.
    unwinding: Option<FunctionID>,
}

impl ThreadTree {
    fn new() -> ThreadTree {
        ThreadTree {
            nodes: vec![Node {
                parent: 0,
                children: Vec::new(),
                calls: 0,
                nanos: 0,
            }],
            stack: Vec::new(),
            unbalanced: 0,
            unwinding: None,
        }
    }

    fn enter(&mut self, key: usize, function: FunctionID) {
        let parent = self.stack.last().map_or(0, |frame| frame.0);
        let known = self.nodes[parent]
            .children
            .iter()
            .find(|child| child.0 == key)
            .map(|child| child.1);
        let node = known.unwrap_or_else(|| {
            let next = self.nodes.len();
            self.nodes[parent].children.push((key, next));
            self.nodes.push(Node {
                parent,
                children: Vec::new(),
                calls: 0,
                nanos: 0,
            });
            next
        });
        self.stack.push((node, Instant::now(), function));
    }

    fn leave(&mut self, function: FunctionID) {
        match self.stack.pop() {
            Some((node, entered, open)) => {
                if open != function {
                    self.unbalanced += 1;
                }
                let node = &mut self.nodes[node];
                node.calls += 1;
                node.nanos += entered.elapsed().as_nanos() as u64;
            }
            None => self.unbalanced += 1,
        }
    }
}

/// The profiler's shared state (the hooks object).
struct State {
    filter: String,
    mode: Mode,
    dir: Option<PathBuf>,
    /// Every thread's tree, for shutdown.
    trees: Mutex<Vec<Arc<Mutex<ThreadTree>>>>,
    /// Stack walks made in `exception_thrown`.
    exceptions: Mutex<Vec<String>>,
    /// Arguments and return values read in WithInfo mode.
    args: Mutex<Vec<String>>,
    /// Late mode: what installing the hooks outside `initialize` gave.
    late: Mutex<Option<String>>,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Mode {
    Fast,
    WithInfo,
    Nothing,
    Late,
}

thread_local! {
    static TREE: RefCell<Option<Arc<Mutex<ThreadTree>>>> = const { RefCell::new(None) };
}

impl State {
    /// Runs `f` on this thread's tree, creating and registering it first.
    fn with_tree(&self, f: impl FnOnce(&mut ThreadTree)) {
        TREE.with(|slot| {
            let mut slot = slot.borrow_mut();
            let tree = slot.get_or_insert_with(|| {
                let tree = Arc::new(Mutex::new(ThreadTree::new()));
                lock(&self.trees).push(tree.clone());
                tree
            });
            f(&mut lock(tree));
        });
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl FunctionHooks for State {
    type Client = Function;

    fn map_function(&self, info: &ProfilerInfo, function: FunctionID) -> Option<Function> {
        let plain = info.function_name(function).ok()?;
        if !plain.type_name.starts_with(&self.filter) {
            return None;
        }
        let name = info
            .instantiated_function_name(function)
            .unwrap_or_else(|_| plain.to_string());
        Some(Function {
            name: name.replace(';', ":"),
            log_args: plain.method_name == "Args",
        })
    }

    fn function_enter(&self, function: &Hooked<Function>) {
        if self.mode == Mode::Nothing {
            return;
        }
        let key = function as *const Hooked<Function> as usize;
        self.with_tree(|tree| tree.enter(key, function.function()));
    }

    fn function_leave(&self, function: &Hooked<Function>) {
        if self.mode == Mode::Nothing {
            return;
        }
        self.with_tree(|tree| tree.leave(function.function()));
    }

    fn function_tailcall(&self, function: &Hooked<Function>) {
        self.function_leave(function)
    }

    fn function_enter_with_info(&self, function: &Hooked<Function>, call: &EnterCall<'_>) {
        let name = &function.client().name;
        if name.contains("__Canon") || name.contains("<?") {
            // Shared generic code: the frame names the exact instantiation.
            let exact = call.arguments().and_then(|arguments| {
                call.info()
                    .instantiated_function_name_in_frame(function.function(), arguments.frame)
            });
            lock(&self.args).push(format!("exact {name} => {exact:?}"));
        }
        if function.client().log_args {
            let line = match call.arguments() {
                Ok(arguments) => {
                    let number = arguments.i32(0);
                    // SAFETY: `Args(int, string)`: the second argument is a
                    // string reference, read on the hooked thread during the
                    // hook, where the GC cannot move it.
                    let text = arguments
                        .object(1)
                        .map(|object| unsafe { call.info().read_string_object(object) });
                    format!(
                        "enter {} ranges={} number={:?} text={:?}",
                        function.client().name,
                        arguments.len(),
                        number,
                        text
                    )
                }
                Err(hr) => format!("enter {} arguments failed: {hr}", function.client().name),
            };
            lock(&self.args).push(line);
        }
        self.function_enter(function)
    }

    fn function_leave_with_info(&self, function: &Hooked<Function>, call: &LeaveCall<'_>) {
        if function.client().log_args {
            let line = match call.return_value() {
                Ok((bytes, _frame)) => format!(
                    "leave {} bytes={} value={:?}",
                    function.client().name,
                    bytes.len(),
                    bytes.try_into().ok().map(i32::from_ne_bytes)
                ),
                Err(hr) => format!("leave {} return value failed: {hr}", function.client().name),
            };
            lock(&self.args).push(line);
        }
        self.function_leave(function)
    }
}

struct CallTree {
    state: Arc<State>,
}

impl Default for CallTree {
    fn default() -> CallTree {
        let mode = match std::env::var("CORPROF_CALLTREE_MODE").as_deref() {
            Ok("with-info") => Mode::WithInfo,
            Ok("nothing") => Mode::Nothing,
            Ok("late") => Mode::Late,
            _ => Mode::Fast,
        };
        CallTree {
            state: Arc::new(State {
                filter: std::env::var("CORPROF_CALLTREE_FILTER").unwrap_or_default(),
                mode,
                dir: std::env::var_os("CORPROF_CALLTREE_DIR").map(PathBuf::from),
                trees: Mutex::new(Vec::new()),
                exceptions: Mutex::new(Vec::new()),
                args: Mutex::new(Vec::new()),
                late: Mutex::new(None),
            }),
        }
    }
}

impl Profiler for CallTree {
    fn initialize(&self, info: &ProfilerInfo) -> Result<()> {
        let mut events = COR_PRF_DISABLE_INLINING;
        if self.state.mode != Mode::Nothing {
            events = events | COR_PRF_MONITOR_EXCEPTIONS | COR_PRF_ENABLE_STACK_SNAPSHOT;
        }
        info.set_event_mask(events)?;
        let mode = match self.state.mode {
            Mode::WithInfo => HookMode::WithInfo,
            Mode::Fast | Mode::Nothing => HookMode::FastPath,
            Mode::Late => return Ok(()),
        };
        let installed = info.set_function_hooks(self.state.clone(), mode);
        if let Err(hr) = &installed {
            eprintln!("call_tree: set_function_hooks failed: {hr}");
        }
        installed
    }

    fn exception_thrown(&self, info: &ProfilerInfo, _thrown: ObjectID) -> Result<()> {
        if self.state.mode == Mode::Late {
            let mut late = lock(&self.state.late);
            if late.is_none() {
                let answer = info.set_function_hooks(self.state.clone(), HookMode::FastPath);
                *late = Some(match answer {
                    Ok(()) => "ok".to_string(),
                    Err(error) => format!("err {}", error.code()),
                });
            }
        }
        let mut frames = Vec::new();
        let mut natives = 0;
        info.stack_snapshot(ThreadID::NULL, |frame| {
            match frame {
                StackFrame::Managed { function, .. } => frames.push(
                    info.instantiated_function_name(function)
                        .unwrap_or_else(|hr| format!("<{hr}>")),
                ),
                StackFrame::Native { .. } => natives += 1,
            }
            frames.len() < 64
        })?;
        lock(&self.state.exceptions)
            .push(format!("thrown natives={natives}: {}", frames.join(" <- ")));
        Ok(())
    }

    fn exception_unwind_function_enter(
        &self,
        _info: &ProfilerInfo,
        function: FunctionID,
    ) -> Result<()> {
        if self.state.mode != Mode::Nothing {
            self.state.with_tree(|tree| tree.unwinding = Some(function));
        }
        Ok(())
    }

    fn exception_unwind_function_leave(&self, _info: &ProfilerInfo) -> Result<()> {
        if self.state.mode == Mode::Nothing {
            return Ok(());
        }
        self.state.with_tree(|tree| {
            // Only hooked frames are on the shadow stack: pop when the
            // unwound function is the innermost open one.
            if let Some(function) = tree.unwinding.take() {
                if tree.stack.last().is_some_and(|top| top.2 == function) {
                    tree.leave(function);
                }
            }
        });
        Ok(())
    }

    fn shutdown(&self, info: &ProfilerInfo) -> Result<()> {
        let Some(dir) = &self.state.dir else {
            return Ok(());
        };
        if let Err(error) = self.write(info, dir) {
            eprintln!("call_tree: writing {}: {error}", dir.display());
        }
        Ok(())
    }
}

impl CallTree {
    fn write(&self, info: &ProfilerInfo, dir: &Path) -> std::io::Result<()> {
        std::fs::create_dir_all(dir)?;
        let trees = lock(&self.state.trees).clone();
        // Every thread's tree in one, frames merged by name (two functions
        // of one name share a frame, as in the folded format): values are
        // (calls, inclusive nanoseconds).
        let mut frames = Frames::new();
        let mut merged = StackTree::new(3);
        let (mut unbalanced, mut open) = (0, 0);
        for tree in &trees {
            let tree = lock(tree);
            unbalanced += tree.unbalanced;
            open += tree.stack.len();
            merge(&tree, &mut frames, &mut merged);
        }
        add_self_time(&mut merged);
        let events = info.event_mask().unwrap_or_default().low;
        let mut summary = String::new();
        let _ = writeln!(summary, "mode={:?}", self.state.mode);
        let _ = writeln!(summary, "event_mask={:#x}", events.0);
        let _ = writeln!(
            summary,
            "inlining_disabled={}",
            events.contains(COR_PRF_DISABLE_INLINING)
        );
        let _ = writeln!(summary, "threads={}", trees.len());
        let _ = writeln!(summary, "unbalanced={unbalanced}");
        let _ = writeln!(summary, "open_frames={open}");
        let _ = writeln!(summary, "paths={}", merged.len() - 1);
        if let Some(late) = lock(&self.state.late).as_deref() {
            let _ = writeln!(summary, "late_install={late}");
        }
        if self.state.mode != Mode::Nothing {
            let create = |name: &str| -> std::io::Result<BufWriter<File>> {
                Ok(BufWriter::new(File::create(dir.join(name))?))
            };
            write_folded(&merged, &frames, |v| v[0], create("calls.folded")?)?;
            write_folded(&merged, &frames, |v| v[1] / 1000, create("time.folded")?)?;
            let mut options = FlameOptions::default();
            options.title = String::from("Flame graph (inclusive time)");
            options.unit = String::from("us");
            options.divisor = 1000;
            let flame = write_flame(
                &merged,
                &frames,
                &inclusive_widths(&merged, 1),
                &options,
                create("flame.svg")?,
            )?;
            // pprof: calls and self time (a node's inclusive time less its
            // callees'), which pprof sums up the stacks itself; one sample
            // per path, a location per function name.
            let mut pprof = Pprof::new(&[("calls", "count"), ("time", "nanoseconds")]);
            pprof.set_default_sample_type("time");
            pprof.add_tree_by(&merged, &frames, &[], |v, out| {
                out.push(v[0].min(i64::MAX as u64) as i64);
                out.push(v[2].min(i64::MAX as u64) as i64);
            });
            std::fs::write(dir.join("profile.pb.gz"), pprof.encode_gzip())?;
            let _ = writeln!(summary, "flame_frames_drawn={}", flame.drawn);
            let _ = writeln!(summary, "flame_frames_omitted={}", flame.omitted);
            std::fs::write(
                dir.join("exceptions.txt"),
                lock(&self.state.exceptions).join("\n") + "\n",
            )?;
            std::fs::write(
                dir.join("args.txt"),
                lock(&self.state.args).join("\n") + "\n",
            )?;
        }
        std::fs::write(dir.join("summary.txt"), summary)
    }
}

/// Sets each node's value 2 to its self time: its inclusive time (value
/// 1) less its children's, never below zero (clock granularity).
fn add_self_time(tree: &mut StackTree) {
    let mut children = vec![0u64; tree.len()];
    for n in (1..tree.len()).rev() {
        let node = tree.find_index(n);
        if let Some(parent) = tree.parent(node) {
            children[parent.index()] =
                children[parent.index()].saturating_add(tree.values(node)[1]);
        }
    }
    for (n, callees) in children.into_iter().enumerate().skip(1) {
        let node = tree.find_index(n);
        let own = tree.values(node)[1].saturating_sub(callees);
        tree.add_to(node, &[0, 0, own]);
    }
}

/// Adds a thread's call tree to `merged`, naming each node's function.
fn merge(tree: &ThreadTree, frames: &mut Frames, merged: &mut StackTree) {
    // (thread tree node, merged node), depth first without recursion.
    let mut pending = vec![(0usize, NodeId::ROOT)];
    while let Some((node, into)) = pending.pop() {
        for &(key, child) in &tree.nodes[node].children {
            // SAFETY: keys are addresses of `Hooked<Function>` records,
            // which the facade never frees.
            let name = &unsafe { &*(key as *const Hooked<Function>) }.client().name;
            let entry = &tree.nodes[child];
            debug_assert_eq!(entry.parent, node);
            let target = merged.child(into, frames.intern(name));
            merged.add_to(target, &[entry.calls, entry.nanos, 0]);
            pending.push((child, target));
        }
    }
}

corprof::profiler!(CallTree, "{3C1F5E2A-7B9D-4E61-A8C4-5D2E9F0B1A73}");
