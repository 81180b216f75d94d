//! Sorting sprites by a float key, fast and deterministically.
//!
//! Translucent sprites must be drawn back to front, every frame, for up to
//! millions of particles. A comparison sort costs `n log n` unpredictable
//! branches; an LSD radix sort on the key's bits is three linear passes. The
//! float is mapped to a `u32` whose unsigned order is the float's order
//! (flip all bits of negatives, the sign bit of positives), inverted for a
//! descending sort, and packed above the particle index in a `u64`. The
//! radix passes are stable, so equal keys keep index order and the result
//! is the same on every run.

/// Below this many keys a comparison sort on the packed `u64`s is faster.
const SMALL: usize = 256;
const RADIX_BITS: u32 = 11;
const BUCKETS: usize = 1 << RADIX_BITS;
const PASSES: u32 = 3; // 3 × 11 ≥ 32 key bits

/// `u32` whose unsigned order matches the float's total order (−∞ < … < +∞ < NaN).
#[inline]
fn orderable(key: f32) -> u32 {
    let bits = key.to_bits();
    if bits & 0x8000_0000 != 0 {
        !bits
    } else {
        bits | 0x8000_0000
    }
}

/// Indices of `keys` ordered from the largest key to the smallest; equal keys
/// stay in index order. Written to `order` (cleared first); `scratch` is
/// reused working memory.
pub fn order_descending(keys: &[f32], order: &mut Vec<u32>, scratch: &mut Vec<u64>) {
    assert!(keys.len() <= u32::MAX as usize, "at most u32::MAX keys");
    order.clear();
    let n = keys.len();
    let mut packed: Vec<u64> = keys.iter().enumerate().map(|(i, k)| (u64::from(!orderable(*k)) << 32) | i as u64).collect();
    if n <= SMALL {
        packed.sort_unstable();
    } else {
        radix_sort_high_u32(&mut packed, scratch);
    }
    order.extend(packed.iter().map(|p| *p as u32));
}

/// Stable LSD radix sort of `data` by its upper 32 bits.
fn radix_sort_high_u32(data: &mut Vec<u64>, scratch: &mut Vec<u64>) {
    let n = data.len();
    let mut counts = vec![[0u32; BUCKETS]; PASSES as usize];
    for v in data.iter() {
        let key = (v >> 32) as u32;
        for (p, count) in counts.iter_mut().enumerate() {
            count[((key >> (p as u32 * RADIX_BITS)) as usize) & (BUCKETS - 1)] += 1;
        }
    }
    scratch.clear();
    scratch.resize(n, 0);
    for (p, count) in counts.iter_mut().enumerate() {
        // A pass where every key falls in one bucket would only copy.
        if count.iter().any(|&c| c as usize == n) {
            continue;
        }
        let mut sum = 0u32;
        for c in count.iter_mut() {
            let this = *c;
            *c = sum;
            sum += this;
        }
        let shift = 32 + p as u32 * RADIX_BITS;
        for v in data.iter() {
            let bucket = ((v >> shift) as usize) & (BUCKETS - 1);
            scratch[count[bucket] as usize] = *v;
            count[bucket] += 1;
        }
        std::mem::swap(data, scratch);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn reference(keys: &[f32]) -> Vec<u32> {
        let mut idx: Vec<u32> = (0..keys.len() as u32).collect();
        idx.sort_by(|&a, &b| keys[b as usize].total_cmp(&keys[a as usize]).then(a.cmp(&b)));
        idx
    }

    #[test]
    fn orders_large_inputs_like_a_stable_comparison_sort() {
        let mut rng = renderer::Rng::with_stream(9, 9);
        let keys: Vec<f32> = (0..5000).map(|i| if i % 7 == 0 { 3.0 } else { rng.range_f32(-50.0, 50.0) }).collect();
        let (mut order, mut scratch) = (Vec::new(), Vec::new());
        order_descending(&keys, &mut order, &mut scratch);
        assert_eq!(order, reference(&keys));
    }

    proptest! {
        #[test]
        fn matches_reference(keys in proptest::collection::vec(test_support::f32_in(-1e6, 1e6), 0..1200)) {
            let (mut order, mut scratch) = (Vec::new(), Vec::new());
            order_descending(&keys, &mut order, &mut scratch);
            prop_assert_eq!(order, reference(&keys));
        }
    }
}
