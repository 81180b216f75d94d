//! Descriptor set layouts, pipeline layouts and per-frame bind groups.
//!
//! Binding model: **per-frame allocation** for what changes every frame,
//! **persistent** groups for what does not.
//! Lavapipe has no descriptor indexing, so there is no bindless table. Each
//! frame slot owns a growable arena of descriptor pools that is reset when the
//! slot is reused; a [`BindGroup`] made from a frame is valid for that frame
//! only. Renderers create a handful of groups per pass (GPU scene, view)
//! and share them across every secondary command buffer of the pass,
//! so allocation cost is per pass, not per draw. Groups that outlive frames
//! (a material instance's textures and samplers) are
//! [`crate::BindGroupHandle`]s from the device's own pools (`bind_group.rs`),
//! made once and destroyed through the deletion queue. Both are checked by
//! the same code here. Layouts are derived from shader reflection and cached
//! by value.

use crate::conv;
use crate::device::read;
use crate::error::{range_of, vk_err, Result, RhiError, Usage};
use crate::frame::Frame;
use crate::pipeline::PipelineHandle;
use crate::shader::BindingType;
use crate::types::{BufferUsage, ShaderStages, TextureUsage};
use crate::{BufferDesc, BufferHandle, SamplerHandle, TextureHandle};
use ash::vk;
use std::collections::HashMap;
use std::sync::Mutex;

/// One binding of a bind group layout.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct BindGroupLayoutEntry {
    /// The `@binding(n)` number.
    pub binding: u32,
    /// The kind of resource bound there.
    pub ty: BindingType,
    /// The shader stages that see it.
    pub stages: ShaderStages,
}

/// A descriptor set layout as plain data (sorted by binding).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct BindGroupLayoutDesc {
    /// One entry per binding, sorted by binding number.
    pub entries: Vec<BindGroupLayoutEntry>,
}

/// A pipeline layout as plain data: one set layout per group, plus push constants.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub(crate) struct PipelineLayoutDesc {
    pub groups: Vec<BindGroupLayoutDesc>,
    pub push_constants: Option<(ShaderStages, u32)>,
}

pub(crate) fn descriptor_type(ty: BindingType) -> vk::DescriptorType {
    match ty {
        BindingType::UniformBuffer => vk::DescriptorType::UNIFORM_BUFFER,
        BindingType::StorageBuffer { .. } => vk::DescriptorType::STORAGE_BUFFER,
        BindingType::SampledTexture | BindingType::SampledCubeTexture | BindingType::DepthTexture => vk::DescriptorType::SAMPLED_IMAGE,
        BindingType::StorageTexture => vk::DescriptorType::STORAGE_IMAGE,
        BindingType::Sampler | BindingType::ComparisonSampler => vk::DescriptorType::SAMPLER,
    }
}

#[derive(Default)]
pub(crate) struct LayoutCache {
    sets: Mutex<HashMap<BindGroupLayoutDesc, vk::DescriptorSetLayout>>,
    pipelines: Mutex<HashMap<PipelineLayoutDesc, vk::PipelineLayout>>,
}

impl LayoutCache {
    pub(crate) fn set_layout(&self, device: &ash::Device, desc: &BindGroupLayoutDesc) -> Result<vk::DescriptorSetLayout> {
        let mut sets = self.sets.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(l) = sets.get(desc) {
            return Ok(*l);
        }
        let bindings: Vec<_> = desc
            .entries
            .iter()
            .map(|e| {
                vk::DescriptorSetLayoutBinding::default()
                    .binding(e.binding)
                    .descriptor_type(descriptor_type(e.ty))
                    .descriptor_count(1)
                    .stage_flags(conv::shader_stages(e.stages))
            })
            .collect();
        let info = vk::DescriptorSetLayoutCreateInfo::default().bindings(&bindings);
        // SAFETY: valid device and create info.
        let layout = unsafe { device.create_descriptor_set_layout(&info, None) }.map_err(vk_err("vkCreateDescriptorSetLayout"))?;
        sets.insert(desc.clone(), layout);
        Ok(layout)
    }

    pub fn pipeline_layout(
        &self,
        device: &ash::Device,
        desc: &PipelineLayoutDesc,
    ) -> Result<(vk::PipelineLayout, Vec<vk::DescriptorSetLayout>)> {
        let set_layouts = desc.groups.iter().map(|g| self.set_layout(device, g)).collect::<Result<Vec<_>>>()?;
        let mut pipelines = self.pipelines.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(l) = pipelines.get(desc) {
            return Ok((*l, set_layouts));
        }
        let ranges: Vec<_> = desc
            .push_constants
            .iter()
            .map(|(stages, size)| vk::PushConstantRange::default().stage_flags(conv::shader_stages(*stages)).offset(0).size(*size))
            .collect();
        let info = vk::PipelineLayoutCreateInfo::default().set_layouts(&set_layouts).push_constant_ranges(&ranges);
        // SAFETY: valid device; set layouts are live.
        let layout = unsafe { device.create_pipeline_layout(&info, None) }.map_err(vk_err("vkCreatePipelineLayout"))?;
        pipelines.insert(desc.clone(), layout);
        Ok((layout, set_layouts))
    }

    /// Set layouts plus pipeline layouts held.
    pub fn len(&self) -> usize {
        self.sets.lock().unwrap_or_else(|p| p.into_inner()).len() + self.pipelines.lock().unwrap_or_else(|p| p.into_inner()).len()
    }

    pub fn destroy(&self, device: &ash::Device) {
        for (_, l) in self.pipelines.lock().unwrap_or_else(|p| p.into_inner()).drain() {
            // SAFETY: shutdown; no pipeline uses the layout any more.
            unsafe { device.destroy_pipeline_layout(l, None) };
        }
        for (_, l) in self.sets.lock().unwrap_or_else(|p| p.into_inner()).drain() {
            // SAFETY: shutdown; no set or layout uses it any more.
            unsafe { device.destroy_descriptor_set_layout(l, None) };
        }
    }
}

pub(crate) const SETS_PER_POOL: u32 = 256;

/// Descriptors of each type one pool holds.
pub(crate) const POOL_SIZES: [(vk::DescriptorType, u32); 5] = [
    (vk::DescriptorType::UNIFORM_BUFFER, SETS_PER_POOL * 2),
    (vk::DescriptorType::STORAGE_BUFFER, SETS_PER_POOL * 4),
    (vk::DescriptorType::SAMPLED_IMAGE, SETS_PER_POOL * 2),
    (vk::DescriptorType::SAMPLER, SETS_PER_POOL * 2),
    (vk::DescriptorType::STORAGE_IMAGE, SETS_PER_POOL / 4),
];

/// Whether one set of `desc` fits an empty pool.
fn fits_pool(desc: &BindGroupLayoutDesc) -> bool {
    POOL_SIZES.iter().all(|(ty, n)| desc.entries.iter().filter(|e| descriptor_type(e.ty) == *ty).count() <= *n as usize)
}

/// The descriptor pools of one frame slot; reset when the slot is reused.
#[derive(Default)]
pub(crate) struct DescriptorArena {
    pools: Vec<vk::DescriptorPool>,
    current: usize,
}

impl DescriptorArena {
    fn new_pool(device: &ash::Device) -> Result<vk::DescriptorPool> {
        let sizes = POOL_SIZES.map(|(ty, descriptor_count)| vk::DescriptorPoolSize { ty, descriptor_count });
        let info = vk::DescriptorPoolCreateInfo::default().max_sets(SETS_PER_POOL).pool_sizes(&sizes);
        // SAFETY: valid device and create info.
        unsafe { device.create_descriptor_pool(&info, None) }.map_err(vk_err("vkCreateDescriptorPool"))
    }

    pub fn pools(&self) -> usize {
        self.pools.len()
    }

    /// Allocates from the current pool, moving on to the next (made when
    /// missing) when it is full. A set that does not fit even a fresh pool is
    /// an error, not a pool made per attempt.
    pub fn allocate(&mut self, device: &ash::Device, layout: vk::DescriptorSetLayout) -> Result<vk::DescriptorSet> {
        loop {
            let fresh = self.current == self.pools.len();
            if fresh {
                self.pools.push(Self::new_pool(device)?);
            }
            let layouts = [layout];
            let info = vk::DescriptorSetAllocateInfo::default().descriptor_pool(self.pools[self.current]).set_layouts(&layouts);
            // SAFETY: the pool is used only under the arena's lock.
            match unsafe { device.allocate_descriptor_sets(&info) } {
                Ok(sets) => return Ok(sets[0]),
                Err(vk::Result::ERROR_OUT_OF_POOL_MEMORY | vk::Result::ERROR_FRAGMENTED_POOL) if fresh => {
                    return Err(RhiError::Unsupported(format!(
                        "a bind group layout needs more descriptors than a pool of {SETS_PER_POOL} sets holds"
                    )));
                }
                Err(vk::Result::ERROR_OUT_OF_POOL_MEMORY | vk::Result::ERROR_FRAGMENTED_POOL) => {
                    self.current += 1;
                }
                Err(e) => return Err(vk_err("vkAllocateDescriptorSets")(e)),
            }
        }
    }

    /// Frees every set; called when the frame slot's previous GPU work is done.
    pub fn reset(&mut self, device: &ash::Device) -> Result<()> {
        for pool in &self.pools {
            // SAFETY: the slot's submissions have completed, so no set is in use.
            unsafe { device.reset_descriptor_pool(*pool, vk::DescriptorPoolResetFlags::empty()) }
                .map_err(vk_err("vkResetDescriptorPool"))?;
        }
        self.current = 0;
        Ok(())
    }

    pub fn destroy(&mut self, device: &ash::Device) {
        for pool in self.pools.drain(..) {
            // SAFETY: shutdown after idle.
            unsafe { device.destroy_descriptor_pool(pool, None) };
        }
    }
}

/// A resource bound at one binding of a group.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BindingResource {
    /// A whole buffer (uniform or storage).
    Buffer(BufferHandle),
    /// A range of a buffer.
    BufferRange {
        /// The buffer.
        buffer: BufferHandle,
        /// Byte offset of the range; a multiple of the device's uniform or
        /// storage offset alignment ([`crate::DeviceInfo`]).
        offset: u64,
        /// Bytes in the range: more than 0, ending inside the buffer and
        /// within the device's range limit for the binding's kind.
        size: u64,
    },
    /// A texture in the `ShaderRead` (sampled) or `General` (storage) state.
    Texture(TextureHandle),
    /// A sampler (plain or comparison, as the binding's type says).
    Sampler(SamplerHandle),
}

/// A descriptor set allocated from a frame; valid until that frame slot is reused.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct BindGroup {
    pub(crate) raw: vk::DescriptorSet,
    pub(crate) frame: u64,
    pub(crate) device: u64,
    /// The set layout it was allocated with: it binds only where that is the layout.
    pub(crate) layout: vk::DescriptorSetLayout,
}

/// One entry of a bind group: the binding number and the resource bound there.
pub type BindGroupEntry = (u32, BindingResource);

impl<'d> Frame<'d> {
    /// Allocates and writes a bind group for `group` of `pipeline`'s layout,
    /// valid in this frame only (see [`crate::Device::create_bind_group`]
    /// for one that lives until destroyed).
    /// `entries` must name every binding of the group exactly once, with a
    /// resource of the reflected kind that has the usage that kind needs
    /// (`UNIFORM` / `STORAGE` buffers, `SAMPLED` / `STORAGE` textures), buffer
    /// offsets aligned to the device's minimum and ranges within its limits.
    pub fn create_bind_group(&self, pipeline: PipelineHandle, group: u32, entries: &[BindGroupEntry]) -> Result<BindGroup> {
        let device = self.device();
        let (set_layout, checked) = check_bind_group(device, pipeline, group, entries)?;
        let set = self.allocate_descriptor_set(set_layout)?;
        write_descriptor_set(device, set, &checked);
        self.note_buffer_uses(&checked.buffers);
        Ok(BindGroup { raw: set, frame: self.index(), device: device.id(), layout: set_layout })
    }
}

/// Checks a bind group for `group` of `pipeline`'s layout: the entry count,
/// that one set fits a pool, and every entry ([`check_bind_group_entries`]).
/// Returns the set layout and the resolved entries; allocates nothing.
pub(crate) fn check_bind_group(
    device: &crate::Device,
    pipeline: PipelineHandle,
    group: u32,
    entries: &[BindGroupEntry],
) -> Result<(vk::DescriptorSetLayout, CheckedEntries)> {
    let (layout_desc, set_layout) = device.pipeline_group_layout(pipeline, group)?;
    let checked = check_entries_for_layout(device, group, &layout_desc, entries)?;
    Ok((set_layout, checked))
}

/// Checks a bind group's entries against `layout_desc` (the count, that one
/// set fits a pool, every entry); allocates nothing.
pub(crate) fn check_entries_for_layout(
    device: &crate::Device,
    group: u32,
    layout_desc: &BindGroupLayoutDesc,
    entries: &[BindGroupEntry],
) -> Result<CheckedEntries> {
    if entries.len() != layout_desc.entries.len() {
        let (expected, found) = (layout_desc.entries.len() as u64, entries.len() as u64);
        return Err(RhiError::WrongCount { what: "entries", resource: format!("bind group {group}"), expected, found });
    }
    if !fits_pool(layout_desc) {
        return Err(RhiError::Unsupported(format!(
            "bind group {group} needs more descriptors of one kind than a pool of {SETS_PER_POOL} sets holds"
        )));
    }
    check_bind_group_entries(device, group, layout_desc, entries)
}

/// Writes checked entries into `set`, a set allocated with their layout
/// and not in use by the GPU.
pub(crate) fn write_descriptor_set(device: &crate::Device, set: vk::DescriptorSet, checked: &CheckedEntries) {
    let CheckedEntries { resolved, buffer_infos, image_infos, .. } = checked;
    let (mut bi, mut ii) = (0, 0);
    let writes: Vec<_> = resolved
        .iter()
        .map(|(binding, ty)| {
            let w = vk::WriteDescriptorSet::default().dst_set(set).dst_binding(*binding).descriptor_type(*ty);
            match *ty {
                vk::DescriptorType::UNIFORM_BUFFER | vk::DescriptorType::STORAGE_BUFFER => {
                    bi += 1;
                    w.buffer_info(std::slice::from_ref(&buffer_infos[bi - 1]))
                }
                _ => {
                    ii += 1;
                    w.image_info(std::slice::from_ref(&image_infos[ii - 1]))
                }
            }
        })
        .collect();
    // SAFETY: the set was just allocated (a frame's pool or the device's
    // persistent pools) and is not in use; every written handle was checked
    // live by check_bind_group_entries, and the caller's recording keeps
    // destroyed ones from being freed meanwhile.
    unsafe { device.raw.update_descriptor_sets(&writes, &[]) };
}

/// Checks every entry of a bind group against `layout` (each binding named
/// once, a live resource of the reflected kind with the usage that kind
/// needs, aligned buffer ranges within the limits) and resolves it into the
/// descriptor info to write; allocates nothing.
fn check_bind_group_entries(
    device: &crate::Device,
    group: u32,
    layout_desc: &BindGroupLayoutDesc,
    entries: &[BindGroupEntry],
) -> Result<CheckedEntries> {
    let limits = device.info();
    let mut buffer_infos = Vec::with_capacity(entries.len());
    let mut image_infos = Vec::with_capacity(entries.len());
    // Resolve and check every entry (nothing is allocated yet).
    let mut resolved = Vec::with_capacity(entries.len());
    let mut bound_buffers = Vec::new();
    {
        let buffers = read(&device.resources.buffers);
        let textures = read(&device.resources.textures);
        let samplers = read(&device.resources.samplers);
        for (i, (binding, resource)) in entries.iter().enumerate() {
            let Some(entry) = layout_desc.entries.iter().find(|e| e.binding == *binding) else {
                let resource = format!("bind group {group}'s layout");
                return Err(RhiError::NotFound { what: "binding", value: *binding, resource });
            };
            if entries[..i].iter().any(|(b, _)| b == binding) {
                return Err(RhiError::Duplicate { what: "binding", value: *binding, resource: format!("bind group {group}") });
            }
            let ty = descriptor_type(entry.ty);
            let invalid = |what: &str| RhiError::InvalidHandle(format!("binding {binding}: {what}"));
            let mismatch = || RhiError::BindingMismatch { group, binding: *binding, expected: entry.ty, found: *resource };
            let uniform = ty == vk::DescriptorType::UNIFORM_BUFFER;
            let (buffer_usage, align, max_range, needed_for) = if uniform {
                let max = u64::from(limits.max_uniform_buffer_range);
                (BufferUsage::UNIFORM, limits.min_uniform_buffer_offset_alignment, max, "a uniform buffer binding")
            } else {
                let max = u64::from(limits.max_storage_buffer_range);
                (BufferUsage::STORAGE, limits.min_storage_buffer_offset_alignment, max, "a storage buffer binding")
            };
            let buffer_range = |b: BufferHandle, offset: u64, size: u64| -> Result<vk::DescriptorBufferInfo> {
                let e = buffers.get(b).ok_or_else(|| invalid("buffer"))?;
                if !e.desc.usage.contains(buffer_usage) {
                    let (label, usage) = (e.desc.label.clone(), Usage::Buffer(buffer_usage));
                    return Err(RhiError::MissingUsage { label, usage, needed_for });
                }
                check_binding_range(&e.desc, (group, *binding), offset, size, (align, max_range))?;
                Ok(vk::DescriptorBufferInfo { buffer: e.raw, offset, range: size })
            };
            match (*resource, ty) {
                (BindingResource::Buffer(b), vk::DescriptorType::UNIFORM_BUFFER | vk::DescriptorType::STORAGE_BUFFER) => {
                    let size = buffers.get(b).ok_or_else(|| invalid("buffer"))?.desc.size;
                    buffer_infos.push(buffer_range(b, 0, size)?);
                    bound_buffers.push((b, writable(entry.ty)));
                }
                (
                    BindingResource::BufferRange { buffer, offset, size },
                    vk::DescriptorType::UNIFORM_BUFFER | vk::DescriptorType::STORAGE_BUFFER,
                ) => {
                    buffer_infos.push(buffer_range(buffer, offset, size)?);
                    bound_buffers.push((buffer, writable(entry.ty)));
                }
                (BindingResource::Texture(t), vk::DescriptorType::SAMPLED_IMAGE | vk::DescriptorType::STORAGE_IMAGE) => {
                    let e = textures.get(t).ok_or_else(|| invalid("texture"))?;
                    let layout = check_texture_entry(e, entry.ty, ty, (group, *binding))?;
                    image_infos.push(vk::DescriptorImageInfo { sampler: vk::Sampler::null(), image_view: e.view, image_layout: layout });
                }
                (BindingResource::Sampler(s), vk::DescriptorType::SAMPLER) => {
                    let e = samplers.get(s).ok_or_else(|| invalid("sampler"))?;
                    if e.desc.compare.is_some() != (entry.ty == BindingType::ComparisonSampler) {
                        return Err(mismatch());
                    }
                    image_infos.push(vk::DescriptorImageInfo {
                        sampler: e.raw,
                        image_view: vk::ImageView::null(),
                        image_layout: vk::ImageLayout::UNDEFINED,
                    });
                }
                _ => return Err(mismatch()),
            }
            resolved.push((*binding, ty));
        }
    }
    Ok(CheckedEntries { resolved, buffer_infos, image_infos, buffers: bound_buffers })
}

/// Whether a buffer bound as `ty` may be written by the shader.
fn writable(ty: BindingType) -> bool {
    matches!(ty, BindingType::StorageBuffer { read_only: false })
}

/// A texture bound at (`group`, `binding`) of type `binding_ty` as
/// descriptor `ty`: its usage, depth or colour format and dimension must
/// be the binding's. Returns the layout the descriptor names.
fn check_texture_entry(
    e: &crate::TextureEntry,
    binding_ty: BindingType,
    ty: vk::DescriptorType,
    (group, binding): (u32, u32),
) -> Result<vk::ImageLayout> {
    let storage = ty == vk::DescriptorType::STORAGE_IMAGE;
    let (usage, needed_for) =
        if storage { (TextureUsage::STORAGE, "a storage texture binding") } else { (TextureUsage::SAMPLED, "a sampled texture binding") };
    if !e.desc.usage.contains(usage) {
        let (label, usage) = (e.desc.label.clone(), Usage::Texture(usage));
        return Err(RhiError::MissingUsage { label, usage, needed_for });
    }
    let depth = binding_ty == BindingType::DepthTexture;
    if e.desc.format.is_depth() != depth {
        let resource = format!("texture {:?} (binding {binding} of bind group {group})", e.desc.label);
        let expected = if depth { "a depth format" } else { "a color format" };
        return Err(RhiError::WrongFormat { resource, format: e.desc.format, expected });
    }
    let cube = binding_ty == BindingType::SampledCubeTexture;
    if (e.desc.dimension == crate::TextureDimension::Cube) != cube {
        return Err(RhiError::InvalidDesc(format!(
            "texture {:?} is a {:?} texture; binding {binding} of bind group {group} takes a {}",
            e.desc.label,
            e.desc.dimension,
            if cube { "cube" } else { "2D texture" }
        )));
    }
    Ok(if storage { vk::ImageLayout::GENERAL } else { vk::ImageLayout::SHADER_READ_ONLY_OPTIMAL })
}

/// A bind group's checked entries: (binding, descriptor type) in the order
/// given, with the buffer and image infos of the buffer and image/sampler
/// entries in that same order.
pub(crate) struct CheckedEntries {
    resolved: Vec<(u32, vk::DescriptorType)>,
    buffer_infos: Vec<vk::DescriptorBufferInfo>,
    image_infos: Vec<vk::DescriptorImageInfo>,
    /// The buffers bound, each with whether the shader may write it
    /// (a `read_write` storage binding), for `buffer_uses`.
    pub(crate) buffers: Vec<(BufferHandle, bool)>,
}

impl CheckedEntries {
    /// Descriptors of each of [`POOL_SIZES`]' types the set takes from a pool.
    pub(crate) fn pool_use(&self) -> [u32; POOL_SIZES.len()] {
        POOL_SIZES.map(|(ty, _)| self.resolved.iter().filter(|(_, t)| *t == ty).count() as u32)
    }
}

/// Checks `size` bytes at `offset` of a buffer described by `desc` bound at
/// `(group, binding)`: not empty, at most `max_range`, the offset a multiple
/// of `align`, inside the buffer.
fn check_binding_range(desc: &BufferDesc, at: (u32, u32), offset: u64, size: u64, (align, max_range): (u64, u64)) -> Result<()> {
    let (group, binding) = at;
    let resource = || format!("binding {binding} of bind group {group} (buffer {:?})", desc.label);
    if size == 0 || size > max_range {
        return Err(RhiError::OutOfLimits { what: "bound range size", resource: resource(), value: size, min: 1, max: max_range });
    }
    if !offset.is_multiple_of(align) {
        return Err(RhiError::Misaligned { what: "offset", resource: resource(), value: offset, alignment: align });
    }
    if offset.checked_add(size).is_none_or(|end| end > desc.size) {
        let (resource, range) = (format!("buffer {:?}", desc.label), range_of(offset, size));
        return Err(RhiError::OutOfRange { what: "bound bytes", resource, range, limit: desc.size });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layout(n: u32, ty: BindingType) -> BindGroupLayoutDesc {
        BindGroupLayoutDesc { entries: (0..n).map(|binding| BindGroupLayoutEntry { binding, ty, stages: ShaderStages::COMPUTE }).collect() }
    }

    #[test]
    fn a_set_fits_a_pool_up_to_the_pools_size_of_each_kind() {
        assert!(fits_pool(&layout(SETS_PER_POOL / 4, BindingType::StorageTexture)));
        assert!(!fits_pool(&layout(SETS_PER_POOL / 4 + 1, BindingType::StorageTexture)));
        assert!(fits_pool(&layout(SETS_PER_POOL * 2, BindingType::UniformBuffer)));
        assert!(!fits_pool(&layout(SETS_PER_POOL * 2 + 1, BindingType::Sampler)));
    }
}
