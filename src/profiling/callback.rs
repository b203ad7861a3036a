//! ICorProfilerCallback through ICorProfilerCallback11: the notifications a profiler implements.
//!
//! (More in the [`profiling`](crate::profiling) module documentation.)
#![allow(non_snake_case)]

use core::ffi::c_void;

use crate::metadata::mdMethodDef;
use crate::profiling::*;
use crate::{
    com_interface, BOOL, BYTE, DWORD, GUID, HRESULT, REFGUID, SIZE_T, S_OK, UINT, UINT_PTR, ULONG,
    WCHAR,
};

com_interface! {
    /// The profiler's notification interface: startup and shutdown, loading
    /// and unloading, JIT compilation, threads, remoting, transitions,
    /// runtime suspension, garbage collection, exceptions and COM interop.
    /// Introduced in .NET Framework 1.0.
    #[iid("176FBED1-A55C-4796-98CA-A9DA0EF883E7")]
    #[vtable(ICorProfilerCallback_Vtbl)]
    #[implement(ICorProfilerCallback_Impl)]
    #[agile]
    pub unsafe interface ICorProfilerCallback: IUnknown {
        /// The profiler was loaded at startup; `pICorProfilerInfoUnk` is an `IUnknown *` to query for `ICorProfilerInfo*`.
        fn Initialize(pICorProfilerInfoUnk: *mut c_void) -> HRESULT { S_OK }
        /// The process is shutting down: the last safe point to call the info interfaces.
        fn Shutdown() -> HRESULT { S_OK }
        /// An application domain is being created (its ID is not usable yet).
        fn AppDomainCreationStarted(appDomainId: AppDomainID) -> HRESULT { S_OK }
        /// An application domain was created, with the outcome in `hrStatus`.
        fn AppDomainCreationFinished(appDomainId: AppDomainID, hrStatus: HRESULT) -> HRESULT { S_OK }
        /// An application domain is about to be unloaded.
        fn AppDomainShutdownStarted(appDomainId: AppDomainID) -> HRESULT { S_OK }
        /// An application domain was unloaded, with the outcome in `hrStatus`.
        fn AppDomainShutdownFinished(appDomainId: AppDomainID, hrStatus: HRESULT) -> HRESULT { S_OK }
        /// An assembly is being loaded (its ID is not usable yet).
        fn AssemblyLoadStarted(assemblyId: AssemblyID) -> HRESULT { S_OK }
        /// An assembly finished loading, with the outcome in `hrStatus`.
        fn AssemblyLoadFinished(assemblyId: AssemblyID, hrStatus: HRESULT) -> HRESULT { S_OK }
        /// An assembly is about to be unloaded.
        fn AssemblyUnloadStarted(assemblyId: AssemblyID) -> HRESULT { S_OK }
        /// An assembly was unloaded, with the outcome in `hrStatus`.
        fn AssemblyUnloadFinished(assemblyId: AssemblyID, hrStatus: HRESULT) -> HRESULT { S_OK }
        /// A module is being loaded (its ID is not usable yet).
        fn ModuleLoadStarted(moduleId: ModuleID) -> HRESULT { S_OK }
        /// A module finished loading, with the outcome in `hrStatus`; its metadata may now be read.
        fn ModuleLoadFinished(moduleId: ModuleID, hrStatus: HRESULT) -> HRESULT { S_OK }
        /// A module is about to be unloaded.
        fn ModuleUnloadStarted(moduleId: ModuleID) -> HRESULT { S_OK }
        /// A module was unloaded, with the outcome in `hrStatus`.
        fn ModuleUnloadFinished(moduleId: ModuleID, hrStatus: HRESULT) -> HRESULT { S_OK }
        /// A module was attached to its parent assembly.
        fn ModuleAttachedToAssembly(moduleId: ModuleID, AssemblyId: AssemblyID) -> HRESULT { S_OK }
        /// A class is being loaded (its ID is not usable yet).
        fn ClassLoadStarted(classId: ClassID) -> HRESULT { S_OK }
        /// A class finished loading, with the outcome in `hrStatus`.
        fn ClassLoadFinished(classId: ClassID, hrStatus: HRESULT) -> HRESULT { S_OK }
        /// A class is about to be unloaded.
        fn ClassUnloadStarted(classId: ClassID) -> HRESULT { S_OK }
        /// A class was unloaded, with the outcome in `hrStatus`.
        fn ClassUnloadFinished(classId: ClassID, hrStatus: HRESULT) -> HRESULT { S_OK }
        /// A function is being unloaded; its ID is invalid once this returns.
        fn FunctionUnloadStarted(functionId: FunctionID) -> HRESULT { S_OK }
        /// The JIT compiler is starting to compile a function (the place to rewrite its IL).
        fn JITCompilationStarted(functionId: FunctionID, fIsSafeToBlock: BOOL) -> HRESULT { S_OK }
        /// The JIT compiler finished compiling a function, with the outcome in `hrStatus`.
        fn JITCompilationFinished(functionId: FunctionID, hrStatus: HRESULT, fIsSafeToBlock: BOOL) -> HRESULT { S_OK }
        /// The runtime is looking for a precompiled (NGen/ReadyToRun) body; writing FALSE to `*pbUseCachedFunction` forces a JIT.
        fn JITCachedFunctionSearchStarted(functionId: FunctionID, pbUseCachedFunction: *mut BOOL) -> HRESULT { S_OK }
        /// The search for a precompiled body ended with `result`.
        fn JITCachedFunctionSearchFinished(functionId: FunctionID, result: COR_PRF_JIT_CACHE) -> HRESULT { S_OK }
        /// A jitted function was discarded from memory (not raised by current runtimes).
        fn JITFunctionPitched(functionId: FunctionID) -> HRESULT { S_OK }
        /// The JIT is about to inline `calleeId` into `callerId`; writing FALSE to `*pfShouldInline` prevents it.
        fn JITInlining(callerId: FunctionID, calleeId: FunctionID, pfShouldInline: *mut BOOL) -> HRESULT { S_OK }
        /// A managed thread was created.
        fn ThreadCreated(threadId: ThreadID) -> HRESULT { S_OK }
        /// A managed thread was destroyed; its ID is no longer valid.
        fn ThreadDestroyed(threadId: ThreadID) -> HRESULT { S_OK }
        /// A managed thread now runs on the OS thread `osThreadId`.
        fn ThreadAssignedToOSThread(managedThreadId: ThreadID, osThreadId: DWORD) -> HRESULT { S_OK }
        /// Remoting: a client-side call has begun.
        fn RemotingClientInvocationStarted() -> HRESULT { S_OK }
        /// Remoting: the client is sending its request; `pCookie` pairs it with the server's receive.
        fn RemotingClientSendingMessage(pCookie: *mut GUID, fIsAsync: BOOL) -> HRESULT { S_OK }
        /// Remoting: the client is receiving the server's reply.
        fn RemotingClientReceivingReply(pCookie: *mut GUID, fIsAsync: BOOL) -> HRESULT { S_OK }
        /// Remoting: a client-side call has completed.
        fn RemotingClientInvocationFinished() -> HRESULT { S_OK }
        /// Remoting: the server received an invocation request.
        fn RemotingServerReceivingMessage(pCookie: *mut GUID, fIsAsync: BOOL) -> HRESULT { S_OK }
        /// Remoting: the server is invoking the requested method.
        fn RemotingServerInvocationStarted() -> HRESULT { S_OK }
        /// Remoting: the server finished invoking the requested method.
        fn RemotingServerInvocationReturned() -> HRESULT { S_OK }
        /// Remoting: the server is sending its reply.
        fn RemotingServerSendingReply(pCookie: *mut GUID, fIsAsync: BOOL) -> HRESULT { S_OK }
        /// Execution moved from unmanaged to managed code (a call in, or a return out of a P/Invoke).
        fn UnmanagedToManagedTransition(functionId: FunctionID, reason: COR_PRF_TRANSITION_REASON) -> HRESULT { S_OK }
        /// Execution moved from managed to unmanaged code (a P/Invoke call, or a return to a native caller).
        fn ManagedToUnmanagedTransition(functionId: FunctionID, reason: COR_PRF_TRANSITION_REASON) -> HRESULT { S_OK }
        /// The runtime is starting to suspend its threads, for `suspendReason`.
        fn RuntimeSuspendStarted(suspendReason: COR_PRF_SUSPEND_REASON) -> HRESULT { S_OK }
        /// Every thread that must be suspended is now suspended.
        fn RuntimeSuspendFinished() -> HRESULT { S_OK }
        /// The suspension under way was abandoned.
        fn RuntimeSuspendAborted() -> HRESULT { S_OK }
        /// The runtime is about to resume its threads.
        fn RuntimeResumeStarted() -> HRESULT { S_OK }
        /// The runtime resumed its threads and runs normally again.
        fn RuntimeResumeFinished() -> HRESULT { S_OK }
        /// One thread was suspended by a runtime suspension.
        fn RuntimeThreadSuspended(threadId: ThreadID) -> HRESULT { S_OK }
        /// One thread resumed after a runtime suspension.
        fn RuntimeThreadResumed(threadId: ThreadID) -> HRESULT { S_OK }
        /// A compacting GC moved objects: three parallel arrays of old starts, new starts and 32-bit lengths (obsolete: use `MovedReferences2`).
        fn MovedReferences(cMovedObjectIDRanges: ULONG, oldObjectIDRangeStart: *mut ObjectID, newObjectIDRangeStart: *mut ObjectID, cObjectIDRangeLength: *mut ULONG) -> HRESULT { S_OK }
        /// An object of class `classId` was allocated on the managed heap.
        fn ObjectAllocated(objectId: ObjectID, classId: ClassID) -> HRESULT { S_OK }
        /// Per-class counts (parallel arrays) of objects allocated since the previous GC.
        fn ObjectsAllocatedByClass(cClassCount: ULONG, classIds: *mut ClassID, cObjects: *mut ULONG) -> HRESULT { S_OK }
        /// After a GC, the objects that `objectId` references; an error return stops these calls until the next GC.
        fn ObjectReferences(objectId: ObjectID, classId: ClassID, cObjectRefs: ULONG, objectRefIds: *mut ObjectID) -> HRESULT { S_OK }
        /// After a GC, the root references (statics and stack slots).
        fn RootReferences(cRootRefs: ULONG, rootRefIds: *mut ObjectID) -> HRESULT { S_OK }
        /// A managed exception was thrown.
        fn ExceptionThrown(thrownObjectId: ObjectID) -> HRESULT { S_OK }
        /// The exception search phase entered a function.
        fn ExceptionSearchFunctionEnter(functionId: FunctionID) -> HRESULT { S_OK }
        /// The exception search phase left a function.
        fn ExceptionSearchFunctionLeave() -> HRESULT { S_OK }
        /// A user exception filter in `functionId` is about to run.
        fn ExceptionSearchFilterEnter(functionId: FunctionID) -> HRESULT { S_OK }
        /// A user exception filter finished running.
        fn ExceptionSearchFilterLeave() -> HRESULT { S_OK }
        /// The search phase found the handler for the exception, in `functionId`.
        fn ExceptionSearchCatcherFound(functionId: FunctionID) -> HRESULT { S_OK }
        /// Deprecated; never raised.
        fn ExceptionOSHandlerEnter(__unused: UINT_PTR) -> HRESULT { S_OK }
        /// Deprecated; never raised.
        fn ExceptionOSHandlerLeave(__unused: UINT_PTR) -> HRESULT { S_OK }
        /// The exception unwind phase entered a function.
        fn ExceptionUnwindFunctionEnter(functionId: FunctionID) -> HRESULT { S_OK }
        /// The exception unwind phase left a function (its frame is gone).
        fn ExceptionUnwindFunctionLeave() -> HRESULT { S_OK }
        /// The unwind phase is entering a `finally` clause in `functionId`.
        fn ExceptionUnwindFinallyEnter(functionId: FunctionID) -> HRESULT { S_OK }
        /// The unwind phase left a `finally` clause.
        fn ExceptionUnwindFinallyLeave() -> HRESULT { S_OK }
        /// Control is passing to a `catch` block in `functionId` for the exception object `objectId`.
        fn ExceptionCatcherEnter(functionId: FunctionID, objectId: ObjectID) -> HRESULT { S_OK }
        /// Control left the `catch` block.
        fn ExceptionCatcherLeave() -> HRESULT { S_OK }
        /// A COM interop vtable of `cSlots` slots was created for class `wrappedClassId` and interface `*implementedIID`.
        fn COMClassicVTableCreated(wrappedClassId: ClassID, implementedIID: REFGUID, pVTable: *mut c_void, cSlots: ULONG) -> HRESULT { S_OK }
        /// A COM interop vtable is being destroyed.
        fn COMClassicVTableDestroyed(wrappedClassId: ClassID, implementedIID: REFGUID, pVTable: *mut c_void) -> HRESULT { S_OK }
        /// Deprecated; no longer raised.
        fn ExceptionCLRCatcherFound() -> HRESULT { S_OK }
        /// Deprecated; no longer raised.
        fn ExceptionCLRCatcherExecute() -> HRESULT { S_OK }
    }

    /// Version 2 of the callbacks: thread names, GC start/finish, surviving
    /// and classified root references, finalization and GC handles.
    /// Introduced in .NET Framework 2.0.
    #[iid("8A8CC829-CCF2-49FE-BBAE-0F022228071A")]
    #[vtable(ICorProfilerCallback2_Vtbl)]
    #[implement(ICorProfilerCallback2_Impl: ICorProfilerCallback_Impl)]
    #[agile]
    pub unsafe interface ICorProfilerCallback2: ICorProfilerCallback {
        /// A thread's name changed; `name` holds `cchName` characters, not NUL-terminated.
        fn ThreadNameChanged(threadId: ThreadID, cchName: ULONG, name: *mut WCHAR) -> HRESULT { S_OK }
        /// A GC is starting; `generationCollected[i]` says whether generation `i` is collected.
        fn GarbageCollectionStarted(cGenerations: i32, generationCollected: *mut BOOL, reason: COR_PRF_GC_REASON) -> HRESULT { S_OK }
        /// A non-compacting GC kept these object ranges (parallel arrays; obsolete: use `SurvivingReferences2`).
        fn SurvivingReferences(cSurvivingObjectIDRanges: ULONG, objectIDRangeStart: *mut ObjectID, cObjectIDRangeLength: *mut ULONG) -> HRESULT { S_OK }
        /// The GC completed and every callback about it was made; objects may be inspected again.
        fn GarbageCollectionFinished() -> HRESULT { S_OK }
        /// An object with a finalizer was queued for finalization (`finalizerFlags` from `COR_PRF_FINALIZER_FLAGS`).
        fn FinalizeableObjectQueued(finalizerFlags: DWORD, objectID: ObjectID) -> HRESULT { S_OK }
        /// After a GC, root references with their kind, flags and root ID (parallel arrays).
        fn RootReferences2(cRootRefs: ULONG, rootRefIds: *mut ObjectID, rootKinds: *mut COR_PRF_GC_ROOT_KIND, rootFlags: *mut COR_PRF_GC_ROOT_FLAGS, rootIds: *mut UINT_PTR) -> HRESULT { S_OK }
        /// A GC handle was created, pointing at `initialObjectId`.
        fn HandleCreated(handleId: GCHandleID, initialObjectId: ObjectID) -> HRESULT { S_OK }
        /// A GC handle was destroyed.
        fn HandleDestroyed(handleId: GCHandleID) -> HRESULT { S_OK }
    }

    /// Version 3 of the callbacks: attaching to and detaching from a running
    /// process. Introduced in .NET Framework 4.
    #[iid("4FD2ED52-7731-4B8D-9469-03D2CC3086C5")]
    #[vtable(ICorProfilerCallback3_Vtbl)]
    #[implement(ICorProfilerCallback3_Impl: ICorProfilerCallback2_Impl)]
    #[agile]
    pub unsafe interface ICorProfilerCallback3: ICorProfilerCallback2 {
        /// The profiler was attached to a running process (instead of `Initialize`), with the attacher's client data.
        fn InitializeForAttach(pCorProfilerInfoUnk: *mut c_void, pvClientData: *mut c_void, cbClientData: UINT) -> HRESULT { S_OK }
        /// The attach completed: the profiler may now catch up on what was loaded before it.
        fn ProfilerAttachComplete() -> HRESULT { S_OK }
        /// The profiler is about to be unloaded after a requested detach.
        fn ProfilerDetachSucceeded() -> HRESULT { S_OK }
    }

    /// Version 4 of the callbacks: ReJIT, and 64-bit-safe moved and surviving
    /// references. Introduced in .NET Framework 4.5.
    #[iid("7B63B2E3-107D-4D48-B2F6-F61E229470D2")]
    #[vtable(ICorProfilerCallback4_Vtbl)]
    #[implement(ICorProfilerCallback4_Impl: ICorProfilerCallback3_Impl)]
    #[agile]
    pub unsafe interface ICorProfilerCallback4: ICorProfilerCallback3 {
        /// The JIT is starting to recompile a function for a ReJIT request.
        fn ReJITCompilationStarted(functionId: FunctionID, rejitId: ReJITID, fIsSafeToBlock: BOOL) -> HRESULT { S_OK }
        /// Once per rejitted method: set its new IL and codegen flags through `pFunctionControl` (an `ICorProfilerFunctionControl *`).
        fn GetReJITParameters(moduleId: ModuleID, methodId: mdMethodDef, pFunctionControl: *mut c_void) -> HRESULT { S_OK }
        /// The JIT finished recompiling a function for a ReJIT request.
        fn ReJITCompilationFinished(functionId: FunctionID, rejitId: ReJITID, hrStatus: HRESULT, fIsSafeToBlock: BOOL) -> HRESULT { S_OK }
        /// A ReJIT request for this method failed with `hrStatus`.
        fn ReJITError(moduleId: ModuleID, methodId: mdMethodDef, functionId: FunctionID, hrStatus: HRESULT) -> HRESULT { S_OK }
        /// A compacting GC moved objects: parallel arrays with pointer-sized lengths (called before `MovedReferences`).
        fn MovedReferences2(cMovedObjectIDRanges: ULONG, oldObjectIDRangeStart: *mut ObjectID, newObjectIDRangeStart: *mut ObjectID, cObjectIDRangeLength: *mut SIZE_T) -> HRESULT { S_OK }
        /// A non-compacting GC kept these object ranges, with pointer-sized lengths (called before `SurvivingReferences`).
        fn SurvivingReferences2(cSurvivingObjectIDRanges: ULONG, objectIDRangeStart: *mut ObjectID, cObjectIDRangeLength: *mut SIZE_T) -> HRESULT { S_OK }
    }

    /// Version 5 of the callbacks: dependent-handle (ConditionalWeakTable)
    /// references. Introduced in .NET Framework 4.5.2.
    #[iid("8DFBA405-8C9F-45F8-BFFA-83B14CEF78B5")]
    #[vtable(ICorProfilerCallback5_Vtbl)]
    #[implement(ICorProfilerCallback5_Impl: ICorProfilerCallback4_Impl)]
    #[agile]
    pub unsafe interface ICorProfilerCallback5: ICorProfilerCallback4 {
        /// After a GC, dependent handles: `keyRefIds[i]` keeps `valueRefIds[i]` alive through handle `rootIds[i]`.
        fn ConditionalWeakTableElementReferences(cRootRefs: ULONG, keyRefIds: *mut ObjectID, valueRefIds: *mut ObjectID, rootIds: *mut GCHandleID) -> HRESULT { S_OK }
    }

    /// Version 6 of the callbacks: declaring assembly references early.
    /// Introduced in .NET Framework 4.5.2.
    #[iid("FC13DF4B-4448-4F4F-950C-BA8D19D00C36")]
    #[vtable(ICorProfilerCallback6_Vtbl)]
    #[implement(ICorProfilerCallback6_Impl: ICorProfilerCallback5_Impl)]
    #[agile]
    pub unsafe interface ICorProfilerCallback6: ICorProfilerCallback5 {
        /// An assembly is at its reference-closure walk; add the references you will emit through `pAsmRefProvider` (an `ICorProfilerAssemblyReferenceProvider *`). Not raised by CoreCLR.
        fn GetAssemblyReferences(wszAssemblyPath: *const WCHAR, pAsmRefProvider: *mut c_void) -> HRESULT { S_OK }
    }

    /// Version 7 of the callbacks: in-memory symbol updates.
    /// Introduced in .NET Framework 4.6.1.
    #[iid("F76A2DBA-1D52-4539-866C-2AA518F9EFC3")]
    #[vtable(ICorProfilerCallback7_Vtbl)]
    #[implement(ICorProfilerCallback7_Impl: ICorProfilerCallback6_Impl)]
    #[agile]
    pub unsafe interface ICorProfilerCallback7: ICorProfilerCallback6 {
        /// The symbol stream of an in-memory module was updated.
        fn ModuleInMemorySymbolsUpdated(moduleId: ModuleID) -> HRESULT { S_OK }
    }

    /// Version 8 of the callbacks: JIT compilation of dynamic methods (IL
    /// stubs, LCG). Introduced in .NET Framework 4.7.
    #[iid("5BED9B15-C079-4D47-BFE2-215A140C07E0")]
    #[vtable(ICorProfilerCallback8_Vtbl)]
    #[implement(ICorProfilerCallback8_Impl: ICorProfilerCallback7_Impl)]
    #[agile]
    pub unsafe interface ICorProfilerCallback8: ICorProfilerCallback7 {
        /// A dynamic method is being jitted; `pILHeader` (`cbILHeader` bytes) is valid only during the call.
        fn DynamicMethodJITCompilationStarted(functionId: FunctionID, fIsSafeToBlock: BOOL, pILHeader: *const BYTE, cbILHeader: ULONG) -> HRESULT { S_OK }
        /// A dynamic method finished jitting, with the outcome in `hrStatus`.
        fn DynamicMethodJITCompilationFinished(functionId: FunctionID, hrStatus: HRESULT, fIsSafeToBlock: BOOL) -> HRESULT { S_OK }
    }

    /// Version 9 of the callbacks: unloading of dynamic methods.
    /// Introduced in .NET Core 2.1.
    #[iid("27583EC3-C8F5-482F-8052-194B8CE4705A")]
    #[vtable(ICorProfilerCallback9_Vtbl)]
    #[implement(ICorProfilerCallback9_Impl: ICorProfilerCallback8_Impl)]
    #[agile]
    pub unsafe interface ICorProfilerCallback9: ICorProfilerCallback8 {
        /// A dynamic method was garbage collected and unloaded.
        fn DynamicMethodUnloaded(functionId: FunctionID) -> HRESULT { S_OK }
    }

    /// Version 10 of the callbacks: EventPipe events delivered to the
    /// profiler's session. Introduced in .NET 5.
    #[iid("CEC5B60E-C69C-495F-87F6-84D28EE16FFB")]
    #[vtable(ICorProfilerCallback10_Vtbl)]
    #[implement(ICorProfilerCallback10_Impl: ICorProfilerCallback9_Impl)]
    #[agile]
    pub unsafe interface ICorProfilerCallback10: ICorProfilerCallback9 {
        /// An EventPipe event reached the profiler's session: metadata and payload blobs, activity IDs, thread and stack (all valid only during the call).
        fn EventPipeEventDelivered(provider: EVENTPIPE_PROVIDER, eventId: DWORD, eventVersion: DWORD, cbMetadataBlob: ULONG, metadataBlob: *const BYTE, cbEventData: ULONG, eventData: *const BYTE, pActivityId: *const GUID, pRelatedActivityId: *const GUID, eventThread: ThreadID, numStackFrames: ULONG, stackFrames: *mut UINT_PTR) -> HRESULT { S_OK }
        /// An EventPipe provider was created; the profiler may add it to its session.
        fn EventPipeProviderCreated(provider: EVENTPIPE_PROVIDER) -> HRESULT { S_OK }
    }

    /// Version 11 of the callbacks: loading as a notification-only profiler
    /// beside the main one. Introduced after .NET Core 3.1 (which offers up to ICorProfilerCallback9).
    #[iid("42350846-AAED-47F7-B128-FD0C98881CDE")]
    #[vtable(ICorProfilerCallback11_Vtbl)]
    #[implement(ICorProfilerCallback11_Impl: ICorProfilerCallback10_Impl)]
    #[agile]
    pub unsafe interface ICorProfilerCallback11: ICorProfilerCallback10 {
        /// Asked before `Initialize`: write TRUE to `*pbNotificationOnly` to load as a notification-only profiler.
        fn LoadAsNotificationOnly(pbNotificationOnly: *mut BOOL) -> HRESULT { S_OK }
    }
}
