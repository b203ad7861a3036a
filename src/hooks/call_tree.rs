//! [`CallTree`]: a shadow stack and call tree per thread, fed by the
//! enter/leave hooks, merged into a [`StackTree`] when asked.

use alloc::sync::Arc;
use alloc::vec;
use alloc::vec::Vec;
use core::any::Any;
use core::sync::atomic::{AtomicUsize, Ordering};
use std::cell::RefCell;
use std::sync::Mutex;
use std::time::Instant;

use super::function_hooks::Hooked;
use crate::profile::{Frames, NodeId, StackTree};
use crate::profiling::FunctionID;
use crate::support::sync::lock;

/// One node of a thread's tree: a call path.
struct Node<C: 'static> {
    /// The innermost function of the path (`None` for the root).
    function: Option<&'static Hooked<C>>,
    /// (address of the child's `Hooked`, child): a short list, searched
    /// linearly (call trees fan out little, and this is the hot path).
    children: Vec<(usize, usize)>,
    calls: u64,
    nanos: u64,
}

/// One thread's tree and shadow stack.
struct Shadow<C: 'static> {
    nodes: Vec<Node<C>>,
    /// Open frames, innermost last.
    stack: Vec<Open>,
    /// Leaves of a function with no open frame on this thread.
    unbalanced: u64,
    /// Frames found ended without their leave (see [`CallTree::enter`]).
    closed_without_leave: u64,
    /// When this thread last entered or left a hooked function: the latest
    /// time a frame found ended at its next enter can have ended.
    last_event: Option<Instant>,
    /// The functions whose unwind began (unwind-enter) and has not ended
    /// (unwind-leave), oldest first: one, or more when a `finally` block
    /// run by the unwind threw again (see [`CallTree::catcher_enter`]).
    /// Bounded: a thread has only so many nested exceptions.
    unwinding: Vec<FunctionID>,
}

/// An open frame of a thread's shadow stack.
#[derive(Clone, Copy)]
struct Open {
    node: usize,
    entered: Instant,
    function: FunctionID,
    /// Where the thread's stack was when the enter hook recorded the frame
    /// (the address of a local of [`CallTree::enter`]): a callee's is lower
    /// than its caller's (stacks grow down on every target CoreCLR runs on).
    depth: usize,
}

impl<C: 'static> Shadow<C> {
    fn new() -> Self {
        let root = Node {
            function: None,
            children: Vec::new(),
            calls: 0,
            nanos: 0,
        };
        Shadow {
            nodes: vec![root],
            stack: Vec::new(),
            unbalanced: 0,
            closed_without_leave: 0,
            last_event: None,
            unwinding: Vec::new(),
        }
    }

    /// `depth`: the stack position of this enter, or `None` for "nested in
    /// the innermost open frame" (the unit tests' calls, made from one
    /// stack depth, simulate nesting with it).
    fn enter(&mut self, function: &'static Hooked<C>, at: Instant, depth: Option<usize>) {
        let depth = match depth {
            Some(depth) => {
                // A frame recorded at or below this call's depth is not one
                // of its callers: it ended without a leave hook.
                let ended_by = self.last_event.unwrap_or(at);
                while self.stack.last().is_some_and(|top| top.depth <= depth) {
                    self.close_without_leave(ended_by);
                }
                depth
            }
            None => self
                .stack
                .last()
                .map_or(usize::MAX, |top| top.depth.saturating_sub(1)),
        };
        self.last_event = Some(at);
        let key = function as *const Hooked<C> as usize;
        let parent = self.stack.last().map_or(0, |frame| frame.node);
        let known = self.nodes[parent].children.iter().find(|c| c.0 == key);
        let node = match known {
            Some(&(_, node)) => node,
            None => {
                let node = self.nodes.len();
                self.nodes[parent].children.push((key, node));
                self.nodes.push(Node {
                    function: Some(function),
                    children: Vec::new(),
                    calls: 0,
                    nanos: 0,
                });
                node
            }
        };
        self.stack.push(Open {
            node,
            entered: at,
            function: function.function(),
            depth,
        });
    }

    /// `function` left. When its frame is not the innermost, the frames
    /// above it ended without a leave (a runtime-async method that
    /// suspended, on 11; a frame an exception unwound unseen): they close
    /// first, at this time. A leave of a function with no open frame closes
    /// nothing and is counted as unbalanced.
    fn leave(&mut self, function: FunctionID, at: Instant) {
        self.last_event = Some(at);
        let Some(position) = self.stack.iter().rposition(|f| f.function == function) else {
            self.unbalanced += 1;
            return;
        };
        while self.stack.len() > position + 1 {
            self.close_without_leave(at);
        }
        self.close(at);
    }

    /// Closes the innermost frame, ended at `at`.
    fn close(&mut self, at: Instant) {
        if let Some(open) = self.stack.pop() {
            let node = &mut self.nodes[open.node];
            node.calls += 1;
            let nanos = at.saturating_duration_since(open.entered).as_nanos();
            node.nanos = node
                .nanos
                .saturating_add(u64::try_from(nanos).unwrap_or(u64::MAX));
        }
    }

    fn close_without_leave(&mut self, at: Instant) {
        self.closed_without_leave += 1;
        self.close(at);
    }
}

/// Where this thread's stack is now: the address of a local. Only ever
/// compared with another call's from the same place (the enter hook).
#[inline(always)]
fn stack_depth() -> usize {
    let marker = 0u8;
    core::hint::black_box(&marker) as *const u8 as usize
}

std::thread_local! {
    /// This thread's shadow of each `CallTree` (by its id): usually one.
    static SHADOWS: RefCell<Vec<(usize, Arc<dyn Any + Send + Sync>)>> =
        const { RefCell::new(Vec::new()) };
}

/// Tells the recorders apart in [`SHADOWS`].
static NEXT_ID: AtomicUsize = AtomicUsize::new(1);

/// A call tree per thread, recorded by the enter/leave hooks of a
/// [`FunctionHooks`](super::FunctionHooks) implementation, and merged by
/// name in [`report`](CallTree::report).
///
/// Call [`enter`](Self::enter) from `function_enter` and
/// [`leave`](Self::leave) from `function_leave` and `function_tailcall`
/// (a tail call ends the caller's frame). Exceptions leave frames without a
/// leave hook: call [`unwind_enter`](Self::unwind_enter) and
/// [`unwind_leave`](Self::unwind_leave) from the profiler's
/// `exception_unwind_function_enter` and `exception_unwind_function_leave`
/// (`COR_PRF_MONITOR_EXCEPTIONS`), which pop the unwound frame when it is
/// the innermost hooked one.
///
/// Each thread records into its own tree behind its own lock, which only
/// `report` takes from another thread: the hooks never wait on each other.
pub struct CallTree<C: 'static> {
    id: usize,
    threads: Mutex<Vec<Arc<Mutex<Shadow<C>>>>>,
}

/// What [`CallTree::report`] merged: every thread's tree in one, paths
/// named by the function names given, and how sound the shadow stacks were.
#[derive(Debug)]
#[non_exhaustive]
pub struct CallTreeReport {
    /// The call paths; values `[calls, inclusive nanoseconds, self
    /// nanoseconds]` (self: inclusive less the callees', never below zero).
    /// Two functions of one name share a frame, as in the folded format.
    pub tree: StackTree,
    /// The frame names.
    pub frames: Frames,
    /// The threads that entered a hooked function.
    pub threads: usize,
    /// Leaves of a function with no open frame on their thread.
    pub unbalanced: u64,
    /// Frames found ended without a leave hook, and closed then: a
    /// runtime-async method that suspended at an `await` (.NET 11 calls no
    /// leave hook there), or a frame an exception unwound with no unwind
    /// callbacks (see [`CallTree::enter`]).
    pub closed_without_leave: u64,
    /// Frames still open (entered, not left) when the report was made.
    pub open_frames: usize,
}

impl<C: Send + Sync + 'static> Default for CallTree<C> {
    fn default() -> Self {
        CallTree::new()
    }
}

impl<C: Send + Sync + 'static> CallTree<C> {
    /// An empty recorder.
    pub fn new() -> Self {
        CallTree {
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            threads: Mutex::new(Vec::new()),
        }
    }

    /// Runs `f` on this thread's shadow, made and registered first. `f`
    /// runs inside the thread-local borrow (it never calls back here), so
    /// the hot path takes no reference count.
    fn with_shadow<R>(&self, f: impl FnOnce(&mut Shadow<C>) -> R) -> R {
        SHADOWS.with(|slot| {
            let mut slot = slot.borrow_mut();
            let index = match slot.iter().position(|(id, _)| *id == self.id) {
                Some(index) => index,
                None => {
                    let shadow = Arc::new(Mutex::new(Shadow::<C>::new()));
                    lock(&self.threads).push(Arc::clone(&shadow));
                    slot.push((self.id, shadow as Arc<dyn Any + Send + Sync>));
                    slot.len() - 1
                }
            };
            match slot[index].1.downcast_ref::<Mutex<Shadow<C>>>() {
                Some(shadow) => f(&mut lock(shadow)),
                // Unreachable: this recorder's id only ever holds its own type.
                None => f(&mut Shadow::new()),
            }
        })
    }

    /// `function` was entered on this thread. Call it from the enter hook
    /// only (one place: the frames' stack positions are compared).
    ///
    /// A frame still open on this thread's shadow stack whose enter was
    /// recorded at this call's stack depth or deeper is not a caller of
    /// `function`: it ended without a leave hook, and closes now (at the
    /// thread's previous hook event, the latest it can have ended). On .NET
    /// 11 a runtime-async method that suspends at an `await` gets no leave
    /// hook, and its resumption enters it again on a thread-pool thread
    /// (dotnet/runtime#122488); [`leave`](Self::leave) closes such frames
    /// when an outer function returns, and this when the thread goes on to
    /// other work. Both are counted in
    /// [`CallTreeReport::closed_without_leave`].
    pub fn enter(&self, function: &Hooked<C>) {
        self.enter_at_depth(function, Some(stack_depth()));
    }

    /// [`enter`](Self::enter) at `depth` (`None`: nested in the innermost
    /// open frame, whatever the stack depth; the unit tests call from one
    /// depth and give it, or explicit depths).
    fn enter_at_depth(&self, function: &Hooked<C>, depth: Option<usize>) {
        let at = Instant::now();
        let function = function.as_static();
        self.with_shadow(|shadow| shadow.enter(function, at, depth));
    }

    #[cfg(test)]
    fn enter_nested(&self, function: &Hooked<C>) {
        self.enter_at_depth(function, None);
    }

    #[cfg(test)]
    fn enter_at(&self, function: &Hooked<C>, depth: usize) {
        self.enter_at_depth(function, Some(depth));
    }

    /// `function` returned, or tail-called out, on this thread: its frame
    /// closes, and any frame still open above it (ended without a leave
    /// hook, see [`enter`](Self::enter)).
    pub fn leave(&self, function: &Hooked<C>) {
        let at = Instant::now();
        self.with_shadow(|shadow| shadow.leave(function.function(), at));
    }

    /// An exception is unwinding `function`'s frame on this thread
    /// (`exception_unwind_function_enter`).
    pub fn unwind_enter(&self, function: FunctionID) {
        self.with_shadow(|shadow| {
            if shadow.unwinding.len() < 64 {
                shadow.unwinding.push(function);
            }
        });
    }

    /// The frame [`unwind_enter`](Self::unwind_enter) named is gone
    /// (`exception_unwind_function_leave`): it closes if it is the
    /// innermost hooked frame (only hooked frames are on the shadow stack).
    pub fn unwind_leave(&self) {
        let at = Instant::now();
        self.with_shadow(|shadow| {
            let Some(function) = shadow.unwinding.pop() else {
                return;
            };
            // An unwind begun before this one (by the exception a `finally`
            // block threw this one from) ends with it.
            shadow.unwinding.clear();
            if shadow
                .stack
                .last()
                .is_some_and(|top| top.function == function)
            {
                shadow.leave(function, at);
            }
        });
    }

    /// A `catch` block of `function` is entered on this thread
    /// (`exception_catcher_enter`): the exception's unwind is over, and
    /// `function`'s frame, the catching one, is open.
    ///
    /// CoreCLR 10 and 11 give no unwind-leave for a frame whose `finally`
    /// block threw while the frame was being unwound (3.1, 8 and 9 give
    /// one, with a second unwind-enter): when the `catch` is in its caller,
    /// that frame is still on the shadow stack here, and this closes it.
    /// Only the IDs tell the frames apart, so a method that throws from a
    /// `finally` and catches in the same frame, called by itself, is
    /// closed one frame too early there (docs/hooks.md).
    pub fn catcher_enter(&self, function: FunctionID) {
        let at = Instant::now();
        self.with_shadow(|shadow| {
            let unfinished = core::mem::take(&mut shadow.unwinding);
            let [abandoned, ..] = unfinished[..] else {
                return;
            };
            if unfinished.len() < 2 {
                return;
            }
            let n = shadow.stack.len();
            let top_abandoned = n >= 1 && shadow.stack[n - 1].function == abandoned;
            let caller_catches = n >= 2 && shadow.stack[n - 2].function == function;
            if top_abandoned && caller_catches {
                shadow.leave(abandoned, at);
            }
        });
    }

    /// Every thread's tree merged, each node named `name(client)` (a `;`
    /// in a name is kept: replace it in `name` for folded output).
    pub fn report(&self, mut name: impl FnMut(&C) -> &str) -> CallTreeReport {
        let threads = lock(&self.threads).clone();
        let mut report = CallTreeReport {
            tree: StackTree::new(3),
            frames: Frames::new(),
            threads: threads.len(),
            unbalanced: 0,
            closed_without_leave: 0,
            open_frames: 0,
        };
        for shadow in &threads {
            let shadow = lock(shadow);
            report.unbalanced += shadow.unbalanced;
            report.closed_without_leave += shadow.closed_without_leave;
            report.open_frames += shadow.stack.len();
            // (thread node, merged node), depth first without recursion.
            let mut pending = vec![(0usize, NodeId::ROOT)];
            while let Some((node, into)) = pending.pop() {
                for &(_, child) in &shadow.nodes[node].children {
                    let entry = &shadow.nodes[child];
                    let Some(function) = entry.function else {
                        continue;
                    };
                    let frame = report.frames.intern(name(function.client()));
                    let target = report.tree.child(into, frame);
                    report.tree.add_to(target, &[entry.calls, entry.nanos, 0]);
                    pending.push((child, target));
                }
            }
        }
        add_self_time(&mut report.tree);
        report
    }
}

/// Sets each node's value 2 to its self time: its inclusive time (value 1)
/// less its children's, never below zero (clock granularity).
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn hooked(function: usize, name: &'static str) -> &'static Hooked<&'static str> {
        // SAFETY: test IDs, never given to a runtime.
        let function = unsafe { FunctionID::from_raw(function) };
        Hooked::leak_for_test(function, name)
    }

    fn path(report: &CallTreeReport, names: &[&str]) -> Option<Vec<u64>> {
        let frames: Option<Vec<_>> = names
            .iter()
            .map(|n| report.frames.iter().find(|f| f.1 == *n).map(|f| f.0))
            .collect();
        let node = report.tree.find(frames?)?;
        Some(report.tree.values(node).to_vec())
    }

    #[test]
    fn calls_nest_per_thread_and_merge_by_name() {
        let (main, fib, work) = (hooked(1, "Main"), hooked(2, "Fib"), hooked(3, "Work"));
        let tree = Arc::new(CallTree::new());
        tree.enter_nested(main);
        tree.enter_nested(fib);
        tree.enter_nested(fib);
        std::thread::sleep(Duration::from_millis(2));
        tree.leave(fib);
        tree.leave(fib);
        tree.enter_nested(fib);
        tree.leave(fib);
        tree.leave(main);
        let other = Arc::clone(&tree);
        std::thread::spawn(move || {
            other.enter_nested(work);
            other.enter_nested(fib);
            other.leave(fib);
            other.leave(work);
        })
        .join()
        .unwrap();
        let report = tree.report(|name| name);
        assert_eq!(
            (report.threads, report.unbalanced, report.open_frames),
            (2, 0, 0)
        );
        assert_eq!(path(&report, &["Main"]).unwrap()[0], 1);
        assert_eq!(path(&report, &["Main", "Fib"]).unwrap()[0], 2);
        let inner = path(&report, &["Main", "Fib", "Fib"]).unwrap();
        assert_eq!(inner[0], 1);
        assert!(inner[1] >= 2_000_000, "{inner:?}");
        assert_eq!(inner[1], inner[2], "a leaf's time is all its own");
        let outer = path(&report, &["Main", "Fib"]).unwrap();
        assert!(
            outer[1] >= inner[1] && outer[2] <= outer[1] - inner[1],
            "{outer:?}"
        );
        assert_eq!(path(&report, &["Work", "Fib"]).unwrap()[0], 1);
        assert_eq!(path(&report, &["Fib"]), None, "Fib is never a root");
    }

    #[test]
    fn unwinding_closes_only_the_innermost_hooked_frame() {
        let (a, b) = (hooked(10, "A"), hooked(11, "B"));
        let tree = CallTree::new();
        tree.enter_nested(a);
        tree.enter_nested(b);
        // An unhooked frame unwinds first: nothing closes.
        // SAFETY: a test ID.
        tree.unwind_enter(unsafe { FunctionID::from_raw(99) });
        tree.unwind_leave();
        tree.unwind_enter(b.function());
        tree.unwind_leave();
        // A leave for A while B is still open would be unbalanced; B was
        // closed by the unwind, so it is not.
        tree.leave(a);
        let report = tree.report(|name| name);
        assert_eq!((report.unbalanced, report.open_frames), (0, 0));
        assert_eq!(path(&report, &["A", "B"]).unwrap()[0], 1);
        // A leave with nothing open, and one for another function.
        tree.leave(a);
        tree.enter_nested(a);
        tree.leave(b);
        assert_eq!(tree.report(|name| name).unbalanced, 2);
    }

    #[test]
    fn a_frame_whose_finally_threw_closes_when_its_caller_catches() {
        let (main, f) = (hooked(30, "Main"), hooked(31, "F"));
        // 10 and 11: F(0)'s unwind begins, its finally throws, the new
        // exception's unwind begins in F(1), which catches: no unwind-leave.
        let tree = CallTree::new();
        tree.enter_nested(main);
        tree.enter_nested(f);
        tree.enter_nested(f);
        tree.unwind_enter(f.function());
        tree.unwind_enter(f.function());
        tree.catcher_enter(f.function());
        tree.leave(f);
        tree.leave(main);
        let report = tree.report(|name| name);
        assert_eq!((report.unbalanced, report.open_frames), (0, 0));
        assert_eq!(path(&report, &["Main", "F", "F"]).unwrap()[0], 1);
        // 3.1, 8 and 9: the same, with an unwind-leave for F(0) and a third
        // unwind-enter, for F(1); the catch then closes nothing more.
        let tree = CallTree::new();
        tree.enter_nested(main);
        tree.enter_nested(f);
        tree.enter_nested(f);
        tree.unwind_enter(f.function());
        tree.unwind_enter(f.function());
        tree.unwind_leave();
        tree.unwind_enter(f.function());
        tree.catcher_enter(f.function());
        tree.leave(f);
        tree.leave(main);
        let report = tree.report(|name| name);
        assert_eq!((report.unbalanced, report.open_frames), (0, 0));
        assert_eq!(path(&report, &["Main", "F", "F"]).unwrap()[0], 1);
        // A plain catch, one unwind begun: nothing closes.
        let tree = CallTree::new();
        tree.enter_nested(main);
        tree.enter_nested(f);
        tree.unwind_enter(main.function());
        tree.catcher_enter(main.function());
        tree.leave(f);
        tree.leave(main);
        assert_eq!(tree.report(|name| name).unbalanced, 0);
    }

    #[test]
    fn frames_that_suspended_close_when_an_outer_function_leaves() {
        // .NET 11, runtime async: the thunk of Main calls Main's async
        // variant, which awaits Mid, which awaits Leaf; Leaf suspends (no
        // leave), so do Mid and Main's variant; the thunk returns its Task.
        let (thunk, main, mid, leaf) = (
            hooked(40, "Main"),
            hooked(41, "Main"),
            hooked(42, "Mid"),
            hooked(43, "Leaf"),
        );
        let tree = CallTree::new();
        tree.enter_at(thunk, 1000);
        tree.enter_at(main, 900);
        tree.enter_at(mid, 800);
        tree.enter_at(leaf, 700);
        tree.leave(thunk);
        let report = tree.report(|name| name);
        assert_eq!(
            (
                report.unbalanced,
                report.closed_without_leave,
                report.open_frames
            ),
            (0, 3, 0)
        );
        assert_eq!(
            path(&report, &["Main", "Main", "Mid", "Leaf"]).unwrap()[0],
            1
        );
    }

    #[test]
    fn frames_that_suspended_close_when_the_thread_enters_at_their_depth() {
        // A thread-pool thread resumes Leaf (completes), then Mid, which
        // calls Other and suspends in it (no leaves), then Main: Main's
        // enter is at Mid's depth, so Other and Mid had ended.
        let (main, mid, leaf, other) = (
            hooked(50, "Main"),
            hooked(51, "Mid"),
            hooked(52, "Leaf"),
            hooked(53, "Other"),
        );
        let tree = CallTree::new();
        tree.enter_at(leaf, 500);
        tree.leave(leaf);
        tree.enter_at(mid, 500);
        tree.enter_at(other, 400);
        // Suspended: the thread waits for work before it resumes Main.
        std::thread::sleep(Duration::from_millis(30));
        tree.enter_at(main, 500);
        tree.leave(main);
        let report = tree.report(|name| name);
        assert_eq!(
            (
                report.unbalanced,
                report.closed_without_leave,
                report.open_frames
            ),
            (0, 2, 0)
        );
        for root in [&["Leaf"][..], &["Mid"], &["Main"]] {
            assert_eq!(path(&report, root).unwrap()[0], 1, "{root:?}");
        }
        assert_eq!(path(&report, &["Mid", "Other"]).unwrap()[0], 1);
        assert_eq!(
            path(&report, &["Mid", "Main"]),
            None,
            "Main is not Mid's callee"
        );
        // The suspended frames end at the thread's last event before the
        // wait (Other's enter), not when the wait ended.
        let mid_nanos = path(&report, &["Mid"]).unwrap()[1];
        assert!(mid_nanos < 30_000_000, "{mid_nanos} ns");
        // A deeper enter nests: nothing closes.
        let tree = CallTree::new();
        tree.enter_at(main, 500);
        tree.enter_at(mid, 499);
        tree.leave(mid);
        tree.leave(main);
        let report = tree.report(|name| name);
        assert_eq!((report.closed_without_leave, report.open_frames), (0, 0));
        assert_eq!(path(&report, &["Main", "Mid"]).unwrap()[0], 1);
    }

    #[test]
    fn the_real_stack_depth_nests_calls() {
        // enter() itself, called from nested Rust frames: each deeper.
        fn nest(tree: &CallTree<&'static str>, functions: &[&'static Hooked<&'static str>]) {
            if let [first, rest @ ..] = functions {
                tree.enter(first);
                nest(tree, core::hint::black_box(rest));
                tree.leave(first);
            }
        }
        let tree = CallTree::new();
        let (a, b, c) = (hooked(60, "A"), hooked(61, "B"), hooked(62, "C"));
        nest(&tree, &[a, b, c]);
        // Called again from the same depth: the first A has left.
        nest(&tree, &[a]);
        let report = tree.report(|name| name);
        assert_eq!(
            (
                report.unbalanced,
                report.closed_without_leave,
                report.open_frames
            ),
            (0, 0, 0)
        );
        assert_eq!(path(&report, &["A", "B", "C"]).unwrap()[0], 1);
        assert_eq!(path(&report, &["A"]).unwrap()[0], 2);
    }

    #[test]
    fn two_recorders_on_one_thread_keep_their_own_trees() {
        let f = hooked(20, "F");
        let (one, two) = (CallTree::new(), CallTree::new());
        one.enter_nested(f);
        one.leave(f);
        two.enter_nested(f);
        assert_eq!(path(&one.report(|n| n), &["F"]).unwrap()[0], 1);
        let report = two.report(|n| n);
        assert_eq!(
            (report.open_frames, path(&report, &["F"]).unwrap()[0]),
            (1, 0)
        );
    }
}
