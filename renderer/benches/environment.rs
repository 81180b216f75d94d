//! Image-based lighting's one-time cost (issue 38): a 2048x1024 Radiance
//! `.hdr` panorama decoded (context) and prefiltered on the GPU —
//! uploaded with its mips, the specular cube's levels and the irradiance's
//! harmonics (`renderer::environment`), waited for — as the median of a
//! few runs; then frames of a small scene rendered with it, counting the
//! frames that filtered it again while it did not change (goal 0). The
//! frame-time cost of lighting with it is measured end to end by running
//! the showcase (`cargo xtask bench`'s samples figures).
//! Writes `target/bench/renderer-environment.json` for `cargo xtask bench`.

use glam::Vec3;
use renderer::*;
use rhi_vulkan::Rect;
use std::time::Instant;
use test_support::bench::{quick, write_rows, Row, Spread};

const W: u32 = 2048;
const H: u32 = 1024;

/// A panorama with detail everywhere (a bright band, a gradient, stripes).
fn panorama() -> EquirectImage {
    EquirectImage::from_fn(W, H, |d| {
        let stripes = (d.y.atan2(d.x) * 24.0).sin().abs();
        [0.3 + 2.0 * d.z.max(0.0) + stripes, 0.4 + 0.5 * stripes, 0.2 + 0.3 * (1.0 - d.z.abs())]
    })
    .expect("within the limits")
}

/// The panorama as a Radiance file.
fn hdr_file(image: &EquirectImage) -> Vec<u8> {
    let pixels: Vec<image::Rgb<f32>> = image.texels().iter().map(|t| image::Rgb(*t)).collect();
    let mut bytes = Vec::new();
    image::codecs::hdr::HdrEncoder::new(&mut bytes).encode(&pixels, W as usize, H as usize).expect("encoding");
    bytes
}

fn main() {
    let device = test_support::bench::device();
    let runs = if quick() { 3 } else { 7 };
    let file = hdr_file(&panorama());
    let (mut decode_ms, mut filter_ms) = (Vec::new(), Vec::new());
    let mut scene = Scene::default();
    for _ in 0..runs {
        let t = Instant::now();
        let image = EquirectImage::decode_hdr(&file).expect("decoding");
        decode_ms.push(t.elapsed().as_secs_f64() * 1e3);
        let environment = Environment::image(image);
        let t = Instant::now();
        scene.set_environment(&device, &environment).expect("prefiltering");
        filter_ms.push(t.elapsed().as_secs_f64() * 1e3);
    }
    // Frames with it: only the first after the last set reports a filter.
    let mesh = StaticMeshRenderData::new(vec![shapes::uv_sphere(1.0, 32, 16)]).expect("a sphere");
    scene
        .add_primitive(PrimitiveId::new(), Box::new(StaticMeshSceneProxy::new(mesh, vec![MaterialId::DEFAULT])), glam::Mat4::IDENTITY)
        .unwrap();
    let view = SceneView::perspective(Vec3::new(-4.0, 0.0, 1.0), Vec3::ZERO, Vec3::Z, 1.0, 0.1, 100.0, Rect::from_size(320, 180)).unwrap();
    let request = FrameRequest { family: ViewFamily::new(320, 180, vec![view]), read_back: false, execute: true };
    let mut renderer = SceneRenderer::new(&device);
    let cvars = ConsoleVariables::default();
    let frames = 10;
    let filters: Vec<u64> =
        (0..frames).map(|_| renderer.render(&device, &mut scene, &cvars, &request).expect("a frame").0.environment_filters).collect();
    renderer.finish(&device).expect("finishing");
    let refiltered: u64 = filters[1..].iter().sum();
    let median = |v: &[f64]| Spread::of(v).expect("runs").median;
    let (decode, filter) = (median(&decode_ms), median(&filter_ms));
    println!(
        "environment 2048x1024: .hdr decode {decode:.1} ms, upload and prefilter {filter:.1} ms; frames re-filtered {refiltered} of {}",
        frames - 1
    );
    let rows = vec![
        Row::new("environment 2048x1024 .hdr: decode (CPU)", decode, "ms", None),
        Row::new("environment 2048x1024 .hdr: upload and prefilter on the GPU (lavapipe), waited", filter, "ms", None),
        Row::new("environment: frames that filtered it again while it did not change", refiltered as f64, "frames", Some("= 0")),
    ];
    scene.release_material_resources(&device);
    renderer.release(&device);
    let path = write_rows("renderer-environment", &rows).expect("writing the figures");
    println!("figures written to {}", path.display());
}
