//! Command recording: one type for primary and secondary command buffers.
//!
//! A `CommandList` is only ever in the recording state; it is finished by the
//! [`crate::Frame`] (primary) or by [`crate::Frame::record_secondary`], which
//! hands back a [`crate::SecondaryCommandBuffer`]. Handle lookups take a read
//! lock once per call; the per-draw calls (`draw*`, `push_constants`) take none.
//!
//! Every command checks the list's recording state first (`state.rs`);
//! passes, dynamic state and timestamps are here, pipelines, bindings, draws
//! and dispatches in `draw.rs`, barriers and copies in `transfer.rs`.

use crate::buffer_uses::BufferUses;
use crate::device::{read, Device};
use crate::error::{range_of, PassState, Result, RhiError};
use crate::frame::{RenderingLayout, SecondaryCommandBuffer, MAX_COLOR_ATTACHMENTS};
use crate::timestamp::{QuerySlot, MAX_TIMESTAMPS_PER_FRAME};
use crate::types::*;
use crate::TextureHandle;
use ash::vk;
use state::*;

mod draw;
mod state;
mod transfer;

pub(crate) use state::{SetLayouts, VertexStream, VertexStreams, MAX_PUSH_CONSTANT_BYTES};

/// What happens to an attachment when the pass begins.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum LoadOp<T> {
    /// Clear to this value (RGBA for color, depth for depth).
    Clear(T),
    /// Keep what the attachment holds.
    Load,
    /// The contents are undefined; for passes that overwrite every pixel.
    DontCare,
}

/// A color attachment of a [`RenderingDesc`]: a texture in
/// [`TextureState::ColorAttachment`] with [`TextureUsage::RENDER_TARGET`],
/// at least as large as the pass's area.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ColorAttachment {
    /// The texture drawn into (not a depth format).
    pub texture: TextureHandle,
    /// What the pass starts with; a clear colour is linear RGBA.
    pub load: LoadOp<[f32; 4]>,
    /// Whether the results are written back (`false`: discarded after the pass).
    pub store: bool,
    /// A multisampled attachment's resolve target: a one-sample texture of
    /// the same format, in [`TextureState::ColorAttachment`], that gets the
    /// average of each pixel's samples at the end of the pass (MSAA).
    pub resolve: Option<TextureHandle>,
}

/// The depth attachment of a [`RenderingDesc`]: a depth-format texture in
/// [`TextureState::DepthAttachment`] with [`TextureUsage::RENDER_TARGET`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DepthAttachment {
    /// The depth texture.
    pub texture: TextureHandle,
    /// What the pass starts with; a clear value is a depth in 0..=1.
    pub load: LoadOp<f32>,
    /// Whether the depth is kept after the pass (a later pass or a sampler
    /// reads it) or discarded.
    pub store: bool,
    /// A multisampled depth's resolve target: a one-sample depth texture,
    /// in [`TextureState::DepthAttachment`], that gets each pixel's first
    /// sample at the end of the pass.
    pub resolve: Option<TextureHandle>,
}

/// A dynamic-rendering pass: attachments (in the attachment states) and area.
#[derive(Clone, Debug, PartialEq)]
pub struct RenderingDesc {
    /// Color attachments, in the order of the pipeline's color targets (at
    /// most [`crate::MAX_COLOR_ATTACHMENTS`]).
    pub color: Vec<ColorAttachment>,
    /// The depth attachment, if the pass has one.
    pub depth: Option<DepthAttachment>,
    /// The pixels rendered: not empty, starting at x, y >= 0 and inside every
    /// attachment.
    pub area: Rect,
}

/// Whether the pass's draws are recorded inline or come from secondaries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RenderingContents {
    /// Draws are recorded in this command list.
    Inline,
    /// Draws come from secondaries ([`crate::Frame::record_secondary`])
    /// executed into the pass; this list may record nothing else inside it.
    Secondary,
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
    /// The buffers recorded commands read and write, stamped at submission.
    pub(crate) uses: BufferUses,
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

impl<'d> CommandList<'d> {
    /// A primary list (outside any pass) or a secondary that continues a
    /// pass of `inherited` (its [`RenderingLayout::key`]).
    pub(crate) fn new(device: &'d Device, raw: vk::CommandBuffer, inherited: Option<u64>, frame: u64) -> Self {
        let state =
            Recording { pass: inherited.map(|layout| OpenPass { layout, contents: RenderingContents::Inline }), ..Recording::default() };
        Self { device, raw, secondary: inherited.is_some(), frame, state, draws: 0, queries: None, uses: BufferUses::default() }
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

    /// Whether this is a secondary command buffer (which continues a pass
    /// begun in the frame's primary and cannot begin or end one).
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

    /// Where this list is as far as passes go.
    pub(crate) fn pass_state(&self) -> PassState {
        match self.state.pass {
            _ if self.secondary => PassState::Secondary,
            None => PassState::Outside,
            Some(OpenPass { contents: RenderingContents::Inline, .. }) => PassState::Inline,
            Some(OpenPass { contents: RenderingContents::Secondary, .. }) => PassState::Secondaries,
        }
    }

    /// The error for `command`, which belongs `needed`, recorded where this list is.
    #[cold]
    fn wrong_pass(&self, command: &'static str, needed: PassState) -> RhiError {
        RhiError::WrongPass { command, found: self.pass_state(), needed }
    }

    /// Errors inside a pass whose contents come from secondaries: there the
    /// primary may only execute secondaries (and end the pass).
    fn inline_ok(&self, command: &'static str) -> Result<()> {
        match self.state.pass {
            Some(OpenPass { contents: RenderingContents::Secondary, .. }) => Err(self.wrong_pass(command, PassState::Secondary)),
            _ => Ok(()),
        }
    }

    /// Errors unless recording happens outside a render pass (copies,
    /// barriers, dispatches; secondaries are always inside one).
    fn outside_pass(&self, command: &'static str) -> Result<()> {
        if self.state.pass.is_some() {
            return Err(self.wrong_pass(command, PassState::Outside));
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
    /// (`frame begin` and `frame end` included; see [`Self::timestamps_left`];
    /// [`RhiError::OutOfLimits`]).
    /// On a device without timestamps nothing is recorded.
    pub fn write_timestamp(&mut self, label: &str) -> Result<()> {
        if self.frame == u64::MAX {
            return Err(RhiError::InvalidState("timestamps belong to a frame: an immediate submission has none".into()));
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
        let index = q.take(label, reserve).ok_or_else(|| RhiError::OutOfLimits {
            what: "timestamp queries",
            resource: format!("the frame (at timestamp {label:?})"),
            value: u64::from(q.taken() + 1 + reserve),
            min: 0,
            max: u64::from(MAX_TIMESTAMPS_PER_FRAME),
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

    /// Copies the `q`'s results taken so far into its results buffer and
    /// makes them visible to host reads (the end of a frame's primary, no
    /// pass open).
    pub(crate) fn copy_timestamps(&mut self, q: &QuerySlot) {
        let n = q.taken();
        // SAFETY: a primary outside any pass (`Frame::submit` checks); the
        // queries 0..n were reset at the start of this primary and n is at
        // most the pool's size; the results buffer holds RESULT_STRIDE bytes
        // per query of the pool, is TRANSFER_DST and bound; no WAIT flag: a
        // query a never-executed secondary took is copied as unavailable.
        unsafe {
            // Everything before (the timestamps' writes) completes before
            // the copy reads their availability.
            let before = [vk::MemoryBarrier2::default()
                .src_stage_mask(vk::PipelineStageFlags2::ALL_COMMANDS)
                .dst_stage_mask(vk::PipelineStageFlags2::COPY)];
            self.device.raw.cmd_pipeline_barrier2(self.raw, &vk::DependencyInfo::default().memory_barriers(&before));
            self.device.raw.cmd_copy_query_pool_results(
                self.raw,
                q.raw,
                0,
                n,
                q.results,
                0,
                crate::timestamp::RESULT_STRIDE,
                vk::QueryResultFlags::TYPE_64 | vk::QueryResultFlags::WITH_AVAILABILITY,
            );
            let barrier = vk::MemoryBarrier2::default()
                .src_stage_mask(vk::PipelineStageFlags2::COPY)
                .src_access_mask(vk::AccessFlags2::TRANSFER_WRITE)
                .dst_stage_mask(vk::PipelineStageFlags2::HOST)
                .dst_access_mask(vk::AccessFlags2::HOST_READ);
            let barriers = [barrier];
            self.device.raw.cmd_pipeline_barrier2(self.raw, &vk::DependencyInfo::default().memory_barriers(&barriers));
        }
    }

    /// Begins dynamic rendering; returns the layout secondaries must inherit.
    pub fn begin_rendering(&mut self, desc: &RenderingDesc, contents: RenderingContents) -> Result<RenderingLayout> {
        if self.secondary || self.state.pass.is_some() {
            return Err(self.wrong_pass("begin_rendering", PassState::Outside));
        }
        let area = desc.area;
        if area.x < 0 || area.y < 0 {
            return Err(RhiError::InvalidDesc(format!("rendering area {area:?} starts off the attachments (a negative offset)")));
        }
        for (what, value) in [("width", area.width), ("height", area.height)] {
            if value == 0 {
                let (resource, value, max) = ("the rendering area".into(), u64::from(value), u64::from(u32::MAX));
                return Err(RhiError::OutOfLimits { what, resource, value, min: 1, max });
            }
        }
        if desc.color.len() > MAX_COLOR_ATTACHMENTS {
            let (resource, value, max) = ("the render pass".into(), desc.color.len() as u64, MAX_COLOR_ATTACHMENTS as u64);
            return Err(RhiError::OutOfLimits { what: "color attachments", resource, value, min: 0, max });
        }
        let textures = read(&self.device.resources.textures);
        let mut layout = RenderingLayout::default();
        let mut colors = Vec::with_capacity(desc.color.len());
        let mut samples = Vec::with_capacity(desc.color.len() + 1);
        for (i, c) in desc.color.iter().enumerate() {
            let (info, format, n) = color_attachment(&textures, c, i, area)?;
            samples.push(n);
            layout.color_formats.push(format);
            colors.push(info);
        }
        let depth = match &desc.depth {
            Some(d) => {
                let (info, format, n) = depth_attachment(&textures, d, area)?;
                samples.push(n);
                layout.depth_format = Some(format);
                Some(info)
            }
            None => None,
        };
        if colors.is_empty() && depth.is_none() {
            let (resource, max) = ("the render pass".into(), MAX_COLOR_ATTACHMENTS as u64 + 1);
            return Err(RhiError::OutOfLimits { what: "attachments (color and depth)", resource, value: 0, min: 1, max });
        }
        if samples.windows(2).any(|w| w[0] != w[1]) {
            return Err(RhiError::InvalidDesc(format!("a pass's attachments have different samples per pixel: {samples:?}")));
        }
        layout.samples = samples[0];
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
            return Err(self.wrong_pass("end_rendering", PassState::Inline));
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
            _ => return Err(self.wrong_pass("execute_secondaries", PassState::Secondaries)),
        };
        let id = self.device.id();
        for (i, s) in secondaries.iter().enumerate() {
            if s.device != id {
                return Err(RhiError::OtherDevice { what: "a secondary" });
            }
            if s.frame != self.frame {
                return Err(RhiError::OtherFrame { what: "a secondary", made_in: s.frame, used_in: self.frame() });
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
        let r =
            vk::Rect2D { offset: vk::Offset2D { x: rect.x, y: rect.y }, extent: vk::Extent2D { width: rect.width, height: rect.height } };
        // SAFETY: recording; scissor is dynamic state in every pipeline;
        // offset + extent does not overflow i32 (checked).
        unsafe { self.device.raw.cmd_set_scissor(self.raw, 0, &[r]) };
        self.state.scissor = true;
        self.state.draw_ready = None;
        Ok(())
    }

    /// Checks a viewport or scissor: not empty, within the device's
    /// viewport dimensions, ending at or before `i32::MAX`.
    fn check_rect(&self, rect: Rect, what: &'static str) -> Result<()> {
        let [max_w, max_h] = self.device.info().max_viewport_dimensions;
        let axes = [("width", "columns", rect.x, rect.width, max_w), ("height", "rows", rect.y, rect.height, max_h)];
        for (extent, lines, offset, size, max) in axes {
            if size == 0 || size > max {
                let (value, max) = (u64::from(size), u64::from(max));
                return Err(RhiError::OutOfLimits { what: extent, resource: format!("the {what}"), value, min: 1, max });
            }
            // Past i32::MAX only from a positive offset (the size is at most the limit).
            if i64::from(offset) + i64::from(size) > i64::from(i32::MAX) {
                let (range, limit) = (range_of(offset as u64, u64::from(size)), i32::MAX as u64 + 1);
                return Err(RhiError::OutOfRange { what: lines, resource: format!("the i32 coordinates of the {what}"), range, limit });
            }
        }
        Ok(())
    }

    /// The frame this list records for (`None`: an immediate submission).
    fn frame(&self) -> Option<u64> {
        (self.frame != u64::MAX).then_some(self.frame)
    }
}

/// One attachment of a pass as `begin_rendering` hands it over: colour or
/// depth (`depth`), named `role` in errors.
struct AttachmentUse<'a> {
    texture: TextureHandle,
    role: &'a str,
    depth: bool,
    load: vk::AttachmentLoadOp,
    clear: vk::ClearValue,
    store: bool,
    resolve: Option<TextureHandle>,
}

/// Color attachment `i` of a pass over `area` ([`attachment`]).
fn color_attachment(
    textures: &crate::handle::Slots<TextureHandle, crate::texture::TextureEntry>,
    c: &ColorAttachment,
    i: usize,
    area: Rect,
) -> Result<(vk::RenderingAttachmentInfo<'static>, Format, u32)> {
    let clear = match c.load {
        LoadOp::Clear(v) => vk::ClearValue { color: vk::ClearColorValue { float32: v } },
        _ => vk::ClearValue::default(),
    };
    let role = format!("color attachment {i}");
    let a =
        AttachmentUse { texture: c.texture, role: &role, depth: false, load: load_op(&c.load), clear, store: c.store, resolve: c.resolve };
    attachment(textures, &a, area)
}

/// The depth attachment of a pass over `area` ([`attachment`]).
fn depth_attachment(
    textures: &crate::handle::Slots<TextureHandle, crate::texture::TextureEntry>,
    d: &DepthAttachment,
    area: Rect,
) -> Result<(vk::RenderingAttachmentInfo<'static>, Format, u32)> {
    let clear = match d.load {
        LoadOp::Clear(v) => vk::ClearValue { depth_stencil: vk::ClearDepthStencilValue { depth: v, stencil: 0 } },
        _ => vk::ClearValue::default(),
    };
    let a = AttachmentUse {
        texture: d.texture,
        role: "the depth attachment",
        depth: true,
        load: load_op(&d.load),
        clear,
        store: d.store,
        resolve: d.resolve,
    };
    attachment(textures, &a, area)
}

/// An attachment's rendering info, format and samples: a format of its
/// kind, checked as an attachment over `area`, with its resolve target
/// (checked; colour averages the samples, depth takes the first).
fn attachment(
    textures: &crate::handle::Slots<TextureHandle, crate::texture::TextureEntry>,
    a: &AttachmentUse<'_>,
    area: Rect,
) -> Result<(vk::RenderingAttachmentInfo<'static>, Format, u32)> {
    let t = textures.get(a.texture).ok_or_else(|| RhiError::InvalidHandle(format!("{:?}", a.texture)))?;
    if t.desc.format.is_depth() != a.depth {
        let resource = format!("texture {:?} ({})", t.desc.label, a.role);
        let expected = if a.depth { "a depth format" } else { "a color format" };
        return Err(RhiError::WrongFormat { resource, format: t.desc.format, expected });
    }
    check_attachment(t, area, if a.depth { "the depth attachment" } else { "a color attachment" })?;
    let (layout, resolve_mode) = match a.depth {
        true => (vk::ImageLayout::DEPTH_ATTACHMENT_OPTIMAL, vk::ResolveModeFlags::SAMPLE_ZERO),
        false => (vk::ImageLayout::COLOR_ATTACHMENT_OPTIMAL, vk::ResolveModeFlags::AVERAGE),
    };
    let mut info = vk::RenderingAttachmentInfo::default()
        .image_view(t.view)
        .image_layout(layout)
        .load_op(a.load)
        .store_op(store_op(a.store))
        .clear_value(a.clear);
    if let Some(r) = a.resolve {
        let view = resolve_target(textures, t, r, area)?;
        info = info.resolve_mode(resolve_mode).resolve_image_view(view).resolve_image_layout(layout);
    }
    Ok((info, t.desc.format, t.desc.samples))
}

/// The view of `resolve`, the resolve target of the multisampled
/// attachment `t`: one sample, the same format, an attachment covering `area`.
fn resolve_target(
    textures: &crate::handle::Slots<TextureHandle, crate::texture::TextureEntry>,
    t: &crate::texture::TextureEntry,
    resolve: TextureHandle,
    area: Rect,
) -> Result<vk::ImageView> {
    let r = textures.get(resolve).ok_or_else(|| RhiError::InvalidHandle(format!("{resolve:?}")))?;
    if t.desc.samples == 1 || r.desc.samples != 1 || r.desc.format != t.desc.format {
        return Err(RhiError::InvalidDesc(format!(
            "texture {:?} ({:?}, {} samples) cannot resolve into {:?} ({:?}, {} samples): a multisampled attachment resolves into one sample of its format",
            t.desc.label, t.desc.format, t.desc.samples, r.desc.label, r.desc.format, r.desc.samples
        )));
    }
    check_attachment(r, area, "a resolve target")?;
    Ok(r.view)
}

/// Checks an attachment of a pass: `RENDER_TARGET` usage, and `area` (not
/// negative) inside the texture.
fn check_attachment(t: &crate::texture::TextureEntry, area: Rect, needed_for: &'static str) -> Result<()> {
    if !t.desc.usage.contains(TextureUsage::RENDER_TARGET) {
        let usage = crate::Usage::Texture(TextureUsage::RENDER_TARGET);
        return Err(RhiError::MissingUsage { label: t.desc.label.clone(), usage, needed_for });
    }
    let axes = [("rendering area columns", area.x, area.width, t.desc.width), ("rendering area rows", area.y, area.height, t.desc.height)];
    for (what, offset, size, limit) in axes {
        if !fits(offset as u64, u64::from(size), u64::from(limit)) {
            let (resource, range) = (format!("texture {:?}", t.desc.label), range_of(offset as u64, u64::from(size)));
            return Err(RhiError::OutOfRange { what, resource, range, limit: u64::from(limit) });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rendering_keys_tell_layouts_apart() {
        let key = |c: &[Format], d| RenderingLayout::new(c.to_vec(), d).key();
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
