//! Randomized robustness test of the coverage module's decoders: random and
//! mutated inputs go to the inflate, the Portable PDB reader and the PE
//! debug-directory reader; nothing may panic (an out-of-bounds read would),
//! hang or allocate without bound.
//!
//! Seeds: DEFLATE streams made by Python's zlib and a Portable PDB written
//! by Roslyn (tests/fixtures/coverage/Tiny.pdb, with Tiny.dll, its
//! assembly, and Tiny.embedded.dll, the same with the PDB embedded).
//! `CORPROF_FUZZ_ITERS` sets the number of iterations (default 20000; each
//! feeds three inputs) and `CORPROF_FUZZ_SEED` the seed. The `#[ignore]`d
//! `fuzz_long` runs 1,000,000 iterations:
//! `cargo test --release --test coverage_fuzz -- --ignored`.

mod common;

use common::fuzz::{env_or, mutate, Rng};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;

use corprof::coverage::inflate::inflate;
use corprof::coverage::pdb::PortablePdb;
use corprof::coverage::pe::{debug_directory, embedded_pdb};

const INTERESTING: &[u8] = &[0x00, 0xFF, 0x80, 0x7F, 0xFE, 0xC0, 0x01, 0x40, 0x30, 0x31];

fn fixture(name: &str) -> Vec<u8> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/coverage")
        .join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn deflate_seeds() -> Vec<Vec<u8>> {
    let script = r#"
import zlib
for data, level, strategy in [(b"hello hello hello world" * 20, 6, 0), (bytes(range(256)), 0, 0),
                              (b"abcabcabd" * 50, 6, zlib.Z_FIXED), (bytes(range(200)) * 3, 9, 0)]:
    c = zlib.compressobj(level, zlib.DEFLATED, -15, 9, strategy)
    print((c.compress(data) + c.flush()).hex())
"#;
    let out = std::process::Command::new("python3")
        .args(["-c", script])
        .output()
        .expect("python3 must be installed");
    assert!(out.status.success());
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            (0..l.len())
                .step_by(2)
                .map(|i| u8::from_str_radix(&l[i..i + 2], 16).unwrap())
                .collect()
        })
        .collect()
}

fn run(iterations: u64, seed: u64) {
    let deflate = deflate_seeds();
    let pdb = fixture("Tiny.pdb");
    let image = fixture("Tiny.dll");
    let embedded = fixture("Tiny.embedded.dll");
    // The seeds decode: mutations start from valid inputs.
    for d in &deflate {
        inflate(d, 1 << 20).unwrap();
    }
    PortablePdb::parse(&pdb).unwrap();
    debug_directory(&image).unwrap();
    assert!(debug_directory(&embedded).unwrap().embedded_pdb.is_some());
    let mut rng = Rng::new(seed, INTERESTING);
    let (mut pdb_ok, mut inflate_ok) = (0u64, 0u64);
    for i in 0..iterations {
        let d = if rng.below(8) == 0 {
            (0..rng.below(64)).map(|_| rng.byte()).collect()
        } else {
            let which = rng.below(deflate.len());
            mutate(&mut rng, &deflate[which])
        };
        let p = mutate(&mut rng, &pdb);
        let pe = if rng.below(2) == 0 {
            mutate(&mut rng, &image)
        } else {
            mutate(&mut rng, &embedded)
        };
        let result = catch_unwind(AssertUnwindSafe(|| {
            inflate_ok += u64::from(inflate(&d, 1 << 20).is_ok());
            if let Ok(data) = embedded_pdb(&d) {
                let _ = PortablePdb::parse(&data);
            }
            pdb_ok += u64::from(PortablePdb::parse(&p).is_ok());
            if let Ok(dir) = debug_directory(&pe) {
                if let Some(data) = dir.embedded_pdb {
                    let _ = PortablePdb::parse(&data);
                }
            }
        }));
        assert!(result.is_ok(), "panic at iteration {i} (seed {seed})");
    }
    eprintln!(
        "{iterations} iterations ({} inputs): {pdb_ok} mutated PDBs and {inflate_ok} deflate streams still decoded",
        iterations * 3
    );
}

#[test]
fn fuzz_short() {
    run(
        env_or("CORPROF_FUZZ_ITERS", 20_000),
        env_or("CORPROF_FUZZ_SEED", 30),
    );
}

#[test]
#[ignore = "long: 1,000,000 iterations (3,000,000 inputs); run with --release -- --ignored"]
fn fuzz_long() {
    run(1_000_000, env_or("CORPROF_FUZZ_SEED", 3030));
}
