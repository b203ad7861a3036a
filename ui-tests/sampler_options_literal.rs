// `SamplerOptions` is `#[non_exhaustive]`: outside the crate a struct
// literal does not build (options may be added); the setters do.
use corprof::sampling::SamplerOptions;

fn main() {
    let options = SamplerOptions::default().with_hz(199);
    assert_eq!(options.hz, 199);
    let _refused = SamplerOptions {
        hz: 199,
        ..SamplerOptions::default()
    };
}
