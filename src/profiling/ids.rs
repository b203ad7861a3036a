//! The runtime's opaque IDs (`typedef UINT_PTR FunctionID;` and friends in
//! corprof.idl): pointer-sized, and distinct types here so that one kind
//! cannot be passed where another is expected.
//!
//! (More in the [`profiling`](crate::profiling) module documentation.)
#![allow(non_camel_case_types)]

crate::ctypes::id_types! {
    /// A process (`ProcessID`).
    ProcessID;
    /// A loaded assembly (`AssemblyID`).
    AssemblyID;
    /// An application domain (`AppDomainID`).
    AppDomainID;
    /// A loaded module (`ModuleID`).
    ModuleID;
    /// A loaded class or type instantiation (`ClassID`).
    ClassID;
    /// A managed thread (`ThreadID`).
    ThreadID;
    /// A remoting context (`ContextID`).
    ContextID;
    /// A function, or one generic instantiation of it (`FunctionID`).
    FunctionID;
    /// An object on the managed heap (`ObjectID`); only valid until the next
    /// garbage collection moves it.
    ObjectID;
    /// A GC handle (`GCHandleID`).
    GCHandleID;
    /// A ReJIT version of a function (`ReJITID`).
    ReJITID;
    /// Opaque data identifying one call, passed to the ELT3 hooks with
    /// `WithInfo` (`COR_PRF_ELT_INFO`).
    COR_PRF_ELT_INFO;
    /// Opaque stack frame information (`COR_PRF_FRAME_INFO`).
    COR_PRF_FRAME_INFO;
}

/// A handle to an object, for the non-GC heap APIs of `ICorProfilerInfo13`
/// (`typedef void** ObjectHandleID`): a pointer, not an integer ID.
pub type ObjectHandleID = *mut *mut core::ffi::c_void;
