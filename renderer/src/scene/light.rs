//! Light proxies: one directional light (the first that casts shadows gets
//! the shadow map) and point lights, up to 8 of them shading the base pass.

use glam::Vec3;

pub use crate::ids::LightId;

/// A light infinitely far away (the sun), the one that casts the shadow map.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DirectionalLight {
    /// Direction the light travels.
    pub direction: Vec3,
    /// Linear RGB colour; times `intensity`, the irradiance on a surface
    /// facing the light.
    pub color: Vec3,
    /// Multiplier on `color`.
    pub intensity: f32,
    /// Whether it renders the shadow map (also needs `r.Shadow.Enable`).
    pub cast_shadows: bool,
}

/// A light radiating from a point, fading to nothing at its radius.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PointLight {
    /// World-space position.
    pub position: Vec3,
    /// Linear RGB colour; times `intensity`, the light's intensity
    /// (irradiance = intensity / distance², windowed to 0 at `radius`).
    pub color: Vec3,
    /// Multiplier on `color`.
    pub intensity: f32,
    /// Influence radius; the light fades to zero there.
    pub radius: f32,
}

/// A light of the scene.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Light {
    /// A directional light (the one with the lowest id lights the scene).
    Directional(DirectionalLight),
    /// A point light (at most [`MAX_POINT_LIGHTS`] shade a view).
    Point(PointLight),
}

impl Light {
    /// Whether the scene takes this light (`RenderThread::set_light`
    /// rejects it otherwise): finite values, a direction, a positive radius.
    pub fn is_valid(&self) -> bool {
        match self {
            Light::Directional(d) => {
                d.direction.is_finite() && d.direction.length_squared() > 0.0 && d.color.is_finite() && d.intensity.is_finite()
            }
            Light::Point(p) => p.position.is_finite() && p.color.is_finite() && p.intensity.is_finite() && p.radius > 0.0,
        }
    }
}

/// Most point lights shading one view.
pub const MAX_POINT_LIGHTS: usize = 8;
