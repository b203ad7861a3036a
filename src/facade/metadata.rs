//! [`MetadataImport`]: names of types and methods, read from a module's
//! metadata (`IMetaDataImport`), lookups by name, and the call-site
//! signatures IL rewriting needs.

use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

use super::info::Result;
use super::strings::{wide, write_utf16, Utf16Buf};
#[cfg(feature = "cil")]
use crate::cil::{MethodSig, StackSig, Token};
use crate::metadata::{
    mdGenericParam, mdMemberRef, mdMethodDef, mdMethodSpec, mdSignature, mdToken, mdTypeDef,
    mdtMemberRef, mdtMethodDef, mdtMethodSpec, mdtSignature, tdNestedPublic, tdVisibilityMask,
    IMetaDataImport, IMetaDataImport2, HCORENUM, PCCOR_SIGNATURE,
};
use crate::{E_FAIL, E_INVALIDARG, HRESULT};

/// The most rows a metadata table can hold: a token's row number has 24 bits.
const MAX_ROWS: usize = 0x00FF_FFFF;

/// A module's metadata, for reading names. Derefs to the raw
/// [`IMetaDataImport`] invoker for everything else.
#[derive(Clone, Debug)]
pub struct MetadataImport {
    raw: IMetaDataImport,
}

/// A method's name and its declaring type's full name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MethodName {
    /// The declaring type's full name: namespace, enclosing types joined
    /// with `+` (`Program`, `MyApp.Outer+Inner`).
    pub type_name: String,
    /// The method's own name (`Fib`, `.ctor`).
    pub method_name: String,
}

impl fmt::Display for MethodName {
    /// `Type.Method`, as ildasm and stack traces print it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.type_name.is_empty() {
            f.write_str(&self.method_name)
        } else {
            write!(f, "{}.{}", self.type_name, self.method_name)
        }
    }
}

/// A method's properties: what `GetMethodProps` answers.
#[derive(Clone, Debug)]
pub struct MethodProps<'a> {
    /// The method's name.
    pub name: String,
    /// The type that declares it.
    pub declaring_type: mdTypeDef,
    /// `CorMethodAttr` flags.
    pub attributes: u32,
    /// `CorMethodImpl` flags.
    pub impl_flags: u32,
    /// The relative virtual address of its body (0 for abstract/extern).
    pub code_rva: u32,
    /// Its signature blob (decode it with [`crate::cil::MethodSig::decode`]).
    pub signature: &'a [u8],
}

impl MetadataImport {
    /// Wraps a raw invoker.
    pub fn new(raw: IMetaDataImport) -> MetadataImport {
        MetadataImport { raw }
    }

    /// The raw invoker.
    pub fn raw(&self) -> &IMetaDataImport {
        &self.raw
    }

    /// A method's properties (`GetMethodProps`).
    pub fn method_props(&self, method: mdMethodDef) -> Result<MethodProps<'_>> {
        let mut name = Utf16Buf::new();
        let props = self.method_props_into(method, &mut name)?;
        Ok(MethodProps {
            name: name.to_string_lossy(),
            ..props
        })
    }

    /// `GetMethodProps` with the name read into `name` (the returned
    /// props' `name` is empty).
    fn method_props_into(
        &self,
        method: mdMethodDef,
        name: &mut Utf16Buf,
    ) -> Result<MethodProps<'_>> {
        let mut class = mdTypeDef(0);
        let (mut attributes, mut impl_flags, mut code_rva, mut sig_len) = (0, 0, 0, 0);
        let mut sig: PCCOR_SIGNATURE = core::ptr::null();
        name.read(|cap, needed, buf| {
            // SAFETY: `read` passes a buffer of `cap` characters; the other
            // out-pointers are locals.
            unsafe {
                self.raw.GetMethodProps(
                    method,
                    &mut class,
                    buf,
                    cap,
                    needed,
                    &mut attributes,
                    &mut sig,
                    &mut sig_len,
                    &mut code_rva,
                    &mut impl_flags,
                )
            }
        })?;
        let signature = if sig.is_null() {
            &[][..]
        } else {
            // SAFETY: the runtime answered `sig_len` bytes at `sig`, owned by
            // the metadata scope, which lives at least as long as `self`.
            unsafe { core::slice::from_raw_parts(sig, sig_len as usize) }
        };
        Ok(MethodProps {
            name: String::new(),
            declaring_type: class,
            attributes,
            impl_flags,
            code_rva,
            signature,
        })
    }

    /// A type's full name: namespace and name (`GetTypeDefProps`), prefixed
    /// by its enclosing types for nested types (`Outer+Inner`, at most 32
    /// levels up).
    pub fn type_name(&self, typedef: mdTypeDef) -> Result<String> {
        let mut name = String::new();
        self.write_type_name(typedef, &mut name)?;
        Ok(name)
    }

    /// Writes [`type_name`](MetadataImport::type_name) to `out` without
    /// allocating for a type that is not nested (the name is read on the
    /// stack and converted as it is written). On a failure of the runtime
    /// nothing is written; a failure of `out` is `E_FAIL`.
    pub fn write_type_name(&self, typedef: mdTypeDef, out: &mut impl fmt::Write) -> Result<()> {
        let mut name = Utf16Buf::new();
        let flags = self.type_def_into(typedef, &mut name)?;
        self.finish_type_name(typedef, &mut name, flags, out)
    }

    /// Writes the full name of `typedef`, whose own name and flags have
    /// been read into `name` and `flags`.
    fn finish_type_name(
        &self,
        typedef: mdTypeDef,
        name: &mut Utf16Buf,
        flags: u32,
        out: &mut impl fmt::Write,
    ) -> Result<()> {
        if !is_nested(flags) {
            return write_utf16(out, name.units()).map_err(|_| E_FAIL.into());
        }
        // Nested (rare): enclosing types first, so collect the chain.
        let mut full = name.to_string_lossy();
        let mut current = typedef;
        for _ in 0..32 {
            let mut enclosing = mdTypeDef(0);
            // SAFETY: a valid out-pointer. A failure code ends the walk.
            let hr = unsafe { self.raw.GetNestedClassProps(current, &mut enclosing) };
            if hr.is_err() || enclosing.is_nil() {
                break;
            }
            let outer_flags = self.type_def_into(enclosing, name)?;
            let mut outer = name.to_string_lossy();
            outer.push('+');
            outer.push_str(&full);
            full = outer;
            if !is_nested(outer_flags) {
                break;
            }
            current = enclosing;
        }
        out.write_str(&full).map_err(|_| E_FAIL.into())
    }

    /// `GetTypeDefProps`: the name into `name`, the flags returned.
    fn type_def_into(&self, typedef: mdTypeDef, name: &mut Utf16Buf) -> Result<u32> {
        let (mut flags, mut extends) = (0, mdToken(0));
        name.read(|cap, needed, buf| {
            // SAFETY: as in `method_props_into`.
            unsafe {
                self.raw
                    .GetTypeDefProps(typedef, buf, cap, needed, &mut flags, &mut extends)
            }
        })?;
        Ok(flags)
    }

    /// Finds a type by its full name (`FindTypeDefByName`): namespace and
    /// name joined with `.` (`E2E.Rewrite.Program`). A nested type is found
    /// by its own name with its enclosing type in `enclosing`.
    /// `CLDB_E_RECORD_NOTFOUND` when the module defines no such type.
    pub fn find_type_def(&self, name: &str, enclosing: Option<mdTypeDef>) -> Result<mdTypeDef> {
        let name = wide(name)?;
        let enclosing = enclosing.map_or(mdToken(0), mdTypeDef::token);
        let mut typedef = mdTypeDef(0);
        // SAFETY: `name` is NUL-terminated and outlives the call; a valid
        // out-pointer.
        unsafe {
            self.raw
                .FindTypeDefByName(name.as_ptr(), enclosing, &mut typedef)
        }
        .ok_with("FindTypeDefByName")?;
        Ok(typedef)
    }

    /// Finds a method of `typedef` by name and signature (`FindMethod`).
    /// `signature` is the MethodDefSig blob to match, which tells overloads
    /// apart: `[0x00, 0x00, 0x01]` is `static void ()`, `[0x00, 0x01,
    /// 0x08, 0x08]` is `static int (int)` (encode others with
    /// [`MethodSig::encode`]). `CLDB_E_RECORD_NOTFOUND` when there is none.
    pub fn find_method(
        &self,
        typedef: mdTypeDef,
        name: &str,
        signature: &[u8],
    ) -> Result<mdMethodDef> {
        let name = wide(name)?;
        let len = u32::try_from(signature.len()).map_err(|_| E_INVALIDARG)?;
        let mut method = mdMethodDef(0);
        // SAFETY: `name` is NUL-terminated and `signature` has `len` bytes,
        // both outliving the call; a valid out-pointer.
        unsafe {
            self.raw
                .FindMethod(typedef, name.as_ptr(), signature.as_ptr(), len, &mut method)
        }
        .ok_with("FindMethod")?;
        Ok(method)
    }

    /// The MethodDefs of `typedef`, in metadata order (`EnumMethods`).
    /// `E_UNEXPECTED` if the enumerator yields more tokens than a metadata
    /// table can hold.
    pub fn methods(&self, typedef: mdTypeDef) -> Result<Vec<mdMethodDef>> {
        // SAFETY: the enumerate contract: a valid handle, a buffer of `max`.
        enumerate(&self.raw, |h, out, max, n| unsafe {
            self.raw.EnumMethods(h, typedef, out, max, n)
        })
    }

    /// The GenericParams of a type or method, in metadata order
    /// (`EnumGenericParams`).
    pub fn generic_params(&self, owner: mdToken) -> Result<Vec<mdGenericParam>> {
        let import2 = self.raw.cast::<IMetaDataImport2>()?;
        // SAFETY: the enumerate contract.
        enumerate(&self.raw, |h, out, max, n| unsafe {
            import2.EnumGenericParams(h, owner, out, max, n)
        })
    }

    /// The signature blob of what a `call`, `callvirt`, `newobj`, `ldftn`
    /// or `calli` token names: a MethodDef's or MemberRef's own signature,
    /// a MethodSpec's generic method's signature, or a StandAloneSig
    /// (`calli`). `E_INVALIDARG` for tokens of other tables.
    pub fn method_signature(&self, token: mdToken) -> Result<&[u8]> {
        let mut sig: PCCOR_SIGNATURE = core::ptr::null();
        let mut len: u32 = 0;
        let table = token.token_type();
        if table == mdtMethodDef {
            return Ok(self.method_props(mdMethodDef(token.0))?.signature);
        } else if table == mdtMemberRef {
            let mut parent = mdToken(0);
            // SAFETY: a zero-capacity name buffer (null) is allowed: the
            // name is not asked for; the other out-pointers are locals.
            unsafe {
                self.raw.GetMemberRefProps(
                    mdMemberRef(token.0),
                    &mut parent,
                    core::ptr::null_mut(),
                    0,
                    core::ptr::null_mut(),
                    &mut sig,
                    &mut len,
                )
            }
            .ok_with("GetMemberRefProps")?;
        } else if table == mdtMethodSpec {
            // MethodSpecs came with generics: IMetaDataImport2.
            let import2 = self.raw.cast::<IMetaDataImport2>()?;
            let mut parent = mdToken(0);
            let (mut spec, mut spec_len) = (core::ptr::null(), 0);
            // SAFETY: valid out-pointers.
            unsafe {
                import2.GetMethodSpecProps(
                    mdMethodSpec(token.0),
                    &mut parent,
                    &mut spec,
                    &mut spec_len,
                )
            }
            .ok_with("GetMethodSpecProps")?;
            let parent_table = parent.token_type();
            if parent_table != mdtMethodDef && parent_table != mdtMemberRef {
                return Err(E_FAIL.into());
            }
            return self.method_signature(parent);
        } else if table == mdtSignature {
            // SAFETY: valid out-pointers.
            unsafe {
                self.raw
                    .GetSigFromToken(mdSignature(token.0), &mut sig, &mut len)
            }
            .ok_with("GetSigFromToken")?;
        } else {
            return Err(E_INVALIDARG.into());
        }
        if sig.is_null() {
            return Ok(&[]);
        }
        // SAFETY: the runtime answered `len` bytes at `sig`, owned by the
        // metadata scope, which lives at least as long as `self`.
        Ok(unsafe { core::slice::from_raw_parts(sig, len as usize) })
    }

    /// [`find_method`](Self::find_method) with the signature built rather
    /// than spelled in bytes:
    /// `import.find_method_sig(program, "Work", &MethodSig::static_method(TypeSig::I4, vec![TypeSig::I4]))`
    /// finds `static int Work(int)`. `E_INVALIDARG` when the signature does
    /// not encode.
    #[cfg(feature = "cil")]
    #[cfg_attr(docsrs, doc(cfg(feature = "cil")))]
    pub fn find_method_sig(
        &self,
        typedef: mdTypeDef,
        name: &str,
        signature: &MethodSig,
    ) -> Result<mdMethodDef> {
        let blob = signature
            .encode()
            .map_err(|_| crate::Error::new(E_INVALIDARG, "the signature does not encode"))?;
        self.find_method(typedef, name, &blob)
    }

    /// The stack effect of a call site's token, for
    /// [`MethodBody::update_max_stack`](crate::cil::MethodBody::update_max_stack):
    /// `body.update_max_stack(|token| import.stack_sig(token))`. `None` when
    /// the token names no method or its signature does not decode.
    #[cfg(feature = "cil")]
    #[cfg_attr(docsrs, doc(cfg(feature = "cil")))]
    pub fn stack_sig(&self, token: Token) -> Option<StackSig> {
        let blob = self.method_signature(mdToken(token.0)).ok()?;
        MethodSig::decode(blob).ok().map(|sig| sig.stack_sig())
    }

    /// A method's name and its declaring type's full name.
    pub fn method_name(&self, method: mdMethodDef) -> Result<MethodName> {
        let mut name = Utf16Buf::new();
        let props = self.method_props_into(method, &mut name)?;
        let mut type_name = String::new();
        if !props.declaring_type.is_nil() {
            self.write_type_name(props.declaring_type, &mut type_name)?;
        }
        Ok(MethodName {
            type_name,
            method_name: name.to_string_lossy(),
        })
    }

    /// Writes a method's name as [`MethodName`] displays it
    /// (`Namespace.Type.Method`, `Outer+Inner.Method`) to `out`, with no
    /// allocation for names that fit on the stack (256 characters) of types
    /// that are not nested: the names are read into stack buffers and
    /// converted to UTF-8 as they are written.
    ///
    /// Every runtime call is made before anything is written, so on a
    /// failure of the runtime nothing is written; a failure of `out` is
    /// `E_FAIL`.
    pub fn write_method_name(&self, method: mdMethodDef, out: &mut impl fmt::Write) -> Result<()> {
        let mut name = Utf16Buf::new();
        let props = self.method_props_into(method, &mut name)?;
        if props.declaring_type.is_nil() {
            return write_utf16(out, name.units()).map_err(|_| E_FAIL.into());
        }
        let mut type_name = Utf16Buf::new();
        let flags = self.type_def_into(props.declaring_type, &mut type_name)?;
        if is_nested(flags) {
            // Rare: the enclosing types' names are collected before
            // anything is written.
            let mut full = String::new();
            self.finish_type_name(props.declaring_type, &mut type_name, flags, &mut full)?;
            out.write_str(&full).map_err(|_| E_FAIL)?;
        } else {
            write_utf16(out, type_name.units()).map_err(|_| E_FAIL)?;
        }
        out.write_char('.').map_err(|_| E_FAIL)?;
        write_utf16(out, name.units()).map_err(|_| E_FAIL.into())
    }
}

/// Whether `CorTypeAttr` flags say the type is nested (its visibility is
/// one of `tdNestedPublic` .. `tdNestedFamORAssem`).
fn is_nested(flags: u32) -> bool {
    flags & tdVisibilityMask.0 >= tdNestedPublic.0
}

/// Reads every token of a metadata enumeration (an `Enum*` method of
/// `import`'s scope: `next(handle, buffer, max, fetched)`), closing the
/// enumerator; `E_UNEXPECTED` past 2^24 tokens (a token's row number has 24
/// bits, so an enumerator that goes on is broken, and is refused before the
/// list exhausts memory). The one `HCORENUM` loop of the crate.
pub(crate) fn enumerate<T: Copy + Default>(
    import: &IMetaDataImport,
    mut next: impl FnMut(*mut HCORENUM, *mut T, u32, *mut u32) -> HRESULT,
) -> Result<Vec<T>> {
    const BATCH: usize = 64;
    /// Closes the enumerator (`CloseEnum`) when dropped.
    struct Close<'a>(&'a IMetaDataImport, HCORENUM);
    impl Drop for Close<'_> {
        fn drop(&mut self) {
            if !self.1.is_null() {
                // SAFETY: a handle the same scope's `Enum*` opened, closed once.
                unsafe { self.0.CloseEnum(self.1) };
            }
        }
    }
    let mut handle = Close(import, core::ptr::null_mut());
    let mut out = Vec::new();
    let mut batch = [T::default(); BATCH];
    loop {
        let mut fetched: u32 = 0;
        let hr = next(
            &mut handle.1,
            batch.as_mut_ptr(),
            BATCH as u32,
            &mut fetched,
        );
        hr.ok()?;
        let fetched = (fetched as usize).min(BATCH);
        out.extend_from_slice(&batch[..fetched]);
        if out.len() > MAX_ROWS {
            return Err(crate::Error::new(
                crate::E_UNEXPECTED,
                "an enumerator past the largest metadata table",
            ));
        }
        // S_FALSE or nothing fetched: no more.
        if hr != crate::S_OK || fetched == 0 {
            return Ok(out);
        }
    }
}

impl core::ops::Deref for MetadataImport {
    type Target = IMetaDataImport;
    fn deref(&self) -> &IMetaDataImport {
        &self.raw
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metadata::{IMetaDataImport2_Impl, IMetaDataImport_Impl, CLDB_E_RECORD_NOTFOUND};
    use crate::{DWORD, HRESULT, LPCWSTR, LPWSTR, S_FALSE, S_OK, ULONG};
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    const OUTER: mdTypeDef = mdTypeDef::from_rid(2);
    const INNER: mdTypeDef = mdTypeDef::from_rid(3);
    const HIT: mdMethodDef = mdMethodDef::from_rid(5);
    /// A method of INNER.
    const DEEP: mdMethodDef = mdMethodDef::from_rid(6);
    /// A method whose declaring type does not exist.
    const ORPHAN: mdMethodDef = mdMethodDef::from_rid(7);
    /// A type nested in itself (broken metadata).
    const LOOP: mdTypeDef = mdTypeDef::from_rid(4);
    const METHOD_COUNT: u32 = 70; // more than one batch of `methods`
    static VOID_SIG: [u8; 3] = [0x00, 0x00, 0x01]; // static void ()
    static MEMBER_REF_SIG: [u8; 4] = [0x20, 0x01, 0x01, 0x0E]; // instance void (string)
    static GENERIC_SIG: [u8; 6] = [0x10, 0x01, 0x01, 0x08, 0x1E, 0x00]; // static int <1>(!!0)
    static CALLI_SIG: [u8; 5] = [0x00, 0x02, 0x08, 0x08, 0x08]; // int (int, int)

    /// A module's metadata with one namespace type, one nested type, a
    /// method `Hit`, MemberRefs, a MethodSpec and a StandAloneSig.
    #[derive(Default)]
    struct Fake {
        closed: Arc<AtomicUsize>,
    }

    /// A NUL-terminated UTF-16 string as a `String`.
    ///
    /// # Safety
    ///
    /// `s` points to a NUL-terminated string.
    unsafe fn read(s: LPCWSTR) -> String {
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

    /// Writes a signature out-pair.
    ///
    /// # Safety
    ///
    /// Both pointers are valid for writes.
    unsafe fn answer_sig(sig: &'static [u8], out: *mut PCCOR_SIGNATURE, len: *mut ULONG) {
        // SAFETY: forwarded contract.
        unsafe {
            *out = sig.as_ptr();
            *len = sig.len() as ULONG;
        }
    }

    impl IMetaDataImport_Impl for Fake {
        fn CloseEnum(&self, _h: HCORENUM) {
            self.closed.fetch_add(1, Ordering::SeqCst);
        }

        fn FindTypeDefByName(
            &self,
            name: LPCWSTR,
            enclosing: mdToken,
            out: *mut mdTypeDef,
        ) -> HRESULT {
            // SAFETY: the caller passes a NUL-terminated name and a valid
            // out-pointer.
            let name = unsafe { read(name) };
            let found = match (name.as_str(), enclosing) {
                ("N.Outer", mdToken(0)) => OUTER,
                ("Inner", t) if t == OUTER.token() => INNER,
                _ => return CLDB_E_RECORD_NOTFOUND,
            };
            // SAFETY: as above.
            unsafe { *out = found };
            S_OK
        }

        fn FindMethod(
            &self,
            td: mdTypeDef,
            name: LPCWSTR,
            sig: PCCOR_SIGNATURE,
            len: ULONG,
            out: *mut mdMethodDef,
        ) -> HRESULT {
            // SAFETY: a NUL-terminated name and `len` bytes at `sig`.
            let (name, sig) =
                unsafe { (read(name), core::slice::from_raw_parts(sig, len as usize)) };
            if td != OUTER || name != "Hit" || sig != VOID_SIG {
                return CLDB_E_RECORD_NOTFOUND;
            }
            // SAFETY: a valid out-pointer.
            unsafe { *out = HIT };
            S_OK
        }

        fn EnumMethods(
            &self,
            handle: *mut HCORENUM,
            cl: mdTypeDef,
            out: *mut mdMethodDef,
            max: ULONG,
            count: *mut ULONG,
        ) -> HRESULT {
            if cl != OUTER {
                return CLDB_E_RECORD_NOTFOUND;
            }
            // SAFETY: the caller passes valid pointers and `max` slots; the
            // handle holds 1 + the next row index (never null once used).
            unsafe {
                let next = (*handle as usize).max(1);
                let n = (METHOD_COUNT + 1 - next as u32).min(max);
                for i in 0..n {
                    *out.add(i as usize) = mdMethodDef::from_rid(next as u32 + i);
                }
                *handle = (next + n as usize) as HCORENUM;
                *count = n;
                if n == 0 {
                    S_FALSE
                } else {
                    S_OK
                }
            }
        }

        fn GetMethodProps(
            &self,
            mb: mdMethodDef,
            class: *mut mdTypeDef,
            name: LPWSTR,
            cap: ULONG,
            needed: *mut ULONG,
            attr: *mut DWORD,
            sig: *mut PCCOR_SIGNATURE,
            sig_len: *mut ULONG,
            rva: *mut ULONG,
            impl_flags: *mut DWORD,
        ) -> HRESULT {
            let (declaring, text) = match mb {
                HIT => (OUTER, "Hit"),
                DEEP => (INNER, "Deep"),
                ORPHAN => (mdTypeDef::from_rid(9), "Orphan"),
                _ => return CLDB_E_RECORD_NOTFOUND,
            };
            let units: Vec<u16> = text.encode_utf16().chain([0]).collect();
            // SAFETY: the facade passes valid pointers and a buffer of `cap`.
            unsafe {
                *class = declaring;
                *needed = units.len() as ULONG;
                let n = units.len().min(cap as usize);
                core::ptr::copy_nonoverlapping(units.as_ptr(), name, n);
                *attr = 0x16;
                answer_sig(&VOID_SIG, sig, sig_len);
                *rva = 0x2050;
                *impl_flags = 0;
            }
            S_OK
        }

        fn GetTypeDefProps(
            &self,
            td: mdTypeDef,
            name: LPWSTR,
            cap: ULONG,
            needed: *mut ULONG,
            flags: *mut DWORD,
            extends: *mut mdToken,
        ) -> HRESULT {
            // tdPublic (1) for a top-level type, tdNestedPublic (2) nested.
            let (text, visibility) = match td {
                OUTER => ("N.Outer", 1),
                INNER => ("Inner", 2),
                LOOP => ("Loop", 2),
                _ => return CLDB_E_RECORD_NOTFOUND,
            };
            let units: Vec<u16> = text.encode_utf16().chain([0]).collect();
            // SAFETY: the facade passes valid pointers and a buffer of `cap`.
            unsafe {
                *needed = units.len() as ULONG;
                let n = units.len().min(cap as usize);
                core::ptr::copy_nonoverlapping(units.as_ptr(), name, n);
                *flags = visibility;
                *extends = mdToken(0);
            }
            S_OK
        }

        fn GetNestedClassProps(&self, nested: mdTypeDef, enclosing: *mut mdTypeDef) -> HRESULT {
            let outer = match nested {
                INNER => OUTER,
                LOOP => LOOP,
                _ => return CLDB_E_RECORD_NOTFOUND,
            };
            // SAFETY: a valid out-pointer.
            unsafe { *enclosing = outer };
            S_OK
        }

        fn GetMemberRefProps(
            &self,
            mr: mdMemberRef,
            parent: *mut mdToken,
            name: LPWSTR,
            cap: ULONG,
            _needed: *mut ULONG,
            sig: *mut PCCOR_SIGNATURE,
            sig_len: *mut ULONG,
        ) -> HRESULT {
            assert!(name.is_null() && cap == 0, "the facade asks for no name");
            let blob: &'static [u8] = match mr.rid() {
                1 => &MEMBER_REF_SIG,
                2 => &GENERIC_SIG,
                _ => return CLDB_E_RECORD_NOTFOUND,
            };
            // SAFETY: valid out-pointers.
            unsafe {
                *parent = mdToken(0x0100_0001);
                answer_sig(blob, sig, sig_len);
            }
            S_OK
        }

        fn GetSigFromToken(
            &self,
            token: mdSignature,
            sig: *mut PCCOR_SIGNATURE,
            sig_len: *mut ULONG,
        ) -> HRESULT {
            if token.rid() != 1 {
                return CLDB_E_RECORD_NOTFOUND;
            }
            // SAFETY: valid out-pointers.
            unsafe { answer_sig(&CALLI_SIG, sig, sig_len) };
            S_OK
        }
    }

    impl IMetaDataImport2_Impl for Fake {
        fn GetMethodSpecProps(
            &self,
            spec: mdMethodSpec,
            parent: *mut mdToken,
            sig: *mut PCCOR_SIGNATURE,
            sig_len: *mut ULONG,
        ) -> HRESULT {
            static INSTANTIATION: [u8; 3] = [0x0A, 0x01, 0x08]; // <int>
            let target = match spec.rid() {
                1 => mdToken(0x0A00_0002), // the generic MemberRef
                2 => mdToken(0x0200_0002), // not a method: malformed
                _ => return CLDB_E_RECORD_NOTFOUND,
            };
            // SAFETY: valid out-pointers.
            unsafe {
                *parent = target;
                answer_sig(&INSTANTIATION, sig, sig_len);
            }
            S_OK
        }
    }

    fn import(fake: Fake) -> MetadataImport {
        let import2: IMetaDataImport2 = crate::export(fake);
        MetadataImport::new(
            import2
                .cast::<IMetaDataImport>()
                .expect("a parent interface"),
        )
    }

    #[test]
    fn finds_types_and_methods_by_name() {
        let import = import(Fake::default());
        assert_eq!(import.find_type_def("N.Outer", None), Ok(OUTER));
        assert_eq!(import.find_type_def("Inner", Some(OUTER)), Ok(INNER));
        assert_eq!(
            import.find_type_def("Inner", None),
            Err(CLDB_E_RECORD_NOTFOUND.into())
        );
        assert_eq!(
            import.find_type_def("N.\0Outer", None),
            Err(E_INVALIDARG.into())
        );
        assert_eq!(import.find_method(OUTER, "Hit", &VOID_SIG), Ok(HIT));
        #[cfg(feature = "cil")]
        {
            let void = MethodSig::static_method(crate::cil::TypeSig::Void, Vec::new());
            assert_eq!(void.encode().unwrap(), VOID_SIG, "the blob the fake knows");
            assert_eq!(import.find_method_sig(OUTER, "Hit", &void), Ok(HIT));
            let int = MethodSig::static_method(crate::cil::TypeSig::I4, Vec::new());
            assert_eq!(
                import.find_method_sig(OUTER, "Hit", &int),
                Err(CLDB_E_RECORD_NOTFOUND.into())
            );
        }
        assert_eq!(
            import.find_method(OUTER, "Hit", &CALLI_SIG),
            Err(CLDB_E_RECORD_NOTFOUND.into()),
            "the signature tells overloads apart"
        );
    }

    #[test]
    fn names_are_full_nested_types_included_and_written_as_displayed() {
        use alloc::string::ToString;
        let import = import(Fake::default());
        assert_eq!(import.type_name(OUTER).unwrap(), "N.Outer");
        assert_eq!(import.type_name(INNER).unwrap(), "N.Outer+Inner");
        for (method, expected) in [(HIT, "N.Outer.Hit"), (DEEP, "N.Outer+Inner.Deep")] {
            assert_eq!(import.method_name(method).unwrap().to_string(), expected);
            let mut written = String::from("jit: ");
            import.write_method_name(method, &mut written).unwrap();
            assert_eq!(written, alloc::format!("jit: {expected}"));
        }
        // A type nested in itself: at most 32 enclosing names, not forever.
        let looped = import.type_name(LOOP).unwrap();
        assert_eq!(looped.split('+').count(), 33, "{looped}");
        // A failure of the runtime writes nothing.
        let mut written = String::from("jit: ");
        assert_eq!(
            import.write_method_name(ORPHAN, &mut written),
            Err(CLDB_E_RECORD_NOTFOUND.into())
        );
        assert_eq!(written, "jit: ");
        assert_eq!(
            import.method_name(ORPHAN),
            Err(CLDB_E_RECORD_NOTFOUND.into())
        );
    }

    #[test]
    fn a_failing_writer_is_e_fail() {
        struct Full;
        impl fmt::Write for Full {
            fn write_str(&mut self, _: &str) -> fmt::Result {
                Err(fmt::Error)
            }
        }
        let import = import(Fake::default());
        assert_eq!(import.write_method_name(HIT, &mut Full), Err(E_FAIL.into()));
        assert_eq!(import.write_type_name(INNER, &mut Full), Err(E_FAIL.into()));
    }

    #[test]
    fn methods_reads_every_batch_and_closes_the_enumerator_once() {
        let fake = Fake::default();
        let closed = Arc::clone(&fake.closed);
        let import = import(fake);
        let methods = import.methods(OUTER).unwrap();
        let expected: Vec<mdMethodDef> = (1..=METHOD_COUNT).map(mdMethodDef::from_rid).collect();
        assert_eq!(methods, expected);
        assert_eq!(closed.load(Ordering::SeqCst), 1);
        // A failure still closes the enumerator it may have opened (none
        // here: the handle stayed null, so nothing to close).
        assert_eq!(import.methods(INNER), Err(CLDB_E_RECORD_NOTFOUND.into()));
        assert_eq!(closed.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn method_signature_follows_each_call_site_token_kind() {
        let import = import(Fake::default());
        assert_eq!(import.method_signature(HIT.token()), Ok(&VOID_SIG[..]));
        assert_eq!(
            import.method_signature(mdToken(0x0A00_0001)),
            Ok(&MEMBER_REF_SIG[..])
        );
        assert_eq!(
            import.method_signature(mdToken(0x2B00_0001)),
            Ok(&GENERIC_SIG[..]),
            "a MethodSpec gives its generic method's signature"
        );
        assert_eq!(
            import.method_signature(mdToken(0x2B00_0002)),
            Err(E_FAIL.into())
        );
        assert_eq!(
            import.method_signature(mdToken(0x1100_0001)),
            Ok(&CALLI_SIG[..])
        );
        assert_eq!(
            import.method_signature(mdToken(0x0400_0001)),
            Err(E_INVALIDARG.into()),
            "a FieldDef is no call site"
        );
    }

    #[cfg(feature = "cil")]
    #[test]
    fn stack_sig_is_a_max_stack_resolver() {
        let import = import(Fake::default());
        let sig = |t: u32| import.stack_sig(Token(t));
        let stack = |params, has_this, returns_value| {
            Some(StackSig {
                params,
                has_this,
                returns_value,
            })
        };
        assert_eq!(sig(HIT.0), stack(0, false, false));
        assert_eq!(sig(0x0A00_0001), stack(1, true, false));
        assert_eq!(sig(0x2B00_0001), stack(1, false, true));
        assert_eq!(sig(0x1100_0001), stack(2, false, true));
        assert_eq!(sig(0x0A00_0009), None);

        // In a body: `ldnull; ldstr; call instance void (string)` needs 2
        // slots (the call's `this` and its string).
        use crate::cil::{MethodBody, OpCode, Operand};
        let mut body = MethodBody::decode(&[0x06, 0x2A]).unwrap(); // tiny: ret
        body.insert(0, OpCode::LDNULL, Operand::None).unwrap();
        body.insert(1, OpCode::LDSTR, Operand::Token(Token(0x7000_0001)))
            .unwrap();
        body.insert(2, OpCode::CALL, Operand::Token(Token(0x0A00_0001)))
            .unwrap();
        assert_eq!(body.update_max_stack(|t| import.stack_sig(t)), Ok(2));
    }
}
