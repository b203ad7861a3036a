//! The short forms of the argument and local instructions (ECMA-335
//! III.3.38-3.39, 3.43-3.44, 3.63), chosen by index, and appending a run of
//! instructions: the building blocks the phases write their code with.

use alloc::vec::Vec;

use crate::cil::{Error, Label, MethodBody, OpCode, Operand};

/// A run of instructions, appended or inserted in order.
pub(super) type Code = Vec<(OpCode, Operand)>;

pub(super) fn ldarg(i: u16) -> (OpCode, Operand) {
    match i {
        0 => (OpCode::LDARG_0, Operand::None),
        1 => (OpCode::LDARG_1, Operand::None),
        2 => (OpCode::LDARG_2, Operand::None),
        3 => (OpCode::LDARG_3, Operand::None),
        4..=255 => (OpCode::LDARG_S, Operand::Var(i)),
        _ => (OpCode::LDARG, Operand::Var(i)),
    }
}

pub(super) fn ldarga(i: u16) -> (OpCode, Operand) {
    match i {
        0..=255 => (OpCode::LDARGA_S, Operand::Var(i)),
        _ => (OpCode::LDARGA, Operand::Var(i)),
    }
}

pub(super) fn ldloc(i: u16) -> (OpCode, Operand) {
    match i {
        0 => (OpCode::LDLOC_0, Operand::None),
        1 => (OpCode::LDLOC_1, Operand::None),
        2 => (OpCode::LDLOC_2, Operand::None),
        3 => (OpCode::LDLOC_3, Operand::None),
        4..=255 => (OpCode::LDLOC_S, Operand::Var(i)),
        _ => (OpCode::LDLOC, Operand::Var(i)),
    }
}

pub(super) fn ldloca(i: u16) -> (OpCode, Operand) {
    match i {
        0..=255 => (OpCode::LDLOCA_S, Operand::Var(i)),
        _ => (OpCode::LDLOCA, Operand::Var(i)),
    }
}

pub(super) fn stloc(i: u16) -> (OpCode, Operand) {
    match i {
        0 => (OpCode::STLOC_0, Operand::None),
        1 => (OpCode::STLOC_1, Operand::None),
        2 => (OpCode::STLOC_2, Operand::None),
        3 => (OpCode::STLOC_3, Operand::None),
        4..=255 => (OpCode::STLOC_S, Operand::Var(i)),
        _ => (OpCode::STLOC, Operand::Var(i)),
    }
}

/// Appends `code` at the end of `body`; the labels of its instructions.
pub(super) fn append(
    body: &mut MethodBody,
    code: &[(OpCode, Operand)],
) -> Result<Vec<Label>, Error> {
    code.iter()
        .map(|(op, operand)| body.push(*op, operand.clone()))
        .collect()
}
