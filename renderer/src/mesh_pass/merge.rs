//! Dynamic instancing: adjacent sorted commands of one state bucket become a
//! single instanced draw. The primitive ids of the pass, in draw order, form
//! the per-pass id stream; a merged draw covers ids `first_instance ..
//! first_instance + instance_count` and the vertex shader reads
//! `scene_primitive(id)` (the GPU scene) for each instance.
//!
//! Merging never reorders: the id stream is the sorted list's primitives in
//! draw order (see [`super::sort`]), with or without merging, and a merged
//! draw's instances are drawn in that order.

use super::{BucketId, PrimitiveSlot, VisibleCommand};

/// One draw call after merging.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct MergedDraw {
    /// The state bucket whose command is drawn.
    pub bucket: BucketId,
    /// Offset of the draw's first primitive id in the pass's id stream.
    pub first_instance: u32,
    /// Primitives covered (merged commands); 1 when not merged.
    pub instance_count: u32,
}

/// Merges `sorted` into draws. `can_merge(bucket)` says whether a bucket's
/// command reads ids from the id stream; `enabled` is
/// `r.MeshDrawCommands.DynamicInstancing`. Returns the draws and the id stream.
pub fn merge(sorted: &[VisibleCommand], can_merge: impl Fn(BucketId) -> bool, enabled: bool) -> (Vec<MergedDraw>, Vec<PrimitiveSlot>) {
    let mut draws: Vec<MergedDraw> = Vec::new();
    let mut ids = Vec::with_capacity(sorted.len());
    for (i, c) in sorted.iter().enumerate() {
        ids.push(c.primitive);
        if enabled {
            if let Some(last) = draws.last_mut() {
                if last.bucket == c.bucket && can_merge(c.bucket) {
                    last.instance_count += 1;
                    continue;
                }
            }
        }
        draws.push(MergedDraw { bucket: c.bucket, first_instance: i as u32, instance_count: 1 });
    }
    (draws, ids)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mesh_pass::{sort_back_to_front, sort_by_bucket, DrawRank};
    use proptest::prelude::*;

    fn expand(draws: &[MergedDraw], ids: &[PrimitiveSlot]) -> Vec<(BucketId, PrimitiveSlot)> {
        draws
            .iter()
            .flat_map(|d| (d.first_instance..d.first_instance + d.instance_count).map(move |i| (d.bucket, ids[i as usize])))
            .collect()
    }

    proptest! {
        #[test]
        fn sort_and_merge_draw_the_same_pairs_as_unmerged(
            raw in proptest::collection::vec((0u32..12, 0u32..500, 0u64..1000), 0..300),
            mergeable_mask in any::<u16>(),
            translucent in any::<bool>(),
        ) {
            let rank: Vec<DrawRank> = (0..12).rev().map(DrawRank).collect();
            let mut commands: Vec<VisibleCommand> = raw.iter().map(|&(bucket, primitive, sort_key)| VisibleCommand { bucket: BucketId(bucket), primitive: PrimitiveSlot(primitive), sort_key }).collect();
            // Gathered in primitive order.
            commands.sort_by_key(|c| c.primitive);
            let sorted = if translucent {
                let mut s = commands.clone();
                sort_back_to_front(&mut s, &rank);
                s
            } else {
                sort_by_bucket(&commands, &rank)
            };
            let can = |b: BucketId| mergeable_mask & (1 << b.0) != 0;
            let (merged, merged_ids) = merge(&sorted, can, true);
            let (unmerged, unmerged_ids) = merge(&sorted, can, false);
            // Same (command, primitive) pairs, in the same order.
            let a = expand(&merged, &merged_ids);
            let b = expand(&unmerged, &unmerged_ids);
            prop_assert_eq!(&a, &b);
            // ...and the same multiset as the input.
            let mut input: Vec<(BucketId, PrimitiveSlot)> = commands.iter().map(|c| (c.bucket, c.primitive)).collect();
            let mut out = a.clone();
            input.sort();
            out.sort();
            prop_assert_eq!(input, out);
            prop_assert_eq!(unmerged.len(), commands.len());
            prop_assert!(merged.len() <= unmerged.len());
            // Merged draws never mix buckets or merge unmergeable ones.
            for d in &merged {
                prop_assert!(d.instance_count == 1 || can(d.bucket));
            }
            // Deterministic: sorting again gives the same order.
            let again = if translucent { let mut s = commands.clone(); sort_back_to_front(&mut s, &rank); s } else { sort_by_bucket(&commands, &rank) };
            prop_assert_eq!(sorted, again);
        }
    }

    fn c(bucket: u32, primitive: u32) -> VisibleCommand {
        VisibleCommand { bucket: BucketId(bucket), primitive: PrimitiveSlot(primitive), sort_key: 0 }
    }

    fn slots(s: &[u32]) -> Vec<PrimitiveSlot> {
        s.iter().copied().map(PrimitiveSlot).collect()
    }

    #[test]
    fn opaque_sort_groups_buckets_by_rank_and_keeps_primitive_order() {
        let sorted = sort_by_bucket(&[c(1, 0), c(0, 1), c(1, 2), c(0, 3)], &[DrawRank(1), DrawRank(0)]);
        assert_eq!(sorted, vec![c(1, 0), c(1, 2), c(0, 1), c(0, 3)]);
        let (draws, ids) = merge(&sorted, |_| true, true);
        assert_eq!(draws.len(), 2);
        assert_eq!(ids, slots(&[0, 2, 1, 3]));
        assert_eq!(draws[1], MergedDraw { bucket: BucketId(0), first_instance: 2, instance_count: 2 });
    }

    #[test]
    fn unmergeable_buckets_and_disabled_instancing_draw_one_instance_each() {
        let sorted = [c(3, 0), c(3, 4), c(5, 1), c(5, 2), c(3, 9)];
        let (draws, ids) = merge(&sorted, |b| b == BucketId(5), true);
        let d = |bucket, first_instance, instance_count| MergedDraw { bucket: BucketId(bucket), first_instance, instance_count };
        // Bucket 3 cannot merge; bucket 5's run merges; a bucket seen again later starts a new draw.
        assert_eq!(draws, vec![d(3, 0, 1), d(3, 1, 1), d(5, 2, 2), d(3, 4, 1)]);
        assert_eq!(ids, slots(&[0, 4, 1, 2, 9]), "ids in draw order, unchanged by merging");
        let (off, off_ids) = merge(&sorted, |_| true, false);
        assert_eq!(off.len(), 5);
        assert_eq!(off_ids, ids);
        assert_eq!(merge(&[], |_| true, true), (vec![], vec![]));
    }
}
