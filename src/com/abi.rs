//! What may cross a COM vtable boundary: the [`AbiParam`] and [`AbiReturn`]
//! marker traits, and the fixed-width Windows/PAL type names.
//!
//! CoreCLR's PAL gives the Windows types the same widths on every OS, which is
//! not what a Linux C compiler would guess: `ULONG` and `DWORD` are 32 bits
//! (not `unsigned long`), `WCHAR` is 16 bits (not `wchar_t`), `BOOL` is a
//! 32-bit integer. The aliases below encode those widths once.
#![allow(non_camel_case_types)]

use core::ffi::c_void;

/// Windows `BOOL`: a 32-bit integer, zero for false. (Not Rust's `bool`.)
pub type BOOL = i32;
/// `TRUE` (1).
pub const TRUE: BOOL = 1;
/// `FALSE` (0).
pub const FALSE: BOOL = 0;
/// `BYTE`, 8 bits unsigned.
pub type BYTE = u8;
/// `WCHAR`: a UTF-16 code unit, 16 bits on every OS (PAL), not `wchar_t`.
pub type WCHAR = u16;
/// `USHORT`, 16 bits unsigned.
pub type USHORT = u16;
/// `ULONG`: 32 bits on every OS (PAL), not `unsigned long`.
pub type ULONG = u32;
/// `ULONG32`, 32 bits unsigned.
pub type ULONG32 = u32;
/// `LONG`: 32 bits signed on every OS (PAL).
pub type LONG = i32;
/// `DWORD`, 32 bits unsigned.
pub type DWORD = u32;
/// `UINT`, 32 bits unsigned.
pub type UINT = u32;
/// `INT`, 32 bits signed.
pub type INT = i32;
/// `ULONGLONG`, 64 bits unsigned.
pub type ULONGLONG = u64;
/// `LONGLONG`, 64 bits signed.
pub type LONGLONG = i64;
/// `UINT_PTR`: pointer-sized unsigned integer.
pub type UINT_PTR = usize;
/// `ULONG_PTR`: pointer-sized unsigned integer.
pub type ULONG_PTR = usize;
/// `SIZE_T`: pointer-sized unsigned integer.
pub type SIZE_T = usize;
/// `LPCBYTE`: pointer to read-only bytes.
pub type LPCBYTE = *const BYTE;
/// `LPBYTE`: pointer to bytes.
pub type LPBYTE = *mut BYTE;
/// `LPCGUID`: pointer to a read-only GUID (null allowed where documented).
pub type LPCGUID = *const crate::com::guid::GUID;
/// `HANDLE`: an opaque pointer-sized handle.
pub type HANDLE = *mut c_void;
/// `LPCWSTR`: pointer to a NUL-terminated UTF-16 string.
pub type LPCWSTR = *const WCHAR;
/// `LPWSTR`: pointer to a mutable UTF-16 buffer.
pub type LPWSTR = *mut WCHAR;
/// `REFIID`: an interface ID, passed by reference (never by value).
pub type REFIID = *const crate::com::guid::GUID;
/// `REFGUID`: a GUID, passed by reference (never by value).
pub type REFGUID = *const crate::com::guid::GUID;
/// `REFCLSID`: a class ID, passed by reference (never by value).
pub type REFCLSID = *const crate::com::guid::GUID;

/// A type that may be passed by value as a COM method argument.
///
/// Implemented for the integer and floating-point primitives, raw pointers to
/// sized types, `extern "system"` function pointers (bare or in an `Option`),
/// [`HRESULT`](crate::com::hresult::HRESULT) and the crate's `#[repr(transparent)]` ID and
/// token newtypes. [`com_interface!`](crate::com_interface) checks every
/// parameter type against it, so a `String`, a `Vec` or a `&str` in a
/// declaration is a compile-time error rather than a crash in the profiled
/// process. [`GUID`](crate::com::guid::GUID) is deliberately *not* an `AbiParam`: COM
/// passes GUIDs by pointer (`REFIID`).
///
/// # Safety
///
/// Implement it only for types with a stable, C-compatible representation
/// (`#[repr(C)]` or `#[repr(transparent)]` over such a type) whose by-value
/// passing matches what the native side expects.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be passed across a COM vtable",
    label = "not a COM ABI type",
    note = "COM methods take integers, floats, raw pointers, `extern \"system\"` function pointers, HRESULT and #[repr(C)]/#[repr(transparent)] types that implement `corprof::AbiParam`",
    note = "pass strings and buffers as a raw pointer plus a length (`*const u16, u32`), and GUIDs by pointer (`*const GUID`)",
    note = "for a reference write the raw pointer (`&mut T` -> `*mut T`, `&T` -> `*const T`); for `bool` write `BOOL` (an i32, `TRUE` or `FALSE`)"
)]
pub unsafe trait AbiParam: Copy + 'static {}

/// A type that may be returned by value from a COM method.
///
/// Only scalars are allowed: integers, floats, raw pointers, `()` and
/// [`HRESULT`](crate::com::hresult::HRESULT). Structs are not: the Windows x64 ABI returns
/// them from C++ member functions through a hidden pointer placed differently
/// from plain C functions, so a struct return silently corrupts the call.
/// Return structs through an out-pointer parameter instead.
///
/// # Safety
///
/// Implement it only for scalar types returned in registers by every
/// supported calling convention. [`AbiReturn::on_panic`] and [`AbiReturn::on_null_this`] must not panic.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be returned from a COM method",
    label = "not a COM return type",
    note = "COM methods return HRESULT, an integer, a float, a raw pointer or nothing; return structs and strings through an out-pointer parameter"
)]
pub unsafe trait AbiReturn: Sized + 'static {
    /// The value an exported method returns when its Rust implementation
    /// panicked (with the `std` feature). `HRESULT` returns
    /// [`E_FAIL`](crate::com::hresult::E_FAIL); every other type aborts the process, since no
    /// value of it can signal failure.
    fn on_panic() -> Self {
        crate::com::export::abort_on_panic()
    }

    /// The value an exported method returns when native code calls it with a
    /// null `this` pointer. `HRESULT` returns [`E_POINTER`](crate::com::hresult::E_POINTER);
    /// every other type aborts the process.
    fn on_null_this() -> Self {
        crate::com::export::abort_on_null_this()
    }
}

macro_rules! abi_scalars {
    ($($t:ty),*) => {$(
        // SAFETY: a primitive scalar, passed and returned in registers by
        // every calling convention.
        unsafe impl AbiParam for $t {}
        // SAFETY: as above; the default `on_panic` aborts and cannot panic.
        unsafe impl AbiReturn for $t {}
    )*};
}
abi_scalars!(u8, u16, u32, u64, usize, i8, i16, i32, i64, isize, f32, f64);

// SAFETY: a thin raw pointer is one machine word in every ABI.
unsafe impl<T: 'static> AbiParam for *const T {}
// SAFETY: as above.
unsafe impl<T: 'static> AbiParam for *mut T {}
// SAFETY: a thin raw pointer is returned in a register.
unsafe impl<T: 'static> AbiReturn for *const T {}
// SAFETY: as above.
unsafe impl<T: 'static> AbiReturn for *mut T {}
// SAFETY: "no return value" needs no register; `on_panic` aborts.
unsafe impl AbiReturn for () {}
// SAFETY: HRESULT is #[repr(transparent)] over i32.
unsafe impl AbiParam for crate::com::hresult::HRESULT {}
// SAFETY: HRESULT is #[repr(transparent)] over i32; `on_panic` returns a
// constant and cannot panic.
unsafe impl AbiReturn for crate::com::hresult::HRESULT {
    fn on_panic() -> Self {
        crate::com::hresult::E_FAIL
    }
    fn on_null_this() -> Self {
        crate::com::hresult::E_POINTER
    }
}

macro_rules! abi_fn_pointers {
    ($($arg:ident),*) => {
        // SAFETY: a function pointer is one machine word; `Option` of one uses
        // the null niche, so `None` is a null pointer on the native side.
        unsafe impl<R: 'static, $($arg: 'static),*> AbiParam for unsafe extern "system" fn($($arg),*) -> R {}
        // SAFETY: as above.
        unsafe impl<R: 'static, $($arg: 'static),*> AbiParam for Option<unsafe extern "system" fn($($arg),*) -> R> {}
        // SAFETY: as above.
        unsafe impl<R: 'static, $($arg: 'static),*> AbiParam for extern "system" fn($($arg),*) -> R {}
        // SAFETY: as above.
        unsafe impl<R: 'static, $($arg: 'static),*> AbiParam for Option<extern "system" fn($($arg),*) -> R> {}
    };
}
abi_fn_pointers!();
abi_fn_pointers!(A);
abi_fn_pointers!(A, B);
abi_fn_pointers!(A, B, C);
abi_fn_pointers!(A, B, C, D);
abi_fn_pointers!(A, B, C, D, E);
abi_fn_pointers!(A, B, C, D, E, F);
abi_fn_pointers!(A, B, C, D, E, F, G);
abi_fn_pointers!(A, B, C, D, E, F, G, H);
