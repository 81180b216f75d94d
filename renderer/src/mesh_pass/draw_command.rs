//! `MeshDrawCommand`: everything needed to issue one draw, as plain data.
//!
//! It holds handles, never pointers, and no per-primitive data: transforms
//! live in the GPU scene, found through the primitive id. Two primitives with
//! the same mesh section and material therefore build *equal* commands, which
//! is what lets the state buckets deduplicate them and the merge turn them
//! into one instanced draw.
//!
//! # The merge contract
//!
//! Two visible commands become one instanced draw exactly when
//!
//! 1. they are **equal** — every field below, compared whole (`Eq`/`Hash`),
//!    so they share one state bucket ([`super::StateBuckets`]);
//! 2. they are **adjacent in draw order** ([`super::sort`]): in opaque
//!    passes, sorted by (bucket rank, primitive slot), all of a bucket's
//!    visible commands are, so a mergeable bucket is one draw per pass;
//!    back-to-front translucency merges only runs that the distances leave
//!    together;
//! 3. the command [can merge](MeshDrawCommand::can_merge): it reads
//!    primitive ids from the per-instance id stream, draws one instance, and
//!    is not indirect;
//! 4. `r.MeshDrawCommands.DynamicInstancing` is on.
//!
//! The merged draw is then the command's draw with `instance_count` = the
//! run's length and `first_instance` = the run's offset in the pass's id
//! stream; the vertex shader finds each instance's primitive through that
//! stream. Anything that differs per primitive must therefore come from
//! the GPU scene through the id, never from a field here: a field holding
//! per-primitive data would make every command distinct and end merging.
//! (Bevy's `BatchMeta` plays the same part: the fields two phase items
//! must share to batch.)
//!
//! What each field means for the draw, and so why it must match:

use super::MeshBatchElement;
use crate::vertex_factory::MAX_VERTEX_STREAMS;
use rhi_vulkan::{BindGroupHandle, BufferHandle, PipelineHandle};

/// One draw of one mesh section in one pass, as plain data you can hash,
/// compare, sort and print (UE's FMeshDrawCommand). Built by the pass
/// processor from a [`super::MeshBatch`]; cached per static primitive and
/// pass, or built each frame for dynamic ones. See the module docs for
/// when two commands merge into one instanced draw.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct MeshDrawCommand {
    /// The graphics pipeline: pass shader + vertex factory + material
    /// shader, blend, two-sidedness, winding, depth state. Bound per draw;
    /// instances of one draw share it. Also the first draw-order group.
    pub pipeline: PipelineHandle,
    /// The vertex factory's streams (buffer, byte offset) in binding order.
    /// Instances of one draw read the same vertices, so the mesh (and LOD)
    /// must be the same.
    pub streams: [Option<(BufferHandle, u64)>; MAX_VERTEX_STREAMS],
    /// Binding slot of the renderer's per-instance primitive-id stream, when
    /// the vertex factory reads ids from it. `None`: the factory finds its
    /// primitive another way (the push constant), so the command cannot
    /// merge — a merged draw has one push constant for all its instances.
    pub id_stream_slot: Option<u32>,
    /// The section's range, instances or indirect arguments, as the batch
    /// gave them. Instances of one draw draw the same range, so the range
    /// must match; only single-instance, non-indirect elements merge (the
    /// merge sets the instance count to the number of primitives, and an
    /// indirect draw is decided by the GPU).
    pub element: MeshBatchElement,
    /// Index into the material table (push constant): the material's
    /// parameters. One push constant per draw, so one material per draw.
    pub material_index: u32,
    /// The material's shader bindings (UE's FMeshDrawShaderBindings): its
    /// bind group of textures and samplers (group 2), `None` for materials
    /// without textures. Shared by the materials with the same parent
    /// layout and textures, so equal materials give equal handles; commands
    /// merge only when it is equal (and the material index is).
    pub material_bindings: Option<BindGroupHandle>,
    /// The vertex factory's shader bindings (group 3; UE keeps them in
    /// FMeshDrawShaderBindings beside the material's): a persistent bind
    /// group the proxy made for its factory's data (the instanced factory's
    /// per-instance custom floats), `None` for factories without one
    /// (local, sprite). A primitive's own group makes its commands distinct,
    /// so they merge only with commands naming the same group; those draw
    /// instanced anyway and never merge (see rule 3).
    pub vertex_factory_bindings: Option<BindGroupHandle>,
    /// Whether the pipeline reads the draw push constants (material index,
    /// and the primitive id for factories without an id stream).
    pub push_constants: bool,
}

impl MeshDrawCommand {
    /// Whether several primitives' copies of this command can become one
    /// instanced draw (rule 3 of the merge contract).
    pub fn can_merge(&self) -> bool {
        self.id_stream_slot.is_some() && self.element.instance_count == 1 && self.element.indirect.is_none()
    }
}
