// The runtime calls exported objects from many threads: a Cell field is refused.
use corprof::{com_interface, HRESULT, S_OK};
use std::cell::Cell;

com_interface! {
    #[iid("0A1B2C3D-0000-4000-8000-000000000001")]
    #[vtable(IFoo_Vtbl)]
    #[implement(IFoo_Impl)]
    pub unsafe interface IFoo: IUnknown {
        fn Method() -> HRESULT;
    }
}

struct Counter {
    calls: Cell<u32>,
}

impl IFoo_Impl for Counter {
    unsafe fn Method(&self) -> HRESULT {
        self.calls.set(self.calls.get() + 1);
        S_OK
    }
}

fn main() {}
