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

/// Material churn on `rt`: `parents` parents (`parent(k)` each) with
/// `per_parent` instances each (their `rough` scalar varied), then every
/// instance destroyed in creation order and every parent; how long it took.
/// The material benches and the scaling test time the same work with it.
pub fn material_churn(
    rt: &mut RenderThread,
    parents: usize,
    per_parent: usize,
    parent: impl Fn(usize) -> renderer::Material,
) -> std::time::Duration {
    use renderer::MaterialInstance;
    let start = std::time::Instant::now();
    let mut parent_ids = Vec::with_capacity(parents);
    let mut instances = Vec::with_capacity(parents * per_parent);
    for k in 0..parents {
        let p = rt.create_material(parent(k)).expect("a parent");
        for j in 0..per_parent {
            let instance = MaterialInstance::of(p).with_scalar("rough", j as f32 / per_parent as f32);
            instances.push(rt.create_material_instance(instance).expect("an instance"));
        }
        parent_ids.push(p);
    }
    for id in instances.into_iter().chain(parent_ids) {
        rt.destroy_material(id).expect("a live material");
    }
    start.elapsed()
}
