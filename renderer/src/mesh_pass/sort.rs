//! Sorting a pass's visible commands.
//!
//! Opaque passes sort by state bucket (in draw-order rank) with a counting
//! sort: O(n), stable, so within a bucket primitives stay in the order they
//! were gathered (primitive index order) and the result is deterministic.
//! Translucency sorts back to front by view distance.

/// One visible (command, primitive) pair of a pass.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct VisibleCommand {
    pub bucket: u32,
    /// Primitive index in the GPU scene.
    pub primitive: u32,
    /// Translucency sort key (larger = farther); 0 for opaque passes.
    pub sort_key: u32,
}

/// Stable counting sort by `rank[bucket]`; `rank` must cover every bucket.
pub fn sort_by_bucket(commands: &[VisibleCommand], rank: &[u32]) -> Vec<VisibleCommand> {
    let mut counts = vec![0u32; rank.len() + 1];
    for c in commands {
        counts[rank[c.bucket as usize] as usize + 1] += 1;
    }
    for i in 1..counts.len() {
        counts[i] += counts[i - 1];
    }
    let mut out = vec![VisibleCommand { bucket: 0, primitive: 0, sort_key: 0 }; commands.len()];
    for c in commands {
        let slot = &mut counts[rank[c.bucket as usize] as usize];
        out[*slot as usize] = *c;
        *slot += 1;
    }
    out
}

/// Back to front: larger sort key first; ties by bucket rank, then primitive.
pub fn sort_back_to_front(commands: &mut [VisibleCommand], rank: &[u32]) {
    commands.sort_unstable_by(|a, b| {
        b.sort_key
            .cmp(&a.sort_key)
            .then(rank[a.bucket as usize].cmp(&rank[b.bucket as usize]))
            .then(a.primitive.cmp(&b.primitive))
    });
}

/// A distance as a sort key that orders like the float (non-negative input).
pub fn distance_key(distance: f32) -> u32 {
    distance.max(0.0).to_bits()
}
