//! The light grid against brute force: every light whose sphere (and, for
//! a spot light, cone) holds a point is in the list of the cluster the
//! shader finds for that point.

use super::*;
use crate::rng::Rng;
use crate::scene::{DirectionalLight, Light, LightId, PointLight, SpotLight};
use rhi_vulkan::Rect;

fn scene_lights(lights: &[(LightId, Light)]) -> SceneLights {
    let mut s = SceneLights::default();
    for (id, l) in lights {
        s.set(*id, *l).unwrap();
    }
    s
}

fn settings() -> LightGridSettings {
    LightGridSettings { pixel_size: 32, slices: 16 }
}

fn perspective() -> SceneView {
    SceneView::perspective(Vec3::new(-3.0, -20.0, 6.0), Vec3::new(0.0, 0.0, 1.0), Vec3::Z, 1.1, 0.1, 200.0, Rect::from_size(320, 200))
        .unwrap()
}

fn orthographic() -> SceneView {
    SceneView::orthographic(Vec3::new(0.0, 0.0, 30.0), Vec3::ZERO, Vec3::Y, 40.0, 25.0, 0.5, 80.0, Rect::new(20, 10, 300, 180)).unwrap()
}

/// `n` point and spot lights scattered over a 40-unit cube around the origin.
fn scattered(n: usize, seed: u64) -> Vec<(LightId, Light)> {
    let mut rng = Rng::new(seed);
    (0..n)
        .map(|i| {
            let position = Vec3::new(rng.range_f32(-20.0, 20.0), rng.range_f32(-20.0, 20.0), rng.range_f32(-5.0, 15.0));
            let radius = rng.range_f32(0.3, 6.0);
            let light = if i % 3 == 0 {
                let direction = Vec3::new(rng.range_f32(-1.0, 1.0), rng.range_f32(-1.0, 1.0), rng.range_f32(-1.0, 1.0));
                let direction = if direction.length() > 0.1 { direction } else { Vec3::NEG_Z };
                let outer_cone = rng.range_f32(0.15, 1.5);
                Light::Spot(SpotLight { position, direction, radius, outer_cone, ..Default::default() })
            } else {
                Light::Point(PointLight { position, radius, ..Default::default() })
            };
            (LightId(i as u64), light)
        })
        .collect()
}

/// The cluster (index into `grid.clusters`) the shader finds for the pixel
/// `(px, py)` at view depth `depth`, and the point's world position.
fn shader_cluster(view: &SceneView, g: &ViewGrid, px: f32, py: f32, depth: f32) -> (usize, Vec3) {
    let vp = view.viewport;
    let ndc = Vec2::new((px - vp.x as f32) / vp.width as f32 * 2.0 - 1.0, (py - vp.y as f32) / vp.height as f32 * 2.0 - 1.0);
    let v = unproject_at_depth(&view.projection.inverse(), ndc.x, ndc.y, depth);
    let world = view.view_matrix.inverse().transform_point3(Vec3::new(v.x, v.y, -v.z));
    let axis = view.depth_axis();
    let d = axis.xyz().dot(world) + axis.w;
    assert!((d - depth).abs() < 1e-3 * depth.max(1.0), "the depth axis gives {d} for depth {depth}");
    let tile = ((Vec2::new(px, py) - g.origin) / g.tile_pixels as f32).floor().max(Vec2::ZERO);
    let (tx, ty) = ((tile.x as u32).min(g.size[0] - 1), (tile.y as u32).min(g.size[1] - 1));
    let slice = g.slice_of(d);
    (g.base as usize + ((slice * g.size[1] + ty) * g.size[0] + tx) as usize, world)
}

fn check_against_brute_force(view: SceneView, lights: &[(LightId, Light)]) {
    let grid = build_light_grid(&scene_lights(lights), std::slice::from_ref(&view), &[true], &settings(), false);
    let g = grid.views[0];
    assert!(g.size.iter().all(|&s| s > 0), "a grid: {g:?}");
    let (near, far) = view.depth_range();
    let mut rng = Rng::new(7);
    let vp = view.viewport;
    let mut lit = 0;
    for _ in 0..20_000 {
        let px = vp.x as f32 + rng.next_f32() * vp.width as f32;
        let py = vp.y as f32 + rng.next_f32() * vp.height as f32;
        let depth = near + (far.min(60.0) - near) * rng.next_f32().powi(2);
        let (cluster, world) = shader_cluster(&view, &g, px, py, depth);
        let [first, count] = grid.clusters[cluster];
        let list = &grid.indices[first as usize..(first + count) as usize];
        for (k, gpu) in grid.lights.iter().enumerate() {
            let to = world - Vec3::from(gpu.position);
            // Inside its range and, for a spot light, its cone.
            let in_cone = to.normalize_or_zero().dot(Vec3::from(gpu.direction)) * gpu.spot_scale + gpu.spot_offset > 1e-3;
            if to.length() < gpu.radius * 0.999 && in_cone {
                lit += 1;
                assert!(
                    list.contains(&(k as u32)),
                    "light {k} ({gpu:?}) holds {world} (pixel {px}, {py}, depth {depth}) but cluster {cluster} lists {list:?}"
                );
            }
        }
    }
    assert!(lit > 500, "the sample points are inside lights {lit} times");
}

#[test]
fn every_light_holding_a_point_is_in_its_clusters_list_perspective() {
    check_against_brute_force(perspective(), &scattered(300, 1));
}

#[test]
fn every_light_holding_a_point_is_in_its_clusters_list_orthographic() {
    check_against_brute_force(orthographic(), &scattered(300, 2));
}

#[test]
fn the_grid_is_the_same_built_in_parallel_and_lists_every_light_of_a_crowded_cluster() {
    // 3,000 lights, the first 1,000 all on one point: a cluster lists them all.
    let mut lights = scattered(3000, 3);
    for (_, l) in lights.iter_mut().take(1000) {
        *l = Light::Point(PointLight { position: Vec3::new(0.0, 0.0, 1.0), radius: 0.5, ..Default::default() });
    }
    let views = [perspective(), orthographic()];
    let serial = build_light_grid(&scene_lights(&lights), &views, &[true, true], &settings(), false);
    let parallel = build_light_grid(&scene_lights(&lights), &views, &[true, true], &settings(), true);
    assert_eq!((&serial.clusters, &serial.indices, &serial.lights), (&parallel.clusters, &parallel.indices, &parallel.lights));
    assert_eq!(serial.views, parallel.views);
    assert!(serial.cluster_stats.max_lights >= 1000, "{:?}", serial.cluster_stats);
    let per_view: u32 = serial.views.iter().map(|g| g.size.iter().product::<u32>()).sum();
    assert_eq!(serial.cluster_stats.count, u64::from(per_view));
    assert_eq!(serial.light_stats.point + serial.light_stats.spot, 3000);
}

#[test]
fn lights_outside_every_view_are_not_uploaded_and_shadow_views_get_no_grid() {
    let far_away = Light::Point(PointLight { position: Vec3::new(0.0, 5000.0, 0.0), radius: 1.0, ..Default::default() });
    let near = Light::Point(PointLight { position: Vec3::new(0.0, 0.0, 1.0), radius: 2.0, cast_shadows: true, ..Default::default() });
    let sun = Light::Directional(DirectionalLight {
        direction: Vec3::NEG_Z,
        color: Vec3::ONE,
        intensity: 1.0,
        cast_shadows: true,
        ..Default::default()
    });
    let lights = [(LightId(1), far_away), (LightId(2), near), (LightId(3), sun)];
    let views = [perspective(), orthographic()];
    let grid = build_light_grid(&scene_lights(&lights), &views, &[true, false], &settings(), false);
    assert_eq!(grid.lights.len(), 1);
    assert_eq!(grid.light_stats, LightStats { directional: 1, point: 2, spot: 0, shadowed: 2, visible: 1 });
    assert_eq!(grid.views[1].size, [0, 0, 0], "not a main view");
    // No lights at all: empty grids, nothing to upload.
    let none = build_light_grid(&SceneLights::default(), &views, &[true, true], &settings(), false);
    assert!(none.clusters.is_empty() && none.views.iter().all(|g| g.size == [0, 0, 0]));
}

#[test]
fn shadowed_lights_are_listed_last_in_each_cluster_and_counted() {
    let lights = scattered(400, 9);
    let mut grid = build_light_grid(&scene_lights(&lights), &[perspective()], &[true], &settings(), false);
    let before: Vec<Vec<u32>> = grid.clusters.iter().map(|&[f, n]| grid.indices[f as usize..(f + n) as usize].to_vec()).collect();
    grid.order_shadowed_last();
    assert!(grid.shadowed.is_empty(), "no light has a shadow: nothing to count");
    for (k, l) in grid.lights.iter_mut().enumerate() {
        l.shadow = if k % 3 == 0 { k as i32 } else { -1 };
    }
    grid.order_shadowed_last();
    assert_eq!(grid.shadowed.len(), grid.clusters.len());
    for (c, &[f, n]) in grid.clusters.iter().enumerate() {
        let list = &grid.indices[f as usize..(f + n) as usize];
        let shadowed = grid.shadowed[c] as usize;
        let (plain, last) = list.split_at(list.len() - shadowed);
        assert!(plain.iter().all(|&i| grid.lights[i as usize].shadow < 0) && last.iter().all(|&i| grid.lights[i as usize].shadow >= 0));
        // The same lights, each part in its old order.
        let old = &before[c];
        assert_eq!(plain.to_vec(), old.iter().copied().filter(|&i| i % 3 != 0).collect::<Vec<_>>());
        assert_eq!(last.to_vec(), old.iter().copied().filter(|&i| i % 3 == 0).collect::<Vec<_>>());
    }
    assert!(grid.shadowed.iter().any(|&n| n > 0));
}

#[test]
fn a_spot_lights_cone_bounds_it_and_culls_the_clusters_outside() {
    // The bounding sphere holds the capped cone, at narrow and wide angles.
    let mut rng = Rng::new(3);
    for outer_cone in [0.1f32, 0.5, 0.78, 0.8, 1.2, 1.57] {
        let spot = SpotLight {
            position: Vec3::new(1.0, 2.0, 3.0),
            direction: Vec3::new(0.3, -1.0, 0.2),
            radius: 5.0,
            outer_cone,
            ..Default::default()
        };
        let (cone, sphere) = (spot.cone(), Light::Spot(spot).bounding_sphere().unwrap());
        assert!(sphere.w <= spot.radius * 1.0001, "never larger than the point light's sphere ({outer_cone}): {}", sphere.w);
        for _ in 0..2000 {
            let d = Vec3::new(rng.range_f32(-1.0, 1.0), rng.range_f32(-1.0, 1.0), rng.range_f32(-1.0, 1.0)).normalize_or_zero();
            let p = spot.position + d * rng.next_f32() * spot.radius;
            if d.dot(cone.axis) >= cone.cos {
                assert!(p.distance(sphere.truncate()) <= sphere.w * 1.0001, "{p} in the cone ({outer_cone}) is outside {sphere}");
                assert!(!cone.sphere_outside(p, 0.01), "{p} is inside the cone ({outer_cone})");
            }
        }
        // Beside it, behind it, past its range: outside.
        let side = cone.axis.any_orthonormal_vector();
        let beside = spot.position + cone.axis * 1.0 + side * (1.0 * outer_cone.tan().min(50.0) + 1.0);
        if outer_cone < 1.3 {
            assert!(cone.sphere_outside(beside, 0.1), "beside the cone ({outer_cone})");
        }
        assert!(cone.sphere_outside(spot.position - cone.axis * 2.0, 0.5), "behind the apex");
        assert!(cone.sphere_outside(spot.position + cone.axis * 6.0, 0.5), "past the range");
    }
    // A narrow spot light lists far fewer clusters than a point light of its range.
    let view = perspective();
    let position = Vec3::new(0.0, 0.0, 3.0);
    let spot =
        Light::Spot(SpotLight { position, direction: Vec3::new(0.2, 1.0, -0.3), radius: 12.0, outer_cone: 0.3, ..Default::default() });
    let point = Light::Point(PointLight { position, radius: 12.0, ..Default::default() });
    let listed = |l: Light| {
        build_light_grid(&scene_lights(&[(LightId(1), l)]), std::slice::from_ref(&view), &[true], &settings(), false).indices.len()
    };
    let (spot_clusters, point_clusters) = (listed(spot), listed(point));
    assert!(spot_clusters * 4 < point_clusters, "the cone culls: {spot_clusters} clusters vs {point_clusters}");
}
