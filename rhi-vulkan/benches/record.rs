//! Recording 100,000 draws, each with its own push constant: one thread into
//! the primary vs. two threads into secondaries, timed in pairs
//! (`test_support::bench::paired`). Reports draws/ms for both and their
//! ratio (median of the pairs with its range), and writes them to
//! `target/bench/rhi-vulkan.json` for
//! `cargo xtask bench`. Frames are discarded, not executed: this measures the
//! CPU cost of recording only. A third figure, one thread into one
//! secondary, separates the cost of secondaries from the gain of a thread.
//!
//! The cost of the RHI's checks: 100,000 × (push constants + draw) recorded
//! through `CommandList` vs. the same draws with raw `ash` calls into the
//! same command buffer (the unchecked floor), in alternating blocks within
//! each paired measurement (see [`checks_pair`]); reported as the median
//! ratio of the pairs with its range (goal ≤ 1.1×, judged on the median).

use ash::vk;
use criterion::{criterion_group, criterion_main, Criterion};
use rhi_vulkan::*;
use std::time::{Duration, Instant};
use test_support::bench::quick;
use test_support::bench::{paired, write_rows, Arm, Row, Spread};
use test_support::QuadGrid;

const DRAWS: u32 = 100_000;
/// Recording through `CommandList` vs. raw `ash`: at most this ratio.
const CHECKS_GOAL: f64 = 1.1;

struct Setup {
    device: Device,
    grid: QuadGrid,
    color: TextureHandle,
}

fn setup() -> Setup {
    let device = test_support::bench::device();
    let grid = QuadGrid::new(&device, Format::Rgba8Unorm, 16, 16).unwrap();
    let color = device.create_texture(&TextureDesc::render_target("bench", 256, 256, Format::Rgba8Unorm)).unwrap();
    Setup { device, grid, color }
}

fn push_bytes(i: u32) -> [u8; 16] {
    bytemuck::cast([(i as f32 * 1e-5).to_bits(), 0x3c23d70a, 0, 0])
}

fn record_draws(cmd: &mut CommandList<'_>, grid: &QuadGrid, first: u32, count: u32) {
    grid.record(cmd, Rect::from_size(256, 256), 0, 1, 1).unwrap();
    for i in first..first + count {
        cmd.push_constants(0, &push_bytes(i)).unwrap();
        cmd.draw(6, 1, 0, i % grid.instance_count).unwrap();
    }
}

fn pass(s: &Setup) -> RenderingDesc {
    RenderingDesc {
        color: vec![ColorAttachment { texture: s.color, load: LoadOp::Clear([0.0; 4]), store: true, resolve: None }],
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
    let layout = RenderingLayout { color_formats: vec![Format::Rgba8Unorm], depth_format: None, samples: 1 };
    let half = DRAWS / 2;
    let (a, b) = rayon::join(
        || {
            frame
                .record_secondary(&layout, |cmd| {
                    record_draws(cmd, &s.grid, 0, half);
                    Ok(())
                })
                .unwrap()
                .0
        },
        || {
            frame
                .record_secondary(&layout, |cmd| {
                    record_draws(cmd, &s.grid, half, DRAWS - half);
                    Ok(())
                })
                .unwrap()
                .0
        },
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
    let layout = RenderingLayout { color_formats: vec![Format::Rgba8Unorm], depth_format: None, samples: 1 };
    let a = frame
        .record_secondary(&layout, |cmd| {
            record_draws(cmd, &s.grid, 0, DRAWS);
            Ok(())
        })
        .unwrap()
        .0;
    let cmd = frame.cmd();
    cmd.texture_barrier(s.color, TextureState::Undefined, TextureState::ColorAttachment).unwrap();
    cmd.begin_rendering(&pass(s), RenderingContents::Secondary).unwrap();
    cmd.execute_secondaries(&[a]).unwrap();
    cmd.end_rendering().unwrap();
}

/// Draws per block of the checks' pair.
const BLOCK: u32 = 1_000;

/// [`BLOCK`] × (push constants + draw) through `CommandList`, from draw
/// `first` on; returns the block's time in ns.
fn checked_block(cmd: &mut CommandList<'_>, instances: u32, first: u32) -> f64 {
    let start = Instant::now();
    for i in first..first + BLOCK {
        cmd.push_constants(0, &push_bytes(i)).unwrap();
        cmd.draw(6, 1, 0, i % instances).unwrap();
    }
    start.elapsed().as_secs_f64() * 1e9
}

/// The same block as [`checked_block`] with raw `ash` calls into `raw`, the
/// command buffer of a `CommandList` whose state `checked_block` accepts.
fn raw_block(device: &ash::Device, raw: vk::CommandBuffer, layout: vk::PipelineLayout, instances: u32, first: u32) -> f64 {
    // The layout's push-constant range is visible to vertex and fragment
    // (see `Device::raw_pipeline_layout`).
    let stages = vk::ShaderStageFlags::VERTEX | vk::ShaderStageFlags::FRAGMENT;
    let start = Instant::now();
    for i in first..first + BLOCK {
        // SAFETY: `raw` is a frame's primary, recording, inside an inline
        // pass with the grid's pipeline, viewport, scissor, both streams and
        // all its push constants set through `CommandList` (which accepts
        // the same draws, see the caller); the 16 bytes at 0 lie in the
        // layout's 16-byte push-constant range of exactly these stages;
        // 6 vertices of the 6-corner stream and one of `instances` instances.
        unsafe {
            device.cmd_push_constants(raw, layout, stages, 0, &push_bytes(i));
            device.cmd_draw(raw, 6, 1, 0, i % instances);
        }
    }
    start.elapsed().as_secs_f64() * 1e9
}

/// One paired measurement of the checks' cost: a frame on one thread into
/// the primary, discarded, with pipeline, viewport, scissor, streams and
/// push constants bound once through `CommandList` (untimed); then
/// [`DRAWS`] × (push constants + draw) through `CommandList` and the same
/// [`DRAWS`] with raw `ash` calls, in alternating blocks of [`BLOCK`]
/// (which path goes first alternating too), so both paths see the same
/// machine and the same command-buffer growth. Returns each block pair's
/// (checked ns, raw ns).
fn checks_pair(s: &Setup, layout: vk::PipelineLayout) -> Vec<(f64, f64)> {
    let mut frame = s.device.begin_frame().unwrap();
    let cmd = frame.cmd();
    cmd.texture_barrier(s.color, TextureState::Undefined, TextureState::ColorAttachment).unwrap();
    cmd.begin_rendering(&pass(s), RenderingContents::Inline).unwrap();
    s.grid.record(cmd, Rect::from_size(256, 256), 0, 1, 1).unwrap();
    let (device, raw, n) = (s.device.raw_device(), cmd.raw_handle(), s.grid.instance_count);
    let blocks = (0..DRAWS / BLOCK)
        .map(|b| {
            let first = b * BLOCK;
            if b % 2 == 0 {
                let c = checked_block(cmd, n, first);
                (c, raw_block(device, raw, layout, n, first))
            } else {
                let r = raw_block(device, raw, layout, n, first);
                (checked_block(cmd, n, first), r)
            }
        })
        .collect();
    cmd.end_rendering().unwrap();
    assert_eq!(cmd.draw_count(), DRAWS + 1, "the raw draws bypass the count");
    blocks
}

/// The checks' figures over `pairs` paired measurements: each pair's ratio
/// (checked / raw) is the median of its block ratios, robust to a block that
/// the scheduler interrupts. Returns the ratios' spread and the median ns
/// per push constants + draw of each path.
fn checks_figures(s: &Setup, pairs: usize) -> (Spread, f64, f64) {
    let layout = s.device.raw_pipeline_layout(s.grid.pipeline).unwrap();
    checks_pair(s, layout); // warm-up: pools reach their size
    let (mut ratios, mut checked, mut raw) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..pairs {
        let blocks = checks_pair(s, layout);
        ratios.push(median(blocks.iter().map(|(c, r)| c / r).collect()));
        checked.push(median(blocks.iter().map(|b| b.0).collect()) / f64::from(BLOCK));
        raw.push(median(blocks.iter().map(|b| b.1).collect()) / f64::from(BLOCK));
    }
    (Spread::of(&ratios).expect("at least one pair"), median(checked), median(raw))
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
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

fn bench(c: &mut Criterion) {
    let s = setup();
    let mut group = c.benchmark_group("record_100k_draws");
    group.sample_size(10).measurement_time(Duration::from_secs(if quick() { 2 } else { 6 }));
    group.bench_function("1_thread_primary", |b| b.iter(|| one_thread(&s)));
    group.bench_function("2_threads_secondaries", |b| b.iter(|| two_threads(&s)));
    group.finish();

    let runs = if quick() { 7 } else { 21 };
    // Warm-up: pools and buffers reach their size.
    one_thread(&s);
    two_threads(&s);
    let threads = paired(runs, |arm| {
        let start = Instant::now();
        match arm {
            Arm::Measured => one_thread(&s),
            Arm::Baseline => two_threads(&s),
        }
        start.elapsed().as_secs_f64() * 1e3
    });
    let t1s = median_ms(&s, one_secondary, runs);
    println!("rhi-vulkan record: 1 thread into one secondary {:.0} draws/ms", f64::from(DRAWS) / t1s);
    let (r1, r2) = (f64::from(DRAWS) / threads.measured.median, f64::from(DRAWS) / threads.baseline.median);
    let ratio = threads.ratio;
    println!(
        "rhi-vulkan record: 1 thread {r1:.0} draws/ms, 2 threads {r2:.0} draws/ms, ratio {:.2}x (median of {} pairs, range {:.2}-{:.2})",
        ratio.median, ratio.n, ratio.min, ratio.max
    );

    let pairs = if quick() { 7 } else { 15 };
    let (checks, checked_ns, raw_ns) = checks_figures(&s, pairs);
    println!(
        "rhi-vulkan record: push constants + draw {checked_ns:.1} ns through CommandList, {raw_ns:.1} ns raw ash; \
         ratio {:.3}x (median of {pairs} pairs, range {:.3}-{:.3}; goal <= {CHECKS_GOAL})",
        checks.median, checks.min, checks.max
    );
    let goal = format!("<= {CHECKS_GOAL}");
    let rows = [
        Row::new("rhi-vulkan: draws/ms recorded, 1 thread (primary)", r1, "draws/ms", None),
        Row::new("rhi-vulkan: draws/ms recorded, 2 threads (secondaries)", r2, "draws/ms", None),
        Row::new("rhi-vulkan: draws/ms recorded, 1 thread (one secondary)", f64::from(DRAWS) / t1s, "draws/ms", None),
        Row::spread("rhi-vulkan: recording speed-up, 2 threads vs 1", ratio, "x", None),
        Row::spread("rhi-vulkan: cost of the checks, 100k push constants + draws through CommandList vs raw ash", checks, "x", Some(&goal)),
        Row::new("rhi-vulkan: push constants + draw recorded through CommandList", checked_ns, "ns", None),
        Row::new("rhi-vulkan: push constants + draw recorded with raw ash (unchecked floor)", raw_ns, "ns", None),
    ];
    let path = write_rows("rhi-vulkan", &rows).unwrap();
    println!("wrote {}", path.display());
}

criterion_group!(benches, bench);
criterion_main!(benches);
