//! The collision view (UE's `ShowFlags.Collision`): `World::set_show_collision`
//! draws every collision body's cooked shapes as lines over the scene, on
//! the real device with validation on.

#![cfg(feature = "collision")]

use engine_core::*;
use glam::Vec3;
use renderer::{FrameRequest, RenderThreadMode, SceneView, ViewFamily};
use rhi_vulkan::Rect;
use test_support::render_thread;

const W: u32 = 160;
const H: u32 = 120;

/// End of frame, one frame rendered from above, its image.
fn frame(w: &mut World) -> rhi_vulkan::Image {
    w.send_all_end_of_frame_updates().unwrap();
    let view = SceneView::perspective(Vec3::new(0.0, -0.01, 6.0), Vec3::ZERO, Vec3::Y, 1.0, 0.1, 100.0, Rect::from_size(W, H)).unwrap();
    let rt = w.render_thread().unwrap();
    rt.render_frame(FrameRequest { family: ViewFamily::new(W, H, vec![view]), read_back: true, execute: true }).unwrap();
    rt.read_back().unwrap().unwrap()
}

fn green_pixels(image: &rhi_vulkan::Image) -> usize {
    image.rgba8.chunks(4).filter(|p| p[1] > 120 && p[0] < p[1] / 2 && p[2] < p[1]).count()
}

#[test]
fn the_collision_view_draws_every_bodys_shapes_as_lines() {
    let mut w = World::new(Some(render_thread(RenderThreadMode::Inline)));
    let at = Transform::new(Vec3::new(1.0, 0.0, 0.0), glam::Quat::from_rotation_z(0.5), Vec3::splat(2.0));
    w.spawn_actor("box", Box::new(StaticMeshComponent::new(StaticMesh::cube())), at).unwrap();
    let plain = frame(&mut w);
    assert!(!w.show_collision() && w.collision_lines().len() > 12, "the cube's collision has its edges");
    // Every line lies on the box's surface: in the box's own frame one
    // coordinate is at ±1 (half of the scaled unit cube).
    let to_local = at.to_mat4().inverse();
    for l in w.collision_lines() {
        for p in [l.start, l.end] {
            let q = to_local.transform_point3(p);
            assert!(q.abs().max_element() > 0.499 && q.abs().max_element() < 0.501, "{p} -> {q}");
        }
        assert_eq!(l.color, COLLISION_VIEW_COLOR);
    }
    w.set_show_collision(true);
    let shown = frame(&mut w);
    test_support::save_test_output(&shown, "collision_view");
    let (before, after) = (green_pixels(&plain), green_pixels(&shown));
    assert!(after > before + 100, "the box's edges drawn in green: {before} -> {after} green pixels");
    w.set_show_collision(false);
    let off = frame(&mut w);
    test_support::assert_images_equal(&plain, &off, "the collision view off: the same image");
    test_support::assert_clean(w.render_thread().unwrap());
}
