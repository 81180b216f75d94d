//! Every interpolation mode against analytic values (glTF 2.0 Appendix C).

use glam::{Quat, Vec3, Vec4};

use super::super::{Channel, ChannelTarget, Interpolation};
use super::{assert_close, assert_rotation, assert_vec3, rot_z, rotation, translation, EPS};

#[test]
fn step_holds_the_key_at_or_before_the_time() {
    let c = translation(0, Interpolation::Step, &[0.0, 1.0, 2.0], &[Vec3::ZERO, Vec3::X * 10.0, Vec3::X * 20.0]);
    for (t, x) in [(0.0, 0.0), (0.5, 0.0), (0.999, 0.0), (1.0, 10.0), (1.5, 10.0), (1.999, 10.0), (2.0, 20.0)] {
        assert_vec3(c.sample_vec3(t).unwrap(), Vec3::X * x);
    }
}

#[test]
fn linear_translation_is_exact_at_keys_and_proportional_between() {
    let end = Vec3::new(4.0, 2.0, -2.0);
    let c = translation(0, Interpolation::Linear, &[0.0, 2.0, 3.0], &[Vec3::ZERO, end, Vec3::ZERO]);
    assert_vec3(c.sample_vec3(0.0).unwrap(), Vec3::ZERO);
    assert_vec3(c.sample_vec3(2.0).unwrap(), end);
    assert_vec3(c.sample_vec3(1.0).unwrap(), Vec3::new(2.0, 1.0, -1.0));
    assert_vec3(c.sample_vec3(0.5).unwrap(), Vec3::new(1.0, 0.5, -0.5));
    // Second interval, one second long.
    assert_vec3(c.sample_vec3(2.75).unwrap(), end * 0.25);
}

#[test]
fn linear_rotation_is_slerp_so_half_way_is_exactly_half_the_angle() {
    let c = rotation(0, Interpolation::Linear, &[0.0, 1.0], &[Quat::IDENTITY, rot_z(90.0)]);
    assert_rotation(c.sample_quat(0.5).unwrap(), rot_z(45.0));
    // nlerp would give about 21.6 degrees at a quarter; slerp gives exactly 22.5.
    let quarter = c.sample_quat(0.25).unwrap();
    assert_rotation(quarter, rot_z(22.5));
    let (axis, angle) = quarter.to_axis_angle();
    assert_vec3(axis, Vec3::Z);
    assert!((angle - 22.5_f32.to_radians()).abs() < 1e-5, "angle {} degrees", angle.to_degrees());
}

#[test]
fn linear_rotation_takes_the_shortest_path_when_a_key_is_negated() {
    // -q is the same 90-degree turn; the long way round would pass through -135 degrees.
    let c = rotation(0, Interpolation::Linear, &[0.0, 1.0], &[Quat::IDENTITY, -rot_z(90.0)]);
    let half = c.sample_quat(0.5).unwrap();
    assert_rotation(half, rot_z(45.0));
    let s = std::f32::consts::FRAC_1_SQRT_2;
    assert_vec3(half * Vec3::X, Vec3::new(s, s, 0.0));
}

/// glTF Appendix C's Hermite spline, written out independently of the module.
fn hermite_reference(v0: f32, b0: f32, v1: f32, a1: f32, delta: f32, u: f32) -> f32 {
    let (u2, u3) = (u * u, u * u * u);
    (2.0 * u3 - 3.0 * u2 + 1.0) * v0 + (u3 - 2.0 * u2 + u) * delta * b0 + (-2.0 * u3 + 3.0 * u2) * v1 + (u3 - u2) * delta * a1
}

#[test]
fn cubic_spline_matches_the_closed_form_hermite_with_scaled_tangents() {
    // Keys at 1 s and 3 s: an interval of 2, so unscaled tangents would be off by half.
    let (a0, v0, b0) = (Vec3::splat(9.0), Vec3::new(1.0, 0.0, 0.0), Vec3::new(0.5, -1.0, 2.0));
    let (a1, v1, b1) = (Vec3::new(-1.0, 0.25, 3.0), Vec3::new(3.0, 2.0, -1.0), Vec3::splat(-9.0));
    let c = translation(0, Interpolation::CubicSpline, &[1.0, 3.0], &[a0, v0, b0, a1, v1, b1]);
    for t in [1.5_f32, 2.0, 2.7] {
        let u = (t - 1.0) / 2.0;
        let expected = Vec3::from_array(std::array::from_fn(|i| hermite_reference(v0[i], b0[i], v1[i], a1[i], 2.0, u)));
        assert_vec3(c.sample_vec3(t).unwrap(), expected);
    }
    // A spot value by hand at u = 0.25 for x: 0.84375*1 + 0.140625*2*0.5 + 0.15625*3 + (-0.046875)*2*(-1).
    assert_close(c.sample_vec3(1.5).unwrap().x, 0.84375 + 0.140625 + 0.46875 + 0.09375);
    // The keys themselves, and clamping to values (not tangents) outside.
    assert_vec3(c.sample_vec3(1.0).unwrap(), v0);
    assert_vec3(c.sample_vec3(3.0).unwrap(), v1);
    assert_vec3(c.sample_vec3(0.0).unwrap(), v0);
    assert_vec3(c.sample_vec3(10.0).unwrap(), v1);
}

#[test]
fn cubic_spline_rotations_are_normalized_after_evaluation() {
    let tangent = Quat::from_xyzw(0.0, 0.0, 0.3, -0.1);
    let zero = Quat::from_xyzw(0.0, 0.0, 0.0, 0.0);
    let (v0, v1) = (Quat::IDENTITY, rot_z(90.0));
    let c = rotation(0, Interpolation::CubicSpline, &[0.0, 0.5], &[zero, v0, tangent, tangent, v1, zero]);
    let got = c.sample_quat(0.2).unwrap();
    let raw = Vec4::from_array(std::array::from_fn(|i| {
        hermite_reference(Vec4::from(v0)[i], Vec4::from(tangent)[i], Vec4::from(v1)[i], Vec4::from(tangent)[i], 0.5, 0.4)
    }));
    assert!(got.is_normalized());
    assert!(Vec4::from(got).abs_diff_eq(raw.normalize(), EPS), "got {got}, expected {}", raw.normalize());
    // Symmetric keys with zero tangents meet half way at exactly 45 degrees.
    let c = rotation(0, Interpolation::CubicSpline, &[0.0, 1.0], &[zero, v0, zero, zero, v1, zero]);
    assert_rotation(c.sample_quat(0.5).unwrap(), rot_z(45.0));
}

#[test]
fn times_outside_the_keys_hold_the_first_and_last_values() {
    let c = translation(0, Interpolation::Linear, &[1.0, 2.0], &[Vec3::X * 5.0, Vec3::X * 7.0]);
    for t in [-3.0, 0.0, 0.999, f32::NAN] {
        assert_vec3(c.sample_vec3(t).unwrap(), Vec3::X * 5.0);
    }
    for t in [2.0, 2.5, 100.0, f32::INFINITY] {
        assert_vec3(c.sample_vec3(t).unwrap(), Vec3::X * 7.0);
    }
    let single = translation(0, Interpolation::Linear, &[0.5], &[Vec3::Y]);
    for t in [0.0, 0.5, 9.0] {
        assert_vec3(single.sample_vec3(t).unwrap(), Vec3::Y);
    }
}

#[test]
fn morph_weights_sample_per_weight_in_every_mode() {
    let target = ChannelTarget::MorphWeights { node: 0, first: 0, count: 2 };
    let linear = Channel::new(target, Interpolation::Linear, vec![0.0, 2.0], vec![0.0, 1.0, 1.0, 0.0]).unwrap();
    let mut out = [0.0; 2];
    linear.sample_weights(0.5, &mut out).unwrap();
    assert_eq!(out, [0.25, 0.75]);
    let step = Channel::new(target, Interpolation::Step, vec![0.0, 2.0], vec![0.0, 1.0, 1.0, 0.0]).unwrap();
    step.sample_weights(1.9, &mut out).unwrap();
    assert_eq!(out, [0.0, 1.0]);
    // Cubic: per key [a a], [v v], [b b]; interval 2.
    let values = vec![0.0, 0.0, 0.2, 0.8, 1.0, -1.0, 0.5, 0.0, 0.6, 0.1, 0.0, 0.0];
    let cubic = Channel::new(target, Interpolation::CubicSpline, vec![0.0, 2.0], values).unwrap();
    cubic.sample_weights(0.6, &mut out).unwrap();
    assert_close(out[0], hermite_reference(0.2, 1.0, 0.6, 0.5, 2.0, 0.3));
    assert_close(out[1], hermite_reference(0.8, -1.0, 0.1, 0.0, 2.0, 0.3));
    assert!(cubic.sample_weights(0.6, &mut [0.0; 3]).is_err(), "a wrong-length buffer is refused");
}

#[test]
fn each_sampler_answers_only_for_its_own_kind_of_target() {
    let t = translation(0, Interpolation::Linear, &[0.0], &[Vec3::ONE]);
    assert!(t.sample_quat(0.0).is_none());
    assert!(t.sample_weights(0.0, &mut []).is_err());
    let r = rotation(0, Interpolation::Linear, &[0.0], &[Quat::IDENTITY]);
    assert!(r.sample_vec3(0.0).is_none());
}
