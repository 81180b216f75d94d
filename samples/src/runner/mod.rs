//! The frame loop every engine-based sample shares: builds the [`Engine`]
//! from the common options (validation on unless `PROXIMA_VALIDATION=0`,
//! `--serial` = inline render commands and serial pass setup and recording,
//! `--cvar` — the feature crates' console variables included — `--wireframe`), runs `--frames` frames with a progress line,
//! writes the last frame as PNG and the stats file, prints the summary.
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

use crate::{
    write_png, CommonOptions, ImportStats, InstanceStats, MaterialStats, MeshDrawCommandsBuilt, PassStats, Percentiles, PipelineStats,
    Progress, SampleStats, StageMs, TextureStats, Timings, ValidationStats,
};
use anyhow::{bail, Context};
use engine_core::{Engine, EngineDesc};
use renderer::cvars;
use renderer::passes::PassViews;
use renderer::{FrameStats, RenderThreadMode};
use rhi_vulkan::{DeviceDesc, Validation};
use std::collections::BTreeMap;
use std::time::Instant;

/// Extra figures a sample reports (instances, particles, a file's import).
#[derive(Clone, Debug, Default)]
pub struct SampleFigures {
    pub particles: u64,
    pub instances: InstanceStats,
    pub import: Option<ImportStats>,
}

/// Builds the engine for `common`.
/// Installs the logger first ([`crate::init_logging`]), so the device's
/// lines (the device chosen, validation messages) are seen.
pub fn engine(sample: &str, common: &CommonOptions) -> anyhow::Result<Engine> {
    crate::init_logging();
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
    // The feature crates' console variables exist once registered: register
    // them before `--cvar` is applied, so every sample can set them.
    instancing::register_cvars(rt)?;
    for (name, value) in &common.cvar {
        rt.set_cvar(name, value).with_context(|| format!("--cvar {name}={value}"))?;
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
fn write_trace(common: &CommonOptions) -> anyhow::Result<String> {
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
    #[cfg(feature = "window")]
    if let Some(event_loop) = window::take_event_loop() {
        let done = window::run(sample, common, engine, event_loop, update)?;
        return finish(sample, common, engine, done);
    }
    let done = run_headless(common, engine, update)?;
    finish(sample, common, engine, done)
}

/// Sums each frame's timings after warm-up, for [`SampleStats::mean_timings_ms`],
/// and keeps the frame and render-CPU times for their percentiles
/// ([`SampleStats::frame_time_ms`], [`SampleStats::render_cpu_time_ms`]).
#[derive(Default)]
struct MeanTimings {
    warmup: u64,
    frame_times: Vec<f64>,
    render_cpu_times: Vec<f64>,
    game_frames: u64,
    game: f64,
    end_of_frame: f64,
    frame: f64,
    render_frames: u64,
    render_cpu: f64,
    gpu: f64,
    /// GPU milliseconds per pass, summed (a pass that did not draw in a
    /// frame counts 0 there).
    gpu_passes: BTreeMap<String, f64>,
    /// CPU milliseconds per frame stage, summed.
    stages: [f64; renderer::Stage::COUNT],
    /// The last render-thread frame counted (stats lag the game thread).
    last_render_frame: Option<u64>,
}

impl MeanTimings {
    fn new(frames: u64) -> Self {
        Self { warmup: if frames >= 2 { (frames / 5).max(1) } else { 0 }, ..Default::default() }
    }

    /// Counts game frame `index` (0-based) and the render thread's latest frame.
    fn add(&mut self, index: u64, game: engine_core::GameTimings, frame_ms: f64, render: Option<&FrameStats>) {
        if index >= self.warmup {
            self.game_frames += 1;
            self.game += game.game;
            self.end_of_frame += game.end_of_frame;
            self.frame += frame_ms;
            self.frame_times.push(frame_ms);
        }
        if let Some(s) = render {
            // Render frames are numbered from 0, as game frames are.
            if s.frame >= self.warmup && self.last_render_frame.is_none_or(|f| s.frame > f) {
                self.last_render_frame = Some(s.frame);
                self.render_frames += 1;
                self.render_cpu += s.timings.render_cpu();
                self.render_cpu_times.push(s.timings.render_cpu());
                self.gpu += s.timings.gpu;
                for (sum, ms) in self.stages.iter_mut().zip(s.timings.stages) {
                    *sum += ms;
                }
                for (pass, ms) in gpu_passes(s) {
                    *self.gpu_passes.entry(pass).or_default() += ms;
                }
            }
        }
    }

    fn mean(&self) -> Timings {
        let per = |sum: f64, n: u64| if n == 0 { 0.0 } else { sum / n as f64 };
        Timings {
            game: per(self.game, self.game_frames),
            end_of_frame: per(self.end_of_frame, self.game_frames),
            render_cpu: per(self.render_cpu, self.render_frames),
            stages: StageMs::from_stages(&self.stages.map(|ms| per(ms, self.render_frames))),
            gpu: per(self.gpu, self.render_frames),
            gpu_passes: self.gpu_passes.iter().map(|(p, &ms)| (p.clone(), per(ms, self.render_frames))).collect(),
            frame: per(self.frame, self.game_frames),
        }
    }

    /// Percentiles of (frame time, render-thread CPU time) after warm-up.
    fn percentiles(&self) -> (Percentiles, Percentiles) {
        (Percentiles::of(&self.frame_times), Percentiles::of(&self.render_cpu_times))
    }
}

/// GPU milliseconds of each pass that drew in `stats`' frame, by the
/// pass's name in the stats file (none without GPU timestamps).
fn gpu_passes(stats: &FrameStats) -> BTreeMap<String, f64> {
    renderer::passes::all()
        .filter(|&p| stats.timings.gpu_timestamps && stats.pass(p).draws > 0)
        .map(|p| (p.name().to_string(), stats.timings.gpu_pass(p)))
        .collect()
}

/// "GPU 3.1 ms (depth 0.4, base 2.2)": the frame's GPU time and its passes'
/// (for the summary line and the window title).
pub(crate) fn gpu_summary(stats: &FrameStats) -> String {
    let passes: Vec<String> = gpu_passes(stats).iter().map(|(p, ms)| format!("{p} {ms:.1}")).collect();
    let source = if stats.timings.gpu_timestamps { "" } else { " (submit to fence: no GPU timestamps)" };
    if passes.is_empty() {
        format!("GPU {:.1}{source}", stats.timings.gpu)
    } else {
        format!("GPU {:.1}: {}", stats.timings.gpu, passes.join(", "))
    }
}

/// What the frame loop leaves for the summary.
struct Done {
    frames: u64,
    figures: SampleFigures,
    frame_ms: f64,
    game: engine_core::GameTimings,
    mean: Timings,
    /// Percentiles of frame time and render-thread CPU time after warm-up.
    percentiles: (Percentiles, Percentiles),
    /// Whether the last frame was read back (a PNG can be written).
    read_back: bool,
}

fn run_headless(
    common: &CommonOptions,
    engine: &mut Engine,
    mut update: impl FnMut(&mut Engine, u64, f32) -> anyhow::Result<SampleFigures>,
) -> anyhow::Result<Done> {
    let frames = common.frame_count();
    let dt = 1.0 / 60.0;
    let mut progress = Progress::new(frames);
    let mut figures = SampleFigures::default();
    let mut frame_ms = 0.0;
    let mut game = engine.timings;
    let mut mean = MeanTimings::new(frames);
    for i in 0..frames {
        let start = Instant::now();
        let span = renderer::trace::Span::new("game", "game_frame");
        figures = update(engine, i, dt)?;
        engine.tick(dt, i + 1 == frames)?;
        game = engine.timings;
        if i + 1 == frames {
            engine.flush()?;
        }
        drop(span);
        profiling::finish_frame!();
        frame_ms = start.elapsed().as_secs_f64() * 1e3;
        mean.add(i, game, frame_ms, engine.stats()?.as_ref());
        progress.frame_done(i + 1);
    }
    progress.finish();
    Ok(Done { frames, figures, frame_ms, game, mean: mean.mean(), percentiles: mean.percentiles(), read_back: true })
}

fn finish(sample: &str, common: &CommonOptions, engine: &mut Engine, done: Done) -> anyhow::Result<()> {
    let Done { frames, figures, frame_ms, game, mean, percentiles, read_back } = done;
    let stats: FrameStats = engine.stats()?.context("no frame was rendered")?;
    let traced = write_trace(common)?;
    let out = common.out_path(sample);
    let written = if read_back {
        let image = engine.read_back()?.context("no image was read back")?;
        write_png(&out, &image).with_context(|| format!("writing {}", out.display()))?;
        out.display().to_string()
    } else {
        "(no image: window mode writes one with --out and --frames)".to_string()
    };
    let (device, v) = {
        let rt = engine.render_thread();
        let name = rt.device_name().to_string();
        (name, rt.with_context(|ctx| ctx.device.validation())?)
    };
    // The engine's size: `--width`×`--height`, or a window's last size.
    let (width, height) = engine.size();
    let mut s = SampleStats::new(sample, width, height);
    s.frames = frames;
    s.device = device;
    s.validation = ValidationStats { enabled: v.enabled(), errors: v.errors(), warnings: v.warnings() };
    s.primitives = stats.primitives;
    s.visible_primitives = stats.visible_primitives;
    // Every pass of the renderer's pass table by its name; a wireframe-view
    // pass only when it drew.
    for pass in renderer::passes::all() {
        let p = stats.pass(pass);
        if pass.desc().views != PassViews::Wireframe || p.draws > 0 {
            s.passes.insert(
                pass.name().into(),
                PassStats {
                    mesh_draw_commands: p.mesh_draw_commands,
                    draws: p.draws,
                    instances: p.instances,
                    indirect_draws: p.indirect_draws,
                },
            );
        }
    }
    s.mesh_draw_commands_built = MeshDrawCommandsBuilt { cached: stats.cached_commands_built, dynamic: stats.dynamic_commands_built };
    s.proxies_created = stats.proxies_created;
    s.triangles = stats.triangles;
    s.pipelines = Some(PipelineStats { created: stats.pipelines_created, live: stats.pipelines_live });
    s.materials = Some(MaterialStats { live: stats.materials_live, bytes_uploaded: stats.material_bytes_uploaded });
    s.textures = Some(TextureStats { live: stats.textures_live, bytes: stats.texture_bytes_uploaded });
    s.particles = figures.particles;
    s.instances = figures.instances;
    s.import = figures.import;
    s.timings_ms = Timings {
        game: game.game,
        end_of_frame: game.end_of_frame,
        render_cpu: stats.timings.render_cpu(),
        stages: StageMs::from_stages(&stats.timings.stages),
        gpu: stats.timings.gpu,
        gpu_passes: gpu_passes(&stats),
        frame: frame_ms,
    };
    s.mean_timings_ms = mean;
    (s.frame_time_ms, s.render_cpu_time_ms) = percentiles;
    if let Some(path) = &common.stats {
        s.write(path).with_context(|| format!("writing {}", path.display()))?;
    }
    let draws = |n: &str| s.passes.get(n).map(|p| p.draws).unwrap_or(0);
    println!(
        "{sample}: {frames} frame(s) at {}x{} on {}; {} primitives, {} visible; draws: depth {}, shadow {}, base {}, translucency {}; commands built: {} cached, {} dynamic; last frame {:.1} ms (game {:.2}, end of frame {:.2}, render CPU {:.1}, {}); validation {} ({} errors, {} warnings); image written to {}{}",
        width,
        height,
        s.device,
        s.primitives,
        s.visible_primitives,
        draws("depth"),
        draws("shadow"),
        draws("base"),
        draws("translucency"),
        s.mesh_draw_commands_built.cached,
        s.mesh_draw_commands_built.dynamic,
        s.timings_ms.frame,
        s.timings_ms.game,
        s.timings_ms.end_of_frame,
        s.timings_ms.render_cpu,
        gpu_summary(&stats),
        if s.validation.enabled { "on" } else { "off" },
        s.validation.errors,
        s.validation.warnings,
        written,
        traced
    );
    if s.validation.errors > 0 {
        bail!("the validation layer reported {} error(s): {:#?}", s.validation.errors, v.messages());
    }
    Ok(())
}

/// Window mode: the winit event loop, the window and the swapchain.
#[cfg(feature = "window")]
mod window {
    use super::{Done, SampleFigures};
    use crate::fly_camera::{FlyCamera, Key};
    use crate::CommonOptions;
    use anyhow::{anyhow, Context};
    use engine_core::Engine;
    use renderer::MeshPass;
    use rhi_vulkan::raw_window_handle::RawDisplayHandle;
    use rhi_vulkan::Swapchain;
    use std::cell::RefCell;
    use std::sync::{Arc, Mutex};
    use std::time::Instant;
    use winit::application::ApplicationHandler;
    use winit::dpi::PhysicalSize;
    use winit::event::{ElementState, MouseButton, WindowEvent};
    use winit::event_loop::{ActiveEventLoop, ControlFlow, EventLoop};
    use winit::keyboard::{KeyCode, PhysicalKey};
    use winit::raw_window_handle::HasDisplayHandle;
    use winit::window::{Window, WindowId};

    thread_local! {
        /// The event loop [`super::engine`] opened, waiting for [`super::run`]
        /// (winit allows one per process, on the main thread).
        static EVENT_LOOP: RefCell<Option<EventLoop<()>>> = const { RefCell::new(None) };
    }

    /// Connects to the display; the event loop waits for [`take_event_loop`].
    pub fn open_event_loop() -> anyhow::Result<RawDisplayHandle> {
        let event_loop = EventLoop::new().context("no display")?;
        let display = event_loop.display_handle().context("no display handle")?.as_raw();
        EVENT_LOOP.with(|l| *l.borrow_mut() = Some(event_loop));
        Ok(display)
    }

    pub fn take_event_loop() -> Option<EventLoop<()>> {
        EVENT_LOOP.with(|l| l.borrow_mut().take())
    }

    type SharedSwapchain = Arc<Mutex<Option<Swapchain>>>;

    struct App<'a, F> {
        sample: &'a str,
        common: &'a CommonOptions,
        engine: &'a mut Engine,
        update: F,
        window: Option<Arc<Window>>,
        swapchain: SharedSwapchain,
        /// The first error of a present on the render thread.
        present_error: Arc<Mutex<Option<String>>>,
        error: Option<anyhow::Error>,
        frame: u64,
        figures: SampleFigures,
        frame_ms: f64,
        game: engine_core::GameTimings,
        mean: super::MeanTimings,
        last: Instant,
        last_title: Instant,
        read_back: bool,
        fly: FlyCamera,
    }

    impl<F: FnMut(&mut Engine, u64, f32) -> anyhow::Result<SampleFigures>> App<'_, F> {
        fn open(&mut self, event_loop: &ActiveEventLoop) -> anyhow::Result<()> {
            let (w, h) = (self.common.width, self.common.height);
            let attrs =
                Window::default_attributes().with_title(format!("Proxima — {}", self.sample)).with_inner_size(PhysicalSize::new(w, h));
            let window = Arc::new(event_loop.create_window(attrs).context("creating the window")?);
            let size = window.inner_size();
            // Render at the size the window got (the window system may not
            // grant the one asked for).
            self.resize_frames(size);
            let source = window.clone();
            let mode = self.common.present;
            let swapchain = self
                .engine
                .render_thread()
                .with_context(move |ctx| Swapchain::new(&ctx.device, source, size.width.max(1), size.height.max(1), mode))?
                .context("creating the swapchain")?;
            if swapchain.present_mode() != mode {
                eprintln!("{}: the window's surface has no {mode} present mode; presenting in {}", self.sample, swapchain.present_mode());
            }
            *self.swapchain.lock().unwrap() = Some(swapchain);
            window.request_redraw();
            self.window = Some(window);
            Ok(())
        }

        fn frame(&mut self, event_loop: &ActiveEventLoop) -> anyhow::Result<()> {
            if let Some(e) = self.present_error.lock().unwrap().take() {
                return Err(anyhow!("presenting: {e}"));
            }
            let dt = self.last.elapsed().as_secs_f32().clamp(1e-4, 0.1);
            self.last = Instant::now();
            let start = Instant::now();
            let last = self.common.frames.is_some_and(|n| self.frame + 1 == n);
            let read_back = last && self.common.out.is_some();
            let span = renderer::trace::Span::new("game", "game_frame");
            self.figures = (self.update)(self.engine, self.frame, dt)?;
            self.fly.apply(self.engine, dt)?;
            self.engine.tick(dt, read_back)?;
            self.game = self.engine.timings;
            let swapchain = self.swapchain.clone();
            let errors = self.present_error.clone();
            self.engine.render_thread().enqueue_render_command(move |ctx| {
                let Some((texture, state)) = ctx.renderer.color_target() else { return };
                if let Some(sc) = swapchain.lock().unwrap().as_mut() {
                    if let Err(e) = sc.present_texture(&ctx.device, texture, state) {
                        errors.lock().unwrap().get_or_insert(e.to_string());
                    }
                }
            })?;
            self.frame += 1;
            if last {
                self.engine.flush()?;
                self.read_back = read_back;
            }
            drop(span);
            profiling::finish_frame!();
            self.frame_ms = start.elapsed().as_secs_f64() * 1e3;
            self.mean.add(self.frame - 1, self.game, self.frame_ms, self.engine.stats()?.as_ref());
            if last || self.last_title.elapsed().as_secs_f32() > 0.25 {
                self.last_title = Instant::now();
                if let (Some(window), Some(stats)) = (&self.window, self.engine.stats()?) {
                    let d = |p| stats.pass(p).draws;
                    window.set_title(&format!(
                        "Proxima — {} | frame {} | {:.1} ms (render CPU {:.1}, {}) | draws: depth {}, shadow {}, base {}, translucency {} | {} visible / {} primitives",
                        self.sample,
                        self.frame,
                        self.frame_ms,
                        stats.timings.render_cpu(),
                        super::gpu_summary(&stats),
                        d(MeshPass::DepthPrepass),
                        d(MeshPass::ShadowDepth),
                        d(MeshPass::Base),
                        d(MeshPass::Translucency),
                        stats.visible_primitives,
                        stats.primitives,
                    ));
                }
            }
            if last {
                event_loop.exit();
            }
            Ok(())
        }

        /// Renders the next frames at the window's new size; a minimized
        /// window (a zero side) keeps the last size.
        fn resize_frames(&mut self, size: PhysicalSize<u32>) {
            if size.width > 0 && size.height > 0 {
                // Cannot fail: both sides are at least 1.
                let _ = self.engine.set_size(size.width, size.height);
            }
        }

        fn fail(&mut self, event_loop: &ActiveEventLoop, e: anyhow::Error) {
            self.error.get_or_insert(e);
            event_loop.exit();
        }
    }

    impl<F: FnMut(&mut Engine, u64, f32) -> anyhow::Result<SampleFigures>> ApplicationHandler for App<'_, F> {
        fn resumed(&mut self, event_loop: &ActiveEventLoop) {
            if self.window.is_none() && self.error.is_none() {
                if let Err(e) = self.open(event_loop) {
                    self.fail(event_loop, e);
                }
            }
        }

        fn window_event(&mut self, event_loop: &ActiveEventLoop, _id: WindowId, event: WindowEvent) {
            if self.error.is_some() {
                return;
            }
            match event {
                WindowEvent::CloseRequested => event_loop.exit(),
                WindowEvent::KeyboardInput { event, .. } => {
                    let key = match event.physical_key {
                        PhysicalKey::Code(KeyCode::KeyW) => Some(Key::Forward),
                        PhysicalKey::Code(KeyCode::KeyS) => Some(Key::Back),
                        PhysicalKey::Code(KeyCode::KeyA) => Some(Key::Left),
                        PhysicalKey::Code(KeyCode::KeyD) => Some(Key::Right),
                        PhysicalKey::Code(KeyCode::KeyQ) => Some(Key::Down),
                        PhysicalKey::Code(KeyCode::KeyE) => Some(Key::Up),
                        PhysicalKey::Code(KeyCode::ShiftLeft | KeyCode::ShiftRight) => Some(Key::Fast),
                        PhysicalKey::Code(KeyCode::Escape) => {
                            event_loop.exit();
                            None
                        }
                        _ => None,
                    };
                    if let Some(key) = key {
                        self.fly.key(key, event.state == ElementState::Pressed);
                    }
                }
                WindowEvent::MouseInput { state, button: MouseButton::Left | MouseButton::Right, .. } => {
                    self.fly.button(state == ElementState::Pressed);
                }
                WindowEvent::CursorMoved { position, .. } => self.fly.cursor(position.x, position.y),
                WindowEvent::Resized(size) => {
                    self.resize_frames(size);
                    let swapchain = self.swapchain.clone();
                    let r = self.engine.render_thread().enqueue_render_command(move |_| {
                        if let Some(sc) = swapchain.lock().unwrap().as_mut() {
                            sc.resize(size.width, size.height);
                        }
                    });
                    if let Err(e) = r {
                        self.fail(event_loop, e.into());
                    }
                }
                WindowEvent::RedrawRequested => {
                    if event_loop.exiting() {
                        return;
                    }
                    if let Err(e) = self.frame(event_loop) {
                        self.fail(event_loop, e);
                    }
                }
                _ => {}
            }
        }

        fn about_to_wait(&mut self, _event_loop: &ActiveEventLoop) {
            if let Some(window) = &self.window {
                window.request_redraw();
            }
        }
    }

    /// Runs frames in a window until `--frames` or until it is closed.
    pub fn run(
        sample: &str,
        common: &CommonOptions,
        engine: &mut Engine,
        event_loop: EventLoop<()>,
        update: impl FnMut(&mut Engine, u64, f32) -> anyhow::Result<SampleFigures>,
    ) -> anyhow::Result<Done> {
        event_loop.set_control_flow(ControlFlow::Poll);
        let mut app = App {
            sample,
            common,
            game: engine.timings,
            engine,
            update,
            window: None,
            swapchain: Arc::new(Mutex::new(None)),
            present_error: Arc::new(Mutex::new(None)),
            error: None,
            frame: 0,
            figures: SampleFigures::default(),
            frame_ms: 0.0,
            mean: super::MeanTimings::new(common.frames.unwrap_or(10)),
            last: Instant::now(),
            last_title: Instant::now(),
            read_back: false,
            fly: FlyCamera::default(),
        };
        let result = event_loop.run_app(&mut app);
        // The swapchain goes before the device and while the window is still open.
        let swapchain = app.swapchain.clone();
        let destroyed = app.engine.render_thread().with_context(move |ctx| match swapchain.lock().unwrap().take() {
            Some(mut sc) => sc.destroy(&ctx.device),
            None => Ok(()),
        });
        drop(app.window.take());
        if let Some(e) = app.error.take() {
            return Err(e);
        }
        result.context("the window's event loop")?;
        destroyed?.context("destroying the swapchain")?;
        if let Some(e) = app.present_error.lock().unwrap().take() {
            return Err(anyhow!("presenting: {e}"));
        }
        if app.frame == 0 {
            return Err(anyhow!("the window was closed before the first frame"));
        }
        println!("{sample}: window closed after {} frame(s)", app.frame);
        Ok(Done {
            frames: app.frame,
            figures: app.figures,
            frame_ms: app.frame_ms,
            game: app.game,
            mean: app.mean.mean(),
            percentiles: app.mean.percentiles(),
            read_back: app.read_back,
        })
    }
}
