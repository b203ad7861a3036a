//! corprof: .NET (CoreCLR) profilers and in-process COM interop in Rust.
#![no_std]

extern crate alloc;
#[cfg(feature = "std")]
extern crate std;
