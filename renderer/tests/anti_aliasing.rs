//! Anti-aliasing on the real device (validation on, zero messages
//! asserted): FXAA (`r.AntiAliasingMethod=1`) softens a tilted edge's
//! staircase, leaves flat areas exactly as they were, is deterministic,
//! and passes wireframe views through as drawn.

mod common;

use common::*;
use glam::{Mat4, Quat, Vec3, Vec4};
use renderer::*;
use rhi_vulkan::Image;

/// A white square tilted by 0.35 rad on the clear colour, seen from above,
/// without a tone curve (white is 255, the background the clear colour).
fn tilted_square(aa: &str, wireframe: bool) -> (FrameStats, Image) {
    let mut rt = render_thread(RenderThreadMode::Threaded);
    rt.set_cvar(cvars::TONEMAPPER, "0").unwrap();
    rt.set_cvar(cvars::ANTI_ALIASING_METHOD, aa).unwrap();
    let white = rt.create_material(material(Vec4::new(0.0, 0.0, 0.0, 1.0), 0.0, 0.5, 0.0, Vec3::ONE)).unwrap();
    plane_at(&mut rt, white, 4.0, Mat4::from_quat(Quat::from_rotation_z(0.35)));
    let mut view = ortho_down(10.0);
    view.wireframe = wireframe;
    let fam = family(vec![view]);
    frame(&mut rt, &fam);
    let (stats, img) = frame(&mut rt, &fam);
    let (_, again) = frame(&mut rt, &fam);
    assert_images_equal(&img, &again, "a still scene gives the same image frame after frame");
    assert_clean(&mut rt);
    (stats, img)
}

#[test]
fn fxaa_blends_a_tilted_edge_and_leaves_flat_areas_exact() {
    let (none_stats, none) = tilted_square("0", false);
    let (fxaa_stats, fxaa) = tilted_square("1", false);
    test_support::save_test_output(&fxaa, "fxaa-tilted-square");
    assert_eq!((none_stats.image.aa, fxaa_stats.image.aa), ("none", "fxaa"));
    let background = none.pixel(0, 0);
    let white = none.pixel(W / 2, H / 2);
    assert_eq!(white, [255, 255, 255, 255]);
    let (mut stairs, mut blended, mut changed_far) = (0, 0, 0);
    for y in 2..H - 2 {
        for x in 2..W - 2 {
            let (a, b) = (none.pixel(x, y), fxaa.pixel(x, y));
            stairs += usize::from(a != background && a != white);
            blended += usize::from(b != background && b != white);
            // Away from the square's edge (a flat 5x5 neighbourhood),
            // FXAA changes nothing.
            let flat = (-2i32..=2).all(|dy| (-2i32..=2).all(|dx| none.pixel((x as i32 + dx) as u32, (y as i32 + dy) as u32) == a));
            changed_far += usize::from(flat && a != b);
        }
    }
    assert_eq!(stairs, 0, "without anti-aliasing every pixel is the square or the background");
    assert!(blended > 100, "FXAA gives the edge's pixels intermediate values: {blended}");
    assert_eq!(changed_far, 0, "flat areas are left exactly as they were");
}

#[test]
fn fxaa_passes_a_wireframe_view_through_as_drawn() {
    let (_, none) = tilted_square("0", true);
    let (_, fxaa) = tilted_square("1", true);
    assert_images_equal(&none, &fxaa, "a wireframe view is shown as drawn");
}
