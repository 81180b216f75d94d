//! The atlas's allocator, its stable policy and its cache.

use super::*;
use crate::scene::{PointLight, SpotLight};
use glam::Mat4;

fn camera() -> SceneView {
    SceneView::perspective(Vec3::new(0.0, -20.0, 10.0), Vec3::ZERO, Vec3::Z, 1.0, 0.1, 500.0, Rect::from_size(1280, 720)).unwrap()
}

fn settings() -> AtlasSettings {
    AtlasSettings { size: 4096, cache: true }
}

fn point(x: f32, y: f32) -> Light {
    Light::Point(PointLight { position: Vec3::new(x, y, 2.0), radius: 6.0, cast_shadows: true, ..Default::default() })
}

fn scene_of(lights: &[(LightId, Light)]) -> SceneLights {
    let mut s = SceneLights::default();
    for (id, l) in lights {
        s.set(*id, *l).unwrap();
    }
    s
}

#[test]
fn the_allocator_hands_out_disjoint_squares_and_merges_them_back() {
    let mut a = TileAllocator::new(1024);
    let mut got = Vec::new();
    for size in [512, 128, 256, 128, 128, 256] {
        got.push((a.alloc(size).expect("room"), size));
    }
    for (i, &((x, y), s)) in got.iter().enumerate() {
        assert!(x + s <= 1024 && y + s <= 1024 && x % s == 0 && y % s == 0);
        for &((x2, y2), s2) in &got[i + 1..] {
            let apart = x + s <= x2 || x2 + s2 <= x || y + s <= y2 || y2 + s2 <= y;
            assert!(apart, "{:?} overlaps {:?}", (x, y, s), (x2, y2, s2));
        }
    }
    for (c, s) in got {
        a.release(c, s);
    }
    assert_eq!(a.free[0], vec![(0, 0)], "everything merged back: {:?}", a.free);
    assert_eq!(a.alloc(1024), Some((0, 0)));
    assert_eq!(a.alloc(128), None, "full");
}

#[test]
fn sixty_four_point_lights_fit_a_4096_atlas_and_keep_their_tiles() {
    let lights: Vec<(LightId, Light)> =
        (0..64).map(|i| (LightId(i + 1), point((i % 8) as f32 * 6.0 - 21.0, (i / 8) as f32 * 6.0))).collect();
    let scene = scene_of(&lights);
    let mut atlas = ShadowAtlas::default();
    let first = atlas.plan(&scene, &camera(), &[], settings());
    assert_eq!(first.unshadowed, 0);
    assert_eq!(first.first_tile.len(), 64);
    assert_eq!(first.tiles.len(), 64 * 6);
    assert_eq!(first.rendered(), 64 * 6, "every tile is new");
    // Nothing changed: the same tiles, none rendered.
    let second = atlas.plan(&scene, &camera(), &[], settings());
    assert_eq!(second.rendered(), 0);
    let rects = |f: &AtlasFrame| f.tiles.iter().map(|t| t.view.viewport).collect::<Vec<_>>();
    assert_eq!(rects(&first), rects(&second), "stable tiles");
    // A caster moving near light 10 re-renders its six faces only.
    let near = Vec3::new(lights[9].1.bounding_sphere().unwrap().x, lights[9].1.bounding_sphere().unwrap().y, 0.5);
    let third = atlas.plan(&scene, &camera(), &[near.extend(0.2)], settings());
    let rendered: Vec<LightId> = third.tiles.iter().filter(|t| t.render).map(|t| t.light).collect();
    assert!(rendered.contains(&LightId(10)) && rendered.len().is_multiple_of(6), "{rendered:?}");
    let touched = lights.iter().filter(|(_, l)| l.bounding_sphere().unwrap().truncate().distance(near) <= 6.0 + 0.2).count();
    assert_eq!(rendered.len(), 6 * touched, "exactly the lights whose spheres it touches ({touched})");
    assert!(touched < 10);
    // Without the cache, everything renders.
    let uncached = atlas.plan(&scene, &camera(), &[], AtlasSettings { cache: false, ..settings() });
    assert_eq!(uncached.rendered(), 64 * 6);
}

#[test]
fn a_moved_light_re_renders_only_its_own_tiles_and_a_full_atlas_leaves_the_smallest_unshadowed() {
    let mut lights: Vec<(LightId, Light)> = vec![
        (LightId(1), point(0.0, 0.0)),
        (LightId(2), Light::Spot(SpotLight { position: Vec3::new(5.0, 0.0, 4.0), radius: 8.0, cast_shadows: true, ..Default::default() })),
    ];
    let mut atlas = ShadowAtlas::default();
    atlas.plan(&scene_of(&lights), &camera(), &[], settings());
    lights[1].1 = lights[1].1.with_transform(&Mat4::from_translation(Vec3::new(6.0, 1.0, 4.0)));
    let f = atlas.plan(&scene_of(&lights), &camera(), &[], settings());
    assert_eq!(f.tiles.iter().filter(|t| t.render).map(|t| t.light).collect::<Vec<_>>(), vec![LightId(2)]);
    // A small atlas: the biggest lights on screen get room first.
    let many: Vec<(LightId, Light)> = (0..40).map(|i| (LightId(i + 1), point(i as f32 - 20.0, 0.0))).collect();
    let mut small = ShadowAtlas::default();
    let f = small.plan(&scene_of(&many), &camera(), &[], AtlasSettings { size: 1024, cache: true });
    assert!(f.unshadowed > 0 && !f.first_tile.is_empty(), "{} shadowed, {} not", f.first_tile.len(), f.unshadowed);
    assert_eq!(f.first_tile.len() as u64 + f.unshadowed, 40);
}

#[test]
fn a_spot_tile_sees_its_cone_and_point_faces_cover_every_direction() {
    let spot = Light::Spot(SpotLight {
        position: Vec3::new(0.0, 0.0, 5.0),
        radius: 10.0,
        outer_cone: 0.5,
        cast_shadows: true,
        ..Default::default()
    });
    let mut atlas = ShadowAtlas::default();
    let f = atlas.plan(&scene_of(&[(LightId(1), spot), (LightId(2), point(3.0, 3.0))]), &camera(), &[], settings());
    let spot_tile = &f.tiles[f.first_tile[&LightId(1)] as usize];
    // A point on the cone's edge, 4 below the light, projects inside the tile.
    let edge = Vec3::new(4.0 * 0.5f32.tan(), 0.0, 1.0);
    let ndc = projects(&spot_tile.view, edge).unwrap();
    assert!(ndc.x.abs() < 1.0 && ndc.y.abs() < 1.0, "{ndc}");
    let first = f.first_tile[&LightId(2)] as usize;
    for d in [Vec3::X, Vec3::NEG_Y, Vec3::new(1.0, 1.0, 1.0), Vec3::new(-0.3, 0.2, -1.0)] {
        let p = Vec3::new(3.0, 3.0, 2.0) + d.normalize() * 2.0;
        let inside =
            (first..first + 6).filter(|&t| projects(&f.tiles[t].view, p).is_some_and(|n| n.x.abs() <= 1.0 && n.y.abs() <= 1.0)).count();
        assert!(inside >= 1, "{d} is in some face");
    }
}

#[test]
fn a_stationary_light_keeps_its_tile_as_the_camera_comes_close_and_a_movable_one_grows() {
    let light = |mobility| {
        Light::Point(PointLight { position: Vec3::new(0.0, 0.0, 2.0), radius: 3.0, cast_shadows: true, mobility, ..Default::default() })
    };
    let far =
        SceneView::perspective(Vec3::new(0.0, -60.0, 10.0), Vec3::ZERO, Vec3::Z, 1.0, 0.1, 500.0, Rect::from_size(1280, 720)).unwrap();
    let near = SceneView::perspective(Vec3::new(0.0, -8.0, 3.0), Vec3::ZERO, Vec3::Z, 1.0, 0.1, 500.0, Rect::from_size(1280, 720)).unwrap();
    let side = |f: &AtlasFrame| f.tiles[0].view.viewport.width;
    for (mobility, grows) in [(Mobility::Stationary, false), (Mobility::Static, false), (Mobility::Movable, true)] {
        let scene = scene_of(&[(LightId(1), light(mobility))]);
        let mut atlas = ShadowAtlas::default();
        let first = atlas.plan(&scene, &far, &[], settings());
        let close = atlas.plan(&scene, &near, &[], settings());
        assert_eq!(side(&close) > side(&first), grows, "{mobility:?}: {} -> {}", side(&first), side(&close));
        assert_eq!(close.rendered() > 0, grows, "{mobility:?}: the camera re-renders only a movable light's shadow");
        // A caster in its reach still re-renders a stationary light's shadow.
        let touched = atlas.plan(&scene, &near, &[Vec4::new(0.5, 0.0, 1.0, 0.5)], settings());
        assert_eq!(touched.rendered(), 6, "{mobility:?}");
    }
}
