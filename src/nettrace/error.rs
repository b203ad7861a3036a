//! What can be wrong with a stream, and where.

use alloc::string::String;
use core::fmt;

/// Why a stream could not be read, and where (`offset`, in bytes from the
/// start of the stream).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    /// The byte offset in the stream where the problem is.
    pub offset: u64,
    /// What the problem is.
    pub kind: ErrorKind,
}

/// What is wrong with a stream.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The stream does not start with `Nettrace`.
    BadMagic,
    /// The stream ended in the middle of something that `needed` bytes.
    Truncated {
        /// How many bytes the unfinished part needs.
        needed: u64,
    },
    /// A format version this reader does not read (`what` names the part:
    /// `"stream"`, `"Trace"`, `"EventBlock"`, ...).
    UnsupportedVersion {
        /// The part whose version it is.
        what: &'static str,
        /// Its version.
        version: u32,
    },
    /// A serialization tag other than the one the format requires here.
    BadTag {
        /// The tag the format requires.
        expected: u8,
        /// The byte found.
        found: u8,
    },
    /// An object type this reader does not know.
    UnknownObject(String),
    /// A block larger than [`MAX_BLOCK_SIZE`](super::MAX_BLOCK_SIZE).
    BlockTooLarge(u64),
    /// An event refers to a metadata id no metadata blob defined.
    UnknownMetadata(u32),
    /// A string is not valid UTF-8 or UTF-16, or has no terminator.
    BadString,
    /// Something else that does not follow the format (named).
    Malformed(&'static str),
    /// Reading the source failed (the system's message).
    Io(String),
}

impl Error {
    pub(crate) fn new(offset: u64, kind: ErrorKind) -> Error {
        Error { offset, kind }
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ErrorKind::BadMagic => f.write_str("not a nettrace stream (no `Nettrace` magic)"),
            ErrorKind::Truncated { needed } => {
                write!(f, "the stream ends inside a part that needs {needed} bytes")
            }
            ErrorKind::UnsupportedVersion { what, version } => write!(
                f,
                "{what} version {version} is not supported (this reader reads nettrace versions 4 and 5)"
            ),
            ErrorKind::BadTag { expected, found } => {
                write!(f, "expected serialization tag {expected}, found {found}")
            }
            ErrorKind::UnknownObject(name) => write!(f, "unknown object type `{name}`"),
            ErrorKind::BlockTooLarge(size) => write!(f, "a block of {size} bytes is too large"),
            ErrorKind::UnknownMetadata(id) => {
                write!(f, "an event refers to metadata id {id}, which no metadata blob defines")
            }
            ErrorKind::BadString => f.write_str("a string is malformed"),
            ErrorKind::Malformed(what) => f.write_str(what),
            ErrorKind::Io(message) => write!(f, "reading the stream failed: {message}"),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "nettrace: at byte {}: {}", self.offset, self.kind)
    }
}

#[cfg(feature = "std")]
impl std::error::Error for Error {}
