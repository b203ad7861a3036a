//! Windows x64: what [`SamplingMode::ThreadSuspend`](super::SamplingMode)
//! needs of the OS to stop one thread: `SuspendThread`, `GetThreadContext`
//! and `ResumeThread`, and `OpenThread` for a thread whose handle the
//! runtime does not give.
//!
//! Transcribed from the Windows SDK: `processthreadsapi.h` (the functions),
//! `handleapi.h` (`CloseHandle`) and `winnt.h` (the AMD64 `CONTEXT`, its
//! `CONTEXT_*` flags, the `THREAD_*` access rights), as mingw-w64 ships
//! them (`/usr/share/mingw-w64/include/winnt.h`). The layout of `CONTEXT`
//! (1,232 bytes, aligned to 16, `ContextFlags` at 0x30, `Rsp` at 0x98,
//! `Rip` at 0xF8) is checked by the tests below.

use core::ffi::c_void;

/// `CONTEXT_AMD64`.
const CONTEXT_AMD64: u32 = 0x0010_0000;
/// `CONTEXT_CONTROL`: `SegSs`, `Rsp`, `SegCs`, `Rip` and `EFlags`.
pub(super) const CONTEXT_CONTROL: u32 = CONTEXT_AMD64 | 0x1;
/// `THREAD_SUSPEND_RESUME`.
pub(super) const THREAD_SUSPEND_RESUME: u32 = 0x0002;
/// `THREAD_GET_CONTEXT`.
pub(super) const THREAD_GET_CONTEXT: u32 = 0x0008;
/// `THREAD_QUERY_LIMITED_INFORMATION` (`GetThreadTimes`).
pub(super) const THREAD_QUERY_LIMITED_INFORMATION: u32 = 0x0800;
/// What `SuspendThread` and `ResumeThread` answer on failure
/// (`(DWORD)-1`).
pub(super) const FAILED_COUNT: u32 = u32::MAX;

/// `M128A`: one 128-bit register, aligned to 16.
#[repr(C, align(16))]
#[derive(Clone, Copy)]
#[allow(non_snake_case)]
pub(super) struct M128A {
    Low: u64,
    High: i64,
}

/// `CONTEXT` of AMD64 (`winnt.h`); `FltSave` (`XMM_SAVE_AREA32`, 512
/// bytes, the union with `Header`, `Legacy` and `Xmm0`-`Xmm15`) is kept as
/// its 32 registers' worth of bytes.
#[repr(C, align(16))]
#[allow(non_snake_case, clippy::upper_case_acronyms)]
pub(super) struct CONTEXT {
    P1Home: u64,
    P2Home: u64,
    P3Home: u64,
    P4Home: u64,
    P5Home: u64,
    P6Home: u64,
    pub(super) ContextFlags: u32,
    MxCsr: u32,
    SegCs: u16,
    SegDs: u16,
    SegEs: u16,
    SegFs: u16,
    SegGs: u16,
    SegSs: u16,
    EFlags: u32,
    Dr0: u64,
    Dr1: u64,
    Dr2: u64,
    Dr3: u64,
    Dr6: u64,
    Dr7: u64,
    Rax: u64,
    Rcx: u64,
    Rdx: u64,
    Rbx: u64,
    pub(super) Rsp: u64,
    Rbp: u64,
    Rsi: u64,
    Rdi: u64,
    R8: u64,
    R9: u64,
    R10: u64,
    R11: u64,
    R12: u64,
    R13: u64,
    R14: u64,
    R15: u64,
    pub(super) Rip: u64,
    FltSave: [M128A; 32],
    VectorRegister: [M128A; 26],
    VectorControl: u64,
    DebugControl: u64,
    LastBranchToRip: u64,
    LastBranchFromRip: u64,
    LastExceptionToRip: u64,
    LastExceptionFromRip: u64,
}

impl CONTEXT {
    /// All zero (a valid `CONTEXT`: integers only).
    pub(super) fn zeroed() -> CONTEXT {
        // SAFETY: every field is an integer or an array of them, for which
        // all-zero bytes are a valid value.
        unsafe { core::mem::zeroed() }
    }
}

#[link(name = "kernel32")]
extern "system" {
    /// `DWORD SuspendThread(HANDLE hThread)`: the previous suspend count,
    /// or `(DWORD)-1`.
    pub(super) fn SuspendThread(thread: *mut c_void) -> u32;
    /// `DWORD ResumeThread(HANDLE hThread)`: the previous suspend count, or
    /// `(DWORD)-1`.
    pub(super) fn ResumeThread(thread: *mut c_void) -> u32;
    /// `BOOL GetThreadContext(HANDLE hThread, LPCONTEXT lpContext)`.
    pub(super) fn GetThreadContext(thread: *mut c_void, context: *mut CONTEXT) -> i32;
    /// `HANDLE OpenThread(DWORD dwDesiredAccess, BOOL bInheritHandle, DWORD
    /// dwThreadId)`: null on failure.
    pub(super) fn OpenThread(access: u32, inherit: i32, thread_id: u32) -> *mut c_void;
    /// `BOOL CloseHandle(HANDLE hObject)`.
    pub(super) fn CloseHandle(handle: *mut c_void) -> i32;
}

#[cfg(test)]
mod tests {
    use super::*;
    use core::mem::{align_of, offset_of, size_of};

    /// winnt.h's AMD64 `CONTEXT`: 0x4D0 bytes, `DECLSPEC_ALIGN(16)`, and
    /// the offsets its comments and `offsetof` under mingw-w64 give.
    #[test]
    fn context_has_the_sdk_layout() {
        assert_eq!(size_of::<M128A>(), 16);
        assert_eq!(size_of::<CONTEXT>(), 1232);
        assert_eq!(align_of::<CONTEXT>(), 16);
        assert_eq!(offset_of!(CONTEXT, ContextFlags), 0x30);
        assert_eq!(offset_of!(CONTEXT, EFlags), 0x44);
        assert_eq!(offset_of!(CONTEXT, Rax), 0x78);
        assert_eq!(offset_of!(CONTEXT, Rsp), 0x98);
        assert_eq!(offset_of!(CONTEXT, Rip), 0xF8);
        assert_eq!(offset_of!(CONTEXT, FltSave), 0x100);
        assert_eq!(offset_of!(CONTEXT, VectorRegister), 0x300);
        assert_eq!(offset_of!(CONTEXT, VectorControl), 0x4A0);
        assert_eq!(offset_of!(CONTEXT, LastExceptionFromRip), 0x4C8);
    }

    /// A thread of this test suspended, its context read (its stack
    /// pointer in its own stack, below the variable it waits on), and
    /// resumed: the calls as the sampler makes them.
    #[test]
    fn a_thread_is_suspended_read_and_resumed() {
        use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
        use std::sync::Arc;
        let (stop, spins) = (
            Arc::new(AtomicBool::new(false)),
            Arc::new(AtomicU64::new(0)),
        );
        let (s, n) = (Arc::clone(&stop), Arc::clone(&spins));
        let (tx, rx) = std::sync::mpsc::channel();
        let worker = std::thread::spawn(move || {
            let here = 0u8;
            // SAFETY: no arguments.
            tx.send((unsafe { GetCurrentThreadId() }, &here as *const u8 as u64))
                .unwrap();
            while !s.load(Ordering::Relaxed) {
                n.fetch_add(1, Ordering::Relaxed);
            }
        });
        let (id, local) = rx.recv().unwrap();
        // SAFETY: no pointer arguments; the handle is closed below.
        let handle = unsafe { OpenThread(THREAD_SUSPEND_RESUME | THREAD_GET_CONTEXT, 0, id) };
        assert!(!handle.is_null());
        // SAFETY: a live thread handle with THREAD_SUSPEND_RESUME.
        assert_eq!(unsafe { SuspendThread(handle) }, 0);
        let mut context = CONTEXT::zeroed();
        context.ContextFlags = CONTEXT_CONTROL;
        // SAFETY: a live thread handle with THREAD_GET_CONTEXT and a
        // CONTEXT of the SDK's layout (the test above), 16-byte aligned.
        assert_ne!(unsafe { GetThreadContext(handle, &mut context) }, 0);
        // Suspended: the spin count stands still.
        let before = spins.load(Ordering::Relaxed);
        std::thread::sleep(std::time::Duration::from_millis(20));
        assert_eq!(spins.load(Ordering::Relaxed), before);
        assert!(context.Rip != 0);
        assert!(
            context.Rsp <= local && local - context.Rsp < 1 << 20,
            "rsp {:#x}, a local at {local:#x}",
            context.Rsp
        );
        // SAFETY: as above.
        assert_eq!(unsafe { ResumeThread(handle) }, 1);
        // Resumed: it spins again (before it is told to stop).
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        while spins.load(Ordering::Relaxed) == before {
            assert!(std::time::Instant::now() < deadline, "not resumed");
            std::thread::yield_now();
        }
        stop.store(true, Ordering::Relaxed);
        worker.join().unwrap();
        // SAFETY: the handle opened above, closed once.
        unsafe { CloseHandle(handle) };
    }

    #[link(name = "kernel32")]
    extern "system" {
        /// `DWORD GetCurrentThreadId(void)` (`processthreadsapi.h`).
        fn GetCurrentThreadId() -> u32;
    }
}
