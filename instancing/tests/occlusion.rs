//! Occlusion culling of instances (issue 18): the CPU cull drops the
//! instances the view's occlusion buffer hides, counts them as
//! `occluded_instances`, and the image stays the same byte for byte.

mod common;

use std::sync::Arc;

use glam::{Affine3A, Mat4, Quat, Vec3, Vec4};
use instancing::*;
use renderer::*;
use rhi_vulkan::Rect;

const W: u32 = 160;
const H: u32 = 120;

#[test]
fn instances_behind_a_wall_are_counted_occluded_and_the_image_does_not_change() {
    let mut rt = common::render_thread();
    rt.set_cvar(CVAR_GPU_CULLING, "0").unwrap();
    let white = rt.create_material(Material::colored(Vec4::ONE)).unwrap();
    let grey = rt.create_material(Material::colored(Vec4::new(0.5, 0.5, 0.5, 1.0))).unwrap();
    let mesh: Arc<StaticMeshRenderData> = StaticMeshRenderData::new(vec![shapes::cube(1.0)]).unwrap();
    // The wall: x in -6..6, y in -0.5..0.5, z in 0..6.
    let wall = Mat4::from_scale_rotation_translation(Vec3::new(12.0, 1.0, 6.0), Quat::IDENTITY, Vec3::new(0.0, 0.0, 3.0));
    rt.add_primitive(Box::new(StaticMeshSceneProxy::new(mesh.clone(), vec![grey])), wall).unwrap();
    // 11 × 4 cubes behind it, from x = -15 to 15: the middle ones hidden.
    let mut store = InstanceStore::new(mesh.bounds());
    let transforms: Vec<Affine3A> =
        (0..44).map(|i| Affine3A::from_translation(Vec3::new((i % 11) as f32 * 3.0 - 15.0, 5.0 + (i / 11) as f32 * 3.0, 1.0))).collect();
    store.add_instances(&transforms).unwrap();
    let proxy = common::store_proxy(&mesh, &mut store, white);
    rt.add_primitive(Box::new(proxy), Mat4::IDENTITY).unwrap();
    let view =
        SceneView::perspective(Vec3::new(0.0, -12.0, 2.0), Vec3::new(0.0, 10.0, 2.0), Vec3::Z, 1.0, 0.1, 500.0, Rect::from_size(W, H))
            .unwrap();
    let family = ViewFamily::new(W, H, vec![view]);
    let mut render = |on: &str| {
        rt.set_cvar(cvars::ALLOW_OCCLUSION_QUERIES, on).unwrap();
        rt.render_frame(FrameRequest { family: family.clone(), read_back: true, execute: true }).unwrap();
        let image = rt.read_back().unwrap().expect("image");
        (rt.last_stats().unwrap().expect("stats"), image)
    };
    let (on, on_img) = render("1");
    let (off, off_img) = render("0");
    assert!(on.occluded_instances > 0, "instances behind the wall: {}", on.occluded_instances);
    assert_eq!(on.counter(renderer::OCCLUDED_INSTANCES_COUNTER), on.occluded_instances);
    assert_eq!(off.occluded_instances, 0);
    assert_eq!(on.occluded_primitives, 0, "the component reaches past the wall: not hidden whole");
    let visible = |s: &FrameStats| s.counter(VISIBLE_INSTANCES_COUNTER);
    assert_eq!(visible(&on) + on.occluded_instances, visible(&off), "every frustum-visible instance is drawn or occluded");
    assert_eq!(on.pass(MeshPass::Base).instances + on.occluded_instances, off.pass(MeshPass::Base).instances);
    test_support::assert_images_equal(&on_img, &off_img, "instances: occlusion on vs off");
    test_support::assert_clean(&mut rt);
}
