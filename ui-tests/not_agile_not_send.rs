// Without `#[agile]` an interface's invoker is neither `Send` nor `Sync`
// (an apartment-threaded object must stay on its thread), and neither is
// `IUnknown`; the runtime's profiling and metadata interfaces opt in.
use corprof::{com_interface, IUnknown, HRESULT};

com_interface! {
    #[iid("0A1B2C3D-0000-4000-8000-000000000001")]
    #[vtable(IApartment_Vtbl)]
    #[implement(IApartment_Impl)]
    pub unsafe interface IApartment: IUnknown {
        fn Method() -> HRESULT;
    }
}

fn send<T: Send>(_: T) {}
fn sync<T: Sync>() {}

fn main() {
    let object: Option<IApartment> = None;
    send(object.unwrap());
    sync::<IApartment>();
    sync::<IUnknown>();
}
