//! The skeletal mesh component's proxy (UE's FSkeletalMeshSceneProxy):
//! the mesh's batches through the skinned vertex factory, cached once;
//! each new pose written into its slot of the mesh's joint pages.

use super::joint_pages::JointSlot;
use super::{SkinnedMeshRenderData, SKINNED_VERTEX_FACTORY};
use crate::material::MaterialId;
use crate::math::Bounds;
use crate::mesh_pass::MeshBatch;
use crate::scene::{PrimitiveSceneProxy, ProxyUpdateContext};
use glam::{Mat4, Vec4};
use rhi_vulkan::{BufferHandle, Device, RhiError};
use std::sync::Arc;

/// One frame's pose of a skeletal mesh: per joint, its model-space matrix
/// times its inverse bind matrix (the identity for every joint is the bind
/// pose), and its morph targets' weights. The proxy's dynamic data: the
/// game side moves it to the render thread each frame the pose changes.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct SkeletalPose {
    /// One matrix per joint of the mesh's skeleton.
    pub joint_matrices: Vec<Mat4>,
    /// One weight per morph target (empty: all 0). Only the targets whose
    /// weight is not 0 (now or in the previous frame) cost anything.
    pub morph_weights: Vec<f32>,
}

impl SkeletalPose {
    /// A pose of `joint_matrices`, no morph target weighed in.
    pub fn joints(joint_matrices: Vec<Mat4>) -> Self {
        Self { joint_matrices, morph_weights: Vec::new() }
    }
}

/// The proxy of a skeletal mesh component (module docs of `crate::skeletal`).
pub struct SkeletalMeshSceneProxy {
    mesh: Arc<SkinnedMeshRenderData>,
    materials: Vec<MaterialId>,
    cast_shadow: bool,
    custom_data: Vec4,
    /// The pose of the last update (the previous frame's next time).
    current: Vec<Mat4>,
    /// Its morph weights (one per target, 0 where none was given).
    weights: Vec<f32>,
    /// Its slot in the mesh's joint pages (while it holds GPU resources).
    gpu: Option<JointSlot>,
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
        let weights = morph_weights(&mesh, &pose.morph_weights);
        let (current, custom_data) = (pose.joint_matrices, Vec4::ZERO);
        Ok(Self { mesh, materials, cast_shadow: true, custom_data, current, weights, gpu: None, holds_gpu: false })
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
        [bytemuck::cast_slice::<Mat4, u8>(current), bytemuck::cast_slice(previous)].concat()
    }

    /// Takes a slot in the mesh's joint pages and writes the proxy's pose
    /// there (no motion: the previous frame's matrices are this frame's).
    fn create_gpu(&self, device: &Device, skin: &[[BufferHandle; 3]]) -> rhi_vulkan::Result<JointSlot> {
        let slot = self.mesh.allocate_joint_slot(device, skin)?;
        let written = device
            .write_buffer(slot.joints, slot.joint_offset(), &Self::joint_bytes(&self.current, &self.current))
            .and_then(|()| device.write_buffer(slot.morphs, slot.morph_offset(), &self.morph_bytes(&self.weights, &self.weights)));
        match written {
            Ok(()) => Ok(slot),
            Err(e) => {
                self.mesh.free_joint_slot(device, &slot);
                Err(e)
            }
        }
    }

    /// The slot's morph list (`morph_list` of `skinned_vf.inc.wgsl`): how
    /// many entries, then per target weighed now or in the previous frame
    /// its index, weight and previous weight; room for every target.
    fn morph_bytes(&self, now: &[f32], before: &[f32]) -> Vec<u8> {
        let active: Vec<[f32; 4]> = (0..now.len())
            .filter(|&t| now[t] != 0.0 || before.get(t).is_some_and(|&w| w != 0.0))
            .map(|t| [t as f32, now[t], before.get(t).copied().unwrap_or(0.0), 0.0])
            .collect();
        let mut list = vec![[active.len() as f32, 0.0, 0.0, 0.0]];
        list.extend(active);
        list.resize(self.mesh.morph_target_count() + 1, [0.0; 4]);
        bytemuck::cast_slice(&list).to_vec()
    }
}

/// One weight per morph target of `mesh` from `given` (missing ones 0).
fn morph_weights(mesh: &SkinnedMeshRenderData, given: &[f32]) -> Vec<f32> {
    (0..mesh.morph_target_count()).map(|t| given.get(t).copied().unwrap_or(0.0)).collect()
}

/// Why `pose` cannot skin `mesh`, if it cannot.
fn check_pose(mesh: &SkinnedMeshRenderData, pose: &SkeletalPose) -> Result<(), String> {
    if pose.morph_weights.len() > mesh.morph_target_count() {
        return Err(format!("{} morph weights for {} morph targets", pose.morph_weights.len(), mesh.morph_target_count()));
    }
    if pose.morph_weights.iter().any(|w| !w.is_finite()) {
        return Err("a morph weight is not finite".into());
    }
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
        // The page's group: equal for every proxy in the page, so their commands merge.
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

    /// Its slot in the mesh's joint page, where the skinned vertex factory
    /// finds its matrices and morph list.
    fn vertex_factory_data(&self) -> u32 {
        self.gpu.as_ref().map_or(0, |s| s.slot)
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
        if let Some(slot) = self.gpu.take() {
            self.mesh.free_joint_slot(device, &slot);
        }
        if std::mem::take(&mut self.holds_gpu) {
            self.mesh.release_gpu(device);
        }
    }

    /// A new pose ([`SkeletalPose`]): written into its joint slot at the
    /// start of the next frame, after the slot's current pose has moved to
    /// its previous-frame half on the GPU; no command changes.
    /// A pose of the wrong size or with a non-finite matrix is refused and
    /// the proxy keeps its pose.
    fn update_dynamic_data(&mut self, data: Box<dyn std::any::Any + Send>, ctx: &mut ProxyUpdateContext<'_>) -> rhi_vulkan::Result<()> {
        let pose = data.downcast::<SkeletalPose>().map_err(|_| RhiError::InvalidState("skeletal mesh proxy: not a SkeletalPose".into()))?;
        check_pose(&self.mesh, &pose).map_err(|e| RhiError::InvalidState(format!("skeletal mesh proxy: {e}")))?;
        let weights = morph_weights(&self.mesh, &pose.morph_weights);
        if let Some(slot) = &self.gpu {
            // The slot's current matrices become its previous ones on the
            // GPU; only the new pose is written (`joint_pages`).
            ctx.copy_within(slot.joints, slot.joint_offset(), slot.previous_offset(), slot.pose_bytes());
            ctx.upload(slot.joints, slot.joint_offset(), bytemuck::cast_slice::<Mat4, u8>(&pose.joint_matrices));
        }
        self.current = pose.joint_matrices;
        let previous_weights = std::mem::replace(&mut self.weights, weights);
        if let Some(slot) = &self.gpu {
            if self.mesh.morph_target_count() > 0 {
                ctx.upload(slot.morphs, slot.morph_offset(), self.morph_bytes(&self.weights, &previous_weights));
            }
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
