//! Writing a [`Profile`] in every format `corprof::profile` has.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use std::fs::File;
use std::io::{self, BufWriter};
use std::path::Path;

use super::memory::{GC_THREAD, LIVE_HEAP_THREAD};
use super::options::{ALLOC_BYTES, CPU, WAIT, WALL};
use super::state::Profile;
use crate::profile::{
    self_widths, write_flame, write_folded, write_speedscope, FlameOptions, FlameStats,
    SpeedscopeProfile,
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
/// per thread, those with samples, and a wait profile per thread that
/// waited; not the synthetic GC and live-heap threads, whose values are
/// pprof's alone), `cpu.folded`, `wall.folded` and `wait.folded`
/// (nanoseconds), `alloc.folded` (estimated bytes), every thread merged,
/// and `flame.svg` (CPU time, frames narrower than 0.1 px left out).
pub fn write_outputs(profile: &Profile, dir: &Path) -> io::Result<Written> {
    let mut written = Written::default();
    let pprof = profile.to_pprof();
    written.pprof_samples = pprof.sample_count();
    let bytes = pprof.encode_gzip();
    written.pprof_bytes = bytes.len();
    std::fs::write(dir.join("profile.pb.gz"), bytes)?;

    let names: Vec<[String; 4]> = profile
        .threads
        .iter()
        .map(|t| {
            [
                format!("cpu {}", t.name),
                format!("wall {}", t.name),
                format!("alloc {}", t.name),
                format!("wait {}", t.name),
            ]
        })
        .collect();
    // Per kind, the busiest thread first: speedscope opens the first.
    let mut profiles = Vec::new();
    for (kind, (value, unit)) in [
        (CPU, "nanoseconds"),
        (WALL, "nanoseconds"),
        (ALLOC_BYTES, "bytes"),
        (WAIT, "nanoseconds"),
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
            // Waits only for the threads that have any (.NET 9 and later).
            .filter(|&(total, _)| value != WAIT || total > 0)
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
        ("wait.folded", WAIT),
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
