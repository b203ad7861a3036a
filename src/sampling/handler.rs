//! Signal mode's `SIGPROF` handler (Linux x86-64 and AArch64): what runs
//! in the signal (async-signal-safe: no allocation, no lock, no call into
//! the runtime; the file, as every file of the signal path, is compiled
//! under `deny(clippy::arithmetic_side_effects, clippy::indexing_slicing,
//! clippy::panic)`: `signal_path!` in `mod.rs`), its installation, and its removal at the stop.

use core::ffi::{c_int, c_void};
use core::sync::atomic::{fence, AtomicBool, AtomicUsize, Ordering};
use core::time::Duration;
use std::sync::Mutex;

use super::mode::SLOTS;
use super::slots::{
    SpanIds, BUFFER, COUNTERS, CURSOR, FREE, KIND_CPU, KIND_WALL, READY, REGISTRY, SPANS, TAG,
    WRITING,
};
use super::unix::{self, sigaction_t, siginfo_t};
use super::walk::walk;

/// The handler that was installed before ours, for signals that are
/// not ours; written once before ours is installed.
struct Previous(core::cell::UnsafeCell<sigaction_t>);
// SAFETY: written once under INSTALL before the handler that reads it
// is installed (the installation publishes it), read-only after.
unsafe impl Sync for Previous {}
static PREVIOUS: Previous = Previous(core::cell::UnsafeCell::new(sigaction_t::zeroed()));
static INSTALLED: AtomicBool = AtomicBool::new(false);
/// Serializes [`install`] and [`uninstall`].
static INSTALL: Mutex<()> = Mutex::new(());
/// Handlers of ours running now (entered and not yet returned).
static IN_HANDLER: AtomicUsize = AtomicUsize::new(0);

extern "C" {
    fn __errno_location() -> *mut c_int;
}

extern "C" fn handler(signo: c_int, info: *mut siginfo_t, context: *mut c_void) {
    // Counted while it runs: `uninstall` waits for none to run.
    IN_HANDLER.fetch_add(1, Ordering::AcqRel);
    // SAFETY: errno of the calling thread; restored before returning so
    // the interrupted code never sees it change.
    let errno = unsafe { *__errno_location() };
    // SAFETY: the kernel's arguments of an SA_SIGINFO handler.
    unsafe { handle(signo, info, context) };
    // SAFETY: as above.
    unsafe { *__errno_location() = errno };
    IN_HANDLER.fetch_sub(1, Ordering::AcqRel);
}

/// # Safety
/// The arguments of an `SA_SIGINFO` handler.
unsafe fn handle(signo: c_int, info: *mut siginfo_t, context: *mut c_void) {
    // SAFETY: the kernel's siginfo_t.
    let (code, value) = unsafe { ((*info).si_code, (*info).si_value) };
    let kind = ((value >> 32) & 0xff) as u8;
    let ours = (code == unix::SI_TIMER || code == unix::SI_QUEUE)
        && (value >> 32) & !0xff == TAG
        && (kind == KIND_CPU || kind == KIND_WALL);
    if !ours {
        COUNTERS.foreign.fetch_add(1, Ordering::Relaxed);
        // SAFETY: the arguments as received.
        unsafe { chain(signo, info, context) };
        return;
    }
    COUNTERS.handled.fetch_add(1, Ordering::Relaxed);
    let Some(entry) = REGISTRY.get(value & 0xffff_ffff) else {
        COUNTERS.stale.fetch_add(1, Ordering::Relaxed);
        return;
    };
    let seq = entry.seq.load(Ordering::Acquire);
    let tid = entry.tid.load(Ordering::Relaxed);
    let (low, high) = (
        entry.low.load(Ordering::Relaxed),
        entry.high.load(Ordering::Relaxed),
    );
    let thread = entry.thread.load(Ordering::Relaxed);
    let serial = entry.serial.load(Ordering::Relaxed);
    fence(Ordering::Acquire);
    if seq % 2 == 1 || entry.seq.load(Ordering::Relaxed) != seq || tid == 0 || tid != unix::gettid()
    {
        COUNTERS.stale.fetch_add(1, Ordering::Relaxed);
        return;
    }
    // The weight: this thread's CPU time, or the wall time, since its
    // previous sample of the kind.
    let weight = if kind == KIND_CPU {
        let now = unix::clock_nanos(unix::CLOCK_THREAD_CPUTIME_ID);
        now.saturating_sub(entry.last_cpu.swap(now, Ordering::Relaxed))
    } else {
        let now = unix::clock_nanos(unix::CLOCK_MONOTONIC);
        now.saturating_sub(entry.last_wall.swap(now, Ordering::Relaxed))
    };
    let start = CURSOR.fetch_add(1, Ordering::Relaxed);
    let slot = (0..8)
        .filter_map(|i| BUFFER.get(start.wrapping_add(i) % SLOTS))
        .find(|slot| {
            slot.state
                .compare_exchange(FREE, WRITING, Ordering::Acquire, Ordering::Relaxed)
                .is_ok()
        });
    let Some(slot) = slot else {
        COUNTERS.dropped.fetch_add(1, Ordering::Relaxed);
        return;
    };
    // SAFETY: WRITING: this handler owns the slot's data.
    let data = unsafe { &mut *slot.data.get() };
    // SAFETY: the context of this signal, on this target.
    let regs = unsafe { unix::registers(context) };
    // SAFETY: [low, high) is this thread's own stack (the registration
    // is this thread's: its tid), mapped while the thread runs; the walk
    // reads nothing below the interrupted SP.
    let (depth, end) = unsafe {
        walk(
            regs.ip,
            regs.sp,
            regs.fp,
            regs.lr,
            (low, high),
            &mut data.ips,
        )
    };
    data.thread = thread;
    // The index fits: below MAX_THREADS (REGISTRY.get above).
    data.index = (value & 0xffff_ffff) as u32;
    data.serial = serial;
    data.tid = tid;
    data.kind = kind;
    data.end = end;
    data.depth = depth as u16;
    data.weight = weight;
    // The span current on this thread: loads only, none when the helper
    // was interrupted while writing it (`SpanBlock::read`).
    data.span = SPANS
        .get(value & 0xffff_ffff)
        .map_or(SpanIds::NONE, |block| block.read(tid));
    slot.state.store(READY, Ordering::Release);
}

/// Passes a signal that is not ours to the handler installed before.
///
/// # Safety
/// The arguments of an `SA_SIGINFO` handler.
unsafe fn chain(signo: c_int, info: *mut siginfo_t, context: *mut c_void) {
    // SAFETY: PREVIOUS is read-only once the handler is installed.
    let previous = unsafe { *PREVIOUS.0.get() };
    let handler = previous.sa_sigaction;
    if handler == unix::SIG_DFL || handler == unix::SIG_IGN {
        return;
    }
    if previous.sa_flags & unix::SA_SIGINFO != 0 {
        // SAFETY: a handler installed with SA_SIGINFO takes these.
        let f: extern "C" fn(c_int, *mut siginfo_t, *mut c_void) =
            unsafe { core::mem::transmute(handler) };
        f(signo, info, context);
    } else {
        // SAFETY: a plain handler takes the signal number.
        let f: extern "C" fn(c_int) = unsafe { core::mem::transmute(handler) };
        f(signo);
    }
}

/// Installs the handler (once per process).
pub(super) fn install() -> bool {
    let _guard = INSTALL.lock().unwrap_or_else(|p| p.into_inner());
    if INSTALLED.load(Ordering::Acquire) {
        return true;
    }
    let mut action = sigaction_t::zeroed();
    action.sa_sigaction = handler as extern "C" fn(c_int, *mut siginfo_t, *mut c_void) as usize;
    // Not SA_ONSTACK: CoreCLR gives each thread a 16 KB alternate stack
    // for its own handlers (SIGSTKSZ + SignalHandlerWorkerReturnPoint +
    // a page: src/coreclr/pal/src/thread/thread.cpp,
    // CPalThread::EnsureSignalAlternateStack); the kernel's signal frame
    // and this handler's walk overflowed one (a debug build on 8.0.4
    // died of SIGSEGV in the handler, on that stack, once in 25 runs). The thread's own stack has room: the handler runs below the
    // interrupted SP, where the walk never reads.
    action.sa_flags = unix::SA_SIGINFO | unix::SA_RESTART;
    let mut previous = sigaction_t::zeroed();
    // SAFETY: reads the current action into a valid buffer.
    if unsafe { unix::sigaction(unix::SIGPROF, core::ptr::null(), &mut previous) } != 0 {
        return false;
    }
    // SAFETY: no handler of ours runs yet (not installed): no reader.
    unsafe { *PREVIOUS.0.get() = previous };
    // SAFETY: a valid action whose handler is async-signal-safe.
    if unsafe { unix::sigaction(unix::SIGPROF, &action, core::ptr::null_mut()) } != 0 {
        return false;
    }
    INSTALLED.store(true, Ordering::Release);
    true
}

/// How long no handler of ours must be seen running before
/// [`uninstall`] puts the previous disposition back, and the most it
/// waits for that.
const SETTLE: Duration = Duration::from_millis(20);
const SETTLE_TIMEOUT: Duration = Duration::from_secs(2);

/// Puts back the disposition `SIGPROF` had before [`install`], so that
/// the library can be unloaded (a detach) without a later signal
/// jumping into unmapped code. Called once every timer is deleted and
/// the sampler thread sends no more wall signals: no signal of ours is
/// generated any more. Those already generated are pending, or being
/// delivered. `SIG_IGN` first: setting a pending signal's action to
/// `SIG_IGN` discards it (POSIX `sigaction`; Linux's `do_sigaction`
/// flushes the process's and every thread's pending set). Then the
/// handlers that the kernel began delivering before are waited for
/// ([`IN_HANDLER`] at zero for [`SETTLE`]), and the previous action
/// goes back. Returns whether no handler of ours is installed; `false`
/// (ours stays) when the installed handler is not ours (one installed
/// later may chain to ours) or a handler of ours kept running.
///
/// A thread that the kernel had handed a signal of ours before the
/// `SIG_IGN` but that then did not run for the whole [`SETTLE`] still
/// enters the handler: a detach leaves it the runtime's wait too (the
/// library is unloaded no sooner than the 500 ms the sampler asks the
/// runtime to wait, `SamplingProfiler`'s detach).
pub(super) fn uninstall() -> bool {
    let _guard = INSTALL.lock().unwrap_or_else(|p| p.into_inner());
    if !INSTALLED.load(Ordering::Acquire) {
        return true;
    }
    let ours = handler as extern "C" fn(c_int, *mut siginfo_t, *mut c_void) as usize;
    let mut current = sigaction_t::zeroed();
    // SAFETY: reads the current action into a valid buffer.
    if unsafe { unix::sigaction(unix::SIGPROF, core::ptr::null(), &mut current) } != 0
        || current.sa_sigaction != ours
    {
        return false;
    }
    let mut ignore = sigaction_t::zeroed();
    ignore.sa_sigaction = unix::SIG_IGN;
    // SAFETY: a valid action; discards the pending SIGPROFs.
    if unsafe { unix::sigaction(unix::SIGPROF, &ignore, core::ptr::null_mut()) } != 0 {
        return false;
    }
    let start = std::time::Instant::now();
    let mut quiet_since = start;
    loop {
        if IN_HANDLER.load(Ordering::Acquire) != 0 {
            quiet_since = std::time::Instant::now();
        } else if quiet_since.elapsed() >= SETTLE {
            break;
        }
        if start.elapsed() >= SETTLE_TIMEOUT {
            // SAFETY: ours again, as it was (PREVIOUS unchanged).
            unsafe { unix::sigaction(unix::SIGPROF, &current, core::ptr::null_mut()) };
            return false;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    // SAFETY: no handler of ours runs or can start (above): PREVIOUS
    // has no reader.
    let previous = unsafe { *PREVIOUS.0.get() };
    // SAFETY: the action that was there before ours.
    if unsafe { unix::sigaction(unix::SIGPROF, &previous, core::ptr::null_mut()) } != 0 {
        // SIG_IGN stays: no handler of ours either.
    }
    INSTALLED.store(false, Ordering::Release);
    true
}

/// Whether the handler is installed (the library must stay loaded).
pub(in crate::sampling) fn handler_installed() -> bool {
    INSTALLED.load(Ordering::Acquire)
}

/// [`install`] for the tests.
#[cfg(test)]
pub(in crate::sampling) fn install_for_test() -> bool {
    install()
}

/// [`uninstall`] for the tests.
#[cfg(test)]
pub(in crate::sampling) fn uninstall_for_test() -> bool {
    uninstall()
}

#[cfg(test)]
#[allow(
    clippy::arithmetic_side_effects,
    clippy::indexing_slicing,
    clippy::panic
)]
mod tests {
    use super::*;
    use crate::sampling::mode::MAX_THREADS;
    use crate::sampling::slots::value_of;

    /// A `SIGPROF` that is not the sampler's (no tag in its value: an
    /// application's own) reaches the handler that was installed before
    /// the sampler's, with its arguments; one with the tag but no live
    /// registration is counted as stale and goes nowhere.
    #[cfg(all(
        target_os = "linux",
        any(target_arch = "x86_64", target_arch = "aarch64")
    ))]
    #[test]
    fn a_foreign_sigprof_goes_to_the_handler_installed_before() {
        let _sigprof = SIGPROF_IN_TEST.lock().unwrap_or_else(|e| e.into_inner());
        use crate::sampling::unix;
        use core::ffi::{c_int, c_void};
        use std::sync::atomic::AtomicUsize;
        static SEEN: AtomicUsize = AtomicUsize::new(0);
        extern "C" fn before(signo: c_int, info: *mut unix::siginfo_t, _: *mut c_void) {
            // SAFETY: the siginfo_t passed along.
            let value = unsafe { (*info).si_value };
            SEEN.store(value + signo as usize, Ordering::SeqCst);
        }
        let mut action = unix::sigaction_t::zeroed();
        action.sa_sigaction =
            before as extern "C" fn(c_int, *mut unix::siginfo_t, *mut c_void) as usize;
        action.sa_flags = unix::SA_SIGINFO;
        // SAFETY: a valid action; SIGPROF is used by no other test here.
        let set = unsafe { unix::sigaction(unix::SIGPROF, &action, core::ptr::null_mut()) };
        assert_eq!(set, 0);
        assert!(install_for_test());
        // Ours now.
        let mut now = unix::sigaction_t::zeroed();
        // SAFETY: reads the current action.
        let read = unsafe { unix::sigaction(unix::SIGPROF, core::ptr::null(), &mut now) };
        assert_eq!(read, 0);
        assert_ne!(now.sa_sigaction, action.sa_sigaction);
        assert_eq!(now.sa_flags & unix::SA_RESTART, unix::SA_RESTART);
        let tid = unix::gettid();
        // The application's: value 1000, no tag.
        assert!(unix::queue_to_thread(tid, unix::SIGPROF, 1000));
        assert_eq!(SEEN.load(Ordering::SeqCst), 1000 + unix::SIGPROF as usize);
        // Tagged, for a registration that does not exist: stale.
        SEEN.store(0, Ordering::SeqCst);
        let stale = COUNTERS.stale.load(Ordering::SeqCst);
        assert!(unix::queue_to_thread(
            tid,
            unix::SIGPROF,
            value_of(KIND_WALL, MAX_THREADS - 1)
        ));
        assert_eq!(SEEN.load(Ordering::SeqCst), 0);
        assert_eq!(COUNTERS.stale.load(Ordering::SeqCst), stale + 1);
    }

    /// Held by the tests that set `SIGPROF`'s disposition.
    static SIGPROF_IN_TEST: std::sync::Mutex<()> = std::sync::Mutex::new(());

    /// The stop's `uninstall`: a pending signal of ours is discarded (it
    /// would otherwise meet the restored disposition, or a handler in an
    /// unloaded library), the handler that was there before is back, and
    /// the application's `SIGPROF`s go straight to it; a handler installed
    /// after ours (which may chain to it) keeps ours installed.
    #[cfg(all(
        target_os = "linux",
        any(target_arch = "x86_64", target_arch = "aarch64")
    ))]
    #[test]
    fn uninstalling_discards_pending_signals_and_puts_the_previous_handler_back() {
        let _sigprof = SIGPROF_IN_TEST.lock().unwrap_or_else(|e| e.into_inner());
        use crate::sampling::unix;
        use core::ffi::{c_int, c_void};
        use std::sync::atomic::AtomicUsize;
        /// glibc's `sigset_t` (1024 bits).
        #[repr(C)]
        struct SigSet([u64; 16]);
        const SIG_BLOCK: c_int = 0;
        const SIG_UNBLOCK: c_int = 1;
        extern "C" {
            fn pthread_sigmask(how: c_int, set: *const SigSet, old: *mut SigSet) -> c_int;
            fn sigpending(set: *mut SigSet) -> c_int;
        }
        let sigprof = SigSet({
            let mut bits = [0u64; 16];
            bits[0] = 1 << (unix::SIGPROF - 1);
            bits
        });
        let pending = || {
            let mut set = SigSet([0; 16]);
            // SAFETY: a valid out-pointer.
            assert_eq!(unsafe { sigpending(&mut set) }, 0);
            set.0[0] & sigprof.0[0] != 0
        };
        let current = || {
            let mut now = unix::sigaction_t::zeroed();
            // SAFETY: reads the current action.
            let read = unsafe { unix::sigaction(unix::SIGPROF, core::ptr::null(), &mut now) };
            assert_eq!(read, 0);
            now.sa_sigaction
        };
        static SEEN: AtomicUsize = AtomicUsize::new(0);
        extern "C" fn before(_: c_int, info: *mut unix::siginfo_t, _: *mut c_void) {
            // SAFETY: the siginfo_t passed along.
            SEEN.store(unsafe { (*info).si_value }, Ordering::SeqCst);
        }
        extern "C" fn later(_: c_int, _: *mut unix::siginfo_t, _: *mut c_void) {}
        let application = before as extern "C" fn(c_int, *mut unix::siginfo_t, *mut c_void);
        // A clean start: another test may have left ours installed.
        assert!(uninstall_for_test());
        let mut action = unix::sigaction_t::zeroed();
        action.sa_sigaction = application as usize;
        action.sa_flags = unix::SA_SIGINFO;
        // SAFETY: a valid action; SIGPROF's tests hold SIGPROF_IN_TEST.
        let set = unsafe { unix::sigaction(unix::SIGPROF, &action, core::ptr::null_mut()) };
        assert_eq!(set, 0);
        assert!(install_for_test());
        assert!(handler_installed());
        assert_ne!(current(), application as usize);

        // A signal of ours pending on this thread (blocked here).
        let masked =
            // SAFETY: valid sets.
            unsafe { pthread_sigmask(SIG_BLOCK, &sigprof, core::ptr::null_mut()) };
        assert_eq!(masked, 0);
        let ours = value_of(KIND_WALL, MAX_THREADS - 1);
        assert!(unix::queue_to_thread(unix::gettid(), unix::SIGPROF, ours));
        assert!(pending(), "the signal is pending before the stop");
        assert!(uninstall_for_test());
        assert!(!handler_installed());
        assert!(!pending(), "the pending signal of ours was discarded");
        assert_eq!(current(), application as usize);
        SEEN.store(0, Ordering::SeqCst);
        let masked =
            // SAFETY: valid sets.
            unsafe { pthread_sigmask(SIG_UNBLOCK, &sigprof, core::ptr::null_mut()) };
        assert_eq!(masked, 0);
        assert_eq!(SEEN.load(Ordering::SeqCst), 0, "nothing left to deliver");
        // The application's own SIGPROF: straight to its handler, not
        // through ours (the foreign count stays).
        let foreign = COUNTERS.foreign.load(Ordering::SeqCst);
        assert!(unix::queue_to_thread(unix::gettid(), unix::SIGPROF, 77));
        assert_eq!(SEEN.load(Ordering::SeqCst), 77);
        assert_eq!(COUNTERS.foreign.load(Ordering::SeqCst), foreign);

        // Installed again, then a handler installed over ours: ours stays.
        assert!(install_for_test());
        let mut over = unix::sigaction_t::zeroed();
        over.sa_sigaction =
            later as extern "C" fn(c_int, *mut unix::siginfo_t, *mut c_void) as usize;
        over.sa_flags = unix::SA_SIGINFO;
        let mut ours_action = unix::sigaction_t::zeroed();
        // SAFETY: valid actions.
        let swapped = unsafe { unix::sigaction(unix::SIGPROF, &over, &mut ours_action) };
        assert_eq!(swapped, 0);
        assert!(!uninstall_for_test());
        assert!(handler_installed());
        assert_eq!(current(), over.sa_sigaction);
        // That handler gone (ours back), the uninstall goes through.
        // SAFETY: a valid action (ours, as read above).
        let back = unsafe { unix::sigaction(unix::SIGPROF, &ours_action, core::ptr::null_mut()) };
        assert_eq!(back, 0);
        assert!(uninstall_for_test());
        assert_eq!(current(), application as usize);
        let mut default = unix::sigaction_t::zeroed();
        default.sa_sigaction = unix::SIG_IGN;
        // SAFETY: a valid action: SIGPROF ignored for the rest of the run.
        let reset = unsafe { unix::sigaction(unix::SIGPROF, &default, core::ptr::null_mut()) };
        assert_eq!(reset, 0);
    }
}
