//! Anti-aliasing on the real device (validation on, zero messages
//! asserted): FXAA (`r.AntiAliasingMethod=1`) softens a tilted edge's
//! staircase, leaves flat areas exactly as they were, is deterministic,
//! and passes wireframe views through as drawn; MSAA does the same for
//! triangle edges and, by alpha to coverage, for masked cut-outs.

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

#[test]
fn msaa_gives_a_tilted_edge_intermediate_values_and_leaves_the_interior_exact() {
    let (none_stats, none) = tilted_square("0", false);
    let (msaa_stats, msaa) = tilted_square("3", false);
    test_support::save_test_output(&msaa, "msaa-tilted-square");
    // lavapipe has 4 samples for RGBA16F and D32 (the default count).
    assert_eq!((none_stats.image.aa, msaa_stats.image.aa), ("none", "msaa4"));
    let background = none.pixel(0, 0);
    let white = [255, 255, 255, 255];
    let (mut edge, mut blended, mut changed_inside) = (0, 0, 0);
    for y in 1..H - 1 {
        for x in 1..W - 1 {
            let (a, b) = (none.pixel(x, y), msaa.pixel(x, y));
            // Inside the square or the background (a 3x3 neighbourhood of
            // one value without MSAA): exactly as without it.
            let flat = (-1i32..=1).all(|dy| (-1i32..=1).all(|dx| none.pixel((x as i32 + dx) as u32, (y as i32 + dy) as u32) == a));
            changed_inside += usize::from(flat && a != b);
            if !flat {
                edge += 1;
                blended += usize::from(b != background && b != white);
            }
        }
    }
    assert_eq!(changed_inside, 0, "MSAA changes only pixels an edge crosses");
    // Most edge pixels are partly covered: 4 samples give 3 intermediate levels.
    // (The 3x3 band around the edge is about three pixels wide; the one
    // the edge crosses is partly covered.)
    assert!(blended > 100 && blended * 4 > edge, "{blended} of {edge} edge pixels take intermediate values");
}

/// A masked disc (opacity 1 inside radius 0.4 of the plane's UV, falling
/// off linearly past it), white on the clear colour, seen from above.
fn masked_disc(aa: &str) -> Image {
    let mut rt = render_thread(RenderThreadMode::Threaded);
    rt.set_cvar(cvars::TONEMAPPER, "0").unwrap();
    rt.set_cvar(cvars::ANTI_ALIASING_METHOD, aa).unwrap();
    let disc = "fn material_main(i: MaterialInput) -> MaterialOutput {\n    var o = default_material(i);\n    o.base_color = vec3<f32>(0.0);\n    o.emissive = vec3<f32>(1.0);\n    o.opacity = clamp(1.0 - (length(i.uv0 - vec2<f32>(0.5)) - 0.4) * 8.0, 0.0, 1.0);\n    return o;\n}\n";
    let masked = rt.create_material(Material::with_shader("disc.wgsl", disc).with_blend(BlendMode::Masked)).unwrap();
    plane_at(&mut rt, masked, 6.0, Mat4::IDENTITY);
    let fam = family(vec![ortho_down(10.0)]);
    frame(&mut rt, &fam);
    let (_, img) = frame(&mut rt, &fam);
    assert_clean(&mut rt);
    img
}

#[test]
fn msaa_anti_aliases_a_masked_materials_cut_out_by_alpha_to_coverage() {
    let none = masked_disc("0");
    let msaa = masked_disc("3");
    test_support::save_test_output(&msaa, "msaa-alpha-to-coverage");
    let background = none.pixel(0, 0);
    let white = [255, 255, 255, 255];
    assert_eq!(none.pixel(W / 2, H / 2), white);
    let (mut edge, mut blended, mut changed_flat) = (0, 0, 0);
    for y in 1..H - 1 {
        for x in 1..W - 1 {
            let (a, b) = (none.pixel(x, y), msaa.pixel(x, y));
            let flat = (-1i32..=1).all(|dy| (-1i32..=1).all(|dx| none.pixel((x as i32 + dx) as u32, (y as i32 + dy) as u32) == a));
            changed_flat += usize::from(flat && a != b);
            if !flat {
                edge += 1;
                blended += usize::from(b != background && b != white);
            }
        }
    }
    assert_eq!(changed_flat, 0, "inside and outside the disc as without MSAA");
    // Without alpha to coverage a discard keeps or drops whole pixels:
    // MSAA alone would leave the cut-out's edge stepped.
    assert!(blended > 40 && blended * 4 > edge, "{blended} of {edge} edge pixels of the cut-out take intermediate values");
}

#[test]
fn msaa_is_the_same_serial_and_parallel_and_with_one_or_three_frames_in_flight() {
    let render = |parallel: &str, in_flight: u32| {
        let mut rt = render_thread_in_flight(RenderThreadMode::Threaded, 3, in_flight);
        for (name, value) in
            [(cvars::ANTI_ALIASING_METHOD, "3"), (cvars::PARALLEL_RECORD, parallel), (cvars::PARALLEL_PASS_SETUP, parallel)]
        {
            rt.set_cvar(name, value).unwrap();
        }
        let materials: Vec<MaterialId> = colors(4).into_iter().map(|m| rt.create_material(m).unwrap()).collect();
        cube_grid(&mut rt, 64, &materials, 1.5);
        sun(&mut rt, true);
        let fam = family(vec![top_view(14.0)]);
        for _ in 0..4 {
            rt.render_frame(FrameRequest { family: fam.clone(), read_back: false, execute: true }).unwrap();
        }
        let (stats, img) = frame(&mut rt, &fam);
        assert_eq!(stats.image.aa, "msaa4");
        assert_clean(&mut rt);
        img
    };
    let reference = render("1", 1);
    assert_images_equal(&reference, &render("0", 1), "MSAA serial vs parallel");
    assert_images_equal(&reference, &render("1", 3), "MSAA with 1 vs 3 frames in flight");
}
