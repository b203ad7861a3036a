//! The length-then-buffer string pattern of the profiling and metadata APIs,
//! written once.

use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;
use core::fmt;

use crate::{E_UNEXPECTED, HRESULT, WCHAR};

/// Characters tried on the stack before asking for the exact length.
const INLINE: usize = 256;

/// The longest string the runtime may claim (in UTF-16 units, terminator
/// included): far beyond any real name or path (Windows paths stop at
/// 32,767 units), and small enough (2 MiB) to allocate. A longer claim is a
/// broken answer and gets `E_UNEXPECTED` instead of an allocation that
/// could abort the process.
pub(crate) const MAX_CHARS: usize = 1 << 20;

/// A UTF-16 string read from the runtime: on the stack when it fits in
/// [`INLINE`] characters, else in a heap buffer of exactly the size the
/// runtime asked for. Reading a name costs no allocation in the common case,
/// and the caller converts it (or writes it out) only once.
pub(crate) struct Utf16Buf {
    inline: [WCHAR; INLINE],
    heap: Vec<WCHAR>,
    /// Units of the string in `inline` (or `heap` when it is non-empty),
    /// terminator excluded.
    len: usize,
}

impl Utf16Buf {
    /// An empty buffer (no allocation).
    pub(crate) fn new() -> Utf16Buf {
        Utf16Buf {
            inline: [0; INLINE],
            heap: Vec::new(),
            len: 0,
        }
    }

    /// The string read last, without its terminator. It may hold a NUL of
    /// its own (a broken answer): readers stop at the first one, as
    /// [`write_utf16`] and [`decode`] do.
    pub(crate) fn units(&self) -> &[WCHAR] {
        let all = if self.heap.is_empty() {
            &self.inline[..]
        } else {
            &self.heap[..]
        };
        &all[..self.len.min(all.len())]
    }

    /// Calls a "fill this UTF-16 buffer" method and keeps the string.
    ///
    /// `call(capacity, needed, buffer)` must behave like the runtime's
    /// methods: write at most `capacity` characters (terminator included) to
    /// `buffer`, and the full length including the terminator to `*needed`.
    /// The first call uses the stack buffer; only a longer string costs a
    /// second call with a heap buffer of exactly the size asked for. A
    /// success code with a truncated buffer (`CLDB_S_TRUNCATION`) is handled
    /// the same way. A claimed length above [`MAX_CHARS`] is `E_UNEXPECTED`;
    /// a failure of either call is returned as is; if the string grew
    /// between the calls, what fits in the second buffer is kept.
    pub(crate) fn read(
        &mut self,
        mut call: impl FnMut(u32, *mut u32, *mut WCHAR) -> HRESULT,
    ) -> Result<(), HRESULT> {
        self.heap.clear();
        self.len = 0;
        let mut needed: u32 = 0;
        call(INLINE as u32, &mut needed, self.inline.as_mut_ptr()).ok()?;
        let needed_len = needed as usize;
        if needed_len <= INLINE {
            self.len = without_terminator(&self.inline[..needed_len]);
            return Ok(());
        }
        if needed_len > MAX_CHARS {
            return Err(E_UNEXPECTED);
        }
        let mut heap = vec![0 as WCHAR; needed_len];
        let mut again: u32 = 0;
        call(needed, &mut again, heap.as_mut_ptr()).ok()?;
        let len = (again as usize).min(needed_len);
        self.len = without_terminator(&heap[..len]);
        self.heap = heap;
        Ok(())
    }

    /// The string as a `String` (invalid surrogates become U+FFFD).
    pub(crate) fn to_string_lossy(&self) -> String {
        decode(self.units())
    }
}

/// The length of `units` without a terminating NUL. A NUL inside is left
/// for the readers of [`Utf16Buf::units`], which stop at the first one
/// (no scan on the hot path).
fn without_terminator(units: &[WCHAR]) -> usize {
    match units.last() {
        Some(0) => units.len() - 1,
        _ => units.len(),
    }
}

/// The length of `units` up to its first NUL (all of it without one).
fn terminated(units: &[WCHAR]) -> usize {
    units.iter().position(|&u| u == 0).unwrap_or(units.len())
}

/// Calls a "fill this UTF-16 buffer" method and returns the string: see
/// [`Utf16Buf::read`] for the protocol and its bounds.
pub(crate) fn read_utf16(
    call: impl FnMut(u32, *mut u32, *mut WCHAR) -> HRESULT,
) -> Result<String, HRESULT> {
    let mut buf = Utf16Buf::new();
    buf.read(call)?;
    Ok(buf.to_string_lossy())
}

/// UTF-16 to `String`, without the terminating NULs; invalid surrogates
/// become U+FFFD (as `String::from_utf16_lossy`).
pub(crate) fn decode(units: &[WCHAR]) -> String {
    let units = &units[..terminated(units)];
    let mut text = String::with_capacity(units.len());
    // Writing to a String cannot fail.
    let _ = write_utf16(&mut text, units);
    text
}

/// The bytes [`write_utf16`] assembled, as a `str` (no second validation
/// pass: they are ASCII units and whole `char::encode_utf8` outputs).
fn chunk_str(bytes: &[u8]) -> &str {
    debug_assert!(core::str::from_utf8(bytes).is_ok());
    // SAFETY: `write_utf16` puts only bytes below 0x80 (each one ASCII
    // character) and complete UTF-8 encodings from `char::encode_utf8` in
    // the chunk, and flushes it only between characters: valid UTF-8.
    unsafe { core::str::from_utf8_unchecked(bytes) }
}

/// Writes UTF-16 `units` (up to the first NUL) as UTF-8 to `out`, through a
/// stack buffer: ASCII, which is nearly every name, costs one compare and
/// one store per unit; invalid surrogates become U+FFFD (as
/// `String::from_utf16_lossy`).
pub(crate) fn write_utf16<W: fmt::Write + ?Sized>(out: &mut W, units: &[WCHAR]) -> fmt::Result {
    const CHUNK: usize = 256;
    let mut bytes = [0u8; CHUNK];
    let mut n = 0;
    let mut i = 0;
    while i < units.len() {
        // A run of ASCII, as far as the chunk has room: one compare and one
        // store per unit.
        let run = &units[i..units.len().min(i + (CHUNK - n))];
        let mut ascii = 0;
        for (byte, &unit) in bytes[n..].iter_mut().zip(run) {
            if unit == 0 || unit >= 0x80 {
                break;
            }
            *byte = unit as u8;
            ascii += 1;
        }
        n += ascii;
        i += ascii;
        if i == units.len() {
            break;
        }
        if n + 4 > CHUNK {
            out.write_str(chunk_str(&bytes[..n]))?;
            n = 0;
            continue;
        }
        let unit = units[i];
        if unit == 0 {
            break;
        }
        let next = units.get(i + 1).copied().unwrap_or(0);
        let (c, used) = match unit {
            0xD800..=0xDBFF if (0xDC00..=0xDFFF).contains(&next) => {
                let code =
                    0x10000 + ((u32::from(unit) - 0xD800) << 10) + (u32::from(next) - 0xDC00);
                (
                    char::from_u32(code).unwrap_or(char::REPLACEMENT_CHARACTER),
                    2,
                )
            }
            0xD800..=0xDFFF => (char::REPLACEMENT_CHARACTER, 1),
            _ => (
                char::from_u32(u32::from(unit)).unwrap_or(char::REPLACEMENT_CHARACTER),
                1,
            ),
        };
        n += c.encode_utf8(&mut bytes[n..]).len();
        i += used;
    }
    out.write_str(chunk_str(&bytes[..n]))
}

/// `name` as a NUL-terminated UTF-16 string; `E_INVALIDARG` when it holds a
/// NUL of its own.
pub(crate) fn wide(name: &str) -> Result<Vec<WCHAR>, HRESULT> {
    if name.contains('\0') {
        return Err(crate::E_INVALIDARG);
    }
    Ok(name.encode_utf16().chain([0]).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec::Vec;
    use core::cell::Cell;

    fn fake(text: &str) -> impl FnMut(u32, *mut u32, *mut WCHAR) -> HRESULT + '_ {
        move |cap, needed, buf| {
            let units: Vec<u16> = text.encode_utf16().chain([0]).collect();
            // SAFETY: the caller passes valid pointers, as the runtime would.
            unsafe {
                *needed = units.len() as u32;
                let n = units.len().min(cap as usize);
                core::ptr::copy_nonoverlapping(units.as_ptr(), buf, n);
            }
            crate::S_OK
        }
    }

    #[test]
    fn short_strings_take_one_call() {
        let calls = Cell::new(0);
        let mut inner = fake("Program.Fib");
        let s = read_utf16(|c, n, b| {
            calls.set(calls.get() + 1);
            inner(c, n, b)
        })
        .unwrap();
        assert_eq!(s, "Program.Fib");
        assert_eq!(calls.get(), 1);
    }

    #[test]
    fn long_strings_take_a_second_call_of_the_exact_size() {
        let long: String = "x".repeat(1000);
        let sizes = core::cell::RefCell::new(Vec::new());
        let mut inner = fake(&long);
        let s = read_utf16(|c, n, b| {
            sizes.borrow_mut().push(c);
            inner(c, n, b)
        })
        .unwrap();
        assert_eq!(s, long);
        assert_eq!(*sizes.borrow(), [256, 1001]);
    }

    #[test]
    fn impossible_lengths_are_refused_before_allocating() {
        let calls = Cell::new(0);
        let claim = |n: u32| {
            move |_cap: u32, needed: *mut u32, _buf: *mut WCHAR| {
                // SAFETY: `read_utf16` passes a valid length pointer.
                unsafe { *needed = n };
                crate::S_OK
            }
        };
        for n in [u32::MAX, (MAX_CHARS + 1) as u32] {
            let inner = claim(n);
            let got = read_utf16(|c, l, b| {
                calls.set(calls.get() + 1);
                inner(c, l, b)
            });
            assert_eq!(got, Err(crate::E_UNEXPECTED));
        }
        assert_eq!(calls.get(), 2, "one call each: no second buffer");
        let exact = "y".repeat(MAX_CHARS - 1);
        assert_eq!(read_utf16(fake(&exact)).unwrap().len(), MAX_CHARS - 1);
    }

    #[test]
    fn failures_are_returned_and_empty_strings_work() {
        assert_eq!(
            read_utf16(|_, _, _| crate::E_INVALIDARG),
            Err(crate::E_INVALIDARG)
        );
        assert_eq!(read_utf16(fake("")).unwrap(), "");
        assert_eq!(decode(&[0xD800, 0x41, 0]), "\u{FFFD}A");
    }

    #[test]
    fn conversion_matches_the_standard_library() {
        let samples: [&[u16]; 8] = [
            &[],
            &[0x41, 0x2E, 0x42],
            &[0xE9, 0x4E2D, 0x41],
            &[0xD83D, 0xDE00, 0x41],   // a pair
            &[0xD83D, 0x41],           // a lone high surrogate
            &[0xDE00, 0xD83D],         // a low, then a high at the end
            &[0xD800, 0xD800, 0xDC00], // high, then a pair
            &[0x7F, 0x80, 0x7FF, 0x800, 0xFFFF],
        ];
        for units in samples {
            assert_eq!(decode(units), String::from_utf16_lossy(units), "{units:?}");
        }
        // Longer than one stack chunk, with multi-byte characters across
        // the chunk boundary.
        let long: Vec<u16> = "é"
            .repeat(300)
            .encode_utf16()
            .chain("a😀".repeat(200).encode_utf16())
            .collect();
        assert_eq!(decode(&long), String::from_utf16_lossy(&long));
        // Stops at the first NUL.
        assert_eq!(decode(&[0x41, 0, 0x42]), "A");
    }

    #[test]
    fn the_buffer_reuses_nothing_stale() {
        let mut buf = Utf16Buf::new();
        buf.read(fake(&"z".repeat(400))).unwrap();
        assert_eq!(buf.units().len(), 400);
        buf.read(fake("ab")).unwrap();
        assert_eq!(
            buf.to_string_lossy(),
            "ab",
            "the short read is on the stack again"
        );
        assert_eq!(buf.read(|_, _, _| crate::E_FAIL), Err(crate::E_FAIL));
        assert!(buf.units().is_empty(), "a failed read leaves no old string");
    }
}
