//! Every macro of corprof, expanded in a Rust 2015 crate.
#![allow(non_snake_case)]

extern crate corprof;
// The name `core` now means an empty crate in this crate's paths.
extern crate not_core as core;

use corprof::{com_interface, export, E_POINTER, HRESULT, S_OK};

com_interface! {
    /// A greeter.
    #[iid("3E8F4C2A-6C3B-4C8E-9D0B-2C4D5E6F7A8B")]
    #[vtable(IGreeter_Vtbl)]
    #[implement(IGreeter_Impl)]
    #[agile]
    pub unsafe interface IGreeter: IUnknown {
        /// Writes `2 * times` to `out`.
        fn Greet(times: u32, out: *mut u32) -> corprof::HRESULT;
        /// A method with a default body and no return type.
        fn Nothing() {}
    }
}

struct Greeter;

impl IGreeter_Impl for Greeter {
    unsafe fn Greet(&self, times: u32, out: *mut u32) -> HRESULT {
        if out.is_null() {
            return E_POINTER;
        }
        // SAFETY: checked non-null; the caller passes a valid pointer.
        unsafe { *out = 2 * times };
        S_OK
    }
}

/// Exports a greeter and calls it back through its vtable.
pub fn greet(times: u32) -> u32 {
    let greeter: IGreeter = export(Greeter);
    let mut out = 0;
    // SAFETY: a valid out-pointer.
    let hr = unsafe { greeter.Greet(times, &mut out) };
    assert_eq!(hr, S_OK);
    out
}

/// A GUID parsed at compile time.
pub const CLSID: corprof::GUID = corprof::guid!("{DF63A541-5A33-4611-8829-F4E495985EE3}");

/// A profiler with every default.
#[derive(Default)]
pub struct Quiet;
impl corprof::facade::Profiler for Quiet {}

corprof::profiler!(Quiet, "DF63A541-5A33-4611-8829-F4E495985EE3");
