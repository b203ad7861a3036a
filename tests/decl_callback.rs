//! The callback, enumerator and misc declarations of the profiling API,
//! checked against numbers transcribed independently from the runtime's
//! corprof.idl: slot counts, IIDs, deep slot offsets, and a profiler object
//! called the way the runtime calls it, through raw vtable slots.
#![allow(missing_docs, non_snake_case)]

mod common;

use common::ids::fake_id;

use common::vtable::slot;
use core::ffi::c_void;
use core::mem::{offset_of, size_of};
use std::sync::{Arc, Mutex};

use corprof::profiling::*;
use corprof::*;

// ---------------------------------------------------------------------------
// 1. Slot counts and IIDs, table-driven.
//
// Own method counts, counted in corprof.idl (methods declared in each
// interface's body; IUnknown contributes 3):
//   ICorProfilerCallback 69, 2: 8, 3: 3, 4: 6, 5: 1, 6: 1, 7: 1, 8: 2, 9: 1,
//   10: 2, 11: 1; each enumerator 5; IMethodMalloc 1;
//   ICorProfilerFunctionControl 3; ICorProfilerAssemblyReferenceProvider 1.
// IIDs are the IDL's `uuid(...)`, written here as 128-bit literals.
// ---------------------------------------------------------------------------

struct Row {
    name: &'static str,
    rust_name: &'static str,
    slots: usize,
    expected_slots: usize,
    iid: GUID,
    expected_iid: GUID,
    vtable_size: usize,
}

macro_rules! row {
    ($i:ident, $vtbl:ident, $slots:expr, $iid:expr) => {
        Row {
            name: stringify!($i),
            rust_name: <$i as Interface>::NAME,
            slots: <$i as Interface>::SLOTS,
            expected_slots: $slots,
            iid: <$i as Interface>::IID,
            expected_iid: GUID::from_u128($iid),
            vtable_size: size_of::<$vtbl>(),
        }
    };
}

fn table() -> Vec<Row> {
    vec![
        row!(
            ICorProfilerCallback,
            ICorProfilerCallback_Vtbl,
            72,
            0x176FBED1_A55C_4796_98CA_A9DA0EF883E7
        ),
        row!(
            ICorProfilerCallback2,
            ICorProfilerCallback2_Vtbl,
            80,
            0x8A8CC829_CCF2_49FE_BBAE_0F022228071A
        ),
        row!(
            ICorProfilerCallback3,
            ICorProfilerCallback3_Vtbl,
            83,
            0x4FD2ED52_7731_4B8D_9469_03D2CC3086C5
        ),
        row!(
            ICorProfilerCallback4,
            ICorProfilerCallback4_Vtbl,
            89,
            0x7B63B2E3_107D_4D48_B2F6_F61E229470D2
        ),
        row!(
            ICorProfilerCallback5,
            ICorProfilerCallback5_Vtbl,
            90,
            0x8DFBA405_8C9F_45F8_BFFA_83B14CEF78B5
        ),
        row!(
            ICorProfilerCallback6,
            ICorProfilerCallback6_Vtbl,
            91,
            0xFC13DF4B_4448_4F4F_950C_BA8D19D00C36
        ),
        row!(
            ICorProfilerCallback7,
            ICorProfilerCallback7_Vtbl,
            92,
            0xF76A2DBA_1D52_4539_866C_2AA518F9EFC3
        ),
        row!(
            ICorProfilerCallback8,
            ICorProfilerCallback8_Vtbl,
            94,
            0x5BED9B15_C079_4D47_BFE2_215A140C07E0
        ),
        row!(
            ICorProfilerCallback9,
            ICorProfilerCallback9_Vtbl,
            95,
            0x27583EC3_C8F5_482F_8052_194B8CE4705A
        ),
        row!(
            ICorProfilerCallback10,
            ICorProfilerCallback10_Vtbl,
            97,
            0xCEC5B60E_C69C_495F_87F6_84D28EE16FFB
        ),
        row!(
            ICorProfilerCallback11,
            ICorProfilerCallback11_Vtbl,
            98,
            0x42350846_AAED_47F7_B128_FD0C98881CDE
        ),
        row!(
            ICorProfilerObjectEnum,
            ICorProfilerObjectEnum_Vtbl,
            8,
            0x2C6269BD_2D13_4321_AE12_6686365FD6AF
        ),
        row!(
            ICorProfilerFunctionEnum,
            ICorProfilerFunctionEnum_Vtbl,
            8,
            0xFF71301A_B994_429D_A10B_B345A65280EF
        ),
        row!(
            ICorProfilerModuleEnum,
            ICorProfilerModuleEnum_Vtbl,
            8,
            0xB0266D75_2081_4493_AF7F_028BA34DB891
        ),
        row!(
            ICorProfilerThreadEnum,
            ICorProfilerThreadEnum_Vtbl,
            8,
            0x571194F7_25ED_419F_AA8B_7016B3159701
        ),
        row!(
            ICorProfilerMethodEnum,
            ICorProfilerMethodEnum_Vtbl,
            8,
            0xFCCEE788_0088_454B_A811_C99F298D1942
        ),
        row!(
            IMethodMalloc,
            IMethodMalloc_Vtbl,
            4,
            0xA0EFB28B_6EE2_4D7B_B983_A75EF7BEEDB8
        ),
        row!(
            ICorProfilerFunctionControl,
            ICorProfilerFunctionControl_Vtbl,
            6,
            0xF0963021_E1EA_4732_8581_E01B0BD3C0C6
        ),
        row!(
            ICorProfilerAssemblyReferenceProvider,
            ICorProfilerAssemblyReferenceProvider_Vtbl,
            4,
            0x66A78C24_2EEF_4F65_B45F_DD1D8038BF3C
        ),
    ]
}

#[test]
fn slot_counts_and_iids_match_the_idl() {
    let rows = table();
    assert_eq!(rows.len(), 19, "every interface of this group is checked");
    for row in &rows {
        assert_eq!(row.rust_name, row.name, "NAME");
        assert_eq!(row.slots, row.expected_slots, "{}: SLOTS", row.name);
        assert_eq!(
            row.vtable_size,
            row.expected_slots * size_of::<usize>(),
            "{}: vtable size",
            row.name
        );
        assert_eq!(row.iid, row.expected_iid, "{}: IID", row.name);
    }
    // No two interfaces share an IID (a copy-paste slip would).
    for (i, a) in rows.iter().enumerate() {
        for b in &rows[i + 1..] {
            assert_ne!(a.iid, b.iid, "{} and {} share an IID", a.name, b.name);
        }
    }
}

// ---------------------------------------------------------------------------
// 4. Compile-level: the whole chain is the sum of every version's own
// methods plus IUnknown's three, and each version adds exactly its own.
// ---------------------------------------------------------------------------

const OWN_METHODS: [usize; 11] = [69, 8, 3, 6, 1, 1, 1, 2, 1, 2, 1];

const fn sum(counts: &[usize]) -> usize {
    let mut total = 0;
    let mut i = 0;
    while i < counts.len() {
        total += counts[i];
        i += 1;
    }
    total
}

const _: () = assert!(<ICorProfilerCallback11 as Interface>::SLOTS == sum(&OWN_METHODS) + 3);
const _: () = assert!(<ICorProfilerCallback11 as Interface>::SLOTS == 98);
const _: () = {
    let slots = [
        <IUnknown as Interface>::SLOTS,
        <ICorProfilerCallback as Interface>::SLOTS,
        <ICorProfilerCallback2 as Interface>::SLOTS,
        <ICorProfilerCallback3 as Interface>::SLOTS,
        <ICorProfilerCallback4 as Interface>::SLOTS,
        <ICorProfilerCallback5 as Interface>::SLOTS,
        <ICorProfilerCallback6 as Interface>::SLOTS,
        <ICorProfilerCallback7 as Interface>::SLOTS,
        <ICorProfilerCallback8 as Interface>::SLOTS,
        <ICorProfilerCallback9 as Interface>::SLOTS,
        <ICorProfilerCallback10 as Interface>::SLOTS,
        <ICorProfilerCallback11 as Interface>::SLOTS,
    ];
    let mut v = 0;
    while v < 11 {
        assert!(slots[v + 1] - slots[v] == OWN_METHODS[v]);
        v += 1;
    }
};

// ---------------------------------------------------------------------------
// 2. Deep slots by name. Slot = 3 + the method's position in the chain,
// counted in the IDL: JITInlining is ICorProfilerCallback's 26th method (25),
// ExceptionUnwindFinallyEnter its 62nd (61); each later version starts where
// the previous ended (Callback2 at 72, 3 at 80, 4 at 83, 5 at 89, 6 at 90,
// 7 at 91, 8 at 92, 9 at 94, 10 at 95, 11 at 97).
// ---------------------------------------------------------------------------

#[test]
fn deep_slots_sit_at_their_idl_positions() {
    let p = size_of::<usize>();
    assert_eq!(offset_of!(ICorProfilerCallback_Vtbl, Initialize), 3 * p);
    assert_eq!(
        offset_of!(ICorProfilerCallback_Vtbl, JITCompilationStarted),
        23 * p
    );
    assert_eq!(offset_of!(ICorProfilerCallback_Vtbl, JITInlining), 28 * p);
    assert_eq!(
        offset_of!(ICorProfilerCallback_Vtbl, ExceptionUnwindFinallyEnter),
        64 * p
    );
    assert_eq!(
        offset_of!(ICorProfilerCallback_Vtbl, ExceptionCLRCatcherExecute),
        71 * p
    );
    assert_eq!(
        offset_of!(ICorProfilerCallback2_Vtbl, ThreadNameChanged),
        72 * p
    );
    assert_eq!(
        offset_of!(ICorProfilerCallback2_Vtbl, HandleDestroyed),
        79 * p
    );
    assert_eq!(
        offset_of!(ICorProfilerCallback3_Vtbl, InitializeForAttach),
        80 * p
    );
    assert_eq!(
        offset_of!(ICorProfilerCallback4_Vtbl, ReJITCompilationStarted),
        83 * p
    );
    assert_eq!(
        offset_of!(ICorProfilerCallback4_Vtbl, SurvivingReferences2),
        88 * p
    );
    assert_eq!(
        offset_of!(
            ICorProfilerCallback5_Vtbl,
            ConditionalWeakTableElementReferences
        ),
        89 * p
    );
    assert_eq!(
        offset_of!(ICorProfilerCallback6_Vtbl, GetAssemblyReferences),
        90 * p
    );
    assert_eq!(
        offset_of!(ICorProfilerCallback7_Vtbl, ModuleInMemorySymbolsUpdated),
        91 * p
    );
    // Declared by ICorProfilerCallback8; reached from ICorProfilerCallback9
    // through its `base__`.
    assert_eq!(
        offset_of!(
            ICorProfilerCallback8_Vtbl,
            DynamicMethodJITCompilationStarted
        ),
        92 * p
    );
    assert_eq!(
        offset_of!(ICorProfilerCallback9_Vtbl, base__)
            + offset_of!(
                ICorProfilerCallback8_Vtbl,
                DynamicMethodJITCompilationStarted
            ),
        92 * p
    );
    assert_eq!(
        offset_of!(ICorProfilerCallback9_Vtbl, DynamicMethodUnloaded),
        94 * p
    );
    assert_eq!(
        offset_of!(ICorProfilerCallback10_Vtbl, EventPipeEventDelivered),
        95 * p
    );
    assert_eq!(
        offset_of!(ICorProfilerCallback10_Vtbl, EventPipeProviderCreated),
        96 * p
    );
    assert_eq!(
        offset_of!(ICorProfilerCallback11_Vtbl, LoadAsNotificationOnly),
        97 * p
    );

    // The enumerators share one shape: Skip, Reset, Clone, GetCount, Next.
    assert_eq!(offset_of!(ICorProfilerObjectEnum_Vtbl, Skip), 3 * p);
    assert_eq!(offset_of!(ICorProfilerFunctionEnum_Vtbl, Clone), 5 * p);
    assert_eq!(offset_of!(ICorProfilerModuleEnum_Vtbl, GetCount), 6 * p);
    assert_eq!(offset_of!(ICorProfilerThreadEnum_Vtbl, Next), 7 * p);
    assert_eq!(offset_of!(ICorProfilerMethodEnum_Vtbl, Next), 7 * p);
    assert_eq!(offset_of!(IMethodMalloc_Vtbl, Alloc), 3 * p);
    assert_eq!(
        offset_of!(ICorProfilerFunctionControl_Vtbl, SetILInstrumentedCodeMap),
        5 * p
    );
    assert_eq!(
        offset_of!(
            ICorProfilerAssemblyReferenceProvider_Vtbl,
            AddAssemblyReference
        ),
        3 * p
    );
}

// ---------------------------------------------------------------------------
// 3. A profiler implementing all eleven versions, called through raw slots.
// ---------------------------------------------------------------------------

#[derive(Debug, PartialEq)]
enum Event {
    Jit(FunctionID, BOOL),
    Symbols(ModuleID),
    NotificationOnly,
}

struct MyProfiler {
    events: Arc<Mutex<Vec<Event>>>,
}

impl ICorProfilerCallback_Impl for MyProfiler {
    unsafe fn JITCompilationStarted(
        &self,
        functionId: FunctionID,
        fIsSafeToBlock: BOOL,
    ) -> HRESULT {
        self.events
            .lock()
            .unwrap()
            .push(Event::Jit(functionId, fIsSafeToBlock));
        S_OK
    }
}
impl ICorProfilerCallback2_Impl for MyProfiler {}
impl ICorProfilerCallback3_Impl for MyProfiler {}
impl ICorProfilerCallback4_Impl for MyProfiler {}
impl ICorProfilerCallback5_Impl for MyProfiler {}
impl ICorProfilerCallback6_Impl for MyProfiler {}
impl ICorProfilerCallback7_Impl for MyProfiler {
    unsafe fn ModuleInMemorySymbolsUpdated(&self, moduleId: ModuleID) -> HRESULT {
        self.events.lock().unwrap().push(Event::Symbols(moduleId));
        S_FALSE
    }
}
impl ICorProfilerCallback8_Impl for MyProfiler {}
impl ICorProfilerCallback9_Impl for MyProfiler {}
impl ICorProfilerCallback10_Impl for MyProfiler {}
impl ICorProfilerCallback11_Impl for MyProfiler {
    unsafe fn LoadAsNotificationOnly(&self, pbNotificationOnly: *mut BOOL) -> HRESULT {
        if pbNotificationOnly.is_null() {
            return E_POINTER;
        }
        // SAFETY: checked non-null; the caller passes a writable BOOL.
        unsafe { *pbNotificationOnly = TRUE };
        self.events.lock().unwrap().push(Event::NotificationOnly);
        S_OK
    }
}

type QueryInterfaceFn =
    unsafe extern "system" fn(*mut c_void, *const GUID, *mut *mut c_void) -> HRESULT;
type ReleaseFn = unsafe extern "system" fn(*mut c_void) -> u32;

/// Transmutes slot `$index` of `$this` to the fn type `$ty`.
macro_rules! raw {
    ($this:expr, $index:expr, $ty:ty) => {
        core::mem::transmute::<*const c_void, $ty>(slot($this, $index))
    };
}

type Fn0 = unsafe extern "system" fn(*mut c_void) -> HRESULT;
type FnUnknown = unsafe extern "system" fn(*mut c_void, *mut c_void) -> HRESULT;
type FnFunctionBool = unsafe extern "system" fn(*mut c_void, FunctionID, BOOL) -> HRESULT;
type FnFunction = unsafe extern "system" fn(*mut c_void, FunctionID) -> HRESULT;
type FnFunctionHrBool =
    unsafe extern "system" fn(*mut c_void, FunctionID, HRESULT, BOOL) -> HRESULT;
type FnInlining =
    unsafe extern "system" fn(*mut c_void, FunctionID, FunctionID, *mut BOOL) -> HRESULT;
type FnSuspend = unsafe extern "system" fn(*mut c_void, COR_PRF_SUSPEND_REASON) -> HRESULT;
type FnVTableCreated =
    unsafe extern "system" fn(*mut c_void, ClassID, REFGUID, *mut c_void, ULONG) -> HRESULT;
type FnGcStarted =
    unsafe extern "system" fn(*mut c_void, i32, *mut BOOL, COR_PRF_GC_REASON) -> HRESULT;
type FnRootReferences2 = unsafe extern "system" fn(
    *mut c_void,
    ULONG,
    *mut ObjectID,
    *mut COR_PRF_GC_ROOT_KIND,
    *mut COR_PRF_GC_ROOT_FLAGS,
    *mut UINT_PTR,
) -> HRESULT;
type FnHandleCreated = unsafe extern "system" fn(*mut c_void, GCHandleID, ObjectID) -> HRESULT;
type FnAttach = unsafe extern "system" fn(*mut c_void, *mut c_void, *mut c_void, UINT) -> HRESULT;
type FnReJITError = unsafe extern "system" fn(
    *mut c_void,
    ModuleID,
    metadata::mdMethodDef,
    FunctionID,
    HRESULT,
) -> HRESULT;
type FnCwt = unsafe extern "system" fn(
    *mut c_void,
    ULONG,
    *mut ObjectID,
    *mut ObjectID,
    *mut GCHandleID,
) -> HRESULT;
type FnAsmRefs = unsafe extern "system" fn(*mut c_void, *const WCHAR, *mut c_void) -> HRESULT;
type FnModule = unsafe extern "system" fn(*mut c_void, ModuleID) -> HRESULT;
type FnDynamicStarted =
    unsafe extern "system" fn(*mut c_void, FunctionID, BOOL, *const BYTE, ULONG) -> HRESULT;
type FnEventDelivered = unsafe extern "system" fn(
    *mut c_void,
    EVENTPIPE_PROVIDER,
    DWORD,
    DWORD,
    ULONG,
    *const BYTE,
    ULONG,
    *const BYTE,
    *const GUID,
    *const GUID,
    ThreadID,
    ULONG,
    *mut UINT_PTR,
) -> HRESULT;
type FnProvider = unsafe extern "system" fn(*mut c_void, EVENTPIPE_PROVIDER) -> HRESULT;
type FnNotificationOnly = unsafe extern "system" fn(*mut c_void, *mut BOOL) -> HRESULT;

#[test]
fn a_profiler_of_all_eleven_versions_answers_raw_slots() {
    // IDs that use the upper half of a 64-bit word (truncated on 32-bit
    // targets, where IDs are 32 bits wide).
    const BIG_FUNCTION_ID: usize = 0x7FFE_1234_5678_u64 as usize;
    const BIG_MODULE_ID: usize = 0x5EED_0000_0077_u64 as usize;
    let events = Arc::new(Mutex::new(Vec::new()));
    let profiler = corprof::export::<ICorProfilerCallback11, _>(MyProfiler {
        events: events.clone(),
    });
    let this = profiler.as_raw();

    // SAFETY: every slot index below is the one counted in corprof.idl for
    // the named method, and each is transmuted to that method's exact
    // signature; every pointer argument is valid for the call.
    unsafe {
        // Version 1.
        assert_eq!(
            raw!(this, 3, FnUnknown)(this, core::ptr::null_mut()),
            S_OK,
            "Initialize"
        );
        assert_eq!(raw!(this, 4, Fn0)(this), S_OK, "Shutdown");
        assert_eq!(
            raw!(this, 22, FnFunction)(this, FunctionID::from_raw(1)),
            S_OK,
            "FunctionUnloadStarted"
        );
        assert_eq!(
            raw!(this, 23, FnFunctionBool)(this, FunctionID::from_raw(BIG_FUNCTION_ID), TRUE),
            S_OK,
            "JITCompilationStarted (override)"
        );
        assert_eq!(
            raw!(this, 24, FnFunctionHrBool)(this, FunctionID::from_raw(2), E_FAIL, FALSE),
            S_OK,
            "JITCompilationFinished"
        );
        let mut should_inline: BOOL = 42;
        assert_eq!(
            raw!(this, 28, FnInlining)(
                this,
                FunctionID::from_raw(3),
                FunctionID::from_raw(4),
                &mut should_inline
            ),
            S_OK,
            "JITInlining"
        );
        assert_eq!(should_inline, 42, "the default JITInlining writes nothing");
        assert_eq!(
            raw!(this, 42, FnSuspend)(this, COR_PRF_SUSPEND_FOR_GC),
            S_OK,
            "RuntimeSuspendStarted"
        );
        assert_eq!(
            raw!(this, 64, FnFunction)(this, FunctionID::from_raw(5)),
            S_OK,
            "ExceptionUnwindFinallyEnter"
        );
        let iid = IUnknown::IID;
        assert_eq!(
            raw!(this, 68, FnVTableCreated)(
                this,
                ClassID::from_raw(6),
                &iid,
                core::ptr::null_mut(),
                7
            ),
            S_OK,
            "COMClassicVTableCreated"
        );
        assert_eq!(
            raw!(this, 71, Fn0)(this),
            S_OK,
            "ExceptionCLRCatcherExecute"
        );

        // Version 2.
        let mut collected = [TRUE, FALSE, FALSE];
        assert_eq!(
            raw!(this, 73, FnGcStarted)(this, 3, collected.as_mut_ptr(), COR_PRF_GC_INDUCED),
            S_OK,
            "GarbageCollectionStarted"
        );
        let mut roots = [ObjectID::from_raw(8)];
        let mut kinds = [COR_PRF_GC_ROOT_STACK];
        let mut flags = [COR_PRF_GC_ROOT_PINNING];
        let mut ids: [UINT_PTR; 1] = [9];
        assert_eq!(
            raw!(this, 77, FnRootReferences2)(
                this,
                1,
                roots.as_mut_ptr(),
                kinds.as_mut_ptr(),
                flags.as_mut_ptr(),
                ids.as_mut_ptr()
            ),
            S_OK,
            "RootReferences2"
        );
        assert_eq!(
            raw!(this, 78, FnHandleCreated)(this, GCHandleID::from_raw(25), ObjectID::from_raw(26)),
            S_OK,
            "HandleCreated"
        );

        // Version 3.
        assert_eq!(
            raw!(this, 80, FnAttach)(this, core::ptr::null_mut(), core::ptr::null_mut(), 0),
            S_OK,
            "InitializeForAttach"
        );
        assert_eq!(raw!(this, 82, Fn0)(this), S_OK, "ProfilerDetachSucceeded");

        // Version 4.
        assert_eq!(
            raw!(this, 86, FnReJITError)(
                this,
                ModuleID::from_raw(10),
                metadata::mdMethodDef(0x0600_0001),
                FunctionID::from_raw(11),
                E_FAIL
            ),
            S_OK,
            "ReJITError"
        );

        // Version 5.
        let mut keys = [ObjectID::from_raw(12)];
        let mut values = [ObjectID::from_raw(13)];
        let mut handles = [GCHandleID::from_raw(14)];
        assert_eq!(
            raw!(this, 89, FnCwt)(
                this,
                1,
                keys.as_mut_ptr(),
                values.as_mut_ptr(),
                handles.as_mut_ptr()
            ),
            S_OK,
            "ConditionalWeakTableElementReferences"
        );

        // Version 6.
        let path: Vec<u16> = "a.dll\0".encode_utf16().collect();
        assert_eq!(
            raw!(this, 90, FnAsmRefs)(this, path.as_ptr(), core::ptr::null_mut()),
            S_OK,
            "GetAssemblyReferences"
        );

        // Version 7: the second override.
        assert_eq!(
            raw!(this, 91, FnModule)(this, ModuleID::from_raw(BIG_MODULE_ID)),
            S_FALSE,
            "ModuleInMemorySymbolsUpdated (override)"
        );

        // Version 8.
        let header = [0x2Bu8, 0x2A];
        assert_eq!(
            raw!(this, 92, FnDynamicStarted)(
                this,
                FunctionID::from_raw(15),
                TRUE,
                header.as_ptr(),
                2
            ),
            S_OK,
            "DynamicMethodJITCompilationStarted"
        );
        assert_eq!(
            raw!(this, 93, FnFunctionHrBool)(this, FunctionID::from_raw(16), S_OK, TRUE),
            S_OK,
            "DynamicMethodJITCompilationFinished"
        );

        // Version 9.
        assert_eq!(
            raw!(this, 94, FnFunction)(this, FunctionID::from_raw(17)),
            S_OK,
            "DynamicMethodUnloaded"
        );

        // Version 10 (thirteen arguments: several go on the stack).
        let activity = GUID::from_u128(1);
        let mut frames: [UINT_PTR; 2] = [18, 19];
        assert_eq!(
            raw!(this, 95, FnEventDelivered)(
                this,
                EVENTPIPE_PROVIDER::from_raw(20),
                21,
                22,
                2,
                header.as_ptr(),
                2,
                header.as_ptr(),
                &activity,
                core::ptr::null(),
                ThreadID::from_raw(23),
                2,
                frames.as_mut_ptr()
            ),
            S_OK,
            "EventPipeEventDelivered"
        );
        assert_eq!(
            raw!(this, 96, FnProvider)(this, EVENTPIPE_PROVIDER::from_raw(24)),
            S_OK,
            "EventPipeProviderCreated"
        );

        // Version 11: the third override, with an out-parameter.
        let mut notification_only: BOOL = FALSE;
        assert_eq!(
            raw!(this, 97, FnNotificationOnly)(this, &mut notification_only),
            S_OK,
            "LoadAsNotificationOnly (override)"
        );
        assert_eq!(notification_only, TRUE);
    }

    // Only the overrides ran, each once, with the arguments it was given.
    assert_eq!(
        *events.lock().unwrap(),
        vec![
            Event::Jit(fake_id!(FunctionID, BIG_FUNCTION_ID), TRUE),
            Event::Symbols(fake_id!(ModuleID, BIG_MODULE_ID)),
            Event::NotificationOnly,
        ]
    );
    drop(profiler);
}

#[test]
fn query_interface_answers_every_callback_version_with_one_identity() {
    let events = Arc::new(Mutex::new(Vec::new()));
    let profiler = corprof::export::<ICorProfilerCallback11, _>(MyProfiler { events });
    let this = profiler.as_raw();
    let iids = [
        IUnknown::IID,
        GUID::from_u128(0x176FBED1_A55C_4796_98CA_A9DA0EF883E7),
        GUID::from_u128(0x8A8CC829_CCF2_49FE_BBAE_0F022228071A),
        GUID::from_u128(0x4FD2ED52_7731_4B8D_9469_03D2CC3086C5),
        GUID::from_u128(0x7B63B2E3_107D_4D48_B2F6_F61E229470D2),
        GUID::from_u128(0x8DFBA405_8C9F_45F8_BFFA_83B14CEF78B5),
        GUID::from_u128(0xFC13DF4B_4448_4F4F_950C_BA8D19D00C36),
        GUID::from_u128(0xF76A2DBA_1D52_4539_866C_2AA518F9EFC3),
        GUID::from_u128(0x5BED9B15_C079_4D47_BFE2_215A140C07E0),
        GUID::from_u128(0x27583EC3_C8F5_482F_8052_194B8CE4705A),
        GUID::from_u128(0xCEC5B60E_C69C_495F_87F6_84D28EE16FFB),
        GUID::from_u128(0x42350846_AAED_47F7_B128_FD0C98881CDE),
    ];
    // SAFETY: slot 0 is QueryInterface and slot 2 Release in every COM
    // vtable; the IID and out-pointers are valid.
    unsafe {
        for iid in &iids {
            let mut out: *mut c_void = core::ptr::null_mut();
            assert_eq!(
                raw!(this, 0, QueryInterfaceFn)(this, iid, &mut out),
                S_OK,
                "QI {iid}"
            );
            assert_eq!(out, this, "QI {iid} returns the same pointer");
            assert_eq!(
                raw!(out, 2, ReleaseFn)(out),
                1,
                "QI {iid} took exactly one reference"
            );
        }
        // An interface the profiler does not implement.
        let mut out: *mut c_void = core::ptr::NonNull::<c_void>::dangling().as_ptr();
        assert_eq!(
            raw!(this, 0, QueryInterfaceFn)(this, &ICorProfilerObjectEnum::IID, &mut out),
            E_NOINTERFACE
        );
        assert!(out.is_null());
    }
    // Typed casts reach the same object.
    let v1: ICorProfilerCallback = profiler.cast().unwrap();
    let v6: ICorProfilerCallback6 = v1.cast().unwrap();
    assert_eq!(v1.as_raw(), this);
    assert_eq!(v6.as_raw(), this);
}

// ---------------------------------------------------------------------------
// Non-callback defaults: E_NOTIMPL, and a null pointer from Alloc.
// ---------------------------------------------------------------------------

struct FixedModules(Vec<ModuleID>);

impl ICorProfilerModuleEnum_Impl for FixedModules {
    unsafe fn GetCount(&self, pcelt: *mut ULONG) -> HRESULT {
        // SAFETY: the test passes a valid pointer.
        unsafe { *pcelt = self.0.len() as ULONG };
        S_OK
    }
}

struct NoMemory;
impl IMethodMalloc_Impl for NoMemory {}

struct Nothing;
impl ICorProfilerFunctionControl_Impl for Nothing {}
impl ICorProfilerAssemblyReferenceProvider_Impl for Nothing {}
impl ICorProfilerObjectEnum_Impl for Nothing {}
impl ICorProfilerFunctionEnum_Impl for Nothing {}
impl ICorProfilerThreadEnum_Impl for Nothing {}
impl ICorProfilerMethodEnum_Impl for Nothing {}

#[test]
fn non_callback_defaults_are_e_notimpl() {
    let modules: ICorProfilerModuleEnum = export(FixedModules(vec![
        fake_id!(ModuleID, 1),
        fake_id!(ModuleID, 2),
    ]));
    let malloc: IMethodMalloc = export(NoMemory);
    let control: ICorProfilerFunctionControl = export(Nothing);
    let provider: ICorProfilerAssemblyReferenceProvider = export(Nothing);
    let objects: ICorProfilerObjectEnum = export(Nothing);
    let functions: ICorProfilerFunctionEnum = export(Nothing);
    let threads: ICorProfilerThreadEnum = export(Nothing);
    let methods: ICorProfilerMethodEnum = export(Nothing);
    // SAFETY: valid out-pointers and plain values.
    unsafe {
        let mut count = 0;
        assert_eq!(modules.GetCount(&mut count), S_OK);
        assert_eq!(count, 2);
        assert_eq!(modules.Skip(1), E_NOTIMPL);
        assert_eq!(modules.Reset(), E_NOTIMPL);
        let mut clone: *mut c_void = core::ptr::null_mut();
        assert_eq!(modules.Clone(&mut clone), E_NOTIMPL);
        let mut ids = [ModuleID::NULL; 2];
        let mut fetched = 0;
        assert_eq!(modules.Next(2, ids.as_mut_ptr(), &mut fetched), E_NOTIMPL);

        assert!(malloc.Alloc(16).is_null());
        assert_eq!(control.SetCodegenFlags(1), E_NOTIMPL);
        assert_eq!(control.SetILFunctionBody(0, core::ptr::null()), E_NOTIMPL);
        assert_eq!(provider.AddAssemblyReference(core::ptr::null()), E_NOTIMPL);
        assert_eq!(objects.GetCount(&mut count), E_NOTIMPL);
        assert_eq!(functions.Reset(), E_NOTIMPL);
        assert_eq!(threads.Skip(0), E_NOTIMPL);
        assert_eq!(methods.Clone(&mut clone), E_NOTIMPL);
    }
}

#[test]
fn the_typed_invoker_reaches_every_version_through_deref() {
    let events = Arc::new(Mutex::new(Vec::new()));
    let profiler: ICorProfilerCallback11 = export(MyProfiler {
        events: events.clone(),
    });
    let mut notification_only = FALSE;
    // SAFETY: plain values and a valid out-pointer; the object is ours.
    unsafe {
        // Declared by version 1, reached through ten `Deref`s.
        assert_eq!(
            profiler.JITCompilationStarted(FunctionID::from_raw(99), FALSE),
            S_OK
        );
        assert_eq!(profiler.Shutdown(), S_OK);
        assert_eq!(
            profiler.ModuleInMemorySymbolsUpdated(ModuleID::from_raw(98)),
            S_FALSE
        );
        assert_eq!(
            profiler.DynamicMethodUnloaded(FunctionID::from_raw(97)),
            S_OK
        );
        assert_eq!(
            profiler.LoadAsNotificationOnly(&mut notification_only),
            S_OK
        );
    }
    assert_eq!(notification_only, TRUE);
    assert_eq!(
        *events.lock().unwrap(),
        vec![
            Event::Jit(fake_id!(FunctionID, 99), FALSE),
            Event::Symbols(fake_id!(ModuleID, 98)),
            Event::NotificationOnly,
        ]
    );
}
