//! The per-pass command cache of static primitives (UE's cached mesh draw
//! commands, per pass): for each primitive slot, the state buckets of the
//! commands built for it when it was added. The scene fills and empties it;
//! pass setup gathers the visible slots' entries from it.

use super::{BucketId, PrimitiveSlot};
use rustc_hash::FxHashMap as HashMap;

/// One cached command of a slot in a pass.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct CachedEntry {
    /// [`BucketId::NONE`] when the slot has no command in the pass.
    pub bucket: BucketId,
    pub lod: u8,
    /// More entries for this slot in `PassCache::extra`.
    pub more: bool,
}

pub(crate) const EMPTY: CachedEntry = CachedEntry { bucket: BucketId::NONE, lod: 0, more: false };

/// A pass's cached commands, per slot: the first inline (most primitives
/// have one section), the rest in `extra`. `first` is empty while the pass
/// has never held a command (most of the passes a table can have never
/// do: 8 bytes a primitive each), and covers every slot from its first one.
#[derive(Default)]
pub(crate) struct PassCache {
    pub first: Vec<CachedEntry>,
    pub extra: HashMap<PrimitiveSlot, Vec<CachedEntry>>,
    /// Entries in the pass; a pass with none is not gathered at all.
    pub entries: usize,
}

/// The primitives one view sees, in slot order, with the LOD each draws at:
/// what a pass's setup gathers from its cache.
#[derive(Clone, Copy, Debug)]
pub(crate) struct VisiblePrimitives<'a> {
    /// The visible primitives' slots, ascending.
    pub visible: &'a [PrimitiveSlot],
    /// Per visible primitive, its LOD.
    pub lods: &'a [u8],
}
