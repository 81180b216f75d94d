//! The render thread's frame (UE's FSceneRenderer): [`SceneRenderer::render`]
//! runs the stages of [`crate::frame`] in order — update scene → init views
//! → collect dynamic elements → pass setup → upload → GPU prepare → record
//! → submit → retire — each a function of its own that hands a typed value
//! to the next, timed into [`StageTimings::stages`](crate::StageTimings)
//! and in a profiler span.

pub use crate::frame::Stage;
pub(crate) use crate::frame::{FrameCommands, PassDrawList};
pub use crate::frame_resources::DynamicBufferRing;
use crate::cvars::{self, ConsoleVariables};
use crate::error::Result;
use crate::frame::gpu_prepare::{ShadowMap, Targets};
use crate::frame::init_views::init_views;
use crate::frame::pass_setup::pass_setup;
use crate::frame::record::RecordInputs;
use crate::frame::retire::{frame_stats, submit};
use crate::frame::update::SlotFrame;
use crate::frame::{ms, stage, DynamicElements, InitViews, StageClock};
use crate::frame_resources::PerFrameBuffer;
use crate::mesh_pass::*;
use crate::scene::Scene;
use crate::stats::FrameStats;
use crate::view::ViewFamily;
use rhi_vulkan::*;
use std::time::Instant;

/// The result of the CPU stages between updating the scene and uploading
/// (init views, collect dynamic elements, pass setup) for one frame.
pub struct PreparedFrame<'s> {
    views: InitViews,
    #[allow(dead_code)]
    elements: DynamicElements<'s>,
    lists: Vec<PassDrawList>,
    stage_ms: [f64; 3],
}

impl PreparedFrame<'_> {
    /// (pass, visible commands before merge, draws after merge), per view and pass.
    pub fn pass_summary(&self) -> Vec<(MeshPass, u64, u64)> {
        self.lists.iter().map(|l| (l.pass, l.commands_before_merge, l.draws.len() as u64)).collect()
    }
    /// Milliseconds of the stages `init_views` (culling), `collect_dynamic`
    /// and `pass_setup`.
    pub fn stage_ms(&self) -> [f64; 3] {
        self.stage_ms
    }

    /// Primitives visible in the main views.
    pub fn visible_primitives(&self) -> u64 {
        self.views.visible_primitives()
    }
}

/// What the render thread keeps from frame to frame.
pub struct SceneRenderer {
    pub(crate) pipelines: PipelineLibrary,
    pub(crate) targets: Option<Targets>,
    pub(crate) shadow: Option<ShadowMap>,
    pub(crate) shadow_sampler: Option<SamplerHandle>,
    pub(crate) materials: Option<(BufferHandle, u64)>,
    pub(crate) view_uniforms: PerFrameBuffer,
    pub(crate) id_streams: PerFrameBuffer,
    pub(crate) dynamic: DynamicBufferRing,
    pub(crate) frames: usize,
    pub(crate) frame_number: u64,
}

/// One frame's request.
#[derive(Clone, Debug)]
pub struct FrameRequest {
    pub family: ViewFamily,
    /// Read the final image back (see [`crate::RenderContext::last_image`]).
    pub read_back: bool,
    /// Submit the recorded frame to the GPU. `false` records everything and
    /// then discards it — CPU measurement only: uploads recorded in it never
    /// reach the GPU, so don't render normally afterwards.
    pub execute: bool,
}

impl SceneRenderer {
    pub fn new(device: &Device) -> Self {
        let frames = device.frames_in_flight();
        Self {
            pipelines: PipelineLibrary::default(),
            targets: None,
            shadow: None,
            shadow_sampler: None,
            materials: None,
            view_uniforms: PerFrameBuffer::new("view uniforms", BufferUsage::UNIFORM, frames),
            id_streams: PerFrameBuffer::new("primitive id stream", BufferUsage::VERTEX, frames),
            dynamic: DynamicBufferRing::new(frames),
            frames,
            frame_number: 0,
        }
    }

    /// The scene's queued updates alone (benchmarks; a frame's
    /// `update_scene` stage also takes a frame slot and records uploads).
    pub fn update_scene(&mut self, device: &Device, scene: &mut Scene) -> Result<()> {
        scene.apply_updates(device, &self.pipelines)
    }

    pub fn pipeline_count(&self) -> usize {
        self.pipelines.len()
    }

    /// The scene color texture and its state (for readback by callers).
    pub fn color_target(&self) -> Option<(TextureHandle, TextureState)> {
        self.targets.as_ref().map(|t| (t.color, t.color_state))
    }

    /// Renders one frame of `request.family` and returns its stats and,
    /// when asked, the image: the stages of [`crate::frame`], in order.
    pub fn render(&mut self, device: &Device, scene: &mut Scene, cvars: &ConsoleVariables, request: &FrameRequest) -> Result<(FrameStats, Option<Image>)> {
        let family = &request.family;
        family.validate()?;
        let shadow_size = cvars.int(cvars::SHADOW_MAP_SIZE).clamp(64, 8192) as u32;
        let mut clock = StageClock::start();
        let SlotFrame { mut frame, slot } = stage!(clock, UpdateScene, self.update_scene_stage(device, scene)?);
        let scene: &Scene = scene;
        let views = stage!(clock, InitViews, init_views(scene, cvars, family));
        let elements = stage!(clock, CollectDynamic, self.collect_dynamic(device, scene, cvars, &views, Some(&mut frame))?);
        let mut lists = stage!(clock, PassSetup, pass_setup(scene, cvars, &views, &elements));
        let uploaded = stage!(clock, Upload, self.upload_stage(device, slot, scene, &views, &mut lists, shadow_size)?);
        let targets = stage!(clock, GpuPrepare, self.gpu_prepare(device, family.width, family.height, views.has_shadow(), shadow_size)?);
        let input = RecordInputs { views: &views, commands: &elements.commands, lists: &lists, uploaded: &uploaded, targets, parallel: cvars.bool(cvars::PARALLEL_RECORD) };
        stage!(clock, Record, self.record_stage(&mut frame, scene, family, input)?);
        let submit_start = Instant::now();
        let submitted = stage!(clock, Submit, submit(frame, request.execute)?);
        let (mut stats, image) = stage!(clock, Retire, {
            let (image, timestamps) = self.retire(device, submitted, request.read_back)?;
            let mut stats = frame_stats(self.frame_number - 1, scene, &views, &elements, &lists);
            stats.timings.gpu_wait = ms(submit_start, Instant::now());
            stats.timings.set_gpu(timestamps.as_ref(), lists.iter().map(|l| (l.pass, l.view)));
            (stats, image)
        });
        stats.timings.set_stages(clock.ms, ms(clock.start, Instant::now()));
        Ok((stats, image))
    }

    /// The CPU stages init views, collect dynamic elements and pass setup
    /// on an updated scene: culls every view, collects dynamic elements,
    /// and gathers, sorts and merges every pass. No GPU work; the
    /// benchmarks call it directly.
    ///
    /// With a `frame`, dynamic proxies may record compute work (GPU culling)
    /// into its primary before the passes; without one they must not need to.
    pub fn prepare<'s>(&mut self, device: &Device, scene: &'s Scene, cvars: &ConsoleVariables, family: &ViewFamily, frame: Option<&mut Frame<'_>>) -> Result<PreparedFrame<'s>> {
        let mut clock = StageClock::start();
        let views = stage!(clock, InitViews, init_views(scene, cvars, family));
        let elements = stage!(clock, CollectDynamic, self.collect_dynamic(device, scene, cvars, &views, frame)?);
        let lists = stage!(clock, PassSetup, pass_setup(scene, cvars, &views, &elements));
        let stage_ms = [Stage::InitViews, Stage::CollectDynamic, Stage::PassSetup].map(|s| clock.ms[s.index()]);
        Ok(PreparedFrame { views, elements, lists, stage_ms })
    }

    /// Destroys the renderer's GPU resources (the RHI defers the actual destruction).
    pub fn release(&mut self, device: &Device) {
        if let Some(t) = self.targets.take() {
            device.destroy_texture(t.color);
            device.destroy_texture(t.depth);
        }
        if let Some(s) = self.shadow.take() {
            device.destroy_texture(s.texture);
        }
        self.pipelines.invalidate(device);
    }
}
