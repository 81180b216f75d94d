//! Wireframe: everything, edges only in a flat color, when the view asks
//! for wireframe.

use super::*;
use rhi_vulkan::{CompareOp, PolygonMode};

const WIREFRAME_WGSL: &str = include_str!("../../../shaders/wireframe.inc.wgsl");

/// Wireframe: every batch's edges in a flat colour, in views that ask
/// for wireframe.
pub static WIREFRAME: PassDesc = PassDesc {
    name: "wireframe",
    views: PassViews::Wireframe,
    takes: |_, _| true,
    relevant: |_| true,
    material: PassMaterial::Default,
    shader: WIREFRAME_WGSL,
    masked_shader: WIREFRAME_WGSL,
    fragment: PassFragment::Always,
    velocity: None,
    depth: PassDepth { write: false, write_where_not_prepassed: false, compare: CompareOp::Always, bias: None },
    position_only: false,
    blend: PassBlend::None,
    cull_none: true,
    polygon_mode: PolygonMode::Line,
    sort: SortMode::ByState,
    target: PassTarget::SceneColor,
    lighting: false,
    counts_triangles: true,
};
