//! The math shared by channel sampling and pose blending: finding the key
//! interval around a time, the cubic Hermite basis of glTF 2.0 Appendix C
//! and shortest-path spherical interpolation.

use std::ops::{Add, Mul};

use glam::{Quat, Vec4};

/// Where a sample time falls among a channel's key times.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Segment {
    /// At or outside the ends (or a single key): hold the value of this key.
    Clamp(usize),
    /// Between key `key` (inclusive) and `key + 1` (exclusive).
    Span {
        /// The key at or before the time.
        key: usize,
        /// How far through the interval the time is, in `[0, 1)`.
        u: f32,
        /// The interval's length in seconds (`times[key + 1] - times[key]`),
        /// which scales cubic-spline tangents.
        delta: f32,
    },
}

/// Finds the interval of `times` (non-empty, strictly increasing) that holds
/// `time`, by binary search: O(log keys). A NaN time counts as before the
/// first key, so a bad clock holds the first pose instead of panicking.
pub(super) fn find_segment(times: &[f32], time: f32) -> Segment {
    let last = times.len() - 1;
    if time.is_nan() || time <= times[0] {
        return Segment::Clamp(0);
    }
    if time >= times[last] {
        return Segment::Clamp(last);
    }
    // times[0] < time < times[last], so at least one and at most `last` keys are <= time.
    let key = times.partition_point(|&t| t <= time) - 1;
    let delta = times[key + 1] - times[key];
    let u = ((time - times[key]) / delta).clamp(0.0, 1.0);
    Segment::Span { key, u, delta }
}

/// glTF 2.0 Appendix C's cubic Hermite spline at `u` in `[0, 1]`:
/// `(2u³ − 3u² + 1)·v0 + (u³ − 2u² + u)·Δ·b0 + (−2u³ + 3u²)·v1 + (u³ − u²)·Δ·a1`,
/// where `b0` is the first key's out-tangent and `a1` the second key's
/// in-tangent. The tangents are stored per second, hence the scaling by the
/// interval `delta` (Δ).
pub(super) fn hermite<T>(v0: T, b0: T, v1: T, a1: T, delta: f32, u: f32) -> T
where
    T: Copy + Add<Output = T> + Mul<f32, Output = T>,
{
    let u2 = u * u;
    let u3 = u2 * u;
    let h00 = 2.0 * u3 - 3.0 * u2 + 1.0;
    let h10 = u3 - 2.0 * u2 + u;
    let h01 = -2.0 * u3 + 3.0 * u2;
    let h11 = u3 - u2;
    v0 * h00 + b0 * (h10 * delta) + v1 * h01 + a1 * (h11 * delta)
}

/// Above this cosine of the half-angle between two rotations, slerp's
/// `sin` divisor is too small to be accurate and a normalized lerp is used;
/// the two agree to within float precision there.
const NEARLY_PARALLEL: f32 = 0.9995;

/// Spherical linear interpolation from `a` to `b` along the shorter arc.
///
/// `q` and `-q` are the same rotation; when the quaternions' dot product is
/// negative `b` is negated so the blend turns through the smaller angle
/// (glTF Appendix C). Unlike a normalized lerp, the angle changes uniformly
/// with `t`, so `t = 0.5` is exactly half way.
pub(super) fn slerp_shortest(a: Quat, b: Quat, t: f32) -> Quat {
    let a = Vec4::from(a);
    let mut b = Vec4::from(b);
    let mut dot = a.dot(b);
    if dot < 0.0 {
        b = -b;
        dot = -dot;
    }
    if dot > NEARLY_PARALLEL {
        return Quat::from_vec4(a.lerp(b, t)).normalize();
    }
    let theta = dot.min(1.0).acos();
    let sin_theta = theta.sin();
    let wa = ((1.0 - t) * theta).sin() / sin_theta;
    let wb = (t * theta).sin() / sin_theta;
    Quat::from_vec4(a * wa + b * wb).normalize()
}

/// Normalizes a cubic-spline rotation result. The spline does not stay on
/// the unit sphere; should it pass through zero (only possible with extreme
/// tangents), `fallback` (the interval's first key) is returned instead.
pub(super) fn normalize_or(v: Vec4, fallback: Quat) -> Quat {
    v.try_normalize().map_or(fallback, Quat::from_vec4)
}
