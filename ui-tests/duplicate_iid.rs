// Two interfaces of one invocation with the same IID: `cast` would hand out
// the wrong vtable, so it does not compile.
use corprof::{com_interface, HRESULT};

com_interface! {
    #[iid("0A1B2C3D-0000-4000-8000-000000000001")]
    #[vtable(IFoo_Vtbl)]
    #[implement(IFoo_Impl)]
    pub unsafe interface IFoo: IUnknown {
        fn Foo() -> HRESULT;
    }

    #[iid("0a1b2c3d-0000-4000-8000-000000000001")]
    #[vtable(IBar_Vtbl)]
    #[implement(IBar_Impl)]
    pub unsafe interface IBar: IUnknown {
        fn Bar() -> HRESULT;
    }
}

fn main() {}
