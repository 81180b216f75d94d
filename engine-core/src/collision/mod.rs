//! Collision data: what components collide with, cooked for fast queries,
//! and the world's ray cast.
//!
//! This mirrors three pieces of UE:
//!
//! | here | UE | what |
//! | --- | --- | --- |
//! | [`CollisionDataProvider`], [`TriMeshCollisionData`] | `IInterface_CollisionDataProvider`, `FTriMeshCollisionData` | a component hands out a copy of its triangles |
//! | [`BodySetup`], [`ConvexElement`], [`CookedCollision`], [`AsyncCooker`] | `UBodySetup`, `FKConvexElem`, cooked physics data | a component's collision configuration, cooked sync or async |
//! | [`CollisionScene`], [`RayHit`] | the physics scene's line trace | bodies placed in the world and the nearest-hit ray cast |
//!
//! Why the split: the component that owns geometry changes it (a
//! procedural mesh section update), the body setup decides how to collide
//! with it and cooks it (the expensive step, possibly on a worker), and the
//! scene only places immutable cooked results with a transform. Each step
//! owns its data, so cooking can run off the game thread and a body can move
//! without re-cooking.
//!
//! Geometry is cooked with [parry3d](https://parry.rs) (a maintained BVH,
//! triangle mesh, convex hull and ray-cast library); its types stay private
//! and everything public speaks glam.
//!
//! Bad input (indices out of range, NaN vertices or transforms, degenerate
//! hulls, bad rays) returns a [`CollisionError`] and changes nothing.

mod async_cook;
mod body_setup;
mod cook;
mod error;
mod provider;
mod raycast;

pub use async_cook::{AsyncCooker, CookEvent, CookExecutor, CookJob, CookStats, CookedJob, InlineExecutor, ManualExecutor, RayonExecutor};
pub use body_setup::{BodySetup, ConvexElement};
pub use cook::{CollisionBounds, CollisionComplexity, CookedCollision};
pub use error::CollisionError;
pub use provider::{CollisionDataProvider, TriMeshCollisionData};
pub use raycast::{BodyId, CollisionScene, RayHit};
