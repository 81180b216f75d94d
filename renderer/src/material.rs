//! Materials: a WGSL material function, a blend mode, two-sidedness and
//! parameters (UE's UMaterial + a material instance's parameters, collapsed).
//!
//! The material *shader* (its WGSL) selects the pipeline; the *parameters*
//! live in one GPU table indexed by material id, so materials that share a
//! shader share pipelines and differ only in the `material_index` of their
//! draw commands. Changing parameters rebuilds nothing; changing a shader or
//! blend mode invalidates cached draw commands (a global invalidation).

use crate::error::{RendererError, Result};
use bytemuck::{Pod, Zeroable};
use glam::{Vec3, Vec4};
use std::collections::HashMap;
use std::sync::Arc;

/// How a material's output is composited (UE's EBlendMode).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum BlendMode {
    #[default]
    Opaque,
    /// Opaque with `opacity < 0.5` discarded.
    Masked,
    /// Alpha-blended, drawn back to front after opaque geometry, no depth write.
    Translucent,
    /// Added to what is behind it, no depth write.
    Additive,
}

impl BlendMode {
    pub fn is_translucent(self) -> bool {
        matches!(self, BlendMode::Translucent | BlendMode::Additive)
    }
    pub(crate) fn index(self) -> u32 {
        self as u32
    }
}

/// A WGSL material function: `fn material_main(in: MaterialInput) -> MaterialOutput`
/// (the structs are declared in `scene.inc.wgsl`).
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct MaterialShader {
    /// Unique name; also the file name in shader errors.
    pub name: String,
    pub wgsl: String,
}

/// The default lit material function: base color × vertex color.
pub const DEFAULT_MATERIAL_WGSL: &str = include_str!("../shaders/default_material.inc.wgsl");

impl MaterialShader {
    pub fn new(name: &str, wgsl: &str) -> Arc<Self> {
        Arc::new(Self { name: name.into(), wgsl: wgsl.into() })
    }
    /// The shared default material function.
    pub fn default_lit() -> Arc<Self> {
        static DEFAULT: std::sync::OnceLock<Arc<MaterialShader>> = std::sync::OnceLock::new();
        DEFAULT.get_or_init(|| Self::new("default_material.wgsl", DEFAULT_MATERIAL_WGSL)).clone()
    }
}

/// Parameters every material function receives.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MaterialParams {
    pub base_color: Vec4,
    pub metallic: f32,
    pub roughness: f32,
    pub specular: f32,
    pub opacity: f32,
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

/// The GPU layout of [`MaterialParams`] (64 bytes).
#[repr(C)]
#[derive(Clone, Copy, Debug, Pod, Zeroable, PartialEq)]
pub struct MaterialGpuData {
    pub base_color: [f32; 4],
    pub mrso: [f32; 4],
    pub emissive: [f32; 4],
    pub custom: [f32; 4],
}

impl From<&MaterialParams> for MaterialGpuData {
    fn from(p: &MaterialParams) -> Self {
        Self {
            base_color: p.base_color.to_array(),
            mrso: [p.metallic, p.roughness, p.specular, p.opacity],
            emissive: p.emissive.extend(0.0).to_array(),
            custom: p.custom.to_array(),
        }
    }
}

/// A material.
#[derive(Clone, Debug, PartialEq)]
pub struct Material {
    pub shader: Arc<MaterialShader>,
    pub blend_mode: BlendMode,
    pub two_sided: bool,
    pub params: MaterialParams,
}

impl Default for Material {
    fn default() -> Self {
        Self { shader: MaterialShader::default_lit(), blend_mode: BlendMode::Opaque, two_sided: false, params: MaterialParams::default() }
    }
}

impl Material {
    /// The default shader with a base color.
    pub fn colored(base_color: Vec4) -> Self {
        Self { params: MaterialParams { base_color, ..Default::default() }, ..Default::default() }
    }
    pub fn with_blend(mut self, blend_mode: BlendMode) -> Self {
        self.blend_mode = blend_mode;
        self
    }
    pub fn with_two_sided(mut self, two_sided: bool) -> Self {
        self.two_sided = two_sided;
        self
    }
}

/// Names a material; `MaterialId::DEFAULT` always exists.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct MaterialId(pub u32);

impl MaterialId {
    pub const DEFAULT: MaterialId = MaterialId(0);
}

/// Interned material shader, the pipeline-relevant part of a material.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct MaterialShaderId(pub u32);

/// What a change to a material means for cached draw commands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MaterialChange {
    /// Only parameters changed: the GPU table is re-uploaded, no command rebuild.
    Parameters,
    /// Shader, blend mode or two-sidedness changed (or a new material): cached
    /// commands that use it must be rebuilt.
    Pipeline,
}

/// All materials of the scene (render thread).
pub struct MaterialRegistry {
    materials: Vec<Option<Material>>,
    shader_ids: Vec<MaterialShaderId>,
    shaders: Vec<Arc<MaterialShader>>,
    shader_by_name: HashMap<String, MaterialShaderId>,
    pub(crate) gpu_dirty: bool,
}

impl Default for MaterialRegistry {
    fn default() -> Self {
        let mut r = Self { materials: Vec::new(), shader_ids: Vec::new(), shaders: Vec::new(), shader_by_name: HashMap::new(), gpu_dirty: true };
        r.set(MaterialId::DEFAULT, Material::default());
        r
    }
}

impl MaterialRegistry {
    fn intern(&mut self, shader: &Arc<MaterialShader>) -> MaterialShaderId {
        if let Some(id) = self.shader_by_name.get(&shader.name) {
            if self.shaders[id.0 as usize].wgsl == shader.wgsl {
                return *id;
            }
            // Same name, new source: a shader edit; replace it.
            self.shaders[id.0 as usize] = shader.clone();
            return *id;
        }
        let id = MaterialShaderId(self.shaders.len() as u32);
        self.shaders.push(shader.clone());
        self.shader_by_name.insert(shader.name.clone(), id);
        id
    }

    /// Adds or replaces a material.
    pub fn set(&mut self, id: MaterialId, material: Material) -> MaterialChange {
        let i = id.0 as usize;
        if self.materials.len() <= i {
            self.materials.resize(i + 1, None);
            self.shader_ids.resize(i + 1, MaterialShaderId(0));
        }
        let change = match &self.materials[i] {
            Some(old) if old.shader == material.shader && old.blend_mode == material.blend_mode && old.two_sided == material.two_sided => {
                MaterialChange::Parameters
            }
            _ => MaterialChange::Pipeline,
        };
        self.shader_ids[i] = self.intern(&material.shader);
        self.materials[i] = Some(material);
        self.gpu_dirty = true;
        change
    }

    pub fn get(&self, id: MaterialId) -> Result<&Material> {
        self.materials.get(id.0 as usize).and_then(|m| m.as_ref()).ok_or(RendererError::UnknownMaterial(id.0))
    }

    /// The material, or the default one when `id` names none.
    pub fn resolve(&self, id: MaterialId) -> (MaterialId, &Material) {
        match self.get(id) {
            Ok(m) => (id, m),
            Err(_) => (MaterialId::DEFAULT, self.get(MaterialId::DEFAULT).expect("default material")),
        }
    }

    pub fn shader_id(&self, id: MaterialId) -> MaterialShaderId {
        self.shader_ids.get(id.0 as usize).copied().unwrap_or(MaterialShaderId(0))
    }

    pub fn shader(&self, id: MaterialShaderId) -> &Arc<MaterialShader> {
        &self.shaders[id.0 as usize]
    }

    pub fn default_shader_id(&self) -> MaterialShaderId {
        self.shader_ids[0]
    }

    /// The GPU table, one entry per material id (missing ids get the default).
    pub fn gpu_table(&self) -> Vec<MaterialGpuData> {
        let default = MaterialGpuData::from(&self.get(MaterialId::DEFAULT).expect("default material").params);
        self.materials.iter().map(|m| m.as_ref().map(|m| MaterialGpuData::from(&m.params)).unwrap_or(default)).collect()
    }

    pub fn len(&self) -> usize {
        self.materials.len()
    }

    pub fn is_empty(&self) -> bool {
        self.materials.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameter_changes_keep_pipelines_shader_changes_do_not() {
        let mut r = MaterialRegistry::default();
        assert_eq!(r.set(MaterialId(1), Material::colored(Vec4::ONE)), MaterialChange::Pipeline, "new");
        assert_eq!(r.set(MaterialId(1), Material::colored(Vec4::X)), MaterialChange::Parameters);
        assert_eq!(r.set(MaterialId(1), Material::colored(Vec4::X).with_blend(BlendMode::Translucent)), MaterialChange::Pipeline);
        let custom = MaterialShader::new("red.wgsl", "fn material_main(i: MaterialInput) -> MaterialOutput { return default_material(i); }");
        assert_eq!(r.set(MaterialId(2), Material { shader: custom, ..Default::default() }), MaterialChange::Pipeline);
        assert_ne!(r.shader_id(MaterialId(2)), r.shader_id(MaterialId(1)));
        assert_eq!(r.shader_id(MaterialId(1)), r.default_shader_id());
        assert_eq!(r.gpu_table().len(), 3);
        assert_eq!(r.resolve(MaterialId(9)).0, MaterialId::DEFAULT);
    }
}
