//! AArch64 (Linux, macOS) trampolines. Register lists and their reasons
//! are in the parent module's documentation; the runtime's helper they
//! mirror is `GenerateProfileHelper` (`ProfileEnterNaked`,
//! `ProfileLeaveNaked`, `ProfileTailcallNaked`) in dotnet/runtime
//! `src/coreclr/vm/arm64/asmhelpers.S`: handle in `x10`, `x0`-`x8` and
//! `q0`-`q7` saved around the call.

use super::{FastPathHooks, ENTER_TARGET, LEAVE_TARGET, TAILCALL_TARGET};
use crate::profiling::structs::FunctionIDOrClientID;

/// One trampoline: `$name` calls the target stored at `$target`, loaded
/// with `$load` (the object format's page/offset relocation syntax);
/// `$type` and `$size` are its ELF `.type` and `.size` lines (empty on
/// Mach-O, which has neither), so that debuggers, profilers and `nm -S`
/// see a function of known extent.
macro_rules! arm64_trampoline {
    ($name:literal, $target:ident, $load:literal, $type:expr, $size:expr) => {
        core::arch::global_asm!(
            ".text",
            ".p2align 4",
            concat!(".globl ", $name),
            $type,
            concat!($name, ":"),
            // x9 is volatile for the JIT across this helper (its kill set
            // keeps only the argument registers and fp).
            $load,
            "cbz x9, 2f",
            "stp x29, x30, [sp, #-224]!",
            "mov x29, sp",
            "stp x0, x1, [sp, #16]",
            "stp x2, x3, [sp, #32]",
            "stp x4, x5, [sp, #48]",
            "stp x6, x7, [sp, #64]",
            "str x8, [sp, #80]",
            "stp q0, q1, [sp, #96]",
            "stp q2, q3, [sp, #128]",
            "stp q4, q5, [sp, #160]",
            "stp q6, q7, [sp, #192]",
            "mov x0, x10",
            "blr x9",
            "ldp x0, x1, [sp, #16]",
            "ldp x2, x3, [sp, #32]",
            "ldp x4, x5, [sp, #48]",
            "ldp x6, x7, [sp, #64]",
            "ldr x8, [sp, #80]",
            "ldp q0, q1, [sp, #96]",
            "ldp q2, q3, [sp, #128]",
            "ldp q4, q5, [sp, #160]",
            "ldp q6, q7, [sp, #192]",
            "ldp x29, x30, [sp], #224",
            "2:",
            "ret",
            $size,
            target = sym $target,
        );
    };
}

#[cfg(target_vendor = "apple")]
macro_rules! trampolines {
    () => {
        arm64_trampoline!(
            "_corprof_elt_enter3",
            ENTER_TARGET,
            "adrp x9, {target}@PAGE\nldr x9, [x9, {target}@PAGEOFF]",
            "",
            ""
        );
        arm64_trampoline!(
            "_corprof_elt_leave3",
            LEAVE_TARGET,
            "adrp x9, {target}@PAGE\nldr x9, [x9, {target}@PAGEOFF]",
            "",
            ""
        );
        arm64_trampoline!(
            "_corprof_elt_tailcall3",
            TAILCALL_TARGET,
            "adrp x9, {target}@PAGE\nldr x9, [x9, {target}@PAGEOFF]",
            "",
            ""
        );
    };
}

#[cfg(not(target_vendor = "apple"))]
macro_rules! trampolines {
    () => {
        arm64_trampoline!(
            "corprof_elt_enter3",
            ENTER_TARGET,
            "adrp x9, {target}\nldr x9, [x9, :lo12:{target}]",
            ".type corprof_elt_enter3, %function",
            ".size corprof_elt_enter3, . - corprof_elt_enter3"
        );
        arm64_trampoline!(
            "corprof_elt_leave3",
            LEAVE_TARGET,
            "adrp x9, {target}\nldr x9, [x9, :lo12:{target}]",
            ".type corprof_elt_leave3, %function",
            ".size corprof_elt_leave3, . - corprof_elt_leave3"
        );
        arm64_trampoline!(
            "corprof_elt_tailcall3",
            TAILCALL_TARGET,
            "adrp x9, {target}\nldr x9, [x9, :lo12:{target}]",
            ".type corprof_elt_tailcall3, %function",
            ".size corprof_elt_tailcall3, . - corprof_elt_tailcall3"
        );
    };
}

trampolines!();

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
