//! Vertex factories: the plug-in point for new kinds of geometry (UE's
//! FVertexFactoryType). A factory declares its vertex streams and provides
//! the WGSL `VertexFactoryInput` struct and `vf_fetch` function that the pass
//! shaders call, so a feature crate adds geometry without touching a pass.
//!
//! Factories are `'static` singletons (`&'static dyn VertexFactoryType`),
//! named in pipeline keys by [`VertexFactoryType::name`].
//!
//! # What a factory's WGSL defines
//!
//! * `struct VertexFactoryInput` and
//!   `fn vf_fetch(input: VertexFactoryInput) -> FactoryVertex` (see
//!   `shaders/scene.inc.wgsl`), setting `FactoryVertex.instance_id` (0 for
//!   factories without instances); the passes carry it to
//!   `MaterialInput.instance_id`. `vf_fetch` starts from `factory_vertex`
//!   (or `mesh_factory_vertex`, which places a mesh vertex in the world),
//!   both in `scene.inc.wgsl`, so what a factory does not set has one default.
//! * `fn vf_custom_data(in: MaterialInput, index: u32) -> f32`: custom float
//!   `index` of the primitive or instance, 0 past the ones it has. Materials
//!   call it through `custom_data(in, index)`. The local factory returns the
//!   primitive's custom vec4 (`index` < 4), the sprite factory its custom
//!   vec4 (both through `custom_vec4_data`), the instanced factory any of the
//!   instance's floats.
//!
//! # The factory's shader bindings
//!
//! A factory may declare resources in bind group
//! [`VERTEX_FACTORY_BIND_GROUP`] (3; groups 0–2 are the view, the shadow
//! map and the material's). The proxy makes a persistent bind group for them
//! (`Device::create_bind_group_with_layout`, every binding visible to the
//! vertex and fragment stages, as reflection derives a pipeline's layout)
//! and hands it in [`crate::MeshBatch::vertex_factory_bindings`]; the draw
//! command carries it and submit binds it when it changes (UE: the vertex
//! factory's part of FMeshDrawShaderBindings).

mod local;

pub use local::{
    put_position_and_basis, stream_offsets, LocalPositionOnlyVertexFactory, LocalVertex, LocalVertexFactory,
    LOCAL_POSITION_ONLY_VERTEX_FACTORY, LOCAL_VERTEX_FACTORY,
};

use rhi_vulkan::VertexBufferLayout;

/// Most streams a factory may declare (the primitive-id stream comes on top).
pub const MAX_VERTEX_STREAMS: usize = 4;

/// The bind group a factory's own resources live in (see the module docs).
pub const VERTEX_FACTORY_BIND_GROUP: u32 = 3;

/// How a kind of geometry reaches the vertex shader (UE's
/// FVertexFactoryType): its WGSL, vertex streams and where it finds the
/// primitive id.
pub trait VertexFactoryType: Send + Sync + 'static {
    /// Unique name, e.g. `"local"`.
    fn name(&self) -> &'static str;
    /// WGSL declaring `struct VertexFactoryInput`,
    /// `fn vf_fetch(input: VertexFactoryInput) -> FactoryVertex` and
    /// `fn vf_custom_data(in: MaterialInput, index: u32) -> f32` (module docs).
    fn wgsl(&self) -> &'static str;
    /// The vertex streams, in binding order (at most [`MAX_VERTEX_STREAMS`]).
    fn streams(&self) -> Vec<VertexBufferLayout>;
    /// `Some(location)` when the factory reads the primitive id from the
    /// renderer's per-instance id stream (draws of this factory can merge);
    /// `None` when it reads it from the draw's push constants.
    fn primitive_id_location(&self) -> Option<u32>;

    /// The factory's position-only variant (UE's position-only vertex
    /// stream), if it has one: the same geometry read from this factory's
    /// stream 0 alone (its only stream, plus the id stream), which passes
    /// that want nothing but depth ([`crate::passes::PassDesc::position_only`])
    /// use for opaque batches — they bind one stream and fetch 12 bytes a
    /// vertex instead of every attribute. It must place vertices exactly as
    /// this factory does. Default: none (the full factory is used).
    fn position_only(&self) -> Option<&'static dyn VertexFactoryType> {
        None
    }
}

impl std::fmt::Debug for dyn VertexFactoryType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "VertexFactoryType({})", self.name())
    }
}
