//! Image-based lighting (`renderer::environment`) on the real device with
//! validation on: the white furnace, a mirror sphere reflecting the
//! environment where the reflection vector says, the sky drawn behind the
//! scene, prefiltering once per environment, and bad input refused.
//!
//! Every image here is linear: no tone mapper, exposure 1, no
//! anti-aliasing pass, no lights but the environment; pixels are decoded
//! from sRGB back to linear before they are compared.

mod common;

use common::*;
use glam::{Mat4, Vec3, Vec4};
use renderer::*;
use rhi_vulkan::{Image, Rect};

/// Image side in pixels, and the orthographic view's width in scene units.
const SIZE: u32 = 128;
const VIEW_SIDE: f32 = 2.4;

/// Looking along +Y at the origin (screen right = +X, up = +Z).
fn side_view(width: u32, side: f32) -> SceneView {
    let (w, h) = (side * width as f32 / SIZE as f32, side);
    SceneView::orthographic(Vec3::new(0.0, -10.0, 0.0), Vec3::ZERO, Vec3::Z, w, h, 0.1, 50.0, Rect::from_size(width, SIZE)).unwrap()
}

/// A render thread lit by `environment` alone, linearly.
fn environment_only(environment: Environment) -> RenderThread {
    let mut rt = render_thread(RenderThreadMode::Threaded);
    for (name, value) in [(cvars::TONEMAPPER, "0"), (cvars::SHADOW_ENABLE, "0"), (cvars::ANTI_ALIASING_METHOD, "0")] {
        rt.set_cvar(name, value).unwrap();
    }
    rt.set_environment(environment).unwrap();
    rt
}

fn sphere_at(rt: &mut RenderThread, x: f32, base: f32, metallic: f32, roughness: f32) {
    let m = rt.create_material(material(Vec4::new(base, base, base, 1.0), metallic, roughness, 0.5, Vec3::ZERO)).unwrap();
    let sphere = StaticMeshRenderData::new(vec![shapes::uv_sphere(1.0, 128, 64)]).unwrap();
    rt.add_primitive(Box::new(StaticMeshSceneProxy::new(sphere, vec![m])), Mat4::from_translation(Vec3::new(x, 0.0, 0.0))).unwrap();
}

fn render(rt: &mut RenderThread, width: u32, side: f32) -> (FrameStats, Image) {
    let family = ViewFamily::new(width, SIZE, vec![side_view(width, side)]);
    rt.render_frame(FrameRequest { family, read_back: true, execute: true }).unwrap();
    let image = rt.read_back().unwrap();
    assert_eq!(rt.last_frame_error(), None);
    let image = image.expect("image");
    (rt.last_stats().unwrap().expect("stats"), image)
}

#[test]
fn white_furnace_white_spheres_return_the_environments_radiance_metal_or_not_at_any_roughness() {
    const L: f32 = 0.5;
    let mut rt = environment_only(Environment::image(EquirectImage::uniform([L; 3]).unwrap()));
    // Two rows of five spheres 2.5 apart: dielectric, then metallic;
    // roughness 0, 0.25, .. 1. One frame per row.
    let roughness = [0.0, 0.25, 0.5, 0.75, 1.0];
    let width = SIZE * 5;
    for (row, metallic) in [(0, 0.0f32), (1, 1.0)] {
        let mut rt_row = if row == 0 { std::mem::replace(&mut rt, render_thread(RenderThreadMode::Threaded)) } else { rt_for_row(L) };
        for (i, r) in roughness.iter().enumerate() {
            sphere_at(&mut rt_row, (i as f32 - 2.0) * 2.5, 1.0, metallic, *r);
        }
        let (stats, img) = render(&mut rt_row, width, 2.5);
        assert_eq!(stats.image.environment, "image");
        let tolerance = if metallic == 0.0 { 0.02 } else { 0.05 };
        for (i, r) in roughness.iter().enumerate() {
            let centre = img.pixel(SIZE * i as u32 + SIZE / 2, SIZE / 2);
            let got = rgb_linear(centre);
            for c in got.to_array() {
                assert!(
                    (c - L).abs() <= tolerance * L,
                    "metallic {metallic} roughness {r}: {got} (pixel {centre:?}), want {L} within {tolerance}"
                );
            }
        }
        assert_clean(&mut rt_row);
    }
}

fn rt_for_row(l: f32) -> RenderThread {
    environment_only(Environment::image(EquirectImage::uniform([l; 3]).unwrap()))
}

/// A smooth, everywhere-different environment: a wrong direction, a
/// mirrored axis or a swapped face shows.
fn varied(d: Vec3) -> [f32; 3] {
    let phi = d.y.atan2(d.x);
    [0.45 + 0.35 * (2.0 * phi).sin() * (1.0 - d.z * d.z).sqrt(), 0.45 + 0.35 * d.z, 0.35 + 0.25 * d.x]
}

/// The CPU's bilinear lookup of `img` towards `d` (u repeats, v clamps),
/// as the GPU samples the source.
fn bilinear(img: &EquirectImage, d: Vec3) -> Vec3 {
    let (u, v) = EquirectImage::coordinates(d.normalize());
    let (w, h) = (img.width() as f32, img.height() as f32);
    let (x, y) = (u * w - 0.5, (v * h - 0.5).clamp(0.0, h - 1.0));
    let (x0, y0) = (x.floor(), y.floor());
    let (fx, fy) = (x - x0, y - y0);
    let at = |xi: f32, yi: f32| {
        let xi = (xi as i64).rem_euclid(img.width() as i64) as usize;
        let yi = (yi.min(h - 1.0)) as usize;
        Vec3::from(img.texels()[yi * img.width() as usize + xi])
    };
    let top = at(x0, y0).lerp(at(x0 + 1.0, y0), fx);
    let bottom = at(x0, y0 + 1.0).lerp(at(x0 + 1.0, y0 + 1.0), fx);
    top.lerp(bottom, fy)
}

/// The range of the CPU's lookups within `angle` radians of `d`.
fn range_around(img: &EquirectImage, d: Vec3, angle: f32) -> (Vec3, Vec3) {
    let (a, b) = (d.any_orthonormal_pair().0 * angle, d.any_orthonormal_pair().1 * angle);
    let samples: Vec<Vec3> = [Vec3::ZERO, a, -a, b, -b, a + b, a - b, -a + b, -a - b].iter().map(|o| bilinear(img, d + *o)).collect();
    let lo = samples.iter().fold(Vec3::splat(f32::MAX), |m, s| m.min(*s));
    let hi = samples.iter().fold(Vec3::splat(f32::MIN), |m, s| m.max(*s));
    (lo, hi)
}

#[test]
fn a_mirror_sphere_reflects_the_environment_where_the_reflection_vector_says_and_the_sky_is_drawn_behind() {
    let env = EquirectImage::from_fn(256, 128, varied).unwrap();
    let mut rt = environment_only(Environment::image(env.clone()));
    // Geometric specular anti-aliasing off: the mirror exactly.
    rt.set_cvar(cvars::SPECULAR_AA_VARIANCE, "0").unwrap();
    sphere_at(&mut rt, 0.0, 1.0, 1.0, 0.0);
    let (_, img) = render(&mut rt, SIZE, VIEW_SIDE);
    // One texel of the prefiltered cube's level 0, and a little more for
    // the tessellated sphere's interpolated normals.
    let texel = std::f32::consts::FRAC_PI_2 / environment::SPECULAR_FACE_SIZE as f32;
    let v = Vec3::new(0.0, -1.0, 0.0);
    let mut compared = 0;
    for py in (4..SIZE).step_by(8) {
        for px in (4..SIZE).step_by(8) {
            let x = ((px as f32 + 0.5) / SIZE as f32 * 2.0 - 1.0) * VIEW_SIDE / 2.0;
            let z = (1.0 - (py as f32 + 0.5) / SIZE as f32 * 2.0) * VIEW_SIDE / 2.0;
            let r2 = x * x + z * z;
            if r2 > 0.8 {
                continue;
            }
            let n = Vec3::new(x, -(1.0 - r2).sqrt(), z);
            let reflected = 2.0 * n.dot(v) * n - v;
            let (lo, hi) = range_around(&env, reflected, 2.0 * texel);
            let got = rgb_linear(img.pixel(px, py));
            // 3% for the half floats, 8-bit rounding and the split sum's
            // table at roughness 0.
            let ok = got.cmpge(lo * 0.97 - 0.004).all() && got.cmple(hi * 1.03 + 0.004).all();
            assert!(ok, "pixel ({px}, {py}): {got}, reflection {reflected} wants {lo}..{hi}");
            compared += 1;
        }
    }
    assert!(compared > 100, "{compared}");
    // The sky: an orthographic view looks along +Y everywhere; a corner
    // pixel shows the environment there (level 0 of the source).
    let want = bilinear(&env, Vec3::Y);
    let got = rgb_linear(img.pixel(1, 1));
    assert!((got - want).abs().max_element() < 0.01, "sky {got}, want {want}");
    assert_clean(&mut rt);
}

#[test]
fn an_environment_is_prefiltered_once_and_serial_equals_parallel() {
    let mut rt = environment_only(Environment::Sky(ProceduralSky::default()));
    sphere_at(&mut rt, 0.0, 0.8, 0.0, 0.5);
    let (first, parallel) = render(&mut rt, SIZE, VIEW_SIDE);
    assert_eq!((first.environment_filters, first.image.environment), (1, "sky"));
    let (second, _) = render(&mut rt, SIZE, VIEW_SIDE);
    assert_eq!(second.environment_filters, 0, "nothing re-filtered while it does not change");
    rt.set_cvar(cvars::PARALLEL_RECORD, "0").unwrap();
    let (_, serial) = render(&mut rt, SIZE, VIEW_SIDE);
    assert_images_equal(&parallel, &serial, "serial vs parallel with the environment");
    // An invalid environment is refused and changes nothing.
    let bad = Environment::Image { image: std::sync::Arc::new(EquirectImage::uniform([1.0; 3]).unwrap()), intensity: -1.0 };
    assert!(matches!(rt.set_environment(bad), Err(RendererError::InvalidEnvironment(_))));
    let sunless = Environment::Sky(ProceduralSky::with_sun(Vec3::ZERO));
    assert!(matches!(rt.set_environment(sunless), Err(RendererError::InvalidEnvironment(_))));
    let (after, same) = render(&mut rt, SIZE, VIEW_SIDE);
    assert_eq!((after.environment_filters, after.image.environment), (0, "sky"));
    assert_images_equal(&serial, &same, "a refused environment changes nothing");
    // Back to the hemisphere: no maps, no sky.
    rt.set_environment(Environment::Hemisphere).unwrap();
    let (hemi, _) = render(&mut rt, SIZE, VIEW_SIDE);
    assert_eq!((hemi.environment_filters, hemi.image.environment), (0, "hemisphere"));
    assert_clean(&mut rt);
}
