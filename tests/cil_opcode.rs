//! Checks the opcode table against an independent hand-written list
//! (values and operand sizes from ECMA-335 Partition III).

use corprof::cil::{FlowControl, OpCode, OperandKind, StackEffect};

/// (name, value, operand size in bytes; switch = 4 for its count)
const EXPECTED: &[(&str, u16, usize)] = &[
    ("nop", 0x00, 0),
    ("break", 0x01, 0),
    ("ldarg.0", 0x02, 0),
    ("ldloc.0", 0x06, 0),
    ("stloc.0", 0x0A, 0),
    ("ldarg.s", 0x0E, 1),
    ("ldloca.s", 0x12, 1),
    ("ldnull", 0x14, 0),
    ("ldc.i4.m1", 0x15, 0),
    ("ldc.i4.s", 0x1F, 1),
    ("ldc.i4", 0x20, 4),
    ("ldc.i8", 0x21, 8),
    ("ldc.r4", 0x22, 4),
    ("ldc.r8", 0x23, 8),
    ("dup", 0x25, 0),
    ("jmp", 0x27, 4),
    ("call", 0x28, 4),
    ("calli", 0x29, 4),
    ("ret", 0x2A, 0),
    ("br.s", 0x2B, 1),
    ("blt.un.s", 0x37, 1),
    ("br", 0x38, 4),
    ("blt.un", 0x44, 4),
    ("switch", 0x45, 4),
    ("stind.r8", 0x57, 0),
    ("conv.u8", 0x6E, 0),
    ("callvirt", 0x6F, 4),
    ("ldstr", 0x72, 4),
    ("newobj", 0x73, 4),
    ("throw", 0x7A, 0),
    ("ldfld", 0x7B, 4),
    ("box", 0x8C, 4),
    ("ldelem.ref", 0x9A, 0),
    ("unbox.any", 0xA5, 4),
    ("conv.ovf.i1", 0xB3, 0),
    ("refanyval", 0xC2, 4),
    ("mkrefany", 0xC6, 4),
    ("ldtoken", 0xD0, 4),
    ("endfinally", 0xDC, 0),
    ("leave", 0xDD, 4),
    ("leave.s", 0xDE, 1),
    ("conv.u", 0xE0, 0),
    ("arglist", 0xFE00, 0),
    ("ceq", 0xFE01, 0),
    ("ldftn", 0xFE06, 4),
    ("ldarg", 0xFE09, 2),
    ("stloc", 0xFE0E, 2),
    ("localloc", 0xFE0F, 0),
    ("endfilter", 0xFE11, 0),
    ("unaligned.", 0xFE12, 1),
    ("volatile.", 0xFE13, 0),
    ("tail.", 0xFE14, 0),
    ("initobj", 0xFE15, 4),
    ("constrained.", 0xFE16, 4),
    ("no.", 0xFE19, 1),
    ("rethrow", 0xFE1A, 0),
    ("sizeof", 0xFE1C, 4),
    ("readonly.", 0xFE1E, 0),
];

#[test]
fn sample_matches_hand_written_list() {
    for &(name, value, size) in EXPECTED {
        let op = OpCode::from_value(value).unwrap_or_else(|| panic!("{name} missing"));
        assert_eq!(op.name(), name, "name of 0x{value:04X}");
        assert_eq!(op.operand_kind().size(), size, "operand size of {name}");
        assert_eq!(op.size(), if value > 0xFF { 2 } else { 1 });
        let by_name: Vec<_> = OpCode::all().filter(|o| o.name() == name).collect();
        assert_eq!(by_name, vec![op], "{name} is listed once");
    }
}

#[test]
fn table_has_no_duplicates_and_full_count() {
    let all: Vec<OpCode> = OpCode::all().collect();
    // ECMA-335 Partition III one-byte ranges: 0x00-0x23 (36), 0x25-0x76 (82),
    // 0x79-0xA5 (45), 0xB3-0xBA (8), 0xC2, 0xC3, 0xC6 (3), 0xD0-0xE0 (17) = 191.
    assert_eq!(all.iter().filter(|o| o.value() <= 0xFF).count(), 191);
    // Two-byte: 0xFE00-0xFE1E (31) less the unused 0x08, 0x10, 0x1B = 28.
    assert_eq!(all.iter().filter(|o| o.value() > 0xFF).count(), 28);
    let mut values: Vec<u16> = all.iter().map(|o| o.value()).collect();
    values.sort_unstable();
    values.dedup();
    assert_eq!(values.len(), all.len(), "duplicate opcode values");
    let mut names: Vec<&str> = all.iter().map(|o| o.name()).collect();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), all.len(), "duplicate opcode names");
    for op in all {
        assert_eq!(OpCode::from_value(op.value()), Some(op));
        assert_eq!(op.info().code, op);
    }
}

#[test]
fn unused_values_are_rejected() {
    for v in [
        0x24u16, 0x77, 0x78, 0xA6, 0xA7, 0xBB, 0xC4, 0xE1, 0xFD, 0xFF, 0xFE08, 0xFE10, 0xFE1B,
        0xFE1F, 0xFEFF, 0x1234,
    ] {
        assert_eq!(OpCode::from_value(v), None, "0x{v:04X} should be unused");
    }
}

#[test]
fn stack_behaviour_and_flow() {
    let info = |v| OpCode::from_value(v).unwrap().info();
    assert_eq!(info(0x25).pops, StackEffect::Fixed(1)); // dup
    assert_eq!(info(0x25).pushes, StackEffect::Fixed(2));
    assert_eq!(info(0x28).pops, StackEffect::Varies); // call
    assert_eq!(info(0x28).pushes, StackEffect::Varies);
    assert_eq!(info(0x2A).pops, StackEffect::Varies); // ret
    assert_eq!(info(0x73).pushes, StackEffect::Fixed(1)); // newobj
    assert_eq!(info(0xA2).pops, StackEffect::Fixed(3)); // stelem.ref
    assert_eq!(info(0xFE17).pops, StackEffect::Fixed(3)); // cpblk
    assert_eq!(info(0x2E).pops, StackEffect::Fixed(2)); // beq.s
    assert_eq!(info(0x45).flow, FlowControl::CondBranch);
    assert_eq!(info(0xDD).flow, FlowControl::Branch);
    assert_eq!(info(0x7A).flow, FlowControl::Throw);
    assert_eq!(info(0xFE16).operand, OperandKind::InlineType);
    for p in [0xFE12u16, 0xFE13, 0xFE14, 0xFE16, 0xFE19, 0xFE1E] {
        assert!(OpCode::from_value(p).unwrap().is_prefix());
    }
    assert!(!OpCode::CALL.is_prefix());
}

#[test]
fn short_branches_have_long_forms() {
    let pairs = [
        (0x2B, 0x38),
        (0x2C, 0x39),
        (0x2D, 0x3A),
        (0x2E, 0x3B),
        (0x33, 0x40),
        (0x37, 0x44),
        (0xDE, 0xDD),
    ];
    for (s, l) in pairs {
        let s = OpCode::from_value(s).unwrap();
        assert_eq!(s.long_form().map(|o| o.value()), Some(l), "{s}");
    }
    assert_eq!(OpCode::BR.long_form(), None);
    assert_eq!(OpCode::NOP.long_form(), None);
}
