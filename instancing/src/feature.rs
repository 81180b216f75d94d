//! Instancing's registration on a renderer ([`renderer::RenderFeature`]):
//! its console variables and its vertex factories (compile-checked against
//! the renderer's passes when registered). Add it once per render thread:
//! `rt.add_feature(&instancing::FEATURE)`.

use crate::proxy::{CVAR_GPU_CULLING, CVAR_UE_MODE};
use crate::vertex_factory::{INSTANCED_DITHERED_VERTEX_FACTORY, INSTANCED_VERTEX_FACTORY};
use renderer::{CvarValue, RenderFeature, RenderThread};

/// The instancing feature (see the module docs).
pub struct InstancingFeature;

/// The value to add: `rt.add_feature(&instancing::FEATURE)`.
pub static FEATURE: InstancingFeature = InstancingFeature;

impl RenderFeature for InstancingFeature {
    fn name(&self) -> &'static str {
        "instancing"
    }

    fn register(&self, rt: &mut RenderThread) -> renderer::Result<()> {
        rt.register_cvar(
            CVAR_GPU_CULLING,
            CvarValue::Bool(true),
            "cull instanced static meshes per instance in a compute pass (0: on the CPU)",
        )?;
        rt.register_cvar(
            CVAR_UE_MODE,
            CvarValue::Bool(false),
            "draw every instance at the LOD of the union bounds, as UE's plain ISM does",
        )?;
        rt.register_vertex_factory(&INSTANCED_VERTEX_FACTORY)?;
        rt.register_vertex_factory(&INSTANCED_DITHERED_VERTEX_FACTORY)
    }
}
