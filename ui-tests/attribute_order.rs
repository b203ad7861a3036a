// The IID comes first, then the vtable and trait names.
use corprof::{com_interface, HRESULT};

com_interface! {
    #[vtable(IFoo_Vtbl)]
    #[iid("0A1B2C3D-0000-4000-8000-000000000001")]
    #[implement(IFoo_Impl)]
    pub unsafe interface IFoo: IUnknown {
        fn Method() -> HRESULT;
    }
}

fn main() {}
