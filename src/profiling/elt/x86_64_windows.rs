//! x86-64 Windows trampolines. Register lists and their reasons are in the
//! parent module's documentation; the runtime's helpers they mirror are
//! `ProfileEnterNaked`/`ProfileLeaveNaked`/`ProfileTailcallNaked` in
//! dotnet/runtime `src/coreclr/vm/amd64/AsmHelpers.asm` (handle in `rcx`;
//! `rax` and `xmm0` preserved, with the non-volatile registers).

use super::{FastPathHooks, ENTER_TARGET, LEAVE_TARGET, TAILCALL_TARGET};
use crate::profiling::structs::FunctionIDOrClientID;

/// One trampoline: `$name` calls the target stored at `$target`.
macro_rules! windows_trampoline {
    ($name:literal, $target:ident) => {
        core::arch::global_asm!(
            ".text",
            ".p2align 4",
            concat!(".globl ", $name),
            concat!(".def ", $name, "; .scl 2; .type 32; .endef"),
            concat!(".seh_proc ", $name),
            concat!($name, ":"),
            "mov r11, qword ptr [rip + {target}]",
            "test r11, r11",
            "jz 2f",
            "push rax",
            ".seh_pushreg rax",
            // 32 bytes of home area for the callee, 16 for xmm0; the entry
            // rsp is 8 mod 16, the push made it 0 mod 16, 48 keeps it.
            "sub rsp, 48",
            ".seh_stackalloc 48",
            ".seh_endprologue",
            "movdqu xmmword ptr [rsp + 32], xmm0",
            "call r11",
            "movdqu xmm0, xmmword ptr [rsp + 32]",
            "add rsp, 48",
            "pop rax",
            "2:",
            "ret",
            ".seh_endproc",
            target = sym $target,
        );
    };
}

windows_trampoline!("corprof_elt_enter3", ENTER_TARGET);
windows_trampoline!("corprof_elt_leave3", LEAVE_TARGET);
windows_trampoline!("corprof_elt_tailcall3", TAILCALL_TARGET);

extern "system" {
    #[link_name = "corprof_elt_enter3"]
    fn enter3(functionIDOrClientID: FunctionIDOrClientID);
    #[link_name = "corprof_elt_leave3"]
    fn leave3(functionIDOrClientID: FunctionIDOrClientID);
    #[link_name = "corprof_elt_tailcall3"]
    fn tailcall3(functionIDOrClientID: FunctionIDOrClientID);
}

pub(super) const HOOKS: FastPathHooks = FastPathHooks {
    enter: enter3,
    leave: leave3,
    tailcall: tailcall3,
};
