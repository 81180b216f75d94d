//! A pass's draws, kept as runs, and what the rest of the renderer reads
//! them as: [`PassDraws`], plain draws in draw order.
//!
//! After merging, a scene of one mesh drawn many times is a few instanced
//! draws; a scene of distinct meshes (an imported model) is one draw per
//! visible command, and those draws come in rank order, each one instance
//! at the next place in the id stream. Listing each of them would cost pass
//! setup a record per draw on top of its work per visible command. So the
//! list keeps *runs* ([`DrawRun`]): one draw, or a chain of draws of
//! consecutive ranks, one instance each, at consecutive places in the
//! stream — which pass setup extends by counting.
//! The draws themselves come back out of a run with the ranks' order
//! ([`DrawOrder`]), which [`PassDraws`] keeps (a shared handle to the
//! frame's), so that whoever reads a pass's draws (recording, the frame's
//! stats) gets each at the cost of the load it replaces, without knowing
//! about runs.
//!
//! The runs are a representation: two lists are the same when they
//! [iterate](DrawList::iter) the same draws, however they are cut into runs
//! (the pieces of a parallel pass setup may cut a chain where a serial one
//! does not).

use super::{buckets_by_rank, BucketId, DrawRank, IdStream, MergedDraw};
use std::ops::Range;
use std::sync::Arc;

/// The order the state buckets are drawn in: rank of every bucket id and
/// bucket id of every rank (`ranks` inverted), with which a run's later
/// draws are found. Built once where the ranks are (the scene's buckets, or
/// a frame that ranks its own buckets with them) and shared: cloning it is
/// a reference count, so every pass's [`PassDraws`] keeps one.
#[derive(Clone, Debug, Default)]
pub(crate) struct DrawOrder(Arc<OrderTables>);

#[derive(Debug, Default)]
struct OrderTables {
    ranks: Vec<DrawRank>,
    by_rank: Vec<BucketId>,
}

impl DrawOrder {
    /// Bytes its tables hold.
    pub fn memory_bytes(&self) -> u64 {
        (self.0.ranks.capacity() * std::mem::size_of::<DrawRank>() + self.0.by_rank.capacity() * std::mem::size_of::<BucketId>()) as u64
    }

    /// The order of `ranks` (a permutation, indexed by [`BucketId::index`]).
    pub fn new(ranks: Vec<DrawRank>) -> Self {
        let by_rank = buckets_by_rank(&ranks);
        Self(Arc::new(OrderTables { ranks, by_rank }))
    }

    /// Rank of each bucket id.
    pub fn ranks(&self) -> &[DrawRank] {
        &self.0.ranks
    }

    /// Bucket id of each rank.
    pub fn by_rank(&self) -> &[BucketId] {
        &self.0.by_rank
    }

    /// Both tables, borrowed, for the loops that read them per draw.
    #[inline]
    pub(super) fn slices(&self) -> OrderSlices<'_> {
        OrderSlices { ranks: &self.0.ranks, by_rank: &self.0.by_rank }
    }
}

/// A [`DrawOrder`]'s tables, borrowed: what the loops over draws and
/// visible commands hold (two slices, no reference count to follow).
#[derive(Clone, Copy, Debug)]
pub(super) struct OrderSlices<'a> {
    /// Rank of each bucket id.
    pub ranks: &'a [DrawRank],
    /// Bucket id of each rank.
    pub by_rank: &'a [BucketId],
}

/// One draw, or a chain of draws of consecutive ranks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) struct DrawRun {
    /// The run's first draw.
    pub first: MergedDraw,
    /// Draws in the run (at least 1). With more than one, every draw is one
    /// instance and draw `k` is of the bucket ranked `k` after the first's,
    /// at `first.first_instance + k` in the id stream.
    pub draws: u32,
}

impl DrawRun {
    /// A run of the one draw `d`.
    pub fn single(d: MergedDraw) -> Self {
        Self { first: d, draws: 1 }
    }

    /// Draw `k` of the run (`k < self.draws`).
    #[inline]
    pub fn draw(&self, k: u32, order: OrderSlices<'_>) -> MergedDraw {
        if k == 0 {
            return self.first;
        }
        let rank = order.ranks[self.first.bucket.index()].0 + k;
        MergedDraw { bucket: order.by_rank[rank as usize], first_instance: self.first.first_instance + k, instance_count: 1 }
    }
}

/// Where a draw is in a [`DrawList`]: its run and its place in the run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct DrawCursor {
    run: usize,
    offset: u32,
}

/// A pass's draws in draw order, as runs (see the module docs).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct DrawList {
    runs: Vec<DrawRun>,
    len: usize,
}

impl DrawList {
    /// The list of `runs`.
    pub fn from_runs(runs: Vec<DrawRun>) -> Self {
        let len = runs.iter().map(|r| r.draws as usize).sum();
        Self { runs, len }
    }

    /// The list of `draws`, a run each.
    pub fn from_draws(draws: Vec<MergedDraw>) -> Self {
        let len = draws.len();
        Self { runs: draws.into_iter().map(DrawRun::single).collect(), len }
    }

    /// Draws in the list.
    pub fn len(&self) -> usize {
        self.len
    }

    /// The runs, in draw order.
    #[cfg(test)]
    pub fn runs(&self) -> &[DrawRun] {
        &self.runs
    }

    /// The first draw.
    pub fn first(&self) -> Option<MergedDraw> {
        self.runs.first().map(|r| r.first)
    }

    /// Every draw, in draw order.
    pub fn iter<'a>(&'a self, order: OrderSlices<'a>) -> impl Iterator<Item = MergedDraw> + 'a {
        self.iter_from(DrawCursor::default(), order)
    }

    /// The draws from `at` on, in draw order.
    pub fn iter_from<'a>(&'a self, at: DrawCursor, order: OrderSlices<'a>) -> impl Iterator<Item = MergedDraw> + 'a {
        let runs = self.runs.get(at.run..).unwrap_or_default();
        runs.iter().enumerate().flat_map(move |(i, r)| {
            let skip = if i == 0 { at.offset } else { 0 };
            (skip..r.draws).map(move |k| r.draw(k, order))
        })
    }

    /// Cursors at the draws `0, per, 2 per, …` before [`DrawList::len`]
    /// (one walk over the runs): where chunks of `per` draws start.
    pub fn cursors(&self, per: usize) -> impl Iterator<Item = DrawCursor> + '_ {
        let per = per.max(1);
        let mut end = 0usize;
        self.runs.iter().enumerate().flat_map(move |(i, r)| {
            let start = end;
            end += r.draws as usize;
            // From the next multiple of `per` at or after `start`.
            (start.div_ceil(per) * per..end).step_by(per).map(move |at| DrawCursor { run: i, offset: (at - start) as u32 })
        })
    }
}

/// A pass's draws and its id stream, as [pass setup](super::setup) made
/// them: what recording and the frame's stats read. The draws come out
/// plain, in draw order ([`PassDraws::iter`], or in chunks to record in
/// parallel: [`PassDraws::chunks`]); how they are kept (runs, chains, the
/// pieces of a parallel setup) stays inside `mesh_pass`.
#[derive(Clone, Debug)]
pub(crate) struct PassDraws {
    list: DrawList,
    ids: IdStream,
    /// The frame's order, which the runs are read with.
    order: DrawOrder,
}

impl PassDraws {
    /// `list`'s draws of the stream `ids`, read with `order`.
    pub(super) fn new(list: DrawList, ids: IdStream, order: DrawOrder) -> Self {
        Self { list, ids, order }
    }

    /// Draws in the pass.
    pub fn len(&self) -> usize {
        self.list.len()
    }

    /// The first draw.
    pub fn first(&self) -> Option<MergedDraw> {
        self.list.first()
    }

    /// Every draw, in draw order.
    pub fn iter(&self) -> impl Iterator<Item = MergedDraw> + '_ {
        self.list.iter(self.order.slices())
    }

    /// The pass's id stream: its primitives in draw order, where a draw's
    /// instances are (`first_instance..first_instance + instance_count`).
    pub fn ids(&self) -> &IdStream {
        &self.ids
    }

    /// The runs the draws are kept as (tests of pass setup's chains).
    #[cfg(test)]
    pub(super) fn runs(&self) -> &[DrawRun] {
        self.list.runs()
    }

    /// The draws cut into at most `count` chunks of consecutive draws, in
    /// order, each of `len().div_ceil(count)` draws but the last (none
    /// when the pass draws nothing): one walk over the list, so that
    /// chunks can be recorded in parallel, each reading only its draws.
    pub fn chunks(&self, count: usize) -> Vec<DrawChunk<'_>> {
        let n = self.len();
        let per = n.div_ceil(count.max(1)).max(1);
        let mut chunks = Vec::with_capacity(n.div_ceil(per));
        chunks.extend(self.list.cursors(per).zip((0..n).step_by(per)).map(|(at, start)| DrawChunk {
            draws: self,
            at,
            range: start..(start + per).min(n),
        }));
        chunks
    }
}

/// Consecutive draws of a [`PassDraws`]: one of [`PassDraws::chunks`].
#[derive(Clone, Debug)]
pub(crate) struct DrawChunk<'a> {
    draws: &'a PassDraws,
    /// Where the chunk starts in the list's runs.
    at: DrawCursor,
    range: Range<usize>,
}

impl<'a> DrawChunk<'a> {
    /// Which of the pass's draws the chunk holds (the first chunk starts
    /// at 0, the last ends at [`PassDraws::len`]).
    pub fn range(&self) -> Range<usize> {
        self.range.clone()
    }

    /// The chunk's draws, in draw order.
    pub fn iter(&self) -> impl Iterator<Item = MergedDraw> + 'a {
        self.draws.list.iter_from(self.at, self.draws.order.slices()).take(self.range.len())
    }
}

/// Builds a [`DrawList`] from runs of one bucket's ids (`first..first +
/// count` in the stream), pushed in draw order with their ranks: a run of
/// one id whose rank follows the previous single one's extends a chain,
/// without a record of its own. Inlined: pass setup pushes a run per
/// visible command in a scene of distinct meshes.
pub(super) struct DrawListBuilder {
    runs: Vec<DrawRun>,
    /// The open chain (`draws == 0`: none) and the rank that extends it.
    chain: DrawRun,
    next_rank: u32,
}

impl DrawListBuilder {
    pub fn with_capacity(runs: usize) -> Self {
        let none = MergedDraw { bucket: BucketId::NONE, first_instance: 0, instance_count: 0 };
        Self { runs: Vec::with_capacity(runs), chain: DrawRun { first: none, draws: 0 }, next_rank: 0 }
    }

    /// Bucket `bucket` of rank `rank` draws the ids `first..first + count`:
    /// one instanced draw when `merge` (dynamic instancing on and the
    /// command can merge), else one draw per id.
    #[inline(always)]
    pub fn push(&mut self, rank: u32, bucket: BucketId, first: u32, count: u32, merge: impl FnOnce() -> bool) {
        if !self.extend_chain(rank, count) {
            self.push_new(rank, bucket, first, count, merge());
        }
    }

    /// Extends the open chain by the next rank's one id, if that is what
    /// the run is: the one step pass setup takes per visible command in a
    /// scene of distinct meshes.
    #[inline(always)]
    pub fn extend_chain(&mut self, rank: u32, count: u32) -> bool {
        let extends = count == 1 && self.chain_continues_at(rank);
        if extends {
            self.extend_chain_by(1);
        }
        extends
    }

    /// Whether the open chain would take the run of rank `rank` next.
    #[inline(always)]
    pub fn chain_continues_at(&self, rank: u32) -> bool {
        self.chain.draws > 0 && rank == self.next_rank
    }

    /// Extends the open chain by `n` single-id runs of the ranks after it
    /// ([`DrawListBuilder::chain_continues_at`] their first).
    #[inline(always)]
    pub fn extend_chain_by(&mut self, n: u32) {
        self.chain.draws += n;
        self.next_rank += n;
    }

    /// A run that does not extend the open chain: it starts one (a single
    /// id), or is a draw of its own. Out of line: at most once per chain
    /// or per run of one bucket.
    #[inline(never)]
    pub fn push_new(&mut self, rank: u32, bucket: BucketId, first: u32, count: u32, merge: bool) {
        self.close_chain();
        if count == 1 {
            self.chain = DrawRun::single(MergedDraw { bucket, first_instance: first, instance_count: 1 });
            self.next_rank = rank + 1;
        } else if merge {
            self.runs.push(DrawRun::single(MergedDraw { bucket, first_instance: first, instance_count: count }));
        } else {
            self.runs.extend((first..first + count).map(|i| DrawRun::single(MergedDraw { bucket, first_instance: i, instance_count: 1 })));
        }
    }

    #[inline(always)]
    fn close_chain(&mut self) {
        if self.chain.draws > 0 {
            self.runs.push(self.chain);
            self.chain.draws = 0;
        }
    }

    /// The runs pushed so far (the open chain last).
    pub fn finish(mut self) -> Vec<DrawRun> {
        self.close_chain();
        self.runs
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mesh_pass::PrimitiveSlot;

    fn d(bucket: u32, first_instance: u32, instance_count: u32) -> MergedDraw {
        MergedDraw { bucket: BucketId(bucket), first_instance, instance_count }
    }

    #[test]
    fn single_runs_of_consecutive_ranks_chain_and_iterate_back_as_draws() {
        // Buckets 10..14 rank 0..4 (and 0..10 after them).
        let ranks: Vec<DrawRank> = (0..14).map(|b| DrawRank(if b < 10 { b + 4 } else { b - 10 })).collect();
        let order = DrawOrder::new(ranks);
        let mut b = DrawListBuilder::with_capacity(4);
        b.push(0, BucketId(10), 0, 1, || true);
        b.push(1, BucketId(11), 1, 1, || true);
        b.push(2, BucketId(12), 2, 3, || true);
        b.push(3, BucketId(13), 5, 2, || false);
        let list = DrawList::from_runs(b.finish());
        assert_eq!(list.runs().len(), 4, "a chain of two, a merged draw, two draws that do not merge");
        assert_eq!(list.len(), 5);
        assert_eq!(list, DrawList::from_runs(list.runs().to_vec()));
        let draws = PassDraws::new(list, IdStream::whole((0..7).map(PrimitiveSlot).collect()), order);
        let all: Vec<MergedDraw> = draws.iter().collect();
        assert_eq!(all, vec![d(10, 0, 1), d(11, 1, 1), d(12, 2, 3), d(13, 5, 1), d(13, 6, 1)]);
        assert_eq!((draws.len(), draws.first()), (5, Some(all[0])));
        // In chunks: 1, 2 (of 3, 2 and 2 draws: cut inside the chain and
        // between the two last draws), 3 (of 2, 2, 1), 5 and more (a draw
        // each); each reads back its draws.
        for (count, lens) in [(1, &[5][..]), (2, &[3, 2]), (3, &[2, 2, 1]), (5, &[1; 5]), (9, &[1; 5])] {
            let chunks = draws.chunks(count);
            assert_eq!(chunks.iter().map(|c| c.range().len()).collect::<Vec<_>>(), lens, "{count} chunks");
            for c in &chunks {
                assert_eq!(c.iter().collect::<Vec<_>>(), all[c.range()], "{count} chunks");
            }
            assert_eq!(chunks.last().map(|c| c.range().end), Some(5));
        }
        let empty = PassDraws::new(DrawList::default(), IdStream::default(), DrawOrder::default());
        assert!(empty.chunks(3).is_empty() && empty.iter().next().is_none() && empty.first().is_none());
    }

    #[test]
    fn a_gap_in_ranks_or_a_merged_run_ends_a_chain() {
        let mut b = DrawListBuilder::with_capacity(4);
        b.push(0, BucketId(0), 0, 1, || true);
        b.push(2, BucketId(2), 1, 1, || true);
        b.push(3, BucketId(3), 2, 1, || true);
        b.push(4, BucketId(4), 3, 2, || true);
        b.push(5, BucketId(5), 5, 1, || true);
        let runs = b.finish();
        assert_eq!(runs.iter().map(|r| r.draws).collect::<Vec<_>>(), vec![1, 2, 1, 1]);
        assert_eq!(runs[2].first, d(4, 3, 2));
    }
}
