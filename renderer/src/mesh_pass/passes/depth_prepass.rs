//! The depth prepass: opaque and masked geometry, depth only.

use super::*;
use rhi_vulkan::{CompareOp, PolygonMode};

pub(super) const DEPTH_WGSL: &str = include_str!("../../../shaders/depth.inc.wgsl");
pub(super) const DEPTH_MASKED_WGSL: &str =
    concat!(include_str!("../../../shaders/material_vs.inc.wgsl"), include_str!("../../../shaders/depth_masked.inc.wgsl"));

/// The depth prepass: opaque and masked geometry into the scene depth,
/// the default material for opaque batches so they merge.
pub static DEPTH_PREPASS: PassDesc = PassDesc {
    name: "depth",
    views: PassViews::Main,
    takes: |_, blend| !blend.is_translucent(),
    relevant: |r| r.opaque || r.masked,
    material: PassMaterial::DefaultWhenOpaque,
    shader: DEPTH_WGSL,
    masked_shader: DEPTH_MASKED_WGSL,
    fragment: PassFragment::MaskedOnly,
    depth: PassDepth { write: true, compare: CompareOp::LessEqual, bias: None },
    position_only: true,
    blend: PassBlend::None,
    cull_none: false,
    polygon_mode: PolygonMode::Fill,
    sort: SortMode::ByState,
    target: PassTarget::SceneColor,
    lighting: false,
    counts_triangles: false,
};
