//! The COM core, exercised the way native code uses it: through raw vtable
//! slots read from `*this`, and through the generated invokers.
#![allow(missing_docs)]

mod common;

use common::vtable::slot;
use core::ffi::c_void;
use core::mem::{offset_of, size_of};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use corprof::*;

com_interface! {
    /// Every kind of method: HRESULT with out-parameters, scalar returns,
    /// no return, pointer return, a default body, many arguments.
    #[iid("0A1B2C3D-0000-4000-8000-000000000001")]
    #[vtable(ITestBase_Vtbl)]
    #[implement(ITestBase_Impl)]
    #[agile]
    pub unsafe interface ITestBase: IUnknown {
        /// Writes `a + b` to `sum`.
        fn Add(a: i32, b: i32, sum: *mut i32) -> HRESULT;
        fn Twice(x: u64) -> u64;
        fn Half(x: f64) -> f64;
        fn Remember(value: u32);
        fn Recall() -> u32;
        fn Name() -> *const u8;
        fn Defaulted(x: u32) -> HRESULT { if x == 7 { S_FALSE } else { E_NOTIMPL } }
        fn Many(a: u8, b: u16, c: u32, d: u64, e: i8, f: i16, g: i64, h: usize, i: f32, out: *mut f64) -> HRESULT;
        fn Panics(flag: BOOL) -> HRESULT;
    }

    /// A child interface with its own method.
    #[iid("0A1B2C3D-0000-4000-8000-000000000002")]
    #[vtable(ITestChild_Vtbl)]
    #[implement(ITestChild_Impl: ITestBase_Impl)]
    pub unsafe interface ITestChild: ITestBase {
        fn Child(out: *mut u32) -> HRESULT;
    }
}

com_interface! {
    /// An interface the test object does not implement.
    #[iid("0A1B2C3D-0000-4000-8000-0000000000FF")]
    #[vtable(IOther_Vtbl)]
    #[implement(IOther_Impl)]
    pub unsafe interface IOther: IUnknown {
        fn Other() -> HRESULT;
    }
}

struct Object {
    drops: Arc<AtomicUsize>,
    memory: AtomicUsize,
}

impl Object {
    fn new(drops: &Arc<AtomicUsize>) -> Object {
        Object {
            drops: drops.clone(),
            memory: AtomicUsize::new(0),
        }
    }
}

impl Drop for Object {
    fn drop(&mut self) {
        self.drops.fetch_add(1, Ordering::SeqCst);
    }
}

impl ITestBase_Impl for Object {
    unsafe fn Add(&self, a: i32, b: i32, sum: *mut i32) -> HRESULT {
        if sum.is_null() {
            return E_POINTER;
        }
        // SAFETY: checked non-null; the caller passes a writable i32.
        unsafe { *sum = a + b };
        S_OK
    }
    unsafe fn Twice(&self, x: u64) -> u64 {
        x * 2
    }
    unsafe fn Half(&self, x: f64) -> f64 {
        x / 2.0
    }
    unsafe fn Remember(&self, value: u32) {
        self.memory.store(value as usize, Ordering::SeqCst);
    }
    unsafe fn Recall(&self) -> u32 {
        self.memory.load(Ordering::SeqCst) as u32
    }
    unsafe fn Name(&self) -> *const u8 {
        c"object".as_ptr().cast()
    }
    #[allow(clippy::too_many_arguments)]
    unsafe fn Many(
        &self,
        a: u8,
        b: u16,
        c: u32,
        d: u64,
        e: i8,
        f: i16,
        g: i64,
        h: usize,
        i: f32,
        out: *mut f64,
    ) -> HRESULT {
        let total = a as f64
            + b as f64
            + c as f64
            + d as f64
            + e as f64
            + f as f64
            + g as f64
            + h as f64
            + i as f64;
        // SAFETY: the test passes a valid pointer.
        unsafe { *out = total };
        S_OK
    }
    unsafe fn Panics(&self, flag: BOOL) -> HRESULT {
        if flag != FALSE {
            panic!("user code panicked on purpose");
        }
        S_OK
    }
}

impl ITestChild_Impl for Object {
    unsafe fn Child(&self, out: *mut u32) -> HRESULT {
        // SAFETY: the test passes a valid pointer.
        unsafe { *out = 0xC41D };
        S_OK
    }
}

type QueryInterfaceFn =
    unsafe extern "system" fn(*mut c_void, *const GUID, *mut *mut c_void) -> HRESULT;
type RefFn = unsafe extern "system" fn(*mut c_void) -> u32;

unsafe fn raw_query(this: *mut c_void, iid: *const GUID, out: *mut *mut c_void) -> HRESULT {
    // SAFETY: slot 0 of every COM vtable is QueryInterface.
    unsafe {
        core::mem::transmute::<*const c_void, QueryInterfaceFn>(slot(this, 0))(this, iid, out)
    }
}
unsafe fn raw_add_ref(this: *mut c_void) -> u32 {
    // SAFETY: slot 1 of every COM vtable is AddRef.
    unsafe { core::mem::transmute::<*const c_void, RefFn>(slot(this, 1))(this) }
}
unsafe fn raw_release(this: *mut c_void) -> u32 {
    // SAFETY: slot 2 of every COM vtable is Release.
    unsafe { core::mem::transmute::<*const c_void, RefFn>(slot(this, 2))(this) }
}

#[test]
fn every_method_kind_round_trips_through_raw_slots() {
    let drops = Arc::new(AtomicUsize::new(0));
    let child: ITestChild = export(Object::new(&drops));
    let this = child.as_raw();
    // SAFETY: slots 3.. are ITestBase's methods in declaration order, then
    // ITestChild's; each is transmuted to its declared signature.
    unsafe {
        let add: unsafe extern "system" fn(*mut c_void, i32, i32, *mut i32) -> HRESULT =
            core::mem::transmute(slot(this, 3));
        let mut sum = 0;
        assert_eq!(add(this, 40, 2, &mut sum), S_OK);
        assert_eq!(sum, 42);
        assert_eq!(add(this, 1, 1, core::ptr::null_mut()), E_POINTER);

        let twice: unsafe extern "system" fn(*mut c_void, u64) -> u64 =
            core::mem::transmute(slot(this, 4));
        assert_eq!(twice(this, 1 << 40), 1 << 41);
        let half: unsafe extern "system" fn(*mut c_void, f64) -> f64 =
            core::mem::transmute(slot(this, 5));
        assert_eq!(half(this, 5.0), 2.5);
        let remember: unsafe extern "system" fn(*mut c_void, u32) =
            core::mem::transmute(slot(this, 6));
        let recall: unsafe extern "system" fn(*mut c_void) -> u32 =
            core::mem::transmute(slot(this, 7));
        remember(this, 1234);
        assert_eq!(recall(this), 1234);
        let name: unsafe extern "system" fn(*mut c_void) -> *const u8 =
            core::mem::transmute(slot(this, 8));
        assert_eq!(
            std::ffi::CStr::from_ptr(name(this).cast())
                .to_str()
                .unwrap(),
            "object"
        );
        let defaulted: unsafe extern "system" fn(*mut c_void, u32) -> HRESULT =
            core::mem::transmute(slot(this, 9));
        assert_eq!(defaulted(this, 7), S_FALSE, "the default body runs");
        assert_eq!(
            defaulted(this, 8),
            E_NOTIMPL,
            "the default body sees its argument"
        );
        type ManyFn = unsafe extern "system" fn(
            *mut c_void,
            u8,
            u16,
            u32,
            u64,
            i8,
            i16,
            i64,
            usize,
            f32,
            *mut f64,
        ) -> HRESULT;
        let many: ManyFn = core::mem::transmute(slot(this, 10));
        let mut total = 0.0;
        assert_eq!(many(this, 1, 2, 3, 4, -5, -6, 7, 8, 0.5, &mut total), S_OK);
        assert_eq!(total, 14.5);
        let child_fn: unsafe extern "system" fn(*mut c_void, *mut u32) -> HRESULT =
            core::mem::transmute(slot(this, 12));
        let mut out = 0;
        assert_eq!(child_fn(this, &mut out), S_OK);
        assert_eq!(out, 0xC41D);
    }
    drop(child);
    assert_eq!(drops.load(Ordering::SeqCst), 1);
}

#[test]
fn every_method_kind_round_trips_through_invokers() {
    let drops = Arc::new(AtomicUsize::new(0));
    let child: ITestChild = export(Object::new(&drops));
    // SAFETY: valid pointers and plain values, as each method requires.
    unsafe {
        let mut sum = 0;
        assert_eq!(child.Add(-3, 10, &mut sum), S_OK);
        assert_eq!(sum, 7);
        assert_eq!(child.Twice(21), 42);
        assert_eq!(child.Half(1.0), 0.5);
        child.Remember(99);
        assert_eq!(child.Recall(), 99);
        assert_eq!(child.Defaulted(7), S_FALSE);
        let mut total = 0.0;
        assert_eq!(child.Many(1, 1, 1, 1, 1, 1, 1, 1, 1.0, &mut total), S_OK);
        assert_eq!(total, 9.0);
        let mut out = 0;
        assert_eq!(child.Child(&mut out), S_OK);
        assert_eq!(out, 0xC41D);
    }
    // Deref to the parent invoker and an explicit upcast reach the same object.
    let base: &ITestBase = &child;
    assert_eq!(base.as_raw(), child.as_raw());
    let owned_base: ITestBase = child.clone().into();
    // SAFETY: plain values.
    assert_eq!(unsafe { owned_base.Recall() }, 99);
    drop(owned_base);
    drop(child);
    assert_eq!(drops.load(Ordering::SeqCst), 1);
}

#[test]
fn query_interface_answers_the_chain_with_one_identity() {
    let drops = Arc::new(AtomicUsize::new(0));
    let child: ITestChild = export(Object::new(&drops));
    let this = child.as_raw();
    for iid in [IUnknown::IID, ITestBase::IID, ITestChild::IID] {
        let mut out: *mut c_void = core::ptr::null_mut();
        // SAFETY: valid IID and out-pointer.
        unsafe {
            assert_eq!(raw_query(this, &iid, &mut out), S_OK, "QI for {iid}");
            assert_eq!(out, this, "same identity pointer for {iid}");
            // The QI took a reference: count is now 2, AddRef makes it 3.
            assert_eq!(raw_add_ref(this), 3);
            assert_eq!(raw_release(this), 2);
            assert_eq!(raw_release(out), 1);
        }
    }
    // Typed casts work the same way.
    let unknown: IUnknown = child.cast().unwrap();
    assert_eq!(unknown.as_raw(), this);
    let back: ITestChild = unknown.cast().unwrap();
    assert_eq!(back.as_raw(), this);
    assert_eq!(unknown.cast::<IOther>().unwrap_err(), E_NOINTERFACE);
    drop((unknown, back, child));
    assert_eq!(drops.load(Ordering::SeqCst), 1);
}

#[test]
fn query_interface_refuses_unknown_iids_and_null_arguments() {
    let drops = Arc::new(AtomicUsize::new(0));
    let base: ITestBase = export(Object::new(&drops));
    let this = base.as_raw();
    // SAFETY: the object is alive; the arguments are exactly what is tested.
    unsafe {
        let mut out: *mut c_void = core::ptr::NonNull::<c_void>::dangling().as_ptr();
        assert_eq!(raw_query(this, &IOther::IID, &mut out), E_NOINTERFACE);
        assert!(out.is_null(), "a miss writes null");
        // The object was exported as ITestBase: its child's IID is a miss.
        out = core::ptr::NonNull::<c_void>::dangling().as_ptr();
        assert_eq!(raw_query(this, &ITestChild::IID, &mut out), E_NOINTERFACE);
        assert!(out.is_null());
        out = core::ptr::NonNull::<c_void>::dangling().as_ptr();
        assert_eq!(raw_query(this, core::ptr::null(), &mut out), E_POINTER);
        assert!(out.is_null(), "a null riid still clears *ppv");
        assert_eq!(
            raw_query(this, &IUnknown::IID, core::ptr::null_mut()),
            E_POINTER
        );
        // No reference leaked by the failures.
        assert_eq!(raw_add_ref(this), 2);
        assert_eq!(raw_release(this), 1);
    }
    drop(base);
    assert_eq!(drops.load(Ordering::SeqCst), 1);
}

#[test]
fn the_object_is_dropped_exactly_once_and_rust_may_keep_its_arc() {
    let drops = Arc::new(AtomicUsize::new(0));
    let shared = Arc::new(Object::new(&drops));
    let first: ITestBase = export_arc(shared.clone());
    let second: ITestBase = export_arc(shared.clone());
    assert_ne!(
        first.as_raw(),
        second.as_raw(),
        "each export is its own COM identity"
    );
    // SAFETY: plain values.
    unsafe { first.Remember(5) };
    // SAFETY: plain values.
    let recalled = unsafe { second.Recall() };
    assert_eq!(recalled, 5, "both identities reach the same object");
    drop(first);
    drop(second);
    assert_eq!(
        drops.load(Ordering::SeqCst),
        0,
        "the Rust side still holds an Arc"
    );
    assert_eq!(
        Arc::strong_count(&shared),
        1,
        "the COM side gave its references back"
    );
    drop(shared);
    assert_eq!(drops.load(Ordering::SeqCst), 1);
}

#[test]
fn invoker_clone_and_drop_balance_the_count() {
    let drops = Arc::new(AtomicUsize::new(0));
    let base: ITestBase = export(Object::new(&drops));
    let copies: Vec<ITestBase> = (0..10).map(|_| base.clone()).collect();
    // SAFETY: AddRef/Release pair on a live object.
    unsafe {
        assert_eq!(base.AddRef(), 12);
        assert_eq!(base.Release(), 11);
    }
    drop(copies);
    // SAFETY: as above.
    unsafe {
        assert_eq!(base.AddRef(), 2);
        assert_eq!(base.Release(), 1);
    }
    let raw = base.into_raw();
    assert_eq!(
        drops.load(Ordering::SeqCst),
        0,
        "into_raw keeps the reference"
    );
    // SAFETY: `raw` owns the reference `into_raw` gave up.
    let back = unsafe { ITestBase::from_raw(raw) }.unwrap();
    drop(back);
    assert_eq!(drops.load(Ordering::SeqCst), 1);
    // SAFETY: null is allowed and gives None.
    assert!(unsafe { ITestBase::from_raw(core::ptr::null_mut()) }.is_none());
}

#[test]
fn borrowed_views_do_not_touch_the_count() {
    let drops = Arc::new(AtomicUsize::new(0));
    let base: ITestBase = export(Object::new(&drops));
    {
        // SAFETY: `base` keeps the object alive for the view's lifetime.
        let view = unsafe { ComRef::<ITestBase>::from_raw(base.as_raw()) }.unwrap();
        let copy = view;
        // SAFETY: plain values.
        assert_eq!(unsafe { copy.Twice(4) }, 8);
        // SAFETY: AddRef/Release pair.
        unsafe {
            assert_eq!(view.AddRef(), 2, "the view took no reference");
            view.Release();
        }
        let owned = view.to_owned();
        // SAFETY: as above.
        unsafe {
            assert_eq!(owned.AddRef(), 3);
            owned.Release();
        }
    }
    // SAFETY: as above.
    unsafe {
        assert_eq!(
            base.AddRef(),
            2,
            "views dropped without Release, the owned copy released once"
        );
        base.Release();
    }
    // SAFETY: null is allowed.
    assert!(unsafe { ComRef::<ITestBase>::from_raw(core::ptr::null_mut()) }.is_none());
    drop(base);
    assert_eq!(drops.load(Ordering::SeqCst), 1);
}

#[cfg(feature = "std")]
#[test]
fn a_panicking_method_returns_e_fail_and_the_object_lives_on() {
    let drops = Arc::new(AtomicUsize::new(0));
    let base: ITestBase = export(Object::new(&drops));
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    // SAFETY: plain values.
    let hr = unsafe { base.Panics(TRUE) };
    std::panic::set_hook(previous);
    assert_eq!(hr, E_FAIL);
    // SAFETY: plain values.
    let again = unsafe { base.Panics(FALSE) };
    assert_eq!(again, S_OK, "the object still works");
    drop(base);
    assert_eq!(drops.load(Ordering::SeqCst), 1);
}

#[test]
fn a_null_this_gets_e_pointer_from_hresult_methods() {
    let drops = Arc::new(AtomicUsize::new(0));
    let base: ITestBase = export(Object::new(&drops));
    // SAFETY: slot 3 is Add; null `this` is the bad input under test.
    unsafe {
        let add: unsafe extern "system" fn(*mut c_void, i32, i32, *mut i32) -> HRESULT =
            core::mem::transmute(slot(base.as_raw(), 3));
        let mut sum = 0;
        assert_eq!(add(core::ptr::null_mut(), 1, 2, &mut sum), E_POINTER);
        assert_eq!(sum, 0);
        let query: QueryInterfaceFn = core::mem::transmute(slot(base.as_raw(), 0));
        let mut out = core::ptr::null_mut();
        assert_eq!(
            query(core::ptr::null_mut(), &IUnknown::IID, &mut out),
            E_POINTER
        );
        let add_ref: RefFn = core::mem::transmute(slot(base.as_raw(), 1));
        assert_eq!(add_ref(core::ptr::null_mut()), 0);
    }
}

/// A raw COM pointer handed to another thread, provenance intact.
#[derive(Clone, Copy)]
struct SendPtr(*mut c_void);
// SAFETY: the pointee is a free-threaded exported object, kept alive by a
// reference each thread owns for as long as it uses the pointer.
unsafe impl Send for SendPtr {}
impl SendPtr {
    fn get(self) -> *mut c_void {
        self.0
    }
}

#[test]
fn concurrent_add_ref_query_release_frees_exactly_once() {
    const THREADS: usize = 8;
    const ROUNDS: usize = if cfg!(miri) { 50 } else { 100_000 };
    let drops = Arc::new(AtomicUsize::new(0));
    let child: ITestChild = export(Object::new(&drops));
    let raw = SendPtr(child.as_raw());
    let handles: Vec<_> = (0..THREADS)
        .map(|t| {
            // Each thread owns one reference of its own.
            let mine = child.clone();
            std::thread::spawn(move || {
                let this = raw.get();
                for i in 0..ROUNDS {
                    // SAFETY: this thread holds a reference for the whole loop.
                    unsafe {
                        raw_add_ref(this);
                        let iid = if (i + t) % 2 == 0 {
                            ITestBase::IID
                        } else {
                            IUnknown::IID
                        };
                        let mut out = core::ptr::null_mut();
                        assert_eq!(raw_query(this, &iid, &mut out), S_OK);
                        raw_release(out);
                        raw_release(this);
                    }
                }
                drop(mine);
            })
        })
        .collect();
    for handle in handles {
        handle.join().unwrap();
    }
    assert_eq!(drops.load(Ordering::SeqCst), 0);
    // SAFETY: AddRef/Release pair: only `child` is left.
    unsafe {
        assert_eq!(child.AddRef(), 2);
        assert_eq!(child.Release(), 1);
    }
    drop(child);
    assert_eq!(drops.load(Ordering::SeqCst), 1);
}

com_interface! {
    /// An interface nobody implements.
    #[iid("0A1B2C3D-0000-4000-8000-0000000000FE")]
    #[vtable(INone_Vtbl)]
    #[implement(INone_Impl)]
    pub unsafe interface INone: IUnknown {
        fn Never() -> HRESULT;
    }
}

impl IOther_Impl for Object {
    unsafe fn Other(&self) -> HRESULT {
        S_FALSE
    }
}

/// QueryInterface through slot 0 of `this`'s vtable, as native code calls it:
/// the answer's HRESULT and out pointer (null on failure).
fn query(this: *mut c_void, iid: &GUID) -> (HRESULT, *mut c_void) {
    type Query = unsafe extern "system" fn(*mut c_void, *const GUID, *mut *mut c_void) -> HRESULT;
    // A non-null value, to see that a failure clears it.
    let mut out = core::ptr::dangling_mut::<c_void>();
    // SAFETY: `this` is a live exported object; slot 0 is QueryInterface.
    let hr =
        unsafe { core::mem::transmute::<*const c_void, Query>(slot(this, 0))(this, iid, &mut out) };
    (hr, out)
}

/// Release through slot 2, as native code calls it: the new count.
fn release(this: *mut c_void) -> u32 {
    type Release = unsafe extern "system" fn(*mut c_void) -> u32;
    // SAFETY: `this` is a live exported object on which the caller holds a
    // reference; slot 2 is Release.
    unsafe { core::mem::transmute::<*const c_void, Release>(slot(this, 2))(this) }
}

#[test]
fn an_object_with_two_unrelated_interfaces_keeps_com_identity() {
    let drops = Arc::new(AtomicUsize::new(0));
    let child: ITestChild = export_multi::<(ITestChild, IOther), _>(Object::new(&drops));
    let a = child.as_raw();
    // IOther is a second vtable pointer of the same block.
    let (hr, b) = query(a, &IOther::IID);
    assert_eq!(hr, S_OK);
    assert_ne!(b, a, "each chain has its own vtable pointer");
    let ids = [ITestChild::IID, ITestBase::IID, IOther::IID, IUnknown::IID];
    // Identity: one IUnknown pointer, asked from either interface.
    let (hr, unknown_a) = query(a, &IUnknown::IID);
    let (hr2, unknown_b) = query(b, &IUnknown::IID);
    assert_eq!((hr, hr2), (S_OK, S_OK));
    assert_eq!(unknown_a, unknown_b, "one IUnknown");
    assert_eq!(unknown_a, a, "the first chain's pointer is the identity");
    // Reflexive, symmetric and transitive: every IID from every pointer
    // gives the same pointer, whichever pointer is asked.
    let pointers = [a, b, unknown_a];
    for from in pointers {
        for iid in &ids {
            let expected = if *iid == IOther::IID { b } else { a };
            let (hr, got) = query(from, iid);
            assert_eq!((hr, got), (S_OK, expected), "{iid:?} from {from:p}");
            let (hr, back) = query(got, &ITestChild::IID);
            assert_eq!((hr, back), (S_OK, a), "and back from {got:p}");
            // Four references before (`child`, two IUnknowns, `b`), two more now.
            assert_eq!(release(back), 5);
            assert_eq!(release(got), 4);
        }
    }
    // E_NOINTERFACE, with a null out pointer, from either interface.
    assert_eq!(
        query(a, &INone::IID),
        (E_NOINTERFACE, core::ptr::null_mut())
    );
    assert_eq!(
        query(b, &INone::IID),
        (E_NOINTERFACE, core::ptr::null_mut())
    );
    // One count: `child`, plus the three references taken above.
    assert_eq!(release(unknown_b), 3);
    assert_eq!(release(unknown_a), 2);
    assert_eq!(release(b), 1);
    // The methods of each interface reach the same object.
    let other: IOther = child.cast().unwrap();
    // SAFETY: no arguments; the object is free-threaded.
    unsafe {
        child.Remember(41);
        assert_eq!(other.Other(), S_FALSE);
        let base: ITestBase = other.cast().unwrap();
        assert_eq!(base.Recall(), 41);
    }
    drop(child);
    assert_eq!(
        drops.load(Ordering::SeqCst),
        0,
        "`other` still holds the object"
    );
    drop(other);
    assert_eq!(
        drops.load(Ordering::SeqCst),
        1,
        "dropped once, at the last release"
    );
}

#[test]
fn the_object_comes_back_from_any_of_its_interfaces() {
    let drops = Arc::new(AtomicUsize::new(0));
    let child: ITestChild = export_multi::<(ITestChild, IOther), _>(Object::new(&drops));
    let other: IOther = child.cast().unwrap();
    let from_child = object_of::<Object, _>(&child).expect("exported for Object");
    let from_other = object_of::<Object, _>(&other).expect("the same block");
    assert!(core::ptr::eq(from_child, from_other));
    // SAFETY: no pointer arguments.
    unsafe { child.Remember(5) };
    assert_eq!(from_other.memory.load(Ordering::SeqCst), 5);
    assert!(
        object_of::<String, _>(&child).is_none(),
        "not exported for String"
    );
    // An `Arc` of its own outlives the COM object.
    let kept: Arc<Object> = arc_of::<Object, _>(&other).unwrap();
    drop((child, other));
    assert_eq!(drops.load(Ordering::SeqCst), 0);
    assert_eq!(kept.memory.load(Ordering::SeqCst), 5);
    drop(kept);
    assert_eq!(drops.load(Ordering::SeqCst), 1);

    let single: ITestBase = export(Object::new(&drops));
    assert!(object_of::<Object, _>(&single).is_some());
}

/// A COM object the exporter did not make: a hand-written IUnknown, as a
/// native object is (its QueryInterface knows only IUnknown).
#[repr(C)]
struct Foreign {
    vtable: &'static IUnknown_Vtbl,
    refs: AtomicUsize,
}

unsafe extern "system" fn foreign_query(
    this: *mut c_void,
    iid: *const GUID,
    out: *mut *mut c_void,
) -> HRESULT {
    // SAFETY: the caller passes valid pointers (QueryInterface's contract).
    unsafe {
        if *iid == IUnknown::IID {
            foreign_add_ref(this);
            *out = this;
            return S_OK;
        }
        *out = core::ptr::null_mut();
    }
    E_NOINTERFACE
}
unsafe extern "system" fn foreign_add_ref(this: *mut c_void) -> u32 {
    // SAFETY: `this` is a live `Foreign`.
    unsafe {
        (*(this as *const Foreign))
            .refs
            .fetch_add(1, Ordering::SeqCst) as u32
            + 1
    }
}
unsafe extern "system" fn foreign_release(this: *mut c_void) -> u32 {
    // SAFETY: `this` is a live `Foreign`; the test keeps it alive.
    unsafe {
        (*(this as *const Foreign))
            .refs
            .fetch_sub(1, Ordering::SeqCst) as u32
            - 1
    }
}
static FOREIGN_VTABLE: IUnknown_Vtbl = IUnknown_Vtbl {
    QueryInterface: foreign_query,
    AddRef: foreign_add_ref,
    Release: foreign_release,
};

#[test]
fn a_pointer_the_exporter_did_not_make_gives_none() {
    let foreign = Foreign {
        vtable: &FOREIGN_VTABLE,
        refs: AtomicUsize::new(1),
    };
    let raw = &foreign as *const Foreign as *mut c_void;
    // SAFETY: a live COM object implementing IUnknown, alive for the borrow.
    let view = unsafe { ComRef::<IUnknown>::from_raw(raw) }.unwrap();
    assert!(object_of::<Object, _>(&*view).is_none());
    assert!(object_of::<Foreign, _>(&*view).is_none());
    assert_eq!(foreign.refs.load(Ordering::SeqCst), 1, "no reference kept");
}

#[test]
fn vtable_layout_matches_the_abi() {
    let word = size_of::<usize>();
    assert_eq!(IUnknown::SLOTS, 3);
    assert_eq!(size_of::<IUnknown_Vtbl>(), 3 * word);
    assert_eq!(IClassFactory::SLOTS, 5);
    assert_eq!(size_of::<IClassFactory_Vtbl>(), 5 * word);
    assert_eq!(offset_of!(IUnknown_Vtbl, QueryInterface), 0);
    assert_eq!(offset_of!(IUnknown_Vtbl, AddRef), word);
    assert_eq!(offset_of!(IUnknown_Vtbl, Release), 2 * word);
    assert_eq!(offset_of!(IClassFactory_Vtbl, CreateInstance), 3 * word);
    assert_eq!(offset_of!(IClassFactory_Vtbl, LockServer), 4 * word);
    assert_eq!(ITestBase::SLOTS, 3 + 9);
    assert_eq!(offset_of!(ITestBase_Vtbl, Panics), 11 * word);
    assert_eq!(ITestChild::SLOTS, 13);
    assert_eq!(offset_of!(ITestChild_Vtbl, Child), 12 * word);
    assert_eq!(size_of::<ITestChild>(), word, "an invoker is one pointer");
    assert_eq!(
        size_of::<Option<ITestChild>>(),
        word,
        "and null is its niche"
    );
    assert_eq!(
        IUnknown::IID,
        GUID::from_u128(0x00000000_0000_0000_C000_000000000046)
    );
    assert_eq!(
        IClassFactory::IID,
        GUID::from_u128(0x00000001_0000_0000_C000_000000000046)
    );
    assert_eq!(ITestChild::NAME, "ITestChild");
}

#[test]
fn class_factory_default_lock_server_and_typed_create() {
    struct Factory(Arc<AtomicUsize>);
    impl IClassFactory_Impl for Factory {
        unsafe fn CreateInstance(
            &self,
            outer: *mut c_void,
            riid: *const GUID,
            ppv: *mut *mut c_void,
        ) -> HRESULT {
            if !outer.is_null() {
                return CLASS_E_NOAGGREGATION;
            }
            let object: ITestBase = export(Object::new(&self.0));
            // SAFETY: forwarded COM arguments.
            unsafe { object.QueryInterface(riid, ppv) }
        }
    }
    let drops = Arc::new(AtomicUsize::new(0));
    let factory: IClassFactory = export(Factory(drops.clone()));
    let mut out = core::ptr::null_mut();
    // SAFETY: valid IID and out-pointer.
    unsafe {
        assert_eq!(factory.LockServer(TRUE), S_OK);
        assert_eq!(
            factory.CreateInstance(
                core::ptr::NonNull::<c_void>::dangling().as_ptr(),
                &ITestBase::IID,
                &mut out
            ),
            CLASS_E_NOAGGREGATION
        );
        assert_eq!(
            factory.CreateInstance(core::ptr::null_mut(), &IOther::IID, &mut out),
            E_NOINTERFACE
        );
        assert!(out.is_null());
        assert_eq!(
            drops.load(Ordering::SeqCst),
            1,
            "the refused object was freed"
        );
        assert_eq!(
            factory.CreateInstance(core::ptr::null_mut(), &ITestBase::IID, &mut out),
            S_OK
        );
        let created = ITestBase::from_raw(out).unwrap();
        assert_eq!(created.Twice(3), 6);
    }
    assert_eq!(drops.load(Ordering::SeqCst), 2);
}
