//! [`GUID`]: the 128-bit identifiers of COM interfaces and classes.

use core::fmt;

/// A globally unique identifier, laid out exactly as the Windows `GUID` struct.
///
/// COM names every interface (IID) and every class (CLSID) with one. The field
/// layout is the Windows one on every OS (`Data1` little-endian `u32`, two
/// `u16`, eight bytes), which is also the layout CoreCLR's PAL uses on Linux
/// and macOS.
///
/// Construct one at compile time from its registry form (braces optional):
///
/// ```
/// use corprof::GUID;
/// const IID_IUNKNOWN: GUID = GUID::parse("00000000-0000-0000-C000-000000000046");
/// assert_eq!(IID_IUNKNOWN, GUID::from_u128(0x00000000_0000_0000_C000_000000000046));
/// assert_eq!(IID_IUNKNOWN.to_string(), "00000000-0000-0000-C000-000000000046");
/// ```
///
/// In a `const` context a malformed string is a compile-time error:
///
/// ```compile_fail
/// const BAD: corprof::GUID = corprof::GUID::parse("not-a-guid");
/// ```
///
/// COM passes GUIDs **by reference** (`REFIID`, `REFGUID`, `REFCLSID` are
/// `*const GUID`); this type deliberately does not implement
/// [`AbiParam`](crate::AbiParam), so a method declared as taking a `GUID` by
/// value is rejected at compile time.
#[repr(C)]
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct GUID {
    /// The first 8 hexadecimal digits.
    pub data1: u32,
    /// The next 4 hexadecimal digits.
    pub data2: u16,
    /// The next 4 hexadecimal digits.
    pub data3: u16,
    /// The last 16 hexadecimal digits, as bytes in string order.
    pub data4: [u8; 8],
}

/// Why a string is not a GUID; returned by [`GUID::try_parse`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GuidParseError {
    /// The string is neither 36 characters, nor 38 with surrounding braces.
    Length,
    /// A `{` without its `}`, or the other way round.
    Braces,
    /// A `-` is missing at one of the positions 8, 13, 18 and 23.
    Hyphen,
    /// A character that is not a hexadecimal digit where one is expected.
    Digit,
}

impl GuidParseError {
    /// A one-sentence description, the text of both [`Display`](fmt::Display)
    /// and the panic of [`GUID::parse`].
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Length => "malformed GUID: a GUID string has 36 characters (38 with braces), like \"00000000-0000-0000-C000-000000000046\"",
            Self::Braces => "malformed GUID: a GUID string is either fully braced (`{...}`) or not braced at all",
            Self::Hyphen => "malformed GUID: hyphens belong at positions 8, 13, 18 and 23, like \"00000000-0000-0000-C000-000000000046\"",
            Self::Digit => "malformed GUID: only hexadecimal digits may stand between the hyphens",
        }
    }
}

impl fmt::Display for GuidParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl core::error::Error for GuidParseError {}

const fn hex_value(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    }
}

impl GUID {
    /// The all-zero GUID (`GUID_NULL`).
    pub const NULL: GUID = GUID::from_u128(0);

    /// Builds a GUID from its 128-bit value, written in the same digit order as
    /// the registry string: `0x00000001_0000_0000_C000_000000000046`.
    pub const fn from_u128(value: u128) -> GUID {
        GUID {
            data1: (value >> 96) as u32,
            data2: (value >> 80) as u16,
            data3: (value >> 64) as u16,
            data4: (value as u64).to_be_bytes(),
        }
    }

    /// The 128-bit value, the inverse of [`GUID::from_u128`].
    pub const fn to_u128(&self) -> u128 {
        ((self.data1 as u128) << 96)
            | ((self.data2 as u128) << 80)
            | ((self.data3 as u128) << 64)
            | (u64::from_be_bytes(self.data4) as u128)
    }

    /// Parses the registry form `XXXXXXXX-XXXX-XXXX-XXXX-XXXXXXXXXXXX`, with
    /// or without surrounding braces, in either case.
    pub const fn try_parse(s: &str) -> Result<GUID, GuidParseError> {
        let bytes = s.as_bytes();
        let start = match bytes.len() {
            36 => {
                if bytes[0] == b'{' || bytes[35] == b'}' {
                    return Err(GuidParseError::Braces);
                }
                0
            }
            38 => {
                if bytes[0] != b'{' || bytes[37] != b'}' {
                    return Err(GuidParseError::Braces);
                }
                1
            }
            _ => return Err(GuidParseError::Length),
        };
        let mut value: u128 = 0;
        let mut i = 0;
        while i < 36 {
            let c = bytes[start + i];
            if i == 8 || i == 13 || i == 18 || i == 23 {
                if c != b'-' {
                    return Err(GuidParseError::Hyphen);
                }
            } else {
                match hex_value(c) {
                    Some(v) => value = (value << 4) | v as u128,
                    None => return Err(GuidParseError::Digit),
                }
            }
            i += 1;
        }
        Ok(GUID::from_u128(value))
    }

    /// Parses the registry form like [`GUID::try_parse`], panicking on a
    /// malformed string.
    ///
    /// Meant for constants: in a `const` (as [`com_interface!`](crate::com_interface),
    /// [`com_class!`](crate::com_class) and [`guid!`](crate::guid) use it) the
    /// panic is a compile-time error whose text is the [`GuidParseError`]'s.
    /// At run time, on a string from outside the program, use
    /// [`GUID::try_parse`] (or `str::parse`) instead, which returns the error.
    ///
    /// # Panics
    ///
    /// When `s` is not a GUID in registry form, with the message of
    /// [`GuidParseError::as_str`].
    pub const fn parse(s: &str) -> GUID {
        match GUID::try_parse(s) {
            Ok(g) => g,
            Err(e) => panic!("{}", e.as_str()),
        }
    }
}

impl core::str::FromStr for GUID {
    type Err = GuidParseError;
    fn from_str(s: &str) -> Result<GUID, GuidParseError> {
        GUID::try_parse(s)
    }
}

impl fmt::Display for GUID {
    /// Formats as `00000001-0000-0000-C000-000000000046` (upper case, no braces;
    /// `{:#}` adds braces).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let d = &self.data4;
        if f.alternate() {
            f.write_str("{")?;
        }
        write!(
            f,
            "{:08X}-{:04X}-{:04X}-{:02X}{:02X}-{:02X}{:02X}{:02X}{:02X}{:02X}{:02X}",
            self.data1, self.data2, self.data3, d[0], d[1], d[2], d[3], d[4], d[5], d[6], d[7]
        )?;
        if f.alternate() {
            f.write_str("}")?;
        }
        Ok(())
    }
}

impl fmt::Debug for GUID {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "GUID({self})")
    }
}

/// A [`GUID`] from its registry string, checked at compile time.
///
/// ```
/// let clsid = corprof::guid!("{DF63A541-5A33-4611-8829-F4E495985EE3}");
/// assert_eq!(clsid.data1, 0xDF63A541);
/// ```
#[macro_export]
macro_rules! guid {
    ($s:expr) => {{
        const __CORPROF_GUID: $crate::GUID = $crate::GUID::parse($s);
        __CORPROF_GUID
    }};
}
