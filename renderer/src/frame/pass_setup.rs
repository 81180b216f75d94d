//! The `pass_setup` stage: one task per (view, pass) — gather the cached
//! and dynamic commands the view sees, sort them, merge them into instanced
//! draws (UE's SetupMeshPass). The tasks run on rayon's workers; their
//! lists come back in task order.

use super::{DynamicElements, InitViews};
use crate::mesh_pass::passes::SortMode;
use crate::mesh_pass::*;
use crate::scene::Scene;
use crate::settings::FrameSettings;
use rayon::prelude::*;

/// The draws of one pass of one view, ready to record.
pub(crate) struct PassDrawList {
    pub pass: MeshPass,
    /// Index into the frame's views (the shadow view comes last).
    pub view: usize,
    pub draws: DrawList,
    /// The pass's id stream: its primitives in draw order.
    pub ids: IdStream,
    pub commands_before_merge: u64,
    /// Offset of `ids` in the frame's id stream (set by the upload stage).
    pub id_base: u32,
}

/// The draw list of every pass of every view: the main views' passes in
/// view order, then the shadow view's.
pub(crate) fn pass_setup(scene: &Scene, settings: &FrameSettings, v: &InitViews, elements: &DynamicElements<'_>) -> Vec<PassDrawList> {
    let parallel = settings.parallel_pass_setup;
    let instancing = settings.dynamic_instancing;
    let force_dynamic = settings.force_dynamic_path;
    let commands = &elements.commands;
    // A pass nothing the view sees is relevant to is not set up (unless it
    // got dynamic commands: those follow their batches' materials).
    let tasks: Vec<(usize, MeshPass)> = (0..v.views.len())
        .flat_map(|vi| v.passes_of(vi).into_iter().map(move |p| (vi, p)))
        .filter(|&(vi, p)| v.pass_relevant(vi, p) || elements.lists.contains_key(&(vi, p)))
        .collect();
    let setup = |&(vi, pass): &(usize, MeshPass)| -> PassDrawList {
        crate::trace::span!("task", "pass_setup_task");
        let vis = &v.visibility[vi];
        let cache = &scene.cache[pass.index()];
        let can_merge = |b: BucketId| commands.get(b).can_merge();
        let dynamic = elements.lists.get(&(vi, pass));
        let back_to_front = pass.desc().sort == SortMode::BackToFront;
        let (draws, ids) = if !force_dynamic && !back_to_front && dynamic.is_none() {
            gather_sort_merge_cached(
                cache,
                vis.primitives(),
                &commands.ranks,
                &commands.by_rank,
                can_merge,
                instancing,
                parallel.then_some(PIECE),
            )
        } else {
            let origin = v.views[vi].origin;
            let key = |slot: PrimitiveSlot| scene.translucency_sort_key(slot, origin);
            let translucent = back_to_front.then_some(&key as &dyn Fn(PrimitiveSlot) -> u64);
            let (draws, ids) = gather_sort_merge(
                (!force_dynamic).then_some(cache),
                vis.primitives(),
                dynamic.map_or(&[], Vec::as_slice),
                &commands.ranks,
                translucent,
                can_merge,
                instancing,
            );
            (DrawList::from_draws(draws), IdStream::whole(ids))
        };
        PassDrawList { pass, view: vi, commands_before_merge: ids.len() as u64, draws, ids, id_base: 0 }
    };
    // Tasks run in parallel; `collect` keeps them in task order.
    if parallel {
        tasks.par_iter().map(setup).collect()
    } else {
        tasks.iter().map(setup).collect()
    }
}
