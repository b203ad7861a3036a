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

/// The tokens the wrapped body refers to, all valid in the wrapped method's
/// module.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Probes {
    /// `static object Begin(string, object, object[])` (MemberRef).
    pub begin: Token,
    /// `static void End(object, object)` (MemberRef).
    pub end: Token,
    /// `static void EndVoid(object)` (MemberRef).
    pub end_void: Token,
    /// `static void OnException(class System.Exception, object)` (MemberRef).
    pub on_exception: Token,
    /// `System.Exception` (TypeRef), the class the new catch clause catches.
    pub exception: Token,
    /// The user string (`ldstr` token) passed to `Begin` as the method name.
    pub method_name: Token,
}

impl Probes {
    /// The stack effect of a call to one of the probes, `None` for other
    /// tokens.
    pub fn stack_sig(&self, token: Token) -> Option<StackSig> {
        let sig = |params, returns_value| StackSig {
            params,
            has_this: false,
            returns_value,
        };
        if token == self.begin {
            Some(sig(3, true))
        } else if token == self.end || token == self.on_exception {
            Some(sig(2, false))
        } else if token == self.end_void {
            Some(sig(1, false))
        } else {
            None
        }
    }
}

/// What `this` is in the wrapped method.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ThisArg {
    /// A static method: `Begin` gets `null`.
    Static,
    /// An instance method of a reference type: `Begin` gets `this`.
    Reference,
    /// An instance method of a value type: `this` is a managed pointer;
    /// `Begin` gets a boxed copy of the value. The type is the declaring
    /// type as a signature: `ValueType(typedef)`, or a generic value-type
    /// instantiation over the type's own parameters (`VAR 0`, ...).
    Value(TypeSig),
}

/// The metadata the wrapper needs, supplied by the caller (a profiler
/// answers these with `IMetaDataEmit`; see `corprof::facade::MetadataEmit`).
pub trait WrapContext {
    /// A token usable with `box` and `ldobj` for `ty`: the TypeDef or
    /// TypeRef of a `VALUETYPE`, or a TypeSpec of the signature (a
    /// primitive, a generic parameter, a generic instantiation). `None`
    /// fails the wrap.
    fn type_token(&mut self, ty: &TypeSig) -> Option<Token>;

    /// The StandAloneSig token of the extended local signature.
    fn local_sig_token(&mut self, locals: &LocalVarSig) -> Option<Token>;

    /// The stack effect of a call site of the original body (like
    /// `MetadataImport::stack_sig`).
    fn stack_sig(&mut self, token: Token) -> Option<StackSig>;

    /// Whether a value of `ty` (a value type) may be boxed: `false` for
    /// by-ref-like types (`Span<T>`, `ref struct`s), which the wrapper
    /// then passes to the probes as `null` (the runtime refuses to box
    /// them: `InvalidProgramException`). The default says yes.
    fn can_box(&mut self, ty: &TypeSig) -> bool {
        let _ = ty;
        true
    }
}

/// How a value reaches an `object` parameter of a probe.
enum AsObject {
    /// Already an object reference.
    Reference,
    /// `box` with this type.
    Box(TypeSig),
    /// Cannot be boxed (pointers, `TypedReference`): passed as `null`.
    Null,
}

fn as_object(ty: &TypeSig) -> AsObject {
    let ty = ty.unmodified();
    if ty.is_reference_type() {
        return AsObject::Reference;
    }
    match ty {
        TypeSig::Ptr(_)
        | TypeSig::FnPtr(_)
        | TypeSig::TypedByRef
        | TypeSig::ByRef(_)
        | TypeSig::Pinned(_)
        | TypeSig::Void => AsObject::Null,
        other => AsObject::Box(other.clone()),
    }
}

fn unsupported(s: &'static str) -> Error {
    Error::new(0, ErrorKind::Unsupported(s))
}

/// Builds the instruction sequences of the wrapper.
struct Emitter<'a, C: WrapContext> {
    body: &'a mut MethodBody,
    cx: &'a mut C,
}

impl<C: WrapContext> Emitter<'_, C> {
    /// [`as_object`], with the context's say on boxing.
    fn classify(&mut self, ty: &TypeSig) -> AsObject {
        match as_object(ty) {
            AsObject::Box(t) if !self.cx.can_box(&t) => AsObject::Null,
            other => other,
        }
    }

    fn token_of(&mut self, ty: &TypeSig) -> Result<Token, Error> {
        match ty.unmodified() {
            TypeSig::ValueType(t) | TypeSig::Class(t) => Ok(*t),
            other => self
                .cx
                .type_token(other)
                .ok_or_else(|| unsupported("no type token for a type to box")),
        }
    }

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

    /// Appends the code that turns the value on the stack, of type `ty`,
    /// into an object (`box`, nothing, or `pop; ldnull`).
    fn push_as_object(
        &mut self,
        out: &mut Vec<(OpCode, Operand)>,
        ty: &TypeSig,
    ) -> Result<(), Error> {
        match self.classify(ty) {
            AsObject::Reference => {}
            AsObject::Box(t) => {
                let tok = self.token_of(&t)?;
                out.push((OpCode::BOX, Operand::Token(tok)));
            }
            AsObject::Null => {
                out.push((OpCode::POP, Operand::None));
                out.push((OpCode::LDNULL, Operand::None));
            }
        }
        Ok(())
    }

    /// Code that pushes argument `index` (of type `ty`) as an object; a
    /// by-ref argument is read through.
    fn arg_as_object(
        &mut self,
        out: &mut Vec<(OpCode, Operand)>,
        index: u16,
        ty: &TypeSig,
    ) -> Result<(), Error> {
        let ty = ty.unmodified();
        match ty {
            TypeSig::ByRef(inner) => {
                let inner = inner.unmodified();
                match self.classify(inner) {
                    AsObject::Null => out.push((OpCode::LDNULL, Operand::None)),
                    AsObject::Reference => {
                        out.push(Self::ldarg(index));
                        out.push((OpCode::LDIND_REF, Operand::None));
                    }
                    AsObject::Box(t) => {
                        let tok = self.token_of(&t)?;
                        out.push(Self::ldarg(index));
                        out.push((OpCode::LDOBJ, Operand::Token(tok)));
                        out.push((OpCode::BOX, Operand::Token(tok)));
                    }
                }
            }
            TypeSig::Ptr(_) | TypeSig::FnPtr(_) | TypeSig::TypedByRef => {
                out.push((OpCode::LDNULL, Operand::None))
            }
            _ => match self.classify(ty) {
                AsObject::Null => out.push((OpCode::LDNULL, Operand::None)),
                _ => {
                    out.push(Self::ldarg(index));
                    self.push_as_object(out, ty)?;
                }
            },
        }
        Ok(())
    }

    fn append(&mut self, code: &[(OpCode, Operand)]) -> Result<Label, Error> {
        let mut first = None;
        for (op, operand) in code {
            let l = self.body.push(*op, operand.clone())?;
            first.get_or_insert(l);
        }
        first.ok_or_else(|| Error::new(0, ErrorKind::UnknownLabel))
    }
}

/// Method wrapping: surround a method body with calls to probe methods
/// (CallTarget-style instrumentation, as APM agents do).
///
/// [`wrap`] turns a decoded body into the equivalent of
///
/// ```text
/// object state = Begin("Type::Method", this-or-null, new object[] { args... });
/// try {
///     try {
///         original body; every `ret` becomes `stloc result; leave AFTER`
///     } catch (System.Exception e) {
///         OnException(e, state);
///         rethrow;
///     }
/// } finally {
///     End(state, (object)result);   // or EndVoid(state) for a void method
/// }
/// AFTER: return result;
/// ```
///
/// The probes are static methods of a helper assembly, referenced through
/// the tokens in [`Probes`]; their signatures are fixed:
///
/// | probe | signature |
/// |---|---|
/// | `Begin` | `static object (string name, object this, object[] args)` |
/// | `End` | `static void (object state, object result)` |
/// | `EndVoid` | `static void (object state)` |
/// | `OnException` | `static void (class System.Exception e, object state)` |
///
/// `End` runs in a `finally`, so it also runs after `OnException`; the helper
/// tells the two apart through its state object.
///
/// Pure `core` + `alloc`: the metadata the wrapper needs (type tokens for
/// `box`, the token of the extended local signature, call-site stack
/// effects) comes from a [`WrapContext`] the caller implements.
/// `corprof::instrument::CallTarget` is the implementation over a module's
/// metadata.
///
/// ```
/// use corprof::cil::{LocalVarSig, MethodSig, TypeSig};
/// use corprof::cil::{wrap, Probes, ThisArg, WrapContext};
/// use corprof::cil::{MethodBody, StackSig, Token};
///
/// struct Cx;
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
/// }
/// let probes = Probes {
///     begin: Token(0x0A00_0001),
///     end: Token(0x0A00_0002),
///     end_void: Token(0x0A00_0003),
///     on_exception: Token(0x0A00_0004),
///     exception: Token(0x0100_0005),
///     method_name: Token(0x7000_0001),
/// };
/// // static int F() => 41;
/// let mut body = MethodBody::decode(&[0x0E, 0x1F, 41, 0x2A])?;
/// let sig = MethodSig::static_method(TypeSig::I4, vec![]);
/// let locals = LocalVarSig { locals: vec![] };
/// wrap(&mut body, &sig, &ThisArg::Static, &locals, &probes, &mut Cx)?;
/// assert_eq!(body.clauses().len(), 2); // the catch, then the finally
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
/// header names none): the wrapper appends an `object` (the probe state)
/// and, for a non-void method, a local of the return type, asks `cx` for
/// the token of the result and stores it in the header, with `InitLocals`
/// set. Max stack is recomputed (call sites of the original body through
/// [`WrapContext::stack_sig`]).
///
/// Handles static and instance methods (value-type `this` is boxed),
/// void and non-void returns (boxed for `End` when a value type, returned
/// unboxed), by-ref parameters (`ref`/`out`: the value they point to is
/// passed), generic methods and methods of generic types (`box !!0`,
/// `box !0` through TypeSpecs), existing exception clauses (kept inside the
/// new ones, listed first as ECMA-335 II.19 requires), bodies ending in
/// `throw`, and `tail.` calls (the prefix becomes `nop`: no tail call may
/// leave a protected region, III.2.4).
///
/// Fails with [`ErrorKind::Unsupported`] (and leaves `body` as it was) for:
/// vararg and unmanaged calling conventions, `EXPLICITTHIS`, by-ref and
/// `TypedReference` returns, `jmp`, an empty body, and when `cx` answers
/// `None`; with [`ErrorKind::Unencodable`] when the locals would pass
/// 65535; with the codec's errors for IL that does not analyse. Pointer, `TypedReference` and by-ref-like arguments (see
/// [`WrapContext::can_box`]) are passed to `Begin` as `null`, and such
/// results to `End`.
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

    // Work on a copy: `body` stays untouched on failure.
    let mut work = body.clone();
    let mut new_locals = locals.clone();
    let mut added = vec![TypeSig::Object];
    if returns {
        added.push(sig.ret.clone());
    }
    let state = new_locals.push_locals(added)?;
    let result = state + 1;
    let local_tok = cx
        .local_sig_token(&new_locals)
        .ok_or_else(|| unsupported("no token for the extended local signature"))?;

    let original_first = work.instructions()[0].label();
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

    let mut em = Emitter {
        body: &mut work,
        cx: &mut *cx,
    };
    type Code = Vec<(OpCode, Operand)>;
    // catch (Exception e) { OnException(e, state); rethrow; }
    let catch_start = em.append(&[
        Emitter::<C>::ldloc(state),
        (OpCode::CALL, Operand::Token(probes.on_exception)),
        (OpCode::RETHROW, Operand::None),
    ])?;
    // finally { End(state, result) / EndVoid(state); }
    let mut fin: Code = vec![Emitter::<C>::ldloc(state)];
    if returns {
        fin.push(Emitter::<C>::ldloc(result));
        em.push_as_object(&mut fin, &sig.ret)?;
        fin.push((OpCode::CALL, Operand::Token(probes.end)));
    } else {
        fin.push((OpCode::CALL, Operand::Token(probes.end_void)));
    }
    fin.push((OpCode::ENDFINALLY, Operand::None));
    let finally_start = em.append(&fin)?;
    // AFTER: return result;
    let mut after: Code = Vec::new();
    if returns {
        after.push(Emitter::<C>::ldloc(result));
    }
    after.push((OpCode::RET, Operand::None));
    let after_start = em.append(&after)?;

    // Prologue: state = Begin(name, this, args).
    let mut pro: Code = vec![(OpCode::LDSTR, Operand::Token(probes.method_name))];
    match this {
        ThisArg::Static => pro.push((OpCode::LDNULL, Operand::None)),
        ThisArg::Reference => pro.push(Emitter::<C>::ldarg(0)),
        ThisArg::Value(ty) if !em.cx.can_box(ty) => pro.push((OpCode::LDNULL, Operand::None)),
        ThisArg::Value(ty) => {
            let tok = em.token_of(ty)?;
            pro.push(Emitter::<C>::ldarg(0));
            pro.push((OpCode::LDOBJ, Operand::Token(tok)));
            pro.push((OpCode::BOX, Operand::Token(tok)));
        }
    }
    let object_tok = em.token_of(&TypeSig::Object)?;
    pro.push(OpCode::ldc_i4(i32::from(n_params)));
    pro.push((OpCode::NEWARR, Operand::Token(object_tok)));
    let first_arg = u16::from(sig.has_this());
    for (i, p) in sig.params.iter().enumerate() {
        pro.push((OpCode::DUP, Operand::None));
        pro.push(OpCode::ldc_i4(i as i32));
        em.arg_as_object(&mut pro, first_arg + i as u16, p)?;
        pro.push((OpCode::STELEM_REF, Operand::None));
    }
    pro.push((OpCode::CALL, Operand::Token(probes.begin)));
    pro.push(Emitter::<C>::stloc(state));
    for (i, (op, operand)) in pro.into_iter().enumerate() {
        work.insert(i, op, operand)?;
    }

    // Every `ret` of the original body: `stloc result; leave AFTER`.
    for r in rets {
        if returns {
            let (op, operand) = Emitter::<C>::stloc(result);
            work.replace(r, op, operand)?;
            work.insert_after(r, OpCode::LEAVE, Operand::Branch(after_start))?;
        } else {
            work.replace(r, OpCode::LEAVE, Operand::Branch(after_start))?;
        }
    }
    for t in tails {
        work.replace(t, OpCode::NOP, Operand::None)?;
    }
    // Clauses that ended at the end of the code now end where the new
    // handlers begin.
    for c in work.clauses_mut().iter_mut() {
        for l in [&mut c.try_end, &mut c.handler_end] {
            if *l == Label::END {
                *l = catch_start;
            }
        }
    }
    let clauses = work.clauses_mut();
    clauses.push(ExceptionClause::new(
        ClauseKind::Catch(probes.exception),
        original_first,
        catch_start,
        catch_start,
        finally_start,
    ));
    clauses.push(ExceptionClause::new(
        ClauseKind::Finally,
        original_first,
        finally_start,
        finally_start,
        after_start,
    ));
    let header = work.header_mut();
    header.local_var_sig = Some(local_tok);
    header.init_locals = true;
    work.update_max_stack(|t| probes.stack_sig(t).or_else(|| cx.stack_sig(t)))?;
    *body = work;
    Ok(())
}
