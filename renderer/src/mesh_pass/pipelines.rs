//! Pass pipelines: composes WGSL (scene declarations + vertex factory +
//! material function + pass shader) and creates the graphics pipeline for a
//! (pass, vertex factory, material shader, raster state) combination, once.
//!
//! A pipeline's shader module is destroyed as soon as the pipeline exists
//! (Vulkan needs it only while creating); pipelines of a material shader
//! no parent uses any more (released, or replaced by an edited source) are
//! destroyed by
//! [`PipelineLibrary::invalidate_shaders`], so materials created and
//! replaced at run time leave no shader modules or pipelines behind.

use super::MeshPass;
use crate::material::{BlendMode, MaterialRegistry, MaterialShaderId};
use crate::mesh_pass::passes::{PassFragment, PassTarget};
use crate::vertex_factory::VertexFactoryType;
use rhi_vulkan::*;
use rustc_hash::FxHashMap as HashMap;
use std::sync::Mutex;

/// The scene color target format: linear HDR (lighting past 1.0 is kept;
/// the tone-mapping pass, `crate::postprocess::tonemap`, makes the 8-bit
/// sRGB output from it).
pub const SCENE_COLOR_FORMAT: Format = Format::Rgba16Float;
/// The scene depth target's format (also the shadow map's).
pub const SCENE_DEPTH_FORMAT: Format = Format::Depth32Float;
/// The velocity target's format: each pixel's motion since the previous
/// frame in the viewport's UV units (`velocity.inc.wgsl`).
pub const VELOCITY_FORMAT: Format = Format::Rg16Float;

const SCENE_WGSL: &str = include_str!("../../shaders/scene.inc.wgsl");

/// What selects a pass pipeline.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PassPipelineKey {
    /// The pass (its shader, depth, blend and polygon state).
    pub pass: MeshPass,
    /// The vertex factory's name.
    pub vertex_factory: &'static str,
    /// The interned shader of the material used (the default's when the
    /// pass uses the default material).
    pub material_shader: MaterialShaderId,
    /// The blend mode of the material used (masked picks the pass's masked
    /// shader, translucent and additive their blending; opaque when the pass
    /// uses the default material).
    pub blend: BlendMode,
    /// The material is two-sided: no face culling.
    pub two_sided: bool,
    /// The winding is flipped (negative-determinant transforms).
    pub reverse_culling: bool,
    /// Samples per pixel of the pass's target: scene color's under MSAA
    /// ([`PipelineLibrary::scene_color_samples`]), 1 for the shadow maps.
    pub samples: u32,
    /// The pass writes the velocity target (a
    /// [`PassTarget::SceneDepth`] pass in a frame with TAA,
    /// [`PipelineLibrary::velocity`]): its `velocity` shaders, a
    /// `VELOCITY_FORMAT` colour target.
    pub velocity: bool,
    /// The pass writes depth for this batch: its [`PassDepth::write`], or
    /// the base pass for a batch the depth prepass leaves out
    /// ([`PipelineLibrary::prepass_draws`]).
    ///
    /// [`PassDepth::write`]: crate::mesh_pass::passes::PassDepth::write
    pub depth_write: bool,
    /// Alpha to coverage: a masked material under MSAA covers samples by
    /// its opacity instead of discarding at its clip value
    /// (`ALPHA_TO_COVERAGE` in the shaders).
    pub alpha_to_coverage: bool,
}

#[derive(Clone, Copy)]
struct PipelineInfo {
    pipeline: PipelineHandle,
    push_constants: bool,
}

/// The pass pipelines created so far (shared by every pass-setup task).
#[derive(Default)]
pub struct PipelineLibrary {
    pipelines: Mutex<HashMap<PassPipelineKey, PipelineInfo>>,
    /// Pipelines created since the last `take_created`.
    created: std::sync::atomic::AtomicU64,
    /// Samples per pixel of scene color and depth this frame (MSAA; 0 read as 1).
    scene_color_samples: std::sync::atomic::AtomicU32,
    /// The frame has a velocity target (TAA).
    velocity: std::sync::atomic::AtomicBool,
    /// What the depth prepass draws, as `PREPASS_*` bits; unset (the
    /// default) until a frame sets it: both.
    prepass: std::sync::atomic::AtomicU8,
}

/// `PipelineLibrary::prepass` bits.
const PREPASS_SET: u8 = 1;
const PREPASS_OPAQUE: u8 = 2;
const PREPASS_MASKED: u8 = 4;

impl PipelineLibrary {
    /// Samples per pixel of the passes that draw into scene color: what
    /// commands built now get pipelines for.
    pub fn scene_color_samples(&self) -> u32 {
        self.scene_color_samples.load(std::sync::atomic::Ordering::Relaxed).max(1)
    }

    /// Sets [`Self::scene_color_samples`]; returns whether it changed (the
    /// scene's cached commands then name pipelines of the old count).
    pub(crate) fn set_scene_color_samples(&self, samples: u32) -> bool {
        self.scene_color_samples.swap(samples, std::sync::atomic::Ordering::Relaxed).max(1) != samples
    }

    /// Whether the frame has a velocity target that the scene-depth passes
    /// write (TAA): what commands built now get pipelines for.
    pub fn velocity(&self) -> bool {
        self.velocity.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Sets [`Self::velocity`]; returns whether it changed (the scene's
    /// cached commands then name pipelines without, or with, it).
    pub(crate) fn set_velocity(&self, velocity: bool) -> bool {
        self.velocity.swap(velocity, std::sync::atomic::Ordering::Relaxed) != velocity
    }

    /// Whether the depth prepass draws opaque batches, and masked ones, this
    /// frame (`crate::EarlyZ::effective`): what commands built now are
    /// made for (a batch it does not draw writes its depth in the base pass).
    pub fn prepass_draws(&self) -> (bool, bool) {
        let bits = self.prepass.load(std::sync::atomic::Ordering::Relaxed);
        if bits & PREPASS_SET == 0 {
            return (true, true);
        }
        (bits & PREPASS_OPAQUE != 0, bits & PREPASS_MASKED != 0)
    }

    /// Sets [`Self::prepass_draws`]; returns whether it changed (cached
    /// commands are then of the old prepass).
    pub(crate) fn set_prepass_draws(&self, (opaque, masked): (bool, bool)) -> bool {
        let was = self.prepass_draws();
        let bits = PREPASS_SET | if opaque { PREPASS_OPAQUE } else { 0 } | if masked { PREPASS_MASKED } else { 0 };
        self.prepass.store(bits, std::sync::atomic::Ordering::Relaxed);
        was != (opaque, masked)
    }

    /// The pipeline for `key` and whether it uses push constants.
    pub fn get(
        &self,
        device: &Device,
        key: PassPipelineKey,
        vf: &'static dyn VertexFactoryType,
        materials: &MaterialRegistry,
    ) -> Result<(PipelineHandle, bool)> {
        // Held while creating: two tasks asking for the same new key must get
        // the same pipeline (and so build equal, mergeable commands).
        let mut pipelines = self.pipelines.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(info) = pipelines.get(&key) {
            return Ok((info.pipeline, info.push_constants));
        }
        let info = Self::create(device, key, vf, materials)?;
        self.created.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        pipelines.insert(key, info);
        Ok((info.pipeline, info.push_constants))
    }

    /// Destroys every pipeline; the RHI frees them once no frame in flight
    /// uses them.
    pub fn invalidate(&self, device: &Device) {
        for (_, info) in self.pipelines.lock().unwrap_or_else(|p| p.into_inner()).drain() {
            device.destroy_pipeline(info.pipeline);
        }
    }

    /// Destroys the pipelines made from the material shaders `stale` (no
    /// parent uses them: see [`MaterialRegistry::take_stale_shaders`]). Commands
    /// that use them must be rebuilt before the next draw.
    pub fn invalidate_shaders(&self, device: &Device, stale: &[MaterialShaderId]) {
        if stale.is_empty() {
            return;
        }
        self.pipelines.lock().unwrap_or_else(|p| p.into_inner()).retain(|key, info| {
            let keep = !stale.contains(&key.material_shader);
            if !keep {
                device.destroy_pipeline(info.pipeline);
            }
            keep
        });
    }

    /// Pipelines created since the last call.
    pub fn take_created(&self) -> u64 {
        self.created.swap(0, std::sync::atomic::Ordering::Relaxed)
    }

    /// Pipelines in the cache.
    pub fn len(&self) -> usize {
        self.pipelines.lock().unwrap_or_else(|p| p.into_inner()).len()
    }

    /// Whether the cache holds no pipeline.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The composed WGSL of a pass pipeline (also used by tests to validate
    /// every combination). The material's source comes first (WGSL
    /// declarations may come in any order), so compile errors in it carry the
    /// material's own line numbers.
    pub fn compose(key: &PassPipelineKey, vf: &dyn VertexFactoryType, material_wgsl: &str) -> String {
        let desc = key.pass.desc();
        // A factory that dithers its fade discards in every pass: the masked
        // shader (a fragment stage in depth-only passes) for opaque batches too.
        let masked = key.blend == BlendMode::Masked || vf.dithered_fade();
        let pass = match (desc.velocity.filter(|_| key.velocity), masked) {
            (Some(v), true) => v.masked_shader,
            (Some(v), false) => v.shader,
            (None, true) => desc.masked_shader,
            (None, false) => desc.shader,
        };
        format!(
            "{material_wgsl}\nconst BLEND_MODE: u32 = {}u;\nconst TWO_SIDED: bool = {};\nconst DITHERED_FADE: bool = {};\nconst ALPHA_TO_COVERAGE: bool = {};\n{SCENE_WGSL}\n{}\n{pass}",
            key.blend.index(),
            key.two_sided,
            vf.dithered_fade(),
            key.alpha_to_coverage,
            vf.wgsl()
        )
    }

    fn create(
        device: &Device,
        key: PassPipelineKey,
        vf: &'static dyn VertexFactoryType,
        materials: &MaterialRegistry,
    ) -> Result<PipelineInfo> {
        let material = materials.shader(key.material_shader).ok_or_else(|| RhiError::NotFound {
            what: "material shader",
            value: key.material_shader.0,
            resource: "the material registry (it was released)".into(),
        })?;
        let source = Self::compose(&key, vf, &material.wgsl);
        let label = format!("{}+{}+{}", key.pass.name(), vf.name(), material.name);
        let shader = device.create_shader(&label, &source)?;
        let made = Self::create_with(device, key, vf, shader);
        // The module is needed only to create the pipeline.
        device.destroy_shader(shader);
        made
    }

    fn create_with(
        device: &Device,
        key: PassPipelineKey,
        vf: &'static dyn VertexFactoryType,
        shader: ShaderHandle,
    ) -> Result<PipelineInfo> {
        let pass = key.pass.desc();
        let has_fragment = pass.fragment == PassFragment::Always || key.velocity || key.blend == BlendMode::Masked || vf.dithered_fade();
        let mut streams = vf.streams();
        if let Some(location) = vf.primitive_id_location() {
            streams.push(VertexBufferLayout {
                stride: 4,
                step_mode: VertexStepMode::Instance,
                attributes: vec![VertexAttribute { location, format: VertexFormat::Uint32, offset: 0 }],
            });
        }
        let cull_mode = if key.two_sided || pass.cull_none { CullMode::None } else { CullMode::Back };
        let front_face = if key.reverse_culling { FrontFace::Clockwise } else { FrontFace::CounterClockwise };
        let d = pass.depth;
        let depth = Some(DepthState {
            format: SCENE_DEPTH_FORMAT,
            write: key.depth_write,
            compare: d.compare,
            bias: d.bias.map(|(c, s)| DepthBias::new(c, s)),
        });
        let color_targets = match pass.target {
            PassTarget::ShadowMap => vec![],
            PassTarget::SceneDepth if key.velocity => vec![ColorTargetState { format: VELOCITY_FORMAT, blend: None }],
            PassTarget::SceneDepth => vec![],
            PassTarget::SceneColor => vec![ColorTargetState { format: SCENE_COLOR_FORMAT, blend: pass.blend.state(key.blend) }],
        };
        let desc = GraphicsPipelineDesc {
            vertex: ShaderStageDesc::new(shader, "vs_main"),
            fragment: has_fragment.then(|| ShaderStageDesc::new(shader, "fs_main")),
            vertex_buffers: streams,
            primitive: PrimitiveState { topology: PrimitiveTopology::TriangleList, polygon_mode: pass.polygon_mode, cull_mode, front_face },
            depth,
            color_targets,
            multisample: MultisampleState { samples: key.samples, alpha_to_coverage: key.alpha_to_coverage },
        };
        let pipeline = device.create_graphics_pipeline(&desc)?;
        let vs = device.shader_entry_point(shader, "vs_main")?;
        let fs_push = if has_fragment { device.shader_entry_point(shader, "fs_main")?.push_constant_size } else { 0 };
        Ok(PipelineInfo { pipeline, push_constants: vs.push_constant_size > 0 || fs_push > 0 })
    }
}
