// The fast-path targets are process-wide and `corprof::hooks` installs its
// own: replacing them is `unsafe` (it would hand the hooks' client IDs to
// another target).
use corprof::profiling::{set_enter_with_info_target, set_fast_path_targets};

fn main() {
    set_fast_path_targets(None, None, None);
    set_enter_with_info_target(None);
}
