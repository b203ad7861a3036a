//! Hand-assembled method bodies: round trips, edits, widening and promotion.
//! Every expected byte string is written by hand from ECMA-335 II.25.4 and
//! Partition III.

use corprof::cil::{
    ClauseKind, ErrorKind, ExceptionClause, Label, MethodBody, OpCode, Operand, StackSig, Token,
};

fn roundtrip(bytes: &[u8]) -> MethodBody {
    let body = MethodBody::decode(bytes).expect("decode");
    assert_eq!(
        body.encode().expect("encode"),
        bytes,
        "byte-identical round trip"
    );
    body
}

fn no_calls(_: Token) -> Option<StackSig> {
    None
}

/// ldarg.0; brtrue.s L; ldc.i4.0; ret; L: ldc.i4.1; ret
const TINY_BRANCH: [u8; 8] = [
    0x1E, // tiny header: (7 << 2) | 2
    0x02, // IL_0000 ldarg.0
    0x2D, 0x02, // IL_0001 brtrue.s IL_0005
    0x16, // IL_0003 ldc.i4.0
    0x2A, // IL_0004 ret
    0x17, // IL_0005 ldc.i4.1
    0x2A, // IL_0006 ret
];

#[test]
fn tiny_body_round_trip_and_listing() {
    let body = roundtrip(&TINY_BRANCH);
    assert!(!body.header().fat);
    assert_eq!(body.header().code_size(), 7);
    assert_eq!(body.header().max_stack, 8);
    assert_eq!(body.instructions().len(), 6);
    assert_eq!(body.instructions()[4].offset(), 5);
    assert_eq!(
        body.to_string(),
        "IL_0000: ldarg.0\nIL_0001: brtrue.s IL_0005\nIL_0003: ldc.i4.0\nIL_0004: ret\n\
         IL_0005: ldc.i4.1\nIL_0006: ret\n"
    );
    assert_eq!(body.compute_max_stack(no_calls).unwrap(), 1);
}

#[test]
fn forward_short_branch_widens_and_header_becomes_fat() {
    let mut body = MethodBody::decode(&TINY_BRANCH).unwrap();
    for _ in 0..130 {
        body.insert(2, OpCode::NOP, Operand::None).unwrap();
    }
    let mut expected = vec![
        0x03, 0x30, // fat flags, header size 3 dwords
        0x08, 0x00, // max stack 8 (kept from the tiny header)
        0x8C, 0x00, 0x00, 0x00, // code size 140
        0x00, 0x00, 0x00, 0x00, // no locals
        0x02, // ldarg.0
        0x3A, 0x84, 0x00, 0x00, 0x00, // brtrue IL_008A (138 - 6 = 132)
    ];
    expected.extend([0x00; 130]);
    expected.extend([0x16, 0x2A, 0x17, 0x2A]);
    assert_eq!(body.encode().unwrap(), expected);
    body.layout().unwrap();
    assert_eq!(body.instructions()[1].opcode(), OpCode::BRTRUE);
    assert_eq!(body.header().code_size(), 140);
    // Re-decoding the output gives the same body listing.
    let again = MethodBody::decode(&expected).unwrap();
    assert_eq!(again.to_string(), body.to_string());
}

#[test]
fn backward_short_branch_widens() {
    // IL_0000 nop; IL_0001 br.s IL_0000 (next 3 → -3)
    let mut body = roundtrip(&[0x0E, 0x00, 0x2B, 0xFD]);
    for _ in 0..130 {
        body.insert(1, OpCode::NOP, Operand::None).unwrap();
    }
    let mut expected = vec![0x03, 0x30, 0x08, 0x00, 0x88, 0x00, 0x00, 0x00, 0, 0, 0, 0];
    expected.extend([0x00; 131]);
    // br at 131, next 136, target 0: -136 = 0xFFFFFF78
    expected.extend([0x38, 0x78, 0xFF, 0xFF, 0xFF]);
    assert_eq!(body.encode().unwrap(), expected);
}

#[test]
fn short_branch_stays_short_at_the_limit() {
    // br.s over 127 nops: next 2, target 129 → +127, still short.
    let mut body = MethodBody::new();
    body.push(OpCode::NOP, Operand::None).unwrap();
    let ret = body.push(OpCode::RET, Operand::None).unwrap();
    body.insert(0, OpCode::BR_S, Operand::Branch(ret)).unwrap();
    for _ in 0..126 {
        body.insert(1, OpCode::NOP, Operand::None).unwrap();
    }
    let bytes = body.encode().unwrap();
    assert_eq!(&bytes[..3], &[0x03, 0x30, 0x08]);
    assert_eq!(&bytes[12..14], &[0x2B, 0x7F]);
    assert_eq!(bytes.len(), 12 + 2 + 127 + 1);
    // One more nop pushes it to +128: widened to br: 128 nops, ret at 133, next 5 → +128.
    body.insert(1, OpCode::NOP, Operand::None).unwrap();
    let bytes = body.encode().unwrap();
    assert_eq!(&bytes[12..17], &[0x38, 0x80, 0x00, 0x00, 0x00]);
}

/// ldarg.0; switch (L0, L1); ldc.i4.m1; ret; L0: ldc.i4.0; ret; L1: ldc.i4.1; ret
const SWITCH: [u8; 21] = [
    0x52, // tiny: (20 << 2) | 2
    0x02, // IL_0000 ldarg.0
    0x45, 0x02, 0x00, 0x00, 0x00, // IL_0001 switch, 2 targets (next = 0x0E)
    0x02, 0x00, 0x00, 0x00, // → IL_0010
    0x04, 0x00, 0x00, 0x00, // → IL_0012
    0x15, 0x2A, // IL_000E ldc.i4.m1; IL_000F ret
    0x16, 0x2A, // IL_0010 ldc.i4.0; IL_0011 ret
    0x17, 0x2A, // IL_0012 ldc.i4.1; IL_0013 ret
];

#[test]
fn switch_round_trip_listing_and_remove_retargets() {
    let mut body = roundtrip(&SWITCH);
    assert!(body
        .to_string()
        .contains("IL_0001: switch (IL_0010, IL_0012)\nIL_000e: ldc.i4.m1\n"));
    // Remove `ldc.i4.0` (a switch target): the target moves to the next
    // instruction (the `ret` that followed it).
    let l0 = body.instructions()[4].label();
    let removed = body.remove(l0).unwrap();
    assert_eq!(removed.opcode(), OpCode::LDC_I4_0);
    let expected = [
        0x4E, // (19 << 2) | 2
        0x02, 0x45, 0x02, 0x00, 0x00, 0x00, //
        0x02, 0x00, 0x00, 0x00, // → IL_0010 (the ret)
        0x03, 0x00, 0x00, 0x00, // → IL_0011
        0x15, 0x2A, 0x2A, 0x17, 0x2A,
    ];
    assert_eq!(body.encode().unwrap(), expected);
}

/// try { try { ldarg.0; pop; leave.s END } catch [0x01000001] { pop; leave.s END } }
/// finally { nop; endfinally } END: ret
const EH_SMALL: [u8; 52] = [
    0x1B, 0x30, // fat | MoreSects | InitLocals, size 3
    0x01, 0x00, // max stack 1
    0x0A, 0x00, 0x00, 0x00, // code size 10
    0x02, 0x00, 0x00, 0x11, // locals 0x11000002
    0x02, // IL_0000 ldarg.0
    0x26, // IL_0001 pop
    0xDE, 0x05, // IL_0002 leave.s IL_0009
    0x26, // IL_0004 pop
    0xDE, 0x02, // IL_0005 leave.s IL_0009
    0x00, // IL_0007 nop
    0xDC, // IL_0008 endfinally
    0x2A, // IL_0009 ret
    0x00, 0x00, // pad to 4
    0x01, 0x1C, 0x00, 0x00, // small EH section, 28 bytes
    0x00, 0x00, 0x00, 0x00, 0x04, 0x04, 0x00, 0x03, 0x01, 0x00, 0x00, 0x01, // catch
    0x02, 0x00, 0x00, 0x00, 0x07, 0x07, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, // finally
];

#[test]
fn eh_small_round_trip() {
    let body = roundtrip(&EH_SMALL);
    let h = body.header();
    assert!(h.fat && h.init_locals && h.more_sects());
    assert_eq!(h.local_var_sig, Some(Token(0x1100_0002)));
    assert_eq!(body.clauses().len(), 2);
    let labels: Vec<Label> = body.instructions().iter().map(|i| i.label()).collect();
    let c = &body.clauses()[0];
    assert_eq!(c.kind, ClauseKind::Catch(Token(0x0100_0001)));
    assert_eq!((c.try_start, c.try_end), (labels[0], labels[3]));
    assert_eq!((c.handler_start, c.handler_end), (labels[3], labels[5]));
    let f = &body.clauses()[1];
    assert_eq!(f.kind, ClauseKind::Finally);
    assert_eq!((f.handler_start, f.handler_end), (labels[5], labels[7]));
    assert_eq!(body.compute_max_stack(no_calls).unwrap(), 1);
    let text = body.to_string();
    assert!(text.contains(".try IL_0000 to IL_0004 catch 0x01000001 handler IL_0004 to IL_0007\n"));
    assert!(text.contains(".try IL_0000 to IL_0007 finally handler IL_0007 to IL_0009\n"));
}

#[test]
fn eh_small_section_widens_to_fat() {
    let mut body = MethodBody::decode(&EH_SMALL).unwrap();
    for _ in 0..300 {
        body.insert(1, OpCode::NOP, Operand::None).unwrap();
    }
    let mut expected = vec![
        0x1B, 0x30, 0x01, 0x00, //
        0x36, 0x01, 0x00, 0x00, // code size 310
        0x02, 0x00, 0x00, 0x11, //
        0x02,
    ];
    expected.extend([0x00; 300]);
    expected.extend([0x26, 0xDE, 0x05, 0x26, 0xDE, 0x02, 0x00, 0xDC, 0x2A]);
    expected.extend([0x00, 0x00]); // 322 → 324
    expected.extend([0x41, 0x34, 0x00, 0x00]); // fat EH section, 52 bytes
    expected.extend([
        0, 0, 0, 0, 0, 0, 0, 0, 0x30, 0x01, 0, 0, // catch: try 0, len 304
        0x30, 0x01, 0, 0, 3, 0, 0, 0, 0x01, 0, 0, 0x01, // handler 304, len 3, class
        2, 0, 0, 0, 0, 0, 0, 0, 0x33, 0x01, 0, 0, // finally: try 0, len 307
        0x33, 0x01, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, // handler 307, len 2
    ]);
    assert_eq!(body.encode().unwrap(), expected);
    // And back: the fat section decodes to the same clauses.
    let again = roundtrip(&expected);
    assert_eq!(again.clauses().len(), 2);
}

#[test]
fn filter_and_fault_clauses_and_several_sections() {
    // IL_0000 leave.s IL_000A ... a body with a filter clause in a small
    // section followed (MoreSects) by a fat section holding a fault clause.
    let bytes = [
        0x0B, 0x30, 0x02, 0x00, // fat | MoreSects, max stack 2
        0x0C, 0x00, 0x00, 0x00, // code size 12
        0x00, 0x00, 0x00, 0x00, //
        0x00, // IL_0000 nop          (try)
        0xDE, 0x09, // IL_0001 leave.s IL_000C
        0x26, // IL_0003 pop          (filter)
        0x17, // IL_0004 ldc.i4.1
        0xFE, 0x11, // IL_0005 endfilter
        0x26, // IL_0007 pop          (filter handler)
        0xDE, 0x02, // IL_0008 leave.s IL_000C
        0x00, // IL_000A nop          (fault handler)
        0xDC, // IL_000B endfinally
        // code ends at 24: aligned
        0x81, 0x10, 0x00, 0x00, // small section, more sections follow, 16 bytes
        0x01, 0x00, 0x00, 0x00, 0x03, 0x07, 0x00, 0x03, 0x03, 0x00, 0x00, 0x00, // filter
        0x41, 0x1C, 0x00, 0x00, // fat section, 28 bytes
        4, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 0x0A, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, // fault
    ];
    let body = roundtrip(&bytes);
    assert_eq!(body.clauses().len(), 2);
    let l = |i: usize| body.instructions()[i].label();
    assert_eq!(body.clauses()[0].kind, ClauseKind::Filter(l(2)));
    assert_eq!(body.clauses()[1].kind, ClauseKind::Fault);
    assert_eq!(body.clauses()[1].handler_end, Label::END);
    // Filter and handler start with the exception on the stack: depth 1.
    assert_eq!(body.compute_max_stack(no_calls).unwrap(), 1);
}

#[test]
fn tiny_promoted_to_fat_by_max_stack_and_locals() {
    // Nine pushes then nine pops: needs max stack 9 > 8.
    let mut code = vec![0x16; 9];
    code.extend([0x26; 9]);
    code.push(0x2A);
    let mut tiny = vec![((code.len() as u8) << 2) | 2];
    tiny.extend(&code);
    let mut body = roundtrip(&tiny);
    assert_eq!(body.update_max_stack(no_calls).unwrap(), 9);
    let mut expected = vec![0x03, 0x30, 0x09, 0x00, 19, 0, 0, 0, 0, 0, 0, 0];
    expected.extend(&code);
    assert_eq!(body.encode().unwrap(), expected);

    let mut body = MethodBody::decode(&[0x0A, 0x00, 0x2A]).unwrap();
    body.header_mut().local_var_sig = Some(Token(0x1100_0001));
    assert_eq!(
        body.encode().unwrap(),
        [0x03, 0x30, 0x08, 0x00, 2, 0, 0, 0, 0x01, 0x00, 0x00, 0x11, 0x00, 0x2A]
    );
}

#[test]
fn adding_a_clause_to_a_tiny_body() {
    // nop; leave.s L; endfinally... build: try { nop; leave.s END } finally { endfinally } END: ret
    let mut body = MethodBody::new();
    let nop = body.push(OpCode::NOP, Operand::None).unwrap();
    let ret = body.push(OpCode::RET, Operand::None).unwrap();
    let fin = body
        .insert_before(ret, OpCode::ENDFINALLY, Operand::None)
        .unwrap();
    body.insert_after(nop, OpCode::LEAVE_S, Operand::Branch(ret))
        .unwrap();
    body.clauses_mut().push(ExceptionClause::new(
        ClauseKind::Finally,
        nop,
        fin,
        fin,
        ret,
    ));
    let expected = [
        0x0B, 0x30, 0x08, 0x00, 5, 0, 0, 0, 0, 0, 0, 0, // fat | MoreSects
        0x00, 0xDE, 0x01, 0xDC, 0x2A, // nop; leave.s IL_0004; endfinally; ret
        0, 0, 0, // pad 17 → 20
        0x01, 0x10, 0x00, 0x00, // small section, one clause
        0x02, 0x00, 0x00, 0x00, 0x03, 0x03, 0x00, 0x01, 0, 0, 0, 0,
    ];
    assert_eq!(body.encode().unwrap(), expected);
    assert_eq!(body.compute_max_stack(no_calls).unwrap(), 0);
}

#[test]
fn profiler_style_edit_entry_probe_and_constant() {
    // static int F() { return 41; } compiled by csc (fat, with a local):
    //   nop; ldc.i4.s 41; stloc.0; br.s IL_0006; ldloc.0; ret
    let original = [
        0x13, 0x30, 0x01, 0x00, 0x08, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x11, //
        0x00, 0x1F, 0x29, 0x0A, 0x2B, 0x00, 0x06, 0x2A,
    ];
    let mut body = roundtrip(&original);
    let probe = Token(0x0A00_0007);
    body.insert(0, OpCode::CALL, Operand::Token(probe)).unwrap();
    let at = body
        .find(|i| i.opcode() == OpCode::LDC_I4_S && *i.operand() == Operand::I8(41))
        .unwrap();
    body.replace(at, OpCode::LDC_I4_S, Operand::I8(42)).unwrap();
    let max = body
        .update_max_stack(|t| {
            (t == probe).then_some(StackSig {
                params: 0,
                has_this: false,
                returns_value: false,
            })
        })
        .unwrap();
    assert_eq!(max, 1);
    let expected = [
        0x13, 0x30, 0x01, 0x00, 0x0D, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x11, //
        0x28, 0x07, 0x00, 0x00, 0x0A, // call 0x0A000007
        0x00, 0x1F, 0x2A, 0x0A, 0x2B, 0x00, 0x06, 0x2A,
    ];
    assert_eq!(body.encode().unwrap(), expected);
}

#[test]
fn max_stack_uses_call_signatures() {
    // static int Fib(int n) => n < 2 ? n : Fib(n - 1) + Fib(n - 2);
    let code = [
        0x02, 0x18, 0x2F, 0x02, 0x02, 0x2A, // ldarg.0 ldc.i4.2 bge.s +2 ldarg.0 ret
        0x02, 0x17, 0x59, 0x28, 0x01, 0x00, 0x00, 0x06, // ldarg.0 ldc.i4.1 sub call Fib
        0x02, 0x18, 0x59, 0x28, 0x01, 0x00, 0x00, 0x06, // ldarg.0 ldc.i4.2 sub call Fib
        0x58, 0x2A, // add ret
    ];
    let mut bytes = vec![((code.len() as u8) << 2) | 2];
    bytes.extend(code);
    let body = roundtrip(&bytes);
    let fib = Token(0x0600_0001);
    let err = body.compute_max_stack(no_calls).unwrap_err();
    assert_eq!(err.kind(), &ErrorKind::UnresolvedToken(fib));
    assert_eq!(err.offset(), 9);
    let sig = corprof::cil::MethodSig::decode(&[0x00, 0x01, 0x08, 0x08]).unwrap();
    let max = body
        .compute_max_stack(|t| (t == fib).then(|| sig.stack_sig()))
        .unwrap();
    assert_eq!(max, 3);

    // newobj pops only the parameters and pushes the object; callvirt pops `this`.
    let mut b = MethodBody::new();
    let ctor = Token(0x0A00_0001);
    let m = Token(0x0A00_0002);
    b.push(OpCode::LDC_I4_1, Operand::None).unwrap();
    b.push(OpCode::LDC_I4_2, Operand::None).unwrap();
    b.push(OpCode::NEWOBJ, Operand::Token(ctor)).unwrap(); // (int, int) → 1
    b.push(OpCode::DUP, Operand::None).unwrap(); // 2
    b.push(OpCode::CALLVIRT, Operand::Token(m)).unwrap(); // this → int: 2
    b.push(OpCode::POP, Operand::None).unwrap();
    b.push(OpCode::POP, Operand::None).unwrap();
    b.push(OpCode::RET, Operand::None).unwrap();
    let max = b
        .compute_max_stack(|t| {
            Some(if t == ctor {
                StackSig {
                    params: 2,
                    has_this: true,
                    returns_value: false,
                }
            } else {
                StackSig {
                    params: 0,
                    has_this: true,
                    returns_value: true,
                }
            })
        })
        .unwrap();
    assert_eq!(max, 2);
}

#[test]
fn stack_analysis_rejects_inconsistent_il() {
    // ldarg.0; brtrue.s L; ldc.i4.0; L: ret  → depth 0 and 1 meet at L.
    let body = MethodBody::decode(&[0x16, 0x02, 0x2D, 0x01, 0x16, 0x2A]).unwrap();
    let err = body.compute_max_stack(no_calls).unwrap_err();
    assert!(matches!(err.kind(), ErrorKind::InvalidStack(_)));
    assert_eq!(err.offset(), 4);
    // pop on an empty stack
    let body = MethodBody::decode(&[0x0A, 0x26, 0x2A]).unwrap();
    let err = body.compute_max_stack(no_calls).unwrap_err();
    assert_eq!(err.kind(), &ErrorKind::InvalidStack("stack underflow"));
}

#[test]
fn edit_errors() {
    let mut body = MethodBody::decode(&TINY_BRANCH).unwrap();
    let e = body.insert(0, OpCode::CALL, Operand::I8(1)).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::OperandMismatch(_)));
    let e = body
        .insert(0, OpCode::LDARG_S, Operand::Var(300))
        .unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::OperandMismatch(_)));
    assert!(body.insert(99, OpCode::NOP, Operand::None).is_err());
    let first = body.instructions()[0].label();
    body.remove(first).unwrap();
    assert_eq!(
        body.remove(first).unwrap_err().kind(),
        &ErrorKind::UnknownLabel
    );
    // A branch to a label that is not in the body cannot be encoded.
    let mut other = MethodBody::new();
    other.push(OpCode::NOP, Operand::None).unwrap();
    let stray = other.push(OpCode::RET, Operand::None).unwrap();
    let mut b = MethodBody::new();
    b.push(OpCode::BR, Operand::Branch(stray)).unwrap();
    assert_eq!(b.encode().unwrap_err().kind(), &ErrorKind::UnknownLabel);
}

#[test]
fn removing_a_protected_block_makes_the_clause_unencodable() {
    let mut body = MethodBody::decode(&EH_SMALL).unwrap();
    // Remove the whole inner catch handler (pop; leave.s): the catch handler
    // becomes empty.
    let l = body.instructions()[3].label();
    body.remove(l).unwrap();
    let l = body.instructions()[3].label();
    body.remove(l).unwrap();
    let e = body.encode().unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::Unencodable(_)));
}

#[test]
fn all_operand_kinds_round_trip() {
    let code: Vec<u8> = vec![
        0x1F, 0xD6, // ldc.i4.s -42
        0x20, 0x78, 0x56, 0x34, 0x12, // ldc.i4 0x12345678
        0x21, 1, 2, 3, 4, 5, 6, 7, 8, // ldc.i8
        0x22, 0x00, 0x00, 0xC0, 0x7F, // ldc.r4 NaN
        0x23, 0, 0, 0, 0, 0, 0, 0xF0, 0x3F, // ldc.r8 1.0
        0x0E, 0x05, // ldarg.s 5
        0xFE, 0x0C, 0x34, 0x12, // ldloc 0x1234
        0x72, 0x01, 0x00, 0x00, 0x70, // ldstr 0x70000001
        0x7B, 0x02, 0x00, 0x00, 0x04, // ldfld
        0x8C, 0x03, 0x00, 0x00, 0x02, // box
        0x29, 0x04, 0x00, 0x00, 0x11, // calli
        0xD0, 0x05, 0x00, 0x00, 0x1B, // ldtoken
        0xFE, 0x12, 0x01, // unaligned. 1
        0xFE, 0x13, // volatile.
        0xFE, 0x19, 0x07, // no. 7
        0xFE, 0x16, 0x06, 0x00, 0x00, 0x1B, // constrained.
        0xFE, 0x14, // tail.
        0x6F, 0x07, 0x00, 0x00, 0x0A, // callvirt
        0xFE, 0x1E, 0x2A, // readonly. ret
    ];
    let mut bytes = vec![0x03, 0x30, 0x10, 0x00];
    bytes.extend((code.len() as u32).to_le_bytes());
    bytes.extend([0; 4]);
    bytes.extend(&code);
    let body = roundtrip(&bytes);
    let text = body.to_string();
    for line in [
        "IL_0000: ldc.i4.s -42",
        "IL_0002: ldc.i4 305419896",
        "IL_0007: ldc.i8 578437695752307201",
        "ldc.r4 NaN",
        "ldc.r8 1.0",
        "ldarg.s 5",
        "ldloc 4660",
        "ldstr 0x70000001",
        "calli 0x11000004",
        "unaligned. 1",
        "constrained. 0x1B000006",
        "tail.",
        "callvirt 0x0A000007",
        "readonly.",
    ] {
        assert!(text.contains(line), "{line} missing in\n{text}");
    }
}

#[test]
fn decode_errors_name_offsets() {
    let e = MethodBody::decode(&[]).unwrap_err();
    assert_eq!((e.offset(), e.kind()), (0, &ErrorKind::UnexpectedEnd));
    let e = MethodBody::decode(&[0x16, 0x00]).unwrap_err(); // tiny, 5 bytes claimed
    assert_eq!(e.kind(), &ErrorKind::UnexpectedEnd);
    let e = MethodBody::decode(&[0x0E, 0x00, 0x24, 0x2A]).unwrap_err();
    assert_eq!((e.offset(), e.kind()), (2, &ErrorKind::UnknownOpcode(0x24)));
    let e = MethodBody::decode(&[0x0E, 0xFE, 0x08, 0x2A]).unwrap_err();
    assert_eq!(
        (e.offset(), e.kind()),
        (1, &ErrorKind::UnknownOpcode(0xFE08))
    );
    assert!(e.to_string().contains("at offset 1"), "{e}");
    assert!(e.to_string().contains("0xFE08"), "{e}");
    // br.s into the middle of ldc.i4
    let e = MethodBody::decode(&[0x22, 0x2B, 0x01, 0x20, 0, 0, 0, 0, 0x2A]).unwrap_err();
    assert_eq!((e.offset(), e.kind()), (1, &ErrorKind::InvalidTarget(3)));
    // br.s past the end
    let e = MethodBody::decode(&[0x0A, 0x2B, 0x05]).unwrap_err();
    assert_eq!(e.kind(), &ErrorKind::InvalidTarget(7));
    // switch claiming 2^28 targets in a 10-byte body: no huge allocation.
    let e = MethodBody::decode(&[0x2A, 0x45, 0x00, 0x00, 0x00, 0x10, 0, 0, 0, 0, 0]).unwrap_err();
    assert_eq!(e.kind(), &ErrorKind::UnexpectedEnd);
    // Fat header with a size nibble of 2.
    let e = MethodBody::decode(&[0x03, 0x20, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::InvalidHeader(_)));
    let e = MethodBody::decode(&[0x01]).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::InvalidHeader(_)));
    // MoreSects with a section of kind 2.
    let e = MethodBody::decode(&[
        0x0B, 0x30, 8, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0x2A, 0, 0, 0, 0x02, 4, 0, 0,
    ])
    .unwrap_err();
    assert_eq!(e.offset(), 16);
    assert!(matches!(e.kind(), ErrorKind::InvalidSection(_)));
    // MoreSects but nothing after the code.
    let e = MethodBody::decode(&[0x0B, 0x30, 8, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0x2A]).unwrap_err();
    assert_eq!(e.kind(), &ErrorKind::UnexpectedEnd);
    // Clause whose try range ends inside an instruction.
    let mut bad = EH_SMALL;
    bad[28 + 4] = 0x03; // catch try length 3: ends inside leave.s
    let e = MethodBody::decode(&bad).unwrap_err();
    assert_eq!(e.kind(), &ErrorKind::InvalidTarget(3));
    // Error implements core::error::Error.
    let _: &dyn core::error::Error = &e;
}

#[test]
fn clause_offset_over_u16_needs_a_fat_section() {
    // 70000 nops, then try { nop; leave.s END } finally { endfinally } END: ret
    let mut body = MethodBody::new();
    for _ in 0..70_000 {
        body.push(OpCode::NOP, Operand::None).unwrap();
    }
    let try_start = body.push(OpCode::NOP, Operand::None).unwrap();
    let fin = body.push(OpCode::ENDFINALLY, Operand::None).unwrap();
    let end = body.push(OpCode::RET, Operand::None).unwrap();
    body.insert_before(fin, OpCode::LEAVE_S, Operand::Branch(end))
        .unwrap();
    body.clauses_mut().push(ExceptionClause::new(
        ClauseKind::Finally,
        try_start,
        fin,
        fin,
        end,
    ));
    let bytes = body.encode().unwrap();
    // Code: 70000 + nop + leave.s (2) + endfinally + ret = 70005 = 0x11175.
    assert_eq!(
        &bytes[..12],
        &[0x0B, 0x30, 0x08, 0x00, 0x75, 0x11, 0x01, 0x00, 0, 0, 0, 0]
    );
    assert_eq!(
        &bytes[12 + 70_000..12 + 70_005],
        &[0x00, 0xDE, 0x01, 0xDC, 0x2A]
    );
    // 12 + 70005 = 70017 → padded to 70020, then a fat section:
    // try 70000 (0x11170) len 3, handler 70003 (0x11173) len 1.
    let tail = [
        0, 0, 0, // padding
        0x41, 0x1C, 0x00, 0x00, // fat, 28 bytes
        2, 0, 0, 0, 0x70, 0x11, 0x01, 0x00, 3, 0, 0, 0, //
        0x73, 0x11, 0x01, 0x00, 1, 0, 0, 0, 0, 0, 0, 0,
    ];
    assert_eq!(&bytes[12 + 70_005..], &tail);
}

#[test]
fn many_clauses_need_a_fat_section() {
    // 21 catch clauses on one `nop` do not fit a small section (4 + 21 * 12 > 255).
    let mut body = MethodBody::new();
    let t = body.push(OpCode::NOP, Operand::None).unwrap();
    let h = body.push(OpCode::POP, Operand::None).unwrap();
    let end = body.push(OpCode::RET, Operand::None).unwrap();
    for k in 0..21 {
        body.clauses_mut().push(ExceptionClause::new(
            ClauseKind::Catch(Token(0x0100_0001 + k)),
            t,
            h,
            h,
            end,
        ));
    }
    let bytes = body.encode().unwrap();
    // header 12 + code 3 = 15, padded to 16; fat section of 4 + 21 * 24 = 508 = 0x1FC.
    assert_eq!(&bytes[15..20], &[0, 0x41, 0xFC, 0x01, 0x00]);
    assert_eq!(bytes.len(), 16 + 508);
    // With 20 clauses a small section (4 + 240 = 244 = 0xF4) suffices.
    body.clauses_mut().pop();
    let bytes = body.encode().unwrap();
    assert_eq!(&bytes[15..20], &[0, 0x01, 0xF4, 0x00, 0x00]);
    assert_eq!(bytes.len(), 16 + 244);
    assert_eq!(roundtrip(&bytes).clauses().len(), 20);
}

#[test]
fn retarget_sends_loop_back_edges_to_an_entry_probe() {
    // IL_0000 nop; IL_0001 br.s IL_0000
    let mut body = MethodBody::decode(&[0x0E, 0x00, 0x2B, 0xFD]).unwrap();
    let first = body.instructions()[0].label();
    let probe = body
        .insert(0, OpCode::CALL, Operand::Token(Token(0x0A00_0001)))
        .unwrap();
    // By default the back edge still targets the old first instruction...
    assert_eq!(
        body.encode().unwrap(),
        [0x22, 0x28, 1, 0, 0, 0x0A, 0x00, 0x2B, 0xFD]
    );
    // ...retargeting sends it to the probe: next 8, target 0 → -8.
    body.retarget(first, probe);
    assert_eq!(
        body.encode().unwrap(),
        [0x22, 0x28, 1, 0, 0, 0x0A, 0x00, 0x2B, 0xF8]
    );
}

#[test]
fn removing_the_last_instruction_retargets_to_end() {
    // nop; br.s L; L: ret → remove ret: the branch now targets the end of code.
    let mut body = MethodBody::decode(&[0x12, 0x00, 0x2B, 0x00, 0x2A]).unwrap();
    let ret = body.instructions()[2].label();
    body.remove(ret).unwrap();
    assert_eq!(
        body.instructions()[1].operand(),
        &Operand::Branch(Label::END)
    );
    assert_eq!(body.encode().unwrap(), [0x0E, 0x00, 0x2B, 0x00]);
}
