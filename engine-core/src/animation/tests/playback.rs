//! The player: looping, clamping, reverse play, seeking, cross-fades, and
//! reuse of its buffers.

use std::sync::Arc;

use glam::{Quat, Vec3};

use super::super::{AnimationClip, AnimationError, AnimationPlayer, Channel, ChannelTarget, Interpolation, JointTransform, Pose};
use super::{assert_close, assert_rotation, assert_vec3, clip, rot_z, rotation, translation};

/// A clip of `seconds` that moves joint 0 along `axis` by one unit per second.
fn ramp(axis: Vec3, seconds: f32) -> Arc<AnimationClip> {
    clip("ramp", vec![translation(0, Interpolation::Linear, &[0.0, seconds], &[Vec3::ZERO, axis * seconds])])
}

fn rest() -> Pose {
    Pose::from_rest(&[JointTransform::IDENTITY; 2])
}

/// The player's pose for joint 0's translation.
fn translation_of(player: &mut AnimationPlayer) -> Vec3 {
    let mut out = Pose::default();
    player.evaluate(&rest(), &mut out).unwrap();
    out.joints[0].translation
}

#[test]
fn a_looping_player_wraps_time_into_the_clip() {
    let mut player = AnimationPlayer::new(ramp(Vec3::X, 2.0));
    assert!(player.is_looping());
    player.advance(0.5);
    assert_close(player.time(), 0.5);
    player.advance(2.0);
    assert_close(player.time(), 0.5);
    assert_vec3(translation_of(&mut player), Vec3::X * 0.5);
    player.advance(1.5);
    assert_close(player.time(), 0.0);
    assert!(!player.is_finished(), "a looping player never finishes");
    player.set_speed(-1.0).unwrap();
    player.advance(0.25);
    assert_close(player.time(), 1.75);
}

#[test]
fn a_one_shot_player_clamps_at_the_end_and_reports_finished() {
    let mut player = AnimationPlayer::new(ramp(Vec3::X, 2.0));
    player.set_looping(false);
    player.advance(1.0);
    assert!(!player.is_finished());
    player.advance(5.0);
    assert_close(player.time(), 2.0);
    assert!(player.is_finished());
    assert_vec3(translation_of(&mut player), Vec3::X * 2.0);
}

#[test]
fn negative_speed_plays_backward_to_the_start() {
    let mut player = AnimationPlayer::new(ramp(Vec3::X, 2.0));
    player.set_looping(false);
    player.set_speed(-2.0).unwrap();
    player.seek(2.0).unwrap();
    assert!(!player.is_finished());
    player.advance(0.25);
    assert_close(player.time(), 1.5);
    assert_vec3(translation_of(&mut player), Vec3::X * 1.5);
    player.advance(1.0);
    assert_close(player.time(), 0.0);
    assert!(player.is_finished());
    // A clip started while playing backward starts at its end.
    player.play(ramp(Vec3::Y, 3.0));
    assert_close(player.time(), 3.0);
    assert!(matches!(player.set_speed(f32::NAN), Err(AnimationError::InvalidParameter { what: "speed", .. })));
    assert_close(player.speed(), -2.0);
}

#[test]
fn seek_places_the_playhead_wrapped_or_clamped() {
    let mut player = AnimationPlayer::new(ramp(Vec3::X, 2.0));
    player.seek(1.25).unwrap();
    assert_close(player.time(), 1.25);
    assert_vec3(translation_of(&mut player), Vec3::X * 1.25);
    player.seek(5.0).unwrap();
    assert_close(player.time(), 1.0);
    player.seek(-0.5).unwrap();
    assert_close(player.time(), 1.5);
    player.set_looping(false);
    player.seek(5.0).unwrap();
    assert_close(player.time(), 2.0);
    player.seek(-1.0).unwrap();
    assert_close(player.time(), 0.0);
    assert!(matches!(player.seek(f32::INFINITY), Err(AnimationError::InvalidParameter { what: "seek time", .. })));
    assert_close(player.time(), 0.0);
}

#[test]
fn a_cross_fade_blends_by_elapsed_over_length_while_both_clips_advance() {
    let walk = clip(
        "walk",
        vec![
            translation(0, Interpolation::Linear, &[0.0, 4.0], &[Vec3::ZERO, Vec3::X * 4.0]),
            rotation(0, Interpolation::Step, &[0.0], &[Quat::IDENTITY]),
        ],
    );
    let run = clip(
        "run",
        vec![
            translation(0, Interpolation::Linear, &[0.0, 4.0], &[Vec3::ZERO, Vec3::Y * 8.0]),
            rotation(0, Interpolation::Step, &[0.0], &[rot_z(90.0)]),
        ],
    );
    let mut player = AnimationPlayer::new(walk);
    player.advance(1.0);
    player.cross_fade_to(run.clone(), 1.0).unwrap();
    assert!(Arc::ptr_eq(player.clip(), &run));
    assert_close(player.time(), 0.0);
    let (rest, mut out) = (rest(), Pose::default());

    player.advance(0.25);
    assert_close(player.fade_weight().unwrap(), 0.25);
    player.evaluate(&rest, &mut out).unwrap();
    // walk at 1.25 s = (1.25, 0, 0); run at 0.25 s = (0, 0.5, 0); a quarter of the way.
    assert_vec3(out.joints[0].translation, Vec3::new(1.25 * 0.75, 0.5 * 0.25, 0.0));
    assert_rotation(out.joints[0].rotation, rot_z(22.5));

    player.advance(0.25);
    player.evaluate(&rest, &mut out).unwrap();
    // Half way: walk at 1.5 s = (1.5, 0, 0), run at 0.5 s = (0, 1, 0).
    assert_vec3(out.joints[0].translation, Vec3::new(0.75, 0.5, 0.0));
    assert_rotation(out.joints[0].rotation, rot_z(45.0));
    assert!(!player.is_finished());

    player.advance(0.6);
    assert_eq!(player.fade_weight(), None);
    player.evaluate(&rest, &mut out).unwrap();
    assert_vec3(out.joints[0].translation, Vec3::new(0.0, 2.2, 0.0));
    assert_rotation(out.joints[0].rotation, rot_z(90.0));
}

#[test]
fn fade_lengths_are_checked_and_zero_is_a_cut() {
    let mut player = AnimationPlayer::new(ramp(Vec3::X, 2.0));
    for bad in [-1.0, f32::NAN, f32::INFINITY] {
        assert!(matches!(player.cross_fade_to(ramp(Vec3::Y, 1.0), bad), Err(AnimationError::InvalidParameter { what: "fade length", .. })));
    }
    player.advance(0.5);
    player.cross_fade_to(ramp(Vec3::Y, 1.0), 0.0).unwrap();
    assert_eq!(player.fade_weight(), None);
    player.advance(0.5);
    assert_vec3(translation_of(&mut player), Vec3::Y * 0.5);
}

#[test]
fn evaluate_refuses_a_rest_pose_too_small_for_the_clip() {
    let mut player = AnimationPlayer::new(clip("far", vec![translation(4, Interpolation::Step, &[0.0], &[Vec3::ONE])]));
    let mut out = Pose::from_rest(&[JointTransform::new(Vec3::ONE, Quat::IDENTITY, Vec3::ONE)]);
    let before = out.clone();
    assert_eq!(player.evaluate(&rest(), &mut out), Err(AnimationError::JointOutOfRange { joint: 4, joints: 2 }));
    assert_eq!(out, before);
}

#[test]
fn repeated_evaluation_reuses_every_buffer() {
    let weights =
        Channel::new(ChannelTarget::MorphWeights { node: 1, first: 0, count: 3 }, Interpolation::Linear, vec![0.0, 1.0], vec![0.0; 6]);
    let a = clip("a", vec![translation(0, Interpolation::Linear, &[0.0, 1.0], &[Vec3::ZERO, Vec3::X]), weights.unwrap()]);
    let b = clip("b", vec![rotation(1, Interpolation::Linear, &[0.0, 1.0], &[Quat::IDENTITY, rot_z(90.0)])]);
    let mut player = AnimationPlayer::new(a);
    player.cross_fade_to(b, 100.0).unwrap();
    let (rest, mut out) = (rest(), Pose::default());
    player.advance(0.01);
    player.evaluate(&rest, &mut out).unwrap();
    let buffers = |out: &Pose| (out.joints.as_ptr(), out.joints.capacity(), out.morph_weights.as_ptr(), out.morph_weights.capacity());
    let (first, scratch) = (buffers(&out), player.scratch_joints_ptr());
    for _ in 0..200 {
        player.advance(0.016);
        player.evaluate(&rest, &mut out).unwrap();
        assert_eq!(buffers(&out), first);
        assert_eq!(player.scratch_joints_ptr(), scratch);
    }
    assert!(player.fade_weight().is_some(), "the fade was running throughout");
    assert_eq!(out.morph_weights.len(), 3);
}
