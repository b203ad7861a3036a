//! The payload encoding of the diagnostics IPC protocol: fields written one
//! after the other, little-endian, with no padding.
//!
//! | type | bytes |
//! | --- | --- |
//! | `uint` | 4 |
//! | `ulong` | 8 |
//! | `CLSID`/`GUID` | 16: `u32`, `u16`, `u16`, then 8 bytes as they are |
//! | `string` | `uint` count of UTF-16 code units *including* a final NUL, then the units; or a count of 0 (a null string) |
//! | `array<byte>` | `uint` count, then the bytes |
//!
//! [`PayloadReader`] never trusts a count: a string or array longer than what
//! is left of the payload is [`WireError::Truncated`], not an allocation.

use alloc::string::String;
use alloc::vec::Vec;

use super::error::WireError;
use crate::support::bytes::{ByteReader, Truncated};
use crate::GUID;

/// Builds a payload field by field.
#[derive(Clone, Debug, Default)]
pub struct PayloadWriter {
    bytes: Vec<u8>,
}

impl PayloadWriter {
    /// An empty payload.
    pub fn new() -> PayloadWriter {
        PayloadWriter::default()
    }

    /// Appends a `uint`.
    pub fn u32(&mut self, value: u32) -> &mut Self {
        self.bytes.extend_from_slice(&value.to_le_bytes());
        self
    }

    /// Appends a `ulong`.
    pub fn u64(&mut self, value: u64) -> &mut Self {
        self.bytes.extend_from_slice(&value.to_le_bytes());
        self
    }

    /// Appends a `bool`: one byte, 0 or 1.
    pub fn bool(&mut self, value: bool) -> &mut Self {
        self.bytes.push(u8::from(value));
        self
    }

    /// Appends a `string`, or a null string (a count of 0) for `None`.
    pub fn optional_string(&mut self, text: Option<&str>) -> Result<&mut Self, WireError> {
        match text {
            Some(text) => self.string(text),
            None => Ok(self.u32(0)),
        }
    }

    /// Appends a GUID (`CLSID`).
    pub fn guid(&mut self, guid: &GUID) -> &mut Self {
        self.u32(guid.data1);
        self.bytes.extend_from_slice(&guid.data2.to_le_bytes());
        self.bytes.extend_from_slice(&guid.data3.to_le_bytes());
        self.bytes.extend_from_slice(&guid.data4);
        self
    }

    /// Appends a `string`: its UTF-16 code units and a NUL, after their
    /// count. [`WireError::PayloadTooLarge`] when `text` contains a NUL
    /// (the runtime would read it as the end) or cannot fit in a message.
    pub fn string(&mut self, text: &str) -> Result<&mut Self, WireError> {
        if text.contains('\0') {
            return Err(WireError::NulInString);
        }
        let units: Vec<u16> = text.encode_utf16().chain(Some(0)).collect();
        let count =
            u32::try_from(units.len()).map_err(|_| WireError::PayloadTooLarge(usize::MAX))?;
        self.u32(count);
        for unit in units {
            self.bytes.extend_from_slice(&unit.to_le_bytes());
        }
        Ok(self)
    }

    /// Appends an `array<byte>`: its length, then the bytes.
    pub fn byte_array(&mut self, data: &[u8]) -> Result<&mut Self, WireError> {
        let count =
            u32::try_from(data.len()).map_err(|_| WireError::PayloadTooLarge(data.len()))?;
        self.u32(count);
        self.bytes.extend_from_slice(data);
        Ok(self)
    }

    /// The payload so far.
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The finished payload.
    pub fn into_bytes(self) -> Vec<u8> {
        self.bytes
    }
}

/// Reads a payload field by field, checking every length against what is
/// left.
#[derive(Clone, Debug)]
pub struct PayloadReader<'a> {
    bytes: ByteReader<'a>,
}

fn truncated(t: Truncated) -> WireError {
    WireError::Truncated {
        offset: t.offset,
        needed: t.needed,
        available: t.available,
    }
}

impl<'a> PayloadReader<'a> {
    /// Reads `payload` from its start.
    pub fn new(payload: &'a [u8]) -> PayloadReader<'a> {
        PayloadReader {
            bytes: ByteReader::new(payload),
        }
    }

    /// How many bytes are left.
    pub fn remaining(&self) -> usize {
        self.bytes.remaining()
    }

    /// Reads a `uint`.
    pub fn u32(&mut self) -> Result<u32, WireError> {
        self.bytes.u32().map_err(truncated)
    }

    /// Reads an `int32` (an HRESULT, for example).
    pub fn i32(&mut self) -> Result<i32, WireError> {
        self.bytes.i32().map_err(truncated)
    }

    /// Reads a `ulong`.
    pub fn u64(&mut self) -> Result<u64, WireError> {
        self.bytes.u64().map_err(truncated)
    }

    /// Reads a GUID.
    pub fn guid(&mut self) -> Result<GUID, WireError> {
        self.bytes.guid().map_err(truncated)
    }

    /// Reads a `string`: `None` for a count of 0 (a null string).
    /// [`WireError::Truncated`] when the count exceeds what is left,
    /// [`WireError::MissingNul`] when the last unit is not NUL,
    /// [`WireError::InvalidUtf16`] for unpaired surrogates.
    pub fn string(&mut self) -> Result<Option<String>, WireError> {
        let at = self.bytes.pos();
        let count = self.u32()? as usize;
        if count == 0 {
            return Ok(None);
        }
        // A count whose byte length overflows is as truncated as one that
        // exceeds what is left.
        let units = self.bytes.utf16(count).map_err(truncated)?;
        let (last, text) = units
            .split_last()
            .ok_or(WireError::MissingNul { offset: at })?;
        if *last != 0 {
            return Err(WireError::MissingNul { offset: at });
        }
        String::from_utf16(text)
            .map(Some)
            .map_err(|_| WireError::InvalidUtf16 { offset: at })
    }

    /// Reads an `array<byte>`.
    pub fn byte_array(&mut self) -> Result<&'a [u8], WireError> {
        let count = self.u32()? as usize;
        self.bytes.take(count).map_err(truncated)
    }

    /// `Ok` when the whole payload was read, [`WireError::TrailingBytes`]
    /// otherwise.
    pub fn finish(&self) -> Result<(), WireError> {
        match self.bytes.remaining() {
            0 => Ok(()),
            left => Err(WireError::TrailingBytes(left)),
        }
    }
}
