//! Pipelines, bind groups, streams, push constants and the draws and
//! dispatches they feed: each checked against the recording state.

use super::state::*;
use super::{CommandList, RenderingContents, MAX_VERTEX_STREAMS};
use crate::bind_group::BindGroupHandle;
use crate::conv;
use crate::descriptor::BindGroup;
use crate::device::read;
use crate::error::{range_of, PassState, Result, RhiError, Unbound, Usage};
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

    fn bound(&self, command: &'static str) -> Result<BoundPipeline> {
        self.state.pipeline.ok_or_else(|| not_bound(command, Unbound::Pipeline))
    }

    /// Checks that group `index` of the bound pipeline's layout exists and
    /// has the set layout `layout`.
    fn check_group_index(b: &BoundPipeline, index: u32, layout: vk::DescriptorSetLayout) -> Result<()> {
        let i = index as usize;
        if i >= usize::from(b.sets.count) {
            let (resource, range) = ("the bound pipeline's layout".into(), range_of(u64::from(index), 1));
            return Err(RhiError::OutOfRange { what: "bind group", resource, range, limit: u64::from(b.sets.count) });
        }
        if b.sets.raw[i] != layout {
            return Err(RhiError::IncompatibleBindGroup { index });
        }
        Ok(())
    }

    /// Binds a frame's bind group at `index` of the bound pipeline's layout;
    /// the group must have been made for that group of a pipeline with a
    /// compatible layout.
    pub fn bind_group(&mut self, index: u32, group: &BindGroup) -> Result<()> {
        self.inline_ok("bind_group")?;
        let b = self.bound("bind_group")?;
        if group.device != self.device.id() {
            return Err(RhiError::OtherDevice { what: "a frame's bind group" });
        }
        if group.frame != self.frame {
            return Err(RhiError::OtherFrame { what: "a bind group", made_in: group.frame, used_in: self.frame() });
        }
        Self::check_group_index(&b, index, group.layout)?;
        let i = index as usize;
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
        let b = self.bound("bind_group_handle")?;
        let (raw, layout) = {
            let groups = read(&self.device.resources.bind_groups);
            let g = groups.get(group).ok_or_else(|| RhiError::InvalidHandle(format!("{group:?}")))?;
            if let Some(dead) = g.dead_resource(self.device) {
                return Err(RhiError::InvalidHandle(format!("bind group {group:?} names {dead}, destroyed since the group was created")));
            }
            for &(buffer, writes) in g.buffers() {
                self.uses.note(buffer, writes);
            }
            (g.raw(), g.layout)
        };
        Self::check_group_index(&b, index, layout)?;
        let i = index as usize;
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
            return Err(not_bound("push_constants", Unbound::Pipeline));
        };
        let Some((stages, size)) = push else {
            // No block: every write, even an empty one, is past its 0 bytes.
            return Err(push_constant_err(offset, data.len() as u64, 0));
        };
        if !fits(u64::from(offset), data.len() as u64, u64::from(size)) || !data.len().is_multiple_of(4) || !offset.is_multiple_of(4) {
            return Err(push_constant_err(offset, data.len() as u64, size));
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
            let (resource, range) = ("a command list (MAX_VERTEX_STREAMS)".into(), range_of(u64::from(first), buffers.len() as u64));
            return Err(RhiError::OutOfRange { what: "vertex streams", resource, range, limit: MAX_VERTEX_STREAMS as u64 });
        }
        let mut raws = [vk::Buffer::null(); MAX_VERTEX_STREAMS];
        let mut offsets = [0u64; MAX_VERTEX_STREAMS];
        let mut avail = [0u64; MAX_VERTEX_STREAMS];
        {
            let pool = read(&self.device.resources.buffers);
            for (i, (h, off)) in buffers.iter().enumerate() {
                let b = pool.get(*h).ok_or_else(|| RhiError::InvalidHandle(format!("{h:?}")))?;
                if !b.desc.usage.contains(BufferUsage::VERTEX) {
                    let (label, usage) = (b.desc.label.clone(), Usage::Buffer(BufferUsage::VERTEX));
                    return Err(RhiError::MissingUsage { label, usage, needed_for: "a vertex stream" });
                }
                if *off >= b.desc.size {
                    let (resource, range) = (format!("buffer {:?}", b.desc.label), range_of(*off, 1));
                    return Err(RhiError::OutOfRange { what: "vertex buffer offset", resource, range, limit: b.desc.size });
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
        for (h, _) in buffers {
            self.uses.read(*h);
        }
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
            return Err(RhiError::MissingUsage {
                label: desc.label,
                usage: Usage::Buffer(BufferUsage::INDEX),
                needed_for: "the index buffer",
            });
        }
        let size = match format {
            IndexFormat::Uint16 => 2,
            IndexFormat::Uint32 => 4,
        };
        if offset >= desc.size {
            let (resource, range) = (format!("buffer {:?}", desc.label), range_of(offset, 1));
            return Err(RhiError::OutOfRange { what: "index buffer offset", resource, range, limit: desc.size });
        }
        if !offset.is_multiple_of(size) {
            let resource = format!("index buffer {:?} ({format:?})", desc.label);
            return Err(RhiError::Misaligned { what: "offset", resource, value: offset, alignment: size });
        }
        // SAFETY: live buffer with INDEX usage, offset inside and aligned.
        unsafe { self.device.raw.cmd_bind_index_buffer(self.raw, raw, offset, conv::index_type(format)) };
        self.uses.read(buffer);
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
    fn check_draw(&mut self, command: &'static str) -> Result<DrawLimits> {
        match self.state.draw_ready {
            Some(true) => Ok(self.state.limits),
            _ => self.judge_draw_state(command),
        }
    }

    #[cold]
    fn judge_draw_state(&mut self, command: &'static str) -> Result<DrawLimits> {
        if let Some(problem) = self.draw_state_problem(command) {
            self.state.draw_ready = Some(false);
            return Err(problem);
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

    /// The first reason `command` (a draw) cannot be recorded now, if any.
    fn draw_state_problem(&self, command: &'static str) -> Option<RhiError> {
        let s = &self.state;
        let Some(pass) = s.pass else { return Some(self.wrong_pass(command, PassState::Inline)) };
        if pass.contents != RenderingContents::Inline {
            return Some(self.wrong_pass(command, PassState::Secondary));
        }
        let missing = self.draw_unbound(pass.layout)?;
        Some(not_bound(command, missing))
    }

    /// The first thing a draw in a pass of `layout` needs that is not bound or set.
    fn draw_unbound(&self, layout: u64) -> Option<Unbound> {
        let s = &self.state;
        let Some(p) = s.pipeline else { return Some(Unbound::Pipeline) };
        if p.rendering != Some(layout) {
            return Some(Unbound::PipelineForPass);
        }
        if let Some(g) = p.sets.first_unbound(&s.sets) {
            return Some(Unbound::BindGroup(g));
        }
        if let Some(i) = s.vertex[..usize::from(p.streams.count)].iter().position(Option::is_none) {
            return Some(Unbound::VertexStream(i as u32));
        }
        if !s.viewport {
            return Some(Unbound::Viewport);
        }
        if !s.scissor {
            return Some(Unbound::Scissor);
        }
        (!push_complete(&p, s.push_written)).then_some(Unbound::PushConstants)
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
                let limit = stream_elements(st, self.state.vertex[i].unwrap_or(0));
                if !holds(limit, first, count) {
                    let what = if st.per_instance { "instances" } else { "vertices" };
                    let range = range_of(u64::from(first), u64::from(count));
                    return RhiError::OutOfRange { what, resource: format!("vertex stream {i}"), range, limit };
                }
            }
        }
        // Not reached: a range the limits refused is refused by some stream.
        let (first, count) = instances;
        let (resource, range) = ("the bound vertex streams".into(), range_of(u64::from(first), u64::from(count)));
        RhiError::OutOfRange { what: "instances", resource, range, limit: self.state.limits.instances }
    }

    /// Records a non-indexed draw; its vertex and instance ranges must lie
    /// inside the bound streams.
    #[inline]
    pub fn draw(&mut self, vertex_count: u32, instance_count: u32, first_vertex: u32, first_instance: u32) -> Result<()> {
        let l = self.check_draw("draw")?;
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
        let l = self.check_draw("draw_indexed")?;
        let Some(indices) = self.state.index else { return Err(not_bound("draw_indexed", Unbound::IndexBuffer)) };
        if !fits(u64::from(first_index), u64::from(index_count), indices) {
            let (resource, range) = ("the bound index buffer".into(), range_of(u64::from(first_index), u64::from(index_count)));
            return Err(RhiError::OutOfRange { what: "indices", resource, range, limit: indices });
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
        self.check_draw("draw_indexed_indirect")?;
        if self.state.index.is_none() {
            return Err(not_bound("draw_indexed_indirect", Unbound::IndexBuffer));
        }
        let (raw, desc) = self.device.raw_buffer_desc(buffer)?;
        if !desc.usage.contains(BufferUsage::INDIRECT) {
            let usage = Usage::Buffer(BufferUsage::INDIRECT);
            return Err(RhiError::MissingUsage { label: desc.label, usage, needed_for: "indirect draw arguments" });
        }
        if draw_count > 1 && !self.device.features().multi_draw_indirect {
            return Err(RhiError::Unsupported("multiDrawIndirect".into()));
        }
        if draw_count == 0 {
            return Ok(());
        }
        indirect_check(&desc, offset, draw_count, stride)?;
        // SAFETY: draw state checked as for `draw`; a live INDIRECT buffer
        // holding every argument record (range and alignment checked); count
        // checked against the feature.
        unsafe { self.device.raw.cmd_draw_indexed_indirect(self.raw, raw, offset, draw_count, stride) };
        self.uses.read(buffer);
        self.draws = self.draws.saturating_add(draw_count);
        Ok(())
    }

    /// Dispatches compute work groups with a compute pipeline and its bind
    /// groups bound, outside render passes.
    pub fn dispatch(&mut self, x: u32, y: u32, z: u32) -> Result<()> {
        self.outside_pass("dispatch")?;
        let p = self.bound("dispatch")?;
        if p.bind_point != vk::PipelineBindPoint::COMPUTE {
            return Err(not_bound("dispatch", Unbound::ComputePipeline));
        }
        if let Some(g) = p.sets.first_unbound(&self.state.sets) {
            return Err(not_bound("dispatch", Unbound::BindGroup(g)));
        }
        if !push_complete(&p, self.state.push_written) {
            return Err(not_bound("dispatch", Unbound::PushConstants));
        }
        let max = self.device.info().max_compute_work_group_count;
        for ((what, value), max) in [("work groups in x", x), ("work groups in y", y), ("work groups in z", z)].into_iter().zip(max) {
            if value > max {
                let (resource, value, max) = (format!("the dispatch {x}x{y}x{z}"), u64::from(value), u64::from(max));
                return Err(RhiError::OutOfLimits { what, resource, value, min: 0, max });
            }
        }
        // SAFETY: outside a pass with a compute pipeline and all its sets
        // bound; counts within the device limit.
        unsafe { self.device.raw.cmd_dispatch(self.raw, x, y, z) };
        Ok(())
    }
}

/// The error for a push-constant write of `len` bytes at `offset` into a
/// block of `size` bytes (none: 0) that is out of range or unaligned.
#[cold]
fn push_constant_err(offset: u32, len: u64, size: u32) -> RhiError {
    let resource = || "the bound pipeline's push-constant block".to_string();
    if !offset.is_multiple_of(4) {
        return RhiError::Misaligned { what: "offset", resource: resource(), value: u64::from(offset), alignment: 4 };
    }
    if !len.is_multiple_of(4) {
        return RhiError::Misaligned { what: "size", resource: resource(), value: len, alignment: 4 };
    }
    RhiError::OutOfRange { what: "bytes", resource: resource(), range: range_of(u64::from(offset), len), limit: u64::from(size) }
}

/// Checks `draw_count` indirect draw records (`args` bytes each, `stride`
/// apart) at `offset` of a buffer described by `desc`: offset and stride
/// in 4-byte words, the stride at least a record, every record inside.
fn indirect_check(desc: &crate::BufferDesc, offset: u64, draw_count: u32, stride: u32) -> Result<()> {
    const ARGS: u64 = 20;
    let resource = || format!("indirect buffer {:?}", desc.label);
    if !offset.is_multiple_of(4) {
        return Err(RhiError::Misaligned { what: "offset", resource: resource(), value: offset, alignment: 4 });
    }
    if draw_count > 1 && !stride.is_multiple_of(4) {
        return Err(RhiError::Misaligned { what: "stride", resource: resource(), value: u64::from(stride), alignment: 4 });
    }
    if draw_count > 1 && u64::from(stride) < ARGS {
        let (value, max) = (u64::from(stride), u64::from(u32::MAX));
        return Err(RhiError::OutOfLimits { what: "stride", resource: resource(), value, min: ARGS, max });
    }
    // Saturates: a span past u64 is past every buffer.
    let span = u64::from(draw_count - 1).saturating_mul(u64::from(stride)).saturating_add(ARGS);
    if !fits(offset, span, desc.size) {
        let (resource, range) = (format!("buffer {:?}", desc.label), range_of(offset, span));
        return Err(RhiError::OutOfRange { what: "indirect argument bytes", resource, range, limit: desc.size });
    }
    Ok(())
}
