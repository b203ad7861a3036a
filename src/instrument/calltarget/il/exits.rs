//! The exits of the wrapped body: the handler that calls the end on an
//! exception and rethrows, the normal path's end call, the return, every
//! `ret` turned into a `leave` to the normal end, and the new clauses.

use alloc::vec::Vec;

use super::end::EndCall;
use super::ops::{append, ldloc, stloc, Code};
use super::plan::Plan;
use super::{Work, WrapContext};
use crate::cil::{ClauseKind, Error, ExceptionClause, Label, OpCode, Operand, Token};

/// Surrounds the original body (already in `work`) with the end calls:
///
/// ```text
/// try { original body; `ret` -> `stloc result; leave NORMAL` }
/// catch (Exception e) {
///     exception = e;
///     try { End(instance, result, e, state); } catch { }
///     rethrow;
/// }
/// NORMAL: try { result = End(instance, result, null, state)
///     .GetReturnValue(); } catch { }
/// DONE: return result;
/// ```
pub(super) fn wrap_exits<C: WrapContext>(
    work: &mut Work,
    plan: &Plan,
    end: &EndCall<'_>,
    exception: Token,
    caught: u16,
    cx: &mut C,
) -> Result<(), Error> {
    let first = work.first;
    let body = &mut work.body;
    let labels_of = |body: &crate::cil::MethodBody, op: OpCode| -> Vec<Label> {
        body.instructions()
            .iter()
            .filter(|i| i.opcode() == op)
            .map(|i| i.label())
            .collect()
    };
    let rets = labels_of(body, OpCode::RET);
    let tails = labels_of(body, OpCode::TAIL);
    // Each handler ends in `leave`, first to `first`, patched below once
    // the targets exist.
    let guard: Code = Vec::from([
        (OpCode::POP, Operand::None),
        (OpCode::LEAVE, Operand::Branch(first)),
    ]);
    let catch = body.push(stloc(caught).0, stloc(caught).1)?;
    let failed = append(body, &end.code(plan, ldloc(caught), false, first))?;
    let failed_guard = append(body, &guard)?;
    let rethrow = body.push(OpCode::RETHROW, Operand::None)?;
    let normal_code = end.normal(plan, first, &mut work.calls, cx)?;
    let body = &mut work.body;
    let normal = append(body, &normal_code)?;
    let normal_guard = append(body, &guard)?;
    let mut done: Code = Vec::new();
    if let Some(r) = plan.locals.result {
        done.push(ldloc(r));
    }
    done.push((OpCode::RET, Operand::None));
    let done = append(body, &done)?[0];
    for (code, to) in [
        (&failed, rethrow),
        (&failed_guard, rethrow),
        (&normal, done),
        (&normal_guard, done),
    ] {
        body.replace(code[code.len() - 1], OpCode::LEAVE, Operand::Branch(to))?;
    }

    for r in rets {
        if let Some(res) = plan.locals.result {
            let (op, operand) = stloc(res);
            body.replace(r, op, operand)?;
            body.insert_after(r, OpCode::LEAVE, Operand::Branch(normal[0]))?;
        } else {
            body.replace(r, OpCode::LEAVE, Operand::Branch(normal[0]))?;
        }
    }
    // No tail call may leave a protected region (III.2.4).
    for t in tails {
        body.replace(t, OpCode::NOP, Operand::None)?;
    }
    // Clauses that ended at the end of the code now end where the new
    // handler begins.
    for c in body.clauses_mut().iter_mut() {
        for l in [&mut c.try_end, &mut c.handler_end] {
            if *l == Label::END {
                *l = catch;
            }
        }
    }
    // Inner before outer (II.19): the guard inside the catch handler,
    // then the catch; the normal path's guard.
    let kind = ClauseKind::Catch(exception);
    work.clauses.extend([
        ExceptionClause::new(kind, failed[0], failed_guard[0], failed_guard[0], rethrow),
        ExceptionClause::new(kind, first, catch, catch, normal[0]),
        ExceptionClause::new(kind, normal[0], normal_guard[0], normal_guard[0], done),
    ]);
    Ok(())
}
