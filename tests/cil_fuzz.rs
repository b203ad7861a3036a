//! Randomized robustness test: random and mutated method bodies and
//! signature blobs go to every decoder; nothing may panic, and whatever
//! decodes must re-encode to a fixed point (edited bodies included).
//!
//! Each iteration feeds one body input and one signature input.
//! `CORPROF_FUZZ_ITERS` sets the number of iterations (default 30000, i.e.
//! 60000 inputs) and `CORPROF_FUZZ_SEED` the seed. The `#[ignore]`d
//! `fuzz_long` runs 1,000,000 iterations:
//! `cargo test --release --test cil_fuzz -- --ignored`.

mod common;

use common::fuzz::{env_or, mutate, Rng};
use std::panic::{catch_unwind, AssertUnwindSafe};

use corprof::cil::{decode_compressed_i32, decode_compressed_u32, decode_type_def_or_ref};
use corprof::cil::{
    FieldSig, LocalVarSig, MethodBody, MethodHeader, MethodSig, MethodSpecSig, OpCode, Operand,
    PropertySig, StackSig, TypeSig,
};

const INTERESTING: &[u8] = &[0x00, 0xFF, 0x80, 0x7F, 0xFE, 0x45, 0x41, 0xC0, 0x01, 0x40];

fn body_seeds() -> Vec<Vec<u8>> {
    let mut seeds: Vec<Vec<u8>> = vec![
        vec![0x1E, 0x02, 0x2D, 0x02, 0x16, 0x2A, 0x17, 0x2A],
        vec![
            0x52, 0x02, 0x45, 0x02, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x04, 0x00, 0x00,
            0x00, 0x15, 0x2A, 0x16, 0x2A, 0x17, 0x2A,
        ],
        vec![
            0x1B, 0x30, 0x01, 0x00, 0x0A, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x11, 0x02, 0x26,
            0xDE, 0x05, 0x26, 0xDE, 0x02, 0x00, 0xDC, 0x2A, 0x00, 0x00, 0x01, 0x1C, 0x00, 0x00,
            0x00, 0x00, 0x00, 0x00, 0x04, 0x04, 0x00, 0x03, 0x01, 0x00, 0x00, 0x01, 0x02, 0x00,
            0x00, 0x00, 0x07, 0x07, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00,
        ],
        vec![
            0x0B, 0x30, 0x02, 0x00, 0x0C, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xDE,
            0x09, 0x26, 0x17, 0xFE, 0x11, 0x26, 0xDE, 0x02, 0x00, 0xDC, 0x81, 0x10, 0x00, 0x00,
            0x01, 0x00, 0x00, 0x00, 0x03, 0x07, 0x00, 0x03, 0x03, 0x00, 0x00, 0x00, 0x41, 0x1C,
            0x00, 0x00, 4, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 0x0A, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0,
        ],
        vec![
            0x13, 0x30, 0x01, 0x00, 0x08, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x11, 0x00, 0x1F,
            0x29, 0x0A, 0x2B, 0x00, 0x06, 0x2A,
        ],
        vec![
            0x6A, 0x02, 0x18, 0x2F, 0x02, 0x02, 0x2A, 0x02, 0x17, 0x59, 0x28, 0x01, 0x00, 0x00,
            0x06, 0x02, 0x18, 0x59, 0x28, 0x01, 0x00, 0x00, 0x06, 0x58, 0x2A,
        ],
    ];
    // Every opcode once, with a zero operand (branches to the next instruction).
    let mut code = Vec::new();
    for op in OpCode::all() {
        let v = op.value();
        if v > 0xFF {
            code.push(0xFE);
        }
        code.push(v as u8);
        let n = op.operand_kind().size();
        code.extend(std::iter::repeat_n(0, n));
    }
    let mut b = vec![0x03, 0x30, 0x08, 0x00];
    b.extend((code.len() as u32).to_le_bytes());
    b.extend([0; 4]);
    b.extend(code);
    seeds.push(b);
    seeds
}

fn sig_seeds() -> Vec<Vec<u8>> {
    vec![
        vec![0x00, 0x01, 0x08, 0x08],
        vec![
            0x30, 0x01, 0x02, 0x1E, 0x00, 0x1D, 0x1E, 0x00, 0x15, 0x12, 0x15, 0x01, 0x08,
        ],
        vec![0x05, 0x03, 0x01, 0x08, 0x41, 0x0E, 0x0D],
        vec![0x06, 0x1F, 0x0D, 0x08],
        vec![0x28, 0x01, 0x08, 0x0E],
        vec![
            0x07, 0x04, 0x08, 0x45, 0x10, 0x08, 0x16, 0x14, 0x0E, 0x02, 0x01, 0x03, 0x01, 0x7F,
        ],
        vec![0x15, 0x11, 0x80, 0x81, 0x01, 0x08],
        vec![0x1B, 0x00, 0x01, 0x08, 0x08],
        vec![0x0A, 0x02, 0x08, 0x0E],
        vec![0xC0, 0x00, 0x40, 0x00],
    ]
}

fn resolver(t: corprof::cil::Token) -> Option<StackSig> {
    let r = t.row();
    Some(StackSig {
        params: r % 4,
        has_this: r & 4 != 0,
        returns_value: r & 8 != 0,
    })
}

fn check_body(rng: &mut Rng, input: &[u8]) {
    let _ = MethodHeader::decode(input);
    let Ok(mut body) = MethodBody::decode(input) else {
        return;
    };
    let _ = body.to_string();
    let _ = body.compute_max_stack(resolver);
    if let Ok(bytes) = body.encode() {
        let again = MethodBody::decode(&bytes).expect("encoded body decodes");
        assert_eq!(
            again.encode().expect("re-encode"),
            bytes,
            "encode is a fixed point"
        );
    }
    // Random edits must not panic either.
    let n = body.instructions().len();
    if n > 0 {
        let l = body.instructions()[rng.below(n)].label();
        match rng.below(3) {
            0 => {
                let _ = body.remove(l);
            }
            1 => {
                // Up to 150 nops: enough to push branches out of short range.
                for _ in 0..rng.below(150) {
                    let _ = body.insert_before(l, OpCode::NOP, Operand::None);
                }
            }
            _ => {
                let _ = body.replace(l, OpCode::BR_S, Operand::Branch(l));
            }
        }
        if let Ok(bytes) = body.encode() {
            let again = MethodBody::decode(&bytes).expect("edited body decodes");
            assert_eq!(again.encode().expect("re-encode"), bytes);
        }
        let _ = body.compute_max_stack(resolver);
    }
}

fn check_sig(input: &[u8]) {
    let _ = decode_compressed_u32(input);
    let _ = decode_compressed_i32(input);
    let _ = decode_type_def_or_ref(input);
    let names = |t: corprof::cil::Token| format!("{t}");
    if let Ok(m) = MethodSig::decode(input) {
        let _ = m.format_method("M", &names);
        let _ = m.stack_sig();
        let e = m.encode().expect("decoded method sig encodes");
        assert_eq!(MethodSig::decode(&e).expect("re-decode"), m);
    }
    if let Ok(t) = TypeSig::decode(input) {
        let _ = t.format(&names);
        assert_eq!(
            TypeSig::decode(&t.encode().expect("encode")).expect("re-decode"),
            t
        );
    }
    if let Ok(f) = FieldSig::decode(input) {
        assert_eq!(
            FieldSig::decode(&f.encode().expect("encode")).expect("re-decode"),
            f
        );
    }
    if let Ok(p) = PropertySig::decode(input) {
        assert_eq!(
            PropertySig::decode(&p.encode().expect("encode")).expect("re-decode"),
            p
        );
    }
    if let Ok(l) = LocalVarSig::decode(input) {
        assert_eq!(
            LocalVarSig::decode(&l.encode().expect("encode")).expect("re-decode"),
            l
        );
    }
    if let Ok(s) = MethodSpecSig::decode(input) {
        assert_eq!(
            MethodSpecSig::decode(&s.encode().expect("encode")).expect("re-decode"),
            s
        );
    }
}

fn run(iters: usize, seed: u64) {
    let mut rng = Rng::new(seed, INTERESTING);
    let bodies = body_seeds();
    let sigs = sig_seeds();
    for i in 0..iters {
        let input = match rng.below(8) {
            0 => rng.bytes(64),
            1 => {
                // A plausible tiny header followed by random code.
                let mut v = rng.bytes(40);
                v.insert(0, ((v.len() as u8) << 2) | 2);
                v
            }
            _ => {
                let k = rng.below(bodies.len());
                mutate(&mut rng, &bodies[k])
            }
        };
        let mut edit_rng = rng.fork();
        if catch_unwind(AssertUnwindSafe(|| check_body(&mut edit_rng, &input))).is_err() {
            panic!("body decoder panicked on iteration {i} (seed {seed}): {input:02X?}");
        }
        let input = if rng.below(5) == 0 {
            rng.bytes(24)
        } else {
            let k = rng.below(sigs.len());
            mutate(&mut rng, &sigs[k])
        };
        if catch_unwind(AssertUnwindSafe(|| check_sig(&input))).is_err() {
            panic!("signature decoder panicked on iteration {i} (seed {seed}): {input:02X?}");
        }
    }
}

#[test]
fn fuzz_decoders_default() {
    let iters = env_or("CORPROF_FUZZ_ITERS", 30_000) as usize;
    run(iters, env_or("CORPROF_FUZZ_SEED", 0x05EE_DC11));
}

#[test]
#[ignore = "long run: cargo test --release --test cil_fuzz -- --ignored"]
fn fuzz_long() {
    let iters = env_or("CORPROF_FUZZ_ITERS", 1_000_000) as usize;
    run(iters, env_or("CORPROF_FUZZ_SEED", 0xC0FF_EE00));
}
