//! The render thread's table of materials: parents and instances by slot,
//! their GPU parameter blocks and bind groups, the interned shaders their
//! pipelines are made from, and what each change invalidates.
//!
//! The registry does not touch the device. It records what a change needs
//! and the scene carries it out in its next update: blocks to upload
//! ([`MaterialRegistry::take_dirty_blocks`]), bind groups to (re)make
//! ([`MaterialRegistry::take_rebind`]), material slots whose users' cached
//! commands must be rebuilt ([`MaterialRegistry::take_recache`]), shaders
//! whose pipelines go ([`MaterialRegistry::take_stale_shaders`]).
//!
//! Every operation costs what it touches, never the number of materials:
//! a parent's instances and a texture's users are indexes kept with the
//! entries (a parent edit visits its instances, a re-created texture its
//! users), so creating and destroying n materials is O(n) however many
//! others live.

use super::parameters::{MaterialBlock, ParameterSlot, MATERIAL_BLOCK_VECTORS};
use super::shader_interner::ShaderInterner;
use super::shared_bindings::SharedBindings;
use super::slot_set::SlotSet;
use super::{
    BlendMode, Material, MaterialId, MaterialInstance, MaterialShader, MaterialShaderId, ParameterLayout, ParameterValue, ShadingModel,
};
use crate::error::{RendererError, Result};
use crate::texture::TextureId;
use rhi_vulkan::{BindGroupHandle, SamplerDesc};
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use std::collections::BTreeSet;
use std::sync::Arc;

/// Per texture parameter of a material: the texture and its sampler.
pub(crate) type MaterialTextures = Vec<(TextureId, SamplerDesc)>;

/// What a slot holds.
#[derive(Clone, Debug)]
enum Definition {
    Parent(Material),
    Instance(MaterialInstance),
}

#[derive(Clone, Debug)]
struct Entry {
    def: Definition,
    /// The parent's layout (its own for a parent).
    layout: Arc<ParameterLayout>,
    /// The parent's slot (its own for a parent).
    parent: u32,
    block: MaterialBlock,
    /// Per texture parameter: the texture and its sampler.
    textures: Vec<(TextureId, SamplerDesc)>,
    bindings: Option<BindGroupHandle>,
}

/// What drawing with a material needs (the instance's parent's pipeline state).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ResolvedMaterial {
    /// The id drawn with: the requested one, or the default when it names none.
    pub id: MaterialId,
    /// The parent's blend mode.
    pub blend_mode: BlendMode,
    /// The parent's shading model.
    pub shading_model: ShadingModel,
    /// Whether the parent is two-sided.
    pub two_sided: bool,
    /// The parent's interned shader.
    pub shader: MaterialShaderId,
    /// Group 2 (its textures), when it has any.
    pub bindings: Option<BindGroupHandle>,
}

/// All materials of the scene (render thread).
///
/// The tables have one entry per slot: a material is set under an id whose
/// slot exists, in that slot's current generation, or under the first
/// generation of the next slot (`len()`), so the tables grow with the
/// materials alive at once, never with the number an id carries. Removing
/// a material moves its slot to the next generation: the removed id is
/// stale from then on (resolved to the default, refused by `set` and
/// `remove`). Parents' shaders are interned (`super::shader_interner`): one
/// no parent uses any more is reported by [`Self::take_stale_shaders`] so
/// its pipelines are destroyed.
pub struct MaterialRegistry {
    entries: Vec<Option<Entry>>,
    /// Each slot's generation: its material's, or for an empty slot the one
    /// the next material there gets (past `MaterialId::MAX_GENERATION`: retired).
    generations: Vec<u32>,
    /// Per slot: the interned shader of a parent.
    shader_ids: Vec<MaterialShaderId>,
    shaders: ShaderInterner,
    /// Per parent slot with live instances: their slots (no empty sets).
    instances: HashMap<u32, HashSet<u32>>,
    /// Per texture slot bound by a live material: the material slots whose
    /// textures name it (no empty sets), for [`Self::rebind_textures`].
    texture_users: HashMap<u32, HashSet<u32>>,
    /// Live materials (parents and instances), the default included.
    live: usize,
    // The slots to act on at the next update (`super::slot_set`: a change
    // costs O(1) however many pile up between updates).
    dirty_blocks: SlotSet,
    /// The table was never uploaded: upload it whole. (A table that grew
    /// past its GPU buffer is uploaded whole by the caller; a new slot
    /// within it is one dirty block.)
    pub(crate) table_dirty: bool,
    recache: SlotSet,
    rebind: SlotSet,
    /// The slots' bind groups, shared by equal layout and textures, and
    /// those no slot holds any more (to destroy).
    bindings: SharedBindings,
}

impl Default for MaterialRegistry {
    fn default() -> Self {
        let mut r = Self {
            entries: Vec::new(),
            generations: Vec::new(),
            shader_ids: Vec::new(),
            shaders: ShaderInterner::default(),
            instances: HashMap::default(),
            texture_users: HashMap::default(),
            live: 0,
            dirty_blocks: SlotSet::default(),
            table_dirty: true,
            recache: SlotSet::default(),
            rebind: SlotSet::default(),
            bindings: SharedBindings::default(),
        };
        // The default shader is a constant the renderer's tests compile in every combination.
        let default = Material::default();
        let layout = default.layout().expect("the default material lays out");
        r.set_parent_unchecked(MaterialId::DEFAULT, default, layout);
        r.recache.clear();
        r.dirty_blocks.clear();
        r
    }
}

impl MaterialRegistry {
    /// Whether `id` may be set: its slot exists and is in `id`'s
    /// generation, or it is the first generation of the next slot.
    fn settable(&self, id: MaterialId) -> bool {
        match self.generations.get(id.slot() as usize) {
            Some(&generation) => generation == id.generation(),
            None => id.slot() as usize == self.generations.len() && id.generation() == 0,
        }
    }

    fn entry(&self, id: MaterialId) -> Result<&Entry> {
        let i = id.slot() as usize;
        self.entries
            .get(i)
            .and_then(|m| m.as_ref())
            .filter(|_| self.generations[i] == id.generation())
            .ok_or(RendererError::UnknownMaterial(id))
    }

    fn make_room(&mut self, id: MaterialId) {
        let i = id.slot() as usize;
        if self.entries.len() == i {
            self.entries.push(None);
            self.generations.push(0);
            self.shader_ids.push(MaterialShaderId(0));
            // Not `table_dirty`: the new slot's block is dirty (every
            // caller marks it), and a table that outgrew its GPU buffer is
            // uploaded whole anyway — growing by one slot at a time must not
            // upload the whole table each time.
        }
    }

    /// Adds or replaces a parent material. `id` must name a slot in its
    /// current generation or be the first id of the next slot (`len()`); the
    /// material's declarations must lay out ([`Material::layout`]), and every
    /// instance of it must still fit them. On an error nothing changes. Its
    /// shader is not compiled here: the scene compiles it first
    /// ([`crate::mesh_pass::validate_material`]).
    pub fn set(&mut self, id: MaterialId, material: Material) -> Result<()> {
        if !self.settable(id) {
            return Err(RendererError::UnknownMaterial(id));
        }
        if matches!(self.entries.get(id.slot() as usize), Some(Some(Entry { def: Definition::Instance(_), .. }))) {
            return Err(RendererError::InvalidMaterial {
                material: id.to_string(),
                reason: "it is a material instance; set it with an instance".into(),
            });
        }
        let layout = material.layout()?;
        for s in self.instances_of(id.slot()) {
            if let Some(Entry { def: Definition::Instance(inst), .. }) = &self.entries[s as usize] {
                inst.check(&layout)?;
            }
        }
        self.set_parent_unchecked(id, material, layout);
        Ok(())
    }

    fn set_parent_unchecked(&mut self, id: MaterialId, material: Material, layout: ParameterLayout) {
        self.make_room(id);
        let i = id.slot() as usize;
        let effective = Arc::new(MaterialShader { name: material.shader.name.clone(), wgsl: material.effective_wgsl(&layout) });
        let new_shader = self.shaders.intern(effective);
        let pipeline_changed = match &self.entries[i] {
            Some(Entry { def: Definition::Parent(old), .. }) => {
                self.shader_ids[i] != new_shader || old.blend_mode != material.blend_mode || old.two_sided != material.two_sided
            }
            _ => true,
        };
        if let Some(Entry { def: Definition::Parent(_), .. }) = &self.entries[i] {
            self.shaders.release(self.shader_ids[i]);
        }
        self.shader_ids[i] = new_shader;
        let block = material.default_block(&layout);
        let textures = parent_textures(&material, &layout);
        let bindings = self.entries[i].as_mut().and_then(|e| e.bindings.take());
        let old = self.entries[i].take();
        if old.is_none() {
            self.live += 1;
        }
        index_textures(&mut self.texture_users, i as u32, old.as_ref().map_or(&[][..], |e| &e.textures), &textures);
        self.entries[i] =
            Some(Entry { def: Definition::Parent(material), layout: Arc::new(layout), parent: i as u32, block, textures, bindings });
        self.dirty_blocks.insert(i as u32);
        self.rebind.insert(i as u32);
        let instances: Vec<u32> = self.instances_of(i as u32).collect();
        for s in &instances {
            self.refresh_instance(*s);
        }
        if pipeline_changed {
            self.recache.insert(i as u32);
            self.recache.extend(instances);
        }
    }

    /// The slots of a parent's live instances (from the index: it costs
    /// their number, not the number of materials).
    fn instances_of(&self, parent: u32) -> impl Iterator<Item = u32> + '_ {
        self.instances.get(&parent).into_iter().flatten().copied()
    }

    /// Recomputes an instance's layout, block and textures from its parent
    /// (its overrides were checked against the parent's layout).
    fn refresh_instance(&mut self, slot: u32) {
        let Some(Entry { def: Definition::Instance(inst), parent, .. }) = &self.entries[slot as usize] else { return };
        let (inst, parent) = (inst.clone(), *parent);
        let Some(Entry { def: Definition::Parent(p), layout, .. }) = &self.entries[parent as usize] else { return };
        let layout = layout.clone();
        let (block, textures) = instance_block(p, &layout, &inst);
        let e = self.entries[slot as usize].as_mut().expect("live instance");
        e.layout = layout;
        e.block = block;
        if e.textures != textures {
            index_textures(&mut self.texture_users, slot, &e.textures, &textures);
            e.textures = textures;
            self.rebind.insert(slot);
        }
        self.dirty_blocks.insert(slot);
    }

    /// Adds or replaces a material instance under `id` (slot rules as
    /// [`Self::set`]). Its parent must be a live parent material and its
    /// overrides must name the parent's parameters with their kinds. An
    /// instance that keeps its parent changes no pipeline: its block is
    /// re-uploaded, and its bind group re-made when its textures changed.
    pub fn set_instance(&mut self, id: MaterialId, instance: MaterialInstance) -> Result<()> {
        if !self.settable(id) || id == MaterialId::DEFAULT {
            return Err(RendererError::UnknownMaterial(id));
        }
        let parent = self.entry(instance.parent).map_err(|_| RendererError::UnknownMaterial(instance.parent))?;
        let Definition::Parent(parent_material) = &parent.def else {
            return Err(RendererError::InvalidMaterial {
                material: id.to_string(),
                reason: format!("its parent {} is an instance", instance.parent),
            });
        };
        if instance.parent == id {
            return Err(RendererError::InvalidMaterial { material: id.to_string(), reason: "an instance cannot be its own parent".into() });
        }
        instance.check(&parent.layout)?;
        if let Some(instances) = self.instances.get(&id.slot()) {
            return Err(RendererError::MaterialInUse { material: id, instances: instances.len() as u32 });
        }
        let layout = parent.layout.clone();
        let (block, textures) = instance_block(parent_material, &layout, &instance);
        self.make_room(id);
        let i = id.slot() as usize;
        let parent_slot = instance.parent.slot();
        let old = self.entries[i].take();
        // Same parent: no command changes; same textures too: the bind group stays.
        let (same_parent, keep_bindings) = match &old {
            Some(Entry { def: Definition::Instance(o), textures: t, .. }) if o.parent == instance.parent => (true, *t == textures),
            _ => (false, false),
        };
        index_textures(&mut self.texture_users, i as u32, old.as_ref().map_or(&[][..], |e| &e.textures), &textures);
        let mut bindings = None;
        match old {
            None => self.live += 1,
            Some(Entry { def: Definition::Parent(_), bindings: held, .. }) => {
                self.shaders.release(self.shader_ids[i]);
                self.bindings.release(held);
            }
            Some(Entry { def: Definition::Instance(o), bindings: held, .. }) => {
                self.unindex_instance(o.parent.slot(), i as u32);
                if keep_bindings {
                    bindings = held;
                } else {
                    self.bindings.release(held);
                }
            }
        }
        self.instances.entry(parent_slot).or_default().insert(i as u32);
        self.entries[i] = Some(Entry { def: Definition::Instance(instance), layout, parent: parent_slot, block, textures, bindings });
        self.dirty_blocks.insert(i as u32);
        if !keep_bindings {
            self.rebind.insert(i as u32);
        }
        if !same_parent {
            self.recache.insert(i as u32);
        }
        Ok(())
    }

    /// Takes `slot` out of `parent`'s instances.
    fn unindex_instance(&mut self, parent: u32, slot: u32) {
        if let Some(set) = self.instances.get_mut(&parent) {
            set.remove(&slot);
            if set.is_empty() {
                self.instances.remove(&parent);
            }
        }
    }

    /// Sets one parameter of a material (a parent's default, or an
    /// instance's override). A scalar or vector is a write of the
    /// material's block (and, for a parent, of its instances that do not
    /// override it): no command or pipeline is rebuilt. A texture re-makes
    /// the bind groups that change. A name the material does not have, or a
    /// value of another kind, is an error and changes nothing.
    pub fn set_parameter(&mut self, id: MaterialId, name: &str, value: ParameterValue) -> Result<()> {
        let e = self.entry(id)?;
        let slot =
            e.layout.check_override(name, &value).map_err(|reason| RendererError::InvalidMaterial { material: id.to_string(), reason })?;
        let i = id.slot() as usize;
        let e = self.entries[i].as_mut().expect("checked live");
        match &mut e.def {
            Definition::Instance(inst) => {
                inst.overrides.retain(|(n, _)| n != name);
                inst.overrides.push((name.into(), value));
            }
            Definition::Parent(p) => {
                if let Some(d) = p.parameters.iter_mut().find(|d| d.name == name) {
                    d.default = value;
                } else {
                    set_builtin(&mut p.params, name, &value);
                }
            }
        }
        match slot {
            ParameterSlot::Texture(k) => {
                let ParameterValue::Texture(t) = value else { unreachable!("kind checked") };
                if e.textures[k as usize].0 != t {
                    let old = e.textures.clone();
                    e.textures[k as usize].0 = t;
                    index_textures(&mut self.texture_users, i as u32, &old, &e.textures);
                    self.rebind.insert(i as u32);
                }
            }
            _ => {
                ParameterLayout::write(&mut e.block, slot, &value);
                self.dirty_blocks.insert(i as u32);
            }
        }
        if matches!(e.def, Definition::Parent(_)) {
            let instances: Vec<u32> = self.instances_of(i as u32).collect();
            for s in instances {
                let overridden = matches!(&self.entries[s as usize], Some(Entry { def: Definition::Instance(inst), .. }) if inst.overrides.iter().any(|(n, _)| n == name));
                if !overridden {
                    self.refresh_instance(s);
                }
            }
        }
        Ok(())
    }

    /// Removes a material: draws that name it get the default material, and
    /// a parent's shader is released when no other parent uses it. The
    /// default material cannot be removed; a parent with live instances is
    /// [`RendererError::MaterialInUse`]; an id that names no live material
    /// (never set, removed, or stale) is [`RendererError::UnknownMaterial`].
    /// The id is stale from now on: its slot moves to the next generation.
    pub fn remove(&mut self, id: MaterialId) -> Result<()> {
        if id == MaterialId::DEFAULT || self.entry(id).is_err() {
            return Err(RendererError::UnknownMaterial(id));
        }
        if let Some(instances) = self.instances.get(&id.slot()) {
            return Err(RendererError::MaterialInUse { material: id, instances: instances.len() as u32 });
        }
        let i = id.slot() as usize;
        let e = self.entries[i].take().expect("checked live");
        self.live -= 1;
        index_textures(&mut self.texture_users, i as u32, &e.textures, &[]);
        match e.def {
            Definition::Parent(_) => self.shaders.release(self.shader_ids[i]),
            Definition::Instance(inst) => self.unindex_instance(inst.parent.slot(), i as u32),
        }
        self.bindings.release(e.bindings);
        self.generations[i] += 1;
        self.dirty_blocks.insert(i as u32);
        self.recache.insert(i as u32);
        self.rebind.remove(i as u32);
        Ok(())
    }

    /// Blocks changed since the last call (slots); empty after a whole-table
    /// upload is due ([`Self::table_dirty`]).
    pub(crate) fn take_dirty_blocks(&mut self) -> BTreeSet<u32> {
        self.dirty_blocks.take()
    }

    /// Material slots whose users' cached commands must be rebuilt.
    pub(crate) fn take_recache(&mut self) -> BTreeSet<u32> {
        self.recache.take()
    }

    /// Live slots whose bind group must be (re)made.
    pub(crate) fn take_rebind(&mut self) -> BTreeSet<u32> {
        let rebind = self.rebind.take();
        rebind.into_iter().filter(|&s| self.entries.get(s as usize).is_some_and(|e| e.is_some())).collect()
    }

    /// Bind groups alive (held by a slot).
    pub(crate) fn bind_groups_live(&self) -> usize {
        self.bindings.len()
    }

    /// Bind groups to destroy.
    pub(crate) fn take_retired_bindings(&mut self) -> Vec<BindGroupHandle> {
        self.bindings.take_retired()
    }

    /// Marks the slots whose textures include one of `texture_slots` for a
    /// re-bind (a texture was created or destroyed).
    pub(crate) fn rebind_textures(&mut self, texture_slots: &[u32]) {
        self.bindings.evict_textures(texture_slots);
        for t in texture_slots {
            if let Some(users) = self.texture_users.get(t) {
                self.rebind.extend(users.iter().copied());
            }
        }
    }

    /// A live slot's layout and textures (for making its bind group).
    pub(crate) fn binding_inputs(&self, slot: u32) -> Option<(Arc<ParameterLayout>, MaterialTextures)> {
        self.entries.get(slot as usize)?.as_ref().map(|e| (e.layout.clone(), e.textures.clone()))
    }

    /// The bind group already made for a live slot's layout and textures,
    /// held by other slots ([`super::shared_bindings`]): the slot takes it
    /// instead of a group of its own.
    pub(crate) fn shared_bindings(&self, slot: u32) -> Option<BindGroupHandle> {
        let e = self.entries.get(slot as usize)?.as_ref()?;
        self.bindings.find(&e.layout, &e.textures)
    }

    /// Installs a slot's bind group (one of [`Self::shared_bindings`], or
    /// a new one, then shared from now on); the slot lets its old one go.
    /// Its users' commands hold the old one: they are rebuilt.
    pub(crate) fn set_bindings(&mut self, slot: u32, bindings: Option<BindGroupHandle>) {
        let Some(Some(e)) = self.entries.get_mut(slot as usize) else {
            if let Some(g) = bindings.filter(|g| !self.bindings.is_held(*g)) {
                self.bindings.release(Some(g));
            }
            return;
        };
        if e.bindings != bindings {
            if let Some(g) = bindings {
                self.bindings.hold(g, &e.layout, &e.textures);
            }
            let old = std::mem::replace(&mut e.bindings, bindings);
            self.bindings.release(old);
            self.recache.insert(slot);
        }
    }

    /// Every bind group held (the scene is going).
    pub(crate) fn take_all_bindings(&mut self) -> Vec<BindGroupHandle> {
        for e in self.entries.iter_mut().flatten() {
            e.bindings = None;
        }
        self.bindings.take_all()
    }

    /// Material shaders released since the last call: pipelines made from
    /// them must be destroyed. Their ids become reusable now.
    pub fn take_stale_shaders(&mut self) -> Vec<MaterialShaderId> {
        self.shaders.take_stale()
    }

    /// The parent material `id` names: a parent's own, an instance's parent.
    /// An id that names no live material is [`RendererError::UnknownMaterial`].
    pub fn get(&self, id: MaterialId) -> Result<&Material> {
        let e = self.entry(id)?;
        match &self.entries[e.parent as usize] {
            Some(Entry { def: Definition::Parent(p), .. }) => Ok(p),
            _ => Err(RendererError::UnknownMaterial(id)),
        }
    }

    /// Whether `id` names a live material instance.
    pub fn is_instance(&self, id: MaterialId) -> bool {
        self.entry(id).is_ok_and(|e| matches!(e.def, Definition::Instance(_)))
    }

    /// What drawing with `id` needs, or the default material's when it
    /// names none (never set, removed or stale): `id` of the result is the
    /// one to draw with, whose [`MaterialId::slot`] indexes the GPU table.
    pub fn resolve(&self, id: MaterialId) -> ResolvedMaterial {
        let id = if self.entry(id).is_ok() { id } else { MaterialId::DEFAULT };
        let e = self.entry(id).expect("the default material");
        let parent = e.parent as usize;
        let Some(Entry { def: Definition::Parent(p), .. }) = &self.entries[parent] else {
            unreachable!("an instance's parent is a live parent")
        };
        ResolvedMaterial {
            id,
            blend_mode: p.blend_mode,
            shading_model: p.shading_model,
            two_sided: p.two_sided,
            shader: self.shader_ids[parent],
            bindings: e.bindings,
        }
    }

    /// The interned shader of the material `id` names (the default's when it names none).
    pub fn shader_id(&self, id: MaterialId) -> MaterialShaderId {
        self.resolve(id).shader
    }

    /// The shader interned under `id` (`None` once no material uses it).
    pub fn shader(&self, id: MaterialShaderId) -> Option<&Arc<MaterialShader>> {
        self.shaders.get(id)
    }

    /// Interned shaders in use.
    pub fn shader_count(&self) -> usize {
        self.shaders.len()
    }

    /// The interned id of the default material's shader.
    pub fn default_shader_id(&self) -> MaterialShaderId {
        self.shader_ids[0]
    }

    /// The block of a slot (the default's for an empty slot).
    pub fn block(&self, slot: u32) -> &MaterialBlock {
        match self.entries.get(slot as usize) {
            Some(Some(e)) => &e.block,
            _ => &self.entries[0].as_ref().expect("default material").block,
        }
    }

    /// The GPU table, one block per slot (empty slots get the default's).
    pub fn gpu_table(&self) -> Vec<MaterialBlock> {
        (0..self.entries.len() as u32).map(|s| *self.block(s)).collect()
    }

    /// Slots of the tables (live, empty and retired), the default's included:
    /// the length of the GPU table.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Materials alive (parents and instances), the default included.
    pub fn live(&self) -> usize {
        self.live
    }

    /// Whether the tables have no slot: never, as the default material always
    /// exists.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

/// Moves `slot` in the texture → users index from the textures of `old`
/// to those of `new` (either may be empty: a material created or removed).
fn index_textures(users: &mut HashMap<u32, HashSet<u32>>, slot: u32, old: &[(TextureId, SamplerDesc)], new: &[(TextureId, SamplerDesc)]) {
    for (t, _) in old {
        if new.iter().any(|(n, _)| n.slot() == t.slot()) {
            continue;
        }
        if let Some(set) = users.get_mut(&t.slot()) {
            set.remove(&slot);
            if set.is_empty() {
                users.remove(&t.slot());
            }
        }
    }
    for (t, _) in new {
        users.entry(t.slot()).or_default().insert(slot);
    }
}

/// A parent's texture parameters with their defaults.
fn parent_textures(material: &Material, layout: &ParameterLayout) -> Vec<(TextureId, SamplerDesc)> {
    (0..layout.texture_count())
        .map(|k| {
            let d = &material.parameters[layout.texture_declaration(k).expect("k < texture count")];
            let ParameterValue::Texture(t) = d.default else { unreachable!("a texture declaration") };
            (t, d.sampler.clone())
        })
        .collect()
}

/// An instance's block and textures: the parent's defaults with its overrides.
fn instance_block(
    parent: &Material,
    layout: &ParameterLayout,
    instance: &MaterialInstance,
) -> (MaterialBlock, Vec<(TextureId, SamplerDesc)>) {
    let mut block = parent.default_block(layout);
    let mut textures = parent_textures(parent, layout);
    for (name, value) in &instance.overrides {
        match (layout.find(name), value) {
            (Some(ParameterSlot::Texture(k)), ParameterValue::Texture(t)) => textures[k as usize].0 = *t,
            (Some(slot), v) => ParameterLayout::write(&mut block, slot, v),
            (None, _) => {}
        }
    }
    debug_assert_eq!(block.len(), MATERIAL_BLOCK_VECTORS);
    (block, textures)
}

fn set_builtin(p: &mut super::MaterialParams, name: &str, value: &ParameterValue) {
    match (name, value) {
        ("base_color", ParameterValue::Vector(v)) => p.base_color = *v,
        ("emissive", ParameterValue::Vector(v)) => p.emissive = v.truncate(),
        ("custom", ParameterValue::Vector(v)) => p.custom = *v,
        ("metallic", ParameterValue::Scalar(s)) => p.metallic = *s,
        ("roughness", ParameterValue::Scalar(s)) => p.roughness = *s,
        ("specular", ParameterValue::Scalar(s)) => p.specular = *s,
        ("opacity", ParameterValue::Scalar(s)) => p.opacity = *s,
        _ => {}
    }
}

#[cfg(test)]
mod tests;
