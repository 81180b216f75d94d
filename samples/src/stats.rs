//! The stats file of `docs/samples.md`: the last frame's figures as JSON.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

#[derive(Serialize, Deserialize, Debug, Clone, Default, PartialEq)]
pub struct ValidationStats {
    pub enabled: bool,
    pub errors: u64,
    pub warnings: u64,
}

#[derive(Serialize, Deserialize, Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PassStats {
    /// Visible commands of the pass before merging.
    pub mesh_draw_commands: u64,
    /// Draw calls recorded for the pass after merging.
    pub draws: u64,
    /// Instances drawn by those calls, summed (indirect draws excepted).
    pub instances: u64,
    /// Draws whose arguments the GPU wrote (GPU-culled instanced static
    /// meshes): their instances are in `instances.visible`, not above.
    #[serde(default)]
    pub indirect_draws: u64,
}

#[derive(Serialize, Deserialize, Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MeshDrawCommandsBuilt {
    pub cached: u64,
    pub dynamic: u64,
}

#[derive(Serialize, Deserialize, Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct InstanceStats {
    pub total: u64,
    pub visible: u64,
}

/// CPU milliseconds of the last frame, except `gpu` and `gpu_passes` (the
/// GPU's own time, from GPU timestamps) and `frame` (wall time of the whole
/// frame).
#[derive(Serialize, Deserialize, Debug, Clone, Default, PartialEq)]
pub struct Timings {
    pub game: f64,
    pub end_of_frame: f64,
    pub render_cpu: f64,
    /// CPU milliseconds of each stage of the render thread's frame
    /// (`renderer::Stage`); `render_cpu` is the stages up to `record`.
    #[serde(default)]
    pub stages: StageMs,
    /// The frame's GPU time, from its first GPU timestamp to its last; on a
    /// device without timestamps, submit to fence as the CPU sees it.
    pub gpu: f64,
    /// GPU milliseconds of each pass that drew (by its name in `passes`),
    /// from timestamps around its draws; they sum to at most `gpu`. Empty
    /// on a device without timestamps.
    #[serde(default)]
    pub gpu_passes: BTreeMap<String, f64>,
    pub frame: f64,
}

/// CPU milliseconds of the render thread's frame stages, in stage order
/// (`renderer::Stage`; `docs/architecture.md`). `retire` includes waiting
/// for the GPU.
#[derive(Serialize, Deserialize, Debug, Clone, Copy, Default, PartialEq)]
pub struct StageMs {
    pub update_scene: f64,
    pub init_views: f64,
    /// Occlusion culling: building the occlusion buffers and testing the
    /// visible primitives against them.
    #[serde(default)]
    pub occlusion: f64,
    /// Culling the point and spot lights and listing them per light-grid cluster.
    #[serde(default)]
    pub light_grid: f64,
    pub collect_dynamic: f64,
    pub pass_setup: f64,
    pub upload: f64,
    pub gpu_prepare: f64,
    pub record: f64,
    /// The post-processing chain (tone mapping) and the output's read-back.
    #[serde(default)]
    pub post_process: f64,
    pub submit: f64,
    pub retire: f64,
}

impl StageMs {
    /// From per-stage milliseconds by `renderer::Stage::index`.
    pub fn from_stages(ms: &[f64; renderer::Stage::COUNT]) -> Self {
        use renderer::Stage;
        let at = |s: Stage| ms[s.index()];
        Self {
            update_scene: at(Stage::UpdateScene),
            init_views: at(Stage::InitViews),
            occlusion: at(Stage::Occlusion),
            light_grid: at(Stage::LightGrid),
            collect_dynamic: at(Stage::CollectDynamic),
            pass_setup: at(Stage::PassSetup),
            upload: at(Stage::Upload),
            gpu_prepare: at(Stage::GpuPrepare),
            record: at(Stage::Record),
            post_process: at(Stage::PostProcess),
            submit: at(Stage::Submit),
            retire: at(Stage::Retire),
        }
    }
}

/// Percentiles of a per-frame time over the frames after warm-up, in ms
/// (nearest rank: `p95` is the smallest time that at least 95% of the
/// frames do not exceed).
#[derive(Serialize, Deserialize, Debug, Clone, Copy, Default, PartialEq)]
pub struct Percentiles {
    pub p50: f64,
    pub p95: f64,
    pub p99: f64,
    pub max: f64,
}

impl Percentiles {
    /// The percentiles of `times`; all zero when it is empty. NaNs sort last.
    pub fn of(times: &[f64]) -> Self {
        if times.is_empty() {
            return Self::default();
        }
        let mut sorted = times.to_vec();
        sorted.sort_by(f64::total_cmp);
        let rank = |p: f64| sorted[((p / 100.0 * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len()) - 1];
        Self { p50: rank(50.0), p95: rank(95.0), p99: rank(99.0), max: sorted[sorted.len() - 1] }
    }
}

/// CPU milliseconds per frame of the process's threads by what they do,
/// over the frames after warm-up, from the scheduler (Linux only): on
/// lavapipe `driver` is the GPU's work as the CPU does it. See
/// `docs/samples.md`.
#[derive(Serialize, Deserialize, Debug, Clone, Copy, Default, PartialEq)]
pub struct ThreadCpu {
    /// The game thread (the process's first).
    pub game: ThreadMs,
    /// The render thread.
    pub render: ThreadMs,
    /// The worker pools' threads (render workers and rayon's global pool).
    pub workers: ThreadMs,
    /// Every other thread: the Vulkan driver's (lavapipe executes the
    /// GPU's work on its queue thread and rasterizer threads) and the rest.
    pub driver: ThreadMs,
}

/// A thread group's milliseconds per frame: run on a core, and runnable
/// but waiting for one (the cores were busy with something else).
#[derive(Serialize, Deserialize, Debug, Clone, Copy, Default, PartialEq)]
pub struct ThreadMs {
    pub cpu: f64,
    pub waiting: f64,
}

/// Pass pipelines: created during the last frame, and alive after it.
#[derive(Serialize, Deserialize, Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PipelineStats {
    pub created: u64,
    pub live: u64,
}

/// Materials (parents and instances, the default included) alive, and the
/// bytes of their parameter blocks uploaded during the last frame.
#[derive(Serialize, Deserialize, Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MaterialStats {
    pub live: u64,
    pub bytes_uploaded: u64,
}

/// Textures alive (the renderer's built-in ones included) and the texel
/// bytes uploaded since the scene began.
#[derive(Serialize, Deserialize, Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TextureStats {
    pub live: u64,
    pub bytes: u64,
}

/// A loaded file's import (samples that load files: `gltf`): wall time
/// from starting the load to its result, what it made (skins,
/// animations, primitives with morph targets among it), and one line per
/// kind of thing skipped (`"extension KHR_materials_sheen: not supported"`).
#[derive(Serialize, Deserialize, Debug, Clone, Default, PartialEq)]
pub struct ImportStats {
    pub ms: f64,
    pub meshes: u64,
    pub triangles: u64,
    pub materials: u64,
    pub textures: u64,
    #[serde(default)]
    pub skins: u64,
    #[serde(default)]
    pub animations: u64,
    #[serde(default)]
    pub morph_targets: u64,
    pub skipped: Vec<String>,
}

/// The skeletal meshes a sample shows (`gltf`, `many-foxes`): how many,
/// their joints together, and their morph targets.
#[derive(Serialize, Deserialize, Debug, Clone, Default, PartialEq)]
pub struct SkinnedStats {
    pub meshes: u64,
    pub joints: u64,
    pub morph_targets: u64,
}

#[derive(Serialize, Deserialize, Debug, Clone, Default, PartialEq)]
pub struct SampleStats {
    pub sample: String,
    pub frames: u64,
    pub width: u32,
    pub height: u32,
    pub device: String,
    pub validation: ValidationStats,
    /// Whether the device treated memory as a discrete GPU has it
    /// (`PROXIMA_EMULATE_DISCRETE_GPU=1`; `rhi_vulkan::DeviceDesc::emulate_discrete_gpu`).
    #[serde(default)]
    pub emulated_discrete_gpu: bool,
    /// Bytes uploaded to device-local memory through staging buffers
    /// over the whole run (`rhi_vulkan::Device::staging_upload_bytes`).
    #[serde(default)]
    pub staging_upload_bytes: u64,
    /// Host writes to host-visible buffers that waited for a frame still
    /// on the GPU over the whole run (`rhi_vulkan::DeviceCounts::host_write_waits`):
    /// 0, as frame data has a buffer per frame slot.
    #[serde(default)]
    pub host_write_waits: u64,
    /// Resident memory after the engine was made, once the scene was built
    /// and at the run's peak (Linux; `samples::memory`).
    #[serde(default)]
    pub memory: Option<crate::memory::MemoryStats>,
    pub primitives: u64,
    pub visible_primitives: u64,
    pub passes: BTreeMap<String, PassStats>,
    pub mesh_draw_commands_built: MeshDrawCommandsBuilt,
    pub proxies_created: u64,
    /// Parts of dynamic primitives not drawn this frame because their
    /// proxy could not emit them (`renderer::FrameStats::element_failures`;
    /// logged as warnings): 0 in a healthy frame.
    #[serde(default)]
    pub element_failures: u64,
    pub triangles: u64,
    pub particles: u64,
    pub instances: InstanceStats,
    /// Primitives and instanced-mesh instances occlusion culling removed
    /// (`r.AllowOcclusionQueries`).
    #[serde(default)]
    pub occluded_primitives: u64,
    #[serde(default)]
    pub occluded_instances: u64,
    /// Scene slots the main views' culling tested one by one (the rest
    /// were in chunks skipped on their boxes): `renderer::FrameStats`.
    #[serde(default)]
    pub primitives_tested: u64,
    pub timings_ms: Timings,
    /// The same timings averaged over the frames after warm-up (the first
    /// fifth of the run, at least one frame when there are two or more):
    /// the figure benchmarks read, steadier than the last frame alone.
    #[serde(default)]
    pub mean_timings_ms: Timings,
    /// Percentiles of the whole-frame wall time (`timings_ms.frame`) over
    /// the same frames as `mean_timings_ms`.
    #[serde(default)]
    pub frame_time_ms: Percentiles,
    /// Percentiles of the render thread's CPU time (`timings_ms.render_cpu`)
    /// over the render frames after warm-up.
    #[serde(default)]
    pub render_cpu_time_ms: Percentiles,
    /// CPU time per frame of each group of threads over the same frames
    /// as `mean_timings_ms` (absent where the scheduler gives none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thread_cpu_ms: Option<ThreadCpu>,
    /// The renderer's pipelines, materials and textures (absent from a
    /// sample that draws without the renderer, `hello`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pipelines: Option<PipelineStats>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub materials: Option<MaterialStats>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub textures: Option<TextureStats>,
    /// The file a sample loaded (absent from samples that load none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub import: Option<ImportStats>,
    /// The skeletal meshes shown (absent from samples that show none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skinned: Option<SkinnedStats>,
    /// The scene's lights (absent from a sample without the renderer).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lights: Option<LightStats>,
    /// The main views' light-grid clusters (clustered lighting).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clusters: Option<ClusterStats>,
    /// What the frame's shadows cost.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shadow: Option<ShadowStats>,
    /// How the image was finished (absent from a sample without the renderer).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image: Option<ImageStats>,
}

/// How the image was finished (`renderer::ImageStats`): the anti-aliasing
/// method, the environment lighting (`hemisphere`: the flat sky-and-ground
/// ambient; `sky`: the analytic sky; `image`: an `.hdr` panorama), whether
/// bloom ran, the exposure as EV100 and the tone mapper.
#[derive(Serialize, Deserialize, Debug, Clone, Default, PartialEq)]
pub struct ImageStats {
    pub aa: String,
    pub environment: String,
    pub bloom: bool,
    pub exposure_ev100: f64,
    /// Whether auto exposure set `exposure_ev100` (`--auto-exposure on`).
    #[serde(default)]
    pub auto_exposure: bool,
    pub tonemapper: String,
}

/// The scene's lights by kind, those asking for shadows, and the point and
/// spot lights some main view sees (`renderer::LightStats`).
#[derive(Serialize, Deserialize, Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LightStats {
    pub directional: u64,
    pub point: u64,
    pub spot: u64,
    pub shadowed: u64,
    pub visible: u64,
}

/// The light grid's clusters over the main views, the most lights one
/// lists and the mean (`renderer::ClusterStats`).
#[derive(Serialize, Deserialize, Debug, Clone, Copy, Default, PartialEq)]
pub struct ClusterStats {
    pub count: u64,
    pub max_lights: u64,
    pub mean_lights: f64,
}

/// Shadow views and atlas tiles (`renderer::ShadowStats`): directional
/// cascades drawn, atlas tiles allocated, rendered and kept this frame, the
/// shadow passes' draws, and shadow-casting lights in view that found no
/// room in the atlas.
#[derive(Serialize, Deserialize, Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ShadowStats {
    pub cascades: u64,
    pub atlas_tiles: u64,
    pub tiles_rendered: u64,
    pub tiles_cached: u64,
    pub draws: u64,
    #[serde(default)]
    pub unshadowed_lights: u64,
}

impl SampleStats {
    /// Stats with the four passes of `docs/samples.md` present (zeroed).
    pub fn new(sample: &str, width: u32, height: u32) -> Self {
        let passes = ["depth", "shadow", "base", "translucency"].into_iter().map(|p| (p.to_string(), PassStats::default())).collect();
        Self { sample: sample.into(), width, height, passes, ..Default::default() }
    }

    pub fn write(&self, path: &Path) -> anyhow::Result<()> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)?;
        }
        std::fs::write(path, serde_json::to_string_pretty(self)? + "\n")?;
        Ok(())
    }

    pub fn read(path: &Path) -> anyhow::Result<Self> {
        Ok(serde_json::from_str(&std::fs::read_to_string(path)?)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_are_nearest_rank() {
        let times: Vec<f64> = (1..=100).rev().map(f64::from).collect();
        assert_eq!(Percentiles::of(&times), Percentiles { p50: 50.0, p95: 95.0, p99: 99.0, max: 100.0 });
        assert_eq!(Percentiles::of(&[3.0]), Percentiles { p50: 3.0, p95: 3.0, p99: 3.0, max: 3.0 });
        let few = Percentiles::of(&[1.0, 9.0, 2.0, 4.0]);
        assert_eq!(few, Percentiles { p50: 2.0, p95: 9.0, p99: 9.0, max: 9.0 });
        assert_eq!(Percentiles::of(&[]), Percentiles::default());
    }
}
