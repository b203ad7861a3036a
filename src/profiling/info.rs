//! ICorProfilerInfo through ICorProfilerInfo15: the runtime services a profiler calls.
//!
//! (More in the [`profiling`](crate::profiling) module documentation.)
#![allow(non_snake_case)]

use core::ffi::c_void;

use crate::metadata::*;
use crate::profiling::*;
use crate::{
    com_interface, BOOL, BYTE, DWORD, E_NOTIMPL, GUID, HANDLE, HRESULT, REFIID, SIZE_T, UINT_PTR,
    ULONG, ULONG32, USHORT, WCHAR,
};

com_interface! {
    /// The runtime's services for a profiler: IDs to names and tokens, event
    /// masks, hooks, IL bodies and metadata. Introduced in .NET Framework 1.0.
    #[iid("28B5557D-3F3F-48b4-90B2-5F9EEA2F6C48")]
    #[vtable(ICorProfilerInfo_Vtbl)]
    #[implement(ICorProfilerInfo_Impl)]
    #[agile]
    pub unsafe interface ICorProfilerInfo: IUnknown {
        /// Gets the class of an object.
        fn GetClassFromObject(objectId: ObjectID, pClassId: *mut ClassID) -> HRESULT { E_NOTIMPL }
        /// Gets the class of a non-generic type from its TypeDef token (obsolete: use `GetClassFromTokenAndTypeArgs`).
        fn GetClassFromToken(moduleId: ModuleID, typeDef: mdTypeDef, pClassId: *mut ClassID) -> HRESULT { E_NOTIMPL }
        /// Gets the start and size of a function's native code (obsolete: use `GetCodeInfo2`).
        fn GetCodeInfo(functionId: FunctionID, pStart: *mut *const BYTE, pcSize: *mut ULONG) -> HRESULT { E_NOTIMPL }
        /// Gets the current event mask (`COR_PRF_MONITOR` bits).
        fn GetEventMask(pdwEvents: *mut DWORD) -> HRESULT { E_NOTIMPL }
        /// Maps an instruction pointer in managed code to its function.
        fn GetFunctionFromIP(ip: *const BYTE, pFunctionId: *mut FunctionID) -> HRESULT { E_NOTIMPL }
        /// Gets a non-generic function from its metadata token (obsolete: use `GetFunctionFromTokenAndTypeArgs`).
        fn GetFunctionFromToken(moduleId: ModuleID, token: mdToken, pFunctionId: *mut FunctionID) -> HRESULT { E_NOTIMPL }
        /// Gets the OS thread handle of a managed thread.
        fn GetHandleFromThread(threadId: ThreadID, phThread: *mut HANDLE) -> HRESULT { E_NOTIMPL }
        /// Gets an object's size as a 32-bit value (obsolete: use `GetObjectSize2`).
        fn GetObjectSize(objectId: ObjectID, pcSize: *mut ULONG) -> HRESULT { E_NOTIMPL }
        /// Tells whether a class is an array class and, if so, its element type, element class and rank (`S_FALSE` if not an array).
        fn IsArrayClass(classId: ClassID, pBaseElemType: *mut CorElementType, pBaseClassId: *mut ClassID, pcRank: *mut ULONG) -> HRESULT { E_NOTIMPL }
        /// Gets the OS thread ID of a managed thread.
        fn GetThreadInfo(threadId: ThreadID, pdwWin32ThreadId: *mut DWORD) -> HRESULT { E_NOTIMPL }
        /// Gets the managed thread ID of the calling thread.
        fn GetCurrentThreadID(pThreadId: *mut ThreadID) -> HRESULT { E_NOTIMPL }
        /// Gets the module and TypeDef token of a class.
        fn GetClassIDInfo(classId: ClassID, pModuleId: *mut ModuleID, pTypeDefToken: *mut mdTypeDef) -> HRESULT { E_NOTIMPL }
        /// Gets the class, module and token of a function.
        fn GetFunctionInfo(functionId: FunctionID, pClassId: *mut ClassID, pModuleId: *mut ModuleID, pToken: *mut mdToken) -> HRESULT { E_NOTIMPL }
        /// Sets the event mask (`COR_PRF_MONITOR` bits): which callbacks the profiler receives.
        fn SetEventMask(dwEvents: DWORD) -> HRESULT { E_NOTIMPL }
        /// Installs the original enter/leave/tailcall hooks (`None` disables one); only during `Initialize`.
        fn SetEnterLeaveFunctionHooks(pFuncEnter: Option<FunctionEnter>, pFuncLeave: Option<FunctionLeave>, pFuncTailcall: Option<FunctionTailcall>) -> HRESULT { E_NOTIMPL }
        /// Installs a function that maps each FunctionID to the value passed to the hooks.
        fn SetFunctionIDMapper(pFunc: Option<FunctionIDMapper>) -> HRESULT { E_NOTIMPL }
        /// Gets a function's token and a metadata interface (`riid`, e.g. `IMetaDataImport`) written to `ppImport`.
        fn GetTokenAndMetaDataFromFunction(functionId: FunctionID, riid: REFIID, ppImport: *mut *mut c_void, pToken: *mut mdToken) -> HRESULT { E_NOTIMPL }
        /// Gets a module's base address, file name (or scope name) and assembly.
        fn GetModuleInfo(moduleId: ModuleID, ppBaseLoadAddress: *mut *const BYTE, cchName: ULONG, pcchName: *mut ULONG, szName: *mut WCHAR, pAssemblyId: *mut AssemblyID) -> HRESULT { E_NOTIMPL }
        /// Opens a module's metadata (`dwOpenFlags` is `ofRead` or `ofWrite`) as the interface `riid`, written to `ppOut` (an `IUnknown`-derived pointer).
        fn GetModuleMetaData(moduleId: ModuleID, dwOpenFlags: DWORD, riid: REFIID, ppOut: *mut *mut c_void) -> HRESULT { E_NOTIMPL }
        /// Gets a method's IL body, starting at its header, and its size.
        fn GetILFunctionBody(moduleId: ModuleID, methodId: mdMethodDef, ppMethodHeader: *mut *const BYTE, pcbMethodSize: *mut ULONG) -> HRESULT { E_NOTIMPL }
        /// Gets an allocator (`IMethodMalloc`, written to `ppMalloc`) for new IL bodies within reach of the module.
        fn GetILFunctionBodyAllocator(moduleId: ModuleID, ppMalloc: *mut *mut c_void) -> HRESULT { E_NOTIMPL }
        /// Replaces a not-yet-compiled method's IL body (header included).
        fn SetILFunctionBody(moduleId: ModuleID, methodid: mdMethodDef, pbNewILMethodHeader: *const BYTE) -> HRESULT { E_NOTIMPL }
        /// Gets an application domain's name and process.
        fn GetAppDomainInfo(appDomainId: AppDomainID, cchName: ULONG, pcchName: *mut ULONG, szName: *mut WCHAR, pProcessId: *mut ProcessID) -> HRESULT { E_NOTIMPL }
        /// Gets an assembly's name, application domain and manifest module.
        fn GetAssemblyInfo(assemblyId: AssemblyID, cchName: ULONG, pcchName: *mut ULONG, szName: *mut WCHAR, pAppDomainId: *mut AppDomainID, pModuleId: *mut ModuleID) -> HRESULT { E_NOTIMPL }
        /// Obsolete; always fails with `E_NOTIMPL` (use `ICorProfilerInfo4::RequestReJIT`).
        fn SetFunctionReJIT(functionId: FunctionID) -> HRESULT { E_NOTIMPL }
        /// Forces a garbage collection (from a thread with no profiler callback on its stack).
        fn ForceGC() -> HRESULT { E_NOTIMPL }
        /// Gives the debugger a map from original to instrumented IL offsets for a function.
        fn SetILInstrumentedCodeMap(functionId: FunctionID, fStartJit: BOOL, cILMapEntries: ULONG, rgILMapEntries: *mut COR_IL_MAP) -> HRESULT { E_NOTIMPL }
        /// Obsolete (in-process debugging, removed in .NET Framework 2.0); writes an `IUnknown` to `ppicd`.
        fn GetInprocInspectionInterface(ppicd: *mut *mut c_void) -> HRESULT { E_NOTIMPL }
        /// Obsolete (in-process debugging, removed in .NET Framework 2.0); writes an `IUnknown` to `ppicd`.
        fn GetInprocInspectionIThisThread(ppicd: *mut *mut c_void) -> HRESULT { E_NOTIMPL }
        /// Gets the context currently associated with a thread.
        fn GetThreadContext(threadId: ThreadID, pContextId: *mut ContextID) -> HRESULT { E_NOTIMPL }
        /// Obsolete (in-process debugging, removed in .NET Framework 2.0).
        fn BeginInprocDebugging(fThisThreadOnly: BOOL, pdwProfilerContext: *mut DWORD) -> HRESULT { E_NOTIMPL }
        /// Obsolete (in-process debugging, removed in .NET Framework 2.0).
        fn EndInprocDebugging(dwProfilerContext: DWORD) -> HRESULT { E_NOTIMPL }
        /// Gets the IL-to-native offset map of a function's code.
        fn GetILToNativeMapping(functionId: FunctionID, cMap: ULONG32, pcMap: *mut ULONG32, map: *mut COR_DEBUG_IL_TO_NATIVE_MAP) -> HRESULT { E_NOTIMPL }
    }

    /// Adds stack snapshots, generics-aware lookups, object and class layout,
    /// statics and GC generations. Introduced in .NET Framework 2.0.
    #[iid("CC0935CD-A518-487d-B0BB-A93214E65478")]
    #[vtable(ICorProfilerInfo2_Vtbl)]
    #[implement(ICorProfilerInfo2_Impl: ICorProfilerInfo_Impl)]
    #[agile]
    pub unsafe interface ICorProfilerInfo2: ICorProfilerInfo {
        /// Walks a thread's managed stack, calling `callback` for each frame; `context` optionally seeds the walk with a register context of `contextSize` bytes.
        fn DoStackSnapshot(thread: ThreadID, callback: Option<StackSnapshotCallback>, infoFlags: ULONG32, clientData: *mut c_void, context: *mut BYTE, contextSize: ULONG32) -> HRESULT { E_NOTIMPL }
        /// Installs the version-2 enter/leave/tailcall hooks (`None` disables one); only during `Initialize`.
        fn SetEnterLeaveFunctionHooks2(pFuncEnter: Option<FunctionEnter2>, pFuncLeave: Option<FunctionLeave2>, pFuncTailcall: Option<FunctionTailcall2>) -> HRESULT { E_NOTIMPL }
        /// Gets a function's class, module, token and type arguments, exact when given a frame from an enter hook.
        fn GetFunctionInfo2(funcId: FunctionID, frameInfo: COR_PRF_FRAME_INFO, pClassId: *mut ClassID, pModuleId: *mut ModuleID, pToken: *mut mdToken, cTypeArgs: ULONG32, pcTypeArgs: *mut ULONG32, typeArgs: *mut ClassID) -> HRESULT { E_NOTIMPL }
        /// Gets the offsets of a string object's buffer length, string length and characters (obsolete: use `GetStringLayout2`).
        fn GetStringLayout(pBufferLengthOffset: *mut ULONG, pStringLengthOffset: *mut ULONG, pBufferOffset: *mut ULONG) -> HRESULT { E_NOTIMPL }
        /// Gets the offsets of the fields a class itself declares, and its instance size.
        fn GetClassLayout(classID: ClassID, rFieldOffset: *mut COR_FIELD_OFFSET, cFieldOffset: ULONG, pcFieldOffset: *mut ULONG, pulClassSize: *mut ULONG) -> HRESULT { E_NOTIMPL }
        /// Gets a class's module, TypeDef token, parent class and type arguments.
        fn GetClassIDInfo2(classId: ClassID, pModuleId: *mut ModuleID, pTypeDefToken: *mut mdTypeDef, pParentClassId: *mut ClassID, cNumTypeArgs: ULONG32, pcNumTypeArgs: *mut ULONG32, typeArgs: *mut ClassID) -> HRESULT { E_NOTIMPL }
        /// Gets the native code ranges of a function, in increasing IL order.
        fn GetCodeInfo2(functionID: FunctionID, cCodeInfos: ULONG32, pcCodeInfos: *mut ULONG32, codeInfos: *mut COR_PRF_CODE_INFO) -> HRESULT { E_NOTIMPL }
        /// Gets (loading if needed) the class of a TypeDef instantiated with the given type arguments.
        fn GetClassFromTokenAndTypeArgs(moduleID: ModuleID, typeDef: mdTypeDef, cTypeArgs: ULONG32, typeArgs: *mut ClassID, pClassID: *mut ClassID) -> HRESULT { E_NOTIMPL }
        /// Gets (loading if needed) the function of a MethodDef in a class, with the given type arguments.
        fn GetFunctionFromTokenAndTypeArgs(moduleID: ModuleID, funcDef: mdMethodDef, classId: ClassID, cTypeArgs: ULONG32, typeArgs: *mut ClassID, pFunctionID: *mut FunctionID) -> HRESULT { E_NOTIMPL }
        /// Gets an enumerator (`ICorProfilerObjectEnum`, written to `ppEnum`) over a module's frozen objects.
        fn EnumModuleFrozenObjects(moduleID: ModuleID, ppEnum: *mut *mut c_void) -> HRESULT { E_NOTIMPL }
        /// Gets an array object's dimension sizes and lower bounds, and a pointer to its elements.
        fn GetArrayObjectInfo(objectId: ObjectID, cDimensions: ULONG32, pDimensionSizes: *mut ULONG32, pDimensionLowerBounds: *mut i32, ppData: *mut *mut BYTE) -> HRESULT { E_NOTIMPL }
        /// Gets the offset of the value inside a boxed value type.
        fn GetBoxClassLayout(classId: ClassID, pBufferOffset: *mut ULONG32) -> HRESULT { E_NOTIMPL }
        /// Gets the application domain a thread is currently running in.
        fn GetThreadAppDomain(threadId: ThreadID, pAppDomainId: *mut AppDomainID) -> HRESULT { E_NOTIMPL }
        /// Gets the address of an RVA static field.
        fn GetRVAStaticAddress(classId: ClassID, fieldToken: mdFieldDef, ppAddress: *mut *mut c_void) -> HRESULT { E_NOTIMPL }
        /// Gets the address of a static field in an application domain.
        fn GetAppDomainStaticAddress(classId: ClassID, fieldToken: mdFieldDef, appDomainId: AppDomainID, ppAddress: *mut *mut c_void) -> HRESULT { E_NOTIMPL }
        /// Gets the address of a thread-static field for a thread (the current one).
        fn GetThreadStaticAddress(classId: ClassID, fieldToken: mdFieldDef, threadId: ThreadID, ppAddress: *mut *mut c_void) -> HRESULT { E_NOTIMPL }
        /// Gets the address of a context-static field in a context.
        fn GetContextStaticAddress(classId: ClassID, fieldToken: mdFieldDef, contextId: ContextID, ppAddress: *mut *mut c_void) -> HRESULT { E_NOTIMPL }
        /// Tells which kind of static a field is, so the right address getter can be picked.
        fn GetStaticFieldInfo(classId: ClassID, fieldToken: mdFieldDef, pFieldInfo: *mut COR_PRF_STATIC_TYPE) -> HRESULT { E_NOTIMPL }
        /// Gets the memory ranges of every GC generation.
        fn GetGenerationBounds(cObjectRanges: ULONG, pcObjectRanges: *mut ULONG, ranges: *mut COR_PRF_GC_GENERATION_RANGE) -> HRESULT { E_NOTIMPL }
        /// Gets the generation and segment range an object is in.
        fn GetObjectGeneration(objectId: ObjectID, range: *mut COR_PRF_GC_GENERATION_RANGE) -> HRESULT { E_NOTIMPL }
        /// Gets the exception clause about to run or just run, after an exception notification (`S_FALSE` if none).
        fn GetNotifiedExceptionClauseInfo(pinfo: *mut COR_PRF_EX_CLAUSE_INFO) -> HRESULT { E_NOTIMPL }
    }

    /// Adds attach/detach, the ELT3 hooks and their argument inspection,
    /// enumeration of JIT-compiled functions and modules, and runtime
    /// version information. Introduced in .NET Framework 4.
    #[iid("B555ED4F-452A-4E54-8B39-B5360BAD32A0")]
    #[vtable(ICorProfilerInfo3_Vtbl)]
    #[implement(ICorProfilerInfo3_Impl: ICorProfilerInfo2_Impl)]
    #[agile]
    pub unsafe interface ICorProfilerInfo3: ICorProfilerInfo2 {
        /// Gets an enumerator (`ICorProfilerFunctionEnum`, written to `ppEnum`) over the functions JIT-compiled so far (ReJIT IDs are 0).
        fn EnumJITedFunctions(ppEnum: *mut *mut c_void) -> HRESULT { E_NOTIMPL }
        /// Asks the runtime to detach the profiler, waiting about the given time before checking it is safe.
        fn RequestProfilerDetach(dwExpectedCompletionMilliseconds: DWORD) -> HRESULT { E_NOTIMPL }
        /// Installs a FunctionID mapper that also receives `clientData`.
        fn SetFunctionIDMapper2(pFunc: Option<FunctionIDMapper2>, clientData: *mut c_void) -> HRESULT { E_NOTIMPL }
        /// Gets the offsets of a string object's length and characters.
        fn GetStringLayout2(pStringLengthOffset: *mut ULONG, pBufferOffset: *mut ULONG) -> HRESULT { E_NOTIMPL }
        /// Installs the ELT3 enter/leave/tailcall hooks (`None` disables one); only during `Initialize`.
        fn SetEnterLeaveFunctionHooks3(pFuncEnter3: Option<FunctionEnter3>, pFuncLeave3: Option<FunctionLeave3>, pFuncTailcall3: Option<FunctionTailcall3>) -> HRESULT { E_NOTIMPL }
        /// Installs the ELT3 hooks that receive a `COR_PRF_ELT_INFO` (`None` disables one); only during `Initialize`.
        fn SetEnterLeaveFunctionHooks3WithInfo(pFuncEnter3WithInfo: Option<FunctionEnter3WithInfo>, pFuncLeave3WithInfo: Option<FunctionLeave3WithInfo>, pFuncTailcall3WithInfo: Option<FunctionTailcall3WithInfo>) -> HRESULT { E_NOTIMPL }
        /// In an enter hook with info: gets the frame and the arguments (into a caller buffer of `*pcbArgumentInfo` bytes).
        fn GetFunctionEnter3Info(functionId: FunctionID, eltInfo: COR_PRF_ELT_INFO, pFrameInfo: *mut COR_PRF_FRAME_INFO, pcbArgumentInfo: *mut ULONG, pArgumentInfo: *mut COR_PRF_FUNCTION_ARGUMENT_INFO) -> HRESULT { E_NOTIMPL }
        /// In a leave hook with info: gets the frame and the return value's range.
        fn GetFunctionLeave3Info(functionId: FunctionID, eltInfo: COR_PRF_ELT_INFO, pFrameInfo: *mut COR_PRF_FRAME_INFO, pRetvalRange: *mut COR_PRF_FUNCTION_ARGUMENT_RANGE) -> HRESULT { E_NOTIMPL }
        /// In a tailcall hook with info: gets the frame.
        fn GetFunctionTailcall3Info(functionId: FunctionID, eltInfo: COR_PRF_ELT_INFO, pFrameInfo: *mut COR_PRF_FRAME_INFO) -> HRESULT { E_NOTIMPL }
        /// Gets an enumerator (`ICorProfilerModuleEnum`, written to `ppEnum`) over the loaded modules.
        fn EnumModules(ppEnum: *mut *mut c_void) -> HRESULT { E_NOTIMPL }
        /// Gets the runtime's instance ID, kind, version numbers and version string.
        fn GetRuntimeInformation(pClrInstanceId: *mut USHORT, pRuntimeType: *mut COR_PRF_RUNTIME_TYPE, pMajorVersion: *mut USHORT, pMinorVersion: *mut USHORT, pBuildNumber: *mut USHORT, pQFEVersion: *mut USHORT, cchVersionString: ULONG, pcchVersionString: *mut ULONG, szVersionString: *mut WCHAR) -> HRESULT { E_NOTIMPL }
        /// Gets the address of a thread-static field for a thread in an application domain.
        fn GetThreadStaticAddress2(classId: ClassID, fieldToken: mdFieldDef, appDomainId: AppDomainID, threadId: ThreadID, ppAddress: *mut *mut c_void) -> HRESULT { E_NOTIMPL }
        /// Gets the application domains a module is loaded in.
        fn GetAppDomainsContainingModule(moduleId: ModuleID, cAppDomainIds: ULONG32, pcAppDomainIds: *mut ULONG32, appDomainIds: *mut AppDomainID) -> HRESULT { E_NOTIMPL }
        /// Like `GetModuleInfo`, plus the module's `COR_PRF_MODULE_FLAGS` bits.
        fn GetModuleInfo2(moduleId: ModuleID, ppBaseLoadAddress: *mut *const BYTE, cchName: ULONG, pcchName: *mut ULONG, szName: *mut WCHAR, pAssemblyId: *mut AssemblyID, pdwModuleFlags: *mut DWORD) -> HRESULT { E_NOTIMPL }
    }

    /// Adds ReJIT (request, revert, per-version code info), thread
    /// enumeration and 64-bit object sizes. Introduced in .NET Framework 4.5.
    #[iid("0d8fdcaa-6257-47bf-b1bf-94dac88466ee")]
    #[vtable(ICorProfilerInfo4_Vtbl)]
    #[implement(ICorProfilerInfo4_Impl: ICorProfilerInfo3_Impl)]
    #[agile]
    pub unsafe interface ICorProfilerInfo4: ICorProfilerInfo3 {
        /// Gets an enumerator (`ICorProfilerThreadEnum`, written to `ppEnum`) over the managed threads.
        fn EnumThreads(ppEnum: *mut *mut c_void) -> HRESULT { E_NOTIMPL }
        /// Initializes the calling thread ahead of time, so later profiler calls on it do not deadlock.
        fn InitializeCurrentThread() -> HRESULT { E_NOTIMPL }
        /// Requests that the given methods (parallel module/method arrays) be JIT-compiled again, for future calls.
        fn RequestReJIT(cFunctions: ULONG, moduleIds: *mut ModuleID, methodIds: *mut mdMethodDef) -> HRESULT { E_NOTIMPL }
        /// Reverts the given methods to their original IL, with a per-method status.
        fn RequestRevert(cFunctions: ULONG, moduleIds: *mut ModuleID, methodIds: *mut mdMethodDef, status: *mut HRESULT) -> HRESULT { E_NOTIMPL }
        /// Like `GetCodeInfo2`, for one ReJIT version of a function.
        fn GetCodeInfo3(functionID: FunctionID, reJitId: ReJITID, cCodeInfos: ULONG32, pcCodeInfos: *mut ULONG32, codeInfos: *mut COR_PRF_CODE_INFO) -> HRESULT { E_NOTIMPL }
        /// Like `GetFunctionFromIP`, also giving the ReJIT version the address belongs to.
        fn GetFunctionFromIP2(ip: *const BYTE, pFunctionId: *mut FunctionID, pReJitId: *mut ReJITID) -> HRESULT { E_NOTIMPL }
        /// Gets the ReJIT versions of a function.
        fn GetReJITIDs(functionId: FunctionID, cReJitIds: ULONG, pcReJitIds: *mut ULONG, reJitIds: *mut ReJITID) -> HRESULT { E_NOTIMPL }
        /// Like `GetILToNativeMapping`, for one ReJIT version of a function.
        fn GetILToNativeMapping2(functionId: FunctionID, reJitId: ReJITID, cMap: ULONG32, pcMap: *mut ULONG32, map: *mut COR_DEBUG_IL_TO_NATIVE_MAP) -> HRESULT { E_NOTIMPL }
        /// Gets an enumerator (`ICorProfilerFunctionEnum`, written to `ppEnum`) over the functions JIT-compiled so far, with ReJIT IDs.
        fn EnumJITedFunctions2(ppEnum: *mut *mut c_void) -> HRESULT { E_NOTIMPL }
        /// Gets an object's size as a pointer-sized value.
        fn GetObjectSize2(objectId: ObjectID, pcSize: *mut SIZE_T) -> HRESULT { E_NOTIMPL }
    }

    /// Adds the 64-bit event mask (low and high words). Introduced in .NET
    /// Framework 4.5.2.
    #[iid("07602928-CE38-4B83-81E7-74ADAF781214")]
    #[vtable(ICorProfilerInfo5_Vtbl)]
    #[implement(ICorProfilerInfo5_Impl: ICorProfilerInfo4_Impl)]
    #[agile]
    pub unsafe interface ICorProfilerInfo5: ICorProfilerInfo4 {
        /// Gets the event mask: `COR_PRF_MONITOR` bits (low) and `COR_PRF_HIGH_MONITOR` bits (high).
        fn GetEventMask2(pdwEventsLow: *mut DWORD, pdwEventsHigh: *mut DWORD) -> HRESULT { E_NOTIMPL }
        /// Sets the event mask: `COR_PRF_MONITOR` bits (low) and `COR_PRF_HIGH_MONITOR` bits (high).
        fn SetEventMask2(dwEventsLow: DWORD, dwEventsHigh: DWORD) -> HRESULT { E_NOTIMPL }
    }

    /// Adds enumeration of the precompiled methods that inlined a given
    /// method. Introduced in .NET Framework 4.6.
    #[iid("F30A070D-BFFB-46A7-B1D8-8781EF7B698A")]
    #[vtable(ICorProfilerInfo6_Vtbl)]
    #[implement(ICorProfilerInfo6_Impl: ICorProfilerInfo5_Impl)]
    #[agile]
    pub unsafe interface ICorProfilerInfo6: ICorProfilerInfo5 {
        /// Gets an enumerator (`ICorProfilerMethodEnum`, written to `ppEnum`) over the methods of a precompiled module that inlined a method; `incompleteData` says whether more may appear later.
        fn EnumNgenModuleMethodsInliningThisMethod(inlinersModuleId: ModuleID, inlineeModuleId: ModuleID, inlineeMethodId: mdMethodDef, incompleteData: *mut BOOL, ppEnum: *mut *mut c_void) -> HRESULT { E_NOTIMPL }
    }

    /// Adds applying newly emitted metadata and reading in-memory symbols.
    /// Introduced in .NET Framework 4.6.1.
    #[iid("9AEECC0D-63E0-4187-8C00-E312F503F663")]
    #[vtable(ICorProfilerInfo7_Vtbl)]
    #[implement(ICorProfilerInfo7_Impl: ICorProfilerInfo6_Impl)]
    #[agile]
    pub unsafe interface ICorProfilerInfo7: ICorProfilerInfo6 {
        /// Applies metadata the profiler defined through `IMetaDataEmit` to a module.
        fn ApplyMetaData(moduleId: ModuleID) -> HRESULT { E_NOTIMPL }
        /// Gets the length of a module's in-memory symbol stream (0 if none).
        fn GetInMemorySymbolsLength(moduleId: ModuleID, pCountSymbolBytes: *mut DWORD) -> HRESULT { E_NOTIMPL }
        /// Reads bytes of a module's in-memory symbol stream from an offset.
        fn ReadInMemorySymbols(moduleId: ModuleID, symbolsReadOffset: DWORD, pSymbolBytes: *mut BYTE, countSymbolBytes: DWORD, pCountSymbolBytesRead: *mut DWORD) -> HRESULT { E_NOTIMPL }
    }

    /// Adds queries about dynamic methods (IL stubs, LCG) that have no
    /// metadata. Introduced in .NET Framework 4.7.2.
    #[iid("C5AC80A6-782E-4716-8044-39598C60CFBF")]
    #[vtable(ICorProfilerInfo8_Vtbl)]
    #[implement(ICorProfilerInfo8_Impl: ICorProfilerInfo7_Impl)]
    #[agile]
    pub unsafe interface ICorProfilerInfo8: ICorProfilerInfo7 {
        /// Tells whether a function is dynamic (has no metadata).
        fn IsFunctionDynamic(functionId: FunctionID, isDynamic: *mut BOOL) -> HRESULT { E_NOTIMPL }
        /// Maps an instruction pointer to its function and ReJIT version, dynamic methods included.
        fn GetFunctionFromIP3(ip: *const BYTE, functionId: *mut FunctionID, pReJitId: *mut ReJITID) -> HRESULT { E_NOTIMPL }
        /// Gets a dynamic method's module, signature and name (if any).
        fn GetDynamicFunctionInfo(functionId: FunctionID, moduleId: *mut ModuleID, ppvSig: *mut PCCOR_SIGNATURE, pbSig: *mut ULONG, cchName: ULONG, pcchName: *mut ULONG, wszName: *mut WCHAR) -> HRESULT { E_NOTIMPL }
    }

    /// Adds queries about functions with several native code versions
    /// (tiered compilation). Introduced in .NET Core 2.1.
    #[iid("008170DB-F8CC-4796-9A51-DC8AA0B47012")]
    #[vtable(ICorProfilerInfo9_Vtbl)]
    #[implement(ICorProfilerInfo9_Impl: ICorProfilerInfo8_Impl)]
    #[agile]
    pub unsafe interface ICorProfilerInfo9: ICorProfilerInfo8 {
        /// Gets the native start addresses of every existing compiled version of a function's ReJIT version.
        fn GetNativeCodeStartAddresses(functionID: FunctionID, reJitId: ReJITID, cCodeStartAddresses: ULONG32, pcCodeStartAddresses: *mut ULONG32, codeStartAddresses: *mut UINT_PTR) -> HRESULT { E_NOTIMPL }
        /// Gets the IL-to-native map of the code version starting at an address.
        fn GetILToNativeMapping3(pNativeCodeStartAddress: UINT_PTR, cMap: ULONG32, pcMap: *mut ULONG32, map: *mut COR_DEBUG_IL_TO_NATIVE_MAP) -> HRESULT { E_NOTIMPL }
        /// Gets the memory ranges holding the code version starting at an address.
        fn GetCodeInfo4(pNativeCodeStartAddress: UINT_PTR, cCodeInfos: ULONG32, pcCodeInfos: *mut ULONG32, codeInfos: *mut COR_PRF_CODE_INFO) -> HRESULT { E_NOTIMPL }
    }

    /// Adds object-reference walking, frozen objects, the LOH threshold,
    /// ReJIT with inliners and runtime suspension. Introduced in .NET Core
    /// 3.0.
    #[iid("2F1B5152-C869-40C9-AA5F-3ABE026BD720")]
    #[vtable(ICorProfilerInfo10_Vtbl)]
    #[implement(ICorProfilerInfo10_Impl: ICorProfilerInfo9_Impl)]
    #[agile]
    pub unsafe interface ICorProfilerInfo10: ICorProfilerInfo9 {
        /// Calls `callback` for each object an object references.
        fn EnumerateObjectReferences(objectId: ObjectID, callback: Option<ObjectReferenceCallback>, clientData: *mut c_void) -> HRESULT { E_NOTIMPL }
        /// Tells whether an object lives in a read-only (frozen) segment.
        fn IsFrozenObject(objectId: ObjectID, pbFrozen: *mut BOOL) -> HRESULT { E_NOTIMPL }
        /// Gets the size threshold above which objects go to the large object heap.
        fn GetLOHObjectSizeThreshold(pThreshold: *mut DWORD) -> HRESULT { E_NOTIMPL }
        /// Like `RequestReJIT`, also re-compiling every method that inlined them (`dwRejitFlags`: `COR_PRF_REJIT_FLAGS`).
        fn RequestReJITWithInliners(dwRejitFlags: DWORD, cFunctions: ULONG, moduleIds: *mut ModuleID, methodIds: *mut mdMethodDef) -> HRESULT { E_NOTIMPL }
        /// Suspends the runtime without collecting garbage.
        fn SuspendRuntime() -> HRESULT { E_NOTIMPL }
        /// Resumes the runtime after `SuspendRuntime`.
        fn ResumeRuntime() -> HRESULT { E_NOTIMPL }
    }

    /// Adds reading and setting environment variables of the managed
    /// process. Introduced in .NET Core 3.1.
    #[iid("06398876-8987-4154-B621-40A00D6E4D04")]
    #[vtable(ICorProfilerInfo11_Vtbl)]
    #[implement(ICorProfilerInfo11_Impl: ICorProfilerInfo10_Impl)]
    #[agile]
    pub unsafe interface ICorProfilerInfo11: ICorProfilerInfo10 {
        /// Gets the value of an environment variable as the managed code sees it.
        fn GetEnvironmentVariable(szName: *const WCHAR, cchValue: ULONG, pcchValue: *mut ULONG, szValue: *mut WCHAR) -> HRESULT { E_NOTIMPL }
        /// Sets (or, with a null value, deletes) an environment variable of the process.
        fn SetEnvironmentVariable(szName: *const WCHAR, szValue: *const WCHAR) -> HRESULT { E_NOTIMPL }
    }

    /// Adds EventPipe: sessions, providers, event definitions and writing
    /// events. Introduced in .NET 5.
    #[iid("27b24ccd-1cb1-47c5-96ee-98190dc30959")]
    #[vtable(ICorProfilerInfo12_Vtbl)]
    #[implement(ICorProfilerInfo12_Impl: ICorProfilerInfo11_Impl)]
    #[agile]
    pub unsafe interface ICorProfilerInfo12: ICorProfilerInfo11 {
        /// Starts an EventPipe session with the given providers, optionally with rundown.
        fn EventPipeStartSession(cProviderConfigs: u32, pProviderConfigs: *mut COR_PRF_EVENTPIPE_PROVIDER_CONFIG, requestRundown: BOOL, pSession: *mut EVENTPIPE_SESSION) -> HRESULT { E_NOTIMPL }
        /// Enables one more provider in a running session (the configuration is passed by value).
        fn EventPipeAddProviderToSession(session: EVENTPIPE_SESSION, providerConfig: COR_PRF_EVENTPIPE_PROVIDER_CONFIG) -> HRESULT { E_NOTIMPL }
        /// Stops an EventPipe session.
        fn EventPipeStopSession(session: EVENTPIPE_SESSION) -> HRESULT { E_NOTIMPL }
        /// Creates an EventPipe provider with the given name.
        fn EventPipeCreateProvider(providerName: *const WCHAR, pProvider: *mut EVENTPIPE_PROVIDER) -> HRESULT { E_NOTIMPL }
        /// Gets an EventPipe provider's name.
        fn EventPipeGetProviderInfo(provider: EVENTPIPE_PROVIDER, cchName: ULONG, pcchName: *mut ULONG, providerName: *mut WCHAR) -> HRESULT { E_NOTIMPL }
        /// Defines an event of a provider: name, ID, keywords, version, level, opcode, stack capture and parameters.
        fn EventPipeDefineEvent(provider: EVENTPIPE_PROVIDER, eventName: *const WCHAR, eventID: u32, keywords: u64, eventVersion: u32, level: u32, opcode: u8, needStack: BOOL, cParamDescs: u32, pParamDescs: *mut COR_PRF_EVENTPIPE_PARAM_DESC, pEvent: *mut EVENTPIPE_EVENT) -> HRESULT { E_NOTIMPL }
        /// Writes an instance of an event, from its payload pieces and optional activity IDs.
        fn EventPipeWriteEvent(event: EVENTPIPE_EVENT, cData: u32, data: *mut COR_PRF_EVENT_DATA, pActivityId: *const GUID, pRelatedActivityId: *const GUID) -> HRESULT { E_NOTIMPL }
    }

    /// Adds GC handles the profiler owns. Introduced in .NET 7.
    ///
    /// A handle is the IDL's `ObjectHandleID` (`typedef void** ObjectHandleID`),
    /// spelled here as that expansion, `*mut *mut c_void`.
    #[iid("6E6C7EE2-0701-4EC2-9D29-2E8733B66934")]
    #[vtable(ICorProfilerInfo13_Vtbl)]
    #[implement(ICorProfilerInfo13_Impl: ICorProfilerInfo12_Impl)]
    #[agile]
    pub unsafe interface ICorProfilerInfo13: ICorProfilerInfo12 {
        /// Creates a GC handle of the given kind to an object; the handle (`ObjectHandleID`, i.e. `void**`) is written to `pHandle`.
        fn CreateHandle(object: ObjectID, r#type: COR_PRF_HANDLE_TYPE, pHandle: *mut *mut *mut c_void) -> HRESULT { E_NOTIMPL }
        /// Destroys a GC handle (`ObjectHandleID`) made by `CreateHandle`.
        fn DestroyHandle(handle: *mut *mut c_void) -> HRESULT { E_NOTIMPL }
        /// Gets the object a GC handle (`ObjectHandleID`) refers to.
        fn GetObjectIDFromHandle(handle: *mut *mut c_void, pObject: *mut ObjectID) -> HRESULT { E_NOTIMPL }
    }

    /// Adds the non-GC (frozen) heap and EventPipe providers with an enable
    /// callback. Introduced in .NET 8.
    #[iid("F460E352-D76D-4FE9-835F-F6AF9D6E862D")]
    #[vtable(ICorProfilerInfo14_Vtbl)]
    #[implement(ICorProfilerInfo14_Impl: ICorProfilerInfo13_Impl)]
    #[agile]
    pub unsafe interface ICorProfilerInfo14: ICorProfilerInfo13 {
        /// Gets an enumerator (`ICorProfilerObjectEnum`, written to `ppEnum`) over the objects on the non-GC heap.
        fn EnumerateNonGCObjects(ppEnum: *mut *mut c_void) -> HRESULT { E_NOTIMPL }
        /// Gets the memory ranges of the non-GC heap.
        fn GetNonGCHeapBounds(cObjectRanges: ULONG, pcObjectRanges: *mut ULONG, ranges: *mut COR_PRF_NONGC_HEAP_RANGE) -> HRESULT { E_NOTIMPL }
        /// Creates an EventPipe provider whose callback runs whenever a session enables or disables it.
        fn EventPipeCreateProvider2(providerName: *const WCHAR, pCallback: Option<EventPipeProviderCallback>, pProvider: *mut EVENTPIPE_PROVIDER) -> HRESULT { E_NOTIMPL }
    }

    /// Adds walking every object on the GC heap. The newest version; absent from .NET Core 3.1 (which offers up to ICorProfilerInfo11).
    #[iid("B446462D-BD22-41DD-872D-DC714C49EB56")]
    #[vtable(ICorProfilerInfo15_Vtbl)]
    #[implement(ICorProfilerInfo15_Impl: ICorProfilerInfo14_Impl)]
    #[agile]
    pub unsafe interface ICorProfilerInfo15: ICorProfilerInfo14 {
        /// Calls `callback` for each object on the GC heap until it returns `FALSE`, suspending the runtime unless already suspended.
        fn EnumerateGCHeapObjects(callback: Option<ObjectCallback>, callbackState: *mut c_void) -> HRESULT { E_NOTIMPL }
    }
}
