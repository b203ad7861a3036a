//! A bounded reader over the unwind data of a loaded module (`.eh_frame`,
//! `.eh_frame_hdr`): bytes, LEB128 numbers and the pointer encodings of
//! the LSB's "Exception Frames" chapter, for the CFA programs of `cfi.rs`,
//! inside the signal handler.

/// A bounded reader over code-adjacent unwind data.
pub(super) struct Reader {
    pub(super) at: usize,
    pub(super) end: usize,
}

impl Reader {
    /// # Safety
    /// `[at, end)` is readable (a loaded module's unwind data).
    pub(super) unsafe fn u8(&mut self) -> Option<u8> {
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
    pub(super) unsafe fn bytes<const N: usize>(&mut self) -> Option<[u8; N]> {
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
    pub(super) unsafe fn uleb(&mut self) -> Option<u64> {
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
    pub(super) unsafe fn sleb(&mut self) -> Option<i64> {
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
    pub(super) unsafe fn encoded(&mut self, enc: u8, data: usize) -> Option<usize> {
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
