//! Bad data is refused with the typed error that names it.

use glam::{Mat4, Quat, Vec3};

use super::super::{AnimationClip, AnimationError, Channel, ChannelTarget, Interpolation, JointTransform, Pose, Skeleton};
use super::{assert_rotation, flat3, translation};

fn translation_err(interpolation: Interpolation, times: Vec<f32>, values: Vec<f32>) -> AnimationError {
    Channel::new(ChannelTarget::Translation(0), interpolation, times, values).unwrap_err()
}

#[test]
fn times_must_be_present_finite_non_negative_and_strictly_increasing() {
    let linear = Interpolation::Linear;
    assert_eq!(translation_err(linear, vec![], vec![]), AnimationError::EmptyTimes);
    assert_eq!(translation_err(linear, vec![0.0, 1.0, 1.0], vec![0.0; 9]), AnimationError::TimesNotIncreasing { index: 2 });
    assert_eq!(translation_err(linear, vec![0.0, 2.0, 1.0], vec![0.0; 9]), AnimationError::TimesNotIncreasing { index: 2 });
    assert_eq!(translation_err(linear, vec![0.0, f32::NAN], vec![0.0; 6]), AnimationError::NonFiniteTime { index: 1 });
    assert_eq!(translation_err(linear, vec![0.0, f32::INFINITY], vec![0.0; 6]), AnimationError::NonFiniteTime { index: 1 });
    assert_eq!(translation_err(linear, vec![-0.5, 1.0], vec![0.0; 6]), AnimationError::NegativeTime { time: -0.5 });
}

#[test]
fn output_counts_must_match_keys_components_and_interpolation() {
    assert_eq!(
        translation_err(Interpolation::Linear, vec![0.0, 1.0], vec![0.0; 5]),
        AnimationError::OutputCountMismatch { expected: 6, got: 5 }
    );
    assert_eq!(
        translation_err(Interpolation::Step, vec![0.0, 1.0], vec![0.0; 7]),
        AnimationError::OutputCountMismatch { expected: 6, got: 7 }
    );
    // Cubic splines need in-tangent, value and out-tangent per key.
    assert_eq!(
        translation_err(Interpolation::CubicSpline, vec![0.0, 1.0], vec![0.0; 6]),
        AnimationError::OutputCountMismatch { expected: 18, got: 6 }
    );
    let rotation = Channel::new(ChannelTarget::Rotation(0), Interpolation::CubicSpline, vec![0.0], vec![0.0, 0.0, 0.0, 1.0]);
    assert_eq!(rotation.unwrap_err(), AnimationError::OutputCountMismatch { expected: 12, got: 4 });
    let weights =
        Channel::new(ChannelTarget::MorphWeights { node: 0, first: 0, count: 3 }, Interpolation::Linear, vec![0.0, 1.0], vec![0.0; 3]);
    assert_eq!(weights.unwrap_err(), AnimationError::OutputCountMismatch { expected: 6, got: 3 });
}

#[test]
fn values_must_be_finite() {
    let err = translation_err(Interpolation::Linear, vec![0.0, 1.0], vec![0.0, 0.0, 0.0, 1.0, f32::NAN, 0.0]);
    assert_eq!(err, AnimationError::NonFiniteValue { index: 4 });
}

#[test]
fn morph_weight_channels_need_at_least_one_weight() {
    let err = Channel::new(ChannelTarget::MorphWeights { node: 0, first: 0, count: 0 }, Interpolation::Linear, vec![0.0], vec![]);
    assert_eq!(err.unwrap_err(), AnimationError::ZeroMorphWeightCount);
}

#[test]
fn rotations_are_normalized_on_load_and_zero_quaternions_refused() {
    let doubled = Channel::new(ChannelTarget::Rotation(0), Interpolation::Linear, vec![0.0], vec![0.0, 0.0, 0.0, 2.0]).unwrap();
    assert_rotation(doubled.sample_quat(0.0).unwrap(), Quat::IDENTITY);
    let zero_key = vec![0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0];
    let err = Channel::new(ChannelTarget::Rotation(0), Interpolation::Linear, vec![0.0, 1.0], zero_key).unwrap_err();
    assert_eq!(err, AnimationError::ZeroQuaternion { key: 1 });
    // Cubic: zero tangents are fine, a zero value is not.
    let mut cubic = vec![0.0; 24];
    cubic[7] = 1.0; // key 0's value w
    let err = Channel::new(ChannelTarget::Rotation(0), Interpolation::CubicSpline, vec![0.0, 1.0], cubic.clone()).unwrap_err();
    assert_eq!(err, AnimationError::ZeroQuaternion { key: 1 });
    cubic[19] = 1.0; // key 1's value w
    assert!(Channel::new(ChannelTarget::Rotation(0), Interpolation::CubicSpline, vec![0.0, 1.0], cubic).is_ok());
}

#[test]
fn clips_refuse_no_channels_and_duplicate_targets() {
    assert_eq!(AnimationClip::new("empty", vec![]).unwrap_err(), AnimationError::NoChannels);
    let a = translation(3, Interpolation::Linear, &[0.0], &[Vec3::ZERO]);
    let b = translation(3, Interpolation::Step, &[0.0, 1.0], &[Vec3::ZERO, Vec3::ONE]);
    let err = AnimationClip::new("twice", vec![a, b]).unwrap_err();
    assert_eq!(err, AnimationError::DuplicateTarget { target: ChannelTarget::Translation(3) });
}

#[test]
fn a_joint_out_of_range_is_refused_and_the_pose_left_alone() {
    let channels =
        vec![translation(1, Interpolation::Linear, &[0.0], &[Vec3::ONE]), translation(5, Interpolation::Linear, &[0.0], &[Vec3::ONE])];
    let clip = AnimationClip::new("far", channels).unwrap();
    assert_eq!(clip.validate_for(3), Err(AnimationError::JointOutOfRange { joint: 5, joints: 3 }));
    assert_eq!(clip.validate_for(6), Ok(()));
    let mut pose = Pose::from_rest(&[JointTransform::IDENTITY; 3]);
    assert_eq!(clip.sample_into(0.0, &mut pose), Err(AnimationError::JointOutOfRange { joint: 5, joints: 3 }));
    assert_eq!(pose, Pose::from_rest(&[JointTransform::IDENTITY; 3]), "nothing was written");
}

#[test]
fn skeletons_refuse_parents_after_children_and_bad_inputs() {
    let ib = |n| vec![Mat4::IDENTITY; n];
    assert_eq!(Skeleton::new(vec![None, Some(2), Some(0)], ib(3)), Err(AnimationError::ParentAfterChild { joint: 1, parent: 2 }));
    assert_eq!(Skeleton::new(vec![Some(0)], ib(1)), Err(AnimationError::ParentAfterChild { joint: 0, parent: 0 }));
    assert_eq!(Skeleton::new(vec![None, Some(7)], ib(2)), Err(AnimationError::ParentAfterChild { joint: 1, parent: 7 }));
    assert!(matches!(Skeleton::new(vec![None, Some(0)], ib(1)), Err(AnimationError::LengthMismatch { expected: 2, got: 1, .. })));
    let mut bad = ib(2);
    bad[1].w_axis.x = f32::NAN;
    assert_eq!(Skeleton::new(vec![None, Some(0)], bad), Err(AnimationError::NonFiniteMatrix { joint: 1 }));
    let skeleton = Skeleton::new(vec![None, Some(0)], ib(2)).unwrap();
    let mut out = Vec::new();
    let short = Pose::from_rest(&[JointTransform::IDENTITY]);
    assert!(matches!(skeleton.joint_matrices(&short, &mut out), Err(AnimationError::LengthMismatch { expected: 2, got: 1, .. })));
}

#[test]
fn errors_read_as_sentences() {
    assert_eq!(AnimationError::TimesNotIncreasing { index: 4 }.to_string(), "key time 4 is not greater than key time 3");
    assert_eq!(AnimationError::OutputCountMismatch { expected: 18, got: 6 }.to_string(), "expected 18 output values, got 6");
    assert_eq!(flat3(&[Vec3::new(1.0, 2.0, 3.0)]), vec![1.0, 2.0, 3.0]);
}
