//! Signal mode's walk (`signal.rs`): a stack walked from an interrupted
//! context, by the loaded modules' call frame information (`unwind.rs`)
//! or the frame records of JIT-compiled code. Runs inside the signal
//! handler: the file is compiled under
//! `deny(clippy::arithmetic_side_effects, clippy::indexing_slicing,
//! clippy::panic)` (`signal_path!` in `mod.rs`).

use super::frameless;
use super::unwind;

/// Why a walk ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum WalkEnd {
    /// A null frame pointer: the outermost frame.
    Complete,
    /// A frame pointer outside `[sp, high)`, not above the previous one,
    /// or misaligned.
    Bounds,
    /// `MAX_DEPTH` (the output's length) reached.
    Depth,
}

/// Walks a stack from an interrupted context: `out[0]` is `ip`, then one
/// return address per frame. A frame whose code is in a loaded module with
/// call frame information (`unwind.rs`: glibc, CoreCLR) is stepped by it;
/// any other (JIT-compiled code) by its frame record (`[fp]` the caller's
/// frame pointer, `[fp + 8]` the return address: x86-64's `push rbp; mov
/// rbp, rsp`, AArch64's `stp x29, x30`). Reads only 8-byte aligned words of
/// `[max(sp, low), high)`, each frame strictly above the one before, at
/// most `out.len()` frames. `lr` is AArch64's link register (0 elsewhere).
/// Returns the frames written and why it stopped.
///
/// # Safety
/// Every aligned address in `[max(sp, low), high)` is readable for the
/// duration of the call (the calling thread's own stack).
pub(super) unsafe fn walk(
    ip: usize,
    sp: usize,
    fp: usize,
    lr: usize,
    (low, high): (usize, usize),
    out: &mut [usize],
) -> (usize, WalkEnd) {
    let Some(first) = out.first_mut() else {
        return (0, WalkEnd::Depth);
    };
    *first = ip;
    // An interrupted SP outside the thread's stack (an alternate signal
    // stack: CoreCLR's SIGSEGV handler, a fiber): nothing above it is known
    // to be mapped. Only the leaf.
    if !(low..high).contains(&sp) {
        return (1, WalkEnd::Bounds);
    }
    let mut depth = 1;
    let mut frame = unwind::Frame { ip, sp, fp };
    // After a frame-record step the caller's SP is known on x86-64 (the
    // record sits right below the return address) but not on AArch64.
    let mut sp_known = true;
    // Whether the current frame was reached by a frame-record step (the
    // only step an OSR frame's record can mislead).
    let mut by_record = false;
    loop {
        let leaf = depth == 1;
        let lookup = if leaf {
            frame.ip
        } else {
            frame.ip.wrapping_sub(1)
        };
        let step = if sp_known && frame.sp >= low {
            // SAFETY: [frame.sp, high) is inside the readable range.
            unsafe { unwind::cfi_step(frame, lookup, if leaf { lr } else { 0 }, (low, high)) }
        } else {
            unwind::Step::NoCfi
        };
        // Set again by the frame-record steps below.
        let reached_by_record = core::mem::replace(&mut by_record, false);
        let next = match step {
            unwind::Step::Caller(next) if next.sp > frame.sp => next,
            // AArch64: an interrupted function that has not pushed a frame
            // (a leaf such as glibc's `memset`, or any function at its
            // first instruction or after its epilogue) has its CFA at SP
            // and its return address still in the link register: its
            // caller's SP is its own. Only the leaf's step may stay level
            // (`lr` is 0 for the others, whose return address is read from
            // the stack above SP), so the walk still only goes up.
            unwind::Step::Caller(next) if leaf && lr != 0 && next.sp == frame.sp => next,
            unwind::Step::Caller(_) | unwind::Step::Bounds => return (depth, WalkEnd::Bounds),
            unwind::Step::End => return (depth, WalkEnd::Complete),
            unwind::Step::NoCfi if sp_known && cfg!(target_arch = "x86_64") => {
                let found = frameless::frameless_at(lookup);
                // Tier-0 code under an OSR frame, reached by that frame's
                // record (up to .NET 10), or the OSR code's own first byte
                // that .NET 11 puts in that record: the tier-0 frame's own
                // record leads to the real caller, which stands in its
                // place.
                let osr_record = matches!(found, Some((frameless::OSR_ORIGIN, _, _)))
                    || matches!(
                        frameless::frameless_at(frame.ip),
                        Some((frameless::OSR_ENTRY, start, _)) if start == frame.ip
                    );
                if reached_by_record && osr_record {
                    // SAFETY: [frame.sp, high) is inside the readable range
                    // (the walk's contract; frames only go up).
                    if let Some(caller) = unsafe { tier0_caller(frame, high) } {
                        // depth >= 1: the slot of the current frame.
                        if let Some(slot) = out.get_mut(depth.wrapping_sub(1)) {
                            *slot = caller.ip;
                        }
                        frame = caller;
                        continue;
                    }
                }
                // Managed code the sampler thread found frameless (no
                // frame pointer): its caller's return address sits right
                // above its frame, and rbp is still the caller's.
                match found {
                    Some((size, start, prologue))
                        if size != frameless::OSR_ORIGIN
                            && size != frameless::OSR_ENTRY
                            && (!leaf || frame.ip >= start.saturating_add(prologue)) =>
                    {
                        let at = frame.sp.wrapping_add(size);
                        let top_ok = matches!(at.checked_add(8), Some(end) if end <= high);
                        if at < frame.sp.max(low) || at % 8 != 0 || !top_ok {
                            return (depth, WalkEnd::Bounds);
                        }
                        // SAFETY: an aligned word inside [sp, high).
                        let ret = unsafe { core::ptr::read_volatile(at as *const usize) };
                        if ret == 0 {
                            return (depth, WalkEnd::Complete);
                        }
                        unwind::Frame {
                            ip: ret,
                            // at + 8 <= high: checked above.
                            sp: at.wrapping_add(8),
                            fp: frame.fp,
                        }
                    }
                    // SAFETY: the walk's contract.
                    _ => match unsafe { frame_record_step(frame, low, high) } {
                        Ok((next, known)) => {
                            sp_known = known;
                            by_record = true;
                            next
                        }
                        Err(end) => return (depth, end),
                    },
                }
            }
            // SAFETY: the walk's contract.
            unwind::Step::NoCfi => match unsafe { frame_record_step(frame, low, high) } {
                Ok((next, known)) => {
                    sp_known = known;
                    by_record = true;
                    next
                }
                Err(end) => return (depth, end),
            },
        };
        let Some(slot) = out.get_mut(depth) else {
            return (depth, WalkEnd::Depth);
        };
        *slot = next.ip;
        // depth < out.len(): no overflow.
        depth = depth.wrapping_add(1);
        frame = next;
    }
}

/// One step by the frame record at `frame.fp`: the caller's frame and
/// whether its SP is known (x86-64: the record sits right below the return
/// address).
///
/// # Safety
/// Every aligned address in `[max(frame.sp, low), high)` is readable (the
/// walk's contract).
unsafe fn frame_record_step(
    frame: unwind::Frame,
    low: usize,
    high: usize,
) -> Result<(unwind::Frame, bool), WalkEnd> {
    let fp = frame.fp;
    if fp == 0 {
        return Err(WalkEnd::Complete);
    }
    let floor = frame.sp.max(low);
    let top_ok = matches!(fp.checked_add(16), Some(end) if end <= high);
    if fp < floor || fp % 8 != 0 || !top_ok {
        return Err(WalkEnd::Bounds);
    }
    // SAFETY: fp and fp + 8 are aligned words inside [floor, high),
    // readable by this function's contract.
    let (next_fp, ret) = unsafe {
        (
            core::ptr::read_volatile(fp as *const usize),
            core::ptr::read_volatile(fp.wrapping_add(8) as *const usize),
        )
    };
    if ret == 0 {
        return Err(WalkEnd::Complete);
    }
    Ok((
        unwind::Frame {
            ip: ret,
            // fp + 16 <= high: checked above.
            sp: fp.wrapping_add(16),
            fp: next_fp,
        },
        cfg!(target_arch = "x86_64"),
    ))
}

/// The most bytes of a tier-0 frame [`tier0_caller`] looks through.
const MAX_TIER0_FRAME: usize = 4096;

/// x86-64, .NET 7 and later: a method compiled again by OSR (on-stack
/// replacement) runs on top of its tier-0 frame, which stays on the stack.
/// The OSR code's prologue (`mov rax, [rbp]; push rax; mov rbp, rsp`)
/// copies the tier-0 frame's saved frame pointer (the caller's) into a
/// record of its own whose return address is the tier-0 code's call of the
/// patchpoint helper (dotnet/runtime, docs/design/features/
/// OSRX64EpilogRedesign.md). A frame-record step from an OSR frame thus
/// lands on `frame`: an address in the tier-0 code with the caller's frame
/// pointer, and the step after it would skip the caller. The walk calls
/// this when `frame.ip` is in a tier-0 code range the sampler thread saw
/// under the same method's OSR code (`frameless::OSR_ORIGIN`): the tier-0
/// frame's own record is found by its content, the first word above
/// `frame.sp` and below the caller's frame that holds the caller's frame
/// pointer; the word above it is the return address into the caller.
/// .NET 11 lays the OSR frame out otherwise (measured on 11.0.0: the OSR
/// code begins `push rax; mov rax, [rbp]; push rax`, and the word the first
/// push leaves is the OSR code's own address): the record's return address
/// is the OSR code's first byte, which no call returns to. The sampler thread
/// publishes that byte (`frameless::OSR_ENTRY`, found by
/// `Resolver::return_address`) and the walk calls this there too.
/// Returns the caller's frame, or `None` (no such word within
/// `MAX_TIER0_FRAME` bytes).
///
/// # Safety
/// Every aligned word of `[frame.sp, high)` is readable.
unsafe fn tier0_caller(frame: unwind::Frame, high: usize) -> Option<unwind::Frame> {
    let end = frame
        .fp
        .min(high)
        .min(frame.sp.saturating_add(MAX_TIER0_FRAME));
    let mut at = frame.sp;
    while at % 8 == 0 && at.saturating_add(16) <= end {
        // SAFETY: aligned words inside [frame.sp, high) (contract).
        let word = unsafe { core::ptr::read_volatile(at as *const usize) };
        if word == frame.fp {
            // SAFETY: as above (at + 16 <= high).
            let ret = unsafe { core::ptr::read_volatile(at.wrapping_add(8) as *const usize) };
            return (ret != 0).then_some(unwind::Frame {
                ip: ret,
                // at + 16 <= end: no overflow.
                sp: at.wrapping_add(16),
                fp: frame.fp,
            });
        }
        at = at.wrapping_add(8);
    }
    None
}

/// Lists the loaded modules' unwind tables for the handler (the sampler
/// thread).
pub(super) fn refresh_modules() {
    unwind::refresh();
}

#[cfg(test)]
#[allow(
    clippy::arithmetic_side_effects,
    clippy::indexing_slicing,
    clippy::panic
)]
mod tests {
    use super::*;
    use alloc::vec;
    use alloc::vec::Vec;
    use core::sync::atomic::Ordering;

    /// A stack of `words` words whose frame records are laid out by
    /// `records` (pairs of word index of saved fp (or 0) and return
    /// address), as a walk finds them.
    fn stack(words: usize) -> Vec<usize> {
        vec![0usize; words]
    }

    fn addr(stack: &[usize], word: usize) -> usize {
        stack.as_ptr() as usize + word * 8
    }

    #[test]
    fn a_chain_is_walked_to_its_null_frame_pointer() {
        let mut s = stack(64);
        // Frames at words 4, 10, 20; the outermost has a null saved fp.
        let (f1, f2, f3) = (addr(&s, 4), addr(&s, 10), addr(&s, 20));
        s[4] = f2;
        s[5] = 0x1111;
        s[10] = f3;
        s[11] = 0x2222;
        s[20] = 0;
        s[21] = 0x3333;
        let (low, high) = (addr(&s, 0), addr(&s, 64));
        let mut out = [0usize; 16];
        // SAFETY: the walk reads only inside `s`.
        let (n, end) = unsafe { walk(0xAAAA, addr(&s, 2), f1, 0, (low, high), &mut out) };
        assert_eq!(end, WalkEnd::Complete);
        assert_eq!(&out[..n], &[0xAAAA, 0x1111, 0x2222, 0x3333]);
    }

    #[test]
    fn a_frame_pointer_out_of_bounds_backwards_or_misaligned_stops_the_walk() {
        let mut s = stack(64);
        let (low, high) = (addr(&s, 0), addr(&s, 64));
        let mut out = [0usize; 16];
        // Out of the stack entirely (a general register's garbage).
        // SAFETY: nothing outside `s` is read: the check comes first.
        let r = unsafe { walk(1, low, 0x10, 0, (low, high), &mut out) };
        assert_eq!(r, (1, WalkEnd::Bounds));
        // Below the interrupted SP (a dead frame).
        // SAFETY: as above.
        let r = unsafe { walk(1, addr(&s, 30), addr(&s, 10), 0, (low, high), &mut out) };
        assert_eq!(r, (1, WalkEnd::Bounds));
        // An interrupted SP outside the stack (an alternate signal
        // stack): not walked at all, however good the frame pointer looks.
        s[10] = 0;
        s[11] = 0x99;
        // SAFETY: as above.
        let r = unsafe { walk(1, low - 4096, addr(&s, 10), 0, (low, high), &mut out) };
        assert_eq!(r, (1, WalkEnd::Bounds));
        // SAFETY: as above.
        let r = unsafe { walk(1, high, addr(&s, 10), 0, (low, high), &mut out) };
        assert_eq!(r, (1, WalkEnd::Bounds));
        // Misaligned.
        // SAFETY: as above.
        let r = unsafe { walk(1, low, addr(&s, 10) + 4, 0, (low, high), &mut out) };
        assert_eq!(r, (1, WalkEnd::Bounds));
        // The last record straddling the top.
        // SAFETY: as above.
        let r = unsafe { walk(1, low, addr(&s, 63), 0, (low, high), &mut out) };
        assert_eq!(r, (1, WalkEnd::Bounds));
        // A loop (a record pointing at itself or down): one frame, then cut.
        let f = addr(&s, 8);
        s[8] = f;
        s[9] = 0x77;
        // SAFETY: as above.
        let r = unsafe { walk(1, low, f, 0, (low, high), &mut out) };
        assert_eq!(r, (2, WalkEnd::Bounds));
        assert_eq!(&out[..2], &[1, 0x77]);
        s[8] = addr(&s, 4);
        // SAFETY: as above.
        let r = unsafe { walk(1, low, f, 0, (low, high), &mut out) };
        assert_eq!(r, (2, WalkEnd::Bounds));
    }

    /// .NET 7+ OSR on x86-64: the OSR frame's record copies the tier-0
    /// frame's saved frame pointer and names the tier-0 code as its
    /// caller. Once the tier-0 code's range is published as
    /// `OSR_ORIGIN`, the walk finds the tier-0 frame's own record and
    /// goes on to the real caller instead of skipping it; a tier-0 frame
    /// of the same code called normally is walked as before. (AArch64's
    /// OSR frames are laid out otherwise: not handled there.)
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn an_osr_frame_is_walked_past_its_tier0_frame_to_the_caller() {
        let _table = frameless::TABLE_IN_TEST
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        let (osr, tier0, caller, outer) = (0x9000_0100, 0x9100_0010, 0x9200_0020, 0x9300_0030);
        let mut s = stack(64);
        let caller_fp = addr(&s, 30);
        // The OSR frame's record at word 4: the copy, and the tier-0 code.
        s[4] = caller_fp;
        s[5] = tier0;
        // The tier-0 frame: locals (words 6-13), then its record at 14.
        for (i, word) in s.iter_mut().enumerate().take(14).skip(6) {
            *word = 0x5000 + i;
        }
        s[14] = caller_fp;
        s[15] = caller;
        // The caller's record, the outermost.
        s[30] = 0;
        s[31] = outer;
        let (low, high) = (addr(&s, 0), addr(&s, 64));
        let mut out = [0usize; 16];
        // Before the sampler thread saw the OSR frame: the tier-0 code
        // stands for the caller, which is skipped.
        frameless::publish_frameless(&[]);
        // SAFETY: the walk reads only inside `s`.
        let (n, _) = unsafe { walk(osr, addr(&s, 2), addr(&s, 4), 0, (low, high), &mut out) };
        assert_eq!(&out[..n], &[osr, tier0, outer]);
        frameless::publish_frameless(&[(0x9100_0000, 0x9100_1000, frameless::OSR_ORIGIN, 0)]);
        // SAFETY: as above.
        let (n, end) = unsafe { walk(osr, addr(&s, 2), addr(&s, 4), 0, (low, high), &mut out) };
        assert_eq!(end, WalkEnd::Complete);
        assert_eq!(&out[..n], &[osr, caller, outer]);
        // The same tier-0 code called normally (its frame pointer at word
        // 14): no word of its frame holds its own frame pointer.
        s[4] = addr(&s, 14);
        // SAFETY: as above.
        let (n, _) = unsafe {
            walk(
                0x9400_0000,
                addr(&s, 2),
                addr(&s, 4),
                0,
                (low, high),
                &mut out,
            )
        };
        assert_eq!(&out[..n], &[0x9400_0000, tier0, caller, outer]);
        // A frameless-looking entry is never used as a frame size.
        // SAFETY: as above.
        let (n, _) = unsafe {
            walk(
                tier0 + 1,
                addr(&s, 12),
                addr(&s, 14),
                0,
                (low, high),
                &mut out,
            )
        };
        assert_eq!(&out[..n], &[tier0 + 1, caller, outer]);
        frameless::publish_frameless(&[]);
    }

    /// .NET 11 OSR on x86-64: the OSR code pushes a pseudo return address,
    /// its own first byte, and a copy of the tier-0 frame's saved frame
    /// pointer: its record names the OSR code's entry as its caller. Once
    /// that byte is published as `OSR_ENTRY`, the walk finds the tier-0
    /// frame's own record and goes on to the real caller; an address one
    /// byte further is not the entry and is walked as before.
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn an_osr_frame_naming_its_own_entry_is_walked_to_the_caller() {
        let _table = frameless::TABLE_IN_TEST
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        let (osr_entry, inside, caller, outer) =
            (0x9500_0000, 0x9500_0120, 0x9600_0020, 0x9700_0030);
        let mut s = stack(64);
        let caller_fp = addr(&s, 30);
        // The OSR frame's record at word 4: the copy, and the pseudo
        // return address.
        s[4] = caller_fp;
        s[5] = osr_entry;
        // The tier-0 frame: locals (words 6-15), then its record at 16.
        for (i, word) in s.iter_mut().enumerate().take(16).skip(6) {
            *word = 0x5000 + i;
        }
        s[16] = caller_fp;
        s[17] = caller;
        s[30] = 0;
        s[31] = outer;
        let (low, high) = (addr(&s, 0), addr(&s, 64));
        let mut out = [0usize; 16];
        // Unknown: the entry stands for the caller, which is skipped.
        frameless::publish_frameless(&[]);
        // SAFETY: the walk reads only inside `s`.
        let (n, _) = unsafe { walk(inside, addr(&s, 2), addr(&s, 4), 0, (low, high), &mut out) };
        assert_eq!(&out[..n], &[inside, osr_entry, outer]);
        // Published: the caller.
        frameless::publish_frameless(&[(osr_entry, osr_entry + 1, frameless::OSR_ENTRY, 0)]);
        // SAFETY: as above.
        let (n, end) = unsafe { walk(inside, addr(&s, 2), addr(&s, 4), 0, (low, high), &mut out) };
        assert_eq!(end, WalkEnd::Complete);
        assert_eq!(&out[..n], &[inside, caller, outer]);
        // A record naming the byte after the entry: an ordinary frame.
        s[5] = osr_entry + 1;
        // SAFETY: as above.
        let (n, _) = unsafe { walk(inside, addr(&s, 2), addr(&s, 4), 0, (low, high), &mut out) };
        assert_eq!(&out[..n], &[inside, osr_entry + 1, outer]);
        frameless::publish_frameless(&[]);
    }

    #[test]
    fn the_depth_limit_cuts_a_deep_chain() {
        let mut s = stack(256);
        for i in 0..100 {
            s[2 * i] = addr(&s, 2 * i + 2);
            s[2 * i + 1] = 0x1000 + i;
        }
        let (low, high) = (addr(&s, 0), addr(&s, 256));
        let mut out = [0usize; 10];
        // SAFETY: reads inside `s` only.
        let (n, end) = unsafe { walk(9, low, low, 0, (low, high), &mut out) };
        assert_eq!((n, end), (10, WalkEnd::Depth));
        assert_eq!(out[9], 0x1000 + 8);
    }

    /// The frames the walking handler of [`walk_in_a_handler`] saw, and
    /// the thread's stack bounds it walks inside.
    #[cfg(all(
        target_os = "linux",
        any(target_arch = "x86_64", target_arch = "aarch64")
    ))]
    mod seen {
        use core::sync::atomic::AtomicUsize;
        pub(super) static LOW: AtomicUsize = AtomicUsize::new(0);
        pub(super) static HIGH: AtomicUsize = AtomicUsize::new(0);
        pub(super) static DEPTH: AtomicUsize = AtomicUsize::new(0);
        pub(super) static IPS: [AtomicUsize; 64] = [const { AtomicUsize::new(0) }; 64];
    }

    /// Runs `work` on a thread of its own (given a flag it may poll to
    /// stop), interrupts it with a signal whose handler walks its stack
    /// until the walk holds a return address into `marker` (a function's
    /// first 256 bytes: the caller the walk must reach) or 20 tries
    /// passed, then sets the flag, and returns the last walk's frames.
    /// Holds `TABLE_IN_TEST` (the module table is the process's).
    #[cfg(all(
        target_os = "linux",
        any(target_arch = "x86_64", target_arch = "aarch64")
    ))]
    fn walk_in_a_handler(
        marker: usize,
        work: fn(&'static std::sync::atomic::AtomicUsize),
    ) -> Vec<usize> {
        let _table = frameless::TABLE_IN_TEST
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        use crate::sampling::unix;
        use core::ffi::{c_int, c_void};
        use seen::{DEPTH, HIGH, IPS, LOW};
        use std::sync::atomic::AtomicUsize;
        // A real-time signal no other test of this binary uses (SIGUSR1
        // and SIGUSR2 are unix.rs's tests').
        const SIGNAL: c_int = 40;
        static STOP: AtomicUsize = AtomicUsize::new(0);
        extern "C" fn handler(_: c_int, _: *mut unix::siginfo_t, context: *mut c_void) {
            // SAFETY: this signal's context.
            let regs = unsafe { unix::registers(context) };
            let mut out = [0usize; 64];
            let bounds = (LOW.load(Ordering::SeqCst), HIGH.load(Ordering::SeqCst));
            // SAFETY: the bounds of this thread's own stack.
            let (n, _) = unsafe { walk(regs.ip, regs.sp, regs.fp, regs.lr, bounds, &mut out) };
            for (slot, ip) in IPS.iter().zip(&out[..n]) {
                slot.store(*ip, Ordering::SeqCst);
            }
            DEPTH.store(n, Ordering::SeqCst);
        }
        unwind::refresh();
        STOP.store(0, Ordering::SeqCst);
        let mut action = unix::sigaction_t::zeroed();
        action.sa_sigaction =
            handler as extern "C" fn(c_int, *mut unix::siginfo_t, *mut c_void) as usize;
        // As the sampler's handler (`install`): on the thread's own stack,
        // not SA_ONSTACK (the test harness's alternate stack is a few KB,
        // which a debug build's walk through the CFI interpreter, about
        // 4 KB of frames, and the kernel's signal frame overflow).
        action.sa_flags = unix::SA_SIGINFO | unix::SA_RESTART;
        let mut old = unix::sigaction_t::zeroed();
        // SAFETY: valid pointers; SIGNAL is these tests' alone.
        assert_eq!(unsafe { unix::sigaction(SIGNAL, &action, &mut old) }, 0);
        let (tx, rx) = std::sync::mpsc::channel();
        let worker = std::thread::spawn(move || {
            let (low, high) = unix::current_stack().unwrap();
            LOW.store(low, Ordering::SeqCst);
            HIGH.store(high, Ordering::SeqCst);
            tx.send(unix::gettid()).unwrap();
            work(&STOP);
        });
        let tid = rx.recv().unwrap();
        let found = |ips: &[usize]| ips[1..].iter().any(|ip| (marker..marker + 256).contains(ip));
        let mut ips = Vec::new();
        // Until the signal lands where the test wants it: retried while
        // the thread has not reached it.
        for _ in 0..20 {
            std::thread::sleep(std::time::Duration::from_millis(50));
            DEPTH.store(0, Ordering::SeqCst);
            assert!(unix::queue_to_thread(tid, SIGNAL, 0));
            while DEPTH.load(Ordering::SeqCst) == 0 {
                std::thread::yield_now();
            }
            let n = DEPTH.load(Ordering::SeqCst);
            ips = IPS[..n].iter().map(|i| i.load(Ordering::SeqCst)).collect();
            if found(&ips) {
                break;
            }
        }
        STOP.store(1, Ordering::SeqCst);
        worker.join().unwrap();
        // SAFETY: restores what was there.
        let restored = unsafe { unix::sigaction(SIGNAL, &old, core::ptr::null_mut()) };
        assert_eq!(restored, 0);
        assert!(found(&ips), "no return into {marker:#x} in {ips:#x?}");
        ips
    }

    /// A thread blocked in glibc's `nanosleep` (no frame pointer kept
    /// there, nor in this test binary's Rust code) is interrupted by a
    /// signal whose handler walks its stack: the call frame information of
    /// the loaded modules leads the walk out of glibc to the function that
    /// called `nanosleep`, and on to the thread's start.
    #[cfg(all(
        target_os = "linux",
        any(target_arch = "x86_64", target_arch = "aarch64")
    ))]
    #[test]
    fn a_thread_blocked_in_glibc_is_walked_to_its_caller() {
        use crate::sampling::unix;
        use core::ffi::c_int;
        extern "C" {
            fn nanosleep(request: *const unix::timespec, remaining: *mut unix::timespec) -> c_int;
        }
        #[inline(never)]
        fn sleep_in_glibc(_: &'static std::sync::atomic::AtomicUsize) {
            let request = unix::timespec::from_nanos(2_000_000_000);
            let mut remaining = unix::timespec::default();
            // SAFETY: valid pointers; interrupted by the test's signal.
            unsafe { nanosleep(&request, &mut remaining) };
            core::hint::black_box(&remaining);
        }
        let marker = sleep_in_glibc as fn(_) as usize;
        let ips = walk_in_a_handler(marker, sleep_in_glibc);
        // Further up: the thread's own start, a walk of several frames
        // that ended at the outermost one or the bounds.
        assert!(ips.len() >= 4, "{ips:#x?}");
    }

    // A leaf function without a frame of its own, with call frame
    // information (the assembler's): it polls the word `flag` points at
    // until it is not 0. On AArch64 its CFA is SP and its return address
    // stays in the link register, as in glibc's `memset` and CoreCLR's
    // leaf functions.
    #[cfg(all(target_os = "linux", target_arch = "aarch64"))]
    core::arch::global_asm!(
        ".text",
        ".p2align 2",
        // Global (hidden: this binary only), so that a reference from
        // another codegen unit links.
        ".globl corprof_test_frameless_leaf",
        ".hidden corprof_test_frameless_leaf",
        ".type corprof_test_frameless_leaf, %function",
        "corprof_test_frameless_leaf:",
        ".cfi_startproc",
        "2: ldar x1, [x0]",
        "cbz x1, 2b",
        "ret",
        ".cfi_endproc",
        ".size corprof_test_frameless_leaf, . - corprof_test_frameless_leaf",
    );
    #[cfg(all(target_os = "linux", target_arch = "x86_64"))]
    core::arch::global_asm!(
        ".text",
        ".p2align 4",
        // Global (hidden: this binary only), so that a reference from
        // another codegen unit links.
        ".globl corprof_test_frameless_leaf",
        ".hidden corprof_test_frameless_leaf",
        ".type corprof_test_frameless_leaf, @function",
        "corprof_test_frameless_leaf:",
        ".cfi_startproc",
        "2: pause",
        "mov rax, qword ptr [rdi]",
        "test rax, rax",
        "jz 2b",
        "ret",
        ".cfi_endproc",
        ".size corprof_test_frameless_leaf, . - corprof_test_frameless_leaf",
    );

    /// A thread interrupted in a leaf function that pushed no frame is
    /// walked to the leaf's caller and on: on AArch64 the caller's SP is
    /// the leaf's own and its return address the link register's (before
    /// this was allowed, such a walk ended at the leaf: CoreCLR's GC and
    /// allocation time, spent in leaves such as `memset`, had no managed
    /// frame on linux-arm64).
    #[cfg(all(
        target_os = "linux",
        any(target_arch = "x86_64", target_arch = "aarch64")
    ))]
    #[test]
    fn a_thread_in_a_frameless_leaf_is_walked_to_its_caller() {
        extern "C" {
            fn corprof_test_frameless_leaf(flag: *const std::sync::atomic::AtomicUsize);
        }
        #[inline(never)]
        fn call_the_leaf(flag: &'static std::sync::atomic::AtomicUsize) {
            // SAFETY: the leaf reads the flag's word until it is set.
            unsafe { corprof_test_frameless_leaf(flag) };
            core::hint::black_box(flag);
        }
        let leaf = corprof_test_frameless_leaf as unsafe extern "C" fn(_) as usize;
        let marker = call_the_leaf as fn(_) as usize;
        let ips = walk_in_a_handler(marker, call_the_leaf);
        // The precondition: the signal landed in the leaf (its 16 bytes).
        assert!((leaf..leaf + 16).contains(&ips[0]), "{ips:#x?}");
        assert!(ips.len() >= 4, "{ips:#x?}");
    }
}
