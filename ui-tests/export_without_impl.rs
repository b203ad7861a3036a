// Exporting a type as an interface whose trait it does not implement.
use corprof::{com_interface, export, HRESULT};

com_interface! {
    #[iid("0A1B2C3D-0000-4000-8000-000000000001")]
    #[vtable(IFoo_Vtbl)]
    #[implement(IFoo_Impl)]
    pub unsafe interface IFoo: IUnknown {
        fn Method() -> HRESULT;
    }
}

struct Plain;

fn main() {
    let _foo: IFoo = export(Plain);
}
