//! Conversions between our glam (0.30) types and parry's math types.
//!
//! parry3d 0.31 is built on `glamx`, which wraps a newer glam than the
//! workspace uses, so its `Vector` is a different type from our `Vec3` even
//! though both are three `f32`s. The public API speaks glam 0.30 only; these
//! helpers are the one place the two meet.

use glam::Vec3;
use parry3d::bounding_volume::Aabb;
use parry3d::math::Vector;

pub(crate) fn to_parry(v: Vec3) -> Vector {
    Vector::new(v.x, v.y, v.z)
}

pub(crate) fn from_parry(v: Vector) -> Vec3 {
    Vec3::new(v.x, v.y, v.z)
}

pub(crate) fn aabb_to_parry(min: Vec3, max: Vec3) -> Aabb {
    Aabb::new(to_parry(min), to_parry(max))
}
