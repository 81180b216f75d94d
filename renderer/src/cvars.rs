//! Console variables: a small typed registry, settable by name (UE's
//! `IConsoleManager`). The render thread reads them once per frame.

use crate::error::{RendererError, Result};
use std::collections::BTreeMap;

/// A console variable's value; its kind is fixed when it is registered.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum CvarValue {
    /// On or off (set from `1`/`0`, `true`/`false`, `on`/`off`).
    Bool(bool),
    /// An integer.
    Int(i64),
    /// A finite number.
    Float(f32),
}

#[derive(Clone, Debug)]
struct Cvar {
    value: CvarValue,
    help: String,
}

/// The registry, with the renderer's variables and their defaults.
#[derive(Clone, Debug)]
pub struct ConsoleVariables {
    vars: BTreeMap<String, Cvar>,
}

/// Merge identical mesh draw commands into instanced draws (default on).
pub const DYNAMIC_INSTANCING: &str = "r.MeshDrawCommands.DynamicInstancing";
/// Cull, gather, sort and merge the passes as parallel tasks (default on).
pub const PARALLEL_PASS_SETUP: &str = "r.MeshDrawCommands.ParallelPassSetup";
/// Record the passes into secondary command buffers on worker threads
/// (default on).
pub const PARALLEL_RECORD: &str = "r.RHICmdList.ParallelRecord";
/// Draw every view in wireframe (default off; needs the device's
/// wireframe feature).
pub const WIREFRAME: &str = "r.Wireframe";
/// Render the directional light's shadow map (default on).
pub const SHADOW_ENABLE: &str = "r.Shadow.Enable";
/// Build every command each frame through the dynamic path instead of the
/// cached one, for comparison (default off).
pub const FORCE_DYNAMIC_PATH: &str = "r.MeshDrawCommands.ForceDynamicPath";
/// The shadow map's resolution in texels (default 2048; clamped to
/// 64..=8192).
pub const SHADOW_MAP_SIZE: &str = "r.Shadow.MapSize";
/// Cascades of the shadowed directional light's shadow map (default 4,
/// clamped to 1..=4). See `crate::shadow_cascades`.
pub const SHADOW_CSM_MAX_CASCADES: &str = "r.Shadow.CSM.MaxCascades";
/// The first cascade's far depth in scene units (default 10; with more
/// than one cascade).
pub const SHADOW_CSM_FIRST_CASCADE_DISTANCE: &str = "r.Shadow.CSM.FirstCascadeDistance";
/// The distance past which the directional light casts no shadow (default 200).
pub const SHADOW_CSM_MAX_DISTANCE: &str = "r.Shadow.CSM.MaxDistance";
/// The share of each cascade's depth range over which it blends into the
/// next (default 0.2, clamped to 0..=0.5).
pub const SHADOW_CSM_TRANSITION: &str = "r.Shadow.CSM.Transition";
/// Shadow filtering: 0 = one hardware 2×2 comparison, 1 = 3×3 of them (the
/// default), 2 = 5×5 with Gaussian weights.
pub const SHADOW_FILTER_QUALITY: &str = "r.Shadow.FilterQuality";
/// The shadow atlas's width and height in texels: the point and spot
/// lights' shadows (default 4096, clamped to 512..=8192, rounded down to a
/// power of two). See `crate::shadow_atlas`.
pub const SHADOW_ATLAS_SIZE: &str = "r.Shadow.AtlasSize";
/// Keep shadow-atlas tiles whose light and casters did not change
/// (default on; 0 renders every tile every frame).
pub const SHADOW_CACHE: &str = "r.Shadow.Cache";
/// The light grid's tile size in pixels (clustered lighting; default 16,
/// clamped to 8..=1024; UE's default is 64, but on a CPU rasterizer a
/// pixel's loop over its cluster's lights costs more than the grid's CPU
/// build: `docs/perf/renderer.md`). See `crate::light_grid`.
pub const LIGHT_GRID_PIXEL_SIZE: &str = "r.Forward.LightGridPixelSize";
/// The light grid's depth slices (default 32, clamped to 1..=128).
pub const LIGHT_GRID_SIZE_Z: &str = "r.Forward.LightGridSizeZ";
/// Frames the GPU may work on while the render thread records the next
/// (1 = wait for each frame's GPU work after submitting it). Clamped to
/// 1..=the device's frame slots (`DeviceDesc::frames_in_flight`).
pub const FRAMES_IN_FLIGHT: &str = "r.FramesInFlight";
/// The tone-mapping curve from the HDR scene color to the 8-bit output:
/// 0 = none (clamped to 0..1), 1 = ACES fitted (the default), 2 = AgX,
/// 3 = Khronos PBR Neutral. See `crate::postprocess::tonemap`.
pub const TONEMAPPER: &str = "r.Tonemapper";
/// Anti-aliasing (UE's numbering): 0 = none (the default), 1 = FXAA on the
/// tone-mapped image (`crate::postprocess::fxaa`), 3 = MSAA
/// (`r.MSAACount` samples per pixel of scene color and depth, resolved
/// before post-processing), 2 = TAA (`crate::postprocess::taa`: jittered
/// frames blended into a per-view history along the motion vectors).
pub const ANTI_ALIASING_METHOD: &str = "r.AntiAliasingMethod";
/// TAA: the share of the current frame in each frame's blend (UE's
/// `r.TemporalAACurrentFrameWeight`), 0.01..=1; default 0.1 (Bevy's: UE's
/// 0.04 converges more slowly and ghosts longer).
pub const TAA_CURRENT_FRAME_WEIGHT: &str = "r.TemporalAACurrentFrameWeight";
/// Which batches the depth prepass draws (UE's numbering): 0 = none (the
/// base pass writes all depth), 1 = opaque materials only, 3 = opaque and
/// masked (the default), 4 = masked only; UE's 2 (large occluders only) is
/// refused. TAA draws all opaque batches whatever it says (motion
/// vectors), MSAA no masked ones (alpha to coverage): `crate::EarlyZ`.
pub const EARLY_Z_PASS_MODE: &str = "r.EarlyZPassMode";
/// MSAA's samples per pixel: 2, 4 (the default) or 8; where the device has
/// fewer for scene color and depth, the most it has below it (1: none).
pub const MSAA_COUNT: &str = "r.MSAACount";
/// Bloom (`crate::postprocess::bloom`): off by default (0).
pub const BLOOM: &str = "r.Bloom";
/// Bloom's share of the image, 0..=1 (default 0.15, Bevy's).
pub const BLOOM_INTENSITY: &str = "r.Bloom.Intensity";
/// Only light brighter than this blooms (default 0: all light, energy-conserving).
pub const BLOOM_THRESHOLD: &str = "r.Bloom.Threshold";
/// Linear multiplier on the scene color before tone mapping (1 = as lit).
pub const EXPOSURE: &str = "r.Exposure";
/// Automatic exposure (UE's eye adaptation, `crate::postprocess::exposure`):
/// 0 = manual (`r.Exposure`, the default), 1 = from a luminance histogram
/// of the first main view, adapted over time in its view state.
pub const AUTO_EXPOSURE: &str = "r.AutoExposure";
/// The darkest and brightest exposure auto exposure picks, as EV100.
pub const AUTO_EXPOSURE_MIN_EV100: &str = "r.AutoExposure.MinEV100";
/// See [`AUTO_EXPOSURE_MIN_EV100`].
pub const AUTO_EXPOSURE_MAX_EV100: &str = "r.AutoExposure.MaxEV100";
/// How fast the exposure follows a scene getting brighter, and darker:
/// the rate (1/s) of an exponential approach, the gap shrinking to
/// exp(-speed · t) after t seconds (to 5% after 3 / speed seconds).
pub const AUTO_EXPOSURE_SPEED_UP: &str = "r.AutoExposure.SpeedUp";
/// See [`AUTO_EXPOSURE_SPEED_UP`].
pub const AUTO_EXPOSURE_SPEED_DOWN: &str = "r.AutoExposure.SpeedDown";
/// EV added to the exposure auto exposure picks (positive: brighter).
pub const AUTO_EXPOSURE_COMPENSATION: &str = "r.AutoExposure.Compensation";
/// Scale of the hemisphere ambient (the sky and ground radiance that
/// stands in for sky lighting; 1 = as designed, 0 = no ambient: only the
/// scene's lights, as a reference renderer without an environment shows).
pub const SKY_LIGHT_INTENSITY: &str = "r.SkyLight.Intensity";
/// Geometric specular anti-aliasing: the variance of the shading normal
/// across a pixel (from its screen-space derivatives) times this scale
/// widens the specular lobe, so highlights on curved or finely detailed
/// geometry do not flicker to single bright pixels (Kaplanyan and Hoffman
/// 2016, as Filament's `specularAntiAliasingVariance` and UE's
/// `r.NormalCurvatureToRoughness`). Default 0.15; 0 = off (the BRDF exactly).
pub const SPECULAR_AA_VARIANCE: &str = "r.Shading.SpecularAAVariance";
/// Occlusion culling of primitives and instanced-mesh instances hidden
/// behind nearer opaque geometry (UE's name; default on). Never changes the
/// image: see `crate::occlusion`.
pub const ALLOW_OCCLUSION_QUERIES: &str = "r.AllowOcclusionQueries";
/// A batch of primitive adds larger than a culling chunk takes its scene
/// slots in space order, so that culling skips chunks whatever order the
/// primitives came in (default on; `crate::scene`'s add order). Off: queue
/// order, as the primitives were added.
pub const SPACE_ORDER_ADDS: &str = "r.Scene.SpaceOrderAdds";
/// The render thread's other workers poll for work through the frame's CPU
/// stages instead of sleeping between its parallel sections, so that a
/// short section does not wait for a worker to wake (default on; see
/// `crate::frame::workers_awake`). Off: rayon's own sleep.
pub const RENDER_WORKERS_STAY_AWAKE: &str = "r.RenderWorkers.StayAwake";

/// Integer variables that choose one of a few values: the values, and
/// what they take (anything else is refused with
/// `RendererError::InvalidCvarValue`).
const CHOICES: [(&str, &[i64], &str); 4] = [
    (TONEMAPPER, &[0, 1, 2, 3], "0 (none), 1 (ACES fitted), 2 (AgX) or 3 (Khronos PBR Neutral)"),
    (ANTI_ALIASING_METHOD, &[0, 1, 2, 3], "0 (none), 1 (FXAA), 2 (TAA) or 3 (MSAA)"),
    (MSAA_COUNT, &[2, 4, 8], "2, 4 or 8 samples per pixel"),
    (EARLY_Z_PASS_MODE, &[0, 1, 3, 4], "0 (no prepass), 1 (opaque only), 3 (all opaque) or 4 (masked only)"),
];

/// The scale of every far draw distance (a view's and each primitive's
/// max draw distance) and of instanced meshes' cull distances (UE's
/// `r.ViewDistanceScale`); more than 0, default 1.
pub const VIEW_DISTANCE_SCALE: &str = "r.ViewDistanceScale";

/// Float variables that must be more than 0 (anything else is refused with
/// `RendererError::InvalidCvarValue`).
const POSITIVE_FLOATS: [&str; 1] = [VIEW_DISTANCE_SCALE];

/// Integer variables that are sizes: 0 or less is refused
/// (`RendererError::InvalidCvarValue`); positive values out of range are
/// clamped where the frame reads them (`crate::FrameSettings`).
const POSITIVE_INTS: [&str; 3] = [SHADOW_MAP_SIZE, SHADOW_ATLAS_SIZE, LIGHT_GRID_SIZE_Z];

impl Default for ConsoleVariables {
    fn default() -> Self {
        let mut vars = BTreeMap::new();
        let mut add = |name: &str, value, help: &str| {
            vars.insert(name.to_string(), Cvar { value, help: help.to_string() });
        };
        add(DYNAMIC_INSTANCING, CvarValue::Bool(true), "merge identical mesh draw commands into instanced draws");
        add(PARALLEL_PASS_SETUP, CvarValue::Bool(true), "cull, gather, sort and merge passes as parallel tasks");
        add(PARALLEL_RECORD, CvarValue::Bool(true), "record passes into secondary command buffers on worker threads");
        add(WIREFRAME, CvarValue::Bool(false), "draw every view in wireframe");
        add(SHADOW_ENABLE, CvarValue::Bool(true), "render the directional light's shadow map");
        add(FORCE_DYNAMIC_PATH, CvarValue::Bool(false), "build every command each frame through the dynamic path (for comparison)");
        add(SHADOW_MAP_SIZE, CvarValue::Int(2048), "shadow map resolution in texels (per cascade)");
        add(SHADOW_CSM_MAX_CASCADES, CvarValue::Int(4), "cascades of the directional light's shadow");
        add(SHADOW_CSM_FIRST_CASCADE_DISTANCE, CvarValue::Float(10.0), "the first shadow cascade's far depth");
        add(SHADOW_CSM_MAX_DISTANCE, CvarValue::Float(200.0), "no directional shadow past this distance");
        add(SHADOW_CSM_TRANSITION, CvarValue::Float(0.2), "share of a cascade's depth over which it blends into the next");
        add(SHADOW_ATLAS_SIZE, CvarValue::Int(4096), "the point and spot light shadow atlas's size in texels");
        add(SHADOW_CACHE, CvarValue::Bool(true), "keep shadow-atlas tiles whose light and casters did not change");
        add(SHADOW_FILTER_QUALITY, CvarValue::Int(1), "shadow filtering: 0 = 2x2 hardware, 1 = 3x3, 2 = 5x5 Gaussian");
        add(LIGHT_GRID_PIXEL_SIZE, CvarValue::Int(16), "clustered lighting: the light grid's tile size in pixels");
        add(LIGHT_GRID_SIZE_Z, CvarValue::Int(32), "clustered lighting: the light grid's depth slices");
        add(
            TONEMAPPER,
            CvarValue::Int(1),
            "tone mapping of the HDR scene color: 0 = none (clamp), 1 = ACES fitted, 2 = AgX, 3 = Khronos PBR Neutral",
        );
        add(ANTI_ALIASING_METHOD, CvarValue::Int(0), "anti-aliasing: 0 = none, 1 = FXAA, 2 = TAA, 3 = MSAA (r.MSAACount)");
        add(TAA_CURRENT_FRAME_WEIGHT, CvarValue::Float(0.1), "TAA: the current frame's share of each blend with the history, 0.01..1");
        add(EARLY_Z_PASS_MODE, CvarValue::Int(3), "depth prepass: 0 = none, 1 = opaque only, 3 = all opaque, 4 = masked only");
        add(MSAA_COUNT, CvarValue::Int(4), "MSAA samples per pixel: 2, 4 or 8 (the device's most below it where it has fewer)");
        add(BLOOM, CvarValue::Bool(false), "bloom: the scene's light spread over a mip chain (energy-conserving without a threshold)");
        add(BLOOM_INTENSITY, CvarValue::Float(0.15), "bloom's share of the image, 0..1");
        add(BLOOM_THRESHOLD, CvarValue::Float(0.0), "only light brighter than this blooms (0: all light, energy-conserving)");
        add(EXPOSURE, CvarValue::Float(1.0), "linear multiplier on the scene color before tone mapping");
        add(AUTO_EXPOSURE, CvarValue::Bool(false), "automatic exposure from a luminance histogram, adapted over time (0 = r.Exposure)");
        add(AUTO_EXPOSURE_MIN_EV100, CvarValue::Float(-4.0), "auto exposure: the darkest scene's EV100 it exposes for");
        add(AUTO_EXPOSURE_MAX_EV100, CvarValue::Float(16.0), "auto exposure: the brightest scene's EV100 it exposes for");
        add(AUTO_EXPOSURE_SPEED_UP, CvarValue::Float(3.0), "auto exposure: rate (1/s) of adapting to a brighter scene");
        add(AUTO_EXPOSURE_SPEED_DOWN, CvarValue::Float(1.0), "auto exposure: rate (1/s) of adapting to a darker scene");
        add(AUTO_EXPOSURE_COMPENSATION, CvarValue::Float(0.0), "auto exposure: EV added to the exposure it picks (positive: brighter)");
        add(VIEW_DISTANCE_SCALE, CvarValue::Float(1.0), "scale of every max draw distance and instanced-mesh cull distance, > 0");
        add(SKY_LIGHT_INTENSITY, CvarValue::Float(1.0), "scale of the hemisphere ambient (0 = none: the scene's lights only)");
        add(
            SPECULAR_AA_VARIANCE,
            CvarValue::Float(0.15),
            "geometric specular anti-aliasing: scale of the normal's screen-space variance added to roughness (0 = off)",
        );
        add(
            ALLOW_OCCLUSION_QUERIES,
            CvarValue::Bool(true),
            "cull primitives and instances hidden behind nearer opaque geometry (CPU occlusion buffer)",
        );
        add(
            SPACE_ORDER_ADDS,
            CvarValue::Bool(true),
            "a batch of adds over one culling chunk takes its slots in space order (0: queue order)",
        );
        add(
            RENDER_WORKERS_STAY_AWAKE,
            CvarValue::Bool(true),
            "the render thread's workers poll for work through the frame's CPU stages instead of sleeping between sections",
        );
        add(
            FRAMES_IN_FLIGHT,
            CvarValue::Int(2),
            "frames on the GPU while the next is recorded (1..=the device's frame slots; 1 waits after each submit)",
        );
        Self { vars }
    }
}

impl ConsoleVariables {
    /// Registers a variable (feature crates add theirs); an existing one keeps its value.
    pub fn register(&mut self, name: &str, default: CvarValue, help: &str) {
        self.vars.entry(name.to_string()).or_insert(Cvar { value: default, help: help.to_string() });
    }

    /// Sets a variable from text: `1/0/true/false` for booleans, numbers otherwise.
    pub fn set(&mut self, name: &str, value: &str) -> Result<()> {
        let cvar = self.vars.get_mut(name).ok_or_else(|| RendererError::UnknownCvar(name.into()))?;
        let bad = |expected| RendererError::InvalidCvarValue { name: name.into(), value: value.into(), expected };
        // Sizes that cannot be 0 or negative: a typed error, not a clamp.
        let positive = POSITIVE_INTS.contains(&name);
        cvar.value = match cvar.value {
            CvarValue::Bool(_) => CvarValue::Bool(match value.to_ascii_lowercase().as_str() {
                "1" | "true" | "on" => true,
                "0" | "false" | "off" => false,
                _ => return Err(bad("0 or 1")),
            }),
            CvarValue::Int(_) if positive => match value.parse() {
                Ok(v) if v > 0 => CvarValue::Int(v),
                _ => return Err(bad("a positive integer")),
            },
            CvarValue::Int(_) if CHOICES.iter().any(|c| c.0 == name) => {
                let &(_, values, expected) = CHOICES.iter().find(|c| c.0 == name).expect("found above");
                match value.parse() {
                    Ok(v) if values.contains(&v) => CvarValue::Int(v),
                    _ => return Err(bad(expected)),
                }
            }
            CvarValue::Int(_) => CvarValue::Int(value.parse().map_err(|_| bad("an integer"))?),
            CvarValue::Float(_) => {
                let f: f32 = value.parse().map_err(|_| bad("a number"))?;
                if !f.is_finite() {
                    return Err(bad("a finite number"));
                }
                if POSITIVE_FLOATS.contains(&name) && f <= 0.0 {
                    return Err(bad("a number more than 0"));
                }
                CvarValue::Float(f)
            }
        };
        Ok(())
    }

    /// The value of a variable (`None` if no variable has that name).
    pub fn get(&self, name: &str) -> Option<CvarValue> {
        self.vars.get(name).map(|c| c.value)
    }

    /// A boolean variable (false if unknown or not a boolean).
    pub fn bool(&self, name: &str) -> bool {
        matches!(self.get(name), Some(CvarValue::Bool(true)))
    }

    /// An integer variable (0 if unknown or not an integer).
    pub fn int(&self, name: &str) -> i64 {
        match self.get(name) {
            Some(CvarValue::Int(i)) => i,
            _ => 0,
        }
    }

    /// A number variable (an integer one converted; 0 if unknown or a boolean).
    pub fn float(&self, name: &str) -> f32 {
        match self.get(name) {
            Some(CvarValue::Float(f)) => f,
            Some(CvarValue::Int(i)) => i as f32,
            _ => 0.0,
        }
    }

    /// Every variable with its help text.
    pub fn list(&self) -> impl Iterator<Item = (&str, CvarValue, &str)> + '_ {
        self.vars.iter().map(|(n, c)| (n.as_str(), c.value, c.help.as_str()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typed_values_and_clear_errors() {
        let mut c = ConsoleVariables::default();
        assert!(c.bool(DYNAMIC_INSTANCING));
        c.set(DYNAMIC_INSTANCING, "0").unwrap();
        assert!(!c.bool(DYNAMIC_INSTANCING));
        assert!(matches!(c.set("r.Nope", "1"), Err(RendererError::UnknownCvar(_))));
        assert!(matches!(c.set(WIREFRAME, "maybe"), Err(RendererError::InvalidCvarValue { .. })));
        c.set(SHADOW_MAP_SIZE, "1024").unwrap();
        assert_eq!(c.int(SHADOW_MAP_SIZE), 1024);
        assert!(c.set(SHADOW_MAP_SIZE, "x").is_err());
        assert_eq!(c.int(SHADOW_MAP_SIZE), 1024, "a rejected set changes nothing");
        assert_eq!((c.int(TONEMAPPER), c.float(EXPOSURE)), (1, 1.0), "ACES at exposure 1 by default");
        c.set(EXPOSURE, "2.5").unwrap();
        assert_eq!(c.float(EXPOSURE), 2.5);
        assert!(c.set(EXPOSURE, "inf").is_err());
        assert_eq!(c.float(EXPOSURE), 2.5);
    }

    #[test]
    fn a_size_of_zero_or_less_is_refused_and_changes_nothing() {
        let mut c = ConsoleVariables::default();
        for name in POSITIVE_INTS {
            let before = c.int(name);
            for bad in ["0", "-4"] {
                match c.set(name, bad) {
                    Err(RendererError::InvalidCvarValue { expected, .. }) => assert_eq!(expected, "a positive integer"),
                    other => panic!("{name}={bad}: {other:?}"),
                }
                assert_eq!(c.int(name), before, "{name} unchanged");
            }
        }
        c.set(SHADOW_ATLAS_SIZE, "100").unwrap();
        assert_eq!(crate::FrameSettings::from_cvars(&c).shadow.atlas.size, 512, "a positive size out of range is clamped");
    }
}
