//! The per-tick update kernel: every live particle, every tick.
//!
//! This loop is the cost of the particle system, and it is bound by memory
//! bandwidth, not arithmetic: per particle it streams position (read the old
//! buffer, write the new), velocity, relative time and lifetime, and — only
//! when the emitter has those modules — rotation, colour and size. Modules an
//! emitter lacks cost nothing: the kernel is monomorphised over which of the
//! optional parts run, so the inner loop has no per-module branches.
//!
//! Motion integrates `dv/dt = a - k·v` (constant acceleration `a`, linear
//! drag `k`) in closed form for the step `dt`:
//!
//! ```text
//! e  = exp(-k·dt)      c1 = (1 - e) / k      c2 = (dt - c1) / k
//! p' = p + v·c1 + a·c2
//! v' = v·e  + a·c1
//! ```
//!
//! With `k = 0` this is `p + v·dt + ½·a·dt²`, `v + a·dt`: exact for any step,
//! so a particle's path does not depend on the frame rate or on the
//! sub-frame time it was spawned at (only on float rounding). The constants
//! are computed once per tick in f64.
//!
//! The kernel also counts particles whose relative time reached 1, so the
//! caller scans for the dead only when some died. It is pure per particle,
//! so [`update`] may split the arrays across threads (`rayon::join`) and get
//! bit-identical results.

use glam::{Vec2, Vec3, Vec4};

use crate::distribution::CurveLut;
use crate::particle::ParticleStore;

/// Closed-form step constants for one `dt`; see the module docs.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Step {
    pub dt: f32,
    /// Velocity decay `e`.
    pub decay: f32,
    /// `c1`: velocity → position, and acceleration → velocity.
    pub c1: f32,
    /// `c2`: acceleration → position.
    pub c2: f32,
}

impl Step {
    pub fn new(dt: f32, drag: f32) -> Step {
        let (t, k) = (f64::from(dt), f64::from(drag));
        let kt = k * t;
        let (decay, c1, c2) = if kt < 1e-5 {
            // Series; exact for k = 0, and avoids (dt - c1) / k cancelling.
            (
                1.0 - kt + kt * kt / 2.0,
                t * (1.0 - kt / 2.0 + kt * kt / 6.0),
                t * t * (0.5 - kt / 6.0 + kt * kt / 24.0),
            )
        } else {
            let e = (-kt).exp();
            let c1 = (1.0 - e) / k;
            (e, c1, (t - c1) / k)
        };
        Step {
            dt,
            decay: decay as f32,
            c1: c1 as f32,
            c2: c2 as f32,
        }
    }
}

/// The emitter-wide inputs of an update.
pub(crate) struct UpdateParams<'a> {
    pub step: Step,
    pub acceleration: Vec3,
    /// Read only when `colors` is set.
    pub color_over_life: &'a CurveLut<Vec4>,
    /// Read only when `sizes` is set.
    pub size_over_life: &'a CurveLut<Vec2>,
    pub colors: bool,
    pub sizes: bool,
    pub rotates: bool,
}

/// Borrowed views of the arrays one update touches, splittable in two.
struct Lanes<'a> {
    old_location: &'a [Vec3],
    location: &'a mut [Vec3],
    velocity: &'a mut [Vec3],
    rotation: &'a mut [f32],
    rotation_rate: &'a [f32],
    base_size: &'a [Vec2],
    size: &'a mut [Vec2],
    base_color: &'a [Vec4],
    color: &'a mut [Vec4],
    relative_time: &'a mut [f32],
    one_over_max_lifetime: &'a [f32],
}

impl<'a> Lanes<'a> {
    fn new(s: &'a mut ParticleStore, start: usize, end: usize) -> Self {
        Lanes {
            old_location: &s.old_location[start..end],
            location: &mut s.location[start..end],
            velocity: &mut s.velocity[start..end],
            rotation: &mut s.rotation[start..end],
            rotation_rate: &s.rotation_rate[start..end],
            base_size: &s.base_size[start..end],
            size: &mut s.size[start..end],
            base_color: &s.base_color[start..end],
            color: &mut s.color[start..end],
            relative_time: &mut s.relative_time[start..end],
            one_over_max_lifetime: &s.one_over_max_lifetime[start..end],
        }
    }

    fn len(&self) -> usize {
        self.location.len()
    }

    fn split_at(self, mid: usize) -> (Lanes<'a>, Lanes<'a>) {
        let (ol0, ol1) = self.old_location.split_at(mid);
        let (l0, l1) = self.location.split_at_mut(mid);
        let (v0, v1) = self.velocity.split_at_mut(mid);
        let (r0, r1) = self.rotation.split_at_mut(mid);
        let (rr0, rr1) = self.rotation_rate.split_at(mid);
        let (bs0, bs1) = self.base_size.split_at(mid);
        let (s0, s1) = self.size.split_at_mut(mid);
        let (bc0, bc1) = self.base_color.split_at(mid);
        let (c0, c1) = self.color.split_at_mut(mid);
        let (t0, t1) = self.relative_time.split_at_mut(mid);
        let (i0, i1) = self.one_over_max_lifetime.split_at(mid);
        (
            Lanes {
                old_location: ol0,
                location: l0,
                velocity: v0,
                rotation: r0,
                rotation_rate: rr0,
                base_size: bs0,
                size: s0,
                base_color: bc0,
                color: c0,
                relative_time: t0,
                one_over_max_lifetime: i0,
            },
            Lanes {
                old_location: ol1,
                location: l1,
                velocity: v1,
                rotation: r1,
                rotation_rate: rr1,
                base_size: bs1,
                size: s1,
                base_color: bc1,
                color: c1,
                relative_time: t1,
                one_over_max_lifetime: i1,
            },
        )
    }
}

/// Particles per parallel task; below twice this the update stays serial.
pub(crate) const PARALLEL_CHUNK: usize = 32 * 1024;

/// Updates particles `start..end` of `store` by one step, reading positions
/// from `old_location` and writing `location`. Returns how many reached the
/// end of their life. With `parallel`, large ranges are split across the
/// rayon pool; the result is bit-identical either way.
pub(crate) fn update(store: &mut ParticleStore, start: usize, end: usize, p: &UpdateParams, parallel: bool) -> usize {
    let lanes = Lanes::new(store, start, end);
    if parallel {
        update_parallel(lanes, p)
    } else {
        dispatch(lanes, p)
    }
}

fn update_parallel(lanes: Lanes, p: &UpdateParams) -> usize {
    if lanes.len() < 2 * PARALLEL_CHUNK {
        return dispatch(lanes, p);
    }
    let mid = lanes.len() / 2;
    let (a, b) = lanes.split_at(mid);
    let (da, db) = rayon::join(|| update_parallel(a, p), || update_parallel(b, p));
    da + db
}

fn dispatch(lanes: Lanes, p: &UpdateParams) -> usize {
    match (p.rotates, p.colors, p.sizes) {
        (false, false, false) => kernel::<false, false, false>(lanes, p),
        (false, false, true) => kernel::<false, false, true>(lanes, p),
        (false, true, false) => kernel::<false, true, false>(lanes, p),
        (false, true, true) => kernel::<false, true, true>(lanes, p),
        (true, false, false) => kernel::<true, false, false>(lanes, p),
        (true, false, true) => kernel::<true, false, true>(lanes, p),
        (true, true, false) => kernel::<true, true, false>(lanes, p),
        (true, true, true) => kernel::<true, true, true>(lanes, p),
    }
}

/// The hot loop. Every slice is re-sliced to `n` so the compiler drops the
/// bounds checks; the optional parts are compile-time constants.
#[inline(never)]
fn kernel<const ROTATE: bool, const COLOR: bool, const SIZE: bool>(lanes: Lanes, p: &UpdateParams) -> usize {
    let n = lanes.len();
    let old_location = &lanes.old_location[..n];
    let location = &mut lanes.location[..n];
    let velocity = &mut lanes.velocity[..n];
    let relative_time = &mut lanes.relative_time[..n];
    let one_over_max_lifetime = &lanes.one_over_max_lifetime[..n];
    let rotation = &mut lanes.rotation[..n];
    let rotation_rate = &lanes.rotation_rate[..n];
    let base_color = &lanes.base_color[..n];
    let color = &mut lanes.color[..n];
    let base_size = &lanes.base_size[..n];
    let size = &mut lanes.size[..n];

    let step = p.step;
    let dt = step.dt;
    let a_c1 = p.acceleration * step.c1;
    let a_c2 = p.acceleration * step.c2;
    let color_lut = p.color_over_life;
    let size_lut = p.size_over_life;

    let mut dead = 0usize;
    for i in 0..n {
        let v = velocity[i];
        location[i] = old_location[i] + v * step.c1 + a_c2;
        velocity[i] = v * step.decay + a_c1;
        let t = relative_time[i] + one_over_max_lifetime[i] * dt;
        relative_time[i] = t;
        dead += usize::from(t >= 1.0);
        if ROTATE {
            rotation[i] += rotation_rate[i] * dt;
        }
        if COLOR {
            color[i] = base_color[i] * color_lut.sample(t);
        }
        if SIZE {
            size[i] = base_size[i] * size_lut.sample(t);
        }
    }
    dead
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn step_without_drag_is_the_constant_acceleration_formula() {
        let s = Step::new(0.25, 0.0);
        assert_eq!(s.decay, 1.0);
        assert_eq!(s.c1, 0.25);
        assert_eq!(s.c2, 0.03125);
    }

    #[test]
    fn drag_step_matches_the_analytic_solution_over_many_steps() {
        // v(t) = a/k + (v0 - a/k) e^{-kt}, integrated once for position.
        let (k, a, v0) = (0.7f64, -9.8f64, 20.0f64);
        let dt = 1.0 / 60.0;
        let s = Step::new(dt as f32, k as f32);
        let (mut p, mut v) = (0.0f64, v0);
        for _ in 0..120 {
            p += v * f64::from(s.c1) + a * f64::from(s.c2);
            v = v * f64::from(s.decay) + a * f64::from(s.c1);
        }
        let t = 2.0;
        let v_exact = a / k + (v0 - a / k) * (-k * t).exp();
        let p_exact = a / k * t + (v0 - a / k) * (1.0 - (-k * t).exp()) / k;
        assert!((v - v_exact).abs() < 1e-4, "{v} vs {v_exact}");
        assert!((p - p_exact).abs() < 1e-4, "{p} vs {p_exact}");
        // Tiny drag takes the series branch and stays continuous.
        let tiny = Step::new(0.01, 1e-4);
        assert!((tiny.c1 - 0.01).abs() < 1e-8 && (tiny.c2 - 0.00005).abs() < 1e-9);
    }
}
