//! The frame's GPU time and each pass's, from GPU timestamps.

mod common;

use common::*;
use glam::{Mat4, Vec3, Vec4};
use renderer::*;
use rhi_vulkan::Rect;

/// Opaque cubes (depth, shadow, base) and translucent ones (translucency),
/// seen by two views side by side.
fn scene(rt: &mut RenderThread) -> ViewFamily {
    sun(rt, true);
    let opaque = rt.create_material(Material::colored(Vec4::new(0.8, 0.3, 0.2, 1.0))).unwrap();
    let glass = rt.create_material(Material::colored(Vec4::new(0.2, 0.4, 0.9, 0.5)).with_blend(BlendMode::Translucent)).unwrap();
    cube_grid(rt, 64, &[opaque, opaque, glass], 1.5);
    let ground = StaticMeshRenderData::new(vec![shapes::plane(40.0)]).unwrap();
    rt.add_primitive(Box::new(StaticMeshSceneProxy::new(ground, vec![opaque])), Mat4::from_translation(Vec3::new(0.0, 0.0, -1.0))).unwrap();
    let left =
        SceneView::perspective(Vec3::new(-2.0, -8.0, 10.0), Vec3::ZERO, Vec3::Z, 1.2, 0.1, 100.0, Rect::new(0, 0, W / 2, H)).unwrap();
    let right =
        SceneView::perspective(Vec3::new(2.0, -8.0, 10.0), Vec3::ZERO, Vec3::Z, 1.2, 0.1, 100.0, Rect::new(W as i32 / 2, 0, W / 2, H))
            .unwrap();
    family(vec![left, right])
}

#[test]
fn every_pass_that_draws_has_gpu_time_and_together_they_fit_in_the_frames() {
    let mut rt = render_thread(RenderThreadMode::Threaded);
    let family = scene(&mut rt);
    for _ in 0..3 {
        let (stats, _) = frame(&mut rt, &family);
        let t = stats.timings;
        assert!(t.gpu_timestamps, "lavapipe has GPU timestamps");
        assert!(t.gpu > 0.0, "{t:?}");
        // The GPU's work lies between the submit and the CPU seeing it done.
        assert!(t.gpu <= t.gpu_wait * 1.05 + 0.1, "GPU time {} within the CPU's wait {}", t.gpu, t.gpu_wait);
        let mut sum = 0.0;
        for pass in MeshPass::ALL {
            let ms = t.gpu_pass(pass);
            if stats.pass(pass).draws > 0 {
                assert!(ms > 0.0, "{} drew {} time(s) in {ms} ms: {t:?}", pass.name(), stats.pass(pass).draws);
            } else {
                assert_eq!(ms, 0.0, "{} drew nothing", pass.name());
            }
            sum += ms;
        }
        for pass in [MeshPass::DepthPrepass, MeshPass::ShadowDepth, MeshPass::Base, MeshPass::Translucency] {
            assert!(stats.pass(pass).draws > 0, "{} draws in this scene", pass.name());
        }
        // The tone-mapping pass is timed after the mesh passes.
        assert!(t.gpu_tonemap > 0.0, "{t:?}");
        sum += t.gpu_tonemap;
        assert!(sum <= t.gpu + 1e-3, "passes {sum} ms within the frame's {} ms", t.gpu);
    }
    // Wireframe: one pass, timed too.
    rt.set_cvar(cvars::WIREFRAME, "1").unwrap();
    let (stats, _) = frame(&mut rt, &family);
    assert!(stats.pass(MeshPass::Wireframe).draws > 0);
    assert!(stats.timings.gpu_pass(MeshPass::Wireframe) > 0.0, "{:?}", stats.timings);
    assert_eq!(stats.timings.gpu_pass(MeshPass::Base), 0.0);
    assert_clean(&mut rt);
}

#[test]
fn without_execution_there_are_no_gpu_timestamps() {
    let mut rt = render_thread(RenderThreadMode::Threaded);
    let family = scene(&mut rt);
    frame(&mut rt, &family);
    // Recorded and discarded (CPU measurement): no GPU time to report.
    rt.render_frame(FrameRequest { family: family.clone(), read_back: false, execute: false }).unwrap();
    rt.flush().unwrap();
    let stats = rt.last_stats().unwrap().expect("stats");
    assert_eq!(stats.frame, 1);
    assert!(!stats.timings.gpu_timestamps);
    assert_eq!(stats.timings.gpu_passes, [0.0; MeshPass::MAX]);
    assert_eq!(stats.timings.gpu_tonemap, 0.0);
    assert_clean(&mut rt);
}
