//! A zero-dependency inflate (RFC 1951) for the Portable PDBs compilers
//! embed in assemblies: the crate's one DEFLATE implementation, which lives
//! on the support floor (`support::flate`) beside the deflate that gzips
//! profiles.

pub use crate::support::flate::inflate::{inflate, InflateError};
