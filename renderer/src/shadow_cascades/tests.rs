//! Cascades: the splits, coverage of the view, stability.

use super::*;
use glam::Quat;

fn settings(count: u32) -> CascadeSettings {
    CascadeSettings { count, first_distance: 8.0, max_distance: 120.0, transition: 0.2, tile_size: 512 }
}

fn camera(eye: Vec3, yaw: f32) -> SceneView {
    let forward = Quat::from_rotation_z(yaw) * Vec3::new(1.0, 0.0, -0.3);
    SceneView::perspective(eye, eye + forward, Vec3::Z, 1.0, 0.1, 500.0, Rect::from_size(640, 360)).unwrap()
}

fn casters() -> Bounds {
    Bounds::from_box(Vec3::new(-200.0, -200.0, 0.0), Vec3::new(200.0, 200.0, 30.0))
}

const SUN: Vec3 = Vec3::new(0.4, 0.3, -1.0);

#[test]
fn the_splits_run_from_near_through_the_first_distance_to_the_max_distance() {
    let s = settings(4).splits(0.1, 500.0);
    assert_eq!(s.len(), 5);
    assert_eq!((s[0], s[1]), (0.1, 8.0));
    assert!((s[4] - 120.0).abs() < 1e-3, "{s:?}");
    assert!(s.windows(2).all(|w| w[0] < w[1]), "{s:?}");
    assert_eq!(settings(1).splits(0.1, 500.0), vec![0.1, 120.0]);
    // A view whose far plane is nearer than the max distance ends there.
    assert!((settings(3).splits(0.1, 50.0)[3] - 50.0).abs() < 1e-3);
}

#[test]
fn every_point_of_a_cascades_slice_of_the_view_is_inside_its_projection() {
    let view = camera(Vec3::new(3.0, -4.0, 6.0), 0.7);
    let cs = cascades(&view, SUN, &settings(4), &casters());
    assert_eq!(cs.len(), 4);
    let to_world = view.view_matrix.inverse();
    for (i, c) in cs.iter().enumerate() {
        assert_eq!(c.view.kind, ViewKind::ShadowCascade { cascade: i as u8 });
        assert_eq!(c.view.viewport, settings(4).tile(i as u32));
        let z0 = if i == 0 { 0.1 } else { cs[i - 1].far_depth };
        for k in 0..=8 {
            let z = z0 + (c.far_depth - z0) * k as f32 / 8.0;
            for p in slice_corners(&view, z) {
                let w = to_world.transform_point3(p);
                assert!(covers(c, w), "cascade {i}: {w} at depth {z} is outside");
            }
        }
        // Casters between the light and the slice are inside the depth range.
        let above = to_world.transform_point3(slice_corners(&view, c.far_depth)[0]) - SUN.normalize() * 25.0;
        let clip = c.view.view_proj() * above.extend(1.0);
        assert!(clip.z / clip.w >= 0.0, "cascade {i}: a caster 25 units towards the light is in front of the near plane");
    }
}

#[test]
fn cascades_keep_their_size_as_the_camera_turns_and_move_by_whole_texels() {
    let base = cascades(&camera(Vec3::new(0.0, 0.0, 5.0), 0.0), SUN, &settings(4), &casters());
    for step in 1..20 {
        let turned = cascades(&camera(Vec3::new(0.0, 0.0, 5.0), 0.13 * step as f32), SUN, &settings(4), &casters());
        let moved = cascades(&camera(Vec3::new(0.37 * step as f32, 0.11 * step as f32, 5.0), 0.0), SUN, &settings(4), &casters());
        for i in 0..4 {
            assert_eq!(turned[i].texel_world, base[i].texel_world, "cascade {i} keeps its size when the camera turns");
            assert_eq!(moved[i].texel_world, base[i].texel_world, "cascade {i} keeps its size when the camera moves");
            // The projection's x and y offsets differ from the base's by whole texels.
            for (a, b) in [(&moved[i], &base[i]), (&turned[i], &base[i])] {
                let shift =
                    (a.view.projection.w_axis.truncate() - b.view.projection.w_axis.truncate()) * (a.view.viewport.width as f32 / 2.0);
                for v in [shift.x, shift.y] {
                    assert!((v - v.round()).abs() < 1e-2, "cascade {i}: the projection moved by {v} texels");
                }
            }
        }
    }
}
