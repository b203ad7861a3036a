//! Made-up runtime IDs for the fake runtimes of the tests.
#![allow(unused_macros, unused_imports)]

/// `fake_id!(FunctionID, 0xF1)`: an ID the test's fake runtime hands out.
///
/// The IDs' constructor is unsafe because the real runtime dereferences
/// them; the fakes only compare and print them.
macro_rules! fake_id {
    ($ty:ident, $raw:expr) => {
        // SAFETY: a made-up ID for a fake runtime, which never dereferences it.
        unsafe { $ty::from_raw($raw) }
    };
}
pub(crate) use fake_id;
