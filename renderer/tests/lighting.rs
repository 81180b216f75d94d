//! Default-lit shading on the real device (validation on, zero messages
//! asserted): PBR metal vs dielectric, the point light's radius, the
//! hemisphere ambient, two-sided back faces. Relations (brighter, hue,
//! equal outside a radius) rather than exact values; where light is
//! measured, without a tone mapper (`r.Tonemapper=0`) and decoded from sRGB.

mod common;

use common::*;
use glam::{Mat4, Quat, Vec3, Vec4};
use renderer::*;
use rhi_vulkan::Image;

/// Renders a red metal plane (left) and a dielectric one (right) of
/// `roughness` under a sun travelling `sun`, seen from straight above;
/// returns what the sun adds to each (linear light: no tone mapper,
/// exposure 0.2, nothing clips; the ambient alone subtracted).
fn sun_on_metal_and_dielectric(sun: Vec3, dielectric: Vec4, roughness: f32) -> (Vec3, Vec3) {
    let mut rt = render_thread(RenderThreadMode::Threaded);
    rt.set_cvar(cvars::TONEMAPPER, "0").unwrap();
    rt.set_cvar(cvars::EXPOSURE, "0.2").unwrap();
    let metal = rt.create_material(material(Vec4::new(0.9, 0.1, 0.1, 1.0), 1.0, roughness, 0.5, Vec3::ZERO)).unwrap();
    let plastic = rt.create_material(material(dielectric, 0.0, roughness, 0.5, Vec3::ZERO)).unwrap();
    plane_at(&mut rt, metal, 5.0, Mat4::from_translation(Vec3::new(-3.0, 0.0, 0.0)));
    plane_at(&mut rt, plastic, 5.0, Mat4::from_translation(Vec3::new(3.0, 0.0, 0.0)));
    // 12 units wide: x = -3 is at a quarter of the width, x = 3 at three quarters.
    let fam = family(vec![ortho_down(12.0)]);
    let pixels = |img: &Image| (rgb_linear(img.pixel(W / 4, H / 2)), rgb_linear(img.pixel(3 * W / 4, H / 2)));
    let (ambient_metal, ambient_plastic) = pixels(&frame(&mut rt, &fam).1);
    sun_from(&mut rt, sun, 2.0);
    let (lit_metal, lit_plastic) = pixels(&frame(&mut rt, &fam).1);
    assert_clean(&mut rt);
    (lit_metal - ambient_metal, lit_plastic - ambient_plastic)
}

#[test]
fn metals_have_no_diffuse_and_a_specular_tinted_by_their_color() {
    // Light at 60 degrees from the view's reflection: barely any specular,
    // so the dielectric shows its diffuse red and the metal little.
    let (metal, plastic) = sun_on_metal_and_dielectric(Vec3::new(-0.866, 0.0, -0.5), Vec4::new(0.9, 0.1, 0.1, 1.0), 0.3);
    assert!(plastic.x > 0.02, "the dielectric's diffuse: {plastic}");
    assert!(plastic.x > 5.0 * metal.x, "a metal has no diffuse: metal {metal} vs dielectric {plastic}");
    // The light straight down, the view straight down: the specular peak.
    // A black dielectric's reflection is white; a red metal's is red, and
    // far stronger (F0 0.9 vs 0.04).
    let (metal, black) = sun_on_metal_and_dielectric(Vec3::new(0.0, 0.0, -1.0), Vec4::new(0.0, 0.0, 0.0, 1.0), 0.5);
    assert!(black.x > 0.01, "a dielectric reflects: {black}");
    assert!((black.x - black.y).abs() < 0.15 * black.x, "untinted: {black}");
    assert!(metal.x > 5.0 * metal.y, "tinted by the base color: {metal}");
    assert!(metal.x > 4.0 * black.x, "metal reflects far more: {metal} vs {black}");
}

#[test]
fn a_point_light_adds_nothing_past_its_radius() {
    let mut rt = render_thread(RenderThreadMode::Threaded);
    rt.set_cvar(cvars::TONEMAPPER, "0").unwrap();
    let white = rt.create_material(Material::colored(Vec4::new(0.8, 0.8, 0.8, 1.0))).unwrap();
    plane_at(&mut rt, white, 40.0, Mat4::IDENTITY);
    let fam = family(vec![ortho_down(10.0)]);
    let (_, dark) = frame(&mut rt, &fam);
    let radius = 3.0;
    let position = Vec3::new(0.0, 0.0, 1.0);
    rt.add_light(Light::Point(PointLight { position, color: Vec3::ONE, intensity: 20.0, radius, ..Default::default() })).unwrap();
    let (_, lit) = frame(&mut rt, &fam);
    // The world point of a pixel's centre (symmetric about the origin, so
    // the image's row order does not matter).
    let world = |x: u32, y: u32| {
        Vec3::new(
            (x as f32 + 0.5) / W as f32 * 10.0 - 5.0,
            (y as f32 + 0.5) / H as f32 * (10.0 * H as f32 / W as f32) - 10.0 * H as f32 / W as f32 / 2.0,
            0.0,
        )
    };
    let (mut inside, mut outside) = (0, 0);
    for y in 0..H {
        for x in 0..W {
            let d = world(x, y).distance(position);
            if d > radius + 0.1 {
                assert_eq!(lit.pixel(x, y), dark.pixel(x, y), "({x}, {y}) is {d} from the light, past its radius {radius}");
                outside += 1;
            } else if d < radius - 0.5 {
                assert!(luminance(lit.pixel(x, y)) > luminance(dark.pixel(x, y)), "({x}, {y}) at {d}: lit");
                inside += 1;
            }
        }
    }
    assert!(inside > 1000 && outside > 1000, "{inside} inside, {outside} outside");
    // Closer is brighter (inverse square).
    let near = luminance(lit.pixel(W / 2, H / 2));
    let far = luminance(lit.pixel(W / 2 + (W as f32 * 2.0 / 10.0) as u32, H / 2));
    assert!(near > far + 30, "under the light {near} vs 2 units off {far}");
    assert_clean(&mut rt);
}

#[test]
fn sides_facing_away_from_every_light_are_not_black() {
    let mut rt = render_thread(RenderThreadMode::Threaded);
    // The sun shines upwards: the camera above sees only the planes' unlit sides.
    sun_from(&mut rt, Vec3::new(0.0, 0.0, 1.0), 3.0);
    let red = rt.create_material(material(Vec4::new(0.8, 0.1, 0.1, 1.0), 0.0, 0.5, 0.5, Vec3::ZERO)).unwrap();
    let gold = rt.create_material(material(Vec4::new(1.0, 0.78, 0.34, 1.0), 1.0, 0.4, 0.5, Vec3::ZERO)).unwrap();
    plane_at(&mut rt, red, 5.0, Mat4::from_translation(Vec3::new(-3.0, 0.0, 0.0)));
    plane_at(&mut rt, gold, 5.0, Mat4::from_translation(Vec3::new(3.0, 0.0, 0.0)));
    let (_, img) = frame(&mut rt, &family(vec![ortho_down(12.0)]));
    let (r, g) = (img.pixel(W / 4, H / 2), img.pixel(3 * W / 4, H / 2));
    assert!(r[0] > 40 && r[0] > 2 * r[1], "the ambient shows the dielectric's color: {r:?}");
    assert!(g[0] > 40 && g[0] > g[2], "the ambient shows the metal's color: {g:?}");
    // A two-sided plane turned over shows the camera its back face, which
    // shades with the flipped normal: exactly as the plane the right way up.
    let mut rt2 = render_thread(RenderThreadMode::Threaded);
    let white = rt2.create_material(Material::colored(Vec4::new(0.8, 0.8, 0.8, 1.0)).with_two_sided(true)).unwrap();
    let flipped = plane_at(&mut rt2, white, 40.0, Mat4::from_rotation_translation(Quat::from_rotation_x(std::f32::consts::PI), Vec3::ZERO));
    let (_, below) = frame(&mut rt2, &family(vec![ortho_down(10.0)]));
    rt2.remove_primitive(flipped).unwrap();
    plane_at(&mut rt2, white, 40.0, Mat4::IDENTITY);
    let (_, above) = frame(&mut rt2, &family(vec![ortho_down(10.0)]));
    let (b, a) = (centre(&below), centre(&above));
    assert!(luminance(a) > 30, "no light but the sky's: {a:?}");
    assert_eq!(b, a, "a two-sided plane's back face shades with the flipped normal, like its front");
    assert_clean(&mut rt);
    assert_clean(&mut rt2);
}

/// The brightest pixel (linear, summed over RGB) of a small shiny metal
/// sphere at `x` lit from the viewer's side, and the pixel of a flat plane
/// beside it, with geometric specular anti-aliasing at `variance`.
fn shiny_sphere_and_plane(variance: &str, x: f32) -> (f32, [u8; 4]) {
    let mut rt = render_thread(RenderThreadMode::Threaded);
    rt.set_cvar(cvars::TONEMAPPER, "0").unwrap();
    rt.set_cvar(cvars::EXPOSURE, "0.05").unwrap();
    rt.set_cvar(cvars::SPECULAR_AA_VARIANCE, variance).unwrap();
    let chrome = rt.create_material(material(Vec4::new(0.95, 0.95, 0.95, 1.0), 1.0, 0.08, 0.5, Vec3::ZERO)).unwrap();
    let sphere = StaticMeshRenderData::new(vec![shapes::uv_sphere(1.0, 24, 12)]).unwrap();
    rt.add_primitive(Box::new(StaticMeshSceneProxy::new(sphere, vec![chrome])), Mat4::from_translation(Vec3::new(x, 0.0, 0.0))).unwrap();
    plane_at(&mut rt, chrome, 4.0, Mat4::from_translation(Vec3::new(4.0, 0.0, -2.0)));
    sun_from(&mut rt, Vec3::new(0.2, 0.1, -1.0), 3.0);
    // 24 units over 192 px: the sphere is 16 px across, its normal turns
    // about 7 degrees per pixel.
    let (_, image) = frame(&mut rt, &family(vec![ortho_down(24.0)]));
    assert_clean(&mut rt);
    let mut peak = 0.0f32;
    for y in 0..H {
        for x in 0..W / 2 {
            let p = rgb_linear(image.pixel(x, y));
            peak = peak.max(p.x + p.y + p.z);
        }
    }
    (peak, image.pixel(3 * W / 4 - 8, H / 2))
}

/// How much the sphere's highlight changes as it moves by quarter pixels:
/// (max - min) / mean of its brightest pixel over four positions, and the
/// plane's pixel.
fn shimmer(variance: &str) -> (f32, [u8; 4]) {
    let pixel = 24.0 / W as f32;
    let runs: Vec<(f32, [u8; 4])> = (0..4).map(|i| shiny_sphere_and_plane(variance, -4.0 + i as f32 * pixel / 4.0)).collect();
    let sums: Vec<f32> = runs.iter().map(|r| r.0).collect();
    let (min, max) = sums.iter().fold((f32::MAX, 0.0f32), |(lo, hi), &s| (lo.min(s), hi.max(s)));
    ((max - min) / (sums.iter().sum::<f32>() / 4.0), runs[0].1)
}

#[test]
fn geometric_specular_anti_aliasing_steadies_highlights_on_curved_geometry_only() {
    let (off, plane_off) = shimmer("0");
    let (on, plane_on) = shimmer("0.15");
    // A highlight narrower than a pixel is caught or missed by pixel
    // centres as the sphere moves (it shimmers); widened by the normal's
    // variance across the pixel, it is not.
    assert!(off > 0.1, "the highlight shimmers without it: {off}");
    assert!(on < 0.5 * off, "shimmer with {on} vs without {off}");
    // A flat surface's normal does not vary: its shading is unchanged.
    assert_eq!(plane_on, plane_off, "a flat plane is shaded the same");
}
