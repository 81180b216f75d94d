//! Pipelines, bind groups, streams, push constants and the draws and
//! dispatches they feed: each checked against the recording state.

use super::state::*;
use super::{CommandList, RenderingContents, MAX_VERTEX_STREAMS};
use crate::bind_group::BindGroupHandle;
use crate::conv;
use crate::descriptor::BindGroup;
use crate::device::read;
use crate::error::{Result, RhiError};
use crate::pipeline::PipelineHandle;
use crate::types::*;
use crate::BufferHandle;
use ash::vk;

impl CommandList<'_> {
    /// Binds a graphics or compute pipeline. Bind groups stay bound as far as
    /// the new layout is compatible with the old one (Vulkan's pipeline layout
    /// compatibility) and push constants only under the same push-constant
    /// range; everything else must be bound again before the next draw.
    /// Refused in a pass begun with [`RenderingContents::Secondary`].
    pub fn bind_pipeline(&mut self, pipeline: PipelineHandle) -> Result<()> {
        self.inline_ok("bind_pipeline")?;
        let pipelines = read(&self.device.resources.pipelines);
        let p = pipelines.get(pipeline).ok_or_else(|| RhiError::InvalidHandle(format!("{pipeline:?}")))?;
        let bound = BoundPipeline {
            layout: p.layout,
            bind_point: p.bind_point,
            push: p.push_constants,
            sets: p.set_layouts,
            streams: p.vertex_streams,
            rendering: p.rendering,
        };
        // SAFETY: the pipeline is live; the deletion queue keeps it alive
        // until this frame's submission completes.
        unsafe { self.device.raw.cmd_bind_pipeline(self.raw, p.bind_point, p.raw) };
        // Sets stay bound only as far as the new layout is compatible with the
        // one they were bound with (Vulkan's pipeline layout compatibility).
        let keep = match self.state.pipeline {
            Some(old) if old.bind_point == bound.bind_point && old.push == bound.push => old
                .sets
                .raw
                .iter()
                .zip(&bound.sets.raw)
                .take(usize::from(old.sets.count.min(bound.sets.count)))
                .take_while(|(a, b)| a == b)
                .count(),
            _ => 0,
        };
        for s in &mut self.state.sets[keep..] {
            *s = vk::DescriptorSetLayout::null();
        }
        // Push constants stay set only under a layout with the same range.
        if self.state.pipeline.is_none_or(|old| old.push != bound.push) {
            self.state.push_written = 0;
        }
        self.state.pipeline = Some(bound);
        self.state.draw_ready = None;
        Ok(())
    }

    fn bound(&self) -> Result<BoundPipeline> {
        self.state.pipeline.ok_or_else(|| state_err("no pipeline bound"))
    }

    /// Binds a frame's bind group at `index` of the bound pipeline's layout;
    /// the group must have been made for that group of a pipeline with a
    /// compatible layout.
    pub fn bind_group(&mut self, index: u32, group: &BindGroup) -> Result<()> {
        self.inline_ok("bind_group")?;
        let b = self.bound()?;
        if group.frame != self.frame || group.device != self.device.id() {
            return Err(RhiError::InvalidDesc(format!(
                "bind group of frame {} used in frame {} (or of another device)",
                group.frame, self.frame
            )));
        }
        let i = index as usize;
        if i >= usize::from(b.sets.count) || b.sets.raw[i] != group.layout {
            return Err(RhiError::InvalidDesc(format!("bind group does not match group {index} of the bound pipeline's layout")));
        }
        // SAFETY: the set was allocated for this device and frame with the set
        // layout at `index` of the bound pipeline's layout, and written with
        // live resources.
        unsafe { self.device.raw.cmd_bind_descriptor_sets(self.raw, b.bind_point, b.layout, index, &[group.raw], &[]) };
        self.state.sets[i] = group.layout;
        self.state.draw_ready = None;
        Ok(())
    }

    /// Binds a persistent bind group ([`crate::Device::create_bind_group`])
    /// at `index` of the bound pipeline's layout, with the checks of
    /// [`Self::bind_group`]; a destroyed group, or one any of whose buffers,
    /// textures or samplers was destroyed since it was made, is
    /// [`RhiError::InvalidHandle`] and nothing is recorded.
    pub fn bind_group_handle(&mut self, index: u32, group: BindGroupHandle) -> Result<()> {
        self.inline_ok("bind_group_handle")?;
        let b = self.bound()?;
        let (raw, layout) = {
            let groups = read(&self.device.resources.bind_groups);
            let g = groups.get(group).ok_or_else(|| RhiError::InvalidHandle(format!("{group:?}")))?;
            if let Some(dead) = g.dead_resource(self.device) {
                return Err(RhiError::InvalidHandle(format!("bind group {group:?} names {dead}, destroyed since the group was created")));
            }
            (g.raw(), g.layout)
        };
        let i = index as usize;
        if i >= usize::from(b.sets.count) || b.sets.raw[i] != layout {
            return Err(RhiError::InvalidDesc(format!("bind group {group:?} does not match group {index} of the bound pipeline's layout")));
        }
        // SAFETY: the set was allocated from this device's persistent pools
        // with the set layout at `index` of the bound pipeline's layout and
        // written with resources that are all still alive (checked above);
        // the deletion queue keeps the set and them alive until this
        // recording's submission completes.
        unsafe { self.device.raw.cmd_bind_descriptor_sets(self.raw, b.bind_point, b.layout, index, &[raw], &[]) };
        self.state.sets[i] = layout;
        self.state.draw_ready = None;
        Ok(())
    }

    /// Writes push constants ("immediates") of the bound pipeline.
    #[inline]
    pub fn push_constants(&mut self, offset: u32, data: &[u8]) -> Result<()> {
        self.inline_ok("push_constants")?;
        // The two fields it needs, not a copy of the whole bound state.
        let Some(&BoundPipeline { layout, push, .. }) = self.state.pipeline.as_ref() else {
            return Err(state_err("no pipeline bound"));
        };
        let Some((stages, size)) = push else {
            return Err(RhiError::InvalidDesc("the bound pipeline has no push constants".into()));
        };
        if !fits(u64::from(offset), data.len() as u64, u64::from(size)) || !data.len().is_multiple_of(4) || !offset.is_multiple_of(4) {
            return Err(RhiError::InvalidDesc(format!(
                "push constant write {offset}+{} outside the {size}-byte block or unaligned",
                data.len()
            )));
        }
        if data.is_empty() {
            return Ok(()); // Vulkan has no empty push; nothing to write.
        }
        // SAFETY: range checked against the layout's push-constant range; not empty.
        unsafe { self.device.raw.cmd_push_constants(self.raw, layout, stages, offset, data) };
        let written = self.state.push_written | push_words(offset, offset + data.len() as u32);
        if written != self.state.push_written {
            self.state.push_written = written;
            self.state.draw_ready = None;
        }
        Ok(())
    }

    /// Binds vertex streams starting at `first` (streams `first..first + n`
    /// must be below [`MAX_VERTEX_STREAMS`]); each offset lies inside its buffer.
    pub fn bind_vertex_buffers(&mut self, first: u32, buffers: &[(BufferHandle, u64)]) -> Result<()> {
        self.inline_ok("bind_vertex_buffers")?;
        if (first as usize).saturating_add(buffers.len()) > MAX_VERTEX_STREAMS {
            return Err(RhiError::InvalidDesc(format!("vertex streams past {MAX_VERTEX_STREAMS}")));
        }
        let mut raws = [vk::Buffer::null(); MAX_VERTEX_STREAMS];
        let mut offsets = [0u64; MAX_VERTEX_STREAMS];
        let mut avail = [0u64; MAX_VERTEX_STREAMS];
        {
            let pool = read(&self.device.resources.buffers);
            for (i, (h, off)) in buffers.iter().enumerate() {
                let b = pool.get(*h).ok_or_else(|| RhiError::InvalidHandle(format!("{h:?}")))?;
                if !b.desc.usage.contains(BufferUsage::VERTEX) {
                    return Err(RhiError::InvalidDesc(format!("buffer {:?} lacks VERTEX usage", b.desc.label)));
                }
                if *off >= b.desc.size {
                    return Err(range_err(format_args!("vertex buffer offset {off} in {:?} ({} bytes)", b.desc.label, b.desc.size)));
                }
                raws[i] = b.raw;
                offsets[i] = *off;
                avail[i] = b.desc.size - off;
            }
        }
        let n = buffers.len();
        if n == 0 {
            return Ok(());
        }
        // SAFETY: every buffer is live with VERTEX usage and its offset inside it.
        unsafe { self.device.raw.cmd_bind_vertex_buffers(self.raw, first, &raws[..n], &offsets[..n]) };
        for (i, a) in avail[..n].iter().enumerate() {
            self.state.vertex[first as usize + i] = Some(*a);
        }
        self.state.draw_ready = None;
        Ok(())
    }

    /// Binds `buffer` (with [`BufferUsage::INDEX`]) as the index buffer from
    /// byte `offset` on, which must lie inside it and be a multiple of the
    /// index size; indexed draws are then checked against the indices left
    /// after `offset`.
    pub fn bind_index_buffer(&mut self, buffer: BufferHandle, offset: u64, format: IndexFormat) -> Result<()> {
        self.inline_ok("bind_index_buffer")?;
        let (raw, desc) = self.device.raw_buffer_desc(buffer)?;
        if !desc.usage.contains(BufferUsage::INDEX) {
            return Err(RhiError::InvalidDesc(format!("buffer {:?} lacks INDEX usage", desc.label)));
        }
        let size = match format {
            IndexFormat::Uint16 => 2,
            IndexFormat::Uint32 => 4,
        };
        if offset >= desc.size || !offset.is_multiple_of(size) {
            return Err(RhiError::InvalidDesc(format!(
                "index buffer offset {offset} is outside {:?} ({} bytes) or not a multiple of {size}",
                desc.label, desc.size
            )));
        }
        // SAFETY: live buffer with INDEX usage, offset inside and aligned.
        unsafe { self.device.raw.cmd_bind_index_buffer(self.raw, raw, offset, conv::index_type(format)) };
        self.state.index = Some((desc.size - offset) / size);
        Ok(())
    }

    /// Checks that a draw may be recorded now: inside an inline pass, a
    /// graphics pipeline for this pass's formats bound, every set of its
    /// layout and every stream it reads bound, viewport and scissor set,
    /// push constants written. Returns what the bound streams hold. The
    /// state is judged once after each change; draws in between compare
    /// against the cached result.
    #[inline]
    fn check_draw(&mut self) -> Result<DrawLimits> {
        match self.state.draw_ready {
            Some(true) => Ok(self.state.limits),
            _ => self.judge_draw_state(),
        }
    }

    #[cold]
    fn judge_draw_state(&mut self) -> Result<DrawLimits> {
        if let Some(problem) = self.draw_state_problem() {
            self.state.draw_ready = Some(false);
            return Err(state_err(problem));
        }
        let s = &self.state;
        let mut limits = DrawLimits { vertices: u64::MAX, instances: u64::MAX };
        if let Some(p) = &s.pipeline {
            for (st, avail) in p.streams.streams.iter().zip(&s.vertex).take(usize::from(p.streams.count)) {
                let n = stream_elements(st, avail.unwrap_or(0));
                let l = if st.per_instance { &mut limits.instances } else { &mut limits.vertices };
                *l = (*l).min(n);
            }
        }
        self.state.limits = limits;
        self.state.draw_ready = Some(true);
        Ok(limits)
    }

    fn draw_state_problem(&self) -> Option<&'static str> {
        let s = &self.state;
        let Some(pass) = s.pass else { return Some("draw outside a render pass") };
        if pass.contents != RenderingContents::Inline {
            return Some("draw in a pass whose contents come from secondaries");
        }
        let Some(p) = s.pipeline else { return Some("draw with no pipeline bound") };
        if p.rendering != Some(pass.layout) {
            return Some("the bound pipeline is not a graphics pipeline for this pass's attachment formats");
        }
        if !p.sets.all_bound(&s.sets) {
            return Some("a bind group of the bound pipeline's layout is not bound");
        }
        if s.vertex[..usize::from(p.streams.count)].iter().any(Option::is_none) {
            return Some("a vertex stream of the bound pipeline is not bound");
        }
        if !s.viewport || !s.scissor {
            return Some("viewport or scissor not set");
        }
        if !push_complete(&p, s.push_written) {
            return Some("the bound pipeline's push constants were not all written");
        }
        None
    }

    /// The error for a draw whose vertex (`None`: indexed, not checked) or
    /// instance range some bound stream does not hold: names the first such stream.
    #[cold]
    fn stream_range_err(&self, vertices: Option<(u32, u32)>, instances: (u32, u32)) -> RhiError {
        if let Some(p) = &self.state.pipeline {
            for (i, st) in p.streams.streams[..usize::from(p.streams.count)].iter().enumerate() {
                let (first, count) = match (st.per_instance, vertices) {
                    (true, _) => instances,
                    (false, Some(v)) => v,
                    (false, None) => continue,
                };
                if !holds(stream_elements(st, self.state.vertex[i].unwrap_or(0)), first, count) {
                    let end = u64::from(first) + u64::from(count);
                    return range_err(format_args!("elements {first}..{end} of vertex stream {i}"));
                }
            }
        }
        let (first, count) = instances;
        range_err(format_args!("instances {first}+{count} of a draw"))
    }

    /// Records a non-indexed draw; its vertex and instance ranges must lie
    /// inside the bound streams.
    #[inline]
    pub fn draw(&mut self, vertex_count: u32, instance_count: u32, first_vertex: u32, first_instance: u32) -> Result<()> {
        let l = self.check_draw()?;
        if !holds(l.vertices, first_vertex, vertex_count) || !holds(l.instances, first_instance, instance_count) {
            return Err(self.stream_range_err(Some((first_vertex, vertex_count)), (first_instance, instance_count)));
        }
        // SAFETY: inside an inline pass with a graphics pipeline for its
        // formats bound, every set, stream, viewport and scissor bound, and
        // the vertex/instance ranges inside the streams (checked above).
        unsafe { self.device.raw.cmd_draw(self.raw, vertex_count, instance_count, first_vertex, first_instance) };
        self.draws = self.draws.saturating_add(1);
        Ok(())
    }

    /// Records an indexed draw; its index range must lie inside the bound
    /// index buffer and its instance range inside the per-instance streams.
    #[inline]
    pub fn draw_indexed(
        &mut self,
        index_count: u32,
        instance_count: u32,
        first_index: u32,
        vertex_offset: i32,
        first_instance: u32,
    ) -> Result<()> {
        let l = self.check_draw()?;
        let Some(indices) = self.state.index else { return Err(state_err("draw_indexed with no index buffer bound")) };
        if !fits(u64::from(first_index), u64::from(index_count), indices) {
            return Err(range_err(format_args!("indices {first_index}+{index_count} of {indices}")));
        }
        if !holds(l.instances, first_instance, instance_count) {
            return Err(self.stream_range_err(None, (first_instance, instance_count)));
        }
        // SAFETY: as `draw`, with the index range inside the bound index buffer.
        unsafe { self.device.raw.cmd_draw_indexed(self.raw, index_count, instance_count, first_index, vertex_offset, first_instance) };
        self.draws = self.draws.saturating_add(1);
        Ok(())
    }

    /// `draw_count` indexed draws whose arguments (`VkDrawIndexedIndirectCommand`,
    /// 20 bytes each, `stride` apart) are read from `buffer` at `offset`.
    pub fn draw_indexed_indirect(&mut self, buffer: BufferHandle, offset: u64, draw_count: u32, stride: u32) -> Result<()> {
        const ARGS: u64 = 20;
        self.check_draw()?;
        if self.state.index.is_none() {
            return Err(state_err("draw_indexed_indirect with no index buffer bound"));
        }
        let (raw, desc) = self.device.raw_buffer_desc(buffer)?;
        if !desc.usage.contains(BufferUsage::INDIRECT) {
            return Err(RhiError::InvalidDesc(format!("buffer {:?} lacks INDIRECT usage", desc.label)));
        }
        if draw_count > 1 && !self.device.features().multi_draw_indirect {
            return Err(RhiError::Unsupported("multiDrawIndirect".into()));
        }
        if draw_count == 0 {
            return Ok(());
        }
        let span = u64::from(draw_count - 1).checked_mul(u64::from(stride)).and_then(|s| s.checked_add(ARGS));
        if !offset.is_multiple_of(4)
            || (draw_count > 1 && (!stride.is_multiple_of(4) || u64::from(stride) < ARGS))
            || !span.is_some_and(|span| fits(offset, span, desc.size))
        {
            return Err(RhiError::InvalidDesc(format!(
                "{draw_count} indirect draws of stride {stride} at {offset} do not fit {:?} ({} bytes) or are unaligned",
                desc.label, desc.size
            )));
        }
        // SAFETY: draw state checked as for `draw`; a live INDIRECT buffer
        // holding every argument record (range and alignment checked); count
        // checked against the feature.
        unsafe { self.device.raw.cmd_draw_indexed_indirect(self.raw, raw, offset, draw_count, stride) };
        self.draws = self.draws.saturating_add(draw_count);
        Ok(())
    }

    /// Dispatches compute work groups with a compute pipeline and its bind
    /// groups bound, outside render passes.
    pub fn dispatch(&mut self, x: u32, y: u32, z: u32) -> Result<()> {
        self.outside_pass("dispatch")?;
        let p = self.bound()?;
        if p.bind_point != vk::PipelineBindPoint::COMPUTE {
            return Err(state_err("dispatch with a graphics pipeline bound"));
        }
        if !p.sets.all_bound(&self.state.sets) {
            return Err(state_err("a bind group of the bound compute pipeline's layout is not bound"));
        }
        if !push_complete(&p, self.state.push_written) {
            return Err(state_err("the bound compute pipeline's push constants were not all written"));
        }
        let max = self.device.info().max_compute_work_group_count;
        if x > max[0] || y > max[1] || z > max[2] {
            return Err(RhiError::InvalidDesc(format!("dispatch {x}x{y}x{z} exceeds {max:?} work groups")));
        }
        // SAFETY: outside a pass with a compute pipeline and all its sets
        // bound; counts within the device limit.
        unsafe { self.device.raw.cmd_dispatch(self.raw, x, y, z) };
        Ok(())
    }
}
