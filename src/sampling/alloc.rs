//! Allocation sampling by bytes: a Poisson process over the bytes a thread
//! allocates, with a mean interval of `mean` bytes (512 KiB by default).
//!
//! Each thread counts down a random number of bytes drawn from the
//! exponential distribution of mean `mean`; the allocation that crosses
//! zero is sampled and a new interval drawn. An allocation of `size` bytes
//! is thus sampled with probability `p = 1 - exp(-size / mean)`, whatever
//! the sizes around it, so a sample stands for `1 / p` allocations of its
//! size: `size / p` bytes (the estimator Go's heap profiler uses). Large
//! objects are never under-counted (`p` tends to 1 and the weight to the
//! size), small ones are weighted up (for `size` much smaller than `mean`,
//! `size / p` is about `mean`).
//!
//! The estimate of the bytes allocated at a site that allocated `B` bytes
//! in objects of size `s` is unbiased; with `n = B / mean` expected samples
//! its relative standard error is about `1 / sqrt(n)` (1,000 samples, that
//! is 512 MB allocated at the default rate: about 3%).

use core::cell::Cell;

/// The per-thread countdown and random state.
#[derive(Debug)]
pub struct AllocationCountdown {
    remaining: Cell<i64>,
    rng: Cell<u64>,
}

/// One sampled allocation's weight: how many allocations and bytes it
/// stands for.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AllocationWeight {
    /// Estimated number of objects (`1 / p`).
    pub objects: f64,
    /// Estimated bytes (`size / p`).
    pub bytes: f64,
}

/// The weight of a sampled allocation of `size` bytes, the mean interval
/// being `mean` bytes (`mean > 0`).
pub fn allocation_weight(size: u64, mean: u64) -> AllocationWeight {
    let size_f = size.max(1) as f64;
    // p = 1 - exp(-size/mean); exp_m1 keeps small ratios exact.
    let p = -(-size_f / mean.max(1) as f64).exp_m1();
    AllocationWeight {
        objects: 1.0 / p,
        bytes: size_f / p,
    }
}

/// The probability that the runtime samples each allocated byte for
/// `AllocationSampled`: 1/102,400 (dotnet/runtime
/// docs/design/features/RandomizedAllocationSampling.md, "The sampling
/// model").
pub(crate) const SAMPLED_BYTE_PROBABILITY: f64 = 1.0 / 102_400.0;

/// The weight of an `AllocationSampled` event for an object of `size`
/// bytes: (objects, bytes) it stands for. The runtime samples each byte
/// with probability `p = 1/102,400` and an object at most once, so an
/// object of `size` bytes is sampled with probability
/// `1 - (1 - p)^size`; weighing each event by its inverse, `1 / (1 - (1 -
/// p)^size)` objects and `size / (1 - (1 - p)^size)` bytes, is unbiased
/// (the "weighted samples" estimator of dotnet/runtime
/// docs/design/features/RandomizedAllocationSampling.md, "Estimation
/// Approach 1"). A small object thus stands for about 102,400 bytes, an
/// object much larger than that for itself.
pub fn allocation_sampled_weight(size: u64) -> AllocationWeight {
    let size_f = size.max(1) as f64;
    // 1 - (1 - p)^size = -expm1(size * ln(1 - p)), exact for small sizes.
    let sampled = -(size_f * (-SAMPLED_BYTE_PROBABILITY).ln_1p()).exp_m1();
    AllocationWeight {
        objects: 1.0 / sampled,
        bytes: size_f / sampled,
    }
}

impl AllocationCountdown {
    /// A countdown seeded with `seed` (any value; 0 is replaced).
    pub fn new(seed: u64) -> AllocationCountdown {
        AllocationCountdown {
            remaining: Cell::new(0),
            rng: Cell::new(seed | 1),
        }
    }

    /// xorshift64*: a uniform draw in (0, 1].
    fn uniform(&self) -> f64 {
        let mut x = self.rng.get();
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.rng.set(x);
        let bits = x.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11;
        (bits as f64 + 1.0) / (1u64 << 53) as f64
    }

    /// An exponential draw of mean `mean` bytes (at least 1).
    fn draw(&self, mean: u64) -> i64 {
        let interval = -(mean as f64) * self.uniform().ln();
        (interval as i64).max(1)
    }

    /// Counts an allocation of `size` bytes: `true` when it is sampled.
    /// The first call of a countdown draws its first interval.
    pub fn allocated(&self, size: u64, mean: u64) -> bool {
        let mut remaining = self.remaining.get();
        if remaining == 0 {
            remaining = self.draw(mean);
        }
        remaining = remaining.saturating_sub(i64::try_from(size).unwrap_or(i64::MAX));
        if remaining > 0 {
            self.remaining.set(remaining);
            return false;
        }
        self.remaining.set(self.draw(mean));
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weights_follow_the_sampling_probability() {
        // size == mean: p = 1 - 1/e.
        let w = allocation_weight(512, 512);
        let p = 1.0 - (-1.0f64).exp();
        assert!((w.objects - 1.0 / p).abs() < 1e-9);
        assert!((w.bytes - 512.0 / p).abs() < 1e-6);
        // Huge objects count as themselves; tiny ones stand for about `mean`.
        let big = allocation_weight(100 << 20, 512 << 10);
        assert!((big.bytes - (100u64 << 20) as f64).abs() < 1.0);
        let tiny = allocation_weight(24, 512 << 10);
        assert!((tiny.bytes / (512 << 10) as f64 - 1.0).abs() < 1e-4);
    }

    /// The estimator, run over a known allocation stream: two interleaved
    /// sites with different object sizes; the estimated share and total are
    /// within a few percent of the truth.
    #[test]
    fn estimates_recover_a_known_split() {
        let countdown = AllocationCountdown::new(0x1234_5678);
        let mean = 64 << 10;
        let (mut a, mut b) = (0.0, 0.0);
        let (mut true_a, mut true_b) = (0u64, 0u64);
        for i in 0..400_000u64 {
            // Site A: three 96-byte objects a round; site B: one object of
            // 64, 80 or 96 bytes.
            for _ in 0..3 {
                true_a += 96;
                if countdown.allocated(96, mean) {
                    a += allocation_weight(96, mean).bytes;
                }
            }
            let size = 64 + (i % 3) * 16;
            true_b += size;
            if countdown.allocated(size, mean) {
                b += allocation_weight(size, mean).bytes;
            }
        }
        let share = a / (a + b);
        let truth = true_a as f64 / (true_a + true_b) as f64;
        assert!((share - truth).abs() < 0.03, "share {share} truth {truth}");
        assert!((a / true_a as f64 - 1.0).abs() < 0.06, "a {a} of {true_a}");
        // A large allocation is always sampled.
        assert!(countdown.allocated(10 * mean, mean));
    }

    /// The `AllocationSampled` weights: an object of size `s` is sampled
    /// with probability `1 - (1 - 1/102400)^s`.
    #[test]
    fn allocation_sampled_weights_invert_the_chance_of_a_size() {
        let p = SAMPLED_BYTE_PROBABILITY;
        for size in [1u64, 24, 104, 10_424, 102_400, 1 << 20, 100 << 20] {
            let chance = 1.0 - (1.0 - p).powf(size as f64);
            let w = allocation_sampled_weight(size);
            assert!((w.objects * chance - 1.0).abs() < 1e-6, "{size}: {w:?}");
            assert!((w.bytes / w.objects - size as f64).abs() < 1e-6, "{size}");
        }
        // Small objects stand for about 102,400 bytes; huge ones for
        // themselves.
        assert!((allocation_sampled_weight(24).bytes / 102_400.0 - 1.0).abs() < 1e-3);
        let huge = allocation_sampled_weight(100 << 20);
        assert!((huge.bytes / (100u64 << 20) as f64 - 1.0).abs() < 1e-9);
        // Simulated: 1:1 bytes in 104- and 10,424-byte objects, each byte
        // sampled with probability p, an object at most once; the weighted
        // estimate of each is within 5% of the truth.
        let mut rng = 0x2545_F491_4F6C_DD1Du64;
        let mut uniform = || {
            rng ^= rng >> 12;
            rng ^= rng << 25;
            rng ^= rng >> 27;
            ((rng.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) as f64 + 1.0) / (1u64 << 53) as f64
        };
        let (mut small, mut large) = (0.0, 0.0);
        let rounds = 20_000u64;
        for _ in 0..rounds {
            for _ in 0..100 {
                if uniform() < 1.0 - (1.0 - p).powf(104.0) {
                    small += allocation_sampled_weight(104).bytes;
                }
            }
            if uniform() < 1.0 - (1.0 - p).powf(10_424.0) {
                large += allocation_sampled_weight(10_424).bytes;
            }
        }
        let (true_small, true_large) = ((rounds * 100 * 104) as f64, (rounds * 10_424) as f64);
        assert!(
            (small / true_small - 1.0).abs() < 0.05,
            "{small} for {true_small}"
        );
        assert!(
            (large / true_large - 1.0).abs() < 0.05,
            "{large} for {true_large}"
        );
    }

    #[test]
    fn draws_are_uniform_enough() {
        let countdown = AllocationCountdown::new(42);
        let n = 100_000;
        let mean: f64 = (0..n).map(|_| countdown.draw(1000) as f64).sum::<f64>() / n as f64;
        assert!((mean / 1000.0 - 1.0).abs() < 0.02, "mean interval {mean}");
    }
}
