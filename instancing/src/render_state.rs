//! Game-side glue between an [`InstanceStore`] and its render-thread proxy
//! without an engine-core `World` (in a world, use
//! [`crate::InstancedStaticMeshComponent`]): adds the proxy, and after edits sends only the dirty ranges
//! (UE's `SendRenderDynamicData`).
//!
//! The renderer reads a proxy's bounds only when it is added, so when edits
//! move instances outside the bounds the scene knows, [`IsmRenderState::flush`]
//! re-adds the proxy with the whole store ([`FlushOutcome::Recreated`]).
//! Edits inside the bounds never recreate anything.

use std::sync::Arc;

use glam::{Affine3A, Mat4, Vec3};
use renderer::{Bounds, MaterialId, PrimitiveId, RenderThread, StaticMeshRenderData};

use crate::bounds::Aabb;
use crate::culling::CullDistances;
use crate::error::Result;
use crate::instance_data::InstanceStore;
use crate::proxy::{InstancedStaticMeshSceneProxy, IsmCustomData, IsmStats, IsmUpdate};
use crate::vertex_factory::InstanceStreamData;

/// What [`IsmRenderState::flush`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FlushOutcome {
    /// Nothing was dirty.
    Nothing,
    /// Dirty ranges sent in place: `instances` instances' bytes.
    Updated { instances: u64 },
    /// The bounds grew: the proxy was replaced.
    Recreated,
}

/// The render state of one instanced static mesh component.
pub struct IsmRenderState {
    id: PrimitiveId,
    mesh: Arc<StaticMeshRenderData>,
    materials: Vec<MaterialId>,
    cast_shadow: bool,
    component_to_world: Affine3A,
    distances: CullDistances,
    registered_bounds: Aabb,
    instance_count: u32,
    stats: IsmStats,
}

fn pack_range(store: &InstanceStore, range: std::ops::Range<u32>) -> Result<Vec<InstanceStreamData>> {
    let mut gpu = Vec::with_capacity(range.len());
    store.write_gpu_data(range.clone(), &mut gpu)?;
    gpu.iter().zip(range).map(|(g, i)| Ok(InstanceStreamData::new(g, store.instance_custom_data(i)?))).collect()
}

fn renderer_bounds(b: &Aabb) -> Bounds {
    if b.is_empty() {
        Bounds::from_box(Vec3::ZERO, Vec3::ZERO)
    } else {
        Bounds::from_box(b.min, b.max)
    }
}

impl IsmRenderState {
    /// Creates the proxy from the whole store and adds it to `rt`; clears
    /// the store's dirty ranges (everything went up).
    pub fn add(
        rt: &mut RenderThread,
        store: &mut InstanceStore,
        mesh: Arc<StaticMeshRenderData>,
        materials: Vec<MaterialId>,
        component_to_world: Affine3A,
        distances: CullDistances,
    ) -> Result<Self> {
        let mut s = Self {
            id: PrimitiveId::new(),
            mesh,
            materials,
            cast_shadow: true,
            component_to_world,
            distances,
            registered_bounds: Aabb::EMPTY,
            instance_count: 0,
            stats: IsmStats::default(),
        };
        s.add_proxy(rt, store)?;
        Ok(s)
    }

    fn add_proxy(&mut self, rt: &mut RenderThread, store: &mut InstanceStore) -> Result<()> {
        store.take_dirty_ranges();
        let bounds = store.tighten_bounds();
        let instances = pack_range(store, 0..store.instance_count())?;
        let proxy = InstancedStaticMeshSceneProxy::new(
            self.mesh.clone(),
            self.materials.clone(),
            instances,
            renderer_bounds(&bounds),
            self.component_to_world,
            self.distances,
        )?
        .with_custom_data(store.num_custom_data_floats(), store.custom_data())?
        .with_cast_shadow(self.cast_shadow);
        self.stats = proxy.stats();
        self.id = PrimitiveId::new();
        rt.add_primitive_with_id(self.id, Box::new(proxy), Mat4::from(self.component_to_world))?;
        self.registered_bounds = bounds;
        self.instance_count = store.instance_count();
        Ok(())
    }

    pub fn id(&self) -> PrimitiveId {
        self.id
    }

    /// The proxy's statistics (replaced when the proxy is recreated).
    pub fn stats(&self) -> IsmStats {
        self.stats.clone()
    }

    /// Sends the store's edits since the last flush: dirty ranges in place,
    /// or a new proxy when the instances left the registered bounds.
    pub fn flush(&mut self, rt: &mut RenderThread, store: &mut InstanceStore) -> Result<FlushOutcome> {
        let bounds = store.bounds();
        if !bounds.is_empty() && !self.registered_bounds.contains_box(&bounds) {
            rt.remove_primitive(self.id)?;
            self.add_proxy(rt, store)?;
            return Ok(FlushOutcome::Recreated);
        }
        let ranges = store.take_dirty_ranges();
        if ranges.is_empty() && store.instance_count() == self.instance_count {
            return Ok(FlushOutcome::Nothing);
        }
        let mut packed = Vec::with_capacity(ranges.len());
        let mut instances = 0u64;
        let floats = store.num_custom_data_floats() as usize;
        let mut values = Vec::new();
        for r in ranges {
            let r = r.start.min(store.instance_count())..r.end.min(store.instance_count());
            if r.is_empty() {
                continue;
            }
            instances += r.len() as u64;
            values.extend_from_slice(&store.custom_data()[r.start as usize * floats..r.end as usize * floats]);
            packed.push((r.start, pack_range(store, r)?));
        }
        self.instance_count = store.instance_count();
        let custom_data = Some(IsmCustomData { floats_per_instance: floats as u32, values });
        let update = IsmUpdate { instance_count: self.instance_count, ranges: packed, custom_data, ..Default::default() };
        rt.update_dynamic_data(self.id, Box::new(update))?;
        Ok(FlushOutcome::Updated { instances })
    }

    /// Moves the component: a plain transform update, which the scene passes
    /// on to the proxy (`on_transform_changed`) for culling.
    pub fn set_transform(&mut self, rt: &mut RenderThread, component_to_world: Affine3A) -> Result<()> {
        crate::transform::validate_transform(&component_to_world)?;
        rt.update_primitive_transform(self.id, Mat4::from(component_to_world))?;
        self.component_to_world = component_to_world;
        Ok(())
    }

    /// UE's `InstanceStartCullDistance` / `InstanceEndCullDistance`.
    pub fn set_cull_distances(&mut self, rt: &mut RenderThread, distances: CullDistances) -> Result<()> {
        self.distances = distances;
        let update = IsmUpdate { instance_count: self.instance_count, distances: Some(distances), ..Default::default() };
        rt.update_dynamic_data(self.id, Box::new(update))?;
        Ok(())
    }

    /// Removes the proxy from the scene.
    pub fn remove(self, rt: &mut RenderThread) -> Result<()> {
        rt.remove_primitive(self.id)?;
        Ok(())
    }
}
