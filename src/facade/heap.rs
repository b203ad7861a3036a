//! The heap and the process of later runtimes, behind safe methods of
//! [`ProfilerInfo`]: the large-object threshold, frozen objects and an
//! object's references (`ICorProfilerInfo10`), the environment (`ICorProfilerInfo11`, .NET 5),
//! GC handles (`ICorProfilerInfo13`, .NET 7), the non-GC heap
//! (`ICorProfilerInfo14`, .NET 8) and a walk of the GC heap
//! (`ICorProfilerInfo15`, .NET 9).
//!
//! On a runtime without the interface a method needs, it answers
//! `E_NOTIMPL` without calling anything (CoreCLR 3.1 offers
//! `ICorProfilerInfo11` at most: the handles and the non-GC heap answer
//! `E_NOTIMPL` there; 8 offers `ICorProfilerInfo14`, so the heap walk
//! answers `E_NOTIMPL` there).

use alloc::boxed::Box;
use alloc::string::String;
use alloc::vec::Vec;
use core::any::Any;
use core::ffi::c_void;
use core::marker::PhantomData;

use super::enumerators::ObjectIter;
use super::info::{take_interface, ProfilerInfo, Result};
use super::strings::{read_utf16, wide};
use super::suspend::{SuspendedRuntime, WalkInProgress};
use crate::profiling::{
    ClassID, ICorProfilerInfo15, ObjectHandleID, ObjectID, CORPROF_E_UNSUPPORTED_CALL_SEQUENCE,
    COR_PRF_HANDLE_TYPE, COR_PRF_NONGC_HEAP_RANGE,
};
use crate::{BOOL, E_INVALIDARG, E_POINTER, FALSE, TRUE};

/// A GC handle the profiler made with [`ProfilerInfo::create_handle`]: weak
/// (cleared when its object is collected), strong (keeps it alive) or
/// pinned. Give it back with [`ProfilerInfo::destroy_handle`]; a handle
/// that is dropped instead stays in the runtime until it exits.
#[derive(Debug, PartialEq, Eq)]
pub struct ObjectHandle(ObjectHandleID);

// SAFETY: a handle is an opaque token of the runtime's handle table, valid
// on any thread until `DestroyHandle`; this type never dereferences it.
unsafe impl Send for ObjectHandle {}
// SAFETY: as above; `&ObjectHandle` only reads the token.
unsafe impl Sync for ObjectHandle {}

impl ObjectHandle {
    /// The raw `ObjectHandleID`.
    pub fn as_raw(&self) -> ObjectHandleID {
        self.0
    }
}

/// One object of the GC heap, handed to the closure of
/// [`ProfilerInfo::enumerate_gc_heap_objects`] and borrowed for that one
/// call (`'walk`).
///
/// The runtime is suspended while the walk runs, so the object can neither
/// move nor be freed: that is what makes [`class`](Self::class) and
/// [`size`](Self::size) safe here, where the same calls on a bare
/// `ObjectID` are `unsafe` ([`ProfilerInfo::class_of`],
/// [`ProfilerInfo::object_size`]). The closure receives it for any lifetime
/// (it is higher-ranked), so it cannot keep it, nor the `ObjectID` inside,
/// past its call: after the walk the runtime resumes, and the GC may move
/// or free the object at once.
#[derive(Debug)]
pub struct HeapObject<'walk> {
    info: &'walk ProfilerInfo,
    object: ObjectID,
    /// Invariant in `'walk`, so that a longer-lived `HeapObject` cannot be
    /// made from it.
    _walk: PhantomData<fn(&'walk ()) -> &'walk ()>,
}

impl HeapObject<'_> {
    /// The object's class (`GetClassFromObject`); name it with
    /// [`ProfilerInfo::class_name`].
    pub fn class(&self) -> Result<ClassID> {
        // SAFETY: the object is on the GC heap of a runtime suspended for
        // the walk, which this borrow lasts no longer than.
        unsafe { self.info.class_of(self.object) }
    }

    /// The object's size in bytes (`GetObjectSize2`).
    pub fn size(&self) -> Result<usize> {
        // SAFETY: as in `class`.
        unsafe { self.info.object_size(self.object) }
    }

    /// The object's address (its `ObjectID`), to tell objects apart and
    /// match references within this walk: after it, the object may move.
    pub fn address(&self) -> usize {
        self.object.as_raw()
    }

    /// The addresses of the objects it references, in the order of its
    /// fields, nulls left out (`EnumerateObjectReferences`,
    /// `ICorProfilerInfo10`).
    pub fn references(&self) -> Result<Vec<usize>> {
        // SAFETY: as in `class`.
        let references = unsafe { self.info.object_references(self.object) }?;
        Ok(references.into_iter().map(ObjectID::as_raw).collect())
    }
}

/// An object the runtime handed to the running callback (the thrown
/// exception of [`Profiler::exception_thrown`](super::Profiler::exception_thrown)),
/// borrowed for that callback (`'cb`).
///
/// While a callback runs on the thread that received the object, the
/// garbage collector can neither move nor free it (the thread is in
/// cooperative mode and cannot reach a GC safe point until the callback
/// returns), so [`class`](Self::class) and [`size`](Self::size) are safe
/// here, where the same calls on a bare `ObjectID` are `unsafe`
/// ([`ProfilerInfo::class_of`], [`ProfilerInfo::object_size`]). The
/// callback receives it for any lifetime, so it cannot keep it past its
/// return; it is neither `Send` nor `Sync`. Keep [`id`](Self::id) only to
/// tell objects apart within the callback: after it, the object may move.
///
/// ```
/// use corprof::facade::{CallbackObject, Profiler, ProfilerInfo, Result, StackFrame};
/// use corprof::profiling::{FunctionID, ThreadID};
/// struct Exceptions;
/// impl Profiler for Exceptions {
///     fn exception_thrown(&self, info: &ProfilerInfo, thrown: CallbackObject<'_>) -> Result<()> {
///         // "System.InvalidOperationException"
///         let type_name = info.class_name(thrown.class()?)?;
///         // The thrower: the innermost managed frame of this thread.
///         let mut thrower: Option<FunctionID> = None;
///         info.stack_snapshot(ThreadID::NULL, |frame| match frame {
///             StackFrame::Managed { function, .. } => {
///                 thrower = Some(function);
///                 false
///             }
///             StackFrame::Native { .. } => true,
///         })?;
///         let thrower = thrower.map(|f| info.function_name(f)).transpose()?;
///         let _ = (type_name, thrower);
///         Ok(())
///     }
/// }
/// ```
#[derive(Clone, Copy, Debug)]
pub struct CallbackObject<'cb> {
    info: &'cb ProfilerInfo,
    object: ObjectID,
    /// Invariant in `'cb`, and neither `Send` nor `Sync`.
    _cb: PhantomData<CallbackScope<'cb>>,
}

/// The marker of [`CallbackObject`]: invariant in `'cb`, not `Send`, not
/// `Sync`.
type CallbackScope<'cb> = (fn(&'cb ()) -> &'cb (), *const ());

impl<'cb> CallbackObject<'cb> {
    /// The object `object` of the callback running on this thread.
    ///
    /// # Safety
    ///
    /// `object` is the `ObjectID` argument of the runtime's callback that
    /// is running on this thread, and the result does not outlive that
    /// callback (`'cb` ends before it returns).
    pub(crate) unsafe fn new(info: &'cb ProfilerInfo, object: ObjectID) -> Self {
        CallbackObject {
            info,
            object,
            _cb: PhantomData,
        }
    }

    /// The object's class (`GetClassFromObject`); name it with
    /// [`ProfilerInfo::class_name`].
    pub fn class(&self) -> Result<ClassID> {
        // SAFETY: the object of the callback running on this thread, which
        // this borrow lasts no longer than (`new`'s contract): the GC can
        // neither move nor free it meanwhile.
        unsafe { self.info.class_of(self.object) }
    }

    /// The object's size in bytes (`GetObjectSize2`).
    pub fn size(&self) -> Result<usize> {
        // SAFETY: as in `class`.
        unsafe { self.info.object_size(self.object) }
    }

    /// The object's ID, valid only during this callback (for the `unsafe`
    /// calls that take an `ObjectID`, made in this callback).
    pub fn id(&self) -> ObjectID {
        self.object
    }
}

/// What the walk callback receives: the user's closure and a panic to
/// resume after the walk.
struct HeapWalk<'p, 'f, F> {
    info: &'p ProfilerInfo,
    visit: &'f mut F,
    stopped: bool,
    panic: Option<Box<dyn Any + Send>>,
}

unsafe extern "system" fn visit_object<F: FnMut(HeapObject<'_>) -> bool>(
    object: ObjectID,
    state: *mut c_void,
) -> BOOL {
    if state.is_null() {
        return FALSE;
    }
    // SAFETY: `state` is the `HeapWalk<F>` that `enumerate_gc_heap_objects`
    // passed and keeps alive (and unaliased) for the whole walk.
    let walk = unsafe { &mut *(state as *mut HeapWalk<'_, '_, F>) };
    if walk.stopped {
        return FALSE;
    }
    let item = HeapObject {
        info: walk.info,
        object,
        _walk: PhantomData,
    };
    let visit = &mut *walk.visit;
    match std::panic::catch_unwind(core::panic::AssertUnwindSafe(|| visit(item))) {
        Ok(true) => TRUE,
        Ok(false) => {
            walk.stopped = true;
            FALSE
        }
        Err(payload) => {
            // Carried over the runtime's frames, resumed after the walk.
            walk.panic = Some(payload);
            walk.stopped = true;
            FALSE
        }
    }
}

impl SuspendedRuntime<'_> {
    /// Walks every object on the GC heap under this suspension
    /// ([`ProfilerInfo::enumerate_gc_heap_objects`], which refuses while
    /// the profiler holds one): call it on the thread that suspended the
    /// runtime, as `EnumerateGCHeapObjects` requires. The walk borrows this
    /// value, so the runtime cannot be resumed before it ends.
    pub fn enumerate_gc_heap_objects<F: FnMut(HeapObject<'_>) -> bool>(
        &self,
        visit: F,
    ) -> Result<()> {
        let v15 = self.info().live_v15()?;
        let _walk = WalkInProgress::start();
        self.info().walk_gc_heap(&v15, visit)
    }
}

impl ProfilerInfo {
    /// Walks every object on the GC heap (`EnumerateGCHeapObjects`,
    /// `ICorProfilerInfo15`, .NET 9), calling `visit` for each until it
    /// returns `false`.
    ///
    /// The walk needs the runtime suspended. Called while it runs, the
    /// runtime suspends itself for the walk and resumes after it. Under a
    /// suspension of the profiler's own ([`suspend_runtime`]), walk through
    /// [`SuspendedRuntime::enumerate_gc_heap_objects`] on the thread that
    /// suspended it: this method then refuses with
    /// `CORPROF_E_UNSUPPORTED_CALL_SEQUENCE` without asking the runtime, as
    /// the suspension could otherwise be resumed during the walk. Inside a
    /// garbage collection (its callbacks, `garbage_collection_started` and
    /// the others) the runtime refuses with
    /// `CORPROF_E_UNSUPPORTED_CALL_SEQUENCE` (measured on 9, 10 and 11),
    /// and called from another thread meanwhile the call waits for the
    /// collection to end (measured on 10); every refusal (also
    /// `CORPROF_E_SUSPENSION_IN_PROGRESS`, which the runtime may answer
    /// while another suspension is under way) is returned as `Err`. On a
    /// runtime without `ICorProfilerInfo15` (3.1 and 8) the answer is
    /// `E_NOTIMPL`. Tested on 9, 10 and 11 from a JIT callback on the
    /// program's thread, under `suspend_runtime` from a thread of the
    /// profiler's own, and from `garbage_collection_started`
    /// (tests/e2e_heap_walk.rs).
    ///
    /// Each [`HeapObject`] is borrowed for its call of `visit`, which cannot
    /// keep it. A panic in `visit` stops the walk, is carried over the
    /// runtime's frames and resumes after it (the runtime resumed first).
    ///
    /// [`suspend_runtime`]: Self::suspend_runtime
    /// [`SuspendedRuntime::enumerate_gc_heap_objects`]: super::SuspendedRuntime::enumerate_gc_heap_objects
    pub fn enumerate_gc_heap_objects<F: FnMut(HeapObject<'_>) -> bool>(
        &self,
        visit: F,
    ) -> Result<()> {
        let v15 = self.live_v15()?;
        // Not while the profiler holds a suspension it could resume during
        // the walk: that walk goes through `SuspendedRuntime`.
        let Some(_walk) = WalkInProgress::start_unsuspended() else {
            return Err(crate::Error::new(
                CORPROF_E_UNSUPPORTED_CALL_SEQUENCE,
                "EnumerateGCHeapObjects: the profiler suspended the runtime; \
                 walk through SuspendedRuntime::enumerate_gc_heap_objects",
            ));
        };
        self.walk_gc_heap(&v15, visit)
    }

    /// The walk itself, counted in `SUSPENSION` by the caller
    /// (`WalkInProgress`).
    pub(crate) fn walk_gc_heap<F: FnMut(HeapObject<'_>) -> bool>(
        &self,
        v15: &ICorProfilerInfo15,
        mut visit: F,
    ) -> Result<()> {
        let mut walk = HeapWalk {
            info: self,
            visit: &mut visit,
            stopped: false,
            panic: None,
        };
        // SAFETY: `visit_object::<F>` reads `callbackState` as the
        // `HeapWalk` passed here, which outlives the synchronous walk.
        let hr = unsafe {
            v15.EnumerateGCHeapObjects(
                Some(visit_object::<F>),
                &mut walk as *mut HeapWalk<'_, '_, F> as *mut c_void,
            )
        };
        if let Some(payload) = walk.panic.take() {
            std::panic::resume_unwind(payload);
        }
        hr.ok_with("EnumerateGCHeapObjects")
    }

    /// The size from which objects go to the large object heap
    /// (`GetLOHObjectSizeThreshold`, `ICorProfilerInfo10`; 85,000 bytes
    /// unless `GCLOHThreshold` says otherwise).
    pub fn loh_object_size_threshold(&self) -> Result<u32> {
        let v10 = self.live_v10()?;
        let mut threshold = 0;
        // SAFETY: a valid out-pointer.
        unsafe { v10.GetLOHObjectSizeThreshold(&mut threshold) }
            .ok_with("GetLOHObjectSizeThreshold")?;
        Ok(threshold)
    }

    /// Whether `object` lives in a frozen segment, which the GC never
    /// moves or frees (`IsFrozenObject`, `ICorProfilerInfo10`; from .NET 8
    /// string literals and `typeof` objects live there).
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
    pub unsafe fn is_frozen_object(&self, object: ObjectID) -> Result<bool> {
        let v10 = self.live_v10()?;
        let mut frozen = 0;
        // SAFETY: a valid out-pointer; `object` is live and does not move
        // (this function's contract).
        unsafe { v10.IsFrozenObject(object, &mut frozen) }.ok_with("IsFrozenObject")?;
        Ok(frozen != 0)
    }

    /// The objects `object` references, in the order of its fields
    /// (`EnumerateObjectReferences`, `ICorProfilerInfo10`): empty for an
    /// object without references (the runtime answers `S_FALSE`). Null
    /// references are left out.
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
    pub unsafe fn object_references(&self, object: ObjectID) -> Result<Vec<ObjectID>> {
        unsafe extern "system" fn collect(
            _root: ObjectID,
            reference: *mut ObjectID,
            client_data: *mut c_void,
        ) -> crate::BOOL {
            if reference.is_null() || client_data.is_null() {
                return 0;
            }
            // SAFETY: `client_data` is the `Vec` `object_references` passed
            // for this synchronous walk, and `reference` points at one of
            // the object's reference fields, readable during the callback.
            let (out, reference) =
                unsafe { (&mut *(client_data as *mut Vec<ObjectID>), *reference) };
            // Bounded: an object has at most as many fields as fit in it.
            if out.len() >= 1 << 24 {
                return 0;
            }
            if !reference.is_null() {
                out.push(reference);
            }
            1
        }
        let v10 = self.live_v10()?;
        let mut out: Vec<ObjectID> = Vec::new();
        // SAFETY: `collect` reads `clientData` as the `Vec` passed here,
        // which outlives the synchronous walk; `object` is live and does not
        // move (this function's contract).
        unsafe {
            v10.EnumerateObjectReferences(
                object,
                Some(collect),
                &mut out as *mut Vec<ObjectID> as *mut c_void,
            )
        }
        .ok_with("EnumerateObjectReferences")?;
        Ok(out)
    }

    /// The value of an environment variable of the process, `None` when it
    /// is not set (`GetEnvironmentVariable`, `ICorProfilerInfo11`, .NET 5).
    pub fn environment_variable(&self, name: &str) -> Result<Option<String>> {
        let v11 = self.live_v11()?;
        let name = wide(name)?;
        // A missing variable is a failure with a length of 0 (seen on 3.1.23
        // and 8.0.4; tests/e2e_profilers.rs); ask for the length first to
        // tell "missing" apart from other failures.
        let mut length = 0;
        // SAFETY: `name` is NUL-terminated; a null buffer of 0 units asks for
        // the length only.
        let hr = unsafe {
            v11.GetEnvironmentVariable(name.as_ptr(), 0, &mut length, core::ptr::null_mut())
        };
        if hr.is_err() && length == 0 {
            return Ok(None);
        }
        // SAFETY: `name` is NUL-terminated; `read_utf16` passes a buffer of
        // the capacity it states and a valid length out-pointer.
        read_utf16(|capacity, needed, buffer| unsafe {
            v11.GetEnvironmentVariable(name.as_ptr(), capacity, needed, buffer)
        })
        .map(Some)
        .map_err(|hr| crate::Error::new(hr, "GetEnvironmentVariable"))
    }

    /// Sets an environment variable of the process, or removes it with
    /// `None` (`SetEnvironmentVariable`, `ICorProfilerInfo11`, .NET 5), as
    /// the program's own `Environment.SetEnvironmentVariable` would.
    pub fn set_environment_variable(&self, name: &str, value: Option<&str>) -> Result<()> {
        let v11 = self.live_v11()?;
        if name.is_empty() {
            return Err(E_INVALIDARG.into());
        }
        let name = wide(name)?;
        let value = value.map(wide).transpose()?;
        let value_ptr = value.as_ref().map_or(core::ptr::null(), |v| v.as_ptr());
        // SAFETY: NUL-terminated strings (or null for "remove") that live
        // across the call.
        unsafe { v11.SetEnvironmentVariable(name.as_ptr(), value_ptr) }
            .ok_with("SetEnvironmentVariable")
    }

    /// Makes a GC handle to `object` (`CreateHandle`, `ICorProfilerInfo13`,
    /// .NET 7): `COR_PRF_HANDLE_TYPE_WEAK` does not keep it alive and reads
    /// as null once it is collected, `..._STRONG` keeps it alive, `..._PINNED`
    /// also keeps it from moving.
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
    pub unsafe fn create_handle(
        &self,
        object: ObjectID,
        kind: COR_PRF_HANDLE_TYPE,
    ) -> Result<ObjectHandle> {
        let v13 = self.live_v13()?;
        let mut handle: ObjectHandleID = core::ptr::null_mut();
        // SAFETY: a valid out-pointer; `object` is live and does not move
        // (this function's contract); the runtime checks the kind.
        unsafe { v13.CreateHandle(object, kind, &mut handle) }.ok_with("CreateHandle")?;
        if handle.is_null() {
            return Err(E_POINTER.into());
        }
        Ok(ObjectHandle(handle))
    }

    /// The object a handle refers to now (`GetObjectIDFromHandle`,
    /// `ICorProfilerInfo13`): `ObjectID::NULL` for a weak handle whose
    /// object was collected. The ID is valid until the next GC.
    pub fn object_from_handle(&self, handle: &ObjectHandle) -> Result<ObjectID> {
        let v13 = self.live_v13()?;
        let mut object = ObjectID::NULL;
        // SAFETY: a live handle this profiler made (it is destroyed only by
        // `destroy_handle`, which takes it by value) and a valid out-pointer.
        unsafe { v13.GetObjectIDFromHandle(handle.0, &mut object) }
            .ok_with("GetObjectIDFromHandle")?;
        Ok(object)
    }

    /// Gives a handle back (`DestroyHandle`, `ICorProfilerInfo13`).
    pub fn destroy_handle(&self, handle: ObjectHandle) -> Result<()> {
        let v13 = self.live_v13()?;
        // SAFETY: a live handle this profiler made, consumed here.
        unsafe { v13.DestroyHandle(handle.0) }.ok_with("DestroyHandle")
    }

    /// The ranges of the non-GC (frozen) heap (`GetNonGCHeapBounds`,
    /// `ICorProfilerInfo14`, .NET 8).
    pub fn non_gc_heap_ranges(&self) -> Result<Vec<COR_PRF_NONGC_HEAP_RANGE>> {
        let v14 = self.live_v14()?;
        let mut count = 0;
        // SAFETY: asking for the count with an empty buffer.
        unsafe { v14.GetNonGCHeapBounds(0, &mut count, core::ptr::null_mut()) }
            .ok_with("GetNonGCHeapBounds")?;
        // Bounded by what the runtime can have: a segment is at least 4 KiB
        // of the address space.
        if count > 1 << 20 {
            return Err(crate::E_UNEXPECTED.into());
        }
        let mut ranges = alloc::vec![COR_PRF_NONGC_HEAP_RANGE::default(); count as usize];
        let mut filled = 0;
        // SAFETY: `ranges` has room for `count` entries.
        unsafe { v14.GetNonGCHeapBounds(count, &mut filled, ranges.as_mut_ptr()) }
            .ok_with("GetNonGCHeapBounds")?;
        ranges.truncate((filled as usize).min(ranges.len()));
        Ok(ranges)
    }

    /// The objects of the non-GC heap (`EnumerateNonGCObjects`,
    /// `ICorProfilerInfo14`, .NET 8).
    pub fn non_gc_objects(&self) -> Result<ObjectIter> {
        let v14 = self.live_v14()?;
        // SAFETY: the method writes null or one owned ICorProfilerObjectEnum.
        unsafe {
            take_interface("EnumerateNonGCObjects", |out: *mut *mut c_void| {
                v14.EnumerateNonGCObjects(out)
            })
        }
        .map(ObjectIter::new)
    }
}
