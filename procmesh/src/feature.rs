//! The procedural-mesh feature's registration on a renderer
//! ([`renderer::RenderFeature`]): its sections draw through the renderer's
//! local vertex factory, which it registers (compile-checked against the
//! renderer's passes). Add it once per render thread:
//! `rt.add_feature(&procmesh::FEATURE)`.

use renderer::{RenderFeature, RenderThread, LOCAL_VERTEX_FACTORY};

/// The procedural-mesh feature (see the module docs).
pub struct ProcMeshFeature;

/// The value to add: `rt.add_feature(&procmesh::FEATURE)`.
pub static FEATURE: ProcMeshFeature = ProcMeshFeature;

impl RenderFeature for ProcMeshFeature {
    fn name(&self) -> &'static str {
        "procmesh"
    }

    fn register(&self, rt: &mut RenderThread) -> renderer::Result<()> {
        rt.register_vertex_factory(&LOCAL_VERTEX_FACTORY)
    }
}
