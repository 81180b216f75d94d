//! The environment on the GPU (`crate::environment`'s steps 1-4): the
//! source texture, the prefiltered specular cube, the irradiance's
//! spherical harmonics, the BRDF table, and the sky drawn behind the scene.
//! Prefiltering runs in one submission when the environment is set (the
//! render thread waits for it, as for a texture's upload) and never while
//! it does not change.

use super::{brdf_lut, Environment, EquirectImage, SPECULAR_FACE_SIZE, SPECULAR_LEVELS};
use crate::error::Result;
use bytemuck::{Pod, Zeroable};
use rhi_vulkan::*;
use std::sync::Arc;

pub(crate) const PREFILTER_SHADER: &str = include_str!("../../shaders/environment_prefilter.wgsl");
pub(crate) const SKY_SHADER: &str = include_str!("../../shaders/sky.wgsl");
/// The prefiltered and sampled maps' format.
const FORMAT: Format = Format::Rgba16Float;
/// GGX samples per texel of the rough levels.
const SPECULAR_SAMPLES: u32 = 64;
/// The irradiance is projected from the source level at most this wide.
const SH_SOURCE_WIDTH: u32 = 128;

/// The `Params` of `environment_prefilter.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, Pod, Zeroable)]
pub(crate) struct PrefilterParams {
    pub face_size: u32,
    pub first_texel: u32,
    pub samples: u32,
    pub sh_level: u32,
    pub roughness: f32,
    pub source_texel_solid_angle: f32,
    pub source_levels: f32,
    pub _pad: f32,
}

/// The `SkyPush` of `sky.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, Pod, Zeroable)]
pub(crate) struct SkyPush {
    pub clip_to_world: [[f32; 4]; 4],
    pub viewport: [f32; 4],
    pub intensity: f32,
    pub lod: f32,
    pub _pad: [f32; 2],
}

/// An image environment's maps.
#[derive(Debug)]
struct Maps {
    /// The equirectangular source with its mip chain (the sky samples it).
    source: TextureHandle,
    source_width: u32,
    specular: TextureHandle,
    sh: BufferHandle,
    /// The sky's bind group: the source and its sampler.
    sky_group: BindGroupHandle,
    intensity: f32,
}

/// What every scene binds whatever its environment: the BRDF table, the
/// samplers, and a black cube and zero harmonics for the hemisphere.
#[derive(Debug)]
struct Common {
    brdf: TextureHandle,
    black_cube: TextureHandle,
    zero_sh: BufferHandle,
    /// Trilinear, clamped (the cube, the table).
    sampler: SamplerHandle,
    /// Trilinear, repeating across the equirectangular image's seam.
    equirect_sampler: SamplerHandle,
    prefilter_specular: PipelineHandle,
    prefilter_irradiance: PipelineHandle,
    /// The sky's shader, and its pipeline per samples per pixel of scene
    /// color (MSAA), the one-sample one first.
    sky_shader: ShaderHandle,
    skies: Vec<(u32, PipelineHandle)>,
}

/// What the base pass binds for the environment (group 1, bindings 8-11).
#[derive(Clone, Copy, Debug)]
pub(crate) struct EnvironmentBindings {
    pub specular: TextureHandle,
    pub sampler: SamplerHandle,
    pub brdf: TextureHandle,
    pub sh: BufferHandle,
}

/// How a view draws the sky.
#[derive(Clone, Copy, Debug)]
pub(crate) struct SkyDraw {
    pub pipeline: PipelineHandle,
    pub group: BindGroupHandle,
    pub intensity: f32,
    /// Source texels per radian along its width.
    pub texels_per_radian: f32,
}

/// The scene's environment (UE's sky light proxy): what was set, its maps.
#[derive(Debug)]
pub(crate) struct SceneEnvironment {
    /// The environment's kind (`Environment::kind`).
    pub(crate) kind: &'static str,
    maps: Option<Maps>,
    common: Option<Common>,
    /// Prefilter runs not yet reported by a frame's stats.
    pub(crate) filters_unreported: u64,
}

impl Default for SceneEnvironment {
    /// The hemisphere: no maps until the first frame makes the common ones.
    fn default() -> Self {
        Self { kind: Environment::Hemisphere.kind(), maps: None, common: None, filters_unreported: 0 }
    }
}

impl SceneEnvironment {
    /// Makes what every frame binds, once, and the sky's pipeline for
    /// scene color's `samples` per pixel.
    pub fn prepare(&mut self, device: &Device, samples: u32) -> Result<()> {
        if self.common.is_none() {
            self.common = Some(make_common(device)?);
        }
        let common = self.common.as_mut().expect("made above");
        if !common.skies.iter().any(|(n, _)| *n == samples) {
            let pipeline = sky_pipeline(device, common.sky_shader, samples)?;
            common.skies.push((samples, pipeline));
        }
        Ok(())
    }

    /// Sets the environment: an image one is prefiltered now (one
    /// submission, waited for); the maps it replaces are destroyed once no
    /// frame in flight reads them. On an error nothing changes.
    pub fn set(&mut self, device: &Device, environment: &Environment) -> Result<()> {
        self.prepare(device, 1)?;
        let common = self.common.as_ref().expect("prepared");
        let maps = match environment.to_image() {
            Some((image, intensity)) => Some(prefilter(device, common, &image, intensity)?),
            None => None,
        };
        if maps.is_some() {
            self.filters_unreported += 1;
        }
        if let Some(old) = std::mem::replace(&mut self.maps, maps) {
            destroy_maps(device, old);
        }
        self.kind = environment.kind();
        Ok(())
    }

    /// The base pass's environment bindings (made by [`Self::prepare`]).
    pub fn bindings(&self) -> EnvironmentBindings {
        let c = self.common.as_ref().expect("prepared in update_scene");
        match &self.maps {
            Some(m) => EnvironmentBindings { specular: m.specular, sampler: c.sampler, brdf: c.brdf, sh: m.sh },
            None => EnvironmentBindings { specular: c.black_cube, sampler: c.sampler, brdf: c.brdf, sh: c.zero_sh },
        }
    }

    /// The view uniform's (specular levels, intensity): (0, 0) for the hemisphere.
    pub fn uniform(&self) -> (u32, f32) {
        self.maps.as_ref().map_or((0, 0.0), |m| (SPECULAR_LEVELS, m.intensity))
    }

    /// How to draw the sky into scene color of `samples` per pixel (its
    /// pipeline made by [`Self::prepare`]), if the environment has one.
    pub fn sky(&self, samples: u32) -> Option<SkyDraw> {
        let (m, c) = (self.maps.as_ref()?, self.common.as_ref()?);
        let pipeline = c.skies.iter().find(|(n, _)| *n == samples)?.1;
        let texels_per_radian = m.source_width as f32 / std::f32::consts::TAU;
        Some(SkyDraw { pipeline, group: m.sky_group, intensity: m.intensity, texels_per_radian })
    }

    /// Destroys every GPU resource (the scene is going).
    pub fn release(&mut self, device: &Device) {
        if let Some(m) = self.maps.take() {
            destroy_maps(device, m);
        }
        if let Some(c) = self.common.take() {
            device.destroy_texture(c.brdf);
            device.destroy_texture(c.black_cube);
            device.destroy_buffer(c.zero_sh);
            device.destroy_sampler(c.sampler);
            device.destroy_sampler(c.equirect_sampler);
            for p in [c.prefilter_specular, c.prefilter_irradiance].into_iter().chain(c.skies.iter().map(|s| s.1)) {
                device.destroy_pipeline(p);
            }
            device.destroy_shader(c.sky_shader);
        }
    }
}

fn destroy_maps(device: &Device, m: Maps) {
    device.destroy_bind_group(m.sky_group);
    device.destroy_texture(m.source);
    device.destroy_texture(m.specular);
    device.destroy_buffer(m.sh);
}

/// Half-float RGBA bytes of `texels` (alpha 1).
fn half_rgba(texels: impl Iterator<Item = [f32; 4]>) -> Vec<u8> {
    texels.flat_map(|t| t.map(|c| half::f16::from_f32(c).to_bits())).flat_map(u16::to_le_bytes).collect()
}

fn make_common(device: &Device) -> Result<Common> {
    let lut = half_rgba(brdf_lut::table().into_iter());
    let size = brdf_lut::LUT_SIZE;
    let brdf = device.create_texture_with_data(&TextureDesc::sampled("environment BRDF", size, size, FORMAT), TextureData::Level0(&lut))?;
    let black = half_rgba(std::iter::repeat_n([0.0, 0.0, 0.0, 1.0], 6));
    let black_cube = device.create_texture_with_data(&TextureDesc::cube("no environment", 1, FORMAT), TextureData::Level0(&black))?;
    let zero_sh = device.create_buffer(&BufferDesc::gpu_only("no environment SH", 9 * 16, BufferUsage::STORAGE))?;
    device.immediate(|cmd| {
        cmd.fill_buffer(zero_sh, 0, 9 * 16, 0)?;
        cmd.buffer_barrier(zero_sh, BufferState::TransferDst, BufferState::ShaderRead)
    })?;
    let sampler = device.create_sampler(&SamplerDesc::linear_clamp())?;
    let equirect_sampler = device.create_sampler(&SamplerDesc { address_u: AddressMode::Repeat, ..SamplerDesc::linear_clamp() })?;
    let prefilter = device.create_shader("environment_prefilter.wgsl", PREFILTER_SHADER)?;
    let compute = |entry: &str| device.create_compute_pipeline(&ComputePipelineDesc { shader: ShaderStageDesc::new(prefilter, entry) });
    let (prefilter_specular, prefilter_irradiance) = (compute("specular")?, compute("irradiance")?);
    device.destroy_shader(prefilter);
    let sky_shader = device.create_shader("sky.wgsl", SKY_SHADER)?;
    let skies = vec![(1, sky_pipeline(device, sky_shader, 1)?)];
    Ok(Common { brdf, black_cube, zero_sh, sampler, equirect_sampler, prefilter_specular, prefilter_irradiance, sky_shader, skies })
}

/// The sky's pipeline into scene color and depth of `samples` per pixel:
/// drawn where the depth is still the cleared far plane, writing none.
fn sky_pipeline(device: &Device, shader: ShaderHandle, samples: u32) -> Result<PipelineHandle> {
    let depth = DepthState { format: crate::mesh_pass::SCENE_DEPTH_FORMAT, write: false, compare: CompareOp::LessEqual, bias: None };
    Ok(device.create_graphics_pipeline(&GraphicsPipelineDesc {
        depth: Some(depth),
        multisample: MultisampleState { samples, alpha_to_coverage: false },
        ..GraphicsPipelineDesc::color(shader, crate::mesh_pass::SCENE_COLOR_FORMAT)
    })?)
}

/// Uploads `image` and prefilters it (module docs); everything made is
/// destroyed again on an error.
fn prefilter(device: &Device, common: &Common, image: &Arc<EquirectImage>, intensity: f32) -> Result<Maps> {
    let (w, h) = (image.width(), image.height());
    let levels = TextureDesc::full_mip_count(w, h);
    let bytes = half_rgba(image.texels().iter().map(|t| [t[0], t[1], t[2], 1.0]));
    let source_desc = TextureDesc::sampled("environment source", w, h, FORMAT).with_mip_levels(levels);
    let source = device.create_texture_with_data(&source_desc, TextureData::Level0(&bytes))?;
    let mut made = Made { device, textures: vec![source], buffers: vec![], groups: vec![] };
    let cube = TextureDesc::cube("environment specular", SPECULAR_FACE_SIZE, FORMAT).with_mip_levels(SPECULAR_LEVELS);
    let specular = made.texture(device.create_texture(&cube))?;
    let level_offsets: Vec<u64> = (0..SPECULAR_LEVELS).scan(0u64, |at, l| Some(std::mem::replace(at, *at + cube.level_size(l)))).collect();
    let total = (0..SPECULAR_LEVELS).map(|l| cube.level_size(l)).sum();
    let texels = made.buffer(device.create_buffer(&BufferDesc::gpu_only("environment specular texels", total, BufferUsage::STORAGE)))?;
    let sh = made.buffer(device.create_buffer(&BufferDesc::gpu_only("environment SH", 9 * 16, BufferUsage::STORAGE)))?;
    let entries = |texels| {
        [
            (0, BindingResource::Texture(source)),
            (1, BindingResource::Sampler(common.equirect_sampler)),
            (2, BindingResource::Buffer(texels)),
            (3, BindingResource::Buffer(sh)),
        ]
    };
    let group = made.group(device.create_bind_group(common.prefilter_specular, 0, &entries(texels)))?;
    let sky_group = made.group(device.create_bind_group(
        common.skies[0].1,
        0,
        &[(0, BindingResource::Texture(source)), (1, BindingResource::Sampler(common.equirect_sampler))],
    ))?;
    let sh_level = (0..levels).find(|&l| source_desc.level_extent(l).0 <= SH_SOURCE_WIDTH).unwrap_or(levels - 1);
    let base = PrefilterParams {
        source_texel_solid_angle: 4.0 * std::f32::consts::PI / (w as f32 * h as f32),
        source_levels: levels as f32,
        sh_level,
        ..Default::default()
    };
    device.immediate(|cmd| {
        cmd.bind_pipeline(common.prefilter_specular)?;
        cmd.bind_group_handle(0, group)?;
        for (level, offset) in (0..SPECULAR_LEVELS).zip(&level_offsets) {
            let size = (SPECULAR_FACE_SIZE >> level).max(1);
            let params = PrefilterParams {
                face_size: size,
                first_texel: (offset / 8) as u32,
                samples: if level == 0 { 0 } else { SPECULAR_SAMPLES },
                roughness: level as f32 / (SPECULAR_LEVELS - 1) as f32,
                ..base
            };
            cmd.push_constants(0, bytemuck::bytes_of(&params))?;
            cmd.dispatch(size.div_ceil(8), size.div_ceil(8), 6)?;
        }
        cmd.bind_pipeline(common.prefilter_irradiance)?;
        cmd.bind_group_handle(0, group)?;
        cmd.push_constants(0, bytemuck::bytes_of(&base))?;
        cmd.dispatch(1, 1, 1)?;
        cmd.buffer_barrier(texels, BufferState::ShaderWrite, BufferState::TransferSrc)?;
        cmd.texture_barrier(specular, TextureState::Undefined, TextureState::TransferDst)?;
        for (level, &offset) in (0..SPECULAR_LEVELS).zip(&level_offsets) {
            cmd.copy_buffer_to_texture_level(texels, offset, specular, level)?;
        }
        cmd.texture_barrier(specular, TextureState::TransferDst, TextureState::ShaderRead)?;
        cmd.buffer_barrier(sh, BufferState::ShaderWrite, BufferState::ShaderRead)
    })?;
    // Done with the scratch buffer and the prefilter's group; keep the rest.
    made.textures.clear();
    made.buffers.retain(|&b| b == texels);
    made.groups.retain(|&g| g == group);
    drop(made);
    Ok(Maps { source, source_width: w, specular, sh, sky_group, intensity })
}

/// What [`prefilter`] made so far: destroyed when dropped (on an error,
/// and the scratch parts on success).
struct Made<'d> {
    device: &'d Device,
    textures: Vec<TextureHandle>,
    buffers: Vec<BufferHandle>,
    groups: Vec<BindGroupHandle>,
}

impl Made<'_> {
    fn texture(&mut self, t: rhi_vulkan::Result<TextureHandle>) -> Result<TextureHandle> {
        let t = t?;
        self.textures.push(t);
        Ok(t)
    }
    fn buffer(&mut self, b: rhi_vulkan::Result<BufferHandle>) -> Result<BufferHandle> {
        let b = b?;
        self.buffers.push(b);
        Ok(b)
    }
    fn group(&mut self, g: rhi_vulkan::Result<BindGroupHandle>) -> Result<BindGroupHandle> {
        let g = g?;
        self.groups.push(g);
        Ok(g)
    }
}

impl Drop for Made<'_> {
    fn drop(&mut self) {
        for &g in &self.groups {
            self.device.destroy_bind_group(g);
        }
        for &t in &self.textures {
            self.device.destroy_texture(t);
        }
        for &b in &self.buffers {
            self.device.destroy_buffer(b);
        }
    }
}
