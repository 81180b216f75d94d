//! The `occlusion` stage: per main view, the largest visible occluders are
//! rasterized into the view's [`OcclusionBuffer`] and the other visible
//! primitives that can be occluded are tested against it; the hidden ones
//! leave the view's visible list (slot order kept). Off with
//! `r.AllowOcclusionQueries=0`. Why this is software occlusion of the
//! current frame, and why it never changes the image: [`crate::occlusion`].

use super::InitViews;
use crate::material::{BlendMode, MaterialId};
use crate::math::Aabb;
use crate::mesh_pass::passes::{PassTable, PassTarget, PassViews};
use crate::occlusion::{OccluderSection, OcclusionBuffer, MAX_OCCLUDERS, MAX_OCCLUDER_TRIANGLES};
use crate::scene::{flags, Scene, ViewVisibility, CULL_CHUNK};
use crate::settings::FrameSettings;
use crate::view::SceneView;
use glam::Vec3;
use rayon::prelude::*;
use rhi_vulkan::CompareOp;

/// Occludee tests per rayon task.
const TEST_CHUNK: usize = 1024;

/// Builds each main view's occlusion buffer and removes the occluded
/// primitives from its visible list (`v.occlusion`, `v.occluded_primitives`).
pub(crate) fn occlusion_cull(scene: &Scene, settings: &FrameSettings, v: &mut InitViews) {
    v.occlusion = vec![None; v.views.len()];
    v.occluded_primitives = 0;
    if !occlusion_enabled(settings, &scene.passes) {
        return;
    }
    let parallel = settings.parallel_pass_setup;
    for i in 0..v.views.len() {
        if v.views[i].kind.is_shadow() || v.views[i].wireframe {
            continue;
        }
        let candidates = std::mem::take(&mut v.visibility[i].occluder_candidates);
        let buffer = build_occlusion_buffer(scene, &v.views[i], &v.visibility[i], candidates);
        if buffer.triangles() > 0 {
            // (Without occluders nothing can be hidden: no test.)
            v.occluded_primitives += remove_occluded(scene, &buffer, &mut v.visibility[i], parallel);
            v.occlusion[i] = Some(buffer);
        }
        v.visibility[i].centre_depths = Vec::new();
    }
}

/// Whether the frame is occlusion culled: `r.AllowOcclusionQueries` is on
/// and every pass the main views draw tests depth ([`main_passes_test_depth`]).
/// Culling gathers the stage's inputs for the main views that are not in
/// wireframe when it is.
pub(crate) fn occlusion_enabled(settings: &FrameSettings, passes: &PassTable) -> bool {
    settings.occlusion_culling && main_passes_test_depth(passes)
}

/// Whether every pass the main views draw tests depth so that a fragment
/// strictly behind the scene depth fails (the argument of
/// [`crate::occlusion`]): a registered pass drawing over everything turns
/// occlusion off.
fn main_passes_test_depth(passes: &PassTable) -> bool {
    passes.drawn_in(PassViews::Main).all(|p| {
        let d = p.desc();
        matches!(d.target, PassTarget::SceneColor | PassTarget::SceneDepth)
            && matches!(d.depth.compare, CompareOp::Less | CompareOp::LessEqual | CompareOp::Equal)
    })
}

/// The view's occlusion buffer: the visible occluders largest on screen
/// first (ties by slot), at most [`MAX_OCCLUDERS`] of them and
/// [`MAX_OCCLUDER_TRIANGLES`] triangles, their opaque sections at the
/// view's LOD; then the max-depth mips. The candidates (visible primitives
/// at least [`MIN_OCCLUDER_SCREEN_SIZE`](crate::occlusion::MIN_OCCLUDER_SCREEN_SIZE)
/// on screen, with indices into `vis.visible`) come from culling
/// (`ViewVisibility::occluder_candidates`).
pub(crate) fn build_occlusion_buffer(
    scene: &Scene,
    view: &SceneView,
    vis: &ViewVisibility,
    mut candidates: Vec<(f32, u32)>,
) -> OcclusionBuffer {
    crate::trace::span!("task", "occlusion_build");
    let mut buffer = OcclusionBuffer::new(view);
    candidates.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    let (mut used, mut triangles) = (0, 0);
    for (_, k) in candidates {
        if used == MAX_OCCLUDERS {
            break;
        }
        let k = k as usize;
        let slot = vis.visible[k];
        let Some(mesh) = scene.proxy_at(slot.0).and_then(|p| p.occluder(vis.lods[k])) else { continue };
        let sections: Vec<OccluderSection<'_>> = mesh
            .lod
            .sections
            .iter()
            .filter_map(|s| {
                let id = mesh.materials.get(s.material_slot as usize).copied().unwrap_or(MaterialId::DEFAULT);
                let material = scene.materials.resolve(id);
                let range = s.first_index as usize..s.first_index as usize + s.index_count as usize;
                (material.blend_mode == BlendMode::Opaque).then_some(())?;
                Some((mesh.lod.indices.get(range)?, material.two_sided))
            })
            .collect();
        let n: usize = sections.iter().map(|(indices, _)| indices.len() / 3).sum();
        if n == 0 || triangles + n > MAX_OCCLUDER_TRIANGLES {
            continue;
        }
        used += 1;
        triangles += n;
        buffer.rasterize(&scene.transforms[slot.index()], &mesh.lod.vertices, &sections);
    }
    buffer.build_hzb();
    buffer
}

/// Removes from `vis` the primitives that can be occluded and whose box is
/// hidden in `buffer`, keeping the order; returns how many.
///
/// Most visible primitives are answered without reading their bounds:
/// - one whose centre lies in front of every occluder vertex
///   ([`OcclusionBuffer::may_hide_at_depth`] with the centre depth culling
///   gathered) cannot be hidden;
/// - a primitive is tested by the box that both its bounds give (its box
///   and the box around its sphere: each holds all it draws, so their
///   overlap does), which lies inside its culling chunk's box, so a chunk
///   whose box can hide nothing ([`OcclusionBuffer::may_hide_within`], one
///   test per chunk) skips its primitives' tests.
pub(crate) fn remove_occluded(scene: &Scene, buffer: &OcclusionBuffer, vis: &mut ViewVisibility, parallel: bool) -> u64 {
    crate::trace::span!("task", "occlusion_test");
    let n = vis.visible.len();
    let depths = &vis.centre_depths;
    // The visible primitives that may lie behind an occluder (all when
    // culling gathered no depths), in order.
    let behind = |&k: &usize| depths.get(k).is_none_or(|&d| buffer.may_hide_at_depth(d));
    let maybe: Vec<usize> = if parallel && n > 4 * TEST_CHUNK {
        (0..n).into_par_iter().with_min_len(4 * TEST_CHUNK).filter(behind).collect()
    } else {
        (0..n).filter(behind).collect()
    };
    // Per chunk holding one of them: whether any can be hidden.
    let mut chunk_may_hide = vec![false; scene.chunks.len()];
    let mut last = usize::MAX;
    for &k in &maybe {
        let c = vis.visible[k].index() / CULL_CHUNK;
        if c != last {
            let b = scene.chunks[c];
            chunk_may_hide[c] = !b.is_empty() && buffer.may_hide_within(&Aabb { min: b.min, max: b.max });
            last = c;
        }
    }
    let hidden = |&k: &usize| {
        let i = vis.visible[k].index();
        if !chunk_may_hide[i / CULL_CHUNK] || scene.flags[i] & flags::OCCLUDABLE == 0 {
            return false;
        }
        let sphere = scene.spheres[i];
        buffer.test_box(&Aabb::from_center_extent(sphere.truncate(), scene.extents[i].min(Vec3::splat(sphere.w))))
    };
    let hidden: Vec<usize> = if parallel && maybe.len() > TEST_CHUNK {
        maybe.par_iter().with_min_len(TEST_CHUNK).copied().filter(|k| hidden(k)).collect()
    } else {
        maybe.iter().copied().filter(|k| hidden(k)).collect()
    };
    if !hidden.is_empty() {
        let mut drop = vec![false; n];
        for &k in &hidden {
            drop[k] = true;
        }
        let mut k = 0;
        vis.visible.retain(|_| {
            k += 1;
            !drop[k - 1]
        });
        let mut k = 0;
        vis.lods.retain(|_| {
            k += 1;
            !drop[k - 1]
        });
    }
    hidden.len() as u64
}
