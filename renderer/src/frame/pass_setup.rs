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
    /// The draws, and the pass's id stream: its primitives in draw order.
    pub draws: PassDraws,
    pub commands_before_merge: u64,
    /// Offset of the pass's ids in the frame's id stream (set by the upload stage).
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
    let set_up_task = |&(vi, pass): &(usize, MeshPass)| -> PassDrawList {
        crate::trace::span!("task", "pass_setup_task");
        let vis = &v.visibility[vi];
        let cache = &scene.cache[pass.index()];
        let can_merge = |b: BucketId| commands.get(b).can_merge();
        // Present only when the pass got dynamic commands (never empty).
        let dynamic = elements.lists.get(&(vi, pass)).map_or(&[][..], Vec::as_slice);
        let origin = v.views[vi].origin;
        let key = |slot: PrimitiveSlot| scene.translucency_sort_key(slot, origin);
        let back_to_front = (pass.desc().sort == SortMode::BackToFront).then_some(&key as &dyn Fn(PrimitiveSlot) -> u64);
        let options = SetupOptions { back_to_front, can_merge, instancing, parallel };
        let draws = setup((!force_dynamic).then_some(cache), vis.primitives(), dynamic, &commands.order, options);
        PassDrawList { pass, view: vi, commands_before_merge: draws.ids().len() as u64, draws, id_base: 0 }
    };
    // Tasks run in parallel; `collect` keeps them in task order.
    if parallel {
        tasks.par_iter().map(set_up_task).collect()
    } else {
        tasks.iter().map(set_up_task).collect()
    }
}
