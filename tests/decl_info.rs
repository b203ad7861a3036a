//! ICorProfilerInfo .. ICorProfilerInfo15: slot counts, IIDs and vtable
//! order checked against numbers transcribed independently from the
//! runtime's corprof.idl, and a Rust test double exported and called back
//! through the generated invokers.
#![allow(missing_docs, non_snake_case)]

mod common;

use common::ids::fake_id;

use common::vtable::slot;
use core::ffi::c_void;
use core::mem::{offset_of, size_of};
use core::ptr::{null, null_mut};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use corprof::metadata::*;
use corprof::profiling::*;
use corprof::*;

const PTR: usize = size_of::<usize>();

/// `(NAME, SLOTS, IID)` per interface: SLOTS = IUnknown's 3 + the methods the
/// IDL declares in the interface and all its ancestors (own counts 33, 21,
/// 14, 10, 2, 1, 3, 3, 3, 6, 2, 7, 3, 3, 1); IIDs from the IDL's `uuid(...)`.
fn expected() -> [(&'static str, usize, GUID); 15] {
    [
        (
            "ICorProfilerInfo",
            36,
            GUID::from_u128(0x28B5557D_3F3F_48B4_90B2_5F9EEA2F6C48),
        ),
        (
            "ICorProfilerInfo2",
            57,
            GUID::from_u128(0xCC0935CD_A518_487D_B0BB_A93214E65478),
        ),
        (
            "ICorProfilerInfo3",
            71,
            GUID::from_u128(0xB555ED4F_452A_4E54_8B39_B5360BAD32A0),
        ),
        (
            "ICorProfilerInfo4",
            81,
            GUID::from_u128(0x0D8FDCAA_6257_47BF_B1BF_94DAC88466EE),
        ),
        (
            "ICorProfilerInfo5",
            83,
            GUID::from_u128(0x07602928_CE38_4B83_81E7_74ADAF781214),
        ),
        (
            "ICorProfilerInfo6",
            84,
            GUID::from_u128(0xF30A070D_BFFB_46A7_B1D8_8781EF7B698A),
        ),
        (
            "ICorProfilerInfo7",
            87,
            GUID::from_u128(0x9AEECC0D_63E0_4187_8C00_E312F503F663),
        ),
        (
            "ICorProfilerInfo8",
            90,
            GUID::from_u128(0xC5AC80A6_782E_4716_8044_39598C60CFBF),
        ),
        (
            "ICorProfilerInfo9",
            93,
            GUID::from_u128(0x008170DB_F8CC_4796_9A51_DC8AA0B47012),
        ),
        (
            "ICorProfilerInfo10",
            99,
            GUID::from_u128(0x2F1B5152_C869_40C9_AA5F_3ABE026BD720),
        ),
        (
            "ICorProfilerInfo11",
            101,
            GUID::from_u128(0x06398876_8987_4154_B621_40A00D6E4D04),
        ),
        (
            "ICorProfilerInfo12",
            108,
            GUID::from_u128(0x27B24CCD_1CB1_47C5_96EE_98190DC30959),
        ),
        (
            "ICorProfilerInfo13",
            111,
            GUID::from_u128(0x6E6C7EE2_0701_4EC2_9D29_2E8733B66934),
        ),
        (
            "ICorProfilerInfo14",
            114,
            GUID::from_u128(0xF460E352_D76D_4FE9_835F_F6AF9D6E862D),
        ),
        (
            "ICorProfilerInfo15",
            115,
            GUID::from_u128(0xB446462D_BD22_41DD_872D_DC714C49EB56),
        ),
    ]
}

fn declared<I: Interface>() -> (&'static str, usize, GUID, usize) {
    (I::NAME, I::SLOTS, I::IID, size_of::<I::Vtable>())
}

#[test]
fn slot_counts_and_iids_match_the_idl() {
    let declared = [
        declared::<ICorProfilerInfo>(),
        declared::<ICorProfilerInfo2>(),
        declared::<ICorProfilerInfo3>(),
        declared::<ICorProfilerInfo4>(),
        declared::<ICorProfilerInfo5>(),
        declared::<ICorProfilerInfo6>(),
        declared::<ICorProfilerInfo7>(),
        declared::<ICorProfilerInfo8>(),
        declared::<ICorProfilerInfo9>(),
        declared::<ICorProfilerInfo10>(),
        declared::<ICorProfilerInfo11>(),
        declared::<ICorProfilerInfo12>(),
        declared::<ICorProfilerInfo13>(),
        declared::<ICorProfilerInfo14>(),
        declared::<ICorProfilerInfo15>(),
    ];
    for ((name, slots, iid, vtable_size), (e_name, e_slots, e_iid)) in
        declared.into_iter().zip(expected())
    {
        assert_eq!(name, e_name);
        assert_eq!(slots, e_slots, "{name}: slot count");
        assert_eq!(vtable_size, e_slots * PTR, "{name}: vtable size");
        assert_eq!(iid, e_iid, "{name}: IID");
    }
}

#[test]
fn deep_slots_sit_at_their_idl_index() {
    let cases: &[(&str, usize, usize)] = &[
        (
            "GetFunctionInfo",
            offset_of!(ICorProfilerInfo_Vtbl, GetFunctionInfo),
            15,
        ),
        (
            "SetEventMask",
            offset_of!(ICorProfilerInfo_Vtbl, SetEventMask),
            16,
        ),
        (
            "SetEnterLeaveFunctionHooks",
            offset_of!(ICorProfilerInfo_Vtbl, SetEnterLeaveFunctionHooks),
            17,
        ),
        (
            "GetModuleMetaData",
            offset_of!(ICorProfilerInfo_Vtbl, GetModuleMetaData),
            21,
        ),
        (
            "GetILFunctionBody",
            offset_of!(ICorProfilerInfo_Vtbl, GetILFunctionBody),
            22,
        ),
        (
            "SetILFunctionBody",
            offset_of!(ICorProfilerInfo_Vtbl, SetILFunctionBody),
            24,
        ),
        (
            "GetILToNativeMapping",
            offset_of!(ICorProfilerInfo_Vtbl, GetILToNativeMapping),
            35,
        ),
        (
            "DoStackSnapshot",
            offset_of!(ICorProfilerInfo2_Vtbl, DoStackSnapshot),
            36,
        ),
        (
            "GetFunctionInfo2",
            offset_of!(ICorProfilerInfo2_Vtbl, GetFunctionInfo2),
            38,
        ),
        (
            "GetNotifiedExceptionClauseInfo",
            offset_of!(ICorProfilerInfo2_Vtbl, GetNotifiedExceptionClauseInfo),
            56,
        ),
        (
            "SetEnterLeaveFunctionHooks3WithInfo",
            offset_of!(ICorProfilerInfo3_Vtbl, SetEnterLeaveFunctionHooks3WithInfo),
            62,
        ),
        (
            "GetRuntimeInformation",
            offset_of!(ICorProfilerInfo3_Vtbl, GetRuntimeInformation),
            67,
        ),
        (
            "RequestReJIT",
            offset_of!(ICorProfilerInfo4_Vtbl, RequestReJIT),
            73,
        ),
        (
            "GetObjectSize2",
            offset_of!(ICorProfilerInfo4_Vtbl, GetObjectSize2),
            80,
        ),
        (
            "GetEventMask2",
            offset_of!(ICorProfilerInfo5_Vtbl, GetEventMask2),
            81,
        ),
        (
            "SetEventMask2",
            offset_of!(ICorProfilerInfo5_Vtbl, SetEventMask2),
            82,
        ),
        (
            "GetDynamicFunctionInfo",
            offset_of!(ICorProfilerInfo8_Vtbl, GetDynamicFunctionInfo),
            89,
        ),
        (
            "RequestReJITWithInliners",
            offset_of!(ICorProfilerInfo10_Vtbl, RequestReJITWithInliners),
            96,
        ),
        (
            "EventPipeAddProviderToSession",
            offset_of!(ICorProfilerInfo12_Vtbl, EventPipeAddProviderToSession),
            102,
        ),
        (
            "EventPipeWriteEvent",
            offset_of!(ICorProfilerInfo12_Vtbl, EventPipeWriteEvent),
            107,
        ),
        (
            "EventPipeCreateProvider2",
            offset_of!(ICorProfilerInfo14_Vtbl, EventPipeCreateProvider2),
            113,
        ),
        (
            "EnumerateGCHeapObjects",
            offset_of!(ICorProfilerInfo15_Vtbl, EnumerateGCHeapObjects),
            114,
        ),
    ];
    for &(name, offset, slot) in cases {
        assert_eq!(offset, slot * PTR, "{name} should be slot {slot}");
    }
}

/// Every own method of every interface, in the IDL's order: each must sit
/// right after the previous one, the first right after the parent's table.
macro_rules! assert_order {
    ($($vtbl:ident: [$($method:ident),* $(,)?];)*) => {{
        let mut checked = 0;
        $(
            let mut expected = size_of::<<$vtbl as HasBase>::Base>();
            $(
                assert_eq!(
                    offset_of!($vtbl, $method),
                    expected,
                    concat!(stringify!($vtbl), "::", stringify!($method), " is out of order")
                );
                expected += PTR;
                checked += 1;
            )*
            assert_eq!(expected, size_of::<$vtbl>(), concat!(stringify!($vtbl), " has methods the IDL lacks"));
        )*
        checked
    }};
}

trait HasBase {
    type Base;
}
macro_rules! has_base {
    ($($vtbl:ident => $base:ty;)*) => {$(
        impl HasBase for $vtbl {
            type Base = $base;
        }
    )*};
}
has_base! {
    ICorProfilerInfo_Vtbl => IUnknown_Vtbl;
    ICorProfilerInfo2_Vtbl => ICorProfilerInfo_Vtbl;
    ICorProfilerInfo3_Vtbl => ICorProfilerInfo2_Vtbl;
    ICorProfilerInfo4_Vtbl => ICorProfilerInfo3_Vtbl;
    ICorProfilerInfo5_Vtbl => ICorProfilerInfo4_Vtbl;
    ICorProfilerInfo6_Vtbl => ICorProfilerInfo5_Vtbl;
    ICorProfilerInfo7_Vtbl => ICorProfilerInfo6_Vtbl;
    ICorProfilerInfo8_Vtbl => ICorProfilerInfo7_Vtbl;
    ICorProfilerInfo9_Vtbl => ICorProfilerInfo8_Vtbl;
    ICorProfilerInfo10_Vtbl => ICorProfilerInfo9_Vtbl;
    ICorProfilerInfo11_Vtbl => ICorProfilerInfo10_Vtbl;
    ICorProfilerInfo12_Vtbl => ICorProfilerInfo11_Vtbl;
    ICorProfilerInfo13_Vtbl => ICorProfilerInfo12_Vtbl;
    ICorProfilerInfo14_Vtbl => ICorProfilerInfo13_Vtbl;
    ICorProfilerInfo15_Vtbl => ICorProfilerInfo14_Vtbl;
}

#[test]
fn every_method_is_in_idl_order() {
    let checked = assert_order! {
        ICorProfilerInfo_Vtbl: [
            GetClassFromObject,
            GetClassFromToken,
            GetCodeInfo,
            GetEventMask,
            GetFunctionFromIP,
            GetFunctionFromToken,
            GetHandleFromThread,
            GetObjectSize,
            IsArrayClass,
            GetThreadInfo,
            GetCurrentThreadID,
            GetClassIDInfo,
            GetFunctionInfo,
            SetEventMask,
            SetEnterLeaveFunctionHooks,
            SetFunctionIDMapper,
            GetTokenAndMetaDataFromFunction,
            GetModuleInfo,
            GetModuleMetaData,
            GetILFunctionBody,
            GetILFunctionBodyAllocator,
            SetILFunctionBody,
            GetAppDomainInfo,
            GetAssemblyInfo,
            SetFunctionReJIT,
            ForceGC,
            SetILInstrumentedCodeMap,
            GetInprocInspectionInterface,
            GetInprocInspectionIThisThread,
            GetThreadContext,
            BeginInprocDebugging,
            EndInprocDebugging,
            GetILToNativeMapping,
        ];
        ICorProfilerInfo2_Vtbl: [
            DoStackSnapshot,
            SetEnterLeaveFunctionHooks2,
            GetFunctionInfo2,
            GetStringLayout,
            GetClassLayout,
            GetClassIDInfo2,
            GetCodeInfo2,
            GetClassFromTokenAndTypeArgs,
            GetFunctionFromTokenAndTypeArgs,
            EnumModuleFrozenObjects,
            GetArrayObjectInfo,
            GetBoxClassLayout,
            GetThreadAppDomain,
            GetRVAStaticAddress,
            GetAppDomainStaticAddress,
            GetThreadStaticAddress,
            GetContextStaticAddress,
            GetStaticFieldInfo,
            GetGenerationBounds,
            GetObjectGeneration,
            GetNotifiedExceptionClauseInfo,
        ];
        ICorProfilerInfo3_Vtbl: [
            EnumJITedFunctions,
            RequestProfilerDetach,
            SetFunctionIDMapper2,
            GetStringLayout2,
            SetEnterLeaveFunctionHooks3,
            SetEnterLeaveFunctionHooks3WithInfo,
            GetFunctionEnter3Info,
            GetFunctionLeave3Info,
            GetFunctionTailcall3Info,
            EnumModules,
            GetRuntimeInformation,
            GetThreadStaticAddress2,
            GetAppDomainsContainingModule,
            GetModuleInfo2,
        ];
        ICorProfilerInfo4_Vtbl: [
            EnumThreads,
            InitializeCurrentThread,
            RequestReJIT,
            RequestRevert,
            GetCodeInfo3,
            GetFunctionFromIP2,
            GetReJITIDs,
            GetILToNativeMapping2,
            EnumJITedFunctions2,
            GetObjectSize2,
        ];
        ICorProfilerInfo5_Vtbl: [
            GetEventMask2,
            SetEventMask2,
        ];
        ICorProfilerInfo6_Vtbl: [
            EnumNgenModuleMethodsInliningThisMethod,
        ];
        ICorProfilerInfo7_Vtbl: [
            ApplyMetaData,
            GetInMemorySymbolsLength,
            ReadInMemorySymbols,
        ];
        ICorProfilerInfo8_Vtbl: [
            IsFunctionDynamic,
            GetFunctionFromIP3,
            GetDynamicFunctionInfo,
        ];
        ICorProfilerInfo9_Vtbl: [
            GetNativeCodeStartAddresses,
            GetILToNativeMapping3,
            GetCodeInfo4,
        ];
        ICorProfilerInfo10_Vtbl: [
            EnumerateObjectReferences,
            IsFrozenObject,
            GetLOHObjectSizeThreshold,
            RequestReJITWithInliners,
            SuspendRuntime,
            ResumeRuntime,
        ];
        ICorProfilerInfo11_Vtbl: [
            GetEnvironmentVariable,
            SetEnvironmentVariable,
        ];
        ICorProfilerInfo12_Vtbl: [
            EventPipeStartSession,
            EventPipeAddProviderToSession,
            EventPipeStopSession,
            EventPipeCreateProvider,
            EventPipeGetProviderInfo,
            EventPipeDefineEvent,
            EventPipeWriteEvent,
        ];
        ICorProfilerInfo13_Vtbl: [
            CreateHandle,
            DestroyHandle,
            GetObjectIDFromHandle,
        ];
        ICorProfilerInfo14_Vtbl: [
            EnumerateNonGCObjects,
            GetNonGCHeapBounds,
            EventPipeCreateProvider2,
        ];
        ICorProfilerInfo15_Vtbl: [
            EnumerateGCHeapObjects,
        ];
    };
    assert_eq!(checked, 112);
}

// ---------------------------------------------------------------------------
// A test double: a Rust object that plays the runtime's side.

const FUNCTION: FunctionID = fake_id!(FunctionID, 0xF00D);
const CLASS: ClassID = fake_id!(ClassID, 0xC1A55);
const MODULE: ModuleID = fake_id!(ModuleID, 0x40D);
const TOKEN: mdToken = mdToken(0x0600_002A);
/// A tiny-format IL header (`(size << 2) | 2`) followed by `ret`.
static IL_BODY: [BYTE; 2] = [(1 << 2) | 2, 0x2A];

#[derive(Default)]
struct FakeRuntime {
    event_mask: AtomicU32,
    event_mask_high: AtomicU32,
    session_keywords: AtomicU64,
    session_level: AtomicU32,
}

/// The frames the fake stack walk reports: (function, instruction pointer).
const FRAMES: [(FunctionID, UINT_PTR); 3] = [
    (fake_id!(FunctionID, 0x10), 0x1000),
    (fake_id!(FunctionID, 0), 0x2000),
    (fake_id!(FunctionID, 0x30), 0x3000),
];
/// The objects the fake heap walk reports.
const HEAP: [ObjectID; 4] = [
    fake_id!(ObjectID, 0xA0),
    fake_id!(ObjectID, 0xB0),
    fake_id!(ObjectID, 0xC0),
    fake_id!(ObjectID, 0xD0),
];

impl ICorProfilerInfo_Impl for FakeRuntime {
    unsafe fn GetFunctionInfo(
        &self,
        functionId: FunctionID,
        pClassId: *mut ClassID,
        pModuleId: *mut ModuleID,
        pToken: *mut mdToken,
    ) -> HRESULT {
        if functionId != FUNCTION {
            return E_INVALIDARG;
        }
        if pClassId.is_null() || pModuleId.is_null() || pToken.is_null() {
            return E_POINTER;
        }
        // SAFETY: checked non-null; the caller passes writable out-params.
        unsafe {
            *pClassId = CLASS;
            *pModuleId = MODULE;
            *pToken = TOKEN;
        }
        S_OK
    }

    unsafe fn SetEventMask(&self, dwEvents: DWORD) -> HRESULT {
        self.event_mask.store(dwEvents, Ordering::SeqCst);
        S_OK
    }

    unsafe fn GetEventMask(&self, pdwEvents: *mut DWORD) -> HRESULT {
        // SAFETY: the tests pass a writable DWORD.
        unsafe { *pdwEvents = self.event_mask.load(Ordering::SeqCst) };
        S_OK
    }

    unsafe fn GetILFunctionBody(
        &self,
        moduleId: ModuleID,
        methodId: mdMethodDef,
        ppMethodHeader: *mut *const BYTE,
        pcbMethodSize: *mut ULONG,
    ) -> HRESULT {
        if moduleId != MODULE || methodId.0 != TOKEN.0 {
            return E_INVALIDARG;
        }
        // SAFETY: the tests pass writable out-params.
        unsafe {
            *ppMethodHeader = IL_BODY.as_ptr();
            *pcbMethodSize = IL_BODY.len() as ULONG;
        }
        S_OK
    }
}
impl ICorProfilerInfo2_Impl for FakeRuntime {
    unsafe fn DoStackSnapshot(
        &self,
        thread: ThreadID,
        callback: Option<StackSnapshotCallback>,
        infoFlags: ULONG32,
        clientData: *mut c_void,
        context: *mut BYTE,
        contextSize: ULONG32,
    ) -> HRESULT {
        let Some(callback) = callback else {
            return E_INVALIDARG;
        };
        if !thread.is_null() || infoFlags != 0 || !context.is_null() || contextSize != 0 {
            return E_INVALIDARG;
        }
        for (function, ip) in FRAMES {
            // SAFETY: the callback is the caller's, called as the runtime
            // would: no frame info, no register context.
            let hr = unsafe {
                callback(
                    function,
                    ip,
                    COR_PRF_FRAME_INFO::from_raw(0),
                    0,
                    null_mut(),
                    clientData,
                )
            };
            if hr != S_OK {
                return hr;
            }
        }
        S_OK
    }
}
impl ICorProfilerInfo3_Impl for FakeRuntime {}
impl ICorProfilerInfo4_Impl for FakeRuntime {}
impl ICorProfilerInfo5_Impl for FakeRuntime {
    unsafe fn SetEventMask2(&self, dwEventsLow: DWORD, dwEventsHigh: DWORD) -> HRESULT {
        self.event_mask.store(dwEventsLow, Ordering::SeqCst);
        self.event_mask_high.store(dwEventsHigh, Ordering::SeqCst);
        S_OK
    }
}
impl ICorProfilerInfo6_Impl for FakeRuntime {}
impl ICorProfilerInfo7_Impl for FakeRuntime {}
impl ICorProfilerInfo8_Impl for FakeRuntime {}
impl ICorProfilerInfo9_Impl for FakeRuntime {}
impl ICorProfilerInfo10_Impl for FakeRuntime {}
impl ICorProfilerInfo11_Impl for FakeRuntime {}
impl ICorProfilerInfo12_Impl for FakeRuntime {
    unsafe fn EventPipeAddProviderToSession(
        &self,
        session: EVENTPIPE_SESSION,
        providerConfig: COR_PRF_EVENTPIPE_PROVIDER_CONFIG,
    ) -> HRESULT {
        if session != EVENTPIPE_SESSION(0x5E55_1014_0000_0001)
            || providerConfig.providerName.is_null()
        {
            return E_INVALIDARG;
        }
        self.session_keywords
            .store(providerConfig.keywords, Ordering::SeqCst);
        self.session_level
            .store(providerConfig.loggingLevel, Ordering::SeqCst);
        S_OK
    }
}
impl ICorProfilerInfo13_Impl for FakeRuntime {}
impl ICorProfilerInfo14_Impl for FakeRuntime {}
impl ICorProfilerInfo15_Impl for FakeRuntime {
    unsafe fn EnumerateGCHeapObjects(
        &self,
        callback: Option<ObjectCallback>,
        callbackState: *mut c_void,
    ) -> HRESULT {
        let Some(callback) = callback else {
            return E_INVALIDARG;
        };
        for object in HEAP {
            // SAFETY: the callback is the caller's, with its own state.
            if unsafe { callback(object, callbackState) } == FALSE {
                break;
            }
        }
        S_OK
    }
}

#[test]
fn a_rust_test_double_is_callable_through_the_invokers() {
    let info: ICorProfilerInfo15 = export::<ICorProfilerInfo15, _>(FakeRuntime::default());

    let (mut class, mut module, mut token) = (ClassID::NULL, ModuleID::NULL, mdToken(0));
    // SAFETY: valid out-pointers; the object is the test double.
    let hr = unsafe { info.GetFunctionInfo(FUNCTION, &mut class, &mut module, &mut token) };
    assert_eq!(hr, S_OK);
    assert_eq!((class, module, token), (CLASS, MODULE, TOKEN));
    // SAFETY: as above.
    let hr = unsafe {
        info.GetFunctionInfo(FunctionID::from_raw(1), &mut class, &mut module, &mut token)
    };
    assert_eq!(hr, E_INVALIDARG);

    // SAFETY: a plain value argument.
    let hr = unsafe { info.SetEventMask(0x0000_0020) };
    assert_eq!(hr, S_OK);
    let mut mask = 0;
    // SAFETY: a valid out-pointer.
    let hr = unsafe { info.GetEventMask(&mut mask) };
    assert_eq!(hr, S_OK);
    assert_eq!(mask, 0x0000_0020);

    let mut header: *const BYTE = null();
    let mut size: ULONG = 0;
    // SAFETY: valid out-pointers.
    let hr =
        unsafe { info.GetILFunctionBody(MODULE, mdMethodDef(TOKEN.0), &mut header, &mut size) };
    assert_eq!(hr, S_OK);
    assert_eq!(header, IL_BODY.as_ptr());
    assert_eq!(size, 2);

    // SAFETY: plain value arguments.
    let hr = unsafe { info.SetEventMask2(0x1, 0x2) };
    assert_eq!(hr, S_OK);
    let (mut low, mut high) = (0, 0);
    // Not overridden: the default body answers E_NOTIMPL and writes nothing.
    // SAFETY: valid out-pointers.
    let hr = unsafe { info.GetEventMask2(&mut low, &mut high) };
    assert_eq!(hr, E_NOTIMPL);
    assert_eq!((low, high), (0, 0));
    // SAFETY: no arguments.
    let hr = unsafe { info.ForceGC() };
    assert_eq!(hr, E_NOTIMPL);
    // SAFETY: the default body ignores its arguments.
    let hr = unsafe { info.EnumerateObjectReferences(ObjectID::from_raw(1), None, null_mut()) };
    assert_eq!(hr, E_NOTIMPL);
    // SAFETY: as above.
    let hr = unsafe { info.GetModuleMetaData(MODULE, 0, &IUnknown::IID, null_mut()) };
    assert_eq!(hr, E_NOTIMPL);
}

#[test]
fn the_test_double_answers_for_every_older_version() {
    let info: ICorProfilerInfo15 = export::<ICorProfilerInfo15, _>(FakeRuntime::default());

    let info3: ICorProfilerInfo3 = info
        .cast::<ICorProfilerInfo3>()
        .expect("QueryInterface(ICorProfilerInfo3)");
    // SAFETY: a plain value argument.
    let hr = unsafe { info3.SetEventMask(0x8000_0001) };
    assert_eq!(hr, S_OK);
    let (mut class, mut module, mut token) = (ClassID::NULL, ModuleID::NULL, mdToken(0));
    // SAFETY: valid out-pointers.
    let hr = unsafe { info3.GetFunctionInfo(FUNCTION, &mut class, &mut module, &mut token) };
    assert_eq!((hr, class, module, token), (S_OK, CLASS, MODULE, TOKEN));
    let (mut length_offset, mut buffer_offset) = (7, 7);
    // SAFETY: valid out-pointers.
    let hr = unsafe { info3.GetStringLayout2(&mut length_offset, &mut buffer_offset) };
    assert_eq!((hr, length_offset, buffer_offset), (E_NOTIMPL, 7, 7));

    // The mask set through ICorProfilerInfo3 is the one the object holds.
    let mut mask = 0;
    // SAFETY: a valid out-pointer.
    let hr = unsafe { info.GetEventMask(&mut mask) };
    assert_eq!(hr, S_OK);
    assert_eq!(mask, 0x8000_0001);

    // Every version of the chain answers QueryInterface, with its own IID.
    assert!(info.cast::<ICorProfilerInfo>().is_ok());
    assert!(info.cast::<ICorProfilerInfo2>().is_ok());
    assert!(info.cast::<ICorProfilerInfo4>().is_ok());
    assert!(info.cast::<ICorProfilerInfo5>().is_ok());
    assert!(info.cast::<ICorProfilerInfo6>().is_ok());
    assert!(info.cast::<ICorProfilerInfo7>().is_ok());
    assert!(info.cast::<ICorProfilerInfo8>().is_ok());
    assert!(info.cast::<ICorProfilerInfo9>().is_ok());
    assert!(info.cast::<ICorProfilerInfo10>().is_ok());
    assert!(info.cast::<ICorProfilerInfo11>().is_ok());
    assert!(info.cast::<ICorProfilerInfo12>().is_ok());
    assert!(info.cast::<ICorProfilerInfo13>().is_ok());
    assert!(info.cast::<ICorProfilerInfo14>().is_ok());
    assert!(info.cast::<ICorProfilerInfo15>().is_ok());

    // An object exported as an older version does not claim the newer ones.
    let old: ICorProfilerInfo3 = export::<ICorProfilerInfo3, _>(FakeRuntime::default());
    assert_eq!(old.cast::<ICorProfilerInfo4>().err(), Some(E_NOINTERFACE));
    assert!(old.cast::<ICorProfilerInfo2>().is_ok());
}

#[test]
fn native_callers_reach_the_right_methods_by_slot_number() {
    let info: ICorProfilerInfo15 = export::<ICorProfilerInfo15, _>(FakeRuntime::default());
    let this = info.as_raw();
    type SetEventMaskFn = unsafe extern "system" fn(*mut c_void, DWORD) -> HRESULT;
    type GetFunctionInfoFn = unsafe extern "system" fn(
        *mut c_void,
        FunctionID,
        *mut ClassID,
        *mut ModuleID,
        *mut mdToken,
    ) -> HRESULT;
    type SetEventMask2Fn = unsafe extern "system" fn(*mut c_void, DWORD, DWORD) -> HRESULT;
    type EnumerateGCHeapObjectsFn =
        unsafe extern "system" fn(*mut c_void, *const c_void, *mut c_void) -> HRESULT;
    // SAFETY: slot numbers from the IDL (16 = SetEventMask, 15 =
    // GetFunctionInfo, 82 = SetEventMask2, 114 = EnumerateGCHeapObjects), each
    // transmuted to the signature the IDL gives it.
    unsafe {
        let set_event_mask: SetEventMaskFn = core::mem::transmute(slot(this, 16));
        assert_eq!(set_event_mask(this, 0x44), S_OK);
        let get_function_info: GetFunctionInfoFn = core::mem::transmute(slot(this, 15));
        let (mut class, mut module, mut token) = (ClassID::NULL, ModuleID::NULL, mdToken(0));
        assert_eq!(
            get_function_info(this, FUNCTION, &mut class, &mut module, &mut token),
            S_OK
        );
        assert_eq!((class, module, token), (CLASS, MODULE, TOKEN));
        let set_event_mask2: SetEventMask2Fn = core::mem::transmute(slot(this, 82));
        assert_eq!(set_event_mask2(this, 0x55, 0x66), S_OK);
        let enumerate: EnumerateGCHeapObjectsFn = core::mem::transmute(slot(this, 114));
        // The override rejects a null callback: proof the slot reached it.
        assert_eq!(enumerate(this, null(), null_mut()), E_INVALIDARG);
    }
    let mut mask = 0;
    // SAFETY: a valid out-pointer.
    let hr = unsafe { info.GetEventMask(&mut mask) };
    assert_eq!(hr, S_OK);
    assert_eq!(mask, 0x55);
}

unsafe extern "system" fn record_frame(
    funcId: FunctionID,
    ip: UINT_PTR,
    _frameInfo: COR_PRF_FRAME_INFO,
    _contextSize: ULONG32,
    _context: *mut BYTE,
    clientData: *mut c_void,
) -> HRESULT {
    // SAFETY: the test passes a `Vec<(FunctionID, UINT_PTR)>` as client data.
    let frames = unsafe { &mut *(clientData as *mut Vec<(FunctionID, UINT_PTR)>) };
    frames.push((funcId, ip));
    S_OK
}

unsafe extern "system" fn take_two(object: ObjectID, callbackState: *mut c_void) -> BOOL {
    // SAFETY: the test passes a `Vec<ObjectID>` as callback state.
    let seen = unsafe { &mut *(callbackState as *mut Vec<ObjectID>) };
    seen.push(object);
    if seen.len() < 2 {
        TRUE
    } else {
        FALSE
    }
}

#[test]
fn callbacks_and_by_value_structs_cross_the_exported_vtable() {
    let runtime = std::sync::Arc::new(FakeRuntime::default());
    let info: ICorProfilerInfo15 = export_arc::<ICorProfilerInfo15, _>(runtime.clone());

    let mut frames: Vec<(FunctionID, UINT_PTR)> = Vec::new();
    // SAFETY: `record_frame` matches StackSnapshotCallback and reads the
    // client data as the Vec it is.
    let hr = unsafe {
        info.DoStackSnapshot(
            ThreadID::NULL,
            Some(record_frame),
            0,
            &mut frames as *mut _ as *mut c_void,
            null_mut(),
            0,
        )
    };
    assert_eq!(hr, S_OK);
    assert_eq!(frames, FRAMES);
    // SAFETY: a null callback is rejected before use.
    let hr = unsafe { info.DoStackSnapshot(ThreadID::NULL, None, 0, null_mut(), null_mut(), 0) };
    assert_eq!(hr, E_INVALIDARG);

    let mut seen: Vec<ObjectID> = Vec::new();
    // SAFETY: `take_two` matches ObjectCallback and reads its state as the
    // Vec it is.
    let hr =
        unsafe { info.EnumerateGCHeapObjects(Some(take_two), &mut seen as *mut _ as *mut c_void) };
    assert_eq!(hr, S_OK);
    assert_eq!(seen, HEAP[..2]);

    // COR_PRF_EVENTPIPE_PROVIDER_CONFIG travels by value, as the IDL says.
    let name: Vec<WCHAR> = "MyProvider\0".encode_utf16().collect();
    let config = COR_PRF_EVENTPIPE_PROVIDER_CONFIG {
        providerName: name.as_ptr(),
        keywords: 0xFEDC_BA98_7654_3210,
        loggingLevel: 5,
        filterData: null(),
    };
    let info12: ICorProfilerInfo12 = info.cast().expect("QueryInterface(ICorProfilerInfo12)");
    // SAFETY: the config's strings outlive the call.
    let hr = unsafe {
        info12.EventPipeAddProviderToSession(EVENTPIPE_SESSION(0x5E55_1014_0000_0001), config)
    };
    assert_eq!(hr, S_OK);
    assert_eq!(
        runtime.session_keywords.load(Ordering::SeqCst),
        0xFEDC_BA98_7654_3210
    );
    assert_eq!(runtime.session_level.load(Ordering::SeqCst), 5);
    // SAFETY: as above.
    let hr = unsafe { info12.EventPipeAddProviderToSession(EVENTPIPE_SESSION(2), config) };
    assert_eq!(hr, E_INVALIDARG);
}
