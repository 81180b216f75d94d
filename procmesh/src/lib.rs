//! # procmesh
//!
//! UE's `ProceduralMeshComponent`: numbered sections of run-time geometry
//! with fast in-place updates, per-section visibility and materials, and
//! collision.
//!
//! ## What this crate holds now
//!
//! The complete game-side data half, as [`ProcMeshData`]:
//!
//! - sections of vertices (position, normal, tangent with flip-Y, 8-bit sRGB
//!   color, UV0–UV3; stored as one stream per attribute, read one at a time
//!   as [`ProcMeshVertex`]) and `u32` triangles, created from parallel
//!   arrays ([`SectionData`]) with UE's defaults for what is left out;
//! - update of a section in place (same vertex count), clear, clear all,
//!   visibility, a material per section slot ([`MaterialRef`], a placeholder
//!   for the renderer's material id), per-section boxes and the mesh's
//!   bounds;
//! - collision through engine-core: [`ProcMeshData`] is a
//!   [`CollisionDataProvider`](engine_core::collision::CollisionDataProvider)
//!   (section index as material index), owns the
//!   [`BodySetup`](engine_core::collision::BodySetup), adds convex meshes and
//!   use-complex-as-simple, and cooks synchronously or asynchronously with
//!   newer cooks aborting older ones;
//! - a [`ChangeSet`] from every mutating call saying what the component must
//!   mark dirty (recreate the proxy, re-send bounds, send one section's
//!   vertex data to the existing proxy, flip a visibility flag, hand new
//!   collision to the scene), and [`SectionUpdate`], the copy of the changed
//!   vertex streams that the render thread receives.
//!
//! ## What comes with the renderer
//!
//! Not written yet, because the renderer and engine-core's component system
//! do not exist yet: the `ProceduralMeshComponent` itself (registration,
//! dirty flags, world transform), the scene proxy with one GPU vertex and
//! index buffer set per section drawn through the local vertex factory's
//! dynamic path, the render command that applies a [`SectionUpdate`] to an
//! existing proxy, and real material handles in place of [`MaterialRef`].
//! The component will own a `ProcMeshData`, forward calls to it and act on
//! the returned [`ChangeSet`]s; no rule about the data lives outside this
//! crate.
//!
//! ## Promises
//!
//! Every call checks all of its input before changing anything. A rejected
//! call returns a [`ProcMeshError`] and leaves the mesh, its collision
//! configuration and its cooked collision exactly as they were. No `unsafe`.
//!
//! The caller upholds: call [`ProcMeshData::poll_collision`] once per frame
//! when asynchronous cooking is on, and send the [`SectionUpdate`]s for the
//! change sets it received before the next proxy rebuild.

mod bounds;
mod change;
mod collision;
mod error;
mod material;
mod mesh;
mod proxy;
mod render_state;
mod section;
mod streams;
mod validate;
mod vertex;

pub use bounds::Aabb;
pub use change::{ChangeSet, SectionDirty, SectionUpdate};
pub use error::{ProcMeshError, Result};
pub use material::MaterialRef;
pub use mesh::{ProcMeshData, MAX_SECTION_INDEX};
pub use proxy::{ProcMeshProxyOptions, ProcMeshProxyUpdate, ProceduralMeshSceneProxy};
pub use render_state::{ProcMeshRenderState, RecreateReason, RenderStateError, RenderUpdate};
pub use streams::render_streams;
pub use section::{ProcMeshSection, SectionData, VertexColors};
pub use vertex::{Color, LinearColor, ProcMeshTangent, ProcMeshVertex, VertexAttributes, WHITE};
