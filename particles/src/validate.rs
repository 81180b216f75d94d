//! Validation of emitter assets: the values serde cannot judge.
//!
//! Parsing guarantees structure and types; this file guarantees what the
//! simulation relies on without re-checking in the hot loop: lifetimes ≥
//! [`MIN_LIFETIME`] (the update divides by them once, at spawn, and `1 /
//! lifetime` must stay finite), spawn rates ≤ [`MAX_SPAWN_RATE`] and burst
//! counts ≤ [`MAX_PARTICLES_LIMIT`] (each times its scale curve's largest
//! value) and at most [`MAX_BURSTS`] bursts (the work of one tick stays
//! bounded), a random burst's low count ≤ its count, a delay ≤
//! [`MAX_EMITTER_DELAY`], a sprite sheet of `1..=`[`MAX_SUB_IMAGES`]
//! images per axis (and a `sub_image_index` module only with one), at most
//! [`MAX_RANDOM_IMAGE_CHANGES`] random image changes (and some only with a
//! random `sub_image_index`), finite numbers everywhere
//! (a NaN would spread through a whole emitter's bounds), `min ≤ max`,
//! curve keys in `[0, 1]` and strictly increasing (the lookup-table baker and
//! the key search assume it), capacity in range, one module of each
//! non-additive kind. Each error names the field by the JSON path of the
//! value, so it reads the same as a parse error.

use glam::Vec3;

use crate::asset::{
    CollisionResponse, EmitterAsset, LocationShape, Module, RequiredModule, SpawnModule, SubUvInterpolation, VelocityShape, MAX_BURSTS,
    MAX_EMITTER_DELAY, MAX_PARTICLES_LIMIT, MAX_RANDOM_IMAGE_CHANGES, MAX_SPAWN_RATE, MAX_SUB_IMAGES, MIN_LIFETIME,
};
use crate::distribution::{Distribution, DistributionValue};
use crate::error::ParticleError;
use crate::json_path::{join_field, join_index};

fn lifetime(c: f32) -> Option<&'static str> {
    // The message spells the cap out (a test keeps it equal to MIN_LIFETIME).
    (c < MIN_LIFETIME).then_some("must be ≥ MIN_LIFETIME (1e-4 s)")
}

fn non_negative(c: f32) -> Option<&'static str> {
    (c < 0.0).then_some("must be ≥ 0")
}

fn any(_: f32) -> Option<&'static str> {
    None
}

fn check_finite(path: String, v: &[f32]) -> Result<(), ParticleError> {
    if v.iter().all(|c| c.is_finite()) {
        Ok(())
    } else {
        Err(ParticleError::invalid(path, "must be finite"))
    }
}

fn check_box(path: &str, min: Vec3, max: Vec3) -> Result<(), ParticleError> {
    check_finite(join_field(path, "min"), &min.to_array())?;
    check_finite(join_field(path, "max"), &max.to_array())?;
    if min.cmpgt(max).any() {
        return Err(ParticleError::invalid(join_field(path, "max"), "must be ≥ min in every component"));
    }
    Ok(())
}

fn not_per_tick<T: DistributionValue>(path: &str, d: &Distribution<T>) -> Result<(), ParticleError> {
    not_random(path, d, "over-life modules take a constant or a curve, not a random range")
}

fn not_random<T: DistributionValue>(path: &str, d: &Distribution<T>, message: &'static str) -> Result<(), ParticleError> {
    if matches!(d, Distribution::Uniform { .. }) {
        return Err(ParticleError::invalid(join_field(path, "uniform"), message));
    }
    Ok(())
}

/// Checks a spawn scale over emitter time (at `path`): a constant or a
/// curve of finite values ≥ 0. Returns its largest value (1 when absent),
/// what the caps multiply by.
fn check_scale(path: &str, d: Option<&Distribution<f32>>) -> Result<f64, ParticleError> {
    let Some(d) = d else { return Ok(1.0) };
    not_random(path, d, "spawn scales take a constant or a curve over emitter time, not a random range")?;
    d.validate(path, non_negative)?;
    Ok(d.values().into_iter().fold(0.0f64, |m, v| m.max(f64::from(v))))
}

/// The spawn rate and burst count of the spawn modules seen so far: spawn
/// modules add up, so their caps hold for the emitter as a whole.
#[derive(Default)]
struct SpawnTotals {
    rate: f64,
    bursts: usize,
}

impl EmitterAsset {
    /// Validates this emitter; error paths start with `path`.
    pub fn validate(&self, path: &str) -> Result<(), ParticleError> {
        let req = &self.required;
        validate_required(req, &join_field(path, "required"))?;
        let mp = join_field(path, "modules");
        let mut totals = SpawnTotals::default();
        let mut seen: Vec<(&'static str, usize)> = Vec::new();
        for (j, module) in self.modules.iter().enumerate() {
            let at = join_index(&mp, j);
            check_not_duplicate(module, j, &mp, &at, &mut seen)?;
            let p = join_field(&at, module.kind_name());
            validate_module(module, &p, req, &mut totals)?;
        }
        let random_index = self.modules.iter().any(|m| matches!(m, Module::SubImageIndex(Distribution::Uniform { .. })));
        if req.random_image_changes > 0 && !random_index {
            return Err(ParticleError::invalid(
                join_field(&join_field(path, "required"), "random_image_changes"),
                "needs a sub_image_index module with a uniform range (a random sub-image to change)",
            ));
        }
        Ok(())
    }
}

/// Checks the required module (at `rp`): material, capacity, timing and
/// the sprite sheet.
fn validate_required(req: &RequiredModule, rp: &str) -> Result<(), ParticleError> {
    if req.material.trim().is_empty() {
        return Err(ParticleError::invalid(join_field(rp, "material"), "must not be empty"));
    }
    if req.max_particles == 0 || req.max_particles > MAX_PARTICLES_LIMIT {
        return Err(ParticleError::invalid(
            join_field(rp, "max_particles"),
            format!("must be in 1..={MAX_PARTICLES_LIMIT} (got {})", req.max_particles),
        ));
    }
    if !(req.emitter_duration.is_finite() && req.emitter_duration > 0.0) {
        return Err(ParticleError::invalid(join_field(rp, "emitter_duration"), "must be finite and > 0"));
    }
    if !(0.0..=MAX_EMITTER_DELAY).contains(&req.emitter_delay) {
        return Err(ParticleError::invalid(
            join_field(rp, "emitter_delay"),
            format!("must be in [0, MAX_EMITTER_DELAY = {MAX_EMITTER_DELAY}] s"),
        ));
    }
    if req.random_image_changes > MAX_RANDOM_IMAGE_CHANGES {
        return Err(ParticleError::invalid(
            join_field(rp, "random_image_changes"),
            format!("must be in 0..={MAX_RANDOM_IMAGE_CHANGES} (got {})", req.random_image_changes),
        ));
    }
    for (field, n) in [("sub_images_horizontal", req.sub_images_horizontal), ("sub_images_vertical", req.sub_images_vertical)] {
        if !(1..=MAX_SUB_IMAGES).contains(&n) {
            return Err(ParticleError::invalid(join_field(rp, field), format!("must be in 1..={MAX_SUB_IMAGES} (got {n})")));
        }
    }
    Ok(())
}

/// Rejects a second module of a non-additive kind (module `j`, at `at`);
/// `seen` holds each such kind's first index.
fn check_not_duplicate(module: &Module, j: usize, mp: &str, at: &str, seen: &mut Vec<(&'static str, usize)>) -> Result<(), ParticleError> {
    let kind = module.kind_name();
    if !module.may_repeat() {
        if let Some((_, first)) = seen.iter().find(|(k, _)| *k == kind) {
            return Err(ParticleError::invalid(join_field(at, kind), format!("duplicate module (first at {})", join_index(mp, *first))));
        }
        seen.push((kind, j));
    }
    Ok(())
}

/// Checks one module's values (at `p`) against the emitter's required
/// settings `req`.
fn validate_module(module: &Module, p: &str, req: &RequiredModule, totals: &mut SpawnTotals) -> Result<(), ParticleError> {
    match module {
        Module::Spawn(spawn) => validate_spawn(spawn, p, req.emitter_duration, totals)?,
        Module::Lifetime(d) => d.validate(p, lifetime)?,
        Module::InitialLocation(shape) => validate_location(shape, p)?,
        Module::InitialVelocity(shape) => validate_velocity(shape, p)?,
        Module::InitialSize(d) => d.validate(p, non_negative)?,
        Module::InitialColor(d) => d.validate(p, non_negative)?,
        Module::InitialRotation(d) | Module::RotationRate(d) => d.validate(p, any)?,
        Module::Acceleration(a) => check_finite(p.to_owned(), &a.to_array())?,
        Module::Drag { coefficient } => {
            if !(coefficient.is_finite() && *coefficient >= 0.0) {
                return Err(ParticleError::invalid(join_field(p, "coefficient"), "must be finite and ≥ 0"));
            }
        }
        Module::ColorOverLife(d) => {
            not_per_tick(p, d)?;
            d.validate(p, non_negative)?;
        }
        Module::SizeOverLife(d) => {
            not_per_tick(p, d)?;
            d.validate(p, non_negative)?;
        }
        Module::SubImageIndex(d) => {
            if req.sub_uv_interpolation == SubUvInterpolation::None {
                return Err(ParticleError::invalid(
                    p,
                    "needs a sprite sheet: set the required module's sub_uv_interpolation to linear or linear_blend",
                ));
            }
            // A uniform range is drawn per particle at spawn (random sub-UV).
            d.validate(p, non_negative)?;
        }
        Module::KillVolume { min, max, .. } => check_box(p, *min, *max)?,
        Module::GroundPlaneCollision { height, response } => {
            check_finite(join_field(p, "height"), &[*height])?;
            if let CollisionResponse::Bounce { restitution } = response {
                if !(0.0..=1.0).contains(restitution) {
                    return Err(ParticleError::invalid(
                        join_field(&join_field(&join_field(p, "response"), "bounce"), "restitution"),
                        "must be in [0, 1]",
                    ));
                }
            }
        }
    }
    Ok(())
}

/// Checks a spawn module (at `p`): its rate and bursts, and the emitter's
/// totals with them added.
fn validate_spawn(spawn: &SpawnModule, p: &str, emitter_duration: f32, totals: &mut SpawnTotals) -> Result<(), ParticleError> {
    if !(spawn.rate.is_finite() && spawn.rate >= 0.0) {
        return Err(ParticleError::invalid(join_field(p, "rate"), "must be finite and ≥ 0"));
    }
    let rate_scale = check_scale(&join_field(p, "rate_scale"), spawn.rate_scale.as_ref())?;
    let burst_scale = check_scale(&join_field(p, "burst_scale"), spawn.burst_scale.as_ref())?;
    totals.rate += f64::from(spawn.rate) * rate_scale;
    if totals.rate > f64::from(MAX_SPAWN_RATE) {
        // Name the scale when it is what pushes the rate over.
        let field = if rate_scale > 1.0 { "rate_scale" } else { "rate" };
        return Err(ParticleError::invalid(
            join_field(p, field),
            format!(
                "the emitter's spawn rates (times their largest scale) add up to {} per second, \
                 more than MAX_SPAWN_RATE ({MAX_SPAWN_RATE})",
                totals.rate
            ),
        ));
    }
    totals.bursts += spawn.bursts.len();
    if totals.bursts > MAX_BURSTS {
        return Err(ParticleError::invalid(join_field(p, "bursts"), format!("more than MAX_BURSTS ({MAX_BURSTS}) bursts in one emitter")));
    }
    for (k, burst) in spawn.bursts.iter().enumerate() {
        let bp = join_index(&join_field(p, "bursts"), k);
        if !(burst.time >= 0.0 && burst.time < emitter_duration) {
            return Err(ParticleError::invalid(join_field(&bp, "time"), format!("must be in [0, emitter_duration = {emitter_duration})")));
        }
        if burst.count == 0 || burst.count > MAX_PARTICLES_LIMIT {
            return Err(ParticleError::invalid(
                join_field(&bp, "count"),
                format!("must be in 1..={MAX_PARTICLES_LIMIT} (got {})", burst.count),
            ));
        }
        if let Some(low) = burst.count_low {
            if low > burst.count {
                return Err(ParticleError::invalid(join_field(&bp, "count_low"), format!("must be ≤ count = {} (got {low})", burst.count)));
            }
        }
        if (f64::from(burst.count) * burst_scale).round() > f64::from(MAX_PARTICLES_LIMIT) {
            return Err(ParticleError::invalid(
                join_field(p, "burst_scale"),
                format!("bursts[{k}].count × the largest burst scale is more than MAX_PARTICLES_LIMIT ({MAX_PARTICLES_LIMIT})"),
            ));
        }
    }
    Ok(())
}

/// Checks an initial-location shape (at `p`).
fn validate_location(shape: &LocationShape, p: &str) -> Result<(), ParticleError> {
    match shape {
        LocationShape::Point { position } => check_finite(join_field(&join_field(p, "point"), "position"), &position.to_array()),
        LocationShape::Box { min, max } => check_box(&join_field(p, "box"), *min, *max),
        LocationShape::Sphere { center, radius, .. } => {
            let sp = join_field(p, "sphere");
            check_finite(join_field(&sp, "center"), &center.to_array())?;
            if !(radius.is_finite() && *radius >= 0.0) {
                return Err(ParticleError::invalid(join_field(&sp, "radius"), "must be finite and ≥ 0"));
            }
            Ok(())
        }
    }
}

/// Checks an initial-velocity shape (at `p`).
fn validate_velocity(shape: &VelocityShape, p: &str) -> Result<(), ParticleError> {
    match shape {
        VelocityShape::Cone { direction, angle, speed } => {
            let cp = join_field(p, "cone");
            check_finite(join_field(&cp, "direction"), &direction.to_array())?;
            if direction.length_squared() < 1e-12 {
                return Err(ParticleError::invalid(join_field(&cp, "direction"), "must not be zero"));
            }
            if !(0.0..=std::f32::consts::PI).contains(angle) {
                return Err(ParticleError::invalid(join_field(&cp, "angle"), "must be in [0, π] radians"));
            }
            speed.validate(&join_field(&cp, "speed"), any)
        }
        VelocityShape::Box { min, max } => check_box(&join_field(p, "box"), *min, *max),
    }
}
