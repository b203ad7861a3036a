//! The first phase: what the integration sees of the method (`TTarget`,
//! the instance, each argument and the result as generic arguments) and the
//! locals the wrapped body adds to the method's own.

use alloc::vec;
use alloc::vec::Vec;

use super::ops::{ldarg, Code};
use super::{unsupported, Probes, ThisArg, WrapContext};
use crate::cil::{Error, LocalVarSig, MethodSig, OpCode, Operand, TypeSig};

/// How a value reaches the integration as a generic argument.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Generic {
    /// As itself: the generic argument is this type.
    Itself(TypeSig),
    /// As `object` `null` (pointers, `TypedReference`, by-ref-like types:
    /// no generic argument can be one).
    Null,
}

impl Generic {
    /// What the integration sees of a value of type `ty` (by-refs looked
    /// through).
    fn of<C: WrapContext>(cx: &mut C, ty: &TypeSig) -> Generic {
        let mut ty = ty.unmodified();
        if let TypeSig::ByRef(inner) = ty {
            ty = inner.unmodified();
        }
        match ty {
            TypeSig::Ptr(_)
            | TypeSig::FnPtr(_)
            | TypeSig::TypedByRef
            | TypeSig::ByRef(_)
            | TypeSig::Pinned(_)
            | TypeSig::Void => Generic::Null,
            TypeSig::ValueType(_)
            | TypeSig::GenericInst {
                value_type: true, ..
            } if !cx.can_box(ty) => Generic::Null,
            other => Generic::Itself(other.clone()),
        }
    }

    /// The generic argument.
    pub(super) fn arg(&self) -> TypeSig {
        match self {
            Generic::Itself(t) => t.clone(),
            Generic::Null => TypeSig::Object,
        }
    }
}

/// The locals the wrapped body uses, as indices into [`Locals::sig`].
pub(super) struct Locals {
    /// The method's local signature with the new locals appended.
    pub(super) sig: LocalVarSig,
    /// The `CallTargetState`.
    pub(super) state: u16,
    /// The result (non-void methods).
    pub(super) result: Option<u16>,
    /// The exception caught (when there is an end call).
    pub(super) exception: Option<u16>,
    /// The `CallTargetReturn<TReturn>` `GetReturnValue` is called on.
    pub(super) returned: Option<u16>,
    /// `default(TResult)` for `OnAsyncMethodEnd` before any task (and the
    /// `CallTargetReturn` of a runtime-async `Task` or `ValueTask`).
    pub(super) async_default: Option<u16>,
    /// The `object` `null` passed by reference for an argument no generic
    /// argument can stand for.
    pub(super) scratch: Option<u16>,
}

/// Everything the code phases share.
pub(super) struct Plan {
    /// `TTarget`.
    pub(super) target: TypeSig,
    /// The code that loads the instance.
    pub(super) instance: Code,
    /// Each parameter, as the integration sees it.
    pub(super) args: Vec<Generic>,
    /// The result, as the integration sees it (`None`: void).
    pub(super) result: Option<Generic>,
    /// The locals.
    pub(super) locals: Locals,
}

impl Plan {
    /// Plans the wrapping of a method with signature `sig` (checked by the
    /// caller) whose own locals are `locals`.
    pub(super) fn new<C: WrapContext>(
        sig: &MethodSig,
        this: &ThisArg,
        locals: &LocalVarSig,
        probes: &Probes,
        cx: &mut C,
    ) -> Result<Plan, Error> {
        // TTarget and how the instance is loaded.
        let (target, instance): (TypeSig, Code) = match this {
            ThisArg::Static => (TypeSig::Object, vec![(OpCode::LDNULL, Operand::None)]),
            ThisArg::Reference(ty) => (ty.clone(), vec![ldarg(0)]),
            ThisArg::Value(ty) => match Generic::of(cx, ty) {
                Generic::Null => (TypeSig::Object, vec![(OpCode::LDNULL, Operand::None)]),
                Generic::Itself(ty) => {
                    let tok = match &ty {
                        TypeSig::ValueType(t) => *t,
                        other => cx
                            .type_token(other)
                            .ok_or_else(|| unsupported("no type token for `this`"))?,
                    };
                    (ty, vec![ldarg(0), (OpCode::LDOBJ, Operand::Token(tok))])
                }
            },
        };
        let args: Vec<Generic> = sig.params.iter().map(|p| Generic::of(cx, p)).collect();
        let result = (*sig.ret.unmodified() != TypeSig::Void).then(|| Generic::of(cx, &sig.ret));
        let locals = Locals::new(sig, locals, probes, &args, result.as_ref())?;
        Ok(Plan {
            target,
            instance,
            args,
            result,
            locals,
        })
    }
}

impl Locals {
    /// Appends the locals the wrapping needs to `locals`.
    fn new(
        sig: &MethodSig,
        locals: &LocalVarSig,
        probes: &Probes,
        args: &[Generic],
        result_generic: Option<&Generic>,
    ) -> Result<Locals, Error> {
        let returns = result_generic.is_some();
        let mut new = locals.clone();
        let state = new.push_locals([TypeSig::ValueType(probes.state)])?;
        let result = if returns {
            Some(new.push_locals([sig.ret.clone()])?)
        } else {
            None
        };
        let mut exception = None;
        let mut returned = None;
        let mut async_default = None;
        if let Some(a) = probes
            .async_end
            .as_ref()
            .filter(|a| returns || a.continuation.is_none())
        {
            exception = Some(new.push_locals([TypeSig::Class(probes.exception)])?);
            async_default = Some(new.push_locals([a.result.clone()])?);
        } else if probes.end.is_some() {
            exception = Some(new.push_locals([TypeSig::Class(probes.exception)])?);
            if let Some(Generic::Itself(t)) = result_generic {
                returned = Some(new.push_locals([TypeSig::generic_value_type(
                    probes.return_type,
                    vec![t.clone()],
                )])?);
            }
        }
        let scratch = if probes.begin.is_some() && args.contains(&Generic::Null) {
            Some(new.push_locals([TypeSig::Object])?)
        } else {
            None
        };
        Ok(Locals {
            sig: new,
            state,
            result,
            exception,
            returned,
            async_default,
            scratch,
        })
    }
}
