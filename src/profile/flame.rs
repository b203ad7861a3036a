//! Flame-graph SVG streamed from a [`StackTree`]: one rectangle per frame,
//! as wide as its share of the total, its callees side by side on top of
//! it; frames narrower than a minimum width are left out with everything
//! above them (as `flamegraph.pl --minwidth`), so that the picture stays
//! small and readable however many stacks the tree has.

use alloc::string::String;
use alloc::vec::Vec;
use core::fmt::Write as _;
use std::io::{self, Write};

use super::folded::sorted_children;
use super::tree::{Frames, NodeId, StackTree};

/// How [`write_flame`] draws: [`Default`], then change fields
/// (`#[non_exhaustive]`: options may be added).
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct FlameOptions {
    /// The title line.
    pub title: String,
    /// The picture's width in pixels (default 1200).
    pub width_px: f64,
    /// Frames narrower than this many pixels are left out, with their
    /// callees (default 0.1, as `flamegraph.pl`).
    pub min_width_px: f64,
    /// What the widths count, for the tooltips (`"samples"`, `"us"`...).
    pub unit: String,
    /// The widths are divided by this in the tooltips (e.g. 1000 to show
    /// nanoseconds as `us`); default 1.
    pub divisor: u64,
}

impl Default for FlameOptions {
    fn default() -> FlameOptions {
        FlameOptions {
            title: String::from("Flame graph"),
            width_px: 1200.0,
            min_width_px: 0.1,
            unit: String::from("samples"),
            divisor: 1,
        }
    }
}

/// What [`write_flame`] drew and left out.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct FlameStats {
    /// Frames drawn (the `all` frame included).
    pub drawn: u64,
    /// Frames left out (narrower than the minimum, or above one that was).
    pub omitted: u64,
    /// The share of the total that the outermost omitted frames held (0.0
    /// to 1.0).
    pub omitted_share: f64,
    /// Rows drawn (the deepest drawn stack, plus the `all` row).
    pub depth: u64,
    /// Bytes written.
    pub bytes: u64,
}

/// Per-node widths for a tree whose values are *inclusive* (a call-tree
/// profiler's time spent in a call and its callees): each node is as wide
/// as its own value, and at least as wide as its children together.
pub fn inclusive_widths(tree: &StackTree, index: usize) -> Vec<u64> {
    let mut widths: Vec<u64> = (0..tree.len())
        .map(|n| tree.values(tree.find_index(n))[index])
        .collect();
    let mut children_sum = alloc::vec![0u64; tree.len()];
    // Children always come after their parent: from the last node back,
    // each node's children are settled before it.
    for n in (1..tree.len()).rev() {
        widths[n] = widths[n].max(children_sum[n]);
        let parent = tree.parent(tree.find_index(n)).map_or(0, NodeId::index);
        children_sum[parent] = children_sum[parent].saturating_add(widths[n]);
    }
    widths[0] = children_sum[0];
    widths
}

/// Per-node widths for a tree whose values are *self* values (samples,
/// bytes): each node's own value plus its descendants'.
pub fn self_widths(tree: &StackTree, index: usize) -> Vec<u64> {
    tree.inclusive(index)
}

fn escape(text: &str, out: &mut String) {
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            c if (c as u32) < 0x20 => out.push(' '),
            c => out.push(c),
        }
    }
}

const ROW: f64 = 18.0;
const TOP: f64 = 44.0;

/// Writes the flame graph of `tree`, each node as wide as `widths[node]`
/// (one entry per node, from [`inclusive_widths`] or [`self_widths`]);
/// the bottom row, `all`, is the root's width. Siblings come in name order.
///
/// Streamed without recursion: memory is bounded by the tree, not by the
/// picture; frames narrower than `options.min_width_px` are left out (and
/// counted in the returned [`FlameStats`] and in the picture's subtitle).
///
/// # Panics
/// When `widths` has not one entry per node.
pub fn write_flame<W: Write>(
    tree: &StackTree,
    frames: &Frames,
    widths: &[u64],
    options: &FlameOptions,
    mut out: W,
) -> io::Result<FlameStats> {
    assert_eq!(widths.len(), tree.len(), "one width per node");
    let total = widths[0].max(1);
    let scale = options.width_px / total as f64;
    let min = options.min_width_px;
    // Subtree sizes, for counting what is left out.
    let mut sizes = alloc::vec![1u64; tree.len()];
    for n in (1..tree.len()).rev() {
        let parent = tree.parent(tree.find_index(n)).map_or(0, NodeId::index);
        sizes[parent] += sizes[n];
    }
    // First pass: how deep the drawn frames go, and what is left out.
    let mut stats = FlameStats::default();
    let mut omitted_value = 0u64;
    let mut walk: Vec<(NodeId, u64)> = alloc::vec![(NodeId::ROOT, 0)];
    while let Some((node, level)) = walk.pop() {
        stats.drawn += 1;
        stats.depth = stats.depth.max(level + 1);
        for child in tree.children(node) {
            if widths[child.index()] as f64 * scale >= min {
                walk.push((child, level + 1));
            } else {
                stats.omitted += sizes[child.index()];
                omitted_value = omitted_value.saturating_add(widths[child.index()]);
            }
        }
    }
    stats.omitted_share = omitted_value as f64 / total as f64;
    let height = ROW * stats.depth as f64 + TOP + 8.0;
    let width = options.width_px;
    let mut text = String::new();
    let _ = write!(
        text,
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
         <svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" \
         viewBox=\"0 0 {width} {height}\" font-family=\"monospace\" font-size=\"11\">\n\
         <rect x=\"0\" y=\"0\" width=\"{width}\" height=\"{height}\" fill=\"#f8f4ec\"/>\n\
         <text x=\"{}\" y=\"18\" text-anchor=\"middle\" font-size=\"15\">",
        width / 2.0
    );
    escape(&options.title, &mut text);
    let _ = write!(
        text,
        "</text>\n<text x=\"{}\" y=\"34\" text-anchor=\"middle\" font-size=\"11\" fill=\"#555\">\
         {} frames drawn; {} narrower than {} px left out ({:.2}% of the total)</text>\n",
        width / 2.0,
        stats.drawn,
        stats.omitted,
        min,
        100.0 * stats.omitted_share
    );
    out.write_all(text.as_bytes())?;
    let mut bytes = text.len() as u64;
    // Second pass: draw, children in name order, left to right.
    let mut draw: Vec<(NodeId, f64, u64)> = alloc::vec![(NodeId::ROOT, 0.0, 0)];
    while let Some((node, x, level)) = draw.pop() {
        text.clear();
        let name = tree.frame(node).map_or("all", |f| frames.name(f));
        let value = widths[node.index()];
        let w = value as f64 * scale;
        let y = height - 8.0 - ROW * (level as f64 + 1.0);
        let hash = name.bytes().fold(2_166_136_261u32, |h, b| {
            (h ^ u32::from(b)).wrapping_mul(16_777_619)
        });
        let (r, g, b) = (
            205 + (hash % 50),
            80 + ((hash >> 8) % 120),
            40 + ((hash >> 16) % 40),
        );
        text.push_str("<g class=\"frame\"><title>");
        escape(name, &mut text);
        let _ = write!(
            text,
            " ({} {}, {:.2}%)</title><rect x=\"{x:.2}\" y=\"{y:.1}\" width=\"{w:.2}\" height=\"{:.1}\" fill=\"rgb({r},{g},{b})\" rx=\"2\"/>",
            value / options.divisor.max(1),
            options.unit,
            100.0 * value as f64 / total as f64,
            ROW - 1.0
        );
        let fits = (w / 7.0) as usize;
        if fits >= 4 {
            let label: String = if name.chars().count() > fits {
                name.chars().take(fits - 2).collect::<String>() + ".."
            } else {
                String::from(name)
            };
            let _ = write!(
                text,
                "<text x=\"{:.2}\" y=\"{:.1}\">",
                x + 3.0,
                y + ROW - 5.0
            );
            escape(&label, &mut text);
            text.push_str("</text>");
        }
        text.push_str("</g>\n");
        out.write_all(text.as_bytes())?;
        bytes += text.len() as u64;
        let mut child_x = x;
        let mut children: Vec<(NodeId, f64, u64)> = Vec::new();
        for child in sorted_children(tree, frames, node) {
            let cw = widths[child.index()] as f64 * scale;
            if cw >= min {
                children.push((child, child_x, level + 1));
            }
            child_x += cw;
        }
        draw.extend(children.into_iter().rev());
    }
    out.write_all(b"</svg>\n")?;
    out.flush()?;
    stats.bytes = bytes + 7;
    Ok(stats)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree() -> (StackTree, Frames) {
        let mut frames = Frames::new();
        let (main, hot, warm, tiny) = (
            frames.intern("Main"),
            frames.intern("Hot<&>"),
            frames.intern("Warm"),
            frames.intern("Tiny"),
        );
        let mut tree = StackTree::new(1);
        tree.add([main, hot], &[7_500]);
        tree.add([main, warm], &[2_499]);
        tree.add([main, warm, tiny], &[1]);
        (tree, frames)
    }

    #[test]
    fn widths_of_self_and_inclusive_values() {
        let (tree, frames) = tree();
        let w = self_widths(&tree, 0);
        assert_eq!(w[0], 10_000);
        let main = tree.find([frames.iter().next().unwrap().0]).unwrap();
        assert_eq!(w[main.index()], 10_000);
        // Inclusive: a node is max(own, children); Main has no own value.
        let inc = inclusive_widths(&tree, 0);
        assert_eq!(inc[main.index()], 7_500 + 2_499);
        assert_eq!(inc[0], 7_500 + 2_499);
    }

    #[test]
    fn narrow_frames_are_left_out_and_counted() {
        let (tree, frames) = tree();
        let widths = self_widths(&tree, 0);
        let mut out = Vec::new();
        let options = FlameOptions::default();
        // Tiny is 1 of 10,000: 0.12 px of 1200 (drawn at 0.1 px minimum).
        let stats = write_flame(&tree, &frames, &widths, &options, &mut out).unwrap();
        assert_eq!((stats.drawn, stats.omitted, stats.depth), (5, 0, 4));
        let svg = String::from_utf8(out).unwrap();
        assert!(
            svg.contains("<title>Hot&lt;&amp;&gt; (7500 samples, 75.00%)</title>"),
            "{svg}"
        );
        assert_eq!(svg.matches("<rect").count(), 1 + 5);
        assert_eq!(stats.bytes, svg.len() as u64);
        // At a 1 px minimum, Tiny goes.
        let mut out = Vec::new();
        let options = FlameOptions {
            min_width_px: 1.0,
            ..FlameOptions::default()
        };
        let stats = write_flame(&tree, &frames, &widths, &options, &mut out).unwrap();
        assert_eq!((stats.drawn, stats.omitted, stats.depth), (4, 1, 3));
        assert!((stats.omitted_share - 0.0001).abs() < 1e-12);
        let svg = String::from_utf8(out).unwrap();
        assert!(!svg.contains("Tiny"));
        assert!(svg.contains("4 frames drawn; 1 narrower than 1 px left out (0.01% of the total)"));
        // Siblings in name order: Hot at 0, Warm after its 900 px.
        let x_of = |name: &str| {
            let at = svg.find(&alloc::format!("<title>{name}")).unwrap();
            let rect = &svg[at..];
            let x = rect.find("x=\"").unwrap() + 3;
            rect[x..x + rect[x..].find('"').unwrap()]
                .parse::<f64>()
                .unwrap()
        };
        assert_eq!(x_of("Hot&lt;&amp;&gt;"), 0.0);
        assert!((x_of("Warm") - 900.0).abs() < 0.01);
    }
}
