// `&self` written in a declaration: `this` is implicit.
use corprof::com_interface;

com_interface! {
    #[iid("0A1B2C3D-0000-4000-8000-000000000001")]
    #[vtable(IShape_Vtbl)]
    #[implement(IShape_Impl)]
    pub unsafe interface IShape: IUnknown {
        fn Sides() -> u32;
        fn Area(&self) -> f64;
    }
}

fn main() {}
