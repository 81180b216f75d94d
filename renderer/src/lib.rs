//! # renderer
//!
//! Proxima's renderer, after Unreal Engine's: the scene of render-thread
//! primitive proxies (`Scene`, `PrimitiveSceneProxy`), the render thread fed
//! by a command queue (`RenderThread`), and the retained mesh-drawing
//! pipeline — `MeshBatch` → per-pass processors → cached `MeshDrawCommand`s
//! deduplicated into state buckets → cull → sort → merge into instanced
//! draws (dynamic instancing) → parallel recording into secondary command
//! buffers — over `rhi-vulkan`.
//!
//! ## What it promises
//! - A static primitive's draw commands are built once, when added, and
//!   rebuilt only when its render state changes or a material's shader
//!   changes; a transform update rebuilds nothing.
//! - Identical commands of different primitives merge into one instanced
//!   draw whose instances read their transforms from the GPU scene by
//!   primitive id (`r.MeshDrawCommands.DynamicInstancing=0` turns it off; the
//!   image is the same).
//! - The image and the draw lists do not depend on thread count
//!   (`r.MeshDrawCommands.ParallelPassSetup`, `r.RHICmdList.ParallelRecord`)
//!   nor on inline vs. threaded mode.
//! - A render-thread panic comes back to the game side as an error.
//!
//! ## What the caller upholds
//! - Proxies own what they draw (`Send + Sync + 'static`).
//! - Feature crates plug in through `VertexFactoryType` (their vertex
//!   streams and WGSL), `PrimitiveSceneProxy` and materials; passes never
//!   change for a new kind of geometry.
//!
//! ## Example
//! ```no_run
//! use renderer::*;
//! use glam::{Mat4, Vec3, Vec4};
//! # fn main() -> Result<(), RendererError> {
//! let mut rt = RenderThread::new(&rhi_vulkan::DeviceDesc::default(), RenderThreadMode::Threaded)?;
//! let cube = StaticMeshRenderData::new(vec![shapes::cube(1.0)])?;
//! let red = rt.create_material(Material::colored(Vec4::new(0.8, 0.1, 0.1, 1.0)))?;
//! rt.add_primitive(Box::new(StaticMeshSceneProxy::new(cube, vec![red])), Mat4::IDENTITY)?;
//! rt.add_light(Light::Directional(DirectionalLight { direction: Vec3::new(-1.0, -0.5, -2.0), intensity: 2.0, ..Default::default() }))?;
//! let view = SceneView::perspective(Vec3::new(-3.0, -2.0, 2.0), Vec3::ZERO, Vec3::Z, 1.0, 0.1, 100.0, rhi_vulkan::Rect::from_size(640, 360))?;
//! rt.render_frame(FrameRequest { family: ViewFamily::new(640, 360, vec![view]), read_back: true, execute: true })?;
//! let image = rt.read_back()?.expect("read back");
//! println!("{} draws in the base pass", rt.last_stats()?.unwrap().pass(MeshPass::Base).draws);
//! # let _ = image; Ok(()) }
//! ```

/// The README's code blocks, compiled as doc tests.
#[doc = include_str!("../../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;

pub mod cvars;
pub mod debug_lines;
pub mod environment;
mod error;
mod frame;
mod frame_resources;
pub mod gpu_work;
mod ids;
mod light_grid;
mod material;
mod math;
pub mod mesh_pass;
pub mod occlusion;
pub mod postprocess;
pub mod render_targets;
mod render_thread;
pub mod rng;
pub mod scene;
mod settings;
#[cfg(test)]
mod shader_layouts;
pub mod shadow_atlas;
pub mod shadow_cascades;
pub mod skeletal;
mod static_mesh;
mod static_mesh_proxy;
mod stats;
pub mod texture;
pub mod trace;
pub mod vertex_factory;
mod view;
mod view_state;

pub use cvars::{ConsoleVariables, CvarValue};
pub use debug_lines::DebugLine;
pub use environment::{Environment, EnvironmentError, EquirectImage, ProceduralSky};
pub use error::{RendererError, Result};
pub use frame::scene_renderer::{DynamicBufferRing, FrameOutput, FrameRequest, PreparedFrame, RetiredFrame, SceneRenderer, Stage};
pub use gpu_work::{BufferWrite, GpuWork, GpuWorkError, GpuWorkRecorder, PassRead};
pub use light_grid::gpu::{cpu_light_lists, GpuLightGrid, GpuLightGridBuilder};
pub use light_grid::{ClusterStats, LightStats};
pub use material::{
    parameters, BlendMode, Material, MaterialId, MaterialInstance, MaterialParameter, MaterialParams, MaterialRegistry, MaterialShader,
    MaterialShaderId, ParameterLayout, ParameterValue, ResolvedMaterial, ShadingModel, DEFAULT_MATERIAL_WGSL, MATERIAL_BLOCK_SIZE,
};
pub use math::{check_affine, check_transform, Aabb, Bounds, Frustum, TransformProblem, MIN_TRANSFORM_DETERMINANT};
pub use mesh_pass::passes;
pub use mesh_pass::{MeshBatch, MeshBatchElement, MeshDrawCommand, MeshPass};
pub use occlusion::{OccluderMesh, OcclusionBuffer, OCCLUDED_INSTANCES_COUNTER};
pub use render_thread::{
    render_worker_pool, Refused, RenderCommand, RenderContext, RenderFeature, RenderThread, RenderThreadMode, DEFAULT_QUEUE_BYTE_LIMIT,
    MAX_QUEUED_COMMANDS,
};
pub use rng::{mix64, Rng};
pub use scene::{
    light_falloff, range_for_intensity, DirectionalLight, ElementFailure, GeometryChange, Light, LightId, MeshElementCollector, Mobility,
    PointLight, PrimitiveId, PrimitiveRenderSettings, PrimitiveSceneProxy, ProxyUpdateContext, RetiredFrameResults, Scene, SceneMemory,
    ShadowBias, SpotLight, ViewRelevance, CUTOFF_ILLUMINANCE, MAX_DIRECTIONAL_LIGHTS,
};
pub use settings::{
    AntiAliasing, AutoExposureSettings, BloomSettings, EarlyZ, FrameSettings, LightGridSettings, ShadingSettings, ShadowSettings,
    TonemapCurve, TonemapSettings,
};
pub use skeletal::{MorphTarget, SkeletalMeshSceneProxy, SkeletalPose, SkinnedMeshRenderData, VertexInfluences, MAX_INFLUENCES};
pub use static_mesh::{shapes, StaticMeshLod, StaticMeshRenderData, StaticMeshSection};
pub use static_mesh_proxy::StaticMeshSceneProxy;
pub use stats::{ev100_of, exposure_of_ev100, FrameCounters, FrameStats, ImageStats, PassStats, ShadowStats, StageTimings};
pub use texture::{Texture2D, TextureFormat, TextureId, TextureLimits, TextureMips, TextureRegistry};
pub use vertex_factory::{LocalVertex, VertexFactoryType, LOCAL_VERTEX_FACTORY, VERTEX_FACTORY_BIND_GROUP};
pub use view::{SceneView, ViewFamily, ViewKind};
pub use view_state::ViewStateId;
