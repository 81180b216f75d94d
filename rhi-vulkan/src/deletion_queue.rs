//! Deferred destruction: a resource the caller destroys may still be read by
//! submitted GPU work, so it is parked here with the timeline value after
//! which nothing can use it, and destroyed once the GPU has passed that value
//! (kajiya's `defer_release`, wgpu-core's `device/life.rs`).
//!
//! Stamping: a resource destroyed while a frame is being recorded may be used
//! by that frame, so it stays unstamped until the frame is submitted and gets
//! the frame's value. Outside a frame only already-submitted work can use it,
//! so it gets the last submitted value at once.

use std::collections::VecDeque;

pub(crate) struct DeletionQueue<T> {
    unstamped: Vec<T>,
    stamped: VecDeque<(u64, T)>,
}

impl<T> Default for DeletionQueue<T> {
    fn default() -> Self {
        Self { unstamped: Vec::new(), stamped: VecDeque::new() }
    }
}

impl<T> DeletionQueue<T> {
    /// Parks `item`: stamped with `last_submitted` unless a frame is open.
    pub fn push(&mut self, item: T, frame_open: bool, last_submitted: u64) {
        if frame_open {
            self.unstamped.push(item);
        } else {
            self.stamped.push_back((last_submitted, item));
        }
    }

    /// Gives every unstamped item the value of the submission that closes the frame.
    pub fn stamp(&mut self, value: u64) {
        for item in self.unstamped.drain(..) {
            self.stamped.push_back((value, item));
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
        q.push("idle", false, 3);
        q.push("in-frame", true, 3);
        assert!(q.collect(2).is_empty());
        assert_eq!(q.collect(3), vec!["idle"]);
        q.stamp(4);
        assert!(q.collect(3).is_empty());
        assert_eq!(q.collect(4), vec!["in-frame"]);
        assert_eq!(q.len(), 0);
    }
}
