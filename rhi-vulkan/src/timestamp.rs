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
//!
//! Results reach the host through a buffer, not `vkGetQueryPoolResults`:
//! `Frame::submit` records, after `frame end`, a copy of the frame's query
//! results into its slot's host-visible results buffer
//! (`vkCmdCopyQueryPoolResults`) and a barrier to host reads; reading a
//! finished frame's timestamps is then a read of mapped memory. Why: Mesa
//! 22.3's lavapipe (Debian 12's) runs `vkDeviceWaitIdle` inside every
//! `vkGetQueryPoolResults`, so reading frame N−1's timestamps that way
//! would wait for frame N too, and the render thread would take turns with
//! the GPU whatever `r.FramesInFlight` says. Engines read queries through
//! buffers for the same reason on every driver: a host query read may
//! synchronise more than asked.

use crate::error::{vk_err, Result, RhiError};
use ash::vk;
use gpu_allocator::vulkan::{Allocation, AllocationCreateDesc, AllocationScheme, Allocator};
use gpu_allocator::MemoryLocation;
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
    /// Where the frame's results are copied at its end: (ticks,
    /// availability) as two u64s per query, host-visible and mapped.
    pub results: vk::Buffer,
    allocation: Option<Allocation>,
    state: Mutex<QueryState>,
}

/// Bytes of one query's result in the results buffer (TYPE_64 with availability).
pub(crate) const RESULT_STRIDE: u64 = 16;

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

    /// Creates the pool and results buffer of one more frame slot.
    pub fn create(&mut self, device: &ash::Device, allocator: &Mutex<Allocator>) -> Result<()> {
        let info = vk::QueryPoolCreateInfo::default().query_type(vk::QueryType::TIMESTAMP).query_count(MAX_TIMESTAMPS_PER_FRAME);
        // SAFETY: valid device and create info; the queue family has timestamps (checked by the caller).
        let raw = unsafe { device.create_query_pool(&info, None) }.map_err(vk_err("vkCreateQueryPool"))?;
        let mut slot = QuerySlot { raw, results: vk::Buffer::null(), allocation: None, state: Mutex::new(QueryState::default()) };
        match slot.create_results(device, allocator) {
            Ok(()) => {
                self.slots.push(slot);
                Ok(())
            }
            Err(e) => {
                slot.destroy(device, allocator);
                Err(e)
            }
        }
    }

    /// Destroys every pool and results buffer (the device is idle).
    pub fn destroy(&mut self, device: &ash::Device, allocator: &Mutex<Allocator>) {
        for s in self.slots.drain(..) {
            s.destroy(device, allocator);
        }
    }

    /// The ticks from `a` to `b` in milliseconds (wrapping within the valid bits).
    fn ms(&self, a: u64, b: u64) -> f64 {
        (b.wrapping_sub(a) & self.mask) as f64 * self.period_ns / 1e6
    }

    /// Reads `slot`'s results if it holds frame `frame`'s (submitted and
    /// finished: the caller has waited for its timeline value).
    pub fn read(&self, slot: usize, frame: u64) -> Result<FrameTimestamps> {
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
        // was never executed stays unavailable and is left out.
        let mut results = vec![[0u64; 2]; n];
        if n > 0 {
            let mapped = s
                .allocation
                .as_ref()
                .and_then(Allocation::mapped_slice)
                .ok_or_else(|| RhiError::Unsupported("timestamp results are not host-mapped".into()))?;
            let bytes = n * RESULT_STRIDE as usize;
            let word = |b: &[u8]| u64::from_ne_bytes(b.try_into().expect("8 bytes"));
            for (r, bytes) in results.iter_mut().zip(mapped[..bytes].chunks_exact(RESULT_STRIDE as usize)) {
                *r = [word(&bytes[..8]), word(&bytes[8..])];
            }
        }
        let base = results.first().filter(|r| r[1] != 0).map(|r| r[0]);
        let stamps = match base {
            Some(base) => {
                state.labels.iter().zip(&results).filter(|(_, r)| r[1] != 0).map(|(l, r)| (l.clone(), self.ms(base, r[0]))).collect()
            }
            None => Vec::new(),
        };
        Ok(FrameTimestamps { frame, stamps })
    }
}

impl QuerySlot {
    fn create_results(&mut self, device: &ash::Device, allocator: &Mutex<Allocator>) -> Result<()> {
        let info = vk::BufferCreateInfo::default()
            .size(u64::from(MAX_TIMESTAMPS_PER_FRAME) * RESULT_STRIDE)
            .usage(vk::BufferUsageFlags::TRANSFER_DST)
            .sharing_mode(vk::SharingMode::EXCLUSIVE);
        // SAFETY: valid device and create info.
        self.results = unsafe { device.create_buffer(&info, None) }.map_err(vk_err("vkCreateBuffer"))?;
        // SAFETY: `results` is a live buffer of `device`.
        let requirements = unsafe { device.get_buffer_memory_requirements(self.results) };
        let allocation = allocator.lock().unwrap_or_else(|p| p.into_inner()).allocate(&AllocationCreateDesc {
            name: "timestamp results",
            requirements,
            location: MemoryLocation::GpuToCpu,
            linear: true,
            allocation_scheme: AllocationScheme::GpuAllocatorManaged,
        })?;
        // SAFETY: the allocation satisfies `requirements`; the buffer is bound once.
        let bound = unsafe { device.bind_buffer_memory(self.results, allocation.memory(), allocation.offset()) };
        self.allocation = Some(allocation);
        bound.map_err(vk_err("vkBindBufferMemory"))
    }

    fn destroy(mut self, device: &ash::Device, allocator: &Mutex<Allocator>) {
        // SAFETY: the device is idle (or the objects were never used); each
        // is destroyed once; null handles are ignored by Vulkan.
        unsafe {
            device.destroy_query_pool(self.raw, None);
            device.destroy_buffer(self.results, None);
        }
        if let Some(a) = self.allocation.take() {
            // A failed free leaks host memory only; nothing to report at teardown.
            let _ = allocator.lock().unwrap_or_else(|p| p.into_inner()).free(a);
        }
    }

    /// Queries taken so far this frame (the ones to copy at its end).
    pub fn taken(&self) -> u32 {
        lock(&self.state).labels.len() as u32
    }

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
