//! What can go wrong talking to a runtime: malformed bytes ([`WireError`])
//! and everything else ([`Error`]), each with a message in words.

use alloc::string::String;
use core::fmt;
use core::time::Duration;
use std::io;
use std::path::PathBuf;

use super::header::Command;
use crate::profiling::{
    CORPROF_E_PROFILER_ALREADY_ACTIVE, CORPROF_E_PROFILER_CANCEL_ACTIVATION,
    CORPROF_E_PROFILER_NOT_ATTACHABLE, CORPROF_E_RUNTIME_UNINITIALIZED,
    CORPROF_E_TIMEOUT_WAITING_FOR_CONCURRENT_GC,
};
use crate::{CLASS_E_CLASSNOTAVAILABLE, HRESULT, REGDB_E_CLASSNOTREG};

/// `DS_IPC_E_BAD_ENCODING` (`CORDIAGIPC_E_BAD_ENCODING`): the server could
/// not decode the header or payload.
pub const DS_IPC_E_BAD_ENCODING: HRESULT = HRESULT(0x8013_1384_u32 as i32);
/// `DS_IPC_E_UNKNOWN_COMMAND`: the server does not know this command set or
/// id (for example `ProcessInfo` sent to .NET Core 3.1).
pub const DS_IPC_E_UNKNOWN_COMMAND: HRESULT = HRESULT(0x8013_1385_u32 as i32);
/// `DS_IPC_E_UNKNOWN_MAGIC`: the header's magic is not `DOTNET_IPC_V1`.
pub const DS_IPC_E_UNKNOWN_MAGIC: HRESULT = HRESULT(0x8013_1386_u32 as i32);
/// `CORDIAGIPC_E_UNKNOWN_ERROR` (.NET Core 3.x).
pub const CORDIAGIPC_E_UNKNOWN_ERROR: HRESULT = HRESULT(0x8013_1387_u32 as i32);
/// `DS_IPC_E_NOTSUPPORTED`.
pub const DS_IPC_E_NOTSUPPORTED: HRESULT = HRESULT(0x8013_1515_u32 as i32);
/// `DS_IPC_E_NOT_YET_AVAILABLE`.
pub const DS_IPC_E_NOT_YET_AVAILABLE: HRESULT = HRESULT(0x8013_135B_u32 as i32);

/// `HRESULT_FROM_WIN32(ERROR_MOD_NOT_FOUND)`: what CoreCLR answers when the
/// profiler library cannot be loaded (measured on 3.1 with a path that does
/// not exist).
const ERROR_MOD_NOT_FOUND: HRESULT = HRESULT::from_win32(126);

/// Bytes that do not follow the protocol.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum WireError {
    /// The header does not start with `"DOTNET_IPC_V1\0"`.
    BadMagic([u8; 14]),
    /// The header's size is smaller than the header itself.
    SizeTooSmall(u16),
    /// A field or a counted string/array runs past the end of the payload.
    Truncated {
        /// Where in the payload the field starts.
        offset: usize,
        /// How many bytes it needs.
        needed: usize,
        /// How many were left.
        available: usize,
    },
    /// A string's last UTF-16 unit is not the NUL the protocol requires.
    MissingNul {
        /// Where in the payload the string starts.
        offset: usize,
    },
    /// A string is not valid UTF-16.
    InvalidUtf16 {
        /// Where in the payload the string starts.
        offset: usize,
    },
    /// A string to send contains a NUL, which would cut it short.
    NulInString,
    /// Bytes left over after the last field.
    TrailingBytes(usize),
    /// A message would exceed 65 535 bytes (the header's `u16` size).
    PayloadTooLarge(usize),
}

impl fmt::Display for WireError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WireError::BadMagic(magic) => {
                write!(f, "the header does not start with DOTNET_IPC_V1 (got {magic:02X?})")
            }
            WireError::SizeTooSmall(size) => {
                write!(f, "the header's size {size} is smaller than the 20-byte header")
            }
            WireError::Truncated {
                offset,
                needed,
                available,
            } => write!(
                f,
                "a field at payload offset {offset} needs {needed} bytes but only {available} are left"
            ),
            WireError::MissingNul { offset } => {
                write!(f, "the string at payload offset {offset} does not end with NUL")
            }
            WireError::InvalidUtf16 { offset } => {
                write!(f, "the string at payload offset {offset} is not valid UTF-16")
            }
            WireError::NulInString => f.write_str("a string to send contains a NUL character"),
            WireError::TrailingBytes(n) => write!(f, "{n} unexpected bytes after the payload"),
            WireError::PayloadTooLarge(n) => write!(
                f,
                "a payload of {n} bytes does not fit in one message (65 515 bytes at most)"
            ),
        }
    }
}

impl std::error::Error for WireError {}

/// Why a diagnostics command failed.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// No process has this id.
    NoSuchProcess(u32),
    /// The process exists but no runtime diagnostics endpoint was found for
    /// it: not a .NET process, a runtime older than .NET Core 3.0, one
    /// started with `DOTNET_EnableDiagnostics=0`, or one with another
    /// `TMPDIR`.
    NoRuntime {
        /// The process.
        pid: u32,
        /// Where the endpoint was looked for.
        looked_in: PathBuf,
    },
    /// Connecting to the endpoint failed (`ECONNREFUSED`: nothing listens,
    /// the runtime is gone and left its socket behind; `EACCES`: another
    /// user's process).
    Connect {
        /// The endpoint.
        endpoint: PathBuf,
        /// The system's error.
        source: io::Error,
    },
    /// The runtime did not answer in time.
    TimedOut {
        /// What was being waited for.
        during: &'static str,
        /// The time limit that passed.
        after: Duration,
    },
    /// The connection closed before the whole response arrived (the process
    /// exited, or the server dropped the connection).
    Closed {
        /// What was being read.
        during: &'static str,
        /// How many bytes of it had arrived.
        received: usize,
    },
    /// Reading or writing failed.
    Io {
        /// What was being done.
        during: &'static str,
        /// The system's error.
        source: io::Error,
    },
    /// The response is not valid protocol.
    Wire(WireError),
    /// The server answered with a response this command does not expect.
    UnexpectedResponse(Command),
    /// The runtime answered with an error (an `Error` response, or a failing
    /// HRESULT in an `OK` one).
    Runtime(HRESULT),
}

impl Error {
    /// The runtime's HRESULT, when it answered with one.
    pub fn hresult(&self) -> Option<HRESULT> {
        match self {
            Error::Runtime(hr) => Some(*hr),
            _ => None,
        }
    }

    /// `true` when the command timed out on this side.
    pub fn is_timeout(&self) -> bool {
        matches!(self, Error::TimedOut { .. })
    }
}

/// A sentence for the HRESULTs a diagnostics server answers, `None` for
/// others.
pub fn describe_hresult(hr: HRESULT) -> Option<&'static str> {
    Some(match hr {
        DS_IPC_E_BAD_ENCODING => "the runtime could not decode the request",
        DS_IPC_E_UNKNOWN_COMMAND => {
            "the runtime does not know this command (an older runtime: ProcessInfo and ResumeRuntime need .NET 5, CollectTracing3 and CollectTracing4 .NET 9)"
        }
        DS_IPC_E_UNKNOWN_MAGIC => "the runtime does not speak DOTNET_IPC_V1",
        CORDIAGIPC_E_UNKNOWN_ERROR => "unknown error in the runtime's diagnostics server",
        DS_IPC_E_NOTSUPPORTED => "the runtime does not support this command",
        DS_IPC_E_NOT_YET_AVAILABLE => "the runtime cannot do this yet",
        CORPROF_E_PROFILER_ALREADY_ACTIVE => "a profiler is already loaded in this process",
        CORPROF_E_PROFILER_NOT_ATTACHABLE => {
            "the profiler does not support attaching (InitializeForAttach failed with E_NOTIMPL)"
        }
        CORPROF_E_PROFILER_CANCEL_ACTIVATION => {
            "the profiler declined to load (its InitializeForAttach failed)"
        }
        CORPROF_E_RUNTIME_UNINITIALIZED => "the runtime is not initialized yet, or shutting down",
        CORPROF_E_TIMEOUT_WAITING_FOR_CONCURRENT_GC => {
            "timed out waiting for a concurrent GC to finish before attaching"
        }
        REGDB_E_CLASSNOTREG | CLASS_E_CLASSNOTAVAILABLE => {
            "the profiler library does not offer this CLSID"
        }
        ERROR_MOD_NOT_FOUND => {
            "the runtime could not load the profiler library (no such file, not a library for this platform, or a dependency is missing)"
        }
        _ => return None,
    })
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::NoSuchProcess(pid) => write!(f, "no such process: {pid}"),
            Error::NoRuntime { pid, looked_in } => write!(
                f,
                "no .NET runtime is listening in process {pid} (no diagnostics endpoint in {})",
                looked_in.display()
            ),
            Error::Connect { endpoint, source } => {
                let why = match source.kind() {
                    io::ErrorKind::ConnectionRefused => {
                        " (nothing listens: the runtime has exited)".into()
                    }
                    io::ErrorKind::PermissionDenied => {
                        " (permission denied: the process belongs to another user)".into()
                    }
                    _ => String::new(),
                };
                write!(f, "cannot connect to {}: {source}{why}", endpoint.display())
            }
            Error::TimedOut { during, after } => {
                write!(f, "timed out after {after:?} {during}")
            }
            Error::Closed { during, received } => write!(
                f,
                "the runtime closed the connection {during} ({received} bytes received; did the process exit?)"
            ),
            Error::Io { during, source } => write!(f, "I/O error {during}: {source}"),
            Error::Wire(error) => write!(f, "malformed response: {error}"),
            Error::UnexpectedResponse(command) => write!(f, "unexpected response {command}"),
            Error::Runtime(hr) => match describe_hresult(*hr) {
                Some(words) => write!(f, "{words} (HRESULT 0x{:08X})", hr.0 as u32),
                None => write!(f, "the runtime answered {hr}"),
            },
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Connect { source, .. } | Error::Io { source, .. } => Some(source),
            Error::Wire(error) => Some(error),
            Error::Runtime(hr) => Some(hr),
            _ => None,
        }
    }
}

impl From<WireError> for Error {
    fn from(error: WireError) -> Error {
        Error::Wire(error)
    }
}
