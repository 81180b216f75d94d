//! Deferred destruction: a resource the caller destroys may still be read by
//! submitted GPU work, so it is parked here with the timeline value after
//! which nothing can use it, and destroyed once the GPU has passed that value
//! (kajiya's `defer_release`, wgpu-core's `device/life.rs`).
//!
//! Stamping: a resource destroyed while any command buffer is being recorded
//! (a frame, an `immediate` submission, a present) may be used by that
//! recording, so it stays unstamped until every open recording has been
//! submitted (or discarded) and then gets the last submitted value, which
//! covers them all. With nothing being recorded only already-submitted work
//! can use it, so it gets the last submitted value at once.

use std::collections::VecDeque;

pub(crate) struct DeletionQueue<T> {
    unstamped: Vec<T>,
    stamped: VecDeque<(u64, T)>,
    /// Command buffers being recorded now, on any thread.
    recording: usize,
}

impl<T> Default for DeletionQueue<T> {
    fn default() -> Self {
        Self { unstamped: Vec::new(), stamped: VecDeque::new(), recording: 0 }
    }
}

impl<T> DeletionQueue<T> {
    /// Parks `item`: stamped with `last_submitted` unless something is being recorded.
    pub fn push(&mut self, item: T, last_submitted: u64) {
        if self.recording > 0 {
            self.unstamped.push(item);
        } else {
            self.stamped.push_back((last_submitted, item));
        }
    }

    /// A recording starts: resources destroyed from now on may be used by it.
    /// Call before the recording looks up any handle.
    pub fn begin_recording(&mut self) {
        self.recording += 1;
    }

    /// A recording was submitted (or discarded); `last_submitted` covers it.
    /// When it was the last one open, every unstamped item gets that value.
    pub fn end_recording(&mut self, last_submitted: u64) {
        self.recording = self.recording.saturating_sub(1);
        if self.recording == 0 {
            for item in self.unstamped.drain(..) {
                self.stamped.push_back((last_submitted, item));
            }
        }
    }

    /// Removes the items whose stamp the GPU has reached.
    pub fn collect(&mut self, completed: u64) -> Vec<T> {
        let mut out = Vec::new();
        while self.stamped.front().is_some_and(|(v, _)| *v <= completed) {
            if let Some((_, item)) = self.stamped.pop_front() {
                out.push(item);
            }
        }
        out
    }

    pub fn len(&self) -> usize {
        self.unstamped.len() + self.stamped.len()
    }

    /// Everything, for shutdown (after the device is idle).
    pub fn drain_all(&mut self) -> Vec<T> {
        let mut out: Vec<T> = self.unstamped.drain(..).collect();
        out.extend(self.stamped.drain(..).map(|(_, t)| t));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn items_wait_for_their_stamp() {
        let mut q = DeletionQueue::default();
        q.push("idle", 3);
        q.begin_recording();
        q.push("in-frame", 3);
        assert!(q.collect(2).is_empty());
        assert_eq!(q.collect(3), vec!["idle"]);
        q.end_recording(4);
        assert!(q.collect(3).is_empty());
        assert_eq!(q.collect(4), vec!["in-frame"]);
        assert_eq!(q.len(), 0);
    }

    #[test]
    fn overlapping_recordings_stamp_when_the_last_ends() {
        let mut q = DeletionQueue::default();
        q.begin_recording(); // a frame
        q.begin_recording(); // an immediate on another thread
        q.push("used by either", 1);
        q.end_recording(2); // the immediate submits value 2
        assert!(q.collect(u64::MAX).is_empty(), "the frame may still use it");
        q.end_recording(3); // the frame submits value 3
        assert!(q.collect(2).is_empty());
        assert_eq!(q.collect(3), vec!["used by either"]);
    }
}
