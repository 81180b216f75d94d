//! The order in which a batch of added primitives takes its slots: space
//! order.
//!
//! Culling skips a chunk of [`CULL_CHUNK`] slots on the box around its
//! spheres (`visibility`), which pays only when a chunk's primitives are
//! near each other. Slots are handed out in the order a batch's adds are
//! applied, so a batch applied in queue order keeps whatever order its
//! maker used. A level built cell by cell culls well that way. Bevy's
//! many_cubes sphere (a Fibonacci spiral: consecutive points 137.5° apart)
//! or a shuffled spawn list does not: every chunk is a band or a cloud
//! across the whole scene, its box meets every view, and culling tests
//! every primitive.
//!
//! So a batch of more than one chunk is applied in Z-order (Morton order)
//! of its primitives' bounds centres, quantized over the batch's own box:
//! consecutive slots are neighbours in space whatever order the adds came
//! in. The sort is stable (equal codes keep queue order) and depends on
//! the batch alone, so every run, thread count and frames-in-flight
//! setting hands out the same slots. A batch of one chunk or less keeps
//! queue order: within a chunk, order cannot help culling.

use super::CULL_CHUNK;
use glam::Vec3;

/// Bits per axis of the Z-order code (3 × 21 = 63).
const BITS: u32 = 21;

/// The order to apply a batch whose primitives' bounds centres are
/// `centres`: indices into it, or `None` to keep queue order (a batch of
/// one chunk or less, whose centres are not read).
pub(crate) fn space_order(centres: impl ExactSizeIterator<Item = Vec3>) -> Option<Vec<usize>> {
    if centres.len() <= CULL_CHUNK {
        return None;
    }
    let centres: Vec<Vec3> = centres.collect();
    // The batch's box, over the finite centres (a non-finite one codes as
    // the box's corner: it still gets a slot, in queue order among such).
    let finite = centres.iter().filter(|c| c.is_finite());
    let (min, max) = finite.fold((Vec3::splat(f32::INFINITY), Vec3::splat(f32::NEG_INFINITY)), |(lo, hi), &c| (lo.min(c), hi.max(c)));
    let cells = ((1u32 << BITS) - 1) as f32;
    let scale = (max - min).max(Vec3::splat(f32::MIN_POSITIVE)).recip() * cells;
    let mut keyed: Vec<(u64, usize)> = centres
        .iter()
        .enumerate()
        .map(|(i, &c)| {
            // `as u32` saturates, and takes NaN to 0.
            let q = ((c - min) * scale).clamp(Vec3::ZERO, Vec3::splat(cells));
            (morton(q.x as u32, q.y as u32, q.z as u32), i)
        })
        .collect();
    // (code, queue index) pairs are distinct: unstable is stable here.
    keyed.sort_unstable();
    Some(keyed.into_iter().map(|(_, i)| i).collect())
}

/// Puts `items` in `order` (`items[k]` becomes what was `items[order[k]]`;
/// `order` a permutation of the indices) in place, by following its
/// cycles: a million-primitive batch is not held twice.
pub(crate) fn permute<T>(items: &mut [T], order: &[usize]) {
    debug_assert_eq!(items.len(), order.len());
    let mut placed = vec![false; items.len()];
    for start in 0..items.len() {
        let mut k = start;
        while !placed[k] {
            placed[k] = true;
            let from = order[k];
            if from == start {
                break;
            }
            items.swap(k, from);
            k = from;
        }
    }
}

/// The Z-order code of a cell: the bits of `x`, `y` and `z` (each below
/// 2^21) interleaved, `x` lowest.
fn morton(x: u32, y: u32, z: u32) -> u64 {
    spread(x) | spread(y) << 1 | spread(z) << 2
}

/// The low 21 bits of `v`, two zero bits between each.
fn spread(v: u32) -> u64 {
    let mut x = u64::from(v) & 0x1f_ffff;
    x = (x | x << 32) & 0x001f_0000_0000_ffff;
    x = (x | x << 16) & 0x001f_0000_ff00_00ff;
    x = (x | x << 8) & 0x100f_00f0_0f00_f00f;
    x = (x | x << 4) & 0x10c3_0c30_c30c_30c3;
    x = (x | x << 2) & 0x1249_2492_4924_9249;
    x
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn permute_puts_each_item_where_the_order_says_in_place() {
        let order = [3, 0, 4, 1, 2, 6, 5];
        let mut items: Vec<char> = "abcdefg".chars().collect();
        permute(&mut items, &order);
        let expected: Vec<char> = order.iter().map(|&i| "abcdefg".as_bytes()[i] as char).collect();
        assert_eq!(items, expected);
        let mut same = vec![1, 2, 3];
        permute(&mut same, &[0, 1, 2]);
        assert_eq!(same, [1, 2, 3]);
    }

    #[test]
    fn spread_puts_two_zero_bits_between_each_bit() {
        for v in [0u32, 1, 2, 3, 0b1011, 0x1f_ffff, 0x12_3456] {
            let expected = (0..BITS).fold(0u64, |acc, b| acc | (u64::from(v >> b & 1) << (3 * b)));
            assert_eq!(spread(v), expected, "{v:#x}");
        }
        assert_eq!(morton(1, 0, 0), 1);
        assert_eq!(morton(0, 1, 0), 2);
        assert_eq!(morton(0, 0, 1), 4);
        assert_eq!(morton(3, 3, 3), 0b11_1111);
    }

    /// Points on a Fibonacci sphere (Bevy's many_cubes layout), in its order.
    fn fibonacci_sphere(n: usize) -> Vec<Vec3> {
        let golden = std::f32::consts::PI * (3.0 - 5f32.sqrt());
        (0..n)
            .map(|i| {
                let y = 1.0 - 2.0 * (i as f32 + 0.5) / n as f32;
                let r = (1.0 - y * y).sqrt();
                let a = golden * i as f32;
                Vec3::new(r * a.cos(), y, r * a.sin()) * 100.0
            })
            .collect()
    }

    /// The mean size of the boxes around each chunk of `order`'s points.
    fn mean_chunk_box(points: &[Vec3], order: &[usize]) -> f32 {
        let chunks: Vec<f32> = order
            .chunks(CULL_CHUNK)
            .map(|c| {
                let (lo, hi) = c.iter().fold((Vec3::splat(f32::INFINITY), Vec3::splat(f32::NEG_INFINITY)), |(lo, hi), &i| {
                    (lo.min(points[i]), hi.max(points[i]))
                });
                (hi - lo).length()
            })
            .collect();
        chunks.iter().sum::<f32>() / chunks.len() as f32
    }

    #[test]
    fn a_batch_over_one_chunk_is_ordered_so_each_chunk_is_small_in_space() {
        let points = fibonacci_sphere(64 * CULL_CHUNK);
        let order = space_order(points.iter().copied()).expect("more than one chunk");
        let mut seen = order.clone();
        seen.sort_unstable();
        assert!(seen.iter().copied().eq(0..points.len()), "a permutation");
        let queue: Vec<usize> = (0..points.len()).collect();
        let (before, after) = (mean_chunk_box(&points, &queue), mean_chunk_box(&points, &order));
        // In queue order each chunk is a band round the whole sphere
        // (diagonal > its 200 diameter); in space order a patch of it.
        assert!(before > 200.0 && after < before / 2.0, "chunk boxes {before} -> {after}");
        // The same batch, the same order.
        assert_eq!(space_order(points.iter().copied()), Some(order));
    }

    #[test]
    fn small_batches_keep_queue_order_and_odd_centres_still_get_a_place() {
        assert_eq!(space_order(fibonacci_sphere(CULL_CHUNK).into_iter()), None);
        assert_eq!(space_order(std::iter::empty()), None);
        // Equal and non-finite centres: a permutation, ties in queue order.
        let mut points = vec![Vec3::ONE; CULL_CHUNK + 3];
        points[5] = Vec3::NAN;
        points[9] = Vec3::splat(f32::INFINITY);
        let order = space_order(points.iter().copied()).unwrap();
        let mut seen = order.clone();
        seen.sort_unstable();
        assert!(seen.iter().copied().eq(0..points.len()));
        let ones: Vec<usize> = order.iter().copied().filter(|&i| i != 5 && i != 9).collect();
        assert!(ones.windows(2).all(|w| w[0] < w[1]), "equal centres keep queue order");
    }
}
