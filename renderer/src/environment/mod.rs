//! Image-based lighting: the scene's environment (UE's sky light, Bevy's
//! `EnvironmentMapLight`) lights every default-lit surface with the light
//! arriving from all around it, and is drawn behind the scene.
//!
//! An [`Environment`] is one of:
//! - [`Environment::Hemisphere`] (the default): a flat sky colour above and
//!   a ground colour below, evaluated in the shader — no maps, no sky drawn.
//! - [`Environment::Sky`]: an analytic sky ([`ProceduralSky`]) from the sun's
//!   direction, made on the CPU into an [`EquirectImage`].
//! - [`Environment::Image`]: an [`EquirectImage`], e.g. a Radiance `.hdr`
//!   panorama ([`EquirectImage::decode_hdr`], [`EquirectImage::load_hdr`]).
//!
//! Both image kinds take one path on the GPU (`gpu.rs`), run once when the
//! environment is set and never again while it does not change
//! (`FrameStats::environment_filters` counts the runs):
//! 1. the image is uploaded as a half-float texture with its full mip chain;
//! 2. a compute pass prefilters it into a cube map
//!    ([`SPECULAR_FACE_SIZE`] texels across, [`SPECULAR_LEVELS`] levels):
//!    level `i` holds the radiance reflected by a GGX lobe of perceptual
//!    roughness `i / (levels - 1)`, importance-sampled with the source's
//!    mip picked by each sample's solid angle (filtered importance sampling,
//!    Křivánek and Colbert 2008); level 0 is the mirror reflection;
//! 3. a compute pass projects it onto nine spherical-harmonic coefficients,
//!    convolved with the cosine lobe: the diffuse irradiance (Ramamoorthi
//!    and Hanrahan 2001);
//! 4. the split-sum's second factor, the GGX BRDF's directional albedo
//!    (scale and bias of F0, Karis 2013), is a lookup table
//!    (`brdf_lut.rs`) made once per scene.
//!
//! The base pass's default-lit shading then adds, for a surface with
//! specular colour F0, roughness r and normal n, viewed along v (Fdez-Agüera
//! 2019's multiple-scattering split sum, as Bevy and Filament do it):
//! `FssEss = F0·A + B` (the LUT at (n·v, r)), `Ems = 1 - (A + B)`,
//! `Favg = F0 + (1 - F0)/21`, `FmsEms = Ems·FssEss·Favg / (1 - Favg·Ems)`,
//! specular `FssEss·prefiltered(reflect(-v, n), r) + FmsEms·irradiance(n)`,
//! diffuse `albedo·(1 - FssEss - FmsEms)·irradiance(n)`, all times the
//! material's ambient occlusion, the environment's intensity and
//! `r.SkyLight.Intensity`. A white surface in a uniform white environment
//! then returns exactly the environment's radiance, metal or not, at any
//! roughness: the white-furnace test (`renderer/tests/environment.rs`).
//!
//! **Directions.** The world is Z-up. An equirectangular image's column u
//! (0..1, left to right) looks along azimuth `φ = π(1 - 2u)` from +X
//! towards +Y (its centre column looks along +X, its left quarter along
//! +Y: turning right in the image turns right in the world), its row v (0
//! top..1 bottom) at polar angle `θ = πv` from +Z.

mod brdf_lut;
pub(crate) mod gpu;
mod image;
mod sky;

pub use self::image::{EquirectImage, MAX_EQUIRECT_HEIGHT, MAX_EQUIRECT_WIDTH};
pub use crate::error::EnvironmentError;
pub use brdf_lut::dfg;
pub use sky::ProceduralSky;
use std::sync::Arc;

/// Texels across each face of the prefiltered specular cube's level 0.
pub const SPECULAR_FACE_SIZE: u32 = 128;
/// Levels of the prefiltered specular cube: roughness 0, 0.2, .. 1.
pub const SPECULAR_LEVELS: u32 = 6;

/// The light that arrives from everywhere around the scene (module docs).
#[derive(Clone, Debug, Default, PartialEq)]
pub enum Environment {
    /// A flat sky colour above and a ground colour below (the default): no
    /// maps, nothing drawn behind the scene.
    #[default]
    Hemisphere,
    /// An analytic sky from the sun's direction, drawn behind the scene.
    Sky(ProceduralSky),
    /// An equirectangular image of radiance, times `intensity`, drawn
    /// behind the scene.
    Image {
        /// The panorama (module docs: directions).
        image: Arc<EquirectImage>,
        /// Scales its radiance (at least 0).
        intensity: f32,
    },
}

impl Environment {
    /// An image environment at intensity 1.
    pub fn image(image: EquirectImage) -> Self {
        Self::Image { image: Arc::new(image), intensity: 1.0 }
    }

    /// What is wrong with it, if anything: a negative or non-finite
    /// intensity or colour, a zero sun direction.
    pub fn problem(&self) -> Option<String> {
        match self {
            Self::Hemisphere => None,
            Self::Sky(sky) => sky.problem(),
            Self::Image { intensity, .. } => {
                (!intensity.is_finite() || *intensity < 0.0).then(|| format!("intensity {intensity} is not a finite value >= 0"))
            }
        }
    }

    /// Its kind's name, as the stats file writes it: `hemisphere`, `sky` or `image`.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Hemisphere => "hemisphere",
            Self::Sky(_) => "sky",
            Self::Image { .. } => "image",
        }
    }

    /// The image the GPU prefilters and the intensity it is drawn at
    /// (`None` for the hemisphere).
    pub(crate) fn to_image(&self) -> Option<(Arc<EquirectImage>, f32)> {
        match self {
            Self::Hemisphere => None,
            Self::Sky(sky) => Some((Arc::new(sky.to_image()), 1.0)),
            Self::Image { image, intensity } => Some((image.clone(), *intensity)),
        }
    }
}
