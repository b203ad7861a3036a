// The thrown object of `exception_thrown` is valid on the callback's thread:
// it cannot be used from another thread, even one scoped to the callback.
use corprof::facade::{CallbackObject, Profiler, ProfilerInfo, Result};

#[derive(Default)]
struct Sender;

impl Profiler for Sender {
    fn exception_thrown(&self, _info: &ProfilerInfo, thrown: CallbackObject<'_>) -> Result<()> {
        std::thread::scope(|s| {
            s.spawn(|| thrown.class());
        });
        Ok(())
    }
}

fn main() {}
