//! Bounds, frustums and transforms, as culling needs them: the one
//! [`Aabb`], [`Bounds`] (box and sphere) and [`Frustum`] of the workspace,
//! and its one rule for a usable transform ([`check_transform`]). Feature
//! crates keep their specialised algorithms (an ISM's conservative union, a
//! particle system's padded point box) as functions over these types.

use glam::{Affine3A, Mat3A, Mat4, Vec3, Vec3A, Vec4};

/// The smallest |determinant| of a usable transform's 3×3 part. Flatter
/// transforms collapse bounds (no sphere radius to cull with) and have no
/// usable inverse (world ↔ local conversion, ray casts into a body).
pub const MIN_TRANSFORM_DETERMINANT: f32 = 1e-20;

/// Why a transform cannot place a primitive, an instance or a body.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TransformProblem {
    /// A NaN or infinite component.
    #[error("non-finite transform")]
    NonFinite,
    /// A zero (or nearly zero) scale, or values so large that the inverse
    /// overflows.
    #[error("degenerate transform (flat, or too large to invert)")]
    Degenerate,
}

/// The workspace's one rule for a usable transform — the scene, the render
/// thread, the World, instanced meshes and collision all apply it: every
/// component finite, |determinant| at least [`MIN_TRANSFORM_DETERMINANT`],
/// and a finite inverse.
pub fn check_transform(m: &Mat4) -> Result<(), TransformProblem> {
    if !m.is_finite() {
        return Err(TransformProblem::NonFinite);
    }
    check_affine(&Affine3A::from_mat4(*m))
}

/// [`check_transform`] for an affine transform.
pub fn check_affine(t: &Affine3A) -> Result<(), TransformProblem> {
    if !t.is_finite() {
        return Err(TransformProblem::NonFinite);
    }
    let det = t.matrix3.determinant().abs();
    // A determinant that overflows is infinite (or NaN): not usable either.
    if !(MIN_TRANSFORM_DETERMINANT..f32::INFINITY).contains(&det) || !t.inverse().is_finite() {
        return Err(TransformProblem::Degenerate);
    }
    Ok(())
}

/// An axis-aligned box, `min` to `max` inclusive. [`Aabb::EMPTY`] (min above
/// max) holds nothing and is the identity of [`Aabb::union`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Aabb {
    /// The smallest corner.
    pub min: Vec3,
    /// The largest corner.
    pub max: Vec3,
}

impl Default for Aabb {
    /// [`Aabb::EMPTY`].
    fn default() -> Self {
        Self::EMPTY
    }
}

impl Aabb {
    /// The box holding nothing; `EMPTY.union(b) == b`.
    pub const EMPTY: Self = Self { min: Vec3::INFINITY, max: Vec3::NEG_INFINITY };

    /// The zero-size box at the origin (the bounds of a mesh with nothing in
    /// it, as UE's `UpdateLocalBounds` reports them).
    pub const ZERO: Self = Self { min: Vec3::ZERO, max: Vec3::ZERO };

    /// The box from `min` to `max` as given (not sorted: `min` above `max`
    /// on an axis makes an empty box).
    pub const fn new(min: Vec3, max: Vec3) -> Self {
        Self { min, max }
    }

    /// The box spanned by two opposite corners, in any order.
    pub fn from_corners(a: Vec3, b: Vec3) -> Self {
        Self { min: a.min(b), max: a.max(b) }
    }

    /// The box `center ± extent`.
    pub fn from_center_extent(center: Vec3, extent: Vec3) -> Self {
        Self { min: center - extent, max: center + extent }
    }

    /// The smallest box holding every point; [`Aabb::EMPTY`] for none.
    pub fn from_points(points: &[Vec3]) -> Self {
        // Plain min/max folds over f32 lanes; this auto-vectorises.
        points.iter().fold(Self::EMPTY, |b, &p| Self { min: b.min.min(p), max: b.max.max(p) })
    }

    /// Whether the box holds nothing (min above max on some axis).
    pub fn is_empty(&self) -> bool {
        self.min.cmpgt(self.max).any()
    }

    /// The centre point.
    pub fn center(&self) -> Vec3 {
        (self.min + self.max) * 0.5
    }

    /// Half the size along each axis (UE's extent).
    pub fn extent(&self) -> Vec3 {
        (self.max - self.min) * 0.5
    }

    /// The smallest box holding both.
    pub fn union(self, other: Self) -> Self {
        Self { min: self.min.min(other.min), max: self.max.max(other.max) }
    }

    /// Whether `p` lies inside or on the box.
    pub fn contains(&self, p: Vec3) -> bool {
        p.cmpge(self.min).all() && p.cmple(self.max).all()
    }

    /// Whether `other` lies inside the box (boundaries included); an empty
    /// box lies inside every box.
    pub fn contains_box(&self, other: &Self) -> bool {
        other.is_empty() || (self.min.cmple(other.min).all() && self.max.cmpge(other.max).all())
    }

    /// The smallest box holding this box after `t` (Arvo's method: exact
    /// for the eight corners); an empty box stays empty.
    pub fn transformed(&self, t: &Affine3A) -> Self {
        if self.is_empty() {
            return *self;
        }
        let m: Mat3A = t.matrix3;
        let abs = Mat3A::from_cols(m.x_axis.abs(), m.y_axis.abs(), m.z_axis.abs());
        let extent = abs * Vec3A::from(self.extent());
        Self::from_center_extent(t.transform_point3(self.center()), extent.into())
    }
}

impl From<Aabb> for Bounds {
    /// The box with its circumscribed sphere; an empty box is zero-size
    /// bounds at the origin.
    fn from(b: Aabb) -> Self {
        if b.is_empty() {
            return Bounds::default();
        }
        Bounds::from_box(b.min, b.max)
    }
}

/// UE's FBoxSphereBounds: a box (origin ± extent) and a sphere (origin, radius).
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct Bounds {
    /// The centre of the box and the sphere.
    pub origin: Vec3,
    /// Half the box's size along each axis (not negative).
    pub extent: Vec3,
    /// The sphere's radius.
    pub radius: f32,
}

impl Bounds {
    /// Bounds from their parts (not checked: see [`Bounds::is_valid`]).
    pub const fn new(origin: Vec3, extent: Vec3, radius: f32) -> Self {
        Self { origin, extent, radius }
    }

    /// The box from `min` to `max`, with the sphere around it.
    pub fn from_box(min: Vec3, max: Vec3) -> Self {
        let origin = (min + max) * 0.5;
        let extent = (max - min) * 0.5;
        Self { origin, extent, radius: extent.length() }
    }

    /// The box's minimum corner.
    pub fn min(&self) -> Vec3 {
        self.origin - self.extent
    }

    /// The box's maximum corner.
    pub fn max(&self) -> Vec3 {
        self.origin + self.extent
    }

    /// Every component finite, the extent and the radius not negative.
    pub fn is_valid(&self) -> bool {
        self.origin.is_finite()
            && self.extent.is_finite()
            && self.radius.is_finite()
            && self.extent.min_element() >= 0.0
            && self.radius >= 0.0
    }

    /// The box as an [`Aabb`].
    pub fn aabb(&self) -> Aabb {
        Aabb::from_center_extent(self.origin, self.extent)
    }

    /// The bounds of this box transformed by `m` (box of the transformed box).
    pub fn transformed(&self, m: &Mat4) -> Self {
        let origin = m.transform_point3(self.origin);
        let abs = |v: Vec4| v.truncate().abs();
        let extent = abs(m.x_axis) * self.extent.x + abs(m.y_axis) * self.extent.y + abs(m.z_axis) * self.extent.z;
        let scale = m.x_axis.truncate().length().max(m.y_axis.truncate().length()).max(m.z_axis.truncate().length());
        Self { origin, extent, radius: (self.radius * scale).min(extent.length()) }
    }

    /// The box around both boxes, with the sphere around that box.
    pub fn union(&self, other: &Bounds) -> Self {
        Self::from_box(self.min().min(other.min()), self.max().max(other.max()))
    }
}

/// Six planes (`xyz` normal pointing inside, `w` distance) of a view-projection
/// with Vulkan's clip space (depth 0..1).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Frustum {
    /// The planes: `dot(xyz, p) + w >= 0` for a point `p` inside.
    pub planes: [Vec4; 6],
}

impl Frustum {
    /// The frustum of a view-projection matrix (Vulkan clip space, depth 0..1).
    pub fn from_view_proj(m: &Mat4) -> Self {
        let r0 = m.row(0);
        let r1 = m.row(1);
        let r2 = m.row(2);
        let r3 = m.row(3);
        let mut planes = [r3 + r0, r3 - r0, r3 + r1, r3 - r1, r2, r3 - r2];
        for p in &mut planes {
            let len = p.truncate().length();
            if len > 0.0 {
                *p /= len;
            }
        }
        Self { planes }
    }

    /// Whether a sphere touches the frustum.
    #[inline]
    pub fn intersects_sphere(&self, center: Vec3, radius: f32) -> bool {
        self.planes.iter().all(|p| p.truncate().dot(center) + p.w >= -radius)
    }

    /// The six planes (left, right, bottom, top, near, far).
    pub fn planes(&self) -> &[Vec4] {
        &self.planes
    }

    /// Whether a sphere lies wholly behind some plane (the negation of
    /// [`Frustum::intersects_sphere`]).
    #[inline]
    pub fn sphere_outside(&self, center: Vec3, radius: f32) -> bool {
        !self.intersects_sphere(center, radius)
    }

    /// Whether a box lies wholly behind some plane (tested at the corner
    /// farthest along each plane's normal).
    pub fn box_outside(&self, b: &Aabb) -> bool {
        let (c, e) = (b.center(), b.extent());
        self.planes.iter().any(|p| p.truncate().dot(c) + p.w + p.truncate().abs().dot(e) < 0.0)
    }

    /// The planes the box `min..=max` straddles, for testing what is inside
    /// it against those alone: `None` when one plane has the whole box
    /// behind it (the box is outside; conservative: a box across two planes
    /// near a corner can be outside and still straddle both), otherwise the
    /// planes with part of the box behind them (none: the box is inside).
    /// Each plane is tested at the box's corners farthest along and against
    /// its normal.
    pub fn straddled_planes(&self, min: Vec3, max: Vec3) -> Option<([Vec4; 6], usize)> {
        let mut planes = [Vec4::ZERO; 6];
        let mut n = 0;
        for p in &self.planes {
            let normal = p.truncate();
            let positive = normal.cmpge(Vec3::ZERO);
            if normal.dot(Vec3::select(positive, max, min)) + p.w < 0.0 {
                return None;
            }
            if normal.dot(Vec3::select(positive, min, max)) + p.w < 0.0 {
                planes[n] = *p;
                n += 1;
            }
        }
        Some((planes, n))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aabb_unions_contains_and_transforms() {
        let a = Aabb::from_corners(Vec3::ONE, Vec3::ZERO);
        assert_eq!(a, Aabb::new(Vec3::ZERO, Vec3::ONE), "corners sorted");
        assert_eq!(Aabb::EMPTY.union(a), a);
        assert!(Aabb::EMPTY.is_empty() && !a.is_empty() && Aabb::from_points(&[]).is_empty());
        assert!(a.contains(Vec3::splat(0.5)) && !a.contains(Vec3::splat(1.5)));
        assert!(a.contains_box(&Aabb::new(Vec3::splat(0.25), Vec3::splat(0.75))) && a.contains_box(&Aabb::EMPTY));
        let turned = a.transformed(&Affine3A::from_rotation_z(std::f32::consts::FRAC_PI_2));
        assert!(
            (turned.min - Vec3::new(-1.0, 0.0, 0.0)).length() < 1e-6 && (turned.max - Vec3::new(0.0, 1.0, 1.0)).length() < 1e-6,
            "{turned:?}"
        );
        assert_eq!(Bounds::from(Aabb::EMPTY), Bounds::default());
        assert_eq!(Bounds::from(a).extent, Vec3::splat(0.5));
    }

    #[test]
    fn frustum_keeps_what_is_in_front_and_drops_what_is_behind() {
        let view = glam::camera::rh::view::look_at_mat4(Vec3::ZERO, Vec3::X, Vec3::Z);
        let proj = glam::camera::rh::proj::directx::perspective(1.0, 1.0, 0.1, 100.0);
        let f = Frustum::from_view_proj(&(proj * view));
        assert!(f.intersects_sphere(Vec3::new(10.0, 0.0, 0.0), 1.0));
        assert!(!f.intersects_sphere(Vec3::new(-10.0, 0.0, 0.0), 1.0));
        assert!(!f.intersects_sphere(Vec3::new(200.0, 0.0, 0.0), 1.0), "beyond far");
        assert!(!f.intersects_sphere(Vec3::new(10.0, 50.0, 0.0), 1.0), "far to the side");
    }

    #[test]
    fn a_box_is_culled_only_when_one_plane_has_all_of_it_behind() {
        let view = glam::camera::rh::view::look_at_mat4(Vec3::ZERO, Vec3::X, Vec3::Z);
        let proj = glam::camera::rh::proj::directx::perspective(1.0, 1.0, 0.1, 100.0);
        let f = Frustum::from_view_proj(&(proj * view));
        assert!(f.straddled_planes(Vec3::new(5.0, -1.0, -1.0), Vec3::new(7.0, 1.0, 1.0)).is_some(), "in front");
        assert!(f.straddled_planes(Vec3::new(-50.0, -1.0, -1.0), Vec3::new(50.0, 1.0, 1.0)).is_some(), "through the eye");
        assert!(f.straddled_planes(Vec3::new(-20.0, -1.0, -1.0), Vec3::new(-10.0, 1.0, 1.0)).is_none(), "behind");
        assert!(f.straddled_planes(Vec3::new(5.0, 40.0, -1.0), Vec3::new(7.0, 60.0, 1.0)).is_none(), "to the side");
        assert!(f.straddled_planes(Vec3::new(150.0, -1.0, -1.0), Vec3::new(160.0, 1.0, 1.0)).is_none(), "beyond far");
        // Every sphere the frustum keeps is kept by the box around it.
        let mut s = 1u64;
        for _ in 0..2000 {
            let mut next = || {
                s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                (s >> 40) as f32 / (1u64 << 24) as f32
            };
            let c = Vec3::new(next() * 240.0 - 120.0, next() * 240.0 - 120.0, next() * 240.0 - 120.0);
            let r = next() * 10.0;
            if f.intersects_sphere(c, r) {
                assert!(f.straddled_planes(c - r, c + r).is_some(), "{c:?} {r}");
            }
        }
    }

    #[test]
    fn straddled_planes_are_those_with_part_of_the_box_behind_them() {
        let view = glam::camera::rh::view::look_at_mat4(Vec3::ZERO, Vec3::X, Vec3::Z);
        let proj = glam::camera::rh::proj::directx::perspective(1.0, 1.0, 0.1, 100.0);
        let f = Frustum::from_view_proj(&(proj * view));
        assert_eq!(f.straddled_planes(Vec3::new(10.0, -1.0, -1.0), Vec3::new(12.0, 1.0, 1.0)).map(|(_, n)| n), Some(0), "inside");
        assert_eq!(f.straddled_planes(Vec3::new(-20.0, -1.0, -1.0), Vec3::new(-10.0, 1.0, 1.0)), None, "behind");
        let (planes, n) = f.straddled_planes(Vec3::new(90.0, -1.0, -1.0), Vec3::new(110.0, 1.0, 1.0)).expect("crosses the far plane");
        assert_eq!(n, 1);
        assert_eq!(planes[0], f.planes[5], "the far plane");
        // A point inside the box is inside the frustum iff it is in front of
        // every straddled plane.
        let (min, max) = (Vec3::new(-5.0, -30.0, -30.0), Vec3::new(60.0, 30.0, 30.0));
        let (planes, n) = f.straddled_planes(min, max).unwrap();
        for i in 0..1000 {
            let t = Vec3::new((i % 10) as f32 / 9.0, (i / 10 % 10) as f32 / 9.0, (i / 100) as f32 / 9.0);
            let p = min + (max - min) * t;
            assert_eq!(planes[..n].iter().all(|q| q.truncate().dot(p) + q.w >= 0.0), f.intersects_sphere(p, 0.0), "{p:?}");
        }
    }

    #[test]
    fn transformed_bounds_contain_the_moved_box() {
        let b = Bounds::from_box(Vec3::splat(-1.0), Vec3::splat(1.0));
        let m = Mat4::from_scale_rotation_translation(Vec3::splat(2.0), glam::Quat::from_rotation_z(0.5), Vec3::new(5.0, 0.0, 0.0));
        let t = b.transformed(&m);
        assert!((t.origin - Vec3::new(5.0, 0.0, 0.0)).length() < 1e-5);
        for corner in [Vec3::new(1.0, 1.0, 1.0), Vec3::new(-1.0, 1.0, -1.0)] {
            let p = m.transform_point3(corner);
            assert!((p - t.origin).abs().cmple(t.extent + 1e-4).all());
            assert!((p - t.origin).length() <= t.radius + 1e-4);
        }
    }

    #[test]
    fn one_rule_for_usable_transforms() {
        assert_eq!(check_transform(&Mat4::IDENTITY), Ok(()));
        let scaled = |s: f32| Mat4::from_scale(Vec3::splat(s));
        assert_eq!(check_transform(&scaled(1e-6)), Ok(()), "det 1e-18");
        assert_eq!(check_transform(&scaled(1e-7)), Err(TransformProblem::Degenerate), "det 1e-21: too flat");
        assert_eq!(check_transform(&scaled(0.0)), Err(TransformProblem::Degenerate));
        assert_eq!(check_transform(&scaled(1e13)), Err(TransformProblem::Degenerate), "det overflows");
        let mut nan = Mat4::IDENTITY;
        nan.w_axis.x = f32::NAN;
        assert_eq!(check_transform(&nan), Err(TransformProblem::NonFinite));
        let mut projective = Mat4::IDENTITY;
        projective.x_axis.w = f32::INFINITY;
        assert_eq!(check_transform(&projective), Err(TransformProblem::NonFinite), "the row Affine3A drops is checked too");
        let far_and_tiny = Affine3A::from_scale_rotation_translation(Vec3::splat(1e-6), glam::Quat::IDENTITY, Vec3::splat(3e38));
        assert_eq!(check_affine(&far_and_tiny), Err(TransformProblem::Degenerate), "its inverse overflows");
    }
}
