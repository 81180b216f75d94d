//! One frame on the render thread as named stages (UE's FSceneRenderer
//! steps; compare Bevy's `RenderSystems`). Each stage is a function of its
//! own that returns a typed value to the next, and
//! [`SceneRenderer::render`](crate::SceneRenderer::render) calls them in
//! the order of [`Stage::ALL`], which the table follows:
//!
//! | [`Stage`] | what it does | returns |
//! |---|---|---|
//! | `update_scene` | takes the frame slot (the frames before were retired until fewer than `r.FramesInFlight` are on the GPU, timed as `retire`); applies queued adds, removes and transforms, caching static commands, and tightens the culling chunks' boxes; records the scene's uploads (proxies' buffer writes, the material table, GPU-scene deltas) | the [`Frame`](rhi_vulkan::Frame) |
//! | `init_views` | the main views and the shadow view; culls each (parallel chunks of 4,096 slots, each skipped whole when its box is outside the view), with relevance and static LOD, gathering for the occlusion stage each visible primitive's centre depth and the occluder candidates | [`InitViews`] |
//! | `occlusion` | per main view, the largest visible opaque occluders rasterized into a small CPU depth buffer with a max-depth mip chain ([`crate::occlusion`]); the visible primitives hidden behind them removed from the view's list (`r.AllowOcclusionQueries`) | the [`InitViews`], culled |
//! | `light_grid` | per main view, the point and spot lights culled to its frustum and listed per cluster of its light grid (screen tiles × depth slices: clustered lighting, [`crate::light_grid`]; rayon tasks) | the [`InitViews`] with their grids |
//! | `collect_dynamic` | dynamic primitives' mesh elements (and, when forced, static ones) built into this frame's commands; the compute work proxies declare ([`GpuWork`](crate::GpuWork)) queued, in primitive order | [`DynamicElements`] |
//! | `pass_setup` | per (view, pass) task: gather cached + dynamic commands, sort, merge into instanced draws (rayon tasks) | [`PassDrawList`]s |
//! | `upload` | the frame's id streams (in draw order), view uniforms and light grids, into this slot's buffers | [`Uploaded`] |
//! | `gpu_prepare` | the queued GPU work recorded in order, with the barriers its declarations imply ([`crate::gpu_work`]); render targets at the family's size and the shadow map, in the frame-resource table ([`crate::render_targets`]) | [`PreparedTargets`](gpu_prepare::PreparedTargets) |
//! | `record` | every pass's chunks as secondaries (rayon), then the primary: shadow map, then per view depth → base → translucency | — |
//! | `post_process` | the post chain ([`crate::postprocess`]: tone mapping first) from scene color into the output, ping-ponging through the frame-resource table; the output's read-back copy when asked | the read-back, pending |
//! | `submit` | the primary to the queue | the submission |
//! | `retire` | builds the [`FrameStats`](crate::FrameStats) and puts the frame in flight; retires (waits for, with `r.FramesInFlight=1`) the frames the GPU has finished: their GPU times, images and proxies' `when_retired` results | stats (and image, once retired) |
//!
//! The scene's uploads are recorded earlier than the stage list would put
//! them: they go with `update_scene` (as UE's `GPUScene.Update` runs before
//! InitViews), because what follows reads them — the proxies' GPU work (an
//! instanced mesh's culling reads its uploaded instances) and the passes.
//! A dynamic proxy's compute work (the instancing feature's GPU culling) is
//! declared while its elements are collected
//! (`MeshElementCollector::add_gpu_work`: the buffers it reads, the buffers
//! it writes and how the passes read them) and recorded by the renderer in
//! `gpu_prepare`, which puts in every barrier between that work and the
//! passes; no proxy records into the frame's command list itself. Nothing
//! between the two stages records GPU commands (`pass_setup` and `upload`
//! are CPU work and host writes), so the work runs after the uploads and
//! before the passes either way.
//!
//! Frames in flight: up to `r.FramesInFlight` (default 2, at most the
//! device's frame slots) frames are on the GPU while the next is recorded.
//! What the host writes per frame lives in the frame slot's buffers
//! ([`crate::frame_resources`]) or goes through staging copies ordered
//! after earlier frames' reads (`Frame::upload_buffer`: GPU-scene deltas,
//! the material table, proxies' uploads). A frame's results — stats with
//! its GPU times, the read-back image (copied at the end of the frame into
//! the slot's read-back buffer), GPU-written counts — are delivered when it
//! retires, naming their frame ([`crate::RetiredFrame`],
//! `MeshElementCollector::when_retired`).
//!
//! Every stage's CPU time is in [`StageTimings::stages`](crate::StageTimings)
//! and every stage opens a profiler span ([`crate::trace`]).
//!
//! Order is deterministic: visibility chunks, pass-setup tasks and recorded
//! chunks are concatenated in order, every pass draws in the order of
//! `mesh_pass::sort` (a key ending with the primitive slot; bucket ranks
//! independent of handle numbering), the id stream is written in that draw
//! order and secondaries execute in pass order — so the image and the draw
//! lists do not depend on the thread count or on which path built them.

pub(crate) mod collect;
pub(crate) mod debug_lines;
pub(crate) mod gpu_prepare;
pub(crate) mod init_views;
pub(crate) mod lights;
pub(crate) mod occlusion;
pub(crate) mod pass_setup;
pub(crate) mod record;
pub(crate) mod retire;
pub(crate) mod scene_renderer;
pub(crate) mod submit;
pub(crate) mod update;
pub(crate) mod upload;
pub(crate) mod workers_awake;

pub(crate) use collect::{DynamicElements, FrameCommands};
pub(crate) use init_views::{InitViews, TemporalView};
pub(crate) use pass_setup::PassDrawList;
pub(crate) use upload::Uploaded;

use std::time::Instant;

pub use crate::stats::Stage;

/// Each stage's milliseconds in a frame, from the frame's start.
pub(crate) struct StageClock {
    pub start: Instant,
    pub ms: [f64; Stage::COUNT],
}

impl StageClock {
    pub fn start() -> Self {
        Self { start: Instant::now(), ms: [0.0; Stage::COUNT] }
    }

    pub fn add(&mut self, stage: Stage, since: Instant) {
        self.ms[stage.index()] += ms(since, Instant::now());
    }
}

pub(crate) fn ms(a: Instant, b: Instant) -> f64 {
    (b - a).as_secs_f64() * 1e3
}

/// `stage!(clock, Name, body)`: evaluates `body` (which may use `?`) as
/// stage `Stage::Name` — in a profiler span of that name, its time added
/// to `clock`.
macro_rules! stage {
    ($clock:expr, $stage:ident, $body:expr) => {{
        let since = ::std::time::Instant::now();
        let value = {
            $crate::trace::span!("stage", $crate::frame::Stage::$stage.name());
            $body
        };
        $clock.add($crate::frame::Stage::$stage, since);
        value
    }};
}
pub(crate) use stage;
