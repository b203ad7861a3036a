//! x86-64 System V (Linux, macOS) trampolines. Register lists and their
//! reasons are in the parent module's documentation; the runtime's helpers
//! they mirror are `ProfileEnterNaked` and `ProfileLeaveNaked` in
//! dotnet/runtime `src/coreclr/vm/amd64/asmhelpers.S`.

use super::{FastPathHooks, ENTER_TARGET, ENTER_WITH_INFO_TARGET, LEAVE_TARGET, TAILCALL_TARGET};
use crate::profiling::hooks::FunctionEnter3WithInfo;
use crate::profiling::ids::COR_PRF_ELT_INFO;
use crate::profiling::structs::FunctionIDOrClientID;

/// A trampoline's opening: `.globl`, on ELF the `.type` that makes it a
/// function, and the label. `$fmt` is `elf` or `macho` (whose symbols take
/// a `_` prefix and have no `.type`/`.size`).
macro_rules! sysv_begin {
    (elf, $name:literal) => {
        concat!(
            ".globl ",
            $name,
            "\n.type ",
            $name,
            ", @function\n",
            $name,
            ":"
        )
    };
    (macho, $name:literal) => {
        concat!(".globl _", $name, "\n_", $name, ":")
    };
}

/// A trampoline's end: on ELF its `.size`, so that debuggers and profilers
/// (callgrind's `--toggle-collect`, used by `scripts/ci/perf-guard.sh`) see
/// its instructions as the named function.
macro_rules! sysv_end {
    (elf, $name:literal) => {
        concat!(".size ", $name, ", . - ", $name)
    };
    (macho, $name:literal) => {
        ""
    };
}

/// The body of the leave and tailcall trampolines (the same register
/// set), with the target's address already in `r11` and `$skip` a local
/// label number for "no target".
macro_rules! sysv_leave_body {
    ($skip:literal) => {
        concat!(
            "test r11, r11\n",
            "jz ",
            $skip,
            "f\n",
            "push rbp\n",
            "mov rbp, rsp\n",
            "and rsp, -16\n",
            "sub rsp, 48\n",
            "movdqu xmmword ptr [rsp], xmm0\n",
            "movdqu xmmword ptr [rsp + 16], xmm1\n",
            "mov qword ptr [rsp + 32], rax\n",
            "mov qword ptr [rsp + 40], rdx\n",
            "call r11\n",
            "movdqu xmm0, xmmword ptr [rsp]\n",
            "movdqu xmm1, xmmword ptr [rsp + 16]\n",
            "mov rax, qword ptr [rsp + 32]\n",
            "mov rdx, qword ptr [rsp + 40]\n",
            "mov rsp, rbp\n",
            "pop rbp\n",
            $skip,
            ":\n",
            "ret",
        )
    };
}

/// Defines the four trampolines for object format `$fmt` (see
/// [`sysv_begin`]).
macro_rules! sysv_trampolines {
    ($fmt:ident) => {
        core::arch::global_asm!(
            ".text",
            // ---- enter: handle in r14; preserve the argument registers,
            // rax and xmm0-xmm7 (ProfileEnterNaked's set).
            ".p2align 4",
            sysv_begin!($fmt, "corprof_elt_enter3"),
            // r11 is clobbered by the runtime's own helper, so it may hold
            // the target; nothing to call means nothing to save.
            "mov r11, qword ptr [rip + {enter}]",
            "test r11, r11",
            "jz 2f",
            "push rbp",
            "mov rbp, rsp",
            "and rsp, -16",
            "sub rsp, 192",
            "movdqu xmmword ptr [rsp], xmm0",
            "movdqu xmmword ptr [rsp + 16], xmm1",
            "movdqu xmmword ptr [rsp + 32], xmm2",
            "movdqu xmmword ptr [rsp + 48], xmm3",
            "movdqu xmmword ptr [rsp + 64], xmm4",
            "movdqu xmmword ptr [rsp + 80], xmm5",
            "movdqu xmmword ptr [rsp + 96], xmm6",
            "movdqu xmmword ptr [rsp + 112], xmm7",
            "mov qword ptr [rsp + 128], rax",
            "mov qword ptr [rsp + 136], rcx",
            "mov qword ptr [rsp + 144], rdx",
            "mov qword ptr [rsp + 152], rsi",
            "mov qword ptr [rsp + 160], rdi",
            "mov qword ptr [rsp + 168], r8",
            "mov qword ptr [rsp + 176], r9",
            "mov rdi, r14",
            "call r11",
            "movdqu xmm0, xmmword ptr [rsp]",
            "movdqu xmm1, xmmword ptr [rsp + 16]",
            "movdqu xmm2, xmmword ptr [rsp + 32]",
            "movdqu xmm3, xmmword ptr [rsp + 48]",
            "movdqu xmm4, xmmword ptr [rsp + 64]",
            "movdqu xmm5, xmmword ptr [rsp + 80]",
            "movdqu xmm6, xmmword ptr [rsp + 96]",
            "movdqu xmm7, xmmword ptr [rsp + 112]",
            "mov rax, qword ptr [rsp + 128]",
            "mov rcx, qword ptr [rsp + 136]",
            "mov rdx, qword ptr [rsp + 144]",
            "mov rsi, qword ptr [rsp + 152]",
            "mov rdi, qword ptr [rsp + 160]",
            "mov r8, qword ptr [rsp + 168]",
            "mov r9, qword ptr [rsp + 176]",
            "mov rsp, rbp",
            "pop rbp",
            "2:",
            "ret",
            sysv_end!($fmt, "corprof_elt_enter3"),
            // ---- leave and tailcall: handle in rdi; preserve rax, rdx, xmm0
            // and xmm1, the registers a value (up to a 16-byte struct) is
            // returned in: the JIT's kill set for these helpers
            // (RBM_PROFILER_LEAVE_TRASH) is every volatile register but
            // these four. One body each (no shared tail), so that each is
            // one whole function.
            ".p2align 4",
            sysv_begin!($fmt, "corprof_elt_leave3"),
            "mov r11, qword ptr [rip + {leave}]",
            sysv_leave_body!("4"),
            sysv_end!($fmt, "corprof_elt_leave3"),
            ".p2align 4",
            sysv_begin!($fmt, "corprof_elt_tailcall3"),
            "mov r11, qword ptr [rip + {tailcall}]",
            sysv_leave_body!("5"),
            sysv_end!($fmt, "corprof_elt_tailcall3"),
            // ---- enter with info: called by the runtime's ProfileEnterNaked
            // as an ordinary C function (handle in rdi, COR_PRF_ELT_INFO in
            // rsi), but CoreCLR 3.1's helper restores only xmm0 and xmm1
            // afterwards, so a hook that uses xmm2-xmm7 corrupts floating-
            // point arguments 3 to 8: keep all eight here.
            ".p2align 4",
            sysv_begin!($fmt, "corprof_elt_enter3_with_info"),
            "mov r11, qword ptr [rip + {enter_info}]",
            "test r11, r11",
            "jz 6f",
            "push rbp",
            "mov rbp, rsp",
            "and rsp, -16",
            "sub rsp, 128",
            "movdqu xmmword ptr [rsp], xmm0",
            "movdqu xmmword ptr [rsp + 16], xmm1",
            "movdqu xmmword ptr [rsp + 32], xmm2",
            "movdqu xmmword ptr [rsp + 48], xmm3",
            "movdqu xmmword ptr [rsp + 64], xmm4",
            "movdqu xmmword ptr [rsp + 80], xmm5",
            "movdqu xmmword ptr [rsp + 96], xmm6",
            "movdqu xmmword ptr [rsp + 112], xmm7",
            "call r11",
            "movdqu xmm0, xmmword ptr [rsp]",
            "movdqu xmm1, xmmword ptr [rsp + 16]",
            "movdqu xmm2, xmmword ptr [rsp + 32]",
            "movdqu xmm3, xmmword ptr [rsp + 48]",
            "movdqu xmm4, xmmword ptr [rsp + 64]",
            "movdqu xmm5, xmmword ptr [rsp + 80]",
            "movdqu xmm6, xmmword ptr [rsp + 96]",
            "movdqu xmm7, xmmword ptr [rsp + 112]",
            "mov rsp, rbp",
            "pop rbp",
            "6:",
            "ret",
            sysv_end!($fmt, "corprof_elt_enter3_with_info"),
            enter = sym ENTER_TARGET,
            leave = sym LEAVE_TARGET,
            tailcall = sym TAILCALL_TARGET,
            enter_info = sym ENTER_WITH_INFO_TARGET,
        );
    };
}

#[cfg(target_vendor = "apple")]
sysv_trampolines!(macho);
#[cfg(not(target_vendor = "apple"))]
sysv_trampolines!(elf);

extern "system" {
    #[link_name = "corprof_elt_enter3"]
    fn enter3(functionIDOrClientID: FunctionIDOrClientID);
    #[link_name = "corprof_elt_leave3"]
    fn leave3(functionIDOrClientID: FunctionIDOrClientID);
    #[link_name = "corprof_elt_tailcall3"]
    fn tailcall3(functionIDOrClientID: FunctionIDOrClientID);
    #[link_name = "corprof_elt_enter3_with_info"]
    fn enter3_with_info(functionIDOrClientID: FunctionIDOrClientID, eltInfo: COR_PRF_ELT_INFO);
}

/// The enter-with-info guard (see [`super::enter_with_info_guard`]).
pub(super) const ENTER_WITH_INFO: FunctionEnter3WithInfo = enter3_with_info;

pub(super) const HOOKS: FastPathHooks = FastPathHooks {
    enter: enter3,
    leave: leave3,
    tailcall: tailcall3,
};
