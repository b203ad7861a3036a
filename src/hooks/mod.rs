//! Enter/leave/tailcall hooks: [`FunctionHooks`], installed with
//! [`ProfilerInfoHooks::set_function_hooks`] on the facade's `ProfilerInfo`.
//!
//! Built on the [facade](crate::facade) and on the raw layer's assembly
//! trampolines ([`profiling::fast_path_hooks`](crate::profiling::fast_path_hooks));
//! the facade knows nothing of this module.
//!
//! The parts, file by file:
//!
//! - `function_hooks.rs`: the [`FunctionHooks`] trait, the per-function
//!   [`Hooked`] records made by its mapper, the two [`HookMode`]s (the
//!   JIT calling the trampolines directly, or the runtime's helper with
//!   [`EnterCall`], [`LeaveCall`], [`TailcallCall`] and their
//!   [`Arguments`]), and the installation.
//! - `call_tree.rs` (with the `profile` feature): [`CallTree`], a shadow
//!   stack and call tree per thread fed by the hooks, merged into a
//!   [`StackTree`](crate::profile::StackTree) by function name.
//!
//! See docs/hooks.md.

#[cfg(feature = "profile")]
mod call_tree;
mod function_hooks;

#[cfg(feature = "profile")]
pub use call_tree::{CallTree, CallTreeReport};

pub use function_hooks::{
    Arguments, EnterCall, FunctionHooks, HookMode, Hooked, LeaveCall, ProfilerInfoHooks,
    TailcallCall,
};
