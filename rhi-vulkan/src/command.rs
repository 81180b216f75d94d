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
use crate::frame::{RenderingLayout, SecondaryCommandBuffer, MAX_COLOR_ATTACHMENTS};
use crate::pipeline::PipelineHandle;
use crate::texture::subresource_range;
use crate::timestamp::{QuerySlot, MAX_TIMESTAMPS_PER_FRAME};
use crate::types::*;
use crate::{BufferDesc, BufferHandle, TextureHandle};
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

/// A pipeline as the command list sees it while it is bound: everything a
/// draw or dispatch is checked against, copied once per `bind_pipeline`.
#[derive(Clone, Copy)]
struct BoundPipeline {
    layout: vk::PipelineLayout,
    bind_point: vk::PipelineBindPoint,
    push: Option<(vk::ShaderStageFlags, u32)>,
    sets: SetLayouts,
    streams: VertexStreams,
    /// [`RenderingLayout::key`] of the formats it was built for (graphics).
    rendering: Option<u64>,
}

/// The set layouts of a pipeline layout, by group index.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) struct SetLayouts {
    pub raw: [vk::DescriptorSetLayout; MAX_BIND_GROUPS],
    pub count: u8,
}

/// One vertex stream of a pipeline: what a draw's range is checked against.
#[derive(Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct VertexStream {
    pub stride: u32,
    pub per_instance: bool,
    /// Bytes one element reads past its start (the furthest attribute end).
    pub span: u32,
}

#[derive(Clone, Copy, Default)]
pub(crate) struct VertexStreams {
    pub streams: [VertexStream; MAX_VERTEX_STREAMS],
    pub count: u8,
}

/// The render pass a command list is inside.
#[derive(Clone, Copy)]
struct OpenPass {
    /// [`RenderingLayout::key`] of its attachments.
    layout: u64,
    contents: RenderingContents,
}

/// What has been recorded so far, as far as the next command's validity goes
/// (Vulkan's "state" of a command buffer: pass, pipeline, bound sets and
/// streams, dynamic state). Every command checks it before reaching Vulkan.
#[derive(Default)]
struct Recording {
    pass: Option<OpenPass>,
    pipeline: Option<BoundPipeline>,
    /// The layout each bound set was bound with (null: none), by group index.
    sets: [vk::DescriptorSetLayout; MAX_BIND_GROUPS],
    /// Bytes available from each bound vertex stream's offset.
    vertex: [Option<u64>; MAX_VERTEX_STREAMS],
    /// Indices available from the bound index buffer's offset.
    index: Option<u64>,
    /// Which 4-byte words of the bound layout's push-constant block have
    /// been written (Vulkan requires every one a shader uses to be set).
    push_written: u128,
    viewport: bool,
    scissor: bool,
    /// Whether the state above is complete for a draw (`None`: not yet checked).
    draw_ready: Option<bool>,
    /// What the bound streams hold, computed with `draw_ready` (valid while
    /// it is `Some(true)`), so a draw checks its ranges in two comparisons.
    limits: DrawLimits,
    /// Secondaries executed by this primary (each may run once).
    executed: Vec<vk::CommandBuffer>,
}

/// Elements the bound vertex streams hold, by step rate: the least over the
/// bound pipeline's streams of that rate (`u64::MAX` where it reads none).
#[derive(Clone, Copy, Default)]
struct DrawLimits {
    vertices: u64,
    instances: u64,
}

/// Elements of stream `st` that `avail` bytes from its offset hold: element
/// `k` reads up to `k * stride + span` (`u64::MAX`: any number, a zero stride).
fn stream_elements(st: &VertexStream, avail: u64) -> u64 {
    match avail.checked_sub(u64::from(st.span)) {
        None => 0,
        Some(_) if st.stride == 0 => u64::MAX,
        Some(rest) => rest / u64::from(st.stride) + 1,
    }
}

/// Whether elements `first..first + count` lie among the first `limit`
/// (an empty range always does).
#[inline]
fn holds(limit: u64, first: u32, count: u32) -> bool {
    count == 0 || u64::from(first) + u64::from(count) <= limit
}

/// A command buffer in the recording state.
pub struct CommandList<'d> {
    device: &'d Device,
    raw: vk::CommandBuffer,
    secondary: bool,
    /// The frame this list records for (`u64::MAX`: an immediate submission).
    frame: u64,
    state: Recording,
    draws: u32,
    /// The frame slot's timestamp queries (`None`: an immediate submission,
    /// or a device without timestamps).
    queries: Option<&'d QuerySlot>,
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

/// Bind groups a pipeline layout may have (Vulkan guarantees 4; every
/// device Proxima runs on has at least 8).
pub const MAX_BIND_GROUPS: usize = 8;
/// Vertex streams a pipeline may read.
pub const MAX_VERTEX_STREAMS: usize = 8;

/// The largest push-constant block command lists track (bytes; devices
/// offer 128–256).
pub(crate) const MAX_PUSH_CONSTANT_BYTES: u32 = 512;

/// The bits of the 4-byte words `start..end` (bytes) of a push-constant block.
fn push_words(start: u32, end: u32) -> u128 {
    let (a, b) = (start / 4, end.div_ceil(4).min(128));
    let upto = |n: u32| if n >= 128 { u128::MAX } else { (1u128 << n) - 1 };
    upto(b) & !upto(a)
}

/// Whether every word of `p`'s push-constant block has been written.
fn push_complete(p: &BoundPipeline, written: u128) -> bool {
    match p.push {
        None => true,
        Some((_, size)) => {
            let all = push_words(0, size);
            written & all == all
        }
    }
}

fn state_err(msg: impl Into<String>) -> RhiError {
    RhiError::InvalidState(msg.into())
}

fn range_err(what: std::fmt::Arguments<'_>) -> RhiError {
    RhiError::InvalidDesc(format!("{what} is out of range"))
}

/// `offset + size <= len` without overflow.
fn fits(offset: u64, size: u64, len: u64) -> bool {
    offset.checked_add(size).is_some_and(|end| end <= len)
}

impl<'d> CommandList<'d> {
    /// A primary list (outside any pass) or a secondary that continues a
    /// pass of `inherited` (its [`RenderingLayout::key`]).
    pub(crate) fn new(device: &'d Device, raw: vk::CommandBuffer, inherited: Option<u64>, frame: u64) -> Self {
        let state = Recording {
            pass: inherited.map(|layout| OpenPass { layout, contents: RenderingContents::Inline }),
            ..Recording::default()
        };
        Self { device, raw, secondary: inherited.is_some(), frame, state, draws: 0, queries: None }
    }

    /// Gives the list its frame slot's timestamp queries.
    pub(crate) fn with_queries(mut self, queries: Option<&'d QuerySlot>) -> Self {
        self.queries = queries;
        self
    }

    /// Draw calls recorded so far.
    pub fn draw_count(&self) -> u32 {
        self.draws
    }

    pub fn is_secondary(&self) -> bool {
        self.secondary
    }

    /// Whether a render pass is open (always, in a secondary).
    pub fn in_pass(&self) -> bool {
        self.state.pass.is_some()
    }

    /// The raw command buffer, for code that records with `ash` directly
    /// (benchmarks comparing against the unchecked floor). Recording through
    /// it bypasses every check this type makes; the caller upholds Vulkan's
    /// rules for what it records.
    pub fn raw_handle(&self) -> vk::CommandBuffer {
        self.raw
    }

    /// Errors inside a pass whose contents come from secondaries: there the
    /// primary may only execute secondaries (and end the pass).
    fn inline_ok(&self, what: &str) -> Result<()> {
        match self.state.pass {
            Some(OpenPass { contents: RenderingContents::Secondary, .. }) => Err(state_err(format!(
                "{what} in a pass begun with RenderingContents::Secondary (record it in the secondaries)"
            ))),
            _ => Ok(()),
        }
    }

    /// Errors unless recording happens outside a render pass (copies,
    /// barriers, dispatches).
    fn outside_pass(&self, what: &str) -> Result<()> {
        if self.state.pass.is_some() {
            return Err(state_err(format!("{what} inside a render pass (end it first; secondaries are always inside one)")));
        }
        Ok(())
    }

    /// Writes a GPU timestamp labelled `label` when the GPU has finished
    /// every command recorded before it (`ALL_COMMANDS`); read it with
    /// [`crate::Device::frame_timestamps`] once the frame is submitted. In a
    /// frame's primary (outside a pass, or inside one begun
    /// [`RenderingContents::Inline`]) or in its secondaries; an immediate
    /// submission has no timestamps ([`RhiError::InvalidState`]), nor may
    /// a frame take more than its [`MAX_TIMESTAMPS_PER_FRAME`] queries
    /// (`frame begin` and `frame end` included; see [`Self::timestamps_left`]).
    /// On a device without timestamps nothing is recorded.
    pub fn write_timestamp(&mut self, label: &str) -> Result<()> {
        if self.frame == u64::MAX {
            return Err(state_err("timestamps belong to a frame: an immediate submission has none"));
        }
        self.inline_ok("a timestamp")?;
        match self.queries {
            Some(q) => self.stamp(q, label, 1),
            None => Ok(()),
        }
    }

    /// Timestamps the frame may still take ([`Self::write_timestamp`]);
    /// `None` where there are none (a device without timestamps, an
    /// immediate submission).
    pub fn timestamps_left(&self) -> Option<u32> {
        self.queries.map(QuerySlot::left)
    }

    /// Takes a query of the frame (leaving `reserve` for its end) and writes it.
    pub(crate) fn stamp(&mut self, q: &QuerySlot, label: &str, reserve: u32) -> Result<()> {
        let index = q.take(label, reserve).ok_or_else(|| {
            state_err(format!("timestamp {label:?}: the frame's {MAX_TIMESTAMPS_PER_FRAME} timestamp queries are used up"))
        })?;
        // SAFETY: `q` is the pool of this list's frame slot, reset at the
        // start of the frame's primary (query commands execute in
        // submission order); query `index` is taken once per frame (under
        // the slot's lock) and below the pool's size; the queue family has
        // timestamps (the pool exists only then); not inside a pass whose
        // contents are secondaries (checked); no multiview.
        unsafe { self.device.raw.cmd_write_timestamp2(self.raw, vk::PipelineStageFlags2::ALL_COMMANDS, q.raw, index) };
        Ok(())
    }

    /// Begins dynamic rendering; returns the layout secondaries must inherit.
    pub fn begin_rendering(&mut self, desc: &RenderingDesc, contents: RenderingContents) -> Result<RenderingLayout> {
        if self.secondary {
            return Err(state_err("secondaries continue a pass; they cannot begin one"));
        }
        if self.state.pass.is_some() {
            return Err(state_err("a render pass is already open"));
        }
        let area = desc.area;
        if area.width == 0 || area.height == 0 || area.x < 0 || area.y < 0 {
            return Err(RhiError::InvalidDesc(format!("rendering area {area:?} is empty or starts off the attachments")));
        }
        if desc.color.len() > MAX_COLOR_ATTACHMENTS {
            return Err(RhiError::InvalidDesc(format!("at most {MAX_COLOR_ATTACHMENTS} color attachments")));
        }
        let textures = read(&self.device.resources.textures);
        let covers = |t: &crate::texture::TextureEntry| {
            fits(area.x as u64, u64::from(area.width), u64::from(t.desc.width))
                && fits(area.y as u64, u64::from(area.height), u64::from(t.desc.height))
        };
        let mut layout = RenderingLayout::default();
        let mut colors = Vec::with_capacity(desc.color.len());
        for c in &desc.color {
            let t = textures.get(c.texture).ok_or_else(|| RhiError::InvalidHandle(format!("{:?}", c.texture)))?;
            if t.desc.format.is_depth() {
                return Err(RhiError::InvalidDesc(format!("{:?} is a depth texture used as color", t.desc.label)));
            }
            if !t.desc.usage.contains(TextureUsage::RENDER_TARGET) || !covers(t) {
                return Err(RhiError::InvalidDesc(format!(
                    "{:?} lacks RENDER_TARGET usage or is smaller than the area {area:?}",
                    t.desc.label
                )));
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
                if !t.desc.usage.contains(TextureUsage::RENDER_TARGET) || !covers(t) {
                    return Err(RhiError::InvalidDesc(format!(
                        "{:?} lacks RENDER_TARGET usage or is smaller than the area {area:?}",
                        t.desc.label
                    )));
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
        if colors.is_empty() && depth.is_none() {
            return Err(RhiError::InvalidDesc("a render pass needs a color or depth attachment".into()));
        }
        let mut info = vk::RenderingInfo::default()
            .render_area(vk::Rect2D {
                offset: vk::Offset2D { x: area.x, y: area.y },
                extent: vk::Extent2D { width: area.width, height: area.height },
            })
            .layer_count(1)
            .color_attachments(&colors);
        if let Some(d) = depth.as_ref() {
            info = info.depth_attachment(d);
        }
        if contents == RenderingContents::Secondary {
            info = info.flags(vk::RenderingFlags::CONTENTS_SECONDARY_COMMAND_BUFFERS);
        }
        // SAFETY: no pass is open on this primary; views are live (checked
        // under the read lock, still held), have attachment usage and cover
        // the area; they are in the attachment layouts the caller's barriers
        // put them in (the validation layer checks layouts in tests).
        unsafe { self.device.raw.cmd_begin_rendering(self.raw, &info) };
        self.state.pass = Some(OpenPass { layout: layout.key(), contents });
        self.state.draw_ready = None;
        Ok(layout)
    }

    /// Ends the render pass begun by [`Self::begin_rendering`].
    pub fn end_rendering(&mut self) -> Result<()> {
        if self.secondary || self.state.pass.is_none() {
            return Err(state_err("end_rendering without an open pass on this primary"));
        }
        // SAFETY: pairs with `begin_rendering` on this primary (pass open, checked).
        unsafe { self.device.raw.cmd_end_rendering(self.raw) };
        self.state.pass = None;
        self.state.draw_ready = None;
        Ok(())
    }

    /// Executes secondaries recorded for this frame, in the given order, in a
    /// pass begun with [`RenderingContents::Secondary`] whose layout they
    /// inherited. Each secondary runs once.
    pub fn execute_secondaries(&mut self, secondaries: &[SecondaryCommandBuffer]) -> Result<()> {
        if secondaries.is_empty() {
            return Ok(());
        }
        let pass = match self.state.pass {
            Some(p) if !self.secondary && p.contents == RenderingContents::Secondary => p,
            _ => return Err(state_err("secondaries run inside a pass begun with RenderingContents::Secondary on a primary")),
        };
        let id = self.device.id();
        for (i, s) in secondaries.iter().enumerate() {
            if s.device != id || s.frame != self.frame {
                return Err(RhiError::InvalidDesc(
                    "secondaries run only from the primary of the device and frame that recorded them".into(),
                ));
            }
            if s.layout != pass.layout {
                return Err(RhiError::InvalidDesc("a secondary was recorded for another rendering layout".into()));
            }
            if secondaries[..i].iter().any(|o| o.raw == s.raw) || self.state.executed.contains(&s.raw) {
                return Err(RhiError::InvalidDesc("a secondary is executed twice".into()));
            }
        }
        let raws: Vec<_> = secondaries.iter().map(|s| s.raw).collect();
        // SAFETY: the secondaries were recorded (and ended) for this device,
        // frame slot and pass layout, none twice; the pass allows secondaries.
        unsafe { self.device.raw.cmd_execute_commands(self.raw, &raws) };
        self.state.executed.extend_from_slice(&raws);
        self.draws = secondaries.iter().fold(self.draws, |n, s| n.saturating_add(s.draws));
        Ok(())
    }

    /// Viewport covering `rect` with depth 0..1 (Vulkan clip space, y down).
    pub fn set_viewport(&mut self, rect: Rect) -> Result<()> {
        self.inline_ok("set_viewport")?;
        self.check_rect(rect, "viewport")?;
        let vp = vk::Viewport {
            x: rect.x as f32,
            y: rect.y as f32,
            width: rect.width as f32,
            height: rect.height as f32,
            min_depth: 0.0,
            max_depth: 1.0,
        };
        // SAFETY: recording; viewport is dynamic state in every pipeline; the
        // rectangle is non-empty and within the device's viewport limits.
        unsafe { self.device.raw.cmd_set_viewport(self.raw, 0, &[vp]) };
        self.state.viewport = true;
        self.state.draw_ready = None;
        Ok(())
    }

    /// Scissor rectangle (non-negative offset).
    pub fn set_scissor(&mut self, rect: Rect) -> Result<()> {
        self.inline_ok("set_scissor")?;
        self.check_rect(rect, "scissor")?;
        if rect.x < 0 || rect.y < 0 {
            return Err(RhiError::InvalidDesc(format!("scissor {rect:?} has a negative offset")));
        }
        let r = vk::Rect2D {
            offset: vk::Offset2D { x: rect.x, y: rect.y },
            extent: vk::Extent2D { width: rect.width, height: rect.height },
        };
        // SAFETY: recording; scissor is dynamic state in every pipeline;
        // offset + extent does not overflow i32 (checked).
        unsafe { self.device.raw.cmd_set_scissor(self.raw, 0, &[r]) };
        self.state.scissor = true;
        self.state.draw_ready = None;
        Ok(())
    }

    fn check_rect(&self, rect: Rect, what: &str) -> Result<()> {
        let [max_w, max_h] = self.device.info().max_viewport_dimensions;
        let end_ok = |o: i32, n: u32| i64::from(o) + i64::from(n) <= i64::from(i32::MAX);
        if rect.width == 0 || rect.height == 0 || rect.width > max_w || rect.height > max_h
            || !end_ok(rect.x, rect.width) || !end_ok(rect.y, rect.height)
        {
            return Err(RhiError::InvalidDesc(format!(
                "{what} {rect:?} is empty, larger than {max_w}x{max_h} or ends past i32::MAX"
            )));
        }
        Ok(())
    }

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
            return Err(RhiError::InvalidDesc(format!(
                "bind group does not match group {index} of the bound pipeline's layout"
            )));
        }
        // SAFETY: the set was allocated for this device and frame with the set
        // layout at `index` of the bound pipeline's layout, and written with
        // live resources.
        unsafe {
            self.device.raw.cmd_bind_descriptor_sets(self.raw, b.bind_point, b.layout, index, &[group.raw], &[])
        };
        self.state.sets[i] = group.layout;
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
        if s.sets[..usize::from(p.sets.count)] != p.sets.raw[..usize::from(p.sets.count)] {
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
    pub fn draw_indexed(&mut self, index_count: u32, instance_count: u32, first_index: u32, vertex_offset: i32, first_instance: u32) -> Result<()> {
        let l = self.check_draw()?;
        let Some(indices) = self.state.index else { return Err(state_err("draw_indexed with no index buffer bound")) };
        if !fits(u64::from(first_index), u64::from(index_count), indices) {
            return Err(range_err(format_args!("indices {first_index}+{index_count} of {indices}")));
        }
        if !holds(l.instances, first_instance, instance_count) {
            return Err(self.stream_range_err(None, (first_instance, instance_count)));
        }
        // SAFETY: as `draw`, with the index range inside the bound index buffer.
        unsafe {
            self.device.raw.cmd_draw_indexed(self.raw, index_count, instance_count, first_index, vertex_offset, first_instance)
        };
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
        let span = u64::from(draw_count - 1)
            .checked_mul(u64::from(stride))
            .and_then(|s| s.checked_add(ARGS));
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
        let n = usize::from(p.sets.count);
        if self.state.sets[..n] != p.sets.raw[..n] {
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

    pub fn texture_barrier(&mut self, texture: TextureHandle, from: TextureState, to: TextureState) -> Result<()> {
        self.outside_pass("a texture barrier")?;
        if to == TextureState::Undefined {
            return Err(RhiError::InvalidDesc("a barrier cannot move a texture to Undefined".into()));
        }
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
        // SAFETY: live image, outside a render pass; synchronization2 is
        // enabled on the device.
        unsafe { self.device.raw.cmd_pipeline_barrier2(self.raw, &dep) };
        Ok(())
    }

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
        Ok(())
    }

    /// The raw source and destination of a buffer-to-buffer copy, with both
    /// usages checked.
    fn copy_pair(&self, src: BufferHandle, dst: BufferHandle) -> Result<(vk::Buffer, BufferDesc, vk::Buffer, BufferDesc)> {
        self.outside_pass("a copy")?;
        let (rs, s) = self.device.raw_buffer_desc(src)?;
        let (rd, d) = self.device.raw_buffer_desc(dst)?;
        if !s.usage.contains(BufferUsage::TRANSFER_SRC) || !d.usage.contains(BufferUsage::TRANSFER_DST) {
            return Err(RhiError::InvalidDesc("copy needs TRANSFER_SRC and TRANSFER_DST usage".into()));
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
            let overlaps = src == dst && src_offset < dst_offset.saturating_add(size) && dst_offset < src_offset.saturating_add(size);
            if size == 0 || !fits(src_offset, size, s.size) || !fits(dst_offset, size, d.size) || overlaps {
                return Err(RhiError::InvalidDesc(format!(
                    "copy region {src_offset}->{dst_offset} of {size} bytes is empty, out of range or overlapping ({:?} -> {:?})",
                    s.label, d.label
                )));
            }
            vk_regions.push(vk::BufferCopy { src_offset, dst_offset, size });
        }
        // SAFETY: live buffers outside a pass, every region in range and
        // non-overlapping, both usages checked.
        unsafe { self.device.raw.cmd_copy_buffer(self.raw, rs, rd, &vk_regions) };
        Ok(())
    }

    /// Fills `size` bytes at `offset` with the 32-bit `value` (size a multiple of 4).
    pub fn fill_buffer(&mut self, buffer: BufferHandle, offset: u64, size: u64, value: u32) -> Result<()> {
        self.outside_pass("a fill")?;
        let (raw, d) = self.device.raw_buffer_desc(buffer)?;
        if size == 0 || !fits(offset, size, d.size) || !size.is_multiple_of(4) || !offset.is_multiple_of(4) || !d.usage.contains(BufferUsage::TRANSFER_DST) {
            return Err(RhiError::InvalidDesc(format!(
                "fill of {size} bytes at {offset} in {:?} ({} bytes) is empty, out of range, unaligned or lacks TRANSFER_DST",
                d.label, d.size
            )));
        }
        // SAFETY: live buffer with TRANSFER_DST outside a pass; range and alignment checked.
        unsafe { self.device.raw.cmd_fill_buffer(self.raw, raw, offset, size, value) };
        Ok(())
    }

    /// The handles and the whole-texture region of a texture <-> buffer copy,
    /// with the buffer range, alignment and usages checked (tightly packed
    /// texels at `offset`).
    fn texture_copy(&self, texture: TextureHandle, buffer: BufferHandle, offset: u64, to_buffer: bool) -> Result<(vk::Image, vk::Buffer, vk::BufferImageCopy)> {
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
        if !t.usage.contains(t_usage) || !b.usage.contains(b_usage) {
            return Err(RhiError::InvalidDesc(format!("copy between {:?} and {:?} lacks a transfer usage", t.label, b.label)));
        }
        let texel = u64::from(t.format.bytes_per_pixel());
        let size = u64::from(t.width) * u64::from(t.height) * texel;
        if !fits(offset, size, b.size) || !offset.is_multiple_of(4) || !offset.is_multiple_of(texel) {
            return Err(RhiError::InvalidDesc(format!(
                "buffer {:?} too small for texture {:?} at offset {offset}, or the offset is unaligned",
                b.label, t.label
            )));
        }
        let region = vk::BufferImageCopy {
            buffer_offset: offset,
            image_subresource: vk::ImageSubresourceLayers { aspect_mask: conv::aspect(t.format), mip_level: 0, base_array_layer: 0, layer_count: 1 },
            image_extent: vk::Extent3D { width: t.width, height: t.height, depth: 1 },
            ..Default::default()
        };
        Ok((raw_image, raw_buffer, region))
    }

    /// Copies a whole texture (in `TransferSrc`) into `buffer` at `offset`, tightly packed.
    pub fn copy_texture_to_buffer(&mut self, texture: TextureHandle, buffer: BufferHandle, offset: u64) -> Result<()> {
        let (image, raw_buffer, region) = self.texture_copy(texture, buffer, offset, true)?;
        // SAFETY: live image in TRANSFER_SRC_OPTIMAL (caller's barrier) and a
        // buffer large enough (checked), outside a pass.
        unsafe { self.device.raw.cmd_copy_image_to_buffer(self.raw, image, vk::ImageLayout::TRANSFER_SRC_OPTIMAL, raw_buffer, &[region]) };
        Ok(())
    }

    /// Copies tightly packed texels from `buffer` at `offset` into a whole
    /// texture in `TransferDst`.
    pub fn copy_buffer_to_texture(&mut self, buffer: BufferHandle, offset: u64, texture: TextureHandle) -> Result<()> {
        let (image, raw_buffer, region) = self.texture_copy(texture, buffer, offset, false)?;
        // SAFETY: live image in TRANSFER_DST_OPTIMAL; buffer range checked; outside a pass.
        unsafe { self.device.raw.cmd_copy_buffer_to_image(self.raw, raw_buffer, image, vk::ImageLayout::TRANSFER_DST_OPTIMAL, &[region]) };
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stream_limits_are_exact_at_the_boundaries() {
        // Element k of a stride-24 stream reading 24 bytes ends at 24k + 24.
        let st = VertexStream { stride: 24, per_instance: true, span: 24 };
        assert_eq!(stream_elements(&st, 96), 4);
        assert_eq!(stream_elements(&st, 95), 3);
        assert_eq!(stream_elements(&st, 23), 0, "less than one element");
        // A span shorter than the stride: the last element need not be whole.
        let st = VertexStream { stride: 16, per_instance: false, span: 8 };
        assert_eq!(stream_elements(&st, 40), 3, "elements 0, 1, 2 end at 8, 24, 40");
        let zero = VertexStream { stride: 0, per_instance: false, span: 8 };
        assert_eq!(stream_elements(&zero, 8), u64::MAX, "every element reads the same 8 bytes");
        assert_eq!(stream_elements(&zero, 7), 0);
        // Element 2^33 - 2 of the widest stride: no overflow.
        let wide = VertexStream { stride: u32::MAX, per_instance: true, span: 4 };
        assert!(!holds(stream_elements(&wide, u64::MAX), u32::MAX, u32::MAX));
        assert!(holds(4, 0, 4) && !holds(4, 1, 4) && !holds(4, 4, 1));
        assert!(holds(0, u32::MAX, 0), "an empty range always fits");
        assert!(!holds(u64::from(u32::MAX), u32::MAX, u32::MAX), "first + count past u32 does not wrap");
    }

    #[test]
    fn push_words_cover_the_written_bytes() {
        assert_eq!(push_words(0, 16), 0b1111);
        assert_eq!(push_words(8, 16), 0b1100);
        assert_eq!(push_words(4, 6), 0b0010, "a partial word counts as written");
        assert_eq!(push_words(0, MAX_PUSH_CONSTANT_BYTES), u128::MAX);
        assert_eq!(push_words(16, 16), 0);
    }

    #[test]
    fn rendering_keys_tell_layouts_apart() {
        let key = |c: &[Format], d| RenderingLayout { color_formats: c.to_vec(), depth_format: d }.key();
        let rgba = Format::Rgba8Unorm;
        let depth = Some(Format::Depth32Float);
        let keys = [key(&[], depth), key(&[rgba], None), key(&[rgba], depth), key(&[rgba, rgba], None), key(&[Format::Bgra8Unorm], None)];
        for (i, a) in keys.iter().enumerate() {
            for b in &keys[i + 1..] {
                assert_ne!(a, b);
            }
        }
    }
}
