//! The flight recorder: the last N seconds of samples in a ring of
//! one-second slices, for the incidents (`incident.rs`). Each slice holds,
//! per thread slot of the sampler's state, a stack tree of that second's
//! samples: the same stacks and values the record path adds to the run's
//! and the period's trees (`state.rs`), added on the record path's thread
//! (never in a signal handler).
//!
//! Bounded: a slice takes at most [`SLICE_NODES`] tree nodes (a sample
//! that would add more is counted in [`Recorder::dropped`] and left out),
//! and the ring at most `seconds` slices, so its memory is at most
//! [`Recorder::memory_bound`] bytes whatever the program does.

use alloc::vec::Vec;
use std::collections::VecDeque;

use super::options::SAMPLE_TYPES;
use crate::profile::{FrameId, Frames, StackTree};

/// The most stack tree nodes one second's slice holds (every thread's
/// trees together).
pub(crate) const SLICE_NODES: usize = 8192;

/// The bytes one tree node takes at most: the node (16), its values (8
/// each), its lookup entry (12, with a hash table's slack counted twice).
pub(crate) const NODE_BYTES: usize = 16 + 8 * SAMPLE_TYPES.len() + 2 * 24;

/// One second's samples.
#[derive(Debug)]
struct Slice {
    /// Seconds since the sampler started.
    second: u64,
    /// Per thread slot, its tree (`None`: no sample of it this second).
    trees: Vec<Option<StackTree>>,
    nodes: usize,
}

/// The ring.
#[derive(Debug)]
pub(crate) struct Recorder {
    seconds: u64,
    slices: VecDeque<Slice>,
    /// Samples left out because their slice was full.
    pub(crate) dropped: u64,
}

impl Recorder {
    /// A ring of the last `seconds` seconds (at least 1).
    pub(crate) fn new(seconds: u32) -> Recorder {
        Recorder {
            seconds: u64::from(seconds.max(1)),
            slices: VecDeque::new(),
            dropped: 0,
        }
    }

    /// The seconds it keeps.
    pub(crate) fn seconds(&self) -> u64 {
        self.seconds
    }

    /// The tree nodes its slices hold now (at most
    /// [`NODE_BYTES`] each).
    pub(crate) fn nodes(&self) -> usize {
        self.slices.iter().map(|s| s.nodes).sum()
    }

    /// The most bytes its trees take: `seconds` slices of
    /// [`SLICE_NODES`] nodes of [`NODE_BYTES`], plus a root per thread slot.
    pub(crate) fn memory_bound(&self) -> usize {
        self.seconds as usize * SLICE_NODES * NODE_BYTES
    }

    /// Adds a sample of thread slot `slot` at `second` (seconds since the
    /// sampler started; never earlier than the last sample's).
    pub(crate) fn add(&mut self, second: u64, slot: usize, stack: &[FrameId], values: &[u64]) {
        if self.slices.back().is_none_or(|s| s.second < second) {
            // Drop the slices that have left the window, reusing one.
            let mut reused = None;
            while self
                .slices
                .front()
                .is_some_and(|s| s.second + self.seconds <= second)
            {
                reused = self.slices.pop_front();
            }
            let mut slice = reused.unwrap_or(Slice {
                second,
                trees: Vec::new(),
                nodes: 0,
            });
            slice.second = second;
            slice.nodes = 0;
            slice.trees.iter_mut().for_each(|t| *t = None);
            self.slices.push_back(slice);
        }
        let Some(slice) = self.slices.back_mut() else {
            return;
        };
        if slice.trees.len() <= slot {
            slice.trees.resize_with(slot + 1, || None);
        }
        let tree = slice.trees[slot].get_or_insert_with(|| StackTree::new(SAMPLE_TYPES.len()));
        let before = tree.len();
        // The nodes this stack would add: its length at most.
        if slice.nodes + stack.len() > SLICE_NODES && tree.find(stack.iter().copied()).is_none() {
            self.dropped += 1;
            return;
        }
        tree.add(stack.iter().copied(), values);
        slice.nodes += tree.len() - before;
    }

    /// Thread slot `from` ended and its samples join slot `to`'s
    /// (`None`: they are dropped, the slot is free).
    pub(crate) fn moved(&mut self, from: usize, to: Option<usize>) {
        for slice in &mut self.slices {
            let Some(tree) = slice.trees.get_mut(from).and_then(Option::take) else {
                continue;
            };
            let Some(to) = to else { continue };
            if slice.trees.len() <= to {
                slice.trees.resize_with(to + 1, || None);
            }
            match &mut slice.trees[to] {
                Some(gathered) => gathered.absorb(&tree),
                empty => *empty = Some(tree),
            }
        }
    }

    /// The window ending at `now` (seconds since the start), per thread
    /// slot: its samples of the last `seconds` seconds, over a frame table
    /// of their own (`frames` names those of the sampler's state).
    pub(crate) fn window(&self, now: u64, frames: &Frames) -> (Frames, Vec<(usize, StackTree)>) {
        let mut own = Frames::new();
        let mut out: Vec<(usize, StackTree)> = Vec::new();
        for slice in &self.slices {
            if slice.second + self.seconds <= now {
                continue;
            }
            for (slot, tree) in slice.trees.iter().enumerate() {
                let Some(tree) = tree else { continue };
                let at = match out.iter().position(|(s, _)| *s == slot) {
                    Some(at) => at,
                    None => {
                        out.push((slot, StackTree::new(SAMPLE_TYPES.len())));
                        out.len() - 1
                    }
                };
                out[at].1.merge(&mut own, tree, frames);
            }
        }
        (own, out)
    }

    /// The seconds of the slices kept (oldest first).
    #[cfg(test)]
    fn seconds_kept(&self) -> Vec<u64> {
        self.slices.iter().map(|s| s.second).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sampling::options::CPU;

    /// The ring keeps the last N seconds, merges them per slot, drops
    /// what the node bound leaves out, and moves an ended thread's
    /// samples.
    #[test]
    fn the_ring_keeps_the_last_seconds_within_its_bound() {
        let mut frames = Frames::new();
        let (main, steady, burst) = (
            frames.intern("Main"),
            frames.intern("Steady"),
            frames.intern("Burst"),
        );
        let mut values = [0; SAMPLE_TYPES.len()];
        values[CPU] = 10;
        let mut ring = Recorder::new(3);
        for second in 0..5 {
            ring.add(second, 0, &[main, steady], &values);
        }
        ring.add(5, 1, &[main, burst], &values);
        assert_eq!(ring.seconds_kept(), [3, 4, 5]);
        let (own, window) = ring.window(5, &frames);
        assert_eq!(window.len(), 2);
        let steady_tree = &window.iter().find(|w| w.0 == 0).unwrap().1;
        let id = |name: &str| own.iter().find(|(_, n)| *n == name).unwrap().0;
        let node = steady_tree.find([id("Main"), id("Steady")]).unwrap();
        // Seconds 3 and 4 (0 to 2 have left the ring).
        assert_eq!(steady_tree.values(node)[CPU], 20);
        // Slot 1 ends; its samples join slot 0's.
        ring.moved(1, Some(0));
        let (_, window) = ring.window(5, &frames);
        assert_eq!(window.len(), 1);
        // Later, the window has moved on: second 5 alone.
        let (_, window) = ring.window(7, &frames);
        assert_eq!(window[0].1.len(), 3, "Main, Burst and the root");
        // A slice takes at most SLICE_NODES nodes.
        let many: Vec<FrameId> = (0..SLICE_NODES + 10)
            .map(|i| frames.intern(&alloc::format!("F{i}")))
            .collect();
        for (i, &f) in many.iter().enumerate() {
            ring.add(9, i % 3, &[main, f], &values);
        }
        let nodes = ring.slices.back().unwrap().nodes;
        assert!((SLICE_NODES - 2..=SLICE_NODES).contains(&nodes), "{nodes}");
        assert!(ring.dropped > 0);
        // Known stacks still count in a full slice, and add no node; the
        // older seconds have left the ring.
        let dropped = ring.dropped;
        ring.add(9, 0, &[main], &values);
        assert_eq!((ring.nodes(), ring.dropped), (nodes, dropped));
        assert!(ring.memory_bound() >= 3 * SLICE_NODES * 96);
    }
}
