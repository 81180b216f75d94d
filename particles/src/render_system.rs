//! Game-side glue between a [`ParticleSystemInstance`] and the renderer
//! without a `World`: what [`crate::ParticleSystemComponent`] does through
//! engine-core when it registers (add the proxy) and at the end of each
//! frame (send the snapshot).
//!
//! ```text
//! register      add_particle_system(rt, &instance, materials) → PrimitiveId
//! every frame   instance.tick(dt); send_dynamic_data(rt, id, &instance)
//!                 ├─ RenderThread::update_dynamic_data(id, snapshot)
//!                 └─ RenderThread::update_primitive_transform_and_bounds(id, I, bounds)
//! unregister    rt.remove_primitive(id)
//! ```
//!
//! [`send_dynamic_data`] builds a fresh snapshot each call. For large
//! systems, recycle them as the component does: give the proxy a
//! [`crate::SnapshotPool`]'s returner
//! (`create_proxy(..).with_snapshot_returner(pool.returner())`, added with
//! `rt.add_primitive`) and send `pool.build(&instance)` through
//! `rt.update_dynamic_data`.

use glam::{Mat4, Vec3};
use renderer::{Bounds, PrimitiveId, RenderThread};

use crate::bounds::Aabb;
use crate::materials::ParticleMaterials;
use crate::proxy::ParticleSystemSceneProxy;
use crate::system_instance::ParticleSystemInstance;

/// A proxy for `instance`, holding its current snapshot (so it draws before
/// the first [`send_dynamic_data`]).
pub fn create_proxy(instance: &ParticleSystemInstance, materials: ParticleMaterials) -> ParticleSystemSceneProxy {
    let origin = Vec3::from(instance.transform().translation);
    ParticleSystemSceneProxy::new(materials, instance.build_dynamic_data(), origin)
}

/// Adds `instance`'s proxy to the scene with the identity transform
/// (particles are simulated in world space) and returns its id.
pub fn add_particle_system(
    rt: &mut RenderThread,
    instance: &ParticleSystemInstance,
    materials: ParticleMaterials,
) -> renderer::Result<PrimitiveId> {
    rt.add_primitive(Box::new(create_proxy(instance, materials)), Mat4::IDENTITY)
}

/// Sends `instance`'s snapshot to its proxy, and its bounds (live sprites or
/// the fixed bounds) to the scene for culling and translucency sorting.
/// With nothing alive and no fixed bounds the scene keeps the last bounds.
pub fn send_dynamic_data(rt: &mut RenderThread, id: PrimitiveId, instance: &ParticleSystemInstance) -> renderer::Result<()> {
    let data = instance.build_dynamic_data();
    let bounds = data.bounds;
    rt.update_dynamic_data(id, Box::new(data))?;
    if let Some(b) = bounds {
        rt.update_primitive_transform_and_bounds(id, Mat4::IDENTITY, to_renderer_bounds(b))?;
    }
    Ok(())
}

/// A particle box as the renderer's bounds.
pub fn to_renderer_bounds(b: Aabb) -> Bounds {
    Bounds::from_box(b.min, b.max)
}
