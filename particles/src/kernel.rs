//! The update kernel: one chunk of particles, one step, in SIMD-friendly
//! loops.
//!
//! [`crate::update`] cuts the particles into chunks and closes the gaps the
//! dead leave; this file is the loop that runs over every live particle
//! every tick, so it is written for the machine:
//!
//! * **Each array is streamed once.** A chunk is walked in blocks of
//!   [`BLOCK`] particles (a few KiB per array, in L1); within a block, one
//!   loop per group of fields (age, motion, rotation) reads and writes its
//!   arrays once. Colour and size over life are not the tick's: they are
//!   evaluated when read ([`crate::OverLife`]).
//! * **Four particles per instruction.** The age loop works on `Vec4`s of
//!   relative times (four particles per SSE operation), and the motion loop
//!   on the position and velocity arrays seen as flat `f32`s, twelve floats
//!   (four particles) as three `Vec4`s. SIMD lanes do exactly the arithmetic
//!   of the scalar code that handles a block's last particles and fresh
//!   spawns ([`advance_spawned`]), so the result does not depend on where a
//!   particle falls in a block.
//! * **No branches and no bounds checks** in the loops: slices are cut to
//!   the block's length up front, and modules an emitter lacks are removed
//!   at compile time (the kernel is monomorphised over them).
//! * **Killing is deferred.** A particle whose relative time reaches 1 is
//!   updated like the others and its index listed (a rare branch, taken for
//!   about one group of four in twenty-five); after the blocks, each listed
//!   particle is replaced by the chunk's last. Moving a particle writes its
//!   spawn values, the fields the update never streams, at a random slot:
//!   the block loop reads them for its dead ahead of time, so the
//!   compaction finds them in cache.

use glam::{Vec3, Vec4};

use crate::particle::Particle;
use crate::step::{Lanes, Step, UpdateParams, Varying};

/// Particles per block: the arrays' slices of a block stay in L1 between the
/// block's loops.
const BLOCK: usize = 1024;

/// Capacity of the kernel's list of dead particles (a power of two, a few
/// KiB of stack): about 6% of a chunk, where a steady emitter loses ~1% per
/// tick. A chunk with more deaths falls back to a scan.
pub(crate) const DEAD_LIST: usize = 1024;

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
        Motion { c1: step.c1, decay: step.decay, a_c1: acceleration * step.c1, a_c2: acceleration * step.c2 }
    }

    /// `(p', v')` from the position at the start of the step and the velocity.
    #[inline(always)]
    fn advance(&self, old: Vec3, v: Vec3) -> (Vec3, Vec3) {
        (old + v * self.c1 + self.a_c2, v * self.decay + self.a_c1)
    }
}

/// Advances one particle that is not (yet) in a store: a fresh spawn, by
/// its share `p.step.dt` of the tick. Same arithmetic as the chunk kernel.
/// Returns whether it is still alive.
pub(crate) fn advance_spawned(q: &mut Particle, p: &UpdateParams) -> bool {
    let dt = p.step.dt;
    let t = q.relative_time + q.one_over_max_lifetime * dt;
    if t >= 1.0 {
        return false;
    }
    q.relative_time = t;
    (q.location, q.velocity) = Motion::new(p.step, p.acceleration).advance(q.old_location, q.velocity);
    if p.rotates {
        q.rotation += q.rotation_rate * dt;
    }
    true
}

/// Indices of a chunk's dead particles, ascending, while they fit.
struct DeadList {
    at: [u32; DEAD_LIST],
    /// How many died (may exceed the list's capacity).
    count: usize,
}

impl DeadList {
    #[inline(always)]
    fn push(&mut self, i: usize) {
        // Past the capacity entries are overwritten, and `count` tells.
        self.at[self.count & (DEAD_LIST - 1)] = i as u32;
        self.count += 1;
    }

    fn complete(&self) -> Option<&[u32]> {
        (self.count <= DEAD_LIST).then(|| &self.at[..self.count])
    }
}

/// Updates one chunk (see the module docs) and removes its dead. Returns how
/// many particles the chunk kept (at its front).
#[inline(never)]
pub(crate) fn kernel<const ROTATE: bool>(mut l: Lanes, p: &UpdateParams) -> usize {
    let dt = p.step.dt;
    let motion = Motion::new(p.step, p.acceleration);
    let mut dead = DeadList { at: [0; DEAD_LIST], count: 0 };

    let n = l.len();
    let mut start = 0;
    while start < n {
        let end = (start + BLOCK).min(n);
        let listed_before = dead.count;
        age(&mut l.relative_time[start..end], &l.one_over_max_lifetime[start..end], dt, start, &mut dead);
        // The spawn values (velocity, and size and colour where they
        // differ between particles) are the fields the update does not
        // stream, so they are cold where a particle died; read them now,
        // while the block's loops run, so that the compaction's writes to
        // them later hit the cache.
        if let Some(listed) = dead.complete() {
            let mut touched = 0u32;
            for &d in &listed[listed_before..] {
                let d = d as usize;
                touched ^= l.base_velocity[d].x.to_bits();
                if p.varying.base_size {
                    touched ^= l.base_size[d].x.to_bits();
                }
                if p.varying.base_color {
                    touched ^= l.base_color[d].x.to_bits();
                }
            }
            std::hint::black_box(touched);
        }
        integrate(&mut l.location[start..end], &l.old_location[start..end], &mut l.velocity[start..end], &motion);
        if ROTATE {
            let rate = &l.rotation_rate[start..end];
            for (r, rate) in l.rotation[start..end].iter_mut().zip(rate) {
                *r += rate * dt;
            }
        }
        start = end;
    }
    if dead.count == 0 {
        return n;
    }

    compact(&mut l, n, &dead, p.varying)
}

/// Removes the chunk's dead, each replaced by the chunk's last particle;
/// returns the survivors' count. Out of line: the loops above are the
/// kernel's cost, this runs for the few that died.
#[inline(never)]
fn compact(l: &mut Lanes, mut n: usize, dead: &DeadList, varying: Varying) -> usize {
    if let Some(listed) = dead.complete() {
        // Highest first: everything above the current index is alive by
        // then, so the last particle can fill its slot.
        for &d in listed.iter().rev() {
            n -= 1;
            let d = d as usize;
            if d < n {
                l.pull(n, d, varying);
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
                    l.pull(n, i, varying);
                }
            } else {
                i += 1;
            }
        }
    }
    n
}

/// Ages a block (`first` is its index in the chunk) and lists its dead.
#[inline(always)]
fn age(relative_time: &mut [f32], one_over_max_lifetime: &[f32], dt: f32, first: usize, dead: &mut DeadList) {
    let n = relative_time.len();
    let inv = &one_over_max_lifetime[..n];
    let quads = relative_time.chunks_exact_mut(4).zip(inv.chunks_exact(4));
    for (q, (rt, inv)) in quads.enumerate() {
        let t = Vec4::from_slice(rt) + Vec4::from_slice(inv) * dt;
        t.write_to_slice(rt);
        let died = t.cmpge(Vec4::ONE).bitmask();
        if died != 0 {
            for k in 0..4 {
                if died & (1 << k) != 0 {
                    dead.push(first + 4 * q + k);
                }
            }
        }
    }
    for i in n - n % 4..n {
        let t = relative_time[i] + inv[i] * dt;
        relative_time[i] = t;
        if t >= 1.0 {
            dead.push(first + i);
        }
    }
}

/// `p' = p + v·c1 + a·c2`, `v' = v·decay + a·c1` over a block. Four
/// particles' positions are twelve floats, so the acceleration terms repeat
/// with period three in `Vec4` lanes.
#[inline(always)]
fn integrate(location: &mut [Vec3], old_location: &[Vec3], velocity: &mut [Vec3], m: &Motion) {
    let n = location.len();
    let (old_location, velocity) = (&old_location[..n], &mut velocity[..n]);
    let lanes = |v: Vec3| [Vec4::new(v.x, v.y, v.z, v.x), Vec4::new(v.y, v.z, v.x, v.y), Vec4::new(v.z, v.x, v.y, v.z)];
    let (a_c1, a_c2) = (lanes(m.a_c1), lanes(m.a_c2));
    {
        let p: &mut [f32] = bytemuck::cast_slice_mut(&mut *location);
        let p0: &[f32] = bytemuck::cast_slice(old_location);
        let v: &mut [f32] = bytemuck::cast_slice_mut(&mut *velocity);
        for ((p, p0), v) in p.chunks_exact_mut(12).zip(p0.chunks_exact(12)).zip(v.chunks_exact_mut(12)) {
            for k in 0..3 {
                let r = 4 * k..4 * k + 4;
                let vk = Vec4::from_slice(&v[r.clone()]);
                (Vec4::from_slice(&p0[r.clone()]) + vk * m.c1 + a_c2[k]).write_to_slice(&mut p[r.clone()]);
                (vk * m.decay + a_c1[k]).write_to_slice(&mut v[r]);
            }
        }
    }
    for i in n - n % 4..n {
        (location[i], velocity[i]) = m.advance(old_location[i], velocity[i]);
    }
}
