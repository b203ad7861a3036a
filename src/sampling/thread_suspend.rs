//! [`SamplingMode::ThreadSuspend`] (Windows x64): the runtime is never
//! suspended; at every beat the sampler thread stops one managed thread at
//! a time, walks it and lets it go:
//!
//! 1. `SuspendThread` on the thread's handle (`GetHandleFromThread`, or
//!    `OpenThread` by its OS thread ID), then `GetThreadContext`:
//!    `SuspendThread` only asks for the suspension, and reading the context
//!    waits until the thread has stopped;
//! 2. `DoStackSnapshot(thread, ..., COR_PRF_SNAPSHOT_DEFAULT, no context)`;
//! 3. `ResumeThread`.
//!
//! What the runtime does with such a walk (dotnet/runtime
//! `src/coreclr/vm/proftoeeinterfaceimpl.cpp`, `DoStackSnapshot`): for a
//! thread other than the caller while the runtime is not suspended, it
//! suspends the thread itself too (`Thread::SuspendThread`, one try only:
//! `CORPROF_E_STACKSNAPSHOT_UNSAFE` when the thread is in a region that
//! forbids it, or another thread is hijacking it), reads its context, and
//! seeds the walk with it when the thread runs managed code in cooperative
//! mode (`CORPROF_E_STACKSNAPSHOT_UNSAFE` when that context looks stale);
//! in preemptive mode it discards any seed and starts from the thread's
//! explicit frames. A seed of the profiler's would therefore add nothing,
//! and one in native code is refused (`CORPROF_E_STACKSNAPSHOT_UNMANAGED_CTX`):
//! none is passed. The walk runs with `THREAD_IS_SUSPENDED` and without
//! host calls, so it does not wait for a lock the stopped thread may hold
//! (`CORPROF_E_ASYNCHRONOUS_UNSAFE` instead). Every refusal is counted by
//! its HRESULT in [`ThreadSuspendStats::walk_errors`] and recorded as the
//! other modes record a failed walk: the time since the thread's previous
//! sample under `[no managed frames]`, counted in
//! [`SamplerStats::failed_walks`](super::SamplerStats::failed_walks).
//!
//! While a thread is stopped the sampler thread allocates nothing and takes
//! no lock that thread could hold (the allocator's, the sampler's state):
//! the walk's callback writes into a frame buffer allocated before, of
//! [`MAX_FRAMES`] entries (a deeper stack is cut, counted). The only lock
//! held is `Core::walking`, which only [`Sampler::thread_destroyed`]
//! takes: the runtime requires a profiler to block in `ThreadDestroyed`
//! until it no longer walks that thread (its `Thread` is freed after), so a
//! destroyed thread is never walked. Names, CPU times and the profile are
//! done after `ResumeThread`.
//!
//! [`Sampler::thread_destroyed`]: super::Sampler::thread_destroyed
//! [`SamplingMode::ThreadSuspend`]: super::SamplingMode::ThreadSuspend

// Off Windows x64 the counters are kept but never counted.
#![cfg_attr(not(all(windows, target_arch = "x86_64")), allow(dead_code))]

#[cfg(all(windows, target_arch = "x86_64"))]
pub(super) use imp::run;

/// Never started where the mode is not built (`Sampler::start` refuses it).
#[cfg(not(all(windows, target_arch = "x86_64")))]
pub(super) fn run(_host: &dyn super::ticker::Host) {}

#[cfg(all(windows, target_arch = "x86_64"))]
mod imp {
    use alloc::boxed::Box;
    use alloc::vec::Vec;
    use core::ops::ControlFlow;
    use core::time::Duration;
    use std::time::Instant;

    use crate::facade::StackFrame;
    use crate::profiling::{FunctionID, ThreadID};
    use crate::sampling::clock::thread_handle_cpu_nanos;
    use crate::sampling::mode::MAX_FRAMES;
    use crate::sampling::options::{sample_interval, SAMPLE_TYPES, WALL};
    use crate::sampling::record::{Core, Sample};
    use crate::sampling::state::{Pause, SpanIds, MAX_PAUSES};
    use crate::sampling::ticker::{beats, Host};
    use crate::sampling::win32::{
        CloseHandle, GetThreadContext, OpenThread, ResumeThread, SuspendThread, CONTEXT,
        CONTEXT_CONTROL, FAILED_COUNT, THREAD_GET_CONTEXT, THREAD_QUERY_LIMITED_INFORMATION,
        THREAD_SUSPEND_RESUME,
    };
    use crate::support::sync::lock;

    /// How one thread's turn went.
    enum Turn {
        /// Destroyed since the enumeration, or its OS thread unknown.
        Gone,
        /// Not suspended (or its context not read).
        NotSuspended,
        /// Walked: the runtime's answer, the pause (suspend to resume), the
        /// OS thread, its CPU clock after the walk, and whether the walk was
        /// cut at `MAX_FRAMES`.
        Walked {
            result: Result<(), i32>,
            pause: Duration,
            os_thread: u32,
            cpu_now: Option<u64>,
            cut: bool,
        },
    }

    /// The sampler thread in thread-suspend mode, until the stop.
    pub(in crate::sampling) fn run(host: &dyn Host) {
        let inner = host.core();
        let info = &inner.info;
        let _ = info.initialize_current_thread();
        let period = sample_interval(inner.options.hz);
        // Allocated here, written while a thread is stopped.
        let mut frames: Vec<FunctionID> = Vec::with_capacity(MAX_FRAMES);
        let mut context = Box::new(CONTEXT::zeroed());
        let mut threads: Vec<ThreadID> = Vec::new();
        let mut last_beat: Option<Instant> = None;
        beats(host, |began| {
            // Each thread's sample stands for the time since the previous
            // beat, as in suspend-runtime mode.
            let wall = last_beat.map_or(period, |last| began - last);
            last_beat = Some(began);
            // From here on, `thread_destroyed` notes the threads it is told
            // of; `EnumThreads` lists none whose `ThreadDestroyed` came
            // before (it skips the threads marked to be reported dead).
            if let Some(destroyed) = lock(&inner.walking).as_mut() {
                destroyed.clear();
            }
            threads.clear();
            if let Ok(all) = info.threads() {
                threads.extend(all);
            }
            for &thread in &threads {
                let turn = turn(inner, thread, &mut frames, &mut context);
                record(inner, thread, turn, &frames, wall);
            }
            ControlFlow::Continue(())
        });
        // No more walks: `thread_destroyed` need not note anything.
        *lock(&inner.walking) = None;
    }

    /// Suspends, walks and resumes one thread (`frames` holds the walk,
    /// innermost first, `FunctionID::NULL` for a native run).
    fn turn(
        inner: &Core,
        thread: ThreadID,
        frames: &mut Vec<FunctionID>,
        context: &mut CONTEXT,
    ) -> Turn {
        let info = &inner.info;
        // Held until the thread is resumed: `thread_destroyed` waits for it.
        let destroyed = lock(&inner.walking);
        let gone = match destroyed.as_ref() {
            Some(destroyed) => destroyed.contains(&thread),
            None => true,
        };
        if gone {
            return Turn::Gone;
        }
        let Ok(os_thread) = info.os_thread_id(thread) else {
            return Turn::Gone;
        };
        frames.clear();
        let (handle, opened) = match info.thread_handle(thread) {
            Ok(handle) if !handle.is_null() => (handle, false),
            _ => {
                // SAFETY: no pointer arguments; closed below.
                let handle = unsafe {
                    OpenThread(
                        THREAD_SUSPEND_RESUME
                            | THREAD_GET_CONTEXT
                            | THREAD_QUERY_LIMITED_INFORMATION,
                        0,
                        os_thread,
                    )
                };
                if handle.is_null() {
                    return Turn::NotSuspended;
                }
                (handle, true)
            }
        };
        let began = Instant::now();
        let mut cut = false;
        // SAFETY: a live handle of a thread of this process (the runtime's,
        // valid while the thread is not destroyed, which `destroyed` held
        // guarantees; or one opened above); never the calling thread (the
        // sampler thread is not a managed thread).
        if unsafe { SuspendThread(handle) } == FAILED_COUNT {
            close(handle, opened);
            return Turn::NotSuspended;
        }
        context.ContextFlags = CONTEXT_CONTROL;
        // SAFETY: the suspended thread's handle and a CONTEXT of the SDK's
        // layout (win32.rs's tests), 16-byte aligned as it requires.
        if unsafe { GetThreadContext(handle, context) } == 0 {
            // SAFETY: suspended above, resumed once.
            unsafe { ResumeThread(handle) };
            close(handle, opened);
            return Turn::NotSuspended;
        }
        // The thread is stopped: from here to `ResumeThread`, no
        // allocation (the buffer has its capacity), no lock but `walking`.
        let result = info
            .stack_snapshot(thread, |frame| {
                let function = match frame {
                    StackFrame::Managed { function, .. } => function,
                    StackFrame::Native { .. } => FunctionID::NULL,
                };
                if function.is_null() && frames.last() == Some(&FunctionID::NULL) {
                    return true;
                }
                if frames.len() == frames.capacity() {
                    cut = true;
                    return false;
                }
                frames.push(function);
                true
            })
            .map_err(|e| e.code().0);
        // SAFETY: suspended above, resumed once.
        unsafe { ResumeThread(handle) };
        let pause = began.elapsed();
        // SAFETY: the handle is live (as above) and has query access (the
        // runtime's has every access; ours was opened with it).
        let cpu_now = unsafe { thread_handle_cpu_nanos(handle) };
        drop(destroyed);
        close(handle, opened);
        Turn::Walked {
            result,
            pause,
            os_thread,
            cpu_now,
            cut,
        }
    }

    /// Closes a handle this module opened (not the runtime's).
    fn close(handle: *mut core::ffi::c_void, opened: bool) {
        if opened {
            // SAFETY: opened by `OpenThread` in `turn`, closed once.
            unsafe { CloseHandle(handle) };
        }
    }

    /// Records one thread's turn, the thread running again: its walk (a
    /// refused one as `[no managed frames]`, as the other modes record a
    /// failed walk) with `wall` and the CPU time since its previous sample
    /// (a thread seen first: none).
    fn record(inner: &Core, thread: ThreadID, turn: Turn, frames: &[FunctionID], wall: Duration) {
        let (result, pause, os_thread, cpu_now, cut) = match turn {
            Turn::Gone => return,
            Turn::NotSuspended => {
                lock(&inner.state).stats.thread_suspend.suspend_failures += 1;
                return;
            }
            Turn::Walked {
                result,
                pause,
                os_thread,
                cpu_now,
                cut,
            } => (result, pause, os_thread, cpu_now, cut),
        };
        let frames = if result.is_ok() { frames } else { &[] };
        let stack = inner.resolve(frames);
        let mut state = lock(&inner.state);
        let state = &mut *state;
        let stats = &mut state.stats;
        stats.thread_suspend.threads_suspended += 1;
        if stats.pauses.len() < MAX_PAUSES {
            stats.pauses.push(Pause::new(pause.as_nanos() as u64, 1));
        }
        // A refused walk is recorded as the other modes record one: its
        // wall and CPU time under `[no managed frames]`, so that no time is
        // lost.
        if let Err(hr) = result {
            stats.thread_suspend.count_error(hr);
        }
        stats.thread_suspend.cut_depth += u64::from(cut);
        stats.thread_suspend.count_sample(os_thread);
        let mut values = [0; SAMPLE_TYPES.len()];
        values[WALL] = wall.as_nanos() as u64;
        let sample = Sample {
            thread,
            stack,
            managed: frames.iter().any(|f| !f.is_null()),
            walked: Some(frames.len()),
            leaf: None,
            os_thread: Some(os_thread),
            cpu_clock: Some(cpu_now),
            values,
            span: SpanIds::NONE,
        };
        state.record(inner.periods, sample);
    }
}
