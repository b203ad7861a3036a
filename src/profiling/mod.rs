//! The .NET profiling API (the runtime's `corprof.idl`): the callback
//! interfaces a profiler implements, the info interfaces it calls, and every
//! type they use. Names are exactly the IDL's, so Microsoft's documentation
//! applies as is. Every item has one path, at this module's root
//! (`corprof::profiling::ICorProfilerInfo3`); the files below are private.
//!
//! # The parts, file by file
//!
//! ## `callback.rs`
//!
//! ICorProfilerCallback through ICorProfilerCallback11: the notifications a profiler implements.
//!
//! The runtime calls these methods on the profiler object it created through
//! the profiler's class factory. Each version derives from the previous one,
//! so a profiler exported as [`ICorProfilerCallback11`] answers
//! QueryInterface for all eleven. Every method has a default body returning
//! `S_OK`: implement only the notifications you subscribed to with
//! `SetEventMask`/`SetEventMask2`.
//!
//! Interface pointers passed to callbacks (`IUnknown *`,
//! `ICorProfilerFunctionControl *`, ...) arrive as `*mut c_void`; wrap them
//! with [`ComRef`](crate::ComRef) to call them for the duration of the
//! callback. Arrays arrive as a pointer beside their element count.
//!
//! ## `info.rs`
//!
//! ICorProfilerInfo through ICorProfilerInfo15: the runtime services a profiler calls.
//!
//! The runtime hands the profiler an object implementing the newest of these
//! it supports, in `ICorProfilerCallback::Initialize`; query it for the
//! version you need with [`cast`](ICorProfilerInfo::cast). Every method
//! returns an `HRESULT`; the trait defaults return `E_NOTIMPL`, so a Rust test
//! double can implement only what a test needs.
//!
//! Interface pointers (`IUnknown **`, `ICorProfilerObjectEnum **`, ...) are
//! raw `*mut *mut c_void`; each method's doc names the interface written
//! there, which the caller owns (wrap it with that invoker's `from_raw`).
//!
//! ## `enumerators.rs`
//!
//! The ICorProfiler*Enum interfaces: enumerators over objects, functions, modules, threads and methods.
//!
//! The runtime implements them and hands them out from `ICorProfilerInfo*`
//! methods (`EnumModules`, `EnumJITedFunctions`, `EnumThreads`, ...). All
//! five have the same shape: `Skip`, `Reset`, `Clone`, `GetCount`, and
//! `Next`, which fills a caller-allocated array of up to `celt` elements and
//! writes how many it filled to `*pceltFetched`. `Clone` writes a new
//! enumerator of the same interface, with its own reference, to `*ppEnum`.
//!
//! The default bodies return `E_NOTIMPL`, so that a test double may
//! implement only what it needs.
//!
//! ## `misc.rs`
//!
//! IMethodMalloc, ICorProfilerFunctionControl and ICorProfilerAssemblyReferenceProvider.
//!
//! Small runtime-implemented interfaces that the profiler receives: an
//! allocator for IL bodies, the per-method ReJIT controller, and the
//! collector of early assembly references. The default bodies return
//! `E_NOTIMPL` (`Alloc` returns null), so that a test double may implement
//! only what it needs.
//!
//! ## `ids.rs`
//!
//! The runtime's opaque IDs (`typedef UINT_PTR FunctionID;` and friends in corprof.idl): pointer-sized, and distinct types here so that one kind cannot be passed where another is expected.
//!
//! ## `enums.rs`
//!
//! The plain C enums of corprof.idl (reasons, kinds, generations, runtime types, EventPipe types and levels): one value at a time, never combined.
//!
//! Each is a `#[repr(transparent)]` newtype over a 32-bit integer (a C enum's
//! size), with its values as module-level constants under their exact IDL
//! names, so a value the crate does not know (a newer runtime's) is still
//! representable and prints as `COR_PRF_GC_REASON(99)`. Enums whose values
//! are bits meant to be or-ed together live in `flags.rs` (below).
//!
//! ## `flags.rs`
//!
//! The flag-set C enums of corprof.idl: event masks, module flags, static kinds, GC-root properties and the like, whose values are bits the IDL means to be or-ed together.
//!
//! Each is a `#[repr(transparent)]` newtype over `u32` with set operations
//! (`|`, `&`, `-`, [`contains`](COR_PRF_MONITOR::contains), ...) and a
//! `Debug` that names the bits. The constants are at module level under
//! their exact IDL names, including the IDL's composite masks
//! ([`COR_PRF_ALL`], [`COR_PRF_MONITOR_IMMUTABLE`],
//! [`COR_PRF_ALLOWABLE_AFTER_ATTACH`], ...).
//!
//! The info interfaces take and return most masks as a plain `DWORD`, as the
//! IDL does (`SetEventMask(DWORD dwEvents)`): pass `mask.bits()` and wrap
//! results with `from_bits_retain`.
//!
//! ```
//! use corprof::profiling::*;
//! let mask = COR_PRF_MONITOR_GC | COR_PRF_MONITOR_JIT_COMPILATION;
//! assert!(COR_PRF_ALLOWABLE_AFTER_ATTACH.contains(mask));
//! assert_eq!(mask.bits(), 0x0000_00A0);
//! ```
//!
//! ## `structs.rs`
//!
//! The `#[repr(C)]` structs and unions of corprof.idl and the EventPipe handle typedefs. The three structs of cor.h the profiling API also uses ([`COR_FIELD_OFFSET`](crate::metadata::COR_FIELD_OFFSET), [`ASSEMBLYMETADATA`](crate::metadata::ASSEMBLYMETADATA), [`OSINFO`](crate::metadata::OSINFO)) are declared with the metadata API, in [`crate::metadata`].
//!
//! Field names and types are the IDL's (a field named `type` is spelled
//! `r#type`). Structs are passed by pointer (`*mut COR_PRF_CODE_INFO`), so
//! they need no [`AbiParam`](crate::AbiParam) impl; the one exception,
//! [`COR_PRF_EVENTPIPE_PROVIDER_CONFIG`] (passed by value to
//! `ICorProfilerInfo12::EventPipeAddProviderToSession`), has one.
//!
//! Structs whose all-zero value is a sensible starting point (an empty
//! buffer to be filled by the runtime, a "none" range) implement `Default`;
//! for those with pointer fields the default is null pointers and zeros.
//!
//! ## `hooks.rs`
//!
//! The function-pointer typedefs of corprof.idl: the enter/leave/tailcall (ELT) hooks, the function-ID mappers, and the callbacks of stack snapshots, object-reference walks, heap walks and EventPipe providers.
//!
//! Each is an `unsafe extern "system" fn` type with the IDL's parameters.
//! The IDL declares them `__stdcall` (or `STDMETHODCALLTYPE`), which is what
//! `"system"` means on 32-bit Windows; everywhere else both are the C
//! convention.
//!
//! ### Passing hooks to the info interfaces
//!
//! Most of these typedefs are *function types* in the IDL, and the info
//! methods take a pointer to one (`FunctionEnter *pFuncEnter`); a few are
//! taken directly (`ObjectReferenceCallback callback`, and `ObjectCallback`,
//! itself a pointer typedef). All of them are one function pointer on the
//! wire. The method declarations in this crate take them as
//! **`Option<Hook>`** (`Option<FunctionEnter>`, `Option<StackSnapshotCallback>`,
//! ...), whatever the IDL spelling: `None` is the null pointer (which, for
//! example, disables one of the ELT hooks), `Some(f)` passes `f`.
//!
//! ### The ELT hooks run in a special context
//!
//! The runtime documents that it saves no registers before calling the
//! `FunctionEnter*`/`FunctionLeave*`/`FunctionTailcall*` hooks, which run on
//! every call of every managed method. Implement them as assembly stubs
//! (naked functions) that preserve the registers they use, or that save the
//! argument and return registers before calling into Rust. They must not
//! block, allocate managed memory, or call managed code. The crate provides
//! such stubs for the fast-path hooks: [`fast_path_hooks`]
//! (see [`FastPathHooks`] for the registers they keep).
//!
//! ## `errors.rs`
//!
//! The `CORPROF_E_*` codes of the profiling API (facility `0x13`, range `0x8013_135x`–`0x8013_138x` of the runtime's corerror.xml), with their documented meanings.
//!
//! Every code here is also known to [`HRESULT`](crate::HRESULT)'s `Debug`,
//! `Display`, [`name`](crate::HRESULT::name) and
//! [`meaning`](crate::HRESULT::meaning):
//!
//! ```
//! use corprof::profiling::CORPROF_E_NOT_MANAGED_THREAD;
//! assert_eq!(format!("{CORPROF_E_NOT_MANAGED_THREAD:?}"), "CORPROF_E_NOT_MANAGED_THREAD");
//! assert_eq!(CORPROF_E_NOT_MANAGED_THREAD.0 as u32, 0x8013_1355);
//! ```
//!
//! `0x8013_1381` (`CORPROF_E_RUNTIME_SUSPEND_REQUIRED`) is reserved by
//! corerror.xml for internal use only and is deliberately absent.

mod callback;
mod elt;
mod enumerators;
mod enums;
mod errors;
mod flags;
mod hooks;
mod ids;
mod info;
mod misc;
mod structs;

pub use callback::*;
pub use elt::*;
pub use enumerators::*;
pub use enums::*;
pub use errors::*;
pub use flags::*;
pub use hooks::*;
pub use ids::*;
pub use info::*;
pub use misc::*;
pub use structs::*;
