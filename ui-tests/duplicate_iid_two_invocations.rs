// Two interfaces with one IID, declared in two invocations (which the
// macro cannot compare), exported, cast and called: the program of issue 54
// that read slot 5 of a 4-slot vtable. Declaring an interface is now an
// assertion its author writes as `unsafe interface`; without it each
// declaration is refused, so this program no longer compiles as written.
use corprof::{com_interface, export, HRESULT, S_OK};

com_interface! {
    #[iid("0A1B2C3D-0000-4000-8000-000000000054")]
    #[vtable(IA_Vtbl)]
    #[implement(IA_Impl)]
    pub interface IA: IUnknown {
        fn A() -> HRESULT;
    }
}

com_interface! {
    #[iid("0A1B2C3D-0000-4000-8000-000000000054")]
    #[vtable(IB_Vtbl)]
    #[implement(IB_Impl)]
    pub interface IB: IUnknown {
        fn B() -> HRESULT;
        fn D() -> HRESULT;
    }
}

struct O;
impl IA_Impl for O {
    unsafe fn A(&self) -> HRESULT {
        S_OK
    }
}

fn main() {
    let b: IB = export::<IA, _>(O).cast().unwrap();
    let _ = unsafe { b.D() };
}
