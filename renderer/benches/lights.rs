//! Clustered lighting's CPU cost at the scale of Bevy's many_lights: the
//! `light_grid` stage (cull 100,000 point lights of range 0.3 on a
//! Fibonacci sphere of radius 50 to a 1920x1080 view from its centre, then
//! list them per cluster) — goal <= 2 ms on 2 threads — at the default
//! tile size (16 px) and beside it at 32 and 64 px, serial for context; and the grid's
//! figures (clusters, most and mean lights per cluster). The frame-time
//! ratio against 8 lights is measured end to end by running the `lights`
//! sample (`cargo xtask bench`'s samples figures).
//! Then the same grid built in compute passes (`GpuLightGridBuilder`, the
//! alternative the CPU build was chosen over): its dispatches' time
//! against the CPU build's, on the same frames, and whether the lists
//! agree.
//! Writes `target/bench/renderer-lights.json` for `cargo xtask bench`.

use glam::{Quat, Vec3};
use renderer::*;
use rhi_vulkan::Rect;
use test_support::bench::{quick, write_rows, Row, Spread};

const LIGHTS: u32 = 100_000;
const W: u32 = 1920;
const H: u32 = 1080;

fn fibonacci(i: u32, n: u32) -> Vec3 {
    let golden_ratio = 0.5 * (1.0 + 5f64.sqrt());
    let theta = std::f64::consts::TAU * (i as f64 / golden_ratio);
    let phi = (1.0 - 2.0 * i as f64 / n as f64).acos();
    Vec3::new((theta.cos() * phi.sin()) as f32, (theta.sin() * phi.sin()) as f32, phi.cos() as f32)
}

fn scene() -> Scene {
    let mut scene = Scene::default();
    for i in 0..LIGHTS {
        let light = PointLight { position: fibonacci(i, LIGHTS) * 49.9, intensity: 0.08, radius: 0.3, ..Default::default() };
        scene.set_light(LightId(u64::from(i) + 1), Light::Point(light)).unwrap();
    }
    scene
}

/// The view after `frame` frames of the sample's turning camera.
fn family(frame: u32) -> ViewFamily {
    let r = Quat::from_rotation_x(0.15 / 60.0 * frame as f32) * Quat::from_rotation_z(0.15 / 60.0 * frame as f32);
    let view =
        SceneView::perspective(Vec3::ZERO, r * Vec3::X, r * Vec3::Z, std::f32::consts::FRAC_PI_4, 0.1, 1000.0, Rect::from_size(W, H))
            .expect("a view");
    ViewFamily::new(W, H, vec![view])
}

fn main() {
    let device = test_support::bench::device();
    let scene = scene();
    let mut renderer = SceneRenderer::new(&device);
    let frames = if quick() { 20 } else { 60 };
    let mut rows = Vec::new();
    for (pixels, parallel) in [("16", true), ("32", true), ("64", true), ("16", false)] {
        let mut c = ConsoleVariables::default();
        c.set(cvars::LIGHT_GRID_PIXEL_SIZE, pixels).unwrap();
        c.set(cvars::PARALLEL_PASS_SETUP, if parallel { "1" } else { "0" }).unwrap();
        let mut ms = Vec::new();
        let mut stats = ClusterStats::default();
        for f in 0..frames {
            let p = renderer.prepare(&device, &scene, &c, &family(f)).unwrap();
            ms.push(p.light_grid_ms());
            stats = p.cluster_stats();
        }
        let spread = Spread::of(&ms[frames as usize / 5..]).expect("frames");
        let threads = if parallel { "2 threads" } else { "1 thread" };
        let default = pixels == "16" && parallel;
        let name = format!("light grid of 100,000 lights at 1920x1080, {pixels} px tiles, {threads}");
        rows.push(Row::spread(name, spread, "ms", default.then_some("<= 2")));
        if parallel {
            rows.push(Row::new(format!("light grid {pixels} px: clusters"), stats.count as f64, "clusters", None));
            rows.push(Row::new(format!("light grid {pixels} px: most lights in a cluster"), stats.max_lights as f64, "lights", None));
            rows.push(Row::new(format!("light grid {pixels} px: mean lights per cluster"), stats.mean_lights, "lights", None));
        }
        println!("{pixels} px, {threads}: light grid {:.2} ms (median), {stats:?}", spread.median);
    }
    rows.extend(gpu_build(&device, &scene, frames));
    let path = write_rows("renderer-lights", &rows).expect("writing the figures");
    println!("figures written to {}", path.display());
}

/// The grid of the default tiles (16 px, 32 slices) built on the CPU and
/// in compute passes, frame by frame: medians of each, their ratio, and
/// how the lists compare: entries the compute build misses (goal 0) and
/// entries it adds (a light whose sphere grazes a cluster's box within
/// float rounding: harmless, the shader tests each light's range).
fn gpu_build(device: &rhi_vulkan::Device, scene: &Scene, frames: u32) -> Vec<Row> {
    let builder = GpuLightGridBuilder::new(device).expect("the build's pipelines");
    let (mut cpu_ms, mut gpu_ms, mut total_ms, mut missing, mut extra) = (Vec::new(), Vec::new(), Vec::new(), 0usize, 0usize);
    for f in 0..frames.min(20) {
        let view = &family(f).views[0];
        let (clusters, indices, cpu) = cpu_light_lists(scene, view, 16, 32);
        let gpu = builder.build(device, scene, view, 16, 32, indices.len() + 1024).expect("a GPU build");
        let list = |c: [u32; 2], of: &[u32]| of[c[0] as usize..(c[0] + c[1]) as usize].to_vec();
        for (a, b) in clusters.iter().zip(&gpu.clusters) {
            let (a, b) = (list(*a, &indices), list(*b, &gpu.indices));
            missing += a.iter().filter(|l| !b.contains(l)).count();
            extra += b.iter().filter(|l| !a.contains(l)).count();
        }
        cpu_ms.push(cpu);
        gpu_ms.push(gpu.dispatch_ms);
        total_ms.push(gpu.setup_ms + gpu.upload_ms + gpu.dispatch_ms);
    }
    let median = |v: &[f64]| Spread::of(&v[v.len() / 5..]).expect("frames").median;
    let (cpu, gpu, total) = (median(&cpu_ms), median(&gpu_ms), median(&total_ms));
    println!(
        "light grid 100,000 lights: CPU build {cpu:.2} ms, compute dispatches {gpu:.2} ms (with set-up and upload {total:.2} ms); \
         compute lists miss {missing} and add {extra} entries"
    );
    vec![
        Row::new("light grid 100,000 lights: CPU build (2 threads)", cpu, "ms", None),
        Row::new("light grid 100,000 lights: compute-pass build, dispatches (lavapipe)", gpu, "ms", None),
        Row::new("light grid 100,000 lights: compute-pass build, with set-up and upload", total, "ms", None),
        Row::new("light grid 100,000 lights: compute-pass vs CPU build", gpu / cpu, "x", None),
        Row::new("light grid 100,000 lights: list entries the compute build misses", missing as f64, "entries", Some("= 0")),
        Row::new("light grid 100,000 lights: list entries the compute build adds (grazing, harmless)", extra as f64, "entries", None),
    ]
}
