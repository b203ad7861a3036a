// The thread-suspend mode (Windows x64) walks threads that only a
// forwarded `ThreadDestroyed` keeps it from walking once destroyed: its one
// start is `unsafe`, and safe code cannot call it (the safe starts refuse
// the mode: sampler.rs's unit tests).
use corprof::sampling::{Sampler, SamplerOptions, SamplingMode};

fn start(info: &corprof::facade::ProfilerInfo) {
    let options = SamplerOptions::default().with_mode(SamplingMode::ThreadSuspend);
    let _ = Sampler::builder(options).start_forwarding_thread_destroyed(info, |_| {});
}

fn main() {}
