//! Light and camera components. A light component becomes a render-side
//! light at the end of the frame it registers or moves, with the
//! component's mobility ([`crate::World::set_mobility`]: components start
//! movable; a static or stationary one may not move); cameras produce the
//! frame's views ([`crate::World::collect_views`]).

use crate::component::{CameraDesc, Component, LightDesc};
use glam::{Vec3, Vec4};
use renderer::{DirectionalLight, Light, PointLight, ShadowBias, SpotLight};

/// UE's UDirectionalLightComponent: shines along the component's +X.
/// `intensity` is an illuminance in lux.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DirectionalLightComponent {
    pub color: Vec3,
    pub intensity: f32,
    pub cast_shadows: bool,
    /// How far its shadow lookups are pushed off surfaces (`renderer::ShadowBias`).
    pub shadow_bias: ShadowBias,
}

impl Default for DirectionalLightComponent {
    fn default() -> Self {
        Self { color: Vec3::ONE, intensity: 2.0, cast_shadows: true, shadow_bias: ShadowBias::DIRECTIONAL }
    }
}

impl Component for DirectionalLightComponent {
    fn light(&self) -> Option<LightDesc> {
        let (color, intensity, cast_shadows, shadow_bias) = (self.color, self.intensity, self.cast_shadows, self.shadow_bias);
        Some(LightDesc(Light::Directional(DirectionalLight {
            direction: Vec3::X,
            color,
            intensity,
            cast_shadows,
            shadow_bias,
            ..Default::default()
        })))
    }
}

/// UE's UPointLightComponent, at the component's origin. `intensity` is a
/// luminous intensity in candela; `radius` is its range (UE's attenuation
/// radius), `source_radius` the light sphere's radius.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PointLightComponent {
    pub color: Vec3,
    pub intensity: f32,
    pub radius: f32,
    pub source_radius: f32,
    pub cast_shadows: bool,
    /// How far its shadow lookups are pushed off surfaces (`renderer::ShadowBias`).
    pub shadow_bias: ShadowBias,
}

impl Default for PointLightComponent {
    fn default() -> Self {
        Self { color: Vec3::ONE, intensity: 10.0, radius: 10.0, source_radius: 0.0, cast_shadows: false, shadow_bias: ShadowBias::LOCAL }
    }
}

impl Component for PointLightComponent {
    fn light(&self) -> Option<LightDesc> {
        Some(LightDesc(Light::Point(PointLight {
            position: Vec3::ZERO,
            color: self.color,
            intensity: self.intensity,
            radius: self.radius,
            source_radius: self.source_radius,
            cast_shadows: self.cast_shadows,
            shadow_bias: self.shadow_bias,
            ..Default::default()
        })))
    }
}

/// UE's USpotLightComponent: a point light at the component's origin
/// restricted to a cone around its +X. `inner_cone` and `outer_cone` are
/// half-angles in radians (0 <= inner <= outer <= π/2): full intensity
/// inside the inner cone, none outside the outer one (glTF's angular
/// attenuation between).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SpotLightComponent {
    pub color: Vec3,
    pub intensity: f32,
    pub radius: f32,
    pub inner_cone: f32,
    pub outer_cone: f32,
    pub source_radius: f32,
    pub cast_shadows: bool,
    /// How far its shadow lookups are pushed off surfaces (`renderer::ShadowBias`).
    pub shadow_bias: ShadowBias,
}

impl Default for SpotLightComponent {
    fn default() -> Self {
        Self {
            color: Vec3::ONE,
            intensity: 10.0,
            radius: 10.0,
            inner_cone: 0.0,
            outer_cone: std::f32::consts::FRAC_PI_4,
            source_radius: 0.0,
            cast_shadows: false,
            shadow_bias: ShadowBias::LOCAL,
        }
    }
}

impl Component for SpotLightComponent {
    fn light(&self) -> Option<LightDesc> {
        Some(LightDesc(Light::Spot(SpotLight {
            position: Vec3::ZERO,
            direction: Vec3::X,
            color: self.color,
            intensity: self.intensity,
            radius: self.radius,
            inner_cone: self.inner_cone,
            outer_cone: self.outer_cone,
            source_radius: self.source_radius,
            cast_shadows: self.cast_shadows,
            shadow_bias: self.shadow_bias,
            ..Default::default()
        })))
    }
}

/// UE's UCameraComponent: looks along its +X with +Z up.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CameraComponent(pub CameraDesc);

impl Default for CameraComponent {
    fn default() -> Self {
        Self(CameraDesc {
            fov_y: 1.0,
            near: 0.1,
            far: 2000.0,
            viewport: Vec4::new(0.0, 0.0, 1.0, 1.0),
            ortho_width: None,
            max_draw_distance: 0.0,
        })
    }
}

impl Component for CameraComponent {
    fn camera(&self) -> Option<CameraDesc> {
        Some(self.0)
    }
}

/// Rotation that makes a component's +X look from `eye` toward `target` with +Z up.
pub fn look_rotation(eye: Vec3, target: Vec3) -> glam::Quat {
    let f = (target - eye).normalize_or_zero();
    if f == Vec3::ZERO {
        return glam::Quat::IDENTITY;
    }
    let right = f.cross(Vec3::Z).normalize_or(Vec3::Y);
    let up = right.cross(f);
    // Columns: +X forward, +Y left (= -right), +Z up.
    glam::Quat::from_mat3(&glam::Mat3::from_cols(f, -right, up))
}
