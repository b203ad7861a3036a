//! The crate's one byte reader: a bounds-checked little-endian cursor over a
//! byte slice, shared by every binary format the crate decodes (CIL bodies
//! and signatures, EventPipe metadata and payloads, diagnostics IPC
//! payloads, Portable PDBs and PE headers).
//!
//! A read that runs past the end is a [`Truncated`] error (each format turns
//! it into its own error), never a panic and never a partial read: the
//! cursor stays where it was. `no_std`; it uses nothing of the crate but the
//! root's [`GUID`](crate::GUID).
//!
//! Formats transcribed from:
//! * compressed integers: ECMA-335 6th edition, Partition II 23.2 (unsigned:
//!   1 byte `0xxxxxxx`, 2 bytes `10xxxxxx`, 4 bytes `110xxxxx`, big-endian;
//!   signed: the value rotated left by one within 7, 14 or 29 bits, its
//!   sign bit last);
//! * a GUID in its in-memory layout: `Data1` (`u32`), `Data2`, `Data3`
//!   (`u16`), little-endian, then `Data4`'s 8 bytes as they are (`guiddef.h`;
//!   the layout of ECMA-335 II.24.2.5's `#GUID` heap, of the diagnostics IPC
//!   protocol's `CLSID` and of EventPipe's `Guid` field).

// Each user of the reader is a feature of its own; with only some of them
// on, the reads only the others use are unused.
#![cfg_attr(
    not(all(
        feature = "cil",
        feature = "eventpipe",
        feature = "diagnostics",
        feature = "nettrace"
    )),
    allow(dead_code)
)]

use alloc::vec::Vec;

use crate::GUID;

/// A read ran past the end of the data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Truncated {
    /// Where the read started, from the start of the data.
    pub(crate) offset: usize,
    /// How many bytes it needed.
    pub(crate) needed: usize,
    /// How many were left.
    pub(crate) available: usize,
}

/// Why a compressed integer could not be read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CompressedError {
    /// Its bytes run past the end.
    Truncated(Truncated),
    /// Its first byte (at `offset`) is `111xxxxx`, no compressed form.
    Invalid {
        /// Where the integer starts.
        offset: usize,
    },
}

impl From<Truncated> for CompressedError {
    fn from(t: Truncated) -> CompressedError {
        CompressedError::Truncated(t)
    }
}

/// A little-endian cursor over `data`.
#[derive(Clone, Debug)]
pub(crate) struct ByteReader<'a> {
    data: &'a [u8],
    /// May lie past the end (after [`ByteReader::at`] with a large
    /// position): every read checks it.
    pos: usize,
}

impl<'a> ByteReader<'a> {
    /// Reads `data` from its start.
    pub(crate) fn new(data: &'a [u8]) -> ByteReader<'a> {
        ByteReader { data, pos: 0 }
    }

    /// Reads `data` from `pos`; a position past the end reads as truncated.
    pub(crate) fn at(data: &'a [u8], pos: usize) -> ByteReader<'a> {
        ByteReader { data, pos }
    }

    /// The position, from the start of the data.
    pub(crate) fn pos(&self) -> usize {
        self.pos
    }

    /// How many bytes are left.
    pub(crate) fn remaining(&self) -> usize {
        self.data.len().saturating_sub(self.pos)
    }

    /// Whether nothing is left.
    pub(crate) fn is_empty(&self) -> bool {
        self.remaining() == 0
    }

    /// What is left, without moving.
    pub(crate) fn rest(&self) -> &'a [u8] {
        self.data.get(self.pos..).unwrap_or(&[])
    }

    fn truncated(&self, needed: usize) -> Truncated {
        Truncated {
            offset: self.pos,
            needed,
            available: self.remaining(),
        }
    }

    /// The next `n` bytes.
    pub(crate) fn take(&mut self, n: usize) -> Result<&'a [u8], Truncated> {
        let Some(bytes) = self.rest().get(..n) else {
            return Err(self.truncated(n));
        };
        // `pos + n` is at most the length (or `n` is 0): no overflow.
        self.pos += n;
        Ok(bytes)
    }

    /// The next `N` bytes as an array (for the `from_le_bytes` of any type).
    pub(crate) fn array<const N: usize>(&mut self) -> Result<[u8; N], Truncated> {
        let mut out = [0u8; N];
        out.copy_from_slice(self.take(N)?);
        Ok(out)
    }

    /// The next byte, without moving.
    pub(crate) fn peek_u8(&self) -> Result<u8, Truncated> {
        self.data
            .get(self.pos)
            .copied()
            .ok_or_else(|| self.truncated(1))
    }

    /// A byte.
    pub(crate) fn u8(&mut self) -> Result<u8, Truncated> {
        self.array().map(u8::from_le_bytes)
    }

    /// A little-endian `u16`.
    pub(crate) fn u16(&mut self) -> Result<u16, Truncated> {
        self.array().map(u16::from_le_bytes)
    }

    /// A little-endian `u32`.
    pub(crate) fn u32(&mut self) -> Result<u32, Truncated> {
        self.array().map(u32::from_le_bytes)
    }

    /// A little-endian `i32`.
    pub(crate) fn i32(&mut self) -> Result<i32, Truncated> {
        self.array().map(i32::from_le_bytes)
    }

    /// A little-endian `u64`.
    pub(crate) fn u64(&mut self) -> Result<u64, Truncated> {
        self.array().map(u64::from_le_bytes)
    }

    /// A GUID in its in-memory layout (see the module's docs).
    pub(crate) fn guid(&mut self) -> Result<GUID, Truncated> {
        let bytes: [u8; 16] = self.array()?;
        let mut r = ByteReader::new(&bytes);
        // The 16 bytes are there: these reads cannot fail.
        let (data1, data2, data3) = (r.u32()?, r.u16()?, r.u16()?);
        Ok(GUID {
            data1,
            data2,
            data3,
            data4: r.array()?,
        })
    }

    /// `count` UTF-16 code units (`2 * count` bytes, saturating: a count
    /// no slice can hold is truncated).
    pub(crate) fn utf16(&mut self, count: usize) -> Result<Vec<u16>, Truncated> {
        let bytes = self.take(count.saturating_mul(2))?;
        Ok(bytes
            .chunks_exact(2)
            .map(|pair| u16::from_le_bytes([pair[0], pair[1]]))
            .collect())
    }

    /// UTF-16 code units up to a NUL unit, which is read and left out.
    /// Truncated (at the unit that runs short) when no NUL comes.
    pub(crate) fn utf16_until_nul(&mut self) -> Result<Vec<u16>, Truncated> {
        let start = self.pos;
        let mut units = Vec::new();
        loop {
            match self.u16() {
                Ok(0) => return Ok(units),
                Ok(unit) => units.push(unit),
                Err(e) => {
                    self.pos = start;
                    return Err(e);
                }
            }
        }
    }

    /// An ECMA-335 compressed unsigned integer and its width in bits (7, 14
    /// or 29). On an error the cursor stays where the integer starts; a
    /// truncated integer is reported at its second byte, where the bytes its
    /// first one announces run short.
    fn compressed(&mut self) -> Result<(u32, u32), CompressedError> {
        let first = self.peek_u8()?;
        // (bytes, value bits, the value's bits in the first byte)
        let (len, bits, mask) = match first {
            _ if first & 0x80 == 0 => (1, 7, 0x7F),
            _ if first & 0xC0 == 0x80 => (2, 14, 0x3F),
            _ if first & 0xE0 == 0xC0 => (4, 29, 0x1F),
            _ => return Err(CompressedError::Invalid { offset: self.pos }),
        };
        // `first` was there: `pos + 1` is at most the data's length.
        let tail = ByteReader::at(self.data, self.pos + 1).take(len - 1)?;
        let mut be = [0u8; 4];
        be[4 - len] = first & mask;
        be[5 - len..].copy_from_slice(tail);
        self.pos += len;
        Ok((u32::from_be_bytes(be), bits))
    }

    /// An ECMA-335 compressed unsigned integer (II.23.2).
    pub(crate) fn compressed_u32(&mut self) -> Result<u32, CompressedError> {
        self.compressed().map(|(value, _)| value)
    }

    /// An ECMA-335 compressed signed integer (II.23.2).
    pub(crate) fn compressed_i32(&mut self) -> Result<i32, CompressedError> {
        let (rotated, bits) = self.compressed()?;
        // Rotate right by one within `bits`: the sign bit comes back on top.
        let magnitude = (rotated >> 1) as i32;
        Ok(if rotated & 1 != 0 {
            magnitude - (1i32 << (bits - 1))
        } else {
            magnitude
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_little_endian_and_moves() {
        let data = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15];
        let mut r = ByteReader::new(&data);
        assert_eq!(r.u8(), Ok(1));
        assert_eq!(r.u16(), Ok(0x0302));
        assert_eq!(r.u32(), Ok(0x0706_0504));
        assert_eq!(r.u64(), Ok(0x0F0E_0D0C_0B0A_0908));
        assert_eq!(r.pos(), 15);
        assert!(r.is_empty());
        let mut r = ByteReader::new(&[0xFE, 0xFF, 0xFF, 0xFF]);
        assert_eq!(r.i32(), Ok(-2));
    }

    #[test]
    fn a_short_read_is_truncated_and_does_not_move() {
        let mut r = ByteReader::new(&[1, 2, 3]);
        assert_eq!(r.u8(), Ok(1));
        assert_eq!(
            r.u32(),
            Err(Truncated {
                offset: 1,
                needed: 4,
                available: 2
            })
        );
        assert_eq!(r.pos(), 1);
        assert_eq!(r.u16(), Ok(0x0302));
        assert_eq!(
            r.peek_u8(),
            Err(Truncated {
                offset: 3,
                needed: 1,
                available: 0
            })
        );
        assert_eq!(r.take(usize::MAX).unwrap_err().needed, usize::MAX);
    }

    #[test]
    fn a_position_past_the_end_reads_as_truncated() {
        let data = [1, 2];
        let mut r = ByteReader::at(&data, usize::MAX);
        assert_eq!(r.remaining(), 0);
        assert!(r.is_empty());
        assert_eq!(r.rest(), &[] as &[u8]);
        assert_eq!(
            r.u8(),
            Err(Truncated {
                offset: usize::MAX,
                needed: 1,
                available: 0
            })
        );
        assert_eq!(r.take(0), Ok(&[] as &[u8]));
        let mut r = ByteReader::at(&data, 1);
        assert_eq!(r.rest(), &[2]);
        assert_eq!(r.u8(), Ok(2));
    }

    #[test]
    fn a_guid_is_read_in_its_in_memory_layout() {
        // {00112233-4455-6677-8899-AABBCCDDEEFF} as it lies in memory.
        let bytes = [
            0x33, 0x22, 0x11, 0x00, 0x55, 0x44, 0x77, 0x66, 0x88, 0x99, 0xAA, 0xBB, 0xCC, 0xDD,
            0xEE, 0xFF,
        ];
        let guid = ByteReader::new(&bytes).guid().unwrap();
        assert_eq!(
            guid,
            GUID::from_u128(0x00112233_4455_6677_8899_AABBCCDDEEFF)
        );
        assert!(ByteReader::new(&bytes[..15]).guid().is_err());
    }

    #[test]
    fn utf16_reads_count_units_and_a_count_past_the_end_is_truncated() {
        let mut r = ByteReader::new(&[b'h', 0, b'i', 0, 7]);
        assert_eq!(r.utf16(2), Ok(Vec::from([0x68, 0x69])));
        assert_eq!(r.pos(), 4);
        assert_eq!(
            r.utf16(1),
            Err(Truncated {
                offset: 4,
                needed: 2,
                available: 1
            })
        );
        assert_eq!(r.utf16(usize::MAX).unwrap_err().needed, usize::MAX);
        assert_eq!(r.utf16(0), Ok(Vec::new()));
    }

    #[test]
    fn utf16_reads_to_the_nul_and_a_missing_nul_is_truncated() {
        let mut r = ByteReader::new(&[b'h', 0, b'i', 0, 0, 0, 7]);
        assert_eq!(r.utf16_until_nul(), Ok(Vec::from([0x68, 0x69])));
        assert_eq!(r.pos(), 6);
        let mut r = ByteReader::new(&[b'h', 0, b'i']);
        assert_eq!(
            r.utf16_until_nul(),
            Err(Truncated {
                offset: 2,
                needed: 2,
                available: 1
            })
        );
        assert_eq!(r.pos(), 0);
    }

    /// Every read on random data from random positions (past the end and
    /// near `usize::MAX` too) either succeeds within the data, moving by
    /// what it read, or fails without moving: never a panic.
    #[test]
    fn random_reads_never_panic_and_fail_without_moving() {
        let mut seed = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for _ in 0..20_000 {
            let data: Vec<u8> = (0..next() % 12).map(|_| next() as u8).collect();
            let start = match next() % 4 {
                0 => usize::MAX - (next() % 4) as usize,
                _ => (next() % 16) as usize,
            };
            let mut r = ByteReader::at(&data, start);
            for _ in 0..6 {
                let (before, left) = (r.pos(), r.remaining());
                let ok = match next() % 9 {
                    0 => r.u8().is_ok(),
                    1 => r.u16().is_ok(),
                    2 => r.u64().is_ok(),
                    3 => r.guid().is_ok(),
                    4 => r.compressed_u32().is_ok(),
                    5 => r.compressed_i32().is_ok(),
                    6 => r.utf16_until_nul().is_ok(),
                    7 => r.utf16((next() % 8) as usize).is_ok(),
                    _ => r.take((next() % 8) as usize).is_ok(),
                };
                if ok {
                    assert_eq!(r.remaining() + (r.pos() - before), left);
                } else {
                    assert_eq!((r.pos(), r.remaining()), (before, left));
                }
            }
        }
    }

    /// ECMA-335 II.23.2's own examples.
    #[test]
    fn compressed_integers_as_the_standard_shows_them() {
        let unsigned: &[(&[u8], u32)] = &[
            (&[0x03], 0x03),
            (&[0x7F], 0x7F),
            (&[0x80, 0x80], 0x80),
            (&[0xAE, 0x57], 0x2E57),
            (&[0xBF, 0xFF], 0x3FFF),
            (&[0xC0, 0x00, 0x40, 0x00], 0x4000),
            (&[0xDF, 0xFF, 0xFF, 0xFF], 0x1FFF_FFFF),
        ];
        for &(bytes, value) in unsigned {
            let mut r = ByteReader::new(bytes);
            assert_eq!(r.compressed_u32(), Ok(value), "{bytes:02X?}");
            assert!(r.is_empty());
        }
        let signed: &[(&[u8], i32)] = &[
            (&[0x06], 3),
            (&[0x7B], -3),
            (&[0x80, 0x80], 64),
            (&[0x01], -64),
            (&[0xC0, 0x00, 0x40, 0x00], 8192),
            (&[0x80, 0x01], -8192),
            (&[0xDF, 0xFF, 0xFF, 0xFE], 268_435_455),
            (&[0xC0, 0x00, 0x00, 0x01], -268_435_456),
        ];
        for &(bytes, value) in signed {
            let mut r = ByteReader::new(bytes);
            assert_eq!(r.compressed_i32(), Ok(value), "{bytes:02X?}");
            assert!(r.is_empty());
        }
    }

    #[test]
    fn a_bad_or_short_compressed_integer_is_an_error_where_it_starts() {
        let mut r = ByteReader::at(&[0x00, 0xE0], 1);
        assert_eq!(
            r.compressed_u32(),
            Err(CompressedError::Invalid { offset: 1 })
        );
        assert_eq!(r.pos(), 1);
        let mut r = ByteReader::new(&[0xC0, 0x00, 0x40]);
        assert_eq!(
            r.compressed_u32(),
            Err(CompressedError::Truncated(Truncated {
                offset: 1,
                needed: 3,
                available: 2
            }))
        );
        assert_eq!(r.pos(), 0);
        assert!(matches!(
            ByteReader::new(&[]).compressed_i32(),
            Err(CompressedError::Truncated(_))
        ));
    }
}
