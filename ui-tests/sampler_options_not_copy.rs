// `SamplerOptions` is not `Copy` (a field of any type may be added): a
// use after a move is refused; `clone` is the way to keep a copy.
use corprof::sampling::SamplerOptions;

fn take(_: SamplerOptions) {}

fn main() {
    let kept = SamplerOptions::default();
    take(kept.clone());
    let moved = SamplerOptions::default();
    take(moved);
    assert_eq!(moved.hz, 99);
}
