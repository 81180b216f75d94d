//! Per-view visibility: frustum and distance culling over the scene's flat
//! arrays, in parallel chunks, plus static LOD selection by screen size.
//! Chunks are concatenated in order, so the visible list is the same whatever
//! the thread count: the visible list is in slot order, which the draw
//! order (`mesh_pass::sort`) builds on.

use super::scene::{flags, Scene};
use crate::math::Frustum;
use crate::mesh_pass::PrimitiveSlot;
use crate::view::SceneView;
use rayon::prelude::*;

const CHUNK: usize = 4096;

/// The primitives of one view that passed culling, in slot order, with the
/// LOD each uses.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct ViewVisibility {
    pub visible: Vec<PrimitiveSlot>,
    pub lods: Vec<u8>,
}

/// Culls every primitive whose flags contain `require` against `frustum`
/// (and `view`'s draw distance, when given).
pub(crate) fn compute_visibility(scene: &Scene, frustum: &Frustum, view: Option<&SceneView>, require: u32, parallel: bool) -> ViewVisibility {
    let n = scene.slot_count();
    let require = require | flags::VALID;
    let cull_chunk = |start: usize| -> ViewVisibility {
        crate::trace::span!("task", "cull_chunk");
        let end = (start + CHUNK).min(n);
        let mut out = ViewVisibility::default();
        for i in start..end {
            let f = scene.flags[i];
            if f & require != require {
                continue;
            }
            let s = scene.spheres[i];
            let center = s.truncate();
            if !frustum.intersects_sphere(center, s.w) {
                continue;
            }
            let mut lod = 0u8;
            if let Some(view) = view {
                // The per-primitive limit is read only for primitives that
                // have one (most have none: an array less to stream).
                let limit = if f & flags::DRAW_DISTANCE != 0 { scene.max_draw_distance[i] } else { 0.0 };
                let view_limit = view.max_draw_distance;
                if limit > 0.0 || view_limit > 0.0 {
                    let d = center.distance(view.origin) - s.w;
                    if (limit > 0.0 && d > limit) || (view_limit > 0.0 && d > view_limit) {
                        continue;
                    }
                }
                if f & flags::MULTI_LOD != 0 {
                    let size = view.screen_size(center, s.w);
                    let sizes = scene.lod_screen_sizes(i as u32);
                    // LOD i while the screen size is at least sizes[i]; the last LOD below that.
                    lod = sizes.iter().position(|&t| size >= t).unwrap_or(sizes.len() - 1) as u8;
                }
            }
            out.visible.push(PrimitiveSlot(i as u32));
            out.lods.push(lod);
        }
        out
    };
    let starts: Vec<usize> = (0..n).step_by(CHUNK).collect();
    let chunks: Vec<ViewVisibility> = if parallel { starts.par_iter().map(|&s| cull_chunk(s)).collect() } else { starts.iter().map(|&s| cull_chunk(s)).collect() };
    let mut out = ViewVisibility::default();
    let total: usize = chunks.iter().map(|c| c.visible.len()).sum();
    out.visible.reserve(total);
    out.lods.reserve(total);
    for c in chunks {
        out.visible.extend_from_slice(&c.visible);
        out.lods.extend_from_slice(&c.lods);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::Vec3;
    use rhi_vulkan::Rect;

    fn view() -> SceneView {
        SceneView::perspective(Vec3::new(0.0, -50.0, 20.0), Vec3::ZERO, Vec3::Z, 1.0, 0.1, 1000.0, Rect::from_size(64, 64)).unwrap()
    }

    /// Primitives scattered around the view, some without the flags a view
    /// needs, some with a draw distance: more than two chunks of them.
    fn scene(n: u32) -> Scene {
        let mut scene = Scene::default();
        let mut s = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (s >> 40) as f32 / (1u64 << 24) as f32
        };
        for i in 0..n {
            let center = Vec3::new(next() * 400.0 - 200.0, next() * 400.0 - 200.0, next() * 40.0 - 20.0);
            let f = match i % 7 {
                0 => flags::VALID,
                1 => flags::VALID | flags::SHADOW,
                2 => 0,
                _ => flags::VALID | flags::DRAW | flags::STATIC,
            };
            let limit = if i % 5 == 0 { 60.0 } else { 0.0 };
            scene.push_culling_slot(center.extend(0.5 + next()), f, limit);
        }
        scene
    }

    #[test]
    fn parallel_chunks_concatenate_into_the_serial_list_in_slot_order() {
        let scene = scene(3 * CHUNK as u32 + 17);
        let v = view();
        let serial = compute_visibility(&scene, &v.frustum(), Some(&v), flags::DRAW, false);
        let parallel = compute_visibility(&scene, &v.frustum(), Some(&v), flags::DRAW, true);
        assert_eq!(serial, parallel);
        assert!(serial.visible.windows(2).all(|w| w[0] < w[1]), "slot order");
        assert_eq!(serial.visible.len(), serial.lods.len());
        assert!(serial.visible.iter().any(|s| s.index() > 2 * CHUNK), "the last chunk contributes");
    }

    #[test]
    fn a_primitive_is_visible_when_it_has_the_flags_intersects_the_frustum_and_is_within_its_draw_distance() {
        let scene = scene(CHUNK as u32 + 100);
        let v = view();
        let frustum = v.frustum();
        for require in [flags::DRAW, flags::SHADOW] {
            let vis = compute_visibility(&scene, &frustum, Some(&v), require, true);
            let expected: Vec<PrimitiveSlot> = (0..scene.slot_count())
                .filter(|&i| {
                    let need = require | flags::VALID;
                    let s = scene.spheres[i];
                    let limit = scene.max_draw_distance[i];
                    scene.flags[i] & need == need && frustum.intersects_sphere(s.truncate(), s.w) && !(limit > 0.0 && s.truncate().distance(v.origin) - s.w > limit)
                })
                .map(|i| PrimitiveSlot(i as u32))
                .collect();
            assert!(!expected.is_empty());
            assert_eq!(vis.visible, expected, "require {require}");
            assert!(vis.lods.iter().all(|&l| l == 0), "single-LOD primitives");
        }
        // A view's own draw distance culls too; the shadow view (no view) has none.
        let mut near = v.clone();
        near.max_draw_distance = 30.0;
        let vis = compute_visibility(&scene, &frustum, Some(&near), flags::DRAW, false);
        assert!(vis.visible.iter().all(|s| scene.spheres[s.index()].truncate().distance(v.origin) - scene.spheres[s.index()].w <= 30.0));
        assert!(vis.visible.len() < compute_visibility(&scene, &frustum, Some(&v), flags::DRAW, false).visible.len());
        let no_view = compute_visibility(&scene, &frustum, None, flags::DRAW, false);
        assert!(no_view.visible.len() >= compute_visibility(&scene, &frustum, Some(&v), flags::DRAW, false).visible.len());
        // Nothing to cull.
        assert_eq!(compute_visibility(&Scene::default(), &frustum, Some(&v), flags::DRAW, true), ViewVisibility::default());
    }
}
