//! The COM core: GUIDs, HRESULTs, the ABI marker traits, the
//! [`com_interface!`](crate::com_interface) macro, the exporter and the
//! invokers' common machinery.

pub(crate) mod abi;
pub(crate) mod diagnose;
pub(crate) mod export;
pub(crate) mod guid;
pub(crate) mod hresult;
pub(crate) mod interface;
pub(crate) mod macros;
pub mod private;
pub(crate) mod server;
pub(crate) mod split;
pub(crate) mod unknown;
