// `Option<u32>` is not a COM return type: the crate's own message, not a
// macro matcher error.
use corprof::com_interface;

com_interface! {
    #[iid("0A1B2C3D-0000-4000-8000-000000000001")]
    #[vtable(IFoo_Vtbl)]
    #[implement(IFoo_Impl)]
    pub unsafe interface IFoo: IUnknown {
        fn Get() -> Option<u32>;
    }
}

fn main() {}
