//! Materials (UE's UMaterial and UMaterialInstance).
//!
//! A *parent* [`Material`] is a WGSL material function, a blend mode, a
//! shading model, two-sidedness and declared parameters (scalars, vectors,
//! textures with their samplers; see [`parameters`]). A
//! [`MaterialInstance`] is a parent plus parameter overrides. Both are
//! named by a [`MaterialId`] and both can be drawn with; any number of
//! instances share their parent's pipelines.
//!
//! What a change costs (the cached-command promise):
//! - a parameter change (scalar or vector, on a parent or an instance) is a
//!   write of that material's block of the GPU table — no command and no
//!   pipeline is rebuilt ([`MaterialRegistry::set_parameter`]);
//! - a texture change gives that material the bind group of its new
//!   textures (shared with every material of the same parent layout that
//!   binds the same textures, made when none does:
//!   `material::shared_bindings`) and rebuilds only the cached commands
//!   that draw with it;
//! - a parent's shader, blend mode, shading model, sidedness or
//!   declarations change rebuilds only the commands that draw with the
//!   parent or one of its instances, and only its pipelines are made again;
//!   pipelines of a shader no material uses any more are destroyed;
//! - creating a material or an instance rebuilds no existing command.
//!
//! A parent is checked when it is created: its declarations must lay out
//! ([`ParameterLayout::new`]) and its shader, with the generated
//! accessors, must compile and bind only what the pass binds in every
//! pipeline it can be drawn with — each pass its blend mode puts it in
//! (a masked material's depth prepass and shadow depth too) over every
//! vertex factory ([`crate::mesh_pass::validate_material`]; errors say
//! `file:line:column` of the material's own source and the pass and
//! factory). An instance is checked against its parent's declarations.
//!
//! Ids: see [`MaterialId`] — a slot of the tables and its generation, so
//! an id kept after its material was destroyed never names the material
//! that took the slot; it resolves to the default material, as an unknown
//! id does, and setting or destroying under it is an error.

mod game_side;
pub mod parameters;
mod registry;
mod shader_interner;
mod shared_bindings;
mod slot_set;

pub use crate::ids::MaterialId;
pub(crate) use crate::ids::{MaterialIds, SlotIds};
pub(crate) use game_side::MaterialMirror;
pub use parameters::{MaterialParameter, ParameterLayout, ParameterValue, MATERIAL_BLOCK_SIZE};
pub use registry::{MaterialRegistry, ResolvedMaterial};

use crate::error::{RendererError, Result};
use glam::{Vec3, Vec4};
use std::sync::Arc;

/// How a material's output is composited (UE's EBlendMode).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum BlendMode {
    /// Writes depth and colour; nothing behind it shows.
    #[default]
    Opaque,
    /// Opaque with texels whose opacity is under the material's
    /// `opacity_mask_clip` discarded — in the depth passes too.
    Masked,
    /// Alpha-blended, drawn back to front after opaque geometry, no depth write.
    Translucent,
    /// Added to what is behind it, no depth write.
    Additive,
}

impl BlendMode {
    /// Whether it blends with what is behind it ([`BlendMode::Translucent`] or
    /// [`BlendMode::Additive`]): drawn in the translucency pass, without depth
    /// writes.
    pub fn is_translucent(self) -> bool {
        matches!(self, BlendMode::Translucent | BlendMode::Additive)
    }
    pub(crate) fn index(self) -> u32 {
        self as u32
    }
}

/// How a material is lit (UE's EMaterialShadingModel).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum ShadingModel {
    /// Metallic-roughness PBR under the scene's lights.
    #[default]
    DefaultLit,
    /// Base colour + emissive, no lighting.
    Unlit,
}

/// A WGSL material function: `fn material_main(in: MaterialInput) -> MaterialOutput`
/// (the structs are declared in `scene.inc.wgsl`).
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct MaterialShader {
    /// Unique name; also the file name in shader errors.
    pub name: String,
    /// The WGSL source defining `material_main`.
    pub wgsl: String,
}

/// The default lit material function: base color × vertex color.
pub const DEFAULT_MATERIAL_WGSL: &str = include_str!("../../shaders/default_material.inc.wgsl");

impl MaterialShader {
    /// A shader named `name` with source `wgsl` (compiled when a material
    /// using it is created).
    pub fn new(name: &str, wgsl: &str) -> Arc<Self> {
        Arc::new(Self { name: name.into(), wgsl: wgsl.into() })
    }
    /// The shared default material function.
    pub fn default_lit() -> Arc<Self> {
        static DEFAULT: std::sync::OnceLock<Arc<MaterialShader>> = std::sync::OnceLock::new();
        DEFAULT.get_or_init(|| Self::new("default_material.wgsl", DEFAULT_MATERIAL_WGSL)).clone()
    }
}

/// The built-in parameters every material has (the first 64 bytes of its
/// block; instances override them by name: `base_color`, `metallic`,
/// `roughness`, `specular`, `opacity`, `emissive`, `custom`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MaterialParams {
    /// Linear RGB colour and alpha; the default material multiplies it by the
    /// vertex colour and uses the alpha as opacity.
    pub base_color: Vec4,
    /// 0 (dielectric) to 1 (metal); clamped to 0..=1 when shading.
    pub metallic: f32,
    /// 0 (mirror) to 1 (rough); clamped to 0.03..=1 when shading.
    pub roughness: f32,
    /// Dielectric reflectance, 0..=1 (0.5 = 4%, UE's default).
    pub specular: f32,
    /// 0 (invisible) to 1; read by translucent and masked materials.
    pub opacity: f32,
    /// Linear RGB light emitted, added after lighting.
    pub emissive: Vec3,
    /// Free for material functions.
    pub custom: Vec4,
}

impl Default for MaterialParams {
    fn default() -> Self {
        Self {
            base_color: Vec4::new(0.8, 0.8, 0.8, 1.0),
            metallic: 0.0,
            roughness: 0.5,
            specular: 0.5,
            opacity: 1.0,
            emissive: Vec3::ZERO,
            custom: Vec4::ZERO,
        }
    }
}

impl MaterialParams {
    fn write_block(&self, block: &mut parameters::MaterialBlock) {
        block[0] = self.base_color.to_array();
        block[1] = [self.metallic, self.roughness, self.specular, self.opacity];
        block[2] = self.emissive.extend(0.0).to_array();
        block[3] = self.custom.to_array();
    }
}

/// A parent material.
#[derive(Clone, Debug, PartialEq)]
pub struct Material {
    /// The material function.
    pub shader: Arc<MaterialShader>,
    /// How its output is composited.
    pub blend_mode: BlendMode,
    /// How it is lit.
    pub shading_model: ShadingModel,
    /// Draw both faces (no back-face culling).
    pub two_sided: bool,
    /// Masked materials discard texels whose opacity is below this (UE's
    /// OpacityMaskClipValue); in (0, 1].
    pub opacity_mask_clip: f32,
    /// The built-in parameters' defaults.
    pub params: MaterialParams,
    /// Declared parameters, read by the material function through generated
    /// accessors (see [`parameters`]).
    pub parameters: Vec<MaterialParameter>,
}

impl Default for Material {
    fn default() -> Self {
        Self {
            shader: MaterialShader::default_lit(),
            blend_mode: BlendMode::Opaque,
            shading_model: ShadingModel::DefaultLit,
            two_sided: false,
            opacity_mask_clip: 0.5,
            params: MaterialParams::default(),
            parameters: Vec::new(),
        }
    }
}

impl Material {
    /// The default shader with a base color.
    pub fn colored(base_color: Vec4) -> Self {
        Self { params: MaterialParams { base_color, ..Default::default() }, ..Default::default() }
    }
    /// A material running `wgsl` (named `name` in errors) with the default settings.
    pub fn with_shader(name: &str, wgsl: &str) -> Self {
        Self { shader: MaterialShader::new(name, wgsl), ..Default::default() }
    }
    /// The same material with `blend_mode`.
    pub fn with_blend(mut self, blend_mode: BlendMode) -> Self {
        self.blend_mode = blend_mode;
        self
    }
    /// The same material, two-sided or not.
    pub fn with_two_sided(mut self, two_sided: bool) -> Self {
        self.two_sided = two_sided;
        self
    }
    /// The same material with `shading_model`.
    pub fn with_shading_model(mut self, shading_model: ShadingModel) -> Self {
        self.shading_model = shading_model;
        self
    }
    /// The same material with the built-in parameters' defaults `params`.
    pub fn with_params(mut self, params: MaterialParams) -> Self {
        self.params = params;
        self
    }
    /// Declares a parameter.
    pub fn with_parameter(mut self, parameter: MaterialParameter) -> Self {
        self.parameters.push(parameter);
        self
    }

    /// The layout of the declared parameters, or
    /// [`RendererError::InvalidMaterial`] naming what is wrong.
    pub fn layout(&self) -> Result<ParameterLayout> {
        if !(self.opacity_mask_clip > 0.0 && self.opacity_mask_clip <= 1.0) {
            return Err(self.invalid(format!("opacity_mask_clip {} is not in (0, 1]", self.opacity_mask_clip)));
        }
        let p = &self.params;
        let finite = p.base_color.is_finite()
            && p.emissive.is_finite()
            && p.custom.is_finite()
            && [p.metallic, p.roughness, p.specular, p.opacity].iter().all(|v| v.is_finite());
        if !finite {
            return Err(self.invalid("a built-in parameter is not finite".into()));
        }
        ParameterLayout::new(&self.parameters).map_err(|reason| self.invalid(reason))
    }

    fn invalid(&self, reason: String) -> RendererError {
        RendererError::InvalidMaterial { material: self.shader.name.clone(), reason }
    }

    /// The material function with the generated accessors and constants
    /// after it: what the passes compose (the material's own lines first,
    /// so errors in them keep their numbers).
    pub(crate) fn effective_wgsl(&self, layout: &ParameterLayout) -> String {
        let shading = match self.shading_model {
            ShadingModel::DefaultLit => 0,
            ShadingModel::Unlit => 1,
        };
        format!(
            "{}\nconst SHADING_MODEL: u32 = {shading}u;\nconst MATERIAL_MASK_CLIP: f32 = {:?};\n{}",
            self.shader.wgsl,
            self.opacity_mask_clip,
            layout.accessors_wgsl()
        )
    }

    /// The block of the GPU table this parent's defaults make.
    pub(crate) fn default_block(&self, layout: &ParameterLayout) -> parameters::MaterialBlock {
        let mut block = [[0.0; 4]; parameters::MATERIAL_BLOCK_VECTORS];
        self.params.write_block(&mut block);
        for p in &self.parameters {
            if let Some(slot) = layout.find(&p.name) {
                ParameterLayout::write(&mut block, slot, &p.default);
            }
        }
        block
    }
}

/// A material instance (UE's UMaterialInstanceConstant): a parent and
/// overrides of its parameters by name.
#[derive(Clone, Debug, PartialEq)]
pub struct MaterialInstance {
    /// A parent material (not an instance).
    pub parent: MaterialId,
    /// Parameter values by name, replacing the parent's defaults; each must
    /// name one of the parent's parameters, with its kind.
    pub overrides: Vec<(String, ParameterValue)>,
}

impl MaterialInstance {
    /// An instance of `parent` with no overrides.
    pub fn of(parent: MaterialId) -> Self {
        Self { parent, overrides: Vec::new() }
    }
    /// Overrides `name` (a later override of the same name wins).
    pub fn with(mut self, name: &str, value: ParameterValue) -> Self {
        self.overrides.retain(|(n, _)| n != name);
        self.overrides.push((name.into(), value));
        self
    }
    /// The same instance with the scalar parameter `name` set to `value`.
    pub fn with_scalar(self, name: &str, value: f32) -> Self {
        self.with(name, ParameterValue::Scalar(value))
    }
    /// The same instance with the vector parameter `name` set to `value`.
    pub fn with_vector(self, name: &str, value: Vec4) -> Self {
        self.with(name, ParameterValue::Vector(value))
    }
    /// The same instance with the texture parameter `name` set to `value`.
    pub fn with_texture(self, name: &str, value: crate::texture::TextureId) -> Self {
        self.with(name, ParameterValue::Texture(value))
    }

    /// Checks the overrides against the parent's layout.
    pub fn check(&self, parent_layout: &ParameterLayout) -> Result<()> {
        for (name, value) in &self.overrides {
            parent_layout
                .check_override(name, value)
                .map_err(|reason| RendererError::InvalidMaterial { material: format!("instance of {}", self.parent), reason })?;
        }
        Ok(())
    }
}

/// Interned material shader, the pipeline-relevant part of a material.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct MaterialShaderId(pub u32);
