//! Materials: a WGSL material function, a blend mode, two-sidedness and
//! parameters (UE's UMaterial + a material instance's parameters, collapsed).
//!
//! The material *shader* (its WGSL) selects the pipeline; the *parameters*
//! live in one GPU table indexed by material id, so materials that share a
//! shader share pipelines and differ only in the `material_index` of their
//! draw commands. Changing parameters rebuilds nothing; changing a shader or
//! blend mode invalidates cached draw commands (a global invalidation), and
//! the pipelines of a shader no material uses any more (or whose source was
//! edited) are destroyed.
//!
//! A material is checked when it is set: its shader must compile
//! ([`Material::validate`], errors say `file:line:column`) and its id must
//! exist or be the next one, so the tables grow with the materials made,
//! never with the number an id carries.

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

/// Most distinct material sources whose successful compile check is
/// remembered (the cache is emptied when full; a miss only costs a compile).
const VALIDATED_CACHE_CAP: usize = 1024;

/// (material WGSL, blend mode, two-sided) combinations that compiled.
fn validated_cache() -> &'static std::sync::Mutex<std::collections::HashSet<(String, BlendMode, bool)>> {
    static CACHE: std::sync::OnceLock<std::sync::Mutex<std::collections::HashSet<(String, BlendMode, bool)>>> = std::sync::OnceLock::new();
    CACHE.get_or_init(Default::default)
}

impl Material {
    /// Compiles the material's shader composed into the base pass (the pass
    /// that evaluates it, with its blend mode and sidedness, over the local
    /// vertex factory) and returns [`RendererError::MaterialShader`] — naming
    /// the material and the file:line:column of the error — when it does not
    /// compile. Successful checks are remembered by source, so checking the
    /// same WGSL again costs a hash lookup.
    pub fn validate(&self) -> Result<()> {
        let key = (self.shader.wgsl.clone(), self.blend_mode, self.two_sided);
        let cache = || validated_cache().lock().unwrap_or_else(|p| p.into_inner());
        if cache().contains(&key) {
            return Ok(());
        }
        let pipeline_key = crate::mesh_pass::PassPipelineKey {
            pass: crate::mesh_pass::MeshPass::Base,
            vertex_factory: crate::vertex_factory::VertexFactoryType::name(&crate::vertex_factory::LOCAL_VERTEX_FACTORY),
            material_shader: MaterialShaderId(0),
            blend: self.blend_mode,
            two_sided: self.two_sided,
            reverse_culling: false,
        };
        let source = crate::mesh_pass::PipelineLibrary::compose(&pipeline_key, &crate::vertex_factory::LOCAL_VERTEX_FACTORY, &self.shader.wgsl);
        match rhi_vulkan::compile_wgsl(&self.shader.name, &source) {
            Ok(_) => {
                let mut c = cache();
                if c.len() >= VALIDATED_CACHE_CAP {
                    c.clear();
                }
                c.insert(key);
                Ok(())
            }
            Err(rhi_vulkan::RhiError::Shader(mut e)) => {
                // The material's source comes first in the composed shader, so
                // its lines are the material's own; a line past it is in the
                // renderer's code around the material (e.g. a missing
                // `material_main`).
                let material_lines = self.shader.wgsl.lines().count().max(1) as u32;
                if e.line > material_lines {
                    e.file = format!("{} (in the base pass composed around it)", self.shader.name);
                }
                Err(RendererError::MaterialShader { material: self.shader.name.clone(), error: e })
            }
            Err(e) => Err(e.into()),
        }
    }
}

/// All materials of the scene (render thread).
///
/// Material ids are dense: a material is set under an id that exists or
/// under the next one (`len()`), so the tables grow with the materials
/// created, never with the number an id carries. Material shaders are
/// interned and reference-counted: one no material uses any more is
/// released, and its id is reported by [`Self::take_stale_shaders`] so the
/// pipelines made from it can be destroyed.
pub struct MaterialRegistry {
    materials: Vec<Option<Material>>,
    shader_ids: Vec<MaterialShaderId>,
    shaders: Vec<Option<Arc<MaterialShader>>>,
    /// Materials using each shader.
    shader_refs: Vec<u32>,
    shader_by_name: HashMap<String, MaterialShaderId>,
    /// Shaders released or edited since the last `take_stale_shaders`.
    stale_shaders: Vec<MaterialShaderId>,
    /// Released shader ids whose pipelines are gone: reusable.
    free_shaders: Vec<MaterialShaderId>,
    pub(crate) gpu_dirty: bool,
}

impl Default for MaterialRegistry {
    fn default() -> Self {
        let mut r = Self {
            materials: Vec::new(),
            shader_ids: Vec::new(),
            shaders: Vec::new(),
            shader_refs: Vec::new(),
            shader_by_name: HashMap::new(),
            stale_shaders: Vec::new(),
            free_shaders: Vec::new(),
            gpu_dirty: true,
        };
        // The default shader is a constant the renderer's tests compile in every combination.
        r.set_unchecked(MaterialId::DEFAULT, Material::default());
        r
    }
}

impl MaterialRegistry {
    fn intern(&mut self, shader: &Arc<MaterialShader>) -> MaterialShaderId {
        if let Some(&id) = self.shader_by_name.get(&shader.name) {
            let i = id.0 as usize;
            if self.shaders[i].as_ref().is_some_and(|s| s.wgsl != shader.wgsl) {
                // Same name, new source: a shader edit; replace it (its pipelines go).
                self.shaders[i] = Some(shader.clone());
                self.stale_shaders.push(id);
            }
            self.shader_refs[i] += 1;
            return id;
        }
        let id = match self.free_shaders.pop() {
            Some(id) => {
                self.shaders[id.0 as usize] = Some(shader.clone());
                self.shader_refs[id.0 as usize] = 1;
                id
            }
            None => {
                self.shaders.push(Some(shader.clone()));
                self.shader_refs.push(1);
                MaterialShaderId(self.shaders.len() as u32 - 1)
            }
        };
        self.shader_by_name.insert(shader.name.clone(), id);
        id
    }

    fn release_shader(&mut self, id: MaterialShaderId) {
        let i = id.0 as usize;
        self.shader_refs[i] -= 1;
        if self.shader_refs[i] == 0 {
            if let Some(s) = self.shaders[i].take() {
                self.shader_by_name.remove(&s.name);
            }
            self.stale_shaders.push(id);
        }
    }

    /// Adds or replaces a material. `id` must exist or be the next one
    /// (`len()`); the material's shader must compile ([`Material::validate`]).
    /// On an error nothing changes.
    pub fn set(&mut self, id: MaterialId, material: Material) -> Result<MaterialChange> {
        if id.0 as usize > self.materials.len() {
            return Err(RendererError::UnknownMaterial(id.0));
        }
        material.validate()?;
        Ok(self.set_unchecked(id, material))
    }

    fn set_unchecked(&mut self, id: MaterialId, material: Material) -> MaterialChange {
        let i = id.0 as usize;
        debug_assert!(i <= self.materials.len());
        if self.materials.len() == i {
            self.materials.push(None);
            self.shader_ids.push(MaterialShaderId(0));
        }
        let change = match &self.materials[i] {
            Some(old) if old.shader == material.shader && old.blend_mode == material.blend_mode && old.two_sided == material.two_sided => {
                MaterialChange::Parameters
            }
            _ => MaterialChange::Pipeline,
        };
        let new_shader = self.intern(&material.shader);
        if let Some(_old) = self.materials[i].replace(material) {
            self.release_shader(self.shader_ids[i]);
        }
        self.shader_ids[i] = new_shader;
        self.gpu_dirty = true;
        change
    }

    /// Removes a material: draws that name it get the default material, and
    /// its shader is released when no other material uses it. The default
    /// material cannot be removed; an id that names no material is an error.
    /// The id is not reused by `RenderThread::create_material`; setting a
    /// material under it again brings it back.
    pub fn remove(&mut self, id: MaterialId) -> Result<()> {
        let i = id.0 as usize;
        if id == MaterialId::DEFAULT || self.materials.get(i).is_none_or(|m| m.is_none()) {
            return Err(RendererError::UnknownMaterial(id.0));
        }
        self.materials[i] = None;
        self.release_shader(self.shader_ids[i]);
        self.gpu_dirty = true;
        Ok(())
    }

    /// Material shaders released or edited since the last call: pipelines
    /// made from them must be destroyed. Their ids become reusable now.
    pub fn take_stale_shaders(&mut self) -> Vec<MaterialShaderId> {
        let stale = std::mem::take(&mut self.stale_shaders);
        for &id in &stale {
            if self.shaders[id.0 as usize].is_none() && !self.free_shaders.contains(&id) {
                self.free_shaders.push(id);
            }
        }
        stale
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
        self.shader_ids.get(id.0 as usize).copied().unwrap_or(self.default_shader_id())
    }

    /// The shader interned under `id` (`None` once no material uses it).
    pub fn shader(&self, id: MaterialShaderId) -> Option<&Arc<MaterialShader>> {
        self.shaders.get(id.0 as usize).and_then(|s| s.as_ref())
    }

    /// Interned shaders in use.
    pub fn shader_count(&self) -> usize {
        self.shaders.iter().filter(|s| s.is_some()).count()
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
        assert_eq!(r.set(MaterialId(1), Material::colored(Vec4::ONE)).unwrap(), MaterialChange::Pipeline, "new");
        assert_eq!(r.set(MaterialId(1), Material::colored(Vec4::X)).unwrap(), MaterialChange::Parameters);
        assert_eq!(r.set(MaterialId(1), Material::colored(Vec4::X).with_blend(BlendMode::Translucent)).unwrap(), MaterialChange::Pipeline);
        let custom = MaterialShader::new("red.wgsl", "fn material_main(i: MaterialInput) -> MaterialOutput { return default_material(i); }");
        assert_eq!(r.set(MaterialId(2), Material { shader: custom, ..Default::default() }).unwrap(), MaterialChange::Pipeline);
        assert_ne!(r.shader_id(MaterialId(2)), r.shader_id(MaterialId(1)));
        assert_eq!(r.shader_id(MaterialId(1)), r.default_shader_id());
        assert_eq!(r.gpu_table().len(), 3);
        assert_eq!(r.resolve(MaterialId(9)).0, MaterialId::DEFAULT);
    }

    #[test]
    fn ids_past_the_next_one_are_rejected_and_change_nothing() {
        let mut r = MaterialRegistry::default();
        for id in [2, 1000, u32::MAX] {
            assert!(matches!(r.set(MaterialId(id), Material::default()), Err(RendererError::UnknownMaterial(i)) if i == id));
        }
        assert_eq!(r.len(), 1, "the tables did not grow");
        r.set(MaterialId(1), Material::default()).unwrap();
        r.set(MaterialId(2), Material::default()).unwrap();
        assert_eq!(r.len(), 3);
    }

    #[test]
    fn a_material_that_does_not_compile_is_rejected_with_where() {
        let mut r = MaterialRegistry::default();
        let wgsl = "fn material_main(in: MaterialInput) -> MaterialOutput {\n    var out = default_material(in);\n    out.opacity = nope;\n    return out;\n}\n";
        let bad = Material { shader: MaterialShader::new("broken.wgsl", wgsl), ..Default::default() };
        let e = r.set(MaterialId(1), bad.clone()).unwrap_err();
        let RendererError::MaterialShader { material, error } = &e else { panic!("{e:?}") };
        assert_eq!(material, "broken.wgsl");
        assert_eq!((error.file.as_str(), error.line, error.column), ("broken.wgsl", 3, 19), "{e}");
        assert!(e.to_string().contains("broken.wgsl:3:19"), "{e}");
        assert_eq!(r.len(), 1, "nothing changed");
        // A missing material_main is found in the pass around the material.
        let missing = Material { shader: MaterialShader::new("empty.wgsl", "fn other() {}"), ..Default::default() };
        let e = r.set(MaterialId(1), missing).unwrap_err();
        assert!(e.to_string().contains("empty.wgsl (in the base pass"), "{e}");
        assert!(e.to_string().contains("material_main"), "{e}");
    }

    #[test]
    fn shaders_no_material_uses_are_released_and_reported_stale() {
        let mut r = MaterialRegistry::default();
        let shader = |n: u32| MaterialShader::new(&format!("m{n}.wgsl"), &format!("fn material_main(i: MaterialInput) -> MaterialOutput {{ var o = default_material(i); o.roughness = {n}.0; return o; }}"));
        r.set(MaterialId(1), Material { shader: shader(1), ..Default::default() }).unwrap();
        let first = r.shader_id(MaterialId(1));
        assert!(r.take_stale_shaders().is_empty());
        for n in 2..50 {
            r.set(MaterialId(1), Material { shader: shader(n), ..Default::default() }).unwrap();
            let stale = r.take_stale_shaders();
            assert_eq!(stale.len(), 1, "the replaced shader is stale");
            assert!(r.shader(stale[0]).is_none());
            assert_eq!(r.shader_count(), 2, "default + the one in use");
        }
        assert!(r.shader_id(MaterialId(1)).0 <= first.0 + 1, "ids are reused");
        // A shader edit under the same name is stale but stays.
        let edited = MaterialShader::new("m49.wgsl", "fn material_main(i: MaterialInput) -> MaterialOutput { return default_material(i); }");
        r.set(MaterialId(1), Material { shader: edited, ..Default::default() }).unwrap();
        assert_eq!(r.take_stale_shaders(), vec![r.shader_id(MaterialId(1))]);
    }
}
