//! `cargo xtask reference MODEL`: the reference image of a glTF model,
//! rendered by a renderer no one here wrote — the Khronos glTF Sample
//! Viewer's engine (npm `@khronosgroup/gltf-viewer`, [`VIEWER_VERSION`])
//! in headless Chromium (Debian `chromium`; WebGL 2 on its SwiftShader
//! software renderer) — with the scene the `gltf` sample shows:
//!
//! 1. The `gltf` sample (dev profile, as the tests build it) renders the
//!    model with [`PROXIMA_REFERENCE_CVARS`] (no shadows, no ambient, no tone
//!    mapping) and `--reference-scene`, which writes the camera, the sun and
//!    the frame size in glTF's axes; its image is kept as `proxima.png`.
//! 2. The model's JSON gets that camera and that sun as one
//!    `KHR_lights_punctual` directional light ([`inject_scene`]; the file's
//!    own lights are dropped, so the sun is the only light).
//! 3. A local HTTP server (`127.0.0.1`, a free port) serves the page in
//!    `xtask/reference/`, the viewer's files and the model; Chromium opens
//!    it, the page renders with no IBL or environment, tone mapping "None",
//!    no anti-aliasing and the background [`BACKGROUND`], and posts the
//!    pixels back.
//! 4. The viewer's output encoding is `pow(linear, 1/2.2)`, not sRGB's
//!    curve; the pixels are re-encoded to exact sRGB ([`gamma22_to_srgb`])
//!    so they compare with Proxima's sRGB output value for value.
//!
//! Output: `target/reference/<model stem>/reference.png`, `proxima.png`,
//! `scene.json` (what it was rendered with: the sample's scene, the viewer
//! and Chromium versions, the settings) and `chromium.log`. References are
//! generated, never committed; `samples/tests/gltf_reference.rs` compares
//! Proxima's image with them.
//!
//! Installing: only with `--install` (and always in `cargo xtask ci`): the
//! Debian packages `chromium` (and `nodejs`, `npm` when npm is missing)
//! with apt-get as root, then the viewer (and the glTF Validator, see
//! [`crate::gltf_validator`]; one manifest pins both) with npm into
//! `target/reference-tools/`. `cargo xtask test` never installs them.

use crate::Result;
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

/// The npm package and the exact version installed.
pub const VIEWER_PACKAGE: &str = "@khronosgroup/gltf-viewer";
/// Pinned: a newer viewer may shade differently, and references should not
/// move under the tests without a commit saying so.
pub const VIEWER_VERSION: &str = "1.1.0";
/// The console variables of Proxima's side of a reference comparison.
pub const PROXIMA_REFERENCE_CVARS: &[&str] =
    &["r.Shadow.Enable=0", "r.SkyLight.Intensity=0", "r.Tonemapper=0", "r.Shading.SpecularAAVariance=0"];
/// The reference's background (RGBA): a colour no shared model has, so the
/// silhouette is every other pixel (the viewer writes it as is).
pub const BACKGROUND: [u8; 4] = [255, 0, 255, 255];
/// How long Chromium may take to load and render one model.
const RENDER_TIMEOUT: Duration = Duration::from_secs(300);

/// The page and its script, served at `/harness.html` and `/harness.js`.
const HARNESS_HTML: &str = include_str!("../reference/harness.html");
const HARNESS_JS: &str = include_str!("../reference/harness.js");

/// `target/` (`CARGO_TARGET_DIR` when set).
pub fn target_dir() -> PathBuf {
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(dir) => PathBuf::from(dir),
        None => crate::workspace_root().join("target"),
    }
}

/// Where `--install` puts the npm tools ([`NPM_TOOLS`]): `target/reference-tools/`.
pub(crate) fn tools_dir() -> PathBuf {
    target_dir().join("reference-tools")
}

/// Every npm package xtask installs into [`tools_dir`], pinned: one manifest
/// lists them all, so installing one never prunes another.
pub(crate) const NPM_TOOLS: &[(&str, &str)] =
    &[(VIEWER_PACKAGE, VIEWER_VERSION), (crate::gltf_validator::VALIDATOR_PACKAGE, crate::gltf_validator::VALIDATOR_VERSION)];

/// The viewer's `dist/` folder.
fn viewer_dist() -> PathBuf {
    tools_dir().join("node_modules").join(VIEWER_PACKAGE).join("dist")
}

/// The shared glTF models (`../shared/gltf-samples/` beside the workspace).
pub fn shared_models_dir() -> PathBuf {
    crate::workspace_root().join("..").join("shared").join("gltf-samples")
}

/// The `.gltf` / `.glb` file of each folder of `dir` (sorted), for `ci`.
pub fn shared_models(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut models: Vec<PathBuf> = entries.flatten().map(|e| e.path()).filter(|p| p.is_dir()).filter_map(|d| model_in(&d)).collect();
    models.sort();
    models
}

/// The one `.gltf` or `.glb` in `dir`, if there is exactly one.
fn model_in(dir: &Path) -> Option<PathBuf> {
    let entries = std::fs::read_dir(dir).ok()?;
    let mut found: Vec<PathBuf> = entries.flatten().map(|e| e.path()).filter(|p| is_model(p)).collect();
    (found.len() == 1).then(|| found.remove(0))
}

pub(crate) fn is_model(path: &Path) -> bool {
    matches!(path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase).as_deref(), Some("gltf" | "glb"))
}

/// The first executable named one of `names` on `PATH`.
pub(crate) fn which(names: &[&str]) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    names.iter().find_map(|n| std::env::split_paths(&path).map(|d| d.join(n)).find(|p| p.is_file()))
}

fn chromium() -> Option<PathBuf> {
    which(&["chromium", "chromium-browser"])
}

/// The installed version of the npm `package` in [`tools_dir`], if any.
pub(crate) fn installed_npm_version(package: &str) -> Option<String> {
    let text = std::fs::read_to_string(tools_dir().join("node_modules").join(package).join("package.json")).ok()?;
    let v: Value = serde_json::from_str(&text).ok()?;
    v["version"].as_str().map(String::from)
}

fn installed_viewer_version() -> Option<String> {
    installed_npm_version(VIEWER_PACKAGE)
}

/// What is missing to render references (empty: ready).
fn missing() -> Vec<String> {
    let mut missing = Vec::new();
    if chromium().is_none() {
        missing.push("Chromium (Debian package `chromium`)".to_string());
    }
    match installed_viewer_version() {
        Some(v) if v == VIEWER_VERSION => {}
        Some(v) => missing.push(format!("{VIEWER_PACKAGE} {VIEWER_VERSION} (found {v} in {})", tools_dir().display())),
        None => missing.push(format!("{VIEWER_PACKAGE} {VIEWER_VERSION} (npm, in {})", tools_dir().display())),
    }
    missing
}

/// Installs what is missing: `chromium` (and `nodejs npm` without npm)
/// with apt-get, the viewer with npm into `target/reference-tools/`.
pub fn install() -> Result<()> {
    let mut packages = Vec::new();
    if chromium().is_none() {
        packages.push("chromium");
    }
    apt_install_with_npm(packages, "the reference renderer")?;
    npm_install_tools()?;
    let still = missing();
    if still.is_empty() {
        Ok(())
    } else {
        Err(format!("installed, but still missing: {}", still.join(", ")))
    }
}

/// Installs the Debian `packages` and, when npm is missing, `nodejs npm`,
/// with apt-get as root (never with `PROXIMA_NO_INSTALL`); `purpose` says
/// what needs them.
pub(crate) fn apt_install_with_npm(mut packages: Vec<&str>, purpose: &str) -> Result<()> {
    if which(&["npm"]).is_none() {
        packages.extend(["nodejs", "npm"]);
    }
    if packages.is_empty() {
        return Ok(());
    }
    let env = crate::vulkan::Env::from_process();
    if env.no_install() {
        return Err(format!("{} missing and PROXIMA_NO_INSTALL is set: sudo apt-get install {}", packages.join(" "), packages.join(" ")));
    }
    if !env.debian() || !env.root {
        return Err(format!(
            "{purpose} needs {}: on Debian/Ubuntu, as root: apt-get install {} (this is not Debian with apt-get as root, so nothing is installed)",
            packages.join(" "),
            packages.join(" ")
        ));
    }
    eprintln!("xtask: installing {} with apt-get for {purpose}", packages.join(" "));
    crate::vulkan::apt_get_install(&packages)
}

/// Installs [`NPM_TOOLS`] with npm into [`tools_dir`] unless each is there
/// at its pinned version.
pub(crate) fn npm_install_tools() -> Result<()> {
    if NPM_TOOLS.iter().all(|(p, v)| installed_npm_version(p).as_deref() == Some(*v)) {
        return Ok(());
    }
    let dir = tools_dir();
    std::fs::create_dir_all(&dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
    let dependencies: serde_json::Map<String, Value> = NPM_TOOLS.iter().map(|(p, v)| (p.to_string(), json!(v))).collect();
    let manifest = json!({
        "name": "proxima-reference-tools",
        "private": true,
        "description": "written by cargo xtask (reference / validate-gltf --install)",
        "dependencies": dependencies,
    });
    std::fs::write(dir.join("package.json"), serde_json::to_string_pretty(&manifest).expect("JSON") + "\n")
        .map_err(|e| format!("writing {}: {e}", dir.join("package.json").display()))?;
    let list: Vec<String> = NPM_TOOLS.iter().map(|(p, v)| format!("{p}@{v}")).collect();
    eprintln!("xtask: installing {} with npm into {}", list.join(" "), dir.display());
    let status = Command::new("npm")
        .args(["install", "--no-audit", "--no-fund", "--loglevel=error"])
        .current_dir(&dir)
        .status()
        .map_err(|e| format!("running npm: {e}"))?;
    if !status.success() {
        return Err(format!("npm install in {} failed", dir.display()));
    }
    Ok(())
}

/// `cargo xtask reference MODEL`: see the module docs.
pub fn reference(model: &Path, width: u32, height: u32, install_tools: bool) -> Result<ExitCode> {
    let model = resolve_model(model)?;
    if install_tools {
        install()?;
    }
    let missing = missing();
    if !missing.is_empty() {
        return Err(format!(
            "the reference renderer is not installed (missing: {}); run `cargo xtask reference --install {}` \
             (apt-get install chromium, npm install {VIEWER_PACKAGE}@{VIEWER_VERSION} into {})",
            missing.join(", "),
            model.display(),
            tools_dir().display()
        ));
    }
    crate::vulkan::ensure("reference", crate::vulkan::RUN)?;
    render_reference(&model, width, height)?;
    Ok(ExitCode::SUCCESS)
}

/// A model file, or a folder holding exactly one.
fn resolve_model(model: &Path) -> Result<PathBuf> {
    let model = if model.is_dir() {
        model_in(model).ok_or_else(|| format!("{}: no single .gltf or .glb file in this folder", model.display()))?
    } else {
        model.to_path_buf()
    };
    if !model.is_file() || !is_model(&model) {
        return Err(format!("{}: not a .gltf or .glb file", model.display()));
    }
    model.canonicalize().map_err(|e| format!("{}: {e}", model.display()))
}

/// The model's stem: the name of its folder under `target/reference/`.
pub fn model_stem(model: &Path) -> String {
    model.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| "model".into())
}

/// Renders both images of `model` into `target/reference/<stem>/`.
pub fn render_reference(model: &Path, width: u32, height: u32) -> Result<()> {
    let out = target_dir().join("reference").join(model_stem(model));
    std::fs::create_dir_all(&out).map_err(|e| format!("creating {}: {e}", out.display()))?;
    for stale in ["reference.png", "scene.json"] {
        let _ = std::fs::remove_file(out.join(stale));
    }
    eprintln!("xtask: reference: {} at {width}x{height} -> {}", model.display(), out.display());

    // 1. Proxima's scene (and image) from the gltf sample.
    let scene_path = out.join("proxima-scene.json");
    let (w, h) = (width.to_string(), height.to_string());
    let mut args = vec!["run", "--quiet", "-p", "samples", "--bin", "gltf", "--", "--headless"];
    let (model_arg, scene_arg, png_arg) =
        (model.display().to_string(), scene_path.display().to_string(), out.join("proxima.png").display().to_string());
    args.extend([model_arg.as_str(), "--width", &w, "--height", &h, "--reference-scene", &scene_arg, "--out", &png_arg]);
    for cvar in PROXIMA_REFERENCE_CVARS {
        args.extend(["--cvar", cvar]);
    }
    let code = crate::cargo(&args)?;
    if code != ExitCode::SUCCESS {
        return Err(format!("the gltf sample failed on {}", model.display()));
    }
    let scene_text = std::fs::read_to_string(&scene_path).map_err(|e| format!("reading {}: {e}", scene_path.display()))?;
    let scene: Value = serde_json::from_str(&scene_text).map_err(|e| format!("{}: {e}", scene_path.display()))?;
    let parsed = Scene::from_json(&scene).map_err(|e| format!("{}: {e}", scene_path.display()))?;

    // 2. The model's JSON with that camera and sun.
    let bytes = std::fs::read(model).map_err(|e| format!("reading {}: {e}", model.display()))?;
    let (served, scene_index, camera_index) = with_scene(&bytes, &parsed).map_err(|e| format!("{}: {e}", model.display()))?;

    // 3. Chromium renders it.
    let file_name = model.file_name().expect("a file").to_string_lossy().into_owned();
    let config = json!({
        "width": width,
        "height": height,
        "model_url": format!("/model/{}", percent_encode(&file_name)),
        "scene_index": scene_index,
        "camera_index": camera_index,
        "background": BACKGROUND,
    });
    let site = Site {
        viewer: viewer_dist(),
        model_dir: model.parent().expect("a file has a folder").to_path_buf(),
        model_name: file_name,
        model_bytes: served,
        config: serde_json::to_vec(&config).expect("JSON"),
    };
    let chromium = chromium().expect("checked by missing()");
    let version = chromium_version(&chromium);
    let rgba = render_in_chromium(&chromium, site, width, height, &out.join("chromium.log"))?;

    // 4. sRGB, PNG, and what it was rendered with.
    let rgba: Vec<u8> = rgba.iter().enumerate().map(|(i, &v)| if i % 4 == 3 { v } else { gamma22_to_srgb(v) }).collect();
    write_png(&out.join("reference.png"), width, height, &rgba)?;
    let record = json!({
        "model": model.display().to_string(),
        "scene": scene,
        "renderer": {
            "viewer": format!("{VIEWER_PACKAGE} {VIEWER_VERSION}"),
            "browser": version,
            "webgl": "Chromium --headless=new --use-angle=swiftshader --enable-unsafe-swiftshader",
        },
        "settings": {
            "lights": "one KHR_lights_punctual directional light: scene.sun (the file's own lights removed)",
            "camera": "a perspective camera node added to the file: scene.camera",
            "useIBL": false,
            "renderEnvironmentMap": false,
            "useDirectionalLightsWithDisabledIBL": false,
            "toneMap": "None (linear, clamped to 1)",
            "exposure": 1.0,
            "skinning": false,
            "morphing": false,
            "antialias": false,
            "background": BACKGROUND,
            "output": "the viewer's pow(linear, 1/2.2) re-encoded to exact sRGB",
        },
        "proxima": {
            "sample": "gltf",
            "cvars": PROXIMA_REFERENCE_CVARS,
            "image": "proxima.png",
        },
    });
    let record_path = out.join("scene.json");
    std::fs::write(&record_path, serde_json::to_string_pretty(&record).expect("JSON") + "\n")
        .map_err(|e| format!("writing {}: {e}", record_path.display()))?;
    eprintln!("xtask: reference: wrote {}", out.join("reference.png").display());
    Ok(())
}

fn chromium_version(chromium: &Path) -> String {
    Command::new(chromium)
        .arg("--version")
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| "unknown".into())
}

fn write_png(path: &Path, width: u32, height: u32, rgba: &[u8]) -> Result<()> {
    let file = std::fs::File::create(path).map_err(|e| format!("creating {}: {e}", path.display()))?;
    let mut enc = png::Encoder::new(std::io::BufWriter::new(file), width, height);
    enc.set_color(png::ColorType::Rgba);
    enc.set_depth(png::BitDepth::Eight);
    enc.write_header().and_then(|mut w| w.write_image_data(rgba)).map_err(|e| format!("writing {}: {e}", path.display()))
}

/// One 8-bit value the viewer wrote as `pow(linear, 1/2.2)`, as sRGB's
/// encoding of the same linear value.
pub fn gamma22_to_srgb(v: u8) -> u8 {
    let linear = (f64::from(v) / 255.0).powf(2.2);
    let srgb = if linear <= 0.003_130_8 { linear * 12.92 } else { 1.055 * linear.powf(1.0 / 2.4) - 0.055 };
    (srgb * 255.0).round().clamp(0.0, 255.0) as u8
}

// ---------------------------------------------------------------------------
// The scene: the sample's `--reference-scene` JSON.

/// The camera and the sun, in glTF's axes.
#[derive(Clone, Debug, PartialEq)]
pub struct Scene {
    pub eye: [f64; 3],
    pub target: [f64; 3],
    pub up: [f64; 3],
    pub yfov: f64,
    pub aspect: f64,
    pub znear: f64,
    pub zfar: f64,
    /// The direction the light travels.
    pub sun_direction: [f64; 3],
    pub sun_color: [f64; 3],
    pub sun_intensity: f64,
    /// The glTF scene shown (`None`: the file's default).
    pub scene: Option<usize>,
}

impl Scene {
    pub fn from_json(v: &Value) -> std::result::Result<Scene, String> {
        let num = |v: &Value, what: &str| v.as_f64().filter(|x| x.is_finite()).ok_or_else(|| format!("{what}: not a number"));
        let vec3 = |v: &Value, what: &str| -> std::result::Result<[f64; 3], String> {
            let a = v.as_array().filter(|a| a.len() == 3).ok_or_else(|| format!("{what}: not 3 numbers"))?;
            Ok([num(&a[0], what)?, num(&a[1], what)?, num(&a[2], what)?])
        };
        let c = &v["camera"];
        let s = &v["sun"];
        Ok(Scene {
            eye: vec3(&c["eye"], "camera.eye")?,
            target: vec3(&c["target"], "camera.target")?,
            up: vec3(&c["up"], "camera.up")?,
            yfov: num(&c["yfov"], "camera.yfov")?,
            aspect: num(&c["aspect"], "camera.aspect")?,
            znear: num(&c["znear"], "camera.znear")?,
            zfar: num(&c["zfar"], "camera.zfar")?,
            sun_direction: vec3(&s["direction"], "sun.direction")?,
            sun_color: vec3(&s["color"], "sun.color")?,
            sun_intensity: num(&s["intensity"], "sun.intensity")?,
            scene: v["scene"].as_u64().map(|n| n as usize),
        })
    }
}

type V3 = [f64; 3];

fn sub(a: V3, b: V3) -> V3 {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

fn cross(a: V3, b: V3) -> V3 {
    [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]
}

fn normalize(a: V3) -> Option<V3> {
    let len = (a[0] * a[0] + a[1] * a[1] + a[2] * a[2]).sqrt();
    (len > 1e-12 && len.is_finite()).then(|| [a[0] / len, a[1] / len, a[2] / len])
}

fn neg(a: V3) -> V3 {
    [-a[0], -a[1], -a[2]]
}

/// The unit quaternion `[x, y, z, w]` of the rotation whose matrix has
/// columns `x`, `y`, `z` (orthonormal, right-handed).
pub fn quat_from_cols(x: V3, y: V3, z: V3) -> [f64; 4] {
    // m[row][col]
    let m = [[x[0], y[0], z[0]], [x[1], y[1], z[1]], [x[2], y[2], z[2]]];
    let trace = m[0][0] + m[1][1] + m[2][2];
    let q = if trace > 0.0 {
        let s = (trace + 1.0).sqrt() * 2.0;
        [(m[2][1] - m[1][2]) / s, (m[0][2] - m[2][0]) / s, (m[1][0] - m[0][1]) / s, 0.25 * s]
    } else if m[0][0] > m[1][1] && m[0][0] > m[2][2] {
        let s = (1.0 + m[0][0] - m[1][1] - m[2][2]).sqrt() * 2.0;
        [0.25 * s, (m[0][1] + m[1][0]) / s, (m[0][2] + m[2][0]) / s, (m[2][1] - m[1][2]) / s]
    } else if m[1][1] > m[2][2] {
        let s = (1.0 + m[1][1] - m[0][0] - m[2][2]).sqrt() * 2.0;
        [(m[0][1] + m[1][0]) / s, 0.25 * s, (m[1][2] + m[2][1]) / s, (m[0][2] - m[2][0]) / s]
    } else {
        let s = (1.0 + m[2][2] - m[0][0] - m[1][1]).sqrt() * 2.0;
        [(m[0][2] + m[2][0]) / s, (m[1][2] + m[2][1]) / s, 0.25 * s, (m[1][0] - m[0][1]) / s]
    };
    let len = q.iter().map(|c| c * c).sum::<f64>().sqrt();
    q.map(|c| c / len)
}

/// A glTF node rotation that makes the node's -Z point along `forward`
/// with +Y as close to `up` as it can be (a camera looks down its -Z; a
/// directional light shines along it).
pub fn look_rotation(forward: V3, up: V3) -> std::result::Result<[f64; 4], String> {
    let f = normalize(forward).ok_or("a zero direction")?;
    let right = normalize(cross(f, up)).or_else(|| normalize(cross(f, [0.0, 0.0, 1.0]))).ok_or("no right vector")?;
    let true_up = cross(right, f);
    Ok(quat_from_cols(right, true_up, neg(f)))
}

/// Adds `scene`'s camera and sun to a glTF document: a perspective camera
/// and its node, one directional `KHR_lights_punctual` light and its node
/// (the file's own lights are dropped from their nodes and the list), both
/// nodes roots of the scene shown. Returns (scene index, camera index).
pub fn inject_scene(doc: &mut Value, scene: &Scene) -> std::result::Result<(usize, usize), String> {
    let obj = doc.as_object_mut().ok_or("the glTF JSON is not an object")?;
    // The scene shown: --scene, else the default, else the first; a file
    // without scenes gets one of all its root nodes (as Proxima shows it).
    let node_count = obj.get("nodes").and_then(Value::as_array).map_or(0, Vec::len);
    let scene_index = match scene.scene.or_else(|| obj.get("scene").and_then(Value::as_u64).map(|s| s as usize)) {
        Some(s) => s,
        None => {
            let scenes = obj.entry("scenes").or_insert_with(|| json!([]));
            if scenes.as_array().is_none_or(Vec::is_empty) {
                let mut is_child = vec![false; node_count];
                for node in obj.get("nodes").and_then(Value::as_array).into_iter().flatten() {
                    for c in node.get("children").and_then(Value::as_array).into_iter().flatten() {
                        if let Some(c) = c.as_u64().and_then(|c| is_child.get_mut(c as usize)) {
                            *c = true;
                        }
                    }
                }
                let roots: Vec<usize> = (0..node_count).filter(|&n| !is_child[n]).collect();
                obj.insert("scenes".into(), json!([{ "nodes": roots }]));
            }
            0
        }
    };
    // No light but ours.
    if let Some(nodes) = obj.get_mut("nodes").and_then(Value::as_array_mut) {
        for node in nodes {
            if let Some(ext) = node.get_mut("extensions").and_then(Value::as_object_mut) {
                ext.remove("KHR_lights_punctual");
            }
        }
    }
    let color = scene.sun_color;
    let light = json!({ "type": "directional", "name": "proxima-reference-sun", "color": color, "intensity": scene.sun_intensity });
    let extensions = obj.entry("extensions").or_insert_with(|| json!({}));
    extensions.as_object_mut().ok_or("extensions is not an object")?.insert("KHR_lights_punctual".into(), json!({ "lights": [light] }));
    let used = obj.entry("extensionsUsed").or_insert_with(|| json!([]));
    let used = used.as_array_mut().ok_or("extensionsUsed is not an array")?;
    if !used.iter().any(|e| e == "KHR_lights_punctual") {
        used.push(json!("KHR_lights_punctual"));
    }

    let cameras = obj.entry("cameras").or_insert_with(|| json!([]));
    let cameras = cameras.as_array_mut().ok_or("cameras is not an array")?;
    let camera_index = cameras.len();
    cameras.push(json!({
        "type": "perspective",
        "name": "proxima-reference-camera",
        "perspective": { "yfov": scene.yfov, "aspectRatio": scene.aspect, "znear": scene.znear, "zfar": scene.zfar },
    }));
    let camera_rotation = look_rotation(sub(scene.target, scene.eye), scene.up).map_err(|e| format!("the camera: {e}"))?;
    let sun_rotation = look_rotation(scene.sun_direction, [0.0, 1.0, 0.0]).map_err(|e| format!("the sun: {e}"))?;
    let nodes = obj.entry("nodes").or_insert_with(|| json!([]));
    let nodes = nodes.as_array_mut().ok_or("nodes is not an array")?;
    let camera_node = nodes.len();
    nodes
        .push(json!({ "name": "proxima-reference-camera", "camera": camera_index, "translation": scene.eye, "rotation": camera_rotation }));
    nodes.push(
        json!({ "name": "proxima-reference-sun", "rotation": sun_rotation, "extensions": { "KHR_lights_punctual": { "light": 0 } } }),
    );
    let scenes = obj.get_mut("scenes").and_then(Value::as_array_mut).ok_or("the file has no scenes")?;
    let shown = scenes.get_mut(scene_index).ok_or_else(|| format!("no scene {scene_index}"))?;
    let roots = shown.as_object_mut().ok_or("a scene is not an object")?.entry("nodes").or_insert_with(|| json!([]));
    let roots = roots.as_array_mut().ok_or("a scene's nodes is not an array")?;
    roots.extend([json!(camera_node), json!(camera_node + 1)]);
    Ok((scene_index, camera_index))
}

/// The model file as served: its JSON with the scene added (a `.glb`
/// rebuilt around the new JSON chunk). Returns it, the scene shown and the
/// camera's index.
pub fn with_scene(bytes: &[u8], scene: &Scene) -> std::result::Result<(Vec<u8>, usize, usize), String> {
    if bytes.starts_with(b"glTF") {
        let (mut doc, bin) = parse_glb(bytes)?;
        let (s, c) = inject_scene(&mut doc, scene)?;
        Ok((write_glb(&doc, bin), s, c))
    } else {
        let mut doc: Value = serde_json::from_slice(bytes).map_err(|e| format!("not glTF JSON: {e}"))?;
        let (s, c) = inject_scene(&mut doc, scene)?;
        Ok((serde_json::to_vec(&doc).expect("JSON"), s, c))
    }
}

fn u32_at(bytes: &[u8], at: usize) -> std::result::Result<usize, String> {
    let b = bytes.get(at..at + 4).ok_or("a truncated GLB")?;
    Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize)
}

/// A GLB's JSON and its BIN chunk, if any.
fn parse_glb(bytes: &[u8]) -> std::result::Result<(Value, Option<&[u8]>), String> {
    let length = u32_at(bytes, 8)?.min(bytes.len());
    let (mut at, mut json, mut bin) = (12, None, None);
    while at + 8 <= length {
        let (len, kind) = (u32_at(bytes, at)?, u32_at(bytes, at + 4)?);
        let data = bytes.get(at + 8..at + 8 + len).ok_or("a GLB chunk runs past the end")?;
        match kind {
            0x4E4F_534A if json.is_none() => json = Some(serde_json::from_slice(data).map_err(|e| format!("the GLB's JSON: {e}"))?),
            0x004E_4942 if bin.is_none() => bin = Some(data),
            _ => {}
        }
        at += 8 + len;
    }
    Ok((json.ok_or("a GLB without a JSON chunk")?, bin))
}

fn write_glb(doc: &Value, bin: Option<&[u8]>) -> Vec<u8> {
    let mut json = serde_json::to_vec(doc).expect("JSON");
    while !json.len().is_multiple_of(4) {
        json.push(b' ');
    }
    let mut chunks = vec![(0x4E4F_534Au32, json)];
    if let Some(bin) = bin {
        let mut bin = bin.to_vec();
        while !bin.len().is_multiple_of(4) {
            bin.push(0);
        }
        chunks.push((0x004E_4942, bin));
    }
    let total = 12 + chunks.iter().map(|(_, d)| 8 + d.len()).sum::<usize>();
    let mut out = Vec::with_capacity(total);
    out.extend_from_slice(b"glTF");
    out.extend_from_slice(&2u32.to_le_bytes());
    out.extend_from_slice(&(total as u32).to_le_bytes());
    for (kind, data) in chunks {
        out.extend_from_slice(&(data.len() as u32).to_le_bytes());
        out.extend_from_slice(&kind.to_le_bytes());
        out.extend_from_slice(&data);
    }
    out
}

// ---------------------------------------------------------------------------
// The local server and Chromium.

/// What the local server serves.
struct Site {
    /// The viewer's `dist/` (`/viewer/...`).
    viewer: PathBuf,
    /// The model's folder (`/model/...`: its buffers and images).
    model_dir: PathBuf,
    /// The model's file name, served as `model_bytes` instead of the file.
    model_name: String,
    model_bytes: Vec<u8>,
    /// `/config.json`.
    config: Vec<u8>,
}

/// What the page posts back.
enum Message {
    Log(String),
    Result(Vec<u8>),
    Fail(String),
}

/// Serves `site`, opens the page in Chromium and waits for its pixels.
fn render_in_chromium(chromium: &Path, site: Site, width: u32, height: u32, log_path: &Path) -> Result<Vec<u8>> {
    let listener = TcpListener::bind("127.0.0.1:0").map_err(|e| format!("starting the local server: {e}"))?;
    let port = listener.local_addr().map_err(|e| e.to_string())?.port();
    let (tx, rx) = mpsc::channel();
    let stop = Arc::new(AtomicBool::new(false));
    let site = Arc::new(site);
    let server = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                if stop.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(stream) = stream else { continue };
                let (site, tx) = (site.clone(), tx.clone());
                std::thread::spawn(move || {
                    let _ = serve(stream, &site, &tx);
                });
            }
        })
    };
    let profile = target_dir().join("reference-tools").join(format!("chromium-profile-{}", std::process::id()));
    let log = std::fs::File::create(log_path).map_err(|e| format!("creating {}: {e}", log_path.display()))?;
    let mut child = Command::new(chromium)
        .args([
            "--headless=new",
            "--no-sandbox",
            "--use-angle=swiftshader",
            "--enable-unsafe-swiftshader",
            "--ignore-gpu-blocklist",
            "--no-first-run",
            "--no-default-browser-check",
            "--disable-extensions",
            "--disable-background-networking",
            "--mute-audio",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg(format!("--window-size={width},{height}"))
        .arg(format!("http://127.0.0.1:{port}/harness.html"))
        .stdin(Stdio::null())
        .stdout(log.try_clone().map_err(|e| e.to_string())?)
        .stderr(log)
        .spawn()
        .map_err(|e| format!("starting {}: {e}", chromium.display()))?;
    let started = Instant::now();
    let result = loop {
        let left = RENDER_TIMEOUT.saturating_sub(started.elapsed());
        match rx.recv_timeout(left.min(Duration::from_secs(1))) {
            Ok(Message::Log(line)) => eprintln!("xtask: reference page: {line}"),
            Ok(Message::Result(rgba)) => break Ok(rgba),
            Ok(Message::Fail(e)) => break Err(format!("the reference page failed: {e}")),
            Err(mpsc::RecvTimeoutError::Timeout) => {
                if let Ok(Some(status)) = child.try_wait() {
                    break Err(format!("Chromium exited ({status}) before the page sent its image; see {}", log_path.display()));
                }
                if started.elapsed() >= RENDER_TIMEOUT {
                    break Err(format!("no image from Chromium in {} s; see {}", RENDER_TIMEOUT.as_secs(), log_path.display()));
                }
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => break Err("the local server stopped".into()),
        }
    };
    // Our Chromium only: TERM, a moment to close, then KILL.
    let _ = Command::new("kill").args(["-TERM", &child.id().to_string()]).status();
    let deadline = Instant::now() + Duration::from_secs(5);
    while Instant::now() < deadline && matches!(child.try_wait(), Ok(None)) {
        std::thread::sleep(Duration::from_millis(100));
    }
    let _ = child.kill();
    let _ = child.wait();
    stop.store(true, Ordering::SeqCst);
    let _ = TcpStream::connect(("127.0.0.1", port));
    let _ = server.join();
    let _ = std::fs::remove_dir_all(&profile);
    let rgba = result?;
    let expected = width as usize * height as usize * 4;
    if rgba.len() != expected {
        return Err(format!("the page sent {} bytes for a {width}x{height} image ({expected} expected)", rgba.len()));
    }
    Ok(rgba)
}

/// Answers one HTTP request (one per connection).
fn serve(stream: TcpStream, site: &Site, tx: &mpsc::Sender<Message>) -> std::io::Result<()> {
    stream.set_read_timeout(Some(Duration::from_secs(60)))?;
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut request_line = String::new();
    reader.read_line(&mut request_line)?;
    let mut parts = request_line.split_whitespace();
    let (method, target) = (parts.next().unwrap_or(""), parts.next().unwrap_or("/"));
    let mut content_length = 0usize;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line)? == 0 || line.trim().is_empty() {
            break;
        }
        if let Some((k, v)) = line.split_once(':') {
            if k.trim().eq_ignore_ascii_case("content-length") {
                content_length = v.trim().parse().unwrap_or(0);
            }
        }
    }
    let mut body = vec![0; content_length];
    reader.read_exact(&mut body)?;
    let path = percent_decode(target.split(['?', '#']).next().unwrap_or("/"));
    let mut stream = stream;
    if method == "POST" {
        let text = || String::from_utf8_lossy(&body).into_owned();
        let message = match path.as_str() {
            "/log" => Some(Message::Log(text())),
            "/fail" => Some(Message::Fail(text())),
            "/result" => Some(Message::Result(body.clone())),
            _ => None,
        };
        return match message {
            Some(m) => {
                let _ = tx.send(m);
                respond(&mut stream, 200, "text/plain", b"ok")
            }
            None => respond(&mut stream, 404, "text/plain", b"not found"),
        };
    }
    let (status, kind, data): (u16, &str, Vec<u8>) = match path.as_str() {
        "/" | "/harness.html" => (200, "text/html; charset=utf-8", HARNESS_HTML.as_bytes().to_vec()),
        "/harness.js" => (200, "text/javascript; charset=utf-8", HARNESS_JS.as_bytes().to_vec()),
        "/config.json" => (200, "application/json", site.config.clone()),
        "/favicon.ico" => (404, "text/plain", b"none".to_vec()),
        p => {
            let file = if let Some(rel) = p.strip_prefix("/viewer/") {
                safe_join(&site.viewer, rel)
            } else if let Some(rel) = p.strip_prefix("/model/") {
                if rel == site.model_name {
                    return respond(&mut stream, 200, content_type(rel), &site.model_bytes);
                }
                safe_join(&site.model_dir, rel)
            } else {
                None
            };
            match file.and_then(|f| std::fs::read(&f).ok().map(|d| (f, d))) {
                Some((f, d)) => (200, content_type(&f.to_string_lossy()), d),
                None => {
                    let _ = tx.send(Message::Log(format!("404 for {p}")));
                    (404, "text/plain", b"not found".to_vec())
                }
            }
        }
    };
    respond(&mut stream, status, kind, &data)
}

fn respond(stream: &mut TcpStream, status: u16, kind: &str, body: &[u8]) -> std::io::Result<()> {
    let reason = if status == 200 { "OK" } else { "Not Found" };
    write!(
        stream,
        "HTTP/1.1 {status} {reason}\r\nContent-Type: {kind}\r\nContent-Length: {}\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n",
        body.len()
    )?;
    stream.write_all(body)?;
    stream.flush()
}

/// `base/rel` when `rel` has no `..`, root or empty parts.
fn safe_join(base: &Path, rel: &str) -> Option<PathBuf> {
    let ok = !rel.is_empty() && rel.split('/').all(|part| !part.is_empty() && part != "." && part != ".." && !part.contains('\\'));
    ok.then(|| base.join(rel))
}

fn content_type(name: &str) -> &'static str {
    let ext = name.rsplit('.').next().unwrap_or("").to_ascii_lowercase();
    match ext.as_str() {
        "html" => "text/html; charset=utf-8",
        "js" | "mjs" => "text/javascript; charset=utf-8",
        "json" => "application/json",
        "wasm" => "application/wasm",
        "gltf" => "model/gltf+json",
        "glb" => "model/gltf-binary",
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "webp" => "image/webp",
        "ktx2" => "image/ktx2",
        _ => "application/octet-stream",
    }
}

/// `%XX` escapes decoded (bytes that do not form UTF-8 are replaced).
pub fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            if let (Some(h), Some(l)) = (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                out.push((h * 16 + l) as u8);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Escapes what a URL path segment cannot hold as is.
pub fn percent_encode(s: &str) -> String {
    s.bytes()
        .map(|b| if b.is_ascii_alphanumeric() || b"-._~".contains(&b) { (b as char).to_string() } else { format!("%{b:02X}") })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scene() -> Scene {
        Scene {
            eye: [0.0, 1.0, 3.0],
            target: [0.0, 1.0, 0.0],
            up: [0.0, 1.0, 0.0],
            yfov: 1.0,
            aspect: 16.0 / 9.0,
            znear: 0.1,
            zfar: 10.0,
            sun_direction: [0.0, -1.0, 0.0],
            sun_color: [1.0, 0.9, 0.8],
            sun_intensity: 3.0,
            scene: None,
        }
    }

    fn rotate(q: [f64; 4], v: V3) -> V3 {
        // v + 2 q.xyz × (q.xyz × v + w v)
        let u = [q[0], q[1], q[2]];
        let t = cross(u, v);
        let t = [t[0] + q[3] * v[0], t[1] + q[3] * v[1], t[2] + q[3] * v[2]];
        let c = cross(u, t);
        [v[0] + 2.0 * c[0], v[1] + 2.0 * c[1], v[2] + 2.0 * c[2]]
    }

    fn close(a: V3, b: V3) -> bool {
        a.iter().zip(b).all(|(x, y)| (x - y).abs() < 1e-9)
    }

    #[test]
    fn look_rotation_points_minus_z_along_forward_and_y_up() {
        for (forward, up) in [([0.0, 0.0, -1.0], [0.0, 1.0, 0.0]), ([1.0, -0.5, 0.3], [0.0, 1.0, 0.0]), ([0.0, -1.0, 0.0], [0.0, 1.0, 0.0])]
        {
            let q = look_rotation(forward, up).unwrap();
            let f = normalize(forward).unwrap();
            assert!(close(rotate(q, [0.0, 0.0, -1.0]), f), "{forward:?}");
            let y = rotate(q, [0.0, 1.0, 0.0]);
            assert!(y[0] * f[0] + y[1] * f[1] + y[2] * f[2] < 1e-9, "up is perpendicular");
            if forward[1] == 0.0 || forward[0] != 0.0 {
                assert!(y[1] > 0.0, "{forward:?}: up stays up");
            }
        }
        assert!(look_rotation([0.0; 3], [0.0, 1.0, 0.0]).is_err());
    }

    #[test]
    fn the_scene_is_injected_as_one_camera_and_one_light() {
        let mut doc = json!({
            "asset": { "version": "2.0" },
            "scene": 0,
            "scenes": [{ "nodes": [0] }],
            "nodes": [{ "mesh": 0, "children": [1] }, { "extensions": { "KHR_lights_punctual": { "light": 0 } } }],
            "cameras": [{ "type": "perspective", "perspective": { "yfov": 0.5, "znear": 0.1 } }],
            "extensions": { "KHR_lights_punctual": { "lights": [{ "type": "point" }] } },
        });
        let (s, c) = inject_scene(&mut doc, &scene()).unwrap();
        assert_eq!((s, c), (0, 1));
        assert_eq!(doc["scenes"][0]["nodes"], json!([0, 2, 3]));
        assert_eq!(doc["nodes"][1]["extensions"], json!({}), "the file's light is gone");
        let lights = doc["extensions"]["KHR_lights_punctual"]["lights"].as_array().unwrap();
        assert_eq!(lights.len(), 1);
        assert_eq!(lights[0]["type"], "directional");
        assert_eq!(lights[0]["intensity"], 3.0);
        assert_eq!(doc["extensionsUsed"], json!(["KHR_lights_punctual"]));
        assert_eq!(doc["nodes"][2]["camera"], 1);
        assert_eq!(doc["nodes"][2]["translation"], json!([0.0, 1.0, 3.0]));
        assert_eq!(doc["cameras"][1]["perspective"]["yfov"], 1.0);
        let q: Vec<f64> = doc["nodes"][3]["rotation"].as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect();
        assert!(close(rotate([q[0], q[1], q[2], q[3]], [0.0, 0.0, -1.0]), [0.0, -1.0, 0.0]), "the sun shines down");
    }

    #[test]
    fn a_file_without_scenes_gets_one_of_its_roots() {
        let mut doc = json!({ "asset": { "version": "2.0" }, "nodes": [{ "children": [1] }, {}, {}] });
        let (s, c) = inject_scene(&mut doc, &scene()).unwrap();
        assert_eq!((s, c), (0, 0));
        assert_eq!(doc["scenes"][0]["nodes"], json!([0, 2, 3, 4]));
    }

    #[test]
    fn a_glb_is_rebuilt_around_the_new_json() {
        let doc = json!({ "asset": { "version": "2.0" }, "scenes": [{ "nodes": [] }], "scene": 0 });
        let bin = [1u8, 2, 3, 4, 5];
        let glb = write_glb(&doc, Some(&bin));
        assert_eq!(glb.len() % 4, 0);
        let (served, _, _) = with_scene(&glb, &scene()).unwrap();
        assert_eq!(u32_at(&served, 8).unwrap(), served.len());
        let (json, bin2) = parse_glb(&served).unwrap();
        assert_eq!(&bin2.unwrap()[..5], &bin);
        assert_eq!(json["cameras"].as_array().unwrap().len(), 1);
    }

    #[test]
    fn scene_json_parses_and_rejects_what_is_missing() {
        let v = json!({
            "camera": { "eye": [0, 1, 3], "target": [0, 1, 0], "up": [0, 1, 0], "yfov": 1.0, "aspect": 1.7777777777777777, "znear": 0.1, "zfar": 10 },
            "sun": { "direction": [0, -1, 0], "color": [1.0, 0.9, 0.8], "intensity": 3 },
            "scene": null, "width": 16, "height": 9,
        });
        assert_eq!(Scene::from_json(&v).unwrap(), scene());
        let mut bad = v.clone();
        bad["camera"]["eye"] = json!([0, 1]);
        assert!(Scene::from_json(&bad).unwrap_err().contains("camera.eye"));
    }

    #[test]
    fn gamma_22_is_reencoded_as_srgb() {
        assert_eq!((gamma22_to_srgb(0), gamma22_to_srgb(255)), (0, 255));
        // pow(1/2.2)'s 186 is linear 0.497, which sRGB writes as 187.
        assert_eq!(gamma22_to_srgb(186), 187);
        // The two curves cross near the middle and differ most in the darks.
        assert!(gamma22_to_srgb(10) < 10);
        let mut last = 0;
        for v in 0..=255u8 {
            assert!(gamma22_to_srgb(v) >= last, "monotonic");
            last = gamma22_to_srgb(v);
        }
    }

    #[test]
    fn paths_are_decoded_and_kept_inside() {
        assert_eq!(percent_decode("/model/a%20b.png"), "/model/a b.png");
        assert_eq!(percent_decode("/x%2"), "/x%2");
        assert_eq!(percent_encode("Flight Helmet.gltf"), "Flight%20Helmet.gltf");
        assert!(safe_join(Path::new("/a"), "../etc/passwd").is_none());
        assert!(safe_join(Path::new("/a"), "b//c").is_none());
        assert_eq!(safe_join(Path::new("/a"), "libs/x.wasm"), Some(PathBuf::from("/a/libs/x.wasm")));
    }

    #[test]
    fn shared_models_are_one_file_per_folder() {
        let dir = std::env::temp_dir().join(format!("xtask-reference-models-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        for (folder, files) in [("A", &["A.gltf", "A.bin"][..]), ("B", &["B.glb"]), ("C", &["x.png"]), ("D", &["1.glb", "2.glb"])] {
            std::fs::create_dir_all(dir.join(folder)).unwrap();
            for f in files {
                std::fs::write(dir.join(folder).join(f), b"").unwrap();
            }
        }
        assert_eq!(shared_models(&dir), vec![dir.join("A/A.gltf"), dir.join("B/B.glb")]);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
