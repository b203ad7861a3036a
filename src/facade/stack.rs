//! Stack walks: [`ProfilerInfo::stack_snapshot`] over `DoStackSnapshot`.

use core::ffi::c_void;
use core::marker::PhantomData;

use super::info::{ProfilerInfo, Result};
use crate::profiling::*;
use crate::{BYTE, E_ABORT, HRESULT, S_OK, UINT_PTR, ULONG32};

/// A frame's `COR_PRF_FRAME_INFO`, borrowed for the stack walk's callback
/// or the enter/leave/tailcall hook that handed it out (`'a`).
///
/// The runtime's frame info points into the walk's or the hook's own
/// state, so it is valid only while that callback runs: the lifetime keeps
/// it from being stored and used later, for example in
/// [`ProfilerInfo::instantiated_function_name_in_frame`], which passes it
/// to `GetFunctionInfo2`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FrameInfo<'a> {
    raw: COR_PRF_FRAME_INFO,
    _callback: PhantomData<&'a ()>,
}

impl FrameInfo<'static> {
    /// No frame (`NULL`), which every method that takes a frame accepts.
    pub const NONE: FrameInfo<'static> = FrameInfo {
        raw: COR_PRF_FRAME_INFO::NULL,
        _callback: PhantomData,
    };
}

impl<'a> FrameInfo<'a> {
    /// A frame info from the runtime, borrowed for `'a`.
    ///
    /// # Safety
    ///
    /// `raw` must be null, or a frame info the runtime handed out (a
    /// `DoStackSnapshot` callback's argument, `GetFunctionEnter3Info` and
    /// its siblings) that stays valid for `'a`: `'a` must not outlive the
    /// callback or hook it came from.
    #[inline]
    pub const unsafe fn from_raw(raw: COR_PRF_FRAME_INFO) -> FrameInfo<'a> {
        FrameInfo {
            raw,
            _callback: PhantomData,
        }
    }

    /// The raw frame info, for the raw API.
    #[inline]
    pub const fn as_raw(self) -> COR_PRF_FRAME_INFO {
        self.raw
    }
}

/// One frame of a stack walk, innermost first, borrowed for the walk's
/// callback (`'a`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StackFrame<'a> {
    /// A managed frame.
    Managed {
        /// The function running in it.
        function: FunctionID,
        /// Its current instruction pointer.
        ip: usize,
        /// Its frame, for `GetFunctionInfo2` (and
        /// [`ProfilerInfo::instantiated_function_name_in_frame`]); valid
        /// only during the callback, which its lifetime enforces.
        frame: FrameInfo<'a>,
    },
    /// A run of native (unmanaged) frames, reported as one.
    Native {
        /// The instruction pointer of its first frame (0 when unknown).
        ip: usize,
    },
}

/// What the walk callback receives: the user's closure and a panic to
/// resume after the walk.
struct Walk<'f, F> {
    visit: &'f mut F,
    stopped: bool,
    panic: Option<std::boxed::Box<dyn core::any::Any + Send>>,
}

unsafe extern "system" fn visit_frame<F: FnMut(StackFrame<'_>) -> bool>(
    function: FunctionID,
    ip: UINT_PTR,
    frame: COR_PRF_FRAME_INFO,
    _context_size: ULONG32,
    _context: *mut BYTE,
    client_data: *mut c_void,
) -> HRESULT {
    if client_data.is_null() {
        return E_ABORT;
    }
    // SAFETY: `client_data` is the `Walk<F>` that `stack_snapshot` passed
    // and keeps alive (and unaliased) for the whole walk.
    let walk = unsafe { &mut *(client_data as *mut Walk<'_, F>) };
    let item = if function.is_null() {
        StackFrame::Native { ip }
    } else {
        StackFrame::Managed {
            function,
            ip,
            // SAFETY: the runtime's frame info for this callback; `visit`
            // receives it for any lifetime (a higher-ranked closure), so it
            // cannot keep it past this call.
            frame: unsafe { FrameInfo::from_raw(frame) },
        }
    };
    let visit = &mut *walk.visit;
    match std::panic::catch_unwind(core::panic::AssertUnwindSafe(|| visit(item))) {
        Ok(true) => S_OK,
        Ok(false) => {
            walk.stopped = true;
            E_ABORT
        }
        Err(payload) => {
            // Carried over the runtime's frames, resumed after the walk.
            walk.panic = Some(payload);
            walk.stopped = true;
            E_ABORT
        }
    }
}

impl ProfilerInfo {
    /// Walks a thread's stack from the innermost frame out
    /// (`DoStackSnapshot`), calling `visit` for each frame until it returns
    /// `false`. `thread` is [`ThreadID::NULL`] for the current thread.
    ///
    /// Needs `COR_PRF_ENABLE_STACK_SNAPSHOT` in the event mask (set in
    /// `initialize`; otherwise the runtime answers
    /// `CORPROF_E_INCONSISTENT_WITH_FLAGS`). Walking the current thread
    /// works from inside callbacks that run on it (for example in
    /// `exception_thrown`, where the thrower is the first managed frame),
    /// and from its ELT hooks on 3.1, 8 and 9 only: CoreCLR 10 and 11 answer
    /// `E_FAIL` there (dotnet/runtime#130220, measured from a WithInfo
    /// enter hook). Walking another thread needs it stopped: only Windows builds
    /// of the runtime can suspend a thread for that; elsewhere walk other
    /// threads while the runtime has them suspended (GC callbacks, or after
    /// `ICorProfilerInfo10::SuspendRuntime`). See docs/hooks.md.
    ///
    /// A panic in `visit` stops the walk, is carried over the runtime's
    /// frames and resumes after it.
    ///
    /// Each [`StackFrame`] is borrowed for its call of `visit`: copy the
    /// function and instruction pointer to keep them; the frame info cannot
    /// leave the walk.
    pub fn stack_snapshot<F: FnMut(StackFrame<'_>) -> bool>(
        &self,
        thread: ThreadID,
        mut visit: F,
    ) -> Result<()> {
        let v2 = self.live_v2()?;
        let mut walk = Walk {
            visit: &mut visit,
            stopped: false,
            panic: None,
        };
        // SAFETY: `visit_frame::<F>` reads `clientData` as the `Walk` passed
        // here, which outlives the synchronous walk; no register context.
        let hr = unsafe {
            v2.DoStackSnapshot(
                thread,
                Some(visit_frame::<F>),
                COR_PRF_SNAPSHOT_DEFAULT.0,
                &mut walk as *mut Walk<'_, F> as *mut c_void,
                core::ptr::null_mut(),
                0,
            )
        };
        if let Some(payload) = walk.panic.take() {
            std::panic::resume_unwind(payload);
        }
        if walk.stopped {
            return Ok(());
        }
        hr.ok_with("DoStackSnapshot")
    }
}
