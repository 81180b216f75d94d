//! The game side's calls for materials, material instances and textures:
//! each is checked here, against the game side's mirror of what exists
//! ([`crate::material::MaterialMirror`], the texture ids and the device's
//! limits), so a bad request is a typed error and nothing is queued; a
//! request that passes cannot fail on the render thread.

use super::RenderThread;
use crate::error::{RendererError, Result};
use crate::material::{Material, MaterialId, MaterialInstance, ParameterValue};
use crate::texture::{Texture2D, TextureId};

impl RenderThread {
    /// Creates a parent material and returns its id. Its declarations are
    /// laid out and its shader compiled here, on the calling thread
    /// ([`crate::mesh_pass::validate_material`], cached by source): bad declarations are
    /// [`RendererError::InvalidMaterial`], a shader that does not compile
    /// is [`RendererError::MaterialShader`], saying where, and nothing is
    /// created. Creating a material rebuilds no existing draw command.
    ///
    /// The id is a slot of the material tables (and of the GPU table) and a
    /// generation: a destroyed material's slot is handed out again, in its
    /// next generation, so the tables stay as large as the most materials
    /// alive at once, and an id kept past its material's destruction never
    /// names the one that took its slot (see [`MaterialId`]). With
    /// [`MaterialId::MAX_SLOTS`] slots live or retired, the error is
    /// [`RendererError::MaterialIdsExhausted`].
    pub fn create_material(&mut self, material: Material) -> Result<MaterialId> {
        let layout = self.materials.check_parent(None, &material)?;
        self.check_textures(material.parameters.iter().map(|p| &p.default))?;
        crate::mesh_pass::validate_material_in(&material, &self.passes)?;
        let id = self.materials.ids.peek().ok_or(RendererError::MaterialIdsExhausted(MaterialId::MAX_SLOTS))?;
        self.enqueue_render_command(move |ctx| {
            if let Err(e) = ctx.scene.set_material(id, material) {
                log::error!("create material {id:?}: {e}");
            }
        })?;
        let taken = self.materials.ids.take();
        debug_assert_eq!(taken, Some(id));
        self.materials.note_parent(id, layout);
        Ok(id)
    }

    /// Replaces a parent material. `id` must name a live parent: one from
    /// [`Self::create_material`] not destroyed since, or
    /// [`MaterialId::DEFAULT`]; any other (never created, destroyed, or
    /// stale) is [`RendererError::UnknownMaterial`], an instance
    /// [`RendererError::InvalidMaterial`]. The material is checked as by
    /// `create_material`, and its instances' overrides must still name its
    /// parameters; on an error nothing is enqueued. Only the draw commands
    /// that use it (or its instances) are rebuilt, and only when its shader,
    /// blend mode, sidedness or declarations changed.
    pub fn set_material(&mut self, id: MaterialId, material: Material) -> Result<()> {
        let layout = self.materials.check_parent(Some(id), &material)?;
        self.check_textures(material.parameters.iter().map(|p| &p.default))?;
        crate::mesh_pass::validate_material_in(&material, &self.passes)?;
        self.enqueue_render_command(move |ctx| {
            if let Err(e) = ctx.scene.set_material(id, material) {
                log::error!("set material {id:?}: {e}");
            }
        })?;
        self.materials.note_parent(id, layout);
        Ok(())
    }

    /// Creates a material instance (UE's UMaterialInstanceConstant): its
    /// parent's pipelines with its own parameter values. The parent must be
    /// a live parent material and every override must name one of its
    /// parameters with the same kind ([`RendererError::InvalidMaterial`]
    /// otherwise; nothing is created). Creating an instance rebuilds no
    /// existing draw command and creates no pipeline.
    pub fn create_material_instance(&mut self, instance: MaterialInstance) -> Result<MaterialId> {
        self.materials.check_instance(None, &instance)?;
        self.check_textures(instance.overrides.iter().map(|(_, v)| v))?;
        let id = self.materials.ids.peek().ok_or(RendererError::MaterialIdsExhausted(MaterialId::MAX_SLOTS))?;
        let queued = instance.clone();
        self.enqueue_render_command(move |ctx| {
            if let Err(e) = ctx.scene.set_material_instance(id, queued) {
                log::error!("create material instance {id:?}: {e}");
            }
        })?;
        let taken = self.materials.ids.take();
        debug_assert_eq!(taken, Some(id));
        self.materials.note_instance(id, instance);
        Ok(id)
    }

    /// Replaces a material instance (checked as by
    /// [`Self::create_material_instance`]; `id` must name a live instance).
    pub fn set_material_instance(&mut self, id: MaterialId, instance: MaterialInstance) -> Result<()> {
        self.materials.check_instance(Some(id), &instance)?;
        self.check_textures(instance.overrides.iter().map(|(_, v)| v))?;
        let queued = instance.clone();
        self.enqueue_render_command(move |ctx| {
            if let Err(e) = ctx.scene.set_material_instance(id, queued) {
                log::error!("set material instance {id:?}: {e}");
            }
        })?;
        self.materials.note_instance(id, instance);
        Ok(())
    }

    /// Sets one parameter of a material or instance by name. A scalar or
    /// vector is a write of that material's 256-byte GPU block at the next
    /// frame — no draw command and no pipeline is rebuilt; a texture
    /// re-binds only that material's bind group. A name the material does
    /// not have, or a value of another kind, is
    /// [`RendererError::InvalidMaterial`] and nothing is queued.
    pub fn set_material_parameter(&mut self, id: MaterialId, name: &str, value: ParameterValue) -> Result<()> {
        self.materials.check_parameter(id, name, &value)?;
        self.check_textures(std::iter::once(&value))?;
        let queued = name.to_string();
        self.enqueue_render_command(move |ctx| {
            if let Err(e) = ctx.scene.set_material_parameter(id, &queued, value) {
                log::error!("set parameter {queued:?} of material {id:?}: {e}");
            }
        })?;
        self.materials.note_parameter(id, name, value);
        Ok(())
    }

    /// Destroys a material or instance: primitives that still use it draw
    /// with the default material, and the pipelines and shader modules made
    /// only for it are destroyed (once no frame in flight uses them). The
    /// default material cannot be destroyed, an id that names no live
    /// material is [`RendererError::UnknownMaterial`], and a parent with
    /// live instances is [`RendererError::MaterialInUse`]. The id is stale
    /// from now on: its slot goes to a later material under a new id, and
    /// primitives still holding the old one keep drawing with the default
    /// material, never with the new one.
    pub fn destroy_material(&mut self, id: MaterialId) -> Result<()> {
        self.materials.check_destroy(id)?;
        self.enqueue_render_command(move |ctx| {
            if let Err(e) = ctx.scene.remove_material(id) {
                log::warn!("destroy material {id:?}: {e}");
            }
        })?;
        self.materials.note_destroyed(id);
        Ok(())
    }

    /// Creates a texture and returns its id. It is checked here against the
    /// device's limits ([`Texture2D::validate`]: size, data length, mip
    /// levels): a bad one is [`RendererError::InvalidTexture`] and nothing
    /// is created. The render thread uploads it through staging and makes
    /// its mip chain; should the device then refuse it (out of memory), the
    /// error is logged and the id samples white.
    pub fn create_texture(&mut self, texture: Texture2D) -> Result<TextureId> {
        texture.validate(&self.texture_limits)?;
        let id = self.texture_ids.peek().ok_or(RendererError::TextureIdsExhausted(TextureId::MAX_SLOTS))?;
        let bytes = texture.data.len() as u64 + texture.mips.supplied_bytes();
        self.enqueue_sized(bytes, move |ctx| {
            if let Err(e) = ctx.scene.create_texture(&ctx.device, id, &texture) {
                log::error!("create texture {id:?} ({:?}): {e}", texture.label);
            }
        })?;
        let taken = self.texture_ids.take();
        debug_assert_eq!(taken, Some(id));
        Ok(id)
    }

    /// Every texture `values` name must be live (a built-in one, or one
    /// made by [`Self::create_texture`] and not destroyed): an id never
    /// created, or destroyed, is [`RendererError::UnknownTexture`] — it
    /// would sample white without a word. (A texture destroyed later is a
    /// documented white.)
    fn check_textures<'a>(&self, values: impl Iterator<Item = &'a ParameterValue>) -> Result<()> {
        for v in values {
            if let ParameterValue::Texture(t) = *v {
                if !self.texture_ids.is_live(t) {
                    return Err(RendererError::UnknownTexture(t));
                }
            }
        }
        Ok(())
    }

    /// Destroys a texture made by [`Self::create_texture`]: materials that
    /// sample it sample white from the next frame, and its GPU memory is
    /// freed once no frame in flight reads it. The built-in textures cannot
    /// be destroyed; an id that names no live texture is
    /// [`RendererError::UnknownTexture`].
    pub fn destroy_texture(&mut self, id: TextureId) -> Result<()> {
        if !self.texture_ids.is_live(id) || id.slot() < 3 {
            return Err(RendererError::UnknownTexture(id));
        }
        self.enqueue_render_command(move |ctx| {
            if let Err(e) = ctx.scene.destroy_texture(&ctx.device, id) {
                log::warn!("destroy texture {id:?}: {e}");
            }
        })?;
        let released = self.texture_ids.release(id);
        debug_assert!(released);
        Ok(())
    }

    /// Sets the scene's environment (`crate::environment`): from the next
    /// frame it lights every default-lit surface and, unless it is the
    /// hemisphere, is drawn behind the scene. An image or sky is prefiltered
    /// once, on the render thread, when this command runs. An invalid one
    /// ([`crate::Environment::problem`]) is
    /// [`RendererError::InvalidEnvironment`] and nothing is queued; a
    /// device that cannot make its maps keeps the environment before (logged).
    pub fn set_environment(&mut self, environment: crate::Environment) -> Result<()> {
        if let Some(reason) = environment.problem() {
            return Err(RendererError::InvalidEnvironment(reason));
        }
        self.enqueue_render_command(move |ctx| {
            if let Err(e) = ctx.scene.set_environment(&ctx.device, &environment) {
                log::error!("set environment ({}): {e}", environment.kind());
            }
        })
    }
}
