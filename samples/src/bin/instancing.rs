//! `cargo xtask run instancing`: instanced static meshes (UE's ISM).
//!
//! * `--mesh-a N --mesh-b M`: exactly two `InstancedStaticMeshComponent`s,
//!   two different rock meshes with N and M random instances (fixed seed) and
//!   nothing else drawn — one base-pass draw per component.
//! * `--instances K` (the default, 100,000): a forest — trees (35%: trunk and
//!   foliage sections of one mesh) and two kinds of rocks scattered over a
//!   ground plane, culled per instance on the GPU
//!   (`r.InstancedStaticMeshes.GPUCulling=1`), rocks with a cull distance
//!   band (a dithered fade out between 90 and 120 units); the
//!   camera looks across it so that only a part is visible. With `--hism`
//!   the forest's components are hierarchical (UE's HISM): a cluster tree
//!   built in the background, culled per cluster on the CPU.
//!
//! Both are lit by a shadow-casting directional light. The stats'
//! `instances.total` is summed over the components; `instances.visible` is
//! the main view's visible instances of the last frame, which the proxies
//! count into that frame's stats (`instancing::VISIBLE_INSTANCES_COUNTER`;
//! on the GPU path read back from the GPU cull when the frame retires).

use clap::Parser;
use engine_core::*;
use glam::{Affine3A, Quat, Vec3, Vec4};
use instancing::{InstancedStaticMeshComponent, TransformSpace, MAX_INSTANCES};
use renderer::{shapes, LocalVertex, Material, MaterialId, StaticMeshLod, StaticMeshSection};
use samples::{runner, CommonOptions};
use std::sync::Arc;
use test_support::Rng;

const NAME: &str = "instancing";
const SEED: u64 = 0x5EED_1A57_A2C1_0C45;

#[derive(Parser, Debug)]
#[command(name = "instancing", about = "Instanced static meshes: two rock components, or a GPU-culled forest")]
struct Options {
    /// Instances of rock mesh A (two-component mode: exactly two ISMs, nothing else drawn).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=MAX_INSTANCES as i64))]
    mesh_a: Option<u32>,
    /// Instances of rock mesh B (two-component mode).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=MAX_INSTANCES as i64))]
    mesh_b: Option<u32>,
    /// Instances in the forest (trees and rocks over a ground plane; default 100,000).
    #[arg(long, conflicts_with_all = ["mesh_a", "mesh_b"], value_parser = clap::value_parser!(u32).range(1..=MAX_INSTANCES as i64))]
    instances: Option<u32>,
    /// Hierarchical components (HISM) for the forest: CPU cluster culling.
    #[arg(long, conflicts_with_all = ["mesh_a", "mesh_b"])]
    hism: bool,
    #[command(flatten)]
    common: CommonOptions,
}

fn main() {
    samples::main(NAME, run);
}

fn hash3(p: Vec3, seed: u64) -> f32 {
    let q = (p * 1000.0).round();
    let mut r = Rng::new(
        seed ^ (q.x as i64 as u64).wrapping_mul(0x1F1F_1F1F)
            ^ (q.y as i64 as u64).wrapping_mul(0x7FEB_352D_1234)
            ^ (q.z as i64 as u64).wrapping_mul(0x846C_A68B),
    );
    r.next_u64();
    r.next_f32()
}

fn flat_vertex(p: Vec3, n: Vec3) -> LocalVertex {
    let t = if n.z.abs() > 0.9 { Vec3::X } else { Vec3::Z.cross(n).normalize_or_zero() };
    LocalVertex { position: p.to_array(), tangent_x: t.extend(1.0).to_array(), normal: n.to_array(), color: [255; 4], uvs: [[0.0; 2]; 4] }
}

/// A faceted rock: a low-poly sphere with each vertex pushed in or out by a
/// hash of its position (so seam duplicates agree), squashed, flat-shaded.
/// Radius about 1, resting roughly on z = -0.3 * squash.
fn rock(name: &str, seed: u64, segments: u32, rings: u32, jag: f32, squash: Vec3) -> anyhow::Result<Arc<StaticMesh>> {
    let sphere = shapes::uv_sphere(1.0, segments, rings);
    let displaced: Vec<Vec3> = sphere
        .vertices
        .iter()
        .map(|v| {
            let p = Vec3::from(v.position);
            p * (1.0 - jag * 0.5 + jag * hash3(p, seed)) * squash
        })
        .collect();
    let (mut vertices, mut indices) = (Vec::new(), Vec::new());
    for t in sphere.indices.chunks_exact(3) {
        let [a, b, c] = [t[0], t[1], t[2]].map(|i| displaced[i as usize]);
        let n = (b - a).cross(c - a);
        if n.length_squared() < 1e-10 {
            continue;
        }
        let n = n.normalize();
        for p in [a, b, c] {
            indices.push(vertices.len() as u32);
            vertices.push(flat_vertex(p, n));
        }
    }
    Ok(StaticMesh::new(name, vec![StaticMeshLod::single_section(vertices, indices)], vec!["rock".into()])?)
}

/// A fir: a cylinder trunk (slot 0) and two stacked cones (slot 1), pivot at
/// the foot of the trunk, 5.6 tall.
fn tree() -> anyhow::Result<Arc<StaticMesh>> {
    let mut vertices: Vec<LocalVertex> = Vec::new();
    let mut indices: Vec<u32> = Vec::new();
    let append = |vertices: &mut Vec<LocalVertex>, indices: &mut Vec<u32>, lod: StaticMeshLod, z: f32| {
        let base = vertices.len() as u32;
        vertices.extend(lod.vertices.iter().map(|v| LocalVertex { position: [v.position[0], v.position[1], v.position[2] + z], ..*v }));
        indices.extend(lod.indices.iter().map(|i| i + base));
    };
    append(&mut vertices, &mut indices, shapes::cylinder(0.16, 1.6, 8), 0.8);
    let trunk = indices.len() as u32;
    append(&mut vertices, &mut indices, shapes::cone(1.15, 3.0, 12), 1.1 + 1.5);
    append(&mut vertices, &mut indices, shapes::cone(0.8, 2.5, 12), 3.1 + 1.25);
    let total = indices.len() as u32;
    let sections = vec![
        StaticMeshSection { first_index: 0, index_count: trunk, material_slot: 0 },
        StaticMeshSection { first_index: trunk, index_count: total - trunk, material_slot: 1 },
    ];
    Ok(StaticMesh::new("fir", vec![StaticMeshLod { vertices, indices, sections, screen_size: 0.0 }], vec!["bark".into(), "leaves".into()])?)
}

fn instance(p: Vec3, yaw: f32, tilt: f32, scale: Vec3) -> Affine3A {
    Affine3A::from_scale_rotation_translation(scale, Quat::from_rotation_z(yaw) * Quat::from_rotation_x(tilt), p)
}

fn material(engine: &mut Engine, r: f32, g: f32, b: f32) -> anyhow::Result<MaterialId> {
    Ok(engine.render_thread().create_material(Material::colored(Vec4::new(r, g, b, 1.0)))?)
}

/// Spawns one ISM actor with `transforms` and one material per slot.
fn spawn_ism(
    engine: &mut Engine,
    name: &str,
    mesh: Arc<StaticMesh>,
    transforms: &[Affine3A],
    mats: &[MaterialId],
    cull: Option<(f32, f32)>,
    hism: bool,
) -> anyhow::Result<ComponentId> {
    let mut c = if hism { InstancedStaticMeshComponent::new_hierarchical(mesh)? } else { InstancedStaticMeshComponent::new(mesh)? };
    c.add_instances(transforms, TransformSpace::Component)?;
    if let Some((start, end)) = cull {
        c.set_cull_distances(start, end)?;
    }
    let (_, id) = engine.world.spawn_actor(name, Box::new(c), Transform::IDENTITY)?;
    for (slot, m) in mats.iter().enumerate() {
        engine.world.set_material(id, slot, *m)?;
    }
    Ok(id)
}

fn spawn_camera_and_sun(engine: &mut Engine, eye: Vec3, target: Vec3, far: f32, sun_dir: Vec3) -> anyhow::Result<()> {
    let mut camera = CameraComponent::default();
    camera.0.far = far;
    camera.0.near = 0.2;
    engine.world.spawn_actor("camera", Box::new(camera), Transform::new(eye, look_rotation(eye, target), Vec3::ONE))?;
    let sun = DirectionalLightComponent { intensity: 1.3, color: Vec3::new(1.0, 0.96, 0.88), cast_shadows: true, ..Default::default() };
    engine.world.spawn_actor("sun", Box::new(sun), Transform::new(Vec3::ZERO, look_rotation(Vec3::ZERO, sun_dir), Vec3::ONE))?;
    Ok(())
}

/// Two rock heaps, one component each.
fn two_components(engine: &mut Engine, a: u32, b: u32) -> anyhow::Result<Vec<ComponentId>> {
    let mut rng = Rng::new(SEED);
    let mesh_a = rock("rock A (boulder)", 11, 10, 7, 0.45, Vec3::new(1.0, 0.85, 0.6))?;
    let mesh_b = rock("rock B (shard)", 23, 6, 4, 0.7, Vec3::new(0.7, 0.6, 1.2))?;
    let heap = |rng: &mut Rng, n: u32, center: Vec3, radius: f32, squash: Vec3| -> Vec<Affine3A> {
        (0..n)
            .map(|_| {
                let (ang, r) = (rng.range_f32(0.0, std::f32::consts::TAU), radius * rng.next_f32().sqrt());
                let s = rng.range_f32(0.35, 0.9);
                let h = (1.0 - (r / radius).powi(2)) * 3.5 * rng.next_f32().sqrt();
                let p = center + Vec3::new(ang.cos() * r, ang.sin() * r, h);
                instance(p, rng.range_f32(0.0, std::f32::consts::TAU), rng.range_f32(-0.5, 0.5), squash * s * rng.range_f32(0.8, 1.2))
            })
            .collect()
    };
    let ta = heap(&mut rng, a, Vec3::new(-7.5, 0.0, 0.0), 8.0, Vec3::ONE);
    let tb = heap(&mut rng, b, Vec3::new(7.5, 0.0, 0.0), 8.0, Vec3::ONE);
    let ma = material(engine, 0.46, 0.4, 0.33)?;
    let mb = material(engine, 0.28, 0.33, 0.4)?;
    let ida = spawn_ism(engine, "rocks A", mesh_a, &ta, &[ma], None, false)?;
    let idb = spawn_ism(engine, "rocks B", mesh_b, &tb, &[mb], None, false)?;
    let eye = Vec3::new(0.0, -21.0, 12.0);
    spawn_camera_and_sun(engine, eye, Vec3::new(0.0, 0.0, 1.0), 200.0, Vec3::new(0.5, 0.7, -1.0))?;
    Ok(vec![ida, idb])
}

/// Trees and rocks over a ground plane; returns the ISM components.
fn forest(engine: &mut Engine, k: u32, hism: bool) -> anyhow::Result<Vec<ComponentId>> {
    let mut rng = Rng::new(SEED);
    let trees = (k as u64 * 35 / 100).max(1) as u32;
    let rocks_a = ((k - trees) / 2).min(k - trees);
    let rocks_b = k - trees - rocks_a;
    // About 5 square units per instance.
    let extent = ((k as f32) * 5.0).sqrt().max(40.0);
    let half = extent / 2.0;
    let scatter = |rng: &mut Rng, n: u32, f: &dyn Fn(&mut Rng, Vec3) -> Affine3A| -> Vec<Affine3A> {
        (0..n)
            .map(|_| {
                let p = Vec3::new(rng.range_f32(-half, half), rng.range_f32(-half, half), 0.0);
                f(rng, p)
            })
            .collect()
    };
    let tt = scatter(&mut rng, trees, &|rng, p| {
        let s = rng.range_f32(0.7, 1.4);
        instance(p, rng.range_f32(0.0, std::f32::consts::TAU), rng.range_f32(-0.04, 0.04), Vec3::new(s, s, s * rng.range_f32(0.85, 1.25)))
    });
    let rock_at = |rng: &mut Rng, p: Vec3| {
        let s = rng.range_f32(0.3, 1.0);
        instance(p + Vec3::Z * s * 0.2, rng.range_f32(0.0, std::f32::consts::TAU), rng.range_f32(-0.3, 0.3), Vec3::splat(s))
    };
    let ta = if rocks_a > 0 { scatter(&mut rng, rocks_a, &rock_at) } else { Vec::new() };
    let tb = if rocks_b > 0 { scatter(&mut rng, rocks_b, &rock_at) } else { Vec::new() };
    let bark = material(engine, 0.25, 0.15, 0.08)?;
    let leaves = material(engine, 0.05, 0.19, 0.07)?;
    let stone_a = material(engine, 0.42, 0.39, 0.34)?;
    let stone_b = material(engine, 0.3, 0.32, 0.35)?;
    let grass = material(engine, 0.26, 0.33, 0.14)?;
    let (_, ground) = engine.world.spawn_actor(
        "ground",
        Box::new(StaticMeshComponent::new(StaticMesh::plane())),
        Transform::from_translation_scale(Vec3::ZERO, Vec3::new(extent + 40.0, extent + 40.0, 1.0)),
    )?;
    engine.world.set_material(ground, 0, grass)?;
    let mut ids = vec![spawn_ism(engine, "trees", tree()?, &tt, &[bark, leaves], None, hism)?];
    // Rocks are small: faded out with a dither between 90 and 120 units and
    // culled past 120, as a level would (the fade band: no pop).
    let cull = Some((90.0, 120.0));
    if !ta.is_empty() {
        ids.push(spawn_ism(
            engine,
            "rocks A",
            rock("rock A (boulder)", 11, 10, 7, 0.45, Vec3::new(1.0, 0.85, 0.6))?,
            &ta,
            &[stone_a],
            cull,
            hism,
        )?);
    }
    if !tb.is_empty() {
        ids.push(spawn_ism(
            engine,
            "rocks B",
            rock("rock B (shard)", 23, 6, 4, 0.7, Vec3::new(0.7, 0.6, 1.2))?,
            &tb,
            &[stone_b],
            cull,
            hism,
        )?);
    }
    // From just outside one edge, looking in and down across the forest.
    // The same view at every size: the nearest 100 or so units of the forest.
    let eye = Vec3::new(-30.0, -half - 12.0, 26.0);
    let target = Vec3::new(-5.0, -half + 70.0, 0.0);
    spawn_camera_and_sun(engine, eye, target, extent * 1.6, Vec3::new(0.55, 0.8, -0.75))?;
    Ok(ids)
}

/// Instances in the components (`instances.total`; the visible ones come
/// from the frame's stats, counted by the proxies).
fn instances_total(engine: &Engine, ids: &[ComponentId]) -> anyhow::Result<u64> {
    let mut total = 0;
    for id in ids {
        total += engine.world.component::<InstancedStaticMeshComponent>(*id)?.instance_count() as u64;
    }
    Ok(total)
}

fn run(o: &Options) -> anyhow::Result<()> {
    let mut engine = runner::engine(NAME, &o.common)?;
    let ids = if o.mesh_a.is_some() || o.mesh_b.is_some() {
        two_components(&mut engine, o.mesh_a.unwrap_or(1000), o.mesh_b.unwrap_or(1000))?
    } else {
        forest(&mut engine, o.instances.unwrap_or(100_000), o.hism)?
    };
    runner::run(NAME, &o.common, &mut engine, |engine, _, _| {
        Ok(runner::SampleFigures { instances_total: instances_total(engine, &ids)?, ..Default::default() })
    })
}
