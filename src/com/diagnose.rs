//! The error path of [`com_interface!`](crate::com_interface): the macros
//! that explain a malformed invocation (which interface, which method,
//! what to write) and, where they can, point at the token at fault
//! (`__com_at_token!`). Only ever expanded when the invocation does not
//! match the macro's main arm or a method does not normalise. Not public
//! API.

/// Explains a malformed `com_interface!` invocation, one interface at a
/// time (only ever expanded on the error path). Not public API.
#[doc(hidden)]
#[macro_export]
macro_rules! __com_interface_diagnose {
    () => {};
    // A well-formed header: check its methods, then go on with the rest.
    (
        $(#[doc = $doc:expr])*
        #[iid($iid:expr)]
        #[vtable($vtbl:ident)]
        #[implement($impl_:ident $(: $pimpl:path)?)]
        $(#[$threading:ident])?
        $(pub $(($($vis:tt)*))?)? unsafe interface $name:ident : $($parent:ident)::+ { $($methods:tt)* }
        $($rest:tt)*
    ) => {
        $crate::__com_methods_check! { $($methods)* }
        $crate::__com_interface_diagnose! { $($rest)* }
    };
    // The same without `unsafe`: the declaration is an assertion only its
    // author can make.
    (
        $(#[doc = $doc:expr])*
        #[iid($iid:expr)]
        #[vtable($vtbl:ident)]
        #[implement($impl_:ident $(: $pimpl:path)?)]
        $(#[$threading:ident])?
        $(pub $(($($vis:tt)*))?)? interface $name:ident : $($parent:ident)::+ { $($methods:tt)* }
        $($rest:tt)*
    ) => {
        $crate::__private::core::compile_error!($crate::__private::core::concat!(
            "com_interface!: write `unsafe interface ", $crate::__private::core::stringify!($name),
            "`: declaring a COM interface asserts that every object answering QueryInterface for its IID (",
            $iid, ") has exactly this vtable (the parent's slots, then these methods, in this order, with ",
            "these parameter and return types) and that no other interface uses this IID; ",
            "calls through the interface trust that assertion"
        ));
        $crate::__com_interface_diagnose! { $($rest)* }
    };
    // Attributes missing, unknown or out of order: collect their names.
    (# $($rest:tt)*) => {
        $crate::__com_attrs_diagnose! { [] # $($rest)* }
    };
    ($($other:tt)*) => {
        $crate::__private::core::compile_error!(
            "com_interface!: expected `#[iid(\"...\")] #[vtable(Name_Vtbl)] #[implement(Name_Impl)] pub unsafe interface Name: Parent { fn Method(arg: Type) -> HRESULT; ... }` (with `#[agile]` after `#[implement(...)]` for a free-threaded interface)"
        );
    };
}

/// Names the interface whose attributes are wrong and what is wrong with
/// them, then goes on with the next interface (error path only). Not public
/// API.
#[doc(hidden)]
#[macro_export]
macro_rules! __com_attrs_diagnose {
    (@report $name:ident [vtable implement]) => {
        $crate::__com_attrs_diagnose! { @missing $name "`#[iid(\"XXXXXXXX-XXXX-XXXX-XXXX-XXXXXXXXXXXX\")]` attribute (its interface ID)" }
    };
    (@report $name:ident [iid implement]) => {
        $crate::__com_attrs_diagnose! { @missing $name "`#[vtable(Name_Vtbl)]` attribute (the name of its vtable struct)" }
    };
    (@report $name:ident [iid vtable]) => {
        $crate::__com_attrs_diagnose! { @missing $name "`#[implement(Name_Impl)]` attribute (the name of its trait; `#[implement(Name_Impl: Parent_Impl)]` unless the parent is IUnknown)" }
    };
    (@report $name:ident [iid vtable implement agile]) => {
        $crate::__private::core::compile_error!($crate::__private::core::concat!(
            "com_interface!: malformed interface `", $crate::__private::core::stringify!($name),
            "`: expected `#[agile]` (no arguments), then `pub unsafe interface ", $crate::__private::core::stringify!($name),
            ": Parent { fn Method(arg: Type) -> HRESULT; ... }`"
        ));
    };
    (@report $name:ident [iid vtable implement]) => {
        $crate::__private::core::compile_error!($crate::__private::core::concat!(
            "com_interface!: malformed interface `", $crate::__private::core::stringify!($name),
            "`: expected `pub unsafe interface ", $crate::__private::core::stringify!($name), ": Parent { fn Method(arg: Type) -> HRESULT; ... }`"
        ));
    };
    (@report $name:ident [$($seen:ident)*]) => {
        $crate::__com_attrs_diagnose! { @unknown $name [$($seen)*] [$($seen)*] }
    };
    // An attribute the macro does not know is named as such.
    (@unknown $name:ident [] [$($seen:ident)*]) => {
        $crate::__com_attrs_diagnose! { @order $name [$($seen)*] }
    };
    (@unknown $name:ident [iid $($more:ident)*] $seen:tt) => {
        $crate::__com_attrs_diagnose! { @unknown $name [$($more)*] $seen }
    };
    (@unknown $name:ident [vtable $($more:ident)*] $seen:tt) => {
        $crate::__com_attrs_diagnose! { @unknown $name [$($more)*] $seen }
    };
    (@unknown $name:ident [implement $($more:ident)*] $seen:tt) => {
        $crate::__com_attrs_diagnose! { @unknown $name [$($more)*] $seen }
    };
    (@unknown $name:ident [agile $($more:ident)*] $seen:tt) => {
        $crate::__com_attrs_diagnose! { @unknown $name [$($more)*] $seen }
    };
    (@unknown $name:ident [$other:ident $($more:ident)*] $seen:tt) => {
        $crate::__private::core::compile_error!($crate::__private::core::concat!(
            "com_interface!: interface `", $crate::__private::core::stringify!($name),
            "` has the unknown attribute `#[", $crate::__private::core::stringify!($other), "]`; ",
            "after its doc comments, each interface has `#[iid(\"...\")]`, `#[vtable(Name_Vtbl)]`, ",
            "`#[implement(Name_Impl)]` and, for a free-threaded interface, `#[agile]`, in this order"
        ));
    };
    // Known attributes in the wrong order, repeated or missing.
    (@order $name:ident [$($seen:ident)*]) => {
        $crate::__private::core::compile_error!($crate::__private::core::concat!(
            "com_interface!: interface `", $crate::__private::core::stringify!($name), "` has the attributes",
            $(" `#[", $crate::__private::core::stringify!($seen), "]`",)*
            "; after its doc comments, each interface has exactly ",
            "`#[iid(\"XXXXXXXX-XXXX-XXXX-XXXX-XXXXXXXXXXXX\")]`, `#[vtable(Name_Vtbl)]` and ",
            "`#[implement(Name_Impl)]` (or `#[implement(Name_Impl: Parent_Impl)]`), in this order, ",
            "then `#[agile]` if the interface is free-threaded"
        ));
    };
    (@missing $name:ident $what:literal) => {
        $crate::__private::core::compile_error!($crate::__private::core::concat!(
            "com_interface!: interface `", $crate::__private::core::stringify!($name), "` has no ", $what,
            "; after its doc comments, each interface has `#[iid(\"...\")]`, ",
            "`#[vtable(Name_Vtbl)]` and `#[implement(Name_Impl)]`, in this order"
        ));
    };
    // Skip the rest of the faulty interface, then diagnose the others.
    (@next : $($parent:ident)::+ { $($methods:tt)* } $($rest:tt)*) => {
        $crate::__com_interface_diagnose! { $($rest)* }
    };
    (@next $($rest:tt)*) => {};
    // Doc comments are skipped; every other attribute's name is collected.
    ([$($seen:ident)*] #[doc $($args:tt)*] $($rest:tt)*) => {
        $crate::__com_attrs_diagnose! { [$($seen)*] $($rest)* }
    };
    ([$($seen:ident)*] #[$attr:ident $($args:tt)*] $($rest:tt)*) => {
        $crate::__com_attrs_diagnose! { [$($seen)* $attr] $($rest)* }
    };
    // The attributes are over: find the interface's name.
    // No `: Parent` (a well-formed interface always has one).
    ($seen:tt interface $name:tt { $($methods:tt)* } $($rest:tt)*) => {
        $crate::__com_at_token! { @no_parent [$name] [$name] }
        $crate::__com_uses! { $($methods)* }
        $crate::__com_interface_diagnose! { $($rest)* }
    };
    ($seen:tt interface $name:ident $($rest:tt)*) => {
        $crate::__com_attrs_diagnose! { @report $name $seen }
        $crate::__com_attrs_diagnose! { @next $($rest)* }
    };
    // Another word where `interface` belongs (a typo). Captured as `tt`,
    // which keeps the token's span (`__com_at_token!`).
    ($seen:tt $word:tt $name:tt : $($parent:ident)::+ { $($methods:tt)* } $($rest:tt)*) => {
        $crate::__com_at_token! { @typo [$word] [$name] [$word $name] }
        $crate::__com_uses! { $($methods)* }
        $crate::__com_interface_diagnose! { $($rest)* }
    };
    ($seen:tt $skip:tt $($rest:tt)*) => {
        $crate::__com_attrs_diagnose! { $seen $($rest)* }
    };
    ($seen:tt) => {
        $crate::__private::core::compile_error!(
            "com_interface!: expected `#[iid(\"...\")] #[vtable(Name_Vtbl)] #[implement(Name_Impl)] pub unsafe interface Name: Parent { fn Method(arg: Type) -> HRESULT; ... }`"
        );
    };
}

/// Reports a mistake in the shape of a `com_interface!` invocation at the
/// user's token (error path only). `compile_error!` can only point at the
/// whole invocation, so the tokens, captured as `tt` (an `ident` capture
/// loses its span when written into a type), name local types, and a
/// trait bound with `#[diagnostic::on_unimplemented]` fails on them: the
/// error sits on the token and its message names them. A keyword cannot
/// name a type, and a token that is not an identifier cannot either: those
/// get the `compile_error!` form. Not public API.
#[doc(hidden)]
#[macro_export]
macro_rules! __com_at_token {
    // A keyword cannot name a type: the `compile_error!` form.
    (@$kind:ident [as] $($args:tt)*) => { $crate::__com_at_token! { @$kind whole $($args)* } };
    (@$kind:ident [break] $($args:tt)*) => { $crate::__com_at_token! { @$kind whole $($args)* } };
    (@$kind:ident [const] $($args:tt)*) => { $crate::__com_at_token! { @$kind whole $($args)* } };
    (@$kind:ident [continue] $($args:tt)*) => { $crate::__com_at_token! { @$kind whole $($args)* } };
    (@$kind:ident [crate] $($args:tt)*) => { $crate::__com_at_token! { @$kind whole $($args)* } };
    (@$kind:ident [else] $($args:tt)*) => { $crate::__com_at_token! { @$kind whole $($args)* } };
    (@$kind:ident [enum] $($args:tt)*) => { $crate::__com_at_token! { @$kind whole $($args)* } };
    (@$kind:ident [extern] $($args:tt)*) => { $crate::__com_at_token! { @$kind whole $($args)* } };
    (@$kind:ident [false] $($args:tt)*) => { $crate::__com_at_token! { @$kind whole $($args)* } };
    (@$kind:ident [fn] $($args:tt)*) => { $crate::__com_at_token! { @$kind whole $($args)* } };
    (@$kind:ident [for] $($args:tt)*) => { $crate::__com_at_token! { @$kind whole $($args)* } };
    (@$kind:ident [if] $($args:tt)*) => { $crate::__com_at_token! { @$kind whole $($args)* } };
    (@$kind:ident [impl] $($args:tt)*) => { $crate::__com_at_token! { @$kind whole $($args)* } };
    (@$kind:ident [in] $($args:tt)*) => { $crate::__com_at_token! { @$kind whole $($args)* } };
    (@$kind:ident [let] $($args:tt)*) => { $crate::__com_at_token! { @$kind whole $($args)* } };
    (@$kind:ident [loop] $($args:tt)*) => { $crate::__com_at_token! { @$kind whole $($args)* } };
    (@$kind:ident [match] $($args:tt)*) => { $crate::__com_at_token! { @$kind whole $($args)* } };
    (@$kind:ident [mod] $($args:tt)*) => { $crate::__com_at_token! { @$kind whole $($args)* } };
    (@$kind:ident [move] $($args:tt)*) => { $crate::__com_at_token! { @$kind whole $($args)* } };
    (@$kind:ident [mut] $($args:tt)*) => { $crate::__com_at_token! { @$kind whole $($args)* } };
    (@$kind:ident [pub] $($args:tt)*) => { $crate::__com_at_token! { @$kind whole $($args)* } };
    (@$kind:ident [ref] $($args:tt)*) => { $crate::__com_at_token! { @$kind whole $($args)* } };
    (@$kind:ident [return] $($args:tt)*) => { $crate::__com_at_token! { @$kind whole $($args)* } };
    (@$kind:ident [self] $($args:tt)*) => { $crate::__com_at_token! { @$kind whole $($args)* } };
    (@$kind:ident [Self] $($args:tt)*) => { $crate::__com_at_token! { @$kind whole $($args)* } };
    (@$kind:ident [static] $($args:tt)*) => { $crate::__com_at_token! { @$kind whole $($args)* } };
    (@$kind:ident [struct] $($args:tt)*) => { $crate::__com_at_token! { @$kind whole $($args)* } };
    (@$kind:ident [super] $($args:tt)*) => { $crate::__com_at_token! { @$kind whole $($args)* } };
    (@$kind:ident [trait] $($args:tt)*) => { $crate::__com_at_token! { @$kind whole $($args)* } };
    (@$kind:ident [true] $($args:tt)*) => { $crate::__com_at_token! { @$kind whole $($args)* } };
    (@$kind:ident [type] $($args:tt)*) => { $crate::__com_at_token! { @$kind whole $($args)* } };
    (@$kind:ident [unsafe] $($args:tt)*) => { $crate::__com_at_token! { @$kind whole $($args)* } };
    (@$kind:ident [use] $($args:tt)*) => { $crate::__com_at_token! { @$kind whole $($args)* } };
    (@$kind:ident [where] $($args:tt)*) => { $crate::__com_at_token! { @$kind whole $($args)* } };
    (@$kind:ident [while] $($args:tt)*) => { $crate::__com_at_token! { @$kind whole $($args)* } };
    (@$kind:ident [async] $($args:tt)*) => { $crate::__com_at_token! { @$kind whole $($args)* } };
    (@$kind:ident [await] $($args:tt)*) => { $crate::__com_at_token! { @$kind whole $($args)* } };
    (@$kind:ident [dyn] $($args:tt)*) => { $crate::__com_at_token! { @$kind whole $($args)* } };
    (@$kind:ident [abstract] $($args:tt)*) => { $crate::__com_at_token! { @$kind whole $($args)* } };
    (@$kind:ident [become] $($args:tt)*) => { $crate::__com_at_token! { @$kind whole $($args)* } };
    (@$kind:ident [box] $($args:tt)*) => { $crate::__com_at_token! { @$kind whole $($args)* } };
    (@$kind:ident [do] $($args:tt)*) => { $crate::__com_at_token! { @$kind whole $($args)* } };
    (@$kind:ident [final] $($args:tt)*) => { $crate::__com_at_token! { @$kind whole $($args)* } };
    (@$kind:ident [macro] $($args:tt)*) => { $crate::__com_at_token! { @$kind whole $($args)* } };
    (@$kind:ident [override] $($args:tt)*) => { $crate::__com_at_token! { @$kind whole $($args)* } };
    (@$kind:ident [priv] $($args:tt)*) => { $crate::__com_at_token! { @$kind whole $($args)* } };
    (@$kind:ident [typeof] $($args:tt)*) => { $crate::__com_at_token! { @$kind whole $($args)* } };
    (@$kind:ident [unsized] $($args:tt)*) => { $crate::__com_at_token! { @$kind whole $($args)* } };
    (@$kind:ident [virtual] $($args:tt)*) => { $crate::__com_at_token! { @$kind whole $($args)* } };
    (@$kind:ident [yield] $($args:tt)*) => { $crate::__com_at_token! { @$kind whole $($args)* } };
    (@$kind:ident [try] $($args:tt)*) => { $crate::__com_at_token! { @$kind whole $($args)* } };
    (@$kind:ident [gen] $($args:tt)*) => { $crate::__com_at_token! { @$kind whole $($args)* } };
    // `interfce IGreeter`: the word, then the interface's name; the bound
    // fails at the word. (Nested blocks: the two may have one name.)
    (@typo [$w:ident] [$n:ident] [$word:tt $name:tt]) => {
        const _: () = {
            #[allow(non_camel_case_types, dead_code)]
            struct $name;
            {
                #[allow(non_camel_case_types, dead_code)]
                struct $word;
                $crate::__private::expected_interface::<$word, $name>()
            }
        };
    };
    (@typo whole $ident:tt [$word:tt $name:tt]) => {
        $crate::__private::core::compile_error!($crate::__private::core::concat!(
            "com_interface!: expected `interface` before `", $crate::__private::core::stringify!($name),
            "`, found `", $crate::__private::core::stringify!($word), "`: write `pub unsafe interface ",
            $crate::__private::core::stringify!($name), ": Parent { ... }`"
        ));
    };
    (@typo $word:tt $ident:tt $tokens:tt) => {
        $crate::__com_at_token! { @typo whole $ident $tokens }
    };
    // `interface IGreeter {`: the bound fails at the name.
    (@no_parent [$n:ident] [$name:tt]) => {
        const _: () = {
            #[allow(non_camel_case_types, dead_code)]
            struct $name;
            $crate::__private::names_no_parent::<$name>()
        };
    };
    (@no_parent whole [$name:tt]) => {
        $crate::__private::core::compile_error!($crate::__private::core::concat!(
            "com_interface!: interface `", $crate::__private::core::stringify!($name), "` names no parent: write `unsafe interface ",
            $crate::__private::core::stringify!($name), ": IUnknown {` (or `: IParent` for the interface it derives from; ",
            "every COM interface derives from IUnknown)"
        ));
    };
    (@no_parent $ident:tt [$name:tt]) => {
        $crate::__com_at_token! { @no_parent whole [$name] }
    };
    // `fn Greet(...) -> HRESULT` without `;`: the bound fails at the return
    // type (`$ret`, a `tt`; the interface's and the method's names only
    // name types).
    (@semicolon [$ri:ident] [$name:ident $m:ident $ret:tt]) => {
        const _: () = {
            #[allow(non_camel_case_types, dead_code)]
            struct $name;
            {
                #[allow(non_camel_case_types, dead_code)]
                struct $m;
                {
                    #[allow(non_camel_case_types, dead_code)]
                    struct $ret;
                    $crate::__private::expected_semicolon::<$ret, $m, $name>()
                }
            }
        };
    };
    (@semicolon whole [$name:ident $m:ident $ret:tt]) => {
        $crate::__private::core::compile_error!($crate::__private::core::concat!(
            "com_interface!: `", $crate::__private::core::stringify!($name), "::", $crate::__private::core::stringify!($m),
            "`: expected `;` after `-> ", $crate::__private::core::stringify!($ret),
            "` (or a `{ default body }` instead): write `fn ", $crate::__private::core::stringify!($m), "(...) -> ",
            $crate::__private::core::stringify!($ret), ";`"
        ));
    };
}

/// Explains the first malformed method of a normalised method list: `this`
/// written out, or a parameter that is not `name: Type` (error path only).
/// Not public API.
#[doc(hidden)]
#[macro_export]
macro_rules! __com_method_diagnose {
    ($name:ident) => {
        $crate::__private::core::compile_error!($crate::__private::core::concat!(
            "com_interface!: malformed interface `", $crate::__private::core::stringify!($name), "`"
        ));
    };
    // The return type is used, as it would be without the mistake (no
    // "unused import" warning beside the error).
    ($name:ident [$($attrs:tt)*] $method:ident (& $($lt:lifetime)? $(mut)? self $($params:tt)*) [$($ret:ty)?] $($rest:tt)*) => {
        $crate::__com_method_diagnose! { @self $name $method }
        $crate::__com_use_types! { $($ret)? }
    };
    ($name:ident [$($attrs:tt)*] $method:ident ($(mut)? self $($params:tt)*) [$($ret:ty)?] $($rest:tt)*) => {
        $crate::__com_method_diagnose! { @self $name $method }
        $crate::__com_use_types! { $($ret)? }
    };
    ($name:ident [$($attrs:tt)*] $method:ident ($($param:ident : $pty:ty),* $(,)?) $ret:tt $tail:tt $($rest:tt)*) => {
        $crate::__com_method_diagnose! { $name $($rest)* }
    };
    ($name:ident [$($attrs:tt)*] $method:ident $params:tt $($rest:tt)*) => {
        $crate::__private::core::compile_error!($crate::__private::core::concat!(
            "com_interface!: `", $crate::__private::core::stringify!($name), "::", $crate::__private::core::stringify!($method),
            "`: each parameter is `name: Type`, separated by commas"
        ));
    };
    (@self $name:ident $method:ident) => {
        $crate::__private::core::compile_error!($crate::__private::core::concat!(
            "com_interface!: `", $crate::__private::core::stringify!($name), "::", $crate::__private::core::stringify!($method),
            "`: `this` is implicit: leave out `&self` and declare only the other parameters ",
            "(`fn ", $crate::__private::core::stringify!($method), "(arg: Type, ...) -> Ret;`); the `",
            $crate::__private::core::stringify!($name), "_Impl` trait method gets `&self` by itself"
        ));
    };
}

/// Uses the parameter and return types of a well-formed method list, as the
/// interface would without the mistake in its header, so that an error there
/// comes without an "unused import" warning (error path only). Not public
/// API.
#[doc(hidden)]
#[macro_export]
macro_rules! __com_uses {
    ($(
        $(#[$mattr:meta])*
        fn $method:ident ( $($param:ident : $pty:ty),* $(,)? ) $(-> $ret:ty)? $({ $($body:tt)* })? $(;)?
    )*) => {
        $crate::__com_use_types! { $($($pty,)* $($ret,)?)* }
    };
    ($($other:tt)*) => {};
}

/// Uses the parameter and return types of the methods `__com_split!` has
/// already normalised, when a later method of the interface is malformed
/// (no "unused import" warning beside the error; error path only). Not
/// public API.
#[doc(hidden)]
#[macro_export]
macro_rules! __com_done_uses {
    ($(
        [$($attrs:tt)*] $method:ident ($($param:ident : $pty:ty),* $(,)?) [$($ret:ty)?] [$($body:tt)*]
    )*) => {
        $crate::__com_use_types! { $($($pty,)* $($ret,)?)* }
    };
    ($($other:tt)*) => {};
}

/// Uses each of the types it is given (the one job behind `__com_uses!`,
/// `__com_done_uses!` and the other error-path arms that keep imports
/// used). Not public API.
#[doc(hidden)]
#[macro_export]
macro_rules! __com_use_types {
    ($($ty:ty),* $(,)?) => {
        $(
            const _: $crate::__private::core::marker::PhantomData<$ty> = $crate::__private::core::marker::PhantomData;
        )*
    };
}

/// Matches a method list alone, so that rustc points at the first token of
/// a malformed method. Not public API.
#[doc(hidden)]
#[macro_export]
macro_rules! __com_methods_check {
    ($(
        $(#[$mattr:meta])*
        fn $method:ident ( $($param:ident : $pty:ty),* $(,)? ) $(-> $ret:ty)? $({ $($body:tt)* })? $(;)?
    )*) => {};
}
