// Structs are not returned by value from COM methods.
use corprof::{com_interface, AbiParam};

#[repr(C)]
#[derive(Clone, Copy)]
pub struct Point {
    x: i32,
    y: i32,
}
// Even a type that may be passed by value...
unsafe impl AbiParam for Point {}

com_interface! {
    #[iid("0A1B2C3D-0000-4000-8000-000000000001")]
    #[vtable(IFoo_Vtbl)]
    #[implement(IFoo_Impl)]
    pub unsafe interface IFoo: IUnknown {
        // ...may not be returned.
        fn Origin() -> Point;
    }
}

fn main() {}
