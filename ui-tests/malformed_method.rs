// A method written like a Rust method (with `&self`) rather than a COM slot.
use corprof::{com_interface, HRESULT};

com_interface! {
    #[iid("0A1B2C3D-0000-4000-8000-000000000001")]
    #[vtable(IFoo_Vtbl)]
    #[implement(IFoo_Impl)]
    pub unsafe interface IFoo: IUnknown {
        fn Method(&self, value: u32) -> HRESULT;
    }
}

fn main() {}
