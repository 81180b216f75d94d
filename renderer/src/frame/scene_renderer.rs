//! The render thread's frame (UE's FSceneRenderer): [`SceneRenderer::render`]
//! runs the stages of [`crate::frame`] in the order of
//! [`Stage::ALL`](crate::Stage::ALL), each a function of its own that hands
//! a typed value to the next, timed into
//! [`StageTimings::stages`](crate::StageTimings) and in a profiler span.

use crate::cvars::ConsoleVariables;
use crate::error::Result;
use crate::frame::init_views::init_views;
use crate::frame::occlusion::occlusion_cull;
use crate::frame::pass_setup::pass_setup;
use crate::frame::record::RecordInputs;
pub use crate::frame::retire::RetiredFrame;
use crate::frame::retire::{frame_stats, submit, InFlightFrame};
use crate::frame::update::SlotFrame;
use crate::frame::workers_awake::WorkersAwake;
pub use crate::frame::Stage;
use crate::frame::{ms, stage, DynamicElements, InitViews, StageClock};
pub(crate) use crate::frame::{FrameCommands, PassDrawList};
pub use crate::frame_resources::DynamicBufferRing;
use crate::frame_resources::PerFrameBuffer;
use crate::mesh_pass::*;
use crate::postprocess::{PostFrame, PostPassDesc, PostProcessor, BUILTIN_POST_PASSES, OUTPUT};
use crate::render_targets::{RenderTargets, SCENE_COLOR};
use crate::scene::Scene;
use crate::settings::FrameSettings;
use crate::stats::FrameStats;
use crate::view::ViewFamily;
use rhi_vulkan::*;
use std::collections::VecDeque;
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

/// What the render thread keeps from frame to frame.
pub struct SceneRenderer {
    pub(crate) pipelines: PipelineLibrary,
    /// The render targets by name, with their tracked states.
    pub(crate) targets: RenderTargets,
    /// The post chain's pipelines.
    pub(crate) post: PostProcessor,
    /// The post chain, in order.
    pub(crate) post_passes: Vec<&'static PostPassDesc>,
    pub(crate) shadow_sampler: Option<SamplerHandle>,
    pub(crate) materials: Option<(BufferHandle, u64)>,
    /// Bytes of material blocks uploaded by the last frame.
    pub(crate) material_bytes_uploaded: u64,
    pub(crate) view_uniforms: PerFrameBuffer,
    pub(crate) id_streams: PerFrameBuffer,
    pub(crate) dynamic: DynamicBufferRing,
    /// The device's frame slots (the most `r.FramesInFlight` can give).
    pub(crate) frames: usize,
    pub(crate) frame_number: u64,
    /// Submitted frames whose stats wait for their GPU work, oldest first.
    pub(crate) in_flight: VecDeque<InFlightFrame>,
    /// Frames whose GPU work finished, with their complete stats, oldest first.
    pub(crate) retired: VecDeque<RetiredFrame>,
    /// Per frame slot: the buffer a read-back frame's scene color is copied to.
    pub(crate) readback: Vec<Option<(BufferHandle, u64)>>,
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
        let frames = device.frames_in_flight();
        Self {
            pipelines: PipelineLibrary::default(),
            targets: RenderTargets::default(),
            post: PostProcessor::default(),
            post_passes: BUILTIN_POST_PASSES.to_vec(),
            shadow_sampler: None,
            materials: None,
            material_bytes_uploaded: 0,
            view_uniforms: PerFrameBuffer::new("view uniforms", BufferUsage::UNIFORM, frames),
            id_streams: PerFrameBuffer::new("primitive id stream", BufferUsage::VERTEX, frames),
            dynamic: DynamicBufferRing::new(frames),
            frames,
            frame_number: 0,
            in_flight: VecDeque::new(),
            retired: VecDeque::new(),
            readback: vec![None; frames],
        }
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

    /// The post-processing chain, in order (the built-in one:
    /// [`BUILTIN_POST_PASSES`]).
    pub fn post_passes(&self) -> &[&'static PostPassDesc] {
        &self.post_passes
    }

    /// Sets the post-processing chain, run from the next frame on. Errors:
    /// an empty chain, or one whose last pass does not write the output's
    /// format, is `RendererError::InvalidPostChain`, and nothing changes.
    pub fn set_post_passes(&mut self, passes: Vec<&'static PostPassDesc>) -> Result<()> {
        crate::postprocess::check_chain(&passes)?;
        self.post_passes = passes;
        Ok(())
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
        self.abandon_if_lost(device);
        rendered
    }

    /// [`Self::render`] without the clean-up after a lost device.
    fn run_stages(&mut self, device: &Device, scene: &mut Scene, cvars: &ConsoleVariables, request: &FrameRequest) -> Result<FrameOutput> {
        let family = &request.family;
        family.validate()?;
        let settings = FrameSettings::from_cvars(cvars);
        let shadow_size = settings.shadow.map_size;
        let frames_in_flight = self.frames_in_flight(&settings);
        let mut clock = StageClock::start();
        // At most `frames_in_flight` frames on the GPU once this one is
        // submitted: waiting for the oldest is `retire`'s time (the frame
        // slot `update_scene` takes is then free), not render-thread CPU.
        let since = Instant::now();
        {
            crate::trace::span!("wait", "frame_slot");
            self.retire_until(device, frames_in_flight - 1)?;
        }
        clock.add(Stage::Retire, since);
        // From here to the end of `record` the CPU stages run back to back:
        // the workers poll between their parallel sections (not while the
        // GPU is waited for above).
        let awake = WorkersAwake::for_frame(&settings);
        let SlotFrame { mut frame, slot } = stage!(clock, UpdateScene, self.update_scene_stage(device, scene, &settings)?);
        let scene: &Scene = scene;
        let mut views = stage!(clock, InitViews, init_views(scene, &settings, family));
        stage!(clock, Occlusion, occlusion_cull(scene, &settings, &mut views));
        let mut elements = stage!(clock, CollectDynamic, self.collect_dynamic(device, scene, &settings, cvars, &views, true)?);
        let on_retired = std::mem::take(&mut elements.on_retired);
        let gpu_work = std::mem::take(&mut elements.gpu_work);
        let mut lists = stage!(clock, PassSetup, pass_setup(scene, &settings, &views, &elements));
        let uploaded =
            stage!(clock, Upload, self.upload_stage(device, slot, scene, &views, &mut lists, shadow_size, settings.parallel_record)?);
        let targets = stage!(
            clock,
            GpuPrepare,
            self.gpu_prepare(device, &mut frame, gpu_work, family.width, family.height, views.has_shadow(), shadow_size)?
        );
        let input = RecordInputs {
            views: &views,
            commands: &elements.commands,
            lists: &lists,
            uploaded: &uploaded,
            targets,
            parallel: settings.parallel_record,
        };
        stage!(clock, Record, self.record_stage(&mut frame, scene, family, input)?);
        let image = stage!(clock, PostProcess, {
            let wireframe: Vec<Rect> = views.main_views().map(|i| &views.views[i]).filter(|v| v.wireframe).map(|v| v.viewport).collect();
            let at = PostFrame { settings: &settings, wireframe: &wireframe, width: family.width, height: family.height };
            self.post.record(&mut frame, &mut self.targets, &self.post_passes, &at)?;
            if request.read_back && request.execute {
                Some(self.record_read_back(device, &mut frame, slot)?)
            } else {
                None
            }
        });
        drop(awake);
        let frame_number = self.frame_number - 1;
        // `gpu_wait` runs from here: the GPU may start before `submit` returns.
        let submitted_at = Instant::now();
        let submitted = stage!(clock, Submit, submit(frame, request.execute)?);
        stage!(clock, Retire, {
            let mut stats = frame_stats(frame_number, scene, &views, &elements, &lists);
            stats.pipelines_created = self.pipelines.take_created();
            stats.pipelines_live = self.pipelines.len() as u64;
            stats.material_bytes_uploaded = self.material_bytes_uploaded;
            match submitted {
                Some(submission) => {
                    let lists = lists.iter().map(|l| (l.pass, l.view)).collect();
                    self.in_flight.push_back(InFlightFrame { submission, stats, lists, submitted_at, image, on_retired });
                    // 1: today's wait; more: only what has finished (the
                    // next frame waits for its slot in `update_scene`).
                    if frames_in_flight == 1 {
                        self.retire_until(device, 0)?;
                    }
                    self.retire_completed(device)?;
                }
                None => {
                    // Discarded: no GPU work; complete as it is.
                    let mut stats = stats;
                    stats.timings.set_gpu(None, [], &[]);
                    stats.gpu_complete = true;
                    self.push_retired(RetiredFrame { stats, image: None });
                }
            }
        });
        let total = ms(clock.start, Instant::now());
        // The stage times go into the frame's stats wherever they are now.
        match self.in_flight.back_mut().filter(|f| f.stats.frame == frame_number) {
            Some(f) => {
                f.stats.timings.set_stages(clock.ms, total);
                Ok((f.stats.clone(), None))
            }
            None => {
                let f = self.retired.iter_mut().rev().find(|f| f.stats.frame == frame_number).expect("the frame just retired");
                f.stats.timings.set_stages(clock.ms, total);
                Ok((f.stats.clone(), f.image.clone()))
            }
        }
    }

    /// The frames whose GPU work has finished since the last call (at most
    /// the last 64), oldest first: each one's complete stats
    /// (`gpu_complete`, naming the frame in `FrameStats::frame`) and, when
    /// it was read back, its image.
    pub fn take_retired(&mut self) -> Vec<RetiredFrame> {
        std::mem::take(&mut self.retired).into()
    }

    /// Waits for every frame in flight (they are then in [`Self::take_retired`]).
    /// On a lost device they are abandoned and it is `RendererError::Rhi(RhiError::DeviceLost)`.
    pub fn finish(&mut self, device: &Device) -> Result<()> {
        self.retire_until(device, 0)?;
        if device.is_lost() {
            return Err(RhiError::DeviceLost.into());
        }
        Ok(())
    }

    /// Frames submitted whose GPU work has not been seen to finish.
    pub fn frames_on_gpu(&self) -> usize {
        self.in_flight.len()
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
        let mut views = stage!(clock, InitViews, init_views(scene, &settings, family));
        stage!(clock, Occlusion, occlusion_cull(scene, &settings, &mut views));
        let elements = stage!(clock, CollectDynamic, self.collect_dynamic(device, scene, &settings, cvars, &views, false)?);
        let lists = stage!(clock, PassSetup, pass_setup(scene, &settings, &views, &elements));
        let stage_ms = [Stage::InitViews, Stage::CollectDynamic, Stage::PassSetup].map(|s| clock.ms[s.index()]);
        let occlusion_ms = clock.ms[Stage::Occlusion.index()];
        Ok(PreparedFrame { views, elements, lists, stage_ms, occlusion_ms })
    }

    /// Destroys the renderer's GPU resources (the RHI defers the actual destruction).
    pub fn release(&mut self, device: &Device) {
        self.targets.destroy_all(device);
        self.post.release(device);
        for (buffer, _) in self.readback.iter_mut().filter_map(Option::take) {
            device.destroy_buffer(buffer);
        }
        self.pipelines.invalidate(device);
    }
}
