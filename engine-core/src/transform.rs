//! UE's FTransform: translation, rotation, non-uniform scale.

use glam::{Mat4, Quat, Vec3};

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Transform {
    pub translation: Vec3,
    pub rotation: Quat,
    pub scale: Vec3,
}

impl Default for Transform {
    fn default() -> Self {
        Self::IDENTITY
    }
}

impl Transform {
    pub const IDENTITY: Self = Self { translation: Vec3::ZERO, rotation: Quat::IDENTITY, scale: Vec3::ONE };

    pub fn from_translation(t: Vec3) -> Self {
        Self { translation: t, ..Self::IDENTITY }
    }

    pub fn from_translation_scale(t: Vec3, s: Vec3) -> Self {
        Self { translation: t, scale: s, ..Self::IDENTITY }
    }

    pub fn new(translation: Vec3, rotation: Quat, scale: Vec3) -> Self {
        Self { translation, rotation, scale }
    }

    pub fn to_mat4(&self) -> Mat4 {
        Mat4::from_scale_rotation_translation(self.scale, self.rotation.normalize(), self.translation)
    }

    /// Why this transform is unusable, if it is: non-finite values, a zero
    /// scale axis or a zero rotation quaternion.
    pub fn invalid_reason(&self) -> Option<String> {
        if !self.translation.is_finite() || !self.rotation.is_finite() || !self.scale.is_finite() {
            return Some(format!("non-finite transform {self:?}"));
        }
        if self.scale.abs().min_element() < 1e-8 {
            return Some(format!("zero scale {:?}", self.scale));
        }
        if self.rotation.length_squared() < 1e-12 {
            return Some("zero rotation quaternion".into());
        }
        None
    }
}
