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
mod tests {
    use super::super::{MaterialIds, MaterialParameter, MaterialParams};
    use super::*;
    use glam::Vec4;

    fn custom(name: &str, body: &str) -> Material {
        Material::with_shader(
            name,
            &format!("fn material_main(i: MaterialInput) -> MaterialOutput {{ var o = default_material(i); {body} return o; }}"),
        )
    }

    #[test]
    fn parameter_changes_keep_pipelines_shader_changes_rebuild_only_their_users() {
        let mut r = MaterialRegistry::default();
        r.set(MaterialId(1), Material::colored(Vec4::ONE)).unwrap();
        assert_eq!(r.take_recache(), BTreeSet::from([1]), "a new material: its own users (usually none)");
        r.set(MaterialId(1), Material::colored(Vec4::X)).unwrap();
        assert!(r.take_recache().is_empty(), "parameters only");
        assert_eq!(r.take_dirty_blocks(), BTreeSet::from([1]));
        r.set(MaterialId(1), Material::colored(Vec4::X).with_blend(BlendMode::Translucent)).unwrap();
        assert_eq!(r.take_recache(), BTreeSet::from([1]));
        r.set(MaterialId(2), custom("red.wgsl", "")).unwrap();
        r.take_recache();
        assert_ne!(r.shader_id(MaterialId(2)), r.shader_id(MaterialId(1)));
        assert_eq!(r.shader_id(MaterialId(1)), r.default_shader_id());
        assert_eq!(r.gpu_table().len(), 3);
        assert_eq!(r.resolve(MaterialId(9)).id, MaterialId::DEFAULT);
    }

    #[test]
    fn instances_share_their_parents_shader_and_parameter_writes_touch_one_block() {
        let mut r = MaterialRegistry::default();
        let parent = custom("tinted.wgsl", "o.base_color = param_tint().rgb * param_gain();")
            .with_parameter(MaterialParameter::vector("tint", Vec4::ONE))
            .with_parameter(MaterialParameter::scalar("gain", 1.0));
        r.set(MaterialId(1), parent).unwrap();
        for i in 2..10 {
            r.set_instance(MaterialId(i), MaterialInstance::of(MaterialId(1)).with_vector("tint", Vec4::splat(i as f32))).unwrap();
        }
        assert_eq!(r.shader_count(), 2, "default + the parent's");
        assert!((2..10).all(|i| r.shader_id(MaterialId(i)) == r.shader_id(MaterialId(1))));
        assert_eq!(r.block(5)[4], [5.0; 4], "the override");
        assert_eq!(r.block(5)[5][0], 1.0, "the parent's default");
        r.take_recache();
        r.take_dirty_blocks();
        r.set_parameter(MaterialId(5), "gain", ParameterValue::Scalar(3.0)).unwrap();
        assert_eq!(r.take_dirty_blocks(), BTreeSet::from([5]), "one block");
        assert!(r.take_recache().is_empty() && r.take_stale_shaders().is_empty(), "no command, no pipeline");
        // A parent's default reaches the instances that do not override it.
        r.set_parameter(MaterialId(1), "gain", ParameterValue::Scalar(2.0)).unwrap();
        assert_eq!(r.block(6)[5][0], 2.0);
        assert_eq!(r.block(5)[5][0], 3.0, "overridden");
        // Wrong names and kinds change nothing.
        assert!(matches!(r.set_parameter(MaterialId(5), "nope", ParameterValue::Scalar(1.0)), Err(RendererError::InvalidMaterial { .. })));
        assert!(r.set_parameter(MaterialId(5), "gain", ParameterValue::Vector(Vec4::ONE)).is_err());
        assert_eq!(r.block(5)[5][0], 3.0);
        // The parent cannot go while instances live; its shader change rebuilds it and its instances.
        assert!(matches!(r.remove(MaterialId(1)), Err(RendererError::MaterialInUse { instances: 8, .. })));
        r.take_recache();
        let edited = custom("tinted.wgsl", "o.base_color = param_tint().rgb;")
            .with_parameter(MaterialParameter::vector("tint", Vec4::ONE))
            .with_parameter(MaterialParameter::scalar("gain", 1.0));
        r.set(MaterialId(1), edited).unwrap();
        assert_eq!(r.take_recache(), (1..10).collect::<BTreeSet<u32>>());
        assert_eq!(r.take_stale_shaders().len(), 1, "the old source's pipelines go");
        // A parent edit that drops a parameter an instance overrides is refused.
        assert!(r.set(MaterialId(1), custom("tinted.wgsl", "")).is_err());
        assert_eq!(r.block(5)[4], [5.0; 4], "nothing changed");
    }

    /// What the scene does with the slots to re-bind: a shared group when
    /// there is one, else a new one (numbered from `next`).
    fn bind(r: &mut MaterialRegistry, next: &mut u32) {
        for slot in r.take_rebind() {
            let g = r.shared_bindings(slot).unwrap_or_else(|| {
                *next += 1;
                <BindGroupHandle as rhi_vulkan::SlotKey>::from_parts(*next, 0)
            });
            r.set_bindings(slot, Some(g));
        }
    }

    #[test]
    fn slots_with_equal_textures_share_one_bind_group() {
        use crate::texture::TextureId;
        let mut r = MaterialRegistry::default();
        let mut next = 0;
        let parent = custom("textured.wgsl", "o.roughness = param_rough();")
            .with_parameter(MaterialParameter::texture("albedo", TextureId::WHITE, SamplerDesc::default()))
            .with_parameter(MaterialParameter::scalar("rough", 0.5));
        r.set(MaterialId(1), parent).unwrap();
        for i in 2..5 {
            r.set_instance(MaterialId(i), MaterialInstance::of(MaterialId(1)).with_scalar("rough", i as f32 / 10.0)).unwrap();
        }
        let black = MaterialInstance::of(MaterialId(1)).with_texture("albedo", TextureId::BLACK);
        r.set_instance(MaterialId(5), black.clone()).unwrap();
        bind(&mut r, &mut next);
        let group = |r: &MaterialRegistry, i: u32| r.resolve(MaterialId(i)).bindings.expect("textured");
        // The default material (slot 0) has textures of its own: a group of its own.
        assert_eq!(next, 3, "the default's group, one for the parent's textures, one for the black albedo");
        assert!((2..5).all(|i| group(&r, i) == group(&r, 1)), "scalar overrides share the parent's group");
        assert_ne!(group(&r, 5), group(&r, 1));
        // An instance given the black albedo takes that group; nothing is retired.
        r.set_instance(MaterialId(4), black).unwrap();
        bind(&mut r, &mut next);
        assert_eq!((next, group(&r, 4)), (3, group(&r, 5)));
        assert!(r.take_retired_bindings().is_empty());
        // A re-created texture: every slot binding it gets a fresh group, shared again; the old ones go.
        let (old, old_default) = (group(&r, 1), group(&r, 0));
        r.rebind_textures(&[TextureId::WHITE.slot()]);
        bind(&mut r, &mut next);
        // (The default material's group is made again too when it binds the white texture.)
        let default_again = group(&r, 0) != old_default;
        assert_eq!(next, 4 + u32::from(default_again), "the parent's group made again, once");
        assert!([2, 3].iter().all(|&i| group(&r, i) == group(&r, 1)) && group(&r, 1) != old);
        assert_eq!(group(&r, 5), group(&r, 4), "the black group is not re-made");
        let mut retired = r.take_retired_bindings();
        retired.sort();
        let mut expected: Vec<_> = [Some(old), default_again.then_some(old_default)].into_iter().flatten().collect();
        expected.sort();
        assert_eq!(retired, expected);
        // The last holder of a group retires it; the scene going takes each live group once.
        r.remove(MaterialId(4)).unwrap();
        assert!(r.take_retired_bindings().is_empty(), "slot 5 still holds the black group");
        r.remove(MaterialId(5)).unwrap();
        assert_eq!(r.take_retired_bindings().len(), 1);
        let mut live = vec![group(&r, 0), group(&r, 1)];
        live.sort();
        let mut all = r.take_all_bindings();
        all.sort();
        assert_eq!(all, live);
    }

    #[test]
    fn instances_need_a_live_parent() {
        let mut r = MaterialRegistry::default();
        assert!(matches!(
            r.set_instance(MaterialId(1), MaterialInstance::of(MaterialId(7))),
            Err(RendererError::UnknownMaterial(MaterialId(7)))
        ));
        r.set(MaterialId(1), Material::default()).unwrap();
        r.set_instance(MaterialId(2), MaterialInstance::of(MaterialId(1))).unwrap();
        assert!(r.set_instance(MaterialId(3), MaterialInstance::of(MaterialId(2))).is_err(), "an instance is no parent");
        assert!(r.set(MaterialId(2), Material::default()).is_err(), "an instance stays an instance");
        assert!(r.is_instance(MaterialId(2)));
        r.remove(MaterialId(2)).unwrap();
        r.remove(MaterialId(1)).unwrap();
        assert_eq!(r.live(), 1);
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
        assert!(ids.release(red));
        r.remove(red).unwrap();
        let green = ids.take().unwrap();
        assert_eq!(green.slot(), red.slot(), "the slot is reused");
        assert_ne!(green, red);
        r.set(green, custom("stale.wgsl", "").with_params(MaterialParams { base_color: Vec4::Y, ..Default::default() })).unwrap();
        assert_eq!(r.get(green).unwrap().params.base_color, Vec4::Y);
        assert!(matches!(r.get(red), Err(RendererError::UnknownMaterial(i)) if i == red));
        assert_eq!(r.resolve(red).id, MaterialId::DEFAULT, "the stale id draws with the default, not the slot's new material");
        assert_eq!(r.shader_id(red), r.default_shader_id());
        assert_ne!(r.shader_id(green), r.default_shader_id());
        assert!(matches!(r.set(red, Material::colored(Vec4::Z)), Err(RendererError::UnknownMaterial(i)) if i == red));
        assert!(matches!(r.remove(red), Err(RendererError::UnknownMaterial(i)) if i == red));
        assert_eq!(r.gpu_table()[green.slot() as usize][0], [0.0, 1.0, 0.0, 0.0]);
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

    /// What the indexes must hold, found by scanning every entry: each
    /// parent's instances, each texture's users, the live count.
    type Scanned = (HashMap<u32, HashSet<u32>>, HashMap<u32, HashSet<u32>>, usize);

    fn scan(r: &MaterialRegistry) -> Scanned {
        let (mut instances, mut users) = (HashMap::<u32, HashSet<u32>>::default(), HashMap::<u32, HashSet<u32>>::default());
        for (s, e) in r.entries.iter().enumerate() {
            let Some(e) = e else { continue };
            if let Definition::Instance(_) = e.def {
                instances.entry(e.parent).or_default().insert(s as u32);
            }
            for (t, _) in &e.textures {
                users.entry(t.slot()).or_default().insert(s as u32);
            }
        }
        (instances, users, r.entries.iter().flatten().count())
    }

    /// The live id of `slot` modulo the next slot (the next slot's first id past the live ones).
    fn live_id(r: &MaterialRegistry, slot: u32) -> MaterialId {
        let slot = slot % (r.len() as u32 + 1);
        let generation = r.generations.get(slot as usize).copied().unwrap_or(0);
        MaterialId::new(slot, generation).unwrap()
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(test_support::property_cases(64)))]
        /// After any sequence of sets, instance sets, texture changes and
        /// removals (refused ones included), the parent → instances and
        /// texture → users indexes and the live count equal a scan of the
        /// entries, and a texture's re-bind marks exactly its users.
        #[test]
        fn the_indexes_equal_a_scan_of_the_entries(ops in proptest::collection::vec((0u8..5, 0u32..10, 0u32..10, 3u32..7), 1..120)) {
            let mut r = MaterialRegistry::default();
            let textured = |t: u32| {
                custom("indexed.wgsl", "o.roughness = param_rough();")
                    .with_parameter(MaterialParameter::texture("albedo", TextureId(t), SamplerDesc::default()))
                    .with_parameter(MaterialParameter::scalar("rough", 0.5))
            };
            for (op, a, b, t) in ops {
                let _ = match op {
                    0 => r.set(live_id(&r, a), textured(t)),
                    1 => r.set_instance(live_id(&r, a), MaterialInstance::of(live_id(&r, b)).with_texture("albedo", TextureId(t))),
                    2 => r.set_instance(live_id(&r, a), MaterialInstance::of(live_id(&r, b)).with_scalar("rough", t as f32)),
                    3 => r.set_parameter(live_id(&r, a), "albedo", ParameterValue::Texture(TextureId(t))),
                    _ => r.remove(live_id(&r, a)),
                };
                let (instances, users, live) = scan(&r);
                proptest::prop_assert_eq!(&r.instances, &instances);
                proptest::prop_assert_eq!(&r.texture_users, &users);
                proptest::prop_assert_eq!(r.live(), live);
                r.take_rebind();
                r.rebind_textures(&[t]);
                let marked: HashSet<u32> = r.take_rebind().into_iter().collect();
                proptest::prop_assert_eq!(marked, users.get(&t).cloned().unwrap_or_default());
            }
        }
    }

    /// Creates `n` instances of one textured parent, each with a texture of
    /// its own, re-binds each texture once, removes them all. Seconds.
    fn texture_churn(n: u32) -> f64 {
        let mut r = MaterialRegistry::default();
        let parent =
            custom("churn.wgsl", "").with_parameter(MaterialParameter::texture("albedo", TextureId::WHITE, SamplerDesc::default()));
        r.set(MaterialId(1), parent).unwrap();
        let start = std::time::Instant::now();
        for i in 0..n {
            r.set_instance(MaterialId(2 + i), MaterialInstance::of(MaterialId(1)).with_texture("albedo", TextureId(3 + i))).unwrap();
        }
        for i in 0..n {
            r.rebind_textures(&[3 + i]);
        }
        for i in 0..n {
            r.remove(MaterialId(2 + i)).unwrap();
        }
        start.elapsed().as_secs_f64()
    }

    #[test]
    fn rebinding_each_texture_of_10x_the_materials_costs_at_most_12x() {
        // Medians of runs alternating the sizes (see tests/material_scaling.rs).
        let (mut small, mut large) = (Vec::new(), Vec::new());
        for run in 0..8 {
            if run % 2 == 0 {
                small.push(texture_churn(300));
                large.push(texture_churn(3000));
            } else {
                large.push(texture_churn(3000));
                small.push(texture_churn(300));
            }
        }
        let median = |mut v: Vec<f64>| {
            v.sort_by(f64::total_cmp);
            v[v.len() / 2]
        };
        let (s, l) = (median(small), median(large));
        assert!(l / s <= 12.0, "10x the materials: {:.1}x the time ({:.2} vs {:.2} ms)", l / s, l * 1e3, s * 1e3);
    }

    #[test]
    fn shaders_no_material_uses_are_released_and_reported_stale() {
        let mut r = MaterialRegistry::default();
        let shader = |n: u32| custom(&format!("m{n}.wgsl"), &format!("o.roughness = {n}.0;"));
        r.set(MaterialId(1), shader(1)).unwrap();
        let first = r.shader_id(MaterialId(1));
        assert!(r.take_stale_shaders().is_empty());
        for n in 2..50 {
            r.set(MaterialId(1), shader(n)).unwrap();
            let stale = r.take_stale_shaders();
            assert_eq!(stale.len(), 1, "the replaced shader is stale");
            assert!(r.shader(stale[0]).is_none());
            assert_eq!(r.shader_count(), 2, "default + the one in use");
        }
        assert!(r.shader_id(MaterialId(1)).0 <= first.0 + 1, "ids are reused");
        // Two parents with one shader share it; it goes with the last.
        r.set(MaterialId(2), shader(49)).unwrap();
        assert_eq!(r.shader_id(MaterialId(2)), r.shader_id(MaterialId(1)));
        r.remove(MaterialId(1)).unwrap();
        assert!(r.take_stale_shaders().is_empty());
        r.remove(MaterialId(2)).unwrap();
        assert_eq!(r.take_stale_shaders().len(), 1);
    }
}
