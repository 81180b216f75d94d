//! The tone-mapping pass on the real device (validation on, zero messages
//! asserted): the HDR scene color through `r.Tonemapper` (ACES fitted by
//! default, 0 = clamp) and `r.Exposure` into the 8-bit sRGB output.

mod common;

use common::*;
use glam::{Mat4, Vec3, Vec4};
use renderer::*;

#[test]
fn hdr_emissive_is_tone_mapped_bright_but_not_saturated() {
    let mut rt = render_thread(RenderThreadMode::Threaded);
    // Black, no specular: only the emissive reaches the image (no lights).
    let hdr = rt.create_material(material(Vec4::new(0.0, 0.0, 0.0, 1.0), 0.0, 0.5, 0.0, Vec3::splat(4.0))).unwrap();
    let id = plane_at(&mut rt, hdr, 40.0, Mat4::IDENTITY);
    let fam = family(vec![ortho_down(10.0)]);
    let (_, aces) = frame(&mut rt, &fam);
    let p = centre(&aces);
    assert!(p[..3].iter().all(|&c| (200..=250).contains(&c)), "ACES maps emissive 4.0 to bright, not saturated: {p:?}");
    assert!(p[0].abs_diff(p[1]) <= 1 && p[1].abs_diff(p[2]) <= 1, "gray stays gray: {p:?}");
    // The curve keeps HDR values apart: 1.0 is darker than 4.0.
    rt.set_material(hdr, material(Vec4::new(0.0, 0.0, 0.0, 1.0), 0.0, 0.5, 0.0, Vec3::splat(1.0))).unwrap();
    let (_, one) = frame(&mut rt, &fam);
    assert!(centre(&one)[0] + 20 < p[0], "emissive 1.0 {:?} vs 4.0 {p:?}", centre(&one));
    // Without a tone mapper HDR clamps: 4.0 and 1.0 are both white.
    rt.set_cvar(cvars::TONEMAPPER, "0").unwrap();
    let (_, clamped_one) = frame(&mut rt, &fam);
    assert_eq!(centre(&clamped_one), [255, 255, 255, 255]);
    rt.set_material(hdr, material(Vec4::new(0.0, 0.0, 0.0, 1.0), 0.0, 0.5, 0.0, Vec3::splat(4.0))).unwrap();
    let (_, clamped) = frame(&mut rt, &fam);
    assert_eq!(centre(&clamped), [255, 255, 255, 255], "no tone mapper: clamped to 1.0");
    // Linear values below 1 pass through exactly (sRGB-encoded): 0.5 -> 188.
    rt.set_material(hdr, material(Vec4::new(0.0, 0.0, 0.0, 1.0), 0.0, 0.5, 0.0, Vec3::new(0.5, 0.0, 1.0))).unwrap();
    let (_, half) = frame(&mut rt, &fam);
    let h = centre(&half);
    assert!(h[0].abs_diff(188) <= 1 && h[1..] == [0, 255, 255], "{h:?}");
    rt.remove_primitive(id).unwrap();
    assert_clean(&mut rt);
}

#[test]
fn exposure_scales_the_scene_before_tone_mapping() {
    let mut rt = render_thread(RenderThreadMode::Threaded);
    sun_from(&mut rt, Vec3::new(0.3, 0.2, -1.0), 2.0);
    let gray = rt.create_material(Material::colored(Vec4::new(0.5, 0.5, 0.5, 1.0))).unwrap();
    plane_at(&mut rt, gray, 40.0, Mat4::IDENTITY);
    let fam = family(vec![ortho_down(10.0)]);
    let (_, base) = frame(&mut rt, &fam);
    rt.set_cvar(cvars::EXPOSURE, "2").unwrap();
    let (_, double) = frame(&mut rt, &fam);
    let (a, b) = (centre(&base), centre(&double));
    assert!(luminance(b) > luminance(a) + 60, "exposure 2 brightens: {a:?} -> {b:?}");
    assert!(b[..3].iter().all(|&c| c < 255), "ACES still does not clip it: {b:?}");
    rt.set_cvar(cvars::EXPOSURE, "0").unwrap();
    let (_, black) = frame(&mut rt, &fam);
    assert_eq!(&centre(&black)[..3], &[0, 0, 0], "exposure 0: black");
    // Without a tone mapper, exposure is a plain multiplier of linear light.
    rt.set_cvar(cvars::TONEMAPPER, "0").unwrap();
    rt.set_cvar(cvars::EXPOSURE, "0.25").unwrap();
    let quarter = rgb_linear(centre(&frame(&mut rt, &fam).1));
    rt.set_cvar(cvars::EXPOSURE, "0.5").unwrap();
    let half = rgb_linear(centre(&frame(&mut rt, &fam).1));
    assert!((half.x / quarter.x - 2.0).abs() < 0.1, "linear: {quarter} x2 = {half}");
    assert_clean(&mut rt);
}

/// An HDR post pass added before tone mapping: a description and a shader
/// (this one swaps red and blue), nothing else.
static SWAP_RED_BLUE: postprocess::PostPassDesc = postprocess::PostPassDesc {
    name: "swap red and blue",
    shader: "@group(0) @binding(0) var post_input: texture_2d<f32>;
struct Push { a: u32, b: u32, c: u32, d: u32 }
var<immediate> push: Push;
@vertex fn vs_main(@builtin(vertex_index) i: u32) -> @builtin(position) vec4<f32> {
    let uv = vec2<f32>(f32((i << 1u) & 2u), f32(i & 2u));
    return vec4<f32>(uv * 2.0 - 1.0, 0.0, 1.0);
}
@fragment fn fs_main(@builtin(position) p: vec4<f32>) -> @location(0) vec4<f32> {
    return textureLoad(post_input, vec2<i32>(p.xy), 0).bgra + vec4<f32>(f32(push.a) * 0.0);
}",
    output: postprocess::PostOutput::Hdr,
    push_constants: |_, _| [0; 4],
    timestamps: ["swap begin", "swap end"],
    enabled: |_| true,
    sampler: false,
    exposure: false,
};

#[test]
fn a_post_pass_is_a_description_and_a_shader() {
    let mut rt = render_thread(RenderThreadMode::Threaded);
    rt.set_cvar(cvars::TONEMAPPER, "0").unwrap();
    let emissive = rt.create_material(material(Vec4::new(0.0, 0.0, 0.0, 1.0), 0.0, 0.5, 0.0, Vec3::new(0.5, 0.0, 1.0))).unwrap();
    plane_at(&mut rt, emissive, 40.0, Mat4::IDENTITY);
    let fam = family(vec![ortho_down(10.0)]);
    let before = centre(&frame(&mut rt, &fam).1);
    assert!(before[0].abs_diff(188) <= 1 && before[1..] == [0, 255, 255], "{before:?}");
    rt.set_post_passes(vec![&SWAP_RED_BLUE, &postprocess::TONEMAP]).unwrap();
    let swapped = centre(&frame(&mut rt, &fam).1);
    assert!(swapped[0] == 255 && swapped[1] == 0 && swapped[2].abs_diff(188) <= 1, "red and blue swapped before tone mapping: {swapped:?}");
    // A chain that does not end in the display format is refused, and the chain stays.
    assert!(matches!(rt.set_post_passes(vec![&postprocess::TONEMAP, &SWAP_RED_BLUE]), Err(RendererError::InvalidPostChain(_))));
    assert!(matches!(rt.set_post_passes(vec![]), Err(RendererError::InvalidPostChain(_))));
    assert_eq!(centre(&frame(&mut rt, &fam).1), swapped);
    rt.set_post_passes(postprocess::BUILTIN_POST_PASSES.to_vec()).unwrap();
    assert_eq!(centre(&frame(&mut rt, &fam).1), before);
    assert_clean(&mut rt);
}

/// The sRGB encoding of a linear value, as the 8-bit output stores it.
fn srgb8(v: f32) -> u8 {
    let v = v.clamp(0.0, 1.0);
    let e = if v <= 0.0031308 { 12.92 * v } else { 1.055 * v.powf(1.0 / 2.4) - 0.055 };
    (e * 255.0).round() as u8
}

/// Khronos PBR Neutral, written from the specification
/// (KhronosGroup/ToneMapping, PBR_Neutral): what the shader must give.
fn pbr_neutral(c: Vec3) -> Vec3 {
    let x = c.min_element();
    let offset = if x < 0.08 { x - 6.25 * x * x } else { 0.04 };
    let c = c - offset;
    let peak = c.max_element();
    if peak < 0.76 {
        return c;
    }
    let d = 1.0 - 0.76;
    let new_peak = 1.0 - d * d / (peak + d - 0.76);
    let c = c * (new_peak / peak);
    let g = 1.0 - 1.0 / (0.15 * (peak - new_peak) + 1.0);
    c.lerp(Vec3::splat(new_peak), g)
}

/// The centre pixel of an emissive-only plane of `hdr` under tone mapper `curve`.
fn tone_mapped(curve: &str, hdr: Vec3) -> [u8; 4] {
    let mut rt = render_thread(RenderThreadMode::Threaded);
    rt.set_cvar(cvars::TONEMAPPER, curve).unwrap();
    let m = rt.create_material(material(Vec4::new(0.0, 0.0, 0.0, 1.0), 0.0, 0.5, 0.0, hdr)).unwrap();
    plane_at(&mut rt, m, 40.0, Mat4::IDENTITY);
    let (stats, img) = frame(&mut rt, &family(vec![ortho_down(10.0)]));
    assert_clean(&mut rt);
    let name = ["none", "aces", "agx", "pbr_neutral"][curve.parse::<usize>().unwrap()];
    assert_eq!(stats.image.tonemapper, name);
    centre(&img)
}

#[test]
fn pbr_neutral_shows_colours_as_authored_and_compresses_highlights_as_specified() {
    // Below the compression start, colours pass through less the 0.04
    // offset (0.5, 0.3, 0.2 -> 0.46, 0.26, 0.16); near black, the offset
    // shrinks (x - 6.25 x^2); highlights compress towards white.
    for hdr in [Vec3::new(0.5, 0.3, 0.2), Vec3::splat(0.02), Vec3::new(4.0, 2.0, 1.0), Vec3::new(0.9, 0.1, 0.6)] {
        let expected = pbr_neutral(hdr);
        let got = tone_mapped("3", hdr);
        for i in 0..3 {
            assert!(
                got[i].abs_diff(srgb8(expected[i])) <= 1,
                "{hdr} -> {got:?}, specified {expected} ({:?})",
                expected.to_array().map(srgb8)
            );
        }
    }
    assert!(pbr_neutral(Vec3::new(0.5, 0.3, 0.2)).abs_diff_eq(Vec3::new(0.46, 0.26, 0.16), 1e-6));
}

#[test]
fn agx_keeps_greys_grey_orders_brightness_and_rolls_highlights_off() {
    let levels = [0.02f32, 0.18, 1.0, 4.0, 16.0];
    let greys: Vec<[u8; 4]> = levels.iter().map(|&v| tone_mapped("2", Vec3::splat(v))).collect();
    for (g, v) in greys.iter().zip(levels) {
        assert!(g[0].abs_diff(g[1]) <= 1 && g[1].abs_diff(g[2]) <= 1, "grey {v} stays grey: {g:?}");
    }
    assert!(greys.windows(2).all(|w| w[0][0] < w[1][0]), "brighter in, brighter out: {greys:?}");
    // Middle grey lands near the middle of the display range (AgX's
    // default look puts 0.18 at about 0.5 display-encoded), and 16 is not
    // yet clipped to white.
    assert!((100..=140).contains(&greys[1][0]), "0.18 -> {:?}", greys[1]);
    assert!(greys[4][0] < 255, "16 -> {:?}", greys[4]);
    // A saturated highlight desaturates towards white rather than clipping per channel.
    let red = tone_mapped("2", Vec3::new(8.0, 0.5, 0.5));
    assert!(red[0] > red[1] && red[1] > 60, "{red:?}");
}

#[test]
fn tonemapper_and_anti_aliasing_take_only_their_values() {
    let mut rt = render_thread(RenderThreadMode::Threaded);
    for (name, bad) in [
        (cvars::TONEMAPPER, "4"),
        (cvars::TONEMAPPER, "-1"),
        (cvars::ANTI_ALIASING_METHOD, "4"),
        (cvars::ANTI_ALIASING_METHOD, "-1"),
        (cvars::MSAA_COUNT, "3"),
        (cvars::MSAA_COUNT, "16"),
    ] {
        assert!(matches!(rt.set_cvar(name, bad), Err(RendererError::InvalidCvarValue { .. })), "{name}={bad}");
    }
    let (stats, _) = frame(&mut rt, &family(vec![ortho_down(10.0)]));
    assert_eq!((stats.image.tonemapper, stats.image.aa), ("aces", "none"), "unchanged");
    assert!((stats.image.exposure_ev100 - ev100_of(1.0)).abs() < 1e-6 && (ev100_of(1.0) + 0.263).abs() < 1e-3);
    // A manual EV100 is the exposure 1 / (1.2 * 2^EV100), and back.
    assert!((exposure_of_ev100(0.0) - 1.0 / 1.2).abs() < 1e-6 && (ev100_of(exposure_of_ev100(7.5)) - 7.5).abs() < 1e-4);
    assert_clean(&mut rt);
}
