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
const HARNESS_HTML: &str = include_str!("../../reference/harness.html");
const HARNESS_JS: &str = include_str!("../../reference/harness.js");

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
pub(crate) const NPM_TOOLS: &[(&str, &str)] = &[(VIEWER_PACKAGE, VIEWER_VERSION), (VALIDATOR_PACKAGE, VALIDATOR_VERSION)];

/// The Khronos glTF Validator's npm package ([`crate::gltf_validator`] runs it),
/// in the same manifest as the viewer.
pub const VALIDATOR_PACKAGE: &str = "gltf-validator";
/// Pinned: a newer validator may report differently.
pub const VALIDATOR_VERSION: &str = "2.0.0-dev.3.10";

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
    args.extend([
        model_arg.as_str(),
        "--width",
        &w,
        "--height",
        &h,
        "--reference-scene",
        &scene_arg,
        "--out",
        &png_arg,
        "--aa",
        "none",
        "--environment",
        "hemisphere",
        // The reference viewer shows skinned models in their rest pose.
        "--animation",
        "none",
    ]);
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

mod scene;
mod server;
pub use scene::*;
use server::*;

#[cfg(test)]
mod tests {
    use super::*;
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
