//! Method wrapping: the CallTarget shape (documented on [`wrap`]).

use alloc::vec;
use alloc::vec::Vec;

use super::body::MethodBody;
use super::eh::{ClauseKind, ExceptionClause};
use super::error::{Error, ErrorKind};
use super::instruction::{Label, Operand, Token};
use super::opcode::OpCode;
use super::sig::{calling_convention as cc, LocalVarSig, MethodSig, TypeSig};
use super::stack::StackSig;

/// The integration methods and types the wrapped body refers to, all
/// tokens valid in the wrapped method's module (the contract:
/// docs/instrumentation.md, "The contract").
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Probes {
    /// `OnMethodBegin<TTarget, TArg1..TArgN>` for the method's `N`
    /// parameters (the generic MemberRef; [`wrap`] instantiates it), or
    /// `None`: no begin call.
    pub begin: Option<Token>,
    /// `begin` takes a trailing `string method` (the target's name,
    /// [`method_name`](Probes::method_name)).
    pub begin_takes_name: bool,
    /// `OnMethodEnd<TTarget, TReturn>` for a non-void method, or
    /// `OnMethodEnd<TTarget>` for a void one (generic MemberRef), or
    /// `None`: no end call (and no new exception clauses).
    pub end: Option<Token>,
    /// `end` takes the state by reference (`in CallTargetState`, as Roslyn
    /// compiles it: `ldloca`), not by value (as mcs 6.8 compiles `in`:
    /// `ldloc`).
    pub end_state_by_ref: bool,
    /// `CorProf.CallTarget.CallTargetState` (a value type's TypeRef).
    pub state: Token,
    /// ``CorProf.CallTarget.CallTargetReturn`1`` (a generic value type's
    /// TypeRef), whose `GetReturnValue()` gives the value to return.
    pub return_type: Token,
    /// `System.Exception` (TypeRef), the class the new catch clauses catch.
    pub exception: Token,
    /// The user string (`ldstr` token) of the method's name, for a `begin`
    /// that takes it.
    pub method_name: Token,
    /// For a method returning `Task`, `Task<T>`, `ValueTask` or
    /// `ValueTask<T>` whose integration has `OnAsyncMethodEnd`: the end
    /// probe runs when the task completes (and `end` is not called).
    pub async_end: Option<AsyncProbes>,
}

/// What an async target's wrapping calls (docs/instrumentation.md, "Async
/// methods").
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AsyncProbes {
    /// `OnAsyncMethodEnd<TTarget, TResult>` (the integration's generic
    /// MemberRef).
    pub end: Token,
    /// `end` takes the state by reference (as `Probes::end_state_by_ref`).
    pub end_state_by_ref: bool,
    /// `CallTargetAsync.ContinueTask` or `ContinueValueTask` for the
    /// method's return type (generic MemberRef: `<TTarget, TResult>` for
    /// `Task<T>`/`ValueTask<T>`, `<TTarget>` for `Task`/`ValueTask`).
    pub continuation: Token,
    /// Whether `continuation` takes `<TTarget, TResult>` (else `<TTarget>`).
    pub generic_result: bool,
    /// ``CorProf.CallTarget.AsyncMethodEnd`2`` (a generic delegate's TypeRef).
    pub delegate: Token,
    /// `TResult`: the task's `T`, or `CallTargetReturn` for `Task` and
    /// `ValueTask`.
    pub result: TypeSig,
}

/// What `this` is in the wrapped method, and so what `TTarget` is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ThisArg {
    /// A static method: `TTarget` is `object`, the instance `null`.
    Static,
    /// An instance method of a reference type: `TTarget` is the type (the
    /// declaring type as a signature: `Class(typedef)`, or a generic class
    /// instantiation over the type's own parameters, `VAR 0`, ...), the
    /// instance `this`.
    Reference(TypeSig),
    /// An instance method of a value type: `this` is a managed pointer;
    /// `TTarget` is the type (`ValueType(typedef)` or a generic value-type
    /// instantiation over its own parameters) and the integration gets a
    /// copy of the value (`ldobj`). A by-ref-like type (see
    /// [`WrapContext::can_box`]) is passed as `object` `null`.
    Value(TypeSig),
}

/// The metadata the wrapper needs, supplied by the caller (a profiler
/// answers these with `IMetaDataEmit`; see `corprof::facade::MetadataEmit`).
pub trait WrapContext {
    /// A token usable with `ldobj` for `ty`, and as a MemberRef parent: the
    /// TypeDef or TypeRef of a `VALUETYPE`, or a TypeSpec of the signature
    /// (a primitive, a generic parameter, a generic instantiation). `None`
    /// fails the wrap.
    fn type_token(&mut self, ty: &TypeSig) -> Option<Token>;

    /// The StandAloneSig token of the extended local signature.
    fn local_sig_token(&mut self, locals: &LocalVarSig) -> Option<Token>;

    /// The stack effect of a call site of the original body (like
    /// `MetadataImport::stack_sig`).
    fn stack_sig(&mut self, token: Token) -> Option<StackSig>;

    /// The MethodSpec token instantiating the generic method `method` (a
    /// MemberRef of [`Probes`]) with `args` (a MethodSpec blob of them,
    /// `DefineMethodSpec`). `None` fails the wrap.
    fn method_spec(&mut self, method: Token, args: &[TypeSig]) -> Option<Token>;

    /// The MemberRef of method `name` with signature `sig` on `parent` (a
    /// TypeSpec: `CallTargetReturn<TReturn>::GetReturnValue`). `None`
    /// fails the wrap.
    fn member_ref(&mut self, parent: Token, name: &str, sig: &MethodSig) -> Option<Token>;

    /// Whether `ty` (a value type) may be boxed or be a generic argument:
    /// `false` for by-ref-like types (`Span<T>`, `ref struct`s), which the
    /// wrapper then passes to the integration as `object` `null` (the
    /// runtime refuses them as generic arguments). The default says yes.
    fn can_box(&mut self, ty: &TypeSig) -> bool {
        let _ = ty;
        true
    }
}

/// How a value reaches the integration as a generic argument.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Generic {
    /// As itself: the generic argument is this type.
    Itself(TypeSig),
    /// As `object` `null` (pointers, `TypedReference`, by-ref-like types:
    /// no generic argument can be one).
    Null,
}

fn unsupported(s: &'static str) -> Error {
    Error::new(0, ErrorKind::Unsupported(s))
}

/// What the integration sees of a value of type `ty` (by-refs looked
/// through).
fn generic_of<C: WrapContext>(cx: &mut C, ty: &TypeSig) -> Generic {
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

impl Generic {
    fn arg(&self) -> TypeSig {
        match self {
            Generic::Itself(t) => t.clone(),
            Generic::Null => TypeSig::Object,
        }
    }
}

type Code = Vec<(OpCode, Operand)>;

fn ldarg(i: u16) -> (OpCode, Operand) {
    match i {
        0 => (OpCode::LDARG_0, Operand::None),
        1 => (OpCode::LDARG_1, Operand::None),
        2 => (OpCode::LDARG_2, Operand::None),
        3 => (OpCode::LDARG_3, Operand::None),
        4..=255 => (OpCode::LDARG_S, Operand::Var(i)),
        _ => (OpCode::LDARG, Operand::Var(i)),
    }
}

fn ldarga(i: u16) -> (OpCode, Operand) {
    match i {
        0..=255 => (OpCode::LDARGA_S, Operand::Var(i)),
        _ => (OpCode::LDARGA, Operand::Var(i)),
    }
}

fn ldloc(i: u16) -> (OpCode, Operand) {
    match i {
        0 => (OpCode::LDLOC_0, Operand::None),
        1 => (OpCode::LDLOC_1, Operand::None),
        2 => (OpCode::LDLOC_2, Operand::None),
        3 => (OpCode::LDLOC_3, Operand::None),
        4..=255 => (OpCode::LDLOC_S, Operand::Var(i)),
        _ => (OpCode::LDLOC, Operand::Var(i)),
    }
}

fn ldloca(i: u16) -> (OpCode, Operand) {
    match i {
        0..=255 => (OpCode::LDLOCA_S, Operand::Var(i)),
        _ => (OpCode::LDLOCA, Operand::Var(i)),
    }
}

fn stloc(i: u16) -> (OpCode, Operand) {
    match i {
        0 => (OpCode::STLOC_0, Operand::None),
        1 => (OpCode::STLOC_1, Operand::None),
        2 => (OpCode::STLOC_2, Operand::None),
        3 => (OpCode::STLOC_3, Operand::None),
        4..=255 => (OpCode::STLOC_S, Operand::Var(i)),
        _ => (OpCode::STLOC, Operand::Var(i)),
    }
}

fn append(body: &mut MethodBody, code: &[(OpCode, Operand)]) -> Result<Vec<Label>, Error> {
    code.iter()
        .map(|(op, operand)| body.push(*op, operand.clone()))
        .collect()
}

/// Method wrapping: surround a method body with calls to an integration's
/// generic methods (CallTarget instrumentation, as APM agents do).
///
/// [`wrap`] turns a decoded body into the equivalent of
///
/// ```text
/// CallTargetState state = default;
/// TReturn result = default;
/// Exception exception = null;
/// try {
///     state = OnMethodBegin<TTarget, TArg1, ..>(instance, ref arg1, .. [, "Type::Method"]);
/// } catch (Exception) { }                          // the integration's own
/// try {
///     original body; every `ret` becomes `stloc result; leave NORMAL`
/// } catch (Exception e) {
///     exception = e;
///     try {
///         OnMethodEnd<TTarget, TReturn>(instance, result, e, in state);
///     } catch (Exception) { }                      // the integration's own
///     rethrow;                                     // unchanged
/// }
/// NORMAL:
/// try {
///     result = OnMethodEnd<TTarget, TReturn>(instance, result, null, in state)
///         .GetReturnValue();                       // void: OnMethodEnd<TTarget>(instance, null, in state)
/// } catch (Exception) { }                          // the integration's own
/// return result;
/// ```
///
/// No `finally`: the normal path runs no handler (a `leave` to the end
/// call), so the wrapping costs the calls themselves, which the JIT may
/// inline (see docs/instrumentation.md, "Cost").
///
/// `OnMethodBegin` and `OnMethodEnd` are static generic methods of the
/// integration (MemberRefs in [`Probes`]), called through MethodSpecs
/// instantiated for the method: `TTarget` from [`ThisArg`], each `TArgI`
/// the parameter's type (a `ref`/`out` parameter's element type: the
/// integration gets the caller's reference; a by-value parameter is passed
/// by `ldarga`, so a change the integration makes is what the body sees),
/// `TReturn` the return type. Nothing is boxed and no array is built. A
/// missing probe (`None`) is not called; with no `end`, no clause is added.
///
/// Pure `core` + `alloc`: the metadata the wrapper needs (type tokens,
/// MethodSpecs, the `GetReturnValue` MemberRef, the extended local
/// signature, call-site stack effects) comes from a [`WrapContext`] the
/// caller implements. `corprof::instrument::CallTarget` is the
/// implementation over a module's metadata.
///
/// ```
/// use corprof::cil::{LocalVarSig, MethodSig, TypeSig};
/// use corprof::cil::{wrap, Probes, ThisArg, WrapContext};
/// use corprof::cil::{MethodBody, StackSig, Token};
///
/// struct Cx(u32);
/// impl WrapContext for Cx {
///     fn type_token(&mut self, _: &TypeSig) -> Option<Token> {
///         Some(Token(0x1B00_0001)) // a TypeSpec the caller defined
///     }
///     fn local_sig_token(&mut self, _: &LocalVarSig) -> Option<Token> {
///         Some(Token(0x1100_0001))
///     }
///     fn stack_sig(&mut self, _: Token) -> Option<StackSig> {
///         None // the body below calls nothing
///     }
///     fn method_spec(&mut self, _: Token, _: &[TypeSig]) -> Option<Token> {
///         self.0 += 1;
///         Some(Token(0x2B00_0000 + self.0))
///     }
///     fn member_ref(&mut self, _: Token, _: &str, _: &MethodSig) -> Option<Token> {
///         Some(Token(0x0A00_0009))
///     }
/// }
/// let probes = Probes {
///     begin: Some(Token(0x0A00_0001)),
///     begin_takes_name: false,
///     end: Some(Token(0x0A00_0002)),
///     end_state_by_ref: true,
///     state: Token(0x0100_0003),
///     return_type: Token(0x0100_0004),
///     exception: Token(0x0100_0005),
///     method_name: Token(0x7000_0001),
///     async_end: None,
/// };
/// // static int F() => 41;
/// let mut body = MethodBody::decode(&[0x0E, 0x1F, 41, 0x2A])?;
/// let sig = MethodSig::static_method(TypeSig::I4, vec![]);
/// let locals = LocalVarSig { locals: vec![] };
/// wrap(&mut body, &sig, &ThisArg::Static, &locals, &probes, &mut Cx(0))?;
/// // The end guard in the catch, the catch, the normal end's guard, the
/// // begin guard.
/// assert_eq!(body.clauses().len(), 4);
/// assert_eq!(body.header().local_var_sig, Some(Token(0x1100_0001)));
/// let il = body.encode()?; // for SetILFunctionBody
/// # assert!(MethodBody::decode(&il).is_ok());
/// # Ok::<(), corprof::cil::Error>(())
/// ```
///
/// # This function
///
/// Wraps `body`, the body of a method with signature `sig`, in calls to the
/// [`Probes`].
///
/// `locals` is the method's local signature as it is (empty when the
/// header names none): the wrapper appends the locals it needs (the
/// `CallTargetState`, the result, the exception, the `CallTargetReturn`,
/// an `object` for arguments passed as `null`), asks `cx` for the token
/// of the result and stores it in the header, with `InitLocals` set. Max
/// stack is recomputed (call sites of the original body through
/// [`WrapContext::stack_sig`]).
///
/// Handles static and instance methods (a value-type `this` is passed as
/// a copy), void and non-void returns, by-ref parameters, generic methods
/// and methods of generic types (`!!0`, `!0` as generic arguments),
/// existing exception clauses (kept inside the new ones, listed first as
/// ECMA-335 II.19 requires), bodies ending in `throw`, and `tail.` calls
/// (the prefix becomes `nop`: no tail call may leave a protected region,
/// III.2.4).
///
/// Arguments no generic argument can stand for (pointers, function
/// pointers, `TypedReference`, by-ref-like types: see
/// [`WrapContext::can_box`]) reach the integration as `ref object` to a
/// `null` local (a change is ignored), and such a result as `object`
/// `null` (not replaceable).
///
/// Fails with [`ErrorKind::Unsupported`] (and leaves `body` as it was) for:
/// vararg and unmanaged calling conventions, `EXPLICITTHIS`, by-ref and
/// `TypedReference` returns, `jmp`, an empty body, probes that are both
/// `None`, and when `cx` answers `None`; with [`ErrorKind::Unencodable`]
/// when the locals would pass 65535; with the codec's errors for IL that
/// does not analyse.
pub fn wrap<C: WrapContext>(
    body: &mut MethodBody,
    sig: &MethodSig,
    this: &ThisArg,
    locals: &LocalVarSig,
    probes: &Probes,
    cx: &mut C,
) -> Result<(), Error> {
    let kind = sig.kind();
    if kind == cc::VARARG {
        return Err(unsupported("vararg method"));
    }
    if kind != cc::DEFAULT {
        return Err(unsupported("unmanaged calling convention"));
    }
    if sig.explicit_this() {
        return Err(unsupported("EXPLICITTHIS calling convention"));
    }
    if sig.has_this() == matches!(this, ThisArg::Static) {
        return Err(unsupported(
            "the signature's HASTHIS does not match the `this` kind given",
        ));
    }
    let ret = sig.ret.unmodified();
    if matches!(ret, TypeSig::ByRef(_)) {
        return Err(unsupported("returns by reference"));
    }
    if matches!(ret, TypeSig::TypedByRef) {
        return Err(unsupported("returns a TypedReference"));
    }
    if body.instructions().is_empty() {
        return Err(unsupported("empty body"));
    }
    if probes.begin.is_none() && probes.end.is_none() && probes.async_end.is_none() {
        return Err(unsupported(
            "the integration has neither OnMethodBegin nor OnMethodEnd for this method",
        ));
    }
    if body
        .instructions()
        .iter()
        .any(|i| i.opcode() == OpCode::JMP)
    {
        return Err(unsupported("uses `jmp`"));
    }
    let n_params = u16::try_from(sig.params.len())
        .ok()
        .filter(|&n| usize::from(n) + usize::from(sig.has_this()) <= 0xFFFF)
        .ok_or_else(|| unsupported("too many parameters"))?;
    let returns = *ret != TypeSig::Void;

    // TTarget and how the instance is loaded.
    let (target, instance): (TypeSig, Code) = match this {
        ThisArg::Static => (TypeSig::Object, vec![(OpCode::LDNULL, Operand::None)]),
        ThisArg::Reference(ty) => (ty.clone(), vec![ldarg(0)]),
        ThisArg::Value(ty) => match generic_of(cx, ty) {
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
    let args: Vec<Generic> = sig.params.iter().map(|p| generic_of(cx, p)).collect();
    let result_generic = if returns {
        Some(generic_of(cx, &sig.ret))
    } else {
        None
    };

    // The new locals.
    let mut new_locals = locals.clone();
    let state = new_locals.push_locals([TypeSig::ValueType(probes.state)])?;
    let result = if returns {
        Some(new_locals.push_locals([sig.ret.clone()])?)
    } else {
        None
    };
    let asynchronous = probes.async_end.as_ref().filter(|_| returns);
    let mut exception = None;
    let mut returned = None;
    let mut async_default = None;
    if let Some(a) = asynchronous {
        exception = Some(new_locals.push_locals([TypeSig::Class(probes.exception)])?);
        async_default = Some(new_locals.push_locals([a.result.clone()])?);
    } else if probes.end.is_some() {
        exception = Some(new_locals.push_locals([TypeSig::Class(probes.exception)])?);
        if let Some(Generic::Itself(t)) = &result_generic {
            returned = Some(new_locals.push_locals([TypeSig::generic_value_type(
                probes.return_type,
                vec![t.clone()],
            )])?);
        }
    }
    let scratch = if probes.begin.is_some() && args.contains(&Generic::Null) {
        Some(new_locals.push_locals([TypeSig::Object])?)
    } else {
        None
    };
    let local_tok = cx
        .local_sig_token(&new_locals)
        .ok_or_else(|| unsupported("no token for the extended local signature"))?;

    // Stack effects of the calls this wrapper adds.
    let mut calls: Vec<(Token, StackSig)> = Vec::new();

    // Work on a copy: `body` stays untouched on failure.
    let mut work = body.clone();
    let original_first = work.instructions()[0].label();
    let mut clauses: Vec<ExceptionClause> = Vec::new();
    let mut after_clauses: Vec<ExceptionClause> = Vec::new();

    let end = match asynchronous {
        Some(a) => Some(a.end),
        None => probes.end,
    };
    if let (Some(end), Some(ex)) = (end, exception) {
        let rets: Vec<Label> = work
            .instructions()
            .iter()
            .filter(|i| i.opcode() == OpCode::RET)
            .map(|i| i.label())
            .collect();
        let tails: Vec<Label> = work
            .instructions()
            .iter()
            .filter(|i| i.opcode() == OpCode::TAIL)
            .map(|i| i.label())
            .collect();
        let mut generic_args = vec![target.clone()];
        match (asynchronous, &result_generic) {
            (Some(a), _) => generic_args.push(a.result.clone()),
            (None, Some(g)) => generic_args.push(g.arg()),
            (None, None) => {}
        }
        let spec = cx
            .method_spec(end, &generic_args)
            .ok_or_else(|| unsupported("no MethodSpec for OnMethodEnd"))?;
        let state_by_ref = match asynchronous {
            Some(a) => a.end_state_by_ref,
            None => probes.end_state_by_ref,
        };
        calls.push((
            spec,
            StackSig {
                params: 3 + u32::from(returns),
                has_this: false,
                returns_value: true,
            },
        ));
        let get_return_value = match (&result_generic, returned) {
            (Some(Generic::Itself(t)), Some(_)) => {
                let parent = cx
                    .type_token(&TypeSig::generic_value_type(
                        probes.return_type,
                        vec![t.clone()],
                    ))
                    .ok_or_else(|| unsupported("no TypeSpec for CallTargetReturn<TReturn>"))?;
                let get = cx
                    .member_ref(
                        parent,
                        "GetReturnValue",
                        &MethodSig::instance_method(TypeSig::Var(0), vec![]),
                    )
                    .ok_or_else(|| unsupported("no MemberRef for GetReturnValue"))?;
                calls.push((
                    get,
                    StackSig {
                        params: 0,
                        has_this: true,
                        returns_value: true,
                    },
                ));
                Some(get)
            }
            _ => None,
        };
        // The end call: OnMethodEnd(instance, [result,] exception, state),
        // its answer the new result on the normal path (`replace`), dropped
        // on the exceptional one; then `leave` (patched below).
        let end_call = |exception: (OpCode, Operand), replace: bool| -> Code {
            let mut code: Code = instance.clone();
            match (async_default, &result_generic, result) {
                // OnAsyncMethodEnd before any task: default(TResult).
                (Some(d), _, _) => code.push(ldloc(d)),
                (None, Some(Generic::Itself(_)), Some(r)) => code.push(ldloc(r)),
                (None, Some(Generic::Null), _) => code.push((OpCode::LDNULL, Operand::None)),
                _ => {}
            }
            code.push(exception);
            code.push(if state_by_ref {
                ldloca(state)
            } else {
                ldloc(state)
            });
            code.push((OpCode::CALL, Operand::Token(spec)));
            match (get_return_value, result, returned) {
                (Some(get), Some(r), Some(rv)) if replace => {
                    code.push(stloc(rv));
                    code.push(ldloca(rv));
                    code.push((OpCode::CALL, Operand::Token(get)));
                    code.push(stloc(r));
                }
                _ => code.push((OpCode::POP, Operand::None)),
            }
            code.push((OpCode::LEAVE, Operand::Branch(original_first)));
            code
        };
        let guard_code = [
            (OpCode::POP, Operand::None),
            (OpCode::LEAVE, Operand::Branch(original_first)),
        ];
        // catch (Exception e) {
        //     exception = e;
        //     try { End(instance, result, e, state); } catch { }
        //     rethrow;
        // }
        let catch = work.push(stloc(ex).0, stloc(ex).1)?;
        let failed = append(&mut work, &end_call(ldloc(ex), false))?;
        let failed_guard = append(&mut work, &guard_code)?;
        let rethrow = work.push(OpCode::RETHROW, Operand::None)?;
        // NORMAL: try { result = End(instance, result, null, state)
        //     .GetReturnValue(); } catch { }
        let normal_code = match (asynchronous, result) {
            (Some(a), Some(r)) => {
                // result = CallTargetAsync.Continue..(instance, result,
                //     state, new AsyncMethodEnd<TTarget, TResult>(
                //     OnAsyncMethodEnd<TTarget, TResult>));
                let pair = vec![target.clone(), a.result.clone()];
                let delegate = cx
                    .type_token(&TypeSig::generic_class(a.delegate, pair.clone()))
                    .ok_or_else(|| unsupported("no TypeSpec for AsyncMethodEnd<,>"))?;
                let ctor = cx
                    .member_ref(
                        delegate,
                        ".ctor",
                        &MethodSig::instance_method(
                            TypeSig::Void,
                            vec![TypeSig::Object, TypeSig::I],
                        ),
                    )
                    .ok_or_else(|| unsupported("no MemberRef for AsyncMethodEnd's constructor"))?;
                calls.push((
                    ctor,
                    StackSig {
                        params: 2,
                        has_this: true,
                        returns_value: false,
                    },
                ));
                let continuation_args = if a.generic_result {
                    pair
                } else {
                    vec![target.clone()]
                };
                let continuation = cx
                    .method_spec(a.continuation, &continuation_args)
                    .ok_or_else(|| unsupported("no MethodSpec for CallTargetAsync"))?;
                calls.push((
                    continuation,
                    StackSig {
                        params: 4,
                        has_this: false,
                        returns_value: true,
                    },
                ));
                let mut code: Code = instance.clone();
                code.push(ldloc(r));
                code.push(ldloc(state));
                code.push((OpCode::LDNULL, Operand::None));
                code.push((OpCode::LDFTN, Operand::Token(spec)));
                code.push((OpCode::NEWOBJ, Operand::Token(ctor)));
                code.push((OpCode::CALL, Operand::Token(continuation)));
                code.push(stloc(r));
                code.push((OpCode::LEAVE, Operand::Branch(original_first)));
                code
            }
            _ => end_call((OpCode::LDNULL, Operand::None), true),
        };
        let normal = append(&mut work, &normal_code)?;
        let normal_guard = append(&mut work, &guard_code)?;
        // DONE: return result;
        let mut done: Code = Vec::new();
        if let Some(r) = result {
            done.push(ldloc(r));
        }
        done.push((OpCode::RET, Operand::None));
        let done = append(&mut work, &done)?[0];
        for (code, to) in [
            (&failed, rethrow),
            (&failed_guard, rethrow),
            (&normal, done),
            (&normal_guard, done),
        ] {
            work.replace(code[code.len() - 1], OpCode::LEAVE, Operand::Branch(to))?;
        }

        for r in rets {
            if let Some(res) = result {
                let (op, operand) = stloc(res);
                work.replace(r, op, operand)?;
                work.insert_after(r, OpCode::LEAVE, Operand::Branch(normal[0]))?;
            } else {
                work.replace(r, OpCode::LEAVE, Operand::Branch(normal[0]))?;
            }
        }
        for t in tails {
            work.replace(t, OpCode::NOP, Operand::None)?;
        }
        // Clauses that ended at the end of the code now end where the new
        // handler begins.
        for c in work.clauses_mut().iter_mut() {
            for l in [&mut c.try_end, &mut c.handler_end] {
                if *l == Label::END {
                    *l = catch;
                }
            }
        }
        // Inner before outer (II.19): the guard inside the catch handler,
        // then the catch; the normal path's guard.
        clauses.push(ExceptionClause::new(
            ClauseKind::Catch(probes.exception),
            failed[0],
            failed_guard[0],
            failed_guard[0],
            rethrow,
        ));
        clauses.push(ExceptionClause::new(
            ClauseKind::Catch(probes.exception),
            original_first,
            catch,
            catch,
            normal[0],
        ));
        clauses.push(ExceptionClause::new(
            ClauseKind::Catch(probes.exception),
            normal[0],
            normal_guard[0],
            normal_guard[0],
            done,
        ));
    }

    if let Some(begin) = probes.begin {
        // try { state = Begin(instance, ref args.. [, name]); leave BODY; }
        // catch (Exception) { pop; leave BODY; }
        let mut generic_args = vec![target.clone()];
        generic_args.extend(args.iter().map(Generic::arg));
        let spec = cx
            .method_spec(begin, &generic_args)
            .ok_or_else(|| unsupported("no MethodSpec for OnMethodBegin"))?;
        calls.push((
            spec,
            StackSig {
                params: 1 + u32::from(n_params) + u32::from(probes.begin_takes_name),
                has_this: false,
                returns_value: true,
            },
        ));
        let mut pro: Code = Vec::new();
        if let Some(s) = scratch {
            pro.push((OpCode::LDNULL, Operand::None));
            pro.push(stloc(s));
        }
        let try_at = pro.len();
        pro.extend(instance.iter().cloned());
        let first_arg = u16::from(sig.has_this());
        for (i, (p, g)) in sig.params.iter().zip(&args).enumerate() {
            let index = first_arg + i as u16;
            match g {
                Generic::Null => pro.push(ldloca(scratch.unwrap_or(0))),
                Generic::Itself(_) if matches!(p.unmodified(), TypeSig::ByRef(_)) => {
                    pro.push(ldarg(index))
                }
                Generic::Itself(_) => pro.push(ldarga(index)),
            }
        }
        if probes.begin_takes_name {
            pro.push((OpCode::LDSTR, Operand::Token(probes.method_name)));
        }
        pro.push((OpCode::CALL, Operand::Token(spec)));
        pro.push(stloc(state));
        pro.push((OpCode::LEAVE, Operand::Branch(original_first)));
        let handler_at = pro.len();
        pro.push((OpCode::POP, Operand::None));
        pro.push((OpCode::LEAVE, Operand::Branch(original_first)));
        let mut labels = Vec::new();
        for (i, (op, operand)) in pro.into_iter().enumerate() {
            labels.push(work.insert(i, op, operand)?);
        }
        after_clauses.push(ExceptionClause::new(
            ClauseKind::Catch(probes.exception),
            labels[try_at],
            labels[handler_at],
            labels[handler_at],
            original_first,
        ));
    }

    let all = work.clauses_mut();
    all.extend(clauses);
    all.extend(after_clauses);
    let header = work.header_mut();
    header.local_var_sig = Some(local_tok);
    header.init_locals = true;
    work.update_max_stack(|t| {
        calls
            .iter()
            .find(|(c, _)| *c == t)
            .map(|(_, s)| *s)
            .or_else(|| cx.stack_sig(t))
    })?;
    *body = work;
    Ok(())
}
