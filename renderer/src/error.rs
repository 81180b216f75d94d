//! The renderer's error type.

use crate::ids::{LightId, MaterialId, PrimitiveId, TextureId};

/// Everything the renderer can fail with. A call that returns one changed
/// nothing.
#[derive(Debug, thiserror::Error)]
pub enum RendererError {
    /// An error of the RHI below (device, resources, recording).
    #[error(transparent)]
    Rhi(#[from] rhi_vulkan::RhiError),
    /// The render thread panicked; the message is the panic's.
    #[error("the render thread panicked: {0}")]
    RenderThreadPanicked(String),
    /// The render thread has stopped (shut down, or after a panic) and takes
    /// no more commands.
    #[error("the render thread has shut down")]
    RenderThreadGone,
    /// A primitive id that names no primitive of the scene.
    #[error("unknown primitive {0:?}")]
    UnknownPrimitive(PrimitiveId),
    /// A primitive's transform that is not finite or scales to zero, or
    /// bounds that are not valid; nothing was queued.
    #[error("invalid bounds or transform for {what}: {reason}")]
    InvalidTransform {
        /// The primitive (its id, or `primitive` when rejected before it
        /// was queued).
        what: String,
        /// What is wrong with it.
        reason: String,
    },
    /// Per-primitive settings that cannot be used
    /// ([`crate::PrimitiveRenderSettings::invalid_reason`]).
    #[error("invalid render settings for {primitive:?}: {reason}")]
    InvalidPrimitiveSettings {
        /// The primitive.
        primitive: PrimitiveId,
        /// What is wrong.
        reason: String,
    },
    /// No console variable has this name.
    #[error("unknown console variable {0:?}")]
    UnknownCvar(String),
    /// A console variable was set to text its kind does not accept; `expected`
    /// says what it takes.
    #[error("console variable {name}: cannot set {value:?} ({expected})")]
    InvalidCvarValue {
        /// The variable.
        name: String,
        /// The text it was set to.
        value: String,
        /// What its kind accepts.
        expected: &'static str,
    },
    /// A camera or view family that cannot be rendered (non-finite values, an
    /// empty viewport or target, a degenerate projection).
    #[error("invalid view: {0}")]
    InvalidView(String),
    /// An environment the scene cannot take ([`crate::Environment::problem`]).
    #[error("invalid environment: {0}")]
    InvalidEnvironment(String),
    /// An environment image that could not be read or decoded.
    #[error(transparent)]
    Environment(#[from] EnvironmentError),
    /// A light the scene cannot take ([`crate::Light::problem`]).
    #[error("invalid light {light:?}: {reason}")]
    InvalidLight {
        /// The light's id (`None`: one not added yet).
        light: Option<LightId>,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// A post-processing chain the post stage cannot run (empty, or its
    /// last pass does not write the output's format).
    #[error("invalid post-processing chain: {0}")]
    InvalidPostChain(String),
    /// Static mesh data that cannot be drawn (no LOD, an index or section out
    /// of range, a non-finite position).
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
    MaterialShader {
        /// The material shader's name.
        material: String,
        /// naga's error and where it was found.
        error: Box<rhi_vulkan::ShaderError>,
    },
    /// A vertex factory whose WGSL does not compile in a pass
    /// (`RenderThread::register_vertex_factory`); `error` says where.
    #[error("vertex factory {factory:?} does not compile in the {pass} pass: {error}")]
    VertexFactoryShader {
        /// The factory's name.
        factory: &'static str,
        /// The pass it was composed into.
        pass: &'static str,
        /// naga's error and where it was found.
        error: Box<rhi_vulkan::ShaderError>,
    },
    /// A material or material instance that cannot be made as asked (bad
    /// parameter declarations or overrides, a bad mask clip value, an
    /// instance of an instance); `material` names it.
    #[error("material {material}: {reason}")]
    InvalidMaterial {
        /// The material: its id, its shader's name, or `instance of <parent>`.
        material: String,
        /// What is wrong.
        reason: String,
    },
    /// A parent material with live instances cannot be destroyed (nor
    /// become an instance): destroy the instances first.
    #[error("material {material} has {instances} live instance(s)")]
    MaterialInUse {
        /// The parent material.
        material: MaterialId,
        /// Its live instances.
        instances: u32,
    },
    /// A texture asset that cannot be made as given (size, data length,
    /// mip levels, larger than the device allows, undecodable file).
    #[error("texture {texture:?}: {reason}")]
    InvalidTexture {
        /// The texture's label.
        texture: String,
        /// What is wrong.
        reason: String,
    },
    /// A texture id that names no live texture.
    #[error("unknown texture {0:?}")]
    UnknownTexture(TextureId),
    /// Every texture slot is live or retired.
    #[error("no texture id left: all {0} texture slots are live or retired")]
    TextureIdsExhausted(u32),
    /// [`crate::RenderThread::register_pass`]: the pass table holds
    /// [`crate::mesh_pass::passes::MAX_PASSES`] passes.
    #[error("no mesh pass id left: the pass table holds at most {0} passes")]
    PassTableFull(usize),
    /// [`crate::RenderThread::register_pass`]: a pass of that name exists (names
    /// key the stats).
    #[error("a mesh pass named {0:?} is already registered")]
    DuplicatePass(String),
    /// The render thread failed to start.
    #[error("the render thread could not start: {0}")]
    RenderThreadStart(String),
}

/// The renderer's result type ([`RendererError`] unless said otherwise).
pub type Result<T, E = RendererError> = std::result::Result<T, E>;

/// Why an environment could not be made (`crate::environment`; defined
/// here, below every module, as every error is).
#[derive(Debug, thiserror::Error)]
pub enum EnvironmentError {
    /// The file could not be read.
    #[error("reading {path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The error.
        source: std::io::Error,
    },
    /// The bytes are not a Radiance `.hdr` image the decoder can read
    /// (truncated, a bad header).
    #[error("not a readable Radiance .hdr image: {0}")]
    Decode(String),
    /// The image is larger than [`MAX_EQUIRECT_WIDTH`](crate::environment::MAX_EQUIRECT_WIDTH) x
    /// [`MAX_EQUIRECT_HEIGHT`](crate::environment::MAX_EQUIRECT_HEIGHT) (refused from its header, before any texel
    /// is decoded), or empty.
    #[error("an equirectangular image of {width}x{height}: each side must be 1..={max_width} x 1..={max_height}")]
    Size {
        /// Its width.
        width: u32,
        /// Its height.
        height: u32,
        /// `MAX_EQUIRECT_WIDTH`.
        max_width: u32,
        /// `MAX_EQUIRECT_HEIGHT`.
        max_height: u32,
    },
    /// Texels that do not fill the image exactly, or that are negative or
    /// not finite.
    #[error("invalid texels: {0}")]
    Texels(String),
}
