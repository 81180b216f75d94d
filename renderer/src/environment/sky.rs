//! An analytic sky from the sun's direction: the environment a scene gets
//! without an image.

use super::{EnvironmentError, EquirectImage};
use glam::Vec3;

/// A simple analytic sky (Z up): a gradient from the horizon's colour to
/// the zenith's with the height, a glow around the sun that widens towards
/// the horizon, and the ground's colour below, blended across the horizon
/// (no sun disc: the directional light is the sun, and a disc in the
/// environment would light every surface twice). Colours are linear RGB
/// radiance; the defaults average to the hemisphere ambient's, so a scene
/// keeps its exposure when it changes from one to the other.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ProceduralSky {
    /// Towards the sun (any length but 0).
    pub sun_direction: Vec3,
    /// Straight up.
    pub zenith: [f32; 3],
    /// At the horizon.
    pub horizon: [f32; 3],
    /// Below the horizon.
    pub ground: [f32; 3],
    /// Added around the sun's direction, at its peak.
    pub sun_glow: [f32; 3],
}

impl Default for ProceduralSky {
    fn default() -> Self {
        Self {
            sun_direction: Vec3::new(0.3, -0.4, 0.6),
            zenith: [0.14, 0.22, 0.40],
            horizon: [0.34, 0.37, 0.42],
            ground: [0.11, 0.10, 0.09],
            sun_glow: [0.9, 0.75, 0.5],
        }
    }
}

impl ProceduralSky {
    /// The width of the image it is made into (and half of it, the height).
    pub const IMAGE_WIDTH: u32 = 512;

    /// The default sky with the sun towards `sun_direction`.
    pub fn with_sun(sun_direction: Vec3) -> Self {
        Self { sun_direction, ..Self::default() }
    }

    /// What is wrong with it, if anything.
    pub fn problem(&self) -> Option<String> {
        if !self.sun_direction.is_finite() || self.sun_direction.length_squared() < 1e-12 {
            return Some(format!("sun direction {} is zero or not finite", self.sun_direction));
        }
        [self.zenith, self.horizon, self.ground, self.sun_glow]
            .iter()
            .find(|c| c.iter().any(|v| !v.is_finite() || *v < 0.0))
            .map(|c| format!("colour {c:?} has a negative or non-finite channel"))
    }

    /// Its radiance towards `d` (unit).
    pub fn radiance(&self, d: Vec3) -> [f32; 3] {
        let sun = self.sun_direction.normalize();
        let up = d.z.max(0.0);
        let sky = Vec3::from(self.horizon).lerp(Vec3::from(self.zenith), up.sqrt());
        // The glow: a tight lobe and a broad one, both stronger near the horizon.
        let c = d.dot(sun).max(0.0);
        let glow = Vec3::from(self.sun_glow) * (0.6 * c.powi(32) + 0.25 * c.powi(4) * (1.0 - up));
        let ground = Vec3::from(self.ground);
        // Below the horizon the ground, blended over a few degrees.
        let t = (d.z / 0.05).clamp(-1.0, 1.0) * 0.5 + 0.5;
        ground.lerp(sky + glow, t).to_array()
    }

    /// The sky as an image ([`Self::IMAGE_WIDTH`] x half of it).
    pub(crate) fn to_image(self) -> EquirectImage {
        let made: Result<EquirectImage, EnvironmentError> =
            EquirectImage::from_fn(Self::IMAGE_WIDTH, Self::IMAGE_WIDTH / 2, |d| self.radiance(d));
        made.expect("a checked sky is finite and within the size limits")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sky_is_bright_towards_the_sun_and_the_ground_is_below() {
        let sky = ProceduralSky::with_sun(Vec3::new(1.0, 0.0, 0.3));
        assert_eq!(sky.problem(), None);
        let towards = sky.radiance(Vec3::new(1.0, 0.0, 0.3).normalize());
        let away = sky.radiance(Vec3::new(-1.0, 0.0, 0.3).normalize());
        assert!(towards[0] > away[0] + 0.5, "{towards:?} vs {away:?}");
        assert_eq!(sky.radiance(-Vec3::Z), sky.ground);
        assert!(ProceduralSky::with_sun(Vec3::ZERO).problem().is_some());
        assert!(ProceduralSky { zenith: [-1.0, 0.0, 0.0], ..sky }.problem().is_some());
    }
}
