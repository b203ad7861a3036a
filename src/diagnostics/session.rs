//! EventPipe sessions over the diagnostics IPC channel: `CollectTracing`
//! (1 to 5) and `StopTracing`.
//!
//! | command | code | request payload (after `u32` buffer size in MB, `u32` format) | runtimes |
//! | --- | --- | --- | --- |
//! | `CollectTracing` | `0x0202` | providers (rundown always on) | .NET Core 3.0 and later |
//! | `CollectTracing2` | `0x0203` | `bool` rundown, providers | .NET Core 3.1 and later (3.1.3 measured) |
//! | `CollectTracing3` | `0x0204` | `bool` rundown, `bool` stacks, providers | .NET 9 and later (8.0.34 answers `DS_IPC_E_UNKNOWN_COMMAND`) |
//! | `CollectTracing4` | `0x0205` | `u64` rundown keywords, `bool` stacks, providers | .NET 9 and later (likewise) |
//! | `CollectTracing5` | `0x0206` | `u32` output format (0, a stream) first; then as `CollectTracing4`, each provider followed by its event filter (`bool` enable, `array<uint>` event ids) | .NET 10 and later (9.0.23 answers `DS_IPC_E_UNKNOWN_COMMAND`) |
//! | `StopTracing` | `0x0201` | `u64` session id | .NET Core 3.0 and later |
//!
//! Providers: `u32` count, then per provider `u64` keywords, `u32` level,
//! `string` name, `string` filter data (`key=value;key=value`, or a null
//! string). The format is 1 (nettrace). The OK response carries the `u64`
//! session id; the trace stream then flows on the same connection until
//! `StopTracing` (on a connection of its own) ends it: the runtime writes
//! the rundown, if asked for, and the stream's end marker, and closes.
//!
//! Transcribed from dotnet/runtime `src/native/eventpipe/
//! ds-eventpipe-protocol.c` (the payload parsers), `ds-types.h` and
//! dotnet/diagnostics `documentation/design-docs/ipc-protocol.md` (the
//! command ids, the default rundown keywords). Like Microsoft's client, the
//! session uses the oldest command that can say what is asked for, and falls
//! back to `CollectTracing` when a runtime does not know `CollectTracing2`
//! and the default rundown is wanted (.NET Core 3.1).

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::time::Duration;
use std::io;

use super::client::DiagnosticsClient;
use super::error::{Error, WireError, DS_IPC_E_UNKNOWN_COMMAND};
use super::header::{encode_message, Command};
use super::payload::{PayloadReader, PayloadWriter};
use super::transport::Connection;

/// The rundown keywords the runtime uses by default (and
/// `CollectTracing`/`CollectTracing2` always): loader, JIT, NGen, end
/// rundown, IL-to-native maps, thread transfer.
pub const DEFAULT_RUNDOWN_KEYWORDS: u64 = 0x8002_0139;

/// The nettrace serialization format's number in `CollectTracing`.
const FORMAT_NETTRACE: u32 = 1;

/// One provider to enable.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Provider {
    /// Its name (`Microsoft-Windows-DotNETRuntime`, an EventSource's name).
    pub name: String,
    /// The keywords to enable (all bits: everything).
    pub keywords: u64,
    /// The level: 0 always, 1 critical, 2 error, 3 warning, 4
    /// informational, 5 verbose.
    pub level: u32,
    /// `key=value` arguments for the provider (EventSource filter data).
    pub arguments: Vec<(String, String)>,
    /// Only these event ids (`Some((true, ids))`), or all but these
    /// (`Some((false, ids))`): needs `CollectTracing5`, .NET 10 and later.
    pub event_filter: Option<(bool, Vec<u32>)>,
}

impl Provider {
    /// `name` with every keyword at the verbose level.
    pub fn new(name: &str) -> Provider {
        Provider {
            name: name.to_string(),
            keywords: u64::MAX,
            level: 5,
            arguments: Vec::new(),
            event_filter: None,
        }
    }

    /// The same provider enabling only the events `ids` (`CollectTracing5`).
    pub fn only_events(mut self, ids: &[u32]) -> Provider {
        self.event_filter = Some((true, ids.to_vec()));
        self
    }

    /// The same provider enabling all its events but `ids`
    /// (`CollectTracing5`).
    pub fn except_events(mut self, ids: &[u32]) -> Provider {
        self.event_filter = Some((false, ids.to_vec()));
        self
    }

    /// The same provider with `keywords`.
    pub fn keywords(mut self, keywords: u64) -> Provider {
        self.keywords = keywords;
        self
    }

    /// The same provider at `level`.
    pub fn level(mut self, level: u32) -> Provider {
        self.level = level;
        self
    }

    /// The same provider with one more `key=value` argument.
    pub fn argument(mut self, key: &str, value: &str) -> Provider {
        self.arguments.push((key.to_string(), value.to_string()));
        self
    }

    /// Parses `dotnet-trace`'s provider syntax:
    /// `Name[:Keywords[:Level[:key=value;key=value]]]`, keywords in hex
    /// (`0x` optional; empty or `*` for all), level a number 0-5 or a name
    /// (`Verbose`, `Informational`, ...).
    pub fn parse(spec: &str) -> Result<Provider, String> {
        let mut parts = spec.splitn(4, ':');
        let name = parts.next().unwrap_or("").trim();
        if name.is_empty() {
            return Err(format!("`{spec}`: the provider has no name"));
        }
        let mut provider = Provider::new(name);
        if let Some(keywords) = parts.next().map(str::trim) {
            if !keywords.is_empty() && keywords != "*" {
                let hex = keywords
                    .strip_prefix("0x")
                    .or_else(|| keywords.strip_prefix("0X"))
                    .unwrap_or(keywords);
                provider.keywords = u64::from_str_radix(hex, 16)
                    .map_err(|_| format!("`{spec}`: keywords `{keywords}` are not hexadecimal"))?;
            }
        }
        if let Some(level) = parts.next().map(str::trim) {
            if !level.is_empty() {
                provider.level = match level.to_ascii_lowercase().as_str() {
                    "logalways" => 0,
                    "critical" => 1,
                    "error" => 2,
                    "warning" => 3,
                    "informational" => 4,
                    "verbose" => 5,
                    n => n
                        .parse()
                        .ok()
                        .filter(|l| *l <= 5)
                        .ok_or_else(|| format!("`{spec}`: level `{level}` is not 0-5"))?,
                };
            }
        }
        if let Some(arguments) = parts.next() {
            for pair in arguments.split(';').filter(|p| !p.is_empty()) {
                let (k, v) = pair
                    .split_once('=')
                    .ok_or_else(|| format!("`{spec}`: argument `{pair}` is not key=value"))?;
                provider.arguments.push((k.to_string(), v.to_string()));
            }
        }
        Ok(provider)
    }

    /// The filter data the runtime gets: `key=value;key=value`, `None`
    /// without arguments.
    pub fn filter_data(&self) -> Option<String> {
        if self.arguments.is_empty() {
            return None;
        }
        let pairs: Vec<String> = self
            .arguments
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        Some(pairs.join(";"))
    }
}

/// Which rundown the runtime sends when the session stops.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rundown {
    /// None.
    None,
    /// The default: every loaded method and module ([`DEFAULT_RUNDOWN_KEYWORDS`]).
    Default,
    /// The rundown provider with these keywords (`CollectTracing4`,
    /// .NET 9 and later).
    Keywords(u64),
}

/// What a session collects.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SessionConfig {
    /// The providers.
    pub providers: Vec<Provider>,
    /// The runtime's buffer for the session, in MB (events are dropped when
    /// it is full).
    pub buffer_size_mb: u32,
    /// The rundown at stop.
    pub rundown: Rundown,
    /// Whether events carry stacks (`false` needs `CollectTracing3`, .NET 9
    /// and later).
    pub stacks: bool,
}

impl SessionConfig {
    /// `providers`, a 256 MB buffer, the default rundown, with stacks.
    pub fn new(providers: Vec<Provider>) -> SessionConfig {
        SessionConfig {
            providers,
            buffer_size_mb: 256,
            rundown: Rundown::Default,
            stacks: true,
        }
    }

    /// The oldest command that can say what this asks for: `CollectTracing5`
    /// for event filters, `4` for chosen rundown keywords, `3` without
    /// stacks, `2` otherwise.
    pub fn command(&self) -> Command {
        if self.providers.iter().any(|p| p.event_filter.is_some()) {
            return Command::COLLECT_TRACING_5;
        }
        match self.rundown {
            Rundown::Keywords(k) if k != DEFAULT_RUNDOWN_KEYWORDS && k != 0 => {
                Command::COLLECT_TRACING_4
            }
            _ if !self.stacks => Command::COLLECT_TRACING_3,
            _ => Command::COLLECT_TRACING_2,
        }
    }

    /// The payload of `command` (one of `CollectTracing` to
    /// `CollectTracing5`) for this configuration.
    pub fn encode(&self, command: Command) -> Result<Vec<u8>, WireError> {
        let rundown_keywords = match self.rundown {
            Rundown::None => 0,
            Rundown::Default => DEFAULT_RUNDOWN_KEYWORDS,
            Rundown::Keywords(k) => k,
        };
        let mut w = PayloadWriter::new();
        if command == Command::COLLECT_TRACING_5 {
            // Output format 0: an IPC stream (1 is user_events).
            w.u32(0);
        }
        w.u32(self.buffer_size_mb).u32(FORMAT_NETTRACE);
        match command {
            Command::COLLECT_TRACING => {}
            Command::COLLECT_TRACING_2 => {
                w.bool(rundown_keywords != 0);
            }
            Command::COLLECT_TRACING_3 => {
                w.bool(rundown_keywords != 0).bool(self.stacks);
            }
            _ => {
                w.u64(rundown_keywords).bool(self.stacks);
            }
        }
        w.u32(self.providers.len() as u32);
        for p in &self.providers {
            w.u64(p.keywords).u32(p.level);
            w.string(&p.name)?;
            w.optional_string(p.filter_data().as_deref())?;
            if command == Command::COLLECT_TRACING_5 {
                // The event filter: `bool` enable, `array<uint>` ids (no
                // filter: disable none).
                let (enable, ids) = match &p.event_filter {
                    Some((enable, ids)) => (*enable, &ids[..]),
                    None => (false, &[][..]),
                };
                w.bool(enable).u32(ids.len() as u32);
                for &id in ids {
                    w.u32(id);
                }
            }
        }
        Ok(w.into_bytes())
    }
}

/// A running session: its trace stream is read through [`io::Read`] (wrap
/// it in `corprof::nettrace::NettraceReader`), and [`stop`](Self::stop)
/// ends it.
#[derive(Debug)]
pub struct EventPipeSession {
    connection: Connection,
    client: DiagnosticsClient,
    session_id: u64,
    command: Command,
    read_timeout: Duration,
}

impl EventPipeSession {
    /// The runtime's id for the session.
    pub fn session_id(&self) -> u64 {
        self.session_id
    }

    /// The command that started it.
    pub fn command(&self) -> Command {
        self.command
    }

    /// How long a read of the stream waits for data (default 60 s; the
    /// runtime sends its buffers every 100 ms while there are events).
    pub fn set_read_timeout(&mut self, limit: Duration) {
        self.read_timeout = limit;
    }

    /// A handle that can stop this session from another thread while this
    /// one reads it.
    pub fn stopper(&self) -> SessionStopper {
        SessionStopper {
            client: self.client.clone(),
            session_id: self.session_id,
        }
    }

    /// `StopTracing`: the runtime writes the rundown (if asked for) and
    /// the stream's end marker, then closes the stream; keep reading until
    /// then.
    pub fn stop(&self) -> Result<(), Error> {
        self.stopper().stop()
    }
}

impl io::Read for EventPipeSession {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.connection.read_some(buf, self.read_timeout)
    }
}

/// Stops a session (see [`EventPipeSession::stopper`]).
#[derive(Clone, Debug)]
pub struct SessionStopper {
    client: DiagnosticsClient,
    session_id: u64,
}

impl SessionStopper {
    /// `StopTracing` for the session.
    pub fn stop(&self) -> Result<(), Error> {
        let mut payload = PayloadWriter::new();
        payload.u64(self.session_id);
        let response = self
            .client
            .send(Command::STOP_TRACING, payload.as_bytes())?;
        if response.command != Command::OK {
            return Err(Error::UnexpectedResponse(response.command));
        }
        Ok(())
    }
}

impl DiagnosticsClient {
    /// Starts an EventPipe session: `CollectTracing2`, `3`, `4` or `5`
    /// ([`SessionConfig::command`]), or `CollectTracing` on a runtime that
    /// does not know `CollectTracing2` when the default rundown is asked
    /// for (.NET Core 3.0). A runtime that knows none of the commands the
    /// configuration needs answers [`DS_IPC_E_UNKNOWN_COMMAND`], returned
    /// as [`Error::Runtime`].
    pub fn start_session(&self, config: &SessionConfig) -> Result<EventPipeSession, Error> {
        let command = config.command();
        match self.start_with(config, command) {
            Err(e)
                if e.hresult() == Some(DS_IPC_E_UNKNOWN_COMMAND)
                    && command == Command::COLLECT_TRACING_2
                    && config.rundown == Rundown::Default =>
            {
                self.start_with(config, Command::COLLECT_TRACING)
            }
            other => other,
        }
    }

    /// Starts a session with exactly `command`.
    pub fn start_with(
        &self,
        config: &SessionConfig,
        command: Command,
    ) -> Result<EventPipeSession, Error> {
        let message = encode_message(command, &config.encode(command)?)?;
        let mut connection = Connection::open(self.endpoint(), self.timeout())?;
        connection.write_all(&message, "sending the request")?;
        let response = super::client::read_response(&mut connection)?;
        if response.command != Command::OK {
            return Err(Error::UnexpectedResponse(response.command));
        }
        let mut reader = PayloadReader::new(&response.payload);
        let session_id = reader.u64()?;
        Ok(EventPipeSession {
            connection,
            client: self.clone(),
            session_id,
            command,
            read_timeout: Duration::from_secs(60),
        })
    }

    /// `StopTracing` for session `session_id`.
    pub fn stop_tracing(&self, session_id: u64) -> Result<(), Error> {
        SessionStopper {
            client: self.clone(),
            session_id,
        }
        .stop()
    }
}
