//! glTF import and rendering of a generated model (test-support's glTF
//! writer, made here, written to a temporary `.glb`): 10,000 nodes, each
//! drawing its own 100-triangle mesh (1,000,000 triangles; positions,
//! normals, tangents, UVs, u32 indices), 4 PBR materials with 16 textures
//! (base colour, metallic-roughness, normal, emissive; 1024x1024 PNGs).
//!
//! - import throughput: `engine_core::gltf::import` of the file (a
//!   World-ready `GltfImport`: meshes built, images decoded) vs. the floor
//!   of reading the file and decoding its 16 images with the image crate
//!   alone (in parallel, as the import does), goal ≤ 2×;
//! - the same model rendered: the import spawned into a World, cached
//!   frame prep (`SceneRenderer::prepare` on the render thread, one
//!   1280x720 view seeing everything, validation off; each measurement
//!   the median of 31 frames) vs. a World of as
//!   many built-in cubes (`StaticMesh::cube`) at the same places, goal
//!   ≤ 1.2×; also ns per primitive.
//!
//! Context rows say where the time goes: the import's serial GLB/JSON parse
//! alone, each world's `init_views` and `pass_setup` stages (medians over
//! the measurements), and each world's base-pass draws (the cubes share one mesh and
//! merge into one instanced draw; 10,000 distinct meshes stay 10,000 draws
//! per pass, which pass setup keeps as one chain: the runs of `renderer::mesh_pass`).
//!
//! Ratios are medians of paired measurements (`test_support::bench::paired`).
//! Writes `target/bench/engine-core-gltf.json` for `cargo xtask bench`.

use engine_core::gltf::{self, GltfImport};
use engine_core::*;
use glam::Vec3;
use rayon::prelude::*;
use renderer::{cvars, ConsoleVariables, FrameRequest, RenderThread, RenderThreadMode, SceneView, ViewFamily};
use rhi_vulkan::{DeviceDesc, Rect, Validation};
use serde_json::json;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::time::Instant;
use test_support::bench::quick;
use test_support::bench::{paired, write_rows, Arm, Row};
use test_support::gltf_writer::*;

/// Nodes on a SIDE x SIDE grid, one mesh each.
const SIDE: usize = 100;
const NODES: usize = SIDE * SIDE;
/// Each mesh: a QX x QY grid of quads = 100 triangles.
const QX: usize = 10;
const QY: usize = 5;
const MATERIALS: usize = 4;
const TEXTURE_SIDE: u32 = 1024;
/// Node spacing (glTF units).
const SPACING: f32 = 2.0;
const W: u32 = 1280;
const H: u32 = 720;

/// A texture's pixels: smooth gradients with a little noise (compresses
/// like a painted texture, not like flat colour or white noise).
fn pixels(k: usize) -> Vec<u8> {
    let s = TEXTURE_SIDE as usize;
    let mut state = 0x9e37_79b9_7f4a_7c15u64 ^ k as u64;
    let mut out = Vec::with_capacity(s * s * 4);
    for y in 0..s {
        for x in 0..s {
            state = state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            let noise = (state >> 60) as u8;
            out.extend_from_slice(&[(x * 255 / s) as u8 ^ noise, (y * 255 / s) as u8 + noise, ((x + y + 40 * k) % 256) as u8, 255]);
        }
    }
    out
}

/// One mesh: a bumpy QX x QY quad grid in glTF's XZ plane (y up).
fn mesh(w: &mut GltfWriter, m: usize) -> usize {
    let (vx, vy) = (QX + 1, QY + 1);
    let (mut p, mut n, mut t, mut uv) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for j in 0..vy {
        for i in 0..vx {
            let (u, v) = (i as f32 / QX as f32, j as f32 / QY as f32);
            p.push([u * 1.6 - 0.8, 0.2 * ((u * 6.0 + m as f32).sin() * (v * 4.0).cos()), v * 1.6 - 0.8]);
            n.extend([0.0, 1.0, 0.0]);
            t.extend([1.0, 0.0, 0.0, 1.0]);
            uv.extend([u, v]);
        }
    }
    let mut idx = Vec::with_capacity(QX * QY * 6);
    for j in 0..QY {
        for i in 0..QX {
            let a = (j * vx + i) as u32;
            let (b, c, d) = (a + 1, a + vx as u32, a + vx as u32 + 1);
            idx.extend([a, c, b, b, c, d]);
        }
    }
    let (p, n, t, uv, i) =
        (w.positions(&p), w.floats(&n, "VEC3"), w.floats(&t, "VEC4"), w.floats(&uv, "VEC2"), w.indices(&idx, UNSIGNED_INT));
    w.push("meshes", json!({ "name": format!("mesh {m}"), "primitives": [{ "attributes": { "POSITION": p, "NORMAL": n, "TANGENT": t, "TEXCOORD_0": uv }, "indices": i, "material": m % MATERIALS }] }))
}

/// The model as a `.glb`, and the byte ranges of its 16 PNGs in the file.
fn model() -> (Vec<u8>, Vec<Range<usize>>) {
    let mut w = GltfWriter::new();
    let pngs: Vec<Vec<u8>> = (0..MATERIALS * 4).into_par_iter().map(|k| encode_png(TEXTURE_SIDE, TEXTURE_SIDE, &pixels(k))).collect();
    let mut views = Vec::new();
    let mut tex = Vec::new();
    for png in &pngs {
        let view = w.view(png, None);
        views.push(view);
        let image = w.push("images", json!({ "bufferView": view, "mimeType": "image/png" }));
        tex.push(w.texture(image, json!({ "magFilter": 9729, "minFilter": 9987, "wrapS": 10497, "wrapT": 10497 })));
    }
    for m in 0..MATERIALS {
        let t = &tex[m * 4..m * 4 + 4];
        w.push(
            "materials",
            json!({
                "name": format!("material {m}"),
                "pbrMetallicRoughness": { "baseColorTexture": { "index": t[0] }, "metallicRoughnessTexture": { "index": t[1] } },
                "normalTexture": { "index": t[2] },
                "emissiveTexture": { "index": t[3] }, "emissiveFactor": [1.0, 1.0, 1.0]
            }),
        );
    }
    let mut roots = Vec::with_capacity(NODES);
    for k in 0..NODES {
        let m = mesh(&mut w, k);
        let (x, z) = node_place(k);
        roots.push(w.push("nodes", json!({ "name": format!("node {k}"), "mesh": m, "translation": [x, 0.0, z] })));
    }
    w.push("scenes", json!({ "name": "grid", "nodes": roots }));
    w.set("scene", json!(0));
    let glb = w.to_glb();
    // The BIN chunk's data starts after the header, the JSON chunk and the BIN chunk header.
    let json_len = u32::from_le_bytes(glb[12..16].try_into().unwrap()) as usize;
    let bin = 12 + 8 + json_len + 8;
    let ranges = views
        .iter()
        .map(|&v| {
            let view = &w.json["bufferViews"][v];
            let (offset, len) = (view["byteOffset"].as_u64().unwrap() as usize, view["byteLength"].as_u64().unwrap() as usize);
            bin + offset..bin + offset + len
        })
        .collect::<Vec<_>>();
    for (r, png) in ranges.iter().zip(&pngs) {
        assert_eq!(&glb[r.clone()], png.as_slice(), "an image's bytes in the file");
    }
    (glb, ranges)
}

/// Node `k`'s place on the grid in glTF's XZ plane.
fn node_place(k: usize) -> (f32, f32) {
    ((k % SIDE) as f32 * SPACING, (k / SIDE) as f32 * SPACING)
}

/// ms of a World-ready import of `path`.
fn import_ms(path: &Path) -> (f64, GltfImport) {
    let t = Instant::now();
    let import = gltf::import(path).unwrap();
    (t.elapsed().as_secs_f64() * 1e3, import)
}

/// ms of the floor: reading the file and decoding its images (in parallel).
fn floor_ms(path: &Path, images: &[Range<usize>]) -> f64 {
    let t = Instant::now();
    let bytes = std::fs::read(path).unwrap();
    let decoded: Vec<_> = images
        .par_iter()
        .map(|r| image::load_from_memory_with_format(&bytes[r.clone()], image::ImageFormat::Png).unwrap().into_rgba8())
        .collect();
    let ms = t.elapsed().as_secs_f64() * 1e3;
    assert!(decoded.iter().all(|d| d.width() == TEXTURE_SIDE));
    ms
}

/// ms of the import's first step alone: parsing the GLB and its JSON
/// (the gltf crate), least of 3 (context: the import's serial part).
fn parse_ms(path: &Path) -> f64 {
    let bytes = std::fs::read(path).unwrap();
    (0..3)
        .map(|_| {
            let t = Instant::now();
            let parsed = ::gltf::Gltf::from_slice(&bytes).unwrap();
            let ms = t.elapsed().as_secs_f64() * 1e3;
            drop(parsed);
            ms
        })
        .fold(f64::INFINITY, f64::min)
}

fn world() -> World {
    let rt = RenderThread::new(&DeviceDesc { validation: Validation::Disabled, ..Default::default() }, RenderThreadMode::Threaded).unwrap();
    World::new(Some(rt))
}

/// Lets the render thread apply what was queued.
fn drain(world: &mut World) {
    world.render_thread().unwrap().with_context(|ctx| ctx.renderer.update_scene(&ctx.device, &mut ctx.scene).unwrap()).unwrap();
}

/// The view both worlds are seen from: above the grid's middle, seeing all
/// of it (Proxima: Z up; the glTF grid's X and Z land on Proxima's Y and X).
fn family() -> ViewFamily {
    let mid = (SIDE - 1) as f32 * SPACING / 2.0;
    let view =
        SceneView::perspective(Vec3::new(mid, mid, 260.0), Vec3::new(mid, mid, 0.0), Vec3::X, 1.2, 1.0, 2000.0, Rect::from_size(W, H))
            .unwrap();
    ViewFamily::new(W, H, vec![view])
}

fn bench_cvars() -> ConsoleVariables {
    let mut c = ConsoleVariables::default();
    c.set(cvars::SHADOW_ENABLE, "0").unwrap();
    // Occlusion culling has rows of its own (renderer/benches/occlusion.rs);
    // these figures are the rest of the frame, as they were measured before it.
    c.set(cvars::ALLOW_OCCLUSION_QUERIES, "0").unwrap();
    c
}

/// One discarded frame (every CPU stage, no GPU work): its visible
/// primitives and base-pass draws.
fn frame(world: &mut World) -> (usize, u64) {
    world
        .render_thread()
        .unwrap()
        .with_context(|ctx| {
            let request = FrameRequest { family: family(), read_back: false, execute: false };
            let (stats, _) = ctx.renderer.render(&ctx.device, &mut ctx.scene, &bench_cvars(), &request).unwrap();
            (stats.visible_primitives as usize, stats.pass(renderer::MeshPass::Base).draws)
        })
        .unwrap()
}

/// Frames prepared per measurement.
const PREP_FRAMES: usize = 31;

/// ms of a cached frame prep on the render thread: the median of
/// [`PREP_FRAMES`] back to back (one frame of a fraction of a millisecond
/// swings with when rayon's workers wake; the median is the steady state).
/// The median of its `init_views` and `pass_setup` stages goes to `stages`.
fn prepare_ms(world: &mut World, stages: &mut Vec<[f64; 2]>) -> f64 {
    let (ms, stage_ms) = world
        .render_thread()
        .unwrap()
        .with_context(|ctx| {
            let (c, f) = (bench_cvars(), family());
            let (mut ms, mut init_views, mut pass_setup) = (Vec::new(), Vec::new(), Vec::new());
            for _ in 0..PREP_FRAMES {
                let t = Instant::now();
                let prepared = ctx.renderer.prepare(&ctx.device, &ctx.scene, &c, &f).unwrap();
                ms.push(t.elapsed().as_secs_f64() * 1e3);
                let [init, _collect, setup] = prepared.stage_ms();
                init_views.push(init);
                pass_setup.push(setup);
            }
            (median(ms), [median(init_views), median(pass_setup)])
        })
        .unwrap();
    stages.push(stage_ms);
    ms
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// A world of NODES built-in cubes where the model's nodes land.
fn cube_world() -> World {
    let mut world = world();
    let mesh = StaticMesh::cube();
    let items: Vec<(Box<dyn Component>, Transform)> = (0..NODES)
        .map(|k| {
            let (x, z) = node_place(k);
            (
                Box::new(StaticMeshComponent::new(mesh.clone())) as Box<dyn Component>,
                Transform::from_translation(gltf::gltf_to_proxima() * Vec3::new(x, 0.0, z)),
            )
        })
        .collect();
    world.spawn_actors(items).unwrap();
    world.send_all_end_of_frame_updates().unwrap();
    drain(&mut world);
    world
}

fn temp_path() -> PathBuf {
    std::env::temp_dir().join(format!("proxima-bench-gltf-{}.glb", std::process::id()))
}

fn main() {
    let pairs = if quick() { 5 } else { 9 };
    let t = Instant::now();
    let (glb, images) = model();
    let path = temp_path();
    std::fs::write(&path, &glb).unwrap();
    println!("gltf bench: made a {:.1} MB .glb in {:.1} s", glb.len() as f64 / 1e6, t.elapsed().as_secs_f64());
    drop(glb);

    // 1. Import vs reading the file and decoding its images.
    let (_, warm) = import_ms(&path);
    assert_eq!(warm.triangle_count(), NODES * QX * QY * 2);
    assert_eq!(warm.textures.len(), MATERIALS * 4);
    drop(warm);
    floor_ms(&path, &images);
    let import = paired(pairs, |arm| match arm {
        Arm::Measured => import_ms(&path).0,
        Arm::Baseline => floor_ms(&path, &images),
    });
    let (_, model) = import_ms(&path);
    let parse = parse_ms(&path);
    let _ = std::fs::remove_file(&path);

    // 2. The model rendered vs as many cubes.
    let mut gltf_world = world();
    let spawned = model.spawn(&mut gltf_world).unwrap();
    assert_eq!(spawned.nodes.iter().flatten().count(), NODES);
    gltf_world.send_all_end_of_frame_updates().unwrap();
    drain(&mut gltf_world);
    let mut cubes = cube_world();
    let ((visible_gltf, draws_gltf), (visible_cubes, draws_cubes)) = (frame(&mut gltf_world), frame(&mut cubes));
    assert_eq!(visible_gltf, NODES, "every node's primitive in view");
    assert_eq!(visible_cubes, NODES, "every cube in view");
    prepare_ms(&mut gltf_world, &mut Vec::new());
    prepare_ms(&mut cubes, &mut Vec::new());
    let (mut gltf_stages, mut cube_stages) = (Vec::new(), Vec::new());
    let prep = paired(pairs * 2, |arm| match arm {
        Arm::Measured => prepare_ms(&mut gltf_world, &mut gltf_stages),
        Arm::Baseline => prepare_ms(&mut cubes, &mut cube_stages),
    });
    // Per world, the median over the measurements of init_views and pass_setup.
    let stage = |stages: &[[f64; 2]], k: usize| median(stages.iter().map(|s| s[k]).collect());
    let ([gltf_init, gltf_setup], [cube_init, cube_setup]) =
        ([0, 1].map(|k| stage(&gltf_stages, k)), [0, 1].map(|k| stage(&cube_stages, k)));
    let per_primitive = prep.measured.scaled(1e6 / NODES as f64);

    println!(
        "gltf: import {:.0} ms vs read + decode 16 images {:.0} ms ({:.2}x, range {:.2}-{:.2} over {} pairs; goal <= 2); prep {:.2} ms for {NODES} imported primitives vs {:.2} ms for {NODES} cubes ({:.2}x, range {:.2}-{:.2}; goal <= 1.2), {:.0} ns/primitive; JSON/GLB parse {parse:.0} ms; base-pass draws {draws_gltf} vs {draws_cubes}; init_views {:.3} vs {:.3} ms, pass_setup {:.3} vs {:.3} ms",
        import.measured.median,
        import.baseline.median,
        import.ratio.median,
        import.ratio.min,
        import.ratio.max,
        import.ratio.n,
        prep.measured.median,
        prep.baseline.median,
        prep.ratio.median,
        prep.ratio.min,
        prep.ratio.max,
        per_primitive.median,
        gltf_init,
        cube_init,
        gltf_setup,
        cube_setup,
    );
    let rows = [
        Row::spread(
            "engine-core: glTF import of a 1M-triangle .glb with 16 textures vs reading it and decoding its images",
            import.ratio,
            "x",
            Some("<= 2"),
        ),
        Row::spread(
            "engine-core: glTF import of a 1M-triangle .glb with 16 1024x1024 textures (10,000 meshes)",
            import.measured,
            "ms",
            None,
        ),
        Row::spread(
            "engine-core: cached frame prep, 10,000 imported glTF primitives vs 10,000 built-in cubes",
            prep.ratio,
            "x",
            Some("<= 1.2"),
        ),
        Row::spread("engine-core: cached frame prep per imported glTF primitive", per_primitive, "ns", None),
        Row::new("engine-core: glTF import's GLB and JSON parse alone (gltf crate, serial)", parse, "ms", None),
        Row::new(
            "engine-core: base-pass draws of 10,000 imported glTF primitives (distinct meshes do not merge)",
            draws_gltf as f64,
            "draws",
            None,
        ),
        Row::new("engine-core: base-pass draws of 10,000 built-in cubes (one mesh: instanced)", draws_cubes as f64, "draws", None),
        Row::new("engine-core: cached frame prep of 10,000 imported glTF primitives, stage init_views", gltf_init, "ms", None),
        Row::new("engine-core: cached frame prep of 10,000 imported glTF primitives, stage pass_setup", gltf_setup, "ms", None),
        Row::new("engine-core: cached frame prep of 10,000 built-in cubes, stage init_views", cube_init, "ms", None),
        Row::new("engine-core: cached frame prep of 10,000 built-in cubes, stage pass_setup", cube_setup, "ms", None),
    ];
    let path = write_rows("engine-core-gltf", &rows).unwrap();
    println!("wrote {}", path.display());
}
