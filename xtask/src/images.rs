//! `cargo xtask images [--against REV]`: the guard for a change that must
//! not change a pixel (a refactor, a new abstraction, a dependency bump).
//!
//! It renders every sample (the `gltf` sample once per model under
//! `../shared/gltf-samples/`) at 640×360 for 3 frames, headless, once from
//! the working tree and once from the commit `REV` (default `HEAD`), and
//! fails unless each pair of images holds the same pixels. `REV`'s images
//! are built in a temporary `git worktree` that shares this checkout's
//! target directory (only the workspace's own crates compile again) and are
//! kept under `target/images/<commit>/`, so a second comparison against the
//! same commit renders only the working tree. The working tree's images
//! are in `target/images/work/`.
//!
//! Both sides use the same build profile (debug: the one the tests build)
//! and the same driver, so any difference is the change's.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use crate::{cargo_bin, sample_list, workspace_root, Result};

/// The frame size and frame count every sample renders at.
const WIDTH: u32 = 640;
const HEIGHT: u32 = 360;
const FRAMES: u32 = 3;

/// One image to render: its file stem and the sample binary with its arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Job {
    pub stem: String,
    pub sample: String,
    pub args: Vec<String>,
}

/// The images: one per sample, except `gltf`, which renders each of `models`.
pub(crate) fn jobs(samples: &[String], models: &[PathBuf]) -> Vec<Job> {
    let mut jobs = Vec::new();
    for sample in samples {
        if sample == "gltf" {
            for model in models {
                let stem = model.file_stem().map_or_else(|| "model".into(), |s| s.to_string_lossy().into_owned());
                jobs.push(Job { stem: format!("gltf-{stem}"), sample: sample.clone(), args: vec![model.display().to_string()] });
            }
        } else {
            jobs.push(Job { stem: sample.clone(), sample: sample.clone(), args: Vec::new() });
        }
    }
    jobs
}

/// How two renders of one image compare.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Comparison {
    Identical,
    SizeDiffers { before: (u32, u32), after: (u32, u32) },
    PixelsDiffer { pixels: usize, max_channel_difference: u8 },
}

/// Compares two decoded RGBA8 images of `before`'s and `after`'s size.
pub(crate) fn compare(before: &Rgba, after: &Rgba) -> Comparison {
    if (before.width, before.height) != (after.width, after.height) {
        return Comparison::SizeDiffers { before: (before.width, before.height), after: (after.width, after.height) };
    }
    let mut pixels = 0;
    let mut max_channel_difference = 0;
    for (a, b) in before.pixels.chunks_exact(4).zip(after.pixels.chunks_exact(4)) {
        if a != b {
            pixels += 1;
            let d = a.iter().zip(b).map(|(x, y)| x.abs_diff(*y)).max().unwrap_or(0);
            max_channel_difference = max_channel_difference.max(d);
        }
    }
    if pixels == 0 {
        Comparison::Identical
    } else {
        Comparison::PixelsDiffer { pixels, max_channel_difference }
    }
}

/// An image's pixels as 8-bit RGBA.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Rgba {
    pub width: u32,
    pub height: u32,
    pub pixels: Vec<u8>,
}

fn read_png(path: &Path) -> Result<Rgba> {
    let file = std::fs::File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut decoder = png::Decoder::new(std::io::BufReader::new(file));
    decoder.set_transformations(png::Transformations::EXPAND | png::Transformations::STRIP_16);
    let mut reader = decoder.read_info().map_err(|e| format!("{}: {e}", path.display()))?;
    let size = reader.output_buffer_size().ok_or_else(|| format!("{}: too large", path.display()))?;
    let mut buf = vec![0; size];
    let info = reader.next_frame(&mut buf).map_err(|e| format!("{}: {e}", path.display()))?;
    buf.truncate(info.buffer_size());
    let pixels = match info.color_type {
        png::ColorType::Rgba => buf,
        png::ColorType::Rgb => buf.chunks_exact(3).flat_map(|p| [p[0], p[1], p[2], 255]).collect(),
        png::ColorType::GrayscaleAlpha => buf.chunks_exact(2).flat_map(|p| [p[0], p[0], p[0], p[1]]).collect(),
        png::ColorType::Grayscale => buf.iter().flat_map(|&g| [g, g, g, 255]).collect(),
        png::ColorType::Indexed => return Err(format!("{}: indexed colour after expansion", path.display())),
    };
    Ok(Rgba { width: info.width, height: info.height, pixels })
}

/// The commit `rev` names, in full.
fn resolve(rev: &str) -> Result<String> {
    let out = Command::new("git")
        .args(["rev-parse", "--verify", "--quiet", &format!("{rev}^{{commit}}")])
        .current_dir(workspace_root())
        .output()
        .map_err(|e| format!("running git: {e}"))?;
    if !out.status.success() {
        return Err(format!("{rev:?} names no commit of this repository"));
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| workspace_root().join("target"), PathBuf::from)
}

/// Builds the samples (debug) in `tree` into the shared target directory.
fn build_samples(tree: &Path) -> Result<()> {
    let status = Command::new(cargo_bin())
        .args(["build", "--quiet", "-p", "samples", "--bins"])
        .current_dir(tree)
        .env("CARGO_TARGET_DIR", target_dir())
        .status()
        .map_err(|e| format!("running cargo: {e}"))?;
    if !status.success() {
        return Err(format!("building the samples in {} failed", tree.display()));
    }
    Ok(())
}

/// Renders each job with the binaries just built from `tree` into `out`.
fn render(tree: &Path, jobs: &[Job], out: &Path) -> Result<()> {
    std::fs::create_dir_all(out).map_err(|e| format!("{}: {e}", out.display()))?;
    for job in jobs {
        let png = out.join(format!("{}.png", job.stem));
        let _ = std::fs::remove_file(&png);
        // A sample the tree does not have (one added since the baseline's
        // commit) has no image there; the target directory may hold a
        // newer tree's binary of that name, which must not stand in.
        if !tree.join("samples/src/bin").join(format!("{}.rs", job.sample)).is_file() {
            println!("images: {} has no sample {}; no image", tree.display(), job.sample);
            std::fs::write(out.join(format!("{}.none", job.stem)), "").map_err(|e| format!("{}: {e}", out.display()))?;
            continue;
        }
        let size = [WIDTH.to_string(), HEIGHT.to_string(), FRAMES.to_string()];
        let output = Command::new(target_dir().join("debug").join(&job.sample))
            .args(&job.args)
            .args(["--headless", "--width", &size[0], "--height", &size[1], "--frames", &size[2], "--out"])
            .arg(&png)
            .current_dir(tree)
            .output()
            .map_err(|e| format!("running the sample {}: {e}", job.sample))?;
        if !output.status.success() || !png.is_file() {
            return Err(format!(
                "the sample {} ({}) failed: {}{}",
                job.sample,
                tree.display(),
                String::from_utf8_lossy(&output.stdout),
                String::from_utf8_lossy(&output.stderr)
            ));
        }
        println!("images: rendered {}", png.display());
    }
    Ok(())
}

/// `rev`'s images, rendered from a temporary worktree unless already there.
fn baseline(commit: &str, jobs: &[Job]) -> Result<PathBuf> {
    let dir = target_dir().join("images").join(commit);
    if jobs.iter().all(|j| dir.join(format!("{}.png", j.stem)).is_file() || dir.join(format!("{}.none", j.stem)).is_file()) {
        println!("images: {commit}'s images are in {} already", dir.display());
        return Ok(dir);
    }
    let tree = target_dir().join("images").join(format!("tree-{commit}"));
    let git = |args: &[&str]| -> Result<()> {
        let status = Command::new("git").args(args).current_dir(workspace_root()).status().map_err(|e| format!("running git: {e}"))?;
        if status.success() {
            Ok(())
        } else {
            Err(format!("git {} failed", args.join(" ")))
        }
    };
    if tree.exists() {
        git(&["worktree", "remove", "--force", &tree.display().to_string()])?;
    }
    git(&["worktree", "add", "--quiet", "--detach", &tree.display().to_string(), commit])?;
    let result = build_samples(&tree).and_then(|()| render(&tree, jobs, &dir));
    git(&["worktree", "remove", "--force", &tree.display().to_string()])?;
    result.map(|()| dir)
}

/// Renders the working tree's images and `against`'s, and compares them.
pub(crate) fn images(against: &str) -> Result<ExitCode> {
    crate::vulkan::ensure("images", crate::vulkan::RUN)?;
    let commit = resolve(against)?;
    let samples: Vec<String> = sample_list::samples()?.into_iter().map(|s| s.name).collect();
    let models = crate::reference::shared_models(&crate::reference::shared_models_dir());
    if models.is_empty() {
        println!("images: no models under ../shared/gltf-samples/; the gltf sample is skipped");
    }
    let models: Vec<PathBuf> = models.iter().map(|m| m.canonicalize().unwrap_or_else(|_| m.clone())).collect();
    let jobs = jobs(&samples, &models);
    let before = baseline(&commit, &jobs)?;
    let after = target_dir().join("images").join("work");
    build_samples(&workspace_root())?;
    render(&workspace_root(), &jobs, &after)?;
    let mut differing = 0;
    let mut new = 0;
    for job in &jobs {
        let name = format!("{}.png", job.stem);
        if !before.join(&name).is_file() {
            new += 1;
            println!("images: {:<24} new (no such sample at {commit})", job.stem);
            continue;
        }
        let comparison = compare(&read_png(&before.join(&name))?, &read_png(&after.join(&name))?);
        match comparison {
            Comparison::Identical => println!("images: {:<24} identical", job.stem),
            Comparison::SizeDiffers { before, after } => {
                differing += 1;
                println!("images: {:<24} DIFFERS: {}x{} before, {}x{} now", job.stem, before.0, before.1, after.0, after.1);
            }
            Comparison::PixelsDiffer { pixels, max_channel_difference } => {
                differing += 1;
                println!("images: {:<24} DIFFERS: {pixels} pixels, by up to {max_channel_difference} in a channel", job.stem);
            }
        }
    }
    println!(
        "images: {} of {} images identical to {commit} ({}), {new} new; the working tree's are in {}",
        jobs.len() - differing - new,
        jobs.len() - new,
        before.display(),
        after.display()
    );
    Ok(if differing == 0 { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gltf_renders_each_model_and_the_others_render_once() {
        let samples = ["hello".to_string(), "gltf".to_string(), "soak".to_string()];
        let models = [PathBuf::from("/m/A/A.gltf"), PathBuf::from("/m/B/B.glb")];
        let stems: Vec<String> = jobs(&samples, &models).into_iter().map(|j| j.stem).collect();
        assert_eq!(stems, ["hello", "gltf-A", "gltf-B", "soak"]);
        let gltf = &jobs(&samples, &models)[2];
        assert_eq!((gltf.sample.as_str(), gltf.args.as_slice()), ("gltf", &["/m/B/B.glb".to_string()][..]));
        assert!(jobs(&samples, &[]).iter().all(|j| j.sample != "gltf"), "no models: no gltf image");
    }

    #[test]
    fn one_changed_channel_is_a_difference() {
        let image = |pixels: Vec<u8>| Rgba { width: 2, height: 1, pixels };
        let before = image(vec![1, 2, 3, 255, 4, 5, 6, 255]);
        assert_eq!(compare(&before, &before.clone()), Comparison::Identical);
        assert_eq!(
            compare(&before, &image(vec![1, 2, 3, 255, 4, 5, 9, 255])),
            Comparison::PixelsDiffer { pixels: 1, max_channel_difference: 3 }
        );
        let taller = Rgba { width: 1, height: 2, pixels: before.pixels.clone() };
        assert_eq!(compare(&before, &taller), Comparison::SizeDiffers { before: (2, 1), after: (1, 2) });
    }
}
