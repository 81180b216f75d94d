//! The draw-order contract at scale (`mesh_pass::sort`): 160,000 primitives
//! drawn through the threaded, parallel path and through the inline, serial
//! path give byte-identical images and draw lists, whatever order the GPU
//! objects were created in.
//!
//! The scene is made to show any change of order: a ground plane and
//! 160,000 flat-topped cubes whose tops lie exactly in the ground's plane,
//! so ground and cube depths tie everywhere a cube is, and the base pass's
//! `LessEqual` test keeps whichever of the two drew last.

mod common;

use common::*;
use glam::{Mat4, Vec3, Vec4};
use renderer::*;
use rhi_vulkan::Rect;

const SIDE: usize = 400;
const CUBES: usize = SIDE * SIDE;
const W: u32 = 128;
const H: u32 = 96;

/// Renders the scene once. `ground_buffers_first` creates the ground's GPU
/// buffers before the cubes' (handles are numbered in creation order, which
/// parallel proxy creation leaves to chance; before the contract the ground
/// drew first or last by that number).
fn run(mode: RenderThreadMode, parallel: bool, ground_buffers_first: bool) -> (FrameStats, rhi_vulkan::Image) {
    let mut rt = render_thread(mode);
    let flag = if parallel { "1" } else { "0" };
    rt.set_cvar(cvars::PARALLEL_PASS_SETUP, flag).unwrap();
    rt.set_cvar(cvars::PARALLEL_RECORD, flag).unwrap();
    sun(&mut rt, false);
    let ground_material = rt.create_material(Material::colored(Vec4::new(0.5, 0.5, 0.48, 1.0))).unwrap();
    let cube_materials: Vec<MaterialId> = colors(3).into_iter().map(|m| rt.create_material(m).unwrap()).collect();
    let ground = StaticMeshRenderData::new(vec![shapes::plane(1.0)]).unwrap();
    let cube = cube_mesh();
    let (g, c) = (ground.clone(), cube.clone());
    rt.with_context(move |ctx| {
        let order = if ground_buffers_first { [&g, &c] } else { [&c, &g] };
        for mesh in order {
            mesh.init_gpu(&ctx.device).unwrap();
        }
    })
    .unwrap();
    let extent = SIDE as f32;
    rt.add_primitive(
        Box::new(StaticMeshSceneProxy::new(ground, vec![ground_material])),
        Mat4::from_scale(Vec3::new(extent * 1.2, extent * 1.2, 1.0)),
    )
    .unwrap();
    // Half-unit cubes one unit apart, sunk by half their height: tops at z = 0 exactly.
    let cubes = (0..CUBES)
        .map(|i| {
            let (x, y) = ((i % SIDE) as f32 - extent / 2.0, (i / SIDE) as f32 - extent / 2.0);
            let m = Mat4::from_scale_rotation_translation(Vec3::splat(0.5), glam::Quat::IDENTITY, Vec3::new(x, y, -0.25));
            (Box::new(StaticMeshSceneProxy::new(cube.clone(), vec![cube_materials[i % 3]])) as Box<dyn PrimitiveSceneProxy>, m)
        })
        .collect();
    rt.add_primitives(cubes).unwrap();
    let view =
        SceneView::perspective(Vec3::new(0.0, -0.01, extent * 0.75), Vec3::ZERO, Vec3::Y, 1.2, 1.0, extent * 2.0, Rect::from_size(W, H))
            .unwrap();
    rt.render_frame(FrameRequest { family: ViewFamily::new(W, H, vec![view]), read_back: true, execute: true }).unwrap();
    let image = rt.read_back().unwrap().expect("image");
    let stats = rt.last_stats().unwrap().expect("stats");
    assert_clean(&mut rt);
    (stats, image)
}

#[test]
fn serial_and_parallel_paths_draw_160k_primitives_in_the_same_order_whatever_the_handle_numbers() {
    let (a, a_img) = run(RenderThreadMode::Threaded, true, true);
    assert_eq!(a.primitives, CUBES as u64 + 1);
    assert!(a.visible_primitives > CUBES as u64 / 2, "most of the cubes are in view: {}", a.visible_primitives);
    assert_eq!(a.pass(MeshPass::Base).draws, 4, "the ground and one merged draw per cube material");
    let (b, b_img) = run(RenderThreadMode::Inline, false, false);
    assert_eq!(b.draw_list_digest, a.draw_list_digest, "draw lists");
    assert_eq!(b.passes, a.passes);
    assert_images_equal(&b_img, &a_img, "inline serial (cube buffers first) vs threaded parallel (ground buffers first)");
    // Without the contract (ranks by handle index) the two differ in about
    // 10% of the pixels here.
    let centre = a_img.pixel(W / 2, H / 2);
    assert!(luminance(centre) > 60, "lit: {centre:?}");
}
