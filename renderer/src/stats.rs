//! Per-frame figures (the samples' stats file, `docs/samples.md`, comes from these).

use crate::mesh_pass::MeshPass;
use std::collections::BTreeMap;

/// The stages of a frame, in the order they run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Stage {
    /// Take the frame slot, apply the scene's queued changes, record its uploads.
    UpdateScene,
    /// Set up the views and cull each.
    InitViews,
    /// Occlusion culling of the main views against this frame's occluders.
    Occlusion,
    /// Cull the point and spot lights to each main view and list them per
    /// cluster of its light grid.
    LightGrid,
    /// Build dynamic primitives' commands and queue their GPU work.
    CollectDynamic,
    /// Gather, sort and merge every (view, pass)'s draws.
    PassSetup,
    /// Write the id streams and view uniforms.
    Upload,
    /// Record the queued GPU work and prepare the render targets.
    GpuPrepare,
    /// Record every mesh pass (secondaries, then the primary).
    Record,
    /// Record the post-processing chain into the output (and its read-back).
    PostProcess,
    /// Submit the primary to the queue.
    Submit,
    /// Build the stats and retire the frames the GPU has finished.
    Retire,
}

impl Stage {
    /// How many stages there are.
    pub const COUNT: usize = 12;
    /// Every stage, in the order they run.
    pub const ALL: [Stage; Stage::COUNT] = [
        Stage::UpdateScene,
        Stage::InitViews,
        Stage::Occlusion,
        Stage::LightGrid,
        Stage::CollectDynamic,
        Stage::PassSetup,
        Stage::Upload,
        Stage::GpuPrepare,
        Stage::Record,
        Stage::PostProcess,
        Stage::Submit,
        Stage::Retire,
    ];

    /// The stage's position in [`Stage::ALL`] (0-based), e.g. to index
    /// per-stage timings.
    pub fn index(self) -> usize {
        self as usize
    }

    /// The stage's name in the stats file and in profiler spans.
    pub fn name(self) -> &'static str {
        match self {
            Stage::UpdateScene => "update_scene",
            Stage::InitViews => "init_views",
            Stage::Occlusion => "occlusion",
            Stage::LightGrid => "light_grid",
            Stage::CollectDynamic => "collect_dynamic",
            Stage::PassSetup => "pass_setup",
            Stage::Upload => "upload",
            Stage::GpuPrepare => "gpu_prepare",
            Stage::Record => "record",
            Stage::PostProcess => "post_process",
            Stage::Submit => "submit",
            Stage::Retire => "retire",
        }
    }
}

/// A frame's shadow rendering (the stats file's `shadow`): the shadowed
/// directional light's cascades, the point and spot lights' shadow-atlas
/// tiles (rendered this frame or kept from an earlier one) and the shadow
/// passes' draws.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ShadowStats {
    /// The shadowed directional light's cascades (shadow views).
    pub cascades: u64,
    /// Shadow atlas tiles allocated to point and spot lights.
    pub atlas_tiles: u64,
    /// Atlas tiles rendered this frame.
    pub tiles_rendered: u64,
    /// Atlas tiles kept from an earlier frame.
    pub tiles_cached: u64,
    /// Draws of every shadow-depth pass.
    pub draws: u64,
    /// Shadow-casting point and spot lights in view that found no room in
    /// the atlas (drawn unshadowed this frame).
    pub unshadowed_lights: u64,
}

/// How the frame's image was finished (the stats file's `image`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ImageStats {
    /// The anti-aliasing method (`r.AntiAliasingMethod`): `none`, `fxaa`,
    /// or `msaa2`/`msaa4`/`msaa8` (the samples the device gave).
    pub aa: &'static str,
    /// The tone mapper (`r.Tonemapper`): `none`, `aces`, `agx` or `pbr_neutral`.
    pub tonemapper: &'static str,
    /// The scene's environment (`crate::Environment::kind`): `hemisphere`,
    /// `sky` or `image`.
    pub environment: &'static str,
    /// Whether bloom ran (`r.Bloom`).
    pub bloom: bool,
    /// The exposure as an exposure value at ISO 100: the linear multiplier
    /// is 1 / (1.2 · 2^EV100) (Lagarde and de Rousiers' photometric
    /// exposure, UE's and Frostbite's); 1 is EV100 -0.26. `r.Exposure`'s,
    /// or with auto exposure the one it adapted to this frame (complete
    /// once the frame retired: `FrameStats::gpu_complete`).
    pub exposure_ev100: f32,
    /// Whether auto exposure set the exposure (`r.AutoExposure`, for a
    /// view with a state).
    pub auto_exposure: bool,
}

impl Default for ImageStats {
    fn default() -> Self {
        Self {
            aa: "none",
            tonemapper: "aces",
            environment: "hemisphere",
            bloom: false,
            exposure_ev100: ev100_of(1.0),
            auto_exposure: false,
        }
    }
}

impl ImageStats {
    /// What `settings` finish the image with, scene color having
    /// `samples` per pixel (MSAA's count where the device has it).
    /// `environment` is the scene's (`Environment::kind`) and
    /// `auto_exposure` whether it ran this frame (a view with a state).
    pub(crate) fn of(settings: &crate::settings::FrameSettings, samples: u32, environment: &'static str, auto_exposure: bool) -> Self {
        let aa = match settings.anti_aliasing {
            crate::AntiAliasing::Msaa(_) if samples > 1 => crate::AntiAliasing::Msaa(samples),
            crate::AntiAliasing::Msaa(_) => crate::AntiAliasing::None,
            other => other,
        };
        Self {
            aa: aa.name(),
            tonemapper: settings.tonemap.curve.name(),
            environment,
            bloom: settings.bloom.enabled,
            exposure_ev100: ev100_of(settings.tonemap.exposure),
            auto_exposure,
        }
    }
}

/// The EV100 of a linear exposure multiplier (see [`ImageStats::exposure_ev100`]);
/// an exposure of 0 (or less) reads as 1e-6.
pub fn ev100_of(exposure: f32) -> f32 {
    -(1.2 * exposure.max(1e-6)).log2()
}

/// The linear exposure multiplier (`r.Exposure`) of a manual exposure of
/// `ev100` (the inverse of [`ev100_of`]): 1 / (1.2 · 2^EV100). A sunlit
/// scene is about EV100 15, a lit interior 7, dusk 4.
pub fn exposure_of_ev100(ev100: f32) -> f32 {
    1.0 / (1.2 * ev100.exp2())
}

/// Named counters of one frame (see [`FrameStats::counters`]): what proxies
/// count that the renderer cannot (visible instances of a GPU cull, live
/// particles drawn), by a name the reporting crate defines as a constant.
pub type FrameCounters = BTreeMap<&'static str, u64>;

/// One mesh pass's figures of a frame, summed over the views that draw it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PassStats {
    /// Visible commands before merging.
    pub mesh_draw_commands: u64,
    /// Draw calls after merging.
    pub draws: u64,
    /// Instances drawn by those calls whose counts the CPU knows; an
    /// indirect draw's count is written by the GPU and is not in here.
    pub instances: u64,
    /// Draws among `draws` whose arguments the GPU wrote (instanced static
    /// meshes culled on the GPU): their instances are the feature's own
    /// read-back figure, not `instances`.
    pub indirect_draws: u64,
}

/// CPU milliseconds of the frame's stages on the render thread and `total`,
/// plus the GPU's own milliseconds (`gpu`, `gpu_passes`, from GPU
/// timestamps) and the CPU's wait for the GPU (`gpu_wait`).
///
/// `stages` has every [`Stage`] of the frame; `update_scene`, `init_views`,
/// `pass_setup` and `record` are the coarser figures made of them.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct StageTimings {
    /// CPU milliseconds of each stage, by [`Stage::index`]. `retire`
    /// includes the wait for the GPU (see `gpu_wait`).
    pub stages: [f64; Stage::COUNT],
    /// The `update_scene` stage.
    pub update_scene: f64,
    /// The `init_views`, `occlusion` and `collect_dynamic` stages.
    pub init_views: f64,
    /// The `pass_setup` stage.
    pub pass_setup: f64,
    /// The `upload`, `gpu_prepare`, `record` and `post_process` stages.
    pub record: f64,
    /// The frame's GPU time: from its first to its last GPU timestamp
    /// (`rhi_vulkan::FrameTimestamps::frame_ms`: all its GPU work, uploads
    /// and compute included). On a device without timestamps
    /// (`gpu_timestamps` false) it is `gpu_wait`.
    pub gpu: f64,
    /// GPU milliseconds of each mesh pass, by [`MeshPass::index`], summed
    /// over the views that draw it: from the end of the pass drawn before it
    /// (so the barriers, clears and loads between them count as its) — or,
    /// for the frame's first pass, from a timestamp before its first draw —
    /// to a timestamp after its last draw. 0 for a pass that drew nothing
    /// (or without timestamps). The intervals do not overlap, so they sum to
    /// at most `gpu`.
    pub gpu_passes: [f64; MeshPass::MAX],
    /// GPU milliseconds of the tone-mapping pass (`crate::postprocess`),
    /// measured as a mesh pass is: from the end of the last pass before it
    /// (0 without timestamps, or when the post chain has no tone mapping).
    pub gpu_tonemap: f64,
    /// GPU milliseconds of the whole post-processing chain, each of its
    /// passes measured as a mesh pass is (tone mapping included).
    pub gpu_post: f64,
    /// Whether `gpu` and `gpu_passes` come from GPU timestamps.
    pub gpu_timestamps: bool,
    /// CPU milliseconds from submitting the frame to seeing its GPU work
    /// complete (also `gpu` on a device without timestamps).
    pub gpu_wait: f64,
    /// CPU milliseconds of the whole `render` call on the render thread.
    pub total: f64,
}

impl StageTimings {
    /// Render-thread CPU time (everything but waiting for the GPU): the
    /// stages from `update_scene` to `record`.
    pub fn render_cpu(&self) -> f64 {
        self.update_scene + self.init_views + self.pass_setup + self.record
    }

    /// CPU milliseconds of `stage`.
    pub fn stage(&self, stage: Stage) -> f64 {
        self.stages[stage.index()]
    }

    /// Sets `stages`, the coarse figures made of them, and `total`.
    pub(crate) fn set_stages(&mut self, stages: [f64; Stage::COUNT], total: f64) {
        self.stages = stages;
        let ms = |s: &[Stage]| s.iter().map(|s| stages[s.index()]).sum::<f64>();
        self.update_scene = ms(&[Stage::UpdateScene]);
        self.init_views = ms(&[Stage::InitViews, Stage::Occlusion, Stage::CollectDynamic]);
        self.pass_setup = ms(&[Stage::PassSetup]);
        self.record = ms(&[Stage::Upload, Stage::GpuPrepare, Stage::Record, Stage::PostProcess]);
        self.total = total;
    }

    /// GPU milliseconds of `pass` (see `gpu_passes`).
    pub fn gpu_pass(&self, pass: MeshPass) -> f64 {
        self.gpu_passes[pass.index()]
    }

    /// Sets `gpu`, `gpu_passes` and `gpu_timestamps` from the frame's
    /// timestamps (`None`: the device has none; `gpu` is then `gpu_wait`,
    /// which must be set first). `lists` are the (pass, view) of the frame's
    /// pass draw lists, whose draws were stamped with `pass_timestamp_labels`;
    /// `post` the timestamp labels of the post chain's passes, in order
    /// (`PostPassDesc::timestamps`), recorded after every list.
    pub fn set_gpu(
        &mut self,
        timestamps: Option<&rhi_vulkan::FrameTimestamps>,
        lists: impl IntoIterator<Item = (MeshPass, usize)>,
        post: &[[&str; 2]],
    ) {
        self.gpu_passes = [0.0; MeshPass::MAX];
        self.gpu_tonemap = 0.0;
        self.gpu_post = 0.0;
        let Some(t) = timestamps else {
            self.gpu = self.gpu_wait;
            self.gpu_timestamps = false;
            return;
        };
        self.gpu = t.frame_ms();
        self.gpu_timestamps = true;
        let lists: Vec<(MeshPass, usize)> = lists.into_iter().collect();
        let mut stamps: Vec<_> = lists
            .iter()
            .map(|&(pass, view)| {
                let [begin, end] = pass_timestamp_labels(pass, view);
                (t.get(&begin), t.get(&end))
            })
            .collect();
        // The post passes come after every list, in chain order.
        stamps.extend(post.iter().map(|[begin, end]| (t.get(begin), t.get(end))));
        let intervals = pass_intervals(&stamps);
        for (&(pass, _), ms) in lists.iter().zip(&intervals) {
            self.gpu_passes[pass.index()] += ms;
        }
        for (labels, ms) in post.iter().zip(&intervals[lists.len()..]) {
            self.gpu_post += ms;
            if *labels == crate::postprocess::tonemap::TIMESTAMP_LABELS {
                self.gpu_tonemap += ms;
            }
        }
    }
}

/// The GPU milliseconds of each list from its (begin, end) timestamps:
/// from the latest end of another list at or before its end (ties broken
/// by list order), or from its own begin where no other list ended before;
/// 0 without an end (nothing drawn). Timestamps are written when the GPU
/// has finished all prior work, so on a GPU that defers work (lavapipe bins
/// a pass's geometry before it rasterizes it, and writes a timestamp when
/// its rasterizer reaches it) the end of the previous pass is where a
/// pass's work starts, not its own first timestamp.
fn pass_intervals(stamps: &[(Option<f64>, Option<f64>)]) -> Vec<f64> {
    stamps
        .iter()
        .enumerate()
        .map(|(i, &(begin, end))| {
            let Some(end) = end else { return 0.0 };
            let before = |&(j, e): &(usize, f64)| j != i && (e < end || (e == end && j < i));
            let previous = stamps.iter().enumerate().filter_map(|(j, s)| Some((j, s.1?))).filter(before).map(|(_, e)| e).reduce(f64::max);
            match previous.or(begin) {
                Some(start) => (end - start).max(0.0),
                None => 0.0,
            }
        })
        .collect()
}

/// The labels of the GPU timestamps before the first and after the last
/// draw of `pass` in view `view` (written by the pass's first and last
/// recorded chunks).
pub(crate) fn pass_timestamp_labels(pass: MeshPass, view: usize) -> [String; 2] {
    [format!("{} {view} begin", pass.name()), format!("{} {view} end", pass.name())]
}

/// The figures of one frame: what the scene held, what each pass drew,
/// what was built and uploaded, and the timings.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FrameStats {
    /// The frame's number, counting from 0.
    pub frame: u64,
    /// The scene's lights by kind, and how many some main view sees.
    pub lights: crate::LightStats,
    /// The main views' light-grid clusters (`crate::light_grid`).
    pub clusters: crate::ClusterStats,
    /// What the frame's shadows cost.
    pub shadow: ShadowStats,
    /// How the image was finished: anti-aliasing, tone mapper, exposure.
    pub image: ImageStats,
    /// Primitives in the scene.
    pub primitives: u64,
    /// Visible primitives, summed over the family's views (after
    /// occlusion culling).
    pub visible_primitives: u64,
    /// Scene slots whose bounding spheres culling tested one by one, summed
    /// over the main views: the others were in chunks of 4,096 slots
    /// skipped on the box around them (`renderer::scene`'s visibility).
    /// Far below `primitives` when the view sees part of the scene, as
    /// large batches of adds take their slots in space order.
    pub primitives_tested: u64,
    /// Primitives visible in the main views' frusta that occlusion culling
    /// removed (hidden behind nearer opaque geometry; see
    /// [`crate::occlusion`]), summed over the main views; 0 with
    /// `r.AllowOcclusionQueries=0`. Not in `visible_primitives`.
    pub occluded_primitives: u64,
    /// Instanced-mesh instances that dynamic proxies culled against the
    /// occlusion buffer (the counter
    /// [`crate::occlusion::OCCLUDED_INSTANCES_COUNTER`]), summed over views.
    pub occluded_instances: u64,
    /// Each pass's figures, by [`MeshPass::index`] (zeros for passes that
    /// do not exist or drew nothing).
    pub passes: [PassStats; MeshPass::MAX],
    /// The renderer's mesh passes in the frame (its pass table, in order):
    /// which entries of `passes` exist, and their names.
    pub mesh_passes: Vec<MeshPass>,
    /// Commands that entered the cache this frame.
    pub cached_commands_built: u64,
    /// Dynamic-path commands built this frame.
    pub dynamic_commands_built: u64,
    /// Proxies created by this frame's update batch.
    pub proxies_created: u64,
    /// Scene requests of this frame's update batch that failed (logged; the
    /// rest were applied): see `Scene::update_errors`.
    pub failed_updates: u64,
    /// Parts of dynamic primitives' mesh elements not drawn this frame
    /// because the proxy could not emit them (an upload or allocation that
    /// failed), as the proxies reported them
    /// ([`crate::MeshElementCollector::report_failure`], logged once per
    /// primitive): 0 in a healthy frame.
    pub element_failures: u64,
    /// Triangles drawn by the passes that count them (the base pass, for
    /// one), in draws whose counts the CPU knows.
    pub triangles: u64,
    /// Bytes of GPU-scene data uploaded this frame.
    pub gpu_scene_upload_bytes: u64,
    /// Pass pipelines created during this frame, and alive after it.
    pub pipelines_created: u64,
    /// Pass pipelines alive after it.
    pub pipelines_live: u64,
    /// Materials (parents and instances) alive, the default included.
    pub materials_live: u64,
    /// Material bind groups alive: one per distinct (parent layout,
    /// textures), shared by the materials that bind the same textures.
    pub material_bind_groups: u64,
    /// Bytes of material parameter blocks uploaded this frame.
    pub material_bytes_uploaded: u64,
    /// Times the environment was prefiltered since the frame before (0
    /// while it does not change; `crate::environment`).
    pub environment_filters: u64,
    /// Textures alive (the three built-in ones included) and texel bytes
    /// uploaded since the scene began.
    pub textures_live: u64,
    /// Texel bytes uploaded since the scene began.
    pub texture_bytes_uploaded: u64,
    /// CPU and GPU milliseconds of the frame.
    pub timings: StageTimings,
    /// Hash of every pass's draw list (per draw: material, index range,
    /// instance range; the primitive ids, in order): equal digests mean the
    /// same draws in the same order, whatever the threads or the handle numbering.
    pub draw_list_digest: u64,
    /// Whether the frame's GPU work has finished and `timings`' GPU figures
    /// (`gpu`, `gpu_passes`, `gpu_wait`) are its own. A frame still on the
    /// GPU when `render` returns (`r.FramesInFlight` > 1) has them 0 here;
    /// its complete stats come from `SceneRenderer::take_retired`.
    pub gpu_complete: bool,
    /// Named counters proxies reported for this frame, summed over proxies:
    /// during `collect_dynamic` ([`crate::MeshElementCollector::add_counter`])
    /// and, for what the frame's GPU work counted, when the frame retires
    /// ([`crate::RetiredFrameResults::add_counter`]) — so the latter are in
    /// only once `gpu_complete` is. A counter nobody reported is absent
    /// ([`Self::counter`] reads it as 0).
    pub counters: FrameCounters,
}

impl FrameStats {
    /// The figures of `pass`.
    pub fn pass(&self, pass: MeshPass) -> PassStats {
        self.passes[pass.index()]
    }

    /// The frame's counter `name` (see [`Self::counters`]); 0 when no proxy reported it.
    pub fn counter(&self, name: &str) -> u64 {
        self.counters.get(name).copied().unwrap_or(0)
    }
}

/// Adds `value` to `counters[name]`.
pub(crate) fn add_counter(counters: &mut FrameCounters, name: &'static str, value: u64) {
    *counters.entry(name).or_default() += value;
}

#[cfg(test)]
mod tests {
    use super::pass_intervals;

    #[test]
    fn a_pass_runs_from_the_previous_passs_end_or_its_own_begin() {
        // Executed: list 2 (shadow) first, then 0 and 1 (depth, base).
        let stamps = [(Some(5.0), Some(7.0)), (Some(9.0), Some(10.0)), (Some(1.0), Some(3.0))];
        assert_eq!(pass_intervals(&stamps), [4.0, 3.0, 2.0], "depth from the shadow's end, base from depth's, shadow from its begin");
        // A list that drew nothing has no stamps and no time; the others
        // do not count it.
        let stamps = [(Some(1.0), Some(2.0)), (None, None), (Some(2.5), Some(4.0))];
        assert_eq!(pass_intervals(&stamps), [1.0, 0.0, 2.0]);
        // Equal ends: the earlier list ends first.
        let stamps = [(Some(1.0), Some(2.0)), (Some(2.0), Some(2.0))];
        assert_eq!(pass_intervals(&stamps), [1.0, 0.0]);
        // The intervals never overlap: they sum to at most first begin to last end.
        let stamps = [(Some(0.5), Some(1.0)), (Some(1.5), Some(2.0)), (Some(2.5), Some(6.0))];
        assert_eq!(pass_intervals(&stamps).iter().sum::<f64>(), 5.5);
    }
}
