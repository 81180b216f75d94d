//! The one error type of the crate.
//!
//! UE's `UProceduralMeshComponent` logs a warning and carries on (or silently
//! ignores the call) when given malformed arrays. Here every call a caller can
//! get wrong returns a [`ProcMeshError`] instead, and a rejected call changes
//! nothing: the sections, materials, collision configuration and cooked
//! collision stay exactly as they were, so there is nothing to send to the
//! render thread or the collision scene.

#[cfg(feature = "collision")]
use engine_core::collision::CollisionError;
use thiserror::Error;

/// Why a procedural-mesh call was rejected.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum ProcMeshError {
    /// An optional per-vertex array is neither empty (use the default) nor
    /// one entry per vertex.
    #[error("{attribute} has {got} entries; expected 0 or one per vertex ({expected})")]
    AttributeLength {
        /// The array (`"normals"`, `"uv0"`, `"colors"`, ...).
        attribute: &'static str,
        /// The vertex count.
        expected: usize,
        /// Its length.
        got: usize,
    },
    /// The triangle list is not whole triangles.
    #[error("triangle list has {len} indices, not a multiple of 3")]
    TrianglesNotMultipleOf3 {
        /// Length of the index array.
        len: usize,
    },
    /// A triangle names a vertex past the end of the section.
    #[error("triangle {triangle} uses vertex {index}, but the section has {vertex_count} vertices")]
    IndexOutOfRange {
        /// The triangle (index into the list divided by 3).
        triangle: usize,
        /// The offending vertex index.
        index: u32,
        /// How many vertices the section has.
        vertex_count: usize,
    },
    /// More vertices than `u32` triangle indices can reach.
    #[error("{count} vertices; triangle indices are u32")]
    TooManyVertices {
        /// The vertex count given.
        count: usize,
    },
    /// A vertex position is NaN or infinite.
    #[error("position of vertex {vertex} is not finite")]
    NonFinitePosition {
        /// The vertex.
        vertex: usize,
    },
    /// A vertex position is farther from the origin than bounds can
    /// represent (see [`MAX_COORDINATE`](crate::MAX_COORDINATE)).
    #[error("position of vertex {vertex} is beyond ±{limit} on an axis")]
    PositionOutOfRange {
        /// The vertex.
        vertex: usize,
        /// The largest coordinate allowed.
        limit: f32,
    },
    /// A normal, tangent, UV or linear color is NaN or infinite.
    #[error("{attribute} of vertex {vertex} is not finite")]
    NonFiniteAttribute {
        /// The array.
        attribute: &'static str,
        /// The vertex.
        vertex: usize,
    },
    /// An update must keep the section's vertex count (same wording as UE's
    /// log line).
    #[error(
        "Trying to update a procedural mesh component section with a different number of \
         vertices [Previous: {previous}, New: {new}] (section {section}; clear and recreate \
         the section instead)"
    )]
    VertexCountMismatch {
        /// The section updated.
        section: usize,
        /// Its vertex count.
        previous: usize,
        /// The count given.
        new: usize,
    },
    /// An update keeps the section's triangles; only vertex attributes change.
    #[error(
        "update of section {section} gives triangles; an update only changes vertex data \
         (clear and recreate the section to change triangles)"
    )]
    TrianglesInUpdate {
        /// The section updated.
        section: usize,
    },
    /// No section exists at this index.
    #[error("no mesh section {index}")]
    UnknownSection {
        /// The index given.
        index: usize,
    },
    /// Section indices are capped so that each can be a collision material
    /// index (`u16`) and a stray index cannot allocate a huge table.
    #[error("section index {index} is past the largest allowed ({max})")]
    SectionIndexTooLarge {
        /// The index given.
        index: usize,
        /// The largest allowed.
        max: usize,
    },
    /// A convex collision mesh cannot be hulled: too few points, a
    /// non-finite point, or all points coplanar.
    #[cfg(feature = "collision")]
    #[error("convex collision mesh {element} is invalid: {reason}")]
    InvalidConvexMesh {
        /// Index of the convex mesh.
        element: usize,
        /// What is wrong with it.
        reason: String,
    },
    /// Cooking the collision failed for another reason; the previous
    /// collision stays.
    #[cfg(feature = "collision")]
    #[error("collision cook failed: {0}")]
    Collision(CollisionError),
}

#[cfg(feature = "collision")]
impl From<CollisionError> for ProcMeshError {
    /// Convex problems become [`InvalidConvexMesh`](Self::InvalidConvexMesh);
    /// the rest stay wrapped.
    fn from(error: CollisionError) -> Self {
        match error {
            CollisionError::DegenerateConvex { element, reason } => Self::InvalidConvexMesh { element, reason },
            CollisionError::NonFiniteConvexPoint { element, point, .. } => {
                Self::InvalidConvexMesh { element, reason: format!("point {point} is not finite") }
            }
            other => Self::Collision(other),
        }
    }
}

/// Shorthand for this crate's results.
pub type Result<T, E = ProcMeshError> = std::result::Result<T, E>;
