//! `IUnknown` and `IClassFactory`, declared with the crate's own macros.

use core::ffi::c_void;

use crate::com::abi::BOOL;
use crate::com::guid::GUID;
use crate::com::hresult::{HRESULT, S_OK};

crate::__com_root_interface! {
    /// The root of every COM interface: identity and reference counting.
    ///
    /// Every COM object's vtable starts with these three slots. An exported
    /// Rust object gets them from the library (QueryInterface answers the
    /// exported interface's whole inheritance chain; AddRef/Release are
    /// atomic); an invoker's `Clone`, `Drop` and `cast` call them for you.
    #[iid("00000000-0000-0000-C000-000000000046")]
    #[vtable(IUnknown_Vtbl)]
    pub unsafe interface IUnknown {
        /// Asks for a pointer to another interface of the same object; on
        /// success `*ppv` holds a new reference, on failure null.
        fn QueryInterface(riid: *const GUID, ppv: *mut *mut c_void) -> HRESULT;
        /// Takes a reference; returns the new count (for diagnostics only).
        fn AddRef() -> u32;
        /// Gives a reference back; returns the new count (for diagnostics only).
        fn Release() -> u32;
    }
}

crate::com_interface! {
    /// Creates instances of a COM class: what `DllGetClassObject` returns to
    /// the runtime, which then calls `CreateInstance` to create the profiler.
    #[iid("00000001-0000-0000-C000-000000000046")]
    #[vtable(IClassFactory_Vtbl)]
    #[implement(IClassFactory_Impl)]
    pub unsafe interface IClassFactory: IUnknown {
        /// Creates an uninitialised object of the class and asks it for
        /// interface `riid`. A non-null `outer` (aggregation) is refused with
        /// `CLASS_E_NOAGGREGATION` by well-behaved factories.
        fn CreateInstance(outer: *mut c_void, riid: *const GUID, ppv: *mut *mut c_void) -> HRESULT;
        /// Keeps the server loaded (`lock` non-zero) or lets it unload. The
        /// default does nothing and returns `S_OK`.
        fn LockServer(lock: BOOL) -> HRESULT { S_OK }
    }
}
