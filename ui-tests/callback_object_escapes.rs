// The thrown object of `exception_thrown` is valid for that callback: it
// cannot be kept past it (its ID can, to tell objects apart).
use corprof::facade::{CallbackObject, Profiler, ProfilerInfo, Result};
use std::sync::Mutex;

#[derive(Default)]
struct Keeper {
    last: Mutex<Option<corprof::profiling::ObjectID>>,
}

fn keep(_: CallbackObject<'static>) {}

impl Profiler for Keeper {
    fn exception_thrown(&self, _info: &ProfilerInfo, thrown: CallbackObject<'_>) -> Result<()> {
        // Its ID can be kept (to tell objects apart), not the handle.
        *self.last.lock().unwrap() = Some(thrown.id());
        keep(thrown);
        Ok(())
    }
}

fn main() {}
