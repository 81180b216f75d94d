//! The render thread's frame (UE's FSceneRenderer): [`SceneRenderer::render`]
//! runs the stages of [`crate::frame`] in the order of
//! [`Stage::ALL`](crate::Stage::ALL), each a function of its own that hands
//! a typed value to the next, timed into
//! [`StageTimings::stages`](crate::StageTimings) and in a profiler span.

use crate::cvars::ConsoleVariables;
use crate::error::Result;
use crate::frame::collect::{collect_dynamic, CollectInputs};
use crate::frame::gpu_prepare::{gpu_prepare, TargetSizes};
use crate::frame::init_views::init_views;
use crate::frame::lights::light_grid;
use crate::frame::occlusion::occlusion_cull;
use crate::frame::pass_setup::pass_setup;
use crate::frame::record::{record, RecordInputs};
pub use crate::frame::retire::RetiredFrame;
use crate::frame::retire::{frame_stats, read_back, submit, FrameQueue, InFlightFrame};
use crate::frame::update::{update_scene, SlotFrame};
use crate::frame::upload::upload;
use crate::frame::workers_awake::WorkersAwake;
pub use crate::frame::Stage;
use crate::frame::{stage, DynamicElements, InitViews, StageClock};
pub(crate) use crate::frame::{FrameCommands, PassDrawList};
pub use crate::frame_resources::DynamicBufferRing;
use crate::frame_resources::FrameResources;
use crate::mesh_pass::*;
use crate::postprocess::{PostFrame, PostPassDesc, PostProcessor, OUTPUT};
use crate::render_targets::{RenderTargets, TargetDesc, SCENE_COLOR, SHADOW_ATLAS};
use crate::scene::Scene;
use crate::settings::FrameSettings;
use crate::shadow_atlas::ShadowAtlas;
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
    occlusion_ms: f64,
    light_grid_ms: f64,
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
    /// Milliseconds of the `occlusion` stage (building the occlusion
    /// buffers and testing the visible primitives against them).
    pub fn occlusion_ms(&self) -> f64 {
        self.occlusion_ms
    }
    /// Milliseconds of the `light_grid` stage (culling the lights and
    /// listing them per cluster).
    pub fn light_grid_ms(&self) -> f64 {
        self.light_grid_ms
    }
    /// The light grids' figures (`FrameStats::clusters`).
    pub fn cluster_stats(&self) -> crate::ClusterStats {
        self.views.grid.cluster_stats
    }
    /// Primitives the `occlusion` stage removed (`FrameStats::occluded_primitives`).
    pub fn occluded_primitives(&self) -> u64 {
        self.views.occluded_primitives
    }
    /// Instances drawn by `pass`'s draws whose counts the CPU knows, summed
    /// over views (`PassStats::instances`).
    pub fn pass_instances(&self, pass: MeshPass) -> u64 {
        self.lists
            .iter()
            .filter(|l| l.pass == pass)
            .flat_map(|l| l.draws.iter())
            .map(|d| {
                let c = self.elements.commands.get(d.bucket);
                if c.element.indirect.is_some() {
                    0
                } else {
                    u64::from(d.instance_count) * u64::from(c.element.instance_count)
                }
            })
            .sum()
    }
    /// The counter `name` dynamic proxies reported (`FrameStats::counters`;
    /// 0 when none did).
    pub fn counter(&self, name: &str) -> u64 {
        self.elements.counters.get(name).copied().unwrap_or(0)
    }

    /// Primitives visible in the main views.
    pub fn visible_primitives(&self) -> u64 {
        self.views.visible_primitives()
    }
}

/// What [`SceneRenderer::render`] returns for a frame: its stats and, when
/// asked for and already retired, its image.
pub type FrameOutput = (FrameStats, Option<Image>);

/// What the render thread keeps from frame to frame, grouped by owner; each
/// stage of a frame takes the parts it uses.
pub struct SceneRenderer {
    /// Pass pipelines, made on first use and kept.
    pub(crate) pipelines: PipelineLibrary,
    /// Buffers the frames write and the shadow sampler.
    pub(crate) resources: FrameResources,
    /// The render targets by name, with their tracked states.
    pub(crate) targets: RenderTargets,
    /// The post chain and its pipelines.
    pub(crate) post: PostProcessor,
    /// The frames on the GPU and those retired, with their stats.
    pub(crate) frames: FrameQueue,
    /// The point and spot lights' shadow atlas: its tiles and which hold
    /// their shadow (`crate::shadow_atlas`).
    pub(crate) atlas: ShadowAtlas,
    /// What each view keeps across frames (`crate::view_state`).
    pub(crate) view_states: crate::view_state::ViewStates,
    /// The debug lines' pipelines (`crate::debug_lines`).
    pub(crate) debug_lines: crate::frame::debug_lines::DebugLinePipelines,
}

/// What the end of a frame hands to its retirement.
struct FrameEnd {
    submitted: Option<FrameSubmission>,
    submitted_at: Instant,
    image: Option<crate::frame::retire::PendingImage>,
    on_retired: Vec<crate::scene::RetireCallback>,
    exposure: Option<BufferHandle>,
}

/// One frame's request.
#[derive(Clone, Debug)]
pub struct FrameRequest {
    /// The views to render and their target.
    pub family: ViewFamily,
    /// Read the final image back (see [`crate::RenderContext::last_image`]).
    pub read_back: bool,
    /// Submit the recorded frame to the GPU. `false` records everything and
    /// then discards it — CPU measurement only: uploads recorded in it never
    /// reach the GPU, so don't render normally afterwards.
    pub execute: bool,
}

impl SceneRenderer {
    /// A renderer for `device`, with one set of per-frame buffers per frame
    /// slot; GPU resources are created by the first frames that need them.
    pub fn new(device: &Device) -> Self {
        let slots = device.frames_in_flight();
        Self {
            pipelines: PipelineLibrary::default(),
            resources: FrameResources::new(slots),
            targets: RenderTargets::default(),
            post: PostProcessor::default(),
            frames: FrameQueue::new(slots),
            atlas: ShadowAtlas::default(),
            view_states: Default::default(),
            debug_lines: Default::default(),
        }
    }

    /// Drops the state of the view `id` (auto exposure's adaptation);
    /// returns whether it had one. Its next frame starts without a past.
    pub fn release_view_state(&mut self, device: &Device, id: crate::ViewStateId) -> bool {
        self.view_states.release(device, id)
    }

    /// Auto exposure for the frame, when `r.AutoExposure=1` and the
    /// family's first main view has a state: recorded into `frame`
    /// (`crate::postprocess::exposure`). Returns the exposure state tone
    /// mapping binds, the slot's read-back of it when it ran, and the
    /// settings the post chain runs with (auto exposure off where it did not run).
    fn auto_exposure(
        &mut self,
        device: &Device,
        frame: &mut Frame<'_>,
        family: &ViewFamily,
        settings: &FrameSettings,
        slot: usize,
    ) -> Result<(BufferHandle, Option<BufferHandle>, FrameSettings)> {
        let view = family.views.iter().find(|v| v.kind == crate::ViewKind::Main && !v.wireframe);
        let (Some(view), Some(id), true) = (view, view.and_then(|v| v.state), settings.auto_exposure.enabled) else {
            let mut manual = *settings;
            manual.auto_exposure.enabled = false;
            return Ok((self.view_states.unadapted(device)?, None, manual));
        };
        let state = self.view_states.get_or_make(device, id, self.frames.slots)?;
        let pipelines = self.post.exposure_pipelines(device)?;
        let at = crate::postprocess::exposure::ExposureFrame {
            settings: &settings.auto_exposure,
            state,
            viewport: view.viewport,
            delta_seconds: family.delta_seconds,
            slot,
        };
        crate::postprocess::exposure::record(frame, &mut self.targets, pipelines, &at)?;
        Ok((state.exposure, Some(state.readback[slot]), *settings))
    }

    /// TAA for the frame, when it is the anti-aliasing method
    /// (`crate::postprocess::taa`): recorded into `frame`. Returns what
    /// the post chain reads: TAA's output, or scene color.
    fn taa(&mut self, frame: &mut Frame<'_>, family: &ViewFamily, views: &InitViews, settings: &FrameSettings) -> Result<TargetDesc> {
        let crate::settings::AntiAliasing::Taa(current_weight) = settings.anti_aliasing else { return Ok(SCENE_COLOR) };
        let pipelines = self.post.taa_pipelines(frame.device())?;
        let at = crate::postprocess::taa::TaaFrame {
            views: &views.views[..family.views.len()],
            temporal: &views.temporal,
            size: (family.width, family.height),
            current_weight,
        };
        crate::postprocess::taa::record(frame, &mut self.targets, &mut self.view_states, pipelines, &at)?;
        Ok(crate::postprocess::taa::TAA_OUTPUT)
    }

    /// The scene's queued updates alone (benchmarks; a frame's
    /// `update_scene` stage also takes a frame slot and records uploads).
    pub fn update_scene(&mut self, device: &Device, scene: &mut Scene) -> Result<()> {
        scene.apply_updates(device, &self.pipelines)
    }

    /// Pass pipelines in the cache.
    pub fn pipeline_count(&self) -> usize {
        self.pipelines.len()
    }

    /// The final image of the last frame — the post chain's output (8-bit
    /// sRGB, `postprocess::OUTPUT_FORMAT`) — and its state, for callers that
    /// read or present it.
    pub fn color_target(&self) -> Option<(TextureHandle, TextureState)> {
        self.targets.texture_and_state(OUTPUT.name)
    }

    /// The HDR scene color (linear, `SCENE_COLOR_FORMAT`) and its state:
    /// what the mesh passes drew, before post-processing.
    pub fn scene_color_target(&self) -> Option<(TextureHandle, TextureState)> {
        self.targets.texture_and_state(SCENE_COLOR.name)
    }

    /// The velocity target (motion vectors, `VELOCITY_FORMAT`, in the
    /// viewport's UV units) and its state, once a frame with TAA made it:
    /// what the last frame's depth prepass wrote.
    pub fn velocity_target(&self) -> Option<(TextureHandle, TextureState)> {
        self.targets.texture_and_state(crate::render_targets::VELOCITY.name)
    }

    /// The post-processing chain, in order (the built-in one:
    /// [`BUILTIN_POST_PASSES`](crate::postprocess::BUILTIN_POST_PASSES)).
    pub fn post_passes(&self) -> &[&'static PostPassDesc] {
        self.post.passes()
    }

    /// Sets the post-processing chain, run from the next frame on. Errors:
    /// an empty chain, or one whose last pass does not write the output's
    /// format, is `RendererError::InvalidPostChain`, and nothing changes.
    pub fn set_post_passes(&mut self, passes: Vec<&'static PostPassDesc>) -> Result<()> {
        self.post.set_passes(passes)
    }

    /// Renders one frame of `request.family`: the stages of
    /// [`Stage`], in order. Returns its stats — complete when the
    /// frame retired within the call (always with `r.FramesInFlight=1`;
    /// otherwise `gpu_complete` is false and the complete stats come from
    /// [`Self::take_retired`]) — and, when asked and retired, its image.
    ///
    /// On a lost device the frame fails with `RendererError::Rhi(RhiError::DeviceLost)`
    /// and every frame in flight is abandoned: never waited for, its stats
    /// and image never delivered (see [`Self::frames_on_gpu`]).
    pub fn render(&mut self, device: &Device, scene: &mut Scene, cvars: &ConsoleVariables, request: &FrameRequest) -> Result<FrameOutput> {
        let rendered = self.run_stages(device, scene, cvars, request);
        self.frames.abandon_if_lost(device);
        rendered
    }

    /// [`Self::render`] without the clean-up after a lost device: the
    /// frame, stage by stage.
    fn run_stages(&mut self, device: &Device, scene: &mut Scene, cvars: &ConsoleVariables, request: &FrameRequest) -> Result<FrameOutput> {
        let family = &request.family;
        family.validate()?;
        let settings = FrameSettings::from_cvars(cvars);
        let frames_in_flight = self.frames.frames_in_flight(&settings);
        let mut clock = StageClock::start();
        // At most `frames_in_flight` frames on the GPU once this one is
        // submitted: waiting for the oldest is `retire`'s time (the frame
        // slot `update_scene` takes is then free), not render-thread CPU.
        let since = Instant::now();
        {
            crate::trace::span!("wait", "frame_slot");
            self.frames.retire_until(device, frames_in_flight - 1)?;
        }
        clock.add(Stage::Retire, since);
        // From here to the end of `post_process` the CPU stages run back to
        // back: the workers poll between their parallel sections (not while
        // the GPU is waited for above).
        let awake = WorkersAwake::for_frame(&settings);
        let SlotFrame { mut frame, slot } =
            stage!(clock, UpdateScene, update_scene(device, scene, &settings, &self.pipelines, &mut self.resources, &mut self.frames)?);
        let environment_filters = std::mem::take(&mut scene.environment.filters_unreported);
        let debug_lines = std::mem::take(&mut scene.debug_lines);
        let scene: &Scene = scene;
        // A shadow atlas made anew (first use, a new size) holds no tile's shadow.
        let atlas_size = settings.shadow.atlas.size;
        if self.targets.size(SHADOW_ATLAS.name) != Some((atlas_size, atlas_size)) {
            self.atlas.invalidate();
        }
        let mut views = stage!(clock, InitViews, init_views(scene, &settings, family, &mut self.atlas));
        if settings.anti_aliasing.is_taa() {
            let size = (family.width, family.height);
            let family_views = &views.views[..family.views.len()];
            views.temporal = self.view_states.begin_taa(device, family_views, self.frames.frame_number, (self.frames.slots, size))?;
        }
        // Tiles planned as rendered are only rendered if the frame runs.
        if !request.execute {
            self.atlas.invalidate();
        }
        stage!(clock, Occlusion, occlusion_cull(scene, &settings, &mut views));
        stage!(clock, LightGrid, light_grid(scene, &settings, &mut views));
        let inputs = CollectInputs { settings: &settings, cvars, pipelines: &self.pipelines, records_gpu_work: true };
        let mut elements = stage!(clock, CollectDynamic, collect_dynamic(device, scene, &views, &mut self.resources.dynamic, inputs)?);
        let samples = self.pipelines.scene_color_samples();
        let debug = self.debug_lines.frame(device, &mut self.resources.dynamic, (scene, &views), &debug_lines, samples)?;
        let on_retired = std::mem::take(&mut elements.on_retired);
        let gpu_work = std::mem::take(&mut elements.gpu_work);
        let mut lists = stage!(clock, PassSetup, pass_setup(scene, &settings, &views, &elements));
        let uploaded = stage!(clock, Upload, upload(device, (slot, &mut self.resources), &views, &mut lists, &settings)?);
        let sizes = TargetSizes {
            width: family.width,
            height: family.height,
            shadow_map: views.cascade_settings.atlas_size(),
            has_shadow: views.has_shadow(),
            atlas: (!views.atlas.tiles.is_empty()).then_some(atlas_size),
            samples: self.pipelines.scene_color_samples(),
            velocity: self.pipelines.velocity(),
        };
        let prepared = stage!(clock, GpuPrepare, gpu_prepare(device, &mut frame, gpu_work, &mut self.targets, &mut self.resources, sizes)?);
        let input = RecordInputs {
            views: &views,
            commands: &elements.commands,
            lists: &lists,
            uploaded: &uploaded,
            targets: prepared,
            parallel: settings.parallel_record,
            samples,
            velocity: self.pipelines.velocity(),
            materials: self.resources.materials.expect("uploaded in update_scene").0,
            debug: &debug,
        };
        stage!(clock, Record, record(&mut frame, &mut self.targets, scene, family, input)?);
        let (image, exposure_readback) =
            stage!(clock, PostProcess, self.post_process(device, &mut frame, (family, &views, &settings), slot, request)?);
        drop(awake);
        // `gpu_wait` runs from here: the GPU may start before `submit` returns.
        let submitted_at = Instant::now();
        let submitted = stage!(clock, Submit, submit(frame, request.execute)?);
        stage!(clock, Retire, {
            let mut stats = frame_stats(self.frames.frame_number - 1, scene, &views, &elements, &lists);
            let samples = self.pipelines.scene_color_samples();
            stats.image = crate::stats::ImageStats::of(&settings, samples, scene.environment_kind(), exposure_readback.is_some());
            stats.environment_filters = environment_filters;
            stats.pipelines_created = self.pipelines.take_created();
            stats.pipelines_live = self.pipelines.len() as u64;
            stats.material_bytes_uploaded = self.resources.material_bytes_uploaded;
            let end = FrameEnd { submitted, submitted_at, image, on_retired, exposure: exposure_readback };
            self.end_frame(device, stats, &lists, &settings, end)?;
        });
        Ok(self.frames.with_stage_times(self.frames.frame_number - 1, &clock))
    }

    /// Puts a submitted frame in flight with what its retirement needs (or
    /// counts a discarded one's stats).
    fn end_frame(
        &mut self,
        device: &Device,
        stats: FrameStats,
        lists: &[PassDrawList],
        settings: &FrameSettings,
        end: FrameEnd,
    ) -> Result<()> {
        let Some(submission) = end.submitted else {
            self.frames.discarded(stats);
            return Ok(());
        };
        let lists = lists.iter().map(|l| (l.pass, l.view)).collect();
        let mut post = self.post.timestamp_labels(settings);
        if end.exposure.is_some() {
            post.insert(0, crate::postprocess::exposure::TIMESTAMP_LABELS);
        }
        if settings.anti_aliasing.is_taa() {
            post.insert(0, crate::postprocess::taa::TIMESTAMP_LABELS);
        }
        let (submitted_at, image, on_retired, exposure) = (end.submitted_at, end.image, end.on_retired, end.exposure);
        let f = InFlightFrame { submission, stats, lists, post, submitted_at, image, on_retired, exposure };
        self.frames.put_in_flight(device, f, self.frames.frames_in_flight(settings))
    }

    /// The frames whose GPU work has finished since the last call (at most
    /// the last 64), oldest first: each one's complete stats
    /// (`gpu_complete`, naming the frame in `FrameStats::frame`) and, when
    /// it was read back, its image.
    pub fn take_retired(&mut self) -> Vec<RetiredFrame> {
        std::mem::take(&mut self.frames.retired).into()
    }

    /// Waits for every frame in flight (they are then in [`Self::take_retired`]).
    /// On a lost device they are abandoned and it is `RendererError::Rhi(RhiError::DeviceLost)`.
    pub fn finish(&mut self, device: &Device) -> Result<()> {
        self.frames.retire_until(device, 0)?;
        if device.is_lost() {
            return Err(RhiError::DeviceLost.into());
        }
        Ok(())
    }

    /// Frames submitted whose GPU work has not been seen to finish.
    pub fn frames_on_gpu(&self) -> usize {
        self.frames.in_flight.len()
    }

    /// The CPU stages init views, collect dynamic elements and pass setup
    /// on an updated scene: culls every view, collects dynamic elements,
    /// and gathers, sorts and merges every pass. No GPU work (the benchmarks
    /// call it directly): dynamic proxies see
    /// `MeshElementCollector::records_gpu_work()` false and take a path that
    /// needs none.
    pub fn prepare<'s>(
        &mut self,
        device: &Device,
        scene: &'s Scene,
        cvars: &ConsoleVariables,
        family: &ViewFamily,
    ) -> Result<PreparedFrame<'s>> {
        let settings = FrameSettings::from_cvars(cvars);
        let _awake = WorkersAwake::for_frame(&settings);
        let mut clock = StageClock::start();
        let mut views = stage!(clock, InitViews, init_views(scene, &settings, family, &mut self.atlas));
        // Nothing of this frame reaches the GPU: no tile holds what was planned.
        self.atlas.invalidate();
        stage!(clock, Occlusion, occlusion_cull(scene, &settings, &mut views));
        stage!(clock, LightGrid, light_grid(scene, &settings, &mut views));
        let inputs = CollectInputs { settings: &settings, cvars, pipelines: &self.pipelines, records_gpu_work: false };
        let elements = stage!(clock, CollectDynamic, collect_dynamic(device, scene, &views, &mut self.resources.dynamic, inputs)?);
        let lists = stage!(clock, PassSetup, pass_setup(scene, &settings, &views, &elements));
        let stage_ms = [Stage::InitViews, Stage::CollectDynamic, Stage::PassSetup].map(|s| clock.ms[s.index()]);
        let (occlusion_ms, light_grid_ms) = (clock.ms[Stage::Occlusion.index()], clock.ms[Stage::LightGrid.index()]);
        Ok(PreparedFrame { views, elements, lists, stage_ms, occlusion_ms, light_grid_ms })
    }

    /// The post-process stage: TAA, auto exposure, the post chain, and the
    /// read-back when asked; the pending image and the exposure read-back.
    fn post_process(
        &mut self,
        device: &Device,
        frame: &mut Frame<'_>,
        (family, views, settings): (&ViewFamily, &InitViews, &FrameSettings),
        slot: usize,
        request: &FrameRequest,
    ) -> Result<(Option<crate::frame::retire::PendingImage>, Option<BufferHandle>)> {
        let wireframe: Vec<Rect> = views.main_views().map(|i| &views.views[i]).filter(|v| v.wireframe).map(|v| v.viewport).collect();
        let input = self.taa(frame, family, views, settings)?;
        let (exposure, readback, post_settings) = self.auto_exposure(device, frame, family, settings, slot)?;
        let (width, height) = (family.width, family.height);
        let at = PostFrame { settings: &post_settings, wireframe: &wireframe, width, height, exposure, input };
        self.post.record(frame, &mut self.targets, &at)?;
        let image = match request.read_back && request.execute {
            true => Some(read_back(device, frame, (slot, &mut self.resources.readback), &mut self.targets)?),
            false => None,
        };
        Ok((image, readback))
    }

    /// Destroys the renderer's GPU resources (the RHI defers the actual destruction).
    pub fn release(&mut self, device: &Device) {
        self.targets.destroy_all(device);
        self.post.release(device);
        self.view_states.release_all(device);
        self.debug_lines.destroy(device);
        self.resources.release(device);
        self.pipelines.invalidate(device);
    }
}
