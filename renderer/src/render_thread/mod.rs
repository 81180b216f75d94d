//! The render thread and the game side's handle to it.
//!
//! ```text
//! game   | tick 0 | enqueue F0 | tick 1 | enqueue F1 | wait F0 | tick 2 | enqueue F2 | wait F1 | ...
//! render |        | render F0 .......... | render F1 .......... | render F2 ...
//! ```
//! The render thread owns the device, the scene, every proxy and every GPU
//! resource. The game side talks to it only by enqueuing boxed
//! `FnOnce(&mut RenderContext) + Send` commands on a crossbeam channel,
//! executed in order, and runs at most one frame ahead: before frame N+2 it
//! waits until frame N has been rendered.
//!
//! The queue is bounded: at most [`MAX_QUEUED_COMMANDS`] commands wait for
//! the render thread, and `enqueue_render_command` blocks (back-pressure)
//! while it is full, so a game that queues updates without rendering
//! cannot grow memory without limit. Commands that carry data (a texture's
//! texels) are bounded by bytes too: at most
//! [`RenderThread::queue_byte_limit`] ([`DEFAULT_QUEUE_BYTE_LIMIT`]) wait,
//! one larger than the limit alone waits for an empty queue. A command therefore must never wait
//! for the game thread to enqueue something (nothing in the engine does);
//! a game thread blocked on a full queue from inside a rayon job runs other
//! rayon jobs meanwhile, so the render thread's parallel work still finishes. Inline mode runs every command on
//! the caller's thread at once (deterministic debugging); both give the same
//! images. A panic on the render thread is caught and turned into
//! [`RendererError::RenderThreadPanicked`] on the game side's next call —
//! no deadlock, no abort. A lost device is final in the same way: once the
//! device answers that it is lost (a frame's submission or wait, a scene
//! update's upload, anything run on the render thread), the frames in
//! flight are abandoned (never waited for) and every later game-side call
//! is `RendererError::Rhi(RhiError::DeviceLost)` at once; dropping the
//! handle still shuts the device down cleanly.

use crate::cvars::ConsoleVariables;
use crate::error::{RendererError, Result};
use crate::frame::scene_renderer::{FrameRequest, RetiredFrame, SceneRenderer};
use crate::material::{MaterialMirror, SlotIds};
use crate::mesh_pass::passes::PassTable;
use crate::mesh_pass::MeshPass;
use crate::scene::Scene;
use crate::stats::FrameStats;
use crate::texture::{TextureId, TextureLimits};
use rhi_vulkan::{Device, DeviceDesc, Image, RhiError};
use std::any::Any;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;

mod assets;
mod scene_requests;

pub use scene_requests::Refused;

/// Everything the render thread owns.
pub struct RenderContext {
    /// The GPU device; only the render thread uses it.
    pub device: Device,
    /// The render-side scene: primitives, materials, textures, lights.
    pub scene: Scene,
    /// Renders the scene's frames.
    pub renderer: SceneRenderer,
    /// The render thread's copy of the console variables (the game side's
    /// changes reach it as commands).
    pub cvars: ConsoleVariables,
    /// The newest image read back, if any frame asked for one.
    pub last_image: Option<Image>,
    /// The frame number of `last_image`.
    pub last_image_frame: Option<u64>,
    /// The stats of the newest frame whose GPU work has finished.
    pub last_complete_stats: Option<FrameStats>,
}

impl RenderContext {
    /// An empty scene on `device`, with the default console variables.
    pub fn new(device: Device) -> Self {
        let renderer = SceneRenderer::new(&device);
        Self {
            device,
            scene: Scene::default(),
            renderer,
            cvars: ConsoleVariables::default(),
            last_image: None,
            last_image_frame: None,
            last_complete_stats: None,
        }
    }

    /// Renders one frame now and returns its stats: complete with
    /// `r.FramesInFlight=1`; with more, its GPU figures may not be in yet
    /// (`FrameStats::gpu_complete`; see `last_complete_stats`).
    pub fn render_frame(&mut self, request: &FrameRequest) -> Result<FrameStats> {
        let (stats, _) = self.renderer.render(&self.device, &mut self.scene, &self.cvars, request)?;
        self.note_retired_image();
        Ok(stats)
    }

    /// Waits for the frames still on the GPU (their stats and images are
    /// then in `renderer.take_retired()`; the last image in `last_image`).
    /// On a lost device it is `RendererError::Rhi(RhiError::DeviceLost)`.
    pub fn finish(&mut self) -> Result<()> {
        self.renderer.finish(&self.device)?;
        self.note_retired_image();
        Ok(())
    }

    /// `last_image` becomes the newest image among the retired frames,
    /// `last_complete_stats` the newest stats.
    fn note_retired_image(&mut self) {
        if let Some(f) = self.renderer.frames.retired.back() {
            if self.last_complete_stats.as_ref().is_none_or(|s| s.frame < f.stats.frame) {
                self.last_complete_stats = Some(f.stats.clone());
            }
        }
        if let Some(f) = self.renderer.frames.retired.iter().rev().find(|f| f.image.is_some()) {
            if self.last_image_frame.is_none_or(|n| n < f.stats.frame) {
                self.last_image = f.image.clone();
                self.last_image_frame = Some(f.stats.frame);
            }
        }
    }
}

impl Drop for RenderContext {
    fn drop(&mut self) {
        self.renderer.release(&self.device);
        self.scene.release_material_resources(&self.device);
    }
}

/// A render command.
pub type RenderCommand = Box<dyn FnOnce(&mut RenderContext) + Send>;

/// Most commands waiting for the render thread before
/// `enqueue_render_command` blocks. Like UE's render command pipe, the queue
/// absorbs a frame's worth of commands (a game enqueues a few per changed
/// primitive batch, plus one per frame) without ever stalling a normal game,
/// while bounding what a game that stops rendering can pile up.
pub const MAX_QUEUED_COMMANDS: usize = 4096;

/// Bytes of data (texels of textures being created) that may wait in the
/// render-command queue by default ([`RenderThread::set_queue_byte_limit`]).
pub const DEFAULT_QUEUE_BYTE_LIMIT: u64 = 512 << 20;

/// How long one blocked send waits before re-checking the render thread's
/// state (and, on a rayon worker, running other rayon jobs).
const SEND_POLL: std::time::Duration = std::time::Duration::from_millis(5);

/// Where render commands run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RenderThreadMode {
    /// A dedicated render thread (the default).
    Threaded,
    /// Every command runs immediately on the caller's thread.
    Inline,
}

#[derive(Default)]
struct SharedState {
    commands_done: u64,
    frames_rendered: u64,
    panic: Option<String>,
    /// The device was lost (seen after a command): every later call fails.
    device_lost: bool,
    last_stats: Option<FrameStats>,
    last_frame_error: Option<String>,
    frames_failed: u64,
}

#[derive(Default)]
struct Shared {
    state: Mutex<SharedState>,
    changed: Condvar,
    /// Bytes the queued commands carry (see [`RenderThread::enqueue_sized`]).
    queued_bytes: std::sync::atomic::AtomicU64,
}

impl Shared {
    fn lock(&self) -> std::sync::MutexGuard<'_, SharedState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The render thread's panic, or the lost device, as an error.
    fn check(&self) -> Result<()> {
        let s = self.lock();
        if let Some(msg) = &s.panic {
            return Err(RendererError::RenderThreadPanicked(msg.clone()));
        }
        if s.device_lost {
            return Err(RendererError::Rhi(RhiError::DeviceLost));
        }
        Ok(())
    }
}

enum Backend {
    Threaded { sender: Option<crossbeam_channel::Sender<RenderCommand>>, handle: Option<JoinHandle<()>> },
    Inline { ctx: Box<RenderContext> },
}

/// The game side's handle: enqueue commands, add primitives, render frames.
pub struct RenderThread {
    backend: Backend,
    shared: Arc<Shared>,
    commands_enqueued: u64,
    /// At most this many bytes of data wait in the queue.
    queue_byte_limit: u64,
    frames_enqueued: u64,
    /// Game-side mirror used to validate `set_cvar` before enqueuing.
    cvars: ConsoleVariables,
    /// Hands out material ids (new slots, and destroyed materials' slots in
    /// their next generation) and knows each live material's parameters:
    /// mirrors the render thread's registry, so bad requests fail here.
    materials: MaterialMirror,
    /// Hands out texture ids, as `materials` does material ids.
    texture_ids: SlotIds<TextureId>,
    /// The device's texture limits, to check textures before queueing them.
    texture_limits: TextureLimits,
    next_light: AtomicU64,
    /// Game-side mirror of the scene's lights, so that what the scene
    /// refuses (an invalid light, a fifth directional light, a change its
    /// mobility forbids) is refused here, before anything is queued.
    lights: crate::scene::SceneLights,
    device_name: String,
    /// Game-side mirror of the scene's pass table (ids are handed out here).
    passes: PassTable,
    /// The vertex factories registered (and compile-checked) on this renderer, by name.
    vertex_factories: Vec<&'static str>,
    /// The features added ([`RenderFeature::name`]), in order.
    features: Vec<&'static str>,
}

/// A feature crate's registration on a renderer (Bevy's plugins, UE's
/// modules): its passes, vertex factories and console variables, all
/// registered on the one render thread, none in process-wide statics. A
/// feature crate exports one value implementing it; an application adds
/// each feature it uses once ([`RenderThread::add_feature`]).
pub trait RenderFeature: Sync {
    /// The feature's name (the crate's, e.g. `"instancing"`).
    fn name(&self) -> &'static str;
    /// Registers what the feature needs on `rt`.
    fn register(&self, rt: &mut RenderThread) -> Result<()>;
}

/// Waits for the frames on the GPU and publishes the newest complete stats
/// (a failure is the last frame's error).
fn finish_gpu(ctx: &mut RenderContext, shared: &Shared) -> Result<()> {
    let finished = ctx.finish();
    let mut s = shared.lock();
    if let Some(c) = &ctx.last_complete_stats {
        s.last_stats = Some(c.clone());
    }
    if let Err(e) = &finished {
        log::error!("waiting for the frames on the GPU: {e}");
        s.last_frame_error = Some(e.to_string());
    }
    finished
}

fn panic_message(p: Box<dyn Any + Send>) -> String {
    p.downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into())
}

fn run_command(ctx: &mut RenderContext, shared: &Shared, cmd: RenderCommand) -> bool {
    let result = std::panic::catch_unwind(AssertUnwindSafe(|| cmd(ctx)));
    // Whatever the command was, a device it found lost stays lost.
    let lost = ctx.device.is_lost();
    let mut s = shared.lock();
    s.commands_done += 1;
    if lost && !s.device_lost {
        log::error!("the Vulkan device was lost: every later call fails");
        s.device_lost = true;
    }
    let ok = match result {
        Ok(()) => true,
        Err(p) => {
            let msg = panic_message(p);
            log::error!("render thread panicked: {msg}");
            s.panic = Some(msg);
            false
        }
    };
    drop(s);
    shared.changed.notify_all();
    ok
}

/// The render thread's worker pool: as many threads as rayon's global pool
/// (`RAYON_NUM_THREADS` honoured), the calling thread itself one of them.
/// The render thread makes one for itself; code that drives a
/// [`SceneRenderer`](crate::SceneRenderer) on a thread of its own (a
/// benchmark, a tool) calls this on that thread and keeps the pool.
///
/// Why not the global pool: a parallel section started from a thread
/// outside the pool (culling chunks, pass-setup tasks, recording chunks)
/// is injected and waits for a worker to wake, then for a second one to
/// steal; on a machine whose idle cores take long to wake, a short section
/// then runs on one worker while the render thread sleeps. As a worker, the
/// render thread starts on the section at once, and whatever no other
/// worker has stolen yet it runs itself — never slower than serial,
/// parallel as soon as a second worker is awake. With one thread
/// (`RAYON_NUM_THREADS=1`) the pool is the render thread alone: every
/// parallel section runs on it, with no hand-off to another thread and
/// back (which would cost two wake-ups per section).
/// The pool's workers end with the render thread (rayon keeps a small
/// registry of a pool its creating thread joined: one per render thread).
/// `None` when the pool cannot be made (rayon's global pool is used then).
pub fn render_worker_pool() -> Option<rayon::ThreadPool> {
    let threads = rayon::current_num_threads();
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .use_current_thread()
        .thread_name(|i| format!("render worker {i}"))
        .build()
        .map_err(|e| log::warn!("render thread pool: {e}; using rayon's global pool"))
        .ok()
}

impl RenderThread {
    /// Creates the device and starts the render thread (or the inline context).
    pub fn new(device_desc: &DeviceDesc, mode: RenderThreadMode) -> Result<Self> {
        // Materials are checked over the built-in skinned factory too.
        crate::mesh_pass::note_vertex_factory(&crate::skeletal::SKINNED_VERTEX_FACTORY);
        let device = Device::new(device_desc)?;
        let device_name = device.name().to_string();
        let texture_limits = TextureLimits::of(&device);
        let shared = Arc::new(Shared::default());
        let backend = match mode {
            RenderThreadMode::Inline => Backend::Inline { ctx: Box::new(RenderContext::new(device)) },
            RenderThreadMode::Threaded => {
                let (sender, receiver) = crossbeam_channel::bounded::<RenderCommand>(MAX_QUEUED_COMMANDS);
                let thread_shared = shared.clone();
                let handle = std::thread::Builder::new()
                    .name("render thread".into())
                    .spawn(move || {
                        // Held for the thread's life: rayon calls made here
                        // run on this pool, with this thread as a worker.
                        let _pool = render_worker_pool();
                        let mut ctx = RenderContext::new(device);
                        for cmd in receiver {
                            if !run_command(&mut ctx, &thread_shared, cmd) {
                                break;
                            }
                        }
                        // Dropping `ctx` here destroys the scene, then the device, on this thread.
                    })
                    .map_err(|e| RendererError::RenderThreadStart(e.to_string()))?;
                Backend::Threaded { sender: Some(sender), handle: Some(handle) }
            }
        };
        Ok(Self {
            backend,
            shared,
            commands_enqueued: 0,
            queue_byte_limit: DEFAULT_QUEUE_BYTE_LIMIT,
            frames_enqueued: 0,
            cvars: ConsoleVariables::default(),
            materials: MaterialMirror::default(),
            texture_ids: SlotIds::default(),
            texture_limits,
            next_light: AtomicU64::new(1),
            lights: Default::default(),
            device_name,
            passes: PassTable::default(),
            vertex_factories: Vec::new(),
            features: Vec::new(),
        })
    }

    /// The name of the device the render thread uses.
    pub fn device_name(&self) -> &str {
        &self.device_name
    }

    /// Whether commands run on a dedicated thread or inline.
    pub fn mode(&self) -> RenderThreadMode {
        match self.backend {
            Backend::Threaded { .. } => RenderThreadMode::Threaded,
            Backend::Inline { .. } => RenderThreadMode::Inline,
        }
    }

    fn check(&self) -> Result<()> {
        self.shared.check()
    }

    /// Enqueues a command (UE's ENQUEUE_RENDER_COMMAND). Blocks while
    /// [`MAX_QUEUED_COMMANDS`] commands are already waiting.
    pub fn enqueue_render_command(&mut self, f: impl FnOnce(&mut RenderContext) + Send + 'static) -> Result<()> {
        self.check()?;
        match &mut self.backend {
            Backend::Threaded { sender, .. } => {
                let sender = sender.as_ref().ok_or(RendererError::RenderThreadGone)?;
                let mut cmd: RenderCommand = Box::new(f);
                loop {
                    match sender.send_timeout(cmd, SEND_POLL) {
                        Ok(()) => break,
                        Err(crossbeam_channel::SendTimeoutError::Disconnected(_)) => {
                            self.shared.check()?;
                            return Err(RendererError::RenderThreadGone);
                        }
                        Err(crossbeam_channel::SendTimeoutError::Timeout(back)) => {
                            cmd = back;
                            self.shared.check()?;
                            // On a rayon worker, help the pool: the render
                            // thread may be waiting for rayon jobs.
                            if rayon::current_thread_index().is_some() {
                                rayon::yield_now();
                            }
                        }
                    }
                }
                self.commands_enqueued += 1;
            }
            Backend::Inline { ctx } => {
                self.commands_enqueued += 1;
                run_command(ctx, &self.shared, Box::new(f));
            }
        }
        self.check()
    }

    /// Enqueues a command that carries `bytes` of data: first waits
    /// (back-pressure, as a full queue) until the data already queued and
    /// `bytes` fit in [`Self::queue_byte_limit`], or the queue holds no
    /// data (a command larger than the limit goes alone).
    pub(crate) fn enqueue_sized(&mut self, bytes: u64, f: impl FnOnce(&mut RenderContext) + Send + 'static) -> Result<()> {
        use std::sync::atomic::Ordering::AcqRel;
        loop {
            let queued = self.queued_bytes();
            if queued == 0 || queued.saturating_add(bytes) <= self.queue_byte_limit {
                break;
            }
            self.shared.check()?;
            std::thread::sleep(SEND_POLL);
        }
        self.shared.queued_bytes.fetch_add(bytes, AcqRel);
        // Given back once: when the command has run, or when enqueuing
        // failed (the command may never run).
        let given_back = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let (shared, flag) = (self.shared.clone(), given_back.clone());
        let give_back = move || {
            if !flag.swap(true, AcqRel) {
                shared.queued_bytes.fetch_sub(bytes, AcqRel);
            }
        };
        let on_error = give_back.clone();
        let result = self.enqueue_render_command(move |ctx| {
            f(ctx);
            give_back();
        });
        if result.is_err() {
            on_error();
        }
        result
    }

    /// Bytes of data the queued commands carry now.
    pub fn queued_bytes(&self) -> u64 {
        self.shared.queued_bytes.load(std::sync::atomic::Ordering::Acquire)
    }

    /// The most bytes of data that may wait in the queue
    /// ([`DEFAULT_QUEUE_BYTE_LIMIT`] unless set).
    pub fn queue_byte_limit(&self) -> u64 {
        self.queue_byte_limit
    }

    /// Sets [`Self::queue_byte_limit`] (at least 1).
    pub fn set_queue_byte_limit(&mut self, bytes: u64) {
        self.queue_byte_limit = bytes.max(1);
    }

    /// Commands enqueued that the render thread has not finished yet (at
    /// most [`MAX_QUEUED_COMMANDS`] waiting, plus the one running).
    pub fn queued_commands(&self) -> u64 {
        self.commands_enqueued.saturating_sub(self.shared.lock().commands_done)
    }

    /// Blocks until every enqueued command has run and the GPU has
    /// finished every frame (so [`Self::last_stats`] is the last frame's).
    pub fn flush(&mut self) -> Result<()> {
        let shared = self.shared.clone();
        self.with_context(move |ctx| finish_gpu(ctx, &shared))?
    }

    /// Blocks until every enqueued command has run.
    fn flush_commands(&mut self) -> Result<()> {
        let target = self.commands_enqueued;
        let mut s = self.shared.lock();
        while s.commands_done < target && s.panic.is_none() {
            s = self.shared.changed.wait(s).unwrap_or_else(|p| p.into_inner());
        }
        drop(s);
        self.check()
    }

    /// Runs `f` on the render thread and returns its result (waits).
    pub fn with_context<R: Send + 'static>(&mut self, f: impl FnOnce(&mut RenderContext) -> R + Send + 'static) -> Result<R> {
        let (tx, rx) = crossbeam_channel::bounded(1);
        self.enqueue_render_command(move |ctx| {
            let _ = tx.send(f(ctx));
        })?;
        self.flush_commands()?;
        rx.try_recv().map_err(|_| RendererError::RenderThreadGone)
    }

    /// The number the next frame will get.
    pub fn next_frame(&self) -> u64 {
        self.frames_enqueued
    }

    /// Frames the render thread has finished.
    pub fn frames_rendered(&self) -> u64 {
        self.shared.lock().frames_rendered
    }

    /// Call at the start of a game frame: blocks until the game is at most
    /// one frame ahead (frame N+2 waits for frame N). Returns the frame number.
    pub fn begin_frame(&mut self) -> Result<u64> {
        let n = self.frames_enqueued;
        let need = n.saturating_sub(1);
        let mut s = self.shared.lock();
        while s.frames_rendered < need && s.panic.is_none() {
            s = self.shared.changed.wait(s).unwrap_or_else(|p| p.into_inner());
        }
        drop(s);
        self.check()?;
        Ok(n)
    }

    /// Enqueues the rendering of a frame (after `begin_frame`'s pacing wait).
    /// An invalid view family is an error here and nothing is enqueued; a
    /// frame that fails on the render thread is reported by
    /// [`Self::last_stats`], [`Self::last_frame_error`] and
    /// [`Self::frames_failed`].
    pub fn render_frame(&mut self, request: FrameRequest) -> Result<u64> {
        request.family.validate()?;
        let n = self.begin_frame()?;
        self.frames_enqueued += 1;
        let shared = self.shared.clone();
        self.enqueue_render_command(move |ctx| {
            let result = ctx.render_frame(&request);
            let mut s = shared.lock();
            match result {
                Ok(_) => {
                    // The newest frame the GPU has finished (this one with
                    // `r.FramesInFlight=1`): every figure its own.
                    if let Some(c) = &ctx.last_complete_stats {
                        s.last_stats = Some(c.clone());
                    }
                    s.last_frame_error = None;
                }
                Err(e) => {
                    log::error!("frame {n} failed: {e}");
                    s.last_frame_error = Some(e.to_string());
                    s.frames_failed += 1;
                }
            }
            s.frames_rendered = n + 1;
            drop(s);
            shared.changed.notify_all();
        })?;
        Ok(n)
    }

    /// The stats of the newest frame whose GPU work has finished — the last
    /// rendered with `r.FramesInFlight=1` or after [`Self::flush`] — with
    /// every figure its own (`FrameStats::frame` names it); an error if
    /// the last frame failed.
    pub fn last_stats(&self) -> Result<Option<FrameStats>> {
        self.check()?;
        let s = self.shared.lock();
        if let Some(e) = &s.last_frame_error {
            return Err(RendererError::InvalidView(format!("the last frame failed: {e}")));
        }
        Ok(s.last_stats.clone())
    }

    /// Why the last rendered frame failed (`None` when it succeeded).
    pub fn last_frame_error(&self) -> Option<String> {
        self.shared.lock().last_frame_error.clone()
    }

    /// Frames that failed on the render thread so far.
    pub fn frames_failed(&self) -> u64 {
        self.shared.lock().frames_failed
    }

    /// Waits for every command and for the frames on the GPU, then returns
    /// the last read-back image.
    pub fn read_back(&mut self) -> Result<Option<Image>> {
        Ok(self.read_back_frame()?.map(|(_, image)| image))
    }

    /// Like [`Self::read_back`], with the number of the frame the image belongs to.
    pub fn read_back_frame(&mut self) -> Result<Option<(u64, Image)>> {
        let shared = self.shared.clone();
        self.with_context(move |ctx| {
            finish_gpu(ctx, &shared)?;
            Ok(ctx.last_image_frame.zip(ctx.last_image.clone()))
        })?
    }

    /// Waits for every command and for the frames still on the GPU, then
    /// returns the frames retired since the last call (at most 64), oldest
    /// first: each one's complete stats (GPU figures included,
    /// `FrameStats::gpu_complete`), naming its frame, and its image when it
    /// was read back. With `r.FramesInFlight` > 1, [`Self::last_stats`] is
    /// the last frame's stats as it left the render thread, its GPU figures
    /// possibly not in yet.
    pub fn finish_frames(&mut self) -> Result<Vec<RetiredFrame>> {
        let shared = self.shared.clone();
        self.with_context(move |ctx| {
            finish_gpu(ctx, &shared)?;
            Ok(ctx.renderer.take_retired())
        })?
    }

    /// Registers a console variable on both sides (feature crates call this
    /// for their own, e.g. `r.InstancedStaticMeshes.GPUCulling`).
    pub fn register_cvar(&mut self, name: &str, default: crate::cvars::CvarValue, help: &str) -> Result<()> {
        let (owned_name, owned_help) = (name.to_string(), help.to_string());
        self.enqueue_render_command(move |ctx| ctx.cvars.register(&owned_name, default, &owned_help))?;
        self.cvars.register(name, default, help);
        Ok(())
    }

    /// Adds `feature` to this renderer: its passes, vertex factories and
    /// console variables. Adding a feature that is already added changes
    /// nothing; a failed registration is the feature's error (what it
    /// registered before failing stays registered).
    pub fn add_feature(&mut self, feature: &'static dyn RenderFeature) -> Result<()> {
        if self.features.contains(&feature.name()) {
            return Ok(());
        }
        feature.register(self)?;
        self.features.push(feature.name());
        Ok(())
    }

    /// The features added, in order.
    pub fn features(&self) -> &[&'static str] {
        &self.features
    }

    /// Adds the mesh pass `desc` to this renderer's pass table and returns
    /// its id; its views draw it after the built-in passes, in registration
    /// order. Register before adding the primitives that should draw in it
    /// (static primitives cache their commands for the passes that exist
    /// when they are added). Errors: [`RendererError::DuplicatePass`],
    /// [`RendererError::PassTableFull`]; nothing is then registered.
    pub fn register_pass(&mut self, desc: &'static crate::mesh_pass::passes::PassDesc) -> Result<MeshPass> {
        let mut passes = self.passes.clone();
        let pass = passes.register(desc)?;
        self.enqueue_render_command(move |ctx| {
            ctx.scene.passes.register(desc).expect("the game side's table is the scene's");
        })?;
        self.passes = passes;
        Ok(pass)
    }

    /// This renderer's mesh passes: the built-in ones, then those registered.
    pub fn passes(&self) -> &PassTable {
        &self.passes
    }

    /// Registers the vertex factory `vf`: its WGSL is composed into every
    /// pass of the table with the default material, opaque and masked, and
    /// compiled here, so a factory that does not compile is
    /// [`RendererError::VertexFactoryShader`] (naming the pass and where)
    /// before anything draws with it. Registering it again checks it again
    /// against passes registered since.
    pub fn register_vertex_factory(&mut self, vf: &'static dyn crate::vertex_factory::VertexFactoryType) -> Result<()> {
        crate::mesh_pass::check_vertex_factory(vf, &self.passes)?;
        if !self.vertex_factories.contains(&vf.name()) {
            self.vertex_factories.push(vf.name());
        }
        Ok(())
    }

    /// The vertex factories registered, by name.
    pub fn vertex_factories(&self) -> &[&'static str] {
        &self.vertex_factories
    }

    /// Sets the post-processing chain (validated here; run from the next
    /// frame): the passes in order, the first reading scene color, the last
    /// writing the output (see `renderer::postprocess`). An empty chain, or
    /// one whose last pass does not write the output's format, is
    /// [`RendererError::InvalidPostChain`] and nothing is enqueued.
    pub fn set_post_passes(&mut self, passes: Vec<&'static crate::postprocess::PostPassDesc>) -> Result<()> {
        crate::postprocess::check_chain(&passes)?;
        self.enqueue_render_command(move |ctx| {
            ctx.renderer.set_post_passes(passes).expect("checked on the game side");
        })
    }

    /// Sets a console variable (validated here; applied from the next
    /// frame). A value refused, or a render thread that is gone, changes
    /// nothing on either side.
    pub fn set_cvar(&mut self, name: &str, value: &str) -> Result<()> {
        let mut checked = self.cvars.clone();
        checked.set(name, value)?;
        let (owned_name, owned_value) = (name.to_string(), value.to_string());
        self.enqueue_render_command(move |ctx| {
            let _ = ctx.cvars.set(&owned_name, &owned_value);
        })?;
        self.cvars = checked;
        Ok(())
    }

    /// Drops the state the view `id` kept across frames
    /// (`crate::ViewStateId`: auto exposure's adaptation), once its view
    /// is gone for good; its next frame, if any, starts without a past. An
    /// id without a state is nothing to do.
    pub fn release_view_state(&mut self, id: crate::ViewStateId) -> Result<()> {
        self.enqueue_render_command(move |ctx| {
            ctx.renderer.release_view_state(&ctx.device, id);
        })
    }

    /// A console variable's value as the game side last set it (`None`:
    /// no variable has that name).
    pub fn cvar(&self, name: &str) -> Option<crate::cvars::CvarValue> {
        self.cvars.get(name)
    }
}

impl Drop for RenderThread {
    fn drop(&mut self) {
        if let Backend::Threaded { sender, handle } = &mut self.backend {
            sender.take();
            if let Some(h) = handle.take() {
                let _ = h.join();
            }
        }
    }
}
