// A `#![forbid(unsafe_code)]` crate that uses an exported object cannot call
// its pointer-taking methods with invented pointers: every `_Impl` method is
// an `unsafe fn` (its caller guarantees the COM contract, as the vtable
// thunk's caller does), so the call needs an `unsafe` block it may not write.
mod greeter {
    use corprof::{com_interface, HRESULT, S_OK};

    com_interface! {
        #[iid("0A1B2C3D-0000-4000-8000-000000000055")]
        #[vtable(IGreeter_Vtbl)]
        #[implement(IGreeter_Impl)]
        pub unsafe interface IGreeter: IUnknown {
            fn Greet(name: *const u16, out: *mut i32) -> HRESULT;
        }
    }

    pub struct Greeter;
    impl IGreeter_Impl for Greeter {
        unsafe fn Greet(&self, name: *const u16, out: *mut i32) -> HRESULT {
            // SAFETY: the caller guarantees valid pointers (the trait's contract).
            unsafe { *out = i32::from(*name) };
            S_OK
        }
    }
}

#[forbid(unsafe_code)]
mod user {
    use super::greeter::{Greeter, IGreeter_Impl};

    pub fn misuse() {
        let greeter = std::sync::Arc::new(Greeter);
        let _ = greeter.Greet(8 as *const u16, 16 as *mut i32);
    }
}

fn main() {
    user::misuse();
}
