//! [`Error`]: an [`HRESULT`] with what was being done, the error type of the
//! safe API (`facade::Result<T>`), `no_std` with `alloc`.
//!
//! It sits beside the crate-level code tables (`codes.rs`), above the COM
//! core, and names nothing above the crate root's items.

use alloc::borrow::Cow;
use alloc::boxed::Box;
use alloc::string::String;
use alloc::sync::Arc;
use core::fmt;

use crate::{E_FAIL, HRESULT, S_OK};

/// A failure: the [`HRESULT`] the runtime (or the crate) answered, and what
/// was being done, the *context* (a runtime method's name such as
/// `"GetFunctionInfo2"`, or a sentence).
///
/// `?` converts into it from an `HRESULT`, from `std::io::Error` (feature
/// `std`) and from the crate's typed errors, so one function can read a
/// file, call the runtime and report both; the facade's adapter turns an
/// `Err` back into its [`code`](Error::code) for the runtime.
///
/// A static context costs nothing (no allocation): the facade names the
/// runtime method that failed this way. An owned context, a second context
/// or a [`source`](core::error::Error::source) allocates once, on the error
/// path only.
///
/// ```
/// use corprof::{Error, E_INVALIDARG};
///
/// fn parse(n: &str) -> Result<u32, Error> {
///     n.parse().map_err(|_| Error::new(E_INVALIDARG, "parsing a count"))
/// }
/// let err = parse("x").unwrap_err().context("reading SAMPLER_PERIOD_MS");
/// assert_eq!(err.code(), E_INVALIDARG);
/// assert_eq!(
///     err.to_string(),
///     "reading SAMPLER_PERIOD_MS: parsing a count: E_INVALIDARG (0x80070057): One or more arguments are invalid."
/// );
/// ```
///
/// `Display` prints the contexts, outermost first, then the code as
/// [`HRESULT`]'s `Display` does (name, number, meaning), or the source's
/// text and the number. Two errors are equal when their codes are (the
/// context and source are diagnostics).
#[derive(Clone)]
pub struct Error {
    code: HRESULT,
    /// The innermost static context ("" for none), kept inline.
    context: &'static str,
    /// An owned context (outer contexts included) and a source, when any.
    detail: Option<Arc<Detail>>,
}

struct Detail {
    /// Replaces `context` when set: every context, outermost first.
    message: Option<String>,
    source: Option<Box<dyn core::error::Error + Send + Sync>>,
}

impl Error {
    /// `code` while doing `context` (`Error::new(hr, "GetFunctionInfo2")`).
    /// A static string is kept without allocating.
    pub fn new(code: HRESULT, context: impl Into<Cow<'static, str>>) -> Error {
        Error::from(code).context(context)
    }

    /// An error of `code` caused by `source` (kept for
    /// [`source`](core::error::Error::source)), while doing `context`.
    pub fn with_source(
        code: HRESULT,
        context: impl Into<Cow<'static, str>>,
        source: impl core::error::Error + Send + Sync + 'static,
    ) -> Error {
        Error {
            code,
            context: "",
            detail: Some(Arc::new(Detail {
                message: None,
                source: Some(Box::new(source)),
            })),
        }
        .context(context)
    }

    /// The code: what the runtime gets back when this error ends a callback.
    /// Never a success code: an `Error` made from one holds `E_FAIL`.
    pub fn code(&self) -> HRESULT {
        self.code
    }

    /// The contexts, outermost first, joined by `": "` (empty for none).
    pub fn message(&self) -> &str {
        match self.detail.as_deref() {
            Some(Detail {
                message: Some(message),
                ..
            }) => message,
            _ => self.context,
        }
    }

    /// Adds what was being done around this error: `context` comes first in
    /// the message (`"loading config: GetModuleInfo2"`). The first static
    /// context is kept without allocating.
    pub fn context(mut self, context: impl Into<Cow<'static, str>>) -> Error {
        let context = context.into();
        if context.is_empty() {
            return self;
        }
        let inner = self.message();
        if inner.is_empty() && self.detail.is_none() {
            if let Cow::Borrowed(context) = context {
                self.context = context;
                return self;
            }
        }
        let message = if inner.is_empty() {
            String::from(context)
        } else {
            let mut message = String::from(context);
            message.push_str(": ");
            message.push_str(inner);
            message
        };
        let source = self
            .detail
            .take()
            .and_then(|detail| match Arc::try_unwrap(detail) {
                Ok(detail) => detail.source,
                // Shared with a clone: the clone keeps the source; this
                // error keeps its text.
                Err(_) => None,
            });
        self.context = "";
        self.detail = Some(Arc::new(Detail {
            message: Some(message),
            source,
        }));
        self
    }
}

impl From<HRESULT> for Error {
    /// The code alone, no context; a success code becomes `E_FAIL` (an
    /// `Error` always fails).
    #[inline]
    fn from(code: HRESULT) -> Error {
        Error {
            code: if code.is_err() { code } else { E_FAIL },
            context: "",
            detail: None,
        }
    }
}

impl From<Error> for HRESULT {
    #[inline]
    fn from(error: Error) -> HRESULT {
        error.code
    }
}

impl From<core::result::Result<(), Error>> for HRESULT {
    /// `Ok(())` becomes `S_OK`, `Err(e)` its code: what a callback returns
    /// to the runtime.
    #[inline]
    fn from(result: core::result::Result<(), Error>) -> HRESULT {
        match result {
            Ok(()) => S_OK,
            Err(error) => error.code,
        }
    }
}

impl HRESULT {
    /// `Ok(())` for a success code, else an [`Error`] of this code that says
    /// `what` failed (a static string: no allocation):
    /// `unsafe { info.GetFunctionInfo2(..) }.ok_with("GetFunctionInfo2")?`.
    #[inline]
    pub fn ok_with(self, what: &'static str) -> core::result::Result<(), Error> {
        if self.is_ok() {
            Ok(())
        } else {
            Err(Error {
                code: self,
                context: what,
                detail: None,
            })
        }
    }
}

impl PartialEq for Error {
    /// Errors compare by [`code`](Error::code), as the runtime sees them:
    /// the context is a diagnostic, so `Err(E_INVALIDARG.into())` matches
    /// whatever call answered `E_INVALIDARG`.
    fn eq(&self, other: &Error) -> bool {
        self.code == other.code
    }
}

impl Eq for Error {}

impl PartialEq<HRESULT> for Error {
    /// Whether this error's code is `code`, whatever its context.
    fn eq(&self, code: &HRESULT) -> bool {
        self.code == *code
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut debug = f.debug_struct("Error");
        debug.field("code", &self.code);
        if !self.message().is_empty() {
            debug.field("message", &self.message());
        }
        if let Some(source) = self.detail.as_deref().and_then(|d| d.source.as_deref()) {
            debug.field("source", &source);
        }
        debug.finish()
    }
}

impl fmt::Display for Error {
    /// The contexts, then the source when there is one and the code, as
    /// [`HRESULT`]'s `Display` prints it otherwise:
    /// `"GetFunctionInfo2: E_INVALIDARG (0x80070057): One or more arguments are invalid."`,
    /// `"writing profile.pb.gz: no such file (0x80070002)"`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let message = self.message();
        if !message.is_empty() {
            write!(f, "{message}: ")?;
        }
        match self.detail.as_deref().and_then(|d| d.source.as_deref()) {
            Some(source) => write!(f, "{source} (0x{:08X})", self.code.0 as u32),
            None => write!(f, "{}", self.code),
        }
    }
}

impl core::error::Error for Error {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        let source = self.detail.as_deref()?.source.as_deref()?;
        Some(source)
    }
}

#[cfg(feature = "std")]
impl From<std::io::Error> for Error {
    /// Keeps the I/O error as the source (and its text in the message). The
    /// code: `HRESULT_FROM_WIN32` of the OS error on Windows; elsewhere the
    /// closest standard code for its kind (`NotFound`:
    /// `HRESULT_FROM_WIN32(ERROR_FILE_NOT_FOUND)`, `PermissionDenied`:
    /// `E_ACCESSDENIED`, `InvalidInput`/`InvalidData`: `E_INVALIDARG`,
    /// `OutOfMemory`: `E_OUTOFMEMORY`), else `E_FAIL`.
    fn from(error: std::io::Error) -> Error {
        let code = io_code(&error);
        Error {
            code,
            context: "",
            detail: Some(Arc::new(Detail {
                message: None,
                source: Some(Box::new(error)),
            })),
        }
    }
}

#[cfg(feature = "std")]
fn io_code(error: &std::io::Error) -> HRESULT {
    use std::io::ErrorKind;
    #[cfg(windows)]
    if let Some(os) = error.raw_os_error() {
        return HRESULT::from_win32(os as u32);
    }
    match error.kind() {
        // ERROR_FILE_NOT_FOUND (winerror.h: 2).
        ErrorKind::NotFound => HRESULT::from_win32(2),
        ErrorKind::PermissionDenied => crate::E_ACCESSDENIED,
        ErrorKind::InvalidInput | ErrorKind::InvalidData => crate::E_INVALIDARG,
        ErrorKind::OutOfMemory => crate::E_OUTOFMEMORY,
        _ => E_FAIL,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{E_INVALIDARG, E_NOINTERFACE, S_FALSE};
    use alloc::format;
    use alloc::string::ToString;

    #[test]
    fn a_static_context_is_kept_inline_and_printed_like_windows_result() {
        let err = Error::new(E_NOINTERFACE, "QueryInterface");
        assert!(err.detail.is_none(), "a static context must not allocate");
        assert_eq!(err.code(), E_NOINTERFACE);
        assert_eq!(err.message(), "QueryInterface");
        assert_eq!(
            err.to_string(),
            "QueryInterface: E_NOINTERFACE (0x80004002): The object does not support the requested interface."
        );
    }

    #[test]
    fn contexts_nest_outermost_first() {
        let err = E_INVALIDARG
            .ok_with("GetFunctionInfo2")
            .unwrap_err()
            .context(format!("function {}", 7))
            .context("startup");
        assert_eq!(err.message(), "startup: function 7: GetFunctionInfo2");
        assert_eq!(err.code(), E_INVALIDARG);
    }

    #[test]
    fn unknown_codes_print_their_number() {
        assert_eq!(
            Error::from(HRESULT(0x8123_4567u32 as i32)).to_string(),
            "HRESULT 0x81234567"
        );
        assert_eq!(
            Error::new(HRESULT(0x8123_4567u32 as i32), "Frob").to_string(),
            "Frob: HRESULT 0x81234567"
        );
    }

    #[test]
    fn success_codes_do_not_make_successful_errors() {
        assert_eq!(Error::from(S_OK).code(), E_FAIL);
        assert_eq!(Error::from(S_FALSE).code(), E_FAIL);
        assert_eq!(S_FALSE.ok_with("x"), Ok(()));
        assert_eq!(
            HRESULT::from(Err::<(), _>(Error::from(E_INVALIDARG))),
            E_INVALIDARG
        );
        assert_eq!(HRESULT::from(Ok::<(), Error>(())), S_OK);
    }

    #[test]
    fn equality_is_by_code() {
        assert_eq!(Error::new(E_FAIL, "a"), Error::new(E_FAIL, "b"));
        assert_ne!(Error::new(E_FAIL, "a"), Error::new(E_INVALIDARG, "a"));
        assert_eq!(Error::new(E_FAIL, "a"), E_FAIL);
        assert_ne!(Error::new(E_FAIL, "a"), E_INVALIDARG);
    }

    #[cfg(feature = "std")]
    #[test]
    fn io_errors_keep_their_text_and_source_and_map_their_kind() {
        use core::error::Error as _;
        let io = std::io::Error::new(std::io::ErrorKind::NotFound, "no such file: x.pb");
        let err = Error::from(io).context("writing profile.pb.gz");
        assert_eq!(err.code(), HRESULT(0x8007_0002u32 as i32));
        assert_eq!(
            err.to_string(),
            "writing profile.pb.gz: no such file: x.pb (0x80070002)"
        );
        assert_eq!(err.source().unwrap().to_string(), "no such file: x.pb");
        let other = Error::from(std::io::Error::other("disk on fire"));
        assert_eq!(other.code(), E_FAIL);
        assert_eq!(other.to_string(), "disk on fire (0x80004005)");
        assert_eq!(
            Error::new(E_FAIL, "x").to_string(),
            "x: E_FAIL (0x80004005): Unspecified failure."
        );
    }
}
