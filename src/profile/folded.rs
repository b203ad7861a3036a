//! Folded stacks (Brendan Gregg's `stackcollapse` output, which
//! `flamegraph.pl`, speedscope, inferno and Pyroscope read): one line per
//! stack, `Outer;Middle;Inner N`, streamed from a [`StackTree`].

use alloc::string::String;
use alloc::vec::Vec;
use core::fmt::Write as _;
use std::io::{self, Write};

use super::tree::{Frames, NodeId, StackTree};

/// What [`write_folded`] wrote.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FoldedStats {
    /// Lines (stacks with a non-zero number).
    pub lines: u64,
    /// Bytes.
    pub bytes: u64,
}

/// Appends a frame name as folded stacks allow it: `;` separates frames
/// and a line ends the stack, so `;` becomes `:` and line breaks become
/// spaces.
pub(crate) fn push_frame_name(path: &mut String, name: &str) {
    path.extend(name.chars().map(|c| match c {
        ';' => ':',
        '\n' | '\r' => ' ',
        c => c,
    }));
}

/// The children of `node`, by frame name.
pub(crate) fn sorted_children(tree: &StackTree, frames: &Frames, node: NodeId) -> Vec<NodeId> {
    let mut children: Vec<NodeId> = tree.children(node).collect();
    children.sort_by(|a, b| {
        let name = |n: &NodeId| tree.frame(*n).map(|f| frames.name(f));
        name(a).cmp(&name(b))
    });
    children
}

/// Writes one line per node of `tree` for which `number` (given the node's
/// self values) is not zero: its stack, outermost frame first, and that
/// number. Siblings come in name order, so equal trees give equal files.
///
/// Streamed: only the current stack is held (memory bounded by the tree's
/// depth and fan-out, never by the text), without recursion (any depth).
/// Pass a buffered writer.
///
/// ```
/// use corprof::profile::{write_folded, Frames, StackTree};
/// let mut frames = Frames::new();
/// let (main, hot) = (frames.intern("Main"), frames.intern("Hot"));
/// let mut tree = StackTree::new(1);
/// tree.add([main, hot], &[3]);
/// tree.add([main], &[1]);
/// let mut out = Vec::new();
/// write_folded(&tree, &frames, |v| v[0], &mut out).unwrap();
/// assert_eq!(String::from_utf8(out).unwrap(), "Main 1\nMain;Hot 3\n");
/// ```
pub fn write_folded<W: Write>(
    tree: &StackTree,
    frames: &Frames,
    mut number: impl FnMut(&[u64]) -> u64,
    mut out: W,
) -> io::Result<FoldedStats> {
    let mut stats = FoldedStats::default();
    let mut path = String::new();
    // (children left to visit, in reverse name order; path length before
    // this level's frame).
    let mut stack: Vec<(Vec<NodeId>, usize)> = Vec::new();
    let mut root_children = sorted_children(tree, frames, NodeId::ROOT);
    root_children.reverse();
    stack.push((root_children, 0));
    let mut line = String::new();
    while let Some((pending, base)) = stack.last_mut() {
        let Some(node) = pending.pop() else {
            stack.pop();
            continue;
        };
        let base = *base;
        path.truncate(base);
        if base > 0 {
            path.push(';');
        }
        if let Some(frame) = tree.frame(node) {
            push_frame_name(&mut path, frames.name(frame));
        }
        let n = number(tree.values(node));
        if n != 0 {
            line.clear();
            line.push_str(&path);
            line.push(' ');
            let _ = write!(line, "{n}");
            line.push('\n');
            out.write_all(line.as_bytes())?;
            stats.lines += 1;
            stats.bytes += line.len() as u64;
        }
        let mut children = sorted_children(tree, frames, node);
        if !children.is_empty() {
            children.reverse();
            let len = path.len();
            stack.push((children, len));
        }
    }
    out.flush()?;
    Ok(stats)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_in_name_order_zeros_left_out_names_escaped() {
        let mut frames = Frames::new();
        let (main, b, a, odd) = (
            frames.intern("Main"),
            frames.intern("B"),
            frames.intern("A"),
            frames.intern("X;Y\nZ"),
        );
        let mut tree = StackTree::new(2);
        tree.add([main, b], &[2, 20]);
        tree.add([main, a], &[1, 10]);
        tree.add([main, a, odd], &[0, 5]);
        let mut out = Vec::new();
        let stats = write_folded(&tree, &frames, |v| v[0], &mut out).unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), "Main;A 1\nMain;B 2\n");
        assert_eq!(
            stats,
            FoldedStats {
                lines: 2,
                bytes: 18
            }
        );
        let mut out = Vec::new();
        write_folded(&tree, &frames, |v| v[1] / 5, &mut out).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "Main;A 2\nMain;A;X:Y Z 1\nMain;B 4\n"
        );
    }

    #[test]
    fn a_hundred_thousand_frames_deep() {
        let mut frames = Frames::new();
        let f = frames.intern("f");
        let mut tree = StackTree::new(1);
        let leaf = tree.add(core::iter::repeat_n(f, 100_000), &[1]);
        assert_eq!(tree.stack(leaf).len(), 100_000);
        let mut out = Vec::new();
        let stats = write_folded(&tree, &frames, |v| v[0], &mut out).unwrap();
        assert_eq!(stats.lines, 1);
        assert_eq!(out.len(), 100_000 * 2 - 1 + 3);
    }
}
