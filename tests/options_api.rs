//! Outside the crate (as a user sees it), options are built with `Default`
//! and the setters, and a refused option names its field. (That a struct
//! literal is refused is `ui-tests/sampler_options_literal.rs`.)
#![cfg(all(feature = "sampling", feature = "coverage"))]

use corprof::coverage::CoverageOptions;
use corprof::sampling::export::ExportOptions;
use corprof::sampling::{AllocationSource, OptionError, SamplerOptions, SamplingMode};
use std::time::Duration;

#[test]
fn options_are_built_with_the_setters() {
    let options = SamplerOptions::default()
        .with_hz(199)
        .with_allocation_mean_bytes(None)
        .with_allocation_source(AllocationSource::AllocationTick)
        .with_period(Duration::from_secs(10))
        .with_exceptions_per_second(Some(7))
        .with_contentions_per_second(None)
        .with_mode(SamplingMode::SuspendRuntime)
        .with_wall_threads_per_tick(3);
    assert_eq!(options.hz, 199);
    assert_eq!(options.allocation_mean_bytes, None);
    assert_eq!(options.allocation_source, AllocationSource::AllocationTick);
    assert_eq!(options.period, Duration::from_secs(10));
    assert_eq!(options.exceptions_per_second, Some(7));
    assert_eq!(options.contentions_per_second, None);
    assert_eq!(options.mode, SamplingMode::SuspendRuntime);
    assert_eq!(options.wall_threads_per_tick, 3);
    assert_eq!(options.validate(), Ok(()));

    // A field assigned works too (non_exhaustive forbids literals only).
    let mut zero = options.clone();
    zero.hz = 0;
    let error: OptionError = zero.validate().unwrap_err();
    assert_eq!((error.field, error.value.as_str()), ("hz", "0"));
    assert_eq!(corprof::HRESULT::from(error.clone()), corprof::E_INVALIDARG);
    assert_eq!(corprof::Error::from(error).code(), corprof::E_INVALIDARG);

    let export = ExportOptions::default().with_keep(5).with_app("svc");
    assert_eq!((export.keep, export.app.as_str()), (5, "svc"));

    let coverage = CoverageOptions::default()
        .with_output_dir("/tmp/cov")
        .with_branches(false);
    assert_eq!(coverage.output_dir, std::path::PathBuf::from("/tmp/cov"));
    assert!(!coverage.branches);
}
