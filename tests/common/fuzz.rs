//! The randomized-input generator of the fuzz tests (`cil_fuzz`,
//! `coverage_fuzz`, `services_fuzz`): a seeded splitmix64, bytes biased
//! towards each test's interesting values, and a mutator of valid inputs.
#![allow(dead_code)]

/// splitmix64, with the bytes that matter to the input under test.
pub(crate) struct Rng {
    state: u64,
    interesting: &'static [u8],
}

impl Rng {
    /// A generator from `seed` whose [`byte`](Rng::byte)s are one of
    /// `interesting` a quarter of the time.
    pub(crate) fn new(seed: u64, interesting: &'static [u8]) -> Rng {
        Rng {
            state: seed,
            interesting,
        }
    }

    /// Another generator, seeded from this one (same interesting bytes).
    pub(crate) fn fork(&mut self) -> Rng {
        Rng::new(self.next(), self.interesting)
    }

    pub(crate) fn next(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number below `n` (0 for `n` = 0).
    pub(crate) fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }

    pub(crate) fn byte(&mut self) -> u8 {
        if !self.interesting.is_empty() && self.below(4) == 0 {
            self.interesting[self.below(self.interesting.len())]
        } else {
            self.next() as u8
        }
    }

    /// Up to `max - 1` random bytes.
    pub(crate) fn bytes(&mut self, max: usize) -> Vec<u8> {
        let n = self.below(max);
        (0..n).map(|_| self.byte()).collect()
    }
}

/// `seed` with one to four random edits: a byte replaced, a bit flipped, a
/// byte inserted or removed, a truncation, a chunk duplicated, a
/// little-endian u32 set to an extreme, bytes appended.
pub(crate) fn mutate(rng: &mut Rng, seed: &[u8]) -> Vec<u8> {
    let mut v = seed.to_vec();
    for _ in 0..1 + rng.below(4) {
        match rng.below(8) {
            0 if !v.is_empty() => {
                let i = rng.below(v.len());
                v[i] = rng.byte();
            }
            1 if !v.is_empty() => {
                let i = rng.below(v.len());
                v[i] ^= 1 << rng.below(8);
            }
            2 => {
                let i = rng.below(v.len() + 1);
                v.insert(i, rng.byte());
            }
            3 if !v.is_empty() => {
                let i = rng.below(v.len());
                v.remove(i);
            }
            4 => {
                let n = rng.below(v.len() + 1);
                v.truncate(n);
            }
            5 if v.len() > 2 => {
                let a = rng.below(v.len());
                let b = a + rng.below(v.len() - a);
                let chunk = v[a..b].to_vec();
                let at = rng.below(v.len() + 1);
                v.splice(at..at, chunk);
            }
            6 if v.len() >= 4 => {
                let i = rng.below(v.len() - 3);
                let value: u32 = [0, 1, 0xFFFF, 0x1_0000, u32::MAX, 0x7FFF_FFFF][rng.below(6)];
                v[i..i + 4].copy_from_slice(&value.to_le_bytes());
            }
            _ => {
                for _ in 0..rng.below(8) {
                    v.push(rng.byte());
                }
            }
        }
    }
    v
}

/// The number in the environment variable `name` (`CORPROF_FUZZ_ITERS`,
/// `CORPROF_FUZZ_SEED`), or `default` when it is unset or not a number.
pub(crate) fn env_or(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}
