//! The one fake metadata scope of the unit tests: an `IMetaDataImport`
//! (and `IMetaDataImport2`) over tables a test fills, answering by the
//! runtime's protocols (ECMA-335 II.22 tables; cor.h for the calls: names
//! by length-then-buffer with `CLDB_S_TRUNCATION` when cut, enumerations
//! in batches through an `HCORENUM`, `CLDB_E_RECORD_NOTFOUND` for a token
//! or name it does not hold).
//!
//! Rows are numbered from 1 in the order they are added, as in metadata;
//! every builder returns the new row's token.

use alloc::string::String;
use alloc::vec::Vec;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use super::MetadataImport;
use crate::metadata::{
    mdGenericParam, mdMemberRef, mdMethodDef, mdMethodSpec, mdSignature, mdToken, mdTypeDef,
    mdTypeRef, IMetaDataImport, IMetaDataImport2, IMetaDataImport2_Impl, IMetaDataImport_Impl,
    CLDB_E_RECORD_NOTFOUND, CLDB_S_TRUNCATION, HCORENUM, PCCOR_SIGNATURE,
};
use crate::{DWORD, HRESULT, LPCWSTR, LPWSTR, REFIID, S_FALSE, S_OK, ULONG};

/// `tdPublic`, a top-level type's visibility (corhdr.h `CorTypeAttr`).
pub(crate) const TD_PUBLIC: u32 = 0x1;
/// `tdNestedPublic`, a nested type's.
pub(crate) const TD_NESTED_PUBLIC: u32 = 0x2;

struct TypeDef {
    name: String,
    flags: u32,
    extends: mdToken,
    enclosing: Option<mdTypeDef>,
    attributes: Vec<String>,
    generic_params: u32,
}

struct Method {
    name: String,
    class: mdTypeDef,
    attributes: u32,
    sig: Vec<u8>,
}

/// A module's metadata for unit tests. [`import`](FakeScope::import) hands
/// it out as the facade's [`MetadataImport`].
#[derive(Default)]
pub(crate) struct FakeScope {
    types: Vec<TypeDef>,
    methods: Vec<Method>,
    type_refs: Vec<(String, mdToken)>,
    member_refs: Vec<(mdToken, Vec<u8>)>,
    method_specs: Vec<(mdToken, Vec<u8>)>,
    signatures: Vec<Vec<u8>>,
    /// How many enumerators were closed (`CloseEnum`).
    pub(crate) closed: Arc<AtomicUsize>,
}

fn token(table: u32, index: usize) -> u32 {
    (table << 24) | (index as u32 + 1)
}

/// The row index of `token` in `table`, if it is of that table.
fn row(token: u32, table: u32) -> Option<usize> {
    (token >> 24 == table && token & 0x00FF_FFFF != 0).then(|| (token & 0x00FF_FFFF) as usize - 1)
}

impl FakeScope {
    /// A scope with no rows.
    pub(crate) fn new() -> FakeScope {
        FakeScope::default()
    }

    /// Adds a TypeDef: `name` is `Namespace.Name` (a nested type's own
    /// name), `flags` its `CorTypeAttr`, `extends` its base (nil: none).
    pub(crate) fn type_def(&mut self, name: &str, flags: u32, extends: mdToken) -> mdTypeDef {
        self.types.push(TypeDef {
            name: name.into(),
            flags,
            extends,
            enclosing: None,
            attributes: Vec::new(),
            generic_params: 0,
        });
        mdTypeDef(token(0x02, self.types.len() - 1))
    }

    /// Adds a public type nested in `enclosing`.
    pub(crate) fn nested(&mut self, name: &str, enclosing: mdTypeDef) -> mdTypeDef {
        let t = self.type_def(name, TD_NESTED_PUBLIC, mdToken(0));
        self.set_enclosing(t, enclosing);
        t
    }

    /// Makes `nested` (a TypeDef of this scope) nested in `enclosing`, which
    /// may be any token (broken metadata nests a type in itself).
    pub(crate) fn set_enclosing(&mut self, nested: mdTypeDef, enclosing: mdTypeDef) {
        let i = row(nested.0, 0x02).expect("a TypeDef of this scope");
        self.types[i].enclosing = Some(enclosing);
    }

    /// Gives `typedef` a custom attribute of the type named `name`.
    pub(crate) fn attribute(&mut self, typedef: mdTypeDef, name: &str) {
        let i = row(typedef.0, 0x02).expect("a TypeDef of this scope");
        self.types[i].attributes.push(name.into());
    }

    /// Gives `typedef` `count` generic parameters.
    pub(crate) fn generic_params(&mut self, typedef: mdTypeDef, count: u32) {
        let i = row(typedef.0, 0x02).expect("a TypeDef of this scope");
        self.types[i].generic_params = count;
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
        self.methods.push(Method {
            name: name.into(),
            class,
            attributes,
            sig: sig.to_vec(),
        });
        mdMethodDef(token(0x06, self.methods.len() - 1))
    }

    /// Adds a TypeRef named `name` in resolution scope `scope`.
    pub(crate) fn type_ref(&mut self, scope: mdToken, name: &str) -> mdTypeRef {
        self.type_refs.push((name.into(), scope));
        mdTypeRef(token(0x01, self.type_refs.len() - 1))
    }

    /// Adds a MemberRef of `parent` with signature `sig`.
    pub(crate) fn member_ref(&mut self, parent: mdToken, sig: &[u8]) -> mdMemberRef {
        self.member_refs.push((parent, sig.to_vec()));
        mdMemberRef(token(0x0A, self.member_refs.len() - 1))
    }

    /// Adds a MethodSpec of `method` with instantiation blob `blob`.
    pub(crate) fn method_spec(&mut self, method: mdToken, blob: &[u8]) -> mdMethodSpec {
        self.method_specs.push((method, blob.to_vec()));
        mdMethodSpec(token(0x2B, self.method_specs.len() - 1))
    }

    /// Adds a StandAloneSig.
    pub(crate) fn signature(&mut self, blob: &[u8]) -> mdSignature {
        self.signatures.push(blob.to_vec());
        mdSignature(token(0x11, self.signatures.len() - 1))
    }

    /// The scope as the raw `IMetaDataImport` (an `IMetaDataImport2`
    /// object).
    pub(crate) fn raw(self) -> IMetaDataImport {
        let import2: IMetaDataImport2 = crate::export(self);
        import2
            .cast::<IMetaDataImport>()
            .expect("IMetaDataImport2 derives from IMetaDataImport")
    }

    /// The scope behind the facade.
    pub(crate) fn import(self) -> MetadataImport {
        MetadataImport::new(self.raw())
    }

    fn type_row(&self, typedef: u32) -> Option<&TypeDef> {
        self.types.get(row(typedef, 0x02)?)
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

/// One batch of an enumeration over `tokens`: the handle holds the
/// position reached (plus one, so that a started enumeration is not null).
///
/// # Safety
///
/// `handle` is valid; `out` has room for `max` tokens; `count` is valid.
unsafe fn enumerate<T: Copy>(
    tokens: &[T],
    handle: *mut HCORENUM,
    out: *mut T,
    max: ULONG,
    count: *mut ULONG,
) -> HRESULT {
    // SAFETY: the caller's contract.
    unsafe {
        let at = (*handle as usize).saturating_sub(1);
        let n = tokens.len().saturating_sub(at).min(max as usize);
        for (i, t) in tokens[at..at + n].iter().enumerate() {
            *out.add(i) = *t;
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

impl IMetaDataImport_Impl for FakeScope {
    fn CloseEnum(&self, _handle: HCORENUM) {
        self.closed.fetch_add(1, Ordering::SeqCst);
    }

    fn FindTypeDefByName(&self, name: LPCWSTR, enclosing: mdToken, out: *mut mdTypeDef) -> HRESULT {
        // SAFETY: the caller passes a NUL-terminated name.
        let name = unsafe { read_wide(name) };
        let found = self.types.iter().position(|t| {
            t.name == name && t.enclosing.map_or(mdToken(0), mdTypeDef::token) == enclosing
        });
        let Some(i) = found else {
            return CLDB_E_RECORD_NOTFOUND;
        };
        // SAFETY: a valid out-pointer.
        unsafe { put(out, mdTypeDef(token(0x02, i))) };
        S_OK
    }

    fn FindMethod(
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
            .methods
            .iter()
            .position(|m| m.class == class && m.name == name && m.sig == sig);
        let Some(i) = found else {
            return CLDB_E_RECORD_NOTFOUND;
        };
        // SAFETY: a valid out-pointer.
        unsafe { put(out, mdMethodDef(token(0x06, i))) };
        S_OK
    }

    fn EnumMethods(
        &self,
        handle: *mut HCORENUM,
        class: mdTypeDef,
        out: *mut mdMethodDef,
        max: ULONG,
        count: *mut ULONG,
    ) -> HRESULT {
        if self.type_row(class.0).is_none() {
            return CLDB_E_RECORD_NOTFOUND;
        }
        let methods: Vec<mdMethodDef> = (0..self.methods.len())
            .filter(|&i| self.methods[i].class == class)
            .map(|i| mdMethodDef(token(0x06, i)))
            .collect();
        // SAFETY: the caller's enumeration contract.
        unsafe { enumerate(&methods, handle, out, max, count) }
    }

    fn GetMethodProps(
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
        let Some(m) = row(method.0, 0x06).and_then(|i| self.methods.get(i)) else {
            return CLDB_E_RECORD_NOTFOUND;
        };
        // SAFETY: null or valid pointers, a buffer of `cap` characters.
        unsafe {
            put(class, m.class);
            put(attributes, m.attributes);
            put_blob(&m.sig, sig, sig_len);
            put(rva, 0);
            put(impl_flags, 0);
            answer_wide(&m.name, name, cap, needed)
        }
    }

    fn GetTypeDefProps(
        &self,
        typedef: mdTypeDef,
        name: LPWSTR,
        cap: ULONG,
        needed: *mut ULONG,
        flags: *mut DWORD,
        extends: *mut mdToken,
    ) -> HRESULT {
        let Some(t) = self.type_row(typedef.0) else {
            return CLDB_E_RECORD_NOTFOUND;
        };
        // SAFETY: null or valid pointers, a buffer of `cap` characters.
        unsafe {
            put(flags, t.flags);
            put(extends, t.extends);
            answer_wide(&t.name, name, cap, needed)
        }
    }

    fn GetTypeRefProps(
        &self,
        typeref: mdTypeRef,
        scope: *mut mdToken,
        name: LPWSTR,
        cap: ULONG,
        needed: *mut ULONG,
    ) -> HRESULT {
        let Some((text, parent)) = row(typeref.0, 0x01).and_then(|i| self.type_refs.get(i)) else {
            return CLDB_E_RECORD_NOTFOUND;
        };
        // SAFETY: null or valid pointers, a buffer of `cap` characters.
        unsafe {
            put(scope, *parent);
            answer_wide(text, name, cap, needed)
        }
    }

    fn ResolveTypeRef(
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

    fn GetCustomAttributeByName(
        &self,
        owner: mdToken,
        name: LPCWSTR,
        data: *mut *const core::ffi::c_void,
        len: *mut ULONG,
    ) -> HRESULT {
        // SAFETY: the caller passes a NUL-terminated name.
        let name = unsafe { read_wide(name) };
        let Some(t) = self.type_row(owner.0) else {
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

    fn GetNestedClassProps(&self, nested: mdTypeDef, enclosing: *mut mdTypeDef) -> HRESULT {
        let Some(outer) = self.type_row(nested.0).and_then(|t| t.enclosing) else {
            return CLDB_E_RECORD_NOTFOUND;
        };
        // SAFETY: a valid out-pointer.
        unsafe { put(enclosing, outer) };
        S_OK
    }

    fn GetMemberRefProps(
        &self,
        member: mdMemberRef,
        parent: *mut mdToken,
        name: LPWSTR,
        cap: ULONG,
        needed: *mut ULONG,
        sig: *mut PCCOR_SIGNATURE,
        sig_len: *mut ULONG,
    ) -> HRESULT {
        let Some((owner, blob)) = row(member.0, 0x0A).and_then(|i| self.member_refs.get(i)) else {
            return CLDB_E_RECORD_NOTFOUND;
        };
        // SAFETY: null or valid pointers, a buffer of `cap` characters.
        unsafe {
            put(parent, *owner);
            put_blob(blob, sig, sig_len);
            answer_wide("", name, cap, needed)
        }
    }

    fn GetSigFromToken(
        &self,
        signature: mdSignature,
        sig: *mut PCCOR_SIGNATURE,
        sig_len: *mut ULONG,
    ) -> HRESULT {
        let Some(blob) = row(signature.0, 0x11).and_then(|i| self.signatures.get(i)) else {
            return CLDB_E_RECORD_NOTFOUND;
        };
        // SAFETY: valid out-pointers.
        unsafe { put_blob(blob, sig, sig_len) };
        S_OK
    }
}

impl IMetaDataImport2_Impl for FakeScope {
    fn EnumGenericParams(
        &self,
        handle: *mut HCORENUM,
        owner: mdToken,
        out: *mut mdGenericParam,
        max: ULONG,
        count: *mut ULONG,
    ) -> HRESULT {
        let n = self.type_row(owner.0).map_or(0, |t| t.generic_params);
        // Made-up GenericParam rows, one per parameter.
        let params: Vec<mdGenericParam> =
            (1..=n).map(|i| mdGenericParam((0x2A << 24) | i)).collect();
        // SAFETY: the caller's enumeration contract.
        unsafe { enumerate(&params, handle, out, max, count) }
    }

    fn GetMethodSpecProps(
        &self,
        spec: mdMethodSpec,
        parent: *mut mdToken,
        sig: *mut PCCOR_SIGNATURE,
        sig_len: *mut ULONG,
    ) -> HRESULT {
        let Some((method, blob)) = row(spec.0, 0x2B).and_then(|i| self.method_specs.get(i)) else {
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
