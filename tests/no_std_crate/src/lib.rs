//! Declares, exports and calls a COM interface with corprof in `no_std`.
#![no_std]

use corprof::{com_interface, export, HRESULT, S_OK};

com_interface! {
    /// A tiny interface.
    #[iid("0A1B2C3D-0000-4000-8000-00000000ABCD")]
    #[vtable(ITiny_Vtbl)]
    #[implement(ITiny_Impl)]
    pub unsafe interface ITiny: IUnknown {
        /// Doubles `x` into `out`.
        fn Double(x: u32, out: *mut u32) -> HRESULT;
    }
}

struct Tiny;

impl ITiny_Impl for Tiny {
    unsafe fn Double(&self, x: u32, out: *mut u32) -> HRESULT {
        // SAFETY: callers pass a valid pointer.
        unsafe { *out = x * 2 };
        S_OK
    }
}

/// Exports a `Tiny` and calls it back through its vtable.
pub fn roundtrip(x: u32) -> u32 {
    let tiny: ITiny = export(Tiny);
    let mut out = 0;
    // SAFETY: a valid out-pointer.
    let _ = unsafe { tiny.Double(x, &mut out) };
    out
}

/// Counts the events of a nettrace stream held in memory (`None` when it
/// is malformed): the trace reader in `no_std`.
pub fn nettrace_events(stream: &[u8]) -> Option<usize> {
    corprof::nettrace::Parser::parse_all(stream)
        .ok()
        .map(|(_, events, _)| events.len())
}
