//! [`ProcMeshData`]: everything a `ProceduralMeshComponent` owns on the game
//! side, without the component around it.
//!
//! UE's `UProceduralMeshComponent` mixes three things: the section data, the
//! component plumbing (registration, dirty flags, the scene proxy) and the
//! collision body. The first and last need neither the renderer nor the
//! component system, so they live here as plain data with methods that
//! return what changed ([`ChangeSet`]). The component
//! ([`ProceduralMeshComponent`](crate::ProceduralMeshComponent)) owns one
//! `ProcMeshData`, forwards UE's calls to it and marks dirty what the change
//! set says; it adds no rules of its own. That keeps every rule (validation,
//! bounds, which change needs a proxy rebuild, when collision is re-cooked)
//! testable without a device or a world.
//!
//! Sections are numbered slots as in UE: creating section 5 in an empty mesh
//! makes slots 0 to 4 exist but empty, [`num_sections`](ProcMeshData::num_sections)
//! counts slots, and clearing a section empties its slot without renumbering
//! the others. Materials are a separate table indexed the same way, since
//! in UE they belong to the component's material slots and survive clearing
//! the sections.
//!
//! Every call checks all of its input before it changes anything, and
//! collision is re-cooked (when the call affects collision) before the
//! change is committed or with a rollback if the cook fails, so a rejected
//! call leaves the mesh exactly as it was. The collision half of the API is
//! in the `collision` module (feature `collision`; without it sections keep
//! their collision flag but nothing is cooked).

#[cfg(feature = "collision")]
use std::sync::Arc;

#[cfg(feature = "collision")]
use engine_core::collision::{CookExecutor, RayonExecutor};

#[cfg(feature = "collision")]
use crate::body::MeshCollision;
use crate::bounds::Aabb;
use crate::change::{ChangeSet, SectionDirty, SectionUpdate};
use crate::error::{ProcMeshError, Result};
use crate::material::MaterialRef;
use crate::section::{ProcMeshSection, SectionData};
use crate::vertex::VertexAttributes;

/// The largest section index: every section must be able to serve as a
/// collision material index (`u16`).
pub const MAX_SECTION_INDEX: usize = u16::MAX as usize;

/// The game-side data of a procedural mesh: numbered sections, their
/// materials and the collision body built from them.
///
/// Two meshes compare equal when their sections, materials and collision
/// configuration are equal and they hold the same cooked collision (the same
/// shared cook, by pointer) at the same cook generation: "nothing a
/// component could observe differs".
#[derive(Debug)]
pub struct ProcMeshData {
    pub(crate) sections: Vec<Option<ProcMeshSection>>,
    materials: Vec<Option<MaterialRef>>,
    #[cfg(feature = "collision")]
    pub(crate) collision: MeshCollision,
}

impl Default for ProcMeshData {
    fn default() -> Self {
        Self::new()
    }
}

impl PartialEq for ProcMeshData {
    fn eq(&self, other: &Self) -> bool {
        #[cfg(feature = "collision")]
        if self.collision != other.collision {
            return false;
        }
        self.sections == other.sections && self.materials == other.materials
    }
}

impl ProcMeshData {
    /// An empty mesh whose asynchronous collision cooks run on the rayon
    /// pool.
    pub fn new() -> Self {
        Self {
            sections: Vec::new(),
            materials: Vec::new(),
            #[cfg(feature = "collision")]
            collision: MeshCollision::new(Arc::new(RayonExecutor)),
        }
    }

    /// An empty mesh whose asynchronous collision cooks run on `executor`
    /// (engine-core's `InlineExecutor` for the engine's inline mode,
    /// `ManualExecutor` to control completion order in tests).
    #[cfg(feature = "collision")]
    pub fn with_cook_executor(executor: Arc<dyn CookExecutor>) -> Self {
        Self { sections: Vec::new(), materials: Vec::new(), collision: MeshCollision::new(executor) }
    }

    /// Creates (or replaces) section `index` from `data` (UE's
    /// `CreateMeshSection`). Optional arrays left empty take UE's defaults:
    /// normal +Z, tangent +X, white, UVs zero. With `create_collision` the
    /// triangles join the mesh's collision, which is re-cooked. The proxy
    /// must be recreated.
    pub fn create_mesh_section(&mut self, index: usize, data: SectionData<'_>, create_collision: bool) -> Result<ChangeSet> {
        check_section_index(index)?;
        let local_box = data.check_create()?;
        let section = ProcMeshSection::build(&data, local_box, create_collision);
        let recook = section.has_collision_triangles() || self.section(index).is_some_and(ProcMeshSection::has_collision_triangles);
        let bounds_before = self.local_bounds();
        let slots_before = self.sections.len();
        if index >= slots_before {
            self.sections.resize_with(index + 1, || None);
        }
        let old = self.sections[index].replace(section);
        let mut changes = ChangeSet::NONE;
        if recook {
            match self.recook() {
                Ok(cooked) => changes = cooked,
                Err(error) => {
                    self.sections[index] = old;
                    self.sections.truncate(slots_before);
                    return Err(error);
                }
            }
        }
        changes.render_state = true;
        changes.transform = self.local_bounds() != bounds_before;
        Ok(changes)
    }

    /// Overwrites the given arrays of section `index` in place (UE's
    /// `UpdateMeshSection`): the vertex count must stay the same, empty
    /// arrays keep their current values, and triangles cannot change. The
    /// section's box is recomputed only when positions are given, and its
    /// collision re-cooked only when its positions (or, with UVs kept for
    /// hits, its UV0) change. The existing proxy receives the new vertex data;
    /// bounds are re-sent only if they moved.
    pub fn update_mesh_section(&mut self, index: usize, data: SectionData<'_>) -> Result<ChangeSet> {
        let section = self.section(index).ok_or(ProcMeshError::UnknownSection { index })?;
        let new_box = data.check_update(index, section.vertex_count())?;
        let attributes = data.given();
        if attributes.is_empty() {
            return Ok(ChangeSet::NONE);
        }
        // Cook from the current sections with this section's new arrays
        // patched in, before anything changes.
        let mut changes = self.recook_for_update(index, &data, attributes)?;
        let bounds_before = new_box.map(|_| self.local_bounds());
        if let Some(section) = self.sections[index].as_mut() {
            section.apply_update(&data, new_box);
        }
        changes.transform = bounds_before.is_some_and(|before| self.local_bounds() != before);
        changes.dynamic_data = vec![SectionDirty { section: index, attributes }];
        Ok(changes)
    }

    /// Empties section `index`'s slot (UE's `ClearMeshSection`); the other
    /// sections keep their numbers. Re-cooks collision if the section had
    /// any.
    pub fn clear_mesh_section(&mut self, index: usize) -> Result<ChangeSet> {
        if self.section(index).is_none() {
            return Err(ProcMeshError::UnknownSection { index });
        }
        let bounds_before = self.local_bounds();
        let old = self.sections[index].take();
        let mut changes = ChangeSet::NONE;
        if old.as_ref().is_some_and(ProcMeshSection::has_collision_triangles) {
            match self.recook() {
                Ok(cooked) => changes = cooked,
                Err(error) => {
                    self.sections[index] = old;
                    return Err(error);
                }
            }
        }
        changes.render_state = true;
        changes.transform = self.local_bounds() != bounds_before;
        Ok(changes)
    }

    /// Removes every section and slot (UE's `ClearAllMeshSections`).
    /// Materials stay. Nothing changes if there were no slots.
    pub fn clear_all_mesh_sections(&mut self) -> Result<ChangeSet> {
        if self.sections.is_empty() {
            return Ok(ChangeSet::NONE);
        }
        let bounds_before = self.local_bounds();
        let old = std::mem::take(&mut self.sections);
        let mut changes = ChangeSet::NONE;
        if old.iter().flatten().any(ProcMeshSection::has_collision_triangles) {
            match self.recook() {
                Ok(cooked) => changes = cooked,
                Err(error) => {
                    self.sections = old;
                    return Err(error);
                }
            }
        }
        changes.render_state = true;
        changes.transform = self.local_bounds() != bounds_before;
        Ok(changes)
    }

    /// Shows or hides section `index`. As in UE, the flag goes to the
    /// existing proxy (no rebuild); nothing changes if it already had this
    /// value.
    pub fn set_mesh_section_visible(&mut self, index: usize, visible: bool) -> Result<ChangeSet> {
        let section = self.sections.get_mut(index).and_then(Option::as_mut).ok_or(ProcMeshError::UnknownSection { index })?;
        if section.visible == visible {
            return Ok(ChangeSet::NONE);
        }
        section.visible = visible;
        Ok(ChangeSet { visibility: vec![index], ..ChangeSet::NONE })
    }

    /// Whether section `index` exists and is visible.
    pub fn is_mesh_section_visible(&self, index: usize) -> bool {
        self.section(index).is_some_and(|s| s.visible)
    }

    /// The number of section slots, empty ones included (UE's
    /// `GetNumSections`).
    pub fn num_sections(&self) -> usize {
        self.sections.len()
    }

    /// Section `index`, if its slot holds one.
    pub fn section(&self, index: usize) -> Option<&ProcMeshSection> {
        self.sections.get(index).and_then(Option::as_ref)
    }

    /// Every section with its index, in index order.
    pub fn sections(&self) -> impl Iterator<Item = (usize, &ProcMeshSection)> {
        self.sections.iter().enumerate().filter_map(|(i, s)| s.as_ref().map(|s| (i, s)))
    }

    /// Sets the material of section slot `index` (the section need not
    /// exist yet; UE's `SetMaterial`). The proxy must be recreated; nothing
    /// changes if the slot already had this material.
    pub fn set_material(&mut self, index: usize, material: Option<MaterialRef>) -> Result<ChangeSet> {
        check_section_index(index)?;
        if self.material(index) == material {
            return Ok(ChangeSet::NONE);
        }
        if index >= self.materials.len() {
            self.materials.resize(index + 1, None);
        }
        self.materials[index] = material;
        // Trailing empty slots are not state: keep the table canonical so
        // equal meshes compare equal.
        while self.materials.last() == Some(&None) {
            self.materials.pop();
        }
        Ok(ChangeSet::render_state(false))
    }

    /// The material of section slot `index`, if one is set.
    pub fn material(&self, index: usize) -> Option<MaterialRef> {
        self.materials.get(index).copied().flatten()
    }

    /// The union of the sections' boxes; a zero-size box at the origin when
    /// no section has a vertex (as UE's `UpdateLocalBounds`).
    pub fn local_bounds(&self) -> Aabb {
        let bounds = self.sections().fold(Aabb::EMPTY, |b, (_, s)| b.union(s.local_box()));
        if bounds.is_empty() {
            Aabb::ZERO
        } else {
            bounds
        }
    }

    /// Copies the `attributes` streams of section `index` for the render
    /// thread: what the component sends for each
    /// [`ChangeSet::dynamic_data`] entry, at end of frame.
    pub fn section_update(&self, index: usize, attributes: VertexAttributes) -> Result<SectionUpdate> {
        let section = self.section(index).ok_or(ProcMeshError::UnknownSection { index })?;
        Ok(SectionUpdate::copy(index, section, attributes))
    }
}

/// Without the `collision` feature sections keep their collision flag, but
/// there is no collision to cook: nothing changes.
#[cfg(not(feature = "collision"))]
impl ProcMeshData {
    pub(crate) fn recook(&mut self) -> Result<ChangeSet> {
        Ok(ChangeSet::NONE)
    }

    pub(crate) fn recook_for_update(&mut self, _index: usize, _data: &SectionData<'_>, _attributes: VertexAttributes) -> Result<ChangeSet> {
        Ok(ChangeSet::NONE)
    }
}

fn check_section_index(index: usize) -> Result<()> {
    if index > MAX_SECTION_INDEX {
        return Err(ProcMeshError::SectionIndexTooLarge { index, max: MAX_SECTION_INDEX });
    }
    Ok(())
}
