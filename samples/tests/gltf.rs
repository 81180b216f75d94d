//! Runs the `gltf` sample headless: a `.glb` made here (test_support's
//! writer) renders with validation clean, framed, and its `import` stats
//! right; `--camera` and `--scene`; FlightHelmet from `../shared/gltf-samples`
//! when present; bad files and a missing FILE fail as documented.

mod common;

use serde_json::json;
use std::path::{Path, PathBuf};
use std::process::Command;
use test_support::gltf_writer::*;

const BIN: &str = env!("CARGO_BIN_EXE_gltf");

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("proxima-gltf-sample-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Two textured/coloured quads facing glTF's front (+Z), a camera node in
/// front of them, one scene; it uses (not requires) an unsupported extension.
fn model() -> GltfWriter {
    let mut w = GltfWriter::new();
    let rgba: Vec<u8> =
        (0..16 * 16).flat_map(|p| if (p / 16 + p % 16) % 2 == 0 { [230, 40, 30, 255] } else { [240, 220, 40, 255] }).collect();
    let image = w.image_png(16, 16, &rgba);
    let t = w.texture(image, json!({}));
    w.push(
        "materials",
        json!({ "name": "checker", "pbrMetallicRoughness": { "baseColorTexture": { "index": t }, "metallicFactor": 0.0 } }),
    );
    w.push(
        "materials",
        json!({ "name": "blue", "pbrMetallicRoughness": { "baseColorFactor": [0.1, 0.3, 0.9, 1.0], "metallicFactor": 0.0 } }),
    );
    let mut nodes = Vec::new();
    for (m, x) in [(0usize, -1.1f32), (1, 0.1)] {
        let p = w.positions(&[[x, -0.5, 0.0], [x + 1.0, -0.5, 0.0], [x, 0.5, 0.0], [x + 1.0, 0.5, 0.0]]);
        let n = w.floats(&[0.0, 0.0, 1.0].repeat(4), "VEC3");
        let uv = w.floats(&[0.0, 1.0, 1.0, 1.0, 0.0, 0.0, 1.0, 0.0], "VEC2");
        let i = w.indices(&[0, 1, 2, 2, 1, 3], UNSIGNED_SHORT);
        let mesh = w.push(
            "meshes",
            json!({ "primitives": [{ "attributes": { "POSITION": p, "NORMAL": n, "TEXCOORD_0": uv }, "indices": i, "material": m }] }),
        );
        nodes.push(w.push("nodes", json!({ "mesh": mesh })));
    }
    w.push("cameras", json!({ "type": "perspective", "perspective": { "yfov": 0.9, "znear": 0.05, "zfar": 100.0 } }));
    nodes.push(w.push("nodes", json!({ "camera": 0, "translation": [0.0, 0.0, 2.5] })));
    w.push("scenes", json!({ "name": "quads", "nodes": nodes }));
    w.set("scene", json!(0));
    w.set("extensionsUsed", json!(["KHR_materials_sheen"]));
    w
}

fn write_model(dir: &Path) -> PathBuf {
    let path = dir.join("quads.glb");
    std::fs::write(&path, model().to_glb()).unwrap();
    path
}

/// Pixels in the middle third of the picture that differ from the corner's colour.
fn covered_middle(png: &Path) -> (usize, usize) {
    let img = test_support::load_png(png);
    let bg = img.pixel(0, 0);
    let (w, h) = (img.width, img.height);
    let middle: Vec<(u32, u32)> = (h / 3..2 * h / 3).flat_map(|y| (w / 3..2 * w / 3).map(move |x| (x, y))).collect();
    (middle.iter().filter(|&&(x, y)| img.pixel(x, y) != bg).count(), middle.len())
}

#[test]
fn a_generated_glb_renders_clean_framed_with_its_import_stats() {
    let dir = temp_dir("glb");
    let file = write_model(&dir);
    let (png, s) = common::run_sample(BIN, "quads", &[file.to_str().unwrap(), "--frames", "2", "--width", "160", "--height", "120"]);
    let import = s.import.expect("the stats file has import");
    assert_eq!((import.meshes, import.triangles, import.materials, import.textures), (2, 4, 2, 1), "{import:?}");
    assert!(import.ms > 0.0);
    assert_eq!(import.skipped.len(), 1, "{:?}", import.skipped);
    assert!(import.skipped[0].contains("KHR_materials_sheen"), "{:?}", import.skipped);
    assert_eq!(s.primitives, 2, "the file's camera and the sample's sun are no primitives");
    let (covered, of) = covered_middle(&png);
    assert!(covered * 2 > of, "the model fills the middle: {covered} of {of} pixels");
    // Through the file's camera: the quads are in front of it.
    let (png, s) = common::run_sample(BIN, "quads-camera", &[file.to_str().unwrap(), "--camera", "--width", "160", "--height", "120"]);
    assert_eq!(s.import.expect("import").meshes, 2);
    let (covered, of) = covered_middle(&png);
    assert!(covered * 2 > of, "--camera sees the model: {covered} of {of} pixels");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn flight_helmet_renders_in_the_middle_of_the_picture() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/gltf-samples/FlightHelmet/FlightHelmet.gltf");
    if !path.exists() {
        println!("skipped: {} is absent", path.display());
        return;
    }
    let (png, s) = common::run_sample(BIN, "flight-helmet", &[path.to_str().unwrap(), "--width", "320", "--height", "240"]);
    let import = s.import.expect("import");
    assert_eq!((import.meshes, import.materials, import.textures), (6, 6, 15), "{import:?}");
    assert!(import.triangles > 40_000 && import.skipped.is_empty(), "{import:?}");
    let (covered, of) = covered_middle(&png);
    // The helmet is narrow: about 40% of the middle third is it.
    assert!(covered * 4 > of, "the helmet is in the middle: {covered} of {of} pixels");
}

/// The Fox plays its animations: the stats say what it carries, the run
/// animation moves it (two times differ), and a run at a fixed time step
/// is the same serial and parallel.
#[test]
fn the_fox_runs_its_animation_repeatably() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/gltf-samples/Fox/Fox.glb");
    if !path.exists() {
        println!("skipped: {} is absent", path.display());
        return;
    }
    let run = |tag: &str, frames: &str, extra: &[&str]| {
        let mut args = vec![path.to_str().unwrap(), "--width", "200", "--height", "150", "--fixed-dt", "0.1", "--frames", frames];
        args.extend_from_slice(extra);
        common::run_sample(BIN, tag, &args)
    };
    let (png, s) = run("fox-run", "4", &["--animation", "2"]);
    let import = s.import.as_ref().expect("import");
    assert_eq!((import.skins, import.animations, import.morph_targets), (1, 3, 0), "{import:?}");
    assert!(import.skipped.is_empty(), "{import:?}");
    let skinned = s.skinned.as_ref().expect("skinned");
    assert_eq!((skinned.meshes, skinned.morph_targets), (1, 0));
    assert!(skinned.joints >= 24, "{skinned:?}");
    assert_eq!(s.mesh_draw_commands_built.cached, 0, "the pose changes no command after the first frame: {:?}", s.mesh_draw_commands_built);
    let (png_later, _) = run("fox-run-later", "5", &["--animation", "2"]);
    let (a, b) = (test_support::load_png(&png), test_support::load_png(&png_later));
    assert_ne!(a.rgba8, b.rgba8, "the fox moves between frames");
    let (serial, _) = run("fox-run-serial", "4", &["--animation", "2", "--serial"]);
    test_support::assert_images_equal(&a, &test_support::load_png(&serial), "the running fox: --serial vs parallel");
    // A bad index is exit 1 naming the option.
    let out = std::process::Command::new(BIN).args([path.to_str().unwrap(), "--headless", "--animation", "7"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--animation 7"), "{}", String::from_utf8_lossy(&out.stderr));
    let list = std::process::Command::new(BIN).args([path.to_str().unwrap(), "--list-animations"]).output().unwrap();
    assert!(list.status.success());
    assert!(String::from_utf8_lossy(&list.stdout).contains("2: Run"), "{}", String::from_utf8_lossy(&list.stdout));
}

#[test]
fn flight_helmet_at_1280x720_has_the_files_colours_and_no_speckle() {
    // Issue 35: textured surfaces were speckled with their textures'
    // smallest mips and the olive hose came out brown (4.85% impulse noise,
    // the hose's mean green/red 0.67). What the file says: its base colour
    // texture's hose is (70, 63, 48), green/red 0.90.
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/gltf-samples/FlightHelmet/FlightHelmet.gltf");
    if !path.exists() {
        println!("skipped: {} is absent", path.display());
        return;
    }
    let (png, _) = common::run_sample(BIN, "flight-helmet-720p", &[path.to_str().unwrap(), "--width", "1280", "--height", "720"]);
    let image = test_support::load_png(&png);
    let mask = test_support::image_metrics::foreground_mask(&image, test_support::image_metrics::background_colour(&image));
    let noise = test_support::image_metrics::impulse_noise_share(&image, &mask);
    println!("FlightHelmet at 1280x720: impulse-noise share {:.2}% ({noise:?})", 100.0 * noise.share());
    // 1.94% with one shadow map fitted round the model; its four shadow
    // cascades (issue 37) sharpen the self-shadows' edges to 2.00%. What
    // remains is geometric and shadow edges (anti-aliasing is issue 38);
    // the speckle this guards against was 4.85%.
    assert!(noise.share() <= 0.021, "impulse-noise share {:.2}% (at most 2.1%): {noise:?}", 100.0 * noise.share());
    // The hose's vertical run, framed by the sample at this size.
    let (mut r, mut g) = (0u32, 0u32);
    for y in 400..440 {
        for x in 605..635 {
            let p = image.pixel(x, y);
            r += u32::from(p[0]);
            g += u32::from(p[1]);
        }
    }
    let green_over_red = f64::from(g) / f64::from(r);
    assert!(green_over_red > 0.8, "the hose is olive, not brown: green/red {green_over_red:.2}");
}

fn run_failing(args: &[&str]) -> (Option<i32>, String) {
    let out = Command::new(BIN).arg("--headless").args(args).output().unwrap();
    (out.status.code(), String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn bad_files_exit_1_naming_the_problem_and_no_file_is_a_usage_error() {
    let dir = temp_dir("bad");
    let glb = model().to_glb();
    let truncated = dir.join("truncated.glb");
    std::fs::write(&truncated, &glb[..glb.len() - 10]).unwrap();
    let (code, stderr) = run_failing(&[truncated.to_str().unwrap()]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("truncated.glb") && stderr.contains("malformed .glb"), "{stderr}");

    let mut bad = model();
    bad.json["accessors"][0]["count"] = json!(400);
    let bad_accessor = dir.join("bad_accessor.gltf");
    std::fs::write(&bad_accessor, bad.to_gltf()).unwrap();
    let (code, stderr) = run_failing(&[bad_accessor.to_str().unwrap()]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("/meshes/0/primitives/0/attributes/POSITION"), "the JSON path: {stderr}");

    let file = write_model(&dir);
    let (code, stderr) = run_failing(&[file.to_str().unwrap(), "--scene", "3"]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("/scenes/3"), "{stderr}");

    let (code, stderr) = run_failing(&[dir.join("absent.glb").to_str().unwrap()]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("absent.glb"), "{stderr}");

    let (code, stderr) = run_failing(&[]);
    assert_eq!(code, Some(2), "no FILE is a usage error: {stderr}");
    let _ = std::fs::remove_dir_all(dir);
}

/// Window mode under Xvfb (`PROXIMA_TEST_WINDOW=1`, as `tests/window.rs`):
/// the load runs while the window renders; the `--frames` run's last frame
/// waits for it, so the model and its `import` stats are there.
#[test]
fn a_window_renders_while_the_model_loads_under_xvfb() {
    if std::env::var("PROXIMA_TEST_WINDOW").as_deref() != Ok("1") || cfg!(not(feature = "window")) {
        eprintln!("skipped: set PROXIMA_TEST_WINDOW=1 (and install xvfb) to run the window test");
        return;
    }
    let dir = temp_dir("window");
    let file = write_model(&dir);
    let stats = dir.join("window.json");
    let out = Command::new("xvfb-run")
        .args(["-a", "-s", "-screen 0 1024x768x24"])
        .arg(BIN)
        .arg(&file)
        .args(["--window", "--frames", "5", "--width", "320", "--height", "240", "--stats"])
        .arg(&stats)
        .output()
        .expect("xvfb-run (apt-get install xvfb)");
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "exit {:?}\n{stdout}\n{stderr}", out.status);
    assert!(stdout.contains("window closed after 5 frame(s)"), "it did not run in a window:\n{stdout}\n{stderr}");
    assert!(stdout.contains("validation on (0 errors, 0 warnings)"), "{stdout}\n{stderr}");
    let s = samples::SampleStats::read(&stats).unwrap();
    assert_eq!(s.import.expect("import").meshes, 2);
    assert_eq!(s.primitives, 2);
    let _ = std::fs::remove_dir_all(dir);
}
