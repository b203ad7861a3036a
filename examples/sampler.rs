//! A sampling profiler (`corprof::sampling`): CPU time, wall time and
//! allocations by stack, written at shutdown to the directory named by
//! `CORPROF_SAMPLER_DIR` (nothing is written when it is unset):
//!
//! - `profile.pb.gz`: pprof (`go tool pprof`, Grafana Pyroscope and other
//!   pprof readers), sample types `cpu`, `wall` (nanoseconds),
//!   `alloc_objects` (count), `alloc_space` (bytes), `exception` (count:
//!   thrown exceptions by type, the leaf frame, and label `exception_type`),
//!   `lock-count` (count) and `lock-time` (nanoseconds: waits for locks,
//!   .NET 5 and later), a `thread` label per sample;
//! - `speedscope.json`: the same, for speedscope (one profile per thread
//!   and kind);
//! - `cpu.folded`, `wall.folded` (nanoseconds), `alloc.folded` (bytes):
//!   folded stacks, every thread merged;
//! - `flame.svg`: a flame graph of CPU time;
//! - `summary.txt`: `key=value` lines (the mode, samples, pauses, signals,
//!   timers, threads, exports).
//!
//! Continuously, every `CORPROF_SAMPLER_PERIOD` seconds (default 60), the
//! period's own profile goes to `profile-<start>-<seq>.pb.gz` in that
//! directory (the newest `CORPROF_SAMPLER_KEEP`, default 60, kept) and to
//! the Pyroscope-compatible server of `CORPROF_SAMPLER_PUSH_URL`
//! (`http://host:port`) as application `CORPROF_SAMPLER_APP`.
//!
//! Environment (`SamplerOptions::from_env` and `ExportOptions::from_env`
//! have the tables): `CORPROF_SAMPLER_HZ` (samples per second, default
//! 99), `CORPROF_SAMPLER_ALLOC_BYTES` (the mean allocation sampling
//! interval in bytes, default 524288; `0` turns allocation sampling off),
//! `CORPROF_SAMPLER_ALLOC_SOURCE` (`auto`, the default, is
//! `allocation-sampled` on .NET 10 and later, `allocation-tick` on .NET 5
//! to 9 and none before; `object-allocated` slows every allocation),
//! `CORPROF_SAMPLER_MODE` (`signal`, the default on Linux x86-64 and
//! AArch64: per-thread signals, the runtime never suspended;
//! `suspend-runtime`, the default elsewhere). A bad value is reported on
//! stderr and the profiler stays out of the way.
//!
//! The whole profiler is the library's `SamplingProfiler`: it asks for its
//! events, starts the sampler in `initialize`, handles the thread,
//! allocation, exception and EventPipe callbacks, and writes the outputs at shutdown.
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
