//! Occlusion culling (issue 18), CPU only: frames prepared (cull, occlusion,
//! gather, sort, merge; no GPU work) with `r.AllowOcclusionQueries` on and
//! off, on two scenes:
//!
//! - **city**: the many-cubes sample's `--layout city` built on the scene
//!   directly — 10 × 10 blocks, each a tall opaque building (a scaled cube),
//!   and 20,000 small cubes along the streets, seen from street level at a
//!   1280x720 view (the camera of the sample and two more points);
//! - **grid**: the frame-prep bench's 160,000 cubes seen from above, where
//!   nothing is hidden (what occlusion costs when it finds nothing).
//!
//! Rows: base-pass instances drawn on vs off (goal: at least 30% fewer in
//! the city), frame preparation on vs off (paired, back to back), and the
//! occlusion stage's own time (building the occlusion buffer + testing the
//! visible primitives). Writes `target/bench/renderer-occlusion.json` for
//! `cargo xtask bench`.

use criterion::{criterion_group, criterion_main, Criterion};
use glam::{Mat4, Quat, Vec3, Vec4};
use renderer::*;
use rhi_vulkan::Rect;
use std::time::{Duration, Instant};
use test_support::bench::{paired, quick, write_rows, Arm, GridScene, Row, Spread};

const W: u32 = 1280;
const H: u32 = 720;
const BLOCKS: u32 = 10;
const BLOCK: f32 = 24.0;
const STREET: f32 = 10.0;
const CUBES: u32 = 20_000;

struct City {
    device: rhi_vulkan::Device,
    scene: Scene,
    renderer: SceneRenderer,
}

/// The city of many-cubes' `--layout city` (same sizes and counts; its own
/// random placement).
fn city() -> City {
    let device = test_support::bench::device();
    let mut scene = Scene::default();
    for m in 0..4u32 {
        let t = m as f32 / 4.0;
        scene.set_material(MaterialId(m + 1), Material::colored(Vec4::new(0.9 - 0.5 * t, 0.3 + 0.5 * t, 0.25, 1.0))).unwrap();
    }
    let mesh = StaticMeshRenderData::new(vec![shapes::cube(1.0)]).unwrap();
    let add = |scene: &mut Scene, m: Mat4, material: u32| {
        scene.add_primitive(PrimitiveId::new(), Box::new(StaticMeshSceneProxy::new(mesh.clone(), vec![MaterialId(material)])), m).unwrap();
    };
    let pitch = BLOCK + STREET;
    let size = BLOCKS as f32 * pitch;
    let mut rng = Rng::new(18);
    for b in 0..BLOCKS * BLOCKS {
        let (i, j) = ((b % BLOCKS) as f32, (b / BLOCKS) as f32);
        let h = rng.range_f32(12.0, 42.0);
        let m = Mat4::from_scale_rotation_translation(
            Vec3::new(BLOCK, BLOCK, h),
            Quat::IDENTITY,
            Vec3::new((i + 0.5) * pitch, (j + 0.5) * pitch, h / 2.0),
        );
        add(&mut scene, m, 1);
    }
    for k in 0..CUBES {
        let street = rng.below(BLOCKS as usize + 1) as f32 * pitch + rng.range_f32(-0.5, 0.5) * (STREET - 2.0);
        let along = rng.range_f32(0.0, size);
        let edge = rng.range_f32(0.6, 1.2);
        let (x, y) = if rng.next_u32().is_multiple_of(2) { (street, along) } else { (along, street) };
        let m = Mat4::from_scale_rotation_translation(
            Vec3::splat(edge),
            Quat::from_rotation_z(rng.range_f32(0.0, 1.5)),
            Vec3::new(x, y, edge / 2.0),
        );
        add(&mut scene, m, k % 4 + 1);
    }
    let mut renderer = SceneRenderer::new(&device);
    renderer.update_scene(&device, &mut scene).unwrap();
    City { device, scene, renderer }
}

/// Street-level views of the city: the sample's camera, one across a
/// crossing, one down an east-west street.
fn city_views() -> Vec<(&'static str, ViewFamily)> {
    let pitch = BLOCK + STREET;
    let size = BLOCKS as f32 * pitch;
    let view = |eye: Vec3, target: Vec3| {
        let v = SceneView::perspective(eye, target, Vec3::Z, 1.0, 0.1, size * 1.5, Rect::from_size(W, H)).unwrap();
        ViewFamily::new(W, H, vec![v])
    };
    vec![
        ("sample camera", view(Vec3::new(4.0 * pitch, 2.0, 1.7), Vec3::new(4.0 * pitch + 12.0, size * 0.6, 2.5))),
        ("crossing", view(Vec3::new(5.0 * pitch, 5.0 * pitch, 1.7), Vec3::new(size, size * 0.8, 1.7))),
        ("east-west street", view(Vec3::new(1.0, 3.0 * pitch + 2.0, 1.7), Vec3::new(size, 3.0 * pitch - 4.0, 2.0))),
    ]
}

fn cvars(occlusion: bool) -> ConsoleVariables {
    let mut c = ConsoleVariables::default();
    c.set(cvars::SHADOW_ENABLE, "0").unwrap();
    c.set(cvars::ALLOW_OCCLUSION_QUERIES, if occlusion { "1" } else { "0" }).unwrap();
    c
}

/// One prepared frame: (ms, base-pass instances, occluded primitives, occlusion stage ms).
fn prepare(
    device: &rhi_vulkan::Device,
    renderer: &mut SceneRenderer,
    scene: &Scene,
    family: &ViewFamily,
    c: &ConsoleVariables,
) -> (f64, u64, u64, f64) {
    let t = Instant::now();
    let p = renderer.prepare(device, scene, c, family).unwrap();
    let ms = t.elapsed().as_secs_f64() * 1e3;
    (ms, p.pass_instances(MeshPass::Base), p.occluded_primitives(), p.occlusion_ms())
}

fn bench(crit: &mut Criterion) {
    let _pool = renderer::render_worker_pool();
    let (on, off) = (cvars(true), cvars(false));
    let mut city = city();
    let views = city_views();
    let mut group = crit.benchmark_group("occlusion_city");
    group.sample_size(10).measurement_time(Duration::from_secs(if quick() { 2 } else { 5 }));
    let family = views[0].1.clone();
    let City { device, scene, renderer } = &mut city;
    group.bench_function("prepare_on", |b| b.iter(|| prepare(device, renderer, scene, &family, &on)));
    group.bench_function("prepare_off", |b| b.iter(|| prepare(device, renderer, scene, &family, &off)));
    group.finish();

    let pairs = if quick() { 5 } else { 9 };
    let mut rows = Vec::new();
    let mut fewer = Vec::new();
    for (name, family) in &views {
        let (_, drawn_on, occluded, _) = prepare(device, renderer, scene, family, &on);
        let (_, drawn_off, _, _) = prepare(device, renderer, scene, family, &off);
        let share = 100.0 * (1.0 - drawn_on as f64 / drawn_off.max(1) as f64);
        fewer.push(share);
        println!("city, {name}: base-pass instances {drawn_on} with occlusion vs {drawn_off} without ({share:.1}% fewer; {occluded} primitives occluded)");
        let prep = paired(pairs, |arm| prepare(device, renderer, scene, family, if arm == Arm::Measured { &on } else { &off }).0);
        let stage = Spread::of(&(0..pairs).map(|_| prepare(device, renderer, scene, family, &on).3).collect::<Vec<_>>()).unwrap();
        println!(
            "city, {name}: frame prep on {:.2} ms vs off {:.2} ms ({:.2}x); occlusion stage {:.3} ms",
            prep.measured.median, prep.baseline.median, prep.ratio.median, stage.median
        );
        rows.push(Row::new(
            format!("renderer: occlusion, city ({name}): base-pass instances drawn, on"),
            drawn_on as f64,
            "instances",
            None,
        ));
        rows.push(Row::new(
            format!("renderer: occlusion, city ({name}): base-pass instances drawn, off"),
            drawn_off as f64,
            "instances",
            None,
        ));
        rows.push(Row::spread(format!("renderer: occlusion, city ({name}): frame prep on vs off"), prep.ratio, "x", None));
        rows.push(Row::spread(format!("renderer: occlusion, city ({name}): occlusion stage (build + test)"), stage, "ms", None));
    }
    let least = fewer.iter().copied().fold(f64::INFINITY, f64::min);
    rows.push(Row::new(
        "renderer: occlusion, city: fewer base-pass instances with occlusion on (least of 3 views)",
        least,
        "%",
        Some(">= 30"),
    ));

    // Where nothing is hidden: the frame-prep bench's grid from above.
    let mut grid = GridScene::new(Scene::default(), 400, |i| MaterialId((i % 4) as u32 + 1), W, H);
    let GridScene { device, scene, renderer, family } = &mut grid;
    let (_, drawn, occluded, _) = prepare(device, renderer, scene, family, &on);
    let prep = paired(pairs, |arm| prepare(device, renderer, scene, family, if arm == Arm::Measured { &on } else { &off }).0);
    let stage = Spread::of(&(0..pairs).map(|_| prepare(device, renderer, scene, family, &on).3).collect::<Vec<_>>()).unwrap();
    println!(
        "grid (160k cubes, {drawn} drawn, {occluded} occluded): frame prep on {:.2} ms vs off {:.2} ms ({:.3}x); occlusion stage {:.3} ms",
        prep.measured.median, prep.baseline.median, prep.ratio.median, stage.median
    );
    rows.push(Row::spread(
        "renderer: occlusion, 160k-cube grid seen from above (nothing hidden): frame prep on vs off",
        prep.ratio,
        "x",
        Some("<= 1.05"),
    ));
    rows.push(Row::spread("renderer: occlusion, 160k-cube grid: occlusion stage", stage, "ms", None));
    let path = write_rows("renderer-occlusion", &rows).unwrap();
    println!("wrote {}", path.display());
}

criterion_group!(benches, bench);
criterion_main!(benches);
