// The parent must be an interface declared with com_interface!.
use corprof::{com_interface, HRESULT};

pub struct NotAnInterface;

com_interface! {
    #[iid("0A1B2C3D-0000-4000-8000-000000000001")]
    #[vtable(IChild_Vtbl)]
    #[implement(IChild_Impl)]
    pub unsafe interface IChild: NotAnInterface {
        fn Method() -> HRESULT;
    }
}

fn main() {}
