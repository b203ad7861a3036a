//! The plain C enums of corprof.idl (reasons, kinds, generations, runtime
//! types, EventPipe types and levels): one value at a time, never combined.
//!
//! (More in the [`profiling`](crate::profiling) module documentation.)
#![allow(non_camel_case_types, non_upper_case_globals)]

use crate::ctypes::c_enum;

c_enum! {
    /// Special `ilOffset` values in a [`COR_DEBUG_IL_TO_NATIVE_MAP`](super::COR_DEBUG_IL_TO_NATIVE_MAP)
    /// entry, marking native code that maps to no IL instruction
    /// (`CorDebugIlToNativeMappingTypes`).
    ///
    /// The field itself is a `ULONG32`: compare `entry.ilOffset as i32` with
    /// these values' `.0`.
    pub struct CorDebugIlToNativeMappingTypes(i32);
    /// The native range corresponds to no IL offset.
    NO_MAPPING = -1;
    /// The native range is the method's prolog.
    PROLOG = -2;
    /// The native range is an epilog of the method.
    EPILOG = -3;
}

c_enum! {
    /// Result of a search for a precompiled (NGEN/ReadyToRun) function body,
    /// passed to `JITCachedFunctionSearchFinished` (`COR_PRF_JIT_CACHE`).
    /// Note that "found" is 0.
    pub struct COR_PRF_JIT_CACHE(u32);
    /// A precompiled body was found and will be used.
    COR_PRF_CACHED_FUNCTION_FOUND = 0;
    /// No precompiled body was found; the function will be JIT-compiled.
    COR_PRF_CACHED_FUNCTION_NOT_FOUND = 1;
}

c_enum! {
    /// Why control crossed between managed and unmanaged code, in the
    /// transition callbacks (`COR_PRF_TRANSITION_REASON`).
    pub struct COR_PRF_TRANSITION_REASON(u32);
    /// The transition is a call into the other side.
    COR_PRF_TRANSITION_CALL = 0;
    /// The transition is a return from the other side.
    COR_PRF_TRANSITION_RETURN = 1;
}

c_enum! {
    /// Why the runtime is suspending its threads, in `RuntimeSuspendStarted`
    /// (`COR_PRF_SUSPEND_REASON`). There is no value 5.
    pub struct COR_PRF_SUSPEND_REASON(u32);
    /// A reason not listed here.
    COR_PRF_SUSPEND_OTHER = 0;
    /// Suspending to run a garbage collection.
    COR_PRF_SUSPEND_FOR_GC = 1;
    /// Suspending to shut down an application domain.
    COR_PRF_SUSPEND_FOR_APPDOMAIN_SHUTDOWN = 2;
    /// Suspending to pitch (discard) JIT-compiled code.
    COR_PRF_SUSPEND_FOR_CODE_PITCHING = 3;
    /// Suspending because the runtime is shutting down.
    COR_PRF_SUSPEND_FOR_SHUTDOWN = 4;
    /// Suspending for the (retired) in-process debugger.
    COR_PRF_SUSPEND_FOR_INPROC_DEBUGGER = 6;
    /// Suspending to prepare for a garbage collection.
    COR_PRF_SUSPEND_FOR_GC_PREP = 7;
    /// Suspending to apply a ReJIT request.
    COR_PRF_SUSPEND_FOR_REJIT = 8;
    /// Suspending because the profiler asked (`ICorProfilerInfo10::SuspendRuntime`).
    COR_PRF_SUSPEND_FOR_PROFILER = 9;
}

c_enum! {
    /// Which runtime is hosting the profiler, from `GetRuntimeInformation`
    /// (`COR_PRF_RUNTIME_TYPE`).
    pub struct COR_PRF_RUNTIME_TYPE(u32);
    /// The .NET Framework desktop CLR.
    COR_PRF_DESKTOP_CLR = 0x1;
    /// CoreCLR (.NET Core, .NET 5 and later).
    COR_PRF_CORE_CLR = 0x2;
}

c_enum! {
    /// The type of one parameter of an EventPipe event defined by the
    /// profiler (`COR_PRF_EVENTPIPE_PARAM_TYPE`); the values follow
    /// `System.TypeCode` (2 is unused).
    pub struct COR_PRF_EVENTPIPE_PARAM_TYPE(u32);
    /// An object (a non-value instance).
    COR_PRF_EVENTPIPE_OBJECT = 1;
    /// A Boolean.
    COR_PRF_EVENTPIPE_BOOLEAN = 3;
    /// A UTF-16 character.
    COR_PRF_EVENTPIPE_CHAR = 4;
    /// A signed 8-bit integer.
    COR_PRF_EVENTPIPE_SBYTE = 5;
    /// An unsigned 8-bit integer.
    COR_PRF_EVENTPIPE_BYTE = 6;
    /// A signed 16-bit integer.
    COR_PRF_EVENTPIPE_INT16 = 7;
    /// An unsigned 16-bit integer.
    COR_PRF_EVENTPIPE_UINT16 = 8;
    /// A signed 32-bit integer.
    COR_PRF_EVENTPIPE_INT32 = 9;
    /// An unsigned 32-bit integer.
    COR_PRF_EVENTPIPE_UINT32 = 10;
    /// A signed 64-bit integer.
    COR_PRF_EVENTPIPE_INT64 = 11;
    /// An unsigned 64-bit integer.
    COR_PRF_EVENTPIPE_UINT64 = 12;
    /// A 32-bit IEEE float.
    COR_PRF_EVENTPIPE_SINGLE = 13;
    /// A 64-bit IEEE float.
    COR_PRF_EVENTPIPE_DOUBLE = 14;
    /// A `System.Decimal`.
    COR_PRF_EVENTPIPE_DECIMAL = 15;
    /// A `System.DateTime`.
    COR_PRF_EVENTPIPE_DATETIME = 16;
    /// A GUID.
    COR_PRF_EVENTPIPE_GUID = 17;
    /// A UTF-16 string.
    COR_PRF_EVENTPIPE_STRING = 18;
    /// An array of any length (the element type is given separately).
    COR_PRF_EVENTPIPE_ARRAY = 19;
}

c_enum! {
    /// The verbosity level of an EventPipe event (`COR_PRF_EVENTPIPE_LEVEL`),
    /// as in ETW: lower is more important.
    pub struct COR_PRF_EVENTPIPE_LEVEL(u32);
    /// Always logged, whatever level the session asked for.
    COR_PRF_EVENTPIPE_LOGALWAYS = 0;
    /// A critical error.
    COR_PRF_EVENTPIPE_CRITICAL = 1;
    /// An error.
    COR_PRF_EVENTPIPE_ERROR = 2;
    /// A warning.
    COR_PRF_EVENTPIPE_WARNING = 3;
    /// Informational.
    COR_PRF_EVENTPIPE_INFORMATIONAL = 4;
    /// Detailed diagnostics.
    COR_PRF_EVENTPIPE_VERBOSE = 5;
}

c_enum! {
    /// The kind of GC handle `ICorProfilerInfo13::CreateHandle` creates
    /// (`COR_PRF_HANDLE_TYPE`).
    pub struct COR_PRF_HANDLE_TYPE(u32);
    /// A weak handle: does not keep the object alive.
    COR_PRF_HANDLE_TYPE_WEAK = 0x1;
    /// A strong handle: keeps the object alive.
    COR_PRF_HANDLE_TYPE_STRONG = 0x2;
    /// A pinned handle: keeps the object alive and stops the GC moving it.
    COR_PRF_HANDLE_TYPE_PINNED = 0x3;
}

c_enum! {
    /// Where a GC root reported by `RootReferences2` lives
    /// (`COR_PRF_GC_ROOT_KIND`).
    pub struct COR_PRF_GC_ROOT_KIND(u32);
    /// A variable on a thread's stack.
    COR_PRF_GC_ROOT_STACK = 1;
    /// An entry in the finalizer queue.
    COR_PRF_GC_ROOT_FINALIZER = 2;
    /// A GC handle.
    COR_PRF_GC_ROOT_HANDLE = 3;
    /// Any other kind of root.
    COR_PRF_GC_ROOT_OTHER = 0;
}

c_enum! {
    /// A garbage-collector generation or heap, as used by
    /// `GetGenerationBounds` and `GetObjectGeneration` (`COR_PRF_GC_GENERATION`).
    pub struct COR_PRF_GC_GENERATION(u32);
    /// Generation 0 (youngest).
    COR_PRF_GC_GEN_0 = 0;
    /// Generation 1.
    COR_PRF_GC_GEN_1 = 1;
    /// Generation 2 (oldest).
    COR_PRF_GC_GEN_2 = 2;
    /// The large object heap.
    COR_PRF_GC_LARGE_OBJECT_HEAP = 3;
    /// The pinned object heap (.NET 5 and later).
    COR_PRF_GC_PINNED_OBJECT_HEAP = 4;
}

c_enum! {
    /// The kind of exception-handling clause in a
    /// [`COR_PRF_EX_CLAUSE_INFO`](super::COR_PRF_EX_CLAUSE_INFO) (`COR_PRF_CLAUSE_TYPE`).
    pub struct COR_PRF_CLAUSE_TYPE(u32);
    /// No clause (only seen in error cases).
    COR_PRF_CLAUSE_NONE = 0;
    /// A filter clause.
    COR_PRF_CLAUSE_FILTER = 1;
    /// A catch clause.
    COR_PRF_CLAUSE_CATCH = 2;
    /// A finally clause.
    COR_PRF_CLAUSE_FINALLY = 3;
}

c_enum! {
    /// Why a garbage collection happened, in `GarbageCollectionStarted`
    /// (`COR_PRF_GC_REASON`).
    pub struct COR_PRF_GC_REASON(u32);
    /// The application asked for it (`GC.Collect`).
    COR_PRF_GC_INDUCED = 1;
    /// Any other reason.
    COR_PRF_GC_OTHER = 0;
}

c_enum! {
    /// Special ID values the runtime reports in place of a real ID
    /// (`COR_PRF_MISC`).
    ///
    /// The IDL writes them as 32-bit values (`0xFFFFFFFD`...), but they are
    /// stored into pointer-sized IDs, where the runtime's C++ compiler may
    /// sign-extend them (`0xFFFF_FFFF_FFFF_FFFD` on 64-bit Windows) or not;
    /// compare the ID's low 32 bits with `.0`.
    pub struct COR_PRF_MISC(u32);
    /// The `AssemblyID` `GetModuleInfo` reports for a module not yet attached
    /// to an assembly.
    PROFILER_PARENT_UNKNOWN = 0xFFFF_FFFD;
    /// A `ClassID` for globals that belong to no class.
    PROFILER_GLOBAL_CLASS = 0xFFFF_FFFE;
    /// A `ModuleID` for globals that belong to no particular module.
    PROFILER_GLOBAL_MODULE = 0xFFFF_FFFF;
}
