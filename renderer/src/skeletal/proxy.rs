//! The skeletal mesh component's proxy (UE's FSkeletalMeshSceneProxy):
//! the mesh's batches through the skinned vertex factory, cached once;
//! each new pose written into its joint buffer.

use super::{SkinnedMeshRenderData, SkinnedVertexFactory, SKINNED_VERTEX_FACTORY};
use crate::material::MaterialId;
use crate::math::Bounds;
use crate::mesh_pass::MeshBatch;
use crate::scene::{PrimitiveSceneProxy, ProxyUpdateContext};
use glam::{Mat4, Vec4};
use rhi_vulkan::{BindGroupHandle, BindingResource, BufferDesc, BufferHandle, BufferUsage, Device, RhiError};
use std::sync::Arc;

/// One frame's pose of a skeletal mesh: per joint, its model-space matrix
/// times its inverse bind matrix (the identity for every joint is the bind
/// pose). The proxy's dynamic data: the game side moves it to the render
/// thread each frame the pose changes.
#[derive(Clone, Debug, PartialEq)]
pub struct SkeletalPose {
    /// One matrix per joint of the mesh's skeleton.
    pub joint_matrices: Vec<Mat4>,
}

/// The GPU side of one proxy: its joint buffer and its bind group per LOD.
struct JointGpu {
    buffer: BufferHandle,
    groups: Vec<BindGroupHandle>,
}

/// The proxy of a skeletal mesh component (module docs of `crate::skeletal`).
pub struct SkeletalMeshSceneProxy {
    mesh: Arc<SkinnedMeshRenderData>,
    materials: Vec<MaterialId>,
    cast_shadow: bool,
    custom_data: Vec4,
    /// The pose of the last update (the previous frame's next time).
    current: Vec<Mat4>,
    gpu: Option<JointGpu>,
    /// Holds the mesh's GPU buffers.
    holds_gpu: bool,
}

impl SkeletalMeshSceneProxy {
    /// A proxy drawing `mesh` with `materials` (by section material slot,
    /// missing ones the default), casting shadows, in `pose` (its first
    /// frame has no motion). Errors: a pose whose joint count is not the
    /// mesh's, or with a non-finite matrix (`RendererError::InvalidMesh`).
    pub fn new(mesh: Arc<SkinnedMeshRenderData>, materials: Vec<MaterialId>, pose: SkeletalPose) -> crate::error::Result<Self> {
        check_pose(&mesh, &pose).map_err(crate::error::RendererError::InvalidMesh)?;
        Ok(Self { mesh, materials, cast_shadow: true, custom_data: Vec4::ZERO, current: pose.joint_matrices, gpu: None, holds_gpu: false })
    }

    /// The same proxy, casting shadows or not.
    pub fn with_cast_shadow(mut self, cast_shadow: bool) -> Self {
        self.cast_shadow = cast_shadow;
        self
    }

    /// The mesh drawn.
    pub fn mesh(&self) -> &Arc<SkinnedMeshRenderData> {
        &self.mesh
    }

    /// The joint buffer's bytes: this frame's matrices, then the previous frame's.
    fn joint_bytes(current: &[Mat4], previous: &[Mat4]) -> Vec<u8> {
        let mut bytes = Vec::with_capacity((current.len() + previous.len()) * 64);
        for m in current.iter().chain(previous) {
            bytes.extend_from_slice(bytemuck::bytes_of(&m.to_cols_array()));
        }
        bytes
    }

    fn create_gpu(&self, device: &Device, skin: &[[BufferHandle; 2]]) -> rhi_vulkan::Result<JointGpu> {
        let bytes = Self::joint_bytes(&self.current, &self.current);
        let buffer = device.create_buffer_init(&BufferDesc::gpu_only("skin joints", bytes.len() as u64, BufferUsage::STORAGE), &bytes)?;
        let mut groups = Vec::with_capacity(skin.len());
        for &[joints, weights] in skin {
            let entries =
                [(0, BindingResource::Buffer(buffer)), (1, BindingResource::Buffer(joints)), (2, BindingResource::Buffer(weights))];
            match device.create_bind_group_with_layout(&SkinnedVertexFactory::bind_group_layout(), &entries) {
                Ok(g) => groups.push(g),
                Err(e) => {
                    groups.into_iter().for_each(|g| device.destroy_bind_group(g));
                    device.destroy_buffer(buffer);
                    return Err(e);
                }
            }
        }
        Ok(JointGpu { buffer, groups })
    }
}

/// Why `pose` cannot skin `mesh`, if it cannot.
fn check_pose(mesh: &SkinnedMeshRenderData, pose: &SkeletalPose) -> Result<(), String> {
    if pose.joint_matrices.len() != mesh.joint_count() as usize {
        return Err(format!("a pose of {} joints for a skeleton of {}", pose.joint_matrices.len(), mesh.joint_count()));
    }
    if let Some(j) = pose.joint_matrices.iter().position(|m| !m.is_finite()) {
        return Err(format!("joint {j}'s matrix is not finite"));
    }
    Ok(())
}

impl PrimitiveSceneProxy for SkeletalMeshSceneProxy {
    fn local_bounds(&self) -> Bounds {
        self.mesh.bind_pose_bounds()
    }

    fn view_relevance(&self, _view: &crate::view::SceneView) -> crate::scene::ViewRelevance {
        crate::scene::ViewRelevance { draw: true, shadow: self.cast_shadow, static_relevance: true, ..Default::default() }
    }

    fn draw_static_elements(&self, out: &mut Vec<MeshBatch>) {
        let (Some(gpu), Some(joints)) = (self.mesh.mesh().gpu(), self.gpu.as_ref()) else { return };
        for (l, ((lod, g), &group)) in self.mesh.mesh().lods().iter().zip(gpu.iter()).zip(&joints.groups).enumerate() {
            let streams = [0, 1, 2, 3].map(|i| Some((g.vertices, g.offsets[i])));
            for s in &lod.sections {
                let material = self.materials.get(s.material_slot as usize).copied().unwrap_or(MaterialId::DEFAULT);
                let mut batch = MeshBatch::local(streams, g.indices, s.first_index, s.index_count, material);
                batch.vertex_factory = &SKINNED_VERTEX_FACTORY;
                batch.vertex_factory_bindings = Some(group);
                batch.lod_index = l as u8;
                batch.cast_shadow = self.cast_shadow;
                out.push(batch);
            }
        }
    }

    fn lod_screen_sizes(&self) -> &[f32] {
        &self.mesh.mesh().screen_sizes
    }

    fn custom_primitive_data(&self) -> Vec4 {
        self.custom_data
    }

    fn create_render_resources(&mut self, device: &Device) -> rhi_vulkan::Result<()> {
        if self.holds_gpu {
            return Ok(());
        }
        let skin = self.mesh.acquire_gpu(device)?;
        match self.create_gpu(device, &skin) {
            Ok(g) => {
                self.gpu = Some(g);
                self.holds_gpu = true;
                Ok(())
            }
            Err(e) => {
                self.mesh.release_gpu(device);
                Err(e)
            }
        }
    }

    fn release_render_resources(&mut self, device: &Device) {
        if let Some(g) = self.gpu.take() {
            g.groups.into_iter().for_each(|group| device.destroy_bind_group(group));
            device.destroy_buffer(g.buffer);
        }
        if std::mem::take(&mut self.holds_gpu) {
            self.mesh.release_gpu(device);
        }
    }

    /// A new pose ([`SkeletalPose`]): written with the previous one into
    /// the joint buffer at the start of the next frame; no command changes.
    /// A pose of the wrong size or with a non-finite matrix is refused and
    /// the proxy keeps its pose.
    fn update_dynamic_data(&mut self, data: Box<dyn std::any::Any + Send>, ctx: &mut ProxyUpdateContext<'_>) -> rhi_vulkan::Result<()> {
        let pose = data.downcast::<SkeletalPose>().map_err(|_| RhiError::InvalidState("skeletal mesh proxy: not a SkeletalPose".into()))?;
        check_pose(&self.mesh, &pose).map_err(|e| RhiError::InvalidState(format!("skeletal mesh proxy: {e}")))?;
        let previous = std::mem::replace(&mut self.current, pose.joint_matrices);
        if let Some(g) = &self.gpu {
            ctx.upload(g.buffer, 0, Self::joint_bytes(&self.current, &previous));
        }
        Ok(())
    }

    fn memory_footprint(&self) -> usize {
        std::mem::size_of::<Self>() + self.materials.len() * 4 + self.current.len() * 64
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}
