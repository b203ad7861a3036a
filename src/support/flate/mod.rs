//! DEFLATE (RFC 1951), the one implementation: [`inflate`] decodes the
//! Portable PDBs compilers embed in assemblies (coverage), [`deflate`]
//! writes the gzip members (RFC 1952) profiles are stored in, with the
//! CRC-32 gzip's trailer carries. Public through `corprof::coverage::inflate`
//! and `corprof::profile::{gzip, crc32}`.

#[cfg(feature = "profile")]
pub(crate) mod deflate;
#[cfg(feature = "coverage")]
pub(crate) mod inflate;
