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
//! Killing is fused into the same pass: a particle whose relative time
//! reaches 1 is replaced by the chunk's last particle, which is updated next
//! (see [`kernel`]). Work is cut into fixed chunks of [`CHUNK`] particles,
//! compacted independently and then closed up, so the chunks can run on the
//! rayon pool and the result is bit-identical to a serial tick.
//!
//! ## Cost
//!
//! Measured by `benches/particles.rs` (1M particles, acceleration + colour
//! and size over life) against a bare `p += v * dt` over two `Vec3` arrays.
//! The floor moves 36 bytes per particle; this update must move about 128
//! (age 12, position 36, velocity 24, colour 32 written, size 24), so even a
//! purely bandwidth-bound tick sits near 3.5× the floor. On the development
//! machine (2 shared cores) the serial tick is also compute-bound: an
//! emitter that fits in cache costs about as much per particle as a 1M one,
//! mostly the two curve lookups per particle. Spawning (~1% of particles per
//! tick) adds ~10%. The parallel tick splits the chunks over the pool.
//!
//! An over-life module whose initial value is the same for every particle
//! (a constant, or no initial module) has that value baked into its lookup
//! table, and the kernel then skips the per-particle base array.

use glam::{Vec2, Vec3, Vec4};

use crate::distribution::CurveLut;
use crate::particle::{Particle, ParticleStore};

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

/// How the kernel produces a colour or size from the over-life curve.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum OverLife {
    /// No over-life module: the current value stays the spawn value.
    Off,
    /// `value = base[i] × curve(t)`: the initial value differs per particle.
    PerParticle,
    /// `value = curve(t)`, the (uniform) initial value already baked into the
    /// curve, so the base array is not read at all.
    Baked,
}

const OFF: u8 = 0;
const PER_PARTICLE: u8 = 1;
const BAKED: u8 = 2;

impl OverLife {
    fn code(self) -> u8 {
        match self {
            OverLife::Off => OFF,
            OverLife::PerParticle => PER_PARTICLE,
            OverLife::Baked => BAKED,
        }
    }
}

/// The emitter-wide inputs of an update.
pub(crate) struct UpdateParams<'a> {
    pub step: Step,
    pub acceleration: Vec3,
    /// Read unless `colors` is `Off`.
    pub color_over_life: &'a CurveLut<Vec4>,
    /// Read unless `sizes` is `Off`.
    pub size_over_life: &'a CurveLut<Vec2>,
    pub colors: OverLife,
    pub sizes: OverLife,
    pub rotates: bool,
}

/// Mutable views of every particle array over one range, splittable.
struct Lanes<'a> {
    old_location: &'a mut [Vec3],
    location: &'a mut [Vec3],
    base_velocity: &'a mut [Vec3],
    velocity: &'a mut [Vec3],
    rotation: &'a mut [f32],
    rotation_rate: &'a mut [f32],
    base_size: &'a mut [Vec2],
    size: &'a mut [Vec2],
    base_color: &'a mut [Vec4],
    color: &'a mut [Vec4],
    relative_time: &'a mut [f32],
    one_over_max_lifetime: &'a mut [f32],
}

macro_rules! split_lanes {
    ($lanes:ident, $mid:ident, $($f:ident),+) => {{
        $(let $f = $lanes.$f.split_at_mut($mid);)+
        (Lanes { $($f: $f.0),+ }, Lanes { $($f: $f.1),+ })
    }};
}

impl<'a> Lanes<'a> {
    fn new(s: &'a mut ParticleStore, start: usize, end: usize) -> Self {
        Lanes {
            old_location: &mut s.old_location[start..end],
            location: &mut s.location[start..end],
            base_velocity: &mut s.base_velocity[start..end],
            velocity: &mut s.velocity[start..end],
            rotation: &mut s.rotation[start..end],
            rotation_rate: &mut s.rotation_rate[start..end],
            base_size: &mut s.base_size[start..end],
            size: &mut s.size[start..end],
            base_color: &mut s.base_color[start..end],
            color: &mut s.color[start..end],
            relative_time: &mut s.relative_time[start..end],
            one_over_max_lifetime: &mut s.one_over_max_lifetime[start..end],
        }
    }

    fn len(&self) -> usize {
        self.location.len()
    }

    fn split_at(self, mid: usize) -> (Lanes<'a>, Lanes<'a>) {
        split_lanes!(
            self,
            mid,
            old_location,
            location,
            base_velocity,
            velocity,
            rotation,
            rotation_rate,
            base_size,
            size,
            base_color,
            color,
            relative_time,
            one_over_max_lifetime
        )
    }

    /// Moves particle `from` into slot `to` (killing `to`).
    #[inline(always)]
    fn pull(&mut self, from: usize, to: usize) {
        self.old_location[to] = self.old_location[from];
        self.location[to] = self.location[from];
        self.size[to] = self.size[from];
        self.color[to] = self.color[from];
        self.base_velocity[to] = self.base_velocity[from];
        self.velocity[to] = self.velocity[from];
        self.rotation[to] = self.rotation[from];
        self.rotation_rate[to] = self.rotation_rate[from];
        self.base_size[to] = self.base_size[from];
        self.base_color[to] = self.base_color[from];
        self.relative_time[to] = self.relative_time[from];
        self.one_over_max_lifetime[to] = self.one_over_max_lifetime[from];
    }
}

/// Particles per chunk. The update compacts each chunk on its own, so the
/// chunk layout (not the thread count) decides where survivors end up; it
/// is fixed, which keeps serial and parallel ticks bit-identical.
pub(crate) const CHUNK: usize = 16 * 1024;

/// Updates every particle of `store` by one step (reading positions from
/// `old_location`, writing `location`) and removes those whose relative time
/// reached 1. Returns how many died. With `parallel`, chunks are spread over
/// the rayon pool; the result is bit-identical either way.
pub(crate) fn update_and_kill(
    store: &mut ParticleStore,
    p: &UpdateParams,
    parallel: bool,
) -> usize {
    let n = store.len();
    let lanes = Lanes::new(store, 0, n);
    let mut live = Vec::with_capacity(n.div_ceil(CHUNK));
    if parallel {
        update_chunks_parallel(lanes, p, &mut live);
    } else {
        let mut rest = lanes;
        while rest.len() > 0 {
            let mid = rest.len().min(CHUNK);
            let (chunk, tail) = rest.split_at(mid);
            live.push(dispatch(chunk, p));
            rest = tail;
        }
    }
    let survivors: usize = live.iter().sum();
    if survivors < n {
        close_gaps(store, &live, survivors);
    }
    n - survivors
}

fn update_chunks_parallel(lanes: Lanes, p: &UpdateParams, live: &mut Vec<usize>) {
    let chunks = lanes.len().div_ceil(CHUNK);
    if chunks <= 1 {
        if lanes.len() > 0 {
            live.push(dispatch(lanes, p));
        }
        return;
    }
    let (a, b) = lanes.split_at((chunks / 2) * CHUNK);
    let mut right = Vec::new();
    rayon::join(
        || update_chunks_parallel(a, p, live),
        || update_chunks_parallel(b, p, &mut right),
    );
    live.extend(right);
}

/// After chunk `c` kept `live[c]` particles at its front, moves the
/// survivors lying at or beyond `survivors` into the holes below it (both in
/// ascending order), so particles occupy `0..survivors` again. Moves only as
/// many particles as died, in contiguous runs.
fn close_gaps(store: &mut ParticleStore, live: &[usize], survivors: usize) {
    let n = store.len();
    let bounds = |c: usize| (c * CHUNK, ((c + 1) * CHUNK).min(n));
    let holes = live.iter().enumerate().filter_map(|(c, &l)| {
        let (s, e) = bounds(c);
        let (a, b) = (s + l, e.min(survivors));
        (a < b).then_some(a..b)
    });
    let mut sources = live
        .iter()
        .enumerate()
        .filter_map(|(c, &l)| {
            let (s, _) = bounds(c);
            let (a, b) = (s.max(survivors), s + l);
            (a < b).then_some(a..b)
        })
        .peekable();
    for mut hole in holes {
        while hole.start < hole.end {
            let Some(src) = sources.peek_mut() else {
                return;
            };
            let len = hole.len().min(src.len());
            let from = src.start..src.start + len;
            macro_rules! each {
                ($($f:ident),+) => {$( store.$f.copy_within(from.clone(), hole.start); )+};
            }
            each!(
                old_location,
                location,
                base_velocity,
                velocity,
                rotation,
                rotation_rate,
                base_size,
                size,
                base_color,
                color,
                relative_time,
                one_over_max_lifetime
            );
            hole.start += len;
            src.start += len;
            if src.start >= src.end {
                sources.next();
            }
        }
    }
    store.truncate(survivors);
}

fn dispatch(lanes: Lanes, p: &UpdateParams) -> usize {
    if p.rotates {
        dispatch_color::<true>(lanes, p)
    } else {
        dispatch_color::<false>(lanes, p)
    }
}

fn dispatch_color<const R: bool>(lanes: Lanes, p: &UpdateParams) -> usize {
    match p.colors.code() {
        OFF => dispatch_size::<R, OFF>(lanes, p),
        PER_PARTICLE => dispatch_size::<R, PER_PARTICLE>(lanes, p),
        _ => dispatch_size::<R, BAKED>(lanes, p),
    }
}

fn dispatch_size<const R: bool, const C: u8>(lanes: Lanes, p: &UpdateParams) -> usize {
    match p.sizes.code() {
        OFF => kernel::<R, C, OFF>(lanes, p),
        PER_PARTICLE => kernel::<R, C, PER_PARTICLE>(lanes, p),
        _ => kernel::<R, C, BAKED>(lanes, p),
    }
}

/// Motion constants for one step, with the acceleration folded in.
#[derive(Clone, Copy)]
struct Motion {
    c1: f32,
    decay: f32,
    a_c1: Vec3,
    a_c2: Vec3,
}

impl Motion {
    #[inline(always)]
    fn new(step: Step, acceleration: Vec3) -> Self {
        Motion {
            c1: step.c1,
            decay: step.decay,
            a_c1: acceleration * step.c1,
            a_c2: acceleration * step.c2,
        }
    }

    /// `(p', v')` from the position at the start of the step and the velocity.
    #[inline(always)]
    fn advance(&self, old: Vec3, v: Vec3) -> (Vec3, Vec3) {
        (old + v * self.c1 + self.a_c2, v * self.decay + self.a_c1)
    }
}

/// The current value of an over-life property at relative time `t`.
#[inline(always)]
fn over_life<T: crate::DistributionValue, const MODE: u8>(lut: &CurveLut<T>, base: T, t: f32) -> T {
    match MODE {
        PER_PARTICLE => T::scale(base, lut.sample_unit(t)),
        BAKED => lut.sample_unit(t),
        _ => base,
    }
}

/// Advances one particle that is not (yet) in a store: a fresh spawn, by
/// its share `p.step.dt` of the tick. Same arithmetic as the chunk kernel.
/// Returns whether it is still alive.
pub(crate) fn advance_spawned(q: &mut Particle, p: &UpdateParams) -> bool {
    fn with_modes<const C: u8, const S: u8>(q: &mut Particle, p: &UpdateParams) {
        q.color = over_life::<Vec4, C>(p.color_over_life, q.base_color, q.relative_time);
        q.size = over_life::<Vec2, S>(p.size_over_life, q.base_size, q.relative_time);
    }
    let dt = p.step.dt;
    let t = q.relative_time + q.one_over_max_lifetime * dt;
    if t >= 1.0 {
        return false;
    }
    q.relative_time = t;
    (q.location, q.velocity) =
        Motion::new(p.step, p.acceleration).advance(q.old_location, q.velocity);
    if p.rotates {
        q.rotation += q.rotation_rate * dt;
    }
    match (p.colors.code(), p.sizes.code()) {
        (OFF, OFF) => with_modes::<OFF, OFF>(q, p),
        (OFF, PER_PARTICLE) => with_modes::<OFF, PER_PARTICLE>(q, p),
        (OFF, _) => with_modes::<OFF, BAKED>(q, p),
        (PER_PARTICLE, OFF) => with_modes::<PER_PARTICLE, OFF>(q, p),
        (PER_PARTICLE, PER_PARTICLE) => with_modes::<PER_PARTICLE, PER_PARTICLE>(q, p),
        (PER_PARTICLE, _) => with_modes::<PER_PARTICLE, BAKED>(q, p),
        (_, OFF) => with_modes::<BAKED, OFF>(q, p),
        (_, PER_PARTICLE) => with_modes::<BAKED, PER_PARTICLE>(q, p),
        (_, _) => with_modes::<BAKED, BAKED>(q, p),
    }
    true
}

/// The hot loop over one chunk: one fused pass, then compaction.
///
/// 1. Update: for each particle, age it, integrate, rotate, and evaluate the
///    over-life curves, all in one straight loop. Every array is streamed
///    once (read and/or written at the same index), with no branches and no
///    bounds checks; a particle that reaches relative time 1 is updated like
///    the others and only counted. Separate passes per module cost more: the
///    relative times are re-read by each curve pass, and each short loop
///    starts its own set of memory streams.
/// 2. Kill, only if something died: the pass listed the dead (one store per
///    particle, no branch); from the highest down, each is replaced by the
///    chunk's last particle. About one particle in a hundred dies per tick,
///    so this moves little, and nothing is scanned twice.
///
/// Returns how many particles the chunk kept (at its front).
#[inline(never)]
fn kernel<const ROTATE: bool, const COLOR: u8, const SIZE: u8>(
    mut l: Lanes,
    p: &UpdateParams,
) -> usize {
    let dt = p.step.dt;
    let motion = Motion::new(p.step, p.acceleration);
    let (color_lut, size_lut) = (p.color_over_life, p.size_over_life);

    let n = l.len();
    // Every slice exactly `n` long, so indexing below is not bounds checked.
    let relative_time = &mut l.relative_time[..n];
    let one_over_max_lifetime = &l.one_over_max_lifetime[..n];
    let location = &mut l.location[..n];
    let old_location = &l.old_location[..n];
    let velocity = &mut l.velocity[..n];
    let rotation = &mut l.rotation[..n];
    let rotation_rate = &l.rotation_rate[..n];
    let color = &mut l.color[..n];
    let base_color = &l.base_color[..n];
    let size = &mut l.size[..n];
    let base_size = &l.base_size[..n];
    // Indices of the dead, ascending; written every iteration (a store
    // instead of a branch), kept only where `dead` then advances.
    let mut dead_at = [0u32; DEAD_LIST];
    let mut dead = 0usize;
    for i in 0..n {
        let t = relative_time[i] + one_over_max_lifetime[i] * dt;
        relative_time[i] = t;
        dead_at[dead & (DEAD_LIST - 1)] = i as u32;
        dead += usize::from(t >= 1.0);
        (location[i], velocity[i]) = motion.advance(old_location[i], velocity[i]);
        if ROTATE {
            rotation[i] += rotation_rate[i] * dt;
        }
        if COLOR != OFF {
            color[i] = over_life::<Vec4, COLOR>(color_lut, base_color[i], t);
        }
        if SIZE != OFF {
            size[i] = over_life::<Vec2, SIZE>(size_lut, base_size[i], t);
        }
    }
    if dead == 0 {
        return n;
    }

    let mut n = n;
    if dead < DEAD_LIST {
        // Highest first: everything above the current index is alive by
        // then, so the last particle can fill its slot.
        for &d in dead_at[..dead].iter().rev() {
            n -= 1;
            let d = d as usize;
            if d < n {
                l.pull(n, d);
            }
        }
    } else {
        // Too many deaths to list: walk the chunk, replacing each dead
        // particle by the last one, which is examined next.
        let mut i = 0;
        while i < n {
            if l.relative_time[i] >= 1.0 {
                n -= 1;
                if i < n {
                    l.pull(n, i);
                }
            } else {
                i += 1;
            }
        }
    }
    n
}

/// Capacity of the kernel's list of dead particles (a power of two, a few
/// KiB of stack): about 6% of a chunk, where a steady emitter loses ~1% per
/// tick. A chunk with more deaths falls back to a scan.
const DEAD_LIST: usize = 1024;

#[cfg(test)]
mod tests {
    use super::*;

    /// Ticks `n` particles whose relative times `age(i)` gives (lifetime 1 s,
    /// so a particle dies when its time plus 0.1 reaches 1), serially and in
    /// parallel, and checks exactly the survivors are kept, whole.
    fn check_kill(n: usize, age: impl Fn(usize) -> f32) {
        use crate::particle::Particle;
        let identity4 = CurveLut::bake(&crate::Distribution::Constant(Vec4::ONE));
        let identity2 = CurveLut::bake(&crate::Distribution::Constant(Vec2::ONE));
        let mut store = ParticleStore::default();
        for i in 0..n {
            // Every field carries the particle's id, to see them move together.
            let id = i as f32;
            store.push(Particle {
                old_location: Vec3::splat(id),
                location: Vec3::splat(id),
                base_velocity: Vec3::ZERO,
                velocity: Vec3::ZERO,
                rotation: id,
                rotation_rate: 0.0,
                base_size: Vec2::splat(id),
                size: Vec2::splat(id),
                base_color: Vec4::splat(id),
                color: Vec4::splat(id),
                relative_time: age(i),
                one_over_max_lifetime: 1.0,
            });
        }
        let mut expected: Vec<u32> = (0..n)
            .filter(|&i| store.relative_times()[i] + 0.1 < 1.0)
            .map(|i| i as u32)
            .collect();
        let params = UpdateParams {
            step: Step::new(0.1, 0.0),
            acceleration: Vec3::ZERO,
            color_over_life: &identity4,
            size_over_life: &identity2,
            colors: OverLife::Off,
            sizes: OverLife::Off,
            rotates: false,
        };
        let mut parallel = store.clone();
        store.swap_location_buffers();
        parallel.swap_location_buffers();
        let dead = update_and_kill(&mut store, &params, false);
        update_and_kill(&mut parallel, &params, true);
        assert_eq!(dead, n - expected.len());
        assert!(store.bitwise_eq(&parallel));
        let mut got: Vec<u32> = store.locations().iter().map(|p| p.x as u32).collect();
        got.sort_unstable();
        expected.sort_unstable();
        assert_eq!(got, expected);
        for i in 0..store.len() {
            let id = store.locations()[i].x;
            let p = store.get(i);
            assert_eq!(p.old_location, Vec3::splat(id), "fields moved together");
            assert_eq!(
                (p.rotation, p.size, p.color),
                (id, Vec2::splat(id), Vec4::splat(id))
            );
            assert_eq!(p.base_size, Vec2::splat(id));
            assert_eq!(p.base_color, Vec4::splat(id));
            assert!(p.relative_time < 1.0);
        }
    }

    #[test]
    fn fused_kill_keeps_exactly_the_survivors_across_chunks() {
        let mut rng = crate::rng::Rng::new(5, 5);
        let many: Vec<f32> = (0..3 * CHUNK + 100)
            .map(|_| rng.range_f32(0.0, 1.0))
            .collect();
        // ~10% die: more than the dead list holds, so chunks are scanned;
        // a run of dead particles makes holes of every shape.
        check_kill(many.len(), |i| {
            if (CHUNK..CHUNK + 500).contains(&i) {
                0.95
            } else {
                many[i]
            }
        });
        // ~0.5% die: the listed path.
        check_kill(many.len(), |i| many[i] * 0.905);
        // The list's edge: one less than it holds, exactly as many, and dead
        // particles at a chunk's end (the last one, and a run of them).
        for deaths in [DEAD_LIST - 1, DEAD_LIST] {
            check_kill(CHUNK + 10, |i| {
                if i % 7 == 3 && i / 7 < deaths {
                    0.95
                } else {
                    0.0
                }
            });
        }
        for every in [50, 5] {
            // Listed (1 in 50) and scanned (1 in 5): the next-to-last dead
            // and the last alive, then a run of dead ending the chunk.
            let last = |i: usize| i % CHUNK == CHUNK - 2;
            let run = |i: usize| i % CHUNK >= CHUNK - 3;
            for end in [&last as &dyn Fn(usize) -> bool, &run] {
                check_kill(
                    2 * CHUNK,
                    |i| if end(i) || i % every == 0 { 0.95 } else { 0.5 },
                );
            }
        }
    }

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
