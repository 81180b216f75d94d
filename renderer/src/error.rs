//! The renderer's error type.

use crate::material::MaterialId;
use crate::texture::TextureId;
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
    /// A material id that names no live material: never returned by
    /// `create_material`, or stale (its material destroyed, its slot since
    /// moved to a later generation).
    #[error("unknown material {0}")]
    UnknownMaterial(MaterialId),
    /// Every material slot is live or retired (see [`MaterialId`]).
    #[error("no material id left: all {0} material slots are live or retired")]
    MaterialIdsExhausted(u32),
    /// A material whose shader does not compile; `error` says where
    /// (`file:line:column`, the file being the material shader's name).
    #[error("material {material:?} does not compile: {error}")]
    MaterialShader { material: String, error: Box<rhi_vulkan::ShaderError> },
    /// A material or material instance that cannot be made as asked (bad
    /// parameter declarations or overrides, a bad mask clip value, an
    /// instance of an instance); `material` names it.
    #[error("material {material}: {reason}")]
    InvalidMaterial { material: String, reason: String },
    /// A parent material with live instances cannot be destroyed (nor
    /// become an instance): destroy the instances first.
    #[error("material {material} has {instances} live instance(s)")]
    MaterialInUse { material: MaterialId, instances: u32 },
    /// A texture asset that cannot be made as given (size, data length,
    /// mip levels, larger than the device allows, undecodable file).
    #[error("texture {texture:?}: {reason}")]
    InvalidTexture { texture: String, reason: String },
    /// A texture id that names no live texture.
    #[error("unknown texture {0:?}")]
    UnknownTexture(TextureId),
    /// Every texture slot is live or retired.
    #[error("no texture id left: all {0} texture slots are live or retired")]
    TextureIdsExhausted(u32),
    /// [`crate::passes::register_pass`]: the pass table holds
    /// [`crate::passes::MAX_PASSES`] passes.
    #[error("no mesh pass id left: the pass table holds at most {0} passes")]
    PassTableFull(usize),
    /// [`crate::passes::register_pass`]: a pass of that name exists (names
    /// key the stats).
    #[error("a mesh pass named {0:?} is already registered")]
    DuplicatePass(String),
    /// The render thread failed to start.
    #[error("the render thread could not start: {0}")]
    RenderThreadStart(String),
}

pub type Result<T, E = RendererError> = std::result::Result<T, E>;
