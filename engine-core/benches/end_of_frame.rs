//! End-of-frame updates for 100,000 registered static-mesh components:
//! 1% transform-dirty vs. all transform-dirty. The 1% case must cost under
//! 5% of the all-dirty case: the work is proportional to what changed.
//! The ratio is the median of paired measurements with its range
//! (`test_support::bench::paired`: a 1% update and an all-dirty update back
//! to back). Writes `target/bench/engine-core.json` for `cargo xtask bench`.

use criterion::{criterion_group, Criterion};
use engine_core::*;
use glam::Vec3;
use renderer::{RenderThread, RenderThreadMode};
use rhi_vulkan::{DeviceDesc, Validation};
use std::time::{Duration, Instant};
use test_support::bench::quick;
use test_support::bench::{paired, write_rows, Arm, Row};

const COUNT: usize = 100_000;

fn setup() -> (World, Vec<ComponentId>) {
    let rt = RenderThread::new(&DeviceDesc { validation: Validation::Disabled, ..Default::default() }, RenderThreadMode::Threaded).unwrap();
    let mut world = World::new(Some(rt));
    let mesh = StaticMesh::cube();
    let items: Vec<(Box<dyn Component>, Transform)> = (0..COUNT)
        .map(|i| {
            (
                Box::new(StaticMeshComponent::new(mesh.clone())) as Box<dyn Component>,
                Transform::from_translation(Vec3::new((i % 316) as f32, (i / 316) as f32, 0.0)),
            )
        })
        .collect();
    let ids = world.spawn_actors(items).unwrap();
    world.send_all_end_of_frame_updates().unwrap();
    drain(&mut world);
    (world, ids)
}

/// Lets the render thread apply what was queued (keeps its queue short).
fn drain(world: &mut World) {
    world.render_thread().unwrap().with_context(|ctx| ctx.renderer.update_scene(&ctx.device, &mut ctx.scene).unwrap()).unwrap();
}

fn move_some(world: &mut World, ids: &[ComponentId], every: usize, t: f32) {
    for (i, id) in ids.iter().enumerate().step_by(every) {
        world.set_relative_transform(*id, Transform::from_translation(Vec3::new((i % 316) as f32, (i / 316) as f32, t))).unwrap();
    }
}

/// Dirties every `every`-th component, then times one end-of-frame update (ms).
fn time_update(world: &mut World, ids: &[ComponentId], every: usize, t: f32) -> f64 {
    move_some(world, ids, every, t);
    let start = Instant::now();
    let stats = world.send_all_end_of_frame_updates().unwrap();
    let ms = start.elapsed().as_secs_f64() * 1e3;
    assert_eq!(stats.transforms_sent, ids.len().div_ceil(every));
    drain(world);
    ms
}

fn bench(c: &mut Criterion) {
    let (mut world, ids) = setup();
    let mut group = c.benchmark_group("end_of_frame_100k_components");
    group.sample_size(10).measurement_time(Duration::from_secs(if quick() { 2 } else { 5 }));
    let mut t = 0.0;
    group.bench_function("1_percent_dirty", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                t += 0.01;
                move_some(&mut world, &ids, 100, t);
                let start = Instant::now();
                world.send_all_end_of_frame_updates().unwrap();
                total += start.elapsed();
            }
            drain(&mut world);
            total
        })
    });
    drain(&mut world);
    group.finish();
    // Warm-up of the all-dirty path (criterion ran only the 1% one).
    time_update(&mut world, &ids, 1, 0.005);
    let mut t = 0.0;
    let pairs = paired(if quick() { 5 } else { 11 }, |arm| {
        t += 0.01;
        match arm {
            Arm::Measured => time_update(&mut world, &ids, 100, t),
            Arm::Baseline => time_update(&mut world, &ids, 1, t),
        }
    });
    let (one, all, ratio) = (pairs.measured.median, pairs.baseline.median, pairs.ratio.scaled(100.0));
    println!(
        "engine-core end of frame: 1% dirty {one:.3} ms, all dirty {all:.3} ms, ratio {:.2}% (range {:.2}-{:.2}% over {} pairs; goal <= 5%)",
        ratio.median, ratio.min, ratio.max, ratio.n
    );
    let rows = [
        Row::spread("engine-core: end-of-frame updates, 1% dirty vs all dirty (100k components)", ratio, "%", Some("<= 5")),
        Row::new("engine-core: end-of-frame updates, all 100k dirty", all, "ms", None),
    ];
    let path = write_rows("engine-core", &rows).unwrap();
    println!("wrote {}", path.display());
}

criterion_group!(benches, bench);

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
}
