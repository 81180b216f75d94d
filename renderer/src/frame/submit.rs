//! Recording a pass's merged draws: the draw list is split into chunks, each
//! recorded into a secondary command buffer (in parallel with
//! `r.RHICmdList.ParallelRecord=1`), executed in chunk order by the primary.
//! State is re-bound only when it changes between consecutive draws, which
//! the bucket sort makes rare. The first chunk of a pass begins with a GPU
//! timestamp and the last ends with one (`stats::pass_timestamp_labels`).

use crate::frame::scene_renderer::{FrameCommands, PassDrawList};
use crate::mesh_pass::{DrawChunk, MergedDraw};
use crate::stats::pass_timestamp_labels;
use crate::view::SceneView;
use rayon::prelude::*;
use rhi_vulkan::*;
use std::collections::HashMap;

/// Smallest chunk worth a secondary of its own.
const MIN_DRAWS_PER_CHUNK: usize = 64;

/// The frame's resources every pass binds: group 0 (view uniforms, GPU
/// scene, materials) and, in the lit passes, group 1 (the shadow map and
/// its sampler, the light grid's lights, clusters and indices, the shadow
/// atlas and its tiles, the environment's maps).
#[derive(Clone, Copy, Debug)]
pub(crate) struct PassResources {
    pub uniforms: BufferHandle,
    pub gpu_scene: BufferHandle,
    pub materials: BufferHandle,
    pub shadow_map: TextureHandle,
    pub shadow_sampler: SamplerHandle,
    pub light_grid: [BufferHandle; 4],
    pub shadow_atlas: TextureHandle,
    pub shadow_tiles: BufferHandle,
    pub environment: crate::environment::gpu::EnvironmentBindings,
}

/// Bind groups of the frame, created on first use and shared by every
/// secondary (per-frame allocation; see `rhi_vulkan`'s descriptor module).
pub(crate) struct PassBindings<'f, 'd> {
    frame: &'f Frame<'d>,
    resources: PassResources,
    views: HashMap<usize, BindGroup>,
    lighting: Option<BindGroup>,
}

impl<'f, 'd> PassBindings<'f, 'd> {
    pub fn new(frame: &'f Frame<'d>, resources: PassResources) -> Self {
        Self { frame, resources, views: HashMap::new(), lighting: None }
    }

    fn view_group(&mut self, view: usize, pipeline: PipelineHandle) -> Result<BindGroup> {
        if let Some(g) = self.views.get(&view) {
            return Ok(*g);
        }
        let offset = view as u64 * crate::frame_resources::VIEW_UNIFORM_SIZE;
        let pages = crate::scene::gpu_scene::page_ranges(self.frame.device().buffer_desc(self.resources.gpu_scene)?.size);
        let page = |p: usize| BindingResource::BufferRange { buffer: self.resources.gpu_scene, offset: pages[p].0, size: pages[p].1 };
        let g = self.frame.create_bind_group(
            pipeline,
            0,
            &[
                (
                    0,
                    BindingResource::BufferRange {
                        buffer: self.resources.uniforms,
                        offset,
                        size: crate::frame_resources::VIEW_UNIFORM_SIZE,
                    },
                ),
                (1, page(0)),
                (2, BindingResource::Buffer(self.resources.materials)),
                (3, page(1)),
                (4, page(2)),
                (5, page(3)),
            ],
        )?;
        self.views.insert(view, g);
        Ok(g)
    }

    fn lighting_group(&mut self, pipeline: PipelineHandle) -> Result<BindGroup> {
        if let Some(g) = self.lighting {
            return Ok(g);
        }
        let g = self.frame.create_bind_group(
            pipeline,
            1,
            &[
                (0, BindingResource::Texture(self.resources.shadow_map)),
                (1, BindingResource::Sampler(self.resources.shadow_sampler)),
                (2, BindingResource::Buffer(self.resources.light_grid[0])),
                (3, BindingResource::Buffer(self.resources.light_grid[1])),
                (4, BindingResource::Buffer(self.resources.light_grid[2])),
                (5, BindingResource::Texture(self.resources.shadow_atlas)),
                (6, BindingResource::Buffer(self.resources.shadow_tiles)),
                (7, BindingResource::Buffer(self.resources.light_grid[3])),
                (8, BindingResource::Texture(self.resources.environment.specular)),
                (9, BindingResource::Sampler(self.resources.environment.sampler)),
                (10, BindingResource::Texture(self.resources.environment.brdf)),
                (11, BindingResource::Buffer(self.resources.environment.sh)),
            ],
        )?;
        self.lighting = Some(g);
        Ok(g)
    }
}

/// Records `list` into secondaries (one per chunk) for `layout`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn record_pass(
    frame: &Frame<'_>,
    layout: &RenderingLayout,
    list: &PassDrawList,
    view: &SceneView,
    commands: &FrameCommands<'_>,
    id_buffer: BufferHandle,
    bind: &mut PassBindings<'_, '_>,
    parallel: bool,
) -> Result<Vec<SecondaryCommandBuffer>> {
    let Some(first) = list.draws.first() else { return Ok(Vec::new()) };
    let first = commands.get(first.bucket).pipeline;
    let view_group = bind.view_group(list.view, first)?;
    let lighting = if list.pass.desc().lighting { Some(bind.lighting_group(first)?) } else { None };
    let n = list.draws.len();
    let count = if parallel { (n / MIN_DRAWS_PER_CHUNK).clamp(1, rayon::current_num_threads() * 2) } else { 1 };
    let chunks = list.draws.chunks(count);
    // GPU timestamps around the pass's draws: the first chunk begins with
    // one, the last ends with one (lists are recorded one after another, so
    // the room checked here is still there when the chunks take it).
    let stamps = frame.timestamps_left().is_some_and(|left| left >= 2).then(|| pass_timestamp_labels(list.pass, list.view));
    let record = |chunk: &DrawChunk<'_>| -> Result<SecondaryCommandBuffer> {
        crate::trace::span!("task", "record_chunk");
        let r = chunk.range();
        frame
            .record_secondary(layout, |cmd| {
                if let Some([begin, _]) = stamps.as_ref().filter(|_| r.start == 0) {
                    cmd.write_timestamp(begin)?;
                }
                record_draws(cmd, list, chunk.iter(), view, commands, id_buffer, view_group, lighting)?;
                if let Some([_, end]) = stamps.as_ref().filter(|_| r.end == n) {
                    cmd.write_timestamp(end)?;
                }
                Ok(())
            })
            .map(|(s, ())| s)
    };
    if parallel && chunks.len() > 1 {
        chunks.par_iter().map(record).collect()
    } else {
        chunks.iter().map(record).collect()
    }
}

#[allow(clippy::too_many_arguments)]
fn record_draws(
    cmd: &mut CommandList<'_>,
    list: &PassDrawList,
    draws: impl Iterator<Item = MergedDraw>,
    view: &SceneView,
    commands: &FrameCommands<'_>,
    id_buffer: BufferHandle,
    view_group: BindGroup,
    lighting: Option<BindGroup>,
) -> Result<()> {
    cmd.set_viewport(view.viewport)?;
    cmd.set_scissor(view.viewport)?;
    let mut last_pipeline = None;
    let mut last_streams = None;
    let mut last_index = None;
    let mut last_bindings = None;
    let mut last_vf_bindings = None;
    for d in draws {
        let c = commands.get(d.bucket);
        if last_pipeline != Some(c.pipeline) {
            cmd.bind_pipeline(c.pipeline)?;
            cmd.bind_group(0, &view_group)?;
            if let Some(g) = &lighting {
                cmd.bind_group(1, g)?;
            }
            last_pipeline = Some(c.pipeline);
            last_streams = None;
            last_index = None;
            last_bindings = None;
            last_vf_bindings = None;
        }
        // The material's textures (group 2): re-bound only when the
        // material's bind group changes (draws are sorted by material).
        if let Some(g) = c.material_bindings.filter(|g| last_bindings != Some(*g)) {
            cmd.bind_group_handle(crate::material::parameters::MATERIAL_BIND_GROUP, g)?;
            last_bindings = Some(g);
        }
        // The vertex factory's bindings (group 3), likewise.
        if let Some(g) = c.vertex_factory_bindings.filter(|g| last_vf_bindings != Some(*g)) {
            cmd.bind_group_handle(crate::vertex_factory::VERTEX_FACTORY_BIND_GROUP, g)?;
            last_vf_bindings = Some(g);
        }
        if last_streams != Some((c.streams, c.id_stream_slot)) {
            let mut streams: Vec<(BufferHandle, u64)> = c.streams.iter().flatten().copied().collect();
            if c.id_stream_slot.is_some() {
                streams.push((id_buffer, 0));
            }
            if !streams.is_empty() {
                cmd.bind_vertex_buffers(0, &streams)?;
            }
            last_streams = Some((c.streams, c.id_stream_slot));
        }
        if let Some((buffer, format)) = c.element.index_buffer.filter(|_| last_index != c.element.index_buffer) {
            cmd.bind_index_buffer(buffer, 0, format)?;
            last_index = c.element.index_buffer;
        }
        if c.push_constants {
            let first = list.draws.ids().get(d.first_instance as usize).expect("a draw's instances are in its pass's stream");
            let push = DrawPush { material_index: c.material_index, primitive_id: first.0, pad0: 0, pad1: 0 };
            cmd.push_constants(0, bytemuck::bytes_of(&push))?;
        }
        if let Some((buffer, offset)) = c.element.indirect {
            cmd.draw_indexed_indirect(buffer, offset, 1, 20)?;
            continue;
        }
        let (instances, first_instance) =
            if c.id_stream_slot.is_some() { (d.instance_count, list.id_base + d.first_instance) } else { (c.element.instance_count, 0) };
        if c.element.index_buffer.is_some() {
            cmd.draw_indexed(c.element.count, instances, c.element.first_index, c.element.base_vertex, first_instance)?;
        } else {
            cmd.draw(c.element.count, instances, c.element.base_vertex.max(0) as u32, first_instance)?;
        }
    }
    Ok(())
}

/// The `DrawPush` push constants of `scene.inc.wgsl`: what a draw of a
/// pass pipeline with push constants reads besides its instance's id.
#[repr(C)]
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable)]
pub(crate) struct DrawPush {
    /// The material's slot in the material table.
    pub material_index: u32,
    /// The primitive of the draw's first instance.
    pub primitive_id: u32,
    pub pad0: u32,
    pub pad1: u32,
}
