//! `ProfilerInfo::enumerate_gc_heap_objects` against a Rust test double of
//! the runtime: the closure sees every object and stops the walk, a panic
//! in it comes out after the walk, `HeapObject` reads its object, and the
//! walk and the profiler's own suspension keep out of each other's way.
//! One test: the suspension state is process-wide. The real runtime:
//! tests/e2e_heap_walk.rs.
#![cfg(feature = "std")]
#![allow(non_snake_case)]

#[path = "common/ids.rs"]
mod ids;
use ids::fake_id;

use core::ffi::c_void;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

use corprof::facade::ProfilerInfo;
use corprof::profiling::*;
use corprof::*;

const HEAP: [ObjectID; 3] = [
    fake_id!(ObjectID, 0xA0),
    fake_id!(ObjectID, 0xB0),
    fake_id!(ObjectID, 0xC0),
];
const CLASS: ClassID = fake_id!(ClassID, 0xC1A55);

#[derive(Default)]
struct FakeRuntime {
    /// SuspendRuntime calls less ResumeRuntime calls.
    suspended: AtomicU32,
    /// What each walk's callback answered, per object.
    answers: Mutex<Vec<(ObjectID, BOOL)>>,
}

impl ICorProfilerInfo_Impl for FakeRuntime {
    unsafe fn GetClassFromObject(&self, objectId: ObjectID, pClassId: *mut ClassID) -> HRESULT {
        if !HEAP.contains(&objectId) || pClassId.is_null() {
            return E_INVALIDARG;
        }
        // SAFETY: checked non-null; the facade passes a writable ClassID.
        unsafe { *pClassId = CLASS };
        S_OK
    }
}
impl ICorProfilerInfo2_Impl for FakeRuntime {}
impl ICorProfilerInfo3_Impl for FakeRuntime {}
impl ICorProfilerInfo4_Impl for FakeRuntime {
    unsafe fn GetObjectSize2(&self, objectId: ObjectID, pcSize: *mut SIZE_T) -> HRESULT {
        if !HEAP.contains(&objectId) || pcSize.is_null() {
            return E_INVALIDARG;
        }
        // SAFETY: checked non-null; the facade passes a writable size.
        unsafe { *pcSize = 24 };
        S_OK
    }
}
impl ICorProfilerInfo5_Impl for FakeRuntime {}
impl ICorProfilerInfo6_Impl for FakeRuntime {}
impl ICorProfilerInfo7_Impl for FakeRuntime {}
impl ICorProfilerInfo8_Impl for FakeRuntime {}
impl ICorProfilerInfo9_Impl for FakeRuntime {}
impl ICorProfilerInfo10_Impl for FakeRuntime {
    unsafe fn SuspendRuntime(&self) -> HRESULT {
        self.suspended.fetch_add(1, Ordering::SeqCst);
        S_OK
    }
    unsafe fn ResumeRuntime(&self) -> HRESULT {
        self.suspended.fetch_sub(1, Ordering::SeqCst);
        S_OK
    }
}
impl ICorProfilerInfo11_Impl for FakeRuntime {}
impl ICorProfilerInfo12_Impl for FakeRuntime {}
impl ICorProfilerInfo13_Impl for FakeRuntime {}
impl ICorProfilerInfo14_Impl for FakeRuntime {}
impl ICorProfilerInfo15_Impl for FakeRuntime {
    unsafe fn EnumerateGCHeapObjects(
        &self,
        callback: Option<ObjectCallback>,
        callbackState: *mut c_void,
    ) -> HRESULT {
        let Some(callback) = callback else {
            return E_INVALIDARG;
        };
        for object in HEAP {
            // SAFETY: the facade's callback, with its own state.
            let answer = unsafe { callback(object, callbackState) };
            self.answers.lock().unwrap().push((object, answer));
            if answer == FALSE {
                break;
            }
        }
        S_OK
    }
}

fn facade() -> (ProfilerInfo, Arc<FakeRuntime>) {
    let fake = Arc::new(FakeRuntime::default());
    let exported: ICorProfilerInfo15 = export_arc(fake.clone());
    let unknown: IUnknown = exported.cast().unwrap();
    let info = ProfilerInfo::from_unknown(&unknown).expect("the fake answers ICorProfilerInfo15");
    assert_eq!(info.version(), 15);
    (info, fake)
}

#[test]
fn the_heap_walk_visits_stops_carries_panics_and_keeps_the_suspension() {
    let (info, fake) = facade();
    let answers = || std::mem::take(&mut *fake.answers.lock().unwrap());

    // Every object, each readable during its call.
    let mut seen = Vec::new();
    let walked = info.enumerate_gc_heap_objects(|object| {
        seen.push((object.class(), object.size()));
        true
    });
    assert_eq!(walked, Ok(()));
    assert_eq!(seen, vec![(Ok(CLASS), Ok(24)); 3]);
    assert_eq!(
        answers(),
        HEAP.iter().map(|&o| (o, TRUE)).collect::<Vec<_>>()
    );

    // `false` stops the walk at once: the runtime is told so.
    let mut calls = 0;
    let walked = info.enumerate_gc_heap_objects(|_| {
        calls += 1;
        false
    });
    assert_eq!((walked, calls), (Ok(()), 1));
    assert_eq!(answers(), vec![(HEAP[0], FALSE)]);

    // A panic stops the walk and comes out of it, not through the runtime.
    let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let _ = info.enumerate_gc_heap_objects(|_| panic!("in the walk"));
    }));
    let message = caught.expect_err("the panic comes out");
    assert_eq!(message.downcast_ref::<&str>(), Some(&"in the walk"));
    assert_eq!(answers(), vec![(HEAP[0], FALSE)]);

    // While walking, the profiler cannot suspend (and so resume) the runtime.
    let mut inner = None;
    let walked = info.enumerate_gc_heap_objects(|_| {
        inner = Some(info.suspend_runtime().map(drop));
        false
    });
    assert_eq!(walked, Ok(()));
    let refused = inner.unwrap().unwrap_err();
    assert_eq!(refused.code(), CORPROF_E_SUSPENSION_IN_PROGRESS);
    assert_eq!(fake.suspended.load(Ordering::SeqCst), 0, "never suspended");
    answers();

    // Under the profiler's suspension the plain walk is refused without
    // asking the runtime; the suspension's own walk goes ahead.
    let suspended = info.suspend_runtime().expect("suspends");
    assert_eq!(fake.suspended.load(Ordering::SeqCst), 1);
    let refused = info.enumerate_gc_heap_objects(|_| true).unwrap_err();
    assert_eq!(refused.code(), CORPROF_E_UNSUPPORTED_CALL_SEQUENCE);
    assert_eq!(answers(), vec![], "the runtime was not asked");
    let again = info.suspend_runtime().map(drop).unwrap_err();
    assert_eq!(again.code(), CORPROF_E_SUSPENSION_IN_PROGRESS);
    let mut count = 0;
    let walked = suspended.enumerate_gc_heap_objects(|object| {
        count += usize::from(object.class() == Ok(CLASS));
        true
    });
    assert_eq!((walked, count), (Ok(()), 3));
    assert_eq!(suspended.resume(), Ok(()));
    assert_eq!(fake.suspended.load(Ordering::SeqCst), 0);
    answers();

    // Resumed (or dropped), the plain walk is allowed again.
    drop(info.suspend_runtime().expect("suspends"));
    assert_eq!(fake.suspended.load(Ordering::SeqCst), 0, "dropping resumes");
    assert_eq!(info.enumerate_gc_heap_objects(|_| true), Ok(()));
    assert_eq!(answers().len(), 3);
}
