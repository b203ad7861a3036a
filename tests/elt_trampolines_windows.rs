//! The x86-64 Windows fast-path trampolines called the way the JIT calls
//! them (the handle in `rcx`, a 32-byte home area, `rsp` 16-byte aligned at
//! the call), with a target that scribbles over every volatile register and
//! over its own home area: `rax` and all 128 bits of `xmm0` (the return
//! registers) and the callee-saved registers must come back unchanged, and
//! the target must receive the handle on an aligned stack. The register list
//! is in docs/hooks.md; runs under Wine in scripts/ci/test-windows.sh.
#![cfg(all(target_arch = "x86_64", windows))]

use std::arch::{asm, global_asm};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use corprof::profiling::{fast_path_hooks, set_fast_path_targets, FunctionIDOrClientID};

static SEEN: AtomicUsize = AtomicUsize::new(0);
static CALLS: AtomicUsize = AtomicUsize::new(0);
/// `(rsp + 8) % 16` at the target's entry: 0 when the trampoline kept the
/// stack aligned for its call.
static MISALIGNED: AtomicUsize = AtomicUsize::new(usize::MAX);
/// The targets are process-wide: one test at a time.
static SERIAL: Mutex<()> = Mutex::new(());

// The target, in assembly so that it can write its own home area (the 32
// bytes above its return address, which belong to it under the Windows x64
// convention) and every volatile register the convention lets it.
global_asm!(
    ".text",
    ".globl corprof_test_scribble",
    "corprof_test_scribble:",
    "mov qword ptr [rip + {seen}], rcx",
    "lea rax, [rsp + 8]",
    "and rax, 15",
    "mov qword ptr [rip + {misaligned}], rax",
    "lock inc qword ptr [rip + {calls}]",
    "mov qword ptr [rsp + 8], -1",
    "mov qword ptr [rsp + 16], -1",
    "mov qword ptr [rsp + 24], -1",
    "mov qword ptr [rsp + 32], -1",
    "mov rax, -1",
    "mov rcx, -1",
    "mov rdx, -1",
    "mov r8, -1",
    "mov r9, -1",
    "mov r10, -1",
    "mov r11, -1",
    "pcmpeqd xmm0, xmm0",
    "pcmpeqd xmm1, xmm1",
    "pcmpeqd xmm2, xmm2",
    "pcmpeqd xmm3, xmm3",
    "pcmpeqd xmm4, xmm4",
    "pcmpeqd xmm5, xmm5",
    "ret",
    seen = sym SEEN,
    misaligned = sym MISALIGNED,
    calls = sym CALLS,
);

extern "C" {
    fn corprof_test_scribble(id: FunctionIDOrClientID);
}

/// Register values before and after a trampoline call.
#[repr(C)]
#[derive(Debug, PartialEq, Eq, Clone, Copy)]
struct Regs {
    gpr: [u64; 9], // rax rcx rdx r8 r9 r10 r11 rsi rdi
    xmm: [[u64; 2]; 8],
}

const RAX: usize = 0;
const RCX: usize = 1;
const RSI: usize = 7;
const RDI: usize = 8;

/// Everything the asm block reads and writes, behind one pointer (r12).
#[repr(C)]
struct Frame {
    hook: usize,
    input: Regs,
    out: Regs,
}

#[test]
fn the_frame_layout_is_what_the_assembly_uses() {
    assert_eq!(std::mem::size_of::<Regs>(), 200);
    assert_eq!(std::mem::offset_of!(Frame, input), 8);
    assert_eq!(std::mem::offset_of!(Frame, out), 208);
}

fn sentinel(id: usize) -> Regs {
    let mut regs = Regs {
        gpr: [0; 9],
        xmm: [[0; 2]; 8],
    };
    for (i, r) in regs.gpr.iter_mut().enumerate() {
        *r = 0x1111_0000_0000_0000 + i as u64;
    }
    regs.gpr[RCX] = id as u64;
    for (i, x) in regs.xmm.iter_mut().enumerate() {
        *x = [
            0x2222_0000_0000_0000 + i as u64,
            0x3333_0000_0000_0000 + i as u64,
        ];
    }
    regs
}

/// Calls `hook` as the JIT does: every register loaded from `input` (the
/// handle in rcx), rsp aligned to 16 with 32 bytes of home area; returns
/// the registers afterwards.
fn call(hook: usize, input: &Regs) -> Regs {
    let mut frame = Frame {
        hook,
        input: *input,
        out: Regs {
            gpr: [0; 9],
            xmm: [[0; 2]; 8],
        },
    };
    // SAFETY: the frame is valid for reads and writes; rsi, rdi, rbp, xmm6
    // and xmm7 (callee-saved on Windows) are saved and restored by hand, rsp
    // comes back through rbp, r12 (the frame) is callee-saved and kept by
    // the trampoline, and everything volatile is declared clobbered.
    unsafe {
        asm!(
            "push rsi",
            "push rdi",
            "push rbp",
            "mov rbp, rsp",
            "and rsp, -16",
            "sub rsp, 32",
            "movdqu xmmword ptr [rsp], xmm6",
            "movdqu xmmword ptr [rsp + 16], xmm7",
            // 32 bytes of home area for the hook.
            "sub rsp, 32",
            "movdqu xmm0, [r12 + 8 + 72]",
            "movdqu xmm1, [r12 + 8 + 88]",
            "movdqu xmm2, [r12 + 8 + 104]",
            "movdqu xmm3, [r12 + 8 + 120]",
            "movdqu xmm4, [r12 + 8 + 136]",
            "movdqu xmm5, [r12 + 8 + 152]",
            "movdqu xmm6, [r12 + 8 + 168]",
            "movdqu xmm7, [r12 + 8 + 184]",
            "mov rax, [r12 + 8]",
            "mov rcx, [r12 + 8 + 8]",
            "mov rdx, [r12 + 8 + 16]",
            "mov r8, [r12 + 8 + 24]",
            "mov r9, [r12 + 8 + 32]",
            "mov r10, [r12 + 8 + 40]",
            "mov r11, [r12 + 8 + 48]",
            "mov rsi, [r12 + 8 + 56]",
            "mov rdi, [r12 + 8 + 64]",
            "call qword ptr [r12]",
            "mov [r12 + 208], rax",
            "mov [r12 + 208 + 8], rcx",
            "mov [r12 + 208 + 16], rdx",
            "mov [r12 + 208 + 24], r8",
            "mov [r12 + 208 + 32], r9",
            "mov [r12 + 208 + 40], r10",
            "mov [r12 + 208 + 48], r11",
            "mov [r12 + 208 + 56], rsi",
            "mov [r12 + 208 + 64], rdi",
            "movdqu [r12 + 208 + 72], xmm0",
            "movdqu [r12 + 208 + 88], xmm1",
            "movdqu [r12 + 208 + 104], xmm2",
            "movdqu [r12 + 208 + 120], xmm3",
            "movdqu [r12 + 208 + 136], xmm4",
            "movdqu [r12 + 208 + 152], xmm5",
            "movdqu [r12 + 208 + 168], xmm6",
            "movdqu [r12 + 208 + 184], xmm7",
            "add rsp, 32",
            "movdqu xmm6, xmmword ptr [rsp]",
            "movdqu xmm7, xmmword ptr [rsp + 16]",
            "mov rsp, rbp",
            "pop rbp",
            "pop rdi",
            "pop rsi",
            in("r12") &mut frame as *mut Frame,
            clobber_abi("C"),
        );
    }
    frame.out
}

/// The registers the trampolines must keep: rax, xmm0 (all 128 bits), and
/// the callee-saved rsi, rdi, xmm6, xmm7 the test can load.
fn assert_kept(out: &Regs, input: &Regs, what: &str) {
    assert_eq!(out.gpr[RAX], input.gpr[RAX], "{what}: rax");
    assert_eq!(out.xmm[0], input.xmm[0], "{what}: xmm0");
    assert_eq!(
        (out.gpr[RSI], out.gpr[RDI]),
        (input.gpr[RSI], input.gpr[RDI]),
        "{what}: rsi, rdi"
    );
    assert_eq!(&out.xmm[6..], &input.xmm[6..], "{what}: xmm6, xmm7");
}

#[test]
fn every_trampoline_takes_the_handle_in_rcx_and_keeps_rax_xmm0_and_the_callee_saved() {
    let _serial = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let hooks = fast_path_hooks().expect("x86-64 Windows has trampolines");
    // SAFETY: this test process installs no corprof::hooks, and the target
    // accepts any argument and never unwinds.
    unsafe {
        set_fast_path_targets(
            Some(corprof_test_scribble),
            Some(corprof_test_scribble),
            Some(corprof_test_scribble),
        )
    };
    for (what, hook, id) in [
        ("enter", hooks.enter, 0xE17E4usize),
        ("leave", hooks.leave, 0x1EA7E),
        ("tailcall", hooks.tailcall, 0x7A11),
    ] {
        let input = sentinel(id);
        let before = CALLS.load(Ordering::SeqCst);
        MISALIGNED.store(usize::MAX, Ordering::SeqCst);
        let out = call(hook as usize, &input);
        assert_eq!(CALLS.load(Ordering::SeqCst), before + 1, "{what}: one call");
        assert_eq!(
            SEEN.load(Ordering::SeqCst),
            id,
            "{what}: the handle comes from rcx"
        );
        assert_eq!(
            MISALIGNED.load(Ordering::SeqCst),
            0,
            "{what}: rsp is 16-byte aligned at the target's call"
        );
        assert_kept(&out, &input, what);
        // The rest was clobbered by the target: the test can see a lost register.
        assert_eq!(out.gpr[RCX], u64::MAX, "{what}: rcx is volatile");
        assert_eq!(out.xmm[1], [u64::MAX; 2], "{what}: xmm1 is volatile");
    }
    // SAFETY: clears the targets; this test process installs no corprof::hooks.
    unsafe { set_fast_path_targets(None, None, None) };
}

#[test]
fn with_no_target_a_trampoline_returns_at_once_touching_nothing() {
    let _serial = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let hooks = fast_path_hooks().expect("x86-64 Windows has trampolines");
    // SAFETY: clears the targets; this test process installs no corprof::hooks.
    unsafe { set_fast_path_targets(None, None, None) };
    let before = CALLS.load(Ordering::SeqCst);
    for hook in [hooks.enter, hooks.leave, hooks.tailcall] {
        let input = sentinel(7);
        let mut expected = input;
        // The trampoline loads the target into r11 to test it.
        expected.gpr[6] = 0;
        assert_eq!(call(hook as usize, &input), expected);
    }
    assert_eq!(CALLS.load(Ordering::SeqCst), before);
}

/// The check above can fail: without a trampoline between them, the
/// scribbling target loses rax and xmm0.
#[test]
fn the_scribbling_target_called_directly_loses_rax_and_xmm0() {
    let _serial = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let input = sentinel(0xD1EC7);
    let out = call(
        corprof_test_scribble as unsafe extern "C" fn(FunctionIDOrClientID) as usize,
        &input,
    );
    assert_eq!(SEEN.load(Ordering::SeqCst), 0xD1EC7);
    assert_eq!(out.gpr[RAX], u64::MAX);
    assert_eq!(out.xmm[0], [u64::MAX; 2]);
    // The callee-saved ones it does not touch.
    assert_eq!(&out.xmm[6..], &input.xmm[6..]);
}
