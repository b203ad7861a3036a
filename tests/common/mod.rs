//! Helpers shared by the integration tests (`mod common;`).

// The real-runtime harness drives processes with Unix APIs (process groups,
// signals) and the provisioned runtime is a Unix one; the end-to-end test
// crates that use it are `#![cfg(unix)]` too. Everything else is portable.
#[cfg(unix)]
pub(crate) mod browser;
#[cfg(unix)]
pub(crate) mod dotnet;
pub(crate) mod expected;
pub(crate) mod fuzz;
pub(crate) mod ids;
pub(crate) mod nettrace_writer;
#[cfg(unix)]
pub(crate) mod otlp;
#[cfg(unix)]
pub(crate) mod readers;
#[cfg(unix)]
pub(crate) mod runtime_async;
pub(crate) mod self_exec;
#[cfg(unix)]
pub(crate) mod tools;
pub(crate) mod vtable;
#[cfg(unix)]
pub(crate) mod web;
