//! Helpers shared by the integration tests (`mod common;`).

pub(crate) mod dotnet;
pub(crate) mod expected;
pub(crate) mod vtable;
