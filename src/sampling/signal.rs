//! Sampling without stopping the world ([`SamplingMode::Signal`], Linux on
//! x86-64 and AArch64): each thread is interrupted on its own by a signal
//! and walks its own stack in the handler.
//!
//! - **CPU samples**: every registered thread has a POSIX timer on its own
//!   CPU clock (`timer_create` with `SIGEV_THREAD_ID`), firing every
//!   `1/hz` seconds of that thread's CPU time; a thread that sleeps or
//!   waits is never interrupted by it. The sample's weight is the thread's
//!   CPU time since its previous CPU sample, read in the handler.
//! - **Wall samples**: the sampler thread signals at most
//!   [`SamplerOptions::wall_threads_per_tick`](super::SamplerOptions)
//!   threads per tick, round-robin (`rt_tgsigqueueinfo`); the weight is the
//!   wall time since that thread's previous wall sample.
//!
//! The signal is `SIGPROF`: CoreCLR's PAL uses `SIGRTMIN` to inject
//! activations (thread suspension) and handles `SIGILL`, `SIGTRAP`,
//! `SIGFPE`, `SIGBUS`, `SIGSEGV`, `SIGINT`, `SIGQUIT`, `SIGTERM` (and
//! `SIGABRT`), none of them `SIGPROF` (dotnet/runtime
//! `src/coreclr/pal/src/exception/signal.cpp`, `INJECT_ACTIVATION_SIGNAL`
//! and `SEHInitializeSignals`). The handler is installed with `SA_RESTART |
//! SA_SIGINFO`, not `SA_ONSTACK` (see `install`), and recognizes its own signals by `si_code`
//! (`SI_TIMER` or `SI_QUEUE`) and a tag in `si_value`; any other `SIGPROF`
//! goes to the handler that was there before (one taking `SA_SIGINFO`
//! arguments or a plain one; a default or ignored disposition is left as
//! ignored for those). The stop puts the previous disposition back once no
//! signal of ours can come (`uninstall`: the timers deleted, the pending
//! signals discarded by a passage through `SIG_IGN`, the running handlers
//! waited for), so that a detach can unload the library;
//! [`Sampler::threads_ended`](super::Sampler::threads_ended) is `false`
//! until then.
//!
//! The handler is async-signal-safe: no allocation, no lock, no call into
//! the runtime. It finds its thread's registration (stack bounds) by the
//! index carried in `si_value`, checks that it is its own (`gettid`), walks
//! the frame-pointer chain from the interrupted context ([`walk`]: every
//! read inside the thread's stack, strictly upward, 8-byte aligned, at most
//! [`MAX_DEPTH`] frames) and writes the raw instruction pointers into a
//! preallocated buffer of [`SLOTS`] slots, each with an atomic state
//! (free, being written, ready); a full buffer drops the sample (counted).
//! The sampler thread drains it and turns the addresses into `FunctionID`s
//! (`GetFunctionFromIP`, cached) off the signal path. Every function the
//! handler runs (here, in `unwind.rs` and `unix.rs`) is compiled under
//! `deny(clippy::arithmetic_side_effects, clippy::indexing_slicing,
//! clippy::panic)`: a debug build has no overflow or bounds check that
//! could panic inside the handler.
//!
//! A thread is registered on itself (its stack bounds come from
//! `pthread_getattr_np`, which only the thread can ask safely), from the
//! runtime's `ThreadCreated` or `ThreadAssignedToOSThread` callbacks, which
//! CoreCLR raises on the new thread; its timer is deleted at
//! `ThreadDestroyed`, when the OS thread ends (a thread-local guard), or at
//! [`stop`], whichever comes first.

// Off Linux x86-64/AArch64 the handler, the walk and the tables are not
// built into a sampler (SamplingMode::Signal answers E_NOTIMPL there).
#![cfg_attr(
    not(all(
        target_os = "linux",
        any(target_arch = "x86_64", target_arch = "aarch64")
    )),
    allow(dead_code, unused_imports)
)]

#[cfg(all(
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64")
))]
mod imp {
    use alloc::vec::Vec;
    use core::ffi::c_int;
    use core::sync::atomic::{fence, AtomicBool, AtomicU64, Ordering};
    use std::sync::{Mutex, MutexGuard};

    pub(in crate::sampling) use crate::sampling::handler::handler_installed;
    use crate::sampling::handler::{install, uninstall};
    use crate::sampling::mode::{SignalStats, MAX_THREADS};
    use crate::sampling::slots::{
        value_of, SpanBlock, COUNTERS, KIND_CPU, KIND_WALL, REGISTRY, SPANS,
    };
    use crate::sampling::unix;
    use crate::sampling::unwind;

    /// Whether a signal-mode sampler is running (one per process).
    static ACTIVE: AtomicBool = AtomicBool::new(false);
    /// Whether the span helper gets blocks ([`corprof_span_block`]):
    /// `SamplerOptions::spans`, set by [`start`].
    static SPANS_ON: AtomicBool = AtomicBool::new(false);

    /// The calling thread's span block (`slots::SpanBlock`), for the
    /// managed span helper (spans/SpanHelper.cs, docs/sampling.md, "Samples
    /// tied to spans"), which finds this function with
    /// `NativeLibrary.GetExport` in the profiler's library, calls it once
    /// per thread and then writes the thread's current trace and span ids
    /// into the block itself, under its sequence counter. Null when no
    /// signal-mode sampler tracks spans, or the calling thread has no
    /// registration (the helper asks again later). The block stays valid
    /// memory for the life of the process (a static table); it is the
    /// thread's until its registration ends (a handler on another thread
    /// ignores it: its `tid`).
    #[no_mangle]
    pub(super) extern "C" fn corprof_span_block() -> *mut SpanBlock {
        if !ACTIVE.load(Ordering::Acquire) || !SPANS_ON.load(Ordering::Acquire) {
            return core::ptr::null_mut();
        }
        let tid = unix::gettid();
        let found = REGISTRY.iter().zip(SPANS.iter()).find(|(entry, block)| {
            let seq = entry.seq.load(Ordering::Acquire);
            seq % 2 == 0
                && entry.tid.load(Ordering::Acquire) == tid
                && block.tid.load(Ordering::Acquire) == tid
        });
        found.map_or(core::ptr::null_mut(), |(_, block)| {
            block as *const SpanBlock as *mut SpanBlock
        })
    }

    /// Whether a signal-mode sampler tracks spans (1) or not (0), for the
    /// span helper: without, it listens to no `Activity`.
    #[no_mangle]
    pub(super) extern "C" fn corprof_spans_enabled() -> u32 {
        u32::from(ACTIVE.load(Ordering::Acquire) && SPANS_ON.load(Ordering::Acquire))
    }

    /// Whether samples carry the span current on their thread (before
    /// [`start`]).
    pub(in crate::sampling) fn track_spans(on: bool) {
        SPANS_ON.store(on, Ordering::Release);
    }

    /// The side of each registration that only callbacks touch.
    struct Side {
        tid: c_int,
        thread: usize,
        timer: usize,
        serial: u64,
    }

    /// The last registration's serial.
    static NEXT_SERIAL: AtomicU64 = AtomicU64::new(0);

    struct Registrations {
        entries: Vec<Option<Side>>,
        free: Vec<usize>,
        /// CPU timer interval in nanoseconds.
        period: u64,
        created: u64,
        deleted: u64,
        failed: u64,
        /// Round-robin position of the wall signals.
        next_wall: usize,
    }

    static REGISTRATIONS: Mutex<Option<Registrations>> = Mutex::new(None);

    fn registrations() -> MutexGuard<'static, Option<Registrations>> {
        REGISTRATIONS
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    pub(in crate::sampling) fn start(hz: u32) -> bool {
        if ACTIVE.swap(true, Ordering::AcqRel) {
            return false;
        }
        unwind::refresh();
        if !install() {
            ACTIVE.store(false, Ordering::Release);
            return false;
        }
        *registrations() = Some(Registrations {
            entries: Vec::new(),
            free: Vec::new(),
            period: crate::sampling::options::sample_interval(hz).as_nanos() as u64,
            created: 0,
            deleted: 0,
            failed: 0,
            next_wall: 0,
        });
        true
    }

    std::thread_local! {
        /// The calling thread's registration (index, serial), ended when the
        /// OS thread ends.
        static GUARD: ExitGuard = const { ExitGuard(core::cell::Cell::new(None)) };
    }

    struct ExitGuard(core::cell::Cell<Option<(usize, u64)>>);

    impl Drop for ExitGuard {
        fn drop(&mut self) {
            if let Some((index, serial)) = self.0.get() {
                if let Some(regs) = registrations().as_mut() {
                    end(regs, index, Some(serial));
                }
            }
        }
    }

    /// Registers the calling thread as managed thread `thread` on OS
    /// thread `os_thread` (nothing when it is not the calling thread, or is
    /// registered already).
    pub(in crate::sampling) fn register_current(thread: usize, os_thread: u32) {
        let tid = unix::gettid();
        if tid as u32 != os_thread {
            return;
        }
        let mut guard = registrations();
        let Some(regs) = guard.as_mut() else {
            return;
        };
        if regs
            .entries
            .iter()
            .flatten()
            .any(|side| side.tid == tid && side.thread == thread)
        {
            return;
        }
        let Some((low, high)) = unix::current_stack() else {
            regs.failed += 1;
            return;
        };
        let index = match regs.free.pop() {
            Some(index) => index,
            None if regs.entries.len() < MAX_THREADS => {
                regs.entries.push(None);
                regs.entries.len() - 1
            }
            None => {
                regs.failed += 1;
                return;
            }
        };
        // Never 0, never reused (a later sampler in this process too).
        let serial = NEXT_SERIAL.fetch_add(1, Ordering::Relaxed) + 1;
        let entry = &REGISTRY[index];
        let seq = entry.seq.load(Ordering::Relaxed);
        entry.seq.store(seq.wrapping_add(1), Ordering::Relaxed);
        fence(Ordering::Release);
        entry.low.store(low, Ordering::Relaxed);
        entry.high.store(high, Ordering::Relaxed);
        entry.thread.store(thread, Ordering::Relaxed);
        entry.serial.store(serial, Ordering::Relaxed);
        entry.last_cpu.store(
            unix::clock_nanos(unix::CLOCK_THREAD_CPUTIME_ID),
            Ordering::Relaxed,
        );
        entry
            .last_wall
            .store(unix::clock_nanos(unix::CLOCK_MONOTONIC), Ordering::Relaxed);
        entry.tid.store(tid, Ordering::Relaxed);
        SPANS[index].claim(tid);
        entry.seq.store(seq.wrapping_add(2), Ordering::Release);

        let mut event = unix::sigevent::thread(unix::SIGPROF, tid, value_of(KIND_CPU, index));
        let mut timer: unix::timer_t = core::ptr::null_mut();
        // SAFETY: valid pointers; the CPU clock of the calling thread.
        let created =
            unsafe { unix::timer_create(unix::thread_cpu_clock(tid), &mut event, &mut timer) };
        let period = unix::timespec::from_nanos(regs.period);
        let spec = unix::itimerspec {
            it_interval: period,
            it_value: period,
        };
        let armed = created == 0 && {
            // SAFETY: the timer just created.
            unsafe { unix::timer_settime(timer, 0, &spec, core::ptr::null_mut()) == 0 }
        };
        if !armed {
            if created == 0 {
                // SAFETY: the timer created above, deleted once.
                unsafe { unix::timer_delete(timer) };
            }
            clear(index);
            regs.free.push(index);
            regs.failed += 1;
            return;
        }
        regs.entries[index] = Some(Side {
            tid,
            thread,
            timer: timer as usize,
            serial,
        });
        regs.created += 1;
        drop(guard);
        // The OS thread's end ends the registration, if nothing did before.
        let _ = GUARD.try_with(|g| g.0.set(Some((index, serial))));
    }

    fn clear(index: usize) {
        let entry = &REGISTRY[index];
        let seq = entry.seq.load(Ordering::Relaxed);
        entry.seq.store(seq.wrapping_add(1), Ordering::Relaxed);
        fence(Ordering::Release);
        entry.tid.store(0, Ordering::Relaxed);
        SPANS[index].claim(0);
        entry.seq.store(seq.wrapping_add(2), Ordering::Release);
    }

    /// Ends registration `index` (when its serial is `serial`, if given):
    /// deletes its timer, frees the slot.
    fn end(regs: &mut Registrations, index: usize, serial: Option<u64>) {
        let Some(Some(side)) = regs.entries.get(index) else {
            return;
        };
        if serial.is_some_and(|s| s != side.serial) {
            return;
        }
        // SAFETY: the registration's own timer, deleted once (the entry is
        // taken below).
        unsafe { unix::timer_delete(side.timer as unix::timer_t) };
        regs.deleted += 1;
        clear(index);
        regs.entries[index] = None;
        regs.free.push(index);
    }

    /// Managed threads destroyed while the sampler ran, for the sampler
    /// thread to end once it has recorded their last samples
    /// ([`take_destroyed`]).
    static DESTROYED: Mutex<Vec<usize>> = Mutex::new(Vec::new());

    /// Ends managed thread `thread`'s registration, if any. `true` when
    /// the sampler runs: the thread is then listed for the sampler thread
    /// to end its slot after the samples already taken are recorded
    /// ([`take_destroyed`]); `false` after the stop (nothing is recorded
    /// any more: the caller ends the slot).
    pub(in crate::sampling) fn deregister(thread: usize) -> bool {
        let mut guard = registrations();
        let Some(regs) = guard.as_mut() else {
            return false;
        };
        if let Some(index) = regs
            .entries
            .iter()
            .position(|s| s.as_ref().is_some_and(|s| s.thread == thread))
        {
            end(regs, index, None);
        }
        DESTROYED
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(thread);
        true
    }

    /// The threads [`deregister`] listed since the last call (the sampler
    /// thread, after recording what it drained).
    pub(in crate::sampling) fn take_destroyed() -> Vec<usize> {
        core::mem::take(&mut *DESTROYED.lock().unwrap_or_else(|p| p.into_inner()))
    }

    /// Whether registration `index` of serial `serial` is still on (also
    /// when the sampler has stopped: the stop ended it, not its thread).
    pub(in crate::sampling) fn is_live(index: u32, serial: u64) -> bool {
        match registrations().as_ref() {
            None => true,
            Some(regs) => matches!(
                regs.entries.get(index as usize),
                Some(Some(side)) if side.serial == serial
            ),
        }
    }

    /// Signals at most `count` registered threads, round-robin, for a wall
    /// sample; returns how many were sent.
    pub(in crate::sampling) fn signal_wall(count: usize) -> u64 {
        let mut guard = registrations();
        let Some(regs) = guard.as_mut() else {
            return 0;
        };
        let live: Vec<(usize, c_int)> = regs
            .entries
            .iter()
            .enumerate()
            .filter_map(|(i, s)| s.as_ref().map(|s| (i, s.tid)))
            .collect();
        if live.is_empty() {
            return 0;
        }
        let start = regs.next_wall % live.len();
        let picked = count.min(live.len());
        regs.next_wall = start + picked;
        drop(guard);
        let mut sent = 0;
        for k in 0..picked {
            let (index, tid) = live[(start + k) % live.len()];
            sent += u64::from(unix::queue_to_thread(
                tid,
                unix::SIGPROF,
                value_of(KIND_WALL, index),
            ));
        }
        sent
    }

    /// The POSIX timers of this process the kernel lists.
    fn kernel_timers() -> Option<u64> {
        let text = std::fs::read_to_string("/proc/self/timers").ok()?;
        Some(text.lines().filter(|l| l.starts_with("ID:")).count() as u64)
    }

    /// Deletes every timer, ends every registration, then puts back the
    /// `SIGPROF` disposition that was there before ([`uninstall`]). Fills
    /// the counters of `stats`.
    pub(in crate::sampling) fn stop(stats: &mut SignalStats) {
        let mut guard = registrations();
        if let Some(regs) = guard.as_mut() {
            stats.timers_live_at_stop = regs.entries.iter().flatten().count() as u64;
            stats.kernel_timers_at_stop = kernel_timers();
            for index in 0..regs.entries.len() {
                end(regs, index, None);
            }
            stats.timers_created = regs.created;
            stats.timers_deleted = regs.deleted;
            stats.registrations_failed = regs.failed;
        }
        *guard = None;
        drop(guard);
        stats.signals_handled = COUNTERS.handled.load(Ordering::Relaxed);
        stats.dropped = COUNTERS.dropped.load(Ordering::Relaxed);
        stats.stale = COUNTERS.stale.load(Ordering::Relaxed);
        stats.foreign = COUNTERS.foreign.load(Ordering::Relaxed);
        // No timer left and the sampler thread sends nothing more (it is
        // the caller, or has ended): no signal of ours is generated now.
        stats.handler_removed = uninstall();
        ACTIVE.store(false, Ordering::Release);
    }
}

#[cfg(not(all(
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64")
)))]
mod imp {
    use alloc::vec::Vec;

    use crate::sampling::mode::SignalStats;

    pub(in crate::sampling) fn start(_hz: u32) -> bool {
        false
    }
    pub(in crate::sampling) fn register_current(_thread: usize, _os_thread: u32) {}
    pub(in crate::sampling) fn deregister(_thread: usize) -> bool {
        false
    }
    pub(in crate::sampling) fn take_destroyed() -> Vec<usize> {
        Vec::new()
    }
    pub(in crate::sampling) fn signal_wall(_count: usize) -> u64 {
        0
    }
    pub(in crate::sampling) fn stop(_stats: &mut SignalStats) {}
    pub(in crate::sampling) fn handler_installed() -> bool {
        false
    }
    pub(in crate::sampling) fn is_live(_index: u32, _serial: u64) -> bool {
        true
    }
    pub(in crate::sampling) fn track_spans(_on: bool) {}
}

pub(super) use imp::{
    deregister, handler_installed, is_live, register_current, signal_wall, start, stop,
    take_destroyed, track_spans,
};
