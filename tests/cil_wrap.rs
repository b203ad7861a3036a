//! `corprof::cil::wrap`: hand-written bodies wrapped in probe calls, checked
//! instruction by instruction (listings written by hand from the ECMA-335
//! encodings) and re-decoded from the encoded bytes.

use corprof::cil::{wrap, Probes, ThisArg, WrapContext};
use corprof::cil::{ClauseKind, ErrorKind, MethodBody, StackSig, Token};
use corprof::cil::{LocalVarSig, MethodSig, TypeSig};

const PROBES: Probes = Probes {
    begin: Token(0x0A00_0010),
    end: Token(0x0A00_0011),
    end_void: Token(0x0A00_0012),
    on_exception: Token(0x0A00_0013),
    exception: Token(0x0100_0020),
    method_name: Token(0x7000_0001),
};

/// Answers type tokens from a table (TypeSpecs 0x1B00_00xx), the local
/// signature token 0x1100_0009, and one call site.
#[derive(Default)]
struct Cx {
    locals: Option<LocalVarSig>,
}

impl WrapContext for Cx {
    fn type_token(&mut self, ty: &TypeSig) -> Option<Token> {
        Some(Token(match ty {
            TypeSig::Object => 0x1B00_0001,
            TypeSig::I4 => 0x1B00_0002,
            TypeSig::MVar(0) => 0x1B00_0003,
            TypeSig::Var(0) => 0x1B00_0004,
            TypeSig::GenericInst { .. } => 0x1B00_0005,
            _ => return None,
        }))
    }
    fn local_sig_token(&mut self, locals: &LocalVarSig) -> Option<Token> {
        self.locals = Some(locals.clone());
        Some(Token(0x1100_0009))
    }
    fn stack_sig(&mut self, token: Token) -> Option<StackSig> {
        // 0x0A000001: static int (int)
        (token == Token(0x0A00_0001)).then_some(StackSig {
            params: 1,
            has_this: false,
            returns_value: true,
        })
    }
}

fn wrapped(
    original: &[u8],
    sig: &MethodSig,
    this: ThisArg,
    locals: &LocalVarSig,
) -> (MethodBody, Cx) {
    let mut body = MethodBody::decode(original).unwrap();
    let mut cx = Cx::default();
    wrap(&mut body, sig, &this, locals, &PROBES, &mut cx).unwrap();
    let bytes = body.encode().unwrap();
    let again = MethodBody::decode(&bytes).unwrap();
    assert_eq!(
        again.to_string(),
        body.to_string(),
        "encodes and decodes back"
    );
    (again, cx)
}

fn no_locals() -> LocalVarSig {
    LocalVarSig { locals: vec![] }
}

#[test]
fn static_int_method() {
    // static int F(int x) => x + 1;  tiny header (4 << 2 | 2), ldarg.0 ldc.i4.1 add ret
    let original = [0x12, 0x02, 0x17, 0x58, 0x2A];
    let sig = MethodSig::static_method(TypeSig::I4, vec![TypeSig::I4]);
    let (body, cx) = wrapped(&original, &sig, ThisArg::Static, &no_locals());
    assert_eq!(
        body.to_string(),
        "IL_0000: ldstr 0x70000001\n\
         IL_0005: ldnull\n\
         IL_0006: ldc.i4.1\n\
         IL_0007: newarr 0x1B000001\n\
         IL_000c: dup\n\
         IL_000d: ldc.i4.0\n\
         IL_000e: ldarg.0\n\
         IL_000f: box 0x1B000002\n\
         IL_0014: stelem.ref\n\
         IL_0015: call 0x0A000010\n\
         IL_001a: stloc.0\n\
         IL_001b: ldarg.0\n\
         IL_001c: ldc.i4.1\n\
         IL_001d: add\n\
         IL_001e: stloc.1\n\
         IL_001f: leave IL_0039\n\
         IL_0024: ldloc.0\n\
         IL_0025: call 0x0A000013\n\
         IL_002a: rethrow\n\
         IL_002c: ldloc.0\n\
         IL_002d: ldloc.1\n\
         IL_002e: box 0x1B000002\n\
         IL_0033: call 0x0A000011\n\
         IL_0038: endfinally\n\
         IL_0039: ldloc.1\n\
         IL_003a: ret\n\
         .try IL_001b to IL_0024 catch 0x01000020 handler IL_0024 to IL_002c\n\
         .try IL_001b to IL_002c finally handler IL_002c to IL_0039\n"
    );
    // Fat header: flags 0x301B (size 3, InitLocals, MoreSects, fat), max
    // stack 6 (name, this, array, array, index, value), 0x3B bytes of
    // code, locals 0x11000009.
    let bytes = body.encode().unwrap();
    assert_eq!(
        bytes[..12],
        [0x1B, 0x30, 0x06, 0x00, 0x3B, 0, 0, 0, 0x09, 0, 0, 0x11]
    );
    assert_eq!(
        cx.locals.unwrap().locals,
        vec![TypeSig::Object, TypeSig::I4],
        "state and result appended"
    );
}

#[test]
fn instance_void_method_with_existing_locals_and_tail_call() {
    // instance void M(string s) { int x = 0; tail. call int G(int); ret }:
    // ldc.i4.0 stloc.0 ldloc.0 tail. call 0x0A000001 pop ret (fat header)
    let code = [
        0x16, 0x0A, 0x06, 0xFE, 0x14, 0x28, 0x01, 0, 0, 0x0A, 0x26, 0x2A,
    ];
    let mut original = vec![
        0x13,
        0x30,
        0x02,
        0x00,
        code.len() as u8,
        0,
        0,
        0,
        0x01,
        0,
        0,
        0x11,
    ];
    original.extend_from_slice(&code);
    let sig = MethodSig::instance_method(TypeSig::Void, vec![TypeSig::String]);
    let locals = LocalVarSig {
        locals: vec![TypeSig::I4],
    };
    let (body, cx) = wrapped(&original, &sig, ThisArg::Reference, &locals);
    assert_eq!(
        body.to_string(),
        "IL_0000: ldstr 0x70000001\n\
         IL_0005: ldarg.0\n\
         IL_0006: ldc.i4.1\n\
         IL_0007: newarr 0x1B000001\n\
         IL_000c: dup\n\
         IL_000d: ldc.i4.0\n\
         IL_000e: ldarg.1\n\
         IL_000f: stelem.ref\n\
         IL_0010: call 0x0A000010\n\
         IL_0015: stloc.1\n\
         IL_0016: ldc.i4.0\n\
         IL_0017: stloc.0\n\
         IL_0018: ldloc.0\n\
         IL_0019: nop\n\
         IL_001a: call 0x0A000001\n\
         IL_001f: pop\n\
         IL_0020: leave IL_0034\n\
         IL_0025: ldloc.1\n\
         IL_0026: call 0x0A000013\n\
         IL_002b: rethrow\n\
         IL_002d: ldloc.1\n\
         IL_002e: call 0x0A000012\n\
         IL_0033: endfinally\n\
         IL_0034: ret\n\
         .try IL_0016 to IL_0025 catch 0x01000020 handler IL_0025 to IL_002d\n\
         .try IL_0016 to IL_002d finally handler IL_002d to IL_0034\n"
    );
    assert_eq!(
        cx.locals.unwrap().locals,
        vec![TypeSig::I4, TypeSig::Object],
        "the existing local stays first; only the state is added"
    );
}

#[test]
fn value_type_this_by_ref_and_generic_parameters() {
    // instance !!0 S<T>.M<U>(ref int a, !!0 b, !0 c) { ldarg.2 ret } of a
    // generic struct S<T>: `this` is loaded through its pointer and boxed
    // with the instantiation's TypeSpec; `ref int` is read with ldobj.
    let sig = MethodSig::instance_method(
        TypeSig::MVar(0),
        vec![
            TypeSig::by_ref(TypeSig::I4),
            TypeSig::MVar(0),
            TypeSig::Var(0),
        ],
    )
    .with_generic_params(1);
    let this = ThisArg::Value(TypeSig::generic_value_type(
        Token(0x0200_0002),
        vec![TypeSig::Var(0)],
    ));
    let (body, _) = wrapped(&[0x0A, 0x04, 0x2A], &sig, this, &no_locals());
    let listing = body.to_string();
    let prologue = "IL_0000: ldstr 0x70000001\n\
         IL_0005: ldarg.0\n\
         IL_0006: ldobj 0x1B000005\n\
         IL_000b: box 0x1B000005\n\
         IL_0010: ldc.i4.3\n\
         IL_0011: newarr 0x1B000001\n\
         IL_0016: dup\n\
         IL_0017: ldc.i4.0\n\
         IL_0018: ldarg.1\n\
         IL_0019: ldobj 0x1B000002\n\
         IL_001e: box 0x1B000002\n\
         IL_0023: stelem.ref\n\
         IL_0024: dup\n\
         IL_0025: ldc.i4.1\n\
         IL_0026: ldarg.2\n\
         IL_0027: box 0x1B000003\n\
         IL_002c: stelem.ref\n\
         IL_002d: dup\n\
         IL_002e: ldc.i4.2\n\
         IL_002f: ldarg.3\n\
         IL_0030: box 0x1B000004\n\
         IL_0035: stelem.ref\n\
         IL_0036: call 0x0A000010\n\
         IL_003b: stloc.0\n\
         IL_003c: ldarg.2\n\
         IL_003d: stloc.1\n";
    assert!(listing.starts_with(prologue), "{listing}");
    // The result (!!0) is boxed for End with the MVar TypeSpec.
    assert!(
        listing.contains("IL_004c: ldloc.1\nIL_004d: box 0x1B000003\nIL_0052: call 0x0A000011\n"),
        "{listing}"
    );
}

#[test]
fn existing_clauses_stay_inside_and_first() {
    // static void T() whose catch handler is the last thing in the body
    // (it ends at the end of the code, which becomes the new handlers):
    //  0: br.s 3   2: ret   3: ldc.i4.1   4: call 0x0A000001   9: pop
    // 10: leave.s 2   12: pop   13: rethrow     try [3, 12) handler [12, 15)
    let code = [
        0x2B, 0x01, 0x2A, 0x17, 0x28, 0x01, 0, 0, 0x0A, 0x26, 0xDE, 0xF6, 0x26, 0xFE, 0x1A,
    ];
    // fat | MoreSects, max stack 2, no locals
    let mut original = vec![
        0x0B,
        0x30,
        0x02,
        0x00,
        code.len() as u8,
        0,
        0,
        0,
        0,
        0,
        0,
        0,
    ];
    original.extend_from_slice(&code);
    while original.len() % 4 != 0 {
        original.push(0);
    }
    // Small EH section (kind 0x01, size 16): flags 0, try 3 len 9,
    // handler 12 len 3, class 0x01000005.
    original.extend_from_slice(&[0x01, 16, 0, 0, 0, 0, 3, 0, 9, 12, 0, 3, 5, 0, 0, 1]);
    let decoded = MethodBody::decode(&original).unwrap();
    assert_eq!(decoded.clauses().len(), 1);
    let sig = MethodSig::static_method(TypeSig::Void, vec![]);
    let (body, _) = wrapped(&original, &sig, ThisArg::Static, &no_locals());
    let c = body.clauses();
    assert_eq!(c.len(), 3, "{body}");
    assert_eq!(
        c[0].kind,
        ClauseKind::Catch(Token(0x0100_0005)),
        "old clause first"
    );
    assert_eq!(c[1].kind, ClauseKind::Catch(PROBES.exception));
    assert_eq!(c[2].kind, ClauseKind::Finally);
    let listing = body.to_string();
    // The prologue takes 0x12 bytes: ldstr(5) ldnull ldc.i4.0 newarr(5) call(5) stloc.0.
    assert!(
        listing.contains(
            "IL_0012: br.s IL_0019\n\
             IL_0014: leave IL_0034\n\
             IL_0019: ldc.i4.1\n\
             IL_001a: call 0x0A000001\n\
             IL_001f: pop\n\
             IL_0020: leave.s IL_0014\n\
             IL_0022: pop\n\
             IL_0023: rethrow\n\
             IL_0025: ldloc.0\n"
        ),
        "{listing}"
    );
    assert!(
        listing.ends_with(
            "IL_0034: ret\n\
             .try IL_0019 to IL_0022 catch 0x01000005 handler IL_0022 to IL_0025\n\
             .try IL_0012 to IL_0025 catch 0x01000020 handler IL_0025 to IL_002d\n\
             .try IL_0012 to IL_002d finally handler IL_002d to IL_0034\n"
        ),
        "{listing}"
    );
}

#[test]
fn unsupported_methods_are_refused_and_left_untouched() {
    let original = [0x0A, 0x02, 0x2A]; // ldarg.0 ret
    let cases: Vec<(MethodSig, ThisArg, &[u8], &str)> = vec![
        (
            MethodSig {
                calling_convention: 0x05,
                ..MethodSig::static_method(TypeSig::Void, vec![])
            },
            ThisArg::Static,
            &original,
            "vararg method",
        ),
        (
            MethodSig::static_method(TypeSig::by_ref(TypeSig::I4), vec![]),
            ThisArg::Static,
            &original,
            "returns by reference",
        ),
        (
            MethodSig::static_method(TypeSig::I4, vec![]),
            ThisArg::Reference,
            &original,
            "the signature's HASTHIS does not match the `this` kind given",
        ),
        (
            MethodSig::static_method(TypeSig::Void, vec![]),
            ThisArg::Static,
            &[0x16, 0x27, 0x01, 0, 0, 0x06], // jmp 0x06000001
            "uses `jmp`",
        ),
    ];
    for (sig, this, bytes, why) in cases {
        let mut body = MethodBody::decode(bytes).unwrap();
        let before = body.clone();
        let err = wrap(
            &mut body,
            &sig,
            &this,
            &no_locals(),
            &PROBES,
            &mut Cx::default(),
        )
        .unwrap_err();
        assert_eq!(err.kind(), &ErrorKind::Unsupported(why));
        assert_eq!(body, before, "{why}: body untouched");
    }
}

#[test]
fn by_ref_like_values_reach_the_probes_as_null() {
    /// Says `ValueType(0x02000009)` (a `ref struct`) cannot be boxed.
    struct RefStruct(Cx);
    impl WrapContext for RefStruct {
        fn type_token(&mut self, ty: &TypeSig) -> Option<Token> {
            self.0.type_token(ty)
        }
        fn local_sig_token(&mut self, l: &LocalVarSig) -> Option<Token> {
            self.0.local_sig_token(l)
        }
        fn stack_sig(&mut self, t: Token) -> Option<StackSig> {
            self.0.stack_sig(t)
        }
        fn can_box(&mut self, ty: &TypeSig) -> bool {
            *ty != TypeSig::ValueType(Token(0x0200_0009))
        }
    }
    // static S F(S s) { ldarg.0 ret }
    let span = TypeSig::ValueType(Token(0x0200_0009));
    let sig = MethodSig::static_method(span.clone(), vec![span]);
    let mut body = MethodBody::decode(&[0x0A, 0x02, 0x2A]).unwrap();
    let mut cx = RefStruct(Cx::default());
    wrap(
        &mut body,
        &sig,
        &ThisArg::Static,
        &no_locals(),
        &PROBES,
        &mut cx,
    )
    .unwrap();
    let listing = body.to_string();
    assert!(
        listing.contains("IL_000c: dup\nIL_000d: ldc.i4.0\nIL_000e: ldnull\nIL_000f: stelem.ref\n"),
        "{listing}"
    );
    // End gets the result loaded, dropped and replaced by null.
    assert!(
        listing.contains("ldloc.1\nIL_0027: pop\nIL_0028: ldnull\nIL_0029: call 0x0A000011\n"),
        "{listing}"
    );
    assert!(!listing.contains("box"), "{listing}");
}
