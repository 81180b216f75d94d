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

/// CPU milliseconds of the frame's stages on the render thread, plus `gpu`
/// (submit to completion) and `total`.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct StageTimings {
    pub update_scene: f64,
    pub init_views: f64,
    pub pass_setup: f64,
    pub record: f64,
    pub gpu: f64,
    pub total: f64,
}

impl StageTimings {
    /// Render-thread CPU time (everything but waiting for the GPU).
    pub fn render_cpu(&self) -> f64 {
        self.update_scene + self.init_views + self.pass_setup + self.record
    }
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
