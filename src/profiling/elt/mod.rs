//! Trampolines for the fast-path ELT hooks; see [`FastPathHooks`].

use core::sync::atomic::{AtomicPtr, Ordering};

use crate::profiling::hooks::{
    FunctionEnter3, FunctionEnter3WithInfo, FunctionLeave3, FunctionTailcall3,
};
use crate::profiling::ids::COR_PRF_ELT_INFO;
use crate::profiling::structs::FunctionIDOrClientID;

#[cfg(all(target_arch = "x86_64", not(windows)))]
mod x86_64_sysv;

#[cfg(all(target_arch = "x86_64", windows))]
mod x86_64_windows;

#[cfg(all(target_arch = "aarch64", not(windows)))]
mod aarch64;

/// A plain Rust (C-convention) function a trampoline calls, with the
/// `FunctionIDOrClientID` the JIT passed.
pub type FastPathTarget = unsafe extern "C" fn(function_id_or_client_id: FunctionIDOrClientID);

/// What the trampolines call: a `FastPathTarget` stored as a pointer, null
/// for "call nothing". Read by the assembly with one load.
pub(crate) static ENTER_TARGET: AtomicPtr<()> = AtomicPtr::new(core::ptr::null_mut());
pub(crate) static LEAVE_TARGET: AtomicPtr<()> = AtomicPtr::new(core::ptr::null_mut());
pub(crate) static TAILCALL_TARGET: AtomicPtr<()> = AtomicPtr::new(core::ptr::null_mut());
/// What the enter-with-info guard calls: a [`WithInfoTarget`], or null.
pub(crate) static ENTER_WITH_INFO_TARGET: AtomicPtr<()> = AtomicPtr::new(core::ptr::null_mut());

/// A plain Rust (C-convention) `FunctionEnter3WithInfo` the guard of
/// [`enter_with_info_guard`] calls.
pub type WithInfoTarget = unsafe extern "C" fn(
    function_id_or_client_id: FunctionIDOrClientID,
    elt_info: COR_PRF_ELT_INFO,
);

/// A `FunctionEnter3WithInfo` hook that keeps `xmm0`-`xmm7` around the
/// target set with [`set_enter_with_info_target`], on platforms whose
/// runtime needs it (`None` elsewhere: there pass the target itself).
///
/// The WithInfo hooks are called by the runtime's own helper
/// (`ProfileEnterNaked`), which is meant to restore the argument registers
/// afterwards. On x86-64 Linux and macOS, CoreCLR 3.1's helper (dotnet/coreclr
/// `src/vm/amd64/asmhelpers.S`) restores only `xmm0` and `xmm1`, so a hook
/// that uses `xmm2`-`xmm7` (any Rust or C code may) corrupts a method's
/// floating-point arguments 3 to 8; later runtimes restore all eight. The
/// e2e test `with_info_hooks_count_the_same_calls` shows it (a method with
/// eight `double` arguments returned NaN without the guard).
pub fn enter_with_info_guard() -> Option<FunctionEnter3WithInfo> {
    #[cfg(all(target_arch = "x86_64", not(windows)))]
    {
        Some(x86_64_sysv::ENTER_WITH_INFO)
    }
    #[cfg(not(all(target_arch = "x86_64", not(windows))))]
    {
        None
    }
}

/// Sets what the guard of [`enter_with_info_guard`] calls (`None`: nothing).
///
/// # Safety
///
/// As for [`set_fast_path_targets`]: the target is process-wide and
/// `corprof::hooks` installs its own (do not replace it while hooks
/// installed by `hooks::ProfilerInfoHooks::set_function_hooks` may run), and the target
/// must accept every `FunctionIDOrClientID` and `COR_PRF_ELT_INFO` the
/// runtime passes, on any thread, without blocking or unwinding.
pub unsafe fn set_enter_with_info_target(target: Option<WithInfoTarget>) {
    let raw = target.map_or(core::ptr::null_mut(), |f| f as *mut ());
    ENTER_WITH_INFO_TARGET.store(raw, Ordering::Release);
}

/// Trampolines for the fast-path ELT hooks (`FunctionEnter3`,
/// `FunctionLeave3`, `FunctionTailcall3`).
///
/// The JIT calls a fast-path hook **directly from generated code**, with the
/// register contract of its own profiler helper rather than the platform's C
/// convention: the runtime's `ProfileEnterNaked`/`ProfileLeaveNaked`/
/// `ProfileTailcallNaked` (dotnet/runtime `src/coreclr/vm/amd64/asmhelpers.S`,
/// `src/coreclr/vm/amd64/AsmHelpers.asm`, `src/coreclr/vm/arm64/asmhelpers.S`)
/// are what the JIT calls when the profiler asks for the slow path, and the
/// JIT calls a fast-path hook in exactly the same way. A hook must therefore
/// preserve what those helpers preserve, and take its argument where they
/// take it. An ordinary `extern "C"` function does neither (and on x86-64
/// Linux it would even read the wrong register: see below).
///
/// The crate provides one assembly trampoline per hook and platform,
/// written with `core::arch::global_asm!` (the crate's MSRV has no naked
/// functions). Each saves the registers listed below, moves the
/// `FunctionIDOrClientID` into the C first-argument register, calls the
/// plain Rust function set with [`set_fast_path_targets`] (nothing when none
/// is set), restores the registers and returns.
///
/// | platform | argument in | preserved by the trampoline (as by the runtime's helper) |
/// |---|---|---|
/// | x86-64 SysV (Linux, macOS), enter | `r14` | `rax rcx rdx rsi rdi r8 r9`, `xmm0`–`xmm7` (all 128 bits), and every callee-saved register |
/// | x86-64 SysV, leave and tailcall | `rdi` | `rax rdx xmm0 xmm1` (the return registers), callee-saved |
/// | x86-64 Windows, all three | `rcx` | `rax`, `xmm0` (the return registers), callee-saved (incl. `xmm6`–`xmm15`) |
/// | AArch64 (Linux, macOS), all three | `x10` | `x0`–`x8` (arguments, indirect result), `q0`–`q7`, `fp`, `lr`, callee-saved |
///
/// Why these:
///
/// - **x86-64 SysV enter.** The JIT passes the function's handle in `r14`
///   and the caller's stack pointer in `r15` (dotnet/coreclr#19023 records
///   that this differs from the documentation, which implies `rdi`), and the
///   enter probe runs in the prolog where the argument registers still hold
///   the method's arguments: the runtime's `ProfileEnterNaked` saves and
///   restores `rdi rsi rdx rcx r8 r9 rax` and `xmm0`–`xmm7`, and clobbers
///   only `r10`/`r11`. The trampoline saves the same set (the vector
///   registers in full, where the helper keeps only their low 64 bits).
/// - **x86-64 SysV leave/tailcall.** The handle comes in `rdi`. A 16-byte
///   struct is returned in any two of `rax rdx xmm0 xmm1`, and the JIT's
///   kill set for these helpers (`RBM_PROFILER_LEAVE_TRASH`: every volatile
///   register but those four) says that is all the generated code expects
///   kept. `ProfileLeaveNaked` keeps those four, and also restores
///   `xmm2`–`xmm7` only because it spills them for its argument reader.
/// - **x86-64 Windows.** The handle comes in `rcx`; `AsmHelpers.asm`
///   documents that its helpers preserve the non-volatile registers plus
///   `rax` and `xmm0`, and not the argument registers (the JIT homes
///   arguments to the stack before the enter probe). The trampoline also
///   reserves the 32-byte home area the Windows convention requires.
/// - **AArch64.** The JIT passes the handle in `x10` and the caller's stack
///   pointer in `x11`; the runtime's helper saves `x0`–`x8` and `q0`–`q7`
///   around its call, and the JIT treats only the other volatile registers
///   as clobbered (`RBM_PROFILER_ENTER_TRASH` excludes the argument
///   registers and `fp`).
///
/// Everything else the called Rust function may clobber is volatile in the
/// platform's C convention and in the JIT's kill set for these helpers
/// (`RBM_PROFILER_*_TRASH` in the JIT's `target*.h`), so the Rust function
/// itself preserves the callee-saved registers as any C function does.
///
/// The targets run in the hook's special context: no blocking, no managed
/// code, and no unwinding out (the facade's targets abort on a panic).
///
/// The three trampolines, to pass to `SetEnterLeaveFunctionHooks3`.
#[derive(Clone, Copy, Debug)]
pub struct FastPathHooks {
    /// The `FunctionEnter3` trampoline.
    pub enter: FunctionEnter3,
    /// The `FunctionLeave3` trampoline.
    pub leave: FunctionLeave3,
    /// The `FunctionTailcall3` trampoline.
    pub tailcall: FunctionTailcall3,
}

/// The trampolines for this platform, or `None` where the crate has none
/// (32-bit targets, Windows on Arm).
pub fn fast_path_hooks() -> Option<FastPathHooks> {
    platform_hooks()
}

#[cfg(all(target_arch = "x86_64", not(windows)))]
fn platform_hooks() -> Option<FastPathHooks> {
    Some(x86_64_sysv::HOOKS)
}

#[cfg(all(target_arch = "x86_64", windows))]
fn platform_hooks() -> Option<FastPathHooks> {
    Some(x86_64_windows::HOOKS)
}

#[cfg(all(target_arch = "aarch64", not(windows)))]
fn platform_hooks() -> Option<FastPathHooks> {
    Some(aarch64::HOOKS)
}

#[cfg(not(any(
    all(target_arch = "x86_64", not(windows)),
    all(target_arch = "x86_64", windows),
    all(target_arch = "aarch64", not(windows))
)))]
fn platform_hooks() -> Option<FastPathHooks> {
    None
}

/// Sets the functions the trampolines call (`None`: call nothing, the
/// trampoline returns at once). One set per process, shared by the three
/// trampolines of [`fast_path_hooks`].
///
/// Set them before handing the trampolines to the runtime: the runtime
/// calls the hooks from many threads, and a change while managed code runs
/// takes effect on each thread at some point (each load is atomic, so a
/// trampoline calls either the old or the new target).
///
/// # Safety
///
/// - The targets are process-wide, and `corprof::hooks` installs its own
///   (`hooks::ProfilerInfoHooks::set_function_hooks`, with a `FunctionIDMapper2` whose
///   client IDs point into the hooks' own records). Do not call this while
///   hooks installed that way may run: their trampolines would hand those
///   client IDs to your targets, and theirs would stop being called.
/// - Each target must accept every `FunctionIDOrClientID` the JIT passes
///   (function IDs, or the client IDs the profiler's own mapper answered),
///   on any thread, in the hook's context: no blocking, no managed code, no
///   unwinding out.
pub unsafe fn set_fast_path_targets(
    enter: Option<FastPathTarget>,
    leave: Option<FastPathTarget>,
    tailcall: Option<FastPathTarget>,
) {
    fn raw(target: Option<FastPathTarget>) -> *mut () {
        target.map_or(core::ptr::null_mut(), |f| f as *mut ())
    }
    ENTER_TARGET.store(raw(enter), Ordering::Release);
    LEAVE_TARGET.store(raw(leave), Ordering::Release);
    TAILCALL_TARGET.store(raw(tailcall), Ordering::Release);
}
