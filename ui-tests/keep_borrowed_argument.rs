// A callback's interface arguments are borrowed for the call only: keeping
// one (here, for later use in a 'static place) is a compile error. Take a
// reference of your own with `to_owned()` instead.
use corprof::facade::{Profiler, ProfilerInfo, Result};
use corprof::metadata::mdMethodDef;
use corprof::profiling::{ICorProfilerFunctionControl, ModuleID};
use corprof::ComRef;

fn keep_for_later(_control: ComRef<'static, ICorProfilerFunctionControl>) {}

#[derive(Default)]
struct Keeper;

impl Profiler for Keeper {
    fn get_rejit_parameters(
        &self,
        _info: &ProfilerInfo,
        _module: ModuleID,
        _method: mdMethodDef,
        control: ComRef<'_, ICorProfilerFunctionControl>,
    ) -> Result<()> {
        keep_for_later(control);
        Ok(())
    }
}

fn main() {}
