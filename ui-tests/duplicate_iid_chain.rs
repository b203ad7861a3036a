// An interface with the IID of one it inherits from (here IUnknown's, two
// levels up): QueryInterface would answer it with the wrong vtable.
use corprof::{com_interface, HRESULT};

com_interface! {
    #[iid("0A1B2C3D-0000-4000-8000-000000000001")]
    #[vtable(IBase_Vtbl)]
    #[implement(IBase_Impl)]
    pub unsafe interface IBase: IUnknown {
        fn Base() -> HRESULT;
    }

    #[iid("{00000000-0000-0000-C000-000000000046}")]
    #[vtable(IDerived_Vtbl)]
    #[implement(IDerived_Impl: IBase_Impl)]
    pub unsafe interface IDerived: IBase {
        fn Derived() -> HRESULT;
    }
}

fn main() {}
