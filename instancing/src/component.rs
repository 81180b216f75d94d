//! [`InstancedStaticMeshComponent`] — UE's `UInstancedStaticMeshComponent` on
//! engine-core's component traits.
//!
//! The component owns an [`InstanceStore`], the mesh, the cull distances
//! (a fade band, `start < end`, fades instances out with a dither instead of
//! popping them at the end distance: [`crate::culling`]) and the minimum LOD.
//! Every edit records what it changed ([`PrimitiveComponent::take_dirty`],
//! collected by `World::with_component_mut`):
//!
//! * instance edits → `DYNAMIC_DATA`: only the store's dirty ranges go to the
//!   existing proxy as an [`IsmUpdate`] (no recreation), plus `TRANSFORM`
//!   when the union bounds changed, so that engine-core sends the new local
//!   bounds to the scene;
//! * cull distances and the minimum LOD → `DYNAMIC_DATA`;
//! * a new mesh → `RENDER_STATE` (the proxy is recreated from the whole store).
//!
//! ## The component's world transform
//!
//! Moving the component needs nothing from this crate, as for a static mesh:
//! `World::set_relative_transform` (on it or on any parent) marks the
//! subtree transform-dirty, the end-of-frame update sends the new
//! local-to-world to the scene, and the scene hands it to the proxy
//! (`PrimitiveSceneProxy::on_transform_changed`), where GPU and CPU culling
//! read it; the vertex shader reads the same transform from the GPU scene.
//! Instances stay in component space, so a move uploads no instance data.
//!
//! ## HISM
//!
//! [`InstancedStaticMeshComponent::new_hierarchical`] makes a HISM
//! (`UHierarchicalInstancedStaticMeshComponent`): the same component with a
//! [`ClusterTreeBuilder`] that rebuilds the cluster tree in the background
//! after edits (polled in `tick`) and sends each new tree to the proxy,
//! which culls per cluster on the CPU. Why a mode and not a type, and how
//! culling stays exact while a rebuild runs: [`crate::hism`].

use std::any::Any;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use engine_core::{Component, DirtyFlags, PrimitiveComponent, ProxyCreateContext, StaticMesh};
use glam::{Affine3A, Vec3};
use renderer::{Bounds, MaterialId, PrimitiveSceneProxy};

use crate::bounds::{checked_bounds, Aabb};
use crate::cluster_tree::{ClusterTree, TreeCullStats};
use crate::culling::{cull_instances, CullDistances, CullOutput, CullView, InstanceCuller, LodDitherBand};
use crate::error::Result;
use crate::hism::HismTree;
use crate::id::InstanceId;
use crate::instance_data::InstanceStore;
use crate::mesh::InstancedMesh;
use crate::proxy::{InstancedStaticMeshSceneProxy, IsmCustomData, IsmUpdate};
use crate::transform::{validate_transform, TransformSpace};
use crate::tree_builder::ClusterTreeBuilder;
use crate::vertex_factory::InstanceStreamData;

fn mesh_bounds(mesh: &StaticMesh) -> Result<Bounds> {
    let b = mesh.bounds();
    checked_bounds(b)
}

fn renderer_bounds(b: &Aabb) -> Bounds {
    if b.is_empty() {
        Bounds::from_box(Vec3::ZERO, Vec3::ZERO)
    } else {
        Bounds::from_box(b.min, b.max)
    }
}

fn pack_range(store: &InstanceStore, range: std::ops::Range<u32>) -> Result<Vec<InstanceStreamData>> {
    let mut gpu = Vec::with_capacity(range.len());
    store.write_gpu_data(range.clone(), &mut gpu)?;
    gpu.iter().zip(range).map(|(g, i)| Ok(InstanceStreamData::new(g, store.instance_custom_data(i)?))).collect()
}

/// The custom floats of instances `range` (in range).
fn custom_range(store: &InstanceStore, range: std::ops::Range<u32>) -> &[f32] {
    let n = store.num_custom_data_floats() as usize;
    &store.custom_data()[range.start as usize * n..range.end as usize * n]
}

/// UE's `UInstancedStaticMeshComponent`; see the module docs.
pub struct InstancedStaticMeshComponent {
    store: InstanceStore,
    mesh: Arc<StaticMesh>,
    distances: CullDistances,
    /// UE's `MinLOD`, below [`crate::MAX_LODS`].
    min_lod: u8,
    lod_dither: LodDitherBand,
    dirty: DirtyFlags,
    /// The union bounds engine-core last saw through `local_bounds`.
    reported_bounds: Aabb,
    /// Set when a proxy was created from the whole store: the dirty ranges
    /// recorded until then are already in it.
    fresh_proxy: AtomicBool,
    pending_distances: bool,
    pending_min_lod: bool,
    pending_lod_dither: bool,
    pending_bounds: bool,
    /// HISM mode.
    hism: Option<Hism>,
}

/// What HISM mode adds: the tree builder, the culling mesh it sizes leaves
/// from, and whether a newly installed tree still has to reach the proxy.
#[derive(Debug)]
struct Hism {
    builder: ClusterTreeBuilder,
    mesh: InstancedMesh,
    pending_tree: bool,
}

impl Hism {
    fn new(mesh: &StaticMesh) -> Result<Self> {
        Ok(Self {
            builder: ClusterTreeBuilder::default(),
            mesh: crate::proxy::instanced_mesh_for(mesh.render_data())?,
            pending_tree: false,
        })
    }

    /// The current tree for the proxy, with the indices edited since its
    /// snapshot (see [`crate::hism`]).
    fn proxy_tree(&self, store: &InstanceStore) -> Option<HismTree> {
        let tree = self.builder.current()?.clone();
        let g = tree.generation();
        let edited_since = store.cull_edits().into_iter().filter(|&i| store.modified_generation(i) > g).collect();
        Some(HismTree { tree, edited_since })
    }
}

impl std::fmt::Debug for InstancedStaticMeshComponent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InstancedStaticMeshComponent")
            .field("mesh", &self.mesh.name)
            .field("instances", &self.store.instance_count())
            .finish()
    }
}

impl InstancedStaticMeshComponent {
    /// An empty component drawing `mesh`.
    pub fn new(mesh: Arc<StaticMesh>) -> Result<Self> {
        let store = InstanceStore::new(mesh_bounds(&mesh)?);
        Ok(Self {
            store,
            mesh,
            distances: CullDistances::NONE,
            min_lod: 0,
            lod_dither: LodDitherBand::OFF,
            dirty: DirtyFlags::NONE,
            reported_bounds: Aabb::EMPTY,
            fresh_proxy: AtomicBool::new(false),
            pending_distances: false,
            pending_min_lod: false,
            pending_lod_dither: false,
            pending_bounds: false,
            hism: None,
        })
    }

    /// An empty HISM component (see the module docs and [`crate::hism`]).
    pub fn new_hierarchical(mesh: Arc<StaticMesh>) -> Result<Self> {
        let hism = Hism::new(&mesh)?;
        Ok(Self { hism: Some(hism), ..Self::new(mesh)? })
    }

    pub fn is_hierarchical(&self) -> bool {
        self.hism.is_some()
    }

    /// HISM: the tree culls use now (possibly older than the instances).
    pub fn cluster_tree(&self) -> Option<&Arc<ClusterTree>> {
        self.hism.as_ref().and_then(|h| h.builder.current())
    }

    /// HISM: whether a background rebuild is under way.
    pub fn is_building_tree(&self) -> bool {
        self.hism.as_ref().is_some_and(|h| h.builder.is_building())
    }

    /// HISM: requests a rebuild if the tree is stale and blocks until it is
    /// installed (loading screens, tests); it goes to the proxy with the next
    /// end-of-frame update. Does nothing for a plain ISM. Safe to call from
    /// a rayon worker ([`crate::ClusterTreeBuilder::wait`]). A build that
    /// panicked is [`crate::InstancingError::TreeBuildFailed`]; the previous tree
    /// stays.
    pub fn wait_for_cluster_tree(&mut self) -> Result<()> {
        self.before_edit();
        let Some(h) = &mut self.hism else { return Ok(()) };
        h.builder.request_rebuild(&self.store, &h.mesh);
        if h.builder.is_building() {
            h.builder.wait(&mut self.store)?;
            h.pending_tree = true;
            self.dirty = self.dirty | DirtyFlags::DYNAMIC_DATA;
        }
        Ok(())
    }

    /// The game side's CPU cull of this component for `view` with the
    /// component at `component_to_world`: through the cluster tree (HISM
    /// with a tree; exact while stale), else flat. The same visible set,
    /// LODs and fades as the proxy's culling.
    pub fn cull(&self, component_to_world: &Affine3A, view: &CullView) -> Result<(CullOutput, TreeCullStats)> {
        match &self.hism {
            Some(h) => Ok(h.builder.cull(
                &self.store,
                &InstanceCuller::new(&h.mesh, component_to_world, view, self.distances)?
                    .with_min_lod(self.min_lod)
                    .with_lod_dither(self.lod_dither),
            )),
            None => {
                let mesh = crate::proxy::instanced_mesh_for(self.mesh.render_data())?;
                let culler = InstanceCuller::new(&mesh, component_to_world, view, self.distances)?
                    .with_min_lod(self.min_lod)
                    .with_lod_dither(self.lod_dither);
                let out = cull_instances(&self.store, &culler);
                Ok((out, TreeCullStats { fell_back_to_flat: true, ..TreeCullStats::default() }))
            }
        }
    }

    pub fn mesh(&self) -> &Arc<StaticMesh> {
        &self.mesh
    }

    /// The instances (read-only; edit through the component so edits are recorded).
    pub fn store(&self) -> &InstanceStore {
        &self.store
    }

    pub fn instance_count(&self) -> u32 {
        self.store.instance_count()
    }

    pub fn cull_distances(&self) -> CullDistances {
        self.distances
    }

    /// UE's `MinLOD`: the most detailed LOD any instance draws.
    pub fn min_lod(&self) -> u32 {
        u32::from(self.min_lod)
    }

    /// Forgets what a freshly created proxy already holds (it was built from
    /// the whole component): dirty ranges, flags and pending messages.
    fn before_edit(&mut self) {
        if self.fresh_proxy.swap(false, Ordering::AcqRel) {
            self.store.take_dirty_ranges();
            self.dirty = DirtyFlags::NONE;
            self.pending_distances = false;
            self.pending_min_lod = false;
            self.pending_lod_dither = false;
            self.pending_bounds = false;
            self.reported_bounds = self.store.bounds();
            if let Some(h) = &mut self.hism {
                h.pending_tree = false;
            }
        }
    }

    /// Records an instance edit (`DYNAMIC_DATA`, plus `TRANSFORM` when the
    /// union bounds changed).
    fn edited<T>(&mut self, r: Result<T>) -> Result<T> {
        if r.is_ok() {
            self.dirty = self.dirty | DirtyFlags::DYNAMIC_DATA;
            let b = self.store.bounds();
            if b != self.reported_bounds {
                self.reported_bounds = b;
                self.pending_bounds = true;
                self.dirty = self.dirty | DirtyFlags::TRANSFORM;
            }
        }
        r
    }

    /// UE's `AddInstance` (transform relative to the component, or world).
    pub fn add_instance(&mut self, transform: Affine3A, space: TransformSpace) -> Result<InstanceId> {
        let local = self.to_component(transform, space)?;
        self.before_edit();
        let r = self.store.add_instance(local);
        self.edited(r)
    }

    /// UE's `AddInstances`, all or nothing; ids in input order.
    pub fn add_instances(&mut self, transforms: &[Affine3A], space: TransformSpace) -> Result<Vec<InstanceId>> {
        let locals = transforms.iter().map(|t| self.to_component(*t, space)).collect::<Result<Vec<_>>>()?;
        self.before_edit();
        let r = self.store.add_instances(&locals);
        self.edited(r)
    }

    /// UE's `AddInstance` with the instance's custom data
    /// (`num_custom_data_floats` values).
    pub fn add_instance_with_custom_data(&mut self, transform: Affine3A, space: TransformSpace, custom: &[f32]) -> Result<InstanceId> {
        let local = self.to_component(transform, space)?;
        self.before_edit();
        let r = self.store.add_instance_with_custom_data(local, custom);
        self.edited(r)
    }

    /// UE's `RemoveInstance` (swap-remove: the last instance takes `index`).
    pub fn remove_instance(&mut self, index: u32) -> Result<InstanceId> {
        self.store.id_at(index)?;
        self.before_edit();
        let r = self.store.remove_instance(index);
        self.edited(r)
    }

    /// UE's `RemoveInstances`, by id, all or nothing (every id live, none
    /// twice).
    pub fn remove_instances_by_id(&mut self, ids: &[InstanceId]) -> Result<()> {
        self.before_edit();
        let r = self.store.remove_instances_by_id(ids);
        self.edited(r)
    }

    /// UE's `UpdateInstanceTransform`.
    pub fn update_instance_transform(&mut self, index: u32, transform: Affine3A, space: TransformSpace) -> Result<()> {
        self.store.id_at(index)?;
        let local = self.to_component(transform, space)?;
        self.before_edit();
        let r = self.store.update_instance_transform(index, local, TransformSpace::Component);
        self.edited(r)
    }

    /// UE's `GetInstanceTransform`.
    pub fn get_instance_transform(&self, index: u32, space: TransformSpace) -> Result<Affine3A> {
        self.store.get_instance_transform(index, space)
    }

    /// UE's `ClearInstances`.
    pub fn clear_instances(&mut self) {
        self.before_edit();
        self.store.clear_instances();
        let _ = self.edited(Ok(()));
    }

    /// UE's `NumCustomDataFloats` (every instance becomes dirty; at most
    /// [`crate::MAX_CUSTOM_DATA_FLOATS`]).
    pub fn set_num_custom_data_floats(&mut self, n: u32) -> Result<()> {
        if n == self.store.num_custom_data_floats() {
            return Ok(());
        }
        if n > crate::MAX_CUSTOM_DATA_FLOATS {
            return Err(crate::InstancingError::TooManyCustomDataFloats { requested: n, max: crate::MAX_CUSTOM_DATA_FLOATS });
        }
        self.before_edit();
        let r = self.store.set_num_custom_data_floats(n);
        self.edited(r)
    }

    /// UE's `InstancingRandomSeed`: the seed of every instance's
    /// `PerInstanceRandom` (a change re-sends every instance).
    pub fn set_random_seed(&mut self, seed: u32) {
        self.before_edit();
        if seed != self.store.random_seed() {
            self.store.set_random_seed(seed);
            let _ = self.edited(Ok(()));
        }
    }

    pub fn random_seed(&self) -> u32 {
        self.store.random_seed()
    }

    /// UE's `SetCustomDataValue`.
    pub fn set_custom_data_value(&mut self, index: u32, float_index: u32, value: f32) -> Result<()> {
        self.store.check_custom_data_value(index, float_index, value)?;
        self.before_edit();
        let r = self.store.set_custom_data_value(index, float_index, value);
        self.edited(r)
    }

    /// UE's `SetCustomData`: all of one instance's custom floats
    /// (`num_custom_data_floats` values).
    pub fn set_custom_data(&mut self, index: u32, data: &[f32]) -> Result<()> {
        self.before_edit();
        let r = self.store.set_custom_data(index, data);
        self.edited(r)
    }

    /// UE's `SetCullDistances` (sent to the existing proxy).
    pub fn set_cull_distances(&mut self, start: f32, end: f32) -> Result<()> {
        let d = CullDistances::new(start, end)?;
        self.before_edit();
        if d != self.distances {
            self.distances = d;
            self.pending_distances = true;
            self.dirty = self.dirty | DirtyFlags::DYNAMIC_DATA;
        }
        Ok(())
    }

    /// UE's `MinLOD` (sent to the existing proxy): no instance draws a LOD
    /// more detailed than `min_lod`. Below [`crate::MAX_LODS`], else
    /// [`crate::InstancingError::InvalidMinLod`] and no change; a value past
    /// the mesh's LODs draws its last LOD (clamped where LODs are picked,
    /// so it survives a change to a mesh with more LODs).
    pub fn set_min_lod(&mut self, min_lod: u32) -> Result<()> {
        if min_lod as usize >= crate::MAX_LODS {
            return Err(crate::InstancingError::InvalidMinLod { min_lod, max: crate::MAX_LODS as u32 });
        }
        self.before_edit();
        let l = min_lod as u8;
        if l != self.min_lod {
            self.min_lod = l;
            self.pending_min_lod = true;
            self.dirty = self.dirty | DirtyFlags::DYNAMIC_DATA;
        }
        Ok(())
    }

    /// UE's dithered LOD transition (sent to the existing proxy, like the
    /// minimum LOD): within `band / 2` (a fraction of the threshold's
    /// screen size) of each LOD threshold an instance is drawn at both
    /// neighbouring LODs with complementary 4×4 dither masks, every pixel
    /// by exactly one of them, the finer LOD's share growing from 0 to 1
    /// across the band (see [`crate::culling::select_lod_dithered`]). `0`
    /// turns it off (the default: LODs switch abruptly, the image does not
    /// change); [`LodDitherBand::DEFAULT_BAND`] (0.2) is a good start.
    /// Outside `0..=1` or not finite:
    /// [`crate::InstancingError::InvalidLodDitherBand`] and no change.
    ///
    /// While it is on the component draws with the dithered vertex factory
    /// ([`crate::INSTANCED_DITHERED_VERTEX_FACTORY`]), which combines the
    /// transition with the cull-distance fade: a pixel is drawn by exactly
    /// one LOD iff the fade keeps it. Opaque and masked sections only:
    /// translucent sections draw one copy (the LOD [`crate::select_lod`]
    /// picks) with the fade multiplying opacity, as without the transition.
    /// Visible-instance counts count both copies of an instance in a band.
    pub fn set_dithered_lod_transition(&mut self, band: f32) -> Result<()> {
        let b = LodDitherBand::new(band)?;
        self.before_edit();
        if b != self.lod_dither {
            self.lod_dither = b;
            self.pending_lod_dither = true;
            self.dirty = self.dirty | DirtyFlags::DYNAMIC_DATA;
        }
        Ok(())
    }

    /// The dithered LOD transition band ([`Self::set_dithered_lod_transition`]).
    pub fn dithered_lod_transition(&self) -> LodDitherBand {
        self.lod_dither
    }

    /// Changes the mesh: the proxy is recreated from the whole store.
    pub fn set_mesh(&mut self, mesh: Arc<StaticMesh>) -> Result<()> {
        if Arc::ptr_eq(&self.mesh, &mesh) {
            return Ok(());
        }
        let mb = mesh_bounds(&mesh)?;
        let hism = self.hism.as_ref().map(|_| Hism::new(&mesh)).transpose()?;
        self.before_edit();
        if hism.is_some() {
            // A new leaf size and new spheres: start over (a build of the
            // old mesh still running is dropped when it finishes).
            self.hism = hism;
        }
        self.store.set_mesh_bounds(mb);
        self.mesh = mesh;
        self.reported_bounds = self.store.bounds();
        self.dirty = self.dirty | DirtyFlags::RENDER_STATE;
        Ok(())
    }

    fn to_component(&self, t: Affine3A, space: TransformSpace) -> Result<Affine3A> {
        validate_transform(&t)?;
        match space {
            TransformSpace::Component => Ok(t),
            TransformSpace::World(c2w) => {
                validate_transform(&c2w)?;
                let local = c2w.inverse() * t;
                validate_transform(&local)?;
                Ok(local)
            }
        }
    }

    fn materials(&self, ctx: &ProxyCreateContext<'_>) -> Vec<MaterialId> {
        let slots = self.mesh.material_slots.len().max(1);
        (0..slots).map(|i| ctx.settings.materials.get(i).copied().unwrap_or(MaterialId::DEFAULT)).collect()
    }

    fn build_proxy(&self, ctx: &ProxyCreateContext<'_>) -> Result<InstancedStaticMeshSceneProxy> {
        let c2w = Affine3A::from_mat4(ctx.local_to_world);
        let instances = pack_range(&self.store, 0..self.store.instance_count())?;
        let proxy = InstancedStaticMeshSceneProxy::new(
            self.mesh.render_data().clone(),
            self.materials(ctx),
            instances,
            renderer_bounds(&self.store.bounds()),
            c2w,
            self.distances,
        )?
        .with_custom_data(self.store.num_custom_data_floats(), self.store.custom_data())?
        .with_min_lod(self.min_lod)
        .with_lod_dither(self.lod_dither)
        .with_cast_shadow(ctx.settings.cast_shadow);
        Ok(match &self.hism {
            Some(h) => proxy.with_hierarchical(h.proxy_tree(&self.store)),
            None => proxy,
        })
    }
}

impl Component for InstancedStaticMeshComponent {
    /// HISM: installs a finished tree (sent with the next end-of-frame
    /// update) and starts a rebuild when the instances changed since.
    fn tick(&mut self, _dt: f32) -> DirtyFlags {
        self.before_edit();
        let Some(h) = &mut self.hism else { return DirtyFlags::NONE };
        match h.builder.poll(&mut self.store) {
            Ok(true) => {
                h.pending_tree = true;
                self.dirty = self.dirty | DirtyFlags::DYNAMIC_DATA;
            }
            Ok(false) => {}
            // Culling stays exact without a new tree (edits cull flat).
            Err(e) => log::error!("instanced static mesh component ({}): {e}", self.mesh.name),
        }
        h.builder.request_rebuild(&self.store, &h.mesh);
        DirtyFlags::NONE
    }

    fn wants_tick(&self) -> bool {
        self.hism.is_some()
    }

    fn as_primitive(&self) -> Option<&dyn PrimitiveComponent> {
        Some(self)
    }
    fn as_primitive_mut(&mut self) -> Option<&mut dyn PrimitiveComponent> {
        Some(self)
    }
}

impl PrimitiveComponent for InstancedStaticMeshComponent {
    fn create_scene_proxy(&self, ctx: &ProxyCreateContext<'_>) -> Option<Box<dyn PrimitiveSceneProxy>> {
        match self.build_proxy(ctx) {
            Ok(p) => {
                self.fresh_proxy.store(true, Ordering::Release);
                Some(Box::new(p))
            }
            Err(e) => {
                log::error!("instanced static mesh component ({}): {e}", self.mesh.name);
                None
            }
        }
    }

    fn local_bounds(&self) -> Bounds {
        renderer_bounds(&self.store.bounds())
    }

    fn take_dirty(&mut self) -> DirtyFlags {
        self.before_edit();
        std::mem::replace(&mut self.dirty, DirtyFlags::NONE)
    }

    fn dynamic_data(&mut self) -> Option<Box<dyn Any + Send>> {
        self.before_edit();
        let n = self.store.instance_count();
        let floats = self.store.num_custom_data_floats();
        let mut ranges = Vec::new();
        let mut values = Vec::new();
        for r in self.store.take_dirty_ranges() {
            let r = r.start.min(n)..r.end.min(n);
            if r.is_empty() {
                continue;
            }
            match pack_range(&self.store, r.clone()) {
                Ok(p) => {
                    ranges.push((r.start, p));
                    values.extend_from_slice(custom_range(&self.store, r));
                }
                Err(e) => log::error!("instanced static mesh component ({}): {e}", self.mesh.name),
            }
        }
        let custom_data = Some(IsmCustomData { floats_per_instance: floats, values });
        let distances = std::mem::take(&mut self.pending_distances).then_some(self.distances);
        let min_lod = std::mem::take(&mut self.pending_min_lod).then_some(self.min_lod);
        let lod_dither = std::mem::take(&mut self.pending_lod_dither).then_some(self.lod_dither);
        let local_bounds = std::mem::take(&mut self.pending_bounds).then(|| renderer_bounds(&self.store.bounds()));
        let tree = match &mut self.hism {
            Some(h) if h.pending_tree => {
                h.pending_tree = false;
                h.proxy_tree(&self.store)
            }
            _ => None,
        };
        Some(Box::new(IsmUpdate { instance_count: n, ranges, local_bounds, distances, min_lod, lod_dither, tree, custom_data }))
    }
}
