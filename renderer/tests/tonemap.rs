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
