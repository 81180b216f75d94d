//! Skeletal meshes on the render side (UE's FSkeletalMeshRenderData,
//! FSkeletalMeshSceneProxy and FGPUSkinVertexFactory): a mesh in its bind
//! pose whose vertices each follow up to eight joints of a skeleton (four
//! unless a vertex uses more: glTF's `JOINTS_1`/`WEIGHTS_1`), skinned
//! on the GPU every frame from the joint matrices the game thread sends.
//!
//! The game side evaluates the pose (engine-core's animation) and sends
//! the joint matrices — model space × inverse bind, one `Mat4` per joint —
//! as the proxy's dynamic data ([`SkeletalPose`], moved, not copied). The
//! proxy writes them into its slot of one of the mesh's joint pages (this
//! frame's, then the previous frame's for motion vectors) with the frame's
//! other uploads; its mesh draw commands are built once when it is added
//! and **stay cached**: a new pose changes the buffer, never a command.
//! Every proxy of a page binds the same buffers, its slot found through
//! its primitive id, so identical skinned meshes with one material merge
//! into instanced draws as static meshes do (`joint_pages`). The skinning
//! itself is the vertex factory's ([`SKINNED_VERTEX_FACTORY`],
//! `skinned_vf.inc.wgsl`), so every pass — the depth prepass, shadows, the
//! base pass, velocity — skins the same way.
//!
//! Bounds: the proxy's local bounds are the bind pose's until the game
//! sends animated ones with the primitive's transform
//! (`RenderThread::update_primitive_transform_and_bounds`): culling uses
//! what the game computed from the posed joints.
//!
//! Morph targets ([`MorphTarget`]: per vertex a position and normal delta
//! at weight 1) apply in the bind pose before skinning, weighted by the
//! pose's `morph_weights`; the proxy lists only the targets weighed now or
//! in the previous frame, so an unmorphed frame costs a loop over nothing.

mod joint_pages;
mod proxy;
mod vertex_factory;

pub use joint_pages::{FIRST_PAGE_BYTES, MAX_PAGE_BYTES};
pub use proxy::{SkeletalMeshSceneProxy, SkeletalPose};
pub use vertex_factory::{SkinnedVertexFactory, SKINNED_VERTEX_FACTORY};

use crate::error::{RendererError, Result};
use crate::math::Bounds;
use crate::static_mesh::{StaticMeshLod, StaticMeshRenderData};
use joint_pages::{JointPages, JointSlot};
use rhi_vulkan::{BufferDesc, BufferHandle, BufferUsage, Device};
use std::sync::{Arc, Mutex};

/// The most joints a skeletal mesh may have: joint indices are 16 bits in
/// the vertex factory, and every joint costs two matrices (128 bytes) per
/// skinned primitive in its joint buffer.
pub const MAX_SKIN_JOINTS: u32 = 4096;

/// How far a vertex's weights may sum away from 1 before they are
/// renormalized with a warning (glTF requires a sum of 1; exporters round).
pub const WEIGHT_SUM_TOLERANCE: f32 = 2e-3;

/// The most joints that move one vertex: glTF's two sets of four
/// (`JOINTS_0`/`WEIGHTS_0` and `JOINTS_1`/`WEIGHTS_1`), Godot's eight. A
/// mesh whose vertices all use four or fewer is skinned with four.
pub const MAX_INFLUENCES: usize = 8;

/// One vertex's joints and weights: up to [`MAX_INFLUENCES`] influences
/// (unused ones weigh 0).
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct VertexInfluences {
    /// Joint indices into the skeleton.
    pub joints: [u16; MAX_INFLUENCES],
    /// Their weights: finite, not negative, summing to 1.
    pub weights: [f32; MAX_INFLUENCES],
}

impl VertexInfluences {
    /// Four influences; the other four weigh 0.
    pub fn four(joints: [u16; 4], weights: [f32; 4]) -> Self {
        let mut i = Self::default();
        i.joints[..4].copy_from_slice(&joints);
        i.weights[..4].copy_from_slice(&weights);
        i
    }

    /// Whether any of the influences past the first four weighs something.
    pub fn uses_more_than_four(&self) -> bool {
        self.weights[4..].iter().any(|&w| w != 0.0)
    }
}

/// The most morph targets a skeletal mesh may have.
pub const MAX_MORPH_TARGETS: usize = 64;

/// One morph target of one LOD (glTF's mesh target, UE's morph target):
/// per vertex, how far its position and normal move at weight 1.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct MorphTarget {
    /// Per vertex of the LOD, its position's move at weight 1.
    pub position_deltas: Vec<[f32; 3]>,
    /// Per vertex, its normal's change at weight 1 (empty: none).
    pub normal_deltas: Vec<[f32; 3]>,
}

/// A skeletal mesh's render data: its LODs in the bind pose (the local
/// vertex factory's vertices, shared with static meshes), per vertex of
/// each LOD its influences, and per LOD its morph targets (the same
/// number in every LOD).
pub struct SkinnedMeshRenderData {
    mesh: Arc<StaticMeshRenderData>,
    influences: Vec<Vec<VertexInfluences>>,
    morph_targets: Vec<Vec<MorphTarget>>,
    joint_count: u32,
    /// Influences the vertex factory reads per vertex: 4, or 8 when a vertex uses more than four.
    influences_per_vertex: u32,
    /// Per LOD, the joint-index, weight and morph-delta buffers (render thread).
    gpu: Mutex<Option<Arc<Vec<[BufferHandle; 3]>>>>,
    /// Its proxies' joint and morph slots (`joint_pages`).
    pages: Mutex<JointPages>,
}

impl std::fmt::Debug for SkinnedMeshRenderData {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SkinnedMeshRenderData").field("lods", &self.influences.len()).field("joints", &self.joint_count).finish()
    }
}

impl SkinnedMeshRenderData {
    /// Validates and builds the render data of `lods` (as a static mesh's)
    /// skinned by `influences` (one list per LOD, one entry per vertex) to
    /// a skeleton of `joint_count` joints.
    ///
    /// Errors ([`RendererError::InvalidMesh`], nothing built): a LOD the
    /// static mesh refuses; influences missing for a vertex; a joint index
    /// at or past `joint_count`; a weight that is negative or not finite,
    /// or weights summing to 0; no joints, or more than
    /// [`MAX_SKIN_JOINTS`]. Weights that sum away from 1 by more than
    /// [`WEIGHT_SUM_TOLERANCE`] are renormalized, with a warning.
    pub fn new(lods: Vec<StaticMeshLod>, influences: Vec<Vec<VertexInfluences>>, joint_count: u32) -> Result<Arc<Self>> {
        let none = vec![Vec::new(); lods.len()];
        Self::with_morph_targets(lods, influences, joint_count, none)
    }

    /// [`Self::new`] with morph targets: per LOD its targets (as many in
    /// every LOD, at most [`MAX_MORPH_TARGETS`]), each with a position and
    /// a normal delta per vertex of the LOD (an empty normal list: no
    /// normal change), all finite; otherwise [`RendererError::InvalidMesh`].
    pub fn with_morph_targets(
        lods: Vec<StaticMeshLod>,
        mut influences: Vec<Vec<VertexInfluences>>,
        joint_count: u32,
        mut morph_targets: Vec<Vec<MorphTarget>>,
    ) -> Result<Arc<Self>> {
        check_morph_targets(&lods, &mut morph_targets)?;
        if joint_count == 0 || joint_count > MAX_SKIN_JOINTS {
            return Err(RendererError::InvalidMesh(format!("{joint_count} joints: a skeleton has 1 to {MAX_SKIN_JOINTS}")));
        }
        if influences.len() != lods.len() {
            return Err(RendererError::InvalidMesh(format!("{} LODs, influences for {}", lods.len(), influences.len())));
        }
        let mut renormalized = 0;
        for (l, (lod, inf)) in lods.iter().zip(influences.iter_mut()).enumerate() {
            if inf.len() != lod.vertices.len() {
                return Err(RendererError::InvalidMesh(format!("LOD {l}: {} vertices, influences for {}", lod.vertices.len(), inf.len())));
            }
            for (v, i) in inf.iter_mut().enumerate() {
                renormalized += usize::from(
                    check_influences(i, joint_count).map_err(|e| RendererError::InvalidMesh(format!("LOD {l}, vertex {v}: {e}")))?,
                );
            }
        }
        if renormalized > 0 {
            log::warn!("skeletal mesh: {renormalized} vertices' weights did not sum to 1; renormalized");
        }
        let mesh = StaticMeshRenderData::new(lods)?;
        let eight = influences.iter().flatten().any(VertexInfluences::uses_more_than_four);
        let influences_per_vertex = if eight { 8 } else { 4 };
        let morphs = morph_targets.first().map_or(0, Vec::len) as u32;
        let pages = Mutex::new(JointPages::new(joint_count, morphs, influences_per_vertex / 4));
        Ok(Arc::new(Self { mesh, influences, morph_targets, joint_count, influences_per_vertex, gpu: Mutex::new(None), pages }))
    }

    /// Morph targets of each LOD (the same count in every one).
    pub fn morph_target_count(&self) -> usize {
        self.morph_targets.first().map_or(0, Vec::len)
    }

    /// Per LOD, its morph targets.
    pub fn morph_targets(&self) -> &[Vec<MorphTarget>] {
        &self.morph_targets
    }

    /// The bind-pose geometry.
    pub fn mesh(&self) -> &Arc<StaticMeshRenderData> {
        &self.mesh
    }

    /// Joints of the skeleton it is skinned to.
    pub fn joint_count(&self) -> u32 {
        self.joint_count
    }

    /// Influences the GPU reads per vertex: 4, or 8 when any vertex uses more than four.
    pub fn influences_per_vertex(&self) -> u32 {
        self.influences_per_vertex
    }

    /// Per LOD, per vertex, its influences (renormalized).
    pub fn influences(&self) -> &[Vec<VertexInfluences>] {
        &self.influences
    }

    /// The bind pose's local bounds.
    pub fn bind_pose_bounds(&self) -> Bounds {
        self.mesh.bounds()
    }

    /// A proxy starts using the GPU buffers (made on first use).
    pub(crate) fn acquire_gpu(&self, device: &Device) -> rhi_vulkan::Result<Arc<Vec<[BufferHandle; 3]>>> {
        self.mesh.acquire_gpu(device)?;
        let mut gpu = self.gpu.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(g) = gpu.as_ref() {
            return Ok(g.clone());
        }
        let mut made: Vec<[BufferHandle; 3]> = Vec::with_capacity(self.influences.len());
        for (inf, morphs) in self.influences.iter().zip(&self.morph_targets) {
            match lod_buffers(device, inf, morphs, self.influences_per_vertex as usize) {
                Ok(b) => made.push(b),
                Err(e) => {
                    made.iter().flatten().for_each(|&b| device.destroy_buffer(b));
                    self.mesh.release_user(device);
                    return Err(e);
                }
            }
        }
        let made = Arc::new(made);
        *gpu = Some(made.clone());
        Ok(made)
    }

    /// A slot in one of the mesh's joint pages for a proxy holding the GPU
    /// buffers `lods` ([`Self::acquire_gpu`]); its contents are the proxy's to write.
    pub(crate) fn allocate_joint_slot(&self, device: &Device, lods: &[[BufferHandle; 3]]) -> rhi_vulkan::Result<JointSlot> {
        self.pages.lock().unwrap_or_else(|p| p.into_inner()).allocate(device, lods)
    }

    /// Gives a proxy's slot back (before its [`Self::release_gpu`]).
    pub(crate) fn free_joint_slot(&self, device: &Device, slot: &JointSlot) {
        self.pages.lock().unwrap_or_else(|p| p.into_inner()).free(device, slot);
    }

    /// Joint pages that exist now (each is one instanced draw per pass and section).
    pub fn joint_pages(&self) -> usize {
        self.pages.lock().unwrap_or_else(|p| p.into_inner()).page_count()
    }

    /// A proxy stops using the GPU buffers: the last one frees them.
    pub(crate) fn release_gpu(&self, device: &Device) {
        if self.mesh.release_user(device) {
            if let Some(g) = self.gpu.lock().unwrap_or_else(|p| p.into_inner()).take() {
                g.iter().flatten().for_each(|&b| device.destroy_buffer(b));
            }
        }
    }
}

/// One LOD's storage buffers: joint indices and weights (`per_vertex` of
/// each per vertex, in fours), morph deltas (target-major, per vertex its
/// position then normal delta as vec4s; one zero element when it has
/// none, as a binding needs a buffer).
fn lod_buffers(
    device: &Device,
    inf: &[VertexInfluences],
    morphs: &[MorphTarget],
    per_vertex: usize,
) -> rhi_vulkan::Result<[BufferHandle; 3]> {
    let quads = |i: &VertexInfluences| {
        let (joints, weights) = (i.joints, i.weights);
        (0..per_vertex / 4).map(move |q| (joints, weights, q * 4))
    };
    let joints: Vec<[u32; 2]> = inf
        .iter()
        .flat_map(quads)
        .map(|(j, _, k)| [u32::from(j[k]) | u32::from(j[k + 1]) << 16, u32::from(j[k + 2]) | u32::from(j[k + 3]) << 16])
        .collect();
    let weights: Vec<[f32; 4]> = inf.iter().flat_map(quads).map(|(_, w, k)| [w[k], w[k + 1], w[k + 2], w[k + 3]]).collect();
    let mut deltas: Vec<[f32; 4]> = Vec::with_capacity(morphs.len() * inf.len() * 2);
    for m in morphs {
        for v in 0..inf.len() {
            let p = m.position_deltas[v];
            let n = m.normal_deltas.get(v).copied().unwrap_or([0.0; 3]);
            deltas.push([p[0], p[1], p[2], 0.0]);
            deltas.push([n[0], n[1], n[2], 0.0]);
        }
    }
    if deltas.is_empty() {
        deltas.push([0.0; 4]);
    }
    let storage = |label: &str, bytes: &[u8]| {
        device.create_buffer_init(&BufferDesc::gpu_only(label, bytes.len() as u64, BufferUsage::STORAGE), bytes)
    };
    let j = storage("skin joint indices", bytemuck::cast_slice(&joints))?;
    let w = match storage("skin weights", bytemuck::cast_slice(&weights)) {
        Ok(w) => w,
        Err(e) => {
            device.destroy_buffer(j);
            return Err(e);
        }
    };
    match storage("morph target deltas", bytemuck::cast_slice(&deltas)) {
        Ok(d) => Ok([j, w, d]),
        Err(e) => {
            device.destroy_buffer(j);
            device.destroy_buffer(w);
            Err(e)
        }
    }
}

/// Checks the morph targets against the LODs (module docs of
/// [`SkinnedMeshRenderData::with_morph_targets`]).
fn check_morph_targets(lods: &[StaticMeshLod], morphs: &mut [Vec<MorphTarget>]) -> Result<()> {
    let bad = |m: String| Err(RendererError::InvalidMesh(m));
    if morphs.len() != lods.len() {
        return bad(format!("{} LODs, morph targets for {}", lods.len(), morphs.len()));
    }
    let count = morphs.first().map_or(0, Vec::len);
    if count > MAX_MORPH_TARGETS {
        return bad(format!("{count} morph targets: at most {MAX_MORPH_TARGETS}"));
    }
    for (l, (lod, targets)) in lods.iter().zip(morphs.iter()).enumerate() {
        if targets.len() != count {
            return bad(format!("LOD {l}: {} morph targets, LOD 0 has {count}", targets.len()));
        }
        let n = lod.vertices.len();
        for (t, m) in targets.iter().enumerate() {
            if m.position_deltas.len() != n || !(m.normal_deltas.is_empty() || m.normal_deltas.len() == n) {
                return bad(format!("LOD {l}, morph target {t}: deltas for {} vertices, the LOD has {n}", m.position_deltas.len()));
            }
            if m.position_deltas.iter().chain(&m.normal_deltas).flatten().any(|c| !c.is_finite()) {
                return bad(format!("LOD {l}, morph target {t}: a delta is not finite"));
            }
        }
    }
    Ok(())
}

/// Checks one vertex's influences against a skeleton of `joint_count`;
/// renormalizes weights that do not sum to 1 (returns whether it did).
fn check_influences(i: &mut VertexInfluences, joint_count: u32) -> std::result::Result<bool, String> {
    for (k, (&j, &w)) in i.joints.iter().zip(&i.weights).enumerate() {
        if !w.is_finite() || w < 0.0 {
            return Err(format!("weight {k} is {w}"));
        }
        if w > 0.0 && u32::from(j) >= joint_count {
            return Err(format!("joint {j} of a skeleton of {joint_count}"));
        }
    }
    // An unused influence (weight 0) may name any joint; point it at 0.
    for (j, w) in i.joints.iter_mut().zip(&i.weights) {
        if *w == 0.0 && u32::from(*j) >= joint_count {
            *j = 0;
        }
    }
    let sum: f32 = i.weights.iter().sum();
    if sum <= 0.0 {
        return Err("its weights sum to 0".into());
    }
    if (sum - 1.0).abs() <= WEIGHT_SUM_TOLERANCE {
        return Ok(false);
    }
    for w in &mut i.weights {
        *w /= sum;
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shapes;

    fn one(joints: [u16; 4], weights: [f32; 4]) -> VertexInfluences {
        VertexInfluences::four(joints, weights)
    }

    #[test]
    fn influences_are_checked_and_renormalized() {
        let cube = shapes::cube(1.0);
        let n = cube.vertices.len();
        let good = vec![one([0, 1, 0, 0], [0.5, 0.5, 0.0, 0.0]); n];
        assert!(SkinnedMeshRenderData::new(vec![cube.clone()], vec![good.clone()], 2).is_ok());
        let bad = |inf: VertexInfluences, joints: u32| {
            let mut v = good.clone();
            v[3] = inf;
            SkinnedMeshRenderData::new(vec![cube.clone()], vec![v], joints)
        };
        assert!(matches!(bad(one([2, 0, 0, 0], [1.0, 0.0, 0.0, 0.0]), 2), Err(RendererError::InvalidMesh(_))), "joint out of range");
        assert!(matches!(bad(one([0, 1, 0, 0], [1.5, -0.5, 0.0, 0.0]), 2), Err(RendererError::InvalidMesh(_))), "negative weight");
        assert!(matches!(bad(one([0, 1, 0, 0], [f32::NAN, 1.0, 0.0, 0.0]), 2), Err(RendererError::InvalidMesh(_))), "NaN weight");
        assert!(matches!(bad(one([0, 0, 0, 0], [0.0; 4]), 2), Err(RendererError::InvalidMesh(_))), "no weight");
        assert!(matches!(bad(one([0, 0, 0, 0], [1.0, 0.0, 0.0, 0.0]), 0), Err(RendererError::InvalidMesh(_))), "no joints");
        assert!(matches!(bad(one([0, 0, 0, 0], [1.0, 0.0, 0.0, 0.0]), MAX_SKIN_JOINTS + 1), Err(RendererError::InvalidMesh(_))));
        assert!(SkinnedMeshRenderData::new(vec![cube.clone()], vec![good[..n - 1].to_vec()], 2).is_err(), "a vertex without influences");
        // Weights summing to 2 are halved; an unused influence's joint is not checked.
        let mesh = bad(one([1, 7, 0, 0], [1.0, 0.0, 1.0, 0.0]), 2).unwrap();
        assert_eq!(mesh.influences()[0][3], one([1, 0, 0, 0], [0.5, 0.0, 0.5, 0.0]));
    }
}
