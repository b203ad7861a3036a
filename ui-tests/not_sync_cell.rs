// The runtime calls exported objects from many threads: exporting an object
// with a Cell field is refused, with one error, at the `export` call's
// argument, however many `_Impl` traits the object implements (the traits do
// not repeat the `Send + Sync` bound).
use corprof::{com_interface, export, HRESULT, S_OK};
use std::cell::Cell;

com_interface! {
    #[iid("0A1B2C3D-0000-4000-8000-000000000001")]
    #[vtable(IFoo_Vtbl)]
    #[implement(IFoo_Impl)]
    pub unsafe interface IFoo: IUnknown {
        fn Method() -> HRESULT;
    }

    #[iid("0A1B2C3D-0000-4000-8000-000000000002")]
    #[vtable(IFoo2_Vtbl)]
    #[implement(IFoo2_Impl: IFoo_Impl)]
    pub unsafe interface IFoo2: IFoo {
        fn Count() -> u32;
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

impl IFoo2_Impl for Counter {
    unsafe fn Count(&self) -> u32 {
        self.calls.get()
    }
}

fn main() {
    let _object: IFoo2 = export(Counter { calls: Cell::new(0) });
}
