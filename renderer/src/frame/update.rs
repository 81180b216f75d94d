//! The `update_scene` stage: the frame slot, the scene's queued updates and
//! their uploads.

use crate::error::Result;
use crate::frame::retire::FrameQueue;
use crate::frame_resources::FrameResources;
use crate::mesh_pass::PipelineLibrary;
use crate::scene::Scene;
use crate::settings::FrameSettings;
use rhi_vulkan::{BufferDesc, BufferHandle, BufferUsage, Device, Frame};

/// The frame being recorded and its slot among the frames in flight.
pub(crate) struct SlotFrame<'d> {
    pub frame: Frame<'d>,
    pub slot: usize,
}

/// Waits for the frame slot (its previous GPU work must be done before
/// its buffers are rewritten), applies the scene's queued updates and
/// records their uploads: proxies' buffer writes, the material table,
/// GPU-scene deltas. They go first in the frame's primary, before any
/// GPU work a dynamic proxy records while its elements are collected.
pub(crate) fn update_scene<'d>(
    device: &'d Device,
    scene: &mut Scene,
    settings: &FrameSettings,
    pipelines: &PipelineLibrary,
    resources: &mut FrameResources,
    frames: &mut FrameQueue,
) -> Result<SlotFrame<'d>> {
    let mut frame = device.begin_frame()?;
    // The device's slot: `begin_frame` has waited for its last GPU work.
    let slot = (frame.index() % frames.slots as u64) as usize;
    frames.frame_number += 1;
    resources.dynamic.begin(device, slot)?;
    scene.space_order_adds = settings.space_order_adds;
    // A new MSAA sample count (TAA turned on or off, a new depth prepass): every cached
    // command names pipelines of the old one, so they are built again
    // (with this update).
    let samples_changed = pipelines.set_scene_color_samples(msaa_samples(device, settings, &mut resources.msaa_samples));
    // TAA on or off: the depth prepass's commands write velocity, or not.
    let velocity_changed = pipelines.set_velocity(settings.anti_aliasing.is_taa());
    // Which batches the depth prepass draws (the others write depth in the base pass).
    let prepass_changed = pipelines.set_prepass_draws(settings.early_z.effective(settings.anti_aliasing).draws());
    if samples_changed || velocity_changed || prepass_changed {
        scene.invalidate_cached_commands();
    }
    scene.apply_updates(device, pipelines)?;
    scene.environment.prepare(device, pipelines.scene_color_samples())?;
    scene.tighten_chunk_bounds();
    // Every proxy's writes through one staging buffer.
    scene.upload_proxy_writes(&mut frame)?;
    resources.material_bytes_uploaded = upload_materials(device, scene, &mut frame, &mut resources.materials)?;
    scene.gpu_scene.upload(device, &mut frame)?;
    Ok(SlotFrame { frame, slot })
}

/// Samples per pixel of scene color and depth this frame: what
/// `r.AntiAliasingMethod`/`r.MSAACount` ask for, or the most below it the
/// device has for both formats (1: no MSAA). The device is asked only when
/// the count asked for changes (`last`: the last one asked and its answer).
pub(crate) fn msaa_samples(device: &Device, settings: &FrameSettings, last: &mut Option<(u32, u32)>) -> u32 {
    let wanted = settings.anti_aliasing.samples();
    if let Some((asked, given)) = *last {
        if asked == wanted {
            return given;
        }
    }
    let supported = |n: u32| {
        device.supports_samples(crate::mesh_pass::SCENE_COLOR_FORMAT, n) && device.supports_samples(crate::mesh_pass::SCENE_DEPTH_FORMAT, n)
    };
    let given = [8, 4, 2].into_iter().find(|&n| n <= wanted && supported(n)).unwrap_or(1);
    *last = Some((wanted, given));
    given
}

/// The material table's changed blocks (only those: a parameter change
/// uploads one 256-byte block), or the whole table when it grew or was
/// never uploaded, into `table`'s GPU buffer grown to a power of two.
/// Returns the bytes uploaded.
fn upload_materials(device: &Device, scene: &mut Scene, frame: &mut Frame<'_>, table: &mut Option<(BufferHandle, u64)>) -> Result<u64> {
    let dirty = scene.materials.take_dirty_blocks();
    let block = crate::material::MATERIAL_BLOCK_SIZE as u64;
    let needed = scene.materials.len() as u64 * block;
    let whole = scene.materials.table_dirty || table.is_none_or(|(_, cap)| cap < needed);
    if whole {
        if table.is_none_or(|(_, cap)| cap < needed) {
            if let Some((old, _)) = table.take() {
                device.destroy_buffer(old);
            }
            let cap = needed.next_power_of_two().max(16 * block);
            *table = Some((device.create_buffer(&BufferDesc::gpu_only("materials", cap, BufferUsage::STORAGE))?, cap));
        }
        let blocks = scene.materials.gpu_table();
        frame.upload_buffer(table.expect("created").0, 0, bytemuck::cast_slice(&blocks))?;
        scene.materials.table_dirty = false;
        return Ok(needed);
    }
    let buffer = table.expect("uploaded before").0;
    // Runs of consecutive dirty slots go as one copy each.
    let slots: Vec<u32> = dirty.into_iter().collect();
    let mut uploaded = 0;
    for run in slots.chunk_by(|a, b| b == &(a + 1)) {
        let bytes: Vec<u8> = run.iter().flat_map(|&s| bytemuck::cast_slice::<_, u8>(scene.materials.block(s)).to_vec()).collect();
        frame.upload_buffer(buffer, u64::from(run[0]) * block, &bytes)?;
        uploaded += bytes.len() as u64;
    }
    Ok(uploaded)
}
