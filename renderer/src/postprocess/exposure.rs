//! Automatic exposure (UE's histogram eye adaptation), `r.AutoExposure=1`:
//! before the post chain, two compute passes on the first main view's
//! part of scene color (`auto_exposure.wgsl`): a 64-bin histogram of log2
//! luminance over every fourth pixel in x and y (a sixteenth of them: the
//! statistics of a mean of the middle 80% need no more, and the pass stays
//! cheap on a CPU driver), then one workgroup that takes the
//! mean of its middle 80%, picks the EV100 that exposes it (EV100 =
//! log2(L · 100 / 12.5), minus `r.AutoExposure.Compensation`, clamped to
//! `r.AutoExposure.MinEV100..MaxEV100`) and moves the view's exposure
//! towards it: `ev += (target - ev) · (1 - exp(-dt · speed))`, `speed`
//! `r.AutoExposure.SpeedUp` towards a brighter scene, `SpeedDown` towards
//! a darker one, `dt` the family's `delta_seconds` — the gap shrinks to 5%
//! in 3 / speed seconds (1 s up, 3 s down by default). A view's first frame
//! takes the target at once.
//!
//! The exposure lives in the view's state ([`crate::ViewStateId`]) on the
//! GPU: tone mapping reads it there the same frame, and the next frame's
//! adaptation starts from it, so nothing waits for the CPU and the images
//! are the same with any number of frames in flight. A copy reaches the
//! frame's stats (`ImageStats::exposure_ev100`) when the frame retires.
//! Every main view of the family is exposed by the first one's (split
//! screens share one exposure). A view without a state is exposed by
//! `r.Exposure`.

use crate::error::Result;
use crate::render_targets::{Access, RenderTargets, SCENE_COLOR};
use crate::settings::AutoExposureSettings;
use crate::view_state::{ViewState, EXPOSURE_STATE_SIZE, HISTOGRAM_BINS};
use bytemuck::{Pod, Zeroable};
use rhi_vulkan::*;

pub(crate) const SHADER: &str = include_str!("../../shaders/auto_exposure.wgsl");
/// The histogram's range of log2 luminance (EV100 -7 to 17).
const MIN_LOG2: f32 = -10.0;
const LOG2_RANGE: f32 = 24.0;

/// GPU timestamp labels around the two passes.
pub const TIMESTAMP_LABELS: [&str; 2] = ["auto exposure begin", "auto exposure end"];

/// The `Params` of `auto_exposure.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Pod, Zeroable)]
pub(crate) struct Params {
    pub viewport: [u32; 4],
    pub min_log2: f32,
    pub log2_range: f32,
    pub delta_seconds: f32,
    pub speed_up: f32,
    pub speed_down: f32,
    pub min_ev100: f32,
    pub max_ev100: f32,
    pub compensation: f32,
}

/// The two compute pipelines (made on first use).
#[derive(Debug)]
pub(crate) struct AutoExposurePipelines {
    histogram: PipelineHandle,
    adapt: PipelineHandle,
}

impl AutoExposurePipelines {
    pub fn new(device: &Device) -> Result<Self> {
        let shader = device.create_shader("auto_exposure.wgsl", SHADER)?;
        let pipeline = |entry| device.create_compute_pipeline(&ComputePipelineDesc { shader: ShaderStageDesc::new(shader, entry) });
        let made = pipeline("histogram_main").and_then(|histogram| match pipeline("adapt") {
            Ok(adapt) => Ok(Self { histogram, adapt }),
            Err(e) => {
                device.destroy_pipeline(histogram);
                Err(e)
            }
        });
        device.destroy_shader(shader);
        Ok(made?)
    }

    pub fn release(self, device: &Device) {
        device.destroy_pipeline(self.histogram);
        device.destroy_pipeline(self.adapt);
    }
}

/// One frame's auto exposure for a view.
pub(crate) struct ExposureFrame<'a> {
    pub settings: &'a AutoExposureSettings,
    pub state: &'a ViewState,
    /// The view's viewport in scene color.
    pub viewport: Rect,
    pub delta_seconds: f32,
    /// The frame slot (its read-back buffer of the state).
    pub slot: usize,
}

/// Records the histogram and the adaptation into `frame`, then copies the
/// state into the slot's read-back buffer and leaves it readable by tone
/// mapping's fragment shader.
pub(crate) fn record(frame: &mut Frame<'_>, targets: &mut RenderTargets, p: &AutoExposurePipelines, at: &ExposureFrame<'_>) -> Result<()> {
    let (state, histogram, readback) = (at.state.exposure, at.state.histogram, at.state.readback[at.slot]);
    let scene_color = targets.texture(SCENE_COLOR.name).expect("made in gpu_prepare");
    let entries =
        [(0, BindingResource::Texture(scene_color)), (1, BindingResource::Buffer(histogram)), (2, BindingResource::Buffer(state))];
    let group = frame.create_bind_group(p.histogram, 0, &entries)?;
    let s = at.settings;
    let r = at.viewport;
    let params = Params {
        viewport: [r.x.max(0) as u32, r.y.max(0) as u32, r.width, r.height],
        min_log2: MIN_LOG2,
        log2_range: LOG2_RANGE,
        delta_seconds: at.delta_seconds,
        speed_up: s.speed_up,
        speed_down: s.speed_down,
        min_ev100: s.min_ev100,
        max_ev100: s.max_ev100,
        compensation: s.compensation,
    };
    let stamps = frame.timestamps_left().is_some_and(|left| left >= 2);
    let cmd = frame.cmd();
    if stamps {
        cmd.write_timestamp(TIMESTAMP_LABELS[0])?;
    }
    targets.prepare(cmd, &[(SCENE_COLOR.name, Access::Sample)])?;
    // The last frame's adaptation read the histogram and its tone mapping
    // the state: both before this frame's writes.
    cmd.buffer_barrier(histogram, BufferState::ShaderWrite, BufferState::TransferDst)?;
    cmd.fill_buffer(histogram, 0, HISTOGRAM_BINS * 4, 0)?;
    cmd.buffer_barrier(histogram, BufferState::TransferDst, BufferState::ShaderWrite)?;
    cmd.buffer_barrier(state, BufferState::ShaderRead, BufferState::ShaderWrite)?;
    cmd.bind_pipeline(p.histogram)?;
    cmd.bind_group(0, &group)?;
    cmd.push_constants(0, bytemuck::bytes_of(&params))?;
    cmd.dispatch(r.width.div_ceil(4).div_ceil(16), r.height.div_ceil(4).div_ceil(16), 1)?;
    cmd.buffer_barrier(histogram, BufferState::ShaderWrite, BufferState::ShaderWrite)?;
    cmd.bind_pipeline(p.adapt)?;
    cmd.bind_group(0, &group)?;
    cmd.push_constants(0, bytemuck::bytes_of(&params))?;
    cmd.dispatch(1, 1, 1)?;
    cmd.buffer_barrier(state, BufferState::ShaderWrite, BufferState::TransferSrc)?;
    cmd.copy_buffer(state, 0, readback, 0, EXPOSURE_STATE_SIZE)?;
    cmd.buffer_barrier(readback, BufferState::TransferDst, BufferState::HostRead)?;
    cmd.buffer_barrier(state, BufferState::TransferSrc, BufferState::ShaderRead)?;
    if stamps {
        cmd.write_timestamp(TIMESTAMP_LABELS[1])?;
    }
    Ok(())
}

/// The EV100 in a read-back exposure state.
pub(crate) fn ev100_of_state(bytes: &[u8]) -> Option<f32> {
    bytes.get(4..8).map(|b| f32::from_le_bytes(b.try_into().expect("4 bytes")))
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_shader_compiles() {
        rhi_vulkan::compile_wgsl("auto_exposure.wgsl", super::SHADER).expect("auto_exposure.wgsl compiles");
    }
}
