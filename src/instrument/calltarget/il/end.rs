//! The end call: `OnMethodEnd<TTarget[, TReturn]>` (or `OnAsyncMethodEnd`
//! through `CallTargetAsync`'s continuation) and the code that calls it on
//! the normal and the exceptional path.

use alloc::vec;
use alloc::vec::Vec;

use super::ops::{ldloc, ldloca, stloc, Code};
use super::plan::{Generic, Plan};
use super::{unsupported, AsyncProbes, Probes, WrapContext};
use crate::cil::{Error, Label, MethodSig, OpCode, Operand, StackSig, Token, TypeSig};

/// The references of the end call, made for one method.
pub(super) struct EndCall<'a> {
    /// The MethodSpec of `OnMethodEnd` (or `OnAsyncMethodEnd`).
    spec: Token,
    /// `CallTargetReturn<TReturn>::GetReturnValue`, for a result the
    /// integration may replace.
    get_return_value: Option<Token>,
    /// The state is passed by reference.
    state_by_ref: bool,
    /// The async end, when the task's completion calls it.
    asynchronous: Option<&'a AsyncProbes>,
}

impl<'a> EndCall<'a> {
    /// Makes the end call's references for `end`; each call's stack effect
    /// goes to `calls`.
    pub(super) fn new<C: WrapContext>(
        plan: &Plan,
        probes: &'a Probes,
        end: Token,
        asynchronous: Option<&'a AsyncProbes>,
        calls: &mut Vec<(Token, StackSig)>,
        cx: &mut C,
    ) -> Result<EndCall<'a>, Error> {
        let mut generic_args = vec![plan.target.clone()];
        match (asynchronous, &plan.result) {
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
                params: 3 + u32::from(asynchronous.is_some() || plan.result.is_some()),
                has_this: false,
                returns_value: true,
            },
        ));
        let get_return_value = match (&plan.result, plan.locals.returned) {
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
        Ok(EndCall {
            spec,
            get_return_value,
            state_by_ref,
            asynchronous,
        })
    }

    /// `OnMethodEnd(instance, [result,] exception, state)`, its answer the
    /// new result on the normal path (`replace`), dropped on the
    /// exceptional one; then `leave to` (the caller patches the target).
    pub(super) fn code(
        &self,
        plan: &Plan,
        exception: (OpCode, Operand),
        replace: bool,
        to: Label,
    ) -> Code {
        let locals = &plan.locals;
        let mut code: Code = plan.instance.clone();
        match (locals.async_default, &plan.result, locals.result) {
            // OnAsyncMethodEnd before any task: default(TResult).
            (Some(d), _, _) => code.push(ldloc(d)),
            (None, Some(Generic::Itself(_)), Some(r)) => code.push(ldloc(r)),
            (None, Some(Generic::Null), _) => code.push((OpCode::LDNULL, Operand::None)),
            _ => {}
        }
        code.push(exception);
        code.push(if self.state_by_ref {
            ldloca(locals.state)
        } else {
            ldloc(locals.state)
        });
        code.push((OpCode::CALL, Operand::Token(self.spec)));
        match (self.get_return_value, locals.result, locals.returned) {
            (Some(get), Some(r), Some(rv)) if replace => {
                code.push(stloc(rv));
                code.push(ldloca(rv));
                code.push((OpCode::CALL, Operand::Token(get)));
                code.push(stloc(r));
            }
            _ => code.push((OpCode::POP, Operand::None)),
        }
        code.push((OpCode::LEAVE, Operand::Branch(to)));
        code
    }

    /// The normal path's end: the end call with no exception; for a
    /// runtime-async method
    ///
    /// ```text
    /// result = OnAsyncMethodEnd<TTarget, TResult>(instance, result, null, in state);
    /// ```
    ///
    /// (`Task`, `ValueTask`: `default(CallTargetReturn)` in, the answer
    /// dropped); for another async method
    ///
    /// ```text
    /// result = CallTargetAsync.Continue..(instance, result, state,
    ///     new AsyncMethodEnd<TTarget, TResult>(OnAsyncMethodEnd<TTarget, TResult>));
    /// ```
    ///
    /// then `leave to`.
    pub(super) fn normal<C: WrapContext>(
        &self,
        plan: &Plan,
        to: Label,
        calls: &mut Vec<(Token, StackSig)>,
        cx: &mut C,
    ) -> Result<Code, Error> {
        let Some(a) = self.asynchronous else {
            return Ok(self.code(plan, (OpCode::LDNULL, Operand::None), true, to));
        };
        let locals = &plan.locals;
        let Some(c) = &a.continuation else {
            // Runtime async: the awaited value (or the CallTargetReturn) in,
            // the answer the result.
            let mut code: Code = plan.instance.clone();
            match (locals.result, locals.async_default) {
                (Some(r), _) => code.push(ldloc(r)),
                (None, Some(d)) => code.push(ldloc(d)),
                (None, None) => return Err(unsupported("no local for OnAsyncMethodEnd's result")),
            }
            code.push((OpCode::LDNULL, Operand::None));
            code.push(if self.state_by_ref {
                ldloca(locals.state)
            } else {
                ldloc(locals.state)
            });
            code.push((OpCode::CALL, Operand::Token(self.spec)));
            code.push(match locals.result {
                Some(r) => stloc(r),
                None => (OpCode::POP, Operand::None),
            });
            code.push((OpCode::LEAVE, Operand::Branch(to)));
            return Ok(code);
        };
        let Some(r) = locals.result else {
            return Err(unsupported(
                "a task continued for a method that returns none",
            ));
        };
        let pair = vec![plan.target.clone(), a.result.clone()];
        let delegate = cx
            .type_token(&TypeSig::generic_class(c.delegate, pair.clone()))
            .ok_or_else(|| unsupported("no TypeSpec for AsyncMethodEnd<,>"))?;
        let ctor = cx
            .member_ref(
                delegate,
                ".ctor",
                &MethodSig::instance_method(TypeSig::Void, vec![TypeSig::Object, TypeSig::I]),
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
        let continuation_args = if c.generic_result {
            pair
        } else {
            vec![plan.target.clone()]
        };
        let continuation = cx
            .method_spec(c.method, &continuation_args)
            .ok_or_else(|| unsupported("no MethodSpec for CallTargetAsync"))?;
        calls.push((
            continuation,
            StackSig {
                params: 4,
                has_this: false,
                returns_value: true,
            },
        ));
        let mut code: Code = plan.instance.clone();
        code.push(ldloc(r));
        code.push(ldloc(plan.locals.state));
        code.push((OpCode::LDNULL, Operand::None));
        code.push((OpCode::LDFTN, Operand::Token(self.spec)));
        code.push((OpCode::NEWOBJ, Operand::Token(ctor)));
        code.push((OpCode::CALL, Operand::Token(continuation)));
        code.push(stloc(r));
        code.push((OpCode::LEAVE, Operand::Branch(to)));
        Ok(code)
    }
}
