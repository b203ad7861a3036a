//! The IL probes: a counter increment at each sequence point and on each
//! arm of each conditional branch, written with the crate's CIL codec.
//!
//! A probe is `ldc.i8 <address>; conv.u; dup; ldind.i; ldc.i4.1; add;
//! stind.i` (a 64-bit process; see [`increment`]): it adds one to a native
//! `u64` counter (which does not wrap in a program's life), leaves the evaluation
//! stack as it found it (so it may stand where the stack is not empty, as
//! at the start of a `catch` handler) and calls nothing. The increment is
//! not atomic: on several threads at once counts may come out low (never a
//! hit reported as a miss once one increment lands).

use alloc::vec::Vec;

use crate::cil::{
    Error, FlowControl, Instruction, Label, MethodBody, OpCode, Operand, LDC_I4_SHORT,
};

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
    /// For each slot, the slot whose probe counts it too (`None`: its own
    /// probe). A sequence point shares the probe of the point before it
    /// when control cannot enter between them nor leave by an exception
    /// (nothing branches there, no clause starts or ends there, and every
    /// instruction in between is one that cannot throw); the entry shares
    /// the probe of the point at offset 0 when nothing branches to the
    /// first instruction.
    pub same_as: Vec<Option<usize>>,
}

impl ProbePlan {
    /// The slot whose counter holds the count of `slot`.
    pub fn counter_of(&self, slot: usize) -> usize {
        self.same_as.get(slot).copied().flatten().unwrap_or(slot)
    }
}

/// Instructions that neither throw nor leave the straight line: a sequence
/// point after a run of them runs exactly as often as the one before.
fn cannot_throw(op: OpCode) -> bool {
    const SAFE: &[OpCode] = &[
        OpCode::NOP,
        OpCode::LDARG_0,
        OpCode::LDARG_1,
        OpCode::LDARG_2,
        OpCode::LDARG_3,
        OpCode::LDARG_S,
        OpCode::LDARG,
        OpCode::LDARGA_S,
        OpCode::LDARGA,
        OpCode::STARG_S,
        OpCode::STARG,
        OpCode::LDLOC_0,
        OpCode::LDLOC_1,
        OpCode::LDLOC_2,
        OpCode::LDLOC_3,
        OpCode::LDLOC_S,
        OpCode::LDLOC,
        OpCode::LDLOCA_S,
        OpCode::LDLOCA,
        OpCode::STLOC_0,
        OpCode::STLOC_1,
        OpCode::STLOC_2,
        OpCode::STLOC_3,
        OpCode::STLOC_S,
        OpCode::STLOC,
        OpCode::LDNULL,
        OpCode::LDSTR,
        // and the short `ldc.i4` forms, `LDC_I4_SHORT`
        OpCode::LDC_I4_S,
        OpCode::LDC_I4,
        OpCode::LDC_I8,
        OpCode::LDC_R4,
        OpCode::LDC_R8,
        OpCode::DUP,
        OpCode::POP,
        OpCode::ADD,
        OpCode::SUB,
        OpCode::MUL,
        OpCode::AND,
        OpCode::OR,
        OpCode::XOR,
        OpCode::SHL,
        OpCode::SHR,
        OpCode::SHR_UN,
        OpCode::NEG,
        OpCode::NOT,
        OpCode::CEQ,
        OpCode::CGT,
        OpCode::CGT_UN,
        OpCode::CLT,
        OpCode::CLT_UN,
        OpCode::CONV_I1,
        OpCode::CONV_I2,
        OpCode::CONV_I4,
        OpCode::CONV_I8,
        OpCode::CONV_U1,
        OpCode::CONV_U2,
        OpCode::CONV_U4,
        OpCode::CONV_U8,
        OpCode::CONV_I,
        OpCode::CONV_U,
        OpCode::CONV_R4,
        OpCode::CONV_R8,
        OpCode::CONV_R_UN,
    ];
    SAFE.contains(&op) || LDC_I4_SHORT.contains(&op)
}

/// The IL offsets something may jump to or that bound a protected region:
/// branch and switch targets, clause boundaries, filter starts.
fn entry_offsets(body: &MethodBody) -> Vec<u32> {
    let offset = |label: Label| body.get(label).map(|i| i.offset());
    let mut out: Vec<u32> = Vec::new();
    for ins in body.instructions() {
        out.extend(ins.operand().targets().iter().filter_map(|&l| offset(l)));
    }
    for c in body.clauses() {
        for l in [c.try_start, c.try_end, c.handler_start, c.handler_end] {
            out.extend(offset(l));
        }
        if let crate::cil::ClauseKind::Filter(l) = c.kind {
            out.extend(offset(l));
        }
    }
    out.sort_unstable();
    out.dedup();
    out
}

/// Fills `plan.same_as` (see [`ProbePlan::same_as`]).
fn share(body: &MethodBody, plan: &mut ProbePlan) {
    let targets = entry_offsets(body);
    let ins = body.instructions();
    let index_of = |offset: u32| ins.binary_search_by_key(&offset, |i| i.offset()).ok();
    plan.same_as = alloc::vec![None; plan.counters.len()];
    let mut previous: Option<(usize, usize)> = None; // (leader slot, instruction index)
    for slot in 0..plan.counters.len() {
        let Counter::SequencePoint { il_offset } = plan.counters[slot] else {
            continue;
        };
        let Some(index) = index_of(il_offset) else {
            previous = None;
            continue;
        };
        if let Some((leader, from)) = previous {
            let straight = from < index
                && ins[from..index].iter().all(|i| cannot_throw(i.opcode()))
                && targets.binary_search(&il_offset).is_err();
            if straight {
                plan.same_as[slot] = Some(leader);
                previous = Some((leader, index));
                continue;
            }
        }
        previous = Some((slot, index));
    }
    let first_point = plan
        .counters
        .iter()
        .position(|c| *c == Counter::SequencePoint { il_offset: 0 });
    let entry = plan.counters.iter().position(|c| *c == Counter::Entry);
    if let (Some(point), Some(entry)) = (first_point, entry) {
        if targets.binary_search(&0).is_err() {
            plan.same_as[entry] = Some(plan.counter_of(point));
        }
    }
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
/// compiler's, not the user's, and are left out; but a branch on an awaited
/// value is the user's: behind the await's resume point (hidden), the
/// branch follows the call to the awaiter's `GetResult` (`if (!await
/// p(x))`: `ldloca awaiter; call GetResult; brtrue`), where the await's own
/// test follows `get_IsCompleted`. `awaited` says whether a call's token
/// names `GetResult`.
fn user_branch<'a>(
    body: &MethodBody,
    index: usize,
    visible: &'a [u32],
    hidden: &'a [u32],
    awaited: &dyn Fn(u32) -> bool,
) -> bool {
    let ins = body.instructions();
    let offset = ins[index].offset();
    // The last offset at or before the branch (both sorted: by halves).
    let last = |offsets: &'a [u32]| {
        let n = offsets.partition_point(|&o| o <= offset);
        n.checked_sub(1).and_then(|i| offsets.get(i))
    };
    let v = last(visible);
    let h = last(hidden);
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
            let temporary = index >= 2
                && ins[index - 1].offset() == h
                && local(&ins[index - 1], true).is_some()
                && local(&ins[index - 1], true) == local(&ins[index - 2], false);
            // <hidden> ... call GetResult; branch
            let on_awaited = index >= 1
                && matches!(ins[index - 1].opcode(), OpCode::CALL | OpCode::CALLVIRT)
                && matches!(ins[index - 1].operand(), Operand::Token(t) if awaited(t.0));
            temporary || on_awaited
        }
        _ => true,
    }
}

/// Plans the probes of `body`: one counter per visible sequence point
/// whose offset starts an instruction, and, with `branches`, one per arm
/// of each conditional branch (`brtrue`, `beq`, ..., `switch`) of the
/// user's code (see `user_branch`).
///
/// `visible` and `hidden` are IL offsets, each sorted ascending. A branch
/// on an awaited value is not recognised: [`plan_with`] does it.
pub fn plan(body: &MethodBody, visible: &[u32], hidden: &[u32], branches: bool) -> ProbePlan {
    plan_with(body, visible, hidden, branches, &|_| false)
}

/// [`plan`], with `awaited` saying whether a `call`'s token names an
/// awaiter's `GetResult` (from the module's metadata): the branch on an
/// awaited value (`if (!await p(x))`), behind the await's hidden resume
/// point, is then the user's too.
pub fn plan_with(
    body: &MethodBody,
    visible: &[u32],
    hidden: &[u32],
    branches: bool,
    awaited: &dyn Fn(u32) -> bool,
) -> ProbePlan {
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
            if !user_branch(body, index, visible, hidden, awaited) {
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
    let mut plan = ProbePlan {
        counters,
        same_as: Vec::new(),
    };
    share(body, &mut plan);
    plan
}

/// The increment of a probe, after `ldc.i8 <address>; conv.u; dup`: the
/// counter is a `u64` (it does not wrap in a program's life). In a 64-bit
/// process a native int is 64 bits, and `ldind.i; ldc.i4.1; add; stind.i`
/// adds to all of it (ECMA-335 III.1.5, table III.2: native int + int32 is
/// a native int): the probe stays 15 bytes of IL, as with the former
/// `u32` counters, so a method inlined with its probes before still is
/// (the JIT never inlines more than 100 bytes of IL:
/// `DEFAULT_MAX_INLINE_SIZE`, dotnet/runtime's jitconfigvalues.h). In a
/// 32-bit process it is `ldind.i8; ldc.i4.1; conv.i8; add; stind.i8`
/// (`add` takes two int64 or two int32, not one of each).
pub fn increment(native_64: bool) -> &'static [OpCode] {
    if native_64 {
        &INCREMENT_64
    } else {
        &INCREMENT_32
    }
}

/// [`increment`] in a 64-bit process.
const INCREMENT_64: [OpCode; 4] = [
    OpCode::LDIND_I,
    OpCode::LDC_I4_1,
    OpCode::ADD,
    OpCode::STIND_I,
];

/// [`increment`] in a 32-bit process.
const INCREMENT_32: [OpCode; 5] = [
    OpCode::LDIND_I8,
    OpCode::LDC_I4_1,
    OpCode::CONV_I8,
    OpCode::ADD,
    OpCode::STIND_I8,
];

/// Whether this process's native int is 64 bits (the profiler runs in it).
const NATIVE_64: bool = cfg!(target_pointer_width = "64");

/// The instructions of one probe, inserted before index `at`; returns the
/// label of the first.
fn insert_probe(body: &mut MethodBody, at: usize, address: u64) -> Result<Label, Error> {
    let first = body.insert(at, OpCode::LDC_I8, Operand::I64(address as i64))?;
    let rest = [OpCode::CONV_U, OpCode::DUP]
        .iter()
        .chain(increment(NATIVE_64));
    for (n, &opcode) in rest.enumerate() {
        body.insert(at + 1 + n, opcode, Operand::None)?;
    }
    Ok(first)
}

/// The bytes of one counter: a `u64`.
pub const COUNTER_SIZE: u64 = 8;

/// The number of instructions [`insert_probe`] adds.
const PROBE_LEN: usize = 3 + if NATIVE_64 {
    INCREMENT_64.len()
} else {
    INCREMENT_32.len()
};

/// Inserts the probes of `plan` into `body`; counter slot `n` is the `u64`
/// at `base + 8 * n` (`base` 8-aligned). Max stack is left to the caller
/// ([`MethodBody::update_max_stack`]).
///
/// Branch arms first: after a conditional branch come the fall-through
/// probe and a `br` to the next instruction, then, for each target, a
/// probe and a `br` to it; the branch is sent to those. Sequence points
/// next: a probe before the instruction, and everything that pointed at
/// the instruction (branches, switch targets, exception clause boundaries)
/// points at the probe, so a jump to a line counts it.
pub fn apply(body: &mut MethodBody, plan: &ProbePlan, base: u64) -> Result<(), Error> {
    let address = |slot: usize| base + COUNTER_SIZE * slot as u64;
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
        if plan.counter_of(slot) != slot {
            continue;
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_ldc_i4_form_cannot_throw_and_a_call_or_a_division_can() {
        for op in [
            OpCode::LDC_I4_M1,
            OpCode::LDC_I4_0,
            OpCode::LDC_I4_8,
            OpCode::LDC_I4_S,
            OpCode::LDC_I4,
            OpCode::NOP,
        ] {
            assert!(cannot_throw(op), "{op:?}");
        }
        for op in [OpCode::CALL, OpCode::DIV, OpCode::LDFLD, OpCode::THROW] {
            assert!(!cannot_throw(op), "{op:?}");
        }
    }
}

#[cfg(test)]
mod handler_tests {
    use super::*;
    use crate::cil::{ClauseKind, ExceptionClause, Token};

    /// `try { a / b } catch { }` then `try { a / b } finally { }`, with a
    /// sequence point at each region's first instruction (as Roslyn's
    /// Release build puts the `catch` line's point on the handler's `pop`).
    fn body() -> MethodBody {
        let mut body = MethodBody::new();
        let mut push = |op, operand| body.push(op, operand).unwrap();
        let try1 = push(OpCode::LDARG_0, Operand::None);
        push(OpCode::LDARG_1, Operand::None);
        push(OpCode::DIV, Operand::None);
        push(OpCode::POP, Operand::None);
        let leave1 = push(OpCode::LEAVE_S, Operand::Branch(try1));
        let catch = push(OpCode::POP, Operand::None);
        let leave2 = push(OpCode::LEAVE_S, Operand::Branch(try1));
        let try2 = push(OpCode::LDARG_0, Operand::None);
        push(OpCode::LDARG_1, Operand::None);
        push(OpCode::DIV, Operand::None);
        push(OpCode::POP, Operand::None);
        let leave3 = push(OpCode::LEAVE_S, Operand::Branch(try1));
        let finally = push(OpCode::LDC_I4_0, Operand::None);
        push(OpCode::POP, Operand::None);
        push(OpCode::ENDFINALLY, Operand::None);
        let ret = push(OpCode::RET, Operand::None);
        for (leave, target) in [(leave1, try2), (leave2, try2), (leave3, ret)] {
            body.replace(leave, OpCode::LEAVE_S, Operand::Branch(target))
                .unwrap();
        }
        body.clauses_mut().push(ExceptionClause::new(
            ClauseKind::Catch(Token(0x0100_0001)),
            try1,
            catch,
            catch,
            try2,
        ));
        body.clauses_mut().push(ExceptionClause::new(
            ClauseKind::Finally,
            try2,
            finally,
            finally,
            ret,
        ));
        body.layout().unwrap();
        body
    }

    #[test]
    fn a_handler_s_first_point_is_counted_inside_the_handler() {
        let mut body = body();
        let offset = |body: &MethodBody, i: usize| body.instructions()[i].offset();
        // try1, catch (the `pop`), try2, finally, ret
        let points: Vec<u32> = [0, 5, 7, 12, 15]
            .iter()
            .map(|&i| offset(&body, i))
            .collect();
        let plan = plan(&body, &points, &[], false);
        // No point shares another's probe: each starts a region.
        for slot in 0..points.len() {
            assert_eq!(plan.counter_of(slot), slot, "{plan:?}");
        }
        apply(&mut body, &plan, 0x1000).unwrap();
        let ins = body.instructions();
        for (c, first, original) in [
            (&body.clauses()[0], 0x1000 + 8, OpCode::POP),
            (&body.clauses()[1], 0x1000 + 24, OpCode::LDC_I4_0),
        ] {
            // The handler begins with the point's probe, then its own code.
            let start = body.position(c.handler_start).unwrap();
            assert_eq!(ins[start].opcode(), OpCode::LDC_I8);
            assert_eq!(*ins[start].operand(), Operand::I64(first));
            assert_eq!(ins[start + PROBE_LEN].opcode(), original);
            // The protected block ends where the handler begins.
            assert_eq!(c.try_end, c.handler_start);
        }
        // Max stack: the probe (3 deep) above the exception object.
        assert_eq!(body.update_max_stack(|_| None).unwrap(), 4);
        let bytes = body.encode().unwrap();
        let again = MethodBody::decode(&bytes).unwrap();
        assert_eq!(again.clauses().len(), 2);
    }

    /// `if (!await p(x))` as Roslyn's Release build writes it in the state
    /// machine: the statement's point, the await's test `call
    /// get_IsCompleted; brtrue` behind a hidden point, the resume point
    /// (hidden), then `call GetResult; brtrue` over the throw. Only the
    /// last branch is the user's, and only when `awaited` names the call.
    #[test]
    fn the_branch_on_an_awaited_value_is_the_user_s() {
        const IS_COMPLETED: u32 = 0x0A00_0001;
        const GET_RESULT: u32 = 0x0A00_0002;
        let mut body = MethodBody::new();
        let mut push = |op, operand| body.push(op, operand).unwrap();
        let start = push(OpCode::LDARG_0, Operand::None);
        push(OpCode::STLOC_0, Operand::None);
        let check = push(OpCode::LDLOCA_S, Operand::Var(0));
        push(OpCode::CALL, Operand::Token(Token(IS_COMPLETED)));
        let completed = push(OpCode::BRTRUE_S, Operand::Branch(start));
        let resume = push(OpCode::NOP, Operand::None);
        let result = push(OpCode::LDLOCA_S, Operand::Var(0));
        push(OpCode::CALL, Operand::Token(Token(GET_RESULT)));
        let test = push(OpCode::BRTRUE_S, Operand::Branch(start));
        let throw = push(OpCode::LDNULL, Operand::None);
        push(OpCode::THROW, Operand::None);
        let ret = push(OpCode::RET, Operand::None);
        body.replace(completed, OpCode::BRTRUE_S, Operand::Branch(result))
            .unwrap();
        body.replace(test, OpCode::BRTRUE_S, Operand::Branch(ret))
            .unwrap();
        body.layout().unwrap();
        let at = |l: Label| body.instructions()[body.position(l).unwrap()].offset();
        let visible = [at(start), at(throw), at(ret)];
        let hidden = [at(check), at(resume)];
        let arms = |awaited: &dyn Fn(u32) -> bool| -> Vec<(u32, u32)> {
            plan_with(&body, &visible, &hidden, true, awaited)
                .counters
                .iter()
                .filter_map(|c| match *c {
                    Counter::BranchArm { il_offset, arm } => Some((il_offset, arm)),
                    _ => None,
                })
                .collect()
        };
        assert_eq!(arms(&|t| t == GET_RESULT), [(at(test), 0), (at(test), 1)]);
        // Without the metadata's word (plan), the compiler's and the
        // user's branch alike are left out.
        assert_eq!(arms(&|_| false), []);
        assert_eq!(plan(&body, &visible, &hidden, true).counters.len(), 4);
    }
}
