//! Running this test binary again as a child process (for tests that must
//! watch a process abort or print at startup), also when the binary was
//! built for another target and runs under an emulator.
//!
//! `CORPROF_TEST_RUNNER` is the command prefix the binary needs, split at
//! spaces (`qemu-aarch64 -L /usr/aarch64-linux-gnu` in
//! `scripts/ci/test-aarch64.sh`); unset, the binary is run directly.
#![allow(dead_code)]

use std::process::Command;

/// A command that runs the current test binary, through
/// `CORPROF_TEST_RUNNER` when it is set.
pub(crate) fn this_test_binary() -> Command {
    target_binary(std::env::current_exe().expect("the test binary's path"))
}

/// A command that runs `exe`, a binary built for the test's target (the
/// `corprof` command), through `CORPROF_TEST_RUNNER` when it is set.
pub(crate) fn target_binary(exe: impl AsRef<std::ffi::OsStr>) -> Command {
    let exe = exe.as_ref();
    let runner = std::env::var("CORPROF_TEST_RUNNER").unwrap_or_default();
    let mut words = runner.split_whitespace();
    match words.next() {
        None => Command::new(exe),
        Some(program) => {
            let mut cmd = Command::new(program);
            cmd.args(words).arg(exe);
            cmd
        }
    }
}
