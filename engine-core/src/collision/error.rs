//! The one error type of the collision module.
//!
//! Every public operation that a caller can get wrong (malformed mesh data
//! from a provider, a degenerate convex element, a NaN transform, an unknown
//! body, a bad ray) returns a [`CollisionError`] and changes nothing: a failed
//! cook leaves the previous cooked collision in place, a rejected scene update
//! leaves the scene as it was.

use glam::{Vec2, Vec3};
use thiserror::Error;

use super::raycast::BodyId;

/// Why a collision operation was rejected.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum CollisionError {
    /// A triangle names a vertex past the end of the vertex buffer.
    #[error("triangle {triangle} uses vertex {index}, but the mesh has {vertex_count} vertices")]
    IndexOutOfRange {
        /// The triangle holding the bad index.
        triangle: usize,
        /// The offending vertex index.
        index: u32,
        /// How many vertices the mesh has.
        vertex_count: usize,
    },
    /// More vertices than a `u32` index can reach.
    #[error("{0} vertices; triangle indices are u32")]
    TooManyVertices(usize),
    /// `material_indices` must hold exactly one entry per triangle.
    #[error("{material_count} material indices for {triangle_count} triangles")]
    MaterialCountMismatch {
        /// Length of `material_indices`.
        material_count: usize,
        /// Length of `indices`.
        triangle_count: usize,
    },
    /// A vertex position is NaN or infinite.
    #[error("vertex {vertex} is not finite: {position}")]
    NonFiniteVertex {
        /// Index of the vertex.
        vertex: usize,
        /// Its value.
        position: Vec3,
    },
    /// A UV channel must hold one coordinate per vertex.
    #[error("UV channel {channel} has {uv_count} coordinates for {vertex_count} vertices")]
    UvCountMismatch {
        /// The channel.
        channel: usize,
        /// How many coordinates the channel has.
        uv_count: usize,
        /// How many vertices the mesh has.
        vertex_count: usize,
    },
    /// A UV coordinate is NaN or infinite.
    #[error("UV channel {channel}, vertex {vertex} is not finite: {uv}")]
    NonFiniteUv {
        /// The channel.
        channel: usize,
        /// Index of the vertex.
        vertex: usize,
        /// Its value.
        uv: Vec2,
    },
    /// A convex element point is NaN or infinite.
    #[error("convex element {element}, point {point} is not finite: {position}")]
    NonFiniteConvexPoint {
        /// Index of the convex element.
        element: usize,
        /// Index of the point inside the element.
        point: usize,
        /// Its value.
        position: Vec3,
    },
    /// A convex element whose points enclose no volume (fewer than four
    /// points, or all of them coplanar or coincident) cannot be hulled.
    #[error("convex element {element} cannot be hulled: {reason}")]
    DegenerateConvex {
        /// Index of the convex element.
        element: usize,
        /// What the hull builder reported.
        reason: String,
    },
    /// The triangle mesh could not be built (reported by the BVH builder).
    #[error("triangle mesh could not be built: {0}")]
    TriMeshBuild(String),
    /// Cooking panicked (a bug in a cooking library, not in the input the
    /// checks above judge); caught on the worker, the previous collision
    /// stays.
    #[error("cooking panicked: {0}")]
    CookPanicked(String),
    /// A ray origin or direction is NaN or infinite.
    #[error("ray origin {origin} or direction {direction} is not finite")]
    NonFiniteRay {
        /// The ray origin given.
        origin: Vec3,
        /// The ray direction given.
        direction: Vec3,
    },
    /// A ray direction of zero length has no direction to trace.
    #[error("ray direction has zero length")]
    ZeroRayDirection,
    /// The maximum trace distance is NaN or negative.
    #[error("maximum ray distance {0} is NaN or negative")]
    InvalidMaxDistance(f32),
    /// A body transform is not finite or cannot be inverted (zero scale).
    #[error("transform of body {0:?} is not finite or not invertible")]
    InvalidTransform(BodyId),
    /// A body with this id is already in the scene.
    #[error("body {0:?} is already in the collision scene")]
    DuplicateBody(BodyId),
    /// No body with this id is in the scene.
    #[error("body {0:?} is not in the collision scene")]
    UnknownBody(BodyId),
    /// The scene holds as many bodies as its broad-phase can index.
    #[error("the collision scene is full")]
    SceneFull,
}
