//! [`Skeleton`]: the joint hierarchy and inverse bind matrices that turn a
//! [`Pose`] of local transforms into model-space and skinning matrices.

use glam::Mat4;

use super::error::AnimationError;
use super::pose::Pose;

/// A skin's joint hierarchy and inverse bind matrices (glTF `skin.joints`
/// and `skin.inverseBindMatrices`), validated once so per-frame matrix
/// computation checks nothing and costs one matrix product per joint.
///
/// Joint `i` of the skeleton is joint `i` of the poses it is used with.
/// Parents come before their children (`parents[i] < i`), so a single
/// forward pass finds every parent's model-space transform ready. glTF does
/// not guarantee this order for `skin.joints`; the importer sorts joints
/// topologically (and remaps channel targets) before building a skeleton.
#[derive(Debug, Clone, PartialEq)]
pub struct Skeleton {
    parents: Vec<Option<u32>>,
    inverse_bind: Vec<Mat4>,
}

impl Skeleton {
    /// Builds a skeleton from each joint's parent (`None` for a root) and
    /// inverse bind matrix (the inverse of the joint's model-space transform
    /// at bind time, mapping mesh vertices into the joint's space).
    ///
    /// Refuses a parent that does not come before its child
    /// ([`AnimationError::ParentAfterChild`], which also rules out cycles and
    /// out-of-range parents), arrays of different lengths, and non-finite
    /// matrices.
    pub fn new(parents: Vec<Option<u32>>, inverse_bind: Vec<Mat4>) -> Result<Self, AnimationError> {
        if parents.len() != inverse_bind.len() {
            return Err(AnimationError::LengthMismatch { what: "inverse bind matrices", expected: parents.len(), got: inverse_bind.len() });
        }
        validate_parents(&parents)?;
        if let Some(joint) = inverse_bind.iter().position(|m| !m.is_finite()) {
            return Err(AnimationError::NonFiniteMatrix { joint });
        }
        Ok(Self { parents, inverse_bind })
    }

    /// How many joints the skeleton has.
    pub fn len(&self) -> usize {
        self.parents.len()
    }

    /// Whether the skeleton has no joints.
    pub fn is_empty(&self) -> bool {
        self.parents.is_empty()
    }

    /// Each joint's parent, `None` for roots.
    pub fn parents(&self) -> &[Option<u32>] {
        &self.parents
    }

    /// Each joint's inverse bind matrix.
    pub fn inverse_bind_matrices(&self) -> &[Mat4] {
        &self.inverse_bind
    }

    /// Writes each joint's model-space (global) transform for `pose` into
    /// `out`: `global(j) = global(parent(j)) * local(j)`. Useful on its own
    /// for bounds, attachments and debug drawing. `out` is cleared and
    /// refilled, so it allocates only while its capacity is below the joint count.
    pub fn global_transforms(&self, pose: &Pose, out: &mut Vec<Mat4>) -> Result<(), AnimationError> {
        self.check_pose(pose)?;
        out.clear();
        for (local, parent) in pose.joints.iter().zip(&self.parents) {
            let local = local.to_mat4();
            let global = match *parent {
                Some(p) => out[p as usize] * local,
                None => local,
            };
            out.push(global);
        }
        Ok(())
    }

    /// Writes the skinning matrices for `pose` into `out`:
    /// `global(j) * inverse_bind(j)`, which maps a bind-pose vertex to where
    /// joint `j` now carries it (identity in the bind pose). One product per
    /// joint for the globals and one for the inverse binds; no allocation
    /// once `out` has the capacity.
    pub fn joint_matrices(&self, pose: &Pose, out: &mut Vec<Mat4>) -> Result<(), AnimationError> {
        self.global_transforms(pose, out)?;
        for (m, inverse_bind) in out.iter_mut().zip(&self.inverse_bind) {
            *m *= *inverse_bind;
        }
        Ok(())
    }

    /// Skinning matrices from global transforms already computed with
    /// [`Skeleton::global_transforms`], for callers that need both without
    /// computing the hierarchy twice.
    pub fn joint_matrices_from_globals(&self, globals: &[Mat4], out: &mut Vec<Mat4>) -> Result<(), AnimationError> {
        if globals.len() != self.len() {
            return Err(AnimationError::LengthMismatch { what: "global transforms", expected: self.len(), got: globals.len() });
        }
        out.clear();
        out.extend(globals.iter().zip(&self.inverse_bind).map(|(g, ib)| *g * *ib));
        Ok(())
    }

    /// The inverse bind matrices that make `rest` the bind pose: the inverse
    /// of each joint's model-space rest transform. For skeletons built
    /// without a glTF `inverseBindMatrices` accessor (glTF's default is
    /// identity, which only suits joints at the origin) and for tests.
    pub fn inverse_binds_for(parents: &[Option<u32>], rest: &Pose) -> Result<Vec<Mat4>, AnimationError> {
        let skeleton = Self::new(parents.to_vec(), vec![Mat4::IDENTITY; parents.len()])?;
        let mut globals = Vec::with_capacity(parents.len());
        skeleton.global_transforms(rest, &mut globals)?;
        Ok(globals.iter().map(Mat4::inverse).collect())
    }

    /// Refuses a pose with a different joint count.
    fn check_pose(&self, pose: &Pose) -> Result<(), AnimationError> {
        if pose.joints.len() == self.parents.len() {
            Ok(())
        } else {
            Err(AnimationError::LengthMismatch {
                what: "pose joints for the skeleton",
                expected: self.parents.len(),
                got: pose.joints.len(),
            })
        }
    }
}

/// Checks that every parent index is smaller than its child's.
fn validate_parents(parents: &[Option<u32>]) -> Result<(), AnimationError> {
    for (joint, parent) in parents.iter().enumerate() {
        if let Some(p) = *parent {
            if p as usize >= joint {
                return Err(AnimationError::ParentAfterChild { joint: joint as u32, parent: p });
            }
        }
    }
    Ok(())
}
