//! The render thread's instanced static mesh (UE's
//! `FInstancedStaticMeshSceneProxy`): one proxy draws every instance of a
//! component with **one indirect draw per mesh section and LOD**, whatever
//! the instance count.
//!
//! ## Buffers
//!
//! * Mesh: per LOD, one vertex buffer (the instanced factory's three
//!   per-vertex streams) and one index buffer, built from
//!   [`StaticMeshRenderData::lods`] (the renderer keeps its own copies private).
//! * Instances: one GPU-only buffer of [`InstanceStreamData`] (80 B each),
//!   written once and then only in place by dirty ranges
//!   ([`IsmUpdate`] → `ProxyUpdateContext::upload`); recreated (larger) only
//!   when the instance count outgrows it. A CPU copy serves the CPU path.
//! * Custom data (`proxy/custom_data.rs`): one GPU-only storage buffer of
//!   every instance's custom floats, indexed by the instance's id slot,
//!   bound at group 3 through a persistent bind group that the proxy's mesh
//!   batches carry (`MeshBatch::vertex_factory_bindings`); the instanced
//!   factory's `vf_custom_data` reads it. Updated like the instances (dirty
//!   instances in place, [`IsmUpdate::custom_data`]); re-created when it
//!   outgrows its room or the floats per instance change.
//! * Visible instances (GPU path): one GPU-only buffer, one region of
//!   `instance_count` entries per view (× 2 with a LOD transition), written
//!   by the culling pass and read as the instance stream. Memory: `80 B × instances × views`.
//! * Per view and frame, in the renderer's dynamic ring: the culling
//!   parameters (512 B), a control block (LOD counters and the occluded
//!   count in a 64 B header, then one `VkDrawIndexedIndirectCommand` per LOD
//!   and section), the per-workgroup counts of the stable compaction
//!   (`9 × 4 B` per 256 instances) and the view's occlusion buffer (352 B
//!   and its depths, ~200 KB for a main view; the header alone otherwise).
//!
//! ## Three paths, chosen per frame
//!
//! | path | when | what is drawn |
//! | --- | --- | --- |
//! | GPU culling (`proxy/gpu_culling.rs`) | `r.InstancedStaticMeshes.GPUCulling=1` (default) and the frame is recorded | compute per view (`shaders/instance_cull.wgsl`), declared to the renderer as GPU work: frustum, cull distance + fade, occlusion, per-instance LOD; compacted copies in instance order; indirect draws |
//! | CPU culling (`proxy/cpu_culling.rs`) | the cvar is 0, or the frame is only prepared (benchmarks) | the same test on the CPU ([`crate::culling`]'s helpers), compacted instances uploaded, one direct instanced draw per section and LOD |
//! | HISM | the proxy is hierarchical ([`crate::hism`]), any cvar but UE mode | as CPU culling, through the cluster tree (occluded clusters skipped whole) |
//! | UE mode (`proxy/cpu_culling.rs`) | `r.InstancedStaticMeshes.UEMode=1` | every instance, at the one LOD the union bounds select, no compute, no fade (UE fades in the vertex shader) |
//!
//! LOD screen sizes: [`StaticMeshRenderData`] uses the renderer's convention
//! ("LOD i while the screen size is at least `sizes[i]`"); culling uses UE's
//! (`crate::culling::lod_for_screen_size`). [`instanced_mesh_for`] converts,
//! so an instance picks the LOD a static mesh at its place would.
//!
//! A component with a fade band (`start < end` cull distances) draws with
//! the instanced factory's dithered variant
//! ([`crate::INSTANCED_DITHERED_VERTEX_FACTORY`]): every path passes each
//! visible instance's fade in its [`InstanceStreamData::fade`], and the
//! passes keep that fraction of its pixels (an ordered dither), so it fades
//! out instead of popping at the end distance. Every path also applies the
//! component's minimum LOD (UE's `MinLOD`, [`crate::culling::select_lod`])
//! and its dithered LOD transition ([`crate::LodDitherBand`], dithered factory too): an instance
//! near a LOD threshold goes to both LODs' lists in instance order, its side and share in `flags`.
//!
//! Views that are orthographic (the shadow view) measure cull distance and
//! LOD from the first perspective view of the frame (UE: shadows use the
//! main view's LOD), so a faded-out instance casts no shadow either.
//!
//! ## Statistics
//!
//! The renderer cannot see GPU-side counts, so the proxy reports its main
//! view's visible instances into the frame's stats
//! ([`crate::VISIBLE_INSTANCES_COUNTER`]; on the GPU path read from the
//! frame's counters when the frame retires), and keeps its own figures in
//! an [`IsmStats`] handle: instances, visible instances per view (exact on
//! the CPU and UE paths; on the GPU path from the retired frame, naming it
//! in `gpu_frame`) and the bytes of the last dynamic update.
//!
//! ## Files
//!
//! This file holds the proxy — its state, the draws every path shares
//! (`batch`, `args_template`), its [`PrimitiveSceneProxy`] impl (which picks
//! the path each frame), its GPU resources and its dynamic updates. The
//! paths live beside it: `proxy/gpu_culling.rs` (the one that queues GPU
//! work before the passes) and `proxy/cpu_culling.rs` (CPU culling, HISM and
//! UE mode: no GPU work).

mod cpu_culling;
mod custom_data;
mod gpu_culling;

use std::sync::{Arc, Mutex};

use glam::{Affine3A, Mat4, Vec3};
use renderer::{
    Bounds, ElementFailure, GeometryChange, MaterialId, MeshBatch, MeshBatchElement, MeshElementCollector, PrimitiveSceneProxy,
    ProxyUpdateContext, SceneView, StaticMeshRenderData, ViewRelevance,
};
use rhi_vulkan::{BufferDesc, BufferHandle, BufferUsage, Device};

use crate::bounds::checked_bounds;
use crate::culling::{CullDistances, CullView, DrawIndexedIndirectArgs, Frustum, LodDitherBand};
use crate::error::{InstancingError, Result};
use crate::hism::{HismTree, ProxyTree};
use crate::mesh::{InstancedMesh, MeshLod, MeshSection};
use crate::stats::VISIBLE_INSTANCES_COUNTER;
pub use crate::stats::{CullPath, IsmStats, IsmStatsSnapshot};
use crate::vertex_factory::{InstanceStreamData, InstancedVertexFactory};
use custom_data::CustomData;
use gpu_culling::{GpuCull, Pipelines};

/// Turns GPU culling on (1, default) or off (0: CPU culling).
pub const CVAR_GPU_CULLING: &str = "r.InstancedStaticMeshes.GPUCulling";
/// UE's plain ISM behaviour (1): all instances, one LOD, no culling pass.
pub const CVAR_UE_MODE: &str = "r.InstancedStaticMeshes.UEMode";

/// What an instanced proxy reports
/// ([`renderer::MeshElementCollector::report_failure`], counted in
/// `renderer::FrameStats::element_failures`) when it cannot draw this frame:
/// its cull's memory (uploads to the frame's dynamic memory, the GPU cull's
/// output buffer) could not be had, or a view cannot be culled. Its
/// instances are not drawn that frame; the rest of the frame is.
pub const DRAW_FAILURE: &str = "instanced static mesh draws";

/// Draws (LOD × section) the culling pass can write arguments for.
pub const MAX_DRAWS: usize = 64;

/// The culling mesh of a render mesh: its bounds, index ranges, and its LOD
/// screen sizes converted from the renderer's convention to UE's.
pub fn instanced_mesh_for(mesh: &StaticMeshRenderData) -> Result<InstancedMesh> {
    let b = mesh.bounds();
    let bounds = checked_bounds(b)?;
    let lods = mesh.lods();
    let sizes: Vec<f32> = lods.iter().map(|l| l.screen_size).collect();
    let lods = lods
        .iter()
        .enumerate()
        .map(|(i, l)| MeshLod {
            // UE: LOD i is used below ScreenSize[i]; renderer: below sizes[i-1].
            screen_size: if i == 0 { f32::MAX } else { sizes[i - 1] },
            vertex_count: l.vertices.len() as u32,
            sections: l
                .sections
                .iter()
                .map(|s| MeshSection { first_index: s.first_index, index_count: s.index_count, vertex_offset: 0 })
                .collect(),
        })
        .collect();
    InstancedMesh::new(bounds, lods)
}

/// Flips clip-space y (the renderer's projections are y-down); the frustum
/// is the same set of planes, and the LOD screen multiple becomes positive.
fn flip_clip_y(mut p: Mat4) -> Mat4 {
    p.x_axis.y = -p.x_axis.y;
    p.y_axis.y = -p.y_axis.y;
    p.z_axis.y = -p.z_axis.y;
    p.w_axis.y = -p.w_axis.y;
    p
}

/// The CPU culling view of a renderer view (same frustum, origin and LOD
/// screen multiple the GPU pass uses for a perspective view).
pub fn cull_view_for(view: &SceneView) -> Result<CullView> {
    CullView::new(view.view_matrix, flip_clip_y(view.projection))
}

/// What one view's cull needs: the view's frustum, and the origin and screen
/// multiple of the view its LOD and distances are measured from.
#[derive(Clone, Copy, Debug)]
struct ViewCull {
    frustum: Frustum,
    origin: Vec3,
    multiple: f32,
    /// The component's cull distances as this frame's views use them
    /// (scaled by `r.ViewDistanceScale`).
    distances: CullDistances,
}

fn view_culls(views: &[&SceneView], distances: CullDistances) -> Result<Vec<ViewCull>> {
    let lod_view = views.iter().find(|v| v.perspective).map(|v| cull_view_for(v)).transpose()?;
    views
        .iter()
        .map(|v| {
            let own = cull_view_for(v)?;
            let reference = if v.perspective { own } else { lod_view.unwrap_or(own) };
            Ok(ViewCull { frustum: *own.frustum(), origin: reference.origin(), multiple: reference.screen_multiple(), distances })
        })
        .collect()
}

/// A dynamic update from the game side (UE's `SendRenderDynamicData`),
/// built by the [`InstancedStaticMeshComponent`](crate::InstancedStaticMeshComponent)
/// as its dynamic data.
///
/// The fields are public, so the proxy checks an update with
/// [`IsmUpdate::validate`] before it applies anything: one that does not
/// fit is rejected whole (logged, counted in
/// [`IsmStatsSnapshot::rejected_updates`], and returned to the renderer as
/// an error), and the proxy keeps its state.
#[derive(Clone, Debug, Default)]
pub struct IsmUpdate {
    /// The instance count after the edits.
    pub instance_count: u32,
    /// Dirty ranges: first index and the packed instances from there.
    pub ranges: Vec<(u32, Vec<InstanceStreamData>)>,
    /// New union bounds of the instances, component space.
    pub local_bounds: Option<Bounds>,
    pub distances: Option<CullDistances>,
    /// A new minimum LOD (UE's `MinLOD`), below [`crate::MAX_LODS`];
    /// culling clamps it to the mesh's last LOD.
    pub min_lod: Option<u8>,
    /// A new dithered LOD transition band (validated when made).
    pub lod_dither: Option<LodDitherBand>,
    /// HISM: a newly built cluster tree (see [`crate::hism`]).
    pub tree: Option<HismTree>,
    /// The custom floats of the instances `ranges` writes; `None` leaves the
    /// proxy's custom data as it is (see [`IsmUpdate::validate_custom_data`]).
    pub custom_data: Option<IsmCustomData>,
}

/// All custom floats of the instances an [`IsmUpdate`] writes (the inline
/// [`InstanceStreamData::custom`] carries only floats 0..3).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct IsmCustomData {
    /// Floats per instance (the store's `num_custom_data_floats`).
    pub floats_per_instance: u32,
    /// `floats_per_instance` floats for each instance of the update's
    /// ranges, in order.
    pub values: Vec<f32>,
}

impl IsmUpdate {
    /// Checks this update against a proxy holding `current` instances:
    ///
    /// * `instance_count` ≤ [`crate::MAX_INSTANCES`];
    /// * every range lies within `instance_count`;
    /// * instances past `current` (new ones) are all written by some range,
    ///   so a proxy never grows by data it was not sent (an update cannot
    ///   ask for more memory than it carries);
    /// * instance data, and `local_bounds` if any, are finite;
    /// * `tree.edited_since` names instances below `instance_count`;
    /// * `min_lod` is below [`crate::MAX_LODS`].
    pub fn validate(&self, current: u32) -> Result<()> {
        let bad = |m: String| Err(InstancingError::InvalidUpdate(m));
        let n = self.instance_count;
        if let Some(l) = self.min_lod.filter(|&l| usize::from(l) >= crate::MAX_LODS) {
            return bad(format!("minimum LOD {l} is past the last LOD a mesh may have ({})", crate::MAX_LODS - 1));
        }
        if n > crate::MAX_INSTANCES {
            return bad(format!("instance count {n} is past MAX_INSTANCES ({})", crate::MAX_INSTANCES));
        }
        for (first, items) in &self.ranges {
            let end = u64::from(*first) + items.len() as u64;
            if end > u64::from(n) {
                return bad(format!("range {first}..{end} is past the instance count {n}"));
            }
            let finite =
                items.iter().all(|d| d.transform_rows.iter().flatten().chain(&d.custom).chain([&d.random, &d.fade]).all(|v| v.is_finite()));
            if !finite {
                return bad(format!("range {first}..{end} holds non-finite instance data"));
            }
        }
        // Every new index (current..n) must be written.
        if n > current {
            let covered = self.covered_from(u64::from(current));
            if covered < u64::from(n) {
                return bad(format!("instances {covered}..{n} are new but no range writes them (the proxy holds {current})"));
            }
        }
        if let Some(b) = &self.local_bounds {
            if !b.is_valid() {
                return bad(format!("local bounds {b:?} are not finite"));
            }
        }
        if let Some(t) = &self.tree {
            if let Some(i) = t.edited_since.iter().find(|&&i| i >= n) {
                return bad(format!("tree edit list names instance {i}, past the instance count {n}"));
            }
        }
        Ok(())
    }

    /// Checks [`Self::custom_data`] against a proxy holding
    /// `current_floats` custom floats per instance: at most
    /// [`crate::MAX_CUSTOM_DATA_FLOATS`] per instance, finite, exactly
    /// `floats_per_instance` for each instance the ranges write; and a
    /// change of `floats_per_instance` (a new layout) must re-send every
    /// instance (the ranges cover `0..instance_count`).
    pub fn validate_custom_data(&self, current_floats: u32) -> Result<()> {
        let Some(c) = &self.custom_data else { return Ok(()) };
        let sent: usize = self.ranges.iter().map(|(_, items)| items.len()).sum();
        custom_data::check(c.floats_per_instance, sent, &c.values)?;
        if c.floats_per_instance != current_floats {
            let covered = self.covered_from(0);
            if covered < u64::from(self.instance_count) {
                return Err(InstancingError::InvalidUpdate(format!(
                    "custom floats per instance change ({current_floats} -> {}) but instances {covered}..{} are not re-sent",
                    c.floats_per_instance, self.instance_count
                )));
            }
        }
        Ok(())
    }

    /// The end of the run of indices the ranges write from `start` on.
    fn covered_from(&self, start: u64) -> u64 {
        let mut written: Vec<(u64, u64)> =
            self.ranges.iter().map(|(first, items)| (u64::from(*first), u64::from(*first) + items.len() as u64)).collect();
        written.sort_unstable();
        let mut covered = start;
        for (s, e) in written {
            if s > covered {
                break;
            }
            covered = covered.max(e);
        }
        covered
    }
}

struct LodGpu {
    vertices: BufferHandle,
    offsets: [u64; 3],
    indices: BufferHandle,
}

/// The render thread's instanced static mesh; see the module docs.
pub struct InstancedStaticMeshSceneProxy {
    mesh: Arc<StaticMeshRenderData>,
    culling_mesh: InstancedMesh,
    materials: Vec<MaterialId>,
    cast_shadow: bool,
    distances: CullDistances,
    /// UE's `MinLOD` (clamped to the mesh's last LOD where LODs are picked).
    min_lod: u8,
    lod_dither: LodDitherBand,
    component_to_world: Affine3A,
    local_bounds: Bounds,
    instances: Vec<InstanceStreamData>,
    lods: Vec<LodGpu>,
    instance_buffer: Option<(BufferHandle, u32)>,
    custom: CustomData,
    pipelines: Option<Pipelines>,
    cull: Mutex<GpuCull>,
    stats: IsmStats,
    /// (LOD, section index) of each draw, LOD-major.
    draws: Vec<(u8, usize)>,
    /// HISM mode: cull on the CPU through the cluster tree (the tree itself
    /// arrives later, through dynamic data).
    hierarchical: bool,
    tree: Option<ProxyTree>,
}

impl InstancedStaticMeshSceneProxy {
    /// A proxy drawing `instances` (component space) of `mesh`, placed by
    /// `component_to_world` until the scene tells it the primitive's
    /// transform ([`PrimitiveSceneProxy::on_transform_changed`], on add and
    /// on every transform update).
    pub fn new(
        mesh: Arc<StaticMeshRenderData>,
        materials: Vec<MaterialId>,
        instances: Vec<InstanceStreamData>,
        local_bounds: Bounds,
        component_to_world: Affine3A,
        distances: CullDistances,
    ) -> Result<Self> {
        let culling_mesh = instanced_mesh_for(&mesh)?;
        let draws: Vec<(u8, usize)> =
            culling_mesh.lods().iter().enumerate().flat_map(|(l, lod)| (0..lod.sections.len()).map(move |s| (l as u8, s))).collect();
        if draws.len() > MAX_DRAWS {
            return Err(InstancingError::InvalidMesh("more than 64 LOD sections"));
        }
        crate::transform::validate_transform(&component_to_world)?;
        let stats = IsmStats::default();
        stats.lock().instances = instances.len() as u64;
        Ok(Self {
            mesh,
            culling_mesh,
            materials,
            cast_shadow: true,
            distances,
            min_lod: 0,
            lod_dither: LodDitherBand::OFF,
            component_to_world,
            local_bounds,
            instances,
            lods: Vec::new(),
            instance_buffer: None,
            custom: CustomData::default(),
            pipelines: None,
            cull: Mutex::new(GpuCull::default()),
            stats,
            draws,
            hierarchical: false,
            tree: None,
        })
    }

    /// The instances' custom floats for materials (`custom_data(in, k)`):
    /// `floats_per_instance` (at most [`crate::MAX_CUSTOM_DATA_FLOATS`])
    /// finite floats per instance, in the order of the instances given to
    /// [`Self::new`]. Without it, instances have none (the inline floats
    /// 0..3 of [`InstanceStreamData::custom`] still reach `in.custom`).
    pub fn with_custom_data(mut self, floats_per_instance: u32, values: &[f32]) -> Result<Self> {
        custom_data::check(floats_per_instance, self.instances.len(), values)?;
        let slots: Vec<u32> = self.instances.iter().map(|d| d.instance_id).collect();
        self.custom = CustomData::new(floats_per_instance, &slots, values);
        Ok(self)
    }

    /// HISM mode ([`crate::hism`]): culls on the CPU through `tree` once it
    /// has one (flat until then).
    pub fn with_hierarchical(mut self, tree: Option<HismTree>) -> Self {
        self.hierarchical = true;
        self.set_tree(tree);
        self
    }

    fn set_tree(&mut self, tree: Option<HismTree>) {
        if let Some(t) = tree {
            let t = ProxyTree::new(t);
            self.stats.lock().tree_generation = Some(t.generation());
            self.tree = Some(t);
        }
    }

    pub fn is_hierarchical(&self) -> bool {
        self.hierarchical
    }

    /// A minimum LOD (UE's `MinLOD`): no instance draws a more detailed
    /// LOD; clamped to the mesh's last LOD.
    pub fn with_min_lod(mut self, min_lod: u8) -> Self {
        self.min_lod = min_lod;
        self
    }

    /// A dithered LOD transition ([`crate::InstancedStaticMeshComponent::set_dithered_lod_transition`]).
    pub fn with_lod_dither(mut self, band: LodDitherBand) -> Self {
        self.lod_dither = band;
        self
    }

    pub fn with_cast_shadow(mut self, cast_shadow: bool) -> Self {
        self.cast_shadow = cast_shadow;
        self
    }

    /// The statistics handle (clone it before handing the proxy over).
    pub fn stats(&self) -> IsmStats {
        self.stats.clone()
    }

    pub fn instance_count(&self) -> u32 {
        self.instances.len() as u32
    }

    /// The culling mesh (for CPU reference culls).
    pub fn culling_mesh(&self) -> &InstancedMesh {
        &self.culling_mesh
    }

    /// The instance buffer and its capacity in instances (tests check that
    /// edits keep it).
    pub fn instance_buffer(&self) -> Option<(BufferHandle, u32)> {
        self.instance_buffer
    }

    /// The custom data buffer and its room in instance slots (tests check
    /// that edits keep it).
    pub fn custom_data_buffer(&self) -> Option<(BufferHandle, u64)> {
        self.custom.buffer()
    }

    /// The custom data's bind group (group 3 of the instanced factory).
    pub fn custom_data_bind_group(&self) -> Option<rhi_vulkan::BindGroupHandle> {
        self.custom.bind_group()
    }

    fn streams(&self, lod: usize, instances: (BufferHandle, u64)) -> [Option<(BufferHandle, u64)>; 4] {
        let g = &self.lods[lod];
        [Some((g.vertices, g.offsets[0])), Some((g.vertices, g.offsets[1])), Some((g.vertices, g.offsets[2])), Some(instances)]
    }

    fn batch(&self, draw: usize, instances: (BufferHandle, u64), instance_count: u32, indirect: Option<(BufferHandle, u64)>) -> MeshBatch {
        let (lod, s) = self.draws[draw];
        let section = self.mesh.lods()[lod as usize].sections[s];
        let material = self.materials.get(section.material_slot as usize).copied().unwrap_or(MaterialId::DEFAULT);
        MeshBatch {
            // With a fade band or a LOD transition, the dithered variant.
            vertex_factory: InstancedVertexFactory::for_settings(&self.distances, self.lod_dither),
            streams: self.streams(lod as usize, instances),
            element: MeshBatchElement {
                instance_count,
                indirect,
                ..MeshBatchElement::indexed(self.lods[lod as usize].indices, section.first_index, section.index_count)
            },
            material,
            lod_index: lod,
            cast_shadow: self.cast_shadow,
            reverse_culling: self.component_to_world.matrix3.determinant() < 0.0,
            vertex_factory_bindings: self.custom.bind_group(),
        }
    }

    /// The draw arguments with zero instances (the GPU pass fills counts).
    fn args_template(&self, counts: Option<&[u32]>) -> Vec<DrawIndexedIndirectArgs> {
        let mut firsts = vec![0u32; self.culling_mesh.lod_count()];
        if let Some(c) = counts {
            for l in 1..firsts.len() {
                firsts[l] = firsts[l - 1] + c[l - 1];
            }
        }
        self.draws
            .iter()
            .map(|&(l, s)| {
                let section = self.culling_mesh.lods()[l as usize].sections[s];
                DrawIndexedIndirectArgs {
                    index_count: section.index_count,
                    instance_count: counts.map_or(0, |c| c[l as usize]),
                    first_index: section.first_index,
                    vertex_offset: section.vertex_offset,
                    first_instance: firsts[l as usize],
                }
            })
            .collect()
    }

    /// Keeps this frame's visible counts (CPU paths: known now) and reports
    /// the main view's into the frame's stats.
    fn set_visible_stats(&self, collector: &mut MeshElementCollector<'_, '_>, path: CullPath, per_view: Vec<u64>, per_lod: Vec<u64>) {
        collector.add_counter(VISIBLE_INSTANCES_COUNTER, per_view.first().copied().unwrap_or(0));
        let mut s = self.stats.lock();
        s.path = path;
        s.visible_per_view = per_view;
        s.visible_per_lod = per_lod;
        s.instances = self.instances.len() as u64;
    }
}

/// Where an update changes an instanced mesh's geometry (component space).
struct ChangedGeometry {
    /// Boxes of instances before the update (moved or removed) and after (moved or added).
    boxes: Vec<Bounds>,
    /// The whole mesh changes (more instances than [`MAX_REPORTED_INSTANCES`],
    /// or its LODs or distances): its bounds before are in `boxes`, its
    /// bounds after the update are reported too.
    whole: bool,
}

/// Instances an update reports one by one; past this, the whole mesh.
const MAX_REPORTED_INSTANCES: usize = 64;

impl InstancedStaticMeshSceneProxy {
    /// Where an update writing `ranges` and leaving `count` instances
    /// changes the geometry (read before it is applied): each written or
    /// removed instance's box before and each written one's after, or the
    /// whole mesh's bounds when `whole` or more than
    /// [`MAX_REPORTED_INSTANCES`] instances change.
    fn changed_geometry(&self, count: u32, ranges: &[(u32, Vec<InstanceStreamData>)], whole: bool) -> ChangedGeometry {
        let removed = self.instances.get(count as usize..).unwrap_or(&[]);
        let written: usize = ranges.iter().map(|(_, items)| items.len()).sum();
        if whole || written + removed.len() > MAX_REPORTED_INSTANCES {
            return ChangedGeometry { boxes: vec![self.local_bounds], whole: true };
        }
        let mesh = *self.culling_mesh.bounds();
        let instance_box = |i: &InstanceStreamData| mesh.transformed(&glam::Mat4::from(i.transform()));
        let before = ranges.iter().flat_map(|(first, items)| self.instances.iter().skip(*first as usize).take(items.len()));
        let after = ranges.iter().flat_map(|(_, items)| items.iter());
        let boxes = before.chain(removed).chain(after).map(instance_box).collect();
        ChangedGeometry { boxes, whole: false }
    }
}

impl PrimitiveSceneProxy for InstancedStaticMeshSceneProxy {
    fn local_bounds(&self) -> Bounds {
        self.local_bounds
    }

    /// Its instances change only through updates (each view's culling and
    /// LODs are a function of the view and the instances), and each update
    /// reports the instances it moves, adds or removes
    /// (`changed_geometry`).
    fn reports_geometry_changes(&self) -> bool {
        true
    }

    fn view_relevance(&self, _view: &SceneView) -> ViewRelevance {
        ViewRelevance { draw: true, shadow: self.cast_shadow, dynamic_relevance: true, opaque: true, ..Default::default() }
    }

    fn get_dynamic_mesh_elements(&self, views: &[&SceneView], visibility: &[bool], collector: &mut MeshElementCollector<'_, '_>) {
        if self.instances.is_empty() || self.lods.is_empty() {
            return;
        }
        let scale = collector.cvars().float(renderer::cvars::VIEW_DISTANCE_SCALE);
        let culls = match view_culls(views, self.distances.scaled(scale)) {
            Ok(c) => c,
            Err(e) => {
                collector.report_failure(ElementFailure::new(DRAW_FAILURE, e));
                return;
            }
        };
        let ue_mode = collector.cvars().bool(CVAR_UE_MODE);
        let gpu = collector.cvars().get(CVAR_GPU_CULLING).is_none_or(|v| v == renderer::CvarValue::Bool(true));
        let result = if ue_mode {
            self.draw_ue_mode(views, visibility, &culls, collector);
            Ok(())
        } else if gpu && !self.hierarchical && collector.records_gpu_work() {
            self.draw_gpu_culled(visibility, &culls, collector)
        } else {
            self.draw_cpu_culled(visibility, &culls, collector)
        };
        // Out of the frame's dynamic memory (or of buffer memory for the
        // GPU cull's output): the proxy's draws are skipped this frame.
        if let Err(e) = result {
            collector.report_failure(ElementFailure::new(DRAW_FAILURE, e));
        }
    }

    fn create_render_resources(&mut self, device: &Device) -> rhi_vulkan::Result<()> {
        for lod in self.mesh.lods() {
            let (bytes, offsets) = InstancedVertexFactory::pack(&lod.vertices);
            let vertices =
                device.create_buffer_init(&BufferDesc::gpu_only("ism mesh vertices", bytes.len() as u64, BufferUsage::VERTEX), &bytes)?;
            let indices = device.create_buffer_init(
                &BufferDesc::gpu_only("ism mesh indices", lod.indices.len() as u64 * 4, BufferUsage::INDEX),
                bytemuck::cast_slice(&lod.indices),
            )?;
            self.lods.push(LodGpu { vertices, offsets, indices });
        }
        let capacity = (self.instances.len() as u32).max(1);
        let mut bytes = bytemuck::cast_slice::<InstanceStreamData, u8>(&self.instances).to_vec();
        bytes.resize(capacity as usize * InstanceStreamData::SIZE as usize, 0);
        let buffer = device.create_buffer_init(
            &BufferDesc::gpu_only("ism instances", bytes.len() as u64, BufferUsage::STORAGE | BufferUsage::VERTEX),
            &bytes,
        )?;
        self.instance_buffer = Some((buffer, capacity));
        self.custom.create(device)?;
        self.pipelines = Some(Pipelines::create(device)?);
        Ok(())
    }

    fn release_render_resources(&mut self, device: &Device) {
        for l in self.lods.drain(..) {
            device.destroy_buffer(l.vertices);
            device.destroy_buffer(l.indices);
        }
        if let Some((b, _)) = self.instance_buffer.take() {
            device.destroy_buffer(b);
        }
        self.custom.release(device);
        self.cull_state().release(device);
        if let Some(p) = self.pipelines.take() {
            p.release(device);
        }
    }

    /// The scene's transform of this primitive (on add and on every move,
    /// e.g. a parent moved in engine-core's `World`): culling uses it.
    fn on_transform_changed(&mut self, local_to_world: Mat4) {
        let m = Affine3A::from_mat4(local_to_world);
        if crate::transform::validate_transform(&m).is_ok() {
            self.component_to_world = m;
        } else {
            log::error!("instanced static mesh: invalid transform ignored: {local_to_world}");
        }
    }

    fn update_dynamic_data(&mut self, data: Box<dyn std::any::Any + Send>, ctx: &mut ProxyUpdateContext<'_>) -> rhi_vulkan::Result<()> {
        let Ok(update) = data.downcast::<IsmUpdate>() else {
            log::warn!("instanced static mesh: unknown dynamic data ignored");
            return Ok(());
        };
        // The custom floats' id slots, in the order of their values.
        let custom_slots: Vec<u32> = match &update.custom_data {
            Some(_) => update.ranges.iter().flat_map(|(_, items)| items.iter().map(|d| d.instance_id)).collect(),
            None => Vec::new(),
        };
        let checked = update
            .validate(self.instances.len() as u32)
            .and_then(|()| update.validate_custom_data(self.custom.floats()))
            .and_then(|()| match &update.custom_data {
                Some(c) => self.custom.check_fits(ctx.device, c.floats_per_instance, custom_slots.iter().copied()),
                None => Ok(()),
            });
        if let Err(e) = checked {
            // Nothing applied; the renderer reports the error.
            log::error!("instanced static mesh: update rejected: {e}");
            self.stats.lock().rejected_updates += 1;
            return Err(rhi_vulkan::RhiError::InvalidDesc(e.to_string()));
        }
        let IsmUpdate { instance_count, ranges, local_bounds, distances, min_lod, lod_dither, tree, custom_data } = *update;
        let whole = distances.is_some() || min_lod.is_some() || lod_dither.is_some();
        let changed = self.changed_geometry(instance_count, &ranges, whole);
        if let Some(d) = distances {
            self.distances = d;
        }
        if let Some(l) = min_lod {
            self.min_lod = l;
        }
        self.lod_dither = lod_dither.unwrap_or(self.lod_dither);
        if let Some(b) = local_bounds {
            self.local_bounds = b;
        }
        let n = instance_count as usize;
        self.instances.resize(n, InstanceStreamData::default());
        let mut written = Vec::new();
        for (first, items) in ranges {
            // Validated: within the instance count.
            let first = first as usize;
            self.instances[first..first + items.len()].copy_from_slice(&items);
            written.push((first, items.len()));
            if let Some(t) = &mut self.tree {
                t.mark(first as u32..(first + items.len()) as u32);
            }
        }
        self.set_tree(tree);
        let mut uploaded = 0u64;
        let mut recreated = false;
        match self.instance_buffer {
            Some((buffer, capacity)) if instance_count <= capacity => {
                for (first, len) in written {
                    let bytes = bytemuck::cast_slice::<InstanceStreamData, u8>(&self.instances[first..first + len]).to_vec();
                    uploaded += bytes.len() as u64;
                    ctx.upload(buffer, first as u64 * InstanceStreamData::SIZE, bytes);
                }
            }
            old => {
                // Grown past the buffer: a new one, with room to grow again.
                let capacity = instance_count.checked_next_power_of_two().unwrap_or(instance_count).max(64);
                let mut bytes = bytemuck::cast_slice::<InstanceStreamData, u8>(&self.instances).to_vec();
                bytes.resize(capacity as usize * InstanceStreamData::SIZE as usize, 0);
                let buffer = ctx.create_buffer("ism instances", &bytes, BufferUsage::STORAGE | BufferUsage::VERTEX)?;
                if let Some((b, _)) = old {
                    ctx.device.destroy_buffer(b);
                }
                self.instance_buffer = Some((buffer, capacity));
                uploaded = bytes.len() as u64;
                recreated = true;
            }
        }
        if let Some(c) = custom_data {
            let (bytes, _) = self.custom.apply(c.floats_per_instance, &custom_slots, &c.values, ctx)?;
            uploaded += bytes;
        }
        let after = changed.whole.then_some(self.local_bounds);
        for bounds in changed.boxes.into_iter().chain(after) {
            for &material in &self.materials {
                ctx.geometry_changed(GeometryChange { local_bounds: bounds, material, cast_shadow: self.cast_shadow });
            }
        }
        let mut s = self.stats.lock();
        s.instances = n as u64;
        s.last_update_upload_bytes = uploaded;
        s.instance_buffer_recreations += u64::from(recreated);
        Ok(())
    }

    fn memory_footprint(&self) -> usize {
        std::mem::size_of::<Self>() + self.instances.len() * std::mem::size_of::<InstanceStreamData>() + self.custom.memory_footprint()
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::culling::lod_for_screen_size;
    use renderer::{shapes, StaticMeshLod};

    fn two_lod_mesh() -> Arc<StaticMeshRenderData> {
        let mut lod0 = shapes::cube(1.0);
        lod0.screen_size = 0.5;
        let lod1 = shapes::cube(1.0);
        StaticMeshRenderData::new(vec![lod0, lod1]).unwrap()
    }

    #[test]
    fn lod_convention_converts_to_the_renderer_choice() {
        let mesh = instanced_mesh_for(&two_lod_mesh()).unwrap();
        // Renderer: LOD 0 while size >= 0.5, then LOD 1.
        assert_eq!(lod_for_screen_size(0.7, mesh.screen_sizes()), 0);
        assert_eq!(lod_for_screen_size(0.5, mesh.screen_sizes()), 0);
        assert_eq!(lod_for_screen_size(0.3, mesh.screen_sizes()), 1);
        let single =
            instanced_mesh_for(&StaticMeshRenderData::new(vec![StaticMeshLod { screen_size: 0.0, ..shapes::cube(1.0) }]).unwrap()).unwrap();
        assert_eq!(lod_for_screen_size(0.0, single.screen_sizes()), 0);
    }

    fn instance(x: f32) -> InstanceStreamData {
        InstanceStreamData {
            transform_rows: [[1.0, 0.0, 0.0, x], [0.0, 1.0, 0.0, 0.0], [0.0, 0.0, 1.0, 0.0]],
            fade: 1.0,
            ..Default::default()
        }
    }

    /// What a proxy must refuse before it applies anything: an instance
    /// count of u32::MAX would make it allocate ~340 GB and abort.
    #[test]
    fn updates_that_do_not_fit_the_proxy_are_rejected() {
        let rejected = |u: &IsmUpdate, current: u32| match u.validate(current) {
            Err(InstancingError::InvalidUpdate(m)) => m,
            other => panic!("expected a rejection, got {other:?} for {u:?}"),
        };
        let huge = IsmUpdate { instance_count: u32::MAX, ..Default::default() };
        assert!(rejected(&huge, 10).contains("MAX_INSTANCES"));
        // Growth by instances no range writes.
        let unwritten = IsmUpdate { instance_count: u32::MAX - 1, ..Default::default() };
        assert!(rejected(&unwritten, 10).contains("10..4294967294"));
        let gap =
            IsmUpdate { instance_count: 14, ranges: vec![(10, vec![instance(0.0); 2]), (13, vec![instance(0.0)])], ..Default::default() };
        assert!(rejected(&gap, 10).contains("12..14"));
        // A range past the count (also one whose end overflows u32).
        let past = IsmUpdate { instance_count: 4, ranges: vec![(3, vec![instance(0.0); 2])], ..Default::default() };
        assert!(rejected(&past, 4).contains("3..5"));
        let wrap = IsmUpdate { instance_count: 4, ranges: vec![(u32::MAX, vec![instance(0.0)])], ..Default::default() };
        rejected(&wrap, 4);
        let nan = IsmUpdate { instance_count: 4, ranges: vec![(1, vec![instance(f32::NAN)])], ..Default::default() };
        let min_lod = IsmUpdate { instance_count: 4, min_lod: Some(crate::MAX_LODS as u8), ..Default::default() };
        assert!(rejected(&min_lod, 4).contains("minimum LOD 8"));
        IsmUpdate { instance_count: 4, min_lod: Some(crate::MAX_LODS as u8 - 1), ..Default::default() }.validate(4).unwrap();
        assert!(rejected(&nan, 4).contains("non-finite"));
        let bounds = IsmUpdate {
            instance_count: 4,
            local_bounds: Some(Bounds { origin: Vec3::NAN, extent: Vec3::ONE, radius: 1.0 }),
            ..Default::default()
        };
        rejected(&bounds, 4);

        // What the component and the render state send passes.
        let grow =
            IsmUpdate { instance_count: 14, ranges: vec![(12, vec![instance(1.0); 2]), (3, vec![instance(2.0); 9])], ..Default::default() };
        grow.validate(10).unwrap();
        let shrink = IsmUpdate { instance_count: 2, ..Default::default() };
        shrink.validate(10).unwrap();
        let edit = IsmUpdate { instance_count: 10, ranges: vec![(9, vec![instance(3.0)])], ..Default::default() };
        edit.validate(10).unwrap();
    }

    #[test]
    fn flipping_clip_y_keeps_the_frustum_and_makes_the_multiple_positive() {
        let view =
            SceneView::perspective(Vec3::new(0.0, -5.0, 2.0), Vec3::ZERO, Vec3::Z, 1.0, 0.1, 100.0, rhi_vulkan::Rect::from_size(200, 100))
                .unwrap();
        let c = cull_view_for(&view).unwrap();
        assert!((c.screen_multiple() - 0.5 * view.projection.x_axis.x.abs().max(view.projection.y_axis.y.abs())).abs() < 1e-6);
        let renderer_frustum = view.frustum();
        for p in [Vec3::ZERO, Vec3::new(3.0, 0.0, 0.0), Vec3::new(0.0, 0.0, 30.0), Vec3::new(0.0, -10.0, 0.0)] {
            assert_eq!(c.frustum().sphere_outside(p, 0.5), !renderer_frustum.intersects_sphere(p, 0.5), "{p}");
        }
    }
}
