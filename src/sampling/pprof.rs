//! A [`Profile`] as pprof: the sample types of the sampler's options, the
//! threads' stack trees and the memory parts' synthetic threads (the
//! live heap's ages). Below the exporters and the output files, which both
//! send it.

use alloc::vec::Vec;
use std::time::UNIX_EPOCH;

use super::memory::LIVE_HEAP_THREAD;
use super::options::{EXCEPTIONS, INUSE_OBJECTS, INUSE_SPACE, SAMPLE_TYPES, WAIT};
use super::state::{Profile, ThreadProfile};
use crate::profile::{NodeId, Pprof, StackTree};

impl Profile {
    /// The profile in pprof: sample types `cpu` and `wall` (nanoseconds),
    /// `alloc_objects` (count), `alloc_space` (bytes) and `exception`
    /// (count), ... `wait` (nanoseconds), a `thread` label per sample, an
    /// `exception_type` label (the leaf frame) per exception sample and a
    /// `wait_source` label (`MonitorWait` of the leaf frame `[wait
    /// MonitorWait]`) per wait sample, the period in CPU nanoseconds, `cpu`
    /// the default type.
    pub fn to_pprof(&self) -> Pprof {
        let mut pprof = Pprof::new(&SAMPLE_TYPES);
        pprof.set_period("cpu", "nanoseconds", self.period_nanos as i64);
        let started = self
            .started
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as i64);
        pprof.set_time(started, self.duration.as_nanos() as i64);
        pprof.set_default_sample_type("cpu");
        for thread in &self.threads {
            if let Some(age) = thread
                .name
                .strip_prefix(LIVE_HEAP_THREAD)
                .and_then(|rest| rest.strip_prefix(" age "))
            {
                self.live_heap_samples(&mut pprof, thread, age);
                continue;
            }
            let labels = [("thread", thread.name.as_str())];
            let map = |node: &[u64], values: &mut Vec<i64>| {
                values.extend(node.iter().map(|&v| v.min(i64::MAX as u64) as i64));
                values[EXCEPTIONS] = 0;
                values[WAIT] = 0;
            };
            // Exceptions and waits apart: each stack with its exception's
            // type or its wait's source as a label. The samples taken
            // inside spans apart too: each span's with its ids as labels.
            let outside;
            let tree = if thread.spans.is_empty() {
                &thread.tree
            } else {
                outside = outside_spans(thread);
                &outside
            };
            pprof.add_tree_by(tree, &self.frames, &labels, map);
            for span in &thread.spans {
                let (trace, id) = (span.trace_hex(), span.span_hex());
                let labels = [
                    ("thread", thread.name.as_str()),
                    ("trace_id", trace.as_str()),
                    ("span_id", id.as_str()),
                ];
                pprof.add_tree_by(&span.tree, &self.frames, &labels, map);
            }
            let tree = &thread.tree;
            for index in 1..tree.len() {
                let node = tree.find_index(index);
                for kind in [EXCEPTIONS, WAIT] {
                    let value = tree.values(node)[kind];
                    if value == 0 {
                        continue;
                    }
                    let stack = self.leaf_first(tree, node);
                    let mut values = alloc::vec![0i64; SAMPLE_TYPES.len()];
                    values[kind] = value.min(i64::MAX as u64) as i64;
                    let label = match kind {
                        EXCEPTIONS => ("exception_type", stack[0]),
                        _ => (
                            "wait_source",
                            stack[0]
                                .strip_prefix("[wait ")
                                .and_then(|s| s.strip_suffix(']'))
                                .unwrap_or(stack[0]),
                        ),
                    };
                    pprof.add_sample(&stack, &values, &[("thread", thread.name.as_str()), label]);
                }
            }
        }
        pprof
    }
}

/// `thread`'s tree without the samples its spans hold (each of those is
/// also in the tree: `ThreadProfile::spans`).
fn outside_spans(thread: &ThreadProfile) -> StackTree {
    let width = thread.tree.width();
    let mut inside = StackTree::new(width);
    for span in &thread.spans {
        inside.absorb(&span.tree);
    }
    let mut outside = StackTree::new(width);
    for index in 1..thread.tree.len() {
        let node = thread.tree.find_index(index);
        let stack = thread.tree.stack(node);
        let mut values = thread.tree.values(node).to_vec();
        if let Some(found) = inside.find(stack.iter().copied()) {
            for (v, &taken) in values.iter_mut().zip(inside.values(found)) {
                *v = v.saturating_sub(taken);
            }
        }
        if values.iter().any(|&v| v != 0) {
            outside.add(stack, &values);
        }
    }
    outside
}

impl Profile {
    /// The frame names of `node`'s path in `tree`, the leaf first (pprof's
    /// order).
    fn leaf_first(&self, tree: &StackTree, node: NodeId) -> Vec<&str> {
        let mut stack: Vec<&str> = tree
            .stack(node)
            .into_iter()
            .map(|f| self.frames.name(f))
            .collect();
        stack.reverse();
        stack
    }

    /// The samples of a live-heap thread (objects of age `age` in GCs): one
    /// per allocation stack, labelled `thread` ([`LIVE_HEAP_THREAD`]),
    /// `object_type` (the leaf frame `new <Type>` without `new `) and
    /// `gc_age`.
    fn live_heap_samples(&self, pprof: &mut Pprof, thread: &ThreadProfile, age: &str) {
        let tree = &thread.tree;
        for index in 1..tree.len() {
            let node = tree.find_index(index);
            let values = tree.values(node);
            if values[INUSE_OBJECTS] == 0 && values[INUSE_SPACE] == 0 {
                continue;
            }
            let stack = self.leaf_first(tree, node);
            let mut sample = alloc::vec![0i64; SAMPLE_TYPES.len()];
            for i in [INUSE_OBJECTS, INUSE_SPACE] {
                sample[i] = values[i].min(i64::MAX as u64) as i64;
            }
            let object_type = stack[0].strip_prefix("new ").unwrap_or(stack[0]);
            let labels = [
                ("thread", LIVE_HEAP_THREAD),
                ("object_type", object_type),
                ("gc_age", age),
            ];
            pprof.add_sample(&stack, &sample, &labels);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::Frames;
    use crate::sampling::options::{CPU, WALL};
    use crate::sampling::state::SpanTree;

    /// The samples outside spans: the thread's tree less each span's, node
    /// by node (a stack wholly inside a span is left out).
    #[test]
    fn outside_spans_is_the_tree_less_the_spans() {
        let mut frames = Frames::new();
        let (main, hot, idle) = (
            frames.intern("Main"),
            frames.intern("Hot"),
            frames.intern("Idle"),
        );
        let mut values = [0; SAMPLE_TYPES.len()];
        let mut tree = StackTree::new(SAMPLE_TYPES.len());
        values[CPU] = 30;
        values[WALL] = 40;
        tree.add([main, hot], &values);
        values[CPU] = 0;
        values[WALL] = 50;
        tree.add([main, idle], &values);
        let span = |cpu, wall| {
            let mut t = StackTree::new(SAMPLE_TYPES.len());
            let mut v = [0; SAMPLE_TYPES.len()];
            v[CPU] = cpu;
            v[WALL] = wall;
            t.add([main, hot], &v);
            SpanTree {
                trace_id: [1; 16],
                span_id: [2; 8],
                tree: t,
            }
        };
        let thread = ThreadProfile {
            name: alloc::string::String::from("T"),
            os_thread: 1,
            tree,
            spans: alloc::vec![span(10, 15), span(20, 25)],
        };
        let outside = outside_spans(&thread);
        assert_eq!(outside.find([main, hot]), None, "wholly inside spans");
        let node = outside.find([main, idle]).unwrap();
        assert_eq!(outside.values(node)[WALL], 50);
        let thread = ThreadProfile {
            spans: alloc::vec![span(10, 15)],
            ..thread
        };
        let outside = outside_spans(&thread);
        let node = outside.find([main, hot]).unwrap();
        assert_eq!(
            (outside.values(node)[CPU], outside.values(node)[WALL]),
            (20, 25)
        );
    }
}
