//! The depth prepass: opaque and masked geometry, depth only — and motion
//! vectors in frames with TAA.

use super::*;
use rhi_vulkan::{CompareOp, PolygonMode};

pub(super) const DEPTH_WGSL: &str = include_str!("../../../shaders/depth.inc.wgsl");
pub(super) const DEPTH_MASKED_WGSL: &str = concat!(
    include_str!("../../../shaders/material_vs.inc.wgsl"),
    include_str!("../../../shaders/material_vs_main.inc.wgsl"),
    include_str!("../../../shaders/depth_masked.inc.wgsl"),
    include_str!("../../../shaders/depth_masked_main.inc.wgsl")
);
/// Depth and motion vectors, opaque.
const DEPTH_VELOCITY_WGSL: &str =
    concat!(include_str!("../../../shaders/velocity.inc.wgsl"), include_str!("../../../shaders/depth_velocity.inc.wgsl"));
/// Depth and motion vectors, masked (or dithered).
const DEPTH_MASKED_VELOCITY_WGSL: &str = concat!(
    include_str!("../../../shaders/material_vs.inc.wgsl"),
    include_str!("../../../shaders/velocity.inc.wgsl"),
    include_str!("../../../shaders/depth_masked.inc.wgsl"),
    include_str!("../../../shaders/depth_masked_velocity.inc.wgsl")
);

/// The depth prepass: opaque and masked geometry into the scene depth,
/// the default material for opaque batches so they merge; in frames with
/// TAA it also writes the motion vectors (the velocity target).
pub static DEPTH_PREPASS: PassDesc = PassDesc {
    name: "depth",
    views: PassViews::Main,
    takes: |_, blend| !blend.is_translucent(),
    relevant: |r| r.opaque || r.masked,
    material: PassMaterial::DefaultWhenOpaque,
    shader: DEPTH_WGSL,
    masked_shader: DEPTH_MASKED_WGSL,
    fragment: PassFragment::MaskedOnly,
    velocity: Some(VelocityShaders { shader: DEPTH_VELOCITY_WGSL, masked_shader: DEPTH_MASKED_VELOCITY_WGSL }),
    depth: PassDepth { write: true, write_where_not_prepassed: false, compare: CompareOp::LessEqual, bias: None },
    position_only: true,
    blend: PassBlend::None,
    cull_none: false,
    polygon_mode: PolygonMode::Fill,
    sort: SortMode::ByState,
    target: PassTarget::SceneDepth,
    lighting: false,
    counts_triangles: false,
};
