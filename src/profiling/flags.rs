//! The flag-set C enums of corprof.idl: event masks, module flags, static
//! kinds, GC-root properties and the like, whose values are bits the IDL
//! means to be or-ed together.
//!
//! (More in the [`profiling`](crate::profiling) module documentation.)
#![allow(non_camel_case_types, non_upper_case_globals)]

use crate::ctypes::c_flags;

c_flags! {
    /// Which callbacks and runtime behaviours a profiler asks for, passed to
    /// `SetEventMask` / the low word of `SetEventMask2` (`COR_PRF_MONITOR`).
    pub struct COR_PRF_MONITOR(u32);
    /// No events.
    COR_PRF_MONITOR_NONE = 0x0000_0000;
    /// `FunctionUnloadStarted`.
    COR_PRF_MONITOR_FUNCTION_UNLOADS = 0x0000_0001;
    /// The class load and unload callbacks.
    COR_PRF_MONITOR_CLASS_LOADS = 0x0000_0002;
    /// The module load, unload and attached-to-assembly callbacks.
    COR_PRF_MONITOR_MODULE_LOADS = 0x0000_0004;
    /// The assembly load and unload callbacks.
    COR_PRF_MONITOR_ASSEMBLY_LOADS = 0x0000_0008;
    /// The application domain creation and shutdown callbacks.
    COR_PRF_MONITOR_APPDOMAIN_LOADS = 0x0000_0010;
    /// The JIT compilation, pitching and inlining callbacks.
    COR_PRF_MONITOR_JIT_COMPILATION = 0x0000_0020;
    /// The exception thrown, search, unwind and catcher callbacks.
    COR_PRF_MONITOR_EXCEPTIONS = 0x0000_0040;
    /// The garbage-collection callbacks (start/finish, moved and surviving
    /// references, roots, handles, finalizer queue).
    COR_PRF_MONITOR_GC = 0x0000_0080;
    /// `ObjectAllocated` (also needs [`COR_PRF_ENABLE_OBJECT_ALLOCATED`] at startup).
    COR_PRF_MONITOR_OBJECT_ALLOCATED = 0x0000_0100;
    /// The thread created, destroyed, assigned and renamed callbacks.
    COR_PRF_MONITOR_THREADS = 0x0000_0200;
    /// The remoting callbacks (.NET Framework only; no remoting in CoreCLR).
    COR_PRF_MONITOR_REMOTING = 0x0000_0400;
    /// The managed/unmanaged transition callbacks.
    COR_PRF_MONITOR_CODE_TRANSITIONS = 0x0000_0800;
    /// The function enter, leave and tailcall hooks.
    COR_PRF_MONITOR_ENTERLEAVE = 0x0000_1000;
    /// The COM-interop vtable created/destroyed callbacks.
    COR_PRF_MONITOR_CCW = 0x0000_2000;
    /// Remoting callbacks carry a GUID cookie (.NET Framework only); includes
    /// [`COR_PRF_MONITOR_REMOTING`].
    COR_PRF_MONITOR_REMOTING_COOKIE = 0x0000_4000 | COR_PRF_MONITOR_REMOTING.0;
    /// Remoting callbacks also report asynchronous calls (.NET Framework
    /// only); includes [`COR_PRF_MONITOR_REMOTING`].
    COR_PRF_MONITOR_REMOTING_ASYNC = 0x0000_8000 | COR_PRF_MONITOR_REMOTING.0;
    /// The runtime suspend and resume callbacks.
    COR_PRF_MONITOR_SUSPENDS = 0x0001_0000;
    /// The cached (precompiled) function search callbacks.
    COR_PRF_MONITOR_CACHE_SEARCHES = 0x0002_0000;
    /// Allows `RequestReJIT` and `RequestRevert` (set at startup).
    COR_PRF_ENABLE_REJIT = 0x0004_0000;
    /// Obsolete: in-process debugging is no longer supported; has no effect.
    COR_PRF_ENABLE_INPROC_DEBUGGING = 0x0008_0000;
    /// Obsolete: the runtime always keeps IL-to-native maps now.
    COR_PRF_ENABLE_JIT_MAPS = 0x0010_0000;
    /// Turns off all inlining.
    COR_PRF_DISABLE_INLINING = 0x0020_0000;
    /// Turns off all JIT optimizations.
    COR_PRF_DISABLE_OPTIMIZATIONS = 0x0040_0000;
    /// Makes `ObjectAllocated` notifications possible later (set at startup).
    COR_PRF_ENABLE_OBJECT_ALLOCATED = 0x0080_0000;
    /// The (obsolete) CLR-catcher exception callbacks.
    COR_PRF_MONITOR_CLR_EXCEPTIONS = 0x0100_0000;
    /// Every callback event (the monitoring bits, not the behaviour switches).
    COR_PRF_MONITOR_ALL = 0x0107_FFFF;
    /// Argument values are passed to the `FunctionEnter2` hook.
    COR_PRF_ENABLE_FUNCTION_ARGS = 0x0200_0000;
    /// The return value is passed to the `FunctionLeave2` hook.
    COR_PRF_ENABLE_FUNCTION_RETVAL = 0x0400_0000;
    /// Frame information from the ELT hooks gives exact generic instantiations.
    COR_PRF_ENABLE_FRAME_INFO = 0x0800_0000;
    /// Allows `DoStackSnapshot`.
    COR_PRF_ENABLE_STACK_SNAPSHOT = 0x1000_0000;
    /// Prefer profiler-enhanced native images (.NET Framework).
    COR_PRF_USE_PROFILE_IMAGES = 0x2000_0000;
    /// Skips security-transparency checks for full-trust code (.NET Framework).
    COR_PRF_DISABLE_TRANSPARENCY_CHECKS_UNDER_FULL_TRUST = 0x4000_0000;
    /// Loads no precompiled (NGEN/ReadyToRun) images at all.
    COR_PRF_DISABLE_ALL_NGEN_IMAGES = 0x8000_0000;
    /// The mask of valid bits, as the IDL defines it (`0x8FFFFFFF`: note
    /// that this leaves out bits 28 to 30, [`COR_PRF_ENABLE_STACK_SNAPSHOT`],
    /// [`COR_PRF_USE_PROFILE_IMAGES`] and
    /// [`COR_PRF_DISABLE_TRANSPARENCY_CHECKS_UNDER_FULL_TRUST`]).
    COR_PRF_ALL = 0x8FFF_FFFF;
    /// The flags that need profiler-enhanced images.
    COR_PRF_REQUIRE_PROFILE_IMAGE = COR_PRF_USE_PROFILE_IMAGES.0
        | COR_PRF_MONITOR_CODE_TRANSITIONS.0
        | COR_PRF_MONITOR_ENTERLEAVE.0;
    /// The flags an attaching profiler may set.
    COR_PRF_ALLOWABLE_AFTER_ATTACH = COR_PRF_MONITOR_THREADS.0
        | COR_PRF_MONITOR_MODULE_LOADS.0
        | COR_PRF_MONITOR_ASSEMBLY_LOADS.0
        | COR_PRF_MONITOR_APPDOMAIN_LOADS.0
        | COR_PRF_ENABLE_STACK_SNAPSHOT.0
        | COR_PRF_MONITOR_GC.0
        | COR_PRF_MONITOR_SUSPENDS.0
        | COR_PRF_MONITOR_CLASS_LOADS.0
        | COR_PRF_MONITOR_EXCEPTIONS.0
        | COR_PRF_MONITOR_JIT_COMPILATION.0
        | COR_PRF_DISABLE_INLINING.0
        | COR_PRF_DISABLE_OPTIMIZATIONS.0
        | COR_PRF_ENABLE_REJIT.0;
    /// The flags a notification-only profiler (`LoadAsNotificationOnly`) may set.
    COR_PRF_ALLOWABLE_NOTIFICATION_PROFILER = COR_PRF_MONITOR_FUNCTION_UNLOADS.0
        | COR_PRF_MONITOR_CLASS_LOADS.0
        | COR_PRF_MONITOR_MODULE_LOADS.0
        | COR_PRF_MONITOR_ASSEMBLY_LOADS.0
        | COR_PRF_MONITOR_APPDOMAIN_LOADS.0
        | COR_PRF_MONITOR_JIT_COMPILATION.0
        | COR_PRF_MONITOR_EXCEPTIONS.0
        | COR_PRF_MONITOR_OBJECT_ALLOCATED.0
        | COR_PRF_MONITOR_THREADS.0
        | COR_PRF_MONITOR_CODE_TRANSITIONS.0
        | COR_PRF_MONITOR_CCW.0
        | COR_PRF_MONITOR_SUSPENDS.0
        | COR_PRF_MONITOR_CACHE_SEARCHES.0
        | COR_PRF_DISABLE_INLINING.0
        | COR_PRF_DISABLE_OPTIMIZATIONS.0
        | COR_PRF_ENABLE_OBJECT_ALLOCATED.0
        | COR_PRF_MONITOR_CLR_EXCEPTIONS.0
        | COR_PRF_ENABLE_STACK_SNAPSHOT.0
        | COR_PRF_USE_PROFILE_IMAGES.0
        | COR_PRF_DISABLE_ALL_NGEN_IMAGES.0;
    /// The flags that can only be set during `Initialize`; changing them
    /// later fails (CoreCLR 3.1 answers `E_FAIL`, see docs/safety.md).
    COR_PRF_MONITOR_IMMUTABLE = COR_PRF_MONITOR_CODE_TRANSITIONS.0
        | COR_PRF_MONITOR_REMOTING.0
        | COR_PRF_MONITOR_REMOTING_COOKIE.0
        | COR_PRF_MONITOR_REMOTING_ASYNC.0
        | COR_PRF_ENABLE_INPROC_DEBUGGING.0
        | COR_PRF_ENABLE_JIT_MAPS.0
        | COR_PRF_ENABLE_OBJECT_ALLOCATED.0
        | COR_PRF_ENABLE_FUNCTION_ARGS.0
        | COR_PRF_ENABLE_FUNCTION_RETVAL.0
        | COR_PRF_ENABLE_FRAME_INFO.0
        | COR_PRF_USE_PROFILE_IMAGES.0
        | COR_PRF_DISABLE_TRANSPARENCY_CHECKS_UNDER_FULL_TRUST.0
        | COR_PRF_DISABLE_ALL_NGEN_IMAGES.0;
}

c_flags! {
    /// More event flags, for the high word of `SetEventMask2`
    /// (`COR_PRF_HIGH_MONITOR`; .NET Framework 4.5.2 and later).
    pub struct COR_PRF_HIGH_MONITOR(u32);
    /// No events.
    COR_PRF_HIGH_MONITOR_NONE = 0x0000_0000;
    /// `GetAssemblyReferences` (no longer checked by CoreCLR).
    COR_PRF_HIGH_ADD_ASSEMBLY_REFERENCES = 0x0000_0001;
    /// `ModuleInMemorySymbolsUpdated`.
    COR_PRF_HIGH_IN_MEMORY_SYMBOLS_UPDATED = 0x0000_0002;
    /// `DynamicMethodUnloaded`.
    COR_PRF_HIGH_MONITOR_DYNAMIC_FUNCTION_UNLOADS = 0x0000_0004;
    /// Turns off tiered compilation.
    COR_PRF_HIGH_DISABLE_TIERED_COMPILATION = 0x0000_0008;
    /// Lightweight GC events: start/finish only, without the heap walk.
    COR_PRF_HIGH_BASIC_GC = 0x0000_0010;
    /// `MovedReferences`/`MovedReferences2`, for compacting collections only.
    COR_PRF_HIGH_MONITOR_GC_MOVED_OBJECTS = 0x0000_0020;
    /// No flag currently needs profiler-enhanced images (0).
    COR_PRF_HIGH_REQUIRE_PROFILE_IMAGE = 0;
    /// `ObjectAllocated` for objects over the large-object-heap threshold.
    COR_PRF_HIGH_MONITOR_LARGEOBJECT_ALLOCATED = 0x0000_0040;
    /// The EventPipe callbacks (`EventPipeEventDelivered`, `EventPipeProviderCreated`).
    COR_PRF_HIGH_MONITOR_EVENT_PIPE = 0x0000_0080;
    /// `ObjectAllocated` for objects allocated on the pinned object heap.
    COR_PRF_HIGH_MONITOR_PINNEDOBJECT_ALLOCATED = 0x0000_0100;
    /// The high flags an attaching profiler may set.
    COR_PRF_HIGH_ALLOWABLE_AFTER_ATTACH = COR_PRF_HIGH_IN_MEMORY_SYMBOLS_UPDATED.0
        | COR_PRF_HIGH_MONITOR_DYNAMIC_FUNCTION_UNLOADS.0
        | COR_PRF_HIGH_BASIC_GC.0
        | COR_PRF_HIGH_MONITOR_GC_MOVED_OBJECTS.0
        | COR_PRF_HIGH_MONITOR_LARGEOBJECT_ALLOCATED.0
        | COR_PRF_HIGH_MONITOR_EVENT_PIPE.0;
    /// The high flags a notification-only profiler may set.
    COR_PRF_HIGH_ALLOWABLE_NOTIFICATION_PROFILER = COR_PRF_HIGH_IN_MEMORY_SYMBOLS_UPDATED.0
        | COR_PRF_HIGH_MONITOR_DYNAMIC_FUNCTION_UNLOADS.0
        | COR_PRF_HIGH_DISABLE_TIERED_COMPILATION.0
        | COR_PRF_HIGH_BASIC_GC.0
        | COR_PRF_HIGH_MONITOR_GC_MOVED_OBJECTS.0
        | COR_PRF_HIGH_MONITOR_LARGEOBJECT_ALLOCATED.0
        | COR_PRF_HIGH_MONITOR_EVENT_PIPE.0;
    /// The high flags that can only be set during `Initialize`.
    COR_PRF_HIGH_MONITOR_IMMUTABLE = COR_PRF_HIGH_DISABLE_TIERED_COMPILATION.0;
}

c_flags! {
    /// What `DoStackSnapshot` should report besides the frames
    /// (`COR_PRF_SNAPSHOT_INFO`).
    pub struct COR_PRF_SNAPSHOT_INFO(u32);
    /// Frames only.
    COR_PRF_SNAPSHOT_DEFAULT = 0x0;
    /// A register context with each frame.
    COR_PRF_SNAPSHOT_REGISTER_CONTEXT = 0x1;
    /// A faster walk following the EBP chain (x86 only).
    COR_PRF_SNAPSHOT_X86_OPTIMIZED = 0x2;
}

c_flags! {
    /// What kind of static a field is, from `GetStaticFieldInfo`
    /// (`COR_PRF_STATIC_TYPE`); a field may combine several.
    pub struct COR_PRF_STATIC_TYPE(u32);
    /// Not a static field.
    COR_PRF_FIELD_NOT_A_STATIC = 0x0;
    /// A static per application domain.
    COR_PRF_FIELD_APP_DOMAIN_STATIC = 0x1;
    /// A thread static.
    COR_PRF_FIELD_THREAD_STATIC = 0x2;
    /// A context static (.NET Framework).
    COR_PRF_FIELD_CONTEXT_STATIC = 0x4;
    /// A static whose home is at an RVA in the module image.
    COR_PRF_FIELD_RVA_STATIC = 0x8;
}

c_flags! {
    /// Properties of a GC root reported by `RootReferences2`
    /// (`COR_PRF_GC_ROOT_FLAGS`).
    pub struct COR_PRF_GC_ROOT_FLAGS(u32);
    /// The root pins its object: the GC may not move it.
    COR_PRF_GC_ROOT_PINNING = 0x1;
    /// The root is weak: it does not keep its object alive.
    COR_PRF_GC_ROOT_WEAKREF = 0x2;
    /// The root points inside the object (to a field) rather than at it.
    COR_PRF_GC_ROOT_INTERIOR = 0x4;
    /// Whether the root keeps its object alive depends on a reference count
    /// (when it does not, [`COR_PRF_GC_ROOT_WEAKREF`] is set too).
    COR_PRF_GC_ROOT_REFCOUNTED = 0x8;
}

c_flags! {
    /// Properties of the finalizer of an object queued for finalization, in
    /// `FinalizeableObjectQueued` (`COR_PRF_FINALIZER_FLAGS`).
    pub struct COR_PRF_FINALIZER_FLAGS(u32);
    /// A critical finalizer.
    COR_PRF_FINALIZER_CRITICAL = 0x1;
}

c_flags! {
    /// Properties of a module, from `GetModuleInfo2`'s `pdwModuleFlags`
    /// (`COR_PRF_MODULE_FLAGS`).
    pub struct COR_PRF_MODULE_FLAGS(u32);
    /// Loaded from disk.
    COR_PRF_MODULE_DISK = 0x0000_0001;
    /// A precompiled (NGEN) image.
    COR_PRF_MODULE_NGEN = 0x0000_0002;
    /// Created with Reflection.Emit.
    COR_PRF_MODULE_DYNAMIC = 0x0000_0004;
    /// Collectible: unloaded by the garbage collector when unreachable.
    COR_PRF_MODULE_COLLECTIBLE = 0x0000_0008;
    /// A resource-only module, without metadata.
    COR_PRF_MODULE_RESOURCE = 0x0000_0010;
    /// Laid out flat in memory rather than mapped, so RVAs in its PE header
    /// are not offsets from its base address.
    COR_PRF_MODULE_FLAT_LAYOUT = 0x0000_0020;
    /// Its assembly has the Windows Runtime content type.
    COR_PRF_MODULE_WINDOWS_RUNTIME = 0x0000_0040;
}

c_flags! {
    /// How `RequestReJITWithInliners` treats inlining (`COR_PRF_REJIT_FLAGS`).
    pub struct COR_PRF_REJIT_FLAGS(u32);
    /// Re-JIT-compiled methods are not inlined anywhere.
    COR_PRF_REJIT_BLOCK_INLINING = 0x1;
    /// `GetReJITParameters` is also called for methods re-JIT-compiled only
    /// because they inline a requested method.
    COR_PRF_REJIT_INLINING_CALLBACKS = 0x2;
}

c_flags! {
    /// Code-generation options for one method being re-JIT-compiled, passed
    /// to `ICorProfilerFunctionControl::SetCodegenFlags` (`COR_PRF_CODEGEN_FLAGS`).
    ///
    /// [`COR_PRF_CODEGEN_DEBUG_INFO`] is 3 in the IDL, the union of the two
    /// other bits, so `Debug` prints it as those two names.
    pub struct COR_PRF_CODEGEN_FLAGS(u32);
    /// No inlining into this method.
    COR_PRF_CODEGEN_DISABLE_INLINING = 0x0001;
    /// No optimizations for this method.
    COR_PRF_CODEGEN_DISABLE_ALL_OPTIMIZATIONS = 0x0002;
    /// Debuggable code generation (no inlining and no optimizations).
    COR_PRF_CODEGEN_DEBUG_INFO = 0x0003;
}
