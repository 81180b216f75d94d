//! `MeshDrawCommand`: everything needed to issue one draw, as plain data.
//!
//! It holds handles, never pointers, and no per-primitive data: transforms
//! live in the GPU scene, found through the primitive id. Two primitives with
//! the same mesh section and material therefore build *equal* commands, which
//! is what lets the state buckets deduplicate them and the merge turn them
//! into one instanced draw.

use crate::vertex_factory::MAX_VERTEX_STREAMS;
use rhi_vulkan::{BufferHandle, IndexFormat, PipelineHandle};

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct MeshDrawCommand {
    pub pipeline: PipelineHandle,
    pub streams: [Option<(BufferHandle, u64)>; MAX_VERTEX_STREAMS],
    /// Binding slot of the renderer's per-instance primitive-id stream, when
    /// the vertex factory reads ids from it (such commands can merge).
    pub id_stream_slot: Option<u32>,
    pub index_buffer: Option<(BufferHandle, IndexFormat)>,
    pub first_index: u32,
    pub count: u32,
    pub base_vertex: i32,
    pub instance_count: u32,
    pub indirect: Option<(BufferHandle, u64)>,
    /// Index into the material table (push constant).
    pub material_index: u32,
    /// Whether the pipeline reads the draw push constants.
    pub push_constants: bool,
}

impl MeshDrawCommand {
    /// Whether several primitives' copies of this command can become one
    /// instanced draw.
    pub fn can_merge(&self) -> bool {
        self.id_stream_slot.is_some() && self.instance_count == 1 && self.indirect.is_none()
    }
}
