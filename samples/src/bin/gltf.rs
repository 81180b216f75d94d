//! `cargo xtask run gltf -- FILE [--scene N] [--camera]`: a user's glTF 2.0
//! model (`.gltf` or `.glb`) through the whole pipeline.
//!
//! The file is imported off the game thread (`engine_core::gltf::load_async`):
//! in a window, frames keep rendering while it loads (the title's progress
//! line says how far it is); headless, the sample waits for it before its
//! first frame. The scene (`--scene N`, else the file's default) is spawned
//! and framed: a camera looking at its world bounds from the front, a little
//! above and to the side — or, with `--camera`, from where the file's first
//! camera is — a sun with shadows, and the renderer's ambient sky. In a
//! window, drag to orbit the model, WASD (Q/E, Shift) to fly.
//! Skinned meshes play the file's animation `--animation N` (default: its
//! first), looping, or keep their rest pose with `--animation none`;
//! `--list-animations` prints them and exits. The stats
//! file gains `import` (with `skins`, `animations`, `morph_targets`) and
//! `skinned` (`meshes`, `joints`, `morph_targets`). A bad file prints the
//! error (the JSON path of what is wrong and the problem) and exits 1.
//!
//! `--reference-scene PATH` writes, once the model is framed, what a
//! reference renderer needs to draw the same picture (`cargo xtask
//! reference` feeds it to the Khronos glTF Sample Viewer), in glTF's own
//! axes (Y up; a Proxima world vector `P` is the glTF vector
//! `(P.y, P.z, P.x)`, the inverse of [`gltf::gltf_to_proxima`]):
//!
//! ```json
//! { "model": "…/FlightHelmet.gltf", "scene": null, "width": 1280, "height": 720,
//!   "camera": { "eye": [x, y, z], "target": [x, y, z], "up": [x, y, z],
//!               "yfov": 1.0, "aspect": 1.777, "znear": 0.05, "zfar": 4.2 },
//!   "sun": { "direction": [x, y, z], "color": [1.0, 0.96, 0.9], "intensity": 3.0 } }
//! ```
//!
//! `yfov` is the vertical field of view in radians; `sun.direction` is the
//! direction the light travels (unit length); `color × intensity` is the
//! irradiance on a surface facing the sun, which is what
//! `KHR_lights_punctual` means by a directional light's colour and
//! intensity (lux). The ambient sky and the shadows are not in the file:
//! a reference run turns them off (`--cvar r.SkyLight.Intensity=0
//! --cvar r.Shadow.Enable=0`), with `r.Tonemapper=0` for no tone mapping
//! and `r.Shading.SpecularAAVariance=0` for the BRDF without specular
//! anti-aliasing (a reference renderer has none).

use anyhow::{anyhow, bail, Context};
use clap::Parser;
use engine_core::gltf::{self, GltfImport, GltfLimits, GltfLoad, SpawnedScene};
use engine_core::*;
use glam::Vec3;
use renderer::{Bounds, ShadowBias};
use samples::{runner, CommonOptions, ImportStats};
use std::path::PathBuf;
use std::time::Instant;

#[derive(Parser, Debug)]
#[command(name = "gltf", about = "A glTF 2.0 model (.gltf or .glb), framed, lit by a sun with shadows; drag to orbit, WASD to fly")]
struct Options {
    /// The `.gltf` or `.glb` file to show.
    file: PathBuf,
    /// The scene to show (by index; default: the file's default scene).
    #[arg(long, value_name = "N")]
    scene: Option<usize>,
    /// Look through the file's first camera instead of framing the model.
    #[arg(long)]
    camera: bool,
    /// The animation to play on the skinned meshes it moves (by the file's
    /// index; default: the first, when the file has any), or `none`: the
    /// meshes keep their rest pose (what a reference viewer shows without
    /// animation).
    #[arg(long, value_name = "N|none", value_parser = parse_animation)]
    animation: Option<Animation>,
    /// Print the file's animations (index, name, duration) and exit.
    #[arg(long)]
    list_animations: bool,
    /// Write the camera, the sun and the frame size as JSON, in glTF's axes,
    /// for a reference renderer (`cargo xtask reference`).
    #[arg(long, value_name = "PATH")]
    reference_scene: Option<PathBuf>,
    #[command(flatten)]
    common: CommonOptions,
}

fn main() {
    samples::main("gltf", run);
}

/// `--animation`: an index, or none.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Animation {
    Index(usize),
    None,
}

fn parse_animation(s: &str) -> Result<Animation, String> {
    match s {
        "none" => Ok(Animation::None),
        _ => s.parse().map(Animation::Index).map_err(|_| format!("expected an animation's index or none, got {s:?}")),
    }
}

/// The camera's direction from the model's centre: its front (+X after the
/// axis conversion), turned a little to the side and raised.
const VIEW_DIRECTION: Vec3 = Vec3::new(1.0, 0.45, 0.35);
/// The sun shines down from the front-left.
const SUN_DIRECTION: Vec3 = Vec3::new(-0.6, -0.45, -1.0);
/// The sun's light: colour × intensity is the irradiance on a surface facing it.
const SUN: DirectionalLightComponent = DirectionalLightComponent {
    color: Vec3::new(1.0, 0.96, 0.9),
    intensity: 3.0,
    cast_shadows: true,
    shadow_bias: ShadowBias::DIRECTIONAL,
};

fn run(o: &Options) -> anyhow::Result<()> {
    if o.list_animations {
        let import = gltf::import(&o.file).with_context(|| o.file.display().to_string())?;
        for (i, a) in import.animations.iter().enumerate() {
            let end = a.channels.iter().map(|c| c.end_time()).fold(0.0f32, f32::max);
            println!("{i}: {} ({end:.2} s, {} channels)", a.name, a.channels.len());
        }
        return Ok(());
    }
    let mut engine = runner::engine_lit("gltf", &o.common, SUN_DIRECTION)?;
    let started = Instant::now();
    // The camera and the sun exist from the first frame (the sky shows
    // while the model loads); `show` places the camera.
    let w = &mut engine.world;
    let (_, camera) = w.spawn_actor("camera", Box::new(CameraComponent::default()), Transform::IDENTITY)?;
    w.spawn_actor("sun", Box::new(SUN), Transform::new(Vec3::ZERO, look_rotation(Vec3::ZERO, SUN_DIRECTION), Vec3::ONE))?;
    let mut load = Some(gltf::load_async(&o.file, &GltfLimits::default()));
    let mut import_stats = None;
    let mut skinned = None;
    // Headless, the model is there from the first frame.
    if !o.common.wants_window() {
        let import = load.take().expect("started above").wait().with_context(|| o.file.display().to_string())?;
        let shown = show(&mut engine, o, &import, started, camera)?;
        (import_stats, skinned) = (Some(shown.0), Some(shown.1));
    }
    runner::run("gltf", &o.common, &mut engine, |engine, frame, _dt| {
        // The last frame of a `--frames` run waits for the model.
        let last = o.common.frames.is_some_and(|n| frame + 1 >= n);
        let result = if last {
            load.take().map(GltfLoad::wait)
        } else if let Some(l) = load.as_mut() {
            let result = l.poll();
            if result.is_none() && frame % 30 == 0 {
                eprintln!("gltf: loading {}: {:.0}%", o.file.display(), 100.0 * l.fraction());
            }
            result
        } else {
            None
        };
        if let Some(result) = result {
            load = None;
            let import = result.with_context(|| o.file.display().to_string())?;
            let shown = show(engine, o, &import, started, camera)?;
            (import_stats, skinned) = (Some(shown.0), Some(shown.1));
        }
        let skinned = skinned.clone().filter(|s: &samples::SkinnedStats| s.meshes > 0);
        Ok(runner::SampleFigures { import: import_stats.clone(), skinned, ..Default::default() })
    })
}

/// Spawns the import, starts its animation and points `camera` at it;
/// returns the stats file's `import` and `skinned`.
fn show(
    engine: &mut Engine,
    o: &Options,
    import: &GltfImport,
    started: Instant,
    camera_id: ComponentId,
) -> anyhow::Result<(ImportStats, samples::SkinnedStats)> {
    let ms = started.elapsed().as_secs_f64() * 1e3;
    let spawned = import.spawn_scene(&mut engine.world, o.scene).with_context(|| o.file.display().to_string())?;
    let skinned = play_animation(&mut engine.world, o, import, &spawned)?;
    let bounds = world_bounds(&engine.world, import, &spawned)?;
    let w = &mut engine.world;
    // The file's cameras are inactive: the sample's own camera renders,
    // placed where the first one is with --camera, so the user can fly it.
    for &c in &spawned.cameras {
        w.set_active(c, false)?;
    }
    let bounds = bounds.unwrap_or(Bounds { origin: Vec3::ZERO, extent: Vec3::splat(0.5), radius: 0.87 });
    let centre = bounds.origin;
    let mut camera = CameraComponent::default();
    let aspect = o.common.width as f32 / o.common.height.max(1) as f32;
    // The orbit's pivot: the point looked at (with --camera, as far along
    // the file camera's view as the model's centre is).
    let (transform, pivot) = if o.camera {
        let &first = spawned.cameras.first().ok_or_else(|| anyhow!("{}: --camera, but the scene has no camera", o.file.display()))?;
        camera.0 = w.component::<CameraComponent>(first)?.0;
        let (_, rotation, eye) = w.world_transform(first)?.to_scale_rotation_translation();
        (Transform::new(eye, rotation, Vec3::ONE), eye + rotation * Vec3::X * eye.distance(centre))
    } else {
        let (target, distance, depth) = framing(&world_points(w, import, &spawned)?, centre, camera.0.fov_y, aspect);
        let eye = target + VIEW_DIRECTION.normalize() * distance;
        camera.0.near = (distance - depth).max(distance * 0.01) * 0.5;
        camera.0.far = distance + depth * 4.0;
        (Transform::new(eye, look_rotation(eye, target), Vec3::ONE), target)
    };
    w.with_component_mut::<CameraComponent, _>(camera_id, |c| *c = camera)?;
    w.set_relative_transform(camera_id, transform)?;
    samples::fly_camera::orbit_camera(camera_id, pivot);
    // The sun's shadow cascades span the model whatever its scale (a model
    // in centimetres is hundreds of units across).
    let reach = transform.translation.distance(centre) + bounds.radius * 2.0;
    for (name, value) in
        [(renderer::cvars::SHADOW_CSM_MAX_DISTANCE, reach), (renderer::cvars::SHADOW_CSM_FIRST_CASCADE_DISTANCE, reach * 0.15)]
    {
        engine.render_thread().set_cvar(name, &value.to_string())?;
    }
    if let Some(path) = &o.reference_scene {
        let json = reference_scene(o, &camera, &transform, pivot);
        let text = serde_json::to_string_pretty(&json).expect("JSON of numbers and strings");
        std::fs::write(path, text + "\n").with_context(|| format!("writing {}", path.display()))?;
    }
    let stats = ImportStats {
        ms,
        meshes: import.meshes.iter().flatten().count() as u64,
        triangles: import.triangle_count() as u64,
        materials: import.materials.len() as u64,
        textures: import.textures.len() as u64,
        skins: import.skins.len() as u64,
        animations: import.animations.len() as u64,
        morph_targets: import.morph_target_primitives as u64,
        skipped: import.skipped.clone(),
    };
    println!(
        "gltf: imported {} in {:.0} ms: {} meshes, {} triangles, {} materials, {} textures{}",
        o.file.display(),
        stats.ms,
        stats.meshes,
        stats.triangles,
        stats.materials,
        stats.textures,
        if stats.skipped.is_empty() { String::new() } else { format!("; skipped: {}", stats.skipped.join("; ")) }
    );
    Ok((stats, skinned))
}

/// Plays animation `--animation` (default 0) on every skinned mesh it
/// moves, each starting at the same time; returns what the skinned meshes are.
fn play_animation(world: &mut World, o: &Options, import: &GltfImport, spawned: &SpawnedScene) -> anyhow::Result<samples::SkinnedStats> {
    let wanted = match o.animation {
        Some(Animation::None) => None,
        Some(Animation::Index(n)) if n >= import.animations.len() => {
            bail!("{}: --animation {n}, but the file has {} animations", o.file.display(), import.animations.len())
        }
        Some(Animation::Index(n)) => Some(n),
        None => Some(0),
    };
    let name = wanted.and_then(|w| import.animations.get(w)).map(|a| a.name.clone());
    let mut stats = samples::SkinnedStats { meshes: spawned.skeletal_meshes.len() as u64, ..Default::default() };
    for &id in &spawned.skeletal_meshes {
        let played = world.with_component_mut::<SkeletalMeshComponent, _>(id, |c| {
            let (joints, morphs) = (c.mesh().skeleton().len() as u64, c.mesh().render_data().morph_target_count() as u64);
            let clip = name.as_ref().and_then(|n| c.clips().iter().position(|clip| clip.name() == n.as_str()));
            (joints, morphs, clip.map(|i| c.play(i, true)))
        })?;
        stats.joints += played.0;
        stats.morph_targets += played.1;
        if let Some(result) = played.2 {
            result?;
        }
    }
    Ok(stats)
}

/// A Proxima world vector in glTF's axes (the inverse of `gltf_to_proxima`).
fn to_gltf(p: Vec3) -> [f32; 3] {
    [p.y, p.z, p.x]
}

/// `--reference-scene`'s JSON (see the module docs): the camera at
/// `transform` (looking along its +X, up +Z) towards `pivot`, and the sun.
fn reference_scene(o: &Options, camera: &CameraComponent, transform: &Transform, pivot: Vec3) -> serde_json::Value {
    let (rotation, eye) = (transform.rotation.normalize(), transform.translation);
    let forward = rotation * Vec3::X;
    // The target is the orbit's pivot, moved onto the line of sight.
    let target = eye + forward * (pivot - eye).dot(forward).max(camera.0.near);
    let sun_direction = (look_rotation(Vec3::ZERO, SUN_DIRECTION) * Vec3::X).normalize();
    let aspect = o.common.width as f32 / o.common.height.max(1) as f32;
    serde_json::json!({
        "model": o.file.display().to_string(),
        "scene": o.scene,
        "width": o.common.width,
        "height": o.common.height,
        "camera": {
            "eye": to_gltf(eye),
            "target": to_gltf(target),
            "up": to_gltf(rotation * Vec3::Z),
            "yfov": camera.0.fov_y,
            "aspect": aspect,
            "znear": camera.0.near,
            "zfar": camera.0.far,
        },
        "sun": { "direction": to_gltf(sun_direction), "color": SUN.color.to_array(), "intensity": SUN.intensity },
    })
}

/// Where the camera looks and how far back along [`VIEW_DIRECTION`] it
/// stands so every point is inside the view with a margin, and how far the
/// points reach towards the camera (for the near plane). The target starts
/// at `centre` and moves to centre the points' projection.
fn framing(points: &[Vec3], centre: Vec3, fov_y: f32, aspect: f32) -> (Vec3, f32, f32) {
    let d = VIEW_DIRECTION.normalize();
    let right = Vec3::Z.cross(d).normalize();
    let up = d.cross(right);
    let tan_v = (fov_y * 0.5).tan();
    let tan_h = tan_v * aspect;
    let fit = |target: Vec3| {
        let (mut distance, mut depth) = (1e-3f32, 1e-3f32);
        for p in points {
            let o = *p - target;
            // At distance D the point is D - o·d in front of the eye.
            distance = distance.max(o.dot(d) + o.dot(right).abs() / tan_h).max(o.dot(d) + o.dot(up).abs() / tan_v);
            depth = depth.max(o.dot(d).abs());
        }
        (distance * 1.08, depth)
    };
    let mut target = centre;
    for _ in 0..2 {
        let (distance, _) = fit(target);
        // The projection's extents at that distance, in tangent units.
        let (mut lo, mut hi) = (glam::Vec2::splat(f32::MAX), glam::Vec2::splat(f32::MIN));
        for p in points {
            let o = *p - target;
            let uv = glam::Vec2::new(o.dot(right), o.dot(up)) / (distance - o.dot(d)).max(1e-6);
            (lo, hi) = (lo.min(uv), hi.max(uv));
        }
        if lo.x > hi.x {
            break;
        }
        let mid = (lo + hi) * 0.5;
        target += (right * mid.x + up * mid.y) * distance;
    }
    let (distance, depth) = fit(target);
    (target, distance, depth)
}

/// The world-space vertices of the spawned meshes.
fn world_points(world: &World, import: &GltfImport, spawned: &SpawnedScene) -> anyhow::Result<Vec<Vec3>> {
    let mut points = Vec::new();
    for (n, id) in spawned.nodes.iter().enumerate() {
        let (Some(id), Some(m)) = (id, import.nodes[n].mesh) else { continue };
        let Some(mesh) = &import.meshes[m] else { continue };
        let to_world = world.world_transform(*id)?;
        points.extend(mesh.mesh.render_data().lods()[0].vertices.iter().map(|v| to_world.transform_point3(Vec3::from(v.position))));
    }
    Ok(points)
}

/// The world bounds of the spawned meshes (`None`: nothing drawable).
fn world_bounds(world: &World, import: &GltfImport, spawned: &SpawnedScene) -> anyhow::Result<Option<Bounds>> {
    let mut bounds: Option<Bounds> = None;
    for (n, id) in spawned.nodes.iter().enumerate() {
        let (Some(id), Some(m)) = (id, import.nodes[n].mesh) else { continue };
        let Some(mesh) = &import.meshes[m] else { continue };
        let b = mesh.mesh.bounds().transformed(&world.world_transform(*id)?);
        bounds = Some(bounds.map_or(b, |a| a.union(&b)));
    }
    if bounds.is_some_and(|b| !b.origin.is_finite() || !b.radius.is_finite()) {
        bail!("the model's bounds are not finite");
    }
    Ok(bounds)
}
