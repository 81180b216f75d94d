//! Per-view state that lives across frames (UE's FSceneViewState): what a
//! view remembers from its earlier frames — auto exposure's adapted
//! exposure today, temporal history later — kept under the view's stable
//! id ([`ViewStateId`], [`crate::SceneView::state`]).
//!
//! TAA's part (`crate::postprocess::taa`): the history, two targets in
//! the view's own frame-resource table (`crate::render_targets`, the
//! same mechanism as the renderer's, so their states are tracked across
//! frames), and on the CPU the jitter sequence's position and the
//! previous frame's camera ([`TemporalView`]).
//!
//! A state is made the first frame its view is rendered and lives until
//! `RenderThread::release_view_state` (engine-core releases a camera's
//! when the camera goes): a view that is not rendered for a while keeps
//! its past, and two families can render the same view alternately. Its GPU
//! memory is read and written only by the frames' command lists, in
//! submission order, so its evolution does not depend on how many frames
//! are in flight.

use crate::render_targets::{Lifetime, RenderTargets, TargetDesc};
use crate::view::{SceneView, ViewKind};
use glam::{Mat4, Vec2, Vec3};
use rhi_vulkan::{BufferDesc, BufferHandle, BufferState, BufferUsage, Device};
use std::collections::BTreeMap;

/// TAA's history, ping and pong, in a view's own table: a frame reads the
/// one the last wrote and writes the other.
pub(crate) const TAA_HISTORY: [TargetDesc; 2] = [
    TargetDesc { name: "taa history a", format: crate::mesh_pass::SCENE_COLOR_FORMAT, lifetime: Lifetime::Temporal, samples: 1 },
    TargetDesc { name: "taa history b", format: crate::mesh_pass::SCENE_COLOR_FORMAT, lifetime: Lifetime::Temporal, samples: 1 },
];

/// Sub-pixel jitter positions before the sequence repeats (UE's default
/// for TAA: 8 of the Halton (2, 3) sequence).
pub const TAA_JITTER_SAMPLES: u32 = 8;

/// A view's camera for this frame's temporal passes: the sub-pixel jitter
/// of its projection and the previous frame's camera (motion vectors).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct TemporalView {
    /// The jitter in NDC: the jittered clip position is clip.xy + jitter * clip.w.
    pub jitter: Vec2,
    /// The same in pixels (+x right, +y down), within ±0.5.
    pub jitter_pixels: Vec2,
    /// The previous frame's world to clip, unjittered (this frame's where
    /// the view has no past).
    pub prev_view_proj: Mat4,
    /// TAA starts again: no history to blend (the first frame, a camera
    /// cut, a new size, TAA off the frame before).
    pub reset: bool,
    /// The view's state (where its history lives).
    pub state: Option<ViewStateId>,
}

impl TemporalView {
    /// A view without jitter or motion of its camera.
    pub fn still(view_proj: Mat4) -> Self {
        Self { jitter: Vec2::ZERO, jitter_pixels: Vec2::ZERO, prev_view_proj: view_proj, reset: true, state: None }
    }

    /// `view_proj` with this frame's jitter.
    pub fn jittered(&self, view_proj: Mat4) -> Mat4 {
        match self.jitter == Vec2::ZERO {
            true => view_proj,
            false => Mat4::from_translation(Vec3::new(self.jitter.x, self.jitter.y, 0.0)) * view_proj,
        }
    }
}

/// Element `index` (from 1) of the Halton sequence in `base`: in [0, 1).
pub(crate) fn halton(mut index: u32, base: u32) -> f32 {
    let (mut f, mut r) = (1.0, 0.0);
    while index > 0 {
        f /= base as f32;
        r += f * (index % base) as f32;
        index /= base;
    }
    r
}

/// What TAA keeps of a view on the CPU between frames.
#[derive(Debug, Default)]
pub(crate) struct TemporalState {
    /// The view's unjittered world to clip in the last frame TAA ran on it.
    pub prev_view_proj: Option<Mat4>,
    /// Frames since the history was reset: the jitter's place in its sequence.
    pub frame: u32,
    /// The history target the last frame wrote (`TAA_HISTORY`'s index).
    pub current: usize,
    /// The renderer's frame number TAA last ran on the view in.
    pub last_frame: u64,
}

/// A view's identity across frames: the game side picks it (engine-core:
/// the camera component's id) and keeps it for as long as the view means
/// the same camera.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ViewStateId(pub u64);

/// The bytes of auto exposure's state (`ExposureState` of
/// `auto_exposure.wgsl`): the linear multiplier, the EV100 it is, whether
/// it has been set, and the EV100 it is heading for.
pub(crate) const EXPOSURE_STATE_SIZE: u64 = 16;
/// Bins of the luminance histogram.
pub(crate) const HISTOGRAM_BINS: u64 = 64;

/// One view's state.
#[derive(Debug)]
pub(crate) struct ViewState {
    /// Auto exposure's state (GPU only, written by its `adapt` pass, read
    /// by tone mapping).
    pub exposure: BufferHandle,
    /// The luminance histogram, cleared and filled each frame auto exposure runs.
    pub histogram: BufferHandle,
    /// Per frame slot, where the frame's exposure is copied for its stats.
    pub readback: Vec<BufferHandle>,
    /// TAA's CPU side.
    pub temporal: TemporalState,
    /// The view's own targets (TAA's history).
    pub targets: RenderTargets,
}

/// Every view's state, and the exposure tone mapping reads for a view
/// without auto exposure.
#[derive(Debug, Default)]
pub(crate) struct ViewStates {
    states: BTreeMap<ViewStateId, ViewState>,
    /// A zero exposure state (never adapted: tone mapping does not read it).
    unadapted: Option<BufferHandle>,
}

impl ViewStates {
    /// The state of `id`, made now if it has none (`slots` read-back buffers).
    pub fn get_or_make(&mut self, device: &Device, id: ViewStateId, slots: usize) -> rhi_vulkan::Result<&ViewState> {
        if let std::collections::btree_map::Entry::Vacant(e) = self.states.entry(id) {
            e.insert(make_state(device, slots)?);
        }
        Ok(&self.states[&id])
    }

    /// The state of `id`, once made.
    pub fn get_mut(&mut self, id: ViewStateId) -> Option<&mut ViewState> {
        self.states.get_mut(&id)
    }

    /// Begins TAA's frame `frame_number` for the family's `views` (a
    /// family of `size`): per view, its jitter and previous camera where
    /// TAA runs on it — a main or capture view, not in wireframe, with a
    /// state (made now if it has none) — and `None` elsewhere. Advances each
    /// one's jitter sequence and remembers its camera for the next frame.
    pub fn begin_taa(
        &mut self,
        device: &Device,
        views: &[SceneView],
        frame_number: u64,
        (slots, size): (usize, (u32, u32)),
    ) -> rhi_vulkan::Result<Vec<Option<TemporalView>>> {
        let mut out = Vec::with_capacity(views.len());
        for view in views {
            let Some(id) = view.state.filter(|_| matches!(view.kind, ViewKind::Main | ViewKind::Capture) && !view.wireframe) else {
                out.push(None);
                continue;
            };
            self.get_or_make(device, id, slots)?;
            let state = self.states.get_mut(&id).expect("made above");
            let t = &mut state.temporal;
            let history = TAA_HISTORY[t.current].name;
            let has_history = state.targets.size(history) == Some(size) && state.targets.has_contents(history);
            let reset = view.camera_cut || !has_history || t.prev_view_proj.is_none() || t.last_frame + 1 != frame_number;
            if reset {
                t.frame = 0;
            }
            let n = t.frame % TAA_JITTER_SAMPLES + 1;
            let jitter_pixels = Vec2::new(halton(n, 2) - 0.5, halton(n, 3) - 0.5);
            let r = view.viewport;
            let jitter = Vec2::new(2.0 * jitter_pixels.x / r.width as f32, 2.0 * jitter_pixels.y / r.height as f32);
            let now = view.view_proj();
            let prev_view_proj = if reset { now } else { t.prev_view_proj.unwrap_or(now) };
            t.prev_view_proj = Some(now);
            t.frame = t.frame.wrapping_add(1);
            t.last_frame = frame_number;
            out.push(Some(TemporalView { jitter, jitter_pixels, prev_view_proj, reset, state: Some(id) }));
        }
        Ok(out)
    }

    /// The exposure state tone mapping binds where no view's is adapted.
    pub fn unadapted(&mut self, device: &Device) -> rhi_vulkan::Result<BufferHandle> {
        if let Some(b) = self.unadapted {
            return Ok(b);
        }
        let b = zeroed(device, "unadapted exposure", EXPOSURE_STATE_SIZE)?;
        Ok(*self.unadapted.insert(b))
    }

    /// Drops `id`'s state (freed once no frame in flight uses it); an
    /// unknown id is nothing to do. Returns whether there was one.
    pub fn release(&mut self, device: &Device, id: ViewStateId) -> bool {
        match self.states.remove(&id) {
            Some(s) => {
                destroy(device, s);
                true
            }
            None => false,
        }
    }

    /// Destroys every state (the renderer is going).
    pub fn release_all(&mut self, device: &Device) {
        for (_, s) in std::mem::take(&mut self.states) {
            destroy(device, s);
        }
        if let Some(b) = self.unadapted.take() {
            device.destroy_buffer(b);
        }
    }
}

fn destroy(device: &Device, mut s: ViewState) {
    s.targets.destroy_all(device);
    device.destroy_buffer(s.exposure);
    device.destroy_buffer(s.histogram);
    for b in s.readback {
        device.destroy_buffer(b);
    }
}

/// A GPU storage buffer of `size` zero bytes, ready for shaders to read.
fn zeroed(device: &Device, label: &str, size: u64) -> rhi_vulkan::Result<BufferHandle> {
    let b = device.create_buffer(&BufferDesc::gpu_only(label, size, BufferUsage::STORAGE))?;
    let filled = device.immediate(|cmd| {
        cmd.fill_buffer(b, 0, size, 0)?;
        cmd.buffer_barrier(b, BufferState::TransferDst, BufferState::ShaderRead)
    });
    if let Err(e) = filled {
        device.destroy_buffer(b);
        return Err(e);
    }
    Ok(b)
}

fn make_state(device: &Device, slots: usize) -> rhi_vulkan::Result<ViewState> {
    let exposure = zeroed(device, "view exposure", EXPOSURE_STATE_SIZE)?;
    let histogram = match zeroed(device, "view luminance histogram", HISTOGRAM_BINS * 4) {
        Ok(h) => h,
        Err(e) => {
            device.destroy_buffer(exposure);
            return Err(e);
        }
    };
    let mut state = ViewState {
        exposure,
        histogram,
        readback: Vec::with_capacity(slots),
        temporal: TemporalState::default(),
        targets: RenderTargets::default(),
    };
    for _ in 0..slots {
        match device.create_buffer(&BufferDesc::readback("view exposure read-back", EXPOSURE_STATE_SIZE)) {
            Ok(b) => state.readback.push(b),
            Err(e) => {
                destroy(device, state);
                return Err(e);
            }
        }
    }
    Ok(state)
}
