//! speedscope's JSON format (`https://www.speedscope.app/file-format-schema.json`):
//! a shared frame table and "sampled" profiles, each a list of stacks
//! (frame indexes, outermost first) with a weight each. speedscope opens
//! it (drag the file in, or `speedscope FILE` from npm's `speedscope`).

use alloc::string::String;
use alloc::vec::Vec;
use core::fmt::Write as _;
use std::io::{self, Write};

use super::tree::{Frames, NodeId, StackTree};

/// One profile of a speedscope file: the samples of one value of a tree.
#[derive(Clone, Copy, Debug)]
pub struct SpeedscopeProfile<'a> {
    /// Its name in speedscope's profile list (e.g. `cpu Worker 1`).
    pub name: &'a str,
    /// The stacks.
    pub tree: &'a StackTree,
    /// Which of the tree's values weighs each stack (its self value).
    pub value: usize,
    /// The weights' unit: one of speedscope's `none`, `nanoseconds`,
    /// `microseconds`, `milliseconds`, `seconds`, `bytes` (anything else is
    /// written as `none`).
    pub unit: &'a str,
}

/// Writes `text` as a JSON string.
fn json_string(text: &str, out: &mut String) {
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

const UNITS: [&str; 6] = [
    "none",
    "nanoseconds",
    "microseconds",
    "milliseconds",
    "seconds",
    "bytes",
];

/// Writes a speedscope file named `name` holding `profiles` (whose trees
/// take their frame names from `frames`). Each node with a non-zero self
/// value is one sample; profiles without any are left out. The frame
/// table is `frames` whole, in order (a frame's index is its
/// `FrameId::index`). Streamed: one stack at a time.
///
/// # Panics
/// When a profile's `value` is not below its tree's width.
pub fn write_speedscope<W: Write>(
    name: &str,
    frames: &Frames,
    profiles: &[SpeedscopeProfile<'_>],
    mut out: W,
) -> io::Result<()> {
    let mut text = String::from(
        "{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\",\"shared\":{\"frames\":[",
    );
    for (id, frame) in frames.iter() {
        if id.index() > 0 {
            text.push(',');
        }
        text.push_str("{\"name\":");
        json_string(frame, &mut text);
        text.push('}');
        if text.len() > 1 << 16 {
            out.write_all(text.as_bytes())?;
            text.clear();
        }
    }
    text.push_str("]},\"profiles\":[");
    let mut first = true;
    for profile in profiles {
        assert!(profile.value < profile.tree.width(), "no such value");
        let tree = profile.tree;
        let total: u64 = tree.inclusive(profile.value)[0];
        if total == 0 {
            continue;
        }
        if !first {
            text.push(',');
        }
        first = false;
        let unit = if UNITS.contains(&profile.unit) {
            profile.unit
        } else {
            "none"
        };
        text.push_str("{\"type\":\"sampled\",\"name\":");
        json_string(profile.name, &mut text);
        let _ = write!(
            text,
            ",\"unit\":\"{unit}\",\"startValue\":0,\"endValue\":{total},\"samples\":["
        );
        let mut weights: Vec<u64> = Vec::new();
        let mut stack = Vec::new();
        for index in 1..tree.len() {
            let node = tree.find_index(index);
            let weight = tree.values(node)[profile.value];
            if weight == 0 {
                continue;
            }
            if !weights.is_empty() {
                text.push(',');
            }
            weights.push(weight);
            stack.clear();
            let mut at: Option<NodeId> = Some(node);
            while let Some(n) = at {
                stack.extend(tree.frame(n));
                at = tree.parent(n);
            }
            text.push('[');
            for (i, frame) in stack.iter().rev().enumerate() {
                if i > 0 {
                    text.push(',');
                }
                let _ = write!(text, "{}", frame.index());
            }
            text.push(']');
            if text.len() > 1 << 16 {
                out.write_all(text.as_bytes())?;
                text.clear();
            }
        }
        text.push_str("],\"weights\":[");
        for (i, weight) in weights.iter().enumerate() {
            if i > 0 {
                text.push(',');
            }
            let _ = write!(text, "{weight}");
        }
        text.push_str("]}");
    }
    text.push_str("],\"name\":");
    json_string(name, &mut text);
    text.push_str(",\"activeProfileIndex\":0,\"exporter\":\"corprof\"}\n");
    out.write_all(text.as_bytes())?;
    out.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_weights_and_escapes() {
        let mut frames = Frames::new();
        let (main, odd) = (frames.intern("Main"), frames.intern("a\"b\\c\u{1}"));
        let mut tree = StackTree::new(2);
        tree.add([main, odd], &[5, 0]);
        tree.add([main], &[2, 0]);
        let mut out = Vec::new();
        let profiles = [
            SpeedscopeProfile {
                name: "cpu",
                tree: &tree,
                value: 0,
                unit: "nanoseconds",
            },
            SpeedscopeProfile {
                name: "empty",
                tree: &tree,
                value: 1,
                unit: "bytes",
            },
        ];
        write_speedscope("t", &frames, &profiles, &mut out).unwrap();
        let json = String::from_utf8(out).unwrap();
        assert_eq!(
            json,
            "{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\",\
             \"shared\":{\"frames\":[{\"name\":\"Main\"},{\"name\":\"a\\\"b\\\\c\\u0001\"}]},\
             \"profiles\":[{\"type\":\"sampled\",\"name\":\"cpu\",\"unit\":\"nanoseconds\",\
             \"startValue\":0,\"endValue\":7,\"samples\":[[0],[0,1]],\"weights\":[2,5]}],\
             \"name\":\"t\",\"activeProfileIndex\":0,\"exporter\":\"corprof\"}\n"
        );
    }
}
