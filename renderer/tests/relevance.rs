//! View relevance (`scene::relevance`): kept per primitive from its proxy and
//! its materials, refreshed when they change, asked per view every frame
//! where it depends on the view; it decides the passes a primitive enters.

mod common;

use common::*;
use glam::{Mat4, Vec3, Vec4};
use renderer::*;

fn view_from(x: f32) -> SceneView {
    SceneView::perspective(Vec3::new(x, -0.01, 10.0), Vec3::new(x, 0.0, 0.0), Vec3::Y, 1.2, 0.1, 100.0, rhi_vulkan::Rect::from_size(W, H))
        .unwrap()
}

#[test]
fn a_material_switched_to_translucent_moves_its_primitives_from_the_opaque_passes_to_translucency_the_next_frame() {
    let mut rt = render_thread(RenderThreadMode::Threaded);
    sun(&mut rt, false);
    let glassy = rt.create_material(Material::colored(Vec4::new(0.9, 0.2, 0.2, 1.0))).unwrap();
    let other = rt.create_material(Material::colored(Vec4::new(0.2, 0.9, 0.2, 1.0))).unwrap();
    let mesh = cube_mesh();
    for (i, m) in [glassy, glassy, other].into_iter().enumerate() {
        rt.add_primitive(
            Box::new(StaticMeshSceneProxy::new(mesh.clone(), vec![m])),
            Mat4::from_translation(Vec3::new(i as f32 * 2.0 - 2.0, 0.0, 0.0)),
        )
        .unwrap();
    }
    let fam = family(vec![top_view(12.0)]);
    let (stats, opaque_img) = frame(&mut rt, &fam);
    assert_eq!((stats.pass(MeshPass::Base).instances, stats.pass(MeshPass::DepthPrepass).instances), (3, 3));
    assert_eq!(stats.pass(MeshPass::Translucency).mesh_draw_commands, 0, "nothing translucent: the pass is not set up");
    // The switch: the two cubes drawn with it leave the opaque passes and enter translucency.
    rt.set_material(glassy, Material::colored(Vec4::new(0.9, 0.2, 0.2, 0.4)).with_blend(BlendMode::Translucent)).unwrap();
    let (stats, glass_img) = frame(&mut rt, &fam);
    assert_eq!((stats.pass(MeshPass::Base).instances, stats.pass(MeshPass::DepthPrepass).instances), (1, 1));
    assert_eq!(stats.pass(MeshPass::Translucency).mesh_draw_commands, 2);
    assert!(diff_pixels(&opaque_img, &glass_img) > 0, "the translucent cubes look different");
    // And back.
    rt.set_material(glassy, Material::colored(Vec4::new(0.9, 0.2, 0.2, 1.0))).unwrap();
    let (stats, back_img) = frame(&mut rt, &fam);
    assert_eq!((stats.pass(MeshPass::Base).instances, stats.pass(MeshPass::Translucency).mesh_draw_commands), (3, 0));
    assert_images_equal(&opaque_img, &back_img, "opaque again");
    assert_clean(&mut rt);
}

#[test]
fn a_view_dependent_primitive_is_asked_per_view_every_frame_and_drawn_only_where_it_says() {
    let mut rt = render_thread(RenderThreadMode::Threaded);
    sun(&mut rt, false);
    let m = rt.create_material(Material::colored(Vec4::new(0.8, 0.8, 0.2, 1.0))).unwrap();
    let mesh = cube_mesh();
    // Drawn only in views whose origin has x < 0.
    let left_only = CustomizedProxy {
        draw_in: Some(|v: &SceneView| v.origin.x < 0.0),
        ..CustomizedProxy::new(StaticMeshSceneProxy::new(mesh.clone(), vec![m]))
    };
    rt.add_primitive(Box::new(left_only), Mat4::IDENTITY).unwrap();
    // A plain cube beside it is drawn in every view.
    rt.add_primitive(Box::new(StaticMeshSceneProxy::new(mesh, vec![m])), Mat4::from_translation(Vec3::new(0.0, 2.0, 0.0))).unwrap();
    let (left, left_img) = frame(&mut rt, &family(vec![view_from(-0.5)]));
    let (right, right_img) = frame(&mut rt, &family(vec![view_from(0.5)]));
    assert_eq!((left.visible_primitives, right.visible_primitives), (2, 1));
    assert_eq!((left.pass(MeshPass::Base).instances, right.pass(MeshPass::Base).instances), (2, 1));
    assert!(diff_pixels(&left_img, &right_img) > 100);
    // Both views in one frame: each asked on its own.
    let (both, _) = frame(&mut rt, &family(vec![view_from(-0.5), view_from(0.5)]));
    assert_eq!(both.visible_primitives, 3);
    assert_clean(&mut rt);
}
