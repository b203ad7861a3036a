//! The ICorProfiler*Enum interfaces: enumerators over objects, functions, modules, threads and methods.
//!
//! (More in the [`profiling`](crate::profiling) module documentation.)
#![allow(non_snake_case)]

use core::ffi::c_void;

use crate::profiling::*;
use crate::{com_interface, E_NOTIMPL, HRESULT, ULONG};

com_interface! {
    /// An enumerator over objects (the frozen objects of NGen images, or the
    /// objects outside the GC heap). Introduced in .NET Framework 2.0.
    #[iid("2C6269BD-2D13-4321-AE12-6686365FD6AF")]
    #[vtable(ICorProfilerObjectEnum_Vtbl)]
    #[implement(ICorProfilerObjectEnum_Impl)]
    #[agile]
    pub unsafe interface ICorProfilerObjectEnum: IUnknown {
        /// Skips the next `celt` objects.
        fn Skip(celt: ULONG) -> HRESULT { E_NOTIMPL }
        /// Goes back to the first object.
        fn Reset() -> HRESULT { E_NOTIMPL }
        /// Writes a copy of this enumerator, at the same position, to `*ppEnum` (an `ICorProfilerObjectEnum *`).
        fn Clone(ppEnum: *mut *mut c_void) -> HRESULT { E_NOTIMPL }
        /// Writes the total number of objects to `*pcelt`.
        fn GetCount(pcelt: *mut ULONG) -> HRESULT { E_NOTIMPL }
        /// Copies up to `celt` objects into `objects` and their number into `*pceltFetched`; S_FALSE when fewer remained.
        fn Next(celt: ULONG, objects: *mut ObjectID, pceltFetched: *mut ULONG) -> HRESULT { E_NOTIMPL }
    }

    /// An enumerator over functions (jitted functions, with their ReJIT IDs).
    /// Introduced in .NET Framework 2.0.
    #[iid("FF71301A-B994-429D-A10B-B345A65280EF")]
    #[vtable(ICorProfilerFunctionEnum_Vtbl)]
    #[implement(ICorProfilerFunctionEnum_Impl)]
    #[agile]
    pub unsafe interface ICorProfilerFunctionEnum: IUnknown {
        /// Skips the next `celt` functions.
        fn Skip(celt: ULONG) -> HRESULT { E_NOTIMPL }
        /// Goes back to the first function.
        fn Reset() -> HRESULT { E_NOTIMPL }
        /// Writes a copy of this enumerator, at the same position, to `*ppEnum` (an `ICorProfilerFunctionEnum *`).
        fn Clone(ppEnum: *mut *mut c_void) -> HRESULT { E_NOTIMPL }
        /// Writes the total number of functions to `*pcelt`.
        fn GetCount(pcelt: *mut ULONG) -> HRESULT { E_NOTIMPL }
        /// Copies up to `celt` functions into `ids` and their number into `*pceltFetched`; S_FALSE when fewer remained.
        fn Next(celt: ULONG, ids: *mut COR_PRF_FUNCTION, pceltFetched: *mut ULONG) -> HRESULT { E_NOTIMPL }
    }

    /// An enumerator over loaded modules. Introduced in .NET Framework 4.
    #[iid("B0266D75-2081-4493-AF7F-028BA34DB891")]
    #[vtable(ICorProfilerModuleEnum_Vtbl)]
    #[implement(ICorProfilerModuleEnum_Impl)]
    #[agile]
    pub unsafe interface ICorProfilerModuleEnum: IUnknown {
        /// Skips the next `celt` modules.
        fn Skip(celt: ULONG) -> HRESULT { E_NOTIMPL }
        /// Goes back to the first module.
        fn Reset() -> HRESULT { E_NOTIMPL }
        /// Writes a copy of this enumerator, at the same position, to `*ppEnum` (an `ICorProfilerModuleEnum *`).
        fn Clone(ppEnum: *mut *mut c_void) -> HRESULT { E_NOTIMPL }
        /// Writes the total number of modules to `*pcelt`.
        fn GetCount(pcelt: *mut ULONG) -> HRESULT { E_NOTIMPL }
        /// Copies up to `celt` module IDs into `ids` and their number into `*pceltFetched`; S_FALSE when fewer remained.
        fn Next(celt: ULONG, ids: *mut ModuleID, pceltFetched: *mut ULONG) -> HRESULT { E_NOTIMPL }
    }

    /// An enumerator over managed threads. Introduced in .NET Framework 4.5.
    #[iid("571194F7-25ED-419F-AA8B-7016B3159701")]
    #[vtable(ICorProfilerThreadEnum_Vtbl)]
    #[implement(ICorProfilerThreadEnum_Impl)]
    #[agile]
    pub unsafe interface ICorProfilerThreadEnum: IUnknown {
        /// Skips the next `celt` threads.
        fn Skip(celt: ULONG) -> HRESULT { E_NOTIMPL }
        /// Goes back to the first thread.
        fn Reset() -> HRESULT { E_NOTIMPL }
        /// Writes a copy of this enumerator, at the same position, to `*ppEnum` (an `ICorProfilerThreadEnum *`).
        fn Clone(ppEnum: *mut *mut c_void) -> HRESULT { E_NOTIMPL }
        /// Writes the total number of threads to `*pcelt`.
        fn GetCount(pcelt: *mut ULONG) -> HRESULT { E_NOTIMPL }
        /// Copies up to `celt` thread IDs into `ids` and their number into `*pceltFetched`; S_FALSE when fewer remained.
        fn Next(celt: ULONG, ids: *mut ThreadID, pceltFetched: *mut ULONG) -> HRESULT { E_NOTIMPL }
    }

    /// An enumerator over methods as (module, methodDef) pairs, for example
    /// the inliners of a method. Introduced in .NET Framework 4.6.
    #[iid("FCCEE788-0088-454B-A811-C99F298D1942")]
    #[vtable(ICorProfilerMethodEnum_Vtbl)]
    #[implement(ICorProfilerMethodEnum_Impl)]
    #[agile]
    pub unsafe interface ICorProfilerMethodEnum: IUnknown {
        /// Skips the next `celt` methods.
        fn Skip(celt: ULONG) -> HRESULT { E_NOTIMPL }
        /// Goes back to the first method.
        fn Reset() -> HRESULT { E_NOTIMPL }
        /// Writes a copy of this enumerator, at the same position, to `*ppEnum` (an `ICorProfilerMethodEnum *`).
        fn Clone(ppEnum: *mut *mut c_void) -> HRESULT { E_NOTIMPL }
        /// Writes the total number of methods to `*pcelt`.
        fn GetCount(pcelt: *mut ULONG) -> HRESULT { E_NOTIMPL }
        /// Copies up to `celt` methods into `elements` and their number into `*pceltFetched`; S_FALSE when fewer remained.
        fn Next(celt: ULONG, elements: *mut COR_PRF_METHOD, pceltFetched: *mut ULONG) -> HRESULT { E_NOTIMPL }
    }
}
