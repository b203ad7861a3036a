// A `String` return: one error, saying that it cannot be returned from a COM
// method and how to return it instead.
use corprof::{com_interface, HRESULT};

com_interface! {
    #[iid("0A1B2C3D-0000-4000-8000-000000000001")]
    #[vtable(IGreeter_Vtbl)]
    #[implement(IGreeter_Impl)]
    pub unsafe interface IGreeter: IUnknown {
        fn Name() -> String;
        fn Greet(name: *const u16) -> HRESULT;
    }
}

fn main() {}
