//! IMethodMalloc, ICorProfilerFunctionControl and ICorProfilerAssemblyReferenceProvider.
//!
//! (More in the [`profiling`](crate::profiling) module documentation.)
#![allow(non_snake_case)]

use core::ffi::c_void;

use crate::profiling::*;
use crate::{com_interface, BYTE, DWORD, E_NOTIMPL, HRESULT, ULONG};

com_interface! {
    /// An allocator for new IL method bodies, placed where the module can
    /// reach them; memory cannot be freed. Deprecated (any allocator now
    /// works). Introduced in .NET Framework 1.0.
    #[iid("A0EFB28B-6EE2-4D7B-B983-A75EF7BEEDB8")]
    #[vtable(IMethodMalloc_Vtbl)]
    #[implement(IMethodMalloc_Impl)]
    #[agile]
    pub unsafe interface IMethodMalloc: IUnknown {
        /// Allocates `cb` bytes after the module's base address; null on failure.
        fn Alloc(cb: ULONG) -> *mut c_void { core::ptr::null_mut() }
    }

    /// Sets how one method is recompiled during ReJIT (received in
    /// `ICorProfilerCallback4::GetReJITParameters`). Introduced in .NET
    /// Framework 4.5.
    #[iid("F0963021-E1EA-4732-8581-E01B0BD3C0C6")]
    #[vtable(ICorProfilerFunctionControl_Vtbl)]
    #[implement(ICorProfilerFunctionControl_Impl)]
    #[agile]
    pub unsafe interface ICorProfilerFunctionControl: IUnknown {
        /// Sets `COR_PRF_CODEGEN_FLAGS` bits for this method's recompilation.
        fn SetCodegenFlags(flags: DWORD) -> HRESULT { E_NOTIMPL }
        /// Replaces the method's body with the IL header and code in `pbNewILMethodHeader` (`cbNewILMethodHeader` bytes).
        fn SetILFunctionBody(cbNewILMethodHeader: ULONG, pbNewILMethodHeader: *const BYTE) -> HRESULT { E_NOTIMPL }
        /// Sets the old-to-new IL offset map of the new body (not implemented by the runtime).
        fn SetILInstrumentedCodeMap(cILMapEntries: ULONG, rgILMapEntries: *mut COR_IL_MAP) -> HRESULT { E_NOTIMPL }
    }

    /// Collects the assembly references a profiler will add to an assembly
    /// (received in `ICorProfilerCallback6::GetAssemblyReferences`, valid only
    /// during that call). Introduced in .NET Framework 4.5.2.
    #[iid("66A78C24-2EEF-4F65-B45F-DD1D8038BF3C")]
    #[vtable(ICorProfilerAssemblyReferenceProvider_Vtbl)]
    #[implement(ICorProfilerAssemblyReferenceProvider_Impl)]
    #[agile]
    pub unsafe interface ICorProfilerAssemblyReferenceProvider: IUnknown {
        /// Declares one assembly reference the profiler will emit later.
        fn AddAssemblyReference(pAssemblyRefInfo: *const COR_PRF_ASSEMBLY_REFERENCE_INFO) -> HRESULT { E_NOTIMPL }
    }
}
