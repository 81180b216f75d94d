//! Translucency: translucent and additive geometry, forward lit, back to
//! front, no depth write.

use super::base::BASE_WGSL;
use super::*;
use rhi_vulkan::{CompareOp, PolygonMode};

/// Translucency: translucent and additive materials, lit, back to front,
/// depth tested but not written.
pub static TRANSLUCENCY: PassDesc = PassDesc {
    name: "translucency",
    views: PassViews::Main,
    takes: |_, blend| blend.is_translucent(),
    relevant: |r| r.translucent,
    material: PassMaterial::Own,
    shader: BASE_WGSL,
    masked_shader: BASE_WGSL,
    fragment: PassFragment::Always,
    velocity: None,
    depth: PassDepth { write: false, write_where_not_prepassed: false, compare: CompareOp::LessEqual, bias: None },
    position_only: false,
    blend: PassBlend::ByMaterial,
    cull_none: false,
    polygon_mode: PolygonMode::Fill,
    sort: SortMode::BackToFront,
    target: PassTarget::SceneColor,
    lighting: true,
    counts_triangles: true,
};
