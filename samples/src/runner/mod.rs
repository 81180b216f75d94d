//! The frame loop every engine-based sample shares: builds the [`Engine`]
//! from the common options (validation on unless `PROXIMA_VALIDATION=0`,
//! `--serial` = inline render commands and serial pass setup and recording,
//! `--cvar` — the feature crates' console variables included —
//! `--wireframe`), runs `--frames` frames with a progress line, writes the
//! last frame as PNG and the stats file, prints the summary.
//!
//! | file | job |
//! | --- | --- |
//! | `mod.rs` | [`engine`] from the options, [`run`] picks the loop, the profilers |
//! | `headless.rs` | the headless frame loop |
//! | `window.rs` | window mode: event loop, window, swapchain, fly camera |
//! | `summary.rs` | timings over the run, the stats file from the last frame's [`renderer::FrameStats`], the summary line |
//! | `threads.rs` | CPU time per thread group from the scheduler (`thread_cpu_ms`) |
//!
//! Window mode (the `window` feature, on by default): when a window is wanted
//! (`--window`, or a display is set and `--headless` is not given) and winit
//! can reach a display, [`engine`] makes a device that can present and [`run`]
//! opens a window of `--width`×`--height`, ticks once per redraw and blits
//! the scene color onto the window's swapchain on the render thread, which
//! presents in `--present` mode (fifo, mailbox or immediate; fifo, said on
//! stderr, where the surface lacks the mode). Frames are rendered at the
//! window's size: a resize changes the engine's frame size (new render
//! targets, the cameras' aspect) rather than stretching the image. The
//! title shows the frame time and draws per pass. `--frames N` exits after N
//! frames; without it the sample runs until the window is closed. `--out`
//! and `--stats` work as headless (PNG only with `--out` and `--frames`).
//! Without a display it says so and runs headless.
//!
//! The figures come from the engine: the stats file is the last frame's
//! [`renderer::FrameStats`], whose named counters carry what the feature
//! crates' proxies count (visible instances, live particles drawn); a
//! sample adds only what its world knows ([`SampleFigures`]).

mod headless;
mod summary;
mod threads;
#[cfg(feature = "window")]
mod window;

use crate::{CommonOptions, ImportStats};
use anyhow::Context;
use engine_core::{Engine, EngineDesc};
use renderer::cvars;
use renderer::RenderThreadMode;
use rhi_vulkan::{DeviceDesc, Validation};

/// The samples' anti-aliasing without `--aa`: FXAA (`r.AntiAliasingMethod=1`);
/// engines a user compares with anti-alias by default. The gltf sample
/// takes 4x MSAA (as Bevy does): a model's edges, not post-filtered ones.
const DEFAULT_AA: crate::options::AaChoice = crate::options::AaChoice::FXAA;
/// The samples that take 4x MSAA without `--aa`.
const MSAA_BY_DEFAULT: &[&str] = &["gltf"];
/// The samples that take TAA without `--aa` (UE's default): the showcase,
/// whose foliage, thin lamp posts and moving crowd alias most.
const TAA_BY_DEFAULT: &[&str] = &["showcase"];

/// The samples that bloom without `--bloom`: the showcase, whose lamps,
/// windows and fireflies glow at dusk.
const BLOOM_BY_DEFAULT: &[&str] = &["showcase"];

/// The samples lit by the analytic sky without `--environment`: a glTF
/// model and the material spheres look as they do in other engines only
/// with something around them to reflect.
const SKY_BY_DEFAULT: &[&str] = &["gltf", "materials", "many-foxes"];

/// What a sample's world knows that the frame's stats do not: the
/// instanced-static-mesh instances it holds (`instances.total`) and a
/// file's import. Visible instances and particles drawn come from the
/// frame's stats (the proxies' counters), not from here.
#[derive(Clone, Debug, Default)]
pub struct SampleFigures {
    pub instances_total: u64,
    pub import: Option<ImportStats>,
    pub skinned: Option<crate::stats::SkinnedStats>,
}

/// Builds the engine for `common`.
/// Installs the logger first ([`crate::init_logging`]), so the device's
/// lines (the device chosen, validation messages) are seen.
pub fn engine(sample: &str, common: &CommonOptions) -> anyhow::Result<Engine> {
    engine_lit(sample, common, -renderer::ProceduralSky::default().sun_direction)
}

/// [`engine`] for a sample whose sun's light travels along `sun_travel`:
/// the analytic sky (`--environment sky`, or the sample's default) glows
/// around that sun.
pub fn engine_lit(sample: &str, common: &CommonOptions, sun_travel: glam::Vec3) -> anyhow::Result<Engine> {
    let mut engine = build_engine(sample, common)?;
    let choice = common.environment.clone().unwrap_or(if SKY_BY_DEFAULT.contains(&sample) {
        crate::options::EnvironmentOption::Sky
    } else {
        crate::options::EnvironmentOption::Hemisphere
    });
    let environment = match choice {
        crate::options::EnvironmentOption::Hemisphere => None,
        crate::options::EnvironmentOption::Sky => Some(renderer::Environment::Sky(renderer::ProceduralSky::with_sun(-sun_travel))),
        crate::options::EnvironmentOption::File(path) => {
            let image = renderer::EquirectImage::load_hdr(&path).with_context(|| format!("--environment {}", path.display()))?;
            Some(renderer::Environment::image(image))
        }
    };
    if let Some(e) = environment {
        engine.render_thread().set_environment(e)?;
    }
    crate::memory::note_engine_made();
    Ok(engine)
}

fn build_engine(sample: &str, common: &CommonOptions) -> anyhow::Result<Engine> {
    crate::init_logging();
    threads::name_worker_pool();
    let validation = match std::env::var("PROXIMA_VALIDATION").as_deref() {
        Ok("0") => Validation::Disabled,
        _ => Validation::Enabled,
    };
    let mode = if common.serial { RenderThreadMode::Inline } else { RenderThreadMode::Threaded };
    #[allow(unused_mut)]
    let mut device = DeviceDesc { app_name: sample.into(), validation, ..Default::default() };
    #[cfg(feature = "window")]
    if common.wants_window() {
        match window::open_event_loop() {
            Ok(display) => device.surface_extensions = rhi_vulkan::surface_instance_extensions(display)?,
            Err(e) => eprintln!("{sample}: cannot open a window ({e:#}); running headless"),
        }
    }
    let mut engine = Engine::new(&EngineDesc { width: common.width, height: common.height, mode, device })?;
    start_profiling(common);
    let rt = engine.render_thread();
    if common.serial {
        rt.set_cvar(cvars::PARALLEL_PASS_SETUP, "0")?;
        rt.set_cvar(cvars::PARALLEL_RECORD, "0")?;
    }
    if common.wireframe {
        rt.set_cvar(cvars::WIREFRAME, "1")?;
    }
    // The features' console variables exist once registered: add the
    // features before `--cvar` is applied, so every sample can set them.
    for &feature in crate::FEATURES {
        rt.add_feature(feature)?;
    }
    // The sample's anti-aliasing unless the options say otherwise; `--cvar` wins over both.
    let default_aa = match sample {
        s if MSAA_BY_DEFAULT.contains(&s) => crate::options::AaChoice::MSAA4,
        s if TAA_BY_DEFAULT.contains(&s) => crate::options::AaChoice::TAA,
        _ => DEFAULT_AA,
    };
    let aa = common.aa.unwrap_or(default_aa);
    rt.set_cvar(cvars::ANTI_ALIASING_METHOD, &aa.method.to_string())?;
    if let Some(n) = aa.samples {
        rt.set_cvar(cvars::MSAA_COUNT, &n.to_string())?;
    }
    let bloom = common.bloom.unwrap_or(BLOOM_BY_DEFAULT.contains(&sample));
    rt.set_cvar(cvars::BLOOM, if bloom { "1" } else { "0" })?;
    if let Some(ev100) = common.ev100 {
        rt.set_cvar(cvars::EXPOSURE, &renderer::exposure_of_ev100(ev100).to_string())?;
    }
    if let Some(on) = common.auto_exposure {
        rt.set_cvar(cvars::AUTO_EXPOSURE, if on { "1" } else { "0" })?;
    }
    if let Some(t) = common.tonemapper {
        rt.set_cvar(cvars::TONEMAPPER, &t.to_string())?;
    }
    for (name, value) in &common.cvar {
        rt.set_cvar(name, value).with_context(|| format!("--cvar {name}={value}"))?;
    }
    if let Some(show) = common.show {
        engine.world.set_show_bounds(show.bounds);
        engine.world.set_show_collision(show.collision);
    }
    #[cfg(not(feature = "window"))]
    if common.wants_window() && common.window {
        eprintln!("{sample}: this build has no window support (the samples' `window` feature is off); running headless");
    }
    Ok(engine)
}

/// Starts the profilers: the Chrome-trace recorder with `--trace`, and the
/// client of a profiler backend compiled in (`profile-with-tracy`,
/// `profile-with-puffin`).
fn start_profiling(common: &CommonOptions) {
    if common.trace.is_some() {
        renderer::trace::start();
    }
    #[cfg(feature = "profile-with-tracy")]
    profiling::tracy_client::Client::start();
    #[cfg(feature = "profile-with-puffin")]
    profiling::puffin::set_scopes_on(true);
}

/// Writes the Chrome trace of `--trace`; returns what to say about it.
pub(crate) fn write_trace(common: &CommonOptions) -> anyhow::Result<String> {
    let Some(path) = &common.trace else { return Ok(String::new()) };
    let trace = renderer::trace::stop();
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    std::fs::write(path, trace.chrome_json()).with_context(|| format!("writing {}", path.display()))?;
    let dropped = if trace.dropped > 0 { format!(" ({} more left out)", trace.dropped) } else { String::new() };
    Ok(format!("; trace of {} spans{dropped} written to {}", trace.events.len(), path.display()))
}

/// Runs the frames; `update(engine, frame, dt)` runs before each tick and
/// returns the sample's figures.
pub fn run(
    sample: &str,
    common: &CommonOptions,
    engine: &mut Engine,
    update: impl FnMut(&mut Engine, u64, f32) -> anyhow::Result<SampleFigures>,
) -> anyhow::Result<()> {
    crate::memory::note_scene_built();
    #[cfg(feature = "window")]
    if let Some(event_loop) = window::take_event_loop() {
        let done = window::run(sample, common, engine, event_loop, update)?;
        return summary::finish(sample, common, engine, done);
    }
    let done = headless::run(common, engine, update)?;
    summary::finish(sample, common, engine, done)
}
