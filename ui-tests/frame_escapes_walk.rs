// A stack walk's frame info is valid only during the walk's callback: it
// cannot be kept and handed to the runtime afterwards.
use corprof::facade::{FrameInfo, ProfilerInfo, StackFrame};
use corprof::profiling::ThreadID;

fn name_later(info: &ProfilerInfo) {
    let mut kept: Option<FrameInfo<'_>> = None;
    let mut function = None;
    let _ = info.stack_snapshot(ThreadID::NULL, |frame| {
        if let StackFrame::Managed { function: f, frame, .. } = frame {
            function = Some(f);
            kept = Some(frame);
        }
        true
    });
    let _ = info.instantiated_function_name_in_frame(function.unwrap(), kept.unwrap());
}

fn main() {}
