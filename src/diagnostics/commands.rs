//! The commands this client sends, their payloads and their responses.
//!
//! | command | code | request payload | OK response payload | runtimes |
//! | --- | --- | --- | --- | --- |
//! | `AttachProfiler` | `0x0301` | `uint` attach timeout (ms), `CLSID`, `string` profiler path, `array<byte>` client data | `int32` HRESULT | .NET Core 3.0 and later |
//! | `ProcessInfo` | `0x0400` | none | `ulong` pid, `GUID` runtime cookie, `string` command line, `string` OS, `string` architecture | .NET 5 and later |
//! | `ResumeRuntime` | `0x0401` | none | none | .NET 5 and later |
//! | `ProcessEnvironment` | `0x0402` | none | `uint` byte count of the block that follows the response, `ushort` reserved; then the block: `uint` count, that many `string`s `NAME=VALUE` | .NET 5 and later |
//! | `SetEnvironmentVariable` | `0x0403` | `string` name, `string` value | none | .NET 6 and later |
//! | `ProcessInfo2` | `0x0404` | none | `ProcessInfo`'s fields, then `string` entry-point assembly name, `string` runtime product version | .NET 6 and later |
//! | `ApplyStartupHook` | `0x0407` | `string` the startup hook assembly's path | none | .NET 8 and later |
//!
//! Transcribed from the runtime's diagnostics server
//! (`src/native/eventpipe/ds-process-protocol.c`, `ds-protocol.h`: the
//! command ids, the payloads and the streamed environment block) and, for
//! `ApplyStartupHook`, its tests (a one-`string` payload).
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

/// What `ProcessInfo2` answers: [`ProcessInfo`] and two more strings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProcessInfo2 {
    /// The fields `ProcessInfo` answers too.
    pub info: ProcessInfo,
    /// The managed entry point's assembly name (`Attach` for `Attach.dll`);
    /// empty before the runtime has one.
    pub entrypoint_assembly: String,
    /// The runtime's product version (`8.0.4+2d7eea2529...`).
    pub runtime_version: String,
}

impl ProcessInfo2 {
    /// Decodes the payload of the `OK` response to `ProcessInfo2`.
    pub fn decode(payload: &[u8]) -> Result<ProcessInfo2, WireError> {
        let mut reader = PayloadReader::new(payload);
        let info = ProcessInfo {
            process_id: reader.u64()?,
            runtime_cookie: reader.guid()?,
            command_line: reader.string()?.unwrap_or_default(),
            os: reader.string()?.unwrap_or_default(),
            arch: reader.string()?.unwrap_or_default(),
        };
        Ok(ProcessInfo2 {
            info,
            entrypoint_assembly: reader.string()?.unwrap_or_default(),
            runtime_version: reader.string()?.unwrap_or_default(),
        })
    }

    /// Encodes this as the runtime would (for tests and fake servers).
    pub fn encode(&self) -> Result<Vec<u8>, WireError> {
        let mut writer = PayloadWriter::new();
        let info = &self.info;
        writer.u64(info.process_id).guid(&info.runtime_cookie);
        writer.string(&info.command_line)?;
        writer.string(&info.os)?;
        writer.string(&info.arch)?;
        writer.string(&self.entrypoint_assembly)?;
        writer.string(&self.runtime_version)?;
        Ok(writer.into_bytes())
    }
}

/// The environment block `ProcessEnvironment` streams after its response:
/// `uint` count, then that many `NAME=VALUE` strings. Entries without `=`
/// keep an empty value.
pub fn decode_environment(block: &[u8]) -> Result<Vec<(String, String)>, WireError> {
    let mut reader = PayloadReader::new(block);
    let count = reader.u32()?;
    // Each entry takes at least 4 bytes: a count larger than the block
    // allows is malformed, and never allocated for.
    if count as usize > reader.remaining() / 4 {
        return Err(WireError::Truncated {
            offset: 4,
            needed: count as usize * 4,
            available: reader.remaining(),
        });
    }
    let mut entries = Vec::with_capacity(count as usize);
    for _ in 0..count {
        let entry = reader.string()?.unwrap_or_default();
        let (name, value) = match entry.split_once('=') {
            Some((name, value)) => (String::from(name), String::from(value)),
            None => (entry, String::new()),
        };
        entries.push((name, value));
    }
    reader.finish()?;
    Ok(entries)
}

/// Encodes an environment block as the runtime streams it (for tests and
/// fake servers).
pub fn encode_environment(entries: &[(&str, &str)]) -> Result<Vec<u8>, WireError> {
    let mut writer = PayloadWriter::new();
    writer.u32(entries.len() as u32);
    for (name, value) in entries {
        writer.string(&alloc::format!("{name}={value}"))?;
    }
    Ok(writer.into_bytes())
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
