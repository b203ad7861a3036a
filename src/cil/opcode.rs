//! The ECMA-335 (Partition III) opcode table, as data.
//!
//! Transcribed from ECMA-335 Partition III and the CoreCLR opcode list: every
//! standard one-byte opcode and every `0xFE`-prefixed two-byte opcode, with
//! its name, operand kind, stack behaviour and control flow. Stack behaviour
//! counts stack *items* (as `.maxstack` does), not 4-byte slots.
//!
//! The CoreCLR-internal experimental opcodes `ldctarg.s` (`0xA6`) and
//! `ldctarg` (`0xFE 0x08`), which ECMA-335 lists as unused, are not included;
//! the ECMA `no.` prefix (`0xFE 0x19`), which CoreCLR's list omits, is.

use core::fmt;

use super::instruction::Operand;

/// The kind of inline operand that follows an opcode in the instruction stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OperandKind {
    /// No operand.
    InlineNone,
    /// A signed 8-bit integer (`ldc.i4.s`) or an unsigned 8-bit value (`unaligned.`, `no.`).
    ShortInlineI,
    /// A signed 32-bit integer (`ldc.i4`).
    InlineI,
    /// A signed 64-bit integer (`ldc.i8`).
    InlineI8,
    /// A 32-bit IEEE float (`ldc.r4`).
    ShortInlineR,
    /// A 64-bit IEEE float (`ldc.r8`).
    InlineR,
    /// An unsigned 8-bit argument or local index (`ldarg.s`, `stloc.s`, ...).
    ShortInlineVar,
    /// An unsigned 16-bit argument or local index (`ldarg`, `stloc`, ...).
    InlineVar,
    /// A signed 8-bit branch displacement from the next instruction (`br.s`, ...).
    ShortInlineBrTarget,
    /// A signed 32-bit branch displacement from the next instruction (`br`, ...).
    InlineBrTarget,
    /// A `u32` count N followed by N signed 32-bit displacements (`switch`).
    InlineSwitch,
    /// A MethodDef, MemberRef or MethodSpec token.
    InlineMethod,
    /// A FieldDef or MemberRef token.
    InlineField,
    /// A TypeDef, TypeRef or TypeSpec token.
    InlineType,
    /// A user-string token (`ldstr`).
    InlineString,
    /// A StandAloneSig token (`calli`).
    InlineSig,
    /// Any metadata token (`ldtoken`).
    InlineTok,
}

impl OperandKind {
    /// Operand size in bytes; for [`InlineSwitch`](OperandKind::InlineSwitch)
    /// this is only the size of the count (the targets follow).
    pub const fn size(self) -> usize {
        match self {
            OperandKind::InlineNone => 0,
            OperandKind::ShortInlineI
            | OperandKind::ShortInlineVar
            | OperandKind::ShortInlineBrTarget => 1,
            OperandKind::InlineVar => 2,
            OperandKind::InlineI8 | OperandKind::InlineR => 8,
            OperandKind::InlineI
            | OperandKind::ShortInlineR
            | OperandKind::InlineBrTarget
            | OperandKind::InlineSwitch
            | OperandKind::InlineMethod
            | OperandKind::InlineField
            | OperandKind::InlineType
            | OperandKind::InlineString
            | OperandKind::InlineSig
            | OperandKind::InlineTok => 4,
        }
    }

    /// Whether the operand is a metadata token.
    pub const fn is_token(self) -> bool {
        matches!(
            self,
            OperandKind::InlineMethod
                | OperandKind::InlineField
                | OperandKind::InlineType
                | OperandKind::InlineString
                | OperandKind::InlineSig
                | OperandKind::InlineTok
        )
    }
}

/// How many stack items an instruction pops or pushes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum StackEffect {
    /// A fixed number of items.
    Fixed(u8),
    /// Depends on a signature (`call`, `callvirt`, `calli`, `newobj`) or on the
    /// method's return type (`ret`).
    Varies,
}

/// What an instruction does to control flow.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FlowControl {
    /// Falls through to the next instruction.
    Next,
    /// `break`: falls through after the debugger break.
    Break,
    /// A call (`call`, `callvirt`, `calli`, `newobj`, `jmp`).
    Call,
    /// Leaves the method or handler (`ret`, `endfinally`, `endfilter`).
    Return,
    /// An unconditional branch (`br`, `leave`, ...).
    Branch,
    /// A conditional branch or `switch`.
    CondBranch,
    /// `throw` or `rethrow`.
    Throw,
    /// A prefix that modifies the next instruction.
    Meta,
}

/// Static facts about one opcode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OpCodeInfo {
    /// The opcode.
    pub code: OpCode,
    /// The ILAsm name (`"ldarg.0"`, `"tail."`).
    pub name: &'static str,
    /// The inline operand kind.
    pub operand: OperandKind,
    /// Items popped.
    pub pops: StackEffect,
    /// Items pushed.
    pub pushes: StackEffect,
    /// Control flow.
    pub flow: FlowControl,
}

/// A CIL opcode: a one-byte opcode `0x00..=0xFD` is stored as that byte, a
/// two-byte opcode `0xFE xx` as `0xFExx`.
///
/// Only values listed in the table are valid; [`OpCode::from_value`] checks.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct OpCode(u16);

impl OpCode {
    /// The opcode with this value (`0x00..=0xFD` or `0xFE00..=0xFEFF`), if it
    /// is in the table.
    pub fn from_value(value: u16) -> Option<OpCode> {
        let op = OpCode(value);
        if op.lookup().is_some() {
            Some(op)
        } else {
            None
        }
    }

    /// The opcode value: the byte, or `0xFE00 | second byte`.
    pub const fn value(self) -> u16 {
        self.0
    }

    /// Encoded size of the opcode itself: 1 or 2 bytes.
    pub const fn size(self) -> usize {
        if self.0 > 0xFF {
            2
        } else {
            1
        }
    }

    fn lookup(self) -> Option<&'static OpCodeInfo> {
        let idx = if self.0 <= 0xFF {
            ONE_BYTE_INDEX[self.0 as usize]
        } else if self.0 >> 8 == 0xFE {
            TWO_BYTE_INDEX[(self.0 & 0xFF) as usize]
        } else {
            NONE
        };
        if idx == NONE {
            None
        } else {
            Some(&OPCODES[idx as usize])
        }
    }

    /// The table entry for this opcode.
    pub fn info(self) -> &'static OpCodeInfo {
        // Every OpCode value is constructed from the table (constants or
        // `from_value`), so the lookup succeeds; fall back to `nop` defensively.
        self.lookup().unwrap_or(&OPCODES[0])
    }

    /// The ILAsm name.
    pub fn name(self) -> &'static str {
        self.info().name
    }

    /// The inline operand kind.
    pub fn operand_kind(self) -> OperandKind {
        self.info().operand
    }

    /// Whether this is a prefix (`unaligned.`, `volatile.`, `tail.`,
    /// `constrained.`, `readonly.`, `no.`).
    pub fn is_prefix(self) -> bool {
        self.info().flow == FlowControl::Meta
    }

    /// For a short branch (`br.s`, `brtrue.s`, ..., `leave.s`), its long form.
    pub fn long_form(self) -> Option<OpCode> {
        match self.0 {
            0x2B..=0x37 => Some(OpCode(self.0 + 0x0D)),
            0xDE => Some(OpCode::LEAVE),
            _ => None,
        }
    }

    /// All opcodes of the table, in table order.
    pub fn all() -> impl Iterator<Item = OpCode> {
        OPCODES.iter().map(|i| i.code)
    }

    /// The shortest instruction that pushes the `int32` `value`
    /// (ECMA-335 III.3.40): `ldc.i4.m1` or `ldc.i4.0` .. `ldc.i4.8` (no
    /// operand) for -1 to 8, `ldc.i4.s` for the rest of -128 to 127,
    /// `ldc.i4` otherwise. The pair goes to
    /// [`MethodBody::insert`](super::MethodBody::insert),
    /// [`push`](super::MethodBody::push) or
    /// [`replace`](super::MethodBody::replace);
    /// [`Instruction::i4_constant`](super::Instruction::i4_constant) reads
    /// it back.
    pub fn ldc_i4(value: i32) -> (OpCode, Operand) {
        match value {
            -1..=8 => (LDC_I4_SHORT[(value + 1) as usize], Operand::None),
            _ => match i8::try_from(value) {
                Ok(v) => (OpCode::LDC_I4_S, Operand::I8(v)),
                Err(_) => (OpCode::LDC_I4, Operand::I32(value)),
            },
        }
    }
}

/// The `ldc.i4` forms without an operand, for -1 to 8 in order.
pub(crate) const LDC_I4_SHORT: [OpCode; 10] = [
    OpCode::LDC_I4_M1,
    OpCode::LDC_I4_0,
    OpCode::LDC_I4_1,
    OpCode::LDC_I4_2,
    OpCode::LDC_I4_3,
    OpCode::LDC_I4_4,
    OpCode::LDC_I4_5,
    OpCode::LDC_I4_6,
    OpCode::LDC_I4_7,
    OpCode::LDC_I4_8,
];

impl fmt::Debug for OpCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "OpCode({})", self.name())
    }
}

impl fmt::Display for OpCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

const fn fx(n: u8) -> StackEffect {
    StackEffect::Fixed(n)
}
const VAR: StackEffect = StackEffect::Varies;
const NONE: u16 = u16::MAX;

macro_rules! opcodes {
    ($( $konst:ident = $code:literal, $name:literal, $operand:ident, $pops:expr, $pushes:expr, $flow:ident; )*) => {
        impl OpCode {
            $(
                #[doc = concat!("`", $name, "`")]
                pub const $konst: OpCode = OpCode($code);
            )*
        }

        /// The opcode table, in opcode order. A `const` (so `build_index` can
        /// read it at compile time on Rust 1.81, the MSRV then, where const
        /// fns may not read statics); `OPCODES` is its one runtime copy.
        const OPCODE_TABLE: &[OpCodeInfo] = &[
            $(
                OpCodeInfo {
                    code: OpCode($code),
                    name: $name,
                    operand: OperandKind::$operand,
                    pops: $pops,
                    pushes: $pushes,
                    flow: FlowControl::$flow,
                },
            )*
        ];
    };
}

/// The opcode table at run time: one copy, referenced by the lookups.
static OPCODES: &[OpCodeInfo] = OPCODE_TABLE;

const fn build_index(two_byte: bool) -> [u16; 256] {
    let mut idx = [NONE; 256];
    let mut i = 0;
    while i < OPCODE_TABLE.len() {
        let v = OPCODE_TABLE[i].code.0;
        if (v > 0xFF) == two_byte {
            idx[(v & 0xFF) as usize] = i as u16;
        }
        i += 1;
    }
    idx
}

static ONE_BYTE_INDEX: [u16; 256] = build_index(false);
static TWO_BYTE_INDEX: [u16; 256] = build_index(true);

opcodes! {
    NOP = 0x00, "nop", InlineNone, fx(0), fx(0), Next;
    BREAK = 0x01, "break", InlineNone, fx(0), fx(0), Break;
    LDARG_0 = 0x02, "ldarg.0", InlineNone, fx(0), fx(1), Next;
    LDARG_1 = 0x03, "ldarg.1", InlineNone, fx(0), fx(1), Next;
    LDARG_2 = 0x04, "ldarg.2", InlineNone, fx(0), fx(1), Next;
    LDARG_3 = 0x05, "ldarg.3", InlineNone, fx(0), fx(1), Next;
    LDLOC_0 = 0x06, "ldloc.0", InlineNone, fx(0), fx(1), Next;
    LDLOC_1 = 0x07, "ldloc.1", InlineNone, fx(0), fx(1), Next;
    LDLOC_2 = 0x08, "ldloc.2", InlineNone, fx(0), fx(1), Next;
    LDLOC_3 = 0x09, "ldloc.3", InlineNone, fx(0), fx(1), Next;
    STLOC_0 = 0x0A, "stloc.0", InlineNone, fx(1), fx(0), Next;
    STLOC_1 = 0x0B, "stloc.1", InlineNone, fx(1), fx(0), Next;
    STLOC_2 = 0x0C, "stloc.2", InlineNone, fx(1), fx(0), Next;
    STLOC_3 = 0x0D, "stloc.3", InlineNone, fx(1), fx(0), Next;
    LDARG_S = 0x0E, "ldarg.s", ShortInlineVar, fx(0), fx(1), Next;
    LDARGA_S = 0x0F, "ldarga.s", ShortInlineVar, fx(0), fx(1), Next;
    STARG_S = 0x10, "starg.s", ShortInlineVar, fx(1), fx(0), Next;
    LDLOC_S = 0x11, "ldloc.s", ShortInlineVar, fx(0), fx(1), Next;
    LDLOCA_S = 0x12, "ldloca.s", ShortInlineVar, fx(0), fx(1), Next;
    STLOC_S = 0x13, "stloc.s", ShortInlineVar, fx(1), fx(0), Next;
    LDNULL = 0x14, "ldnull", InlineNone, fx(0), fx(1), Next;
    LDC_I4_M1 = 0x15, "ldc.i4.m1", InlineNone, fx(0), fx(1), Next;
    LDC_I4_0 = 0x16, "ldc.i4.0", InlineNone, fx(0), fx(1), Next;
    LDC_I4_1 = 0x17, "ldc.i4.1", InlineNone, fx(0), fx(1), Next;
    LDC_I4_2 = 0x18, "ldc.i4.2", InlineNone, fx(0), fx(1), Next;
    LDC_I4_3 = 0x19, "ldc.i4.3", InlineNone, fx(0), fx(1), Next;
    LDC_I4_4 = 0x1A, "ldc.i4.4", InlineNone, fx(0), fx(1), Next;
    LDC_I4_5 = 0x1B, "ldc.i4.5", InlineNone, fx(0), fx(1), Next;
    LDC_I4_6 = 0x1C, "ldc.i4.6", InlineNone, fx(0), fx(1), Next;
    LDC_I4_7 = 0x1D, "ldc.i4.7", InlineNone, fx(0), fx(1), Next;
    LDC_I4_8 = 0x1E, "ldc.i4.8", InlineNone, fx(0), fx(1), Next;
    LDC_I4_S = 0x1F, "ldc.i4.s", ShortInlineI, fx(0), fx(1), Next;
    LDC_I4 = 0x20, "ldc.i4", InlineI, fx(0), fx(1), Next;
    LDC_I8 = 0x21, "ldc.i8", InlineI8, fx(0), fx(1), Next;
    LDC_R4 = 0x22, "ldc.r4", ShortInlineR, fx(0), fx(1), Next;
    LDC_R8 = 0x23, "ldc.r8", InlineR, fx(0), fx(1), Next;
    DUP = 0x25, "dup", InlineNone, fx(1), fx(2), Next;
    POP = 0x26, "pop", InlineNone, fx(1), fx(0), Next;
    JMP = 0x27, "jmp", InlineMethod, fx(0), fx(0), Call;
    CALL = 0x28, "call", InlineMethod, VAR, VAR, Call;
    CALLI = 0x29, "calli", InlineSig, VAR, VAR, Call;
    RET = 0x2A, "ret", InlineNone, VAR, fx(0), Return;
    BR_S = 0x2B, "br.s", ShortInlineBrTarget, fx(0), fx(0), Branch;
    BRFALSE_S = 0x2C, "brfalse.s", ShortInlineBrTarget, fx(1), fx(0), CondBranch;
    BRTRUE_S = 0x2D, "brtrue.s", ShortInlineBrTarget, fx(1), fx(0), CondBranch;
    BEQ_S = 0x2E, "beq.s", ShortInlineBrTarget, fx(2), fx(0), CondBranch;
    BGE_S = 0x2F, "bge.s", ShortInlineBrTarget, fx(2), fx(0), CondBranch;
    BGT_S = 0x30, "bgt.s", ShortInlineBrTarget, fx(2), fx(0), CondBranch;
    BLE_S = 0x31, "ble.s", ShortInlineBrTarget, fx(2), fx(0), CondBranch;
    BLT_S = 0x32, "blt.s", ShortInlineBrTarget, fx(2), fx(0), CondBranch;
    BNE_UN_S = 0x33, "bne.un.s", ShortInlineBrTarget, fx(2), fx(0), CondBranch;
    BGE_UN_S = 0x34, "bge.un.s", ShortInlineBrTarget, fx(2), fx(0), CondBranch;
    BGT_UN_S = 0x35, "bgt.un.s", ShortInlineBrTarget, fx(2), fx(0), CondBranch;
    BLE_UN_S = 0x36, "ble.un.s", ShortInlineBrTarget, fx(2), fx(0), CondBranch;
    BLT_UN_S = 0x37, "blt.un.s", ShortInlineBrTarget, fx(2), fx(0), CondBranch;
    BR = 0x38, "br", InlineBrTarget, fx(0), fx(0), Branch;
    BRFALSE = 0x39, "brfalse", InlineBrTarget, fx(1), fx(0), CondBranch;
    BRTRUE = 0x3A, "brtrue", InlineBrTarget, fx(1), fx(0), CondBranch;
    BEQ = 0x3B, "beq", InlineBrTarget, fx(2), fx(0), CondBranch;
    BGE = 0x3C, "bge", InlineBrTarget, fx(2), fx(0), CondBranch;
    BGT = 0x3D, "bgt", InlineBrTarget, fx(2), fx(0), CondBranch;
    BLE = 0x3E, "ble", InlineBrTarget, fx(2), fx(0), CondBranch;
    BLT = 0x3F, "blt", InlineBrTarget, fx(2), fx(0), CondBranch;
    BNE_UN = 0x40, "bne.un", InlineBrTarget, fx(2), fx(0), CondBranch;
    BGE_UN = 0x41, "bge.un", InlineBrTarget, fx(2), fx(0), CondBranch;
    BGT_UN = 0x42, "bgt.un", InlineBrTarget, fx(2), fx(0), CondBranch;
    BLE_UN = 0x43, "ble.un", InlineBrTarget, fx(2), fx(0), CondBranch;
    BLT_UN = 0x44, "blt.un", InlineBrTarget, fx(2), fx(0), CondBranch;
    SWITCH = 0x45, "switch", InlineSwitch, fx(1), fx(0), CondBranch;
    LDIND_I1 = 0x46, "ldind.i1", InlineNone, fx(1), fx(1), Next;
    LDIND_U1 = 0x47, "ldind.u1", InlineNone, fx(1), fx(1), Next;
    LDIND_I2 = 0x48, "ldind.i2", InlineNone, fx(1), fx(1), Next;
    LDIND_U2 = 0x49, "ldind.u2", InlineNone, fx(1), fx(1), Next;
    LDIND_I4 = 0x4A, "ldind.i4", InlineNone, fx(1), fx(1), Next;
    LDIND_U4 = 0x4B, "ldind.u4", InlineNone, fx(1), fx(1), Next;
    LDIND_I8 = 0x4C, "ldind.i8", InlineNone, fx(1), fx(1), Next;
    LDIND_I = 0x4D, "ldind.i", InlineNone, fx(1), fx(1), Next;
    LDIND_R4 = 0x4E, "ldind.r4", InlineNone, fx(1), fx(1), Next;
    LDIND_R8 = 0x4F, "ldind.r8", InlineNone, fx(1), fx(1), Next;
    LDIND_REF = 0x50, "ldind.ref", InlineNone, fx(1), fx(1), Next;
    STIND_REF = 0x51, "stind.ref", InlineNone, fx(2), fx(0), Next;
    STIND_I1 = 0x52, "stind.i1", InlineNone, fx(2), fx(0), Next;
    STIND_I2 = 0x53, "stind.i2", InlineNone, fx(2), fx(0), Next;
    STIND_I4 = 0x54, "stind.i4", InlineNone, fx(2), fx(0), Next;
    STIND_I8 = 0x55, "stind.i8", InlineNone, fx(2), fx(0), Next;
    STIND_R4 = 0x56, "stind.r4", InlineNone, fx(2), fx(0), Next;
    STIND_R8 = 0x57, "stind.r8", InlineNone, fx(2), fx(0), Next;
    ADD = 0x58, "add", InlineNone, fx(2), fx(1), Next;
    SUB = 0x59, "sub", InlineNone, fx(2), fx(1), Next;
    MUL = 0x5A, "mul", InlineNone, fx(2), fx(1), Next;
    DIV = 0x5B, "div", InlineNone, fx(2), fx(1), Next;
    DIV_UN = 0x5C, "div.un", InlineNone, fx(2), fx(1), Next;
    REM = 0x5D, "rem", InlineNone, fx(2), fx(1), Next;
    REM_UN = 0x5E, "rem.un", InlineNone, fx(2), fx(1), Next;
    AND = 0x5F, "and", InlineNone, fx(2), fx(1), Next;
    OR = 0x60, "or", InlineNone, fx(2), fx(1), Next;
    XOR = 0x61, "xor", InlineNone, fx(2), fx(1), Next;
    SHL = 0x62, "shl", InlineNone, fx(2), fx(1), Next;
    SHR = 0x63, "shr", InlineNone, fx(2), fx(1), Next;
    SHR_UN = 0x64, "shr.un", InlineNone, fx(2), fx(1), Next;
    NEG = 0x65, "neg", InlineNone, fx(1), fx(1), Next;
    NOT = 0x66, "not", InlineNone, fx(1), fx(1), Next;
    CONV_I1 = 0x67, "conv.i1", InlineNone, fx(1), fx(1), Next;
    CONV_I2 = 0x68, "conv.i2", InlineNone, fx(1), fx(1), Next;
    CONV_I4 = 0x69, "conv.i4", InlineNone, fx(1), fx(1), Next;
    CONV_I8 = 0x6A, "conv.i8", InlineNone, fx(1), fx(1), Next;
    CONV_R4 = 0x6B, "conv.r4", InlineNone, fx(1), fx(1), Next;
    CONV_R8 = 0x6C, "conv.r8", InlineNone, fx(1), fx(1), Next;
    CONV_U4 = 0x6D, "conv.u4", InlineNone, fx(1), fx(1), Next;
    CONV_U8 = 0x6E, "conv.u8", InlineNone, fx(1), fx(1), Next;
    CALLVIRT = 0x6F, "callvirt", InlineMethod, VAR, VAR, Call;
    CPOBJ = 0x70, "cpobj", InlineType, fx(2), fx(0), Next;
    LDOBJ = 0x71, "ldobj", InlineType, fx(1), fx(1), Next;
    LDSTR = 0x72, "ldstr", InlineString, fx(0), fx(1), Next;
    NEWOBJ = 0x73, "newobj", InlineMethod, VAR, fx(1), Call;
    CASTCLASS = 0x74, "castclass", InlineType, fx(1), fx(1), Next;
    ISINST = 0x75, "isinst", InlineType, fx(1), fx(1), Next;
    CONV_R_UN = 0x76, "conv.r.un", InlineNone, fx(1), fx(1), Next;
    UNBOX = 0x79, "unbox", InlineType, fx(1), fx(1), Next;
    THROW = 0x7A, "throw", InlineNone, fx(1), fx(0), Throw;
    LDFLD = 0x7B, "ldfld", InlineField, fx(1), fx(1), Next;
    LDFLDA = 0x7C, "ldflda", InlineField, fx(1), fx(1), Next;
    STFLD = 0x7D, "stfld", InlineField, fx(2), fx(0), Next;
    LDSFLD = 0x7E, "ldsfld", InlineField, fx(0), fx(1), Next;
    LDSFLDA = 0x7F, "ldsflda", InlineField, fx(0), fx(1), Next;
    STSFLD = 0x80, "stsfld", InlineField, fx(1), fx(0), Next;
    STOBJ = 0x81, "stobj", InlineType, fx(2), fx(0), Next;
    CONV_OVF_I1_UN = 0x82, "conv.ovf.i1.un", InlineNone, fx(1), fx(1), Next;
    CONV_OVF_I2_UN = 0x83, "conv.ovf.i2.un", InlineNone, fx(1), fx(1), Next;
    CONV_OVF_I4_UN = 0x84, "conv.ovf.i4.un", InlineNone, fx(1), fx(1), Next;
    CONV_OVF_I8_UN = 0x85, "conv.ovf.i8.un", InlineNone, fx(1), fx(1), Next;
    CONV_OVF_U1_UN = 0x86, "conv.ovf.u1.un", InlineNone, fx(1), fx(1), Next;
    CONV_OVF_U2_UN = 0x87, "conv.ovf.u2.un", InlineNone, fx(1), fx(1), Next;
    CONV_OVF_U4_UN = 0x88, "conv.ovf.u4.un", InlineNone, fx(1), fx(1), Next;
    CONV_OVF_U8_UN = 0x89, "conv.ovf.u8.un", InlineNone, fx(1), fx(1), Next;
    CONV_OVF_I_UN = 0x8A, "conv.ovf.i.un", InlineNone, fx(1), fx(1), Next;
    CONV_OVF_U_UN = 0x8B, "conv.ovf.u.un", InlineNone, fx(1), fx(1), Next;
    BOX = 0x8C, "box", InlineType, fx(1), fx(1), Next;
    NEWARR = 0x8D, "newarr", InlineType, fx(1), fx(1), Next;
    LDLEN = 0x8E, "ldlen", InlineNone, fx(1), fx(1), Next;
    LDELEMA = 0x8F, "ldelema", InlineType, fx(2), fx(1), Next;
    LDELEM_I1 = 0x90, "ldelem.i1", InlineNone, fx(2), fx(1), Next;
    LDELEM_U1 = 0x91, "ldelem.u1", InlineNone, fx(2), fx(1), Next;
    LDELEM_I2 = 0x92, "ldelem.i2", InlineNone, fx(2), fx(1), Next;
    LDELEM_U2 = 0x93, "ldelem.u2", InlineNone, fx(2), fx(1), Next;
    LDELEM_I4 = 0x94, "ldelem.i4", InlineNone, fx(2), fx(1), Next;
    LDELEM_U4 = 0x95, "ldelem.u4", InlineNone, fx(2), fx(1), Next;
    LDELEM_I8 = 0x96, "ldelem.i8", InlineNone, fx(2), fx(1), Next;
    LDELEM_I = 0x97, "ldelem.i", InlineNone, fx(2), fx(1), Next;
    LDELEM_R4 = 0x98, "ldelem.r4", InlineNone, fx(2), fx(1), Next;
    LDELEM_R8 = 0x99, "ldelem.r8", InlineNone, fx(2), fx(1), Next;
    LDELEM_REF = 0x9A, "ldelem.ref", InlineNone, fx(2), fx(1), Next;
    STELEM_I = 0x9B, "stelem.i", InlineNone, fx(3), fx(0), Next;
    STELEM_I1 = 0x9C, "stelem.i1", InlineNone, fx(3), fx(0), Next;
    STELEM_I2 = 0x9D, "stelem.i2", InlineNone, fx(3), fx(0), Next;
    STELEM_I4 = 0x9E, "stelem.i4", InlineNone, fx(3), fx(0), Next;
    STELEM_I8 = 0x9F, "stelem.i8", InlineNone, fx(3), fx(0), Next;
    STELEM_R4 = 0xA0, "stelem.r4", InlineNone, fx(3), fx(0), Next;
    STELEM_R8 = 0xA1, "stelem.r8", InlineNone, fx(3), fx(0), Next;
    STELEM_REF = 0xA2, "stelem.ref", InlineNone, fx(3), fx(0), Next;
    LDELEM = 0xA3, "ldelem", InlineType, fx(2), fx(1), Next;
    STELEM = 0xA4, "stelem", InlineType, fx(3), fx(0), Next;
    UNBOX_ANY = 0xA5, "unbox.any", InlineType, fx(1), fx(1), Next;
    CONV_OVF_I1 = 0xB3, "conv.ovf.i1", InlineNone, fx(1), fx(1), Next;
    CONV_OVF_U1 = 0xB4, "conv.ovf.u1", InlineNone, fx(1), fx(1), Next;
    CONV_OVF_I2 = 0xB5, "conv.ovf.i2", InlineNone, fx(1), fx(1), Next;
    CONV_OVF_U2 = 0xB6, "conv.ovf.u2", InlineNone, fx(1), fx(1), Next;
    CONV_OVF_I4 = 0xB7, "conv.ovf.i4", InlineNone, fx(1), fx(1), Next;
    CONV_OVF_U4 = 0xB8, "conv.ovf.u4", InlineNone, fx(1), fx(1), Next;
    CONV_OVF_I8 = 0xB9, "conv.ovf.i8", InlineNone, fx(1), fx(1), Next;
    CONV_OVF_U8 = 0xBA, "conv.ovf.u8", InlineNone, fx(1), fx(1), Next;
    REFANYVAL = 0xC2, "refanyval", InlineType, fx(1), fx(1), Next;
    CKFINITE = 0xC3, "ckfinite", InlineNone, fx(1), fx(1), Next;
    MKREFANY = 0xC6, "mkrefany", InlineType, fx(1), fx(1), Next;
    LDTOKEN = 0xD0, "ldtoken", InlineTok, fx(0), fx(1), Next;
    CONV_U2 = 0xD1, "conv.u2", InlineNone, fx(1), fx(1), Next;
    CONV_U1 = 0xD2, "conv.u1", InlineNone, fx(1), fx(1), Next;
    CONV_I = 0xD3, "conv.i", InlineNone, fx(1), fx(1), Next;
    CONV_OVF_I = 0xD4, "conv.ovf.i", InlineNone, fx(1), fx(1), Next;
    CONV_OVF_U = 0xD5, "conv.ovf.u", InlineNone, fx(1), fx(1), Next;
    ADD_OVF = 0xD6, "add.ovf", InlineNone, fx(2), fx(1), Next;
    ADD_OVF_UN = 0xD7, "add.ovf.un", InlineNone, fx(2), fx(1), Next;
    MUL_OVF = 0xD8, "mul.ovf", InlineNone, fx(2), fx(1), Next;
    MUL_OVF_UN = 0xD9, "mul.ovf.un", InlineNone, fx(2), fx(1), Next;
    SUB_OVF = 0xDA, "sub.ovf", InlineNone, fx(2), fx(1), Next;
    SUB_OVF_UN = 0xDB, "sub.ovf.un", InlineNone, fx(2), fx(1), Next;
    ENDFINALLY = 0xDC, "endfinally", InlineNone, fx(0), fx(0), Return;
    LEAVE = 0xDD, "leave", InlineBrTarget, fx(0), fx(0), Branch;
    LEAVE_S = 0xDE, "leave.s", ShortInlineBrTarget, fx(0), fx(0), Branch;
    STIND_I = 0xDF, "stind.i", InlineNone, fx(2), fx(0), Next;
    CONV_U = 0xE0, "conv.u", InlineNone, fx(1), fx(1), Next;
    ARGLIST = 0xFE00, "arglist", InlineNone, fx(0), fx(1), Next;
    CEQ = 0xFE01, "ceq", InlineNone, fx(2), fx(1), Next;
    CGT = 0xFE02, "cgt", InlineNone, fx(2), fx(1), Next;
    CGT_UN = 0xFE03, "cgt.un", InlineNone, fx(2), fx(1), Next;
    CLT = 0xFE04, "clt", InlineNone, fx(2), fx(1), Next;
    CLT_UN = 0xFE05, "clt.un", InlineNone, fx(2), fx(1), Next;
    LDFTN = 0xFE06, "ldftn", InlineMethod, fx(0), fx(1), Next;
    LDVIRTFTN = 0xFE07, "ldvirtftn", InlineMethod, fx(1), fx(1), Next;
    LDARG = 0xFE09, "ldarg", InlineVar, fx(0), fx(1), Next;
    LDARGA = 0xFE0A, "ldarga", InlineVar, fx(0), fx(1), Next;
    STARG = 0xFE0B, "starg", InlineVar, fx(1), fx(0), Next;
    LDLOC = 0xFE0C, "ldloc", InlineVar, fx(0), fx(1), Next;
    LDLOCA = 0xFE0D, "ldloca", InlineVar, fx(0), fx(1), Next;
    STLOC = 0xFE0E, "stloc", InlineVar, fx(1), fx(0), Next;
    LOCALLOC = 0xFE0F, "localloc", InlineNone, fx(1), fx(1), Next;
    ENDFILTER = 0xFE11, "endfilter", InlineNone, fx(1), fx(0), Return;
    UNALIGNED = 0xFE12, "unaligned.", ShortInlineI, fx(0), fx(0), Meta;
    VOLATILE = 0xFE13, "volatile.", InlineNone, fx(0), fx(0), Meta;
    TAIL = 0xFE14, "tail.", InlineNone, fx(0), fx(0), Meta;
    INITOBJ = 0xFE15, "initobj", InlineType, fx(1), fx(0), Next;
    CONSTRAINED = 0xFE16, "constrained.", InlineType, fx(0), fx(0), Meta;
    CPBLK = 0xFE17, "cpblk", InlineNone, fx(3), fx(0), Next;
    INITBLK = 0xFE18, "initblk", InlineNone, fx(3), fx(0), Next;
    NO = 0xFE19, "no.", ShortInlineI, fx(0), fx(0), Meta;
    RETHROW = 0xFE1A, "rethrow", InlineNone, fx(0), fx(0), Throw;
    SIZEOF = 0xFE1C, "sizeof", InlineType, fx(0), fx(1), Next;
    REFANYTYPE = 0xFE1D, "refanytype", InlineNone, fx(1), fx(1), Next;
    READONLY = 0xFE1E, "readonly.", InlineNone, fx(0), fx(0), Meta;
}
