//! Cascaded shadow maps on the real device (validation on, zero messages
//! asserted): a caster's shadow lands where the light's ray through it
//! meets the ground, in each of the four cascades; a long caster's shadow
//! runs on across the cascades' borders with no gap or jump; a lit plane
//! shows no acne in any cascade; the filter settings; 4 cascades vs 1.

mod common;

use common::*;
use glam::{Mat4, Quat, Vec2, Vec3, Vec4};
use renderer::shadow_cascades::CascadeSettings;
use renderer::*;
use rhi_vulkan::{Image, Rect};

/// The light's direction: down at 45 degrees towards +X, so a caster's
/// shadow lies beside it in the image.
const SUN: Vec3 = Vec3::new(1.0, 0.1, -1.0);

/// A camera above the ground looking along +Y and down, seeing depths
/// from about 2 to 80 units.
fn camera() -> SceneView {
    SceneView::perspective(Vec3::new(0.0, -3.0, 4.0), Vec3::new(0.0, 20.0, 0.0), Vec3::Z, 1.0, 0.1, 200.0, Rect::from_size(W, H)).unwrap()
}

/// A render thread with a lit-or-black look: the sun only (no ambient, no
/// tone curve), cascades between 8 and 80 units, 512² tiles, `filter`.
fn shadowed(filter: &str) -> RenderThread {
    let mut rt = render_thread(RenderThreadMode::Threaded);
    for (name, value) in [
        (cvars::TONEMAPPER, "0"),
        (cvars::SKY_LIGHT_INTENSITY, "0"),
        (cvars::SHADOW_MAP_SIZE, "512"),
        (cvars::SHADOW_CSM_FIRST_CASCADE_DISTANCE, "8"),
        (cvars::SHADOW_CSM_MAX_DISTANCE, "80"),
        (cvars::SHADOW_FILTER_QUALITY, filter),
    ] {
        rt.set_cvar(name, value).unwrap();
    }
    let white = rt.create_material(material(Vec4::new(0.8, 0.8, 0.8, 1.0), 0.0, 1.0, 0.0, Vec3::ZERO)).unwrap();
    plane_at(&mut rt, white, 400.0, Mat4::IDENTITY);
    rt.add_light(Light::Directional(DirectionalLight { direction: SUN, color: Vec3::ONE, intensity: 2.0, cast_shadows: true })).unwrap();
    rt
}

/// The pixel (fractional) where world point `p` lands, and its view depth.
fn project(view: &SceneView, p: Vec3) -> (Vec2, f32) {
    let clip = view.view_proj() * p.extend(1.0);
    let ndc = clip.truncate() / clip.w;
    let depth = -view.view_matrix.transform_point3(p).z;
    (Vec2::new((ndc.x * 0.5 + 0.5) * W as f32, (ndc.y * 0.5 + 0.5) * H as f32), depth)
}

/// Where the light's ray through `p` meets the ground (z = 0).
fn ground_shadow_of(p: Vec3) -> Vec3 {
    let d = SUN.normalize();
    p + d * (p.z / -d.z)
}

fn lum(img: &Image, px: Vec2) -> u32 {
    luminance(img.pixel(px.x as u32, px.y as u32))
}

/// The cascades' split depths, as `shadowed` sets them up.
fn splits() -> Vec<f32> {
    CascadeSettings { count: 4, first_distance: 8.0, max_distance: 80.0, transition: 0.2, tile_size: 512 }.splits(0.1, 200.0)
}

/// The cascade (index) holding view depth `depth`.
fn cascade_of(depth: f32) -> usize {
    let splits = splits();
    (0..4).find(|&i| depth <= splits[i + 1]).unwrap_or(4)
}

#[test]
fn a_casters_shadow_lands_where_the_lights_ray_meets_the_ground_in_every_cascade() {
    let mut rt = shadowed("0");
    let view = camera();
    let fam = family(vec![view.clone()]);
    let (_, lit) = frame(&mut rt, &fam);
    // Cubes along the view, each sized to about 8 pixels and raised three
    // sizes above the ground, so its shadow is apart from it in the image.
    let cube = cube_mesh();
    let grey = rt.create_material(Material::colored(Vec4::new(0.5, 0.5, 0.5, 1.0))).unwrap();
    let mut casters = Vec::new();
    for y in [1.0f32, 3.0, 6.0, 11.0, 17.0, 26.0, 38.0, 55.0] {
        let size = 0.11 * (y + 3.0);
        let center = Vec3::new(-0.3 * size, y, 3.0 * size);
        let m = Mat4::from_scale_rotation_translation(Vec3::splat(size), Quat::IDENTITY, center);
        rt.add_primitive(Box::new(StaticMeshSceneProxy::new(cube.clone(), vec![grey])), m).unwrap();
        casters.push((center, size));
    }
    let (stats, img) = frame(&mut rt, &fam);
    test_support::save_test_output(&img, "shadows-casters");
    assert_clean(&mut rt);
    assert_eq!(stats.shadow.cascades, 4);
    let mut seen = [false; 4];
    for (center, size) in casters {
        let (px, depth) = project(&view, ground_shadow_of(center));
        if !(px.x >= 1.0 && px.y >= 1.0 && px.x < W as f32 - 1.0 && px.y < H as f32 - 1.0) {
            continue;
        }
        let cascade = cascade_of(depth);
        assert!(cascade < 4, "the shadow at depth {depth} is inside the cascades");
        seen[cascade] = true;
        // Dark at the shadow's center, as lit as before beside it.
        assert!(
            lum(&img, px) * 4 < lum(&lit, px),
            "cascade {cascade}: the shadow of the cube at {center} is not at {px}: {} vs lit {}",
            lum(&img, px),
            lum(&lit, px)
        );
        let (side, _) = project(&view, ground_shadow_of(center) + Vec3::new(1.6 * size, 0.0, 0.0));
        assert!(lum(&img, side) + 6 >= lum(&lit, side), "cascade {cascade}: beside the shadow at {side} is lit");
    }
    assert_eq!(seen, [true; 4], "a caster in every cascade");
}

#[test]
fn a_long_shadow_runs_across_the_cascade_borders_with_no_gap_or_jump() {
    for filter in ["0", "1", "2"] {
        let mut rt = shadowed(filter);
        let view = camera();
        let fam = family(vec![view.clone()]);
        let (_, lit) = frame(&mut rt, &fam);
        // A bar along +Y, 1.5 wide, 3 above the ground, from y = 1 to 75:
        // its shadow lies 3 units to its side.
        let bar = Mat4::from_scale_rotation_translation(Vec3::new(1.5, 74.0, 0.3), Quat::IDENTITY, Vec3::new(-3.0, 38.0, 3.0));
        let grey = rt.create_material(Material::colored(Vec4::new(0.5, 0.5, 0.5, 1.0))).unwrap();
        rt.add_primitive(Box::new(StaticMeshSceneProxy::new(cube_mesh(), vec![grey])), bar).unwrap();
        let (_, img) = frame(&mut rt, &fam);
        test_support::save_test_output(&img, &format!("shadows-bar-{filter}"));
        assert_clean(&mut rt);
        let splits = splits();
        // Along the shadow's middle line: dark everywhere in the cascades'
        // range, and just before and after each border alike.
        let shadow_at = |y: f32| ground_shadow_of(Vec3::new(-3.0, y, 2.85));
        let mut checked = 0;
        for k in 0..200 {
            let y = 3.0 + k as f32 * 0.35;
            let (px, depth) = project(&view, shadow_at(y));
            if !(px.x >= 0.0 && px.y >= 0.0 && px.x < W as f32 && px.y < H as f32) || depth > 50.0 {
                continue;
            }
            assert!(lum(&img, px) * 3 < lum(&lit, px), "filter {filter}: no shadow at y = {y} (depth {depth}, pixel {px})");
            checked += 1;
        }
        assert!(checked > 40, "{checked} points along the shadow");
        for border in &splits[1..4] {
            // The world y whose shadow point is at this depth, found by stepping.
            let y = (0..4000).map(|k| 1.0 + k as f32 * 0.02).find(|&y| project(&view, shadow_at(y)).1 >= *border).unwrap();
            let before = lum(&img, project(&view, shadow_at(y - 0.3)).0);
            let after = lum(&img, project(&view, shadow_at(y + 0.3)).0);
            assert!(before.abs_diff(after) <= 12, "filter {filter}: at the border at depth {border}: {before} vs {after}");
        }
    }
}

#[test]
fn a_lit_plane_shows_no_acne_in_any_cascade() {
    let mut rt = shadowed("1");
    let fam = family(vec![camera()]);
    let (stats, on) = frame(&mut rt, &fam);
    assert_eq!(stats.shadow.cascades, 4, "the plane casts: every cascade is drawn");
    rt.set_cvar(cvars::SHADOW_ENABLE, "0").unwrap();
    let (off_stats, off) = frame(&mut rt, &fam);
    assert_eq!(off_stats.shadow.cascades, 0);
    let mut lit = 0;
    for y in 0..H {
        for x in 0..W {
            let (a, b) = (luminance(on.pixel(x, y)), luminance(off.pixel(x, y)));
            assert!(a.abs_diff(b) <= 3, "({x}, {y}): {a} with shadows, {b} without");
            lit += u32::from(b > 60);
        }
    }
    assert!(lit > W * H / 3, "{lit} lit pixels of the plane compared");
    assert_clean(&mut rt);
}

#[test]
fn one_cascade_covers_the_whole_distance_and_cascades_are_deterministic() {
    // One cascade up to the max distance: the nearest caster still shadows.
    let mut rt = shadowed("1");
    rt.set_cvar(cvars::SHADOW_CSM_MAX_CASCADES, "1").unwrap();
    rt.set_cvar(cvars::SHADOW_MAP_SIZE, "2048").unwrap();
    let view = camera();
    let fam = family(vec![view.clone()]);
    let (_, lit) = frame(&mut rt, &fam);
    let center = Vec3::new(0.0, 6.0, 2.4);
    let grey = rt.create_material(Material::colored(Vec4::new(0.5, 0.5, 0.5, 1.0))).unwrap();
    let m = Mat4::from_scale_rotation_translation(Vec3::splat(0.8), Quat::IDENTITY, center);
    rt.add_primitive(Box::new(StaticMeshSceneProxy::new(cube_mesh(), vec![grey])), m).unwrap();
    let (stats, one) = frame(&mut rt, &fam);
    test_support::save_test_output(&one, "shadows-one-cascade");
    test_support::save_test_output(&lit, "shadows-one-cascade-lit");
    assert_eq!(stats.shadow.cascades, 1);
    let px = project(&view, ground_shadow_of(center)).0;
    assert!(lum(&one, px) * 4 < lum(&lit, px), "one cascade: the shadow at {px}");
    // The same frame again, and with four cascades twice: byte-identical.
    assert_images_equal(&one, &frame(&mut rt, &fam).1, "one cascade, frame after frame");
    rt.set_cvar(cvars::SHADOW_CSM_MAX_CASCADES, "4").unwrap();
    let (_, four) = frame(&mut rt, &fam);
    assert_images_equal(&four, &frame(&mut rt, &fam).1, "four cascades, frame after frame");
    assert_clean(&mut rt);
}
