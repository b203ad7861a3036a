//! The [`Interface`] trait that every invoker implements, the [`Exports`]
//! trait that builds exporter vtables, and [`ComRef`], the borrowed view.

use core::ffi::c_void;
use core::fmt;
use core::marker::PhantomData;
use core::ops::Deref;
use core::ptr::NonNull;

use crate::com::guid::GUID;
use crate::com::hresult::HRESULT;

/// A COM interface: implemented by every invoker type that
/// [`com_interface!`](crate::com_interface) declares.
///
/// An invoker is an owning pointer to a native object of that interface; the
/// constants describe the interface for QueryInterface and for layout tests.
///
/// # Safety
///
/// Implementors must be `#[repr(transparent)]` over a non-null COM pointer
/// (ultimately `NonNull<c_void>`) that owns one reference, `Vtable` must be
/// `#[repr(C)]` with `Parent::Vtable` as its first field, and `IID`, `SLOTS`
/// and `Parent` must describe the native interface truthfully. The macro
/// guarantees all of this; implement it by hand only with the same care.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a COM interface",
    label = "not declared with `com_interface!`",
    note = "a parent, a `cast` target or an exported interface must be an interface declared with `corprof::com_interface!` (or `corprof::IUnknown`)"
)]
pub unsafe trait Interface: Sized + 'static {
    /// The interface ID (IID) that QueryInterface answers to.
    const IID: GUID;
    /// The interface's name as declared (`"ICorProfilerCallback"`).
    const NAME: &'static str;
    /// The number of vtable slots, the parent's included (IUnknown has 3).
    const SLOTS: usize;
    /// The `#[repr(C)]` vtable: the parent's vtable, then one function
    /// pointer per own method.
    type Vtable: Copy + 'static;
    /// The parent interface (`IUnknown` is its own parent).
    type Parent: Interface;

    /// `true` if `iid` names this interface or one of its ancestors, that is,
    /// if a QueryInterface for `iid` may return a pointer to this interface's
    /// object unchanged.
    fn implements_iid(iid: &GUID) -> bool {
        *iid == Self::IID || <Self::Parent as Interface>::implements_iid(iid)
    }
}

/// Builds the exporter vtable of interface `Self` for the Rust type `T`, at
/// the place `Id` in its object: `Id` is the interface the object is
/// exported as (alone), or chain `K` of the interfaces `L` of
/// [`export_multi`](crate::export_multi) (`At<L, K>`).
///
/// [`com_interface!`](crate::com_interface) implements it for every
/// `T` that implements the interface's `_Impl` trait (and its parents');
/// [`export`](crate::export) requires it. You never implement it by hand.
///
/// # Safety
///
/// `VTABLE` must be a vtable whose every slot is a thunk that expects `this`
/// to be vtable pointer `Id::INDEX` of a block created by the exporter for
/// `T` ([`export`](crate::export) or [`export_multi`](crate::export_multi)).
#[diagnostic::on_unimplemented(
    message = "`{T}` does not implement the COM interface `{Self}`",
    label = "cannot be exported as `{Self}`",
    note = "implement the interface's `_Impl` trait (named in its `#[implement(...)]`), and those of its parents, for `{T}`"
)]
pub unsafe trait Exports<T, Id: crate::com::export::Slot>: Interface {
    /// The vtable, by value; the parent's part is embedded by the child.
    const VTABLE: Self::Vtable;
    /// The same vtable as a `'static` reference, the one objects point to.
    const VTABLE_REF: &'static Self::Vtable;
}

/// A borrowed, non-owning view of a COM pointer: what a callback receives as
/// an argument. It derefs to the invoker `I`, calls no `AddRef` when created
/// and no `Release` when dropped; [`ComRef::to_owned`] takes a reference of
/// its own when the pointer must outlive the call.
///
/// ```
/// # use corprof::*;
/// # struct Obj;
/// # let owned: IUnknown = corprof::export::<IUnknown, _>(Obj);
/// let raw = owned.as_raw();
/// // What a callback does with an `IUnknown*` argument:
/// let view = unsafe { ComRef::<IUnknown>::from_raw(raw) }.expect("non-null");
/// let kept: IUnknown = view.to_owned(); // AddRef
/// # drop(kept);
/// ```
#[repr(transparent)]
pub struct ComRef<'a, I: Interface> {
    ptr: NonNull<c_void>,
    _borrow: PhantomData<&'a I>,
}

impl<'a, I: Interface> ComRef<'a, I> {
    /// Wraps a COM pointer borrowed for `'a`; `None` when `ptr` is null.
    ///
    /// # Safety
    ///
    /// A non-null `ptr` must point to a live COM object implementing `I`
    /// that stays alive for `'a` (the caller of a callback guarantees that for
    /// the duration of the call).
    #[inline]
    pub unsafe fn from_raw(ptr: *mut c_void) -> Option<ComRef<'a, I>> {
        Some(ComRef {
            ptr: NonNull::new(ptr)?,
            _borrow: PhantomData,
        })
    }

    /// Takes a reference of its own (`AddRef`) and returns an owning invoker.
    #[inline]
    pub fn to_owned(&self) -> I
    where
        I: Clone,
    {
        I::clone(self)
    }
}

impl<I: Interface> Clone for ComRef<'_, I> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<I: Interface> Copy for ComRef<'_, I> {}

impl<I: Interface> Deref for ComRef<'_, I> {
    type Target = I;
    #[inline]
    fn deref(&self) -> &I {
        // SAFETY: `ComRef` and `I` are both #[repr(transparent)] over one
        // non-null COM pointer (Interface's contract), so a reference to the
        // one is a valid reference to the other. Handing out `&I` never drops
        // an `I`, so no Release happens for the reference we do not own.
        unsafe { &*(self as *const ComRef<'_, I> as *const I) }
    }
}

impl<I: Interface + fmt::Debug> fmt::Debug for ComRef<'_, I> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("ComRef").field(&**self).finish()
    }
}

/// Generic implementations behind the inherent invoker methods that
/// [`com_interface!`](crate::com_interface) generates.
pub(crate) mod invoker {
    use super::*;

    /// The COM pointer inside an invoker.
    #[inline]
    pub fn as_raw<I: Interface>(this: &I) -> *mut c_void {
        // SAFETY: `I` is #[repr(transparent)] over one `NonNull<c_void>`
        // (Interface's contract), so its bits are that pointer.
        unsafe { core::mem::transmute_copy::<I, *mut c_void>(this) }
    }

    /// The COM pointer inside an invoker, which gives up its reference.
    #[inline]
    pub fn into_raw<I: Interface>(this: I) -> *mut c_void {
        let raw = as_raw(&this);
        core::mem::forget(this);
        raw
    }

    /// An invoker taking ownership of one reference.
    ///
    /// # Safety
    /// As `from_raw` on the generated invoker.
    #[inline]
    pub unsafe fn from_raw<I: Interface>(ptr: *mut c_void) -> Option<I> {
        let ptr = NonNull::new(ptr)?;
        // SAFETY: non-null and, by the caller's contract, an owned reference to
        // an object of interface `I`; `I` is transparent over that pointer.
        Some(unsafe { core::mem::transmute_copy::<NonNull<c_void>, I>(&ptr) })
    }

    /// The vtable of a COM object, read from its first word.
    ///
    /// # Safety
    /// `this` must be a live object of interface `I`.
    #[inline]
    pub unsafe fn vtable<'a, I: Interface>(this: *mut c_void) -> &'a I::Vtable {
        // SAFETY: the first word of every COM object is a pointer to its
        // vtable, which starts with `I::Vtable`'s layout (caller's contract).
        unsafe { &**(this as *const *const I::Vtable) }
    }

    /// QueryInterface from `I` to `J`.
    pub fn cast<I: Interface, J: Interface>(this: &I) -> Result<J, HRESULT> {
        let this = as_raw(this);
        let mut out: *mut c_void = core::ptr::null_mut();
        // SAFETY: `this` is a live COM object (invoker invariant); every COM
        // vtable starts with IUnknown's, so slot 0 is QueryInterface.
        let hr = unsafe {
            let unknown = vtable::<crate::com::unknown::IUnknown>(this);
            (unknown.QueryInterface)(this, &J::IID, &mut out)
        };
        hr.ok()?;
        // SAFETY: QueryInterface succeeded, so `out` holds one reference to
        // the object's `J` interface, which we now own.
        unsafe { from_raw::<J>(out) }.ok_or(crate::com::hresult::E_POINTER)
    }
}
