//! What the macros' expansions refer to (`$crate::__private::...`, the
//! crate root re-exports this module under that name): the `core` they
//! expand against, the exporter's and invokers' entry points, and the
//! compile-time checks. Not public API; it may change at any time.

pub use ::core;

pub use super::export::{guard, null_this, object, At, Slot};
pub use super::interface::invoker::{as_raw, cast, from_raw, into_raw, vtable};

/// The COM pointer inside the root invoker (`IUnknown`), and so inside
/// every invoker: `Send + Sync` by itself, so that the one thing keeping an
/// invoker from other threads is the root's
/// `PhantomData<*const NotAgile_see_agile_attribute>`, which the compiler
/// then names when a non-agile invoker is sent (`ui-tests/not_agile_not_send.rs`).
#[repr(transparent)]
#[derive(Clone, Copy)]
pub struct ComPtr(core::ptr::NonNull<core::ffi::c_void>);

// SAFETY: `ComPtr` is only ever a field of the root invoker, beside the
// `PhantomData` that makes the invoker neither `Send` nor `Sync`; only an
// `unsafe impl` for an interface declared `#[agile]` (whose objects accept
// calls from any thread) makes an invoker `Send`. Its field is private, so
// no other type can hold a COM pointer through it.
unsafe impl Send for ComPtr {}
// SAFETY: as above.
unsafe impl Sync for ComPtr {}

/// What a non-agile invoker holds (as `PhantomData<*const Self>`), so that
/// sending one to another thread names it: the interface was declared
/// without `#[agile]`, so its objects may be apartment-threaded and its
/// invoker is neither `Send` nor `Sync`. If the objects accept calls from
/// any thread, declare the interface `#[agile]` (after
/// `#[implement(...)]`, docs/macro.md); otherwise keep the invoker on its
/// thread.
#[allow(non_camel_case_types)]
pub enum NotAgile_see_agile_attribute {}

/// A word where `interface` belongs in a `com_interface!` invocation
/// (`__com_at_token!`): `Self` is a local type named after the word,
/// `Name` one named after the interface; implemented by nothing, so the
/// bound fails at the word's token.
#[diagnostic::on_unimplemented(
    message = "com_interface!: expected `interface` before `{Name}`, found `{Self}`: write `pub unsafe interface {Name}: Parent {{ ... }}`",
    label = "expected `interface`"
)]
pub trait ExpectedInterface<Name> {}

/// Fails at the word's token (see [`ExpectedInterface`]).
pub const fn expected_interface<Word: ExpectedInterface<Name>, Name>() {}

/// An interface written without `: Parent` in a `com_interface!`
/// invocation (`__com_at_token!`): `Self` is a local type named after the
/// interface; implemented by nothing, so the bound fails at its name.
#[diagnostic::on_unimplemented(
    message = "com_interface!: interface `{Self}` names no parent: write `unsafe interface {Self}: IUnknown {{` (or `: IParent` for the interface it derives from; every COM interface derives from IUnknown)",
    label = "expected `: IUnknown` or `: IParent` after the name"
)]
pub trait NamesNoParent {}

/// Fails at the interface's name (see [`NamesNoParent`]).
pub const fn names_no_parent<Name: NamesNoParent>() {}

/// A method without its `;` in a `com_interface!` invocation
/// (`__com_at_token!`): `Self` is a local type named after its return type
/// (not in the message: a name that is also an item's, `HRESULT`, prints
/// as `_::HRESULT`), `M` after the method, `I` after the interface;
/// implemented by nothing, so the bound fails at the return type's token.
#[diagnostic::on_unimplemented(
    message = "com_interface!: `{I}::{M}`: expected `;` after the return type (or a `{{ default body }}` instead)",
    label = "expected `;` after this"
)]
pub trait ExpectedSemicolon<M, I> {}

/// Fails at the return type's token (see [`ExpectedSemicolon`]).
pub const fn expected_semicolon<Ret: ExpectedSemicolon<M, I>, M, I>() {}

/// Compile-time check that a parameter type may cross the ABI.
pub const fn assert_abi_param<T: crate::AbiParam>() {}
/// Compile-time check that a return type may cross the ABI.
pub const fn assert_abi_return<T: crate::AbiReturn>() {}

/// A thunk's return type `R` (for an object of type `U`): its fallbacks
/// behind one bound of the thunk, `(R, U): Returns<R = R>`. A return type
/// that is not [`AbiReturn`](crate::AbiReturn) is then one error, where the
/// vtable names the thunk, instead of one per fallback.
pub trait Returns {
    /// The return type.
    type R;
    /// [`guard`] for `R`.
    fn guard<F: FnOnce() -> Self::R>(f: F) -> Self::R;
    /// [`null_this`] for `R`.
    fn null_this() -> Self::R;
}

impl<R: crate::AbiReturn, U> Returns for (R, U) {
    type R = R;
    #[inline]
    fn guard<F: FnOnce() -> R>(f: F) -> R {
        guard(f)
    }
    #[inline]
    fn null_this() -> R {
        null_this()
    }
}

/// How often the IID `iid` occurs in `all` (compile-time duplicate
/// check). Strings that do not parse count as nothing: the IID check
/// of their own interface reports them.
pub const fn count_iid(all: &[&str], iid: &str) -> usize {
    let Ok(iid) = crate::GUID::try_parse(iid) else {
        return 1;
    };
    let mut count = 0;
    let mut i = 0;
    while i < all.len() {
        if let Ok(other) = crate::GUID::try_parse(all[i]) {
            if other.to_u128() == iid.to_u128() {
                count += 1;
            }
        }
        i += 1;
    }
    count
}

/// The parent's slot count of `I` (the macro's `SLOTS`: through the
/// `Interface` impl, so that a parent that is not an interface is one
/// error, at `type Parent`, not one per use).
pub const fn parent_slots<I: crate::Interface>() -> usize {
    <I::Parent as crate::Interface>::SLOTS
}

/// Whether an interface `I` inherits from has the IID `iid` (false when
/// `iid` does not parse: its own check reports that).
pub const fn ancestors_have_iid<I: crate::Interface>(iid: &str) -> bool {
    chain_has_iid::<I::Parent>(iid)
}

/// Another reference to the object of invoker `I` (`AddRef`): the
/// generated `Clone`.
#[inline]
pub fn clone<I: crate::Interface>(this: &I) -> I {
    let raw = as_raw(this);
    // SAFETY: `this` owns a live object (invoker invariant), whose vtable
    // starts with IUnknown's; AddRef is always valid on it, and the
    // reference it takes is the one the returned invoker owns.
    unsafe {
        (vtable::<crate::IUnknown>(raw).AddRef)(raw);
        from_raw::<I>(raw).expect("an invoker's pointer is never null")
    }
}

/// Whether `I` or an interface it inherits from has the IID `iid`
/// (false when `iid` does not parse: its own check reports that).
pub const fn chain_has_iid<I: crate::Interface>(iid: &str) -> bool {
    match crate::GUID::try_parse(iid) {
        Ok(iid) => chain_has::<I>(iid.to_u128()),
        Err(_) => false,
    }
}

/// The walk of `chain_has_iid`, one interface at a time.
const fn chain_has<I: crate::Interface>(iid: u128) -> bool {
    if I::IID.to_u128() == iid {
        return true;
    }
    // The root is its own parent.
    if <I::Parent as crate::Interface>::IID.to_u128() == I::IID.to_u128() {
        return false;
    }
    chain_has::<I::Parent>(iid)
}
