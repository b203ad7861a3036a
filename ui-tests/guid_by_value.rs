// COM passes GUIDs by reference (REFIID); a GUID by value is refused.
use corprof::{com_interface, GUID, HRESULT};

com_interface! {
    #[iid("0A1B2C3D-0000-4000-8000-000000000001")]
    #[vtable(IFoo_Vtbl)]
    #[implement(IFoo_Impl)]
    pub unsafe interface IFoo: IUnknown {
        fn Query(iid: GUID) -> HRESULT;
    }
}

fn main() {}
