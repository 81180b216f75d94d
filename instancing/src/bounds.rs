//! Bounds: the mesh's, one instance's, and the component's (their union).
//!
//! The component's bounds decide whether the renderer considers it at all, so
//! they must always contain every instance; they need not always be tight.
//! UE's ISM recomputes them from every instance whenever they are asked for
//! (`CalcBounds` loops over all instances), which is O(n) per edit. Here a
//! `BoundsTracker` keeps a *conservative* union up to date in O(1) per edit:
//!
//! * add / update grow the box by the new instance's box (exact: a union can
//!   only grow when something is added);
//! * remove / update cannot shrink it cheaply (the removed instance may have
//!   defined an edge), so they only mark it *loose*;
//! * [`crate::InstanceStore::tighten_bounds`] recomputes the exact union (in parallel) when
//!   loose — the component calls it once per frame at most, when it sends its
//!   bounds to the renderer, not once per edit.
//!
//! Instance boxes are the mesh's local box transformed by the instance's
//! component-relative transform (Arvo's method: exact for the 8 corners);
//! world bounds transform the component-space union by the component's
//! transform, as UE's `FBounds::TransformBy` does.

use glam::{Affine3A, Mat3A, Vec3};
use rayon::prelude::*;

use crate::error::{InstancingError, Result};

/// The workspace's one axis-aligned box (`renderer::Aabb`: union,
/// containment, Arvo's transform).
pub use renderer::Aabb;

/// The largest axis scale of `m`: a sphere of radius r maps into a sphere of
/// radius `r * max_scale(m)`.
#[inline]
pub fn max_scale(m: &Mat3A) -> f32 {
    m.x_axis.length_squared().max(m.y_axis.length_squared()).max(m.z_axis.length_squared()).sqrt()
}

/// The workspace's one box-and-sphere bounds (UE's `FBounds`,
/// `renderer::Bounds`): the mesh bounds the instancing code needs, the box
/// for component bounds, the sphere for per-instance culling and LOD.
pub use renderer::Bounds;

/// `bounds` if they are valid mesh bounds (finite, extent and radius not
/// negative; [`Bounds::is_valid`]), else [`InstancingError::InvalidBounds`].
pub fn checked_bounds(bounds: Bounds) -> Result<Bounds> {
    if bounds.is_valid() {
        Ok(bounds)
    } else {
        Err(InstancingError::InvalidBounds)
    }
}

/// The sphere of an instance whose component-relative transform is `t`:
/// centre `t(origin)`, radius scaled by the largest axis scale. Culling,
/// the cluster tree and the GPU pass all use this one definition, which
/// is what makes their answers agree exactly.
#[inline]
pub fn instance_sphere(bounds: &Bounds, t: &Affine3A) -> (Vec3, f32) {
    (t.transform_point3(bounds.origin), bounds.radius * max_scale(&t.matrix3))
}

/// The component-space union of all instance boxes, kept conservative in
/// O(1) per edit (see the module docs).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct BoundsTracker {
    union: Aabb,
    loose: bool,
}

impl Default for BoundsTracker {
    fn default() -> Self {
        Self { union: Aabb::EMPTY, loose: false }
    }
}

impl BoundsTracker {
    pub(crate) fn grow(&mut self, b: Aabb) {
        self.union = self.union.union(b);
    }

    pub(crate) fn mark_loose(&mut self) {
        self.loose = true;
    }

    pub(crate) fn reset(&mut self) {
        *self = Self::default();
    }

    pub(crate) fn conservative(&self) -> Aabb {
        self.union
    }

    pub(crate) fn is_loose(&self) -> bool {
        self.loose
    }

    /// Recomputes the exact union if loose; returns it.
    pub(crate) fn tighten(&mut self, mesh: &Bounds, transforms: &[Affine3A]) -> Aabb {
        if self.loose {
            self.union = union_of(mesh, transforms);
            self.loose = false;
        }
        self.union
    }
}

/// The exact union of `mesh`'s box under every transform (parallel; a union
/// is associative and exact, so the result does not depend on thread count).
pub fn union_of(mesh: &Bounds, transforms: &[Affine3A]) -> Aabb {
    let local = mesh.aabb();
    transforms
        .par_chunks(16 * 1024)
        .map(|chunk| chunk.iter().fold(Aabb::EMPTY, |acc, t| acc.union(local.transformed(t))))
        .reduce(|| Aabb::EMPTY, Aabb::union)
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::Quat;

    #[test]
    fn transformed_box_contains_corners() {
        let b = Aabb::new(Vec3::new(-1.0, -2.0, -3.0), Vec3::new(1.0, 2.0, 3.0));
        let t = Affine3A::from_scale_rotation_translation(
            Vec3::new(2.0, 1.0, 0.5),
            Quat::from_euler(glam::EulerRot::XYZ, 0.3, 0.7, -1.1),
            Vec3::new(10.0, 0.0, -4.0),
        );
        let tb = b.transformed(&t);
        for i in 0..8 {
            let c = Vec3::new(
                if i & 1 == 0 { b.min.x } else { b.max.x },
                if i & 2 == 0 { b.min.y } else { b.max.y },
                if i & 4 == 0 { b.min.z } else { b.max.z },
            );
            let p = t.transform_point3(c);
            assert!(p.cmpge(tb.min - 1e-4).all() && p.cmple(tb.max + 1e-4).all());
        }
    }

    #[test]
    fn bad_bounds_rejected() {
        assert!(checked_bounds(Bounds::new(Vec3::ZERO, Vec3::ONE, f32::NAN)).is_err());
        assert!(checked_bounds(Bounds::new(Vec3::ZERO, -Vec3::ONE, 1.0)).is_err());
        assert!(checked_bounds(Bounds::new(Vec3::ZERO, Vec3::ONE, -1.0)).is_err());
        assert!(checked_bounds(Bounds::new(Vec3::ZERO, Vec3::ONE, 1.8)).is_ok());
    }

    #[test]
    fn empty_union_identity() {
        let b = Aabb::new(Vec3::ZERO, Vec3::ONE);
        assert_eq!(Aabb::EMPTY.union(b), b);
        assert!(Aabb::EMPTY.is_empty());
    }
}
