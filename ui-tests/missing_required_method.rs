// A method without a default body must be implemented.
use corprof::{com_interface, HRESULT, S_OK};

com_interface! {
    #[iid("0A1B2C3D-0000-4000-8000-000000000001")]
    #[vtable(IFoo_Vtbl)]
    #[implement(IFoo_Impl)]
    pub unsafe interface IFoo: IUnknown {
        fn Required() -> HRESULT;
        fn Optional() -> HRESULT { S_OK }
    }
}

struct Object;

impl IFoo_Impl for Object {}

fn main() {}
