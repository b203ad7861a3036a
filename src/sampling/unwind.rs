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

// Off Linux x86-64/AArch64 the handler, the walk and the tables are not
// built into a sampler (SamplingMode::Signal answers E_NOTIMPL there).
#![cfg_attr(
    not(all(
        target_os = "linux",
        any(target_arch = "x86_64", target_arch = "aarch64")
    )),
    allow(dead_code, unused_imports)
)]
// The handler runs this file's table lookups and CFA programs: no
// arithmetic that can overflow (a debug build would panic inside a signal
// handler), no indexing that can panic, no panic at all.
#![deny(
    clippy::arithmetic_side_effects,
    clippy::indexing_slicing,
    clippy::panic
)]

use alloc::vec::Vec;
use core::sync::atomic::{AtomicU32, AtomicUsize, Ordering};

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

/// DWARF register numbers (x86-64 psABI 3.6.2; AArch64 DWARF ABI).
#[cfg(target_arch = "x86_64")]
mod reg {
    pub(super) const FP: u64 = 6;
    pub(super) const SP: u64 = 7;
    pub(super) const RA: u64 = 16;
}
#[cfg(target_arch = "aarch64")]
mod reg {
    pub(super) const FP: u64 = 29;
    pub(super) const SP: u64 = 31;
    pub(super) const RA: u64 = 30;
}
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
mod reg {
    pub(super) const FP: u64 = u64::MAX - 1;
    pub(super) const SP: u64 = u64::MAX - 2;
    pub(super) const RA: u64 = u64::MAX - 3;
}

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

/// A bounded reader over code-adjacent unwind data.
struct Reader {
    at: usize,
    end: usize,
}

impl Reader {
    /// # Safety
    /// `[at, end)` is readable (a loaded module's unwind data).
    unsafe fn u8(&mut self) -> Option<u8> {
        if self.at >= self.end {
            return None;
        }
        // SAFETY: inside [at, end), readable by the contract.
        let b = unsafe { (self.at as *const u8).read() };
        // at < end: no overflow.
        self.at = self.at.wrapping_add(1);
        Some(b)
    }

    /// # Safety
    /// As [`Reader::u8`].
    unsafe fn bytes<const N: usize>(&mut self) -> Option<[u8; N]> {
        if self.end.saturating_sub(self.at) < N {
            return None;
        }
        let mut out = [0u8; N];
        for b in &mut out {
            // SAFETY: N bytes remain.
            *b = unsafe { self.u8() }?;
        }
        Some(out)
    }

    /// # Safety
    /// As [`Reader::u8`].
    unsafe fn uleb(&mut self) -> Option<u64> {
        let mut value = 0u64;
        for shift in (0..70).step_by(7) {
            // SAFETY: bounded by end.
            let b = unsafe { self.u8() }?;
            if shift < 64 {
                value |= u64::from(b & 0x7f).wrapping_shl(shift);
            }
            if b & 0x80 == 0 {
                return Some(value);
            }
        }
        None
    }

    /// # Safety
    /// As [`Reader::u8`].
    unsafe fn sleb(&mut self) -> Option<i64> {
        let mut value = 0i64;
        let mut shift = 0u32;
        loop {
            // SAFETY: bounded by end.
            let b = unsafe { self.u8() }?;
            if shift < 64 {
                value |= i64::from(b & 0x7f).wrapping_shl(shift);
            }
            shift = shift.wrapping_add(7);
            if b & 0x80 == 0 {
                if shift < 64 && b & 0x40 != 0 {
                    value |= (-1i64).wrapping_shl(shift);
                }
                return Some(value);
            }
            if shift > 70 {
                return None;
            }
        }
    }

    /// A pointer in encoding `enc` (`DW_EH_PE_*`: the low nibble the
    /// format, `0x10` pc-relative; `0x30` data-relative to `data`).
    ///
    /// # Safety
    /// As [`Reader::u8`].
    unsafe fn encoded(&mut self, enc: u8, data: usize) -> Option<usize> {
        if enc == 0xff {
            return None;
        }
        let field = self.at;
        // SAFETY: bounded reads.
        let raw: i64 = unsafe {
            match enc & 0x0f {
                0x00 | 0x04 | 0x0c => i64::from_le_bytes(self.bytes::<8>()?),
                0x01 => self.uleb()? as i64,
                0x02 => i64::from(u16::from_le_bytes(self.bytes::<2>()?)),
                0x03 => i64::from(u32::from_le_bytes(self.bytes::<4>()?)),
                0x09 => self.sleb()?,
                0x0a => i64::from(i16::from_le_bytes(self.bytes::<2>()?)),
                0x0b => i64::from(i32::from_le_bytes(self.bytes::<4>()?)),
                _ => return None,
            }
        };
        let base = match enc & 0x70 {
            0x00 => 0,
            0x10 => field,
            0x30 => data,
            _ => return None,
        };
        Some((base as i64).wrapping_add(raw) as usize)
    }
}

/// The rules at one address: CFA = register + offset; where the return
/// address and the frame pointer were saved (offsets from the CFA), if
/// they were.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Rules {
    pub(super) cfa_reg: u64,
    pub(super) cfa_off: i64,
    pub(super) ra: Rule,
    pub(super) fp: Rule,
}

/// Where a register of the caller is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Rule {
    /// Unchanged: still in the register (AArch64's LR in a leaf).
    Same,
    /// Saved at CFA + offset.
    Saved(i64),
    /// Undefined: for the return address, the outermost frame.
    Undefined,
}

/// Most nested `DW_CFA_remember_state`s followed.
const STATES: usize = 8;

/// The rules for `ip` from the `.eh_frame_hdr` at `hdr`; `None` when there
/// is no FDE for it or its program uses what is not understood.
///
/// # Safety
/// `hdr` is a loaded module's `.eh_frame_hdr` (and its `.eh_frame` is
/// mapped).
pub(super) unsafe fn rules(hdr: usize, ip: usize) -> Option<Rules> {
    // The header: version 1, the encodings of eh_frame_ptr, fde_count and
    // the table; then eh_frame_ptr, fde_count, the table.
    let mut r = Reader {
        at: hdr,
        end: hdr.checked_add(4)?,
    };
    // SAFETY: the header is mapped (contract).
    let (version, ptr_enc, count_enc, table_enc) = unsafe { (r.u8()?, r.u8()?, r.u8()?, r.u8()?) };
    if version != 1 || table_enc != 0x3b {
        return None;
    }
    let mut r = Reader {
        at: hdr.checked_add(4)?,
        end: hdr.checked_add(4 + 16)?,
    };
    // SAFETY: as above.
    unsafe {
        r.encoded(ptr_enc, hdr)?;
    }
    // SAFETY: as above.
    let count = unsafe { r.encoded(count_enc, hdr)? };
    let table = r.at;
    // Binary search for the last entry whose start <= ip (entries are
    // pairs of i32 relative to hdr).
    let entry = |i: usize| -> Option<(usize, usize)> {
        let at = table.checked_add(i.checked_mul(8)?)?;
        // SAFETY: i < count: inside the table the linker wrote.
        let (loc, fde) = unsafe {
            (
                (at as *const i32).read_unaligned(),
                (at.checked_add(4)? as *const i32).read_unaligned(),
            )
        };
        Some((
            (hdr as i64).wrapping_add(i64::from(loc)) as usize,
            (hdr as i64).wrapping_add(i64::from(fde)) as usize,
        ))
    };
    if count == 0 || count > (1 << 28) || entry(0)?.0 > ip {
        return None;
    }
    // lo < hi throughout: the differences do not wrap.
    let (mut lo, mut hi) = (0usize, count);
    while hi.wrapping_sub(lo) > 1 {
        let mid = lo.wrapping_add(hi.wrapping_sub(lo) >> 1);
        if entry(mid)?.0 <= ip {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    let fde = entry(lo)?.1;
    // SAFETY: the FDE the table points at, in the mapped .eh_frame.
    unsafe { fde_rules(fde, ip) }
}

/// # Safety
/// `fde` is an FDE of a mapped `.eh_frame`.
unsafe fn fde_rules(fde: usize, ip: usize) -> Option<Rules> {
    let mut r = Reader {
        at: fde,
        end: fde.checked_add(8)?,
    };
    // SAFETY: the FDE's header.
    let (length, cie_off) = unsafe {
        (
            u32::from_le_bytes(r.bytes::<4>()?),
            u32::from_le_bytes(r.bytes::<4>()?),
        )
    };
    if length == 0 || length == u32::MAX || cie_off == 0 {
        return None;
    }
    let fde_end = fde.checked_add(4)?.checked_add(length as usize)?;
    let cie = fde.checked_add(4)?.checked_sub(cie_off as usize)?;
    // The CIE.
    let mut c = Reader {
        at: cie,
        end: cie.checked_add(4)?,
    };
    // SAFETY: the CIE's length.
    let cie_len = unsafe { u32::from_le_bytes(c.bytes::<4>()?) };
    if cie_len == 0 || cie_len == u32::MAX {
        return None;
    }
    c.end = cie.checked_add(4)?.checked_add(cie_len as usize)?;
    // SAFETY: reads bounded by the CIE.
    let (code_align, data_align, ra_reg, fde_enc, has_z, cie_program) = unsafe {
        if u32::from_le_bytes(c.bytes::<4>()?) != 0 {
            return None;
        }
        let version = c.u8()?;
        let mut aug = [0u8; 8];
        let mut n = 0;
        loop {
            let b = c.u8()?;
            if b == 0 {
                break;
            }
            // More than 8 augmentation letters: not understood.
            *aug.get_mut(n)? = b;
            n = n.wrapping_add(1);
        }
        let code_align = c.uleb()?;
        let data_align = c.sleb()?;
        let ra_reg = if version == 1 {
            u64::from(c.u8()?)
        } else {
            c.uleb()?
        };
        let mut fde_enc = 0u8;
        let has_z = n > 0 && aug.first() == Some(&b'z');
        if n > 0 && !has_z {
            return None;
        }
        if has_z {
            let len = c.uleb()? as usize;
            let data_end = c.at.checked_add(len)?;
            for &ch in aug.get(1..n)? {
                match ch {
                    b'R' => fde_enc = c.u8()?,
                    b'P' => {
                        let enc = c.u8()?;
                        c.encoded(enc & 0x0f, 0)?;
                    }
                    b'L' => {
                        c.u8()?;
                    }
                    b'S' | b'B' => {}
                    _ => break,
                }
            }
            c.at = data_end;
        }
        (
            code_align,
            data_align,
            ra_reg,
            fde_enc,
            has_z,
            (c.at, c.end),
        )
    };
    if ra_reg != reg::RA {
        return None;
    }
    let mut f = Reader {
        at: fde.checked_add(8)?,
        end: fde_end,
    };
    // SAFETY: reads bounded by the FDE.
    let (begin, range) = unsafe {
        let begin = f.encoded(fde_enc, 0)?;
        let range = f.encoded(fde_enc & 0x0f, 0)?;
        if has_z {
            let len = f.uleb()? as usize;
            f.at = f.at.checked_add(len)?;
        }
        (begin, range)
    };
    if !(begin..begin.wrapping_add(range)).contains(&ip) {
        return None;
    }
    let mut state = Rules {
        cfa_reg: reg::SP,
        cfa_off: 0,
        ra: Rule::Same,
        fp: Rule::Same,
    };
    let mut cie_r = Reader {
        at: cie_program.0,
        end: cie_program.1,
    };
    let mut stack = [state; STATES];
    let mut depth = 0;
    let (ctx_code, ctx_data) = (code_align, data_align);
    // SAFETY: the CIE's instructions, bounded.
    unsafe {
        execute(
            &mut cie_r,
            &mut state,
            None,
            usize::MAX,
            &mut 0,
            (ctx_code, ctx_data),
            (&mut stack, &mut depth),
        )?;
    }
    let initial = state;
    let mut loc = begin;
    // SAFETY: the FDE's instructions, bounded.
    unsafe {
        execute(
            &mut f,
            &mut state,
            Some(&initial),
            ip,
            &mut loc,
            (ctx_code, ctx_data),
            (&mut stack, &mut depth),
        )?;
    }
    Some(state)
}

/// Runs call frame instructions while the location is `<= ip`.
///
/// # Safety
/// The reader's range is readable.
unsafe fn execute(
    r: &mut Reader,
    state: &mut Rules,
    initial: Option<&Rules>,
    ip: usize,
    loc: &mut usize,
    (code_align, data_align): (u64, i64),
    (stack, depth): (&mut [Rules; STATES], &mut usize),
) -> Option<()> {
    // Only the return address and frame pointer rules matter: the rest
    // are read and dropped.
    let set = |state: &mut Rules, register: u64, rule: Rule| {
        if register == reg::RA {
            state.ra = rule;
        } else if register == reg::FP {
            state.fp = rule;
        }
    };
    let restore = |state: &mut Rules, register: u64| {
        let Some(initial) = initial else {
            return;
        };
        if register == reg::RA {
            state.ra = initial.ra;
        } else if register == reg::FP {
            state.fp = initial.fp;
        }
    };
    while r.at < r.end {
        // SAFETY: bounded reads throughout.
        let op = unsafe { r.u8()? };
        // Whether the location passed ip; `None` when the advance
        // overflows (not a program this understands).
        let advance = |loc: &mut usize, delta: u64| -> Option<bool> {
            let delta = usize::try_from(delta.checked_mul(code_align)?).ok()?;
            *loc = loc.checked_add(delta)?;
            Some(*loc > ip)
        };
        // A factored offset: `factor * data_align`, `None` on overflow.
        let factored = |factor: i64| factor.checked_mul(data_align);
        let unsigned = |value: u64| i64::try_from(value).ok();
        match op >> 6 {
            1 => {
                if advance(loc, u64::from(op & 0x3f))? {
                    return Some(());
                }
                continue;
            }
            2 => {
                // SAFETY: bounded.
                let off = factored(unsigned(unsafe { r.uleb()? })?)?;
                set(state, u64::from(op & 0x3f), Rule::Saved(off));
                continue;
            }
            3 => {
                restore(state, u64::from(op & 0x3f));
                continue;
            }
            _ => {}
        }
        // SAFETY: bounded reads in every arm.
        unsafe {
            match op {
                0x00 => {}
                0x02 => {
                    if advance(loc, u64::from(r.u8()?))? {
                        return Some(());
                    }
                }
                0x03 => {
                    if advance(loc, u64::from(u16::from_le_bytes(r.bytes::<2>()?)))? {
                        return Some(());
                    }
                }
                0x04 => {
                    if advance(loc, u64::from(u32::from_le_bytes(r.bytes::<4>()?)))? {
                        return Some(());
                    }
                }
                0x05 => {
                    let register = r.uleb()?;
                    let off = factored(unsigned(r.uleb()?)?)?;
                    set(state, register, Rule::Saved(off));
                }
                0x06 => restore(state, r.uleb()?),
                0x07 => set(state, r.uleb()?, Rule::Undefined),
                0x08 => set(state, r.uleb()?, Rule::Same),
                0x09 => {
                    let register = r.uleb()?;
                    r.uleb()?;
                    if register == reg::RA || register == reg::FP {
                        return None;
                    }
                }
                0x0a => {
                    // More than STATES deep: not understood.
                    *stack.get_mut(*depth)? = *state;
                    *depth = depth.wrapping_add(1);
                }
                0x0b => {
                    *depth = depth.checked_sub(1)?;
                    // The CFA rule is restored with the register rules.
                    *state = *stack.get(*depth)?;
                }
                0x0c => {
                    state.cfa_reg = r.uleb()?;
                    state.cfa_off = unsigned(r.uleb()?)?;
                }
                0x0d => state.cfa_reg = r.uleb()?,
                0x0e => state.cfa_off = unsigned(r.uleb()?)?,
                0x11 => {
                    let register = r.uleb()?;
                    let off = factored(r.sleb()?)?;
                    set(state, register, Rule::Saved(off));
                }
                0x12 => {
                    state.cfa_reg = r.uleb()?;
                    state.cfa_off = factored(r.sleb()?)?;
                }
                0x13 => state.cfa_off = factored(r.sleb()?)?,
                0x2e => {
                    r.uleb()?;
                }
                0x2f => {
                    let register = r.uleb()?;
                    let off = factored(unsigned(r.uleb()?)?.checked_neg()?)?;
                    set(state, register, Rule::Saved(off));
                }
                // DW_CFA_AARCH64_negate_ra_state (pointer authentication
                // of the return address: see `strip`).
                #[cfg(target_arch = "aarch64")]
                0x2d => {}
                // set_loc, expressions, val_offset and the rest.
                _ => return None,
            }
        }
    }
    Some(())
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
    const USER: usize = (1 << 48) - 1;
    if cfg!(target_arch = "aarch64") {
        ip & USER
    } else {
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

// ---------------------------------------------------------------------------
// Frameless managed code (x86-64)
// ---------------------------------------------------------------------------

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
    use alloc::vec;

    fn uleb(mut value: u64, out: &mut Vec<u8>) {
        loop {
            let byte = (value & 0x7f) as u8;
            value >>= 7;
            if value == 0 {
                out.push(byte);
                return;
            }
            out.push(byte | 0x80);
        }
    }

    fn sleb(mut value: i64, out: &mut Vec<u8>) {
        loop {
            let byte = (value & 0x7f) as u8;
            value >>= 7;
            let done = (value == 0 && byte & 0x40 == 0) || (value == -1 && byte & 0x40 != 0);
            if done {
                out.push(byte);
                return;
            }
            out.push(byte | 0x80);
        }
    }

    /// Offsets in [`Unwind`]'s buffer: the `.eh_frame_hdr` at 0, the CIE,
    /// the FDE, and the code the FDE covers (never read: 256 bytes).
    const CIE: usize = 0x40;
    const FDE: usize = 0x100;
    const CODE: usize = 0x400;

    /// An `.eh_frame_hdr` with one entry, its CIE (`zR`, pointers absolute
    /// 8 bytes) and FDE, in a buffer of its own, as the linker lays them
    /// out (LSB "Exception Frames").
    struct Unwind {
        bytes: Vec<u64>,
    }

    impl Unwind {
        fn new(code_align: u64, data_align: i64, cie_program: &[u8], fde_program: &[u8]) -> Unwind {
            let mut bytes = vec![0u64; (CODE + 0x100) / 8];
            let base = bytes.as_mut_ptr() as usize;
            let mut buf = vec![0u8; CODE + 0x100];
            // The header: version, eh_frame_ptr pc-relative sdata4,
            // fde_count udata4, the table datarel sdata4; one entry.
            buf[..4].copy_from_slice(&[1, 0x1b, 0x03, 0x3b]);
            buf[8..12].copy_from_slice(&1u32.to_le_bytes());
            buf[12..16].copy_from_slice(&(CODE as i32).to_le_bytes());
            buf[16..20].copy_from_slice(&(FDE as i32).to_le_bytes());
            // The CIE (after its length): id 0, version 1, "zR", the
            // alignment factors, the return address register, the
            // augmentation data (R: DW_EH_PE_absptr), the program.
            let mut cie = vec![0, 0, 0, 0, 1, b'z', b'R', 0];
            uleb(code_align, &mut cie);
            sleb(data_align, &mut cie);
            cie.push(reg::RA as u8);
            cie.extend_from_slice(&[1, 0x00]);
            cie.extend_from_slice(cie_program);
            assert!(4 + cie.len() <= FDE - CIE, "the CIE overlaps the FDE");
            buf[CIE..CIE + 4].copy_from_slice(&(cie.len() as u32).to_le_bytes());
            buf[CIE + 4..CIE + 4 + cie.len()].copy_from_slice(&cie);
            // The FDE (after its length): the CIE pointer, the range
            // [base + CODE, + 0x100), no augmentation data, the program.
            let mut fde = Vec::new();
            fde.extend_from_slice(&((FDE + 4 - CIE) as u32).to_le_bytes());
            fde.extend_from_slice(&((base + CODE) as u64).to_le_bytes());
            fde.extend_from_slice(&0x100u64.to_le_bytes());
            fde.push(0);
            fde.extend_from_slice(fde_program);
            assert!(4 + fde.len() <= CODE - FDE, "the FDE overlaps the code");
            buf[FDE..FDE + 4].copy_from_slice(&(fde.len() as u32).to_le_bytes());
            buf[FDE + 4..FDE + 4 + fde.len()].copy_from_slice(&fde);
            for (word, chunk) in bytes.iter_mut().zip(buf.chunks(8)) {
                *word = u64::from_le_bytes(chunk.try_into().unwrap());
            }
            Unwind { bytes }
        }

        fn hdr(&self) -> usize {
            self.bytes.as_ptr() as usize
        }

        /// The rules at `offset` bytes into the covered code.
        fn rules_at(&self, offset: usize) -> Option<Rules> {
            // SAFETY: the header, CIE and FDE are in `bytes`, which lives
            // as long as `self`; every read is bounded by their lengths.
            unsafe { rules(self.hdr(), self.hdr() + CODE + offset) }
        }
    }

    /// `DW_CFA_def_cfa sp, 16`.
    fn def_cfa_sp_16() -> Vec<u8> {
        vec![0x0c, reg::SP as u8, 16]
    }

    /// A CFA program read from a buffer laid out like a linker's: the
    /// rules it states (proves the buffer is read as the handler reads a
    /// module's), and the ones a location past the advance does not reach.
    #[test]
    fn a_cfa_program_gives_its_rules_at_an_address() {
        // offset_extended ra, 1; advance 4; offset fp, 2.
        let fde = [0x05, reg::RA as u8, 1, 0x44, 0x80 | reg::FP as u8, 2];
        let unwind = Unwind::new(1, -8, &def_cfa_sp_16(), &fde);
        let early = Rules {
            cfa_reg: reg::SP,
            cfa_off: 16,
            ra: Rule::Saved(-8),
            fp: Rule::Same,
        };
        assert_eq!(unwind.rules_at(0), Some(early));
        assert_eq!(unwind.rules_at(3), Some(early));
        let late = Rules {
            fp: Rule::Saved(-16),
            ..early
        };
        assert_eq!(unwind.rules_at(4), Some(late));
        assert_eq!(unwind.rules_at(0xff), Some(late));
        // Outside the FDE's range: no rules.
        assert_eq!(unwind.rules_at(0x100), None);
    }

    /// Operands at the ends of their types: each would overflow the plain
    /// arithmetic (a debug build, as `cargo test` builds, panicked inside
    /// the signal handler: "attempt to multiply with overflow"); the
    /// interpreter gives up on the program instead (no rules: the walk
    /// falls back to the frame record).
    #[test]
    fn extreme_cfa_operands_give_no_rules_and_no_panic() {
        let ra = reg::RA as u8;
        let mut cases: Vec<(&str, u64, i64, Vec<u8>)> = Vec::new();
        // DW_CFA_offset_extended ra, i64::MAX (times data_align -8).
        let mut p = vec![0x05, ra];
        uleb(i64::MAX as u64, &mut p);
        cases.push(("offset_extended i64::MAX", 1, -8, p));
        // DW_CFA_offset_extended ra, u64::MAX (not an i64).
        let mut p = vec![0x05, ra];
        uleb(u64::MAX, &mut p);
        cases.push(("offset_extended u64::MAX", 1, -8, p));
        // DW_CFA_offset ra, i64::MAX.
        let mut p = vec![0x80 | ra];
        uleb(i64::MAX as u64, &mut p);
        cases.push(("offset i64::MAX", 1, -8, p));
        // DW_CFA_offset ra, 2 with data_align i64::MIN.
        cases.push((
            "offset 2, data_align i64::MIN",
            1,
            i64::MIN,
            vec![0x80 | ra, 2],
        ));
        // DW_CFA_offset_extended_sf ra, i64::MIN.
        let mut p = vec![0x11, ra];
        sleb(i64::MIN, &mut p);
        cases.push(("offset_extended_sf i64::MIN", 1, -8, p));
        // DW_CFA_def_cfa_sf sp, i64::MIN.
        let mut p = vec![0x12, reg::SP as u8];
        sleb(i64::MIN, &mut p);
        cases.push(("def_cfa_sf i64::MIN", 1, -8, p));
        // DW_CFA_def_cfa_offset_sf i64::MAX.
        let mut p = vec![0x13];
        sleb(i64::MAX, &mut p);
        cases.push(("def_cfa_offset_sf i64::MAX", 1, -8, p));
        // DW_CFA_def_cfa / def_cfa_offset with an offset beyond i64.
        let mut p = vec![0x0c, reg::SP as u8];
        uleb(u64::MAX, &mut p);
        cases.push(("def_cfa u64::MAX", 1, -8, p));
        let mut p = vec![0x0e];
        uleb(u64::MAX, &mut p);
        cases.push(("def_cfa_offset u64::MAX", 1, -8, p));
        // DW_CFA_GNU_negative_offset_extended ra, 2^63 (negating i64::MIN)
        // and i64::MAX (times -8).
        let mut p = vec![0x2f, ra];
        uleb(1 << 63, &mut p);
        cases.push(("negative_offset_extended 2^63", 1, -8, p));
        let mut p = vec![0x2f, ra];
        uleb(i64::MAX as u64, &mut p);
        cases.push(("negative_offset_extended i64::MAX", 1, -8, p));
        // Advances: delta times code_align beyond u64, and a location
        // carried past the end of the address space.
        cases.push(("advance_loc4, code_align 2^62", 1 << 62, -8, {
            let mut p = vec![0x04];
            p.extend_from_slice(&u32::MAX.to_le_bytes());
            p
        }));
        cases.push((
            "advance_loc, code_align u64::MAX",
            u64::MAX,
            -8,
            vec![0x40 | 0x3f],
        ));
        // remember_state nested past the stack; restore_state with none.
        cases.push(("remember_state x9", 1, -8, vec![0x0a; STATES + 1]));
        cases.push(("restore_state x1", 1, -8, vec![0x0b]));
        for (name, code_align, data_align, program) in cases {
            let unwind = Unwind::new(code_align, data_align, &def_cfa_sp_16(), &program);
            // Far enough into the range that no advance stops the program
            // early (the rules at 0xff need every instruction read).
            assert_eq!(unwind.rules_at(0xff), None, "{name}");
        }
        // The same operands in the CIE's initial instructions.
        let mut p = vec![0x05, ra];
        uleb(i64::MAX as u64, &mut p);
        let unwind = Unwind::new(1, -8, &p, &[]);
        assert_eq!(unwind.rules_at(0), None);
    }

    /// The handler finds a module by binary search of the sorted table:
    /// each address in the module whose range holds it, none in the gaps.
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
