//! The DWARF call frame information of a loaded module, read inside the
//! signal handler (async-signal-safe: no allocation, no lock, no library
//! call): a function's FDE found in the `.eh_frame_hdr` table and its CFA
//! program executed up to an address ([`rules`]). The formats and what is
//! understood: `unwind.rs`.

/// DWARF register numbers (x86-64 psABI 3.6.2; AArch64 DWARF ABI).
#[cfg(target_arch = "x86_64")]
pub(super) mod reg {
    pub(in crate::sampling) const FP: u64 = 6;
    pub(in crate::sampling) const SP: u64 = 7;
    pub(in crate::sampling) const RA: u64 = 16;
}
#[cfg(target_arch = "aarch64")]
pub(super) mod reg {
    pub(in crate::sampling) const FP: u64 = 29;
    pub(in crate::sampling) const SP: u64 = 31;
    pub(in crate::sampling) const RA: u64 = 30;
}
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
pub(super) mod reg {
    pub(in crate::sampling) const FP: u64 = u64::MAX - 1;
    pub(in crate::sampling) const SP: u64 = u64::MAX - 2;
    pub(in crate::sampling) const RA: u64 = u64::MAX - 3;
}

use super::dwarf::Reader;

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
}
