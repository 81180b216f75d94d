//! Proxima's image of each shared glTF model against a reference renderer
//! no one here wrote: the Khronos glTF Sample Viewer's engine, whose images
//! `cargo xtask reference` renders (headless Chromium) into
//! `target/reference/<model stem>/` — `cargo xtask ci` renders them before
//! the tests; here nothing is installed, and a model without a reference
//! prints a skip line and passes.
//!
//! Both sides show the scene the `gltf` sample frames: the sample's camera,
//! its sun as the one light (a `KHR_lights_punctual` directional light on
//! the viewer's side), no ambient or environment, no shadows, no tone
//! mapping (linear, clamped, sRGB-encoded), no anti-aliasing, the same
//! size. Proxima runs with [`REFERENCE_CVARS`]; its `--reference-scene`
//! file must match the one the reference was rendered with (else the
//! reference is stale: render it again).
//!
//! What must agree (see `test_support::image_metrics` for the measures):
//!
//! - **The silhouette**: intersection over union of the two foreground
//!   masks ≥ [`MIN_SILHOUETTE_IOU`] — the same model seen from the same
//!   place at the same size (rasterisation differs at edges only).
//! - **Mean colour per region**: an 8×8 grid over the bounding box of the
//!   reference's silhouette; in every cell where the reference has at least
//!   [`MIN_CELL_COVERAGE`] of the cell's pixels as foreground, Proxima has
//!   foreground there too, and the two mean colours (over each image's own
//!   foreground pixels in the cell, sRGB-encoded 0..255) differ by at most
//!   [`MAX_CELL_DIFF`] in every channel. Why 8 levels: what two correct
//!   renderers of this scene may differ in — rasterisation at edges,
//!   texture filtering (mip selection, anisotropy: filtering keeps a
//!   texture's mean), tangent generation, the viewer's `pow(1/2.2)` output
//!   (re-encoded to sRGB, ≤ 1 level left) — moves a mean over the
//!   hundreds to thousands of pixels of a cell by a level or two: on the
//!   untextured shared models (alien, craft_speederD: factor colours, so
//!   camera, light, BRDF and encoding alone) every cell of Proxima's image
//!   is within 1.0 of the reference's. 8 levels are 7–14 % of the linear
//!   radiance in the mid-tones (sRGB 100–200), less than a wrong texture
//!   channel, a colour space applied twice, a missing or extra π, or a
//!   misplaced light produce.
//! - **Speckle**: Proxima's impulse-noise share ≤ [`MAX_NOISE_RATIO`] × the
//!   reference's + [`NOISE_FLOOR`] (the floor, 0.1 % of the pixels, is for
//!   models with almost no texture detail, where a few pixels of
//!   stair-stepping at internal edges would otherwise decide).
//!
//! On failure both images, a difference image (|Δ| × 4, with the grid; the
//! failing cells outlined in red) and the per-cell table are written to
//! `target/test-output/gltf-reference-<stem>-*.png`. Every model's figures
//! are printed (`-- --nocapture`).

mod common;

use serde_json::Value;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use test_support::image_metrics::{self, CellMean, Mask, NoiseShare, Rect};

const BIN: &str = env!("CARGO_BIN_EXE_gltf");

/// Proxima's side of a reference comparison (xtask's `PROXIMA_REFERENCE_CVARS`).
const REFERENCE_CVARS: &[&str] = &["r.Shadow.Enable=0", "r.SkyLight.Intensity=0", "r.Tonemapper=0", "r.Shading.SpecularAAVariance=0"];
/// Cells per side of the grid over the silhouette.
const GRID: u32 = 8;
/// A cell counts when the reference covers at least this share of it.
const MIN_CELL_COVERAGE: f64 = 0.10;
/// The largest per-channel difference of a cell's mean colours (of 255).
const MAX_CELL_DIFF: f64 = 8.0;
/// Proxima's impulse-noise share may be at most this times the reference's ...
const MAX_NOISE_RATIO: f64 = 1.5;
/// ... plus this.
const NOISE_FLOOR: f64 = 0.001;
/// The silhouettes' intersection over union.
const MIN_SILHOUETTE_IOU: f64 = 0.9;

fn shared_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/gltf-samples")
}

/// The one `.gltf`/`.glb` of each folder of `dir`, sorted.
fn shared_models(dir: &Path) -> Vec<PathBuf> {
    let mut models: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .filter_map(|d| {
            let files: Vec<PathBuf> = std::fs::read_dir(&d)
                .ok()?
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|e| e.eq_ignore_ascii_case("gltf") || e.eq_ignore_ascii_case("glb")))
                .collect();
            (files.len() == 1).then(|| files[0].clone())
        })
        .collect();
    models.sort();
    models
}

#[test]
fn proxima_matches_the_gltf_sample_viewer_on_the_shared_models() {
    let dir = shared_dir();
    if !dir.is_dir() {
        println!("skip: {} is absent; no reference comparison", dir.display());
        return;
    }
    let mut failures = Vec::new();
    let mut compared = 0;
    for model in shared_models(&dir) {
        let stem = model.file_stem().unwrap().to_string_lossy().into_owned();
        let reference_dir = test_support::target_dir().join("reference").join(&stem);
        if !reference_dir.join("reference.png").is_file() || !reference_dir.join("scene.json").is_file() {
            println!(
                "skip: no reference for {stem}; run cargo xtask reference --install {} (Chromium and the Khronos glTF Sample Viewer)",
                model.display()
            );
            continue;
        }
        compared += 1;
        let report = compare(&model, &stem, &reference_dir);
        println!("{}", report.text);
        if !report.passed {
            failures.push(report.text);
        }
    }
    if compared == 0 {
        println!("skip: no model had a reference");
    }
    assert!(failures.is_empty(), "{} of {compared} model(s) differ from the reference:\n\n{}", failures.len(), failures.join("\n\n"));
}

struct Report {
    passed: bool,
    text: String,
}

/// Renders `model` with Proxima as the reference in `reference_dir` was
/// rendered, and compares the two images.
fn compare(model: &Path, stem: &str, reference_dir: &Path) -> Report {
    let record: Value = serde_json::from_str(&std::fs::read_to_string(reference_dir.join("scene.json")).unwrap())
        .unwrap_or_else(|e| panic!("{}: {e}", reference_dir.join("scene.json").display()));
    let cvars: Vec<&str> = record["proxima"]["cvars"].as_array().map(|a| a.iter().filter_map(Value::as_str).collect()).unwrap_or_default();
    assert_eq!(cvars, REFERENCE_CVARS, "{stem}: the reference was rendered for other Proxima settings; run cargo xtask reference again");
    let scene = &record["scene"];
    let (width, height) = (scene["width"].as_u64().unwrap(), scene["height"].as_u64().unwrap());

    let scene_path = std::env::temp_dir().join(format!("proxima-gltf-reference-{}-{stem}.json", std::process::id()));
    let (w, h, model_arg, scene_arg) =
        (width.to_string(), height.to_string(), model.display().to_string(), scene_path.display().to_string());
    // No anti-aliasing, as on the reference's side.
    let mut args = vec![
        model_arg.as_str(),
        "--width",
        &w,
        "--height",
        &h,
        "--reference-scene",
        &scene_arg,
        "--aa",
        "none",
        "--environment",
        "hemisphere",
        // The reference viewer shows skinned models in their rest pose.
        "--animation",
        "none",
    ];
    for cvar in REFERENCE_CVARS {
        args.extend(["--cvar", cvar]);
    }
    let (png, _) = common::run_sample(BIN, &format!("reference-{stem}"), &args);
    let ours: Value = serde_json::from_str(&std::fs::read_to_string(&scene_path).unwrap()).unwrap();
    let _ = std::fs::remove_file(&scene_path);
    if let Some(difference) = scene_difference(&ours, scene) {
        panic!(
            "{stem}: the reference in {} was rendered for another scene ({difference}); run cargo xtask reference again",
            reference_dir.display()
        );
    }

    let proxima = test_support::load_png(&png);
    let reference = test_support::load_png(&reference_dir.join("reference.png"));
    assert_eq!((proxima.width, proxima.height), (reference.width, reference.height), "{stem}: image sizes");
    let reference_mask = image_metrics::foreground_mask(&reference, image_metrics::background_colour(&reference));
    let proxima_mask = image_metrics::foreground_mask(&proxima, image_metrics::background_colour(&proxima));
    let bbox = reference_mask.bounding_box().unwrap_or_else(|| panic!("{stem}: the reference image is all background"));
    let cell_area = f64::from((bbox.x1 - bbox.x0) / GRID) * f64::from((bbox.y1 - bbox.y0) / GRID);
    let min_pixels = ((MIN_CELL_COVERAGE * cell_area).ceil() as usize).max(1);
    let reference_cells = image_metrics::region_means(&reference, &reference_mask, bbox, GRID, min_pixels);
    // Proxima's mean is over whatever foreground it has in the cell (one
    // pixel is enough to have a mean; coverage is the silhouette check's).
    let proxima_cells = image_metrics::region_means(&proxima, &proxima_mask, bbox, GRID, 1);
    let reference_noise = image_metrics::impulse_noise_share(&reference, &reference_mask);
    let proxima_noise = image_metrics::impulse_noise_share(&proxima, &proxima_mask);
    let iou = reference_mask.iou(&proxima_mask);

    let cells = compare_cells(&reference_cells, &proxima_cells);
    let failing: Vec<usize> = cells.iter().enumerate().filter(|(_, c)| c.fails()).map(|(i, _)| i).collect();
    let noise_limit = MAX_NOISE_RATIO * reference_noise.share() + NOISE_FLOOR;
    let noise_ok = proxima_noise.share() <= noise_limit;
    let iou_ok = iou >= MIN_SILHOUETTE_IOU;
    let passed = failing.is_empty() && noise_ok && iou_ok;

    let text = report_text(stem, &cells, &failing, (&reference_noise, &proxima_noise, noise_limit), iou, passed);
    if !passed {
        let out = |what: &str| format!("gltf-reference-{stem}-{what}");
        let written = [
            test_support::save_test_output(&proxima, &out("proxima")),
            test_support::save_test_output(&reference, &out("reference")),
            test_support::save_test_output(
                &diff_with_grid((&proxima, &proxima_mask), (&reference, &reference_mask), bbox, &failing),
                &out("diff"),
            ),
        ];
        let names: Vec<String> = written.iter().map(|p| p.display().to_string()).collect();
        return Report { passed, text: format!("{text}\nimages: {}", names.join(", ")) };
    }
    Report { passed, text }
}

/// The first way the sample's `--reference-scene` output differs from the
/// scene a reference was rendered with (the model's path aside), if any.
fn scene_difference(ours: &Value, theirs: &Value) -> Option<String> {
    for key in ["width", "height", "scene"] {
        if ours[key] != theirs[key] {
            return Some(format!("{key}: {} vs {}", ours[key], theirs[key]));
        }
    }
    let fields = [
        ("camera", "eye"),
        ("camera", "target"),
        ("camera", "up"),
        ("camera", "yfov"),
        ("camera", "aspect"),
        ("camera", "znear"),
        ("camera", "zfar"),
        ("sun", "direction"),
        ("sun", "color"),
        ("sun", "intensity"),
    ];
    for (group, field) in fields {
        let (a, b) = (&ours[group][field], &theirs[group][field]);
        let numbers = |v: &Value| -> Vec<f64> {
            match v {
                Value::Array(a) => a.iter().filter_map(Value::as_f64).collect(),
                v => v.as_f64().into_iter().collect(),
            }
        };
        let (na, nb) = (numbers(a), numbers(b));
        let close = na.len() == nb.len() && !na.is_empty() && na.iter().zip(&nb).all(|(x, y)| (x - y).abs() <= 1e-4 * (1.0 + x.abs()));
        if !close {
            return Some(format!("{group}.{field}: {a} vs {b}"));
        }
    }
    None
}

/// One grid cell's comparison.
#[derive(Clone, Copy, Debug)]
enum Cell {
    /// Too little of the model in the reference's cell to compare.
    Skipped,
    /// The reference has the model here, Proxima nothing.
    Missing {
        reference: CellMean,
    },
    Compared {
        reference: CellMean,
        proxima: CellMean,
        diff: f64,
    },
}

impl Cell {
    fn fails(&self) -> bool {
        match self {
            Cell::Skipped => false,
            Cell::Missing { .. } => true,
            Cell::Compared { diff, .. } => *diff > MAX_CELL_DIFF,
        }
    }
}

fn compare_cells(reference: &[Option<CellMean>], proxima: &[Option<CellMean>]) -> Vec<Cell> {
    reference
        .iter()
        .zip(proxima)
        .map(|(r, p)| match (r, p) {
            (None, _) => Cell::Skipped,
            (Some(r), None) => Cell::Missing { reference: *r },
            (Some(r), Some(p)) => Cell::Compared { reference: *r, proxima: *p, diff: image_metrics::max_channel_diff(r.mean, p.mean) },
        })
        .collect()
}

/// The figures of one model: the silhouettes, the noise shares, the grid of
/// per-cell differences and the failing cells' colours.
fn report_text(stem: &str, cells: &[Cell], failing: &[usize], noise: (&NoiseShare, &NoiseShare, f64), iou: f64, passed: bool) -> String {
    let (reference_noise, proxima_noise, noise_limit) = noise;
    let diffs: Vec<f64> = cells.iter().filter_map(|c| if let Cell::Compared { diff, .. } = c { Some(*diff) } else { None }).collect();
    let compared = cells.iter().filter(|c| !matches!(c, Cell::Skipped)).count();
    let mean_diff = if diffs.is_empty() { 0.0 } else { diffs.iter().sum::<f64>() / diffs.len() as f64 };
    let max_diff = diffs.iter().copied().fold(0.0, f64::max);
    let mut s = String::new();
    let _ = writeln!(s, "{stem}: {}", if passed { "matches the reference" } else { "DIFFERS from the reference" });
    let _ = writeln!(s, "  silhouette IoU {iou:.3} (>= {MIN_SILHOUETTE_IOU} required)");
    let _ = writeln!(
        s,
        "  impulse noise: Proxima {:.2}% ({} of {}), reference {:.2}% ({} of {}); limit {:.2}% ({MAX_NOISE_RATIO} x reference + {:.1}%)",
        100.0 * proxima_noise.share(),
        proxima_noise.noisy,
        proxima_noise.counted,
        100.0 * reference_noise.share(),
        reference_noise.noisy,
        reference_noise.counted,
        100.0 * noise_limit,
        100.0 * NOISE_FLOOR
    );
    let _ = writeln!(
        s,
        "  region means ({GRID}x{GRID} cells, {compared} with the model): {} of {compared} off by more than {MAX_CELL_DIFF}/255; max channel |diff| mean {mean_diff:.1}, max {max_diff:.1}",
        failing.len()
    );
    let _ = writeln!(s, "  per-cell max channel |diff| (of 255; '.': skipped, 'miss': no Proxima pixels; '*': over the limit):");
    for row in 0..GRID as usize {
        let mut line = String::from("   ");
        for col in 0..GRID as usize {
            let cell = cells[row * GRID as usize + col];
            let text = match cell {
                Cell::Skipped => ".".to_string(),
                Cell::Missing { .. } => "miss".to_string(),
                Cell::Compared { diff, .. } => format!("{diff:.1}{}", if cell.fails() { "*" } else { "" }),
            };
            let _ = write!(line, " {text:>6}");
        }
        let _ = writeln!(s, "{line}");
    }
    let rgb = |m: [f64; 3]| format!("({:.0}, {:.0}, {:.0})", m[0], m[1], m[2]);
    for &i in failing.iter().take(64) {
        let (row, col) = (i / GRID as usize, i % GRID as usize);
        match cells[i] {
            Cell::Compared { reference, proxima, diff } => {
                let _ = writeln!(
                    s,
                    "  cell row {row} col {col}: Proxima {} vs reference {} (|diff| {diff:.1}; {} vs {} pixels)",
                    rgb(proxima.mean),
                    rgb(reference.mean),
                    proxima.pixels,
                    reference.pixels
                );
            }
            Cell::Missing { reference } => {
                let _ = writeln!(
                    s,
                    "  cell row {row} col {col}: no Proxima pixels; reference {} over {} pixels",
                    rgb(reference.mean),
                    reference.pixels
                );
            }
            Cell::Skipped => {}
        }
    }
    s.trim_end().to_string()
}

/// |proxima − reference| × 4 (black where neither image has the model),
/// with the grid drawn in grey over `bbox` and the failing cells outlined
/// in red.
fn diff_with_grid(
    (proxima, proxima_mask): (&rhi_vulkan::Image, &Mask),
    (reference, reference_mask): (&rhi_vulkan::Image, &Mask),
    bbox: Rect,
    failing: &[usize],
) -> rhi_vulkan::Image {
    let mut img = image_metrics::diff_image(proxima, reference, 4.0);
    for (i, (a, b)) in proxima_mask.bits.iter().zip(&reference_mask.bits).enumerate() {
        if !a && !b {
            img.rgba8[i * 4..i * 4 + 3].fill(0);
        }
    }
    let width = img.width as usize;
    let mut put = |x: u32, y: u32, c: [u8; 4]| {
        let i = (y as usize * width + x as usize) * 4;
        img.rgba8[i..i + 4].copy_from_slice(&c);
    };
    let cells = image_metrics::grid_cells(bbox, GRID);
    let mut outline = |r: &Rect, c: [u8; 4]| {
        for x in r.x0..r.x1 {
            put(x, r.y0, c);
            put(x, r.y1 - 1, c);
        }
        for y in r.y0..r.y1 {
            put(r.x0, y, c);
            put(r.x1 - 1, y, c);
        }
    };
    for r in cells.iter().filter(|r| r.x1 > r.x0 && r.y1 > r.y0) {
        outline(r, [90, 90, 90, 255]);
    }
    for &i in failing {
        let r = cells[i];
        if r.x1 > r.x0 && r.y1 > r.y0 {
            outline(&r, [255, 40, 40, 255]);
        }
    }
    img
}

#[test]
fn a_scene_that_moved_is_a_stale_reference() {
    let scene = serde_json::json!({
        "width": 64, "height": 48, "scene": null,
        "camera": { "eye": [0, 1, 2], "target": [0, 0, 0], "up": [0, 1, 0], "yfov": 1.0, "aspect": 1.333, "znear": 0.1, "zfar": 9.0 },
        "sun": { "direction": [0, -1, 0], "color": [1, 1, 1], "intensity": 3.0 },
    });
    assert_eq!(scene_difference(&scene, &scene), None);
    let mut moved = scene.clone();
    moved["camera"]["eye"][2] = serde_json::json!(2.01);
    assert!(scene_difference(&moved, &scene).unwrap().contains("camera.eye"));
    let mut resized = scene.clone();
    resized["width"] = serde_json::json!(65);
    assert!(scene_difference(&resized, &scene).unwrap().contains("width"));
}
