//! GPU timestamps: one query pool per frame slot.
//!
//! Where the device's queue has timestamps (`timestampValidBits` > 0 and a
//! `timestampPeriod`) and [`crate::DeviceDesc`]'s `timestamps` is on, each
//! frame slot owns a pool of [`MAX_TIMESTAMPS_PER_FRAME`] timestamp queries,
//! created with the device and kept until shutdown. `begin_frame`, after the
//! slot's wait, records a reset of the pool and the `frame begin` timestamp at
//! the start of the primary; `Frame::submit` records `frame end` last. In
//! between, [`crate::CommandList::write_timestamp`] adds labelled ones, in
//! the primary or in the frame's secondaries (inside passes too, as Vulkan
//! allows). Every timestamp is written with `ALL_COMMANDS`: when the GPU has
//! finished everything recorded before it, so the gap between two is the time
//! of the work between them.
//!
//! [`crate::Device::frame_timestamps`] reads a submitted frame's timestamps
//! once its GPU work has finished, in milliseconds since `frame begin`, until
//! the slot is begun again. Where the device has no timestamps nothing is
//! recorded and the results are `None`, not an error.

use crate::error::{vk_err, Result, RhiError};
use ash::vk;
use std::sync::{Mutex, MutexGuard};

/// Timestamp queries of one frame, `frame begin` and `frame end` included.
pub const MAX_TIMESTAMPS_PER_FRAME: u32 = 256;

/// The label of the timestamp `begin_frame` writes first.
pub const FRAME_BEGIN: &str = "frame begin";
/// The label of the timestamp `Frame::submit` writes last.
pub const FRAME_END: &str = "frame end";

/// A submitted frame's timestamps, read after its GPU work finished.
#[derive(Clone, Debug, PartialEq)]
pub struct FrameTimestamps {
    /// The frame number ([`crate::Frame::index`]).
    pub frame: u64,
    /// Every timestamp written, in the order their queries were taken (the
    /// order of recording; secondaries recorded on several threads take them
    /// as they go): the label and GPU milliseconds since `frame begin`.
    pub stamps: Vec<(String, f64)>,
}

impl FrameTimestamps {
    /// Milliseconds since `frame begin` of the first timestamp labelled `label`.
    pub fn get(&self, label: &str) -> Option<f64> {
        self.stamps.iter().find(|(l, _)| l == label).map(|&(_, ms)| ms)
    }

    /// Milliseconds from timestamp `from` to timestamp `to` (first of each label).
    pub fn between(&self, from: &str, to: &str) -> Option<f64> {
        Some(self.get(to)? - self.get(from)?)
    }

    /// The frame's GPU time: from `frame begin` to `frame end`, i.e. all the
    /// work of its primary (and the secondaries it executed).
    pub fn frame_ms(&self) -> f64 {
        self.between(FRAME_BEGIN, FRAME_END).unwrap_or(0.0)
    }
}

/// What a slot's pool holds.
#[derive(Default)]
struct QueryState {
    /// The frame whose queries were taken since the last reset.
    frame: u64,
    /// Whether that frame was submitted (its results will arrive).
    submitted: bool,
    /// Labels by query index, for queries `0..labels.len()`.
    labels: Vec<String>,
}

/// The timestamp query pool of one frame slot. The command lists of the
/// slot's frame take queries from it (from any thread); the state lock is
/// held for a query's index and label, never across GPU waits.
pub(crate) struct QuerySlot {
    pub raw: vk::QueryPool,
    state: Mutex<QueryState>,
}

fn lock(m: &Mutex<QueryState>) -> MutexGuard<'_, QueryState> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// The device's timestamp pools, one per frame slot, with the conversion to
/// milliseconds.
pub(crate) struct Timestamps {
    pub slots: Vec<QuerySlot>,
    /// Nanoseconds per tick (`timestampPeriod`).
    period_ns: f64,
    /// The bits of a timestamp that count (`timestampValidBits`).
    mask: u64,
}

impl Timestamps {
    /// Empty: no pools yet (filled by [`Self::create`]).
    pub fn new(period_ns: f32, valid_bits: u32) -> Self {
        let mask = if valid_bits >= 64 { u64::MAX } else { (1u64 << valid_bits) - 1 };
        Self { slots: Vec::new(), period_ns: f64::from(period_ns), mask }
    }

    /// Creates the pool of one more frame slot.
    pub fn create(&mut self, device: &ash::Device) -> Result<()> {
        let info = vk::QueryPoolCreateInfo::default()
            .query_type(vk::QueryType::TIMESTAMP)
            .query_count(MAX_TIMESTAMPS_PER_FRAME);
        // SAFETY: valid device and create info; the queue family has timestamps (checked by the caller).
        let raw = unsafe { device.create_query_pool(&info, None) }.map_err(vk_err("vkCreateQueryPool"))?;
        self.slots.push(QuerySlot { raw, state: Mutex::new(QueryState::default()) });
        Ok(())
    }

    /// Destroys every pool (the device is idle).
    pub fn destroy(&mut self, device: &ash::Device) {
        for s in self.slots.drain(..) {
            // SAFETY: the device is idle; the pool is destroyed once.
            unsafe { device.destroy_query_pool(s.raw, None) };
        }
    }

    /// The ticks from `a` to `b` in milliseconds (wrapping within the valid bits).
    fn ms(&self, a: u64, b: u64) -> f64 {
        (b.wrapping_sub(a) & self.mask) as f64 * self.period_ns / 1e6
    }

    /// Reads `slot`'s results if it holds frame `frame`'s (submitted and
    /// finished: the caller has waited for its timeline value).
    pub fn read(&self, device: &ash::Device, slot: usize, frame: u64) -> Result<FrameTimestamps> {
        let s = &self.slots[slot];
        let state = lock(&s.state);
        if state.frame != frame || !state.submitted {
            return Err(RhiError::InvalidState(format!(
                "frame {frame}'s timestamps are gone: its slot was begun again for frame {} (results last until the slot's next frame)",
                state.frame
            )));
        }
        let n = state.labels.len();
        // (ticks, availability) per query: a query taken by a secondary that
        // was never executed stays unavailable and is left out (waiting for
        // it would never end).
        let mut results = vec![[0u64; 2]; n];
        if n > 0 {
            // SAFETY: queries 0..n were reset by frame `frame`'s primary,
            // whose submission has completed (the caller waited); the state
            // lock keeps the slot's next frame from taking them meanwhile;
            // each result is two u64s (TYPE_64 with availability), the stride
            // of the slice.
            let r = unsafe {
                device.get_query_pool_results(
                    s.raw,
                    0,
                    &mut results,
                    vk::QueryResultFlags::TYPE_64 | vk::QueryResultFlags::WITH_AVAILABILITY,
                )
            };
            match r {
                Ok(()) | Err(vk::Result::NOT_READY) => {}
                Err(e) => return Err(vk_err("vkGetQueryPoolResults")(e)),
            }
        }
        let base = results.first().filter(|r| r[1] != 0).map(|r| r[0]);
        let stamps = match base {
            Some(base) => state
                .labels
                .iter()
                .zip(&results)
                .filter(|(_, r)| r[1] != 0)
                .map(|(l, r)| (l.clone(), self.ms(base, r[0])))
                .collect(),
            None => Vec::new(),
        };
        Ok(FrameTimestamps { frame, stamps })
    }
}

impl QuerySlot {
    /// The slot is begun for `frame`: its queries are free again (the reset
    /// is recorded at the start of the frame's primary).
    pub fn begin(&self, frame: u64) {
        let mut state = lock(&self.state);
        state.frame = frame;
        state.submitted = false;
        state.labels.clear();
    }

    /// Takes the next query for `label`; `reserve` queries stay free (the
    /// frame's end). `None` when none is left.
    pub fn take(&self, label: &str, reserve: u32) -> Option<u32> {
        let mut state = lock(&self.state);
        let index = state.labels.len() as u32;
        if index + reserve >= MAX_TIMESTAMPS_PER_FRAME {
            return None;
        }
        state.labels.push(label.to_owned());
        Some(index)
    }

    /// Queries the frame may still take before its end.
    pub fn left(&self) -> u32 {
        (MAX_TIMESTAMPS_PER_FRAME - 1).saturating_sub(lock(&self.state).labels.len() as u32)
    }

    /// The frame was submitted: its results arrive with its timeline value.
    pub fn submitted(&self) {
        lock(&self.state).submitted = true;
    }
}
