//! The depth prepass policy (`r.EarlyZPassMode`, UE's EDepthDrawingMode)
//! on the real device (validation on, zero messages asserted): every mode
//! gives the same image (the base pass writes the depth of what the
//! prepass leaves out), the prepass draws what the mode says, and TAA
//! keeps every opaque batch in it (it writes the motion vectors).

mod common;

use common::*;
use glam::{Mat4, Vec3, Vec4};
use renderer::*;
use rhi_vulkan::Image;

/// Cubes (opaque), a striped masked plane in front of some, a sun.
fn scene(mode: &str, aa: &str) -> RenderThread {
    let mut rt = render_thread(RenderThreadMode::Threaded);
    rt.set_cvar(cvars::EARLY_Z_PASS_MODE, mode).unwrap();
    rt.set_cvar(cvars::ANTI_ALIASING_METHOD, aa).unwrap();
    sun(&mut rt, true);
    let materials: Vec<MaterialId> = colors(4).into_iter().map(|m| rt.create_material(m).unwrap()).collect();
    cube_grid(&mut rt, 36, &materials, 1.5);
    let stripes = "fn material_main(i: MaterialInput) -> MaterialOutput {\n    var o = default_material(i);\n    o.base_color = vec3<f32>(0.1, 0.2, 0.9);\n    o.opacity = select(0.0, 1.0, fract(i.uv0.x * 6.0) > 0.5);\n    return o;\n}\n";
    let masked = rt.create_material(Material::with_shader("stripes.wgsl", stripes).with_blend(BlendMode::Masked)).unwrap();
    plane_at(&mut rt, masked, 5.0, Mat4::from_translation(Vec3::new(0.5, 0.0, 2.0)));
    let _ = Vec4::ONE;
    rt
}

fn render(mode: &str, aa: &str) -> (FrameStats, Image) {
    let mut rt = scene(mode, aa);
    let fam = family(vec![top_view(14.0).with_state(ViewStateId(1))]);
    frame(&mut rt, &fam);
    let out = frame(&mut rt, &fam);
    assert_clean(&mut rt);
    out
}

fn depth_draws(stats: &FrameStats) -> u64 {
    stats.passes[MeshPass::DepthPrepass.index()].draws
}

#[test]
fn every_prepass_mode_gives_the_same_image_and_draws_what_it_says() {
    let (all_stats, all) = render("3", "0");
    test_support::save_test_output(&all, "early-z-all-opaque");
    let (none_stats, none) = render("0", "0");
    let (opaque_stats, opaque) = render("1", "0");
    let (masked_stats, masked) = render("4", "0");
    for (name, img) in [("none", &none), ("opaque only", &opaque), ("masked only", &masked)] {
        assert_images_equal(&all, img, &format!("r.EarlyZPassMode {name} vs all opaque"));
    }
    assert_eq!(depth_draws(&none_stats), 0, "no prepass");
    let (all_n, opaque_n, masked_n) = (depth_draws(&all_stats), depth_draws(&opaque_stats), depth_draws(&masked_stats));
    assert!(opaque_n > 0 && masked_n > 0 && opaque_n + masked_n == all_n, "opaque {opaque_n} + masked {masked_n} = all {all_n}");
}

#[test]
fn taa_keeps_every_opaque_batch_in_the_prepass() {
    let (all_stats, _) = render("3", "2");
    let (none_stats, _) = render("0", "2");
    assert!(depth_draws(&all_stats) > 0);
    assert_eq!(depth_draws(&none_stats), depth_draws(&all_stats), "TAA's motion vectors need the prepass");
}

#[test]
fn the_mode_takes_only_its_values() {
    let mut rt = render_thread(RenderThreadMode::Threaded);
    for bad in ["2", "5", "-1"] {
        assert!(matches!(rt.set_cvar(cvars::EARLY_Z_PASS_MODE, bad), Err(RendererError::InvalidCvarValue { .. })), "{bad}");
    }
    assert_clean(&mut rt);
}
