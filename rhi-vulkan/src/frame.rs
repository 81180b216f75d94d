//! Frames in flight.
//!
//! ```text
//!  CPU:  begin(0) record submit | begin(1) record submit | begin(2)=wait(0) ...
//!  GPU:                 [ frame 0 ........ ][ frame 1 ........ ]
//! ```
//! Each of the N slots (default 2) owns a primary command pool, one secondary
//! command pool per concurrent recording thread and a descriptor arena.
//! `begin_frame` waits until the slot's previous submission has finished on
//! the GPU (timeline value), resets its pools and runs the deletion queue.
//! A frame is submitted with [`Frame::submit`]; dropping it unsubmitted
//! discards what was recorded (benchmarks record without executing).

use crate::command::CommandList;
use crate::descriptor::DescriptorArena;
use crate::device::Device;
use crate::error::{vk_err, Result, RhiError};
use crate::types::{BufferState, BufferUsage, Format};
use crate::{BufferDesc, BufferHandle};
use ash::vk;
use std::sync::atomic::Ordering;
use std::sync::{Mutex, MutexGuard};

/// A secondary command pool, used by one thread at a time.
struct RecorderPool {
    pool: vk::CommandPool,
    buffers: Vec<vk::CommandBuffer>,
    next: usize,
}

pub(crate) struct FrameSlot {
    last_value: u64,
    primary_pool: vk::CommandPool,
    primary: vk::CommandBuffer,
    recorders: Mutex<Vec<RecorderPool>>,
    descriptors: Mutex<DescriptorArena>,
    queue_family: u32,
}

fn create_pool(device: &ash::Device, family: u32) -> Result<vk::CommandPool> {
    let info = vk::CommandPoolCreateInfo::default()
        .queue_family_index(family)
        .flags(vk::CommandPoolCreateFlags::TRANSIENT);
    // SAFETY: valid device and create info.
    unsafe { device.create_command_pool(&info, None) }.map_err(vk_err("vkCreateCommandPool"))
}

fn allocate(device: &ash::Device, pool: vk::CommandPool, level: vk::CommandBufferLevel) -> Result<vk::CommandBuffer> {
    let info = vk::CommandBufferAllocateInfo::default()
        .command_pool(pool)
        .level(level)
        .command_buffer_count(1);
    // SAFETY: the pool is used by one thread at a time (slot or recorder lock).
    Ok(unsafe { device.allocate_command_buffers(&info) }.map_err(vk_err("vkAllocateCommandBuffers"))?[0])
}

impl FrameSlot {
    pub fn new(device: &ash::Device, family: u32) -> Result<Self> {
        let primary_pool = create_pool(device, family)?;
        let primary = allocate(device, primary_pool, vk::CommandBufferLevel::PRIMARY)?;
        Ok(Self {
            last_value: 0,
            primary_pool,
            primary,
            recorders: Mutex::new(Vec::new()),
            descriptors: Mutex::new(DescriptorArena::default()),
            queue_family: family,
        })
    }

    fn reset(&mut self, device: &ash::Device) -> Result<()> {
        // SAFETY: the slot's last submission has completed (waited for in `begin_frame`).
        unsafe { device.reset_command_pool(self.primary_pool, vk::CommandPoolResetFlags::empty()) }
            .map_err(vk_err("vkResetCommandPool"))?;
        for r in self.recorders.get_mut().unwrap_or_else(|p| p.into_inner()).iter_mut() {
            // SAFETY: as above; no recording is in progress (we hold `&mut self`).
            unsafe { device.reset_command_pool(r.pool, vk::CommandPoolResetFlags::empty()) }
                .map_err(vk_err("vkResetCommandPool"))?;
            r.next = 0;
        }
        self.descriptors.get_mut().unwrap_or_else(|p| p.into_inner()).reset(device)
    }

    pub fn destroy(self, device: &ash::Device) {
        // SAFETY: shutdown after idle; pools destroyed once (their buffers with them).
        unsafe { device.destroy_command_pool(self.primary_pool, None) };
        for r in self.recorders.into_inner().unwrap_or_else(|p| p.into_inner()) {
            // SAFETY: as above.
            unsafe { device.destroy_command_pool(r.pool, None) };
        }
        self.descriptors.into_inner().unwrap_or_else(|p| p.into_inner()).destroy(device);
    }
}

/// The formats a render pass draws into; secondaries inherit it.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct RenderingLayout {
    pub color_formats: Vec<Format>,
    pub depth_format: Option<Format>,
}

/// A finished secondary command buffer, ready to be executed by the primary
/// of the frame that recorded it.
#[derive(Debug)]
pub struct SecondaryCommandBuffer {
    pub(crate) raw: vk::CommandBuffer,
    pub(crate) frame: u64,
    /// Draw calls recorded.
    pub draws: u32,
}

/// The value a submitted frame signals; wait on it to read its results.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FrameSubmission {
    pub value: u64,
    pub frame: u64,
}

/// A frame being recorded. Holds its slot until submitted or dropped.
pub struct Frame<'d> {
    device: &'d Device,
    slot: MutexGuard<'d, FrameSlot>,
    index: u64,
    cmd: CommandList<'d>,
    finished: bool,
}

impl Device {
    /// Starts a frame: waits for the slot's previous GPU work, resets its
    /// pools, destroys retired resources and begins the primary command buffer.
    /// One frame is open at a time.
    pub fn begin_frame(&self) -> Result<Frame<'_>> {
        if self.frame_open.swap(true, Ordering::AcqRel) {
            return Err(RhiError::InvalidDesc("a frame is already open".into()));
        }
        let started = (|| {
            let index = self.frame_counter.fetch_add(1, Ordering::Relaxed);
            let mut slot = self.frames[(index % self.frames.len() as u64) as usize]
                .lock()
                .unwrap_or_else(|p| p.into_inner());
            self.wait_for(slot.last_value)?;
            self.collect_garbage()?;
            slot.reset(&self.raw)?;
            let begin = vk::CommandBufferBeginInfo::default().flags(vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT);
            // SAFETY: the primary was reset with its pool above.
            unsafe { self.raw.begin_command_buffer(slot.primary, &begin) }.map_err(vk_err("vkBeginCommandBuffer"))?;
            let cmd = CommandList::new(self, slot.primary, false, index);
            Ok(Frame { device: self, slot, index, cmd, finished: false })
        })();
        if started.is_err() {
            self.frame_open.store(false, Ordering::Release);
        }
        started
    }
}

impl<'d> Frame<'d> {
    /// The frame number, counting from 0.
    pub fn index(&self) -> u64 {
        self.index
    }

    pub fn device(&self) -> &'d Device {
        self.device
    }

    /// The primary command buffer.
    pub fn cmd(&mut self) -> &mut CommandList<'d> {
        &mut self.cmd
    }

    /// Records a secondary command buffer that continues a render pass of
    /// `layout`. Callable from several threads at once (`Frame` is `Sync`):
    /// each call takes a command pool no other thread is using.
    pub fn record_secondary<R>(
        &self,
        layout: &RenderingLayout,
        f: impl FnOnce(&mut CommandList<'d>) -> Result<R>,
    ) -> Result<(SecondaryCommandBuffer, R)> {
        let device = self.device;
        let taken = self.slot.recorders.lock().unwrap_or_else(|p| p.into_inner()).pop();
        let mut pool = match taken {
            Some(p) => p,
            None => RecorderPool { pool: create_pool(&device.raw, self.slot.queue_family)?, buffers: Vec::new(), next: 0 },
        };
        let result = (|| {
            if pool.next == pool.buffers.len() {
                pool.buffers.push(allocate(&device.raw, pool.pool, vk::CommandBufferLevel::SECONDARY)?);
            }
            let raw = pool.buffers[pool.next];
            pool.next += 1;
            let color: Vec<_> = layout.color_formats.iter().map(|f| crate::conv::format(*f)).collect();
            let mut rendering = vk::CommandBufferInheritanceRenderingInfo::default()
                .color_attachment_formats(&color)
                .depth_attachment_format(layout.depth_format.map(crate::conv::format).unwrap_or(vk::Format::UNDEFINED))
                .rasterization_samples(vk::SampleCountFlags::TYPE_1);
            let inheritance = vk::CommandBufferInheritanceInfo::default().push_next(&mut rendering);
            let begin = vk::CommandBufferBeginInfo::default()
                .flags(vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT | vk::CommandBufferUsageFlags::RENDER_PASS_CONTINUE)
                .inheritance_info(&inheritance);
            // SAFETY: `raw` is a fresh or reset secondary of a pool this thread owns now.
            unsafe { device.raw.begin_command_buffer(raw, &begin) }.map_err(vk_err("vkBeginCommandBuffer"))?;
            let mut list = CommandList::new(device, raw, true, self.index);
            let r = f(&mut list);
            let draws = list.draw_count();
            // SAFETY: `raw` is recording.
            unsafe { device.raw.end_command_buffer(raw) }.map_err(vk_err("vkEndCommandBuffer"))?;
            Ok((SecondaryCommandBuffer { raw, frame: self.index, draws }, r?))
        })();
        self.slot.recorders.lock().unwrap_or_else(|p| p.into_inner()).push(pool);
        result
    }

    pub(crate) fn allocate_descriptor_set(&self, layout: vk::DescriptorSetLayout) -> Result<vk::DescriptorSet> {
        self.slot.descriptors.lock().unwrap_or_else(|p| p.into_inner()).allocate(&self.device.raw, layout)
    }

    /// Copies `data` into `dst` at `offset` through a staging buffer, recorded
    /// into this frame's primary (outside a render pass) and followed by a
    /// barrier to shader reads. Works for GPU-only buffers on any GPU.
    pub fn upload_buffer(&mut self, dst: BufferHandle, offset: u64, data: &[u8]) -> Result<()> {
        if data.is_empty() {
            return Ok(());
        }
        let staging = self.device.create_buffer_init(
            &BufferDesc::host_visible("frame staging", data.len() as u64, BufferUsage::TRANSFER_SRC),
            data,
        )?;
        // Earlier frames (same queue, earlier in submission order) may still
        // read `dst`: order their reads before this write.
        let recorded = self
            .cmd
            .buffer_barrier(dst, BufferState::ShaderRead, BufferState::TransferDst)
            .and_then(|()| self.cmd.copy_buffer(staging, 0, dst, offset, data.len() as u64))
            .and_then(|()| self.cmd.buffer_barrier(dst, BufferState::TransferDst, BufferState::ShaderRead));
        // Destroyed after this frame's submission completes.
        self.device.destroy_buffer(staging);
        recorded
    }

    /// Ends the primary, submits it and returns the value it will signal.
    pub fn submit(mut self) -> Result<FrameSubmission> {
        self.finished = true;
        let device = self.device;
        let result = (|| {
            // SAFETY: the primary is recording (begun in `begin_frame`).
            unsafe { device.raw.end_command_buffer(self.slot.primary) }.map_err(vk_err("vkEndCommandBuffer"))?;
            let value = device.submit(self.slot.primary)?;
            self.slot.last_value = value;
            Ok(FrameSubmission { value, frame: self.index })
        })();
        let stamp = result.as_ref().map(|s| s.value).unwrap_or_else(|_| device.timeline.last_submitted());
        device.stamp_retired(stamp);
        device.frame_open.store(false, Ordering::Release);
        result
    }
}

impl Drop for Frame<'_> {
    fn drop(&mut self) {
        if !self.finished {
            // Discarded: nothing of this frame reaches the GPU; its pools are
            // reset when the slot is next used.
            self.device.stamp_retired(self.device.timeline.last_submitted());
            self.device.frame_open.store(false, Ordering::Release);
        }
    }
}
