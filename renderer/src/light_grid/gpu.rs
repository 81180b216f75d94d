//! The light grid built in compute passes: the alternative the CPU build
//! ([`super`]) was measured against. Frames do not use it; the renderer
//! bench `lights` times it beside the CPU build at 100,000 lights, and a
//! test holds its lists to the CPU's.
//!
//! As in a frame, the CPU culls the lights to the view and lays the grid
//! out (slices, cluster boxes); the GPU then bins (`light_grid_build.wgsl`):
//! a thread per light counts the clusters it reaches (atomics), one
//! workgroup turns the counts into first indices, a thread per light
//! writes its index into each list it joins, and a thread per cluster
//! sorts its list, so that the lists are in light order, as the CPU's,
//! whatever order the atomics ran in.
//!
//! **What it measured** (`docs/perf/renderer.md`): on lavapipe the
//! dispatches take longer than the whole CPU build, which is why frames
//! build the grid on the CPU (the module docs of [`super`]). The index
//! buffer's size is given by the caller here; a frame's GPU build would
//! have to keep last frame's size with headroom and build again on
//! overflow, the CPU build never has to.

use super::{cull_to_view, grid_of, view_lights_of, ClusterBounds, ViewLight};
use crate::scene::Scene;
use crate::settings::LightGridSettings;
use crate::view::SceneView;
use bytemuck::{Pod, Zeroable};
use rhi_vulkan::{
    BindingResource, BufferDesc, BufferHandle, BufferState, BufferUsage, ComputePipelineDesc, Device, PipelineHandle, ShaderStageDesc,
};
use std::time::Instant;

const SHADER: &str = include_str!("../../shaders/light_grid_build.wgsl");

/// The `Light` of `light_grid_build.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, Pod, Zeroable)]
struct GpuViewLight {
    center: [f32; 3],
    radius: f32,
    apex: [f32; 3],
    range: f32,
    axis: [f32; 3],
    sin_angle: f32,
    cos_angle: f32,
    index: u32,
    _pad: [u32; 2],
}

impl GpuViewLight {
    fn of(l: &ViewLight) -> Self {
        let cone = l.cone.unwrap_or(crate::scene::SpotCone { apex: glam::Vec3::ZERO, axis: glam::Vec3::Z, range: 0.0, sin: 0.0, cos: 1.0 });
        Self {
            center: l.center.to_array(),
            radius: l.radius,
            apex: cone.apex.to_array(),
            range: cone.range,
            axis: cone.axis.to_array(),
            sin_angle: cone.sin,
            cos_angle: cone.cos,
            index: l.index,
            _pad: [0; 2],
        }
    }
}

/// The `Params` of `light_grid_build.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, Pod, Zeroable)]
struct GridParams {
    projection: [[f32; 4]; 4],
    size: [u32; 4],
    view: [f32; 4],
    z: [f32; 4],
    clusters: [u32; 4],
}

/// One view's light grid as the compute passes built it, and what each
/// step took.
#[derive(Clone, Debug, Default)]
pub struct GpuLightGrid {
    /// Per cluster (x fastest, then y, then slice): its first index in
    /// `indices` and its count.
    pub clusters: Vec<[u32; 2]>,
    /// The lists, one after another: indices into the view's lights (in
    /// the order the scene's arrays hold them).
    pub indices: Vec<u32>,
    /// CPU milliseconds before the dispatches: culling, the grid's layout.
    pub setup_ms: f64,
    /// Milliseconds to make and fill the buffers.
    pub upload_ms: f64,
    /// Milliseconds of the four dispatches, submitted and waited for.
    pub dispatch_ms: f64,
}

/// The compute pipelines of the GPU build (module docs).
pub struct GpuLightGridBuilder {
    count: PipelineHandle,
    first_indices: PipelineHandle,
    scatter: PipelineHandle,
    sort: PipelineHandle,
}

impl GpuLightGridBuilder {
    /// Compiles the build's four entry points.
    pub fn new(device: &Device) -> rhi_vulkan::Result<Self> {
        let shader = device.create_shader("light_grid_build.wgsl", SHADER)?;
        let pipeline = |entry: &str| device.create_compute_pipeline(&ComputePipelineDesc { shader: ShaderStageDesc::new(shader, entry) });
        Ok(Self {
            count: pipeline("count")?,
            first_indices: pipeline("first_indices")?,
            scatter: pipeline("scatter")?,
            sort: pipeline("sort")?,
        })
    }

    /// Builds `view`'s grid of `scene`'s point and spot lights with tiles
    /// of `pixel_size` pixels and `slices` slices, with room for
    /// `capacity` list entries (entries past it are dropped: the caller
    /// sizes it), and reads it back.
    pub fn build(
        &self,
        device: &Device,
        scene: &Scene,
        view: &SceneView,
        pixel_size: u32,
        slices: u32,
        capacity: usize,
    ) -> rhi_vulkan::Result<GpuLightGrid> {
        let start = Instant::now();
        let lights = scene.scene_lights();
        let culled = cull_to_view(lights.spheres(), view, true);
        let in_view = view_lights_of(lights, view, &culled, |k, _| k as u32);
        if in_view.is_empty() {
            return Ok(GpuLightGrid::default());
        }
        let settings = LightGridSettings { pixel_size, slices };
        let (grid, bounds) = grid_of(view, &in_view, &settings, 0);
        let clusters = grid.size.iter().product::<u32>();
        let params = GridParams {
            projection: view.projection.to_cols_array_2d(),
            size: [grid.size[0], grid.size[1], grid.size[2], in_view.len() as u32],
            view: [view.viewport.width as f32, view.viewport.height as f32, pixel_size as f32, view.depth_range().0.max(1e-4)],
            z: [grid.z_scale, grid.z_bias, 0.0, 0.0],
            clusters: [clusters, 0, 0, 0],
        };
        let gpu_lights: Vec<GpuViewLight> = in_view.iter().map(GpuViewLight::of).collect();
        let FlatBounds { columns, rows, depths } = FlatBounds::of(&bounds);
        let setup_ms = start.elapsed().as_secs_f64() * 1e3;

        let start = Instant::now();
        let storage = BufferUsage::STORAGE | BufferUsage::TRANSFER_DST | BufferUsage::TRANSFER_SRC;
        let init = |label: &str, bytes: &[u8], usage: BufferUsage| {
            device.create_buffer_init(&BufferDesc::gpu_only(label, bytes.len() as u64, usage), bytes)
        };
        let zeroed = |label: &str, len: usize| device.create_buffer(&BufferDesc::gpu_only(label, (len.max(1) * 4) as u64, storage));
        let mut buffers: Vec<BufferHandle> = Vec::new();
        let result = (|| {
            let mut keep = |b: rhi_vulkan::Result<BufferHandle>| b.inspect(|&b| buffers.push(b));
            let params_buffer = keep(init("light grid build params", bytemuck::bytes_of(&params), BufferUsage::UNIFORM))?;
            let lights_buffer = keep(init("light grid build lights", bytemuck::cast_slice(&gpu_lights), storage))?;
            let columns = keep(init("light grid build columns", bytemuck::cast_slice(&columns), storage))?;
            let rows = keep(init("light grid build rows", bytemuck::cast_slice(&rows), storage))?;
            let depths = keep(init("light grid build depths", bytemuck::cast_slice(&depths), storage))?;
            let counts = keep(zeroed("light grid build counts", clusters as usize))?;
            let offsets = keep(zeroed("light grid build offsets", clusters as usize + 1))?;
            let cursor = keep(zeroed("light grid build cursor", clusters as usize))?;
            let indices = keep(zeroed("light grid build indices", capacity))?;
            let entries: Vec<(u32, BindingResource)> =
                [params_buffer, lights_buffer, columns, rows, depths, counts, offsets, cursor, indices]
                    .iter()
                    .enumerate()
                    .map(|(i, &b)| (i as u32, BindingResource::Buffer(b)))
                    .collect();
            let group = device.create_bind_group(self.count, 0, &entries)?;
            let upload_ms = start.elapsed().as_secs_f64() * 1e3;

            let start = Instant::now();
            let light_groups = (in_view.len() as u32).div_ceil(64);
            let recorded = device.immediate(|cmd| {
                for b in [counts, cursor] {
                    cmd.fill_buffer(b, 0, u64::from(clusters) * 4, 0)?;
                    cmd.buffer_barrier(b, BufferState::TransferDst, BufferState::ShaderWrite)?;
                }
                let steps =
                    [(self.count, light_groups), (self.first_indices, 1), (self.scatter, light_groups), (self.sort, clusters.div_ceil(64))];
                for (pipeline, groups) in steps {
                    cmd.bind_pipeline(pipeline)?;
                    cmd.bind_group_handle(0, group)?;
                    cmd.dispatch(groups, 1, 1)?;
                    for b in [counts, offsets, cursor, indices] {
                        cmd.buffer_barrier(b, BufferState::ShaderWrite, BufferState::ShaderWrite)?;
                    }
                }
                for b in [offsets, indices] {
                    cmd.buffer_barrier(b, BufferState::ShaderWrite, BufferState::TransferSrc)?;
                }
                Ok(())
            });
            device.destroy_bind_group(group);
            recorded?;
            let dispatch_ms = start.elapsed().as_secs_f64() * 1e3;
            let first: Vec<u32> = bytemuck::pod_collect_to_vec(&device.read_buffer(offsets, 0, (u64::from(clusters) + 1) * 4)?);
            let total = (first[clusters as usize] as usize).min(capacity);
            let indices: Vec<u32> = bytemuck::pod_collect_to_vec(&device.read_buffer(indices, 0, (total.max(1) * 4) as u64)?);
            let clusters = first.windows(2).map(|w| [w[0], w[1] - w[0]]).collect();
            Ok(GpuLightGrid { clusters, indices: indices[..total].to_vec(), setup_ms, upload_ms, dispatch_ms })
        })();
        for b in buffers {
            device.destroy_buffer(b);
        }
        result
    }
}

/// The CPU build's lists of `view` alone (as a frame's grid holds them for
/// a view that is the only one seeing lights), and its milliseconds: what
/// [`GpuLightGridBuilder::build`] is compared with.
pub fn cpu_light_lists(scene: &Scene, view: &SceneView, pixel_size: u32, slices: u32) -> (Vec<[u32; 2]>, Vec<u32>, f64) {
    let start = Instant::now();
    let settings = LightGridSettings { pixel_size, slices };
    let grid = super::build_light_grid(scene.scene_lights(), std::slice::from_ref(view), &[true], &settings, true);
    (grid.clusters, grid.indices, start.elapsed().as_secs_f64() * 1e3)
}

/// The cluster boxes as the shader reads them: per slice its columns' x
/// extents, its rows' y extents, and its depths.
struct FlatBounds {
    columns: Vec<[f32; 2]>,
    rows: Vec<[f32; 2]>,
    depths: Vec<[f32; 2]>,
}

impl FlatBounds {
    fn of(bounds: &ClusterBounds) -> Self {
        let pair = |(a, b): &(f32, f32)| [*a, *b];
        Self {
            columns: bounds.slices.iter().flat_map(|s| s.columns.iter().map(pair)).collect(),
            rows: bounds.slices.iter().flat_map(|s| s.rows.iter().map(pair)).collect(),
            depths: bounds.slices.iter().map(|s| pair(&s.depth)).collect(),
        }
    }
}
