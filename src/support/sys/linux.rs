//! glibc on x86-64 and AArch64: every layout and constant transcribed from
//! glibc's headers (Debian 12's glibc 2.36:
//! `/usr/include/x86_64-linux-gnu/` and, from `libc6-dev-arm64-cross`,
//! `/usr/aarch64-linux-gnu/include/`), the file named beside each item.

#![allow(non_camel_case_types)]

use core::ffi::c_int;

/// glibc's `sigset_t` (`bits/types/__sigset_t.h`): 1024 bits.
#[repr(C)]
#[derive(Clone, Copy)]
pub(crate) struct sigset_t {
    pub(crate) bits: [u64; 16],
}

/// glibc's `struct sigaction` (`bits/sigaction.h`, the same field order on
/// x86-64 and AArch64): the handler (a union of `sa_handler` and
/// `sa_sigaction`), `sa_mask`, `sa_flags`, `sa_restorer`.
#[repr(C)]
#[derive(Clone, Copy)]
pub(crate) struct sigaction_t {
    pub(crate) sa_sigaction: usize,
    pub(crate) sa_mask: sigset_t,
    pub(crate) sa_flags: c_int,
    pub(crate) sa_restorer: usize,
}

impl sigaction_t {
    /// All zero: `SIG_DFL`, an empty mask, no flags.
    pub(crate) const fn zeroed() -> sigaction_t {
        sigaction_t {
            sa_sigaction: 0,
            sa_mask: sigset_t { bits: [0; 16] },
            sa_flags: 0,
            sa_restorer: 0,
        }
    }
}

extern "C" {
    /// `sigaction(2)` through glibc (`signal.h`).
    pub(crate) fn sigaction(
        signum: c_int,
        act: *const sigaction_t,
        oldact: *mut sigaction_t,
    ) -> c_int;
}
