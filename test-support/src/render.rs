//! Render threads for tests (feature `renderer`).

use crate::{assert_validation_enabled, device_desc, Validated};
use renderer::{RenderThread, RenderThreadMode};
use rhi_vulkan::ValidationCounters;
use std::sync::Arc;

/// A render thread of the test's own on the real device, validation on and
/// asserted on, with a 256-texel shadow map (lavapipe is slow; the tests
/// need shadows, not sharp ones).
#[track_caller]
pub fn render_thread(mode: RenderThreadMode) -> RenderThread {
    let mut rt = RenderThread::new(&device_desc(), mode).expect("a Vulkan device (run `cargo xtask test`)");
    assert_validation_enabled(&mut rt);
    rt.set_cvar(renderer::cvars::SHADOW_MAP_SIZE, "256").expect("the shadow map size cvar");
    rt
}

/// A render thread's device's counters (asked on the render thread).
impl Validated for &mut RenderThread {
    fn validation_counters(self) -> Arc<ValidationCounters> {
        self.with_context(|ctx| ctx.device.validation()).expect("the render thread answers")
    }
}
