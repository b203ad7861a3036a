//! [`Result`]: the facade's result type, on the floor below every room
//! that answers one.

/// The result type of the facade: failures are [`Error`](crate::Error)s,
/// the runtime's `HRESULT` (whose `Display` names `CORPROF_E_*` codes with
/// their meaning) with what was being done, for example the runtime method
/// that failed.
pub type Result<T> = core::result::Result<T, crate::Error>;
