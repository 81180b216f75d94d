//! Bloom on the real device (validation on, zero messages asserted): with
//! `r.Bloom=1` a bright square's light spreads into its surroundings,
//! fading with distance, and without a threshold no energy is gained or
//! lost (the image's linear sum stays); a threshold above every light
//! leaves the image as it was; wireframe views are shown as drawn.

mod common;

use common::*;
use glam::{Mat4, Vec3, Vec4};
use renderer::*;
use rhi_vulkan::Image;

/// An emissive white square (linear 1.0, no tone curve) on black, seen
/// from above, with `cvars` set; the second of two frames.
fn glowing_square(cvars_set: &[(&str, &str)], wireframe: bool) -> (FrameStats, Image) {
    let mut rt = render_thread(RenderThreadMode::Threaded);
    rt.set_cvar(cvars::TONEMAPPER, "0").unwrap();
    for (name, value) in cvars_set {
        rt.set_cvar(name, value).unwrap();
    }
    let white = rt.create_material(material(Vec4::new(0.0, 0.0, 0.0, 1.0), 0.0, 0.5, 0.0, Vec3::ONE)).unwrap();
    plane_at(&mut rt, white, 1.2, Mat4::IDENTITY);
    let mut view = ortho_down(10.0);
    view.wireframe = wireframe;
    let mut fam = family(vec![view]);
    fam.clear_color = [0.0, 0.0, 0.0, 1.0];
    frame(&mut rt, &fam);
    let out = frame(&mut rt, &fam);
    assert_clean(&mut rt);
    out
}

/// The image's linear radiance, summed over its pixels and channels.
fn energy(img: &Image) -> f32 {
    (0..H).flat_map(|y| (0..W).map(move |x| (x, y))).map(|(x, y)| rgb_linear(img.pixel(x, y)).element_sum()).sum()
}

#[test]
fn bloom_spreads_a_bright_squares_light_around_it_and_conserves_its_energy() {
    let (_, plain) = glowing_square(&[], false);
    let (_, bloomed) = glowing_square(&[(cvars::BLOOM, "1"), (cvars::BLOOM_INTENSITY, "0.5")], false);
    test_support::save_test_output(&bloomed, "bloom-square");
    let (cx, cy) = (W / 2, H / 2);
    // The square covers about 23 pixels across: its edge is 12 from the centre.
    let glow = |img: &Image, d: u32| luminance(img.pixel(cx + d, cy));
    assert_eq!((glow(&plain, 16), glow(&plain, 30)), (0, 0), "without bloom the surroundings are black");
    assert!(
        glow(&bloomed, 16) > glow(&bloomed, 30) && glow(&bloomed, 30) > 0,
        "the glow fades with distance: {} at 16, {} at 30",
        glow(&bloomed, 16),
        glow(&bloomed, 30)
    );
    assert!(luminance(centre(&bloomed)) < luminance(centre(&plain)), "the square gives some of its light to its surroundings");
    let (before, after) = (energy(&plain), energy(&bloomed));
    assert!((after / before - 1.0).abs() < 0.05, "energy is neither gained nor lost: {before} -> {after}");
}

#[test]
fn a_threshold_above_every_light_leaves_the_image_and_wireframe_views_are_shown_as_drawn() {
    let (_, plain) = glowing_square(&[], false);
    let (stats, thresholded) = glowing_square(&[(cvars::BLOOM, "1"), (cvars::BLOOM_THRESHOLD, "2")], false);
    assert_images_equal(&plain, &thresholded, "no light above the threshold: nothing blooms");
    assert!(stats.timings.gpu_post >= stats.timings.gpu_tonemap);
    let (_, wire) = glowing_square(&[], true);
    let (_, wire_bloomed) = glowing_square(&[(cvars::BLOOM, "1"), (cvars::BLOOM_INTENSITY, "0.5")], true);
    assert_images_equal(&wire, &wire_bloomed, "a wireframe view is shown as drawn");
}
