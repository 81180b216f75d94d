//! The instances of one instanced-mesh component: transforms, custom data,
//! stable ids, and the GPU-ready packing of all three.
//!
//! This is the game-side half of UE's `UInstancedStaticMeshComponent`
//! (`PerInstanceSMData`, `PerInstanceSMCustomData`, `InstancingRandomSeed`)
//! with three changes where UE is weak:
//!
//! * **Removal is O(1) and ids stay valid.** Removal is a swap-remove (UE's
//!   default shifts every later instance, dirtying all of them); callers hold
//!   [`InstanceId`]s, which keep naming the same instance when it moves.
//! * **Uploads are incremental.** Each mutation marks the instances whose GPU
//!   bytes changed; [`InstanceStore::take_dirty_ranges`] returns them as
//!   coalesced ranges so the proxy uploads only those bytes. A swap-remove
//!   dirties exactly the one slot that received the moved instance.
//! * **Random values are stable** (see [`crate::id`]).
//!
//! Every mutation validates all of its input first; an `Err` means nothing
//! changed — not the instances, not the dirty ranges, not the bounds.
//!
//! Transforms are stored relative to the component, as in UE: moving the
//! component changes one primitive transform, not every instance.
//!
//! The packed GPU layout is in [`crate::gpu_data`].

use std::fmt;
use std::ops::Range;

use glam::Affine3A;
use rayon::prelude::*;

use crate::bounds::{Aabb, Bounds, BoundsTracker};
use crate::dirty::DirtyTracker;
use crate::error::{InstancingError, Result};
use crate::gpu_data::InstanceGpuData;
use crate::id::{instance_random, InstanceId};
use crate::transform::{to_component, validate_transform, TransformSpace};
use rhi_vulkan::Slots;

/// The most instances one store holds (indices are `u32`; one value marks
/// a free id slot).
pub const MAX_INSTANCES: u32 = u32::MAX - 1;

/// Custom floats per instance at most. UE's materials read a handful; the
/// cap keeps a bad count from allocating `instances × count` floats without
/// bound. Materials read all of them (`custom_data(in, k)`, see the vertex
/// factory).
pub const MAX_CUSTOM_DATA_FLOATS: u32 = 256;

/// All instances of one component. See the module docs.
#[derive(Clone, PartialEq)]
pub struct InstanceStore {
    mesh_bounds: Bounds,
    transforms: Vec<Affine3A>,
    ids: Vec<InstanceId>,
    custom_data: Vec<f32>,
    num_custom_data_floats: u32,
    random_seed: u32,
    /// Instance id → its current index in the dense arrays.
    slots: Slots<InstanceId, u32>,
    gpu_dirty: DirtyTracker,
    /// Instances whose culling sphere changed (added, moved, re-indexed)
    /// since some cluster tree's snapshot; pruned when a tree is installed.
    cull_edits: DirtyTracker,
    /// Per instance: the `generation` at which its sphere or index last changed.
    modified_gen: Vec<u64>,
    /// Bumped by every mutation that changes a culling sphere or an index.
    generation: u64,
    bounds: BoundsTracker,
}

impl fmt::Debug for InstanceStore {
    // A summary: a store may hold millions of instances.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("InstanceStore");
        d.field("count", &self.transforms.len())
            .field("num_custom_data_floats", &self.num_custom_data_floats)
            .field("random_seed", &self.random_seed)
            .field("generation", &self.generation)
            .field("dirty", &self.gpu_dirty.count())
            .field("bounds", &self.bounds);
        if self.transforms.len() <= 8 {
            d.field("ids", &self.ids).field("transforms", &self.transforms).field("custom_data", &self.custom_data);
        }
        d.finish()
    }
}

impl InstanceStore {
    /// An empty store for a mesh with these bounds, no custom data, seed 0.
    pub fn new(mesh_bounds: Bounds) -> Self {
        Self {
            mesh_bounds,
            transforms: Vec::new(),
            ids: Vec::new(),
            custom_data: Vec::new(),
            num_custom_data_floats: 0,
            random_seed: 0,
            slots: Slots::default(),
            gpu_dirty: DirtyTracker::default(),
            cull_edits: DirtyTracker::default(),
            modified_gen: Vec::new(),
            generation: 0,
            bounds: BoundsTracker::default(),
        }
    }

    // ---- reading -------------------------------------------------------

    pub fn instance_count(&self) -> u32 {
        self.transforms.len() as u32
    }

    pub fn is_empty(&self) -> bool {
        self.transforms.is_empty()
    }

    pub fn mesh_bounds(&self) -> &Bounds {
        &self.mesh_bounds
    }

    /// Instance→component transforms, by instance index.
    pub fn transforms(&self) -> &[Affine3A] {
        &self.transforms
    }

    /// Stable ids, by instance index.
    pub fn ids(&self) -> &[InstanceId] {
        &self.ids
    }

    /// The current index of `id`, or `None` if it was removed.
    #[inline]
    pub fn index_of(&self, id: InstanceId) -> Option<u32> {
        self.slots.get(id).copied()
    }

    pub fn id_at(&self, index: u32) -> Result<InstanceId> {
        self.check_index(index)?;
        Ok(self.ids[index as usize])
    }

    pub fn num_custom_data_floats(&self) -> u32 {
        self.num_custom_data_floats
    }

    /// All custom data, `num_custom_data_floats` per instance, by index.
    pub fn custom_data(&self) -> &[f32] {
        &self.custom_data
    }

    pub fn instance_custom_data(&self, index: u32) -> Result<&[f32]> {
        self.check_index(index)?;
        let n = self.num_custom_data_floats as usize;
        Ok(&self.custom_data[index as usize * n..(index as usize + 1) * n])
    }

    pub fn random_seed(&self) -> u32 {
        self.random_seed
    }

    /// The instance's random value in `[0, 1)`.
    pub fn instance_random(&self, index: u32) -> Result<f32> {
        Ok(instance_random(self.random_seed, self.id_at(index)?))
    }

    /// The instance's transform in the requested space.
    pub fn get_instance_transform(&self, index: u32, space: TransformSpace) -> Result<Affine3A> {
        self.check_index(index)?;
        let local = self.transforms[index as usize];
        match space {
            TransformSpace::Component => Ok(local),
            TransformSpace::World(c2w) => {
                if !c2w.is_finite() {
                    return Err(InstancingError::NonFiniteTransform);
                }
                Ok(c2w * local)
            }
        }
    }

    /// Counter of culling-relevant edits (adds, moves, removals, clears).
    pub fn generation(&self) -> u64 {
        self.generation
    }

    fn check_index(&self, index: u32) -> Result<()> {
        let count = self.instance_count();
        if index < count {
            Ok(())
        } else {
            Err(InstancingError::InstanceOutOfRange { index, count })
        }
    }

    fn check_capacity(&self, adding: usize) -> Result<()> {
        let requested = self.transforms.len() as u64 + adding as u64;
        if requested > u64::from(MAX_INSTANCES) {
            return Err(InstancingError::TooManyInstances { requested, max: MAX_INSTANCES });
        }
        Ok(())
    }

    fn check_custom(&self, data: &[f32]) -> Result<()> {
        if data.len() != self.num_custom_data_floats as usize {
            return Err(InstancingError::CustomDataLength { expected: self.num_custom_data_floats, got: data.len() });
        }
        if !data.iter().all(|v| v.is_finite()) {
            return Err(InstancingError::NonFiniteCustomData);
        }
        Ok(())
    }

    fn bump(&mut self) -> u64 {
        self.generation += 1;
        self.generation
    }

    // ---- adding --------------------------------------------------------

    /// Adds one instance (custom data zeroed); returns its stable id.
    pub fn add_instance(&mut self, transform: Affine3A) -> Result<InstanceId> {
        validate_transform(&transform)?;
        self.check_capacity(1)?;
        let n = self.num_custom_data_floats as usize;
        let gen = self.bump();
        Ok(self.push(transform, None, n, gen))
    }

    /// Adds one instance with its custom data (`num_custom_data_floats` values).
    pub fn add_instance_with_custom_data(&mut self, transform: Affine3A, custom: &[f32]) -> Result<InstanceId> {
        validate_transform(&transform)?;
        self.check_custom(custom)?;
        self.check_capacity(1)?;
        let gen = self.bump();
        Ok(self.push(transform, Some(custom), 0, gen))
    }

    /// Adds many instances, all or nothing; ids in input order.
    pub fn add_instances(&mut self, transforms: &[Affine3A]) -> Result<Vec<InstanceId>> {
        transforms.iter().try_for_each(validate_transform)?;
        self.check_capacity(transforms.len())?;
        let n = self.num_custom_data_floats as usize;
        let gen = self.bump();
        self.transforms.reserve(transforms.len());
        self.ids.reserve(transforms.len());
        self.modified_gen.reserve(transforms.len());
        self.custom_data.reserve(transforms.len() * n);
        Ok(transforms.iter().map(|t| self.push(*t, None, n, gen)).collect())
    }

    /// Appends a validated instance and marks it everywhere.
    fn push(&mut self, t: Affine3A, custom: Option<&[f32]>, zeros: usize, gen: u64) -> InstanceId {
        let index = self.transforms.len() as u32;
        let id = self.slots.insert(index);
        self.transforms.push(t);
        self.ids.push(id);
        self.modified_gen.push(gen);
        match custom {
            Some(c) => self.custom_data.extend_from_slice(c),
            None => self.custom_data.resize(self.custom_data.len() + zeros, 0.0),
        }
        self.gpu_dirty.mark(index);
        self.cull_edits.mark(index);
        self.bounds.grow(self.mesh_bounds.aabb().transformed(&t));
        id
    }

    // ---- removing ------------------------------------------------------

    /// Removes the instance at `index` by swap-remove: the last instance
    /// moves into `index` (its id stays valid, now mapping to `index`), and
    /// exactly that slot is marked dirty. Returns the removed id.
    pub fn remove_instance(&mut self, index: u32) -> Result<InstanceId> {
        self.check_index(index)?;
        Ok(self.swap_remove(index))
    }

    /// Removes the instance named by `id`; returns the index it had.
    pub fn remove_instance_by_id(&mut self, id: InstanceId) -> Result<u32> {
        let index = self.index_of(id).ok_or(InstancingError::UnknownInstanceId(id))?;
        self.swap_remove(index);
        Ok(index)
    }

    /// Removes many instances by id, all or nothing (every id live, none twice).
    pub fn remove_instances_by_id(&mut self, ids: &[InstanceId]) -> Result<()> {
        let mut sorted = ids.to_vec();
        sorted.sort_unstable();
        for w in sorted.windows(2) {
            if w[0] == w[1] {
                return Err(InstancingError::DuplicateInstanceId(w[0]));
            }
        }
        if let Some(&bad) = ids.iter().find(|&&id| self.index_of(id).is_none()) {
            return Err(InstancingError::UnknownInstanceId(bad));
        }
        for &id in ids {
            let index = self.index_of(id).expect("validated above");
            self.swap_remove(index);
        }
        Ok(())
    }

    fn swap_remove(&mut self, index: u32) -> InstanceId {
        let last = self.instance_count() - 1;
        let removed = self.ids[index as usize];
        self.slots.remove(removed);
        self.transforms.swap_remove(index as usize);
        self.ids.swap_remove(index as usize);
        self.modified_gen.swap_remove(index as usize);
        let n = self.num_custom_data_floats as usize;
        if index != last {
            let (i, l) = (index as usize * n, last as usize * n);
            self.custom_data.copy_within(l..l + n, i);
        }
        self.custom_data.truncate(last as usize * n);
        self.gpu_dirty.truncate(last);
        self.cull_edits.truncate(last);
        let gen = self.bump();
        if index != last {
            if let Some(moved) = self.slots.get_mut(self.ids[index as usize]) {
                *moved = index;
            }
            self.gpu_dirty.mark(index);
            self.cull_edits.mark(index);
            self.modified_gen[index as usize] = gen;
        }
        self.bounds.mark_loose();
        removed
    }

    /// Removes every instance; every id becomes unknown.
    pub fn clear_instances(&mut self) {
        self.slots.drain().for_each(drop);
        self.transforms.clear();
        self.ids.clear();
        self.modified_gen.clear();
        self.custom_data.clear();
        self.gpu_dirty.clear();
        self.cull_edits.clear();
        self.bounds.reset();
        self.bump();
    }

    // ---- updating ------------------------------------------------------

    /// Sets one instance's transform, given in `space`.
    pub fn update_instance_transform(&mut self, index: u32, transform: Affine3A, space: TransformSpace) -> Result<()> {
        self.check_index(index)?;
        let local = to_component(&transform, &space)?;
        let gen = self.bump();
        self.set_transform(index, local, gen);
        Ok(())
    }

    /// Sets the transforms of instances `start..start + transforms.len()`,
    /// all or nothing (UE's `BatchUpdateInstancesTransforms`).
    pub fn update_instance_transforms(&mut self, start: u32, transforms: &[Affine3A], space: TransformSpace) -> Result<()> {
        let end = u64::from(start) + transforms.len() as u64;
        if end > u64::from(self.instance_count()) {
            return Err(InstancingError::InstanceOutOfRange {
                index: end.min(u64::from(u32::MAX)) as u32 - 1,
                count: self.instance_count(),
            });
        }
        let locals = transforms.iter().map(|t| to_component(t, &space)).collect::<Result<Vec<_>>>()?;
        let gen = self.bump();
        for (i, local) in locals.into_iter().enumerate() {
            self.set_transform(start + i as u32, local, gen);
        }
        Ok(())
    }

    fn set_transform(&mut self, index: u32, local: Affine3A, gen: u64) {
        self.transforms[index as usize] = local;
        self.modified_gen[index as usize] = gen;
        self.gpu_dirty.mark(index);
        self.cull_edits.mark(index);
        // The new box may extend the union; the old one may have defined an
        // edge that is now too far out.
        self.bounds.grow(self.mesh_bounds.aabb().transformed(&local));
        self.bounds.mark_loose();
    }

    /// What [`Self::set_custom_data_value`] would reject, without changing anything.
    pub fn check_custom_data_value(&self, index: u32, float_index: u32, value: f32) -> Result<()> {
        self.check_index(index)?;
        if float_index >= self.num_custom_data_floats {
            return Err(InstancingError::CustomDataIndex { float_index, count: self.num_custom_data_floats });
        }
        if !value.is_finite() {
            return Err(InstancingError::NonFiniteCustomData);
        }
        Ok(())
    }

    /// Sets one custom float (UE's `SetCustomDataValue`).
    pub fn set_custom_data_value(&mut self, index: u32, float_index: u32, value: f32) -> Result<()> {
        self.check_custom_data_value(index, float_index, value)?;
        let n = self.num_custom_data_floats as usize;
        self.custom_data[index as usize * n + float_index as usize] = value;
        self.gpu_dirty.mark(index);
        Ok(())
    }

    /// Sets all of one instance's custom floats (UE's `SetCustomData`).
    pub fn set_custom_data(&mut self, index: u32, data: &[f32]) -> Result<()> {
        self.check_index(index)?;
        self.check_custom(data)?;
        let n = data.len();
        self.custom_data[index as usize * n..(index as usize + 1) * n].copy_from_slice(data);
        self.gpu_dirty.mark(index);
        Ok(())
    }

    /// Changes the number of custom floats per instance. Existing values are
    /// kept up to the new count, new ones are zero. Every instance's custom
    /// offset changes, so everything is dirty (UE recreates the render state).
    /// More than [`MAX_CUSTOM_DATA_FLOATS`] is rejected.
    pub fn set_num_custom_data_floats(&mut self, n: u32) -> Result<()> {
        if n > MAX_CUSTOM_DATA_FLOATS {
            return Err(InstancingError::TooManyCustomDataFloats { requested: n, max: MAX_CUSTOM_DATA_FLOATS });
        }
        let old = self.num_custom_data_floats as usize;
        if n as usize == old {
            return Ok(());
        }
        let new = n as usize;
        let count = self.transforms.len();
        let mut data = vec![0.0; count * new];
        let keep = old.min(new);
        for i in 0..count {
            data[i * new..i * new + keep].copy_from_slice(&self.custom_data[i * old..i * old + keep]);
        }
        self.custom_data = data;
        self.num_custom_data_floats = n;
        self.gpu_dirty.mark_range(0..count as u32);
        Ok(())
    }

    /// Changes the seed of the per-instance random values (all dirty).
    pub fn set_random_seed(&mut self, seed: u32) {
        if seed != self.random_seed {
            self.random_seed = seed;
            self.gpu_dirty.mark_range(0..self.instance_count());
        }
    }

    /// Replaces the mesh bounds (the component's mesh changed) and
    /// recomputes the union exactly.
    pub fn set_mesh_bounds(&mut self, mesh_bounds: Bounds) {
        self.mesh_bounds = mesh_bounds;
        self.bounds.mark_loose();
        self.bounds.tighten(&self.mesh_bounds, &self.transforms);
    }

    // ---- dirty ranges and GPU data ---------------------------------------

    /// The dirty instance ranges, sorted and coalesced; clears them. The
    /// proxy uploads `instances[r]` and `custom_data[r.start*n..r.end*n]`
    /// for each, and sizes its buffers by `instance_count()`.
    pub fn take_dirty_ranges(&mut self) -> Vec<Range<u32>> {
        self.gpu_dirty.take_ranges()
    }

    /// The dirty ranges without clearing them.
    pub fn dirty_ranges(&self) -> Vec<Range<u32>> {
        self.gpu_dirty.ranges()
    }

    pub fn dirty_instance_count(&self) -> u64 {
        self.gpu_dirty.count()
    }

    /// Bytes the pending dirty ranges cover in both GPU buffers.
    pub fn dirty_bytes(&self) -> u64 {
        self.gpu_dirty.count() * self.gpu_bytes_per_instance() as u64
    }

    /// `size_of::<InstanceGpuData>()` plus the instance's custom floats.
    pub fn gpu_bytes_per_instance(&self) -> usize {
        size_of::<InstanceGpuData>() + 4 * self.num_custom_data_floats as usize
    }

    /// Packs one instance (index must be in range).
    #[inline]
    fn pack(&self, index: usize) -> InstanceGpuData {
        let id = self.ids[index];
        InstanceGpuData::pack(
            &self.transforms[index],
            instance_random(self.random_seed, id),
            index as u32 * self.num_custom_data_floats,
            id,
        )
    }

    /// Appends the packed instances of `range` to `out` (the upload path).
    pub fn write_gpu_data(&self, range: Range<u32>, out: &mut Vec<InstanceGpuData>) -> Result<()> {
        if range.start > range.end || range.end > self.instance_count() {
            return Err(InstancingError::InstanceOutOfRange { index: range.end.max(range.start), count: self.instance_count() });
        }
        out.extend((range.start as usize..range.end as usize).map(|i| self.pack(i)));
        Ok(())
    }

    /// Every instance packed: the full-rebuild path (what UE does on any
    /// edit), kept for comparison and for a proxy's first upload.
    pub fn gpu_data_all(&self) -> Vec<InstanceGpuData> {
        (0..self.transforms.len()).into_par_iter().with_min_len(4096).map(|i| self.pack(i)).collect()
    }

    // ---- bounds --------------------------------------------------------

    /// The component-space union of instance boxes; always contains every
    /// instance, may be loose after removals or moves.
    pub fn bounds(&self) -> Aabb {
        self.bounds.conservative()
    }

    pub fn bounds_are_tight(&self) -> bool {
        !self.bounds.is_loose()
    }

    /// Makes the bounds exact (O(n), parallel) if they are loose; returns them.
    pub fn tighten_bounds(&mut self) -> Aabb {
        self.bounds.tighten(&self.mesh_bounds, &self.transforms)
    }

    /// The world bounds for the renderer (conservative like [`Self::bounds`]).
    pub fn world_bounds(&self, component_to_world: &Affine3A) -> Bounds {
        Bounds::from(self.bounds().transformed(component_to_world))
    }

    // ---- cluster-tree support --------------------------------------------

    /// The generation at which instance `index`'s sphere or index last changed.
    #[inline]
    pub(crate) fn modified_generation(&self, index: u32) -> u64 {
        self.modified_gen[index as usize]
    }

    /// Instances edited (for culling) since some tree snapshot, ascending.
    pub(crate) fn cull_edits(&self) -> Vec<u32> {
        self.cull_edits.marked()
    }

    /// Forgets culling edits a tree built at `generation` already covers.
    pub(crate) fn prune_cull_edits(&mut self, generation: u64) {
        for index in self.cull_edits.marked() {
            if self.modified_gen[index as usize] <= generation {
                self.cull_edits.unmark(index);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::Vec3;

    fn store() -> InstanceStore {
        InstanceStore::new(Bounds::new(Vec3::ZERO, Vec3::ONE, 3f32.sqrt()))
    }

    #[test]
    fn gpu_data_is_64_bytes() {
        assert_eq!(size_of::<InstanceGpuData>(), 64);
        assert_eq!(align_of::<InstanceGpuData>(), 4);
    }

    #[test]
    fn pack_puts_translation_in_w() {
        let mut s = store();
        s.add_instance(Affine3A::from_translation(Vec3::new(1.0, 2.0, 3.0))).unwrap();
        let g = s.gpu_data_all()[0];
        assert_eq!(g.transform_rows[0], [1.0, 0.0, 0.0, 1.0]);
        assert_eq!(g.transform_rows[2], [0.0, 0.0, 1.0, 3.0]);
        assert_eq!(g.flags, 0);
        let mirrored = Affine3A::from_scale(Vec3::new(-1.0, 1.0, 1.0));
        s.update_instance_transform(0, mirrored, TransformSpace::Component).unwrap();
        assert_eq!(s.gpu_data_all()[0].flags, InstanceGpuData::FLAG_MIRRORED);
    }

    #[test]
    fn prune_keeps_newer_edits() {
        let mut s = store();
        s.add_instances(&[Affine3A::IDENTITY; 4]).unwrap();
        let g = s.generation();
        s.update_instance_transform(2, Affine3A::from_translation(Vec3::X), TransformSpace::Component).unwrap();
        s.prune_cull_edits(g);
        assert_eq!(s.cull_edits(), vec![2]);
    }
}
