//! Ctrl-C while `corprof coverage` waits for COMMAND: noted, not fatal, so
//! that the command can wait for COMMAND (which the terminal interrupts
//! too: Ctrl-C goes to the whole foreground process group), remove its
//! private directory and exit 130 (128 + `SIGINT`, as a shell reports an
//! interrupted command).
//!
//! Unix only; elsewhere [`catch`] does nothing and [`interrupted`] is
//! always false.

pub(crate) use imp::{catch, interrupted};

#[cfg(unix)]
mod imp {
    use core::ffi::c_int;
    use std::sync::atomic::{AtomicBool, Ordering};

    /// `SIGINT`: 2 on Linux (glibc's `bits/signum-generic.h`) and macOS
    /// (`sys/signal.h`).
    const SIGINT: c_int = 2;
    /// `SIG_IGN`: `((__sighandler_t) 1)` (glibc's `bits/signum-generic.h`,
    /// macOS's `sys/signal.h`).
    const SIG_IGN: usize = 1;
    /// `SIG_ERR`: `((__sighandler_t) -1)` (the same headers).
    const SIG_ERR: usize = usize::MAX;

    static INTERRUPTED: AtomicBool = AtomicBool::new(false);

    extern "C" {
        /// `signal.h`: `__sighandler_t signal (int __sig, __sighandler_t
        /// __handler)`, the handler a function pointer (here its address).
        /// The symbol `signal` has BSD semantics (glibc's `signal.h`: "By
        /// default `signal' has the BSD semantic", the SVID one being
        /// `__sysv_signal`): the handler stays installed and a `waitpid` it
        /// interrupts restarts; macOS's `signal` is BSD's.
        fn signal(sig: c_int, handler: usize) -> usize;
    }

    /// Only an atomic store: async-signal-safe.
    extern "C" fn on_interrupt(_: c_int) {
        INTERRUPTED.store(true, Ordering::SeqCst);
    }

    /// From now on, `SIGINT` sets [`interrupted`] instead of ending this
    /// process (unless it was ignored when the process started: then it
    /// stays ignored). Call before starting COMMAND: a caught signal is
    /// reset to its default in the program a child executes, so COMMAND
    /// still gets Ctrl-C.
    pub(crate) fn catch() {
        let handler = on_interrupt as extern "C" fn(c_int) as usize;
        // SAFETY: `signal` with a valid signal number and either SIG_IGN or
        // the address of an `extern "C" fn(c_int)` whose body is
        // async-signal-safe; the previous disposition is read back only to
        // be kept when it was SIG_IGN.
        let previous = unsafe { signal(SIGINT, handler) };
        if previous == SIG_IGN {
            // Started with Ctrl-C ignored (`nohup`, a background job of a
            // script): keep it so, for COMMAND too (an ignored signal stays
            // ignored across exec; a caught one would not).
            // SAFETY: as above, SIG_IGN.
            unsafe { signal(SIGINT, SIG_IGN) };
        }
        debug_assert_ne!(previous, SIG_ERR);
    }

    /// Whether `SIGINT` arrived since [`catch`].
    pub(crate) fn interrupted() -> bool {
        INTERRUPTED.load(Ordering::SeqCst)
    }
}

#[cfg(not(unix))]
mod imp {
    pub(crate) fn catch() {}

    pub(crate) fn interrupted() -> bool {
        false
    }
}
