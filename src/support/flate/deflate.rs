//! gzip without dependencies: the container of RFC 1952 around a DEFLATE
//! stream (RFC 1951) of LZ77 matches in the fixed Huffman codes (section
//! 3.2.6), or stored blocks when those come out smaller (random data).
//!
//! It compresses the text formats a profiler writes (pprof's repeated
//! varints and string tables, stack names) to a fraction of their size; it
//! does not aim at `gzip -9`'s ratios.

use alloc::vec::Vec;

/// CRC-32 (ISO-HDLC, the one of gzip, zlib and PNG: reflected polynomial
/// `0xEDB88320`, initial and final XOR `0xFFFFFFFF`).
pub fn crc32(data: &[u8]) -> u32 {
    const TABLE: [u32; 256] = {
        let mut table = [0u32; 256];
        let mut n = 0;
        while n < 256 {
            let mut c = n as u32;
            let mut k = 0;
            while k < 8 {
                c = if c & 1 != 0 {
                    0xEDB8_8320 ^ (c >> 1)
                } else {
                    c >> 1
                };
                k += 1;
            }
            table[n] = c;
            n += 1;
        }
        table
    };
    let mut crc = 0xFFFF_FFFFu32;
    for &byte in data {
        crc = TABLE[((crc ^ u32::from(byte)) & 0xFF) as usize] ^ (crc >> 8);
    }
    crc ^ 0xFFFF_FFFF
}

/// `data` as a gzip member (`gzip -d` reads it back): no file name, no
/// modification time, OS "unknown".
pub fn gzip(data: &[u8]) -> Vec<u8> {
    // ID1 ID2, CM = 8 (deflate), FLG = 0, MTIME = 0, XFL = 0, OS = 255.
    let mut out = alloc::vec![0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 255];
    let compressed = deflate_fixed(data);
    if compressed.len() <= stored_len(data.len()) {
        out.extend_from_slice(&compressed);
    } else {
        deflate_stored(data, &mut out);
    }
    out.extend_from_slice(&crc32(data).to_le_bytes());
    out.extend_from_slice(&(data.len() as u32).to_le_bytes());
    out
}

/// The size of `len` bytes in stored blocks (5 bytes of header per block
/// of at most 65,535).
fn stored_len(len: usize) -> usize {
    len + 5 * len.div_ceil(65_535).max(1)
}

/// Stored blocks (BTYPE = 00), byte-aligned.
fn deflate_stored(data: &[u8], out: &mut Vec<u8>) {
    let mut chunks = data.chunks(65_535).peekable();
    if chunks.peek().is_none() {
        out.extend_from_slice(&[1, 0, 0, 0xFF, 0xFF]);
        return;
    }
    while let Some(chunk) = chunks.next() {
        let last = chunks.peek().is_none();
        let len = chunk.len() as u16;
        out.push(u8::from(last));
        out.extend_from_slice(&len.to_le_bytes());
        out.extend_from_slice(&(!len).to_le_bytes());
        out.extend_from_slice(chunk);
    }
}

/// DEFLATE's bit order: values least significant bit first, Huffman codes
/// most significant bit first.
struct Bits {
    out: Vec<u8>,
    buffer: u64,
    count: u32,
}

impl Bits {
    fn put(&mut self, value: u32, bits: u32) {
        debug_assert!(bits <= 32 && (bits == 32 || value >> bits == 0));
        self.buffer |= u64::from(value) << self.count;
        self.count += bits;
        while self.count >= 8 {
            self.out.push(self.buffer as u8);
            self.buffer >>= 8;
            self.count -= 8;
        }
    }

    /// A Huffman code of `bits` bits, sent most significant bit first.
    fn code(&mut self, code: u32, bits: u32) {
        self.put(code.reverse_bits() >> (32 - bits), bits);
    }

    fn finish(mut self) -> Vec<u8> {
        if self.count > 0 {
            self.out.push(self.buffer as u8);
        }
        self.out
    }
}

/// The fixed literal/length code of `symbol` (RFC 1951, 3.2.6).
fn literal_code(symbol: u32) -> (u32, u32) {
    match symbol {
        0..=143 => (0x30 + symbol, 8),
        144..=255 => (0x190 + (symbol - 144), 9),
        256..=279 => (symbol - 256, 7),
        _ => (0xC0 + (symbol - 280), 8),
    }
}

/// Length codes 257..=285: (base length, extra bits) (RFC 1951, 3.2.5).
const LENGTHS: [(u16, u8); 29] = [
    (3, 0),
    (4, 0),
    (5, 0),
    (6, 0),
    (7, 0),
    (8, 0),
    (9, 0),
    (10, 0),
    (11, 1),
    (13, 1),
    (15, 1),
    (17, 1),
    (19, 2),
    (23, 2),
    (27, 2),
    (31, 2),
    (35, 3),
    (43, 3),
    (51, 3),
    (59, 3),
    (67, 4),
    (83, 4),
    (99, 4),
    (115, 4),
    (131, 5),
    (163, 5),
    (195, 5),
    (227, 5),
    (258, 0),
];

/// Distance codes 0..=29: (base distance, extra bits) (RFC 1951, 3.2.5).
const DISTANCES: [(u16, u8); 30] = [
    (1, 0),
    (2, 0),
    (3, 0),
    (4, 0),
    (5, 1),
    (7, 1),
    (9, 2),
    (13, 2),
    (17, 3),
    (25, 3),
    (33, 4),
    (49, 4),
    (65, 5),
    (97, 5),
    (129, 6),
    (193, 6),
    (257, 7),
    (385, 7),
    (513, 8),
    (769, 8),
    (1025, 9),
    (1537, 9),
    (2049, 10),
    (3073, 10),
    (4097, 11),
    (6145, 11),
    (8193, 12),
    (12289, 12),
    (16385, 13),
    (24577, 13),
];

/// The last table entry whose base is at most `value`.
fn bucket(table: &[(u16, u8)], value: u16) -> usize {
    table.partition_point(|&(base, _)| base <= value) - 1
}

const WINDOW: usize = 1 << 15;
const MIN_MATCH: usize = 3;
const MAX_MATCH: usize = 258;
const HASH_BITS: u32 = 15;
/// Candidates tried per position: enough for repetitive text, bounded for
/// pathological input.
const MAX_CHAIN: usize = 48;

fn hash(bytes: &[u8]) -> usize {
    let v = u32::from(bytes[0]) | u32::from(bytes[1]) << 8 | u32::from(bytes[2]) << 16;
    (v.wrapping_mul(0x9E37_79B1) >> (32 - HASH_BITS)) as usize
}

/// One final block in the fixed codes (BFINAL = 1, BTYPE = 01): greedy
/// LZ77 over a 32 KiB window with hash chains.
fn deflate_fixed(data: &[u8]) -> Vec<u8> {
    let mut bits = Bits {
        out: Vec::with_capacity(data.len() / 3 + 16),
        buffer: 0,
        count: 0,
    };
    bits.put(1, 1);
    bits.put(1, 2);
    // Most recent position + 1 of each hash (0: none), and the previous
    // position + 1 with the same hash, per window slot.
    let mut head = alloc::vec![0u32; 1 << HASH_BITS];
    let mut prev = alloc::vec![0u32; WINDOW];
    let insert = |pos: usize, head: &mut [u32], prev: &mut [u32]| {
        if pos + MIN_MATCH <= data.len() {
            let h = hash(&data[pos..]);
            prev[pos % WINDOW] = head[h];
            head[h] = pos as u32 + 1;
        }
    };
    let mut pos = 0;
    while pos < data.len() {
        let (mut best_len, mut best_dist) = (0, 0);
        if pos + MIN_MATCH <= data.len() {
            let max = MAX_MATCH.min(data.len() - pos);
            let mut candidate = head[hash(&data[pos..])];
            let mut chain = 0;
            while candidate != 0 && chain < MAX_CHAIN {
                let at = candidate as usize - 1;
                if pos - at > WINDOW - 1 {
                    break;
                }
                let len = data[at..]
                    .iter()
                    .zip(&data[pos..pos + max])
                    .take_while(|(a, b)| a == b)
                    .count();
                if len > best_len {
                    (best_len, best_dist) = (len, pos - at);
                    if len == max {
                        break;
                    }
                }
                let next = prev[at % WINDOW];
                // Older entries only: a stale slot (overwritten by a newer
                // position) ends the chain.
                if next as usize >= candidate as usize {
                    break;
                }
                candidate = next;
                chain += 1;
            }
        }
        if best_len >= MIN_MATCH {
            let length = bucket(&LENGTHS, best_len as u16);
            let (code, n) = literal_code(257 + length as u32);
            bits.code(code, n);
            let (base, extra) = LENGTHS[length];
            bits.put(u32::from(best_len as u16 - base), u32::from(extra));
            let distance = bucket(&DISTANCES, best_dist as u16);
            bits.code(distance as u32, 5);
            let (base, extra) = DISTANCES[distance];
            bits.put(u32::from(best_dist as u16 - base), u32::from(extra));
            for p in pos..pos + best_len {
                insert(p, &mut head, &mut prev);
            }
            pos += best_len;
        } else {
            let (code, n) = literal_code(u32::from(data[pos]));
            bits.code(code, n);
            insert(pos, &mut head, &mut prev);
            pos += 1;
        }
    }
    let (code, n) = literal_code(256);
    bits.code(code, n);
    bits.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc32_check_value() {
        // The check value of CRC-32/ISO-HDLC.
        assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
        assert_eq!(crc32(b""), 0);
    }

    #[test]
    fn tables_follow_the_rfc() {
        // Each base is the previous base plus 2^extra of the previous
        // entry (RFC 1951, 3.2.5), except the lone 258.
        for w in LENGTHS[..28].windows(2) {
            assert_eq!(w[1].0, w[0].0 + (1 << w[0].1), "{w:?}");
        }
        assert_eq!(LENGTHS[27].0 + (1 << LENGTHS[27].1) - 1, 258);
        for w in DISTANCES.windows(2) {
            assert_eq!(w[1].0, w[0].0 + (1 << w[0].1), "{w:?}");
        }
        assert_eq!(
            u32::from(DISTANCES[29].0) + (1 << DISTANCES[29].1) - 1,
            32768
        );
        assert_eq!(bucket(&LENGTHS, 3), 0);
        assert_eq!(bucket(&LENGTHS, 257), 27);
        assert_eq!(bucket(&LENGTHS, 258), 28);
        assert_eq!(bucket(&DISTANCES, 32768), 29);
    }

    #[test]
    fn header_and_trailer() {
        let out = gzip(b"hello hello hello hello");
        assert_eq!(&out[..4], &[0x1f, 0x8b, 8, 0]);
        let n = out.len();
        assert_eq!(
            &out[n - 8..n - 4],
            &crc32(b"hello hello hello hello").to_le_bytes()
        );
        assert_eq!(&out[n - 4..], &23u32.to_le_bytes());
    }

    #[test]
    fn stored_blocks_for_incompressible_data() {
        let mut x = 0x1234_5678_9abc_def0u64;
        let data: Vec<u8> = (0..70_000)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x as u8
            })
            .collect();
        let out = gzip(&data);
        // Two stored blocks: 10 + 5 + 65535 + 5 + 4465 + 8.
        assert_eq!(out.len(), 10 + 5 + 70_000 + 5 + 8);
        assert_eq!(out[10], 0, "first stored block, not final");
    }
}
