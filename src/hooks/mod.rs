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
//! The data's route: the runtime asks the [`FunctionHooks`] mapper, once
//! per function, whether to hook it (`FunctionIDMapper2`; a [`Hooked`]
//! record kept as the function's client data) -> at each call the JIT
//! calls the raw layer's trampolines (or the runtime's helper, in the
//! other [`HookMode`]) with that record -> `enter`/`leave`/`tailcall` run
//! -> with [`CallTree`], each thread's shadow stack feeds its own tree,
//! merged at the end into one [`StackTree`](crate::profile::StackTree)
//! by function name, which the profile writers stream out.
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
