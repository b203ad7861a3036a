// Calling a method the interface does not declare.
use corprof::{com_interface, HRESULT};

com_interface! {
    #[iid("0A1B2C3D-0000-4000-8000-000000000001")]
    #[vtable(IFoo_Vtbl)]
    #[implement(IFoo_Impl)]
    pub unsafe interface IFoo: IUnknown {
        fn Method() -> HRESULT;
    }
}

fn call(foo: &IFoo) -> HRESULT {
    unsafe { foo.Missing() }
}

fn main() {}
