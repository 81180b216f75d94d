//! What moves on its own in the showcase: the plaza and lake fountains,
//! the chimneys' smoke and the `--particles` geyser (Cascade-style
//! particle systems), the fireflies (point lights drifting over the
//! meadow) and the crawlers (skeletal meshes wriggling round the plaza).

use super::{ground, material, rand, LAKE_FOUNTAIN, VILLAGE};
use engine_core::*;
use glam::{Quat, Vec2, Vec3, Vec4};
use particles::{ParticleMaterials, ParticleSystem, ParticleSystemComponent};
use std::sync::Arc;

/// A fountain's jet: water sprites thrown up at `speed`, `size` across,
/// bouncing off the ground at `ground`.
fn fountain_json(ground: f32, speed: f32, size: f32) -> String {
    format!(
        r#"{{"emitters": [{{
  "name": "jet",
  "required": {{"material": "M_Water", "blend_mode": "translucent", "screen_alignment": "velocity_aligned",
               "sort_mode": "distance_to_view", "max_particles": 3000}},
  "modules": [
    {{"spawn": {{"rate": 900.0}}}},
    {{"lifetime": {{"uniform": {{"min": 1.8, "max": 2.6}}}}}},
    {{"initial_location": {{"sphere": {{"center": [0.0, 0.0, 0.0], "radius": 0.15}}}}}},
    {{"initial_velocity": {{"cone": {{"direction": [0.0, 0.0, 1.0], "angle": 0.22, "speed": {{"uniform": {{"min": {smin}, "max": {speed}}}}}}}}}}},
    {{"initial_size": {{"uniform": {{"min": [{size}, {size}], "max": [{size2}, {size2}]}}}}}},
    {{"initial_color": {{"constant": [0.75, 0.88, 1.0, 1.0]}}}},
    {{"acceleration": [0.0, 0.0, -9.8]}},
    {{"drag": {{"coefficient": 0.1}}}},
    {{"color_over_life": {{"curve": [
      {{"time": 0.0, "value": [1.0, 1.0, 1.0, 0.0]}},
      {{"time": 0.1, "value": [1.0, 1.0, 1.0, 0.9]}},
      {{"time": 1.0, "value": [0.8, 0.9, 1.0, 0.0]}}]}}}},
    {{"size_over_life": {{"curve": [{{"time": 0.0, "value": [0.6, 0.6]}}, {{"time": 1.0, "value": [1.6, 1.6]}}]}}}},
    {{"ground_plane_collision": {{"height": {ground}, "response": {{"bounce": {{"restitution": 0.25}}}}}}}}
  ]
}}]}}"#,
        smin = speed * 0.85,
        size2 = size * 1.8,
    )
}

/// One burst of `n` particles that live a minute: all alive for any short run.
fn geyser_json(n: u32) -> String {
    format!(
        r#"{{"emitters": [{{
  "name": "geyser",
  "required": {{"material": "M_Water", "blend_mode": "translucent", "screen_alignment": "facing_camera",
               "sort_mode": "none", "max_particles": {n}}},
  "modules": [
    {{"spawn": {{"rate": 0.0, "bursts": [{{"time": 0.0, "count": {n}}}]}}}},
    {{"lifetime": {{"constant": 60.0}}}},
    {{"initial_location": {{"sphere": {{"center": [0.0, 0.0, 0.0], "radius": 5.0}}}}}},
    {{"initial_velocity": {{"cone": {{"direction": [0.0, 0.0, 1.0], "angle": 0.5, "speed": {{"uniform": {{"min": 1.0, "max": 6.0}}}}}}}}}},
    {{"initial_size": {{"uniform": {{"min": [0.05, 0.05], "max": [0.12, 0.12]}}}}}},
    {{"initial_color": {{"constant": [0.8, 0.9, 1.0, 0.5]}}}},
    {{"acceleration": [0.0, 0.0, -0.5]}}
  ]
}}]}}"#
    )
}

/// The chimneys' smoke: grey puffs rising, turning and spreading with the wind.
const SMOKE_JSON: &str = r#"{"emitters": [{
  "name": "smoke",
  "required": {"material": "M_Smoke", "blend_mode": "translucent", "screen_alignment": "facing_camera",
               "sort_mode": "distance_to_view", "max_particles": 400},
  "modules": [
    {"spawn": {"rate": 14.0}},
    {"lifetime": {"uniform": {"min": 5.0, "max": 7.0}}},
    {"initial_location": {"sphere": {"center": [0.0, 0.0, 0.0], "radius": 0.3}}},
    {"initial_velocity": {"box": {"min": [-0.3, -0.3, 1.4], "max": [0.3, 0.3, 2.2]}}},
    {"initial_size": {"uniform": {"min": [1.2, 1.2], "max": [1.8, 1.8]}}},
    {"initial_rotation": {"uniform": {"min": 0.0, "max": 6.2831853}}},
    {"rotation_rate": {"uniform": {"min": -0.4, "max": 0.4}}},
    {"initial_color": {"constant": [0.42, 0.42, 0.45, 1.0]}},
    {"acceleration": [0.35, 0.2, 0.0]},
    {"color_over_life": {"curve": [
      {"time": 0.0, "value": [1.0, 1.0, 1.0, 0.0]},
      {"time": 0.15, "value": [1.0, 1.0, 1.0, 0.55]},
      {"time": 1.0, "value": [1.3, 1.3, 1.3, 0.0]}]}},
    {"size_over_life": {"curve": [{"time": 0.0, "value": [1.0, 1.0]}, {"time": 1.0, "value": [3.5, 3.5]}]}}
  ]
}]}"#;

/// The crawlers on the plaza: worms made in code
/// (`samples::creature`), skeletal meshes wriggling as they crawl round it.
const CRAWLERS: usize = 6;

/// Spawns the crawlers, each from its own point of the wriggle.
pub(super) fn spawn_crawlers(engine: &mut Engine) -> anyhow::Result<Vec<ComponentId>> {
    let (mesh, clip) = samples::creature::worm()?;
    let skin = material(engine, Vec4::new(0.85, 0.45, 0.5, 1.0), |m| m.params.roughness = 0.35)?;
    let mut out = Vec::with_capacity(CRAWLERS);
    for i in 0..CRAWLERS {
        let mut c = SkeletalMeshComponent::new(mesh.clone());
        c.add_clip(clip.clone())?;
        c.play(0, true)?;
        c.player_mut().expect("playing").seek(i as f32 * 0.37 % clip.duration())?;
        let (_, id) = engine.world.spawn_actor("crawler", Box::new(c), crawler_pose(i, 0.0))?;
        engine.world.set_material(id, 0, skin)?;
        out.push(id);
    }
    Ok(out)
}

/// Crawler `i` at time `t`: on a circle round the plaza, heading along it.
fn crawler_pose(i: usize, t: f32) -> Transform {
    let a = i as f32 * std::f32::consts::TAU / CRAWLERS as f32 + t * 0.12;
    let p = VILLAGE + Vec2::new(a.cos(), a.sin()) * (4.0 + (i % 2) as f32);
    Transform::new(Vec3::new(p.x, p.y, ground(p) + 0.3), Quat::from_rotation_z(a + std::f32::consts::FRAC_PI_2), Vec3::splat(1.6))
}

/// The crawlers move on round the plaza: a transform each.
pub(super) fn crawl(engine: &mut Engine, crawlers: &[ComponentId], t: f32) -> anyhow::Result<()> {
    for (i, &id) in crawlers.iter().enumerate() {
        engine.world.set_relative_transform(id, crawler_pose(i, t))?;
    }
    Ok(())
}

/// Fireflies over the meadow between the village and the lake.
const FIREFLIES: u32 = 300;

/// Where firefly `i` hovers (it drifts around this point).
fn firefly_home(i: u32) -> Vec3 {
    let p = Vec2::new(-40.0 + rand(i, 71) * 60.0, -40.0 + rand(i, 72) * 45.0);
    Vec3::new(p.x, p.y, ground(p).max(0.2) + 0.6 + rand(i, 73) * 1.6)
}

/// The fireflies: small yellow-green point lights, not shadowed.
pub(super) fn spawn_fireflies(engine: &mut Engine) -> anyhow::Result<Vec<ComponentId>> {
    let lights: Vec<(Box<dyn Component>, Transform)> = (0..FIREFLIES)
        .map(|i| {
            let light = PointLightComponent { color: Vec3::new(0.75, 1.0, 0.35), intensity: 0.4, radius: 1.5, ..Default::default() };
            (Box::new(light) as Box<dyn Component>, Transform::from_translation(firefly_home(i)))
        })
        .collect();
    Ok(engine.world.spawn_actors(lights)?)
}

/// The fireflies drift on small loops: a transform each, no light or draw command rebuilt.
pub(super) fn drift_fireflies(engine: &mut Engine, fireflies: &[ComponentId], t: f32) -> anyhow::Result<()> {
    for (i, id) in fireflies.iter().enumerate() {
        let phase = t * (0.3 + rand(i as u32, 74) * 0.4) + i as f32;
        let at = firefly_home(i as u32) + Vec3::new(phase.sin(), (phase * 1.3).cos(), 0.3 * (phase * 0.7).sin()) * 0.8;
        engine.world.set_relative_transform(*id, Transform::from_translation(at))?;
    }
    Ok(())
}

/// The plaza and lake fountains and the chimneys' smoke, each pre-warmed
/// by 120 ticks of 1/30 s, so that the first frame shows them in full flow.
pub(super) fn spawn_fountains_and_smoke(engine: &mut Engine, chimneys: &[Vec3]) -> anyhow::Result<()> {
    let plaza_z = ground(VILLAGE);
    let mut emitters: Vec<(Arc<ParticleSystem>, Vec3)> = vec![
        (
            Arc::new(ParticleSystem::from_json_str(&fountain_json(plaza_z + 0.6, 8.5, 0.12))?),
            Vec3::new(VILLAGE.x, VILLAGE.y, plaza_z + 2.0),
        ),
        (Arc::new(ParticleSystem::from_json_str(&fountain_json(0.0, 16.0, 0.25))?), Vec3::new(LAKE_FOUNTAIN.x, LAKE_FOUNTAIN.y, 0.2)),
    ];
    let smoke = Arc::new(ParticleSystem::from_json_str(SMOKE_JSON)?);
    emitters.extend(chimneys.iter().map(|c| (smoke.clone(), *c)));
    for (i, (system, at)) in emitters.into_iter().enumerate() {
        let mats = ParticleMaterials::for_system(engine.render_thread(), &system)?;
        let t = Transform::from_translation(at);
        let mut c = ParticleSystemComponent::new(system, 17 + i as u64, mats)?.with_spawn_transform(t.to_mat4())?;
        for _ in 0..120 {
            c.instance_mut().tick(1.0 / 30.0);
        }
        engine.world.spawn_actor("particles", Box::new(c), t)?;
    }
    Ok(())
}

/// The geyser of `--particles n`, in the lake: one burst of `n` particles.
pub(super) fn spawn_geyser(engine: &mut Engine, n: u32) -> anyhow::Result<()> {
    let system = Arc::new(ParticleSystem::from_json_str(&geyser_json(n))?);
    let mats = ParticleMaterials::for_system(engine.render_thread(), &system)?;
    let t = Transform::from_translation(Vec3::new(LAKE_FOUNTAIN.x + 12.0, LAKE_FOUNTAIN.y + 6.0, 1.0));
    let c = ParticleSystemComponent::new(system, 99, mats)?.with_spawn_transform(t.to_mat4())?;
    engine.world.spawn_actor("geyser", Box::new(c), t)?;
    Ok(())
}
