// An ID's field is private: `as_raw()` reads it, and nothing outside the
// crate can write it (which would invent an ID in place).
use corprof::profiling::FunctionID;

fn main() {
    let mut function = FunctionID::NULL;
    function.0 = 5;
}
