//! The engine loop (UE's UGameEngine::Tick, reduced):
//!
//! ```text
//! game   | begin(N) tick  end-of-frame  enqueue N | begin(N+1) tick ... enqueue N+1 | begin(N+2): waits for N |
//! render |                                        | render N ........................ | render N+1 ...
//! ```
//! The game thread simulates frame N+1 while the render thread renders N,
//! and never runs further ahead than that.

use crate::error::Result;
use crate::world::World;
use renderer::{FrameRequest, FrameStats, RenderThread, RenderThreadMode, ViewFamily};
use rhi_vulkan::{DeviceDesc, Image};
use std::time::Instant;

#[derive(Clone, Debug)]
pub struct EngineDesc {
    pub width: u32,
    pub height: u32,
    pub mode: RenderThreadMode,
    pub device: DeviceDesc,
}

impl Default for EngineDesc {
    fn default() -> Self {
        Self { width: 1280, height: 720, mode: RenderThreadMode::Threaded, device: DeviceDesc::default() }
    }
}

/// Game-side milliseconds of the last frame.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct GameTimings {
    /// Waiting for the render thread (frame pacing).
    pub wait: f64,
    pub game: f64,
    pub end_of_frame: f64,
}

pub struct Engine {
    pub world: World,
    width: u32,
    height: u32,
    frame: u64,
    pub timings: GameTimings,
}

impl Engine {
    /// Creates the device and render thread, and an empty world.
    pub fn new(desc: &EngineDesc) -> Result<Self> {
        let rt = RenderThread::new(&desc.device, desc.mode)?;
        Ok(Self {
            world: World::new(Some(rt)),
            width: desc.width.max(1),
            height: desc.height.max(1),
            frame: 0,
            timings: GameTimings::default(),
        })
    }

    /// The size of the frames [`Engine::tick`] renders.
    pub fn size(&self) -> (u32, u32) {
        (self.width, self.height)
    }

    /// Renders the following frames at `width`×`height` (a resized
    /// window): the view family of the next frame has the new size, so the
    /// renderer recreates its targets and the cameras' aspect follows. A
    /// zero side is an error and leaves the size unchanged.
    pub fn set_size(&mut self, width: u32, height: u32) -> Result<()> {
        if width == 0 || height == 0 {
            return Err(crate::EngineError::InvalidSize { width, height });
        }
        (self.width, self.height) = (width, height);
        Ok(())
    }

    fn rt(&mut self) -> &mut RenderThread {
        self.world.render.as_mut().expect("an engine's world has a render thread")
    }

    /// One frame: wait for pacing, tick components, send end-of-frame
    /// updates, enqueue the rendering of the cameras' views. Returns the
    /// frame number. With `read_back` it also waits until the frame is
    /// rendered and its GPU work done, so [`Self::stats`] and
    /// [`Self::read_back`] are that frame's (other frames overlap the GPU,
    /// `r.FramesInFlight`).
    pub fn tick(&mut self, dt: f32, read_back: bool) -> Result<u64> {
        let t0 = Instant::now();
        self.rt().begin_frame()?;
        let t1 = Instant::now();
        self.world.tick(dt);
        let t2 = Instant::now();
        self.world.send_all_end_of_frame_updates()?;
        let t3 = Instant::now();
        let views = self.world.collect_views(self.width, self.height);
        self.world.take_camera_cuts();
        let mut family = ViewFamily::new(self.width, self.height, views);
        // Time-based adaptation (auto exposure) follows the game's clock.
        family.delta_seconds = if dt.is_finite() { dt.clamp(0.0, 10.0) } else { 0.0 };
        let n = self.rt().render_frame(FrameRequest { family, read_back, execute: true })?;
        if read_back {
            self.rt().flush()?;
        }
        self.frame = n + 1;
        let ms = |a: Instant, b: Instant| (b - a).as_secs_f64() * 1e3;
        self.timings = GameTimings { wait: ms(t0, t1), game: ms(t1, t2), end_of_frame: ms(t2, t3) };
        Ok(n)
    }

    /// Waits for every frame enqueued so far.
    pub fn flush(&mut self) -> Result<()> {
        Ok(self.rt().flush()?)
    }

    /// The stats of the newest frame whose GPU work has finished (see
    /// `RenderThread::last_stats`).
    pub fn stats(&mut self) -> Result<Option<FrameStats>> {
        Ok(self.rt().last_stats()?)
    }

    /// The image of the last frame rendered with `read_back` (waits).
    pub fn read_back(&mut self) -> Result<Option<Image>> {
        Ok(self.rt().read_back()?)
    }

    pub fn frames_rendered(&mut self) -> u64 {
        self.rt().frames_rendered()
    }

    pub fn render_thread(&mut self) -> &mut RenderThread {
        self.rt()
    }
}
