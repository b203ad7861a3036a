//! Every `HRESULT` code this crate can name: the COM core's standard codes,
//! the profiling API's (`CORPROF_E_*`) and the metadata API's (`CLDB_E_*`,
//! `META_E_*`).
//!
//! Each layer declares its own codes with their meanings, in its own module
//! (`com::hresult::COMMON`, `profiling::errors::CODES`,
//! `metadata::errors::CODES`); this crate-level module lists the tables and
//! gives [`HRESULT`] its names, `Debug` and `Display`. It sits above all
//! three layers, so the COM core that defines `HRESULT` depends on none of
//! the APIs whose codes it prints.

use core::fmt;

use crate::com::hresult::{HResultInfo, COMMON};
use crate::HRESULT;

/// Every table of known codes, searched in order by [`HRESULT::info`].
const TABLES: &[&[HResultInfo]] = &[COMMON, crate::profiling::CODES, crate::metadata::CODES];

impl HRESULT {
    /// The name and documented meaning of this code, when it is one of the
    /// standard, profiling (`CORPROF_E_*`) or metadata (`CLDB_E_*`, `META_E_*`)
    /// codes this crate knows.
    pub fn info(self) -> Option<&'static HResultInfo> {
        TABLES
            .iter()
            .flat_map(|table| table.iter())
            .find(|info| info.code == self)
    }

    /// The symbolic name of a known code (`"E_NOINTERFACE"`).
    pub fn name(self) -> Option<&'static str> {
        self.info().map(|info| info.name)
    }

    /// The documented meaning of a known code.
    pub fn meaning(self) -> Option<&'static str> {
        self.info().map(|info| info.meaning)
    }
}

impl fmt::Debug for HRESULT {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(name) => f.write_str(name),
            None => write!(f, "HRESULT(0x{:08X})", self.0 as u32),
        }
    }
}

impl fmt::Display for HRESULT {
    /// `E_NOINTERFACE (0x80004002): The object does not support ...`, or the
    /// bare hexadecimal value for unknown codes.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.info() {
            Some(info) => write!(
                f,
                "{} (0x{:08X}): {}",
                info.name, self.0 as u32, info.meaning
            ),
            None => write!(f, "HRESULT 0x{:08X}", self.0 as u32),
        }
    }
}
