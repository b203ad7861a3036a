//! The references a wrapped body uses, added to (or found in) the
//! module's metadata through [`MetadataEmit`]: the helper's AssemblyRef,
//! TypeRefs, the integration's MemberRefs with their signatures carried
//! over from the helper, MethodSpecs, TypeSpecs, the method-name user
//! string, the extended local signature; and what the module's own types
//! are (value type, by-ref-like, task) to choose the wrapping.

use alloc::boxed::Box;
use alloc::format;
use alloc::string::String;

use super::contract::{Integration, ProbeMethod};
use super::{md, AsyncProbes, CallTarget, Continuation, Probes, WrapContext, WrapError, CONTRACT};
use crate::cil::{LocalVarSig, MethodSig, MethodSpecSig, StackSig, Token, TypeSig};
use crate::facade::{MetadataEmit, MetadataImport};
use crate::metadata::{mdToken, mdTypeDef, mdTypeRef};

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
    /// The MemberRef, in the module `emit` opens, of `method`.
    pub(super) fn member_ref(
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

/// Answers the wrapper's metadata questions with a module's emit scope.
pub(super) struct EmitContext<'a> {
    pub(super) emit: &'a MetadataEmit,
    pub(super) failure: Option<WrapError>,
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
    let has_attribute = |import: &MetadataImport, typedef: mdToken| {
        import
            .has_custom_attribute(typedef, IS_BY_REF_LIKE)
            .unwrap_or(false)
    };
    match token.0 >> 24 {
        0x02 => has_attribute(import, token),
        0x01 => match import.resolve_type_ref(mdTypeRef(token.0)) {
            Ok((other, typedef)) => has_attribute(&other, typedef.token()),
            Err(_) => type_name_of(import, token)
                .map(|name| BY_REF_LIKE.contains(&name.as_str()))
                .unwrap_or(false),
        },
        _ => false,
    }
}

/// `System.ValueType` and `System.Enum` derive value types (except
/// `System.Enum` itself, which is a class).
pub(super) fn is_value_type(
    import: &MetadataImport,
    typedef: mdTypeDef,
) -> Result<bool, WrapError> {
    let extends = import.base_type(typedef).map_err(md("GetTypeDefProps"))?;
    // Nil: a class without a base; a TypeSpec base is a generic class
    // instantiation, never a value type's base.
    if extends.is_nil() || !matches!(extends.0 >> 24, 0x01 | 0x02) {
        return Ok(false);
    }
    let base = type_name_of(import, extends)?;
    let own = import.type_name(typedef).map_err(md("GetTypeDefProps"))?;
    Ok((base == "System.ValueType" || base == "System.Enum") && own != "System.Enum")
}

/// The full name of a TypeDef or TypeRef.
pub(super) fn type_name_of(import: &MetadataImport, token: mdToken) -> Result<String, WrapError> {
    let what = if token.0 >> 24 == 0x02 {
        "GetTypeDefProps"
    } else {
        "GetTypeRefProps"
    };
    import.type_def_or_ref_name(token).map_err(md(what))
}

/// For a return type `Task`, `Task<T>`, `ValueTask` or `ValueTask<T>`:
/// the `CallTargetAsync` method that continues it, whether it takes
/// `<TTarget, TResult>`, and `TResult` (`None`: `CallTargetReturn`).
pub(super) fn async_kind(
    import: &MetadataImport,
    ret: &TypeSig,
) -> Option<(&'static str, bool, Option<TypeSig>)> {
    let name = |t: &Token| type_name_of(import, mdToken(t.0)).ok();
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
pub(super) fn generic_param_count(
    import: &MetadataImport,
    owner: mdToken,
) -> Result<u32, WrapError> {
    let params = import
        .generic_params(owner)
        .map_err(md("EnumGenericParams"))?;
    Ok(params.len() as u32)
}

impl CallTarget<'_> {
    /// Adds (or finds) every reference the wrapped body uses; `Err` when
    /// the integration has no method for this method's shape. `sig` is the
    /// declared signature; `awaited` is `Some` for a runtime-async method:
    /// the type its body returns (`Void` for `Task` and `ValueTask`).
    pub(super) fn probes(
        &self,
        emit: &MetadataEmit,
        name: &str,
        sig: &MethodSig,
        awaited: Option<&TypeSig>,
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
        let void = awaited.unwrap_or(&sig.ret).unmodified() == &TypeSig::Void;
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
        let by_ref = |m: &ProbeMethod| {
            matches!(
                m.sig.params.last().map(TypeSig::unmodified),
                Some(TypeSig::ByRef(_))
            )
        };
        let void_result = || -> Result<TypeSig, WrapError> {
            Ok(TypeSig::ValueType(Token(
                emit.type_ref(helper, &format!("{CONTRACT}.CallTargetReturn"))
                    .map_err(md("DefineTypeRefByName(CallTargetReturn)"))?
                    .0,
            )))
        };
        let async_end = match (&integration.async_end, async_kind(emit.import(), &sig.ret)) {
            // Runtime async: OnAsyncMethodEnd called directly, with the
            // value the body returns.
            (Some(end), Some((_, _, result))) if awaited.is_some() => Some(AsyncProbes {
                end: member(end)?,
                end_state_by_ref: by_ref(end),
                continuation: None,
                result: match result {
                    Some(t) => t,
                    None => void_result()?,
                },
            }),
            (Some(end), Some((continuation, generic_result, result))) => integration
                .continuations
                .iter()
                .find(|(n, g, _)| *n == continuation && *g == if generic_result { 2 } else { 1 })
                .map(|(_, _, c)| -> Result<AsyncProbes, WrapError> {
                    let result = match result {
                        Some(t) => t,
                        None => void_result()?,
                    };
                    let contract = emit
                        .type_ref(helper, &format!("{CONTRACT}.CallTargetAsync"))
                        .map_err(md("DefineTypeRefByName(CallTargetAsync)"))?;
                    Ok(AsyncProbes {
                        end: member(end)?,
                        end_state_by_ref: by_ref(end),
                        continuation: Some(Continuation {
                            method: integration.member_ref(
                                emit,
                                helper,
                                corlib,
                                contract.token(),
                                c,
                            )?,
                            generic_result,
                            delegate: Token(
                                emit.type_ref(helper, &format!("{CONTRACT}.AsyncMethodEnd`2"))
                                    .map_err(md("DefineTypeRefByName(AsyncMethodEnd`2)"))?
                                    .0,
                            ),
                        }),
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fake_scope::{FakeScope, TD_PUBLIC};
    use alloc::string::ToString;

    /// What the module's own types are, read through the facade: value
    /// types by their base, by-ref-like types by their attribute or (for an
    /// unresolvable TypeRef) their name, generic arity, and a TypeRef name
    /// longer than 255 UTF-16 units read whole.
    #[test]
    fn the_modules_types_are_told_apart_through_the_facade() {
        let mut scope = FakeScope::new();
        let corlib = mdToken(0x2300_0001);
        let value_type = scope.type_ref(corlib, "System.ValueType");
        let enum_ = scope.type_ref(corlib, "System.Enum");
        let object = scope.type_ref(corlib, "System.Object");
        let span = scope.type_ref(corlib, "System.Span`1");
        let long_name = "Namespace.".repeat(30) + "Type";
        let long = scope.type_ref(corlib, &long_name);
        let point = scope.type_def("N.Point", TD_PUBLIC, value_type.token());
        let color = scope.type_def("N.Color", TD_PUBLIC, enum_.token());
        let system_enum = scope.type_def("System.Enum", TD_PUBLIC, value_type.token());
        let class = scope.type_def("N.Class", TD_PUBLIC, object.token());
        let generic_base = scope.type_def("N.Derived", TD_PUBLIC, mdToken(0x1B00_0001));
        let interface = scope.type_def("N.IThing", TD_PUBLIC, mdToken(0));
        let ref_struct = scope.type_def("N.RefStruct", TD_PUBLIC, value_type.token());
        scope.attribute(ref_struct, IS_BY_REF_LIKE);
        scope.generic_params(class, 2);
        let import = scope.import();

        let is_value = |t| is_value_type(&import, t).unwrap();
        assert!(is_value(point) && is_value(color) && is_value(ref_struct));
        assert!(!is_value(system_enum), "System.Enum is a class");
        assert!(!is_value(class) && !is_value(generic_base) && !is_value(interface));
        assert!(matches!(
            is_value_type(&import, mdTypeDef(0x0200_00FF)),
            Err(WrapError::Metadata("GetTypeDefProps", _))
        ));

        assert!(is_by_ref_like(&import, ref_struct.token()));
        assert!(!is_by_ref_like(&import, point.token()));
        // Unresolvable TypeRefs: by name.
        assert!(is_by_ref_like(&import, span.token()));
        assert!(!is_by_ref_like(&import, value_type.token()));

        assert_eq!(type_name_of(&import, long.token()), Ok(long_name));
        assert_eq!(generic_param_count(&import, class.token()), Ok(2));
        assert_eq!(generic_param_count(&import, point.token()), Ok(0));
        assert_eq!(
            type_name_of(&import, mdToken(0x0100_00FF))
                .unwrap_err()
                .to_string(),
            alloc::format!(
                "GetTypeRefProps failed ({})",
                crate::metadata::CLDB_E_RECORD_NOTFOUND
            )
        );
    }
}
