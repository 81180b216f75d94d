//! Debug lines on the real device with validation on: a view's
//! `show_bounds` draws each visible primitive's box and sphere, lines the
//! game sends are drawn for one frame, depth-tested against the scene; a
//! frame without either is the same image as before.

mod common;

use common::*;
use glam::{Mat4, Vec3, Vec4};
use renderer::debug_lines::BOUNDS_SPHERE_COLOR;
use renderer::*;

/// Where world point `p` lands in the view's pixels.
fn pixel_of(view: &SceneView, p: Vec3) -> (u32, u32) {
    let clip = view.view_proj() * p.extend(1.0);
    let ndc = clip.truncate() / clip.w;
    let r = view.viewport;
    (((ndc.x * 0.5 + 0.5) * r.width as f32) as u32, ((ndc.y * 0.5 + 0.5) * r.height as f32) as u32)
}

/// Whether a pixel near `(x, y)` (within 1) is mostly blue-green, as the
/// sphere's colour comes out after tone mapping.
fn cyan_near(image: &rhi_vulkan::Image, (x, y): (u32, u32)) -> bool {
    (x.saturating_sub(1)..=x + 1).flat_map(|x| (y.saturating_sub(1)..=y + 1).map(move |y| (x, y))).any(|(x, y)| {
        let [r, g, b, _] = image.pixel(x.min(W - 1), y.min(H - 1));
        b > 100 && g > 80 && r < 60
    })
}

#[test]
fn show_bounds_draws_boxes_and_spheres_and_game_lines_are_drawn_for_one_frame() {
    let mut rt = render_thread(RenderThreadMode::Threaded);
    rt.set_cvar(cvars::TONEMAPPER, "0").unwrap();
    let grey = rt.create_material(Material::colored(Vec4::new(0.3, 0.3, 0.3, 1.0))).unwrap();
    rt.add_primitive(Box::new(StaticMeshSceneProxy::new(cube_mesh(), vec![grey])), Mat4::from_scale(Vec3::splat(2.0))).unwrap();
    sun(&mut rt, false);
    let view = top_view(8.0);
    let (_, plain) = frame(&mut rt, &family(vec![view.clone()]));
    // The sphere's circle in the cube's mid plane reaches past the cube:
    // its rightmost point lies on the background.
    let radius = Vec3::splat(1.0).length();
    let east = pixel_of(&view, Vec3::new(radius, 0.0, 0.0));
    assert!(!cyan_near(&plain, east), "nothing there without bounds");
    let shown = SceneView { show_bounds: true, ..view.clone() };
    let (_, bounds) = frame(&mut rt, &family(vec![shown.clone()]));
    test_support::save_test_output(&bounds, "debug_lines_bounds");
    assert!(cyan_near(&bounds, east), "the sphere's circle at {east:?}: {:?}", bounds.pixel(east.0, east.1));
    assert_ne!(BOUNDS_SPHERE_COLOR[2], 0);
    // A view without the flag in the same family is not touched.
    let (_, again) = frame(&mut rt, &family(vec![view.clone()]));
    assert_images_equal(&plain, &again, "show_bounds off: the same image");
    // Game lines: a red line across the view above the cube is drawn; one
    // under the cube is hidden where the cube covers it; the next frame
    // has neither.
    let red = [255, 0, 0, 255];
    rt.draw_debug_lines(vec![
        DebugLine::new(Vec3::new(-3.0, 2.0, 3.0), Vec3::new(3.0, 2.0, 3.0), red),
        DebugLine::new(Vec3::new(-3.0, 0.0, -2.0), Vec3::new(3.0, 0.0, -2.0), red),
        DebugLine::new(Vec3::NAN, Vec3::ZERO, red),
    ])
    .unwrap();
    let (_, lined) = frame(&mut rt, &family(vec![view.clone()]));
    let is_red = |image: &rhi_vulkan::Image, p: (u32, u32)| {
        let [r, g, b, _] = image.pixel(p.0, p.1);
        r > 150 && g < 60 && b < 60
    };
    test_support::save_test_output(&lined, "debug_lines_game");
    let above = pixel_of(&view, Vec3::new(-2.5, 2.0, 3.0));
    assert!(is_red(&lined, above) || is_red(&lined, (above.0, above.1 + 1)) || is_red(&lined, (above.0, above.1 - 1)), "the line above");
    let under_cube = pixel_of(&view, Vec3::new(0.0, 0.0, -2.0));
    assert!(!is_red(&lined, under_cube), "the line under the cube is hidden by it");
    let beside = pixel_of(&view, Vec3::new(2.7, 0.0, -2.0));
    assert!((0..3).any(|d| is_red(&lined, (beside.0, beside.1 + d - 1))), "the line under, beside the cube, is seen");
    let (_, next) = frame(&mut rt, &family(vec![view]));
    assert_images_equal(&plain, &next, "game lines last one frame");
    assert_clean(&mut rt);
}
