//! The `gpu_prepare` stage: the GPU work the passes depend on — the compute
//! work proxies declared while their elements were collected
//! ([`crate::gpu_work`]), recorded in order with the barriers of their
//! declarations — and the render targets the passes draw into, in the
//! frame-resource table ([`crate::render_targets`]): the scene color (HDR)
//! and depth, the velocity target with TAA and the output at the family's size and the shadow map at
//! `r.Shadow.MapSize`, made or remade at a new size as needed.

use crate::error::Result;
use crate::frame_resources::FrameResources;
use crate::gpu_work::{record_gpu_work, GpuWork};
use crate::postprocess::OUTPUT;
use crate::render_targets::{
    scene_color_msaa, scene_depth_msaa, RenderTargets, SCENE_COLOR, SCENE_DEPTH, SHADOW_ATLAS, SHADOW_MAP, VELOCITY,
};
use rhi_vulkan::{Device, Frame, SamplerDesc, SamplerHandle, TextureHandle};

/// What the record stage binds from `gpu_prepare`.
#[derive(Clone, Copy)]
pub(crate) struct PreparedTargets {
    pub shadow_map: TextureHandle,
    pub shadow_atlas: TextureHandle,
    pub shadow_sampler: SamplerHandle,
}

/// The frame's size and the shadow map's.
#[derive(Clone, Copy, Debug)]
pub(crate) struct TargetSizes {
    pub width: u32,
    pub height: u32,
    /// The shadow map's width and height (its cascades' tiles: `crate::shadow_cascades`).
    pub shadow_map: u32,
    /// The frame has shadow cascades (the shadow map is drawn).
    pub has_shadow: bool,
    /// The shadow atlas's size when the frame has atlas tiles.
    pub atlas: Option<u32>,
    /// Samples per pixel of scene color and depth (MSAA above 1).
    pub samples: u32,
    /// The depth prepass writes the velocity target (TAA).
    pub velocity: bool,
}

/// Records `gpu_work` into `frame` (a work that fails is logged and left
/// out; see [`crate::gpu_work`]); makes the frame's targets in the table at
/// the family's size (scene color and depth, the output), and the shadow
/// map when the frame has a shadow view (and once, to bind, when there is
/// none yet).
pub(crate) fn gpu_prepare(
    device: &Device,
    frame: &mut Frame<'_>,
    gpu_work: Vec<GpuWork>,
    targets: &mut RenderTargets,
    resources: &mut FrameResources,
    sizes: TargetSizes,
) -> Result<PreparedTargets> {
    if !gpu_work.is_empty() {
        record_gpu_work(frame, gpu_work)?;
    }
    targets.begin_frame();
    for target in [SCENE_COLOR, SCENE_DEPTH, OUTPUT] {
        targets.ensure(device, &target, sizes.width, sizes.height)?;
    }
    if sizes.samples > 1 {
        for target in [scene_color_msaa(sizes.samples), scene_depth_msaa(sizes.samples)] {
            targets.ensure(device, &target, sizes.width, sizes.height)?;
        }
    }
    if sizes.velocity {
        targets.ensure(device, &VELOCITY, sizes.width, sizes.height)?;
    }
    if sizes.has_shadow || targets.texture(SHADOW_MAP.name).is_none() {
        targets.ensure(device, &SHADOW_MAP, sizes.shadow_map, sizes.shadow_map)?;
    }
    // The atlas at its size once a light has tiles; until then a small
    // one to bind.
    match sizes.atlas {
        Some(size) => {
            targets.ensure(device, &SHADOW_ATLAS, size, size)?;
        }
        None if targets.texture(SHADOW_ATLAS.name).is_none() => {
            targets.ensure(device, &SHADOW_ATLAS, 16, 16)?;
        }
        None => {}
    }
    if resources.shadow_sampler.is_none() {
        resources.shadow_sampler = Some(device.create_sampler(&SamplerDesc::shadow())?);
    }
    Ok(PreparedTargets {
        shadow_map: targets.texture(SHADOW_MAP.name).expect("made above"),
        shadow_atlas: targets.texture(SHADOW_ATLAS.name).expect("made above"),
        shadow_sampler: resources.shadow_sampler.expect("made above"),
    })
}
