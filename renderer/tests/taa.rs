//! TAA and motion vectors on the real device (validation on, zero
//! messages asserted): the velocity target holds a moving primitive's
//! screen motion (and nothing for one that stopped or teleported), TAA
//! anti-aliases a tilted edge and converges on a still scene, its history
//! starts again on a camera cut and a resize, and the images do not
//! depend on threads or frames in flight.

mod common;

use common::*;
use glam::{Mat4, Quat, Vec2, Vec3, Vec4};
use renderer::*;
use rhi_vulkan::{Image, Rect};

const STATE: ViewStateId = ViewStateId(7);

/// The tilted white square of the anti-aliasing tests, seen from above
/// by a view with a state, with `aa` (`r.AntiAliasingMethod`).
fn square_scene(aa: &str) -> RenderThread {
    let mut rt = render_thread(RenderThreadMode::Threaded);
    rt.set_cvar(cvars::TONEMAPPER, "0").unwrap();
    rt.set_cvar(cvars::ANTI_ALIASING_METHOD, aa).unwrap();
    let white = rt.create_material(material(Vec4::new(0.0, 0.0, 0.0, 1.0), 0.0, 0.5, 0.0, Vec3::ONE)).unwrap();
    plane_at(&mut rt, white, 4.0, Mat4::from_quat(Quat::from_rotation_z(0.35)));
    rt
}

fn view() -> SceneView {
    ortho_down(10.0).with_state(STATE)
}

/// The velocity target's texels (RG16F) as (x, y) motions in UV units.
fn velocity(rt: &mut RenderThread) -> Vec<Vec2> {
    let bytes = rt
        .with_context(|ctx| {
            let (texture, state) = ctx.renderer.velocity_target().expect("a TAA frame made the velocity target");
            ctx.device.read_texture_texels(texture, state)
        })
        .unwrap()
        .unwrap();
    let half = |b: &[u8]| half::f16::from_le_bytes([b[0], b[1]]).to_f32();
    bytes.chunks_exact(4).map(|t| Vec2::new(half(&t[0..2]), half(&t[2..4]))).collect()
}

#[test]
fn taa_anti_aliases_a_tilted_edge_leaves_flat_areas_exact_and_converges() {
    let fam = family(vec![view()]);
    let mut plain = square_scene("0");
    let (_, none) = frame(&mut plain, &fam);
    let mut rt = square_scene("2");
    let mut images: Vec<Image> = Vec::new();
    // The history's contraction per 8-frame cycle is 0.9^8: ~80 frames
    // take an edge pixel's orbit to within a half-float step of its limit.
    for _ in 0..96 {
        images.push(frame(&mut rt, &fam).1);
    }
    let stats = rt.last_stats().unwrap().unwrap();
    assert_eq!(stats.image.aa, "taa");
    let taa = &images[95];
    test_support::save_test_output(taa, "taa-tilted-square");
    assert_images_equal(&images[87], &images[95], "a still scene converges: the image repeats with the 8-frame jitter cycle");
    let background = none.pixel(0, 0);
    let white = [255, 255, 255, 255];
    let (mut blended, mut changed_flat) = (0, 0);
    for y in 2..H - 2 {
        for x in 2..W - 2 {
            let (a, b) = (none.pixel(x, y), taa.pixel(x, y));
            let flat = (-2i32..=2).all(|dy| (-2i32..=2).all(|dx| none.pixel((x as i32 + dx) as u32, (y as i32 + dy) as u32) == a));
            changed_flat += usize::from(flat && a != b);
            blended += usize::from(!flat && b != background && b != white);
        }
    }
    assert_eq!(changed_flat, 0, "flat areas are exactly as without anti-aliasing");
    assert!(blended > 100, "the edge's pixels take intermediate values: {blended}");
    // Consecutive converged frames differ only at the edge, and little.
    let most = images[94].rgba8.iter().zip(&images[95].rgba8).map(|(a, b)| a.abs_diff(*b)).max().unwrap();
    assert!(most <= 48, "the converged edge flickers by at most {most}/255 between frames");
    assert_clean(&mut rt);
    assert_clean(&mut plain);
}

#[test]
fn motion_vectors_are_a_moving_primitives_screen_motion_and_stop_with_it() {
    let mut rt = square_scene("2");
    let fam = family(vec![view()]);
    let blue = rt.create_material(material(Vec4::new(0.1, 0.2, 1.0, 1.0), 0.0, 0.5, 0.0, Vec3::ZERO)).unwrap();
    let cube = plane_at(&mut rt, blue, 1.0, Mat4::from_translation(Vec3::new(-3.0, 1.0, 1.0)));
    frame(&mut rt, &fam);
    // Moved 0.5 units along +X and 0.25 along +Y between two frames.
    let step = Vec3::new(0.5, 0.25, 0.0);
    rt.update_primitive_transform(cube, Mat4::from_translation(Vec3::new(-3.0, 1.0, 1.0) + step)).unwrap();
    frame(&mut rt, &fam);
    let v = view();
    let screen = |p: Vec3| {
        let c = v.view_proj() * p.extend(1.0);
        ((c.truncate().truncate() / c.w) * 0.5 + 0.5) * Vec2::new(W as f32, H as f32)
    };
    let centre = screen(Vec3::new(-3.0, 1.0, 1.0) + step);
    let expected = (centre - screen(Vec3::new(-3.0, 1.0, 1.0))) / Vec2::new(W as f32, H as f32);
    let texels = velocity(&mut rt);
    let at = |p: Vec2| texels[p.y as usize * W as usize + p.x as usize];
    assert!((at(centre) - expected).abs().max_element() < 1e-3, "moving: {} vs {expected}", at(centre));
    assert!(expected.length() > 0.02, "the motion is visible: {expected}");
    // The square under it did not move; nor did the camera.
    assert_eq!(at(screen(Vec3::new(1.0, -0.5, 0.0))), Vec2::ZERO, "a still primitive has no motion");
    // A frame later, without a move: no motion.
    frame(&mut rt, &fam);
    assert_eq!(at_frame(&mut rt, centre), Vec2::ZERO, "a primitive that stopped has no motion");
    // A teleport (previous = the new transform) has none either.
    let far = Mat4::from_translation(Vec3::new(2.0, 1.5, 1.0));
    rt.update_primitive_transform(cube, far).unwrap();
    rt.set_primitive_previous_transform(cube, far).unwrap();
    frame(&mut rt, &fam);
    assert_eq!(at_frame(&mut rt, screen(Vec3::new(2.0, 1.5, 1.0))), Vec2::ZERO, "a teleport does not smear");
    assert_clean(&mut rt);
}

fn at_frame(rt: &mut RenderThread, p: Vec2) -> Vec2 {
    velocity(rt)[p.y as usize * W as usize + p.x as usize]
}

#[test]
fn the_camera_moving_gives_the_background_and_surfaces_its_motion_and_a_cut_resets_the_history() {
    // A camera panning along +X over the square: TAA follows it (no
    // exception, validation clean); a cut to another place shows that
    // place exactly as a fresh renderer's first frame there.
    let mut rt = square_scene("2");
    let at = |x: f32| {
        SceneView::orthographic(
            Vec3::new(x, 0.0, 10.0),
            Vec3::new(x, 0.0, 0.0),
            Vec3::Y,
            10.0,
            10.0 * H as f32 / W as f32,
            0.1,
            50.0,
            Rect::from_size(W, H),
        )
        .unwrap()
        .with_state(STATE)
    };
    for i in 0..6 {
        frame(&mut rt, &family(vec![at(i as f32 * 0.1)]));
    }
    let texels = velocity(&mut rt);
    let expected = -0.1 / 10.0;
    let centre = texels[(H / 2 * W + W / 2) as usize];
    assert!((centre.x - expected).abs() < 1e-3 && centre.y.abs() < 1e-3, "the camera's motion on the square: {centre}");
    let (_, cut) = frame(&mut rt, &family(vec![at(3.0).with_camera_cut()]));
    let mut fresh = square_scene("2");
    let (_, first) = frame(&mut fresh, &family(vec![at(3.0)]));
    assert_images_equal(&cut, &first, "after a camera cut nothing of the old image is left");
    assert_clean(&mut rt);
    assert_clean(&mut fresh);
}

#[test]
fn a_resize_resets_the_history() {
    let mut rt = square_scene("2");
    for _ in 0..5 {
        frame(&mut rt, &family(vec![view()]));
    }
    let small = |w: u32, h: u32| ViewFamily::new(w, h, vec![SceneView { viewport: Rect::from_size(w, h), ..view() }]);
    let (_, resized) = frame(&mut rt, &small(W / 2, H / 2));
    let mut fresh = square_scene("2");
    let (_, first) = frame(&mut fresh, &small(W / 2, H / 2));
    assert_images_equal(&resized, &first, "a new size starts the history again");
    assert_clean(&mut rt);
}

#[test]
fn taa_and_fxaa_are_the_same_serial_and_parallel_and_with_one_or_three_frames_in_flight() {
    // With the rest of the image's passes on too: bloom, auto exposure;
    // and the same for FXAA.
    let render = |aa: &str, parallel: &str, in_flight: u32| {
        let mut rt = render_thread_in_flight(RenderThreadMode::Threaded, 3, in_flight);
        for (name, value) in [
            (cvars::ANTI_ALIASING_METHOD, aa),
            (cvars::PARALLEL_RECORD, parallel),
            (cvars::PARALLEL_PASS_SETUP, parallel),
            (cvars::BLOOM, "1"),
            (cvars::AUTO_EXPOSURE, "1"),
        ] {
            rt.set_cvar(name, value).unwrap();
        }
        let materials: Vec<MaterialId> = colors(4).into_iter().map(|m| rt.create_material(m).unwrap()).collect();
        let cubes = cube_grid(&mut rt, 64, &materials, 1.5);
        sun(&mut rt, true);
        let fam = family(vec![top_view(14.0).with_state(STATE)]);
        for i in 0..6 {
            // One cube moves every frame: motion vectors and history in play.
            let m = Mat4::from_translation(Vec3::new(i as f32 * 0.2, 0.0, 1.0));
            rt.update_primitive_transform(cubes[0], m).unwrap();
            rt.render_frame(FrameRequest { family: fam.clone(), read_back: false, execute: true }).unwrap();
        }
        let (stats, img) = frame(&mut rt, &fam);
        assert_eq!(stats.image.aa, if aa == "2" { "taa" } else { "fxaa" });
        assert!(stats.image.bloom && stats.image.auto_exposure);
        assert_clean(&mut rt);
        img
    };
    for (aa, name) in [("2", "TAA"), ("1", "FXAA")] {
        let reference = render(aa, "1", 1);
        if aa == "2" {
            test_support::save_test_output(&reference, "taa-cubes");
        }
        assert_images_equal(&reference, &render(aa, "0", 1), &format!("{name} serial vs parallel"));
        assert_images_equal(&reference, &render(aa, "1", 3), &format!("{name} with 1 vs 3 frames in flight"));
    }
}
