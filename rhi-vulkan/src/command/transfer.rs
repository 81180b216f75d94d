//! Barriers and copies: transfers between buffers and textures, outside
//! render passes, with every range checked without overflow.

use super::state::*;
use super::CommandList;
use crate::conv;
use crate::device::read;
use crate::error::{range_of, Result, RhiError, Usage};
use crate::texture::subresource_range;
use crate::types::*;
use crate::{BufferDesc, BufferHandle, TextureHandle};
use ash::vk;

impl CommandList<'_> {
    /// Moves every mip level of `texture` from `from` to `to`.
    pub fn texture_barrier(&mut self, texture: TextureHandle, from: TextureState, to: TextureState) -> Result<()> {
        self.outside_pass("a texture barrier")?;
        if to == TextureState::Undefined {
            return Err(RhiError::WrongTextureState { state: to, role: "the target of a barrier" });
        }
        let (raw, range) = {
            let t = read(&self.device.resources.textures);
            let e = t.get(texture).ok_or_else(|| RhiError::InvalidHandle(format!("{texture:?}")))?;
            (e.raw, subresource_range(&e.desc))
        };
        let barrier = conv::image_barrier(raw, range, conv::texture_state(from), conv::texture_state(to));
        let barriers = [barrier];
        let dep = vk::DependencyInfo::default().image_memory_barriers(&barriers);
        // SAFETY: live image, outside a render pass; synchronization2 is
        // enabled on the device.
        unsafe { self.device.raw.cmd_pipeline_barrier2(self.raw, &dep) };
        Ok(())
    }

    /// Makes the accesses of `from` visible to those of `to` for the whole
    /// `buffer`. Outside a render pass only.
    pub fn buffer_barrier(&mut self, buffer: BufferHandle, from: BufferState, to: BufferState) -> Result<()> {
        self.outside_pass("a buffer barrier")?;
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
        // SAFETY: live buffer, outside a render pass; synchronization2 is
        // enabled on the device.
        unsafe { self.device.raw.cmd_pipeline_barrier2(self.raw, &dep) };
        self.uses.read(buffer);
        Ok(())
    }

    /// The raw source and destination of a buffer-to-buffer copy, with both
    /// usages checked.
    fn copy_pair(&self, src: BufferHandle, dst: BufferHandle) -> Result<(vk::Buffer, BufferDesc, vk::Buffer, BufferDesc)> {
        self.outside_pass("a copy")?;
        let (rs, s) = self.device.raw_buffer_desc(src)?;
        let (rd, d) = self.device.raw_buffer_desc(dst)?;
        if !s.usage.contains(BufferUsage::TRANSFER_SRC) {
            let usage = Usage::Buffer(BufferUsage::TRANSFER_SRC);
            return Err(RhiError::MissingUsage { label: s.label, usage, needed_for: "a copy source" });
        }
        if !d.usage.contains(BufferUsage::TRANSFER_DST) {
            let usage = Usage::Buffer(BufferUsage::TRANSFER_DST);
            return Err(RhiError::MissingUsage { label: d.label, usage, needed_for: "a copy destination" });
        }
        Ok((rs, s, rd, d))
    }

    /// Copies `size` bytes between buffers (ranges checked; within one
    /// buffer the ranges must not overlap).
    pub fn copy_buffer(&mut self, src: BufferHandle, src_offset: u64, dst: BufferHandle, dst_offset: u64, size: u64) -> Result<()> {
        self.copy_buffer_regions(src, dst, &[(src_offset, dst_offset, size)])
    }

    /// Copies several `(src_offset, dst_offset, size)` regions in one command.
    pub fn copy_buffer_regions(&mut self, src: BufferHandle, dst: BufferHandle, regions: &[(u64, u64, u64)]) -> Result<()> {
        if regions.is_empty() {
            return Ok(());
        }
        let (rs, s, rd, d) = self.copy_pair(src, dst)?;
        let mut vk_regions = Vec::with_capacity(regions.len());
        for &(src_offset, dst_offset, size) in regions {
            if size == 0 {
                let resource = format!("copy region {src_offset}->{dst_offset} ({:?} -> {:?})", s.label, d.label);
                return Err(RhiError::OutOfLimits { what: "size", resource, value: 0, min: 1, max: u64::MAX });
            }
            for (offset, b) in [(src_offset, &s), (dst_offset, &d)] {
                if !fits(offset, size, b.size) {
                    let (resource, range) = (format!("buffer {:?}", b.label), range_of(offset, size));
                    return Err(RhiError::OutOfRange { what: "copied bytes", resource, range, limit: b.size });
                }
            }
            if src == dst && src_offset < dst_offset.saturating_add(size) && dst_offset < src_offset.saturating_add(size) {
                return Err(RhiError::InvalidDesc(format!(
                    "copy region {src_offset}->{dst_offset} of {size} bytes overlaps itself within buffer {:?}",
                    s.label
                )));
            }
            vk_regions.push(vk::BufferCopy { src_offset, dst_offset, size });
        }
        // Host-visible into device-local memory: a staging upload.
        if s.memory != MemoryLocation::GpuOnly && d.memory == MemoryLocation::GpuOnly {
            self.device.memory_budget.note_staged(regions.iter().map(|r| r.2).sum());
        }
        // SAFETY: live buffers outside a pass, every region in range and
        // non-overlapping, both usages checked.
        unsafe { self.device.raw.cmd_copy_buffer(self.raw, rs, rd, &vk_regions) };
        self.uses.read(src);
        self.uses.write(dst);
        Ok(())
    }

    /// Fills `size` bytes at `offset` with the 32-bit `value` (size a multiple of 4).
    pub fn fill_buffer(&mut self, buffer: BufferHandle, offset: u64, size: u64, value: u32) -> Result<()> {
        self.outside_pass("a fill")?;
        let (raw, d) = self.device.raw_buffer_desc(buffer)?;
        fill_check(&d, offset, size)?;
        // SAFETY: live buffer with TRANSFER_DST outside a pass; range and alignment checked.
        unsafe { self.device.raw.cmd_fill_buffer(self.raw, raw, offset, size, value) };
        self.uses.write(buffer);
        Ok(())
    }

    /// The handles and the region of a texture level <-> buffer copy, with
    /// the level, the buffer range, alignment and usages checked (tightly
    /// packed texels of the whole level at `offset`).
    fn texture_copy(
        &self,
        texture: TextureHandle,
        level: u32,
        buffer: BufferHandle,
        offset: u64,
        to_buffer: bool,
    ) -> Result<(vk::Image, vk::Buffer, vk::BufferImageCopy)> {
        self.outside_pass("a texture copy")?;
        let (raw_image, t) = {
            let textures = read(&self.device.resources.textures);
            let e = textures.get(texture).ok_or_else(|| RhiError::InvalidHandle(format!("{texture:?}")))?;
            (e.raw, e.desc.clone())
        };
        let (raw_buffer, b) = self.device.raw_buffer_desc(buffer)?;
        let (t_usage, b_usage) = if to_buffer {
            (TextureUsage::TRANSFER_SRC, BufferUsage::TRANSFER_DST)
        } else {
            (TextureUsage::TRANSFER_DST, BufferUsage::TRANSFER_SRC)
        };
        let needed_for = if to_buffer { "a copy to a buffer" } else { "a copy from a buffer" };
        if !t.usage.contains(t_usage) {
            return Err(RhiError::MissingUsage { label: t.label, usage: Usage::Texture(t_usage), needed_for });
        }
        if !b.usage.contains(b_usage) {
            return Err(RhiError::MissingUsage { label: b.label, usage: Usage::Buffer(b_usage), needed_for });
        }
        if level >= t.mip_levels {
            let (resource, range) = (format!("texture {:?}", t.label), range_of(u64::from(level), 1));
            return Err(RhiError::OutOfRange { what: "mip level", resource, range, limit: u64::from(t.mip_levels) });
        }
        // A texel's bytes, or a whole block's (the offset alignment Vulkan
        // asks of block-compressed copies); texel sizes are powers of two,
        // so the larger of it and 4 is a multiple of both.
        let alignment = u64::from(t.format.bytes_per_block()).max(4);
        let (width, height) = t.level_extent(level);
        let size = t.level_size(level);
        if !offset.is_multiple_of(alignment) {
            let resource = format!("buffer {:?} (copying {:?} texels)", b.label, t.format);
            return Err(RhiError::Misaligned { what: "offset", resource, value: offset, alignment });
        }
        if !fits(offset, size, b.size) {
            let (resource, range) = (format!("buffer {:?}", b.label), range_of(offset, size));
            return Err(RhiError::OutOfRange { what: "bytes of the mip level", resource, range, limit: b.size });
        }
        let region = vk::BufferImageCopy {
            buffer_offset: offset,
            image_subresource: vk::ImageSubresourceLayers {
                aspect_mask: conv::aspect(t.format),
                mip_level: level,
                base_array_layer: 0,
                layer_count: t.dimension.layers(),
            },
            // The level's extent in texels, even where it is not a multiple
            // of a compressed format's block (allowed: it reaches the edge of
            // the level); buffer_row_length/image_height 0: tightly packed
            // rows of texels or whole blocks (`TextureDesc::level_size`).
            image_extent: vk::Extent3D { width, height, depth: 1 },
            ..Default::default()
        };
        Ok((raw_image, raw_buffer, region))
    }

    /// Copies level 0 of a texture (in `TransferSrc`) into `buffer` at
    /// `offset`, tightly packed ([`Self::copy_texture_level_to_buffer`]).
    pub fn copy_texture_to_buffer(&mut self, texture: TextureHandle, buffer: BufferHandle, offset: u64) -> Result<()> {
        self.copy_texture_level_to_buffer(texture, 0, buffer, offset)
    }

    /// Copies mip level `level` of a texture (in `TransferSrc`) into
    /// `buffer` at `offset`, tightly packed (a cube's six faces one after
    /// another, [`crate::TextureDesc::level_size`]). A level past the texture's, a
    /// range past the buffer or an offset not a multiple of 4 and of the
    /// texel size is an error and nothing is recorded.
    pub fn copy_texture_level_to_buffer(&mut self, texture: TextureHandle, level: u32, buffer: BufferHandle, offset: u64) -> Result<()> {
        let (image, raw_buffer, region) = self.texture_copy(texture, level, buffer, offset, true)?;
        // SAFETY: live image in TRANSFER_SRC_OPTIMAL (caller's barrier), an
        // existing level, and a buffer large enough (checked), outside a pass.
        unsafe { self.device.raw.cmd_copy_image_to_buffer(self.raw, image, vk::ImageLayout::TRANSFER_SRC_OPTIMAL, raw_buffer, &[region]) };
        self.uses.write(buffer);
        Ok(())
    }

    /// Copies tightly packed texels from `buffer` at `offset` into level 0
    /// of a texture in `TransferDst` ([`Self::copy_buffer_to_texture_level`]).
    pub fn copy_buffer_to_texture(&mut self, buffer: BufferHandle, offset: u64, texture: TextureHandle) -> Result<()> {
        self.copy_buffer_to_texture_level(buffer, offset, texture, 0)
    }

    /// Copies tightly packed texels from `buffer` at `offset` into the whole
    /// mip level `level` (every face of a cube) of a texture in `TransferDst`; checked as
    /// [`Self::copy_texture_level_to_buffer`].
    pub fn copy_buffer_to_texture_level(&mut self, buffer: BufferHandle, offset: u64, texture: TextureHandle, level: u32) -> Result<()> {
        let (image, raw_buffer, region) = self.texture_copy(texture, level, buffer, offset, false)?;
        // SAFETY: live image in TRANSFER_DST_OPTIMAL, an existing level;
        // buffer range checked; outside a pass.
        unsafe { self.device.raw.cmd_copy_buffer_to_image(self.raw, raw_buffer, image, vk::ImageLayout::TRANSFER_DST_OPTIMAL, &[region]) };
        self.uses.read(buffer);
        Ok(())
    }

    /// Fills mip levels 1.. of `texture` from level 0 by linear blits, each
    /// level from the one above. Every level must be in `TransferDst` before
    /// (level 0 holding the image); every level is in `ShaderRead` after.
    /// The texture needs `TRANSFER_SRC`, `TRANSFER_DST` and `SAMPLED` usage
    /// and (with more than one level) a format that can be blitted linearly
    /// ([`crate::Device::supports_mip_generation`]); otherwise it is an
    /// error and nothing is recorded.
    pub fn generate_mips(&mut self, texture: TextureHandle) -> Result<()> {
        self.outside_pass("generate_mips")?;
        let (image, desc) = {
            let textures = read(&self.device.resources.textures);
            let e = textures.get(texture).ok_or_else(|| RhiError::InvalidHandle(format!("{texture:?}")))?;
            (e.raw, e.desc.clone())
        };
        let needed = TextureUsage::TRANSFER_SRC | TextureUsage::TRANSFER_DST | TextureUsage::SAMPLED;
        if !desc.usage.contains(needed) {
            let usage = Usage::Texture(needed.difference(desc.usage));
            return Err(RhiError::MissingUsage { label: desc.label, usage, needed_for: "generate_mips" });
        }
        if desc.mip_levels > 1 {
            self.device.check_mip_generation(&desc)?;
        }
        let aspect = conv::aspect(desc.format);
        let (read_layout, read_stage, read_access) = conv::texture_state(TextureState::ShaderRead);
        // (layout, stages, access) of a level as a blit source and destination.
        let written = (vk::ImageLayout::TRANSFER_DST_OPTIMAL, vk::PipelineStageFlags2::ALL_TRANSFER, vk::AccessFlags2::TRANSFER_WRITE);
        let source = (vk::ImageLayout::TRANSFER_SRC_OPTIMAL, vk::PipelineStageFlags2::BLIT, vk::AccessFlags2::TRANSFER_READ);
        let readable = (read_layout, read_stage, read_access);
        let barrier = |level: u32, from: conv::ImageAccess, to: conv::ImageAccess| {
            let range = vk::ImageSubresourceRange {
                aspect_mask: aspect,
                base_mip_level: level,
                level_count: 1,
                base_array_layer: 0,
                layer_count: desc.dimension.layers(),
            };
            conv::image_barrier(image, range, from, to)
        };
        let layer_count = desc.dimension.layers();
        let layers = |level: u32| vk::ImageSubresourceLayers { aspect_mask: aspect, mip_level: level, base_array_layer: 0, layer_count };
        let corner = |level: u32| {
            let (w, h) = desc.level_extent(level);
            // Extents are at most the device's maximum, far below i32::MAX.
            vk::Offset3D { x: w as i32, y: h as i32, z: 1 }
        };
        let (device, cmd) = (self.device, self.raw);
        let pipeline_barrier = |barriers: &[vk::ImageMemoryBarrier2<'_>]| {
            let dep = vk::DependencyInfo::default().image_memory_barriers(barriers);
            // SAFETY: live image, outside a render pass; each barrier names
            // one existing level in the layout the sequence below left it in.
            unsafe { device.raw.cmd_pipeline_barrier2(cmd, &dep) };
        };
        for level in 1..desc.mip_levels {
            pipeline_barrier(&[barrier(level - 1, written, source)]);
            let region = vk::ImageBlit {
                src_subresource: layers(level - 1),
                src_offsets: [vk::Offset3D::default(), corner(level - 1)],
                dst_subresource: layers(level),
                dst_offsets: [vk::Offset3D::default(), corner(level)],
            };
            // SAFETY: live image with TRANSFER_SRC and TRANSFER_DST usage,
            // level - 1 in TRANSFER_SRC_OPTIMAL and level in
            // TRANSFER_DST_OPTIMAL (barrier above, caller's state), both
            // regions inside their levels; the format supports linear blits
            // (checked) and is not a depth format.
            unsafe {
                device.raw.cmd_blit_image(
                    cmd,
                    image,
                    vk::ImageLayout::TRANSFER_SRC_OPTIMAL,
                    image,
                    vk::ImageLayout::TRANSFER_DST_OPTIMAL,
                    &[region],
                    vk::Filter::LINEAR,
                )
            };
            pipeline_barrier(&[barrier(level - 1, source, readable)]);
        }
        pipeline_barrier(&[barrier(desc.mip_levels - 1, written, readable)]);
        Ok(())
    }
}

/// Checks a fill of `size` bytes at `offset` of a buffer described by `d`:
/// `TRANSFER_DST` usage, not empty, in 4-byte words, inside the buffer.
fn fill_check(d: &BufferDesc, offset: u64, size: u64) -> Result<()> {
    if !d.usage.contains(BufferUsage::TRANSFER_DST) {
        let usage = Usage::Buffer(BufferUsage::TRANSFER_DST);
        return Err(RhiError::MissingUsage { label: d.label.clone(), usage, needed_for: "a fill" });
    }
    let resource = || format!("the fill of buffer {:?}", d.label);
    if size == 0 {
        return Err(RhiError::OutOfLimits { what: "size", resource: resource(), value: 0, min: 1, max: d.size });
    }
    for (what, value) in [("offset", offset), ("size", size)] {
        if !value.is_multiple_of(4) {
            return Err(RhiError::Misaligned { what, resource: resource(), value, alignment: 4 });
        }
    }
    if !fits(offset, size, d.size) {
        let (resource, range) = (format!("buffer {:?}", d.label), range_of(offset, size));
        return Err(RhiError::OutOfRange { what: "filled bytes", resource, range, limit: d.size });
    }
    Ok(())
}
