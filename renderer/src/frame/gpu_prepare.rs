//! The `gpu_prepare` stage: the GPU work the passes depend on — the compute
//! work proxies declared while their elements were collected
//! ([`crate::gpu_work`]), recorded in order with the barriers of their
//! declarations — and the GPU resources the passes draw into: the scene
//! color (HDR) and depth targets and the tone-mapped output at the
//! family's size and the shadow map at `r.Shadow.MapSize`, created or
//! resized as needed.

use crate::error::Result;
use crate::frame::scene_renderer::SceneRenderer;
use crate::gpu_work::{record_gpu_work, GpuWork};
use crate::mesh_pass::SCENE_COLOR_FORMAT;
use crate::postprocess::tonemap;
use rhi_vulkan::{Device, Frame, SamplerDesc, SamplerHandle, TextureDesc, TextureHandle, TextureState};

/// Scene color (HDR) and depth, and the tone-mapped output (8-bit sRGB:
/// what is read back and presented), kept from frame to frame.
pub(crate) struct Targets {
    pub color: TextureHandle,
    pub depth: TextureHandle,
    pub output: TextureHandle,
    pub width: u32,
    pub height: u32,
    pub color_state: TextureState,
    pub output_state: TextureState,
}

impl Targets {
    pub fn destroy(self, device: &Device) {
        device.destroy_texture(self.color);
        device.destroy_texture(self.depth);
        device.destroy_texture(self.output);
    }
}

/// The directional light's shadow map, kept from frame to frame.
pub(crate) struct ShadowMap {
    pub texture: TextureHandle,
    pub size: u32,
    /// Whether it was ever rendered or cleared (its state is then `ShaderRead`).
    pub initialized: bool,
}

/// What the record stage binds from `gpu_prepare`.
#[derive(Clone, Copy)]
pub(crate) struct PreparedTargets {
    pub shadow_map: TextureHandle,
    pub shadow_sampler: SamplerHandle,
}

impl SceneRenderer {
    /// Records `gpu_work` into `frame` (a work that fails is logged and
    /// left out; see [`crate::gpu_work`]); targets of `width`×`height`; the
    /// shadow map of `shadow_size` when the frame has a shadow view (and
    /// once, to bind, when there is none yet).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn gpu_prepare(
        &mut self,
        device: &Device,
        frame: &mut Frame<'_>,
        gpu_work: Vec<GpuWork>,
        width: u32,
        height: u32,
        has_shadow: bool,
        shadow_size: u32,
    ) -> Result<PreparedTargets> {
        if !gpu_work.is_empty() {
            record_gpu_work(frame, gpu_work)?;
        }
        self.ensure_targets(device, width, height)?;
        if has_shadow || self.shadow.is_none() {
            self.ensure_shadow(device, shadow_size)?;
        }
        Ok(PreparedTargets {
            shadow_map: self.shadow.as_ref().expect("shadow map").texture,
            shadow_sampler: self.shadow_sampler.expect("sampler"),
        })
    }

    fn ensure_targets(&mut self, device: &Device, width: u32, height: u32) -> Result<()> {
        if self.targets.as_ref().is_some_and(|t| t.width == width && t.height == height) {
            return Ok(());
        }
        if let Some(t) = self.targets.take() {
            t.destroy(device);
        }
        let color = device.create_texture(&TextureDesc::render_target("scene color", width, height, SCENE_COLOR_FORMAT))?;
        // Nothing half made is kept.
        let depth =
            device.create_texture(&TextureDesc::depth("scene depth", width, height)).inspect_err(|_| device.destroy_texture(color))?;
        let output = device
            .create_texture(&TextureDesc::render_target("tone-mapped output", width, height, tonemap::OUTPUT_FORMAT))
            .inspect_err(|_| {
                device.destroy_texture(color);
                device.destroy_texture(depth);
            })?;
        self.targets = Some(Targets {
            color,
            depth,
            output,
            width,
            height,
            color_state: TextureState::Undefined,
            output_state: TextureState::Undefined,
        });
        Ok(())
    }

    fn ensure_shadow(&mut self, device: &Device, size: u32) -> Result<()> {
        if self.shadow_sampler.is_none() {
            self.shadow_sampler = Some(device.create_sampler(&SamplerDesc::shadow())?);
        }
        if self.shadow.as_ref().is_some_and(|s| s.size == size) {
            return Ok(());
        }
        if let Some(s) = self.shadow.take() {
            device.destroy_texture(s.texture);
        }
        let texture = device.create_texture(&TextureDesc::depth("shadow map", size, size))?;
        self.shadow = Some(ShadowMap { texture, size, initialized: false });
        Ok(())
    }
}
