//! The three integers of the mesh-drawing pipeline, as distinct types: a
//! state bucket's id, a primitive's slot in the GPU scene, and a bucket's
//! place in draw order. Mixing them up (indexing the rank table by a slot,
//! say) does not compile.

use bytemuck::{Pod, Zeroable};

/// A state bucket (see [`super::StateBuckets`]): one distinct
/// [`super::MeshDrawCommand`] of the frame. Scene buckets come first
/// (ids are reused after a bucket dies); a frame's dynamic buckets follow
/// them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct BucketId(pub u32);

impl BucketId {
    /// "No command" in a primitive's cache entry.
    pub const NONE: BucketId = BucketId(u32::MAX);

    /// The id as an index into the bucket tables.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// A primitive's slot: its index in the GPU scene, and what the per-pass id
/// stream holds (`#[repr(transparent)]`, so a `&[PrimitiveSlot]` uploads as
/// the `u32`s the vertex shader reads). The last key of every draw-order
/// sort.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default, Pod, Zeroable)]
#[repr(transparent)]
pub struct PrimitiveSlot(pub u32);

impl PrimitiveSlot {
    /// The slot as an index into the GPU scene's arrays.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// A bucket's place in a pass's draw order (0 draws first), from
/// [`super::StateBuckets::ranks`] for scene buckets.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct DrawRank(pub u32);

impl DrawRank {
    /// The rank as an index.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// The bucket of every rank: the inverse of `ranks` (a permutation,
/// indexed by [`BucketId::index`]), indexed by [`DrawRank::index`].
pub fn buckets_by_rank(ranks: &[DrawRank]) -> Vec<BucketId> {
    let mut by_rank = vec![BucketId(0); ranks.len()];
    for (bucket, rank) in ranks.iter().enumerate() {
        by_rank[rank.index()] = BucketId(bucket as u32);
    }
    by_rank
}
