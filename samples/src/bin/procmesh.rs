//! `cargo xtask run procmesh`: a procedural terrain heightfield built from
//! four `ProceduralMeshComponent` sections with their own materials (sand,
//! grass, meadow, rock), a water section animated every frame in place
//! (`update_mesh_section` with positions and normals only, so no proxy is
//! recreated), a monolith section shown and hidden every other second
//! (`set_mesh_section_visible`), and a raycast from the camera
//! (`World::raycast` on the sections' collision) whose hit point a red cone
//! marks. Lit by a shadow-casting directional light.

use clap::Parser;
use engine_core::*;
use glam::{Quat, Vec2, Vec3, Vec4};
use procmesh::{MaterialRef, ProceduralMeshComponent, SectionData};
use renderer::Material;
use samples::{runner, CommonOptions};

#[derive(Parser, Debug)]
#[command(
    name = "procmesh",
    about = "A procedural terrain with animated water, a hidden section and a raycast marker (ProceduralMeshComponent)"
)]
struct Options {
    /// Quads along each side of a terrain tile (the water has twice as many).
    #[arg(long, default_value_t = 40, value_parser = clap::value_parser!(u32).range(2..=400))]
    resolution: u32,
    #[command(flatten)]
    common: CommonOptions,
}

/// Half the terrain's side, in world units.
const HALF: f32 = 20.0;
/// The water's rest height.
const SEA: f32 = 0.0;
/// Terrain sections 0..4, then the water and the monolith.
const WATER: usize = 4;
const MONOLITH: usize = 5;

fn main() {
    samples::main("procmesh", run);
}

/// The terrain's height at `(x, y)`: rolling hills, a ridge, a bay.
fn height(x: f32, y: f32) -> f32 {
    let hills = 2.2 * (x * 0.21).sin() * (y * 0.17).cos() + 1.1 * (x * 0.47 + y * 0.31).sin() + 0.45 * (x * 1.1 - y * 0.9).cos();
    let ridge = 5.5 * (-((x - 8.0).powi(2) + (y - 9.0).powi(2)) / 40.0).exp();
    let bay = -3.5 * (-((x + 9.0).powi(2) + (y + 7.0).powi(2)) / 60.0).exp();
    hills + ridge + bay + 0.9
}

/// The water's height at `(x, y)` at time `t`.
fn wave(x: f32, y: f32, t: f32) -> f32 {
    SEA + 0.12 * (x * 0.7 + t * 2.1).sin() + 0.08 * (y * 0.9 - t * 1.6).cos() + 0.05 * ((x + y) * 1.7 + t * 3.0).sin()
}

/// The normal of the surface `z = f(x, y)` by central differences.
fn normal_of(f: impl Fn(f32, f32) -> f32, x: f32, y: f32) -> Vec3 {
    let e = 0.05;
    let dx = (f(x + e, y) - f(x - e, y)) / (2.0 * e);
    let dy = (f(x, y + e) - f(x, y - e)) / (2.0 * e);
    Vec3::new(-dx, -dy, 1.0).normalize()
}

/// A grid of `n`x`n` quads over `min..max`, counter-clockwise seen from +Z.
struct Grid {
    xy: Vec<Vec2>,
    triangles: Vec<u32>,
}

fn grid(min: Vec2, max: Vec2, n: u32) -> Grid {
    let row = n + 1;
    let xy = (0..row * row).map(|k| min + (max - min) * Vec2::new((k % row) as f32, (k / row) as f32) / n as f32).collect();
    let mut triangles = Vec::with_capacity((n * n * 6) as usize);
    for j in 0..n {
        for i in 0..n {
            let a = j * row + i;
            triangles.extend_from_slice(&[a, a + 1, a + row + 1, a, a + row + 1, a + row]);
        }
    }
    Grid { xy, triangles }
}

/// Positions and normals of `z = f(x, y)` over a grid.
fn surface(g: &Grid, f: impl Fn(f32, f32) -> f32 + Copy) -> (Vec<Vec3>, Vec<Vec3>) {
    g.xy.iter().map(|p| (Vec3::new(p.x, p.y, f(p.x, p.y)), normal_of(f, p.x, p.y))).unzip()
}

/// A tapering four-sided monolith standing on the ground at `at`: flat
/// faces (own vertices per face), counter-clockwise seen from outside.
fn monolith(at: Vec2) -> (Vec<Vec3>, Vec<Vec3>, Vec<u32>) {
    let base = height(at.x, at.y) - 0.5;
    let (b, t, h) = (1.1, 0.7, 7.0);
    let corner = |i: usize, r: f32, z: f32| {
        let s = [(-1.0, -1.0), (1.0, -1.0), (1.0, 1.0), (-1.0, 1.0)][i % 4];
        Vec3::new(at.x + s.0 * r, at.y + s.1 * r, base + z)
    };
    let (mut p, mut n, mut idx) = (Vec::new(), Vec::new(), Vec::new());
    let mut quad = |q: [Vec3; 4]| {
        let normal = (q[1] - q[0]).cross(q[3] - q[0]).normalize();
        let k = p.len() as u32;
        p.extend_from_slice(&q);
        n.extend_from_slice(&[normal; 4]);
        idx.extend_from_slice(&[k, k + 1, k + 2, k, k + 2, k + 3]);
    };
    for i in 0..4 {
        quad([corner(i, b, 0.0), corner(i + 1, b, 0.0), corner(i + 1, t, h), corner(i, t, h)]);
    }
    quad([corner(0, t, h), corner(1, t, h), corner(2, t, h), corner(3, t, h)]);
    (p, n, idx)
}

/// Where the camera's ray points at time `t`: a slow loop over the hills.
fn aim(t: f32) -> Vec3 {
    let a = t * 0.8;
    let (x, y) = (4.0 + 6.0 * a.cos(), 3.0 + 5.0 * a.sin());
    Vec3::new(x, y, height(x, y))
}

/// The marker: a cone standing on its tip at `p`.
fn marker_transform(p: Vec3) -> Transform {
    let s = 2.4;
    Transform::new(p + Vec3::Z * (0.5 * s), Quat::from_rotation_x(std::f32::consts::PI), Vec3::new(0.8 * s, 0.8 * s, s))
}

fn run(o: &Options) -> anyhow::Result<()> {
    let mut engine = runner::engine("procmesh", &o.common)?;
    let colored =
        |engine: &mut Engine, c: [f32; 3]| engine.render_thread().create_material(Material::colored(Vec4::new(c[0], c[1], c[2], 1.0)));
    let tiles = [
        colored(&mut engine, [0.55, 0.47, 0.30])?, // sand, round the bay
        colored(&mut engine, [0.12, 0.30, 0.07])?, // grass
        colored(&mut engine, [0.26, 0.34, 0.09])?, // meadow
        colored(&mut engine, [0.30, 0.27, 0.24])?, // rock, on the ridge
    ];
    let water_mat = colored(&mut engine, [0.03, 0.14, 0.32])?;
    let stone = colored(&mut engine, [0.62, 0.50, 0.16])?;
    let red = colored(&mut engine, [0.90, 0.10, 0.08])?;

    // Terrain: 2x2 tiles sharing the height function, so edges meet.
    let n = o.resolution;
    let mut pmc = ProceduralMeshComponent::new();
    for (i, mat) in tiles.iter().enumerate() {
        let min = Vec2::new(if i % 2 == 0 { -HALF } else { 0.0 }, if i / 2 == 0 { -HALF } else { 0.0 });
        let g = grid(min, min + Vec2::splat(HALF), n);
        let (p, nrm) = surface(&g, height);
        pmc.create_mesh_section(i, SectionData::new(&p, &g.triangles).normals(&nrm).uv0(&g.xy), true)?;
        pmc.set_material(i, Some(MaterialRef::from(*mat)))?;
    }
    // Water: one section over the whole terrain, animated in place.
    let water = grid(Vec2::splat(-HALF), Vec2::splat(HALF), (2 * n).min(400));
    let (p, nrm) = surface(&water, |x, y| wave(x, y, 0.0));
    pmc.create_mesh_section(WATER, SectionData::new(&p, &water.triangles).normals(&nrm), false)?;
    pmc.set_material(WATER, Some(MaterialRef::from(water_mat)))?;
    // The monolith, shown and hidden every other second.
    let (p, nrm, idx) = monolith(Vec2::new(-4.0, 6.0));
    pmc.create_mesh_section(MONOLITH, SectionData::new(&p, &idx).normals(&nrm), true)?;
    pmc.set_material(MONOLITH, Some(MaterialRef::from(stone)))?;

    let w = &mut engine.world;
    let eye = Vec3::new(-33.0, -31.0, 27.0);
    let mut camera = CameraComponent::default();
    camera.0.fov_y = 0.9;
    camera.0.far = 400.0;
    w.spawn_actor("camera", Box::new(camera), Transform::new(eye, look_rotation(eye, Vec3::new(2.0, 2.0, -5.0)), Vec3::ONE))?;
    w.spawn_actor(
        "sun",
        Box::new(DirectionalLightComponent { intensity: 1.2, ..Default::default() }),
        Transform::new(Vec3::ZERO, look_rotation(Vec3::ZERO, Vec3::new(0.6, 0.5, -0.5)), Vec3::ONE),
    )?;
    let (_, terrain) = w.spawn_actor("terrain", Box::new(pmc), Transform::IDENTITY)?;
    let (_, marker) = w.spawn_actor("marker", Box::new(StaticMeshComponent::new(StaticMesh::cone(16))), marker_transform(aim(0.0)))?;
    w.set_material(marker, 0, red)?;

    let mut positions = vec![Vec3::ZERO; water.xy.len()];
    let mut normals = vec![Vec3::Z; water.xy.len()];
    let mut monolith_visible = true;
    runner::run("procmesh", &o.common, &mut engine, |engine, frame, dt| {
        let t = frame as f32 * dt;
        // Waves: same vertex count, positions and normals only.
        for ((p, nrm), xy) in positions.iter_mut().zip(normals.iter_mut()).zip(&water.xy) {
            *p = Vec3::new(xy.x, xy.y, wave(xy.x, xy.y, t));
            *nrm = normal_of(|x, y| wave(x, y, t), xy.x, xy.y);
        }
        let visible = (t as u64).is_multiple_of(2);
        let toggle = visible != monolith_visible;
        monolith_visible = visible;
        engine.world.with_component_mut::<ProceduralMeshComponent, _>(terrain, |c| {
            c.update_mesh_section(WATER, SectionData::positions(&positions).normals(&normals))?;
            if toggle {
                c.set_mesh_section_visible(MONOLITH, visible)?;
            }
            Ok::<(), procmesh::ProcMeshError>(())
        })??;
        // The camera's ray, past the marker itself; the water has no collision.
        let dir = (aim(t) - eye).normalize();
        let mut origin = eye;
        for _ in 0..4 {
            match engine.world.raycast(origin, dir, 500.0, CollisionComplexity::Complex)? {
                Some(hit) if hit.component == marker => origin = hit.position + dir * 0.01,
                Some(hit) => {
                    engine.world.set_relative_transform(marker, marker_transform(hit.position))?;
                    break;
                }
                None => break,
            }
        }
        Ok(runner::SampleFigures::default())
    })
}
