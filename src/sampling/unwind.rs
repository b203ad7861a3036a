//! Unwinding native frames without a frame pointer by their DWARF call
//! frame information, inside the signal handler (async-signal-safe: no
//! allocation, no lock, no library call).
//!
//! glibc is built without frame pointers: a thread blocked in
//! `__futex_abstimed_wait_common` (measured on Debian 12's glibc 2.36,
//! `libc.so.6+0x85f16`) holds 0 in `rbp`, and a frame-pointer walk from
//! there ends at the leaf. The loaded libraries' `.eh_frame_hdr` (the
//! binary search table the linker writes, `PT_GNU_EH_FRAME`) gives each
//! function's FDE; executing its CFA program up to the address gives the
//! canonical frame address, the return address and the caller's frame
//! pointer. Formats: the LSB's "Exception Frames" chapter (`.eh_frame`,
//! `.eh_frame_hdr`, pointer encodings) and DWARF 4 section 6.4 (call frame
//! instructions).
//!
//! The sampler thread lists the modules ([`refresh`], `dl_iterate_phdr`,
//! not async-signal-safe) into a fixed table, sorted by address, that the
//! handler searches by bisection under a sequence number. A module unloaded (`dlclose`) between a refresh and a
//! sample would leave a stale entry: CoreCLR does not unload native
//! libraries; an application that does is not covered.
//!
//! Only the common forms are understood (the `.eh_frame_hdr` table encoded
//! `DW_EH_PE_datarel | DW_EH_PE_sdata4`, CFA rules `register + offset`,
//! `offset(N)` register rules); anything else (expressions, `set_loc`)
//! makes the step fall back to the frame-pointer chain, and so does an
//! operand whose arithmetic would overflow (checked: the file denies
//! `clippy::arithmetic_side_effects`, `indexing_slicing` and `panic`).

use alloc::vec::Vec;
use core::sync::atomic::{AtomicU32, AtomicUsize, Ordering};

use super::cfi::{reg, rules, Rule};

/// Most modules the table holds.
pub(super) const MAX_MODULES: usize = 512;

struct Module {
    /// An executable segment: `[start, end)`.
    start: AtomicUsize,
    end: AtomicUsize,
    /// Its object's `.eh_frame_hdr`.
    hdr: AtomicUsize,
}

#[allow(clippy::declare_interior_mutable_const)]
const EMPTY: Module = Module {
    start: AtomicUsize::new(0),
    end: AtomicUsize::new(0),
    hdr: AtomicUsize::new(0),
};

static MODULES: [Module; MAX_MODULES] = [EMPTY; MAX_MODULES];
static COUNT: AtomicUsize = AtomicUsize::new(0);
/// Odd while the table is being rewritten.
static SEQ: AtomicU32 = AtomicU32::new(0);

/// Fills the table with `modules` (executable range, `.eh_frame_hdr`),
/// sorted by start and non-overlapping, as the handler's binary search
/// needs (the sampler thread; one writer at a time).
pub(super) fn publish(modules: &[(usize, usize, usize)]) {
    let seq = SEQ.load(Ordering::Relaxed);
    SEQ.store(seq.wrapping_add(1), Ordering::Relaxed);
    core::sync::atomic::fence(Ordering::Release);
    let n = modules.len().min(MAX_MODULES);
    for (slot, &(start, end, hdr)) in MODULES.iter().zip(modules) {
        slot.start.store(start, Ordering::Relaxed);
        slot.end.store(end, Ordering::Relaxed);
        slot.hdr.store(hdr, Ordering::Relaxed);
    }
    COUNT.store(n, Ordering::Relaxed);
    SEQ.store(seq.wrapping_add(2), Ordering::Release);
}

/// The `.eh_frame_hdr` of the module whose code holds `ip` (a binary
/// search of the table [`publish`] sorted; async-signal-safe).
fn hdr_for(ip: usize) -> Option<usize> {
    let seq = SEQ.load(Ordering::Acquire);
    if seq & 1 == 1 {
        return None;
    }
    let n = COUNT.load(Ordering::Relaxed).min(MAX_MODULES);
    let modules = MODULES.get(..n).unwrap_or(&[]);
    // The last module starting at or before ip (a table torn by a writer
    // gives some index in range, and the sequence check drops the answer).
    let after = modules.partition_point(|m| m.start.load(Ordering::Relaxed) <= ip);
    let found = after
        .checked_sub(1)
        .and_then(|i| modules.get(i))
        .filter(|m| ip < m.end.load(Ordering::Relaxed))
        .map(|m| m.hdr.load(Ordering::Relaxed));
    core::sync::atomic::fence(Ordering::Acquire);
    if SEQ.load(Ordering::Relaxed) != seq {
        return None;
    }
    found.filter(|&h| h != 0)
}

/// One frame: the instruction pointer, stack pointer and frame pointer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Frame {
    pub(super) ip: usize,
    pub(super) sp: usize,
    pub(super) fp: usize,
}

/// The caller of `frame` by its module's call frame information (looked
/// up at `lookup`: the IP, or a return address minus one), reading the
/// stack only in `[max(frame.sp, low), high)`; `lr` is AArch64's link register for
/// the interrupted leaf (0 otherwise). [`Step::NoCfi`] when the address has
/// no usable CFI (the walk then uses the frame record).
///
/// # Safety
/// `[max(frame.sp, low), high)` is readable (the calling thread's stack
/// above its SP).
pub(super) unsafe fn cfi_step(
    frame: Frame,
    lookup: usize,
    lr: usize,
    (low, high): (usize, usize),
) -> Step {
    let floor = frame.sp.max(low);
    let Some(hdr) = hdr_for(lookup) else {
        return Step::NoCfi;
    };
    // SAFETY: a module listed by dl_iterate_phdr, still loaded (see the
    // module docs).
    let Some(rules) = (unsafe { rules(hdr, lookup) }) else {
        return Step::NoCfi;
    };
    let base = match rules.cfa_reg {
        r if r == reg::SP => frame.sp,
        r if r == reg::FP => frame.fp,
        _ => return Step::NoCfi,
    };
    let cfa = (base as i64).wrapping_add(rules.cfa_off) as usize;
    if cfa < floor || cfa > high {
        return Step::Bounds;
    }
    let read = |off: i64| -> Option<usize> {
        let at = (cfa as i64).wrapping_add(off) as usize;
        if at < floor || at % 8 != 0 || at.checked_add(8)? > high {
            return None;
        }
        // SAFETY: an aligned word inside [sp, high) (contract).
        Some(unsafe { core::ptr::read_volatile(at as *const usize) })
    };
    let ip = match rules.ra {
        Rule::Undefined => return Step::End,
        Rule::Saved(off) => match read(off) {
            Some(ip) => ip,
            None => return Step::Bounds,
        },
        Rule::Same if lr != 0 => lr,
        Rule::Same => return Step::NoCfi,
    };
    let fp = match rules.fp {
        Rule::Saved(off) => match read(off) {
            Some(fp) => fp,
            None => return Step::Bounds,
        },
        _ => frame.fp,
    };
    if ip == 0 {
        return Step::End;
    }
    Step::Caller(Frame {
        ip: strip(ip),
        sp: cfa,
        fp,
    })
}

/// A return address without AArch64 pointer-authentication bits (user
/// space addresses are below 2^48).
fn strip(ip: usize) -> usize {
    #[cfg(target_arch = "aarch64")]
    {
        const USER: usize = (1 << 48) - 1;
        ip & USER
    }
    #[cfg(not(target_arch = "aarch64"))]
    {
        ip
    }
}

/// What a CFI step found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Step {
    /// The caller's frame.
    Caller(Frame),
    /// The outermost frame (return address undefined or null).
    End,
    /// A read that would leave the stack.
    Bounds,
    /// No usable CFI for this address.
    NoCfi,
}

/// Lists the loaded modules' executable segments and `.eh_frame_hdr`s
/// (`dl_iterate_phdr`; the sampler thread, never a handler) and publishes
/// them. Returns how many segments were listed.
#[cfg(all(
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64")
))]
pub(super) fn refresh() -> usize {
    use core::ffi::{c_int, c_void};

    /// `struct dl_phdr_info` (`link.h`), the fields used.
    #[repr(C)]
    struct DlPhdrInfo {
        addr: usize,
        name: *const u8,
        phdr: *const Phdr,
        phnum: u16,
    }
    /// `Elf64_Phdr` (`elf.h`).
    #[repr(C)]
    struct Phdr {
        p_type: u32,
        p_flags: u32,
        p_offset: u64,
        p_vaddr: u64,
        p_paddr: u64,
        p_filesz: u64,
        p_memsz: u64,
        p_align: u64,
    }
    const PT_LOAD: u32 = 1;
    const PT_GNU_EH_FRAME: u32 = 0x6474_e550;
    const PF_X: u32 = 1;
    extern "C" {
        fn dl_iterate_phdr(
            callback: extern "C" fn(*mut DlPhdrInfo, usize, *mut c_void) -> c_int,
            data: *mut c_void,
        ) -> c_int;
    }
    extern "C" fn each(info: *mut DlPhdrInfo, _size: usize, data: *mut c_void) -> c_int {
        // SAFETY: the loader's info for one object, and our Vec.
        let (info, out) = unsafe { (&*info, &mut *data.cast::<Vec<(usize, usize, usize)>>()) };
        // SAFETY: phnum program headers at phdr.
        let phdrs = unsafe { core::slice::from_raw_parts(info.phdr, usize::from(info.phnum)) };
        let hdr = phdrs
            .iter()
            .find(|p| p.p_type == PT_GNU_EH_FRAME)
            .map_or(0, |p| info.addr.wrapping_add(p.p_vaddr as usize));
        if hdr == 0 {
            return 0;
        }
        for p in phdrs
            .iter()
            .filter(|p| p.p_type == PT_LOAD && p.p_flags & PF_X != 0)
        {
            let start = info.addr.wrapping_add(p.p_vaddr as usize);
            out.push((start, start.wrapping_add(p.p_memsz as usize), hdr));
        }
        0
    }
    let mut modules: Vec<(usize, usize, usize)> = Vec::new();
    // SAFETY: a callback of the right type and a pointer to our Vec, used
    // only during the call.
    unsafe { dl_iterate_phdr(each, (&mut modules as *mut Vec<_>).cast()) };
    // Sorted for the handler's binary search.
    modules.sort_unstable_by_key(|&(start, _, _)| start);
    publish(&modules);
    modules.len()
}

#[cfg(not(all(
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64")
)))]
pub(super) fn refresh() -> usize {
    0
}

#[cfg(test)]
#[allow(
    clippy::arithmetic_side_effects,
    clippy::indexing_slicing,
    clippy::panic
)]
mod tests {
    use super::*;
    use crate::sampling::frameless::TABLE_IN_TEST;

    /// each address in the module whose range holds it, none in the gaps.
    /// The handler finds a module by binary search of the sorted table:
    #[test]
    fn the_module_table_answers_the_module_holding_an_address() {
        let _table = TABLE_IN_TEST.lock().unwrap_or_else(|e| e.into_inner());
        // Above user space (2^63): no walk of another test meets them
        // (the frame-record walks of signal.rs's tests do not hold the
        // lock).
        let base = 1usize << 63;
        let modules: Vec<(usize, usize, usize)> = (0..MAX_MODULES + 8)
            .map(|i| {
                let start = base + 0x10_000 * (i + 1);
                (start, start + 0x800, 0xa000 + i)
            })
            .collect();
        publish(&modules);
        // Only MAX_MODULES are published.
        for (i, &(start, end, hdr)) in modules.iter().enumerate() {
            let expected = (i < MAX_MODULES).then_some(hdr);
            assert_eq!(hdr_for(start), expected, "{i}");
            assert_eq!(hdr_for(end - 1), expected, "{i}");
            assert_eq!(hdr_for(end), None, "{i}");
            assert_eq!(hdr_for(start - 1), None, "{i}");
        }
        assert_eq!(hdr_for(0), None);
        assert_eq!(hdr_for(usize::MAX), None);
        // The process's own modules again, for the other tests.
        assert!(refresh() > 0 || !cfg!(target_os = "linux"));
    }
}
