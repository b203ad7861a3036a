//! Writing a [`Profile`] in every format `corprof::profile` has.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use std::fs::File;
use std::io::{self, BufWriter};
use std::path::Path;
use std::time::UNIX_EPOCH;

use super::memory::{GC_THREAD, LIVE_HEAP_THREAD};
use super::options::{
    ALLOC_BYTES, CPU, EXCEPTIONS, INUSE_OBJECTS, INUSE_SPACE, SAMPLE_TYPES, WALL,
};
use super::state::{Profile, ThreadProfile};
use crate::profile::{
    self_widths, write_flame, write_folded, write_speedscope, FlameOptions, FlameStats, NodeId,
    Pprof, SpeedscopeProfile, StackTree,
};

/// What [`write_outputs`] wrote.
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct Written {
    /// pprof samples (a stack of a thread with any non-zero value).
    pub pprof_samples: usize,
    /// Size of `profile.pb.gz`.
    pub pprof_bytes: usize,
    /// What the flame graph drew and left out.
    pub flame: FlameStats,
}

impl Profile {
    /// The profile in pprof: sample types `cpu` and `wall` (nanoseconds),
    /// `alloc_objects` (count), `alloc_space` (bytes) and `exception`
    /// (count), a `thread` label per sample and an `exception_type` label
    /// (the leaf frame) per exception sample, the period in CPU
    /// nanoseconds, `cpu` the default type.
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
            // Exceptions apart: each stack with its type as a label.
            pprof.add_tree_by(&thread.tree, &self.frames, &labels, |node, values| {
                values.extend(node.iter().map(|&v| v.min(i64::MAX as u64) as i64));
                values[EXCEPTIONS] = 0;
            });
            let tree = &thread.tree;
            for index in 1..tree.len() {
                let node = tree.find_index(index);
                let count = tree.values(node)[EXCEPTIONS];
                if count == 0 {
                    continue;
                }
                let stack = self.leaf_first(tree, node);
                let mut values = alloc::vec![0i64; SAMPLE_TYPES.len()];
                values[EXCEPTIONS] = count.min(i64::MAX as u64) as i64;
                let labels = [
                    ("thread", thread.name.as_str()),
                    ("exception_type", stack[0]),
                ];
                pprof.add_sample(&stack, &values, &labels);
            }
        }
        pprof
    }
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

/// Whether a thread of a profile is one of the sampler's synthetic ones:
/// [`GC_THREAD`], or a [`LIVE_HEAP_THREAD`] of an age.
fn is_synthetic(name: &str) -> bool {
    name == GC_THREAD || name.starts_with(LIVE_HEAP_THREAD)
}

fn create(dir: &Path, name: &str) -> io::Result<BufWriter<File>> {
    Ok(BufWriter::new(File::create(dir.join(name))?))
}

/// Writes `profile` into `dir` (which must exist): `profile.pb.gz`
/// (pprof), `speedscope.json` (a CPU, a wall and an allocation profile
/// per thread, those with samples; not the synthetic GC and live-heap
/// threads, whose values are pprof's alone), `cpu.folded` and `wall.folded`
/// (nanoseconds), `alloc.folded` (estimated bytes), every thread merged,
/// and `flame.svg` (CPU time, frames narrower than 0.1 px left out).
pub fn write_outputs(profile: &Profile, dir: &Path) -> io::Result<Written> {
    let mut written = Written::default();
    let pprof = profile.to_pprof();
    written.pprof_samples = pprof.sample_count();
    let bytes = pprof.encode_gzip();
    written.pprof_bytes = bytes.len();
    std::fs::write(dir.join("profile.pb.gz"), bytes)?;

    let names: Vec<[String; 3]> = profile
        .threads
        .iter()
        .map(|t| {
            [
                format!("cpu {}", t.name),
                format!("wall {}", t.name),
                format!("alloc {}", t.name),
            ]
        })
        .collect();
    // Per kind, the busiest thread first: speedscope opens the first.
    let mut profiles = Vec::new();
    for (kind, (value, unit)) in [
        (CPU, "nanoseconds"),
        (WALL, "nanoseconds"),
        (ALLOC_BYTES, "bytes"),
    ]
    .into_iter()
    .enumerate()
    {
        // The synthetic threads (GC pauses, live heap) hold none of these.
        let mut threads: Vec<(u64, usize)> = profile
            .threads
            .iter()
            .enumerate()
            .filter(|(_, t)| !is_synthetic(&t.name))
            .map(|(i, t)| (t.tree.inclusive(value)[0], i))
            .collect();
        threads.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        for (_, i) in threads {
            profiles.push(SpeedscopeProfile {
                name: &names[i][kind],
                tree: &profile.threads[i].tree,
                value,
                unit,
            });
        }
    }
    write_speedscope(
        "corprof sampler",
        &profile.frames,
        &profiles,
        create(dir, "speedscope.json")?,
    )?;

    let merged = profile.merged();
    for (name, value) in [
        ("cpu.folded", CPU),
        ("wall.folded", WALL),
        ("alloc.folded", ALLOC_BYTES),
    ] {
        write_folded(&merged, &profile.frames, |v| v[value], create(dir, name)?)?;
    }
    let options = FlameOptions {
        title: String::from("CPU time (corprof sampler)"),
        unit: String::from("ms"),
        divisor: 1_000_000,
        ..FlameOptions::default()
    };
    written.flame = write_flame(
        &merged,
        &profile.frames,
        &self_widths(&merged, CPU),
        &options,
        create(dir, "flame.svg")?,
    )?;
    Ok(written)
}
