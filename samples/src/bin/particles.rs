//! `cargo xtask run particles -- [--particles N]`: Cascade-style sprite
//! particles in an engine-core world. Three water fountains (gravity,
//! velocity-aligned drops, colour over life, bouncing off the ground), two
//! smoke columns over fires (translucent, sorted back to front, slowly
//! rising and growing, with an additive fire core) and three spark
//! fountains (additive, velocity-aligned, fast and short-lived), and a
//! fireball column drawn from a generated 4 × 4 sprite sheet (sub-UV: each
//! puff plays the sheet over its life, neighbouring images cross-faded;
//! square sprites, oldest first, its rate swelling and ebbing over each
//! loop), over a ground plane lit by a directional light.
//!
//! `--particles N` is the total capacity: the emitters' `max_particles` (and
//! their spawn rates, so the systems stay about as full) are scaled so that
//! they add up to at most N. The systems are pre-warmed for four seconds
//! before the first frame, so even a 3-frame run shows them in full flow.
//!
//! The world ticks the particle components. The stats' `particles` is the
//! number of live particles drawn on the last frame, as the particle
//! proxies counted them into that frame's stats
//! (`particles::LIVE_PARTICLES_COUNTER`).

use std::sync::Arc;

use clap::Parser;
use engine_core::*;
use glam::{Quat, Vec3, Vec4};
use particles::{sprite_material, sprite_sheet_material, Module, ParticleMaterials, ParticleSystem, ParticleSystemComponent};
use renderer::Material;
use samples::{runner, textures, CommonOptions};

const FOUNTAIN_JSON: &str = include_str!("../../assets/particles/fountain.json");
const SMOKE_JSON: &str = include_str!("../../assets/particles/smoke.json");
const SPARKS_JSON: &str = include_str!("../../assets/particles/sparks.json");
const FIREBALL_JSON: &str = include_str!("../../assets/particles/fireball.json");

/// Seconds simulated before the first frame.
const PREWARM_SECONDS: f32 = 4.0;
const PREWARM_STEP: f32 = 1.0 / 30.0;

#[derive(Parser, Debug)]
#[command(name = "particles", about = "Fountains, smoke and sparks: Cascade-style CPU sprite particles")]
struct Options {
    /// Total particle capacity, split across the systems' emitters.
    #[arg(long, default_value_t = 20_000, value_parser = clap::value_parser!(u32).range(64..=4_000_000))]
    particles: u32,
    #[command(flatten)]
    common: CommonOptions,
}

fn main() {
    samples::main("particles", run);
}

/// One placed particle system.
struct Placement {
    name: &'static str,
    system: ParticleSystem,
    at: Vec3,
}

/// `system` with its emitters' capacity, spawn rates and bursts scaled by `f`.
fn scaled(mut system: ParticleSystem, f: f32) -> ParticleSystem {
    for e in &mut system.emitters {
        e.required.max_particles = ((e.required.max_particles as f32 * f).floor() as u32).max(1);
        for m in &mut e.modules {
            if let Module::Spawn(s) = m {
                s.rate *= f;
                for b in &mut s.bursts {
                    b.count = ((b.count as f32 * f).round() as u32).max(1);
                }
            }
        }
    }
    system
}

/// `system` with every emitter's constant initial colour replaced by `color`.
fn tinted(mut system: ParticleSystem, color: Vec4) -> ParticleSystem {
    for e in &mut system.emitters {
        for m in &mut e.modules {
            if let Module::InitialColor(d) = m {
                *d = particles::Distribution::Constant(color);
            }
        }
    }
    system
}

fn run(o: &Options) -> anyhow::Result<()> {
    let mut engine = runner::engine("particles", &o.common)?;
    let fountain = ParticleSystem::from_json_str(FOUNTAIN_JSON)?;
    let smoke = ParticleSystem::from_json_str(SMOKE_JSON)?;
    let sparks = ParticleSystem::from_json_str(SPARKS_JSON)?;
    let fireball = ParticleSystem::from_json_str(FIREBALL_JSON)?;

    let placements = vec![
        Placement {
            name: "fountain-blue",
            system: tinted(fountain.clone(), Vec4::new(0.5, 0.75, 1.0, 1.0)),
            at: Vec3::new(-80.0, -420.0, 0.0),
        },
        Placement {
            name: "fountain-teal",
            system: tinted(fountain.clone(), Vec4::new(0.45, 1.0, 0.85, 1.0)),
            at: Vec3::new(120.0, -20.0, 0.0),
        },
        Placement { name: "fountain-violet", system: tinted(fountain, Vec4::new(0.8, 0.6, 1.0, 1.0)), at: Vec3::new(-80.0, 380.0, 0.0) },
        Placement { name: "smoke-left", system: smoke.clone(), at: Vec3::new(650.0, -520.0, 0.0) },
        Placement { name: "smoke-right", system: smoke, at: Vec3::new(250.0, 950.0, 0.0) },
        Placement { name: "sparks-front", system: sparks.clone(), at: Vec3::new(-520.0, -180.0, 0.0) },
        Placement { name: "sparks-middle", system: sparks.clone(), at: Vec3::new(-470.0, 200.0, 0.0) },
        Placement { name: "sparks-back", system: sparks, at: Vec3::new(300.0, -330.0, 0.0) },
        Placement { name: "fireball", system: fireball, at: Vec3::new(-380.0, -560.0, 0.0) },
    ];
    let default_total: u64 = placements.iter().flat_map(|p| &p.system.emitters).map(|e| e.required.max_particles as u64).sum();
    let f = o.particles as f32 / default_total as f32;

    // One renderer material per emitter material name, shared by every instance.
    let rt = engine.render_thread();
    let mut materials = ParticleMaterials::new();
    for (name, blend, tint, softness) in [
        ("M_FountainWater", particles::BlendMode::Translucent, Vec4::new(0.9, 0.95, 1.0, 0.85), 0.7),
        ("M_Smoke", particles::BlendMode::Translucent, Vec4::new(1.0, 1.0, 1.0, 1.0), 1.0),
        ("M_Fire", particles::BlendMode::Additive, Vec4::new(1.0, 0.9, 0.8, 1.0), 1.0),
        ("M_Spark", particles::BlendMode::Additive, Vec4::new(1.0, 0.95, 0.85, 1.0), 0.6),
    ] {
        materials.insert(name, rt.create_material(sprite_material(blend, tint, softness))?);
    }
    let flipbook = rt.create_texture(textures::fireball_flipbook(64, 4))?;
    materials.insert("M_Fireball", rt.create_material(sprite_sheet_material(particles::BlendMode::Translucent, Vec4::ONE, flipbook))?);
    let ground = rt.create_material(Material::colored(Vec4::new(0.22, 0.24, 0.21, 1.0)))?;
    let stone = rt.create_material(Material::colored(Vec4::new(0.62, 0.6, 0.56, 1.0)))?;
    let soot = rt.create_material(Material::colored(Vec4::new(0.18, 0.16, 0.15, 1.0)))?;
    let metal = rt.create_material(Material::colored(Vec4::new(0.35, 0.38, 0.42, 1.0)))?;

    // A scene in centimetres: the sun's shadow cascades reach 60 m, the first 10 m.
    rt.set_cvar(renderer::cvars::SHADOW_CSM_MAX_DISTANCE, "6000")?;
    rt.set_cvar(renderer::cvars::SHADOW_CSM_FIRST_CASCADE_DISTANCE, "1000")?;
    let w = &mut engine.world;
    let eye = Vec3::new(-1150.0, -800.0, 430.0);
    let mut camera = CameraComponent::default();
    camera.0.near = 5.0;
    camera.0.far = 20_000.0;
    camera.0.fov_y = 0.9;
    w.spawn_actor("camera", Box::new(camera), Transform::new(eye, look_rotation(eye, Vec3::new(80.0, 0.0, 170.0)), Vec3::ONE))?;
    let sun = DirectionalLightComponent { intensity: 1.3, color: Vec3::new(1.0, 0.95, 0.88), ..Default::default() };
    w.spawn_actor("sun", Box::new(sun), Transform::new(Vec3::ZERO, look_rotation(Vec3::ZERO, Vec3::new(0.45, 0.3, -1.0)), Vec3::ONE))?;
    let (_, floor) = w.spawn_actor(
        "ground",
        Box::new(StaticMeshComponent::new(StaticMesh::plane())),
        Transform::from_translation_scale(Vec3::ZERO, Vec3::splat(8000.0)),
    )?;
    w.set_material(floor, 0, ground)?;
    w.set_cast_shadow(floor, false)?;

    for (i, p) in placements.into_iter().enumerate() {
        // What the system stands on: a basin, a fire pit or a grinder post.
        let (mesh, scale, material) = match p.name.split('-').next() {
            Some("fountain") => (StaticMesh::cylinder(32), Vec3::new(110.0, 110.0, 60.0), stone),
            Some("smoke" | "fireball") => (StaticMesh::cylinder(24), Vec3::new(90.0, 90.0, 16.0), soot),
            _ => (StaticMesh::cube(), Vec3::new(36.0, 36.0, 80.0), metal),
        };
        let (_, base) = w.spawn_actor(
            &format!("{}-base", p.name),
            Box::new(StaticMeshComponent::new(mesh)),
            Transform::new(p.at + Vec3::Z * scale.z / 2.0, Quat::IDENTITY, scale),
        )?;
        w.set_material(base, 0, material)?;

        let transform = Transform::from_translation(p.at);
        let mut component = ParticleSystemComponent::new(Arc::new(scaled(p.system, f)), 0x5eed + i as u64 * 7919, materials.clone())?
            .with_spawn_transform(transform.to_mat4())?;
        for _ in 0..(PREWARM_SECONDS / PREWARM_STEP).round() as u32 {
            component.instance_mut().tick(PREWARM_STEP);
        }
        w.spawn_actor(p.name, Box::new(component), transform)?;
    }

    runner::run("particles", &o.common, &mut engine, |_, _, _| Ok(runner::SampleFigures::default()))
}
