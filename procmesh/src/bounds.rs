//! Axis-aligned boxes: each section's local box and the mesh's bounds.
//!
//! A section keeps its own box so that updating one section re-scans only
//! that section's positions; the mesh's bounds are the union of the
//! sections' boxes, which costs one step per section. An empty section has
//! the [`Aabb::EMPTY`] box (UE's invalid `FBox`), which a union ignores; a
//! mesh with no vertices at all reports a zero-size box at the origin, as
//! UE's `UpdateLocalBounds` does.

/// The workspace's one axis-aligned box (`renderer::Aabb`): procmesh keeps
/// a section's box in it and unions them here.
pub use renderer::Aabb;

#[cfg(test)]
mod tests {
    use super::*;
    use glam::Vec3;

    #[test]
    fn empty_is_the_union_identity() {
        let b = Aabb::from_points(&[Vec3::new(1.0, -2.0, 3.0), Vec3::new(-1.0, 0.0, 5.0)]);
        assert_eq!(b, Aabb::new(Vec3::new(-1.0, -2.0, 3.0), Vec3::new(1.0, 0.0, 5.0)));
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
