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
    let mut rt = lights_only(
        1.0,
        &[
            (cvars::SHADOW_MAP_SIZE, "512"),
            (cvars::SHADOW_CSM_FIRST_CASCADE_DISTANCE, "8"),
            (cvars::SHADOW_CSM_MAX_DISTANCE, "80"),
            (cvars::SHADOW_FILTER_QUALITY, filter),
        ],
    );
    lambert_plane(&mut rt, 0.8, 400.0);
    rt.add_light(Light::Directional(DirectionalLight {
        direction: SUN,
        color: Vec3::ONE,
        intensity: 2.0,
        cast_shadows: true,
        ..Default::default()
    }))
    .unwrap();
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

// ----- the shadow atlas: spot and point light shadows -----

/// A render thread lit only by local lights (no sun, no ambient, no tone
/// curve) over a white ground plane.
fn local_lights_only() -> RenderThread {
    let mut rt = lights_only(1.0, &[(cvars::SHADOW_ATLAS_SIZE, "2048")]);
    lambert_plane(&mut rt, 0.8, 60.0);
    rt
}

fn cube_at(rt: &mut RenderThread, center: Vec3, size: f32) -> PrimitiveId {
    let grey = rt.create_material(Material::colored(Vec4::new(0.5, 0.5, 0.5, 1.0))).unwrap();
    let m = Mat4::from_scale_rotation_translation(Vec3::splat(size), Quat::IDENTITY, center);
    rt.add_primitive(Box::new(StaticMeshSceneProxy::new(cube_mesh(), vec![grey])), m).unwrap()
}

/// Where the ray from `light` through `p` meets the ground.
fn ground_through(light: Vec3, p: Vec3) -> Vec3 {
    light + (p - light) * (light.z / (light.z - p.z))
}

/// A camera straight above the origin looking down, 24 units wide.
fn above() -> SceneView {
    SceneView::orthographic(Vec3::new(0.0, 0.0, 20.0), Vec3::ZERO, Vec3::Y, 24.0, 16.0, 0.1, 50.0, Rect::from_size(W, H)).unwrap()
}

#[test]
fn a_spot_lights_shadow_lands_where_its_ray_through_the_caster_meets_the_ground() {
    let mut rt = local_lights_only();
    let light = Vec3::new(-2.0, 1.0, 6.0);
    let spot = SpotLight {
        position: light,
        direction: Vec3::new(0.2, -0.1, -1.0),
        intensity: 60.0,
        radius: 20.0,
        inner_cone: 0.6,
        outer_cone: 0.9,
        cast_shadows: true,
        ..Default::default()
    };
    rt.add_light(Light::Spot(spot)).unwrap();
    let view = above();
    let fam = family(vec![view.clone()]);
    let (_, lit) = frame(&mut rt, &fam);
    let caster = Vec3::new(-0.8, 0.2, 3.0);
    cube_at(&mut rt, caster, 0.8);
    let (stats, img) = frame(&mut rt, &fam);
    assert_clean(&mut rt);
    assert_eq!((stats.shadow.atlas_tiles, stats.shadow.tiles_rendered), (1, 1), "{:?}", stats.shadow);
    let shadow = project(&view, ground_through(light, caster)).0;
    assert!(lum(&img, shadow) * 4 < lum(&lit, shadow), "the spot's shadow at {shadow}: {} vs lit {}", lum(&img, shadow), lum(&lit, shadow));
    // Well beside the shadow the ground is lit as before.
    let beside = project(&view, ground_through(light, caster) + Vec3::new(2.0, 0.0, 0.0)).0;
    assert!(lum(&img, beside) + 6 >= lum(&lit, beside), "beside the shadow at {beside}");
    // The next frame keeps the tile.
    let (stats, again) = frame(&mut rt, &fam);
    assert_eq!((stats.shadow.tiles_rendered, stats.shadow.tiles_cached), (0, 1));
    assert_images_equal(&img, &again, "a kept tile shadows as the rendered one");
}

#[test]
fn a_point_lights_shadows_land_right_through_every_cube_face_and_across_their_edges() {
    let mut rt = local_lights_only();
    let light = Vec3::new(0.0, 0.0, 4.0);
    rt.add_light(Light::Point(PointLight { position: light, intensity: 40.0, radius: 20.0, cast_shadows: true, ..Default::default() }))
        .unwrap();
    let view = above();
    let fam = family(vec![view.clone()]);
    let (_, lit) = frame(&mut rt, &fam);
    // Below the light (-Z), beside it along ±X and ±Y, and on the diagonals
    // (where two faces meet).
    let casters = [
        Vec3::new(0.6, 0.3, 2.0),
        Vec3::new(2.0, 0.3, 2.5),
        Vec3::new(-2.0, -0.2, 2.5),
        Vec3::new(0.2, 2.0, 2.5),
        Vec3::new(-0.3, -2.0, 2.5),
        Vec3::new(1.7, 1.7, 2.5),
        Vec3::new(-1.7, 1.7, 2.5),
    ];
    for c in casters {
        cube_at(&mut rt, c, 0.5);
    }
    let (stats, img) = frame(&mut rt, &fam);
    assert_clean(&mut rt);
    assert_eq!((stats.shadow.atlas_tiles, stats.shadow.tiles_rendered), (6, 6));
    for c in casters {
        let p = ground_through(light, c);
        let px = project(&view, p).0;
        assert!(lum(&img, px) * 4 < lum(&lit, px), "the shadow of the cube at {c} is not at {p} ({px})");
    }
}

#[test]
fn cached_tiles_give_the_image_of_re_rendered_ones_and_only_touched_tiles_render() {
    let run = |cache: &str| {
        let mut rt = local_lights_only();
        rt.set_cvar(cvars::SHADOW_CACHE, cache).unwrap();
        let mut lights = Vec::new();
        for i in 0..6 {
            let position = Vec3::new(i as f32 * 3.5 - 8.75, if i % 2 == 0 { 2.0 } else { -2.0 }, 3.0);
            let light = if i % 2 == 0 {
                Light::Point(PointLight { position, intensity: 12.0, radius: 5.0, cast_shadows: true, ..Default::default() })
            } else {
                Light::Spot(SpotLight { position, intensity: 20.0, radius: 6.0, outer_cone: 0.8, cast_shadows: true, ..Default::default() })
            };
            lights.push(rt.add_light(light).unwrap());
        }
        let cubes: Vec<PrimitiveId> = (0..6).map(|i| cube_at(&mut rt, Vec3::new(i as f32 * 3.5 - 8.2, 0.0, 1.0), 0.8)).collect();
        let fam = family(vec![above()]);
        let mut out = Vec::new();
        for f in 0..6 {
            match f {
                // A cube moves within reach of lights 0 (a point light) and 1 (a spot light) only.
                2 => rt
                    .update_primitive_transform(
                        cubes[0],
                        Mat4::from_scale_rotation_translation(Vec3::splat(0.8), Quat::IDENTITY, Vec3::new(-8.9, 1.0, 1.0)),
                    )
                    .unwrap(),
                // Light 3 (a spot light) moves.
                4 => rt
                    .update_light_transforms(vec![(
                        lights[3],
                        Mat4::from_rotation_translation(Quat::from_rotation_y(std::f32::consts::FRAC_PI_2), Vec3::new(1.8, -2.2, 3.2)),
                    )])
                    .map(|refused| assert!(refused.is_empty(), "{refused:?}"))
                    .unwrap(),
                _ => {}
            }
            out.push(frame(&mut rt, &fam));
        }
        assert_clean(&mut rt);
        out
    };
    let cached = run("1");
    let uncached = run("0");
    // 3 point lights (18 tiles) and 3 spot lights (3).
    let counts: Vec<(u64, u64)> = cached.iter().map(|(s, _)| (s.shadow.tiles_rendered, s.shadow.tiles_cached)).collect();
    assert_eq!(counts[0], (21, 0), "the first frame renders every tile");
    assert_eq!(counts[1], (0, 21), "nothing changed: every tile kept");
    assert_eq!(counts[2], (7, 14), "the cube moved between lights 0 and 1, the two that reach it: light 0's six faces and light 1's tile");
    assert_eq!(counts[3], (0, 21));
    assert_eq!(counts[4], (1, 20), "light 3 moved: its one tile only");
    assert!(uncached.iter().all(|(s, _)| s.shadow.tiles_rendered == 21), "r.Shadow.Cache=0 renders every tile");
    for (f, ((_, a), (_, b))) in cached.iter().zip(&uncached).enumerate() {
        assert_images_equal(a, b, &format!("frame {f}: cached tiles vs rendered tiles"));
    }
}

#[test]
fn shadowed_lights_render_the_same_serial_and_parallel_and_in_flight() {
    let render = |serial: bool, frames_in_flight: u32| {
        let mut rt = render_thread_in_flight(RenderThreadMode::Threaded, 3, frames_in_flight);
        rt.set_cvar(cvars::SKY_LIGHT_INTENSITY, "0.2").unwrap();
        if serial {
            rt.set_cvar(cvars::PARALLEL_PASS_SETUP, "0").unwrap();
            rt.set_cvar(cvars::PARALLEL_RECORD, "0").unwrap();
        }
        let white = rt.create_material(Material::colored(Vec4::new(0.8, 0.8, 0.8, 1.0))).unwrap();
        plane_at(&mut rt, white, 60.0, Mat4::IDENTITY);
        let mats: Vec<MaterialId> = colors(3).into_iter().map(|m| rt.create_material(m).unwrap()).collect();
        cube_grid(&mut rt, 100, &mats, 2.0);
        let mut rng = Rng::new(3);
        for i in 0..200 {
            let position = Vec3::new(rng.range_f32(-10.0, 10.0), rng.range_f32(-7.0, 7.0), rng.range_f32(1.5, 3.0));
            let shadowed = i % 10 == 0;
            rt.add_light(Light::Point(PointLight {
                position,
                intensity: 1.5,
                radius: 3.0,
                cast_shadows: shadowed,
                color: Vec3::new(rng.next_f32(), 0.6, 0.8),
                ..Default::default()
            }))
            .unwrap();
        }
        settled_frame(&mut rt, &family(vec![top_view(16.0)]))
    };
    let (stats, parallel) = render(false, 2);
    assert_eq!(stats.shadow.atlas_tiles, 20 * 6, "{:?}", stats.shadow);
    let (_, serial) = render(true, 2);
    assert_images_equal(&parallel, &serial, "serial vs parallel");
    let (_, one) = render(false, 1);
    let (_, three) = render(false, 3);
    assert_images_equal(&one, &three, "frames in flight 1 vs 3");
    assert_images_equal(&one, &parallel, "1 vs 2 frames in flight");
}

/// Pixels of `img` in the left (`left`) or right half of the image that are
/// darker than 90% of the same pixel in `lit` (both lit there).
fn darkened(img: &Image, lit: &Image, left: bool) -> (usize, usize) {
    let (mut dark, mut total) = (0, 0);
    let xs = if left { 0..W / 2 } else { W / 2..W };
    for y in 0..H {
        for x in xs.clone() {
            let l = luminance(lit.pixel(x, y));
            if l < 20 {
                continue;
            }
            total += 1;
            dark += usize::from(luminance(img.pixel(x, y)) * 10 < l * 9);
        }
    }
    (dark, total)
}

#[test]
fn each_lights_shadow_bias_pushes_its_own_lookups_and_a_large_one_detaches_the_shadow() {
    // Two spot lights, one per half of the image, each over a cube resting
    // on the plane: the left one with a large depth bias (its lookups pushed
    // 150 texels toward the light: the shadow pulls away from the cube), the
    // right one with the default.
    let render = |shadows: bool| {
        let mut rt = local_lights_only();
        for (x, shadow_bias) in [(-6.0, ShadowBias { depth: 150.0, normal: 0.0 }), (6.0, ShadowBias::LOCAL)] {
            let spot = SpotLight {
                position: Vec3::new(x - 2.0, -2.0, 4.0),
                direction: Vec3::new(0.5, 0.5, -1.0),
                intensity: 40.0,
                radius: 30.0,
                outer_cone: 0.9,
                cast_shadows: shadows,
                shadow_bias,
                ..Default::default()
            };
            rt.add_light(Light::Spot(spot)).unwrap();
            cube_at(&mut rt, Vec3::new(x, 0.0, 0.75), 1.5);
        }
        let (stats, img) = settled_frame(&mut rt, &family(vec![above()]));
        assert_eq!(stats.shadow.atlas_tiles, if shadows { 2 } else { 0 });
        img
    };
    let (lit, shadowed) = (render(false), render(true));
    test_support::save_test_output(&shadowed, "shadows-spot-bias");
    let (biased, _) = darkened(&shadowed, &lit, true);
    let (default, total) = darkened(&shadowed, &lit, false);
    assert!(total > 1000 && default > 100, "the default bias: the cube's shadow ({default} of {total} pixels darkened)");
    assert!(biased * 10 < default * 7, "the large bias detaches and shrinks the left shadow: {biased} vs {default} pixels");
}

#[test]
fn the_suns_shadow_bias_is_its_own_depth_and_normal_offset() {
    // One caster in the first cascade; the sun with its default bias, then
    // with a large depth bias, then with a large normal bias: either pushes
    // the ground's lookups past the caster, and its shadow goes.
    let shadow_at = |shadow_bias: ShadowBias| {
        let mut rt = lights_only(1.0, &[(cvars::SHADOW_CSM_FIRST_CASCADE_DISTANCE, "8"), (cvars::SHADOW_CSM_MAX_DISTANCE, "80")]);
        lambert_plane(&mut rt, 0.8, 400.0);
        let sun = DirectionalLight { direction: SUN, intensity: 2.0, shadow_bias, ..Default::default() };
        rt.add_light(Light::Directional(sun)).unwrap();
        let center = Vec3::new(0.0, 5.0, 1.2);
        cube_at(&mut rt, center, 0.8);
        let view = camera();
        let (_, img) = settled_frame(&mut rt, &family(vec![view.clone()]));
        lum(&img, project(&view, ground_shadow_of(center)).0)
    };
    let (default, deep, along_normal) = (
        shadow_at(ShadowBias::DIRECTIONAL),
        shadow_at(ShadowBias { depth: 400.0, normal: 0.0 }),
        shadow_at(ShadowBias { depth: 1.5, normal: 400.0 }),
    );
    assert!(default * 4 < deep, "a large depth bias lifts the shadow: {default} vs {deep}");
    assert!(default * 4 < along_normal, "a large normal bias lifts the shadow: {default} vs {along_normal}");
}
