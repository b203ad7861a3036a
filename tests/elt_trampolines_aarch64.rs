//! The AArch64 fast-path trampolines called the way the JIT calls them,
//! with a target that scribbles over every volatile register; run under
//! qemu-user by `scripts/ci/test-aarch64.sh` (there is no arm64 CoreCLR to run
//! them in here).
//!
//! The contract is the runtime's own helper's, `GenerateProfileHelper` in
//! dotnet/runtime `src/coreclr/vm/arm64/asmhelpers.S`: on entry `x10` holds
//! the `FunctionIDOrClientID` (`x11` the profiled method's sp, `x12` scratch),
//! for enter, leave and tailcall alike; on exit `x0`-`x8`, `q0`-`q7` and `fp`
//! are preserved and the other volatile registers are not. docs/hooks.md has
//! the register lists of every platform.
#![cfg(all(target_arch = "aarch64", target_os = "linux"))]

use std::arch::asm;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use corprof::profiling::{fast_path_hooks, set_fast_path_targets, FunctionIDOrClientID};

static SEEN: AtomicUsize = AtomicUsize::new(0);
static CALLS: AtomicUsize = AtomicUsize::new(0);
/// The targets are process-wide: one test at a time.
static SERIAL: Mutex<()> = Mutex::new(());

/// Records the handle, then overwrites every volatile register of AAPCS64:
/// `x0`-`x17` and `v0`-`v7`, `v16`-`v31` (all 128 bits).
unsafe extern "C" fn scribble(id: FunctionIDOrClientID) {
    SEEN.store(id.client_id(), Ordering::SeqCst);
    CALLS.fetch_add(1, Ordering::SeqCst);
    // SAFETY: only volatile registers, all declared clobbered.
    unsafe {
        asm!(
            "mov x0, #-1",
            "mov x1, #-1",
            "mov x2, #-1",
            "mov x3, #-1",
            "mov x4, #-1",
            "mov x5, #-1",
            "mov x6, #-1",
            "mov x7, #-1",
            "mov x8, #-1",
            "mov x9, #-1",
            "mov x10, #-1",
            "mov x11, #-1",
            "mov x12, #-1",
            "mov x13, #-1",
            "mov x14, #-1",
            "mov x15, #-1",
            "mov x16, #-1",
            "mov x17, #-1",
            "movi v0.2d, #0xffffffffffffffff",
            "movi v1.2d, #0xffffffffffffffff",
            "movi v2.2d, #0xffffffffffffffff",
            "movi v3.2d, #0xffffffffffffffff",
            "movi v4.2d, #0xffffffffffffffff",
            "movi v5.2d, #0xffffffffffffffff",
            "movi v6.2d, #0xffffffffffffffff",
            "movi v7.2d, #0xffffffffffffffff",
            "movi v16.2d, #0xffffffffffffffff",
            "movi v17.2d, #0xffffffffffffffff",
            "movi v18.2d, #0xffffffffffffffff",
            "movi v19.2d, #0xffffffffffffffff",
            "movi v20.2d, #0xffffffffffffffff",
            "movi v21.2d, #0xffffffffffffffff",
            "movi v22.2d, #0xffffffffffffffff",
            "movi v23.2d, #0xffffffffffffffff",
            "movi v24.2d, #0xffffffffffffffff",
            "movi v25.2d, #0xffffffffffffffff",
            "movi v26.2d, #0xffffffffffffffff",
            "movi v27.2d, #0xffffffffffffffff",
            "movi v28.2d, #0xffffffffffffffff",
            "movi v29.2d, #0xffffffffffffffff",
            "movi v30.2d, #0xffffffffffffffff",
            "movi v31.2d, #0xffffffffffffffff",
            clobber_abi("C"),
        );
    }
}

/// Register values before and after a trampoline call.
#[repr(C)]
#[derive(Debug, PartialEq, Eq, Clone, Copy)]
struct Regs {
    /// `x0`-`x8`.
    x: [u64; 9],
    /// `fp` after the call minus `fp` before it (0 in the input).
    fp_moved: u64,
    /// `q0`-`q7`.
    q: [[u64; 2]; 8],
}

/// Everything the asm block reads and writes, behind one pointer (x20).
#[repr(C)]
struct Frame {
    hook: usize,
    id: usize,
    input: Regs,
    out: Regs,
}

const INPUT: usize = 16;
const OUT: usize = INPUT + core::mem::size_of::<Regs>();

fn sentinel() -> Regs {
    let mut regs = Regs {
        x: [0; 9],
        fp_moved: 0,
        q: [[0; 2]; 8],
    };
    for (i, r) in regs.x.iter_mut().enumerate() {
        *r = 0x1111_0000_0000_0000 + i as u64;
    }
    for (i, q) in regs.q.iter_mut().enumerate() {
        *q = [
            0x2222_0000_0000_0000 + i as u64,
            0x3333_0000_0000_0000 + i as u64,
        ];
    }
    regs
}

/// Calls `hook` as the JIT does: the handle `id` in `x10`, garbage in `x11`
/// and `x12`, `x0`-`x8` and `q0`-`q7` loaded from `input`; returns them
/// afterwards, with how far `fp` moved.
fn call(hook: unsafe extern "system" fn(FunctionIDOrClientID), id: usize, input: &Regs) -> Regs {
    assert_eq!(core::mem::size_of::<Regs>(), 208);
    assert_eq!(OUT, 224);
    let mut frame = Frame {
        hook: hook as usize,
        id,
        input: *input,
        out: Regs {
            x: [0; 9],
            fp_moved: u64::MAX,
            q: [[0; 2]; 8],
        },
    };
    // SAFETY: the frame is valid for reads and writes; x20 (the frame) and
    // x21 (fp before the call) are callee-saved, which the trampoline and
    // its target keep; everything volatile, lr included, is declared
    // clobbered.
    unsafe {
        asm!(
            "ldr x9, [x20]",
            "ldr x10, [x20, #8]",
            "add x11, x20, #16",
            "ldp q0, q1, [x11, #80]",
            "ldp q2, q3, [x11, #112]",
            "ldp q4, q5, [x11, #144]",
            "ldp q6, q7, [x11, #176]",
            "ldp x0, x1, [x11]",
            "ldp x2, x3, [x11, #16]",
            "ldp x4, x5, [x11, #32]",
            "ldp x6, x7, [x11, #48]",
            "ldr x8, [x11, #64]",
            "mov x11, #-1",
            "mov x12, #-1",
            "mov x21, x29",
            "blr x9",
            "add x11, x20, #224",
            "stp x0, x1, [x11]",
            "stp x2, x3, [x11, #16]",
            "stp x4, x5, [x11, #32]",
            "stp x6, x7, [x11, #48]",
            "str x8, [x11, #64]",
            "sub x12, x29, x21",
            "str x12, [x11, #72]",
            "stp q0, q1, [x11, #80]",
            "stp q2, q3, [x11, #112]",
            "stp q4, q5, [x11, #144]",
            "stp q6, q7, [x11, #176]",
            in("x20") &mut frame as *mut Frame,
            out("x21") _,
            clobber_abi("C"),
        );
    }
    frame.out
}

#[test]
fn every_hook_takes_the_handle_in_x10_and_keeps_x0_to_x8_q0_to_q7_and_fp() {
    let _serial = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let hooks = fast_path_hooks().expect("AArch64 Linux has trampolines");
    // SAFETY: this test process installs no corprof::hooks, and the target
    // accepts any argument and never unwinds.
    unsafe { set_fast_path_targets(Some(scribble), Some(scribble), Some(scribble)) };
    for (name, hook, id) in [
        ("enter", hooks.enter, 0xE17E4usize),
        ("leave", hooks.leave, 0x1EA7E),
        ("tailcall", hooks.tailcall, 0x7A11),
    ] {
        let input = sentinel();
        let before = CALLS.load(Ordering::SeqCst);
        let out = call(hook, id, &input);
        assert_eq!(
            CALLS.load(Ordering::SeqCst),
            before + 1,
            "{name}: the target ran"
        );
        assert_eq!(
            SEEN.load(Ordering::SeqCst),
            id,
            "{name}: the handle comes from x10"
        );
        // x0-x8, q0-q7 (all 128 bits) and fp, as the runtime's helper keeps them.
        assert_eq!(out, input, "{name}");
    }
    // SAFETY: clears the targets; this test process installs no corprof::hooks.
    unsafe { set_fast_path_targets(None, None, None) };
}

/// The check above can fail: without a trampoline between them, the
/// scribbling target loses every register the JIT expects kept.
#[test]
fn the_scribbling_target_called_directly_loses_the_registers() {
    let _serial = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let input = sentinel();
    // A plain C function: it takes x0 (a sentinel) as its handle and only
    // stores it.
    let direct: unsafe extern "system" fn(FunctionIDOrClientID) = {
        unsafe extern "system" fn direct(id: FunctionIDOrClientID) {
            // SAFETY: forwarded.
            unsafe { scribble(id) }
        }
        direct
    };
    let out = call(direct, 0x5, &input);
    assert_eq!(out.x, [u64::MAX; 9]);
    assert_eq!(out.q, [[u64::MAX; 2]; 8]);
}

#[test]
fn with_no_target_a_trampoline_returns_at_once_touching_nothing() {
    let _serial = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let hooks = fast_path_hooks().expect("AArch64 Linux has trampolines");
    // SAFETY: clears the targets; this test process installs no corprof::hooks.
    unsafe { set_fast_path_targets(None, None, None) };
    let before = CALLS.load(Ordering::SeqCst);
    let input = sentinel();
    for hook in [hooks.enter, hooks.leave, hooks.tailcall] {
        assert_eq!(call(hook, 1, &input), input);
    }
    assert_eq!(CALLS.load(Ordering::SeqCst), before);
}
