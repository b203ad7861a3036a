//! Threads and runtime suspension, for samplers: the managed threads
//! (`EnumThreads`), a sampler thread made ready for profiler calls
//! (`InitializeCurrentThread`), object sizes (`GetObjectSize2`) and
//! stopping every managed thread at a safe point (`SuspendRuntime` /
//! `ResumeRuntime`, `ICorProfilerInfo10`, .NET Core 3.0), which is how a
//! profiler walks other threads' stacks where the runtime cannot suspend a
//! single thread for `DoStackSnapshot` (every platform but Windows).

use core::ffi::c_void;
use core::sync::atomic::{AtomicUsize, Ordering};

use super::enumerators::ThreadIter;
use super::info::{take_interface, ProfilerInfo, Result};
use crate::profiling::{ObjectID, ThreadID, CORPROF_E_SUSPENSION_IN_PROGRESS};
use crate::HRESULT;

/// The runtime suspended by [`ProfilerInfo::suspend_runtime`]: every
/// managed thread is stopped at a safe point until [`resume`] or drop.
///
/// [`resume`]: SuspendedRuntime::resume
#[derive(Debug)]
#[must_use = "the runtime stays suspended only while this lives"]
pub struct SuspendedRuntime<'a> {
    info: &'a ProfilerInfo,
    resumed: bool,
}

/// The profiler's own suspensions and heap walks, process-wide: bit 0 is
/// set while a [`SuspendedRuntime`] lives, and each walk of the GC heap in
/// progress adds [`WALK`]. A heap walk relies on the runtime staying
/// suspended until it ends, so a walk started through
/// [`ProfilerInfo::enumerate_gc_heap_objects`] is refused while the
/// profiler holds a suspension it could resume (it walks through
/// [`SuspendedRuntime::enumerate_gc_heap_objects`], which borrows it), and
/// `suspend_runtime` is refused while a walk runs.
pub(crate) static SUSPENSION: AtomicUsize = AtomicUsize::new(0);
/// Bit 0 of [`SUSPENSION`].
pub(crate) const SUSPENDED: usize = 1;
/// One walk in [`SUSPENSION`].
pub(crate) const WALK: usize = 2;

/// A walk counted in [`SUSPENSION`] until dropped, even by a panic of the
/// walk's closure carried out of it.
pub(crate) struct WalkInProgress(());

impl WalkInProgress {
    /// Counts a walk that needs no check (the suspension's own).
    pub(crate) fn start() -> WalkInProgress {
        SUSPENSION.fetch_add(WALK, Ordering::SeqCst);
        WalkInProgress(())
    }

    /// Counts a walk unless the profiler holds a suspension.
    pub(crate) fn start_unsuspended() -> Option<WalkInProgress> {
        SUSPENSION
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |state| {
                (state & SUSPENDED == 0).then_some(state + WALK)
            })
            .ok()
            .map(|_| WalkInProgress(()))
    }
}

impl Drop for WalkInProgress {
    fn drop(&mut self) {
        SUSPENSION.fetch_sub(WALK, Ordering::SeqCst);
    }
}

impl SuspendedRuntime<'_> {
    /// Resumes the runtime (`ResumeRuntime`) and says what it answered.
    pub fn resume(mut self) -> Result<()> {
        self.resumed = true;
        self.resume_now().ok_with("ResumeRuntime")
    }

    /// The profiler info that suspended the runtime.
    pub(crate) fn info(&self) -> &ProfilerInfo {
        self.info
    }

    fn resume_now(&self) -> HRESULT {
        let hr = match self.info.live_v10() {
            // SAFETY: this value exists only after a successful
            // SuspendRuntime on this interface, and resumes once.
            Ok(v10) => unsafe { v10.ResumeRuntime() },
            Err(e) => e.code(),
        };
        SUSPENSION.fetch_and(!SUSPENDED, Ordering::SeqCst);
        hr
    }
}

impl Drop for SuspendedRuntime<'_> {
    fn drop(&mut self) {
        if !self.resumed {
            let _ = self.resume_now();
        }
    }
}

impl ProfilerInfo {
    /// The managed threads alive now (`EnumThreads`, version 4), as an
    /// iterator that releases the runtime's enumerator when dropped.
    pub fn threads(&self) -> Result<ThreadIter> {
        let v4 = self.live_v4()?;
        // SAFETY: EnumThreads writes null or one ICorProfilerThreadEnum reference.
        unsafe { take_interface("EnumThreads", |out: *mut *mut c_void| v4.EnumThreads(out)) }
            .map(ThreadIter::new)
    }

    /// The OS handle of a managed thread (`GetHandleFromThread`), owned by
    /// the runtime: valid while the thread lives, never to be closed by
    /// the caller. A Windows sampler suspends the thread through it
    /// (`SuspendThread`) to walk its stack.
    pub fn thread_handle(&self, thread: ThreadID) -> Result<crate::HANDLE> {
        let raw = self.live()?;
        let mut handle: crate::HANDLE = core::ptr::null_mut();
        // SAFETY: a valid out-pointer (a ThreadID is passed as to
        // `GetThreadInfo` in `os_thread_id`).
        unsafe { raw.GetHandleFromThread(thread, &mut handle) }.ok_with("GetHandleFromThread")?;
        Ok(handle)
    }

    /// Prepares the calling (native) thread for later profiler calls
    /// (`InitializeCurrentThread`, version 4), so that a call made while
    /// the runtime is suspended does not wait on an allocation the
    /// suspended threads hold. A sampler thread calls it once, first.
    pub fn initialize_current_thread(&self) -> Result<()> {
        let v4 = self.live_v4()?;
        // SAFETY: no arguments; valid on any thread.
        unsafe { v4.InitializeCurrentThread() }.ok_with("InitializeCurrentThread")
    }

    /// The size of `object` in bytes (`GetObjectSize2`, version 4).
    ///
    /// # Safety
    ///
    /// `object` must be the ID of a live object that the garbage collector
    /// cannot move or free during the call. An `ObjectID` is the object's
    /// address, valid only until the next garbage collection, and the
    /// runtime reads the object through it without checking it. Call this
    /// in the callback that handed the ID over (`object_allocated`,
    /// `exception_thrown`, ...), on that callback's thread, or while the
    /// runtime is suspended with an ID obtained since it was suspended.
    pub unsafe fn object_size(&self, object: ObjectID) -> Result<usize> {
        let v4 = self.live_v4()?;
        let mut size = 0;
        // SAFETY: a valid out-pointer; `object` is live and does not move
        // (this function's contract).
        unsafe { v4.GetObjectSize2(object, &mut size) }.ok_with("GetObjectSize2")?;
        Ok(size)
    }

    /// Suspends the runtime (`SuspendRuntime`, `ICorProfilerInfo10`):
    /// every managed thread stops at a safe point until the returned value
    /// is resumed or dropped. Meanwhile [`stack_snapshot`] may walk any
    /// managed thread. Call it from a native thread of the profiler's own
    /// (a managed thread would wait for itself), never from a callback.
    ///
    /// [`stack_snapshot`]: ProfilerInfo::stack_snapshot
    ///
    /// Refused with `CORPROF_E_SUSPENSION_IN_PROGRESS` (the runtime's own
    /// answer to a suspension while another is under way), without asking
    /// the runtime, while the profiler already holds a suspension or walks
    /// the GC heap ([`enumerate_gc_heap_objects`]).
    ///
    /// [`enumerate_gc_heap_objects`]: ProfilerInfo::enumerate_gc_heap_objects
    pub fn suspend_runtime(&self) -> Result<SuspendedRuntime<'_>> {
        let v10 = self.live_v10()?;
        if SUSPENSION
            .compare_exchange(0, SUSPENDED, Ordering::SeqCst, Ordering::SeqCst)
            .is_err()
        {
            return Err(crate::Error::new(
                CORPROF_E_SUSPENSION_IN_PROGRESS,
                "SuspendRuntime: the profiler already suspended the runtime, or walks the GC heap",
            ));
        }
        // SAFETY: no arguments; the runtime checks the calling thread.
        if let Err(error) = unsafe { v10.SuspendRuntime() }.ok_with("SuspendRuntime") {
            SUSPENSION.fetch_and(!SUSPENDED, Ordering::SeqCst);
            return Err(error);
        }
        Ok(SuspendedRuntime {
            info: self,
            resumed: false,
        })
    }

    /// The OS thread behind each managed thread alive now, as
    /// `(ThreadID, OS thread ID)` pairs; threads without one yet (or any
    /// more) are left out.
    pub fn threads_with_os_ids(&self) -> Result<alloc::vec::Vec<(ThreadID, u32)>> {
        Ok(self
            .threads()?
            .filter_map(|thread| {
                let os = self.os_thread_id(thread).ok()?;
                (os != 0).then_some((thread, os))
            })
            .collect())
    }
}
