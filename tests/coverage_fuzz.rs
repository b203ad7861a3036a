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

// ---------------------------------------------------------------------
// Amplifying shapes (issue 38): small inputs that a naive reader expands
// without bound. Each is built byte by byte from the layouts of ECMA-335
// II.24.2 and PortablePdb-Metadata.md, written here independently of the
// reader.

use corprof::coverage::pdb::{
    NAME_BYTES_FLOOR, NAME_BYTES_PER_BYTE, POINTS_FLOOR, POINTS_PER_BYTE,
};
use corprof::coverage::report::{
    cobertura, lcov, MethodCoverage, PointHits, MAX_SPAN_LINES, SPAN_LINES_FLOOR,
    SPAN_LINES_PER_POINT,
};
use std::collections::BTreeMap;
use std::time::Duration;

/// ECMA-335 II.23.2 unsigned compressed integer.
fn cu32(out: &mut Vec<u8>, v: u32) {
    if v < 0x80 {
        out.push(v as u8);
    } else if v < 0x4000 {
        out.extend_from_slice(&(0x8000 | v as u16).to_be_bytes());
    } else {
        out.extend_from_slice(&(0xC000_0000 | v).to_be_bytes());
    }
}

/// A #Blob heap: index 0 is the empty blob.
struct BlobHeap(Vec<u8>);

impl BlobHeap {
    fn new() -> BlobHeap {
        BlobHeap(vec![0])
    }
    fn add(&mut self, blob: &[u8]) -> u32 {
        let at = self.0.len() as u32;
        cu32(&mut self.0, blob.len() as u32);
        self.0.extend_from_slice(blob);
        at
    }
}

/// A Portable PDB with a Document table (name blob index each) and a
/// MethodDebugInformation table (document row, sequence points blob
/// index each); 4-byte blob indices, 2-byte table indices.
fn build_pdb(blobs: &BlobHeap, documents: &[u32], methods: &[(u16, u32)]) -> Vec<u8> {
    // #Pdb: id, entry point, referenced type-system tables (none).
    let mut pdb_stream = vec![0x11; 20];
    pdb_stream.extend_from_slice(&0u32.to_le_bytes());
    pdb_stream.extend_from_slice(&0u64.to_le_bytes());
    // #~: header, row counts of tables 0x30 and 0x31, the rows.
    let mut tables = vec![0, 0, 0, 0, 2, 0, 0x04, 1];
    tables.extend_from_slice(&(1u64 << 0x30 | 1u64 << 0x31).to_le_bytes());
    tables.extend_from_slice(&0u64.to_le_bytes());
    tables.extend_from_slice(&(documents.len() as u32).to_le_bytes());
    tables.extend_from_slice(&(methods.len() as u32).to_le_bytes());
    for &name in documents {
        tables.extend_from_slice(&name.to_le_bytes()); // Name (blob)
        tables.extend_from_slice(&0u16.to_le_bytes()); // HashAlgorithm (guid)
        tables.extend_from_slice(&0u32.to_le_bytes()); // Hash (blob)
        tables.extend_from_slice(&0u16.to_le_bytes()); // Language (guid)
    }
    for &(document, points) in methods {
        tables.extend_from_slice(&document.to_le_bytes());
        tables.extend_from_slice(&points.to_le_bytes());
    }
    let mut blob = blobs.0.clone();
    while blob.len() % 4 != 0 {
        blob.push(0);
    }
    let streams: [(&[u8], &[u8]); 3] =
        [(b"#Pdb", &pdb_stream), (b"#~", &tables), (b"#Blob", &blob)];
    let version = b"PDB v1.0\0\0\0\0";
    let mut header = Vec::new();
    header.extend_from_slice(&0x424A_5342u32.to_le_bytes());
    header.extend_from_slice(&1u16.to_le_bytes());
    header.extend_from_slice(&1u16.to_le_bytes());
    header.extend_from_slice(&0u32.to_le_bytes());
    header.extend_from_slice(&(version.len() as u32).to_le_bytes());
    header.extend_from_slice(version);
    header.extend_from_slice(&0u16.to_le_bytes());
    header.extend_from_slice(&(streams.len() as u16).to_le_bytes());
    let names_len: usize = streams.iter().map(|(n, _)| (n.len() + 4) & !3).sum();
    let mut offset = header.len() + streams.len() * 8 + names_len;
    let mut body = Vec::new();
    for (name, data) in streams {
        header.extend_from_slice(&(offset as u32).to_le_bytes());
        header.extend_from_slice(&(data.len() as u32).to_le_bytes());
        let mut padded = name.to_vec();
        padded.resize((name.len() + 4) & !3, 0);
        header.extend_from_slice(&padded);
        offset += data.len();
        body.extend_from_slice(data);
    }
    header.extend_from_slice(&body);
    header
}

/// A sequence points blob (document from the row): `n` points, one per
/// IL offset, each on its own line, each spanning `span` lines more.
fn points_blob(n: u32, span: u32) -> Vec<u8> {
    let mut out = vec![0]; // local signature: none
    for k in 0..n {
        cu32(&mut out, u32::from(k != 0)); // delta IL
        cu32(&mut out, span); // delta lines
        if span == 0 {
            cu32(&mut out, 4); // delta columns (unsigned)
        } else {
            out.push(8); // delta columns (signed compressed 4)
        }
        if k == 0 {
            cu32(&mut out, 10); // start line
            cu32(&mut out, 5); // start column
        } else {
            out.push(2); // delta start line: signed 1
            out.push(0); // delta start column: 0
        }
    }
    out
}

/// A document name blob: separator `/`, then `parts` blob indices.
fn name_blob(parts: &[u32]) -> Vec<u8> {
    let mut out = vec![b'/'];
    for &p in parts {
        cu32(&mut out, p);
    }
    out
}

/// Runs `f`, returning what it returned and the CPU time it took on this
/// thread (on Linux; elsewhere the time that passed): the bounds below are
/// on the work done, which other tests and builds on the machine do not
/// stretch (measured: 0.2 s alone, 4.1 s of wall time at load 12 for the
/// shared-blob PDB).
fn timed<T>(f: impl FnOnce() -> T) -> (T, Duration) {
    let start = thread_cpu();
    let out = f();
    (out, thread_cpu().saturating_sub(start))
}

/// This thread's CPU time (`CLOCK_THREAD_CPUTIME_ID`).
#[cfg(target_os = "linux")]
fn thread_cpu() -> Duration {
    #[repr(C)]
    struct Timespec {
        tv_sec: core::ffi::c_long,
        tv_nsec: core::ffi::c_long,
    }
    extern "C" {
        fn clock_gettime(clock: i32, time: *mut Timespec) -> i32;
    }
    const CLOCK_THREAD_CPUTIME_ID: i32 = 3;
    let mut time = Timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid pointer to a `struct timespec` (`time_t` and the
    // nanoseconds are `long` on Linux's glibc targets).
    let result = unsafe { clock_gettime(CLOCK_THREAD_CPUTIME_ID, &mut time) };
    assert_eq!(result, 0, "clock_gettime(CLOCK_THREAD_CPUTIME_ID)");
    Duration::new(time.tv_sec as u64, time.tv_nsec as u32)
}

/// Elsewhere: the time since the first call.
#[cfg(not(target_os = "linux"))]
fn thread_cpu() -> Duration {
    static START: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
    START.get_or_init(std::time::Instant::now).elapsed()
}

/// The points a parse yielded, visible and hidden, over all methods.
fn point_count(pdb: &PortablePdb) -> u64 {
    pdb.methods
        .iter()
        .map(|m| (m.sequence_points.len() + m.hidden_offsets.len()) as u64)
        .sum()
}

/// Issue 38's PDB: 2,000 MethodDebugInformation rows that share one blob
/// of 12,000 points (24,000,000 points, 611 MB, 1.9 s before the bound).
/// Now an error after at most `POINTS_PER_BYTE * len` points, in a time
/// far below the unbounded parse (measured: under 0.1 s in a debug build;
/// the bound leaves 30 times that for a loaded machine).
#[test]
fn a_blob_shared_by_every_method_is_bounded() {
    let mut blobs = BlobHeap::new();
    let part = blobs.add(b"A.cs");
    let name = blobs.add(&name_blob(&[part]));
    let shared = blobs.add(&points_blob(12_000, 0));
    let data = build_pdb(&blobs, &[name], &vec![(1, shared); 2_000]);
    assert!(data.len() < 80_000, "{} bytes", data.len());
    // The precondition: one row alone parses, with its 12,000 points.
    let one = build_pdb(&blobs, &[name], &[(1, shared)]);
    let parsed = PortablePdb::parse(&one).unwrap();
    assert_eq!(parsed.methods[0].sequence_points.len(), 12_000);
    assert_eq!(parsed.documents[0].name, "A.cs");
    let (result, took) = timed(|| PortablePdb::parse(&data));
    let error = result.unwrap_err().to_string();
    eprintln!(
        "2,000 rows sharing 12,000 points ({} bytes): refused in {took:?}",
        data.len()
    );
    assert!(error.contains("sequence points"), "{error}");
    assert!(took < Duration::from_secs(3), "{took:?}");
    // A few rows sharing a blob (a legitimate PDB may) still parse.
    let few = build_pdb(&blobs, &[name], &[(1, shared); 5]);
    let parsed = PortablePdb::parse(&few).unwrap();
    assert_eq!(point_count(&parsed), 60_000);
    assert!(point_count(&parsed) <= (few.len() as u64 * POINTS_PER_BYTE).max(POINTS_FLOOR));
}

/// Rows that share blobs in random numbers and sizes: whatever parses
/// holds at most the bound of points, and no parse takes long.
#[test]
fn shared_blobs_of_random_shapes_stay_within_the_bound() {
    let mut rng = Rng::new(env_or("CORPROF_FUZZ_SEED", 38), INTERESTING);
    let mut slowest = Duration::ZERO;
    let (mut ok, mut refused) = (0, 0);
    for _ in 0..40 {
        let mut blobs = BlobHeap::new();
        let part = blobs.add(b"B.cs");
        let name = blobs.add(&name_blob(&[part]));
        let shapes: Vec<u32> = (0..1 + rng.below(3))
            .map(|_| {
                blobs.add(&points_blob(
                    1 + rng.below(3_000) as u32,
                    rng.below(3) as u32,
                ))
            })
            .collect();
        let rows: Vec<(u16, u32)> = (0..1 + rng.below(3_000))
            .map(|_| (1, shapes[rng.below(shapes.len())]))
            .collect();
        let data = build_pdb(&blobs, &[name], &rows);
        let (result, took) = timed(|| PortablePdb::parse(&data));
        slowest = slowest.max(took);
        match result {
            Ok(pdb) => {
                ok += 1;
                let bound = (data.len() as u64 * POINTS_PER_BYTE).max(POINTS_FLOOR);
                assert!(
                    point_count(&pdb) <= bound,
                    "{} > {bound}",
                    point_count(&pdb)
                );
            }
            Err(e) => {
                refused += 1;
                assert!(e.to_string().contains("sequence points"), "{e}");
            }
        }
    }
    // Both sides of the bound were met.
    eprintln!("{ok} parsed, {refused} refused; the slowest parse took {slowest:?}");
    assert!(ok > 0 && refused > 0, "{ok} parsed, {refused} refused");
    assert!(slowest < Duration::from_secs(3), "{slowest:?}");
}

/// Document rows that share one name blob of many parts, each naming one
/// 30 KB part (32 KiB is the longest name): the names' bytes are bounded
/// by `NAME_BYTES_PER_BYTE * len`, empty parts count too.
#[test]
fn document_names_shared_by_every_document_are_bounded() {
    let mut blobs = BlobHeap::new();
    let big = blobs.add(&vec![b'x'; 30_000]);
    let empty = 0;
    let name = blobs.add(&name_blob(&[big]));
    let hollow = blobs.add(&name_blob(&vec![empty; 20_000]));
    for (name, rows) in [(name, 8_000), (hollow, 4_000)] {
        let data = build_pdb(&blobs, &vec![name; rows], &[]);
        let one = build_pdb(&blobs, &[name], &[]);
        assert!(PortablePdb::parse(&one).is_ok(), "one row parses");
        let (result, took) = timed(|| PortablePdb::parse(&data));
        match result {
            Ok(pdb) => {
                let bytes: u64 = pdb.documents.iter().map(|d| d.name.len() as u64).sum();
                let bound = (data.len() as u64 * NAME_BYTES_PER_BYTE).max(NAME_BYTES_FLOOR);
                assert!(bytes <= bound, "{bytes} > {bound}");
            }
            Err(e) => assert!(e.to_string().contains("document names"), "{e}"),
        }
        eprintln!("{rows} documents sharing a name: {took:?}");
        assert!(took < Duration::from_secs(3), "{took:?}");
    }
}

/// A PDB whose points span 2^29 - 2 lines each (the largest the reader
/// takes), and hand-made points spanning up to `u32::MAX`: the reports
/// stay within `SPAN_LINES_FLOOR + SPAN_LINES_PER_POINT` per point lines,
/// each span is cut at `MAX_SPAN_LINES`, and they are written fast
/// (measured: 0.7 s for both in a debug build under load; bound 10 s).
#[test]
fn huge_spans_give_bounded_reports() {
    let mut blobs = BlobHeap::new();
    let part = blobs.add(b"C.cs");
    let name = blobs.add(&name_blob(&[part]));
    let wide = blobs.add(&points_blob(200, 0x1FFF_FFFF - 300));
    let data = build_pdb(&blobs, &[name], &vec![(1, wide); 50]);
    let pdb = PortablePdb::parse(&data).unwrap();
    let first = pdb.methods[0].sequence_points[0];
    assert_eq!(first.end_line - first.start_line, 0x1FFF_FFFF - 300);
    let mut methods: Vec<MethodCoverage> = pdb
        .methods
        .iter()
        .enumerate()
        .map(|(n, m)| MethodCoverage {
            assembly: "C".into(),
            class: format!("C{}", n % 7),
            name: format!("C{}::M", n % 7),
            token: 0x0600_0001 + n as u32,
            calls: 1,
            points: m
                .sequence_points
                .iter()
                .map(|p| PointHits {
                    document: pdb.documents[p.document].name.clone(),
                    start_line: p.start_line,
                    end_line: p.end_line,
                    hits: n as u64,
                })
                .collect(),
            branches: Vec::new(),
        })
        .collect();
    // Two points of another document, to the end of the line numbers.
    methods[0].points.push(PointHits {
        document: "D.cs".into(),
        start_line: u32::MAX - 5,
        end_line: u32::MAX,
        hits: 1,
    });
    methods[0].points.push(PointHits {
        document: "D.cs".into(),
        start_line: 1,
        end_line: u32::MAX,
        hits: 2,
    });
    let points: u64 = methods.iter().map(|m| m.points.len() as u64).sum();
    let budget = SPAN_LINES_FLOOR + SPAN_LINES_PER_POINT * points;
    let ((info, xml), took) = timed(|| (lcov(&methods), cobertura(&methods, 0)));
    let da = info.lines().filter(|l| l.starts_with("DA:")).count() as u64;
    eprintln!("{points} points spanning 2^29 lines: {da} DA lines, both reports in {took:?}");
    assert!(da <= budget + points, "{da} DA lines");
    // The spans were filled (up to the cut), not dropped.
    assert!(da > u64::from(MAX_SPAN_LINES), "{da} DA lines");
    assert!(info.contains(&format!("DA:{},", 10 + MAX_SPAN_LINES)));
    assert!(!info.contains(&format!("DA:{},", 10 + MAX_SPAN_LINES + 200)));
    assert!(
        info.contains(&format!("DA:{},1\n", u32::MAX)),
        "the last line"
    );
    let xml_lines = xml.matches("<line ").count() as u64;
    assert!(
        xml_lines <= 2 * (budget + points),
        "{xml_lines} <line> elements"
    );
    assert!(took < Duration::from_secs(10), "{took:?}");
}

/// The report's lines from random small spans against the rule written
/// out directly (docs/coverage.md): a line's count is the largest of the
/// points starting on it; a line only spanned takes the largest of the
/// points spanning it.
#[test]
fn span_lines_match_the_rule_on_random_points() {
    let mut rng = Rng::new(env_or("CORPROF_FUZZ_SEED", 3838), INTERESTING);
    for _ in 0..300 {
        let methods: Vec<MethodCoverage> = (0..1 + rng.below(4))
            .map(|m| MethodCoverage {
                assembly: "R".into(),
                class: "R".into(),
                name: format!("R::M{m}"),
                token: 0x0600_0001 + m as u32,
                calls: 0,
                points: (0..rng.below(12))
                    .map(|_| {
                        let start = 1 + rng.below(60) as u32;
                        PointHits {
                            document: ["X.cs", "Y.cs"][rng.below(2)].into(),
                            start_line: start,
                            end_line: start + rng.below(9) as u32,
                            hits: rng.below(6) as u64,
                        }
                    })
                    .collect(),
                branches: Vec::new(),
            })
            .collect();
        let mut expected: BTreeMap<String, BTreeMap<u32, u64>> = BTreeMap::new();
        let all = || methods.iter().flat_map(|m| &m.points);
        for p in all() {
            let lines = expected.entry(p.document.clone()).or_default();
            let h = lines.entry(p.start_line).or_insert(0);
            *h = (*h).max(p.hits);
        }
        for p in all() {
            let starts = |l: u32| all().any(|q| q.document == p.document && q.start_line == l);
            for l in p.start_line + 1..=p.end_line {
                if !starts(l) {
                    let h = expected.get_mut(&p.document).unwrap().entry(l).or_insert(0);
                    *h = (*h).max(p.hits);
                }
            }
        }
        let mut got: BTreeMap<String, BTreeMap<u32, u64>> = BTreeMap::new();
        let mut file = String::new();
        for line in lcov(&methods).lines() {
            if let Some(f) = line.strip_prefix("SF:") {
                file = f.to_owned();
            } else if let Some(da) = line.strip_prefix("DA:") {
                let (l, h) = da.split_once(',').unwrap();
                got.entry(file.clone())
                    .or_default()
                    .insert(l.parse().unwrap(), h.parse().unwrap());
            }
        }
        expected.retain(|_, lines| !lines.is_empty());
        assert_eq!(got, expected, "{methods:?}");
    }
}

/// Overloads in one file are told apart as `Name`, `Name#2`, ... (also
/// when a method is literally named `Name#2`), and 3,000 of them take no
/// longer than a fraction of a second (the names are not compared with
/// every name before).
#[test]
fn overloads_are_numbered_in_linear_time() {
    let method = |name: &str, line: u32| MethodCoverage {
        assembly: "O".into(),
        class: "O".into(),
        name: name.into(),
        token: 0x0600_0000 + line,
        calls: 1,
        points: vec![PointHits {
            document: "O.cs".into(),
            start_line: line,
            end_line: line,
            hits: 1,
        }],
        branches: Vec::new(),
    };
    let few = [
        method("O::F", 1),
        method("O::F#2", 2),
        method("O::F", 3),
        method("O::F", 4),
    ];
    let names: Vec<String> = lcov(&few)
        .lines()
        .filter_map(|l| l.strip_prefix("FN:").map(str::to_owned))
        .collect();
    assert_eq!(names, ["1,O::F", "2,O::F#2", "3,O::F#3", "4,O::F#4"]);
    let many: Vec<MethodCoverage> = (1..=3_000).map(|l| method("O::G", l)).collect();
    let (text, took) = timed(|| lcov(&many));
    assert!(text.contains("FN:3000,O::G#3000\n"));
    assert!(took < Duration::from_secs(5), "{took:?}");
}
