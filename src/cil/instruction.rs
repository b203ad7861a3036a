//! Instructions, operands, labels and metadata tokens.

use alloc::vec::Vec;
use core::fmt;

use super::error::{Error, ErrorKind};
use super::opcode::{OpCode, OperandKind, LDC_I4_SHORT};

/// A metadata token: table number in the top byte, row (or heap offset) below.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Token(pub u32);

impl Token {
    /// The metadata table (top byte), e.g. `0x06` for MethodDef, `0x0A` for MemberRef.
    pub const fn table(self) -> u8 {
        (self.0 >> 24) as u8
    }

    /// The row number (or heap offset for user strings): the low 24 bits.
    pub const fn row(self) -> u32 {
        self.0 & 0x00FF_FFFF
    }
}

impl fmt::Debug for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Token(0x{:08X})", self.0)
    }
}

impl fmt::Display for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "0x{:08X}", self.0)
    }
}

/// The identity of an instruction within a [`MethodBody`](super::MethodBody).
///
/// Branch operands and exception clauses refer to instructions by label, so
/// they follow the instruction when code is inserted or removed around it.
/// [`Label::END`] stands for the end of the code (used by clauses whose
/// handler is last).
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Label(pub(crate) u32);

impl Label {
    /// The position just past the last instruction.
    pub const END: Label = Label(u32::MAX);

    /// The raw identity (unique within one body; `u32::MAX` for [`Label::END`]).
    pub const fn id(self) -> u32 {
        self.0
    }
}

impl fmt::Debug for Label {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if *self == Label::END {
            f.write_str("Label(END)")
        } else {
            write!(f, "Label({})", self.0)
        }
    }
}

/// The inline operand of an instruction.
#[derive(Clone, Debug, PartialEq)]
pub enum Operand {
    /// No operand ([`OperandKind::InlineNone`]).
    None,
    /// An 8-bit immediate ([`OperandKind::ShortInlineI`]): `ldc.i4.s`
    /// (signed), or the flags byte of `unaligned.` and `no.` (stored as its
    /// two's-complement `i8`).
    I8(i8),
    /// A 32-bit immediate ([`OperandKind::InlineI`]).
    I32(i32),
    /// A 64-bit immediate ([`OperandKind::InlineI8`]).
    I64(i64),
    /// A 32-bit float ([`OperandKind::ShortInlineR`]); bits are preserved.
    F32(f32),
    /// A 64-bit float ([`OperandKind::InlineR`]); bits are preserved.
    F64(f64),
    /// An argument or local index ([`OperandKind::ShortInlineVar`], at most
    /// 255, or [`OperandKind::InlineVar`]).
    Var(u16),
    /// A metadata token (any token operand kind).
    Token(Token),
    /// A branch target ([`OperandKind::ShortInlineBrTarget`] or
    /// [`OperandKind::InlineBrTarget`]).
    Branch(Label),
    /// The targets of a `switch`.
    Switch(Vec<Label>),
}

impl Operand {
    /// Checks that this operand fits `kind`.
    pub(crate) fn check(&self, kind: OperandKind) -> Result<(), ErrorKind> {
        use OperandKind as K;
        let ok = match (kind, self) {
            (K::InlineNone, Operand::None)
            | (K::ShortInlineI, Operand::I8(_))
            | (K::InlineI, Operand::I32(_))
            | (K::InlineI8, Operand::I64(_))
            | (K::ShortInlineR, Operand::F32(_))
            | (K::InlineR, Operand::F64(_))
            | (K::InlineVar, Operand::Var(_))
            | (K::ShortInlineBrTarget | K::InlineBrTarget, Operand::Branch(_))
            | (K::InlineSwitch, Operand::Switch(_)) => true,
            (K::ShortInlineVar, Operand::Var(v)) => {
                if *v > 0xFF {
                    return Err(ErrorKind::OperandMismatch("short variable index over 255"));
                }
                true
            }
            (k, Operand::Token(_)) => k.is_token(),
            _ => false,
        };
        if ok {
            Ok(())
        } else {
            Err(ErrorKind::OperandMismatch(kind_name(kind)))
        }
    }

    /// The labels this operand branches to.
    pub fn targets(&self) -> &[Label] {
        match self {
            Operand::Branch(l) => core::slice::from_ref(l),
            Operand::Switch(v) => v,
            _ => &[],
        }
    }

    pub(crate) fn targets_mut(&mut self) -> &mut [Label] {
        match self {
            Operand::Branch(l) => core::slice::from_mut(l),
            Operand::Switch(v) => v,
            _ => &mut [],
        }
    }
}

fn kind_name(kind: OperandKind) -> &'static str {
    match kind {
        OperandKind::InlineNone => "expected no operand",
        OperandKind::ShortInlineI => "expected Operand::I8",
        OperandKind::InlineI => "expected Operand::I32",
        OperandKind::InlineI8 => "expected Operand::I64",
        OperandKind::ShortInlineR => "expected Operand::F32",
        OperandKind::InlineR => "expected Operand::F64",
        OperandKind::ShortInlineVar | OperandKind::InlineVar => "expected Operand::Var",
        OperandKind::ShortInlineBrTarget | OperandKind::InlineBrTarget => {
            "expected Operand::Branch"
        }
        OperandKind::InlineSwitch => "expected Operand::Switch",
        _ => "expected Operand::Token",
    }
}

/// One instruction of a method body: opcode, operand, label and IL offset.
#[derive(Clone, Debug, PartialEq)]
pub struct Instruction {
    pub(crate) label: Label,
    pub(crate) offset: u32,
    pub(crate) opcode: OpCode,
    pub(crate) operand: Operand,
}

impl Instruction {
    /// The instruction's stable identity.
    pub fn label(&self) -> Label {
        self.label
    }

    /// The IL offset as of the last decode or [`layout`](super::MethodBody::layout);
    /// instructions inserted since then report 0.
    pub fn offset(&self) -> u32 {
        self.offset
    }

    /// The opcode.
    pub fn opcode(&self) -> OpCode {
        self.opcode
    }

    /// The operand.
    pub fn operand(&self) -> &Operand {
        &self.operand
    }

    /// Encoded size in bytes with the current opcode.
    pub fn size(&self) -> usize {
        encoded_size(self.opcode, &self.operand)
    }

    /// The `int32` this instruction pushes if it is an `ldc.i4` in any form
    /// (`ldc.i4.m1`, `ldc.i4.0` .. `ldc.i4.8`, `ldc.i4.s`, `ldc.i4`);
    /// `None` for any other instruction. [`OpCode::ldc_i4`] makes the
    /// shortest form for a value.
    pub fn i4_constant(&self) -> Option<i32> {
        if let Some(n) = LDC_I4_SHORT.iter().position(|&op| op == self.opcode) {
            return Some(n as i32 - 1);
        }
        match (self.opcode, &self.operand) {
            (OpCode::LDC_I4_S, Operand::I8(v)) => Some(i32::from(*v)),
            (OpCode::LDC_I4, Operand::I32(v)) => Some(*v),
            _ => None,
        }
    }
}

pub(crate) fn encoded_size(op: OpCode, operand: &Operand) -> usize {
    let kind = op.operand_kind();
    let mut n = op.size() + kind.size();
    if let Operand::Switch(v) = operand {
        n += 4 * v.len();
    }
    n
}

/// A raw decoded instruction: the opcode, an operand whose branch targets are
/// still absolute IL offsets, and the instruction's own offset.
pub(crate) struct RawInstruction {
    pub(crate) offset: u32,
    pub(crate) opcode: OpCode,
    pub(crate) operand: RawOperand,
}

pub(crate) enum RawOperand {
    Plain(Operand),
    Branch(i64),
    Switch(Vec<i64>),
}

/// Decodes the instruction stream `code` (whose first byte is at `base` in the
/// caller's buffer).
pub(crate) fn decode_code(code: &[u8], base: usize) -> Result<Vec<RawInstruction>, Error> {
    let mut r = super::error::Reader::new(code, base);
    let mut out = Vec::new();
    while !r.is_empty() {
        let start = r.pos();
        let b = r.u8()?;
        let value = if b == 0xFE {
            0xFE00 | u16::from(r.u8()?)
        } else {
            u16::from(b)
        };
        let opcode = OpCode::from_value(value)
            .ok_or_else(|| Error::new(base + start, ErrorKind::UnknownOpcode(value)))?;
        let operand = match opcode.operand_kind() {
            OperandKind::InlineNone => RawOperand::Plain(Operand::None),
            OperandKind::ShortInlineI => RawOperand::Plain(Operand::I8(r.u8()? as i8)),
            OperandKind::InlineI => RawOperand::Plain(Operand::I32(r.u32()? as i32)),
            OperandKind::InlineI8 => RawOperand::Plain(Operand::I64(r.u64()? as i64)),
            OperandKind::ShortInlineR => RawOperand::Plain(Operand::F32(f32::from_bits(r.u32()?))),
            OperandKind::InlineR => RawOperand::Plain(Operand::F64(f64::from_bits(r.u64()?))),
            OperandKind::ShortInlineVar => RawOperand::Plain(Operand::Var(u16::from(r.u8()?))),
            OperandKind::InlineVar => RawOperand::Plain(Operand::Var(r.u16()?)),
            OperandKind::ShortInlineBrTarget => {
                let d = r.u8()? as i8;
                RawOperand::Branch(r.pos() as i64 + i64::from(d))
            }
            OperandKind::InlineBrTarget => {
                let d = r.u32()? as i32;
                RawOperand::Branch(r.pos() as i64 + i64::from(d))
            }
            OperandKind::InlineSwitch => {
                let n = r.u32()? as usize;
                // Bound the count by the bytes actually present before allocating.
                if n > r.remaining() / 4 {
                    return Err(r.err(ErrorKind::UnexpectedEnd));
                }
                let mut deltas = Vec::with_capacity(n);
                for _ in 0..n {
                    deltas.push(r.u32()? as i32);
                }
                let next = r.pos() as i64;
                RawOperand::Switch(deltas.into_iter().map(|d| next + i64::from(d)).collect())
            }
            _ => RawOperand::Plain(Operand::Token(Token(r.u32()?))),
        };
        out.push(RawInstruction {
            offset: start as u32,
            opcode,
            operand,
        });
    }
    Ok(out)
}

/// Encodes one instruction; branch displacements are computed from `next`
/// (the offset after the instruction) and `target_offset`.
pub(crate) fn encode_instruction(
    out: &mut Vec<u8>,
    opcode: OpCode,
    operand: &Operand,
    next: u32,
    target_offset: &dyn Fn(Label) -> Option<u32>,
) -> Result<(), ErrorKind> {
    let v = opcode.value();
    if v > 0xFF {
        out.push(0xFE);
    }
    out.push(v as u8);
    let disp = |l: Label| -> Result<i64, ErrorKind> {
        let t = target_offset(l).ok_or(ErrorKind::UnknownLabel)?;
        Ok(i64::from(t) - i64::from(next))
    };
    match (opcode.operand_kind(), operand) {
        (OperandKind::InlineNone, Operand::None) => {}
        (OperandKind::ShortInlineI, Operand::I8(x)) => out.push(*x as u8),
        (OperandKind::InlineI, Operand::I32(x)) => out.extend_from_slice(&x.to_le_bytes()),
        (OperandKind::InlineI8, Operand::I64(x)) => out.extend_from_slice(&x.to_le_bytes()),
        (OperandKind::ShortInlineR, Operand::F32(x)) => {
            out.extend_from_slice(&x.to_bits().to_le_bytes())
        }
        (OperandKind::InlineR, Operand::F64(x)) => {
            out.extend_from_slice(&x.to_bits().to_le_bytes())
        }
        (OperandKind::ShortInlineVar, Operand::Var(x)) => {
            let b = u8::try_from(*x)
                .map_err(|_| ErrorKind::OperandMismatch("short variable index over 255"))?;
            out.push(b)
        }
        (OperandKind::InlineVar, Operand::Var(x)) => out.extend_from_slice(&x.to_le_bytes()),
        (OperandKind::ShortInlineBrTarget, Operand::Branch(l)) => {
            let d = i8::try_from(disp(*l)?)
                .map_err(|_| ErrorKind::Unencodable("short branch out of range"))?;
            out.push(d as u8)
        }
        (OperandKind::InlineBrTarget, Operand::Branch(l)) => {
            let d = i32::try_from(disp(*l)?)
                .map_err(|_| ErrorKind::Unencodable("branch out of range"))?;
            out.extend_from_slice(&d.to_le_bytes())
        }
        (OperandKind::InlineSwitch, Operand::Switch(ls)) => {
            let n = u32::try_from(ls.len())
                .map_err(|_| ErrorKind::Unencodable("too many switch targets"))?;
            out.extend_from_slice(&n.to_le_bytes());
            for l in ls {
                let d = i32::try_from(disp(*l)?)
                    .map_err(|_| ErrorKind::Unencodable("switch target out of range"))?;
                out.extend_from_slice(&d.to_le_bytes());
            }
        }
        (k, Operand::Token(t)) if k.is_token() => out.extend_from_slice(&t.0.to_le_bytes()),
        (k, _) => return Err(ErrorKind::OperandMismatch(kind_name(k))),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cil::MethodBody;
    use alloc::vec;

    /// Decodes `code` (followed by `ret`) as a tiny body: its instructions.
    fn decode(code: &[u8]) -> Vec<Instruction> {
        let mut bytes = vec![((code.len() as u8 + 1) << 2) | 2];
        bytes.extend_from_slice(code);
        bytes.push(0x2A);
        MethodBody::decode(&bytes).unwrap().instructions().to_vec()
    }

    #[test]
    fn i4_constant_reads_every_ldc_i4_form() {
        // The bytes of ECMA-335 III.3.40, one instruction each.
        let forms: [(&[u8], &str, i32); 15] = [
            (&[0x15], "ldc.i4.m1", -1),
            (&[0x16], "ldc.i4.0", 0),
            (&[0x17], "ldc.i4.1", 1),
            (&[0x18], "ldc.i4.2", 2),
            (&[0x19], "ldc.i4.3", 3),
            (&[0x1A], "ldc.i4.4", 4),
            (&[0x1B], "ldc.i4.5", 5),
            (&[0x1C], "ldc.i4.6", 6),
            (&[0x1D], "ldc.i4.7", 7),
            (&[0x1E], "ldc.i4.8", 8),
            (&[0x1F, 0x80], "ldc.i4.s", -128),
            (&[0x1F, 0x7F], "ldc.i4.s", 127),
            (&[0x1F, 0x05], "ldc.i4.s", 5),
            (&[0x20, 0x00, 0x00, 0x00, 0x80], "ldc.i4", i32::MIN),
            (&[0x20, 0x2A, 0x00, 0x00, 0x00], "ldc.i4", 42),
        ];
        for (code, name, value) in forms {
            let ins = &decode(code)[0];
            assert_eq!(ins.opcode().name(), name, "{code:02X?}");
            assert_eq!(ins.i4_constant(), Some(value), "{code:02X?}");
        }
    }

    #[test]
    fn i4_constant_is_none_for_other_instructions() {
        // ldc.i8 1, ldc.r4 1.0, ldarg.0, ldloc.s 5, ret.
        let code = [
            0x21, 1, 0, 0, 0, 0, 0, 0, 0, 0x22, 0, 0, 0x80, 0x3F, 0x02, 0x11, 5,
        ];
        let instructions = decode(&code);
        assert_eq!(instructions.len(), 5);
        for ins in &instructions {
            assert_eq!(ins.i4_constant(), None, "{ins:?}");
        }
    }

    #[test]
    fn ldc_i4_picks_the_shortest_form_and_reads_back() {
        for (value, name, size) in [
            (-1, "ldc.i4.m1", 1),
            (0, "ldc.i4.0", 1),
            (1, "ldc.i4.1", 1),
            (2, "ldc.i4.2", 1),
            (3, "ldc.i4.3", 1),
            (4, "ldc.i4.4", 1),
            (5, "ldc.i4.5", 1),
            (6, "ldc.i4.6", 1),
            (7, "ldc.i4.7", 1),
            (8, "ldc.i4.8", 1),
            (9, "ldc.i4.s", 2),
            (-2, "ldc.i4.s", 2),
            (127, "ldc.i4.s", 2),
            (-128, "ldc.i4.s", 2),
            (128, "ldc.i4", 5),
            (-129, "ldc.i4", 5),
            (100_000, "ldc.i4", 5),
            (i32::MIN, "ldc.i4", 5),
            (i32::MAX, "ldc.i4", 5),
        ] {
            let (opcode, operand) = OpCode::ldc_i4(value);
            assert_eq!(opcode.name(), name, "{value}");
            let mut body = MethodBody::new();
            body.push(opcode, operand).unwrap();
            body.push(OpCode::RET, Operand::None).unwrap();
            let decoded = MethodBody::decode(&body.encode().unwrap()).unwrap();
            let ins = &decoded.instructions()[0];
            assert_eq!(ins.size(), size, "{value}");
            assert_eq!(ins.i4_constant(), Some(value), "{value}");
        }
    }
}
