//! Persistent bind groups: descriptor sets made once (a material instance's
//! textures, samplers and parameter slot) and bound in any number of frames
//! until destroyed, as UE caches a mesh draw command's shader bindings.
//!
//! They come from descriptor pools the device owns (made with
//! `FREE_DESCRIPTOR_SET`, a new one whenever every pool is full, kept until
//! shutdown) and are checked exactly as a frame's bind groups
//! ([`crate::Frame::create_bind_group`]). A group keeps the handles of the
//! resources it names; binding it ([`crate::CommandList::bind_group_handle`])
//! refuses a group any of whose resources was destroyed since, so a set
//! with a dead descriptor never reaches the GPU. Destroying a group frees
//! its set through the deletion queue, after the last submission that may
//! use it.

use crate::descriptor::{check_bind_group, write_descriptor_set, BindGroupEntry, BindingResource, POOL_SIZES, SETS_PER_POOL};
use crate::device::{read, write, Device, Recording, Retired};
use crate::error::{vk_err, Result, RhiError};
use crate::handle::Handle;
use crate::pipeline::PipelineHandle;
use crate::{BufferHandle, SamplerHandle, TextureHandle};
use ash::vk;
use std::sync::atomic::Ordering;
use std::sync::Mutex;

/// Handle to a persistent bind group ([`Device::create_bind_group`]).
pub type BindGroupHandle = Handle<PersistentBindGroup>;

#[doc(hidden)]
pub struct PersistentBindGroup {
    raw: vk::DescriptorSet,
    /// The device pool it was allocated from (freed back into it) and the
    /// descriptors it takes there.
    pool: vk::DescriptorPool,
    pool_use: PoolUse,
    /// The set layout it was allocated with: it binds only where that is the layout.
    pub(crate) layout: vk::DescriptorSetLayout,
    /// The resources it names, checked live at every bind; each buffer
    /// with whether a shader may write it (`buffer_uses`).
    buffers: Vec<(BufferHandle, bool)>,
    textures: Vec<TextureHandle>,
    samplers: Vec<SamplerHandle>,
}

impl PersistentBindGroup {
    pub(crate) fn raw(&self) -> vk::DescriptorSet {
        self.raw
    }

    /// The buffers it binds, each with whether a shader may write it.
    pub(crate) fn buffers(&self) -> &[(BufferHandle, bool)] {
        &self.buffers
    }

    pub(crate) fn destroy(self, device: &Device) {
        device.bind_group_pools.free(&device.raw, self.pool, self.raw, self.pool_use);
    }

    /// The first resource it names that is no longer alive, described.
    pub(crate) fn dead_resource(&self, device: &Device) -> Option<String> {
        if !self.buffers.is_empty() {
            let pool = read(&device.resources.buffers);
            if let Some((b, _)) = self.buffers.iter().find(|(b, _)| pool.get(*b).is_none()) {
                return Some(format!("buffer {b:?}"));
            }
        }
        if !self.textures.is_empty() {
            let pool = read(&device.resources.textures);
            if let Some(t) = self.textures.iter().find(|t| pool.get(**t).is_none()) {
                return Some(format!("texture {t:?}"));
            }
        }
        if !self.samplers.is_empty() {
            let pool = read(&device.resources.samplers);
            if let Some(s) = self.samplers.iter().find(|s| pool.get(**s).is_none()) {
                return Some(format!("sampler {s:?}"));
            }
        }
        None
    }
}

/// Descriptors of each of `POOL_SIZES`' types a set takes.
type PoolUse = [u32; POOL_SIZES.len()];

/// One of the device's pools, with what its live sets take from it. Pools
/// are filled to the sizes they were made with even where the driver would
/// give more (lavapipe never runs out), so growth is the same everywhere.
struct PersistentPool {
    raw: vk::DescriptorPool,
    sets: u32,
    descriptors: PoolUse,
}

impl PersistentPool {
    fn has_room(&self, need: &PoolUse) -> bool {
        self.sets < SETS_PER_POOL && POOL_SIZES.iter().zip(self.descriptors.iter().zip(need)).all(|((_, max), (used, n))| used + n <= *max)
    }
}

/// The device's pools for persistent bind groups.
#[derive(Default)]
pub(crate) struct PersistentPools {
    pools: Mutex<Vec<PersistentPool>>,
}

impl PersistentPools {
    /// Allocates a set of `layout` (taking `need`) from the newest pool with
    /// room, making a pool when none has (counted in the device's descriptor
    /// pools).
    fn allocate(&self, device: &Device, layout: vk::DescriptorSetLayout, need: PoolUse) -> Result<(vk::DescriptorPool, vk::DescriptorSet)> {
        let mut pools = self.pools.lock().unwrap_or_else(|p| p.into_inner());
        let layouts = [layout];
        let try_pool = |pool: &mut PersistentPool| {
            let info = vk::DescriptorSetAllocateInfo::default().descriptor_pool(pool.raw).set_layouts(&layouts);
            // SAFETY: the pools are used only under this lock.
            let set = unsafe { device.raw.allocate_descriptor_sets(&info) }.map(|sets| sets[0])?;
            pool.sets += 1;
            pool.descriptors.iter_mut().zip(&need).for_each(|(used, n)| *used += n);
            Ok::<_, vk::Result>((pool.raw, set))
        };
        for pool in pools.iter_mut().rev().filter(|p| p.has_room(&need)) {
            match try_pool(pool) {
                Ok(allocated) => return Ok(allocated),
                Err(vk::Result::ERROR_OUT_OF_POOL_MEMORY | vk::Result::ERROR_FRAGMENTED_POOL) => continue,
                Err(e) => return Err(vk_err("vkAllocateDescriptorSets")(e)),
            }
        }
        let sizes = POOL_SIZES.map(|(ty, descriptor_count)| vk::DescriptorPoolSize { ty, descriptor_count });
        let info = vk::DescriptorPoolCreateInfo::default()
            .flags(vk::DescriptorPoolCreateFlags::FREE_DESCRIPTOR_SET)
            .max_sets(SETS_PER_POOL)
            .pool_sizes(&sizes);
        // SAFETY: valid device and create info.
        let raw = unsafe { device.raw.create_descriptor_pool(&info, None) }.map_err(vk_err("vkCreateDescriptorPool"))?;
        device.pool_counts.descriptor.fetch_add(1, Ordering::Relaxed);
        pools.push(PersistentPool { raw, sets: 0, descriptors: [0; POOL_SIZES.len()] });
        let Some(pool) = pools.last_mut() else { unreachable!("pushed above") };
        match try_pool(pool) {
            Ok(allocated) => Ok(allocated),
            Err(vk::Result::ERROR_OUT_OF_POOL_MEMORY | vk::Result::ERROR_FRAGMENTED_POOL) => {
                Err(RhiError::Unsupported(format!("a bind group layout needs more descriptors than a pool of {SETS_PER_POOL} sets holds")))
            }
            Err(e) => Err(vk_err("vkAllocateDescriptorSets")(e)),
        }
    }

    /// Frees `set` (taking `used`) back into `pool` (its submissions have completed).
    fn free(&self, device: &ash::Device, pool: vk::DescriptorPool, set: vk::DescriptorSet, used: PoolUse) {
        let mut pools = self.pools.lock().unwrap_or_else(|p| p.into_inner());
        // SAFETY: the pool was made with FREE_DESCRIPTOR_SET and is used only
        // under this lock; no submitted work uses the set any more (deletion
        // queue or idle shutdown); it is freed once.
        if let Err(e) = unsafe { device.free_descriptor_sets(pool, &[set]) } {
            log::error!("freeing a bind group's descriptor set: {e}");
        }
        if let Some(p) = pools.iter_mut().find(|p| p.raw == pool) {
            p.sets = p.sets.saturating_sub(1);
            p.descriptors.iter_mut().zip(&used).for_each(|(u, n)| *u = u.saturating_sub(*n));
        }
    }

    /// Destroys every pool (shutdown, after every group was freed).
    pub(crate) fn destroy(&self, device: &ash::Device) {
        for pool in self.pools.lock().unwrap_or_else(|p| p.into_inner()).drain(..) {
            // SAFETY: shutdown after idle; its sets go with it.
            unsafe { device.destroy_descriptor_pool(pool.raw, None) };
        }
    }
}

impl Device {
    /// Creates a bind group for `group` of `pipeline`'s layout that lives
    /// until [`Self::destroy_bind_group`], for bindings made once and bound
    /// in many frames (a material instance's). The entries are checked as
    /// [`crate::Frame::create_bind_group`]'s are; a bad one is an error and
    /// nothing is allocated. It binds with
    /// [`crate::CommandList::bind_group_handle`] wherever the pipeline's
    /// layout has the same set layout at that index, and is refused there
    /// once any resource it names is destroyed.
    pub fn create_bind_group(&self, pipeline: PipelineHandle, group: u32, entries: &[BindGroupEntry]) -> Result<BindGroupHandle> {
        // A resource destroyed between the check and the write waits for
        // this "recording" (it may be written into the set).
        let _recording = Recording::begin(self);
        let (set_layout, checked) = check_bind_group(self, pipeline, group, entries)?;
        self.make_bind_group(set_layout, checked, entries)
    }

    /// Creates a bind group as [`Self::create_bind_group`] does, for a
    /// layout given as data rather than taken from a pipeline: one made for
    /// a set layout equal to a pipeline's group (as reflection derives it:
    /// the module's declarations, visible to every stage) binds wherever
    /// that pipeline's does. Lets a bind group be made before any pipeline
    /// that uses it exists (a material instance's, when it is created).
    pub fn create_bind_group_with_layout(
        &self,
        layout: &crate::BindGroupLayoutDesc,
        entries: &[BindGroupEntry],
    ) -> Result<BindGroupHandle> {
        let _recording = Recording::begin(self);
        let set_layout = self.layouts.set_layout(&self.raw, layout)?;
        let checked = crate::descriptor::check_entries_for_layout(self, 0, layout, entries)?;
        self.make_bind_group(set_layout, checked, entries)
    }

    fn make_bind_group(
        &self,
        set_layout: vk::DescriptorSetLayout,
        checked: crate::descriptor::CheckedEntries,
        entries: &[BindGroupEntry],
    ) -> Result<BindGroupHandle> {
        let pool_use = checked.pool_use();
        let (pool, raw) = self.bind_group_pools.allocate(self, set_layout, pool_use)?;
        write_descriptor_set(self, raw, &checked);
        let mut entry = PersistentBindGroup {
            raw,
            pool,
            pool_use,
            layout: set_layout,
            buffers: checked.buffers.clone(),
            textures: Vec::new(),
            samplers: Vec::new(),
        };
        for (_, resource) in entries {
            match *resource {
                BindingResource::Buffer(_) | BindingResource::BufferRange { .. } => {}
                BindingResource::Texture(t) => entry.textures.push(t),
                BindingResource::Sampler(s) => entry.samplers.push(s),
            }
        }
        Ok(write(&self.resources.bind_groups).insert(entry))
    }

    /// Destroys a persistent bind group once no submitted or recording work
    /// may use it. The handle is invalid from now on; destroying twice is a
    /// no-op.
    pub fn destroy_bind_group(&self, group: BindGroupHandle) {
        let entry = write(&self.resources.bind_groups).remove(group);
        if let Some(entry) = entry {
            self.retire(Retired::BindGroup(entry));
        }
    }
}
