//! Per-view state that lives across frames (UE's FSceneViewState): what a
//! view remembers from its earlier frames — auto exposure's adapted
//! exposure today, temporal history later — kept under the view's stable
//! id ([`ViewStateId`], [`crate::SceneView::state`]).
//!
//! A state is made the first frame its view is rendered and lives until
//! `RenderThread::release_view_state` (engine-core releases a camera's
//! when the camera goes): a view that is not rendered for a while keeps
//! its past, and two families can render the same view alternately. Its GPU
//! memory is read and written only by the frames' command lists, in
//! submission order, so its evolution does not depend on how many frames
//! are in flight.

use rhi_vulkan::{BufferDesc, BufferHandle, BufferState, BufferUsage, Device};
use std::collections::BTreeMap;

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

fn destroy(device: &Device, s: ViewState) {
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
    let mut state = ViewState { exposure, histogram, readback: Vec::with_capacity(slots) };
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
