// The IID is checked at compile time: a typo in the GUID string fails the build.
use corprof::{com_interface, HRESULT};

com_interface! {
    #[iid("0A1B2C3D-0000-4000-8000-00000000001G")]
    #[vtable(IBad_Vtbl)]
    #[implement(IBad_Impl)]
    pub unsafe interface IBad: IUnknown {
        fn Method() -> HRESULT;
    }
}

fn main() {}
