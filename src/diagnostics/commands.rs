//! The commands this client sends, their payloads and their responses.
//!
//! | command | code | request payload | OK response payload | runtimes |
//! | --- | --- | --- | --- | --- |
//! | `AttachProfiler` | `0x0301` | `uint` attach timeout (ms), `CLSID`, `string` profiler path, `array<byte>` client data | `int32` HRESULT | .NET Core 3.0 and later |
//! | `ProcessInfo` | `0x0400` | none | `ulong` pid, `GUID` runtime cookie, `string` command line, `string` OS, `string` architecture | .NET 5 and later |
//! | `ResumeRuntime` | `0x0401` | none | none | .NET 5 and later |
//!
//! A runtime that does not know a command answers the `Error` response with
//! [`DS_IPC_E_UNKNOWN_COMMAND`](super::DS_IPC_E_UNKNOWN_COMMAND): .NET Core
//! 3.1 knows only the Dump, EventPipe and Profiler command sets.

use alloc::string::String;
use alloc::vec::Vec;
use core::time::Duration;

use super::error::WireError;
use super::payload::{PayloadReader, PayloadWriter};
use crate::GUID;

/// What `ProcessInfo` answers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProcessInfo {
    /// The process id, in the target's pid namespace.
    pub process_id: u64,
    /// A random GUID the runtime chose at startup: tells runtimes apart
    /// across pid namespaces.
    pub runtime_cookie: GUID,
    /// The command line: on Windows `GetCommandLineW`; elsewhere the full
    /// path of `argv[0]` and the arguments, separated by spaces.
    pub command_line: String,
    /// `"Linux"`, `"macOS"`, `"Windows"` or `"Unknown"`.
    pub os: String,
    /// `"x86"`, `"x64"`, `"arm32"`, `"arm64"` or `"Unknown"`.
    pub arch: String,
}

impl ProcessInfo {
    /// Decodes the payload of the `OK` response to `ProcessInfo`. A null
    /// string decodes as an empty one.
    pub fn decode(payload: &[u8]) -> Result<ProcessInfo, WireError> {
        let mut reader = PayloadReader::new(payload);
        let process_id = reader.u64()?;
        let runtime_cookie = reader.guid()?;
        let command_line = reader.string()?.unwrap_or_default();
        let os = reader.string()?.unwrap_or_default();
        let arch = reader.string()?.unwrap_or_default();
        // Later runtimes may append fields (as ProcessInfo2 does); they are
        // not an error.
        Ok(ProcessInfo {
            process_id,
            runtime_cookie,
            command_line,
            os,
            arch,
        })
    }

    /// Encodes this as the runtime would (for tests and fake servers).
    pub fn encode(&self) -> Result<Vec<u8>, WireError> {
        let mut writer = PayloadWriter::new();
        writer.u64(self.process_id).guid(&self.runtime_cookie);
        writer.string(&self.command_line)?;
        writer.string(&self.os)?;
        writer.string(&self.arch)?;
        Ok(writer.into_bytes())
    }
}

/// An `AttachProfiler` request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AttachProfiler<'a> {
    /// How long the runtime may wait for a concurrent GC to finish before
    /// loading the profiler (`dwAttachTimeout`, sent in milliseconds). It
    /// does not bound the profiler's own `InitializeForAttach`.
    pub attach_timeout: Duration,
    /// The profiler's CLSID, which its `DllGetClassObject` must accept.
    pub clsid: GUID,
    /// The profiler library's path, as the target process sees it (use an
    /// absolute path).
    pub profiler_path: &'a str,
    /// Bytes passed to `ICorProfilerCallback3::InitializeForAttach`.
    pub client_data: &'a [u8],
}

impl AttachProfiler<'_> {
    /// The request payload. [`WireError::PayloadTooLarge`] when the path and
    /// client data do not fit in one message (65 515 bytes of payload).
    pub fn encode(&self) -> Result<Vec<u8>, WireError> {
        let millis = u32::try_from(self.attach_timeout.as_millis()).unwrap_or(u32::MAX);
        let mut writer = PayloadWriter::new();
        writer.u32(millis).guid(&self.clsid);
        writer.string(self.profiler_path)?;
        writer.byte_array(self.client_data)?;
        let bytes = writer.into_bytes();
        if bytes.len() > super::header::MAX_PAYLOAD_SIZE {
            return Err(WireError::PayloadTooLarge(bytes.len()));
        }
        Ok(bytes)
    }
}
