//! Pass setup for one (view, pass), [`setup`]: gather the visible
//! primitives' commands, sort them into draw order, merge them into draws.
//!
//! It takes one of two ways to the same result (the draw order of
//! [`super::sort`]):
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

use super::draw_list::{DrawList, DrawListBuilder, DrawOrder, DrawRun, OrderSlices, PassDraws};
use super::{merge, sort_back_to_front, sort_by_bucket, BucketId, DrawRank, IdStream, MergedDraw, PrimitiveSlot, VisibleCommand};
use super::{CachedEntry, PassCache, VisiblePrimitives};
use rayon::prelude::*;
use std::ops::{ControlFlow, Range};

/// How [`setup`] makes a pass's draws: the pass's sort and the frame's
/// settings.
pub(crate) struct SetupOptions<'a, M> {
    /// Back to front by this key of a cached command's primitive (a
    /// translucent pass; dynamic commands bring their own key); `None`: by
    /// bucket rank.
    pub back_to_front: Option<&'a dyn Fn(PrimitiveSlot) -> u64>,
    /// Whether a bucket's commands can merge into one instanced draw.
    pub can_merge: M,
    /// Dynamic instancing: a run of one bucket that can merge is one draw.
    pub instancing: bool,
    /// A large pass is set up in pieces on rayon's workers ([`PIECE`]).
    pub parallel: bool,
}

/// Pass setup for one (view, pass): the draws of `cache`'s commands for the
/// `visible` primitives (none without a cache: everything came through
/// the dynamic path) and of the frame's `dynamic` commands of the pass (in
/// primitive order), in draw order — by the ranks of `order`, the frame's,
/// or back to front — merged into instanced draws, with their id stream.
/// The fast path ([`gather_sort_merge_cached`]) when the pass sorts by
/// rank and has only cached commands, else the general one
/// ([`gather_sort_merge`]): the same draws and ids either way.
pub(crate) fn setup<M: Fn(BucketId) -> bool + Sync>(
    cache: Option<&PassCache>,
    visible: VisiblePrimitives<'_>,
    dynamic: &[VisibleCommand],
    order: &DrawOrder,
    options: SetupOptions<'_, M>,
) -> PassDraws {
    let SetupOptions { back_to_front, can_merge, instancing, parallel } = options;
    match cache {
        Some(cache) if back_to_front.is_none() && dynamic.is_empty() => {
            gather_sort_merge_cached(cache, visible, order, can_merge, instancing, parallel.then_some(PIECE))
        }
        _ => {
            let (draws, ids) = gather_sort_merge(cache, visible, dynamic, order.ranks(), back_to_front, can_merge, instancing);
            PassDraws::new(DrawList::from_draws(draws), IdStream::whole(ids), order.clone())
        }
    }
}

/// Calls `f(bucket, slot)` for every cached command of `cache` that a
/// visible primitive draws at its LOD, for the visible primitives of
/// `range` (indices into `vis.visible`) in visibility (= slot) order, a
/// slot's entries in cache order, until `f` returns
/// [`ControlFlow::Break`].
fn visit_cached(
    cache: &PassCache,
    vis: VisiblePrimitives<'_>,
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
/// unequal sizes).
pub(super) const PIECE: usize = 16 * 1024;

/// The fast path — an opaque pass with only cached commands. In one visit
/// of the cache when the visible commands already come in draw order (the
/// common case: buckets are born as primitives are added, in slot order,
/// and rank by birth within their pipeline and geometry groups): the
/// visited slots are the id stream and each run of one bucket is a draw.
/// Otherwise (the first visit stops at the first command out of order) a
/// second visit counts the visible primitives per rank and
/// scatters their ids straight into draw order (a counting sort without an
/// intermediate list of commands).
///
/// With `piece` (parallel), a pass with more visible primitives than a
/// piece is split into pieces of that many, each visited (and, when out of
/// order, counting-sorted) as a rayon task; the pieces are joined in piece
/// order — runs that continue across a piece's end merged, each rank's ids
/// taken from every piece in turn — so the draws and ids are exactly the
/// serial ones (the property tests below check it). The ids are not
/// copied into one list: the stream is the pieces' lists, in parts
/// ([`IdStream`]).
fn gather_sort_merge_cached(
    cache: &PassCache,
    vis: VisiblePrimitives<'_>,
    order: &DrawOrder,
    can_merge: impl Fn(BucketId) -> bool + Sync,
    instancing: bool,
    piece: Option<usize>,
) -> PassDraws {
    let (list, ids) = gather_cached(cache, vis, order.slices(), can_merge, instancing, piece);
    PassDraws::new(list, ids, order.clone())
}

/// [`gather_sort_merge_cached`]'s draws and ids.
fn gather_cached(
    cache: &PassCache,
    vis: VisiblePrimitives<'_>,
    order: OrderSlices<'_>,
    can_merge: impl Fn(BucketId) -> bool + Sync,
    instancing: bool,
    piece: Option<usize>,
) -> (DrawList, IdStream) {
    let n = vis.visible.len();
    let piece = piece.filter(|&p| p > 0 && n > p);
    let OrderSlices { ranks, by_rank } = order;
    let Some(piece) = piece else {
        let (runs, ids) = visit_in_order(cache, vis, 0..n, order, instancing, &can_merge)
            .unwrap_or_else(|| RankSorted::of(cache, vis, 0..n, ranks).into_draws(by_rank, instancing, &can_merge));
        return (DrawList::from_runs(runs), IdStream::whole(ids));
    };
    let pieces: Vec<Range<usize>> = (0..n).step_by(piece).map(|s| s..(s + piece).min(n)).collect();
    let in_order: Option<Vec<_>> = pieces
        .par_iter()
        .map(|r| {
            crate::trace::span!("task", "pass_setup_piece");
            visit_in_order(cache, vis, r.clone(), order, instancing, &can_merge)
        })
        .collect();
    if let Some(joined) = in_order.and_then(|parts| join_in_order(parts, order, instancing, &can_merge)) {
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
    vis: VisiblePrimitives<'_>,
    range: Range<usize>,
    order: OrderSlices<'_>,
    instancing: bool,
    can_merge: &impl Fn(BucketId) -> bool,
) -> Option<(Vec<DrawRun>, Vec<PrimitiveSlot>)> {
    // A run per bucket at most (unless one cannot merge), usually far
    // fewer: distinct meshes chain. Grown when needed: room for every
    // bucket would be an allocation the size of the id list.
    let draws = DrawListBuilder::with_capacity(range.len().min(order.by_rank.len()).min(64));
    let ids = Vec::with_capacity(range.len());
    let mut runs = Runs { draws, ids, rank: u32::MAX, bucket: BucketId::NONE, first: 0 };
    runs.visit(cache, vis, range, order, instancing, can_merge).then(|| (runs.draws.finish(), runs.ids))
}

/// Pieces visited in order, joined: `None` when a piece starts at a rank
/// below the one the piece before it ended at (out of order across them).
/// A run that continues across a piece's end is one draw when its bucket
/// merges (one per command when it does not, as in a single visit). The
/// stream is each piece's ids in turn.
fn join_in_order(
    parts: Vec<(Vec<DrawRun>, Vec<PrimitiveSlot>)>,
    order: OrderSlices<'_>,
    instancing: bool,
    can_merge: &impl Fn(BucketId) -> bool,
) -> Option<(DrawList, IdStream)> {
    let rank = |d: MergedDraw| order.ranks[d.bucket.index()].0;
    let last_draw = |r: &DrawRun| r.draw(r.draws - 1, order);
    let mut last = None;
    for (runs, _) in &parts {
        if let (Some(first), Some(end)) = (runs.first(), runs.last()) {
            if last.is_some_and(|l| rank(first.first) < l) {
                return None;
            }
            last = Some(rank(last_draw(end)));
        }
    }
    let mut runs: Vec<DrawRun> = Vec::with_capacity(parts.iter().map(|p| p.0.len()).sum());
    let (mut lists, mut whole_lists) = (Vec::with_capacity(parts.len()), Vec::with_capacity(parts.len()));
    let mut base = 0;
    for (part_runs, ids) in parts {
        let len = ids.len();
        whole_lists.push((lists.len(), 0..len));
        lists.push(ids);
        let mut part =
            part_runs.into_iter().map(|r| DrawRun { first: MergedDraw { first_instance: r.first.first_instance + base, ..r.first }, ..r });
        let mut next = part.next();
        // The previous piece's last draw and this one's first, of one
        // bucket that merges: one draw.
        if let (Some(prev), Some(head)) = (runs.last().copied(), next.as_mut()) {
            let end = last_draw(&prev);
            if end.bucket == head.first.bucket && instancing && can_merge(end.bucket) {
                let merged = MergedDraw { instance_count: end.instance_count + head.first.instance_count, ..end };
                if prev.draws == 1 {
                    *runs.last_mut().expect("prev") = DrawRun::single(merged);
                } else {
                    runs.last_mut().expect("prev").draws -= 1;
                    runs.push(DrawRun::single(merged));
                }
                next = (head.draws > 1).then(|| DrawRun { first: head.draw(1, order), draws: head.draws - 1 });
            }
        }
        runs.extend(next);
        runs.extend(part);
        base += len as u32;
    }
    Some((DrawList::from_runs(runs), IdStream::from_parts(lists, whole_lists)))
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
    fn of(cache: &PassCache, vis: VisiblePrimitives<'_>, range: Range<usize>, ranks: &[DrawRank]) -> Self {
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
    ) -> (Vec<DrawRun>, Vec<PrimitiveSlot>) {
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
    ) -> (DrawList, IdStream) {
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
        (DrawList::from_runs(draws), IdStream::from_parts(pieces.into_iter().map(|p| p.ids).collect(), parts))
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
) -> Vec<DrawRun> {
    let mut draws = DrawListBuilder::with_capacity(0);
    let mut first = 0;
    for (r, count) in (lo..).zip(counts) {
        if count > 0 {
            let bucket = by_rank[r];
            draws.push(r as u32, bucket, first as u32, count as u32, || instancing && can_merge(bucket));
        }
        first += count;
    }
    draws.finish()
}

/// The in-order visit of [`gather_sort_merge_cached`], its run state in
/// locals: the hot loop of a frame's pass setup, one step per visible
/// command, kept free of calls but for a new run. The two shapes a pass in
/// draw order mostly has — a run of one bucket (a mesh drawn many times)
/// and a chain of distinct meshes — each get a loop of their own
/// ([`Runs::run_on`], [`Runs::chain_on`]) that keeps only its own state
/// live, so that the state stays in registers instead of spilling to the
/// stack as it does in the general step.
struct Runs {
    draws: DrawListBuilder,
    ids: Vec<PrimitiveSlot>,
    /// The run being gathered: its rank (`u32::MAX` before the first),
    /// bucket and first id.
    rank: u32,
    bucket: BucketId,
    first: u32,
}

impl Runs {
    /// Visits `cache` for the visible primitives of `range` (as
    /// [`visit_cached`] does) while the commands come in draw order, each
    /// run of one bucket a draw. False when a command comes out of order:
    /// the lists are then partial.
    fn visit(
        &mut self,
        cache: &PassCache,
        vis: VisiblePrimitives<'_>,
        range: Range<usize>,
        order: OrderSlices<'_>,
        instancing: bool,
        can_merge: &impl Fn(BucketId) -> bool,
    ) -> bool {
        if cache.entries == 0 {
            return true;
        }
        let (visible, lods) = (&vis.visible[range.clone()], &vis.lods[range]);
        let mut i = 0;
        while let (Some(&slot), Some(&lod)) = (visible.get(i), lods.get(i)) {
            i += 1;
            let e = cache.first[slot.index()];
            if e.bucket != BucketId::NONE && e.lod == lod && !self.step(e.bucket, slot, order, instancing, can_merge) {
                return false;
            }
            if e.more && e.bucket != BucketId::NONE {
                for x in &cache.extra[&slot] {
                    if x.lod == lod && !self.step(x.bucket, slot, order, instancing, can_merge) {
                        return false;
                    }
                }
            } else if self.rank != u32::MAX {
                // The two shapes of a pass in draw order, each in a loop of its own.
                i += self.run_on(&cache.first, &visible[i..], &lods[i..]);
                if self.ids.len() as u32 == self.first + 1 && self.draws.chain_continues_at(self.rank) {
                    i += self.chain_on(&cache.first, &visible[i..], &lods[i..], order.by_rank);
                }
            }
        }
        if self.rank != u32::MAX {
            self.end_run(instancing, can_merge);
        }
        true
    }

    /// The run of one bucket (a mesh drawn many times), in its own loop:
    /// takes the visible primitives from the start of `visible` on while
    /// each draws one cached command (its first, at its LOD) of the
    /// bucket being gathered. Returns how many it took.
    #[inline(always)]
    fn run_on(&mut self, first: &[CachedEntry], visible: &[PrimitiveSlot], lods: &[u8]) -> usize {
        let bucket = self.bucket;
        let taken = visible.iter().zip(lods).take_while(|&(&slot, &lod)| {
            let e = first[slot.index()];
            e.bucket == bucket && e.lod == lod && !e.more
        });
        let before = self.ids.len();
        self.ids.extend(taken.map(|(&slot, _)| slot));
        self.ids.len() - before
    }

    /// The chain of distinct meshes, in its own loop: while the visible
    /// primitives from the start of `visible` on each draw one cached
    /// command (their first, at their LOD) of the bucket ranked next, each
    /// closes the run of one before it into the chain and starts its own.
    /// The steps [`Runs::step`] takes there, with only the chain's state
    /// live. Called when the run being gathered has one id and the chain
    /// continues at its rank; returns how many primitives it took.
    #[inline(always)]
    fn chain_on(&mut self, first: &[CachedEntry], visible: &[PrimitiveSlot], lods: &[u8], by_rank: &[BucketId]) -> usize {
        let mut rank = self.rank;
        let mut taken = 0;
        for (&slot, &lod) in visible.iter().zip(lods) {
            let e = first[slot.index()];
            // `BucketId::NONE` is in no rank.
            if e.lod != lod || e.more || by_rank.get(rank as usize + 1) != Some(&e.bucket) {
                break;
            }
            self.ids.push(slot);
            rank += 1;
            taken += 1;
        }
        if taken > 0 {
            self.draws.extend_chain_by(taken);
            (self.rank, self.bucket, self.first) = (rank, by_rank[rank as usize], self.ids.len() as u32 - 1);
        }
        taken as usize
    }

    /// The bucket run being gathered is a draw (or extends a chain).
    #[inline(always)]
    fn end_run(&mut self, instancing: bool, can_merge: &impl Fn(BucketId) -> bool) {
        let count = self.ids.len() as u32 - self.first;
        if !self.draws.extend_chain(self.rank, count) {
            let merge = count > 1 && instancing && can_merge(self.bucket);
            self.draws.push_new(self.rank, self.bucket, self.first, count, merge);
        }
    }

    /// One visible command: it continues the bucket's run, extends the
    /// chain (the next rank's bucket after a run of one: distinct meshes,
    /// found by the rank order alone, without looking up the bucket's
    /// rank), or ends the run and starts another. False when it comes out
    /// of draw order.
    #[inline(always)]
    fn step(
        &mut self,
        bucket: BucketId,
        slot: PrimitiveSlot,
        order: OrderSlices<'_>,
        instancing: bool,
        can_merge: &impl Fn(BucketId) -> bool,
    ) -> bool {
        if bucket != self.bucket {
            // Before the first run the rank wraps to 0, but no chain is open then.
            let next = self.rank.wrapping_add(1);
            let len = self.ids.len() as u32;
            if order.by_rank.get(next as usize) == Some(&bucket) && self.draws.extend_chain(self.rank, len - self.first) {
                (self.rank, self.bucket, self.first) = (next, bucket, len);
            } else {
                let r = order.ranks[bucket.index()].0;
                if self.rank != u32::MAX {
                    if r < self.rank {
                        return false;
                    }
                    self.end_run(instancing, can_merge);
                }
                (self.rank, self.bucket, self.first) = (r, bucket, len);
            }
        }
        self.ids.push(slot);
        true
    }
}

/// The general path: `cache`'s commands for the visible primitives (none
/// without a cache: everything came through the dynamic path) and the
/// frame's `dynamic` commands of this (view, pass), in primitive order, are
/// interleaved by primitive, sorted into draw order — back to front by
/// `translucent(slot)` for cached commands when given — and merged.
fn gather_sort_merge(
    cache: Option<&PassCache>,
    vis: VisiblePrimitives<'_>,
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

    /// Owned visible slots and LODs; `.get()` lends them as pass setup takes them.
    #[derive(Default)]
    struct Visibility {
        visible: Vec<PrimitiveSlot>,
        lods: Vec<u8>,
    }

    impl Visibility {
        fn get(&self) -> VisiblePrimitives<'_> {
            VisiblePrimitives { visible: &self.visible, lods: &self.lods }
        }
    }

    fn visibility(visible: &[Option<u8>]) -> Visibility {
        let mut vis = Visibility::default();
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
            let order = DrawOrder::new(ranks.clone());
            let draws = gather_sort_merge_cached(&cache, vis.get(), &order, can, instancing, piece);
            let ids = draws.ids();
            let fast = (draws.iter().collect::<Vec<_>>(), ids.to_vec());
            let general = gather_sort_merge(Some(&cache), vis.get(), &[], &ranks, None, can, instancing);
            prop_assert_eq!(&fast, &general);
            prop_assert!((0..ids.len()).all(|i| ids.get(i) == Some(fast.1[i])));
            // `setup` takes the fast path here, and gives the same.
            let options = SetupOptions { back_to_front: None, can_merge: can, instancing, parallel: true };
            let set_up = setup(Some(&cache), vis.get(), &[], &order, options);
            prop_assert_eq!((set_up.iter().collect::<Vec<_>>(), set_up.ids().to_vec()), general);
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
            let draws = gather_sort_merge_cached(&cache, vis.get(), &DrawOrder::new(ranks.clone()), can, instancing, piece);
            let general = gather_sort_merge(Some(&cache), vis.get(), &[], &ranks, None, can, instancing);
            prop_assert_eq!((draws.iter().collect::<Vec<_>>(), draws.ids().to_vec()), general);
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
            let (draws, ids) = gather_sort_merge(Some(&cache), vis.get(), &dynamic, &ranks, None, can, instancing);
            // `setup` takes the general path with dynamic commands, and gives the same.
            let options = SetupOptions { back_to_front: None, can_merge: can, instancing, parallel: true };
            let set_up = setup(Some(&cache), vis.get(), &dynamic, &DrawOrder::new(ranks.clone()), options);
            prop_assert_eq!((set_up.iter().collect::<Vec<_>>(), set_up.ids().to_vec()), (draws.clone(), ids.clone()));
            let order: Vec<(DrawRank, PrimitiveSlot)> = draws.iter().flat_map(|d| {
                let ranks = &ranks;
                let ids = &ids;
                (d.first_instance..d.first_instance + d.instance_count).map(move |i| (ranks[d.bucket.index()], ids[i as usize]))
            }).collect();
            prop_assert!(order.windows(2).all(|w| w[0] <= w[1]), "{:?}", order);
            let cached = gather_sort_merge(Some(&cache), vis.get(), &[], &ranks, None, can, instancing).1.len();
            prop_assert_eq!(ids.len(), cached + dynamic.len());
        }
    }

    /// The imported model's shape: every primitive its own bucket, ranked
    /// in slot order. Its draws are one run (a chain) on every path, and
    /// the draws it holds are one per primitive, in order.
    #[test]
    fn distinct_meshes_are_a_chain_of_draws_on_every_path() {
        let entries: Vec<Vec<(u32, u8)>> = (0..100).map(|s| vec![(s, 0)]).collect();
        let cache = cache(&entries);
        let vis = visibility(&[Some(0); 100]);
        let expect = |order: &DrawOrder| -> Vec<MergedDraw> {
            (0..100).map(|i| MergedDraw { bucket: order.by_rank()[i as usize], first_instance: i, instance_count: 1 }).collect()
        };
        let order = DrawOrder::new((0..100).map(DrawRank).collect());
        // In order, one visit.
        let draws = gather_sort_merge_cached(&cache, vis.get(), &order, |_| true, true, None);
        assert_eq!((draws.len(), draws.runs().len()), (100, 1));
        assert_eq!(draws.iter().collect::<Vec<_>>(), expect(&order));
        // In pieces of 30: a chain per piece at most.
        let pieced = gather_sort_merge_cached(&cache, vis.get(), &order, |_| true, true, Some(30));
        assert!(pieced.runs().len() <= 4, "{:?}", pieced.runs());
        assert_eq!(pieced.iter().collect::<Vec<_>>(), expect(&order));
        // Ranked against slot order: counting-sorted, still one chain.
        let reversed = DrawOrder::new((0..100).rev().map(DrawRank).collect());
        for piece in [None, Some(30)] {
            let draws = gather_sort_merge_cached(&cache, vis.get(), &reversed, |_| true, true, piece);
            assert_eq!((draws.len(), draws.runs().len()), (100, 1), "pieces {piece:?}");
            assert_eq!(draws.iter().collect::<Vec<_>>(), expect(&reversed));
            assert_eq!(draws.ids().get(0), Some(PrimitiveSlot(99)));
        }
        // A primitive out of view leaves a rank out: two chains.
        let mut seen = [Some(0); 100];
        seen[50] = None;
        let draws = gather_sort_merge_cached(&cache, visibility(&seen).get(), &order, |_| true, true, None);
        assert_eq!((draws.len(), draws.runs().len()), (99, 2));
    }

    #[test]
    fn lods_and_extra_entries_select_what_a_visible_primitive_draws() {
        // Slot 0: bucket 0 at LOD 0, bucket 1 at LOD 1; slot 1: buckets 1 and 0 at LOD 0; slot 2: nothing.
        let cache = cache(&[vec![(0, 0), (1, 1)], vec![(1, 0), (0, 0)], vec![]]);
        let vis = Visibility { visible: vec![PrimitiveSlot(0), PrimitiveSlot(1), PrimitiveSlot(2)], lods: vec![1, 0, 0] };
        let order = DrawOrder::new(vec![DrawRank(1), DrawRank(0)]);
        let draws = gather_sort_merge_cached(&cache, vis.get(), &order, |_| true, true, None);
        assert_eq!(draws.ids().to_vec(), vec![PrimitiveSlot(0), PrimitiveSlot(1), PrimitiveSlot(1)]);
        assert_eq!(
            draws.iter().collect::<Vec<_>>(),
            vec![
                MergedDraw { bucket: BucketId(1), first_instance: 0, instance_count: 2 },
                MergedDraw { bucket: BucketId(0), first_instance: 2, instance_count: 1 }
            ]
        );
    }
}
