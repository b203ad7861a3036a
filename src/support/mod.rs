//! The support floor: the crate-wide utilities, below everything (they use
//! nothing of the crate but the root's COM items, `GUID` and `Error`), one
//! implementation each, none of them public:
//!
//! * [`bytes`]: the one byte reader of every binary format;
//! * [`sys`]: the operating system's calls, declared once;
//! * [`sync`]: the one poison-tolerant lock;
//! * [`env`]: the one reader of boolean environment variables;
//! * [`pe`]: the one reader of PE image headers (data directories, sections);
//! * [`flate`]: the one DEFLATE implementation (inflate, deflate, gzip, CRC-32).

// The byte reader the binary formats share.
#[cfg(any(
    feature = "cil",
    feature = "eventpipe",
    feature = "diagnostics",
    feature = "nettrace"
))]
pub(crate) mod bytes;
// The capabilities' boolean variables (coverage's, the sampler's).
#[cfg(any(feature = "sampling", feature = "coverage"))]
pub(crate) mod env;
// PE headers: coverage's debug directory, instrumentation's CLI header.
#[cfg(any(feature = "coverage", feature = "instrument"))]
pub(crate) mod pe;
// DEFLATE: coverage inflates embedded PDBs, profiles are gzipped.
#[cfg(any(feature = "coverage", feature = "profile"))]
pub(crate) mod flate;
#[cfg(feature = "std")]
pub(crate) mod sync;
pub(crate) mod sys;
