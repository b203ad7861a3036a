//! [`MetadataImport`]: names of types and methods, read from a module's
//! metadata (`IMetaDataImport`), lookups by name, and the call-site
//! signatures IL rewriting needs.

use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

use super::result::Result;
use super::strings::{read_utf16, wide, write_utf16, Utf16Buf};
#[cfg(feature = "cil")]
use crate::cil::{MethodSig, StackSig, Token};
use crate::metadata::{
    mdGenericParam, mdMemberRef, mdMethodDef, mdMethodSpec, mdSignature, mdToken, mdTypeDef,
    mdTypeRef, mdtMemberRef, mdtMethodDef, mdtMethodSpec, mdtSignature, mdtTypeDef, mdtTypeRef,
    tdNestedPublic, tdVisibilityMask, IMetaDataImport, IMetaDataImport2, HCORENUM, PCCOR_SIGNATURE,
};
use crate::Interface;
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
        // SAFETY: the runtime answered `sig_len` bytes at `sig` (or null),
        // owned by the metadata scope, which lives at least as long as `self`.
        let signature = unsafe { blob(sig, sig_len) };
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

    /// The base type of a TypeDef (`GetTypeDefProps`'s `extends`: a
    /// TypeDef, TypeRef or TypeSpec token; nil for `System.Object`,
    /// interfaces and the module type).
    pub fn base_type(&self, typedef: mdTypeDef) -> Result<mdToken> {
        let (mut flags, mut extends, mut needed) = (0, mdToken(0), 0);
        // SAFETY: a zero-capacity (null) name buffer is allowed: the name
        // is not asked for; the other out-pointers are locals.
        unsafe {
            self.raw.GetTypeDefProps(
                typedef,
                core::ptr::null_mut(),
                0,
                &mut needed,
                &mut flags,
                &mut extends,
            )
        }
        .ok_with("GetTypeDefProps")?;
        Ok(extends)
    }

    /// A TypeRef's name as the reference spells it (`GetTypeRefProps`:
    /// `Namespace.Name`, or a nested type's own name), however long.
    pub fn type_ref_name(&self, typeref: mdTypeRef) -> Result<String> {
        let mut scope = mdToken(0);
        read_utf16(|cap, needed, buf| {
            // SAFETY: `read_utf16` passes a buffer of `cap` characters and a
            // valid length pointer; `scope` is a local.
            unsafe {
                self.raw
                    .GetTypeRefProps(typeref, &mut scope, buf, cap, needed)
            }
        })
        .map_err(|hr| crate::Error::new(hr, "GetTypeRefProps"))
    }

    /// The full name of a TypeDef ([`type_name`](Self::type_name)) or of a
    /// TypeRef ([`type_ref_name`](Self::type_ref_name)); `E_INVALIDARG`
    /// for tokens of other tables.
    pub fn type_def_or_ref_name(&self, token: mdToken) -> Result<String> {
        match token.token_type() {
            t if t == mdtTypeDef => self.type_name(mdTypeDef(token.0)),
            t if t == mdtTypeRef => self.type_ref_name(mdTypeRef(token.0)),
            _ => Err(E_INVALIDARG.into()),
        }
    }

    /// Whether `owner` carries a custom attribute of the type named `name`
    /// (`GetCustomAttributeByName`: `S_OK` found, `S_FALSE` not).
    pub fn has_custom_attribute(&self, owner: mdToken, name: &str) -> Result<bool> {
        let name = wide(name)?;
        let (mut data, mut len) = (core::ptr::null(), 0);
        // SAFETY: `name` is NUL-terminated and outlives the call; valid
        // out-pointers (the blob they receive is not read).
        let hr = unsafe {
            self.raw
                .GetCustomAttributeByName(owner, name.as_ptr(), &mut data, &mut len)
        };
        hr.ok_with("GetCustomAttributeByName")?;
        Ok(hr == crate::S_OK)
    }

    /// The TypeDef a TypeRef names, and the metadata of the module that
    /// defines it (`ResolveTypeRef`). Fails when the defining module is
    /// not loaded or the runtime cannot resolve it.
    pub fn resolve_type_ref(&self, typeref: mdTypeRef) -> Result<(MetadataImport, mdTypeDef)> {
        let mut scope: *mut core::ffi::c_void = core::ptr::null_mut();
        let mut typedef = mdTypeDef(0);
        // SAFETY: a valid IID and out-pointers; on success `scope` holds one
        // reference to an IMetaDataImport, taken over below.
        let hr = unsafe {
            self.raw
                .ResolveTypeRef(typeref, &IMetaDataImport::IID, &mut scope, &mut typedef)
        };
        // SAFETY: null or one owned IMetaDataImport reference (released when
        // dropped, also on failure).
        let other = unsafe { crate::com::interface::invoker::from_raw::<IMetaDataImport>(scope) };
        hr.ok_with("ResolveTypeRef")?;
        let other =
            other.ok_or_else(|| crate::Error::new(E_FAIL, "ResolveTypeRef gave no scope"))?;
        Ok((MetadataImport::new(other), typedef))
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
            return self.method_signature(self.method_spec_parent(token)?);
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
        // SAFETY: the runtime answered `len` bytes at `sig` (or null), owned
        // by the metadata scope, which lives at least as long as `self`.
        Ok(unsafe { blob(sig, len) })
    }

    /// The generic method a MethodSpec instantiates: its MethodDef or
    /// MemberRef (`GetMethodSpecProps`; MethodSpecs came with generics:
    /// `IMetaDataImport2`). `E_FAIL` for a parent of another table.
    fn method_spec_parent(&self, token: mdToken) -> Result<mdToken> {
        let import2 = self.raw.cast::<IMetaDataImport2>()?;
        let mut parent = mdToken(0);
        let (mut spec, mut spec_len) = (core::ptr::null(), 0);
        // SAFETY: valid out-pointers.
        unsafe {
            import2.GetMethodSpecProps(mdMethodSpec(token.0), &mut parent, &mut spec, &mut spec_len)
        }
        .ok_with("GetMethodSpecProps")?;
        let parent_table = parent.token_type();
        if parent_table != mdtMethodDef && parent_table != mdtMemberRef {
            return Err(E_FAIL.into());
        }
        Ok(parent)
    }

    /// The name of the method a `call`, `callvirt`, `newobj` or `ldftn`
    /// token names: a MethodDef's (`GetMethodProps`), a MemberRef's
    /// (`GetMemberRefProps`), or a MethodSpec's generic method's.
    /// `E_INVALIDARG` for tokens of other tables.
    pub fn callee_name(&self, token: mdToken) -> Result<String> {
        let table = token.token_type();
        if table == mdtMethodDef {
            return Ok(self.method_props(mdMethodDef(token.0))?.name);
        }
        if table == mdtMethodSpec {
            return self.callee_name(self.method_spec_parent(token)?);
        }
        if table != mdtMemberRef {
            return Err(E_INVALIDARG.into());
        }
        let mut name = Utf16Buf::new();
        let mut parent = mdToken(0);
        let mut sig: PCCOR_SIGNATURE = core::ptr::null();
        let mut sig_len: u32 = 0;
        name.read(|cap, needed, buf| {
            // SAFETY: `read` passes a buffer of `cap` characters; the other
            // out-pointers are locals.
            unsafe {
                self.raw.GetMemberRefProps(
                    mdMemberRef(token.0),
                    &mut parent,
                    buf,
                    cap,
                    needed,
                    &mut sig,
                    &mut sig_len,
                )
            }
        })?;
        Ok(name.to_string_lossy())
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

/// A blob the runtime answered, as a slice.
///
/// # Safety
///
/// `ptr` is null or points to `len` bytes that live as long as `'a`.
pub(super) unsafe fn blob<'a>(ptr: *const u8, len: u32) -> &'a [u8] {
    if ptr.is_null() {
        &[]
    } else {
        // SAFETY: forwarded contract.
        unsafe { core::slice::from_raw_parts(ptr, len as usize) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fake_scope::{FakeScope, TD_PUBLIC};
    use crate::metadata::CLDB_E_RECORD_NOTFOUND;
    use alloc::vec;

    const OUTER: mdTypeDef = mdTypeDef::from_rid(2);
    const INNER: mdTypeDef = mdTypeDef::from_rid(3);
    /// A type nested in itself (broken metadata).
    const LOOP: mdTypeDef = mdTypeDef::from_rid(4);
    /// One of OUTER's methods.
    const HIT: mdMethodDef = mdMethodDef::from_rid(5);
    const METHOD_COUNT: u32 = 70; // more than one batch of `methods`
    /// The method of INNER.
    const DEEP: mdMethodDef = mdMethodDef::from_rid(METHOD_COUNT + 1);
    /// A method whose declaring type does not exist.
    const ORPHAN: mdMethodDef = mdMethodDef::from_rid(METHOD_COUNT + 2);
    static VOID_SIG: [u8; 3] = [0x00, 0x00, 0x01]; // static void ()
    static MEMBER_REF_SIG: [u8; 4] = [0x20, 0x01, 0x01, 0x0E]; // instance void (string)
    static GENERIC_SIG: [u8; 6] = [0x10, 0x01, 0x01, 0x08, 0x1E, 0x00]; // static int <1>(!!0)
    static CALLI_SIG: [u8; 5] = [0x00, 0x02, 0x08, 0x08, 0x08]; // int (int, int)

    /// A module's metadata with one namespace type (its methods, among
    /// them `Hit`), one nested type, a type nested in itself, MemberRefs
    /// 0x0A000001 (instance void (string)) and 0x0A000002 (generic), a
    /// MethodSpec of the latter (0x2B000001) and a malformed one of a type
    /// (0x2B000002), and a StandAloneSig (0x11000001).
    fn fake() -> FakeScope {
        let mut scope = FakeScope::new();
        scope.type_def("<Module>", 0, mdToken(0));
        let outer = scope.type_def("N.Outer", TD_PUBLIC, mdToken(0));
        let inner = scope.nested("Inner", outer);
        let looped = scope.nested("Loop", outer);
        scope.set_enclosing(looped, looped);
        assert_eq!((outer, inner, looped), (OUTER, INNER, LOOP));
        for rid in 1..=METHOD_COUNT {
            let name = if rid == HIT.rid() { "Hit" } else { "Other" };
            scope.method(OUTER, name, 0x16, &VOID_SIG);
        }
        assert_eq!(scope.method(INNER, "Deep", 0x16, &VOID_SIG), DEEP);
        let nowhere = mdTypeDef::from_rid(99);
        assert_eq!(scope.method(nowhere, "Orphan", 0x16, &VOID_SIG), ORPHAN);
        let string_user = scope.member_ref(mdToken(0x0100_0001), "Write", &MEMBER_REF_SIG);
        let generic = scope.member_ref(mdToken(0x0100_0001), "Generic", &GENERIC_SIG);
        assert_eq!(string_user.token(), mdToken(0x0A00_0001));
        // <int>
        scope.method_spec(generic.token(), &[0x0A, 0x01, 0x08]);
        scope.method_spec(OUTER.token(), &[0x0A, 0x01, 0x08]);
        scope.signature(&CALLI_SIG);
        scope
    }

    fn import(fake: FakeScope) -> MetadataImport {
        fake.import()
    }

    #[test]
    fn finds_types_and_methods_by_name() {
        let import = import(fake());
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
        let import = import(fake());
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
        let import = import(fake());
        assert_eq!(import.write_method_name(HIT, &mut Full), Err(E_FAIL.into()));
        assert_eq!(import.write_type_name(INNER, &mut Full), Err(E_FAIL.into()));
    }

    #[test]
    fn methods_reads_every_batch_and_closes_the_enumerator_once() {
        let fake = fake();
        let closed = fake.clone();
        let import = import(fake);
        let methods = import.methods(OUTER).unwrap();
        let expected: Vec<mdMethodDef> = (1..=METHOD_COUNT).map(mdMethodDef::from_rid).collect();
        assert_eq!(methods, expected);
        assert_eq!(closed.t().closed, 1);
        // A failure closes no enumerator (the handle stayed null); the
        // next enumeration closes its own.
        assert_eq!(
            import.methods(mdTypeDef::from_rid(99)),
            Err(CLDB_E_RECORD_NOTFOUND.into())
        );
        assert_eq!(import.methods(INNER), Ok(vec![DEEP]));
        assert_eq!(closed.t().closed, 2);
    }

    #[test]
    fn method_signature_follows_each_call_site_token_kind() {
        let import = import(fake());
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
        let import = import(fake());
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

    /// The type names the CallTarget wrapper reads, through the shared
    /// fake scope: a TypeRef's name longer than 255 UTF-16 units comes back
    /// whole (a fixed 256-unit buffer used to cut it), a TypeDef's base,
    /// custom attributes, and a TypeRef that does not resolve.
    #[test]
    fn type_ref_names_are_read_whole_however_long() {
        let long = "Segment.".repeat(40) + "Last`1";
        assert!(
            long.encode_utf16().count() > 300,
            "past the old 256-unit buffer"
        );
        let mut scope = FakeScope::new();
        let corlib = mdToken(0x2300_0001);
        let value_type = scope.type_ref(corlib, "System.ValueType");
        let far = scope.type_ref(corlib, &long);
        let plain = scope.type_def("N.Plain", TD_PUBLIC, mdToken(0));
        let value = scope.type_def("N.Value", TD_PUBLIC, value_type.token());
        scope.attribute(value, "System.ObsoleteAttribute");
        let import = scope.import();

        assert_eq!(import.type_ref_name(far).as_deref(), Ok(long.as_str()));
        assert_eq!(import.type_def_or_ref_name(far.token()), Ok(long.clone()));
        assert_eq!(
            import.type_def_or_ref_name(value.token()).as_deref(),
            Ok("N.Value")
        );
        assert_eq!(
            import.type_def_or_ref_name(mdToken(0x1B00_0001)),
            Err(E_INVALIDARG.into()),
            "a TypeSpec has no name"
        );
        assert_eq!(
            import
                .type_ref_name(mdTypeRef(0x0100_0009))
                .map_err(|e| e.code()),
            Err(CLDB_E_RECORD_NOTFOUND)
        );

        assert_eq!(import.base_type(value), Ok(value_type.token()));
        assert!(import.base_type(plain).unwrap().is_nil());
        assert_eq!(
            import.has_custom_attribute(value.token(), "System.ObsoleteAttribute"),
            Ok(true)
        );
        assert_eq!(
            import.has_custom_attribute(plain.token(), "System.ObsoleteAttribute"),
            Ok(false)
        );
        assert_eq!(
            import
                .resolve_type_ref(value_type)
                .map(|r| r.1)
                .map_err(|e| e.code()),
            Err(CLDB_E_RECORD_NOTFOUND)
        );
    }
}
