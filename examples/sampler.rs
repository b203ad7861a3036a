//! A sampling profiler (`corprof::sampling`): CPU time, wall time and
//! allocations by stack, written at shutdown to the directory named by
//! `CORPROF_SAMPLER_DIR` (nothing is written when it is unset):
//!
//! - `profile.pb.gz`: pprof (`go tool pprof`, Grafana Pyroscope and other
//!   pprof readers), sample types `cpu`, `wall` (nanoseconds),
//!   `alloc_objects` (count) and `alloc_space` (bytes), a `thread` label per
//!   sample;
//! - `speedscope.json`: the same, for speedscope (one profile per thread
//!   and kind);
//! - `cpu.folded`, `wall.folded` (nanoseconds), `alloc.folded` (bytes):
//!   folded stacks, every thread merged;
//! - `flame.svg`: a flame graph of CPU time;
//! - `summary.txt`: `key=value` lines (samples, pauses, threads).
//!
//! Environment (`SamplerOptions::from_env` has the table):
//! `CORPROF_SAMPLER_HZ` (samples per second, default 99),
//! `CORPROF_SAMPLER_ALLOC_BYTES` (the mean allocation sampling interval in
//! bytes, default 524288; `0` turns allocation sampling off),
//! `CORPROF_SAMPLER_ALLOC_SOURCE` (where allocations come from: `auto`, the
//! default, is `allocation-tick` on .NET 5 and later and `object-allocated`
//! before; `corprof::sampling::AllocationSource`). A bad value is reported
//! on stderr and the profiler stays out of the way.
//!
//! The whole profiler is the library's `SamplingProfiler`: it asks for its
//! events, starts the sampler in `initialize`, handles the thread,
//! allocation and EventPipe callbacks, and writes the outputs at shutdown.
//! To sample inside a profiler of your own, make it one part of a tuple
//! (see the `composed` example).
//!
//! Build with `cargo build --example sampler`; CLSID
//! `{7A3E9C51-2B8D-4F06-9E1A-C4D5B6A70819}`.

use corprof::sampling::SamplingProfiler;

corprof::profiler!(
    SamplingProfiler,
    "{7A3E9C51-2B8D-4F06-9E1A-C4D5B6A70819}",
    SamplingProfiler::from_env
);
