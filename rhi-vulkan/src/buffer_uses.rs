//! Which submission last used each buffer, so the host never writes what
//! the GPU may still read, nor reads what a later submission overwrote.
//!
//! Host-visible buffers are written and read by the CPU through their
//! mapping ([`crate::Device::write_buffer`], [`crate::Device::read_buffer_after`]),
//! which is safe code: without tracking, a write to a buffer a frame in
//! flight still reads is a data race on GPU memory, and a read "after frame
//! N" of a buffer frame N+1 writes returns N+1's bytes. So every command
//! list notes the buffers it binds, copies and fills ([`BufferUses`]), and
//! its submission stamps each one with the timeline value it signals — as
//! the deletion queue stamps what is destroyed, and as wgpu-core's tracker
//! stamps a resource with its last submission index. A host write then
//! waits (bounded) for the buffer's last use, counted in
//! [`crate::DeviceCounts::host_write_waits`] so a renderer can show it never
//! waits; a read after `value` of a buffer a later submission wrote is a
//! typed error.
//!
//! What counts as a GPU write: a copy's or fill's destination and a
//! `read_write` storage-buffer binding (the binding's reflected type says
//! which). Vertex, index, indirect, uniform, `read` storage and
//! copy-source uses are reads. A frame's bind groups
//! and its secondaries' uses are charged to the frame whether or not they
//! end up executed: a conservative stamp only ever makes a host access wait
//! for a frame that is already submitted.

use crate::buffer::BufferHandle;
use crate::device::{read, Device};
use std::sync::atomic::{AtomicU64, Ordering};

/// The buffers a command list (or a frame) uses, as recorded: runs of the
/// same buffer collapse, the rest is sorted out once, at submission.
#[derive(Debug, Default)]
pub(crate) struct BufferUses {
    reads: Vec<BufferHandle>,
    writes: Vec<BufferHandle>,
}

impl BufferUses {
    /// The GPU may read `buffer`.
    #[inline]
    pub fn read(&mut self, buffer: BufferHandle) {
        if self.reads.last() != Some(&buffer) {
            self.reads.push(buffer);
        }
    }

    /// The GPU may write `buffer`.
    #[inline]
    pub fn write(&mut self, buffer: BufferHandle) {
        if self.writes.last() != Some(&buffer) {
            self.writes.push(buffer);
        }
    }

    /// The GPU may write `buffer` when `writes`, and read it either way.
    #[inline]
    pub fn note(&mut self, buffer: BufferHandle, writes: bool) {
        if writes {
            self.write(buffer);
        } else {
            self.read(buffer);
        }
    }

    /// Moves `other`'s uses into these.
    pub fn append(&mut self, other: &mut BufferUses) {
        self.reads.append(&mut other.reads);
        self.writes.append(&mut other.writes);
    }

    /// Each buffer once, in handle order.
    fn dedup(&mut self) {
        for list in [&mut self.reads, &mut self.writes] {
            list.sort_unstable();
            list.dedup();
        }
    }

    #[cfg(test)]
    fn lens(&self) -> (usize, usize) {
        (self.reads.len(), self.writes.len())
    }
}

/// A buffer's last uses by submitted work, as timeline values (0: none).
#[derive(Debug, Default)]
pub(crate) struct LastUse {
    /// The last submission that may read or write the buffer.
    any: AtomicU64,
    /// The last submission that may write it.
    write: AtomicU64,
}

impl LastUse {
    /// The last submission that may use the buffer at all.
    pub fn any(&self) -> u64 {
        self.any.load(Ordering::Acquire)
    }

    /// The last submission that may write it.
    pub fn write(&self) -> u64 {
        self.write.load(Ordering::Acquire)
    }
}

impl Device {
    /// Stamps every buffer `uses` names with `value`, the timeline value of
    /// the submission that carries them (called right after it was
    /// submitted). A buffer destroyed since is skipped: the deletion queue
    /// keeps it alive past that value anyway.
    pub(crate) fn stamp_buffer_uses(&self, uses: &mut BufferUses, value: u64) {
        if uses.reads.is_empty() && uses.writes.is_empty() {
            return;
        }
        uses.dedup();
        let pool = read(&self.resources.buffers);
        for b in uses.reads.iter().filter_map(|h| pool.get(*h)) {
            b.last_use.any.fetch_max(value, Ordering::AcqRel);
        }
        for b in uses.writes.iter().filter_map(|h| pool.get(*h)) {
            b.last_use.any.fetch_max(value, Ordering::AcqRel);
            b.last_use.write.fetch_max(value, Ordering::AcqRel);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::handle::SlotKey;

    #[test]
    fn runs_collapse_as_recorded_and_repeats_at_submission() {
        let (a, b) = (BufferHandle::from_parts(0, 1), BufferHandle::from_parts(1, 1));
        let mut uses = BufferUses::default();
        for h in [a, a, a, b, b, a] {
            uses.read(h);
        }
        uses.write(b);
        uses.write(b);
        assert_eq!(uses.lens(), (3, 1), "consecutive repeats are noted once");
        let mut other = BufferUses::default();
        other.read(b);
        uses.append(&mut other);
        assert_eq!(other.lens(), (0, 0));
        uses.dedup();
        assert_eq!(uses.lens(), (2, 1), "each buffer once after the sort");
    }
}
