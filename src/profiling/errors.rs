//! The `CORPROF_E_*` codes of the profiling API (facility `0x13`, range
//! `0x8013_135x`–`0x8013_138x` of the runtime's corerror.xml), with their
//! documented meanings.
//!
//! (More in the [`profiling`](crate::profiling) module documentation.)
#![allow(non_upper_case_globals)]

crate::com::hresult::hresult_codes! {
    /// The profiling API's codes.
    CODES;
    /// The function has not been JIT-compiled yet, so it has no native code to report.
    CORPROF_E_FUNCTION_NOT_COMPILED = 0x8013_1350;
    /// The ID refers to something (a class, module, static...) that is not fully loaded or defined yet; try again later.
    CORPROF_E_DATAINCOMPLETE = 0x8013_1351;
    /// The method has no IL body (for example an abstract, P/Invoke or runtime-implemented method).
    CORPROF_E_FUNCTION_NOT_IL = 0x8013_1354;
    /// The calling thread has never run managed code, so the runtime has no managed thread for it.
    CORPROF_E_NOT_MANAGED_THREAD = 0x8013_1355;
    /// The method may only be called while the profiler is being initialized (inside `Initialize`).
    CORPROF_E_CALL_ONLY_FROM_INIT = 0x8013_1356;
    /// The requested information is not available yet.
    CORPROF_E_NOT_YET_AVAILABLE = 0x8013_135B;
    /// The type is generic (parameterized), which this method does not accept.
    CORPROF_E_TYPE_IS_PARAMETERIZED = 0x8013_135C;
    /// The function is generic (parameterized), which this method does not accept.
    CORPROF_E_FUNCTION_IS_PARAMETERIZED = 0x8013_135D;
    /// The stack snapshot was asked for a thread that cannot be walked (invalid, dead, or not a managed thread).
    CORPROF_E_STACKSNAPSHOT_INVALID_TGT_THREAD = 0x8013_135E;
    /// The stack snapshot cannot start from the given context because that thread is running unmanaged code.
    CORPROF_E_STACKSNAPSHOT_UNMANAGED_CTX = 0x8013_135F;
    /// Walking the stack at this point could deadlock or corrupt data, so the snapshot was refused.
    CORPROF_E_STACKSNAPSHOT_UNSAFE = 0x8013_1360;
    /// The profiler's stack snapshot callback asked to stop the walk.
    CORPROF_E_STACKSNAPSHOT_ABORTED = 0x8013_1361;
    /// The static field is a literal (a constant), which lives only in metadata and has no address.
    CORPROF_E_LITERALS_HAVE_NO_ADDRESS = 0x8013_1362;
    /// The method was called at a time it does not support (for example asynchronously, or where it could trigger a GC or take locks out of order).
    CORPROF_E_UNSUPPORTED_CALL_SEQUENCE = 0x8013_1363;
    /// An asynchronous call that is allowed in general was made at an unsafe moment (for example while the runtime holds locks).
    CORPROF_E_ASYNCHRONOUS_UNSAFE = 0x8013_1364;
    /// The ClassID is an array type, which this method cannot inspect.
    CORPROF_E_CLASSID_IS_ARRAY = 0x8013_1365;
    /// The ClassID is a composite type other than an array (for example a by-ref or pointer type), which this method cannot inspect.
    CORPROF_E_CLASSID_IS_COMPOSITE = 0x8013_1366;
    /// The call was refused because the profiler is detaching.
    CORPROF_E_PROFILER_DETACHING = 0x8013_1367;
    /// The profiler does not support being attached to a running process.
    CORPROF_E_PROFILER_NOT_ATTACHABLE = 0x8013_1368;
    /// A message on the profiler-attach pipe had an unrecognized format.
    CORPROF_E_UNRECOGNIZED_PIPE_MSG_FORMAT = 0x8013_1369;
    /// The attach request was refused because a profiler is already loaded in the process.
    CORPROF_E_PROFILER_ALREADY_ACTIVE = 0x8013_136A;
    /// The target process's runtime version is incompatible with the process requesting the attach.
    CORPROF_E_PROFILEE_INCOMPATIBLE_WITH_TRIGGER = 0x8013_136B;
    /// Communication with the target process over the attach pipe failed (often because the target is exiting).
    CORPROF_E_IPC_FAILED = 0x8013_136C;
    /// No process with the given ID was found to attach the profiler to.
    CORPROF_E_PROFILEE_PROCESS_NOT_FOUND = 0x8013_136D;
    /// The call needs the profiler to implement ICorProfilerCallback3.
    CORPROF_E_CALLBACK3_REQUIRED = 0x8013_136E;
    /// The call is only supported for profilers loaded at startup, not for ones that attached later.
    CORPROF_E_UNSUPPORTED_FOR_ATTACHING_PROFILER = 0x8013_136F;
    /// The profiler cannot detach because it instrumented IL or installed enter/leave hooks; it stays attached.
    CORPROF_E_IRREVERSIBLE_INSTRUMENTATION_PRESENT = 0x8013_1370;
    /// The runtime is not fully initialized yet; the call may succeed once it has started.
    CORPROF_E_RUNTIME_UNINITIALIZED = 0x8013_1371;
    /// The profiler cannot detach because it set immutable event flags at startup; it stays attached.
    CORPROF_E_IMMUTABLE_FLAGS_SET = 0x8013_1372;
    /// The profiler itself is not fully initialized yet, so the call cannot complete.
    CORPROF_E_PROFILER_NOT_YET_INITIALIZED = 0x8013_1373;
    /// The call needs event-mask flags that are not set, or conflicts with flags that are set.
    CORPROF_E_INCONSISTENT_WITH_FLAGS = 0x8013_1374;
    /// The profiler asked the runtime not to load it into this process.
    CORPROF_E_PROFILER_CANCEL_ACTIVATION = 0x8013_1375;
    /// Concurrent (background) GC is enabled, which rules out COR_PRF_MONITOR_GC.
    CORPROF_E_CONCURRENT_GC_NOT_PROFILABLE = 0x8013_1376;
    /// The operation requires debugging support to be enabled in the runtime.
    CORPROF_E_DEBUGGING_DISABLED = 0x8013_1378;
    /// The attach timed out waiting for a concurrent GC to finish.
    CORPROF_E_TIMEOUT_WAITING_FOR_CONCURRENT_GC = 0x8013_1379;
    /// The module was generated dynamically (Reflection.Emit), which this method does not support.
    CORPROF_E_MODULE_IS_DYNAMIC = 0x8013_137A;
    /// The call needs the profiler to implement ICorProfilerCallback4.
    CORPROF_E_CALLBACK4_REQUIRED = 0x8013_137B;
    /// ReJIT was not enabled: set COR_PRF_ENABLE_REJIT in the event mask during initialization first.
    CORPROF_E_REJIT_NOT_ENABLED = 0x8013_137C;
    /// The function is instantiated in a collectible assembly, which this method does not support.
    CORPROF_E_FUNCTION_IS_COLLECTIBLE = 0x8013_137E;
    /// The call needs the profiler to implement ICorProfilerCallback6.
    CORPROF_E_CALLBACK6_REQUIRED = 0x8013_1380;
    /// The call needs the profiler to implement ICorProfilerCallback7.
    CORPROF_E_CALLBACK7_REQUIRED = 0x8013_1382;
    /// The runtime is not tracking inlined methods for ReJIT, so inliners cannot be re-JIT-compiled.
    CORPROF_E_REJIT_INLINING_DISABLED = 0x8013_1383;
    /// The runtime cannot be suspended because a suspension is already in progress.
    CORPROF_E_SUSPENSION_IN_PROGRESS = 0x8013_1388;
}
