//! Stage 1, `update_scene`: the frame slot, the scene's queued updates and
//! their uploads.

use crate::error::Result;
use crate::scene::Scene;
use crate::scene_renderer::SceneRenderer;
use rhi_vulkan::{BufferDesc, BufferUsage, Device, Frame};

/// The frame being recorded and its slot among the frames in flight.
pub(crate) struct SlotFrame<'d> {
    pub frame: Frame<'d>,
    pub slot: usize,
}

impl SceneRenderer {
    /// Waits for the frame slot (its previous GPU work must be done before
    /// its buffers are rewritten), applies the scene's queued updates and
    /// records their uploads: proxies' buffer writes, the material table,
    /// GPU-scene deltas. They go first in the frame's primary, before any
    /// GPU work a dynamic proxy records while its elements are collected.
    pub(crate) fn update_scene_stage<'d>(&mut self, device: &'d Device, scene: &mut Scene) -> Result<SlotFrame<'d>> {
        let mut frame = device.begin_frame()?;
        // The device's slot: `begin_frame` has waited for its last GPU work.
        let slot = (frame.index() % self.frames as u64) as usize;
        self.frame_number += 1;
        self.dynamic.begin(device, slot)?;
        scene.apply_updates(device, &self.pipelines)?;
        scene.tighten_chunk_bounds();
        for (buffer, offset, bytes) in scene.take_uploads() {
            frame.upload_buffer(buffer, offset, &bytes)?;
        }
        self.upload_materials(device, scene, &mut frame)?;
        scene.gpu_scene.upload(device, &mut frame)?;
        Ok(SlotFrame { frame, slot })
    }

    /// The material table, when it changed (or on the first frame), into a
    /// GPU buffer grown to a power of two.
    fn upload_materials(&mut self, device: &Device, scene: &mut Scene, frame: &mut Frame<'_>) -> Result<()> {
        if !scene.materials.gpu_dirty && self.materials.is_some() {
            return Ok(());
        }
        let table = scene.materials.gpu_table();
        let bytes: &[u8] = bytemuck::cast_slice(&table);
        if self.materials.is_none_or(|(_, cap)| cap < bytes.len() as u64) {
            if let Some((old, _)) = self.materials.take() {
                device.destroy_buffer(old);
            }
            let cap = (bytes.len() as u64).next_power_of_two().max(1024);
            self.materials = Some((device.create_buffer(&BufferDesc::gpu_only("materials", cap, BufferUsage::STORAGE))?, cap));
        }
        frame.upload_buffer(self.materials.expect("created").0, 0, bytes)?;
        scene.materials.gpu_dirty = false;
        Ok(())
    }
}
