//! The particles feature's registration on a renderer
//! ([`renderer::RenderFeature`]): its sprite vertex factory, compile-checked
//! against the renderer's passes. Add it once per render thread:
//! `rt.add_feature(&particles::FEATURE)`.

use crate::sprite_vertex_factory::SPRITE_VERTEX_FACTORY;
use renderer::{RenderFeature, RenderThread};

/// The particles feature (see the module docs).
pub struct ParticlesFeature;

/// The value to add: `rt.add_feature(&particles::FEATURE)`.
pub static FEATURE: ParticlesFeature = ParticlesFeature;

impl RenderFeature for ParticlesFeature {
    fn name(&self) -> &'static str {
        "particles"
    }

    fn register(&self, rt: &mut RenderThread) -> renderer::Result<()> {
        rt.register_vertex_factory(&SPRITE_VERTEX_FACTORY)
    }
}
