//! The crate's one error type.
//!
//! Every public mutation validates all of its input before it touches
//! anything, so an `Err` always means "nothing changed" (the project's rule
//! for errors and bad input). The variants carry what a caller needs to fix
//! the call.

use crate::id::InstanceId;

/// Why an instancing call was rejected. A rejected call changes nothing.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum InstancingError {
    /// An instance index at or past the instance count.
    #[error("instance index {index} is out of range (instance count {count})")]
    InstanceOutOfRange { index: u32, count: u32 },
    /// An id that was never issued, or whose instance has been removed.
    #[error("unknown or removed instance id {0:?}")]
    UnknownInstanceId(InstanceId),
    /// The same id twice in one batch removal.
    #[error("instance id {0:?} appears twice in one batch")]
    DuplicateInstanceId(InstanceId),
    /// A transform (or the component transform used to convert one) holds
    /// NaN or infinity.
    #[error("transform is not finite (NaN or infinity)")]
    NonFiniteTransform,
    /// A transform whose 3x3 part has no usable inverse (a zero scale on some
    /// axis): bounds, culling spheres and world/local conversion break on it.
    #[error("transform is degenerate (zero scale or otherwise singular)")]
    DegenerateTransform,
    /// A custom-data slice whose length is not `num_custom_data_floats`.
    #[error("custom data has {got} floats, expected {expected}")]
    CustomDataLength { expected: u32, got: usize },
    /// A custom-data float index at or past `num_custom_data_floats`.
    #[error("custom data float index {float_index} is out of range ({count} floats per instance)")]
    CustomDataIndex { float_index: u32, count: u32 },
    /// A custom-data value that is NaN or infinite.
    #[error("custom data value is not finite")]
    NonFiniteCustomData,
    /// Cull distances that are negative, non-finite, or start past end.
    #[error("invalid cull distances: start {start}, end {end} (need 0 <= start <= end, finite; end 0 = off)")]
    InvalidCullDistances { start: f32, end: f32 },
    /// A minimum LOD (UE's `MinLOD`) at or past [`crate::MAX_LODS`], the most
    /// LODs a mesh may have (one below it is clamped to the mesh's last LOD).
    #[error("invalid minimum LOD {min_lod}: need below {max} (clamped to the mesh's last LOD)")]
    InvalidMinLod { min_lod: u32, max: u32 },
    /// A dithered LOD transition band that is negative, past 1 or not
    /// finite ([`crate::LodDitherBand::new`]).
    #[error("invalid dithered LOD transition band {band}: need 0 (off) to 1, finite")]
    InvalidLodDitherBand { band: f32 },
    /// LOD screen sizes that are empty, non-finite, negative or increasing.
    #[error("invalid LOD screen sizes {0:?}: need 1..=8 finite, non-negative, non-increasing values")]
    InvalidLodScreenSizes(Vec<f32>),
    /// A mesh description that cannot be drawn (no sections, no vertices).
    #[error("invalid mesh description: {0}")]
    InvalidMesh(&'static str),
    /// Mesh bounds holding NaN, infinity or a negative extent/radius.
    #[error("mesh bounds are not finite or have a negative size")]
    InvalidBounds,
    /// A view or projection matrix holding NaN or infinity.
    #[error("view or projection matrix is not finite")]
    NonFiniteView,
    /// More instances than a `u32` index (minus the free-slot marker) allows.
    #[error("too many custom data floats per instance: {requested} requested, at most {max}")]
    TooManyCustomDataFloats { requested: u32, max: u32 },

    #[error("too many instances: {requested} requested, at most {max}")]
    TooManyInstances { requested: u64, max: u32 },
    /// A dynamic update ([`crate::IsmUpdate`]) that does not fit the proxy
    /// it was sent to (an instance count past [`crate::MAX_INSTANCES`], a
    /// range past the count, new instances it does not write, non-finite
    /// data); the proxy rejects it whole and keeps its state.
    #[error("invalid instanced mesh update: {0}")]
    InvalidUpdate(String),
    /// A background cluster-tree build panicked; the previous tree stays.
    #[error("cluster tree build failed: {0}")]
    TreeBuildFailed(String),
    /// The renderer or the RHI refused a request (the message is theirs).
    #[error("renderer: {0}")]
    Renderer(String),
}

impl From<renderer::RendererError> for InstancingError {
    fn from(e: renderer::RendererError) -> Self {
        Self::Renderer(e.to_string())
    }
}

impl From<rhi_vulkan::RhiError> for InstancingError {
    fn from(e: rhi_vulkan::RhiError) -> Self {
        Self::Renderer(e.to_string())
    }
}

/// Shorthand for this crate's results.
pub type Result<T, E = InstancingError> = std::result::Result<T, E>;
