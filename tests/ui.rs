//! Compile-fail tests: misuse of the macro and the exporter must not build,
//! and the error must point at the mistake; and the options API as a user
//! outside the crate sees it: a struct literal of a `#[non_exhaustive]`
//! options type, and a use of `SamplerOptions` after a move, are refused
//! (`ui-tests/sampler_options_*.rs`; that the setters build and work is
//! `tests/options_api.rs`: a passing case here would make trybuild build
//! instead of check, which changes other cases' notes). Each case's expected compiler
//! output is committed beside it in `ui-tests/*.stderr`; regenerate after an
//! intended change with `TRYBUILD=overwrite cargo +1.95.0 test --test ui`
//! (the pinned version, below) and review the diff.
//!
//! The `.stderr` files record one rustc's wording, so they are checked only
//! with the toolchain named in `ui-tests/TOOLCHAIN` (CI installs it; see
//! docs/macro.md). With any other toolchain this test says so and passes,
//! unless `CORPROF_UI_PINNED=1` is set (as CI does), which makes a toolchain
//! mismatch a failure.
//!
//! Not built for Windows: trybuild is a dev-dependency of the other hosts
//! only (Cargo.toml; the Windows leg cross-builds the tests).
#![cfg(not(windows))]

use std::process::Command;

/// The Rust version whose messages the `.stderr` files record.
fn pinned() -> &'static str {
    include_str!("../ui-tests/TOOLCHAIN").trim()
}

/// The version of the toolchain running this test (and trybuild's builds).
fn current() -> String {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(&cargo)
        .arg("--version")
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cargo} --version: {e}"));
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    // "cargo 1.95.0 (59807616e 2026-04-14)"
    text.split_whitespace()
        .nth(1)
        .unwrap_or_default()
        .to_string()
}

#[test]
fn misuse_is_a_compile_error() {
    let (pinned, current) = (pinned(), current());
    if current != pinned {
        assert!(
            std::env::var_os("CORPROF_UI_PINNED").is_none(),
            "CORPROF_UI_PINNED is set but this is Rust {current}, not {pinned}"
        );
        eprintln!(
            "ui tests not checked: ui-tests/*.stderr record Rust {pinned}'s messages and this is \
             Rust {current}; run `cargo +{pinned} test --test ui`"
        );
        return;
    }
    let cases = trybuild::TestCases::new();
    cases.compile_fail("ui-tests/*.rs");
}
