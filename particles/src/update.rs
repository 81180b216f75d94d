//! The per-tick update: every live particle, every tick, in chunks.
//!
//! This is the cost of the particle system. Per particle it streams the
//! relative time and lifetime, the position (read the old buffer, write the
//! new), the velocity, and — only when the emitter has that module — the
//! rotation. The kernel ([`crate::kernel`]) is monomorphised over it, so an
//! emitter that does not rotate pays nothing for rotation. Colour and size
//! over life are not updated here: they are functions of the spawn value
//! and the age, evaluated where they are read ([`crate::OverLife`]).
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
//! Work is cut into fixed chunks of [`CHUNK`] particles. The kernel updates a
//! chunk and removes its dead (each replaced by the chunk's last particle);
//! then [`close_gaps`] moves survivors from the end into the holes the
//! chunks left. Chunks are independent, so they can run on the rayon pool,
//! and the result is bit-identical to a serial tick. Moving a particle costs
//! a cache miss per field at a random slot, so fields every particle of the
//! emitter holds the same value in ([`Varying`]) are not moved.
//!
//! ## Cost
//!
//! The update is bound by memory bandwidth. Per particle it moves the age,
//! the position (the written buffer read for ownership first) and the
//! velocity, about twice the bytes of a bare `p += v * dt` over two `Vec3`
//! arrays: the floor `benches/particles.rs` measures it against. Colour and
//! size are not among them ([`crate::OverLife`]).

use crate::kernel::kernel;
use crate::particle::ParticleStore;

pub(crate) use crate::step::{Lanes, Step, UpdateParams, Varying};

/// Particles per chunk. The update compacts each chunk on its own, so the
/// chunk layout (not the thread count) decides where survivors end up; it
/// is fixed, which keeps serial and parallel ticks bit-identical.
pub(crate) const CHUNK: usize = 16 * 1024;

/// Updates every particle of `store` by one step (reading positions from
/// `old_location`, writing `location`) and removes those whose relative time
/// reached 1. Returns how many died. With `parallel`, chunks are spread over
/// the rayon pool; the result is bit-identical either way.
pub(crate) fn update_and_kill(store: &mut ParticleStore, p: &UpdateParams, parallel: bool) -> usize {
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
        close_gaps(store, &live, survivors, p.varying);
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
    rayon::join(|| update_chunks_parallel(a, p, live), || update_chunks_parallel(b, p, &mut right));
    live.extend(right);
}

/// After chunk `c` kept `live[c]` particles at its front, moves the
/// survivors lying at or beyond `survivors` into the holes below it (both in
/// ascending order), so particles occupy `0..survivors` again. Moves only as
/// many particles as died, in contiguous runs.
fn close_gaps(store: &mut ParticleStore, live: &[usize], survivors: usize, varying: Varying) {
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
            macro_rules! each_if {
                ($($f:ident),+) => {$( if varying.$f { each!($f); } )+};
            }
            each!(old_location, location, base_velocity, velocity, relative_time);
            each_if!(rotation, rotation_rate, base_size, base_color, one_over_max_lifetime, sub_image_seed);
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
        kernel::<true>(lanes, p)
    } else {
        kernel::<false>(lanes, p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::DEAD_LIST;
    use glam::{Vec2, Vec3, Vec4};

    /// Ticks `n` particles whose relative times `age(i)` gives (lifetime 1 s,
    /// so a particle dies when its time plus 0.1 reaches 1), serially and in
    /// parallel, and checks exactly the survivors are kept, whole.
    fn check_kill(n: usize, age: impl Fn(usize) -> f32) {
        check_kill_moving(n, age, Varying::ALL);
    }

    /// The lifetime field's value for particle `id` (dying depends on it,
    /// so it only takes a few values near 1).
    fn inv_lifetime(id: f32) -> f32 {
        1.0 + (id as u32 % 64) as f32 / 1024.0
    }

    /// [`check_kill`] with only `varying`'s fields differing between
    /// particles (the others hold 7 everywhere, and must still do after).
    fn check_kill_moving(n: usize, age: impl Fn(usize) -> f32, varying: Varying) {
        use crate::particle::Particle;
        let pick = |moves: bool, id: f32| if moves { id } else { 7.0 };
        let mut store = ParticleStore::default();
        for i in 0..n {
            // Every field carries the particle's id, to see them move together.
            let id = i as f32;
            store.push(Particle {
                old_location: Vec3::splat(id),
                location: Vec3::splat(id),
                base_velocity: Vec3::splat(id),
                velocity: Vec3::ZERO,
                rotation: pick(varying.rotation, id),
                rotation_rate: pick(varying.rotation_rate, id),
                base_size: Vec2::splat(pick(varying.base_size, id)),
                base_color: Vec4::splat(pick(varying.base_color, id)),
                relative_time: age(i),
                one_over_max_lifetime: if varying.one_over_max_lifetime { inv_lifetime(id) } else { 1.0 },
                sub_image_seed: if varying.sub_image_seed { i as u32 } else { 7 },
            });
        }
        let p = store.clone();
        let mut expected: Vec<u32> =
            (0..n).filter(|&i| p.relative_times()[i] + p.one_over_max_lifetimes()[i] * 0.1 < 1.0).map(|i| i as u32).collect();
        let params = UpdateParams { step: Step::new(0.1, 0.0), acceleration: Vec3::ZERO, rotates: false, varying };
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
            let at = |moves| pick(moves, id);
            assert_eq!(p.old_location, Vec3::splat(id), "fields moved together");
            assert_eq!(p.base_velocity, Vec3::splat(id));
            assert_eq!((p.rotation, p.rotation_rate), (at(varying.rotation), at(varying.rotation_rate)));
            assert_eq!(p.base_size, Vec2::splat(at(varying.base_size)));
            assert_eq!(p.base_color, Vec4::splat(at(varying.base_color)));
            if varying.one_over_max_lifetime {
                assert_eq!(p.one_over_max_lifetime, inv_lifetime(id));
            }
            assert_eq!(p.sub_image_seed, if varying.sub_image_seed { id as u32 } else { 7 });
            assert!(p.relative_time < 1.0);
        }
    }

    #[test]
    fn compaction_moves_the_varying_fields_and_leaves_uniform_ones() {
        let mut rng = renderer::Rng::with_stream(6, 6);
        let ages: Vec<f32> = (0..2 * CHUNK + 7).map(|_| rng.range_f32(0.0, 0.95)).collect();
        let none = Varying {
            rotation: false,
            rotation_rate: false,
            base_size: false,
            base_color: false,
            one_over_max_lifetime: false,
            sub_image_seed: false,
        };
        let some = Varying { rotation_rate: true, base_color: true, one_over_max_lifetime: true, sub_image_seed: true, ..none };
        for varying in [none, some, Varying::ALL] {
            // Listed deaths (~1 in 30 per chunk: fewer than the list holds)
            // and scanned ones (~1 in 3), both closed up across chunks.
            check_kill_moving(ages.len(), |i| ages[i], varying);
            check_kill_moving(ages.len(), |i| 0.7 + ages[i] * 0.3 / 0.93, varying);
        }
    }

    #[test]
    fn fused_kill_keeps_exactly_the_survivors_across_chunks() {
        let mut rng = renderer::Rng::with_stream(5, 5);
        let many: Vec<f32> = (0..3 * CHUNK + 100).map(|_| rng.range_f32(0.0, 1.0)).collect();
        // ~10% die: more than the dead list holds, so chunks are scanned;
        // a run of dead particles makes holes of every shape.
        check_kill(many.len(), |i| if (CHUNK..CHUNK + 500).contains(&i) { 0.95 } else { many[i] });
        // ~0.5% die: the listed path.
        check_kill(many.len(), |i| many[i] * 0.905);
        // The list's edge: one less than it holds, exactly as many, and dead
        // particles at a chunk's end (the last one, and a run of them).
        for deaths in [DEAD_LIST - 1, DEAD_LIST] {
            check_kill(CHUNK + 10, |i| if i % 7 == 3 && i / 7 < deaths { 0.95 } else { 0.0 });
        }
        for every in [50, 5] {
            // Listed (1 in 50) and scanned (1 in 5): the next-to-last dead
            // and the last alive, then a run of dead ending the chunk.
            let last = |i: usize| i % CHUNK == CHUNK - 2;
            let run = |i: usize| i % CHUNK >= CHUNK - 3;
            for end in [&last as &dyn Fn(usize) -> bool, &run] {
                check_kill(2 * CHUNK, |i| if end(i) || i % every == 0 { 0.95 } else { 0.5 });
            }
        }
    }

    #[test]
    fn step_without_drag_is_the_constant_acceleration_formula() {
        let s = Step::new(0.25, 0.0);
        assert_eq!(s.decay, 1.0);
        assert_eq!(s.c1, 0.25);
        assert_eq!(s.c2, 0.03125);
        // The no-drag shortcut is the series at k = 0, bit for bit.
        for dt in [1.0 / 60.0, 0.1, 1e-7, 3.0] {
            let t = f64::from(dt);
            let s = Step::new(dt, 0.0);
            assert_eq!(s.c1, (t * (1.0 - 0.0 / 2.0 + 0.0 / 6.0)) as f32);
            assert_eq!(s.c2, (t * t * (0.5 - 0.0 / 6.0 + 0.0 / 24.0)) as f32);
        }
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
