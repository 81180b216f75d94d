//! `MeshBatch`: what a proxy hands the renderer for one section of geometry
//! (UE's FMeshBatch with one element).

use crate::material::MaterialId;
use crate::vertex_factory::{VertexFactoryType, MAX_VERTEX_STREAMS};
use rhi_vulkan::{BindGroupHandle, BufferHandle, IndexFormat};

/// The range of one section a batch draws (UE's FMeshBatchElement): the
/// part of a draw that both a [`MeshBatch`] and the
/// [`super::MeshDrawCommand`] built from it carry, copied unchanged.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct MeshBatchElement {
    /// Index buffer and format; `None` draws non-indexed.
    pub index_buffer: Option<(BufferHandle, IndexFormat)>,
    /// The first index drawn (or the first vertex, without an index buffer).
    pub first_index: u32,
    /// Indices to draw (or vertices, without an index buffer).
    pub count: u32,
    /// Added to every index before the vertex is fetched; the first vertex
    /// of a non-indexed draw (negative values count as 0 there).
    pub base_vertex: i32,
    /// Instances per draw: 1 for ordinary meshes (merging then sets the
    /// instance count to the number of primitives); more for a proxy that
    /// instances itself (an instanced static mesh).
    pub instance_count: u32,
    /// Indexed-indirect arguments (buffer, byte offset) instead of `count`
    /// and `instance_count`: the GPU decides the draw.
    pub indirect: Option<(BufferHandle, u64)>,
}

impl MeshBatchElement {
    /// One instance of `count` indices (`u32`) from `first_index`.
    pub fn indexed(index_buffer: BufferHandle, first_index: u32, count: u32) -> Self {
        Self {
            index_buffer: Some((index_buffer, IndexFormat::Uint32)),
            first_index,
            count,
            base_vertex: 0,
            instance_count: 1,
            indirect: None,
        }
    }

    /// Triangles drawn by all instances of this element.
    pub fn triangles(&self) -> u64 {
        u64::from(self.count / 3) * u64::from(self.instance_count)
    }
}

/// One section of geometry with its material, as a proxy hands it to the
/// renderer; each pass that takes it turns it into a [`super::MeshDrawCommand`].
#[derive(Clone, Debug)]
pub struct MeshBatch {
    /// How the vertex shader fetches the section's vertices (and finds its
    /// primitive).
    pub vertex_factory: &'static dyn VertexFactoryType,
    /// The factory's streams, in its binding order: buffer and byte offset.
    pub streams: [Option<(BufferHandle, u64)>; MAX_VERTEX_STREAMS],
    /// What is drawn: the index range, instances, or indirect arguments.
    pub element: MeshBatchElement,
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
            element: MeshBatchElement::indexed(index_buffer, first_index, count),
            material,
            lod_index: 0,
            cast_shadow: true,
            reverse_culling: false,
            vertex_factory_bindings: None,
        }
    }

    /// Triangles drawn by this batch, all its instances.
    pub fn triangles(&self) -> u64 {
        self.element.triangles()
    }
}
