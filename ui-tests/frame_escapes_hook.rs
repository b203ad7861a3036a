// An enter hook's frame info is valid only during the hook: it cannot be
// stored for later.
use corprof::facade::FrameInfo;
use corprof::hooks::EnterCall;
use std::sync::Mutex;

static KEPT: Mutex<Option<FrameInfo<'static>>> = Mutex::new(None);

fn enter(call: &EnterCall<'_>) {
    if let Ok(arguments) = call.arguments() {
        *KEPT.lock().unwrap() = Some(arguments.frame);
    }
}

fn main() {}
