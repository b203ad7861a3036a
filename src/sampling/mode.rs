//! The sampling modes ([`SamplingMode`]) and what each did: the enum, the
//! limits of signal mode and thread-suspend mode, and their statistics
//! ([`SignalStats`], [`ThreadSuspendStats`]). Nothing of the sampler's own.

use alloc::vec::Vec;

use crate::facade::ProfilerInfo;

/// How the sampler takes stack samples.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum SamplingMode {
    /// Per-thread signals on Linux (x86-64 and AArch64): CPU timers on each
    /// thread's CPU clock and wall-time signals to a few threads per tick;
    /// each thread walks its own frame-pointer chain in the handler. The
    /// runtime is never suspended. The default on those targets.
    Signal,
    /// Windows x64: at every beat, one managed thread at a time suspended
    /// (`SuspendThread`), walked with `DoStackSnapshot` and resumed; the
    /// runtime is never suspended (`thread_suspend.rs`). The default there.
    ThreadSuspend,
    /// `SuspendRuntime`: every managed thread stops for every sample and is
    /// walked with `DoStackSnapshot`. Every platform; the default where
    /// the others are not available.
    SuspendRuntime,
}

impl Default for SamplingMode {
    /// [`SamplingMode::Signal`] on Linux x86-64 and AArch64,
    /// [`SamplingMode::ThreadSuspend`] on Windows x64,
    /// [`SamplingMode::SuspendRuntime`] elsewhere.
    fn default() -> SamplingMode {
        if SIGNAL_SUPPORTED {
            SamplingMode::Signal
        } else if THREAD_SUSPEND_SUPPORTED {
            SamplingMode::ThreadSuspend
        } else {
            SamplingMode::SuspendRuntime
        }
    }
}

impl SamplingMode {
    /// Its name: `signal`, `thread-suspend` or `suspend-runtime`.
    pub fn name(self) -> &'static str {
        match self {
            SamplingMode::Signal => "signal",
            SamplingMode::ThreadSuspend => "thread-suspend",
            SamplingMode::SuspendRuntime => "suspend-runtime",
        }
    }

    /// The mode of a [`name`](SamplingMode::name) (`None` for any other
    /// text).
    pub fn from_name(name: &str) -> Option<SamplingMode> {
        [
            SamplingMode::Signal,
            SamplingMode::ThreadSuspend,
            SamplingMode::SuspendRuntime,
        ]
        .into_iter()
        .find(|mode| mode.name() == name)
    }

    /// Whether this build can sample in this mode.
    pub fn is_supported(self) -> bool {
        match self {
            SamplingMode::Signal => SIGNAL_SUPPORTED,
            SamplingMode::ThreadSuspend => THREAD_SUSPEND_SUPPORTED,
            SamplingMode::SuspendRuntime => true,
        }
    }

    /// Whether the sampler can sample in this mode with this runtime: built
    /// for it, and for [`SuspendRuntime`](SamplingMode::SuspendRuntime)
    /// a runtime with `SuspendRuntime` (`ICorProfilerInfo10`, .NET Core
    /// 3.0); for [`ThreadSuspend`](SamplingMode::ThreadSuspend) one with
    /// `EnumThreads` and `InitializeCurrentThread` (`ICorProfilerInfo4`).
    pub fn is_available(self, info: &ProfilerInfo) -> bool {
        self.is_supported()
            && match self {
                SamplingMode::SuspendRuntime => info.v10().is_some(),
                SamplingMode::ThreadSuspend => info.version() >= 4,
                SamplingMode::Signal => true,
            }
    }
}

/// Whether [`SamplingMode::Signal`] is built for this target.
const SIGNAL_SUPPORTED: bool = cfg!(all(
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64")
));

/// What the signal sampler did ([`SamplingMode::Signal`]; all zero in the
/// other modes).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct SignalStats {
    /// Wall-time signals the sampler thread sent.
    pub signals_sent: u64,
    /// Signals of the sampler's own that a handler ran for (CPU timer
    /// expirations and wall-time signals).
    pub signals_handled: u64,
    /// Samples lost because the buffer was full.
    pub dropped: u64,
    /// Signals for a registration that had just ended (thread gone, or the
    /// slot reused): ignored.
    pub stale: u64,
    /// `SIGPROF`s that were not the sampler's, passed to the handler that
    /// was installed before.
    pub foreign: u64,
    /// CPU samples recorded.
    pub cpu_samples: u64,
    /// Wall samples recorded.
    pub wall_samples: u64,
    /// Samples whose walk reached at least one managed frame.
    pub managed_samples: u64,
    /// Walks cut short by the stack bounds (a frame pointer outside the
    /// thread's stack, not moving upward, or misaligned: a native frame
    /// without a frame pointer, typically).
    pub cut_bounds: u64,
    /// Walks cut short by [`MAX_DEPTH`].
    pub cut_depth: u64,
    /// Threads registered (a timer each).
    pub timers_created: u64,
    /// Timers deleted (thread destroyed or ended, or the stop).
    pub timers_deleted: u64,
    /// Whether the stop put back the `SIGPROF` disposition that was there
    /// before the sampler's (`false` while another sampler in signal mode
    /// runs, or when a handler installed after the sampler's chains to it:
    /// the library must then stay loaded).
    pub handler_removed: bool,
    /// Registrations that failed (not called on the thread itself, no
    /// stack bounds, no free slot, or `timer_create` refused).
    pub registrations_failed: u64,
    /// Timers alive just before the stop deleted them, as the sampler
    /// counts them.
    pub timers_live_at_stop: u64,
    /// The POSIX timers the kernel listed for the process at that moment
    /// (`/proc/self/timers`; `None` where it cannot be read).
    pub kernel_timers_at_stop: Option<u64>,
    /// Samples recorded after their thread's registration had ended (its
    /// thread destroyed or gone): dropped, so that an ended thread's slot
    /// is never made again.
    pub late: u64,
    /// Samples per thread slot of the profile, filled at the stop: (OS
    /// thread ID, CPU samples, wall samples); the ended threads of one
    /// name share the slot of the first of them, as their samples do.
    pub per_thread: Vec<(u32, u64, u64)>,
}

/// Most frames a walk records (deeper stacks are cut, counted in
/// [`SignalStats::cut_depth`]).
pub const MAX_DEPTH: usize = 128;
/// Slots of the sample buffer.
pub const SLOTS: usize = 1024;
/// Most threads registered at once (more are not sampled, counted in
/// [`SignalStats::registrations_failed`]).
pub const MAX_THREADS: usize = 4096;

/// Most frames a walk records (the rest of a deeper stack is cut, counted
/// in [`ThreadSuspendStats::cut_depth`]).
pub const MAX_FRAMES: usize = 512;

/// Whether [`SamplingMode::ThreadSuspend`] is built
/// for this target.
pub(super) const THREAD_SUSPEND_SUPPORTED: bool = cfg!(all(windows, target_arch = "x86_64"));

/// What thread-suspend mode did (all zero in the other modes).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ThreadSuspendStats {
    /// Threads suspended and resumed (one walk each).
    pub threads_suspended: u64,
    /// Threads that could not be suspended or whose context could not be
    /// read (it had ended, or no handle): skipped.
    pub suspend_failures: u64,
    /// Walks the runtime refused with `CORPROF_E_STACKSNAPSHOT_UNSAFE`.
    pub walks_unsafe: u64,
    /// Every refused walk, by HRESULT: (HRESULT, count).
    pub walk_errors: Vec<(i32, u64)>,
    /// Walks cut at [`MAX_FRAMES`].
    pub cut_depth: u64,
    /// Samples per OS thread: (OS thread ID, samples); each sample carries
    /// both the CPU and the wall time since the thread's previous one.
    pub per_thread: Vec<(u32, u64)>,
}

// Counted by thread-suspend mode only (Windows x64).
#[cfg_attr(not(all(windows, target_arch = "x86_64")), allow(dead_code))]
impl ThreadSuspendStats {
    /// Counts a refused walk.
    pub(super) fn count_error(&mut self, hr: i32) {
        if hr == crate::profiling::CORPROF_E_STACKSNAPSHOT_UNSAFE.0 {
            self.walks_unsafe += 1;
        }
        match self.walk_errors.iter_mut().find(|e| e.0 == hr) {
            Some(entry) => entry.1 += 1,
            None => self.walk_errors.push((hr, 1)),
        }
    }

    /// Counts a sample of OS thread `os_thread`.
    pub(super) fn count_sample(&mut self, os_thread: u32) {
        match self.per_thread.iter_mut().find(|t| t.0 == os_thread) {
            Some(entry) => entry.1 += 1,
            None => self.per_thread.push((os_thread, 1)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_have_names_and_a_default_for_the_target() {
        for mode in [
            SamplingMode::Signal,
            SamplingMode::ThreadSuspend,
            SamplingMode::SuspendRuntime,
        ] {
            assert_eq!(SamplingMode::from_name(mode.name()), Some(mode));
        }
        assert_eq!(SamplingMode::from_name("signals"), None);
        let linux = cfg!(all(
            target_os = "linux",
            any(target_arch = "x86_64", target_arch = "aarch64")
        ));
        assert_eq!(SamplingMode::Signal.is_supported(), linux);
        assert_eq!(SamplingMode::default() == SamplingMode::Signal, linux);
        let windows_x64 = cfg!(all(windows, target_arch = "x86_64"));
        assert_eq!(SamplingMode::ThreadSuspend.is_supported(), windows_x64);
        assert_eq!(
            SamplingMode::default() == SamplingMode::ThreadSuspend,
            windows_x64
        );
        assert!(SamplingMode::default().is_supported());
    }

    #[test]
    fn errors_and_samples_are_counted_by_kind() {
        let mut stats = ThreadSuspendStats::default();
        let unsafe_hr = crate::profiling::CORPROF_E_STACKSNAPSHOT_UNSAFE.0;
        let unmanaged = crate::profiling::CORPROF_E_STACKSNAPSHOT_UNMANAGED_CTX.0;
        stats.count_error(unsafe_hr);
        stats.count_error(unmanaged);
        stats.count_error(unsafe_hr);
        assert_eq!(stats.walks_unsafe, 2);
        assert_eq!(stats.walk_errors, [(unsafe_hr, 2), (unmanaged, 1)]);
        stats.count_sample(7);
        stats.count_sample(9);
        stats.count_sample(7);
        assert_eq!(stats.per_thread, [(7, 2), (9, 1)]);
    }
}
