//! The operating system's calls that more than one module makes, declared
//! once (the crate has no dependencies, so no `libc`): two declarations of
//! one C function with different Rust types are an error
//! (`clashing_extern_declarations`). A floor below everything, like
//! `bytes`: it uses nothing.

// Used by the facade and the sampler, both `std`.
#[cfg(all(target_os = "linux", feature = "std"))]
pub(crate) mod linux;
