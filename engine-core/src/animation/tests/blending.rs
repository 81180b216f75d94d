//! Clips sampled into poses, and poses blended.

use glam::{Quat, Vec3};

use super::super::{AnimationClip, AnimationError, Channel, ChannelTarget, Interpolation, JointTransform, Pose};
use super::{assert_close, assert_rotation, assert_vec3, rot_z, rotation, translation};

fn rest() -> Pose {
    Pose::from_rest(&[JointTransform::new(Vec3::ONE, rot_z(10.0), Vec3::splat(2.0)), JointTransform::IDENTITY])
}

#[test]
fn sampling_a_clip_overwrites_only_what_it_animates() {
    let clip = AnimationClip::new(
        "lift",
        vec![
            translation(0, Interpolation::Linear, &[0.0, 4.0], &[Vec3::ZERO, Vec3::Y * 4.0]),
            rotation(1, Interpolation::Linear, &[0.5, 1.5], &[Quat::IDENTITY, rot_z(90.0)]),
        ],
    )
    .unwrap();
    assert_close(clip.duration(), 4.0);
    assert_eq!(clip.name(), "lift");
    let mut pose = rest();
    clip.sample_into(1.0, &mut pose).unwrap();
    assert_vec3(pose.joints[0].translation, Vec3::Y);
    assert_rotation(pose.joints[0].rotation, rot_z(10.0));
    assert_vec3(pose.joints[0].scale, Vec3::splat(2.0));
    assert_rotation(pose.joints[1].rotation, rot_z(45.0));
    assert_vec3(pose.joints[1].translation, Vec3::ZERO);
}

#[test]
fn morph_weight_channels_write_their_own_slots_and_grow_the_array_once() {
    let target = ChannelTarget::MorphWeights { node: 1, first: 2, count: 2 };
    let channel = Channel::new(target, Interpolation::Linear, vec![0.0, 1.0], vec![0.0, 1.0, 1.0, 0.0]).unwrap();
    let clip = AnimationClip::new("smile", vec![channel]).unwrap();
    assert_eq!(clip.morph_weight_count(), 4);
    let mut pose = rest().with_morph_weights(&[0.5]);
    clip.sample_into(0.5, &mut pose).unwrap();
    assert_eq!(pose.morph_weights, vec![0.5, 0.0, 0.5, 0.5]);
}

#[test]
fn half_way_between_two_clips_is_the_average_pose() {
    let from = AnimationClip::new(
        "from",
        vec![
            translation(0, Interpolation::Step, &[0.0], &[Vec3::ZERO]),
            rotation(0, Interpolation::Step, &[0.0], &[Quat::IDENTITY]),
            translation(1, Interpolation::Step, &[0.0], &[Vec3::new(-2.0, 0.0, 8.0)]),
        ],
    )
    .unwrap();
    let to = AnimationClip::new(
        "to",
        vec![
            translation(0, Interpolation::Step, &[0.0], &[Vec3::new(2.0, 4.0, 6.0)]),
            rotation(0, Interpolation::Step, &[0.0], &[rot_z(90.0)]),
            translation(1, Interpolation::Step, &[0.0], &[Vec3::new(2.0, 0.0, 0.0)]),
        ],
    )
    .unwrap();
    let (mut a, mut b, mut out) = (rest(), rest(), Pose::default());
    from.sample_into(0.0, &mut a).unwrap();
    to.sample_into(0.0, &mut b).unwrap();
    Pose::blend(&a, &b, 0.5, &mut out).unwrap();
    assert_vec3(out.joints[0].translation, Vec3::new(1.0, 2.0, 3.0));
    assert_rotation(out.joints[0].rotation, rot_z(45.0));
    assert_vec3(out.joints[0].scale, Vec3::splat(2.0));
    assert_vec3(out.joints[1].translation, Vec3::new(0.0, 0.0, 4.0));
    // The ends are the poses themselves; alpha is clamped.
    Pose::blend(&a, &b, 0.0, &mut out).unwrap();
    assert_eq!(out.joints[0].translation, Vec3::ZERO);
    Pose::blend(&a, &b, 7.0, &mut out).unwrap();
    assert_vec3(out.joints[0].translation, Vec3::new(2.0, 4.0, 6.0));
    assert_rotation(out.joints[0].rotation, rot_z(90.0));
}

#[test]
fn blend_takes_the_short_way_and_blend_toward_agrees_with_blend() {
    let a = Pose::from_rest(&[JointTransform::new(Vec3::ZERO, rot_z(-20.0), Vec3::ONE)]).with_morph_weights(&[1.0]);
    let b = Pose::from_rest(&[JointTransform::new(Vec3::X, -rot_z(60.0), Vec3::splat(3.0))]).with_morph_weights(&[0.0, 1.0]);
    let mut out = Pose::default();
    Pose::blend(&a, &b, 0.25, &mut out).unwrap();
    assert_rotation(out.joints[0].rotation, rot_z(0.0));
    assert_vec3(out.joints[0].scale, Vec3::splat(1.5));
    assert_eq!(out.morph_weights, vec![0.75, 0.25]);
    let mut in_place = a.clone();
    in_place.blend_toward(&b, 0.25).unwrap();
    assert_vec3(in_place.joints[0].translation, out.joints[0].translation);
    assert_rotation(in_place.joints[0].rotation, out.joints[0].rotation);
    assert_eq!(in_place.morph_weights, out.morph_weights);
}

#[test]
fn poses_of_different_skeletons_do_not_blend() {
    let (a, b) = (rest(), Pose::from_rest(&[JointTransform::IDENTITY]));
    let err = Pose::blend(&a, &b, 0.5, &mut Pose::default()).unwrap_err();
    assert!(matches!(err, AnimationError::LengthMismatch { expected: 2, got: 1, .. }));
    assert!(a.clone().blend_toward(&b, 0.5).is_err());
}
