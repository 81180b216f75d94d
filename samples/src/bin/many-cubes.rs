//! `cargo xtask run many-cubes`: N static-mesh cubes on a grid in front of
//! the camera over M materials, lit by a shadow-casting directional light
//! over a ground plane; `--moving P` moves P percent of them every frame.

use clap::Parser;
use engine_core::*;
use glam::{Quat, Vec3, Vec4};
use renderer::Material;
use samples::{runner, CommonOptions};

#[derive(Parser, Debug)]
#[command(name = "many-cubes", about = "Many static-mesh cubes through the cached mesh-drawing pipeline")]
struct Options {
    /// Number of cubes.
    #[arg(long, default_value_t = 20_000, value_parser = clap::value_parser!(u32).range(1..=4_000_000))]
    count: u32,
    /// Number of materials the cubes cycle through.
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..=256))]
    materials: u32,
    /// Percent of the cubes moved every frame.
    #[arg(long, default_value_t = 0.0, value_parser = parse_percent)]
    moving: f32,
    #[command(flatten)]
    common: CommonOptions,
}

fn parse_percent(s: &str) -> Result<f32, String> {
    let v: f32 = s.parse().map_err(|_| format!("{s:?} is not a number"))?;
    if (0.0..=100.0).contains(&v) {
        Ok(v)
    } else {
        Err(format!("{v} is not in 0..=100"))
    }
}

fn main() {
    let o = Options::parse();
    if let Err(e) = run(&o) {
        eprintln!("many-cubes: {e:#}");
        std::process::exit(1);
    }
}

fn run(o: &Options) -> anyhow::Result<()> {
    let mut engine = runner::engine("many-cubes", &o.common)?;
    let side = (o.count as f32).sqrt().ceil() as u32;
    let spacing = 1.6;
    let extent = side as f32 * spacing;
    let mats: Vec<renderer::MaterialId> = (0..o.materials)
        .map(|i| {
            let t = i as f32 / o.materials as f32;
            let color = Vec4::new(0.35 + 0.6 * (t * 6.28).sin().abs(), 0.3 + 0.6 * t, 0.9 - 0.6 * t, 1.0);
            engine.render_thread().create_material(Material::colored(color))
        })
        .collect::<Result<_, _>>()?;
    let ground = engine.render_thread().create_material(Material::colored(Vec4::new(0.5, 0.5, 0.48, 1.0)))?;
    let w = &mut engine.world;
    let eye = Vec3::new(-extent * 0.55, -extent * 0.55, extent * 0.45);
    let mut camera = CameraComponent::default();
    camera.0.far = extent * 4.0;
    let (_, camera_id) = w.spawn_actor("camera", Box::new(camera), Transform::new(eye, look_rotation(eye, Vec3::ZERO), Vec3::ONE))?;
    samples::fly_camera::control_camera(camera_id);
    w.spawn_actor("sun", Box::new(DirectionalLightComponent { intensity: 1.1, ..Default::default() }), Transform::new(Vec3::ZERO, look_rotation(Vec3::ZERO, Vec3::new(0.4, 0.25, -1.0)), Vec3::ONE))?;
    let (_, floor) = w.spawn_actor("ground", Box::new(StaticMeshComponent::new(StaticMesh::plane())), Transform::from_translation_scale(Vec3::ZERO, Vec3::splat(extent * 1.2)))?;
    w.set_material(floor, 0, ground)?;
    let cube = StaticMesh::cube();
    let placement = |i: u32, t: f32| {
        let (x, y) = ((i % side) as f32 - side as f32 / 2.0, (i / side) as f32 - side as f32 / 2.0);
        let h = 0.4 + ((x * 0.37).sin() * (y * 0.23).cos()).abs() * 1.2;
        Transform::new(Vec3::new(x * spacing, y * spacing, h / 2.0 + (t + i as f32 * 0.1).sin().max(0.0) * 0.5 * (t > 0.0) as u32 as f32), Quat::from_rotation_z(x * 0.05 + t), Vec3::new(1.0, 1.0, h))
    };
    let items: Vec<(Box<dyn Component>, Transform)> = (0..o.count).map(|i| (Box::new(StaticMeshComponent::new(cube.clone())) as Box<dyn Component>, placement(i, 0.0))).collect();
    let cubes = w.spawn_actors(items)?;
    for (i, c) in cubes.iter().enumerate() {
        w.set_material(*c, 0, mats[i % mats.len()])?;
    }
    let moving = ((o.count as f32) * o.moving / 100.0).round() as usize;
    runner::run("many-cubes", &o.common, &mut engine, |engine, frame, dt| {
        if moving > 0 {
            let t = (frame + 1) as f32 * dt * 3.0;
            for (k, c) in cubes.iter().take(moving).enumerate() {
                engine.world.set_relative_transform(*c, placement(k as u32, t))?;
            }
        }
        Ok(runner::SampleFigures::default())
    })
}
