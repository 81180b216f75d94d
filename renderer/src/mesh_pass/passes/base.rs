//! The base pass: opaque and masked geometry, forward lit, on the depth
//! the prepass wrote.

use super::*;
use rhi_vulkan::{CompareOp, PolygonMode};

pub(super) const BASE_WGSL: &str = concat!(
    include_str!("../../../shaders/material_vs.inc.wgsl"),
    include_str!("../../../shaders/material_vs_main.inc.wgsl"),
    include_str!("../../../shaders/base.inc.wgsl")
);

/// The base pass: opaque and masked materials, lit, on the prepass's depth
/// (`LessEqual`; it writes depth only for the batches the prepass leaves
/// out, `r.EarlyZPassMode`).
pub static BASE: PassDesc = PassDesc {
    name: "base",
    views: PassViews::Main,
    takes: |_, blend| !blend.is_translucent(),
    relevant: |r| r.opaque || r.masked,
    material: PassMaterial::Own,
    shader: BASE_WGSL,
    masked_shader: BASE_WGSL,
    fragment: PassFragment::Always,
    velocity: None,
    depth: PassDepth { write: false, write_where_not_prepassed: true, compare: CompareOp::LessEqual, bias: None },
    position_only: false,
    blend: PassBlend::None,
    cull_none: false,
    polygon_mode: PolygonMode::Fill,
    sort: SortMode::ByState,
    target: PassTarget::SceneColor,
    lighting: true,
    counts_triangles: true,
};
