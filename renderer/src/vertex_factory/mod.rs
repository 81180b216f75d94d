//! Vertex factories: the plug-in point for new kinds of geometry (UE's
//! FVertexFactoryType). A factory declares its vertex streams and provides
//! the WGSL `VertexFactoryInput` struct and `vf_fetch` function that the pass
//! shaders call, so a feature crate adds geometry without touching a pass.
//!
//! Factories are `'static` singletons (`&'static dyn VertexFactoryType`),
//! named in pipeline keys by [`VertexFactoryType::name`].

mod local;

pub use local::{LocalVertexFactory, LocalVertex, LOCAL_VERTEX_FACTORY};

use rhi_vulkan::VertexBufferLayout;

/// Most streams a factory may declare (the primitive-id stream comes on top).
pub const MAX_VERTEX_STREAMS: usize = 4;

/// How a kind of geometry reaches the vertex shader (UE's
/// FVertexFactoryType): its WGSL, vertex streams and where it finds the
/// primitive id.
pub trait VertexFactoryType: Send + Sync + 'static {
    /// Unique name, e.g. `"local"`.
    fn name(&self) -> &'static str;
    /// WGSL declaring `struct VertexFactoryInput` and
    /// `fn vf_fetch(input: VertexFactoryInput) -> FactoryVertex`.
    fn wgsl(&self) -> &'static str;
    /// The vertex streams, in binding order (at most [`MAX_VERTEX_STREAMS`]).
    fn streams(&self) -> Vec<VertexBufferLayout>;
    /// `Some(location)` when the factory reads the primitive id from the
    /// renderer's per-instance id stream (draws of this factory can merge);
    /// `None` when it reads it from the draw's push constants.
    fn primitive_id_location(&self) -> Option<u32>;
}

impl std::fmt::Debug for dyn VertexFactoryType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "VertexFactoryType({})", self.name())
    }
}
