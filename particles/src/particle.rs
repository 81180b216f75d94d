//! Particle storage: one emitter's live particles, structure of arrays.
//!
//! Holds the fields of UE's `FBaseParticle`, but as one contiguous array per
//! field instead of one struct per particle. The per-tick update touches most
//! fields of every particle once, so it is limited by memory bandwidth; with
//! one array per field each pass streams exactly the bytes it uses, loops
//! vectorise, and the dynamic-data copy for the render thread is a handful of
//! `memcpy`s. Only the game thread (the owning [`crate::EmitterInstance`])
//! touches this memory; the render thread gets copies.
//!
//! Naming follows UE: `base_*` is the value a particle was spawned with
//! (initial modules). `velocity` is the integrated velocity (acceleration,
//! drag, collisions); `base_velocity` keeps the spawn velocity.
//!
//! The current size and colour (UE's `Size` and `Color`) are not stored:
//! they are the base value times the over-life curve at the particle's
//! relative time, a function of fields that are stored, so they are
//! evaluated where they are read ([`crate::OverLife`] explains why);
//! [`crate::EmitterInstance::current_sizes`] and
//! [`crate::EmitterInstance::current_colors`] give them.
//!
//! Live particles occupy indices `0..len` in every array; killing one moves
//! the last particle into its slot (swap-remove), so order is not stable.
//!
//! `old_location` and `location` are two buffers that the update swaps
//! instead of copying: the update reads last tick's positions from one and
//! writes this tick's into the other, which then becomes `location`.

use glam::{Vec2, Vec3, Vec4};

/// One particle's fields, for spawning and for reading a single particle.
/// The simulation itself never builds these; it works on the arrays.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Particle {
    /// Position at the previous tick (or at spawn).
    pub old_location: Vec3,
    /// World-space position.
    pub location: Vec3,
    /// Velocity at spawn.
    pub base_velocity: Vec3,
    /// Current velocity.
    pub velocity: Vec3,
    /// Sprite rotation in radians.
    pub rotation: f32,
    /// Radians per second.
    pub rotation_rate: f32,
    /// Size at spawn (width, height).
    pub base_size: Vec2,
    /// Colour at spawn (linear RGBA).
    pub base_color: Vec4,
    /// Age over lifetime, in `[0, 1)` while alive.
    pub relative_time: f32,
    /// `1 / lifetime`; 0 for particles that never age.
    pub one_over_max_lifetime: f32,
    /// What a random sub-image index is drawn from ([`crate::SubUv`]'s
    /// module docs); 0 unless the emitter has one.
    pub sub_image_seed: u32,
}

/// Live particles of one emitter, one array per field; see the module docs.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ParticleStore {
    pub(crate) old_location: Vec<Vec3>,
    pub(crate) location: Vec<Vec3>,
    pub(crate) base_velocity: Vec<Vec3>,
    pub(crate) velocity: Vec<Vec3>,
    pub(crate) rotation: Vec<f32>,
    pub(crate) rotation_rate: Vec<f32>,
    pub(crate) base_size: Vec<Vec2>,
    pub(crate) base_color: Vec<Vec4>,
    pub(crate) relative_time: Vec<f32>,
    pub(crate) one_over_max_lifetime: Vec<f32>,
    pub(crate) sub_image_seed: Vec<u32>,
}

/// Applies `$op` to every field array.
macro_rules! each_field {
    ($self:ident, $v:ident => $op:expr) => {{
        {
            let $v = &mut $self.old_location;
            $op;
        }
        {
            let $v = &mut $self.location;
            $op;
        }
        {
            let $v = &mut $self.base_velocity;
            $op;
        }
        {
            let $v = &mut $self.velocity;
            $op;
        }
        {
            let $v = &mut $self.rotation;
            $op;
        }
        {
            let $v = &mut $self.rotation_rate;
            $op;
        }
        {
            let $v = &mut $self.base_size;
            $op;
        }
        {
            let $v = &mut $self.base_color;
            $op;
        }
        {
            let $v = &mut $self.relative_time;
            $op;
        }
        {
            let $v = &mut $self.one_over_max_lifetime;
            $op;
        }
        {
            let $v = &mut $self.sub_image_seed;
            $op;
        }
    }};
}

impl ParticleStore {
    /// Live particle count.
    #[inline]
    pub fn len(&self) -> usize {
        self.location.len()
    }

    /// No live particles.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.location.is_empty()
    }

    /// Makes room for `additional` more particles in every array.
    pub fn reserve(&mut self, additional: usize) {
        each_field!(self, v => v.reserve(additional));
    }

    /// Removes every particle.
    pub fn clear(&mut self) {
        each_field!(self, v => v.clear());
    }

    /// Appends a particle.
    pub fn push(&mut self, p: Particle) {
        self.old_location.push(p.old_location);
        self.location.push(p.location);
        self.base_velocity.push(p.base_velocity);
        self.velocity.push(p.velocity);
        self.rotation.push(p.rotation);
        self.rotation_rate.push(p.rotation_rate);
        self.base_size.push(p.base_size);
        self.base_color.push(p.base_color);
        self.relative_time.push(p.relative_time);
        self.one_over_max_lifetime.push(p.one_over_max_lifetime);
        self.sub_image_seed.push(p.sub_image_seed);
    }

    /// Particle `i` as a struct. Panics if `i >= len()`.
    pub fn get(&self, i: usize) -> Particle {
        Particle {
            old_location: self.old_location[i],
            location: self.location[i],
            base_velocity: self.base_velocity[i],
            velocity: self.velocity[i],
            rotation: self.rotation[i],
            rotation_rate: self.rotation_rate[i],
            base_size: self.base_size[i],
            base_color: self.base_color[i],
            relative_time: self.relative_time[i],
            one_over_max_lifetime: self.one_over_max_lifetime[i],
            sub_image_seed: self.sub_image_seed[i],
        }
    }

    /// Kills particle `i` by moving the last particle into its slot.
    /// Panics if `i >= len()`.
    pub fn swap_remove(&mut self, i: usize) {
        each_field!(self, v => { v.swap_remove(i); });
    }

    /// Keeps the first `len` particles.
    pub(crate) fn truncate(&mut self, len: usize) {
        each_field!(self, v => v.truncate(len));
    }

    /// Kills every particle whose relative time reached 1 (the marker a
    /// collision or kill volume sets; age is handled inside the update).
    ///
    /// Walks backwards so the particle swapped into a freed slot has already
    /// been checked. Reads only the relative-time array unless something
    /// dies.
    pub(crate) fn kill_expired(&mut self) -> usize {
        let before = self.len();
        let mut i = before;
        while i > 0 {
            i -= 1;
            if self.relative_time[i] >= 1.0 {
                self.swap_remove(i);
            }
        }
        before - self.len()
    }

    /// Swaps the position buffers: `old_location` becomes last tick's
    /// `location`, and `location` becomes scratch for the update to fill.
    #[inline]
    pub(crate) fn swap_location_buffers(&mut self) {
        std::mem::swap(&mut self.location, &mut self.old_location);
    }

    /// Positions at the previous tick.
    pub fn old_locations(&self) -> &[Vec3] {
        &self.old_location
    }
    /// World-space positions.
    pub fn locations(&self) -> &[Vec3] {
        &self.location
    }
    /// Spawn velocities.
    pub fn base_velocities(&self) -> &[Vec3] {
        &self.base_velocity
    }
    /// Current velocities.
    pub fn velocities(&self) -> &[Vec3] {
        &self.velocity
    }
    /// Rotations in radians.
    pub fn rotations(&self) -> &[f32] {
        &self.rotation
    }
    /// Rotation rates in radians per second.
    pub fn rotation_rates(&self) -> &[f32] {
        &self.rotation_rate
    }
    /// Spawn sizes.
    pub fn base_sizes(&self) -> &[Vec2] {
        &self.base_size
    }
    /// Spawn colours.
    pub fn base_colors(&self) -> &[Vec4] {
        &self.base_color
    }
    /// Relative times in `[0, 1)`.
    pub fn relative_times(&self) -> &[f32] {
        &self.relative_time
    }
    /// `1 / lifetime` per particle.
    pub fn one_over_max_lifetimes(&self) -> &[f32] {
        &self.one_over_max_lifetime
    }
    /// Random sub-image seeds (all 0 unless the emitter draws its
    /// sub-image index at random).
    pub fn sub_image_seeds(&self) -> &[u32] {
        &self.sub_image_seed
    }

    /// True when both stores hold the same particles in the same order with
    /// identical bits (NaN-safe, unlike `==`).
    pub fn bitwise_eq(&self, other: &ParticleStore) -> bool {
        fn bits<T: bytemuck::Pod>(a: &[T]) -> &[u8] {
            bytemuck::cast_slice(a)
        }
        bits(&self.old_location) == bits(&other.old_location)
            && bits(&self.location) == bits(&other.location)
            && bits(&self.base_velocity) == bits(&other.base_velocity)
            && bits(&self.velocity) == bits(&other.velocity)
            && bits(&self.rotation) == bits(&other.rotation)
            && bits(&self.rotation_rate) == bits(&other.rotation_rate)
            && bits(&self.base_size) == bits(&other.base_size)
            && bits(&self.base_color) == bits(&other.base_color)
            && bits(&self.relative_time) == bits(&other.relative_time)
            && bits(&self.one_over_max_lifetime) == bits(&other.one_over_max_lifetime)
            && self.sub_image_seed == other.sub_image_seed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn particle(t: f32) -> Particle {
        Particle {
            old_location: Vec3::splat(t),
            location: Vec3::splat(t),
            base_velocity: Vec3::ZERO,
            velocity: Vec3::X,
            rotation: 0.0,
            rotation_rate: 0.0,
            base_size: Vec2::ONE,
            base_color: Vec4::ONE,
            relative_time: t,
            one_over_max_lifetime: 1.0,
            sub_image_seed: 0,
        }
    }

    #[test]
    fn kill_expired_swap_removes_and_keeps_the_living() {
        let mut s = ParticleStore::default();
        for t in [0.1, 1.0, 0.2, 1.5, 0.3, 1.0] {
            s.push(particle(t));
        }
        assert_eq!(s.kill_expired(), 3);
        let mut left: Vec<f32> = s.relative_times().to_vec();
        left.sort_by(f32::total_cmp);
        assert_eq!(left, vec![0.1, 0.2, 0.3]);
        for i in 0..s.len() {
            assert_eq!(s.locations()[i].x, s.relative_times()[i], "fields stay together");
        }
        assert_eq!(s.get(0), particle(0.1));
    }
}
