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
//! Open a module's metadata for writing with
//! [`ProfilerInfo::module_metadata_emit`](crate::facade::ProfilerInfo::module_metadata_emit) once the module has loaded
//! (`ModuleLoadFinished` onward); a module without metadata (a resource
//! module) answers `S_FALSE` and no interface, which is `Ok(None)`.
//! Measured on CoreCLR 3.1 (`tests/e2e_calltarget.rs`): references added in
//! `JITCompilationStarted` and used by the IL installed there work, and so
//! do references added in `ModuleLoadFinished` and used by IL installed in
//! ReJIT's `GetReJITParameters`. Microsoft's ReJIT guidance reserves
//! metadata changes for ReJIT to `ModuleLoadFinished`, so prepare ReJIT IL
//! there (the `call_target` example does). This facade defines references
//! only, never new types, methods or fields (those must exist before the
//! module's types load). See docs/instrumentation.md.

use alloc::string::String;
use alloc::sync::{Arc, Weak};
use alloc::vec::Vec;
use core::ffi::c_void;
use std::collections::{HashMap, HashSet};
use std::sync::Mutex;

use super::metadata::{blob, enumerate, MetadataImport};
use super::result::Result;
use super::strings::{read_utf16, wide};
use crate::metadata::{
    mdAssemblyRef, mdMemberRef, mdMethodSpec, mdSignature, mdString, mdToken, mdTypeRef,
    mdTypeSpec, IMetaDataAssemblyEmit, IMetaDataAssemblyImport, IMetaDataEmit, IMetaDataEmit2,
    IMetaDataImport, IMetaDataImport2, ASSEMBLYMETADATA, CLDB_E_RECORD_NOTFOUND, PCCOR_SIGNATURE,
};
use crate::support::sync::lock;
use crate::{IUnknown, E_INVALIDARG, HRESULT, S_OK, WCHAR};

/// What this facade knows of one metadata scope, shared by every
/// [`MetadataEmit`] of that scope: the tokens it found or defined, by what
/// identifies them. Its lock is held across each "ask, then define" pair,
/// so that two threads adding the same reference to the same scope cannot
/// both find it missing and define it twice; scopes do not wait for each
/// other. After the first lookup of a kind, a lookup of that kind is a hash
/// look-up instead of a scan of the scope's table (the scan of a large
/// module's TypeRefs or signatures on every wrapped method made wrapping
/// quadratic).
#[derive(Default)]
struct Memo {
    /// AssemblyRefs by what identifies them.
    assembly_refs: Option<HashMap<AssemblyKey, mdAssemblyRef>>,
    /// TypeRefs by (resolution scope, full name).
    type_refs: HashMap<(mdToken, String), mdTypeRef>,
    /// Resolution scopes of existing TypeRefs by full name (the first).
    type_ref_scopes: Option<HashMap<String, mdToken>>,
    /// MemberRefs by (parent, name, signature).
    member_refs: HashMap<(mdToken, String, Vec<u8>), mdMemberRef>,
    /// MethodSpecs by (parent, instantiation), per parent scanned once.
    method_specs: HashMap<(mdToken, Vec<u8>), mdMethodSpec>,
    method_spec_parents: HashSet<mdToken>,
    /// TypeSpecs, user strings and StandAloneSigs by their blob or text.
    type_specs: Option<HashMap<Vec<u8>, mdTypeSpec>>,
    user_strings: Option<HashMap<Vec<WCHAR>, mdString>>,
    signatures: Option<HashMap<Vec<u8>, mdSignature>>,
}

/// An AssemblyRef's identity: lower-case name, version, culture, key.
type AssemblyKey = (String, [u16; 4], String, Vec<u8>);

/// The shared state of one scope (see [`Memo`]).
#[derive(Default)]
struct Scope {
    memo: Mutex<Memo>,
}

/// The scopes that have a [`MetadataEmit`] alive, by the address of their
/// `IUnknown` identity. Every `MetadataEmit` holding a [`Scope`] also holds
/// a reference to the scope's COM object, so the address cannot be reused
/// by another object while the `Scope` lives; an entry whose `Scope` died
/// is replaced. Locked only while a `MetadataEmit` is created.
static SCOPES: Mutex<Vec<(usize, Weak<Scope>)>> = Mutex::new(Vec::new());

/// The shared state of the scope whose identity is at `identity`.
fn scope_state(identity: usize) -> Arc<Scope> {
    let mut scopes = lock(&SCOPES);
    scopes.retain(|(_, scope)| scope.strong_count() > 0);
    if let Some(scope) = scopes
        .iter()
        .find(|(address, _)| *address == identity)
        .and_then(|(_, scope)| scope.upgrade())
    {
        return scope;
    }
    let scope = Arc::new(Scope::default());
    scopes.push((identity, Arc::downgrade(&scope)));
    scope
}

/// What identifies a referenced assembly: the fields of an AssemblyRef row
/// (ECMA-335 II.22.5). `Default` is the empty name, version 0.0.0.0, no key,
/// neutral culture: `AssemblyReference { name, ..Default::default() }`
/// references an unsigned, unversioned assembly by its simple name.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
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
/// "ask first" half of every method. Every `MetadataEmit` of one scope
/// shares what it found and defined there: keep one per module, or open it
/// again for each change, at the same cost after the first.
#[derive(Clone)]
pub struct MetadataEmit {
    emit: IMetaDataEmit,
    import: MetadataImport,
    assembly_emit: IMetaDataAssemblyEmit,
    assembly_import: IMetaDataAssemblyImport,
    scope: Arc<Scope>,
}

impl core::fmt::Debug for MetadataEmit {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("MetadataEmit")
            .field("emit", &self.emit)
            .finish_non_exhaustive()
    }
}

fn len_u32(n: usize) -> Result<u32> {
    u32::try_from(n).map_err(|_| crate::Error::new(E_INVALIDARG, "a length past u32::MAX"))
}

/// Every token of `tokens` by its blob, as `read` answers it (the first
/// token of each blob).
///
/// # Safety
///
/// On success `read` must have written a pointer to `len` bytes (or null)
/// that stay valid until this function returns: a metadata getter of the
/// scope the tokens belong to does (its blobs live in the scope's heap).
unsafe fn blobs_of<T: Copy>(
    tokens: Vec<T>,
    read: impl Fn(T, &mut PCCOR_SIGNATURE, &mut u32) -> HRESULT,
) -> Result<HashMap<Vec<u8>, T>> {
    let mut known = HashMap::with_capacity(tokens.len());
    for token in tokens {
        let (mut sig, mut len): (PCCOR_SIGNATURE, u32) = (core::ptr::null(), 0);
        read(token, &mut sig, &mut len).ok()?;
        // SAFETY: the caller's contract on `read`.
        known
            .entry(unsafe { blob(sig, len) }.to_vec())
            .or_insert(token);
    }
    Ok(known)
}

impl MetadataImport {
    /// The simple name of the assembly whose manifest this scope holds
    /// (`GetAssemblyFromScope`, `GetAssemblyProps`): known as soon as the
    /// module's metadata is, unlike `GetAssemblyInfo`, which needs the module
    /// attached to its assembly.
    pub fn assembly_name(&self) -> Result<String> {
        let assembly_import = self.raw().cast::<IMetaDataAssemblyImport>()?;
        let mut assembly = crate::metadata::mdAssembly(0);
        // SAFETY: a valid out-pointer.
        unsafe { assembly_import.GetAssemblyFromScope(&mut assembly) }
            .ok_with("GetAssemblyFromScope")?;
        let mut flags = 0;
        read_utf16(|cap, needed, buf| {
            // SAFETY: `buf` has `cap` characters; the optional outputs are null.
            unsafe {
                assembly_import.GetAssemblyProps(
                    assembly,
                    core::ptr::null_mut(),
                    core::ptr::null_mut(),
                    core::ptr::null_mut(),
                    buf,
                    cap,
                    needed,
                    core::ptr::null_mut(),
                    &mut flags,
                )
            }
        })
        .map_err(|hr| crate::Error::new(hr, "GetAssemblyProps"))
    }
}

impl MetadataEmit {
    /// Wraps a module's `IMetaDataEmit`; fails (`E_NOINTERFACE`) unless the
    /// same scope also answers `IMetaDataImport`, `IMetaDataAssemblyEmit`
    /// and `IMetaDataAssemblyImport` (the runtime's scopes answer all).
    pub fn new(emit: IMetaDataEmit) -> Result<MetadataEmit> {
        // COM's identity rule: QueryInterface for IUnknown answers the same
        // pointer for every interface of one object.
        let identity = emit.cast::<IUnknown>()?.as_raw() as usize;
        Ok(MetadataEmit {
            import: MetadataImport::new(emit.cast::<IMetaDataImport>()?),
            assembly_emit: emit.cast::<IMetaDataAssemblyEmit>()?,
            assembly_import: emit.cast::<IMetaDataAssemblyImport>()?,
            emit,
            scope: scope_state(identity),
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
        let mut memo = lock(&self.scope.memo);
        let wanted = (
            assembly.name.to_ascii_lowercase(),
            assembly.version,
            String::from(assembly.culture),
            assembly.public_key_or_token.to_vec(),
        );
        let known = match &mut memo.assembly_refs {
            Some(known) => known,
            none => {
                let refs = enumerate(self.import.raw(), |h, out, max, n| {
                    // SAFETY: the enumerate contract: valid handle, buffer of `max`.
                    unsafe { self.assembly_import.EnumAssemblyRefs(h, out, max, n) }
                })?;
                let mut known = HashMap::new();
                for r in refs {
                    let (name, version, culture, key) = self.assembly_ref_props(r)?;
                    known
                        .entry((name.to_ascii_lowercase(), version, culture, key.to_vec()))
                        .or_insert(r);
                }
                none.insert(known)
            }
        };
        if let Some(&r) = known.get(&wanted) {
            return Ok(r);
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
        .ok_with("DefineAssemblyRef")?;
        known.insert(wanted, out);
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
        })
        .map_err(|hr| crate::Error::new(hr, "GetAssemblyRefProps"))?;
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
        let mut memo = lock(&self.scope.memo);
        let key = (scope, String::from(name));
        if let Some(&known) = memo.type_refs.get(&key) {
            return Ok(known);
        }
        let name = wide(name)?;
        let mut out = mdTypeRef(0);
        // SAFETY: a NUL-terminated name and a valid out-pointer.
        let hr = unsafe {
            self.import
                .raw()
                .FindTypeRef(scope, name.as_ptr(), &mut out)
        };
        if hr != S_OK {
            if hr != CLDB_E_RECORD_NOTFOUND {
                return Err(crate::Error::new(hr, "FindTypeRef"));
            }
            // SAFETY: as above.
            unsafe {
                self.emit
                    .DefineTypeRefByName(scope, name.as_ptr(), &mut out)
            }
            .ok_with("DefineTypeRefByName")?;
        }
        memo.type_refs.insert(key, out);
        Ok(out)
    }

    /// The resolution scope of the module's existing TypeRef named `name`
    /// (`System.Object`): how to reach the core library the module already
    /// references (`System.Runtime`, `mscorlib`, `netstandard`, ...)
    /// without naming it. `CLDB_E_RECORD_NOTFOUND` when there is none.
    pub fn scope_of_type_ref(&self, name: &str) -> Result<mdToken> {
        let mut memo = lock(&self.scope.memo);
        if let Some(known) = &memo.type_ref_scopes {
            return known
                .get(name)
                .copied()
                .ok_or(CLDB_E_RECORD_NOTFOUND.into());
        }
        let refs = enumerate(self.import.raw(), |h, out, max, n| {
            // SAFETY: the enumerate contract.
            unsafe { self.import.raw().EnumTypeRefs(h, out, max, n) }
        })?;
        let mut known = HashMap::new();
        for r in refs {
            let mut scope = mdToken(0);
            let found = read_utf16(|cap, needed, buf| {
                // SAFETY: `buf` has `cap` characters; valid out-pointers.
                unsafe {
                    self.import
                        .raw()
                        .GetTypeRefProps(r, &mut scope, buf, cap, needed)
                }
            })
            .map_err(|hr| crate::Error::new(hr, "GetTypeRefProps"))?;
            known.entry(found).or_insert(scope);
        }
        let answer = known
            .get(name)
            .copied()
            .ok_or(CLDB_E_RECORD_NOTFOUND.into());
        memo.type_ref_scopes = Some(known);
        answer
    }

    /// The MemberRef of `name` with signature blob `signature` in `parent`
    /// (a TypeRef, TypeDef, TypeSpec, ModuleRef or MethodDef):
    /// `FindMemberRef`, else `DefineMemberRef`. Build the blob with
    /// [`MethodSig`](crate::cil::MethodSig) and encode it.
    pub fn member_ref(&self, parent: mdToken, name: &str, signature: &[u8]) -> Result<mdMemberRef> {
        let mut memo = lock(&self.scope.memo);
        let key = (parent, String::from(name), signature.to_vec());
        if let Some(&known) = memo.member_refs.get(&key) {
            return Ok(known);
        }
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
        if hr != S_OK {
            if hr != CLDB_E_RECORD_NOTFOUND {
                return Err(crate::Error::new(hr, "FindMemberRef"));
            }
            // SAFETY: as above.
            unsafe {
                self.emit
                    .DefineMemberRef(parent, name.as_ptr(), signature.as_ptr(), len, &mut out)
            }
            .ok_with("DefineMemberRef")?;
        }
        memo.member_refs.insert(key, out);
        Ok(out)
    }

    /// The MethodSpec instantiating generic method `parent` (MethodDef or
    /// MemberRef) with `instantiation` (a
    /// [`MethodSpecSig`](crate::cil::MethodSpecSig) blob): an existing one
    /// (`EnumMethodSpecs` of the parent), else `DefineMethodSpec`.
    pub fn method_spec(&self, parent: mdToken, instantiation: &[u8]) -> Result<mdMethodSpec> {
        let mut memo = lock(&self.scope.memo);
        if !memo.method_spec_parents.contains(&parent) {
            let import2 = self.import.raw().cast::<IMetaDataImport2>()?;
            let specs = enumerate(self.import.raw(), |h, out, max, n| {
                // SAFETY: the enumerate contract.
                unsafe { import2.EnumMethodSpecs(h, parent, out, max, n) }
            })?;
            for s in specs {
                let mut p = mdToken(0);
                let (mut sig, mut len): (PCCOR_SIGNATURE, u32) = (core::ptr::null(), 0);
                // SAFETY: valid out-pointers.
                unsafe { import2.GetMethodSpecProps(s, &mut p, &mut sig, &mut len) }
                    .ok_with("GetMethodSpecProps")?;
                if p == parent {
                    // SAFETY: the blob lives in the scope's heap during this call.
                    let blob = unsafe { blob(sig, len) }.to_vec();
                    memo.method_specs.entry((parent, blob)).or_insert(s);
                }
            }
            memo.method_spec_parents.insert(parent);
        }
        let key = (parent, instantiation.to_vec());
        if let Some(&known) = memo.method_specs.get(&key) {
            return Ok(known);
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
        .ok_with("DefineMethodSpec")?;
        memo.method_specs.insert(key, out);
        Ok(out)
    }

    /// The TypeSpec of a type signature blob (a
    /// [`TypeSig`](crate::cil::TypeSig) encoded: `int32`, `!!0`,
    /// `List<!0>`): an existing one (`EnumTypeSpecs`), else
    /// `GetTokenFromTypeSpec`.
    pub fn type_spec(&self, signature: &[u8]) -> Result<mdTypeSpec> {
        let mut memo = lock(&self.scope.memo);
        let import = self.import.raw();
        let known = match &mut memo.type_specs {
            Some(known) => known,
            none => {
                let specs = enumerate(import, |h, out, max, n| {
                    // SAFETY: the enumerate contract.
                    unsafe { import.EnumTypeSpecs(h, out, max, n) }
                })?;
                let read = |s, sig: &mut PCCOR_SIGNATURE, len: &mut u32| {
                    // SAFETY: valid out-pointers.
                    unsafe { import.GetTypeSpecFromToken(s, sig, len) }
                };
                // SAFETY: GetTypeSpecFromToken writes a blob of the scope's heap.
                none.insert(unsafe { blobs_of(specs, read) }?)
            }
        };
        if let Some(&s) = known.get(signature) {
            return Ok(s);
        }
        let mut out = mdTypeSpec(0);
        // SAFETY: `signature` has the given length; a valid out-pointer.
        unsafe {
            self.emit
                .GetTokenFromTypeSpec(signature.as_ptr(), len_u32(signature.len())?, &mut out)
        }
        .ok_with("GetTokenFromTypeSpec")?;
        known.insert(signature.to_vec(), out);
        Ok(out)
    }

    /// The user-string token (`ldstr` operand) of `text`: an existing one
    /// (`EnumUserStrings`), else `DefineUserString`.
    pub fn user_string(&self, text: &str) -> Result<mdString> {
        let mut memo = lock(&self.scope.memo);
        let import = self.import.raw();
        let units: Vec<WCHAR> = text.encode_utf16().collect();
        let known = match &mut memo.user_strings {
            Some(known) => known,
            none => {
                let strings = enumerate(import, |h, out, max, n| {
                    // SAFETY: the enumerate contract.
                    unsafe { import.EnumUserStrings(h, out, max, n) }
                })?;
                let mut known = HashMap::new();
                for s in strings {
                    let mut len = 0u32;
                    // A zero-capacity probe gives the length (no terminator counted).
                    // SAFETY: a null buffer of capacity 0 is allowed; valid out-pointer.
                    unsafe { import.GetUserString(s, core::ptr::null_mut(), 0, &mut len) }
                        .ok_with("GetUserString")?;
                    let mut buf: Vec<WCHAR> = alloc::vec![0; len as usize];
                    // SAFETY: `buf` has room for `len` characters.
                    unsafe { import.GetUserString(s, buf.as_mut_ptr(), len, &mut len) }
                        .ok_with("GetUserString")?;
                    buf.truncate(len as usize);
                    known.entry(buf).or_insert(s);
                }
                none.insert(known)
            }
        };
        if let Some(&s) = known.get(&units) {
            return Ok(s);
        }
        let mut out = mdString(0);
        // SAFETY: `units` has the given length (the call takes a length, no
        // terminator); a valid out-pointer.
        unsafe {
            self.emit
                .DefineUserString(units.as_ptr(), len_u32(units.len())?, &mut out)
        }
        .ok_with("DefineUserString")?;
        known.insert(units, out);
        Ok(out)
    }

    /// The StandAloneSig token of a signature blob (a local variable
    /// signature for a method header, or a `calli` site): an existing one
    /// (`EnumSignatures`), else `GetTokenFromSig`.
    pub fn standalone_sig(&self, signature: &[u8]) -> Result<mdSignature> {
        let mut memo = lock(&self.scope.memo);
        let import = self.import.raw();
        let known = match &mut memo.signatures {
            Some(known) => known,
            none => {
                let sigs = enumerate(import, |h, out, max, n| {
                    // SAFETY: the enumerate contract.
                    unsafe { import.EnumSignatures(h, out, max, n) }
                })?;
                let read = |s, sig: &mut PCCOR_SIGNATURE, len: &mut u32| {
                    // SAFETY: valid out-pointers.
                    unsafe { import.GetSigFromToken(s, sig, len) }
                };
                // SAFETY: GetSigFromToken writes a blob of the scope's heap.
                none.insert(unsafe { blobs_of(sigs, read) }?)
            }
        };
        if let Some(&s) = known.get(signature) {
            return Ok(s);
        }
        let mut out = mdSignature(0);
        // SAFETY: `signature` has the given length; a valid out-pointer.
        unsafe {
            self.emit
                .GetTokenFromSig(signature.as_ptr(), len_u32(signature.len())?, &mut out)
        }
        .ok_with("GetTokenFromSig")?;
        known.insert(signature.to_vec(), out);
        Ok(out)
    }

    /// The signature blob of a StandAloneSig (`GetSigFromToken`), for
    /// example a method's local variable signature, copied.
    pub fn signature_blob(&self, token: mdSignature) -> Result<Vec<u8>> {
        let (mut sig, mut len): (PCCOR_SIGNATURE, u32) = (core::ptr::null(), 0);
        // SAFETY: valid out-pointers.
        unsafe { self.import.raw().GetSigFromToken(token, &mut sig, &mut len) }
            .ok_with("GetSigFromToken")?;
        // SAFETY: the blob lives in the scope's heap during this call.
        Ok(unsafe { blob(sig, len) }.to_vec())
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::E_FAIL;

    /// The unit tests' fake scope, which the facade defines rows in.
    pub(crate) type Fake = crate::fake_scope::FakeScope;

    /// A fresh fake scope and a `MetadataEmit` of it.
    pub(crate) fn scope() -> (MetadataEmit, Fake) {
        let fake = Fake::new();
        (fake.emit(), fake)
    }

    const HELPER: AssemblyReference<'static> = AssemblyReference {
        name: "CallTargetProbe",
        version: [1, 2, 3, 4],
        public_key_or_token: &[0xB7, 0x7A, 0x5C, 0x56, 0x19, 0x34, 0xE0, 0x89],
        culture: "",
        flags: 0,
    };

    #[test]
    fn every_reference_is_defined_once_and_found_after() {
        let (emit, fake) = scope();
        let asm = emit.assembly_ref(&HELPER).unwrap();
        let probe = emit.type_ref(asm.token(), "CallTarget.Probe").unwrap();
        let nested = emit.type_ref(probe.token(), "Inner").unwrap();
        let sig = [0x00, 0x01, 0x01, 0x0E];
        let member = emit.member_ref(probe.token(), "Begin", &sig).unwrap();
        let spec = emit
            .method_spec(member.token(), &[0x0A, 0x01, 0x08])
            .unwrap();
        let ts = emit.type_spec(&[0x1E, 0x00]).unwrap();
        let s = emit.user_string("N.T::M").unwrap();
        let locals = emit.standalone_sig(&[0x07, 0x01, 0x1C]).unwrap();
        assert_eq!(fake.t().defines, 8);
        // Asking again finds every row: no new definitions, same tokens.
        assert_eq!(emit.assembly_ref(&HELPER), Ok(asm));
        assert_eq!(emit.type_ref(asm.token(), "CallTarget.Probe"), Ok(probe));
        assert_eq!(emit.type_ref(probe.token(), "Inner"), Ok(nested));
        assert_eq!(emit.member_ref(probe.token(), "Begin", &sig), Ok(member));
        assert_eq!(
            emit.method_spec(member.token(), &[0x0A, 0x01, 0x08]),
            Ok(spec)
        );
        assert_eq!(emit.type_spec(&[0x1E, 0x00]), Ok(ts));
        assert_eq!(emit.user_string("N.T::M"), Ok(s));
        assert_eq!(emit.standalone_sig(&[0x07, 0x01, 0x1C]), Ok(locals));
        assert_eq!(fake.t().defines, 8, "nothing defined twice");
        // What was defined is what was asked for.
        let t = fake.t();
        assert_eq!(
            t.assembly_refs[0],
            (
                "CallTargetProbe".into(),
                [1, 2, 3, 4],
                String::new(),
                HELPER.public_key_or_token.into()
            )
        );
        assert_eq!(
            t.type_refs[1],
            (probe.token(), "Inner".into()),
            "nested in its TypeRef"
        );
        assert_eq!(t.member_refs[0].2[..], sig);
        assert_eq!(t.opened, t.closed, "every enumerator closed");
        assert!(t.opened > 0);
    }

    #[test]
    fn a_scope_is_scanned_once_and_shared_by_its_emitters() {
        let (emit, fake) = scope();
        // Rows the scope had before: found by the first look-up.
        fake.t().type_specs.push([0x1E, 0x00].into());
        fake.t().signatures.push([0x07, 0x01, 0x08].into());
        let ts = emit.type_spec(&[0x1E, 0x00]).unwrap();
        let locals = emit.standalone_sig(&[0x07, 0x01, 0x08]).unwrap();
        assert_eq!((ts.rid(), locals.rid()), (1, 1));
        assert_eq!(fake.t().defines, 0);
        let scans = fake.t().opened;
        assert_eq!(scans, 2, "one scan of each table");
        // Many more look-ups and definitions scan nothing again.
        for i in 1..=100u8 {
            emit.type_spec(&[0x1E, i]).unwrap();
            emit.standalone_sig(&[0x07, 0x01, i]).unwrap();
            emit.type_ref(mdToken(0x2300_0001), &alloc::format!("N.T{i}"))
                .unwrap();
        }
        assert_eq!(fake.t().opened, scans);
        assert_eq!(fake.t().defines, 200 + 100 - 1, "0x08 existed");
        // Another MetadataEmit of the same scope shares what was found.
        let again = MetadataEmit::new(emit.raw().clone()).unwrap();
        assert_eq!(again.type_spec(&[0x1E, 50]), emit.type_spec(&[0x1E, 50]));
        assert_eq!(again.standalone_sig(&[0x07, 0x01, 0x08]), Ok(locals));
        let t = fake.t();
        assert_eq!((t.opened, t.defines), (scans, 299));
        drop(t);
        // Another scope has its own.
        let (other, other_fake) = scope();
        assert_eq!(other.type_spec(&[0x1E, 0x00]).unwrap().rid(), 1);
        assert_eq!(other_fake.t().defines, 1);
    }

    #[test]
    fn rows_that_differ_in_any_part_are_new_rows() {
        let (emit, fake) = scope();
        let a = emit.assembly_ref(&HELPER).unwrap();
        let other_version = AssemblyReference {
            version: [1, 2, 3, 5],
            ..HELPER
        };
        let b = emit.assembly_ref(&other_version).unwrap();
        assert_ne!(a, b);
        let same_name_other_case = AssemblyReference {
            name: "calltargetprobe",
            ..HELPER
        };
        assert_eq!(
            emit.assembly_ref(&same_name_other_case),
            Ok(a),
            "names ignore case"
        );
        let p1 = emit.type_ref(a.token(), "T").unwrap();
        let p2 = emit.type_ref(b.token(), "T").unwrap();
        assert_ne!(p1, p2, "same name, other scope");
        let m1 = emit
            .member_ref(p1.token(), "M", &[0x00, 0x00, 0x01])
            .unwrap();
        let m2 = emit
            .member_ref(p1.token(), "M", &[0x00, 0x00, 0x08])
            .unwrap();
        assert_ne!(m1, m2, "same name, other signature");
        let s1 = emit.method_spec(m1.token(), &[0x0A, 0x01, 0x08]).unwrap();
        let s2 = emit.method_spec(m2.token(), &[0x0A, 0x01, 0x08]).unwrap();
        assert_ne!(s1, s2, "same instantiation, other method");
        let u1 = emit.user_string("abc").unwrap();
        let u2 = emit.user_string("abd").unwrap();
        assert_ne!(u1, u2, "same length, other text");
        assert_eq!(emit.user_string("abc"), Ok(u1));
        assert_eq!(fake.t().defines, 10);
    }

    #[test]
    fn scope_of_an_existing_type_ref_and_errors() {
        let (emit, fake) = scope();
        let runtime = mdToken(0x2300_0001);
        emit.type_ref(runtime, "System.Object").unwrap();
        assert_eq!(emit.scope_of_type_ref("System.Object"), Ok(runtime));
        assert_eq!(
            emit.scope_of_type_ref("System.Nope"),
            Err(CLDB_E_RECORD_NOTFOUND.into())
        );
        // A lookup that fails for another reason is an error, not a define.
        fake.t().find_type_ref_fails = Some(E_FAIL);
        let before = fake.t().defines;
        assert_eq!(
            emit.type_ref(runtime, "System.Exception"),
            Err(E_FAIL.into())
        );
        assert_eq!(fake.t().defines, before);
        // Names with NUL are refused before any call.
        assert_eq!(
            emit.user_string("a\0b"),
            Ok(emit.user_string("a\0b").unwrap())
        );
        assert_eq!(
            emit.member_ref(runtime, "a\0", &[]),
            Err(E_INVALIDARG.into())
        );
    }

    #[test]
    fn threads_adding_the_same_reference_define_it_once() {
        let (emit, fake) = scope();
        fake.t().find_delay_ms = 20;
        let start = std::sync::Barrier::new(8);
        let tokens: Vec<mdTypeRef> = std::thread::scope(|threads| {
            let handles: Vec<_> = (0..8)
                .map(|_| {
                    threads.spawn(|| {
                        start.wait();
                        emit.type_ref(mdToken(0x2300_0001), "T").unwrap()
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        assert!(tokens.iter().all(|&t| t == tokens[0]), "{tokens:?}");
        assert_eq!(fake.t().defines, 1);
        assert_eq!(fake.t().type_refs.len(), 1);
    }
}
