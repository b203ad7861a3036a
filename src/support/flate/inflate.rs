//! A zero-dependency inflate: the decoder of the DEFLATE format (RFC 1951,
//! "DEFLATE Compressed Data Format Specification version 1.3"), for the
//! Portable PDBs that compilers embed in assemblies (compressed with
//! `System.IO.Compression.DeflateStream`, raw DEFLATE without a zlib or gzip
//! wrapper).
//!
//! Stored (RFC 1951 3.2.4), fixed Huffman (3.2.6) and dynamic Huffman
//! (3.2.7) blocks. The output is bounded by the caller's limit, and every
//! malformed input (a bad block type, a stored block whose `NLEN` is not the
//! complement of `LEN`, an over-subscribed or unusable code, a distance
//! before the start of the output, a truncated stream) is an [`Err`]. The
//! Huffman decoder is the canonical-code walk of RFC 1951 3.2.2, one bit at
//! a time: slow next to zlib's tables, but the inputs are PDBs of a few
//! hundred kilobytes at most.

use alloc::vec::Vec;
use core::fmt;

use crate::support::bytes::ByteReader;

/// Why a DEFLATE stream could not be decoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum InflateError {
    /// The input ended in the middle of a block.
    Truncated,
    /// A block header with `BTYPE` = 3 (reserved, RFC 1951 3.2.3).
    BadBlockType,
    /// A stored block whose `NLEN` is not the one's complement of `LEN`.
    StoredLengthMismatch,
    /// A code-length table that over-subscribes the code space, repeats a
    /// length before any was given, or runs past `HLIT + HDIST` lengths.
    BadCodeLengths,
    /// A bit sequence that is no code of the current table, or a length
    /// or distance symbol RFC 1951 reserves (286, 287, 30, 31).
    BadSymbol,
    /// A back-reference reaching before the start of the output.
    DistanceTooFar,
    /// The output would exceed the caller's limit.
    TooLarge,
}

impl fmt::Display for InflateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            InflateError::Truncated => "deflate stream truncated",
            InflateError::BadBlockType => "deflate block type 3 (reserved)",
            InflateError::StoredLengthMismatch => "stored block NLEN is not the complement of LEN",
            InflateError::BadCodeLengths => "invalid Huffman code lengths",
            InflateError::BadSymbol => "invalid Huffman code or reserved symbol",
            InflateError::DistanceTooFar => "back-reference before the start of the output",
            InflateError::TooLarge => "inflated data exceeds the size limit",
        })
    }
}

#[cfg(feature = "std")]
impl std::error::Error for InflateError {}

/// The longest Huffman code (RFC 1951 3.2.7: code lengths 0..=15).
const MAX_BITS: usize = 15;

/// RFC 1951 3.2.5: base lengths of symbols 257..=285 and their extra bits.
const LENGTH_BASE: [u16; 29] = [
    3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131,
    163, 195, 227, 258,
];
const LENGTH_EXTRA: [u8; 29] = [
    0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0,
];
/// RFC 1951 3.2.5: base distances of distance codes 0..=29 and their extra bits.
const DIST_BASE: [u16; 30] = [
    1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537,
    2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577,
];
const DIST_EXTRA: [u8; 30] = [
    0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13,
    13,
];
/// RFC 1951 3.2.7: the order in which the code-length code's lengths come.
const CLEN_ORDER: [usize; 19] = [
    16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15,
];

/// Reads bits least significant first (RFC 1951 3.1.1).
struct Bits<'a> {
    /// The bytes not yet moved into `buf`.
    input: ByteReader<'a>,
    buf: u32,
    count: u32,
}

impl Bits<'_> {
    /// The next `n` (at most 16) bits as a number, first bit lowest.
    fn take(&mut self, n: u32) -> Result<u32, InflateError> {
        while self.count < n {
            let byte = self.input.u8().map_err(|_| InflateError::Truncated)?;
            self.buf |= u32::from(byte) << self.count;
            self.count += 8;
        }
        let value = self.buf & ((1u32 << n) - 1);
        self.buf >>= n;
        self.count -= n;
        Ok(value)
    }

    /// Drops the bits left in the current byte (stored blocks start on a
    /// byte boundary).
    fn align(&mut self) {
        self.buf = 0;
        self.count = 0;
    }
}

/// A canonical Huffman code (RFC 1951 3.2.2): how many codes of each length
/// and the symbols ordered by code.
struct Huffman {
    counts: [u16; MAX_BITS + 1],
    symbols: Vec<u16>,
}

impl Huffman {
    /// Builds the code of `lengths` (one per symbol, 0 = unused). An
    /// over-subscribed set is an error; an incomplete one is accepted (zlib
    /// writes a single distance code of length 1) and its unused bit
    /// sequences are errors when decoded.
    fn new(lengths: &[u8]) -> Result<Huffman, InflateError> {
        let mut counts = [0u16; MAX_BITS + 1];
        for &len in lengths {
            counts[usize::from(len)] += 1;
        }
        counts[0] = 0;
        let mut left: i32 = 1;
        for &count in &counts[1..] {
            left <<= 1;
            left -= i32::from(count);
            if left < 0 {
                return Err(InflateError::BadCodeLengths);
            }
        }
        let mut offsets = [0u16; MAX_BITS + 2];
        for len in 1..=MAX_BITS {
            offsets[len + 1] = offsets[len] + counts[len];
        }
        let mut symbols = alloc::vec![0u16; usize::from(offsets[MAX_BITS + 1])];
        for (symbol, &len) in lengths.iter().enumerate() {
            if len != 0 {
                let at = &mut offsets[usize::from(len)];
                symbols[usize::from(*at)] = symbol as u16;
                *at += 1;
            }
        }
        Ok(Huffman { counts, symbols })
    }

    /// Decodes one symbol: codes are packed most significant bit first
    /// (RFC 1951 3.1.1), so the code grows one bit at a time and is
    /// compared with the first code of each length.
    fn decode(&self, bits: &mut Bits<'_>) -> Result<u16, InflateError> {
        let (mut code, mut first, mut index) = (0i32, 0i32, 0i32);
        for len in 1..=MAX_BITS {
            code |= bits.take(1)? as i32;
            let count = i32::from(self.counts[len]);
            if code - first < count {
                let at = (index + code - first) as usize;
                return self.symbols.get(at).copied().ok_or(InflateError::BadSymbol);
            }
            index += count;
            first = (first + count) << 1;
            code <<= 1;
        }
        Err(InflateError::BadSymbol)
    }
}

/// Decodes a raw DEFLATE stream (no zlib or gzip wrapper), producing at
/// most `limit` bytes. Bytes after the final block are ignored.
pub fn inflate(input: &[u8], limit: usize) -> Result<Vec<u8>, InflateError> {
    let mut bits = Bits {
        input: ByteReader::new(input),
        buf: 0,
        count: 0,
    };
    let mut out = Vec::new();
    loop {
        let last = bits.take(1)? == 1;
        match bits.take(2)? {
            0 => stored(&mut bits, &mut out, limit)?,
            1 => {
                let (lit, dist) = fixed_codes()?;
                codes(&mut bits, &mut out, limit, &lit, &dist)?;
            }
            2 => {
                let (lit, dist) = dynamic_codes(&mut bits)?;
                codes(&mut bits, &mut out, limit, &lit, &dist)?;
            }
            _ => return Err(InflateError::BadBlockType),
        }
        if last {
            return Ok(out);
        }
    }
}

/// RFC 1951 3.2.4: a stored block.
fn stored(bits: &mut Bits<'_>, out: &mut Vec<u8>, limit: usize) -> Result<(), InflateError> {
    bits.align();
    let truncated = |_| InflateError::Truncated;
    let len = bits.input.u16().map_err(truncated)?;
    let nlen = bits.input.u16().map_err(truncated)?;
    if len != !nlen {
        return Err(InflateError::StoredLengthMismatch);
    }
    let data = bits.input.take(usize::from(len)).map_err(truncated)?;
    if out.len() + data.len() > limit {
        return Err(InflateError::TooLarge);
    }
    out.extend_from_slice(data);
    Ok(())
}

/// RFC 1951 3.2.6: the fixed literal/length and distance codes.
fn fixed_codes() -> Result<(Huffman, Huffman), InflateError> {
    let mut lengths = [0u8; 288];
    lengths[..144].fill(8);
    lengths[144..256].fill(9);
    lengths[256..280].fill(7);
    lengths[280..].fill(8);
    // Distance codes 30 and 31 take part in the code but never occur.
    Ok((Huffman::new(&lengths)?, Huffman::new(&[5u8; 30])?))
}

/// RFC 1951 3.2.7: the code lengths of a dynamic block, themselves
/// Huffman-coded.
fn dynamic_codes(bits: &mut Bits<'_>) -> Result<(Huffman, Huffman), InflateError> {
    let hlit = bits.take(5)? as usize + 257;
    let hdist = bits.take(5)? as usize + 1;
    let hclen = bits.take(4)? as usize + 4;
    if hlit > 286 || hdist > 30 {
        return Err(InflateError::BadCodeLengths);
    }
    let mut clens = [0u8; 19];
    for &at in &CLEN_ORDER[..hclen] {
        clens[at] = bits.take(3)? as u8;
    }
    let clen_code = Huffman::new(&clens)?;
    let mut lengths = [0u8; 286 + 30];
    let total = hlit + hdist;
    let mut n = 0;
    while n < total {
        let symbol = clen_code.decode(bits)?;
        let (value, repeat) = match symbol {
            0..=15 => (symbol as u8, 1),
            16 => {
                let previous = *n
                    .checked_sub(1)
                    .and_then(|p| lengths.get(p))
                    .ok_or(InflateError::BadCodeLengths)?;
                (previous, 3 + bits.take(2)? as usize)
            }
            17 => (0, 3 + bits.take(3)? as usize),
            _ => (0, 11 + bits.take(7)? as usize),
        };
        if n + repeat > total {
            return Err(InflateError::BadCodeLengths);
        }
        lengths[n..n + repeat].fill(value);
        n += repeat;
    }
    // A block must be able to end (RFC 1951 3.2.7: the end-of-block code).
    if lengths[256] == 0 {
        return Err(InflateError::BadCodeLengths);
    }
    Ok((
        Huffman::new(&lengths[..hlit])?,
        Huffman::new(&lengths[hlit..total])?,
    ))
}

/// RFC 1951 3.2.5: literals, lengths and distances until end-of-block.
fn codes(
    bits: &mut Bits<'_>,
    out: &mut Vec<u8>,
    limit: usize,
    lit: &Huffman,
    dist: &Huffman,
) -> Result<(), InflateError> {
    loop {
        let symbol = lit.decode(bits)?;
        match symbol {
            0..=255 => {
                if out.len() >= limit {
                    return Err(InflateError::TooLarge);
                }
                out.push(symbol as u8);
            }
            256 => return Ok(()),
            _ => {
                let at = usize::from(symbol - 257);
                let (Some(&base), Some(&extra)) = (LENGTH_BASE.get(at), LENGTH_EXTRA.get(at))
                else {
                    return Err(InflateError::BadSymbol);
                };
                let len = usize::from(base) + bits.take(u32::from(extra))? as usize;
                let code = usize::from(dist.decode(bits)?);
                let (Some(&base), Some(&extra)) = (DIST_BASE.get(code), DIST_EXTRA.get(code))
                else {
                    return Err(InflateError::BadSymbol);
                };
                let distance = usize::from(base) + bits.take(u32::from(extra))? as usize;
                if distance > out.len() {
                    return Err(InflateError::DistanceTooFar);
                }
                if out.len() + len > limit {
                    return Err(InflateError::TooLarge);
                }
                let start = out.len() - distance;
                // Byte by byte: the copy may overlap what it writes.
                for i in 0..len {
                    let byte = out[start + i];
                    out.push(byte);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stored_block() {
        // BFINAL=1, BTYPE=00, LEN=3, NLEN=!3, "abc".
        let input = [0x01, 0x03, 0x00, 0xFC, 0xFF, b'a', b'b', b'c'];
        assert_eq!(inflate(&input, 3).unwrap(), b"abc");
        assert_eq!(inflate(&input, 2), Err(InflateError::TooLarge));
        assert_eq!(inflate(&input[..7], 3), Err(InflateError::Truncated));
        let mut bad = input;
        bad[3] = 0xFD;
        assert_eq!(inflate(&bad, 3), Err(InflateError::StoredLengthMismatch));
    }

    #[test]
    fn reserved_block_type_and_empty_input() {
        assert_eq!(inflate(&[0x07], 10), Err(InflateError::BadBlockType));
        assert_eq!(inflate(&[], 10), Err(InflateError::Truncated));
    }

    #[test]
    fn fixed_empty_block() {
        // zlib.compressobj(wbits=-15) of b"" is 03 00: BFINAL=1, BTYPE=01,
        // end-of-block (7 zero bits).
        assert_eq!(inflate(&[0x03, 0x00], 0).unwrap(), b"");
    }
}
