// A derived interface can only be exported by a type that implements the parents too.
use corprof::{com_interface, export, HRESULT, S_OK};

com_interface! {
    #[iid("0A1B2C3D-0000-4000-8000-000000000001")]
    #[vtable(IBase_Vtbl)]
    #[implement(IBase_Impl)]
    pub unsafe interface IBase: IUnknown {
        fn Base() -> HRESULT;
    }

    #[iid("0A1B2C3D-0000-4000-8000-000000000002")]
    #[vtable(IDerived_Vtbl)]
    #[implement(IDerived_Impl: IBase_Impl)]
    pub unsafe interface IDerived: IBase {
        fn Derived() -> HRESULT;
    }
}

struct Object;

impl IDerived_Impl for Object {
    unsafe fn Derived(&self) -> HRESULT {
        S_OK
    }
}

fn main() {
    let _d: IDerived = export(Object);
}
