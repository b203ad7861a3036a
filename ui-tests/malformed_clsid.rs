// The CLSID of a served class is checked at compile time.
use corprof::{com_class, export, IUnknown};

struct Server;

com_class!("DF63A541-5A33-4611-8829-F4E495985EE", || export::<IUnknown, _>(Server));

fn main() {}
