//! Frames in flight.
//!
//! ```text
//!  CPU:  begin(0) record submit | begin(1) record submit | begin(2)=wait(0) ...
//!  GPU:                 [ frame 0 ........ ][ frame 1 ........ ]
//! ```
//! Each of the N slots (default 2) owns a primary command pool, one secondary
//! command pool per concurrent recording thread, a descriptor arena and (where
//! the device has timestamps) a timestamp query pool (`timestamp.rs`).
//! `begin_frame` waits until the slot's previous submission has finished on
//! the GPU (timeline value), resets its pools and runs the deletion queue;
//! its primary starts with the query pool's reset and `frame begin`.
//! A frame is submitted with [`Frame::submit`]; dropping it unsubmitted
//! discards what was recorded (benchmarks record without executing).

use crate::buffer_uses::BufferUses;
use crate::command::CommandList;
use crate::descriptor::DescriptorArena;
use crate::device::Device;
use crate::error::{vk_err, PassState, Result, RhiError};
use crate::timestamp::{FRAME_BEGIN, FRAME_END, MAX_TIMESTAMPS_PER_FRAME};
use crate::types::{BufferState, BufferUsage, Format};
use crate::{BufferDesc, BufferHandle};
use ash::vk;
use std::sync::atomic::Ordering;
use std::sync::{Mutex, MutexGuard};

/// Gives a taken recorder pool back to its slot when dropped.
struct ReturnPool<'a> {
    pool: Option<RecorderPool>,
    to: &'a Mutex<Vec<RecorderPool>>,
}

impl Drop for ReturnPool<'_> {
    fn drop(&mut self) {
        if let Some(p) = self.pool.take() {
            self.to.lock().unwrap_or_else(|p| p.into_inner()).push(p);
        }
    }
}

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
    let info = vk::CommandPoolCreateInfo::default().queue_family_index(family).flags(vk::CommandPoolCreateFlags::TRANSIENT);
    // SAFETY: valid device and create info.
    unsafe { device.create_command_pool(&info, None) }.map_err(vk_err("vkCreateCommandPool"))
}

fn allocate(device: &ash::Device, pool: vk::CommandPool, level: vk::CommandBufferLevel) -> Result<vk::CommandBuffer> {
    let info = vk::CommandBufferAllocateInfo::default().command_pool(pool).level(level).command_buffer_count(1);
    // SAFETY: the pool is used by one thread at a time (slot or recorder lock).
    Ok(unsafe { device.allocate_command_buffers(&info) }.map_err(vk_err("vkAllocateCommandBuffers"))?[0])
}

impl FrameSlot {
    pub fn new(device: &ash::Device, family: u32) -> Result<Self> {
        let primary_pool = create_pool(device, family)?;
        let primary = match allocate(device, primary_pool, vk::CommandBufferLevel::PRIMARY) {
            Ok(p) => p,
            Err(e) => {
                // SAFETY: the pool was just created and holds nothing.
                unsafe { device.destroy_command_pool(primary_pool, None) };
                return Err(e);
            }
        };
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
            unsafe { device.reset_command_pool(r.pool, vk::CommandPoolResetFlags::empty()) }.map_err(vk_err("vkResetCommandPool"))?;
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

/// The formats a render pass draws into, and its samples per pixel;
/// secondaries inherit it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct RenderingLayout {
    /// The color attachments' formats, in attachment order.
    pub color_formats: Vec<Format>,
    /// The depth attachment's format, if the pass has one.
    pub depth_format: Option<Format>,
    /// Samples per pixel of every attachment: 1, or 2, 4 or 8 (MSAA).
    pub samples: u32,
}

impl Default for RenderingLayout {
    /// No attachments, one sample.
    fn default() -> Self {
        Self { color_formats: Vec::new(), depth_format: None, samples: 1 }
    }
}

/// Color attachments a pass (and a graphics pipeline) may have.
pub const MAX_COLOR_ATTACHMENTS: usize = 8;

impl RenderingLayout {
    /// An exact, compact encoding (4 bits a format, the count, then depth)
    /// that command lists compare instead of the vectors. Layouts with more
    /// than [`MAX_COLOR_ATTACHMENTS`] colors are rejected before they get here.
    pub(crate) fn key(&self) -> u64 {
        rendering_key(self.color_formats.iter().copied(), self.depth_format, self.samples)
    }

    /// The layout of `color_formats` and `depth_format` at one sample.
    pub fn new(color_formats: Vec<Format>, depth_format: Option<Format>) -> Self {
        Self { color_formats, depth_format, samples: 1 }
    }

    /// The same layout at `samples` samples per pixel.
    pub fn with_samples(self, samples: u32) -> Self {
        Self { samples, ..self }
    }

    /// Errors unless it is a layout a pass can have: at most
    /// [`MAX_COLOR_ATTACHMENTS`] color formats, none of them depth, and a
    /// depth format as depth.
    fn check(&self) -> Result<()> {
        if self.color_formats.len() > MAX_COLOR_ATTACHMENTS {
            let (value, max) = (self.color_formats.len() as u64, MAX_COLOR_ATTACHMENTS as u64);
            return Err(RhiError::OutOfLimits { what: "color formats", resource: "the rendering layout".into(), value, min: 0, max });
        }
        if let Some((i, &format)) = self.color_formats.iter().enumerate().find(|(_, f)| f.is_depth()) {
            let resource = format!("color format {i} of the rendering layout");
            return Err(RhiError::WrongFormat { resource, format, expected: "a color format" });
        }
        if let Some(format) = self.depth_format.filter(|f| !f.is_depth()) {
            let resource = "the rendering layout's depth format".into();
            return Err(RhiError::WrongFormat { resource, format, expected: "a depth format" });
        }
        crate::texture::check_samples(self.samples, "the rendering layout")
    }
}

pub(crate) fn rendering_key(colors: impl ExactSizeIterator<Item = Format>, depth: Option<Format>, samples: u32) -> u64 {
    let code = |f: Option<Format>| -> u64 {
        match f {
            None => 0,
            Some(Format::Rgba8Unorm) => 1,
            Some(Format::Rgba8Srgb) => 2,
            Some(Format::Bgra8Unorm) => 3,
            Some(Format::Bgra8Srgb) => 4,
            Some(Format::Rgba16Float) => 5,
            Some(Format::Depth32Float) => 6,
            Some(Format::R8Unorm) => 7,
            Some(Format::Rg8Unorm) => 8,
            Some(Format::Rg16Float) => 9,
            // Never an attachment (textures and pipelines refuse them as
            // targets), so they need no codes of their own.
            Some(
                Format::Bc1RgbaUnorm
                | Format::Bc1RgbaSrgb
                | Format::Bc3Unorm
                | Format::Bc3Srgb
                | Format::Bc4Unorm
                | Format::Bc5Unorm
                | Format::Bc7Unorm
                | Format::Bc7Srgb,
            ) => 15,
        }
    };
    let n = colors.len() as u64;
    // Samples (powers of two up to 8) as their log2 past the colours' 32 bits.
    let mut key = (n.min(15) << 4) | code(depth) | (u64::from(samples.max(1).ilog2()) << 40);
    for (i, c) in colors.take(MAX_COLOR_ATTACHMENTS).enumerate() {
        key |= code(Some(c)) << (8 + 4 * i);
    }
    key
}

/// A finished secondary command buffer, ready to be executed by the primary
/// of the frame that recorded it.
#[derive(Debug)]
pub struct SecondaryCommandBuffer {
    pub(crate) raw: vk::CommandBuffer,
    pub(crate) frame: u64,
    pub(crate) device: u64,
    /// [`RenderingLayout::key`] of the pass it continues.
    pub(crate) layout: u64,
    /// Draw calls recorded.
    pub draws: u32,
}

/// One region of a buffer copy: (source offset, destination offset, size).
pub type CopyRegion = (u64, u64, u64);

/// Copy regions per buffer.
type RegionsByBuffer = Vec<(BufferHandle, Vec<CopyRegion>)>;

/// `regions` gathered per buffer, buffers in first-seen order.
fn group_by_buffer(regions: impl Iterator<Item = (BufferHandle, CopyRegion)>) -> RegionsByBuffer {
    let mut by: RegionsByBuffer = Vec::new();
    let mut index: std::collections::HashMap<BufferHandle, usize> = std::collections::HashMap::new();
    for (buffer, region) in regions {
        let at = *index.entry(buffer).or_insert_with(|| {
            by.push((buffer, Vec::new()));
            by.len() - 1
        });
        by[at].1.push(region);
    }
    by
}

/// The value a submitted frame signals; wait on it to read its results.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FrameSubmission {
    /// The queue's timeline-semaphore value the frame's submission signals
    /// ([`crate::Device::wait_for`] waits on it).
    pub value: u64,
    /// The frame's number ([`Frame::index`]).
    pub frame: u64,
}

/// A frame being recorded. Holds its slot until submitted or dropped.
pub struct Frame<'d> {
    device: &'d Device,
    slot: MutexGuard<'d, FrameSlot>,
    index: u64,
    cmd: CommandList<'d>,
    finished: bool,
    /// What its bind groups and secondaries use, beside the primary's own
    /// (`buffer_uses`): stamped with the frame's submission.
    uses: Mutex<BufferUses>,
}

impl Device {
    /// Starts a frame: waits for the slot's previous GPU work, resets its
    /// pools, destroys retired resources and begins the primary command buffer.
    /// One frame is open at a time.
    /// On a lost device it is [`RhiError::DeviceLost`] and nothing is begun.
    pub fn begin_frame(&self) -> Result<Frame<'_>> {
        self.timeline.check_lost()?;
        if self.frame_open.swap(true, Ordering::AcqRel) {
            return Err(RhiError::FrameOpen { command: "begin_frame" });
        }
        let started = (|| {
            let index = self.frame_counter.fetch_add(1, Ordering::Relaxed);
            let slot_index = (index % self.frames.len() as u64) as usize;
            let mut slot = self.frames[slot_index].lock().unwrap_or_else(|p| p.into_inner());
            self.wait_for(slot.last_value)?;
            self.collect_garbage()?;
            slot.reset(&self.raw)?;
            let begin = vk::CommandBufferBeginInfo::default().flags(vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT);
            // SAFETY: the primary was reset with its pool above.
            unsafe { self.raw.begin_command_buffer(slot.primary, &begin) }.map_err(vk_err("vkBeginCommandBuffer"))?;
            let queries = self.timestamps.slots.get(slot_index);
            let mut cmd = CommandList::new(self, slot.primary, None, index).with_queries(queries);
            self.begin_recording();
            if let Some(q) = queries {
                // The slot's last frame has finished (waited for above):
                // its results give way to this frame's.
                q.begin(index);
                // SAFETY: the primary is recording, outside any pass; the
                // pool's previous queries were last used by the slot's
                // previous submission, which has completed.
                unsafe { self.raw.cmd_reset_query_pool(slot.primary, q.raw, 0, MAX_TIMESTAMPS_PER_FRAME) };
                if let Err(e) = cmd.stamp(q, FRAME_BEGIN, 1) {
                    self.end_recording();
                    return Err(e);
                }
            }
            Ok(Frame { device: self, slot, index, cmd, finished: false, uses: Mutex::default() })
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

    /// The device the frame records for.
    pub fn device(&self) -> &'d Device {
        self.device
    }

    /// The primary command buffer.
    pub fn cmd(&mut self) -> &mut CommandList<'d> {
        &mut self.cmd
    }

    /// Timestamps the frame may still take (in its primary or its
    /// secondaries; see [`CommandList::write_timestamp`]); `None` on a
    /// device without timestamps.
    pub fn timestamps_left(&self) -> Option<u32> {
        self.cmd.timestamps_left()
    }

    /// Records a secondary command buffer that continues a render pass of
    /// `layout`. Callable from several threads at once (`Frame` is `Sync`):
    /// each call takes a command pool no other thread is using.
    pub fn record_secondary<R>(
        &self,
        layout: &RenderingLayout,
        f: impl FnOnce(&mut CommandList<'d>) -> Result<R>,
    ) -> Result<(SecondaryCommandBuffer, R)> {
        layout.check()?;
        let device = self.device;
        let taken = self.slot.recorders.lock().unwrap_or_else(|p| p.into_inner()).pop();
        let pool = match taken {
            Some(p) => p,
            None => {
                let pool = create_pool(&device.raw, self.slot.queue_family)?;
                device.pool_counts.command.fetch_add(1, Ordering::Relaxed);
                RecorderPool { pool, buffers: Vec::new(), next: 0 }
            }
        };
        // Returned to the slot however `f` ends, panics included; the slot's
        // reset makes any half-recorded buffer reusable.
        let mut guard = ReturnPool { pool: Some(pool), to: &self.slot.recorders };
        let Some(pool) = guard.pool.as_mut() else { unreachable!("the pool was put in the guard above") };
        if pool.next == pool.buffers.len() {
            pool.buffers.push(allocate(&device.raw, pool.pool, vk::CommandBufferLevel::SECONDARY)?);
            device.pool_counts.command_buffers.fetch_add(1, Ordering::Relaxed);
        }
        let raw = pool.buffers[pool.next];
        pool.next += 1;
        let color: Vec<_> = layout.color_formats.iter().map(|f| crate::conv::format(*f)).collect();
        let mut rendering = vk::CommandBufferInheritanceRenderingInfo::default()
            .color_attachment_formats(&color)
            .depth_attachment_format(layout.depth_format.map(crate::conv::format).unwrap_or(vk::Format::UNDEFINED))
            .rasterization_samples(crate::conv::samples(layout.samples));
        let inheritance = vk::CommandBufferInheritanceInfo::default().push_next(&mut rendering);
        let begin = vk::CommandBufferBeginInfo::default()
            .flags(vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT | vk::CommandBufferUsageFlags::RENDER_PASS_CONTINUE)
            .inheritance_info(&inheritance);
        // SAFETY: `raw` is a fresh or reset secondary of a pool this thread owns now.
        unsafe { device.raw.begin_command_buffer(raw, &begin) }.map_err(vk_err("vkBeginCommandBuffer"))?;
        let key = layout.key();
        let queries = device.timestamps.slots.get((self.index % device.frames.len() as u64) as usize);
        let mut list = CommandList::new(device, raw, Some(key), self.index).with_queries(queries);
        let r = f(&mut list);
        let draws = list.draw_count();
        self.uses.lock().unwrap_or_else(|p| p.into_inner()).append(&mut list.uses);
        // SAFETY: `raw` is recording.
        unsafe { device.raw.end_command_buffer(raw) }.map_err(vk_err("vkEndCommandBuffer"))?;
        Ok((SecondaryCommandBuffer { raw, frame: self.index, device: device.id(), layout: key, draws }, r?))
    }

    /// Charges a bind group's buffers (each with whether a shader may
    /// write it) to this frame's submission.
    pub(crate) fn note_buffer_uses(&self, buffers: &[(BufferHandle, bool)]) {
        if buffers.is_empty() {
            return;
        }
        let mut uses = self.uses.lock().unwrap_or_else(|p| p.into_inner());
        for &(buffer, writes) in buffers {
            uses.note(buffer, writes);
        }
    }

    pub(crate) fn allocate_descriptor_set(&self, layout: vk::DescriptorSetLayout) -> Result<vk::DescriptorSet> {
        let mut arena = self.slot.descriptors.lock().unwrap_or_else(|p| p.into_inner());
        let before = arena.pools();
        let set = arena.allocate(&self.device.raw, layout);
        self.device.pool_counts.descriptor.fetch_add(arena.pools() - before, Ordering::Relaxed);
        set
    }

    /// Copies `data` into `dst` at `offset` through a staging buffer, recorded
    /// into this frame's primary (outside a render pass) and followed by a
    /// barrier to shader reads. Works for GPU-only buffers on any GPU.
    pub fn upload_buffer(&mut self, dst: BufferHandle, offset: u64, data: &[u8]) -> Result<()> {
        if data.is_empty() {
            return Ok(());
        }
        let staging = self
            .device
            .create_buffer_init(&BufferDesc::host_visible("frame staging", data.len() as u64, BufferUsage::TRANSFER_SRC), data)?;
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

    /// [`Self::upload_buffer`] for many writes at once, through one
    /// staging buffer: each destination gets its barriers once and one copy
    /// of all its regions (writes to the same bytes land in the order
    /// given). A write of no bytes is nothing. What the renderer's proxies
    /// queue for a frame (a thousand skinned meshes' poses) costs one
    /// staging allocation rather than one each.
    ///
    /// `moves` go first: per buffer, `(from, to, size)` regions copied
    /// within it on the GPU (from the bytes as the earlier submissions
    /// left them; the regions must not overlap), then the writes land. A
    /// skinned mesh's previous pose is its current one moved this way, so
    /// only the new pose crosses from the host.
    pub fn upload_buffers(&mut self, moves: &[(BufferHandle, CopyRegion)], writes: &[(BufferHandle, u64, &[u8])]) -> Result<()> {
        let moved = group_by_buffer(moves.iter().filter(|m| m.1 .2 > 0).map(|&(b, r)| (b, r)));
        let total: usize = writes.iter().map(|w| w.2.len()).sum();
        let staged = if total == 0 { None } else { Some(self.stage_writes(writes)?) };
        let mut recorded = Ok(());
        // The moves read what the earlier frames' copies wrote, and overwrite what their draws read.
        for (buffer, regions) in &moved {
            recorded = recorded
                .and_then(|()| self.cmd.buffer_barrier(*buffer, BufferState::ShaderRead, BufferState::TransferSrc))
                .and_then(|()| self.cmd.buffer_barrier(*buffer, BufferState::ShaderRead, BufferState::TransferDst))
                .and_then(|()| self.cmd.copy_buffer_regions(*buffer, *buffer, regions))
                // The writes below come after the moves' reads and writes.
                .and_then(|()| self.cmd.buffer_barrier(*buffer, BufferState::TransferDst, BufferState::TransferDst));
        }
        if let Some((staging, by_dst)) = &staged {
            for (dst, regions) in by_dst {
                let was_moved = moved.iter().any(|(b, _)| b == dst);
                if !was_moved {
                    recorded = recorded.and_then(|()| self.cmd.buffer_barrier(*dst, BufferState::ShaderRead, BufferState::TransferDst));
                }
                recorded = recorded.and_then(|()| self.cmd.copy_buffer_regions(*staging, *dst, regions));
            }
            // Destroyed after this frame's submission completes.
            self.device.destroy_buffer(*staging);
        }
        let written = staged.iter().flat_map(|(_, by_dst)| by_dst.iter().map(|(b, _)| *b));
        let mut done: Vec<BufferHandle> = moved.iter().map(|(b, _)| *b).chain(written).collect();
        done.sort_unstable();
        done.dedup();
        for buffer in done {
            recorded = recorded.and_then(|()| self.cmd.buffer_barrier(buffer, BufferState::TransferDst, BufferState::ShaderRead));
        }
        recorded
    }

    /// Copies the writes' bytes, in order, into one new staging buffer
    /// (never joined into a Vec first: a thousand poses are megabytes);
    /// returns it and, per destination in first-write order, its regions.
    fn stage_writes(&mut self, writes: &[(BufferHandle, u64, &[u8])]) -> Result<(BufferHandle, RegionsByBuffer)> {
        let mut parts: Vec<&[u8]> = Vec::with_capacity(writes.len());
        let mut staged = 0u64;
        let mut regions = Vec::with_capacity(writes.len());
        for (dst, offset, data) in writes.iter().filter(|w| !w.2.is_empty()) {
            regions.push((*dst, (staged, *offset, data.len() as u64)));
            parts.push(*data);
            staged += data.len() as u64;
        }
        let staging = self.device.create_buffer(&BufferDesc::host_visible("frame staging", staged, BufferUsage::TRANSFER_SRC))?;
        if let Err(e) = self.device.write_buffer_parts(staging, 0, &parts) {
            self.device.destroy_buffer(staging);
            return Err(e);
        }
        Ok((staging, group_by_buffer(regions.into_iter())))
    }

    /// Ends the primary, submits it and returns the value it will signal.
    /// A render pass left open is an error and nothing is submitted.
    pub fn submit(mut self) -> Result<FrameSubmission> {
        if self.cmd.in_pass() {
            // Dropped unsubmitted (Drop below): nothing reaches the GPU.
            return Err(RhiError::WrongPass { command: "Frame::submit", found: self.cmd.pass_state(), needed: PassState::Outside });
        }
        self.finished = true;
        let device = self.device;
        let queries = device.timestamps.slots.get((self.index % device.frames.len() as u64) as usize);
        let result = (|| {
            if let Some(q) = queries {
                // The frame's last command: its end on the GPU; then its
                // results go to the slot's results buffer (timestamp.rs).
                self.cmd.stamp(q, FRAME_END, 0)?;
                self.cmd.copy_timestamps(q);
            }
            // SAFETY: the primary is recording (begun in `begin_frame`) and no pass is open.
            unsafe { device.raw.end_command_buffer(self.slot.primary) }.map_err(vk_err("vkEndCommandBuffer"))?;
            let value = device.submit(self.slot.primary)?;
            self.slot.last_value = value;
            let mut uses = std::mem::take(self.uses.get_mut().unwrap_or_else(|p| p.into_inner()));
            uses.append(&mut self.cmd.uses);
            device.stamp_buffer_uses(&mut uses, value);
            if let Some(q) = queries {
                q.submitted();
            }
            Ok(FrameSubmission { value, frame: self.index })
        })();
        device.end_recording();
        device.frame_open.store(false, Ordering::Release);
        result
    }
}

impl Drop for Frame<'_> {
    fn drop(&mut self) {
        if !self.finished {
            // Discarded: nothing of this frame reaches the GPU; its pools are
            // reset when the slot is next used.
            self.device.end_recording();
            self.device.frame_open.store(false, Ordering::Release);
        }
    }
}
