//! `ParticleSystemComponent` (UE's `UParticleSystemComponent`): a
//! [`ParticleSystemInstance`] living in an engine-core [`engine_core::World`].
//!
//! ```text
//! World::tick(dt)                  component.tick(dt) → instance.tick(dt)
//!                                  → DYNAMIC_DATA | TRANSFORM (every frame)
//! send_all_end_of_frame_updates    render state: create_scene_proxy (snapshot)
//!                                  dynamic data: dynamic_data() → proxy
//!                                    (built in the arrays of a snapshot
//!                                    the proxy handed back: SnapshotPool)
//!                                  transform:    local_bounds() → scene bounds
//! ```
//!
//! * **World space.** The snapshot's particles are in world space (those
//!   of local-space emitters carried there), but
//!   engine-core adds the proxy with the component's world transform `W`
//!   and sends `W` with [`PrimitiveComponent::local_bounds`]. The sprite
//!   vertex factory ignores the primitive transform, so drawing is right
//!   either way; for culling and translucency sorting the bounds are
//!   reported in the component's frame (the particles' world box
//!   transformed by `W⁻¹`, which the scene maps back with `W`).
//! * **Spawn transform.** Proxies are created from `&self`, so the
//!   component cannot learn its world transform from the world by itself.
//!   It spawns particles at its *spawn transform*
//!   ([`ParticleSystemComponent::with_spawn_transform`] /
//!   [`ParticleSystemComponent::set_spawn_transform`]), which the caller
//!   keeps equal to the component's world transform
//!   (`World::world_transform`); `local_bounds` uses it as `W`.
//!   The identity (the default) is right for a component at the origin.
//! * **Materials** are given at construction
//!   ([`ParticleMaterials::for_system`] beforehand); the world's per-slot
//!   materials are not used (emitters name their materials).
//! * [`ParticleSystemComponent::activate`] / `deactivate` control spawning
//!   (live particles simulate until they die); `World::set_active(false)`
//!   stops ticking altogether. [`ParticleSystemComponent::set_spawn_rate_scale`]
//!   scales spawning at run time, and
//!   [`ParticleSystemComponent::take_completion_event`] reports the system
//!   completing (its emitters' loops done and their particles dead).
//! * **Local space.** Emitters with `use_local_space` simulate in the
//!   spawn transform's frame; their snapshot is carried to the world with
//!   it, so moving the component (its spawn transform) moves their live
//!   particles.

use std::any::Any;
use std::sync::Arc;

use engine_core::{Component, DirtyFlags, PrimitiveComponent, ProxyCreateContext};
use glam::{Affine3A, Mat4, Vec3};
use renderer::{Bounds, PrimitiveSceneProxy};

use crate::asset::ParticleSystem;
use crate::bounds::Aabb;
use crate::error::ParticleError;
use crate::materials::ParticleMaterials;
use crate::proxy::{ParticleSystemSceneProxy, DEFAULT_BOUNDS_HALF_EXTENT};
use crate::snapshot_pool::SnapshotPool;
use crate::system_instance::ParticleSystemInstance;

/// A particle system as a primitive component; see the module docs.
#[derive(Debug)]
pub struct ParticleSystemComponent {
    instance: ParticleSystemInstance,
    materials: ParticleMaterials,
    dirty: DirtyFlags,
    /// Snapshots the proxy handed back, rebuilt in place each frame.
    snapshots: SnapshotPool,
}

impl ParticleSystemComponent {
    /// A component simulating `system` with random streams from `seed`,
    /// drawing with `materials`. Fails (naming the field) if the asset does
    /// not validate.
    pub fn new(system: Arc<ParticleSystem>, seed: u64, materials: ParticleMaterials) -> Result<Self, ParticleError> {
        Ok(Self::from_instance(ParticleSystemInstance::new(system, seed)?, materials))
    }

    /// A component owning an existing instance.
    pub fn from_instance(instance: ParticleSystemInstance, materials: ParticleMaterials) -> Self {
        Self { instance, materials, dirty: DirtyFlags::NONE, snapshots: SnapshotPool::new() }
    }

    /// Sets the spawn transform (see the module docs); rejects non-finite ones.
    pub fn with_spawn_transform(mut self, local_to_world: Mat4) -> Result<Self, ParticleError> {
        self.set_spawn_transform(local_to_world)?;
        Ok(self)
    }

    /// Sets the transform new particles spawn with: keep it equal to the
    /// component's world transform. Rejects a non-finite transform, keeping
    /// the old one. Marks the transform dirty (the bounds change frame).
    pub fn set_spawn_transform(&mut self, local_to_world: Mat4) -> Result<(), ParticleError> {
        if !local_to_world.is_finite() {
            return Err(ParticleError::NonFiniteTransform);
        }
        self.instance.set_transform(Affine3A::from_mat4(local_to_world))?;
        self.dirty = self.dirty | DirtyFlags::TRANSFORM;
        Ok(())
    }

    /// The spawn transform.
    pub fn spawn_transform(&self) -> Mat4 {
        Mat4::from(*self.instance.transform())
    }

    /// The simulation.
    pub fn instance(&self) -> &ParticleSystemInstance {
        &self.instance
    }

    /// The simulation, mutably (ticking mode, fixed bounds…). Changes reach
    /// the renderer with the next tick's snapshot.
    pub fn instance_mut(&mut self) -> &mut ParticleSystemInstance {
        &mut self.instance
    }

    /// The asset being simulated.
    pub fn system(&self) -> &Arc<ParticleSystem> {
        self.instance.system()
    }

    /// Snapshots handed back by the proxy, waiting to be rebuilt.
    pub fn snapshot_pool(&self) -> &SnapshotPool {
        &self.snapshots
    }

    /// The material mapping.
    pub fn materials(&self) -> &ParticleMaterials {
        &self.materials
    }

    /// Replaces the material mapping (the proxy is recreated).
    pub fn set_materials(&mut self, materials: ParticleMaterials) {
        if materials != self.materials {
            self.materials = materials;
            self.dirty = self.dirty | DirtyFlags::RENDER_STATE;
        }
    }

    /// Replaces the asset: validated first; on error the previous asset and
    /// its particles are kept and the error returned. On success the
    /// emitters restart and the proxy is recreated (the new asset may have
    /// other emitters and blend modes). Give the new asset's material names
    /// materials first ([`ParticleMaterials::add_missing`] and
    /// [`Self::set_materials`]).
    pub fn set_system(&mut self, system: Arc<ParticleSystem>) -> Result<(), ParticleError> {
        self.instance.set_system(system)?;
        self.dirty = self.dirty | DirtyFlags::RENDER_STATE;
        Ok(())
    }

    /// Starts spawning again (see [`ParticleSystemInstance::activate`]).
    pub fn activate(&mut self) {
        self.instance.activate();
    }

    /// Stops spawning; live particles simulate until they die.
    pub fn deactivate(&mut self) {
        self.instance.deactivate();
    }

    /// Whether emitters spawn.
    pub fn is_active(&self) -> bool {
        self.instance.is_active()
    }

    /// Multiplies every emitter's spawn rate by `scale` at run time (see
    /// [`ParticleSystemInstance::set_spawn_rate_scale`]); a negative, NaN
    /// or infinite `scale` is rejected and the previous one kept.
    pub fn set_spawn_rate_scale(&mut self, scale: f32) -> Result<(), ParticleError> {
        self.instance.set_spawn_rate_scale(scale)
    }

    /// The completion event: true once after the tick on which the system
    /// completed (every emitter's loops done and its last particle dead),
    /// as UE's `OnSystemFinished` fires; see
    /// [`ParticleSystemInstance::take_completion_event`]. Poll it after
    /// `World::tick`.
    pub fn take_completion_event(&mut self) -> bool {
        self.instance.take_completion_event()
    }

    /// World box of the live sprites (or the fixed bounds), or a box of
    /// [`DEFAULT_BOUNDS_HALF_EXTENT`] around the spawn origin while nothing
    /// is alive.
    pub fn world_bounds(&self) -> Aabb {
        self.instance.bounds().unwrap_or_else(|| {
            let origin = Vec3::from(self.instance.transform().translation);
            Aabb::new(origin - Vec3::splat(DEFAULT_BOUNDS_HALF_EXTENT), origin + Vec3::splat(DEFAULT_BOUNDS_HALF_EXTENT))
        })
    }
}

/// `b` expressed in the frame whose local-to-world is `local_to_world`
/// (unchanged if that is the identity or not invertible).
fn to_local(b: Aabb, local_to_world: Mat4) -> Bounds {
    let world = Bounds::from_box(b.min, b.max);
    let inv = local_to_world.inverse();
    if local_to_world == Mat4::IDENTITY || !inv.is_finite() {
        world
    } else {
        world.transformed(&inv)
    }
}

impl Component for ParticleSystemComponent {
    fn wants_tick(&self) -> bool {
        true
    }

    /// Simulates; particles move every frame, so the snapshot and the
    /// bounds are sent every frame.
    fn tick(&mut self, dt: f32) -> DirtyFlags {
        self.instance.tick(dt);
        DirtyFlags::DYNAMIC_DATA | DirtyFlags::TRANSFORM
    }

    fn as_primitive(&self) -> Option<&dyn PrimitiveComponent> {
        Some(self)
    }

    fn as_primitive_mut(&mut self) -> Option<&mut dyn PrimitiveComponent> {
        Some(self)
    }
}

impl PrimitiveComponent for ParticleSystemComponent {
    fn create_scene_proxy(&self, ctx: &ProxyCreateContext<'_>) -> Option<Box<dyn PrimitiveSceneProxy>> {
        let origin = ctx.local_to_world.w_axis.truncate();
        Some(Box::new(
            ParticleSystemSceneProxy::new(self.materials.clone(), self.snapshots.build(&self.instance), origin)
                .with_local_to_world(ctx.local_to_world)
                .with_snapshot_returner(self.snapshots.returner()),
        ))
    }

    fn local_bounds(&self) -> Bounds {
        to_local(self.world_bounds(), self.spawn_transform())
    }

    fn take_dirty(&mut self) -> DirtyFlags {
        std::mem::replace(&mut self.dirty, DirtyFlags::NONE)
    }

    fn dynamic_data(&mut self) -> Option<Box<dyn Any + Send>> {
        Some(Box::new(self.snapshots.build(&self.instance)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn component() -> ParticleSystemComponent {
        let json = r#"{"emitters": [{
            "name": "puff",
            "required": {"material": "M", "blend_mode": "translucent",
                         "screen_alignment": "facing_camera", "sort_mode": "none",
                         "max_particles": 100},
            "modules": [{"spawn": {"rate": 60.0}}, {"lifetime": {"constant": 0.5}},
                        {"initial_size": {"constant": [2.0, 2.0]}}]
        }]}"#;
        let system = Arc::new(ParticleSystem::from_json_str(json).unwrap());
        ParticleSystemComponent::new(system, 1, ParticleMaterials::new()).unwrap()
    }

    #[test]
    fn component_is_send_and_sync() {
        fn check<T: Send + Sync + 'static>() {}
        check::<ParticleSystemComponent>();
    }

    #[test]
    fn tick_simulates_and_marks_dynamic_data_and_transform() {
        let mut c = component();
        assert!(c.wants_tick());
        let d = c.tick(0.1);
        assert!(d.dynamic_data && d.transform && !d.render_state);
        assert!(c.instance().live_particles() > 0);
        let data = c.dynamic_data().unwrap();
        assert!(data.downcast::<crate::ParticleSystemDynamicData>().is_ok());
    }

    #[test]
    fn local_bounds_map_back_to_the_world_box() {
        let w = Mat4::from_scale_rotation_translation(Vec3::splat(2.0), glam::Quat::from_rotation_z(0.7), Vec3::new(100.0, -50.0, 10.0));
        let mut c = component().with_spawn_transform(w).unwrap();
        assert!(c.take_dirty().transform);
        // Nothing alive: the default box around the spawn origin.
        let world = c.local_bounds().transformed(&w);
        assert!(world.is_valid());
        let origin = Vec3::new(100.0, -50.0, 10.0);
        let e = DEFAULT_BOUNDS_HALF_EXTENT;
        assert!(world.min().cmple(origin - (e - 0.1)).all() && world.max().cmpge(origin + (e - 0.1)).all());
        // Rotating a box there and back grows it, but boundedly.
        assert!(world.max().cmple(origin + 3.0 * e).all());
        c.tick(0.2);
        let b = c.instance().bounds().unwrap();
        let world = c.local_bounds().transformed(&w);
        assert!(world.min().cmple(b.min + 1e-3).all() && world.max().cmpge(b.max - 1e-3).all());
        // A non-finite transform is rejected and the old one kept.
        assert!(c.set_spawn_transform(Mat4::from_translation(Vec3::NAN)).is_err());
        assert_eq!(c.spawn_transform(), w);
    }

    #[test]
    fn invalid_system_is_rejected_and_the_previous_kept() {
        let mut c = component();
        c.tick(0.1);
        let before = c.system().clone();
        let live = c.instance().live_particles();
        let mut bad = (*before).clone();
        bad.emitters[0].required.max_particles = 0;
        assert!(c.set_system(Arc::new(bad)).is_err());
        assert!(Arc::ptr_eq(c.system(), &before));
        assert_eq!(c.instance().live_particles(), live);
        assert!(!c.take_dirty().any());
        let other = Arc::new((*before).clone());
        c.set_system(other.clone()).unwrap();
        assert!(Arc::ptr_eq(c.system(), &other));
        assert!(c.take_dirty().render_state);
    }

    #[test]
    fn activation_controls_spawning() {
        let mut c = component();
        c.deactivate();
        assert!(!c.is_active());
        c.tick(0.1);
        assert_eq!(c.instance().live_particles(), 0);
        c.activate();
        c.tick(0.1);
        assert!(c.instance().live_particles() > 0);
    }
}
