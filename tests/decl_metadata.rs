//! The metadata API declarations (cor.h) checked against the header: slot
//! counts, IIDs, deep slot offsets, struct layouts, and a Rust test double
//! exported as `IMetaDataImport` and called the way native code calls it.
#![allow(missing_docs, non_snake_case)]

mod common;

use common::vtable::slot;
use core::ffi::c_void;
use core::mem::{offset_of, size_of};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use corprof::metadata::*;
use corprof::*;

const WORD: usize = size_of::<usize>();

/// What the table checks for one interface.
struct Expect {
    name: &'static str,
    slots: usize,
    iid: GUID,
    actual_slots: usize,
    actual_iid: GUID,
    actual_name: &'static str,
    vtable_size: usize,
}

fn expect<I: Interface>(name: &'static str, slots: usize, iid: u128) -> Expect {
    Expect {
        name,
        slots,
        iid: GUID::from_u128(iid),
        actual_slots: I::SLOTS,
        actual_iid: I::IID,
        actual_name: I::NAME,
        vtable_size: size_of::<I::Vtable>(),
    }
}

// Slot counts: IUnknown's 3 plus every STDMETHOD of the interface and of its
// parents in cor.h. IIDs: transcribed from the `// {...}` comment that
// precedes each `EXTERN_GUID(IID_...)` in cor.h.
#[test]
fn slot_counts_and_iids_match_cor_h() {
    let table = [
        expect::<IMetaDataError>(
            "IMetaDataError",
            3 + 1,
            0xB81FF171_20F3_11D2_8DCC_00A0C9B09C19,
        ),
        expect::<IMapToken>("IMapToken", 3 + 1, 0x06A3EA8B_0225_11D1_BF72_00C04FC31E12),
        expect::<IMetaDataDispenser>(
            "IMetaDataDispenser",
            3 + 3,
            0x809C652E_7396_11D2_9771_00A0C9B4D50C,
        ),
        expect::<IMetaDataEmit>(
            "IMetaDataEmit",
            3 + 49,
            0xBA3FEE4C_ECB9_4E41_83B7_183FA41CD859,
        ),
        expect::<IMetaDataEmit2>(
            "IMetaDataEmit2",
            3 + 49 + 8,
            0xF5DD9950_F693_42E6_830E_7B833E8146A9,
        ),
        expect::<IMetaDataImport>(
            "IMetaDataImport",
            3 + 62,
            0x7DAC8207_D3AE_4C75_9B67_92801A497D44,
        ),
        expect::<IMetaDataImport2>(
            "IMetaDataImport2",
            3 + 62 + 8,
            0xFCE5EFA0_8BBA_4F8E_A036_8F2022B08466,
        ),
        expect::<IMetaDataFilter>(
            "IMetaDataFilter",
            3 + 3,
            0xD0E80DD1_12D4_11D3_B39D_00C04FF81795,
        ),
        expect::<IHostFilter>("IHostFilter", 3 + 1, 0xD0E80DD3_12D4_11D3_B39D_00C04FF81795),
        expect::<IMetaDataAssemblyEmit>(
            "IMetaDataAssemblyEmit",
            3 + 10,
            0x211EF15B_5317_4438_B196_DEC87B887693,
        ),
        expect::<IMetaDataAssemblyImport>(
            "IMetaDataAssemblyImport",
            3 + 14,
            0xEE62470B_E94B_424E_9B7C_2F00C9249F93,
        ),
        expect::<IMetaDataValidate>(
            "IMetaDataValidate",
            3 + 2,
            0x4709C9C6_81FF_11D3_9FC7_00C04F79A0A3,
        ),
        expect::<IMetaDataDispenserEx>(
            "IMetaDataDispenserEx",
            3 + 3 + 6,
            0x31BCFCE2_DAFB_11D2_9F81_00C04F79A0A3,
        ),
        expect::<IMetaDataTables>(
            "IMetaDataTables",
            3 + 19,
            0xD8F579AB_402D_4B8E_82D9_5D63B1065C68,
        ),
        expect::<IMetaDataTables2>(
            "IMetaDataTables2",
            3 + 19 + 2,
            0xBADB5F70_58DA_43A9_A1C6_D74819F19B15,
        ),
        expect::<IMetaDataInfo>(
            "IMetaDataInfo",
            3 + 1,
            0x7998EA64_7F95_48B8_86FC_17CAF48BF5CB,
        ),
    ];
    assert_eq!(table.len(), 16);
    for e in &table {
        assert_eq!(e.actual_name, e.name);
        assert_eq!(e.actual_slots, e.slots, "slot count of {}", e.name);
        assert_eq!(e.vtable_size, e.slots * WORD, "vtable size of {}", e.name);
        assert_eq!(e.actual_iid, e.iid, "IID of {}", e.name);
    }
}

#[test]
fn deep_slots_sit_at_their_header_positions() {
    // (offset, slot index = 3 + position in the header, counting parents)
    let slots = [
        (offset_of!(IMetaDataImport_Vtbl, CloseEnum), 3),
        (offset_of!(IMetaDataImport_Vtbl, GetTypeDefProps), 3 + 9),
        (offset_of!(IMetaDataImport_Vtbl, ResolveTypeRef), 3 + 12),
        (offset_of!(IMetaDataImport_Vtbl, GetMethodProps), 3 + 27),
        (offset_of!(IMetaDataImport_Vtbl, GetEventProps), 3 + 31),
        (offset_of!(IMetaDataImport_Vtbl, GetNameFromToken), 3 + 42),
        (offset_of!(IMetaDataImport_Vtbl, FindTypeRef), 3 + 52),
        (offset_of!(IMetaDataImport_Vtbl, IsValidToken), 3 + 58),
        (offset_of!(IMetaDataImport_Vtbl, IsGlobal), 3 + 61),
        (offset_of!(IMetaDataImport2_Vtbl, EnumGenericParams), 65),
        (
            offset_of!(IMetaDataImport2_Vtbl, GetGenericParamProps),
            65 + 1,
        ),
        (offset_of!(IMetaDataImport2_Vtbl, EnumMethodSpecs), 65 + 7),
        (offset_of!(IMetaDataEmit_Vtbl, DefineMethod), 3 + 7),
        (offset_of!(IMetaDataEmit_Vtbl, DefineMemberRef), 3 + 11),
        (offset_of!(IMetaDataEmit_Vtbl, DefineUserString), 3 + 25),
        (
            offset_of!(IMetaDataEmit_Vtbl, DefineSecurityAttributeSet),
            3 + 42,
        ),
        (offset_of!(IMetaDataEmit_Vtbl, MergeEnd), 3 + 48),
        (offset_of!(IMetaDataEmit2_Vtbl, DefineMethodSpec), 52),
        (offset_of!(IMetaDataEmit2_Vtbl, ResetENCLog), 52 + 7),
        (
            offset_of!(IMetaDataAssemblyImport_Vtbl, GetAssemblyProps),
            3,
        ),
        (offset_of!(IMetaDataAssemblyImport_Vtbl, CloseEnum), 3 + 12),
        (
            offset_of!(IMetaDataAssemblyImport_Vtbl, FindAssembliesByName),
            3 + 13,
        ),
        (
            offset_of!(IMetaDataAssemblyEmit_Vtbl, SetManifestResourceProps),
            3 + 9,
        ),
        (offset_of!(IMetaDataTables_Vtbl, GetRow), 3 + 9),
        (offset_of!(IMetaDataTables_Vtbl, GetNextUserString), 3 + 18),
        (
            offset_of!(IMetaDataTables2_Vtbl, GetMetaDataStreamInfo),
            22 + 1,
        ),
        (offset_of!(IMetaDataDispenserEx_Vtbl, SetOption), 6),
        (
            offset_of!(IMetaDataDispenserEx_Vtbl, FindAssemblyModule),
            6 + 5,
        ),
        (offset_of!(IMetaDataValidate_Vtbl, ValidateMetaData), 3 + 1),
        (offset_of!(IMetaDataFilter_Vtbl, IsTokenMarked), 3 + 2),
        (offset_of!(IMetaDataInfo_Vtbl, GetFileMapping), 3),
    ];
    for (i, (offset, index)) in slots.iter().enumerate() {
        assert_eq!(*offset, index * WORD, "entry {i}");
    }
}

#[cfg(target_pointer_width = "64")]
#[test]
fn struct_layouts_match_c_on_64_bit() {
    // COR_SECATTR { mdMemberRef tkCtor; const void *pCustomAttribute; uint32_t cbCustomAttribute; }
    assert_eq!(size_of::<COR_SECATTR>(), 24);
    assert_eq!(offset_of!(COR_SECATTR, tkCtor), 0);
    assert_eq!(offset_of!(COR_SECATTR, pCustomAttribute), 8);
    assert_eq!(offset_of!(COR_SECATTR, cbCustomAttribute), 16);
    // The re-exported structs: 3 DWORDs; 4 USHORTs + 3 (pointer, ULONG) pairs; token + ULONG.
    assert_eq!(size_of::<OSINFO>(), 12);
    assert_eq!(size_of::<ASSEMBLYMETADATA>(), 56);
    assert_eq!(offset_of!(ASSEMBLYMETADATA, usRevisionNumber), 6);
    assert_eq!(offset_of!(ASSEMBLYMETADATA, szLocale), 8);
    assert_eq!(offset_of!(ASSEMBLYMETADATA, cbLocale), 16);
    assert_eq!(offset_of!(ASSEMBLYMETADATA, rProcessor), 24);
    assert_eq!(offset_of!(ASSEMBLYMETADATA, ulProcessor), 32);
    assert_eq!(offset_of!(ASSEMBLYMETADATA, rOS), 40);
    assert_eq!(offset_of!(ASSEMBLYMETADATA, ulOS), 48);
    assert_eq!(offset_of!(COR_FIELD_OFFSET, ulOffset), 4);
    assert_eq!(size_of::<COR_FIELD_OFFSET>(), 8);
}

#[test]
fn enum_and_flag_newtypes_are_32_bit_and_named() {
    assert_eq!(size_of::<CorElementType>(), 4);
    assert_eq!(size_of::<CorSaveSize>(), 4);
    assert_eq!(size_of::<CorTypeAttr>(), 4);
    assert_eq!(size_of::<CorMethodAttr>(), 4);
    assert_eq!(ELEMENT_TYPE_SENTINEL.0, 0x01 | ELEMENT_TYPE_MODIFIER.0);
    assert_eq!(ELEMENT_TYPE_PINNED.0, 0x05 | ELEMENT_TYPE_MODIFIER.0);
    assert_eq!(CorElementType(0x1c).name(), Some("ELEMENT_TYPE_OBJECT"));
    assert_eq!(format!("{:?}", CorElementType(0x99)), "CorElementType(153)");
    let flags = mdPublic | mdStatic | mdHideBySig;
    assert_eq!(flags & mdMemberAccessMask, mdPublic);
    assert!(flags.contains(mdStatic));
    assert_eq!(
        (tdPublic | tdSealed | tdBeforeFieldInit).bits(),
        0x0010_0101
    );
    assert_eq!(
        CLSID_CorMetaDataDispenser,
        GUID::from_u128(0xE5CB7A31_7512_11D2_89CE_0080C792E5D8)
    );
    assert_eq!(CLSID_CorMetaDataRuntime, CLSID_CLR_v2_MetaData);
}

// ---------------------------------------------------------------------------
// A Rust test double exported as IMetaDataImport2.

const METHOD: mdMethodDef = mdMethodDef::from_rid(1);
const CLASS: mdTypeDef = mdTypeDef::from_rid(2);
const NAME: &str = "Main";

struct FakeImport {
    closed: Arc<AtomicUsize>,
}

impl IMetaDataImport_Impl for FakeImport {
    unsafe fn CloseEnum(&self, hEnum: HCORENUM) {
        self.closed.fetch_add(hEnum as usize, Ordering::SeqCst);
    }

    unsafe fn GetMethodProps(
        &self,
        mb: mdMethodDef,
        pClass: *mut mdTypeDef,
        szMethod: LPWSTR,
        cchMethod: ULONG,
        pchMethod: *mut ULONG,
        pdwAttr: *mut DWORD,
        ppvSigBlob: *mut PCCOR_SIGNATURE,
        pcbSigBlob: *mut ULONG,
        pulCodeRVA: *mut ULONG,
        pdwImplFlags: *mut DWORD,
    ) -> HRESULT {
        static SIG: [u8; 3] = [0x00, 0x00, 0x01]; // default, 0 params, void
        if mb != METHOD {
            return E_INVALIDARG;
        }
        let name: Vec<u16> = NAME.encode_utf16().chain([0]).collect();
        // SAFETY: every pointer is either null (skipped) or valid, as the
        // metadata contract requires; the name is written only within
        // `cchMethod` units.
        unsafe {
            if !pClass.is_null() {
                *pClass = CLASS;
            }
            if !pchMethod.is_null() {
                *pchMethod = name.len() as ULONG;
            }
            if !szMethod.is_null() {
                let n = name.len().min(cchMethod as usize);
                core::ptr::copy_nonoverlapping(name.as_ptr(), szMethod, n);
                if n < name.len() {
                    return CLDB_S_TRUNCATION;
                }
            }
            if !pdwAttr.is_null() {
                *pdwAttr = (mdPublic | mdStatic).bits();
            }
            if !ppvSigBlob.is_null() {
                *ppvSigBlob = SIG.as_ptr();
            }
            if !pcbSigBlob.is_null() {
                *pcbSigBlob = SIG.len() as ULONG;
            }
            if !pulCodeRVA.is_null() {
                *pulCodeRVA = 0x2050;
            }
            if !pdwImplFlags.is_null() {
                *pdwImplFlags = 0;
            }
        }
        S_OK
    }

    unsafe fn IsValidToken(&self, tk: mdToken) -> BOOL {
        if tk == METHOD.token() || tk == CLASS.token() {
            TRUE
        } else {
            FALSE
        }
    }
}

impl IMetaDataImport2_Impl for FakeImport {
    unsafe fn GetVersionString(
        &self,
        pwzBuf: LPWSTR,
        ccBufSize: DWORD,
        pccBufSize: *mut DWORD,
    ) -> HRESULT {
        let v: Vec<u16> = "v4.0.30319".encode_utf16().chain([0]).collect();
        // SAFETY: the caller passes a buffer of `ccBufSize` units and a valid count pointer.
        unsafe {
            *pccBufSize = v.len() as DWORD;
            if (ccBufSize as usize) < v.len() {
                return E_NOT_SUFFICIENT_BUFFER;
            }
            core::ptr::copy_nonoverlapping(v.as_ptr(), pwzBuf, v.len());
        }
        S_OK
    }
}

fn utf16_until_nul(buf: &[u16]) -> String {
    let end = buf.iter().position(|&c| c == 0).unwrap_or(buf.len());
    String::from_utf16(&buf[..end]).unwrap()
}

#[test]
fn exported_import_fills_the_callers_buffer_through_the_invoker() {
    let closed = Arc::new(AtomicUsize::new(0));
    let import: IMetaDataImport = export(FakeImport {
        closed: closed.clone(),
    });
    let mut buf = [0u16; 64];
    let mut class = mdTypeDef::default();
    let mut len: ULONG = 0;
    let mut attr: DWORD = 0;
    let mut sig: PCCOR_SIGNATURE = core::ptr::null();
    let mut cb_sig: ULONG = 0;
    let mut rva: ULONG = 0;
    let mut impl_flags: DWORD = 1;
    // SAFETY: valid out-pointers and a buffer of the length passed.
    let hr = unsafe {
        import.GetMethodProps(
            METHOD,
            &mut class,
            buf.as_mut_ptr(),
            buf.len() as ULONG,
            &mut len,
            &mut attr,
            &mut sig,
            &mut cb_sig,
            &mut rva,
            &mut impl_flags,
        )
    };
    assert_eq!(hr, S_OK);
    assert_eq!(utf16_until_nul(&buf), NAME);
    assert_eq!(len as usize, NAME.len() + 1, "the count includes the NUL");
    assert_eq!(class, CLASS);
    assert_eq!(CorMethodAttr(attr), mdPublic | mdStatic);
    assert_eq!(rva, 0x2050);
    assert_eq!(impl_flags, 0);
    // SAFETY: the double hands out a pointer to a static of `cb_sig` bytes.
    let sig = unsafe { core::slice::from_raw_parts(sig, cb_sig as usize) };
    assert_eq!(sig, [0, 0, 1]);

    // A too-small buffer: truncated name, full length reported.
    let mut small = [0u16; 2];
    // SAFETY: as above; unused outputs are null, which the contract allows.
    let hr = unsafe {
        import.GetMethodProps(
            METHOD,
            core::ptr::null_mut(),
            small.as_mut_ptr(),
            small.len() as ULONG,
            &mut len,
            core::ptr::null_mut(),
            core::ptr::null_mut(),
            core::ptr::null_mut(),
            core::ptr::null_mut(),
            core::ptr::null_mut(),
        )
    };
    assert_eq!(hr, CLDB_S_TRUNCATION);
    assert_eq!(String::from_utf16(&small).unwrap(), "Ma");
    assert_eq!(len, 5);

    // The void and BOOL methods.
    // SAFETY: plain values.
    unsafe {
        import.CloseEnum(7 as HCORENUM);
        assert_eq!(import.IsValidToken(METHOD.token()), TRUE);
        assert_eq!(import.IsValidToken(mdToken(0x0600_0099)), FALSE);
    }
    assert_eq!(closed.load(Ordering::SeqCst), 7);

    // Methods the double leaves out answer E_NOTIMPL.
    let mut henum: HCORENUM = core::ptr::null_mut();
    let mut defs = [mdTypeDef::default(); 4];
    let mut count: ULONG = 0;
    // SAFETY: valid pointers and counts.
    let hr = unsafe { import.EnumTypeDefs(&mut henum, defs.as_mut_ptr(), 4, &mut count) };
    assert_eq!(hr, E_NOTIMPL);
}

#[test]
fn exported_import_is_callable_through_raw_vtable_slots() {
    type GetMethodPropsFn = unsafe extern "system" fn(
        *mut c_void,
        mdMethodDef,
        *mut mdTypeDef,
        *mut u16,
        u32,
        *mut u32,
        *mut u32,
        *mut *const u8,
        *mut u32,
        *mut u32,
        *mut u32,
    ) -> HRESULT;
    type CloseEnumFn = unsafe extern "system" fn(*mut c_void, *mut c_void);
    type IsValidTokenFn = unsafe extern "system" fn(*mut c_void, u32) -> i32;

    let closed = Arc::new(AtomicUsize::new(0));
    let import: IMetaDataImport = export(FakeImport {
        closed: closed.clone(),
    });
    let this = import.as_raw();
    // SAFETY: slots 3, 30 and 61 of IMetaDataImport are CloseEnum,
    // GetMethodProps and IsValidToken in cor.h; each is transmuted to the C
    // signature written out above and called with valid arguments.
    unsafe {
        let get_method_props: GetMethodPropsFn = core::mem::transmute(slot(this, 3 + 27));
        let mut buf = [0u16; 16];
        let mut len = 0u32;
        let mut class = mdTypeDef::default();
        let hr = get_method_props(
            this,
            METHOD,
            &mut class,
            buf.as_mut_ptr(),
            buf.len() as u32,
            &mut len,
            core::ptr::null_mut(),
            core::ptr::null_mut(),
            core::ptr::null_mut(),
            core::ptr::null_mut(),
            core::ptr::null_mut(),
        );
        assert_eq!(hr, S_OK);
        assert_eq!(utf16_until_nul(&buf), NAME);
        assert_eq!(len, 5);
        assert_eq!(class, CLASS);
        assert_eq!(
            get_method_props(
                this,
                mdMethodDef::from_rid(9),
                &mut class,
                buf.as_mut_ptr(),
                16,
                &mut len,
                core::ptr::null_mut(),
                core::ptr::null_mut(),
                core::ptr::null_mut(),
                core::ptr::null_mut(),
                core::ptr::null_mut(),
            ),
            E_INVALIDARG
        );

        let close_enum: CloseEnumFn = core::mem::transmute(slot(this, 3));
        close_enum(this, 40 as *mut c_void);
        close_enum(this, 2 as *mut c_void);
        assert_eq!(closed.load(Ordering::SeqCst), 42);

        let is_valid: IsValidTokenFn = core::mem::transmute(slot(this, 3 + 58));
        assert_eq!(is_valid(this, CLASS.0), 1);
        assert_eq!(is_valid(this, 0x0200_0003), 0);
    }
}

#[test]
fn import2_double_answers_both_interfaces() {
    let closed = Arc::new(AtomicUsize::new(0));
    let import2: IMetaDataImport2 = export(FakeImport { closed });
    // The parent interface is reachable by QueryInterface and by Deref.
    let import: IMetaDataImport = import2
        .cast()
        .expect("IMetaDataImport2 derives from IMetaDataImport");
    assert_eq!(import.as_raw(), import2.as_raw());
    let mut buf = [0u16; 32];
    let mut len: DWORD = 0;
    // SAFETY: valid buffer and count.
    unsafe {
        assert_eq!(
            import2.GetVersionString(buf.as_mut_ptr(), 32, &mut len),
            S_OK
        );
        assert_eq!(utf16_until_nul(&buf), "v4.0.30319");
        assert_eq!(len, 11);
        assert_eq!(
            import2.GetVersionString(buf.as_mut_ptr(), 3, &mut len),
            E_NOT_SUFFICIENT_BUFFER
        );
        // A parent method through Deref, and a default of the child.
        assert_eq!(import2.IsValidToken(CLASS.token()), TRUE);
        let mut kind: DWORD = 0;
        let mut machine: DWORD = 0;
        assert_eq!(import2.GetPEKind(&mut kind, &mut machine), E_NOTIMPL);
    }
    // An IMetaDataImport-only export does not answer IMetaDataImport2.
    let plain: IMetaDataImport = export(FakeImport {
        closed: Arc::new(AtomicUsize::new(0)),
    });
    assert_eq!(plain.cast::<IMetaDataImport2>().unwrap_err(), E_NOINTERFACE);
}

#[test]
fn every_other_interface_exports_with_defaults_only() {
    struct Nothing;
    impl IMetaDataEmit_Impl for Nothing {}
    impl IMetaDataEmit2_Impl for Nothing {}
    impl IMetaDataAssemblyImport_Impl for Nothing {}
    impl IMetaDataAssemblyEmit_Impl for Nothing {}
    impl IMetaDataTables_Impl for Nothing {}
    impl IMetaDataTables2_Impl for Nothing {}
    impl IMetaDataDispenser_Impl for Nothing {}
    impl IMetaDataDispenserEx_Impl for Nothing {}
    impl IMetaDataInfo_Impl for Nothing {}
    impl IMetaDataFilter_Impl for Nothing {}
    impl IMetaDataValidate_Impl for Nothing {}
    impl IMetaDataError_Impl for Nothing {}
    impl IMapToken_Impl for Nothing {}
    impl IHostFilter_Impl for Nothing {}

    let emit: IMetaDataEmit2 = export(Nothing);
    let mut token = mdString::default();
    let text: Vec<u16> = "hi".encode_utf16().collect();
    let assembly: IMetaDataAssemblyImport = export(Nothing);
    let mut row: *mut c_void = core::ptr::null_mut();
    let tables: IMetaDataTables2 = export(Nothing);
    let dispenser: IMetaDataDispenserEx = export(Nothing);
    let mut scope: *mut c_void = core::ptr::null_mut();
    // SAFETY: valid pointers; every call reaches a default body.
    unsafe {
        assert_eq!(
            emit.DefineUserString(text.as_ptr(), 2, &mut token),
            E_NOTIMPL
        );
        assert_eq!(emit.ResetENCLog(), E_NOTIMPL);
        assert_eq!(
            assembly.GetAssemblyProps(
                mdAssembly::from_rid(1),
                core::ptr::null_mut(),
                core::ptr::null_mut(),
                core::ptr::null_mut(),
                core::ptr::null_mut(),
                0,
                core::ptr::null_mut(),
                core::ptr::null_mut(),
                core::ptr::null_mut(),
            ),
            E_NOTIMPL
        );
        assembly.CloseEnum(core::ptr::null_mut());
        assert_eq!(tables.GetRow(0, 1, &mut row), E_NOTIMPL);
        assert_eq!(
            dispenser.OpenScope(
                text.as_ptr(),
                ofRead.bits(),
                &IMetaDataImport::IID,
                &mut scope
            ),
            E_NOTIMPL
        );
        assert_eq!(
            export::<IMetaDataInfo, _>(Nothing).GetFileMapping(
                core::ptr::null_mut(),
                core::ptr::null_mut(),
                core::ptr::null_mut()
            ),
            E_NOTIMPL
        );
        assert_eq!(export::<IMetaDataFilter, _>(Nothing).UnmarkAll(), E_NOTIMPL);
        assert_eq!(
            export::<IMetaDataValidate, _>(Nothing).ValidateMetaData(),
            E_NOTIMPL
        );
        assert_eq!(
            export::<IMetaDataError, _>(Nothing).OnError(E_FAIL, mdTokenNil),
            E_NOTIMPL
        );
        assert_eq!(
            export::<IMapToken, _>(Nothing).Map(mdTokenNil, mdTokenNil),
            E_NOTIMPL
        );
        assert_eq!(
            export::<IHostFilter, _>(Nothing).MarkToken(mdTokenNil),
            E_NOTIMPL
        );
        let emit1: IMetaDataEmit = export(Nothing);
        assert_eq!(emit1.MergeEnd(), E_NOTIMPL);
    }
    assert!(token.is_nil());
    assert!(row.is_null());
    assert!(scope.is_null());
}
