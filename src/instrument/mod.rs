//! Instrumentation: methods rewritten at JIT time or by ReJIT.
//!
//! Built on the [facade](crate::facade) (metadata import and emit, IL
//! bodies, function control) and the [CIL codec](crate::cil); the facade
//! knows nothing of this module.
//!
//! The parts, file by file:
//!
//! - `calltarget/`: [`CallTarget`] wraps a method so that it calls the
//!   generic methods of an [`Integration`] in a helper assembly the
//!   application never referenced (the C# contract is in the repository's
//!   `calltarget/`), one job per file: the contract read from the helper
//!   (`contract.rs`), the references emitted into the module
//!   (`references.rs`), the IL ([`wrap`], `il/`, in phases), and the
//!   targets: [`MethodTarget`] and [`MethodTargets`] select methods by
//!   name (``Asm!Ns.Type`1::Method``) and find them as modules load
//!   (`targets.rs`).
//! - `component.rs`: [`CallTargetProfiler`], the profiler part that wraps
//!   the targets at first JIT or by ReJIT.
//! - `assembly_name.rs`: a module's assembly named by the runtime, so that
//!   only the metadata of the modules a target names is opened.
//! - `assembly_file.rs`, `helper_check.rs`: the helper's references read
//!   from its file and compared with the runtime's own assemblies, so that
//!   a helper built for a newer runtime is refused with a message.
//! - `rejit.rs`: [`RejitBodies`] carries new IL from where it is made to
//!   [`get_rejit_parameters`](crate::facade::Profiler::get_rejit_parameters).
//! - `rejit_profiler.rs`: [`RejitProfiler`], the ReJIT callbacks as a
//!   profiler part that gives the runtime the kept bodies.
//! - `edit.rs`: [`IlEdit`], edits that keep a body valid and that the
//!   library installs itself (at first JIT or by ReJIT), and
//!   [`ConstantPatch`], a live patch of one constant named by text.
//!
//! The data's route, for CallTarget: the target names
//! (`Asm!Ns.Type::Method`, parsed in `targets.rs`) -> a module loads
//! (`component.rs`'s `module_load_finished`: its assembly named,
//! `assembly_name.rs`; the targets it holds found in its metadata) -> the
//! helper's contract read once (`contract.rs`; its references checked
//! against the runtime's, `assembly_file.rs`, `helper_check.rs`) -> the
//! method's first JIT compilation (`jit_compilation_started`), or a ReJIT
//! for a method already compiled (`rejit.rs`: the body kept in
//! [`RejitBodies`] until the runtime asks in `get_rejit_parameters`) -> the
//! references emitted into the module (`references.rs`) -> the body
//! wrapped (`il/`) and installed.
//!
//! See docs/instrumentation.md.

mod assembly_file;
mod assembly_name;
mod calltarget;
mod component;
mod edit;
mod helper_check;
mod rejit;
mod rejit_profiler;

pub use calltarget::{
    wrap, AsyncProbes, CallTarget, Continuation, Integration, MethodTarget, MethodTargets, Probes,
    ThisArg, WrapContext, WrapError, WrapWhen, Wrapped, DEFAULT_INTEGRATION,
};
pub use component::{CallTargetOptions, CallTargetProfiler};
pub use edit::{ConstantPatch, Edited, IlEdit};
pub use rejit::{request_rejit_blocking_inlining, RejitBodies, BLOCK_INLINING_FROM_MAJOR};
pub use rejit_profiler::RejitProfiler;
