//! The GPU skin vertex factory (`skinned_vf.inc.wgsl`): the local
//! factory's streams and primitive-id stream, each vertex skinned by the
//! joint matrices and influences of bind group 3 (see the WGSL).

use crate::vertex_factory::{LocalVertexFactory, VertexFactoryType, LOCAL_VERTEX_FACTORY};
use rhi_vulkan::{BindGroupLayoutDesc, BindGroupLayoutEntry, BindingType, ShaderStages, VertexBufferLayout};

/// The GPU skin vertex factory (UE's FGPUSkinVertexFactory).
#[derive(Debug)]
pub struct SkinnedVertexFactory;

/// The one instance.
pub static SKINNED_VERTEX_FACTORY: SkinnedVertexFactory = SkinnedVertexFactory;

impl SkinnedVertexFactory {
    /// Group 3's layout: the joint matrices (this frame's, then the
    /// previous frame's), the joint indices, the weights, the morph
    /// targets' deltas and the weighed targets' list, all storage.
    pub fn bind_group_layout() -> BindGroupLayoutDesc {
        let entry = |binding| BindGroupLayoutEntry {
            binding,
            ty: BindingType::StorageBuffer { read_only: true },
            stages: ShaderStages::VERTEX | ShaderStages::FRAGMENT,
        };
        BindGroupLayoutDesc { entries: (0..5).map(entry).collect() }
    }
}

impl VertexFactoryType for SkinnedVertexFactory {
    fn name(&self) -> &'static str {
        "skinned"
    }

    fn wgsl(&self) -> &'static str {
        include_str!("../../shaders/skinned_vf.inc.wgsl")
    }

    /// The local factory's four streams (the bind-pose mesh).
    fn streams(&self) -> Vec<VertexBufferLayout> {
        <LocalVertexFactory as VertexFactoryType>::streams(&LOCAL_VERTEX_FACTORY)
    }

    fn primitive_id_location(&self) -> Option<u32> {
        Some(8)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mesh_pass::check_vertex_factory;
    use crate::mesh_pass::passes::PassTable;

    #[test]
    fn the_skinned_factory_compiles_in_every_pass() {
        check_vertex_factory(&SKINNED_VERTEX_FACTORY, &PassTable::default()).unwrap();
    }
}
