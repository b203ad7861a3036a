//! A sampling profiler: CPU time, wall time and allocations by stack, at a
//! few percent overhead, for profilers left running in production.
//!
//! [`Sampler`] runs a thread of its own that, at [`SamplerOptions::hz`]
//! (99 Hz by default), suspends the runtime (`SuspendRuntime`, which is what
//! lets a profiler walk other threads' stacks outside Windows), walks every
//! managed thread (`DoStackSnapshot`), resumes it, and records each stack
//! with:
//!
//! - **wall time**: the time since the previous sample, for every thread,
//!   running or not (a sleeping or blocked thread shows here);
//! - **CPU time**: what the thread's OS thread used since its previous
//!   sample, from the per-thread CPU clock (`clock.rs`), so a thread that
//!   sleeps or waits adds none.
//!
//! Allocations are sampled by bytes (a Poisson process of mean
//! [`SamplerOptions::allocation_mean_bytes`]) and scaled to estimate every
//! allocation (`alloc.rs` gives the estimator and its error), from the
//! runtime's `GCAllocationTick` events on .NET 5 and later
//! ([`Sampler::event_pipe_event_delivered`]: allocations keep their fast
//! path) or the `ObjectAllocated` callback before
//! ([`Sampler::object_allocated`]): [`AllocationSource`].
//!
//! Names are resolved once per `FunctionID`, after the runtime is resumed,
//! so a pause costs the walks only. The [`Profile`] that
//! [`Sampler::stop`] returns holds one `corprof::profile::StackTree` per
//! thread, for the writers of `corprof::profile` (pprof, speedscope, folded
//! stacks, flame graphs). docs/sampling.md has the measured overhead.

mod alloc;
mod clock;
mod component;
mod env;
mod output;
mod sampler;

pub use self::alloc::{allocation_weight, AllocationCountdown, AllocationWeight};
pub use clock::{current_thread_cpu_nanos, thread_cpu_nanos};
pub use component::SamplingProfiler;
pub use output::{write_outputs, Written};
pub use sampler::{
    AllocationSource, Profile, Sampler, SamplerOptions, SamplerStats, ThreadProfile, ALLOC_BYTES,
    ALLOC_OBJECTS, CPU, NATIVE_FRAME, NO_MANAGED_FRAMES, SAMPLE_TYPES, WALL,
};
