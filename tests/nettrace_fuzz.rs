//! Randomized robustness test of the nettrace reader: mutated and random
//! streams, fed whole and in random pieces; nothing may panic, hang or
//! allocate without bound, every failure is an `Err` with an offset inside
//! the input, and a stream read in pieces gives what it gives read whole.
//!
//! `CORPROF_FUZZ_ITERS` sets the number of iterations (default 20000) and
//! `CORPROF_FUZZ_SEED` the seed. The `#[ignore]`d `fuzz_long` runs
//! 1,000,000: `cargo test --release --test nettrace_fuzz -- --ignored`.

mod common;

use common::fuzz::{env_or, mutate, Rng};
use common::nettrace_writer::{
    compressed_block, metadata, sequence_point, stack_block, uncompressed_block, utf16z, Blob,
    Stream,
};
use corprof::nettrace::{Event, Parser, RUNTIME_PROVIDER};
use std::panic::{catch_unwind, AssertUnwindSafe};

const INTERESTING: &[u8] = &[0x00, 0xFF, 0x80, 0x7F, 0x01, 0x05, 0x06, 0x13, 0x0F];

fn seeds() -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    for pointer_size in [8usize, 4] {
        let mut s = Stream::new();
        s.trace(pointer_size as u32);
        let mut tags = Vec::new();
        let name = utf16z("A");
        let mut field = ((4 + name.len() + 8) as u32).to_le_bytes().to_vec();
        field.extend(&name);
        field.extend(19u32.to_le_bytes());
        field.extend(12u32.to_le_bytes());
        tags.extend(((4 + field.len()) as u32).to_le_bytes());
        tags.push(2);
        tags.extend(1u32.to_le_bytes());
        tags.extend(field);
        // An unnamed V1 struct holding a named one (EventSource's shape),
        // as event 4's metadata.
        let mut nested = metadata(4, "P", 4, "N", 0, &[], &[]);
        nested.truncate(nested.len() - 4);
        for w in [1u32, 1, 1, 1, 1, 9] {
            nested.extend(w.to_le_bytes()); // 1 field: Object of 1: Object of 1: Int32
        }
        nested.extend(utf16z("X"));
        nested.extend(utf16z("Inner"));
        nested.extend(utf16z(""));
        let metas = [
            Blob {
                payload: metadata(1, "P", 1, "E", 0, &[(9, "I"), (18, "S"), (17, "G")], &[]),
                ..Blob::default()
            },
            Blob {
                payload: nested,
                ..Blob::default()
            },
            Blob {
                payload: metadata(2, "P", 2, "F", 1, &[], &tags),
                ..Blob::default()
            },
            Blob {
                payload: metadata(3, RUNTIME_PROVIDER, 15, "", 0, &[], &[]),
                ..Blob::default()
            },
        ];
        s.block("MetadataBlock", &compressed_block(&metas));
        s.block(
            "StackBlock",
            &stack_block(1, &[&[1, 2, 3], &[4]], pointer_size),
        );
        let mut p1 = 5i32.to_le_bytes().to_vec();
        p1.extend(utf16z("x"));
        p1.extend([0; 16]);
        let mut p2 = 2u16.to_le_bytes().to_vec();
        p2.extend([1; 16]);
        // GCBulkType: Count 1, ClrInstanceID, one type with one parameter.
        let mut p3 = 1u32.to_le_bytes().to_vec();
        p3.extend(0u16.to_le_bytes());
        p3.extend([0; 16]);
        p3.extend([0; 8]);
        p3.push(0x12);
        p3.extend(utf16z("T"));
        p3.extend(1u32.to_le_bytes());
        p3.extend(9u64.to_le_bytes());
        let p4 = 7i32.to_le_bytes().to_vec();
        let events: Vec<Blob> = [p1, p2, p3, p4]
            .into_iter()
            .enumerate()
            .map(|(i, payload)| Blob {
                metadata_id: if i == 3 { 4 } else { i as u32 + 1 },
                sequence: i as u32 + 1,
                thread: 3,
                capture_thread: 3,
                stack_id: (i as u32 % 2) + 1,
                timestamp: 10 * i as i64,
                sorted: i == 0,
                payload,
                ..Blob::default()
            })
            .collect();
        s.block("EventBlock", &compressed_block(&events));
        s.block("SPBlock", &sequence_point(99, &[(3, 3)]));
        s.block("EventBlock", &uncompressed_block(&events[..2]));
        s.end();
        out.push(s.bytes);
    }
    out
}

/// Every event's fields decoded (errors allowed, panics not).
fn touch(events: &[Event]) {
    for e in events {
        let _ = e.fields();
        let _ = e.layout();
    }
}

fn check(rng: &mut Rng, input: &[u8]) {
    let whole = Parser::parse_all(input);
    match &whole {
        Ok((_, events, stats)) => {
            touch(events);
            // The stream ends at its end marker; what follows is not read.
            let end = stats.bytes as usize;
            assert!(end <= input.len());
            assert_eq!(input[end - 1], 1, "the end marker");
        }
        Err(e) => assert!(e.offset <= input.len() as u64, "offset past the input: {e}"),
    }
    // In random pieces: the same events and the same outcome.
    let mut parser = Parser::new();
    let mut events = Vec::new();
    let mut rest = input;
    let mut failed = None;
    while failed.is_none() {
        let n = rng.below(rest.len().min(64) + 1);
        parser.feed(&rest[..n]);
        rest = &rest[n..];
        loop {
            match parser.next_event() {
                Ok(Some(e)) => events.push(e),
                Ok(None) => break,
                Err(e) => {
                    failed = Some(e);
                    break;
                }
            }
        }
        if rest.is_empty() {
            break;
        }
    }
    let outcome = failed.map_or_else(|| parser.finish(), Err);
    match whole {
        Ok((_, all, _)) => {
            assert_eq!(outcome, Ok(()));
            assert_eq!(events, all);
        }
        Err(e) => assert_eq!(outcome, Err(e)),
    }
}

fn run(iters: usize, seed: u64) {
    let mut rng = Rng::new(seed, INTERESTING);
    let seeds = seeds();
    for i in 0..iters {
        let input = match rng.below(10) {
            0 => {
                let mut v = b"Nettrace".to_vec();
                v.extend(rng.bytes(64));
                v
            }
            _ => {
                let k = rng.below(seeds.len());
                mutate(&mut rng, &seeds[k])
            }
        };
        let mut piece_rng = rng.fork();
        if catch_unwind(AssertUnwindSafe(|| check(&mut piece_rng, &input))).is_err() {
            panic!("the nettrace reader failed on iteration {i} (seed {seed}): {input:02X?}");
        }
    }
}

#[test]
fn the_seeds_are_valid_streams() {
    for seed in seeds() {
        let (_, events, stats) = Parser::parse_all(&seed).unwrap();
        assert_eq!(events.len(), 6);
        assert_eq!(stats.lost_events, 0);
        for e in &events {
            e.fields().unwrap();
        }
    }
}

#[test]
fn fuzz_reader_default() {
    let iters = env_or("CORPROF_FUZZ_ITERS", 20_000) as usize;
    run(iters, env_or("CORPROF_FUZZ_SEED", 0x4E77_7261));
}

#[test]
#[ignore = "long run: cargo test --release --test nettrace_fuzz -- --ignored"]
fn fuzz_long() {
    let iters = env_or("CORPROF_FUZZ_ITERS", 1_000_000) as usize;
    run(iters, env_or("CORPROF_FUZZ_SEED", 0xC0FF_EE01));
}
