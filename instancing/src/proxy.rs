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
//! * Visible instances (GPU path): one GPU-only buffer, one region of
//!   `instance_count` entries per view, written by the culling pass and read
//!   as the instance stream. Memory: `80 B × instances × views`.
//! * Per view and frame, in the renderer's dynamic ring: the culling
//!   parameters (496 B) and a control block (LOD counters, then one
//!   `VkDrawIndexedIndirectCommand` per LOD and section).
//!
//! ## Three paths, chosen per frame
//!
//! | path | when | what is drawn |
//! | --- | --- | --- |
//! | GPU culling | `r.InstancedStaticMeshes.GPUCulling=1` (default) and the frame is recorded | compute pass per view (`shaders/instance_cull.wgsl`): frustum, cull distance + fade, per-instance LOD; compacted copies; indirect draws |
//! | CPU culling | the cvar is 0, or the frame is only prepared (benchmarks) | the same test on the CPU ([`crate::culling`]'s helpers), compacted instances uploaded, one direct instanced draw per section and LOD |
//! | HISM | the proxy is hierarchical ([`crate::hism`]), any cvar but UE mode | as CPU culling, through the cluster tree |
//! | UE mode | `r.InstancedStaticMeshes.UEMode=1` | every instance, at the one LOD the union bounds select, no compute, no fade (UE fades in the vertex shader) |
//!
//! LOD screen sizes: [`StaticMeshRenderData`] uses the renderer's convention
//! ("LOD i while the screen size is at least `sizes[i]`"); culling uses UE's
//! (`crate::culling::lod_for_screen_size`). [`instanced_mesh_for`] converts,
//! so an instance picks the LOD a static mesh at its place would.
//!
//! Views that are orthographic (the shadow view) measure cull distance and
//! LOD from the first perspective view of the frame (UE: shadows use the
//! main view's LOD), so a faded-out instance casts no shadow either.
//!
//! ## Statistics
//!
//! The renderer cannot see GPU-side counts, so the proxy keeps its own in an
//! [`IsmStats`] handle: instances, visible instances per view (exact on the
//! CPU and UE paths; on the GPU path read back from the previous frame's
//! counters, so one frame late) and the bytes of the last dynamic update.

use std::sync::{Arc, Mutex, MutexGuard};


use bytemuck::{Pod, Zeroable};
use glam::{Affine3A, Mat4, Vec3};
use rayon::prelude::*;
use renderer::{Bounds, MaterialId, MeshBatch, MeshElementCollector, PrimitiveSceneProxy, ProxyUpdateContext, SceneView, StaticMeshRenderData, ViewRelevance};
use rhi_vulkan::{
    BindingResource, BufferDesc, BufferHandle, BufferState, BufferUsage, ComputePipelineDesc, Device, IndexFormat, PipelineHandle, ShaderHandle, ShaderStageDesc,
};

use crate::bounds::{max_scale, BoxSphereBounds};
use crate::cluster_tree::TreeCullStats;
use crate::culling::{bounds_screen_size, lod_for_screen_size, CullDistances, CullView, DrawIndexedIndirectArgs, Frustum, InstanceCuller};
use crate::error::{InstancingError, Result};
use crate::hism::{HismTree, ProxyTree};
use crate::mesh::{InstancedMesh, MeshLod, MeshSection};
pub use crate::stats::{CullPath, IsmStats, IsmStatsSnapshot};
use crate::vertex_factory::{InstanceStreamData, InstancedVertexFactory, INSTANCED_VERTEX_FACTORY};

/// Turns GPU culling on (1, default) or off (0: CPU culling).
pub const CVAR_GPU_CULLING: &str = "r.InstancedStaticMeshes.GPUCulling";
/// UE's plain ISM behaviour (1): all instances, one LOD, no culling pass.
pub const CVAR_UE_MODE: &str = "r.InstancedStaticMeshes.UEMode";

/// Registers the instancing console variables (call once per render thread).
pub fn register_cvars(rt: &mut renderer::RenderThread) -> Result<()> {
    rt.register_cvar(CVAR_GPU_CULLING, renderer::CvarValue::Bool(true), "cull instanced static meshes per instance in a compute pass (0: on the CPU)")?;
    rt.register_cvar(CVAR_UE_MODE, renderer::CvarValue::Bool(false), "draw every instance at the LOD of the union bounds, as UE's plain ISM does")?;
    Ok(())
}

/// Draws (LOD × section) the culling pass can write arguments for.
pub const MAX_DRAWS: usize = 64;
const WORKGROUP: u32 = 256;
const CONTROL_HEADER: u64 = 64;
const CULL_WGSL: &str = include_str!("../shaders/instance_cull.wgsl");

/// The culling mesh of a render mesh: its bounds, index ranges, and its LOD
/// screen sizes converted from the renderer's convention to UE's.
pub fn instanced_mesh_for(mesh: &StaticMeshRenderData) -> Result<InstancedMesh> {
    let b = mesh.bounds();
    let bounds = BoxSphereBounds::new(b.origin, b.extent, b.radius)?;
    let lods = mesh.lods();
    let sizes: Vec<f32> = lods.iter().map(|l| l.screen_size).collect();
    let lods = lods
        .iter()
        .enumerate()
        .map(|(i, l)| MeshLod {
            // UE: LOD i is used below ScreenSize[i]; renderer: below sizes[i-1].
            screen_size: if i == 0 { f32::MAX } else { sizes[i - 1] },
            vertex_count: l.vertices.len() as u32,
            sections: l.sections.iter().map(|s| MeshSection { first_index: s.first_index, index_count: s.index_count, vertex_offset: 0 }).collect(),
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
}

fn view_culls(views: &[&SceneView]) -> Result<Vec<ViewCull>> {
    let lod_view = views.iter().find(|v| v.perspective).map(|v| cull_view_for(v)).transpose()?;
    views
        .iter()
        .map(|v| {
            let own = cull_view_for(v)?;
            let reference = if v.perspective { own } else { lod_view.unwrap_or(own) };
            Ok(ViewCull { frustum: *own.frustum(), origin: reference.origin(), multiple: reference.screen_multiple() })
        })
        .collect()
}

/// The parameters block of `instance_cull.wgsl` (496 bytes).
#[repr(C)]
#[derive(Clone, Copy, Debug, Pod, Zeroable)]
struct CullParams {
    planes: [[f32; 4]; 6],
    origin_multiple: [f32; 4],
    component_rows: [[f32; 4]; 3],
    sphere: [f32; 4],
    distances: [f32; 4],
    counts: [u32; 4],
    screen_sizes: [f32; 8],
    draw_lods: [u32; MAX_DRAWS],
}

/// A dynamic update from the game side (UE's `SendRenderDynamicData`),
/// built by [`crate::IsmRenderState::flush`] and the component.
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
    /// HISM: a newly built cluster tree (see [`crate::hism`]).
    pub tree: Option<HismTree>,
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
    /// * `tree.edited_since` names instances below `instance_count`.
    pub fn validate(&self, current: u32) -> Result<()> {
        let bad = |m: String| Err(InstancingError::InvalidUpdate(m));
        let n = self.instance_count;
        if n > crate::MAX_INSTANCES {
            return bad(format!("instance count {n} is past MAX_INSTANCES ({})", crate::MAX_INSTANCES));
        }
        let mut written: Vec<(u64, u64)> = Vec::with_capacity(self.ranges.len());
        for (first, items) in &self.ranges {
            let end = u64::from(*first) + items.len() as u64;
            if end > u64::from(n) {
                return bad(format!("range {first}..{end} is past the instance count {n}"));
            }
            let finite = items.iter().all(|d| {
                d.transform_rows.iter().flatten().chain(&d.custom).chain([&d.random, &d.fade]).all(|v| v.is_finite())
            });
            if !finite {
                return bad(format!("range {first}..{end} holds non-finite instance data"));
            }
            written.push((u64::from(*first), end));
        }
        // Every new index (current..n) must be written.
        if n > current {
            written.sort_unstable();
            let mut covered = u64::from(current);
            for (start, end) in written {
                if start > covered {
                    break;
                }
                covered = covered.max(end);
            }
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
}

struct LodGpu {
    vertices: BufferHandle,
    offsets: [u64; 3],
    indices: BufferHandle,
}

/// Where one view's GPU cull of the last recorded frame left its results.
#[derive(Clone, Copy, Debug)]
struct ViewResult {
    control: (BufferHandle, u64),
    output_offset: u64,
}

#[derive(Default)]
struct GpuCull {
    output: Option<(BufferHandle, u64)>,
    last: Vec<ViewResult>,
}

struct Pipelines {
    shader: ShaderHandle,
    count: PipelineHandle,
    write: PipelineHandle,
}

/// The render thread's instanced static mesh; see the module docs.
pub struct InstancedStaticMeshSceneProxy {
    mesh: Arc<StaticMeshRenderData>,
    culling_mesh: InstancedMesh,
    materials: Vec<MaterialId>,
    cast_shadow: bool,
    distances: CullDistances,
    component_to_world: Affine3A,
    local_bounds: Bounds,
    instances: Vec<InstanceStreamData>,
    lods: Vec<LodGpu>,
    instance_buffer: Option<(BufferHandle, u32)>,
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
            component_to_world,
            local_bounds,
            instances,
            lods: Vec::new(),
            instance_buffer: None,
            pipelines: None,
            cull: Mutex::new(GpuCull::default()),
            stats,
            draws,
            hierarchical: false,
            tree: None,
        })
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

    /// GPU results of the last GPU-culled frame, per view: visible count per
    /// LOD. Call on the render thread after the frame (e.g. in
    /// `RenderThread::with_context`); reads the frame's counters back.
    pub fn read_gpu_lod_counts(&self, device: &Device) -> Result<Vec<Vec<u32>>> {
        let last = self.cull_state().last.clone();
        let lods = self.culling_mesh.lod_count();
        last.iter()
            .map(|r| {
                let bytes = device.read_buffer(r.control.0, r.control.1, 4 * lods as u64)?;
                Ok(bytes.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect())
            })
            .collect()
    }

    /// GPU results of the last GPU-culled frame for view `view`: the stable
    /// id slot and fade of each visible instance, LOD by LOD (order inside a
    /// LOD is unspecified). Render thread only, after the frame.
    pub fn read_gpu_visible(&self, device: &Device, view: usize) -> Result<Vec<(u32, f32)>> {
        let counts = self.read_gpu_lod_counts(device)?;
        let total: u32 = counts.get(view).map(|c| c.iter().sum()).unwrap_or(0);
        let state = self.cull_state();
        let (Some(r), Some((output, _))) = (state.last.get(view), state.output) else { return Ok(Vec::new()) };
        if total == 0 {
            return Ok(Vec::new());
        }
        let bytes = device.read_buffer(output, r.output_offset, u64::from(total) * InstanceStreamData::SIZE)?;
        Ok(bytes.chunks_exact(InstanceStreamData::SIZE as usize).map(|c| {
            let d = bytemuck::pod_read_unaligned::<InstanceStreamData>(c);
            (d.instance_id, d.fade)
        }).collect())
    }

    fn cull_state(&self) -> MutexGuard<'_, GpuCull> {
        self.cull.lock().unwrap_or_else(|p| p.into_inner())
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
            vertex_factory: &INSTANCED_VERTEX_FACTORY,
            streams: self.streams(lod as usize, instances),
            index_buffer: Some((self.lods[lod as usize].indices, IndexFormat::Uint32)),
            first_index: section.first_index,
            count: section.index_count,
            base_vertex: 0,
            instance_count,
            indirect,
            material,
            lod_index: lod,
            cast_shadow: self.cast_shadow,
            reverse_culling: self.component_to_world.matrix3.determinant() < 0.0,
        }
    }

    /// The per-instance test on the CPU: `Some((lod, fade))` when visible.
    /// Mirrors `culling::InstanceCuller::classify` and the GPU pass.
    fn classify(&self, v: &ViewCull, inst: &InstanceStreamData, component_scale: f32) -> Option<(u8, f32)> {
        let (c, r) = self.culling_mesh.bounds().instance_sphere(&inst.transform());
        let center = self.component_to_world.transform_point3(c);
        let radius = r * component_scale;
        if v.frustum.sphere_outside(center, radius) {
            return None;
        }
        let distance = center.distance(v.origin);
        if self.distances.culls(distance) {
            return None;
        }
        let size = bounds_screen_size(distance, radius, v.multiple);
        Some((lod_for_screen_size(size, self.culling_mesh.screen_sizes()), self.distances.fade(distance)))
    }

    /// CPU culling for one view: compacted instances (LOD-major) and the
    /// visible count per LOD. Fixed chunks concatenated in order.
    fn cull_cpu(&self, v: &ViewCull) -> (Vec<InstanceStreamData>, Vec<u32>) {
        let lods = self.culling_mesh.lod_count();
        let scale = max_scale(&self.component_to_world.matrix3);
        let parts: Vec<Vec<Vec<InstanceStreamData>>> = self
            .instances
            .par_chunks(crate::culling::CULL_CHUNK)
            .map(|chunk| {
                let mut bins = vec![Vec::new(); lods];
                for inst in chunk {
                    if let Some((lod, fade)) = self.classify(v, inst, scale) {
                        bins[lod as usize].push(InstanceStreamData { fade, ..*inst });
                    }
                }
                bins
            })
            .collect();
        let mut counts = vec![0u32; lods];
        let mut out = Vec::new();
        for (l, count) in counts.iter_mut().enumerate() {
            for p in &parts {
                out.extend_from_slice(&p[l]);
                *count += p[l].len() as u32;
            }
        }
        (out, counts)
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

    fn set_visible_stats(&self, path: CullPath, per_view: Vec<u64>, per_lod: Vec<u64>) {
        let mut s = self.stats.lock();
        s.path = path;
        s.visible_per_view = per_view;
        s.visible_per_lod = per_lod;
        s.instances = self.instances.len() as u64;
    }

    fn draw_ue_mode(&self, views: &[&SceneView], visibility: &[bool], culls: &[ViewCull], collector: &mut MeshElementCollector<'_, '_>) {
        let Some((buffer, _)) = self.instance_buffer else { return };
        let n = self.instances.len() as u32;
        let world = self.local_bounds.transformed(&Mat4::from(self.component_to_world));
        let mut per_view = vec![0u64; views.len()];
        let mut per_lod = vec![0u64; self.culling_mesh.lod_count()];
        for (vi, v) in culls.iter().enumerate() {
            if !visibility[vi] {
                continue;
            }
            let size = bounds_screen_size(world.origin.distance(v.origin), world.radius, v.multiple);
            let lod = lod_for_screen_size(size, self.culling_mesh.screen_sizes());
            per_view[vi] = u64::from(n);
            per_lod[lod as usize] += u64::from(n);
            for d in (0..self.draws.len()).filter(|&d| self.draws[d].0 == lod) {
                collector.add_mesh(vi, self.batch(d, (buffer, 0), n, None));
            }
        }
        self.set_visible_stats(CullPath::UeMode, per_view, per_lod);
    }

    /// HISM: one view through the cluster tree (flat before the first
    /// tree); compacted instances LOD-major and counts per LOD.
    fn cull_tree(&self, v: &ViewCull) -> (Vec<InstanceStreamData>, Vec<u32>, TreeCullStats) {
        let view = CullView::from_parts(v.frustum, v.origin, v.multiple);
        let culler = match InstanceCuller::new(&self.culling_mesh, &self.component_to_world, &view, self.distances) {
            Ok(c) => c,
            Err(e) => {
                log::error!("instanced static mesh: {e}");
                return (Vec::new(), vec![0; self.culling_mesh.lod_count()], TreeCullStats::default());
            }
        };
        let (out, stats) = match &self.tree {
            Some(t) => t.cull(&self.instances, &self.culling_mesh, &culler),
            None => crate::hism::cull_flat(&self.instances, &self.culling_mesh, &culler),
        };
        let visible = out.lods.iter().flat_map(|b| b.instances.iter().zip(&b.fades)).map(|(&i, &fade)| InstanceStreamData { fade, ..self.instances[i as usize] }).collect();
        (visible, out.counts(), stats)
    }

    fn draw_cpu_culled(&self, visibility: &[bool], culls: &[ViewCull], collector: &mut MeshElementCollector<'_, '_>) -> rhi_vulkan::Result<()> {
        let mut per_view = vec![0u64; culls.len()];
        let mut per_lod = vec![0u64; self.culling_mesh.lod_count()];
        let mut tree_stats = None;
        for (vi, v) in culls.iter().enumerate() {
            if !visibility[vi] {
                continue;
            }
            let (visible, counts) = if self.hierarchical {
                let (visible, counts, stats) = self.cull_tree(v);
                tree_stats.get_or_insert(stats);
                (visible, counts)
            } else {
                self.cull_cpu(v)
            };
            per_view[vi] = visible.len() as u64;
            for (a, c) in per_lod.iter_mut().zip(&counts) {
                *a += u64::from(*c);
            }
            if visible.is_empty() {
                continue;
            }
            let stream = collector.upload(bytemuck::cast_slice(&visible))?;
            // Direct draws: the counts are known here (no argument upload).
            for (d, a) in self.args_template(Some(&counts)).iter().enumerate() {
                if a.instance_count > 0 {
                    let lod_stream = (stream.0, stream.1 + u64::from(a.first_instance) * InstanceStreamData::SIZE);
                    collector.add_mesh(vi, self.batch(d, lod_stream, a.instance_count, None));
                }
            }
        }
        let path = if self.hierarchical { CullPath::CpuTree } else { CullPath::Cpu };
        self.set_visible_stats(path, per_view, per_lod);
        self.stats.lock().tree_cull = tree_stats;
        Ok(())
    }

    fn cull_params(&self, v: &ViewCull) -> CullParams {
        let mut planes = [[0.0; 4]; 6];
        for (d, p) in planes.iter_mut().zip(v.frustum.planes()) {
            *d = p.to_array();
        }
        let m = &self.component_to_world;
        let row = |r: usize| [m.matrix3.x_axis[r], m.matrix3.y_axis[r], m.matrix3.z_axis[r], m.translation[r]];
        let b = self.culling_mesh.bounds();
        let mut screen_sizes = [0.0; 8];
        for (d, s) in screen_sizes.iter_mut().zip(self.culling_mesh.screen_sizes()) {
            *d = *s;
        }
        let mut draw_lods = [0u32; MAX_DRAWS];
        for (d, (l, _)) in draw_lods.iter_mut().zip(&self.draws) {
            *d = u32::from(*l);
        }
        CullParams {
            planes,
            origin_multiple: v.origin.extend(v.multiple).to_array(),
            component_rows: [row(0), row(1), row(2)],
            sphere: b.origin.extend(b.sphere_radius).to_array(),
            distances: [self.distances.start(), self.distances.end(), max_scale(&m.matrix3), 0.0],
            counts: [self.instances.len() as u32, self.culling_mesh.lod_count() as u32, self.draws.len() as u32, v.frustum.planes().len() as u32],
            screen_sizes,
            draw_lods,
        }
    }

    /// Has this frame's visible counts read into the stats once its GPU
    /// work has finished (its ring memory, where the counters are, is
    /// intact until its slot is reused, which is after that), naming the frame.
    fn stats_when_retired(&self, collector: &mut MeshElementCollector<'_, '_>, views: usize, controls: Vec<(usize, (BufferHandle, u64))>) {
        let stats = self.stats.clone();
        let lods = self.culling_mesh.lod_count();
        let instances = self.instances.len() as u64;
        collector.when_retired(move |r| {
            let mut per_view = vec![0u64; views];
            let mut per_lod = vec![0u64; lods];
            for (vi, (buffer, offset)) in controls {
                let bytes = match r.read_buffer(buffer, offset, 4 * lods as u64) {
                    Ok(b) => b,
                    Err(e) => {
                        log::error!("instanced static mesh: reading frame {}'s visible counts: {e}", r.frame);
                        return;
                    }
                };
                for (l, c) in bytes.chunks_exact(4).enumerate() {
                    let x = u64::from(u32::from_le_bytes([c[0], c[1], c[2], c[3]]));
                    per_view[vi] += x;
                    per_lod[l] += x;
                }
            }
            let mut s = stats.lock();
            s.path = CullPath::Gpu;
            s.visible_per_view = per_view;
            s.visible_per_lod = per_lod;
            s.instances = instances;
            s.gpu_frame = Some(r.frame);
        });
    }

    fn draw_gpu_culled(&self, visibility: &[bool], culls: &[ViewCull], collector: &mut MeshElementCollector<'_, '_>) -> rhi_vulkan::Result<()> {
        let (Some(p), Some((instances, _))) = (&self.pipelines, self.instance_buffer) else { return Ok(()) };
        let n = self.instances.len() as u64;
        let stride = (n * InstanceStreamData::SIZE).next_multiple_of(256);
        let mut state = self.cull_state();
        let needed = stride * culls.len() as u64;
        if state.output.is_none_or(|(_, cap)| cap < needed) {
            if let Some((old, _)) = state.output.take() {
                collector.device().destroy_buffer(old);
            }
            let buffer = collector
                .device()
                .create_buffer(&BufferDesc::gpu_only("ism visible instances", needed, BufferUsage::STORAGE | BufferUsage::VERTEX))?;
            state.output = Some((buffer, needed));
        }
        let (output, _) = state.output.expect("created above");
        // Per view: parameters and control block in this frame's ring memory.
        let args = self.args_template(None);
        let mut control_bytes = vec![0u8; CONTROL_HEADER as usize];
        control_bytes.extend_from_slice(bytemuck::cast_slice(&args));
        let mut jobs = Vec::new();
        for (vi, v) in culls.iter().enumerate() {
            if !visibility[vi] {
                continue;
            }
            let params = collector.upload(bytemuck::bytes_of(&self.cull_params(v)))?;
            let control = collector.upload(&control_bytes)?;
            jobs.push((vi, params, control));
        }
        let groups = n.div_ceil(u64::from(WORKGROUP)) as u32;
        let gx = groups.min(65535);
        let gy = groups.div_ceil(gx);
        let Some(frame) = collector.frame() else { return Ok(()) };
        let device = frame.device();
        let count_layout = device.pipeline_bind_group_layout(p.count, 0)?;
        let write_layout = device.pipeline_bind_group_layout(p.write, 0)?;
        let group_for = |pipeline, layout: &rhi_vulkan::BindGroupLayoutDesc, params: (BufferHandle, u64), control: (BufferHandle, u64), out: u64| {
            let all = [
                (0, BindingResource::BufferRange { buffer: params.0, offset: params.1, size: std::mem::size_of::<CullParams>() as u64 }),
                (1, BindingResource::BufferRange { buffer: instances, offset: 0, size: n * InstanceStreamData::SIZE }),
                (2, BindingResource::BufferRange { buffer: control.0, offset: control.1, size: control_bytes.len() as u64 }),
                (3, BindingResource::BufferRange { buffer: output, offset: out, size: n * InstanceStreamData::SIZE }),
            ];
            let entries: Vec<(u32, BindingResource)> = all.into_iter().filter(|(b, _)| layout.entries.iter().any(|e| e.binding == *b)).collect();
            frame.create_bind_group(pipeline, 0, &entries)
        };
        let mut groups_per_job = Vec::with_capacity(jobs.len());
        for &(vi, params, control) in &jobs {
            let out = vi as u64 * stride;
            groups_per_job.push((group_for(p.count, &count_layout, params, control, out)?, group_for(p.write, &write_layout, params, control, out)?));
        }
        let cmd = frame.cmd();
        // The previous frame's draws read the visible buffer; write after them.
        cmd.buffer_barrier(output, BufferState::ShaderRead, BufferState::ShaderWrite)?;
        for (&(_, _, control), (count_group, write_group)) in jobs.iter().zip(&groups_per_job) {
            cmd.bind_pipeline(p.count)?;
            cmd.bind_group(0, count_group)?;
            cmd.dispatch(gx, gy, 1)?;
            cmd.buffer_barrier(control.0, BufferState::ShaderWrite, BufferState::ShaderWrite)?;
            cmd.bind_pipeline(p.write)?;
            cmd.bind_group(0, write_group)?;
            cmd.dispatch(gx, gy, 1)?;
        }
        cmd.buffer_barrier(output, BufferState::ShaderWrite, BufferState::ShaderRead)?;
        let mut ring_buffers: Vec<BufferHandle> = jobs.iter().map(|j| j.2 .0).collect();
        ring_buffers.dedup();
        for b in ring_buffers {
            cmd.buffer_barrier(b, BufferState::ShaderWrite, BufferState::Indirect)?;
            // Other primitives' per-frame vertex data lives in the same ring
            // buffer, and an indexed draw's vertex reads count (for the
            // validation layer's hazard tracking) to the end of the buffer,
            // over the control blocks written here: make the writes visible
            // to vertex input too.
            cmd.buffer_barrier(b, BufferState::ShaderWrite, BufferState::ShaderRead)?;
        }
        let mut last = Vec::with_capacity(culls.len());
        for (vi, _) in culls.iter().enumerate() {
            match jobs.iter().find(|j| j.0 == vi) {
                Some(&(_, _, control)) => last.push(ViewResult { control, output_offset: vi as u64 * stride }),
                None => break,
            }
        }
        state.last = last;
        drop(state);
        for &(vi, _, control) in &jobs {
            let out = (output, vi as u64 * stride);
            for d in 0..self.draws.len() {
                collector.add_mesh(vi, self.batch(d, out, 0, Some((control.0, control.1 + CONTROL_HEADER + d as u64 * 20))));
            }
        }
        self.stats_when_retired(collector, culls.len(), jobs.iter().map(|&(vi, _, control)| (vi, control)).collect());
        Ok(())
    }
}

impl PrimitiveSceneProxy for InstancedStaticMeshSceneProxy {
    fn local_bounds(&self) -> Bounds {
        self.local_bounds
    }

    fn view_relevance(&self, _view: &SceneView) -> ViewRelevance {
        ViewRelevance { draw: true, shadow: self.cast_shadow, dynamic_relevance: true, opaque: true, ..Default::default() }
    }

    fn get_dynamic_mesh_elements(&self, views: &[&SceneView], visibility: &[bool], collector: &mut MeshElementCollector<'_, '_>) {
        if self.instances.is_empty() || self.lods.is_empty() {
            return;
        }
        let culls = match view_culls(views) {
            Ok(c) => c,
            Err(e) => {
                log::error!("instanced static mesh: {e}");
                return;
            }
        };
        let ue_mode = collector.cvars().bool(CVAR_UE_MODE);
        let gpu = collector.cvars().get(CVAR_GPU_CULLING).is_none_or(|v| v == renderer::CvarValue::Bool(true));
        let result = if ue_mode {
            self.draw_ue_mode(views, visibility, &culls, collector);
            Ok(())
        } else if gpu && !self.hierarchical && collector.frame().is_some() {
            self.draw_gpu_culled(visibility, &culls, collector)
        } else {
            self.draw_cpu_culled(visibility, &culls, collector)
        };
        if let Err(e) = result {
            log::error!("instanced static mesh: {e}");
        }
    }

    fn create_render_resources(&mut self, device: &Device) -> rhi_vulkan::Result<()> {
        for lod in self.mesh.lods() {
            let (bytes, offsets) = InstancedVertexFactory::pack(&lod.vertices);
            let vertices = device.create_buffer_init(&BufferDesc::gpu_only("ism mesh vertices", bytes.len() as u64, BufferUsage::VERTEX), &bytes)?;
            let indices = device.create_buffer_init(
                &BufferDesc::gpu_only("ism mesh indices", lod.indices.len() as u64 * 4, BufferUsage::INDEX),
                bytemuck::cast_slice(&lod.indices),
            )?;
            self.lods.push(LodGpu { vertices, offsets, indices });
        }
        let capacity = (self.instances.len() as u32).max(1);
        let mut bytes = bytemuck::cast_slice::<InstanceStreamData, u8>(&self.instances).to_vec();
        bytes.resize(capacity as usize * InstanceStreamData::SIZE as usize, 0);
        let buffer = device.create_buffer_init(&BufferDesc::gpu_only("ism instances", bytes.len() as u64, BufferUsage::STORAGE | BufferUsage::VERTEX), &bytes)?;
        self.instance_buffer = Some((buffer, capacity));
        let shader = device.create_shader("instance_cull.wgsl", CULL_WGSL)?;
        let count = device.create_compute_pipeline(&ComputePipelineDesc { shader: ShaderStageDesc::new(shader, "count_main") })?;
        let write = device.create_compute_pipeline(&ComputePipelineDesc { shader: ShaderStageDesc::new(shader, "write_main") })?;
        self.pipelines = Some(Pipelines { shader, count, write });
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
        if let Some((b, _)) = self.cull_state().output.take() {
            device.destroy_buffer(b);
        }
        if let Some(p) = self.pipelines.take() {
            device.destroy_pipeline(p.count);
            device.destroy_pipeline(p.write);
            device.destroy_shader(p.shader);
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
        if let Err(e) = update.validate(self.instances.len() as u32) {
            // Nothing applied; the renderer reports the error.
            log::error!("instanced static mesh: update rejected: {e}");
            self.stats.lock().rejected_updates += 1;
            return Err(rhi_vulkan::RhiError::InvalidDesc(e.to_string()));
        }
        let IsmUpdate { instance_count, ranges, local_bounds, distances, tree } = *update;
        if let Some(d) = distances {
            self.distances = d;
        }
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
        let mut s = self.stats.lock();
        s.instances = n as u64;
        s.last_update_upload_bytes = uploaded;
        s.instance_buffer_recreations += u64::from(recreated);
        Ok(())
    }

    fn memory_footprint(&self) -> usize {
        std::mem::size_of::<Self>() + self.instances.len() * std::mem::size_of::<InstanceStreamData>()
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;
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
        let single = instanced_mesh_for(&StaticMeshRenderData::new(vec![StaticMeshLod { screen_size: 0.0, ..shapes::cube(1.0) }]).unwrap()).unwrap();
        assert_eq!(lod_for_screen_size(0.0, single.screen_sizes()), 0);
    }

    fn instance(x: f32) -> InstanceStreamData {
        InstanceStreamData { transform_rows: [[1.0, 0.0, 0.0, x], [0.0, 1.0, 0.0, 0.0], [0.0, 0.0, 1.0, 0.0]], fade: 1.0, ..Default::default() }
    }

    /// What a proxy must refuse before it applies anything: an instance
    /// count of u32::MAX used to make it allocate ~340 GB and abort.
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
        let gap = IsmUpdate { instance_count: 14, ranges: vec![(10, vec![instance(0.0); 2]), (13, vec![instance(0.0)])], ..Default::default() };
        assert!(rejected(&gap, 10).contains("12..14"));
        // A range past the count (also one whose end overflows u32).
        let past = IsmUpdate { instance_count: 4, ranges: vec![(3, vec![instance(0.0); 2])], ..Default::default() };
        assert!(rejected(&past, 4).contains("3..5"));
        let wrap = IsmUpdate { instance_count: 4, ranges: vec![(u32::MAX, vec![instance(0.0)])], ..Default::default() };
        rejected(&wrap, 4);
        let nan = IsmUpdate { instance_count: 4, ranges: vec![(1, vec![instance(f32::NAN)])], ..Default::default() };
        assert!(rejected(&nan, 4).contains("non-finite"));
        let bounds = IsmUpdate { instance_count: 4, local_bounds: Some(Bounds { origin: Vec3::NAN, extent: Vec3::ONE, radius: 1.0 }), ..Default::default() };
        rejected(&bounds, 4);

        // What the component and the render state send passes.
        let grow = IsmUpdate { instance_count: 14, ranges: vec![(12, vec![instance(1.0); 2]), (3, vec![instance(2.0); 9])], ..Default::default() };
        grow.validate(10).unwrap();
        let shrink = IsmUpdate { instance_count: 2, ..Default::default() };
        shrink.validate(10).unwrap();
        let edit = IsmUpdate { instance_count: 10, ranges: vec![(9, vec![instance(3.0)])], ..Default::default() };
        edit.validate(10).unwrap();
    }

    #[test]
    fn params_block_matches_the_shader_layout() {
        assert_eq!(std::mem::size_of::<CullParams>(), 496);
        assert_eq!(std::mem::size_of::<DrawIndexedIndirectArgs>(), 20);
    }

    #[test]
    fn flipping_clip_y_keeps_the_frustum_and_makes_the_multiple_positive() {
        let view = SceneView::perspective(Vec3::new(0.0, -5.0, 2.0), Vec3::ZERO, Vec3::Z, 1.0, 0.1, 100.0, rhi_vulkan::Rect::from_size(200, 100)).unwrap();
        let c = cull_view_for(&view).unwrap();
        assert!((c.screen_multiple() - 0.5 * view.projection.x_axis.x.abs().max(view.projection.y_axis.y.abs())).abs() < 1e-6);
        let renderer_frustum = view.frustum();
        for p in [Vec3::ZERO, Vec3::new(3.0, 0.0, 0.0), Vec3::new(0.0, 0.0, 30.0), Vec3::new(0.0, -10.0, 0.0)] {
            assert_eq!(c.frustum().sphere_outside(p, 0.5), !renderer_frustum.intersects_sphere(p, 0.5), "{p}");
        }
    }
}
