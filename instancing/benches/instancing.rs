//! Instancing hot paths at 1,000,000 instances, each against its baseline.
//!
//! (a) updating one instance and uploading only its dirty range (update +
//!     `take_dirty_ranges` + packing the range) vs rebuilding every
//!     instance's GPU data (what UE's ISM does on any edit); goal: the
//!     single update costs under 1% of the rebuild;
//! (b) CPU culling of 1M instances with about 10% visible: flat per-instance
//!     culling vs the HISM cluster tree (same answer, see the tests); and
//!     flat culling with a fade band (every visible instance inside it, so
//!     the same instances, each with its dithered-fade factor computed) vs
//!     without; goal: the fade adds at most 10%.
//!
//! (c) a rendered frame on the device (lavapipe here) with
//!     [`GPU_FRAME_INSTANCES`] (1M) cubes, the camera seeing about 10% of
//!     them: GPU-culled (compute pass, indirect draws) vs unculled (UE mode:
//!     every instance drawn, 12M triangles on a CPU rasteriser) vs CPU-culled
//!     vs a HISM proxy (CPU culling through the cluster tree); the row names
//!     carry the count. Measured on the shared 2-core machine: setup (1M
//!     instances, 80 MB of instance data, first frame) ~3.4 s, an unculled
//!     frame ~3.5 s, culled ones ~0.7-1.2 s; the quick bench takes ~45 s in
//!     all, so 1M fits (it was 200k before).
//!
//! Criterion reports distributions; after it, an own timing loop
//! (`std::time::Instant`) prints the comparisons and writes
//! `target/bench/instancing.json` for `cargo xtask bench`. Each ratio is
//! the median of paired measurements with its range
//! (`test_support::bench::paired`: both sides back to back in every pair).
//! `PROXIMA_BENCH_QUICK=1` shortens every measurement. Under `cargo test`
//! (no `--bench`) each benchmark runs once and the report is skipped.

use std::hint::black_box;
use std::time::{Duration, Instant};
use test_support::bench::quick;

use criterion::Criterion;
use glam::{Affine3A, Vec3};
use instancing::*;
use test_support::bench::{paired, write_rows, Arm, Spread};

const N: u32 = 1_000_000;
const SIDE: u32 = 1000;
const SPACING: f32 = 10.0;

fn mesh() -> InstancedMesh {
    // 512 vertices at LOD 0 → 16 instances per cluster leaf (UE's rule).
    InstancedMesh::simple(Bounds::new(Vec3::new(0.0, 1.0, 0.0), Vec3::new(1.0, 1.0, 1.0), 3f32.sqrt()), 512, 1536, &[1.0, 0.3, 0.1, 0.03])
        .unwrap()
}

/// A 1000 x 1000 grid on the XZ plane, 10 units apart, jittered rotation.
fn forest(mesh: &InstancedMesh) -> InstanceStore {
    let ts: Vec<Affine3A> = (0..N).map(|i| tree_at(i, 0.0)).collect();
    let mut s = InstanceStore::new(*mesh.bounds());
    s.add_instances(&ts).unwrap();
    s.take_dirty_ranges();
    s
}

/// Instance `i`'s place on the grid, lifted by `lift`.
fn tree_at(i: u32, lift: f32) -> Affine3A {
    let half = SIDE as f32 * SPACING * 0.5;
    let (x, z) = ((i % SIDE) as f32 * SPACING - half, (i / SIDE) as f32 * SPACING - half);
    Affine3A::from_rotation_translation(glam::Quat::from_rotation_y(i as f32 * 0.37), Vec3::new(x, lift, z))
}

/// Looks straight down at the middle of the grid; the footprint is about
/// 10% of the grid's area.
fn view() -> CullView {
    let side = (SIDE as f32 * SPACING) * 0.1f32.sqrt();
    let fov = 1.0f32;
    let height = side * 0.5 / (fov * 0.5).tan();
    CullView::look_at(Vec3::new(0.0, height, 0.0), Vec3::ZERO, Vec3::Z, fov, 1.0, 1.0, height * 2.0).unwrap()
}

struct Bench {
    mesh: InstancedMesh,
    store: InstanceStore,
    tree: ClusterTree,
    view: CullView,
    upload: Vec<InstanceGpuData>,
    next: u32,
}

impl Bench {
    fn new() -> Self {
        let mesh = mesh();
        let store = forest(&mesh);
        let tree = ClusterTree::build(&store, &mesh, &ClusterTreeSettings::default());
        Self { mesh, store, tree, view: view(), upload: Vec::with_capacity(16), next: 0 }
    }

    /// One edit (a small lift, so the forest keeps its shape), then what
    /// the proxy does for it: take the dirty ranges and pack them into the
    /// (reused) staging vector.
    fn update_one(&mut self) -> usize {
        self.next = (self.next + 7919) % N;
        let i = self.next;
        let t = tree_at(i, (i & 1) as f32 * 0.5);
        self.store.update_instance_transform(i, t, TransformSpace::Component).unwrap();
        self.upload.clear();
        for r in self.store.take_dirty_ranges() {
            self.store.write_gpu_data(r, &mut self.upload).unwrap();
        }
        self.upload.len()
    }
}

fn criterion_benches(c: &mut Criterion, b: &mut Bench) {
    // Culling first, on a fresh tree (the update benchmarks edit the store).
    let mut g = c.benchmark_group("cull_1M_10pct_visible");
    let mut out = CullOutput::default();
    g.bench_function("flat_per_instance", |bench| {
        bench.iter(|| {
            cull_instances_into(
                &b.store,
                &InstanceCuller::new(&b.mesh, &Affine3A::IDENTITY, &b.view, CullDistances::NONE).unwrap(),
                &mut out,
            );
            black_box(out.visible_count())
        })
    });
    g.bench_function("cluster_tree", |bench| {
        bench.iter(|| {
            let stats = b.tree.cull_into(
                &b.store,
                &InstanceCuller::new(&b.mesh, &Affine3A::IDENTITY, &b.view, CullDistances::NONE).unwrap(),
                &mut out,
            );
            black_box((out.visible_count(), stats))
        })
    });
    g.finish();

    let mut g = c.benchmark_group("instance_update_1M");
    g.bench_function("update_one_and_pack_dirty_range", |bench| bench.iter(|| black_box(b.update_one())));
    g.bench_function("rebuild_all_gpu_data", |bench| bench.iter(|| black_box(b.store.gpu_data_all())));
    g.finish();
}

fn median_of(runs: usize, mut f: impl FnMut() -> Duration) -> Duration {
    let mut times: Vec<Duration> = (0..runs).map(|_| f()).collect();
    times.sort_unstable();
    times[runs / 2]
}

type Row = test_support::bench::Row;

fn row(name: impl Into<String>, value: f64, unit: &str, goal: Option<&str>) -> Row {
    Row::new(format!("instancing: {}", name.into()), value, unit, goal)
}

/// A ratio row: the median of `spread` with its range.
fn ratio_row(name: impl Into<String>, spread: Spread, unit: &str, goal: Option<&str>) -> Row {
    Row::spread(format!("instancing: {}", name.into()), spread, unit, goal)
}

/// Instances of the rendered-frame comparison (c); `PROXIMA_BENCH_FRAME_INSTANCES`
/// overrides it (to measure other sizes).
const GPU_FRAME_INSTANCES: u32 = 1_000_000;

fn frame_instances() -> u32 {
    std::env::var("PROXIMA_BENCH_FRAME_INSTANCES").ok().and_then(|v| v.parse().ok()).filter(|&n| n > 0).unwrap_or(GPU_FRAME_INSTANCES)
}

/// `1M`, `200k`, `1500`: an instance count for row names.
fn count_label(n: u32) -> String {
    if n.is_multiple_of(1_000_000) {
        format!("{}M", n / 1_000_000)
    } else if n.is_multiple_of(1000) {
        format!("{}k", n / 1000)
    } else {
        n.to_string()
    }
}

/// Rendered-frame figures of (c).
struct FrameTimes {
    instances: u32,
    /// Building the store, the proxy and its first frame (uploads, pipelines).
    setup: Duration,
    gpu: Duration,
    unculled: Duration,
    /// GPU-culled / unculled frame time, per pair.
    gpu_vs_unculled: Spread,
    cpu: Duration,
    /// The HISM proxy: CPU culling through the cluster tree.
    hism: Duration,
    visible: u64,
}

/// Median wall time of rendered frames (submit and wait) per cull path,
/// and the visible count the GPU path reported.
fn gpu_frames(n: u32, runs: usize) -> Option<FrameTimes> {
    use engine_core::{ComponentId, StaticMesh, Transform, World};
    use renderer::*;
    let started = Instant::now();
    let desc = rhi_vulkan::DeviceDesc { validation: rhi_vulkan::Validation::Disabled, ..Default::default() };
    let mut rt = match RenderThread::new(&desc, RenderThreadMode::Threaded) {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("no device for the frame benchmark: {e}");
            return None;
        }
    };
    rt.add_feature(&instancing::FEATURE).ok()?;
    rt.set_cvar(renderer::cvars::SHADOW_ENABLE, "0").ok()?;
    let material = rt.create_material(Material::colored(glam::Vec4::new(0.3, 0.7, 0.3, 1.0))).ok()?;
    rt.add_light(Light::Directional(DirectionalLight {
        direction: Vec3::new(0.3, 0.2, -1.0),
        color: Vec3::ONE,
        intensity: 2.0,
        cast_shadows: false,
        ..Default::default()
    }))
    .ok()?;
    // The instances as a user has them: a component in a world, whose
    // end-of-frame update creates the proxy.
    let mut world = World::new(Some(rt));
    let mesh = StaticMesh::new("cube", vec![shapes::cube(4.0)], vec!["default".into()]).ok()?;
    let side = (n as f32).sqrt().ceil() as u32;
    let half = side as f32 * SPACING * 0.5;
    let ts: Vec<Affine3A> = (0..n)
        .map(|i| Affine3A::from_translation(Vec3::new((i % side) as f32 * SPACING - half, (i / side) as f32 * SPACING - half, 0.0)))
        .collect();
    let spawn = |world: &mut World, mut c: InstancedStaticMeshComponent| -> Option<ComponentId> {
        c.add_instances(&ts, TransformSpace::Component).ok()?;
        // HISM: the cluster tree built before the proxy is (a plain ISM: nothing).
        c.wait_for_cluster_tree().ok()?;
        let (_, id) = world.spawn_actor("instances", Box::new(c), Transform::IDENTITY).ok()?;
        world.set_material(id, 0, material).ok()?;
        world.send_all_end_of_frame_updates().ok()?;
        Some(id)
    };
    // The statistics handle of a component's proxy (once a frame has added it).
    let stats_of = |world: &mut World, id: ComponentId| -> Option<IsmStats> {
        let pid = world.primitive_id(id).ok()??;
        world
            .render_thread()?
            .with_context(move |ctx| {
                ctx.scene.proxy(pid).and_then(|p| p.as_any().downcast_ref::<InstancedStaticMeshSceneProxy>()).map(|p| p.stats())
            })
            .ok()?
    };
    let ism = spawn(&mut world, InstancedStaticMeshComponent::new(mesh.clone()).ok()?)?;
    // Straight down; the footprint is about 10% of the grid.
    let footprint = side as f32 * SPACING * 0.1f32.sqrt();
    let fov = 1.0f32;
    let height = footprint * 0.5 / (fov * 0.5).tan();
    let view = SceneView::perspective(
        Vec3::new(0.0, -0.01, height),
        Vec3::ZERO,
        Vec3::Y,
        fov,
        1.0,
        height * 2.0,
        rhi_vulkan::Rect::from_size(256, 256),
    )
    .ok()?;
    let family = ViewFamily::new(256, 256, vec![view]);
    let frame = |world: &mut World| {
        let t = Instant::now();
        let rt = world.render_thread().expect("a world with a render thread");
        rt.render_frame(FrameRequest { family: family.clone(), read_back: false, execute: true }).unwrap();
        rt.flush().unwrap();
        t.elapsed()
    };
    let set_cvar = |world: &mut World, name: &str, value: &str| world.render_thread().expect("a render thread").set_cvar(name, value);
    frame(&mut world); // warm-up: uploads, pipelines, buffers
    let setup = started.elapsed();
    let ism_stats = stats_of(&mut world, ism)?;
    // Warm-up of UE mode, then GPU-culled vs unculled frames back to back
    // (switching the cvar is a per-frame branch: nothing is rebuilt).
    set_cvar(&mut world, CVAR_UE_MODE, "1").ok()?;
    frame(&mut world);
    let pairs = paired(runs, |arm| {
        set_cvar(&mut world, CVAR_UE_MODE, if arm == Arm::Baseline { "1" } else { "0" }).unwrap();
        frame(&mut world).as_secs_f64()
    });
    let (gpu, unculled) = (Duration::from_secs_f64(pairs.measured.median), Duration::from_secs_f64(pairs.baseline.median));
    set_cvar(&mut world, CVAR_UE_MODE, "0").ok()?;
    // The GPU's visible count arrives a frame late: two GPU-culled frames
    // after the last unculled one, then read it.
    frame(&mut world);
    frame(&mut world);
    let visible = ism_stats.snapshot().visible();
    set_cvar(&mut world, CVAR_GPU_CULLING, "0").ok()?;
    frame(&mut world);
    let cpu = median_of(runs, || frame(&mut world));

    // The same instances as a HISM component, culled through its cluster tree.
    let actor = world.actor_of(ism).ok()?;
    world.destroy_actor(actor).ok()?;
    let hism_id = spawn(&mut world, InstancedStaticMeshComponent::new_hierarchical(mesh).ok()?)?;
    frame(&mut world);
    let hism_stats = stats_of(&mut world, hism_id)?;
    let hism = median_of(runs, || frame(&mut world));
    let h = hism_stats.snapshot();
    assert_eq!((h.path, h.visible()), (CullPath::CpuTree, visible), "HISM and GPU culling see the same instances");
    Some(FrameTimes { instances: n, setup, gpu, unculled, gpu_vs_unculled: pairs.ratio, cpu, hism, visible })
}

fn report(b: &mut Bench) {
    let runs = if quick() { 5 } else { 15 };
    // The tree must be fresh for the cull comparison; rebuild after edits.
    b.tree = ClusterTree::build(&b.store, &b.mesh, &ClusterTreeSettings::default());

    const UPDATES: u32 = 1000;
    // Per pair: 1000 single updates (the time of one) and one rebuild.
    let updates = paired(runs, |arm| {
        let t = Instant::now();
        match arm {
            Arm::Measured => {
                for _ in 0..UPDATES {
                    black_box(b.update_one());
                }
                t.elapsed().as_secs_f64() / f64::from(UPDATES)
            }
            Arm::Baseline => {
                black_box(b.store.gpu_data_all());
                t.elapsed().as_secs_f64()
            }
        }
    });
    let (update, rebuild) = (Duration::from_secs_f64(updates.measured.median), Duration::from_secs_f64(updates.baseline.median));
    b.tree = ClusterTree::build(&b.store, &b.mesh, &ClusterTreeSettings::default());
    let tree_build = median_of(3, || {
        let t = Instant::now();
        black_box(ClusterTree::build(&b.store, &b.mesh, &ClusterTreeSettings::default()));
        t.elapsed()
    });

    let mut out = CullOutput::default();
    let mut tree_out = CullOutput::default();
    let mut stats = TreeCullStats::default();
    // Per pair: the tree cull and the flat cull of the same instances.
    let culls = paired(runs, |arm| {
        let t = Instant::now();
        match arm {
            Arm::Measured => {
                stats = b.tree.cull_into(
                    &b.store,
                    &InstanceCuller::new(&b.mesh, &Affine3A::IDENTITY, &b.view, CullDistances::NONE).unwrap(),
                    &mut tree_out,
                );
            }
            Arm::Baseline => {
                cull_instances_into(
                    &b.store,
                    &InstanceCuller::new(&b.mesh, &Affine3A::IDENTITY, &b.view, CullDistances::NONE).unwrap(),
                    &mut out,
                );
            }
        }
        t.elapsed().as_secs_f64()
    });
    let (tree, flat) = (Duration::from_secs_f64(culls.measured.median), Duration::from_secs_f64(culls.baseline.median));
    let visible = out.visible_count();
    assert_eq!(tree_out.visible_count(), visible, "tree and flat disagree");
    assert!(!stats.fell_back_to_flat);

    // The same tree after 1000 edits, while its rebuild would be running.
    for _ in 0..1000 {
        b.update_one();
    }
    let stale = median_of(runs, || {
        let t = Instant::now();
        b.tree.cull_into(
            &b.store,
            &InstanceCuller::new(&b.mesh, &Affine3A::IDENTITY, &b.view, CullDistances::NONE).unwrap(),
            &mut tree_out,
        );
        t.elapsed()
    });

    // Per pair: flat culls with and without a fade band. The band starts
    // at 1 and ends past the grid: no instance is culled by it, every
    // visible one fades (the same visible set, fades computed).
    let band = CullDistances::new(1.0, SIDE as f32 * SPACING * 10.0).unwrap();
    let mut faded = CullOutput::default();
    let fades = paired(runs, |arm| {
        let distances = if arm == Arm::Measured { band } else { CullDistances::NONE };
        let t = Instant::now();
        let culler = InstanceCuller::new(&b.mesh, &Affine3A::IDENTITY, &b.view, distances).unwrap();
        cull_instances_into(&b.store, &culler, if arm == Arm::Measured { &mut faded } else { &mut out });
        t.elapsed().as_secs_f64()
    });
    assert_eq!(faded.visible_count(), out.visible_count(), "the fade band culls nothing");
    assert!(faded.lods.iter().flat_map(|l| &l.fades).all(|&f| f > 0.0 && f < 1.0), "every visible instance fades");

    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let frames = gpu_frames(frame_instances(), if quick() { 5 } else { 7 });
    let mut rows = vec![
        row("update one instance and pack its range, 1M", update.as_secs_f64() * 1e9, "ns", None),
        row("rebuild all instance GPU data, 1M", ms(rebuild), "ms", None),
        ratio_row("update one vs rebuild all, 1M", updates.ratio.scaled(100.0), "%", Some("<= 1")),
        row("CPU cull flat, 1M", ms(flat), "ms", None),
        row("CPU cull cluster tree, 1M", ms(tree), "ms", None),
        ratio_row("CPU cull tree vs flat, 1M", culls.ratio, "ratio", Some("<= 0.5")),
        row("CPU cull visible fraction, 1M", visible as f64 / f64::from(N), "fraction", None),
        row("cluster tree build, 1M", ms(tree_build), "ms", None),
        row("CPU cull stale tree after 1k edits, 1M", ms(stale), "ms", None),
        ratio_row("CPU cull flat with fade band vs without, 1M", fades.ratio, "ratio", Some("<= 1.1")),
    ];
    if let Some(f) = &frames {
        let k = count_label(f.instances);
        rows.extend([
            row(format!("frame GPU-culled, {k}"), ms(f.gpu), "ms", None),
            row(format!("frame unculled (UE mode), {k}"), ms(f.unculled), "ms", None),
            row(format!("frame CPU-culled, {k}"), ms(f.cpu), "ms", None),
            row(format!("frame HISM (CPU cluster tree), {k}"), ms(f.hism), "ms", None),
            ratio_row(format!("frame GPU-culled vs unculled, {k}"), f.gpu_vs_unculled, "ratio", Some("<= 0.5")),
            row(format!("frame visible fraction, {k}"), f.visible as f64 / f64::from(f.instances), "fraction", None),
            row(format!("frame setup (store, proxy, first frame), {k}"), ms(f.setup), "ms", None),
        ]);
        println!(
            "  frame, {} cubes, {} visible: GPU-culled {:.1} ms | unculled (UE mode) {:.1} ms | CPU-culled {:.1} ms | HISM {:.1} ms | setup {:.0} ms",
            f.instances,
            f.visible,
            ms(f.gpu),
            ms(f.unculled),
            ms(f.cpu),
            ms(f.hism),
            ms(f.setup)
        );
    }

    println!("\ninstancing, {N} instances, {} rayon threads{}:", rayon::current_num_threads(), if quick() { " (quick)" } else { "" });
    println!(
        "  update one + pack its range {:>10.1} ns | rebuild all {:>8.2} ms | ratio {:.4}% (goal <= 1%)",
        update.as_secs_f64() * 1e9,
        ms(rebuild),
        rows[2].value
    );
    println!(
        "  cull ({visible} visible, {:.1}%): flat {:>7.2} ms | tree {:>7.2} ms ({} leaves, {} fully inside) | tree/flat {:.3}",
        rows[6].value * 100.0,
        ms(flat),
        ms(tree),
        stats.leaves_visible,
        stats.leaves_fully_inside,
        rows[5].value
    );
    println!("  stale tree after 1000 edits {:.2} ms | cluster tree build {:.1} ms (runs in the background)", ms(stale), ms(tree_build));
    println!("  flat cull with a fade band vs without {:.3} (goal <= 1.1)", rows[9].value);

    match write_rows("instancing", &rows) {
        Ok(path) => println!("wrote {}", path.display()),
        Err(e) => eprintln!("could not write instancing.json: {e}"),
    }
}

fn main() {
    let benching = std::env::args().any(|a| a == "--bench");
    let (warm, measure) = if quick() { (100, 500) } else { (300, 2000) };
    let mut c = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(warm))
        .measurement_time(Duration::from_millis(measure))
        .configure_from_args();
    let mut b = Bench::new();
    criterion_benches(&mut c, &mut b);
    c.final_summary();
    if benching {
        report(&mut b);
    }
}
