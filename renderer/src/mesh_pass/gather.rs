//! Pass setup for one (view, pass): gather the visible primitives' commands,
//! sort them into draw order, merge them into draws.
//!
//! Two ways to the same result (the draw order of [`super::sort`]):
//! - [`gather_sort_merge`], the general path: cached commands plus the
//!   frame's dynamic ones, sorted by [`sort_by_bucket`] (or back to front),
//!   merged by [`merge`];
//! - [`gather_sort_merge_cached`], the fast path for an opaque pass with
//!   only cached commands: straight from the cache into the id stream,
//!   without the intermediate list — in one visit when the cache's order
//!   is already the draw order, else by a counting sort.
//!
//! The fast path must give exactly the general path's draws and ids; the
//! property test below checks that on random scenes.

use super::{merge, sort_back_to_front, sort_by_bucket, BucketId, DrawRank, IdStream, MergedDraw, PrimitiveSlot, VisibleCommand};
use crate::scene::{PassCache, ViewVisibility};
use rayon::prelude::*;
use std::ops::{ControlFlow, Range};

/// Calls `f(bucket, slot)` for every cached command of `cache` that a
/// visible primitive draws at its LOD, for the visible primitives of
/// `range` (indices into `vis.visible`) in visibility (= slot) order, a
/// slot's entries in cache order, until `f` returns
/// [`ControlFlow::Break`].
fn visit_cached(
    cache: &PassCache,
    vis: &ViewVisibility,
    range: Range<usize>,
    mut f: impl FnMut(BucketId, PrimitiveSlot) -> ControlFlow<()>,
) {
    if cache.entries == 0 {
        return;
    }
    for (&slot, &lod) in vis.visible[range.clone()].iter().zip(&vis.lods[range]) {
        let e = cache.first[slot.index()];
        if e.bucket == BucketId::NONE {
            continue;
        }
        if e.lod == lod && f(e.bucket, slot).is_break() {
            return;
        }
        if e.more {
            for x in &cache.extra[&slot] {
                if x.lod == lod && f(x.bucket, slot).is_break() {
                    return;
                }
            }
        }
    }
}

/// Visible primitives per piece of the fast path when a pass's setup runs
/// in parallel: pieces of a pass are gathered on rayon's workers and joined
/// in order, so that a pass's setup is not one task that a thread runs
/// alone while the other waits (a frame has two or three passes, of
/// unequal sizes). 16,384: a piece takes about 0.1 ms at 160,000 cubes.
pub(crate) const PIECE: usize = 16 * 1024;

/// The fast path — an opaque pass with only cached commands. In one visit
/// of the cache when the visible commands already come in draw order (the
/// common case: buckets are born as primitives are added, in slot order,
/// and rank by birth within their pipeline and geometry groups): the
/// visited slots are the id stream and each run of one bucket is a draw.
/// Otherwise (the first visit stops at the first command out of order) a
/// second visit counts the visible primitives per rank and
/// scatters their ids straight into draw order (a counting sort without an
/// intermediate list of commands). `by_rank` inverts `ranks`
/// ([`super::buckets_by_rank`]).
///
/// With `piece` (parallel), a pass with more visible primitives than a
/// piece is split into pieces of that many, each visited (and, when out of
/// order, counting-sorted) as a rayon task; the pieces are joined in piece
/// order — runs that continue across a piece's end merged, each rank's ids
/// taken from every piece in turn — so the draws and ids are exactly the
/// serial ones (the property tests below check it). The ids are not
/// copied into one list: the stream is the pieces' lists, in parts
/// ([`IdStream`]).
pub(crate) fn gather_sort_merge_cached(
    cache: &PassCache,
    vis: &ViewVisibility,
    ranks: &[DrawRank],
    by_rank: &[BucketId],
    can_merge: impl Fn(BucketId) -> bool + Sync,
    instancing: bool,
    piece: Option<usize>,
) -> (Vec<MergedDraw>, IdStream) {
    let n = vis.visible.len();
    let piece = piece.filter(|&p| p > 0 && n > p);
    let Some(piece) = piece else {
        let (draws, ids) = visit_in_order(cache, vis, 0..n, ranks, by_rank.len(), instancing, &can_merge)
            .unwrap_or_else(|| RankSorted::of(cache, vis, 0..n, ranks).into_draws(by_rank, instancing, &can_merge));
        return (draws, IdStream::whole(ids));
    };
    let pieces: Vec<Range<usize>> = (0..n).step_by(piece).map(|s| s..(s + piece).min(n)).collect();
    let in_order: Option<Vec<_>> = pieces
        .par_iter()
        .map(|r| {
            crate::trace::span!("task", "pass_setup_piece");
            visit_in_order(cache, vis, r.clone(), ranks, by_rank.len(), instancing, &can_merge)
        })
        .collect();
    if let Some(joined) = in_order.and_then(|parts| join_in_order(parts, ranks, instancing, &can_merge)) {
        return joined;
    }
    let sorted: Vec<RankSorted> = pieces
        .par_iter()
        .map(|r| {
            crate::trace::span!("task", "pass_setup_piece");
            RankSorted::of(cache, vis, r.clone(), ranks)
        })
        .collect();
    RankSorted::join(sorted, by_rank, instancing, &can_merge)
}

/// The in-order visit of the visible primitives of `range`: its draws and
/// ids, or `None` when a command comes out of draw order.
fn visit_in_order(
    cache: &PassCache,
    vis: &ViewVisibility,
    range: Range<usize>,
    ranks: &[DrawRank],
    buckets: usize,
    instancing: bool,
    can_merge: &impl Fn(BucketId) -> bool,
) -> Option<(Vec<MergedDraw>, Vec<PrimitiveSlot>)> {
    // At most a draw per bucket (unless one cannot merge), and at most one
    // per visible command: room enough without growing, in the usual case.
    let mut draws = Vec::with_capacity(range.len().min(buckets));
    let mut ids = Vec::with_capacity(range.len());
    let mut runs = Runs { draws: &mut draws, ids: &mut ids, rank: u32::MAX, bucket: BucketId::NONE, first: 0 };
    runs.visit(cache, vis, range, ranks, instancing, can_merge).then_some((draws, ids))
}

/// Pieces visited in order, joined: `None` when a piece starts at a rank
/// below the one the piece before it ended at (out of order across them).
/// A run that continues across a piece's end is one draw when its bucket
/// merges (one per command when it does not, as in a single visit). The
/// stream is each piece's ids in turn.
fn join_in_order(
    parts: Vec<(Vec<MergedDraw>, Vec<PrimitiveSlot>)>,
    ranks: &[DrawRank],
    instancing: bool,
    can_merge: &impl Fn(BucketId) -> bool,
) -> Option<(Vec<MergedDraw>, IdStream)> {
    let rank = |d: &MergedDraw| ranks[d.bucket.index()].0;
    let mut last = None;
    for (draws, _) in &parts {
        if let (Some(first), Some(end)) = (draws.first(), draws.last()) {
            if last.is_some_and(|l| rank(first) < l) {
                return None;
            }
            last = Some(rank(end));
        }
    }
    let mut draws: Vec<MergedDraw> = Vec::with_capacity(parts.iter().map(|p| p.0.len()).sum());
    let (mut lists, mut whole_lists) = (Vec::with_capacity(parts.len()), Vec::with_capacity(parts.len()));
    let mut base = 0;
    for (part_draws, ids) in parts {
        let len = ids.len();
        whole_lists.push((lists.len(), 0..len));
        lists.push(ids);
        let mut part_draws = part_draws.into_iter().peekable();
        if let (Some(prev), Some(first)) = (draws.last_mut(), part_draws.peek()) {
            if prev.bucket == first.bucket && instancing && can_merge(first.bucket) {
                prev.instance_count += first.instance_count;
                part_draws.next();
            }
        }
        draws.extend(part_draws.map(|d| MergedDraw { first_instance: d.first_instance + base, ..d }));
        base += len as u32;
    }
    Some((draws, IdStream::from_parts(lists, whole_lists)))
}

/// Visible commands counting-sorted into draw order: the ids by rank, in
/// slot order within a rank, and where each rank's ids start.
struct RankSorted {
    ids: Vec<PrimitiveSlot>,
    /// The lowest rank used; `starts[r - lo]..starts[r - lo + 1]` are rank
    /// `r`'s ids (one entry, 0, when there are none).
    lo: usize,
    starts: Vec<u32>,
}

impl RankSorted {
    /// The visible commands of `range`, counting-sorted: visited once for
    /// their ranks (the sort spans only the ranks they use: a pass's
    /// buckets keep to their own pipelines, which rank together — about
    /// the pass's share of the frame's buckets, not all of them), then
    /// scattered in slot order, each rank's range filled front to back.
    fn of(cache: &PassCache, vis: &ViewVisibility, range: Range<usize>, ranks: &[DrawRank]) -> Self {
        let mut visited: Vec<(u32, PrimitiveSlot)> = Vec::with_capacity(range.len());
        let (mut lo, mut hi) = (u32::MAX, 0);
        visit_cached(cache, vis, range, |bucket, slot| {
            let r = ranks[bucket.index()].0;
            (lo, hi) = (lo.min(r), hi.max(r + 1));
            visited.push((r, slot));
            ControlFlow::Continue(())
        });
        if visited.is_empty() {
            return Self { ids: Vec::new(), lo: 0, starts: vec![0] };
        }
        let (lo, hi) = (lo as usize, hi as usize);
        let mut starts = vec![0u32; hi - lo + 1];
        for &(r, _) in &visited {
            starts[r as usize - lo + 1] += 1;
        }
        for i in 1..starts.len() {
            starts[i] += starts[i - 1];
        }
        let mut ids = vec![PrimitiveSlot(0); visited.len()];
        let mut next = starts.clone();
        for &(r, slot) in &visited {
            let n = &mut next[r as usize - lo];
            ids[*n as usize] = slot;
            *n += 1;
        }
        Self { ids, lo, starts }
    }

    /// The ranks this holds ids of (some may have none).
    fn ranks(&self) -> Range<usize> {
        self.lo..self.lo + self.starts.len() - 1
    }

    /// Where rank `r`'s ids are in `ids`.
    fn of_rank(&self, r: usize) -> Range<usize> {
        if !self.ranks().contains(&r) {
            return 0..0;
        }
        self.starts[r - self.lo] as usize..self.starts[r - self.lo + 1] as usize
    }

    /// The draws of a whole pass: a run per rank.
    fn into_draws(
        self,
        by_rank: &[BucketId],
        instancing: bool,
        can_merge: &impl Fn(BucketId) -> bool,
    ) -> (Vec<MergedDraw>, Vec<PrimitiveSlot>) {
        let counts = self.starts.windows(2).map(|w| (w[1] - w[0]) as usize);
        (runs_by_rank(by_rank, self.lo, counts, instancing, can_merge), self.ids)
    }

    /// Pieces of a pass joined rank by rank, a run per rank: the stream
    /// is each rank's ids from every piece in turn (slot order), parts of
    /// the pieces' lists.
    fn join(
        pieces: Vec<RankSorted>,
        by_rank: &[BucketId],
        instancing: bool,
        can_merge: &impl Fn(BucketId) -> bool,
    ) -> (Vec<MergedDraw>, IdStream) {
        let used = pieces.iter().filter(|p| !p.ids.is_empty());
        let lo = used.clone().map(|p| p.ranks().start).min().unwrap_or(0);
        let hi = used.map(|p| p.ranks().end).max().unwrap_or(0);
        // Per rank, each piece's range of it: the stream's parts, and the rank's count.
        let (mut counts, mut parts) = (Vec::with_capacity(hi - lo), Vec::new());
        for r in lo..hi {
            let at = parts.len();
            parts.extend(pieces.iter().enumerate().map(|(i, p)| (i, p.of_rank(r))).filter(|(_, ids)| !ids.is_empty()));
            counts.push(parts[at..].iter().map(|(_, ids)| ids.len()).sum());
        }
        let draws = runs_by_rank(by_rank, lo, counts.into_iter(), instancing, can_merge);
        (draws, IdStream::from_parts(pieces.into_iter().map(|p| p.ids).collect(), parts))
    }
}

/// The draws of an id stream sorted by rank, `counts` ids of each rank
/// from `lo` on: a run per rank that has any.
fn runs_by_rank(
    by_rank: &[BucketId],
    lo: usize,
    counts: impl Iterator<Item = usize>,
    instancing: bool,
    can_merge: &impl Fn(BucketId) -> bool,
) -> Vec<MergedDraw> {
    let mut draws = Vec::new();
    let mut first = 0;
    for (r, count) in (lo..).zip(counts) {
        if count > 0 {
            push_run(&mut draws, by_rank[r], first as u32, count as u32, instancing, can_merge);
        }
        first += count;
    }
    draws
}

/// The in-order visit of [`gather_sort_merge_cached`], its run state in
/// locals: the hot loop of a frame's pass setup (one step per visible
/// command), kept free of calls.
struct Runs<'a> {
    draws: &'a mut Vec<MergedDraw>,
    ids: &'a mut Vec<PrimitiveSlot>,
    /// The run being gathered: its rank (`u32::MAX` before the first),
    /// bucket and first id.
    rank: u32,
    bucket: BucketId,
    first: u32,
}

impl Runs<'_> {
    /// Visits `cache` for the visible primitives of `range` (as
    /// [`visit_cached`] does) while the commands come in draw order, each
    /// run of one bucket a draw. False when a command comes out of order:
    /// the lists are then partial.
    fn visit(
        &mut self,
        cache: &PassCache,
        vis: &ViewVisibility,
        range: Range<usize>,
        ranks: &[DrawRank],
        instancing: bool,
        can_merge: &impl Fn(BucketId) -> bool,
    ) -> bool {
        if cache.entries == 0 {
            return true;
        }
        for (&slot, &lod) in vis.visible[range.clone()].iter().zip(&vis.lods[range]) {
            let e = cache.first[slot.index()];
            if e.bucket != BucketId::NONE && e.lod == lod && !self.step(e.bucket, slot, ranks, instancing, can_merge) {
                return false;
            }
            if e.more && e.bucket != BucketId::NONE {
                for x in &cache.extra[&slot] {
                    if x.lod == lod && !self.step(x.bucket, slot, ranks, instancing, can_merge) {
                        return false;
                    }
                }
            }
        }
        if self.rank != u32::MAX {
            let count = self.ids.len() as u32 - self.first;
            push_run(self.draws, self.bucket, self.first, count, instancing, can_merge);
        }
        true
    }

    #[inline(always)]
    fn step(
        &mut self,
        bucket: BucketId,
        slot: PrimitiveSlot,
        ranks: &[DrawRank],
        instancing: bool,
        can_merge: &impl Fn(BucketId) -> bool,
    ) -> bool {
        let r = ranks[bucket.index()].0;
        if r != self.rank {
            if self.rank != u32::MAX {
                if r < self.rank {
                    return false;
                }
                let count = self.ids.len() as u32 - self.first;
                push_run(self.draws, self.bucket, self.first, count, instancing, can_merge);
            }
            (self.rank, self.bucket, self.first) = (r, bucket, self.ids.len() as u32);
        }
        self.ids.push(slot);
        true
    }
}

/// A run of one bucket's primitives in the id stream, `first..first +
/// count`, as one instanced draw, or one draw each when it cannot merge.
/// One command is one draw either way: its bucket's command is not read
/// (a scene of distinct meshes asks no bucket whether it merges). Inlined:
/// in a scene of distinct meshes every visible command ends a run.
#[inline(always)]
fn push_run(
    draws: &mut Vec<MergedDraw>,
    bucket: BucketId,
    first: u32,
    count: u32,
    instancing: bool,
    can_merge: &impl Fn(BucketId) -> bool,
) {
    if count == 1 || (instancing && can_merge(bucket)) {
        draws.push(MergedDraw { bucket, first_instance: first, instance_count: count });
    } else {
        draws.extend((first..first + count).map(|i| MergedDraw { bucket, first_instance: i, instance_count: 1 }));
    }
}

/// The general path: `cache`'s commands for the visible primitives (none
/// without a cache: everything came through the dynamic path) and the
/// frame's `dynamic` commands of this (view, pass), in primitive order, are
/// interleaved by primitive, sorted into draw order — back to front by
/// `translucent(slot)` for cached commands when given — and merged.
pub(crate) fn gather_sort_merge(
    cache: Option<&PassCache>,
    vis: &ViewVisibility,
    dynamic: &[VisibleCommand],
    ranks: &[DrawRank],
    translucent: Option<&dyn Fn(PrimitiveSlot) -> u64>,
    can_merge: impl Fn(BucketId) -> bool,
    instancing: bool,
) -> (Vec<MergedDraw>, Vec<PrimitiveSlot>) {
    debug_assert!(dynamic.windows(2).all(|w| w[0].primitive <= w[1].primitive), "dynamic commands in primitive order");
    let mut visible = Vec::with_capacity(vis.visible.len() + dynamic.len());
    let mut dynamic = dynamic.iter().peekable();
    if let Some(cache) = cache {
        visit_cached(cache, vis, 0..vis.visible.len(), |bucket, primitive| {
            // Dynamic commands of earlier primitives go first: the list stays in
            // primitive order (a slot's cached commands before its dynamic ones).
            while let Some(d) = dynamic.next_if(|d| d.primitive < primitive) {
                visible.push(*d);
            }
            let sort_key = translucent.map_or(0, |key| key(primitive));
            visible.push(VisibleCommand { bucket, primitive, sort_key });
            ControlFlow::Continue(())
        });
    }
    visible.extend(dynamic);
    let sorted = if translucent.is_some() {
        sort_back_to_front(&mut visible, ranks);
        visible
    } else {
        sort_by_bucket(&visible, ranks)
    };
    merge(&sorted, can_merge, instancing)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mesh_pass::buckets_by_rank;
    use crate::scene::CachedEntry;
    use proptest::prelude::*;

    /// A pass cache with `entries[slot]` as each slot's (bucket, LOD) entries.
    fn cache(entries: &[Vec<(u32, u8)>]) -> PassCache {
        let mut cache = PassCache::default();
        for (slot, list) in entries.iter().enumerate() {
            let mut first = CachedEntry { bucket: BucketId::NONE, lod: 0, more: false };
            for (i, &(bucket, lod)) in list.iter().enumerate() {
                let e = CachedEntry { bucket: BucketId(bucket), lod, more: false };
                cache.entries += 1;
                if i == 0 {
                    first = e;
                } else {
                    first.more = true;
                    cache.extra.entry(PrimitiveSlot(slot as u32)).or_default().push(e);
                }
            }
            cache.first.push(first);
        }
        cache
    }

    /// Per slot its cache entries (bucket, LOD); per slot its visible LOD;
    /// the ranks of the buckets; which buckets can merge; instancing on.
    type RandomScene = (Vec<Vec<(u32, u8)>>, Vec<Option<u8>>, Vec<u32>, u32, bool);

    fn scene_strategy() -> impl Strategy<Value = RandomScene> {
        (1usize..120, 1u32..10).prop_flat_map(|(slots, buckets)| {
            (
                proptest::collection::vec(proptest::collection::vec((0..buckets, 0u8..2), 0..4), slots),
                proptest::collection::vec(proptest::option::of(0u8..2), slots),
                Just((0..buckets).collect::<Vec<u32>>()).prop_shuffle(),
                any::<u32>(),
                any::<bool>(),
            )
        })
    }

    fn visibility(visible: &[Option<u8>]) -> ViewVisibility {
        let mut vis = ViewVisibility::default();
        for (slot, lod) in visible.iter().enumerate() {
            if let Some(lod) = lod {
                vis.visible.push(PrimitiveSlot(slot as u32));
                vis.lods.push(*lod);
            }
        }
        vis
    }

    proptest! {
        /// Random scenes (slots with several cached commands at several
        /// LODs, random visibility, bucket ranks and mergeability): the fast
        /// path gives exactly the general path's draws and id stream.
        #[test]
        fn the_cached_fast_path_gives_the_general_paths_draws(
            (entries, visible, rank_perm, mergeable, instancing) in scene_strategy(),
            piece in proptest::option::of(1usize..40),
        ) {
            let cache = cache(&entries);
            let vis = visibility(&visible);
            let ranks: Vec<DrawRank> = rank_perm.iter().copied().map(DrawRank).collect();
            let can = |b: BucketId| mergeable & (1 << b.0) != 0;
            let (draws, ids) = gather_sort_merge_cached(&cache, &vis, &ranks, &buckets_by_rank(&ranks), can, instancing, piece);
            let fast = (draws, ids.to_vec());
            let general = gather_sort_merge(Some(&cache), &vis, &[], &ranks, None, can, instancing);
            prop_assert_eq!(&fast, &general);
            prop_assert!((0..ids.len()).all(|i| ids.get(i) == Some(fast.1[i])));
            // And the draw order is (rank, primitive).
            let order: Vec<(DrawRank, PrimitiveSlot)> = fast.0.iter().flat_map(|d| {
                let ranks = &ranks;
                let ids = &fast.1;
                (d.first_instance..d.first_instance + d.instance_count).map(move |i| (ranks[d.bucket.index()], ids[i as usize]))
            }).collect();
            prop_assert!(order.windows(2).all(|w| w[0] <= w[1]));
        }

        /// Scenes whose visible commands come in draw order (buckets ranked
        /// in the order slots use them: the common case, which skips the
        /// counting sort) give the general path's draws and ids too.
        #[test]
        fn the_in_order_shortcut_gives_the_general_paths_draws(
            steps in proptest::collection::vec(proptest::collection::vec((any::<bool>(), 0u8..2), 0..4), 1..120),
            visible_lods in proptest::collection::vec(proptest::option::of(0u8..2), 120),
            mergeable: u64,
            instancing: bool,
            piece in proptest::option::of(1usize..40),
        ) {
            // Each entry uses the bucket before it or the next one: buckets
            // never fall in slot order, and ranks are the identity.
            let mut bucket = 0u32;
            let entries: Vec<Vec<(u32, u8)>> = steps.iter().map(|slot| slot.iter().map(|&(step, lod)| {
                bucket += u32::from(step);
                (bucket, lod)
            }).collect()).collect();
            let cache = cache(&entries);
            let vis = visibility(&visible_lods[..entries.len()]);
            let ranks: Vec<DrawRank> = (0..=bucket).map(DrawRank).collect();
            let can = |b: BucketId| mergeable & (1 << (b.0 % 64)) != 0;
            let (draws, ids) = gather_sort_merge_cached(&cache, &vis, &ranks, &buckets_by_rank(&ranks), can, instancing, piece);
            let general = gather_sort_merge(Some(&cache), &vis, &[], &ranks, None, can, instancing);
            prop_assert_eq!((draws, ids.to_vec()), general);
        }

        /// Cached and dynamic commands together are in (rank, primitive)
        /// order too, wherever the dynamic primitives fall among the cached.
        #[test]
        fn cached_and_dynamic_commands_sort_by_rank_then_primitive(
            (entries, visible, rank_perm, mergeable, instancing) in scene_strategy(),
            dynamic in proptest::collection::vec((0u32..130, 0u32..10), 0..40),
        ) {
            let cache = cache(&entries);
            let vis = visibility(&visible);
            let buckets = rank_perm.len() as u32;
            let ranks: Vec<DrawRank> = rank_perm.iter().copied().map(DrawRank).collect();
            let mut dynamic: Vec<VisibleCommand> = dynamic.iter().map(|&(p, b)| VisibleCommand { bucket: BucketId(b % buckets), primitive: PrimitiveSlot(p), sort_key: 0 }).collect();
            dynamic.sort_by_key(|d| d.primitive);
            let can = |b: BucketId| mergeable & (1 << b.0) != 0;
            let (draws, ids) = gather_sort_merge(Some(&cache), &vis, &dynamic, &ranks, None, can, instancing);
            let order: Vec<(DrawRank, PrimitiveSlot)> = draws.iter().flat_map(|d| {
                let ranks = &ranks;
                let ids = &ids;
                (d.first_instance..d.first_instance + d.instance_count).map(move |i| (ranks[d.bucket.index()], ids[i as usize]))
            }).collect();
            prop_assert!(order.windows(2).all(|w| w[0] <= w[1]), "{:?}", order);
            let cached = gather_sort_merge(Some(&cache), &vis, &[], &ranks, None, can, instancing).1.len();
            prop_assert_eq!(ids.len(), cached + dynamic.len());
        }
    }

    #[test]
    fn lods_and_extra_entries_select_what_a_visible_primitive_draws() {
        // Slot 0: bucket 0 at LOD 0, bucket 1 at LOD 1; slot 1: buckets 1 and 0 at LOD 0; slot 2: nothing.
        let cache = cache(&[vec![(0, 0), (1, 1)], vec![(1, 0), (0, 0)], vec![]]);
        let vis = ViewVisibility {
            visible: vec![PrimitiveSlot(0), PrimitiveSlot(1), PrimitiveSlot(2)],
            lods: vec![1, 0, 0],
            ..Default::default()
        };
        let ranks = [DrawRank(1), DrawRank(0)];
        let (draws, ids) = gather_sort_merge_cached(&cache, &vis, &ranks, &buckets_by_rank(&ranks), |_| true, true, None);
        assert_eq!(ids.to_vec(), vec![PrimitiveSlot(0), PrimitiveSlot(1), PrimitiveSlot(1)]);
        assert_eq!(
            draws,
            vec![
                MergedDraw { bucket: BucketId(1), first_instance: 0, instance_count: 2 },
                MergedDraw { bucket: BucketId(0), first_instance: 2, instance_count: 1 }
            ]
        );
    }
}
