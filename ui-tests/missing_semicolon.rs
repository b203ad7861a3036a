// A method without its `;`: one error naming the interface and the method,
// and no "unused import" warning for the types it uses.
use corprof::{com_interface, HRESULT};

com_interface! {
    #[iid("0A1B2C3D-0000-4000-8000-000000000001")]
    #[vtable(IGreeter_Vtbl)]
    #[implement(IGreeter_Impl)]
    pub unsafe interface IGreeter: IUnknown {
        fn Greet(name: *const u16) -> HRESULT
        fn Count() -> u32;
    }
}

fn main() {}
