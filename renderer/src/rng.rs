//! The workspace's one random number generator: small, seeded and
//! deterministic.
//!
//! Users: particle simulation (one stream per emitter), instancing's
//! per-instance random value ([`mix64`] of a seed and a stable id), the
//! frame stats' draw-list digest (`mix64` of each draw with its position), and the
//! tests, fuzzers and samples (through `test_support`). Particle simulation promises "same seed, same particles, bit for bit", on
//! every platform and whatever the thread count. That rules out thread-local
//! or OS-seeded generators, and it wants a generator whose output is defined
//! by this file alone, so a dependency update can never change a simulation.
//! PCG32 (O'Neill, XSH-RR 64/32) is small, fast and statistically good enough
//! for visual effects; SplitMix64 spreads a user seed and a stream number into
//! well-mixed PCG state, so emitter 0 and emitter 1 of one system (and seeds 1
//! and 2) do not produce correlated sequences.

/// SplitMix64's finaliser: a cheap, bijective, well-mixed step over 64
/// bits (hashes a seed, a stream or an id).
#[inline]
pub fn mix64(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

/// PCG32 generator (64-bit state, 32-bit output).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rng {
    state: u64,
    inc: u64,
}

const PCG_MULTIPLIER: u64 = 6_364_136_223_846_793_005;

impl Rng {
    /// A generator for `seed` (stream 0).
    pub fn new(seed: u64) -> Self {
        Self::with_stream(seed, 0)
    }

    /// A generator for `seed`, on independent stream `stream` (for example an
    /// emitter index).
    pub fn with_stream(seed: u64, stream: u64) -> Self {
        let mut rng = Rng {
            state: 0,
            // The increment must be odd.
            inc: (mix64(stream ^ 0xDA94_2042_E4DD_58B5) << 1) | 1,
        };
        rng.next_u32();
        rng.state = rng.state.wrapping_add(mix64(seed));
        rng.next_u32();
        rng
    }

    /// The next 32 random bits.
    #[inline]
    pub fn next_u32(&mut self) -> u32 {
        let old = self.state;
        self.state = old.wrapping_mul(PCG_MULTIPLIER).wrapping_add(self.inc);
        let xorshifted = (((old >> 18) ^ old) >> 27) as u32;
        let rot = (old >> 59) as u32;
        xorshifted.rotate_right(rot)
    }

    /// The next 64 random bits (two draws, the first in the high half).
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        (u64::from(self.next_u32()) << 32) | u64::from(self.next_u32())
    }

    /// A number below `n`.
    ///
    /// # Panics
    /// When `n` is 0.
    pub fn below(&mut self, n: usize) -> usize {
        assert!(n > 0, "Rng::below(0)");
        (self.next_u64() % n as u64) as usize
    }

    /// A float uniformly distributed in `[0, 1)` with 24 bits of precision.
    #[inline]
    pub fn next_f32(&mut self) -> f32 {
        (self.next_u32() >> 8) as f32 * (1.0 / 16_777_216.0)
    }

    /// A float uniformly distributed in `[min, max]` (`min` when equal).
    #[inline]
    pub fn range_f32(&mut self, min: f32, max: f32) -> f32 {
        min + (max - min) * self.next_f32()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_sequence_and_streams_differ() {
        let mut a = Rng::with_stream(7, 0);
        let mut b = Rng::with_stream(7, 0);
        let mut c = Rng::with_stream(7, 1);
        let mut d = Rng::with_stream(8, 0);
        let sa: Vec<u32> = (0..16).map(|_| a.next_u32()).collect();
        let sb: Vec<u32> = (0..16).map(|_| b.next_u32()).collect();
        let sc: Vec<u32> = (0..16).map(|_| c.next_u32()).collect();
        let sd: Vec<u32> = (0..16).map(|_| d.next_u32()).collect();
        assert_eq!(sa, sb);
        assert_ne!(sa, sc);
        assert_ne!(sa, sd);
    }

    #[test]
    fn floats_are_in_unit_interval_with_mean_near_half() {
        let mut r = Rng::with_stream(42, 3);
        let n = 100_000;
        let mut sum = 0.0f64;
        for _ in 0..n {
            let x = r.next_f32();
            assert!((0.0..1.0).contains(&x));
            sum += f64::from(x);
        }
        let mean = sum / f64::from(n);
        assert!((mean - 0.5).abs() < 0.01, "mean {mean}");
    }

    #[test]
    fn new_is_stream_zero_and_below_stays_below() {
        let (mut a, mut b) = (Rng::new(11), Rng::with_stream(11, 0));
        assert_eq!(a.next_u64(), b.next_u64());
        for n in [1, 2, 7, 1000] {
            assert!((0..1000).all(|_| a.below(n) < n));
        }
    }
}
