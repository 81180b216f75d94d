//! Per-view visibility: frustum and distance culling over the scene's flat
//! arrays, in parallel chunks, plus static LOD selection by screen size.
//! Chunks are concatenated in order, so the visible list is the same whatever
//! the thread count: the visible list is in slot order, which the draw
//! order (`mesh_pass::sort`) builds on.
//!
//! Each chunk of [`CULL_CHUNK`] slots first tests the box around its
//! slots' spheres ([`ChunkBounds`](super::scene::ChunkBounds)): a chunk
//! wholly outside the frustum, or beyond the view's draw distance, is
//! skipped without reading its slots. Chunks are runs of slots, and a
//! batch of adds of more than one chunk takes its slots in space order
//! (`super::add_order`), so whatever order a level or a spawn list adds
//! its primitives in, most chunks of a narrow view are skipped. Primitives
//! added a few at a time keep the order they come in (a chunk's box then
//! covers wherever they are). The per-primitive test runs only in chunks
//! that may be visible, and its result is the same either way (a box
//! contains its chunk's spheres).

use super::relevance::{relevance_flags, MATERIAL_FLAGS, RELEVANCE_FLAGS};
use super::scene::{flags, Scene, CULL_CHUNK};
use crate::math::Frustum;
use crate::mesh_pass::PrimitiveSlot;
use crate::occlusion::{ViewDepth, MIN_OCCLUDER_SCREEN_SIZE};
use crate::view::SceneView;
use rayon::prelude::*;

const CHUNK: usize = CULL_CHUNK;

/// The primitives of one view that passed culling, in slot order, with the
/// LOD each uses.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct ViewVisibility {
    pub visible: Vec<PrimitiveSlot>,
    pub lods: Vec<u8>,
    /// Slots of the chunks not skipped on their box: those tested one by one.
    pub tested: u32,
    /// The relevance flags of the visible primitives, ORed (the view's
    /// relevance, `super::relevance`): which passes the view sets up.
    pub relevance: u32,
    /// What the `occlusion` stage reads, gathered while culling has each
    /// primitive's sphere at hand (rather than read again later, a
    /// scattered slot at a time): per visible primitive, its
    /// sphere centre's view depth ([`ViewDepth`]). Empty unless culled for
    /// occlusion; the stage empties it.
    pub centre_depths: Vec<f32>,
    /// The visible primitives at least [`MIN_OCCLUDER_SCREEN_SIZE`] on
    /// screen, the occluder candidates: (screen size, index into
    /// `visible`), in `visible`'s order. Filled and emptied as `centre_depths`.
    pub occluder_candidates: Vec<(f32, u32)>,
}

impl ViewVisibility {
    /// The visible primitives and their LODs, as pass setup gathers them.
    pub(crate) fn primitives(&self) -> crate::mesh_pass::VisiblePrimitives<'_> {
        crate::mesh_pass::VisiblePrimitives { visible: &self.visible, lods: &self.lods }
    }
}

/// Culls every primitive whose flags contain `require` against `frustum`
/// (and `view`'s draw distance, when given); with `for_occlusion` (and a
/// view) gathers what the occlusion stage reads too.
pub(crate) fn compute_visibility(
    scene: &Scene,
    frustum: &Frustum,
    view: Option<&SceneView>,
    require: u32,
    for_occlusion: bool,
    parallel: bool,
    distance_scale: f32,
) -> ViewVisibility {
    let n = scene.slot_count();
    let require = require | flags::VALID;
    let occlusion = view.filter(|_| for_occlusion).map(|v| (v, ViewDepth::new(v)));
    let cull_chunk = |start: usize| -> ViewVisibility {
        crate::trace::span!("task", "cull_chunk");
        let end = (start + CHUNK).min(n);
        let mut out = ViewVisibility::default();
        let b = scene.chunks[start / CHUNK];
        let beyond = view.is_some_and(|v| {
            v.max_draw_distance > 0.0 && v.origin.clamp(b.min, b.max).distance(v.origin) > v.max_draw_distance * distance_scale
        });
        let straddled = if b.is_empty() || beyond { None } else { frustum.straddled_planes(b.min, b.max) };
        let Some((mut planes, k)) = straddled else {
            return out;
        };
        out.tested = (end - start) as u32;
        // Spheres lie inside their chunk's box: only the planes the box
        // straddles can cull them. The plane that culled the last sphere
        // is tried first (neighbouring slots tend to fall off the same side).
        for i in start..end {
            let f = scene.flags[i];
            if f & require != require {
                continue;
            }
            let s = scene.spheres[i];
            let center = s.truncate();
            if let Some(j) = planes[..k].iter().position(|p| p.truncate().dot(center) + p.w < -s.w) {
                planes.swap(0, j);
                continue;
            }
            let mut lod = 0u8;
            let mut relevance = f;
            if let Some(view) = view {
                if f & flags::VIEW_RELEVANCE != 0 {
                    // Asked again for this view, this frame.
                    let Some(r) = scene.proxy_at(i as u32).map(|p| p.view_relevance(view)) else { continue };
                    if !r.draw {
                        continue;
                    }
                    relevance = (f & MATERIAL_FLAGS) | relevance_flags(&r);
                }
                // The per-primitive limits are read only for primitives
                // that have one (most have none: an array less to stream).
                let (min, max) = if f & flags::DRAW_DISTANCE != 0 { scene.draw_distances[i] } else { (0.0, 0.0) };
                // `r.ViewDistanceScale` scales the far limits (UE's
                // MaxDrawDistance × ViewDistanceScale), not the near one.
                let (max, view_max) = (max * distance_scale, view.max_draw_distance * distance_scale);
                if !within_draw_distances(center.distance(view.origin), s.w, min, max, view_max) {
                    continue;
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
            out.relevance |= relevance & RELEVANCE_FLAGS;
        }
        // Apart from the loop above (which runs over every slot of the
        // chunk and slows with a bigger body), while the chunk's spheres
        // are still in cache.
        if let Some((view, depth)) = &occlusion {
            gather_for_occlusion(scene, view, depth, &mut out);
        }
        out
    };
    let starts: Vec<usize> = (0..n).step_by(CHUNK).collect();
    let chunks: Vec<ViewVisibility> =
        if parallel { starts.par_iter().map(|&s| cull_chunk(s)).collect() } else { starts.iter().map(|&s| cull_chunk(s)).collect() };
    let mut out = ViewVisibility::default();
    let total: usize = chunks.iter().map(|c| c.visible.len()).sum();
    out.visible.reserve(total);
    out.lods.reserve(total);
    if occlusion.is_some() {
        out.centre_depths.reserve(total);
    }
    for c in chunks {
        let base = out.visible.len() as u32;
        out.occluder_candidates.extend(c.occluder_candidates.iter().map(|&(size, k)| (size, base + k)));
        out.centre_depths.extend_from_slice(&c.centre_depths);
        out.visible.extend_from_slice(&c.visible);
        out.lods.extend_from_slice(&c.lods);
        out.tested += c.tested;
        out.relevance |= c.relevance;
    }
    out
}

/// What the occlusion stage reads of `out`'s visible primitives: their
/// centre depths and the occluder candidates.
fn gather_for_occlusion(scene: &Scene, view: &SceneView, depth: &ViewDepth, out: &mut ViewVisibility) {
    out.centre_depths.reserve(out.visible.len());
    for (k, slot) in out.visible.iter().enumerate() {
        let s = scene.spheres[slot.index()];
        let center = s.truncate();
        out.centre_depths.push(depth.of(center));
        if view.may_reach_screen_size(center, s.w, MIN_OCCLUDER_SCREEN_SIZE) {
            let size = view.screen_size(center, s.w);
            if size >= MIN_OCCLUDER_SCREEN_SIZE {
                out.occluder_candidates.push((size, k as u32));
            }
        }
    }
}

/// Whether a primitive whose bounding sphere (of `radius`) has its centre
/// `distance` from a view is drawn in it: not closer than its `min` draw
/// distance (to the centre, as UE measures it), not farther than its `max`
/// or the view's limit (to the sphere). A limit of 0 is none.
fn within_draw_distances(distance: f32, radius: f32, min: f32, max: f32, view_max: f32) -> bool {
    let beyond = |limit: f32| limit > 0.0 && distance - radius > limit;
    !(distance < min || beyond(max) || beyond(view_max))
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::{Vec3, Vec4};
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
            let limits = match i % 5 {
                0 => (0.0, 60.0),
                1 => (40.0, 0.0),
                2 => (20.0, 90.0),
                _ => (0.0, 0.0),
            };
            scene.push_culling_slot(center.extend(0.5 + next()), f, limits);
        }
        scene
    }

    #[test]
    fn parallel_chunks_concatenate_into_the_serial_list_in_slot_order() {
        let scene = scene(3 * CHUNK as u32 + 17);
        let v = view();
        let serial = compute_visibility(&scene, &v.frustum(), Some(&v), flags::DRAW, true, false, 1.0);
        let parallel = compute_visibility(&scene, &v.frustum(), Some(&v), flags::DRAW, true, true, 1.0);
        assert_eq!(serial, parallel);
        // What the occlusion stage reads, per visible primitive, wherever its chunk fell.
        let depth = ViewDepth::new(&v);
        assert_eq!(serial.centre_depths.len(), serial.visible.len());
        let mut candidates = Vec::new();
        for (k, s) in serial.visible.iter().enumerate() {
            let sphere = scene.spheres[s.index()];
            assert_eq!(serial.centre_depths[k], depth.of(sphere.truncate()));
            let size = v.screen_size(sphere.truncate(), sphere.w);
            if size >= MIN_OCCLUDER_SCREEN_SIZE {
                candidates.push((size, k as u32));
            }
        }
        assert!(!candidates.is_empty() && candidates.len() < serial.visible.len());
        assert_eq!(serial.occluder_candidates, candidates);
        let plain = compute_visibility(&scene, &v.frustum(), Some(&v), flags::DRAW, false, true, 1.0);
        assert!(plain.centre_depths.is_empty() && plain.occluder_candidates.is_empty(), "only when culling for occlusion");
        assert_eq!(plain.visible, serial.visible);
        assert!(serial.visible.windows(2).all(|w| w[0] < w[1]), "slot order");
        assert_eq!(serial.visible.len(), serial.lods.len());
        assert!(serial.visible.iter().any(|s| s.index() > 2 * CHUNK), "the last chunk contributes");
    }

    /// What culling must give: every slot tested on its own.
    fn brute_force(scene: &Scene, v: &SceneView, require: u32) -> Vec<PrimitiveSlot> {
        let frustum = v.frustum();
        let need = require | flags::VALID;
        (0..scene.slot_count())
            .filter(|&i| {
                let s = scene.spheres[i];
                let centre = s.truncate().distance(v.origin);
                let d = centre - s.w;
                let (min, max) = scene.draw_distances[i];
                scene.flags[i] & need == need
                    && frustum.intersects_sphere(s.truncate(), s.w)
                    && centre >= min
                    && !(max > 0.0 && d > max)
                    && !(v.max_draw_distance > 0.0 && d > v.max_draw_distance)
            })
            .map(|i| PrimitiveSlot(i as u32))
            .collect()
    }

    #[test]
    fn chunks_outside_the_view_are_skipped_on_their_box_and_the_result_is_the_per_slot_one() {
        // A 200 x 200 grid added row by row (space order), seen by a narrow
        // view: most chunks (rows 4096 slots long) are skipped.
        let mut scene = Scene::default();
        let side = 200u32;
        for i in 0..side * side {
            let (x, y) = ((i % side) as f32 - 100.0, (i / side) as f32 - 100.0);
            scene.push_culling_slot(Vec4::new(x * 2.0, y * 2.0, 0.0, 0.8), flags::VALID | flags::DRAW, (0.0, 0.0));
        }
        let narrow = SceneView::perspective(
            Vec3::new(0.0, -150.0, 20.0),
            Vec3::new(0.0, -140.0, 0.0),
            Vec3::Z,
            0.6,
            0.1,
            1000.0,
            Rect::from_size(64, 64),
        )
        .unwrap();
        // Returns the slots tested one by one (the rest were skipped on their chunk's box).
        let check = |scene: &Scene, v: &SceneView, what: &str| -> usize {
            let got = compute_visibility(scene, &v.frustum(), Some(v), flags::DRAW, false, true, 1.0);
            assert_eq!(got.visible, brute_force(scene, v, flags::DRAW), "{what}");
            assert_eq!(got, compute_visibility(scene, &v.frustum(), Some(v), flags::DRAW, false, false, 1.0), "{what}: serial = parallel");
            let tested = got.tested as usize;
            assert!(tested >= got.visible.len() && tested <= scene.slot_count(), "{what}: {tested} tested");
            tested
        };
        let tested = check(&scene, &narrow, "built");
        assert!(tested * 2 < scene.slot_count(), "most chunks skipped: {tested} of {} slots tested", scene.slot_count());
        // A draw distance skips chunks too.
        let mut near = view();
        near.max_draw_distance = 40.0;
        assert!(check(&scene, &near, "draw distance") < scene.slot_count());
        // Moves out of every chunk into the view's, and removals: the loose
        // boxes stay correct before they are tightened, and after.
        let mut s = 7u64;
        let mut next = || {
            s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (s >> 33) as u32
        };
        for _ in 0..300 {
            let slot = next() % (side * side);
            if next() % 4 == 0 {
                if scene.flags[slot as usize] != 0 {
                    scene.remove_culling_slot(slot);
                }
            } else {
                scene.move_culling_slot(slot, Vec4::new((next() % 40) as f32 - 20.0, -140.0 + (next() % 30) as f32, 0.0, 0.8));
            }
        }
        check(&scene, &narrow, "moved, loose boxes");
        check(&scene, &near, "moved, loose boxes, draw distance");
        for _ in 0..scene.chunks.len() {
            scene.tighten_chunk_bounds();
        }
        assert!(scene.chunks.iter().all(|c| !c.loose), "every box tightened");
        check(&scene, &narrow, "tightened");
        check(&scene, &near, "tightened, draw distance");
        // A tightened box is exact: it holds its live spheres and no more.
        for (c, b) in scene.chunks.iter().enumerate() {
            let live: Vec<Vec4> = (c * CHUNK..((c + 1) * CHUNK).min(scene.slot_count()))
                .filter(|&i| scene.flags[i] & flags::VALID != 0)
                .map(|i| scene.spheres[i])
                .collect();
            let min = live.iter().fold(Vec3::splat(f32::INFINITY), |m, s| m.min(s.truncate() - s.w));
            assert_eq!(b.min, min, "chunk {c}");
        }
    }

    #[test]
    fn a_primitive_is_visible_when_it_has_the_flags_intersects_the_frustum_and_is_within_its_draw_distance() {
        let scene = scene(CHUNK as u32 + 100);
        let v = view();
        let frustum = v.frustum();
        for require in [flags::DRAW, flags::SHADOW] {
            let vis = compute_visibility(&scene, &frustum, Some(&v), require, false, true, 1.0);
            let expected: Vec<PrimitiveSlot> = (0..scene.slot_count())
                .filter(|&i| {
                    let need = require | flags::VALID;
                    let s = scene.spheres[i];
                    let (min, max) = scene.draw_distances[i];
                    let centre = s.truncate().distance(v.origin);
                    scene.flags[i] & need == need
                        && frustum.intersects_sphere(s.truncate(), s.w)
                        && centre >= min
                        && !(max > 0.0 && centre - s.w > max)
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
        let vis = compute_visibility(&scene, &frustum, Some(&near), flags::DRAW, false, false, 1.0);
        assert!(vis.visible.iter().all(|s| scene.spheres[s.index()].truncate().distance(v.origin) - scene.spheres[s.index()].w <= 30.0));
        assert!(vis.visible.len() < compute_visibility(&scene, &frustum, Some(&v), flags::DRAW, false, false, 1.0).visible.len());
        // `r.ViewDistanceScale` scales it: 30 at 2x culls as 60 does, at 0.5x as 15.
        let at = |d: f32, scale: f32| {
            let mut view = v.clone();
            view.max_draw_distance = d;
            compute_visibility(&scene, &frustum, Some(&view), flags::DRAW, false, true, scale)
        };
        assert_eq!(at(30.0, 2.0), at(60.0, 1.0));
        assert_eq!(at(30.0, 0.5), at(15.0, 1.0));
        assert!(at(15.0, 1.0).visible.len() < vis.visible.len() && vis.visible.len() < at(60.0, 1.0).visible.len());
        let no_view = compute_visibility(&scene, &frustum, None, flags::DRAW, false, false, 1.0);
        assert!(no_view.visible.len() >= compute_visibility(&scene, &frustum, Some(&v), flags::DRAW, false, false, 1.0).visible.len());
        // Nothing to cull.
        assert_eq!(compute_visibility(&Scene::default(), &frustum, Some(&v), flags::DRAW, false, true, 1.0), ViewVisibility::default());
    }
}
