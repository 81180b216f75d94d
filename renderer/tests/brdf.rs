//! The default-lit BRDF against a CPU implementation of the glTF 2.0
//! specification's (Appendix B), on the real device with validation on.
//!
//! A unit sphere, finely tessellated, is lit by one directional light and
//! seen through an orthographic camera, with no ambient
//! (`r.SkyLight.Intensity=0`), no shadows, no geometric specular
//! anti-aliasing (`r.Shading.SpecularAAVariance=0`) and no tone mapper
//! (`r.Tonemapper=0`, the exposure keeping every value under 1). At chosen
//! pixels the normal is the analytic sphere's under the pixel's centre;
//! the CPU evaluates the specification's equations there:
//!
//! ```text
//! f      = (1 − F) · c_diff / π + F · D · V        (fresnel_mix of Appendix B)
//! c_diff = base · (1 − metallic),  F0 = mix(0.04, base, metallic)
//! F      = F0 + (1 − F0) · (1 − v·h)^5
//! D      = α² / (π ((n·h)² (α² − 1) + 1)²),  α = roughness²
//! V      = 0.5 / (n·l √((n·v)² (1 − α²) + α²) + n·v √((n·l)² (1 − α²) + α²))
//! L_out  = f · E · n·l
//! ```
//!
//! (V is the height-correlated Smith term the Khronos Sample Viewer uses;
//! Appendix B writes the separable form, which differs from it by under
//! 1% of the specular at these angles.) The GPU's pixel must equal the
//! CPU's value after sRGB encoding within 3 levels of 255 per channel: the
//! tessellation (256 × 128 quads, so an interpolated normal is within
//! 0.0003 rad of the sphere's) and 8-bit rounding account for 1. A wrong
//! channel, a missing (1 − F) or a wrong distribution is several levels
//! off at most of the chosen pixels.

mod common;

use common::*;
use glam::Vec3;
use renderer::*;
use rhi_vulkan::{Image, Rect};

/// Image side in pixels, and the orthographic view's side in scene units.
const SIZE: u32 = 128;
const VIEW_SIDE: f32 = 2.2;
/// Linear multiplier keeping every value under 1 (nothing clips).
const EXPOSURE: f32 = 0.25;
/// Irradiance of the light on a surface facing it.
const IRRADIANCE: f32 = 3.0;
/// Per-channel tolerance in sRGB levels.
const TOLERANCE: u8 = 3;

struct Case {
    base: Vec3,
    metallic: f32,
    roughness: f32,
}

/// Looking along +Y at the origin (screen right = +X, screen up = +Z); the
/// direction towards the eye is -Y.
fn side_view() -> SceneView {
    SceneView::orthographic(Vec3::new(0.0, -10.0, 0.0), Vec3::ZERO, Vec3::Z, VIEW_SIDE, VIEW_SIDE, 0.1, 50.0, Rect::from_size(SIZE, SIZE))
        .unwrap()
}

/// The sphere's point and normal under pixel (px, py)'s centre, if any.
fn sphere_normal(px: u32, py: u32) -> Option<Vec3> {
    let x = ((px as f32 + 0.5) / SIZE as f32 * 2.0 - 1.0) * VIEW_SIDE / 2.0;
    let z = (1.0 - (py as f32 + 0.5) / SIZE as f32 * 2.0) * VIEW_SIDE / 2.0;
    let r2 = x * x + z * z;
    (r2 < 1.0).then(|| Vec3::new(x, -(1.0 - r2).sqrt(), z))
}

/// glTF's metallic-roughness BRDF times irradiance and n·l (see the module docs).
fn spec_radiance(c: &Case, n: Vec3, v: Vec3, l: Vec3, irradiance: f32) -> Vec3 {
    let n_dot_l = n.dot(l).clamp(0.0, 1.0);
    let n_dot_v = n.dot(v).clamp(1e-4, 1.0);
    if n_dot_l <= 0.0 {
        return Vec3::ZERO;
    }
    let h = (l + v).normalize();
    let n_dot_h = n.dot(h).clamp(0.0, 1.0);
    let v_dot_h = v.dot(h).clamp(0.0, 1.0);
    let alpha = c.roughness * c.roughness;
    let a2 = alpha * alpha;
    let f0 = Vec3::splat(0.04).lerp(c.base, c.metallic);
    let f = f0 + (Vec3::ONE - f0) * (1.0 - v_dot_h).powi(5);
    let d = a2 / (std::f32::consts::PI * ((n_dot_h * n_dot_h) * (a2 - 1.0) + 1.0).powi(2));
    let vis = 0.5 / (n_dot_l * (n_dot_v * n_dot_v * (1.0 - a2) + a2).sqrt() + n_dot_v * (n_dot_l * n_dot_l * (1.0 - a2) + a2).sqrt());
    let c_diff = c.base * (1.0 - c.metallic);
    let brdf = (Vec3::ONE - f) * c_diff / std::f32::consts::PI + f * d * vis;
    brdf * irradiance * n_dot_l
}

fn srgb_encode(linear: f32) -> u8 {
    let c = linear.clamp(0.0, 1.0);
    let s = if c <= 0.0031308 { c * 12.92 } else { 1.055 * c.powf(1.0 / 2.4) - 0.055 };
    (s * 255.0).round() as u8
}

fn render(case: &Case, light_travels: Vec3) -> Image {
    let mut rt = render_thread(RenderThreadMode::Threaded);
    // Geometric specular anti-aliasing off: the BRDF exactly.
    let settings =
        [(cvars::TONEMAPPER, "0"), (cvars::SKY_LIGHT_INTENSITY, "0"), (cvars::SHADOW_ENABLE, "0"), (cvars::SPECULAR_AA_VARIANCE, "0")];
    for (name, value) in settings {
        rt.set_cvar(name, value).unwrap();
    }
    rt.set_cvar(cvars::EXPOSURE, &EXPOSURE.to_string()).unwrap();
    let m = rt.create_material(material(case.base.extend(1.0), case.metallic, case.roughness, 0.5, Vec3::ZERO)).unwrap();
    let sphere = StaticMeshRenderData::new(vec![shapes::uv_sphere(1.0, 256, 128)]).unwrap();
    rt.add_primitive(Box::new(StaticMeshSceneProxy::new(sphere, vec![m])), glam::Mat4::IDENTITY).unwrap();
    sun_from(&mut rt, light_travels, IRRADIANCE);
    let (_, image) = rt_frame(&mut rt);
    assert_clean(&mut rt);
    image
}

fn rt_frame(rt: &mut RenderThread) -> (FrameStats, Image) {
    rt.render_frame(FrameRequest { family: ViewFamily::new(SIZE, SIZE, vec![side_view()]), read_back: true, execute: true }).unwrap();
    let image = rt.read_back().unwrap().expect("image");
    (rt.last_stats().unwrap().expect("stats"), image)
}

/// Compares the GPU's pixels with the CPU's on a grid over the lit disc;
/// returns how many pixels were compared.
fn check(case: &Case, light_travels: Vec3) -> usize {
    let image = render(case, light_travels);
    let l = -light_travels.normalize();
    let v = Vec3::new(0.0, -1.0, 0.0);
    let mut compared = 0;
    let mut failures = Vec::new();
    for py in (4..SIZE).step_by(9) {
        for px in (4..SIZE).step_by(9) {
            let Some(n) = sphere_normal(px, py) else { continue };
            // Stay off the silhouette, where a pixel mixes sphere and background.
            if n.dot(v) < 0.2 {
                continue;
            }
            let want = spec_radiance(case, n, v, l, IRRADIANCE) * EXPOSURE;
            let want = [srgb_encode(want.x), srgb_encode(want.y), srgb_encode(want.z)];
            let got = image.pixel(px, py);
            compared += 1;
            if (0..3).any(|i| got[i].abs_diff(want[i]) > TOLERANCE) {
                failures.push(format!("({px}, {py}) n {n:.3}: GPU {:?} vs spec {want:?}", &got[..3]));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "base {} metallic {} roughness {}: {} of {compared} pixels off by more than {TOLERANCE}:\n{}",
        case.base,
        case.metallic,
        case.roughness,
        failures.len(),
        failures.join("\n")
    );
    compared
}

#[test]
fn brdf_of_dielectrics_matches_the_gltf_specification() {
    let light = Vec3::new(0.5, 0.8, -0.4);
    for case in [
        Case { base: Vec3::new(0.8, 0.2, 0.1), metallic: 0.0, roughness: 0.5 },
        Case { base: Vec3::new(0.1, 0.5, 0.9), metallic: 0.0, roughness: 0.25 },
        Case { base: Vec3::new(0.6, 0.6, 0.6), metallic: 0.0, roughness: 1.0 },
    ] {
        assert!(check(&case, light) > 80, "the grid covers the lit disc");
    }
}

#[test]
fn brdf_of_metals_matches_the_gltf_specification() {
    // Light from near the viewer so that the specular lobe is on the disc.
    let light = Vec3::new(-0.3, 1.0, -0.2);
    for case in [
        Case { base: Vec3::new(0.95, 0.64, 0.54), metallic: 1.0, roughness: 0.4 },
        Case { base: Vec3::new(0.9, 0.9, 0.9), metallic: 1.0, roughness: 0.7 },
        Case { base: Vec3::new(0.3, 0.8, 0.2), metallic: 0.5, roughness: 0.5 },
    ] {
        assert!(check(&case, light) > 80, "the grid covers the lit disc");
    }
}

#[test]
fn brdf_test_sees_the_sphere_where_the_camera_puts_it() {
    // The comparisons above are only as good as the pixel → normal mapping:
    // the silhouette must be where `sphere_normal` says.
    let image = render(&Case { base: Vec3::splat(0.8), metallic: 0.0, roughness: 0.5 }, Vec3::new(0.0, 1.0, 0.0));
    // The background (the clear colour) is what the corner shows.
    let lit = |px: u32, py: u32| image.pixel(px, py) != image.pixel(0, 0);
    for (px, py) in [
        (SIZE / 2, SIZE / 2),
        (SIZE / 2, 8),
        (8, SIZE / 2),
        (SIZE / 2, 2),
        (2, SIZE / 2),
        (SIZE - 3, SIZE / 2),
        (6, 6),
        (SIZE - 7, SIZE - 7),
    ] {
        assert_eq!(lit(px, py), sphere_normal(px, py).is_some(), "pixel ({px}, {py})");
    }
    // Top-left of the disc: brighter than bottom-right under a light from the upper left.
    let image = render(&Case { base: Vec3::splat(0.8), metallic: 0.0, roughness: 0.5 }, Vec3::new(0.7, 0.3, -0.7));
    assert!(image.pixel(SIZE / 3, SIZE / 3)[0] > image.pixel(2 * SIZE / 3, 2 * SIZE / 3)[0] + 20);
}
