//! Lights at scale on the real device (validation on, zero messages
//! asserted): a point, spot and directional light's irradiance on a flat
//! Lambert plane equals the formula of `renderer::Light`'s docs (read back,
//! linear, no tone mapper, no ambient); the spot cone's edge; hundreds of
//! clustered lights against the same sum done on the CPU, serial =
//! parallel and frames in flight 1 = 3; a crowded cluster lists every
//! light; lights rebuild no mesh draw command; bad lights are typed errors.

mod common;

use common::*;
use glam::{Mat4, Vec3, Vec4};
use renderer::*;
use rhi_vulkan::Image;

/// Base colour of the test plane: a Lambert surface (specular 0: F0 = 0,
/// no Fresnel, no highlight), so its radiance is `ALBEDO / π · E`.
const ALBEDO: f32 = 0.8;
/// The ortho view's width in scene units.
const WIDTH: f32 = 12.0;

/// The world point (z = 0) under pixel `(x, y)`'s centre in `ortho_down(WIDTH)`.
fn world_of(x: u32, y: u32) -> Vec3 {
    let height = WIDTH * H as f32 / W as f32;
    Vec3::new((x as f32 + 0.5) / W as f32 * WIDTH - WIDTH / 2.0, height / 2.0 - (y as f32 + 0.5) / H as f32 * height, 0.0)
}

/// The radiance of pixel (x, y), linear, undone from the exposure.
fn radiance(img: &Image, x: u32, y: u32, exposure: f32) -> f32 {
    rgb_linear(img.pixel(x, y)).x / exposure
}

/// Compares each sampled pixel with `expected` (radiance); tolerates the
/// 8-bit sRGB rounding (relative 3%, or an absolute floor near black).
fn assert_matches(img: &Image, exposure: f32, what: &str, expected: impl Fn(Vec3) -> f32) -> usize {
    let mut compared = 0;
    for y in (2..H).step_by(7) {
        for x in (1..W).step_by(5) {
            let (got, want) = (radiance(img, x, y, exposure), expected(world_of(x, y)));
            let tolerance = 0.03 * want + 0.004 / exposure;
            assert!((got - want).abs() <= tolerance, "{what}: pixel ({x}, {y}) at {}: radiance {got}, the formula {want}", world_of(x, y));
            compared += usize::from(want * exposure > 0.02);
        }
    }
    compared
}

#[test]
fn a_point_light_gives_the_inverse_square_irradiance() {
    let exposure = 0.5;
    let mut rt = lights_only(exposure, &[]);
    lambert_plane(&mut rt, ALBEDO, 40.0);
    let light = PointLight { position: Vec3::new(1.0, 0.5, 1.5), color: Vec3::ONE, intensity: 4.0, radius: 5.0, ..Default::default() };
    rt.add_light(Light::Point(light)).unwrap();
    let (stats, img) = frame(&mut rt, &family(vec![ortho_down(WIDTH)]));
    assert_clean(&mut rt);
    let lit = assert_matches(&img, exposure, "point", |p| {
        let cos = light.position.z / p.distance(light.position);
        ALBEDO / std::f32::consts::PI * light.irradiance_at(p).x * cos
    });
    assert!(lit > 100, "{lit} lit pixels compared");
    assert_eq!((stats.lights.point, stats.lights.visible), (1, 1));
    assert!(stats.clusters.count > 0 && stats.clusters.max_lights == 1, "{:?}", stats.clusters);
}

#[test]
fn a_spot_light_gives_its_cone_and_its_edge_lands_where_expected() {
    let exposure = 0.5;
    let mut rt = lights_only(exposure, &[]);
    lambert_plane(&mut rt, ALBEDO, 40.0);
    let spot = SpotLight {
        position: Vec3::new(-0.5, 0.0, 2.0),
        direction: Vec3::new(0.3, 0.0, -1.0).normalize(),
        intensity: 8.0,
        radius: 8.0,
        inner_cone: 0.35,
        outer_cone: 0.6,
        ..Default::default()
    };
    rt.add_light(Light::Spot(spot)).unwrap();
    let (stats, img) = frame(&mut rt, &family(vec![ortho_down(WIDTH)]));
    assert_clean(&mut rt);
    let lit = assert_matches(&img, exposure, "spot", |p| {
        let cos = spot.position.z / p.distance(spot.position);
        ALBEDO / std::f32::consts::PI * spot.irradiance_at(p).x * cos
    });
    assert!(lit > 25, "{lit} lit pixels compared");
    // Along the centre row, the cone's outer edge: the last lit pixel on
    // each side is within a pixel of where the outer cone meets the plane.
    let y = H / 2;
    let angle = |x: u32| (world_of(x, y) - spot.position).normalize().angle_between(spot.direction);
    let lit_xs: Vec<u32> = (0..W).filter(|&x| img.pixel(x, y)[0] > 0).collect();
    let (first, last) = (*lit_xs.first().unwrap(), *lit_xs.last().unwrap());
    assert!(angle(first) <= spot.outer_cone && angle(first.saturating_sub(2)) > spot.outer_cone - 0.02, "left edge at {first}");
    assert!(angle(last) <= spot.outer_cone && angle(last + 2) > spot.outer_cone - 0.02, "right edge at {last}");
    assert_eq!((stats.lights.spot, stats.lights.point), (1, 0));
}

#[test]
fn directional_lights_give_illuminance_times_cosine_and_up_to_four_shade() {
    let exposure = 0.25;
    let mut rt = lights_only(exposure, &[]);
    lambert_plane(&mut rt, ALBEDO, 40.0);
    let fam = family(vec![ortho_down(WIDTH)]);
    let mut expected = 0.0;
    for (i, d) in
        [Vec3::new(0.0, 0.0, -1.0), Vec3::new(1.0, 0.0, -1.0), Vec3::new(0.0, -1.0, -2.0), Vec3::new(-1.0, 1.0, -1.0)].iter().enumerate()
    {
        rt.add_light(Light::Directional(DirectionalLight {
            direction: *d,
            color: Vec3::ONE,
            intensity: 0.6,
            cast_shadows: i == 0,
            ..Default::default()
        }))
        .unwrap();
        expected += ALBEDO / std::f32::consts::PI * 0.6 * (-d.normalize().z);
        let (stats, img) = frame(&mut rt, &fam);
        assert_matches(&img, exposure, &format!("{} directional", i + 1), |_| expected);
        assert_eq!(stats.lights.directional, i as u64 + 1);
    }
    // A fifth is refused on the game thread, and nothing changes.
    let fifth = Light::Directional(DirectionalLight {
        direction: Vec3::NEG_Z,
        color: Vec3::ONE,
        intensity: 5.0,
        cast_shadows: false,
        ..Default::default()
    });
    assert!(matches!(rt.add_light(fifth), Err(RendererError::InvalidLight { light: None, .. })));
    let (stats, img) = frame(&mut rt, &fam);
    assert_matches(&img, exposure, "after the refused fifth", |_| expected);
    assert_eq!(stats.lights.directional, 4);
    assert_clean(&mut rt);
}

/// `n` point lights of small radius over the plane, on a jittered grid.
fn scattered_lights(n: usize, seed: u64) -> Vec<PointLight> {
    let mut rng = Rng::new(seed);
    (0..n)
        .map(|_| PointLight {
            position: Vec3::new(rng.range_f32(-7.0, 7.0), rng.range_f32(-5.0, 5.0), rng.range_f32(0.2, 1.0)),
            color: Vec3::new(rng.range_f32(0.2, 1.0), rng.range_f32(0.2, 1.0), rng.range_f32(0.2, 1.0)),
            intensity: rng.range_f32(0.1, 0.6),
            radius: rng.range_f32(0.5, 2.5),
            ..Default::default()
        })
        .collect()
}

/// A perspective camera looking down at the plane at a slant (the grid's
/// depth slices matter), and the world point on z = 0 under a pixel.
fn slanted_view() -> SceneView {
    SceneView::perspective(Vec3::new(0.0, -9.0, 7.0), Vec3::new(0.0, 0.0, 0.0), Vec3::Z, 1.1, 0.1, 100.0, rhi_vulkan::Rect::from_size(W, H))
        .unwrap()
}

fn ground_point(view: &SceneView, x: u32, y: u32) -> Option<Vec3> {
    let inv = view.view_proj().inverse();
    let ndc = glam::Vec2::new((x as f32 + 0.5) / W as f32 * 2.0 - 1.0, (y as f32 + 0.5) / H as f32 * 2.0 - 1.0);
    let (a, b) = (inv.project_point3(ndc.extend(0.0)), inv.project_point3(ndc.extend(1.0)));
    let t = a.z / (a.z - b.z);
    (0.0..=1.0).contains(&t).then(|| a + (b - a) * t)
}

#[test]
fn hundreds_of_clustered_lights_match_the_cpu_sum_serial_parallel_and_in_flight() {
    let lights = scattered_lights(400, 11);
    let exposure = 0.5;
    let render = |serial: bool, frames_in_flight: u32| {
        let mut rt = render_thread_in_flight(RenderThreadMode::Threaded, 3, frames_in_flight);
        for (name, value) in [(cvars::TONEMAPPER, "0"), (cvars::SKY_LIGHT_INTENSITY, "0"), (cvars::EXPOSURE, "0.5")] {
            rt.set_cvar(name, value).unwrap();
        }
        // Small tiles and many slices: many clusters, each light in several.
        rt.set_cvar(cvars::LIGHT_GRID_PIXEL_SIZE, "8").unwrap();
        if serial {
            rt.set_cvar(cvars::PARALLEL_PASS_SETUP, "0").unwrap();
            rt.set_cvar(cvars::PARALLEL_RECORD, "0").unwrap();
        }
        lambert_plane(&mut rt, ALBEDO, 40.0);
        for l in &lights {
            rt.add_light(Light::Point(*l)).unwrap();
        }
        settled_frame(&mut rt, &family(vec![slanted_view()]))
    };
    let (stats, parallel) = render(false, 2);
    let view = slanted_view();
    let mut compared = 0;
    for y in (0..H).step_by(3) {
        for x in (0..W).step_by(3) {
            let Some(p) = ground_point(&view, x, y).filter(|p| p.x.abs() < 19.0 && p.y.abs() < 19.0) else { continue };
            let want: Vec3 = lights
                .iter()
                .map(|l| l.irradiance_at(p) * (l.position.z / p.distance(l.position)) * ALBEDO / std::f32::consts::PI)
                .sum::<Vec3>()
                * exposure;
            let got = rgb_linear(parallel.pixel(x, y));
            if want.max_element() < 0.95 {
                let err = (got - want).abs().max_element();
                assert!(err <= 0.03 * want.max_element() + 0.004, "pixel ({x}, {y}) at {p}: {got} vs the CPU's sum {want}");
                compared += 1;
            }
        }
    }
    assert!(compared > 1000, "{compared} pixels compared");
    assert!(stats.clusters.max_lights > 8, "more lights in a cluster than the old cap: {:?}", stats.clusters);
    assert_eq!(stats.lights.point, 400);
    let (_, serial) = render(true, 2);
    assert_images_equal(&parallel, &serial, "serial vs parallel");
    let (_, one) = render(false, 1);
    let (_, three) = render(false, 3);
    assert_images_equal(&one, &three, "frames in flight 1 vs 3");
    assert_images_equal(&parallel, &one, "2 vs 1 frames in flight");
}

#[test]
fn a_crowded_cluster_shades_every_one_of_its_lights() {
    // 600 lights on one point shade as one light 600 times as bright.
    let exposure = 0.5;
    let light = PointLight { position: Vec3::new(0.0, 0.0, 1.0), intensity: 0.005, radius: 4.0, ..Default::default() };
    let mut many = lights_only(exposure, &[]);
    lambert_plane(&mut many, ALBEDO, 40.0);
    for _ in 0..600 {
        many.add_light(Light::Point(light)).unwrap();
    }
    let (stats, img) = frame(&mut many, &family(vec![ortho_down(WIDTH)]));
    assert_clean(&mut many);
    assert!(stats.clusters.max_lights >= 600, "{:?}", stats.clusters);
    let one = PointLight { intensity: 3.0, ..light };
    let lit = assert_matches(&img, exposure, "600 lights", |p| {
        ALBEDO / std::f32::consts::PI * one.irradiance_at(p).x * (1.0 / p.distance(one.position))
    });
    assert!(lit > 100);
}

#[test]
fn adding_moving_and_removing_lights_rebuilds_no_mesh_draw_command() {
    let mut rt = render_thread(RenderThreadMode::Threaded);
    let mats: Vec<MaterialId> = colors(3).into_iter().map(|m| rt.create_material(m).unwrap()).collect();
    cube_grid(&mut rt, 64, &mats, 1.5);
    let fam = family(vec![top_view(14.0)]);
    frame(&mut rt, &fam);
    let mut ids = Vec::new();
    for i in 0..20u32 {
        // Add two, move every light, remove one.
        for k in 0..2 {
            let position = Vec3::new((i as f32 * 0.7 + k as f32).sin() * 5.0, (i as f32 * 0.3).cos() * 5.0, 1.5);
            let light = if k == 0 {
                Light::Point(PointLight { position, intensity: 3.0, radius: 4.0, ..Default::default() })
            } else {
                Light::Spot(SpotLight { position, intensity: 3.0, radius: 4.0, ..Default::default() })
            };
            ids.push(rt.add_light(light).unwrap());
        }
        let moves = ids
            .iter()
            .enumerate()
            .map(|(j, id)| (*id, Mat4::from_translation(Vec3::new(j as f32 % 6.0 - 3.0, i as f32 % 5.0 - 2.0, 1.0))))
            .collect();
        rt.update_light_transforms(moves).unwrap();
        rt.remove_light(ids.remove(0)).unwrap();
        let (stats, _) = frame(&mut rt, &fam);
        assert_eq!((stats.cached_commands_built, stats.dynamic_commands_built), (0, 0), "frame {i}: {stats:?}");
        assert_eq!(stats.lights.point + stats.lights.spot, ids.len() as u64, "frame {i}");
    }
    assert_clean(&mut rt);
}

#[test]
fn a_moved_light_shades_where_it_moved_to() {
    // The transform path: the light keeps its parameters, takes the new place.
    let exposure = 0.5;
    let mut rt = lights_only(exposure, &[]);
    lambert_plane(&mut rt, ALBEDO, 40.0);
    let light = PointLight { position: Vec3::new(-3.0, 0.0, 1.0), intensity: 2.0, radius: 3.0, ..Default::default() };
    let id = rt.add_light(Light::Point(light)).unwrap();
    let target = Vec3::new(2.5, 1.0, 1.2);
    rt.update_light_transforms(vec![(id, Mat4::from_translation(target))]).unwrap();
    let (_, img) = frame(&mut rt, &family(vec![ortho_down(WIDTH)]));
    let moved = PointLight { position: target, ..light };
    assert_matches(&img, exposure, "moved", |p| ALBEDO / std::f32::consts::PI * moved.irradiance_at(p).x * (target.z / p.distance(target)));
    assert_clean(&mut rt);
}

#[test]
fn bad_lights_are_typed_errors_and_change_nothing() {
    let mut rt = lights_only(0.5, &[]);
    lambert_plane(&mut rt, ALBEDO, 40.0);
    let good = rt
        .add_light(Light::Point(PointLight { position: Vec3::new(0.0, 0.0, 1.0), intensity: 2.0, radius: 3.0, ..Default::default() }))
        .unwrap();
    let fam = family(vec![ortho_down(WIDTH)]);
    let (_, before) = frame(&mut rt, &fam);
    let bad = [
        Light::Point(PointLight { position: Vec3::new(f32::NAN, 0.0, 1.0), ..Default::default() }),
        Light::Point(PointLight { radius: -1.0, ..Default::default() }),
        Light::Spot(SpotLight { inner_cone: 0.7, outer_cone: 0.2, ..Default::default() }),
        Light::Spot(SpotLight { direction: Vec3::new(0.0, f32::INFINITY, 0.0), ..Default::default() }),
    ];
    for light in bad {
        assert!(matches!(rt.add_light(light), Err(RendererError::InvalidLight { light: None, .. })), "{light:?}");
        assert!(matches!(rt.set_light(good, light), Err(RendererError::InvalidLight { light: Some(id), .. }) if id == good), "{light:?}");
    }
    // A move a stationary light forbids is refused alone (the batch's
    // other moves arrive; here there are none, so the image stays).
    let post = Light::Point(PointLight { position: Vec3::new(3.0, 0.0, 1.0), mobility: Mobility::Stationary, ..Default::default() });
    let post = rt.add_light(post).unwrap();
    let moves = vec![(post, Mat4::from_translation(Vec3::ZERO))];
    let refused = rt.update_light_transforms(moves).unwrap();
    assert!(matches!(refused.as_slice(), [(id, RendererError::InvalidLight { light: Some(l), .. })] if *id == post && *l == post));
    rt.remove_light(post).unwrap();
    // A shadow atlas of size 0 (or less) is refused the same way.
    for size in ["0", "-1"] {
        assert!(matches!(rt.set_cvar(cvars::SHADOW_ATLAS_SIZE, size), Err(RendererError::InvalidCvarValue { .. })));
    }
    let (stats, after) = frame(&mut rt, &fam);
    assert_images_equal(&before, &after, "bad lights change nothing");
    assert_eq!(stats.lights.point, 1);
    assert_clean(&mut rt);
}

#[test]
fn a_soak_of_lights_coming_and_going_stays_flat() {
    // Every frame adds and removes lights, shadowed ones included: the
    // count stays where it started and the image comes back to the first.
    let mut rt = render_thread(RenderThreadMode::Threaded);
    let white = rt.create_material(Material::colored(Vec4::new(0.8, 0.8, 0.8, 1.0))).unwrap();
    plane_at(&mut rt, white, 30.0, Mat4::IDENTITY);
    sun(&mut rt, true);
    let fam = family(vec![top_view(12.0)]);
    let base: Vec<LightId> = scattered_lights(50, 5).into_iter().map(|l| rt.add_light(Light::Point(l)).unwrap()).collect();
    let (first_stats, first) = frame(&mut rt, &fam);
    for i in 0..60u64 {
        let extra: Vec<LightId> = scattered_lights(40, 100 + i)
            .into_iter()
            .map(|l| rt.add_light(Light::Point(PointLight { cast_shadows: i % 2 == 0, ..l })).unwrap())
            .collect();
        frame(&mut rt, &fam);
        for id in extra {
            rt.remove_light(id).unwrap();
        }
    }
    let (stats, last) = frame(&mut rt, &fam);
    assert_eq!(stats.lights, first_stats.lights);
    assert_eq!(stats.clusters, first_stats.clusters);
    assert_images_equal(&first, &last, "after 60 frames of lights coming and going");
    assert_eq!(base.len(), 50);
    assert_clean(&mut rt);
}

#[test]
fn the_light_grid_built_in_compute_passes_lists_what_the_cpu_build_lists() {
    // Point lights and spot lights with cones in every direction, seen at
    // a slant through 16-pixel tiles and 32 slices.
    let mut rng = Rng::new(5);
    let mut scene = Scene::default();
    for (i, p) in scattered_lights(1500, 21).into_iter().enumerate() {
        let light = if i % 3 == 0 {
            let direction = Vec3::new(rng.range_f32(-1.0, 1.0), rng.range_f32(-1.0, 1.0), rng.range_f32(-1.0, 0.2));
            let outer_cone = rng.range_f32(0.2, 1.4);
            Light::Spot(SpotLight { position: p.position, direction, radius: p.radius, outer_cone, ..Default::default() })
        } else {
            Light::Point(p)
        };
        scene.set_light(LightId(i as u64), light).unwrap();
    }
    let device = test_support::new_device();
    let view = slanted_view();
    let (clusters, indices, _) = cpu_light_lists(&scene, &view, 16, 32);
    let gpu = GpuLightGridBuilder::new(&device).unwrap().build(&device, &scene, &view, 16, 32, indices.len() + 64).unwrap();
    assert!(indices.len() > 10_000, "a busy grid: {} entries", indices.len());
    assert_eq!(gpu.clusters.len(), clusters.len());
    // The same lists in the same (light) order; a light whose sphere
    // grazes a cluster's box within float rounding may be added (harmless:
    // the shader tests each light's range), none may be missing.
    let list = |c: [u32; 2], of: &[u32]| of[c[0] as usize..(c[0] + c[1]) as usize].to_vec();
    let (mut missing, mut differ) = (0, 0);
    for (a, b) in clusters.iter().zip(&gpu.clusters) {
        let (a, b) = (list(*a, &indices), list(*b, &gpu.indices));
        missing += a.iter().filter(|l| !b.contains(l)).count();
        differ += usize::from(a != b);
        assert!(b.windows(2).all(|w| w[0] < w[1]), "a list in light order: {b:?}");
    }
    assert_eq!(missing, 0, "entries the compute build misses");
    assert!(differ * 1000 <= clusters.len(), "{differ} of {} clusters' lists differ", clusters.len());
    test_support::assert_clean(&device.validation());
}
