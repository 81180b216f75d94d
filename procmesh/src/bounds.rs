//! Axis-aligned boxes: each section's local box and the mesh's bounds.
//!
//! A section keeps its own box so that updating one section re-scans only
//! that section's positions; the mesh's bounds are the union of the
//! sections' boxes, which costs one step per section. An empty section has
//! the [`Aabb::EMPTY`] box (UE's invalid `FBox`), which a union ignores; a
//! mesh with no vertices at all reports a zero-size box at the origin, as
//! UE's `UpdateLocalBounds` does.

use glam::Vec3;

/// An axis-aligned box, `min` to `max` inclusive. [`Aabb::EMPTY`] (min
/// above max) holds nothing.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Aabb {
    /// The smallest corner.
    pub min: Vec3,
    /// The largest corner.
    pub max: Vec3,
}

impl Aabb {
    /// The box holding nothing; the identity of [`union`](Self::union).
    pub const EMPTY: Self = Self {
        min: Vec3::INFINITY,
        max: Vec3::NEG_INFINITY,
    };

    /// The zero-size box at the origin: the bounds of a mesh with nothing
    /// in it.
    pub const ZERO: Self = Self {
        min: Vec3::ZERO,
        max: Vec3::ZERO,
    };

    /// The box from `min` to `max`.
    pub const fn new(min: Vec3, max: Vec3) -> Self {
        Self { min, max }
    }

    /// The smallest box holding every point; [`EMPTY`](Self::EMPTY) for none.
    pub fn from_points(points: &[Vec3]) -> Self {
        // Plain min/max folds over f32 lanes; this auto-vectorises.
        points.iter().fold(Self::EMPTY, |b, &p| Self {
            min: b.min.min(p),
            max: b.max.max(p),
        })
    }

    /// Whether the box holds nothing.
    pub fn is_empty(&self) -> bool {
        self.min.cmpgt(self.max).any()
    }

    /// The smallest box holding both.
    pub fn union(self, other: Self) -> Self {
        Self {
            min: self.min.min(other.min),
            max: self.max.max(other.max),
        }
    }

    /// The center (meaningless for an empty box).
    pub fn center(&self) -> Vec3 {
        (self.min + self.max) * 0.5
    }

    /// Half the size along each axis (meaningless for an empty box).
    pub fn half_extents(&self) -> Vec3 {
        (self.max - self.min) * 0.5
    }

    /// Whether `point` is inside or on the box.
    pub fn contains(&self, point: Vec3) -> bool {
        point.cmpge(self.min).all() && point.cmple(self.max).all()
    }

    /// Whether every point of `other` is inside or on this box (an empty
    /// `other` always is).
    pub fn contains_box(&self, other: &Aabb) -> bool {
        other.is_empty() || (self.contains(other.min) && self.contains(other.max))
    }
}

/// The renderer's box-and-sphere bounds of the same box. An empty box has
/// none: it maps to the zero-size box at the origin, as a mesh without
/// vertices reports.
impl From<Aabb> for renderer::Bounds {
    fn from(b: Aabb) -> Self {
        let b = if b.is_empty() { Aabb::ZERO } else { b };
        renderer::Bounds::from_box(b.min, b.max)
    }
}

impl Default for Aabb {
    fn default() -> Self {
        Self::EMPTY
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_is_the_union_identity() {
        let b = Aabb::from_points(&[Vec3::new(1.0, -2.0, 3.0), Vec3::new(-1.0, 0.0, 5.0)]);
        assert_eq!(
            b,
            Aabb::new(Vec3::new(-1.0, -2.0, 3.0), Vec3::new(1.0, 0.0, 5.0))
        );
        assert_eq!(Aabb::EMPTY.union(b), b);
        assert!(Aabb::from_points(&[]).is_empty());
        assert!(!Aabb::ZERO.is_empty());
        assert!(b.contains_box(&b) && b.contains_box(&Aabb::EMPTY));
        assert!(!Aabb::ZERO.contains_box(&b));
        let r = renderer::Bounds::from(b);
        assert_eq!((r.min(), r.max()), (b.min, b.max));
        assert_eq!(renderer::Bounds::from(Aabb::EMPTY).extent, Vec3::ZERO);
    }
}
