//! Light proxies: one directional light (the first that casts shadows gets
//! the shadow map) and point lights, up to 8 of them shading the base pass.

use glam::Vec3;

/// Names a light in the scene.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LightId(pub u64);

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DirectionalLight {
    /// Direction the light travels.
    pub direction: Vec3,
    pub color: Vec3,
    pub intensity: f32,
    pub cast_shadows: bool,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PointLight {
    pub position: Vec3,
    pub color: Vec3,
    pub intensity: f32,
    /// Influence radius; the light fades to zero there.
    pub radius: f32,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Light {
    Directional(DirectionalLight),
    Point(PointLight),
}

impl Light {
    /// Whether the scene takes this light (`RenderThread::set_light`
    /// rejects it otherwise): finite values, a direction, a positive radius.
    pub fn is_valid(&self) -> bool {
        match self {
            Light::Directional(d) => d.direction.is_finite() && d.direction.length_squared() > 0.0 && d.color.is_finite() && d.intensity.is_finite(),
            Light::Point(p) => p.position.is_finite() && p.color.is_finite() && p.intensity.is_finite() && p.radius > 0.0,
        }
    }
}

/// Most point lights shading one view.
pub const MAX_POINT_LIGHTS: usize = 8;
