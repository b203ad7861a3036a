//! [`CallTarget`]: wrap a method of a module so that it calls the generic
//! methods of an integration type in a managed helper assembly the module
//! never referenced (see [`crate::cil::wrap`] for the IL shape and
//! docs/instrumentation.md for the contract and the whole path).
//!
//! [`Integration::read`] reads an integration's methods from the helper
//! module's metadata once. For each method wrapped: the helper's
//! AssemblyRef, TypeRefs to the integration and the contract's value types,
//! MemberRefs of the integration's generic methods (signatures carried over
//! from the helper), a TypeRef to `System.Exception` (in the scope the
//! module already uses for `System.Object`), MethodSpecs instantiating them
//! for the method, the method-name user string and the extended local
//! signature are added to the module's metadata through [`MetadataEmit`]
//! (idempotently), then the body is wrapped and encoded.

use alloc::boxed::Box;
use alloc::collections::BTreeMap;
use alloc::format;
use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;
use core::fmt;
use std::sync::{Mutex, MutexGuard};

use crate::cil::{wrap, AsyncProbes, Probes, ThisArg, WrapContext};
use crate::cil::{LocalVarSig, MethodSig, MethodSpecSig, TypeSig};
use crate::cil::{MethodBody, StackSig, Token};
use crate::facade::MetadataImport;
use crate::facade::ProfilerInfo;
use crate::facade::{AssemblyReference, MetadataEmit};
use crate::metadata::CLDB_E_RECORD_NOTFOUND;
use crate::metadata::{mdMethodDef, mdSignature, mdToken, mdTypeDef, IMetaDataImport};
use crate::profiling::{ModuleID, COR_PRF_MODULE_FLAGS, COR_PRF_MODULE_NGEN};
use crate::Interface;
use crate::{Error, E_INVALIDARG, E_NOINTERFACE, HRESULT};

/// The namespace of the contract's types (calltarget/Contract.cs).
const CONTRACT: &str = "CorProf.CallTarget";

/// The integration every target uses unless it names its own.
pub const DEFAULT_INTEGRATION: &str = "CorProf.CallTarget.LogIntegration";

/// The helper assembly and the integration whose methods a wrapped method
/// calls.
#[derive(Clone, Debug)]
pub struct CallTarget<'a> {
    /// The helper assembly, as the module will reference it (it defines
    /// the contract's types and the integration).
    pub assembly: AssemblyReference<'a>,
    /// The integration, as [`Integration::read`] found it in the helper.
    pub integration: &'a Integration,
}

/// One of an integration's methods the wrapper calls: its signature as the
/// helper declares it (helper tokens) and the helper's names for them.
#[derive(Clone, Debug, PartialEq, Eq)]
struct ProbeMethod {
    name: &'static str,
    sig: MethodSig,
}

/// What an integration type of the helper assembly offers: which
/// `OnMethodBegin` arities, and whether `OnMethodEnd<TTarget, TReturn>`
/// and `OnMethodEnd<TTarget>` exist (the contract:
/// docs/instrumentation.md). Read once per integration from the helper
/// module's metadata; `Send + Sync`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Integration {
    type_name: String,
    /// By number of target arguments; `true`: takes the trailing name.
    begins: BTreeMap<u32, (ProbeMethod, bool)>,
    end: Option<ProbeMethod>,
    end_void: Option<ProbeMethod>,
    async_end: Option<ProbeMethod>,
    /// `CallTargetAsync.ContinueTask`/`ContinueValueTask`, by name and
    /// generic parameter count.
    continuations: Vec<(&'static str, u32, ProbeMethod)>,
    /// The full names of the helper's TypeDefs (`true`) and TypeRefs
    /// (`false`) the signatures use.
    names: BTreeMap<u32, (bool, String)>,
    ignored: Vec<String>,
}

/// Whether `ty` is `VALUETYPE` of the contract type `name`, per `names`.
fn is_contract_type(ty: &TypeSig, names: &BTreeMap<u32, (bool, String)>, name: &str) -> bool {
    let token = match ty.unmodified() {
        TypeSig::ValueType(t) => t,
        TypeSig::GenericInst {
            value_type: true,
            ty,
            ..
        } => ty,
        _ => return false,
    };
    names.get(&token.0).is_some_and(|(def, n)| {
        *def && n.strip_prefix(CONTRACT).and_then(|r| r.strip_prefix('.')) == Some(name)
    })
}

/// Collects the tokens a type uses.
fn tokens_of(ty: &TypeSig, out: &mut Vec<Token>) {
    match ty {
        TypeSig::ValueType(t) | TypeSig::Class(t) => out.push(*t),
        TypeSig::GenericInst { ty, args, .. } => {
            out.push(*ty);
            args.iter().for_each(|a| tokens_of(a, out));
        }
        TypeSig::Modified { modifier, ty, .. } => {
            out.push(*modifier);
            tokens_of(ty, out);
        }
        TypeSig::Ptr(t) | TypeSig::ByRef(t) | TypeSig::Pinned(t) | TypeSig::SzArray(t) => {
            tokens_of(t, out)
        }
        TypeSig::Array(t, _) => tokens_of(t, out),
        TypeSig::FnPtr(m) => {
            tokens_of(&m.ret, out);
            m.params.iter().for_each(|p| tokens_of(p, out));
        }
        _ => {}
    }
}

/// `ty` with every token replaced by `map`'s answer.
fn map_tokens(
    ty: &TypeSig,
    map: &mut impl FnMut(Token) -> Result<Token, WrapError>,
) -> Result<TypeSig, WrapError> {
    Ok(match ty {
        TypeSig::ValueType(t) => TypeSig::ValueType(map(*t)?),
        TypeSig::Class(t) => TypeSig::Class(map(*t)?),
        TypeSig::GenericInst {
            value_type,
            ty,
            args,
        } => TypeSig::GenericInst {
            value_type: *value_type,
            ty: map(*ty)?,
            args: args
                .iter()
                .map(|a| map_tokens(a, map))
                .collect::<Result<_, _>>()?,
        },
        TypeSig::Modified {
            required,
            modifier,
            ty,
        } => TypeSig::Modified {
            required: *required,
            modifier: map(*modifier)?,
            ty: Box::new(map_tokens(ty, map)?),
        },
        TypeSig::Ptr(t) => TypeSig::Ptr(Box::new(map_tokens(t, map)?)),
        TypeSig::ByRef(t) => TypeSig::ByRef(Box::new(map_tokens(t, map)?)),
        TypeSig::Pinned(t) => TypeSig::Pinned(Box::new(map_tokens(t, map)?)),
        TypeSig::SzArray(t) => TypeSig::SzArray(Box::new(map_tokens(t, map)?)),
        TypeSig::Array(t, shape) => TypeSig::Array(Box::new(map_tokens(t, map)?), shape.clone()),
        TypeSig::FnPtr(m) => TypeSig::FnPtr(Box::new(map_sig(m, map)?)),
        other => other.clone(),
    })
}

fn map_sig(
    sig: &MethodSig,
    map: &mut impl FnMut(Token) -> Result<Token, WrapError>,
) -> Result<MethodSig, WrapError> {
    Ok(MethodSig {
        ret: map_tokens(&sig.ret, map)?,
        params: sig
            .params
            .iter()
            .map(|p| map_tokens(p, map))
            .collect::<Result<_, _>>()?,
        ..sig.clone()
    })
}

impl Integration {
    /// Reads the integration type `type_name` (`Namespace.Type`, a
    /// top-level type) from the helper module's metadata: its public
    /// static `OnMethodBegin`/`OnMethodEnd` methods of the contract's
    /// shapes. `Err` says what is missing (no such type, no method of a
    /// known shape); methods with those names but another shape are
    /// listed by [`ignored`](Integration::ignored).
    pub fn read(helper: &MetadataImport, type_name: &str) -> Result<Integration, Error> {
        let typedef = helper
            .find_type_def(type_name, None)
            .map_err(|e| e.context(format!("no integration type {type_name} in the helper")))?;
        let methods = helper
            .methods(typedef)
            .map_err(|e| e.context(format!("cannot list the methods of {type_name}")))?;
        let mut found: Vec<(&'static str, MethodSig, String)> = Vec::new();
        let mut names = BTreeMap::new();
        for m in methods {
            let Ok(props) = helper.method_props(m) else {
                continue;
            };
            let name: &'static str = match props.name.as_str() {
                "OnMethodBegin" => "OnMethodBegin",
                "OnMethodEnd" => "OnMethodEnd",
                "OnAsyncMethodEnd" => "OnAsyncMethodEnd",
                _ => continue,
            };
            // public (6) static (0x10)
            if props.attributes & 0x7 != 0x6 || props.attributes & 0x10 == 0 {
                found.push((
                    name,
                    MethodSig::static_method(TypeSig::Void, vec![]),
                    String::from("not public static"),
                ));
                continue;
            }
            let sig = match MethodSig::decode(props.signature) {
                Ok(sig) => sig,
                Err(e) => {
                    found.push((
                        name,
                        MethodSig::static_method(TypeSig::Void, vec![]),
                        format!("{e}"),
                    ));
                    continue;
                }
            };
            let mut tokens = Vec::new();
            tokens_of(&sig.ret, &mut tokens);
            sig.params.iter().for_each(|p| tokens_of(p, &mut tokens));
            for t in tokens {
                let is_def = t.0 >> 24 == 0x02;
                if let Ok(n) = base_type_name(helper, mdToken(t.0)) {
                    names.insert(t.0, (is_def, n));
                }
            }
            found.push((name, sig, String::new()));
        }
        let mut integration = Integration {
            type_name: type_name.into(),
            begins: BTreeMap::new(),
            end: None,
            end_void: None,
            async_end: None,
            continuations: Vec::new(),
            names,
            ignored: Vec::new(),
        };
        integration.read_continuations(helper);
        for (name, sig, problem) in found {
            let shape = format!(
                "{name}`{}({} parameters)",
                sig.generic_params,
                sig.params.len()
            );
            if !problem.is_empty() {
                integration.ignored.push(format!("{name}: {problem}"));
                continue;
            }
            if !integration.accept(name, &sig) {
                let names = &integration.names;
                let text = sig.format_method(name, &|t| {
                    names
                        .get(&t.0)
                        .map_or_else(|| format!("{t:?}"), |n| n.1.clone())
                });
                integration.ignored.push(format!("{shape}: {text}"));
            }
        }
        if integration.begins.is_empty()
            && integration.end.is_none()
            && integration.end_void.is_none()
            && integration.async_end.is_none()
        {
            return Err(Error::new(
                CLDB_E_RECORD_NOTFOUND,
                format!(
                "integration {type_name} has no OnMethodBegin or OnMethodEnd of the contract's shapes{}",
                if integration.ignored.is_empty() {
                    String::new()
                } else {
                    format!(" (ignored: {})", integration.ignored.join(", "))
                }
            ),
            ));
        }
        Ok(integration)
    }

    /// Reads `CorProf.CallTarget.CallTargetAsync`'s `ContinueTask` and
    /// `ContinueValueTask` (absent from an older helper: async targets then
    /// get `OnMethodEnd` with the task).
    fn read_continuations(&mut self, helper: &MetadataImport) {
        let Ok(typedef) = helper.find_type_def(&format!("{CONTRACT}.CallTargetAsync"), None) else {
            return;
        };
        for m in helper.methods(typedef).unwrap_or_default() {
            let Ok(props) = helper.method_props(m) else {
                continue;
            };
            let name: &'static str = match props.name.as_str() {
                "ContinueTask" => "ContinueTask",
                "ContinueValueTask" => "ContinueValueTask",
                _ => continue,
            };
            let Ok(sig) = MethodSig::decode(props.signature) else {
                continue;
            };
            let mut tokens = Vec::new();
            tokens_of(&sig.ret, &mut tokens);
            sig.params.iter().for_each(|p| tokens_of(p, &mut tokens));
            for t in tokens {
                if let Ok(n) = base_type_name(helper, mdToken(t.0)) {
                    self.names.insert(t.0, (t.0 >> 24 == 0x02, n));
                }
            }
            let g = sig.generic_params;
            self.continuations
                .push((name, g, ProbeMethod { name, sig }));
        }
    }

    /// Files `sig` (of method `name`) under its shape; `false` when it has
    /// none of the contract's.
    fn accept(&mut self, name: &'static str, sig: &MethodSig) -> bool {
        let g = sig.generic_params;
        let p = &sig.params;
        if g == 0 || sig.has_this() || p.first().map(TypeSig::unmodified) != Some(&TypeSig::MVar(0))
        {
            return false;
        }
        let method = ProbeMethod {
            name,
            sig: sig.clone(),
        };
        if name == "OnMethodBegin" {
            let n = g as usize;
            let args_ok = (1..n).all(|i| {
                matches!(p.get(i).map(TypeSig::unmodified), Some(TypeSig::ByRef(inner)) if inner.unmodified() == &TypeSig::MVar(i as u32))
            });
            let takes_name = p.len() == n + 1 && p[n].unmodified() == &TypeSig::String;
            if !args_ok
                || !(p.len() == n || takes_name)
                || !is_contract_type(&sig.ret, &self.names, "CallTargetState")
            {
                return false;
            }
            self.begins.insert(g - 1, (method, takes_name));
            return true;
        }
        // `in CallTargetState` is a by-ref (Roslyn); mcs 6.8 compiles `in`
        // as a by-value parameter: both are accepted, and passed so.
        let state_ok = |t: Option<&TypeSig>| match t.map(TypeSig::unmodified) {
            Some(TypeSig::ByRef(inner)) => is_contract_type(inner, &self.names, "CallTargetState"),
            Some(other) => is_contract_type(other, &self.names, "CallTargetState"),
            None => false,
        };
        let exception_ok = |t: Option<&TypeSig>| matches!(t.map(TypeSig::unmodified), Some(TypeSig::Class(e)) if self.names.get(&e.0).map(|(_, n)| n.as_str()) == Some("System.Exception"));
        if name == "OnAsyncMethodEnd" {
            let ok = g == 2
                && p.len() == 4
                && p[1].unmodified() == &TypeSig::MVar(1)
                && exception_ok(p.get(2))
                && state_ok(p.get(3))
                && sig.ret.unmodified() == &TypeSig::MVar(1);
            if ok {
                self.async_end = Some(method);
            }
            return ok;
        }
        match (g, p.len()) {
            (2, 4)
                if p[1].unmodified() == &TypeSig::MVar(1)
                    && exception_ok(p.get(2))
                    && state_ok(p.get(3))
                    && is_contract_type(&sig.ret, &self.names, "CallTargetReturn`1") =>
            {
                self.end = Some(method);
                true
            }
            (1, 3)
                if exception_ok(p.get(1))
                    && state_ok(p.get(2))
                    && is_contract_type(&sig.ret, &self.names, "CallTargetReturn") =>
            {
                self.end_void = Some(method);
                true
            }
            _ => false,
        }
    }

    /// The integration type's full name.
    pub fn type_name(&self) -> &str {
        &self.type_name
    }

    /// The argument counts `OnMethodBegin` is defined for.
    pub fn begin_arities(&self) -> Vec<u32> {
        self.begins.keys().copied().collect()
    }

    /// Whether `OnMethodEnd<TTarget, TReturn>` (`void_target: false`) or
    /// `OnMethodEnd<TTarget>` (`true`) is defined.
    pub fn has_end(&self, void_target: bool) -> bool {
        if void_target {
            self.end_void.is_some()
        } else {
            self.end.is_some()
        }
    }

    /// The methods named `OnMethodBegin`/`OnMethodEnd` whose shape is not
    /// the contract's (never called), with their generic and parameter
    /// counts.
    pub fn ignored(&self) -> &[String] {
        &self.ignored
    }

    /// The MemberRef, in the module `emit` opens, of `method`.
    fn member_ref(
        &self,
        emit: &MetadataEmit,
        helper: mdToken,
        corlib: mdToken,
        integration: mdToken,
        method: &ProbeMethod,
    ) -> Result<Token, WrapError> {
        let mut map = |t: Token| -> Result<Token, WrapError> {
            let (is_def, name) = self
                .names
                .get(&t.0)
                .ok_or(WrapError::Unsupported("a helper token without a name"))?;
            let scope = if *is_def { helper } else { corlib };
            emit.type_ref(scope, name)
                .map(|r| Token(r.0))
                .map_err(md("DefineTypeRefByName(integration signature)"))
        };
        let sig = map_sig(&method.sig, &mut map)?;
        let blob = sig.encode()?;
        emit.member_ref(integration, method.name, &blob)
            .map(|r| Token(r.0))
            .map_err(md("DefineMemberRef(integration method)"))
    }
}

/// Why a method was not wrapped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WrapError {
    /// A metadata call failed: what was asked, and the runtime's answer.
    Metadata(&'static str, HRESULT),
    /// The IL or signature could not be decoded, wrapped or encoded
    /// (including [`ErrorKind::Unsupported`](crate::cil::ErrorKind::Unsupported)).
    Cil(crate::cil::Error),
    /// A method the wrapper refuses; the text says why.
    Unsupported(&'static str),
    /// The integration has no method of the shape this method needs.
    Integration(String),
}

impl fmt::Display for WrapError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WrapError::Metadata(what, hr) => write!(f, "{what} failed ({hr})"),
            WrapError::Cil(e) => write!(f, "{e}"),
            WrapError::Unsupported(why) => write!(f, "unsupported: {why}"),
            WrapError::Integration(why) => write!(f, "{why}"),
        }
    }
}

impl core::error::Error for WrapError {}

impl From<WrapError> for Error {
    /// A metadata failure keeps its code and says what was asked; the
    /// others are `E_FAIL` (`CORPROF_E_*` codes do not describe IL) with the
    /// reason as the message.
    fn from(e: WrapError) -> Error {
        match e {
            WrapError::Metadata(what, hr) => Error::new(hr, what),
            other => Error::new(crate::E_FAIL, format!("{other}")),
        }
    }
}

impl From<crate::cil::Error> for WrapError {
    fn from(e: crate::cil::Error) -> Self {
        WrapError::Cil(e)
    }
}

/// A metadata failure (a raw `HRESULT` or the facade's [`Error`](crate::Error))
/// while doing `what`.
fn md<E: Into<HRESULT>>(what: &'static str) -> impl FnOnce(E) -> WrapError {
    move |e| WrapError::Metadata(what, e.into())
}

/// A wrapped method: its new IL and the name given to the probes.
#[derive(Clone, Debug)]
pub struct Wrapped {
    /// The new IL body (header, code, exception sections).
    pub il: Vec<u8>,
    /// `Namespace.Type::Method`, as `OnMethodBegin` receives it.
    pub name: String,
    /// The module's tokens the new IL uses for the integration (the same
    /// for every method of a module of the same shape: the references are
    /// found, not redefined).
    pub probes: Probes,
}

/// Answers the wrapper's metadata questions with a module's emit scope.
struct EmitContext<'a> {
    emit: &'a MetadataEmit,
    failure: Option<WrapError>,
}

impl EmitContext<'_> {
    fn note<T>(&mut self, r: core::result::Result<T, WrapError>) -> Option<T> {
        match r {
            Ok(v) => Some(v),
            Err(e) => {
                self.failure.get_or_insert(e);
                None
            }
        }
    }
}

impl WrapContext for EmitContext<'_> {
    fn type_token(&mut self, ty: &TypeSig) -> Option<Token> {
        let r = ty
            .encode()
            .map_err(WrapError::Cil)
            .and_then(|blob| {
                self.emit
                    .type_spec(&blob)
                    .map_err(md("GetTokenFromTypeSpec"))
            })
            .map(|t| Token(t.0));
        self.note(r)
    }

    fn local_sig_token(&mut self, locals: &LocalVarSig) -> Option<Token> {
        let r = locals
            .encode()
            .map_err(WrapError::Cil)
            .and_then(|blob| {
                self.emit
                    .standalone_sig(&blob)
                    .map_err(md("GetTokenFromSig"))
            })
            .map(|t| Token(t.0));
        self.note(r)
    }

    fn stack_sig(&mut self, token: Token) -> Option<StackSig> {
        self.emit.import().stack_sig(token)
    }

    fn method_spec(&mut self, method: Token, args: &[TypeSig]) -> Option<Token> {
        let r = MethodSpecSig::new(args.to_vec())
            .encode()
            .map_err(WrapError::Cil)
            .and_then(|blob| {
                self.emit
                    .method_spec(mdToken(method.0), &blob)
                    .map_err(md("DefineMethodSpec"))
            })
            .map(|t| Token(t.0));
        self.note(r)
    }

    fn member_ref(&mut self, parent: Token, name: &str, sig: &MethodSig) -> Option<Token> {
        let r = sig
            .encode()
            .map_err(WrapError::Cil)
            .and_then(|blob| {
                self.emit
                    .member_ref(mdToken(parent.0), name, &blob)
                    .map_err(md("DefineMemberRef(GetReturnValue)"))
            })
            .map(|t| Token(t.0));
        self.note(r)
    }

    fn can_box(&mut self, ty: &TypeSig) -> bool {
        match ty.unmodified() {
            TypeSig::ValueType(t)
            | TypeSig::GenericInst {
                value_type: true,
                ty: t,
                ..
            } => !is_by_ref_like(self.emit.import(), mdToken(t.0)),
            _ => true,
        }
    }
}

/// The by-ref-like types of the core library, for TypeRefs the runtime's
/// metadata cannot resolve to their definition.
const BY_REF_LIKE: &[&str] = &[
    "System.Span`1",
    "System.ReadOnlySpan`1",
    "System.TypedReference",
    "System.ArgIterator",
    "System.RuntimeArgumentHandle",
    "System.ByReference`1",
];

/// `IsByRefLikeAttribute`, which compilers put on every `ref struct`.
const IS_BY_REF_LIKE: &str = "System.Runtime.CompilerServices.IsByRefLikeAttribute";

/// Whether the TypeDef or TypeRef `token` names a by-ref-like type: a
/// TypeDef with `IsByRefLikeAttribute`, a TypeRef that resolves to one, or
/// (when it does not resolve) one of [`BY_REF_LIKE`].
fn is_by_ref_like(import: &MetadataImport, token: mdToken) -> bool {
    let has_attribute = |import: &IMetaDataImport, typedef: mdToken| {
        let Ok(name) = wide(IS_BY_REF_LIKE) else {
            return false;
        };
        let (mut data, mut len) = (core::ptr::null(), 0);
        // SAFETY: a NUL-terminated name and valid out-pointers.
        let hr =
            unsafe { import.GetCustomAttributeByName(typedef, name.as_ptr(), &mut data, &mut len) };
        hr == crate::S_OK
    };
    match token.0 >> 24 {
        0x02 => has_attribute(import.raw(), token),
        0x01 => {
            let mut scope: *mut core::ffi::c_void = core::ptr::null_mut();
            let mut typedef = mdTypeDef(0);
            // SAFETY: a valid IID and out-pointers; on success `scope` is
            // one reference to an IMetaDataImport, taken over below.
            let hr = unsafe {
                import.raw().ResolveTypeRef(
                    crate::metadata::mdTypeRef(token.0),
                    &IMetaDataImport::IID,
                    &mut scope,
                    &mut typedef,
                )
            };
            // SAFETY: null or one owned IMetaDataImport reference.
            let other =
                unsafe { crate::com::interface::invoker::from_raw::<IMetaDataImport>(scope) };
            match other {
                Some(other) if hr.is_ok() => has_attribute(&other, typedef.token()),
                _ => base_type_name(import, token)
                    .map(|name| BY_REF_LIKE.contains(&name.as_str()))
                    .unwrap_or(false),
            }
        }
        _ => false,
    }
}

/// `s` as a NUL-terminated UTF-16 string.
fn wide(s: &str) -> Result<Vec<u16>, ()> {
    if s.contains('\0') {
        return Err(());
    }
    Ok(s.encode_utf16().chain([0]).collect())
}

/// `System.ValueType` and `System.Enum` derive value types (except
/// `System.Enum` itself, which is a class).
fn is_value_type(import: &MetadataImport, typedef: mdTypeDef) -> Result<bool, WrapError> {
    let mut flags = 0;
    let mut extends = mdToken(0);
    let mut needed = 0;
    // SAFETY: a zero-capacity (null) name buffer is allowed; valid out-pointers.
    unsafe {
        import.raw().GetTypeDefProps(
            typedef,
            core::ptr::null_mut(),
            0,
            &mut needed,
            &mut flags,
            &mut extends,
        )
    }
    .ok_with("GetTypeDefProps")
    .map_err(md("GetTypeDefProps"))?;
    if extends.is_nil() {
        return Ok(false);
    }
    let base = base_type_name(import, extends)?;
    let own = import.type_name(typedef).map_err(md("GetTypeDefProps"))?;
    Ok((base == "System.ValueType" || base == "System.Enum") && own != "System.Enum")
}

/// The full name of a TypeRef or TypeDef (a TypeSpec base is a generic
/// class instantiation: never a value type's base).
fn base_type_name(import: &MetadataImport, token: mdToken) -> Result<String, WrapError> {
    let table = token.0 >> 24;
    if table == 0x02 {
        return import
            .type_name(mdTypeDef(token.0))
            .map_err(md("GetTypeDefProps"));
    }
    if table != 0x01 {
        return Ok(String::new());
    }
    let mut scope = mdToken(0);
    let mut buf = [0u16; 256];
    let mut needed = 0;
    // SAFETY: `buf` has 256 characters; valid out-pointers.
    unsafe {
        import.raw().GetTypeRefProps(
            crate::metadata::mdTypeRef(token.0),
            &mut scope,
            buf.as_mut_ptr(),
            buf.len() as u32,
            &mut needed,
        )
    }
    .ok_with("GetTypeRefProps")
    .map_err(md("GetTypeRefProps"))?;
    let end = buf.iter().position(|&c| c == 0).unwrap_or(buf.len());
    Ok(String::from_utf16_lossy(&buf[..end]))
}

/// For a return type `Task`, `Task<T>`, `ValueTask` or `ValueTask<T>`:
/// the `CallTargetAsync` method that continues it, whether it takes
/// `<TTarget, TResult>`, and `TResult` (`None`: `CallTargetReturn`).
fn async_kind(
    import: &MetadataImport,
    ret: &TypeSig,
) -> Option<(&'static str, bool, Option<TypeSig>)> {
    let name = |t: &Token| base_type_name(import, mdToken(t.0)).ok();
    match ret.unmodified() {
        TypeSig::Class(t) if name(t)? == "System.Threading.Tasks.Task" => {
            Some(("ContinueTask", false, None))
        }
        TypeSig::ValueType(t) if name(t)? == "System.Threading.Tasks.ValueTask" => {
            Some(("ContinueValueTask", false, None))
        }
        TypeSig::GenericInst {
            value_type,
            ty,
            args,
        } if args.len() == 1 => {
            let n = name(ty)?;
            match (*value_type, n.as_str()) {
                (false, "System.Threading.Tasks.Task`1") => {
                    Some(("ContinueTask", true, Some(args[0].clone())))
                }
                (true, "System.Threading.Tasks.ValueTask`1") => {
                    Some(("ContinueValueTask", true, Some(args[0].clone())))
                }
                _ => None,
            }
        }
        _ => None,
    }
}

/// The number of generic parameters of a type or method (`EnumGenericParams`).
fn generic_param_count(import: &MetadataImport, owner: mdToken) -> Result<u32, WrapError> {
    let params = import
        .generic_params(owner)
        .map_err(md("EnumGenericParams"))?;
    Ok(params.len() as u32)
}

impl CallTarget<'_> {
    /// Wraps `method` (whose current IL is `il`) of the module `emit` opens.
    ///
    /// Refuses constructors (`this` is not an object before the base
    /// constructor runs) and whatever [`wrap`] refuses, leaving the module's
    /// IL to the caller (nothing is installed here; metadata references may
    /// have been added, which is harmless).
    pub fn wrap_method(
        &self,
        emit: &MetadataEmit,
        method: mdMethodDef,
        il: &[u8],
    ) -> Result<Wrapped, WrapError> {
        let import = emit.import();
        let props = import.method_props(method).map_err(md("GetMethodProps"))?;
        if props.name == ".ctor" || props.name == ".cctor" {
            return Err(WrapError::Unsupported("constructor"));
        }
        let sig = MethodSig::decode(props.signature)?;
        let class = props.declaring_type;
        let type_name = import.type_name(class).map_err(md("GetTypeDefProps"))?;
        let name = format!("{type_name}::{}", props.name);
        let this = if !sig.has_this() {
            ThisArg::Static
        } else if is_value_type(import, class)? {
            let class_token = Token(class.0);
            let n = generic_param_count(import, class.token())?;
            if n == 0 {
                ThisArg::Value(TypeSig::ValueType(class_token))
            } else {
                ThisArg::Value(TypeSig::generic_value_type(
                    class_token,
                    (0..n).map(TypeSig::Var).collect(),
                ))
            }
        } else {
            let class_token = Token(class.0);
            let n = generic_param_count(import, class.token())?;
            if n == 0 {
                ThisArg::Reference(TypeSig::Class(class_token))
            } else {
                ThisArg::Reference(TypeSig::generic_class(
                    class_token,
                    (0..n).map(TypeSig::Var).collect(),
                ))
            }
        };
        let mut body = MethodBody::decode(il)?;
        let locals = match body.header().local_var_sig {
            Some(t) => LocalVarSig::decode(
                &emit
                    .signature_blob(mdSignature(t.0))
                    .map_err(md("GetSigFromToken"))?,
            )?,
            None => LocalVarSig { locals: vec![] },
        };
        let probes = self.probes(emit, &name, &sig)?;
        let mut cx = EmitContext {
            emit,
            failure: None,
        };
        let wrapped = wrap(&mut body, &sig, &this, &locals, &probes, &mut cx);
        if let Some(failure) = cx.failure {
            return Err(failure);
        }
        wrapped?;
        Ok(Wrapped {
            il: body.encode()?,
            name,
            probes,
        })
    }

    /// Wraps `method` of `module` as the runtime holds it now: opens the
    /// module's metadata for writing
    /// ([`ProfilerInfo::module_metadata_emit`]), reads the method's IL
    /// ([`ProfilerInfo::il_function_body`]) and calls
    /// [`wrap_method`](Self::wrap_method). Call it where metadata may
    /// change: `module_load_finished` or `jit_compilation_started`.
    pub fn wrap_in_module(
        &self,
        info: &ProfilerInfo,
        module: ModuleID,
        method: mdMethodDef,
    ) -> Result<Wrapped, WrapError> {
        let emit = info
            .module_metadata_emit(module)
            .map_err(md("GetModuleMetaData(ofWrite)"))?
            .ok_or(WrapError::Unsupported("a module without metadata"))?;
        let il = info
            .il_function_body(module, method)
            .map_err(md("GetILFunctionBody"))?;
        self.wrap_method(&emit, method, &il)
    }

    /// Adds (or finds) every reference the wrapped body uses; `Err` when
    /// the integration has no method for this method's shape.
    fn probes(
        &self,
        emit: &MetadataEmit,
        name: &str,
        sig: &MethodSig,
    ) -> Result<Probes, WrapError> {
        let integration = self.integration;
        let n = sig.params.len() as u32;
        let begin = integration.begins.get(&n);
        if begin.is_none() && !integration.begins.is_empty() {
            return Err(WrapError::Integration(format!(
                "integration {} has no OnMethodBegin for {n} arguments (it has {:?})",
                integration.type_name,
                integration.begin_arities()
            )));
        }
        let void = sig.ret.unmodified() == &TypeSig::Void;
        let end = if void {
            integration.end_void.as_ref()
        } else {
            integration.end.as_ref()
        };
        if begin.is_none() && end.is_none() {
            return Err(WrapError::Integration(format!(
                "integration {} has no OnMethodEnd for a {} method and no OnMethodBegin",
                integration.type_name,
                if void { "void" } else { "non-void" }
            )));
        }
        let assembly = emit
            .assembly_ref(&self.assembly)
            .map_err(md("DefineAssemblyRef"))?;
        let helper = assembly.token();
        let integration_ref = emit
            .type_ref(helper, &integration.type_name)
            .map_err(md("DefineTypeRefByName(integration type)"))?;
        let corlib = emit
            .scope_of_type_ref("System.Object")
            .map_err(md("finding the module's TypeRef to System.Object"))?;
        let exception = emit
            .type_ref(corlib, "System.Exception")
            .map_err(md("DefineTypeRefByName(System.Exception)"))?;
        let state = emit
            .type_ref(helper, &format!("{CONTRACT}.CallTargetState"))
            .map_err(md("DefineTypeRefByName(CallTargetState)"))?;
        let return_type = emit
            .type_ref(helper, &format!("{CONTRACT}.CallTargetReturn`1"))
            .map_err(md("DefineTypeRefByName(CallTargetReturn`1)"))?;
        let mut member = |m: &ProbeMethod| {
            integration.member_ref(emit, helper, corlib, integration_ref.token(), m)
        };
        let begin_ref = begin.map(|(m, _)| member(m)).transpose()?;
        let async_end = match (&integration.async_end, async_kind(emit.import(), &sig.ret)) {
            (Some(end), Some((continuation, generic_result, result))) => integration
                .continuations
                .iter()
                .find(|(n, g, _)| *n == continuation && *g == if generic_result { 2 } else { 1 })
                .map(|(_, _, c)| -> Result<AsyncProbes, WrapError> {
                    let result = match result {
                        Some(t) => t,
                        None => TypeSig::ValueType(Token(
                            emit.type_ref(helper, &format!("{CONTRACT}.CallTargetReturn"))
                                .map_err(md("DefineTypeRefByName(CallTargetReturn)"))?
                                .0,
                        )),
                    };
                    Ok(AsyncProbes {
                        end: member(end)?,
                        end_state_by_ref: matches!(
                            end.sig.params.last().map(TypeSig::unmodified),
                            Some(TypeSig::ByRef(_))
                        ),
                        continuation: {
                            let contract = emit
                                .type_ref(helper, &format!("{CONTRACT}.CallTargetAsync"))
                                .map_err(md("DefineTypeRefByName(CallTargetAsync)"))?;
                            integration.member_ref(emit, helper, corlib, contract.token(), c)?
                        },
                        generic_result,
                        delegate: Token(
                            emit.type_ref(helper, &format!("{CONTRACT}.AsyncMethodEnd`2"))
                                .map_err(md("DefineTypeRefByName(AsyncMethodEnd`2)"))?
                                .0,
                        ),
                        result,
                    })
                })
                .transpose()?,
            _ => None,
        };
        let state_by_ref = end.is_some_and(|m| {
            matches!(
                m.sig.params.last().map(TypeSig::unmodified),
                Some(TypeSig::ByRef(_))
            )
        });
        let end_ref = end.map(&mut member).transpose()?;
        let method_name = emit.user_string(name).map_err(md("DefineUserString"))?;
        Ok(Probes {
            begin: begin_ref,
            begin_takes_name: begin.is_some_and(|(_, named)| *named),
            end: end_ref,
            end_state_by_ref: state_by_ref,
            state: Token(state.0),
            return_type: Token(return_type.0),
            exception: Token(exception.0),
            method_name: Token(method_name.0),
            async_end,
        })
    }
}

/// When a target method can be given its wrapped IL, by what the runtime
/// does at the method's first call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WrapWhen {
    /// The runtime JIT-compiles the method at its first call: wrap it in
    /// `jit_compilation_started` ([`CallTarget::wrap_in_module`], then
    /// [`ProfilerInfo::set_il_function_body`]).
    FirstJit,
    /// The module is precompiled (ReadyToRun): its methods' precompiled
    /// code runs without a JIT compilation (and so without
    /// `jit_compilation_started`) until tiered compilation compiles a hot
    /// one again, if ever. Wrap by ReJIT: the IL made in
    /// `module_load_finished`, kept in a
    /// [`RejitBodies`](crate::instrument::RejitBodies), requested with
    /// [`ProfilerInfo::request_rejit_with_inliners`] and
    /// [`COR_PRF_REJIT_BLOCK_INLINING`](crate::profiling::COR_PRF_REJIT_BLOCK_INLINING),
    /// which also compiles again the methods whose precompiled code
    /// inlined it.
    ReJit,
}

impl WrapWhen {
    /// How the targets of `module` are wrapped: [`ReJit`](WrapWhen::ReJit)
    /// when the module's flags (`GetModuleInfo2`, `ICorProfilerInfo3`) have
    /// `COR_PRF_MODULE_NGEN`, which CoreCLR sets for a ReadyToRun module
    /// (`ProfToEEInterfaceImpl::GetModuleFlags`,
    /// src/coreclr/vm/proftoeeinterfaceimpl.cpp: `pModule->IsReadyToRun()`
    /// gives `COR_PRF_MODULE_DISK | COR_PRF_MODULE_NGEN`), otherwise
    /// [`FirstJit`](WrapWhen::FirstJit). A runtime without version 3
    /// has no precompiled modules to report: `FirstJit`.
    pub fn of_module(info: &ProfilerInfo, module: ModuleID) -> Result<WrapWhen, HRESULT> {
        let Some(v3) = info.v3() else {
            return Ok(WrapWhen::FirstJit);
        };
        let mut flags: u32 = 0;
        // SAFETY: every out-pointer but the flags' is null, which
        // GetModuleInfo2 allows (it writes only where asked); `flags` is a
        // local.
        unsafe {
            v3.GetModuleInfo2(
                module,
                core::ptr::null_mut(),
                0,
                core::ptr::null_mut(),
                core::ptr::null_mut(),
                core::ptr::null_mut(),
                &mut flags,
            )
        }
        .ok()?;
        Ok(WrapWhen::of_flags(COR_PRF_MODULE_FLAGS(flags)))
    }

    /// [`of_module`](Self::of_module)'s rule on flags already read.
    pub fn of_flags(flags: COR_PRF_MODULE_FLAGS) -> WrapWhen {
        if flags.contains(COR_PRF_MODULE_NGEN) {
            WrapWhen::ReJit
        } else {
            WrapWhen::FirstJit
        }
    }
}

/// One target of instrumentation: `Assembly!Namespace.Type::Method` (every
/// overload of `Method`), optionally with its own integration type,
/// `Assembly!Namespace.Type::Method=Namespace.IntegrationType`. Nested types join their names with `+`
/// (`Assembly!N.Outer+Inner::M`); a generic type is named as in metadata,
/// with its arity and without type arguments (``Shop!WebShop.Repository`1::Find``,
/// every instantiation). How this form relates to
/// [`ProfilerInfo::function_name`] (``WebShop.Repository`1.Find``) and
/// [`ProfilerInfo::instantiated_function_name`]
/// (`WebShop.Repository<?>.Find`): docs/hooks.md, "One method, three names".
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct MethodTarget {
    /// The assembly's simple name.
    pub assembly: String,
    /// The type's full name.
    pub type_name: String,
    /// The method's name.
    pub method: String,
    /// The integration type named after `=`, if any (otherwise the
    /// caller's default, [`DEFAULT_INTEGRATION`] in the example).
    pub integration: Option<String>,
}

impl fmt::Display for MethodTarget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}!{}::{}", self.assembly, self.type_name, self.method)?;
        match &self.integration {
            Some(i) => write!(f, "={i}"),
            None => Ok(()),
        }
    }
}

impl MethodTarget {
    /// Parses one `Assembly!Namespace.Type::Method[=Namespace.IntegrationType]`.
    pub fn parse(text: &str) -> Result<MethodTarget, Error> {
        let text = text.trim();
        let bad = |why: &str| {
            Error::new(
                E_INVALIDARG,
                format!("bad target {text:?}: {why} (expected Assembly!Namespace.Type::Method)"),
            )
        };
        let (target, integration) = match text.split_once('=') {
            Some((t, i)) => {
                let i = i.trim();
                if i.is_empty() || i.contains(['!', ':', ';', '=', '\0', ' ']) {
                    return Err(bad("an empty or malformed integration type after `=`"));
                }
                (t.trim(), Some(String::from(i)))
            }
            None => (text, None),
        };
        let (assembly, rest) = target.split_once('!').ok_or_else(|| bad("no `!`"))?;
        let (type_name, method) = rest.rsplit_once("::").ok_or_else(|| bad("no `::`"))?;
        let ok = |s: &str| !s.is_empty() && !s.contains(['!', ':', ';', '\0']);
        if !ok(assembly) || !ok(type_name) || !ok(method) {
            return Err(bad("an empty or malformed part"));
        }
        Ok(MethodTarget {
            assembly: assembly.into(),
            type_name: type_name.into(),
            method: method.into(),
            integration,
        })
    }

    /// Parses a `;`-separated list (empty items are skipped; an empty list
    /// is an error).
    pub fn parse_list(text: &str) -> Result<Vec<MethodTarget>, Error> {
        let targets = text
            .split(';')
            .filter(|s| !s.trim().is_empty())
            .map(MethodTarget::parse)
            .collect::<Result<Vec<_>, _>>()?;
        if targets.is_empty() {
            return Err(Error::new(E_INVALIDARG, "no targets"));
        }
        Ok(targets)
    }

    /// What to say when the type is not found and looks like a name from
    /// [`ProfilerInfo::instantiated_function_name`] (`Repository<?>`): a
    /// target names the type as metadata does, with its arity.
    fn hint(&self) -> &'static str {
        // Compiler-generated names (`<>c`, `<Main>d__0`) start with `<`.
        let generic = self
            .type_name
            .split(['+', '.'])
            .any(|part| !part.starts_with('<') && part.contains('<'));
        if generic {
            "; name a generic type with its arity, as metadata does: Repository`1, not Repository<T>"
        } else {
            ""
        }
    }

    /// The MethodDefs of every overload of this target in a module's
    /// metadata; `Err` says what is missing.
    pub fn find(&self, import: &MetadataImport) -> Result<Vec<mdMethodDef>, Error> {
        let mut typedef = None;
        for part in self.type_name.split('+') {
            typedef =
                Some(import.find_type_def(part, typedef).map_err(|e| {
                    e.context(format!("no type {}{}", self.type_name, self.hint()))
                })?);
        }
        let typedef = typedef.ok_or_else(|| {
            Error::new(
                CLDB_E_RECORD_NOTFOUND,
                format!("no type {}", self.type_name),
            )
        })?;
        let methods = import
            .methods(typedef)
            .map_err(|e| e.context(format!("cannot list the methods of {}", self.type_name)))?;
        let mut found = Vec::new();
        for m in methods {
            let props = import.method_props(m)?;
            if props.name == self.method {
                found.push(m);
            }
        }
        if found.is_empty() {
            return Err(Error::new(
                CLDB_E_RECORD_NOTFOUND,
                format!("no method {} in {}", self.method, self.type_name),
            ));
        }
        Ok(found)
    }

    /// Finds this target among the modules loaded now (`EnumModules`), as
    /// a profiler that attaches to a running process must: the first
    /// module whose assembly is named [`assembly`](MethodTarget::assembly),
    /// and the MethodDefs [`find`](MethodTarget::find) answers in it.
    /// Modules whose name cannot be read are skipped; `Err` says what is
    /// missing.
    pub fn find_loaded(&self, info: &ProfilerInfo) -> Result<(ModuleID, Vec<mdMethodDef>), Error> {
        let modules = info.modules()?;
        for module in modules {
            let Ok(module_info) = info.module_info(module) else {
                continue;
            };
            let Ok(assembly) = info.assembly_info(module_info.assembly) else {
                continue;
            };
            if assembly.name != self.assembly {
                continue;
            }
            let import = info
                .module_metadata(module)
                .map_err(|e| e.context(format!("metadata of {}", self.assembly)))?
                .ok_or_else(|| {
                    Error::new(E_NOINTERFACE, format!("{} has no metadata", self.assembly))
                })?;
            return Ok((module, self.find(&import)?));
        }
        Err(Error::new(
            CLDB_E_RECORD_NOTFOUND,
            format!("no loaded assembly named {}", self.assembly),
        ))
    }
}

/// A list of [`MethodTarget`]s matched against modules as the runtime
/// meets them (in `module_load_finished` or `jit_compilation_started`):
/// each module is looked up once and its answer kept, and the targets
/// found in some module are remembered, so that those never found can be
/// reported at shutdown. `Send + Sync`: callbacks on any thread share it.
#[derive(Debug)]
pub struct MethodTargets {
    targets: Vec<MethodTarget>,
    seen: Mutex<Seen>,
}

#[derive(Debug, Default)]
struct Seen {
    /// The target methods of every module looked up, each with the index
    /// of the (first) target that named it.
    modules: BTreeMap<ModuleID, Vec<(mdMethodDef, usize)>>,
    /// Per target: found in some module.
    found: Vec<bool>,
}

impl MethodTargets {
    /// Matches `targets` (as [`MethodTarget::parse_list`] gives them).
    pub fn new(targets: Vec<MethodTarget>) -> MethodTargets {
        let found = vec![false; targets.len()];
        MethodTargets {
            targets,
            seen: Mutex::new(Seen {
                modules: BTreeMap::new(),
                found,
            }),
        }
    }

    /// The targets, in the order given.
    pub fn targets(&self) -> &[MethodTarget] {
        &self.targets
    }

    fn lock(&self) -> MutexGuard<'_, Seen> {
        self.seen.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The target methods `module` defines (every overload). The first
    /// call for a module asks the runtime for its assembly's name
    /// (`GetModuleInfo` and `GetAssemblyInfo`, known from
    /// `module_load_finished` on), and only when a target names that
    /// assembly reads the module's metadata, [`MethodTarget::find`] for
    /// each of its targets; later calls answer from memory. A module
    /// without metadata has no targets.
    ///
    /// `unknown` hears, once per module, of each target of the module's
    /// assembly that the module does not define, and why (it is called
    /// after the internal lock is released).
    pub fn methods_of(
        &self,
        info: &ProfilerInfo,
        module: ModuleID,
        unknown: impl FnMut(&MethodTarget, &Error),
    ) -> Vec<mdMethodDef> {
        if let Some(known) = self.lock().modules.get(&module) {
            return known.iter().map(|m| m.0).collect();
        }
        // The metadata is opened only for a target's assembly (see
        // `assembly_name`: opening it slows the runtime's own reads).
        let assembly = super::assembly_name::assembly_of(info, module).unwrap_or_default();
        let named = self.targets.iter().any(|t| t.assembly == assembly);
        let import = named.then(|| info.module_metadata(module).ok().flatten());
        match import.flatten() {
            Some(import) => self.methods_in(module, &assembly, &import, unknown),
            None => self.remember(module, Vec::new(), &[], Vec::new(), unknown),
        }
    }

    /// As [`methods_of`](Self::methods_of), with the module's assembly
    /// name and metadata at hand.
    pub fn methods_in(
        &self,
        module: ModuleID,
        assembly: &str,
        import: &MetadataImport,
        unknown: impl FnMut(&MethodTarget, &Error),
    ) -> Vec<mdMethodDef> {
        if let Some(known) = self.lock().modules.get(&module) {
            return known.iter().map(|m| m.0).collect();
        }
        let (mut methods, mut found, mut missing) = (Vec::new(), Vec::new(), Vec::new());
        for (i, target) in self.targets.iter().enumerate() {
            if target.assembly != assembly {
                continue;
            }
            match target.find(import) {
                Ok(m) => {
                    methods.extend(m.into_iter().map(|m| (m, i)));
                    found.push(i);
                }
                Err(why) => missing.push((i, why)),
            }
        }
        self.remember(module, methods, &found, missing, unknown)
    }

    /// Keeps the answer for `module` unless another thread kept one first
    /// (then that one is the answer, and this one's reports are dropped).
    fn remember(
        &self,
        module: ModuleID,
        methods: Vec<(mdMethodDef, usize)>,
        found: &[usize],
        missing: Vec<(usize, Error)>,
        mut unknown: impl FnMut(&MethodTarget, &Error),
    ) -> Vec<mdMethodDef> {
        {
            let mut seen = self.lock();
            if let Some(known) = seen.modules.get(&module) {
                return known.iter().map(|m| m.0).collect();
            }
            seen.modules.insert(module, methods.clone());
            for &i in found {
                seen.found[i] = true;
            }
        }
        for (i, why) in missing {
            unknown(&self.targets[i], &why);
        }
        methods.into_iter().map(|m| m.0).collect()
    }

    /// The target that named `method` of `module` (the first, when several
    /// did), once [`methods_of`](Self::methods_of) or
    /// [`methods_in`](Self::methods_in) looked the module up.
    pub fn target_of(&self, module: ModuleID, method: mdMethodDef) -> Option<&MethodTarget> {
        let i = self
            .lock()
            .modules
            .get(&module)?
            .iter()
            .find(|m| m.0 == method)?
            .1;
        self.targets.get(i)
    }

    /// Forgets what was found in `module` (call it from
    /// `module_unload_started`: the runtime may reuse the ID). Targets
    /// found there still count as found.
    pub fn forget_module(&self, module: ModuleID) {
        self.lock().modules.remove(&module);
    }

    /// The targets not found in any module looked up so far.
    pub fn never_found(&self) -> Vec<&MethodTarget> {
        let seen = self.lock();
        self.targets
            .iter()
            .zip(&seen.found)
            .filter(|(_, &found)| !found)
            .map(|(t, _)| t)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;

    #[test]
    fn targets_parse_and_print_back() {
        let t = MethodTarget::parse(" App!N.S.Type::Run ").unwrap();
        assert_eq!(
            t,
            MethodTarget {
                assembly: "App".into(),
                type_name: "N.S.Type".into(),
                method: "Run".into(),
                integration: None,
            }
        );
        assert_eq!(t.to_string(), "App!N.S.Type::Run");
        let nested = MethodTarget::parse("App!N.Outer+Inner::.ctor").unwrap();
        assert_eq!(nested.type_name, "N.Outer+Inner");
        assert_eq!(nested.method, ".ctor");
        let list = MethodTarget::parse_list("A!T::M;; B!U::N ;").unwrap();
        assert_eq!(list.len(), 2);
        assert_eq!(list[1].assembly, "B");
    }

    #[test]
    fn targets_may_name_their_integration() {
        let t = MethodTarget::parse("App!N.T::M = My.Integration").unwrap();
        assert_eq!(t.integration.as_deref(), Some("My.Integration"));
        assert_eq!((t.type_name.as_str(), t.method.as_str()), ("N.T", "M"));
        assert_eq!(t.to_string(), "App!N.T::M=My.Integration");
        assert_eq!(MethodTarget::parse("App!N.T::M").unwrap().integration, None);
        for bad in [
            "App!N.T::M=",
            "App!N.T::M=a b",
            "App!N.T::M=A=B",
            "App!N.T::M=A::B",
        ] {
            let err = MethodTarget::parse(bad).unwrap_err().message().to_string();
            assert!(err.contains("integration type after `=`"), "{bad}: {err}");
        }
    }

    /// An integration over made-up helper tokens: CallTargetState
    /// (0x02000001), CallTargetReturn`1 (0x02000002), CallTargetReturn
    /// (0x02000003), System.Exception (0x01000001).
    fn integration() -> Integration {
        let mut names = BTreeMap::new();
        for (t, def, n) in [
            (0x0200_0001, true, "CorProf.CallTarget.CallTargetState"),
            (0x0200_0002, true, "CorProf.CallTarget.CallTargetReturn`1"),
            (0x0200_0003, true, "CorProf.CallTarget.CallTargetReturn"),
            (0x0100_0001, false, "System.Exception"),
            (0x0200_0004, true, "Other.CallTargetState"),
        ] {
            names.insert(t, (def, String::from(n)));
        }
        Integration {
            type_name: "I".into(),
            begins: BTreeMap::new(),
            end: None,
            end_void: None,
            async_end: None,
            continuations: Vec::new(),
            names,
            ignored: Vec::new(),
        }
    }

    #[test]
    fn integration_methods_are_filed_by_shape() {
        use crate::cil::TypeSig as T;
        let state = T::ValueType(Token(0x0200_0001));
        let exception = T::Class(Token(0x0100_0001));
        let mvar = T::MVar;
        let by_ref = |t: T| T::by_ref(t);
        let generic = |ret: T, params: Vec<T>, g: u32| {
            MethodSig::static_method(ret, params).with_generic_params(g)
        };
        let mut i = integration();
        // OnMethodBegin<TTarget, TArg1, TArg2>(TTarget, ref TArg1, ref TArg2)
        let begin2 = generic(
            state.clone(),
            vec![mvar(0), by_ref(mvar(1)), by_ref(mvar(2))],
            3,
        );
        assert!(i.accept("OnMethodBegin", &begin2));
        // OnMethodBegin<TTarget>(TTarget, string method)
        let named = generic(state.clone(), vec![mvar(0), T::String], 1);
        assert!(i.accept("OnMethodBegin", &named));
        assert_eq!(i.begin_arities(), [0, 2]);
        assert!(
            i.begins[&0].1 && !i.begins[&2].1,
            "only the first takes the name"
        );
        // Not the contract's: by-value arguments, another return type, a
        // CallTargetState of another namespace, an instance method.
        for odd in [
            generic(state.clone(), vec![mvar(0), mvar(1)], 2),
            generic(T::Void, vec![mvar(0)], 1),
            generic(T::ValueType(Token(0x0200_0004)), vec![mvar(0)], 1),
            MethodSig::instance_method(state.clone(), vec![mvar(0)]).with_generic_params(1),
        ] {
            assert!(!i.accept("OnMethodBegin", &odd), "{odd:?}");
        }
        assert_eq!(i.begin_arities(), [0, 2]);
        // OnMethodEnd<TTarget, TReturn>(TTarget, TReturn, Exception, in
        // CallTargetState) -> CallTargetReturn<TReturn>; `in` compiled as a
        // by-ref (Roslyn) or by value (mcs).
        let returned = T::generic_value_type(Token(0x0200_0002), vec![mvar(1)]);
        for state_param in [by_ref(state.clone()), state.clone()] {
            let mut i = integration();
            let end = generic(
                returned.clone(),
                vec![mvar(0), mvar(1), exception.clone(), state_param.clone()],
                2,
            );
            assert!(i.accept("OnMethodEnd", &end));
            assert!(i.has_end(false) && !i.has_end(true));
            let end_void = generic(
                T::ValueType(Token(0x0200_0003)),
                vec![mvar(0), exception.clone(), state_param.clone()],
                1,
            );
            assert!(i.accept("OnMethodEnd", &end_void));
            assert!(i.has_end(true));
            let async_end = generic(
                mvar(1),
                vec![mvar(0), mvar(1), exception.clone(), state_param],
                2,
            );
            assert!(i.accept("OnAsyncMethodEnd", &async_end));
            assert!(i.async_end.is_some());
        }
        // An end whose exception parameter is an object is not the contract's.
        let mut i = integration();
        let wrong = generic(
            returned,
            vec![mvar(0), mvar(1), T::Object, by_ref(state)],
            2,
        );
        assert!(!i.accept("OnMethodEnd", &wrong));
        assert!(!i.has_end(false));
    }

    #[test]
    fn bad_targets_say_what_is_wrong() {
        for (text, why) in [
            ("App.N.T::M", "no `!`"),
            ("App!N.T.M", "no `::`"),
            ("!N.T::M", "an empty or malformed part"),
            ("App!::M", "an empty or malformed part"),
            ("App!N.T::", "an empty or malformed part"),
            ("App!N!T::M", "an empty or malformed part"),
        ] {
            let err = MethodTarget::parse(text).unwrap_err().message().to_string();
            assert!(err.contains(why), "{text}: {err}");
            assert!(err.contains("expected Assembly!Namespace.Type::Method"));
        }
        assert_eq!(
            MethodTarget::parse_list(" ; ").unwrap_err().message(),
            "no targets"
        );
        assert!(
            MethodTarget::parse_list("A!T::M;bad").is_err(),
            "one bad item fails the list"
        );
    }

    /// A module's metadata: type `N.Outer` (methods `Run` and two
    /// overloads of `Over`) with a nested type `Inner` (method `Deep`).
    struct Scope;

    const OUTER: mdTypeDef = mdTypeDef::from_rid(2);
    const INNER: mdTypeDef = mdTypeDef::from_rid(3);

    fn method_name(method: mdMethodDef) -> Option<&'static str> {
        ["Run", "Over", "Over", "Deep"]
            .get((method.0 & 0x00FF_FFFF).wrapping_sub(1) as usize)
            .copied()
    }

    /// A NUL-terminated UTF-16 string.
    ///
    /// # Safety
    ///
    /// `s` points to a NUL-terminated string.
    unsafe fn read(s: crate::LPCWSTR) -> String {
        let mut units = Vec::new();
        // SAFETY: up to the terminator the caller promised.
        unsafe {
            let mut p = s;
            while *p != 0 {
                units.push(*p);
                p = p.add(1);
            }
        }
        String::from_utf16_lossy(&units)
    }

    impl crate::metadata::IMetaDataImport_Impl for Scope {
        fn FindTypeDefByName(
            &self,
            name: crate::LPCWSTR,
            enclosing: mdToken,
            out: *mut mdTypeDef,
        ) -> HRESULT {
            // SAFETY: the facade passes a NUL-terminated name.
            let name = unsafe { read(name) };
            let found = match (name.as_str(), enclosing) {
                ("N.Outer", mdToken(0)) => OUTER,
                ("Inner", t) if t == OUTER.token() => INNER,
                _ => return crate::metadata::CLDB_E_RECORD_NOTFOUND,
            };
            // SAFETY: a valid out-pointer.
            unsafe { *out = found };
            crate::S_OK
        }

        fn EnumMethods(
            &self,
            handle: *mut crate::metadata::HCORENUM,
            class: mdTypeDef,
            out: *mut mdMethodDef,
            max: crate::ULONG,
            count: *mut crate::ULONG,
        ) -> HRESULT {
            let rows: &[u32] = match class {
                OUTER => &[1, 2, 3],
                INNER => &[4],
                _ => return crate::metadata::CLDB_E_RECORD_NOTFOUND,
            };
            // SAFETY: valid pointers and `max` slots; a non-null handle
            // means the one batch was given.
            unsafe {
                if !(*handle).is_null() {
                    *count = 0;
                    return crate::S_FALSE;
                }
                assert!(rows.len() <= max as usize);
                for (i, row) in rows.iter().enumerate() {
                    *out.add(i) = mdMethodDef::from_rid(*row);
                }
                *handle = 1 as crate::metadata::HCORENUM;
                *count = rows.len() as crate::ULONG;
            }
            crate::S_OK
        }

        fn GetMethodProps(
            &self,
            method: mdMethodDef,
            class: *mut mdTypeDef,
            name: crate::LPWSTR,
            cap: crate::ULONG,
            needed: *mut crate::ULONG,
            _attributes: *mut crate::DWORD,
            _sig: *mut crate::metadata::PCCOR_SIGNATURE,
            _sig_len: *mut crate::ULONG,
            _rva: *mut crate::ULONG,
            _impl_flags: *mut crate::DWORD,
        ) -> HRESULT {
            let Some(text) = method_name(method) else {
                return crate::metadata::CLDB_E_RECORD_NOTFOUND;
            };
            let units: Vec<u16> = text.encode_utf16().chain([0]).collect();
            // SAFETY: `name` has room for `cap` characters; valid out-pointers.
            unsafe {
                *class = if text == "Deep" { INNER } else { OUTER };
                *needed = units.len() as crate::ULONG;
                if !name.is_null() {
                    let n = units.len().min(cap as usize);
                    core::ptr::copy_nonoverlapping(units.as_ptr(), name, n);
                }
            }
            crate::S_OK
        }
    }

    fn scope() -> MetadataImport {
        MetadataImport::new(crate::export(Scope))
    }

    #[test]
    fn find_answers_every_overload_and_says_what_is_missing() {
        let import = scope();
        let find = |text: &str| MethodTarget::parse(text).unwrap().find(&import);
        assert_eq!(find("A!N.Outer::Run"), Ok(vec![mdMethodDef::from_rid(1)]));
        assert_eq!(
            find("A!N.Outer::Over"),
            Ok(vec![mdMethodDef::from_rid(2), mdMethodDef::from_rid(3)])
        );
        assert_eq!(
            find("A!N.Outer+Inner::Deep"),
            Ok(vec![mdMethodDef::from_rid(4)])
        );
        assert_eq!(
            find("A!N.Outer::Nope").unwrap_err().message(),
            "no method Nope in N.Outer"
        );
        // `Deep` is not a method of the enclosing type.
        assert_eq!(
            find("A!N.Outer::Deep").unwrap_err().message(),
            "no method Deep in N.Outer"
        );
        let err = find("A!N.Nowhere::Run").unwrap_err().message().to_string();
        assert!(err.starts_with("no type N.Nowhere: "), "{err}");
        let err = find("A!N.Outer+Nope::Run")
            .unwrap_err()
            .message()
            .to_string();
        assert!(err.starts_with("no type N.Outer+Nope: "), "{err}");
        assert!(!err.contains("arity"), "{err}");
        // A name copied from a call tree gets a hint; a compiler-generated
        // name (starting with `<`) does not.
        for generic in ["A!N.Outer<?>::Run", "A!N.Outer+Inner<System.Int32>::Deep"] {
            let err = find(generic).unwrap_err().message().to_string();
            assert!(err.starts_with("no type N.Outer"), "{err}");
            assert!(
                err.contains("; name a generic type with its arity, as metadata does: Repository`1, not Repository<T>"),
                "{err}"
            );
        }
        let err = find("A!N.Outer+<>c::Run")
            .unwrap_err()
            .message()
            .to_string();
        assert!(!err.contains("arity"), "{err}");
    }

    #[test]
    fn method_targets_look_each_module_up_once_and_remember_what_was_found() {
        let import = scope();
        let targets = MethodTargets::new(
            MethodTarget::parse_list(
                "A!N.Outer::Over;A!N.Outer+Inner::Deep;A!N.Outer::Nope;B!N.Outer::Run;A!N.Nowhere::Run",
            )
            .unwrap(),
        );
        let (m1, m2, m3) = (ModuleID(0x100), ModuleID(0x200), ModuleID(0x300));
        let mut unknown = Vec::new();
        let methods = targets.methods_in(m1, "A", &import, |t, why| {
            unknown.push(alloc::format!("{t}: {}", why.message()))
        });
        let rids: Vec<u32> = methods.iter().map(|m| m.0 & 0xFF_FFFF).collect();
        assert_eq!(rids, [2, 3, 4], "both overloads of Over, then Deep");
        assert_eq!(unknown.len(), 2, "{unknown:?}");
        assert_eq!(unknown[0], "A!N.Outer::Nope: no method Nope in N.Outer");
        assert!(unknown[1].starts_with("A!N.Nowhere::Run: no type N.Nowhere"));

        // Asked again (even with other metadata): the same answer, no reports.
        let again = targets.methods_in(m1, "B", &import, |t, _| panic!("{t} reported twice"));
        assert_eq!(again, methods);
        // A module of another assembly has only that assembly's targets.
        let other = targets.methods_in(m2, "B", &import, |t, _| panic!("{t}"));
        assert_eq!(other, [mdMethodDef::from_rid(1)]);
        let none = targets.methods_in(m3, "C", &import, |t, _| panic!("{t}"));
        assert!(none.is_empty());

        let never: Vec<String> = targets
            .never_found()
            .iter()
            .map(|t| t.to_string())
            .collect();
        assert_eq!(never, ["A!N.Outer::Nope", "A!N.Nowhere::Run"]);
        assert_eq!(targets.targets().len(), 5);

        // A forgotten module is looked up afresh; found stays found.
        targets.forget_module(m2);
        let fresh = targets.methods_in(m2, "C", &import, |t, _| panic!("{t}"));
        assert!(fresh.is_empty());
        assert_eq!(targets.never_found().len(), 2);
    }

    /// Writes `text` by the length-then-buffer protocol of the string calls.
    ///
    /// # Safety
    ///
    /// `buf` is null or has room for `cap` characters; `needed` is valid.
    unsafe fn answer(text: &str, cap: crate::ULONG, needed: *mut crate::ULONG, buf: *mut u16) {
        let units: Vec<u16> = text.encode_utf16().chain([0]).collect();
        // SAFETY: forwarded contract.
        unsafe {
            *needed = units.len() as crate::ULONG;
            if !buf.is_null() {
                let n = units.len().min(cap as usize);
                core::ptr::copy_nonoverlapping(units.as_ptr(), buf, n);
            }
        }
    }

    use crate::profiling::{
        AppDomainID, AssemblyID, ICorProfilerInfo2_Impl, ICorProfilerInfo3, ICorProfilerInfo3_Impl,
        ICorProfilerInfo_Impl, ICorProfilerModuleEnum, ICorProfilerModuleEnum_Impl,
    };

    /// The modules a fake runtime has loaded, in `EnumModules` order: the
    /// assembly each belongs to (`None`: `GetModuleInfo` fails) and whether
    /// it has metadata (the [`Scope`] fake).
    const LOADED: [(usize, Option<&str>, bool); 5] = [
        (0x100, Some("Other"), true),
        (0x200, None, true),
        (0x300, Some("A"), true),
        (0x400, Some("A"), true),
        (0x500, Some("Bare"), false),
    ];

    struct Runtime;
    struct Modules(std::sync::Mutex<usize>);

    impl ICorProfilerModuleEnum_Impl for Modules {
        fn Next(
            &self,
            celt: crate::ULONG,
            ids: *mut ModuleID,
            fetched: *mut crate::ULONG,
        ) -> HRESULT {
            let mut next = self.0.lock().unwrap();
            let mut n = 0;
            while n < celt as usize && *next < LOADED.len() {
                // SAFETY: the facade passes room for `celt` IDs.
                unsafe { *ids.add(n) = ModuleID(LOADED[*next].0) };
                n += 1;
                *next += 1;
            }
            // SAFETY: a valid out-pointer.
            unsafe { *fetched = n as crate::ULONG };
            if n == celt as usize {
                crate::S_OK
            } else {
                crate::S_FALSE
            }
        }
    }

    fn loaded(module: ModuleID) -> Option<(usize, Option<&'static str>, bool)> {
        LOADED.iter().copied().find(|m| m.0 == module.0)
    }

    impl ICorProfilerInfo_Impl for Runtime {
        fn GetModuleInfo(
            &self,
            module: ModuleID,
            _base: *mut *const crate::BYTE,
            cap: crate::ULONG,
            needed: *mut crate::ULONG,
            name: *mut u16,
            assembly: *mut AssemblyID,
        ) -> HRESULT {
            let Some((id, Some(_), _)) = loaded(module) else {
                return crate::E_FAIL;
            };
            // SAFETY: valid out-pointers and a buffer of `cap` characters.
            unsafe {
                *assembly = AssemblyID(id + 1);
                answer("/m.dll", cap, needed, name);
            }
            crate::S_OK
        }
        fn GetAssemblyInfo(
            &self,
            assembly: AssemblyID,
            cap: crate::ULONG,
            needed: *mut crate::ULONG,
            name: *mut u16,
            _domain: *mut AppDomainID,
            _module: *mut ModuleID,
        ) -> HRESULT {
            let Some((_, Some(text), _)) = loaded(ModuleID(assembly.0 - 1)) else {
                return crate::E_FAIL;
            };
            // SAFETY: as above.
            unsafe { answer(text, cap, needed, name) };
            crate::S_OK
        }
        fn GetModuleMetaData(
            &self,
            module: ModuleID,
            _flags: crate::DWORD,
            _iid: crate::REFIID,
            out: *mut *mut core::ffi::c_void,
        ) -> HRESULT {
            let has = loaded(module).is_some_and(|m| m.2);
            let import: Option<IMetaDataImport> = has.then(|| crate::export(Scope));
            // SAFETY: a valid out-pointer; it takes over the reference.
            unsafe { *out = import.map_or(core::ptr::null_mut(), |i| i.into_raw()) };
            if has {
                crate::S_OK
            } else {
                crate::S_FALSE
            }
        }
    }
    impl ICorProfilerInfo2_Impl for Runtime {}
    impl ICorProfilerInfo3_Impl for Runtime {
        fn EnumModules(&self, out: *mut *mut core::ffi::c_void) -> HRESULT {
            let modules: ICorProfilerModuleEnum = crate::export(Modules(Default::default()));
            // SAFETY: a valid out-pointer; it takes over the reference.
            unsafe { *out = modules.into_raw() };
            crate::S_OK
        }
    }

    #[test]
    fn find_loaded_takes_the_first_module_of_the_assembly() {
        let exported: ICorProfilerInfo3 = crate::export(Runtime);
        let unknown: crate::IUnknown = exported.cast().unwrap();
        let info = ProfilerInfo::from_unknown(&unknown).unwrap();
        let find = |text: &str| MethodTarget::parse(text).unwrap().find_loaded(&info);
        // 0x200 cannot be read and is skipped; 0x300 comes before 0x400.
        assert_eq!(
            find("A!N.Outer::Over"),
            Ok((
                ModuleID(0x300),
                vec![mdMethodDef::from_rid(2), mdMethodDef::from_rid(3)]
            ))
        );
        assert_eq!(
            find("Other!N.Outer::Run"),
            Ok((ModuleID(0x100), vec![mdMethodDef::from_rid(1)]))
        );
        assert_eq!(
            find("Z!N.Outer::Run").unwrap_err().message(),
            "no loaded assembly named Z"
        );
        assert_eq!(
            find("Bare!N.Outer::Run").unwrap_err().message(),
            "Bare has no metadata"
        );
        assert_eq!(
            find("A!N.Outer::Nope").unwrap_err().message(),
            "no method Nope in N.Outer"
        );
    }

    #[test]
    fn method_targets_are_shared_between_threads() {
        fn check<T: Send + Sync>() {}
        check::<MethodTargets>();
    }

    #[test]
    fn precompiled_modules_are_wrapped_by_rejit() {
        use crate::profiling::{COR_PRF_MODULE_DISK, COR_PRF_MODULE_FLAT_LAYOUT};
        // What CoreCLR answers for a ReadyToRun module (DISK | NGEN) and for
        // an IL-only one loaded from disk, mapped or flat.
        assert_eq!(
            WrapWhen::of_flags(COR_PRF_MODULE_DISK | COR_PRF_MODULE_NGEN),
            WrapWhen::ReJit
        );
        assert_eq!(WrapWhen::of_flags(COR_PRF_MODULE_DISK), WrapWhen::FirstJit);
        assert_eq!(
            WrapWhen::of_flags(COR_PRF_MODULE_DISK | COR_PRF_MODULE_FLAT_LAYOUT),
            WrapWhen::FirstJit
        );
        assert_eq!(COR_PRF_MODULE_NGEN.0, 0x2, "corprof.idl");
    }

    #[test]
    fn wrap_errors_display_what_failed() {
        let hr = crate::E_FAIL;
        assert_eq!(
            WrapError::Metadata("DefineMemberRef(probe)", hr).to_string(),
            alloc::format!("DefineMemberRef(probe) failed ({hr})")
        );
        assert_eq!(
            WrapError::Unsupported("constructor").to_string(),
            "unsupported: constructor"
        );
    }
}
