//! `corprof::instrument::wrap`: hand-written bodies wrapped in calls to an
//! integration's generic methods, checked instruction by instruction
//! (listings written by hand from the ECMA-335 encodings) and re-decoded
//! from the encoded bytes.

use corprof::cil::{ClauseKind, ErrorKind, MethodBody, StackSig, Token};
use corprof::cil::{LocalVarSig, MethodSig, TypeSig};
use corprof::instrument::{wrap, AsyncProbes, Probes, ThisArg, WrapContext};

const PROBES: Probes = Probes {
    begin: Some(Token(0x0A00_0010)),
    begin_takes_name: true,
    end: Some(Token(0x0A00_0011)),
    end_state_by_ref: true,
    state: Token(0x0100_0030),
    return_type: Token(0x0100_0031),
    exception: Token(0x0100_0020),
    method_name: Token(0x7000_0001),
    async_end: None,
};

/// Answers type tokens from a table (TypeSpecs 0x1B00_00xx), the local
/// signature token 0x1100_0009, one call site, MethodSpecs 0x2B00_0001,
/// 0x2B00_0002, ... in the order asked, and MemberRef 0x0A00_0100; it
/// remembers what was asked.
#[derive(Default)]
struct Cx {
    locals: Option<LocalVarSig>,
    specs: Vec<(Token, Vec<TypeSig>)>,
    member_refs: Vec<(Token, String, MethodSig)>,
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
    fn method_spec(&mut self, method: Token, args: &[TypeSig]) -> Option<Token> {
        self.specs.push((method, args.to_vec()));
        Some(Token(0x2B00_0000 + self.specs.len() as u32))
    }
    fn member_ref(&mut self, parent: Token, name: &str, sig: &MethodSig) -> Option<Token> {
        self.member_refs
            .push((parent, name.to_string(), sig.clone()));
        Some(Token(0x0A00_0100))
    }
}

fn wrapped_with(
    original: &[u8],
    sig: &MethodSig,
    this: ThisArg,
    locals: &LocalVarSig,
    probes: &Probes,
) -> (MethodBody, Cx) {
    let mut body = MethodBody::decode(original).unwrap();
    let mut cx = Cx::default();
    wrap(&mut body, sig, &this, locals, probes, &mut cx).unwrap();
    let bytes = body.encode().unwrap();
    let again = MethodBody::decode(&bytes).unwrap();
    assert_eq!(
        again.to_string(),
        body.to_string(),
        "encodes and decodes back"
    );
    (again, cx)
}

fn wrapped(
    original: &[u8],
    sig: &MethodSig,
    this: ThisArg,
    locals: &LocalVarSig,
) -> (MethodBody, Cx) {
    wrapped_with(original, sig, this, locals, &PROBES)
}

fn no_locals() -> LocalVarSig {
    LocalVarSig { locals: vec![] }
}

/// `CallTargetState`, the result type, `Exception`, `CallTargetReturn<T>`.
fn state() -> TypeSig {
    TypeSig::ValueType(PROBES.state)
}
fn exception() -> TypeSig {
    TypeSig::Class(PROBES.exception)
}
fn returned(t: TypeSig) -> TypeSig {
    TypeSig::generic_value_type(PROBES.return_type, vec![t])
}

#[test]
fn static_int_method() {
    // static int F(int x) => x + 1;  tiny header (4 << 2 | 2), ldarg.0 ldc.i4.1 add ret
    let original = [0x12, 0x02, 0x17, 0x58, 0x2A];
    let sig = MethodSig::static_method(TypeSig::I4, vec![TypeSig::I4]);
    let (body, cx) = wrapped(&original, &sig, ThisArg::Static, &no_locals());
    assert_eq!(
        body.to_string(),
        "IL_0000: ldnull\n\
         IL_0001: ldarga.s 0\n\
         IL_0003: ldstr 0x70000001\n\
         IL_0008: call 0x2B000002\n\
         IL_000d: stloc.0\n\
         IL_000e: leave IL_0019\n\
         IL_0013: pop\n\
         IL_0014: leave IL_0019\n\
         IL_0019: ldarg.0\n\
         IL_001a: ldc.i4.1\n\
         IL_001b: add\n\
         IL_001c: stloc.1\n\
         IL_001d: leave IL_003b\n\
         IL_0022: stloc.2\n\
         IL_0023: ldnull\n\
         IL_0024: ldloc.1\n\
         IL_0025: ldloc.2\n\
         IL_0026: ldloca.s 0\n\
         IL_0028: call 0x2B000001\n\
         IL_002d: pop\n\
         IL_002e: leave IL_0039\n\
         IL_0033: pop\n\
         IL_0034: leave IL_0039\n\
         IL_0039: rethrow\n\
         IL_003b: ldnull\n\
         IL_003c: ldloc.1\n\
         IL_003d: ldnull\n\
         IL_003e: ldloca.s 0\n\
         IL_0040: call 0x2B000001\n\
         IL_0045: stloc.3\n\
         IL_0046: ldloca.s 3\n\
         IL_0048: call 0x0A000100\n\
         IL_004d: stloc.1\n\
         IL_004e: leave IL_0059\n\
         IL_0053: pop\n\
         IL_0054: leave IL_0059\n\
         IL_0059: ldloc.1\n\
         IL_005a: ret\n\
         .try IL_0023 to IL_0033 catch 0x01000020 handler IL_0033 to IL_0039\n\
         .try IL_0019 to IL_0022 catch 0x01000020 handler IL_0022 to IL_003b\n\
         .try IL_003b to IL_0053 catch 0x01000020 handler IL_0053 to IL_0059\n\
         .try IL_0000 to IL_0013 catch 0x01000020 handler IL_0013 to IL_0019\n"
    );
    // Fat header: flags 0x301B (size 3, InitLocals, MoreSects, fat), max
    // stack 4 (OnMethodEnd's four arguments), 0x5B bytes of code, locals
    // 0x11000009.
    let bytes = body.encode().unwrap();
    assert_eq!(
        bytes[..12],
        [0x1B, 0x30, 0x04, 0x00, 0x5B, 0, 0, 0, 0x09, 0, 0, 0x11]
    );
    assert_eq!(
        cx.locals.unwrap().locals,
        vec![state(), TypeSig::I4, exception(), returned(TypeSig::I4)],
        "state, result, exception and CallTargetReturn<int> appended"
    );
    // OnMethodEnd<object, int>, then OnMethodBegin<object, int>.
    assert_eq!(
        cx.specs,
        vec![
            (Token(0x0A00_0011), vec![TypeSig::Object, TypeSig::I4]),
            (Token(0x0A00_0010), vec![TypeSig::Object, TypeSig::I4]),
        ]
    );
    // CallTargetReturn<int>::GetReturnValue: `instance !0 ()` on its TypeSpec.
    assert_eq!(
        cx.member_refs,
        vec![(
            Token(0x1B00_0005),
            "GetReturnValue".to_string(),
            MethodSig::instance_method(TypeSig::Var(0), vec![])
        )]
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
    let class = TypeSig::Class(Token(0x0200_0003));
    let (body, cx) = wrapped(&original, &sig, ThisArg::Reference(class.clone()), &locals);
    assert_eq!(
        body.to_string(),
        "IL_0000: ldarg.0\n\
         IL_0001: ldarga.s 1\n\
         IL_0003: ldstr 0x70000001\n\
         IL_0008: call 0x2B000002\n\
         IL_000d: stloc.1\n\
         IL_000e: leave IL_0019\n\
         IL_0013: pop\n\
         IL_0014: leave IL_0019\n\
         IL_0019: ldc.i4.0\n\
         IL_001a: stloc.0\n\
         IL_001b: ldloc.0\n\
         IL_001c: nop\n\
         IL_001d: call 0x0A000001\n\
         IL_0022: pop\n\
         IL_0023: leave IL_0040\n\
         IL_0028: stloc.2\n\
         IL_0029: ldarg.0\n\
         IL_002a: ldloc.2\n\
         IL_002b: ldloca.s 1\n\
         IL_002d: call 0x2B000001\n\
         IL_0032: pop\n\
         IL_0033: leave IL_003e\n\
         IL_0038: pop\n\
         IL_0039: leave IL_003e\n\
         IL_003e: rethrow\n\
         IL_0040: ldarg.0\n\
         IL_0041: ldnull\n\
         IL_0042: ldloca.s 1\n\
         IL_0044: call 0x2B000001\n\
         IL_0049: pop\n\
         IL_004a: leave IL_0055\n\
         IL_004f: pop\n\
         IL_0050: leave IL_0055\n\
         IL_0055: ret\n\
         .try IL_0029 to IL_0038 catch 0x01000020 handler IL_0038 to IL_003e\n\
         .try IL_0019 to IL_0028 catch 0x01000020 handler IL_0028 to IL_0040\n\
         .try IL_0040 to IL_004f catch 0x01000020 handler IL_004f to IL_0055\n\
         .try IL_0000 to IL_0013 catch 0x01000020 handler IL_0013 to IL_0019\n"
    );
    assert_eq!(
        cx.locals.unwrap().locals,
        vec![TypeSig::I4, state(), exception()],
        "the existing local stays first; a void method has no result"
    );
    // OnMethodEnd<C> and OnMethodBegin<C, string>; nothing else.
    assert_eq!(
        cx.specs,
        vec![
            (Token(0x0A00_0011), vec![class.clone()]),
            (Token(0x0A00_0010), vec![class, TypeSig::String]),
        ]
    );
    assert!(cx.member_refs.is_empty());
}

#[test]
fn value_type_this_by_ref_and_generic_parameters() {
    // instance !!0 S<T>.M<U>(ref int a, !!0 b, !0 c) { ldarg.2 ret } of a
    // generic struct S<T>: `this` is copied through its pointer (ldobj with
    // the instantiation's TypeSpec); `ref int` is passed as it is, the
    // others by address; the generic arguments are `!!0` and `!0`.
    let sig = MethodSig::instance_method(
        TypeSig::MVar(0),
        vec![
            TypeSig::by_ref(TypeSig::I4),
            TypeSig::MVar(0),
            TypeSig::Var(0),
        ],
    )
    .with_generic_params(1);
    let s_of_t = TypeSig::generic_value_type(Token(0x0200_0002), vec![TypeSig::Var(0)]);
    let this = ThisArg::Value(s_of_t.clone());
    let (body, cx) = wrapped(&[0x0A, 0x04, 0x2A], &sig, this, &no_locals());
    let listing = body.to_string();
    let prologue = "IL_0000: ldarg.0\n\
         IL_0001: ldobj 0x1B000005\n\
         IL_0006: ldarg.1\n\
         IL_0007: ldarga.s 2\n\
         IL_0009: ldarga.s 3\n\
         IL_000b: ldstr 0x70000001\n\
         IL_0010: call 0x2B000002\n\
         IL_0015: stloc.0\n\
         IL_0016: leave IL_0021\n\
         IL_001b: pop\n\
         IL_001c: leave IL_0021\n\
         IL_0021: ldarg.2\n\
         IL_0022: stloc.1\n";
    assert!(listing.starts_with(prologue), "{listing}");
    // OnMethodEnd gets a fresh copy of `this` and the !!0 result.
    assert!(
        listing.contains(
            "IL_0029: ldarg.0\nIL_002a: ldobj 0x1B000005\nIL_002f: ldloc.1\nIL_0030: ldloc.2\n\
             IL_0031: ldloca.s 0\nIL_0033: call 0x2B000001\n"
        ),
        "{listing}"
    );
    assert_eq!(
        cx.specs,
        vec![
            (Token(0x0A00_0011), vec![s_of_t.clone(), TypeSig::MVar(0)]),
            (
                Token(0x0A00_0010),
                vec![s_of_t, TypeSig::I4, TypeSig::MVar(0), TypeSig::Var(0)]
            ),
        ]
    );
    assert_eq!(
        cx.locals.unwrap().locals[3],
        returned(TypeSig::MVar(0)),
        "CallTargetReturn<!!0>"
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
    assert_eq!(c.len(), 5, "{body}");
    assert_eq!(
        c[0].kind,
        ClauseKind::Catch(Token(0x0100_0005)),
        "old clause first"
    );
    for new in &c[1..] {
        assert_eq!(new.kind, ClauseKind::Catch(PROBES.exception), "no finally");
    }
    let listing = body.to_string();
    // The begin call takes 0x17 bytes: ldnull ldstr(5) call(5) stloc.0
    // leave(5) pop leave(5).
    assert!(
        listing.contains(
            "IL_0017: br.s IL_001e\n\
             IL_0019: leave IL_0042\n\
             IL_001e: ldc.i4.1\n\
             IL_001f: call 0x0A000001\n\
             IL_0024: pop\n\
             IL_0025: leave.s IL_0019\n\
             IL_0027: pop\n\
             IL_0028: rethrow\n\
             IL_002a: stloc.1\n"
        ),
        "{listing}"
    );
    assert!(
        listing.ends_with(
            "IL_0040: rethrow\n\
             IL_0042: ldnull\n\
             IL_0043: ldnull\n\
             IL_0044: ldloca.s 0\n\
             IL_0046: call 0x2B000001\n\
             IL_004b: pop\n\
             IL_004c: leave IL_0057\n\
             IL_0051: pop\n\
             IL_0052: leave IL_0057\n\
             IL_0057: ret\n\
             .try IL_001e to IL_0027 catch 0x01000005 handler IL_0027 to IL_002a\n\
             .try IL_002b to IL_003a catch 0x01000020 handler IL_003a to IL_0040\n\
             .try IL_0017 to IL_002a catch 0x01000020 handler IL_002a to IL_0042\n\
             .try IL_0042 to IL_0051 catch 0x01000020 handler IL_0051 to IL_0057\n\
             .try IL_0000 to IL_0011 catch 0x01000020 handler IL_0011 to IL_0017\n"
        ),
        "{listing}"
    );
}

#[test]
fn a_missing_probe_is_not_called() {
    // static int F(int x) => x + 1, with only OnMethodBegin (no name): no
    // clause but the begin guard, the `ret` stays.
    let original = [0x12, 0x02, 0x17, 0x58, 0x2A];
    let sig = MethodSig::static_method(TypeSig::I4, vec![TypeSig::I4]);
    let begin_only = Probes {
        end: None,
        begin_takes_name: false,
        ..PROBES
    };
    let (body, cx) = wrapped_with(&original, &sig, ThisArg::Static, &no_locals(), &begin_only);
    assert_eq!(
        body.to_string(),
        "IL_0000: ldnull\n\
         IL_0001: ldarga.s 0\n\
         IL_0003: call 0x2B000001\n\
         IL_0008: stloc.0\n\
         IL_0009: leave IL_0014\n\
         IL_000e: pop\n\
         IL_000f: leave IL_0014\n\
         IL_0014: ldarg.0\n\
         IL_0015: ldc.i4.1\n\
         IL_0016: add\n\
         IL_0017: ret\n\
         .try IL_0000 to IL_000e catch 0x01000020 handler IL_000e to IL_0014\n"
    );
    assert_eq!(cx.specs.len(), 1);
    assert_eq!(cx.locals.unwrap().locals, vec![state(), TypeSig::I4]);

    // Only OnMethodEnd: no begin call, the state stays default.
    let end_only = Probes {
        begin: None,
        ..PROBES
    };
    let (body, cx) = wrapped_with(&original, &sig, ThisArg::Static, &no_locals(), &end_only);
    let listing = body.to_string();
    assert!(
        listing.starts_with("IL_0000: ldarg.0\nIL_0001: ldc.i4.1\n"),
        "{listing}"
    );
    assert!(!listing.contains("ldstr"), "{listing}");
    assert_eq!(body.clauses().len(), 3, "{listing}");
    assert_eq!(cx.specs.len(), 1);
    assert_eq!(cx.specs[0].0, Token(0x0A00_0011));
}

#[test]
fn unsupported_methods_are_refused_and_left_untouched() {
    let original = [0x0A, 0x02, 0x2A]; // ldarg.0 ret
    let none = Probes {
        begin: None,
        end: None,
        ..PROBES
    };
    let cases: Vec<(MethodSig, ThisArg, &[u8], Probes, &str)> = vec![
        (
            MethodSig {
                calling_convention: 0x05,
                ..MethodSig::static_method(TypeSig::Void, vec![])
            },
            ThisArg::Static,
            &original,
            PROBES,
            "vararg method",
        ),
        (
            MethodSig::static_method(TypeSig::by_ref(TypeSig::I4), vec![]),
            ThisArg::Static,
            &original,
            PROBES,
            "returns by reference",
        ),
        (
            MethodSig::static_method(TypeSig::I4, vec![]),
            ThisArg::Reference(TypeSig::Object),
            &original,
            PROBES,
            "the signature's HASTHIS does not match the `this` kind given",
        ),
        (
            MethodSig::static_method(TypeSig::Void, vec![]),
            ThisArg::Static,
            &[0x16, 0x27, 0x01, 0, 0, 0x06], // jmp 0x06000001
            PROBES,
            "uses `jmp`",
        ),
        (
            MethodSig::static_method(TypeSig::I4, vec![]),
            ThisArg::Static,
            &original,
            none,
            "the integration has neither OnMethodBegin nor OnMethodEnd for this method",
        ),
    ];
    for (sig, this, bytes, probes, why) in cases {
        let mut body = MethodBody::decode(bytes).unwrap();
        let before = body.clone();
        let err = wrap(
            &mut body,
            &sig,
            &this,
            &no_locals(),
            &probes,
            &mut Cx::default(),
        )
        .unwrap_err();
        assert_eq!(err.kind(), &ErrorKind::Unsupported(why));
        assert_eq!(body, before, "{why}: body untouched");
    }
}

#[test]
fn by_ref_like_values_reach_the_integration_as_null_objects() {
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
        fn method_spec(&mut self, m: Token, a: &[TypeSig]) -> Option<Token> {
            self.0.method_spec(m, a)
        }
        fn member_ref(&mut self, p: Token, n: &str, s: &MethodSig) -> Option<Token> {
            self.0.member_ref(p, n, s)
        }
        fn can_box(&mut self, ty: &TypeSig) -> bool {
            *ty != TypeSig::ValueType(Token(0x0200_0009))
        }
    }
    // static S F(S s, int* p) { ldarg.0 ret }
    let span = TypeSig::ValueType(Token(0x0200_0009));
    let ptr = TypeSig::Ptr(Box::new(TypeSig::I4));
    let sig = MethodSig::static_method(span.clone(), vec![span.clone(), ptr]);
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
    // The scratch `object` (local 3) is cleared, then passed by address
    // for both arguments, outside the begin guard.
    assert!(
        listing.starts_with(
            "IL_0000: ldnull\n\
             IL_0001: stloc.3\n\
             IL_0002: ldnull\n\
             IL_0003: ldloca.s 3\n\
             IL_0005: ldloca.s 3\n\
             IL_0007: ldstr 0x70000001\n"
        ),
        "{listing}"
    );
    // OnMethodEnd gets null for the result, and its answer is dropped.
    assert!(
        listing.contains(
            "IL_0025: ldnull\nIL_0026: ldnull\nIL_0027: ldloc.2\nIL_0028: ldloca.s 0\n\
             IL_002a: call 0x2B000001\nIL_002f: pop\n"
        ),
        "{listing}"
    );
    assert!(!listing.contains("box"), "{listing}");
    let cx = cx.0;
    assert_eq!(
        cx.specs,
        vec![
            (Token(0x0A00_0011), vec![TypeSig::Object, TypeSig::Object]),
            (
                Token(0x0A00_0010),
                vec![TypeSig::Object, TypeSig::Object, TypeSig::Object]
            ),
        ]
    );
    assert_eq!(
        cx.locals.unwrap().locals,
        vec![state(), span, exception(), TypeSig::Object],
        "no CallTargetReturn for a result passed as null"
    );
    assert!(cx.member_refs.is_empty());
}

/// `CallTargetReturn` (the non-generic value type), `TResult` of a `Task`.
const VOID_RESULT: Token = Token(0x0100_0032);

fn awaited_probes(result: TypeSig) -> Probes {
    Probes {
        async_end: Some(AsyncProbes {
            end: Token(0x0A00_0012),
            end_state_by_ref: true,
            continuation: None,
            result,
        }),
        ..PROBES
    }
}

#[test]
fn runtime_async_task_body_returns_nothing_and_ends_directly() {
    // [MethodImpl(Async)] static async Task P() { }: the body's `ret`
    // carries nothing, so the signature given is `void P()`. The end is
    // OnAsyncMethodEnd<object, CallTargetReturn>(null, default, e|null,
    // in state), called in place (no continuation, no delegate).
    let original = [0x06, 0x2A]; // tiny header, ret
    let sig = MethodSig::static_method(TypeSig::Void, vec![]);
    let probes = awaited_probes(TypeSig::ValueType(VOID_RESULT));
    let (body, cx) = wrapped_with(&original, &sig, ThisArg::Static, &no_locals(), &probes);
    // The begin, the body's `ret` become `leave` to the normal end; the
    // exceptional end gets default(CallTargetReturn) (local 2) and the
    // exception (local 1) and rethrows; the normal end the same value and
    // null, its answer dropped.
    assert_eq!(
        body.to_string(),
        "IL_0000: ldnull\n\
         IL_0001: ldstr 0x70000001\n\
         IL_0006: call 0x2B000002\n\
         IL_000b: stloc.0\n\
         IL_000c: leave IL_0017\n\
         IL_0011: pop\n\
         IL_0012: leave IL_0017\n\
         IL_0017: leave IL_0035\n\
         IL_001c: stloc.1\n\
         IL_001d: ldnull\n\
         IL_001e: ldloc.2\n\
         IL_001f: ldloc.1\n\
         IL_0020: ldloca.s 0\n\
         IL_0022: call 0x2B000001\n\
         IL_0027: pop\n\
         IL_0028: leave IL_0033\n\
         IL_002d: pop\n\
         IL_002e: leave IL_0033\n\
         IL_0033: rethrow\n\
         IL_0035: ldnull\n\
         IL_0036: ldloc.2\n\
         IL_0037: ldnull\n\
         IL_0038: ldloca.s 0\n\
         IL_003a: call 0x2B000001\n\
         IL_003f: pop\n\
         IL_0040: leave IL_004b\n\
         IL_0045: pop\n\
         IL_0046: leave IL_004b\n\
         IL_004b: ret\n\
         .try IL_001d to IL_002d catch 0x01000020 handler IL_002d to IL_0033\n\
         .try IL_0017 to IL_001c catch 0x01000020 handler IL_001c to IL_0035\n\
         .try IL_0035 to IL_0045 catch 0x01000020 handler IL_0045 to IL_004b\n\
         .try IL_0000 to IL_0011 catch 0x01000020 handler IL_0011 to IL_0017\n"
    );
    assert_eq!(
        cx.locals.unwrap().locals,
        vec![state(), exception(), TypeSig::ValueType(VOID_RESULT)],
        "state, exception, default(CallTargetReturn): no result"
    );
    // OnAsyncMethodEnd<object, CallTargetReturn>, OnMethodBegin<object>;
    // no CallTargetReturn<T>.GetReturnValue.
    assert_eq!(
        cx.specs,
        vec![
            (
                Token(0x0A00_0012),
                vec![TypeSig::Object, TypeSig::ValueType(VOID_RESULT)]
            ),
            (Token(0x0A00_0010), vec![TypeSig::Object]),
        ]
    );
    assert!(cx.member_refs.is_empty());
}

#[test]
fn runtime_async_task_of_int_body_returns_the_int() {
    // [MethodImpl(Async)] static async Task<int> F() => 41;: `ldc.i4.s 41;
    // ret`, so the signature given is `int F()`; OnAsyncMethodEnd<object,
    // int>'s answer is what the body returns.
    let original = [0x0E, 0x1F, 41, 0x2A];
    let sig = MethodSig::static_method(TypeSig::I4, vec![]);
    let probes = awaited_probes(TypeSig::I4);
    let (body, cx) = wrapped_with(&original, &sig, ThisArg::Static, &no_locals(), &probes);
    // The body's value (local 1) goes to OnAsyncMethodEnd, whose answer
    // is stored back and returned; the exceptional end gets default(int)
    // (local 3).
    assert_eq!(
        body.to_string(),
        "IL_0000: ldnull\n\
         IL_0001: ldstr 0x70000001\n\
         IL_0006: call 0x2B000002\n\
         IL_000b: stloc.0\n\
         IL_000c: leave IL_0017\n\
         IL_0011: pop\n\
         IL_0012: leave IL_0017\n\
         IL_0017: ldc.i4.s 41\n\
         IL_0019: stloc.1\n\
         IL_001a: leave IL_0038\n\
         IL_001f: stloc.2\n\
         IL_0020: ldnull\n\
         IL_0021: ldloc.3\n\
         IL_0022: ldloc.2\n\
         IL_0023: ldloca.s 0\n\
         IL_0025: call 0x2B000001\n\
         IL_002a: pop\n\
         IL_002b: leave IL_0036\n\
         IL_0030: pop\n\
         IL_0031: leave IL_0036\n\
         IL_0036: rethrow\n\
         IL_0038: ldnull\n\
         IL_0039: ldloc.1\n\
         IL_003a: ldnull\n\
         IL_003b: ldloca.s 0\n\
         IL_003d: call 0x2B000001\n\
         IL_0042: stloc.1\n\
         IL_0043: leave IL_004e\n\
         IL_0048: pop\n\
         IL_0049: leave IL_004e\n\
         IL_004e: ldloc.1\n\
         IL_004f: ret\n\
         .try IL_0020 to IL_0030 catch 0x01000020 handler IL_0030 to IL_0036\n\
         .try IL_0017 to IL_001f catch 0x01000020 handler IL_001f to IL_0038\n\
         .try IL_0038 to IL_0048 catch 0x01000020 handler IL_0048 to IL_004e\n\
         .try IL_0000 to IL_0011 catch 0x01000020 handler IL_0011 to IL_0017\n"
    );
    assert_eq!(
        cx.locals.unwrap().locals,
        vec![state(), TypeSig::I4, exception(), TypeSig::I4],
        "state, result, exception, default(int)"
    );
    assert_eq!(
        cx.specs,
        vec![
            (Token(0x0A00_0012), vec![TypeSig::Object, TypeSig::I4]),
            (Token(0x0A00_0010), vec![TypeSig::Object]),
        ]
    );
    assert!(cx.member_refs.is_empty());
}
