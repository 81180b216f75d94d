//! The `submit` and `retire` stages: the primary goes to the queue and
//! the frame joins the frames in flight with its [`FrameStats`] (CPU
//! figures); frames are retired — waited for, their GPU timestamps read
//! into their stats — oldest first: all of them with `r.FramesInFlight=1`
//! or when the image is read back, otherwise those the GPU has finished.
//! Before a frame begins, the oldest are retired until fewer than
//! `r.FramesInFlight` are on the GPU. At its retire, proxies' callbacks
//! read the frame's GPU results and may add counters to its stats. On a
//! lost device the frames in flight are abandoned, never waited for
//! (`abandon_if_lost`).

use super::{ms, StageClock};
use super::{DynamicElements, InitViews, PassDrawList};
use crate::error::Result;
use crate::frame::scene_renderer::FrameOutput;
use crate::mesh_pass::MeshPass;
use crate::postprocess::{OUTPUT, OUTPUT_FORMAT};
use crate::render_targets::{Access, RenderTargets};
use crate::rng::mix64;
use crate::scene::{RetireCallback, RetiredFrameResults, Scene};
use crate::stats::{FrameStats, PassStats};
use rhi_vulkan::{BufferDesc, BufferHandle, BufferState, Device, Format, Frame, FrameSubmission, Image};
use std::collections::VecDeque;
use std::hash::{Hash, Hasher};
use std::time::Instant;

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

/// A submitted frame whose GPU work may not have finished: its stats wait
/// for their GPU figures.
pub(crate) struct InFlightFrame {
    pub submission: FrameSubmission,
    pub stats: FrameStats,
    /// The (pass, view) of its draw lists (for the GPU pass times).
    pub lists: Vec<(MeshPass, usize)>,
    /// Its post passes' timestamp labels, in chain order.
    pub post: Vec<[&'static str; 2]>,
    pub submitted_at: Instant,
    /// Where the frame's output is copied, when it is read back.
    pub image: Option<PendingImage>,
    /// Proxies' callbacks for the frame's GPU results.
    pub on_retired: Vec<RetireCallback>,
    /// Where auto exposure copied the view's exposure state, when it ran.
    pub exposure: Option<BufferHandle>,
}

/// A frame's tone-mapped output on its way back: copied at the end of the frame
/// into its slot's read-back buffer, read once the frame's GPU work is done.
pub(crate) struct PendingImage {
    buffer: BufferHandle,
    width: u32,
    height: u32,
}

/// A frame whose GPU work has finished: its complete stats (naming the
/// frame, `FrameStats::frame`) and, when it was read back, its image.
#[derive(Clone, Debug)]
pub struct RetiredFrame {
    /// The frame's stats, its GPU times included.
    pub stats: FrameStats,
    /// The frame's image, when the frame family asked for a read-back.
    pub image: Option<Image>,
}

// Read-backs are the tone-mapped output's bytes as they are.
const _: () = assert!(matches!(OUTPUT_FORMAT, Format::Rgba8Srgb | Format::Rgba8Unorm));

/// Frames kept in [`SceneRenderer::take_retired`](crate::SceneRenderer::take_retired)'s
/// queue when nobody takes them.
const MAX_RETIRED: usize = 64;

/// The frames on the GPU and those retired, with their stats: what the
/// scene renderer keeps of its frames after recording them.
pub(crate) struct FrameQueue {
    /// The device's frame slots (the most `r.FramesInFlight` can give).
    pub slots: usize,
    /// Frames begun so far (the next frame's number is this one).
    pub frame_number: u64,
    /// Submitted frames whose stats wait for their GPU work, oldest first.
    pub in_flight: VecDeque<InFlightFrame>,
    /// Frames whose GPU work finished, with their complete stats, oldest first.
    pub retired: VecDeque<RetiredFrame>,
}

impl FrameQueue {
    /// A queue for a device with `slots` frame slots.
    pub fn new(slots: usize) -> Self {
        Self { slots, frame_number: 0, in_flight: VecDeque::new(), retired: VecDeque::new() }
    }

    /// Frames allowed on the GPU: `r.FramesInFlight`, within 1..=the device's slots.
    pub(crate) fn frames_in_flight(&self, settings: &crate::settings::FrameSettings) -> usize {
        settings.frames_in_flight.min(self.slots)
    }

    /// Puts a submitted frame in flight, then retires what has finished (and
    /// with one frame in flight, waits for it: the next frame would wait
    /// for its slot in `update_scene` anyway).
    pub(crate) fn put_in_flight(&mut self, device: &Device, frame: InFlightFrame, frames_in_flight: usize) -> Result<()> {
        self.in_flight.push_back(frame);
        if frames_in_flight == 1 {
            self.retire_until(device, 0)?;
        }
        self.retire_completed(device)
    }

    /// A frame recorded and discarded (not executed): no GPU work, its stats complete as they are.
    pub(crate) fn discarded(&mut self, mut stats: FrameStats) {
        stats.timings.set_gpu(None, [], &[]);
        stats.gpu_complete = true;
        self.push_retired(RetiredFrame { stats, image: None });
    }

    /// Frame `number`'s stage times put into its stats wherever it is now
    /// (in flight or retired), and what `render` returns for it: its stats
    /// and, once retired, its image.
    pub(crate) fn with_stage_times(&mut self, number: u64, clock: &StageClock) -> FrameOutput {
        let total = ms(clock.start, Instant::now());
        match self.in_flight.back_mut().filter(|f| f.stats.frame == number) {
            Some(f) => {
                f.stats.timings.set_stages(clock.ms, total);
                (f.stats.clone(), None)
            }
            None => {
                let f = self.retired.iter_mut().rev().find(|f| f.stats.frame == number).expect("the frame just retired");
                f.stats.timings.set_stages(clock.ms, total);
                (f.stats.clone(), f.image.clone())
            }
        }
    }

    /// Retires frames, oldest first, until at most `keep` are in flight
    /// (waiting for each one's GPU work).
    /// On a lost device the frames in flight are abandoned.
    pub(crate) fn retire_until(&mut self, device: &Device, keep: usize) -> Result<()> {
        while self.in_flight.len() > keep {
            let retired = self.retire_oldest(device);
            self.abandon_if_lost(device);
            retired?;
        }
        Ok(())
    }

    /// Retires the frames whose GPU work has finished, without waiting.
    pub(crate) fn retire_completed(&mut self, device: &Device) -> Result<()> {
        let completed = device.completed_value()?;
        while self.in_flight.front().is_some_and(|f| f.submission.value <= completed) {
            self.retire_oldest(device)?;
        }
        Ok(())
    }

    /// On a lost device, drops the frames in flight: their GPU work will
    /// never be seen to finish, so their stats, images and proxies'
    /// callbacks are never delivered (the callbacks are dropped uncalled).
    pub(crate) fn abandon_if_lost(&mut self, device: &Device) {
        if device.is_lost() && !self.in_flight.is_empty() {
            log::warn!("the device is lost: {} frame(s) in flight abandoned", self.in_flight.len());
            self.in_flight.clear();
        }
    }

    /// Waits for the oldest frame in flight and completes its stats with
    /// its GPU figures and its image (read before its slot is begun again).
    fn retire_oldest(&mut self, device: &Device) -> Result<()> {
        let Some(mut f) = self.in_flight.pop_front() else { return Ok(()) };
        device.wait_for(f.submission.value)?;
        let timestamps = device.frame_timestamps(f.submission)?;
        f.stats.timings.gpu_wait = ms(f.submitted_at, Instant::now());
        f.stats.timings.set_gpu(timestamps.as_ref(), f.lists, &f.post);
        f.stats.gpu_complete = true;
        // GPU-produced figures go into the stats of the frame they describe.
        let mut results = RetiredFrameResults { device, frame: f.stats.frame, value: f.submission.value, counters: &mut f.stats.counters };
        for callback in f.on_retired {
            callback(&mut results);
        }
        // Instances occluded on the GPU (the instancing feature's GPU
        // cull) reach the counter only now.
        f.stats.occluded_instances = f.stats.counter(crate::occlusion::OCCLUDED_INSTANCES_COUNTER);
        if let Some(b) = f.exposure {
            let state = device.read_buffer_after(b, 0, crate::view_state::EXPOSURE_STATE_SIZE, f.submission.value)?;
            if let Some(ev) = crate::postprocess::exposure::ev100_of_state(&state) {
                f.stats.image.exposure_ev100 = ev;
            }
        }
        let image = match f.image {
            Some(p) => {
                let len = u64::from(p.width) * u64::from(p.height) * 4;
                let rgba8 = device.read_buffer_after(p.buffer, 0, len, f.submission.value)?;
                Some(Image { width: p.width, height: p.height, rgba8 })
            }
            None => None,
        };
        self.push_retired(RetiredFrame { stats: f.stats, image });
        Ok(())
    }

    pub(crate) fn push_retired(&mut self, frame: RetiredFrame) {
        if self.retired.len() == MAX_RETIRED {
            self.retired.pop_front();
        }
        self.retired.push_back(frame);
    }
}

/// Records the copy of the output into `slot`'s read-back buffer at the end
/// of `frame` (the output is left `TransferSrc`).
pub(crate) fn read_back(
    device: &Device,
    frame: &mut Frame<'_>,
    (slot, readback): (usize, &mut [Option<(BufferHandle, u64)>]),
    targets: &mut RenderTargets,
) -> Result<PendingImage> {
    let output = targets.texture(OUTPUT.name).expect("made in gpu_prepare");
    let (width, height) = targets.size(OUTPUT.name).expect("made in gpu_prepare");
    let len = u64::from(width) * u64::from(height) * 4;
    let entry = &mut readback[slot];
    if entry.is_none_or(|(_, cap)| cap < len) {
        if let Some((old, _)) = entry.take() {
            device.destroy_buffer(old);
        }
        *entry = Some((device.create_buffer(&BufferDesc::readback("output read-back", len))?, len));
    }
    let (buffer, _) = entry.expect("just created");
    let cmd = frame.cmd();
    targets.prepare(cmd, &[(OUTPUT.name, Access::CopySource)])?;
    cmd.copy_texture_to_buffer(output, buffer, 0)?;
    cmd.buffer_barrier(buffer, BufferState::TransferDst, BufferState::HostRead)?;
    Ok(PendingImage { buffer, width, height })
}

/// The figures of the frame (timings are the caller's).
pub(crate) fn frame_stats(frame: u64, scene: &Scene, v: &InitViews, elements: &DynamicElements<'_>, lists: &[PassDrawList]) -> FrameStats {
    let mut stats = FrameStats {
        frame,
        mesh_passes: v.passes.all().collect(),
        primitives: scene.num_primitives() as u64,
        visible_primitives: v.visible_primitives(),
        primitives_tested: v.tested_primitives(),
        occluded_primitives: v.occluded_primitives,
        occluded_instances: elements.counters.get(crate::occlusion::OCCLUDED_INSTANCES_COUNTER).copied().unwrap_or(0),
        cached_commands_built: scene.counters.cached_commands_built,
        dynamic_commands_built: elements.built,
        proxies_created: scene.counters.proxies_created,
        failed_updates: scene.counters.failed_updates,
        element_failures: elements.element_failures,
        gpu_scene_upload_bytes: scene.gpu_scene.last_upload_bytes,
        materials_live: scene.materials.live() as u64,
        material_bind_groups: scene.materials.bind_groups_live() as u64,
        textures_live: scene.textures.live() as u64,
        texture_bytes_uploaded: scene.textures.bytes_uploaded,
        counters: elements.counters.clone(),
        lights: v.grid.light_stats,
        clusters: v.grid.cluster_stats,
        ..Default::default()
    };
    stats.shadow.cascades = v.cascades.len() as u64;
    stats.shadow.atlas_tiles = v.atlas.tiles.len() as u64;
    stats.shadow.tiles_rendered = v.atlas.rendered() as u64;
    stats.shadow.tiles_cached = stats.shadow.atlas_tiles - stats.shadow.tiles_rendered;
    stats.shadow.unshadowed_lights = v.atlas.unshadowed;
    // The digest hashes per list a few figures, its draws' digest and its
    // ids' (`IdStream::digest`). Per draw and per id it adds up terms that
    // are each a mix of the element and its position: no chain from one
    // to the next, where a streaming hasher (SipHash, 5-8 writes per draw,
    // one per id) took most of a millisecond per frame at 160,000 cubes.
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    for l in lists {
        let p: &mut PassStats = &mut stats.passes[l.pass.index()];
        p.mesh_draw_commands += l.commands_before_merge;
        p.draws += l.draws.len() as u64;
        if l.pass.desc().target == crate::mesh_pass::passes::PassTarget::ShadowMap {
            stats.shadow.draws += l.draws.len() as u64;
        }
        let mut draws_digest = 0u64;
        for (k, d) in l.draws.iter().enumerate() {
            let c = elements.commands.get(d.bucket);
            // Handles are left out: their numbering depends on creation order.
            let words = [
                u64::from(c.material_index) << 32 | u64::from(c.element.first_index),
                u64::from(c.element.count) << 32 | u64::from(c.element.base_vertex as u32),
                u64::from(c.element.instance_count) << 32 | u64::from(d.first_instance),
                u64::from(d.instance_count) << 1 | u64::from(c.element.indirect.is_some()),
            ];
            draws_digest = draws_digest.wrapping_add(words.iter().fold(k as u64, |h, &w| mix64(h ^ w)));
            if c.element.indirect.is_some() {
                // The GPU writes the count: not known here.
                p.indirect_draws += 1;
                continue;
            }
            let instances = u64::from(d.instance_count) * u64::from(c.element.instance_count);
            p.instances += instances;
            if l.pass.desc().counts_triangles {
                stats.triangles += u64::from(c.element.count / 3) * instances;
            }
        }
        (l.pass, l.view, l.draws.len(), draws_digest, l.draws.ids().len(), l.draws.ids().digest()).hash(&mut hasher);
    }
    stats.draw_list_digest = hasher.finish();
    stats
}
