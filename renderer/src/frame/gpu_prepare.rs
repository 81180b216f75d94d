//! The `gpu_prepare` stage: the GPU work the passes depend on — the compute
//! work proxies declared while their elements were collected
//! ([`crate::gpu_work`]), recorded in order with the barriers of their
//! declarations — and the render targets the passes draw into, in the
//! frame-resource table ([`crate::render_targets`]): the scene color (HDR)
//! and depth and the output at the family's size and the shadow map at
//! `r.Shadow.MapSize`, made or remade at a new size as needed.

use crate::error::Result;
use crate::frame::scene_renderer::SceneRenderer;
use crate::gpu_work::{record_gpu_work, GpuWork};
use crate::postprocess::OUTPUT;
use crate::render_targets::{SCENE_COLOR, SCENE_DEPTH, SHADOW_MAP};
use rhi_vulkan::{Device, Frame, SamplerDesc, SamplerHandle, TextureHandle};

/// What the record stage binds from `gpu_prepare`.
#[derive(Clone, Copy)]
pub(crate) struct PreparedTargets {
    pub shadow_map: TextureHandle,
    pub shadow_sampler: SamplerHandle,
}

impl SceneRenderer {
    /// Records `gpu_work` into `frame` (a work that fails is logged and
    /// left out; see [`crate::gpu_work`]); makes the frame's targets in the
    /// table at `width`×`height` (scene color and depth, the output), and
    /// the shadow map at `shadow_size` when the frame has a shadow view
    /// (and once, to bind, when there is none yet).
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
        self.targets.begin_frame();
        for target in [SCENE_COLOR, SCENE_DEPTH, OUTPUT] {
            self.targets.ensure(device, &target, width, height)?;
        }
        if has_shadow || self.targets.texture(SHADOW_MAP.name).is_none() {
            self.targets.ensure(device, &SHADOW_MAP, shadow_size, shadow_size)?;
        }
        if self.shadow_sampler.is_none() {
            self.shadow_sampler = Some(device.create_sampler(&SamplerDesc::shadow())?);
        }
        Ok(PreparedTargets {
            shadow_map: self.targets.texture(SHADOW_MAP.name).expect("made above"),
            shadow_sampler: self.shadow_sampler.expect("made above"),
        })
    }
}
