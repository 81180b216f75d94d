//! Occlusion culling on the real device (issue 18): what is hidden behind
//! nearer opaque geometry is counted and not drawn, and the image is the
//! same byte for byte with `r.AllowOcclusionQueries` on and off.

mod common;

use common::*;
use glam::{Mat4, Quat, Vec3, Vec4};
use renderer::*;
use rhi_vulkan::Rect;

/// A camera at street level looking along +Y.
fn street_view() -> SceneView {
    SceneView::perspective(Vec3::new(0.0, -10.0, 1.0), Vec3::new(0.0, 0.0, 1.0), Vec3::Z, 1.2, 0.1, 200.0, Rect::from_size(W, H)).unwrap()
}

fn place(rt: &mut RenderThread, mesh: &std::sync::Arc<StaticMeshRenderData>, material: MaterialId, m: Mat4) -> PrimitiveId {
    rt.add_primitive(Box::new(StaticMeshSceneProxy::new(mesh.clone(), vec![material])), m).unwrap()
}

fn srt(scale: Vec3, at: Vec3) -> Mat4 {
    Mat4::from_scale_rotation_translation(scale, Quat::IDENTITY, at)
}

/// Renders `family` with occlusion on, then off; returns both.
fn on_off(rt: &mut RenderThread, family: &ViewFamily) -> ((FrameStats, rhi_vulkan::Image), (FrameStats, rhi_vulkan::Image)) {
    rt.set_cvar(cvars::ALLOW_OCCLUSION_QUERIES, "1").unwrap();
    let on = frame(rt, family);
    rt.set_cvar(cvars::ALLOW_OCCLUSION_QUERIES, "0").unwrap();
    let off = frame(rt, family);
    rt.set_cvar(cvars::ALLOW_OCCLUSION_QUERIES, "1").unwrap();
    (on, off)
}

#[test]
fn a_primitive_that_cannot_be_occluded_is_drawn_behind_the_wall() {
    let mut rt = render_thread(RenderThreadMode::Threaded);
    sun(&mut rt, false);
    let grey = rt.create_material(Material::colored(Vec4::new(0.6, 0.6, 0.6, 1.0))).unwrap();
    let cube = cube_mesh();
    place(&mut rt, &cube, grey, srt(Vec3::new(8.0, 0.5, 4.0), Vec3::new(0.0, 0.0, 1.0)));
    place(&mut rt, &cube, grey, srt(Vec3::ONE, Vec3::new(-1.5, 5.0, 1.0)));
    let keep =
        Box::new(CustomizedProxy { can_be_occluded: false, ..CustomizedProxy::new(StaticMeshSceneProxy::new(cube.clone(), vec![grey])) });
    rt.add_primitive(keep, srt(Vec3::ONE, Vec3::new(1.5, 5.0, 1.0))).unwrap();
    let fam = family(vec![street_view()]);
    let ((on, on_img), (_, off_img)) = on_off(&mut rt, &fam);
    assert_eq!(on.occluded_primitives, 1, "only the box that can be occluded");
    assert_eq!(on.visible_primitives, 2, "the wall and the box that cannot be occluded");
    assert_images_equal(&on_img, &off_img, "occlusion on vs off");
    assert_clean(&mut rt);
}

#[test]
fn a_box_hidden_behind_a_wall_is_counted_occluded_and_one_beside_it_is_not() {
    let mut rt = render_thread(RenderThreadMode::Threaded);
    sun(&mut rt, true);
    let grey = rt.create_material(Material::colored(Vec4::new(0.6, 0.6, 0.6, 1.0))).unwrap();
    let red = rt.create_material(Material::colored(Vec4::new(0.9, 0.1, 0.1, 1.0))).unwrap();
    let cube = cube_mesh();
    place(&mut rt, &cube, grey, srt(Vec3::new(8.0, 0.5, 4.0), Vec3::new(0.0, 0.0, 1.0)));
    place(&mut rt, &cube, red, srt(Vec3::ONE, Vec3::new(0.0, 5.0, 1.0)));
    place(&mut rt, &cube, red, srt(Vec3::ONE, Vec3::new(8.0, 5.0, 1.0)));
    let fam = family(vec![street_view()]);
    let ((on, on_img), (off, off_img)) = on_off(&mut rt, &fam);
    assert_eq!(on.occluded_primitives, 1, "the box behind the wall");
    assert_eq!(on.visible_primitives, 2, "the wall and the box beside it");
    assert_eq!(on.pass(MeshPass::Base).instances, 2);
    assert_eq!(on.shadow.cascades, 4);
    assert_eq!(on.pass(MeshPass::ShadowDepth).instances, 3 * 4, "shadow views are never occlusion culled: each cascade draws all three");
    assert_eq!((off.occluded_primitives, off.visible_primitives, off.pass(MeshPass::Base).instances), (0, 3, 3));
    assert!(on.timings.stage(Stage::Occlusion) > 0.0);
    assert_images_equal(&on_img, &off_img, "occlusion on vs off");
    // The box beside the wall is really drawn (red at its place).
    let red_pixels = on_img.rgba8.chunks_exact(4).filter(|p| p[0] > 2 * p[1].max(p[2]) && p[0] > 60).count();
    assert!(red_pixels > 20, "the box beside the wall is drawn: {red_pixels} red pixels");
    assert_clean(&mut rt);
}

#[test]
fn images_are_identical_with_occlusion_on_and_off_whatever_stands_in_front() {
    let mut rt = render_thread(RenderThreadMode::Threaded);
    sun(&mut rt, true);
    let mats: Vec<MaterialId> = colors(5).into_iter().map(|m| rt.create_material(m).unwrap()).collect();
    let grey = rt.create_material(Material::colored(Vec4::new(0.6, 0.6, 0.6, 1.0))).unwrap();
    let two_sided = rt.create_material(Material::colored(Vec4::new(0.3, 0.6, 0.3, 1.0)).with_two_sided(true)).unwrap();
    let stripes = "fn material_main(i: MaterialInput) -> MaterialOutput {\n    var o = default_material(i);\n    o.base_color = vec3<f32>(0.1, 0.2, 0.9);\n    o.opacity = select(0.0, 1.0, fract(i.uv0.x * 6.0) > 0.5);\n    return o;\n}\n";
    let masked = rt.create_material(Material::with_shader("stripes.wgsl", stripes).with_blend(BlendMode::Masked)).unwrap();
    let glass = rt.create_material(Material::colored(Vec4::new(0.2, 0.4, 0.9, 0.4)).with_blend(BlendMode::Translucent)).unwrap();
    let cube = cube_mesh();
    let plane = StaticMeshRenderData::new(vec![shapes::plane(1.0)]).unwrap();
    // Facing the camera (-Y): the plane's +Z turned to -Y; and away from it.
    let toward = Mat4::from_rotation_x(std::f32::consts::FRAC_PI_2);
    let away = Mat4::from_rotation_x(-std::f32::consts::FRAC_PI_2);
    // The wall, and behind it: a hidden box, one touching its back face,
    // one partly behind, one sticking out above.
    place(&mut rt, &cube, grey, srt(Vec3::new(6.0, 0.5, 3.0), Vec3::new(-3.0, 0.0, 1.5)));
    place(&mut rt, &cube, mats[0], srt(Vec3::ONE, Vec3::new(-3.0, 4.0, 1.0)));
    place(&mut rt, &cube, mats[1], srt(Vec3::ONE, Vec3::new(-4.0, 0.75, 1.0)));
    place(&mut rt, &cube, mats[2], srt(Vec3::ONE, Vec3::new(0.2, 3.0, 1.0)));
    place(&mut rt, &cube, mats[3], srt(Vec3::ONE, Vec3::new(-2.0, 3.0, 3.2)));
    // A plane coplanar with the wall's front face (z-fighting is the GPU's
    // to decide, the same either way).
    place(&mut rt, &plane, mats[4], Mat4::from_translation(Vec3::new(-4.0, -0.25, 1.0)) * toward);
    // Right of the wall: a masked (striped) plane and a translucent plane
    // in front of boxes, a one-sided plane facing away in front of a box
    // (the GPU culls it: not an occluder), a two-sided one facing away, and
    // a mirrored wall.
    place(&mut rt, &plane, masked, Mat4::from_translation(Vec3::new(2.0, -2.0, 1.0)) * toward * Mat4::from_scale(Vec3::splat(2.0)));
    place(&mut rt, &cube, mats[0], srt(Vec3::ONE, Vec3::new(2.0, 1.0, 1.0)));
    place(&mut rt, &plane, glass, Mat4::from_translation(Vec3::new(4.5, -2.0, 1.0)) * toward * Mat4::from_scale(Vec3::splat(2.0)));
    place(&mut rt, &cube, mats[1], srt(Vec3::ONE, Vec3::new(4.5, 1.0, 1.0)));
    place(&mut rt, &plane, mats[2], Mat4::from_translation(Vec3::new(1.0, 4.0, 3.5)) * away * Mat4::from_scale(Vec3::splat(4.0)));
    place(&mut rt, &cube, mats[3], srt(Vec3::ONE, Vec3::new(1.0, 7.0, 3.5)));
    place(&mut rt, &plane, two_sided, Mat4::from_translation(Vec3::new(5.0, 4.0, 3.5)) * away * Mat4::from_scale(Vec3::splat(4.0)));
    place(&mut rt, &cube, mats[4], srt(Vec3::ONE, Vec3::new(5.0, 7.0, 3.5)));
    place(&mut rt, &cube, grey, srt(Vec3::new(-3.0, 0.5, 2.0), Vec3::new(0.0, 12.0, 0.5)));
    place(&mut rt, &cube, mats[2], srt(Vec3::ONE, Vec3::new(0.0, 15.0, 0.5)));
    let fam = family(vec![street_view()]);
    let ((on, on_img), (off, off_img)) = on_off(&mut rt, &fam);
    assert_images_equal(&on_img, &off_img, "occlusion on vs off");
    // Hidden: the box behind the wall, the one touching its back, the box
    // behind the two-sided plane and the one behind the mirrored wall.
    assert_eq!(on.occluded_primitives, 4, "occluded: {} of {} visible without", on.occluded_primitives, off.visible_primitives);
    assert_eq!(on.visible_primitives + on.occluded_primitives, off.visible_primitives);
    // Serial and with two views: the same.
    rt.set_cvar(cvars::PARALLEL_PASS_SETUP, "0").unwrap();
    let left = SceneView { viewport: Rect { x: 0, y: 0, width: W / 2, height: H }, ..street_view() };
    let right = SceneView { viewport: Rect { x: W as i32 / 2, y: 0, width: W / 2, height: H }, ..street_view() };
    let two = family(vec![left, right]);
    let ((on2, on2_img), (_, off2_img)) = on_off(&mut rt, &two);
    assert_images_equal(&on2_img, &off2_img, "two views, serial: occlusion on vs off");
    // Each view culls its own (at its half-width buffer, not all four).
    assert!(on2.occluded_primitives >= 4, "{}", on2.occluded_primitives);
    assert_clean(&mut rt);
}

#[test]
fn a_wireframe_view_and_the_cvar_off_cull_nothing() {
    let mut rt = render_thread(RenderThreadMode::Inline);
    let grey = rt.create_material(Material::colored(Vec4::new(0.6, 0.6, 0.6, 1.0))).unwrap();
    let cube = cube_mesh();
    place(&mut rt, &cube, grey, srt(Vec3::new(8.0, 0.5, 4.0), Vec3::new(0.0, 0.0, 1.0)));
    place(&mut rt, &cube, grey, srt(Vec3::ONE, Vec3::new(0.0, 5.0, 1.0)));
    let mut wire = street_view();
    wire.wireframe = true;
    let (stats, _) = frame(&mut rt, &family(vec![wire]));
    assert_eq!(stats.occluded_primitives, 0, "wireframe draws what is behind too");
    let (stats, _) = frame(&mut rt, &family(vec![street_view()]));
    assert_eq!(stats.occluded_primitives, 1);
    rt.set_cvar(cvars::ALLOW_OCCLUSION_QUERIES, "0").unwrap();
    let (stats, _) = frame(&mut rt, &family(vec![street_view()]));
    assert_eq!((stats.occluded_primitives, stats.visible_primitives), (0, 2));
    assert_clean(&mut rt);
}
