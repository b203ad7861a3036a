//! Max-stack computation by stack-effect analysis over the control flow.

use alloc::vec;
use alloc::vec::Vec;

use super::body::MethodBody;
use super::eh::ClauseKind;
use super::error::{Error, ErrorKind};
use super::instruction::{Label, Operand, Token};
use super::opcode::{FlowControl, OpCode, StackEffect};

/// What stack analysis needs to know about a call site's signature: the
/// number of declared parameters (not counting `this`), whether an implicit
/// `this` is passed, and whether a value is returned.
///
/// Get one from a decoded signature with
/// [`MethodSig::stack_sig`](super::MethodSig::stack_sig).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct StackSig {
    /// Declared parameters, including vararg extras at a call site.
    pub params: u32,
    /// An implicit `this` is passed (HASTHIS without EXPLICITTHIS).
    pub has_this: bool,
    /// The method returns a value (return type other than `void`).
    pub returns_value: bool,
}

fn fixed(e: StackEffect) -> u32 {
    match e {
        StackEffect::Fixed(n) => u32::from(n),
        StackEffect::Varies => 0,
    }
}

impl MethodBody {
    /// Computes the maximum evaluation-stack depth by following every path
    /// from the entry point and from every handler and filter start.
    ///
    /// `resolve` maps the token of a `call`, `callvirt`, `newobj` (a method)
    /// or `calli` (a StandAloneSig) to its [`StackSig`]; returning `None`
    /// makes the analysis fail with [`ErrorKind::UnresolvedToken`].
    ///
    /// Fails on inconsistent IL: stack underflow, or different depths where
    /// paths join.
    pub fn compute_max_stack(
        &self,
        mut resolve: impl FnMut(Token) -> Option<StackSig>,
    ) -> Result<u16, Error> {
        let layout = self.plan()?;
        let n = self.instructions().len();
        let at = |i: usize| layout.offsets.get(i).copied().unwrap_or(layout.code_size) as usize;
        let index_of = |l: Label| -> Option<usize> {
            if l == Label::END {
                return Some(n);
            }
            let i = *layout.index.get(l.0 as usize)?;
            (i != u32::MAX).then_some(i as usize)
        };
        const UNSEEN: u32 = u32::MAX;
        let mut depth_at = vec![UNSEEN; n + 1];
        let mut work: Vec<usize> = Vec::new();
        let mut max: u32 = 0;
        let seed = |i: usize, d: u32, depth_at: &mut Vec<u32>, work: &mut Vec<usize>| {
            if i >= n {
                return Ok(());
            }
            if depth_at[i] == UNSEEN {
                depth_at[i] = d;
                work.push(i);
                Ok(())
            } else if depth_at[i] != d {
                Err(Error::new(
                    at(i),
                    ErrorKind::InvalidStack("stack depths differ where paths join"),
                ))
            } else {
                Ok(())
            }
        };
        if n > 0 {
            seed(0, 0, &mut depth_at, &mut work)?;
        }
        for c in self.clauses() {
            let (h, d) = match c.kind {
                ClauseKind::Catch(_) | ClauseKind::Filter(_) => (c.handler_start, 1),
                ClauseKind::Finally | ClauseKind::Fault => (c.handler_start, 0),
            };
            let hi = index_of(h).ok_or_else(|| Error::new(0, ErrorKind::UnknownLabel))?;
            seed(hi, d, &mut depth_at, &mut work)?;
            max = max.max(d);
            if let ClauseKind::Filter(fl) = c.kind {
                let fi = index_of(fl).ok_or_else(|| Error::new(0, ErrorKind::UnknownLabel))?;
                seed(fi, 1, &mut depth_at, &mut work)?;
            }
        }
        while let Some(i) = work.pop() {
            let ins = &self.instructions()[i];
            let op = layout.opcodes[i];
            let info = op.info();
            let d = depth_at[i];
            let (pops, pushes) = match op {
                OpCode::CALL | OpCode::CALLVIRT | OpCode::NEWOBJ | OpCode::CALLI => {
                    let Operand::Token(t) = ins.operand else {
                        return Err(Error::new(at(i), ErrorKind::OperandMismatch("token")));
                    };
                    let s = resolve(t)
                        .ok_or_else(|| Error::new(at(i), ErrorKind::UnresolvedToken(t)))?;
                    let args = s.params.saturating_add(u32::from(s.has_this));
                    match op {
                        OpCode::NEWOBJ => (s.params, 1),
                        OpCode::CALLI => (args.saturating_add(1), u32::from(s.returns_value)),
                        _ => (args, u32::from(s.returns_value)),
                    }
                }
                OpCode::RET => (0, 0),
                _ => (fixed(info.pops), fixed(info.pushes)),
            };
            if d < pops {
                return Err(Error::new(
                    at(i),
                    ErrorKind::InvalidStack("stack underflow"),
                ));
            }
            let after = d - pops + pushes;
            max = max.max(after).max(d);
            let next = i + 1;
            match info.flow {
                FlowControl::Return | FlowControl::Throw => {}
                _ if op == OpCode::JMP => {}
                FlowControl::Branch => {
                    let d2 = if op == OpCode::LEAVE || op == OpCode::LEAVE_S {
                        0
                    } else {
                        after
                    };
                    for &t in ins.operand.targets() {
                        let ti = index_of(t)
                            .ok_or_else(|| Error::new(at(i), ErrorKind::UnknownLabel))?;
                        seed(ti, d2, &mut depth_at, &mut work)?;
                    }
                }
                FlowControl::CondBranch => {
                    for &t in ins.operand.targets() {
                        let ti = index_of(t)
                            .ok_or_else(|| Error::new(at(i), ErrorKind::UnknownLabel))?;
                        seed(ti, after, &mut depth_at, &mut work)?;
                    }
                    seed(next, after, &mut depth_at, &mut work)?;
                }
                _ => seed(next, after, &mut depth_at, &mut work)?,
            }
        }
        u16::try_from(max)
            .map_err(|_| Error::new(0, ErrorKind::InvalidStack("max stack over 65535")))
    }

    /// Computes the max stack (see [`compute_max_stack`](MethodBody::compute_max_stack))
    /// and stores it in the header; returns it.
    pub fn update_max_stack(
        &mut self,
        resolve: impl FnMut(Token) -> Option<StackSig>,
    ) -> Result<u16, Error> {
        let m = self.compute_max_stack(resolve)?;
        self.header_mut().max_stack = m;
        Ok(m)
    }
}
