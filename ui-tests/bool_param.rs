// Rust's `bool` is not the Windows `BOOL` (a 32-bit integer).
use corprof::{com_interface, HRESULT};

com_interface! {
    #[iid("0A1B2C3D-0000-4000-8000-000000000001")]
    #[vtable(IShape_Vtbl)]
    #[implement(IShape_Impl)]
    pub unsafe interface IShape: IUnknown {
        fn SetVisible(visible: bool) -> HRESULT;
    }
}

fn main() {}
