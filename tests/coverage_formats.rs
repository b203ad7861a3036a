//! The coverage module's formats: inflate against Python's `zlib`, the
//! Portable PDB reader on a PDB Roslyn wrote, filters and the report
//! writers.

use std::process::Command;

use corprof::coverage::filter::{glob_match, Filter};
use corprof::coverage::inflate::{inflate, InflateError};

/// Inputs compressed by Python's zlib (raw DEFLATE, `wbits=-15`) at several
/// levels and strategies, so that stored (level 0), fixed (`Z_FIXED`) and
/// dynamic Huffman blocks all occur. Each line: `level strategy hex(input)
/// hex(output)`.
const ZLIB_VECTORS: &str = r#"
import random, zlib
rng = random.Random(30)
inputs = [b"", b"a", b"abc" * 1000, bytes(range(256)) * 40,
          bytes(rng.getrandbits(8) for _ in range(70000)),
          b"".join(rng.choice([b"the ", b"quick ", b"brown ", b"fox ", b"\x00\x01"]) for _ in range(20000))]
for n in range(40):
    inputs.append(bytes(rng.choice(b"ab\x00\xff") for _ in range(rng.randrange(1, 3000))))
for data in inputs:
    for level, strategy in [(0, 0), (1, 0), (6, 0), (9, 0), (6, zlib.Z_FIXED), (6, zlib.Z_HUFFMAN_ONLY), (6, zlib.Z_RLE)]:
        c = zlib.compressobj(level, zlib.DEFLATED, -15, 9, strategy)
        out = c.compress(data) + c.flush()
        print(level, strategy, data.hex() or "-", out.hex())
"#;

fn unhex(s: &str) -> Vec<u8> {
    if s == "-" {
        return Vec::new();
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

#[test]
fn inflate_matches_python_zlib() {
    let out = Command::new("python3")
        .args(["-c", ZLIB_VECTORS])
        .output()
        .expect("python3 must be installed (scripts/test.sh needs it)");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let mut checked = 0;
    let mut block_types = [false; 3];
    for line in text.lines() {
        let parts: Vec<&str> = line.split(' ').collect();
        let (data, compressed) = (unhex(parts[2]), unhex(parts[3]));
        // The first block's type (bits 1-2 of the first byte).
        block_types[usize::from(compressed[0] >> 1 & 3)] = true;
        assert_eq!(
            inflate(&compressed, data.len()).as_deref(),
            Ok(&data[..]),
            "level {} strategy {}",
            parts[0],
            parts[1]
        );
        if !data.is_empty() {
            assert_eq!(
                inflate(&compressed, data.len() - 1),
                Err(InflateError::TooLarge)
            );
        }
        // Every truncation is an error, never a panic or a short success.
        for cut in [0, compressed.len() / 2, compressed.len().saturating_sub(1)] {
            if cut < compressed.len() {
                assert!(inflate(&compressed[..cut], data.len()).is_err());
            }
        }
        checked += 1;
    }
    assert_eq!(checked, 46 * 7);
    assert_eq!(
        block_types,
        [true, true, true],
        "stored, fixed and dynamic blocks"
    );
}

#[test]
fn filters() {
    assert!(glob_match("*", ""));
    assert!(glob_match("E2E.*", "E2E.Coverage.Program"));
    assert!(glob_match("*.Pro?ram", "E2E.Coverage.Program"));
    assert!(!glob_match("E2E.*", "System.String"));
    assert!(glob_match("a*b*c", "aXXbYYc"));
    assert!(!glob_match("a*b*c", "aXXbYY"));
    let f = Filter::parse("[Cov*]E2E.*").unwrap();
    assert!(f.matches("Coverage", "E2E.Coverage.Program"));
    assert!(!f.matches("Other", "E2E.Coverage.Program"));
    assert_eq!(Filter::parse_list("[a]*; [b]c.*,").unwrap().len(), 2);
    for bad in ["E2E.*", "[E2E", "[]x", "[a]", "[a]]b"] {
        assert!(Filter::parse(bad).is_err(), "{bad}");
    }
}

fn fixture(name: &str) -> Vec<u8> {
    let path = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/coverage")
        .join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Tiny.pdb, read by hand against tests/fixtures/coverage/Tiny.cs: one
/// document (the path mapped by `-pathmap`), SHA-256 and C#; `Main`'s
/// sequence points are the statements of lines 11-22 with their columns
/// (1-based, end exclusive), the `for` header's three parts on line 13 and
/// the `foreach` header's four on line 19 in the order Roslyn emits them
/// (init, body, increment, condition).
#[test]
fn portable_pdb_of_roslyn() {
    use corprof::coverage::pdb::PortablePdb;
    use corprof::GUID;
    let pdb = PortablePdb::parse(&fixture("Tiny.pdb")).unwrap();
    assert_eq!(pdb.documents.len(), 1);
    let doc = &pdb.documents[0];
    assert_eq!(doc.name, "/src/Tiny.cs");
    assert_eq!(
        doc.hash_algorithm,
        Some(GUID::parse("8829d00f-11b8-4213-878b-770e8597ac16"))
    );
    assert_eq!(
        doc.language,
        Some(GUID::parse("3f5162f8-07c6-11d3-9053-00c04fa302a1"))
    );
    // The checksum is SHA-256 of the source file as compiled.
    let sha = Command::new("sha256sum")
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/coverage/Tiny.cs"
        ))
        .output()
        .unwrap();
    let hex: String = doc.hash.iter().map(|b| format!("{b:02x}")).collect();
    assert!(
        String::from_utf8_lossy(&sha.stdout).starts_with(&hex),
        "hash {hex}"
    );

    let main = pdb.method(0x0600_0001).unwrap();
    let spans: Vec<(u32, u16, u32, u16)> = main
        .sequence_points
        .iter()
        .map(|p| (p.start_line, p.start_column, p.end_line, p.end_column))
        .collect();
    assert_eq!(
        spans,
        [
            (11, 9, 11, 10),  // {
            (12, 13, 12, 25), // int sum = 0;
            (13, 18, 13, 27), // int i = 0
            (14, 13, 14, 14), // {
            (15, 17, 15, 39), // sum += args[i].Length;
            (16, 13, 16, 14), // }
            (13, 46, 13, 49), // i++
            (13, 29, 13, 44), // i < args.Length
            (17, 13, 17, 25), // if (sum > 3)
            (18, 17, 18, 43), // Console.WriteLine("long");
            (19, 13, 19, 20), // foreach
            (19, 31, 19, 40), // Numbers()
            (19, 22, 19, 27), // var n
            (20, 17, 20, 26), // sum += n;
            (19, 28, 19, 30), // in
            (21, 13, 21, 39), // return Run().Result + sum;
            (22, 9, 22, 10),  // }
        ]
    );
    let offsets: Vec<u32> = main.sequence_points.iter().map(|p| p.il_offset).collect();
    assert!(offsets.windows(2).all(|w| w[0] < w[1]));
    assert!(main.sequence_points.iter().all(|p| p.document == 0));
    // Kickoff methods have no sequence points; their state machines'
    // MoveNext map back to them.
    assert!(pdb.method(0x0600_0002).unwrap().sequence_points.is_empty());
    let kickoffs: Vec<u32> = pdb.state_machines.iter().map(|&(_, k)| k).collect();
    assert_eq!(kickoffs.len(), 2);
    assert!(kickoffs.contains(&2) && kickoffs.contains(&3));
    let (iterator_move_next, _) = *pdb.state_machines.iter().find(|s| s.1 == 2).unwrap();
    assert_eq!(
        pdb.kickoff_method(0x0600_0000 | iterator_move_next),
        Some(0x0600_0002)
    );
    let lines: Vec<u32> = pdb
        .method(0x0600_0000 | iterator_move_next)
        .unwrap()
        .sequence_points
        .iter()
        .map(|p| p.start_line)
        .collect();
    assert_eq!(lines, [25, 26, 27, 28]);
    assert!(!pdb
        .method(0x0600_0000 | iterator_move_next)
        .unwrap()
        .hidden_offsets
        .is_empty());
    assert_eq!(pdb.source_link, None);
    assert_eq!(pdb.method(0x0200_0001), None);
    assert_eq!(pdb.method(0x0600_0000 | 1000), None);
}

/// The same compilation with `-debug:embedded`: the debug directory holds
/// the PDB, deflated; inflated, it reads like the separate one. The
/// separate one's assembly names it in its CodeView entry.
#[test]
fn embedded_and_codeview() {
    use corprof::coverage::pdb::PortablePdb;
    use corprof::coverage::pe::debug_directory;
    let separate = PortablePdb::parse(&fixture("Tiny.pdb")).unwrap();
    let dir = debug_directory(&fixture("Tiny.embedded.dll")).unwrap();
    let embedded = PortablePdb::parse(dir.embedded_pdb.as_ref().unwrap()).unwrap();
    assert_eq!(embedded.methods, separate.methods);
    assert_eq!(embedded.documents, separate.documents);
    let dir = debug_directory(&fixture("Tiny.dll")).unwrap();
    assert_eq!(dir.embedded_pdb, None);
    assert!(dir.codeview_path.as_deref().unwrap().ends_with("Tiny.pdb"));
    // Its Portable CodeView entry names the PDB's id (GUID + stamp).
    assert_eq!(dir.portable_pdb_id, Some(separate.id));
    // Not a PDB, and a Windows PDB, are errors with a message.
    assert!(PortablePdb::parse(b"MZ\x90\x00").is_err());
    let msf = PortablePdb::parse(b"Microsoft C/C++ MSF 7.00\r\n\x1aDS\0\0\0").unwrap_err();
    assert!(msf.to_string().contains("portable"), "{msf}");
}

/// A `.pdb` beside the assembly that another build wrote (here: Tiny.pdb
/// with another id in its `#Pdb` stream, as a rebuild of changed source
/// would have) is refused with a message naming both ids: its IL offsets
/// would be another build's.
#[test]
fn a_pdb_of_another_build_is_refused() {
    use corprof::coverage::load_pdb;
    use corprof::coverage::pdb::PortablePdb;
    let dir = std::env::temp_dir().join(format!("corprof-stale-pdb-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let assembly = dir.join("Tiny.dll");
    std::fs::write(&assembly, fixture("Tiny.dll")).unwrap();
    // The matching PDB loads.
    let pdb = fixture("Tiny.pdb");
    std::fs::write(dir.join("Tiny.pdb"), &pdb).unwrap();
    assert!(load_pdb(&assembly).unwrap().is_some());
    // Another id (the precondition: it stands once in the file, and the
    // changed file still parses, with the new id).
    let id = PortablePdb::parse(&pdb).unwrap().id;
    let at: Vec<usize> = (0..pdb.len() - 20)
        .filter(|&i| pdb[i..i + 20] == id)
        .collect();
    assert_eq!(at.len(), 1);
    let mut other = pdb.clone();
    other[at[0]] ^= 0xFF;
    let other_id = PortablePdb::parse(&other).unwrap().id;
    assert_ne!(other_id, id);
    std::fs::write(dir.join("Tiny.pdb"), &other).unwrap();
    let error = load_pdb(&assembly).unwrap_err();
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(
        error.contains("not the PDB this assembly was built with"),
        "{error}"
    );
    let hex: String = other_id.iter().map(|b| format!("{b:02x}")).collect();
    assert!(error.contains(&hex), "{error}");
}

/// Runs an instrumented body on a tiny interpreter of the opcodes it uses
/// (the probes' and the test bodies'), with memory as a map of `u64`
/// cells; returns what `ret` returned.
fn interpret(
    body: &corprof::cil::MethodBody,
    mut arg: i64,
    memory: &mut BTreeMap<u64, u64>,
) -> i64 {
    use corprof::cil::{OpCode, Operand};
    let code = body.instructions();
    let mut stack: Vec<i64> = Vec::new();
    let mut pc = 0;
    for _ in 0..10_000 {
        let ins = &code[pc];
        pc += 1;
        let op = ins.opcode();
        let jump = |label| body.position(label).expect("a branch target");
        match (op, ins.operand()) {
            (OpCode::LDARG_0, _) => stack.push(arg),
            (OpCode::STARG_S, _) => arg = stack.pop().unwrap(),
            (OpCode::LDC_I4_0, _) => stack.push(0),
            (OpCode::LDC_I4_1, _) => stack.push(1),
            (OpCode::LDC_I8, Operand::I64(v)) => stack.push(*v),
            (OpCode::CONV_U | OpCode::CONV_I8 | OpCode::NOP, _) => {}
            (OpCode::DUP, _) => stack.push(*stack.last().unwrap()),
            (OpCode::ADD | OpCode::SUB, _) => {
                let (b, a) = (stack.pop().unwrap(), stack.pop().unwrap());
                stack.push(if op == OpCode::ADD { a + b } else { a - b });
            }
            // A 64-bit process: a native int is an int64.
            (OpCode::LDIND_I8 | OpCode::LDIND_I, _) => {
                let address = stack.pop().unwrap() as u64;
                stack.push(*memory.get(&address).unwrap_or(&0) as i64);
            }
            (OpCode::STIND_I8 | OpCode::STIND_I, _) => {
                let value = stack.pop().unwrap() as u64;
                let address = stack.pop().unwrap() as u64;
                memory.insert(address, value);
            }
            (OpCode::BR | OpCode::BR_S, Operand::Branch(l)) => pc = jump(*l),
            (OpCode::BRTRUE | OpCode::BRTRUE_S, Operand::Branch(l)) => {
                if stack.pop().unwrap() != 0 {
                    pc = jump(*l);
                }
            }
            (OpCode::BRFALSE | OpCode::BRFALSE_S, Operand::Branch(l)) => {
                if stack.pop().unwrap() == 0 {
                    pc = jump(*l);
                }
            }
            (OpCode::RET, _) => {
                assert_eq!(stack.len(), 1, "the probes leave the stack as it was");
                return stack[0];
            }
            other => panic!("the test interpreter does not know {other:?}"),
        }
    }
    panic!("no ret within 10000 instructions");
}

use std::collections::BTreeMap;

/// Instruments `code` (a tiny-header body) with sequence points at
/// `visible`, runs it for each argument, and returns the counters by slot
/// with the plan.
fn probe_counts(
    code: &[u8],
    visible: &[u32],
    args: &[i64],
) -> (Vec<corprof::coverage::probes::Counter>, Vec<u64>) {
    use corprof::cil::MethodBody;
    use corprof::coverage::probes::{apply, plan};
    let mut bytes = vec![(code.len() as u8) << 2 | 2];
    bytes.extend_from_slice(code);
    let mut body = MethodBody::decode(&bytes).unwrap();
    let original: Vec<i64> = {
        let mut memory = BTreeMap::new();
        args.iter()
            .map(|&a| interpret(&body, a, &mut memory))
            .collect()
    };
    let plan = plan(&body, visible, &[], true);
    let base = 0x1000u64;
    apply(&mut body, &plan, base).unwrap();
    body.update_max_stack(|_| None).unwrap();
    assert!(body.header().max_stack >= 3, "a probe needs three slots");
    let body = MethodBody::decode(&body.encode().unwrap()).unwrap();
    let mut memory = BTreeMap::new();
    let results: Vec<i64> = args
        .iter()
        .map(|&a| interpret(&body, a, &mut memory))
        .collect();
    assert_eq!(results, original, "the probes change nothing else");
    let counts = (0..plan.counters.len())
        .map(|slot| {
            *memory
                .get(&(base + 8 * plan.counter_of(slot) as u64))
                .unwrap_or(&0)
        })
        .collect();
    (plan.counters, counts)
}

/// `return x != 0 ? 1 : 0;` as `ldarg.0; brfalse.s L; ldc.i4.1; ret; L:
/// ldc.i4.0; ret`, sequence points at 0, 3 and 5, run with 1, 0, 0: the
/// points count 3, 1, 2, the fall-through arm 1, the jump 2, the entry 3.
#[test]
fn probes_count_points_arms_and_entries() {
    use corprof::coverage::probes::Counter;
    let code = [0x02, 0x2C, 0x02, 0x17, 0x2A, 0x16, 0x2A];
    let (counters, counts) = probe_counts(&code, &[0, 3, 5], &[1, 0, 0]);
    let by: BTreeMap<String, u64> = counters
        .iter()
        .zip(&counts)
        .map(|(c, &n)| (format!("{c:?}"), n))
        .collect();
    let sp = |o: u32| format!("{:?}", Counter::SequencePoint { il_offset: o });
    let arm = |a: u32| {
        format!(
            "{:?}",
            Counter::BranchArm {
                il_offset: 1,
                arm: a
            }
        )
    };
    assert_eq!(by[&sp(0)], 3);
    assert_eq!(by[&sp(3)], 1);
    assert_eq!(by[&sp(5)], 2);
    assert_eq!(by[&arm(0)], 1);
    assert_eq!(by[&arm(1)], 2);
    assert_eq!(by[&format!("{:?}", Counter::Entry)], 3);
    assert_eq!(counters.len(), 6);
}

/// The counters are `u64`: in a 64-bit process a probe is `ldc.i8
/// <address>; conv.u; dup; ldind.i; ldc.i4.1; add; stind.i` (15 bytes of
/// IL, as the `u32` probe was: docs/coverage.md), and a counter that stood
/// at 2^32 - 1 reads 2^32 after one more hit, where a `u32` would have
/// wrapped to 0. The 32-bit process's increment (`ldind.i8; ldc.i4.1;
/// conv.i8; add; stind.i8`) counts the same.
#[test]
fn counters_are_u64_and_do_not_wrap_at_2_pow_32() {
    use corprof::cil::{MethodBody, OpCode, Operand};
    use corprof::coverage::probes::{apply, increment, plan};
    assert_eq!(usize::BITS, 64, "the probes below are a 64-bit process's");
    // ldarg.0; ret, one sequence point at 0.
    let code = [0x02, 0x2A];
    let mut bytes = vec![(code.len() as u8) << 2 | 2];
    bytes.extend_from_slice(&code);
    let original = MethodBody::decode(&bytes).unwrap();
    let mut body = original.clone();
    let plan = plan(&body, &[0], &[], true);
    let base = 0x1000u64;
    apply(&mut body, &plan, base).unwrap();
    let encoded = body.encode().unwrap();
    let body = MethodBody::decode(&encoded).unwrap();
    let ops: Vec<OpCode> = body.instructions().iter().map(|i| i.opcode()).collect();
    let probe = [
        OpCode::LDC_I8,
        OpCode::CONV_U,
        OpCode::DUP,
        OpCode::LDIND_I,
        OpCode::LDC_I4_1,
        OpCode::ADD,
        OpCode::STIND_I,
    ];
    // The point at 0 shares the entry's probe: one probe, then the body.
    assert_eq!(ops[..probe.len()], probe, "{ops:?}");
    assert_eq!(ops[probe.len()..], [OpCode::LDARG_0, OpCode::RET]);
    // 15 bytes of IL: ldc.i8 (9) and six one-byte opcodes; a tiny header.
    assert_eq!(encoded.len(), 1 + 15 + code.len());
    let slot = plan.counter_of(0);
    let address = base + 8 * slot as u64;
    let mut memory = BTreeMap::from([(address, u64::from(u32::MAX))]);
    assert_eq!(interpret(&body, 7, &mut memory), 7);
    assert_eq!(memory[&address], 1 << 32);
    assert_eq!(memory.len(), 1, "one counter written: {memory:?}");
    // The 32-bit process's increment, by hand, counts the same.
    let wide = increment(false);
    assert_eq!(
        wide,
        [
            OpCode::LDIND_I8,
            OpCode::LDC_I4_1,
            OpCode::CONV_I8,
            OpCode::ADD,
            OpCode::STIND_I8
        ]
    );
    assert_eq!(increment(true), &probe[3..]);
    let mut body = original;
    let at = body.instructions()[0].label();
    let mut n = 0;
    let mut put = |body: &mut MethodBody, op, operand| {
        body.insert(n, op, operand).unwrap();
        n += 1;
    };
    put(&mut body, OpCode::LDC_I8, Operand::I64(address as i64));
    put(&mut body, OpCode::CONV_U, Operand::None);
    put(&mut body, OpCode::DUP, Operand::None);
    for &op in wide {
        put(&mut body, op, Operand::None);
    }
    assert_eq!(body.position(at), Some(3 + wide.len()));
    let body = MethodBody::decode(&body.encode().unwrap()).unwrap();
    assert_eq!(interpret(&body, 7, &mut memory), 7);
    assert_eq!(memory[&address], (1 << 32) + 1);
}

/// A loop back to offset 0 (`do { x--; } while (x != 0); return x;`): the
/// first sequence point counts each iteration (the back branch reaches its
/// probe), the entry probe only the call.
#[test]
fn probes_tell_a_loop_back_to_the_first_line_from_the_entry() {
    use corprof::coverage::probes::Counter;
    // ldarg.0; ldc.i4.1; sub; starg.s 0; ldarg.0; brtrue.s IL_0000; ldarg.0; ret
    let code = [0x02, 0x17, 0x59, 0x10, 0x00, 0x02, 0x2D, 0xF8, 0x02, 0x2A];
    let (counters, counts) = probe_counts(&code, &[0, 8], &[3]);
    let count = |c: Counter| counts[counters.iter().position(|&x| x == c).unwrap()];
    assert_eq!(count(Counter::SequencePoint { il_offset: 0 }), 3);
    assert_eq!(count(Counter::SequencePoint { il_offset: 8 }), 1);
    assert_eq!(
        count(Counter::BranchArm {
            il_offset: 6,
            arm: 1
        }),
        2
    );
    assert_eq!(
        count(Counter::BranchArm {
            il_offset: 6,
            arm: 0
        }),
        1
    );
    assert_eq!(count(Counter::Entry), 1);
}

/// The lcov writer on hand-made counts: the expected text written from the
/// tracefile format (geninfo(1)).
#[test]
fn lcov_and_cobertura_of_hand_made_counts() {
    use corprof::coverage::report::{cobertura, lcov, BranchHits, MethodCoverage, PointHits};
    let point = |l: u32, h: u64| PointHits {
        document: "/src/A.cs".into(),
        start_line: l,
        end_line: l,
        hits: h,
    };
    let methods = vec![
        MethodCoverage {
            assembly: "A".into(),
            class: "N.A".into(),
            name: "N.A::F".into(),
            token: 0x0600_0001,
            calls: 2,
            points: vec![point(3, 2), point(4, 2), point(5, 0), point(4, 7)],
            branches: vec![
                BranchHits {
                    document: "/src/A.cs".into(),
                    line: 4,
                    il_offset: 9,
                    arm: 0,
                    hits: 0,
                },
                BranchHits {
                    document: "/src/A.cs".into(),
                    line: 4,
                    il_offset: 9,
                    arm: 1,
                    hits: 2,
                },
            ],
        },
        MethodCoverage {
            assembly: "A".into(),
            class: "N.A".into(),
            name: "N.A::G<&>".into(),
            token: 0x0600_0002,
            calls: 0,
            points: vec![point(8, 0)],
            branches: vec![],
        },
    ];
    assert_eq!(
        lcov(&methods),
        "TN:\nSF:/src/A.cs\nFN:3,N.A::F\nFN:8,N.A::G<&>\nFNDA:2,N.A::F\nFNDA:0,N.A::G<&>\nFNF:2\nFNH:1\n\
         BRDA:4,0,0,0\nBRDA:4,0,1,2\nBRF:2\nBRH:1\n\
         DA:3,2\nDA:4,7\nDA:5,0\nDA:8,0\nLF:4\nLH:2\nend_of_record\n"
    );
    let xml = cobertura(&methods, 1_700_000_000);
    assert!(
        xml.contains(
            r#"lines-covered="2" lines-valid="4" branches-covered="1" branches-valid="2""#
        ),
        "{xml}"
    );
    assert!(
        xml.contains(r#"<line number="4" hits="7" branch="true" condition-coverage="50% (1/2)"/>"#),
        "{xml}"
    );
    assert!(xml.contains(r#"<method name="G&lt;&amp;&gt;""#), "{xml}");
    assert!(
        xml.contains(r#"<class name="N.A" filename="A.cs" line-rate="0.5000""#),
        "{xml}"
    );
    assert!(
        xml.contains("<sources>\n    <source>/src/</source>\n  </sources>"),
        "{xml}"
    );
}

/// A report does not depend on the order the methods were compiled in:
/// overloads are numbered in token order, and the methods given in any
/// order make the same bytes. Cobertura's `<source>` is the directory the
/// documents share, and its file names are relative to it.
#[test]
fn reports_do_not_depend_on_the_compilation_order() {
    use corprof::coverage::report::{cobertura, lcov, BranchHits, MethodCoverage, PointHits};
    let method = |doc: &str, name: &str, token: u32, line: u32, hits: u64| MethodCoverage {
        assembly: "A".into(),
        class: "N.A".into(),
        name: name.into(),
        token,
        calls: hits,
        points: vec![PointHits {
            document: doc.into(),
            start_line: line,
            end_line: line,
            hits,
        }],
        branches: vec![BranchHits {
            document: doc.into(),
            line,
            il_offset: 4,
            arm: 0,
            hits,
        }],
    };
    let methods = vec![
        method("/src/lib/A.cs", "N.A::Neg", 0x0600_0003, 30, 5),
        method("/src/lib/A.cs", "N.A::Neg", 0x0600_0001, 10, 0),
        method("/src/lib/A.cs", "N.A::Neg", 0x0600_0002, 10, 7),
        method("/src/lib/sub/B.cs", "N.A::Other", 0x0600_0004, 3, 1),
    ];
    let (text, xml) = (lcov(&methods), cobertura(&methods, 1));
    let fnda: Vec<&str> = text.lines().filter(|l| l.starts_with("FNDA:")).collect();
    // Two overloads on line 10: named by token, not by count or input order.
    assert_eq!(
        fnda,
        [
            "FNDA:0,N.A::Neg",
            "FNDA:7,N.A::Neg#2",
            "FNDA:5,N.A::Neg#3",
            "FNDA:1,N.A::Other"
        ],
        "{text}"
    );
    let brda: Vec<&str> = text.lines().filter(|l| l.starts_with("BRDA:")).collect();
    assert_eq!(
        brda,
        [
            "BRDA:10,0,0,-",
            "BRDA:10,1,0,7",
            "BRDA:30,2,0,5",
            "BRDA:3,0,0,1"
        ],
        "{text}"
    );
    for order in [[3, 2, 1, 0], [1, 3, 0, 2], [2, 0, 3, 1]] {
        let shuffled: Vec<MethodCoverage> = order.iter().map(|&i| methods[i].clone()).collect();
        assert_eq!(lcov(&shuffled), text);
        assert_eq!(cobertura(&shuffled, 1), xml);
    }
    assert!(xml.contains("<source>/src/lib/</source>"), "{xml}");
    assert!(xml.contains(r#"filename="A.cs""#), "{xml}");
    assert!(xml.contains(r#"filename="sub/B.cs""#), "{xml}");
    // The overloads' <method> elements in token order: counts 0, 7, 5.
    let rates: Vec<&str> = xml
        .match_indices("<method name=\"Neg\" signature=\"\" line-rate=\"")
        .map(|(at, m)| &xml[at + m.len()..at + m.len() + 1])
        .collect();
    assert_eq!(rates, ["0", "1", "1"], "{xml}");
}

/// A multi-line sequence point (a `switch` expression, lines 10-16) counts
/// for the lines it spans on which no point starts (its `{` and `};`);
/// an arm's line counts its own points only: the arm that never ran (line
/// 15) reads 0, though the whole expression ran 3 times. (Roslyn's points
/// of `Geometry.Classify` in tests/e2e/xunit/Shapes; coverlet reads it the
/// same.)
#[test]
fn a_multi_line_point_does_not_cover_the_lines_with_points_of_their_own() {
    use corprof::coverage::report::{lcov, MethodCoverage, PointHits};
    let point = |start: u32, end: u32, hits: u64| PointHits {
        document: "/src/S.cs".into(),
        start_line: start,
        end_line: end,
        hits,
    };
    let methods = vec![MethodCoverage {
        assembly: "S".into(),
        class: "S".into(),
        name: "S::Classify".into(),
        token: 0x0600_0001,
        calls: 3,
        points: vec![
            point(10, 16, 3),
            point(11, 11, 1),
            point(11, 11, 0),
            point(12, 12, 1),
            point(13, 13, 2),
            point(14, 14, 1),
            point(15, 15, 0),
        ],
        branches: vec![],
    }];
    let text = lcov(&methods);
    let da: Vec<&str> = text.lines().filter(|l| l.starts_with("DA:")).collect();
    assert_eq!(
        da,
        ["DA:10,3", "DA:11,1", "DA:12,1", "DA:13,2", "DA:14,1", "DA:15,0", "DA:16,3"],
        "{text}"
    );
}

/// Points on a straight line of instructions that cannot throw share one
/// probe, and the entry shares the first point's when nothing jumps to
/// offset 0; a `div` (which may throw) in between keeps them apart.
#[test]
fn probes_are_shared_on_straight_lines_only() {
    use corprof::cil::MethodBody;
    use corprof::coverage::probes::{plan, Counter};
    // ldarg.0; ldc.i4.1; add; starg.s 0; ldarg.0; ret  (points at 0 and 5)
    let code = [0x02, 0x17, 0x58, 0x10, 0x00, 0x02, 0x2A];
    let (counters, counts) = probe_counts(&code, &[0, 5], &[4, 9]);
    assert_eq!(counters.len(), 3);
    assert_eq!(counts, [2, 2, 2], "both points and the entry ran twice");
    let body = |code: &[u8]| {
        let mut bytes = vec![(code.len() as u8) << 2 | 2];
        bytes.extend_from_slice(code);
        MethodBody::decode(&bytes).unwrap()
    };
    let shared = plan(&body(&code), &[0, 5], &[], true);
    assert_eq!(shared.counters[1], Counter::SequencePoint { il_offset: 5 });
    assert_eq!(shared.same_as, [None, Some(0), Some(0)]);
    // The same with div: the second point may not run when the first did.
    let div = [0x02, 0x17, 0x5B, 0x10, 0x00, 0x02, 0x2A];
    let apart = plan(&body(&div), &[0, 5], &[], true);
    assert_eq!(apart.same_as, [None, None, Some(0)]);
}

/// The `.counts` format: a method with awkward names (tab, newline,
/// backslash) read back as written, counts of two processes added up
/// (an arm one process never compiled counts the other's), and each
/// malformed line an error naming it.
#[test]
fn counts_files_round_trip_and_add_up() {
    use corprof::coverage::merge::{read_counts, write_counts, Merge, COUNTS_HEADER};
    use corprof::coverage::report::{BranchHits, MethodCoverage, PointHits};
    let method = |hits: u64, arms: &[(u32, u64)]| MethodCoverage {
        assembly: "A\tB".into(),
        class: "N.C\\x".into(),
        name: "N.C::M\nline".into(),
        token: 0x0600_0007,
        calls: hits,
        points: vec![PointHits {
            document: "/src/C d.cs".into(),
            start_line: 4,
            end_line: 6,
            hits,
        }],
        branches: arms
            .iter()
            .map(|&(arm, hits)| BranchHits {
                document: "/src/C d.cs".into(),
                line: 4,
                il_offset: 12,
                arm,
                hits,
            })
            .collect(),
    };
    let one = method(3, &[(0, 1), (1, 2)]);
    let text = write_counts(std::slice::from_ref(&one), "summary\twith a tab");
    assert!(text.starts_with(&format!("{COUNTS_HEADER}\n")), "{text}");
    assert_eq!(
        text.lines().count(),
        6,
        "header, summary, method, point, 2 arms: {text}"
    );
    let back = read_counts(&text).unwrap();
    assert_eq!(back.summary, "summary\twith a tab");
    assert_eq!(back.methods, std::slice::from_ref(&one));

    // A process that never compiled it (no arms), one that did, and
    // another method of the same name and token from another build
    // (other lines): kept apart.
    let mut merge = Merge::new();
    merge.add(vec![method(0, &[])]);
    merge.add(vec![one.clone()]);
    merge.add(vec![method(2, &[(1, 2)])]);
    let mut other = one.clone();
    other.points[0].start_line = 40;
    merge.add(vec![other.clone()]);
    let methods = merge.into_methods();
    assert_eq!(methods.len(), 2);
    assert_eq!(methods[0].calls, 5);
    assert_eq!(methods[0].points[0].hits, 5);
    let arms: Vec<(u32, u64)> = methods[0]
        .branches
        .iter()
        .map(|b| (b.arm, b.hits))
        .collect();
    assert_eq!(arms, [(0, 1), (1, 4)]);
    assert_eq!(methods[1], other);

    for (bad, message) in [
        ("", "line 1: not a corprof counts file"),
        (
            "corprof-coverage-counts 2\n",
            "line 1: not a corprof counts file",
        ),
        (
            "corprof-coverage-counts 1\nbranch\ta\t1\t2\t0\t1\n",
            "line 2: a record before the first method",
        ),
        (
            "corprof-coverage-counts 1\nmethod\ta\tb\tc\t1\t-1\n",
            "line 2: calls \"-1\" is not a number",
        ),
        (
            "corprof-coverage-counts 1\nmethod\ta\tb\tc\t1\n",
            "line 2: unexpected record \"method\" with 5 fields",
        ),
        (
            "corprof-coverage-counts 1\nsummary\tx\\q\n",
            "line 2: bad escape \\q",
        ),
        (
            "corprof-coverage-counts 1\nmethod\ta\tb\tc\t1\t1\npoint\td\t1\t99999999999\t1\n",
            "line 3: end line \"99999999999\" is not a number",
        ),
    ] {
        let error = read_counts(bad).unwrap_err();
        assert!(error.starts_with(message), "{bad:?}: {error}");
    }
}

/// `Coverage::write_counts` writes into its directory but never makes it:
/// once `corprof coverage` has removed its private directory (the run
/// ended, or was interrupted), a process that outlived it gets `NotFound`
/// and leaves nothing behind.
#[test]
fn write_counts_never_makes_its_directory() {
    use corprof::coverage::{Coverage, CoverageOptions};
    let base = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("write_counts-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&base);
    std::fs::create_dir_all(&base).unwrap();
    let gone = base.join("gone");
    let coverage = Coverage::new(
        CoverageOptions::default()
            .with_output_dir(&gone)
            .with_counts(true),
    );
    let error = coverage.write_counts("summary").unwrap_err();
    assert_eq!(error.kind(), std::io::ErrorKind::NotFound, "{error}");
    assert!(error.to_string().contains("is gone"), "{error}");
    assert!(!gone.exists());

    // The directory there: the file written, with the summary.
    let here = Coverage::new(
        CoverageOptions::default()
            .with_output_dir(&base)
            .with_counts(true),
    );
    let path = here.write_counts("summary").unwrap();
    assert_eq!(path.parent(), Some(base.as_path()));
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains("summary\tsummary"), "{text}");
    std::fs::remove_dir_all(&base).unwrap();
}
