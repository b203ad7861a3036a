//! [`MetadataEmit`]: adding references to a module's metadata
//! (`IMetaDataEmit`), idempotently, so that rewritten IL can call code the
//! module never referenced.
//!
//! Every `define`-style method asks the import side first and defines only
//! what is missing, so calling it again (at each JIT, from several threads,
//! at ReJIT) gives the same token and never a duplicate row.
//!
//! # When the runtime accepts metadata changes
//!
//! A module's metadata may be opened for writing
//! ([`ProfilerInfo::module_metadata_emit`]) once the module has loaded
//! (`ModuleLoadFinished` onward). New *references* (AssemblyRef, TypeRef,
//! MemberRef, MethodSpec, TypeSpec, StandAloneSig, user strings) may be
//! added from any callback or profiler thread, and are what IL installed in
//! `JITCompilationStarted` or in ReJIT's `GetReJITParameters` may use.
//! New *definitions* (types, methods, fields) are only safe before the
//! module's types load (in `ModuleLoadFinished`), which is why this facade
//! offers none. Opening a module that has no metadata (a resource module)
//! answers `S_FALSE` and no interface (`Ok(None)`); a dynamic module whose
//! metadata is not writable answers `CORPROF_E_DATAINCOMPLETE` or
//! `E_NOINTERFACE`, returned as `Err`.

use alloc::string::String;
use alloc::vec::Vec;
use core::ffi::c_void;

use super::info::{ProfilerInfo, Result};
use super::metadata::MetadataImport;
use super::strings::read_utf16;
use crate::metadata::{
    mdAssemblyRef, mdMemberRef, mdMethodSpec, mdSignature, mdString, mdToken, mdTypeRef,
    mdTypeSpec, ofRead, ofWrite, IMetaDataAssemblyEmit, IMetaDataAssemblyImport, IMetaDataEmit,
    IMetaDataEmit2, IMetaDataImport, IMetaDataImport2, ASSEMBLYMETADATA, CLDB_E_RECORD_NOTFOUND,
    HCORENUM, PCCOR_SIGNATURE,
};
use crate::profiling::ModuleID;
use crate::{E_INVALIDARG, E_UNEXPECTED, HRESULT, S_OK, WCHAR};

/// The most rows a metadata table can hold: a token's row number has 24 bits.
const MAX_ROWS: usize = 0x00FF_FFFF;

/// What identifies a referenced assembly: the fields of an AssemblyRef row
/// (ECMA-335 II.22.5).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AssemblyReference<'a> {
    /// The simple name (`CallTargetProbe`), no extension.
    pub name: &'a str,
    /// Major, minor, build, revision.
    pub version: [u16; 4],
    /// The public key token (8 bytes), the full public key (then set
    /// `afPublicKey` = 1 in `flags`), or empty for an unsigned assembly.
    pub public_key_or_token: &'a [u8],
    /// The culture (`""` for neutral).
    pub culture: &'a str,
    /// `CorAssemblyFlags` (0, or `afPublicKey` = 0x1 with a full key).
    pub flags: u32,
}

/// A module's metadata opened for writing, with its import side for the
/// "ask first" half of every method.
#[derive(Clone, Debug)]
pub struct MetadataEmit {
    emit: IMetaDataEmit,
    import: MetadataImport,
    assembly_emit: IMetaDataAssemblyEmit,
    assembly_import: IMetaDataAssemblyImport,
}

impl ProfilerInfo {
    /// A module's metadata for writing (`GetModuleMetaData` with `ofRead |
    /// ofWrite`, as `IMetaDataEmit`). `Ok(None)` when the module has no
    /// metadata. See [`MetadataEmit`] for when changes are allowed.
    pub fn module_metadata_emit(&self, module: ModuleID) -> Result<Option<MetadataEmit>> {
        // SAFETY: `ofWrite` is a valid CorOpenFlags value for
        // GetModuleMetaData and IMetaDataEmit a metadata interface.
        let emit = unsafe { self.module_metadata_as::<IMetaDataEmit>(module, ofRead | ofWrite) }?;
        emit.map(MetadataEmit::new).transpose()
    }
}

/// Reads every token of a metadata enumeration (`Enum*` methods), closing
/// the enumerator; `E_UNEXPECTED` past 2^24 tokens (no table is longer).
fn enumerate<T: Copy + Default>(
    import: &IMetaDataImport,
    mut next: impl FnMut(*mut HCORENUM, *mut T, u32, *mut u32) -> HRESULT,
) -> Result<Vec<T>> {
    const BATCH: usize = 64;
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
            return Err(E_UNEXPECTED);
        }
        if hr != S_OK || fetched == 0 {
            return Ok(out);
        }
    }
}

/// `name` as a NUL-terminated UTF-16 string; `E_INVALIDARG` when it holds a
/// NUL of its own.
fn wide(name: &str) -> Result<Vec<WCHAR>> {
    if name.contains('\0') {
        return Err(E_INVALIDARG);
    }
    Ok(name.encode_utf16().chain([0]).collect())
}

fn len_u32(n: usize) -> Result<u32> {
    u32::try_from(n).map_err(|_| E_INVALIDARG)
}

/// A blob the runtime answered, as a slice.
///
/// # Safety
///
/// `ptr` is null or points to `len` bytes that live as long as `'a`.
unsafe fn blob<'a>(ptr: *const u8, len: u32) -> &'a [u8] {
    if ptr.is_null() {
        &[]
    } else {
        // SAFETY: forwarded contract.
        unsafe { core::slice::from_raw_parts(ptr, len as usize) }
    }
}

impl MetadataEmit {
    /// Wraps a module's `IMetaDataEmit`; fails (`E_NOINTERFACE`) unless the
    /// same scope also answers `IMetaDataImport`, `IMetaDataAssemblyEmit`
    /// and `IMetaDataAssemblyImport` (the runtime's scopes answer all).
    pub fn new(emit: IMetaDataEmit) -> Result<MetadataEmit> {
        Ok(MetadataEmit {
            import: MetadataImport::new(emit.cast::<IMetaDataImport>()?),
            assembly_emit: emit.cast::<IMetaDataAssemblyEmit>()?,
            assembly_import: emit.cast::<IMetaDataAssemblyImport>()?,
            emit,
        })
    }

    /// The raw `IMetaDataEmit`.
    pub fn raw(&self) -> &IMetaDataEmit {
        &self.emit
    }

    /// The same scope's import side (it sees what was defined).
    pub fn import(&self) -> &MetadataImport {
        &self.import
    }

    /// The AssemblyRef for `assembly`: an existing one with the same name
    /// (compared ignoring ASCII case, as the binder does), version, culture
    /// and key, or a new one (`DefineAssemblyRef`).
    pub fn assembly_ref(&self, assembly: &AssemblyReference<'_>) -> Result<mdAssemblyRef> {
        let refs = enumerate(self.import.raw(), |h, out, max, n| {
            // SAFETY: the enumerate contract: valid handle, buffer of `max`.
            unsafe { self.assembly_import.EnumAssemblyRefs(h, out, max, n) }
        })?;
        for r in refs {
            let (name, version, culture, key) = self.assembly_ref_props(r)?;
            if name.eq_ignore_ascii_case(assembly.name)
                && version == assembly.version
                && culture == assembly.culture
                && key == assembly.public_key_or_token
            {
                return Ok(r);
            }
        }
        let name = wide(assembly.name)?;
        let mut culture = wide(assembly.culture)?;
        let meta = ASSEMBLYMETADATA {
            usMajorVersion: assembly.version[0],
            usMinorVersion: assembly.version[1],
            usBuildNumber: assembly.version[2],
            usRevisionNumber: assembly.version[3],
            szLocale: culture.as_mut_ptr(),
            cbLocale: len_u32(culture.len())?,
            rProcessor: core::ptr::null_mut(),
            ulProcessor: 0,
            rOS: core::ptr::null_mut(),
            ulOS: 0,
        };
        let key = assembly.public_key_or_token;
        let mut out = mdAssemblyRef(0);
        // SAFETY: every pointer is valid for the call; no hash value.
        unsafe {
            self.assembly_emit.DefineAssemblyRef(
                key.as_ptr().cast::<c_void>(),
                len_u32(key.len())?,
                name.as_ptr(),
                &meta,
                core::ptr::null(),
                0,
                assembly.flags,
                &mut out,
            )
        }
        .ok()?;
        Ok(out)
    }

    /// Name, version, culture and key or token of an AssemblyRef.
    fn assembly_ref_props(&self, r: mdAssemblyRef) -> Result<(String, [u16; 4], String, &[u8])> {
        let mut key: *const c_void = core::ptr::null();
        let mut key_len = 0;
        let mut locale = [0 as WCHAR; 64];
        let mut meta = ASSEMBLYMETADATA {
            usMajorVersion: 0,
            usMinorVersion: 0,
            usBuildNumber: 0,
            usRevisionNumber: 0,
            szLocale: locale.as_mut_ptr(),
            cbLocale: locale.len() as u32,
            rProcessor: core::ptr::null_mut(),
            ulProcessor: 0,
            rOS: core::ptr::null_mut(),
            ulOS: 0,
        };
        let mut flags = 0;
        let name = read_utf16(|cap, needed, buf| {
            meta.cbLocale = locale.len() as u32;
            // SAFETY: valid out-pointers; `buf` has `cap` characters and
            // `szLocale` `cbLocale`; no hash asked for.
            unsafe {
                self.assembly_import.GetAssemblyRefProps(
                    r,
                    &mut key,
                    &mut key_len,
                    buf,
                    cap,
                    needed,
                    &mut meta,
                    core::ptr::null_mut(),
                    core::ptr::null_mut(),
                    &mut flags,
                )
            }
        })?;
        let culture_len = (meta.cbLocale as usize).min(locale.len());
        let culture = super::strings::decode(&locale[..culture_len]);
        let version = [
            meta.usMajorVersion,
            meta.usMinorVersion,
            meta.usBuildNumber,
            meta.usRevisionNumber,
        ];
        // SAFETY: the key lives in the scope's blob heap, as long as `self`.
        let key = unsafe { blob(key.cast::<u8>(), key_len) };
        Ok((name, version, culture, key))
    }

    /// The TypeRef of `name` (namespace and name joined with `.`) in
    /// `scope`: an AssemblyRef, a ModuleRef, or the enclosing TypeRef of a
    /// nested type (`FindTypeRef`, else `DefineTypeRefByName`).
    pub fn type_ref(&self, scope: mdToken, name: &str) -> Result<mdTypeRef> {
        let name = wide(name)?;
        let mut out = mdTypeRef(0);
        // SAFETY: a NUL-terminated name and a valid out-pointer.
        let hr = unsafe {
            self.import
                .raw()
                .FindTypeRef(scope, name.as_ptr(), &mut out)
        };
        if hr == S_OK {
            return Ok(out);
        }
        if hr != CLDB_E_RECORD_NOTFOUND {
            return Err(hr);
        }
        // SAFETY: as above.
        unsafe {
            self.emit
                .DefineTypeRefByName(scope, name.as_ptr(), &mut out)
        }
        .ok()?;
        Ok(out)
    }

    /// The resolution scope of the module's existing TypeRef named `name`
    /// (`System.Object`): how to reach the core library the module already
    /// references (`System.Runtime`, `mscorlib`, `netstandard`, ...)
    /// without naming it. `CLDB_E_RECORD_NOTFOUND` when there is none.
    pub fn scope_of_type_ref(&self, name: &str) -> Result<mdToken> {
        let refs = enumerate(self.import.raw(), |h, out, max, n| {
            // SAFETY: the enumerate contract.
            unsafe { self.import.raw().EnumTypeRefs(h, out, max, n) }
        })?;
        for r in refs {
            let mut scope = mdToken(0);
            let found = read_utf16(|cap, needed, buf| {
                // SAFETY: `buf` has `cap` characters; valid out-pointers.
                unsafe {
                    self.import
                        .raw()
                        .GetTypeRefProps(r, &mut scope, buf, cap, needed)
                }
            })?;
            if found == name {
                return Ok(scope);
            }
        }
        Err(CLDB_E_RECORD_NOTFOUND)
    }

    /// The MemberRef of `name` with signature blob `signature` in `parent`
    /// (a TypeRef, TypeDef, TypeSpec, ModuleRef or MethodDef):
    /// `FindMemberRef`, else `DefineMemberRef`. Build the blob with
    /// [`MethodSig`](crate::cil::MethodSig) and encode it.
    pub fn member_ref(&self, parent: mdToken, name: &str, signature: &[u8]) -> Result<mdMemberRef> {
        let name = wide(name)?;
        let len = len_u32(signature.len())?;
        let mut out = mdMemberRef(0);
        // SAFETY: a NUL-terminated name, `len` bytes at `signature`, a
        // valid out-pointer. FindMemberRef takes the parent as mdTypeRef in
        // the header's declaration, but accepts every MemberRefParent.
        let hr = unsafe {
            self.import.raw().FindMemberRef(
                mdTypeRef(parent.0),
                name.as_ptr(),
                signature.as_ptr(),
                len,
                &mut out,
            )
        };
        if hr == S_OK {
            return Ok(out);
        }
        if hr != CLDB_E_RECORD_NOTFOUND {
            return Err(hr);
        }
        // SAFETY: as above.
        unsafe {
            self.emit
                .DefineMemberRef(parent, name.as_ptr(), signature.as_ptr(), len, &mut out)
        }
        .ok()?;
        Ok(out)
    }

    /// The MethodSpec instantiating generic method `parent` (MethodDef or
    /// MemberRef) with `instantiation` (a
    /// [`MethodSpecSig`](crate::cil::MethodSpecSig) blob): an existing one
    /// (`EnumMethodSpecs` of the parent), else `DefineMethodSpec`.
    pub fn method_spec(&self, parent: mdToken, instantiation: &[u8]) -> Result<mdMethodSpec> {
        let import2 = self.import.raw().cast::<IMetaDataImport2>()?;
        let specs = enumerate(self.import.raw(), |h, out, max, n| {
            // SAFETY: the enumerate contract.
            unsafe { import2.EnumMethodSpecs(h, parent, out, max, n) }
        })?;
        for s in specs {
            let mut p = mdToken(0);
            let (mut sig, mut len): (PCCOR_SIGNATURE, u32) = (core::ptr::null(), 0);
            // SAFETY: valid out-pointers.
            unsafe { import2.GetMethodSpecProps(s, &mut p, &mut sig, &mut len) }.ok()?;
            // SAFETY: the blob lives in the scope's heap during this call.
            if p == parent && unsafe { blob(sig, len) } == instantiation {
                return Ok(s);
            }
        }
        let emit2 = self.emit.cast::<IMetaDataEmit2>()?;
        let mut out = mdMethodSpec(0);
        // SAFETY: `instantiation` has the given length; a valid out-pointer.
        unsafe {
            emit2.DefineMethodSpec(
                parent,
                instantiation.as_ptr(),
                len_u32(instantiation.len())?,
                &mut out,
            )
        }
        .ok()?;
        Ok(out)
    }

    /// The TypeSpec of a type signature blob (a
    /// [`TypeSig`](crate::cil::TypeSig) encoded: `int32`, `!!0`,
    /// `List<!0>`): an existing one (`EnumTypeSpecs`), else
    /// `GetTokenFromTypeSpec`.
    pub fn type_spec(&self, signature: &[u8]) -> Result<mdTypeSpec> {
        let import = self.import.raw();
        let specs = enumerate(import, |h, out, max, n| {
            // SAFETY: the enumerate contract.
            unsafe { import.EnumTypeSpecs(h, out, max, n) }
        })?;
        for s in specs {
            let (mut sig, mut len): (PCCOR_SIGNATURE, u32) = (core::ptr::null(), 0);
            // SAFETY: valid out-pointers.
            unsafe { import.GetTypeSpecFromToken(s, &mut sig, &mut len) }.ok()?;
            // SAFETY: the blob lives in the scope's heap during this call.
            if unsafe { blob(sig, len) } == signature {
                return Ok(s);
            }
        }
        let mut out = mdTypeSpec(0);
        // SAFETY: `signature` has the given length; a valid out-pointer.
        unsafe {
            self.emit
                .GetTokenFromTypeSpec(signature.as_ptr(), len_u32(signature.len())?, &mut out)
        }
        .ok()?;
        Ok(out)
    }

    /// The user-string token (`ldstr` operand) of `text`: an existing one
    /// (`EnumUserStrings`), else `DefineUserString`.
    pub fn user_string(&self, text: &str) -> Result<mdString> {
        let import = self.import.raw();
        let units: Vec<WCHAR> = text.encode_utf16().collect();
        let strings = enumerate(import, |h, out, max, n| {
            // SAFETY: the enumerate contract.
            unsafe { import.EnumUserStrings(h, out, max, n) }
        })?;
        for s in strings {
            let mut len = 0u32;
            // A zero-capacity probe gives the length (no terminator counted).
            // SAFETY: a null buffer of capacity 0 is allowed; valid out-pointer.
            unsafe { import.GetUserString(s, core::ptr::null_mut(), 0, &mut len) }.ok()?;
            if len as usize != units.len() {
                continue;
            }
            let mut buf: Vec<WCHAR> = alloc::vec![0; units.len()];
            // SAFETY: `buf` has room for `len` characters.
            unsafe { import.GetUserString(s, buf.as_mut_ptr(), len, &mut len) }.ok()?;
            if buf == units {
                return Ok(s);
            }
        }
        let mut out = mdString(0);
        // SAFETY: `units` has the given length (the call takes a length, no
        // terminator); a valid out-pointer.
        unsafe {
            self.emit
                .DefineUserString(units.as_ptr(), len_u32(units.len())?, &mut out)
        }
        .ok()?;
        Ok(out)
    }

    /// The StandAloneSig token of a signature blob (a local variable
    /// signature for a method header, or a `calli` site): an existing one
    /// (`EnumSignatures`), else `GetTokenFromSig`.
    pub fn standalone_sig(&self, signature: &[u8]) -> Result<mdSignature> {
        let import = self.import.raw();
        let sigs = enumerate(import, |h, out, max, n| {
            // SAFETY: the enumerate contract.
            unsafe { import.EnumSignatures(h, out, max, n) }
        })?;
        for s in sigs {
            let (mut sig, mut len): (PCCOR_SIGNATURE, u32) = (core::ptr::null(), 0);
            // SAFETY: valid out-pointers.
            unsafe { import.GetSigFromToken(s, &mut sig, &mut len) }.ok()?;
            // SAFETY: the blob lives in the scope's heap during this call.
            if unsafe { blob(sig, len) } == signature {
                return Ok(s);
            }
        }
        let mut out = mdSignature(0);
        // SAFETY: `signature` has the given length; a valid out-pointer.
        unsafe {
            self.emit
                .GetTokenFromSig(signature.as_ptr(), len_u32(signature.len())?, &mut out)
        }
        .ok()?;
        Ok(out)
    }

    /// The signature blob of a StandAloneSig (`GetSigFromToken`), for
    /// example a method's local variable signature, copied.
    pub fn signature_blob(&self, token: mdSignature) -> Result<Vec<u8>> {
        let (mut sig, mut len): (PCCOR_SIGNATURE, u32) = (core::ptr::null(), 0);
        // SAFETY: valid out-pointers.
        unsafe { self.import.raw().GetSigFromToken(token, &mut sig, &mut len) }.ok()?;
        // SAFETY: the blob lives in the scope's heap during this call.
        Ok(unsafe { blob(sig, len) }.to_vec())
    }
}
