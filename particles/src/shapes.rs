//! Initial location and velocity shapes, sampled once per spawned particle.
//!
//! Spawning is the second cost of a tick after the update (a steady emitter
//! replaces ~1% of its particles every tick, and each spawn draws several
//! random numbers), so the samplers avoid the slow parts of the obvious
//! formulas:
//!
//! * directions and points come from rejection sampling (a point uniform in
//!   the square or cube, kept if it lies in the disk or ball: 79% and 52% of
//!   tries) instead of `sin`/`cos`/`cbrt`. Rejection draws a varying number
//!   of random numbers per particle, which keeps results deterministic (the
//!   same seed draws the same sequence) but ties the stream to this method;
//! * what depends only on the asset (a cone's unit axis, the basis around it,
//!   `1 - cos angle`) is computed once, when the emitter is compiled.
//!
//! Every rejection loop gives up after [`MAX_TRIES`] tries (probability
//! below 10^-20 for the ball) and returns a fixed valid sample, so a
//! degenerate random stream cannot hang a tick.

use glam::Vec3;

use crate::asset::{LocationShape, VelocityShape};
use crate::distribution::Distribution;
use renderer::Rng;

/// Tries before a rejection sampler falls back to a fixed sample.
const MAX_TRIES: usize = 64;

/// A uniform random float in `[-1, 1)`.
#[inline]
fn signed(rng: &mut Rng) -> f32 {
    2.0 * rng.next_f32() - 1.0
}

/// A point `(u, v)` uniform in the unit disk (never the centre), and
/// `s = u² + v²`.
#[inline]
fn in_disk(rng: &mut Rng) -> (f32, f32, f32) {
    for _ in 0..MAX_TRIES {
        let (u, v) = (signed(rng), signed(rng));
        let s = u * u + v * v;
        if s < 1.0 && s > 0.0 {
            return (u, v, s);
        }
    }
    (1.0, 0.0, 1.0)
}

/// A direction uniform on the unit sphere (Marsaglia 1972: a point in the
/// disk mapped onto the sphere with one square root).
#[inline]
fn unit_vector(rng: &mut Rng) -> Vec3 {
    let (u, v, s) = in_disk(rng);
    let k = 2.0 * (1.0 - s).sqrt();
    Vec3::new(u * k, v * k, 1.0 - 2.0 * s)
}

/// A point uniform in the unit ball.
#[inline]
fn in_ball(rng: &mut Rng) -> Vec3 {
    for _ in 0..MAX_TRIES {
        let p = Vec3::new(signed(rng), signed(rng), signed(rng));
        if p.length_squared() <= 1.0 {
            return p;
        }
    }
    Vec3::ZERO
}

/// `(cos φ, sin φ)` for an angle φ uniform in `[0, 2π)`: a point in the disk
/// at angle α gives the double angle 2α, also uniform, without trigonometry.
#[inline]
fn unit_circle(rng: &mut Rng) -> (f32, f32) {
    let (u, v, s) = in_disk(rng);
    ((u * u - v * v) / s, 2.0 * u * v / s)
}

/// A location uniform in `shape`.
pub(crate) fn sample_location(shape: &LocationShape, rng: &mut Rng) -> Vec3 {
    match shape {
        LocationShape::Point { position } => *position,
        LocationShape::Box { min, max } => Vec3::new(rng.range_f32(min.x, max.x), rng.range_f32(min.y, max.y), rng.range_f32(min.z, max.z)),
        LocationShape::Sphere { center, radius, surface_only: true } => *center + unit_vector(rng) * *radius,
        LocationShape::Sphere { center, radius, surface_only: false } => *center + in_ball(rng) * *radius,
    }
}

/// A [`VelocityShape`] with what depends only on the asset precomputed.
#[derive(Clone, Debug)]
pub(crate) enum VelocitySampler {
    Cone {
        /// Unit axis, and two unit vectors completing an orthonormal basis.
        axis: Vec3,
        b1: Vec3,
        b2: Vec3,
        /// `1 - cos angle`: `cos θ` is uniform in `[cos angle, 1]`.
        one_minus_cos: f32,
        speed: Distribution<f32>,
    },
    Box {
        min: Vec3,
        max: Vec3,
    },
}

impl VelocitySampler {
    /// Compiles a validated shape (a cone's direction is not zero).
    pub fn new(shape: &VelocityShape) -> Self {
        match shape {
            VelocityShape::Cone { direction, angle, speed } => {
                let axis = direction.normalize();
                let (b1, b2) = axis.any_orthonormal_pair();
                VelocitySampler::Cone { axis, b1, b2, one_minus_cos: 1.0 - angle.cos(), speed: speed.clone() }
            }
            VelocityShape::Box { min, max } => VelocitySampler::Box { min: *min, max: *max },
        }
    }

    /// A velocity: for a cone, a direction uniform over the spherical cap
    /// within the angle of the axis, times a speed sampled at `loop_t`.
    pub fn sample(&self, loop_t: f32, rng: &mut Rng) -> Vec3 {
        match self {
            VelocitySampler::Cone { axis, b1, b2, one_minus_cos, speed } => {
                let cos_t = 1.0 - rng.next_f32() * one_minus_cos;
                let sin_t = (1.0 - cos_t * cos_t).max(0.0).sqrt();
                let (cos_p, sin_p) = unit_circle(rng);
                let dir = *axis * cos_t + (*b1 * cos_p + *b2 * sin_p) * sin_t;
                dir * speed.sample(loop_t, rng)
            }
            VelocitySampler::Box { min, max } => {
                Vec3::new(rng.range_f32(min.x, max.x), rng.range_f32(min.y, max.y), rng.range_f32(min.z, max.z))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Enough that the tolerances below are about five standard deviations.
    const SAMPLES: usize = 100_000;

    #[test]
    fn cone_velocities_fill_the_cap_uniformly() {
        let mut rng = Rng::with_stream(3, 0);
        let angle = 0.3f32;
        let cone =
            VelocitySampler::new(&VelocityShape::Cone { direction: Vec3::new(0.0, 0.0, 2.0), angle, speed: Distribution::Constant(10.0) });
        let (mut cos_sum, mut mean_dir) = (0.0f64, Vec3::ZERO);
        for _ in 0..SAMPLES {
            let v = cone.sample(0.0, &mut rng);
            assert!((v.length() - 10.0).abs() < 1e-3);
            let d = v.normalize();
            assert!(d.dot(Vec3::Z) >= angle.cos() - 1e-5);
            cos_sum += f64::from(d.z);
            mean_dir += Vec3::new(d.x, d.y, 0.0);
        }
        // cos θ uniform in [cos angle, 1]; the azimuth has no preferred side.
        let mean_cos = cos_sum / SAMPLES as f64;
        let expected = (1.0 + f64::from(angle.cos())) / 2.0;
        assert!((mean_cos - expected).abs() < 2e-4, "{mean_cos} vs {expected}");
        assert!((mean_dir / SAMPLES as f32).length() < 0.02 * angle.sin());
    }

    #[test]
    fn sphere_points_are_uniform_in_the_ball_or_on_its_surface() {
        let mut rng = Rng::with_stream(9, 1);
        let center = Vec3::new(1.0, -2.0, 3.0);
        let ball = LocationShape::Sphere { center, radius: 2.0, surface_only: false };
        let surface = LocationShape::Sphere { center, radius: 2.0, surface_only: true };
        let (mut r3, mut ball_mean, mut surface_mean) = (0.0f64, Vec3::ZERO, Vec3::ZERO);
        for _ in 0..SAMPLES {
            let p = sample_location(&ball, &mut rng) - center;
            assert!(p.length() <= 2.0 + 1e-5);
            // Uniform in volume: (r / R)³ is uniform in [0, 1].
            r3 += f64::from((p.length() / 2.0).powi(3));
            ball_mean += p;
            let q = sample_location(&surface, &mut rng) - center;
            assert!((q.length() - 2.0).abs() < 1e-5);
            surface_mean += q;
        }
        assert!((r3 / SAMPLES as f64 - 0.5).abs() < 0.005, "{}", r3 / SAMPLES as f64);
        assert!((ball_mean / SAMPLES as f32).length() < 0.02);
        assert!((surface_mean / SAMPLES as f32).length() < 0.03);
        // Every octant of the surface is reached.
        let mut octants = [0usize; 8];
        for _ in 0..SAMPLES {
            let q = sample_location(&surface, &mut rng) - center;
            octants[usize::from(q.x > 0.0) | usize::from(q.y > 0.0) << 1 | usize::from(q.z > 0.0) << 2] += 1;
        }
        for n in octants {
            assert!((n as f64 / SAMPLES as f64 - 0.125).abs() < 0.005, "{octants:?}");
        }
    }

    #[test]
    fn unit_circle_is_on_the_circle_and_covers_it() {
        let mut rng = Rng::with_stream(4, 4);

        let mut quadrants = [0usize; 4];
        for _ in 0..SAMPLES {
            let (c, s) = unit_circle(&mut rng);
            assert!((c * c + s * s - 1.0).abs() < 1e-5);
            quadrants[usize::from(c > 0.0) | usize::from(s > 0.0) << 1] += 1;
        }
        for n in quadrants {
            assert!((n as f64 / SAMPLES as f64 - 0.25).abs() < 0.007, "{quadrants:?}");
        }
    }
}
