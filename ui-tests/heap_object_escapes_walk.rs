// An object of a GC heap walk can be read only during the walk's callback,
// while the runtime is suspended: it cannot be kept past it, when the GC
// may move or free it.
use corprof::facade::{HeapObject, ProfilerInfo};

fn class_later(info: &ProfilerInfo) {
    let mut kept: Option<HeapObject<'_>> = None;
    let _ = info.enumerate_gc_heap_objects(|object| {
        kept = Some(object);
        false
    });
    let _ = kept.unwrap().class();
}

fn main() {}
