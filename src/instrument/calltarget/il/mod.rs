//! The IL of the CallTarget contract: a method body wrapped in calls to an
//! integration's generic methods (documented on [`wrap`]), built in phases:
//!
//! - `plan.rs`: what the integration sees of the method (`TTarget`, the
//!   instance, the arguments and result as generic arguments) and the new
//!   locals;
//! - `end.rs`: the end call's references and code;
//! - `exits.rs`: the body's exits (`ret` becomes `leave`), the handler
//!   that calls the end on an exception, the normal end, the return, and
//!   their clauses;
//! - `begin.rs`: the begin call and its guard, before the body;
//! - `ops.rs`: the short forms of the argument and local instructions.
//!
//! Pure IL over the [CIL codec](crate::cil): the metadata comes from a
//! [`WrapContext`] the caller implements.

use alloc::vec::Vec;

use crate::cil::{calling_convention as cc, LocalVarSig, MethodSig, TypeSig};
use crate::cil::{Error, ErrorKind, ExceptionClause, Label, MethodBody, OpCode, StackSig, Token};

mod begin;
mod end;
mod exits;
mod ops;
mod plan;

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
    /// How `end` is reached. `Some`: the method returns its task, which
    /// `CallTargetAsync` continues with a call to `end`. `None`: a
    /// runtime-async method (`MethodImplAttributes.Async`), whose body's
    /// `ret` carries the awaited value (nothing for `Task` and `ValueTask`):
    /// `end` is called when the body completes, after its last suspension,
    /// and [`wrap`] is given the signature the body returns by (`T`, or
    /// `void`), not the declared one.
    pub continuation: Option<Continuation>,
    /// `TResult`: the task's `T`, or `CallTargetReturn` for `Task` and
    /// `ValueTask`.
    pub result: TypeSig,
}

/// How a returned task reaches `OnAsyncMethodEnd` ([`AsyncProbes`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Continuation {
    /// `CallTargetAsync.ContinueTask` or `ContinueValueTask` for the
    /// method's return type (generic MemberRef: `<TTarget, TResult>` for
    /// `Task<T>`/`ValueTask<T>`, `<TTarget>` for `Task`/`ValueTask`).
    pub method: Token,
    /// Whether `method` takes `<TTarget, TResult>` (else `<TTarget>`).
    pub generic_result: bool,
    /// ``CorProf.CallTarget.AsyncMethodEnd`2`` (a generic delegate's TypeRef).
    pub delegate: Token,
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
fn unsupported(s: &'static str) -> Error {
    Error::new(0, ErrorKind::Unsupported(s))
}

/// The body being wrapped (a copy: the caller's stays untouched on
/// failure) and what the phases add besides code.
struct Work {
    body: MethodBody,
    /// The original body's first instruction.
    first: Label,
    /// The stack effects of the calls the wrapping adds.
    calls: Vec<(Token, StackSig)>,
    /// The end's clauses, after the body's own (inner before outer).
    clauses: Vec<ExceptionClause>,
    /// The begin's guard, last.
    begin_clause: Option<ExceptionClause>,
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
/// use corprof::instrument::{wrap, Probes, ThisArg, WrapContext};
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
    check(body, sig, this, probes)?;
    let plan = plan::Plan::new(sig, this, locals, probes, cx)?;
    let local_tok = cx
        .local_sig_token(&plan.locals.sig)
        .ok_or_else(|| unsupported("no token for the extended local signature"))?;
    let mut work = Work {
        first: body.instructions()[0].label(),
        body: body.clone(),
        calls: Vec::new(),
        clauses: Vec::new(),
        begin_clause: None,
    };
    let asynchronous = probes
        .async_end
        .as_ref()
        .filter(|a| plan.result.is_some() || a.continuation.is_none());
    let end = match asynchronous {
        Some(a) => Some(a.end),
        None => probes.end,
    };
    if let (Some(end), Some(caught)) = (end, plan.locals.exception) {
        let end = end::EndCall::new(&plan, probes, end, asynchronous, &mut work.calls, cx)?;
        exits::wrap_exits(&mut work, &plan, &end, probes.exception, caught, cx)?;
    }
    if let Some(begin) = probes.begin {
        begin::insert_begin(&mut work, &plan, sig, probes, begin, cx)?;
    }
    let Work {
        body: mut wrapped,
        calls,
        clauses,
        begin_clause,
        ..
    } = work;
    let all = wrapped.clauses_mut();
    all.extend(clauses);
    all.extend(begin_clause);
    let header = wrapped.header_mut();
    header.local_var_sig = Some(local_tok);
    header.init_locals = true;
    wrapped.update_max_stack(|t| {
        calls
            .iter()
            .find(|(c, _)| *c == t)
            .map(|(_, s)| *s)
            .or_else(|| cx.stack_sig(t))
    })?;
    *body = wrapped;
    Ok(())
}

/// The methods and probes [`wrap`] refuses (its "Fails with" list).
fn check(body: &MethodBody, sig: &MethodSig, this: &ThisArg, probes: &Probes) -> Result<(), Error> {
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
    if sig.params.len() + usize::from(sig.has_this()) > 0xFFFF {
        return Err(unsupported("too many parameters"));
    }
    Ok(())
}
