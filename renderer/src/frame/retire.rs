//! Stages 8 and 9, `submit` and `retire`: the primary goes to the queue;
//! then the frame's GPU work is waited for, its GPU timestamps and (when
//! asked) the image read back,
//! and the frame's [`FrameStats`] built.

use super::{DynamicElements, InitViews, PassDrawList};
use crate::error::Result;
use crate::mesh_pass::MeshPass;
use crate::scene::Scene;
use crate::scene_renderer::SceneRenderer;
use crate::stats::{FrameStats, PassStats};
use rhi_vulkan::{Device, Frame, FrameSubmission, FrameTimestamps, Image};
use std::hash::{Hash, Hasher};

/// Submits `frame`, or with `execute == false` drops it: nothing of it
/// reaches the GPU.
pub(crate) fn submit(frame: Frame<'_>, execute: bool) -> Result<Option<FrameSubmission>> {
    if execute {
        Ok(Some(frame.submit()?))
    } else {
        drop(frame);
        Ok(None)
    }
}

impl SceneRenderer {
    /// Waits for the submitted frame, reads its GPU timestamps and, with
    /// `read_back`, the scene color.
    pub(crate) fn retire(&self, device: &Device, submitted: Option<FrameSubmission>, read_back: bool) -> Result<(Option<Image>, Option<FrameTimestamps>)> {
        let Some(submitted) = submitted else { return Ok((None, None)) };
        device.wait_for(submitted.value)?;
        let timestamps = device.frame_timestamps(submitted)?;
        if !read_back {
            return Ok((None, timestamps));
        }
        let targets = self.targets.as_ref().expect("targets");
        Ok((Some(device.read_texture(targets.color, targets.color_state)?), timestamps))
    }
}

/// The figures of the frame (timings are the caller's).
pub(crate) fn frame_stats(frame: u64, scene: &Scene, v: &InitViews, elements: &DynamicElements<'_>, lists: &[PassDrawList]) -> FrameStats {
    let mut stats = FrameStats {
        frame,
        primitives: scene.num_primitives() as u64,
        visible_primitives: v.visible_primitives(),
        cached_commands_built: scene.counters.cached_commands_built,
        dynamic_commands_built: elements.built,
        proxies_created: scene.counters.proxies_created,
        failed_updates: scene.counters.failed_updates,
        gpu_scene_upload_bytes: scene.gpu_scene.last_upload_bytes,
        ..Default::default()
    };
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    for l in lists {
        let p: &mut PassStats = &mut stats.passes[l.pass.index()];
        p.mesh_draw_commands += l.commands_before_merge;
        p.draws += l.draws.len() as u64;
        (l.pass, l.view).hash(&mut hasher);
        for d in &l.draws {
            let c = elements.commands.get(d.bucket);
            // Handles are left out: their numbering depends on creation order.
            (c.material_index, c.first_index, c.count, c.base_vertex, c.instance_count, d.first_instance, d.instance_count, c.indirect.is_some()).hash(&mut hasher);
            if c.indirect.is_some() {
                // The GPU writes the count: not known here.
                p.indirect_draws += 1;
                continue;
            }
            let instances = u64::from(d.instance_count) * u64::from(c.instance_count);
            p.instances += instances;
            if l.pass != MeshPass::ShadowDepth && l.pass != MeshPass::DepthPrepass {
                stats.triangles += u64::from(c.count / 3) * instances;
            }
        }
        l.ids.hash(&mut hasher);
    }
    stats.draw_list_digest = hasher.finish();
    stats
}
