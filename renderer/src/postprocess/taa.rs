//! Temporal anti-aliasing (UE's TAA, `r.AntiAliasingMethod=2`): every
//! frame renders with a different sub-pixel jitter (8 Halton (2, 3)
//! offsets, `crate::view_state::TAA_JITTER_SAMPLES`), the depth prepass
//! writes each pixel's motion since the previous frame (the velocity
//! target: the GPU scene's previous transforms, particles' previous
//! positions, the previous camera), and this pass blends the frame into
//! the view's history reprojected along that motion (`taa.wgsl`:
//! Catmull-Rom history, neighbourhood clamping for disocclusion, Karis's
//! luminance weights). Over a few frames each pixel averages many
//! sub-pixel positions: edges are anti-aliased, and a still scene
//! converges (with the jitter cycling every 8 frames, the image repeats
//! every 8 frames).
//!
//! It runs on the HDR scene color before bloom and tone mapping (as UE's
//! does), into [`TAA_OUTPUT`], which the rest of the post chain reads in
//! place of scene color. The history is per view: two targets of the
//! view's state (`crate::view_state::TAA_HISTORY`, its own frame-resource
//! table), the last frame's read and the other written, so a view keyed by
//! a stable [`crate::ViewStateId`] keeps its history across frames and
//! families; a view without a state, or in wireframe, gets no TAA (its
//! pixels are copied as drawn). The history starts again — the current
//! frame alone — on the first frame, a camera cut
//! ([`crate::SceneView::camera_cut`]), a new family size, or when TAA did
//! not run on the view the frame before.
//!
//! Deterministic: the jitter is the view's frame count since its reset,
//! and the history is GPU-only memory written in submission order, so the
//! image does not depend on threads or frames in flight.

use super::{draw_triangles, fullscreen_pipeline};
use crate::error::Result;
use crate::mesh_pass::SCENE_COLOR_FORMAT;
use crate::render_targets::{Access, Lifetime, RenderTargets, TargetDesc, SCENE_COLOR, SCENE_DEPTH, VELOCITY};
use crate::view::SceneView;
use crate::view_state::{TemporalView, ViewStates, TAA_HISTORY};
use bytemuck::{Pod, Zeroable};
use glam::Mat4;
use rhi_vulkan::*;

/// TAA's output: the anti-aliased HDR colour the post chain reads.
pub const TAA_OUTPUT: TargetDesc = TargetDesc { name: "taa output", format: SCENE_COLOR_FORMAT, lifetime: Lifetime::Frame, samples: 1 };

/// GPU timestamp labels around the pass.
pub(crate) const TIMESTAMP_LABELS: [&str; 2] = ["taa begin", "taa end"];

const TAA_WGSL: &str = include_str!("../../shaders/taa.wgsl");

/// Copies scene color as drawn (the views TAA does not run on).
const COPY_WGSL: &str = "
@group(0) @binding(0) var input: texture_2d<f32>;
@vertex
fn vs_main(@builtin(vertex_index) i: u32) -> @builtin(position) vec4<f32> {
    let uv = vec2<f32>(f32((i << 1u) & 2u), f32(i & 2u));
    return vec4<f32>(uv * 2.0 - 1.0, 0.0, 1.0);
}
@fragment
fn fs_main(@builtin(position) p: vec4<f32>) -> @location(0) vec4<f32> {
    return textureLoad(input, vec2<i32>(p.xy), 0);
}
";

/// `TaaPush` of `taa.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Pod, Zeroable)]
struct TaaPush {
    clip_to_prev_clip: [[f32; 4]; 4],
    viewport: [f32; 4],
    current_weight: f32,
    reset: f32,
    _pad: [f32; 2],
}

/// TAA's pipelines and sampler, made on first use.
pub(crate) struct TaaPipelines {
    resolve: PipelineHandle,
    copy: PipelineHandle,
    sampler: SamplerHandle,
}

impl TaaPipelines {
    pub fn new(device: &Device) -> Result<Self> {
        let resolve = fullscreen_pipeline(device, "taa", TAA_WGSL, &[SCENE_COLOR_FORMAT, SCENE_COLOR_FORMAT])?;
        let copy = match fullscreen_pipeline(device, "taa copy", COPY_WGSL, &[SCENE_COLOR_FORMAT]) {
            Ok(p) => p,
            Err(e) => {
                device.destroy_pipeline(resolve);
                return Err(e);
            }
        };
        match device.create_sampler(&SamplerDesc::linear_clamp()) {
            Ok(sampler) => Ok(Self { resolve, copy, sampler }),
            Err(e) => {
                device.destroy_pipeline(resolve);
                device.destroy_pipeline(copy);
                Err(e.into())
            }
        }
    }

    pub fn release(self, device: &Device) {
        device.destroy_pipeline(self.resolve);
        device.destroy_pipeline(self.copy);
        device.destroy_sampler(self.sampler);
    }
}

/// What one frame's TAA reads.
pub(crate) struct TaaFrame<'a> {
    /// The family's views (the first of `InitViews::views`).
    pub views: &'a [SceneView],
    /// Per view, its jitter and past where TAA runs on it (`ViewStates::begin_taa`).
    pub temporal: &'a [Option<TemporalView>],
    /// The family's size.
    pub size: (u32, u32),
    /// `r.TemporalAACurrentFrameWeight`.
    pub current_weight: f32,
}

/// Records TAA into `frame`: [`TAA_OUTPUT`] from scene color, velocity and
/// depth and each view's history (module docs).
pub(crate) fn record(
    frame: &mut Frame<'_>,
    targets: &mut RenderTargets,
    states: &mut ViewStates,
    pipelines: &TaaPipelines,
    at: &TaaFrame<'_>,
) -> Result<()> {
    let device = frame.device();
    let (width, height) = at.size;
    targets.ensure(device, &TAA_OUTPUT, width, height)?;
    let full = Rect::from_size(width, height);
    let resolved: Vec<(&SceneView, TemporalView)> = at.views.iter().zip(at.temporal).filter_map(|(v, t)| t.map(|t| (v, t))).collect();
    let stamps = frame.timestamps_left().is_some_and(|left| left >= 2);
    if stamps {
        frame.cmd().write_timestamp(TIMESTAMP_LABELS[0])?;
    }
    // What no TAA view covers keeps scene color as drawn.
    let covered = resolved.iter().any(|(v, _)| v.viewport == full);
    if !covered {
        let source = targets.texture(SCENE_COLOR.name).expect("drawn by the record stage");
        let group = frame.create_bind_group(pipelines.copy, 0, &[(0, BindingResource::Texture(source))])?;
        let cmd = frame.cmd();
        targets.prepare(cmd, &[(SCENE_COLOR.name, Access::Sample), (TAA_OUTPUT.name, Access::ColorWrite)])?;
        let output = targets.texture(TAA_OUTPUT.name).expect("ensured above");
        let color = vec![ColorAttachment { texture: output, load: LoadOp::DontCare, store: true, resolve: None }];
        draw_triangles(cmd, (color, full), (pipelines.copy, &group), &[(full, &[])])?;
    }
    for (view, temporal) in resolved {
        resolve_view(frame, targets, states, pipelines, (view, temporal), (at, !covered))?;
    }
    if stamps {
        frame.cmd().write_timestamp(TIMESTAMP_LABELS[1])?;
    }
    Ok(())
}

/// One view's TAA over its rectangle: into the output and its next history.
fn resolve_view(
    frame: &mut Frame<'_>,
    targets: &mut RenderTargets,
    states: &mut ViewStates,
    pipelines: &TaaPipelines,
    (view, temporal): (&SceneView, TemporalView),
    (at, load_output): (&TaaFrame<'_>, bool),
) -> Result<()> {
    let device = frame.device();
    let (width, height) = at.size;
    let Some(state) = temporal.state.and_then(|id| states.get_mut(id)) else { return Ok(()) };
    let read = state.temporal.current;
    let write = 1 - read;
    state.targets.ensure(device, &TAA_HISTORY[write], width, height)?;
    let reset = temporal.reset;
    let texture = |t: &RenderTargets, name| t.texture(name).expect("made by an earlier stage or frame");
    // After a reset nothing of the history is read; scene color stands in.
    let history = if reset { texture(targets, SCENE_COLOR.name) } else { texture(&state.targets, TAA_HISTORY[read].name) };
    let entries = [
        (0, BindingResource::Texture(texture(targets, SCENE_COLOR.name))),
        (1, BindingResource::Sampler(pipelines.sampler)),
        (2, BindingResource::Texture(texture(targets, VELOCITY.name))),
        (3, BindingResource::Texture(texture(targets, SCENE_DEPTH.name))),
        (4, BindingResource::Texture(history)),
    ];
    let group = frame.create_bind_group(pipelines.resolve, 0, &entries)?;
    let cmd = frame.cmd();
    let reads = [(SCENE_COLOR.name, Access::Sample), (VELOCITY.name, Access::Sample), (SCENE_DEPTH.name, Access::Sample)];
    targets.prepare(cmd, &reads)?;
    targets.prepare(cmd, &[(TAA_OUTPUT.name, Access::ColorWrite)])?;
    if !reset {
        state.targets.prepare(cmd, &[(TAA_HISTORY[read].name, Access::Sample)])?;
    }
    state.targets.prepare(cmd, &[(TAA_HISTORY[write].name, Access::ColorWrite)])?;
    let now = view.view_proj();
    // A still camera reprojects exactly (an inverse is not exact in floats).
    let clip_to_prev_clip = if temporal.prev_view_proj == now { Mat4::IDENTITY } else { temporal.prev_view_proj * now.inverse() };
    let r = view.viewport;
    let push = TaaPush {
        clip_to_prev_clip: clip_to_prev_clip.to_cols_array_2d(),
        viewport: [r.x as f32, r.y as f32, r.width as f32, r.height as f32],
        current_weight: at.current_weight,
        reset: if reset { 1.0 } else { 0.0 },
        _pad: [0.0; 2],
    };
    let load = if load_output { LoadOp::Load } else { LoadOp::DontCare };
    let color = vec![
        ColorAttachment { texture: texture(targets, TAA_OUTPUT.name), load, store: true, resolve: None },
        ColorAttachment { texture: texture(&state.targets, TAA_HISTORY[write].name), load: LoadOp::DontCare, store: true, resolve: None },
    ];
    draw_triangles(cmd, (color, r), (pipelines.resolve, &group), &[(r, bytemuck::bytes_of(&push))])?;
    state.temporal.current = write;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shaders_compile() {
        rhi_vulkan::compile_wgsl("taa", TAA_WGSL).unwrap();
        rhi_vulkan::compile_wgsl("taa copy", COPY_WGSL).unwrap();
        assert_eq!(std::mem::size_of::<TaaPush>(), 96);
    }
}
