//! The stack trie every writer reads: each distinct stack once, frames
//! interned once, a fixed number of `u64` values per node.

use alloc::string::String;
use alloc::vec::Vec;
use std::collections::HashMap;

/// A frame's name, interned in a [`Frames`] table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FrameId(u32);

impl FrameId {
    /// The frame's index in its table (0, 1, 2, ... in the order interned).
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// Frame names, each stored once.
#[derive(Clone, Debug, Default)]
pub struct Frames {
    names: Vec<String>,
    index: HashMap<String, FrameId>,
}

impl Frames {
    /// An empty table.
    pub fn new() -> Frames {
        Frames::default()
    }

    /// The id of `name`, adding it when new.
    pub fn intern(&mut self, name: &str) -> FrameId {
        if let Some(&id) = self.index.get(name) {
            return id;
        }
        let id = FrameId(u32::try_from(self.names.len()).expect("fewer than 2^32 frame names"));
        self.names.push(String::from(name));
        self.index.insert(String::from(name), id);
        id
    }

    /// The name of `id`.
    ///
    /// # Panics
    /// When `id` comes from another table with more names.
    pub fn name(&self, id: FrameId) -> &str {
        &self.names[id.index()]
    }

    /// How many names the table holds.
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// Whether the table is empty.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// Every name with its id, in the order interned.
    pub fn iter(&self) -> impl Iterator<Item = (FrameId, &str)> + '_ {
        self.names
            .iter()
            .enumerate()
            .map(|(i, name)| (FrameId(i as u32), name.as_str()))
    }
}

/// A node of a [`StackTree`]: the stack from the root to it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NodeId(u32);

impl NodeId {
    /// The root: the empty stack, above every outermost frame.
    pub const ROOT: NodeId = NodeId(0);

    /// The node's index (0 for the root; nodes are numbered as added).
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

const NONE: u32 = u32::MAX;

#[derive(Clone, Debug)]
struct Node {
    frame: u32,
    parent: u32,
    first_child: u32,
    next_sibling: u32,
}

/// Stacks as a trie, outermost frame first: a node per distinct stack
/// prefix, each with `width` values of its own (its *self* values: what
/// ended at exactly that stack, as a sample's weights or a call's count).
///
/// Memory is a node per distinct stack (about 40 bytes with its lookup
/// entry, plus 8 per value), never a string per path: writers stream the
/// paths from it.
#[derive(Clone, Debug)]
pub struct StackTree {
    nodes: Vec<Node>,
    values: Vec<u64>,
    width: usize,
    lookup: HashMap<(u32, u32), u32>,
}

impl StackTree {
    /// An empty tree (only the root) with `width` values per node.
    pub fn new(width: usize) -> StackTree {
        StackTree {
            nodes: alloc::vec![Node {
                frame: NONE,
                parent: NONE,
                first_child: NONE,
                next_sibling: NONE,
            }],
            values: alloc::vec![0; width],
            width,
            lookup: HashMap::new(),
        }
    }

    /// How many values each node has.
    pub fn width(&self) -> usize {
        self.width
    }

    /// How many nodes the tree has, the root included.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Whether the tree has only its root.
    pub fn is_empty(&self) -> bool {
        self.nodes.len() == 1
    }

    /// The child of `parent` for `frame`, added when new.
    pub fn child(&mut self, parent: NodeId, frame: FrameId) -> NodeId {
        if let Some(&node) = self.lookup.get(&(parent.0, frame.0)) {
            return NodeId(node);
        }
        let id = u32::try_from(self.nodes.len())
            .ok()
            .filter(|&id| id != NONE)
            .expect("fewer than 2^32 - 1 stack tree nodes");
        let first = self.nodes[parent.index()].first_child;
        self.nodes.push(Node {
            frame: frame.0,
            parent: parent.0,
            first_child: NONE,
            next_sibling: first,
        });
        self.nodes[parent.index()].first_child = id;
        self.values.extend(core::iter::repeat_n(0, self.width));
        self.lookup.insert((parent.0, frame.0), id);
        NodeId(id)
    }

    /// The node numbered `index` (0 for the root, then in the order added).
    ///
    /// # Panics
    /// When `index` is not below [`len`](Self::len).
    pub fn find_index(&self, index: usize) -> NodeId {
        assert!(index < self.nodes.len(), "no node {index}");
        NodeId(index as u32)
    }

    /// The node of `stack` (outermost frame first), when the tree has it.
    pub fn find<I: IntoIterator<Item = FrameId>>(&self, stack: I) -> Option<NodeId> {
        stack.into_iter().try_fold(NodeId::ROOT, |node, frame| {
            self.lookup.get(&(node.0, frame.0)).map(|&n| NodeId(n))
        })
    }

    /// The node of `stack` (outermost frame first), added when new.
    pub fn node<I: IntoIterator<Item = FrameId>>(&mut self, stack: I) -> NodeId {
        stack
            .into_iter()
            .fold(NodeId::ROOT, |node, frame| self.child(node, frame))
    }

    /// Adds `values` to the self values of the node of `stack` (outermost
    /// frame first) and returns that node.
    ///
    /// # Panics
    /// When `values` is longer than the tree's width.
    pub fn add<I: IntoIterator<Item = FrameId>>(&mut self, stack: I, values: &[u64]) -> NodeId {
        let node = self.node(stack);
        self.add_to(node, values);
        node
    }

    /// Adds `values` to `node`'s self values (saturating).
    ///
    /// # Panics
    /// When `values` is longer than the tree's width.
    pub fn add_to(&mut self, node: NodeId, values: &[u64]) {
        assert!(
            values.len() <= self.width,
            "more values than the tree's width"
        );
        let start = node.index() * self.width;
        for (slot, value) in self.values[start..start + values.len()]
            .iter_mut()
            .zip(values)
        {
            *slot = slot.saturating_add(*value);
        }
    }

    /// `node`'s self values.
    pub fn values(&self, node: NodeId) -> &[u64] {
        let start = node.index() * self.width;
        &self.values[start..start + self.width]
    }

    /// `node`'s frame (`None` for the root).
    pub fn frame(&self, node: NodeId) -> Option<FrameId> {
        let frame = self.nodes[node.index()].frame;
        (frame != NONE).then_some(FrameId(frame))
    }

    /// `node`'s parent (`None` for the root).
    pub fn parent(&self, node: NodeId) -> Option<NodeId> {
        let parent = self.nodes[node.index()].parent;
        (parent != NONE).then_some(NodeId(parent))
    }

    /// `node`'s children, most recently added first.
    pub fn children(&self, node: NodeId) -> Children<'_> {
        Children {
            tree: self,
            next: self.nodes[node.index()].first_child,
        }
    }

    /// The frames from the root to `node`, outermost first.
    pub fn stack(&self, node: NodeId) -> Vec<FrameId> {
        let mut frames = Vec::new();
        let mut at = Some(node);
        while let Some(node) = at {
            frames.extend(self.frame(node));
            at = self.parent(node);
        }
        frames.reverse();
        frames
    }

    /// Every node's inclusive value `index`: its own plus its descendants'.
    ///
    /// Children are always added after their parent, so one pass from the
    /// last node back sums them.
    pub fn inclusive(&self, index: usize) -> Vec<u64> {
        let mut sums: Vec<u64> = (0..self.nodes.len())
            .map(|n| self.values[n * self.width + index])
            .collect();
        for n in (1..self.nodes.len()).rev() {
            let parent = self.nodes[n].parent as usize;
            sums[parent] = sums[parent].saturating_add(sums[n]);
        }
        sums
    }

    /// Adds every stack of `other` (whose frames come from `other_frames`)
    /// with its values into this tree, interning names into `frames`.
    ///
    /// # Panics
    /// When the trees' widths differ.
    pub fn merge(&mut self, frames: &mut Frames, other: &StackTree, other_frames: &Frames) {
        assert_eq!(self.width, other.width, "merging trees of different widths");
        let mut map: Vec<NodeId> = Vec::with_capacity(other.len());
        map.push(NodeId::ROOT);
        let mut ids: HashMap<u32, FrameId> = HashMap::new();
        for n in 1..other.nodes.len() {
            let node = &other.nodes[n];
            let frame = *ids
                .entry(node.frame)
                .or_insert_with(|| frames.intern(other_frames.name(FrameId(node.frame))));
            let mine = self.child(map[node.parent as usize], frame);
            map.push(mine);
            self.add_to(mine, other.values(NodeId(n as u32)));
        }
        self.add_to(NodeId::ROOT, other.values(NodeId::ROOT));
    }

    /// Adds every stack of `other`, whose frames come from the same frame
    /// table as this tree's, with its values into this tree (what
    /// [`merge`](StackTree::merge) does without renaming frames).
    ///
    /// # Panics
    /// When the trees' widths differ.
    pub fn absorb(&mut self, other: &StackTree) {
        assert_eq!(self.width, other.width, "merging trees of different widths");
        let mut map: Vec<NodeId> = Vec::with_capacity(other.len());
        map.push(NodeId::ROOT);
        for n in 1..other.nodes.len() {
            let node = &other.nodes[n];
            // A node comes after its parent: its parent is mapped already.
            let mine = self.child(map[node.parent as usize], FrameId(node.frame));
            map.push(mine);
            self.add_to(mine, other.values(NodeId(n as u32)));
        }
        self.add_to(NodeId::ROOT, other.values(NodeId::ROOT));
    }
}

/// The children of a [`StackTree`] node.
#[derive(Clone, Debug)]
pub struct Children<'t> {
    tree: &'t StackTree,
    next: u32,
}

impl Iterator for Children<'_> {
    type Item = NodeId;

    fn next(&mut self) -> Option<NodeId> {
        if self.next == NONE {
            return None;
        }
        let node = NodeId(self.next);
        self.next = self.tree.nodes[self.next as usize].next_sibling;
        Some(node)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn absorb_adds_a_tree_of_the_same_frames() {
        let mut frames = Frames::new();
        let (main, a, b) = (
            frames.intern("Main"),
            frames.intern("A"),
            frames.intern("B"),
        );
        let mut mine = StackTree::new(2);
        mine.add([main, a], &[1, 10]);
        let mut other = StackTree::new(2);
        other.add([main, a], &[2, 20]);
        other.add([main, b, a], &[3, 30]);
        other.add_to(NodeId::ROOT, &[0, 7]);
        mine.absorb(&other);
        let ma = mine.find([main, a]).unwrap();
        assert_eq!(mine.values(ma), [3, 30]);
        let mba = mine.find([main, b, a]).unwrap();
        assert_eq!(mine.values(mba), [3, 30]);
        assert_eq!(mine.values(NodeId::ROOT), [0, 7]);
        assert_eq!(mine.len(), 5);
        // The same as merging over one frame table.
        let mut merged = StackTree::new(2);
        let mut again = frames.clone();
        merged.add([main, a], &[1, 10]);
        merged.merge(&mut again, &other, &frames);
        assert_eq!(again.len(), frames.len());
        assert_eq!(merged.inclusive(0), mine.inclusive(0));
        assert_eq!(merged.inclusive(1), mine.inclusive(1));
    }

    #[test]
    fn equal_stacks_share_a_node_and_sum_their_values() {
        let mut frames = Frames::new();
        let (main, a, b) = (
            frames.intern("Main"),
            frames.intern("A"),
            frames.intern("B"),
        );
        assert_eq!(frames.intern("A"), a);
        let mut tree = StackTree::new(2);
        let ab = tree.add([main, a, b], &[1, 10]);
        assert_eq!(tree.add([main, a, b], &[2, 20]), ab);
        let ma = tree.add([main, a], &[0, 5]);
        tree.add([main, b], &[4]);
        assert_eq!(tree.len(), 5);
        assert_eq!(tree.values(ab), [3, 30]);
        assert_eq!(tree.stack(ab), [main, a, b]);
        assert_eq!(tree.parent(ab), Some(ma));
        assert_eq!(tree.frame(NodeId::ROOT), None);
        let main_node = tree.parent(ma).unwrap();
        let mut children: Vec<_> = tree
            .children(main_node)
            .map(|c| frames.name(tree.frame(c).unwrap()))
            .collect();
        children.sort_unstable();
        assert_eq!(children, ["A", "B"]);
        let inclusive = tree.inclusive(1);
        assert_eq!(inclusive[NodeId::ROOT.index()], 35);
        assert_eq!(inclusive[ma.index()], 35);
        assert_eq!(tree.inclusive(0)[main_node.index()], 7);
    }

    #[test]
    fn merging_maps_frames_by_name() {
        let mut left_frames = Frames::new();
        let mut left = StackTree::new(1);
        let x = left_frames.intern("X");
        left.add([x], &[1]);
        let mut right_frames = Frames::new();
        let mut right = StackTree::new(1);
        let (y, x2) = (right_frames.intern("Y"), right_frames.intern("X"));
        right.add([x2, y], &[2]);
        right.add([x2], &[3]);
        left.merge(&mut left_frames, &right, &right_frames);
        assert_eq!(left.len(), 3);
        let y_left = left_frames.intern("Y");
        assert_eq!(left.values(left.find([x]).unwrap()), [4]);
        assert_eq!(left.values(left.find([x, y_left]).unwrap()), [2]);
        assert_eq!(left.find([y_left]), None);
    }

    #[test]
    #[should_panic(expected = "more values than the tree's width")]
    fn too_many_values_panic() {
        StackTree::new(1).add_to(NodeId::ROOT, &[1, 2]);
    }
}
