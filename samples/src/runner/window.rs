//! Window mode (the `window` feature): the winit event loop, the window
//! and the swapchain. [`open_event_loop`] connects to the display when
//! [`super::engine`] makes the device; [`run`] opens a window of
//! `--width`×`--height`, ticks once per redraw and blits the scene color
//! onto the window's swapchain on the render thread, which presents in
//! `--present` mode. Frames are rendered at the window's size; the title
//! shows the frame time and draws per pass.

use super::summary::{gpu_summary, Done, MeanTimings};
use super::SampleFigures;
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
    mean: MeanTimings,
    last: Instant,
    last_title: Instant,
    read_back: bool,
    fly: FlyCamera,
}

impl<F: FnMut(&mut Engine, u64, f32) -> anyhow::Result<SampleFigures>> App<'_, F> {
    fn open(&mut self, event_loop: &ActiveEventLoop) -> anyhow::Result<()> {
        let (w, h) = (self.common.width, self.common.height);
        let attrs = Window::default_attributes().with_title(format!("Proxima — {}", self.sample)).with_inner_size(PhysicalSize::new(w, h));
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
        let dt = self.common.fixed_dt.unwrap_or_else(|| self.last.elapsed().as_secs_f32().clamp(1e-4, 0.1));
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
                    gpu_summary(&stats),
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
        mean: MeanTimings::new(common.frames.unwrap_or(10)),
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
        threads: app.mean.threads(),
        read_back: app.read_back,
    })
}
