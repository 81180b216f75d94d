//! Axis-aligned bounding boxes of particles.
//!
//! The renderer culls a particle system by one box. Computing it walks every
//! live particle, so it is done on request (once per frame, when the
//! component sends its bounds), not inside the tick; a system whose extent is
//! known can skip the walk with fixed bounds.

use glam::{Vec2, Vec3};
use serde::{Deserialize, Serialize};

/// An axis-aligned box; `min ≤ max` in every component.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Aabb {
    /// Lower corner.
    pub min: Vec3,
    /// Upper corner.
    pub max: Vec3,
}

impl Aabb {
    /// A box from its corners (sorted per component).
    pub fn new(a: Vec3, b: Vec3) -> Self {
        Aabb {
            min: a.min(b),
            max: a.max(b),
        }
    }

    /// The smallest box holding both.
    pub fn union(self, other: Aabb) -> Aabb {
        Aabb {
            min: self.min.min(other.min),
            max: self.max.max(other.max),
        }
    }

    /// Whether `p` lies inside or on the box.
    pub fn contains(&self, p: Vec3) -> bool {
        p.cmpge(self.min).all() && p.cmple(self.max).all()
    }

    /// Centre point.
    pub fn center(&self) -> Vec3 {
        (self.min + self.max) * 0.5
    }

    /// The box holding sprites centred at `locations` with quad `sizes`
    /// under any rotation (each padded by half its diagonal in every axis).
    /// `None` when there are none.
    pub fn of_sprites(locations: &[Vec3], sizes: &[Vec2]) -> Option<Aabb> {
        if locations.is_empty() {
            return None;
        }
        let mut min = Vec3::splat(f32::INFINITY);
        let mut max = Vec3::splat(f32::NEG_INFINITY);
        for (p, s) in locations.iter().zip(sizes) {
            // A rotated quad reaches at most half its diagonal from the centre.
            let r = Vec3::splat(s.length() * 0.5);
            min = min.min(*p - r);
            max = max.max(*p + r);
        }
        Some(Aabb { min, max })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sprite_bounds_pad_by_half_diagonal() {
        let b = Aabb::of_sprites(
            &[Vec3::ZERO, Vec3::new(10.0, 0.0, -2.0)],
            &[Vec2::new(6.0, 8.0), Vec2::ZERO],
        )
        .unwrap();
        assert_eq!(b.min, Vec3::new(-5.0, -5.0, -5.0));
        assert_eq!(b.max, Vec3::new(10.0, 5.0, 5.0));
        assert!(Aabb::of_sprites(&[], &[]).is_none());
        assert!(b.contains(b.center()));
    }
}
