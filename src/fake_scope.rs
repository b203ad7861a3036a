//! The one fake metadata scope of the unit tests: `IMetaDataImport`,
//! `IMetaDataImport2`, `IMetaDataEmit`, `IMetaDataEmit2`,
//! `IMetaDataAssemblyImport` and `IMetaDataAssemblyEmit` over tables a test
//! fills (or the facade defines rows in), answering by the runtime's
//! protocols (ECMA-335 II.22 tables; cor.h for the calls: names by
//! length-then-buffer with `CLDB_S_TRUNCATION` when cut, enumerations in
//! batches through an `HCORENUM`, `CLDB_E_RECORD_NOTFOUND` for a token or
//! name it does not hold).
//!
//! Rows are numbered from 1 in the order they are added, as in metadata;
//! every builder returns the new row's token. Clones share the tables, so a
//! test keeps one to look at what the facade defined
//! ([`t`](FakeScope::t)).

use alloc::boxed::Box;
use alloc::string::String;
use alloc::sync::Arc;
use alloc::vec::Vec;
use core::ffi::c_void;
use std::sync::{Mutex, MutexGuard};

use crate::facade::{MetadataEmit, MetadataImport};
use crate::metadata::{
    mdAssemblyRef, mdGenericParam, mdMemberRef, mdMethodDef, mdMethodSpec, mdSignature, mdString,
    mdToken, mdTypeDef, mdTypeRef, mdTypeSpec, IMetaDataAssemblyEmit, IMetaDataAssemblyEmit_Impl,
    IMetaDataAssemblyImport, IMetaDataAssemblyImport_Impl, IMetaDataEmit, IMetaDataEmit2,
    IMetaDataEmit2_Impl, IMetaDataEmit_Impl, IMetaDataImport, IMetaDataImport2,
    IMetaDataImport2_Impl, IMetaDataImport_Impl, ASSEMBLYMETADATA, CLDB_E_RECORD_NOTFOUND,
    CLDB_S_TRUNCATION, HCORENUM, PCCOR_SIGNATURE,
};
use crate::ULONG;
use crate::{DWORD, HRESULT, LPCWSTR, LPWSTR, REFIID, S_FALSE, S_OK};

/// `tdPublic`, a top-level type's visibility (corhdr.h `CorTypeAttr`).
pub(crate) const TD_PUBLIC: u32 = 0x1;
/// `tdNestedPublic`, a nested type's.
pub(crate) const TD_NESTED_PUBLIC: u32 = 0x2;

pub(crate) struct TypeDef {
    name: String,
    flags: u32,
    extends: mdToken,
    enclosing: Option<mdTypeDef>,
    attributes: Vec<String>,
    generic_params: u32,
}

pub(crate) struct Method {
    name: String,
    class: mdTypeDef,
    attributes: u32,
    sig: Box<[u8]>,
    /// `CorMethodImpl` flags (0 unless [`FakeScope::set_impl_flags`]).
    impl_flags: u32,
}

/// An AssemblyRef row: name, version, culture, key or token.
pub(crate) type AssemblyRow = (String, [u16; 4], String, Box<[u8]>);

/// The scope's tables and what the fake counts. Blobs are boxed: a
/// pointer handed out stays valid while rows are added.
#[derive(Default)]
pub(crate) struct Tables {
    types: Vec<TypeDef>,
    methods: Vec<Method>,
    pub(crate) assembly_refs: Vec<AssemblyRow>,
    pub(crate) type_refs: Vec<(mdToken, String)>,
    pub(crate) member_refs: Vec<(mdToken, String, Box<[u8]>)>,
    pub(crate) method_specs: Vec<(mdToken, Box<[u8]>)>,
    pub(crate) type_specs: Vec<Box<[u8]>>,
    pub(crate) user_strings: Vec<Vec<u16>>,
    pub(crate) signatures: Vec<Box<[u8]>>,
    /// Calls that defined a row.
    pub(crate) defines: usize,
    /// Enumerators opened and closed.
    pub(crate) opened: usize,
    pub(crate) closed: usize,
    /// FindTypeRef answers this instead of searching, when set.
    pub(crate) find_type_ref_fails: Option<HRESULT>,
    /// FindTypeRef takes this long to answer (outside the tables' lock),
    /// so that concurrent callers overlap.
    pub(crate) find_delay_ms: u64,
}

/// A module's metadata for unit tests. [`import`](FakeScope::import) hands
/// it out as the facade's [`MetadataImport`], [`emit`](FakeScope::emit) as
/// its [`MetadataEmit`].
#[derive(Clone, Default)]
pub(crate) struct FakeScope(Arc<Mutex<Tables>>);

fn token(table: u32, index: usize) -> u32 {
    (table << 24) | (index as u32 + 1)
}

/// The row index of `token` in `table`, if it is of that table.
fn row(token: u32, table: u32) -> Option<usize> {
    (token >> 24 == table && token & 0x00FF_FFFF != 0).then(|| (token & 0x00FF_FFFF) as usize - 1)
}

/// The tokens of the first `n` rows of `table` (its high byte).
fn rows(table: u32, n: usize) -> Vec<u32> {
    (0..n).map(|i| token(table >> 24, i)).collect()
}

/// # Safety
///
/// `p` points to `n` bytes.
unsafe fn bytes(p: *const u8, n: ULONG) -> Box<[u8]> {
    // SAFETY: forwarded contract.
    unsafe { core::slice::from_raw_parts(p, n as usize) }.into()
}

use read_wide as read;

fn type_row(t: &Tables, typedef: u32) -> Option<&TypeDef> {
    t.types.get(row(typedef, 0x02)?)
}

impl FakeScope {
    /// A scope with no rows.
    pub(crate) fn new() -> FakeScope {
        FakeScope::default()
    }

    /// The tables, to fill or to look at.
    pub(crate) fn t(&self) -> MutexGuard<'_, Tables> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Adds a TypeDef: `name` is `Namespace.Name` (a nested type's own
    /// name), `flags` its `CorTypeAttr`, `extends` its base (nil: none).
    pub(crate) fn type_def(&mut self, name: &str, flags: u32, extends: mdToken) -> mdTypeDef {
        let mut t = self.t();
        t.types.push(TypeDef {
            name: name.into(),
            flags,
            extends,
            enclosing: None,
            attributes: Vec::new(),
            generic_params: 0,
        });
        mdTypeDef(token(0x02, t.types.len() - 1))
    }

    /// Adds a public type nested in `enclosing`.
    pub(crate) fn nested(&mut self, name: &str, enclosing: mdTypeDef) -> mdTypeDef {
        let t = self.type_def(name, TD_NESTED_PUBLIC, mdToken(0));
        self.set_enclosing(t, enclosing);
        t
    }

    fn type_mut(&mut self, typedef: mdTypeDef, edit: impl FnOnce(&mut TypeDef)) {
        let i = row(typedef.0, 0x02).expect("a TypeDef of this scope");
        edit(&mut self.t().types[i]);
    }

    /// Makes `nested` (a TypeDef of this scope) nested in `enclosing`, which
    /// may be any token (broken metadata nests a type in itself).
    pub(crate) fn set_enclosing(&mut self, nested: mdTypeDef, enclosing: mdTypeDef) {
        self.type_mut(nested, |t| t.enclosing = Some(enclosing));
    }

    /// Gives `typedef` a custom attribute of the type named `name`.
    pub(crate) fn attribute(&mut self, typedef: mdTypeDef, name: &str) {
        self.type_mut(typedef, |t| t.attributes.push(name.into()));
    }

    /// Gives `typedef` `count` generic parameters.
    pub(crate) fn generic_params(&mut self, typedef: mdTypeDef, count: u32) {
        self.type_mut(typedef, |t| t.generic_params = count);
    }

    /// Adds a MethodDef of `class` (a token this scope need not define)
    /// with `CorMethodAttr` `attributes` and signature blob `sig`.
    pub(crate) fn method(
        &mut self,
        class: mdTypeDef,
        name: &str,
        attributes: u32,
        sig: &[u8],
    ) -> mdMethodDef {
        let mut t = self.t();
        t.methods.push(Method {
            name: name.into(),
            class,
            attributes,
            sig: sig.into(),
            impl_flags: 0,
        });
        mdMethodDef(token(0x06, t.methods.len() - 1))
    }

    /// Sets the `CorMethodImpl` flags of `method` (one of [`method`](Self::method)'s).
    pub(crate) fn set_impl_flags(&mut self, method: mdMethodDef, flags: u32) {
        let mut t = self.t();
        if let Some(m) = row(method.0, 0x06).and_then(|i| t.methods.get_mut(i)) {
            m.impl_flags = flags;
        }
    }

    /// Adds a TypeRef named `name` in resolution scope `scope`.
    pub(crate) fn type_ref(&mut self, scope: mdToken, name: &str) -> mdTypeRef {
        let mut t = self.t();
        t.type_refs.push((scope, name.into()));
        mdTypeRef(token(0x01, t.type_refs.len() - 1))
    }

    /// Adds a MemberRef `name` of `parent` with signature `sig`.
    pub(crate) fn member_ref(&mut self, parent: mdToken, name: &str, sig: &[u8]) -> mdMemberRef {
        let mut t = self.t();
        t.member_refs.push((parent, name.into(), sig.into()));
        mdMemberRef(token(0x0A, t.member_refs.len() - 1))
    }

    /// Adds a MethodSpec of `method` with instantiation blob `blob`.
    pub(crate) fn method_spec(&mut self, method: mdToken, blob: &[u8]) -> mdMethodSpec {
        let mut t = self.t();
        t.method_specs.push((method, blob.into()));
        mdMethodSpec(token(0x2B, t.method_specs.len() - 1))
    }

    /// Adds a StandAloneSig.
    pub(crate) fn signature(&mut self, blob: &[u8]) -> mdSignature {
        let mut t = self.t();
        t.signatures.push(blob.into());
        mdSignature(token(0x11, t.signatures.len() - 1))
    }

    /// The scope as the raw `IMetaDataImport` (an `IMetaDataImport2`
    /// object).
    pub(crate) fn raw(&self) -> IMetaDataImport {
        let import2: IMetaDataImport2 = crate::export(self.clone());
        import2
            .cast::<IMetaDataImport>()
            .expect("IMetaDataImport2 derives from IMetaDataImport")
    }

    /// The scope behind the facade's reader.
    pub(crate) fn import(&self) -> MetadataImport {
        MetadataImport::new(self.raw())
    }

    /// The scope behind the facade's writer: one object with the emit, the
    /// import and the assembly interfaces over the same tables.
    pub(crate) fn emit(&self) -> MetadataEmit {
        let emit = crate::export_multi::<
            (
                IMetaDataEmit2,
                IMetaDataImport2,
                IMetaDataAssemblyEmit,
                IMetaDataAssemblyImport,
            ),
            _,
        >(self.clone());
        MetadataEmit::new(emit.cast::<IMetaDataEmit>().expect("a parent interface"))
            .expect("an emitter with the import and assembly interfaces")
    }

    /// Answers one batch of an enumeration over `tokens` (each a `u32`
    /// token): the handle holds the position reached (plus one, so that a
    /// started enumeration is not null); a null handle opens one.
    ///
    /// # Safety
    ///
    /// `handle` is valid; `out` has room for `max` tokens; `count` is valid.
    unsafe fn answer<T>(
        &self,
        handle: *mut HCORENUM,
        out: *mut T,
        max: ULONG,
        count: *mut ULONG,
        tokens: &[u32],
    ) -> HRESULT {
        // SAFETY: the caller's contract; `T` is a u32 token.
        unsafe {
            if (*handle).is_null() {
                self.t().opened += 1;
            }
            let at = (*handle as usize).saturating_sub(1);
            let n = tokens.len().saturating_sub(at).min(max as usize);
            for (i, t) in tokens[at..at + n].iter().enumerate() {
                out.cast::<u32>().add(i).write(*t);
            }
            *handle = (at + n + 1) as HCORENUM;
            *count = n as ULONG;
            if n == 0 {
                S_FALSE
            } else {
                S_OK
            }
        }
    }
}

/// A NUL-terminated UTF-16 string as a `String`.
///
/// # Safety
///
/// `s` points to a NUL-terminated string.
pub(crate) unsafe fn read_wide(s: LPCWSTR) -> String {
    let mut units = Vec::new();
    // SAFETY: reads up to and excluding the terminator the caller promised.
    unsafe {
        let mut p = s;
        while *p != 0 {
            units.push(*p);
            p = p.add(1);
        }
    }
    String::from_utf16_lossy(&units)
}

/// Answers `text` by the length-then-buffer protocol: the length with the
/// terminator to `*needed` (when not null), as much as fits in `cap`
/// characters (terminated) to `buf` (when not null); `CLDB_S_TRUNCATION`
/// when it did not fit.
///
/// # Safety
///
/// `buf` is null or has room for `cap` characters; `needed` is null or
/// valid for a write.
pub(crate) unsafe fn answer_wide(
    text: &str,
    buf: LPWSTR,
    cap: ULONG,
    needed: *mut ULONG,
) -> HRESULT {
    let units: Vec<u16> = text.encode_utf16().chain([0]).collect();
    let cap = cap as usize;
    // SAFETY: forwarded contract.
    unsafe {
        if !needed.is_null() {
            *needed = units.len() as ULONG;
        }
        if !buf.is_null() && cap > 0 {
            let n = units.len().min(cap);
            core::ptr::copy_nonoverlapping(units.as_ptr(), buf, n);
            *buf.add(n - 1) = 0;
        }
    }
    if units.len() > cap && !buf.is_null() {
        CLDB_S_TRUNCATION
    } else {
        S_OK
    }
}

/// Writes `value` through `out` unless it is null.
///
/// # Safety
///
/// `out` is null or valid for a write.
unsafe fn put<T>(out: *mut T, value: T) {
    if !out.is_null() {
        // SAFETY: the caller's contract.
        unsafe { *out = value };
    }
}

/// Writes a blob out-pair (the blob lives as long as the scope).
///
/// # Safety
///
/// Both pointers are null or valid for writes.
unsafe fn put_blob(blob: &[u8], out: *mut PCCOR_SIGNATURE, len: *mut ULONG) {
    // SAFETY: the caller's contract.
    unsafe {
        put(out, blob.as_ptr());
        put(len, blob.len() as ULONG);
    }
}

impl IMetaDataImport_Impl for FakeScope {
    unsafe fn CloseEnum(&self, _handle: HCORENUM) {
        self.t().closed += 1;
    }

    unsafe fn FindTypeDefByName(
        &self,
        name: LPCWSTR,
        enclosing: mdToken,
        out: *mut mdTypeDef,
    ) -> HRESULT {
        // SAFETY: the caller passes a NUL-terminated name.
        let name = unsafe { read_wide(name) };
        let found = self.t().types.iter().position(|t| {
            t.name == name && t.enclosing.map_or(mdToken(0), mdTypeDef::token) == enclosing
        });
        let Some(i) = found else {
            return CLDB_E_RECORD_NOTFOUND;
        };
        // SAFETY: a valid out-pointer.
        unsafe { put(out, mdTypeDef(token(0x02, i))) };
        S_OK
    }

    unsafe fn FindMethod(
        &self,
        class: mdTypeDef,
        name: LPCWSTR,
        sig: PCCOR_SIGNATURE,
        sig_len: ULONG,
        out: *mut mdMethodDef,
    ) -> HRESULT {
        // SAFETY: the caller passes a NUL-terminated name and `sig_len`
        // bytes at `sig`.
        let (name, sig) = unsafe {
            (
                read_wide(name),
                core::slice::from_raw_parts(sig, sig_len as usize),
            )
        };
        let found = self
            .t()
            .methods
            .iter()
            .position(|m| m.class == class && m.name == name && *m.sig == *sig);
        let Some(i) = found else {
            return CLDB_E_RECORD_NOTFOUND;
        };
        // SAFETY: a valid out-pointer.
        unsafe { put(out, mdMethodDef(token(0x06, i))) };
        S_OK
    }

    unsafe fn EnumMethods(
        &self,
        handle: *mut HCORENUM,
        class: mdTypeDef,
        out: *mut mdMethodDef,
        max: ULONG,
        count: *mut ULONG,
    ) -> HRESULT {
        let methods: Vec<u32> = {
            let t = self.t();
            if type_row(&t, class.0).is_none() {
                return CLDB_E_RECORD_NOTFOUND;
            }
            (0..t.methods.len())
                .filter(|&i| t.methods[i].class == class)
                .map(|i| token(0x06, i))
                .collect()
        };
        // SAFETY: the caller's enumeration contract.
        unsafe { self.answer(handle, out, max, count, &methods) }
    }

    unsafe fn GetMethodProps(
        &self,
        method: mdMethodDef,
        class: *mut mdTypeDef,
        name: LPWSTR,
        cap: ULONG,
        needed: *mut ULONG,
        attributes: *mut DWORD,
        sig: *mut PCCOR_SIGNATURE,
        sig_len: *mut ULONG,
        rva: *mut ULONG,
        impl_flags: *mut DWORD,
    ) -> HRESULT {
        let t = self.t();
        let Some(m) = row(method.0, 0x06).and_then(|i| t.methods.get(i)) else {
            return CLDB_E_RECORD_NOTFOUND;
        };
        // SAFETY: null or valid pointers, a buffer of `cap` characters.
        unsafe {
            put(class, m.class);
            put(attributes, m.attributes);
            put_blob(&m.sig, sig, sig_len);
            put(rva, 0);
            put(impl_flags, m.impl_flags);
            answer_wide(&m.name, name, cap, needed)
        }
    }

    unsafe fn GetTypeDefProps(
        &self,
        typedef: mdTypeDef,
        name: LPWSTR,
        cap: ULONG,
        needed: *mut ULONG,
        flags: *mut DWORD,
        extends: *mut mdToken,
    ) -> HRESULT {
        let tables = self.t();
        let Some(t) = type_row(&tables, typedef.0) else {
            return CLDB_E_RECORD_NOTFOUND;
        };
        // SAFETY: null or valid pointers, a buffer of `cap` characters.
        unsafe {
            put(flags, t.flags);
            put(extends, t.extends);
            answer_wide(&t.name, name, cap, needed)
        }
    }

    unsafe fn GetTypeRefProps(
        &self,
        typeref: mdTypeRef,
        scope: *mut mdToken,
        name: LPWSTR,
        cap: ULONG,
        needed: *mut ULONG,
    ) -> HRESULT {
        let t = self.t();
        let Some((parent, text)) = row(typeref.0, 0x01).and_then(|i| t.type_refs.get(i)) else {
            return CLDB_E_RECORD_NOTFOUND;
        };
        // SAFETY: null or valid pointers, a buffer of `cap` characters.
        unsafe {
            put(scope, *parent);
            answer_wide(text, name, cap, needed)
        }
    }

    unsafe fn ResolveTypeRef(
        &self,
        _typeref: mdTypeRef,
        _iid: REFIID,
        _scope: *mut *mut core::ffi::c_void,
        _typedef: *mut mdTypeDef,
    ) -> HRESULT {
        // The defining module is never loaded here (cor.h: `ResolveTypeRef`
        // fails with `CLDB_E_RECORD_NOTFOUND` when it cannot find it).
        CLDB_E_RECORD_NOTFOUND
    }

    unsafe fn GetCustomAttributeByName(
        &self,
        owner: mdToken,
        name: LPCWSTR,
        data: *mut *const core::ffi::c_void,
        len: *mut ULONG,
    ) -> HRESULT {
        // SAFETY: the caller passes a NUL-terminated name.
        let name = unsafe { read_wide(name) };
        let tables = self.t();
        let Some(t) = type_row(&tables, owner.0) else {
            return S_FALSE;
        };
        if !t.attributes.contains(&name) {
            return S_FALSE;
        }
        // A custom attribute blob with no arguments: the prolog 0x0001 and
        // no named arguments (II.23.3).
        static BLOB: [u8; 4] = [0x01, 0x00, 0x00, 0x00];
        // SAFETY: null or valid out-pointers.
        unsafe {
            put(data, BLOB.as_ptr().cast());
            put(len, BLOB.len() as ULONG);
        }
        S_OK
    }

    unsafe fn GetNestedClassProps(&self, nested: mdTypeDef, enclosing: *mut mdTypeDef) -> HRESULT {
        let Some(outer) = type_row(&self.t(), nested.0).and_then(|t| t.enclosing) else {
            return CLDB_E_RECORD_NOTFOUND;
        };
        // SAFETY: a valid out-pointer.
        unsafe { put(enclosing, outer) };
        S_OK
    }

    unsafe fn GetMemberRefProps(
        &self,
        member: mdMemberRef,
        parent: *mut mdToken,
        name: LPWSTR,
        cap: ULONG,
        needed: *mut ULONG,
        sig: *mut PCCOR_SIGNATURE,
        sig_len: *mut ULONG,
    ) -> HRESULT {
        let t = self.t();
        let Some((owner, text, blob)) = row(member.0, 0x0A).and_then(|i| t.member_refs.get(i))
        else {
            return CLDB_E_RECORD_NOTFOUND;
        };
        // SAFETY: null or valid pointers, a buffer of `cap` characters.
        unsafe {
            put(parent, *owner);
            put_blob(blob, sig, sig_len);
            answer_wide(text, name, cap, needed)
        }
    }

    unsafe fn GetSigFromToken(
        &self,
        signature: mdSignature,
        sig: *mut PCCOR_SIGNATURE,
        sig_len: *mut ULONG,
    ) -> HRESULT {
        let t = self.t();
        let Some(blob) = row(signature.0, 0x11).and_then(|i| t.signatures.get(i)) else {
            return CLDB_E_RECORD_NOTFOUND;
        };
        // SAFETY: valid out-pointers.
        unsafe { put_blob(blob, sig, sig_len) };
        S_OK
    }

    unsafe fn EnumTypeRefs(
        &self,
        h: *mut HCORENUM,
        out: *mut mdTypeRef,
        max: ULONG,
        n: *mut ULONG,
    ) -> HRESULT {
        let tokens = rows(0x0100_0000, self.t().type_refs.len());
        // SAFETY: the caller's pointers.
        unsafe { self.answer(h, out, max, n, &tokens) }
    }
    unsafe fn FindTypeRef(&self, scope: mdToken, name: LPCWSTR, out: *mut mdTypeRef) -> HRESULT {
        // SAFETY: a NUL-terminated name.
        let name = unsafe { read(name) };
        let (found, delay) = {
            let t = self.t();
            if let Some(hr) = t.find_type_ref_fails {
                return hr;
            }
            let found = t
                .type_refs
                .iter()
                .position(|(s, n)| *s == scope && *n == name);
            (found, t.find_delay_ms)
        };
        // Answer late: a caller that then defines races with the others.
        std::thread::sleep(std::time::Duration::from_millis(delay));
        match found {
            Some(i) => {
                // SAFETY: a valid out-pointer.
                unsafe { *out = mdTypeRef::from_rid(i as u32 + 1) };
                S_OK
            }
            None => CLDB_E_RECORD_NOTFOUND,
        }
    }
    unsafe fn FindMemberRef(
        &self,
        parent: mdTypeRef,
        name: LPCWSTR,
        sig: PCCOR_SIGNATURE,
        len: ULONG,
        out: *mut mdMemberRef,
    ) -> HRESULT {
        // SAFETY: a NUL-terminated name and `len` bytes.
        let (name, sig) = unsafe { (read(name), bytes(sig, len)) };
        let t = self.t();
        match t
            .member_refs
            .iter()
            .position(|(p, n, s)| p.0 == parent.0 && *n == name && *s == sig)
        {
            Some(i) => {
                // SAFETY: a valid out-pointer.
                unsafe { *out = mdMemberRef::from_rid(i as u32 + 1) };
                S_OK
            }
            None => CLDB_E_RECORD_NOTFOUND,
        }
    }
    unsafe fn EnumTypeSpecs(
        &self,
        h: *mut HCORENUM,
        out: *mut mdTypeSpec,
        max: ULONG,
        n: *mut ULONG,
    ) -> HRESULT {
        let tokens = rows(0x1B00_0000, self.t().type_specs.len());
        // SAFETY: the caller's pointers.
        unsafe { self.answer(h, out, max, n, &tokens) }
    }
    unsafe fn GetTypeSpecFromToken(
        &self,
        ts: mdTypeSpec,
        sig: *mut PCCOR_SIGNATURE,
        len: *mut ULONG,
    ) -> HRESULT {
        let t = self.t();
        let b = &t.type_specs[ts.rid() as usize - 1];
        // SAFETY: valid out-pointers; the box outlives the test's use.
        unsafe {
            *sig = b.as_ptr();
            *len = b.len() as ULONG;
        }
        S_OK
    }
    unsafe fn EnumSignatures(
        &self,
        h: *mut HCORENUM,
        out: *mut mdSignature,
        max: ULONG,
        n: *mut ULONG,
    ) -> HRESULT {
        let tokens = rows(0x1100_0000, self.t().signatures.len());
        // SAFETY: the caller's pointers.
        unsafe { self.answer(h, out, max, n, &tokens) }
    }
    unsafe fn EnumUserStrings(
        &self,
        h: *mut HCORENUM,
        out: *mut mdString,
        max: ULONG,
        n: *mut ULONG,
    ) -> HRESULT {
        let tokens = rows(0x7000_0000, self.t().user_strings.len());
        // SAFETY: the caller's pointers.
        unsafe { self.answer(h, out, max, n, &tokens) }
    }
    unsafe fn GetUserString(
        &self,
        s: mdString,
        buf: LPWSTR,
        cap: ULONG,
        len: *mut ULONG,
    ) -> HRESULT {
        let t = self.t();
        let units = &t.user_strings[s.rid() as usize - 1];
        // SAFETY: a buffer of `cap` units (null when 0); valid out-pointer.
        unsafe {
            *len = units.len() as ULONG;
            let k = units.len().min(cap as usize);
            if k > 0 {
                core::ptr::copy_nonoverlapping(units.as_ptr(), buf, k);
            }
        }
        S_OK
    }
}

impl IMetaDataImport2_Impl for FakeScope {
    unsafe fn EnumGenericParams(
        &self,
        handle: *mut HCORENUM,
        owner: mdToken,
        out: *mut mdGenericParam,
        max: ULONG,
        count: *mut ULONG,
    ) -> HRESULT {
        let n = type_row(&self.t(), owner.0).map_or(0, |t| t.generic_params);
        // Made-up GenericParam rows, one per parameter.
        let params: Vec<u32> = (0..n as usize).map(|i| token(0x2A, i)).collect();
        // SAFETY: the caller's enumeration contract.
        unsafe { self.answer(handle, out, max, count, &params) }
    }

    unsafe fn EnumMethodSpecs(
        &self,
        h: *mut HCORENUM,
        parent: mdToken,
        out: *mut mdMethodSpec,
        max: ULONG,
        n: *mut ULONG,
    ) -> HRESULT {
        let tokens: Vec<u32> = self
            .t()
            .method_specs
            .iter()
            .enumerate()
            .filter(|(_, (p, _))| *p == parent)
            .map(|(i, _)| 0x2B00_0000 | (i as u32 + 1))
            .collect();
        // SAFETY: the caller's pointers.
        unsafe { self.answer(h, out, max, n, &tokens) }
    }
    unsafe fn GetMethodSpecProps(
        &self,
        spec: mdMethodSpec,
        parent: *mut mdToken,
        sig: *mut PCCOR_SIGNATURE,
        sig_len: *mut ULONG,
    ) -> HRESULT {
        let t = self.t();
        let Some((method, blob)) = row(spec.0, 0x2B).and_then(|i| t.method_specs.get(i)) else {
            return CLDB_E_RECORD_NOTFOUND;
        };
        // SAFETY: valid out-pointers.
        unsafe {
            put(parent, *method);
            put_blob(blob, sig, sig_len);
        }
        S_OK
    }
}

impl IMetaDataEmit_Impl for FakeScope {
    unsafe fn DefineTypeRefByName(
        &self,
        scope: mdToken,
        name: LPCWSTR,
        out: *mut mdTypeRef,
    ) -> HRESULT {
        let mut t = self.t();
        // SAFETY: the facade passes a NUL-terminated name.
        t.type_refs.push((scope, unsafe { read(name) }));
        t.defines += 1;
        // SAFETY: a valid out-pointer.
        unsafe { *out = mdTypeRef::from_rid(t.type_refs.len() as u32) };
        S_OK
    }
    unsafe fn DefineMemberRef(
        &self,
        parent: mdToken,
        name: LPCWSTR,
        sig: PCCOR_SIGNATURE,
        len: ULONG,
        out: *mut mdMemberRef,
    ) -> HRESULT {
        let mut t = self.t();
        // SAFETY: a NUL-terminated name and `len` bytes.
        t.member_refs
            .push((parent, unsafe { read(name) }, unsafe { bytes(sig, len) }));
        t.defines += 1;
        // SAFETY: a valid out-pointer.
        unsafe { *out = mdMemberRef::from_rid(t.member_refs.len() as u32) };
        S_OK
    }
    unsafe fn GetTokenFromSig(
        &self,
        sig: PCCOR_SIGNATURE,
        len: ULONG,
        out: *mut mdSignature,
    ) -> HRESULT {
        let mut t = self.t();
        // SAFETY: `len` bytes.
        t.signatures.push(unsafe { bytes(sig, len) });
        t.defines += 1;
        // SAFETY: a valid out-pointer.
        unsafe { *out = mdSignature::from_rid(t.signatures.len() as u32) };
        S_OK
    }
    unsafe fn GetTokenFromTypeSpec(
        &self,
        sig: PCCOR_SIGNATURE,
        len: ULONG,
        out: *mut mdTypeSpec,
    ) -> HRESULT {
        let mut t = self.t();
        // SAFETY: `len` bytes.
        t.type_specs.push(unsafe { bytes(sig, len) });
        t.defines += 1;
        // SAFETY: a valid out-pointer.
        unsafe { *out = mdTypeSpec::from_rid(t.type_specs.len() as u32) };
        S_OK
    }
    unsafe fn DefineUserString(&self, s: LPCWSTR, len: ULONG, out: *mut mdString) -> HRESULT {
        let mut t = self.t();
        // SAFETY: `len` units at `s`.
        let units = unsafe { core::slice::from_raw_parts(s, len as usize) }.to_vec();
        t.user_strings.push(units);
        t.defines += 1;
        // SAFETY: a valid out-pointer.
        unsafe { *out = mdString::from_rid(t.user_strings.len() as u32) };
        S_OK
    }
}

impl IMetaDataEmit2_Impl for FakeScope {
    unsafe fn DefineMethodSpec(
        &self,
        parent: mdToken,
        sig: PCCOR_SIGNATURE,
        len: ULONG,
        out: *mut mdMethodSpec,
    ) -> HRESULT {
        let mut t = self.t();
        // SAFETY: `len` bytes.
        t.method_specs.push((parent, unsafe { bytes(sig, len) }));
        t.defines += 1;
        // SAFETY: a valid out-pointer.
        unsafe { *out = mdMethodSpec::from_rid(t.method_specs.len() as u32) };
        S_OK
    }
}

impl IMetaDataAssemblyEmit_Impl for FakeScope {
    unsafe fn DefineAssemblyRef(
        &self,
        key: *const c_void,
        key_len: ULONG,
        name: LPCWSTR,
        meta: *const ASSEMBLYMETADATA,
        _hash: *const c_void,
        _hash_len: ULONG,
        _flags: DWORD,
        out: *mut mdAssemblyRef,
    ) -> HRESULT {
        let mut t = self.t();
        // SAFETY: the facade's valid pointers; the locale has cbLocale units.
        let row = unsafe {
            let m = &*meta;
            let locale = core::slice::from_raw_parts(m.szLocale, m.cbLocale as usize);
            (
                read(name),
                [
                    m.usMajorVersion,
                    m.usMinorVersion,
                    m.usBuildNumber,
                    m.usRevisionNumber,
                ],
                crate::facade::strings::decode(locale),
                bytes(key.cast::<u8>(), key_len),
            )
        };
        t.assembly_refs.push(row);
        t.defines += 1;
        // SAFETY: a valid out-pointer.
        unsafe { *out = mdAssemblyRef::from_rid(t.assembly_refs.len() as u32) };
        S_OK
    }
}

impl IMetaDataAssemblyImport_Impl for FakeScope {
    unsafe fn EnumAssemblyRefs(
        &self,
        h: *mut HCORENUM,
        out: *mut mdAssemblyRef,
        max: ULONG,
        n: *mut ULONG,
    ) -> HRESULT {
        let tokens = rows(0x2300_0000, self.t().assembly_refs.len());
        // SAFETY: the caller's pointers.
        unsafe { self.answer(h, out, max, n, &tokens) }
    }
    unsafe fn GetAssemblyRefProps(
        &self,
        r: mdAssemblyRef,
        key: *mut *const c_void,
        key_len: *mut ULONG,
        name: LPWSTR,
        cap: ULONG,
        needed: *mut ULONG,
        meta: *mut ASSEMBLYMETADATA,
        _hash: *mut *const c_void,
        _hash_len: *mut ULONG,
        flags: *mut DWORD,
    ) -> HRESULT {
        let t = self.t();
        let (n, v, c, k) = &t.assembly_refs[r.rid() as usize - 1];
        let units: Vec<u16> = n.encode_utf16().chain([0]).collect();
        let culture: Vec<u16> = c.encode_utf16().chain([0]).collect();
        // SAFETY: the facade's valid pointers and buffers.
        unsafe {
            *key = k.as_ptr().cast();
            *key_len = k.len() as ULONG;
            *needed = units.len() as ULONG;
            core::ptr::copy_nonoverlapping(units.as_ptr(), name, units.len().min(cap as usize));
            let m = &mut *meta;
            [
                m.usMajorVersion,
                m.usMinorVersion,
                m.usBuildNumber,
                m.usRevisionNumber,
            ] = *v;
            let room = culture.len().min(m.cbLocale as usize);
            core::ptr::copy_nonoverlapping(culture.as_ptr(), m.szLocale, room);
            m.cbLocale = culture.len() as ULONG;
            *flags = 0;
        }
        S_OK
    }
}
