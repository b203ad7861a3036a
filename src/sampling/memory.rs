//! The memory parts in a [`Profile`](super::Profile): the GC pauses
//! (`gc_pauses.rs`) and the live heap (`live_heap.rs`) as synthetic
//! threads of a period's or a run's profile. The one file that knows both
//! the parts and the sampler's profile; the parts know neither.

use alloc::collections::BTreeMap;
use alloc::string::String;
use alloc::vec::Vec;

use super::gc_pauses::{pause_frame, GcKind, PauseTotal};
use super::live_heap::{age_bucket_label, by_age, LiveObject};
use super::options::{GC_PAUSE, INUSE_OBJECTS, INUSE_SPACE, SAMPLE_TYPES};
use super::state::ThreadProfile;
use crate::profile::{FrameId, Frames, StackTree};

/// The GC pauses of a period or run as a thread `GC` of their own: one
/// synthetic frame `[GC gen N reason]` per kind, its time in [`GC_PAUSE`]
/// (`None` when there was no pause).
pub(super) fn gc_thread(
    frames: &mut Frames,
    pauses: &BTreeMap<GcKind, PauseTotal>,
) -> Option<ThreadProfile> {
    if pauses.is_empty() {
        return None;
    }
    let mut tree = StackTree::new(SAMPLE_TYPES.len());
    for (&kind, total) in pauses {
        let frame = frames.intern(&pause_frame(kind));
        let mut values = [0; SAMPLE_TYPES.len()];
        values[GC_PAUSE] = total.nanos;
        tree.add([frame], &values);
    }
    Some(ThreadProfile {
        name: String::from(GC_THREAD),
        os_thread: 0,
        tree,
        spans: Vec::new(),
    })
}

/// The live objects as threads of their own, one per age bucket in GCs
/// (`0`, `1`, `2-3`, `4-7`, ...), named `live heap age N`
/// ([`LIVE_HEAP_THREAD`]): each object's allocation
/// stack (frames of `source`, interned into `frames`) with its estimated
/// objects and bytes in [`INUSE_OBJECTS`] and [`INUSE_SPACE`].
pub(super) fn live_threads(
    frames: &mut Frames,
    source: &Frames,
    objects: &[LiveObject],
) -> Vec<ThreadProfile> {
    by_age(objects)
        .into_iter()
        .map(|(age, stacks)| {
            let mut tree = StackTree::new(SAMPLE_TYPES.len());
            for (stack, (objects, bytes)) in stacks {
                let stack: Vec<FrameId> = stack
                    .iter()
                    .map(|&f| frames.intern(source.name(f)))
                    .collect();
                let mut values = [0; SAMPLE_TYPES.len()];
                values[INUSE_OBJECTS] = objects.round() as u64;
                values[INUSE_SPACE] = bytes.round() as u64;
                tree.add(stack, &values);
            }
            ThreadProfile {
                name: alloc::format!("{LIVE_HEAP_THREAD} age {}", age_bucket_label(age)),
                os_thread: 0,
                tree,
                spans: Vec::new(),
            }
        })
        .collect()
}

/// The name (before ` age N`) of the synthetic threads that hold the live
/// heap; in pprof, their samples carry labels `thread` (this),
/// `object_type` (the allocated type) and `gc_age` (GCs survived).
pub const LIVE_HEAP_THREAD: &str = "live heap";

/// The name of the synthetic thread that holds the GC pauses.
pub const GC_THREAD: &str = "GC";
