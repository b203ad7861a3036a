//! Signal mode's tables shared with the handler (`handler.rs`): the
//! sample buffer of [`SLOTS`] slots the handler writes and the sampler
//! thread drains, the registry of [`MAX_THREADS`] registrations the
//! handler reads, and the counters. Lock-free: atomics only.

// Off Linux x86-64/AArch64 the handler, the walk and the tables are not
// built into a sampler (SamplingMode::Signal answers E_NOTIMPL there).
#![cfg_attr(
    not(all(
        target_os = "linux",
        any(target_arch = "x86_64", target_arch = "aarch64")
    )),
    allow(dead_code, unused_imports)
)]

use alloc::vec::Vec;
use core::sync::atomic::{AtomicI32, AtomicU32, AtomicU64, AtomicUsize, Ordering};

use super::mode::{MAX_DEPTH, MAX_THREADS, SLOTS};
pub(super) use super::state::SpanIds;
use super::walk::WalkEnd;

pub(super) const FREE: u32 = 0;
pub(super) const WRITING: u32 = 1;
pub(super) const READY: u32 = 2;

/// The kinds of sample, in the tag of `si_value`.
pub(super) const KIND_CPU: u8 = 1;
pub(super) const KIND_WALL: u8 = 2;
/// The upper 32 bits of the sampler's `si_value`: a tag and the kind; the
/// lower 32 the registration's index.
pub(super) const TAG: usize = 0x5157_0000;

/// The `si_value` of a sample of `kind` for registration `index` (signal
/// mode runs on 64-bit targets only; on others the value is never used).
pub(super) fn value_of(kind: u8, index: usize) -> usize {
    ((((TAG | kind as usize) as u64) << 32) | index as u64) as usize
}

pub(super) struct Slot {
    pub(super) state: AtomicU32,
    /// Written by the handler that owns the slot (`WRITING`), read by the
    /// sampler thread once it is `READY`.
    pub(super) data: core::cell::UnsafeCell<SlotData>,
}

#[derive(Clone, Copy)]
pub(super) struct SlotData {
    pub(super) thread: usize,
    /// The registration: its index and serial.
    pub(super) index: u32,
    pub(super) serial: u64,
    pub(super) tid: i32,
    pub(super) kind: u8,
    pub(super) end: WalkEnd,
    pub(super) depth: u16,
    pub(super) weight: u64,
    /// The span current on the thread when it was sampled
    /// ([`SpanIds::NONE`]: none).
    pub(super) span: SpanIds,
    pub(super) ips: [usize; MAX_DEPTH],
}

// SAFETY: `data` is only touched by the one party that holds the slot by
// its atomic state (a handler between FREE->WRITING and READY, the
// sampler thread between READY and FREE).
unsafe impl Sync for Slot {}

#[allow(clippy::declare_interior_mutable_const)]
pub(super) const EMPTY_SLOT: Slot = Slot {
    state: AtomicU32::new(FREE),
    data: core::cell::UnsafeCell::new(SlotData {
        thread: 0,
        index: 0,
        serial: 0,
        tid: 0,
        kind: 0,
        end: WalkEnd::Complete,
        depth: 0,
        weight: 0,
        span: SpanIds::NONE,
        ips: [0; MAX_DEPTH],
    }),
};

pub(super) static BUFFER: [Slot; SLOTS] = [EMPTY_SLOT; SLOTS];
pub(super) static CURSOR: AtomicUsize = AtomicUsize::new(0);

/// A thread's registration, read by its handler.
pub(super) struct Entry {
    /// Even when stable, odd while being written (a sequence lock: the
    /// handler retries never, it gives up on a change).
    pub(super) seq: AtomicU32,
    /// Kernel thread ID (0: free).
    pub(super) tid: AtomicI32,
    pub(super) low: AtomicUsize,
    pub(super) high: AtomicUsize,
    /// The managed `ThreadID`.
    pub(super) thread: AtomicUsize,
    /// The registration's serial (one per registration, never reused).
    pub(super) serial: AtomicU64,
    /// The thread's CPU clock at its previous CPU sample, and the monotonic
    /// clock at its previous wall sample (written by the handler).
    pub(super) last_cpu: AtomicU64,
    pub(super) last_wall: AtomicU64,
}

#[allow(clippy::declare_interior_mutable_const)]
pub(super) const EMPTY_ENTRY: Entry = Entry {
    seq: AtomicU32::new(0),
    tid: AtomicI32::new(0),
    low: AtomicUsize::new(0),
    high: AtomicUsize::new(0),
    thread: AtomicUsize::new(0),
    serial: AtomicU64::new(0),
    last_cpu: AtomicU64::new(0),
    last_wall: AtomicU64::new(0),
};

pub(super) static REGISTRY: [Entry; MAX_THREADS] = [EMPTY_ENTRY; MAX_THREADS];

/// A thread's current span, written by the thread itself (the managed
/// span helper, through the pointer `corprof_span_block` gave it) and
/// read by its own signal handler: one per registration, at the
/// registration's index. `#[repr(C)]`, the layout the helper writes
/// (spans/SpanHelper.cs): `seq` at 0, `tid` at 4, the trace id's 16
/// bytes at 8, the span id's 8 at 24. The writer makes `seq` odd, writes
/// the ids, makes it even; a handler that interrupted it (it runs on the
/// same thread) sees `seq` odd and takes no span, so a torn pair is never
/// read. `tid` is the kernel thread the block was handed to: a handler on
/// another thread (a block kept by a thread whose registration ended and
/// was reused) takes no span.
#[repr(C)]
pub(super) struct SpanBlock {
    pub(super) seq: AtomicU32,
    pub(super) tid: AtomicI32,
    pub(super) trace: [AtomicU64; 2],
    pub(super) span: AtomicU64,
}

#[allow(clippy::declare_interior_mutable_const)]
pub(super) const EMPTY_SPAN: SpanBlock = SpanBlock {
    seq: AtomicU32::new(0),
    tid: AtomicI32::new(0),
    trace: [AtomicU64::new(0), AtomicU64::new(0)],
    span: AtomicU64::new(0),
};

pub(super) static SPANS: [SpanBlock; MAX_THREADS] = [EMPTY_SPAN; MAX_THREADS];

impl SpanBlock {
    /// The ids the block holds for thread `tid`: none when the writer was
    /// interrupted (odd or changed `seq`), when the block is not `tid`'s,
    /// or when no span is current. Async-signal-safe (loads only).
    pub(super) fn read(&self, tid: i32) -> SpanIds {
        let seq = self.seq.load(Ordering::Acquire);
        if seq % 2 == 1 || self.tid.load(Ordering::Relaxed) != tid {
            return SpanIds::NONE;
        }
        let trace = [
            self.trace[0].load(Ordering::Relaxed),
            self.trace[1].load(Ordering::Relaxed),
        ];
        let span = self.span.load(Ordering::Relaxed);
        core::sync::atomic::fence(Ordering::Acquire);
        if self.seq.load(Ordering::Relaxed) != seq {
            return SpanIds::NONE;
        }
        let mut ids = SpanIds::NONE;
        let (high, low) = ids.trace.split_at_mut(8);
        high.copy_from_slice(&trace[0].to_ne_bytes());
        low.copy_from_slice(&trace[1].to_ne_bytes());
        ids.span = span.to_ne_bytes();
        ids
    }

    /// Writes `ids` as the helper does (for the crate's tests and for a
    /// writer in Rust).
    pub(super) fn write(&self, ids: &SpanIds) {
        let seq = self.seq.load(Ordering::Relaxed);
        self.seq.store(seq.wrapping_add(1), Ordering::Relaxed);
        core::sync::atomic::fence(Ordering::Release);
        let mut high = [0; 8];
        let mut low = [0; 8];
        high.copy_from_slice(ids.trace.get(..8).unwrap_or(&[0; 8]));
        low.copy_from_slice(ids.trace.get(8..).unwrap_or(&[0; 8]));
        self.trace[0].store(u64::from_ne_bytes(high), Ordering::Relaxed);
        self.trace[1].store(u64::from_ne_bytes(low), Ordering::Relaxed);
        self.span.store(u64::from_ne_bytes(ids.span), Ordering::Relaxed);
        self.seq.store(seq.wrapping_add(2), Ordering::Release);
    }

    /// Hands the block to thread `tid`, with no span current.
    pub(super) fn claim(&self, tid: i32) {
        self.write(&SpanIds::NONE);
        self.tid.store(tid, Ordering::Release);
    }
}

/// Counters the handler and the registration update.
pub(super) struct Counters {
    pub(super) handled: AtomicU64,
    pub(super) dropped: AtomicU64,
    pub(super) stale: AtomicU64,
    pub(super) foreign: AtomicU64,
}

pub(super) static COUNTERS: Counters = Counters {
    handled: AtomicU64::new(0),
    dropped: AtomicU64::new(0),
    stale: AtomicU64::new(0),
    foreign: AtomicU64::new(0),
};

/// One drained sample: the managed thread, its registration (index and
/// serial), its OS thread, the kind, its weight in nanoseconds, how the
/// walk ended, and the raw addresses (innermost first).
#[derive(Clone, Debug)]
pub(super) struct RawSample {
    pub(super) thread: usize,
    pub(super) index: u32,
    pub(super) serial: u64,
    pub(super) tid: i32,
    pub(super) cpu: bool,
    pub(super) weight: u64,
    pub(super) end: WalkEnd,
    pub(super) span: SpanIds,
    pub(super) ips: Vec<usize>,
}

/// Takes every ready sample out of the buffer (the sampler thread only).
pub(super) fn drain(out: &mut Vec<RawSample>) {
    for slot in BUFFER.iter() {
        if slot.state.load(Ordering::Acquire) != READY {
            continue;
        }
        // SAFETY: READY: the handler is done with it and no one else
        // writes it until it is FREE again.
        let data = unsafe { &*slot.data.get() };
        out.push(RawSample {
            thread: data.thread,
            index: data.index,
            serial: data.serial,
            tid: data.tid,
            cpu: data.kind == KIND_CPU,
            weight: data.weight,
            end: data.end,
            span: data.span,
            ips: data.ips.iter().take(usize::from(data.depth)).copied().collect(),
        });
        slot.state.store(FREE, Ordering::Release);
    }
}

#[cfg(test)]
#[allow(
    clippy::arithmetic_side_effects,
    clippy::indexing_slicing,
    clippy::panic
)]
mod tests {
    use super::*;

    /// A span block gives its ids whole, to its own thread only, and none
    /// while a write is under way (an odd sequence: the handler interrupted
    /// the writer on its thread).
    #[test]
    fn a_span_block_gives_whole_ids_or_none() {
        let block = EMPTY_SPAN;
        let mut ids = SpanIds::NONE;
        for (i, b) in ids.trace.iter_mut().enumerate() {
            *b = 0x10 + i as u8;
        }
        ids.span = [0xa0, 0xa1, 0xa2, 0xa3, 0xa4, 0xa5, 0xa6, 0xa7];
        assert_eq!(block.read(0), SpanIds::NONE);
        block.claim(42);
        assert_eq!(block.read(42), SpanIds::NONE);
        block.write(&ids);
        assert_eq!(block.read(42), ids);
        assert_eq!(block.read(43), SpanIds::NONE, "another thread's block");
        // The helper's layout (spans/SpanHelper.cs): the trace id's bytes
        // at 8, the span id's at 24, in their hex order.
        // SAFETY: reads 32 bytes of a live `#[repr(C)]` block of 32.
        let bytes = unsafe { core::slice::from_raw_parts((&block as *const SpanBlock).cast::<u8>(), 32) };
        assert_eq!(core::mem::size_of::<SpanBlock>(), 32);
        assert_eq!(&bytes[8..24], &ids.trace);
        assert_eq!(&bytes[24..32], &ids.span);
        // Interrupted mid-write: none, then the whole pair again.
        block.seq.fetch_add(1, Ordering::SeqCst);
        assert_eq!(block.read(42), SpanIds::NONE);
        block.seq.fetch_add(1, Ordering::SeqCst);
        assert_eq!(block.read(42), ids);
        block.write(&SpanIds::NONE);
        assert!(block.read(42).absent());
        block.claim(0);
        assert_eq!(block.read(42), SpanIds::NONE);
    }

    #[test]
    fn the_value_tag_carries_kind_and_index() {
        let v = value_of(KIND_WALL, 4095);
        assert_eq!(v & 0xffff_ffff, 4095);
        assert_eq!(((v >> 32) & 0xff) as u8, KIND_WALL);
        assert_eq!((v >> 32) & !0xff, TAG);
    }
}
