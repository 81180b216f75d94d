//! The buffer writes proxies queue for the next frame
//! ([`crate::scene::ProxyUpdateContext::upload`]), kept in one byte arena
//! that lives as long as the scene.
//!
//! Why an arena: a thousand animating skeletal meshes write about 3 MB of
//! joint matrices every frame. Queued as a `Vec` each, those were a
//! thousand allocations a frame, freed together after the upload, and the
//! allocator handed the emptied pages back to the system, so the next
//! frame faulted them in (zeroed) again: page faults were most of the
//! render thread's cost of a pose. The arena keeps its capacity from frame
//! to frame; a frame's writes are copied into it once and from it, once,
//! into the frame's staging buffer.
//!
//! Proxies may also queue *moves*: GPU copies within a buffer, made before
//! the writes land. A skinned mesh keeps its previous pose that way (its
//! current matrices moved beside them), so only the new pose is written.

use rhi_vulkan::{BufferHandle, CopyRegion};
use std::ops::Range;

/// Queued writes: per write its buffer (`B`: a handle), its offset there
/// and its bytes' range in the arena.
pub(crate) struct ProxyUploads<B = BufferHandle> {
    bytes: Vec<u8>,
    writes: Vec<(B, u64, Range<usize>)>,
    /// GPU copies within a buffer, `(from, to, size)`, made before the writes land.
    moves: Vec<(B, CopyRegion)>,
}

impl<B> Default for ProxyUploads<B> {
    fn default() -> Self {
        Self { bytes: Vec::new(), writes: Vec::new(), moves: Vec::new() }
    }
}

impl<B: Copy> ProxyUploads<B> {
    /// Queues `parts`, one after another, written into `buffer` from `offset`.
    pub fn push(&mut self, buffer: B, offset: u64, parts: &[&[u8]]) {
        let start = self.bytes.len();
        for p in parts {
            self.bytes.extend_from_slice(p);
        }
        if self.bytes.len() > start {
            self.writes.push((buffer, offset, start..self.bytes.len()));
        }
    }

    /// Queues a GPU copy of `size` bytes within `buffer` from `from` to
    /// `to` (not overlapping), made before every queued write lands.
    pub fn push_move(&mut self, buffer: B, from: u64, to: u64, size: u64) {
        if size > 0 {
            self.moves.push((buffer, (from, to, size)));
        }
    }

    /// The queued moves, in the order queued.
    pub fn moves(&self) -> &[(B, CopyRegion)] {
        &self.moves
    }

    /// The queued writes, in the order queued.
    pub fn writes(&self) -> Vec<(B, u64, &[u8])> {
        self.writes.iter().map(|(b, o, r)| (*b, *o, &self.bytes[r.clone()])).collect()
    }

    /// Forgets the queued writes, keeping the arena's capacity (dropped
    /// when it is over four times what this frame needed and over 1 MiB,
    /// so one large frame does not hold memory for good).
    pub fn clear(&mut self) {
        let used = self.bytes.len();
        if self.bytes.capacity() > (4 * used).max(1 << 20) {
            self.bytes = Vec::with_capacity(used);
        }
        self.bytes.clear();
        self.writes.clear();
        self.moves.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_come_back_in_order_and_the_arena_keeps_its_capacity() {
        let (a, b) = (1u32, 2u32);
        let mut u = ProxyUploads::default();
        u.push(a, 8, &[&[1, 2], &[3]]);
        u.push(b, 0, &[&[]]);
        u.push(b, 4, &[&[9]]);
        u.push_move(a, 0, 64, 16);
        u.push_move(a, 0, 64, 0);
        assert_eq!(u.writes(), vec![(a, 8, &[1u8, 2, 3][..]), (b, 4, &[9u8][..])], "an empty write is none");
        assert_eq!(u.moves(), &[(a, (0, 64, 16))], "an empty move is none");
        let capacity = u.bytes.capacity();
        u.clear();
        assert!(u.writes().is_empty() && u.moves().is_empty());
        assert_eq!(u.bytes.capacity(), capacity, "a small arena is kept");
        u.push(a, 0, &[&vec![0u8; 8 << 20]]);
        u.clear();
        u.push(a, 0, &[&[1]]);
        u.clear();
        assert!(u.bytes.capacity() < 8 << 20, "a large frame's arena is not held for good");
    }
}
