//! Frame preparation at the scale of Bevy's many_cubes: 160,000 static cubes
//! of one mesh over 8 materials, one 1280x720 view, CPU only.
//!
//! The scene of the issue has no light, so the main figures have no shadow
//! view; the same preparation with a shadow-casting sun (a second view to
//! cull and a shadow pass) is reported beside them.
//!
//! - cull + gather + sort + merge on the cached path vs. the same scene
//!   forced through the dynamic path (`r.MeshDrawCommands.ForceDynamicPath`),
//!   reported as a ratio (goal ≥ 10×) and ns per primitive (goal ≤ 20);
//! - pass setup + recording with 2 threads vs. 1 (frames recorded, then
//!   discarded: no GPU execution), goal ≥ 1.5× (the issue's);
//! - culling (`init_views`, 2 threads) vs. its floor: the same primitives'
//!   bounding spheres and flags in two plain arrays, one frustum test each,
//!   visible indices gathered per chunk on 2 threads — the least a
//!   structure-of-arrays cull can do — through a view that sees about 6%
//!   of the grid (as the peer-scale scene's camera sees 7% of its sphere),
//!   goal ≤ 2×;
//! - draws after merge per pass;
//! - the cost of profiler spans: a discarded frame's CPU time with the
//!   Chrome-trace recorder on vs off (`renderer::trace`; spans at every
//!   stage and worker task), goal <= 1.02x. Stage timing itself is always
//!   on (two clock reads per stage) and the `profiling` backends are
//!   compiled out, as by default.
//!
//! Both ratios are the median of paired measurements with their range
//! (`test_support::bench::paired`: the two sides back to back); so is the
//! cached path's ns per primitive (its range over the same pairs).
//! Writes `target/bench/renderer.json` for `cargo xtask bench`.

use criterion::{criterion_group, criterion_main, Criterion};
use glam::{Vec3, Vec4};
use renderer::*;
use rhi_vulkan::Rect;
use std::time::{Duration, Instant};
use test_support::bench::quick;
use test_support::bench::{paired, write_rows, Arm, GridScene, Row};

const SIDE: usize = 400; // 400 x 400 = 160,000
const MATERIALS: usize = 8;
const W: u32 = 1280;
const H: u32 = 720;

type Setup = GridScene;

fn setup() -> Setup {
    let mut scene = Scene::default();
    for m in 0..MATERIALS {
        let t = m as f32 / MATERIALS as f32;
        scene.set_material(MaterialId(m as u32 + 1), Material::colored(Vec4::new(t, 1.0 - t, 0.5, 1.0))).unwrap();
    }
    scene
        .set_light(
            LightId(1),
            Light::Directional(DirectionalLight {
                direction: Vec3::new(-0.4, -0.3, -1.0),
                color: Vec3::ONE,
                intensity: 2.0,
                cast_shadows: true,
                ..Default::default()
            }),
        )
        .unwrap();
    GridScene::new(scene, SIDE, |i| MaterialId((i % MATERIALS) as u32 + 1), W, H)
}

fn cvars(force_dynamic: bool, parallel: bool) -> ConsoleVariables {
    let mut c = ConsoleVariables::default();
    // The scene has no light: no shadow view (measured separately below).
    c.set(cvars::SHADOW_ENABLE, "0").unwrap();
    // Occlusion culling has rows of its own (renderer/benches/occlusion.rs);
    // these figures are the rest of the frame, as they were measured before it.
    c.set(cvars::ALLOW_OCCLUSION_QUERIES, "0").unwrap();
    c.set(cvars::FORCE_DYNAMIC_PATH, if force_dynamic { "1" } else { "0" }).unwrap();
    c.set(cvars::PARALLEL_PASS_SETUP, if parallel { "1" } else { "0" }).unwrap();
    c.set(cvars::PARALLEL_RECORD, if parallel { "1" } else { "0" }).unwrap();
    c
}

fn prepare(s: &mut Setup, c: &ConsoleVariables) -> (u64, Vec<(MeshPass, u64, u64)>) {
    let p = s.renderer.prepare(&s.device, &s.scene, c, &s.family).unwrap();
    // PROXIMA_BENCH_STAGES=1 prints where the time goes.
    if std::env::var("PROXIMA_BENCH_STAGES").is_ok() {
        println!("stages ms (cull, dynamic, setup): {:?}", p.stage_ms());
    }
    (p.visible_primitives(), p.pass_summary())
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

fn time_prepare(s: &mut Setup, c: &ConsoleVariables, runs: usize) -> f64 {
    prepare(s, c);
    median(
        (0..runs)
            .map(|_| {
                let t = Instant::now();
                prepare(s, c);
                t.elapsed().as_secs_f64() * 1e3
            })
            .collect(),
    )
}

/// One prepare, in ms.
fn prepare_ms(s: &mut Setup, c: &ConsoleVariables) -> f64 {
    let t = Instant::now();
    prepare(s, c);
    t.elapsed().as_secs_f64() * 1e3
}

/// Wall time of a discarded frame (all CPU stages, no GPU work), in ms,
/// with the trace recorder on or off: the fastest of 5 frames (a frame is
/// a few ms, so one frame's time is mostly the machine's noise).
fn frame_cpu_ms(s: &mut Setup, c: &ConsoleVariables, traced: bool) -> f64 {
    let request = FrameRequest { family: s.family.clone(), read_back: false, execute: false };
    let mut fastest = f64::INFINITY;
    for _ in 0..5 {
        if traced {
            renderer::trace::start();
        }
        let t = Instant::now();
        s.renderer.render(&s.device, &mut s.scene, c, &request).unwrap();
        fastest = fastest.min(t.elapsed().as_secs_f64() * 1e3);
        if traced {
            let trace = renderer::trace::stop();
            assert!(trace.events.len() >= Stage::COUNT, "every stage leaves a span");
        }
    }
    fastest
}

/// Spans a traced discarded frame records, and ns per recorded span (the
/// fastest of 5 runs of 100,000 spans on this thread).
fn span_cost(s: &mut Setup, c: &ConsoleVariables) -> (usize, f64) {
    let request = FrameRequest { family: s.family.clone(), read_back: false, execute: false };
    renderer::trace::start();
    s.renderer.render(&s.device, &mut s.scene, c, &request).unwrap();
    let spans = renderer::trace::stop().events.len();
    let n = 100_000;
    let ns = (0..5)
        .map(|_| {
            renderer::trace::start();
            let t = Instant::now();
            for _ in 0..n {
                let _span = renderer::trace::Span::new("task", "bench");
            }
            let ns = t.elapsed().as_secs_f64() * 1e9 / n as f64;
            assert_eq!(renderer::trace::stop().events.len(), n);
            ns
        })
        .fold(f64::INFINITY, f64::min);
    (spans, ns)
}

/// Pass setup + recording of a discarded frame, from the frame's own
/// timings: the fastest of 5 frames (about 1 ms each, where one frame
/// often loses a millisecond to the VM's steal or a late wake-up).
fn setup_and_record_ms(s: &mut Setup, c: &ConsoleVariables) -> f64 {
    let request = FrameRequest { family: s.family.clone(), read_back: false, execute: false };
    (0..5)
        .map(|_| {
            let (stats, _) = s.renderer.render(&s.device, &mut s.scene, c, &request).unwrap();
            stats.timings.pass_setup + stats.timings.record
        })
        .fold(f64::INFINITY, f64::min)
}

/// The bench grid's bounding spheres and flags as plain arrays (cube of
/// size 1 scaled 0.6: radius 0.3·√3), for [`culling_floor_ms`].
fn grid_arrays() -> (Vec<Vec4>, Vec<u32>) {
    let spheres = (0..SIDE * SIDE)
        .map(|i| {
            let (x, y) = ((i % SIDE) as f32 - SIDE as f32 / 2.0, (i / SIDE) as f32 - SIDE as f32 / 2.0);
            Vec4::new(x, y, 0.0, 0.3 * 3f32.sqrt())
        })
        .collect();
    (spheres, vec![1u32; SIDE * SIDE])
}

/// The culling floor over `spheres`/`flags`: per chunk of 4,096 (as
/// `init_views`), flags checked and the sphere tested against the six
/// planes; the chunks' visible indices concatenated. The fastest of 5.
fn culling_floor_ms(spheres: &[Vec4], flags: &[u32], frustum: &Frustum) -> (f64, usize) {
    use rayon::prelude::*;
    let mut best = (f64::INFINITY, 0);
    for _ in 0..5 {
        let t = Instant::now();
        let chunks: Vec<Vec<u32>> = spheres
            .par_chunks(4096)
            .zip(flags.par_chunks(4096))
            .enumerate()
            .map(|(c, (s, f))| {
                let mut out = Vec::new();
                for (i, (s, f)) in s.iter().zip(f).enumerate() {
                    if *f & 1 != 0 && frustum.intersects_sphere(s.truncate(), s.w) {
                        out.push((c * 4096 + i) as u32);
                    }
                }
                out
            })
            .collect();
        let visible: Vec<u32> = chunks.concat();
        let ms = t.elapsed().as_secs_f64() * 1e3;
        if ms < best.0 {
            best = (ms, visible.len());
        }
    }
    best
}

/// A view of the grid that sees about 6% of it.
fn sparse_family() -> ViewFamily {
    let view = SceneView::perspective(Vec3::new(0.0, -10.0, 300.0), Vec3::ZERO, Vec3::Y, 0.3, 1.0, 2000.0, Rect::from_size(W, H)).unwrap();
    ViewFamily::new(W, H, vec![view])
}

/// `init_views`' time on the sparse view (from the prepared frame's own stage timing).
fn cull_ms(s: &mut Setup, c: &ConsoleVariables) -> f64 {
    let family = std::mem::replace(&mut s.family, sparse_family());
    let p = s.renderer.prepare(&s.device, &s.scene, c, &s.family).unwrap();
    s.family = family;
    p.stage_ms()[0]
}

fn bench(crit: &mut Criterion) {
    // This thread drives the renderer as the render thread does: as a
    // worker of its own pool.
    let _pool = renderer::render_worker_pool();
    let mut s = setup();
    let cached = cvars(false, true);
    let dynamic = cvars(true, true);
    let (visible, summary) = prepare(&mut s, &cached);
    let (_, dyn_summary) = prepare(&mut s, &dynamic);
    assert_eq!(summary, dyn_summary, "both paths must produce the same draws");

    let mut group = crit.benchmark_group("frame_prep_160k_cubes");
    group.sample_size(10).measurement_time(Duration::from_secs(if quick() { 3 } else { 8 }));
    group.bench_function("cached_path", |b| b.iter(|| prepare(&mut s, &cached)));
    group.bench_function("dynamic_path", |b| b.iter(|| prepare(&mut s, &dynamic)));
    group.finish();

    let runs = if quick() { 5 } else { 11 };
    // Dynamic vs cached, back to back in each pair (both warmed up above).
    let paths = paired(if quick() { 5 } else { 7 }, |arm| match arm {
        Arm::Measured => prepare_ms(&mut s, &dynamic),
        Arm::Baseline => prepare_ms(&mut s, &cached),
    });
    let (ratio, t_cached, t_dynamic) = (paths.ratio, paths.baseline.median, paths.measured.median);
    let per_primitive = paths.baseline.scaled(1e6 / (SIDE * SIDE) as f64);
    let ns_per_primitive = per_primitive.median;
    let mut with_shadow = cached.clone();
    with_shadow.set(cvars::SHADOW_ENABLE, "1").unwrap();
    let t_shadow = time_prepare(&mut s, &with_shadow, runs);
    let ns_shadow = t_shadow * 1e6 / (SIDE * SIDE) as f64;
    let (serial, parallel) = (cvars(false, false), cvars(false, true));
    setup_and_record_ms(&mut s, &serial);
    setup_and_record_ms(&mut s, &parallel);
    // The widest spread of the bench (the 2-thread side needs both of the
    // VM's cores at once; a pair takes ~25 ms): twice the pairs, for a
    // steadier median.
    let threads = paired(2 * runs - 1, |arm| match arm {
        Arm::Measured => setup_and_record_ms(&mut s, &serial),
        Arm::Baseline => setup_and_record_ms(&mut s, &parallel),
    });
    let (t1, t2) = (threads.measured.median, threads.baseline.median);
    frame_cpu_ms(&mut s, &parallel, true);
    frame_cpu_ms(&mut s, &parallel, false);
    let spans = paired(runs, |arm| frame_cpu_ms(&mut s, &parallel, arm == Arm::Measured));
    // The same cost estimated from its parts, steadier on a busy machine.
    let (spans_per_frame, ns_per_span) = span_cost(&mut s, &parallel);
    let span_share = spans_per_frame as f64 * ns_per_span * 1e-6 / spans.baseline.median * 100.0;
    // Culling vs its floor, on the same primitives, 2 threads each.
    let (spheres, flags) = grid_arrays();
    let frustum = sparse_family().views[0].frustum();
    let (_, floor_visible) = culling_floor_ms(&spheres, &flags, &frustum);
    cull_ms(&mut s, &parallel);
    let cull = paired(runs, |arm| match arm {
        Arm::Measured => (0..5).map(|_| cull_ms(&mut s, &parallel)).fold(f64::INFINITY, f64::min),
        Arm::Baseline => culling_floor_ms(&spheres, &flags, &frustum).0,
    });
    println!(
        "culling: init_views {:.3} ms vs floor {:.3} ms ({floor_visible} of {} visible)",
        cull.measured.median,
        cull.baseline.median,
        SIDE * SIDE
    );
    let draws = |pass: MeshPass| summary.iter().filter(|(p, _, _)| *p == pass).map(|(_, _, d)| d).sum::<u64>();
    println!(
        "renderer: {visible} of {} cubes visible; cached prep {t_cached:.2} ms ({ns_per_primitive:.1} ns/primitive; {ns_shadow:.1} with the shadow view), dynamic prep {t_dynamic:.2} ms, ratio {:.1}x (range {:.1}-{:.1} over {} pairs); setup+record 1 thread {t1:.2} ms, 2 threads {t2:.2} ms, ratio {:.2}x (range {:.2}-{:.2} over {} pairs); frame CPU with spans recorded vs off {:.3}x (range {:.3}-{:.3}; estimated {span_share:.3}%: {spans_per_frame} spans of {ns_per_span:.0} ns); draws after merge: depth {}, shadow {}, base {}",
        SIDE * SIDE,
        ratio.median,
        ratio.min,
        ratio.max,
        ratio.n,
        threads.ratio.median,
        threads.ratio.min,
        threads.ratio.max,
        threads.ratio.n,
        spans.ratio.median,
        spans.ratio.min,
        spans.ratio.max,
        draws(MeshPass::DepthPrepass),
        draws(MeshPass::ShadowDepth),
        draws(MeshPass::Base)
    );
    let rows = [
        Row::spread("renderer: frame prep, dynamic path vs cached (160k cubes)", ratio, "x", Some(">= 10")),
        Row::spread("renderer: cached frame prep per primitive (160k cubes)", per_primitive, "ns", Some("<= 20")),
        Row::new("renderer: cached frame prep per primitive, with a shadow-casting sun (2 views)", ns_shadow, "ns", None),
        Row::spread("renderer: pass setup + recording, 2 threads vs 1", threads.ratio, "x", Some(">= 1.5")),
        Row::spread(
            "renderer: culling (init_views) vs the structure-of-arrays floor, 160k cubes, 6% visible, 2 threads",
            cull.ratio,
            "x",
            Some("<= 2"),
        ),
        Row::spread(
            "renderer: frame CPU with profiler spans recorded vs off (160k cubes, discarded frames)",
            spans.ratio,
            "x",
            Some("<= 1.02"),
        ),
        Row::new(
            "renderer: profiler spans recorded, share of frame CPU (spans per frame x ns per span / frame)",
            span_share,
            "%",
            Some("<= 2"),
        ),
        Row::new("renderer: profiler spans per frame (160k cubes)", spans_per_frame as f64, "spans", None),
        Row::new("renderer: cost of one recorded profiler span", ns_per_span, "ns", None),
        Row::new("renderer: base-pass draws after merge (8 materials)", draws(MeshPass::Base) as f64, "draws", Some("= 8")),
        Row::new("renderer: depth-prepass draws after merge", draws(MeshPass::DepthPrepass) as f64, "draws", None),
        Row::new("renderer: shadow-pass draws after merge", draws(MeshPass::ShadowDepth) as f64, "draws", None),
    ];
    let path = write_rows("renderer", &rows).unwrap();
    println!("wrote {}", path.display());
}

criterion_group!(benches, bench);
criterion_main!(benches);
