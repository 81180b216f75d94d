//! `cargo xtask run showcase`: everything together. A procedural terrain
//! (ProceduralMeshComponent: four sections by height band) around a
//! lake whose translucent water section is rewritten every frame; a forest
//! of instanced trees and rocks (InstancedStaticMeshComponent, GPU culling);
//! a village of static-mesh buildings with a plaza fountain, chimney smoke
//! and a lake fountain (ParticleSystemComponent, translucent sprites); a
//! shadow-casting sun with four shadow cascades over the whole terrain,
//! street lamps as shadow-casting spot lights, lit windows and a few
//! hundred fireflies drifting over the meadow (small point lights,
//! clustered); worms made in code crawling round the plaza (skeletal
//! meshes, wriggling: their poses evaluated on the game thread, skinned on
//! the GPU); a camera flying along a circle. `--dusk` lowers and dims
//! the sun and the sky, so that the lamps, windows and fireflies show.
//!
//! Textured where it matters, every texture generated in code
//! (`samples::textures`): the terrain is one layered material blending
//! grass, rock, sand and snow by height, slope and noise over world-space
//! UVs; trunks wear bark and rocks rock (instances of one textured parent);
//! crowns are masked leaves (alpha-tested in the depth and shadow passes
//! too); the houses' and the tower's walls are bricks with a normal map.
//!
//! Load options (the test suite renders 1,000,000 of each headless):
//! `--instances N` makes at least N instanced-static-mesh instances in all —
//! the forest's (about 2,350) and, for the rest, pebbles scattered over the
//! land in one more component (GPU-culled, faded out past 70 m, no shadows,
//! as a level's ground clutter would be); `--particles N` adds a geyser in
//! the lake whose single burst spawns N long-lived, unsorted particles on
//! the first frame. The world ticks every particle system; the stats'
//! `particles` and `instances.visible` are what the proxies counted into
//! the last frame's stats (live particles drawn, instances that survived
//! the GPU cull in the camera's view).

use clap::Parser;
use engine_core::*;
use glam::{Affine3A, Quat, Vec2, Vec3, Vec4};
use instancing::{InstancedStaticMeshComponent, TransformSpace};
use procmesh::{Color, ProceduralMeshComponent, SectionData};
use renderer::{BlendMode, Material, MaterialId, MaterialInstance, MaterialParameter, MaterialParams, TextureId};
use rhi_vulkan::SamplerDesc;
use samples::{runner, textures, CommonOptions};
use std::sync::Arc;

mod life;
use life::{crawl, drift_fireflies, spawn_crawlers, spawn_fireflies, spawn_fountains_and_smoke, spawn_geyser};

#[derive(Parser, Debug)]
#[command(name = "showcase", about = "Terrain, water, forest, particles, buildings, lights and a moving camera together")]
struct Options {
    /// At least N instanced-static-mesh instances in all: the forest, then pebbles for the rest.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=16_000_000))]
    instances: Option<u32>,
    /// Add a geyser whose one burst spawns N particles on the first frame.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=16_000_000))]
    particles: Option<u32>,
    /// Start the camera this many seconds along its path (a point of the
    /// path in a few frames: the occlusion tests and benchmarks use it).
    #[arg(long, value_name = "SECONDS", default_value_t = 0.0, value_parser = parse_seconds)]
    camera_time: f32,
    /// Dusk: a low, dim, orange sun and a darker sky, so that the lamps,
    /// windows and fireflies show.
    #[arg(long)]
    dusk: bool,
    #[command(flatten)]
    common: CommonOptions,
}

fn parse_seconds(s: &str) -> Result<f32, String> {
    let v: f32 = s.parse().map_err(|_| format!("{s:?} is not a number"))?;
    if v.is_finite() && (0.0..=1e6).contains(&v) {
        Ok(v)
    } else {
        Err(format!("{v} is not a time in 0..=1e6 seconds"))
    }
}

fn main() {
    samples::main("showcase", run);
}

/// Half the terrain's side, in metres.
const HALF: f32 = 80.0;
/// Terrain quads per side.
const GRID: usize = 96;
/// The water section's quads per side and its rectangle.
const WATER_GRID: usize = 48;
const WATER_MIN: Vec2 = Vec2::new(-26.0, -30.0);
const WATER_MAX: Vec2 = Vec2::new(44.0, 24.0);
const WATER_SECTION: usize = 4;
/// The village plaza.
const VILLAGE: Vec2 = Vec2::new(-26.0, -22.0);
/// Where the lake fountain stands.
const LAKE_FOUNTAIN: Vec2 = Vec2::new(10.0, -2.0);

/// Terrain height: rolling plains, a lake basin, mountains to the north.
fn height(x: f32, y: f32) -> f32 {
    let plains =
        1.5 * (x * 0.09).sin() * (y * 0.07).cos() + 0.9 * (x * 0.21 + 1.3).sin() * (y * 0.17 + 0.4).sin() + 0.3 * (x * 0.6 + y * 0.4).sin();
    let ridge = 0.09 * (y - 8.0).max(0.0).powf(1.35) * (0.75 + 0.25 * (x * 0.08).sin());
    let lake = -7.5 * (-((x - 9.0).powi(2) / (2.0 * 18.0 * 18.0) + (y + 3.0).powi(2) / (2.0 * 12.0 * 12.0))).exp();
    let dv = Vec2::new(x, y) - VILLAGE;
    let flatten = (-(dv.length_squared()) / (2.0 * 14.0 * 14.0)).exp();
    (2.5 + plains + ridge + lake) * (1.0 - flatten) + 2.6 * flatten
}

fn normal(x: f32, y: f32) -> Vec3 {
    let e = 0.25;
    Vec3::new(height(x - e, y) - height(x + e, y), height(x, y - e) - height(x, y + e), 2.0 * e).normalize()
}

/// A small deterministic hash in 0..1.
fn rand(i: u32, salt: u32) -> f32 {
    samples::textures::unit_hash(i.wrapping_mul(0x9E37_79B1) ^ salt.wrapping_mul(0x85EB_CA77))
}

struct Section {
    positions: Vec<Vec3>,
    normals: Vec<Vec3>,
    colors: Vec<Color>,
    triangles: Vec<u32>,
}

/// The terrain's four sections by height band (sand, grass, rock, snow;
/// one layered material draws them all, so the bands only split the mesh).
fn terrain_sections() -> Vec<Section> {
    let mut sections: Vec<Section> =
        (0..4).map(|_| Section { positions: vec![], normals: vec![], colors: vec![], triangles: vec![] }).collect();
    let step = 2.0 * HALF / GRID as f32;
    for j in 0..GRID {
        for i in 0..GRID {
            let corners =
                [(i, j), (i + 1, j), (i + 1, j + 1), (i, j + 1)].map(|(a, b)| Vec2::new(-HALF + a as f32 * step, -HALF + b as f32 * step));
            let hs = corners.map(|c| height(c.x, c.y));
            let avg = hs.iter().sum::<f32>() / 4.0;
            let steep = normal((corners[0].x + corners[2].x) / 2.0, (corners[0].y + corners[2].y) / 2.0).z < 0.8;
            let band = if avg < 0.9 {
                0
            } else if avg > 17.0 + 2.0 * rand((j * GRID + i) as u32, 7) && !steep {
                3
            } else if avg > 8.5 || steep {
                2
            } else {
                1
            };
            let s = &mut sections[band];
            let base = s.positions.len() as u32;
            for (k, c) in corners.iter().enumerate() {
                s.positions.push(Vec3::new(c.x, c.y, hs[k]));
                s.normals.push(normal(c.x, c.y));
                let (gi, gj) = ((c.x + HALF) / step, (c.y + HALF) / step);
                let shade = 0.82 + 0.18 * rand((gj as u32) * 1000 + gi as u32, 3);
                let v = (shade * 255.0) as u8;
                s.colors.push([v, v, v, 255]);
            }
            s.triangles.extend_from_slice(&[base, base + 1, base + 2, base, base + 2, base + 3]);
        }
    }
    sections
}

/// The water grid's positions and normals at time `t`.
fn water(t: f32) -> (Vec<Vec3>, Vec<Vec3>) {
    let n = WATER_GRID + 1;
    let size = WATER_MAX - WATER_MIN;
    let mut p = Vec::with_capacity(n * n);
    let mut nr = Vec::with_capacity(n * n);
    for j in 0..n {
        for i in 0..n {
            let x = WATER_MIN.x + size.x * i as f32 / WATER_GRID as f32;
            let y = WATER_MIN.y + size.y * j as f32 / WATER_GRID as f32;
            let (a, b) = (x * 0.35 + t * 1.7, y * 0.28 - t * 1.3);
            let z = 0.12 * a.sin() + 0.09 * b.sin();
            let (dx, dy) = (0.12 * 0.35 * a.cos(), 0.09 * 0.28 * b.cos());
            p.push(Vec3::new(x, y, z));
            nr.push(Vec3::new(-dx, -dy, 1.0).normalize());
        }
    }
    (p, nr)
}

fn water_triangles() -> Vec<u32> {
    let n = (WATER_GRID + 1) as u32;
    let mut t = Vec::new();
    for j in 0..WATER_GRID as u32 {
        for i in 0..WATER_GRID as u32 {
            let a = j * n + i;
            t.extend_from_slice(&[a, a + 1, a + n + 1, a, a + n + 1, a + n]);
        }
    }
    t
}

/// The terrain's layers by height, slope and noise, over world-space UVs
/// (the procedural sections have none): grass, rock on steep slopes and
/// high up, sand at the water's edge, snow on the high flats. The noise
/// that breaks up the borders is the vertex colour's random shade; a layer
/// is sampled only where it shows (explicit gradients, so the samples may
/// sit in non-uniform branches), which keeps lavapipe's cost down.
const TERRAIN_WGSL: &str = "fn material_main(in: MaterialInput) -> MaterialOutput {
    var out = default_material(in);
    let p = in.world_position;
    let n = normalize(in.world_normal);
    let breakup = clamp((in.color.r - 0.82) / 0.18, 0.0, 1.0);
    let uv = p.xy * 0.25;
    // Rock seen from the side on steep slopes, from above elsewhere.
    let side = select(vec2<f32>(p.x, -p.z), vec2<f32>(p.y, -p.z), abs(n.x) > abs(n.y));
    let rock_uv = select(p.xy, side, n.z < 0.75) * 0.2;
    let rock_w = max(smoothstep(0.84, 0.72, n.z), smoothstep(8.0, 10.5, p.z + 3.0 * breakup));
    let sand_w = 1.0 - smoothstep(0.7, 1.3, p.z + 0.8 * (breakup - 0.5));
    let snow_w = smoothstep(16.0, 17.5, p.z + 4.0 * breakup) * smoothstep(0.68, 0.8, n.z);
    // Gradients outside the branches: every lane of a quad computes them.
    let d = vec4<f32>(dpdx(uv), dpdy(uv));
    let dr = vec4<f32>(dpdx(rock_uv), dpdy(rock_uv));
    var c = vec3<f32>(0.0);
    if (rock_w < 1.0 && sand_w < 1.0 && snow_w < 1.0) {
        c = textureSampleGrad(material_texture_grass, material_sampler_grass, uv, d.xy, d.zw).rgb;
    }
    if (rock_w > 0.0 && sand_w < 1.0 && snow_w < 1.0) {
        c = mix(c, textureSampleGrad(material_texture_rock, material_sampler_rock, rock_uv, dr.xy, dr.zw).rgb, rock_w);
    }
    if (sand_w > 0.0) {
        c = mix(c, textureSampleGrad(material_texture_sand, material_sampler_sand, uv, d.xy, d.zw).rgb, sand_w);
    }
    c = mix(c, vec3<f32>(0.9, 0.92, 0.97) * (0.9 + 0.1 * breakup), snow_w);
    out.base_color = c * (0.75 + 0.25 * in.color.rgb);
    out.roughness = mix(0.9, 0.4, snow_w);
    return out;
}
";

/// Brick walls with their normal map: boxes take world-space UVs (bricks
/// of one size whatever the box's scale: along the face's tangent, and
/// down), round meshes their own UVs; both tiled by `uv_scale.xy`.
const WALL_WGSL: &str = "fn material_main(in: MaterialInput) -> MaterialOutput {
    var out = default_material(in);
    let t = normalize(in.world_tangent.xyz);
    let world_uv = vec2<f32>(dot(in.world_position, t), -in.world_position.z);
    // Gradients from interpolants only, then through the parameters' map.
    let world_dx = dpdx(world_uv);
    let world_dy = dpdy(world_uv);
    let w = param_world_mapped();
    let s = param_uv_scale().xy;
    let uv = mix(in.uv0, world_uv, w) * s;
    let dx = mix(in.uv_dx[0], world_dx, w) * s;
    let dy = mix(in.uv_dy[0], world_dy, w) * s;
    out.base_color = out.base_color * texture_albedo_grad(uv, dx, dy).rgb;
    out.normal = normalize(texture_normal_map_grad(uv, dx, dy).xyz * 2.0 - 1.0);
    return out;
}
";

/// Bilinear from the nearest mip level, repeating: lavapipe filters in
/// software, and trilinear filtering (two levels) or anisotropy (up to 100
/// times slower) would cost the frame much more.
fn sampler() -> SamplerDesc {
    SamplerDesc { mipmap_filter: rhi_vulkan::Filter::Nearest, ..SamplerDesc::linear_repeat() }
}

fn material(engine: &mut Engine, color: Vec4, f: impl FnOnce(&mut Material)) -> anyhow::Result<MaterialId> {
    let mut m = Material::colored(color);
    f(&mut m);
    Ok(engine.render_thread().create_material(m)?)
}

/// The camera's pose at time `t` (seconds): a slow arc around the valley.
fn camera_pose(t: f32) -> Transform {
    let target = Vec3::new(-5.0, 3.0, 1.0);
    let a = -1.95 + 0.05 * t;
    let eye = target + Vec3::new(62.0 * a.cos(), 62.0 * a.sin(), 31.0 + 2.0 * (0.3 * t).sin());
    Transform::new(eye, look_rotation(eye, target), Vec3::ONE)
}

/// Builds the scene step by step, then runs the frames: the camera flies
/// its path and the water moves.
fn run(o: &Options) -> anyhow::Result<()> {
    let mut engine = runner::engine("showcase", &o.common)?;
    let tex = create_textures(&mut engine)?;
    let mats = create_materials(&mut engine, &tex)?;
    let camera = spawn_camera(&mut engine, o.camera_time)?;
    spawn_sun_and_sky(&mut engine, mats.sky, o.dusk)?;
    let terrain = build_terrain(&mut engine, &mats)?;
    let instanced = plant_forest(&mut engine, &mats, o.instances)?;
    let chimneys = build_village(&mut engine, &mats)?;
    spawn_fountains_and_smoke(&mut engine, &chimneys)?;
    let fireflies = spawn_fireflies(&mut engine)?;
    let crawlers = spawn_crawlers(&mut engine)?;
    if let Some(n) = o.particles {
        spawn_geyser(&mut engine, n)?;
    }

    runner::run("showcase", &o.common, &mut engine, |engine, frame, dt| {
        let t = (frame + 1) as f32 * dt;
        engine.world.set_relative_transform(camera, camera_pose(o.camera_time + t))?;
        animate_water(engine, terrain, t)?;
        drift_fireflies(engine, &fireflies, t)?;
        crawl(engine, &crawlers, t)?;
        let instances_total = count_instances(engine, &instanced)?;
        Ok(runner::SampleFigures { instances_total, ..Default::default() })
    })
}

/// The textures the materials sample.
struct Textures {
    grass: TextureId,
    rock: TextureId,
    sand: TextureId,
    bark: TextureId,
    leaves: TextureId,
    bricks: TextureId,
    bricks_normal: TextureId,
}

fn create_textures(engine: &mut Engine) -> anyhow::Result<Textures> {
    let rt = engine.render_thread();
    let grass = rt.create_texture(textures::grass(128))?;
    let rock = rt.create_texture(textures::rock(128))?;
    let sand = rt.create_texture(textures::sand(128))?;
    let bark = rt.create_texture(textures::bark(128))?;
    let leaves = rt.create_texture(textures::leaves(128, 0.8, 5))?;
    let (brick_albedo, brick_height) = textures::bricks(128);
    let bricks = rt.create_texture(brick_albedo)?;
    let bricks_normal = rt.create_texture(textures::normal_map("brick normals", 128, &brick_height, 2.0))?;
    Ok(Textures { grass, rock, sand, bark, leaves, bricks, bricks_normal })
}

/// The scene's materials, named after what wears them.
struct Materials {
    terrain: MaterialId,
    water: MaterialId,
    trunk: MaterialId,
    leaves: MaterialId,
    stone: MaterialId,
    boulder: MaterialId,
    wall: MaterialId,
    tower_wall: MaterialId,
    roof: MaterialId,
    slate: MaterialId,
    lamp: MaterialId,
    sky: MaterialId,
}

fn create_materials(engine: &mut Engine, tex: &Textures) -> anyhow::Result<Materials> {
    let terrain = material(engine, Vec4::ONE, |m| {
        m.shader = renderer::MaterialShader::new("terrain.wgsl", TERRAIN_WGSL);
        m.parameters = vec![
            MaterialParameter::texture("grass", tex.grass, sampler()),
            MaterialParameter::texture("rock", tex.rock, sampler()),
            MaterialParameter::texture("sand", tex.sand, sampler()),
        ];
    })?;
    // One textured parent; bark and boulders are its instances.
    let textured_parent = material(engine, Vec4::ONE, |m| {
        m.shader = renderer::MaterialShader::new("textured.wgsl", textures::TEXTURED_WGSL);
        m.parameters =
            vec![MaterialParameter::texture("albedo", TextureId::WHITE, sampler()), MaterialParameter::vector("uv_scale", Vec4::ONE)];
    })?;
    let water = material(engine, Vec4::new(0.10, 0.32, 0.50, 1.0), |m| {
        m.blend_mode = BlendMode::Translucent;
        m.params = MaterialParams { base_color: m.params.base_color, opacity: 0.7, roughness: 0.1, specular: 1.0, ..m.params };
    })?;
    let trunk = textured(engine, textured_parent, Vec4::ONE, tex.bark, Vec4::new(2.0, 2.0, 0.0, 0.0))?;
    let leaves = material(engine, Vec4::new(0.75, 0.9, 0.75, 1.0), |m| {
        m.shader = renderer::MaterialShader::new("leaves.wgsl", textures::LEAVES_WGSL);
        m.blend_mode = BlendMode::Masked;
        m.params.roughness = 0.7;
        m.parameters = vec![
            MaterialParameter::texture("leaves", tex.leaves, sampler()),
            MaterialParameter::vector("uv_scale", Vec4::new(3.0, 2.0, 0.0, 0.0)),
        ];
    })?;
    let stone = material(engine, Vec4::new(0.40, 0.38, 0.36, 1.0), |_| {})?;
    let boulder = textured(engine, textured_parent, Vec4::new(1.1, 1.1, 1.1, 1.0), tex.rock, Vec4::new(2.0, 1.0, 0.0, 0.0))?;
    let (wall, tower_wall) = wall_materials(engine, tex)?;
    let roof = material(engine, Vec4::new(0.62, 0.22, 0.16, 1.0), |_| {})?;
    let slate = material(engine, Vec4::new(0.25, 0.28, 0.36, 1.0), |_| {})?;
    let lamp = material(engine, Vec4::new(0.0, 0.0, 0.0, 1.0), |m| m.params.emissive = Vec3::new(1.0, 0.8, 0.45))?;
    let sky = material(engine, Vec4::new(0.0, 0.0, 0.0, 1.0), |m| {
        m.two_sided = true;
        m.params.specular = 0.0;
        m.params.emissive = Vec3::new(0.50, 0.66, 0.86);
    })?;
    Ok(Materials { terrain, water, trunk, leaves, stone, boulder, wall, tower_wall, roof, slate, lamp, sky })
}

/// An instance of the textured parent: `albedo` tinted by `color`, tiled `uv_scale.xy` times.
fn textured(engine: &mut Engine, parent: MaterialId, color: Vec4, albedo: TextureId, uv_scale: Vec4) -> anyhow::Result<MaterialId> {
    let instance =
        MaterialInstance::of(parent).with_vector("base_color", color).with_texture("albedo", albedo).with_vector("uv_scale", uv_scale);
    Ok(engine.render_thread().create_material_instance(instance)?)
}

/// One brick parent and its instance for the tower: the houses map bricks
/// in world space, the tower by its UVs.
fn wall_materials(engine: &mut Engine, tex: &Textures) -> anyhow::Result<(MaterialId, MaterialId)> {
    let wall = material(engine, Vec4::new(1.0, 0.95, 0.85, 1.0), |m| {
        m.shader = renderer::MaterialShader::new("wall.wgsl", WALL_WGSL);
        m.parameters = vec![
            MaterialParameter::texture("albedo", tex.bricks, sampler()),
            MaterialParameter::texture("normal_map", tex.bricks_normal, sampler()),
            MaterialParameter::vector("uv_scale", Vec4::new(0.5, 0.5, 0.0, 0.0)),
            MaterialParameter::scalar("world_mapped", 1.0),
        ];
    })?;
    // The tower: a cylinder of radius 2.5 and height 13, so about 8 × 6.5 tiles of 2 m.
    let tower_wall = engine.render_thread().create_material_instance(
        MaterialInstance::of(wall).with_scalar("world_mapped", 0.0).with_vector("uv_scale", Vec4::new(8.0, 6.5, 0.0, 0.0)),
    )?;
    Ok((wall, tower_wall))
}

/// The camera at its path's point for `camera_time`.
fn spawn_camera(engine: &mut Engine, camera_time: f32) -> anyhow::Result<ComponentId> {
    let mut camera = CameraComponent::default();
    camera.0.far = 1500.0;
    camera.0.near = 0.5;
    let camera_id = engine.world.spawn_actor("camera", Box::new(camera), camera_pose(camera_time))?.1;
    // In window mode the user can take over: WASD/QE to move, drag to turn.
    samples::fly_camera::control_camera(camera_id);
    Ok(camera_id)
}

/// The shadow-casting sun, and the sky: a large emissive sphere around everything.
fn spawn_sun_and_sky(engine: &mut Engine, sky: MaterialId, dusk: bool) -> anyhow::Result<()> {
    let (sun, direction) = match dusk {
        false => (
            DirectionalLightComponent { color: Vec3::new(1.0, 0.93, 0.80), intensity: 1.25, cast_shadows: true, ..Default::default() },
            Vec3::new(0.55, 0.75, -0.55),
        ),
        true => (
            DirectionalLightComponent { color: Vec3::new(1.0, 0.55, 0.3), intensity: 0.25, cast_shadows: true, ..Default::default() },
            Vec3::new(0.6, 0.75, -0.18),
        ),
    };
    if dusk {
        engine.render_thread().set_cvar(renderer::cvars::SKY_LIGHT_INTENSITY, "0.15")?;
    }
    engine.world.spawn_actor("sun", Box::new(sun), Transform::new(Vec3::ZERO, look_rotation(Vec3::ZERO, direction), Vec3::ONE))?;
    let (_, sky_id) = engine.world.spawn_actor(
        "sky",
        Box::new(StaticMeshComponent::new(StaticMesh::sphere(24))),
        Transform::from_translation_scale(Vec3::ZERO, Vec3::splat(1200.0)),
    )?;
    engine.world.set_material(sky_id, 0, sky)?;
    engine.world.set_cast_shadow(sky_id, false)?;
    Ok(())
}

/// Terrain and water: one procedural mesh, five sections.
fn build_terrain(engine: &mut Engine, mats: &Materials) -> anyhow::Result<ComponentId> {
    let mut terrain = ProceduralMeshComponent::new();
    for (i, s) in terrain_sections().iter().enumerate() {
        terrain.create_mesh_section(i, SectionData::new(&s.positions, &s.triangles).normals(&s.normals).colors(&s.colors), false)?;
        terrain.set_material(i, Some(mats.terrain.into()))?;
    }
    let water_tris = water_triangles();
    let (wp, wn) = water(0.0);
    terrain.create_mesh_section(WATER_SECTION, SectionData::new(&wp, &water_tris).normals(&wn), false)?;
    terrain.set_material(WATER_SECTION, Some(mats.water.into()))?;
    let (_, terrain_id) = engine.world.spawn_actor("terrain", Box::new(terrain), Transform::IDENTITY)?;
    Ok(terrain_id)
}

/// Rewrites the water section for time `t`.
fn animate_water(engine: &mut Engine, terrain: ComponentId, t: f32) -> anyhow::Result<()> {
    let (wp, wn) = water(t);
    engine.world.with_component_mut(terrain, |c: &mut ProceduralMeshComponent| {
        c.update_mesh_section(WATER_SECTION, SectionData::positions(&wp).normals(&wn))
    })??;
    Ok(())
}

/// Forest, rocks and pebbles (whatever `--instances` asks beyond the
/// forest, on the land): an instanced static mesh each; returns their ids.
fn plant_forest(engine: &mut Engine, mats: &Materials, instances: Option<u32>) -> anyhow::Result<Vec<ComponentId>> {
    let (trunks, crowns) = place_trees();
    let rocks = place_rocks();
    let forest = (trunks.len() + crowns.len() + rocks.len()) as u32;
    let pebbles = scatter_pebbles(instances.unwrap_or(0).saturating_sub(forest));
    let mut ism_ids = Vec::new();
    for (name, mesh, transforms, mat) in [
        ("tree trunks", StaticMesh::cylinder(8), &trunks, mats.trunk),
        ("tree crowns", StaticMesh::cone(10), &crowns, mats.leaves),
        ("rocks", StaticMesh::sphere(10), &rocks, mats.boulder),
        ("pebbles", StaticMesh::sphere(4), &pebbles, mats.stone),
    ] {
        if transforms.is_empty() {
            continue;
        }
        ism_ids.push(spawn_instanced(engine, name, mesh, transforms, mat)?);
    }
    Ok(ism_ids)
}

/// Up to 1,000 trees (trunk and crown transforms) on gentle slopes 1.4 to
/// 11 m up, away from the village, denser to the north-east.
fn place_trees() -> (Vec<Affine3A>, Vec<Affine3A>) {
    let mut trunks = Vec::new();
    let mut crowns = Vec::new();
    let mut k = 0u32;
    while trunks.len() < 1000 && k < 200_000 {
        k += 1;
        let (x, y) = ((rand(k, 1) * 2.0 - 1.0) * (HALF - 2.0), (rand(k, 2) * 2.0 - 1.0) * (HALF - 2.0));
        let h = height(x, y);
        let near_village = (Vec2::new(x, y) - VILLAGE).length() < 24.0;
        if !(1.4..11.0).contains(&h)
            || normal(x, y).z < 0.85
            || near_village
            || rand(k, 5) > 0.35 + 0.65 * ((x + y + 20.0) / 60.0).clamp(0.0, 1.0)
        {
            continue;
        }
        let s = 0.6 + 0.5 * rand(k, 3);
        let spin = Quat::from_rotation_z(rand(k, 4) * std::f32::consts::TAU);
        trunks.push(Affine3A::from_scale_rotation_translation(Vec3::new(0.5 * s, 0.5 * s, 2.0 * s), spin, Vec3::new(x, y, h + 0.9 * s)));
        crowns.push(Affine3A::from_scale_rotation_translation(
            Vec3::new(2.6 * s, 2.6 * s, 5.5 * s),
            spin,
            Vec3::new(x, y, h + 1.6 * s + 2.75 * s),
        ));
    }
    (trunks, crowns)
}

/// Up to 350 boulders on dry land, clear of the plaza.
fn place_rocks() -> Vec<Affine3A> {
    let mut rocks = Vec::new();
    let mut k = 0u32;
    while rocks.len() < 350 && k < 200_000 {
        k += 1;
        let (x, y) = ((rand(k, 11) * 2.0 - 1.0) * (HALF - 2.0), (rand(k, 12) * 2.0 - 1.0) * (HALF - 2.0));
        let h = height(x, y);
        if h < 0.3 || (Vec2::new(x, y) - VILLAGE).length() < 12.0 {
            continue;
        }
        let s = 0.5 + 1.4 * rand(k, 13).powi(2);
        let scale = Vec3::new(s * (1.0 + rand(k, 14)), s * (0.8 + rand(k, 15)), s * (0.6 + 0.5 * rand(k, 16)));
        rocks.push(Affine3A::from_scale_rotation_translation(
            scale,
            Quat::from_rotation_z(rand(k, 17) * std::f32::consts::TAU),
            Vec3::new(x, y, h + 0.15 * scale.z),
        ));
    }
    rocks
}

/// `count` pebbles anywhere on the terrain (at the water level over the lake).
fn scatter_pebbles(count: u32) -> Vec<Affine3A> {
    (0..count)
        .map(|i| {
            let (x, y) = ((rand(i, 21) * 2.0 - 1.0) * (HALF - 1.0), (rand(i, 22) * 2.0 - 1.0) * (HALF - 1.0));
            let s = 0.08 + 0.12 * rand(i, 23);
            Affine3A::from_scale_rotation_translation(
                Vec3::new(s * 1.4, s, s * 0.6),
                Quat::from_rotation_z(rand(i, 24) * std::f32::consts::TAU),
                Vec3::new(x, y, height(x, y).max(0.0)),
            )
        })
        .collect()
}

/// One instanced static mesh; the pebbles, as ground clutter, fade out
/// past 50–70 m and cast no shadows.
fn spawn_instanced(
    engine: &mut Engine,
    name: &str,
    mesh: Arc<StaticMesh>,
    transforms: &[Affine3A],
    mat: MaterialId,
) -> anyhow::Result<ComponentId> {
    let mut c = InstancedStaticMeshComponent::new(mesh)?;
    c.add_instances(transforms, TransformSpace::Component)?;
    if name == "pebbles" {
        c.set_cull_distances(50.0, 70.0)?;
    }
    let (_, id) = engine.world.spawn_actor(name, Box::new(c), Transform::IDENTITY)?;
    engine.world.set_material(id, 0, mat)?;
    if name == "pebbles" {
        engine.world.set_cast_shadow(id, false)?;
    }
    Ok(id)
}

/// Instances in all the instanced static meshes, for the stats.
fn count_instances(engine: &Engine, ism_ids: &[ComponentId]) -> anyhow::Result<u64> {
    let mut instances_total = 0u64;
    for id in ism_ids {
        instances_total += engine.world.component::<InstancedStaticMeshComponent>(*id)?.instance_count() as u64;
    }
    Ok(instances_total)
}

/// The village: houses with pyramid roofs, a tower, a plaza fountain,
/// lamps. Returns where the chimneys' smoke starts.
fn build_village(engine: &mut Engine, mats: &Materials) -> anyhow::Result<Vec<Vec3>> {
    let chimneys = add_houses(engine, mats)?;
    add_tower(engine, mats)?;
    add_fountain(engine, mats)?;
    add_lamps(engine, mats)?;
    Ok(chimneys)
}

/// The ground's height at `p`.
fn ground(p: Vec2) -> f32 {
    height(p.x, p.y)
}

fn spawn_static_mesh(engine: &mut Engine, name: &str, mesh: Arc<StaticMesh>, t: Transform, mat: MaterialId) -> anyhow::Result<()> {
    let (_, id) = engine.world.spawn_actor(name, Box::new(StaticMeshComponent::new(mesh)), t)?;
    engine.world.set_material(id, 0, mat)?;
    Ok(())
}

/// Six houses around the plaza, roofed in tiles or slate, every other one
/// with a chimney; returns the chimneys' tops.
fn add_houses(engine: &mut Engine, mats: &Materials) -> anyhow::Result<Vec<Vec3>> {
    let houses = [
        (Vec2::new(-9.0, -4.0), 0.3),
        (Vec2::new(7.0, -7.0), -0.2),
        (Vec2::new(-4.0, 9.0), 0.1),
        (Vec2::new(9.0, 6.0), 0.5),
        (Vec2::new(-12.0, 8.0), -0.4),
        (Vec2::new(1.0, -12.0), 0.05),
    ];
    let mut chimneys = Vec::new();
    for (i, (offset, yaw)) in houses.iter().enumerate() {
        let p = VILLAGE + *offset;
        let z = ground(p);
        let (w, d, hgt) = (5.0 + (i % 3) as f32, 4.0 + (i % 2) as f32, 3.2 + (i % 2) as f32 * 1.2);
        let rot = Quat::from_rotation_z(*yaw);
        spawn_static_mesh(
            engine,
            "house",
            StaticMesh::cube(),
            Transform::new(Vec3::new(p.x, p.y, z + hgt / 2.0 - 0.5), rot, Vec3::new(w, d, hgt + 1.0)),
            mats.wall,
        )?;
        let roof_rot = rot * Quat::from_rotation_z(std::f32::consts::FRAC_PI_4);
        let roof_mat = if i % 2 == 0 { mats.roof } else { mats.slate };
        spawn_static_mesh(
            engine,
            "roof",
            StaticMesh::cone(4),
            Transform::new(Vec3::new(p.x, p.y, z + hgt + 1.25), roof_rot, Vec3::new(w * 1.5, d * 1.5, 2.5).max(Vec3::splat(0.1))),
            roof_mat,
        )?;
        // A lit window on each long side: a small warm light just outside the wall.
        for side in [-1.0f32, 1.0] {
            let window = Vec3::new(p.x, p.y, z) + rot * Vec3::new(0.0, side * (d / 2.0 + 0.3), hgt * 0.5);
            let light = PointLightComponent { color: Vec3::new(1.0, 0.7, 0.35), intensity: 1.5, radius: 3.0, ..Default::default() };
            engine.world.spawn_actor("window light", Box::new(light), Transform::from_translation(window))?;
        }
        if i % 2 == 0 {
            let c = Vec3::new(p.x, p.y, z) + rot * Vec3::new(w * 0.25, 0.0, hgt + 2.0);
            spawn_static_mesh(
                engine,
                "chimney",
                StaticMesh::cube(),
                Transform::from_translation_scale(c, Vec3::new(0.6, 0.6, 2.0)),
                mats.stone,
            )?;
            chimneys.push(c + Vec3::Z * 1.1);
        }
    }
    Ok(chimneys)
}

fn add_tower(engine: &mut Engine, mats: &Materials) -> anyhow::Result<()> {
    let tower = VILLAGE + Vec2::new(15.0, 14.0);
    let tz = ground(tower);
    spawn_static_mesh(
        engine,
        "tower",
        StaticMesh::cylinder(20),
        Transform::from_translation_scale(Vec3::new(tower.x, tower.y, tz + 6.0 - 0.5), Vec3::new(5.0, 5.0, 13.0)),
        mats.tower_wall,
    )?;
    spawn_static_mesh(
        engine,
        "tower roof",
        StaticMesh::cone(20),
        Transform::from_translation_scale(Vec3::new(tower.x, tower.y, tz + 12.0 + 2.5), Vec3::new(6.4, 6.4, 5.0)),
        mats.slate,
    )
}

/// The plaza fountain's stone basin and pillar (its jet is a particle system).
fn add_fountain(engine: &mut Engine, mats: &Materials) -> anyhow::Result<()> {
    let plaza_z = ground(VILLAGE);
    spawn_static_mesh(
        engine,
        "fountain basin",
        StaticMesh::cylinder(24),
        Transform::from_translation_scale(Vec3::new(VILLAGE.x, VILLAGE.y, plaza_z + 0.2), Vec3::new(5.0, 5.0, 0.9)),
        mats.stone,
    )?;
    spawn_static_mesh(
        engine,
        "fountain pillar",
        StaticMesh::cylinder(12),
        Transform::from_translation_scale(Vec3::new(VILLAGE.x, VILLAGE.y, plaza_z + 1.0), Vec3::new(0.6, 0.6, 2.0)),
        mats.stone,
    )
}

/// Three lamp posts on the plaza, each with a glowing globe and a
/// shadow-casting spot light shining down from it (a street lamp).
fn add_lamps(engine: &mut Engine, mats: &Materials) -> anyhow::Result<()> {
    let lamp_spots = [Vec2::new(-5.0, 4.5), Vec2::new(5.0, -4.0), Vec2::new(4.5, 5.0)];
    for (i, s) in lamp_spots.iter().enumerate() {
        let p = VILLAGE + *s;
        let z = ground(p);
        spawn_static_mesh(
            engine,
            "lamp post",
            StaticMesh::cylinder(6),
            Transform::from_translation_scale(Vec3::new(p.x, p.y, z + 1.5), Vec3::new(0.15, 0.15, 3.0)),
            mats.slate,
        )?;
        spawn_static_mesh(
            engine,
            "lamp",
            StaticMesh::sphere(10),
            Transform::from_translation_scale(Vec3::new(p.x, p.y, z + 3.2), Vec3::splat(0.6)),
            mats.lamp,
        )?;
        let color = [Vec3::new(1.0, 0.72, 0.4), Vec3::new(1.0, 0.6, 0.3), Vec3::new(0.9, 0.8, 0.55)][i];
        let spot = SpotLightComponent {
            color,
            intensity: 30.0,
            radius: 14.0,
            inner_cone: 0.6,
            outer_cone: 1.1,
            source_radius: 0.1,
            cast_shadows: true,
            ..Default::default()
        };
        let (_, light) = engine.world.spawn_actor(
            "lamp light",
            Box::new(spot),
            Transform::new(Vec3::new(p.x, p.y, z + 2.85), look_rotation(Vec3::ZERO, Vec3::NEG_Z), Vec3::ONE),
        )?;
        // A street lamp never moves: its shadow is rendered once.
        engine.world.set_mobility(light, Mobility::Stationary)?;
    }
    Ok(())
}
