//! FXAA (Timothy Lottes' fast approximate anti-aliasing, 3.11's quality
//! algorithm): a post pass on the tone-mapped image that finds edges by
//! their luma contrast, walks along each to its ends and blends each edge
//! pixel with its neighbour across the edge by how far it sits from the
//! nearer end; pixels unlike all their neighbours (sub-pixel aliasing) are
//! softened too. It runs when `r.AntiAliasingMethod=1` (the samples'
//! `--aa fxaa`), after tone mapping, as UE and Bevy run it: on display
//! values, where its contrast thresholds were tuned.
//!
//! Why FXAA before SMAA: one pass, no lookup textures, and on lavapipe
//! (where every texture read costs) most pixels stop after five reads;
//! the edge search runs only on edges. Wireframe views pass through as
//! drawn, as through tone mapping.

use super::{PostOutput, PostPassDesc, PostRegion};
use crate::settings::AntiAliasing;

/// The pass's shader.
pub const FXAA_WGSL: &str = include_str!("../../shaders/fxaa.wgsl");

/// GPU timestamp labels written before and after the pass.
pub const TIMESTAMP_LABELS: [&str; 2] = ["fxaa begin", "fxaa end"];

/// The FXAA post pass: [`FXAA_WGSL`] from the display image into the
/// display format, when `r.AntiAliasingMethod` is 1.
pub static FXAA: PostPassDesc = PostPassDesc {
    name: "fxaa",
    shader: FXAA_WGSL,
    output: PostOutput::Display,
    push_constants: |_, region| [u32::from(region == PostRegion::Lit), 0, 0, 0],
    timestamps: TIMESTAMP_LABELS,
    enabled: |settings| settings.anti_aliasing == AntiAliasing::Fxaa,
    sampler: true,
    exposure: false,
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shader_compiles() {
        rhi_vulkan::compile_wgsl("fxaa.wgsl", FXAA_WGSL).expect("fxaa.wgsl compiles");
    }
}
