//! The tone-mapping pass (UE's tonemapper, reduced to exposure and a curve):
//! one fullscreen triangle maps the HDR scene color to the 8-bit sRGB
//! output texture that read-backs and the window's present use.
//!
//! Why a curve and not a clamp: lit HDR values above 1.0 (a sun on a white
//! wall, emissive 4.0) would all clamp to the same white and lose their
//! hue; a filmic curve compresses them towards white instead, keeping
//! bright things bright but distinct. The default is Stephen Hill's fit of
//! ACES (RRT + sRGB ODT); `r.Tonemapper=0` clamps instead (linear values
//! 0..1 pass through exactly, which tests comparing exact colors use).
//! `r.Exposure` multiplies the scene color first.
//!
//! Wireframe views are left as drawn (no exposure, no curve), as UE's
//! wireframe view mode turns post-processing off: their flat debug colors
//! are meant for the screen as they are.
//!
//! The settings travel in push constants, recorded into each frame's own
//! command buffer, and the scene-color binding is allocated from the frame:
//! nothing here is shared between frames in flight but the pipeline.

use crate::error::Result;
use rhi_vulkan::*;

/// The output's format: 8-bit, sRGB-encoded by the hardware on write.
pub const OUTPUT_FORMAT: Format = Format::Rgba8Srgb;

pub(crate) const TONEMAP_WGSL: &str = include_str!("../../shaders/tonemap.wgsl");

/// GPU timestamp labels written before and after the pass (see
/// `StageTimings::gpu_tonemap`).
pub(crate) const TIMESTAMP_LABELS: [&str; 2] = ["tonemap begin", "tonemap end"];

/// The curve (`r.Tonemapper`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TonemapCurve {
    /// 0: linear, clamped to 0..1.
    None,
    /// 1 (and any other value): ACES fitted.
    AcesFitted,
}

/// A frame's tone-mapping settings (read from `r.Tonemapper` and
/// `r.Exposure` with the rest of the frame's settings: `FrameSettings`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TonemapSettings {
    /// The curve (`r.Tonemapper`).
    pub curve: TonemapCurve,
    /// Linear multiplier, at least 0.
    pub exposure: f32,
}

/// The `TonemapPush` push constants of `tonemap.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable)]
pub(crate) struct TonemapPush {
    /// Linear multiplier.
    pub exposure: f32,
    /// 0: no curve (clamped); 1: ACES fitted.
    pub tonemapper: u32,
    pub pad0: u32,
    pub pad1: u32,
}

impl TonemapSettings {
    fn push_constants(self) -> TonemapPush {
        let tonemapper = match self.curve {
            TonemapCurve::None => 0,
            TonemapCurve::AcesFitted => 1,
        };
        TonemapPush { exposure: self.exposure, tonemapper, pad0: 0, pad1: 0 }
    }
}

/// The pass's pipeline, created on first use and kept.
#[derive(Default)]
pub(crate) struct Tonemapper {
    pipeline: Option<PipelineHandle>,
}

impl Tonemapper {
    fn pipeline(&mut self, device: &Device) -> Result<PipelineHandle> {
        if let Some(p) = self.pipeline {
            return Ok(p);
        }
        let shader = device.create_shader("tonemap.wgsl", TONEMAP_WGSL)?;
        let desc = GraphicsPipelineDesc {
            primitive: PrimitiveState {
                topology: PrimitiveTopology::TriangleList,
                polygon_mode: PolygonMode::Fill,
                cull_mode: CullMode::None,
                front_face: FrontFace::CounterClockwise,
            },
            ..GraphicsPipelineDesc::color(shader, OUTPUT_FORMAT)
        };
        let made = device.create_graphics_pipeline(&desc);
        // The module is needed only to create the pipeline.
        device.destroy_shader(shader);
        let pipeline = made?;
        self.pipeline = Some(pipeline);
        Ok(pipeline)
    }

    /// Records the pass into `frame`'s primary: `scene_color` (in
    /// `ColorAttachment`, left `ShaderRead`) is mapped into `output` (in
    /// `output_state`, left `ColorAttachment`), both `width`×`height`; the
    /// rectangles `as_drawn` (wireframe views) are then copied over
    /// untouched (clamped). Stamped with [`TIMESTAMP_LABELS`] where the
    /// frame has room.
    #[allow(clippy::too_many_arguments)]
    pub fn record(
        &mut self,
        device: &Device,
        frame: &mut Frame<'_>,
        scene_color: TextureHandle,
        output: TextureHandle,
        output_state: TextureState,
        width: u32,
        height: u32,
        settings: TonemapSettings,
        as_drawn: &[Rect],
    ) -> Result<()> {
        let pipeline = self.pipeline(device)?;
        let group = frame.create_bind_group(pipeline, 0, &[(0, BindingResource::Texture(scene_color))])?;
        let stamps = frame.timestamps_left().is_some_and(|left| left >= 2);
        let cmd = frame.cmd();
        if stamps {
            cmd.write_timestamp(TIMESTAMP_LABELS[0])?;
        }
        cmd.texture_barrier(scene_color, TextureState::ColorAttachment, TextureState::ShaderRead)?;
        cmd.texture_barrier(output, output_state, TextureState::ColorAttachment)?;
        let area = Rect::from_size(width, height);
        cmd.begin_rendering(
            &RenderingDesc { color: vec![ColorAttachment { texture: output, load: LoadOp::DontCare, store: true }], depth: None, area },
            RenderingContents::Inline,
        )?;
        cmd.set_viewport(area)?;
        cmd.set_scissor(area)?;
        cmd.bind_pipeline(pipeline)?;
        cmd.bind_group(0, &group)?;
        cmd.push_constants(0, bytemuck::bytes_of(&settings.push_constants()))?;
        cmd.draw(3, 1, 0, 0)?;
        let plain = TonemapSettings { curve: TonemapCurve::None, exposure: 1.0 };
        for &rect in as_drawn {
            cmd.set_viewport(rect)?;
            cmd.set_scissor(rect)?;
            cmd.push_constants(0, bytemuck::bytes_of(&plain.push_constants()))?;
            cmd.draw(3, 1, 0, 0)?;
        }
        cmd.end_rendering()?;
        if stamps {
            cmd.write_timestamp(TIMESTAMP_LABELS[1])?;
        }
        Ok(())
    }

    /// Destroys the pipeline (the RHI frees it once no frame uses it).
    pub fn release(&mut self, device: &Device) {
        if let Some(p) = self.pipeline.take() {
            device.destroy_pipeline(p);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shader_compiles() {
        rhi_vulkan::compile_wgsl("tonemap.wgsl", TONEMAP_WGSL).expect("tonemap.wgsl compiles");
    }
}
