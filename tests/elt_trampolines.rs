//! The fast-path trampolines called the way the JIT calls them (x86-64
//! SysV: enter's handle in `r14`, leave's and tailcall's in `rdi`), with a
//! target that scribbles over every volatile register: the registers the
//! JIT expects kept must come back unchanged, and the target must receive
//! the handle. See docs/hooks.md for the register lists.
#![cfg(all(target_arch = "x86_64", target_os = "linux"))]

use std::arch::asm;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use corprof::profiling::{
    enter_with_info_guard, fast_path_hooks, set_enter_with_info_target, set_fast_path_targets,
    FunctionIDOrClientID, COR_PRF_ELT_INFO,
};

static SEEN: AtomicUsize = AtomicUsize::new(0);
static CALLS: AtomicUsize = AtomicUsize::new(0);
/// The targets are process-wide: one test at a time.
static SERIAL: Mutex<()> = Mutex::new(());

/// Records the handle, then overwrites every volatile register.
unsafe extern "C" fn scribble(id: FunctionIDOrClientID) {
    SEEN.store(id.client_id(), Ordering::SeqCst);
    CALLS.fetch_add(1, Ordering::SeqCst);
    // SAFETY: only volatile registers, all declared clobbered.
    unsafe {
        asm!(
            "mov rax, -1",
            "mov rcx, -1",
            "mov rdx, -1",
            "mov rsi, -1",
            "mov rdi, -1",
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
            "pcmpeqd xmm6, xmm6",
            "pcmpeqd xmm7, xmm7",
            clobber_abi("C"),
        );
    }
}

/// Register values before and after a trampoline call.
#[repr(C)]
#[derive(Debug, PartialEq, Eq, Clone, Copy)]
struct Regs {
    gpr: [u64; 7], // rax rcx rdx rsi rdi r8 r9
    xmm: [[u64; 2]; 8],
}

/// Everything the asm block reads and writes, behind one pointer (r12).
#[repr(C)]
struct Frame {
    hook: usize,
    id: usize,
    in_r14: usize,
    input: Regs,
    out: Regs,
}

fn sentinel() -> Regs {
    let mut regs = Regs {
        gpr: [0; 7],
        xmm: [[0; 2]; 8],
    };
    for (i, r) in regs.gpr.iter_mut().enumerate() {
        *r = 0x1111_0000_0000_0000 + i as u64;
    }
    for (i, x) in regs.xmm.iter_mut().enumerate() {
        *x = [
            0x2222_0000_0000_0000 + i as u64,
            0x3333_0000_0000_0000 + i as u64,
        ];
    }
    regs
}

/// Calls `hook` as the JIT does, with the handle `id` in r14 (enter) or in
/// rdi (leave, tailcall), every other register loaded from `input`; returns
/// the registers afterwards.
fn call(
    hook: unsafe extern "system" fn(FunctionIDOrClientID),
    id: usize,
    in_r14: bool,
    input: &Regs,
) -> Regs {
    let mut frame = Frame {
        hook: hook as usize,
        id,
        in_r14: in_r14 as usize,
        input: *input,
        out: Regs {
            gpr: [0; 7],
            xmm: [[0; 2]; 8],
        },
    };
    // SAFETY: the frame is valid for reads and writes; r13-r15 are saved
    // and restored by hand, r12 (the frame) is callee-saved and kept by the
    // trampoline, and everything volatile is declared clobbered.
    unsafe {
        asm!(
            "push r13",
            "push r14",
            "push r15",
            "mov r15, [r12]",
            "mov r14, [r12 + 8]",
            "movdqu xmm0, [r12 + 24 + 56]",
            "movdqu xmm1, [r12 + 24 + 72]",
            "movdqu xmm2, [r12 + 24 + 88]",
            "movdqu xmm3, [r12 + 24 + 104]",
            "movdqu xmm4, [r12 + 24 + 120]",
            "movdqu xmm5, [r12 + 24 + 136]",
            "movdqu xmm6, [r12 + 24 + 152]",
            "movdqu xmm7, [r12 + 24 + 168]",
            "mov rax, [r12 + 24]",
            "mov rcx, [r12 + 24 + 8]",
            "mov rdx, [r12 + 24 + 16]",
            "mov rsi, [r12 + 24 + 24]",
            "mov rdi, [r12 + 24 + 32]",
            "mov r8, [r12 + 24 + 40]",
            "mov r9, [r12 + 24 + 48]",
            "cmp qword ptr [r12 + 16], 0",
            "jne 2f",
            // leave/tailcall: the handle in rdi, r14 left as garbage
            "mov rdi, r14",
            "mov r14, -1",
            "2:",
            "call r15",
            "mov [r12 + 208], rax",
            "mov [r12 + 208 + 8], rcx",
            "mov [r12 + 208 + 16], rdx",
            "mov [r12 + 208 + 24], rsi",
            "mov [r12 + 208 + 32], rdi",
            "mov [r12 + 208 + 40], r8",
            "mov [r12 + 208 + 48], r9",
            "movdqu [r12 + 208 + 56], xmm0",
            "movdqu [r12 + 208 + 72], xmm1",
            "movdqu [r12 + 208 + 88], xmm2",
            "movdqu [r12 + 208 + 104], xmm3",
            "movdqu [r12 + 208 + 120], xmm4",
            "movdqu [r12 + 208 + 136], xmm5",
            "movdqu [r12 + 208 + 152], xmm6",
            "movdqu [r12 + 208 + 168], xmm7",
            "pop r15",
            "pop r14",
            "pop r13",
            in("r12") &mut frame as *mut Frame,
            clobber_abi("C"),
        );
    }
    frame.out
}

#[test]
fn enter_takes_the_handle_in_r14_and_keeps_arguments_and_rax() {
    let _serial = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let hooks = fast_path_hooks().expect("x86-64 has trampolines");
    // SAFETY: this test process installs no corprof::hooks, and the target
    // accepts any argument and never unwinds.
    unsafe { set_fast_path_targets(Some(scribble), Some(scribble), Some(scribble)) };
    let input = sentinel();
    let before = CALLS.load(Ordering::SeqCst);
    let out = call(hooks.enter, 0xE17E4, true, &input);
    assert_eq!(CALLS.load(Ordering::SeqCst), before + 1);
    assert_eq!(
        SEEN.load(Ordering::SeqCst),
        0xE17E4,
        "the handle comes from r14"
    );
    // rax rcx rdx rsi rdi r8 r9 and xmm0-xmm7, all 128 bits.
    assert_eq!(out, input);
    // SAFETY: clears the targets; this test process installs no corprof::hooks.
    unsafe { set_fast_path_targets(None, None, None) };
}

#[test]
fn leave_and_tailcall_take_the_handle_in_rdi_and_keep_the_return_registers() {
    let _serial = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let hooks = fast_path_hooks().expect("x86-64 has trampolines");
    // SAFETY: this test process installs no corprof::hooks, and the target
    // accepts any argument and never unwinds.
    unsafe { set_fast_path_targets(Some(scribble), Some(scribble), Some(scribble)) };
    for (hook, id) in [(hooks.leave, 0x1EA7Eusize), (hooks.tailcall, 0x7A11usize)] {
        let input = sentinel();
        let out = call(hook, id, false, &input);
        assert_eq!(SEEN.load(Ordering::SeqCst), id, "the handle comes from rdi");
        // rax, rdx (gpr 0 and 2), xmm0 and xmm1.
        assert_eq!((out.gpr[0], out.gpr[2]), (input.gpr[0], input.gpr[2]));
        assert_eq!(&out.xmm[..2], &input.xmm[..2]);
        // The rest was clobbered by the target: the test can see a lost register.
        assert_eq!(out.gpr[1], u64::MAX, "rcx is volatile for leave");
    }
    // SAFETY: clears the targets; this test process installs no corprof::hooks.
    unsafe { set_fast_path_targets(None, None, None) };
}

#[test]
fn with_no_target_a_trampoline_returns_at_once_touching_nothing() {
    let _serial = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let hooks = fast_path_hooks().expect("x86-64 has trampolines");
    // SAFETY: clears the targets; this test process installs no corprof::hooks.
    unsafe { set_fast_path_targets(None, None, None) };
    let before = CALLS.load(Ordering::SeqCst);
    let input = sentinel();
    assert_eq!(call(hooks.enter, 1, true, &input), input);
    let mut expected = input;
    expected.gpr[4] = 2; // rdi held the handle
    assert_eq!(call(hooks.leave, 2, false, &input), expected);
    assert_eq!(CALLS.load(Ordering::SeqCst), before);
}

static SEEN_ELT: AtomicUsize = AtomicUsize::new(0);

/// Records both arguments, then overwrites every volatile register.
unsafe extern "C" fn scribble_with_info(id: FunctionIDOrClientID, elt: COR_PRF_ELT_INFO) {
    SEEN_ELT.store(elt.as_raw(), Ordering::SeqCst);
    // SAFETY: forwarded; the same scribbling.
    unsafe { scribble(id) };
}

/// The WithInfo enter guard is called like a C function (by the runtime's
/// helper) and must keep xmm0-xmm7, which CoreCLR 3.1's helper does not
/// restore.
#[test]
fn the_with_info_guard_keeps_every_floating_point_argument_register() {
    let _serial = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let guard = enter_with_info_guard().expect("x86-64 SysV has the guard");
    // SAFETY: this test process installs no corprof::hooks, and the target
    // accepts any argument and never unwinds.
    unsafe { set_enter_with_info_target(Some(scribble_with_info)) };
    let input = sentinel();
    let mut out = [[0u64; 2]; 8];
    // SAFETY: a C call with two integer arguments; xmm0-xmm7 loaded before
    // and stored after; everything volatile declared clobbered.
    unsafe {
        asm!(
            "movdqu xmm0, [{i}]",
            "movdqu xmm1, [{i} + 16]",
            "movdqu xmm2, [{i} + 32]",
            "movdqu xmm3, [{i} + 48]",
            "movdqu xmm4, [{i} + 64]",
            "movdqu xmm5, [{i} + 80]",
            "movdqu xmm6, [{i} + 96]",
            "movdqu xmm7, [{i} + 112]",
            "call {guard}",
            "movdqu [r12], xmm0",
            "movdqu [r12 + 16], xmm1",
            "movdqu [r12 + 32], xmm2",
            "movdqu [r12 + 48], xmm3",
            "movdqu [r12 + 64], xmm4",
            "movdqu [r12 + 80], xmm5",
            "movdqu [r12 + 96], xmm6",
            "movdqu [r12 + 112], xmm7",
            i = in(reg) input.xmm.as_ptr(),
            guard = in(reg) guard as usize,
            in("rdi") 0xAB_usize,
            in("rsi") 0xCD_usize,
            in("r12") out.as_mut_ptr(),
            clobber_abi("C"),
        );
    }
    assert_eq!(SEEN.load(Ordering::SeqCst), 0xAB);
    assert_eq!(SEEN_ELT.load(Ordering::SeqCst), 0xCD);
    assert_eq!(out, input.xmm);
    // SAFETY: clears the targets; this test process installs no corprof::hooks.
    unsafe { set_enter_with_info_target(None) };
}
