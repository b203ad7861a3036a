// An ObjectID is an object's address, valid until the next garbage
// collection, and the runtime reads the object through it unchecked: every
// method that takes one is `unsafe`, with the same contract.
use corprof::facade::ProfilerInfo;
use corprof::profiling::{ObjectID, COR_PRF_HANDLE_TYPE_WEAK};
use corprof::sampling::Sampler;

fn later(info: &ProfilerInfo, sampler: &Sampler, kept: ObjectID) {
    let _ = info.class_of(kept);
    let _ = info.object_size(kept);
    let _ = info.object_references(kept);
    let _ = info.create_handle(kept, COR_PRF_HANDLE_TYPE_WEAK);
    let _ = info.is_frozen_object(kept);
    let _ = sampler.object_allocated(kept, corprof::profiling::ClassID::NULL);
}

fn main() {}
