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
//! name a slot that exists (with that slot's generation) or the next one,
//! so the tables grow with the materials alive at once, never with the
//! number an id carries.
//!
//! A [`MaterialId`] is a slot of the tables and a generation: a destroyed
//! material's slot is handed out again with the next generation, so an id
//! kept after its material was destroyed (stale) never names the material
//! that took the slot: it resolves to the default material, as an unknown
//! id does, and setting or destroying under it is an error.

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
///
/// The number packs a slot of the material tables (its low
/// [`Self::SLOT_BITS`] bits; the GPU table is indexed by it) and the slot's
/// generation (the high bits), which grows each time a material in the slot
/// is destroyed. `MaterialId(n)` for `n` below [`Self::MAX_SLOTS`] is slot
/// `n` in its first generation, the id `create_material` returns the first
/// time it fills that slot. A slot whose generations are used up is retired:
/// never handed out again, so no id ever names two materials.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct MaterialId(pub u32);

impl MaterialId {
    pub const DEFAULT: MaterialId = MaterialId(0);
    /// Bits of the slot; the rest carry the generation.
    pub const SLOT_BITS: u32 = 20;
    /// Slots of the material tables: the most materials alive at once (the
    /// default included).
    pub const MAX_SLOTS: u32 = 1 << Self::SLOT_BITS;
    /// The last generation of a slot.
    pub const MAX_GENERATION: u32 = u32::MAX >> Self::SLOT_BITS;

    /// The id of `slot` in `generation`, or `None` when either is out of range.
    pub const fn new(slot: u32, generation: u32) -> Option<Self> {
        if slot < Self::MAX_SLOTS && generation <= Self::MAX_GENERATION {
            Some(Self(generation << Self::SLOT_BITS | slot))
        } else {
            None
        }
    }

    /// The slot: the material's index in the tables (and the GPU table).
    pub const fn slot(self) -> u32 {
        self.0 & (Self::MAX_SLOTS - 1)
    }

    /// The slot's generation this id was handed out in.
    pub const fn generation(self) -> u32 {
        self.0 >> Self::SLOT_BITS
    }
}

impl std::fmt::Display for MaterialId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} (slot {}, generation {})", self.0, self.slot(), self.generation())
    }
}

/// Hands out material ids on the game side ([`crate::RenderThread`]): a new
/// slot, or a destroyed material's slot in its next generation (oldest freed
/// first, so generations are spent evenly and slots retire late). It mirrors
/// the slots of the render thread's [`MaterialRegistry`], which sees the same
/// creations and destructions in the same order.
#[derive(Debug)]
pub(crate) struct MaterialIds {
    /// Per slot: its current generation (of the live material, or the one the
    /// next material there gets; past `MAX_GENERATION` once retired), and
    /// whether a material is live in it.
    slots: Vec<(u32, bool)>,
    /// Free slots, oldest first.
    free: std::collections::VecDeque<u32>,
}

impl Default for MaterialIds {
    fn default() -> Self {
        Self { slots: vec![(0, true)], free: Default::default() }
    }
}

impl MaterialIds {
    /// The id the next [`Self::take`] hands out, or `None` when every slot
    /// is live or retired.
    pub(crate) fn peek(&self) -> Option<MaterialId> {
        match self.free.front() {
            Some(&slot) => MaterialId::new(slot, self.slots[slot as usize].0),
            None => MaterialId::new(self.slots.len() as u32, 0),
        }
    }

    /// Hands out the id [`Self::peek`] returned.
    pub(crate) fn take(&mut self) -> Option<MaterialId> {
        let id = self.peek()?;
        if self.free.front() == Some(&id.slot()) {
            self.free.pop_front();
        } else {
            self.slots.push((0, false));
        }
        self.slots[id.slot() as usize].1 = true;
        Some(id)
    }

    /// Whether `id` names a live material (the default is always live).
    pub(crate) fn is_live(&self, id: MaterialId) -> bool {
        self.slots.get(id.slot() as usize).is_some_and(|&(generation, live)| live && generation == id.generation())
    }

    /// Frees a live id's slot for the next generation (retires it after the
    /// last one). Returns false, changing nothing, for an id that is not live
    /// or the default.
    pub(crate) fn release(&mut self, id: MaterialId) -> bool {
        if id == MaterialId::DEFAULT || !self.is_live(id) {
            return false;
        }
        let slot = &mut self.slots[id.slot() as usize];
        *slot = (slot.0 + 1, false);
        if slot.0 <= MaterialId::MAX_GENERATION {
            self.free.push_back(id.slot());
        }
        true
    }
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
/// The tables have one entry per slot: a material is set under an id whose
/// slot exists, in that slot's current generation, or under the first
/// generation of the next slot (`len()`), so the tables grow with the
/// materials alive at once, never with the number an id carries. Removing
/// a material moves its slot to the next generation: the removed id is
/// stale from then on (resolved to the default, refused by `set` and
/// `remove`), and the slot takes the next material
/// ([`crate::RenderThread::create_material`] hands it out). Material shaders are
/// interned and reference-counted: one no material uses any more is
/// released, and its id is reported by [`Self::take_stale_shaders`] so the
/// pipelines made from it can be destroyed.
pub struct MaterialRegistry {
    materials: Vec<Option<Material>>,
    /// Each slot's generation: its material's, or for an empty slot the one
    /// the next material there gets (past `MaterialId::MAX_GENERATION`: retired).
    generations: Vec<u32>,
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
            generations: Vec::new(),
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

    /// Whether `id` may be set: its slot exists and is in `id`'s
    /// generation, or it is the first generation of the next slot.
    fn settable(&self, id: MaterialId) -> bool {
        match self.generations.get(id.slot() as usize) {
            Some(&generation) => generation == id.generation(),
            None => id.slot() as usize == self.generations.len() && id.generation() == 0,
        }
    }

    /// Adds or replaces a material. `id` must name a slot in its current
    /// generation (a live material, or a removed one's slot in its next
    /// generation) or be the first id of the next slot (`len()`); the
    /// material's shader must compile ([`Material::validate`]). On an error
    /// nothing changes.
    pub fn set(&mut self, id: MaterialId, material: Material) -> Result<MaterialChange> {
        if !self.settable(id) {
            return Err(RendererError::UnknownMaterial(id));
        }
        material.validate()?;
        Ok(self.set_unchecked(id, material))
    }

    fn set_unchecked(&mut self, id: MaterialId, material: Material) -> MaterialChange {
        let i = id.slot() as usize;
        debug_assert!(self.settable(id));
        if self.materials.len() == i {
            self.materials.push(None);
            self.generations.push(0);
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
    /// material cannot be removed; an id that names no live material (never
    /// set, removed, or stale) is an error. The id is stale from now on: its
    /// slot moves to the next generation, under which the next material set
    /// there lives (after the last generation the slot is retired).
    pub fn remove(&mut self, id: MaterialId) -> Result<()> {
        if id == MaterialId::DEFAULT || self.get(id).is_err() {
            return Err(RendererError::UnknownMaterial(id));
        }
        let i = id.slot() as usize;
        self.materials[i] = None;
        self.generations[i] += 1;
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

    /// The live material `id` names: an id never set, removed or stale
    /// (its slot since moved on) is [`RendererError::UnknownMaterial`].
    pub fn get(&self, id: MaterialId) -> Result<&Material> {
        let i = id.slot() as usize;
        self.materials
            .get(i)
            .and_then(|m| m.as_ref())
            .filter(|_| self.generations[i] == id.generation())
            .ok_or(RendererError::UnknownMaterial(id))
    }

    /// The material, or the default one when `id` names none (never set,
    /// removed or stale): the id returned is the one to draw with, whose
    /// [`MaterialId::slot`] indexes the GPU table.
    pub fn resolve(&self, id: MaterialId) -> (MaterialId, &Material) {
        match self.get(id) {
            Ok(m) => (id, m),
            Err(_) => (MaterialId::DEFAULT, self.get(MaterialId::DEFAULT).expect("default material")),
        }
    }

    /// The interned shader of the material `id` names (the default's when it names none).
    pub fn shader_id(&self, id: MaterialId) -> MaterialShaderId {
        match self.get(id) {
            Ok(_) => self.shader_ids[id.slot() as usize],
            Err(_) => self.default_shader_id(),
        }
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

    /// The GPU table, one entry per slot (empty slots get the default's parameters).
    pub fn gpu_table(&self) -> Vec<MaterialGpuData> {
        let default = MaterialGpuData::from(&self.get(MaterialId::DEFAULT).expect("default material").params);
        self.materials.iter().map(|m| m.as_ref().map(|m| MaterialGpuData::from(&m.params)).unwrap_or(default)).collect()
    }

    /// Slots of the tables (live, empty and retired), the default's included:
    /// the length of the GPU table.
    pub fn len(&self) -> usize {
        self.materials.len()
    }

    /// Materials alive, the default included.
    pub fn live(&self) -> usize {
        self.materials.iter().filter(|m| m.is_some()).count()
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
    fn ids_pack_a_slot_and_a_generation() {
        let id = MaterialId::new(5, 3).unwrap();
        assert_eq!((id.slot(), id.generation()), (5, 3));
        assert_eq!(MaterialId(7), MaterialId::new(7, 0).unwrap(), "a plain number is a slot's first generation");
        assert_eq!(MaterialId(u32::MAX), MaterialId::new(MaterialId::MAX_SLOTS - 1, MaterialId::MAX_GENERATION).unwrap());
        assert_eq!(MaterialId::new(MaterialId::MAX_SLOTS, 0), None);
        assert_eq!(MaterialId::new(0, MaterialId::MAX_GENERATION + 1), None);
        assert_eq!(MaterialId::DEFAULT.to_string(), "0 (slot 0, generation 0)");
    }

    #[test]
    fn destroyed_ids_are_reused_in_the_next_generation_oldest_first() {
        let mut ids = MaterialIds::default();
        assert!(ids.is_live(MaterialId::DEFAULT));
        let [a, b, c] = [(); 3].map(|_| ids.take().unwrap());
        assert_eq!([a, b, c], [MaterialId(1), MaterialId(2), MaterialId(3)]);
        assert!(!ids.release(MaterialId::DEFAULT), "the default stays");
        assert!(ids.release(b) && ids.release(a));
        assert!(!ids.is_live(b) && !ids.release(b), "a destroyed id is dead, once");
        let b2 = ids.take().unwrap();
        assert_eq!((b2.slot(), b2.generation()), (b.slot(), 1), "the oldest freed slot, next generation");
        assert!(ids.is_live(b2) && !ids.is_live(b), "the old id stays stale");
        assert!(!ids.release(b), "a stale id frees nothing");
        assert!(ids.is_live(b2));
        assert_eq!(ids.take().unwrap(), MaterialId::new(a.slot(), 1).unwrap());
        assert_eq!(ids.take().unwrap(), MaterialId(4), "no free slot: a new one");
        assert!(ids.is_live(c));
    }

    #[test]
    fn a_slot_whose_generations_are_used_up_is_retired() {
        let mut ids = MaterialIds::default();
        let first = ids.take().unwrap();
        let mut id = first;
        for generation in 1..=MaterialId::MAX_GENERATION {
            assert!(ids.release(id));
            id = ids.take().unwrap();
            assert_eq!((id.slot(), id.generation()), (first.slot(), generation));
        }
        assert!(ids.release(id));
        let next = ids.take().unwrap();
        assert_eq!((next.slot(), next.generation()), (first.slot() + 1, 0), "retired, never aliased");
        for generation in 0..=MaterialId::MAX_GENERATION {
            assert!(!ids.is_live(MaterialId::new(first.slot(), generation).unwrap()));
        }
        // The registry retires it too: no id of the slot can be set any more.
        let mut r = MaterialRegistry::default();
        r.set(first, Material::default()).unwrap();
        r.generations[first.slot() as usize] = MaterialId::MAX_GENERATION;
        r.remove(MaterialId::new(first.slot(), MaterialId::MAX_GENERATION).unwrap()).unwrap();
        for generation in 0..=MaterialId::MAX_GENERATION {
            assert!(r.set(MaterialId::new(first.slot(), generation).unwrap(), Material::default()).is_err());
        }
    }

    #[test]
    fn a_stale_id_resolves_to_the_default_and_is_refused() {
        let mut r = MaterialRegistry::default();
        let mut ids = MaterialIds::default();
        let red = ids.take().unwrap();
        r.set(red, Material::colored(Vec4::X)).unwrap();
        let custom = Material { shader: MaterialShader::new("stale.wgsl", "fn material_main(i: MaterialInput) -> MaterialOutput { return default_material(i); }"), ..Default::default() };
        assert!(ids.release(red));
        r.remove(red).unwrap();
        let green = ids.take().unwrap();
        assert_eq!(green.slot(), red.slot(), "the slot is reused");
        assert_ne!(green, red);
        r.set(green, Material { params: MaterialParams { base_color: Vec4::Y, ..Default::default() }, ..custom }).unwrap();
        assert_eq!(r.get(green).unwrap().params.base_color, Vec4::Y);
        assert!(matches!(r.get(red), Err(RendererError::UnknownMaterial(i)) if i == red));
        assert_eq!(r.resolve(red).0, MaterialId::DEFAULT, "the stale id draws with the default, not the slot's new material");
        assert_eq!(r.shader_id(red), r.default_shader_id());
        assert_ne!(r.shader_id(green), r.default_shader_id());
        assert!(matches!(r.set(red, Material::colored(Vec4::Z)), Err(RendererError::UnknownMaterial(i)) if i == red));
        assert!(matches!(r.remove(red), Err(RendererError::UnknownMaterial(i)) if i == red));
        assert_eq!(r.get(green).unwrap().params.base_color, Vec4::Y, "nothing changed");
        assert_eq!(r.gpu_table()[green.slot() as usize].base_color, [0.0, 1.0, 0.0, 0.0]);
        // A removed slot is set again only under its next generation.
        r.remove(green).unwrap();
        assert!(r.set(green, Material::default()).is_err());
        r.set(MaterialId::new(green.slot(), green.generation() + 1).unwrap(), Material::default()).unwrap();
    }

    #[test]
    fn the_tables_stay_as_large_as_the_most_materials_alive_under_churn() {
        let mut r = MaterialRegistry::default();
        let mut ids = MaterialIds::default();
        let mut live = std::collections::VecDeque::new();
        for i in 0..2000u32 {
            let id = ids.take().unwrap();
            r.set(id, Material::colored(Vec4::new(i as f32 / 2000.0, 0.0, 0.0, 1.0))).unwrap();
            live.push_back(id);
            if live.len() > 5 {
                let old = live.pop_front().unwrap();
                assert!(ids.release(old));
                r.remove(old).unwrap();
            }
        }
        assert_eq!(r.live(), 6, "the default and 5");
        assert!(r.len() <= 7, "{} slots for at most 6 live materials", r.len());
        assert_eq!(r.gpu_table().len(), r.len());
    }

    #[test]
    fn ids_past_the_next_one_are_rejected_and_change_nothing() {
        let mut r = MaterialRegistry::default();
        for id in [2, 1000, u32::MAX] {
            assert!(matches!(r.set(MaterialId(id), Material::default()), Err(RendererError::UnknownMaterial(i)) if i == MaterialId(id)));
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
