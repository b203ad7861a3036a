//! A client of the .NET runtime's diagnostics IPC channel (std only, no
//! dependencies): find the runtimes of this machine, ask one about its
//! process, and attach a profiler to it while it runs.
//!
//! Since .NET Core 3.0 every runtime listens on a diagnostics endpoint (a
//! Unix domain socket under the temporary directory, a named pipe on
//! Windows; see [`discovery`]). A client connects, sends one message (a
//! 20-byte [`Header`] and a payload written with [`PayloadWriter`]), reads one message back and the
//! connection ends. The commands implemented here:
//!
//! | command | runtimes that accept it |
//! | --- | --- |
//! | [`AttachProfiler`](DiagnosticsClient::attach_profiler) | .NET Core 3.0 and later |
//! | [`ProcessInfo`](DiagnosticsClient::process_info) | .NET 5 and later |
//! | [`ResumeRuntime`](DiagnosticsClient::resume_runtime) | .NET 5 and later |
//! | [`CollectTracing`/`CollectTracing2`-`5`](DiagnosticsClient::start_session), [`StopTracing`](DiagnosticsClient::stop_tracing): EventPipe sessions, their stream read with `corprof::nettrace` | .NET Core 3.0 and later (`CollectTracing3` and `4`: .NET 9; `5`: .NET 10) |
//!
//! Older runtimes answer the newer commands with
//! [`DS_IPC_E_UNKNOWN_COMMAND`]. Every read and write has a deadline
//! ([`DiagnosticsClient::with_timeout`]) and every length read from the wire
//! is checked against the message it came in, so a stuck or misbehaving
//! server gives an [`Error`], never a hang or a panic.
//!
//! ```no_run
//! use std::time::Duration;
//! use corprof::diagnostics::{discovery, AttachProfiler, DiagnosticsClient};
//! use corprof::GUID;
//!
//! for process in discovery::list()? {
//!     println!("{} {}", process.pid, process.endpoint.display());
//! }
//! let client = DiagnosticsClient::for_process(4242)?;
//! client.attach_profiler(&AttachProfiler {
//!     attach_timeout: Duration::from_secs(5),
//!     clsid: GUID::parse("DF63A541-5A33-4611-8829-F4E495985EE3"),
//!     profiler_path: "/opt/profilers/libmy_profiler.so",
//!     client_data: b"verbose",
//! })?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! The protocol is transcribed from the runtime's documentation
//! (dotnet/diagnostics `documentation/design-docs/ipc-protocol.md`) and
//! sources (dotnet/runtime `src/native/eventpipe/ds-protocol.*`,
//! `ds-profiler-protocol.*`, `ds-process-protocol.*`; for .NET Core 3.1,
//! dotnet/coreclr `src/vm/diagnosticserver.cpp`, `diagnosticsprotocol.h`,
//! `profilerdiagnosticprotocolhelper.cpp`). See `docs/attach.md`.

mod client;
mod commands;
pub mod discovery;
mod error;
mod header;
mod payload;
mod session;
#[cfg(windows)]
mod toolhelp;
mod transport;

pub use client::{DiagnosticsClient, Response, DEFAULT_TIMEOUT, MAX_ENVIRONMENT_BYTES};
pub use commands::{
    decode_environment, encode_environment, AttachProfiler, ProcessInfo, ProcessInfo2,
};
pub use error::{
    describe_hresult, Error, WireError, CORDIAGIPC_E_UNKNOWN_ERROR, DS_IPC_E_BAD_ENCODING,
    DS_IPC_E_NOTSUPPORTED, DS_IPC_E_NOT_YET_AVAILABLE, DS_IPC_E_UNKNOWN_COMMAND,
    DS_IPC_E_UNKNOWN_MAGIC,
};
pub use header::{
    encode_message, Command, Header, HEADER_SIZE, MAGIC, MAX_MESSAGE_SIZE, MAX_PAYLOAD_SIZE,
};
pub use payload::{PayloadReader, PayloadWriter};
pub use session::{
    EventPipeSession, Provider, Rundown, SessionConfig, SessionStopper, DEFAULT_RUNDOWN_KEYWORDS,
};
pub use transport::Connection;
