//! The IL probes: a counter increment at each sequence point and on each
//! arm of each conditional branch, written with the crate's CIL codec.
//!
//! A probe is `ldc.i8 <address>; conv.u; dup; ldind.i4; ldc.i4.1; add;
//! stind.i4`: it adds one to a native `u32` counter, leaves the evaluation
//! stack as it found it (so it may stand where the stack is not empty, as
//! at the start of a `catch` handler) and calls nothing. The increment is
//! not atomic: on several threads at once counts may come out low (never a
//! hit reported as a miss once one increment lands).

use alloc::vec::Vec;

use crate::cil::{Error, FlowControl, Instruction, Label, MethodBody, OpCode, Operand};

/// Where a counter goes: what the report says about it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Counter {
    /// The method's entry: how often it was called (a probe before the
    /// first instruction that no branch leads to).
    Entry,
    /// The sequence point at this IL offset (of the original body).
    SequencePoint {
        /// Its IL offset.
        il_offset: u32,
    },
    /// One arm of the conditional branch at this IL offset: arm 0 is the
    /// fall-through (the condition did not branch; a `switch`'s default),
    /// arm `k >= 1` the k-th target (1 for `brtrue` and the like).
    BranchArm {
        /// The branch instruction's IL offset (original body).
        il_offset: u32,
        /// The arm.
        arm: u32,
    },
}

/// The counters a method gets, in the order of their slots.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ProbePlan {
    /// One entry per counter slot.
    pub counters: Vec<Counter>,
}

/// The local an instruction loads (`ldloc*`) or stores (`stloc*`).
fn local(ins: &Instruction, load: bool) -> Option<u16> {
    let op = ins.opcode();
    let (short, fixed0, long) = if load {
        (OpCode::LDLOC_S, OpCode::LDLOC_0, OpCode::LDLOC)
    } else {
        (OpCode::STLOC_S, OpCode::STLOC_0, OpCode::STLOC)
    };
    if op == short || op == long {
        return match ins.operand() {
            Operand::Var(v) => Some(*v),
            _ => None,
        };
    }
    let n = op.value().wrapping_sub(fixed0.value());
    (n < 4).then_some(n)
}

/// Whether the conditional branch at `index` is one the report shows: it
/// follows a visible sequence point (the last point before it), or it is
/// the test of Roslyn's debug-build pattern `stloc V` / hidden point /
/// `ldloc V` / branch (the condition computed under the statement's
/// visible point, kept in a temporary, tested behind a hidden one).
/// Branches behind any other hidden point (state machine dispatch,
/// `await`'s completion check, a `foreach`'s `Dispose` test) and the
/// delegate cache test `ldsfld` / `dup` / `brtrue` of a lambda are the
/// compiler's, not the user's, and are left out.
fn user_branch(body: &MethodBody, index: usize, visible: &[u32], hidden: &[u32]) -> bool {
    let ins = body.instructions();
    let offset = ins[index].offset();
    let v = visible.iter().rev().find(|&&o| o <= offset);
    let h = hidden.iter().rev().find(|&&o| o <= offset);
    let Some(&v) = v else { return false };
    if index >= 2
        && ins[index - 1].opcode() == OpCode::DUP
        && ins[index - 2].opcode() == OpCode::LDSFLD
    {
        return false;
    }
    match h {
        Some(&h) if h > v => {
            // stloc V; <hidden> ldloc V; branch
            index >= 2
                && ins[index - 1].offset() == h
                && local(&ins[index - 1], true).is_some()
                && local(&ins[index - 1], true) == local(&ins[index - 2], false)
        }
        _ => true,
    }
}

/// Plans the probes of `body`: one counter per visible sequence point
/// whose offset starts an instruction, and, with `branches`, one per arm
/// of each conditional branch (`brtrue`, `beq`, ..., `switch`) of the
/// user's code (see `user_branch`).
///
/// `visible` and `hidden` are IL offsets, each sorted ascending.
pub fn plan(body: &MethodBody, visible: &[u32], hidden: &[u32], branches: bool) -> ProbePlan {
    let mut counters = Vec::new();
    let starts: Vec<u32> = body.instructions().iter().map(|i| i.offset()).collect();
    for &offset in visible {
        if starts.binary_search(&offset).is_ok() {
            counters.push(Counter::SequencePoint { il_offset: offset });
        }
    }
    if branches {
        let count = body.instructions().len();
        for (index, ins) in body.instructions().iter().enumerate() {
            if ins.opcode().info().flow != FlowControl::CondBranch || index + 1 == count {
                continue;
            }
            if !user_branch(body, index, visible, hidden) {
                continue;
            }
            let arms = match ins.operand() {
                Operand::Switch(targets) => targets.len() as u32 + 1,
                Operand::Branch(_) => 2,
                _ => continue,
            };
            for arm in 0..arms {
                counters.push(Counter::BranchArm {
                    il_offset: ins.offset(),
                    arm,
                });
            }
        }
    }
    counters.push(Counter::Entry);
    ProbePlan { counters }
}

/// The seven instructions of one probe, inserted before index `at`;
/// returns the label of the first.
fn insert_probe(body: &mut MethodBody, at: usize, address: u64) -> Result<Label, Error> {
    let first = body.insert(at, OpCode::LDC_I8, Operand::I64(address as i64))?;
    let rest = [
        OpCode::CONV_U,
        OpCode::DUP,
        OpCode::LDIND_I4,
        OpCode::LDC_I4_1,
        OpCode::ADD,
        OpCode::STIND_I4,
    ];
    for (n, opcode) in rest.into_iter().enumerate() {
        body.insert(at + 1 + n, opcode, Operand::None)?;
    }
    Ok(first)
}

/// The number of instructions [`insert_probe`] adds.
const PROBE_LEN: usize = 7;

/// Inserts the probes of `plan` into `body`; counter slot `n` is the `u32`
/// at `base + 4 * n`. Max stack is left to the caller
/// ([`MethodBody::update_max_stack`]).
///
/// Branch arms first: after a conditional branch come the fall-through
/// probe and a `br` to the next instruction, then, for each target, a
/// probe and a `br` to it; the branch is sent to those. Sequence points
/// next: a probe before the instruction, and everything that pointed at
/// the instruction (branches, switch targets, exception clause boundaries)
/// points at the probe, so a jump to a line counts it.
pub fn apply(body: &mut MethodBody, plan: &ProbePlan, base: u64) -> Result<(), Error> {
    let address = |slot: usize| base + 4 * slot as u64;
    let label_at = |body: &MethodBody, offset: u32| {
        body.instructions()
            .iter()
            .find(|i| i.offset() == offset)
            .map(|i| i.label())
    };
    // Labels of the original instructions, before any insertion.
    let mut branch_slots: Vec<(Label, usize)> = Vec::new();
    let mut points: Vec<(Label, usize)> = Vec::new();
    let mut entry = None;
    for (slot, counter) in plan.counters.iter().enumerate() {
        match *counter {
            Counter::SequencePoint { il_offset } => {
                if let Some(label) = label_at(body, il_offset) {
                    points.push((label, slot));
                }
            }
            Counter::BranchArm { il_offset, arm: 0 } => {
                if let Some(label) = label_at(body, il_offset) {
                    branch_slots.push((label, slot));
                }
            }
            Counter::BranchArm { .. } => {}
            Counter::Entry => entry = Some(slot),
        }
    }
    for (label, first_slot) in branch_slots {
        let Some(index) = body.position(label) else {
            continue;
        };
        let Some(next) = body.instructions().get(index + 1).map(|i| i.label()) else {
            continue;
        };
        let ins = &body.instructions()[index];
        let (opcode, targets) = match ins.operand() {
            Operand::Branch(target) => (ins.opcode(), alloc::vec![*target]),
            Operand::Switch(targets) => (ins.opcode(), targets.clone()),
            _ => continue,
        };
        let mut at = index + 1;
        insert_probe(body, at, address(first_slot))?;
        at += PROBE_LEN;
        body.insert(at, OpCode::BR_S, Operand::Branch(next))?;
        at += 1;
        let mut new_targets = Vec::with_capacity(targets.len());
        for (k, target) in targets.into_iter().enumerate() {
            let first = insert_probe(body, at, address(first_slot + 1 + k))?;
            at += PROBE_LEN;
            body.insert(at, OpCode::BR_S, Operand::Branch(target))?;
            at += 1;
            new_targets.push(first);
        }
        let operand = if opcode == OpCode::SWITCH {
            Operand::Switch(new_targets)
        } else {
            Operand::Branch(new_targets[0])
        };
        body.replace(label, opcode, operand)?;
    }
    for (label, slot) in points {
        let Some(index) = body.position(label) else {
            continue;
        };
        let first = insert_probe(body, index, address(slot))?;
        body.retarget(label, first);
    }
    // Last, and without retargeting: only the entry runs it, not a loop
    // back to the first instruction.
    if let Some(slot) = entry {
        insert_probe(body, 0, address(slot))?;
    }
    Ok(())
}
