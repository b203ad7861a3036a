//! An in-process COM server: `DllGetClassObject`, `DllCanUnloadNow` and the
//! class factory behind them, exported by [`com_class!`](crate::com_class).

use core::ffi::c_void;

use crate::com::export::query_arguments;

use crate::com::export::export;
use crate::com::guid::GUID;
use crate::com::hresult::{CLASS_E_CLASSNOTAVAILABLE, CLASS_E_NOAGGREGATION, E_POINTER, HRESULT};
use crate::com::unknown::{IClassFactory, IClassFactory_Impl, IUnknown};

/// Creates one new object of a COM class, already exported (usually with
/// [`export`](crate::export)), owning the reference it returns.
pub type CreateObject = fn() -> IUnknown;

/// The class factory `DllGetClassObject` hands out: `CreateInstance` refuses
/// aggregation, creates the object and asks it for the requested interface.
#[derive(Debug)]
pub struct ClassFactory {
    create: CreateObject,
}

impl ClassFactory {
    /// A factory whose instances come from `create`.
    pub const fn new(create: CreateObject) -> ClassFactory {
        ClassFactory { create }
    }
}

impl IClassFactory_Impl for ClassFactory {
    unsafe fn CreateInstance(
        &self,
        outer: *mut c_void,
        riid: *const GUID,
        ppv: *mut *mut c_void,
    ) -> HRESULT {
        // SAFETY: COM passes `riid` and `ppv` valid or null.
        if let Err(hr) = unsafe { query_arguments(riid, ppv) } {
            return hr;
        }
        if !outer.is_null() {
            return CLASS_E_NOAGGREGATION;
        }
        let object = (self.create)();
        // SAFETY: `riid` and `ppv` were checked non-null; QueryInterface
        // writes a new reference (or null) to `*ppv`; `object`'s own
        // reference is released when it drops.
        unsafe { object.QueryInterface(riid, ppv) }
    }
}

/// The body of an exported `DllGetClassObject`: checks the CLSID
/// (`CLASS_E_CLASSNOTAVAILABLE` on a mismatch, which, with the `std`
/// feature, is said on stderr when the environment variable `CORPROF_DEBUG`
/// is `1`) and answers `riid` with a [`ClassFactory`] for `create`.
///
/// # Safety
///
/// `rclsid` and `riid` must each be null or point to a GUID, and `ppv` must
/// be null or point to writable pointer storage, as COM's contract for
/// `DllGetClassObject` says.
pub unsafe fn dll_get_class_object(
    rclsid: *const GUID,
    riid: *const GUID,
    ppv: *mut *mut c_void,
    clsid: &GUID,
    create: CreateObject,
) -> HRESULT {
    // SAFETY: valid or null (caller's contract).
    if let Err(hr) = unsafe { query_arguments(riid, ppv) } {
        return hr;
    }
    if rclsid.is_null() {
        return E_POINTER;
    }
    // SAFETY: non-null and pointing at a GUID (caller's contract).
    let requested = unsafe { *rclsid };
    if requested != *clsid {
        #[cfg(feature = "std")]
        report_unserved_clsid(&requested, clsid);
        return CLASS_E_CLASSNOTAVAILABLE;
    }
    let factory: IClassFactory = export(ClassFactory::new(create));
    // SAFETY: `riid` and `ppv` are valid (checked above); the factory's own
    // reference is released when `factory` drops.
    unsafe { factory.QueryInterface(riid, ppv) }
}

/// With `CORPROF_DEBUG=1`, says on stderr that `DllGetClassObject` was
/// asked for a class this library does not serve: the usual reason a
/// profiler "does not load" (a `CORECLR_PROFILER` that differs from the
/// CLSID given to `com_class!`/`profiler!`).
#[cfg(feature = "std")]
fn report_unserved_clsid(requested: &GUID, served: &GUID) {
    if std::env::var_os("CORPROF_DEBUG").is_some_and(|value| value == "1") {
        std::eprintln!(
            "corprof: DllGetClassObject was asked for CLSID {requested:#}, but this library serves \
             {served:#}; answering CLASS_E_CLASSNOTAVAILABLE (check CORECLR_PROFILER)"
        );
    }
}

/// Exports `DllGetClassObject` and `DllCanUnloadNow` from a `cdylib`, serving
/// one COM class.
///
/// `$clsid` is the class ID in registry form, checked at compile time;
/// `$create` is a `fn() -> IUnknown` (a non-capturing closure works) that
/// creates and exports one new object. `DllGetClassObject` refuses any other
/// CLSID with `CLASS_E_CLASSNOTAVAILABLE` (and says so on stderr when
/// `CORPROF_DEBUG=1`); the factory's `CreateInstance`
/// refuses aggregation with `CLASS_E_NOAGGREGATION` and answers the requested
/// IID through the new object's `QueryInterface`. `DllCanUnloadNow` always
/// answers `S_FALSE`: the library stays loaded, which is what the .NET
/// runtime expects of a profiler.
///
/// For a profiler written against the safe facade, use
/// the facade's `profiler!`, which calls this macro.
///
/// ```
/// use corprof::{com_class, export, IUnknown};
/// struct Server;
/// com_class!("8D5F4A2B-1C3E-4F60-9A7B-0C1D2E3F4A5B", || export::<IUnknown, _>(Server));
/// # fn main() {}
/// ```
#[macro_export]
macro_rules! com_class {
    ($clsid:expr, $create:expr $(,)?) => {
        /// The class ID served by this library's `DllGetClassObject`.
        pub const CORPROF_CLSID: $crate::GUID = $crate::GUID::parse($clsid);

        /// COM entry point: returns the class factory for `CORPROF_CLSID`.
        ///
        /// # Safety
        ///
        /// Called by the COM runtime with valid (or null) pointers.
        #[no_mangle]
        pub unsafe extern "system" fn DllGetClassObject(
            rclsid: *const $crate::GUID,
            riid: *const $crate::GUID,
            ppv: *mut *mut $crate::__private::core::ffi::c_void,
        ) -> $crate::HRESULT {
            const CREATE: $crate::CreateObject = $create;
            // SAFETY: forwarded from the caller, who follows COM's contract.
            unsafe { $crate::dll_get_class_object(rclsid, riid, ppv, &CORPROF_CLSID, CREATE) }
        }

        /// COM entry point: this library never asks to be unloaded.
        #[no_mangle]
        pub extern "system" fn DllCanUnloadNow() -> $crate::HRESULT {
            $crate::S_FALSE
        }
    };
}
