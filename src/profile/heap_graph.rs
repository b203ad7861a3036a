//! A heap snapshot from a walk of the objects: a type histogram (objects
//! and bytes per type, the largest first) and the shortest path from a root
//! to every object, merged by the types along it into a tree of root paths
//! (what holds the bytes: `[static Program.Cache]` ->
//! `System.Collections.Generic.List<Item>` -> `Item[]` -> `Item`).
//!
//! Pure: a walker (the sampler's `heap_snapshot.rs`, under a suspended
//! runtime) adds each object with its type, size and the addresses it
//! references, and the named roots it knows (statics); [`HeapGraph::finish`]
//! does the rest, the runtime long resumed. Memory is bounded: beyond
//! [`HeapLimits::objects`] objects and [`HeapLimits::edges`] references the
//! graph keeps no more (the histogram still counts every object), and
//! [`HeapStats`] says how many were dropped.
//!
//! Roots: the named roots first, in the order given, then objects that no
//! object of the graph references (held by a stack, a GC handle, a static
//! the walker could not name, or garbage the GC has not collected yet:
//! [`UNREFERENCED`]), then cycles that nothing else reaches
//! ([`UNREACHED_CYCLE`]). Paths are shortest (breadth first) from these;
//! runs of one type along a path (a linked list) show once, and paths are
//! cut at [`MAX_PATH`] frames.

use alloc::collections::BTreeMap;
use alloc::string::String;
use alloc::vec::Vec;

/// The root frame of objects no object of the graph references.
pub const UNREFERENCED: &str = "[not referenced by the heap]";
/// The root frame of cycles of objects that no root reaches.
pub const UNREACHED_CYCLE: &str = "[unreached cycle]";
/// The most frames of a root path (the root and the types after it).
pub const MAX_PATH: usize = 32;

/// How much of the heap a [`HeapGraph`] keeps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct HeapLimits {
    /// The most objects in the graph (default 20,000,000: 24 bytes each
    /// while walking).
    pub objects: usize,
    /// The most references in the graph (default 40,000,000: 8 bytes each
    /// while walking).
    pub edges: usize,
}

impl Default for HeapLimits {
    fn default() -> HeapLimits {
        HeapLimits {
            objects: 20_000_000,
            edges: 40_000_000,
        }
    }
}

impl HeapLimits {
    /// With the most objects and references set.
    pub fn new(objects: usize, edges: usize) -> HeapLimits {
        HeapLimits { objects, edges }
    }
}

/// What a snapshot counted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct HeapStats {
    /// Objects walked (all in the histogram).
    pub objects: u64,
    /// Their bytes.
    pub bytes: u64,
    /// Objects left out of the graph (beyond [`HeapLimits::objects`]):
    /// counted in the histogram, not in the root paths.
    pub dropped_objects: u64,
    /// References left out (beyond [`HeapLimits::edges`], or from an object
    /// left out).
    pub dropped_edges: u64,
    /// References kept in the graph.
    pub edges: u64,
    /// References to addresses that are no object of the graph (frozen
    /// objects, objects left out).
    pub outside_edges: u64,
    /// Named roots whose object was in the graph.
    pub named_roots: u64,
}

/// One type of the histogram.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TypeRow {
    /// The type's name.
    pub name: String,
    /// Its objects.
    pub objects: u64,
    /// Their bytes.
    pub bytes: u64,
}

/// The objects whose shortest root path is `frames`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PathRow {
    /// The root first (`[static X.Y]`, [`UNREFERENCED`], ...), then the
    /// types along the path, the objects' own type last.
    pub frames: Vec<String>,
    /// The objects.
    pub objects: u64,
    /// Their bytes.
    pub bytes: u64,
}

/// A finished snapshot.
#[derive(Clone, Debug, Default)]
pub struct HeapSnapshot {
    /// Every type walked, the most bytes first (then the most objects, then
    /// by name).
    pub histogram: Vec<TypeRow>,
    /// Every root path with objects at its end, the most bytes first.
    pub paths: Vec<PathRow>,
    /// What was counted and dropped.
    pub stats: HeapStats,
}

impl HeapSnapshot {
    /// The path that holds the most bytes of type `name` (the shortest root
    /// path of those instances), if any instance is in the graph.
    pub fn retention(&self, name: &str) -> Option<&PathRow> {
        self.paths
            .iter()
            .filter(|p| p.frames.last().map(String::as_str) == Some(name))
            .max_by(|a, b| a.bytes.cmp(&b.bytes).then(b.frames.cmp(&a.frames)))
    }
}

struct Object {
    address: u64,
    size: u64,
    kind: u32,
    /// Its references: `refs[first..next object's first]`.
    first: u32,
}

/// A heap being walked: objects, their references and named roots.
pub struct HeapGraph {
    limits: HeapLimits,
    objects: Vec<Object>,
    refs: Vec<u64>,
    /// Objects and bytes per type, every object counted.
    counts: Vec<(u64, u64)>,
    roots: Vec<(String, u64)>,
    stats: HeapStats,
}

impl HeapGraph {
    /// An empty graph that keeps at most `limits`.
    pub fn new(limits: HeapLimits) -> HeapGraph {
        HeapGraph {
            limits,
            objects: Vec::new(),
            refs: Vec::new(),
            counts: Vec::new(),
            roots: Vec::new(),
            stats: HeapStats::default(),
        }
    }

    /// Adds an object at `address` of type `kind` (an index the caller
    /// names in [`finish`](Self::finish)), `size` bytes, referencing
    /// `references` (null addresses ignored).
    pub fn add_object(&mut self, address: u64, kind: u32, size: u64, references: &[u64]) {
        let k = kind as usize;
        if self.counts.len() <= k {
            self.counts.resize(k + 1, (0, 0));
        }
        self.counts[k].0 += 1;
        self.counts[k].1 = self.counts[k].1.saturating_add(size);
        self.stats.objects += 1;
        self.stats.bytes = self.stats.bytes.saturating_add(size);
        let references = references.iter().filter(|&&r| r != 0);
        if self.objects.len() >= self.limits.objects || self.refs.len() > u32::MAX as usize {
            self.stats.dropped_objects += 1;
            self.stats.dropped_edges += references.count() as u64;
            return;
        }
        self.objects.push(Object {
            address,
            size,
            kind,
            first: self.refs.len() as u32,
        });
        for &reference in references {
            if self.refs.len() >= self.limits.edges || self.refs.len() >= u32::MAX as usize {
                self.stats.dropped_edges += 1;
            } else {
                self.refs.push(reference);
            }
        }
    }

    /// Adds a named root (`[static Program.Cache]`) holding the object at
    /// `address`; ignored when that is no object of the graph.
    pub fn add_root(&mut self, name: String, address: u64) {
        if address != 0 {
            self.roots.push((name, address));
        }
    }

    /// The histogram and the root paths, types named by `name` (called once
    /// per type index).
    pub fn finish(self, mut name: impl FnMut(u32) -> String) -> HeapSnapshot {
        let HeapGraph {
            objects,
            refs,
            counts,
            roots,
            mut stats,
            ..
        } = self;
        let names: Vec<String> = (0..counts.len() as u32).map(&mut name).collect();
        let mut histogram: Vec<TypeRow> = counts
            .iter()
            .zip(&names)
            .filter(|(c, _)| c.0 > 0)
            .map(|(&(objects, bytes), name)| TypeRow {
                name: name.clone(),
                objects,
                bytes,
            })
            .collect();
        histogram.sort_by(|a, b| {
            b.bytes
                .cmp(&a.bytes)
                .then(b.objects.cmp(&a.objects))
                .then(a.name.cmp(&b.name))
        });

        // Objects by address, to resolve references.
        let n = objects.len();
        let mut by_address: Vec<u32> = (0..n as u32).collect();
        by_address.sort_by_key(|&i| objects[i as usize].address);
        let find = |address: u64| -> Option<u32> {
            by_address
                .binary_search_by_key(&address, |&i| objects[i as usize].address)
                .ok()
                .map(|at| by_address[at])
        };
        let end = |i: usize| objects.get(i + 1).map_or(refs.len(), |o| o.first as usize);
        // Edges as object indices (CSR), and who is referenced at all.
        let mut targets: Vec<u32> = Vec::with_capacity(refs.len());
        let mut starts: Vec<u32> = Vec::with_capacity(n + 1);
        let mut referenced = alloc::vec![false; n];
        for (i, object) in objects.iter().enumerate() {
            starts.push(targets.len() as u32);
            for &address in &refs[object.first as usize..end(i)] {
                match find(address) {
                    Some(t) => {
                        if t as usize != i {
                            referenced[t as usize] = true;
                        }
                        targets.push(t);
                    }
                    None => stats.outside_edges += 1,
                }
            }
        }
        starts.push(targets.len() as u32);
        stats.edges = targets.len() as u64;
        drop(refs);

        // Frames: type names, then root names.
        let mut frame_names: Vec<String> = names;
        let mut root_frames: BTreeMap<String, u32> = BTreeMap::new();
        let mut root_frame = |name: &str, frame_names: &mut Vec<String>| -> u32 {
            *root_frames.entry(String::from(name)).or_insert_with(|| {
                frame_names.push(String::from(name));
                frame_names.len() as u32 - 1
            })
        };
        let mut tree = PathTree {
            nodes: Vec::new(),
            children: BTreeMap::new(),
            node_of: alloc::vec![NONE; n],
            queue: Vec::new(),
        };
        let graph = Edges {
            objects: &objects,
            targets: &targets,
            starts: &starts,
        };
        for (name, address) in &roots {
            let Some(i) = find(*address) else { continue };
            stats.named_roots += 1;
            if tree.node_of[i as usize] == NONE {
                let root = root_frame(name, &mut frame_names);
                let top = tree.child(NONE, root);
                tree.visit(&graph, i, top);
            }
        }
        tree.run(&graph);
        let unreferenced = root_frame(UNREFERENCED, &mut frame_names);
        for &i in &by_address {
            if !referenced[i as usize] && tree.node_of[i as usize] == NONE {
                let top = tree.child(NONE, unreferenced);
                tree.visit(&graph, i, top);
            }
        }
        tree.run(&graph);
        let cycle = root_frame(UNREACHED_CYCLE, &mut frame_names);
        for &i in &by_address {
            if tree.node_of[i as usize] == NONE {
                let top = tree.child(NONE, cycle);
                tree.visit(&graph, i, top);
                tree.run(&graph);
            }
        }
        let nodes = tree.nodes;

        let mut paths: Vec<PathRow> = nodes
            .iter()
            .enumerate()
            .filter(|(_, node)| node.objects > 0)
            .map(|(index, node)| {
                let (objects, bytes) = (node.objects, node.bytes);
                let mut frames = Vec::new();
                let mut at = index as u32;
                while at != NONE {
                    let node = &nodes[at as usize];
                    frames.push(frame_names[node.frame as usize].clone());
                    at = node.parent;
                }
                frames.reverse();
                PathRow {
                    frames,
                    objects,
                    bytes,
                }
            })
            .collect();
        paths.sort_by(|a, b| b.bytes.cmp(&a.bytes).then(a.frames.cmp(&b.frames)));
        HeapSnapshot {
            histogram,
            paths,
            stats,
        }
    }
}

/// No node, no object's node yet.
const NONE: u32 = u32::MAX;

/// A node of the tree of root paths.
struct PathNode {
    parent: u32,
    frame: u32,
    depth: u32,
    objects: u64,
    bytes: u64,
}

/// The graph as the breadth-first search reads it.
struct Edges<'a> {
    objects: &'a [Object],
    targets: &'a [u32],
    starts: &'a [u32],
}

/// The tree of root paths being built, breadth first.
struct PathTree {
    nodes: Vec<PathNode>,
    children: BTreeMap<(u32, u32), u32>,
    /// Each object's node (`NONE`: not reached yet).
    node_of: Vec<u32>,
    queue: Vec<u32>,
}

impl PathTree {
    /// The node for `frame` under `parent` (`NONE`: a root): `parent`
    /// itself for a run of one type, or past [`MAX_PATH`] frames.
    fn child(&mut self, parent: u32, frame: u32) -> u32 {
        let depth = match self.nodes.get(parent as usize) {
            Some(p) if p.frame == frame || p.depth as usize >= MAX_PATH => return parent,
            Some(p) => p.depth + 1,
            None => 1,
        };
        let nodes = &mut self.nodes;
        *self.children.entry((parent, frame)).or_insert_with(|| {
            nodes.push(PathNode {
                parent,
                frame,
                depth,
                objects: 0,
                bytes: 0,
            });
            nodes.len() as u32 - 1
        })
    }

    /// Object `i` reached from node `parent`: counted at its node, queued.
    fn visit(&mut self, graph: &Edges<'_>, i: u32, parent: u32) {
        let object = &graph.objects[i as usize];
        let node = self.child(parent, object.kind);
        self.node_of[i as usize] = node;
        let entry = &mut self.nodes[node as usize];
        entry.objects += 1;
        entry.bytes = entry.bytes.saturating_add(object.size);
        self.queue.push(i);
    }

    /// Breadth first from the queued objects.
    fn run(&mut self, graph: &Edges<'_>) {
        let mut head = 0;
        while head < self.queue.len() {
            let i = self.queue[head] as usize;
            head += 1;
            let parent = self.node_of[i];
            let (from, to) = (graph.starts[i] as usize, graph.starts[i + 1] as usize);
            for &t in &graph.targets[from..to] {
                if self.node_of[t as usize] == NONE {
                    self.visit(graph, t, parent);
                }
            }
        }
        self.queue.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::format;
    use alloc::string::ToString;

    fn named(kinds: &'static [&'static str]) -> impl FnMut(u32) -> String {
        move |k| kinds[k as usize].to_string()
    }

    const TYPES: &[&str] = &["List<Kept>", "Kept[]", "Kept", "Dropped", "Node"];

    /// A static list of 3 Kept objects, 2 unreferenced Dropped: the
    /// histogram's order and counts, the static's path to Kept.
    fn kept_and_dropped() -> HeapGraph {
        let mut graph = HeapGraph::new(HeapLimits::default());
        graph.add_object(0x1000, 0, 32, &[0x2000]);
        graph.add_object(0x2000, 1, 56, &[0x3000, 0x3100, 0x3200, 0]);
        for a in [0x3000, 0x3100, 0x3200] {
            graph.add_object(a, 2, 112, &[]);
        }
        graph.add_object(0x4000, 3, 112, &[]);
        graph.add_object(0x4100, 3, 112, &[]);
        graph.add_root("[static Program.kept]".to_string(), 0x1000);
        graph
    }

    #[test]
    fn the_histogram_is_by_bytes_with_exact_counts() {
        let snapshot = kept_and_dropped().finish(named(TYPES));
        let rows: Vec<(&str, u64, u64)> = snapshot
            .histogram
            .iter()
            .map(|r| (r.name.as_str(), r.objects, r.bytes))
            .collect();
        assert_eq!(
            rows,
            [
                ("Kept", 3, 336),
                ("Dropped", 2, 224),
                ("Kept[]", 1, 56),
                ("List<Kept>", 1, 32)
            ]
        );
        assert_eq!(snapshot.stats.objects, 7);
        assert_eq!(snapshot.stats.bytes, 648);
        assert_eq!(snapshot.stats.edges, 4);
        assert_eq!(snapshot.stats.named_roots, 1);
    }

    #[test]
    fn the_kept_type_is_retained_through_the_static() {
        let snapshot = kept_and_dropped().finish(named(TYPES));
        let path = snapshot.retention("Kept").unwrap();
        assert_eq!(
            path.frames,
            ["[static Program.kept]", "List<Kept>", "Kept[]", "Kept"]
        );
        assert_eq!((path.objects, path.bytes), (3, 336));
        let dropped = snapshot.retention("Dropped").unwrap();
        assert_eq!(dropped.frames, [UNREFERENCED, "Dropped"]);
        assert_eq!((dropped.objects, dropped.bytes), (2, 224));
        // Every object on exactly one path.
        let objects: u64 = snapshot.paths.iter().map(|p| p.objects).sum();
        assert_eq!(objects, 7);
        assert_eq!(snapshot.paths[0].frames.last().unwrap(), "Kept");
    }

    #[test]
    fn without_a_named_root_the_holder_is_unreferenced() {
        let mut graph = kept_and_dropped();
        graph.roots.clear();
        let snapshot = graph.finish(named(TYPES));
        let path = snapshot.retention("Kept").unwrap();
        assert_eq!(path.frames, [UNREFERENCED, "List<Kept>", "Kept[]", "Kept"]);
        assert_eq!(snapshot.stats.named_roots, 0);
    }

    #[test]
    fn the_shortest_path_wins() {
        // A -> B -> C -> D and A -> D: D's path is A, D.
        let mut graph = HeapGraph::new(HeapLimits::default());
        graph.add_object(1, 0, 1, &[2, 4]);
        graph.add_object(2, 1, 1, &[3]);
        graph.add_object(3, 2, 1, &[4]);
        graph.add_object(4, 3, 1, &[]);
        let snapshot = graph.finish(named(&["A", "B", "C", "D"]));
        assert_eq!(
            snapshot.retention("D").unwrap().frames,
            [UNREFERENCED, "A", "D"]
        );
    }

    #[test]
    fn a_linked_list_shows_its_type_once_and_a_cycle_is_a_root() {
        // Head -> 100 Nodes in a chain; a separate cycle of two Nodes.
        let mut graph = HeapGraph::new(HeapLimits::default());
        graph.add_object(1, 0, 8, &[100]);
        for i in 100..200u64 {
            let next = if i < 199 {
                alloc::vec![i + 1]
            } else {
                alloc::vec![]
            };
            graph.add_object(i, 4, 24, &next);
        }
        graph.add_object(500, 4, 24, &[501]);
        graph.add_object(501, 4, 24, &[500]);
        let snapshot = graph.finish(named(&["Head", "", "", "", "Node"]));
        let rows: Vec<(Vec<String>, u64)> = snapshot
            .paths
            .iter()
            .map(|p| (p.frames.clone(), p.objects))
            .collect();
        assert!(
            rows.contains(&(
                alloc::vec![UNREFERENCED.to_string(), "Head".into(), "Node".into()],
                100
            )),
            "{rows:?}"
        );
        assert!(
            rows.contains(&(alloc::vec![UNREACHED_CYCLE.to_string(), "Node".into()], 2)),
            "{rows:?}"
        );
    }

    #[test]
    fn paths_are_cut_at_max_path_frames() {
        // A chain of 100 distinct alternating types: no run to merge.
        let mut graph = HeapGraph::new(HeapLimits::default());
        for i in 0..100u64 {
            let next = if i < 99 {
                alloc::vec![i + 2]
            } else {
                alloc::vec![]
            };
            graph.add_object(i + 1, (i % 2) as u32, 1, &next);
        }
        let snapshot = graph.finish(|k| format!("T{k}"));
        let longest = snapshot.paths.iter().map(|p| p.frames.len()).max();
        assert_eq!(longest, Some(MAX_PATH));
        let objects: u64 = snapshot.paths.iter().map(|p| p.objects).sum();
        assert_eq!(objects, 100);
    }

    #[test]
    fn limits_drop_and_count_but_the_histogram_counts_all() {
        let mut graph = HeapGraph::new(HeapLimits::new(3, 2));
        graph.add_object(1, 0, 10, &[2, 3, 4]);
        graph.add_object(2, 0, 10, &[]);
        graph.add_object(3, 0, 10, &[]);
        graph.add_object(4, 1, 10, &[1]);
        let snapshot = graph.finish(named(&["A", "B"]));
        assert_eq!(snapshot.stats.dropped_objects, 1);
        // One reference over the limit, one from the dropped object.
        assert_eq!(snapshot.stats.dropped_edges, 2);
        assert_eq!(snapshot.stats.edges, 2);
        assert_eq!(snapshot.histogram[0].objects, 3);
        assert_eq!(snapshot.histogram[1].objects, 1);
        let in_paths: u64 = snapshot.paths.iter().map(|p| p.objects).sum();
        assert_eq!(in_paths, 3);
    }

    #[test]
    fn references_outside_the_graph_and_unknown_roots_are_counted_or_ignored() {
        let mut graph = HeapGraph::new(HeapLimits::default());
        graph.add_object(1, 0, 10, &[0xdead]);
        graph.add_root("[static X.y]".to_string(), 0xbeef);
        let snapshot = graph.finish(named(&["A"]));
        assert_eq!(snapshot.stats.outside_edges, 1);
        assert_eq!(snapshot.stats.named_roots, 0);
        assert_eq!(snapshot.paths.len(), 1);
    }
}
