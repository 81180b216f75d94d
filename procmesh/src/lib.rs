//! # procmesh
//!
//! UE's `ProceduralMeshComponent`: numbered sections of run-time geometry
//! with fast in-place updates, per-section visibility and materials, and
//! collision.
//!
//! ## What this crate holds
//!
//! **The game-side data**, [`ProcMeshData`]:
//!
//! - sections of vertices (position, normal, tangent with flip-Y, 8-bit sRGB
//!   color, UV0–UV3; stored as one stream per attribute, read one at a time
//!   as [`ProcMeshVertex`]) and `u32` triangles, created from parallel
//!   arrays ([`SectionData`]) with UE's defaults for what is left out;
//! - update of a section in place (same vertex count), clear, clear all,
//!   visibility, a material per section slot ([`MaterialRef`], the number of
//!   a renderer `MaterialId`), per-section boxes and the mesh's bounds;
//! - collision through engine-core (feature `collision`, on by default):
//!   [`ProcMeshData`] is a
//!   [`CollisionDataProvider`](engine_core::collision::CollisionDataProvider)
//!   (section index as material index), owns the
//!   [`BodySetup`](engine_core::collision::BodySetup), adds convex meshes and
//!   use-complex-as-simple, and cooks synchronously or asynchronously with
//!   newer cooks aborting older ones;
//! - a [`ChangeSet`] from every mutating call saying what must be marked
//!   dirty (recreate the proxy, re-send bounds, send one section's vertex
//!   data to the existing proxy, flip a visibility flag, hand new collision
//!   to the scene), and [`SectionUpdate`], the copy of the changed vertex
//!   streams that the render thread receives.
//!
//! **The rendering half**:
//!
//! - [`ProceduralMeshSceneProxy`], built on the game thread from a
//!   `&ProcMeshData` (it copies, never borrows): one vertex buffer (the
//!   local vertex factory's four streams, one region each) and one 32-bit
//!   index buffer per section with vertices and triangles, with its material
//!   and visibility. By default it draws through the dynamic path, as in UE:
//!   one batch per visible section per view, every frame. With
//!   [`ProcMeshProxyOptions::static_draw_path`] (not in UE) its sections are
//!   cached once, so an unchanged frame builds no command.
//! - In-place updates without a new proxy: the proxy takes
//!   [`SectionUpdate`]s and [`ProcMeshProxyUpdate`]s through
//!   `update_dynamic_data` and rewrites only the changed streams of the
//!   existing GPU buffers (`ProxyUpdateContext::upload`), or flips
//!   visibility flags. Streams that interleave attributes are written whole
//!   ([`render_streams`]).
//! - [`proxy_updates`]: the in-place messages a change set calls for, as
//!   one value (the form the component's per-frame dynamic-data snapshot
//!   takes).
//!
//! **The component**, [`ProceduralMeshComponent`], on engine-core's
//! `Component` / `PrimitiveComponent` traits: it owns a `ProcMeshData`,
//! forwards calls to it and turns the returned [`ChangeSet`]s into
//! engine-core dirty flags (render state, transform, dynamic data,
//! collision; visibility on the static path is render state), creates its
//! proxy with [`ProceduralMeshSceneProxy::new`] (the world's per-slot
//! materials override the sections'), returns [`proxy_updates`] as its
//! dynamic data (dropped when a new proxy is built), polls asynchronous
//! cooks in its tick and hands its cooked collision to the world. Moves
//! reach the proxy through the renderer
//! (`PrimitiveSceneProxy::on_transform_changed`), so a mirroring move
//! needs nothing from the caller.
//!
//! ## Features
//!
//! - `collision` (default): section collision, convex meshes and cooking,
//!   through engine-core's `collision` feature (parry3d, about 43 crates).
//!   Without it sections keep their
//!   `enable_collision` flag and change sets their collision fields, but
//!   nothing is cooked, and the collision methods of [`ProcMeshData`] and
//!   [`ProceduralMeshComponent`] do not exist.
//!
//! ## Promises
//!
//! Every call checks all of its input before changing anything. A rejected
//! call returns a [`ProcMeshError`] and leaves the mesh, its collision
//! configuration and its cooked collision exactly as they were. No `unsafe`.
//!
//! A mesh reaches the renderer one way: as a [`ProceduralMeshComponent`] in
//! an engine-core `World`, whose end-of-frame update creates the proxy and
//! sends the component's changes; the proxy learns of updates only
//! through it.
//!
//! The caller upholds: on a bare [`ProcMeshData`], call
//! [`ProcMeshData::poll_collision`] once per frame when asynchronous cooking
//! is on (the component does this in its tick); and create materials on
//! the renderer before naming them in a [`MaterialRef`] (an unknown id
//! draws with the default material).

#[cfg(feature = "collision")]
mod body;
mod bounds;
mod change;
#[cfg(feature = "collision")]
mod collision;
mod component;
mod error;
mod feature;
mod material;
mod mesh;
mod proxy;
mod section;
mod streams;
mod validate;
mod vertex;

pub use bounds::Aabb;
pub use change::{ChangeSet, SectionDirty, SectionUpdate};
pub use component::ProceduralMeshComponent;
pub use error::{ProcMeshError, Result};
pub use feature::{ProcMeshFeature, FEATURE};
pub use material::MaterialRef;
pub use mesh::{ProcMeshData, MAX_SECTION_INDEX};
pub use proxy::{proxy_updates, ProcMeshProxyOptions, ProcMeshProxyUpdate, ProceduralMeshSceneProxy};
pub use section::{ProcMeshSection, SectionData, VertexColors};
pub use streams::render_streams;
pub use validate::MAX_COORDINATE;
pub use vertex::{Color, LinearColor, ProcMeshTangent, ProcMeshVertex, VertexAttributes, WHITE};
