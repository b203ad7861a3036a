//! Randomized robustness test of what the continuous profiler reads from
//! outside: the push exporter's HTTP response reader
//! (`corprof::sampling::__test::parse_response`), fed random bytes,
//! mutated responses and well-formed responses of a generator of its own;
//! and the contention event decoders (`corprof::sampling::decode_contention`
//! and `decode_contention_with`), fed random and mutated payloads of every
//! version, by the manifest's layouts and by random field lists.
//!
//! For every input: no panic; a response found in a prefix of the bytes
//! stands when more bytes follow (the client stops reading at the first);
//! a generated response gives back its status and the start of its body;
//! a generated `ContentionStop_V1` gives back its flag and duration.
//!
//! `CORPROF_FUZZ_ITERS` sets the number of iterations (default 30,000, each
//! feeding one input, all its prefixes at a few cut points, and one
//! generated response) and `CORPROF_FUZZ_SEED` the seed. The `#[ignore]`d
//! `fuzz_long` runs 1,000,000 iterations:
//! `cargo test --release --test services_fuzz -- --ignored`.

mod common;

use common::fuzz::{env_or, mutate, Rng};
use std::panic::{catch_unwind, AssertUnwindSafe};

use corprof::eventpipe::{Field, FieldType};
use corprof::sampling::__test::{parse_response, Response, BODY_PREVIEW, MAX_RESPONSE};
use corprof::sampling::{decode_contention, decode_contention_with, Contention};

const INTERESTING: &[u8] = b"\r\n:; \t0123456789abcdefHTP/.%\x00\xff";

fn seeds() -> Vec<Vec<u8>> {
    [
        "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
        "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 0\r\n\r\n",
        "HTTP/1.0 500 Internal Server Error\r\n\r\nboom",
        "HTTP/1.1 400 Bad Request\r\nTransfer-Encoding: chunked\r\n\r\n5;ext=1\r\nhello\r\n0\r\nX-T: 1\r\n\r\n",
        "HTTP/1.1 204 No Content\r\nDate: Thu, 26 Nov 2026 08:00:00 GMT\r\n\r\n",
        "HTTP/1.1 413 Payload Too Large\nContent-Length: 4\n\ntoo!",
        "HTTP/1.1 503 Service Unavailable\r\nRetry-After: 5\r\nTransfer-Encoding: gzip, chunked\r\n\r\n1\r\na\r\n0\r\n\r\n",
        "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\n\r\n",
    ]
    .iter()
    .map(|s| s.as_bytes().to_vec())
    .collect()
}

/// A well-formed response: status, headers, a body by Content-Length,
/// chunks (of random sizes and extensions) or the end of the connection.
fn generate(rng: &mut Rng) -> (Vec<u8>, u16, Vec<u8>, bool) {
    let status = [200u16, 202, 400, 404, 429, 500, 502, 503][rng.below(8)];
    let body: Vec<u8> = (0..rng.below(600)).map(|_| rng.byte()).collect();
    let mut out = format!("HTTP/1.{} {status} Reason Phrase\r\n", rng.below(2)).into_bytes();
    for i in 0..rng.below(5) {
        out.extend_from_slice(format!("X-Header-{i}:  value {i}\t\r\n").as_bytes());
    }
    let mode = rng.below(3);
    match mode {
        0 => {
            out.extend_from_slice(format!("Content-Length: {}\r\n\r\n", body.len()).as_bytes());
            out.extend_from_slice(&body);
        }
        1 => {
            out.extend_from_slice(b"Transfer-Encoding: chunked\r\n\r\n");
            let mut rest = &body[..];
            while !rest.is_empty() {
                let n = 1 + rng.below(rest.len().min(200));
                let ext = if rng.below(3) == 0 { ";name=value" } else { "" };
                out.extend_from_slice(format!("{n:x}{ext}\r\n").as_bytes());
                out.extend_from_slice(&rest[..n]);
                out.extend_from_slice(b"\r\n");
                rest = &rest[n..];
            }
            out.extend_from_slice(b"0\r\n\r\n");
        }
        _ => {
            out.extend_from_slice(b"\r\n");
            out.extend_from_slice(&body);
        }
    }
    // Delimited by the end of the connection: only complete at EOF.
    (out, status, body, mode == 2)
}

fn parse(bytes: &[u8], eof: bool) -> Result<Option<Response>, String> {
    catch_unwind(AssertUnwindSafe(|| parse_response(bytes, eof)))
        .map_err(|_| format!("parse_response panicked on {bytes:02X?} (eof {eof})"))
        .map(|r| r.ok().flatten())
}

/// Feeds `input` whole (at EOF and not) and at a few cut points, as the
/// client receives it; a response found early stands.
fn check(rng: &mut Rng, input: &[u8]) {
    let whole = parse(input, false).unwrap();
    parse(input, true).unwrap();
    for _ in 0..3 {
        let cut = rng.below(input.len() + 1);
        if let Some(early) = parse(&input[..cut], false).unwrap() {
            let later = whole.as_ref().unwrap_or_else(|| {
                panic!(
                    "a response in {cut} bytes is gone in all {}: {input:02X?}",
                    input.len()
                )
            });
            assert_eq!(early.status, later.status, "{input:02X?}");
        }
    }
}

/// One contention payload: random, or a valid one mutated; by the table or
/// by a random field list that starts like the runtime's.
fn check_contention(rng: &mut Rng) {
    let id = [81u32, 91, 80, 0][rng.below(4)];
    let version = rng.below(4) as u32;
    let mut valid = vec![rng.below(2) as u8, 7, 0];
    if id == 91 && version >= 1 {
        valid.extend_from_slice(&(rng.next() as f64 / 1e9).to_le_bytes());
    }
    if id == 81 && version >= 2 {
        valid.extend((0..24).map(|_| rng.byte()));
    }
    let input = if rng.below(4) == 0 {
        (0..rng.below(40)).map(|_| rng.byte()).collect()
    } else {
        mutate(rng, &valid)
    };
    let decoded = catch_unwind(AssertUnwindSafe(|| decode_contention(id, version, &input)));
    let decoded = decoded
        .unwrap_or_else(|_| panic!("decode_contention({id}, {version}, {input:02X?}) panicked"));
    if let Some(Contention::Stop {
        duration_nanos: Some(d),
        ..
    }) = decoded
    {
        assert!(d.is_finite() && d >= 0.0, "{d}");
    }
    const TYPES: [FieldType; 8] = [
        FieldType::Byte,
        FieldType::UInt16,
        FieldType::UInt32,
        FieldType::UInt64,
        FieldType::Double,
        FieldType::Pointer,
        FieldType::String,
        FieldType::Guid,
    ];
    let names = ["ContentionFlags", "ClrInstanceID", "DurationNs", "LockID"];
    let fields: Vec<Field> = (0..rng.below(5))
        .map(|_| Field {
            name: names[rng.below(names.len())].to_string(),
            ty: TYPES[rng.below(TYPES.len())].clone(),
        })
        .collect();
    if catch_unwind(AssertUnwindSafe(|| {
        decode_contention_with(id, &fields, &input)
    }))
    .is_err()
    {
        panic!("decode_contention_with({id}, {fields:?}, {input:02X?}) panicked");
    }
    // A well-formed ContentionStop_V1 decodes to what it holds.
    let flag = rng.below(2) as u8;
    let duration = (rng.next() >> 12) as f64;
    let mut stop = vec![flag, 1, 0];
    stop.extend_from_slice(&duration.to_le_bytes());
    assert_eq!(
        decode_contention(91, 1, &stop),
        Some(Contention::Stop {
            native: flag == 1,
            duration_nanos: Some(duration)
        })
    );
}

fn run(iters: usize, seed: u64) {
    let mut rng = Rng::new(seed, INTERESTING);
    let seeds = seeds();
    let mut inputs = 0u64;
    for i in 0..iters {
        let input = match rng.below(10) {
            0 => (0..rng.below(96)).map(|_| rng.byte()).collect(),
            1 => {
                let (generated, ..) = generate(&mut rng);
                mutate(&mut rng, &generated)
            }
            _ => {
                let k = rng.below(seeds.len());
                mutate(&mut rng, &seeds[k])
            }
        };
        let mut inner = rng.fork();
        if let Err(e) = catch_unwind(AssertUnwindSafe(|| check(&mut inner, &input))) {
            panic!("iteration {i} (seed {seed:#x}): {e:?} on {input:02X?}");
        }
        let (generated, status, body, to_eof) = generate(&mut rng);
        let response = parse_response(&generated, to_eof)
            .unwrap_or_else(|e| panic!("iteration {i}: {e} on {generated:02X?}"))
            .unwrap_or_else(|| panic!("iteration {i}: incomplete {generated:02X?}"));
        assert_eq!(response.status, status);
        let preview = &body[..body.len().min(BODY_PREVIEW)];
        assert_eq!(
            response.body,
            String::from_utf8_lossy(preview),
            "iteration {i}"
        );
        assert!(!response.truncated);
        check_contention(&mut rng);
        inputs += 4;
    }
    assert_eq!(inputs, 4 * iters as u64);
}

/// The largest inputs the client can hold, of the worst shapes: each
/// parses (the reader is linear: all of them in well under a second in a
/// debug build).
#[test]
fn large_inputs_of_bad_shapes() {
    let shapes: [&[u8]; 4] = [b"\n", b"a", b"HTTP/1.1 200 OK\r\nX: y\r\n", b"1\r\nx\r\n"];
    for shape in shapes {
        let mut input = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n".to_vec();
        while input.len() < MAX_RESPONSE {
            input.extend_from_slice(shape);
        }
        input.truncate(MAX_RESPONSE);
        let _ = parse_response(&input, false);
        let _ = parse_response(&input, true);
        let _ = parse_response(&input[48..], true);
    }
}

#[test]
fn fuzz_default() {
    let iters = env_or("CORPROF_FUZZ_ITERS", 30_000) as usize;
    run(iters, env_or("CORPROF_FUZZ_SEED", 0x4854_5450));
}

#[test]
#[ignore = "long run: cargo test --release --test services_fuzz -- --ignored"]
fn fuzz_long() {
    let iters = env_or("CORPROF_FUZZ_ITERS", 1_000_000) as usize;
    run(iters, env_or("CORPROF_FUZZ_SEED", 0xC0FF_EE01));
}
