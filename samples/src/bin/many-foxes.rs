//! `cargo xtask run many-foxes`: Bevy's many_foxes scene, skeletal meshes
//! at scale. N foxes (default 1,000) of the shared Fox model
//! (`../shared/gltf-samples/Fox/Fox.glb`, or `--fox PATH`) at scale 0.01,
//! in concentric rings 2 m apart with foxes 2 m apart along each ring, the
//! rings alternating direction and turning at 2 m/s, each fox running its
//! "Run" animation from its own start time (`--sync`: all in step), on a
//! 5,000 m green plane under one directional light with four cascaded
//! shadows (the first ending at 0.9 × the outer ring's radius, none past
//! 2.8 × it), seen from (1.25, 1.5, 0.5) × 0.8 × that radius (Bevy's
//! (1.25, 0.5, 1.5) with Y up) looking at the centre.
//!
//! Every fox is a `SkeletalMeshComponent` of one shared skeletal mesh: the
//! game thread evaluates each one's pose every frame (in parallel) and
//! sends its joint matrices to its proxy; no draw command is rebuilt for a
//! new pose. The benchmark's baselines: `--frozen` (the rest pose, nothing
//! evaluated or sent) and `--unskinned` (static meshes in the bind pose).

use anyhow::Context;
use clap::Parser;
use engine_core::gltf::{self, gltf_to_proxima};
use engine_core::*;
use glam::{Quat, Vec3, Vec4};
use renderer::{cvars, Material};
use samples::{runner, CommonOptions};
use std::f32::consts::TAU;
use std::path::PathBuf;

#[derive(Parser, Debug)]
#[command(name = "many-foxes", about = "Bevy's many_foxes: N running foxes (default 1,000) in turning rings, shadowed")]
struct Options {
    /// Number of foxes.
    #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    count: u32,
    /// Every fox runs in step (the same start time).
    #[arg(long)]
    sync: bool,
    /// The foxes keep their rest pose (no animation evaluated or sent): the
    /// baseline of the pose's cost (the rings still turn).
    #[arg(long, conflicts_with = "unskinned")]
    frozen: bool,
    /// The foxes are static meshes in their bind pose (no skinning): the
    /// baseline of skinning's GPU cost.
    #[arg(long)]
    unskinned: bool,
    /// The fox model (default: the shared Fox.glb).
    #[arg(long, value_name = "PATH")]
    fox: Option<PathBuf>,
    #[command(flatten)]
    common: CommonOptions,
}

/// Bevy's spacing: foxes along a ring, and between rings (m).
const FOX_SPACING: f32 = 2.0;
const RING_SPACING: f32 = 2.0;
/// How fast the rings turn, at every radius (m/s).
const RING_SPEED: f32 = 2.0;
/// The fox model's scale (the file is in centimetres).
const FOX_SCALE: f32 = 0.01;
/// The sun: Bevy's `from_euler(ZYX, 0, 1, -PI/4)` direction, Z up.
const SUN_TRAVEL: Vec3 = Vec3::new(-0.6, -0.3, -0.74);

/// One fox on its ring: where it starts (angle), its ring's radius and
/// turning direction.
struct Fox {
    id: ComponentId,
    angle: f32,
    radius: f32,
    direction: f32,
}

fn main() {
    samples::main("many-foxes", run);
}

/// The foxes' places: rings of radius 2, 4, … each holding as many foxes
/// as fit 2 m apart (Bevy's layout), alternating direction; returns
/// (angle, radius, direction) per fox and the outer ring's radius.
fn rings(count: u32) -> (Vec<(f32, f32, f32)>, f32) {
    let mut out = Vec::with_capacity(count as usize);
    let (mut radius, mut ring) = (RING_SPACING, 0u32);
    while out.len() < count as usize {
        let circumference = TAU * radius;
        let in_ring = ((circumference / FOX_SPACING) as usize).min(count as usize - out.len());
        let step = TAU / in_ring as f32;
        let direction = if ring % 2 == 0 { 1.0 } else { -1.0 };
        out.extend((0..in_ring).map(|i| (i as f32 * step, radius, direction)));
        radius += RING_SPACING;
        ring += 1;
    }
    (out, radius - RING_SPACING)
}

/// A fox's transform at `angle` on its ring: facing along its motion.
fn fox_transform(angle: f32, radius: f32, direction: f32) -> Transform {
    let at = Vec3::new(angle.cos(), angle.sin(), 0.0) * radius;
    // The model faces +X after the axis conversion; turn it to the tangent.
    let heading = angle + direction * std::f32::consts::FRAC_PI_2;
    Transform::new(at, Quat::from_rotation_z(heading) * gltf_to_proxima(), Vec3::splat(FOX_SCALE))
}

fn run(o: &Options) -> anyhow::Result<()> {
    let path = o.fox.clone().unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/gltf-samples/Fox/Fox.glb"));
    let import = gltf::import(&path).with_context(|| format!("{} (the Fox model; --fox PATH)", path.display()))?;
    let (mesh, clips) = import.skeletal_mesh(0, 0).with_context(|| path.display().to_string())?;
    let run_clip = clips.iter().position(|c| c.name() == "Run").unwrap_or(0);
    let (places, outer) = rings(o.count);
    let mut engine = runner::engine_lit("many-foxes", &o.common, SUN_TRAVEL)?;
    for (name, value) in [
        (cvars::SHADOW_CSM_MAX_CASCADES, "4".to_string()),
        (cvars::SHADOW_CSM_FIRST_CASCADE_DISTANCE, (0.9 * outer).to_string()),
        (cvars::SHADOW_CSM_MAX_DISTANCE, (2.8 * outer).to_string()),
    ] {
        engine.render_thread().set_cvar(name, &value)?;
    }
    let green = engine.render_thread().create_material(Material::colored(Vec4::new(0.3, 0.5, 0.3, 1.0)))?;
    // The file's material (and texture) for the foxes: spawn its scene once
    // for them, then take its fox away.
    let spawned = import.spawn(&mut engine.world).with_context(|| path.display().to_string())?;
    let fox_material = spawned.materials.first().copied();
    let w = &mut engine.world;
    if let Some(actor) = spawned.actor {
        w.destroy_actor(actor)?;
    }
    let (_, ground) = w.spawn_actor(
        "ground",
        Box::new(StaticMeshComponent::new(StaticMesh::plane())),
        Transform::from_translation_scale(Vec3::ZERO, Vec3::new(5000.0, 5000.0, 1.0)),
    )?;
    w.set_material(ground, 0, green)?;
    let sun = DirectionalLightComponent { intensity: 3.0, cast_shadows: true, ..Default::default() };
    w.spawn_actor("sun", Box::new(sun), Transform::new(Vec3::ZERO, look_rotation(Vec3::ZERO, SUN_TRAVEL), Vec3::ONE))?;
    let eye = Vec3::new(1.25, 1.5, 0.5) * 0.8 * outer;
    let mut camera = CameraComponent::default();
    camera.0.far = outer * 20.0;
    w.spawn_actor("camera", Box::new(camera), Transform::new(eye, look_rotation(eye, Vec3::ZERO), Vec3::ONE))?;
    let duration = clips.get(run_clip).map_or(1.0, |c| c.duration());
    let mut foxes = Vec::with_capacity(places.len());
    let bind_pose = import.meshes.first().and_then(|m| m.as_ref()).map(|m| m.mesh.clone());
    for (i, &(angle, radius, direction)) in places.iter().enumerate() {
        let component: Box<dyn Component> = match (&bind_pose, o.unskinned) {
            (Some(static_mesh), true) => Box::new(StaticMeshComponent::new(static_mesh.clone())),
            _ => {
                let mut c = SkeletalMeshComponent::new(mesh.clone());
                for clip in &clips {
                    c.add_clip(clip.clone())?;
                }
                if !o.frozen {
                    c.play(run_clip, true)?;
                    if !o.sync {
                        // Each fox from its own point of the run (a fixed spread: repeatable).
                        let start = (i as f32 * 0.618_034).fract() * duration;
                        c.player_mut().expect("playing").seek(start)?;
                    }
                }
                Box::new(c)
            }
        };
        let (_, id) = w.spawn_actor("fox", component, fox_transform(angle, radius, direction))?;
        if let Some(m) = fox_material {
            w.set_material(id, 0, m)?;
        }
        foxes.push(Fox { id, angle, radius, direction });
    }
    let mut time = 0.0f32;
    runner::run("many-foxes", &o.common, &mut engine, |engine, _frame, dt| {
        time += dt;
        for f in &foxes {
            let angle = f.angle + f.direction * RING_SPEED / f.radius * time;
            engine.world.set_relative_transform(f.id, fox_transform(angle, f.radius, f.direction))?;
        }
        Ok(runner::SampleFigures { skinned: Some(skinned_stats(&engine.world, &foxes)), ..Default::default() })
    })
}

/// The stats file's `skinned` (none with `--unskinned`).
fn skinned_stats(world: &World, foxes: &[Fox]) -> samples::SkinnedStats {
    let skinned: Vec<usize> =
        foxes.iter().filter_map(|f| world.component::<SkeletalMeshComponent>(f.id).ok()).map(|c| c.mesh().skeleton().len()).collect();
    samples::SkinnedStats { meshes: skinned.len() as u64, joints: skinned.iter().sum::<usize>() as u64, morph_targets: 0 }
}
