//! The exporter: hands a Rust object to native code as a COM object.
//!
//! Each exported COM identity is one heap block:
//!
//! ```text
//!   COM pointer ──► ┌──────────────────────┐      ┌─────────────────────────┐
//!                   │ vtable: &'static Vtbl│ ───► │ QueryInterface (library)│
//!                   │ handle: *const T     │ ─┐   │ AddRef         (library)│
//!                   │ refs:   AtomicU32    │  │   │ Release        (library)│
//!                   │ hook:   Option<fn>   │  │   │ Method1 thunk ─► T::Method1
//!                   └──────────────────────┘  │   │ ...                     │
//!                                             │   └─────────────────────────┘
//!                                             └─► ArcInner<T> (shared with Rust)
//! ```
//!
//! The first word is the vtable pointer, as every C++ caller expects; the
//! second is the *handle slot*, an `Arc<T>` turned into a raw pointer with
//! [`Arc::into_raw`], the Rust analogue of the `GCHandle` a C# exporter keeps.
//! Thunks read the handle to reach `&T`. The block's own COM count decides
//! when the block is freed; freeing it gives its `Arc` reference back, so the
//! Rust side may keep further `Arc<T>` clones alive and export them again.

use alloc::boxed::Box;
use alloc::sync::Arc;
use core::ffi::c_void;
use core::sync::atomic::{fence, AtomicU32, Ordering};

use crate::com::abi::AbiReturn;
use crate::com::guid::GUID;
use crate::com::hresult::{E_NOINTERFACE, E_POINTER, HRESULT, S_OK};
use crate::com::interface::{Exports, Interface};
use crate::com::unknown::{IUnknown, IUnknown_Vtbl};

/// An extra QueryInterface answer for an exported object, in the spirit of
/// .NET's `ICustomQueryInterface`: called for every IID outside the exported
/// interface's inheritance chain. Return the object that answers for the IID
/// (for example another object exported with [`export`]), or `None` for
/// `E_NOINTERFACE`.
///
/// The hook only names an object: the caller receives what that object's own
/// `QueryInterface` answers for the IID, never the returned pointer as is. An
/// object that does not implement the IID therefore gives the caller
/// `E_NOINTERFACE` (and is released), so a mistaken hook cannot hand out a
/// pointer with the wrong vtable. A hook that answers with an object whose own
/// hook sends the same IID back to it recurses without end: answer with an
/// object that implements the IID in its chain.
pub type QueryHook<T> = fn(object: &T, iid: &GUID) -> Option<IUnknown>;

/// The native object block; see the module documentation for the picture.
#[repr(C)]
struct Block<T> {
    vtable: *const c_void,
    handle: *const T,
    refs: AtomicU32,
    hook: Option<QueryHook<T>>,
}

/// Exports `value` as a COM object of interface `I` and returns an invoker
/// owning the one reference it starts with.
///
/// The invoker can be called like any native object (the calls go through
/// the vtable into `T`'s methods) or handed to native code with
/// `into_raw()`. `T` must implement `I`'s `_Impl` trait and those of `I`'s
/// parents, and must be `Send + Sync + 'static`, since native code calls it
/// from any thread.
///
/// ```
/// use corprof::{export, IUnknown, Interface};
/// struct Nothing;
/// let unknown: IUnknown = export::<IUnknown, _>(Nothing);
/// let again: IUnknown = unknown.cast().unwrap(); // QueryInterface(IID_IUnknown)
/// assert_eq!(unknown.as_raw(), again.as_raw());
/// ```
pub fn export<I, T>(value: T) -> I
where
    I: Exports<T, I>,
    T: Send + Sync + 'static,
{
    export_arc::<I, T>(Arc::new(value))
}

/// Exports an object the Rust side shares: the COM object holds one `Arc`
/// reference, released when the COM count reaches zero. Call it again with
/// another clone to hand out a fresh COM identity for the same object.
pub fn export_arc<I, T>(object: Arc<T>) -> I
where
    I: Exports<T, I>,
    T: Send + Sync + 'static,
{
    new_block::<I, T>(object, None)
}

/// Like [`export_arc`], with a [`QueryHook`] that answers IIDs outside `I`'s
/// inheritance chain.
pub fn export_with_query_hook<I, T>(object: Arc<T>, hook: QueryHook<T>) -> I
where
    I: Exports<T, I>,
    T: Send + Sync + 'static,
{
    new_block::<I, T>(object, Some(hook))
}

fn new_block<I, T>(object: Arc<T>, hook: Option<QueryHook<T>>) -> I
where
    I: Exports<T, I>,
    T: Send + Sync + 'static,
{
    let block = Box::new(Block::<T> {
        vtable: <I as Exports<T, I>>::VTABLE_REF as *const I::Vtable as *const c_void,
        handle: Arc::into_raw(object),
        refs: AtomicU32::new(1),
        hook,
    });
    let raw = Box::into_raw(block) as *mut c_void;
    // SAFETY: `raw` is a fresh block whose first word is a vtable for `I`
    // built for `T`, holding the single reference we transfer to the invoker.
    unsafe { crate::com::interface::invoker::from_raw::<I>(raw) }
        .expect("Box::into_raw never returns null")
}

/// Recovers `&T` from the `this` pointer of an exported object.
///
/// # Safety
///
/// A non-null `this` must be a block created by [`export`] for this `T`
/// (guaranteed when called from a thunk of a vtable built for `T`), and the
/// caller must hold a COM reference for the returned lifetime (guaranteed
/// for the duration of a COM call).
#[doc(hidden)]
#[inline(always)]
pub unsafe fn object<'a, T>(this: *mut c_void) -> Option<&'a T> {
    if this.is_null() {
        return None;
    }
    // SAFETY: per the contract, `this` is a live `Block<T>`, whose handle is
    // an `Arc<T>` pointer kept alive by the block's own reference.
    unsafe { Some(&*(*(this as *const Block<T>)).handle) }
}

/// Runs an exported method's Rust body. With the `std` feature a panic is
/// caught and becomes [`AbiReturn::on_panic`] (`E_FAIL` for HRESULT
/// methods, an abort otherwise); it never unwinds into native code.
#[doc(hidden)]
#[inline(always)]
pub fn guard<R: AbiReturn, F: FnOnce() -> R>(f: F) -> R {
    #[cfg(feature = "std")]
    {
        match std::panic::catch_unwind(core::panic::AssertUnwindSafe(f)) {
            Ok(value) => value,
            Err(_) => R::on_panic(),
        }
    }
    #[cfg(not(feature = "std"))]
    {
        // Without std there is no catch_unwind: a panic reaches the
        // `extern "system"` boundary of the thunk, where Rust aborts.
        f()
    }
}

/// What a thunk returns when called with a null `this`:
/// [`AbiReturn::on_null_this`] (`E_POINTER` for HRESULT methods).
#[doc(hidden)]
#[inline(never)]
#[cold]
pub fn null_this<R: AbiReturn>() -> R {
    R::on_null_this()
}

/// Ends the process when an exported method that returns no HRESULT is
/// called with a null `this`.
pub(crate) fn abort_on_null_this() -> ! {
    abort_with("corprof: an exported COM method was called with a null `this` pointer")
}

/// Ends the process after a panic in an exported method that returns no
/// HRESULT (there is no value to report it with).
pub(crate) fn abort_on_panic() -> ! {
    abort_with("corprof: a method exported to native code panicked and its return type cannot report failure; aborting")
}

#[cold]
fn abort_with(message: &str) -> ! {
    #[cfg(feature = "std")]
    {
        std::eprintln!("{message}");
        std::process::abort()
    }
    #[cfg(not(feature = "std"))]
    {
        // A panic inside an `extern "system"` thunk cannot unwind out of it:
        // the runtime aborts the process at that boundary.
        panic!("{}", message)
    }
}

/// The argument rule every QueryInterface-like call follows: a null `ppv`
/// is `E_POINTER`; otherwise `*ppv` is cleared first, so every failure
/// leaves null there; then a null `riid` is `E_POINTER`. Returns the IID.
///
/// # Safety
///
/// `riid` must be null or point to a GUID, and `ppv` null or point to
/// writable pointer storage, both valid for `'a`.
pub(crate) unsafe fn query_arguments<'a>(
    riid: *const GUID,
    ppv: *mut *mut c_void,
) -> Result<&'a GUID, HRESULT> {
    if ppv.is_null() {
        return Err(E_POINTER);
    }
    // SAFETY: non-null and writable (caller's contract).
    unsafe { *ppv = core::ptr::null_mut() };
    // SAFETY: null or a valid GUID for 'a (caller's contract).
    unsafe { riid.as_ref() }.ok_or(E_POINTER)
}

/// `IUnknown::QueryInterface` of an object exported as `Id` for `T`.
unsafe extern "system" fn query_interface<Id: Interface, T: Send + Sync + 'static>(
    this: *mut c_void,
    riid: *const GUID,
    ppv: *mut *mut c_void,
) -> HRESULT {
    // SAFETY: COM passes `riid` and `ppv` valid or null.
    let iid = match unsafe { query_arguments(riid, ppv) } {
        Ok(iid) => iid,
        Err(hr) => return hr,
    };
    if this.is_null() {
        return E_POINTER;
    }
    if Id::implements_iid(iid) {
        // SAFETY: `this` is a live block for `T` (this thunk is only installed
        // in vtables built for `T`); the caller holds a reference.
        unsafe {
            add_ref::<T>(this);
            *ppv = this;
        }
        return S_OK;
    }
    // SAFETY: as above, `this` is a live `Block<T>`.
    let block = unsafe { &*(this as *const Block<T>) };
    if let Some(hook) = block.hook {
        // SAFETY: the handle is alive while the block is.
        let object = unsafe { &*block.handle };
        let answer = guard(move || match hook(object, iid) {
            // Never hand out the hook's pointer as is: ask it for `iid`, so
            // what the caller gets implements `iid` by that object's own
            // QueryInterface, and a wrong answer is E_NOINTERFACE. `unknown`
            // is released when it goes out of scope; the answer holds its own
            // reference.
            // SAFETY: `unknown` is a live COM object (an invoker owns a
            // reference); `iid` is a valid GUID and `ppv` non-null and
            // writable (checked above); QueryInterface writes an owning
            // pointer or null there.
            Some(unknown) => unsafe { unknown.QueryInterface(iid, ppv) },
            None => E_NOINTERFACE,
        });
        return answer;
    }
    E_NOINTERFACE
}

/// `IUnknown::AddRef`: a relaxed increment, as for `Arc::clone`: taking a
/// new reference needs no synchronisation with other threads.
unsafe extern "system" fn add_ref<T>(this: *mut c_void) -> u32 {
    if this.is_null() {
        return 0;
    }
    // SAFETY: `this` is a live `Block<T>` on which the caller holds a reference.
    let block = unsafe { &*(this as *const Block<T>) };
    let old = block.refs.fetch_add(1, Ordering::Relaxed);
    if old > i32::MAX as u32 {
        // Billions of leaked references: the count is about to wrap around
        // and free a live object. Same policy as Arc.
        abort_with("corprof: COM reference count overflow");
    }
    old + 1
}

/// `IUnknown::Release`: a release-ordered decrement; the thread that drops
/// the count to zero fences (acquire) before freeing, so every other
/// thread's use of the object happens before the free.
unsafe extern "system" fn release<T>(this: *mut c_void) -> u32 {
    if this.is_null() {
        return 0;
    }
    // SAFETY: `this` is a live `Block<T>` on which the caller holds a reference.
    let old = unsafe { &*(this as *const Block<T>) }
        .refs
        .fetch_sub(1, Ordering::Release);
    if old != 1 {
        return old - 1;
    }
    fence(Ordering::Acquire);
    // SAFETY: the count reached zero, so no other reference exists: we own the
    // block (created by `Box::into_raw` in `new_block`) and its Arc handle
    // (created by `Arc::into_raw`); each is given back exactly once, here.
    unsafe {
        let block = Box::from_raw(this as *mut Block<T>);
        drop(Arc::from_raw(block.handle));
    }
    0
}

// SAFETY: every slot is one of the library thunks above, which expect `this`
// to be a `Block<T>` created by `new_block`, as the trait requires.
unsafe impl<T: Send + Sync + 'static, Id: Interface> Exports<T, Id> for IUnknown {
    const VTABLE: IUnknown_Vtbl = IUnknown_Vtbl {
        QueryInterface: query_interface::<Id, T>,
        AddRef: add_ref::<T>,
        Release: release::<T>,
    };
    const VTABLE_REF: &'static IUnknown_Vtbl = &<Self as Exports<T, Id>>::VTABLE;
}
