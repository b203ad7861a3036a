// The `#[iid]` attribute is missing.
use corprof::{com_interface, HRESULT};

com_interface! {
    #[iid("0A1B2C3D-0000-4000-8000-000000000001")]
    #[vtable(IFoo_Vtbl)]
    #[implement(IFoo_Impl)]
    pub unsafe interface IFoo: IUnknown {
        fn Foo() -> HRESULT;
    }

    /// Documented, but without an IID.
    #[vtable(IBar_Vtbl)]
    #[implement(IBar_Impl)]
    pub unsafe interface IBar: IUnknown {
        fn Bar() -> HRESULT;
    }
}

fn main() {}
