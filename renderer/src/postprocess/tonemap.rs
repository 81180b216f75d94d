//! The tone-mapping pass (UE's tonemapper, reduced to exposure and a curve):
//! one fullscreen triangle maps the HDR scene color to the 8-bit sRGB
//! output texture that read-backs and the window's present use.
//!
//! Why a curve and not a clamp: lit HDR values above 1.0 (a sun on a white
//! wall, emissive 4.0) would all clamp to the same white and lose their
//! hue; a filmic curve compresses them towards white instead, keeping
//! bright things bright but distinct. The default is Stephen Hill's fit of
//! ACES (RRT + sRGB ODT); `r.Tonemapper=2` is AgX (Blender's, as Benjamin
//! Wrensch's minimal fit: more natural highlights, hues kept as they
//! brighten), `3` Khronos PBR Neutral (base colours shown as authored up
//! to 0.76, what glTF viewers use to judge materials); `r.Tonemapper=0`
//! clamps instead (linear values 0..1 pass through exactly, which tests
//! comparing exact colors use).
//! `r.Exposure` multiplies the scene color first.
//!
//! Wireframe views are left as drawn (no exposure, no curve), as UE's
//! wireframe view mode turns post-processing off: their flat debug colors
//! are meant for the screen as they are.
//!
//! With auto exposure (`r.AutoExposure=1`, [`super::exposure`]) the
//! multiplier is the view state's, read from a storage buffer that pass
//! wrote on the GPU the same frame. The settings travel in push constants, recorded into each frame's own
//! command buffer; the pass is the first member of the post chain
//! ([`super::BUILTIN_POST_PASSES`]).

use super::{PostOutput, PostPassDesc, PostRegion};
use rhi_vulkan::Format;

/// The output's format: 8-bit, sRGB-encoded by the hardware on write.
pub const OUTPUT_FORMAT: Format = Format::Rgba8Srgb;

/// The pass's shader.
pub const TONEMAP_WGSL: &str = include_str!("../../shaders/tonemap.wgsl");

/// GPU timestamp labels written before and after the pass (see
/// `StageTimings::gpu_tonemap`).
pub const TIMESTAMP_LABELS: [&str; 2] = ["tonemap begin", "tonemap end"];

pub use crate::settings::{TonemapCurve, TonemapSettings};

/// The `TonemapPush` push constants of `tonemap.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable)]
pub(crate) struct TonemapPush {
    /// Linear multiplier.
    pub exposure: f32,
    /// 0: no curve (clamped); 1: ACES fitted; 2: AgX; 3: Khronos PBR Neutral.
    pub tonemapper: u32,
    /// 1: the exposure is auto exposure's, in the view state (binding 2).
    pub adapted: u32,
    pub pad1: u32,
}

impl TonemapSettings {
    fn push_constants(self, adapted: bool) -> TonemapPush {
        let tonemapper = match self.curve {
            TonemapCurve::None => 0,
            TonemapCurve::AcesFitted => 1,
            TonemapCurve::AgX => 2,
            TonemapCurve::PbrNeutral => 3,
        };
        TonemapPush { exposure: self.exposure, tonemapper, adapted: u32::from(adapted), pad1: 0 }
    }
}

/// The tone-mapping post pass: [`TONEMAP_WGSL`] from HDR into the display
/// format, with `r.Exposure` (or auto exposure's, `r.AutoExposure`) and
/// `r.Tonemapper`; wireframe views as drawn.
pub static TONEMAP: PostPassDesc = PostPassDesc {
    name: "tonemap",
    shader: TONEMAP_WGSL,
    output: PostOutput::Display,
    push_constants: |settings, region| match region {
        PostRegion::Lit => bytemuck::cast(settings.tonemap.push_constants(settings.auto_exposure.enabled)),
        PostRegion::Wireframe => bytemuck::cast(TonemapSettings { curve: TonemapCurve::None, exposure: 1.0 }.push_constants(false)),
    },
    timestamps: TIMESTAMP_LABELS,
    enabled: |_| true,
    sampler: false,
    exposure: true,
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shader_compiles() {
        rhi_vulkan::compile_wgsl("tonemap.wgsl", TONEMAP_WGSL).expect("tonemap.wgsl compiles");
    }
}
