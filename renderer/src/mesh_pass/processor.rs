//! The mesh pass processor (UE's FMeshPassProcessor::AddMeshBatch): decides
//! whether a batch takes part in a pass, picks the pipeline and builds the
//! command, all from the pass's [`PassDesc`](crate::mesh_pass::passes::PassDesc) (see
//! `crate::mesh_pass::passes` for what each built-in pass takes and which material it uses).

use super::{MeshBatch, MeshDrawCommand, MeshPass, PassPipelineKey, PipelineLibrary};
use crate::material::{BlendMode, MaterialId, MaterialRegistry};
use crate::mesh_pass::passes::{PassMaterial, PassTarget};
use crate::vertex_factory::MAX_VERTEX_STREAMS;
use rhi_vulkan::{Device, Result};

/// Builds `batch`'s command for `pass`, or `None` when the pass filters it out.
pub fn build_mesh_draw_command(
    pass: MeshPass,
    batch: &MeshBatch,
    device: &Device,
    materials: &MaterialRegistry,
    pipelines: &PipelineLibrary,
) -> Result<Option<MeshDrawCommand>> {
    let material = materials.resolve(batch.material);
    let blend = material.blend_mode;
    let desc = pass.desc();
    if !(desc.takes)(batch, blend) {
        return Ok(None);
    }
    let default_material = match desc.material {
        PassMaterial::Own => false,
        PassMaterial::DefaultWhenOpaque => blend == BlendMode::Opaque,
        PassMaterial::Default => true,
    };
    let (material_index, shader_id, key_blend, material_bindings) = if default_material {
        (MaterialId::DEFAULT.slot(), materials.default_shader_id(), BlendMode::Opaque, None)
    } else {
        (material.id.slot(), material.shader, blend, material.bindings)
    };
    // Opaque depth-only draws fetch positions alone where the factory can
    // (the default material, no fragment stage: nothing else is read).
    let position_only = if desc.position_only && default_material { batch.vertex_factory.position_only() } else { None };
    let (vertex_factory, streams) = match position_only {
        Some(vf) => (vf, position_stream_only(&batch.streams)),
        None => (batch.vertex_factory, batch.streams),
    };
    // The depth prepass draws what `r.EarlyZPassMode` says this frame; the
    // base pass writes the depth of the rest.
    let (prepass_opaque, prepass_masked) = pipelines.prepass_draws();
    let prepassed = match blend {
        BlendMode::Opaque => prepass_opaque,
        BlendMode::Masked => prepass_masked,
        _ => false,
    };
    if desc.target == PassTarget::SceneDepth && !prepassed {
        return Ok(None);
    }
    let samples = match desc.target {
        PassTarget::SceneColor | PassTarget::SceneDepth => pipelines.scene_color_samples(),
        PassTarget::ShadowMap => 1,
    };
    let key = PassPipelineKey {
        pass,
        vertex_factory: vertex_factory.name(),
        material_shader: shader_id,
        blend: key_blend,
        two_sided: material.two_sided,
        reverse_culling: batch.reverse_culling,
        samples,
        velocity: desc.target == PassTarget::SceneDepth && desc.velocity.is_some() && pipelines.velocity(),
        depth_write: desc.depth.write || (desc.depth.write_where_not_prepassed && !prepassed),
        alpha_to_coverage: key_blend == BlendMode::Masked && samples > 1 && desc.target == PassTarget::SceneColor,
    };
    let (pipeline, push_constants) = pipelines.get(device, key, vertex_factory, materials)?;
    let id_stream_slot = vertex_factory.primitive_id_location().map(|_| vertex_factory.streams().len() as u32);
    Ok(Some(MeshDrawCommand {
        pipeline,
        streams,
        id_stream_slot,
        element: batch.element,
        material_index,
        material_bindings,
        vertex_factory_bindings: batch.vertex_factory_bindings,
        push_constants,
    }))
}

/// A batch's streams with only stream 0 (the positions) kept.
fn position_stream_only(
    streams: &[Option<(rhi_vulkan::BufferHandle, u64)>; MAX_VERTEX_STREAMS],
) -> [Option<(rhi_vulkan::BufferHandle, u64)>; MAX_VERTEX_STREAMS] {
    let mut only = [None; MAX_VERTEX_STREAMS];
    only[0] = streams[0];
    only
}
