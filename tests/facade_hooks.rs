//! The hooks facade and the stack walk against a fake runtime: what
//! `set_function_hooks` hands the runtime, how the mapper answers, what
//! reaches the hooks, refusals returned as is, panics (aborted in hooks,
//! carried across the runtime's frames in stack walks).

// The tests that call the trampolines run on x86-64 Unix only; elsewhere
// their helpers go unused.
#![cfg_attr(
    not(all(target_arch = "x86_64", unix)),
    allow(unused_imports, dead_code)
)]

#[path = "common/ids.rs"]
mod ids;
#[path = "common/self_exec.rs"]
mod self_exec;
use ids::fake_id;

use core::ffi::c_void;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use corprof::facade::{ProfilerInfo, StackFrame};
use corprof::hooks::{FunctionHooks, HookMode, Hooked, ProfilerInfoHooks};
use corprof::profiling::*;
use corprof::*;

/// A runtime with just what hooks and stack walks use.
#[derive(Default)]
struct FakeRuntime {
    mask: Mutex<u32>,
    mapper: Mutex<Option<(FunctionIDMapper2, usize)>>,
    hooks3: Mutex<Option<(FunctionEnter3, FunctionLeave3, FunctionTailcall3)>>,
    /// What `SetEnterLeaveFunctionHooks3` and `DoStackSnapshot` answer
    /// instead of working, when set.
    refuse: Mutex<Option<HRESULT>>,
    /// Frames `DoStackSnapshot` reports: (function, ip).
    frames: Vec<(usize, usize)>,
    /// Frames delivered by the last walk.
    delivered: AtomicUsize,
}

impl ICorProfilerInfo_Impl for FakeRuntime {
    unsafe fn SetEventMask(&self, events: DWORD) -> HRESULT {
        *self.mask.lock().unwrap() = events;
        S_OK
    }
    unsafe fn GetEventMask(&self, events: *mut DWORD) -> HRESULT {
        // SAFETY: the facade passes a valid out-pointer.
        unsafe { *events = *self.mask.lock().unwrap() };
        S_OK
    }
}

impl ICorProfilerInfo2_Impl for FakeRuntime {
    unsafe fn DoStackSnapshot(
        &self,
        _thread: ThreadID,
        callback: Option<StackSnapshotCallback>,
        _flags: ULONG32,
        client_data: *mut c_void,
        _context: *mut BYTE,
        _context_size: ULONG32,
    ) -> HRESULT {
        if let Some(code) = *self.refuse.lock().unwrap() {
            return code;
        }
        let callback = callback.expect("a callback");
        self.delivered.store(0, Ordering::SeqCst);
        for &(function, ip) in &self.frames {
            self.delivered.fetch_add(1, Ordering::SeqCst);
            // SAFETY: the facade's callback with the client data it passed.
            let hr = unsafe {
                callback(
                    FunctionID::from_raw(function),
                    ip,
                    COR_PRF_FRAME_INFO::from_raw(ip),
                    0,
                    core::ptr::null_mut(),
                    client_data,
                )
            };
            if hr.is_err() {
                return CORPROF_E_STACKSNAPSHOT_ABORTED;
            }
        }
        S_OK
    }
    #[allow(clippy::too_many_arguments)]
    unsafe fn GetFunctionInfo2(
        &self,
        _function: FunctionID,
        _frame: COR_PRF_FRAME_INFO,
        _class: *mut ClassID,
        _module: *mut ModuleID,
        _token: *mut corprof::metadata::mdToken,
        _capacity: ULONG32,
        count: *mut ULONG32,
        _args: *mut ClassID,
    ) -> HRESULT {
        // SAFETY: the facade passes a valid count pointer.
        unsafe { *count = FakeRuntime::CLAIMED_TYPE_ARGS };
        S_OK
    }
}

impl FakeRuntime {
    /// `GetFunctionInfo2` claims this many type arguments.
    const CLAIMED_TYPE_ARGS: ULONG32 = 70_000;
}

impl ICorProfilerInfo3_Impl for FakeRuntime {
    unsafe fn SetFunctionIDMapper2(
        &self,
        mapper: Option<FunctionIDMapper2>,
        client_data: *mut c_void,
    ) -> HRESULT {
        *self.mapper.lock().unwrap() = mapper.map(|m| (m, client_data as usize));
        S_OK
    }
    unsafe fn SetEnterLeaveFunctionHooks3(
        &self,
        enter: Option<FunctionEnter3>,
        leave: Option<FunctionLeave3>,
        tailcall: Option<FunctionTailcall3>,
    ) -> HRESULT {
        if let Some(code) = *self.refuse.lock().unwrap() {
            return code;
        }
        *self.hooks3.lock().unwrap() = Some((enter.unwrap(), leave.unwrap(), tailcall.unwrap()));
        S_OK
    }
}

fn facade(runtime: FakeRuntime) -> (ProfilerInfo, Arc<FakeRuntime>) {
    let fake = Arc::new(runtime);
    let exported: ICorProfilerInfo3 = export_arc(fake.clone());
    let unknown: IUnknown = exported.cast().unwrap();
    (ProfilerInfo::from_unknown(&unknown).unwrap(), fake)
}

#[test]
fn stack_snapshot_gives_frames_innermost_first_and_stops_when_asked() {
    let (info, fake) = facade(FakeRuntime {
        frames: vec![(0, 0x10), (0xF1, 0x20), (0xF2, 0x30)],
        ..FakeRuntime::default()
    });
    // (function, ip, frame info) of each frame; a frame cannot leave the
    // walk, its values can.
    let mut seen = Vec::new();
    info.stack_snapshot(ThreadID::NULL, |frame| {
        seen.push(match frame {
            StackFrame::Native { ip } => (0, ip, 0),
            StackFrame::Managed {
                function,
                ip,
                frame,
            } => (function.as_raw(), ip, frame.as_raw().as_raw()),
        });
        true
    })
    .unwrap();
    assert_eq!(
        seen,
        [(0, 0x10, 0), (0xF1, 0x20, 0x20), (0xF2, 0x30, 0x30)],
        "the runtime's frames, native runs without frame info"
    );
    // Stopping is not an error, and the runtime delivers nothing more.
    let mut first_managed = None;
    info.stack_snapshot(ThreadID::NULL, |frame| match frame {
        StackFrame::Managed { function, .. } => {
            first_managed = Some(function);
            false
        }
        StackFrame::Native { .. } => true,
    })
    .unwrap();
    assert_eq!(first_managed.map(FunctionID::as_raw), Some(0xF1));
    assert_eq!(fake.delivered.load(Ordering::SeqCst), 2);
}

#[test]
fn stack_snapshot_returns_the_runtimes_refusal() {
    let (info, fake) = facade(FakeRuntime::default());
    *fake.refuse.lock().unwrap() = Some(CORPROF_E_INCONSISTENT_WITH_FLAGS);
    assert_eq!(
        info.stack_snapshot(ThreadID::NULL, |_| true),
        Err(CORPROF_E_INCONSISTENT_WITH_FLAGS.into())
    );
}

#[test]
fn a_panic_in_the_walk_crosses_the_runtime_as_a_stop_and_resumes_after_it() {
    let (info, fake) = facade(FakeRuntime {
        frames: vec![(0xF1, 1), (0xF2, 2), (0xF3, 3)],
        ..FakeRuntime::default()
    });
    let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let _ = info.stack_snapshot(ThreadID::NULL, |frame| {
            if matches!(
                frame,
                StackFrame::Managed { function, .. } if function.as_raw() == 0xF2
            ) {
                panic!("boom in frame 2");
            }
            true
        });
    }));
    let payload = caught.expect_err("the panic resumes after the walk");
    assert_eq!(payload.downcast_ref::<&str>(), Some(&"boom in frame 2"));
    // The runtime saw a failure at frame 2 and returned normally.
    assert_eq!(fake.delivered.load(Ordering::SeqCst), 2);
}

/// Hooks that record what reaches them.
#[derive(Default)]
struct Recorder {
    entered: Mutex<Vec<(FunctionID, u32)>>,
    left: Mutex<Vec<FunctionID>>,
    asked: AtomicUsize,
}

impl FunctionHooks for Recorder {
    type Client = u32;

    fn map_function(&self, _info: &ProfilerInfo, function: FunctionID) -> Option<u32> {
        self.asked.fetch_add(1, Ordering::SeqCst);
        // Odd functions are hooked, with their number as client data.
        (function.as_raw() % 2 == 1).then_some(function.as_raw() as u32 * 10)
    }
    fn function_enter(&self, function: &Hooked<u32>) {
        self.entered
            .lock()
            .unwrap()
            .push((function.function(), *function.client()));
    }
    fn function_leave(&self, function: &Hooked<u32>) {
        self.left.lock().unwrap().push(function.function());
    }
}

/// The mapper as the runtime calls it: (client ID, hook?).
fn map(fake: &FakeRuntime, function: usize) -> (usize, bool) {
    let (mapper, data) = fake.mapper.lock().unwrap().expect("a mapper was set");
    let mut hook: BOOL = -7;
    // SAFETY: the facade's mapper with the client data it registered.
    let id = unsafe {
        mapper(
            FunctionID::from_raw(function),
            data as *mut c_void,
            &mut hook,
        )
    };
    (id, hook == TRUE)
}

// One test: the installed hooks are process-wide. x86-64 only: there the
// leave and tailcall trampolines take the handle where a plain call puts it.
#[cfg(all(target_arch = "x86_64", unix))]
#[test]
fn set_function_hooks_installs_a_mapper_and_hooks_once_per_process() {
    let (info, fake) = facade(FakeRuntime::default());
    info.set_event_mask(COR_PRF_DISABLE_INLINING).unwrap();
    let recorder = Arc::new(Recorder::default());

    // A refusal (as outside Initialize) is returned as is, and installs nothing.
    *fake.refuse.lock().unwrap() = Some(CORPROF_E_CALL_ONLY_FROM_INIT);
    assert_eq!(
        info.set_function_hooks(recorder.clone(), HookMode::FastPath),
        Err(CORPROF_E_CALL_ONLY_FROM_INIT.into())
    );
    *fake.refuse.lock().unwrap() = None;
    assert_eq!(
        *fake.mask.lock().unwrap(),
        COR_PRF_DISABLE_INLINING.0,
        "mask restored"
    );

    // Accepted: the mask gains ENTERLEAVE and keeps what was there.
    info.set_function_hooks(recorder.clone(), HookMode::FastPath)
        .unwrap();
    let mask = COR_PRF_MONITOR(*fake.mask.lock().unwrap());
    assert!(
        mask.contains(COR_PRF_MONITOR_ENTERLEAVE | COR_PRF_DISABLE_INLINING),
        "{mask:?}"
    );
    assert!(
        !mask.contains(COR_PRF_ENABLE_FUNCTION_ARGS),
        "the fast path takes no arguments"
    );

    // The mapper: odd functions hooked with a record, the same answer each
    // time, and the profiler asked once per function.
    let (id, hooked) = map(&fake, 7);
    assert!(hooked && id != 0 && id != 7);
    assert_eq!(map(&fake, 7), (id, true));
    let (other, hooked_even) = map(&fake, 8);
    assert!(!hooked_even);
    assert_eq!(other, 8);
    assert_eq!(recorder.asked.load(Ordering::SeqCst), 2);

    // The hooks the runtime got reach the recorder with the record.
    let (_enter, leave, tailcall) = fake.hooks3.lock().unwrap().expect("hooks were set");
    assert_eq!(
        Some(leave as usize),
        fast_path_hooks().map(|h| h.leave as usize)
    );
    // SAFETY: leave and tailcall take the handle in the C first-argument
    // register, so a plain call is how the JIT calls them.
    unsafe {
        leave(FunctionIDOrClientID::from_client_id(id));
        tailcall(FunctionIDOrClientID::from_client_id(id));
    }
    let left: Vec<usize> = recorder
        .left
        .lock()
        .unwrap()
        .iter()
        .map(|f| f.as_raw())
        .collect();
    assert_eq!(left, [7]);
    assert!(recorder.entered.lock().unwrap().is_empty());

    // A second installation in the same process is refused by the facade.
    assert_eq!(
        info.set_function_hooks(Arc::new(Recorder::default()), HookMode::WithInfo),
        Err(E_UNEXPECTED.into())
    );
}

/// Hooks that panic: the process must abort, not unwind into the caller.
struct Panics;
impl FunctionHooks for Panics {
    type Client = ();
    fn map_function(&self, _info: &ProfilerInfo, _function: FunctionID) -> Option<()> {
        Some(())
    }
    fn function_leave(&self, _function: &Hooked<()>) {
        panic!("a hook panicked");
    }
}

#[cfg(all(target_arch = "x86_64", unix))]
#[test]
fn a_panic_in_a_hook_aborts_with_a_message() {
    if std::env::var_os("FACADE_HOOKS_CHILD").is_some() {
        let (info, fake) = facade(FakeRuntime::default());
        info.set_function_hooks(Arc::new(Panics), HookMode::FastPath)
            .unwrap();
        let (id, _) = map(&fake, 1);
        let (_, leave, _) = fake.hooks3.lock().unwrap().unwrap();
        // SAFETY: as in the test above.
        unsafe { leave(FunctionIDOrClientID::from_client_id(id)) };
        println!("UNWOUND OR RETURNED");
        return;
    }
    let output = self_exec::this_test_binary()
        .args([
            "a_panic_in_a_hook_aborts_with_a_message",
            "--exact",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("FACADE_HOOKS_CHILD", "1")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    let stdout = String::from_utf8_lossy(&output.stdout);
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(
        output.status.signal(),
        Some(6),
        "SIGABRT: {:?}\n{stderr}",
        output.status
    );
    assert!(stderr.contains("a hook panicked"), "{stderr}");
    assert!(
        stderr.contains("corprof: panic in the function_leave hook; aborting"),
        "{stderr}"
    );
    assert!(!stdout.contains("UNWOUND OR RETURNED"), "{stdout}");
}

/// A runtime claiming more type arguments than metadata can number gets an
/// error, not an allocation for them.
#[test]
fn an_impossible_count_of_method_type_arguments_is_an_error() {
    let (info, _fake) = facade(FakeRuntime::default());
    assert_eq!(
        info.instantiated_function_name(fake_id!(FunctionID, 0xF1)),
        Err(E_UNEXPECTED.into())
    );
}

/// Hooks that want no kind of hook at all.
struct NoKinds;
impl FunctionHooks for NoKinds {
    type Client = ();
    const ENTER: bool = false;
    const LEAVE: bool = false;
    const TAILCALL: bool = false;
    fn map_function(&self, _info: &ProfilerInfo, _function: FunctionID) -> Option<()> {
        Some(())
    }
}

#[test]
fn hooks_that_want_no_kind_are_refused_before_anything_is_installed() {
    let (info, fake) = facade(FakeRuntime::default());
    assert_eq!(
        info.set_function_hooks(Arc::new(NoKinds), HookMode::FastPath),
        Err(E_INVALIDARG.into())
    );
    assert_eq!(
        info.set_function_hooks(Arc::new(NoKinds), HookMode::WithInfo),
        Err(E_INVALIDARG.into())
    );
    assert!(fake.mapper.lock().unwrap().is_none(), "no mapper set");
    assert!(fake.hooks3.lock().unwrap().is_none(), "no hooks set");
    assert_eq!(*fake.mask.lock().unwrap(), 0, "the event mask untouched");
}
