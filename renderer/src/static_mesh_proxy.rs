//! The static mesh component's proxy: draws a shared
//! [`StaticMeshRenderData`] through the cached path (its batches are built
//! into mesh draw commands once, when added), the LOD chosen per view by
//! screen size, and offers its LODs as occluders.

use crate::material::MaterialId;
use crate::math::Bounds;
use crate::mesh_pass::MeshBatch;
use crate::scene::PrimitiveSceneProxy;
use crate::static_mesh::StaticMeshRenderData;
use glam::Vec4;
use rhi_vulkan::Device;
use std::sync::Arc;

/// The proxy of a static mesh component.
pub struct StaticMeshSceneProxy {
    mesh: Arc<StaticMeshRenderData>,
    /// Material per slot; missing slots use the default material.
    materials: Vec<MaterialId>,
    cast_shadow: bool,
    custom_data: Vec4,
    /// Whether `create_render_resources` succeeded (the mesh counts this proxy as a user).
    holds_gpu: bool,
}

impl StaticMeshSceneProxy {
    /// A proxy drawing `mesh` with `materials` (by section material slot),
    /// casting shadows, no custom data. Its draw distances are the scene's
    /// per-primitive settings ([`crate::PrimitiveRenderSettings`]).
    pub fn new(mesh: Arc<StaticMeshRenderData>, materials: Vec<MaterialId>) -> Self {
        Self { mesh, materials, cast_shadow: true, custom_data: Vec4::ZERO, holds_gpu: false }
    }

    /// The same proxy, casting shadows or not.
    pub fn with_cast_shadow(mut self, cast_shadow: bool) -> Self {
        self.cast_shadow = cast_shadow;
        self
    }

    /// The same proxy with custom primitive data `custom` (readable by materials).
    pub fn with_custom_data(mut self, custom: Vec4) -> Self {
        self.custom_data = custom;
        self
    }

    /// The mesh drawn.
    pub fn mesh(&self) -> &Arc<StaticMeshRenderData> {
        &self.mesh
    }
}

impl PrimitiveSceneProxy for StaticMeshSceneProxy {
    fn local_bounds(&self) -> Bounds {
        self.mesh.bounds
    }

    fn view_relevance(&self, _view: &crate::view::SceneView) -> crate::scene::ViewRelevance {
        // The material fields come from the batches' materials.
        crate::scene::ViewRelevance { draw: true, shadow: self.cast_shadow, static_relevance: true, ..Default::default() }
    }

    fn draw_static_elements(&self, out: &mut Vec<MeshBatch>) {
        let Some(gpu) = self.mesh.gpu() else { return };
        for (l, (lod, g)) in self.mesh.lods.iter().zip(gpu.iter()).enumerate() {
            let streams = [0, 1, 2, 3].map(|i| Some((g.vertices, g.offsets[i])));
            for s in &lod.sections {
                let material = self.materials.get(s.material_slot as usize).copied().unwrap_or(MaterialId::DEFAULT);
                let mut batch = MeshBatch::local(streams, g.indices, s.first_index, s.index_count, material);
                batch.lod_index = l as u8;
                batch.cast_shadow = self.cast_shadow;
                out.push(batch);
            }
        }
    }

    fn lod_screen_sizes(&self) -> &[f32] {
        &self.mesh.screen_sizes
    }

    /// The LOD's sections as drawn (`draw_static_elements` draws each with
    /// its slot's material), once the mesh's GPU buffers exist.
    fn occluder(&self, lod: u8) -> Option<crate::occlusion::OccluderMesh<'_>> {
        let lod = self.mesh.lods.get(lod as usize).filter(|_| self.holds_gpu)?;
        Some(crate::occlusion::OccluderMesh { lod, materials: &self.materials })
    }

    fn custom_primitive_data(&self) -> Vec4 {
        self.custom_data
    }

    fn create_render_resources(&mut self, device: &Device) -> rhi_vulkan::Result<()> {
        if !self.holds_gpu {
            self.mesh.acquire_gpu(device)?;
            self.holds_gpu = true;
        }
        Ok(())
    }

    fn release_render_resources(&mut self, device: &Device) {
        if std::mem::take(&mut self.holds_gpu) {
            self.mesh.release_user(device);
        }
    }

    fn memory_footprint(&self) -> usize {
        std::mem::size_of::<Self>() + self.materials.len() * 4
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}
