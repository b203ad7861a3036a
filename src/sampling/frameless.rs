//! Frameless managed code (x86-64): the prologues of JIT-compiled functions
//! without a frame pointer, and the table of their ranges the signal
//! handler searches ([`frameless_at`]); the resolver (`resolver.rs`)
//! fills it.

use core::sync::atomic::{AtomicU32, AtomicUsize, Ordering};

/// How an x86-64 function without a frame pointer sets up its frame, from
/// its first bytes (the JIT's and crossgen's prologues: `push reg`s, then
/// `sub rsp, imm`): the bytes its stack frame holds below the return
/// address, and the prologue's length. `None` when it keeps a frame
/// pointer (`push rbp`) or the bytes are not a prologue this understands.
/// Measured on 3.1.23: `Thread.Sleep` and `WaitHandle.WaitOne` begin with
/// `push rax` (8 bytes, no frame pointer) and call the runtime: a walk by
/// frame records skips their callers.
pub(super) fn frameless_prologue(code: &[u8]) -> Option<(usize, usize)> {
    // A frame pointer set anywhere in the first bytes (`mov rbp, rsp`,
    // either encoding): a frame (8.0's OSR code begins `mov rax, [rbp]; push
    // rax; mov rbp, rsp`).
    if code
        .windows(3)
        .any(|w| w == [0x48, 0x8b, 0xec] || w == [0x48, 0x89, 0xe5])
    {
        return None;
    }
    let mut size = 0usize;
    let mut at = 0usize;
    loop {
        match code.get(at..)? {
            // The bytes ran out before the prologue did.
            [] => return None,
            [0x55, ..] => return None,
            [0x50..=0x57, ..] => {
                size = size.checked_add(8)?;
                at = at.checked_add(1)?;
            }
            [0x41, 0x50..=0x57, ..] => {
                size = size.checked_add(8)?;
                at = at.checked_add(2)?;
            }
            [0x48, 0x83, 0xec, imm, ..] => {
                return Some((size.checked_add(usize::from(*imm))?, at.checked_add(4)?))
            }
            [0x48, 0x81, 0xec, a, b, c, d, ..] => {
                let imm = u32::from_le_bytes([*a, *b, *c, *d]) as usize;
                return Some((size.checked_add(imm)?, at.checked_add(7)?));
            }
            // Anything else ends the prologue; a frame pointer set later
            // (`mov rbp, rsp`, `lea rbp, [rsp + n]`) means a frame.
            [0x48, 0x8b, 0xec, ..] | [0x48, 0x89, 0xe5, ..] | [0x48, 0x8d, 0x6c, ..] => {
                return None
            }
            // `mov rax, [rbp]`: OSR code copying its tier-0 frame's saved
            // frame pointer into a record of its own (8.0 begins with it;
            // 11.0 begins `push rax; mov rax, [rbp]; push rax`, then sets
            // rbp after its other pushes): a frame.
            [0x48, 0x8b, 0x45, 0x00, ..] => return None,
            // Pushes then something else: a frame of the pushes. Nothing
            // recognized at all: not known to be frameless.
            _ if size > 0 => return Some((size, at)),
            _ => return None,
        }
    }
}

/// Most frameless code ranges published to the handler.
pub(super) const MAX_FRAMELESS: usize = 8192;

/// The frame size of a range that is not frameless but the tier-0 code of
/// a method the JIT compiled again by OSR (x86-64): its frames are framed,
/// and a step that lands in it from an OSR frame looks for the tier-0
/// frame's own record (`signal::tier0_caller`).
pub(super) const OSR_ORIGIN: usize = usize::MAX;

/// The frame size of a one-byte range at the first byte of an OSR
/// method's code (x86-64, .NET 11): a frame record whose return address is
/// that byte is an OSR frame's, and a step that lands there looks for the
/// tier-0 frame's own record (`signal::tier0_caller`), as from
/// [`OSR_ORIGIN`] code.
pub(super) const OSR_ENTRY: usize = usize::MAX - 1;

/// Held by the unit tests that publish the process-wide tables (modules,
/// frameless ranges), so that they do not see each other's.
#[cfg(test)]
pub(super) static TABLE_IN_TEST: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// A sorted table of frameless code ranges: start, end, frame size,
/// prologue length; two copies, the handler reading the one `ACTIVE`
/// names under its sequence number.
struct Frameless {
    seq: AtomicU32,
    len: AtomicUsize,
    start: [AtomicUsize; MAX_FRAMELESS],
    end: [AtomicUsize; MAX_FRAMELESS],
    size: [AtomicUsize; MAX_FRAMELESS],
    prologue: [AtomicUsize; MAX_FRAMELESS],
}

#[allow(clippy::declare_interior_mutable_const)]
const ZERO: AtomicUsize = AtomicUsize::new(0);
#[allow(clippy::declare_interior_mutable_const)]
const EMPTY_TABLE: Frameless = Frameless {
    seq: AtomicU32::new(0),
    len: AtomicUsize::new(0),
    start: [ZERO; MAX_FRAMELESS],
    end: [ZERO; MAX_FRAMELESS],
    size: [ZERO; MAX_FRAMELESS],
    prologue: [ZERO; MAX_FRAMELESS],
};
static FRAMELESS: [Frameless; 2] = [EMPTY_TABLE, EMPTY_TABLE];
static ACTIVE: AtomicUsize = AtomicUsize::new(0);

/// Publishes `ranges` (start, end, frame size, prologue length), sorted by
/// start, non-overlapping (the sampler thread; one writer).
pub(super) fn publish_frameless(ranges: &[(usize, usize, usize, usize)]) {
    let next = (ACTIVE.load(Ordering::Relaxed) & 1) ^ 1;
    let Some(table) = FRAMELESS.get(next) else {
        return;
    };
    let seq = table.seq.load(Ordering::Relaxed);
    table.seq.store(seq.wrapping_add(1), Ordering::Relaxed);
    core::sync::atomic::fence(Ordering::Release);
    let n = ranges.len().min(MAX_FRAMELESS);
    let slots = table
        .start
        .iter()
        .zip(&table.end)
        .zip(&table.size)
        .zip(&table.prologue);
    for ((((s, e), z), p), &(start, end, size, prologue)) in slots.zip(ranges) {
        s.store(start, Ordering::Relaxed);
        e.store(end, Ordering::Relaxed);
        z.store(size, Ordering::Relaxed);
        p.store(prologue, Ordering::Relaxed);
    }
    table.len.store(n, Ordering::Relaxed);
    table.seq.store(seq.wrapping_add(2), Ordering::Release);
    ACTIVE.store(next, Ordering::Release);
}

/// The frame size and code start and prologue length of the frameless
/// range holding `ip`, if it is one (async-signal-safe).
pub(super) fn frameless_at(ip: usize) -> Option<(usize, usize, usize)> {
    let table = FRAMELESS.get(ACTIVE.load(Ordering::Acquire) & 1)?;
    let seq = table.seq.load(Ordering::Acquire);
    if seq & 1 == 1 {
        return None;
    }
    let n = table.len.load(Ordering::Relaxed).min(MAX_FRAMELESS);
    // The last range starting at or before ip.
    let starts = table.start.get(..n).unwrap_or(&[]);
    let after = starts.partition_point(|s| s.load(Ordering::Relaxed) <= ip);
    let found = after.checked_sub(1).and_then(|i| {
        let start = table.start.get(i)?.load(Ordering::Relaxed);
        (ip < table.end.get(i)?.load(Ordering::Relaxed)).then_some(())?;
        Some((
            table.size.get(i)?.load(Ordering::Relaxed),
            start,
            table.prologue.get(i)?.load(Ordering::Relaxed),
        ))
    });
    core::sync::atomic::fence(Ordering::Acquire);
    if table.seq.load(Ordering::Relaxed) != seq {
        return None;
    }
    found
}

#[cfg(test)]
#[allow(
    clippy::arithmetic_side_effects,
    clippy::indexing_slicing,
    clippy::panic
)]
mod tests {
    use super::*;

    /// Prologues as the JIT and crossgen wrote them (bytes read from the
    /// code of 3.1.23 and 8.0.4 with `GetCodeInfo2`/`GetCodeInfo4`).
    #[test]
    fn prologues_tell_frameless_code_and_its_frame_size() {
        // Thread.Sleep and WaitHandle.WaitOne on 3.1.23: push rax; nop; call.
        let sleep = [0x50, 0x0f, 0x1f, 0x40, 0x00, 0xff, 0x15, 0xcd];
        assert_eq!(frameless_prologue(&sleep), Some((8, 1)));
        // Framed: push rbp first (tier-0 and most methods).
        let framed = [0x55, 0x48, 0x83, 0xec, 0x20, 0x48, 0x8d, 0x6c, 0x24, 0x20];
        assert_eq!(frameless_prologue(&framed), None);
        // 8.0's OSR code: mov rax, [rbp]; push rax; mov rbp, rsp.
        let osr = [0x48, 0x8b, 0x45, 0x00, 0x50, 0x48, 0x8b, 0xec, 0x8b, 0x4d];
        assert_eq!(frameless_prologue(&osr), None);
        // 11.0's OSR code: push rax (the pseudo return address); mov rax,
        // [rbp]; push rax; sub rsp, 0xa0 (rbp set after more bytes).
        let osr11 = [
            0x50, 0x48, 0x8b, 0x45, 0x00, 0x50, 0x48, 0x81, 0xec, 0xa0, 0x00, 0x00, 0x00, 0x4c,
            0x89, 0xbc,
        ];
        assert_eq!(frameless_prologue(&osr11), None);
        // Callee-saved pushes then sub rsp, imm8 / imm32.
        let small = [0x53, 0x48, 0x83, 0xec, 0x20, 0x8b];
        assert_eq!(frameless_prologue(&small), Some((0x28, 5)));
        let large = [
            0x41, 0x57, 0x41, 0x56, 0x48, 0x81, 0xec, 0x00, 0x01, 0x00, 0x00, 0x90,
        ];
        assert_eq!(frameless_prologue(&large), Some((16 + 256, 11)));
        // Nothing recognized, or too short to tell: not frameless.
        assert_eq!(frameless_prologue(&[0x8b, 0x47, 0x08, 0xc3]), None);
        assert_eq!(frameless_prologue(&[0x53]), None);
        assert_eq!(frameless_prologue(&[]), None);
    }

    #[test]
    fn the_frameless_table_answers_the_range_holding_an_address() {
        let _table = TABLE_IN_TEST.lock().unwrap_or_else(|e| e.into_inner());
        publish_frameless(&[(0x1000, 0x1100, 8, 1), (0x2000, 0x2040, 0x28, 5)]);
        assert_eq!(frameless_at(0x1000), Some((8, 0x1000, 1)));
        assert_eq!(frameless_at(0x10ff), Some((8, 0x1000, 1)));
        assert_eq!(frameless_at(0x1100), None);
        assert_eq!(frameless_at(0x0fff), None);
        assert_eq!(frameless_at(0x2020), Some((0x28, 0x2000, 5)));
        // Published again: the other copy, the new contents.
        publish_frameless(&[(0x3000, 0x3010, 0, 0)]);
        assert_eq!(frameless_at(0x1000), None);
        assert_eq!(frameless_at(0x3008), Some((0, 0x3000, 0)));
        publish_frameless(&[]);
    }
}
