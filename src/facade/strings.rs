//! The length-then-buffer string pattern of the profiling and metadata APIs,
//! written once.

use alloc::string::String;
use alloc::vec;

use crate::{E_UNEXPECTED, HRESULT, WCHAR};

/// Characters tried on the stack before asking for the exact length.
const INLINE: usize = 256;

/// The longest string the runtime may claim (in UTF-16 units, terminator
/// included): far beyond any real name or path (Windows paths stop at
/// 32,767 units), and small enough (2 MiB) to allocate. A longer claim is a
/// broken answer and gets `E_UNEXPECTED` instead of an allocation that
/// could abort the process.
pub(crate) const MAX_CHARS: usize = 1 << 20;

/// Calls a "fill this UTF-16 buffer" method and returns the string.
///
/// `call(capacity, needed, buffer)` must behave like the runtime's methods:
/// write at most `capacity` characters (terminator included) to `buffer`,
/// and the full length including the terminator to `*needed`. The first
/// call uses a stack buffer; only a longer string costs a second call with a
/// heap buffer of exactly the size asked for. A success code with a
/// truncated buffer (`CLDB_S_TRUNCATION`) is handled the same way. A claimed
/// length above [`MAX_CHARS`] is `E_UNEXPECTED`; a failure of either call is
/// returned as is; if the string grew between the calls, what fits in the
/// second buffer is returned.
pub(crate) fn read_utf16(
    mut call: impl FnMut(u32, *mut u32, *mut WCHAR) -> HRESULT,
) -> Result<String, HRESULT> {
    let mut inline = [0 as WCHAR; INLINE];
    let mut needed: u32 = 0;
    call(INLINE as u32, &mut needed, inline.as_mut_ptr()).ok()?;
    let needed_len = needed as usize;
    if needed_len <= INLINE {
        return Ok(decode(&inline[..needed_len]));
    }
    if needed_len > MAX_CHARS {
        return Err(E_UNEXPECTED);
    }
    let mut heap = vec![0 as WCHAR; needed_len];
    let mut again: u32 = 0;
    call(needed, &mut again, heap.as_mut_ptr()).ok()?;
    let len = (again as usize).min(needed_len);
    Ok(decode(&heap[..len]))
}

/// UTF-16 to `String`, without the terminating NULs; invalid surrogates
/// become U+FFFD.
pub(crate) fn decode(units: &[WCHAR]) -> String {
    let end = units.iter().position(|&u| u == 0).unwrap_or(units.len());
    String::from_utf16_lossy(&units[..end])
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
}
