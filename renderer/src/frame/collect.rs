//! The `collect_dynamic` stage: the mesh elements of dynamic primitives
//! (UE's GatherDynamicMeshElements) — and, with
//! `r.MeshDrawCommands.ForceDynamicPath`, of static ones — built into
//! this frame's draw commands, per (view, pass).

use super::InitViews;
use crate::cvars::ConsoleVariables;
use crate::error::Result;
use crate::frame_resources::DynamicBufferRing;
use crate::gpu_work::GpuWork;
use crate::mesh_pass::*;
use crate::scene::{flags, ElementFailure, MeshElementCollector, PrimitiveId, RetireCallback, Scene};
use crate::settings::FrameSettings;
use crate::stats::FrameCounters;
use crate::view::SceneView;
use rhi_vulkan::Device;
use rustc_hash::FxHashMap as HashMap;
use std::collections::BTreeMap;

/// Commands of this frame: the scene's buckets plus dynamic ones.
///
/// A dynamic command equal to a scene bucket's uses that bucket (and merges
/// with its cached primitives); the others get ids after the scene's. Once
/// collected ([`Self::rank_together`]), every bucket of the frame is ranked
/// by one rule (`mesh_pass::state_buckets`): a dynamic bucket joins the
/// pipeline and geometry groups of the scene's buckets it shares state
/// with, born after every scene bucket in the order it was first built
/// (primitive order, as the dynamic elements are collected by slot). So
/// cached and dynamic commands sort together by state: a particle emitter
/// drawn with a pipeline the cached meshes use draws among them, not after
/// all of them with a pipeline switch back (UE sorts both in one list).
pub(crate) struct FrameCommands<'a> {
    pub scene: &'a Scene,
    base: u32,
    pub dynamic: Vec<MeshDrawCommand>,
    lookup: HashMap<MeshDrawCommand, BucketId>,
    /// The draw order of every bucket id of the frame (the scene's own,
    /// shared, until the frame builds a bucket), which every pass's draws
    /// keep a handle to.
    pub order: DrawOrder,
}

impl<'a> FrameCommands<'a> {
    fn new(scene: &'a Scene) -> Self {
        let order = scene.buckets.order().clone();
        Self { scene, base: order.ranks().len() as u32, dynamic: Vec::new(), lookup: HashMap::default(), order }
    }

    pub fn get(&self, bucket: BucketId) -> &MeshDrawCommand {
        if bucket.0 < self.base {
            self.scene.command(bucket).expect("live bucket")
        } else {
            &self.dynamic[(bucket.0 - self.base) as usize]
        }
    }

    fn id_of(&mut self, cmd: MeshDrawCommand) -> BucketId {
        if let Some(id) = self.scene.buckets.find(&cmd) {
            return id;
        }
        if let Some(&id) = self.lookup.get(&cmd) {
            return id;
        }
        let id = BucketId(self.base + self.dynamic.len() as u32);
        self.dynamic.push(cmd.clone());
        self.lookup.insert(cmd, id);
        // Ranked by `rank_together`, once the frame's commands are all built.
        id
    }

    /// Ranks the scene's buckets and this frame's dynamic ones together
    /// (see the type's docs). Nothing to do when the frame built no bucket
    /// of its own: the scene's ranks stand.
    fn rank_together(&mut self) {
        if self.dynamic.is_empty() {
            return;
        }
        self.order = DrawOrder::new(self.scene.buckets.ranks_with(&self.dynamic));
    }
}

/// What `collect_dynamic` hands to pass setup.
pub(crate) struct DynamicElements<'s> {
    pub commands: FrameCommands<'s>,
    /// The dynamic commands visible in each (view, pass), in primitive order.
    pub lists: HashMap<(usize, MeshPass), Vec<VisibleCommand>>,
    /// Dynamic-path commands built this frame.
    pub built: u64,
    /// What proxies asked to run when the frame's GPU work has finished.
    pub on_retired: Vec<RetireCallback>,
    /// The counters proxies reported (`FrameStats::counters`).
    pub counters: FrameCounters,
    /// The element failures proxies reported (`FrameStats::element_failures`).
    pub element_failures: u64,
    /// The compute work proxies declared, in primitive order, for
    /// `gpu_prepare` to record.
    pub gpu_work: Vec<GpuWork>,
}

/// Per visible slot that goes through the dynamic path: in which views it
/// is visible, and at which LOD.
type DynamicSlots = BTreeMap<PrimitiveSlot, (Vec<bool>, Vec<u8>)>;

/// What the `collect_dynamic` stage builds with besides the scene and the views.
pub(crate) struct CollectInputs<'a> {
    pub settings: &'a FrameSettings,
    /// The console variables, for proxies that read their own.
    pub cvars: &'a ConsoleVariables,
    pub pipelines: &'a PipelineLibrary,
    /// Whether dynamic proxies may queue GPU work (see [`collect_dynamic`]).
    pub records_gpu_work: bool,
}

/// Collects every visible dynamic primitive's mesh elements, by slot, and
/// builds their commands for each pass of each view that sees them; the
/// proxies' per-frame vertex data goes into `dynamic`.
///
/// With `records_gpu_work`, dynamic proxies may queue compute work (GPU
/// culling) for `gpu_prepare` to record before the passes
/// ([`DynamicElements::gpu_work`]); without it they must not need to.
pub(crate) fn collect_dynamic<'s>(
    device: &Device,
    scene: &'s Scene,
    v: &InitViews,
    dynamic: &mut DynamicBufferRing,
    inputs: CollectInputs<'_>,
) -> Result<DynamicElements<'s>> {
    let CollectInputs { settings, cvars, pipelines, records_gpu_work } = inputs;
    let force_dynamic = settings.force_dynamic_path;
    let mut out = DynamicElements {
        commands: FrameCommands::new(scene),
        lists: HashMap::default(),
        built: 0,
        on_retired: Vec::new(),
        counters: FrameCounters::new(),
        element_failures: 0,
        gpu_work: Vec::new(),
    };
    let view_refs: Vec<&SceneView> = v.views.iter().collect();
    for (&s, (vis_flags, lods)) in &dynamic_slots(scene, v, force_dynamic) {
        let proxy = scene.proxy_at(s.0).expect("visible slot has a proxy");
        let gpu_work = records_gpu_work.then_some(&mut out.gpu_work);
        let mut collector = MeshElementCollector {
            batches: Vec::new(),
            device,
            dynamic: &mut *dynamic,
            gpu_work,
            cvars,
            on_retired: &mut out.on_retired,
            counters: &mut out.counters,
            occlusion: &v.occlusion,
            failures: Vec::new(),
        };
        if scene.flags[s.index()] & flags::DYNAMIC != 0 {
            proxy.get_dynamic_mesh_elements(&view_refs, vis_flags, &mut collector);
            if !collector.failures.is_empty() {
                out.element_failures += collector.failures.len() as u64;
                log_element_failures(scene.id_at(s.0).expect("visible slot has a proxy"), &collector.failures);
            }
        }
        if force_dynamic && scene.flags[s.index()] & flags::STATIC != 0 {
            let mut batches = Vec::new();
            proxy.draw_static_elements(&mut batches);
            let mirrored = scene.transforms[s.index()].determinant() < 0.0;
            for (vi, _) in vis_flags.iter().enumerate().filter(|(_, v)| **v) {
                for b in batches.iter().filter(|b| b.lod_index == lods[vi]) {
                    let mut b = b.clone();
                    b.reverse_culling ^= mirrored;
                    collector.batches.push((vi, b));
                }
            }
        }
        for (vi, batch) in std::mem::take(&mut collector.batches) {
            if vi >= v.views.len() || !vis_flags[vi] {
                continue;
            }
            add_dynamic_batch(device, scene, pipelines, v, (s, vi), &batch, &mut out)?;
        }
    }
    out.commands.rank_together();
    Ok(out)
}

/// One warning for the failures a primitive reported this frame: the
/// first, and how many more.
fn log_element_failures(primitive: PrimitiveId, failures: &[ElementFailure]) {
    let Some(first) = failures.first() else { return };
    let more = match failures.len() - 1 {
        0 => String::new(),
        n => format!(" (and {n} more)"),
    };
    log::warn!("primitive {}: mesh elements not drawn this frame: {first}{more}", primitive.0);
}

/// The commands of `batch` (of slot `s`, for view `vi`) in each of the view's passes.
fn add_dynamic_batch(
    device: &Device,
    scene: &Scene,
    pipelines: &PipelineLibrary,
    v: &InitViews,
    (s, vi): (PrimitiveSlot, usize),
    batch: &MeshBatch,
    out: &mut DynamicElements<'_>,
) -> Result<()> {
    for pass in v.passes_of(vi) {
        if let Some(cmd) = build_mesh_draw_command(pass, batch, device, &scene.materials, pipelines)? {
            out.built += 1;
            let bucket = out.commands.id_of(cmd);
            let sort_key = scene.translucency_sort_key(s, v.views[vi].origin);
            out.lists.entry((vi, pass)).or_default().push(VisibleCommand { bucket, primitive: s, sort_key });
        }
    }
    Ok(())
}

/// The visible slots that go through the dynamic path, in slot order (so
/// dynamic commands are built, and their lists filled, in primitive order).
fn dynamic_slots(scene: &Scene, v: &InitViews, force_dynamic: bool) -> DynamicSlots {
    let mask = if force_dynamic { flags::DYNAMIC | flags::STATIC } else { flags::DYNAMIC };
    let mut by_slot = DynamicSlots::new();
    if !force_dynamic && scene.dynamic_primitive_count() == 0 {
        return by_slot;
    }
    let n = v.views.len();
    for (vi, vis) in v.visibility.iter().enumerate() {
        for (k, &s) in vis.visible.iter().enumerate() {
            if scene.flags[s.index()] & mask != 0 {
                let e = by_slot.entry(s).or_insert_with(|| (vec![false; n], vec![0; n]));
                e.0[vi] = true;
                e.1[vi] = vis.lods[k];
            }
        }
    }
    by_slot
}
