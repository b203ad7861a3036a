//! CPU time of another thread of this process, by its OS thread ID (what
//! `GetThreadInfo` answers for a managed thread).
//!
//! - Linux: `clock_gettime` on the thread's CPU clock. A thread's clock ID
//!   is built from its kernel thread ID as the kernel's
//!   `include/linux/posix-timers.h` defines it: `MAKE_THREAD_CPUCLOCK(tid,
//!   CPUCLOCK_SCHED)` = `(~tid << 3) | CPUCLOCK_SCHED (2) |
//!   CPUCLOCK_PERTHREAD_MASK (4)`. CoreCLR's PAL answers `gettid()` as the
//!   OS thread ID on Linux.
//! - Windows: `OpenThread(THREAD_QUERY_LIMITED_INFORMATION)` and
//!   `GetThreadTimes` (kernel plus user time, in 100 ns units).
//! - Elsewhere: not available (`None`).

/// The CPU time (user and system) the OS thread `os_thread` has used, in
/// nanoseconds; `None` when no thread has that ID (it has exited; an exited
/// thread's clock may stay readable for a moment after `join`) or the
/// platform has no per-thread clock.
pub fn thread_cpu_nanos(os_thread: u32) -> Option<u64> {
    imp::thread_cpu_nanos(os_thread)
}

/// Windows: the CPU time of the thread of an open handle, in nanoseconds
/// (`GetThreadTimes`; `None` when it fails).
///
/// # Safety
///
/// `handle` must be a live thread handle with `THREAD_QUERY_INFORMATION` or
/// `THREAD_QUERY_LIMITED_INFORMATION` access, not closed during the call.
#[cfg(all(windows, target_arch = "x86_64"))]
pub(crate) unsafe fn thread_handle_cpu_nanos(handle: *mut core::ffi::c_void) -> Option<u64> {
    imp::times(handle)
}

/// The CPU time the calling thread has used, in nanoseconds (`None` where
/// the platform has no per-thread clock).
pub fn current_thread_cpu_nanos() -> Option<u64> {
    imp::current_thread_cpu_nanos()
}

/// The CPU time (user and system) every thread of this process has used,
/// in nanoseconds (`CLOCK_PROCESS_CPUTIME_ID`); `None` where not read
/// (not Linux).
pub(crate) fn process_cpu_nanos() -> Option<u64> {
    #[cfg(target_os = "linux")]
    return imp::process_cpu_nanos();
    #[cfg(not(target_os = "linux"))]
    None
}

#[cfg(target_os = "linux")]
mod imp {
    use core::ffi::{c_int, c_long};

    /// `struct timespec` of glibc and musl on Linux, for targets whose
    /// `time_t` is `long` (every 64-bit target, and 32-bit ones without
    /// the 64-bit time ABI).
    #[repr(C)]
    struct Timespec {
        tv_sec: c_long,
        tv_nsec: c_long,
    }

    extern "C" {
        fn clock_gettime(clock: c_int, time: *mut Timespec) -> c_int;
    }

    const CPUCLOCK_SCHED: c_int = 2;
    const CPUCLOCK_PERTHREAD_MASK: c_int = 4;

    /// `CLOCK_THREAD_CPUTIME_ID` (linux/time.h).
    const CLOCK_THREAD_CPUTIME_ID: c_int = 3;

    /// `CLOCK_PROCESS_CPUTIME_ID` (linux/time.h).
    const CLOCK_PROCESS_CPUTIME_ID: c_int = 2;

    pub(super) fn current_thread_cpu_nanos() -> Option<u64> {
        read(CLOCK_THREAD_CPUTIME_ID)
    }

    pub(super) fn process_cpu_nanos() -> Option<u64> {
        read(CLOCK_PROCESS_CPUTIME_ID)
    }

    pub(super) fn thread_cpu_nanos(os_thread: u32) -> Option<u64> {
        let tid = c_int::try_from(os_thread).ok()?;
        read((!tid << 3) | CPUCLOCK_SCHED | CPUCLOCK_PERTHREAD_MASK)
    }

    fn read(clock: c_int) -> Option<u64> {
        let mut time = Timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: a valid out-pointer of the C layout; an unknown clock ID
        // (an exited thread) is an error return, never undefined behaviour.
        if unsafe { clock_gettime(clock, &mut time) } != 0 {
            return None;
        }
        let secs = u64::try_from(time.tv_sec).ok()?;
        let nanos = u64::try_from(time.tv_nsec).ok()?;
        secs.checked_mul(1_000_000_000)?.checked_add(nanos)
    }
}

#[cfg(windows)]
mod imp {
    use core::ffi::c_void;

    #[repr(C)]
    #[derive(Default)]
    struct FileTime {
        low: u32,
        high: u32,
    }

    impl FileTime {
        fn ticks(&self) -> u64 {
            (u64::from(self.high) << 32) | u64::from(self.low)
        }
    }

    /// `THREAD_QUERY_LIMITED_INFORMATION` (winnt.h).
    const THREAD_QUERY_LIMITED_INFORMATION: u32 = 0x0800;

    #[link(name = "kernel32")]
    extern "system" {
        fn OpenThread(access: u32, inherit: i32, thread_id: u32) -> *mut c_void;
        fn GetThreadTimes(
            thread: *mut c_void,
            creation: *mut FileTime,
            exit: *mut FileTime,
            kernel: *mut FileTime,
            user: *mut FileTime,
        ) -> i32;
        fn CloseHandle(handle: *mut c_void) -> i32;
        fn GetCurrentThread() -> *mut c_void;
    }

    pub(super) fn current_thread_cpu_nanos() -> Option<u64> {
        // SAFETY: the pseudo-handle of the calling thread, never closed.
        times(unsafe { GetCurrentThread() })
    }

    pub(super) fn times(handle: *mut c_void) -> Option<u64> {
        let (mut creation, mut exit, mut kernel, mut user) = Default::default();
        // SAFETY: an open thread handle; four valid out-pointers.
        let ok =
            unsafe { GetThreadTimes(handle, &mut creation, &mut exit, &mut kernel, &mut user) };
        (ok != 0).then(|| (kernel.ticks() + user.ticks()).saturating_mul(100))
    }

    pub(super) fn thread_cpu_nanos(os_thread: u32) -> Option<u64> {
        // SAFETY: plain Win32 call; a null handle is the error answer.
        let handle = unsafe { OpenThread(THREAD_QUERY_LIMITED_INFORMATION, 0, os_thread) };
        if handle.is_null() {
            return None;
        }
        let nanos = times(handle);
        // SAFETY: the handle opened above, closed once.
        unsafe { CloseHandle(handle) };
        nanos
    }
}

#[cfg(not(any(target_os = "linux", windows)))]
mod imp {
    pub(super) fn thread_cpu_nanos(_os_thread: u32) -> Option<u64> {
        None
    }

    pub(super) fn current_thread_cpu_nanos() -> Option<u64> {
        None
    }
}

#[cfg(all(test, any(target_os = "linux", windows)))]
mod tests {
    use super::*;

    /// The calling thread's OS ID, as the runtime's PAL answers it.
    fn current_os_thread() -> u32 {
        #[cfg(target_os = "linux")]
        {
            extern "C" {
                fn gettid() -> core::ffi::c_int;
            }
            // SAFETY: no arguments, cannot fail.
            unsafe { gettid() as u32 }
        }
        #[cfg(windows)]
        {
            #[link(name = "kernel32")]
            extern "system" {
                fn GetCurrentThreadId() -> u32;
            }
            // SAFETY: no arguments, cannot fail.
            unsafe { GetCurrentThreadId() }
        }
    }

    #[test]
    fn a_spinning_thread_gains_cpu_time_and_a_sleeping_one_does_not() {
        use std::sync::mpsc;
        use std::time::{Duration, Instant};
        // Every read of the other thread's clock happens while it is alive:
        // it sends its ID, then blocks on `stop` (using no CPU) until the
        // reads are done, and only then exits.
        let (id_tx, id_rx) = mpsc::channel();
        let (stop_tx, stop_rx) = mpsc::channel::<()>();
        let sleeper = std::thread::spawn(move || {
            id_tx.send(current_os_thread()).unwrap();
            let _ = stop_rx.recv();
        });
        let sleeper_id = id_rx.recv().unwrap();
        let me = current_os_thread();
        let (mine, theirs) = (
            thread_cpu_nanos(me).unwrap(),
            thread_cpu_nanos(sleeper_id).expect("the blocked thread is alive"),
        );
        // Spin until this thread's own clock has gained 50 ms of CPU time,
        // however long a loaded machine takes to give it that (bounded, so
        // that a clock that never advances fails instead of hanging).
        let start = Instant::now();
        let mut x = 0u64;
        while current_thread_cpu_nanos().unwrap().saturating_sub(mine) < 50_000_000
            && start.elapsed() < Duration::from_secs(60)
        {
            for _ in 0..10_000 {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
            }
        }
        std::hint::black_box(x);
        let spun = thread_cpu_nanos(me).unwrap() - mine;
        let slept = thread_cpu_nanos(sleeper_id).expect("still blocked, still alive") - theirs;
        stop_tx.send(()).unwrap();
        sleeper.join().unwrap();
        // Read by ID, the spinning thread's clock saw the 50 ms its own
        // clock did; the blocked thread used next to none meanwhile (it
        // may have finished its `send` and entered `recv` after the first
        // read: microseconds).
        assert!(spun >= 50_000_000, "spun {spun} ns");
        assert!(slept < 20_000_000, "slept {slept} ns");
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_thread_id_no_thread_has_has_no_clock() {
        // Thread IDs are below `pid_max`, so no thread has that one.
        let pid_max: u32 = std::fs::read_to_string("/proc/sys/kernel/pid_max")
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        assert_eq!(thread_cpu_nanos(pid_max), None);
        assert_eq!(thread_cpu_nanos(u32::MAX), None, "not even a valid tid");
        // The control: an ID that exists has a clock.
        assert!(thread_cpu_nanos(current_os_thread()).is_some());
    }
}
