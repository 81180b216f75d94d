//! The scene's requests (UE's FScene::AddPrimitive, UpdatePrimitiveTransform,
//! …): checked now, queued, and applied by `Scene::apply_updates` at the
//! start of the next frame; materials, textures and lights, set now.

use super::{check_transform, Pending, Scene};
use crate::error::{RendererError, Result};
use crate::material::{Material, MaterialId, MaterialInstance, ParameterValue};
use crate::math::Bounds;
use crate::scene::light::{Light, LightId};
use crate::scene::proxy::PrimitiveSceneProxy;
use crate::scene::settings::PrimitiveRenderSettings;
use crate::scene::PrimitiveId;
use crate::texture::{Texture2D, TextureId};
use glam::Mat4;
use rhi_vulkan::Device;
use std::any::Any;

impl Scene {
    // ----- requests (queued, applied by `apply_updates`) -----

    /// Queues a new primitive. A non-finite or degenerate transform or
    /// invalid local bounds are rejected now and nothing is queued.
    pub fn add_primitive(&mut self, id: PrimitiveId, proxy: Box<dyn PrimitiveSceneProxy>, local_to_world: Mat4) -> Result<()> {
        check_transform(&local_to_world, id)?;
        let b = proxy.local_bounds().transformed(&local_to_world);
        if !b.is_valid() {
            return Err(RendererError::InvalidTransform { what: format!("{id:?}"), reason: "invalid bounds".into() });
        }
        self.pending_mut().push(Pending::Add(id, proxy, local_to_world));
        Ok(())
    }

    /// Queues a primitive's removal (an unknown id is ignored when applied).
    pub fn remove_primitive(&mut self, id: PrimitiveId) {
        self.pending_mut().push(Pending::Remove(id));
    }

    /// Queues a new local-to-world (UE's UpdatePrimitiveTransform).
    pub fn update_primitive_transform(&mut self, id: PrimitiveId, local_to_world: Mat4) -> Result<()> {
        check_transform(&local_to_world, id)?;
        self.pending_mut().push(Pending::Transform(id, local_to_world, None));
        Ok(())
    }

    /// Queues a new local-to-world and new local bounds (a procedural mesh
    /// whose vertices moved): no proxy rebuild, no command rebuild.
    pub fn update_primitive_transform_and_bounds(&mut self, id: PrimitiveId, local_to_world: Mat4, local_bounds: Bounds) -> Result<()> {
        check_transform(&local_to_world, id)?;
        if !local_bounds.is_valid() || !local_bounds.transformed(&local_to_world).is_valid() {
            return Err(RendererError::InvalidTransform { what: format!("{id:?}"), reason: "invalid bounds".into() });
        }
        self.pending_mut().push(Pending::Transform(id, local_to_world, Some(local_bounds)));
        Ok(())
    }

    /// Queues an override of the primitive's previous-frame transform for
    /// the frame the queue is applied in (UE's `PreviousTransform`): its
    /// motion vectors are from `previous` to its transform then. A
    /// teleport is `previous` = the new transform: no motion, no smear.
    /// Applied after the batch's transform updates whatever the queue
    /// order; a bad matrix is refused now, an unknown id is a failed update.
    pub fn set_primitive_previous_transform(&mut self, id: PrimitiveId, previous: Mat4) -> Result<()> {
        check_transform(&previous, id)?;
        self.pending_mut().push(Pending::PreviousTransform(id, previous));
        Ok(())
    }

    /// Queues a primitive's render settings (draw distances, translucency
    /// sort priority), applied after the adds of the same update, so they
    /// can follow the primitive's add. Settings that are not valid
    /// ([`PrimitiveRenderSettings::invalid_reason`]) are rejected now and
    /// nothing is queued; an id that names no primitive when applied is a
    /// failed update.
    pub fn set_primitive_settings(&mut self, id: PrimitiveId, settings: PrimitiveRenderSettings) -> Result<()> {
        if let Some(reason) = settings.invalid_reason() {
            return Err(RendererError::InvalidPrimitiveSettings { primitive: id, reason });
        }
        self.pending_mut().push(Pending::Settings(id, settings));
        Ok(())
    }

    /// Records an update refused before it reached the scene (an item a
    /// batch command left out): counted in the next update's
    /// [`SceneCounters::failed_updates`](crate::scene::SceneCounters) like
    /// an update that failed here.
    pub fn note_refused(&mut self, message: String) {
        self.pending_mut().push(Pending::Refused(message));
    }

    /// Adds lines to draw in the next frame's main views (one frame, as
    /// UE's `DrawDebugLine` without a duration; `crate::debug_lines`).
    /// Lines with a non-finite end are dropped.
    pub fn draw_debug_lines(&mut self, lines: impl IntoIterator<Item = crate::debug_lines::DebugLine>) {
        self.debug_lines.extend(lines.into_iter().filter(|l| l.is_finite()));
    }

    /// Queues dynamic data for a proxy (UE's SendRenderDynamicData).
    pub fn update_dynamic_data(&mut self, id: PrimitiveId, data: Box<dyn Any + Send>) {
        self.pending_mut().push(Pending::DynamicData(id, data));
    }

    /// Sets a parent material under an id of a slot in its current
    /// generation or the next slot ([`MaterialRegistry::set`]); a shader,
    /// blend or declaration change rebuilds, at the next update, the cached
    /// commands that draw with it or its instances — no others. A material
    /// that does not validate, or any other id (past the next, stale), is an
    /// error and changes nothing.
    ///
    /// [`MaterialRegistry::set`]: crate::material::MaterialRegistry::set
    pub fn set_material(&mut self, id: MaterialId, material: Material) -> Result<()> {
        crate::mesh_pass::validate_material_in(&material, &self.passes)?;
        self.materials.set(id, material)
    }

    /// Sets a material instance ([`MaterialRegistry::set_instance`]).
    ///
    /// [`MaterialRegistry::set_instance`]: crate::material::MaterialRegistry::set_instance
    pub fn set_material_instance(&mut self, id: MaterialId, instance: MaterialInstance) -> Result<()> {
        self.materials.set_instance(id, instance)
    }

    /// Sets one parameter of a material ([`MaterialRegistry::set_parameter`]):
    /// a write of its GPU block, or for a texture a new bind group.
    ///
    /// [`MaterialRegistry::set_parameter`]: crate::material::MaterialRegistry::set_parameter
    pub fn set_material_parameter(&mut self, id: MaterialId, name: &str, value: ParameterValue) -> Result<()> {
        self.materials.set_parameter(id, name, value)
    }

    /// Removes a material ([`MaterialRegistry::remove`]): primitives that
    /// use it draw with the default material from the next update (also
    /// once its slot holds another material: their id is stale), and
    /// pipelines made only for it are destroyed.
    ///
    /// [`MaterialRegistry::remove`]: crate::material::MaterialRegistry::remove
    pub fn remove_material(&mut self, id: MaterialId) -> Result<()> {
        self.materials.remove(id)
    }

    /// Creates a texture's GPU image now (uploaded through staging, mips
    /// generated); materials whose parameters name `id` are re-bound at the
    /// next update. A creation the device refuses leaves `id` sampling white.
    pub fn create_texture(&mut self, device: &Device, id: TextureId, texture: &Texture2D) -> Result<()> {
        self.textures.ensure_builtins(device)?;
        self.textures.create(device, id, texture)
    }

    /// Destroys a texture (freed once no frame in flight reads it); the
    /// materials that sampled it sample white from the next update.
    pub fn destroy_texture(&mut self, device: &Device, id: TextureId) -> Result<()> {
        self.textures.destroy(device, id)
    }

    /// Sets the environment that lights the scene and is drawn behind it
    /// (`crate::environment`): an image or sky is uploaded and prefiltered
    /// now, in one submission the render thread waits for, and not again
    /// until the next call. An invalid one ([`crate::Environment::problem`]) is
    /// [`RendererError::InvalidEnvironment`]; on any error the environment
    /// before stays. No mesh draw command depends on it: none is rebuilt.
    pub fn set_environment(&mut self, device: &Device, environment: &crate::Environment) -> Result<()> {
        if let Some(reason) = environment.problem() {
            return Err(RendererError::InvalidEnvironment(reason));
        }
        self.environment.set(device, environment)
    }

    /// The environment's kind (`hemisphere`, `sky` or `image`).
    pub fn environment_kind(&self) -> &'static str {
        self.environment.kind
    }

    /// Rebuilds every cached command at the next update (a global invalidation).
    pub fn invalidate_cached_commands(&mut self) {
        self.recache_all = true;
    }

    /// Sets the light `id`, now; an invalid light ([`Light::is_valid`]), a
    /// directional light past [`MAX_DIRECTIONAL_LIGHTS`](crate::MAX_DIRECTIONAL_LIGHTS),
    /// or a change its mobility forbids ([`Light::change_problem`]) is
    /// [`RendererError::InvalidLight`] and changes nothing. No mesh draw
    /// command depends on a light: none is rebuilt.
    pub fn set_light(&mut self, id: LightId, light: Light) -> Result<()> {
        self.lights.set(id, light)
    }

    /// Places the light `id` by its component's world transform
    /// ([`Light::with_transform`]): a moved light sends its transform, not
    /// a new light. An unknown id is ignored; a light whose mobility
    /// forbids moving is [`RendererError::InvalidLight`] and stays.
    pub fn set_light_transform(&mut self, id: LightId, transform: glam::Mat4) -> Result<()> {
        self.lights.set_transform(id, &transform)
    }

    /// Removes a light (an unknown id is ignored).
    pub fn remove_light(&mut self, id: LightId) {
        self.lights.remove(id);
    }

    /// The lights: the directional ones by id, then the point and spot ones.
    pub fn lights(&self) -> impl Iterator<Item = &Light> {
        self.lights.iter().map(|(_, l)| l)
    }

    /// The scene's lights as the frame reads them.
    pub fn scene_lights(&self) -> &crate::scene::SceneLights {
        &self.lights
    }

    pub(super) fn pending_mut(&mut self) -> &mut Vec<Pending> {
        self.pending.get_mut().unwrap_or_else(|p| p.into_inner())
    }
}
