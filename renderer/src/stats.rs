//! Per-frame figures (the stats file of `SAMPLES.md` comes from these).

use crate::mesh_pass::MeshPass;

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
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct StageTimings {
    pub update_scene: f64,
    pub init_views: f64,
    pub pass_setup: f64,
    pub record: f64,
    /// The frame's GPU time: from its first to its last GPU timestamp
    /// (`rhi_vulkan::FrameTimestamps::frame_ms`: all its GPU work, uploads
    /// and compute included). On a device without timestamps
    /// (`gpu_timestamps` false) it is `gpu_wait`.
    pub gpu: f64,
    /// GPU milliseconds of each mesh pass, by [`MeshPass::index`]: from a
    /// timestamp before its first draw to one after its last, summed over
    /// the views that draw it; 0 for a pass that drew nothing (or without
    /// timestamps). Passes run one after another, so they sum to at most `gpu`.
    pub gpu_passes: [f64; MeshPass::COUNT],
    /// Whether `gpu` and `gpu_passes` come from GPU timestamps.
    pub gpu_timestamps: bool,
    /// CPU milliseconds from submitting the frame to seeing its GPU work
    /// complete (what `gpu` was before GPU timestamps).
    pub gpu_wait: f64,
    pub total: f64,
}

impl StageTimings {
    /// Render-thread CPU time (everything but waiting for the GPU).
    pub fn render_cpu(&self) -> f64 {
        self.update_scene + self.init_views + self.pass_setup + self.record
    }

    /// GPU milliseconds of `pass` (see `gpu_passes`).
    pub fn gpu_pass(&self, pass: MeshPass) -> f64 {
        self.gpu_passes[pass.index()]
    }

    /// Sets `gpu`, `gpu_passes` and `gpu_timestamps` from the frame's
    /// timestamps (`None`: the device has none; `gpu` is then `gpu_wait`,
    /// which must be set first). `lists` are the (pass, view) of the frame's
    /// pass draw lists, whose draws were stamped with [`pass_timestamp_labels`].
    pub fn set_gpu(&mut self, timestamps: Option<&rhi_vulkan::FrameTimestamps>, lists: impl IntoIterator<Item = (MeshPass, usize)>) {
        self.gpu_passes = [0.0; MeshPass::COUNT];
        let Some(t) = timestamps else {
            self.gpu = self.gpu_wait;
            self.gpu_timestamps = false;
            return;
        };
        self.gpu = t.frame_ms();
        self.gpu_timestamps = true;
        for (pass, view) in lists {
            let [begin, end] = pass_timestamp_labels(pass, view);
            if let Some(ms) = t.between(&begin, &end) {
                self.gpu_passes[pass.index()] += ms;
            }
        }
    }
}

/// The labels of the GPU timestamps before the first and after the last
/// draw of `pass` in view `view` (written by the pass's first and last
/// recorded chunks).
pub(crate) fn pass_timestamp_labels(pass: MeshPass, view: usize) -> [String; 2] {
    [format!("{} {view} begin", pass.name()), format!("{} {view} end", pass.name())]
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct FrameStats {
    pub frame: u64,
    pub primitives: u64,
    /// Visible primitives, summed over the family's views.
    pub visible_primitives: u64,
    pub passes: [PassStats; MeshPass::COUNT],
    /// Commands that entered the cache this frame.
    pub cached_commands_built: u64,
    /// Dynamic-path commands built this frame.
    pub dynamic_commands_built: u64,
    pub proxies_created: u64,
    /// Scene requests of this frame's update batch that failed (logged; the
    /// rest were applied): see `Scene::update_errors`.
    pub failed_updates: u64,
    pub triangles: u64,
    /// Bytes of GPU-scene data uploaded this frame.
    pub gpu_scene_upload_bytes: u64,
    pub timings: StageTimings,
    /// Hash of every pass's draw list (per draw: material, index range,
    /// instance range; the primitive ids, in order): equal digests mean the
    /// same draws in the same order, whatever the threads or the handle numbering.
    pub draw_list_digest: u64,
}

impl FrameStats {
    pub fn pass(&self, pass: MeshPass) -> PassStats {
        self.passes[pass.index()]
    }
}
