//! Sorting a pass's visible commands into draw order.
//!
//! # The draw-order contract
//!
//! A pass draws its (bucket, primitive) pairs in the order of a sort key
//! that ends with the primitive's slot, so the order is a function of the
//! scene alone — never of the thread count, the chunking of parallel work,
//! or whether the cached fast path or the general path built the list:
//!
//! | pass | sort key |
//! | --- | --- |
//! | opaque (depth, shadow, base, wireframe) | (bucket rank, primitive slot) |
//! | translucency | (sort priority ascending, distance descending, bucket rank, primitive slot) |
//!
//! Bucket ranks come from one rule over the scene's buckets and the
//! frame's dynamic ones together ([`super::StateBuckets`]'s module docs;
//! a dynamic bucket is born after every scene bucket, in the order it was
//! first built), so cached and dynamic commands sort together by state.
//! Ties left after the slot (a
//! primitive with two sections of one command) keep gather order: a slot's
//! cached entries in cache order, then its dynamic ones in collection order.
//! Everything that builds a list in parallel (culling chunks, pass-setup
//! tasks, recording chunks) concatenates its parts in order, and a pass's
//! primitive ids go to the id stream in this draw order.
//!
//! The opaque sort is a counting sort on the rank: O(n) and stable, so it
//! needs its input in primitive order (which gathering in visibility order
//! gives).

use super::{BucketId, DrawRank, PrimitiveSlot};

/// One visible (command, primitive) pair of a pass.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct VisibleCommand {
    /// The command's state bucket.
    pub bucket: BucketId,
    /// The primitive drawn (its id goes into the pass's id stream).
    pub primitive: PrimitiveSlot,
    /// Translucency sort key ([`translucency_key`]: larger draws first);
    /// 0 for opaque passes.
    pub sort_key: u64,
}

/// Stable counting sort by `rank[bucket]`; `rank` must cover every bucket.
/// With `commands` in primitive order (as gathered), the result is in
/// (rank, primitive) order: the opaque draw order.
pub fn sort_by_bucket(commands: &[VisibleCommand], rank: &[DrawRank]) -> Vec<VisibleCommand> {
    debug_assert!(commands.windows(2).all(|w| w[0].primitive <= w[1].primitive), "gathered in primitive order");
    let mut counts = vec![0u32; rank.len() + 1];
    for c in commands {
        counts[rank[c.bucket.index()].index() + 1] += 1;
    }
    for i in 1..counts.len() {
        counts[i] += counts[i - 1];
    }
    let mut out = vec![VisibleCommand { bucket: BucketId(0), primitive: PrimitiveSlot(0), sort_key: 0 }; commands.len()];
    for c in commands {
        let slot = &mut counts[rank[c.bucket.index()].index()];
        out[*slot as usize] = *c;
        *slot += 1;
    }
    out
}

/// Back to front: larger sort key first; ties by bucket rank, then primitive
/// (ranks are distinct per bucket, so what ties after that is identical).
pub fn sort_back_to_front(commands: &mut [VisibleCommand], rank: &[DrawRank]) {
    commands.sort_unstable_by(|a, b| {
        b.sort_key.cmp(&a.sort_key).then(rank[a.bucket.index()].cmp(&rank[b.bucket.index()])).then(a.primitive.cmp(&b.primitive))
    });
}

/// A distance as a sort key that orders like the float (non-negative input).
pub fn distance_key(distance: f32) -> u32 {
    distance.max(0.0).to_bits()
}

/// The translucency sort key of a primitive with sort `priority` (UE's
/// TranslucencySortPriority) at `distance` from the view: larger keys draw
/// first, so primitives draw by priority ascending (a higher priority
/// draws later, over the others, whatever the distances) and, within one
/// priority, back to front.
pub fn translucency_key(priority: i16, distance: f32) -> u64 {
    // Priorities map to u16 in order; inverted so a lower one is larger.
    let rank = u16::MAX - (priority as u16 ^ 0x8000);
    (u64::from(rank) << 32) | u64::from(distance_key(distance))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn c(bucket: u32, primitive: u32, sort_key: u64) -> VisibleCommand {
        VisibleCommand { bucket: BucketId(bucket), primitive: PrimitiveSlot(primitive), sort_key }
    }

    fn ranks(r: &[u32]) -> Vec<DrawRank> {
        r.iter().copied().map(DrawRank).collect()
    }

    #[test]
    fn opaque_order_is_rank_then_primitive() {
        let sorted = sort_by_bucket(&[c(0, 1, 0), c(2, 2, 0), c(1, 3, 0), c(0, 4, 0), c(2, 7, 0)], &ranks(&[2, 1, 0]));
        assert_eq!(sorted, vec![c(2, 2, 0), c(2, 7, 0), c(1, 3, 0), c(0, 1, 0), c(0, 4, 0)]);
        assert!(sort_by_bucket(&[], &ranks(&[0])).is_empty());
    }

    #[test]
    fn translucent_order_is_far_first_then_rank_then_primitive() {
        let mut v = vec![c(0, 5, 10), c(1, 1, 30), c(0, 2, 30), c(1, 0, 10), c(1, 3, 30)];
        sort_back_to_front(&mut v, &ranks(&[1, 0]));
        assert_eq!(v, vec![c(1, 1, 30), c(1, 3, 30), c(0, 2, 30), c(1, 0, 10), c(0, 5, 10)]);
    }

    #[test]
    fn translucency_keys_draw_by_priority_then_back_to_front() {
        // Sorted largest key first, as `sort_back_to_front` does.
        let mut drawn = vec![(0i16, 5.0f32), (1, 100.0), (-3, 1.0), (0, 50.0), (i16::MAX, 0.0), (i16::MIN, 0.5), (1, 2.0)];
        drawn.sort_by_key(|&(p, d)| std::cmp::Reverse(translucency_key(p, d)));
        assert_eq!(drawn, vec![(i16::MIN, 0.5), (-3, 1.0), (0, 50.0), (0, 5.0), (1, 100.0), (1, 2.0), (i16::MAX, 0.0)]);
    }

    #[test]
    fn distance_keys_order_like_the_distances() {
        assert!(distance_key(2.0) > distance_key(1.5));
        assert!(distance_key(1e-30) > distance_key(0.0));
        assert_eq!(distance_key(-3.0), distance_key(0.0));
    }

    proptest! {
        /// Both sorts equal a comparison sort on the documented key.
        #[test]
        fn sorts_follow_the_documented_keys(
            raw in proptest::collection::vec((0u32..16, 0u32..200, 0u64..8), 0..300),
            seed in any::<u64>(),
        ) {
            let mut rank: Vec<u32> = (0..16).collect();
            // A permutation of the ranks from the seed.
            let mut s = seed;
            for i in (1..rank.len()).rev() {
                s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                rank.swap(i, (s >> 33) as usize % (i + 1));
            }
            let rank = ranks(&rank);
            let mut input: Vec<VisibleCommand> = raw.iter().map(|&(b, p, k)| c(b, p, k)).collect();
            input.sort_by_key(|c| c.primitive);
            let opaque = sort_by_bucket(&input, &rank);
            let mut expected = input.clone();
            expected.sort_by_key(|c| (rank[c.bucket.index()], c.primitive));
            prop_assert_eq!(opaque, expected);
            let mut translucent = input.clone();
            sort_back_to_front(&mut translucent, &rank);
            let mut expected = input.clone();
            expected.sort_by_key(|c| (std::cmp::Reverse(c.sort_key), rank[c.bucket.index()], c.primitive));
            prop_assert_eq!(translucent, expected);
        }
    }
}
