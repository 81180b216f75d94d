//! Dynamic instancing: adjacent sorted commands of one state bucket become a
//! single instanced draw. The primitive ids of the pass, in draw order, form
//! the per-pass id stream; a merged draw covers ids `first_instance ..
//! first_instance + instance_count` and the vertex shader reads
//! `gpu_scene[id]` for each instance.

use super::VisibleCommand;

/// One draw call after merging.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct MergedDraw {
    pub bucket: u32,
    /// Offset of the draw's first primitive id in the pass's id stream.
    pub first_instance: u32,
    /// Primitives covered (merged commands); 1 when not merged.
    pub instance_count: u32,
}

/// Merges `sorted` into draws. `can_merge(bucket)` says whether a bucket's
/// command reads ids from the id stream; `enabled` is
/// `r.MeshDrawCommands.DynamicInstancing`. Returns the draws and the id stream.
pub fn merge(sorted: &[VisibleCommand], can_merge: impl Fn(u32) -> bool, enabled: bool) -> (Vec<MergedDraw>, Vec<u32>) {
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
    use crate::mesh_pass::{sort_back_to_front, sort_by_bucket};
    use proptest::prelude::*;

    fn expand(draws: &[MergedDraw], ids: &[u32]) -> Vec<(u32, u32)> {
        draws
            .iter()
            .flat_map(|d| (d.first_instance..d.first_instance + d.instance_count).map(move |i| (d.bucket, ids[i as usize])))
            .collect()
    }

    proptest! {
        #[test]
        fn sort_and_merge_draw_the_same_pairs_as_unmerged(
            raw in proptest::collection::vec((0u32..12, 0u32..500, 0u32..1000), 0..300),
            mergeable_mask in any::<u16>(),
            translucent in any::<bool>(),
        ) {
            let rank: Vec<u32> = (0..12).rev().collect();
            let commands: Vec<VisibleCommand> = raw.iter().map(|&(bucket, primitive, sort_key)| VisibleCommand { bucket, primitive, sort_key }).collect();
            let sorted = if translucent {
                let mut s = commands.clone();
                sort_back_to_front(&mut s, &rank);
                s
            } else {
                sort_by_bucket(&commands, &rank)
            };
            let can = |b: u32| mergeable_mask & (1 << b) != 0;
            let (merged, merged_ids) = merge(&sorted, can, true);
            let (unmerged, unmerged_ids) = merge(&sorted, can, false);
            // Same (command, primitive) pairs, in the same order.
            let a = expand(&merged, &merged_ids);
            let b = expand(&unmerged, &unmerged_ids);
            prop_assert_eq!(&a, &b);
            // ...and the same multiset as the input.
            let mut input: Vec<(u32, u32)> = commands.iter().map(|c| (c.bucket, c.primitive)).collect();
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

    #[test]
    fn opaque_sort_groups_buckets_by_rank_and_keeps_primitive_order() {
        let c = |bucket, primitive| VisibleCommand { bucket, primitive, sort_key: 0 };
        let sorted = sort_by_bucket(&[c(1, 0), c(0, 1), c(1, 2), c(0, 3)], &[1, 0]);
        assert_eq!(sorted, vec![c(1, 0), c(1, 2), c(0, 1), c(0, 3)]);
        let (draws, ids) = merge(&sorted, |_| true, true);
        assert_eq!(draws.len(), 2);
        assert_eq!(ids, vec![0, 2, 1, 3]);
        assert_eq!(draws[1], MergedDraw { bucket: 0, first_instance: 2, instance_count: 2 });
    }
}
