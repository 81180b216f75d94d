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

    /// Why this transform is unusable, if it is: a zero rotation quaternion
    /// (it has no direction to normalise), or a matrix that breaks the
    /// workspace's one rule for transforms ([`renderer::check_transform`]:
    /// non-finite, flat, or too large to invert).
    pub fn invalid_reason(&self) -> Option<String> {
        let rotation_len2 = self.rotation.length_squared();
        if !rotation_len2.is_finite() || rotation_len2 < 1e-12 {
            return Some(format!("zero or non-finite rotation quaternion {:?}", self.rotation));
        }
        renderer::check_transform(&self.to_mat4()).err().map(|problem| format!("{problem}: {self:?}"))
    }
}
