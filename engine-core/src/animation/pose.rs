//! [`JointTransform`] and [`Pose`]: the per-node local transforms (and morph
//! weights) that clips are sampled into and blended.

use glam::{Mat4, Quat, Vec3};

use super::error::AnimationError;
use super::interpolate::slerp_shortest;

/// A node's transform relative to its parent, split into translation,
/// rotation and scale as glTF stores it, because that is what animation
/// channels animate and what blends correctly (blending matrices would
/// shear and shrink).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct JointTransform {
    /// Offset from the parent, in the parent's space.
    pub translation: Vec3,
    /// Rotation relative to the parent; a unit quaternion.
    pub rotation: Quat,
    /// Scale along the node's own axes, applied first.
    pub scale: Vec3,
}

impl JointTransform {
    /// No translation, no rotation, unit scale: a node that sits exactly on its parent.
    pub const IDENTITY: Self = Self { translation: Vec3::ZERO, rotation: Quat::IDENTITY, scale: Vec3::ONE };

    /// Builds a transform from its three parts.
    pub fn new(translation: Vec3, rotation: Quat, scale: Vec3) -> Self {
        Self { translation, rotation, scale }
    }

    /// The matrix `T * R * S` (scale first, then rotate, then translate),
    /// glTF's order for a node's local matrix.
    pub fn to_mat4(&self) -> Mat4 {
        Mat4::from_scale_rotation_translation(self.scale, self.rotation, self.translation)
    }

    /// Interpolates from `self` (`alpha = 0`) to `other` (`alpha = 1`):
    /// lerp for translation and scale, shortest-path slerp for rotation so
    /// the angle advances uniformly.
    pub fn blend(&self, other: &Self, alpha: f32) -> Self {
        Self {
            translation: self.translation.lerp(other.translation, alpha),
            rotation: slerp_shortest(self.rotation, other.rotation, alpha),
            scale: self.scale.lerp(other.scale, alpha),
        }
    }
}

impl Default for JointTransform {
    fn default() -> Self {
        Self::IDENTITY
    }
}

/// One frame's local transform for every animated node, plus morph weights.
///
/// A pose is meant to be kept and reused: sampling and blending overwrite
/// it in place, so once its vectors have grown to size a frame allocates
/// nothing. The joint index of a [`super::ChannelTarget`] indexes `joints`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Pose {
    /// Local transform per node, indexed by node (joint) number.
    pub joints: Vec<JointTransform>,
    /// Every morphed mesh's weights in one flat array; a morph-weights
    /// channel writes its own `first..first + count` range.
    pub morph_weights: Vec<f32>,
}

impl Pose {
    /// A pose holding the rest (bind-time) transforms and no morph weights.
    /// Sampling a clip overwrites only what it animates, so the rest pose
    /// supplies every property the clip leaves alone.
    pub fn from_rest(rest: &[JointTransform]) -> Self {
        Self { joints: rest.to_vec(), morph_weights: Vec::new() }
    }

    /// Sets the default morph weights (glTF `mesh.weights`), which unanimated
    /// weights keep.
    pub fn with_morph_weights(mut self, weights: &[f32]) -> Self {
        self.morph_weights = weights.to_vec();
        self
    }

    /// How many joints the pose holds.
    pub fn len(&self) -> usize {
        self.joints.len()
    }

    /// Whether the pose holds no joints.
    pub fn is_empty(&self) -> bool {
        self.joints.is_empty()
    }

    /// Makes `self` a copy of `source`, reusing `self`'s buffers: no
    /// allocation once they are large enough (unlike `*self = source.clone()`).
    pub fn copy_from(&mut self, source: &Pose) {
        self.joints.clone_from(&source.joints);
        self.morph_weights.clone_from(&source.morph_weights);
    }

    /// Writes into `out` the blend from `a` (`alpha = 0`) to `b`
    /// (`alpha = 1`): lerp for translations, scales and weights, shortest-path
    /// slerp for rotations, so `alpha = 0.5` is the exact average (half the
    /// angle, not nlerp's approximation). `alpha` is clamped to `[0, 1]`
    /// (NaN counts as 0).
    ///
    /// `a` and `b` must have the same joint count. Morph weights present in
    /// only one pose blend against 0, the glTF default; `out` is resized
    /// (allocating only the first time it grows).
    pub fn blend(a: &Pose, b: &Pose, alpha: f32, out: &mut Pose) -> Result<(), AnimationError> {
        check_same_len(a, b)?;
        let alpha = clamp_alpha(alpha);
        out.joints.clear();
        out.joints.extend(a.joints.iter().zip(&b.joints).map(|(ja, jb)| ja.blend(jb, alpha)));
        let n = a.morph_weights.len().max(b.morph_weights.len());
        out.morph_weights.clear();
        out.morph_weights.extend((0..n).map(|i| lerp(weight(&a.morph_weights, i), weight(&b.morph_weights, i), alpha)));
        Ok(())
    }

    /// Blends `self` toward `other` in place: `self = blend(self, other, alpha)`.
    /// The player uses this to mix two clips with one scratch pose instead of two.
    pub fn blend_toward(&mut self, other: &Pose, alpha: f32) -> Result<(), AnimationError> {
        check_same_len(self, other)?;
        let alpha = clamp_alpha(alpha);
        for (joint, target) in self.joints.iter_mut().zip(&other.joints) {
            *joint = joint.blend(target, alpha);
        }
        if self.morph_weights.len() < other.morph_weights.len() {
            self.morph_weights.resize(other.morph_weights.len(), 0.0);
        }
        for (i, w) in self.morph_weights.iter_mut().enumerate() {
            *w = lerp(*w, weight(&other.morph_weights, i), alpha);
        }
        Ok(())
    }
}

/// Refuses to blend poses of different skeletons.
fn check_same_len(a: &Pose, b: &Pose) -> Result<(), AnimationError> {
    if a.joints.len() == b.joints.len() {
        Ok(())
    } else {
        Err(AnimationError::LengthMismatch { what: "joints of the poses to blend", expected: a.joints.len(), got: b.joints.len() })
    }
}

/// `alpha` limited to `[0, 1]`, NaN mapped to 0 so a bad weight cannot poison a pose.
fn clamp_alpha(alpha: f32) -> f32 {
    if alpha > 0.0 {
        alpha.min(1.0)
    } else {
        0.0
    }
}

/// Weight `i`, or 0 (glTF's default weight) past the end.
fn weight(weights: &[f32], i: usize) -> f32 {
    weights.get(i).copied().unwrap_or(0.0)
}

fn lerp(a: f32, b: f32, t: f32) -> f32 {
    a + (b - a) * t
}
