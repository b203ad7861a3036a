//! [`DiagnosticsClient`]: sends one command per connection and reads the
//! answer, within a time limit.

use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;
use core::time::Duration;
use std::path::{Path, PathBuf};

use super::commands::{AttachProfiler, ProcessInfo, ProcessInfo2};
use super::discovery;
use super::error::{Error, WireError};
use super::header::{encode_message, Command, Header, HEADER_SIZE};
use super::payload::{PayloadReader, PayloadWriter};
use crate::HRESULT;

/// The default limit on each command's connection, send and answer.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

/// A response: the server's command code (normally [`Command::OK`]) and its
/// payload.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Response {
    /// The response's header command.
    pub command: Command,
    /// Its payload (at most 65 515 bytes).
    pub payload: Vec<u8>,
}

/// A client of one runtime's diagnostics server.
///
/// ```no_run
/// use corprof::diagnostics::DiagnosticsClient;
///
/// let client = DiagnosticsClient::for_process(4242)?;
/// match client.process_info() {
///     Ok(info) => println!("{} {}", info.process_id, info.command_line),
///     Err(e) => eprintln!("{e}"), // .NET Core 3.1: the runtime does not know this command
/// }
/// # Ok::<(), corprof::diagnostics::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct DiagnosticsClient {
    endpoint: PathBuf,
    timeout: Duration,
}

impl DiagnosticsClient {
    /// A client for the runtime of process `pid`, found in the default
    /// directory ([`discovery::endpoint`]).
    pub fn for_process(pid: u32) -> Result<DiagnosticsClient, Error> {
        Ok(DiagnosticsClient::at(discovery::endpoint(pid)?))
    }

    /// A client for the endpoint at `endpoint` (a socket path or pipe
    /// name), with the [`DEFAULT_TIMEOUT`].
    pub fn at(endpoint: impl Into<PathBuf>) -> DiagnosticsClient {
        DiagnosticsClient {
            endpoint: endpoint.into(),
            timeout: DEFAULT_TIMEOUT,
        }
    }

    /// The same client with another limit per command.
    pub fn with_timeout(mut self, timeout: Duration) -> DiagnosticsClient {
        self.timeout = timeout;
        self
    }

    /// The endpoint this client talks to.
    pub fn endpoint(&self) -> &Path {
        &self.endpoint
    }

    /// The limit per command.
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// Sends `command` with `payload` and reads the response, all within the
    /// client's limit. An `Error` response becomes [`Error::Runtime`].
    pub fn send(&self, command: Command, payload: &[u8]) -> Result<Response, Error> {
        self.send_within(command, payload, self.timeout)
    }

    fn send_within(
        &self,
        command: Command,
        payload: &[u8],
        limit: Duration,
    ) -> Result<Response, Error> {
        let message = encode_message(command, payload)?;
        let mut connection = super::transport::Connection::open(&self.endpoint, limit)?;
        connection.write_all(&message, "sending the request")?;
        read_response(&mut connection)
    }

    /// `ProcessInfo`: the process id, command line, OS and architecture
    /// (.NET 5 and later; .NET Core 3.x answers
    /// [`DS_IPC_E_UNKNOWN_COMMAND`](super::DS_IPC_E_UNKNOWN_COMMAND)).
    pub fn process_info(&self) -> Result<ProcessInfo, Error> {
        let response = self.send(Command::PROCESS_INFO, &[])?;
        expect_ok(&response)?;
        Ok(ProcessInfo::decode(&response.payload)?)
    }

    /// `ProcessInfo2`: what [`process_info`](Self::process_info) answers,
    /// the entry point's assembly name and the runtime's product version
    /// (.NET 6 and later; earlier runtimes answer
    /// [`DS_IPC_E_UNKNOWN_COMMAND`](super::DS_IPC_E_UNKNOWN_COMMAND)).
    pub fn process_info_2(&self) -> Result<ProcessInfo2, Error> {
        let response = self.send(Command::PROCESS_INFO_2, &[])?;
        expect_ok(&response)?;
        Ok(ProcessInfo2::decode(&response.payload)?)
    }

    /// `ProcessEnvironment`: the target's environment variables, as
    /// `(name, value)` pairs in the runtime's order (.NET 5 and later). The
    /// runtime streams the block after its response; a block larger than
    /// [`MAX_ENVIRONMENT_BYTES`] is refused before it is read.
    pub fn process_environment(&self) -> Result<Vec<(String, String)>, Error> {
        let message = encode_message(Command::PROCESS_ENVIRONMENT, &[])?;
        let mut connection = super::transport::Connection::open(&self.endpoint, self.timeout)?;
        connection.write_all(&message, "sending the request")?;
        let response = read_response(&mut connection)?;
        expect_ok(&response)?;
        // uint incoming bytes, ushort reserved.
        let mut reader = PayloadReader::new(&response.payload);
        let incoming = reader.u32()? as usize;
        if reader.remaining() != 2 {
            return Err(WireError::TrailingBytes(reader.remaining()).into());
        }
        if incoming > MAX_ENVIRONMENT_BYTES {
            return Err(WireError::PayloadTooLarge(incoming).into());
        }
        let mut block = vec![0u8; incoming];
        connection.read_exact(&mut block, "reading the environment block")?;
        Ok(super::commands::decode_environment(&block)?)
    }

    /// `SetEnvironmentVariable`: sets `name` to `value` in the target
    /// process (.NET 6 and later), as `Environment.SetEnvironmentVariable`
    /// would; an empty `value` removes the variable on Windows and sets it
    /// empty elsewhere, as the runtime does.
    pub fn set_environment_variable(&self, name: &str, value: &str) -> Result<(), Error> {
        let mut payload = PayloadWriter::new();
        payload.string(name)?.string(value)?;
        let response = self.send(Command::SET_ENVIRONMENT_VARIABLE, payload.as_bytes())?;
        expect_ok(&response)
    }

    /// `ApplyStartupHook`: asks the runtime to run the startup hook in the
    /// assembly at `path` (a class `StartupHook` with a static
    /// `Initialize()`, as `DOTNET_STARTUP_HOOKS` names them) (.NET 8 and
    /// later). The runtime accepts it while it is suspended at startup (a
    /// diagnostic port with `suspend`), and runs the hook when it resumes,
    /// before `Main`.
    pub fn apply_startup_hook(&self, path: &str) -> Result<(), Error> {
        let mut payload = PayloadWriter::new();
        payload.string(path)?;
        let response = self.send(Command::APPLY_STARTUP_HOOK, payload.as_bytes())?;
        expect_ok(&response)
    }

    /// `ResumeRuntime`: lets a runtime started with
    /// `DOTNET_DefaultDiagnosticPortSuspend=1` (or a `suspend` diagnostic
    /// port) go on starting; a no-op for one that is running (.NET 5 and
    /// later).
    pub fn resume_runtime(&self) -> Result<(), Error> {
        let response = self.send(Command::RESUME_RUNTIME, &[])?;
        expect_ok(&response)
    }

    /// `AttachProfiler`: asks the runtime to load a profiler and call its
    /// `InitializeForAttach`. The runtime answers once the profiler is
    /// loaded (or has failed to), so the client waits for the
    /// request's `attach_timeout` plus its own limit. Returns the runtime's
    /// success code (`S_OK`); a failure is [`Error::Runtime`] with the
    /// runtime's HRESULT, for example
    /// [`CORPROF_E_PROFILER_ALREADY_ACTIVE`](crate::profiling::CORPROF_E_PROFILER_ALREADY_ACTIVE).
    pub fn attach_profiler(&self, request: &AttachProfiler<'_>) -> Result<HRESULT, Error> {
        let payload = request.encode()?;
        let limit = self.timeout.saturating_add(request.attach_timeout);
        let response = self.send_within(Command::ATTACH_PROFILER, &payload, limit)?;
        expect_ok(&response)?;
        let mut reader = PayloadReader::new(&response.payload);
        let hr = HRESULT(reader.i32()?);
        if hr.is_err() {
            return Err(Error::Runtime(hr));
        }
        Ok(hr)
    }
}

/// The most environment bytes [`DiagnosticsClient::process_environment`]
/// reads (16 MiB): a larger count from the target is an error, not an
/// allocation.
pub const MAX_ENVIRONMENT_BYTES: usize = 16 << 20;

/// Reads one response (header and payload) from `connection`; an `Error`
/// response becomes [`Error::Runtime`].
pub(super) fn read_response(
    connection: &mut super::transport::Connection,
) -> Result<Response, Error> {
    let mut header = [0u8; HEADER_SIZE];
    connection.read_exact(&mut header, "reading the response header")?;
    let header = Header::decode(&header)?;
    let mut payload = vec![0u8; header.payload_len()];
    connection.read_exact(&mut payload, "reading the response payload")?;
    if header.command == Command::ERROR {
        let mut reader = PayloadReader::new(&payload);
        return Err(Error::Runtime(HRESULT(reader.i32()?)));
    }
    Ok(Response {
        command: header.command,
        payload,
    })
}

fn expect_ok(response: &Response) -> Result<(), Error> {
    if response.command == Command::OK {
        Ok(())
    } else {
        Err(Error::UnexpectedResponse(response.command))
    }
}
