//! Automatic exposure (`renderer::postprocess::exposure`) on the real device
//! with validation on: a view of one emissive plane, so scene color is one
//! luminance everywhere and the exposure it should pick is known; then
//! the scene darkens or brightens and the exposure follows at the
//! documented rate, the same with any number of frames in flight.

mod common;

use common::*;
use glam::{Mat4, Vec3, Vec4};
use renderer::*;
use rhi_vulkan::Image;

const VIEW: ViewStateId = ViewStateId(7);

/// A render thread with no lights or ambient, no tone curve and auto
/// exposure on, adapting at `speed` both ways.
fn auto_exposed(frames_in_flight: u32, speed: f32) -> RenderThread {
    let mut rt = render_thread_in_flight(RenderThreadMode::Threaded, 3, frames_in_flight);
    let speed = speed.to_string();
    for (name, value) in [
        (cvars::TONEMAPPER, "0"),
        (cvars::SKY_LIGHT_INTENSITY, "0"),
        (cvars::SHADOW_ENABLE, "0"),
        (cvars::AUTO_EXPOSURE, "1"),
        (cvars::AUTO_EXPOSURE_SPEED_UP, speed.as_str()),
        (cvars::AUTO_EXPOSURE_SPEED_DOWN, speed.as_str()),
    ] {
        rt.set_cvar(name, value).unwrap();
    }
    rt
}

/// A plane glowing with luminance `e` over the whole view.
fn glowing_plane(rt: &mut RenderThread, e: f32) -> PrimitiveId {
    let m = rt.create_material(material(Vec4::new(0.0, 0.0, 0.0, 1.0), 0.0, 1.0, 0.0, Vec3::splat(e))).unwrap();
    plane_at(rt, m, 100.0, Mat4::IDENTITY)
}

fn family(dt: f32) -> ViewFamily {
    let mut f = common::family(vec![ortho_down(4.0).with_state(VIEW)]);
    f.delta_seconds = dt;
    f
}

/// The EV100 auto exposure picks for a view of one luminance `l`: its
/// histogram bin's (`auto_exposure.wgsl`: 63 bins over log2 luminance
/// -10..14 after the black bin), plus 3 (EV100 = log2(L · 100 / 12.5)).
fn target_ev(l: f32) -> f32 {
    let bin = ((l.log2() + 10.0) / 24.0 * 63.0).clamp(0.0, 62.0).floor() + 1.0;
    -10.0 + (bin - 0.5) / 63.0 * 24.0 + 3.0
}

#[test]
fn a_bright_and_a_dark_scene_are_exposed_alike_and_the_exposure_adapts_in_the_documented_time() {
    let (dt, speed) = (0.1, 1.0);
    let mut rt = auto_exposed(1, speed);
    let bright = glowing_plane(&mut rt, 40.0);
    let (first, bright_img) = frame(&mut rt, &family(dt));
    assert!(first.image.auto_exposure);
    // A view's first frame takes the target at once.
    assert!((first.image.exposure_ev100 - target_ev(40.0)).abs() < 1e-3, "{} vs {}", first.image.exposure_ev100, target_ev(40.0));
    // The scene darkens a thousandfold: the exposure follows, the gap
    // shrinking by exp(-speed · t).
    rt.remove_primitive(bright).unwrap();
    glowing_plane(&mut rt, 0.04);
    let (from, to) = (target_ev(40.0), target_ev(0.04));
    let mut last_gap = 1.0;
    for n in 1..=30 {
        let (stats, _) = frame(&mut rt, &family(dt));
        let gap = (stats.image.exposure_ev100 - to) / (from - to);
        let want = (-speed * dt * n as f32).exp();
        assert!((gap - want).abs() < 2e-3, "frame {n}: gap {gap}, want {want}");
        if n == 10 {
            assert!(gap > 0.3, "still adapting after 1 s: {gap}");
        }
        last_gap = gap;
    }
    // 3 / speed seconds: within 5%.
    assert!(last_gap <= 0.05, "{last_gap}");
    // A released view state starts over: its next frame jumps to the target.
    rt.release_view_state(VIEW).unwrap();
    let (fresh, dark_img) = frame(&mut rt, &family(dt));
    assert!((fresh.image.exposure_ev100 - to).abs() < 1e-3, "{}", fresh.image.exposure_ev100);
    // Exposed alike: the dark scene's pixel is the bright scene's, a
    // thousand times darker in scene color (the histogram's bins are
    // 0.38 EV wide: within 20%); middle grey, about 0.1 (1 / (1.2 · 8)).
    let (b, d) = (rgb_linear(centre(&bright_img)).x, rgb_linear(centre(&dark_img)).x);
    assert!(b > 0.07 && b < 0.15, "bright scene exposed to {b}");
    assert!((d - b).abs() < 0.2 * b, "dark {d} vs bright {b}");
    // Without a view state, the manual exposure.
    let mut stateless = common::family(vec![ortho_down(4.0)]);
    stateless.delta_seconds = dt;
    let (manual, _) = frame(&mut rt, &stateless);
    assert!(!manual.image.auto_exposure);
    assert_eq!(manual.image.exposure_ev100, ev100_of(1.0));
    assert_clean(&mut rt);
}

/// The frames' images as the GPU adapted them, the last one read back
/// after `n` frames without waiting in between.
fn brightening(frames_in_flight: u32, n: usize) -> Image {
    let mut rt = auto_exposed(frames_in_flight, 3.0);
    let dark = glowing_plane(&mut rt, 0.05);
    frame(&mut rt, &family(1.0 / 60.0));
    rt.remove_primitive(dark).unwrap();
    glowing_plane(&mut rt, 5.0);
    for _ in 0..n {
        rt.render_frame(FrameRequest { family: family(1.0 / 60.0), read_back: false, execute: true }).unwrap();
    }
    let (_, img) = frame(&mut rt, &family(1.0 / 60.0));
    assert_clean(&mut rt);
    img
}

#[test]
fn adaptation_is_the_same_with_one_or_three_frames_in_flight() {
    let one = brightening(1, 8);
    let three = brightening(3, 8);
    assert_images_equal(&one, &three, "auto exposure with 1 vs 3 frames in flight");
    // Still adapting (brighter than it will be): a later frame differs.
    let later = brightening(1, 40);
    assert!(rgb_linear(centre(&later)).x < rgb_linear(centre(&one)).x, "adaptation darkens the brightened scene over time");
}
