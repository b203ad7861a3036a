//! The safe facade's callback half, driven the way the runtime drives it: a
//! fake runtime (`ICorProfilerInfo11` implemented in Rust), a recording
//! [`Profiler`], and the exported callback object called through raw vtable
//! slots read from `*this`, at the indices of corprof.idl's method order.
#![cfg(feature = "std")]
#![allow(missing_docs, non_snake_case)]

mod common;

use common::ids::fake_id;

use common::vtable::slot;
use core::ffi::c_void;
use core::ptr::{null, null_mut};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use corprof::facade::{
    export_profiler, Bools, EventPipeEvent, FunctionInfo, Profiler, ProfilerCallback, ProfilerInfo,
    Result,
};
use corprof::metadata::{mdMethodDef, mdToken};
use corprof::profiling::*;
use corprof::*;

// ---------------------------------------------------------------------------
// Calling the callback object as the runtime does.
// ---------------------------------------------------------------------------

/// The exported callback object, called the way the runtime calls it: each
/// method reads its slot (numbered from corprof.idl, not from the Rust
/// declaration) out of `*this` and calls it with the IDL's signature.
///
/// Test-only, and safe on purpose: the tests pass pointers to live locals
/// or deliberately bad ones (null, misaligned), which the adapter must
/// refuse without reading them.
#[derive(Clone, Copy)]
struct Raw(*mut c_void);

macro_rules! slots {
    ($($index:literal $name:ident($($arg:ident: $ty:ty),*);)*) => {
        impl Raw {
            $(
                #[allow(clippy::too_many_arguments)]
                fn $name(self $(, $arg: $ty)*) -> HRESULT {
                    // SAFETY: slot `$index` of an ICorProfilerCallback11
                    // object is `$name` with this signature (corprof.idl);
                    // the arguments are live locals or pointers the
                    // adapter must refuse.
                    unsafe {
                        let f: unsafe extern "system" fn(*mut c_void $(, $ty)*) -> HRESULT =
                            core::mem::transmute(slot(self.0, $index));
                        f(self.0 $(, $arg)*)
                    }
                }
            )*
        }
    };
}

// Slot = 3 (IUnknown's) + position in corprof.idl: ICorProfilerCallback's
// 69 methods take slots 3..=71, then versions 2 (8 methods), 3 (3), 4 (6),
// 5, 6, 7 (1 each), 8 (2), 9 (1), 10 (2) and 11 (1, slot 97).
slots! {
    3 Initialize(info: *mut c_void);
    4 Shutdown();
    5 AppDomainCreationStarted(app_domain: AppDomainID);
    10 AssemblyLoadFinished(assembly: AssemblyID, status: HRESULT);
    14 ModuleLoadFinished(module: ModuleID, status: HRESULT);
    23 JITCompilationStarted(function: FunctionID, safe_to_block: BOOL);
    24 JITCompilationFinished(function: FunctionID, status: HRESULT, safe_to_block: BOOL);
    25 JITCachedFunctionSearchStarted(function: FunctionID, use_cached: *mut BOOL);
    28 JITInlining(caller: FunctionID, callee: FunctionID, should_inline: *mut BOOL);
    29 ThreadCreated(thread: ThreadID);
    33 RemotingClientSendingMessage(cookie: *const GUID, is_async: BOOL);
    42 RuntimeSuspendStarted(reason: COR_PRF_SUSPEND_REASON);
    49 MovedReferences(
        count: ULONG,
        old: *const ObjectID,
        new: *const ObjectID,
        lengths: *const ULONG
    );
    53 RootReferences(count: ULONG, roots: *const ObjectID);
    60 ExceptionOSHandlerEnter(unused: UINT_PTR);
    68 COMClassicVTableCreated(class: ClassID, iid: *const GUID, vtable: *mut c_void, slots: ULONG);
    71 ExceptionCLRCatcherExecute();
    72 ThreadNameChanged(thread: ThreadID, count: ULONG, name: *const WCHAR);
    73 GarbageCollectionStarted(count: i32, generations: *const BOOL, reason: COR_PRF_GC_REASON);
    76 FinalizeableObjectQueued(flags: DWORD, object: ObjectID);
    77 RootReferences2(
        count: ULONG,
        roots: *const ObjectID,
        kinds: *const COR_PRF_GC_ROOT_KIND,
        flags: *const COR_PRF_GC_ROOT_FLAGS,
        ids: *const UINT_PTR
    );
    80 InitializeForAttach(info: *mut c_void, data: *const c_void, size: UINT);
    81 ProfilerAttachComplete();
    84 GetReJITParameters(module: ModuleID, method: mdMethodDef, control: *mut c_void);
    87 MovedReferences2(
        count: ULONG,
        old: *const ObjectID,
        new: *const ObjectID,
        lengths: *const SIZE_T
    );
    89 ConditionalWeakTableElementReferences(
        count: ULONG,
        keys: *const ObjectID,
        values: *const ObjectID,
        handles: *const GCHandleID
    );
    90 GetAssemblyReferences(path: *const WCHAR, provider: *mut c_void);
    91 ModuleInMemorySymbolsUpdated(module: ModuleID);
    92 DynamicMethodJITCompilationStarted(
        function: FunctionID,
        safe_to_block: BOOL,
        header: *const BYTE,
        size: ULONG
    );
    94 DynamicMethodUnloaded(function: FunctionID);
    95 EventPipeEventDelivered(
        provider: EVENTPIPE_PROVIDER,
        event_id: DWORD,
        event_version: DWORD,
        metadata_size: ULONG,
        metadata: *const BYTE,
        data_size: ULONG,
        data: *const BYTE,
        activity_id: *const GUID,
        related_activity_id: *const GUID,
        thread: ThreadID,
        frame_count: ULONG,
        frames: *const UINT_PTR
    );
    96 EventPipeProviderCreated(provider: EVENTPIPE_PROVIDER);
    97 LoadAsNotificationOnly(notification_only: *mut BOOL);
}

type QueryInterfaceFn =
    unsafe extern "system" fn(*mut c_void, *const GUID, *mut *mut c_void) -> HRESULT;
type ReleaseFn = unsafe extern "system" fn(*mut c_void) -> u32;

// ---------------------------------------------------------------------------
// The fake runtime: ICorProfilerInfo..11 with the defaults (E_NOTIMPL)
// except the event masks (recorded), GetFunctionInfo and GetCurrentThreadID.
// ---------------------------------------------------------------------------

const FAKE_CLASS: ClassID = fake_id!(ClassID, 0xC1A55);
const FAKE_MODULE: ModuleID = fake_id!(ModuleID, 0x30D);
const FAKE_TOKEN: u32 = 0x0600_0042;
const FAKE_THREAD: ThreadID = fake_id!(ThreadID, 0x7EAD);

#[derive(Default)]
struct FakeRuntime {
    masks: Mutex<Vec<(u32, Option<u32>)>>,
    drops: Arc<AtomicUsize>,
}

impl Drop for FakeRuntime {
    fn drop(&mut self) {
        self.drops.fetch_add(1, Ordering::SeqCst);
    }
}

impl ICorProfilerInfo_Impl for FakeRuntime {
    unsafe fn SetEventMask(&self, events: DWORD) -> HRESULT {
        self.masks.lock().unwrap().push((events, None));
        S_OK
    }
    unsafe fn GetFunctionInfo(
        &self,
        _function: FunctionID,
        class: *mut ClassID,
        module: *mut ModuleID,
        token: *mut mdToken,
    ) -> HRESULT {
        // SAFETY: the facade passes valid out-pointers.
        unsafe {
            *class = FAKE_CLASS;
            *module = FAKE_MODULE;
            *token = mdToken(FAKE_TOKEN);
        }
        S_OK
    }
    unsafe fn GetCurrentThreadID(&self, thread: *mut ThreadID) -> HRESULT {
        // SAFETY: the facade passes a valid out-pointer.
        unsafe { *thread = FAKE_THREAD };
        S_OK
    }
}
impl ICorProfilerInfo2_Impl for FakeRuntime {}
impl ICorProfilerInfo3_Impl for FakeRuntime {}
impl ICorProfilerInfo4_Impl for FakeRuntime {}
impl ICorProfilerInfo5_Impl for FakeRuntime {
    unsafe fn SetEventMask2(&self, low: DWORD, high: DWORD) -> HRESULT {
        self.masks.lock().unwrap().push((low, Some(high)));
        S_OK
    }
}
impl ICorProfilerInfo6_Impl for FakeRuntime {}
impl ICorProfilerInfo7_Impl for FakeRuntime {}
impl ICorProfilerInfo8_Impl for FakeRuntime {}
impl ICorProfilerInfo9_Impl for FakeRuntime {}
impl ICorProfilerInfo10_Impl for FakeRuntime {}
impl ICorProfilerInfo11_Impl for FakeRuntime {}

/// The runtime side of `GetReJITParameters`: records what the profiler sets.
#[derive(Default)]
struct FakeFunctionControl {
    flags: Mutex<Vec<u32>>,
    bodies: Mutex<Vec<Vec<u8>>>,
}

impl ICorProfilerFunctionControl_Impl for FakeFunctionControl {
    unsafe fn SetCodegenFlags(&self, flags: DWORD) -> HRESULT {
        self.flags.lock().unwrap().push(flags);
        S_OK
    }
    unsafe fn SetILFunctionBody(&self, size: ULONG, body: *const BYTE) -> HRESULT {
        // SAFETY: the caller passes `size` readable bytes.
        let bytes = unsafe { core::slice::from_raw_parts(body, size as usize) };
        self.bodies.lock().unwrap().push(bytes.to_vec());
        S_OK
    }
}

/// The runtime side of `GetAssemblyReferences`: counts the references.
#[derive(Default)]
struct FakeReferenceProvider {
    added: AtomicUsize,
}

impl ICorProfilerAssemblyReferenceProvider_Impl for FakeReferenceProvider {
    unsafe fn AddAssemblyReference(
        &self,
        _info: *const COR_PRF_ASSEMBLY_REFERENCE_INFO,
    ) -> HRESULT {
        self.added.fetch_add(1, Ordering::SeqCst);
        S_OK
    }
}

// ---------------------------------------------------------------------------
// The recording profiler.
// ---------------------------------------------------------------------------

#[derive(Clone, Debug, PartialEq)]
enum Call {
    Initialize {
        version: u32,
    },
    InitializeForAttach {
        version: u32,
        client_data: Vec<u8>,
    },
    JitStarted {
        function: FunctionID,
        safe_to_block: bool,
        where_: FunctionInfo,
        thread: ThreadID,
    },
    JitFinished {
        function: FunctionID,
        status: HRESULT,
        safe_to_block: bool,
    },
    CacheSearch(FunctionID),
    Inlining(FunctionID, FunctionID),
    ThreadCreated(ThreadID),
    ModuleLoadFinished(ModuleID, HRESULT),
    Remoting(Option<GUID>, bool),
    Moved {
        old: Vec<ObjectID>,
        new: Vec<ObjectID>,
        lengths: Vec<u32>,
    },
    Moved2 {
        old: Vec<ObjectID>,
        new: Vec<ObjectID>,
        lengths: Vec<usize>,
    },
    Roots(Vec<ObjectID>),
    Roots2 {
        roots: Vec<ObjectID>,
        kinds: Vec<COR_PRF_GC_ROOT_KIND>,
        flags: Vec<COR_PRF_GC_ROOT_FLAGS>,
        ids: Vec<usize>,
    },
    ThreadName(ThreadID, String),
    GcStarted(Vec<bool>, COR_PRF_GC_REASON),
    Finalizeable(COR_PRF_FINALIZER_FLAGS, ObjectID),
    ReJitParameters(ModuleID, mdMethodDef),
    AssemblyReferences(String),
    DynamicJit(FunctionID, bool, Vec<u8>),
    VTable(ClassID, Option<GUID>, usize, u32),
    EventPipe {
        provider: EVENTPIPE_PROVIDER,
        id: u32,
        version: u32,
        metadata: Vec<u8>,
        data: Vec<u8>,
        activity: Option<GUID>,
        related: Option<GUID>,
        thread: ThreadID,
        stack: Vec<usize>,
    },
    NotificationOnly,
}

const PANIC_THREAD: ThreadID = fake_id!(ThreadID, 0xDEAD);
const FAILING_MODULE: ModuleID = fake_id!(ModuleID, 0xE1);
const FAILING_CALLER: FunctionID = fake_id!(FunctionID, 0xBAD);
const NEW_IL: &[u8] = &[0x02, 0x2A]; // tiny header, `ret`

#[derive(Default)]
struct Recorder {
    calls: Arc<Mutex<Vec<Call>>>,
    inline: bool,
    notification_only: bool,
}

impl Recorder {
    fn log(&self, call: Call) {
        self.calls.lock().unwrap().push(call);
    }
}

impl Profiler for Recorder {
    fn initialize(&self, info: &ProfilerInfo) -> Result<()> {
        self.log(Call::Initialize {
            version: info.version(),
        });
        info.set_event_mask(COR_PRF_MONITOR_JIT_COMPILATION)?;
        info.set_event_mask((
            COR_PRF_MONITOR_JIT_COMPILATION | COR_PRF_MONITOR_GC,
            COR_PRF_HIGH_MONITOR_EVENT_PIPE,
        ))
    }
    fn initialize_for_attach(&self, info: &ProfilerInfo, client_data: &[u8]) -> Result<()> {
        self.log(Call::InitializeForAttach {
            version: info.version(),
            client_data: client_data.to_vec(),
        });
        Ok(())
    }
    fn module_load_finished(
        &self,
        _: &ProfilerInfo,
        module: ModuleID,
        status: HRESULT,
    ) -> Result<()> {
        self.log(Call::ModuleLoadFinished(module, status));
        if module == FAILING_MODULE {
            return Err(CORPROF_E_UNSUPPORTED_CALL_SEQUENCE.into());
        }
        Ok(())
    }
    fn jit_compilation_started(
        &self,
        info: &ProfilerInfo,
        function: FunctionID,
        safe_to_block: bool,
    ) -> Result<()> {
        self.log(Call::JitStarted {
            function,
            safe_to_block,
            where_: info.function_info(function)?,
            thread: info.current_thread()?,
        });
        Ok(())
    }
    fn jit_compilation_finished(
        &self,
        _: &ProfilerInfo,
        function: FunctionID,
        status: HRESULT,
        safe_to_block: bool,
    ) -> Result<()> {
        self.log(Call::JitFinished {
            function,
            status,
            safe_to_block,
        });
        Ok(())
    }
    fn jit_cached_function_search_started(
        &self,
        _: &ProfilerInfo,
        function: FunctionID,
    ) -> Result<bool> {
        self.log(Call::CacheSearch(function));
        Ok(false)
    }
    fn jit_inlining(
        &self,
        _: &ProfilerInfo,
        caller: FunctionID,
        callee: FunctionID,
    ) -> Result<bool> {
        self.log(Call::Inlining(caller, callee));
        if caller == FAILING_CALLER {
            return Err(E_ACCESSDENIED.into());
        }
        Ok(self.inline)
    }
    fn thread_created(&self, _: &ProfilerInfo, thread: ThreadID) -> Result<()> {
        if thread == PANIC_THREAD {
            panic!("the profiler panicked on purpose");
        }
        self.log(Call::ThreadCreated(thread));
        Ok(())
    }
    fn remoting_client_sending_message(
        &self,
        _: &ProfilerInfo,
        cookie: Option<&GUID>,
        is_async: bool,
    ) -> Result<()> {
        self.log(Call::Remoting(cookie.copied(), is_async));
        Ok(())
    }
    fn moved_references(
        &self,
        _: &ProfilerInfo,
        old_starts: &[ObjectID],
        new_starts: &[ObjectID],
        lengths: &[u32],
    ) -> Result<()> {
        self.log(Call::Moved {
            old: old_starts.to_vec(),
            new: new_starts.to_vec(),
            lengths: lengths.to_vec(),
        });
        Ok(())
    }
    fn moved_references2(
        &self,
        _: &ProfilerInfo,
        old_starts: &[ObjectID],
        new_starts: &[ObjectID],
        lengths: &[usize],
    ) -> Result<()> {
        self.log(Call::Moved2 {
            old: old_starts.to_vec(),
            new: new_starts.to_vec(),
            lengths: lengths.to_vec(),
        });
        Ok(())
    }
    fn root_references(&self, _: &ProfilerInfo, roots: &[ObjectID]) -> Result<()> {
        self.log(Call::Roots(roots.to_vec()));
        Ok(())
    }
    fn root_references2(
        &self,
        _: &ProfilerInfo,
        roots: &[ObjectID],
        kinds: &[COR_PRF_GC_ROOT_KIND],
        flags: &[COR_PRF_GC_ROOT_FLAGS],
        root_ids: &[usize],
    ) -> Result<()> {
        self.log(Call::Roots2 {
            roots: roots.to_vec(),
            kinds: kinds.to_vec(),
            flags: flags.to_vec(),
            ids: root_ids.to_vec(),
        });
        Ok(())
    }
    fn thread_name_changed(&self, _: &ProfilerInfo, thread: ThreadID, name: String) -> Result<()> {
        self.log(Call::ThreadName(thread, name));
        Ok(())
    }
    fn garbage_collection_started(
        &self,
        _: &ProfilerInfo,
        generations_collected: Bools<'_>,
        reason: COR_PRF_GC_REASON,
    ) -> Result<()> {
        assert_eq!(
            generations_collected.len(),
            generations_collected.iter().count()
        );
        self.log(Call::GcStarted(
            generations_collected.iter().collect(),
            reason,
        ));
        Ok(())
    }
    fn finalizeable_object_queued(
        &self,
        _: &ProfilerInfo,
        finalizer_flags: COR_PRF_FINALIZER_FLAGS,
        object: ObjectID,
    ) -> Result<()> {
        self.log(Call::Finalizeable(finalizer_flags, object));
        Ok(())
    }
    fn get_rejit_parameters(
        &self,
        _: &ProfilerInfo,
        module: ModuleID,
        method: mdMethodDef,
        control: ComRef<'_, ICorProfilerFunctionControl>,
    ) -> Result<()> {
        self.log(Call::ReJitParameters(module, method));
        // SAFETY: `control` is live for the call; the body is a valid slice.
        unsafe {
            control
                .SetCodegenFlags(COR_PRF_CODEGEN_DISABLE_INLINING.0)
                .ok()?;
            control
                .SetILFunctionBody(NEW_IL.len() as u32, NEW_IL.as_ptr())
                .ok_with("SetILFunctionBody")
        }
    }
    fn get_assembly_references(
        &self,
        _: &ProfilerInfo,
        assembly_path: String,
        provider: ComRef<'_, ICorProfilerAssemblyReferenceProvider>,
    ) -> Result<()> {
        self.log(Call::AssemblyReferences(assembly_path));
        // SAFETY: `provider` is live for the call; the fake ignores the
        // (null) reference description.
        unsafe { provider.AddAssemblyReference(null()) }.ok_with("AddAssemblyReference")
    }
    fn dynamic_method_jit_compilation_started(
        &self,
        _: &ProfilerInfo,
        function: FunctionID,
        is_safe_to_block: bool,
        il_header: &[u8],
    ) -> Result<()> {
        self.log(Call::DynamicJit(
            function,
            is_safe_to_block,
            il_header.to_vec(),
        ));
        Ok(())
    }
    fn com_classic_vtable_created(
        &self,
        _: &ProfilerInfo,
        wrapped_class: ClassID,
        implemented_iid: Option<&GUID>,
        vtable: usize,
        slots: u32,
    ) -> Result<()> {
        self.log(Call::VTable(
            wrapped_class,
            implemented_iid.copied(),
            vtable,
            slots,
        ));
        Ok(())
    }
    fn event_pipe_event_delivered(
        &self,
        _: &ProfilerInfo,
        event: &EventPipeEvent<'_>,
    ) -> Result<()> {
        self.log(Call::EventPipe {
            provider: event.provider,
            id: event.event_id,
            version: event.event_version,
            metadata: event.metadata.to_vec(),
            data: event.data.to_vec(),
            activity: event.activity_id.copied(),
            related: event.related_activity_id.copied(),
            thread: event.thread,
            stack: event.stack.to_vec(),
        });
        Ok(())
    }
    fn load_as_notification_only(&self) -> Result<bool> {
        self.log(Call::NotificationOnly);
        Ok(self.notification_only)
    }
}

/// A profiler that implements nothing: every default.
struct Quiet;
impl Profiler for Quiet {}

// ---------------------------------------------------------------------------
// Harness.
// ---------------------------------------------------------------------------

struct Harness {
    callback: IUnknown,
    runtime: ICorProfilerInfo11,
    fake: Arc<FakeRuntime>,
    calls: Arc<Mutex<Vec<Call>>>,
}

impl Harness {
    /// A recording profiler, exported, not yet initialized.
    fn new() -> Harness {
        Harness::with(Recorder::default())
    }

    fn with(recorder: Recorder) -> Harness {
        let calls = recorder.calls.clone();
        let fake = Arc::new(FakeRuntime::default());
        Harness {
            callback: export_profiler(recorder),
            runtime: export_arc::<ICorProfilerInfo11, _>(fake.clone()),
            fake,
            calls,
        }
    }

    /// Exported and initialized with the fake runtime; the log is cleared.
    fn initialized() -> Harness {
        let h = Harness::new();
        assert_eq!(h.initialize(), S_OK);
        h.calls.lock().unwrap().clear();
        h
    }

    fn this(&self) -> Raw {
        Raw(self.callback.as_raw())
    }

    fn initialize(&self) -> HRESULT {
        self.this().Initialize(self.runtime.as_raw())
    }

    fn calls(&self) -> Vec<Call> {
        core::mem::take(&mut *self.calls.lock().unwrap())
    }
}

fn callback_iids() -> [(GUID, &'static str); 11] {
    [
        (ICorProfilerCallback::IID, "1"),
        (ICorProfilerCallback2::IID, "2"),
        (ICorProfilerCallback3::IID, "3"),
        (ICorProfilerCallback4::IID, "4"),
        (ICorProfilerCallback5::IID, "5"),
        (ICorProfilerCallback6::IID, "6"),
        (ICorProfilerCallback7::IID, "7"),
        (ICorProfilerCallback8::IID, "8"),
        (ICorProfilerCallback9::IID, "9"),
        (ICorProfilerCallback10::IID, "10"),
        (ICorProfilerCallback11::IID, "11"),
    ]
}

// ---------------------------------------------------------------------------
// Tests.
// ---------------------------------------------------------------------------

#[test]
fn query_interface_answers_all_eleven_callback_iids_with_one_pointer() {
    let h = Harness::new();
    let this = h.this().0;
    for (iid, version) in callback_iids()
        .iter()
        .chain([(IUnknown::IID, "IUnknown")].iter())
    {
        let mut out: *mut c_void = null_mut();
        // SAFETY: slot 0 is QueryInterface; `iid` and `out` are valid.
        let hr = unsafe {
            core::mem::transmute::<*const c_void, QueryInterfaceFn>(slot(this, 0))(
                this, iid, &mut out,
            )
        };
        assert_eq!(hr, S_OK, "QueryInterface for version {version}");
        assert_eq!(out, this, "one pointer answers version {version}");
        // SAFETY: QueryInterface took a reference, given back here (slot 2).
        unsafe { core::mem::transmute::<*const c_void, ReleaseFn>(slot(this, 2))(out) };
    }
    let mut out: *mut c_void = null_mut();
    // SAFETY: as above; an info IID is not a callback IID.
    let hr = unsafe {
        core::mem::transmute::<*const c_void, QueryInterfaceFn>(slot(this, 0))(
            this,
            &ICorProfilerInfo::IID,
            &mut out,
        )
    };
    assert_eq!(hr, E_NOINTERFACE);
    assert!(out.is_null());
}

#[test]
fn initialize_negotiates_version_11_and_the_profiler_sets_the_event_mask() {
    let h = Harness::new();
    assert_eq!(h.initialize(), S_OK);
    assert_eq!(h.calls(), [Call::Initialize { version: 11 }]);
    assert_eq!(
        *h.fake.masks.lock().unwrap(),
        [
            (COR_PRF_MONITOR_JIT_COMPILATION.0, None),
            (
                (COR_PRF_MONITOR_JIT_COMPILATION | COR_PRF_MONITOR_GC).0,
                Some(COR_PRF_HIGH_MONITOR_EVENT_PIPE.0)
            ),
        ],
        "SetEventMask, then SetEventMask2 for high flags"
    );

    // A second Initialize, or an attach after it, is refused.
    assert_eq!(h.initialize(), E_UNEXPECTED);
    let data = [1u8, 2, 3];
    assert_eq!(
        h.this()
            .InitializeForAttach(h.runtime.as_raw(), data.as_ptr() as *mut c_void, 3),
        E_UNEXPECTED
    );
    assert_eq!(h.calls(), []);

    // The callback object holds the info until it is released.
    let drops = h.fake.drops.clone();
    let Harness {
        callback,
        runtime,
        fake,
        ..
    } = h;
    drop(runtime);
    drop(fake);
    assert_eq!(
        drops.load(Ordering::SeqCst),
        0,
        "the profiler keeps the info alive"
    );
    drop(callback);
    assert_eq!(
        drops.load(Ordering::SeqCst),
        1,
        "and releases it with itself"
    );
}

#[test]
fn initialize_without_a_usable_info_object_fails_and_can_be_retried() {
    let h = Harness::new();
    assert_eq!(h.this().Initialize(null_mut()), E_POINTER);
    struct NotAnInfo;
    let stranger: IUnknown = export(NotAnInfo);
    assert_eq!(h.this().Initialize(stranger.as_raw()), E_NOINTERFACE);
    assert_eq!(h.calls(), [], "the profiler never saw the failed attempts");
    assert_eq!(h.this().Shutdown(), E_UNEXPECTED);
    assert_eq!(h.initialize(), S_OK);
    assert_eq!(h.calls(), [Call::Initialize { version: 11 }]);
}

/// Set in the child process of the `CORPROF_DEBUG` test.
const CHILD: &str = "CORPROF_FACADE_CALLBACK_CHILD";

#[test]
#[cfg_attr(miri, ignore = "Miri cannot start the child process")]
fn corprof_debug_1_reports_a_failed_initialize_on_stderr() {
    const NAME: &str = "corprof_debug_1_reports_a_failed_initialize_on_stderr";
    if std::env::var_os(CHILD).is_some() {
        // No usable info object: refused before the profiler runs.
        let h = Harness::new();
        assert_eq!(h.this().Initialize(null_mut()), E_POINTER);
        // The profiler's own initialize refuses.
        #[derive(Default)]
        struct Refuser;
        impl Profiler for Refuser {
            fn initialize(&self, _: &ProfilerInfo) -> Result<()> {
                Err(E_INVALIDARG.into())
            }
        }
        let refuser = export_profiler(Refuser);
        assert_eq!(
            Raw(refuser.as_raw()).Initialize(h.runtime.as_raw()),
            E_INVALIDARG
        );
        // A successful Initialize is never reported.
        assert_eq!(h.initialize(), S_OK);
        return;
    }
    let run = |debug: Option<&str>| child_stderr(NAME, CHILD, debug);
    let stderr = run(Some("1"));
    let reports: Vec<&str> = stderr
        .lines()
        .filter(|line| line.starts_with("corprof: "))
        .collect();
    assert_eq!(reports.len(), 2, "{stderr}");
    for (report, code) in reports.iter().zip(["E_POINTER", "E_INVALIDARG"]) {
        assert!(
            report.starts_with(&format!(
                "corprof: Initialize failed, so the runtime runs the program without this \
                 profiler: {code} (0x"
            )),
            "{report}"
        );
    }
    for quiet in [None, Some("0")] {
        let stderr = run(quiet);
        assert!(!stderr.contains("corprof:"), "{quiet:?}: {stderr}");
    }
}

/// Runs test `name` of this binary again in a child process marked by the
/// variable `child`, with `CORPROF_DEBUG` set to `debug` (unset for
/// `None`); it must pass; returns its standard error.
fn child_stderr(name: &str, child: &str, debug: Option<&str>) -> String {
    let mut cmd = common::self_exec::this_test_binary();
    cmd.args([name, "--exact", "--nocapture", "--test-threads=1"])
        .env(child, "1")
        .env_remove("CORPROF_DEBUG");
    if let Some(value) = debug {
        cmd.env("CORPROF_DEBUG", value);
    }
    let output = cmd.output().expect("run the test binary again");
    assert!(output.status.success(), "{output:?}");
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Set in the child process of the failing-callback test.
const CALLBACK_CHILD: &str = "CORPROF_FACADE_CALLBACK_FAILS_CHILD";

#[test]
#[cfg_attr(miri, ignore = "Miri cannot start the child process")]
fn corprof_debug_1_reports_a_failed_callback_with_its_name_and_error() {
    const NAME: &str = "corprof_debug_1_reports_a_failed_callback_with_its_name_and_error";
    if std::env::var_os(CALLBACK_CHILD).is_some() {
        #[derive(Default)]
        struct Failing;
        impl Profiler for Failing {
            fn jit_compilation_started(
                &self,
                _: &ProfilerInfo,
                _: FunctionID,
                _: bool,
            ) -> Result<()> {
                Err(E_INVALIDARG.into())
            }
        }
        let h = Harness::new();
        let failing = export_profiler(Failing);
        let raw = Raw(failing.as_raw());
        assert_eq!(raw.Initialize(h.runtime.as_raw()), S_OK);
        assert_eq!(
            raw.JITCompilationStarted(fake_id!(FunctionID, 7), TRUE),
            E_INVALIDARG
        );
        // A callback that succeeds is never reported.
        assert_eq!(raw.ThreadCreated(fake_id!(ThreadID, 1)), S_OK);
        return;
    }
    let run = |debug: Option<&str>| child_stderr(NAME, CALLBACK_CHILD, debug);
    let stderr = run(Some("1"));
    let reports: Vec<&str> = stderr
        .lines()
        .filter(|line| line.starts_with("corprof: "))
        .collect();
    assert_eq!(reports.len(), 1, "{stderr}");
    assert!(
        reports[0].starts_with(
            "corprof: the profiler's JITCompilationStarted callback failed: E_INVALIDARG (0x"
        ),
        "{}",
        reports[0]
    );
    for quiet in [None, Some("0")] {
        let stderr = run(quiet);
        assert!(!stderr.contains("corprof:"), "{quiet:?}: {stderr}");
    }
}

#[test]
fn initialize_for_attach_passes_the_client_data() {
    let h = Harness::new();
    let data = *b"attach!";
    let hr = h.this().InitializeForAttach(
        h.runtime.as_raw(),
        data.as_ptr() as *mut c_void,
        data.len() as UINT,
    );
    assert_eq!(hr, S_OK);
    assert_eq!(
        h.calls(),
        [Call::InitializeForAttach {
            version: 11,
            client_data: data.to_vec()
        }]
    );
    assert_eq!(h.initialize(), E_UNEXPECTED, "attached once is initialized");

    // No client data: a null pointer with a zero size is an empty slice.
    let h = Harness::new();
    let hr = h
        .this()
        .InitializeForAttach(h.runtime.as_raw(), null_mut(), 0);
    assert_eq!(hr, S_OK);
    assert_eq!(
        h.calls(),
        [Call::InitializeForAttach {
            version: 11,
            client_data: vec![]
        }]
    );
}

/// `Default::default()`, short, for the arguments nobody reads.
fn d<T: Default>() -> T {
    T::default()
}

#[test]
fn every_raw_method_is_overridden_and_guarded_before_initialize() {
    // The raw traits' own defaults answer S_OK; the adapter answers
    // E_UNEXPECTED before Initialize. So every one of the 92 methods below
    // (all but the two initializers and LoadAsNotificationOnly) answering
    // E_UNEXPECTED proves the adapter overrides it.
    let h = Harness::new();
    let cb: ICorProfilerCallback11 = h.callback.cast().unwrap();
    // SAFETY: the invoker calls each method through its declared slot;
    // before Initialize the adapter answers without reading any argument,
    // and every pointer passed is null anyway.
    let results = unsafe {
        [
            ("Shutdown", cb.Shutdown()),
            ("AppDomainCreationStarted", cb.AppDomainCreationStarted(d())),
            (
                "AppDomainCreationFinished",
                cb.AppDomainCreationFinished(d(), d()),
            ),
            ("AppDomainShutdownStarted", cb.AppDomainShutdownStarted(d())),
            (
                "AppDomainShutdownFinished",
                cb.AppDomainShutdownFinished(d(), d()),
            ),
            ("AssemblyLoadStarted", cb.AssemblyLoadStarted(d())),
            ("AssemblyLoadFinished", cb.AssemblyLoadFinished(d(), d())),
            ("AssemblyUnloadStarted", cb.AssemblyUnloadStarted(d())),
            (
                "AssemblyUnloadFinished",
                cb.AssemblyUnloadFinished(d(), d()),
            ),
            ("ModuleLoadStarted", cb.ModuleLoadStarted(d())),
            ("ModuleLoadFinished", cb.ModuleLoadFinished(d(), d())),
            ("ModuleUnloadStarted", cb.ModuleUnloadStarted(d())),
            ("ModuleUnloadFinished", cb.ModuleUnloadFinished(d(), d())),
            (
                "ModuleAttachedToAssembly",
                cb.ModuleAttachedToAssembly(d(), d()),
            ),
            ("ClassLoadStarted", cb.ClassLoadStarted(d())),
            ("ClassLoadFinished", cb.ClassLoadFinished(d(), d())),
            ("ClassUnloadStarted", cb.ClassUnloadStarted(d())),
            ("ClassUnloadFinished", cb.ClassUnloadFinished(d(), d())),
            ("FunctionUnloadStarted", cb.FunctionUnloadStarted(d())),
            ("JITCompilationStarted", cb.JITCompilationStarted(d(), d())),
            (
                "JITCompilationFinished",
                cb.JITCompilationFinished(d(), d(), d()),
            ),
            (
                "JITCachedFunctionSearchStarted",
                cb.JITCachedFunctionSearchStarted(d(), null_mut()),
            ),
            (
                "JITCachedFunctionSearchFinished",
                cb.JITCachedFunctionSearchFinished(d(), d()),
            ),
            ("JITFunctionPitched", cb.JITFunctionPitched(d())),
            ("JITInlining", cb.JITInlining(d(), d(), null_mut())),
            ("ThreadCreated", cb.ThreadCreated(d())),
            ("ThreadDestroyed", cb.ThreadDestroyed(d())),
            (
                "ThreadAssignedToOSThread",
                cb.ThreadAssignedToOSThread(d(), d()),
            ),
            (
                "RemotingClientInvocationStarted",
                cb.RemotingClientInvocationStarted(),
            ),
            (
                "RemotingClientSendingMessage",
                cb.RemotingClientSendingMessage(null_mut(), d()),
            ),
            (
                "RemotingClientReceivingReply",
                cb.RemotingClientReceivingReply(null_mut(), d()),
            ),
            (
                "RemotingClientInvocationFinished",
                cb.RemotingClientInvocationFinished(),
            ),
            (
                "RemotingServerReceivingMessage",
                cb.RemotingServerReceivingMessage(null_mut(), d()),
            ),
            (
                "RemotingServerInvocationStarted",
                cb.RemotingServerInvocationStarted(),
            ),
            (
                "RemotingServerInvocationReturned",
                cb.RemotingServerInvocationReturned(),
            ),
            (
                "RemotingServerSendingReply",
                cb.RemotingServerSendingReply(null_mut(), d()),
            ),
            (
                "UnmanagedToManagedTransition",
                cb.UnmanagedToManagedTransition(d(), d()),
            ),
            (
                "ManagedToUnmanagedTransition",
                cb.ManagedToUnmanagedTransition(d(), d()),
            ),
            ("RuntimeSuspendStarted", cb.RuntimeSuspendStarted(d())),
            ("RuntimeSuspendFinished", cb.RuntimeSuspendFinished()),
            ("RuntimeSuspendAborted", cb.RuntimeSuspendAborted()),
            ("RuntimeResumeStarted", cb.RuntimeResumeStarted()),
            ("RuntimeResumeFinished", cb.RuntimeResumeFinished()),
            ("RuntimeThreadSuspended", cb.RuntimeThreadSuspended(d())),
            ("RuntimeThreadResumed", cb.RuntimeThreadResumed(d())),
            (
                "MovedReferences",
                cb.MovedReferences(d(), null_mut(), null_mut(), null_mut()),
            ),
            ("ObjectAllocated", cb.ObjectAllocated(d(), d())),
            (
                "ObjectsAllocatedByClass",
                cb.ObjectsAllocatedByClass(d(), null_mut(), null_mut()),
            ),
            (
                "ObjectReferences",
                cb.ObjectReferences(d(), d(), d(), null_mut()),
            ),
            ("RootReferences", cb.RootReferences(d(), null_mut())),
            ("ExceptionThrown", cb.ExceptionThrown(d())),
            (
                "ExceptionSearchFunctionEnter",
                cb.ExceptionSearchFunctionEnter(d()),
            ),
            (
                "ExceptionSearchFunctionLeave",
                cb.ExceptionSearchFunctionLeave(),
            ),
            (
                "ExceptionSearchFilterEnter",
                cb.ExceptionSearchFilterEnter(d()),
            ),
            (
                "ExceptionSearchFilterLeave",
                cb.ExceptionSearchFilterLeave(),
            ),
            (
                "ExceptionSearchCatcherFound",
                cb.ExceptionSearchCatcherFound(d()),
            ),
            ("ExceptionOSHandlerEnter", cb.ExceptionOSHandlerEnter(d())),
            ("ExceptionOSHandlerLeave", cb.ExceptionOSHandlerLeave(d())),
            (
                "ExceptionUnwindFunctionEnter",
                cb.ExceptionUnwindFunctionEnter(d()),
            ),
            (
                "ExceptionUnwindFunctionLeave",
                cb.ExceptionUnwindFunctionLeave(),
            ),
            (
                "ExceptionUnwindFinallyEnter",
                cb.ExceptionUnwindFinallyEnter(d()),
            ),
            (
                "ExceptionUnwindFinallyLeave",
                cb.ExceptionUnwindFinallyLeave(),
            ),
            ("ExceptionCatcherEnter", cb.ExceptionCatcherEnter(d(), d())),
            ("ExceptionCatcherLeave", cb.ExceptionCatcherLeave()),
            (
                "COMClassicVTableCreated",
                cb.COMClassicVTableCreated(d(), null(), null_mut(), d()),
            ),
            (
                "COMClassicVTableDestroyed",
                cb.COMClassicVTableDestroyed(d(), null(), null_mut()),
            ),
            ("ExceptionCLRCatcherFound", cb.ExceptionCLRCatcherFound()),
            (
                "ExceptionCLRCatcherExecute",
                cb.ExceptionCLRCatcherExecute(),
            ),
            (
                "ThreadNameChanged",
                cb.ThreadNameChanged(d(), d(), null_mut()),
            ),
            (
                "GarbageCollectionStarted",
                cb.GarbageCollectionStarted(d(), null_mut(), d()),
            ),
            (
                "SurvivingReferences",
                cb.SurvivingReferences(d(), null_mut(), null_mut()),
            ),
            ("GarbageCollectionFinished", cb.GarbageCollectionFinished()),
            (
                "FinalizeableObjectQueued",
                cb.FinalizeableObjectQueued(d(), d()),
            ),
            (
                "RootReferences2",
                cb.RootReferences2(d(), null_mut(), null_mut(), null_mut(), null_mut()),
            ),
            ("HandleCreated", cb.HandleCreated(d(), d())),
            ("HandleDestroyed", cb.HandleDestroyed(d())),
            ("ProfilerAttachComplete", cb.ProfilerAttachComplete()),
            ("ProfilerDetachSucceeded", cb.ProfilerDetachSucceeded()),
            (
                "ReJITCompilationStarted",
                cb.ReJITCompilationStarted(d(), d(), d()),
            ),
            (
                "GetReJITParameters",
                cb.GetReJITParameters(d(), d(), null_mut()),
            ),
            (
                "ReJITCompilationFinished",
                cb.ReJITCompilationFinished(d(), d(), d(), d()),
            ),
            ("ReJITError", cb.ReJITError(d(), d(), d(), d())),
            (
                "MovedReferences2",
                cb.MovedReferences2(d(), null_mut(), null_mut(), null_mut()),
            ),
            (
                "SurvivingReferences2",
                cb.SurvivingReferences2(d(), null_mut(), null_mut()),
            ),
            (
                "ConditionalWeakTableElementReferences",
                cb.ConditionalWeakTableElementReferences(d(), null_mut(), null_mut(), null_mut()),
            ),
            (
                "GetAssemblyReferences",
                cb.GetAssemblyReferences(null(), null_mut()),
            ),
            (
                "ModuleInMemorySymbolsUpdated",
                cb.ModuleInMemorySymbolsUpdated(d()),
            ),
            (
                "DynamicMethodJITCompilationStarted",
                cb.DynamicMethodJITCompilationStarted(d(), d(), null(), d()),
            ),
            (
                "DynamicMethodJITCompilationFinished",
                cb.DynamicMethodJITCompilationFinished(d(), d(), d()),
            ),
            ("DynamicMethodUnloaded", cb.DynamicMethodUnloaded(d())),
            (
                "EventPipeEventDelivered",
                cb.EventPipeEventDelivered(
                    d(),
                    d(),
                    d(),
                    d(),
                    null(),
                    d(),
                    null(),
                    null(),
                    null(),
                    d(),
                    d(),
                    null_mut(),
                ),
            ),
            ("EventPipeProviderCreated", cb.EventPipeProviderCreated(d())),
        ]
    };
    assert_eq!(results.len(), 92);
    for (name, hr) in results {
        assert_eq!(hr, E_UNEXPECTED, "{name}");
    }
    assert_eq!(h.calls(), []);
}

#[test]
fn callbacks_before_initialize_are_unexpected_and_do_not_reach_the_profiler() {
    let h = Harness::new();
    let this = h.this();
    assert_eq!(this.ThreadCreated(fake_id!(ThreadID, 1)), E_UNEXPECTED);
    assert_eq!(
        this.JITCompilationStarted(fake_id!(FunctionID, 1), TRUE),
        E_UNEXPECTED
    );
    let mut inline = 7;
    assert_eq!(
        this.JITInlining(
            fake_id!(FunctionID, 1),
            fake_id!(FunctionID, 2),
            &mut inline
        ),
        E_UNEXPECTED
    );
    assert_eq!(inline, 7, "the out-parameter is untouched");
    let roots = [fake_id!(ObjectID, 1)];
    assert_eq!(this.RootReferences(1, roots.as_ptr()), E_UNEXPECTED);
    assert_eq!(this.ProfilerAttachComplete(), E_UNEXPECTED);
    assert_eq!(
        this.EventPipeProviderCreated(fake_id!(EVENTPIPE_PROVIDER, 1)),
        E_UNEXPECTED
    );
    assert_eq!(h.calls(), []);
}

#[test]
fn jit_compilation_converts_bools_both_ways_and_the_profiler_can_use_info() {
    let h = Harness::initialized();
    let this = h.this();
    let f = fake_id!(FunctionID, 0xF00D);
    assert_eq!(this.JITCompilationStarted(f, TRUE), S_OK);
    assert_eq!(this.JITCompilationStarted(f, FALSE), S_OK);
    assert_eq!(this.JITCompilationStarted(f, -2), S_OK);
    let where_ = FunctionInfo {
        class: FAKE_CLASS,
        module: FAKE_MODULE,
        token: mdMethodDef(FAKE_TOKEN),
    };
    let started = |safe_to_block| Call::JitStarted {
        function: f,
        safe_to_block,
        where_,
        thread: FAKE_THREAD,
    };
    assert_eq!(this.JITCompilationFinished(f, E_OUTOFMEMORY, TRUE), S_OK);
    assert_eq!(
        h.calls(),
        [
            started(true),
            started(false),
            started(true),
            Call::JitFinished {
                function: f,
                status: E_OUTOFMEMORY,
                safe_to_block: true
            }
        ]
    );
}

#[test]
fn garbage_collection_started_passes_bools_and_the_reason() {
    let h = Harness::initialized();
    let this = h.this();
    let generations: [BOOL; 5] = [TRUE, FALSE, 5, FALSE, TRUE];
    let hr = this.GarbageCollectionStarted(5, generations.as_ptr(), COR_PRF_GC_INDUCED);
    assert_eq!(hr, S_OK);
    // A reason this crate does not know still arrives intact.
    let hr = this.GarbageCollectionStarted(0, null(), COR_PRF_GC_REASON(99));
    assert_eq!(hr, S_OK);
    // A negative count is refused without calling the profiler.
    let hr = this.GarbageCollectionStarted(-1, generations.as_ptr(), COR_PRF_GC_OTHER);
    assert_eq!(hr, E_INVALIDARG);
    assert_eq!(
        h.calls(),
        [
            Call::GcStarted(vec![true, false, true, false, true], COR_PRF_GC_INDUCED),
            Call::GcStarted(vec![], COR_PRF_GC_REASON(99)),
        ]
    );
}

#[test]
fn moved_references_arrive_as_three_parallel_slices() {
    let h = Harness::initialized();
    let this = h.this();
    let old = [
        fake_id!(ObjectID, 0x1000),
        fake_id!(ObjectID, 0x2000),
        fake_id!(ObjectID, 0x3000),
    ];
    let new = [
        fake_id!(ObjectID, 0x100),
        fake_id!(ObjectID, 0x200),
        fake_id!(ObjectID, 0x300),
    ];
    let lengths: [ULONG; 3] = [16, 32, 48];
    let wide: [SIZE_T; 3] = [16, 32, 1 << 20];
    let hr = this.MovedReferences(3, old.as_ptr(), new.as_ptr(), lengths.as_ptr());
    assert_eq!(hr, S_OK);
    let hr = this.MovedReferences2(3, old.as_ptr(), new.as_ptr(), wide.as_ptr());
    assert_eq!(hr, S_OK);
    assert_eq!(
        h.calls(),
        [
            Call::Moved {
                old: old.to_vec(),
                new: new.to_vec(),
                lengths: lengths.to_vec()
            },
            Call::Moved2 {
                old: old.to_vec(),
                new: new.to_vec(),
                lengths: wide.to_vec()
            },
        ]
    );
}

#[test]
fn root_references2_keeps_kinds_and_flags_typed() {
    let h = Harness::initialized();
    let roots = [fake_id!(ObjectID, 1), fake_id!(ObjectID, 2)];
    let kinds = [COR_PRF_GC_ROOT_STACK, COR_PRF_GC_ROOT_KIND(42)];
    let flags = [
        COR_PRF_GC_ROOT_PINNING | COR_PRF_GC_ROOT_INTERIOR,
        COR_PRF_GC_ROOT_FLAGS(0),
    ];
    let ids: [UINT_PTR; 2] = [0xAAAA, 0xBBBB];
    let hr = h.this().RootReferences2(
        2,
        roots.as_ptr(),
        kinds.as_ptr(),
        flags.as_ptr(),
        ids.as_ptr(),
    );
    assert_eq!(hr, S_OK);
    assert_eq!(
        h.calls(),
        [Call::Roots2 {
            roots: roots.to_vec(),
            kinds: kinds.to_vec(),
            flags: flags.to_vec(),
            ids: ids.to_vec()
        }]
    );
}

#[test]
fn thread_names_arrive_as_strings() {
    let h = Harness::initialized();
    let this = h.this();
    let t = fake_id!(ThreadID, 0x71);
    let name: Vec<u16> = "Worker \u{1F980} #1".encode_utf16().collect();
    let hr = this.ThreadNameChanged(t, name.len() as ULONG, name.as_ptr());
    assert_eq!(hr, S_OK);
    // Only `cchName` units are read: the name is not NUL-terminated.
    let hr = this.ThreadNameChanged(t, 6, name.as_ptr());
    assert_eq!(hr, S_OK);
    // A lone surrogate decodes lossily; a cleared name is empty.
    let broken: [u16; 2] = [0x41, 0xD800];
    let hr = this.ThreadNameChanged(t, 2, broken.as_ptr());
    assert_eq!(hr, S_OK);
    let hr = this.ThreadNameChanged(t, 0, null());
    assert_eq!(hr, S_OK);
    assert_eq!(
        h.calls(),
        [
            Call::ThreadName(t, "Worker \u{1F980} #1".into()),
            Call::ThreadName(t, "Worker".into()),
            Call::ThreadName(t, "A\u{FFFD}".into()),
            Call::ThreadName(t, String::new()),
        ]
    );
}

#[test]
fn out_parameters_are_written_from_the_returned_bool() {
    let h = Harness::initialized();
    let this = h.this();
    let (caller, callee) = (fake_id!(FunctionID, 1), fake_id!(FunctionID, 2));
    let mut should_inline: BOOL = 7;
    let hr = this.JITInlining(caller, callee, &mut should_inline);
    assert_eq!(hr, S_OK);
    assert_eq!(should_inline, FALSE, "the recorder starts by refusing");

    // A recorder that allows inlining.
    let recorder = Recorder {
        inline: true,
        ..Recorder::default()
    };
    let h2 = Harness::with(recorder);
    assert_eq!(h2.initialize(), S_OK);
    let mut should_inline: BOOL = 7;
    let hr = h2.this().JITInlining(caller, callee, &mut should_inline);
    assert_eq!(hr, S_OK);
    assert_eq!(should_inline, TRUE);

    // A null out-pointer is refused before the profiler is asked.
    let hr = this.JITInlining(caller, callee, null_mut());
    assert_eq!(hr, E_POINTER);
    // An error is returned as is and the out-parameter is left alone.
    let mut should_inline: BOOL = 7;
    let hr = this.JITInlining(FAILING_CALLER, callee, &mut should_inline);
    assert_eq!(hr, E_ACCESSDENIED);
    assert_eq!(should_inline, 7);

    // JITCachedFunctionSearchStarted: the recorder forces a JIT.
    let mut use_cached: BOOL = TRUE;
    let hr = this.JITCachedFunctionSearchStarted(caller, &mut use_cached);
    assert_eq!(hr, S_OK);
    assert_eq!(use_cached, FALSE);
    assert_eq!(
        this.JITCachedFunctionSearchStarted(caller, null_mut()),
        E_POINTER
    );

    assert_eq!(
        h.calls(),
        [
            Call::Inlining(caller, callee),
            Call::Inlining(FAILING_CALLER, callee),
            Call::CacheSearch(caller),
        ]
    );
}

#[test]
fn get_rejit_parameters_lends_a_usable_function_control() {
    let h = Harness::initialized();
    let control = Arc::new(FakeFunctionControl::default());
    let exported: ICorProfilerFunctionControl = export_arc(control.clone());
    let (module, method) = (fake_id!(ModuleID, 0x30D), mdMethodDef(0x0600_0001));
    let hr = h
        .this()
        .GetReJITParameters(module, method, exported.as_raw());
    assert_eq!(hr, S_OK);
    assert_eq!(
        *control.flags.lock().unwrap(),
        [COR_PRF_CODEGEN_DISABLE_INLINING.0]
    );
    assert_eq!(*control.bodies.lock().unwrap(), [NEW_IL.to_vec()]);
    // A null control is refused without calling the profiler.
    let hr = h.this().GetReJITParameters(module, method, null_mut());
    assert_eq!(hr, E_POINTER);
    assert_eq!(h.calls(), [Call::ReJitParameters(module, method)]);
    drop(exported);
    assert_eq!(
        Arc::strong_count(&control),
        1,
        "the borrowed view took no reference"
    );
}

#[test]
fn get_assembly_references_passes_the_path_and_the_provider() {
    let h = Harness::initialized();
    let provider = Arc::new(FakeReferenceProvider::default());
    let exported: ICorProfilerAssemblyReferenceProvider = export_arc(provider.clone());
    let path: Vec<u16> = "/app/Sample.dll".encode_utf16().chain([0]).collect();
    let hr = h
        .this()
        .GetAssemblyReferences(path.as_ptr(), exported.as_raw());
    assert_eq!(hr, S_OK);
    assert_eq!(provider.added.load(Ordering::SeqCst), 1);
    let hr = h.this().GetAssemblyReferences(null(), exported.as_raw());
    assert_eq!(hr, E_POINTER, "a null path");
    let hr = h.this().GetAssemblyReferences(path.as_ptr(), null_mut());
    assert_eq!(hr, E_POINTER, "a null provider");
    assert_eq!(
        h.calls(),
        [Call::AssemblyReferences("/app/Sample.dll".into())]
    );
}

#[test]
fn event_pipe_events_arrive_as_one_struct() {
    let h = Harness::initialized();
    let metadata = [0x01u8, 0x02, 0x03];
    let data = [0xDEu8, 0xAD, 0xBE, 0xEF, 0x00];
    let activity = GUID::from_u128(0x0123_4567_89AB_CDEF_0123_4567_89AB_CDEF);
    let stack: [UINT_PTR; 3] = [0x7000_0010, 0x7000_0020, 0x7000_0030];
    let hr = h.this().EventPipeEventDelivered(
        fake_id!(EVENTPIPE_PROVIDER, 0xE7),
        42,
        3,
        metadata.len() as ULONG,
        metadata.as_ptr(),
        data.len() as ULONG,
        data.as_ptr(),
        &activity,
        null(),
        fake_id!(ThreadID, 0x55),
        stack.len() as ULONG,
        stack.as_ptr(),
    );
    assert_eq!(hr, S_OK);
    assert_eq!(
        h.calls(),
        [Call::EventPipe {
            provider: fake_id!(EVENTPIPE_PROVIDER, 0xE7),
            id: 42,
            version: 3,
            metadata: metadata.to_vec(),
            data: data.to_vec(),
            activity: Some(activity),
            related: None,
            thread: fake_id!(ThreadID, 0x55),
            stack: stack.to_vec(),
        }]
    );
}

#[test]
fn load_as_notification_only_is_answered_before_initialize() {
    for answer in [false, true] {
        let h = Harness::with(Recorder {
            notification_only: answer,
            ..Recorder::default()
        });
        let mut out: BOOL = 7;
        assert_eq!(h.this().LoadAsNotificationOnly(&mut out), S_OK);
        assert_eq!(out, if answer { TRUE } else { FALSE });
        assert_eq!(h.this().LoadAsNotificationOnly(null_mut()), E_POINTER);
        assert_eq!(h.calls(), [Call::NotificationOnly]);
        assert_eq!(h.initialize(), S_OK, "Initialize follows as usual");
    }
}

#[test]
fn bad_arrays_are_refused_and_empty_ones_are_empty_slices() {
    let h = Harness::initialized();
    let this = h.this();
    let objects = [fake_id!(ObjectID, 1), fake_id!(ObjectID, 2)];
    assert_eq!(this.RootReferences(2, null()), E_POINTER);
    // One null array among several is enough.
    let hr = this.MovedReferences(2, objects.as_ptr(), objects.as_ptr(), null());
    assert_eq!(hr, E_POINTER);
    // A misaligned pointer is refused too.
    let misaligned = (objects.as_ptr() as *const u8).wrapping_add(1) as *const ObjectID;
    assert_eq!(this.RootReferences(1, misaligned), E_POINTER);
    let hr = this.ConditionalWeakTableElementReferences(1, objects.as_ptr(), null(), null());
    assert_eq!(hr, E_POINTER);
    let hr = this.DynamicMethodJITCompilationStarted(fake_id!(FunctionID, 9), TRUE, null(), 12);
    assert_eq!(hr, E_POINTER);
    assert_eq!(h.calls(), [], "the profiler saw none of them");

    // A null pointer with a zero count is an empty slice.
    assert_eq!(this.RootReferences(0, null()), S_OK);
    let hr = this.MovedReferences(0, null(), null(), null());
    assert_eq!(hr, S_OK);
    let hr = this.DynamicMethodJITCompilationStarted(fake_id!(FunctionID, 9), FALSE, null(), 0);
    assert_eq!(hr, S_OK);
    assert_eq!(
        h.calls(),
        [
            Call::Roots(vec![]),
            Call::Moved {
                old: vec![],
                new: vec![],
                lengths: vec![]
            },
            Call::DynamicJit(fake_id!(FunctionID, 9), false, vec![]),
        ]
    );
}

#[test]
fn other_typed_arguments_arrive_intact() {
    let h = Harness::initialized();
    let this = h.this();
    let cookie = GUID::from_u128(0xC00C1E);
    assert_eq!(this.RemotingClientSendingMessage(&cookie, TRUE), S_OK);
    assert_eq!(this.RemotingClientSendingMessage(null(), FALSE), S_OK);
    let hr = this.FinalizeableObjectQueued(
        COR_PRF_FINALIZER_CRITICAL.0 | 0x80,
        fake_id!(ObjectID, 0xF1),
    );
    assert_eq!(hr, S_OK);
    let header = [0x13u8, 0x30, 0x02, 0x00];
    let hr =
        this.DynamicMethodJITCompilationStarted(fake_id!(FunctionID, 8), TRUE, header.as_ptr(), 4);
    assert_eq!(hr, S_OK);
    let iid = ICorProfilerCallback::IID;
    let vtable = [0usize; 4];
    let address = vtable.as_ptr() as *mut c_void;
    let hr = this.COMClassicVTableCreated(fake_id!(ClassID, 0xCC), &iid, address, 72);
    assert_eq!(hr, S_OK);
    assert_eq!(
        h.calls(),
        [
            Call::Remoting(Some(cookie), true),
            Call::Remoting(None, false),
            Call::Finalizeable(COR_PRF_FINALIZER_FLAGS(0x81), fake_id!(ObjectID, 0xF1)),
            Call::DynamicJit(fake_id!(FunctionID, 8), true, header.to_vec()),
            Call::VTable(fake_id!(ClassID, 0xCC), Some(iid), address as usize, 72),
        ]
    );
}

#[test]
fn errors_come_back_and_panics_become_e_fail() {
    let h = Harness::initialized();
    let this = h.this();
    let hr = this.ModuleLoadFinished(FAILING_MODULE, S_OK);
    assert_eq!(hr, CORPROF_E_UNSUPPORTED_CALL_SEQUENCE);
    assert_eq!(this.ModuleLoadFinished(fake_id!(ModuleID, 2), E_FAIL), S_OK);

    assert_eq!(this.ThreadCreated(PANIC_THREAD), E_FAIL);
    assert_eq!(
        this.ThreadCreated(fake_id!(ThreadID, 3)),
        S_OK,
        "the next call works"
    );
    assert_eq!(
        h.calls(),
        [
            Call::ModuleLoadFinished(FAILING_MODULE, S_OK),
            Call::ModuleLoadFinished(fake_id!(ModuleID, 2), E_FAIL),
            Call::ThreadCreated(fake_id!(ThreadID, 3)),
        ]
    );
}

#[test]
fn a_profiler_that_implements_nothing_answers_s_ok_in_every_version() {
    let callback = export_profiler(Quiet);
    let fake = export::<ICorProfilerInfo11, _>(FakeRuntime::default());
    let this = Raw(callback.as_raw());
    let mut out: BOOL = 7;
    assert_eq!(this.LoadAsNotificationOnly(&mut out), S_OK);
    assert_eq!(out, FALSE, "the default loads as the main profiler");
    assert_eq!(this.Initialize(fake.as_raw()), S_OK);

    let objects = [fake_id!(ObjectID, 1)];
    let generations = [TRUE];
    let name = [0x41u16];
    let path = [0x41u16, 0];
    let provider: ICorProfilerAssemblyReferenceProvider = export(FakeReferenceProvider::default());
    let control: ICorProfilerFunctionControl = export(FakeFunctionControl::default());
    let results = [
        // ICorProfilerCallback
        this.AppDomainCreationStarted(fake_id!(AppDomainID, 1)),
        this.AssemblyLoadFinished(fake_id!(AssemblyID, 1), S_OK),
        this.JITCompilationStarted(fake_id!(FunctionID, 1), TRUE),
        this.RuntimeSuspendStarted(COR_PRF_SUSPEND_FOR_GC),
        this.RootReferences(1, objects.as_ptr()),
        this.ExceptionOSHandlerEnter(0),
        this.ExceptionCLRCatcherExecute(),
        // ICorProfilerCallback2
        this.ThreadNameChanged(fake_id!(ThreadID, 1), 1, name.as_ptr()),
        this.GarbageCollectionStarted(1, generations.as_ptr(), COR_PRF_GC_OTHER),
        // ICorProfilerCallback3
        this.ProfilerAttachComplete(),
        // ICorProfilerCallback4
        this.GetReJITParameters(
            fake_id!(ModuleID, 1),
            mdMethodDef(0x0600_0001),
            control.as_raw(),
        ),
        // ICorProfilerCallback5
        this.ConditionalWeakTableElementReferences(0, null(), null(), null()),
        // ICorProfilerCallback6
        this.GetAssemblyReferences(path.as_ptr(), provider.as_raw()),
        // ICorProfilerCallback7
        this.ModuleInMemorySymbolsUpdated(fake_id!(ModuleID, 1)),
        // ICorProfilerCallback8
        this.DynamicMethodJITCompilationStarted(fake_id!(FunctionID, 1), TRUE, null(), 0),
        // ICorProfilerCallback9
        this.DynamicMethodUnloaded(fake_id!(FunctionID, 1)),
        // ICorProfilerCallback10
        this.EventPipeProviderCreated(fake_id!(EVENTPIPE_PROVIDER, 1)),
    ];
    assert!(results.iter().all(|&hr| hr == S_OK), "{results:?}");

    // Defaulted out-parameters: use cached code, allow inlining.
    let (mut use_cached, mut inline) = (7, 7);
    assert_eq!(
        this.JITCachedFunctionSearchStarted(fake_id!(FunctionID, 1), &mut use_cached),
        S_OK
    );
    assert_eq!(
        this.JITInlining(
            fake_id!(FunctionID, 1),
            fake_id!(FunctionID, 2),
            &mut inline
        ),
        S_OK
    );
    assert_eq!((use_cached, inline), (TRUE, TRUE));
    assert_eq!(this.Shutdown(), S_OK);
}

#[test]
fn the_adapter_exposes_its_profiler_and_info() {
    let adapter = Arc::new(ProfilerCallback::new(Recorder::default()));
    assert!(adapter.info().is_none());
    let callback: ICorProfilerCallback11 = export_arc(adapter.clone());
    let fake = export::<ICorProfilerInfo11, _>(FakeRuntime::default());
    assert_eq!(Raw(callback.as_raw()).Initialize(fake.as_raw()), S_OK);
    assert_eq!(adapter.info().map(ProfilerInfo::version), Some(11));
    assert_eq!(
        *adapter.profiler().calls.lock().unwrap(),
        [Call::Initialize { version: 11 }]
    );
}

#[test]
fn a_profiler_that_does_not_override_initialize_for_attach_refuses_to_attach() {
    // A start-up profiler would otherwise "attach" and then listen to nothing.
    let callback = export_profiler(Quiet);
    let fake = export::<ICorProfilerInfo11, _>(FakeRuntime::default());
    let this = Raw(callback.as_raw());
    let data = [1u8, 2, 3];
    assert_eq!(
        this.InitializeForAttach(fake.as_raw(), data.as_ptr() as *mut c_void, 3),
        CORPROF_E_PROFILER_NOT_ATTACHABLE
    );
}
