//! Shadow depth: shadow-casting opaque and masked geometry into the
//! directional light's shadow map.

use super::depth_prepass::{DEPTH_MASKED_WGSL, DEPTH_WGSL};
use super::*;
use rhi_vulkan::{CompareOp, PolygonMode};

/// Shadow depth: shadow-casting opaque and masked geometry into the
/// directional light's shadow map, with depth bias.
pub static SHADOW_DEPTH: PassDesc = PassDesc {
    name: "shadow",
    views: PassViews::Shadow,
    takes: |batch, blend| !blend.is_translucent() && batch.cast_shadow,
    relevant: |r| r.opaque || r.masked,
    material: PassMaterial::DefaultWhenOpaque,
    shader: DEPTH_WGSL,
    masked_shader: DEPTH_MASKED_WGSL,
    fragment: PassFragment::MaskedOnly,
    velocity: None,
    depth: PassDepth { write: true, write_where_not_prepassed: false, compare: CompareOp::LessEqual, bias: Some((1, 1.5)) },
    position_only: true,
    blend: PassBlend::None,
    cull_none: false,
    polygon_mode: PolygonMode::Fill,
    sort: SortMode::ByState,
    target: PassTarget::ShadowMap,
    lighting: false,
    counts_triangles: false,
};
