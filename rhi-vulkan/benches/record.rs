//! Recording 100,000 draws, each with its own push constant: one thread into
//! the primary vs. two threads into secondaries. Reports draws/ms for both
//! and their ratio, and writes them to `target/bench/rhi-vulkan.json` for
//! `cargo xtask bench`. Frames are discarded, not executed: this measures the
//! CPU cost of recording only. A third figure, one thread into one
//! secondary, separates the cost of secondaries from the gain of a thread.

use criterion::{criterion_group, Criterion};
use rhi_vulkan::*;
use std::time::{Duration, Instant};

const DRAWS: u32 = 100_000;

struct Setup {
    device: Device,
    grid: QuadGrid,
    color: TextureHandle,
}

fn setup() -> Setup {
    let device = Device::new(&DeviceDesc { validation: Validation::Disabled, ..Default::default() }).unwrap();
    let grid = QuadGrid::new(&device, Format::Rgba8Unorm, 16, 16).unwrap();
    let color = device.create_texture(&TextureDesc::render_target("bench", 256, 256, Format::Rgba8Unorm)).unwrap();
    Setup { device, grid, color }
}

fn record_draws(cmd: &mut CommandList<'_>, grid: &QuadGrid, first: u32, count: u32) {
    grid.record(cmd, Rect::from_size(256, 256), 0, 1, 1).unwrap();
    for i in first..first + count {
        let push = [(i as f32 * 1e-5).to_bits(), 0x3c23d70a, 0, 0];
        let bytes: [u8; 16] = bytemuck::cast(push);
        cmd.push_constants(0, &bytes).unwrap();
        cmd.draw(6, 1, 0, i % grid.instance_count).unwrap();
    }
}

fn pass(s: &Setup) -> RenderingDesc {
    RenderingDesc {
        color: vec![ColorAttachment { texture: s.color, load: LoadOp::Clear([0.0; 4]), store: true }],
        depth: None,
        area: Rect::from_size(256, 256),
    }
}

/// One frame recorded on one thread into the primary, then discarded.
fn one_thread(s: &Setup) {
    let mut frame = s.device.begin_frame().unwrap();
    let cmd = frame.cmd();
    cmd.texture_barrier(s.color, TextureState::Undefined, TextureState::ColorAttachment).unwrap();
    cmd.begin_rendering(&pass(s), RenderingContents::Inline).unwrap();
    record_draws(cmd, &s.grid, 0, DRAWS);
    cmd.end_rendering().unwrap();
    assert_eq!(cmd.draw_count(), DRAWS + 1);
}

/// One frame recorded by two threads into secondaries, then discarded.
fn two_threads(s: &Setup) {
    let mut frame = s.device.begin_frame().unwrap();
    let layout = RenderingLayout { color_formats: vec![Format::Rgba8Unorm], depth_format: None };
    let half = DRAWS / 2;
    let (a, b) = rayon::join(
        || frame.record_secondary(&layout, |cmd| {
            record_draws(cmd, &s.grid, 0, half);
            Ok(())
        }).unwrap().0,
        || frame.record_secondary(&layout, |cmd| {
            record_draws(cmd, &s.grid, half, DRAWS - half);
            Ok(())
        }).unwrap().0,
    );
    let cmd = frame.cmd();
    cmd.texture_barrier(s.color, TextureState::Undefined, TextureState::ColorAttachment).unwrap();
    cmd.begin_rendering(&pass(s), RenderingContents::Secondary).unwrap();
    cmd.execute_secondaries(&[a, b]).unwrap();
    cmd.end_rendering().unwrap();
    assert_eq!(cmd.draw_count(), DRAWS + 2);
}

/// One frame recorded by one thread into one secondary (isolates the cost
/// of secondaries from the gain of a second thread).
fn one_secondary(s: &Setup) {
    let mut frame = s.device.begin_frame().unwrap();
    let layout = RenderingLayout { color_formats: vec![Format::Rgba8Unorm], depth_format: None };
    let a = frame.record_secondary(&layout, |cmd| {
            record_draws(cmd, &s.grid, 0, DRAWS);
            Ok(())
        }).unwrap().0;
    let cmd = frame.cmd();
    cmd.texture_barrier(s.color, TextureState::Undefined, TextureState::ColorAttachment).unwrap();
    cmd.begin_rendering(&pass(s), RenderingContents::Secondary).unwrap();
    cmd.execute_secondaries(&[a]).unwrap();
    cmd.end_rendering().unwrap();
}

fn median_ms(s: &Setup, f: fn(&Setup), runs: usize) -> f64 {
    f(s); // warm-up: pools and buffers reach their size
    let mut t: Vec<f64> = (0..runs)
        .map(|_| {
            let start = Instant::now();
            f(s);
            start.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    t.sort_by(|a, b| a.total_cmp(b));
    t[t.len() / 2]
}

fn quick() -> bool {
    std::env::var("PROXIMA_BENCH_QUICK").as_deref() == Ok("1")
}

fn bench(c: &mut Criterion) {
    let s = setup();
    let mut group = c.benchmark_group("record_100k_draws");
    group.sample_size(10).measurement_time(Duration::from_secs(if quick() { 2 } else { 6 }));
    group.bench_function("1_thread_primary", |b| b.iter(|| one_thread(&s)));
    group.bench_function("2_threads_secondaries", |b| b.iter(|| two_threads(&s)));
    group.finish();

    let runs = if quick() { 7 } else { 21 };
    let t1 = median_ms(&s, one_thread, runs);
    let t2 = median_ms(&s, two_threads, runs);
    let t1s = median_ms(&s, one_secondary, runs);
    println!("rhi-vulkan record: 1 thread into one secondary {:.0} draws/ms", f64::from(DRAWS) / t1s);
    let (r1, r2) = (f64::from(DRAWS) / t1, f64::from(DRAWS) / t2);
    let ratio = t1 / t2;
    println!("rhi-vulkan record: 1 thread {r1:.0} draws/ms, 2 threads {r2:.0} draws/ms, ratio {ratio:.2}x (same run)");
    let rows = format!(
        "{{\"rows\": [\n  {{\"name\": \"rhi-vulkan: draws/ms recorded, 1 thread (primary)\", \"value\": {r1:.1}, \"unit\": \"draws/ms\", \"goal\": null, \"met\": null}},\n  {{\"name\": \"rhi-vulkan: draws/ms recorded, 2 threads (secondaries)\", \"value\": {r2:.1}, \"unit\": \"draws/ms\", \"goal\": null, \"met\": null}},\n  {{\"name\": \"rhi-vulkan: draws/ms recorded, 1 thread (one secondary)\", \"value\": {:.1}, \"unit\": \"draws/ms\", \"goal\": null, \"met\": null}},\n  {{\"name\": \"rhi-vulkan: recording speed-up, 2 threads vs 1\", \"value\": {ratio:.3}, \"unit\": \"x\", \"goal\": null, \"met\": null}}\n]}}\n",
        f64::from(DRAWS) / t1s,
    );
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/bench");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("rhi-vulkan.json"), rows).unwrap();
}

criterion_group!(benches, bench);

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
}
