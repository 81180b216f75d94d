//! `cargo xtask run many-cubes`: N static-mesh cubes on a grid in front of
//! the camera over M materials, lit by a shadow-casting directional light
//! over a ground plane; `--moving P` moves P percent of them every frame.
//!
//! `--layout sphere` is the peer-scale scene, matched to Bevy's `many_cubes`
//! stress test so the CPU cost per frame can be compared: N unit cubes of one
//! white material on a Fibonacci sphere of radius 500 around the camera (45°
//! vertical field of view, near 0.1, far 1000), an inside-out box around
//! everything so every pixel is shaded, one directional light without
//! shadows, and the camera turning 0.15/60 rad per frame about Z and X.
//!
//! `--layout city` is the occlusion-culling scene: a dense city of 10 × 10
//! blocks (each a tall opaque building, a scaled cube) with N small cubes
//! scattered along its streets, seen from street level, so that most of the
//! cubes and buildings in the frustum are hidden behind nearer buildings
//! (compare `--cvar r.AllowOcclusionQueries=0`).

use clap::Parser;
use engine_core::*;
use glam::{Quat, Vec3, Vec4};
use renderer::Material;
use samples::peer_scenes::{fibonacci_sphere_point, inside_out};
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
    #[arg(long, default_value_t = 0.0, value_parser = samples::options::parse_percent)]
    moving: f32,
    /// Where the cubes stand: a grid under a shadowing sun, Bevy's
    /// many_cubes sphere around a turning camera, or the streets of a dense
    /// city seen from street level (occlusion culling's scene).
    #[arg(long, value_enum, default_value_t = Layout::Grid)]
    layout: Layout,
    /// The camera's max draw distance (UE's per-view cull distance): cubes
    /// farther away are culled on the CPU and never reach the GPU; 0 = no
    /// limit. Sets how much of the scene the GPU draws while the CPU still
    /// culls all of it (the frames-in-flight benchmark balances the two so).
    #[arg(long, default_value_t = 0.0, value_parser = parse_distance)]
    draw_distance: f32,
    /// Spawn the grid's cubes in a scattered order (cell k·p mod N, p the
    /// integer nearest N/φ that is coprime with N) instead of row by row.
    /// The renderer gives a batch this large its slots in space order all
    /// the same; with `--cvar r.Scene.SpaceOrderAdds=0` the slots keep the
    /// scattered order, so culling can skip no chunk on its box — the
    /// worst case for the renderer's chunked culling (the frames-in-flight
    /// benchmark uses it to keep the CPU's share of the frame).
    #[arg(long)]
    scattered: bool,
    #[command(flatten)]
    common: CommonOptions,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum Layout {
    Grid,
    Sphere,
    City,
}

fn parse_distance(s: &str) -> Result<f32, String> {
    let v: f32 = s.parse().map_err(|_| format!("{s:?} is not a number"))?;
    if v.is_finite() && v >= 0.0 {
        Ok(v)
    } else {
        Err(format!("{v} is not a distance (finite, >= 0)"))
    }
}

fn main() {
    samples::main("many-cubes", run);
}

fn run(o: &Options) -> anyhow::Result<()> {
    match o.layout {
        Layout::Sphere => return run_sphere(o),
        Layout::City => return run_city(o),
        Layout::Grid => {}
    }
    let mut engine = runner::engine("many-cubes", &o.common)?;
    let side = (o.count as f32).sqrt().ceil() as u32;
    let spacing = 1.6;
    let extent = side as f32 * spacing;
    let mats: Vec<renderer::MaterialId> = (0..o.materials)
        .map(|i| {
            let t = i as f32 / o.materials as f32;
            let color = Vec4::new(0.35 + 0.6 * (t * std::f32::consts::TAU).sin().abs(), 0.3 + 0.6 * t, 0.9 - 0.6 * t, 1.0);
            engine.render_thread().create_material(Material::colored(color))
        })
        .collect::<Result<_, _>>()?;
    let ground = engine.render_thread().create_material(Material::colored(Vec4::new(0.5, 0.5, 0.48, 1.0)))?;
    let w = &mut engine.world;
    let eye = Vec3::new(-extent * 0.55, -extent * 0.55, extent * 0.45);
    let mut camera = CameraComponent::default();
    camera.0.far = extent * 4.0;
    camera.0.max_draw_distance = o.draw_distance;
    let (_, camera_id) = w.spawn_actor("camera", Box::new(camera), Transform::new(eye, look_rotation(eye, Vec3::ZERO), Vec3::ONE))?;
    samples::fly_camera::control_camera(camera_id);
    sun_and_ground(w, ground, Vec3::ZERO, extent * 1.2)?;
    let cube = StaticMesh::cube();
    let placement = |i: u32, t: f32| {
        let (x, y) = ((i % side) as f32 - side as f32 / 2.0, (i / side) as f32 - side as f32 / 2.0);
        let h = 0.4 + ((x * 0.37).sin() * (y * 0.23).cos()).abs() * 1.2;
        Transform::new(
            Vec3::new(x * spacing, y * spacing, h / 2.0 + (t + i as f32 * 0.1).sin().max(0.0) * 0.5 * (t > 0.0) as u32 as f32),
            Quat::from_rotation_z(x * 0.05 + t),
            Vec3::new(1.0, 1.0, h),
        )
    };
    // The grid cell of the k-th cube spawned.
    let cells: Vec<u32> = if o.scattered {
        let n = u64::from(o.count);
        let gcd = |mut a: u64, mut b: u64| {
            while b != 0 {
                (a, b) = (b, a % b);
            }
            a
        };
        let mut p = ((n as f64 / 1.618_033_988_75) as u64).max(1);
        while gcd(p, n) != 1 {
            p += 1;
        }
        (0..n).map(|k| (k * p % n) as u32).collect()
    } else {
        (0..o.count).collect()
    };
    let items: Vec<(Box<dyn Component>, Transform)> =
        cells.iter().map(|&i| (Box::new(StaticMeshComponent::new(cube.clone())) as Box<dyn Component>, placement(i, 0.0))).collect();
    let cubes = w.spawn_actors(items)?;
    for (i, c) in cubes.iter().enumerate() {
        w.set_material(*c, 0, mats[i % mats.len()])?;
    }
    let moving = ((o.count as f32) * o.moving / 100.0).round() as usize;
    runner::run("many-cubes", &o.common, &mut engine, |engine, frame, dt| {
        if moving > 0 {
            let t = (frame + 1) as f32 * dt * 3.0;
            for (c, &cell) in cubes.iter().zip(&cells).take(moving) {
                engine.world.set_relative_transform(*c, placement(cell, t))?;
            }
        }
        Ok(runner::SampleFigures::default())
    })
}

/// Bevy's `many_cubes` point `i` of `n` on the unit sphere (its
/// `fibonacci_spiral_on_sphere` then `spherical_polar_to_cartesian`).
/// The grid and city layouts' shadow-casting sun and a ground plane of
/// `size` centred at `centre` with the `ground` material.
fn sun_and_ground(w: &mut World, ground: renderer::MaterialId, centre: Vec3, size: f32) -> anyhow::Result<()> {
    w.spawn_actor(
        "sun",
        Box::new(DirectionalLightComponent { intensity: 1.1, ..Default::default() }),
        Transform::new(Vec3::ZERO, look_rotation(Vec3::ZERO, Vec3::new(0.4, 0.25, -1.0)), Vec3::ONE),
    )?;
    let (_, floor) = w.spawn_actor(
        "ground",
        Box::new(StaticMeshComponent::new(StaticMesh::plane())),
        Transform::from_translation_scale(centre, Vec3::splat(size)),
    )?;
    w.set_material(floor, 0, ground)?;
    Ok(())
}

fn run_sphere(o: &Options) -> anyhow::Result<()> {
    const RADIUS: f32 = 500.0;
    let mut engine = runner::engine("many-cubes", &o.common)?;
    let white = engine.render_thread().create_material(Material::colored(Vec4::ONE))?;
    let w = &mut engine.world;
    let mut camera = CameraComponent::default();
    camera.0.fov_y = std::f32::consts::FRAC_PI_4;
    camera.0.near = 0.1;
    camera.0.far = 1000.0;
    camera.0.max_draw_distance = o.draw_distance;
    // Turned by the frame loop as Bevy turns it, so no fly camera here.
    let (_, camera_id) = w.spawn_actor("camera", Box::new(camera), Transform::IDENTITY)?;
    let sun = DirectionalLightComponent { cast_shadows: false, ..Default::default() };
    w.spawn_actor("sun", Box::new(sun), Transform::new(Vec3::ZERO, look_rotation(Vec3::ZERO, Vec3::new(0.3, 0.2, -1.0)), Vec3::ONE))?;
    // Bevy's inside-out box around everything, of side 2.2 × radius. Bevy
    // scales a cuboid by -1; our renderer flips the winding of mirrored
    // meshes (a mirrored box still shows its outside), so the box is a mesh
    // built inside out instead.
    let (_, walls) = w.spawn_actor(
        "walls",
        Box::new(StaticMeshComponent::new(inside_out("inside-out box", renderer::shapes::cube(1.0))?)),
        Transform::from_translation_scale(Vec3::ZERO, Vec3::splat(2.2 * RADIUS)),
    )?;
    w.set_material(walls, 0, white)?;
    let cube = StaticMesh::cube();
    let items: Vec<(Box<dyn Component>, Transform)> = (0..o.count)
        .map(|i| {
            (
                Box::new(StaticMeshComponent::new(cube.clone())) as Box<dyn Component>,
                Transform::from_translation_scale(fibonacci_sphere_point(i, o.count) * RADIUS, Vec3::ONE),
            )
        })
        .collect();
    let cubes = w.spawn_actors(items)?;
    for c in &cubes {
        w.set_material(*c, 0, white)?;
    }
    let mut rotation = Quat::IDENTITY;
    runner::run("many-cubes", &o.common, &mut engine, |engine, _frame, _dt| {
        // Bevy's move_camera: rotate_z then rotate_x by 0.15 × (1/60 s), in world space.
        let delta = 0.15 / 60.0;
        rotation = Quat::from_rotation_x(delta) * Quat::from_rotation_z(delta) * rotation;
        engine.world.set_relative_transform(camera_id, Transform::new(Vec3::ZERO, rotation, Vec3::ONE))?;
        Ok(runner::SampleFigures::default())
    })
}

/// The city's blocks per side, a block's side and a street's width (m).
const CITY_BLOCKS: u32 = 10;
const CITY_BLOCK: f32 = 24.0;
const CITY_STREET: f32 = 10.0;

/// Where a street cube of the city stands (drawn from `rng`): along a street (every
/// other cube on a north-south one), anywhere along its length, off its
/// centre line; its edge 0.6–1.2 m.
fn city_cube(rng: &mut renderer::Rng) -> Transform {
    let pitch = CITY_BLOCK + CITY_STREET;
    let size = CITY_BLOCKS as f32 * pitch;
    let street = rng.below(CITY_BLOCKS as usize + 1) as f32 * pitch + rng.range_f32(-0.5, 0.5) * (CITY_STREET - 2.0);
    let along = rng.range_f32(0.0, size);
    let edge = rng.range_f32(0.6, 1.2);
    let (x, y) = if rng.next_u32().is_multiple_of(2) { (street, along) } else { (along, street) };
    Transform::new(Vec3::new(x, y, edge / 2.0), Quat::from_rotation_z(rng.range_f32(0.0, 1.5)), Vec3::splat(edge))
}

fn run_city(o: &Options) -> anyhow::Result<()> {
    let mut engine = runner::engine("many-cubes", &o.common)?;
    let pitch = CITY_BLOCK + CITY_STREET;
    let size = CITY_BLOCKS as f32 * pitch;
    let rt = engine.render_thread();
    let walls = [Vec4::new(0.55, 0.52, 0.5, 1.0), Vec4::new(0.42, 0.45, 0.5, 1.0), Vec4::new(0.6, 0.5, 0.4, 1.0)]
        .map(|c| rt.create_material(Material::colored(c)));
    let walls: Vec<renderer::MaterialId> = walls.into_iter().collect::<Result<_, _>>()?;
    let mats: Vec<renderer::MaterialId> = (0..o.materials)
        .map(|i| {
            let t = i as f32 / o.materials as f32;
            rt.create_material(Material::colored(Vec4::new(0.9 - 0.5 * t, 0.3 + 0.5 * t, 0.25, 1.0)))
        })
        .collect::<Result<_, _>>()?;
    let ground = rt.create_material(Material::colored(Vec4::new(0.3, 0.3, 0.32, 1.0)))?;
    let w = &mut engine.world;
    // At the south end of a north-south street, looking up it and a little
    // to the east: the street's own cubes in view, the rest behind blocks.
    let eye = Vec3::new(4.0 * pitch, 2.0, 1.7);
    let mut camera = CameraComponent::default();
    camera.0.far = size * 1.5;
    camera.0.max_draw_distance = o.draw_distance;
    let target = Vec3::new(4.0 * pitch + 12.0, size * 0.6, 2.5);
    let (_, camera_id) = w.spawn_actor("camera", Box::new(camera), Transform::new(eye, look_rotation(eye, target), Vec3::ONE))?;
    samples::fly_camera::control_camera(camera_id);
    sun_and_ground(w, ground, Vec3::new(size / 2.0, size / 2.0, 0.0), size * 1.2)?;
    let cube = StaticMesh::cube();
    let mut rng = renderer::Rng::new(18);
    let buildings: Vec<(Box<dyn Component>, Transform)> = (0..CITY_BLOCKS * CITY_BLOCKS)
        .map(|b| {
            let (i, j) = ((b % CITY_BLOCKS) as f32, (b / CITY_BLOCKS) as f32);
            let h = rng.range_f32(12.0, 42.0);
            let at = Vec3::new((i + 0.5) * pitch, (j + 0.5) * pitch, h / 2.0);
            (
                Box::new(StaticMeshComponent::new(cube.clone())) as Box<dyn Component>,
                Transform::new(at, Quat::IDENTITY, Vec3::new(CITY_BLOCK, CITY_BLOCK, h)),
            )
        })
        .collect();
    for (k, b) in w.spawn_actors(buildings)?.into_iter().enumerate() {
        w.set_material(b, 0, walls[k % walls.len()])?;
    }
    let items: Vec<(Box<dyn Component>, Transform)> =
        (0..o.count).map(|_| (Box::new(StaticMeshComponent::new(cube.clone())) as Box<dyn Component>, city_cube(&mut rng))).collect();
    for (k, c) in w.spawn_actors(items)?.into_iter().enumerate() {
        w.set_material(c, 0, mats[k % mats.len()])?;
    }
    runner::run("many-cubes", &o.common, &mut engine, |_, _, _| Ok(runner::SampleFigures::default()))
}
