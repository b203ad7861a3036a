// Implementing a method with a signature other than the declared one.
use corprof::{com_interface, HRESULT, S_OK};

com_interface! {
    #[iid("0A1B2C3D-0000-4000-8000-000000000001")]
    #[vtable(IFoo_Vtbl)]
    #[implement(IFoo_Impl)]
    pub unsafe interface IFoo: IUnknown {
        fn Method(value: u32) -> HRESULT;
    }
}

struct Object;

impl IFoo_Impl for Object {
    unsafe fn Method(&self, value: u64) -> HRESULT {
        let _ = value;
        S_OK
    }
}

fn main() {}
