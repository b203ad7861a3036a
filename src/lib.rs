//! corprof: .NET (CoreCLR) profilers and in-process COM interop in Rust.
#![no_std]

extern crate alloc;
#[cfg(feature = "std")]
extern crate std;

/// CIL method-body codec: headers, opcodes, exception sections, signatures and IL editing.
pub mod cil;
