//! Macros for the C types of the runtime's headers: opaque IDs, C enums and
//! flag sets, each a `#[repr(transparent)]` newtype.
//!
//! C enums are *not* Rust enums here: the runtime may pass a value this
//! crate does not know (a newer runtime adds reasons and flags), and an
//! unknown discriminant in a Rust enum is undefined behaviour. A newtype over
//! the integer with named constants accepts every value and still prints by
//! name.

/// Opaque pointer-sized IDs (`typedef UINT_PTR FunctionID;`): distinct types,
/// so a `ClassID` cannot be passed where a `FunctionID` is expected.
macro_rules! id_types {
    ($( $(#[$attr:meta])* $name:ident; )*) => {$(
        $(#[$attr])*
        #[repr(transparent)]
        #[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
        pub struct $name(pub(crate) usize);

        impl $name {
            /// The null ID (0), which the runtime uses for "none".
            pub const NULL: $name = $name(0);

            /// `true` for the null ID.
            #[inline]
            pub const fn is_null(self) -> bool {
                self.0 == 0
            }

            /// The ID as the runtime passed it.
            #[inline]
            pub const fn as_raw(self) -> usize {
                self.0
            }

            /// An ID from its raw value.
            ///
            /// # Safety
            ///
            /// `raw` must be an ID of this kind that the runtime handed out
            /// (a callback's argument, an enumerator's item, an out-parameter)
            /// and that is still valid: the safe API passes IDs to runtime
            /// calls that dereference them.
            #[inline]
            pub const unsafe fn from_raw(raw: usize) -> $name {
                $name(raw)
            }
        }

        impl ::core::fmt::Debug for $name {
            fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                ::core::write!(f, "{}({:#x})", ::core::stringify!($name), self.0)
            }
        }

        // SAFETY: #[repr(transparent)] over usize.
        unsafe impl $crate::AbiParam for $name {}
    )*};
}
pub(crate) use id_types;

/// A C enum as a newtype over its integer, with its constants at module
/// level under their exact C names (`COR_PRF_GC_INDUCED`).
macro_rules! c_enum {
    (
        $(#[$attr:meta])*
        pub struct $name:ident($repr:ty);
        $( $(#[$vattr:meta])* $variant:ident = $value:expr; )*
    ) => {
        $(#[$attr])*
        #[repr(transparent)]
        #[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
        pub struct $name(pub $repr);

        $(
            $(#[$vattr])*
            pub const $variant: $name = $name($value);
        )*

        impl $name {
            /// Every named value, in declaration order.
            pub const VALUES: &'static [(&'static str, $name)] = &[$((::core::stringify!($variant), $variant)),*];

            /// The C name of this value, or `None` for a value this crate does
            /// not know (a newer runtime may send one).
            pub fn name(self) -> ::core::option::Option<&'static str> {
                Self::VALUES.iter().find(|(_, v)| *v == self).map(|(n, _)| *n)
            }
        }

        impl ::core::fmt::Debug for $name {
            fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                match self.name() {
                    ::core::option::Option::Some(name) => f.write_str(name),
                    ::core::option::Option::None => ::core::write!(f, "{}({})", ::core::stringify!($name), self.0),
                }
            }
        }

        // SAFETY: #[repr(transparent)] over a C integer type.
        unsafe impl $crate::AbiParam for $name {}
    };
}
pub(crate) use c_enum;

/// A C flag set as a newtype over its integer: constants at module level
/// under their exact C names, set operations as `const fn`s and operators,
/// and a `Debug` that names the bits.
#[allow(unused_macros)]
macro_rules! c_flags {
    (
        $(#[$attr:meta])*
        pub struct $name:ident($repr:ty);
        $( $(#[$vattr:meta])* $flag:ident = $value:expr; )*
    ) => {
        $(#[$attr])*
        #[repr(transparent)]
        #[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
        pub struct $name(pub $repr);

        $(
            $(#[$vattr])*
            pub const $flag: $name = $name($value);
        )*

        #[allow(dead_code)]
        impl $name {
            /// Every named flag and combination, in declaration order.
            pub const FLAGS: &'static [(&'static str, $name)] = &[$((::core::stringify!($flag), $flag)),*];

            /// No flag set.
            #[inline]
            pub const fn empty() -> $name {
                $name(0)
            }
            /// The raw bits.
            #[inline]
            pub const fn bits(self) -> $repr {
                self.0
            }
            /// From raw bits, unknown bits included (a newer runtime may set them).
            #[inline]
            pub const fn from_bits_retain(bits: $repr) -> $name {
                $name(bits)
            }
            /// `true` when no bit is set.
            #[inline]
            pub const fn is_empty(self) -> bool {
                self.0 == 0
            }
            /// `true` when every bit of `other` is set in `self`.
            #[inline]
            pub const fn contains(self, other: $name) -> bool {
                self.0 & other.0 == other.0
            }
            /// `true` when `self` and `other` share a bit.
            #[inline]
            pub const fn intersects(self, other: $name) -> bool {
                self.0 & other.0 != 0
            }
            /// The bits of either.
            #[inline]
            pub const fn union(self, other: $name) -> $name {
                $name(self.0 | other.0)
            }
            /// The bits of both.
            #[inline]
            pub const fn intersection(self, other: $name) -> $name {
                $name(self.0 & other.0)
            }
            /// The bits of `self` that are not in `other`.
            #[inline]
            pub const fn difference(self, other: $name) -> $name {
                $name(self.0 & !other.0)
            }
            /// The named single-bit flags set in `self`, in declaration order.
            pub fn iter_names(self) -> impl ::core::iter::Iterator<Item = (&'static str, $name)> {
                Self::FLAGS
                    .iter()
                    .copied()
                    .filter(move |(_, f)| f.0.count_ones() == 1 && self.contains(*f))
            }
        }

        impl ::core::ops::BitOr for $name {
            type Output = $name;
            #[inline]
            fn bitor(self, rhs: $name) -> $name {
                self.union(rhs)
            }
        }
        impl ::core::ops::BitOrAssign for $name {
            #[inline]
            fn bitor_assign(&mut self, rhs: $name) {
                self.0 |= rhs.0;
            }
        }
        impl ::core::ops::BitAnd for $name {
            type Output = $name;
            #[inline]
            fn bitand(self, rhs: $name) -> $name {
                self.intersection(rhs)
            }
        }
        impl ::core::ops::BitAndAssign for $name {
            #[inline]
            fn bitand_assign(&mut self, rhs: $name) {
                self.0 &= rhs.0;
            }
        }
        impl ::core::ops::Sub for $name {
            type Output = $name;
            #[inline]
            fn sub(self, rhs: $name) -> $name {
                self.difference(rhs)
            }
        }
        impl ::core::ops::SubAssign for $name {
            #[inline]
            fn sub_assign(&mut self, rhs: $name) {
                self.0 &= !rhs.0;
            }
        }

        impl ::core::fmt::Debug for $name {
            /// `COR_PRF_MONITOR(COR_PRF_MONITOR_GC | COR_PRF_MONITOR_JIT_COMPILATION | 0x80000000)`:
            /// the named single bits, then any unnamed rest in hexadecimal.
            fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                ::core::write!(f, "{}(", ::core::stringify!($name))?;
                let mut rest = self.0;
                let mut first = true;
                for (name, flag) in self.iter_names() {
                    if !first {
                        f.write_str(" | ")?;
                    }
                    f.write_str(name)?;
                    rest &= !flag.0;
                    first = false;
                }
                if rest != 0 || first {
                    if !first {
                        f.write_str(" | ")?;
                    }
                    ::core::write!(f, "{:#x}", rest)?;
                }
                f.write_str(")")
            }
        }

        // SAFETY: #[repr(transparent)] over a C integer type.
        unsafe impl $crate::AbiParam for $name {}
    };
}
#[allow(unused_imports)]
pub(crate) use c_flags;
