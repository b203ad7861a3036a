//! The facade's door: [`export_profiler`] hands a [`Profiler`] to the
//! runtime as its callback object, and [`profiler!`](crate::profiler)
//! registers a type as a `cdylib`'s profiler. The top room: it names the
//! adapter, which names everything else.

use super::adapter::ProfilerCallback;
use super::profiler::Profiler;
use crate::profiling::ICorProfilerCallback11;
use crate::IUnknown;

/// Exports `profiler` as the runtime's callback object
/// (`ICorProfilerCallback11`, which answers every lower version too) and
/// returns its `IUnknown`. [`profiler!`](crate::profiler) calls it.
pub fn export_profiler<P: Profiler>(profiler: P) -> IUnknown {
    let callback: ICorProfilerCallback11 = crate::export(ProfilerCallback::new(profiler));
    // SAFETY: `into_raw` hands over the exported object's reference, and
    // every COM vtable begins with IUnknown's.
    unsafe { IUnknown::from_raw(callback.into_raw()) }.expect("export never returns null")
}

/// Registers a [`Profiler`] type as this `cdylib`'s profiler: exports
/// `DllGetClassObject` (answering only the given CLSID) and
/// `DllCanUnloadNow`.
///
/// `profiler!(Type, "CLSID")` creates instances with `Type::default()`;
/// `profiler!(Type, "CLSID", constructor)` with a `fn() -> Type`. The CLSID
/// is what `CORECLR_PROFILER` names; a malformed one is a compile error.
///
/// ```no_run
/// #[derive(Default)]
/// struct Quiet;
/// impl corprof::facade::Profiler for Quiet {}
/// corprof::profiler!(Quiet, "{DF63A541-5A33-4611-8829-F4E495985EE3}");
/// ```
#[macro_export]
macro_rules! profiler {
    ($ty:ty, $clsid:expr $(,)?) => {
        $crate::profiler!(
            $ty,
            $clsid,
            <$ty as $crate::__private::core::default::Default>::default
        );
    };
    ($ty:ty, $clsid:expr, $constructor:expr $(,)?) => {
        $crate::com_class!($clsid, || {
            let constructor: fn() -> $ty = $constructor;
            $crate::facade::export_profiler::<$ty>(constructor())
        });
    };
}
