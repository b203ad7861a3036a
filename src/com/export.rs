//! The exporter: hands a Rust object to native code as a COM object.
//!
//! Each exported COM identity is one heap block: a header, then one vtable
//! pointer per interface chain the object is exported with (one for
//! [`export`], several for [`export_multi`]):
//!
//! ```text
//!   block ──►  ┌───────────────────────┐
//!              │ handle: *const T      │ ─► ArcInner<T> (shared with Rust)
//!              │ refs:   AtomicU32     │    one count for the identity
//!              │ type_id: fn() -> TypeId│   what `object_of` checks
//!              ├───────────────────────┤      ┌──────────────────────────┐
//!   IA* ────►  │ vtable of chain 0     │ ───► │ QueryInterface (library) │
//!   IB* ────►  │ vtable of chain 1     │ ─┐   │ AddRef, Release (library)│
//!              │ ...                   │  │   │ IA's methods: thunks ─► T│
//!              └───────────────────────┘  │   └──────────────────────────┘
//!                                         └─► IB's vtable (same QI/AddRef/Release)
//! ```
//!
//! A COM pointer is the address of one vtable pointer, as every C++ caller
//! expects; each thunk knows its chain's index, so it finds the header in
//! front of the vtable pointers, and the header's handle, an `Arc<T>` turned
//! into a raw pointer with [`Arc::into_raw`] (the Rust analogue of the
//! `GCHandle` a C# exporter keeps), gives `&T`. QueryInterface answers from
//! the block alone, whichever pointer it is called on: `IUnknown` is always
//! chain 0's pointer, any other IID the first chain implementing it; so the
//! COM identity rules (one IUnknown, reflexive, symmetric, transitive) hold.
//! The block's own count decides when the block is freed; freeing it gives
//! its `Arc` reference back, so the Rust side may keep further `Arc<T>`
//! clones alive and export them again (a fresh identity each time).

use alloc::boxed::Box;
use alloc::sync::Arc;
use core::any::TypeId;
use core::ffi::c_void;
use core::marker::PhantomData;
use core::sync::atomic::{fence, AtomicU32, Ordering};

use crate::com::abi::AbiReturn;
use crate::com::guid::GUID;
use crate::com::hresult::{E_NOINTERFACE, E_POINTER, HRESULT, S_OK};
use crate::com::interface::{Exports, Interface};
use crate::com::unknown::{IUnknown, IUnknown_Vtbl};

/// The IID of the exporter's private question "which Rust object are you?":
/// an object exported by this crate answers it with its block's header (no
/// reference taken), every other object with `E_NOINTERFACE`. Change it
/// whenever [`Header`]'s layout changes, so that two versions of the crate
/// in one process never read each other's blocks.
const OBJECT_IID: GUID = GUID::parse("F46508FB-499C-4713-BB34-784B559AEC5C");

/// The start of every exported block; see the module documentation.
#[repr(C)]
struct Header<T> {
    handle: *const T,
    refs: AtomicU32,
    type_id: fn() -> TypeId,
}

/// One exported COM identity: the header, then the vtable pointers `V`
/// (`[*const c_void; N]`, one per interface chain).
#[repr(C)]
struct Block<T, V> {
    header: Header<T>,
    vtables: V,
}

/// The interface chains of one exported object: one interface (`IFoo`, the
/// chain `IFoo` and its ancestors) or a tuple of 2 to 6 of them
/// (`(IFoo, IBar)`). Implemented by the crate for every interface and those
/// tuples; you never implement it. Not public API beyond naming it.
///
/// # Safety
///
/// `Vtables` is `[*const c_void; COUNT]`, `find` returns an index below
/// `COUNT`, and `First` is the first chain's interface.
#[doc(hidden)]
pub unsafe trait Interfaces: 'static {
    /// `[*const c_void; N]`.
    type Vtables: Copy + 'static;
    /// The first chain's interface: what the exporter returns.
    type First: Interface;
    /// The number of chains.
    const COUNT: usize;
    /// The first chain whose interface is `iid` or inherits from it.
    fn find(iid: &GUID) -> Option<usize>;
}

/// Interface chain `K` of the object whose chains are `L`: the identity a
/// vtable is built for (for [`Exports`]). Not public API.
#[doc(hidden)]
pub struct At<L, const K: usize>(PhantomData<L>);

/// Where a vtable sits in its block: the chains `List` and its index there.
/// Implemented by every interface (alone: index 0) and by [`At`]. Not public
/// API.
///
/// # Safety
///
/// `INDEX < List::COUNT`.
#[doc(hidden)]
pub unsafe trait Slot: 'static {
    /// The chains of the object.
    type List: Interfaces;
    /// This vtable's index among them.
    const INDEX: usize;
}

// SAFETY: one chain: one vtable pointer, found for every IID the chain has.
unsafe impl<I: Interface> Interfaces for I {
    type Vtables = [*const c_void; 1];
    type First = I;
    const COUNT: usize = 1;
    #[inline]
    fn find(iid: &GUID) -> Option<usize> {
        I::implements_iid(iid).then_some(0)
    }
}

// SAFETY: an interface exported alone is chain 0 of 1.
unsafe impl<I: Interface> Slot for I {
    type List = I;
    const INDEX: usize = 0;
}

// SAFETY: `K` is checked against the tuple's length where a vtable for
// `At<L, K>` is built (`ExportsAll`), the only place one is made.
unsafe impl<L: Interfaces, const K: usize> Slot for At<L, K> {
    type List = L;
    const INDEX: usize = K;
}

/// The vtables of every chain of `Self` for the Rust type `T`: what the
/// exporter writes into a block. Implemented for every interface and tuple
/// of interfaces that `T` implements. Not public API.
///
/// # Safety
///
/// Entry `k` of `VTABLES` is a vtable built for `T` at `At<Self, k>` (or, for
/// a lone interface, at itself).
#[doc(hidden)]
#[diagnostic::on_unimplemented(
    message = "`{T}` does not implement every COM interface of `{Self}`",
    label = "cannot be exported as `{Self}`",
    note = "implement each interface's `_Impl` trait (named in its `#[implement(...)]`), and those of its parents, for `{T}`"
)]
pub unsafe trait ExportsAll<T>: Interfaces {
    /// One vtable pointer per chain.
    const VTABLES: Self::Vtables;
}

// SAFETY: the lone interface's vtable, built for `T` at itself.
unsafe impl<T, I: Exports<T, I>> ExportsAll<T> for I {
    const VTABLES: [*const c_void; 1] =
        [<I as Exports<T, I>>::VTABLE_REF as *const I::Vtable as *const c_void];
}

macro_rules! tuple_interfaces {
    ($count:literal; $first:ident $(, $i:ident)*; $($k:literal)*) => {
        // SAFETY: `$count` vtable pointers; `find` returns the index of a
        // tuple element.
        unsafe impl<$first: Interface $(, $i: Interface)*> Interfaces for ($first, $($i,)*) {
            type Vtables = [*const c_void; $count];
            type First = $first;
            const COUNT: usize = $count;
            #[inline]
            fn find(iid: &GUID) -> Option<usize> {
                let found = [$first::implements_iid(iid) $(, $i::implements_iid(iid))*];
                found.iter().position(|&yes| yes)
            }
        }

        // SAFETY: entry k is the vtable of element k built at `At<Self, k>`.
        unsafe impl<__T, $first: Interface $(, $i: Interface)*> ExportsAll<__T> for ($first, $($i,)*)
        where
            $first: Exports<__T, At<Self, 0>>,
            $($i: Exports<__T, At<Self, $k>>,)*
        {
            const VTABLES: [*const c_void; $count] = [
                <$first as Exports<__T, At<Self, 0>>>::VTABLE_REF as *const $first::Vtable as *const c_void,
                $(<$i as Exports<__T, At<Self, $k>>>::VTABLE_REF as *const $i::Vtable as *const c_void,)*
            ];
        }
    };
}

tuple_interfaces!(2; A, B; 1);
tuple_interfaces!(3; A, B, C; 1 2);
tuple_interfaces!(4; A, B, C, D; 1 2 3);
tuple_interfaces!(5; A, B, C, D, E; 1 2 3 4);
tuple_interfaces!(6; A, B, C, D, E, F; 1 2 3 4 5);

/// What [`export`] and [`export_multi`] ask of the exported object: `Send +
/// Sync`, since native code calls and releases it from any thread. Every
/// `Send + Sync` type has it; it exists so that a type that is not (a field
/// holding an `Rc`, a `Cell`, a raw pointer) gets one error at the object
/// saying so, instead of one error per missing auto trait.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be exported as a COM object: it is not `Send + Sync`",
    label = "not `Send + Sync`",
    note = "native code calls and releases an exported object from any thread, so each of its fields must be `Send + Sync`: an `Rc`, a `Cell` or a raw pointer is not (use `Arc`, a `Mutex` or atomics)"
)]
pub trait Exportable: Send + Sync {}

#[diagnostic::do_not_recommend]
impl<T: Send + Sync> Exportable for T {}

/// Exports `value` as a COM object of interface `I` and returns an invoker
/// owning the one reference it starts with.
///
/// The invoker can be called like any native object (the calls go through
/// the vtable into `T`'s methods) or handed to native code with
/// `into_raw()`. `T` must implement `I`'s `_Impl` trait and those of `I`'s
/// parents, and must be `Send + Sync + 'static`, since native code calls it
/// from any thread. For an object with several unrelated interfaces, see
/// [`export_multi`].
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
    T: Exportable + 'static,
{
    export_arc::<I, T>(Arc::new(value))
}

/// Exports an object the Rust side shares: the COM object holds one `Arc`
/// reference, released when the COM count reaches zero. Call it again with
/// another clone to hand out a fresh COM identity for the same object.
pub fn export_arc<I, T>(object: Arc<T>) -> I
where
    I: Exports<T, I>,
    T: Exportable + 'static,
{
    new_block::<I, T>(object)
}

/// Exports `value` as one COM object with several interface chains, `L` a
/// tuple of 2 to 6 interfaces (`(IFoo, IBar)`), as a C++ class deriving
/// from several interfaces or windows-rs's `#[implement(IFoo, IBar)]` does;
/// returns an invoker of the first, owning the one reference the object
/// starts with.
///
/// The object keeps COM's identity rules: QueryInterface for `IUnknown`
/// gives one pointer whichever interface it is asked on; an IID that any
/// chain implements (the interfaces and their ancestors) is found from every
/// interface (symmetric and transitive); an IID that none implements is
/// `E_NOINTERFACE` with a null out pointer. One reference count covers all
/// the interfaces, and `T` is dropped once, when it reaches zero. An IID
/// that two chains share (a common parent) is answered by the first.
///
/// ```
/// use corprof::{com_interface, export_multi, Interface, HRESULT, S_OK};
/// com_interface! {
///     #[iid("0A1B2C3D-0000-4000-8000-0000000000A1")]
///     #[vtable(IReader_Vtbl)]
///     #[implement(IReader_Impl)]
///     pub unsafe interface IReader: IUnknown { fn Read() -> u32; }
///
///     #[iid("0A1B2C3D-0000-4000-8000-0000000000A2")]
///     #[vtable(IWriter_Vtbl)]
///     #[implement(IWriter_Impl)]
///     pub unsafe interface IWriter: IUnknown { fn Write(value: u32) -> HRESULT; }
/// }
/// struct File;
/// impl IReader_Impl for File {
///     unsafe fn Read(&self) -> u32 { 7 }
/// }
/// impl IWriter_Impl for File {
///     unsafe fn Write(&self, _value: u32) -> HRESULT { S_OK }
/// }
/// let reader: IReader = export_multi::<(IReader, IWriter), _>(File);
/// let writer: IWriter = reader.cast().unwrap();
/// let back: IReader = writer.cast().unwrap();
/// assert_eq!(back.as_raw(), reader.as_raw());
/// // SAFETY: no arguments; the object accepts calls from any thread.
/// assert_eq!(unsafe { back.Read() }, 7);
/// ```
pub fn export_multi<L, T>(value: T) -> L::First
where
    L: ExportsAll<T>,
    T: Exportable + 'static,
{
    export_multi_arc::<L, T>(Arc::new(value))
}

/// [`export_multi`] for an object the Rust side shares, as [`export_arc`].
pub fn export_multi_arc<L, T>(object: Arc<T>) -> L::First
where
    L: ExportsAll<T>,
    T: Exportable + 'static,
{
    new_block::<L, T>(object)
}

fn new_block<L, T>(object: Arc<T>) -> L::First
where
    L: ExportsAll<T>,
    T: Send + Sync + 'static,
{
    let block = Box::new(Block::<T, L::Vtables> {
        header: Header {
            handle: Arc::into_raw(object),
            refs: AtomicU32::new(1),
            type_id: TypeId::of::<T>,
        },
        vtables: L::VTABLES,
    });
    let raw = Box::into_raw(block);
    // SAFETY: `raw` is a live block; the field's address keeps the
    // provenance of the whole block, which the thunks step back over.
    let first = unsafe { core::ptr::addr_of_mut!((*raw).vtables) } as *mut c_void;
    // SAFETY: `first` points at chain 0's vtable pointer, a vtable for
    // `L::First` built for `T`, and holds the single reference we transfer.
    unsafe { crate::com::interface::invoker::from_raw::<L::First>(first) }
        .expect("Box::into_raw never returns null")
}

/// The header of the block whose vtable pointer number `Id::INDEX` is at
/// `this`.
///
/// # Safety
///
/// `this` is non-null and is such a vtable pointer of a live block for `T`.
#[inline(always)]
unsafe fn header<'a, T, Id: Slot>(this: *mut c_void) -> &'a Header<T> {
    // SAFETY: the vtable pointers follow the header directly (#[repr(C)],
    // and the header's size is a multiple of a pointer's alignment); the
    // pointer has the whole block's provenance (see `new_block`).
    unsafe {
        let vtables = (this as *mut *const c_void).sub(Id::INDEX);
        &*(vtables as *const u8)
            .sub(core::mem::offset_of!(Block<T, [*const c_void; 1]>, vtables))
            .cast::<Header<T>>()
    }
}

/// The COM pointer of chain `k` of the block `header` starts.
///
/// # Safety
///
/// `header` starts a live block whose vtables are `V`, with `k` in range.
#[inline]
unsafe fn chain<T, V>(header: &Header<T>, k: usize) -> *mut c_void {
    let block = header as *const Header<T> as *mut Block<T, V>;
    // SAFETY: within the block (caller's contract); provenance as above.
    unsafe {
        (core::ptr::addr_of_mut!((*block).vtables) as *mut *const c_void).add(k) as *mut c_void
    }
}

/// Recovers `&T` from the `this` pointer of an exported object.
///
/// # Safety
///
/// A non-null `this` must be vtable pointer `Id::INDEX` of a block created
/// by the exporter for this `T` (guaranteed when called from a thunk of a
/// vtable built for `T` at `Id`), and the caller must hold a COM reference
/// for the returned lifetime (guaranteed for the duration of a COM call).
#[doc(hidden)]
#[inline(always)]
pub unsafe fn object<'a, T, Id: Slot>(this: *mut c_void) -> Option<&'a T> {
    if this.is_null() {
        return None;
    }
    // SAFETY: per the contract, `this` is in a live block for `T`, whose
    // handle is an `Arc<T>` pointer kept alive by the block's own reference.
    unsafe { Some(&*header::<T, Id>(this).handle) }
}

/// The Rust object behind `interface`, if the exporter of this crate made it
/// for a `T`: `None` for a native object, or one exported for another type.
/// Borrowed for as long as the invoker holds its reference.
///
/// ```
/// use corprof::{export, object_of, IUnknown};
/// struct Counter(u32);
/// let unknown: IUnknown = export::<IUnknown, _>(Counter(7));
/// assert_eq!(object_of::<Counter, _>(&unknown).map(|c| c.0), Some(7));
/// assert!(object_of::<String, _>(&unknown).is_none());
/// ```
///
/// It asks the object with a QueryInterface for a private IID, which only
/// this crate's exporter answers; the answer is checked against `T`'s
/// `TypeId`, so a pointer this exporter did not make gives `None`.
pub fn object_of<T: 'static, I: Interface>(interface: &I) -> Option<&T> {
    let this = crate::com::interface::invoker::as_raw(interface);
    let mut out: *mut c_void = core::ptr::null_mut();
    // SAFETY: `this` is a live COM object (the invoker's invariant); slot 0
    // of every COM vtable is QueryInterface; `out` is writable.
    let hr = unsafe {
        let unknown = crate::com::interface::invoker::vtable::<IUnknown>(this);
        (unknown.QueryInterface)(this, &OBJECT_IID, &mut out)
    };
    if hr != S_OK || out.is_null() {
        return None;
    }
    // SAFETY: only the exporter answers OBJECT_IID, with its block's header
    // (whose first fields do not depend on `T`: a pointer, then the count,
    // then `type_id`); the block lives while `interface` holds its reference.
    let header = unsafe { &*(out as *const Header<T>) };
    if (header.type_id)() != TypeId::of::<T>() {
        return None;
    }
    // SAFETY: the header belongs to a block for `T`; its handle is the
    // block's `Arc<T>`, alive while the block is.
    Some(unsafe { &*header.handle })
}

/// [`object_of`], as an `Arc<T>` of its own (the exporter's `Arc`, one more
/// strong reference): for keeping the object beyond the invoker.
pub fn arc_of<T: 'static, I: Interface>(interface: &I) -> Option<Arc<T>> {
    let object: *const T = object_of::<T, I>(interface)?;
    // SAFETY: `object` is the pointer of the block's `Arc<T>` (from
    // `Arc::into_raw`), alive now: one more strong count, then an owner of it.
    unsafe {
        Arc::increment_strong_count(object);
        Some(Arc::from_raw(object))
    }
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

/// `IUnknown::QueryInterface` of an object exported for `T`, called on its
/// chain `Id::INDEX`.
unsafe extern "system" fn query_interface<Id: Slot, T: 'static>(
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
    // SAFETY: `this` is a live block for `T` at `Id` (this thunk is only
    // installed in vtables built for `T` at `Id`); the caller holds a
    // reference.
    let header = unsafe { header::<T, Id>(this) };
    if *iid == OBJECT_IID {
        // The exporter's private question: no reference is taken.
        // SAFETY: `ppv` is non-null and writable (checked above).
        unsafe { *ppv = header as *const Header<T> as *mut c_void };
        return S_OK;
    }
    match <Id::List as Interfaces>::find(iid) {
        Some(k) => {
            let old = header.refs.fetch_add(1, Ordering::Relaxed);
            check_overflow(old);
            // SAFETY: `k` is a chain of this block (`find`'s contract);
            // `ppv` is writable.
            unsafe { *ppv = chain::<T, <Id::List as Interfaces>::Vtables>(header, k) };
            S_OK
        }
        None => E_NOINTERFACE,
    }
}

fn check_overflow(old: u32) {
    if old > i32::MAX as u32 {
        // Billions of leaked references: the count is about to wrap around
        // and free a live object. Same policy as Arc.
        abort_with("corprof: COM reference count overflow");
    }
}

/// `IUnknown::AddRef`: a relaxed increment, as for `Arc::clone`: taking a
/// new reference needs no synchronisation with other threads.
unsafe extern "system" fn add_ref<Id: Slot, T>(this: *mut c_void) -> u32 {
    if this.is_null() {
        return 0;
    }
    // SAFETY: `this` is a live block for `T` at `Id` on which the caller
    // holds a reference.
    let old = unsafe { header::<T, Id>(this) }
        .refs
        .fetch_add(1, Ordering::Relaxed);
    check_overflow(old);
    old + 1
}

/// `IUnknown::Release`: a release-ordered decrement; the thread that drops
/// the count to zero fences (acquire) before freeing, so every other
/// thread's use of the object happens before the free.
unsafe extern "system" fn release<Id: Slot, T>(this: *mut c_void) -> u32 {
    if this.is_null() {
        return 0;
    }
    // SAFETY: `this` is a live block for `T` at `Id` on which the caller
    // holds a reference.
    let header = unsafe { header::<T, Id>(this) };
    let old = header.refs.fetch_sub(1, Ordering::Release);
    if old != 1 {
        return old - 1;
    }
    fence(Ordering::Acquire);
    let block = header as *const Header<T> as *mut Block<T, <Id::List as Interfaces>::Vtables>;
    // SAFETY: the count reached zero, so no other reference exists: we own the
    // block (created by `Box::into_raw` in `new_block`, with these vtables)
    // and its Arc handle (created by `Arc::into_raw`); each is given back
    // exactly once, here.
    unsafe {
        let block = Box::from_raw(block);
        drop(Arc::from_raw(block.header.handle));
    }
    0
}

// SAFETY: every slot is one of the library thunks above, which expect `this`
// to be vtable pointer `Id::INDEX` of a block for `T` made by `new_block`, as
// the trait requires. `T: Send + Sync` (native code calls and releases the
// object from any thread) is required where a block is made: `new_block`
// and every exporter that calls it; not here, so that a type that is not is
// one error per missing trait, at the `export` call.
unsafe impl<T: 'static, Id: Slot> Exports<T, Id> for IUnknown {
    const VTABLE: IUnknown_Vtbl = IUnknown_Vtbl {
        QueryInterface: query_interface::<Id, T>,
        AddRef: add_ref::<Id, T>,
        Release: release::<Id, T>,
    };
    const VTABLE_REF: &'static IUnknown_Vtbl = &<Self as Exports<T, Id>>::VTABLE;
}
