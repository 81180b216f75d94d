//! The scene (UE's FScene): primitives as render-thread proxies with their
//! data in structure-of-arrays form for culling, their cached mesh draw
//! commands, the GPU scene, lights and materials.

mod add_order;
pub(crate) mod gpu_scene;
mod light;
mod mobility;
mod proxy;
pub(crate) mod proxy_uploads;
mod relevance;
#[allow(clippy::module_inception)]
mod scene;
mod scene_lights;
mod settings;
mod visibility;

pub use gpu_scene::{GpuScene, PrimitiveGpuData};
pub(crate) use light::LocalLightData;
pub use light::{
    light_falloff, range_for_intensity, DirectionalLight, Light, LightId, Mobility, PointLight, ShadowBias, SpotCone, SpotLight,
    CUTOFF_ILLUMINANCE, MAX_DIRECTIONAL_LIGHTS,
};
pub(crate) use proxy::RetireCallback;
pub use proxy::{
    ElementFailure, GeometryChange, MeshElementCollector, PrimitiveSceneProxy, ProxyUpdateContext, RetiredFrameResults, ViewRelevance,
};
pub(crate) use scene::{flags, CULL_CHUNK};
pub use scene::{PrimitiveId, Scene, SceneCounters, SceneMemory};
pub use scene_lights::SceneLights;
pub use settings::PrimitiveRenderSettings;
pub(crate) use visibility::{compute_visibility, ViewVisibility};
