//! Materials for particle sprites: the emitter's material *name* (from the
//! asset) resolved to a renderer [`MaterialId`], and a ready-made unlit
//! sprite material.
//!
//! The renderer routes a batch by its material's blend mode, not by the
//! emitter's: a `translucent` emitter must be given a translucent or
//! additive material to be drawn in the translucency pass.
//! [`ParticleMaterials::for_system`] creates one [`sprite_material`] per
//! material name with the emitter's blend mode, so they agree.
//!
//! A name with no entry uses the fallback ([`MaterialId::DEFAULT`], the
//! renderer's opaque default, unless set), as UE draws an emitter with a
//! missing material with the default material.

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use glam::Vec4;
use renderer::{Material, MaterialId, MaterialParameter, MaterialParams, MaterialShader, RenderThread, TextureId};

use crate::asset::{BlendMode, ParticleSystem};

/// WGSL of the unlit sprite material function.
pub const SPRITE_MATERIAL_WGSL: &str = include_str!("../shaders/sprite_material.inc.wgsl");

/// The shared unlit sprite material shader (one pipeline per pass and blend mode).
pub fn sprite_material_shader() -> Arc<MaterialShader> {
    static SHADER: OnceLock<Arc<MaterialShader>> = OnceLock::new();
    SHADER.get_or_init(|| MaterialShader::new("particle_sprite_material.wgsl", SPRITE_MATERIAL_WGSL)).clone()
}

/// WGSL of the unlit sprite-sheet material function (sub-UV: two
/// sub-images of the `sprite_sheet` texture cross-faded).
pub const SPRITE_SHEET_MATERIAL_WGSL: &str = include_str!("../shaders/sprite_sheet_material.inc.wgsl");

/// The shared sprite-sheet material shader.
pub fn sprite_sheet_material_shader() -> Arc<MaterialShader> {
    static SHADER: OnceLock<Arc<MaterialShader>> = OnceLock::new();
    SHADER.get_or_init(|| MaterialShader::new("particle_sprite_sheet_material.wgsl", SPRITE_SHEET_MATERIAL_WGSL)).clone()
}

/// The renderer blend mode of an emitter blend mode.
pub fn renderer_blend_mode(blend: BlendMode) -> renderer::BlendMode {
    match blend {
        BlendMode::Opaque => renderer::BlendMode::Opaque,
        BlendMode::Masked => renderer::BlendMode::Masked,
        BlendMode::Translucent => renderer::BlendMode::Translucent,
        BlendMode::Additive => renderer::BlendMode::Additive,
    }
}

/// An unlit, two-sided sprite material: colour `tint` × particle colour,
/// opacity `tint.w` × particle alpha. `softness` > 0 fades the sprite to a
/// disc (the fraction of the radius over which it fades); 0 keeps the square.
pub fn sprite_material(blend: BlendMode, tint: Vec4, softness: f32) -> Material {
    Material {
        shader: sprite_material_shader(),
        blend_mode: renderer_blend_mode(blend),
        two_sided: true,
        shading_model: renderer::ShadingModel::Unlit,
        params: MaterialParams {
            base_color: tint,
            specular: 0.0,
            custom: Vec4::new(softness.max(0.0), 0.0, 0.0, 0.0),
            ..Default::default()
        },
        ..Default::default()
    }
}

/// An unlit, two-sided sprite-sheet material for sub-UV emitters: colour
/// `tint` × particle colour × the texel of texture parameter
/// `sprite_sheet` (default `sheet`, sampled with linear filtering and
/// clamped), opacity `tint.w` × particle alpha × texel alpha. The texel is
/// the particle's sub-image, or two of them cross-faded for
/// `linear_blend` (the sprite vertex factory supplies their UVs and the
/// weight). On an emitter without sub-UV it shows the whole texture.
pub fn sprite_sheet_material(blend: BlendMode, tint: Vec4, sheet: TextureId) -> Material {
    Material {
        shader: sprite_sheet_material_shader(),
        blend_mode: renderer_blend_mode(blend),
        two_sided: true,
        shading_model: renderer::ShadingModel::Unlit,
        params: MaterialParams { base_color: tint, specular: 0.0, ..Default::default() },
        ..Default::default()
    }
    .with_parameter(MaterialParameter::texture("sprite_sheet", sheet, rhi_vulkan::SamplerDesc::linear_clamp()))
}

/// Emitter material names → renderer materials, given to a particle proxy.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ParticleMaterials {
    by_name: HashMap<String, MaterialId>,
    fallback: MaterialId,
}

impl ParticleMaterials {
    /// No names; everything resolves to [`MaterialId::DEFAULT`].
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds (or replaces) `name`.
    pub fn with(mut self, name: &str, id: MaterialId) -> Self {
        self.insert(name, id);
        self
    }

    /// Adds (or replaces) `name`.
    pub fn insert(&mut self, name: &str, id: MaterialId) {
        self.by_name.insert(name.to_owned(), id);
    }

    /// What names without an entry resolve to.
    pub fn with_fallback(mut self, id: MaterialId) -> Self {
        self.fallback = id;
        self
    }

    /// The material for an emitter's material `name`.
    pub fn resolve(&self, name: &str) -> MaterialId {
        self.by_name.get(name).copied().unwrap_or(self.fallback)
    }

    /// Whether `name` has an entry.
    pub fn contains(&self, name: &str) -> bool {
        self.by_name.contains_key(name)
    }

    /// Creates a white [`sprite_material`] (square, no softness) for each
    /// material name of `system` not yet present, with the blend mode of
    /// the first emitter naming it.
    pub fn for_system(rt: &mut RenderThread, system: &ParticleSystem) -> renderer::Result<Self> {
        let mut materials = Self::new();
        materials.add_missing(rt, system)?;
        Ok(materials)
    }

    /// [`Self::for_system`] into an existing mapping.
    pub fn add_missing(&mut self, rt: &mut RenderThread, system: &ParticleSystem) -> renderer::Result<()> {
        for e in &system.emitters {
            let req = &e.required;
            if !self.contains(&req.material) {
                let id = rt.create_material(sprite_material(req.blend_mode, Vec4::ONE, 0.0))?;
                self.insert(&req.material, id);
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_resolve_and_unknown_names_use_the_fallback() {
        let m = ParticleMaterials::new().with("M_Smoke", MaterialId(3));
        assert_eq!(m.resolve("M_Smoke"), MaterialId(3));
        assert_eq!(m.resolve("M_Missing"), MaterialId::DEFAULT);
        let m = m.with_fallback(MaterialId(7));
        assert_eq!(m.resolve("M_Missing"), MaterialId(7));
    }

    #[test]
    fn sprite_materials_keep_the_emitter_blend_and_are_two_sided() {
        for (blend, expected) in [
            (BlendMode::Opaque, renderer::BlendMode::Opaque),
            (BlendMode::Masked, renderer::BlendMode::Masked),
            (BlendMode::Translucent, renderer::BlendMode::Translucent),
            (BlendMode::Additive, renderer::BlendMode::Additive),
        ] {
            let m = sprite_material(blend, Vec4::ONE, 0.5);
            assert_eq!(m.blend_mode, expected);
            assert!(m.two_sided);
            assert_eq!(m.params.custom.x, 0.5);
            assert!(Arc::ptr_eq(&m.shader, &sprite_material_shader()));
        }
    }
}
