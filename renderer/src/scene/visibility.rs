//! Per-view visibility: frustum and distance culling over the scene's flat
//! arrays, in parallel chunks, plus static LOD selection by screen size.
//! Chunks are concatenated in order, so the visible list is the same whatever
//! the thread count.

use super::scene::{flags, Scene};
use crate::math::Frustum;
use crate::view::SceneView;
use rayon::prelude::*;

const CHUNK: usize = 4096;

/// The primitives of one view that passed culling, in slot order, with the
/// LOD each uses.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct ViewVisibility {
    pub visible: Vec<u32>,
    pub lods: Vec<u8>,
}

/// Culls every primitive whose flags contain `require` against `frustum`
/// (and `view`'s draw distance, when given).
pub(crate) fn compute_visibility(scene: &Scene, frustum: &Frustum, view: Option<&SceneView>, require: u32, parallel: bool) -> ViewVisibility {
    let n = scene.slot_count();
    let require = require | flags::VALID;
    let cull_chunk = |start: usize| -> ViewVisibility {
        let end = (start + CHUNK).min(n);
        let mut out = ViewVisibility::default();
        for i in start..end {
            if scene.flags[i] & require != require {
                continue;
            }
            let s = scene.spheres[i];
            let center = s.truncate();
            if !frustum.intersects_sphere(center, s.w) {
                continue;
            }
            let mut lod = 0u8;
            if let Some(view) = view {
                let limit = scene.max_draw_distance[i];
                let view_limit = view.max_draw_distance;
                if limit > 0.0 || view_limit > 0.0 {
                    let d = center.distance(view.origin) - s.w;
                    if (limit > 0.0 && d > limit) || (view_limit > 0.0 && d > view_limit) {
                        continue;
                    }
                }
                if scene.flags[i] & flags::MULTI_LOD != 0 {
                    let size = view.screen_size(center, s.w);
                    let sizes = scene.lod_screen_sizes(i as u32);
                    // LOD i while the screen size is at least sizes[i]; the last LOD below that.
                    lod = sizes.iter().position(|&t| size >= t).unwrap_or(sizes.len() - 1) as u8;
                }
            }
            out.visible.push(i as u32);
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
