// A reference parameter: COM passes pointers (`*mut f64`).
use corprof::{com_interface, HRESULT};

com_interface! {
    #[iid("0A1B2C3D-0000-4000-8000-000000000001")]
    #[vtable(IShape_Vtbl)]
    #[implement(IShape_Impl)]
    pub unsafe interface IShape: IUnknown {
        fn Area(out: &mut f64) -> HRESULT;
    }
}

fn main() {}
