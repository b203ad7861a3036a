//! Bad input from native code, class by class: each one is answered with an
//! `HRESULT` (or, in the facade, an `Err`), never a crash.
//!
//! - (a) a null `this` in every slot of the facade's exported callback
//!   object (`ProfilerCallback`, all 98 slots of `ICorProfilerCallback11`),
//!   and the documented abort for methods that cannot return an `HRESULT`
//!   (checked in a child process);
//! - (b) null out-pointers to `QueryInterface`, `DllGetClassObject`,
//!   `IClassFactory::CreateInstance` and the adapter's out-parameter
//!   callbacks (null and misaligned);
//! - (c) null, misaligned or inconsistent arrays and strings to every
//!   callback that receives one;
//! - (d) a runtime that refuses: every `ProfilerInfo` method against a fake
//!   `ICorProfilerInfo11` answering `E_INVALIDARG` / `CORPROF_E_*`, one that
//!   "succeeds" without writing its out-parameters, impossible string
//!   lengths, a string call that fails the second time, a lying enumerator;
//! - (e) `ProfilerInfo::from_unknown` on objects that answer no (or only an
//!   old) `ICorProfilerInfo` IID, or whose `QueryInterface` is broken.
//!
//! Runs under Miri too (`cargo +nightly miri test --test bad_input`), but
//! for the child-process test and the 2^24-token enumerator.
//!
//! `tests/com_core.rs` already covers the COM core's own thunks (null
//! `this` in a test interface's `HRESULT` method, `QueryInterface` with null
//! arguments) and `tests/facade_callback.rs` the adapter's everyday
//! conversions; this file does not repeat them.
#![cfg(feature = "std")]
#![allow(missing_docs, non_snake_case)]

#[path = "common/ids.rs"]
mod ids;
use ids::fake_id;

#[path = "common/self_exec.rs"]
mod self_exec;

use core::ffi::c_void;
use core::ptr::{null, null_mut, NonNull};
use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use corprof::facade::{
    export_profiler, Bools, EventPipeEvent, FunctionControl, MetadataImport, Profiler,
    ProfilerCallback, ProfilerInfo, Result, AFTER_SHUTDOWN,
};
use corprof::metadata::{
    mdMethodDef, mdToken, mdTypeDef, IMetaDataImport, IMetaDataImport_Impl, CLDB_E_RECORD_NOTFOUND,
    HCORENUM, PCCOR_SIGNATURE,
};
use corprof::profiling::*;
use corprof::*;

// ---------------------------------------------------------------------------
// A fake runtime that misbehaves on demand.
// ---------------------------------------------------------------------------

/// How the fake runtime answers.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Behaviour {
    /// Everything works: `S_OK`, out-parameters written.
    Normal,
    /// Every method fails with this code and writes nothing.
    Refuse(HRESULT),
    /// Every method answers `S_OK` and writes nothing: out-pointers stay
    /// null, lengths zero.
    SilentSuccess,
    /// String and count methods claim this many elements (`S_OK`), and write
    /// as much as fits.
    Claim(u32),
    /// String methods claim 1000 characters at first (`S_OK`, buffer
    /// filled), then fail with this code when asked again.
    SecondCallFails(HRESULT),
    /// String methods claim 300 characters, then 600 when asked again (the
    /// string grew in between), filling whatever buffer they get.
    Grows,
    /// `GetILFunctionBodyAllocator` hands out an allocator whose `Alloc`
    /// answers null.
    MallocFails,
    /// `EnumModules` hands out an enumerator whose `Next` claims more items
    /// than asked for, then fails.
    LyingEnumerator,
}

struct FakeInfo {
    behaviour: Mutex<Behaviour>,
    /// Calls to string methods, for `SecondCallFails` and `Grows`.
    string_calls: AtomicUsize,
    /// The capacity of every string buffer the facade passed.
    capacities: Mutex<Vec<u32>>,
    /// The `celt` of every `Next` the facade asked the enumerator for.
    asked: Arc<Mutex<Vec<u32>>>,
    /// Calls to `GetClassIDInfo2`.
    class_calls: AtomicUsize,
}

impl FakeInfo {
    fn new(behaviour: Behaviour) -> FakeInfo {
        FakeInfo {
            behaviour: Mutex::new(behaviour),
            string_calls: AtomicUsize::new(0),
            capacities: Mutex::new(Vec::new()),
            asked: Arc::new(Mutex::new(Vec::new())),
            class_calls: AtomicUsize::new(0),
        }
    }

    fn behaviour(&self) -> Behaviour {
        *self.behaviour.lock().unwrap()
    }

    fn set(&self, behaviour: Behaviour) {
        *self.behaviour.lock().unwrap() = behaviour;
        self.string_calls.store(0, Ordering::SeqCst);
        self.capacities.lock().unwrap().clear();
    }

    /// `Refuse(code)` answers `code`; everything else `S_OK` after `write`
    /// (skipped for `SilentSuccess`).
    fn answer(&self, write: impl FnOnce()) -> HRESULT {
        match self.behaviour() {
            Behaviour::Refuse(code) => code,
            Behaviour::SilentSuccess => S_OK,
            _ => {
                write();
                S_OK
            }
        }
    }

    /// The length-then-buffer string protocol, misbehaving as configured.
    fn string(&self, capacity: ULONG, needed: *mut ULONG, buffer: *mut WCHAR) -> HRESULT {
        self.capacities.lock().unwrap().push(capacity);
        let call = self.string_calls.fetch_add(1, Ordering::SeqCst);
        let (claimed, fill, result) = match self.behaviour() {
            Behaviour::Refuse(code) => return code,
            Behaviour::SilentSuccess => return S_OK,
            Behaviour::Claim(n) => (n, b'x', S_OK),
            Behaviour::SecondCallFails(code) if call % 2 == 1 => return code,
            Behaviour::SecondCallFails(_) => (1000, b'x', S_OK),
            Behaviour::Grows if call % 2 == 0 => (300, b'x', S_OK),
            Behaviour::Grows => (600, b'y', S_OK),
            _ => (5, b'n', S_OK), // "nnnn" and the terminator
        };
        // SAFETY: the facade passes a writable length and a buffer of
        // `capacity` characters (this is what the test checks it does).
        unsafe {
            if !needed.is_null() {
                *needed = claimed;
            }
            let written = claimed.min(capacity) as usize;
            for i in 0..written {
                let unit = if i + 1 == claimed as usize {
                    0
                } else {
                    fill as u16
                };
                *buffer.add(i) = unit;
            }
        }
        result
    }
}

/// Writes `value` through `ptr` when it is non-null.
///
/// # Safety
///
/// A non-null `ptr` must be valid for a write of `T`.
unsafe fn put<T>(ptr: *mut T, value: T) {
    if !ptr.is_null() {
        // SAFETY: non-null and valid (caller's contract).
        unsafe { ptr.write(value) };
    }
}

impl ICorProfilerInfo_Impl for FakeInfo {
    unsafe fn SetEventMask(&self, _events: DWORD) -> HRESULT {
        self.answer(|| {})
    }
    unsafe fn GetEventMask(&self, events: *mut DWORD) -> HRESULT {
        // SAFETY: the facade passes a valid out-pointer.
        self.answer(|| unsafe { put(events, 0x80) })
    }
    unsafe fn GetClassFromObject(&self, _object: ObjectID, class: *mut ClassID) -> HRESULT {
        // SAFETY: the facade passes a valid out-pointer.
        self.answer(|| unsafe { put(class, ClassID::from_raw(0xC1)) })
    }
    unsafe fn GetThreadInfo(&self, _thread: ThreadID, os: *mut DWORD) -> HRESULT {
        // SAFETY: the facade passes a valid out-pointer.
        self.answer(|| unsafe { put(os, 77) })
    }
    unsafe fn GetHandleFromThread(&self, _thread: ThreadID, handle: *mut HANDLE) -> HRESULT {
        // SAFETY: the facade passes a valid out-pointer.
        self.answer(|| unsafe { put(handle, fake_handle()) })
    }
    unsafe fn GetCurrentThreadID(&self, thread: *mut ThreadID) -> HRESULT {
        // SAFETY: the facade passes a valid out-pointer.
        self.answer(|| unsafe { put(thread, ThreadID::from_raw(0x7EAD)) })
    }
    unsafe fn GetClassIDInfo(
        &self,
        _class: ClassID,
        module: *mut ModuleID,
        typedef: *mut mdTypeDef,
    ) -> HRESULT {
        // SAFETY: the facade passes valid out-pointers.
        self.answer(|| unsafe {
            put(module, ModuleID::from_raw(0x30D));
            put(typedef, mdTypeDef(0x0200_0002));
        })
    }
    unsafe fn GetFunctionInfo(
        &self,
        _function: FunctionID,
        class: *mut ClassID,
        module: *mut ModuleID,
        token: *mut mdToken,
    ) -> HRESULT {
        // SAFETY: the facade passes valid out-pointers.
        self.answer(|| unsafe {
            put(class, ClassID::from_raw(0xC1));
            put(module, ModuleID::from_raw(0x30D));
            put(token, mdToken(0x0600_0001));
        })
    }
    unsafe fn GetTokenAndMetaDataFromFunction(
        &self,
        _function: FunctionID,
        _riid: REFIID,
        import: *mut *mut c_void,
        token: *mut mdToken,
    ) -> HRESULT {
        // SAFETY: the facade passes valid out-pointers; the import handed
        // out carries one reference, which the facade takes over.
        self.answer(|| unsafe {
            let fake: IMetaDataImport = export(FakeImport {
                behaviour: self.behaviour(),
                calls: AtomicUsize::new(0),
            });
            put(import, fake.into_raw());
            put(token, mdToken(0x0600_0001));
        })
    }
    unsafe fn GetModuleInfo(
        &self,
        _module: ModuleID,
        base: *mut *const BYTE,
        capacity: ULONG,
        needed: *mut ULONG,
        name: *mut WCHAR,
        assembly: *mut AssemblyID,
    ) -> HRESULT {
        // SAFETY: the facade passes valid out-pointers.
        unsafe {
            put(base, NonNull::<BYTE>::dangling().as_ptr());
            put(assembly, AssemblyID::from_raw(0xA5));
        }
        self.string(capacity, needed, name)
    }
    unsafe fn GetModuleMetaData(
        &self,
        _module: ModuleID,
        _flags: DWORD,
        _riid: REFIID,
        out: *mut *mut c_void,
    ) -> HRESULT {
        // SAFETY: as in GetTokenAndMetaDataFromFunction.
        self.answer(|| unsafe {
            let fake: IMetaDataImport = export(FakeImport {
                behaviour: Behaviour::Normal,
                calls: AtomicUsize::new(0),
            });
            put(out, fake.into_raw());
        })
    }
    unsafe fn GetILFunctionBody(
        &self,
        _module: ModuleID,
        _method: mdMethodDef,
        header: *mut *const BYTE,
        size: *mut ULONG,
    ) -> HRESULT {
        static BODY: [u8; 2] = [0x02, 0x2A];
        // SAFETY: the facade passes valid out-pointers.
        self.answer(|| unsafe {
            put(header, BODY.as_ptr());
            put(size, 2);
        })
    }
    unsafe fn GetILFunctionBodyAllocator(
        &self,
        _module: ModuleID,
        malloc: *mut *mut c_void,
    ) -> HRESULT {
        let fails = self.behaviour() == Behaviour::MallocFails;
        // SAFETY: the facade passes a valid out-pointer and takes over the
        // reference.
        self.answer(|| unsafe {
            let fake: IMethodMalloc = export(FakeMalloc {
                fails,
                blocks: Mutex::new(Vec::new()),
            });
            put(malloc, fake.into_raw());
        })
    }
    unsafe fn SetILFunctionBody(
        &self,
        _module: ModuleID,
        _method: mdMethodDef,
        _header: *const BYTE,
    ) -> HRESULT {
        self.answer(|| {})
    }
    unsafe fn GetAppDomainInfo(
        &self,
        _app_domain: AppDomainID,
        capacity: ULONG,
        needed: *mut ULONG,
        name: *mut WCHAR,
        process: *mut ProcessID,
    ) -> HRESULT {
        // SAFETY: the facade passes a valid out-pointer.
        unsafe { put(process, ProcessID::from_raw(1)) };
        self.string(capacity, needed, name)
    }
    unsafe fn GetAssemblyInfo(
        &self,
        _assembly: AssemblyID,
        capacity: ULONG,
        needed: *mut ULONG,
        name: *mut WCHAR,
        app_domain: *mut AppDomainID,
        module: *mut ModuleID,
    ) -> HRESULT {
        // SAFETY: the facade passes valid out-pointers.
        unsafe {
            put(app_domain, AppDomainID::from_raw(1));
            put(module, ModuleID::from_raw(0x30D));
        }
        self.string(capacity, needed, name)
    }
}

impl ICorProfilerInfo2_Impl for FakeInfo {
    unsafe fn GetClassIDInfo2(
        &self,
        _class: ClassID,
        module: *mut ModuleID,
        typedef: *mut mdTypeDef,
        parent: *mut ClassID,
        capacity: ULONG32,
        count: *mut ULONG32,
        args: *mut ClassID,
    ) -> HRESULT {
        self.class_calls.fetch_add(1, Ordering::SeqCst);
        let claimed = match self.behaviour() {
            Behaviour::Claim(n) => n,
            _ => 0,
        };
        // SAFETY: the facade passes valid out-pointers and an array of
        // `capacity` IDs.
        self.answer(|| unsafe {
            put(module, ModuleID::from_raw(0x30D));
            put(typedef, mdTypeDef(0x0200_0002));
            put(parent, ClassID::NULL);
            put(count, claimed);
            for i in 0..claimed.min(capacity) as usize {
                *args.add(i) = ClassID::from_raw(0xC1);
            }
        })
    }
}
impl ICorProfilerInfo3_Impl for FakeInfo {
    unsafe fn EnumJITedFunctions(&self, out: *mut *mut c_void) -> HRESULT {
        // SAFETY: the facade passes a valid out-pointer and takes over the
        // reference.
        self.answer(|| unsafe {
            let fake: ICorProfilerFunctionEnum = export(NoFunctions);
            put(out, fake.into_raw());
        })
    }
    unsafe fn EnumModules(&self, out: *mut *mut c_void) -> HRESULT {
        let asked = self.asked.clone();
        // SAFETY: the facade passes a valid out-pointer and takes over the
        // reference.
        self.answer(|| unsafe {
            let fake: ICorProfilerModuleEnum = export(LyingEnumerator {
                asked,
                calls: AtomicU32::new(0),
            });
            put(out, fake.into_raw());
        })
    }
    unsafe fn GetRuntimeInformation(
        &self,
        _instance: *mut USHORT,
        runtime_type: *mut COR_PRF_RUNTIME_TYPE,
        major: *mut USHORT,
        _minor: *mut USHORT,
        _build: *mut USHORT,
        _qfe: *mut USHORT,
        capacity: ULONG,
        needed: *mut ULONG,
        version: *mut WCHAR,
    ) -> HRESULT {
        // SAFETY: the facade passes valid out-pointers.
        unsafe {
            put(runtime_type, COR_PRF_CORE_CLR);
            put(major, 3);
        }
        self.string(capacity, needed, version)
    }
}
impl ICorProfilerInfo4_Impl for FakeInfo {
    unsafe fn RequestReJIT(
        &self,
        _n: ULONG,
        _modules: *mut ModuleID,
        _methods: *mut mdMethodDef,
    ) -> HRESULT {
        self.answer(|| {})
    }
    unsafe fn RequestRevert(
        &self,
        _n: ULONG,
        _modules: *mut ModuleID,
        _methods: *mut mdMethodDef,
        _statuses: *mut HRESULT,
    ) -> HRESULT {
        self.answer(|| {})
    }
}
impl ICorProfilerInfo5_Impl for FakeInfo {
    unsafe fn GetEventMask2(&self, low: *mut DWORD, high: *mut DWORD) -> HRESULT {
        // SAFETY: the facade passes valid out-pointers.
        self.answer(|| unsafe {
            put(low, 0x80);
            put(high, 0);
        })
    }
    unsafe fn SetEventMask2(&self, _low: DWORD, _high: DWORD) -> HRESULT {
        self.answer(|| {})
    }
}
impl ICorProfilerInfo6_Impl for FakeInfo {}
impl ICorProfilerInfo7_Impl for FakeInfo {}
impl ICorProfilerInfo8_Impl for FakeInfo {}
impl ICorProfilerInfo9_Impl for FakeInfo {}
impl ICorProfilerInfo10_Impl for FakeInfo {}
impl ICorProfilerInfo11_Impl for FakeInfo {}

/// A module's metadata, with the runtime's string behaviour.
struct FakeImport {
    behaviour: Behaviour,
    calls: AtomicUsize,
}

impl FakeImport {
    /// One string call, as the runtime's metadata would answer it.
    fn string(&self, capacity: ULONG, needed: *mut ULONG, buffer: *mut WCHAR) -> HRESULT {
        let call = self.calls.fetch_add(1, Ordering::SeqCst);
        let fake = FakeInfo::new(self.behaviour);
        fake.string_calls.store(call, Ordering::SeqCst);
        fake.string(capacity, needed, buffer)
    }
}

impl IMetaDataImport_Impl for FakeImport {
    unsafe fn GetTypeDefProps(
        &self,
        _typedef: mdTypeDef,
        name: LPWSTR,
        capacity: ULONG,
        needed: *mut ULONG,
        flags: *mut DWORD,
        extends: *mut mdToken,
    ) -> HRESULT {
        // SAFETY: the facade passes valid out-pointers.
        unsafe {
            put(flags, 0);
            put(extends, mdToken(0));
        }
        self.string(capacity, needed, name)
    }
    unsafe fn GetMethodProps(
        &self,
        _method: mdMethodDef,
        class: *mut mdTypeDef,
        name: LPWSTR,
        capacity: ULONG,
        needed: *mut ULONG,
        _attributes: *mut DWORD,
        signature: *mut PCCOR_SIGNATURE,
        signature_len: *mut ULONG,
        _rva: *mut ULONG,
        _impl_flags: *mut DWORD,
    ) -> HRESULT {
        // SAFETY: the facade passes valid out-pointers.
        unsafe {
            put(class, mdTypeDef(0));
            put(signature, null());
            put(signature_len, 0);
        }
        match self.behaviour {
            Behaviour::Refuse(_) => CLDB_E_RECORD_NOTFOUND,
            _ => self.string(capacity, needed, name),
        }
    }
}

/// Metadata whose `EnumMethods` never ends: every call fills the buffer
/// and answers `S_OK`.
struct EndlessMethods {
    calls: AtomicUsize,
}

impl IMetaDataImport_Impl for EndlessMethods {
    unsafe fn EnumMethods(
        &self,
        _handle: *mut HCORENUM,
        _typedef: mdTypeDef,
        methods: *mut mdMethodDef,
        capacity: ULONG,
        fetched: *mut ULONG,
    ) -> HRESULT {
        self.calls.fetch_add(1, Ordering::SeqCst);
        // SAFETY: the facade passes a buffer of `capacity` tokens and a
        // valid count pointer.
        unsafe {
            for i in 0..capacity as usize {
                *methods.add(i) = mdMethodDef(0x0600_0001);
            }
            put(fetched, capacity);
        }
        S_OK
    }
}

/// An empty function enumerator (every method at its default).
struct NoFunctions;
impl ICorProfilerFunctionEnum_Impl for NoFunctions {}

/// An allocator that may fail. Its blocks live as long as it does (the
/// runtime's live as long as the module).
struct FakeMalloc {
    fails: bool,
    blocks: Mutex<Vec<Vec<u8>>>,
}

impl IMethodMalloc_Impl for FakeMalloc {
    unsafe fn Alloc(&self, size: ULONG) -> *mut c_void {
        if self.fails {
            return null_mut();
        }
        let mut block = vec![0u8; size as usize];
        let memory = block.as_mut_ptr() as *mut c_void;
        self.blocks.lock().unwrap().push(block);
        memory
    }
}

/// An enumerator whose first `Next` claims `u32::MAX` items (writing
/// none), and whose second fails.
struct LyingEnumerator {
    asked: Arc<Mutex<Vec<u32>>>,
    calls: AtomicU32,
}

impl ICorProfilerModuleEnum_Impl for LyingEnumerator {
    unsafe fn Next(&self, celt: ULONG, _ids: *mut ModuleID, fetched: *mut ULONG) -> HRESULT {
        self.asked.lock().unwrap().push(celt);
        if self.calls.fetch_add(1, Ordering::SeqCst) > 0 {
            return E_FAIL;
        }
        // SAFETY: the facade passes a valid out-pointer.
        unsafe { put(fetched, u32::MAX) };
        S_OK
    }
}

/// The facade's view of a fake runtime behaving as `behaviour`.
fn facade(behaviour: Behaviour) -> (ProfilerInfo, Arc<FakeInfo>) {
    let fake = Arc::new(FakeInfo::new(behaviour));
    let exported: ICorProfilerInfo11 = export_arc(fake.clone());
    let unknown: IUnknown = exported.cast().unwrap();
    let info = ProfilerInfo::from_unknown(&unknown).expect("the fake answers ICorProfilerInfo11");
    assert_eq!(info.version(), 11);
    (info, fake)
}

// ---------------------------------------------------------------------------
// (d) A runtime that refuses: every facade method returns Err(that code).
// ---------------------------------------------------------------------------

const F: FunctionID = fake_id!(FunctionID, 0xF0);
const M: ModuleID = fake_id!(ModuleID, 0x30D);
const METHOD: mdMethodDef = mdMethodDef(0x0600_0001);

/// Every `ProfilerInfo` method, called with plausible IDs; the results
/// mapped to `()` so one table holds them all.
#[allow(clippy::type_complexity)]
fn every_info_method() -> Vec<(&'static str, fn(&ProfilerInfo) -> Result<()>)> {
    vec![
        ("set_event_mask", |i| i.set_event_mask(COR_PRF_MONITOR_GC)),
        ("set_event_mask (high)", |i| {
            i.set_event_mask((COR_PRF_MONITOR_GC, COR_PRF_HIGH_MONITOR_EVENT_PIPE))
        }),
        ("event_mask", |i| i.event_mask().map(drop)),
        ("function_info", |i| i.function_info(F).map(drop)),
        ("function_metadata", |i| i.function_metadata(F).map(drop)),
        ("function_name", |i| i.function_name(F).map(drop)),
        ("class_name", |i| {
            i.class_name(fake_id!(ClassID, 0xC1)).map(drop)
        }),
        ("module_info", |i| i.module_info(M).map(drop)),
        ("assembly_info", |i| {
            i.assembly_info(fake_id!(AssemblyID, 0xA5)).map(drop)
        }),
        ("app_domain_name", |i| {
            i.app_domain_name(fake_id!(AppDomainID, 1)).map(drop)
        }),
        ("module_metadata", |i| i.module_metadata(M).map(drop)),
        ("modules", |i| i.modules().map(drop)),
        ("jited_functions", |i| i.jited_functions().map(drop)),
        ("current_thread", |i| i.current_thread().map(drop)),
        ("os_thread_id", |i| {
            i.os_thread_id(fake_id!(ThreadID, 1)).map(drop)
        }),
        ("thread_handle", |i| {
            i.thread_handle(fake_id!(ThreadID, 1)).map(drop)
        }),
        ("class_of", |i| {
            let object = fake_id!(ObjectID, 0x0B);
            // SAFETY: the fake runtime never dereferences the object.
            unsafe { i.class_of(object) }.map(drop)
        }),
        ("runtime_information", |i| i.runtime_information().map(drop)),
        ("il_function_body", |i| {
            i.il_function_body(M, METHOD).map(drop)
        }),
        ("set_il_function_body", |i| {
            // SAFETY: the fake runtime never compiles what it is given.
            unsafe { i.set_il_function_body(M, METHOD, &[0x02, 0x2A]) }
        }),
        ("request_rejit", |i| i.request_rejit(&[(M, METHOD)])),
        ("request_revert", |i| {
            i.request_revert(&[(M, METHOD)]).map(drop)
        }),
    ]
}

/// Failure codes a runtime answers to bad IDs or bad timing.
const REFUSALS: &[(HRESULT, &str)] = &[
    (E_INVALIDARG, "E_INVALIDARG"),
    (E_FAIL, "E_FAIL"),
    (
        CORPROF_E_UNSUPPORTED_CALL_SEQUENCE,
        "CORPROF_E_UNSUPPORTED_CALL_SEQUENCE",
    ),
    (CORPROF_E_DATAINCOMPLETE, "CORPROF_E_DATAINCOMPLETE"),
    (CORPROF_E_NOT_MANAGED_THREAD, "CORPROF_E_NOT_MANAGED_THREAD"),
    (
        CORPROF_E_FUNCTION_NOT_COMPILED,
        "CORPROF_E_FUNCTION_NOT_COMPILED",
    ),
    (CORPROF_E_CLASSID_IS_ARRAY, "CORPROF_E_CLASSID_IS_ARRAY"),
    (CORPROF_E_REJIT_NOT_ENABLED, "CORPROF_E_REJIT_NOT_ENABLED"),
    (CORPROF_E_PROFILER_DETACHING, "CORPROF_E_PROFILER_DETACHING"),
    (
        CORPROF_E_ASYNCHRONOUS_UNSAFE,
        "CORPROF_E_ASYNCHRONOUS_UNSAFE",
    ),
];

#[test]
fn the_fake_runtime_works_when_it_behaves() {
    // The control for the tests below: with a well-behaved fake, every
    // method succeeds, so each failure below is the fake's doing.
    let (info, _fake) = facade(Behaviour::Normal);
    for (name, call) in every_info_method() {
        assert_eq!(call(&info), Ok(()), "{name}");
    }
    assert_eq!(info.module_info(M).unwrap().path, "nnnn");
    assert_eq!(info.function_name(F).unwrap().to_string(), "nnnn");
    assert_eq!(info.thread_handle(fake_id!(ThreadID, 1)), Ok(fake_handle()));
}

#[test]
fn every_info_method_returns_the_runtimes_refusal_and_displays_it() {
    let (info, fake) = facade(Behaviour::Normal);
    for &(code, name) in REFUSALS {
        fake.set(Behaviour::Refuse(code));
        for (method, call) in every_info_method() {
            let got = call(&info);
            // function_name's metadata import is never reached: the first
            // call (GetTokenAndMetaDataFromFunction) is refused.
            assert_eq!(got, Err(code.into()), "{method} refused with {name}");
            let error = got.unwrap_err();
            let meaning = code.meaning().expect("a known code");
            // The runtime method that refused, as the context.
            let call = error.message();
            assert!(
                !call.is_empty() && call.starts_with(|c: char| c.is_ascii_uppercase()),
                "{method}: the error says which runtime call failed: {error:?}"
            );
            assert_eq!(
                error.to_string(),
                format!("{call}: {name} (0x{:08X}): {meaning}", code.0 as u32),
                "{method}: Display names the call, the code, its value and its meaning"
            );
            assert!(!meaning.is_empty());
        }
    }
}

/// A profiler that keeps a clone of its `ProfilerInfo`, as a profiler's
/// own thread would, and checks in `shutdown` that the runtime still
/// answers there.
#[derive(Default)]
struct KeepsAClone {
    kept: Arc<Mutex<Option<ProfilerInfo>>>,
    answered_in_shutdown: Arc<Mutex<Option<Result<()>>>>,
}

impl Profiler for KeepsAClone {
    fn initialize(&self, info: &ProfilerInfo) -> Result<()> {
        *self.kept.lock().unwrap() = Some(info.clone());
        Ok(())
    }
    fn shutdown(&self, info: &ProfilerInfo) -> Result<()> {
        *self.answered_in_shutdown.lock().unwrap() = Some(info.event_mask().map(drop));
        Ok(())
    }
}

#[test]
fn after_shutdown_every_info_method_answers_after_shutdown_without_calling_the_runtime() {
    let profiler = KeepsAClone::default();
    let (kept, in_shutdown) = (profiler.kept.clone(), profiler.answered_in_shutdown.clone());
    let callback: ICorProfilerCallback11 = export_profiler(profiler).cast().unwrap();
    let fake = Arc::new(FakeInfo::new(Behaviour::Normal));
    let runtime: ICorProfilerInfo11 = export_arc(fake.clone());
    // SAFETY: a live runtime object.
    assert_eq!(unsafe { callback.Initialize(runtime.as_raw()) }, S_OK);
    let clone = kept
        .lock()
        .unwrap()
        .clone()
        .expect("initialize kept a clone");
    // The control: before Shutdown the clone reaches the (well-behaved) fake.
    assert!(!clone.is_shut_down());
    for (name, call) in every_info_method() {
        assert_eq!(call(&clone), Ok(()), "{name} before Shutdown");
    }
    // SAFETY: no arguments.
    assert_eq!(unsafe { callback.Shutdown() }, S_OK);
    assert_eq!(
        *in_shutdown.lock().unwrap(),
        Some(Ok(())),
        "the Shutdown callback itself still reaches the runtime"
    );
    assert!(clone.is_shut_down());
    assert_eq!(AFTER_SHUTDOWN, CORPROF_E_UNSUPPORTED_CALL_SEQUENCE);
    // From now on the fake would refuse with E_INVALIDARG: a call that
    // reached it would answer that, not AFTER_SHUTDOWN.
    fake.set(Behaviour::Refuse(E_INVALIDARG));
    for (name, call) in every_info_method() {
        assert_eq!(
            call(&clone),
            Err(AFTER_SHUTDOWN.into()),
            "{name} after Shutdown"
        );
        assert_eq!(
            call(&clone.clone()),
            Err(AFTER_SHUTDOWN.into()),
            "{name} on a clone"
        );
    }
    assert_eq!(
        fake.string_calls.load(Ordering::SeqCst),
        0,
        "no string call reached the runtime"
    );
}

#[test]
fn success_without_out_parameters_is_an_error_or_an_empty_answer_not_a_crash() {
    let (info, _fake) = facade(Behaviour::SilentSuccess);
    // Null interface or body pointers: E_POINTER.
    assert_eq!(info.function_metadata(F).map(drop), Err(E_POINTER.into()));
    assert_eq!(info.function_name(F).map(drop), Err(E_POINTER.into()));
    assert_eq!(info.modules().map(drop), Err(E_POINTER.into()));
    assert_eq!(info.jited_functions().map(drop), Err(E_POINTER.into()));
    assert_eq!(info.il_function_body(M, METHOD), Err(E_POINTER.into()));
    // SAFETY: the fake never compiles anything.
    let set = unsafe { info.set_il_function_body(M, METHOD, &[0x02, 0x2A]) };
    assert_eq!(set, Err(E_POINTER.into()), "no allocator");
    // `S_OK` with no metadata: the facade's "none".
    assert!(info.module_metadata(M).unwrap().is_none());
    // Zero lengths: empty strings.
    assert_eq!(info.module_info(M).unwrap().path, "");
    assert_eq!(info.app_domain_name(fake_id!(AppDomainID, 1)).unwrap(), "");
    // Zero IDs come back as they are (the runtime's answer, not a crash).
    assert_eq!(info.current_thread(), Ok(ThreadID::NULL));
    // A class with no module: no metadata to name it from.
    assert!(info.class_name(fake_id!(ClassID, 0xC1)).is_err());
}

#[test]
fn an_allocator_that_fails_is_out_of_memory() {
    let (info, _fake) = facade(Behaviour::MallocFails);
    // SAFETY: the fake never compiles anything.
    let set = unsafe { info.set_il_function_body(M, METHOD, &[0x02, 0x2A]) };
    assert_eq!(set, Err(E_OUTOFMEMORY.into()));
}

#[test]
fn a_lying_enumerator_is_read_within_the_buffer_and_a_failing_next_ends_it() {
    let (info, fake) = facade(Behaviour::LyingEnumerator);
    let modules: Vec<ModuleID> = info.modules().unwrap().take(10_000).collect();
    let asked = fake.asked.lock().unwrap().clone();
    assert!(!asked.is_empty());
    assert_eq!(
        modules.len(),
        asked[0] as usize,
        "a claim of u32::MAX items yields one buffer's worth, no more"
    );
    assert_eq!(asked.len(), 2, "the failing Next ended the iteration");
}

// ---------------------------------------------------------------------------
// (d) Strings: impossible lengths, a second call that fails, a string that
// grows between the two calls.
// ---------------------------------------------------------------------------

/// The string-returning methods, as strings.
#[allow(clippy::type_complexity)]
fn every_string_method() -> Vec<(&'static str, fn(&ProfilerInfo) -> Result<String>)> {
    vec![
        ("module_info", |i| i.module_info(M).map(|m| m.path)),
        ("assembly_info", |i| {
            i.assembly_info(fake_id!(AssemblyID, 0xA5)).map(|a| a.name)
        }),
        ("app_domain_name", |i| {
            i.app_domain_name(fake_id!(AppDomainID, 1))
        }),
        ("runtime_information", |i| {
            i.runtime_information().map(|r| r.version_string)
        }),
        ("function_name (metadata)", |i| {
            i.function_name(F).map(|n| n.method_name)
        }),
    ]
}

#[test]
fn an_impossible_string_length_is_an_error_not_an_allocation() {
    let (info, fake) = facade(Behaviour::Normal);
    for claimed in [u32::MAX, u32::MAX / 2, 1 << 30] {
        fake.set(Behaviour::Claim(claimed));
        for (method, call) in every_string_method() {
            assert_eq!(
                call(&info),
                Err(E_UNEXPECTED.into()),
                "{method}: a length of {claimed} characters is refused"
            );
        }
    }
}

#[test]
fn long_strings_are_read_in_full_with_one_exact_second_call() {
    let (info, fake) = facade(Behaviour::Claim(5000));
    let path = info.module_info(M).unwrap().path;
    assert_eq!(path.len(), 4999, "5000 units, the last the terminator");
    assert!(path.bytes().all(|b| b == b'x'));
    let capacities = fake.capacities.lock().unwrap().clone();
    assert_eq!(capacities.len(), 2);
    assert_eq!(
        capacities[1], 5000,
        "the second buffer is exactly the claim"
    );
}

#[test]
fn a_string_call_that_fails_the_second_time_returns_that_failure() {
    let (info, fake) = facade(Behaviour::Normal);
    for &(code, _) in REFUSALS {
        for (method, call) in every_string_method() {
            fake.set(Behaviour::SecondCallFails(code));
            // For function_name, GetTokenAndMetaDataFromFunction succeeds
            // and the metadata's own string call fails the second time.
            assert_eq!(call(&info), Err(code.into()), "{method}");
        }
    }
}

#[test]
fn a_string_that_grows_between_the_calls_is_cut_to_the_buffer() {
    let (info, fake) = facade(Behaviour::Normal);
    for (method, call) in every_string_method() {
        fake.set(Behaviour::Grows);
        let got = call(&info).unwrap_or_else(|e| panic!("{method}: {e}"));
        assert_eq!(
            got.len(),
            300,
            "{method}: what fits in the buffer asked for"
        );
        assert!(
            got.bytes().all(|b| b == b'y'),
            "{method}: the second answer"
        );
    }
}

#[test]
fn an_impossible_count_of_type_arguments_is_an_error_not_an_allocation() {
    let (info, fake) = facade(Behaviour::Normal);
    for claimed in [u32::MAX, 1 << 28] {
        fake.set(Behaviour::Claim(claimed));
        assert_eq!(
            info.class_name(fake_id!(ClassID, 0xC1)),
            Err(E_UNEXPECTED.into()),
            "{claimed} type arguments"
        );
    }
}

#[test]
fn a_class_that_is_its_own_type_argument_is_named_in_bounded_time() {
    // Every class claims 8 type arguments, all itself: unbounded, naming it
    // would take 8^16 runtime calls.
    let (info, fake) = facade(Behaviour::Claim(8));
    let name = info.class_name(fake_id!(ClassID, 0xC1)).unwrap();
    let calls = fake.class_calls.load(Ordering::SeqCst);
    assert!(calls <= 2 * 256, "{calls} calls to GetClassIDInfo2");
    assert!(name.starts_with("nnnn<nnnn<"), "{name}");
    assert!(name.contains("..."), "the rest is elided: {name}");
}

#[test]
#[cfg_attr(miri, ignore = "2^18 enumerator calls are too slow under Miri")]
fn a_metadata_enumerator_that_never_ends_is_an_error_not_an_endless_list() {
    let endless = Arc::new(EndlessMethods {
        calls: AtomicUsize::new(0),
    });
    let import = MetadataImport::new(export_arc(endless.clone()));
    assert_eq!(
        import.methods(mdTypeDef(0x0200_0002)),
        Err(E_UNEXPECTED.into()),
        "more MethodDefs than a table can hold"
    );
    let calls = endless.calls.load(Ordering::SeqCst);
    assert!(
        calls <= (1 << 24) / 8,
        "stopped after 2^24 tokens, not at the end of memory: {calls} calls"
    );
}

/// A ReJIT controller that refuses everything.
struct RefusingControl;
impl ICorProfilerFunctionControl_Impl for RefusingControl {
    unsafe fn SetCodegenFlags(&self, _flags: DWORD) -> HRESULT {
        E_INVALIDARG
    }
    unsafe fn SetILFunctionBody(&self, _size: ULONG, _body: *const BYTE) -> HRESULT {
        CORPROF_E_UNSUPPORTED_CALL_SEQUENCE
    }
}

#[test]
fn a_function_control_that_refuses_returns_its_code() {
    let owned: ICorProfilerFunctionControl = export(RefusingControl);
    // SAFETY: `owned` keeps the object alive for the borrow.
    let view = fake_id!(ComRef, owned.as_raw()).unwrap();
    let control = FunctionControl::new(view);
    // SAFETY: the double never compiles anything.
    let body = unsafe { control.set_il_function_body(&[0x02, 0x2A]) };
    assert_eq!(body, Err(CORPROF_E_UNSUPPORTED_CALL_SEQUENCE.into()));
    assert!(body
        .unwrap_err()
        .to_string()
        .starts_with("SetILFunctionBody: CORPROF_E_UNSUPPORTED_CALL_SEQUENCE (0x80131363): "));
    assert_eq!(
        control.set_codegen_flags(COR_PRF_CODEGEN_DISABLE_INLINING),
        Err(E_INVALIDARG.into())
    );
}

// ---------------------------------------------------------------------------
// (e) ProfilerInfo::from_unknown on objects that are no (usable) runtime.
// ---------------------------------------------------------------------------

struct Stranger;

#[test]
fn profiler_info_can_move_to_other_threads() {
    fn send_and_sync<T: Send + Sync>() {}
    send_and_sync::<ProfilerInfo>();
    // And really used from another thread.
    let (info, _fake) = facade(Behaviour::Normal);
    let path = std::thread::spawn(move || info.module_info(M).map(|m| m.path))
        .join()
        .unwrap();
    assert_eq!(path, Ok(String::from("nnnn")));
}

#[test]
fn from_unknown_on_an_object_without_info_interfaces_is_no_interface() {
    let stranger: IUnknown = export(Stranger);
    let got = ProfilerInfo::from_unknown(&stranger);
    assert_eq!(got.as_ref().err(), Some(&E_NOINTERFACE.into()));
    let shown = got.unwrap_err().to_string();
    assert!(shown.starts_with("E_NOINTERFACE (0x80004002): "), "{shown}");
    // The same through the raw entry point, and a null pointer.
    // SAFETY: a live object, then null (allowed).
    unsafe {
        assert_eq!(
            ProfilerInfo::from_raw_unknown(stranger.as_raw()).err(),
            Some(E_NOINTERFACE.into())
        );
        assert_eq!(
            ProfilerInfo::from_raw_unknown(null_mut()).err(),
            Some(E_POINTER.into())
        );
    }
}

/// A runtime as old as .NET Framework 2.0: `ICorProfilerInfo2` and no more.
struct OldRuntime;
impl ICorProfilerInfo_Impl for OldRuntime {
    unsafe fn SetEventMask(&self, _events: DWORD) -> HRESULT {
        S_OK
    }
}
impl ICorProfilerInfo2_Impl for OldRuntime {}

#[test]
fn an_old_runtime_gets_its_version_and_e_notimpl_for_newer_methods() {
    let old: ICorProfilerInfo2 = export(OldRuntime);
    let unknown: IUnknown = old.cast().unwrap();
    let info = ProfilerInfo::from_unknown(&unknown).unwrap();
    assert_eq!(info.version(), 2);
    assert!(info.v2().is_some());
    assert!(info.v3().is_none() && info.v11().is_none() && info.v15().is_none());
    assert_eq!(info.set_event_mask(COR_PRF_MONITOR_GC), Ok(()));
    let high = info.set_event_mask((COR_PRF_MONITOR_GC, COR_PRF_HIGH_MONITOR_EVENT_PIPE));
    assert_eq!(high, Err(E_NOTIMPL.into()), "high flags need version 5");
    assert_eq!(info.modules().map(drop), Err(E_NOTIMPL.into()));
    assert_eq!(info.jited_functions().map(drop), Err(E_NOTIMPL.into()));
    assert_eq!(info.runtime_information().map(drop), Err(E_NOTIMPL.into()));
    assert_eq!(info.request_rejit(&[(M, METHOD)]), Err(E_NOTIMPL.into()));
    assert_eq!(info.request_revert(&[]).map(drop), Err(E_NOTIMPL.into()));
    let mut visited = 0;
    let walked = info.enumerate_gc_heap_objects(|_| {
        visited += 1;
        true
    });
    assert_eq!(
        (walked, visited),
        (Err(E_NOTIMPL.into()), 0),
        "needs version 15"
    );
    // Methods the old runtime leaves at their default answer E_NOTIMPL too.
    assert_eq!(info.current_thread(), Err(E_NOTIMPL.into()));
    assert_eq!(info.event_mask().map(drop), Err(E_NOTIMPL.into()));
}

/// A hand-written COM object whose `QueryInterface` claims success but
/// hands out null, for every IID.
#[repr(C)]
struct BrokenQuery {
    vtable: &'static IUnknown_Vtbl,
}

unsafe extern "system" fn broken_query(
    _this: *mut c_void,
    _iid: *const GUID,
    out: *mut *mut c_void,
) -> HRESULT {
    // SAFETY: the caller passes a writable out-pointer.
    unsafe { put(out, null_mut()) };
    S_OK
}
unsafe extern "system" fn broken_ref(_this: *mut c_void) -> u32 {
    1
}
static BROKEN_VTABLE: IUnknown_Vtbl = IUnknown_Vtbl {
    QueryInterface: broken_query,
    AddRef: broken_ref,
    Release: broken_ref,
};

#[test]
fn from_unknown_on_a_query_interface_that_answers_null_is_an_error() {
    let mut object = BrokenQuery {
        vtable: &BROKEN_VTABLE,
    };
    // SAFETY: `object` is a COM object (its first word is an IUnknown
    // vtable) that lives for the whole call.
    let got =
        unsafe { ProfilerInfo::from_raw_unknown(&mut object as *mut BrokenQuery as *mut c_void) };
    assert_eq!(got.err(), Some(E_NOINTERFACE.into()));
}

// ---------------------------------------------------------------------------
// A profiler that records what reaches it and answers a sentinel.
// ---------------------------------------------------------------------------

/// Answered by every overridden callback, so that a result other than
/// `E_ABORT` proves the call did not reach the profiler.
const REACHED: HRESULT = E_ABORT;

#[derive(Default)]
struct Tripwire {
    reached: Arc<Mutex<Vec<String>>>,
}

impl Tripwire {
    fn hit(&self, what: impl Into<String>) -> HRESULT {
        self.reached.lock().unwrap().push(what.into());
        REACHED
    }
    fn hit_err<T>(&self, what: impl Into<String>) -> Result<T> {
        Err(self.hit(what).into())
    }
}

impl Profiler for Tripwire {
    fn initialize_for_attach(&self, _info: &ProfilerInfo, data: &[u8]) -> Result<()> {
        self.reached
            .lock()
            .unwrap()
            .push(format!("initialize_for_attach {}", data.len()));
        Ok(())
    }
    fn jit_cached_function_search_started(&self, _: &ProfilerInfo, _: FunctionID) -> Result<bool> {
        self.hit_err("jit_cached_function_search_started")
    }
    fn jit_inlining(&self, _: &ProfilerInfo, _: FunctionID, _: FunctionID) -> Result<bool> {
        self.hit_err("jit_inlining")
    }
    fn load_as_notification_only(&self) -> Result<bool> {
        self.hit_err("load_as_notification_only")
    }
    fn moved_references(
        &self,
        _: &ProfilerInfo,
        _: &[ObjectID],
        _: &[ObjectID],
        _: &[u32],
    ) -> Result<()> {
        self.hit_err("moved_references")
    }
    fn objects_allocated_by_class(&self, _: &ProfilerInfo, _: &[ClassID], _: &[u32]) -> Result<()> {
        self.hit_err("objects_allocated_by_class")
    }
    fn object_references(
        &self,
        _: &ProfilerInfo,
        _: ObjectID,
        _: ClassID,
        _: &[ObjectID],
    ) -> Result<()> {
        self.hit_err("object_references")
    }
    fn root_references(&self, _: &ProfilerInfo, _: &[ObjectID]) -> Result<()> {
        self.hit_err("root_references")
    }
    fn thread_name_changed(&self, _: &ProfilerInfo, _: ThreadID, name: String) -> Result<()> {
        self.hit_err(format!("thread_name_changed {name:?}"))
    }
    fn garbage_collection_started(
        &self,
        _: &ProfilerInfo,
        _: Bools<'_>,
        _: COR_PRF_GC_REASON,
    ) -> Result<()> {
        self.hit_err("garbage_collection_started")
    }
    fn surviving_references(&self, _: &ProfilerInfo, _: &[ObjectID], _: &[u32]) -> Result<()> {
        self.hit_err("surviving_references")
    }
    fn root_references2(
        &self,
        _: &ProfilerInfo,
        _: &[ObjectID],
        _: &[COR_PRF_GC_ROOT_KIND],
        _: &[COR_PRF_GC_ROOT_FLAGS],
        _: &[usize],
    ) -> Result<()> {
        self.hit_err("root_references2")
    }
    fn moved_references2(
        &self,
        _: &ProfilerInfo,
        _: &[ObjectID],
        _: &[ObjectID],
        _: &[usize],
    ) -> Result<()> {
        self.hit_err("moved_references2")
    }
    fn surviving_references2(&self, _: &ProfilerInfo, _: &[ObjectID], _: &[usize]) -> Result<()> {
        self.hit_err("surviving_references2")
    }
    fn conditional_weak_table_element_references(
        &self,
        _: &ProfilerInfo,
        _: &[ObjectID],
        _: &[ObjectID],
        _: &[GCHandleID],
    ) -> Result<()> {
        self.hit_err("conditional_weak_table_element_references")
    }
    fn get_assembly_references(
        &self,
        _: &ProfilerInfo,
        path: String,
        _: ComRef<'_, ICorProfilerAssemblyReferenceProvider>,
    ) -> Result<()> {
        self.hit_err(format!("get_assembly_references {path:?}"))
    }
    fn get_rejit_parameters(
        &self,
        _: &ProfilerInfo,
        _: ModuleID,
        _: mdMethodDef,
        _: ComRef<'_, ICorProfilerFunctionControl>,
    ) -> Result<()> {
        self.hit_err("get_rejit_parameters")
    }
    fn dynamic_method_jit_compilation_started(
        &self,
        _: &ProfilerInfo,
        _: FunctionID,
        _: bool,
        _: &[u8],
    ) -> Result<()> {
        self.hit_err("dynamic_method_jit_compilation_started")
    }
    fn event_pipe_event_delivered(
        &self,
        _: &ProfilerInfo,
        event: &EventPipeEvent<'_>,
    ) -> Result<()> {
        self.hit_err(format!(
            "event_pipe_event_delivered activity={:?} related={:?}",
            event.activity_id.is_some(),
            event.related_activity_id.is_some()
        ))
    }
    fn com_classic_vtable_created(
        &self,
        _: &ProfilerInfo,
        _: ClassID,
        iid: Option<&GUID>,
        _: usize,
        _: u32,
    ) -> Result<()> {
        self.hit_err(format!("com_classic_vtable_created iid={}", iid.is_some()))
    }
    fn remoting_client_sending_message(
        &self,
        _: &ProfilerInfo,
        cookie: Option<&GUID>,
        _: bool,
    ) -> Result<()> {
        self.hit_err(format!(
            "remoting_client_sending_message cookie={}",
            cookie.is_some()
        ))
    }
}

/// An exported `Tripwire`, initialized with a well-behaved fake runtime.
struct Adapter {
    callback: ICorProfilerCallback11,
    runtime: ICorProfilerInfo11,
    reached: Arc<Mutex<Vec<String>>>,
}

impl Adapter {
    fn new(initialized: bool) -> Adapter {
        let tripwire = Tripwire::default();
        let reached = tripwire.reached.clone();
        let callback: ICorProfilerCallback11 = export_profiler(tripwire).cast().unwrap();
        let runtime: ICorProfilerInfo11 = export(FakeInfo::new(Behaviour::Normal));
        let adapter = Adapter {
            callback,
            runtime,
            reached,
        };
        if initialized {
            // SAFETY: a live runtime object.
            let hr = unsafe { adapter.callback.Initialize(adapter.runtime.as_raw()) };
            assert_eq!(hr, S_OK);
        }
        adapter
    }

    /// What reached the profiler since the last call.
    fn reached(&self) -> Vec<String> {
        core::mem::take(&mut *self.reached.lock().unwrap())
    }
}

/// A pointer one byte past an aligned one: misaligned for every `T` wider
/// than a byte. Never dereferenced (the adapter refuses it).
fn misaligned<T>(aligned: *const T) -> *mut T {
    (aligned as *const u8).wrapping_add(1) as *mut T
}

// ---------------------------------------------------------------------------
// (a) A null `this` in every slot of the adapter.
// ---------------------------------------------------------------------------

/// Calls each named method of vtable `$vt` with `$this` and, for each
/// argument, `_` (all-zero bits: 0, null, the null ID) or `(expr)`.
macro_rules! call_all {
    (@arg _) => { core::mem::zeroed() };
    (@arg ($e:expr)) => { $e };
    ($this:expr; $($vt:expr => { $($method:ident($($arg:tt)*);)* })*) => {{
        let results: Vec<(&'static str, HRESULT)> = vec![$($(
            (
                stringify!($method),
                ($vt.$method)($this $(, call_all!(@arg $arg))*),
            ),
        )*)*];
        results
    }};
}

/// The 95 methods of `ICorProfilerCallback11` after IUnknown's, called on
/// `this`. Pointer arguments the adapter would dereference point at live
/// locals, so a call that is dispatched succeeds (or is refused for its
/// state: `Initialize` twice), and only a refusal at the thunk gives
/// `E_POINTER`.
///
/// # Safety
///
/// `this` is null or the exported adapter, initialized.
unsafe fn call_every_callback(
    this: *mut c_void,
    object: &ICorProfilerCallback11,
    runtime: &ICorProfilerInfo11,
) -> Vec<(&'static str, HRESULT)> {
    let raw = object.as_raw();
    // SAFETY: `raw` is a live ICorProfilerCallback11 object; its vtable
    // begins with each lower version's (#[repr(C)], `base__` first).
    let (v1, v2, v3, v4, v5, v6, v7, v8, v9, v10, v11) = unsafe {
        (
            &**(raw as *const *const ICorProfilerCallback_Vtbl),
            &**(raw as *const *const ICorProfilerCallback2_Vtbl),
            &**(raw as *const *const ICorProfilerCallback3_Vtbl),
            &**(raw as *const *const ICorProfilerCallback4_Vtbl),
            &**(raw as *const *const ICorProfilerCallback5_Vtbl),
            &**(raw as *const *const ICorProfilerCallback6_Vtbl),
            &**(raw as *const *const ICorProfilerCallback7_Vtbl),
            &**(raw as *const *const ICorProfilerCallback8_Vtbl),
            &**(raw as *const *const ICorProfilerCallback9_Vtbl),
            &**(raw as *const *const ICorProfilerCallback10_Vtbl),
            &**(raw as *const *const ICorProfilerCallback11_Vtbl),
        )
    };
    let mut out_bool: BOOL = 7;
    let path: Vec<u16> = "/app.dll".encode_utf16().chain([0]).collect();
    let provider: ICorProfilerAssemblyReferenceProvider = export(Provider);
    let control: ICorProfilerFunctionControl = export(Control);
    // SAFETY: each slot is called with its declared signature; `_` is the
    // all-zero value of an integer, ID or raw pointer type (all valid), and
    // the other pointers point at live locals.
    unsafe {
        call_all! { this;
            v1 => {
                Initialize((runtime.as_raw()));
                Shutdown();
                AppDomainCreationStarted(_);
                AppDomainCreationFinished(_ _);
                AppDomainShutdownStarted(_);
                AppDomainShutdownFinished(_ _);
                AssemblyLoadStarted(_);
                AssemblyLoadFinished(_ _);
                AssemblyUnloadStarted(_);
                AssemblyUnloadFinished(_ _);
                ModuleLoadStarted(_);
                ModuleLoadFinished(_ _);
                ModuleUnloadStarted(_);
                ModuleUnloadFinished(_ _);
                ModuleAttachedToAssembly(_ _);
                ClassLoadStarted(_);
                ClassLoadFinished(_ _);
                ClassUnloadStarted(_);
                ClassUnloadFinished(_ _);
                FunctionUnloadStarted(_);
                JITCompilationStarted(_ _);
                JITCompilationFinished(_ _ _);
                JITCachedFunctionSearchStarted(_ (&mut out_bool));
                JITCachedFunctionSearchFinished(_ _);
                JITFunctionPitched(_);
                JITInlining(_ _ (&mut out_bool));
                ThreadCreated(_);
                ThreadDestroyed(_);
                ThreadAssignedToOSThread(_ _);
                RemotingClientInvocationStarted();
                RemotingClientSendingMessage(_ _);
                RemotingClientReceivingReply(_ _);
                RemotingClientInvocationFinished();
                RemotingServerReceivingMessage(_ _);
                RemotingServerInvocationStarted();
                RemotingServerInvocationReturned();
                RemotingServerSendingReply(_ _);
                UnmanagedToManagedTransition(_ _);
                ManagedToUnmanagedTransition(_ _);
                RuntimeSuspendStarted(_);
                RuntimeSuspendFinished();
                RuntimeSuspendAborted();
                RuntimeResumeStarted();
                RuntimeResumeFinished();
                RuntimeThreadSuspended(_);
                RuntimeThreadResumed(_);
                MovedReferences(_ _ _ _);
                ObjectAllocated(_ _);
                ObjectsAllocatedByClass(_ _ _);
                ObjectReferences(_ _ _ _);
                RootReferences(_ _);
                ExceptionThrown(_);
                ExceptionSearchFunctionEnter(_);
                ExceptionSearchFunctionLeave();
                ExceptionSearchFilterEnter(_);
                ExceptionSearchFilterLeave();
                ExceptionSearchCatcherFound(_);
                ExceptionOSHandlerEnter(_);
                ExceptionOSHandlerLeave(_);
                ExceptionUnwindFunctionEnter(_);
                ExceptionUnwindFunctionLeave();
                ExceptionUnwindFinallyEnter(_);
                ExceptionUnwindFinallyLeave();
                ExceptionCatcherEnter(_ _);
                ExceptionCatcherLeave();
                COMClassicVTableCreated(_ _ _ _);
                COMClassicVTableDestroyed(_ _ _);
                ExceptionCLRCatcherFound();
                ExceptionCLRCatcherExecute();
            }
            v2 => {
                ThreadNameChanged(_ _ _);
                GarbageCollectionStarted(_ _ _);
                SurvivingReferences(_ _ _);
                GarbageCollectionFinished();
                FinalizeableObjectQueued(_ _);
                RootReferences2(_ _ _ _ _);
                HandleCreated(_ _);
                HandleDestroyed(_);
            }
            v3 => {
                InitializeForAttach((runtime.as_raw()) _ _);
                ProfilerAttachComplete();
                ProfilerDetachSucceeded();
            }
            v4 => {
                ReJITCompilationStarted(_ _ _);
                GetReJITParameters(_ _ (control.as_raw()));
                ReJITCompilationFinished(_ _ _ _);
                ReJITError(_ _ _ _);
                MovedReferences2(_ _ _ _);
                SurvivingReferences2(_ _ _);
            }
            v5 => { ConditionalWeakTableElementReferences(_ _ _ _); }
            v6 => { GetAssemblyReferences((path.as_ptr()) (provider.as_raw())); }
            v7 => { ModuleInMemorySymbolsUpdated(_); }
            v8 => {
                DynamicMethodJITCompilationStarted(_ _ _ _);
                DynamicMethodJITCompilationFinished(_ _ _);
            }
            v9 => { DynamicMethodUnloaded(_); }
            v10 => {
                EventPipeEventDelivered(_ _ _ _ _ _ _ _ _ _ _ _);
                EventPipeProviderCreated(_);
            }
            v11 => { LoadAsNotificationOnly((&mut out_bool)); }
        }
    }
}

struct Provider;
impl ICorProfilerAssemblyReferenceProvider_Impl for Provider {}
struct Control;
impl ICorProfilerFunctionControl_Impl for Control {}

#[test]
fn a_null_this_in_every_adapter_slot_is_e_pointer_and_reaches_nothing() {
    let adapter = Adapter::new(true);
    assert_eq!(
        core::mem::size_of::<ICorProfilerCallback11_Vtbl>(),
        98 * core::mem::size_of::<usize>(),
        "3 IUnknown slots + 95 callbacks"
    );
    // SAFETY: a null `this` is the bad input under test; the thunks check
    // it before anything else.
    let results = unsafe { call_every_callback(null_mut(), &adapter.callback, &adapter.runtime) };
    assert_eq!(results.len(), 95, "every callback slot");
    let mut names: Vec<&str> = results.iter().map(|(name, _)| *name).collect();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), 95, "no slot twice");
    for (name, hr) in &results {
        assert_eq!(*hr, E_POINTER, "{name} with a null this");
    }
    assert_eq!(adapter.reached(), Vec::<String>::new());

    // The control: the same calls on the real object are dispatched (the
    // Tripwire's overrides answer E_ABORT, the others S_OK, the two
    // initializers E_UNEXPECTED since it is initialized), never E_POINTER.
    // SAFETY: the live, initialized adapter.
    let results = unsafe {
        call_every_callback(
            adapter.callback.as_raw(),
            &adapter.callback,
            &adapter.runtime,
        )
    };
    for (name, hr) in &results {
        let expected = match *name {
            "Initialize" | "InitializeForAttach" => E_UNEXPECTED,
            "JITCachedFunctionSearchStarted"
            | "JITInlining"
            | "GetReJITParameters"
            | "GetAssemblyReferences"
            | "LoadAsNotificationOnly"
            | "MovedReferences"
            | "ObjectsAllocatedByClass"
            | "ObjectReferences"
            | "RootReferences"
            | "ThreadNameChanged"
            | "GarbageCollectionStarted"
            | "SurvivingReferences"
            | "RootReferences2"
            | "MovedReferences2"
            | "SurvivingReferences2"
            | "ConditionalWeakTableElementReferences"
            | "DynamicMethodJITCompilationStarted"
            | "EventPipeEventDelivered"
            | "COMClassicVTableCreated"
            | "RemotingClientSendingMessage" => REACHED,
            _ => S_OK,
        };
        assert_eq!(*hr, expected, "{name} on the live object");
    }

    // IUnknown's slots with a null `this`.
    let raw = adapter.callback.as_raw();
    // SAFETY: slots 0..=2 of a live object's vtable; null `this` is the
    // bad input under test.
    unsafe {
        let unknown = &**(raw as *const *const IUnknown_Vtbl);
        let mut out: *mut c_void = NonNull::dangling().as_ptr();
        assert_eq!(
            (unknown.QueryInterface)(null_mut(), &ICorProfilerCallback11::IID, &mut out),
            E_POINTER
        );
        assert!(out.is_null(), "a refused QueryInterface clears *ppv");
        assert_eq!((unknown.AddRef)(null_mut()), 0);
        assert_eq!((unknown.Release)(null_mut()), 0);
    }
}

com_interface! {
    /// An interface with every kind of method that cannot return an HRESULT.
    #[iid("6A1D2C3B-4E5F-4A6B-8C7D-9E0F1A2B3C4D")]
    #[vtable(ICounted_Vtbl)]
    #[implement(ICounted_Impl)]
    pub unsafe interface ICounted: IUnknown {
        fn Count() -> u32;
        fn Real() -> f64;
        fn Name() -> *const u8;
        fn Touch();
        fn Boom() -> u32;
        fn BoomUnit();
    }
}

struct Counted;
impl ICounted_Impl for Counted {
    unsafe fn Count(&self) -> u32 {
        3
    }
    unsafe fn Real(&self) -> f64 {
        0.5
    }
    unsafe fn Name(&self) -> *const u8 {
        c"counted".as_ptr().cast::<u8>()
    }
    unsafe fn Touch(&self) {}
    unsafe fn Boom(&self) -> u32 {
        panic!("deliberate panic in a method returning u32")
    }
    unsafe fn BoomUnit(&self) {
        panic!("deliberate panic in a method returning nothing")
    }
}

/// Whether a child process ended through `std::process::abort`: SIGABRT on
/// Unix; on Windows std aborts with `__fastfail`, whose exit code is
/// `STATUS_STACK_BUFFER_OVERRUN` (0xC0000409).
fn aborted(status: &std::process::ExitStatus) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        status.signal() == Some(6)
    }
    #[cfg(windows)]
    {
        status.code() == Some(0xC000_0409_u32 as i32)
    }
    #[cfg(not(any(unix, windows)))]
    {
        !status.success()
    }
}

/// Set in the child process: which abort to provoke.
const CHILD: &str = "CORPROF_BAD_INPUT_CHILD";

/// Runs this test binary again for the one test `name`, with `CHILD=mode`,
/// and returns how it ended and its stderr.
fn run_child(name: &str, mode: &str) -> (std::process::ExitStatus, String) {
    let output = self_exec::this_test_binary()
        .args([name, "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD, mode)
        .output()
        .expect("run the test binary again");
    (
        output.status,
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[test]
#[cfg_attr(miri, ignore = "Miri cannot start the child process")]
fn a_null_this_or_a_panic_without_an_hresult_aborts_with_a_message() {
    const NAME: &str = "a_null_this_or_a_panic_without_an_hresult_aborts_with_a_message";
    const NULL_THIS: &str = "corprof: an exported COM method was called with a null `this` pointer";
    const PANICKED: &str = "corprof: a method exported to native code panicked and its return type cannot report failure; aborting";
    if let Ok(mode) = std::env::var(CHILD) {
        let object: ICounted = export(Counted);
        let this = object.as_raw();
        // SAFETY: the slots of a live ICounted, called with their declared
        // signatures; in the `null_*` modes `this` is null, the bad input
        // under test. Every mode but "none" aborts the process.
        unsafe {
            let vtable = &**(this as *const *const ICounted_Vtbl);
            assert_eq!((vtable.Count)(this), 3, "the live object works");
            assert_eq!((vtable.Real)(this), 0.5);
            assert!(!(vtable.Name)(this).is_null());
            (vtable.Touch)(this);
            match mode.as_str() {
                "null_u32" => drop((vtable.Count)(null_mut())),
                "null_f64" => drop((vtable.Real)(null_mut())),
                "null_ptr" => drop((vtable.Name)(null_mut())),
                "null_unit" => (vtable.Touch)(null_mut()),
                "panic_u32" => drop((vtable.Boom)(this)),
                "panic_unit" => (vtable.BoomUnit)(this),
                _ => return,
            };
        }
        unreachable!("the call above aborts the process");
    }
    for (mode, message) in [
        ("null_u32", NULL_THIS),
        ("null_f64", NULL_THIS),
        ("null_ptr", NULL_THIS),
        ("null_unit", NULL_THIS),
        ("panic_u32", PANICKED),
        ("panic_unit", PANICKED),
    ] {
        let (status, stderr) = run_child(NAME, mode);
        assert!(
            aborted(&status),
            "{mode}: an abort, not a segfault or an unwind ({status:?}):\n{stderr}"
        );
        assert!(
            stderr.contains(message),
            "{mode}: the message comes first:\n{stderr}"
        );
    }
    // The control: the child itself runs fine when asked for no abort.
    let (status, stderr) = run_child(NAME, "none");
    assert!(status.success(), "{status:?}\n{stderr}");
}

// ---------------------------------------------------------------------------
// (b) Null out-pointers.
// ---------------------------------------------------------------------------

static CONSTRUCTED: AtomicUsize = AtomicUsize::new(0);

fn construct() -> Tripwire {
    CONSTRUCTED.fetch_add(1, Ordering::SeqCst);
    Tripwire::default()
}

corprof::profiler!(Tripwire, "5B0C7E21-9A4D-4F36-8E15-2D7C6B9A0F43", construct);

#[test]
fn dll_get_class_object_and_create_instance_refuse_null_pointers() {
    let mut out: *mut c_void = NonNull::dangling().as_ptr();
    // SAFETY: the exported entry points, called with valid or null
    // pointers as the runtime might.
    unsafe {
        assert_eq!(
            DllGetClassObject(&CORPROF_CLSID, null(), &mut out),
            E_POINTER
        );
        assert!(out.is_null(), "*ppv is cleared first");
        assert_eq!(
            DllGetClassObject(&CORPROF_CLSID, &IClassFactory::IID, null_mut()),
            E_POINTER
        );
        assert_eq!(DllGetClassObject(null(), null(), null_mut()), E_POINTER);

        assert_eq!(
            DllGetClassObject(&CORPROF_CLSID, &IClassFactory::IID, &mut out),
            S_OK
        );
        let factory = IClassFactory::from_raw(out).unwrap();
        let before = CONSTRUCTED.load(Ordering::SeqCst);
        let mut object: *mut c_void = NonNull::dangling().as_ptr();
        assert_eq!(
            factory.CreateInstance(null_mut(), null(), &mut object),
            E_POINTER
        );
        assert!(object.is_null());
        assert_eq!(
            factory.CreateInstance(null_mut(), &ICorProfilerCallback11::IID, null_mut()),
            E_POINTER
        );
        assert_eq!(
            CONSTRUCTED.load(Ordering::SeqCst),
            before,
            "no profiler is constructed for a call that is refused"
        );
        // And QueryInterface of the factory with a null out-pointer.
        let unknown = &**(factory.as_raw() as *const *const IUnknown_Vtbl);
        assert_eq!(
            (unknown.QueryInterface)(factory.as_raw(), &IUnknown::IID, null_mut()),
            E_POINTER
        );
        // A good call still works afterwards.
        assert_eq!(
            factory.CreateInstance(null_mut(), &ICorProfilerCallback11::IID, &mut object),
            S_OK
        );
        assert_eq!(CONSTRUCTED.load(Ordering::SeqCst), before + 1);
        drop(ICorProfilerCallback11::from_raw(object));
    }
}

#[test]
fn the_adapters_query_interface_refuses_null_arguments() {
    let adapter = Adapter::new(false);
    let raw = adapter.callback.as_raw();
    // SAFETY: slot 0 of the live adapter; null arguments under test.
    unsafe {
        let unknown = &**(raw as *const *const IUnknown_Vtbl);
        assert_eq!(
            (unknown.QueryInterface)(raw, &ICorProfilerCallback3::IID, null_mut()),
            E_POINTER
        );
        let mut out: *mut c_void = NonNull::dangling().as_ptr();
        assert_eq!((unknown.QueryInterface)(raw, null(), &mut out), E_POINTER);
        assert!(out.is_null());
    }
}

#[test]
fn out_parameter_callbacks_refuse_null_and_misaligned_pointers_before_asking() {
    let adapter = Adapter::new(false);
    let cb = &adapter.callback;
    let word: [BOOL; 2] = [7, 7];
    let bad = misaligned(word.as_ptr());
    // SAFETY: null and misaligned out-pointers are the bad input; the
    // adapter refuses them without writing.
    unsafe {
        // LoadAsNotificationOnly is asked before Initialize.
        assert_eq!(cb.LoadAsNotificationOnly(null_mut()), E_POINTER);
        assert_eq!(cb.LoadAsNotificationOnly(bad), E_POINTER);
        assert_eq!(adapter.reached(), Vec::<String>::new());
        let mut out: BOOL = 7;
        assert_eq!(cb.LoadAsNotificationOnly(&mut out), REACHED);
        assert_eq!(out, 7, "an error leaves the out-parameter alone");
        assert_eq!(adapter.reached(), ["load_as_notification_only"]);

        assert_eq!(cb.Initialize(adapter.runtime.as_raw()), S_OK);
        for pointer in [null_mut(), bad] {
            assert_eq!(cb.JITInlining(F, F, pointer), E_POINTER);
            assert_eq!(cb.JITCachedFunctionSearchStarted(F, pointer), E_POINTER);
        }
        assert_eq!(
            adapter.reached(),
            Vec::<String>::new(),
            "the profiler was not asked"
        );
        assert_eq!(cb.JITInlining(F, F, &mut out), REACHED);
        assert_eq!(cb.JITCachedFunctionSearchStarted(F, &mut out), REACHED);
        assert_eq!(out, 7);
        assert_eq!(
            adapter.reached(),
            ["jit_inlining", "jit_cached_function_search_started"]
        );
    }
    assert_eq!(word, [7, 7], "the misaligned pointer was never written");
}

// ---------------------------------------------------------------------------
// (c) Null, misaligned and inconsistent arrays and strings.
// ---------------------------------------------------------------------------

#[test]
fn every_array_callback_refuses_a_null_or_misaligned_array_with_a_count() {
    let adapter = Adapter::new(true);
    let cb = &adapter.callback;
    let ids = [fake_id!(ObjectID, 1), fake_id!(ObjectID, 2)];
    let u32s = [1u32, 2];
    let usizes = [1usize, 2];
    let classes = [fake_id!(ClassID, 1), fake_id!(ClassID, 2)];
    let bools: [BOOL; 2] = [TRUE, FALSE];
    let kinds = [COR_PRF_GC_ROOT_STACK; 2];
    let flags = [COR_PRF_GC_ROOT_PINNING; 2];
    let handles = [fake_id!(GCHandleID, 1), fake_id!(GCHandleID, 2)];
    let bytes = [0x02u8, 0x2A];
    let name: Vec<u16> = "worker".encode_utf16().collect();

    let o = ids.as_ptr() as *mut ObjectID;
    let (u, z) = (u32s.as_ptr() as *mut u32, usizes.as_ptr() as *mut usize);
    let c = classes.as_ptr() as *mut ClassID;
    let b = bools.as_ptr() as *mut BOOL;
    let (k, f) = (kinds.as_ptr() as *mut _, flags.as_ptr() as *mut _);
    let h = handles.as_ptr() as *mut GCHandleID;
    let (no, nu, nz, nc, nb) = (null_mut(), null_mut(), null_mut(), null_mut(), null_mut());
    let (mo, mu, mz) = (misaligned(o), misaligned(u), misaligned(z));

    // SAFETY: every call passes live arrays of two elements except the one
    // bad pointer under test, which the adapter must refuse unread.
    let refused = unsafe {
        [
            ("MovedReferences old", cb.MovedReferences(2, no, o, u)),
            ("MovedReferences new", cb.MovedReferences(2, o, no, u)),
            ("MovedReferences lengths", cb.MovedReferences(2, o, o, nu)),
            (
                "MovedReferences misaligned",
                cb.MovedReferences(2, o, mo, u),
            ),
            (
                "ObjectsAllocatedByClass classes",
                cb.ObjectsAllocatedByClass(2, nc, u),
            ),
            (
                "ObjectsAllocatedByClass counts",
                cb.ObjectsAllocatedByClass(2, c, nu),
            ),
            (
                "ObjectsAllocatedByClass misaligned",
                cb.ObjectsAllocatedByClass(2, c, mu),
            ),
            (
                "ObjectReferences",
                cb.ObjectReferences(ObjectID::from_raw(1), ClassID::from_raw(1), 2, no),
            ),
            (
                "ObjectReferences misaligned",
                cb.ObjectReferences(ObjectID::from_raw(1), ClassID::from_raw(1), 2, mo),
            ),
            ("RootReferences", cb.RootReferences(2, no)),
            ("RootReferences u32::MAX", cb.RootReferences(u32::MAX, no)),
            (
                "ThreadNameChanged",
                cb.ThreadNameChanged(ThreadID::from_raw(1), 6, null_mut()),
            ),
            (
                "ThreadNameChanged misaligned",
                cb.ThreadNameChanged(ThreadID::from_raw(1), 6, misaligned(name.as_ptr())),
            ),
            (
                "GarbageCollectionStarted",
                cb.GarbageCollectionStarted(2, nb, COR_PRF_GC_INDUCED),
            ),
            (
                "GarbageCollectionStarted misaligned",
                cb.GarbageCollectionStarted(2, misaligned(b), COR_PRF_GC_INDUCED),
            ),
            (
                "SurvivingReferences starts",
                cb.SurvivingReferences(2, no, u),
            ),
            (
                "SurvivingReferences lengths",
                cb.SurvivingReferences(2, o, nu),
            ),
            ("RootReferences2 roots", cb.RootReferences2(2, no, k, f, z)),
            (
                "RootReferences2 kinds",
                cb.RootReferences2(2, o, null_mut(), f, z),
            ),
            (
                "RootReferences2 flags",
                cb.RootReferences2(2, o, k, null_mut(), z),
            ),
            ("RootReferences2 ids", cb.RootReferences2(2, o, k, f, nz)),
            (
                "RootReferences2 misaligned",
                cb.RootReferences2(2, o, k, f, mz),
            ),
            ("MovedReferences2 old", cb.MovedReferences2(2, no, o, z)),
            ("MovedReferences2 new", cb.MovedReferences2(2, o, no, z)),
            ("MovedReferences2 lengths", cb.MovedReferences2(2, o, o, nz)),
            (
                "MovedReferences2 misaligned",
                cb.MovedReferences2(2, o, o, mz),
            ),
            (
                "SurvivingReferences2 starts",
                cb.SurvivingReferences2(2, no, z),
            ),
            (
                "SurvivingReferences2 lengths",
                cb.SurvivingReferences2(2, o, nz),
            ),
            (
                "CWT keys",
                cb.ConditionalWeakTableElementReferences(2, no, o, h),
            ),
            (
                "CWT values",
                cb.ConditionalWeakTableElementReferences(2, o, no, h),
            ),
            (
                "CWT handles",
                cb.ConditionalWeakTableElementReferences(2, o, o, null_mut()),
            ),
            (
                "CWT misaligned",
                cb.ConditionalWeakTableElementReferences(2, o, o, misaligned(h)),
            ),
            (
                "DynamicMethodJITCompilationStarted",
                cb.DynamicMethodJITCompilationStarted(F, TRUE, null(), 2),
            ),
            (
                "EventPipe metadata",
                cb.EventPipeEventDelivered(
                    EVENTPIPE_PROVIDER::from_raw(1),
                    1,
                    1,
                    2,
                    null(),
                    2,
                    bytes.as_ptr(),
                    null(),
                    null(),
                    ThreadID::from_raw(1),
                    2,
                    z,
                ),
            ),
            (
                "EventPipe data",
                cb.EventPipeEventDelivered(
                    EVENTPIPE_PROVIDER::from_raw(1),
                    1,
                    1,
                    2,
                    bytes.as_ptr(),
                    2,
                    null(),
                    null(),
                    null(),
                    ThreadID::from_raw(1),
                    2,
                    z,
                ),
            ),
            (
                "EventPipe stack",
                cb.EventPipeEventDelivered(
                    EVENTPIPE_PROVIDER::from_raw(1),
                    1,
                    1,
                    2,
                    bytes.as_ptr(),
                    2,
                    bytes.as_ptr(),
                    null(),
                    null(),
                    ThreadID::from_raw(1),
                    2,
                    nz,
                ),
            ),
            (
                "EventPipe misaligned stack",
                cb.EventPipeEventDelivered(
                    EVENTPIPE_PROVIDER::from_raw(1),
                    1,
                    1,
                    2,
                    bytes.as_ptr(),
                    2,
                    bytes.as_ptr(),
                    null(),
                    null(),
                    ThreadID::from_raw(1),
                    2,
                    mz,
                ),
            ),
        ]
    };
    for (what, hr) in refused {
        assert_eq!(hr, E_POINTER, "{what}");
    }
    assert_eq!(
        adapter.reached(),
        Vec::<String>::new(),
        "the profiler saw none of them"
    );

    // A negative generation count is an invalid argument, not a huge one.
    // SAFETY: the count is refused before the pointer is looked at.
    let hr = unsafe { cb.GarbageCollectionStarted(-1, b, COR_PRF_GC_INDUCED) };
    assert_eq!(hr, E_INVALIDARG);
    assert_eq!(adapter.reached(), Vec::<String>::new());

    // The control: the same calls with every array valid reach the profiler.
    // SAFETY: live arrays of two elements.
    unsafe {
        assert_eq!(cb.MovedReferences(2, o, o, u), REACHED);
        assert_eq!(cb.RootReferences2(2, o, k, f, z), REACHED);
        assert_eq!(
            cb.ConditionalWeakTableElementReferences(2, o, o, h),
            REACHED
        );
        assert_eq!(
            cb.GarbageCollectionStarted(2, b, COR_PRF_GC_INDUCED),
            REACHED
        );
        assert_eq!(
            cb.ThreadNameChanged(ThreadID::from_raw(1), 6, name.as_ptr() as *mut u16),
            REACHED
        );
    }
    assert_eq!(
        adapter.reached(),
        [
            "moved_references",
            "root_references2",
            "conditional_weak_table_element_references",
            "garbage_collection_started",
            "thread_name_changed \"worker\"",
        ]
    );
}

#[test]
fn interface_and_string_arguments_refuse_null_and_misaligned_pointers() {
    let adapter = Adapter::new(true);
    let cb = &adapter.callback;
    let path: Vec<u16> = "/app.dll".encode_utf16().chain([0]).collect();
    let provider: ICorProfilerAssemblyReferenceProvider = export(Provider);
    // SAFETY: null or misaligned pointers under test, live objects otherwise.
    unsafe {
        assert_eq!(
            cb.GetAssemblyReferences(null(), provider.as_raw()),
            E_POINTER
        );
        assert_eq!(
            cb.GetAssemblyReferences(misaligned(path.as_ptr()), provider.as_raw()),
            E_POINTER
        );
        assert_eq!(
            cb.GetAssemblyReferences(path.as_ptr(), null_mut()),
            E_POINTER
        );
        assert_eq!(cb.GetReJITParameters(M, METHOD, null_mut()), E_POINTER);
    }
    assert_eq!(adapter.reached(), Vec::<String>::new());
}

#[test]
fn misaligned_optional_guids_are_treated_as_absent() {
    let adapter = Adapter::new(true);
    let cb = &adapter.callback;
    let guids = [GUID::from_u128(1), GUID::from_u128(2)];
    let bad = misaligned(guids.as_ptr());
    let bytes = [0u8; 4];
    // SAFETY: misaligned GUID pointers under test (never read); the rest
    // are live locals.
    unsafe {
        assert_eq!(cb.RemotingClientSendingMessage(bad, TRUE), REACHED);
        assert_eq!(
            cb.COMClassicVTableCreated(ClassID::from_raw(1), bad, null_mut(), 3),
            REACHED
        );
        let hr = cb.EventPipeEventDelivered(
            EVENTPIPE_PROVIDER::from_raw(1),
            1,
            1,
            0,
            bytes.as_ptr(),
            0,
            null(),
            bad,
            guids.as_ptr(),
            ThreadID::from_raw(1),
            0,
            null_mut(),
        );
        assert_eq!(hr, REACHED);
    }
    assert_eq!(
        adapter.reached(),
        [
            "remoting_client_sending_message cookie=false",
            "com_classic_vtable_created iid=false",
            "event_pipe_event_delivered activity=false related=true",
        ]
    );
}

#[test]
fn initialize_for_attach_with_bad_client_data_leaves_the_adapter_uninitialized() {
    let adapter = Adapter::new(false);
    let cb = &adapter.callback;
    // SAFETY: a null client-data pointer with a non-zero size, under test.
    let hr = unsafe { cb.InitializeForAttach(adapter.runtime.as_raw(), null_mut(), 5) };
    assert_eq!(hr, E_POINTER);
    assert_eq!(adapter.reached(), Vec::<String>::new());
    // SAFETY: before any successful initialization, no callback is
    // dispatched; then a good InitializeForAttach works.
    unsafe {
        assert_eq!(
            cb.JITInlining(F, F, &mut 7),
            E_UNEXPECTED,
            "still uninitialized"
        );
        let data = [1u8, 2, 3];
        assert_eq!(
            cb.InitializeForAttach(adapter.runtime.as_raw(), data.as_ptr() as *mut c_void, 3),
            S_OK
        );
    }
    assert_eq!(adapter.reached(), ["initialize_for_attach 3"]);
}

#[test]
fn the_adapter_type_is_usable_directly() {
    // ProfilerCallback<P> over the same bad input, without the macro.
    let adapter = Arc::new(ProfilerCallback::new(Tripwire::default()));
    let callback: ICorProfilerCallback11 = export_arc(adapter.clone());
    // SAFETY: a null IUnknown and a stranger are the bad input.
    unsafe {
        assert_eq!(callback.Initialize(null_mut()), E_POINTER);
        let stranger: IUnknown = export(Stranger);
        assert_eq!(callback.Initialize(stranger.as_raw()), E_NOINTERFACE);
    }
    assert!(
        adapter.info().is_none(),
        "failed initializations store nothing"
    );
}

/// The thread handle the fake runtime hands out: an address without
/// provenance (Miri's strict provenance refuses an integer cast), never
/// dereferenced.
fn fake_handle() -> HANDLE {
    core::ptr::null_mut::<c_void>().wrapping_byte_add(0x7EAD0)
}
