//! The frame's part of debug lines ([`crate::debug_lines`]): each main
//! view's lines built (the game's, and the visible primitives' bounds where
//! the view shows them), uploaded into the frame's dynamic vertex memory,
//! and drawn by the record stage after the view's translucency.

use crate::debug_lines::{DebugLine, BOUNDS_BOX_COLOR, BOUNDS_SPHERE_COLOR};
use crate::frame::InitViews;
use crate::frame_resources::DynamicBufferRing;
use crate::math::Bounds;
use crate::mesh_pass::{SCENE_COLOR_FORMAT, SCENE_DEPTH_FORMAT};
use crate::scene::Scene;
use glam::{Mat4, Vec3};
use rhi_vulkan::{
    BufferHandle, CompareOp, DepthState, Device, GraphicsPipelineDesc, MultisampleState, PipelineHandle, PrimitiveState, PrimitiveTopology,
    Result, ShaderHandle, VertexAttribute, VertexBufferLayout, VertexFormat, VertexStepMode,
};

const SHADER: &str = include_str!("../../shaders/debug_lines.wgsl");

/// Segments per great circle of a bounds sphere.
const CIRCLE_SEGMENTS: usize = 24;

/// A line vertex as the shader reads it.
#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct LineVertex {
    position: [f32; 3],
    color: [u8; 4],
}

/// One view's lines in the frame's dynamic vertex memory.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ViewLines {
    /// The view's index in [`InitViews::views`].
    pub view: usize,
    pub buffer: BufferHandle,
    pub offset: u64,
    pub vertices: u32,
}

/// What the record stage draws: each main view's lines and the pipeline.
#[derive(Debug, Default)]
pub(crate) struct DebugLinesFrame {
    pub views: Vec<ViewLines>,
    pub pipeline: Option<PipelineHandle>,
}

/// The pipelines (by samples per pixel) and their shader, made on first use.
#[derive(Default)]
pub(crate) struct DebugLinePipelines {
    shader: Option<ShaderHandle>,
    pipelines: Vec<(u32, PipelineHandle)>,
}

impl DebugLinePipelines {
    /// The pipeline drawing into scene colour and depth of `samples`.
    fn pipeline(&mut self, device: &Device, samples: u32) -> Result<PipelineHandle> {
        if let Some(&(_, p)) = self.pipelines.iter().find(|(s, _)| *s == samples) {
            return Ok(p);
        }
        let shader = match self.shader {
            Some(s) => s,
            None => *self.shader.insert(device.create_shader("debug_lines.wgsl", SHADER)?),
        };
        let depth = DepthState { format: SCENE_DEPTH_FORMAT, write: false, compare: CompareOp::LessEqual, bias: None };
        let attribute = |location, format, offset| VertexAttribute { location, format, offset };
        let layout = VertexBufferLayout {
            stride: std::mem::size_of::<LineVertex>() as u32,
            step_mode: VertexStepMode::Vertex,
            attributes: vec![attribute(0, VertexFormat::Float32x3, 0), attribute(1, VertexFormat::Unorm8x4, 12)],
        };
        let desc = GraphicsPipelineDesc {
            vertex_buffers: vec![layout],
            primitive: PrimitiveState { topology: PrimitiveTopology::LineList, ..Default::default() },
            depth: Some(depth),
            multisample: MultisampleState { samples, alpha_to_coverage: false },
            ..GraphicsPipelineDesc::color(shader, SCENE_COLOR_FORMAT)
        };
        let p = device.create_graphics_pipeline(&desc)?;
        self.pipelines.push((samples, p));
        Ok(p)
    }

    /// Builds and uploads each main view's lines (`lines` from the game,
    /// and the visible primitives' bounds where the view shows them).
    pub fn frame(
        &mut self,
        device: &Device,
        dynamic: &mut DynamicBufferRing,
        (scene, views): (&Scene, &InitViews),
        lines: &[DebugLine],
        samples: u32,
    ) -> Result<DebugLinesFrame> {
        let mut out = DebugLinesFrame::default();
        let game: Vec<LineVertex> = lines.iter().filter(|l| l.is_finite()).flat_map(|l| segment(l.start, l.end, l.color)).collect();
        for i in views.main_views() {
            let mut vertices = game.clone();
            if views.views[i].show_bounds {
                for slot in &views.visibility[i].visible {
                    if let Some(b) = scene.world_bounds_at(slot.0) {
                        bounds_vertices(&b, &mut vertices);
                    }
                }
            }
            if vertices.is_empty() {
                continue;
            }
            let (buffer, offset) = dynamic.upload(device, bytemuck::cast_slice(&vertices))?;
            out.views.push(ViewLines { view: i, buffer, offset, vertices: vertices.len() as u32 });
        }
        if !out.views.is_empty() {
            out.pipeline = Some(self.pipeline(device, samples)?);
        }
        Ok(out)
    }

    /// Destroys the pipelines and the shader.
    pub fn destroy(&mut self, device: &Device) {
        for (_, p) in self.pipelines.drain(..) {
            device.destroy_pipeline(p);
        }
        if let Some(s) = self.shader.take() {
            device.destroy_shader(s);
        }
    }
}

fn segment(a: Vec3, b: Vec3, color: [u8; 4]) -> [LineVertex; 2] {
    [LineVertex { position: a.to_array(), color }, LineVertex { position: b.to_array(), color }]
}

/// `b`'s box (12 edges) and sphere (3 great circles) as line vertices.
fn bounds_vertices(b: &Bounds, out: &mut Vec<LineVertex>) {
    let (min, max) = (b.min(), b.max());
    let corner = |i: usize| Vec3::new([min.x, max.x][i & 1], [min.y, max.y][(i >> 1) & 1], [min.z, max.z][(i >> 2) & 1]);
    for i in 0..8 {
        for bit in [1, 2, 4] {
            if i & bit == 0 {
                out.extend(segment(corner(i), corner(i | bit), BOUNDS_BOX_COLOR));
            }
        }
    }
    let axes = [(Vec3::X, Vec3::Y), (Vec3::Y, Vec3::Z), (Vec3::Z, Vec3::X)];
    for (u, v) in axes {
        let at = |k: usize| {
            let a = k as f32 / CIRCLE_SEGMENTS as f32 * std::f32::consts::TAU;
            b.origin + (u * a.cos() + v * a.sin()) * b.radius
        };
        for k in 0..CIRCLE_SEGMENTS {
            out.extend(segment(at(k), at(k + 1), BOUNDS_SPHERE_COLOR));
        }
    }
}

/// The push constant: the view's (jittered) view-projection.
pub(crate) fn push_constants(view_proj: Mat4) -> [[f32; 4]; 4] {
    view_proj.to_cols_array_2d()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_are_twelve_box_edges_and_three_circles() {
        let b = Bounds::from_box(Vec3::splat(-1.0), Vec3::new(1.0, 2.0, 3.0));
        let mut v = Vec::new();
        bounds_vertices(&b, &mut v);
        assert_eq!(v.len(), 2 * (12 + 3 * CIRCLE_SEGMENTS));
        let boxed: Vec<Vec3> = v.iter().filter(|x| x.color == BOUNDS_BOX_COLOR).map(|x| Vec3::from(x.position)).collect();
        assert!(boxed.iter().all(|p| p.cmpge(b.min()).all() && p.cmple(b.max()).all()), "box corners on the box");
        for pair in boxed.chunks(2) {
            let d = pair[1] - pair[0];
            assert_eq!(d.cmpne(Vec3::ZERO).bitmask().count_ones(), 1, "each edge along one axis: {d}");
        }
        let on_sphere = v
            .iter()
            .filter(|x| x.color == BOUNDS_SPHERE_COLOR)
            .all(|x| (Vec3::from(x.position).distance(b.origin) - b.radius).abs() < 1e-4);
        assert!(on_sphere);
    }
}
