//! Command recording: one type for primary and secondary command buffers.
//!
//! A `CommandList` is only ever in the recording state; it is finished by the
//! [`crate::Frame`] (primary) or by [`crate::Frame::record_secondary`], which
//! hands back a [`crate::SecondaryCommandBuffer`]. Handle lookups take a read
//! lock once per call; the per-draw calls (`draw*`, `push_constants`) take none.

use crate::conv;
use crate::descriptor::BindGroup;
use crate::device::{read, Device};
use crate::error::{Result, RhiError};
use crate::frame::{RenderingLayout, SecondaryCommandBuffer};
use crate::pipeline::PipelineHandle;
use crate::texture::subresource_range;
use crate::types::*;
use crate::{BufferHandle, TextureHandle};
use ash::vk;

/// What happens to an attachment when the pass begins.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum LoadOp<T> {
    Clear(T),
    Load,
    DontCare,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ColorAttachment {
    pub texture: TextureHandle,
    pub load: LoadOp<[f32; 4]>,
    pub store: bool,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DepthAttachment {
    pub texture: TextureHandle,
    pub load: LoadOp<f32>,
    pub store: bool,
}

/// A dynamic-rendering pass: attachments (in the attachment states) and area.
#[derive(Clone, Debug, PartialEq)]
pub struct RenderingDesc {
    pub color: Vec<ColorAttachment>,
    pub depth: Option<DepthAttachment>,
    pub area: Rect,
}

/// Whether the pass's draws are recorded inline or come from secondaries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RenderingContents {
    Inline,
    Secondary,
}

#[derive(Clone, Copy)]
struct BoundPipeline {
    layout: vk::PipelineLayout,
    bind_point: vk::PipelineBindPoint,
    push: Option<(vk::ShaderStageFlags, u32)>,
}

/// A command buffer in the recording state.
pub struct CommandList<'d> {
    device: &'d Device,
    raw: vk::CommandBuffer,
    secondary: bool,
    /// The frame this list records for (`u64::MAX`: an immediate submission).
    frame: u64,
    bound: Option<BoundPipeline>,
    draws: u32,
}

fn load_op<T>(l: &LoadOp<T>) -> vk::AttachmentLoadOp {
    match l {
        LoadOp::Clear(_) => vk::AttachmentLoadOp::CLEAR,
        LoadOp::Load => vk::AttachmentLoadOp::LOAD,
        LoadOp::DontCare => vk::AttachmentLoadOp::DONT_CARE,
    }
}

fn store_op(store: bool) -> vk::AttachmentStoreOp {
    if store {
        vk::AttachmentStoreOp::STORE
    } else {
        vk::AttachmentStoreOp::DONT_CARE
    }
}

impl<'d> CommandList<'d> {
    pub(crate) fn new(device: &'d Device, raw: vk::CommandBuffer, secondary: bool, frame: u64) -> Self {
        Self { device, raw, secondary, frame, bound: None, draws: 0 }
    }

    /// Draw calls recorded so far.
    pub fn draw_count(&self) -> u32 {
        self.draws
    }

    pub fn is_secondary(&self) -> bool {
        self.secondary
    }

    /// Begins dynamic rendering; returns the layout secondaries must inherit.
    pub fn begin_rendering(&mut self, desc: &RenderingDesc, contents: RenderingContents) -> Result<RenderingLayout> {
        if self.secondary {
            return Err(RhiError::InvalidDesc("secondaries continue a pass; they cannot begin one".into()));
        }
        if desc.area.width == 0 || desc.area.height == 0 {
            return Err(RhiError::InvalidDesc("rendering area is empty".into()));
        }
        let textures = read(&self.device.resources.textures);
        let mut layout = RenderingLayout::default();
        let mut colors = Vec::with_capacity(desc.color.len());
        for c in &desc.color {
            let t = textures.get(c.texture).ok_or_else(|| RhiError::InvalidHandle(format!("{:?}", c.texture)))?;
            if t.desc.format.is_depth() {
                return Err(RhiError::InvalidDesc(format!("{:?} is a depth texture used as color", t.desc.label)));
            }
            layout.color_formats.push(t.desc.format);
            let clear = match c.load {
                LoadOp::Clear(v) => vk::ClearValue { color: vk::ClearColorValue { float32: v } },
                _ => vk::ClearValue::default(),
            };
            colors.push(
                vk::RenderingAttachmentInfo::default()
                    .image_view(t.view)
                    .image_layout(vk::ImageLayout::COLOR_ATTACHMENT_OPTIMAL)
                    .load_op(load_op(&c.load))
                    .store_op(store_op(c.store))
                    .clear_value(clear),
            );
        }
        let depth = match &desc.depth {
            Some(d) => {
                let t = textures.get(d.texture).ok_or_else(|| RhiError::InvalidHandle(format!("{:?}", d.texture)))?;
                if !t.desc.format.is_depth() {
                    return Err(RhiError::InvalidDesc(format!("{:?} is not a depth texture", t.desc.label)));
                }
                layout.depth_format = Some(t.desc.format);
                let clear = match d.load {
                    LoadOp::Clear(v) => vk::ClearValue { depth_stencil: vk::ClearDepthStencilValue { depth: v, stencil: 0 } },
                    _ => vk::ClearValue::default(),
                };
                Some(
                    vk::RenderingAttachmentInfo::default()
                        .image_view(t.view)
                        .image_layout(vk::ImageLayout::DEPTH_ATTACHMENT_OPTIMAL)
                        .load_op(load_op(&d.load))
                        .store_op(store_op(d.store))
                        .clear_value(clear),
                )
            }
            None => None,
        };
        let mut info = vk::RenderingInfo::default()
            .render_area(vk::Rect2D {
                offset: vk::Offset2D { x: desc.area.x, y: desc.area.y },
                extent: vk::Extent2D { width: desc.area.width, height: desc.area.height },
            })
            .layer_count(1)
            .color_attachments(&colors);
        if let Some(d) = depth.as_ref() {
            info = info.depth_attachment(d);
        }
        if contents == RenderingContents::Secondary {
            info = info.flags(vk::RenderingFlags::CONTENTS_SECONDARY_COMMAND_BUFFERS);
        }
        // SAFETY: views are live (checked under the read lock, still held) and
        // in the attachment layouts the caller's barriers put them in.
        unsafe { self.device.raw.cmd_begin_rendering(self.raw, &info) };
        Ok(layout)
    }

    pub fn end_rendering(&mut self) {
        // SAFETY: pairs with `begin_rendering` on this primary.
        unsafe { self.device.raw.cmd_end_rendering(self.raw) };
    }

    /// Executes secondaries recorded for this frame, in the given order.
    pub fn execute_secondaries(&mut self, secondaries: &[SecondaryCommandBuffer]) -> Result<()> {
        if secondaries.is_empty() {
            return Ok(());
        }
        if self.secondary || secondaries.iter().any(|s| s.frame != self.frame) {
            return Err(RhiError::InvalidDesc("secondaries run only from the primary of the frame that recorded them".into()));
        }
        let raws: Vec<_> = secondaries.iter().map(|s| s.raw).collect();
        // SAFETY: the secondaries were recorded for this frame's slot and are finished.
        unsafe { self.device.raw.cmd_execute_commands(self.raw, &raws) };
        self.draws += secondaries.iter().map(|s| s.draws).sum::<u32>();
        Ok(())
    }

    /// Viewport covering `rect` with depth 0..1 (Vulkan clip space, y down).
    pub fn set_viewport(&mut self, rect: Rect) {
        let vp = vk::Viewport {
            x: rect.x as f32,
            y: rect.y as f32,
            width: rect.width as f32,
            height: rect.height as f32,
            min_depth: 0.0,
            max_depth: 1.0,
        };
        // SAFETY: recording; viewport is dynamic state in every pipeline.
        unsafe { self.device.raw.cmd_set_viewport(self.raw, 0, &[vp]) };
    }

    pub fn set_scissor(&mut self, rect: Rect) {
        let r = vk::Rect2D {
            offset: vk::Offset2D { x: rect.x.max(0), y: rect.y.max(0) },
            extent: vk::Extent2D { width: rect.width, height: rect.height },
        };
        // SAFETY: recording; scissor is dynamic state in every pipeline.
        unsafe { self.device.raw.cmd_set_scissor(self.raw, 0, &[r]) };
    }

    pub fn bind_pipeline(&mut self, pipeline: PipelineHandle) -> Result<()> {
        let pipelines = read(&self.device.resources.pipelines);
        let p = pipelines.get(pipeline).ok_or_else(|| RhiError::InvalidHandle(format!("{pipeline:?}")))?;
        // SAFETY: the pipeline is live; the deletion queue keeps it alive
        // until this frame's submission completes.
        unsafe { self.device.raw.cmd_bind_pipeline(self.raw, p.bind_point, p.raw) };
        self.bound = Some(BoundPipeline { layout: p.layout, bind_point: p.bind_point, push: p.push_constants });
        Ok(())
    }

    fn bound(&self) -> Result<BoundPipeline> {
        self.bound.ok_or_else(|| RhiError::InvalidDesc("no pipeline bound".into()))
    }

    /// Binds a frame's bind group at `index` of the bound pipeline's layout.
    pub fn bind_group(&mut self, index: u32, group: &BindGroup) -> Result<()> {
        let b = self.bound()?;
        if group.frame != self.frame {
            return Err(RhiError::InvalidDesc(format!(
                "bind group of frame {} used in frame {}",
                group.frame, self.frame
            )));
        }
        // SAFETY: the set was allocated for this frame and written with live resources.
        unsafe {
            self.device.raw.cmd_bind_descriptor_sets(self.raw, b.bind_point, b.layout, index, &[group.raw], &[])
        };
        Ok(())
    }

    /// Writes push constants ("immediates") of the bound pipeline.
    pub fn push_constants(&mut self, offset: u32, data: &[u8]) -> Result<()> {
        let b = self.bound()?;
        let Some((stages, size)) = b.push else {
            return Err(RhiError::InvalidDesc("the bound pipeline has no push constants".into()));
        };
        if offset as usize + data.len() > size as usize || data.len() % 4 != 0 || offset % 4 != 0 {
            return Err(RhiError::InvalidDesc(format!(
                "push constant write {offset}+{} outside the {size}-byte block or unaligned",
                data.len()
            )));
        }
        // SAFETY: range checked against the layout's push-constant range.
        unsafe { self.device.raw.cmd_push_constants(self.raw, b.layout, stages, offset, data) };
        Ok(())
    }

    /// Binds vertex streams starting at `first` (up to 8 at once).
    pub fn bind_vertex_buffers(&mut self, first: u32, buffers: &[(BufferHandle, u64)]) -> Result<()> {
        if buffers.len() > 8 {
            return Err(RhiError::InvalidDesc("at most 8 vertex buffers per call".into()));
        }
        let mut raws = [vk::Buffer::null(); 8];
        let mut offsets = [0u64; 8];
        {
            let pool = read(&self.device.resources.buffers);
            for (i, (h, off)) in buffers.iter().enumerate() {
                let b = pool.get(*h).ok_or_else(|| RhiError::InvalidHandle(format!("{h:?}")))?;
                if !b.desc.usage.contains(BufferUsage::VERTEX) {
                    return Err(RhiError::InvalidDesc(format!("buffer {:?} lacks VERTEX usage", b.desc.label)));
                }
                raws[i] = b.raw;
                offsets[i] = *off;
            }
        }
        let n = buffers.len();
        // SAFETY: every buffer is live with VERTEX usage.
        unsafe { self.device.raw.cmd_bind_vertex_buffers(self.raw, first, &raws[..n], &offsets[..n]) };
        Ok(())
    }

    pub fn bind_index_buffer(&mut self, buffer: BufferHandle, offset: u64, format: IndexFormat) -> Result<()> {
        let desc = self.device.buffer_desc(buffer)?;
        if !desc.usage.contains(BufferUsage::INDEX) {
            return Err(RhiError::InvalidDesc(format!("buffer {:?} lacks INDEX usage", desc.label)));
        }
        let raw = self.device.raw_buffer(buffer)?;
        // SAFETY: live buffer with INDEX usage.
        unsafe { self.device.raw.cmd_bind_index_buffer(self.raw, raw, offset, conv::index_type(format)) };
        Ok(())
    }

    pub fn draw(&mut self, vertex_count: u32, instance_count: u32, first_vertex: u32, first_instance: u32) {
        // SAFETY: recording inside a pass with a graphics pipeline bound
        // (the validation layer checks the rest in tests).
        unsafe { self.device.raw.cmd_draw(self.raw, vertex_count, instance_count, first_vertex, first_instance) };
        self.draws += 1;
    }

    pub fn draw_indexed(&mut self, index_count: u32, instance_count: u32, first_index: u32, vertex_offset: i32, first_instance: u32) {
        // SAFETY: as `draw`.
        unsafe {
            self.device.raw.cmd_draw_indexed(self.raw, index_count, instance_count, first_index, vertex_offset, first_instance)
        };
        self.draws += 1;
    }

    /// `draw_count` indexed draws whose arguments (`VkDrawIndexedIndirectCommand`,
    /// 20 bytes each) are read from `buffer` at `offset`.
    pub fn draw_indexed_indirect(&mut self, buffer: BufferHandle, offset: u64, draw_count: u32, stride: u32) -> Result<()> {
        let desc = self.device.buffer_desc(buffer)?;
        if !desc.usage.contains(BufferUsage::INDIRECT) {
            return Err(RhiError::InvalidDesc(format!("buffer {:?} lacks INDIRECT usage", desc.label)));
        }
        if draw_count > 1 && !self.device.features().multi_draw_indirect {
            return Err(RhiError::Unsupported("multiDrawIndirect".into()));
        }
        let raw = self.device.raw_buffer(buffer)?;
        // SAFETY: live buffer with INDIRECT usage; count checked against the feature.
        unsafe { self.device.raw.cmd_draw_indexed_indirect(self.raw, raw, offset, draw_count, stride) };
        self.draws += draw_count;
        Ok(())
    }

    pub fn dispatch(&mut self, x: u32, y: u32, z: u32) {
        // SAFETY: recording outside a pass with a compute pipeline bound.
        unsafe { self.device.raw.cmd_dispatch(self.raw, x, y, z) };
    }

    pub fn texture_barrier(&mut self, texture: TextureHandle, from: TextureState, to: TextureState) -> Result<()> {
        let (raw, format) = {
            let t = read(&self.device.resources.textures);
            let e = t.get(texture).ok_or_else(|| RhiError::InvalidHandle(format!("{texture:?}")))?;
            (e.raw, e.desc.format)
        };
        let (old_layout, src_stage, src_access) = conv::texture_state(from);
        let (new_layout, dst_stage, dst_access) = conv::texture_state(to);
        let barrier = vk::ImageMemoryBarrier2::default()
            .src_stage_mask(src_stage)
            .src_access_mask(src_access)
            .dst_stage_mask(dst_stage)
            .dst_access_mask(dst_access)
            .old_layout(old_layout)
            .new_layout(new_layout)
            .src_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
            .dst_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
            .image(raw)
            .subresource_range(subresource_range(format));
        let barriers = [barrier];
        let dep = vk::DependencyInfo::default().image_memory_barriers(&barriers);
        // SAFETY: live image; synchronization2 is enabled on the device.
        unsafe { self.device.raw.cmd_pipeline_barrier2(self.raw, &dep) };
        Ok(())
    }

    pub fn buffer_barrier(&mut self, buffer: BufferHandle, from: BufferState, to: BufferState) -> Result<()> {
        let raw = self.device.raw_buffer(buffer)?;
        let (src_stage, src_access) = conv::buffer_state(from);
        let (dst_stage, dst_access) = conv::buffer_state(to);
        let barrier = vk::BufferMemoryBarrier2::default()
            .src_stage_mask(src_stage)
            .src_access_mask(src_access)
            .dst_stage_mask(dst_stage)
            .dst_access_mask(dst_access)
            .src_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
            .dst_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
            .buffer(raw)
            .offset(0)
            .size(vk::WHOLE_SIZE);
        let barriers = [barrier];
        let dep = vk::DependencyInfo::default().buffer_memory_barriers(&barriers);
        // SAFETY: live buffer; synchronization2 is enabled on the device.
        unsafe { self.device.raw.cmd_pipeline_barrier2(self.raw, &dep) };
        Ok(())
    }

    /// Copies `size` bytes between buffers (ranges checked).
    pub fn copy_buffer(&mut self, src: BufferHandle, src_offset: u64, dst: BufferHandle, dst_offset: u64, size: u64) -> Result<()> {
        let (s, d) = (self.device.buffer_desc(src)?, self.device.buffer_desc(dst)?);
        if src_offset + size > s.size || dst_offset + size > d.size || size == 0 {
            return Err(RhiError::InvalidDesc(format!(
                "copy of {size} bytes from {:?}@{src_offset} to {:?}@{dst_offset} is out of range",
                s.label, d.label
            )));
        }
        if !s.usage.contains(BufferUsage::TRANSFER_SRC) || !d.usage.contains(BufferUsage::TRANSFER_DST) {
            return Err(RhiError::InvalidDesc("copy needs TRANSFER_SRC and TRANSFER_DST usage".into()));
        }
        let (rs, rd) = (self.device.raw_buffer(src)?, self.device.raw_buffer(dst)?);
        let region = vk::BufferCopy { src_offset, dst_offset, size };
        // SAFETY: live buffers, ranges and usages checked.
        unsafe { self.device.raw.cmd_copy_buffer(self.raw, rs, rd, &[region]) };
        Ok(())
    }

    /// Copies several `(src_offset, dst_offset, size)` regions in one command.
    pub fn copy_buffer_regions(&mut self, src: BufferHandle, dst: BufferHandle, regions: &[(u64, u64, u64)]) -> Result<()> {
        if regions.is_empty() {
            return Ok(());
        }
        let (s, d) = (self.device.buffer_desc(src)?, self.device.buffer_desc(dst)?);
        if !s.usage.contains(BufferUsage::TRANSFER_SRC) || !d.usage.contains(BufferUsage::TRANSFER_DST) {
            return Err(RhiError::InvalidDesc("copy needs TRANSFER_SRC and TRANSFER_DST usage".into()));
        }
        let mut vk_regions = Vec::with_capacity(regions.len());
        for &(src_offset, dst_offset, size) in regions {
            if size == 0 || src_offset + size > s.size || dst_offset + size > d.size {
                return Err(RhiError::InvalidDesc(format!(
                    "copy region {src_offset}->{dst_offset} of {size} bytes is out of range ({:?} -> {:?})",
                    s.label, d.label
                )));
            }
            vk_regions.push(vk::BufferCopy { src_offset, dst_offset, size });
        }
        let (rs, rd) = (self.device.raw_buffer(src)?, self.device.raw_buffer(dst)?);
        // SAFETY: live buffers, every region and both usages checked.
        unsafe { self.device.raw.cmd_copy_buffer(self.raw, rs, rd, &vk_regions) };
        Ok(())
    }

    /// Fills `size` bytes at `offset` with the 32-bit `value` (size a multiple of 4).
    pub fn fill_buffer(&mut self, buffer: BufferHandle, offset: u64, size: u64, value: u32) -> Result<()> {
        let d = self.device.buffer_desc(buffer)?;
        if offset + size > d.size || size % 4 != 0 || offset % 4 != 0 || !d.usage.contains(BufferUsage::TRANSFER_DST) {
            return Err(RhiError::InvalidDesc(format!("invalid fill of {:?}", d.label)));
        }
        let raw = self.device.raw_buffer(buffer)?;
        // SAFETY: live buffer with TRANSFER_DST; range checked.
        unsafe { self.device.raw.cmd_fill_buffer(self.raw, raw, offset, size, value) };
        Ok(())
    }

    /// The handles and the whole-texture region of a texture <-> buffer copy,
    /// with the buffer range checked (tightly packed texels at `offset`).
    fn texture_copy(&self, texture: TextureHandle, buffer: BufferHandle, offset: u64) -> Result<(vk::Image, vk::Buffer, vk::BufferImageCopy)> {
        let t = self.device.texture_desc(texture)?;
        let b = self.device.buffer_desc(buffer)?;
        let size = u64::from(t.width) * u64::from(t.height) * u64::from(t.format.bytes_per_pixel());
        if offset + size > b.size {
            return Err(RhiError::InvalidDesc(format!("buffer {:?} too small for texture {:?}", b.label, t.label)));
        }
        let raw_image = read(&self.device.resources.textures)
            .get(texture)
            .map(|e| e.raw)
            .ok_or_else(|| RhiError::InvalidHandle(format!("{texture:?}")))?;
        let region = vk::BufferImageCopy {
            buffer_offset: offset,
            image_subresource: vk::ImageSubresourceLayers { aspect_mask: conv::aspect(t.format), mip_level: 0, base_array_layer: 0, layer_count: 1 },
            image_extent: vk::Extent3D { width: t.width, height: t.height, depth: 1 },
            ..Default::default()
        };
        Ok((raw_image, self.device.raw_buffer(buffer)?, region))
    }

    /// Copies a whole texture (in `TransferSrc`) into `buffer` at `offset`, tightly packed.
    pub fn copy_texture_to_buffer(&mut self, texture: TextureHandle, buffer: BufferHandle, offset: u64) -> Result<()> {
        let (image, raw_buffer, region) = self.texture_copy(texture, buffer, offset)?;
        // SAFETY: live image in TRANSFER_SRC_OPTIMAL (caller's barrier) and a
        // buffer large enough (checked).
        unsafe { self.device.raw.cmd_copy_image_to_buffer(self.raw, image, vk::ImageLayout::TRANSFER_SRC_OPTIMAL, raw_buffer, &[region]) };
        Ok(())
    }

    /// Copies tightly packed texels from `buffer` at `offset` into a whole
    /// texture in `TransferDst`.
    pub fn copy_buffer_to_texture(&mut self, buffer: BufferHandle, offset: u64, texture: TextureHandle) -> Result<()> {
        let (image, raw_buffer, region) = self.texture_copy(texture, buffer, offset)?;
        // SAFETY: live image in TRANSFER_DST_OPTIMAL; buffer range checked.
        unsafe { self.device.raw.cmd_copy_buffer_to_image(self.raw, raw_buffer, image, vk::ImageLayout::TRANSFER_DST_OPTIMAL, &[region]) };
        Ok(())
    }
}
