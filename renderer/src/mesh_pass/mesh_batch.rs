//! `MeshBatch`: what a proxy hands the renderer for one section of geometry
//! (UE's FMeshBatch with one element).

use crate::material::MaterialId;
use crate::vertex_factory::{VertexFactoryType, MAX_VERTEX_STREAMS};
use rhi_vulkan::{BindGroupHandle, BufferHandle, IndexFormat};

/// One section of geometry with its material, as a proxy hands it to the
/// renderer; each pass that takes it turns it into a [`super::MeshDrawCommand`].
#[derive(Clone, Debug)]
pub struct MeshBatch {
    /// How the vertex shader fetches the section's vertices (and finds its
    /// primitive).
    pub vertex_factory: &'static dyn VertexFactoryType,
    /// The factory's streams, in its binding order: buffer and byte offset.
    pub streams: [Option<(BufferHandle, u64)>; MAX_VERTEX_STREAMS],
    /// Index buffer and format; `None` draws non-indexed.
    pub index_buffer: Option<(BufferHandle, IndexFormat)>,
    /// The first index drawn (or the first vertex, without an index buffer).
    pub first_index: u32,
    /// Indices to draw (or vertices, without an index buffer).
    pub count: u32,
    /// Added to every index before the vertex is fetched.
    pub base_vertex: i32,
    /// Instances per draw: 1 for ordinary meshes (merging then adds instances).
    pub instance_count: u32,
    /// Indexed-indirect arguments instead of `count`/`instance_count`.
    pub indirect: Option<(BufferHandle, u64)>,
    /// The material drawn with; an id that names no live material draws with
    /// the default.
    pub material: MaterialId,
    /// The level of detail the batch belongs to (0: the most detailed); a
    /// view draws only the batches of the LOD it chose for the primitive.
    pub lod_index: u8,
    /// Whether the shadow depth pass takes the batch.
    pub cast_shadow: bool,
    /// Flip the winding (negative-determinant transforms).
    pub reverse_culling: bool,
    /// The vertex factory's shader bindings (group 3): a persistent bind
    /// group the factory's WGSL declares (the instanced factory's custom
    /// data), owned by the proxy; `None` for factories that declare none.
    /// Copied into the draw command, so batches differing here never merge.
    pub vertex_factory_bindings: Option<BindGroupHandle>,
}

impl MeshBatch {
    /// An indexed, single-instance batch of the local vertex factory.
    pub fn local(
        streams: [Option<(BufferHandle, u64)>; MAX_VERTEX_STREAMS],
        index_buffer: BufferHandle,
        first_index: u32,
        count: u32,
        material: MaterialId,
    ) -> Self {
        Self {
            vertex_factory: &crate::vertex_factory::LOCAL_VERTEX_FACTORY,
            streams,
            index_buffer: Some((index_buffer, IndexFormat::Uint32)),
            first_index,
            count,
            base_vertex: 0,
            instance_count: 1,
            indirect: None,
            material,
            lod_index: 0,
            cast_shadow: true,
            reverse_culling: false,
            vertex_factory_bindings: None,
        }
    }

    /// Triangles drawn by one instance of this batch.
    pub fn triangles(&self) -> u64 {
        u64::from(self.count / 3) * u64::from(self.instance_count)
    }
}
