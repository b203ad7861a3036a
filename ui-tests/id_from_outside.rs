// The runtime's IDs are pointers into its own structures, and the safe API
// hands them to runtime calls that dereference them: code outside the crate
// cannot make one up; `unsafe { FunctionID::from_raw(n) }` is the way in.
use corprof::profiling::FunctionID;

fn main() {
    let _invented = FunctionID(5);
}
