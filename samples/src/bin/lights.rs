//! `cargo xtask run lights`: Bevy's many_lights scene, for clustered
//! lighting at scale. N point lights (default 100,000) of range 0.3 on a
//! Fibonacci sphere of radius 50, inside an inside-out white icosphere of
//! at least 100,000 triangles, seen from the centre by a camera turning
//! 0.15 rad/s about Z and X (1/60 s per frame, as Bevy's), with one 5×
//! cube at the top of the sphere (Bevy's (0, 50, 0); Proxima is Z-up).
//! `--moving P` moves P percent of the lights every frame.
//!
//! `--shadowed N` adds a field of 10,000 cubes on a floor inside the
//! sphere (z = -30) and N shadow-casting lights 3 units above it —
//! alternately point lights (six atlas tiles each) and spot lights
//! pointing down (one) — and a camera above the field, still, looking
//! down at it (the cached shadow atlas's scene: with nothing moving, no
//! tile renders after the first frame). `--moving-shadowed K` moves K of
//! those lights every frame.
//!
//! The lights: each a saturated colour of a random hue (Bevy's
//! `Color::hsl(hue, 1, 0.5)`), 0.08 cd — Bevy's 1,000 lm (80 cd) under its
//! default camera exposure (EV100 9.7, about 1/1000), as Proxima has no
//! physical exposure yet — and just inside the sphere (radius 49.9), so
//! that they sit in front of the icosphere's flat faces rather than behind
//! them. Every light goes through the world as a `PointLightComponent`.

use clap::Parser;
use engine_core::*;
use glam::{Quat, Vec3, Vec4};
use renderer::{Material, Rng};
use samples::peer_scenes::{fibonacci_sphere_point, inside_out};
use samples::{runner, CommonOptions};

#[derive(Parser, Debug)]
#[command(name = "lights", about = "Bevy's many_lights: N point lights on a sphere around a turning camera (clustered lighting)")]
struct Options {
    /// Number of point lights.
    #[arg(long, default_value_t = 100_000, value_parser = clap::value_parser!(u32).range(0..=2_000_000))]
    count: u32,
    /// Percent of the lights moved every frame (along the sphere).
    #[arg(long, default_value_t = 0.0, value_parser = samples::options::parse_percent)]
    moving: f32,
    /// Shadow-casting point and spot lights over a field of 10,000 cubes,
    /// seen from above (see the sample's docs).
    #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u32).range(0..=4096))]
    shadowed: u32,
    /// Shadowed lights moved every frame.
    #[arg(long, default_value_t = 0)]
    moving_shadowed: u32,
    #[command(flatten)]
    common: CommonOptions,
}

/// The sphere's radius, the lights' (just inside it) and their range.
const RADIUS: f32 = 50.0;
const LIGHT_SPHERE: f32 = 49.9;
const LIGHT_RANGE: f32 = 0.3;
/// Luminous intensity (cd): Bevy's 1,000 lm under its default exposure.
const LIGHT_INTENSITY: f32 = 0.08;
/// Icosphere frequency: 20 · 72² = 103,680 triangles.
const SPHERE_FREQUENCY: u32 = 72;

fn main() {
    samples::main("lights", run);
}

/// The linear RGB of an sRGB colour of `hue` (0..1) at full saturation and
/// lightness 0.5.
fn hue_color(hue: f32) -> Vec3 {
    let h = hue.fract() * 6.0;
    let x = 1.0 - (h % 2.0 - 1.0).abs();
    let srgb = match h as u32 {
        0 => Vec3::new(1.0, x, 0.0),
        1 => Vec3::new(x, 1.0, 0.0),
        2 => Vec3::new(0.0, 1.0, x),
        3 => Vec3::new(0.0, x, 1.0),
        4 => Vec3::new(x, 0.0, 1.0),
        _ => Vec3::new(1.0, 0.0, x),
    };
    srgb.map(|c| if c <= 0.04045 { c / 12.92 } else { ((c + 0.055) / 1.055).powf(2.4) })
}

/// The field's floor height, its side, and the casters per side.
const FIELD_Z: f32 = -30.0;
const FIELD: f32 = 50.0;
const FIELD_CUBES: u32 = 100;

/// The field of casters, `n` shadowed lights over it (their components and
/// places), and the camera moved above it.
fn shadowed_field(w: &mut World, white: renderer::MaterialId, n: u32, camera: ComponentId) -> anyhow::Result<Vec<(ComponentId, Vec3)>> {
    let (_, floor) = w.spawn_actor(
        "floor",
        Box::new(StaticMeshComponent::new(StaticMesh::plane())),
        Transform::from_translation_scale(Vec3::new(0.0, 0.0, FIELD_Z), Vec3::new(FIELD, FIELD, 1.0)),
    )?;
    w.set_material(floor, 0, white)?;
    let step = FIELD / FIELD_CUBES as f32;
    let cube = StaticMesh::cube();
    let cubes: Vec<(Box<dyn Component>, Transform)> = (0..FIELD_CUBES * FIELD_CUBES)
        .map(|i| {
            let (x, y) = ((i % FIELD_CUBES) as f32 + 0.5, (i / FIELD_CUBES) as f32 + 0.5);
            let h = 0.2 + 0.3 * ((x * 0.7).sin() * (y * 0.3).cos()).abs();
            let at = Vec3::new(x * step - FIELD / 2.0, y * step - FIELD / 2.0, FIELD_Z + h / 2.0);
            (
                Box::new(StaticMeshComponent::new(cube.clone())) as Box<dyn Component>,
                Transform::from_translation_scale(at, Vec3::new(0.25, 0.25, h)),
            )
        })
        .collect();
    for c in w.spawn_actors(cubes)? {
        w.set_material(c, 0, white)?;
    }
    let side = (n as f32).sqrt().ceil() as u32;
    let lights: Vec<(Box<dyn Component>, Transform, Vec3)> = (0..n)
        .map(|i| {
            let at = Vec3::new(
                ((i % side) as f32 + 0.5) / side as f32 * FIELD * 0.9 - FIELD * 0.45,
                ((i / side) as f32 + 0.5) / side as f32 * FIELD * 0.9 - FIELD * 0.45,
                FIELD_Z + 3.0,
            );
            let color = hue_color(i as f32 * 0.618);
            let (c, rotation): (Box<dyn Component>, Quat) = if i % 2 == 0 {
                (
                    Box::new(PointLightComponent { color, intensity: 6.0, radius: 5.0, cast_shadows: true, ..Default::default() }),
                    Quat::IDENTITY,
                )
            } else {
                let spot = SpotLightComponent {
                    color,
                    intensity: 12.0,
                    radius: 6.0,
                    inner_cone: 0.4,
                    outer_cone: 0.7,
                    cast_shadows: true,
                    ..Default::default()
                };
                (Box::new(spot), look_rotation(Vec3::ZERO, Vec3::NEG_Z))
            };
            (c, Transform::new(at, rotation, Vec3::ONE), at)
        })
        .collect();
    let places: Vec<Vec3> = lights.iter().map(|l| l.2).collect();
    let ids = w.spawn_actors(lights.into_iter().map(|(c, t, _)| (c, t)).collect())?;
    let eye = Vec3::new(0.0, -FIELD * 0.55, FIELD_Z + FIELD * 0.6);
    w.set_relative_transform(camera, Transform::new(eye, look_rotation(eye, Vec3::new(0.0, 0.0, FIELD_Z)), Vec3::ONE))?;
    Ok(ids.into_iter().zip(places).collect())
}

fn run(o: &Options) -> anyhow::Result<()> {
    let mut engine = runner::engine("lights", &o.common)?;
    let white = engine.render_thread().create_material(Material::colored(Vec4::ONE))?;
    let pink = engine.render_thread().create_material(Material::colored(Vec4::new(1.0, 0.08, 0.58, 1.0)))?;
    let w = &mut engine.world;
    let mut camera = CameraComponent::default();
    camera.0.fov_y = std::f32::consts::FRAC_PI_4;
    camera.0.near = 0.1;
    camera.0.far = 1000.0;
    // Turned by the frame loop as Bevy turns it, so no fly camera here.
    let (_, camera_id) = w.spawn_actor("camera", Box::new(camera), Transform::IDENTITY)?;
    let sphere = inside_out("inside-out icosphere", renderer::shapes::icosphere(RADIUS, SPHERE_FREQUENCY))?;
    let (_, walls) = w.spawn_actor("walls", Box::new(StaticMeshComponent::new(sphere)), Transform::IDENTITY)?;
    w.set_material(walls, 0, white)?;
    let (_, cube) = w.spawn_actor(
        "cube",
        Box::new(StaticMeshComponent::new(StaticMesh::cube())),
        Transform::from_translation_scale(Vec3::new(0.0, 0.0, RADIUS), Vec3::splat(5.0)),
    )?;
    w.set_material(cube, 0, pink)?;
    let mut rng = Rng::new(1);
    let place = |i: u32| fibonacci_sphere_point(i, o.count.max(1)) * LIGHT_SPHERE;
    let lights: Vec<(Box<dyn Component>, Transform)> = (0..o.count)
        .map(|i| {
            let light = PointLightComponent {
                color: hue_color(rng.next_f32()),
                intensity: LIGHT_INTENSITY,
                radius: LIGHT_RANGE,
                ..Default::default()
            };
            (Box::new(light) as Box<dyn Component>, Transform::from_translation_scale(place(i), Vec3::ONE))
        })
        .collect();
    let light_components = w.spawn_actors(lights)?;
    let shadowed = if o.shadowed > 0 { shadowed_field(w, white, o.shadowed, camera_id)? } else { Vec::new() };
    let moving = (o.count as f32 * o.moving / 100.0).round() as usize;
    let mut rotation = Quat::IDENTITY;
    runner::run("lights", &o.common, &mut engine, |engine, frame, _dt| {
        if shadowed.is_empty() {
            // Bevy's move_camera: rotate_z then rotate_x by 0.15 × (1/60 s), in world space.
            let delta = 0.15 / 60.0;
            rotation = Quat::from_rotation_x(delta) * Quat::from_rotation_z(delta) * rotation;
            engine.world.set_relative_transform(camera_id, Transform::new(Vec3::ZERO, rotation, Vec3::ONE))?;
        }
        for (k, (id, home)) in shadowed.iter().take(o.moving_shadowed as usize).enumerate() {
            let t = frame as f32 / 30.0 + k as f32;
            let at = *home + Vec3::new(t.sin(), t.cos(), 0.0) * 0.5;
            let rotation = engine.world.relative_transform(*id)?.rotation;
            engine.world.set_relative_transform(*id, Transform::new(at, rotation, Vec3::ONE))?;
        }
        // The moving lights slide along the sphere, a different share each frame.
        let t = frame as f32 / 60.0;
        for k in 0..moving {
            let i = (k + frame as usize * moving) % light_components.len().max(1);
            let p = Quat::from_rotation_z(0.02 * (t + i as f32).sin()) * place(i as u32);
            engine.world.set_relative_transform(light_components[i], Transform::from_translation_scale(p, Vec3::ONE))?;
        }
        Ok(runner::SampleFigures::default())
    })
}
