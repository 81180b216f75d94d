//! The renderer's error type.

use crate::scene::PrimitiveId;

#[derive(Debug, thiserror::Error)]
pub enum RendererError {
    #[error(transparent)]
    Rhi(#[from] rhi_vulkan::RhiError),
    /// The render thread panicked; the message is the panic's.
    #[error("the render thread panicked: {0}")]
    RenderThreadPanicked(String),
    #[error("the render thread has shut down")]
    RenderThreadGone,
    #[error("unknown primitive {0:?}")]
    UnknownPrimitive(PrimitiveId),
    #[error("invalid bounds or transform for {what}: {reason}")]
    InvalidTransform { what: String, reason: String },
    #[error("unknown console variable {0:?}")]
    UnknownCvar(String),
    #[error("console variable {name}: cannot set {value:?} ({expected})")]
    InvalidCvarValue { name: String, value: String, expected: &'static str },
    #[error("invalid view: {0}")]
    InvalidView(String),
    #[error("invalid mesh data: {0}")]
    InvalidMesh(String),
    #[error("unknown material {0}")]
    UnknownMaterial(u32),
}

pub type Result<T, E = RendererError> = std::result::Result<T, E>;
