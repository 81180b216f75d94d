//! The animation module's unit tests, with the builders and comparisons they share.

mod blending;
mod playback;
mod sampling;
mod skinning;
mod validation;

use std::sync::Arc;

use glam::{Quat, Vec3};

use super::{AnimationClip, Channel, ChannelTarget, Interpolation};

/// Float comparisons: sampling does a few float operations, so results
/// match analytic values to a few ulps of the inputs' magnitude.
const EPS: f32 = 1e-5;

fn assert_close(got: f32, expected: f32) {
    assert!((got - expected).abs() <= EPS, "got {got}, expected {expected}");
}

fn assert_vec3(got: Vec3, expected: Vec3) {
    assert!(got.abs_diff_eq(expected, EPS), "got {got}, expected {expected}");
}

/// Rotations compare as rotations: `q` and `-q` are equal.
fn assert_rotation(got: Quat, expected: Quat) {
    assert!(got.is_normalized(), "{got} is not a unit quaternion");
    assert!(got.dot(expected).abs() >= 1.0 - EPS, "got {got}, expected {expected}");
}

/// Flattens Vec3 values into glTF's accessor layout.
fn flat3(values: &[Vec3]) -> Vec<f32> {
    values.iter().flat_map(|v| v.to_array()).collect()
}

/// Flattens quaternions into glTF's x, y, z, w layout.
fn flat4(values: &[Quat]) -> Vec<f32> {
    values.iter().flat_map(|q| q.to_array()).collect()
}

fn translation(joint: u32, interpolation: Interpolation, times: &[f32], values: &[Vec3]) -> Channel {
    Channel::new(ChannelTarget::Translation(joint), interpolation, times.to_vec(), flat3(values)).unwrap()
}

fn rotation(joint: u32, interpolation: Interpolation, times: &[f32], values: &[Quat]) -> Channel {
    Channel::new(ChannelTarget::Rotation(joint), interpolation, times.to_vec(), flat4(values)).unwrap()
}

fn clip(name: &str, channels: Vec<Channel>) -> Arc<AnimationClip> {
    Arc::new(AnimationClip::new(name, channels).unwrap())
}

fn rot_z(degrees: f32) -> Quat {
    Quat::from_rotation_z(degrees.to_radians())
}
