//! The per-frame section update against the cost of merely copying its
//! bytes, and section creation throughput.
//!
//! - `update_1m`: `update_mesh_section` of a 1,000,000-vertex section with
//!   new positions and normals (checks, bounds, in-place write), against
//!   `copy_1m`: `copy_from_slice` of the same positions and normals into
//!   plain arrays, the least any update could cost. Goal: at most 3x.
//! - `create_1m`: `create_mesh_section` of a 1000 x 1000 grid (positions,
//!   normals, 2 triangles per cell), in vertices per second.
//!
//! After criterion, both are timed again with a plain `Instant` loop, the
//! update and the copy back to back in each pair
//! (`test_support::bench::paired`; the ratio is the median of the pairs'
//! ratios, with its range), and written to `target/bench/procmesh.json`.
//! `PROXIMA_BENCH_QUICK=1` shortens everything.

use std::hint::black_box;
use std::time::{Duration, Instant};
use test_support::bench::quick;

use criterion::{Criterion, Throughput};
use glam::Vec3;
use procmesh::{ProcMeshData, SectionData};
use test_support::bench::{paired, write_rows, Arm, Row};

const SIDE: usize = 1000;
const VERTICES: usize = SIDE * SIDE;

struct Grid {
    positions: [Vec<Vec3>; 2],
    normals: [Vec<Vec3>; 2],
    triangles: Vec<u32>,
}

fn grid() -> Grid {
    let heights = |phase: f32| -> Vec<Vec3> {
        (0..VERTICES)
            .map(|i| {
                let (x, y) = ((i % SIDE) as f32, (i / SIDE) as f32);
                Vec3::new(x, y, (x * 0.05 + phase).sin() * (y * 0.03).cos())
            })
            .collect()
    };
    let normals = |tilt: f32| vec![Vec3::new(tilt, 0.0, 1.0).normalize(); VERTICES];
    let mut triangles = Vec::with_capacity((SIDE - 1) * (SIDE - 1) * 6);
    for y in 0..SIDE - 1 {
        for x in 0..SIDE - 1 {
            let i = (y * SIDE + x) as u32;
            let s = SIDE as u32;
            triangles.extend_from_slice(&[i, i + 1, i + s + 1, i, i + s + 1, i + s]);
        }
    }
    Grid { positions: [heights(0.0), heights(1.0)], normals: [normals(0.0), normals(0.1)], triangles }
}

fn mesh_with_grid(grid: &Grid) -> ProcMeshData {
    let mut mesh = ProcMeshData::new();
    let data = SectionData::new(&grid.positions[0], &grid.triangles).normals(&grid.normals[0]);
    mesh.create_mesh_section(0, data, false).expect("valid grid");
    mesh
}

/// One update, alternating between the two position/normal sets.
fn update(mesh: &mut ProcMeshData, grid: &Grid, frame: &mut usize) {
    *frame ^= 1;
    let data = SectionData::positions(&grid.positions[*frame]).normals(&grid.normals[*frame]);
    black_box(mesh.update_mesh_section(0, data).expect("same count"));
}

fn copy(dst: &mut (Vec<Vec3>, Vec<Vec3>), grid: &Grid, frame: &mut usize) {
    *frame ^= 1;
    dst.0.copy_from_slice(&grid.positions[*frame]);
    dst.1.copy_from_slice(&grid.normals[*frame]);
    black_box(dst);
}

fn create(mesh: &mut ProcMeshData, grid: &Grid) {
    let data = SectionData::new(&grid.positions[0], &grid.triangles).normals(&grid.normals[0]);
    black_box(mesh.create_mesh_section(0, data, false).expect("valid grid"));
}

fn criterion_benches(c: &mut Criterion, grid: &Grid) {
    let mut group = c.benchmark_group("section_update");
    group.throughput(Throughput::Elements(VERTICES as u64));
    let mut mesh = mesh_with_grid(grid);
    let mut frame = 0;
    group.bench_function("update_1m", |b| b.iter(|| update(&mut mesh, grid, &mut frame)));
    let mut dst = (vec![Vec3::ZERO; VERTICES], vec![Vec3::ZERO; VERTICES]);
    group.bench_function("copy_1m", |b| b.iter(|| copy(&mut dst, grid, &mut frame)));
    group.bench_function("create_1m", |b| b.iter(|| create(&mut mesh, grid)));
    group.finish();
}

/// The median of `runs` timings of `f`, after one warm-up call.
fn median(runs: usize, mut f: impl FnMut()) -> Duration {
    f();
    let mut times: Vec<Duration> = (0..runs)
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed()
        })
        .collect();
    times.sort();
    times[runs / 2]
}

fn own_measurements(grid: &Grid) {
    let runs = if quick() { 7 } else { 15 };
    let mut mesh = mesh_with_grid(grid);
    let mut frame = 0;
    let mut dst = (vec![Vec3::ZERO; VERTICES], vec![Vec3::ZERO; VERTICES]);
    // Warm-up, then pairs: both sides see the same machine load.
    update(&mut mesh, grid, &mut frame);
    copy(&mut dst, grid, &mut frame);
    let pairs = paired(runs, |arm| {
        let start = Instant::now();
        match arm {
            Arm::Measured => update(&mut mesh, grid, &mut frame),
            Arm::Baseline => copy(&mut dst, grid, &mut frame),
        }
        start.elapsed().as_secs_f64() * 1e3
    });
    let (update_ms, copy_ms, ratio) = (pairs.measured.median, pairs.baseline.median, pairs.ratio);
    let create = median(if quick() { 3 } else { 7 }, || create(&mut mesh, grid));
    let create_rate = VERTICES as f64 / create.as_secs_f64();
    println!(
        "update 1M (positions + normals): {update_ms:.3} ms; plain copy: {copy_ms:.3} ms; \
         ratio {:.2}x (range {:.2}-{:.2} over {} pairs; goal <= 3); create: {:.1} M vertices/s",
        ratio.median,
        ratio.min,
        ratio.max,
        ratio.n,
        create_rate / 1e6
    );
    let rows = [
        Row::new("procmesh: update_mesh_section, 1M vertices (positions + normals)", update_ms, "ms", None),
        Row::new("procmesh: plain copy of the same 1M vertices", copy_ms, "ms", None),
        Row::spread("procmesh: update 1M vertices vs plain copy", ratio, "x", Some("<= 3")),
        Row::new("procmesh: create_mesh_section throughput", create_rate, "vertices/s", None),
    ];
    match write_rows("procmesh", &rows) {
        Ok(path) => println!("wrote {}", path.display()),
        Err(e) => eprintln!("could not write procmesh.json: {e}"),
    }
}

fn main() {
    let grid = grid();
    let mut c = Criterion::default().configure_from_args();
    c = if quick() {
        c.sample_size(10).warm_up_time(Duration::from_millis(200)).measurement_time(Duration::from_secs(1))
    } else {
        c.sample_size(20).warm_up_time(Duration::from_millis(500)).measurement_time(Duration::from_secs(3))
    };
    criterion_benches(&mut c, &grid);
    c.final_summary();
    // `cargo test --benches` runs this binary without `--bench`: check it
    // runs, skip the timings.
    if std::env::args().any(|a| a == "--bench") {
        own_measurements(&grid);
    }
}
