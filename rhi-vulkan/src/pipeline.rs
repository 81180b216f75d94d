//! Graphics and compute pipelines, their plain-data descriptions and the
//! pipeline-state cache.
//!
//! A description is `Hash + Eq`; [`Device::create_graphics_pipeline`] returns
//! the same handle for equal descriptions and counts hits and misses, so the
//! renderer can ask for a pipeline every time it builds a draw command without
//! paying for creation twice. The pipeline layout comes from shader
//! reflection (the union of the stages' bindings and push constants).

use crate::command::{SetLayouts, VertexStream, VertexStreams, MAX_BIND_GROUPS, MAX_PUSH_CONSTANT_BYTES, MAX_VERTEX_STREAMS};
use crate::conv;
use crate::descriptor::{BindGroupLayoutDesc, BindGroupLayoutEntry, PipelineLayoutDesc};
use crate::device::{read, write, Device};
use crate::error::{vk_err, Result, RhiError};
use crate::frame::{rendering_key, MAX_COLOR_ATTACHMENTS};
use crate::handle::Handle;
use crate::shader::{BindingType, EntryPointReflection, ShaderHandle};
use crate::types::*;
use ash::vk;
use std::collections::HashMap;
use std::ffi::CString;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

/// A shader and the entry point to run.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ShaderStageDesc {
    /// The shader module.
    pub shader: ShaderHandle,
    /// The entry point's name; it must exist for the stage it is used in.
    pub entry: String,
}

impl ShaderStageDesc {
    /// The entry point `entry` of `shader`.
    pub fn new(shader: ShaderHandle, entry: &str) -> Self {
        Self { shader, entry: entry.into() }
    }
}

/// One attribute of a vertex stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct VertexAttribute {
    /// The `@location(n)` the vertex shader reads it at; each location once
    /// per pipeline.
    pub location: u32,
    /// Its format in the buffer.
    pub format: VertexFormat,
    /// Byte offset inside one element; the attribute must end within the
    /// stream's stride.
    pub offset: u32,
}

/// How often a vertex stream advances.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum VertexStepMode {
    /// Once per vertex.
    #[default]
    Vertex,
    /// Once per instance.
    Instance,
}

/// One vertex stream.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct VertexBufferLayout {
    /// Bytes from one element to the next.
    pub stride: u32,
    /// Whether an element is a vertex or an instance.
    pub step_mode: VertexStepMode,
    /// The attributes read from each element.
    pub attributes: Vec<VertexAttribute>,
}

/// How vertices become primitives and which of them are rasterized.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct PrimitiveState {
    /// How vertices are assembled into primitives.
    pub topology: PrimitiveTopology,
    /// Filled or wireframe.
    pub polygon_mode: PolygonMode,
    /// Which faces are discarded.
    pub cull_mode: CullMode,
    /// Which winding is front-facing.
    pub front_face: FrontFace,
}

/// Depth bias; `slope_scale` is stored as `f32` bits so the desc stays `Eq + Hash`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct DepthBias {
    /// Constant offset added to each fragment's depth, in units of the
    /// depth format's smallest step.
    pub constant: i32,
    /// The bits of the `f32` factor applied to the polygon's depth slope
    /// (see [`DepthBias::new`]).
    pub slope_scale_bits: u32,
}

impl DepthBias {
    /// A bias of `constant` steps plus `slope_scale` times the depth slope.
    pub fn new(constant: i32, slope_scale: f32) -> Self {
        Self { constant, slope_scale_bits: slope_scale.to_bits() }
    }
}

/// Depth testing and writing of a graphics pipeline.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct DepthState {
    /// The depth attachment's format (a depth format).
    pub format: Format,
    /// Whether fragments that pass write their depth.
    pub write: bool,
    /// The test a fragment's depth must pass against the stored one.
    pub compare: CompareOp,
    /// Depth bias (shadow maps), if any.
    pub bias: Option<DepthBias>,
}

/// One color target of a graphics pipeline.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ColorTargetState {
    /// The attachment's format (not a depth format).
    pub format: Format,
    /// Blending with what the target holds; `None` overwrites.
    pub blend: Option<BlendState>,
}

/// Everything that defines a graphics pipeline; the cache key.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct GraphicsPipelineDesc {
    /// The vertex shader.
    pub vertex: ShaderStageDesc,
    /// The fragment shader; `None` for depth-only pipelines.
    pub fragment: Option<ShaderStageDesc>,
    /// The vertex streams, by binding slot (at most
    /// [`crate::MAX_VERTEX_STREAMS`]); together they provide every location the
    /// vertex shader reads.
    pub vertex_buffers: Vec<VertexBufferLayout>,
    /// Primitive assembly and rasterization.
    pub primitive: PrimitiveState,
    /// Depth test and write; `None` for a pass without depth.
    pub depth: Option<DepthState>,
    /// The color targets, in attachment order (at most
    /// [`crate::MAX_COLOR_ATTACHMENTS`]); a pipeline needs a color target or depth.
    pub color_targets: Vec<ColorTargetState>,
    /// Samples per pixel and alpha to coverage: it draws only in passes
    /// whose attachments have these samples.
    pub multisample: MultisampleState,
}

/// A graphics pipeline's multisampling.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct MultisampleState {
    /// Samples per pixel of the pass it draws in: 1, or 2, 4 or 8 (MSAA).
    pub samples: u32,
    /// The fragment's alpha decides how many of the pixel's samples it
    /// covers (masked materials under MSAA: smooth cut-out edges).
    pub alpha_to_coverage: bool,
}

impl Default for MultisampleState {
    /// One sample, no alpha to coverage.
    fn default() -> Self {
        Self { samples: 1, alpha_to_coverage: false }
    }
}

impl GraphicsPipelineDesc {
    /// `shader`'s `vs_main` and `fs_main` drawing into one `color_format`
    /// target without blending: no vertex streams, no depth, the default
    /// primitive state. Add the rest with struct update syntax.
    pub fn color(shader: ShaderHandle, color_format: Format) -> Self {
        Self {
            vertex: ShaderStageDesc::new(shader, "vs_main"),
            fragment: Some(ShaderStageDesc::new(shader, "fs_main")),
            vertex_buffers: vec![],
            primitive: PrimitiveState::default(),
            depth: None,
            color_targets: vec![ColorTargetState { format: color_format, blend: None }],
            multisample: MultisampleState::default(),
        }
    }
}

/// A compute pipeline's description; the cache key.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ComputePipelineDesc {
    /// The compute shader.
    pub shader: ShaderStageDesc,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum PipelineKey {
    Graphics(GraphicsPipelineDesc),
    Compute(ComputePipelineDesc),
}

/// A pipeline layout with its description and set layouts.
struct Layout {
    raw: vk::PipelineLayout,
    desc: PipelineLayoutDesc,
    sets: Vec<vk::DescriptorSetLayout>,
}

/// What kind of pipeline an entry is, with what command lists check for it.
enum PipelineKind {
    Graphics { streams: VertexStreams, rendering: u64 },
    Compute,
}

/// Handle to a pipeline owned by the device.
pub type PipelineHandle = Handle<PipelineEntry>;

#[doc(hidden)]
pub struct PipelineEntry {
    pub(crate) raw: vk::Pipeline,
    pub(crate) layout: vk::PipelineLayout,
    pub(crate) bind_point: vk::PipelineBindPoint,
    pub(crate) groups: Vec<(BindGroupLayoutDesc, vk::DescriptorSetLayout)>,
    pub(crate) push_constants: Option<(vk::ShaderStageFlags, u32)>,
    /// The set layouts again, in the fixed form command lists copy.
    pub(crate) set_layouts: SetLayouts,
    pub(crate) vertex_streams: VertexStreams,
    /// The attachment formats of a graphics pipeline ([`crate::RenderingLayout`]'s key).
    pub(crate) rendering: Option<u64>,
}

impl PipelineEntry {
    pub(crate) fn destroy(self, device: &Device) {
        // SAFETY: no submitted work uses the pipeline any more; the layout is
        // owned by the layout cache and outlives it.
        unsafe { device.raw.destroy_pipeline(self.raw, None) };
    }
}

#[derive(Default)]
pub(crate) struct PipelineCache {
    map: Mutex<HashMap<PipelineKey, PipelineHandle>>,
    hits: AtomicU64,
    misses: AtomicU64,
}

impl PipelineCache {
    pub fn hits(&self) -> u64 {
        self.hits.load(Ordering::Relaxed)
    }
    pub fn misses(&self) -> u64 {
        self.misses.load(Ordering::Relaxed)
    }
}

/// The pipeline layout: every binding and the push-constant range are visible
/// to the vertex and fragment stages of every graphics pipeline (compute: the
/// compute stage), with or without a fragment shader, so pipelines whose
/// shaders declare the same resources get identical, compatible set layouts.
fn layout_desc(stages: &[&EntryPointReflection]) -> Result<PipelineLayoutDesc> {
    let mut groups: Vec<BindGroupLayoutDesc> = Vec::new();
    let mut push: Option<(ShaderStages, u32)> = None;
    let all_stages = if stages.iter().any(|ep| ep.stage == ShaderStages::COMPUTE) {
        ShaderStages::COMPUTE
    } else {
        ShaderStages::VERTEX | ShaderStages::FRAGMENT
    };
    for ep in stages {
        for b in &ep.bindings {
            let g = b.group as usize;
            if groups.len() <= g {
                groups.resize_with(g + 1, Default::default);
            }
            let entries = &mut groups[g].entries;
            match entries.iter_mut().find(|e| e.binding == b.binding) {
                Some(e) if e.ty == b.ty => {}
                Some(e) => {
                    return Err(RhiError::InvalidDesc(format!(
                        "binding {}/{} is {:?} in one stage and {:?} in another",
                        b.group, b.binding, e.ty, b.ty
                    )))
                }
                None => entries.push(BindGroupLayoutEntry { binding: b.binding, ty: b.ty, stages: all_stages }),
            }
        }
        if ep.push_constant_size > 0 {
            let (_, size) = push.get_or_insert((all_stages, 0));
            *size = (*size).max(ep.push_constant_size);
        }
    }
    if groups.len() > MAX_BIND_GROUPS {
        return Err(RhiError::Unsupported(format!("shaders use {} bind groups; at most {MAX_BIND_GROUPS}", groups.len())));
    }
    for g in &mut groups {
        g.entries.sort_by_key(|e| e.binding);
    }
    Ok(PipelineLayoutDesc { groups, push_constants: push })
}

impl Device {
    fn cached(&self, key: &PipelineKey) -> Option<PipelineHandle> {
        let map = self.pipeline_cache.map.lock().unwrap_or_else(|p| p.into_inner());
        let h = map.get(key).copied()?;
        // A pipeline destroyed by the caller leaves a stale entry: treat as a miss.
        read(&self.resources.pipelines).get(h).map(|_| h)
    }

    fn entry_point(&self, stage: &ShaderStageDesc, want: ShaderStages) -> Result<(vk::ShaderModule, EntryPointReflection)> {
        let shaders = read(&self.resources.shaders);
        let s = shaders.get(stage.shader).ok_or_else(|| RhiError::InvalidHandle(format!("{:?}", stage.shader)))?;
        let ep = s
            .compiled
            .entry_point(&stage.entry)
            .ok_or_else(|| RhiError::NoEntryPoint { shader: s.compiled.name().to_string(), entry: stage.entry.clone() })?;
        if ep.stage != want {
            return Err(RhiError::InvalidDesc(format!("entry point {:?} is a {:?} shader, expected {:?}", stage.entry, ep.stage, want)));
        }
        Ok((s.raw, ep.clone()))
    }

    /// Checks a layout against the device's limits: push-constant size, bind
    /// groups, and descriptors of each kind per stage (every binding is
    /// visible to every stage of the pipeline, so each stage sees them all).
    fn layout_limits_check(&self, layout: &PipelineLayoutDesc) -> Result<()> {
        let info = self.info();
        if let Some((_, size)) = layout.push_constants {
            if size > info.max_push_constants_size || size > MAX_PUSH_CONSTANT_BYTES {
                return Err(RhiError::Unsupported(format!(
                    "push constants of {size} bytes exceed the device limit of {}",
                    info.max_push_constants_size
                )));
            }
        }
        if layout.groups.len() > info.max_bound_descriptor_sets as usize {
            return Err(RhiError::Unsupported(format!(
                "{} bind groups exceed the device limit of {}",
                layout.groups.len(),
                info.max_bound_descriptor_sets
            )));
        }
        let count = |want: fn(BindingType) -> bool| layout.groups.iter().flat_map(|g| &g.entries).filter(|e| want(e.ty)).count();
        let limits: [(&str, usize, u32); 5] = [
            ("uniform buffers", count(|t| t == BindingType::UniformBuffer), info.max_per_stage_uniform_buffers),
            ("storage buffers", count(|t| matches!(t, BindingType::StorageBuffer { .. })), info.max_per_stage_storage_buffers),
            (
                "sampled textures",
                count(|t| matches!(t, BindingType::SampledTexture | BindingType::SampledCubeTexture | BindingType::DepthTexture)),
                info.max_per_stage_sampled_images,
            ),
            ("storage textures", count(|t| t == BindingType::StorageTexture), info.max_per_stage_storage_images),
            ("samplers", count(|t| matches!(t, BindingType::Sampler | BindingType::ComparisonSampler)), info.max_per_stage_samplers),
        ];
        for (what, n, max) in limits {
            if n > max as usize {
                return Err(RhiError::Unsupported(format!("{n} {what} in one stage exceed the device limit of {max}")));
            }
        }
        Ok(())
    }

    /// Returns the pipeline for `desc`, creating it on the first request.
    pub fn create_graphics_pipeline(&self, desc: &GraphicsPipelineDesc) -> Result<PipelineHandle> {
        let key = PipelineKey::Graphics(desc.clone());
        if let Some(h) = self.cached(&key) {
            self.pipeline_cache.hits.fetch_add(1, Ordering::Relaxed);
            return Ok(h);
        }
        self.graphics_desc_check(desc)?;
        // Until the pipeline exists, a shader module destroyed on another
        // thread waits in the deletion queue (its raw module is used below).
        let _recording = crate::device::Recording::begin(self);
        let (vs_module, vs) = self.entry_point(&desc.vertex, ShaderStages::VERTEX)?;
        let fs = desc.fragment.as_ref().map(|f| self.entry_point(f, ShaderStages::FRAGMENT)).transpose()?;
        vertex_inputs_check(desc, &vs)?;
        let mut reflections = vec![&vs];
        if let Some((_, f)) = &fs {
            reflections.push(f);
        }
        let layout_desc = layout_desc(&reflections)?;
        self.layout_limits_check(&layout_desc)?;
        let (layout, set_layouts) = self.layouts.pipeline_layout(&self.raw, &layout_desc)?;
        let raw = self.raw_graphics_pipeline(desc, vs_module, fs.as_ref().map(|(m, _)| *m), layout)?;
        let streams = vertex_streams(desc);
        let rendering = rendering_key(desc.color_targets.iter().map(|c| c.format), desc.depth.map(|d| d.format), desc.multisample.samples);
        let layout = Layout { raw: layout, desc: layout_desc, sets: set_layouts };
        self.insert_pipeline(key, raw, layout, PipelineKind::Graphics { streams, rendering })
    }

    /// Checks a graphics description on its own and against the device's
    /// features: targets, stream counts, wireframe, depth and color formats.
    fn graphics_desc_check(&self, desc: &GraphicsPipelineDesc) -> Result<()> {
        let resource = || "the graphics pipeline".to_string();
        let counts = [
            ("targets (color and depth)", desc.color_targets.len() + usize::from(desc.depth.is_some()), 1, MAX_COLOR_ATTACHMENTS + 1),
            ("color targets", desc.color_targets.len(), 0, MAX_COLOR_ATTACHMENTS),
            ("vertex buffers", desc.vertex_buffers.len(), 0, MAX_VERTEX_STREAMS),
        ];
        for (what, value, min, max) in counts {
            if value < min || value > max {
                let (value, min, max) = (value as u64, min as u64, max as u64);
                return Err(RhiError::OutOfLimits { what, resource: resource(), value, min, max });
            }
        }
        crate::texture::check_samples(desc.multisample.samples, "the graphics pipeline")?;
        if desc.primitive.polygon_mode == PolygonMode::Line && !self.features().wireframe {
            return Err(RhiError::Unsupported("wireframe (fillModeNonSolid) is not supported".into()));
        }
        if let Some(d) = desc.depth.filter(|d| !d.format.is_depth()) {
            let resource = "the depth target of the graphics pipeline".into();
            return Err(RhiError::WrongFormat { resource, format: d.format, expected: "a depth format" });
        }
        for (i, c) in desc.color_targets.iter().enumerate() {
            let expected = match c.format {
                f if f.is_depth() => "a color format",
                f if f.is_block_compressed() => "a format that can be rendered to (block-compressed ones are sampled only)",
                _ => continue,
            };
            return Err(RhiError::WrongFormat { resource: format!("color target {i}"), format: c.format, expected });
        }
        Ok(())
    }

    /// Translates `desc` into Vulkan state and creates the raw pipeline with
    /// the given shader modules and layout.
    fn raw_graphics_pipeline(
        &self,
        desc: &GraphicsPipelineDesc,
        vs_module: vk::ShaderModule,
        fs_module: Option<vk::ShaderModule>,
        layout: vk::PipelineLayout,
    ) -> Result<vk::Pipeline> {
        let vs_name = entry_name(&desc.vertex.entry)?;
        let fs_name = desc.fragment.as_ref().map(|f| entry_name(&f.entry)).transpose()?;
        let mut stages =
            vec![vk::PipelineShaderStageCreateInfo::default().stage(vk::ShaderStageFlags::VERTEX).module(vs_module).name(&vs_name)];
        if let (Some(module), Some(name)) = (fs_module, &fs_name) {
            stages.push(vk::PipelineShaderStageCreateInfo::default().stage(vk::ShaderStageFlags::FRAGMENT).module(module).name(name));
        }
        let (bindings, attributes) = vertex_input_descriptions(desc);
        let vertex_input = vk::PipelineVertexInputStateCreateInfo::default()
            .vertex_binding_descriptions(&bindings)
            .vertex_attribute_descriptions(&attributes);
        let input_assembly = vk::PipelineInputAssemblyStateCreateInfo::default().topology(conv::topology(desc.primitive.topology));
        let viewport = vk::PipelineViewportStateCreateInfo::default().viewport_count(1).scissor_count(1);
        let raster = rasterization_state(desc);
        let multisample = vk::PipelineMultisampleStateCreateInfo::default()
            .rasterization_samples(conv::samples(desc.multisample.samples))
            .alpha_to_coverage_enable(desc.multisample.alpha_to_coverage);
        let depth_stencil = match &desc.depth {
            Some(d) => vk::PipelineDepthStencilStateCreateInfo::default()
                .depth_test_enable(true)
                .depth_write_enable(d.write)
                .depth_compare_op(conv::compare_op(d.compare)),
            None => vk::PipelineDepthStencilStateCreateInfo::default(),
        };
        let blend_attachments = blend_attachment_states(desc);
        let color_blend = vk::PipelineColorBlendStateCreateInfo::default().attachments(&blend_attachments);
        let dynamic_states = [vk::DynamicState::VIEWPORT, vk::DynamicState::SCISSOR];
        let dynamic = vk::PipelineDynamicStateCreateInfo::default().dynamic_states(&dynamic_states);
        let color_formats: Vec<_> = desc.color_targets.iter().map(|c| conv::format(c.format)).collect();
        let mut rendering = vk::PipelineRenderingCreateInfo::default()
            .color_attachment_formats(&color_formats)
            .depth_attachment_format(desc.depth.map(|d| conv::format(d.format)).unwrap_or(vk::Format::UNDEFINED));
        let info = vk::GraphicsPipelineCreateInfo::default()
            .stages(&stages)
            .vertex_input_state(&vertex_input)
            .input_assembly_state(&input_assembly)
            .viewport_state(&viewport)
            .rasterization_state(&raster)
            .multisample_state(&multisample)
            .depth_stencil_state(&depth_stencil)
            .color_blend_state(&color_blend)
            .dynamic_state(&dynamic)
            .layout(layout)
            .push_next(&mut rendering);
        // SAFETY: every referenced module (kept by the caller's recording
        // guard), layout and array is live for the call.
        let raw = unsafe { self.raw.create_graphics_pipelines(vk::PipelineCache::null(), &[info], None) }
            .map_err(|(_, e)| vk_err("vkCreateGraphicsPipelines")(e))?[0];
        Ok(raw)
    }

    /// Returns the compute pipeline for `desc`, creating it on the first request.
    pub fn create_compute_pipeline(&self, desc: &ComputePipelineDesc) -> Result<PipelineHandle> {
        let key = PipelineKey::Compute(desc.clone());
        if let Some(h) = self.cached(&key) {
            self.pipeline_cache.hits.fetch_add(1, Ordering::Relaxed);
            return Ok(h);
        }
        // As for graphics pipelines: the module outlives its use below.
        let _recording = crate::device::Recording::begin(self);
        let (module, ep) = self.entry_point(&desc.shader, ShaderStages::COMPUTE)?;
        let layout_desc = layout_desc(&[&ep])?;
        self.layout_limits_check(&layout_desc)?;
        let (layout, set_layouts) = self.layouts.pipeline_layout(&self.raw, &layout_desc)?;
        let name = entry_name(&desc.shader.entry)?;
        let stage = vk::PipelineShaderStageCreateInfo::default().stage(vk::ShaderStageFlags::COMPUTE).module(module).name(&name);
        let info = vk::ComputePipelineCreateInfo::default().stage(stage).layout(layout);
        // SAFETY: the module (kept by the recording guard) and layout are live for the call.
        let raw = unsafe { self.raw.create_compute_pipelines(vk::PipelineCache::null(), &[info], None) }
            .map_err(|(_, e)| vk_err("vkCreateComputePipelines")(e))?[0];
        let layout = Layout { raw: layout, desc: layout_desc, sets: set_layouts };
        self.insert_pipeline(key, raw, layout, PipelineKind::Compute)
    }

    fn insert_pipeline(&self, key: PipelineKey, raw: vk::Pipeline, layout: Layout, kind: PipelineKind) -> Result<PipelineHandle> {
        self.pipeline_cache.misses.fetch_add(1, Ordering::Relaxed);
        let Layout { raw: layout, desc: layout_desc, sets: set_layouts } = layout;
        let empty = layout_desc.groups.iter().enumerate().filter(|(_, g)| g.entries.is_empty()).fold(0u8, |m, (i, _)| m | 1 << i);
        let mut sets = SetLayouts { raw: [vk::DescriptorSetLayout::null(); MAX_BIND_GROUPS], count: set_layouts.len() as u8, empty };
        sets.raw[..set_layouts.len()].copy_from_slice(&set_layouts);
        let (bind_point, vertex_streams, rendering) = match kind {
            PipelineKind::Graphics { streams, rendering } => (vk::PipelineBindPoint::GRAPHICS, streams, Some(rendering)),
            PipelineKind::Compute => (vk::PipelineBindPoint::COMPUTE, VertexStreams::default(), None),
        };
        let entry = PipelineEntry {
            set_layouts: sets,
            vertex_streams,
            rendering,
            raw,
            layout,
            bind_point,
            groups: layout_desc.groups.into_iter().zip(set_layouts).collect(),
            push_constants: layout_desc.push_constants.map(|(s, n)| (conv::shader_stages(s), n)),
        };
        let handle = write(&self.resources.pipelines).insert(entry);
        self.pipeline_cache.map.lock().unwrap_or_else(|p| p.into_inner()).insert(key, handle);
        Ok(handle)
    }

    /// The layout of one bind group of a pipeline.
    pub fn pipeline_bind_group_layout(&self, pipeline: PipelineHandle, group: u32) -> Result<BindGroupLayoutDesc> {
        self.pipeline_group_layout(pipeline, group).map(|(d, _)| d)
    }

    /// The raw `VkPipelineLayout` of a pipeline, for code that records with
    /// `ash` directly (the benchmark of the unchecked floor). Its push-constant
    /// range, where it has one, is visible to the vertex and fragment stages
    /// (compute: the compute stage). The layout belongs to the device's layout
    /// cache: never destroy it.
    #[doc(hidden)]
    pub fn raw_pipeline_layout(&self, pipeline: PipelineHandle) -> Result<vk::PipelineLayout> {
        let pipelines = read(&self.resources.pipelines);
        let p = pipelines.get(pipeline).ok_or_else(|| RhiError::InvalidHandle(format!("{pipeline:?}")))?;
        Ok(p.layout)
    }

    pub(crate) fn pipeline_group_layout(
        &self,
        pipeline: PipelineHandle,
        group: u32,
    ) -> Result<(BindGroupLayoutDesc, vk::DescriptorSetLayout)> {
        let pipelines = read(&self.resources.pipelines);
        let p = pipelines.get(pipeline).ok_or_else(|| RhiError::InvalidHandle(format!("{pipeline:?}")))?;
        p.groups.get(group as usize).cloned().ok_or_else(|| RhiError::OutOfRange {
            what: "bind group",
            resource: format!("the layout of pipeline {pipeline:?}"),
            range: crate::error::range_of(u64::from(group), 1),
            limit: p.groups.len() as u64,
        })
    }

    /// Destroys a pipeline once the GPU no longer uses it (and forgets it in the cache).
    pub fn destroy_pipeline(&self, pipeline: PipelineHandle) {
        let entry = write(&self.resources.pipelines).remove(pipeline);
        if let Some(entry) = entry {
            self.pipeline_cache.map.lock().unwrap_or_else(|p| p.into_inner()).retain(|_, h| *h != pipeline);
            self.retire(crate::device::Retired::Pipeline(entry));
        }
    }
}

/// Checks a graphics description's vertex buffers: no location given twice,
/// no attribute past its stride, every location the vertex shader reads provided.
fn vertex_inputs_check(desc: &GraphicsPipelineDesc, vs: &EntryPointReflection) -> Result<()> {
    let mut provided = HashMap::new();
    for (i, vb) in desc.vertex_buffers.iter().enumerate() {
        for a in &vb.attributes {
            if provided.insert(a.location, i).is_some() {
                let resource = "the pipeline's vertex buffers".into();
                return Err(RhiError::Duplicate { what: "vertex location", value: a.location, resource });
            }
            let range = crate::error::range_of(u64::from(a.offset), u64::from(a.format.size()));
            if range.end > u64::from(vb.stride) && vb.stride != 0 {
                let resource = format!("the stride of vertex buffer {i} (attribute at location {})", a.location);
                return Err(RhiError::OutOfRange { what: "attribute bytes", resource, range, limit: u64::from(vb.stride) });
            }
        }
    }
    if let Some(missing) = vs.vertex_inputs.iter().find(|i| !provided.contains_key(&i.location)) {
        let resource = format!("the vertex buffers (vertex shader {:?} reads it)", desc.vertex.entry);
        return Err(RhiError::NotFound { what: "vertex location", value: missing.location, resource });
    }
    Ok(())
}

/// The Vulkan vertex binding (one per buffer) and attribute descriptions of a graphics description.
fn vertex_input_descriptions(
    desc: &GraphicsPipelineDesc,
) -> (Vec<vk::VertexInputBindingDescription>, Vec<vk::VertexInputAttributeDescription>) {
    let bindings = desc
        .vertex_buffers
        .iter()
        .enumerate()
        .map(|(i, vb)| vk::VertexInputBindingDescription {
            binding: i as u32,
            stride: vb.stride,
            input_rate: match vb.step_mode {
                VertexStepMode::Vertex => vk::VertexInputRate::VERTEX,
                VertexStepMode::Instance => vk::VertexInputRate::INSTANCE,
            },
        })
        .collect();
    let attributes = desc
        .vertex_buffers
        .iter()
        .enumerate()
        .flat_map(|(i, vb)| {
            vb.attributes.iter().map(move |a| vk::VertexInputAttributeDescription {
                location: a.location,
                binding: i as u32,
                format: conv::vertex_format(a.format),
                offset: a.offset,
            })
        })
        .collect();
    (bindings, attributes)
}

/// The Vulkan rasterization state of a graphics description (polygon mode, culling, depth bias).
fn rasterization_state(desc: &GraphicsPipelineDesc) -> vk::PipelineRasterizationStateCreateInfo<'static> {
    let bias = desc.depth.and_then(|d| d.bias);
    vk::PipelineRasterizationStateCreateInfo::default()
        .polygon_mode(conv::polygon_mode(desc.primitive.polygon_mode))
        .cull_mode(conv::cull_mode(desc.primitive.cull_mode))
        .front_face(conv::front_face(desc.primitive.front_face))
        .line_width(1.0)
        .depth_bias_enable(bias.is_some())
        .depth_bias_constant_factor(bias.map(|b| b.constant as f32).unwrap_or(0.0))
        .depth_bias_slope_factor(bias.map(|b| f32::from_bits(b.slope_scale_bits)).unwrap_or(0.0))
}

/// The Vulkan blend state of each color target of a graphics description.
fn blend_attachment_states(desc: &GraphicsPipelineDesc) -> Vec<vk::PipelineColorBlendAttachmentState> {
    desc.color_targets
        .iter()
        .map(|c| {
            let a = vk::PipelineColorBlendAttachmentState::default().color_write_mask(vk::ColorComponentFlags::RGBA);
            match c.blend {
                None => a,
                Some(b) => a
                    .blend_enable(true)
                    .src_color_blend_factor(conv::blend_factor(b.color.src))
                    .dst_color_blend_factor(conv::blend_factor(b.color.dst))
                    .color_blend_op(vk::BlendOp::ADD)
                    .src_alpha_blend_factor(conv::blend_factor(b.alpha.src))
                    .dst_alpha_blend_factor(conv::blend_factor(b.alpha.dst))
                    .alpha_blend_op(vk::BlendOp::ADD),
            }
        })
        .collect()
}

/// The vertex streams (stride, step mode, span of the attributes) a graphics pipeline checks draws against.
fn vertex_streams(desc: &GraphicsPipelineDesc) -> VertexStreams {
    let mut streams = VertexStreams::default();
    for (i, vb) in desc.vertex_buffers.iter().enumerate() {
        let span = vb.attributes.iter().map(|a| a.offset + a.format.size()).max().unwrap_or(0);
        streams.streams[i] = VertexStream { stride: vb.stride, per_instance: vb.step_mode == VertexStepMode::Instance, span };
    }
    streams.count = desc.vertex_buffers.len() as u8;
    streams
}

/// An entry point's name for Vulkan (no NUL inside).
fn entry_name(entry: &str) -> Result<CString> {
    CString::new(entry).map_err(|_| RhiError::InvalidDesc(format!("entry point name {entry:?} contains a NUL byte")))
}
