// The last method without its `;`: one error, at its return type, naming
// the interface and the method; the types of the methods before it still
// count as used (no "unused import" warning for `HRESULT`).
use corprof::{com_interface, HRESULT};

com_interface! {
    #[iid("0A1B2C3D-0000-4000-8000-000000000001")]
    #[vtable(IGreeter_Vtbl)]
    #[implement(IGreeter_Impl)]
    pub unsafe interface IGreeter: IUnknown {
        fn Greet(name: *const u16) -> HRESULT;
        fn Count() -> u32
    }
}

fn main() {}
