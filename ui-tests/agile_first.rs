// `#[agile]` comes after the three required attributes, not before them.
use corprof::{com_interface, HRESULT};

com_interface! {
    #[agile]
    #[iid("0A1B2C3D-0000-4000-8000-000000000001")]
    #[vtable(IFoo_Vtbl)]
    #[implement(IFoo_Impl)]
    pub unsafe interface IFoo: IUnknown {
        fn Method() -> HRESULT;
    }
}

fn main() {}
