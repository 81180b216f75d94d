//! One update step's inputs, shared by the update (`update`) and its
//! per-chunk kernel (`kernel`): the closed-form step constants, the
//! parameters, the values that vary per emitter, and a chunk's particle
//! lanes. See `update`'s module docs for the maths.

use glam::{Vec2, Vec3, Vec4};

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
        if drag == 0.0 {
            // What the series below gives for k = 0, without its divisions
            // (this runs once per spawned particle).
            let t = f64::from(dt);
            return Step { dt, decay: 1.0, c1: dt, c2: (t * t * 0.5) as f32 };
        }
        let (t, k) = (f64::from(dt), f64::from(drag));
        let kt = k * t;
        let (decay, c1, c2) = if kt < 1e-5 {
            // Series; exact for k = 0, and avoids (dt - c1) / k cancelling.
            (1.0 - kt + kt * kt / 2.0, t * (1.0 - kt / 2.0 + kt * kt / 6.0), t * t * (0.5 - kt / 6.0 + kt * kt / 24.0))
        } else {
            let e = (-kt).exp();
            let c1 = (1.0 - e) / k;
            (e, c1, (t - c1) / k)
        };
        Step { dt, decay: decay as f32, c1: c1 as f32, c2: c2 as f32 }
    }
}

/// The emitter-wide inputs of an update.
pub(crate) struct UpdateParams {
    pub step: Step,
    pub acceleration: Vec3,
    pub rotates: bool,
    /// Which optional fields differ between particles (and so must move
    /// when a particle does).
    pub varying: Varying,
}

/// Per field, whether particles can hold different values in it. A field
/// that every particle of an emitter holds the same value in (no module
/// sets it, or a constant one does and nothing changes it) need not move
/// when particles are compacted: the destination already holds the value.
/// Moving a particle costs a cache miss per field at a random slot, and the
/// fields the update does not read are the cold ones, so this matters.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Varying {
    pub rotation: bool,
    pub rotation_rate: bool,
    pub base_size: bool,
    pub base_color: bool,
    pub one_over_max_lifetime: bool,
    pub sub_image_seed: bool,
}

impl Varying {
    /// Every field may vary.
    pub const ALL: Varying = Varying {
        rotation: true,
        rotation_rate: true,
        base_size: true,
        base_color: true,
        one_over_max_lifetime: true,
        sub_image_seed: true,
    };
}

/// Mutable views of every particle array over one range, splittable.
pub(crate) struct Lanes<'a> {
    pub(crate) old_location: &'a mut [Vec3],
    pub(crate) location: &'a mut [Vec3],
    pub(crate) base_velocity: &'a mut [Vec3],
    pub(crate) velocity: &'a mut [Vec3],
    pub(crate) rotation: &'a mut [f32],
    pub(crate) rotation_rate: &'a mut [f32],
    pub(crate) base_size: &'a mut [Vec2],
    pub(crate) base_color: &'a mut [Vec4],
    pub(crate) relative_time: &'a mut [f32],
    pub(crate) one_over_max_lifetime: &'a mut [f32],
    pub(crate) sub_image_seed: &'a mut [u32],
}

macro_rules! split_lanes {
    ($lanes:ident, $mid:ident, $($f:ident),+) => {{
        $(let $f = $lanes.$f.split_at_mut($mid);)+
        (Lanes { $($f: $f.0),+ }, Lanes { $($f: $f.1),+ })
    }};
}

impl<'a> Lanes<'a> {
    pub(crate) fn new(s: &'a mut ParticleStore, start: usize, end: usize) -> Self {
        Lanes {
            old_location: &mut s.old_location[start..end],
            location: &mut s.location[start..end],
            base_velocity: &mut s.base_velocity[start..end],
            velocity: &mut s.velocity[start..end],
            rotation: &mut s.rotation[start..end],
            rotation_rate: &mut s.rotation_rate[start..end],
            base_size: &mut s.base_size[start..end],
            base_color: &mut s.base_color[start..end],
            relative_time: &mut s.relative_time[start..end],
            one_over_max_lifetime: &mut s.one_over_max_lifetime[start..end],
            sub_image_seed: &mut s.sub_image_seed[start..end],
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.location.len()
    }

    pub(crate) fn split_at(self, mid: usize) -> (Lanes<'a>, Lanes<'a>) {
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
            base_color,
            relative_time,
            one_over_max_lifetime,
            sub_image_seed
        )
    }

    /// Moves particle `from` into slot `to` (killing `to`), skipping the
    /// fields that do not vary.
    #[inline(always)]
    pub(crate) fn pull(&mut self, from: usize, to: usize, varying: Varying) {
        macro_rules! copy {
            ($($f:ident),+) => {$( self.$f[to] = self.$f[from]; )+};
        }
        macro_rules! copy_if {
            ($($f:ident),+) => {$( if varying.$f { self.$f[to] = self.$f[from]; } )+};
        }
        copy!(old_location, location, base_velocity, velocity, relative_time);
        copy_if!(rotation, rotation_rate, base_size, base_color, one_over_max_lifetime, sub_image_seed);
    }
}
