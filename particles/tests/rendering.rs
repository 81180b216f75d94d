//! The rendering half on the real device (lavapipe here), validation on:
//! passes, draws and instances per emitter (systems driven as
//! `ParticleSystemComponent`s in an engine-core `World`), back-to-front
//! blending, sprite alignment, additive and opaque emitters, sub-UV sprite
//! sheets (hand-placed snapshots given to the proxy).

mod gpu;

use std::sync::Arc;

use engine_core::{ComponentId, Transform, World};
use glam::{Vec2, Vec3, Vec4};
use gpu::*;
use particles::*;
use renderer::MeshPass;

const RED: Vec4 = Vec4::new(1.0, 0.0, 0.0, 0.6);
const BLUE: Vec4 = Vec4::new(0.0, 0.0, 1.0, 0.6);

/// A burst of `count` particles that live long, near the origin, with
/// some drift so that ticking moves them.
fn burst_emitter_json(name: &str, material: &str, blend: &str, count: u32, rate: f32) -> String {
    format!(
        r#"{{"name": "{name}",
            "required": {{"material": "{material}", "blend_mode": "{blend}",
                         "screen_alignment": "facing_camera", "sort_mode": "distance_to_view",
                         "max_particles": 64}},
            "modules": [
              {{"spawn": {{"rate": {rate}, "bursts": [{{"time": 0.0, "count": {count}}}]}}}},
              {{"lifetime": {{"constant": 100.0}}}},
              {{"initial_location": {{"box": {{"min": [-1.5, -0.5, -1.0], "max": [1.5, 0.5, 1.0]}}}}}},
              {{"initial_velocity": {{"box": {{"min": [-0.1, -0.1, -0.1], "max": [0.1, 0.1, 0.1]}}}}}},
              {{"initial_size": {{"constant": [1.0, 1.0]}}}},
              {{"initial_color": {{"constant": [1.0, 0.6, 0.2, 0.8]}}}}
            ]}}"#
    )
}

fn system(emitters: &[String]) -> Arc<ParticleSystem> {
    let json = format!(r#"{{"emitters": [{}]}}"#, emitters.join(","));
    Arc::new(ParticleSystem::from_json_str(&json).unwrap())
}

/// A world on a render thread of its own, with `system` as a component
/// (materials for its emitters' names) whose instance has been ticked
/// `ticks` sixtieths of a second; the end-of-frame update that creates its
/// proxy has been sent.
fn fountain_world(system: &Arc<ParticleSystem>, seed: u64, ticks: u32) -> (World, ComponentId) {
    let mut rt = render_thread(RenderThreadMode::Threaded);
    let materials = ParticleMaterials::for_system(&mut rt, system).unwrap();
    let mut instance = ParticleSystemInstance::new(system.clone(), seed).unwrap();
    for _ in 0..ticks {
        instance.tick(1.0 / 60.0);
    }
    let mut world = World::new(Some(rt));
    let component = ParticleSystemComponent::from_instance(instance, materials);
    let (_, id) = world.spawn_actor("particles", Box::new(component), Transform::IDENTITY).unwrap();
    let eof = world.send_all_end_of_frame_updates().unwrap();
    assert_eq!(eof.proxies_created, 1);
    (world, id)
}

fn rt(world: &mut World) -> &mut renderer::RenderThread {
    world.render_thread().expect("a world with a render thread")
}

fn live_particles(world: &World, id: ComponentId) -> usize {
    world.component::<ParticleSystemComponent>(id).unwrap().instance().live_particles()
}

#[test]
fn translucent_emitter_draws_once_in_translucency_with_one_instance_per_particle() {
    let system = system(&[burst_emitter_json("puff", "M_Puff", "translucent", 5, 30.0)]);
    let (mut world, id) = fountain_world(&system, 3, 1);
    let (stats, img) = frame(rt(&mut world));
    assert_eq!(stats.pass(MeshPass::DepthPrepass).mesh_draw_commands, 0);
    assert_eq!(stats.pass(MeshPass::ShadowDepth).mesh_draw_commands, 0);
    assert_eq!(stats.pass(MeshPass::Base).mesh_draw_commands, 0);
    let t = stats.pass(MeshPass::Translucency);
    assert_eq!(t.draws, 1);
    assert_eq!(t.instances, live_particles(&world, id) as u64);
    assert!(lit_pixels(&img) > 50, "sprites visible: {} lit pixels", lit_pixels(&img));

    // Later frames follow the snapshots the world sends.
    for _ in 0..20 {
        world.tick(1.0 / 60.0);
    }
    assert!(live_particles(&world, id) > 5);
    let eof = world.send_all_end_of_frame_updates().unwrap();
    assert_eq!((eof.proxies_created, eof.dynamic_data_sent, eof.transforms_sent), (0, 1, 1), "the snapshot and its bounds");
    let (stats, _) = frame(rt(&mut world));
    let t = stats.pass(MeshPass::Translucency);
    assert_eq!((t.draws, t.instances), (1, live_particles(&world, id) as u64));
    assert_clean(rt(&mut world));
}

#[test]
fn two_emitters_give_two_draws_with_their_own_instances() {
    let system = system(&[burst_emitter_json("a", "M_A", "translucent", 3, 0.0), burst_emitter_json("b", "M_B", "additive", 7, 0.0)]);
    let (mut world, _) = fountain_world(&system, 5, 1);
    let (stats, _) = frame(rt(&mut world));
    let t = stats.pass(MeshPass::Translucency);
    assert_eq!(t.mesh_draw_commands, 2);
    assert_eq!(t.draws, 2, "one instanced draw per emitter, never merged");
    assert_eq!(t.instances, 10);
    assert_eq!(stats.pass(MeshPass::ShadowDepth).mesh_draw_commands, 0);
    assert_clean(rt(&mut world));
}

#[test]
fn an_empty_system_draws_nothing() {
    // Not ticked yet: the burst has not fired.
    let system = system(&[burst_emitter_json("a", "M_A", "translucent", 1, 0.0)]);
    let (mut world, id) = fountain_world(&system, 5, 0);
    assert_eq!(live_particles(&world, id), 0);
    let (stats, img) = frame(rt(&mut world));
    assert_eq!(stats.pass(MeshPass::Translucency).draws, 0);
    assert_eq!(lit_pixels(&img), 0);
    assert_clean(rt(&mut world));
}

/// Two overlapping translucent sprites of one emitter, red nearer the
/// camera when `red_near`, stored far-first in one case and near-first in
/// the other, so storage order alone is right for only one of them.
fn overlapping(red_near: bool, sort: SortMode) -> [u8; 4] {
    let mut rt = render_thread(RenderThreadMode::Threaded);
    let (near_color, far_color) = if red_near { (RED, BLUE) } else { (BLUE, RED) };
    let near = P::at(Vec3::new(0.0, -1.0, 0.0), 2.0, near_color);
    let far = P::at(Vec3::new(0.0, 1.0, 0.0), 2.0, far_color);
    let stored = if red_near { [far, near] } else { [near, far] };
    let e = emitter_data("M", BlendMode::Translucent, ScreenAlignment::FacingCamera, sort, &stored);
    add_snapshot(&mut rt, snapshot(vec![e]));
    let (stats, img) = frame(&mut rt);
    assert_eq!(stats.pass(MeshPass::Translucency).instances, 2);
    assert_clean(&mut rt);
    let (x, y) = project(Vec3::ZERO);
    img.pixel(x, y)
}

#[test]
fn translucent_particles_blend_back_to_front() {
    let red_on_top = overlapping(true, SortMode::DistanceToView);
    let blue_on_top = overlapping(false, SortMode::DistanceToView);
    assert!(red_on_top[0] > red_on_top[2] + 40, "red over blue: {red_on_top:?}");
    assert!(blue_on_top[2] > blue_on_top[0] + 40, "blue over red: {blue_on_top:?}");
    // Without sorting, storage order wins: the near-first case comes out
    // wrong (far sprite on top), which is what the sort fixes.
    let unsorted = overlapping(false, SortMode::None);
    assert!(unsorted[0] > unsorted[2] + 40, "storage order, red (far) drawn last: {unsorted:?}");
}

/// Lit pixels in a horizontal and a vertical line through the origin.
fn cross_extent(img: &rhi_vulkan::Image) -> (usize, usize) {
    let (cx, cy) = project(Vec3::ZERO);
    let lit = |x: u32, y: u32| luminance(img.pixel(x, y)) > 200;
    ((0..W).filter(|&x| lit(x, cy)).count(), (0..H).filter(|&y| lit(cx, y)).count())
}

fn single_sprite(alignment: ScreenAlignment, p: P) -> (usize, usize) {
    let mut rt = render_thread(RenderThreadMode::Threaded);
    let e = emitter_data("M", BlendMode::Translucent, alignment, SortMode::None, &[p]);
    add_snapshot(&mut rt, snapshot(vec![e]));
    let (stats, img) = frame(&mut rt);
    assert_eq!(stats.pass(MeshPass::Translucency).draws, 1);
    assert_clean(&mut rt);
    cross_extent(&img)
}

#[test]
fn velocity_aligned_sprites_stretch_along_the_screen_velocity() {
    let white = Vec4::ONE;
    // Thin and long: 0.4 wide, 4 tall (about 6 × 56 pixels).
    let long = P { size: Vec2::new(0.4, 4.0), ..P::at(Vec3::ZERO, 1.0, white) };
    let (w, h) = single_sprite(ScreenAlignment::FacingCamera, long);
    assert!((40..80).contains(&h) && w < 12, "camera facing: upright, {w} × {h}");
    // Moving along +X (and towards the camera, which projection removes):
    // the long axis follows the motion on screen.
    let moving = P { old: Vec3::new(-0.5, 0.3, 0.0), ..long };
    let (w, h) = single_sprite(ScreenAlignment::VelocityAligned, moving);
    assert!((40..80).contains(&w) && h < 12, "velocity aligned: horizontal, {w} × {h}");
    // The same particle, camera facing and rotated a quarter turn, lies
    // horizontal too.
    let turned = P { rotation: std::f32::consts::FRAC_PI_2, ..long };
    let (w, h) = single_sprite(ScreenAlignment::FacingCamera, turned);
    assert!((40..80).contains(&w) && h < 12, "rotated: horizontal, {w} × {h}");
    // At rest, velocity alignment falls back to facing the camera.
    let (w, h) = single_sprite(ScreenAlignment::VelocityAligned, long);
    assert!((40..80).contains(&h) && w < 12, "at rest: upright, {w} × {h}");
}

/// A large grey opaque sprite behind, optionally an additive one in front.
fn background_and_additive(with_additive: bool) -> (renderer::FrameStats, [u8; 4]) {
    let mut rt = render_thread(RenderThreadMode::Threaded);
    let grey = Vec4::new(0.2, 0.2, 0.2, 1.0);
    let background = emitter_data(
        "M_Back",
        BlendMode::Opaque,
        ScreenAlignment::FacingCamera,
        SortMode::None,
        &[P::at(Vec3::new(0.0, 2.0, 0.0), 6.0, grey)],
    );
    let mut emitters = vec![background];
    if with_additive {
        let glow = Vec4::new(0.3, 0.25, 0.1, 1.0);
        emitters.push(emitter_data(
            "M_Glow",
            BlendMode::Additive,
            ScreenAlignment::FacingCamera,
            SortMode::None,
            &[P::at(Vec3::ZERO, 1.5, glow)],
        ));
    }
    add_snapshot(&mut rt, snapshot(emitters));
    let (stats, img) = frame(&mut rt);
    assert_clean(&mut rt);
    let (x, y) = project(Vec3::ZERO);
    (stats, img.pixel(x, y))
}

#[test]
fn additive_particles_brighten_the_background_and_opaque_ones_go_through_the_base_pass() {
    let (stats, plain) = background_and_additive(false);
    assert_eq!(stats.pass(MeshPass::Base).draws, 1);
    assert_eq!(stats.pass(MeshPass::DepthPrepass).draws, 1, "opaque sprites are in the depth prepass");
    assert_eq!(stats.pass(MeshPass::ShadowDepth).mesh_draw_commands, 0);
    assert_eq!(stats.pass(MeshPass::Translucency).draws, 0);
    assert!(luminance(plain) > 150, "grey background sprite: {plain:?}");

    let (stats, glowing) = background_and_additive(true);
    assert_eq!(stats.pass(MeshPass::Translucency).draws, 1);
    assert_eq!(stats.pass(MeshPass::Base).draws, 1);
    for c in 0..3 {
        assert!(glowing[c] > plain[c] + 20, "channel {c}: {glowing:?} over {plain:?}");
    }
}

#[test]
fn each_view_sorts_the_particles_from_its_own_eye() {
    let mut rt = render_thread(RenderThreadMode::Threaded);
    // Red at y = -1, blue at y = +1: the front camera (on -Y) sees red in
    // front, the back camera (on +Y) sees blue in front.
    let red = P::at(Vec3::new(0.0, -1.0, 0.0), 2.0, RED);
    let blue = P::at(Vec3::new(0.0, 1.0, 0.0), 2.0, BLUE);
    let e = emitter_data("M", BlendMode::Translucent, ScreenAlignment::FacingCamera, SortMode::DistanceToView, &[red, blue]);
    add_snapshot(&mut rt, snapshot(vec![e]));
    let (half_w, fov) = (W / 2, 0.8);
    let front = renderer::SceneView::perspective(
        Vec3::new(0.0, -10.0, 0.0),
        Vec3::ZERO,
        Vec3::Z,
        fov,
        0.1,
        100.0,
        rhi_vulkan::Rect::new(0, 0, half_w, H),
    )
    .unwrap();
    let back = renderer::SceneView::perspective(
        Vec3::new(0.0, 10.0, 0.0),
        Vec3::ZERO,
        Vec3::Z,
        fov,
        0.1,
        100.0,
        rhi_vulkan::Rect::new(half_w as i32, 0, half_w, H),
    )
    .unwrap();
    let (stats, img) = frame_of(&mut rt, &renderer::ViewFamily::new(W, H, vec![front, back]));
    let t = stats.pass(MeshPass::Translucency);
    assert_eq!((t.draws, t.instances), (2, 4), "one draw per view");
    let (l, r) = (img.pixel(W / 4, H / 2), img.pixel(3 * W / 4, H / 2));
    assert!(l[0] > l[2] + 40, "front view: red in front {l:?}");
    assert!(r[2] > r[0] + 40, "back view: blue in front {r:?}");
    assert_clean(&mut rt);
}

/// A 64² sprite sheet of 2 × 2 solid images, linear colours: 0 red,
/// 1 green (top row), 2 blue, 3 white (bottom row).
fn quadrant_sheet() -> renderer::Texture2D {
    let mut data = Vec::with_capacity(64 * 64 * 4);
    for y in 0..64 {
        for x in 0..64 {
            data.extend_from_slice(match (x >= 32, y >= 32) {
                (false, false) => &[255, 0, 0, 255],
                (true, false) => &[0, 255, 0, 255],
                (false, true) => &[0, 0, 255, 255],
                (true, true) => &[255, 255, 255, 255],
            });
        }
    }
    renderer::Texture2D::from_rgba8("quadrants", 64, 64, data, false)
}

/// One large sprite at the origin drawn with the quadrant sheet, at
/// relative time `t` with `sub_uv`; the pixels at the sprite's centre and
/// a quarter of its size up-left and down-right of it.
fn sheet_sprite(sub_uv: SubUv, t: f32) -> [[u8; 4]; 3] {
    let mut rt = render_thread(RenderThreadMode::Threaded);
    let sheet = rt.create_texture(quadrant_sheet()).unwrap();
    let material = rt.create_material(sprite_sheet_material(BlendMode::Translucent, Vec4::ONE, sheet)).unwrap();
    let mut e = emitter_data(
        "M_Sheet",
        BlendMode::Translucent,
        ScreenAlignment::FacingCamera,
        SortMode::None,
        &[P::at(Vec3::ZERO, 4.0, Vec4::ONE)],
    );
    e.relative_times[0] = t;
    e.sub_uv = sub_uv;
    let materials = ParticleMaterials::new().with("M_Sheet", material);
    rt.add_primitive(Box::new(ParticleSystemSceneProxy::new(materials, snapshot(vec![e]), Vec3::ZERO)), glam::Mat4::IDENTITY).unwrap();
    let (stats, img) = frame(&mut rt);
    assert_eq!(stats.pass(MeshPass::Translucency).draws, 1);
    assert_clean(&mut rt);
    let at = |p: Vec3| {
        let (x, y) = project(p);
        img.pixel(x, y)
    };
    [at(Vec3::ZERO), at(Vec3::new(-1.0, 0.0, 1.0)), at(Vec3::new(1.0, 0.0, -1.0))]
}

/// Which of red, green, blue, white `p` clearly is (after tone mapping,
/// which desaturates: a primary is its channel well above the others).
fn solid(p: [u8; 4]) -> Option<usize> {
    let c = [p[0] as i32, p[1] as i32, p[2] as i32];
    if c.iter().all(|&v| v > 180) {
        return Some(3);
    }
    (0..3).find(|&k| (0..3).all(|j| j == k || c[k] > c[j] + 80))
}

#[test]
fn sub_uv_sprites_show_their_sheet_image_and_cross_fade_with_linear_blend() {
    // Without sub-UV the sprite shows the whole sheet: red top-left,
    // white bottom-right (V runs down the sprite).
    let [_, top_left, bottom_right] = sheet_sprite(SubUv::OFF, 0.5);
    assert_eq!((solid(top_left), solid(bottom_right)), (Some(0), Some(3)), "{top_left:?} {bottom_right:?}");
    // Linear over life on the 2 × 2 sheet: image ⌊4t⌋ fills the sprite.
    let linear = SubUv { interpolation: SubUvInterpolation::Linear, horizontal: 2, vertical: 2, index: None, random: None };
    for (t, image) in [(0.1, 0), (0.3, 1), (0.6, 2), (0.9, 3)] {
        let pixels = sheet_sprite(linear.clone(), t);
        for p in pixels {
            assert_eq!(solid(p), Some(image), "t {t}: {pixels:?}");
        }
    }
    // Linear blend half-way from image 0 to image 1: red and green mixed.
    let blend = SubUv { interpolation: SubUvInterpolation::LinearBlend, ..linear.clone() };
    let [centre, ..] = sheet_sprite(blend, 0.125);
    let [red, ..] = sheet_sprite(linear, 0.125);
    assert!(i32::from(centre[1]) > i32::from(red[1]) + 40, "blend {centre:?} vs image 0 alone {red:?}");
    assert!(centre[0] > 100 && centre[1] > 100 && centre[2] < centre[0].min(centre[1]) / 2, "{centre:?}");
    assert!((centre[0] as i32 - centre[1] as i32).abs() < 40, "an even mix: {centre:?}");
}

#[test]
fn square_and_camera_position_alignments_draw_as_they_should() {
    let long = P { size: Vec2::new(0.4, 4.0), ..P::at(Vec3::ZERO, 1.0, Vec4::ONE) };
    // Square: the width both ways.
    let (w, h) = single_sprite(ScreenAlignment::Square, long);
    assert!(w < 12 && h < 12 && w.abs_diff(h) <= 1, "square: {w} × {h}");
    // Facing the camera position: the same as the view plane on the view
    // axis; off it, the sprite turns towards the eye (and draws otherwise).
    let image = |alignment, at: Vec3| {
        let mut rt = render_thread(RenderThreadMode::Threaded);
        let e = emitter_data("M", BlendMode::Translucent, alignment, SortMode::None, &[P::at(at, 3.0, Vec4::ONE)]);
        add_snapshot(&mut rt, snapshot(vec![e]));
        let (_, img) = frame(&mut rt);
        assert_clean(&mut rt);
        img
    };
    let on_axis = |a| image(a, Vec3::ZERO);
    assert_images_equal(&on_axis(ScreenAlignment::FacingCamera), &on_axis(ScreenAlignment::FacingCameraPosition), "on the view axis");
    let off = Vec3::new(4.0, -4.0, 2.0);
    let (plane, eye) = (image(ScreenAlignment::FacingCamera, off), image(ScreenAlignment::FacingCameraPosition, off));
    assert!(lit_pixels(&plane) > 50 && lit_pixels(&eye) > 50);
    assert!(diff_pixels(&plane, &eye) > 10, "turned towards the eye");
}
