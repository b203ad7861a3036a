//! Real method bodies compiled by Mono's C# compiler (`mcs`) from
//! `tests/fixtures/cil/Sample.cs` and extracted by an independent tool
//! (`scripts/gen/cil-extract-bodies.py`): they must round-trip byte-identically,
//! and their signatures too.

use std::collections::HashMap;

use corprof::cil::{FieldSig, MethodBody, MethodSig, OpCode, Operand, StackSig, Token};

struct Fixture {
    bodies: Vec<(String, Token, Vec<u8>, Vec<u8>)>,
    /// MethodDef and MemberRef signatures.
    sigs: HashMap<Token, Vec<u8>>,
    /// MethodSpec token -> generic method token.
    specs: HashMap<Token, Token>,
    /// MethodSpec instantiations and field, property, stand-alone and
    /// TypeSpec blobs: (kind, token, blob).
    blobs: Vec<(String, Token, Vec<u8>)>,
}

fn hex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

fn token(s: &str) -> Token {
    Token(u32::from_str_radix(s.trim_start_matches("0x"), 16).unwrap())
}

fn load(text: &str) -> Fixture {
    let mut f = Fixture {
        bodies: Vec::new(),
        sigs: HashMap::new(),
        specs: HashMap::new(),
        blobs: Vec::new(),
    };
    for line in text.lines() {
        let cols: Vec<&str> = line.split('\t').collect();
        match cols[0] {
            "body" => {
                let t = token(cols[2]);
                f.sigs.insert(t, hex(cols[4]));
                f.bodies
                    .push((cols[1].to_string(), t, hex(cols[3]), hex(cols[4])));
            }
            "ref" => {
                f.sigs.insert(token(cols[2]), hex(cols[3]));
            }
            "spec" => {
                f.specs.insert(token(cols[1]), token(cols[2]));
                f.blobs
                    .push(("methodspec".into(), token(cols[1]), hex(cols[3])));
            }
            "sig" => f
                .blobs
                .push((cols[1].to_string(), token(cols[2]), hex(cols[3]))),
            other => panic!("bad fixture line kind {other}"),
        }
    }
    f
}

fn fixtures() -> Vec<(&'static str, Fixture)> {
    vec![
        ("debug", load(include_str!("fixtures/cil/Sample.debug.txt"))),
        ("opt", load(include_str!("fixtures/cil/Sample.opt.txt"))),
    ]
}

#[test]
fn real_bodies_round_trip_byte_identical() {
    let mut n = 0;
    let mut with_eh = 0;
    let mut fat = 0;
    for (_, f) in fixtures() {
        assert!(f.bodies.len() >= 40);
        for (name, _, bytes, _) in &f.bodies {
            let body = MethodBody::decode(bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(&body.encode().unwrap(), bytes, "{name}");
            // The listing covers every instruction.
            assert_eq!(
                body.to_string().lines().count(),
                body.instructions().len() + body.clauses().len()
            );
            n += 1;
            with_eh += usize::from(!body.clauses().is_empty());
            fat += usize::from(body.header().fat);
        }
    }
    assert!(n >= 80, "{n} bodies");
    assert!(with_eh >= 8, "{with_eh} bodies with exception clauses");
    assert!(fat >= 20 && fat < n, "{fat} fat of {n}");
}

#[test]
fn real_signatures_round_trip() {
    for (_, f) in fixtures() {
        let mut fields = 0;
        for (tok, sig) in &f.sigs {
            // MemberRefs name fields (0x06) as well as methods.
            let enc = if sig[0] == 0x06 {
                fields += 1;
                FieldSig::decode(sig)
                    .unwrap_or_else(|e| panic!("{tok}: {e}"))
                    .encode()
            } else {
                MethodSig::decode(sig)
                    .unwrap_or_else(|e| panic!("{tok}: {e}"))
                    .encode()
            };
            assert_eq!(&enc.unwrap(), sig, "{tok}");
        }
        assert!(fields >= 1);
    }
}

#[test]
fn real_method_names() {
    let f = load(include_str!("fixtures/cil/Sample.debug.txt"));
    let names = |t: Token| format!("{t}");
    let find = |n: &str| f.bodies.iter().find(|b| b.0 == n).unwrap();
    let fib = find("Program::Fib");
    let sig = MethodSig::decode(&fib.3).unwrap();
    assert_eq!(sig.format_method(&fib.0, &names), "int Program::Fib(int)");
    let ctor = find("Program::.ctor");
    let sig = MethodSig::decode(&ctor.3).unwrap();
    assert_eq!(sig.format_method(&ctor.0, &names), "void Program::.ctor()");
    let va = find("Program::VarArgs");
    assert_eq!(MethodSig::decode(&va.3).unwrap().kind(), 5);
}

/// Computed max stack never exceeds the compiler's (which must be an upper
/// bound) and matches the figure in every fat header.
#[test]
fn real_max_stack() {
    for (which, f) in fixtures() {
        let mut checked = 0;
        let mut equal = 0;
        let mut fat = 0;
        for (name, _, bytes, _) in &f.bodies {
            let body = MethodBody::decode(bytes).unwrap();
            // MethodDef/MemberRef tokens map to their signature; MethodSpec
            // tokens to that of their generic method.
            let resolve = |t: Token| {
                let t = f.specs.get(&t).copied().unwrap_or(t);
                f.sigs
                    .get(&t)
                    .and_then(|s| MethodSig::decode(s).ok())
                    .map(|s| s.stack_sig())
            };
            match body.compute_max_stack(resolve) {
                Ok(m) => {
                    assert!(
                        m <= body.header().max_stack,
                        "{which} {name}: {m} > {}",
                        body.header().max_stack
                    );
                    checked += 1;
                    // A tiny header implies 8; only fat headers carry the
                    // compiler's own figure.
                    if body.header().fat {
                        fat += 1;
                        equal += usize::from(m == body.header().max_stack);
                        if m != body.header().max_stack {
                            eprintln!(
                                "{which} {name}: computed {m}, header {}",
                                body.header().max_stack
                            );
                        }
                    }
                }
                Err(e) => panic!("{which} {name}: {e}"),
            }
        }
        assert_eq!(checked, f.bodies.len(), "{which}");
        assert!(fat >= 10, "{which}: {fat}");
        assert_eq!(equal, fat, "{which}: {equal} of {fat} fat headers match");
    }
}

/// Field, property, stand-alone (locals), TypeSpec and MethodSpec blobs of
/// the real assemblies round-trip through the matching decoder.
#[test]
fn real_signature_blobs_round_trip() {
    use corprof::cil::{LocalVarSig, MethodSpecSig, PropertySig, TypeSig};
    let mut seen = HashMap::new();
    let mut pinned = false;
    let mut md_array = false;
    let mut modreq = false;
    let mut generic_inst = false;
    for (_, f) in fixtures() {
        for (kind, tok, blob) in &f.blobs {
            let enc = match kind.as_str() {
                "field" => {
                    let s = FieldSig::decode(blob).unwrap_or_else(|e| panic!("{tok}: {e}"));
                    modreq |= matches!(s.ty, TypeSig::Modified { required: true, .. });
                    s.encode()
                }
                "property" => PropertySig::decode(blob)
                    .unwrap_or_else(|e| panic!("{tok}: {e}"))
                    .encode(),
                "standalone" if blob[0] == 0x07 => {
                    let s = LocalVarSig::decode(blob).unwrap_or_else(|e| panic!("{tok}: {e}"));
                    pinned |= s.locals.iter().any(|l| matches!(l, TypeSig::Pinned(_)));
                    md_array |= s.locals.iter().any(|l| matches!(l, TypeSig::Array(..)));
                    s.encode()
                }
                "standalone" => MethodSig::decode(blob)
                    .unwrap_or_else(|e| panic!("{tok}: {e}"))
                    .encode(),
                "typespec" => {
                    let t = TypeSig::decode(blob).unwrap_or_else(|e| panic!("{tok}: {e}"));
                    generic_inst |= matches!(t, TypeSig::GenericInst { .. });
                    t.encode()
                }
                "methodspec" => MethodSpecSig::decode(blob)
                    .unwrap_or_else(|e| panic!("{tok}: {e}"))
                    .encode(),
                other => panic!("unknown blob kind {other}"),
            };
            assert_eq!(&enc.unwrap(), blob, "{kind} {tok}");
            *seen.entry(kind.clone()).or_insert(0) += 1;
        }
    }
    for kind in ["field", "property", "standalone", "typespec", "methodspec"] {
        assert!(
            seen.get(kind).copied().unwrap_or(0) >= 1,
            "no {kind} blobs: {seen:?}"
        );
    }
    assert!(pinned && md_array && modreq && generic_inst);
}

/// The profiler scenario on a real body: probe at entry, constant changed.
#[test]
fn real_body_instrumentation() {
    let f = load(include_str!("fixtures/cil/Sample.opt.txt"));
    let (_, _, bytes, _) = f.bodies.iter().find(|b| b.0 == "Program::Answer").unwrap();
    assert_eq!(bytes, &[0x0E, 0x1F, 0x29, 0x2A]); // tiny: ldc.i4.s 41; ret
    let mut body = MethodBody::decode(bytes).unwrap();
    let probe = Token(0x0A00_0001);
    body.insert(0, OpCode::CALL, Operand::Token(probe)).unwrap();
    let at = body.find(|i| *i.operand() == Operand::I8(41)).unwrap();
    body.replace(at, OpCode::LDC_I4_S, Operand::I8(42)).unwrap();
    body.update_max_stack(|_| Some(StackSig::default()))
        .unwrap();
    assert_eq!(
        body.encode().unwrap(),
        [0x22, 0x28, 0x01, 0x00, 0x00, 0x0A, 0x1F, 0x2A, 0x2A]
    );

    // Every real body grown by 300 bytes at entry: branches widen as needed,
    // clauses go fat, and re-decoding shows the same instructions (up to
    // short/long branch form) with the same targets, shifted by 300.
    let norm = |o: OpCode| o.long_form().unwrap_or(o);
    for (name, _, bytes, _) in &f.bodies {
        let original = MethodBody::decode(bytes).unwrap();
        let mut body = original.clone();
        for _ in 0..300 {
            body.insert(0, OpCode::NOP, Operand::None).unwrap();
        }
        let out = body.encode().unwrap_or_else(|e| panic!("{name}: {e}"));
        let again = MethodBody::decode(&out).unwrap();
        assert!(again.header().fat);
        assert_eq!(again.clauses().len(), original.clauses().len(), "{name}");
        let target_offsets = |b: &MethodBody, i: &corprof::cil::Instruction| -> Vec<u32> {
            i.operand()
                .targets()
                .iter()
                .map(|l| b.get(*l).map_or(b.header().code_size(), |t| t.offset()))
                .collect()
        };
        let mut original = original;
        original.layout().unwrap();
        for (a, b) in original
            .instructions()
            .iter()
            .zip(&again.instructions()[300..])
        {
            assert_eq!(norm(a.opcode()), norm(b.opcode()), "{name}");
            let ta: Vec<u32> = target_offsets(&original, a)
                .iter()
                .map(|o| o + 300)
                .collect();
            assert_eq!(ta.len(), target_offsets(&again, b).len(), "{name}");
            if a.opcode() == b.opcode() {
                // Same form: same byte size, so all targets moved by exactly 300.
                assert_eq!(ta, target_offsets(&again, b), "{name}");
            }
            if a.operand().targets().is_empty() {
                assert_eq!(a.operand(), b.operand(), "{name}");
            }
        }
    }
}

/// Every real body with 130 nops inserted in the middle: branches across the
/// middle widen where needed, and after re-decoding each branch and clause
/// still points at the same instruction.
#[test]
fn real_bodies_grown_in_the_middle_keep_their_targets() {
    let mut widened = 0;
    for (_, f) in fixtures() {
        for (name, _, bytes, _) in &f.bodies {
            let original = MethodBody::decode(bytes).unwrap();
            let n = original.instructions().len();
            let mid = n / 2;
            let mut body = original.clone();
            for _ in 0..130 {
                body.insert(mid, OpCode::NOP, Operand::None).unwrap();
            }
            let again = MethodBody::decode(&body.encode().unwrap()).unwrap();
            assert_eq!(again.instructions().len(), n + 130);
            // original index -> index in `again`
            let map = |i: usize| if i < mid { i } else { i + 130 };
            let index_in =
                |b: &MethodBody, l: corprof::cil::Label| b.position(l).unwrap_or(usize::MAX);
            let remap = |i: usize| if i == usize::MAX { usize::MAX } else { map(i) };
            for (k, ins) in original.instructions().iter().enumerate() {
                let new = &again.instructions()[map(k)];
                if new.opcode() != ins.opcode() {
                    assert_eq!(ins.opcode().long_form(), Some(new.opcode()), "{name}");
                    widened += 1;
                }
                let want: Vec<usize> = ins
                    .operand()
                    .targets()
                    .iter()
                    .map(|l| remap(index_in(&original, *l)))
                    .collect();
                let got: Vec<usize> = new
                    .operand()
                    .targets()
                    .iter()
                    .map(|l| index_in(&again, *l))
                    .collect();
                assert_eq!(want, got, "{name} instruction {k}");
            }
            for (c, d) in original.clauses().iter().zip(again.clauses()) {
                let ends = [
                    (c.try_start, d.try_start),
                    (c.try_end, d.try_end),
                    (c.handler_start, d.handler_start),
                    (c.handler_end, d.handler_end),
                ];
                for (before, after) in ends {
                    assert_eq!(
                        remap(index_in(&original, before)),
                        index_in(&again, after),
                        "{name}"
                    );
                }
            }
        }
    }
    // mcs -optimize+ uses short branches: two of them span the middle by more
    // than 127 - 130 bytes and must widen.
    assert!(widened >= 2, "only {widened} branches widened");
}

/// Every real body wraps (`corprof::instrument::wrap`), except the vararg one,
/// which is refused: the original instructions stay in order (each `ret`
/// now a `leave` or `stloc; leave`, each `tail.` a `nop`), the compiler's
/// exception clauses come first, four new ones last, and the result
/// re-decodes to the same listing with a max stack that covers the
/// original's.
#[test]
fn real_bodies_wrap() {
    use corprof::cil::{ClauseKind, ErrorKind};
    use corprof::cil::{LocalVarSig, TypeSig};
    use corprof::instrument::{wrap, Probes, ThisArg, WrapContext};

    struct Cx<'a>(&'a Fixture);
    impl WrapContext for Cx<'_> {
        fn type_token(&mut self, _: &TypeSig) -> Option<Token> {
            Some(Token(0x1B00_00FF))
        }
        fn local_sig_token(&mut self, _: &LocalVarSig) -> Option<Token> {
            Some(Token(0x1100_00FF))
        }
        fn stack_sig(&mut self, t: Token) -> Option<StackSig> {
            let t = self.0.specs.get(&t).copied().unwrap_or(t);
            let sig = self.0.sigs.get(&t)?;
            MethodSig::decode(sig).ok().map(|s| s.stack_sig())
        }
        fn method_spec(&mut self, method: Token, _: &[TypeSig]) -> Option<Token> {
            // OnMethodBegin 0x0A000F01 -> 0x2B000F01, OnMethodEnd -> ..F02.
            Some(Token(0x2B00_0000 | (method.0 & 0xFFFF)))
        }
        fn member_ref(&mut self, _: Token, _: &str, _: &MethodSig) -> Option<Token> {
            Some(Token(0x0A00_0F00))
        }
    }
    let probes = Probes {
        begin: Some(Token(0x0A00_0F01)),
        begin_takes_name: true,
        end: Some(Token(0x0A00_0F02)),
        end_state_by_ref: true,
        state: Token(0x0100_0F03),
        return_type: Token(0x0100_0F04),
        exception: Token(0x0100_0F05),
        method_name: Token(0x7000_0F06),
        async_end: None,
    };
    for (which, f) in fixtures() {
        let mut wrapped = 0;
        for (name, _, bytes, sig) in &f.bodies {
            let sig = MethodSig::decode(sig).unwrap();
            let mut body = MethodBody::decode(bytes).unwrap();
            let original = body.clone();
            let locals = match body.header().local_var_sig {
                Some(t) => {
                    let blob = &f.blobs.iter().find(|(_, tok, _)| *tok == t).unwrap().2;
                    LocalVarSig::decode(blob).unwrap()
                }
                None => LocalVarSig { locals: vec![] },
            };
            let this = if !sig.has_this() {
                ThisArg::Static
            } else if name.starts_with("Point::") {
                ThisArg::Value(TypeSig::ValueType(Token(0x0200_0004)))
            } else {
                ThisArg::Reference(TypeSig::Class(Token(0x0200_0002)))
            };
            let result = wrap(&mut body, &sig, &this, &locals, &probes, &mut Cx(&f));
            if name.ends_with("::VarArgs") {
                assert_eq!(
                    result.unwrap_err().kind(),
                    &ErrorKind::Unsupported("vararg method")
                );
                assert_eq!(body, original);
                continue;
            }
            result.unwrap_or_else(|e| panic!("{which} {name}: {e}"));
            wrapped += 1;
            let bytes = body.encode().unwrap();
            let again = MethodBody::decode(&bytes).unwrap();
            assert_eq!(again.to_string(), body.to_string(), "{which} {name}");
            assert!(again.header().max_stack >= original.header().max_stack.min(3));
            // The original instructions, in order, as a subsequence.
            let mut it = again.instructions().iter();
            for ins in original.instructions() {
                let want = match ins.opcode() {
                    OpCode::RET => OpCode::LEAVE,
                    OpCode::TAIL => OpCode::NOP,
                    op => op,
                };
                assert!(
                    it.any(|i| i.opcode() == want
                        && (want == OpCode::LEAVE
                            || i.operand() == ins.operand()
                            || matches!(ins.operand(), Operand::Branch(_) | Operand::Switch(_)))),
                    "{which} {name}: {} missing",
                    ins.opcode().name()
                );
            }
            let n = original.clauses().len();
            assert_eq!(again.clauses().len(), n + 4, "{which} {name}");
            for (old, new) in original.clauses().iter().zip(again.clauses()) {
                // Filter labels are renumbered by the re-decode: compare kinds.
                match (old.kind, new.kind) {
                    (ClauseKind::Catch(a), ClauseKind::Catch(b)) => assert_eq!(a, b),
                    (a, b) => assert_eq!(a.flags(), b.flags(), "{which} {name}: old clauses first"),
                }
            }
            for new in &again.clauses()[n..] {
                assert_eq!(
                    new.kind,
                    ClauseKind::Catch(probes.exception),
                    "{which} {name}"
                );
            }
        }
        assert!(wrapped >= 40, "{which}: {wrapped}");
    }
}
