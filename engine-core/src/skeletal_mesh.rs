//! Skeletal meshes on the game side (UE's USkeletalMesh and
//! USkeletalMeshComponent): a mesh in its bind pose skinned to a skeleton,
//! and the component that plays animation clips on it.
//!
//! Each tick the component advances its [`AnimationPlayer`], evaluates the
//! pose (local transforms per joint, [`crate::animation`]), turns it into
//! model-space joint transforms and skinning matrices (no allocation once
//! warmed up: the pose, globals and matrices are reused), and computes its
//! bounds from the posed joints. It then marks itself dynamic-data and
//! transform dirty: the end-of-frame update moves one block of joint
//! matrices to its render proxy ([`renderer::SkeletalMeshSceneProxy`],
//! whose draw commands stay cached) and sends the new bounds with its
//! transform, so culling follows the animation. A component that stops
//! animating sends its pose once more, so the renderer's previous-frame
//! matrices (motion vectors) catch up and it shows no motion.
//!
//! Morph targets (`renderer::MorphTarget`) move vertices in the bind pose
//! before skinning; their weights are the pose's: a clip's weight
//! channels, or what the game set (`SkeletalMeshComponent::set_morph_weights`;
//! the mesh's defaults until then).
//!
//! Bounds: per joint, the farthest bind-pose vertex it influences, in the
//! joint's own space (its radius), grown by how far the morph targets can
//! move it. A posed vertex is a weighted average of its joints' transforms
//! of it, each within its joint's sphere, so the box around the posed
//! joints' spheres holds every skinned vertex.

use crate::animation::{AnimationClip, AnimationPlayer, JointTransform, Pose, Skeleton};
use crate::component::{Component, DirtyFlags, PrimitiveComponent, ProxyCreateContext};
use crate::error::{EngineError, Result};
use glam::{Mat4, Vec3};
use renderer::{
    Bounds, MaterialId, PrimitiveSceneProxy, SkeletalMeshSceneProxy, SkeletalPose, SkinnedMeshRenderData, StaticMeshLod, VertexInfluences,
};
use std::sync::Arc;

/// A skeletal mesh asset: render data in the bind pose, its skeleton, each
/// joint's rest transform and name, and material slots.
pub struct SkeletalMesh {
    pub name: String,
    /// One name per material slot (sections refer to slots).
    pub material_slots: Vec<String>,
    render_data: Arc<SkinnedMeshRenderData>,
    skeleton: Skeleton,
    rest: Pose,
    joint_names: Vec<String>,
    /// Per joint, the farthest bind-pose vertex it influences, in its own
    /// space (0: it influences none).
    joint_radii: Vec<f32>,
}

impl std::fmt::Debug for SkeletalMesh {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SkeletalMesh").field("name", &self.name).field("joints", &self.skeleton.len()).finish()
    }
}

/// A skeletal mesh's morph targets: per LOD its targets, and their default weights.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Morphs {
    pub targets: Vec<Vec<renderer::MorphTarget>>,
    pub default_weights: Vec<f32>,
}

/// One joint of a skeleton being built: its name, parent (an earlier
/// joint), rest transform and inverse bind matrix.
#[derive(Clone, Debug, PartialEq)]
pub struct JointDesc {
    pub name: String,
    pub parent: Option<u32>,
    pub rest: JointTransform,
    pub inverse_bind: Mat4,
}

impl SkeletalMesh {
    /// Validates and builds a skeletal mesh: `lods` as a static mesh's,
    /// `influences` per LOD per vertex (joints index `joints`), `joints`
    /// parents before children.
    ///
    /// Errors (nothing built): [`EngineError::InvalidMesh`] for geometry or
    /// influences the renderer refuses (a joint out of range, negative or
    /// non-finite weights — weights not summing to 1 are renormalized with a
    /// warning — more joints than `renderer::skeletal::MAX_SKIN_JOINTS`),
    /// [`EngineError::Animation`] for a parent after its child or a
    /// non-finite matrix; a non-invertible inverse bind matrix or rest
    /// transform is [`EngineError::InvalidMesh`].
    pub fn new(
        name: &str,
        lods: Vec<StaticMeshLod>,
        influences: Vec<Vec<VertexInfluences>>,
        joints: Vec<JointDesc>,
        material_slots: Vec<String>,
    ) -> Result<Arc<Self>> {
        let none = Morphs { targets: vec![Vec::new(); lods.len()], default_weights: Vec::new() };
        Self::with_morph_targets(name, lods, influences, none, joints, material_slots)
    }

    /// [`Self::new`] with morph targets (`renderer::MorphTarget`s per LOD,
    /// the same number in each) and their default weights (glTF's
    /// `mesh.weights`; missing ones 0): what the component shows until an
    /// animation or the game sets them. Errors as `new`, and
    /// [`EngineError::InvalidMesh`] for targets the renderer refuses or
    /// default weights that are more than the targets or not finite.
    pub fn with_morph_targets(
        name: &str,
        lods: Vec<StaticMeshLod>,
        influences: Vec<Vec<VertexInfluences>>,
        morphs: Morphs,
        joints: Vec<JointDesc>,
        material_slots: Vec<String>,
    ) -> Result<Arc<Self>> {
        let count = morphs.targets.first().map_or(0, Vec::len);
        if morphs.default_weights.len() > count || morphs.default_weights.iter().any(|w| !w.is_finite()) {
            return Err(EngineError::InvalidMesh(format!(
                "{name}: {} default morph weights for {count} targets",
                morphs.default_weights.len()
            )));
        }
        if let Some(j) = joints.iter().position(|j| j.inverse_bind.determinant().abs() < 1e-12 || !j.rest.to_mat4().is_finite()) {
            return Err(EngineError::InvalidMesh(format!("{name}: joint {j}'s inverse bind matrix or rest transform is not invertible")));
        }
        let skeleton = Skeleton::new(joints.iter().map(|j| j.parent).collect(), joints.iter().map(|j| j.inverse_bind).collect())?;
        let render_data = SkinnedMeshRenderData::with_morph_targets(lods, influences, joints.len() as u32, morphs.targets)
            .map_err(|e| EngineError::InvalidMesh(format!("{name}: {e}")))?;
        let joint_radii = joint_radii(&render_data, &skeleton);
        let mut weights = morphs.default_weights;
        weights.resize(count, 0.0);
        let rest = Pose::from_rest(&joints.iter().map(|j| j.rest).collect::<Vec<_>>()).with_morph_weights(&weights);
        let joint_names = joints.into_iter().map(|j| j.name).collect();
        Ok(Arc::new(Self { name: name.into(), material_slots, render_data, skeleton, rest, joint_names, joint_radii }))
    }

    /// The render data (bind pose and influences).
    pub fn render_data(&self) -> &Arc<SkinnedMeshRenderData> {
        &self.render_data
    }

    /// The skeleton (parents and inverse bind matrices).
    pub fn skeleton(&self) -> &Skeleton {
        &self.skeleton
    }

    /// The rest pose (each joint's local transform when not animated).
    pub fn rest_pose(&self) -> &Pose {
        &self.rest
    }

    /// The joints' names, by index.
    pub fn joint_names(&self) -> &[String] {
        &self.joint_names
    }

    /// The box around the spheres of the joints of `globals` (model-space
    /// joint transforms of a pose) that influence vertices: holds every
    /// vertex skinned by that pose (module docs).
    pub fn posed_bounds(&self, globals: &[Mat4]) -> Bounds {
        let (mut min, mut max) = (Vec3::splat(f32::MAX), Vec3::splat(f32::MIN));
        for (g, &r) in globals.iter().zip(&self.joint_radii).filter(|(_, &r)| r > 0.0) {
            let scale = g.x_axis.truncate().length().max(g.y_axis.truncate().length()).max(g.z_axis.truncate().length());
            let c = g.w_axis.truncate();
            min = min.min(c - r * scale);
            max = max.max(c + r * scale);
        }
        if min.x > max.x {
            return self.render_data.bind_pose_bounds();
        }
        Bounds::from_box(min, max)
    }
}

/// Per joint, the farthest bind-pose vertex (of every LOD) it influences,
/// in the joint's space (the inverse bind matrix applied), each vertex
/// grown by how far its morph targets can move it (weights in 0..=1).
fn joint_radii(render: &SkinnedMeshRenderData, skeleton: &Skeleton) -> Vec<f32> {
    let ibm = skeleton.inverse_bind_matrices();
    let mut radii = vec![0.0f32; skeleton.len()];
    for ((lod, inf), morphs) in render.mesh().lods().iter().zip(render.influences()).zip(render.morph_targets()) {
        for (k, (v, i)) in lod.vertices.iter().zip(inf).enumerate() {
            // Each morph target may move it by its delta (weights up to 1).
            let reach: f32 = morphs.iter().map(|m| Vec3::from(m.position_deltas[k]).length()).sum();
            for (&j, &w) in i.joints.iter().zip(&i.weights) {
                if w > 0.0 {
                    let local = ibm[j as usize].transform_point3(Vec3::from(v.position));
                    let scale = ibm[j as usize]
                        .x_axis
                        .truncate()
                        .length()
                        .max(ibm[j as usize].y_axis.truncate().length())
                        .max(ibm[j as usize].z_axis.truncate().length());
                    radii[j as usize] = radii[j as usize].max(local.length() + reach * scale);
                }
            }
        }
    }
    radii
}

/// A skeletal mesh component (UE's USkeletalMeshComponent): see the module docs.
pub struct SkeletalMeshComponent {
    mesh: Arc<SkeletalMesh>,
    clips: Vec<Arc<AnimationClip>>,
    player: Option<AnimationPlayer>,
    pose: Pose,
    /// The morph weights the game set (the mesh's defaults until it does):
    /// the pose's while the clip playing animates none.
    morph_weights: Vec<f32>,
    globals: Vec<Mat4>,
    matrices: Vec<Mat4>,
    bounds: Bounds,
    /// The pose changed since it was last sent.
    dirty: DirtyFlags,
    /// The last tick animated: the next tick that does not sends the pose once more.
    animated: bool,
}

impl SkeletalMeshComponent {
    /// A component showing `mesh` in its rest pose, playing nothing.
    pub fn new(mesh: Arc<SkeletalMesh>) -> Self {
        let mut c = Self {
            pose: mesh.rest.clone(),
            morph_weights: mesh.rest.morph_weights.clone(),
            mesh,
            clips: Vec::new(),
            player: None,
            globals: Vec::new(),
            matrices: Vec::new(),
            bounds: Bounds::from_box(Vec3::ZERO, Vec3::ZERO),
            dirty: DirtyFlags::NONE,
            animated: false,
        };
        c.pose_changed();
        c.dirty = DirtyFlags::NONE;
        c
    }

    /// The mesh shown.
    pub fn mesh(&self) -> &Arc<SkeletalMesh> {
        &self.mesh
    }

    /// Adds a clip it can play; returns its index. A clip animating a joint
    /// the skeleton does not have is refused (`EngineError::Animation`).
    pub fn add_clip(&mut self, clip: Arc<AnimationClip>) -> Result<usize> {
        clip.validate_for(self.mesh.skeleton.len())?;
        self.clips.push(clip);
        Ok(self.clips.len() - 1)
    }

    /// The clips it can play.
    pub fn clips(&self) -> &[Arc<AnimationClip>] {
        &self.clips
    }

    /// Plays clip `index` from its start, looping or not. An index it does
    /// not have is `EngineError::Animation` (`AnimationError::InvalidParameter`,
    /// "clip index") and nothing changes.
    pub fn play(&mut self, index: usize, looping: bool) -> Result<()> {
        let clip = self.clip(index)?;
        let mut player = AnimationPlayer::new(clip);
        player.set_looping(looping);
        self.player = Some(player);
        Ok(())
    }

    /// Cross-fades from what plays to clip `index` over `seconds` (plays it
    /// at once when nothing plays).
    pub fn cross_fade_to(&mut self, index: usize, seconds: f32) -> Result<()> {
        let clip = self.clip(index)?;
        match self.player.as_mut() {
            Some(p) => p.cross_fade_to(clip, seconds)?,
            None => self.player = Some(AnimationPlayer::new(clip)),
        }
        Ok(())
    }

    /// The player, for speed, seeking and looping.
    pub fn player_mut(&mut self) -> Option<&mut AnimationPlayer> {
        self.player.as_mut()
    }

    /// The player, if a clip plays.
    pub fn player(&self) -> Option<&AnimationPlayer> {
        self.player.as_ref()
    }

    /// Sets the morph targets' weights (one per target, in order; missing
    /// ones keep theirs), what the mesh shows until an animation that
    /// drives them plays. More weights than targets, or one that is not
    /// finite, is `EngineError::InvalidMesh` and changes nothing.
    pub fn set_morph_weights(&mut self, weights: &[f32]) -> Result<()> {
        let count = self.mesh.render_data.morph_target_count();
        if weights.len() > count || weights.iter().any(|w| !w.is_finite()) {
            return Err(EngineError::InvalidMesh(format!("{}: {} morph weights for {count} targets", self.mesh.name, weights.len())));
        }
        self.morph_weights.resize(count, 0.0);
        self.morph_weights[..weights.len()].copy_from_slice(weights);
        self.pose.morph_weights.clone_from(&self.morph_weights);
        self.dirty = self.dirty | DirtyFlags::DYNAMIC_DATA;
        Ok(())
    }

    /// The morph targets' weights of the current pose.
    pub fn morph_weights(&self) -> &[f32] {
        &self.pose.morph_weights
    }

    /// Stops playing: the current pose stays.
    pub fn stop(&mut self) {
        self.player = None;
    }

    /// The current pose's skinning matrices (one per joint).
    pub fn joint_matrices(&self) -> &[Mat4] {
        &self.matrices
    }

    /// The current pose's model-space joint transforms.
    pub fn joint_globals(&self) -> &[Mat4] {
        &self.globals
    }

    fn clip(&self, index: usize) -> Result<Arc<AnimationClip>> {
        self.clips
            .get(index)
            .cloned()
            .ok_or(EngineError::Animation(crate::animation::AnimationError::InvalidParameter { what: "clip index", value: index as f32 }))
    }

    /// Recomputes the globals, matrices and bounds from `self.pose`.
    fn pose_changed(&mut self) {
        let skeleton = &self.mesh.skeleton;
        // The pose has the skeleton's joints (it is sampled over the rest pose).
        if skeleton.global_transforms(&self.pose, &mut self.globals).is_ok() {
            let _ = skeleton.joint_matrices_from_globals(&self.globals, &mut self.matrices);
        }
        self.bounds = self.mesh.posed_bounds(&self.globals);
        self.dirty = self.dirty | DirtyFlags::DYNAMIC_DATA | DirtyFlags::TRANSFORM;
    }

    /// Advances the animation by `dt` and poses the mesh (what a tick does).
    pub fn advance(&mut self, dt: f32) {
        let Some(player) = self.player.as_mut() else {
            if std::mem::take(&mut self.animated) {
                // Once more: the renderer's previous pose catches up.
                self.dirty = self.dirty | DirtyFlags::DYNAMIC_DATA;
            }
            return;
        };
        player.advance(dt);
        if player.evaluate(&self.mesh.rest, &mut self.pose).is_ok() {
            if player.clip().morph_weight_count() == 0 {
                self.pose.morph_weights.clone_from(&self.morph_weights);
            }
            self.animated = true;
            self.pose_changed();
        }
    }
}

impl Component for SkeletalMeshComponent {
    fn tick(&mut self, dt: f32) -> DirtyFlags {
        self.advance(dt);
        DirtyFlags::NONE
    }

    fn wants_tick(&self) -> bool {
        self.player.is_some() || self.animated
    }

    fn as_primitive(&self) -> Option<&dyn PrimitiveComponent> {
        Some(self)
    }

    fn as_primitive_mut(&mut self) -> Option<&mut dyn PrimitiveComponent> {
        Some(self)
    }
}

impl PrimitiveComponent for SkeletalMeshComponent {
    fn create_scene_proxy(&self, ctx: &ProxyCreateContext<'_>) -> Option<Box<dyn PrimitiveSceneProxy>> {
        let slots = self.mesh.material_slots.len().max(1);
        let materials: Vec<MaterialId> =
            (0..slots).map(|i| ctx.settings.materials.get(i).copied().unwrap_or(MaterialId::DEFAULT)).collect();
        let pose = SkeletalPose { joint_matrices: self.matrices.clone(), morph_weights: self.pose.morph_weights.clone() };
        match SkeletalMeshSceneProxy::new(self.mesh.render_data.clone(), materials, pose) {
            Ok(p) => Some(Box::new(p.with_cast_shadow(ctx.settings.cast_shadow))),
            Err(e) => {
                log::warn!("skeletal mesh {}: not drawn: {e}", self.mesh.name);
                None
            }
        }
    }

    fn local_bounds(&self) -> Bounds {
        self.bounds
    }

    fn take_dirty(&mut self) -> DirtyFlags {
        std::mem::replace(&mut self.dirty, DirtyFlags::NONE)
    }

    /// One block of joint matrices, copied once into the box the render
    /// thread receives.
    fn dynamic_data(&mut self) -> Option<Box<dyn std::any::Any + Send>> {
        Some(Box::new(SkeletalPose { joint_matrices: self.matrices.clone(), morph_weights: self.pose.morph_weights.clone() }))
    }
}
