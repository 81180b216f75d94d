//! Particle hot paths at 1,000,000 particles, against the memory-bound floor.
//!
//! (a) tick of a steady-state emitter (spawn + update + kill; acceleration,
//!     colour and size over life), one thread;
//! (b) dynamic-data copy (the end-of-frame snapshot, allocations reused);
//! (c) sprite conversion, sorted back to front, and unsorted;
//! (d) the floor: a bare structure-of-arrays `p += v * dt` over as many
//!     particles, in the same run.
//!
//! Criterion reports distributions; after it, an own timing loop (median of
//! several runs, `std::time::Instant`) prints ns/particle and the tick/floor
//! ratio, and writes `target/bench/particles.json` for `cargo xtask bench`.
//! Under `cargo test` (no `--bench`) each benchmark runs once and the report
//! is skipped. `PROXIMA_BENCH_QUICK=1` (`cargo xtask bench --quick`) shortens
//! criterion's measurement and the report's repetitions.

use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::Criterion;
use glam::{Vec2, Vec3, Vec4};
use particles::*;

const N: usize = 1_000_000;
const DT: f32 = 1.0 / 60.0;

/// An emitter that holds about `N` particles in steady state: lifetimes
/// 1–2 s (mean 1.5 s) at `N / 1.5` spawns per second.
fn steady_state(sort_mode: SortMode) -> ParticleSystemInstance {
    let emitter = EmitterAsset {
        name: "bench".into(),
        required: RequiredModule {
            material: "M_Bench".into(),
            blend_mode: BlendMode::Translucent,
            screen_alignment: ScreenAlignment::FacingCamera,
            sort_mode,
            max_particles: (N as u32) * 13 / 10,
            emitter_duration: 1.0,
            emitter_loops: 0,
        },
        modules: vec![
            Module::Spawn(SpawnModule {
                rate: N as f32 / 1.5,
                bursts: vec![],
            }),
            Module::Lifetime(Distribution::Uniform { min: 1.0, max: 2.0 }),
            Module::InitialLocation(LocationShape::Sphere {
                center: Vec3::ZERO,
                radius: 50.0,
                surface_only: false,
            }),
            Module::InitialVelocity(VelocityShape::Cone {
                direction: Vec3::Z,
                angle: 0.4,
                speed: Distribution::Uniform {
                    min: 300.0,
                    max: 600.0,
                },
            }),
            Module::InitialSize(Distribution::Uniform {
                min: Vec2::splat(2.0),
                max: Vec2::splat(6.0),
            }),
            Module::InitialColor(Distribution::Constant(Vec4::new(1.0, 0.8, 0.6, 1.0))),
            Module::Acceleration(Vec3::new(0.0, 0.0, -980.0)),
            Module::ColorOverLife(Distribution::Curve(vec![
                CurveKey {
                    time: 0.0,
                    value: Vec4::new(1.0, 1.0, 1.0, 0.0),
                },
                CurveKey {
                    time: 0.2,
                    value: Vec4::ONE,
                },
                CurveKey {
                    time: 1.0,
                    value: Vec4::new(0.5, 0.2, 0.1, 0.0),
                },
            ])),
            Module::SizeOverLife(Distribution::Curve(vec![
                CurveKey {
                    time: 0.0,
                    value: Vec2::splat(0.5),
                },
                CurveKey {
                    time: 1.0,
                    value: Vec2::splat(2.0),
                },
            ])),
        ],
    };
    let mut s = ParticleSystemInstance::new(
        Arc::new(ParticleSystem {
            emitters: vec![emitter],
        }),
        1,
    )
    .unwrap();
    s.set_tick_mode(TickMode::Parallel);
    for _ in 0..150 {
        s.tick(DT);
    }
    s.set_tick_mode(TickMode::Serial);
    s
}

/// The floor: positions and velocities as two arrays, `p += v * dt`.
struct Floor {
    p: Vec<Vec3>,
    v: Vec<Vec3>,
}

impl Floor {
    fn new(n: usize) -> Self {
        Floor {
            p: (0..n).map(|i| Vec3::splat(i as f32)).collect(),
            v: (0..n)
                .map(|i| Vec3::new(1.0, (i % 7) as f32, -1.0))
                .collect(),
        }
    }

    #[inline(never)]
    fn step(&mut self, dt: f32) {
        for (p, v) in self.p.iter_mut().zip(&self.v) {
            *p += *v * dt;
        }
    }
}

fn criterion_benches(c: &mut Criterion) {
    let mut system = steady_state(SortMode::DistanceToView);
    let mut floor = Floor::new(N);
    let mut data = system.build_dynamic_data();
    let (mut out, mut scratch) = (Vec::new(), SpriteScratch::default());
    let view = Vec3::new(500.0, -300.0, 200.0);

    let mut g = c.benchmark_group("particles_1M");
    g.bench_function("tick_serial", |b| b.iter(|| system.tick(black_box(DT))));
    g.bench_function("floor_p_plus_v_dt", |b| {
        b.iter(|| floor.step(black_box(DT)))
    });
    g.bench_function("dynamic_data_copy", |b| {
        b.iter(|| system.build_dynamic_data_into(&mut data))
    });
    g.bench_function("sprites_sorted", |b| {
        b.iter(|| build_sprite_vertices_with(&data.emitters[0], view, &mut out, &mut scratch))
    });
    g.finish();
}

/// Median seconds of `runs` calls of `f`.
fn median_secs(runs: usize, mut f: impl FnMut()) -> f64 {
    let mut times: Vec<f64> = (0..runs)
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed().as_secs_f64()
        })
        .collect();
    times.sort_by(f64::total_cmp);
    times[runs / 2]
}

struct Row {
    name: &'static str,
    value: f64,
    unit: &'static str,
    goal: Option<f64>,
}

fn quick() -> bool {
    std::env::var("PROXIMA_BENCH_QUICK").is_ok_and(|v| v == "1")
}

fn report() {
    let runs: usize = if quick() { 5 } else { 15 };
    let mut system = steady_state(SortMode::DistanceToView);
    let mut floor = Floor::new(N);

    // Interleave tick and floor so both see the same machine load.
    let (mut tick_t, mut floor_t, mut live) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..runs {
        live.push(system.live_particles());
        tick_t.push(median_secs(1, || system.tick(DT)));
        floor_t.push(median_secs(1, || floor.step(black_box(DT))));
    }
    let med = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let live_n = live.iter().sum::<usize>() as f64 / live.len() as f64;
    let tick_ns = med(&mut tick_t) * 1e9 / live_n;
    let floor_ns = med(&mut floor_t) * 1e9 / N as f64;

    system.set_tick_mode(TickMode::Parallel);
    let par_ns = median_secs(runs, || system.tick(DT)) * 1e9 / system.live_particles() as f64;
    system.set_tick_mode(TickMode::Serial);

    let mut data = system.build_dynamic_data();
    let n = data.live_particles() as f64;
    let copy_ns = median_secs(runs, || system.build_dynamic_data_into(&mut data)) * 1e9 / n;
    let fresh_ns = median_secs(runs, || drop(black_box(system.build_dynamic_data()))) * 1e9 / n;
    let (mut out, mut scratch) = (Vec::new(), SpriteScratch::default());
    let view = Vec3::new(500.0, -300.0, 200.0);
    let sorted_ns = median_secs(runs, || {
        build_sprite_vertices_with(&data.emitters[0], view, &mut out, &mut scratch)
    }) * 1e9
        / n;
    data.emitters[0].sort_mode = SortMode::None;
    let unsorted_ns = median_secs(runs, || {
        build_sprite_vertices_with(&data.emitters[0], view, &mut out, &mut scratch)
    }) * 1e9
        / n;

    let rows = [
        Row {
            name: "particles.live",
            value: live_n,
            unit: "particles",
            goal: None,
        },
        Row {
            name: "particles.tick_serial",
            value: tick_ns,
            unit: "ns/particle",
            goal: None,
        },
        Row {
            name: "particles.floor_p_plus_v_dt",
            value: floor_ns,
            unit: "ns/particle",
            goal: None,
        },
        Row {
            name: "particles.tick_over_floor",
            value: tick_ns / floor_ns,
            unit: "x",
            goal: Some(3.0),
        },
        Row {
            name: "particles.tick_parallel",
            value: par_ns,
            unit: "ns/particle",
            goal: None,
        },
        Row {
            name: "particles.dynamic_data_copy",
            value: copy_ns,
            unit: "ns/particle",
            goal: None,
        },
        Row {
            name: "particles.dynamic_data_fresh_alloc",
            value: fresh_ns,
            unit: "ns/particle",
            goal: None,
        },
        Row {
            name: "particles.sprites_sorted",
            value: sorted_ns,
            unit: "ns/particle",
            goal: None,
        },
        Row {
            name: "particles.sprites_unsorted",
            value: unsorted_ns,
            unit: "ns/particle",
            goal: None,
        },
    ];

    println!();
    for r in &rows {
        match r.goal {
            Some(goal) => println!(
                "{:<40} {:>9.3} {:<12} goal <= {goal} {}",
                r.name,
                r.value,
                r.unit,
                if r.value <= goal { "MET" } else { "NOT MET" }
            ),
            None => println!("{:<40} {:>9.3} {}", r.name, r.value, r.unit),
        }
    }
    println!(
        "tick/floor = {:.2}x  (tick {:.3} ns/particle, floor {:.3} ns/particle, {} threads available)",
        tick_ns / floor_ns,
        tick_ns,
        floor_ns,
        rayon::current_num_threads()
    );

    let json_rows: Vec<String> = rows
        .iter()
        .map(|r| {
            let (goal, met) = match r.goal {
                Some(g) => (format!("{g}"), format!("{}", r.value <= g)),
                None => ("null".into(), "null".into()),
            };
            format!(
                "    {{\"name\": \"{}\", \"value\": {:.4}, \"unit\": \"{}\", \"goal\": {goal}, \"met\": {met}}}",
                r.name, r.value, r.unit
            )
        })
        .collect();
    let json = format!("{{\"rows\": [\n{}\n]}}\n", json_rows.join(",\n"));
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../target"));
    let dir = target.join("bench");
    match std::fs::create_dir_all(&dir)
        .and_then(|_| std::fs::write(dir.join("particles.json"), &json))
    {
        Ok(()) => println!("wrote {}", dir.join("particles.json").display()),
        Err(e) => eprintln!("could not write {}: {e}", dir.display()),
    }
}

fn main() {
    let benching = std::env::args().any(|a| a == "--bench");
    let mut c = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_millis(if quick() { 500 } else { 2000 }))
        .configure_from_args();
    criterion_benches(&mut c);
    c.final_summary();
    if benching {
        report();
    }
}
