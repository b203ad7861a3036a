//! Profilers made of parts (a tuple of `Profiler`s), driven the way the
//! runtime drives them: a fake runtime whose event mask is state
//! (`GetEventMask2` answers what `SetEventMask`/`SetEventMask2` set), and
//! the callback adapter called through its raw `ICorProfilerCallback*`
//! methods.
#![cfg(feature = "std")]
#![allow(missing_docs, non_snake_case)]

use std::sync::{Arc, Mutex};

use corprof::facade::{EventMask, Profiler, ProfilerCallback, ProfilerInfo, Result};
use corprof::profiling::*;
use corprof::*;

/// The runtime's side: the current mask, and every set call.
#[derive(Default)]
struct FakeRuntime {
    mask: Mutex<(u32, u32)>,
    sets: Mutex<Vec<(u32, Option<u32>)>>,
}

impl ICorProfilerInfo_Impl for FakeRuntime {
    unsafe fn SetEventMask(&self, events: DWORD) -> HRESULT {
        self.sets.lock().unwrap().push((events, None));
        self.mask.lock().unwrap().0 = events;
        S_OK
    }
    unsafe fn GetEventMask(&self, events: *mut DWORD) -> HRESULT {
        // SAFETY: the facade passes a valid out-pointer.
        unsafe { *events = self.mask.lock().unwrap().0 };
        S_OK
    }
}
impl ICorProfilerInfo2_Impl for FakeRuntime {}
impl ICorProfilerInfo3_Impl for FakeRuntime {}
impl ICorProfilerInfo4_Impl for FakeRuntime {}
impl ICorProfilerInfo5_Impl for FakeRuntime {
    unsafe fn GetEventMask2(&self, low: *mut DWORD, high: *mut DWORD) -> HRESULT {
        let (l, h) = *self.mask.lock().unwrap();
        // SAFETY: the facade passes valid out-pointers.
        unsafe {
            *low = l;
            *high = h;
        }
        S_OK
    }
    unsafe fn SetEventMask2(&self, low: DWORD, high: DWORD) -> HRESULT {
        self.sets.lock().unwrap().push((low, Some(high)));
        *self.mask.lock().unwrap() = (low, high);
        S_OK
    }
}

type Log = Arc<Mutex<Vec<String>>>;

/// A part that records its calls, asks for `mask`, and answers as told.
struct Part {
    name: &'static str,
    log: Log,
    mask: EventMask,
    fail_initialize: bool,
    fail_jit: bool,
    inline: bool,
}

impl Part {
    fn new(name: &'static str, log: &Log, mask: impl Into<EventMask>) -> Part {
        Part {
            name,
            log: log.clone(),
            mask: mask.into(),
            fail_initialize: false,
            fail_jit: false,
            inline: true,
        }
    }
    fn note(&self, what: String) {
        self.log
            .lock()
            .unwrap()
            .push(format!("{} {what}", self.name));
    }
}

impl Profiler for Part {
    fn initialize(&self, info: &ProfilerInfo) -> Result<()> {
        self.note("initialize".into());
        if self.fail_initialize {
            return Err(Error::new(E_ACCESSDENIED, "refusing"));
        }
        info.add_event_mask(self.mask)
    }
    fn jit_compilation_started(
        &self,
        _info: &ProfilerInfo,
        function: FunctionID,
        _safe: bool,
    ) -> Result<()> {
        self.note(format!("jit {:#x}", function.as_raw()));
        if self.fail_jit {
            return Err(Error::new(E_INVALIDARG, self.name));
        }
        Ok(())
    }
    fn jit_inlining(
        &self,
        _info: &ProfilerInfo,
        _caller: FunctionID,
        _callee: FunctionID,
    ) -> Result<bool> {
        self.note("inlining".into());
        Ok(self.inline)
    }
    fn thread_name_changed(
        &self,
        _info: &ProfilerInfo,
        _thread: ThreadID,
        name: String,
    ) -> Result<()> {
        self.note(format!("thread {name}"));
        Ok(())
    }
    fn shutdown(&self, _info: &ProfilerInfo) -> Result<()> {
        self.note("shutdown".into());
        Ok(())
    }
}

fn runtime() -> (Arc<FakeRuntime>, ICorProfilerInfo5) {
    let fake = Arc::new(FakeRuntime::default());
    let info: ICorProfilerInfo5 = export_arc(fake.clone());
    (fake, info)
}

fn taken(log: &Log) -> Vec<String> {
    std::mem::take(&mut *log.lock().unwrap())
}

fn function(n: usize) -> FunctionID {
    // SAFETY: the fake runtime and the parts only print the value.
    unsafe { FunctionID::from_raw(n) }
}

#[test]
fn each_part_is_initialized_in_order_and_the_event_masks_merge() {
    let log = Log::default();
    let (fake, info) = runtime();
    let profiler = ProfilerCallback::new((
        Part::new("a", &log, COR_PRF_MONITOR_JIT_COMPILATION),
        Part::new("b", &log, COR_PRF_MONITOR_GC | COR_PRF_HIGH_BASIC_GC),
        // Already asked for: nothing more is set.
        Part::new("c", &log, COR_PRF_MONITOR_GC),
    ));
    // SAFETY: a COM call made as the runtime makes it: the fake runtime's
    // info pointer, live for the test.
    assert_eq!(unsafe { profiler.Initialize(info.as_raw()) }, S_OK);
    assert_eq!(
        taken(&log),
        ["a initialize", "b initialize", "c initialize"]
    );
    let jit = COR_PRF_MONITOR_JIT_COMPILATION.0;
    let gc = COR_PRF_MONITOR_GC.0;
    assert_eq!(
        *fake.sets.lock().unwrap(),
        [(jit, None), (jit | gc, Some(COR_PRF_HIGH_BASIC_GC.0))],
        "a sets its flags alone; b adds its own to a's; c adds nothing"
    );
    let mask = profiler.info().unwrap().event_mask().unwrap();
    assert_eq!(
        mask,
        COR_PRF_MONITOR_JIT_COMPILATION | COR_PRF_MONITOR_GC | COR_PRF_HIGH_BASIC_GC
    );
}

#[test]
fn a_failed_initialize_stops_there_and_reaches_the_runtime_as_its_code() {
    let log = Log::default();
    let (fake, info) = runtime();
    let mut b = Part::new("b", &log, COR_PRF_MONITOR_GC);
    b.fail_initialize = true;
    let profiler = ProfilerCallback::new((
        Part::new("a", &log, COR_PRF_MONITOR_JIT_COMPILATION),
        b,
        Part::new("c", &log, COR_PRF_MONITOR_THREADS),
    ));
    // SAFETY: a COM call made as the runtime makes it: the fake runtime's
    // info pointer, live for the test.
    let answer = unsafe { profiler.Initialize(info.as_raw()) };
    assert_eq!(answer, E_ACCESSDENIED);
    assert_eq!(taken(&log), ["a initialize", "b initialize"]);
    assert_eq!(fake.sets.lock().unwrap().len(), 1, "only a's mask was set");
}

#[test]
fn every_part_hears_every_callback_and_the_first_error_is_returned() {
    let log = Log::default();
    let (_fake, info) = runtime();
    let mut b = Part::new("b", &log, EventMask::EMPTY);
    b.fail_jit = true;
    let mut c = Part::new("c", &log, EventMask::EMPTY);
    c.fail_jit = true;
    let profiler = ProfilerCallback::new((Part::new("a", &log, EventMask::EMPTY), b, c));
    // SAFETY: a COM call made as the runtime makes it: the fake runtime's
    // info pointer, live for the test.
    assert_eq!(unsafe { profiler.Initialize(info.as_raw()) }, S_OK);
    taken(&log);
    assert_eq!(
        // SAFETY: no pointer argument; a function ID the fake runtime knows.
        unsafe { profiler.JITCompilationStarted(function(0x42), TRUE) },
        E_INVALIDARG
    );
    assert_eq!(taken(&log), ["a jit 0x42", "b jit 0x42", "c jit 0x42"]);

    // An owned argument reaches each part whole.
    let mut name: Vec<WCHAR> = "worker".encode_utf16().collect();
    // SAFETY: the fake runtime's thread ID is only passed along.
    let thread = unsafe { ThreadID::from_raw(7) };
    assert_eq!(
        // SAFETY: `name` holds the `count` UTF-16 units passed, for the call.
        unsafe { profiler.ThreadNameChanged(thread, name.len() as ULONG, name.as_mut_ptr()) },
        S_OK
    );
    assert_eq!(
        taken(&log),
        ["a thread worker", "b thread worker", "c thread worker"]
    );
    // SAFETY: no arguments; the profiler was initialized.
    assert_eq!(unsafe { profiler.Shutdown() }, S_OK);
    assert_eq!(taken(&log), ["a shutdown", "b shutdown", "c shutdown"]);
}

#[test]
fn a_method_is_inlined_only_when_every_part_agrees() {
    let log = Log::default();
    let (_fake, info) = runtime();
    let mut b = Part::new("b", &log, EventMask::EMPTY);
    b.inline = false;
    let refusing = ProfilerCallback::new((Part::new("a", &log, EventMask::EMPTY), b));
    let agreeing = ProfilerCallback::new((
        Part::new("a", &log, EventMask::EMPTY),
        Part::new("b", &log, EventMask::EMPTY),
    ));
    for (profiler, expected) in [(&refusing as &dyn Inlining, FALSE), (&agreeing, TRUE)] {
        assert_eq!(profiler.init(info.as_raw()), S_OK);
        let mut answer: BOOL = 2;
        assert_eq!(profiler.inline(&mut answer), S_OK);
        assert_eq!(answer, expected);
    }
    let asked: Vec<String> = taken(&log)
        .into_iter()
        .filter(|l| l.ends_with("inlining"))
        .collect();
    assert_eq!(
        asked,
        ["a inlining", "b inlining", "a inlining", "b inlining"]
    );
}

/// The two adapters of the inlining test behind one type.
trait Inlining {
    fn init(&self, info: *mut core::ffi::c_void) -> HRESULT;
    fn inline(&self, answer: &mut BOOL) -> HRESULT;
}

impl<P: Profiler> Inlining for ProfilerCallback<P> {
    fn init(&self, info: *mut core::ffi::c_void) -> HRESULT {
        // SAFETY: the callers pass the fake runtime's live info pointer.
        unsafe { self.Initialize(info) }
    }
    fn inline(&self, answer: &mut BOOL) -> HRESULT {
        // SAFETY: `answer` is a valid BOOL for the call.
        unsafe { self.JITInlining(function(1), function(2), answer) }
    }
}
