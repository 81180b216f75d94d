//! Skeletal animation evaluated on the CPU (the game thread), after glTF 2.0
//! animations and UE's animation sequences: the foundation the glTF
//! importer's animations are built on.
//!
//! ## The pieces, bottom up
//! - [`Channel`]: one animated property of one node ([`ChannelTarget`]:
//!   translation, rotation, scale or morph weights) with its key times,
//!   output values and [`Interpolation`] (step, linear, cubic spline).
//!   [`Channel::new`] validates the raw accessor data exactly as glTF
//!   requires, so sampling never fails.
//! - [`AnimationClip`]: the channels of one glTF animation on one timeline;
//!   [`AnimationClip::sample_into`] writes them into a [`Pose`].
//! - [`Pose`]: a local [`JointTransform`] per node plus a flat array of
//!   morph weights; [`Pose::blend`] mixes two of them.
//! - [`AnimationPlayer`]: a playhead with speed, looping, seeking and
//!   cross-fades, clips shared as `Arc<AnimationClip>`.
//! - [`Skeleton`]: the joint hierarchy and inverse bind matrices that turn a
//!   pose into model-space transforms and skinning matrices.
//!
//! ## Design
//! - **Sampling follows glTF 2.0 Appendix C.** Before the first key holds
//!   the first value, after the last the last; step holds the key at or
//!   before the time; linear lerps vectors and weights and slerps rotations
//!   along the shorter arc; cubic splines are Hermite curves whose stored
//!   tangents are scaled by the key interval, rotations renormalized
//!   afterward. Keys are found by binary search: O(log keys) per channel.
//! - **Validate once, sample freely.** Times, value counts, finiteness and
//!   quaternion lengths are checked when a channel is built, node ranges
//!   when a clip is bound ([`AnimationClip::validate_for`]), the hierarchy
//!   when a skeleton is built; the per-frame paths check only counts.
//! - **Local transforms stay decomposed** (translation, rotation, scale)
//!   until the skeleton composes them, because that is what channels
//!   animate and what blends without shearing.
//! - **Blending uses slerp**, not nlerp, so half way between two rotations
//!   is exactly the half angle, and always takes the shorter arc.
//! - **No allocation per frame.** Poses, the player's scratch pose and
//!   matrix vectors are caller-owned or player-owned buffers overwritten in
//!   place; once they have grown to size, sampling, blending, evaluating
//!   and computing matrices allocate nothing.
//! - **Errors are typed** ([`AnimationError`]) and name the bad index, so
//!   the importer can report exactly which accessor element is wrong.
//!
//! ## A frame
//! ```
//! # use std::sync::Arc;
//! # use glam::{Quat, Vec3};
//! # use engine_core::animation::*;
//! let rest = Pose::from_rest(&[JointTransform::IDENTITY, JointTransform::new(Vec3::Y, Quat::IDENTITY, Vec3::ONE)]);
//! let walk = Channel::new(ChannelTarget::Translation(0), Interpolation::Linear, vec![0.0, 1.0], vec![0.0, 0.0, 0.0, 2.0, 0.0, 0.0])?;
//! let clip = Arc::new(AnimationClip::new("walk", vec![walk])?);
//! clip.validate_for(rest.len())?;
//! let skeleton = Skeleton::new(vec![None, Some(0)], Skeleton::inverse_binds_for(&[None, Some(0)], &rest)?)?;
//!
//! let mut player = AnimationPlayer::new(clip);
//! let (mut pose, mut matrices) = (Pose::default(), Vec::new());
//! player.advance(0.5);
//! player.evaluate(&rest, &mut pose)?;
//! skeleton.joint_matrices(&pose, &mut matrices)?;
//! assert!((pose.joints[0].translation - Vec3::X).length() < 1e-6);
//! # Ok::<(), AnimationError>(())
//! ```

mod channel;
mod clip;
mod error;
mod interpolate;
mod player;
mod pose;
mod skeleton;

pub use channel::{Channel, ChannelTarget, Interpolation};
pub use clip::AnimationClip;
pub use error::AnimationError;
pub use player::AnimationPlayer;
pub use pose::{JointTransform, Pose};
pub use skeleton::Skeleton;

#[cfg(test)]
mod tests;
