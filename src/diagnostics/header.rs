//! The message header of the diagnostics IPC protocol and the command codes
//! it carries.
//!
//! Every message, in either direction, is a 20-byte header followed by a
//! payload of `size - 20` bytes (the protocol's `IpcHeader`, little-endian):
//!
//! | bytes | field | value |
//! | --- | --- | --- |
//! | 0..14 | magic | `"DOTNET_IPC_V1"` and a NUL |
//! | 14..16 | size | header + payload, in bytes (`u16`) |
//! | 16 | command set | [`Command::set`] |
//! | 17 | command id | [`Command::id`] |
//! | 18..20 | reserved | `0x0000` |
//!
//! The `u16` size bounds every message to 65 535 bytes, so no length read
//! from the wire can ask for more.

use alloc::vec::Vec;
use core::fmt;

use super::error::WireError;

/// The protocol's magic version string: `"DOTNET_IPC_V1"` and its NUL.
pub const MAGIC: [u8; 14] = *b"DOTNET_IPC_V1\0";

/// `sizeof(IpcHeader)`: every message is at least this long.
pub const HEADER_SIZE: usize = 20;

/// The largest message the `u16` size field can describe.
pub const MAX_MESSAGE_SIZE: usize = u16::MAX as usize;

/// The largest payload a message can carry.
pub const MAX_PAYLOAD_SIZE: usize = MAX_MESSAGE_SIZE - HEADER_SIZE;

/// A command: a command set (a service of the runtime's diagnostics server)
/// and a command id within it.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Command {
    /// The command set (`CommandSet`: 0x01 Dump, 0x02 EventPipe, 0x03
    /// Profiler, 0x04 Process, 0xFF Server).
    pub set: u8,
    /// The command within its set.
    pub id: u8,
}

impl Command {
    /// The command `id` of command set `set`.
    const fn new(set: u8, id: u8) -> Command {
        Command { set, id }
    }

    /// Server 0xFF/0x00 `OK`: the generic success response.
    pub const OK: Command = Command::new(0xFF, 0x00);
    /// Server 0xFF/0xFF `Error`: the error response, whose payload is one
    /// `int32` HRESULT.
    pub const ERROR: Command = Command::new(0xFF, 0xFF);
    /// EventPipe 0x02/0x01 `StopTracing` (.NET Core 3.0 and later).
    pub const STOP_TRACING: Command = Command::new(0x02, 0x01);
    /// EventPipe 0x02/0x02 `CollectTracing` (.NET Core 3.0 and later):
    /// always with rundown.
    pub const COLLECT_TRACING: Command = Command::new(0x02, 0x02);
    /// EventPipe 0x02/0x03 `CollectTracing2`: rundown on or off (.NET Core
    /// 3.1 and later).
    pub const COLLECT_TRACING_2: Command = Command::new(0x02, 0x03);
    /// EventPipe 0x02/0x04 `CollectTracing3`: stacks on or off (.NET 9
    /// and later).
    pub const COLLECT_TRACING_3: Command = Command::new(0x02, 0x04);
    /// EventPipe 0x02/0x05 `CollectTracing4`: the rundown's keywords
    /// (.NET 9 and later).
    pub const COLLECT_TRACING_4: Command = Command::new(0x02, 0x05);
    /// EventPipe 0x02/0x06 `CollectTracing5`: per-provider event filters
    /// and user_events sessions (.NET 10 and later; 9.0.23 refuses it).
    pub const COLLECT_TRACING_5: Command = Command::new(0x02, 0x06);
    /// Profiler 0x03/0x01 `AttachProfiler` (.NET Core 3.0 and later).
    pub const ATTACH_PROFILER: Command = Command::new(0x03, 0x01);
    /// Process 0x04/0x00 `ProcessInfo` (.NET 5 and later).
    pub const PROCESS_INFO: Command = Command::new(0x04, 0x00);
    /// Process 0x04/0x01 `ResumeRuntime` (.NET 5 and later).
    pub const RESUME_RUNTIME: Command = Command::new(0x04, 0x01);
    /// Process 0x04/0x02 `ProcessEnvironment` (.NET 5 and later).
    pub const PROCESS_ENVIRONMENT: Command = Command::new(0x04, 0x02);
    /// Process 0x04/0x03 `SetEnvironmentVariable` (.NET 6 and later).
    pub const SET_ENVIRONMENT_VARIABLE: Command = Command::new(0x04, 0x03);
    /// Process 0x04/0x04 `ProcessInfo2` (.NET 6 and later).
    pub const PROCESS_INFO_2: Command = Command::new(0x04, 0x04);
    /// Process 0x04/0x07 `ApplyStartupHook` (.NET 8 and later).
    pub const APPLY_STARTUP_HOOK: Command = Command::new(0x04, 0x07);

    /// The protocol's name of a known command, `None` for others.
    pub fn name(self) -> Option<&'static str> {
        Some(match self {
            Command::OK => "Server OK",
            Command::ERROR => "Server Error",
            Command::STOP_TRACING => "StopTracing",
            Command::COLLECT_TRACING => "CollectTracing",
            Command::COLLECT_TRACING_2 => "CollectTracing2",
            Command::COLLECT_TRACING_3 => "CollectTracing3",
            Command::COLLECT_TRACING_4 => "CollectTracing4",
            Command::COLLECT_TRACING_5 => "CollectTracing5",
            Command::ATTACH_PROFILER => "AttachProfiler",
            Command::PROCESS_INFO => "ProcessInfo",
            Command::RESUME_RUNTIME => "ResumeRuntime",
            Command::PROCESS_ENVIRONMENT => "ProcessEnvironment",
            Command::SET_ENVIRONMENT_VARIABLE => "SetEnvironmentVariable",
            Command::PROCESS_INFO_2 => "ProcessInfo2",
            Command::APPLY_STARTUP_HOOK => "ApplyStartupHook",
            _ => return None,
        })
    }
}

impl fmt::Debug for Command {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(name) => write!(f, "{name} (0x{:02X}{:02X})", self.set, self.id),
            None => write!(f, "command 0x{:02X}{:02X}", self.set, self.id),
        }
    }
}

impl fmt::Display for Command {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

/// A decoded message header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    /// The whole message's size: header and payload.
    pub size: u16,
    /// What the message is.
    pub command: Command,
    /// Reserved; 0 in `DOTNET_IPC_V1`.
    pub reserved: u16,
}

impl Header {
    /// The header of a message carrying `payload_len` bytes of payload;
    /// [`WireError::PayloadTooLarge`] when the total exceeds 65 535 bytes.
    pub fn for_payload(command: Command, payload_len: usize) -> Result<Header, WireError> {
        if payload_len > MAX_PAYLOAD_SIZE {
            return Err(WireError::PayloadTooLarge(payload_len));
        }
        Ok(Header {
            size: (HEADER_SIZE + payload_len) as u16,
            command,
            reserved: 0,
        })
    }

    /// How many payload bytes follow this header.
    pub fn payload_len(&self) -> usize {
        usize::from(self.size).saturating_sub(HEADER_SIZE)
    }

    /// The 20 bytes on the wire.
    pub fn encode(&self) -> [u8; HEADER_SIZE] {
        let mut bytes = [0u8; HEADER_SIZE];
        bytes[..14].copy_from_slice(&MAGIC);
        bytes[14..16].copy_from_slice(&self.size.to_le_bytes());
        bytes[16] = self.command.set;
        bytes[17] = self.command.id;
        bytes[18..20].copy_from_slice(&self.reserved.to_le_bytes());
        bytes
    }

    /// Reads a header: [`WireError::BadMagic`] unless it starts with
    /// [`MAGIC`], [`WireError::SizeTooSmall`] when its size cannot even hold
    /// the header.
    pub fn decode(bytes: &[u8; HEADER_SIZE]) -> Result<Header, WireError> {
        let mut magic = [0u8; 14];
        magic.copy_from_slice(&bytes[..14]);
        if magic != MAGIC {
            return Err(WireError::BadMagic(magic));
        }
        let size = u16::from_le_bytes([bytes[14], bytes[15]]);
        if usize::from(size) < HEADER_SIZE {
            return Err(WireError::SizeTooSmall(size));
        }
        Ok(Header {
            size,
            command: Command {
                set: bytes[16],
                id: bytes[17],
            },
            reserved: u16::from_le_bytes([bytes[18], bytes[19]]),
        })
    }
}

/// A whole message as bytes: the header for `command` and `payload`.
pub fn encode_message(command: Command, payload: &[u8]) -> Result<Vec<u8>, WireError> {
    let header = Header::for_payload(command, payload.len())?;
    let mut message = Vec::with_capacity(usize::from(header.size));
    message.extend_from_slice(&header.encode());
    message.extend_from_slice(payload);
    Ok(message)
}
