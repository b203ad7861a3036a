// An Rc cannot be shared across threads, so an object holding one cannot be exported,
// not even as plain IUnknown.
use corprof::{export, IUnknown};
use std::rc::Rc;

struct Shared {
    _data: Rc<u32>,
}

fn main() {
    let _unknown: IUnknown = export(Shared { _data: Rc::new(1) });
}
