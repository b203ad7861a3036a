// A keyword where `interface` belongs (`trait`): a keyword cannot name the
// local type that carries a token's span, so the message (the same as for
// a typo, `interface_typo.rs`) is for the whole invocation; one error, no
// "unused import" warning.
use corprof::{com_interface, HRESULT};

com_interface! {
    #[iid("0A1B2C3D-0000-4000-8000-000000000001")]
    #[vtable(IGreeter_Vtbl)]
    #[implement(IGreeter_Impl)]
    pub unsafe trait IGreeter: IUnknown {
        fn Count() -> u32;
        fn Greet(name: *const u16) -> HRESULT;
    }
}

fn main() {}
