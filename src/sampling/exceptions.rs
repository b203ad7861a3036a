//! Exceptions by type at their throw stack: every thrown exception counted
//! up to a rate, a uniform sample with upweighted counts beyond.
//!
//! In each one-second window, the first `limit` exceptions are recorded
//! with a count of 1 each. The `n`-th beyond (`n > limit`) is recorded
//! with probability `p = limit / n` and a count of `1 / p`, rounded up or
//! down at random so that its expectation is exactly `1 / p`: every
//! exception contributes 1 in expectation, so the totals per type and
//! stack are unbiased, while the exceptions walked and recorded per second
//! grow only as `limit * (1 + ln(N / limit))` for `N` thrown.

use core::time::Duration;
use std::sync::Mutex;
use std::time::Instant;

/// The default rate below which every exception is recorded, per second.
pub const EXCEPTIONS_PER_SECOND: u32 = 500;

/// The per-second rate limiter of exception (and contention) sampling.
#[derive(Debug)]
pub struct RateSampler {
    limit: u64,
    state: Mutex<Window>,
}

#[derive(Debug)]
struct Window {
    start: Option<Instant>,
    seen: u64,
    rng: u64,
}

impl RateSampler {
    /// A sampler recording every exception up to `limit` per second (at
    /// least 1), seeded with `seed`.
    pub fn new(limit: u32, seed: u64) -> RateSampler {
        RateSampler {
            limit: u64::from(limit.max(1)),
            state: Mutex::new(Window {
                start: None,
                seen: 0,
                rng: seed | 1,
            }),
        }
    }

    /// For an exception thrown at `now`: `Some(count)` when it is to be
    /// recorded with that count, `None` when it is left out.
    pub fn weigh(&self, now: Instant) -> Option<u64> {
        let mut w = self.state.lock().unwrap_or_else(|p| p.into_inner());
        if w.start
            .is_none_or(|s| now.saturating_duration_since(s) >= Duration::from_secs(1))
        {
            w.start = Some(now);
            w.seen = 0;
        }
        w.seen += 1;
        if w.seen <= self.limit {
            return Some(1);
        }
        // xorshift64*, a uniform draw in [0, 1).
        let mut x = w.rng;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        w.rng = x;
        let u = (x.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) as f64 / (1u64 << 53) as f64;
        let n = w.seen;
        // Recorded with p = limit / n: u < p.
        if u * n as f64 >= self.limit as f64 {
            return None;
        }
        // 1/p = n / limit, rounded at random: floor, plus 1 with the
        // fraction's probability (a second draw from the same u, rescaled).
        let (whole, fraction) = (n / self.limit, n % self.limit);
        let v = u * n as f64 / self.limit as f64; // uniform in [0, 1) given u < p
        Some(whole + u64::from(v * (self.limit as f64) < fraction as f64))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The counts of a burst far beyond the limit add up to the number
    /// thrown, within the sampling error, while few are recorded.
    #[test]
    fn a_burst_is_counted_without_bias() {
        let sampler = RateSampler::new(500, 0x1234);
        let start = Instant::now();
        let thrown = 200_000u64;
        let (mut total, mut recorded) = (0u64, 0u64);
        for _ in 0..thrown {
            if let Some(count) = sampler.weigh(start) {
                total += count;
                recorded += 1;
            }
        }
        let error = (total as f64 / thrown as f64 - 1.0).abs();
        assert!(error < 0.05, "{total} counted for {thrown}");
        // 500 * (1 + ln(400)) = about 3,500.
        assert!((2_500..=4_500).contains(&recorded), "{recorded} recorded");
    }

    #[test]
    fn below_the_limit_every_exception_counts_one_and_windows_reset() {
        let sampler = RateSampler::new(3, 7);
        let t = Instant::now();
        assert_eq!(
            [t, t, t].map(|t| sampler.weigh(t)),
            [Some(1), Some(1), Some(1)]
        );
        // A new second: the count starts again.
        let later = t + Duration::from_millis(1000);
        assert_eq!(sampler.weigh(later), Some(1));
    }

    /// Unbiased per exception: over many windows, the n-th exception of a
    /// window contributes 1 on average whatever n.
    #[test]
    fn each_position_contributes_one_on_average() {
        let limit = 10;
        let sampler = RateSampler::new(limit, 99);
        let mut t = Instant::now();
        let windows = 20_000;
        let mut sums = [0u64; 40];
        for _ in 0..windows {
            t += Duration::from_secs(1);
            for sum in sums.iter_mut() {
                *sum += sampler.weigh(t).unwrap_or(0);
            }
        }
        for (n, &sum) in sums.iter().enumerate() {
            let mean = sum as f64 / windows as f64;
            // p = 10/40 at worst: the mean of 20,000 draws of variance
            // (1-p)/p = 3 has a standard error of 0.012.
            assert!((mean - 1.0).abs() < 0.06, "position {n}: mean {mean}");
        }
    }
}
