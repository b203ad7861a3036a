// After `#[implement(...)]` the only attribute is `#[agile]`; a misspelt
// one is named.
use corprof::{com_interface, HRESULT};

com_interface! {
    #[iid("0A1B2C3D-0000-4000-8000-000000000001")]
    #[vtable(IFoo_Vtbl)]
    #[implement(IFoo_Impl)]
    #[agil]
    pub unsafe interface IFoo: IUnknown {
        fn Method() -> HRESULT;
    }
}

fn main() {}
