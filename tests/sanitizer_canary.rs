//! The canaries of `scripts/ci/check-sanitizer.sh`, which runs the Miri tests
//! under AddressSanitizer where Miri cannot be installed. Before those
//! tests, the script runs each canary alone, built with the same flags, and
//! fails unless the sanitizer reports it: a clean run of the tests then
//! means that the sanitizer was there to see them.
//!
//! Both are ignored: nothing else runs them. The use after free is
//! undefined behaviour, so it also refuses to run unless
//! `CORPROF_SANITIZER_CANARY=1` (set by the script).

use std::hint::black_box;

/// The size of the leaked buffer, which the script looks for in the report.
const LEAKED_BYTES: usize = 7919;

#[test]
#[ignore = "reads freed memory: run by scripts/ci/check-sanitizer.sh under AddressSanitizer only"]
fn heap_use_after_free() {
    assert_eq!(
        std::env::var("CORPROF_SANITIZER_CANARY").as_deref(),
        Ok("1"),
        "a deliberate use after free: run by scripts/ci/check-sanitizer.sh only"
    );
    let freed = black_box(Box::new(0x5a5a_u32));
    let dangling: *const u32 = &*freed;
    drop(freed);
    // SAFETY: none: `dangling` points into the freed box, and this read is
    // the use after free AddressSanitizer must report (it aborts here).
    let read = unsafe { dangling.read_volatile() };
    println!("read {read:#x} from freed memory: AddressSanitizer did not stop the process");
}

#[test]
#[ignore = "leaks a buffer: run by scripts/ci/check-sanitizer.sh under LeakSanitizer only"]
fn leak() {
    leak_a_buffer();
}

/// Forgets the only pointer to a heap buffer (in a frame of its own, so that
/// no live stack slot keeps it).
#[inline(never)]
fn leak_a_buffer() {
    std::mem::forget(black_box(vec![0x5a_u8; LEAKED_BYTES]));
}
