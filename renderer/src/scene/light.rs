//! Light proxies (UE's FLightSceneProxy): directional, point and spot lights
//! as the render thread keeps them, in world space.
//!
//! **Units** (glTF's `KHR_lights_punctual`): a directional light's
//! `intensity` is an illuminance in lux (the irradiance on a surface facing
//! it); a point or spot light's is a luminous intensity in candela
//! (lm/sr): a surface facing it at distance d receives intensity / d².
//! The renderer's linear colour values are those photometric units
//! directly (1 lux lights a white Lambert surface to radiance 1/π); the
//! exposure (`r.Exposure`) maps them to the display.
//!
//! **Falloff**: inverse square, windowed to 0 at the light's `radius` (its
//! range) by (1 - (d/r)⁴)², as `KHR_lights_punctual` recommends and UE
//! does. A spot light's cone scales it by glTF's angular attenuation:
//! `clamp((cos θ - cos outer) / (cos inner - cos outer), 0, 1)²`, 1 inside
//! the inner cone, 0 outside the outer one. The shaders' `light_falloff`
//! and `spot_attenuation` (base.inc.wgsl) are the same formulas as
//! [`PointLight::irradiance_at`] and [`SpotLight::irradiance_at`].
//!
//! Up to [`MAX_DIRECTIONAL_LIGHTS`] directional lights shade a view; point
//! and spot lights have no cap (the light grid lists each cluster's lights,
//! `crate::light_grid`).

use bytemuck::{Pod, Zeroable};
use glam::{Mat4, Vec3, Vec4};

pub use super::mobility::Mobility;
pub use crate::ids::LightId;

/// A light infinitely far away (the sun).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DirectionalLight {
    /// Direction the light travels.
    pub direction: Vec3,
    /// Linear RGB colour; times `intensity`, the illuminance (lux) on a
    /// surface facing the light.
    pub color: Vec3,
    /// Illuminance in lux, multiplying `color`.
    pub intensity: f32,
    /// Whether it renders the shadow map (also needs `r.Shadow.Enable`;
    /// the first shadow-casting directional light, by id, gets it).
    pub cast_shadows: bool,
    /// How far its shadow lookups are pushed off the surface.
    pub shadow_bias: ShadowBias,
    /// What may change once it is in the scene (`Mobility`).
    pub mobility: Mobility,
}

impl Default for DirectionalLight {
    /// White, movable sunlight of 1 lux straight down (-Z), casting shadows.
    fn default() -> Self {
        Self {
            direction: Vec3::NEG_Z,
            color: Vec3::ONE,
            intensity: 1.0,
            cast_shadows: true,
            shadow_bias: ShadowBias::DIRECTIONAL,
            mobility: Mobility::Movable,
        }
    }
}

/// How far a light's shadow lookup is pushed from the surface it shades, so
/// that a lit surface does not shadow itself (acne) while a caster's shadow
/// still meets it (no peter-panning) — per light, like Bevy's
/// `shadow_depth_bias` / `shadow_normal_bias` and UE's `ShadowBias` /
/// `ShadowSlopeBias`. Both are in texels of the light's shadow map at the
/// surface (a cascade's texel for the sun, a tile's texel at that distance
/// for point and spot lights), so one value suits any scene scale and any
/// shadow resolution.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ShadowBias {
    /// Toward the light along its ray. A directional light's grows up to
    /// 5× on surfaces that turn away from it and is never below 1 cm
    /// (unless 0).
    pub depth: f32,
    /// Along the surface's normal.
    pub normal: f32,
}

impl ShadowBias {
    /// A directional light's default: 1.5 texels toward the light.
    pub const DIRECTIONAL: Self = Self { depth: 1.5, normal: 0.0 };
    /// A point or spot light's default: 1.5 texels along the normal.
    pub const LOCAL: Self = Self { depth: 0.0, normal: 1.5 };

    /// What is wrong with it, if anything: both finite and not negative.
    fn problem(&self) -> Option<&'static str> {
        let ok = |b: f32| b.is_finite() && b >= 0.0;
        (!(ok(self.depth) && ok(self.normal))).then_some("its shadow bias is negative or not finite")
    }
}

/// A light radiating from a point in every direction, fading to nothing at
/// its radius.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PointLight {
    /// World-space position.
    pub position: Vec3,
    /// Linear RGB colour; times `intensity`, the luminous intensity.
    pub color: Vec3,
    /// Luminous intensity in candela, multiplying `color` (irradiance =
    /// intensity / distance², windowed to 0 at `radius`).
    pub intensity: f32,
    /// Influence radius (glTF's range); the light fades to zero there.
    pub radius: f32,
    /// The radius of the light's sphere (UE's source radius, 0: a point):
    /// widens its specular highlight on smooth surfaces.
    pub source_radius: f32,
    /// Whether it casts shadows (six tiles of the shadow atlas, one per
    /// cube face: `crate::shadow_atlas`).
    pub cast_shadows: bool,
    /// How far its shadow lookups are pushed off the surface.
    pub shadow_bias: ShadowBias,
    /// What may change once it is in the scene (`Mobility`).
    pub mobility: Mobility,
}

impl Default for PointLight {
    fn default() -> Self {
        Self {
            position: Vec3::ZERO,
            color: Vec3::ONE,
            intensity: 1.0,
            radius: 10.0,
            source_radius: 0.0,
            cast_shadows: false,
            shadow_bias: ShadowBias::LOCAL,
            mobility: Mobility::Movable,
        }
    }
}

/// A point light restricted to a cone (UE's USpotLightComponent).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SpotLight {
    /// World-space position (the cone's apex).
    pub position: Vec3,
    /// The cone's axis, the direction the light travels.
    pub direction: Vec3,
    /// Linear RGB colour; times `intensity`, the luminous intensity on the axis.
    pub color: Vec3,
    /// Luminous intensity in candela on the axis, multiplying `color`.
    pub intensity: f32,
    /// Influence radius (glTF's range).
    pub radius: f32,
    /// Half-angle (radians) of the cone at full intensity, 0..=outer.
    pub inner_cone: f32,
    /// Half-angle (radians) past which the light is 0, inner..=π/2.
    pub outer_cone: f32,
    /// As [`PointLight::source_radius`].
    pub source_radius: f32,
    /// As [`PointLight::cast_shadows`] (one tile of the atlas).
    pub cast_shadows: bool,
    /// As [`PointLight::shadow_bias`].
    pub shadow_bias: ShadowBias,
    /// As [`PointLight::mobility`].
    pub mobility: Mobility,
}

impl Default for SpotLight {
    fn default() -> Self {
        Self {
            position: Vec3::ZERO,
            direction: Vec3::new(0.0, 0.0, -1.0),
            color: Vec3::ONE,
            intensity: 1.0,
            radius: 10.0,
            inner_cone: 0.0,
            outer_cone: std::f32::consts::FRAC_PI_4,
            source_radius: 0.0,
            cast_shadows: false,
            shadow_bias: ShadowBias::LOCAL,
            mobility: Mobility::Movable,
        }
    }
}

/// A light of the scene.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Light {
    /// A directional light (up to [`MAX_DIRECTIONAL_LIGHTS`] in a scene).
    Directional(DirectionalLight),
    /// A point light.
    Point(PointLight),
    /// A spot light.
    Spot(SpotLight),
}

/// Most directional lights in a scene (a fifth is refused with
/// [`crate::RendererError::InvalidLight`]).
pub const MAX_DIRECTIONAL_LIGHTS: usize = 4;

/// Why a fifth directional light is refused.
pub(crate) const TOO_MANY_DIRECTIONAL_LIGHTS: &str = "the scene has its most directional lights (4) already";

/// The distance at which a light of luminous intensity `candela` (its
/// brightest channel) falls to [`CUTOFF_ILLUMINANCE`]: the range given to a
/// light that has none (a glTF light without `range`), so that it is
/// culled somewhere. Windowed falloff loses little light there (a light of
/// 100 cd gets a 100 m range).
pub fn range_for_intensity(candela: f32) -> f32 {
    (candela.max(0.0) / CUTOFF_ILLUMINANCE).sqrt().max(0.01)
}

/// The illuminance (lux) below which a light without a range is taken to
/// end ([`range_for_intensity`]).
pub const CUTOFF_ILLUMINANCE: f32 = 0.01;

/// The windowed inverse-square falloff (module docs) of a light of radius
/// `radius` at squared distance `dist_sq`; the shaders' `light_falloff`.
pub fn light_falloff(dist_sq: f32, radius: f32) -> f32 {
    let x = dist_sq / (radius * radius);
    let window = (1.0 - x * x).clamp(0.0, 1.0);
    window * window / (dist_sq + 1e-4)
}

impl PointLight {
    /// The irradiance (per unit of `color`) at `point` on a surface facing the light.
    pub fn irradiance_at(&self, point: Vec3) -> Vec3 {
        self.color * self.intensity * light_falloff(point.distance_squared(self.position), self.radius)
    }
}

/// A spot light's volume: the cone of half-angle `outer_cone` around its
/// axis, capped by the sphere of its range (for culling: `crate::light_grid`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SpotCone {
    /// The apex (the light's position).
    pub apex: Vec3,
    /// The axis (normalized).
    pub axis: Vec3,
    /// The range.
    pub range: f32,
    /// The sine of the half-angle.
    pub sin: f32,
    /// The cosine of the half-angle.
    pub cos: f32,
}

impl SpotCone {
    /// The smallest sphere holding the capped cone (B. Wronski, "Bounding
    /// sphere of a cone"): for a half-angle past 45° the sphere through its
    /// rim centred on the rim's plane, below it the sphere through the
    /// apex and the rim.
    pub fn bounding_sphere(&self) -> Vec4 {
        if self.cos < std::f32::consts::FRAC_1_SQRT_2 {
            (self.apex + self.axis * (self.cos * self.range)).extend(self.sin * self.range)
        } else {
            let r = self.range / (2.0 * self.cos);
            (self.apex + self.axis * r).extend(r)
        }
    }

    /// Whether the sphere (`center`, `radius`) lies wholly outside the
    /// capped cone (B. Wronski, "Cull that cone"): beyond its side, past
    /// the sphere of its range or behind its apex. Conservative: false when unsure.
    pub fn sphere_outside(&self, center: Vec3, radius: f32) -> bool {
        let v = center - self.apex;
        let along = v.dot(self.axis);
        let across = (v.length_squared() - along * along).max(0.0).sqrt();
        let beside = self.cos * across - along * self.sin > radius;
        beside || v.length_squared() > (self.range + radius).powi(2) || along < -radius
    }
}

impl SpotLight {
    /// Its volume for culling.
    pub fn cone(&self) -> SpotCone {
        let (sin, cos) = self.outer_cone.sin_cos();
        SpotCone { apex: self.position, axis: self.direction.normalize(), range: self.radius, sin, cos }
    }

    /// glTF's angular attenuation (module docs) of direction `to_point`
    /// (from the light, normalized); the shaders' `spot_attenuation`.
    pub fn angular_attenuation(&self, to_point: Vec3) -> f32 {
        let (scale, offset) = self.cone_scale_offset();
        let a = (to_point.dot(self.direction.normalize()) * scale + offset).clamp(0.0, 1.0);
        a * a
    }

    /// The cone as a scale and offset on cos θ (what the GPU light keeps).
    pub fn cone_scale_offset(&self) -> (f32, f32) {
        let (cos_inner, cos_outer) = (self.inner_cone.cos(), self.outer_cone.cos());
        let scale = 1.0 / (cos_inner - cos_outer).max(1e-3);
        (scale, -cos_outer * scale)
    }

    /// The irradiance (per unit of `color`) at `point` on a surface facing the light.
    pub fn irradiance_at(&self, point: Vec3) -> Vec3 {
        let d = point - self.position;
        let falloff = light_falloff(d.length_squared(), self.radius);
        self.color * self.intensity * falloff * self.angular_attenuation(d.normalize_or_zero())
    }
}

impl Light {
    /// Whether the scene takes this light (`RenderThread::set_light`
    /// rejects it otherwise): finite values, a direction, a positive radius.
    pub fn is_valid(&self) -> bool {
        self.problem().is_none()
    }

    /// What is wrong with the light, if anything (see [`Self::is_valid`]).
    pub fn problem(&self) -> Option<&'static str> {
        self.shape_problem().or_else(|| self.shadow_bias().problem())
    }

    /// What is wrong with its placement, shape or light.
    fn shape_problem(&self) -> Option<&'static str> {
        let finite_light = |color: Vec3, intensity: f32| color.is_finite() && intensity.is_finite();
        let bad_direction = |d: Vec3| !(d.is_finite() && d.length_squared() > 0.0);
        match self {
            Light::Directional(d) if bad_direction(d.direction) => Some("its direction is zero or not finite"),
            Light::Directional(d) if !finite_light(d.color, d.intensity) => Some("its colour or intensity is not finite"),
            Light::Directional(_) => None,
            Light::Point(p) => Self::local_problem(p.position, p.color, p.intensity, p.radius, p.source_radius),
            Light::Spot(s) if bad_direction(s.direction) => Some("its direction is zero or not finite"),
            Light::Spot(s) if !(s.inner_cone.is_finite() && s.outer_cone.is_finite()) => Some("its cone angles are not finite"),
            Light::Spot(s) if !(0.0 <= s.inner_cone && s.inner_cone <= s.outer_cone && s.outer_cone <= std::f32::consts::FRAC_PI_2) => {
                Some("its cone angles are out of order (0 <= inner <= outer <= pi/2)")
            }
            Light::Spot(s) => Self::local_problem(s.position, s.color, s.intensity, s.radius, s.source_radius),
        }
    }

    /// What is wrong with a point or spot light's shared values.
    fn local_problem(position: Vec3, color: Vec3, intensity: f32, radius: f32, source_radius: f32) -> Option<&'static str> {
        if !position.is_finite() {
            Some("its position is not finite")
        } else if !(color.is_finite() && intensity.is_finite()) {
            Some("its colour or intensity is not finite")
        } else if !(radius.is_finite() && radius > 0.0) {
            Some("its radius is not positive and finite")
        } else if !(source_radius.is_finite() && source_radius >= 0.0) {
            Some("its source radius is negative or not finite")
        } else {
            None
        }
    }

    /// A point or spot light's bounding sphere (center, radius in w);
    /// `None` for a directional light. A spot light's is the smallest
    /// sphere around its cone capped at its range ([`SpotLight::cone`]).
    pub fn bounding_sphere(&self) -> Option<Vec4> {
        match self {
            Light::Directional(_) => None,
            Light::Point(p) => Some(p.position.extend(p.radius)),
            Light::Spot(s) => Some(s.cone().bounding_sphere()),
        }
    }

    /// Its shadow bias.
    pub fn shadow_bias(&self) -> ShadowBias {
        match self {
            Light::Directional(d) => d.shadow_bias,
            Light::Point(p) => p.shadow_bias,
            Light::Spot(s) => s.shadow_bias,
        }
    }

    /// Its mobility.
    pub fn mobility(&self) -> Mobility {
        match self {
            Light::Directional(d) => d.mobility,
            Light::Point(p) => p.mobility,
            Light::Spot(s) => s.mobility,
        }
    }

    /// The light with mobility `mobility`.
    pub fn with_mobility(mut self, mobility: Mobility) -> Self {
        match &mut self {
            Light::Directional(d) => d.mobility = mobility,
            Light::Point(p) => p.mobility = mobility,
            Light::Spot(s) => s.mobility = mobility,
        }
        self
    }

    /// Why this light, as it is in the scene, may not become `new`
    /// (`Mobility`): a static light that changes, a stationary one that
    /// moves (or turns into another kind). A change of mobility is allowed.
    pub fn change_problem(&self, new: &Light) -> Option<&'static str> {
        if self.mobility() != new.mobility() {
            return None;
        }
        match self.mobility() {
            Mobility::Static if self != new => Some("a static light cannot change (make it movable first)"),
            Mobility::Stationary if self.placement() != new.placement() => Some("a stationary light cannot move (make it movable first)"),
            _ => None,
        }
    }

    /// Its kind, position and direction (what a stationary light keeps).
    fn placement(&self) -> (u8, Vec3, Vec3) {
        match self {
            Light::Directional(d) => (0, Vec3::ZERO, d.direction),
            Light::Point(p) => (1, p.position, Vec3::ZERO),
            Light::Spot(s) => (2, s.position, s.direction),
        }
    }

    /// Whether it is a directional light.
    pub fn is_directional(&self) -> bool {
        matches!(self, Light::Directional(_))
    }

    /// Whether it asks for shadows.
    pub fn cast_shadows(&self) -> bool {
        match self {
            Light::Directional(d) => d.cast_shadows,
            Light::Point(p) => p.cast_shadows,
            Light::Spot(s) => s.cast_shadows,
        }
    }

    /// The light placed by `transform` (UE's light component transform: the
    /// light shines along its +X): a directional light takes the direction,
    /// a point light the position, a spot light both. Only the placement
    /// changes; a transform that is not finite changes nothing.
    pub fn with_transform(mut self, transform: &Mat4) -> Self {
        let (x, origin) = (transform.x_axis.truncate().normalize_or_zero(), transform.w_axis.truncate());
        if !(transform.is_finite() && x != Vec3::ZERO) {
            return self;
        }
        match &mut self {
            Light::Directional(d) => d.direction = x,
            Light::Point(p) => p.position = origin,
            Light::Spot(s) => (s.position, s.direction) = (origin, x),
        }
        self
    }
}

/// The `LocalLight` of `scene.inc.wgsl`: a point or spot light as the
/// shaders read it (a point light is a spot light whose cone lets
/// everything through: scale 0, offset 1).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub(crate) struct LocalLightData {
    pub position: [f32; 3],
    /// The distance at which its light reaches 0.
    pub radius: f32,
    /// Colour times intensity (candela).
    pub color: [f32; 3],
    /// The cone's scale on cos θ (0 for a point light).
    pub spot_scale: f32,
    /// The direction the light travels (a spot light's axis).
    pub direction: [f32; 3],
    /// The cone's offset (1 for a point light).
    pub spot_offset: f32,
    /// The light sphere's radius (widens specular highlights).
    pub source_radius: f32,
    /// Its first tile in the frame's shadow-atlas tiles (a point light has
    /// six, one per cube face), or -1: no shadow (`crate::shadow_atlas`).
    pub shadow: i32,
    /// [`ShadowBias::depth`], in its tile's texels.
    pub shadow_depth_bias: f32,
    /// [`ShadowBias::normal`], in its tile's texels.
    pub shadow_normal_bias: f32,
}

impl LocalLightData {
    /// The GPU form of a point or spot light; `None` for a directional one.
    pub fn of(light: &Light) -> Option<Self> {
        match light {
            Light::Directional(_) => None,
            Light::Point(p) => Some(Self {
                position: p.position.to_array(),
                radius: p.radius,
                color: (p.color * p.intensity).to_array(),
                spot_scale: 0.0,
                direction: [0.0, 0.0, -1.0],
                spot_offset: 1.0,
                source_radius: p.source_radius,
                shadow: -1,
                shadow_depth_bias: p.shadow_bias.depth,
                shadow_normal_bias: p.shadow_bias.normal,
            }),
            Light::Spot(s) => {
                let (spot_scale, spot_offset) = s.cone_scale_offset();
                Some(Self {
                    position: s.position.to_array(),
                    radius: s.radius,
                    color: (s.color * s.intensity).to_array(),
                    spot_scale,
                    direction: s.direction.normalize().to_array(),
                    spot_offset,
                    source_radius: s.source_radius,
                    shadow: -1,
                    shadow_depth_bias: s.shadow_bias.depth,
                    shadow_normal_bias: s.shadow_bias.normal,
                })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{RendererError, Scene};

    #[test]
    fn an_invalid_light_is_invalid_light_with_its_reason_and_changes_nothing() {
        let sun = DirectionalLight::default();
        let spot = SpotLight::default();
        let bias = |depth, normal| ShadowBias { depth, normal };
        let bad = [
            (Light::Directional(DirectionalLight { direction: Vec3::ZERO, ..sun }), "its direction is zero or not finite"),
            (Light::Directional(DirectionalLight { intensity: f32::NAN, ..sun }), "its colour or intensity is not finite"),
            (Light::Point(PointLight { radius: 0.0, ..Default::default() }), "its radius is not positive and finite"),
            (Light::Point(PointLight { radius: -2.0, ..Default::default() }), "its radius is not positive and finite"),
            (Light::Point(PointLight { position: Vec3::NAN, ..Default::default() }), "its position is not finite"),
            (Light::Point(PointLight { source_radius: -1.0, ..Default::default() }), "its source radius is negative or not finite"),
            (
                Light::Spot(SpotLight { inner_cone: 0.6, outer_cone: 0.5, ..spot }),
                "its cone angles are out of order (0 <= inner <= outer <= pi/2)",
            ),
            (Light::Spot(SpotLight { outer_cone: 2.0, ..spot }), "its cone angles are out of order (0 <= inner <= outer <= pi/2)"),
            (Light::Spot(SpotLight { inner_cone: f32::NAN, ..spot }), "its cone angles are not finite"),
            (Light::Spot(SpotLight { direction: Vec3::ZERO, ..spot }), "its direction is zero or not finite"),
            (Light::Spot(SpotLight { intensity: f32::INFINITY, ..spot }), "its colour or intensity is not finite"),
            (Light::Spot(SpotLight { shadow_bias: bias(-1.0, 0.0), ..spot }), "its shadow bias is negative or not finite"),
            (
                Light::Point(PointLight { shadow_bias: bias(0.0, f32::NAN), ..Default::default() }),
                "its shadow bias is negative or not finite",
            ),
            (
                Light::Directional(DirectionalLight { shadow_bias: bias(f32::INFINITY, 0.0), ..sun }),
                "its shadow bias is negative or not finite",
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
        assert_eq!(Light::Spot(spot).problem(), None);
    }

    #[test]
    fn a_fifth_directional_light_is_refused() {
        let sun = Light::Directional(DirectionalLight { cast_shadows: false, ..Default::default() });
        let mut scene = Scene::default();
        for i in 0..MAX_DIRECTIONAL_LIGHTS as u64 {
            scene.set_light(LightId(i), sun).unwrap();
        }
        // Replacing one of the four is fine; a fifth is not.
        scene.set_light(LightId(0), sun).unwrap();
        assert!(matches!(scene.set_light(LightId(9), sun), Err(RendererError::InvalidLight { light: Some(LightId(9)), .. })));
        assert_eq!(scene.lights().count(), MAX_DIRECTIONAL_LIGHTS);
        // A point light is not limited.
        scene.set_light(LightId(9), Light::Point(PointLight::default())).unwrap();
        scene.remove_light(LightId(0));
        scene.set_light(LightId(10), sun).unwrap();
    }

    #[test]
    fn the_spot_cone_is_gltfs_angular_attenuation() {
        let s = SpotLight { inner_cone: 0.2, outer_cone: 0.4, direction: Vec3::NEG_Z, ..Default::default() };
        let at = |angle: f32| s.angular_attenuation(Vec3::new(angle.sin(), 0.0, -angle.cos()));
        assert!((at(0.0) - 1.0).abs() < 1e-5 && (at(0.19) - 1.0).abs() < 1e-5);
        assert_eq!(at(0.41), 0.0);
        let mid = at(0.3);
        let lin = (0.3f32.cos() - 0.4f32.cos()) / (0.2f32.cos() - 0.4f32.cos());
        assert!((mid - lin * lin).abs() < 1e-5, "{mid} vs {}", lin * lin);
        // The falloff is inverse-square near the light and 0 at the radius.
        assert!((light_falloff(4.0, 100.0) - 0.25).abs() < 1e-3);
        assert_eq!(light_falloff(100.0, 10.0), 0.0);
        assert!((range_for_intensity(100.0) - 100.0).abs() < 1e-3);
    }

    #[test]
    fn a_lights_mobility_decides_what_may_change_and_the_scene_refuses_the_rest() {
        let spot = |mobility| Light::Spot(SpotLight { mobility, ..Default::default() });
        let moved = |l: Light| l.with_transform(&Mat4::from_translation(Vec3::new(1.0, 0.0, 0.0)));
        let brighter = |l: Light| match l {
            Light::Spot(s) => Light::Spot(SpotLight { intensity: 5.0, ..s }),
            other => other,
        };
        let (st, sy, mv) = (spot(Mobility::Static), spot(Mobility::Stationary), spot(Mobility::Movable));
        assert_eq!(st.change_problem(&moved(st)), Some("a static light cannot change (make it movable first)"));
        assert_eq!(st.change_problem(&brighter(st)), Some("a static light cannot change (make it movable first)"));
        assert_eq!(sy.change_problem(&moved(sy)), Some("a stationary light cannot move (make it movable first)"));
        assert_eq!(sy.change_problem(&brighter(sy)), None, "a stationary light's intensity may change");
        assert_eq!(mv.change_problem(&moved(mv)), None);
        assert_eq!(st.change_problem(&moved(mv)), None, "a change of mobility (with the move) is allowed");
        let mut scene = Scene::default();
        scene.set_light(LightId(1), sy).unwrap();
        assert!(matches!(scene.set_light(LightId(1), moved(sy)), Err(RendererError::InvalidLight { light: Some(LightId(1)), .. })));
        assert!(matches!(scene.set_light_transform(LightId(1), Mat4::from_translation(Vec3::X)), Err(RendererError::InvalidLight { .. })));
        assert_eq!(scene.lights().next().copied(), Some(sy), "nothing changed");
        scene.set_light(LightId(1), brighter(sy)).unwrap();
        scene.set_light(LightId(1), moved(mv)).unwrap();
        scene.set_light_transform(LightId(1), Mat4::from_translation(Vec3::Y)).unwrap();
    }

    #[test]
    fn a_transform_places_the_light() {
        let m = Mat4::from_rotation_translation(glam::Quat::from_rotation_y(std::f32::consts::FRAC_PI_2), Vec3::new(1.0, 2.0, 3.0));
        match Light::Spot(SpotLight::default()).with_transform(&m) {
            Light::Spot(s) => {
                assert_eq!(s.position, Vec3::new(1.0, 2.0, 3.0));
                assert!(s.direction.abs_diff_eq(Vec3::NEG_Z, 1e-5), "{}", s.direction);
            }
            other => panic!("{other:?}"),
        }
        let p = Light::Point(PointLight::default());
        assert_eq!(p.with_transform(&Mat4::from_translation(Vec3::NAN)), p, "not finite: unchanged");
    }
}
