//! `com_interface!` and the small helper macros it expands to.
//!
//! The entry macro matches the interfaces of an invocation in one step,
//! taking each interface's methods as raw tokens. `__com_split!` normalises
//! the methods in chunks of 16, 4 and 1 (never one recursion per method; see
//! `scripts/gen/gen-split-macro.py` for why chunks keep matching linear), and
//! `__com_interface!` expands the normalised interface once.
//!
//! Helper macros, each with one job:
//! - `__com_split!`: normalises the method list (generated, `split.rs`).
//! - `__com_interface!`: one interface: invoker, vtable, trait, `Interface`
//!   and `Exports` impls, compile-time checks.
//! - `__com_root_interface!`: the root (`IUnknown`), whose exporter is
//!   written by the library rather than generated.
//! - `__com_trait_method!`: one method of the `_Impl` trait, required or with
//!   a default body.
//! - `__com_invoker_methods!`: the invoker's `unsafe fn` per vtable slot.
//! - `__com_invoker_common!`: the raw-pointer methods every invoker has.
//! - `__com_checks!`: the compile-time assertions of one interface.
//!
//! The error path's macros (`__com_interface_diagnose!` and its helpers)
//! are in `diagnose.rs`.

/// Declares COM interfaces: for each, a `#[repr(C)]` vtable, an `_Impl`
/// trait to export Rust objects through it, and an owning invoker to call
/// native objects through it.
///
/// # Syntax
///
/// ```
/// use corprof::{com_interface, GUID, HRESULT, S_OK, BOOL};
/// use core::ffi::c_void;
///
/// com_interface! {
///     /// A calculator (doc comments go on the invoker type).
///     #[iid("6B29FC40-CA47-1067-B31D-00DD010662DA")]
///     #[vtable(ICalculator_Vtbl)]
///     #[implement(ICalculator_Impl)]
///     pub unsafe interface ICalculator: IUnknown {
///         /// Adds two numbers (doc comments go on every generated method).
///         fn Add(a: i32, b: i32, out: *mut i32) -> HRESULT;
///         /// A method with a default body: implementers may leave it out.
///         fn Reset() -> HRESULT { S_OK }
///         /// Methods may return any scalar, or nothing.
///         fn Count() -> u32;
///     }
///
///     /// A derived interface names its parent and the parent's trait.
///     #[iid("6B29FC41-CA47-1067-B31D-00DD010662DA")]
///     #[vtable(IScientific_Vtbl)]
///     #[implement(IScientific_Impl: ICalculator_Impl)]
///     pub unsafe interface IScientific: ICalculator {
///         fn Sqrt(x: f64) -> f64;
///     }
/// }
/// ```
///
/// Each interface is: doc comments; then, in this order, `#[iid("...")]`
/// (the IID in registry form, checked at compile time), `#[vtable(Name)]`
/// (the vtable struct's name) and `#[implement(Name)]` or
/// `#[implement(Name: ParentTrait)]` (the implementation trait's name, and
/// the parent interface's trait, its supertrait; without it `export` still
/// requires the parent's trait); then, optionally, `#[agile]` (the interface's objects are
/// free-threaded: its invoker is `Send + Sync`; without it the invoker is
/// neither, unless its parent is agile); then
/// `pub unsafe interface Name: Parent { methods }`. Methods are
/// listed in vtable order, named exactly as in the IDL, with an implicit
/// `this`; each ends with `;` or carries a default body in braces. `IUnknown`
/// as a parent needs no import.
///
/// # What it generates
///
/// For `unsafe interface IFoo: IParent` with `#[vtable(IFoo_Vtbl)]` and
/// `#[implement(IFoo_Impl: IParent_Impl)]`:
///
/// - `struct IFoo`, the **invoker**: `#[repr(transparent)]` over `IParent`
///   (ultimately over a non-null COM pointer), owning one reference.
///   `Clone` calls `AddRef`, `Drop` calls `Release`, `Deref` gives the
///   parent's invoker, and every method is an `unsafe fn` that calls through
///   its vtable slot. Plus `from_raw`, `into_raw`, `as_raw`, `cast::<J>()`
///   (QueryInterface) and `From<IFoo> for IParent`. `Send + Sync` with
///   `#[agile]` (or an agile parent) only.
/// - `struct IFoo_Vtbl`: `#[repr(C)]`, the parent's vtable as field
///   `base__`, then one `unsafe extern "system" fn(this, ...)` per method.
/// - `trait IFoo_Impl: IParent_Impl + 'static`: one
///   `unsafe fn(&self, ...)` per interface method (its caller, the vtable
///   thunk's caller, guarantees the COM contract: see `# Safety` on each).
///   Implement it (and the parents' traits) to export a type with
///   [`export`](crate::export).
/// - `impl Interface for IFoo` (IID, name, slot count, vtable and parent
///   types, the inheritance-chain test QueryInterface uses) and
///   `impl<T: IFoo_Impl> Exports<T, _> for IFoo` (the `'static` vtable of
///   thunks for `T`).
/// - Compile-time checks: the IID parses; the vtable is exactly
///   (parent slots + own methods) pointers; every parameter type is an
///   [`AbiParam`](crate::AbiParam) and every return type an
///   [`AbiReturn`](crate::AbiReturn).
///
/// See the [`example_generated`](crate::example_generated) module for the
/// items one invocation produces, and `docs/macro.md` for the full reference.
#[macro_export]
macro_rules! com_interface {
    (
        $(
            $(#[doc = $doc:expr])*
            #[iid($iid:expr)]
            #[vtable($vtbl:ident)]
            #[implement($impl_:ident $(: $pimpl:path)?)]
            // `#[agile]`; any other name is reported by `__com_threading!`.
            // (Visibility is matched token by token, not as `$vis:vis`: a
            // fragment right after this optional attribute would make the
            // match ambiguous.)
            $(#[$threading:ident])?
            $(pub $(($($vis:tt)*))?)? unsafe interface $name:ident : $($parent:tt)::+ { $($methods:tt)* }
        )*
    ) => {
        $(
            $crate::__com_split! {
                [
                    docs [$(#[doc = $doc])*]
                    iid [$iid]
                    vtable [$vtbl]
                    implement [$impl_ [$($pimpl)?]]
                    threading [$($threading)?]
                    vis [$(pub $(($($vis)*))?)?]
                    name [$name]
                    parent [$($parent)::+]
                ]
                []
                $($methods)*
            }
        )*
        $crate::__com_unique_iids! { [$([$name $iid])*] }
    };
    // Anything else is a syntax error: find the interface at fault and say why.
    ($($tokens:tt)*) => {
        $crate::__com_interface_diagnose! { $($tokens)* }
    };
}

/// The threading of one interface: `#[agile]` makes its invoker `Send +
/// Sync`; without it the invoker is neither (unless its parent is agile);
/// any other attribute there is an error. Not public API.
#[doc(hidden)]
#[macro_export]
macro_rules! __com_threading {
    ($name:ident []) => {};
    ($name:ident [agile]) => {
        // SAFETY: `#[agile]` declares the interface free-threaded: every
        // object implementing it accepts calls from any thread, so the
        // owning pointer may move to and be shared with other threads
        // (AddRef/Release are thread-safe by the COM rules, and every other
        // method is `unsafe`).
        unsafe impl $crate::__private::core::marker::Send for $name {}
        // SAFETY: as above.
        unsafe impl $crate::__private::core::marker::Sync for $name {}
    };
    ($name:ident [$other:ident]) => {
        $crate::__private::core::compile_error!($crate::__private::core::concat!(
            "com_interface!: interface `",
            $crate::__private::core::stringify!($name),
            "` has the unknown attribute `#[",
            $crate::__private::core::stringify!($other),
            "]`; the only attribute allowed after `#[implement(...)]` is `#[agile]` ",
            "(the interface's objects are free-threaded: its invoker is `Send + Sync`)"
        ));
    };
}

/// Rejects two interfaces with the same IID in one `com_interface!`
/// invocation: `cast` and `QueryInterface` would hand out the wrong vtable.
/// Not public API.
#[doc(hidden)]
#[macro_export]
macro_rules! __com_unique_iids {
    ([$([$name:ident $iid:expr])*]) => {
        $crate::__com_unique_iids! { @each [$([$name $iid])*] [$($iid),*] }
    };
    (@each [$([$name:ident $iid:expr])*] $all:tt) => {
        $(
            const _: () = $crate::__private::core::assert!(
                $crate::__private::count_iid(&$all, $iid) == 1,
                "{}",
                $crate::__private::core::concat!(
                    "com_interface!: another interface of this invocation has the IID of `",
                    $crate::__private::core::stringify!($name), "` (", $iid, "); `cast` and QueryInterface would ",
                    "hand out the wrong vtable: give each interface its own IID"
                )
            );
        )*
    };
}

/// One interface of a `com_interface!` invocation. Not public API.
#[doc(hidden)]
#[macro_export]
macro_rules! __com_interface {
    // `IUnknown` as a parent needs no import.
    (
        docs $docs:tt iid $iid:tt vtable $vtbl:tt implement $impl_:tt threading $threading:tt
        vis $vis:tt name $name:tt
        parent [IUnknown]
        methods $methods:tt
    ) => {
        $crate::__com_interface! {
            docs $docs iid $iid vtable $vtbl implement $impl_ threading $threading vis $vis name $name
            parent [$crate::IUnknown]
            methods $methods
        }
    };
    (
        docs [$(#[doc = $doc:expr])*]
        iid [$iid:expr]
        vtable [$vtbl:ident]
        implement [$impl_:ident [$($pimpl:path)?]]
        threading $threading:tt
        vis [$($vis:tt)*]
        name [$name:ident]
        parent [$($parent:tt)+]
        methods [$(
            [$(#[$mattr:meta])*] $method:ident ($($param:ident : $pty:ty),* $(,)?) [$($ret:ty)?] [$($body:tt)*]
        )*]
    ) => {
        $(#[doc = $doc])*
        #[doc = ""]
        #[doc = $crate::__private::core::concat!("IID: `", $iid, "`")]
        #[repr(transparent)]
        $($vis)* struct $name($($parent)+);

        impl $crate::__private::core::clone::Clone for $name {
            /// Takes another reference (`AddRef`).
            #[inline]
            fn clone(&self) -> Self {
                $crate::__private::clone(self)
            }
        }

        #[doc = $crate::__private::core::concat!(
            "The virtual function table of [`", $crate::__private::core::stringify!($name),
            "`]: the parent's table, then one slot per method, in declaration order."
        )]
        #[repr(C)]
        #[derive(Clone, Copy)]
        #[allow(non_snake_case, non_camel_case_types)]
        $($vis)* struct $vtbl {
            /// The parent interface's slots.
            pub base__: <$($parent)+ as $crate::Interface>::Vtable,
            $(
                $(#[$mattr])*
                pub $method: unsafe extern "system" fn(
                    this: *mut $crate::__private::core::ffi::c_void $(, $param: $pty)*
                ) $(-> $ret)?,
            )*
        }

        #[doc = $crate::__private::core::concat!(
            "Implement this trait to export a Rust type as [`", $crate::__private::core::stringify!($name),
            "`] with [`corprof::export`](", "https://docs.rs/corprof/latest/corprof/fn.export.html", "). ",
            "Methods with a default body may be left out."
        )]
        #[allow(non_snake_case, non_camel_case_types, clippy::too_many_arguments)]
        $($vis)* trait $impl_: $($pimpl +)? 'static {
            $(
                $crate::__com_trait_method! {
                    [$(#[$mattr])*] $method [$($param : $pty),*] [$($ret)?] [$($body)*]
                }
            )*
        }

        $crate::__com_invoker_methods! {
            $($vis)* $name [$( [$(#[$mattr])*] $method [$($param : $pty),*] [$($ret)?] )*]
        }

        $crate::__com_invoker_common!($($vis)* $name);

        $crate::__com_threading! { $name $threading }

        impl $crate::__private::core::ops::Deref for $name {
            type Target = $($parent)+;
            #[inline]
            fn deref(&self) -> &Self::Target {
                &self.0
            }
        }

        impl $crate::__private::core::convert::From<$name> for $($parent)+ {
            #[inline]
            fn from(value: $name) -> Self {
                value.0
            }
        }

        // SAFETY: `$name` is #[repr(transparent)] over its parent's invoker,
        // hence over one non-null COM pointer; `$vtbl` is #[repr(C)] with the
        // parent's vtable first; the slot count is checked below.
        unsafe impl $crate::Interface for $name {
            const IID: $crate::GUID = $crate::GUID::parse($iid);
            const NAME: &'static str = $crate::__private::core::stringify!($name);
            const SLOTS: usize = $crate::__private::parent_slots::<Self>()
                + [$($crate::__private::core::stringify!($method)),*].len();
            type Vtable = $vtbl;
            type Parent = $($parent)+;
        }

        // SAFETY: every own slot is a thunk that reads `this` as a block
        // exported for `__T` (through `__private::object`), and the parent's
        // part comes from the parent's own `Exports` impl for the same `__T`.
        unsafe impl<__T, __Id> $crate::Exports<__T, __Id> for $name
        where
            __T: $impl_,
            __Id: $crate::__private::Slot,
            <$name as $crate::Interface>::Parent: $crate::Exports<__T, __Id>,
        {
            const VTABLE: $vtbl = {
                $(
                    #[allow(non_snake_case, clippy::too_many_arguments, unused_parens)]
                    // `__R` is the return type again, given by the user's
                    // tokens below, so that a type that cannot be returned is
                    // reported at them.
                    unsafe extern "system" fn $method<__U: $impl_, __I: $crate::__private::Slot, __R>(
                        this: *mut $crate::__private::core::ffi::c_void $(, $param: $pty)*
                    ) $(-> $ret)?
                    where
                        (__R, __U): $crate::__private::Returns<R = ($($ret)?)>,
                    {
                        // SAFETY: this thunk is installed only in vtables built
                        // for `__U` at `__I`, so a non-null `this` is vtable
                        // pointer `__I::INDEX` of a block exported for `__U`,
                        // kept alive by the caller's reference.
                        match unsafe { $crate::__private::object::<__U, __I>(this) } {
                            $crate::__private::core::option::Option::Some(object) => <(__R, __U) as $crate::__private::Returns>::guard(
                                // SAFETY: the thunk's caller made this COM call,
                                // and so guarantees the method's contract, which
                                // is the `_Impl` method's `# Safety` condition.
                                move || unsafe { <__U as $impl_>::$method(object $(, $param)*) }
                            ),
                            $crate::__private::core::option::Option::None => <(__R, __U) as $crate::__private::Returns>::null_this(),
                        }
                    }
                )*
                $vtbl {
                    base__: <<$name as $crate::Interface>::Parent as $crate::Exports<__T, __Id>>::VTABLE,
                    $($method: $method::<__T, __Id, $crate::__com_ret!($($ret)?)>,)*
                }
            };
            const VTABLE_REF: &'static $vtbl = &<Self as $crate::Exports<__T, __Id>>::VTABLE;
        }

        $crate::__com_checks! {
            $name $vtbl [$($([$pty])*)*] [$([$($ret)?])*]
        }

        const _: () = $crate::__private::core::assert!(
            !$crate::__private::ancestors_have_iid::<$name>($iid),
            "{}",
            $crate::__private::core::concat!(
                "com_interface!: `", $crate::__private::core::stringify!($name), "` has the IID (", $iid,
                ") of an interface it inherits from; QueryInterface would hand out the wrong ",
                "vtable: give it its own IID"
            )
        );
    };
    // A method the arm above cannot read: say which, and why.
    (
        docs $docs:tt iid $iid:tt vtable $vtbl:tt implement $impl_:tt threading $threading:tt
        vis $vis:tt name [$name:ident] parent $parent:tt methods [$($methods:tt)*]
    ) => {
        $crate::__com_method_diagnose! { $name $($methods)* }
    };
}

/// A method's return type, `()` when it has none. Not public API.
#[doc(hidden)]
#[macro_export]
macro_rules! __com_ret {
    () => {
        ()
    };
    ($ret:ty) => {
        $ret
    };
}

/// The root interface (`IUnknown`): no parent; its exporter thunks are the
/// library's own. Not public API.
#[doc(hidden)]
#[macro_export]
macro_rules! __com_root_interface {
    (
        $(#[doc = $doc:expr])*
        #[iid($iid:expr)]
        #[vtable($vtbl:ident)]
        $vis:vis unsafe interface $name:ident {
            $(
                $(#[$mattr:meta])*
                fn $method:ident ( $($param:ident : $pty:ty),* $(,)? ) $(-> $ret:ty)?;
            )*
        }
    ) => {
        $(#[doc = $doc])*
        #[doc = ""]
        #[doc = $crate::__private::core::concat!("IID: `", $iid, "`")]
        #[repr(transparent)]
        $vis struct $name(
            $crate::__private::ComPtr,
            // Neither `Send` nor `Sync`: named so that the message for an
            // invoker sent to another thread says where to look.
            $crate::__private::core::marker::PhantomData<*const $crate::__private::NotAgile_see_agile_attribute>,
        );

        #[doc = $crate::__private::core::concat!("The virtual function table of [`", $crate::__private::core::stringify!($name), "`].")]
        #[repr(C)]
        #[derive(Clone, Copy)]
        #[allow(non_snake_case, non_camel_case_types)]
        $vis struct $vtbl {
            $(
                $(#[$mattr])*
                pub $method: unsafe extern "system" fn(
                    this: *mut $crate::__private::core::ffi::c_void $(, $param: $pty)*
                ) $(-> $ret)?,
            )*
        }

        $crate::__com_invoker_methods! {
            $vis $name [$( [$(#[$mattr])*] $method [$($param : $pty),*] [$($ret)?] )*]
        }

        $crate::__com_invoker_common!($vis $name);

        impl $crate::__private::core::clone::Clone for $name {
            /// Takes another reference (`AddRef`).
            #[inline]
            fn clone(&self) -> Self {
                // SAFETY: the invoker owns a live object; AddRef is always
                // valid on it and is balanced by the clone's Drop.
                unsafe { self.AddRef() };
                Self(self.0, $crate::__private::core::marker::PhantomData)
            }
        }

        impl $crate::__private::core::ops::Drop for $name {
            /// Gives the reference back (`Release`).
            #[inline]
            fn drop(&mut self) {
                // SAFETY: the invoker owns exactly one reference, released once.
                unsafe { self.Release() };
            }
        }

        // Neither `Send` nor `Sync` (the `PhantomData` of a raw pointer
        // inside): an object of any interface may be apartment-threaded.
        // Interfaces declared `#[agile]` opt in (`__com_threading!`), and so
        // do their children.

        // SAFETY: #[repr(transparent)] over a non-null COM pointer; the root
        // vtable has no parent; the slot count is checked below.
        unsafe impl $crate::Interface for $name {
            const IID: $crate::GUID = $crate::GUID::parse($iid);
            const NAME: &'static str = $crate::__private::core::stringify!($name);
            const SLOTS: usize = [$($crate::__private::core::stringify!($method)),*].len();
            type Vtable = $vtbl;
            type Parent = Self;
            #[inline]
            fn implements_iid(iid: &$crate::GUID) -> bool {
                *iid == Self::IID
            }
        }

        $crate::__com_checks! {
            $name $vtbl [$($([$pty])*)*] [$([$($ret)?])*]
        }
    };
}

/// One method of an `_Impl` trait: required when the declaration has no
/// body, provided when it has one. Not public API.
#[doc(hidden)]
#[macro_export]
macro_rules! __com_trait_method {
    ([$(#[$mattr:meta])*] $method:ident [$($param:ident : $pty:ty),*] [$($ret:ty)?] [;]) => {
        $(#[$mattr])*
        ///
        /// # Safety
        ///
        /// Called by the vtable thunk, whose caller (native code, or Rust
        /// through an invoker's `unsafe fn`) guarantees the COM contract of
        /// this method: pointer arguments valid as the interface documents
        /// them, counts matching their buffers, and the call on a thread the
        /// object accepts. Implementations may rely on that; calling it
        /// directly is `unsafe` because the caller then makes that promise.
        unsafe fn $method(&self $(, $param: $pty)*) $(-> $ret)?;
    };
    ([$(#[$mattr:meta])*] $method:ident [$($param:ident : $pty:ty),*] [$($ret:ty)?] [{ $($body:tt)* }]) => {
        $(#[$mattr])*
        ///
        /// # Safety
        ///
        /// As every method of this trait: the caller guarantees the COM
        /// contract of this method (valid pointer arguments, matching counts,
        /// an accepted thread), as the vtable thunk's caller does.
        #[allow(unused_variables)]
        unsafe fn $method(&self $(, $param: $pty)*) $(-> $ret)? { $($body)* }
    };
}

/// The invoker's methods: one `unsafe fn` per vtable slot, calling through
/// it. Not public API.
#[doc(hidden)]
#[macro_export]
macro_rules! __com_invoker_methods {
    ($vis:vis $name:ident [$( [$(#[$mattr:meta])*] $method:ident [$($param:ident : $pty:ty),*] [$($ret:ty)?] )*]) => {
        #[allow(non_snake_case, clippy::too_many_arguments)]
        impl $name {
            $(
                $(#[$mattr])*
                ///
                /// # Safety
                ///
                /// Calls the native object's method through its vtable slot:
                /// the arguments must meet that method's contract (valid,
                /// correctly sized pointers and counts) and the object must
                /// accept calls from this thread.
                #[inline]
                $vis unsafe fn $method(&self $(, $param: $pty)*) $(-> $ret)? {
                    let this = self.as_raw();
                    // SAFETY: the invoker owns a live object of this interface,
                    // whose vtable begins with this interface's table; the
                    // caller upholds the method's contract.
                    unsafe { ($crate::__private::vtable::<Self>(this).$method)(this $(, $param)*) }
                }
            )*
        }
    };
}

/// The raw-pointer methods every invoker has. Not public API.
#[doc(hidden)]
#[macro_export]
macro_rules! __com_invoker_common {
    ($vis:vis $name:ident) => {
        impl $name {
            /// Takes ownership of a COM pointer (one reference, which this
            /// invoker will `Release`). `None` if `ptr` is null.
            ///
            /// # Safety
            ///
            /// A non-null `ptr` must point to a live object implementing this
            /// interface, and the caller must own the reference it transfers.
            #[inline]
            $vis unsafe fn from_raw(ptr: *mut $crate::__private::core::ffi::c_void) -> $crate::__private::core::option::Option<Self> {
                // SAFETY: forwarded contract.
                unsafe { $crate::__private::from_raw::<Self>(ptr) }
            }

            /// Gives up ownership: returns the COM pointer without releasing
            /// it (for example to write it into a caller's `void**`).
            #[inline]
            #[must_use = "the returned pointer owns a reference that must be released"]
            $vis fn into_raw(self) -> *mut $crate::__private::core::ffi::c_void {
                $crate::__private::into_raw(self)
            }

            /// The COM pointer, still owned by this invoker.
            #[inline]
            $vis fn as_raw(&self) -> *mut $crate::__private::core::ffi::c_void {
                $crate::__private::as_raw(self)
            }

            /// Asks the object for another of its interfaces
            /// (`QueryInterface`); the result owns its own reference.
            #[inline]
            $vis fn cast<J: $crate::Interface>(&self) -> $crate::__private::core::result::Result<J, $crate::HRESULT> {
                $crate::__private::cast::<Self, J>(self)
            }
        }

        impl $crate::__private::core::fmt::Debug for $name {
            fn fmt(&self, f: &mut $crate::__private::core::fmt::Formatter<'_>) -> $crate::__private::core::fmt::Result {
                $crate::__private::core::write!(f, "{}({:p})", $crate::__private::core::stringify!($name), self.as_raw())
            }
        }
    };
}

/// Compile-time checks of one interface. Not public API.
#[doc(hidden)]
#[macro_export]
macro_rules! __com_checks {
    ($name:ident $vtbl:ident [$([$pty:ty])*] [$([$($ret:ty)?])*]) => {
        #[allow(unused_parens)]
        const _: () = {
            // The IID parses (a malformed one fails here, at compile time).
            let _ = <$name as $crate::Interface>::IID;
            // Exactly one pointer per slot: no padding, nothing missing.
            $crate::__private::core::assert!(
                $crate::__private::core::mem::size_of::<$vtbl>()
                    == <$name as $crate::Interface>::SLOTS * $crate::__private::core::mem::size_of::<usize>(),
                $crate::__private::core::concat!("the vtable of ", $crate::__private::core::stringify!($name), " is not one pointer per slot")
            );
            $($crate::__private::assert_abi_param::<$pty>();)*
            // Return types are checked by each thunk's `Returns` bound
            // (one error per method, naming it).
        };
    };
}
