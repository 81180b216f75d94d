//! # instancing
//!
//! Instanced static meshes: UE's `UInstancedStaticMeshComponent` (ISM) and
//! its hierarchical variant (HISM) — one mesh repeated many times, drawn with
//! one indirect draw per mesh section and LOD for all instances.
//!
//! ## What this crate holds now
//!
//! The game-side data and the CPU reference of culling, written so that the
//! future component (engine-core) and scene proxy (renderer) wrap it:
//!
//! * [`InstanceStore`] — per-instance transforms (relative to the component),
//!   custom float data, stable [`InstanceId`]s over swap-remove, per-instance
//!   random values from a seed, conservative bounds in O(1) per edit, and
//!   **dirty ranges** so an edit uploads only the bytes it changed
//!   ([`InstanceGpuData`] is the packed, `Pod` GPU layout).
//! * [`culling`] — per-instance frustum, cull-distance (with fade) and LOD
//!   selection, compacted per-LOD instance lists and
//!   [`DrawIndexedIndirectArgs`]; the exact computation the GPU culling pass
//!   will mirror, plus a "UE mode" ([`cull_ue_mode`]) for comparison.
//! * [`ClusterTree`] (HISM) — a median-split cluster tree culled top-down,
//!   agreeing exactly with flat culling; [`ClusterTreeBuilder`] rebuilds it in
//!   the background and keeps culls exact on the old tree meanwhile.
//!
//! ## What comes with the renderer (not here yet)
//!
//! The `InstancedStaticMeshComponent` itself (needs engine-core's component
//! system and `StaticMesh` asset — it will build an [`InstancedMesh`] from
//! the asset), its scene proxy, the instanced vertex factory and its WGSL
//! (reads [`InstanceGpuData`] and the custom-data buffer), the GPU culling
//! compute shader (a port of [`culling`]'s per-instance test writing the
//! indirect args with atomics), and the indirect draws. None of that exists
//! until the renderer does; nothing in this crate draws.
//!
//! ## Promises and caller duties
//!
//! * Every fallible call validates all input first: an `Err` changes nothing.
//! * Culling results (including order) do not depend on the thread count.
//! * Callers pass the same [`InstancedMesh`] the store's bounds came from, and
//!   a tree only with the store it was built from.
//! * No `unsafe`; no globals; the store is `Send + Sync` plain data.

pub mod bounds;
pub mod cluster_tree;
pub mod culling;
mod dirty;
pub mod error;
pub mod gpu_data;
pub mod id;
pub mod instance_data;
pub mod mesh;
pub mod proxy;
mod render_state;
pub mod transform;
pub mod tree_builder;
pub mod vertex_factory;

pub use bounds::{Aabb, BoxSphereBounds};
pub use cluster_tree::{ClusterTree, ClusterTreeSettings, TreeCullStats, TreeSnapshot};
pub use culling::{
    bounds_screen_size, cull_instances, cull_instances_into, cull_ue_mode, lod_for_screen_size,
    CullDistances, CullOutput, CullView, DrawIndexedIndirectArgs, Frustum, LodBin,
};
pub use error::{InstancingError, Result};
pub use gpu_data::InstanceGpuData;
pub use id::InstanceId;
pub use instance_data::{InstanceStore, MAX_INSTANCES};
pub use mesh::{InstancedMesh, MeshLod, MeshSection, MAX_LODS};
pub use transform::{validate_transform, TransformSpace};
pub use proxy::{
    cull_view_for, instanced_mesh_for, register_cvars, CullPath, InstancedStaticMeshSceneProxy, IsmStats,
    IsmStatsSnapshot, IsmUpdate, CVAR_GPU_CULLING, CVAR_UE_MODE,
};
pub use render_state::{FlushOutcome, IsmRenderState};
pub use tree_builder::ClusterTreeBuilder;
pub use vertex_factory::{InstanceStreamData, InstancedVertexFactory, INSTANCED_VERTEX_FACTORY};
