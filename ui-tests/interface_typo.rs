// A typo in `interface`: the message names the interface and the word found,
// and the types of its methods count as used (no "unused import" warning).
use corprof::{com_interface, HRESULT};

com_interface! {
    #[iid("0A1B2C3D-0000-4000-8000-000000000001")]
    #[vtable(IGreeter_Vtbl)]
    #[implement(IGreeter_Impl)]
    pub unsafe interfce IGreeter: IUnknown {
        fn Count() -> u32;
        fn Greet(name: *const u16) -> HRESULT;
    }
}

fn main() {}
