//! [`HRESULT`]: COM's status code, and the standard codes.

/// A COM status code: negative values are failures, the rest are successes.
///
/// `S_FALSE` (1) is a *success* that means "yes, but no": [`HRESULT::ok`]
/// keeps it apart from `S_OK` by returning `Ok(())` for both while
/// [`HRESULT::is_false`] tells them apart. Known codes, the standard ones and
/// those of the profiling and metadata APIs, print by name with their
/// documented meaning (the table of names lives with the crate's code tables,
/// above the COM core, so this type knows nothing of those APIs):
///
/// ```
/// use corprof::{HRESULT, E_NOINTERFACE, S_FALSE};
/// assert_eq!(format!("{:?}", E_NOINTERFACE), "E_NOINTERFACE");
/// assert_eq!(format!("{:?}", HRESULT(0x1234)), "HRESULT(0x00001234)");
/// assert!(S_FALSE.ok().is_ok());
/// assert_eq!(E_NOINTERFACE.ok(), Err(E_NOINTERFACE));
/// ```
///
/// `Result<(), HRESULT>` converts back with `From`, so a thunk can be written
/// with `?` and still return an `HRESULT`:
///
/// ```
/// use corprof::{HRESULT, E_INVALIDARG};
/// fn checked(x: u32) -> Result<(), HRESULT> {
///     if x == 0 { Err(E_INVALIDARG)? }
///     Ok(())
/// }
/// assert_eq!(HRESULT::from(checked(0)), E_INVALIDARG);
/// assert_eq!(HRESULT::from(checked(1)), corprof::S_OK);
/// ```
#[repr(transparent)]
#[must_use = "an HRESULT may be a failure: check it (`.ok()?`) or say why it is ignored"]
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct HRESULT(pub i32);

/// The name and documented meaning of a known [`HRESULT`] code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HResultInfo {
    /// The code.
    pub code: HRESULT,
    /// Its symbolic name, as in the Windows SDK or the runtime's headers.
    pub name: &'static str,
    /// What it means, in one or two sentences.
    pub meaning: &'static str,
}

/// Declares `HRESULT` constants and a lookup table of their names and
/// meanings; the doc comment of each code is its meaning.
macro_rules! hresult_codes {
    ($(#[$table_attr:meta])* $table:ident; $( #[doc = $doc:literal] $name:ident = $value:literal; )*) => {
        $(
            #[doc = $doc]
            pub const $name: $crate::HRESULT = $crate::HRESULT($value as u32 as i32);
        )*
        $(#[$table_attr])*
        pub(crate) const $table: &[$crate::com::hresult::HResultInfo] = &[$(
            $crate::com::hresult::HResultInfo {
                code: $name,
                name: stringify!($name),
                meaning: $doc.trim_ascii(),
            }
        ),*];
    };
}
#[allow(unused_imports)]
pub(crate) use hresult_codes;

hresult_codes! {
    /// The standard COM codes.
    COMMON;
    /// Success.
    S_OK = 0x0000_0000;
    /// Success, with a negative or empty answer (for example: nothing more to enumerate).
    S_FALSE = 0x0000_0001;
    /// The method is not implemented.
    E_NOTIMPL = 0x8000_4001;
    /// The object does not support the requested interface.
    E_NOINTERFACE = 0x8000_4002;
    /// A required pointer argument is null or invalid.
    E_POINTER = 0x8000_4003;
    /// The operation was aborted.
    E_ABORT = 0x8000_4004;
    /// Unspecified failure.
    E_FAIL = 0x8000_4005;
    /// Catastrophic failure: the call was not expected in the object's current state.
    E_UNEXPECTED = 0x8000_FFFF;
    /// General access denied error.
    E_ACCESSDENIED = 0x8007_0005;
    /// The handle is invalid.
    E_HANDLE = 0x8007_0006;
    /// Not enough memory to complete the operation.
    E_OUTOFMEMORY = 0x8007_000E;
    /// One or more arguments are invalid.
    E_INVALIDARG = 0x8007_0057;
    /// The buffer passed is too small for the data (HRESULT_FROM_WIN32(ERROR_INSUFFICIENT_BUFFER)).
    E_NOT_SUFFICIENT_BUFFER = 0x8007_007A;
    /// The class does not support aggregation (a non-null outer object was passed).
    CLASS_E_NOAGGREGATION = 0x8004_0110;
    /// The class factory cannot supply the requested class (unknown CLSID).
    CLASS_E_CLASSNOTAVAILABLE = 0x8004_0111;
    /// The class is not registered.
    REGDB_E_CLASSNOTREG = 0x8004_0154;
}

impl HRESULT {
    /// `true` for success codes (zero or positive), including `S_FALSE`.
    #[inline]
    pub const fn is_ok(self) -> bool {
        self.0 >= 0
    }

    /// `true` for failure codes (negative).
    #[inline]
    pub const fn is_err(self) -> bool {
        self.0 < 0
    }

    /// `true` for exactly `S_FALSE`, the "success, but no" answer.
    #[inline]
    pub const fn is_false(self) -> bool {
        self.0 == S_FALSE.0
    }

    /// `Ok(())` for every success code (`S_OK`, `S_FALSE`, ...), `Err(self)`
    /// for failures.
    #[inline]
    pub const fn ok(self) -> Result<(), HRESULT> {
        if self.is_ok() {
            Ok(())
        } else {
            Err(self)
        }
    }

    /// `Ok(value)` on success, `Err(self)` on failure.
    #[inline]
    pub fn and_then<T>(self, value: impl FnOnce() -> T) -> Result<T, HRESULT> {
        self.ok().map(|()| value())
    }

    /// `HRESULT_FROM_WIN32`: wraps a Win32 error code in facility 7.
    #[inline]
    pub const fn from_win32(error: u32) -> HRESULT {
        if error as i32 <= 0 {
            HRESULT(error as i32)
        } else {
            HRESULT(((error & 0x0000_FFFF) | 0x8007_0000) as i32)
        }
    }

    /// The facility field (bits 16..=26).
    #[inline]
    pub const fn facility(self) -> u16 {
        ((self.0 as u32 >> 16) & 0x1FFF) as u16
    }

    /// The code field (low 16 bits).
    #[inline]
    pub const fn code(self) -> u16 {
        self.0 as u32 as u16
    }
}

impl core::error::Error for HRESULT {}

impl From<Result<(), HRESULT>> for HRESULT {
    /// `Ok(())` becomes `S_OK`, `Err(hr)` becomes `hr`.
    #[inline]
    fn from(result: Result<(), HRESULT>) -> HRESULT {
        match result {
            Ok(()) => S_OK,
            Err(hr) => hr,
        }
    }
}

impl From<HRESULT> for Result<(), HRESULT> {
    /// Same as [`HRESULT::ok`].
    #[inline]
    fn from(hr: HRESULT) -> Result<(), HRESULT> {
        hr.ok()
    }
}
