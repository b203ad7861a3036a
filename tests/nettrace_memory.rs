//! The nettrace reader's memory and speed on a long stream.
//!
//! A synthetic stream written block by block with the tests' own writer
//! (`common::nettrace_writer`, independent of the reader): a metadata
//! block, then rounds of a stack block (100 stacks of 30 frames), ten
//! compressed event blocks of about 100 KB (four threads, sequence numbers
//! in order, payloads of an `Int32` and a `String`) and a sequence point,
//! as the runtime writes them, until the stream reaches its size.
//!
//! - `memory_is_bounded_by_the_largest_block_not_the_file`: reading 24 MB
//!   from a file allocates at most a few blocks' worth at any time
//!   (counted by this binary's global allocator), however long the file.
//! - `speed_on_a_100_mb_trace` (ignored; `cargo test --release --test
//!   nettrace_memory -- --ignored --nocapture`): the reader's MB/s on a
//!   100 MB stream against `cat`'s on the same file in the same run
//!   (docs/performance.md).

mod common;

use std::alloc::{GlobalAlloc, Layout, System};
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use common::nettrace_writer::{
    compressed_block, metadata, sequence_point, stack_block, utf16z, Blob, Stream,
};
use corprof::nettrace::NettraceReader;

/// The system allocator, counting the bytes live and their high-water
/// mark.
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call is forwarded to `System` with the caller's layout and
// pointer unchanged; the counters are only statistics.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract for `alloc`, passed on.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            let live = LIVE.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
            PEAK.fetch_max(live, Ordering::Relaxed);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract for `dealloc`, passed on.
        unsafe { System.dealloc(ptr, layout) };
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller's contract for `realloc`, passed on.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
            let live = LIVE.fetch_add(new_size, Ordering::Relaxed) + new_size;
            PEAK.fetch_max(live, Ordering::Relaxed);
        }
        p
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

const THREADS: u64 = 4;
const STACKS_PER_ROUND: u32 = 100;
const FRAMES: u64 = 30;
const BLOCKS_PER_ROUND: usize = 10;
const EVENTS_PER_BLOCK: usize = 1000;

/// What [`write_stream`] wrote.
struct Written {
    bytes: u64,
    events: u64,
    largest_block: usize,
}

/// Writes a stream of at least `size` bytes to `path`, block by block
/// (whole 4-byte words go to the file; the writer's padding is counted
/// from the stream's start, so at most 3 bytes stay behind).
fn write_stream(path: &Path, size: u64) -> Written {
    let mut file = BufWriter::new(File::create(path).unwrap());
    let mut s = Stream::new();
    let mut flushed = 0u64;
    let mut flush = |s: &mut Stream, file: &mut BufWriter<File>, all: bool| {
        let n = if all {
            s.bytes.len()
        } else {
            s.bytes.len() / 4 * 4
        };
        file.write_all(&s.bytes[..n]).unwrap();
        s.bytes.drain(..n);
        flushed += n as u64;
        flushed + s.bytes.len() as u64
    };
    s.trace(8);
    let metas: Vec<Blob> = (1..=2)
        .map(|id| Blob {
            payload: metadata(
                id,
                "CorProf-Synthetic",
                id,
                "Tick",
                0,
                &[(10, "Count"), (18, "Label")],
                &[],
            ),
            ..Blob::default()
        })
        .collect();
    let block = compressed_block(&metas);
    let mut largest = block.len();
    s.block("MetadataBlock", &block);
    let (mut events, mut sequence, mut timestamp, mut first_stack) =
        (0u64, [0u32; THREADS as usize], 2_000_000i64, 1u32);
    let mut label = 0u32;
    loop {
        let frames: Vec<Vec<u64>> = (0..u64::from(STACKS_PER_ROUND))
            .map(|k| {
                (0..FRAMES)
                    .map(|f| 0x7f00_0000_0000 + k * 0x1000 + f * 8)
                    .collect()
            })
            .collect();
        let refs: Vec<&[u64]> = frames.iter().map(Vec::as_slice).collect();
        let block = stack_block(first_stack, &refs, 8);
        largest = largest.max(block.len());
        s.block("StackBlock", &block);
        for _ in 0..BLOCKS_PER_ROUND {
            let blobs: Vec<Blob> = (0..EVENTS_PER_BLOCK)
                .map(|i| {
                    let t = (i as u64) % THREADS;
                    sequence[t as usize] += 1;
                    timestamp += 1000;
                    label += 1;
                    let mut payload = label.to_le_bytes().to_vec();
                    payload.extend(utf16z(&format!("label {label} of the synthetic stream")));
                    Blob {
                        metadata_id: 1 + (i as u32 % 2),
                        sequence: sequence[t as usize],
                        thread: 100 + t,
                        capture_thread: 100 + t,
                        processor: t as u32,
                        stack_id: first_stack + (i as u32 % STACKS_PER_ROUND),
                        timestamp,
                        sorted: true,
                        payload,
                        ..Blob::default()
                    }
                })
                .collect();
            let block = compressed_block(&blobs);
            largest = largest.max(block.len());
            s.block("EventBlock", &block);
            events += EVENTS_PER_BLOCK as u64;
        }
        let threads: Vec<(u64, u32)> = (0..THREADS)
            .map(|t| (100 + t, sequence[t as usize]))
            .collect();
        s.block("SPBlock", &sequence_point(timestamp, &threads));
        first_stack += STACKS_PER_ROUND;
        if flush(&mut s, &mut file, false) >= size {
            break;
        }
    }
    s.end();
    let bytes = flush(&mut s, &mut file, true);
    file.flush().unwrap();
    Written {
        bytes,
        events,
        largest_block: largest,
    }
}

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("nettrace_memory");
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(format!("{name}-{}.nettrace", std::process::id()))
}

/// Reads `path` whole; returns the events read and the most bytes live
/// above what was live before (this binary's allocator).
fn read_counting(path: &Path, decode: bool) -> (u64, usize) {
    let file = File::open(path).unwrap();
    let before = LIVE.load(Ordering::Relaxed);
    PEAK.store(before, Ordering::Relaxed);
    let mut reader = NettraceReader::new(file);
    let mut events = 0u64;
    for event in &mut reader {
        let event = event.unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        if decode {
            let fields = event.fields().unwrap();
            assert_eq!(fields.len(), 2);
        }
        events += 1;
    }
    assert_eq!(reader.stats().lost_events, 0);
    drop(reader);
    (events, PEAK.load(Ordering::Relaxed) - before)
}

/// 24 MB read from a file: the reader's high-water mark is no higher
/// than on a stream an eighth as long, and within a few of the largest
/// block: the parser's buffer holds the block being read and the chunks
/// fed after it, and is compacted once half of it is consumed (at most
/// twice the block and a chunk), in a `Vec` of at most twice that
/// capacity; beside it the 64-KB read chunk, the stacks since the last
/// sequence point (one stack block's worth) and the metadata.
#[test]
fn memory_is_bounded_by_the_largest_block_not_the_file() {
    let mut peaks = Vec::new();
    for (name, size) in [("short", 3u64 << 20), ("long", 24 << 20)] {
        let path = scratch(name);
        let written = write_stream(&path, size);
        assert!(written.bytes >= size);
        let (events, peak) = read_counting(&path, true);
        std::fs::remove_file(&path).unwrap();
        assert_eq!(events, written.events);
        let chunk = 64 << 10;
        let bound = 4 * (written.largest_block + chunk) + chunk + 2 * written.largest_block;
        eprintln!(
            "{} bytes, {} events, largest block {} bytes; reader's peak {} bytes (bound {})",
            written.bytes, events, written.largest_block, peak, bound
        );
        assert!(peak <= bound, "{name}: peak {peak} bytes > {bound}");
        peaks.push(peak);
    }
    // Eight times the file, not more memory (a chunk's worth of slack).
    assert!(
        peaks[1] <= peaks[0] + (64 << 10),
        "peak {} bytes on 24 MB against {} on 3 MB",
        peaks[1],
        peaks[0]
    );
}

/// The reader's speed on a 100 MB stream against `cat FILE > /dev/null`
/// and against reading the file in the reader's 64-KB chunks, in the same
/// run, all after one read that brings the file into the page cache; the
/// best of three each (the reader with `Event::fields` once).
#[test]
#[ignore = "a measurement: cargo test --release --test nettrace_memory -- --ignored --nocapture"]
fn speed_on_a_100_mb_trace() {
    let path = scratch("speed");
    let written = write_stream(&path, 100 << 20);
    let mb = written.bytes as f64 / 1e6;
    let cat = || {
        let start = Instant::now();
        let status = std::process::Command::new("cat")
            .arg(&path)
            .stdout(std::process::Stdio::null())
            .status()
            .unwrap();
        assert!(status.success());
        start.elapsed().as_secs_f64()
    };
    cat();
    let best = |f: &dyn Fn() -> f64| (0..3).map(|_| f()).fold(f64::INFINITY, f64::min);
    let cat_s = best(&cat);
    // The reader's own I/O: the file read in its 64-KB chunks, nothing
    // parsed.
    let io_s = best(&|| {
        let start = Instant::now();
        let mut file = File::open(&path).unwrap();
        let mut chunk = vec![0u8; 64 << 10];
        let mut total = 0u64;
        loop {
            let n = std::io::Read::read(&mut file, &mut chunk).unwrap();
            if n == 0 {
                break;
            }
            total += n as u64;
        }
        assert_eq!(total, written.bytes);
        start.elapsed().as_secs_f64()
    });
    let read_s = best(&|| {
        let start = Instant::now();
        let (events, _) = read_counting(&path, false);
        assert_eq!(events, written.events);
        start.elapsed().as_secs_f64()
    });
    let (decode_s, peak) = {
        let start = Instant::now();
        let (events, peak) = read_counting(&path, true);
        assert_eq!(events, written.events);
        (start.elapsed().as_secs_f64(), peak)
    };
    std::fs::remove_file(&path).unwrap();
    println!(
        "{mb:.1} MB, {} events, largest block {} bytes\n\
         cat > /dev/null:     {:.3} s, {:.0} MB/s\n\
         read(64 KB chunks):  {:.3} s, {:.0} MB/s\n\
         reader (events):     {:.3} s, {:.0} MB/s, {:.1} M events/s\n\
         reader (+ fields()): {:.3} s, {:.0} MB/s; peak {} bytes",
        written.events,
        written.largest_block,
        cat_s,
        mb / cat_s,
        io_s,
        mb / io_s,
        read_s,
        mb / read_s,
        written.events as f64 / read_s / 1e6,
        decode_s,
        mb / decode_s,
        peak
    );
}
