//! The particle system asset: what an artist authors, stored as JSON.
//!
//! Mirrors Cascade's `UParticleSystem`: a system is a list of emitters; an
//! emitter is a required module (material, blending, alignment, sorting,
//! capacity, looping) plus a stack of modules that either set a value when a
//! particle spawns or change it every tick. The asset is plain data: it is
//! shared between instances through an `Arc`, never mutated by simulation,
//! and turned into a per-emitter fast form when an instance is built.
//!
//! Input is untrusted (hand-edited files), so loading is two steps, both of
//! which name the offending field on failure: serde parsing with unknown
//! fields denied (typos are errors, not silently ignored settings), then
//! [`ParticleSystem::validate`] for values serde cannot judge (a lifetime of
//! -1, curve keys out of order, zero capacity). Units: world units (UE's
//! centimetres), seconds, radians.

use std::path::Path;

use glam::{Vec2, Vec3, Vec4};
use serde::{Deserialize, Serialize};

use crate::distribution::Distribution;
use crate::error::ParticleError;
use crate::json_path::{join_index, path_at};

/// The most particles one emitter may hold. A burst's `count` is capped at
/// this too.
pub const MAX_PARTICLES_LIMIT: u32 = 1 << 24;

/// The highest spawn rate, in particles per second, of one emitter (its
/// spawn modules' rates added up). Ten million a second is far past what a
/// CPU emitter can simulate; the cap keeps the spawn count of any tick a
/// finite, exactly representable number.
pub const MAX_SPAWN_RATE: f32 = 1e7;

/// The most bursts one emitter may have (over all its spawn modules).
pub const MAX_BURSTS: usize = 1024;

/// The shortest particle lifetime, in seconds (0.1 ms: far below a frame).
/// Shorter ones would make `1 / lifetime` overflow to infinity.
pub const MIN_LIFETIME: f32 = 1e-4;

/// The largest asset text, in bytes, that [`ParticleSystem::from_json_str`]
/// and [`ParticleSystem::load`] accept (4 MiB; real assets are a few KiB).
/// Larger input is rejected with [`ParticleError::TooLarge`] before it is
/// parsed, and a file is never read past this.
pub const MAX_ASSET_BYTES: usize = 4 << 20;

/// How the sprite's colour combines with the scene.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BlendMode {
    /// Writes depth, no blending.
    Opaque,
    /// Alpha-tested.
    Masked,
    /// Alpha-blended, drawn sorted in the translucency pass.
    Translucent,
    /// Added to the scene colour.
    Additive,
}

/// How a sprite quad is oriented (Cascade's `EParticleScreenAlignment`).
/// Every alignment turns the sprite in its plane by the particle's rotation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ScreenAlignment {
    /// Parallel to the view plane, `width × height` (UE's `PSA_Rectangle`;
    /// also read as `"rectangle"`).
    #[serde(alias = "rectangle")]
    FacingCamera,
    /// Stretched along the particle's velocity (old → new position).
    VelocityAligned,
    /// Parallel to the view plane, `width × width`: the size's second
    /// component is ignored (UE's `PSA_Square`).
    Square,
    /// Facing the camera's position rather than its view plane: the
    /// sprite's normal points from the particle to the eye, so sprites near
    /// the screen's edges turn towards the camera (UE's
    /// `PSA_FacingCameraPosition`). Orthographic views have no eye position
    /// and draw it as [`ScreenAlignment::FacingCamera`].
    FacingCameraPosition,
}

/// The order sprites are drawn in (Cascade's `EParticleSortMode`). Ties
/// keep storage order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SortMode {
    /// Storage order (cheapest; fine for additive and opaque).
    None,
    /// Farthest along the view direction first: the depth each particle
    /// projects to, back to front (UE's `PSORTMODE_ViewProjDepth`).
    ViewDepth,
    /// Farthest from the view origin first (back to front).
    DistanceToView,
    /// Oldest (largest relative time) first (UE's `PSORTMODE_Age_OldestFirst`;
    /// also read as `"age_oldest_first"`).
    #[serde(alias = "age_oldest_first")]
    Age,
    /// Newest (smallest relative time) first (UE's `PSORTMODE_Age_NewestFirst`).
    AgeNewestFirst,
}

/// How a particle's sub-image index picks its part of a sprite sheet (the
/// required module's `sub_uv_interpolation`, Cascade's `InterpolationMethod`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SubUvInterpolation {
    /// No sub-UV animation: the sprite shows the whole texture (the default).
    #[default]
    None,
    /// The index rounded down: one whole image at a time.
    Linear,
    /// Two neighbouring images cross-faded by the index's fraction
    /// (image `⌊i⌋` and `⌊i⌋ + 1`, weight `i - ⌊i⌋` on the second).
    LinearBlend,
}

/// The most sub-images along either axis of a sprite sheet
/// (`sub_images_horizontal` and `sub_images_vertical` are in `1..=` this).
pub const MAX_SUB_IMAGES: u32 = 64;

fn one() -> u32 {
    1
}

fn default_duration() -> f32 {
    1.0
}

/// Settings every emitter has (Cascade's `UParticleModuleRequired`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RequiredModule {
    /// Material the sprites are drawn with (resolved by the renderer).
    pub material: String,
    /// Blending of the material.
    pub blend_mode: BlendMode,
    /// Sprite orientation.
    pub screen_alignment: ScreenAlignment,
    /// Draw order.
    pub sort_mode: SortMode,
    /// Capacity; spawns beyond it are dropped. In `1..=MAX_PARTICLES_LIMIT`.
    pub max_particles: u32,
    /// Seconds per emitter loop (bursts repeat each loop). Default 1.
    #[serde(default = "default_duration")]
    pub emitter_duration: f32,
    /// Loops to run before spawning stops; 0 loops forever (the default).
    /// The emitter (and, once all its emitters have, the system) completes
    /// when its loops are done and its last particle has died.
    #[serde(default)]
    pub emitter_loops: u32,
    /// Seconds without spawning before the first loop (UE's
    /// `EmitterDelay`), or before every loop when
    /// [`Self::delay_first_loop_only`] is false. Default 0; finite and in
    /// `[0, MAX_EMITTER_DELAY]`.
    #[serde(default)]
    pub emitter_delay: f32,
    /// Whether [`Self::emitter_delay`] comes only once, after the emitter
    /// starts (or restarts), or before each loop (UE's
    /// `bDelayFirstLoopOnly`). Default true. With false, loop `k` spawns
    /// during emitter time
    /// `[k·(delay + duration) + delay, (k + 1)·(delay + duration))`, and
    /// `emitter_loops` loops end at `loops × (delay + duration)`.
    #[serde(default = "default_true")]
    pub delay_first_loop_only: bool,
    /// Simulate in the system's local space (UE's `bUseLocalSpace`): live
    /// particles move with the system's transform, and positions,
    /// velocities, acceleration, kill volumes and the ground plane are in
    /// its frame. Default false: world space, where moving the system
    /// leaves its particles behind.
    #[serde(default)]
    pub use_local_space: bool,
    /// Columns of the sprite sheet (UE's `SubImages_Horizontal`), in
    /// `1..=MAX_SUB_IMAGES`. Default 1.
    #[serde(default = "one")]
    pub sub_images_horizontal: u32,
    /// Rows of the sprite sheet (UE's `SubImages_Vertical`), in
    /// `1..=MAX_SUB_IMAGES`. Default 1. Images are numbered row by row from
    /// the top-left.
    #[serde(default = "one")]
    pub sub_images_vertical: u32,
    /// How the sub-image index becomes UVs; `none` (the default) draws the
    /// whole texture. With `linear` or `linear_blend` the index runs over
    /// every image across a particle's life, unless a `sub_image_index`
    /// module gives it.
    #[serde(default)]
    pub sub_uv_interpolation: SubUvInterpolation,
    /// How many times a particle with a random sub-image (a
    /// `sub_image_index` module with a `uniform` range) picks a new one over
    /// its life (UE's `RandomImageChanges`): its life is cut into
    /// `random_image_changes + 1` equal parts, each with its own draw.
    /// Default 0: one image for the whole life. At most
    /// [`MAX_RANDOM_IMAGE_CHANGES`]; more than 0 needs such a module.
    #[serde(default)]
    pub random_image_changes: u32,
}

/// The longest [`RequiredModule::emitter_delay`], in seconds (a day).
pub const MAX_EMITTER_DELAY: f32 = 86_400.0;

/// The most [`RequiredModule::random_image_changes`].
pub const MAX_RANDOM_IMAGE_CHANGES: u32 = 1024;

impl RequiredModule {
    /// Required settings with the given material, blending, alignment, sort
    /// mode and capacity, and every other field at its default (a 1 s loop
    /// repeating forever, no delay (once, if set), world space, no sub-UV).
    pub fn new(material: &str, blend_mode: BlendMode, screen_alignment: ScreenAlignment, sort_mode: SortMode, max_particles: u32) -> Self {
        RequiredModule {
            material: material.into(),
            blend_mode,
            screen_alignment,
            sort_mode,
            max_particles,
            emitter_duration: default_duration(),
            emitter_loops: 0,
            emitter_delay: 0.0,
            delay_first_loop_only: true,
            use_local_space: false,
            sub_images_horizontal: 1,
            sub_images_vertical: 1,
            sub_uv_interpolation: SubUvInterpolation::None,
            random_image_changes: 0,
        }
    }

    /// Images in the sprite sheet (`horizontal × vertical`).
    pub fn sub_images(&self) -> u32 {
        self.sub_images_horizontal * self.sub_images_vertical
    }
}

/// A burst: `count` particles at once, `time` seconds into each loop, or
/// a random count in `[count_low, count]` when `count_low` is given.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Burst {
    /// Seconds into the loop, in `[0, emitter_duration)`.
    pub time: f32,
    /// Particles to spawn, in `1..=MAX_PARTICLES_LIMIT` (those past the
    /// emitter's free capacity are dropped); with `count_low`, the most.
    pub count: u32,
    /// The fewest particles (UE's `CountLow`, which is unused when
    /// negative): each time the burst fires it spawns a count drawn
    /// uniformly from `count_low..=count` (from the emitter's random
    /// stream, so the same seed gives the same counts), before the burst
    /// scale multiplies it. In `0..=count`. Default none: always `count`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count_low: Option<u32>,
}

impl Burst {
    /// `count` particles `time` seconds into each loop.
    pub fn new(time: f32, count: u32) -> Self {
        Burst { time, count, count_low: None }
    }

    /// Between `low` and `high` particles (both included), drawn each
    /// time, `time` seconds into each loop.
    pub fn random(time: f32, low: u32, high: u32) -> Self {
        Burst { time, count: high, count_low: Some(low) }
    }
}

/// Continuous spawning and bursts. Several spawn modules add up.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SpawnModule {
    /// Particles per second, spread evenly within each frame; in
    /// `[0, MAX_SPAWN_RATE]`, for all spawn modules of an emitter together.
    pub rate: f32,
    /// Bursts per loop (at most [`MAX_BURSTS`] per emitter).
    #[serde(default)]
    pub bursts: Vec<Burst>,
    /// Multiplies `rate` over each emitter loop (UE's `RateScale`): a
    /// constant or a curve over normalised loop time, ≥ 0, evaluated once
    /// per tick at the middle of the tick's spawning window. `rate` × its
    /// largest value counts towards [`MAX_SPAWN_RATE`]. Default 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_scale: Option<Distribution<f32>>,
    /// Multiplies each burst's `count` by its value at the burst's
    /// normalised loop time, rounded to the nearest integer (UE's
    /// `BurstScale`): a constant or a curve, ≥ 0; a count × its largest
    /// value is at most [`MAX_PARTICLES_LIMIT`]. Default 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub burst_scale: Option<Distribution<f32>>,
}

impl SpawnModule {
    /// A spawn module with `rate` and `bursts` and no scales.
    pub fn new(rate: f32, bursts: Vec<Burst>) -> Self {
        SpawnModule { rate, bursts, rate_scale: None, burst_scale: None }
    }
}

/// Where particles start, in the system's local space.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum LocationShape {
    /// One point.
    Point {
        /// The point.
        position: Vec3,
    },
    /// Uniformly inside an axis-aligned box.
    Box {
        /// Lower corner.
        min: Vec3,
        /// Upper corner.
        max: Vec3,
    },
    /// Uniformly inside (or on) a sphere.
    Sphere {
        /// Centre.
        center: Vec3,
        /// Radius, ≥ 0.
        radius: f32,
        /// Only on the surface.
        #[serde(default)]
        surface_only: bool,
    },
}

/// Starting velocity, in the system's local space.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum VelocityShape {
    /// Uniform directions within `angle` radians of `direction`.
    Cone {
        /// Cone axis (need not be normalised; not zero).
        direction: Vec3,
        /// Half-angle in radians, in `[0, π]`.
        angle: f32,
        /// Speed along the chosen direction.
        speed: Distribution<f32>,
    },
    /// Each component uniformly in `[min, max]`.
    Box {
        /// Lower corner.
        min: Vec3,
        /// Upper corner.
        max: Vec3,
    },
}

/// What the ground plane does to a particle that crosses it downwards.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum CollisionResponse {
    /// Reflect; the normal velocity (and penetration) scale by `restitution`.
    Bounce {
        /// In `[0, 1]`.
        restitution: f32,
    },
    /// Kill the particle.
    Kill,
}

/// One module of an emitter's stack.
///
/// Initial-value modules (lifetime, initial_*, rotation_rate) and
/// over-life modules may appear once per emitter; spawn, acceleration,
/// drag and kill volumes may repeat and add up.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Module {
    /// Spawn rate and bursts.
    Spawn(SpawnModule),
    /// Seconds a particle lives (≥ [`MIN_LIFETIME`]). Without this module particles never
    /// die of age (UE's zero lifetime); kill volumes and collisions still
    /// kill them.
    Lifetime(Distribution<f32>),
    /// Starting position.
    InitialLocation(LocationShape),
    /// Starting velocity.
    InitialVelocity(VelocityShape),
    /// Starting sprite size (width, height), ≥ 0. Default 1 × 1.
    InitialSize(Distribution<Vec2>),
    /// Starting linear colour (RGBA), ≥ 0. Default opaque white.
    InitialColor(Distribution<Vec4>),
    /// Starting rotation in radians.
    InitialRotation(Distribution<f32>),
    /// Rotation speed in radians per second.
    RotationRate(Distribution<f32>),
    /// Constant acceleration (gravity is `[0, 0, -980]` in centimetres).
    Acceleration(Vec3),
    /// Linear drag: `dv/dt = -coefficient · v`.
    Drag {
        /// Per second, ≥ 0.
        coefficient: f32,
    },
    /// Colour = initial colour × this, at the particle's relative time.
    ColorOverLife(Distribution<Vec4>),
    /// Size = initial size × this, at the particle's relative time.
    SizeOverLife(Distribution<Vec2>),
    /// The sprite-sheet image a particle shows (UE's SubUV module's
    /// `SubImageIndex`), ≥ 0, clamped to the sheet's last image: a constant
    /// or a curve over the particle's relative time, or a `uniform` range,
    /// from which each particle draws its index once at spawn (kept for
    /// its life, or redrawn [`RequiredModule::random_image_changes`] times;
    /// UE's random sub-UV). A drawn index `i` shows as a constant `i`
    /// would, so `{"uniform": {"min": 0, "max": n}}` with `linear` shows
    /// each image of an `n`-image sheet equally often. Needs the required
    /// module's `sub_uv_interpolation` to be `linear` or `linear_blend`;
    /// without this module the index runs from 0 to the image count over
    /// each particle's life.
    SubImageIndex(Distribution<f32>),
    /// Kills particles inside (or outside) a world-space box.
    KillVolume {
        /// Lower corner.
        min: Vec3,
        /// Upper corner.
        max: Vec3,
        /// Kill those inside (true) or those outside (false).
        #[serde(default = "default_true")]
        kill_inside: bool,
    },
    /// A horizontal world-space plane at `height` particles cannot fall through.
    GroundPlaneCollision {
        /// World z of the plane.
        height: f32,
        /// Bounce or kill.
        response: CollisionResponse,
    },
}

fn default_true() -> bool {
    true
}

impl Module {
    /// The module's JSON name, used in error paths.
    pub fn kind_name(&self) -> &'static str {
        match self {
            Module::Spawn(_) => "spawn",
            Module::Lifetime(_) => "lifetime",
            Module::InitialLocation(_) => "initial_location",
            Module::InitialVelocity(_) => "initial_velocity",
            Module::InitialSize(_) => "initial_size",
            Module::InitialColor(_) => "initial_color",
            Module::InitialRotation(_) => "initial_rotation",
            Module::RotationRate(_) => "rotation_rate",
            Module::Acceleration(_) => "acceleration",
            Module::Drag { .. } => "drag",
            Module::ColorOverLife(_) => "color_over_life",
            Module::SizeOverLife(_) => "size_over_life",
            Module::SubImageIndex(_) => "sub_image_index",
            Module::KillVolume { .. } => "kill_volume",
            Module::GroundPlaneCollision { .. } => "ground_plane_collision",
        }
    }

    /// Whether an emitter may hold several modules of this kind.
    pub(crate) fn may_repeat(&self) -> bool {
        matches!(self, Module::Spawn(_) | Module::Acceleration(_) | Module::Drag { .. } | Module::KillVolume { .. })
    }
}

/// One emitter of a system (Cascade's `UParticleEmitter` with one LOD).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EmitterAsset {
    /// Display name.
    pub name: String,
    /// Settings every emitter has.
    pub required: RequiredModule,
    /// The module stack, applied in order.
    #[serde(default)]
    pub modules: Vec<Module>,
}

/// A particle system asset (Cascade's `UParticleSystem`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ParticleSystem {
    /// The emitters, simulated independently.
    pub emitters: Vec<EmitterAsset>,
}

impl ParticleSystem {
    /// Parses and validates a system from JSON. Errors name the field.
    /// Text longer than [`MAX_ASSET_BYTES`] is rejected unread
    /// ([`ParticleError::TooLarge`]).
    pub fn from_json_str(text: &str) -> Result<Self, ParticleError> {
        if text.len() > MAX_ASSET_BYTES {
            return Err(ParticleError::TooLarge { bytes: text.len() as u64, max: MAX_ASSET_BYTES as u64 });
        }
        let system: ParticleSystem = serde_json::from_str(text).map_err(|e| {
            let message = e.to_string();
            ParticleError::Parse { path: path_at(text, e.line(), e.column(), &message), message, line: e.line(), column: e.column() }
        })?;
        system.validate()?;
        Ok(system)
    }

    /// Pretty-printed JSON.
    pub fn to_json_string(&self) -> Result<String, ParticleError> {
        serde_json::to_string_pretty(self).map_err(ParticleError::Serialize)
    }

    /// Reads, parses and validates a JSON file. A file larger than
    /// [`MAX_ASSET_BYTES`] is rejected ([`ParticleError::TooLarge`]) without
    /// reading more than that (also for files whose size the file system
    /// does not know, such as pipes or `/dev/zero`).
    pub fn load(path: impl AsRef<Path>) -> Result<Self, ParticleError> {
        use std::io::Read;
        let path = path.as_ref();
        let io = |source| ParticleError::Io { path: path.to_owned(), source };
        let file = std::fs::File::open(path).map_err(io)?;
        let too_large = |bytes: u64| ParticleError::TooLarge { bytes, max: MAX_ASSET_BYTES as u64 };
        let len = file.metadata().map_err(io)?.len();
        if len > MAX_ASSET_BYTES as u64 {
            return Err(too_large(len));
        }
        let mut bytes = Vec::with_capacity(len as usize);
        file.take(MAX_ASSET_BYTES as u64 + 1).read_to_end(&mut bytes).map_err(io)?;
        if bytes.len() > MAX_ASSET_BYTES {
            return Err(too_large(bytes.len() as u64));
        }
        let text = String::from_utf8(bytes).map_err(|e| io(std::io::Error::new(std::io::ErrorKind::InvalidData, e)))?;
        Self::from_json_str(&text)
    }

    /// Validates, then writes pretty JSON to a file.
    pub fn save(&self, path: impl AsRef<Path>) -> Result<(), ParticleError> {
        self.validate()?;
        let path = path.as_ref();
        std::fs::write(path, self.to_json_string()? + "\n").map_err(|source| ParticleError::Io { path: path.to_owned(), source })
    }

    /// Checks every value the simulation relies on; the error names the
    /// first offending field, e.g. `emitters[1].modules[2].lifetime.uniform.min`.
    pub fn validate(&self) -> Result<(), ParticleError> {
        for (i, emitter) in self.emitters.iter().enumerate() {
            emitter.validate(&join_index("emitters", i))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MINIMAL: &str = r#"{"emitters": [{
        "name": "e",
        "required": {"material": "M", "blend_mode": "additive", "screen_alignment": "facing_camera",
                     "sort_mode": "none", "max_particles": 10},
        "modules": [{"spawn": {"rate": 5}}, {"lifetime": {"constant": 1.0}}]
    }]}"#;

    #[test]
    fn minimal_parses_with_defaults() {
        let s = ParticleSystem::from_json_str(MINIMAL).unwrap();
        assert_eq!(s.emitters[0].required.emitter_duration, 1.0);
        assert_eq!(s.emitters[0].required.emitter_loops, 0);
        assert_eq!(s.emitters[0].modules.len(), 2);
    }

    #[test]
    fn duplicate_and_bad_modules_are_named() {
        let mut s = ParticleSystem::from_json_str(MINIMAL).unwrap();
        s.emitters[0].modules.push(Module::Lifetime(Distribution::Constant(2.0)));
        let e = s.validate().unwrap_err().to_string();
        assert!(e.starts_with("emitters[0].modules[2].lifetime: duplicate module (first at emitters[0].modules[1])"), "{e}");
        s.emitters[0].modules.pop();
        s.emitters[0].modules.push(Module::ColorOverLife(Distribution::Uniform { min: Vec4::ZERO, max: Vec4::ONE }));
        let e = s.validate().unwrap_err();
        assert_eq!(e.field_path(), Some("emitters[0].modules[2].color_over_life.uniform"));
        s.emitters[0].modules.pop();
        s.emitters[0].modules[0] = Module::Spawn(SpawnModule::new(1.0, vec![Burst::new(1.0, 3)]));
        let e = s.validate().unwrap_err();
        assert_eq!(e.field_path(), Some("emitters[0].modules[0].spawn.bursts[0].time"));
    }

    #[test]
    fn unknown_field_and_variant_are_named() {
        let text = MINIMAL.replace("\"rate\": 5", "\"rat\": 5");
        let e = ParticleSystem::from_json_str(&text).unwrap_err().to_string();
        assert!(e.starts_with("emitters[0].modules[0].spawn.rat: unknown field `rat`"), "{e}");
        let text = MINIMAL.replace("\"additive\"", "\"glowing\"");
        let e = ParticleSystem::from_json_str(&text).unwrap_err().to_string();
        assert!(e.starts_with("emitters[0].required.blend_mode: unknown variant `glowing`"), "{e}");
    }
}
