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
        self.problem().is_none()
    }

    /// What is wrong with the light, if anything (see [`Self::is_valid`]).
    pub fn problem(&self) -> Option<&'static str> {
        match self {
            Light::Directional(d) if !(d.direction.is_finite() && d.direction.length_squared() > 0.0) => {
                Some("its direction is zero or not finite")
            }
            Light::Directional(d) if !(d.color.is_finite() && d.intensity.is_finite()) => Some("its colour or intensity is not finite"),
            Light::Point(p) if !p.position.is_finite() => Some("its position is not finite"),
            Light::Point(p) if !(p.color.is_finite() && p.intensity.is_finite()) => Some("its colour or intensity is not finite"),
            Light::Point(p) if p.radius.is_nan() || p.radius <= 0.0 => Some("its radius is not positive"),
            _ => None,
        }
    }
}

/// Most point lights shading one view.
pub const MAX_POINT_LIGHTS: usize = 8;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{RendererError, Scene};

    #[test]
    fn an_invalid_light_is_invalid_light_with_its_reason_and_changes_nothing() {
        let sun = DirectionalLight { direction: Vec3::new(0.0, 0.0, -1.0), color: Vec3::ONE, intensity: 1.0, cast_shadows: true };
        let bad = [
            (Light::Directional(DirectionalLight { direction: Vec3::ZERO, ..sun }), "its direction is zero or not finite"),
            (Light::Directional(DirectionalLight { intensity: f32::NAN, ..sun }), "its colour or intensity is not finite"),
            (
                Light::Point(PointLight { position: Vec3::ZERO, color: Vec3::ONE, intensity: 1.0, radius: 0.0 }),
                "its radius is not positive",
            ),
        ];
        let mut scene = Scene::default();
        for (light, why) in bad {
            assert_eq!(light.problem(), Some(why));
            match scene.set_light(LightId(7), light) {
                Err(RendererError::InvalidLight { light: Some(LightId(7)), reason }) => assert_eq!(reason, why),
                other => panic!("{light:?}: {other:?}"),
            }
            assert_eq!(scene.lights().count(), 0, "nothing changed");
        }
        assert_eq!(Light::Directional(sun).problem(), None);
    }
}
