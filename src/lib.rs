//! corprof: .NET (CoreCLR) profilers and in-process COM interop in Rust.
//!
//! One declarative macro, [`com_interface!`], turns an interface declaration
//! into a `#[repr(C)]` vtable, an `_Impl` trait through which Rust objects are
//! exported to native code, and an owning invoker through which native
//! objects are called. The crate has no dependencies and works in `no_std`
//! (with `alloc`); the default `std` feature adds panic containment.
//!
//! ```
//! use corprof::{com_interface, export, HRESULT, S_OK, E_INVALIDARG};
//!
//! com_interface! {
//!     /// Says hello.
//!     #[iid("3E8F4C2A-6C3B-4C8E-9D0B-2C4D5E6F7A8B")]
//!     #[vtable(IGreeter_Vtbl)]
//!     #[implement(IGreeter_Impl)]
//!     pub unsafe interface IGreeter: IUnknown {
//!         fn Greet(times: u32, out: *mut u32) -> HRESULT;
//!     }
//! }
//!
//! struct Greeter;
//! impl IGreeter_Impl for Greeter {
//!     unsafe fn Greet(&self, times: u32, out: *mut u32) -> HRESULT {
//!         if out.is_null() { return E_INVALIDARG; }
//!         unsafe { *out = times * 2 };
//!         S_OK
//!     }
//! }
//!
//! // Export: a COM object native code can call (`greeter.into_raw()`).
//! let greeter: IGreeter = export(Greeter);
//! // Invoke: call it back through its vtable, as native code would.
//! let mut n = 0;
//! assert_eq!(unsafe { greeter.Greet(21, &mut n) }, S_OK);
//! assert_eq!(n, 42);
//! ```
//!
//! # The modules, floor by floor
//!
//! Each module uses only the ones below it: the crate's one layering table
//! is docs/design.md, "The layers" (every module, the capabilities
//! `instrument`, `hooks`, `sampling` and `coverage`, the formats beside
//! them, and the `corprof` command), enforced by `tests/layers.rs`. In
//! short: the support floor (private), the COM core at the crate root
//! ([`GUID`], [`HRESULT`], [`com_interface!`], [`export`]), the raw API
//! with the IDL's names ([`profiling`], [`metadata`]), the safe API
//! (`facade`, feature `std`), and the capabilities, each a feature of its
//! own. The default features turn everything on;
//! `default-features = false, features = ["std"]` builds the floors up to
//! the facade only.
//!
//! This file is the table of contents: the modules, the crate root's
//! re-exports of the COM core, and the doc tests of the README and docs/.
#![no_std]
#![cfg_attr(docsrs, feature(doc_cfg))]

extern crate alloc;
#[cfg(feature = "std")]
extern crate std;

/// CIL method-body codec: headers, opcodes, exception sections, signatures and IL editing.
#[cfg(feature = "cil")]
#[cfg_attr(docsrs, doc(cfg(feature = "cil")))]
// The module's own docs link with explicit `crate::cil::` targets: stable
// rustdoc resolves them in the crate's scope, where the bare labels do not
// resolve, while nightly (docs.rs) resolves them in the module's, where the
// explicit targets are redundant.
#[allow(rustdoc::redundant_explicit_links)]
pub mod cil;
mod codes;
mod com;
/// Line and branch coverage at JIT time: Portable PDB reader, IL probes, lcov and Cobertura.
#[cfg(feature = "coverage")]
#[cfg_attr(docsrs, doc(cfg(feature = "coverage")))]
// Explicit `crate::coverage::` link targets, as for `cil` below.
#[allow(rustdoc::redundant_explicit_links)]
pub mod coverage;
mod ctypes;
#[cfg(feature = "diagnostics")]
#[cfg_attr(docsrs, doc(cfg(feature = "diagnostics")))]
pub mod diagnostics;
mod error;
// EventPipe's event format (metadata and payloads), shared by `eventpipe`
// and `nettrace` (never public itself).
#[cfg(any(feature = "eventpipe", feature = "nettrace"))]
mod event_format;
/// Decoding in-process EventPipe events: metadata blobs, payloads, the runtime provider's layouts.
#[cfg(feature = "eventpipe")]
#[cfg_attr(docsrs, doc(cfg(feature = "eventpipe")))]
pub mod eventpipe;
#[cfg(doc)]
pub mod example_generated;
// The unit tests' fake metadata scope: test support, never shipped.
#[cfg(feature = "std")]
#[cfg_attr(docsrs, doc(cfg(feature = "std")))]
pub mod facade;
#[cfg(all(test, feature = "std"))]
mod fake_scope;
#[cfg(feature = "hooks")]
#[cfg_attr(docsrs, doc(cfg(feature = "hooks")))]
pub mod hooks;
#[cfg(feature = "instrument")]
#[cfg_attr(docsrs, doc(cfg(feature = "instrument")))]
pub mod instrument;
pub mod metadata;
#[cfg(feature = "nettrace")]
#[cfg_attr(docsrs, doc(cfg(feature = "nettrace")))]
pub mod nettrace;
#[cfg(feature = "profile")]
#[cfg_attr(docsrs, doc(cfg(feature = "profile")))]
pub mod profile;
pub mod profiling;
#[cfg(feature = "sampling")]
#[cfg_attr(docsrs, doc(cfg(feature = "sampling")))]
pub mod sampling;
// The support floor, below everything: bytes, sys, sync, env.
mod support;

pub use com::abi::{
    AbiParam, AbiReturn, BOOL, BYTE, DWORD, FALSE, HANDLE, INT, LONG, LONGLONG, LPBYTE, LPCBYTE,
    LPCGUID, LPCWSTR, LPWSTR, REFCLSID, REFGUID, REFIID, SIZE_T, TRUE, UINT, UINT_PTR, ULONG,
    ULONG32, ULONGLONG, ULONG_PTR, USHORT, WCHAR,
};
pub use com::export::{
    arc_of, export, export_arc, export_multi, export_multi_arc, object_of, Exportable, ExportsAll,
    Interfaces,
};
pub use com::guid::{GuidParseError, GUID};
pub use com::hresult::{
    HResultInfo, CLASS_E_CLASSNOTAVAILABLE, CLASS_E_NOAGGREGATION, E_ABORT, E_ACCESSDENIED, E_FAIL,
    E_HANDLE, E_INVALIDARG, E_NOINTERFACE, E_NOTIMPL, E_NOT_SUFFICIENT_BUFFER, E_OUTOFMEMORY,
    E_POINTER, E_UNEXPECTED, HRESULT, REGDB_E_CLASSNOTREG, S_FALSE, S_OK,
};
pub use com::interface::{ComRef, Exports, Interface};
pub use com::server::{dll_get_class_object, ClassFactory, CreateObject};
pub use com::unknown::{
    IClassFactory, IClassFactory_Impl, IClassFactory_Vtbl, IUnknown, IUnknown_Vtbl,
};
pub use error::Error;

/// What macro expansions refer to (`com/private.rs`); not public API, may
/// change at any time.
#[doc(hidden)]
pub use com::private as __private;

/// The README's examples, compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;

/// The Rust blocks of `docs/*.md`, compiled (and run, unless `no_run`) as
/// doctests; `tests/docs_doctested.rs` checks that every page is listed.
#[cfg(doctest)]
mod docs_doctests {
    #[doc = include_str!("../docs/attach.md")]
    struct Attach;
    #[doc = include_str!("../docs/cil.md")]
    struct Cil;
    #[doc = include_str!("../docs/coverage.md")]
    struct Coverage;
    #[doc = include_str!("../docs/design.md")]
    struct Design;
    #[doc = include_str!("../docs/e2e.md")]
    struct E2e;
    #[doc = include_str!("../docs/eventpipe.md")]
    struct Eventpipe;
    #[doc = include_str!("../docs/hooks.md")]
    struct Hooks;
    #[doc = include_str!("../docs/instrumentation.md")]
    struct Instrumentation;
    #[doc = include_str!("../docs/macro.md")]
    struct Macro;
    #[doc = include_str!("../docs/out-of-process.md")]
    struct OutOfProcess;
    #[doc = include_str!("../docs/performance.md")]
    struct Performance;
    #[doc = include_str!("../docs/safety.md")]
    struct Safety;
    #[doc = include_str!("../docs/sampling.md")]
    struct Sampling;
    #[doc = include_str!("../docs/troubleshooting.md")]
    struct Troubleshooting;
}
