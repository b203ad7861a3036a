//! On demand: attach the sampler to a running process, sample it for a
//! while, write the profile, and detach, leaving the process as it was (a
//! later attach works again). The way `dotnet-trace collect -p PID
//! --duration` is used, without the .NET SDK:
//!
//! ```sh
//! cargo build --release --example attach --example sampler_attach
//! target/release/examples/attach PID target/release/examples/libsampler_attach.so \
//!     3C9E5A17-6B2D-4E81-9F40-A7D2C8B5E163 'seconds=10;dir=/tmp/profiles'
//! ```
//!
//! The client data (`seconds=N;dir=PATH;push=URL;app=NAME;hz=N`, the table
//! is `corprof::sampling::AttachRequest`'s) says how long to sample and
//! where the profile goes: `profile-<start>-<seq>.pb.gz` in a directory,
//! and/or a Pyroscope-compatible server. After the attach the sampler has
//! CPU and wall time, exceptions, and on .NET 5 and later allocations and
//! lock contention (not allocations on 3.1: `ObjectAllocated` can only be
//! enabled at startup). Then it asks the runtime to detach it; the
//! process's stderr says `sampler: detached` when the runtime has unloaded
//! it. Bad client data refuses the attach with a `sampler: ...; not
//! attaching` message there.
//!
//! The whole profiler is the library's `SamplingProfiler`, whose
//! `initialize_for_attach` does all of this.
//!
//! CLSID `{3C9E5A17-6B2D-4E81-9F40-A7D2C8B5E163}`.

use corprof::sampling::SamplingProfiler;

corprof::profiler!(SamplingProfiler, "{3C9E5A17-6B2D-4E81-9F40-A7D2C8B5E163}");
