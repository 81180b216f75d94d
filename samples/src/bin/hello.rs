//! `cargo xtask run hello`: an instanced grid of colored quads drawn offscreen
//! through rhi-vulkan alone, recorded into secondaries on two threads (or
//! inline with `--serial`), written to a PNG with the stats of `docs/samples.md`.

use anyhow::{bail, Context};
use clap::Parser;
use rhi_vulkan::*;
use samples::{write_png, CommonOptions, PassStats, Progress, SampleStats};
use std::time::Instant;
use test_support::QuadGrid;

#[derive(Parser, Debug)]
#[command(name = "hello", about = "An instanced grid of colored quads, drawn offscreen")]
struct Options {
    /// Quads per row.
    #[arg(long, default_value_t = 32, value_parser = clap::value_parser!(u32).range(1..=4096))]
    cols: u32,
    /// Quads per column.
    #[arg(long, default_value_t = 18, value_parser = clap::value_parser!(u32).range(1..=4096))]
    rows: u32,
    #[command(flatten)]
    common: CommonOptions,
}

fn main() {
    samples::main("hello", run);
}

fn run(options: &Options) -> anyhow::Result<()> {
    samples::init_logging();
    let common = &options.common;
    if let Some((name, _)) = common.cvar.first() {
        bail!("hello has no console variables (got {name}); they arrive with the renderer");
    }
    let validation = match std::env::var("PROXIMA_VALIDATION").as_deref() {
        Ok("0") => Validation::Disabled,
        _ => Validation::Enabled,
    };
    #[allow(unused_mut)]
    let mut desc = DeviceDesc { app_name: "hello".into(), validation, ..Default::default() };
    #[cfg(feature = "window")]
    let mut window = match common.wants_window() {
        true => match hello_window::HelloWindow::connect(&mut desc) {
            Ok(w) => Some(w),
            Err(e) => {
                eprintln!("hello: cannot open a window ({e:#}); running headless");
                None
            }
        },
        false => None,
    };
    #[cfg(not(feature = "window"))]
    if common.wants_window() && common.window {
        eprintln!("hello: this build has no window support (the samples' `window` feature is off); running headless");
    }
    let device = Device::new(&desc)?;
    let (width, height) = (common.width, common.height);
    #[cfg(feature = "window")]
    if let Some(w) = window.as_mut() {
        w.open(&device, width, height, common.present)?;
    }
    #[cfg(feature = "window")]
    let windowed = window.is_some();
    #[cfg(not(feature = "window"))]
    let windowed = false;
    let color = device.create_texture(&TextureDesc::render_target("hello color", width, height, Format::Rgba8Unorm))?;
    let grid = QuadGrid::new(&device, Format::Rgba8Unorm, options.cols, options.rows)?;
    let threads = if common.serial { 1 } else { 2 };
    // In a window without --frames: until the window is closed.
    let frames = if windowed { common.frames.unwrap_or(u64::MAX) } else { common.frame_count() };
    let mut rendered = 0;
    let viewport = Rect::from_size(width, height);
    let pass = RenderingDesc {
        color: vec![ColorAttachment { texture: color, load: LoadOp::Clear([0.02, 0.02, 0.03, 1.0]), store: true, resolve: None }],
        depth: None,
        area: viewport,
    };
    let mut progress = Progress::new(frames);
    let mut state = TextureState::Undefined;
    let mut draws = 0;
    let (mut render_cpu, mut gpu, mut frame_ms) = (0.0, 0.0, 0.0);
    let mut gpu_base = None;
    for i in 0..frames {
        let frame_start = Instant::now();
        let mut frame = device.begin_frame()?;
        frame.cmd().texture_barrier(color, state, TextureState::ColorAttachment)?;
        state = TextureState::ColorAttachment;
        frame.cmd().write_timestamp("base begin")?;
        if common.serial {
            let cmd = frame.cmd();
            cmd.begin_rendering(&pass, RenderingContents::Inline)?;
            grid.record(cmd, viewport, 0, grid.instance_count, 1)?;
            cmd.end_rendering()?;
            draws = cmd.draw_count();
        } else {
            let layout = RenderingLayout { color_formats: vec![Format::Rgba8Unorm], depth_format: None, samples: 1 };
            let per = grid.instance_count.div_ceil(threads);
            let secondaries = rayon::scope(|_| -> anyhow::Result<Vec<SecondaryCommandBuffer>> {
                use rayon::prelude::*;
                (0..threads)
                    .into_par_iter()
                    .filter(|t| t * per < grid.instance_count)
                    .map(|t| {
                        let first = t * per;
                        let count = per.min(grid.instance_count - first);
                        Ok(frame.record_secondary(&layout, |cmd| grid.record(cmd, viewport, first, count, 1))?.0)
                    })
                    .collect()
            })?;
            let cmd = frame.cmd();
            cmd.begin_rendering(&pass, RenderingContents::Secondary)?;
            cmd.execute_secondaries(&secondaries)?;
            cmd.end_rendering()?;
            draws = cmd.draw_count();
        }
        frame.cmd().write_timestamp("base end")?;
        let recorded = Instant::now();
        let submitted = frame.submit()?;
        device.wait_for(submitted.value)?;
        let done = Instant::now();
        render_cpu = (recorded - frame_start).as_secs_f64() * 1e3;
        // The GPU's own time where it has timestamps; submit to fence otherwise.
        (gpu, gpu_base) = match device.frame_timestamps(submitted)? {
            Some(t) => (t.frame_ms(), t.between("base begin", "base end")),
            None => ((done - recorded).as_secs_f64() * 1e3, None),
        };
        frame_ms = (done - frame_start).as_secs_f64() * 1e3;
        rendered = i + 1;
        #[cfg(feature = "window")]
        if let Some(w) = window.as_mut() {
            if !w.present(&device, color, state, &format!("Proxima — hello | frame {rendered} | {frame_ms:.1} ms | {draws} draw(s)"))? {
                break;
            }
        }
        if !windowed {
            progress.frame_done(i + 1);
        }
    }
    progress.finish();
    #[cfg(feature = "window")]
    if let Some(w) = window.take() {
        w.close(&device);
        println!("hello: window closed after {rendered} frame(s)");
    }
    let frames = rendered;
    let image = device.read_texture(color, state)?;
    let out = common.out_path("hello");
    write_png(&out, &image).with_context(|| format!("writing {}", out.display()))?;

    let v = device.validation();
    let mut stats = SampleStats::new("hello", width, height);
    stats.frames = frames;
    stats.device = device.name().to_string();
    stats.validation = samples::ValidationStats { enabled: v.enabled(), errors: v.errors(), warnings: v.warnings() };
    stats.passes.insert(
        "base".into(),
        PassStats { mesh_draw_commands: 0, draws: u64::from(draws), instances: u64::from(grid.instance_count), indirect_draws: 0 },
    );
    stats.triangles = u64::from(grid.instance_count) * 2;
    stats.timings_ms.render_cpu = render_cpu;
    stats.timings_ms.gpu = gpu;
    stats.timings_ms.gpu_passes.extend(gpu_base.map(|ms| ("base".to_string(), ms)));
    stats.timings_ms.frame = frame_ms;
    if let Some(path) = &common.stats {
        stats.write(path).with_context(|| format!("writing {}", path.display()))?;
    }
    println!(
        "hello: {frames} frame(s) at {width}x{height} on {}; base pass {draws} draw(s) of {} instanced quads recorded on {threads} thread(s); last frame {frame_ms:.2} ms (CPU {render_cpu:.2} ms, GPU {gpu:.2} ms); validation {} with {} error(s), {} warning(s); image written to {}",
        stats.device,
        grid.instance_count,
        if v.enabled() { "on" } else { "off" },
        v.errors(),
        v.warnings(),
        out.display()
    );
    grid.destroy(&device);
    device.destroy_texture(color);
    let report = device.shutdown();
    if report.validation_errors > 0 {
        bail!("the validation layer reported {} error(s)", report.validation_errors);
    }
    Ok(())
}

/// Window mode for `hello`, which drives the RHI directly (no engine): a
/// winit window pumped between frames and a swapchain the frame is blitted to
/// (in `--present` mode). Unlike the engine samples, hello keeps its
/// `--width`×`--height` texture: a resized window shows it scaled.
#[cfg(feature = "window")]
mod hello_window {
    use anyhow::Context;
    use rhi_vulkan::{Device, DeviceDesc, PresentMode, Swapchain, TextureHandle, TextureState};
    use std::sync::Arc;
    use std::time::{Duration, Instant};
    use winit::application::ApplicationHandler;
    use winit::dpi::PhysicalSize;
    use winit::event::WindowEvent;
    use winit::event_loop::{ActiveEventLoop, EventLoop};
    use winit::platform::pump_events::EventLoopExtPumpEvents;
    use winit::raw_window_handle::HasDisplayHandle;
    use winit::window::{Window, WindowId};

    #[derive(Default)]
    struct App {
        size: (u32, u32),
        window: Option<Arc<Window>>,
        closed: bool,
        resized: Option<(u32, u32)>,
    }

    impl ApplicationHandler for App {
        fn resumed(&mut self, event_loop: &ActiveEventLoop) {
            if self.window.is_none() {
                let attrs =
                    Window::default_attributes().with_title("Proxima — hello").with_inner_size(PhysicalSize::new(self.size.0, self.size.1));
                match event_loop.create_window(attrs) {
                    Ok(w) => self.window = Some(Arc::new(w)),
                    Err(_) => self.closed = true,
                }
            }
        }

        fn window_event(&mut self, _: &ActiveEventLoop, _: WindowId, event: WindowEvent) {
            match event {
                WindowEvent::CloseRequested => self.closed = true,
                WindowEvent::Resized(s) => self.resized = Some((s.width, s.height)),
                _ => {}
            }
        }
    }

    pub struct HelloWindow {
        event_loop: EventLoop<()>,
        app: App,
        swapchain: Option<Swapchain>,
    }

    impl HelloWindow {
        /// Connects to the display and asks the device for its surface extensions.
        pub fn connect(desc: &mut DeviceDesc) -> anyhow::Result<Self> {
            let event_loop = EventLoop::new().context("no display")?;
            let display = event_loop.display_handle().context("no display handle")?.as_raw();
            desc.surface_extensions = rhi_vulkan::surface_instance_extensions(display)?;
            Ok(Self { event_loop, app: App::default(), swapchain: None })
        }

        /// Opens the window and creates its swapchain.
        pub fn open(&mut self, device: &Device, width: u32, height: u32, present: PresentMode) -> anyhow::Result<()> {
            self.app.size = (width, height);
            let start = Instant::now();
            while self.app.window.is_none() && !self.app.closed && start.elapsed() < Duration::from_secs(5) {
                self.event_loop.pump_app_events(Some(Duration::from_millis(10)), &mut self.app);
            }
            let window = self.app.window.clone().context("the window did not open")?;
            let size = window.inner_size();
            let swapchain = Swapchain::new(device, window, size.width.max(1), size.height.max(1), present)?;
            if swapchain.present_mode() != present {
                eprintln!("hello: the window's surface has no {present} present mode; presenting in {}", swapchain.present_mode());
            }
            self.swapchain = Some(swapchain);
            Ok(())
        }

        /// Presents `texture`; false once the window was closed.
        pub fn present(&mut self, device: &Device, texture: TextureHandle, state: TextureState, title: &str) -> anyhow::Result<bool> {
            self.event_loop.pump_app_events(Some(Duration::ZERO), &mut self.app);
            if self.app.closed {
                return Ok(false);
            }
            let sc = self.swapchain.as_mut().context("no swapchain")?;
            if let Some((w, h)) = self.app.resized.take() {
                sc.resize(w, h);
            }
            sc.present_texture(device, texture, state)?;
            if let Some(w) = &self.app.window {
                w.set_title(title);
            }
            Ok(true)
        }

        /// Destroys the swapchain (before the device) and the window.
        pub fn close(mut self, device: &Device) {
            if let Some(mut sc) = self.swapchain.take() {
                if let Err(e) = sc.destroy(device) {
                    eprintln!("destroying the swapchain: {e}");
                }
            }
            drop(self.app.window.take());
        }
    }
}
