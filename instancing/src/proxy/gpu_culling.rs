//! GPU culling of an instanced static mesh: per view, three compute
//! dispatches of `shaders/instance_cull.wgsl` (count visible instances per
//! workgroup and LOD; scan those counts into output offsets and write one
//! indirect draw per LOD and section; write the compacted instances), then
//! indirect draws of what they wrote.
//!
//! **Order.** The visible instances of each LOD are written in
//! instance order, exactly as the CPU path compacts them: a workgroup's
//! offset for a LOD is the sum of the counts of the workgroups before it
//! (the scan dispatch, one workgroup: O(workgroups), where summing the
//! preceding counts in every workgroup would be quadratic — 4 000
//! workgroups at 1M instances) and an instance's slot its rank in its
//! workgroup (the set bits below its own in a per-LOD bit mask in
//! workgroup memory), not a place an atomic hands out, which would follow
//! whatever order the threads ran. Instances covering a pixel at equal
//! depth resolve by draw order (the base pass tests `Equal`/`LessEqual`
//! after the prepass), so only a fixed order gives the same image every
//! run. The per-workgroup counts live in the frame's ring memory beside the
//! control block (`GROUP_ROWS` rows of one `u32` per workgroup).
//!
//! The fixed order costs more GPU time than atomic placement would, in the
//! rank rather than the scan. On lavapipe, which runs a workgroup's
//! invocations as coroutines over SIMD lanes, barriers and loops over
//! workgroup memory are what costs, which is why the rank comes from one
//! bit mask per LOD (two barriers per workgroup) rather than a prefix sum.
//!
//! **Occlusion.** Each view's occlusion buffer
//! (`MeshElementCollector::occlusion`: the renderer's conservative max-depth
//! mip chain, `None` for the shadow view or with
//! `r.AllowOcclusionQueries=0`) goes into the frame's ring memory with the
//! rest of the view's cull — its view-projection, `DEPTH_MARGIN`,
//! `RECT_TEXELS` and every level's depths ([`OcclusionBuffer::level`]) —
//! so nothing a frame still in flight reads is overwritten. The shader's
//! `occluded` is `OcclusionBuffer::test_sphere` line for line (the same
//! box corners, margins and mip selection; screen positions in f32 where
//! the CPU uses f64, far inside the pixel the rectangle is grown by): an
//! instance that passes the frustum and cull distance but is hidden is not
//! written and is counted per workgroup; the scan sums the counts into the
//! control block, and the count reaches `OCCLUDED_INSTANCES_COUNTER` when
//! the frame retires, with the visible counts.
//!
//! If the work is not recorded (it failed; the renderer logs it), the
//! draws still go in, reading the arguments the host wrote for this frame:
//! zero instances. The proxy then draws nothing for the frame, and its
//! counts read as zero.

use bytemuck::{Pod, Zeroable};
use renderer::{GpuWork, GpuWorkError, GpuWorkRecorder, MeshElementCollector, OcclusionBuffer, PassRead, OCCLUDED_INSTANCES_COUNTER};
use rhi_vulkan::{
    BindingResource, BufferDesc, BufferHandle, BufferUsage, ComputePipelineDesc, Device, PipelineHandle, ShaderHandle, ShaderStageDesc,
};
use std::sync::MutexGuard;

use super::{InstancedStaticMeshSceneProxy, ViewCull, MAX_DRAWS};
use crate::bounds::max_scale;
use crate::culling::clamp_min_lod;
use crate::error::Result;
use crate::stats::{CullPath, VISIBLE_INSTANCES_COUNTER};
use crate::vertex_factory::InstanceStreamData;

const WORKGROUP: u32 = 256;
const CONTROL_HEADER: u64 = 64;
/// Rows of the per-workgroup counts: one per LOD (`crate::MAX_LODS`), then
/// the occluded instances.
const GROUP_ROWS: u32 = 9;
const CULL_WGSL: &str = include_str!("../../shaders/instance_cull.wgsl");

/// The parameters block of `instance_cull.wgsl` (512 bytes).
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
    /// x: the minimum LOD, clamped to the mesh's last; y: the workgroups
    /// of the count and write dispatches; zw unused.
    lod: [u32; 4],
}

/// One view's cull this frame: its view index and its ring memory.
#[derive(Clone, Copy, Debug)]
struct Job {
    view: usize,
    params: (BufferHandle, u64),
    control: (BufferHandle, u64),
    groups: (BufferHandle, u64),
    /// The view's occlusion block and its size.
    occlusion: (BufferHandle, u64, u64),
}

/// Where one view's GPU cull of the last recorded frame left its results.
#[derive(Clone, Copy, Debug)]
pub(super) struct ViewResult {
    control: (BufferHandle, u64),
    output_offset: u64,
}

#[derive(Default)]
pub(super) struct GpuCull {
    output: Option<(BufferHandle, u64)>,
    last: Vec<ViewResult>,
}

pub(super) struct Pipelines {
    shader: ShaderHandle,
    count: PipelineHandle,
    scan: PipelineHandle,
    write: PipelineHandle,
}

impl Pipelines {
    /// The culling shader and its two entry points' pipelines.
    pub(super) fn create(device: &Device) -> rhi_vulkan::Result<Self> {
        let shader = device.create_shader("instance_cull.wgsl", CULL_WGSL)?;
        let count = device.create_compute_pipeline(&ComputePipelineDesc { shader: ShaderStageDesc::new(shader, "count_main") })?;
        let scan = device.create_compute_pipeline(&ComputePipelineDesc { shader: ShaderStageDesc::new(shader, "scan_main") })?;
        let write = device.create_compute_pipeline(&ComputePipelineDesc { shader: ShaderStageDesc::new(shader, "write_main") })?;
        Ok(Self { shader, count, scan, write })
    }

    pub(super) fn release(self, device: &Device) {
        device.destroy_pipeline(self.count);
        device.destroy_pipeline(self.scan);
        device.destroy_pipeline(self.write);
        device.destroy_shader(self.shader);
    }
}

impl GpuCull {
    /// Destroys the visible-instance buffer (deferred by the RHI).
    pub(super) fn release(&mut self, device: &Device) {
        if let Some((b, _)) = self.output.take() {
            device.destroy_buffer(b);
        }
    }
}

impl InstancedStaticMeshSceneProxy {
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
    /// id slot and fade of each visible instance, LOD by LOD, in instance
    /// order inside a LOD — the CPU path's order (see the module docs).
    /// Render thread only, after the frame.
    pub fn read_gpu_visible(&self, device: &Device, view: usize) -> Result<Vec<(u32, f32)>> {
        let counts = self.read_gpu_lod_counts(device)?;
        let total: u32 = counts.get(view).map(|c| c.iter().sum()).unwrap_or(0);
        let state = self.cull_state();
        let (Some(r), Some((output, _))) = (state.last.get(view), state.output) else { return Ok(Vec::new()) };
        if total == 0 {
            return Ok(Vec::new());
        }
        let bytes = device.read_buffer(output, r.output_offset, u64::from(total) * InstanceStreamData::SIZE)?;
        Ok(bytes
            .chunks_exact(InstanceStreamData::SIZE as usize)
            .map(|c| {
                let d = bytemuck::pod_read_unaligned::<InstanceStreamData>(c);
                (d.instance_id, d.fade)
            })
            .collect())
    }

    pub(super) fn cull_state(&self) -> MutexGuard<'_, GpuCull> {
        self.cull.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The parameters of one view's cull, dispatched as `groups` workgroups.
    fn cull_params(&self, v: &ViewCull, groups: u32) -> CullParams {
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
            sphere: b.origin.extend(b.radius).to_array(),
            distances: [v.distances.start(), v.distances.end(), max_scale(&m.matrix3), self.lod_dither.band()],
            counts: [
                self.instances.len() as u32,
                self.culling_mesh.lod_count() as u32,
                self.draws.len() as u32,
                v.frustum.planes().len() as u32,
            ],
            screen_sizes,
            draw_lods,
            lod: [u32::from(clamp_min_lod(self.min_lod, self.culling_mesh.lod_count())), groups, 0, 0],
        }
    }

    /// Has this frame's visible counts read once its GPU work has finished
    /// (its ring memory, where the counters are, is intact until its slot
    /// is reused, which is after that): the main view's into the frame's
    /// stats ([`VISIBLE_INSTANCES_COUNTER`]), all of them into the proxy's
    /// [`crate::IsmStats`], naming the frame.
    fn stats_when_retired(&self, collector: &mut MeshElementCollector<'_, '_>, views: usize, controls: Vec<(usize, (BufferHandle, u64))>) {
        let stats = self.stats.clone();
        let lods = self.culling_mesh.lod_count();
        let instances = self.instances.len() as u64;
        collector.when_retired(move |r| {
            let mut per_view = vec![0u64; views];
            let mut per_lod = vec![0u64; lods];
            let mut occluded = 0u64;
            for (vi, (buffer, offset)) in controls {
                // The LOD counts, then the occluded count (the header's
                // first 36 bytes).
                let bytes = match r.read_buffer(buffer, offset, 36) {
                    Ok(b) => b,
                    Err(e) => {
                        log::error!("instanced static mesh: reading frame {}'s visible counts: {e}", r.frame);
                        return;
                    }
                };
                let words: Vec<u64> = bytes.chunks_exact(4).map(|c| u64::from(u32::from_le_bytes([c[0], c[1], c[2], c[3]]))).collect();
                for (l, x) in words.iter().take(lods).enumerate() {
                    per_view[vi] += x;
                    per_lod[l] += x;
                }
                occluded += words[8];
            }
            r.add_counter(OCCLUDED_INSTANCES_COUNTER, occluded);
            r.add_counter(VISIBLE_INSTANCES_COUNTER, per_view.first().copied().unwrap_or(0));
            let mut s = stats.lock();
            s.path = CullPath::Gpu;
            s.visible_per_view = per_view;
            s.visible_per_lod = per_lod;
            s.instances = instances;
            s.gpu_frame = Some(r.frame);
        });
    }

    /// Queues this frame's cull of every visible view as one GPU work and
    /// adds the indirect draws that read its results: the views' ring
    /// memory ([`Self::upload_jobs`]), the work ([`cull_work`]), then the
    /// draws and where the results will be.
    pub(super) fn draw_gpu_culled(
        &self,
        visibility: &[bool],
        culls: &[ViewCull],
        collector: &mut MeshElementCollector<'_, '_>,
    ) -> rhi_vulkan::Result<()> {
        let (Some(pipelines), Some((instances, _))) = (&self.pipelines, self.instance_buffer) else { return Ok(()) };
        let n = self.instances.len() as u64;
        // Room for two copies of every instance with a LOD transition.
        let copies = n * if self.lod_dither.is_on() { 2 } else { 1 };
        let groups = n.div_ceil(u64::from(WORKGROUP)) as u32;
        let gx = groups.min(65535);
        let stride = (copies * InstanceStreamData::SIZE).next_multiple_of(256);
        let mut state = self.cull_state();
        let output = grow_output(&mut state.output, collector.device(), stride * culls.len() as u64)?;
        let mut shape = CullShape {
            instances: (instances, n),
            output: (output, copies),
            stride,
            groups: (gx, groups.div_ceil(gx)),
            control_size: 0,
            group_bytes: 0,
        };
        let jobs = self.upload_jobs(visibility, culls, &mut shape, collector)?;
        collector.add_gpu_work(cull_work(pipelines, &shape, &jobs));
        let mut last = Vec::with_capacity(culls.len());
        for (vi, _) in culls.iter().enumerate() {
            match jobs.iter().find(|j| j.view == vi) {
                Some(j) => last.push(ViewResult { control: j.control, output_offset: vi as u64 * shape.stride }),
                None => break,
            }
        }
        state.last = last;
        drop(state);
        for &Job { view: vi, control, .. } in &jobs {
            let out = (shape.output.0, vi as u64 * shape.stride);
            for d in 0..self.draws.len() {
                collector.add_mesh(vi, self.batch(d, out, 0, Some((control.0, control.1 + CONTROL_HEADER + d as u64 * 20))));
            }
        }
        self.stats_when_retired(collector, culls.len(), jobs.iter().map(|j| (j.view, j.control)).collect());
        Ok(())
    }

    /// Per visible view, its parameters, control block, per-workgroup
    /// counts (`GROUP_ROWS` rows of gx × gy, written by the count pass
    /// before anything reads them) and occlusion block, in this frame's
    /// ring memory; their sizes go into `shape`.
    fn upload_jobs(
        &self,
        visibility: &[bool],
        culls: &[ViewCull],
        shape: &mut CullShape,
        collector: &mut MeshElementCollector<'_, '_>,
    ) -> rhi_vulkan::Result<Vec<Job>> {
        let (gx, gy) = shape.groups;
        let mut control_bytes = vec![0u8; CONTROL_HEADER as usize];
        control_bytes.extend_from_slice(bytemuck::cast_slice(&self.args_template(None)));
        let group_bytes = vec![0u8; (GROUP_ROWS * gx * gy * 4) as usize];
        shape.control_size = control_bytes.len() as u64;
        shape.group_bytes = group_bytes.len() as u64;
        let mut jobs = Vec::new();
        for (vi, v) in culls.iter().enumerate() {
            if !visibility[vi] {
                continue;
            }
            let params = collector.upload(bytemuck::bytes_of(&self.cull_params(v, gx * gy)))?;
            let control = collector.upload(&control_bytes)?;
            let groups = collector.upload(&group_bytes)?;
            let occlusion_bytes = occlusion_block(collector.occlusion(vi));
            let (buffer, offset) = collector.upload(&occlusion_bytes)?;
            jobs.push(Job { view: vi, params, control, groups, occlusion: (buffer, offset, occlusion_bytes.len() as u64) });
        }
        Ok(jobs)
    }
}

/// What one frame's cull dispatches over: the instance buffer and its
/// count, the output buffer and the copies it has room for per view, the
/// stride between views' outputs, the workgroup grid, and the sizes of a
/// view's control block and workgroup counts.
struct CullShape {
    instances: (BufferHandle, u64),
    output: (BufferHandle, u64),
    stride: u64,
    groups: (u32, u32),
    control_size: u64,
    group_bytes: u64,
}

/// The frame's cull of every job's view as one declared GPU work: per
/// view, count → scan → write, each dispatch seeing what the ones before
/// wrote (the recorder orders a work's dispatches).
fn cull_work(p: &Pipelines, shape: &CullShape, jobs: &[Job]) -> GpuWork {
    let (count, scan, write) = (p.count, p.scan, p.write);
    let CullShape { instances: (instances, n), output: (output, copies), stride, groups: (gx, gy), control_size, group_bytes } = *shape;
    let mut work = GpuWork::new("ism cull", {
        let jobs = jobs.to_vec();
        move |rec: &mut GpuWorkRecorder<'_, '_>| {
            let count_layout = rec.device().pipeline_bind_group_layout(count, 0)?;
            let scan_layout = rec.device().pipeline_bind_group_layout(scan, 0)?;
            let write_layout = rec.device().pipeline_bind_group_layout(write, 0)?;
            for job in &jobs {
                let range = |(buffer, offset): (BufferHandle, u64), size: u64| BindingResource::BufferRange { buffer, offset, size };
                let all = [
                    (0, range(job.params, std::mem::size_of::<CullParams>() as u64)),
                    (1, range((instances, 0), n * InstanceStreamData::SIZE)),
                    (2, range(job.control, control_size)),
                    (3, range((output, job.view as u64 * stride), copies * InstanceStreamData::SIZE)),
                    (4, range(job.groups, group_bytes)),
                    (5, range((job.occlusion.0, job.occlusion.1), job.occlusion.2)),
                ];
                for (pipeline, layout, size) in
                    [(count, &count_layout, (gx, gy)), (scan, &scan_layout, (1, 1)), (write, &write_layout, (gx, gy))]
                {
                    let entries: Vec<(u32, BindingResource)> =
                        all.iter().copied().filter(|(b, _)| layout.entries.iter().any(|e| e.binding == *b)).collect();
                    let group = rec.create_bind_group(pipeline, 0, &entries)?;
                    rec.bind_pipeline(pipeline);
                    rec.bind_group(0, group);
                    rec.dispatch(size.0, size.1, 1)?;
                }
            }
            Ok::<(), GpuWorkError>(())
        }
    })
    .reads(instances)
    // The passes read the visible instances as an instance stream.
    .writes(output, &[PassRead::Shader]);
    for &Job { params, control, groups, occlusion, .. } in jobs {
        // Other primitives' per-frame vertex data lives in the same ring
        // buffer, and an indexed draw's vertex reads count (for the
        // validation layer's hazard tracking) to the end of the buffer,
        // over the control blocks written here: the passes read the ring
        // as indirect arguments and as vertex input. The parameters are
        // read from the ring (a buffer also written counts as written).
        // The workgroup counts are only the work's own scratch, in the
        // same ring buffer.
        work = work
            .writes(control.0, &[PassRead::Indirect, PassRead::Shader])
            .writes(groups.0, &[PassRead::Shader])
            .reads(params.0)
            .reads(occlusion.0);
    }
    work
}

/// The header of the shader's `Occlusion` block (352 bytes); the depths of
/// every level follow it.
#[repr(C)]
#[derive(Clone, Copy, Debug, Pod, Zeroable)]
struct OcclusionHeader {
    view_proj: [f32; 16],
    /// Level 0 width, height; level count (0: no occlusion); `RECT_TEXELS`.
    info: [u32; 4],
    /// `DEPTH_MARGIN`, unused ×3.
    margin: [f32; 4],
    /// Per level: first depth, width, height, unused.
    levels: [[u32; 4]; MAX_OCCLUSION_LEVELS],
}

/// Levels the shader's `Occlusion` block has room for (a 256-pixel buffer
/// has 9).
const MAX_OCCLUSION_LEVELS: usize = 16;

/// The view's occlusion buffer as the shader reads it: its view-projection,
/// the test's constants and every level's depths. Without a buffer, with
/// one of more levels than the block holds, or with one no occluder was
/// drawn into (every depth the far plane: it hides nothing the frustum
/// test let through, on the CPU either) a header with no levels and one
/// depth: the shader tests nothing.
fn occlusion_block(occlusion: Option<&OcclusionBuffer>) -> Vec<u8> {
    let mut header = OcclusionHeader::zeroed();
    let mut depths: Vec<f32> = Vec::new();
    if let Some(o) = occlusion.filter(|o| o.level_count() <= MAX_OCCLUSION_LEVELS && o.triangles() > 0) {
        let (w, h) = o.size();
        header.view_proj = o.view_proj().to_cols_array();
        header.info = [w, h, o.level_count() as u32, renderer::occlusion::RECT_TEXELS];
        header.margin[0] = renderer::occlusion::DEPTH_MARGIN;
        for (l, slot) in header.levels.iter_mut().enumerate().take(o.level_count()) {
            let Some((lw, lh, d)) = o.level(l) else { break };
            *slot = [depths.len() as u32, lw, lh, 0];
            depths.extend_from_slice(d);
        }
    }
    if depths.is_empty() {
        depths.push(1.0);
    }
    let mut bytes = bytemuck::bytes_of(&header).to_vec();
    bytes.extend_from_slice(bytemuck::cast_slice(&depths));
    bytes
}

/// The culled-instance output buffer, (re)made at least `needed` bytes
/// large (the old one is freed after the frames that read it).
fn grow_output(output: &mut Option<(BufferHandle, u64)>, device: &Device, needed: u64) -> rhi_vulkan::Result<BufferHandle> {
    if output.is_none_or(|(_, cap)| cap < needed) {
        if let Some((old, _)) = output.take() {
            device.destroy_buffer(old);
        }
        let usage = BufferUsage::STORAGE | BufferUsage::VERTEX;
        *output = Some((device.create_buffer(&BufferDesc::gpu_only("ism visible instances", needed, usage))?, needed));
    }
    Ok(output.expect("made above").0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::culling::DrawIndexedIndirectArgs;

    /// Every struct the cull shader shares with Rust, laid out by naga and
    /// compared field by field (`test_support::assert_wgsl_layout!`).
    #[test]
    fn params_block_matches_the_shader_layout() {
        use test_support::assert_wgsl_layout;
        assert_wgsl_layout!(
            CullParams,
            CULL_WGSL,
            "Params",
            [planes, origin_multiple, component_rows, sphere, distances, counts, screen_sizes, draw_lods, lod]
        );
        assert_wgsl_layout!(OcclusionHeader, CULL_WGSL, "Occlusion", [view_proj, info, margin, levels]);
        assert_wgsl_layout!(InstanceStreamData, CULL_WGSL, "Instance", [transform_rows, custom, random, fade, instance_id, flags]);
        assert_wgsl_layout!(
            DrawIndexedIndirectArgs,
            CULL_WGSL,
            "DrawArgs",
            [index_count, instance_count, first_index, vertex_offset, first_instance]
        );
    }
}
