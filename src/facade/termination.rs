//! Nothing lost when the process is told to stop: a `SIGTERM` that nobody
//! in the process handles runs the profiler's
//! [`shutdown`](super::Profiler::shutdown) before the process dies of it.
//!
//! From .NET 10 the runtime installs no `SIGTERM` handler (a documented
//! breaking change: `AppDomain.ProcessExit` is not raised and the process
//! ends at once), so a console service stopped by `docker stop` or
//! Kubernetes would end without the profiler's `Shutdown` callback: no
//! coverage report, no last profile period. Up to .NET 9 the runtime's own
//! handler (installed when the runtime starts, before any profiler loads)
//! shuts the runtime down, which calls `Shutdown`.
//!
//! So when a profiler loaded at startup has initialized and nothing would
//! run its `shutdown` at a `SIGTERM` (the signal's disposition is the
//! default, or it is the runtime's own handler in `libcoreclr.so` and the
//! runtime is .NET 10 or later: that handler only ends the process, after
//! a dump when `DOTNET_EnableDumpOnSigTerm=1`), the adapter installs a
//! handler here, keeping the one it replaces. The handler only writes a
//! byte to a pipe (async-signal-safe); a thread of ours reads it, runs the
//! profiler's `shutdown` (bounded by [`Profiler::flush_on_sigterm`](super::Profiler::flush_on_sigterm)'s time
//! limit; a watchdog ends the process when it passes), then puts the
//! replaced action back and sends the process `SIGTERM` again: it ends
//! exactly as it would without the profiler (on .NET 10.0.15 and 11.0.0:
//! killed by the signal, status 143 in a shell), only later by the time
//! the flush took. A second `SIGTERM` during the flush ends it at once.
//!
//! An application or host that registers its own handler
//! (`PosixSignalRegistration`, which ASP.NET Core's host and
//! `UseConsoleLifetime` do) replaces this one and keeps the signal:
//! .NET's `System.Native` saves this handler as the "original" one; when a
//! registration cancels the signal (a graceful stop), the runtime shuts
//! down and calls `Shutdown` as usual; when none cancels it, `System.Native`
//! restores the original handler (this one) and sends the signal again,
//! which flushes here and ends the process.
//!
//! The profiler's `shutdown` runs at most once in all: whichever of the
//! runtime's `Shutdown` callback and a termination comes first runs it, the
//! other waits for it to finish. The library is pinned in memory
//! (`RTLD_NODELETE`) when the handler is installed, so a detach that
//! unloads the profiler cannot leave the handler pointing at unmapped code;
//! after a detach, a `SIGTERM` ends the process as the default disposition
//! would.
//!
//! Nothing can be done on `SIGKILL` (or an out-of-memory kill): the
//! periods already written and the reports of earlier runs are what
//! remains. Linux only; on Windows .NET 10 likewise no longer handles
//! `CTRL_SHUTDOWN_EVENT`/`CTRL_CLOSE_EVENT`, which this module does not
//! cover yet.

use core::time::Duration;

/// What happened to the termination handler when the profiler initialized.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum TerminationHandler {
    /// Installed: a `SIGTERM` nobody else handles runs `shutdown` first.
    Installed,
    /// Not needed: the signal already has a handler that shuts the runtime
    /// down (the runtime's own up to .NET 9) or belongs to the application,
    /// or the signal is ignored.
    NotNeeded,
    /// Not wanted: [`Profiler::flush_on_sigterm`](super::Profiler::flush_on_sigterm)(super::Profiler::flush_on_sigterm)
    /// answered `None`, or the profiler was attached to a running process.
    NotWanted,
    /// Another profiler of this library installed it first.
    AlreadyInstalled,
    /// Installing failed (the reason is on stderr).
    Failed,
    /// Not supported on this operating system.
    Unsupported,
}

/// The flush: the profiler's `shutdown`, with its time limit.
pub(crate) type Flush = alloc::boxed::Box<dyn FnOnce() + Send>;

#[cfg(target_os = "linux")]
pub(crate) use linux::{detached, install, run_shutdown};

#[cfg(not(target_os = "linux"))]
pub(crate) fn install(_flush: Flush, _limit: Duration, _runtime_major: u16) -> TerminationHandler {
    TerminationHandler::Unsupported
}

#[cfg(not(target_os = "linux"))]
pub(crate) fn run_shutdown<R>(shutdown: impl FnOnce() -> R) -> Option<R> {
    Some(shutdown())
}

#[cfg(not(target_os = "linux"))]
pub(crate) fn detached() {}

#[cfg(target_os = "linux")]
mod linux {
    use crate::facade::termination::{Flush, TerminationHandler};
    use crate::support::sys::linux::{sigaction, sigaction_t};
    use core::ffi::{c_char, c_int, c_void};
    use core::sync::atomic::{AtomicBool, AtomicI32, Ordering};
    use core::time::Duration;
    use std::sync::{Condvar, Mutex, MutexGuard, OnceLock};
    use std::time::Instant;

    // The calls and constants below are transcribed from glibc's headers
    // (Debian 12's glibc 2.36), the same on x86-64 and AArch64.

    /// `SIGTERM` (`bits/signum-arch.h`).
    const SIGTERM: c_int = 15;
    /// `SIG_DFL` (`bits/signum-generic.h`).
    const SIG_DFL: usize = 0;
    /// `SA_RESTART` (`bits/sigaction.h`).
    const SA_RESTART: c_int = 0x1000_0000;
    /// `O_NONBLOCK`, `O_CLOEXEC` (`asm-generic/fcntl.h`, octal 04000 and
    /// 02000000).
    const O_NONBLOCK: c_int = 0o4000;
    const O_CLOEXEC: c_int = 0o2000000;
    /// `F_SETFL` (`asm-generic/fcntl.h`).
    const F_SETFL: c_int = 4;
    /// `EINTR` (`asm-generic/errno-base.h`).
    const EINTR: c_int = 4;
    /// `RTLD_LAZY`, `RTLD_NOLOAD`, `RTLD_NODELETE` (`bits/dlfcn.h`).
    const RTLD_LAZY: c_int = 0x1;
    const RTLD_NOLOAD: c_int = 0x4;
    const RTLD_NODELETE: c_int = 0x1000;

    /// The default action: `SIG_DFL`, no mask, no flags.
    const DEFAULT_ACTION: sigaction_t = sigaction_t::zeroed();

    /// `Dl_info` (`dlfcn.h`).
    #[repr(C)]
    struct DlInfo {
        fname: *const c_char,
        fbase: *mut c_void,
        sname: *const c_char,
        saddr: *mut c_void,
    }

    extern "C" {
        fn pipe2(fds: *mut c_int, flags: c_int) -> c_int;
        fn read(fd: c_int, buf: *mut c_void, count: usize) -> isize;
        fn write(fd: c_int, buf: *const c_void, count: usize) -> isize;
        fn kill(pid: c_int, sig: c_int) -> c_int;
        fn getpid() -> c_int;
        fn dladdr(addr: *const c_void, info: *mut DlInfo) -> c_int;
        fn dlopen(filename: *const c_char, flags: c_int) -> *mut c_void;
        fn fcntl(fd: c_int, cmd: c_int, arg: c_int) -> c_int;
        fn __errno_location() -> *mut c_int;
    }

    /// The write end of the pipe the handler writes to (-1: none).
    static PIPE_WRITE: AtomicI32 = AtomicI32::new(-1);
    /// Set by the handler at the first signal.
    static SIGNALLED: AtomicBool = AtomicBool::new(false);

    /// Where the profiler's `shutdown` stands.
    enum Phase {
        /// No handler installed: `shutdown` runs as usual.
        Idle,
        /// Installed; the flush waits for a signal.
        Armed(Flush, Duration),
        /// Running, called by the runtime (`Shutdown`) or the signal.
        Running,
        /// Ran, or detached: nothing runs again.
        Finished,
    }

    struct State {
        phase: Mutex<Phase>,
        finished: Condvar,
    }

    static STATE: State = State {
        phase: Mutex::new(Phase::Idle),
        finished: Condvar::new(),
    };

    fn phase() -> MutexGuard<'static, Phase> {
        STATE.phase.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Waits (at most `limit`) until no `shutdown` is running.
    fn wait_while_running(
        mut guard: MutexGuard<'static, Phase>,
        limit: Option<Duration>,
    ) -> MutexGuard<'static, Phase> {
        let start = Instant::now();
        while matches!(*guard, Phase::Running) {
            guard = match limit {
                None => STATE
                    .finished
                    .wait(guard)
                    .unwrap_or_else(|p| p.into_inner()),
                Some(limit) => {
                    let Some(left) = limit.checked_sub(start.elapsed()) else {
                        break;
                    };
                    STATE
                        .finished
                        .wait_timeout(guard, left)
                        .unwrap_or_else(|p| p.into_inner())
                        .0
                }
            };
        }
        guard
    }

    fn finish() {
        *phase() = Phase::Finished;
        STATE.finished.notify_all();
    }

    /// The handler: async-signal-safe (an atomic swap, `write`,
    /// `sigaction`, `kill`, `getpid`; `errno` restored).
    extern "C" fn on_sigterm(_signo: c_int) {
        // SAFETY: errno of the calling thread, restored below.
        let errno = unsafe { *__errno_location() };
        if SIGNALLED.swap(true, Ordering::AcqRel) {
            // A second SIGTERM: end now.
            die_now();
        } else {
            let byte = 1u8;
            // SAFETY: a one-byte buffer; the fd is the pipe's write end
            // (non-blocking) or -1, which fails harmlessly.
            unsafe {
                write(
                    PIPE_WRITE.load(Ordering::Acquire),
                    (&raw const byte).cast(),
                    1,
                )
            };
        }
        // SAFETY: as above.
        unsafe { *__errno_location() = errno };
    }

    /// The action before ours (the default, or the runtime's own handler,
    /// which on .NET 10+ ends the process): set once before ours is
    /// installed, read by the handler (a lock-free load).
    static PREVIOUS: OnceLock<sigaction_t> = OnceLock::new();

    /// Restores the action before ours and sends the process `SIGTERM`
    /// again: it ends as it would have without us (at once when a thread
    /// has the signal unblocked).
    fn die_now() {
        let previous = PREVIOUS.get().copied().unwrap_or(DEFAULT_ACTION);
        // SAFETY: a valid action (the one sigaction reported); null for
        // the old one.
        unsafe { sigaction(SIGTERM, &previous, core::ptr::null_mut()) };
        // SAFETY: plain system calls.
        unsafe { kill(getpid(), SIGTERM) };
    }

    /// Ends the process by the signal; never returns.
    fn die() -> ! {
        die_now();
        loop {
            std::thread::sleep(Duration::from_secs(1));
        }
    }

    /// Installs the handler and its thread when nothing would run the
    /// profiler's shutdown at a `SIGTERM`: the signal's disposition is the
    /// default, or it is the handler of the runtime (`libcoreclr.so`) and
    /// the runtime is .NET 10 or later (`runtime_major`), whose handler
    /// ends the process without shutting the runtime down. `flush` then
    /// runs at a `SIGTERM`, at most `limit` long, and the signal goes on to
    /// the action it replaced.
    pub(crate) fn install(flush: Flush, limit: Duration, runtime_major: u16) -> TerminationHandler {
        let mut guard = phase();
        if !matches!(*guard, Phase::Idle) || PREVIOUS.get().is_some() {
            return TerminationHandler::AlreadyInstalled;
        }
        let mut current = DEFAULT_ACTION;
        // SAFETY: reads the current action into a valid buffer.
        if unsafe { sigaction(SIGTERM, core::ptr::null(), &mut current) } != 0 {
            return failed("sigaction");
        }
        if current.sa_sigaction != SIG_DFL {
            let owner = object_of(current.sa_sigaction);
            let runtimes = owner.ends_with("/libcoreclr.so") && runtime_major >= 10;
            if std::env::var_os("CORPROF_DEBUG").is_some_and(|value| value == "1") {
                std::eprintln!(
                    "corprof: SIGTERM has a handler, at {:#x} in {owner}{}",
                    current.sa_sigaction,
                    if runtimes {
                        " (the runtime's, which does not shut it down from .NET 10)"
                    } else {
                        ""
                    }
                );
            }
            if !runtimes {
                return TerminationHandler::NotNeeded;
            }
        }
        if let Err(what) = pin_library() {
            return failed(what);
        }
        let mut fds = [-1 as c_int; 2];
        // SAFETY: a two-element buffer.
        if unsafe { pipe2(fds.as_mut_ptr(), O_CLOEXEC | O_NONBLOCK) } != 0 {
            return failed("pipe2");
        }
        // The read end blocks: only the write end (the handler's) must not.
        let read_fd = fds[0];
        // SAFETY: fds[0] is the read end just created; F_SETFL with flags
        // 0 clears O_NONBLOCK.
        if unsafe { fcntl(read_fd, F_SETFL, 0) } != 0 {
            return failed("fcntl");
        }
        PIPE_WRITE.store(fds[1], Ordering::Release);
        let spawned = std::thread::Builder::new()
            .name("corprof-sigterm".into())
            .spawn(move || watch(read_fd));
        if spawned.is_err() {
            return failed("spawning its thread");
        }
        if PREVIOUS.set(current).is_err() {
            return TerminationHandler::AlreadyInstalled;
        }
        let mut action = sigaction_t::zeroed();
        action.sa_sigaction = on_sigterm as extern "C" fn(c_int) as usize;
        action.sa_flags = SA_RESTART;
        // SAFETY: a valid action whose handler is async-signal-safe and
        // pinned in memory (pin_library) for the life of the process.
        if unsafe { sigaction(SIGTERM, &action, core::ptr::null_mut()) } != 0 {
            return failed("sigaction");
        }
        *guard = Phase::Armed(flush, limit);
        TerminationHandler::Installed
    }

    fn failed(what: &str) -> TerminationHandler {
        std::eprintln!(
            "corprof: cannot install the SIGTERM handler ({what} failed): a SIGTERM will end \
             the process without the profiler's shutdown"
        );
        TerminationHandler::Failed
    }

    /// The file name of the loaded object holding `address` (for messages).
    fn object_of(address: usize) -> std::string::String {
        let mut info = DlInfo {
            fname: core::ptr::null(),
            fbase: core::ptr::null_mut(),
            sname: core::ptr::null(),
            saddr: core::ptr::null_mut(),
        };
        // SAFETY: dladdr only looks the address up; a valid out-buffer.
        if unsafe { dladdr(address as *const c_void, &mut info) } == 0 || info.fname.is_null() {
            return "no loaded object".into();
        }
        // SAFETY: dladdr's NUL-terminated file name.
        unsafe { core::ffi::CStr::from_ptr(info.fname) }
            .to_string_lossy()
            .into_owned()
    }

    /// Keeps this library mapped for the life of the process, so that the
    /// handler stays valid whatever unloads the profiler.
    fn pin_library() -> Result<(), &'static str> {
        let mut info = DlInfo {
            fname: core::ptr::null(),
            fbase: core::ptr::null_mut(),
            sname: core::ptr::null(),
            saddr: core::ptr::null_mut(),
        };
        let address = on_sigterm as extern "C" fn(c_int) as *const c_void;
        // SAFETY: an address of this library; a valid out-buffer.
        if unsafe { dladdr(address, &mut info) } == 0 || info.fname.is_null() {
            return Err("dladdr");
        }
        // SAFETY: dladdr's NUL-terminated file name of a loaded object;
        // NOLOAD only takes a reference to it (it is loaded: this code runs
        // from it), NODELETE keeps it mapped. The reference is never given
        // back, on purpose.
        let handle = unsafe { dlopen(info.fname, RTLD_LAZY | RTLD_NOLOAD | RTLD_NODELETE) };
        if handle.is_null() && !is_main_program(info.fname) {
            return Err("dlopen");
        }
        Ok(())
    }

    /// Whether `fname` (from `dladdr`) is the main program, which is never
    /// unloaded (`dlopen` does not find it by name: a test binary).
    fn is_main_program(fname: *const c_char) -> bool {
        // SAFETY: dladdr's NUL-terminated file name.
        let name = unsafe { core::ffi::CStr::from_ptr(fname) };
        let Ok(name) = name.to_str() else {
            return false;
        };
        match (std::fs::canonicalize(name), std::env::current_exe()) {
            (Ok(ours), Ok(main)) => std::fs::canonicalize(main).is_ok_and(|main| main == ours),
            _ => false,
        }
    }

    /// The thread: waits for the handler's byte, flushes, ends the process.
    fn watch(read_fd: c_int) {
        loop {
            let mut byte = 0u8;
            // SAFETY: a one-byte buffer; the pipe's read end.
            let n = unsafe { read(read_fd, (&raw mut byte).cast(), 1) };
            if n == 1 {
                break;
            }
            // SAFETY: this thread's errno.
            if n < 0 && unsafe { *__errno_location() } == EINTR {
                continue;
            }
            return;
        }
        let start = Instant::now();
        let mut guard = phase();
        let job = match core::mem::replace(&mut *guard, Phase::Running) {
            Phase::Armed(flush, limit) => Some((flush, limit)),
            other => {
                *guard = other;
                None
            }
        };
        let Some((flush, limit)) = job else {
            // Already shutting down (the runtime's Shutdown), finished, or
            // detached: let a running shutdown end (briefly), then die as
            // the default disposition would.
            drop(wait_while_running(guard, Some(Duration::from_secs(5))));
            die();
        };
        drop(guard);
        // The host's stderr is the application's: said only when asked.
        let debug = std::env::var_os("CORPROF_DEBUG").is_some_and(|value| value == "1");
        if debug {
            std::eprintln!(
                "corprof: SIGTERM, which nothing else in the process handles: running the \
                 profiler's shutdown (at most {} ms), then ending the process by the signal",
                limit.as_millis()
            );
        }
        let _ = std::thread::Builder::new()
            .name("corprof-sigterm-watchdog".into())
            .spawn(move || {
                std::thread::sleep(limit);
                std::eprintln!(
                    "corprof: the profiler's shutdown took more than {} ms: ending the process",
                    limit.as_millis()
                );
                die();
            });
        flush();
        finish();
        if debug {
            std::eprintln!(
                "corprof: shutdown done in {} ms: ending the process by SIGTERM",
                start.elapsed().as_millis()
            );
        }
        die();
    }

    /// The runtime's `Shutdown`: runs `shutdown` unless a termination has
    /// run or is running it (then waits for it and answers `None`).
    pub(crate) fn run_shutdown<R>(shutdown: impl FnOnce() -> R) -> Option<R> {
        let mut guard = phase();
        match &*guard {
            Phase::Idle => {
                drop(guard);
                Some(shutdown())
            }
            Phase::Armed(..) => {
                *guard = Phase::Running;
                drop(guard);
                let answer = shutdown();
                finish();
                Some(answer)
            }
            Phase::Running => {
                drop(wait_while_running(guard, None));
                None
            }
            Phase::Finished => {
                drop(guard);
                None
            }
        }
    }

    /// The profiler detached: a termination no longer runs it (a running
    /// one is waited for first).
    pub(crate) fn detached() {
        let mut guard = wait_while_running(phase(), None);
        if matches!(*guard, Phase::Armed(..)) {
            *guard = Phase::Finished;
        }
    }
}

/// The time limit given by default to the profiler's `shutdown` at a
/// `SIGTERM`: 5 s, half of `docker stop`'s grace period.
pub const DEFAULT_SIGTERM_FLUSH: Duration = Duration::from_secs(5);
