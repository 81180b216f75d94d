//! State buckets: identical mesh draw commands share one refcounted id (UE's
//! FStateBucketMap). Cached commands are stored once per bucket; visible
//! primitives refer to buckets by id, and the merge turns a run of one
//! bucket into one instanced draw.
//!
//! # Draw order of buckets
//!
//! [`StateBuckets::ranks`] places every live bucket in draw order, by
//!
//! 1. its pipeline group: buckets with the same pipeline draw together,
//!    groups in the order of their oldest live bucket;
//! 2. its geometry group within that (same pipeline, vertex streams and
//!    index buffer), again oldest first;
//! 3. the material index;
//! 4. its own birth: when it was created, counted in acquisitions.
//!
//! Groups are formed by *equality* of handles only, never by their numeric
//! value: handles are numbered in the order the RHI created the objects,
//! and render resources and pipelines are created by parallel tasks, so two
//! runs of one scene number them differently. Births follow the order of
//! [`StateBuckets::acquire`] calls, which the scene makes in slot order. So
//! the ranks are a function of the scene's history of adds and removes,
//! not of the thread count or timing. That matters for the image, not only
//! for the draw lists: where two surfaces' depths tie, the base pass's
//! `LessEqual` test lets whichever draws last win.

use super::{BucketId, DrawOrder, DrawRank, MeshDrawCommand};
use crate::vertex_factory::MAX_VERTEX_STREAMS;
use rhi_vulkan::{BufferHandle, IndexFormat, PipelineHandle};
use rustc_hash::FxHashMap as HashMap;
use std::hash::Hash;

/// A command as the buckets see it: compared whole to share a bucket, and
/// by these parts to rank it. Implemented by [`MeshDrawCommand`] (and by
/// plain test commands in the unit tests).
pub trait BucketCommand: Clone + Eq + Hash {
    /// What groups buckets by pipeline (the pipeline handle).
    type Pipeline: Copy + Eq + Hash;
    /// What groups buckets by geometry within a pipeline group.
    type Geometry: Copy + Eq + Hash;
    /// The pipeline, the geometry (pipeline, streams, index buffer) and the
    /// material index: the first three keys of the draw order.
    fn rank_parts(&self) -> (Self::Pipeline, Self::Geometry, u32);
}

impl BucketCommand for MeshDrawCommand {
    type Pipeline = PipelineHandle;
    type Geometry = (PipelineHandle, [Option<(BufferHandle, u64)>; MAX_VERTEX_STREAMS], Option<(BufferHandle, IndexFormat)>);
    fn rank_parts(&self) -> (Self::Pipeline, Self::Geometry, u32) {
        (self.pipeline, (self.pipeline, self.streams, self.element.index_buffer), self.material_index)
    }
}

/// The refcounted set of distinct commands, each with a [`BucketId`] and
/// a place in draw order (see the module docs).
pub struct StateBuckets<C: BucketCommand = MeshDrawCommand> {
    map: HashMap<C, BucketId>,
    entries: Vec<Option<Entry<C>>>,
    free: Vec<BucketId>,
    /// Births handed out so far.
    births: u64,
    /// Draw order of each bucket id (see the module docs), with the bucket
    /// id of each rank (the ranks inverted, kept with them so that a frame
    /// does not invert them again): shared with the frames that draw in it.
    order: DrawOrder,
    ranks_dirty: bool,
}

impl<C: BucketCommand> Default for StateBuckets<C> {
    fn default() -> Self {
        Self { map: HashMap::default(), entries: Vec::new(), free: Vec::new(), births: 0, order: DrawOrder::default(), ranks_dirty: false }
    }
}

struct Entry<C> {
    command: C,
    refcount: u32,
    birth: u64,
}

impl<C: BucketCommand> StateBuckets<C> {
    /// Bytes it holds: its entries, its map (entries and a control byte
    /// each), its free list and its draw order.
    pub(crate) fn memory_bytes(&self) -> u64 {
        let entries = self.entries.capacity() * std::mem::size_of::<Option<Entry<C>>>();
        let map = self.map.capacity() * (std::mem::size_of::<(C, BucketId)>() + 1);
        (entries + map + self.free.capacity() * std::mem::size_of::<BucketId>()) as u64 + self.order.memory_bytes()
    }

    /// The bucket of `cmd`, created with a refcount of 1 or incremented.
    pub fn acquire(&mut self, cmd: C) -> BucketId {
        if let Some(&id) = self.map.get(&cmd) {
            if let Some(e) = &mut self.entries[id.index()] {
                e.refcount += 1;
            }
            return id;
        }
        let id = match self.free.pop() {
            Some(id) => id,
            None => {
                self.entries.push(None);
                BucketId((self.entries.len() - 1) as u32)
            }
        };
        self.entries[id.index()] = Some(Entry { command: cmd.clone(), refcount: 1, birth: self.births });
        self.births += 1;
        self.map.insert(cmd, id);
        self.ranks_dirty = true;
        id
    }

    /// Drops one reference; the bucket is freed at zero.
    pub fn release(&mut self, id: BucketId) {
        let Some(Some(e)) = self.entries.get_mut(id.index()) else { return };
        e.refcount -= 1;
        if e.refcount == 0 {
            self.map.remove(&e.command);
            self.entries[id.index()] = None;
            self.free.push(id);
            self.ranks_dirty = true;
        }
    }

    /// The bucket id of a command equal to `cmd`, if any (no refcount change).
    pub fn find(&self, cmd: &C) -> Option<BucketId> {
        self.map.get(cmd).copied()
    }

    /// The command of a live bucket (`None` for a freed or unknown id).
    pub fn get(&self, id: BucketId) -> Option<&C> {
        self.entries.get(id.index()).and_then(|e| e.as_ref()).map(|e| &e.command)
    }

    /// References to a bucket (0 for a freed or unknown id).
    pub fn refcount(&self, id: BucketId) -> u32 {
        self.entries.get(id.index()).and_then(|e| e.as_ref()).map_or(0, |e| e.refcount)
    }

    /// Live buckets.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// Whether no bucket is live.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// One past the largest id ever handed out.
    pub fn capacity(&self) -> usize {
        self.entries.len()
    }

    /// Draw-order rank of every id (indexed by [`BucketId::index`]), as of
    /// the last [`StateBuckets::update_ranks`]. Free ids rank after every
    /// live one.
    pub fn ranks(&self) -> &[DrawRank] {
        self.order().ranks()
    }

    /// The bucket id of every rank ([`StateBuckets::ranks`] inverted), as
    /// of the last [`StateBuckets::update_ranks`].
    pub fn by_rank(&self) -> &[BucketId] {
        self.order().by_rank()
    }

    /// [`StateBuckets::ranks`] and [`StateBuckets::by_rank`] together, as
    /// of the last [`StateBuckets::update_ranks`]: the order a frame draws
    /// in when it has no buckets of its own (a shared handle; cloning it
    /// copies nothing).
    pub(crate) fn order(&self) -> &DrawOrder {
        debug_assert!(!self.ranks_dirty && self.order.ranks().len() == self.entries.len(), "update_ranks first");
        &self.order
    }

    /// Recomputes the draw-order ranks if buckets changed.
    pub fn update_ranks(&mut self) {
        if self.ranks_dirty || self.order.ranks().len() != self.entries.len() {
            self.order = DrawOrder::new(draw_ranks(&self.rank_keys()));
            self.ranks_dirty = false;
        }
    }

    /// The draw-order ranks of these buckets together with `extra`
    /// commands that are not in them (a frame's dynamic commands, ids
    /// `capacity()..` in order): one rule for all, each extra command born
    /// after every bucket here in the order given, so it draws inside the
    /// pipeline and geometry groups it shares with the buckets instead of
    /// after all of them.
    pub fn ranks_with(&self, extra: &[C]) -> Vec<DrawRank> {
        let mut keys = self.rank_keys();
        keys.extend(extra.iter().enumerate().map(|(i, cmd)| Some(rank_key(cmd, self.births + i as u64))));
        draw_ranks(&keys)
    }

    /// What orders each bucket id (`None` for a free one): the input of
    /// [`draw_ranks`].
    fn rank_keys(&self) -> Vec<Option<RankKey<C::Pipeline, C::Geometry>>> {
        self.entries.iter().map(|e| e.as_ref().map(|e| rank_key(&e.command, e.birth))).collect()
    }
}

/// The rank key of `cmd` born at `birth`.
fn rank_key<C: BucketCommand>(cmd: &C, birth: u64) -> RankKey<C::Pipeline, C::Geometry> {
    let (pipeline, geometry, material) = cmd.rank_parts();
    RankKey { pipeline, geometry, material, birth }
}

/// What orders one live bucket: its pipeline and geometry (compared for
/// equality only), its material index and its birth.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct RankKey<P, G> {
    pub pipeline: P,
    pub geometry: G,
    pub material: u32,
    pub birth: u64,
}

/// Ranks `keys` (one per bucket id; `None` = free) in draw order, as the
/// module docs say. Births must be distinct among live buckets.
pub(crate) fn draw_ranks<P: Eq + Hash + Copy, G: Eq + Hash + Copy>(keys: &[Option<RankKey<P, G>>]) -> Vec<DrawRank> {
    let mut pipeline_birth: HashMap<P, u64> = HashMap::default();
    let mut geometry_birth: HashMap<G, u64> = HashMap::default();
    for k in keys.iter().flatten() {
        let p = pipeline_birth.entry(k.pipeline).or_insert(k.birth);
        *p = (*p).min(k.birth);
        let g = geometry_birth.entry(k.geometry).or_insert(k.birth);
        *g = (*g).min(k.birth);
    }
    let order_key = |id: usize| keys[id].as_ref().map(|k| (pipeline_birth[&k.pipeline], geometry_birth[&k.geometry], k.material, k.birth));
    let mut ids: Vec<usize> = (0..keys.len()).collect();
    // Free ids last, in id order.
    ids.sort_by_key(|&id| (order_key(id).is_none(), order_key(id), id));
    let mut ranks = vec![DrawRank(0); keys.len()];
    for (rank, id) in ids.into_iter().enumerate() {
        ranks[id] = DrawRank(rank as u32);
    }
    ranks
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn key(pipeline: u32, geometry: u32, material: u32, birth: u64) -> Option<RankKey<u32, (u32, u32)>> {
        Some(RankKey { pipeline, geometry: (pipeline, geometry), material, birth })
    }

    #[test]
    fn buckets_group_by_pipeline_then_geometry_then_material_oldest_group_first() {
        // Births: 0 = (p7, g1, m2), 1 = (p3, g5, m0), 2 = (p7, g9, m0), 3 = (p7, g1, m1), free id 4.
        let keys = vec![key(7, 1, 2, 0), key(3, 5, 0, 1), key(7, 9, 0, 2), key(7, 1, 1, 3), None];
        let ranks = draw_ranks(&keys);
        // Pipeline 7 is older (birth 0) than pipeline 3 (birth 1), whatever their numbers;
        // in it geometry 1 (birth 0) before geometry 9 (birth 2); in geometry 1 material 1 before 2.
        assert_eq!(ranks, vec![DrawRank(1), DrawRank(3), DrawRank(2), DrawRank(0), DrawRank(4)]);
    }

    /// A stand-in command: (pipeline, geometry, material, anything else).
    #[derive(Clone, Debug, PartialEq, Eq, Hash)]
    struct Cmd(u32, u32, u32, u32);

    impl BucketCommand for Cmd {
        type Pipeline = u32;
        type Geometry = (u32, u32);
        fn rank_parts(&self) -> (u32, (u32, u32), u32) {
            (self.0, (self.0, self.1), self.2)
        }
    }

    #[test]
    fn equal_commands_share_a_refcounted_bucket_and_freed_ids_are_reused() {
        let mut b: StateBuckets<Cmd> = StateBuckets::default();
        let x = b.acquire(Cmd(0, 0, 0, 0));
        let y = b.acquire(Cmd(0, 0, 0, 1));
        assert_ne!(x, y);
        assert_eq!(b.acquire(Cmd(0, 0, 0, 0)), x);
        assert_eq!((b.refcount(x), b.refcount(y), b.len(), b.capacity()), (2, 1, 2, 2));
        assert_eq!(b.find(&Cmd(0, 0, 0, 1)), Some(y));
        b.release(x);
        assert_eq!(b.get(x), Some(&Cmd(0, 0, 0, 0)), "one reference left");
        b.release(x);
        assert_eq!((b.get(x), b.find(&Cmd(0, 0, 0, 0)), b.refcount(x), b.len()), (None, None, 0, 1));
        // Releasing a free or unknown id changes nothing.
        b.release(x);
        b.release(BucketId(99));
        assert_eq!(b.len(), 1);
        // The free id is handed out again, to a new command.
        let z = b.acquire(Cmd(5, 5, 5, 5));
        assert_eq!(z, x);
        assert_eq!((b.refcount(z), b.capacity()), (1, 2));
    }

    #[test]
    fn a_reused_id_ranks_by_its_new_birth_and_free_ids_rank_last() {
        let mut b: StateBuckets<Cmd> = StateBuckets::default();
        let old = b.acquire(Cmd(1, 0, 0, 0));
        let young = b.acquire(Cmd(2, 0, 0, 0));
        let gone = b.acquire(Cmd(3, 0, 0, 0));
        b.update_ranks();
        assert_eq!(b.ranks(), &[DrawRank(0), DrawRank(1), DrawRank(2)]);
        assert_eq!(b.by_rank(), &[BucketId(0), BucketId(1), BucketId(2)]);
        b.release(old);
        b.release(gone);
        b.update_ranks();
        assert_eq!(b.ranks()[young.index()], DrawRank(0));
        assert!(b.ranks()[old.index()] > DrawRank(0) && b.ranks()[gone.index()] > DrawRank(0), "free ids last");
        // `gone`'s id comes back first (last freed) for a new command: born last, drawn last.
        let newest = b.acquire(Cmd(0, 0, 0, 0));
        assert_eq!(newest, gone);
        b.update_ranks();
        assert_eq!((b.ranks()[young.index()], b.ranks()[newest.index()], b.ranks()[old.index()]), (DrawRank(0), DrawRank(1), DrawRank(2)));
        assert_eq!(b.by_rank(), &[young, newest, old], "the inverse is updated with the ranks");
    }

    #[test]
    fn extra_commands_rank_inside_the_groups_they_share_with_the_buckets() {
        let mut b: StateBuckets<Cmd> = StateBuckets::default();
        let p1 = b.acquire(Cmd(1, 0, 0, 0));
        let p2 = b.acquire(Cmd(2, 0, 0, 0));
        b.update_ranks();
        assert_eq!(b.ranks_with(&[]), b.ranks(), "no extra commands: the buckets' own ranks");
        // A dynamic command on pipeline 1 (another material), one on a new
        // pipeline 3, one on pipeline 2's geometry: ids 2, 3, 4.
        let ranks = b.ranks_with(&[Cmd(1, 0, 5, 0), Cmd(3, 0, 0, 0), Cmd(2, 0, 1, 0)]);
        let order = |id: usize| ranks[id].0;
        assert_eq!(
            (order(p1.index()), order(2), order(p2.index()), order(4), order(3)),
            (0, 1, 2, 3, 4),
            "pipeline 1's pair, pipeline 2's pair, then the new pipeline"
        );
        // Freed bucket ids still rank after every live one.
        b.release(p1);
        let ranks = b.ranks_with(&[Cmd(2, 0, 1, 0)]);
        assert_eq!((ranks[p2.index()].0, ranks[2].0, ranks[p1.index()].0), (0, 1, 2));
    }

    #[test]
    fn the_same_acquisitions_give_the_same_ranks_whatever_the_handle_numbers() {
        // Two runs of one scene: the same commands acquired in the same order,
        // but the pipelines and meshes numbered in the opposite order (parallel
        // creation numbers them as the threads happen to run).
        let run = |ground_mesh: u32, cube_mesh: u32| {
            let mut b: StateBuckets<Cmd> = StateBuckets::default();
            let ground = b.acquire(Cmd(0, ground_mesh, 9, 0));
            let cubes: Vec<BucketId> = (0..4).map(|m| b.acquire(Cmd(0, cube_mesh, m, 0))).collect();
            b.update_ranks();
            (b.ranks()[ground.index()], cubes.iter().map(|c| b.ranks()[c.index()]).collect::<Vec<_>>())
        };
        assert_eq!(run(0, 1), run(1, 0));
        assert_eq!(run(7, 3), (DrawRank(0), vec![DrawRank(1), DrawRank(2), DrawRank(3), DrawRank(4)]));
    }

    proptest! {
        /// The ranks depend on handles only through equality: renumbering
        /// every pipeline and geometry (as parallel creation does from run
        /// to run) leaves them unchanged.
        #[test]
        fn ranks_do_not_depend_on_handle_numbering(
            raw in proptest::collection::vec(proptest::option::of((0u32..4, 0u32..4, 0u32..3)), 0..40),
            shift in 1u32..1000,
        ) {
            let keys: Vec<_> = raw.iter().enumerate().map(|(i, r)| r.and_then(|(p, g, m)| key(p, g, m, (raw.len() - i) as u64 * 3))).collect();
            // A bijection that reverses the numeric order of the handles.
            let renumber = |h: u32| 10_000 - h * shift;
            let renumbered: Vec<_> = keys.iter().map(|k| k.map(|k| RankKey { pipeline: renumber(k.pipeline), geometry: (renumber(k.geometry.0), renumber(k.geometry.1)), ..k })).collect();
            let ranks = draw_ranks(&keys);
            prop_assert_eq!(&ranks, &draw_ranks(&renumbered));
            // A permutation of 0..n, with the free ids last.
            let mut sorted = ranks.clone();
            sorted.sort();
            prop_assert_eq!(sorted, (0..keys.len() as u32).map(DrawRank).collect::<Vec<_>>());
            let live = keys.iter().flatten().count() as u32;
            for (k, r) in keys.iter().zip(&ranks) {
                prop_assert_eq!(k.is_some(), r.0 < live);
            }
            // Buckets of one pipeline are contiguous in draw order.
            let mut by_rank: Vec<(DrawRank, u32)> = keys.iter().zip(&ranks).filter_map(|(k, r)| k.map(|k| (*r, k.pipeline))).collect();
            by_rank.sort();
            let mut seen = Vec::new();
            for w in by_rank.windows(2) {
                if w[0].1 != w[1].1 {
                    prop_assert!(!seen.contains(&w[1].1), "pipeline {} split", w[1].1);
                    seen.push(w[0].1);
                }
            }
        }
    }
}
