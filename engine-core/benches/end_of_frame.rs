//! End-of-frame updates for 100,000 registered static-mesh components:
//! 1% transform-dirty vs. all transform-dirty. The 1% case must cost under
//! 5% of the all-dirty case: the work is proportional to what changed.
//! Writes `target/bench/engine-core.json` for `cargo xtask bench`.

use criterion::{criterion_group, Criterion};
use engine_core::*;
use glam::Vec3;
use renderer::{RenderThread, RenderThreadMode};
use rhi_vulkan::{DeviceDesc, Validation};
use std::time::{Duration, Instant};

const COUNT: usize = 100_000;

fn quick() -> bool {
    std::env::var("PROXIMA_BENCH_QUICK").as_deref() == Ok("1")
}

fn setup() -> (World, Vec<ComponentId>) {
    let rt = RenderThread::new(&DeviceDesc { validation: Validation::Disabled, ..Default::default() }, RenderThreadMode::Threaded).unwrap();
    let mut world = World::new(Some(rt));
    let mesh = StaticMesh::cube();
    let items: Vec<(Box<dyn Component>, Transform)> = (0..COUNT)
        .map(|i| (Box::new(StaticMeshComponent::new(mesh.clone())) as Box<dyn Component>, Transform::from_translation(Vec3::new((i % 316) as f32, (i / 316) as f32, 0.0))))
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

fn time_update(world: &mut World, ids: &[ComponentId], every: usize, runs: usize) -> f64 {
    let mut times = Vec::new();
    for r in 0..runs {
        move_some(world, ids, every, r as f32 * 0.01);
        let t = Instant::now();
        let stats = world.send_all_end_of_frame_updates().unwrap();
        times.push(t.elapsed().as_secs_f64() * 1e3);
        assert_eq!(stats.transforms_sent, ids.len().div_ceil(every));
        drain(world);
    }
    times.sort_by(|a, b| a.total_cmp(b));
    times[times.len() / 2]
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
    let runs = if quick() { 5 } else { 11 };
    let one = time_update(&mut world, &ids, 100, runs);
    let all = time_update(&mut world, &ids, 1, runs.min(7));
    let ratio = one / all * 100.0;
    println!("engine-core end of frame: 1% dirty {one:.3} ms, all dirty {all:.3} ms, ratio {ratio:.2}% (goal <= 5%)");
    let json = format!(
        "{{\"rows\": [\n  {{\"name\": \"engine-core: end-of-frame updates, 1% dirty vs all dirty (100k components)\", \"value\": {ratio:.3}, \"unit\": \"%\", \"goal\": \"<= 5\", \"met\": {}}},\n  {{\"name\": \"engine-core: end-of-frame updates, all 100k dirty\", \"value\": {all:.3}, \"unit\": \"ms\", \"goal\": null, \"met\": null}}\n]}}\n",
        ratio <= 5.0
    );
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/bench");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("engine-core.json"), json).unwrap();
}

criterion_group!(benches, bench);

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
}
