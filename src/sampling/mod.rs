//! A sampling profiler: CPU time, wall time and allocations by stack, at a
//! few percent overhead, for profilers left running in production.
//!
//! [`SamplerOptions::mode`] picks how stacks are taken ([`SamplingMode`]):
//! on Linux x86-64 and AArch64 by default each thread is interrupted on
//! its own by a signal (a timer on its CPU clock for CPU time, a few
//! threads per tick for wall time) and walks its own stack in the handler
//! (`signal.rs`, `handler.rs`, `walk.rs`, `unwind.rs`, `unix.rs`;
//! docs/sampling.md, "Signal mode"):
//! the runtime is never suspended. On Windows x64 by default
//! ([`SamplingMode::ThreadSuspend`], `thread_suspend.rs`, `win32.rs`) a
//! thread of the sampler's own stops one managed thread at a time
//! (`SuspendThread`), walks it (`DoStackSnapshot`) and resumes it: the
//! runtime is not suspended either. In [`SamplingMode::SuspendRuntime`],
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
//!
//! Exceptions are counted by type at their throw stack
//! ([`Sampler::exception_thrown`], rate-limited: `exceptions.rs`), and on
//! .NET 5 and later waits for locks from the runtime's contention events
//! (`contention.rs`), on .NET 9 and later blocking waits from its wait
//! events (`waits.rs`), and the time the runtime is suspended for GCs, by
//! generation and reason (`gc_pauses.rs`, a part of its own); on .NET 7
//! and later the sampled objects still alive, at their allocation stacks
//! (`live_heap.rs`, the live heap, a part of its own). For a service, [`Sampler::start_exporting`] hands a
//! profile of each [`SamplerOptions::period`] to exporters ([`export`]: a
//! directory of period files, a Pyroscope-compatible server) from a thread
//! of its own.
//!
//! The files are rooms on floors (docs/sampling.md, "The sources";
//! tests/layers.rs): each names only rooms below its own, and this root
//! only declares and re-exports.
//!
//! # The data's route
//!
//! options -> start -> modes -> record -> period -> export:
//!
//! 1. **options**: [`SamplerOptions`] (`options.rs`), from code or the
//!    environment (`env.rs`);
//! 2. **start**: [`Sampler`] (`sampler.rs`), started by the builder
//!    (`builder.rs`) or the `Profiler` part (`component.rs`), which also
//!    feeds it the runtime's events (`events.rs`: allocations, exceptions,
//!    contention, waits, GC pauses);
//! 3. **modes**: a stack is taken by signal mode (`signal.rs`, `handler.rs`,
//!    `walk.rs`, `unwind.rs`, its buffer `slots.rs`, its thread
//!    `signal_loop.rs`), by thread suspension (`thread_suspend.rs`) or by
//!    suspending the runtime (`suspend_runtime.rs`), on the ticker
//!    (`ticker.rs`);
//! 4. **record**: every stack goes through the one record path
//!    (`record.rs`) into the sampler's state (`state.rs`: per-thread stack
//!    trees, names resolved once per `FunctionID`);
//! 5. **period**: at each [`SamplerOptions::period`] (or at
//!    [`Sampler::stop`]) the state is taken as a [`Profile`], the memory
//!    parts added (`memory.rs`), and made pprof (`pprof.rs`);
//! 6. **export**: the exporters (`export/`: period files, a push to a
//!    Pyroscope-compatible server) and the output files (`output.rs`:
//!    pprof, speedscope, folded stacks, flame graph).

mod alloc;
mod armed;
mod attach;
mod builder;
mod clock;
mod component;
mod contention;
mod env;
mod events;
mod exceptions;
pub mod export;
mod gc_heap;
mod gc_pauses;
mod gc_threads;
mod heap_snapshot;
mod incident;
mod live_heap;
mod memory;
mod mode;
mod options;
mod output;
mod pprof;
mod record;
mod recorder;
mod resolver;
mod sampler;
mod signal;
mod signal_loop;
mod state;
mod summary;
mod suspend_runtime;
mod thread_suspend;
mod ticker;
mod triggers;
mod waits;
#[cfg(all(windows, target_arch = "x86_64"))]
mod win32;

/// Declares the rooms the `SIGPROF` handler runs code of, under the one
/// signal-safety lint block: no arithmetic that can overflow (a debug build
/// would panic inside a signal handler), no indexing that can panic, no
/// panic at all (`clippy::arithmetic_side_effects`, `indexing_slicing`,
/// `panic` denied for the whole file; test code and the few functions that
/// run outside the handler say so with an `allow`). Off Linux
/// x86-64/AArch64 the handler, the walk and the tables are not built into
/// a sampler (`SamplingMode::Signal` answers `E_NOTIMPL` there), so what
/// is left unused is allowed.
macro_rules! signal_path {
    ($($(#[$meta:meta])* mod $name:ident;)*) => {$(
        $(#[$meta])*
        #[cfg_attr(
            not(all(
                target_os = "linux",
                any(target_arch = "x86_64", target_arch = "aarch64")
            )),
            allow(dead_code, unused_imports)
        )]
        #[deny(
            clippy::arithmetic_side_effects,
            clippy::indexing_slicing,
            clippy::panic
        )]
        mod $name;
    )*};
}

signal_path! {
    mod cfi;
    mod dwarf;
    mod frameless;
    #[cfg(all(
        target_os = "linux",
        any(target_arch = "x86_64", target_arch = "aarch64")
    ))]
    mod handler;
    mod slots;
    #[cfg(all(
        target_os = "linux",
        any(target_arch = "x86_64", target_arch = "aarch64")
    ))]
    mod unix;
    mod unwind;
    mod walk;
}

/// What the crate's own integration tests and fuzzers reach
/// (tests/services_fuzz.rs): the push exporter's HTTP/1.1 client and
/// request writer. Not public API: hidden, and may change at any time.
#[doc(hidden)]
pub mod __test {
    pub use super::export::http::{
        exchange, exchange_until, parse_response, Response, BODY_KEPT, BODY_PREVIEW, MAX_HEAD,
        MAX_RESPONSE,
    };
    pub use super::export::push::ingest_request;
    pub use super::export::url::percent_encode;
}

pub use self::alloc::{
    allocation_sampled_weight, allocation_weight, AllocationCountdown, AllocationWeight,
};
pub use attach::AttachRequest;
pub use builder::SamplerBuilder;
pub use clock::{current_thread_cpu_nanos, thread_cpu_nanos};
pub use component::SamplingProfiler;
pub use contention::{
    decode_contention, decode_contention_with, Contention, CONTENTIONS_PER_SECOND,
    CONTENTION_KEYWORD, CONTENTION_START, CONTENTION_STOP,
};
pub use exceptions::{RateSampler, EXCEPTIONS_PER_SECOND};
pub use gc_heap::GcHeapStats;
pub use gc_pauses::GcPauseStats;
pub use gc_threads::{GC_THREAD_FRAME, GC_THREAD_NAMES};
pub use heap_snapshot::{HeapSnapshotStats, HEAP_SNAPSHOTS_KEPT, HEAP_SNAPSHOT_TYPES};
pub use live_heap::{LiveHeapStats, HEAP_OBJECTS};
pub use memory::{GC_THREAD, LIVE_HEAP_THREAD};
pub use mode::{
    SamplingMode, SignalStats, ThreadSuspendStats, MAX_DEPTH, MAX_FRAMES, MAX_THREADS, SLOTS,
};
pub use options::{
    AllocationSource, OptionError, SamplerOptions, ALLOC_BYTES, ALLOC_OBJECTS, CPU, EXCEPTIONS,
    GC_PAUSE, INUSE_OBJECTS, INUSE_SPACE, LOCK_COUNT, LOCK_TIME, MAX_HZ, NATIVE_FRAME,
    NO_MANAGED_FRAMES, SAMPLE_TYPES, WAIT, WALL,
};
pub use output::{write_outputs, Written};
pub use sampler::Sampler;
pub use state::{Pause, Profile, SamplerStats, SpanTree, ThreadProfile, ENDED_WITHOUT_NAME};
pub use triggers::{Trigger, TriggerKind, MAX_TRIGGER_COUNT, SUPPORTED_TRIGGERS};
pub use waits::{
    decode_wait, decode_wait_with, wait_source_name, Wait, WAITS_PER_SECOND, WAIT_HANDLE_KEYWORD,
    WAIT_START, WAIT_STOP,
};
