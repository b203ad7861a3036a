//! The begin call, inserted before the original body:
//!
//! ```text
//! try { state = OnMethodBegin(instance, ref args.. [, name]); leave BODY; }
//! catch (Exception) { pop; leave BODY; }
//! ```

use alloc::vec;
use alloc::vec::Vec;

use super::ops::{ldarg, ldarga, ldloca, stloc, Code};
use super::plan::{Generic, Plan};
use super::{unsupported, Probes, Work, WrapContext};
use crate::cil::{ClauseKind, Error, ExceptionClause, MethodSig, OpCode, Operand, StackSig};
use crate::cil::{Token, TypeSig};

/// Inserts the begin call of `begin` (a MemberRef of [`Probes`]) at the
/// start of `work`'s body, for a method of signature `sig`.
pub(super) fn insert_begin<C: WrapContext>(
    work: &mut Work,
    plan: &Plan,
    sig: &MethodSig,
    probes: &Probes,
    begin: Token,
    cx: &mut C,
) -> Result<(), Error> {
    let first = work.first;
    let mut generic_args = vec![plan.target.clone()];
    generic_args.extend(plan.args.iter().map(Generic::arg));
    let spec = cx
        .method_spec(begin, &generic_args)
        .ok_or_else(|| unsupported("no MethodSpec for OnMethodBegin"))?;
    // `wrap` refused more parameters than a u16 counts.
    let n_params = sig.params.len() as u32;
    work.calls.push((
        spec,
        StackSig {
            params: 1 + n_params + u32::from(probes.begin_takes_name),
            has_this: false,
            returns_value: true,
        },
    ));
    let scratch = plan.locals.scratch;
    let mut code: Code = Vec::new();
    if let Some(s) = scratch {
        code.push((OpCode::LDNULL, Operand::None));
        code.push(stloc(s));
    }
    let try_at = code.len();
    code.extend(plan.instance.iter().cloned());
    let first_arg = u16::from(sig.has_this());
    for (i, (p, g)) in sig.params.iter().zip(&plan.args).enumerate() {
        let index = first_arg + i as u16;
        match g {
            Generic::Null => code.push(ldloca(scratch.unwrap_or(0))),
            Generic::Itself(_) if matches!(p.unmodified(), TypeSig::ByRef(_)) => {
                code.push(ldarg(index))
            }
            Generic::Itself(_) => code.push(ldarga(index)),
        }
    }
    if probes.begin_takes_name {
        code.push((OpCode::LDSTR, Operand::Token(probes.method_name)));
    }
    code.push((OpCode::CALL, Operand::Token(spec)));
    code.push(stloc(plan.locals.state));
    code.push((OpCode::LEAVE, Operand::Branch(first)));
    let handler_at = code.len();
    code.push((OpCode::POP, Operand::None));
    code.push((OpCode::LEAVE, Operand::Branch(first)));
    let mut labels = Vec::new();
    for (i, (op, operand)) in code.into_iter().enumerate() {
        labels.push(work.body.insert(i, op, operand)?);
    }
    work.begin_clause = Some(ExceptionClause::new(
        ClauseKind::Catch(probes.exception),
        labels[try_at],
        labels[handler_at],
        labels[handler_at],
        first,
    ));
    Ok(())
}
