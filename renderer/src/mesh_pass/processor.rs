//! Mesh pass processors (UE's FMeshPassProcessor::AddMeshBatch): decide
//! whether a batch takes part in a pass, pick the pipeline and build the
//! command.
//!
//! | pass | takes | material used |
//! | --- | --- | --- |
//! | depth prepass | opaque, masked | opaque: the default (so every opaque primitive of a mesh merges); masked: its own, to discard |
//! | shadow depth | opaque, masked that cast shadows | as the depth prepass |
//! | base | opaque, masked | its own |
//! | translucency | translucent, additive | its own |
//! | wireframe | everything | none (flat color) |

use super::{MeshBatch, MeshDrawCommand, MeshPass, PassPipelineKey, PipelineLibrary};
use crate::material::{BlendMode, MaterialId, MaterialRegistry};
use rhi_vulkan::{Device, Result};

/// Builds `batch`'s command for `pass`, or `None` when the pass filters it out.
pub fn build_mesh_draw_command(
    pass: MeshPass,
    batch: &MeshBatch,
    device: &Device,
    materials: &MaterialRegistry,
    pipelines: &PipelineLibrary,
) -> Result<Option<MeshDrawCommand>> {
    let (material_id, material) = materials.resolve(batch.material);
    let blend = material.blend_mode;
    let takes = match pass {
        MeshPass::DepthPrepass => !blend.is_translucent(),
        MeshPass::ShadowDepth => !blend.is_translucent() && batch.cast_shadow,
        MeshPass::Base => !blend.is_translucent(),
        MeshPass::Translucency => blend.is_translucent(),
        MeshPass::Wireframe => true,
    };
    if !takes {
        return Ok(None);
    }
    let depth_only = matches!(pass, MeshPass::DepthPrepass | MeshPass::ShadowDepth);
    let (material_index, shader_id, key_blend) = if (depth_only && blend == BlendMode::Opaque) || pass == MeshPass::Wireframe {
        (MaterialId::DEFAULT.slot(), materials.default_shader_id(), BlendMode::Opaque)
    } else {
        (material_id.slot(), materials.shader_id(material_id), blend)
    };
    let key = PassPipelineKey {
        pass,
        vertex_factory: batch.vertex_factory.name(),
        material_shader: shader_id,
        blend: key_blend,
        two_sided: material.two_sided,
        reverse_culling: batch.reverse_culling,
    };
    let (pipeline, push_constants) = pipelines.get(device, key, batch.vertex_factory, materials)?;
    let id_stream_slot = batch.vertex_factory.primitive_id_location().map(|_| batch.vertex_factory.streams().len() as u32);
    Ok(Some(MeshDrawCommand {
        pipeline,
        streams: batch.streams,
        id_stream_slot,
        index_buffer: batch.index_buffer,
        first_index: batch.first_index,
        count: batch.count,
        base_vertex: batch.base_vertex,
        instance_count: batch.instance_count,
        indirect: batch.indirect,
        material_index,
        push_constants,
    }))
}
