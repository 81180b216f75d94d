//! The frame's settings snapshot: every console variable the renderer's
//! stages act on, read once at the start of a frame into typed values
//! ([`FrameSettings::from_cvars`]). The stages take the snapshot, never the
//! console variables, so a frame sees one consistent set of settings even
//! if a variable changes while it renders, the clamping of each value is
//! written once, and what a stage depends on is in its signature.
//! (`cargo xtask lint` fails on a cvar read anywhere else in the renderer.)
//!
//! Proxies still see the console variables through
//! `MeshElementCollector::cvars`: feature crates read their own variables
//! there.

use crate::cvars::{self, ConsoleVariables};

/// Every setting a frame's stages read, from the console variables.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FrameSettings {
    /// Culling, occlusion tests and pass setup run as parallel tasks
    /// (`r.MeshDrawCommands.ParallelPassSetup`).
    pub parallel_pass_setup: bool,
    /// The scale of far draw distances and instanced meshes' cull
    /// distances (`r.ViewDistanceScale`, more than 0).
    pub view_distance_scale: f32,
    /// Passes are recorded into secondaries on the workers (`r.RHICmdList.ParallelRecord`).
    pub parallel_record: bool,
    /// The render workers poll through the frame's CPU stages instead of
    /// sleeping between parallel sections (`r.RenderWorkers.StayAwake`).
    pub workers_stay_awake: bool,
    /// Identical commands merge into instanced draws (`r.MeshDrawCommands.DynamicInstancing`).
    pub dynamic_instancing: bool,
    /// Static primitives build their commands every frame, as dynamic ones
    /// do (`r.MeshDrawCommands.ForceDynamicPath`).
    pub force_dynamic_path: bool,
    /// Software occlusion culling of the main views (`r.AllowOcclusionQueries`).
    pub occlusion_culling: bool,
    /// Frames allowed on the GPU at once (`r.FramesInFlight`, at least 1;
    /// the device's frame slots bound it too).
    pub frames_in_flight: usize,
    /// Every main view draws in wireframe (`r.Wireframe`).
    pub wireframe: bool,
    /// The directional light's shadow map.
    pub shadow: ShadowSettings,
    /// A large batch of adds takes its slots in space order (`r.Scene.SpaceOrderAdds`).
    pub space_order_adds: bool,
    /// How the base and translucency passes shade.
    pub shading: ShadingSettings,
    /// The clustered lighting's grid.
    pub light_grid: LightGridSettings,
    /// The tone-mapping post pass.
    pub tonemap: TonemapSettings,
    /// `r.AntiAliasingMethod`.
    pub anti_aliasing: AntiAliasing,
    /// Which opaque batches the depth prepass draws (`r.EarlyZPassMode`).
    pub early_z: EarlyZ,
    /// Bloom (`r.Bloom`, `r.Bloom.Intensity`, `r.Bloom.Threshold`).
    pub bloom: BloomSettings,
    /// Automatic exposure.
    pub auto_exposure: AutoExposureSettings,
}

/// Bloom's settings (`crate::postprocess::bloom`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BloomSettings {
    /// `r.Bloom`.
    pub enabled: bool,
    /// Its share of the image, clamped to 0..=1.
    pub intensity: f32,
    /// Only light brighter than this blooms (0: all, energy-conserving); at least 0.
    pub threshold: f32,
}

/// Which batches the depth prepass draws (UE's EDepthDrawingMode,
/// `r.EarlyZPassMode`); the base pass writes the depth of the others.
/// Whatever is asked, TAA's frames draw every opaque batch in the prepass
/// (it writes the motion vectors) and MSAA's draw no masked one (masked
/// materials then cover samples by their opacity in the base pass:
/// alpha to coverage): [`Self::effective`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EarlyZ {
    /// 0: no prepass; the base pass writes all depth.
    None,
    /// 1: opaque materials only, not masked ones (UE's DDM_NonMaskedOnly).
    OpaqueOnly,
    /// 3: opaque and masked (UE's DDM_AllOpaque; the default).
    AllOpaque,
    /// 4: masked materials only (UE's DDM_MaskedOnly): the costly pixels
    /// are rejected early, opaque vertices are not transformed twice.
    MaskedOnly,
}

impl EarlyZ {
    /// The prepass with the anti-aliasing method `aa`: all opaque under
    /// TAA, no masked batch under MSAA.
    pub fn effective(self, aa: AntiAliasing) -> Self {
        match (self, aa) {
            (_, AntiAliasing::Taa(_)) => EarlyZ::AllOpaque,
            (EarlyZ::AllOpaque, AntiAliasing::Msaa(_)) => EarlyZ::OpaqueOnly,
            (EarlyZ::MaskedOnly, AntiAliasing::Msaa(_)) => EarlyZ::None,
            (mode, _) => mode,
        }
    }

    /// Whether the prepass draws opaque batches, and masked ones.
    pub fn draws(self) -> (bool, bool) {
        match self {
            EarlyZ::None => (false, false),
            EarlyZ::OpaqueOnly => (true, false),
            EarlyZ::AllOpaque => (true, true),
            EarlyZ::MaskedOnly => (false, true),
        }
    }

    /// Its name in the stats file.
    pub fn name(self) -> &'static str {
        match self {
            EarlyZ::None => "none",
            EarlyZ::OpaqueOnly => "opaque-only",
            EarlyZ::AllOpaque => "all-opaque",
            EarlyZ::MaskedOnly => "masked-only",
        }
    }
}

/// The anti-aliasing method (`r.AntiAliasingMethod`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum AntiAliasing {
    /// 0: none.
    None,
    /// 1: FXAA on the tone-mapped image (`crate::postprocess::fxaa`).
    Fxaa,
    /// 3: MSAA with this many samples per pixel (`r.MSAACount`: 2, 4 or 8)
    /// in scene color and depth, resolved before post-processing.
    Msaa(u32),
    /// 2: TAA (`crate::postprocess::taa`) with this current-frame weight
    /// (`r.TemporalAACurrentFrameWeight`, 0.01..=1).
    Taa(f32),
}

impl AntiAliasing {
    /// Its name in the stats file (`image.aa`) and the samples' `--aa`.
    pub fn name(self) -> &'static str {
        match self {
            AntiAliasing::None => "none",
            AntiAliasing::Fxaa => "fxaa",
            AntiAliasing::Msaa(2) => "msaa2",
            AntiAliasing::Msaa(8) => "msaa8",
            AntiAliasing::Msaa(_) => "msaa4",
            AntiAliasing::Taa(_) => "taa",
        }
    }

    /// Whether it is TAA (the frame jitters and writes motion vectors).
    pub fn is_taa(self) -> bool {
        matches!(self, AntiAliasing::Taa(_))
    }

    /// Samples per pixel of scene color and depth it asks for.
    pub fn samples(self) -> u32 {
        match self {
            AntiAliasing::Msaa(n) => n,
            _ => 1,
        }
    }
}

/// The directional light's cascaded shadow map (`crate::shadow_cascades`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ShadowSettings {
    /// A shadow-casting directional light gets shadow views (`r.Shadow.Enable`).
    pub enabled: bool,
    /// A cascade's width and height in texels (`r.Shadow.MapSize`, within
    /// [`Self::MIN_MAP_SIZE`]..=[`Self::MAX_MAP_SIZE`]; at most 4096 with
    /// more than one cascade, whose 2×2 grid is the shadow map).
    pub map_size: u32,
    /// Cascades (`r.Shadow.CSM.MaxCascades`, 1..=4).
    pub cascades: u32,
    /// The first cascade's far depth (`r.Shadow.CSM.FirstCascadeDistance`, > 0).
    pub first_cascade_distance: f32,
    /// No directional shadow past this depth (`r.Shadow.CSM.MaxDistance`, > 0).
    pub max_distance: f32,
    /// The share of a cascade's depth range blended into the next
    /// (`r.Shadow.CSM.Transition`, 0..=0.5).
    pub cascade_transition: f32,
    /// Filtering (`r.Shadow.FilterQuality`): 0 one hardware 2×2
    /// comparison, 1 a 3×3 grid of them, 2 a 5×5 Gaussian.
    pub filter_quality: u32,
    /// The point and spot lights' shadow atlas (`r.Shadow.AtlasSize`, a
    /// power of two in 512..=8192; `r.Shadow.Cache`).
    pub atlas: AtlasSettings,
}

impl ShadowSettings {
    /// The smallest shadow map.
    pub const MIN_MAP_SIZE: u32 = 64;
    /// The largest shadow map.
    pub const MAX_MAP_SIZE: u32 = 8192;
}

/// The light grid of clustered lighting (`crate::light_grid`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LightGridSettings {
    /// Tile size in pixels (`r.Forward.LightGridPixelSize`, 8..=1024).
    pub pixel_size: u32,
    /// Depth slices (`r.Forward.LightGridSizeZ`, 1..=128).
    pub slices: u32,
}

/// The atlas's settings (`r.Shadow.AtlasSize`, `r.Shadow.Cache`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AtlasSettings {
    /// The atlas's side in texels (`r.Shadow.AtlasSize`).
    pub size: u32,
    /// Keep tiles whose shadow did not change (`r.Shadow.Cache`).
    pub cache: bool,
}

/// How the base and translucency passes shade.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ShadingSettings {
    /// The hemisphere ambient's scale (`r.SkyLight.Intensity`, at least 0).
    pub sky_light: f32,
    /// Geometric specular anti-aliasing's variance scale
    /// (`r.Shading.SpecularAAVariance`, at least 0; 0 = off).
    pub specular_aa_variance: f32,
}

impl ShadingSettings {
    /// The largest roughness² geometric specular anti-aliasing adds
    /// (Filament's default threshold): a very curved surface is not made
    /// fully rough.
    pub const SPECULAR_AA_THRESHOLD: f32 = 0.2;
}

/// The curve (`r.Tonemapper`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TonemapCurve {
    /// 0: linear, clamped to 0..1.
    None,
    /// 1: ACES fitted (Stephen Hill's fit of the RRT + sRGB ODT).
    AcesFitted,
    /// 2: AgX (Troy Sobotka's, Blender 4's default view transform).
    AgX,
    /// 3: Khronos PBR Neutral (the glTF viewers' choice for colour fidelity).
    PbrNeutral,
}

impl TonemapCurve {
    /// Its name in the stats file (`image.tonemapper`).
    pub fn name(self) -> &'static str {
        match self {
            TonemapCurve::None => "none",
            TonemapCurve::AcesFitted => "aces",
            TonemapCurve::AgX => "agx",
            TonemapCurve::PbrNeutral => "pbr_neutral",
        }
    }
}

/// Automatic exposure's settings (`crate::postprocess::exposure`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AutoExposureSettings {
    /// `r.AutoExposure`.
    pub enabled: bool,
    /// The darkest EV100 it picks (at most `max_ev100`).
    pub min_ev100: f32,
    /// The brightest EV100 it picks.
    pub max_ev100: f32,
    /// Adaptation rate (1/s, at least 0.01) towards a brighter scene...
    pub speed_up: f32,
    /// ...and towards a darker one.
    pub speed_down: f32,
    /// EV added to its pick.
    pub compensation: f32,
}

/// A frame's tone-mapping settings (read from `r.Tonemapper` and
/// `r.Exposure` with the rest of the frame's settings: `FrameSettings`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TonemapSettings {
    /// The curve (`r.Tonemapper`).
    pub curve: TonemapCurve,
    /// Linear multiplier, at least 0.
    pub exposure: f32,
}

impl FrameSettings {
    /// The settings `cvars` hold now. Values out of range are clamped as
    /// each field says (`r.Tonemapper` and `r.AntiAliasingMethod` take only
    /// their values); a negative `r.Exposure` counts as 0.
    pub fn from_cvars(cvars: &ConsoleVariables) -> Self {
        let map_size = cvars.int(cvars::SHADOW_MAP_SIZE).clamp(ShadowSettings::MIN_MAP_SIZE.into(), ShadowSettings::MAX_MAP_SIZE.into());
        let cascades = cvars.int(cvars::SHADOW_CSM_MAX_CASCADES).clamp(1, 4) as u32;
        let curve = match cvars.int(cvars::TONEMAPPER) {
            0 => TonemapCurve::None,
            2 => TonemapCurve::AgX,
            3 => TonemapCurve::PbrNeutral,
            _ => TonemapCurve::AcesFitted,
        };
        let anti_aliasing = match cvars.int(cvars::ANTI_ALIASING_METHOD) {
            1 => AntiAliasing::Fxaa,
            2 => AntiAliasing::Taa(cvars.float(cvars::TAA_CURRENT_FRAME_WEIGHT).clamp(0.01, 1.0)),
            3 => AntiAliasing::Msaa(cvars.int(cvars::MSAA_COUNT).clamp(2, 8) as u32),
            _ => AntiAliasing::None,
        };
        Self {
            parallel_pass_setup: cvars.bool(cvars::PARALLEL_PASS_SETUP),
            view_distance_scale: cvars.float(cvars::VIEW_DISTANCE_SCALE),
            parallel_record: cvars.bool(cvars::PARALLEL_RECORD),
            workers_stay_awake: cvars.bool(cvars::RENDER_WORKERS_STAY_AWAKE),
            dynamic_instancing: cvars.bool(cvars::DYNAMIC_INSTANCING),
            force_dynamic_path: cvars.bool(cvars::FORCE_DYNAMIC_PATH),
            occlusion_culling: cvars.bool(cvars::ALLOW_OCCLUSION_QUERIES),
            frames_in_flight: usize::try_from(cvars.int(cvars::FRAMES_IN_FLIGHT).max(1)).unwrap_or(usize::MAX),
            wireframe: cvars.bool(cvars::WIREFRAME),
            shadow: ShadowSettings {
                enabled: cvars.bool(cvars::SHADOW_ENABLE),
                map_size: if cascades > 1 { (map_size as u32).min(4096) } else { map_size as u32 },
                cascades,
                first_cascade_distance: cvars.float(cvars::SHADOW_CSM_FIRST_CASCADE_DISTANCE).max(1e-3),
                max_distance: cvars.float(cvars::SHADOW_CSM_MAX_DISTANCE).max(1e-3),
                cascade_transition: cvars.float(cvars::SHADOW_CSM_TRANSITION).clamp(0.0, 0.5),
                filter_quality: cvars.int(cvars::SHADOW_FILTER_QUALITY).clamp(0, 2) as u32,
                atlas: AtlasSettings {
                    size: 1 << (cvars.int(cvars::SHADOW_ATLAS_SIZE).clamp(512, 8192) as u32).ilog2(),
                    cache: cvars.bool(cvars::SHADOW_CACHE),
                },
            },
            space_order_adds: cvars.bool(cvars::SPACE_ORDER_ADDS),
            shading: ShadingSettings {
                sky_light: cvars.float(cvars::SKY_LIGHT_INTENSITY).max(0.0),
                specular_aa_variance: cvars.float(cvars::SPECULAR_AA_VARIANCE).max(0.0),
            },
            light_grid: LightGridSettings {
                pixel_size: cvars.int(cvars::LIGHT_GRID_PIXEL_SIZE).clamp(8, 1024) as u32,
                slices: cvars.int(cvars::LIGHT_GRID_SIZE_Z).clamp(1, 128) as u32,
            },
            tonemap: TonemapSettings { curve, exposure: cvars.float(cvars::EXPOSURE).max(0.0) },
            anti_aliasing,
            early_z: match cvars.int(cvars::EARLY_Z_PASS_MODE) {
                0 => EarlyZ::None,
                1 => EarlyZ::OpaqueOnly,
                4 => EarlyZ::MaskedOnly,
                _ => EarlyZ::AllOpaque,
            },
            bloom: BloomSettings {
                enabled: cvars.bool(cvars::BLOOM),
                intensity: cvars.float(cvars::BLOOM_INTENSITY).clamp(0.0, 1.0),
                threshold: cvars.float(cvars::BLOOM_THRESHOLD).max(0.0),
            },
            auto_exposure: {
                let (a, b) = (cvars.float(cvars::AUTO_EXPOSURE_MIN_EV100), cvars.float(cvars::AUTO_EXPOSURE_MAX_EV100));
                AutoExposureSettings {
                    enabled: cvars.bool(cvars::AUTO_EXPOSURE),
                    min_ev100: a.min(b).clamp(-20.0, 30.0),
                    max_ev100: a.max(b).clamp(-20.0, 30.0),
                    speed_up: cvars.float(cvars::AUTO_EXPOSURE_SPEED_UP).max(0.01),
                    speed_down: cvars.float(cvars::AUTO_EXPOSURE_SPEED_DOWN).max(0.01),
                    compensation: cvars.float(cvars::AUTO_EXPOSURE_COMPENSATION).clamp(-10.0, 10.0),
                }
            },
        }
    }
}

impl Default for FrameSettings {
    /// The settings of the console variables' defaults.
    fn default() -> Self {
        Self::from_cvars(&ConsoleVariables::default())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_out_of_range_are_clamped_once_here() {
        let mut c = ConsoleVariables::default();
        for (name, value) in [
            (cvars::SHADOW_MAP_SIZE, "1"),
            (cvars::FRAMES_IN_FLIGHT, "0"),
            (cvars::EXPOSURE, "-3"),
            (cvars::SKY_LIGHT_INTENSITY, "-1"),
            (cvars::TONEMAPPER, "0"),
            (cvars::LIGHT_GRID_PIXEL_SIZE, "0"),
            (cvars::LIGHT_GRID_SIZE_Z, "1000"),
        ] {
            c.set(name, value).unwrap();
        }
        let s = FrameSettings::from_cvars(&c);
        assert_eq!((s.shadow.map_size, s.frames_in_flight), (ShadowSettings::MIN_MAP_SIZE, 1));
        assert_eq!((s.tonemap.exposure, s.tonemap.curve, s.shading.sky_light), (0.0, TonemapCurve::None, 0.0));
        assert_eq!(s.light_grid, LightGridSettings { pixel_size: 8, slices: 128 });
        c.set(cvars::SHADOW_MAP_SIZE, "100000").unwrap();
        // A tone mapper that does not exist is refused, not clamped.
        assert!(c.set(cvars::TONEMAPPER, "7").is_err());
        c.set(cvars::BLOOM_INTENSITY, "4").unwrap();
        c.set(cvars::BLOOM_THRESHOLD, "-1").unwrap();
        let s = FrameSettings::from_cvars(&c);
        // With four cascades, four 4096² tiles make an 8192² shadow map.
        assert_eq!((s.shadow.map_size, s.tonemap.curve), (4096, TonemapCurve::None));
        assert_eq!((s.bloom.intensity, s.bloom.threshold), (1.0, 0.0));
        c.set(cvars::SHADOW_CSM_MAX_CASCADES, "1").unwrap();
        assert_eq!(FrameSettings::from_cvars(&c).shadow.map_size, ShadowSettings::MAX_MAP_SIZE);
        for (name, value) in [
            (cvars::SHADOW_CSM_MAX_CASCADES, "9"),
            (cvars::SHADOW_CSM_TRANSITION, "3"),
            (cvars::SHADOW_FILTER_QUALITY, "-2"),
            (cvars::SHADOW_CSM_MAX_DISTANCE, "-5"),
        ] {
            c.set(name, value).unwrap();
        }
        let s = FrameSettings::from_cvars(&c).shadow;
        assert_eq!((s.cascades, s.cascade_transition, s.filter_quality), (4, 0.5, 0));
        assert!(s.max_distance > 0.0);
    }

    #[test]
    fn the_defaults_are_the_console_variables_defaults() {
        let s = FrameSettings::default();
        assert!(s.parallel_pass_setup && s.parallel_record && s.dynamic_instancing && s.shadow.enabled && !s.wireframe);
        assert_eq!(s.tonemap, TonemapSettings { curve: TonemapCurve::AcesFitted, exposure: 1.0 });
    }
}
