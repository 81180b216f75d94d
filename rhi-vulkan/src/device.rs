//! The logical device (on the physical device `adapter.rs` picks): queues,
//! the allocator, the object pools behind every handle, submission and
//! shutdown.
//!
//! `Device` is `Send + Sync`: the render thread owns it and rayon tasks borrow
//! it to record secondary command buffers. Internal state sits behind small
//! locks, taken once per call, never per draw.

use crate::adapter::pick_physical_device;
use crate::bind_group::{PersistentBindGroup, PersistentPools};
use crate::buffer::BufferEntry;
use crate::command::CommandList;
use crate::deletion_queue::DeletionQueue;
use crate::descriptor::LayoutCache;
use crate::error::{vk_err, Result, RhiError};
use crate::frame::{FrameSlot, FrameSubmission};
use crate::handle::Pool;
use crate::instance::{Instance, ValidationCounters};
use crate::memory_budget::MemoryBudget;
use crate::pipeline::{PipelineCache, PipelineEntry};
use crate::sampler::SamplerEntry;
use crate::shader::ShaderEntry;
use crate::sync::Timeline;
use crate::texture::TextureEntry;
use crate::timestamp::{FrameTimestamps, Timestamps};
use ash::vk;
use gpu_allocator::vulkan::{Allocator, AllocatorCreateDesc};
use std::ffi::CString;
use std::mem::ManuallyDrop;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, RwLock, RwLockReadGuard, RwLockWriteGuard};

mod desc;

pub use desc::{DeviceCounts, DeviceDesc, DeviceFeatures, DeviceInfo};

/// Anything waiting in the deletion queue.
pub(crate) enum Retired {
    Buffer(BufferEntry),
    Texture(TextureEntry),
    Sampler(SamplerEntry),
    Shader(ShaderEntry),
    Pipeline(PipelineEntry),
    BindGroup(PersistentBindGroup),
}

pub(crate) struct Resources {
    pub buffers: RwLock<Pool<BufferEntry>>,
    pub textures: RwLock<Pool<TextureEntry>>,
    pub samplers: RwLock<Pool<SamplerEntry>>,
    pub shaders: RwLock<Pool<ShaderEntry>>,
    pub pipelines: RwLock<Pool<PipelineEntry>>,
    pub bind_groups: RwLock<Pool<PersistentBindGroup>>,
}

/// Command and descriptor pools alive, counted where they are made (they are
/// kept until shutdown).
#[derive(Default)]
pub(crate) struct PoolCounts {
    pub command: std::sync::atomic::AtomicUsize,
    /// Command buffers allocated from those pools (reset and reused, never freed).
    pub command_buffers: std::sync::atomic::AtomicUsize,
    pub descriptor: std::sync::atomic::AtomicUsize,
    /// Host writes that had to wait for a submission still using their buffer.
    pub host_write_waits: AtomicU64,
}

/// Tells devices apart, so objects recorded on one are refused by another.
static NEXT_DEVICE_ID: AtomicU64 = AtomicU64::new(1);

/// A command pool for `immediate` submissions, with the timeline value its
/// last submission signals (0: none pending).
struct ImmediatePool {
    raw: vk::CommandPool,
    /// The pool's command buffer, reused call after call (null: none yet).
    cmd: vk::CommandBuffer,
    /// Whether `cmd` is in the initial state (the pool was reset after its
    /// last submission completed); otherwise the next call allocates anew.
    ready: bool,
    pending: u64,
}

/// The Vulkan device and everything created from it.
pub struct Device {
    // Field order is not drop order: `Drop for Device` destroys explicitly.
    pub(crate) raw: ash::Device,
    id: u64,
    pub(crate) physical: vk::PhysicalDevice,
    queue: Mutex<vk::Queue>,
    #[cfg_attr(not(feature = "window"), allow(dead_code))]
    pub(crate) queue_family: u32,
    pub(crate) allocator: ManuallyDrop<Mutex<Allocator>>,
    pub(crate) resources: Resources,
    pub(crate) layouts: LayoutCache,
    /// The pools persistent bind groups are allocated from.
    pub(crate) bind_group_pools: PersistentPools,
    pub(crate) pipeline_cache: PipelineCache,
    pub(crate) timeline: Timeline,
    deletion: Mutex<DeletionQueue<Retired>>,
    pub(crate) frame_open: AtomicBool,
    pub(crate) frames: Vec<Mutex<FrameSlot>>,
    pub(crate) frame_counter: std::sync::atomic::AtomicU64,
    /// A timestamp query pool per frame slot (none without timestamps).
    pub(crate) timestamps: Timestamps,
    /// Idle pools for `immediate`; one is taken per call, so immediates on
    /// several threads (or nested) never share a pool.
    immediate_pools: Mutex<Vec<ImmediatePool>>,
    pub(crate) pool_counts: PoolCounts,
    destroyed: bool,
    /// Shutdown found the GPU still running past the wait timeout: the
    /// device, its memory and instance are leaked rather than destroyed.
    abandoned: bool,
    /// The size of the heap behind each memory type, by type index.
    memory_type_heap_sizes: Vec<u64>,
    /// Device-local bytes against the (emulated) budget; staged bytes.
    pub(crate) memory_budget: MemoryBudget,
    info: DeviceInfo,
    /// Whether VK_KHR_swapchain and the surface extensions are on.
    #[cfg(feature = "window")]
    presentable: bool,
    instance: ManuallyDrop<Instance>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

pub(crate) fn read<T>(m: &RwLock<T>) -> RwLockReadGuard<'_, T> {
    m.read().unwrap_or_else(|poisoned| poisoned.into_inner())
}

pub(crate) fn write<T>(m: &RwLock<T>) -> RwLockWriteGuard<'_, T> {
    m.write().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The memory allocator of a new device (leaks logged at shutdown).
fn create_allocator(instance: &Instance, raw: &ash::Device, physical: vk::PhysicalDevice) -> Result<Allocator> {
    let mut debug_settings = gpu_allocator::AllocatorDebugSettings::default();
    debug_settings.log_leaks_on_shutdown = true;
    Ok(Allocator::new(&AllocatorCreateDesc {
        instance: instance.raw.clone(),
        device: raw.clone(),
        physical_device: physical,
        debug_settings,
        buffer_device_address: false,
        allocation_sizes: gpu_allocator::AllocationSizes::default(),
    })?)
}

/// The largest device-local heap of `physical` (the emulated budget).
fn largest_device_local_heap(instance: &Instance, physical: vk::PhysicalDevice) -> u64 {
    // SAFETY: `physical` belongs to this instance.
    let memory = unsafe { instance.raw.get_physical_device_memory_properties(physical) };
    let heaps = memory.memory_heaps_as_slice();
    heaps.iter().filter(|h| h.flags.contains(vk::MemoryHeapFlags::DEVICE_LOCAL)).map(|h| h.size).max().unwrap_or(0)
}

/// The size of the heap each memory type of `physical` allocates from.
fn memory_type_heap_sizes(instance: &Instance, physical: vk::PhysicalDevice) -> Vec<u64> {
    // SAFETY: `physical` belongs to this instance.
    let memory = unsafe { instance.raw.get_physical_device_memory_properties(physical) };
    memory.memory_types_as_slice().iter().map(|t| memory.memory_heaps[t.heap_index as usize].size).collect()
}

impl Device {
    /// Creates an instance and a device on the best Vulkan 1.3 adapter.
    pub fn new(desc: &DeviceDesc) -> Result<Self> {
        let app_name = CString::new(desc.app_name.clone()).map_err(|_| RhiError::InvalidDesc("app_name contains a NUL byte".into()))?;
        if desc.frames_in_flight == 0 || desc.frames_in_flight > 8 {
            let (resource, value) = ("the DeviceDesc".into(), u64::from(desc.frames_in_flight));
            return Err(RhiError::OutOfLimits { what: "frames_in_flight", resource, value, min: 1, max: 8 });
        }
        #[cfg(feature = "window")]
        let (extra_instance, extra_device): (&[&std::ffi::CStr], &[*const std::ffi::c_char]) =
            if desc.surface_extensions.is_empty() { (&[], &[]) } else { (&desc.surface_extensions, &[ash::khr::swapchain::NAME.as_ptr()]) };
        #[cfg(not(feature = "window"))]
        let (extra_instance, extra_device): (&[&std::ffi::CStr], &[*const std::ffi::c_char]) = (&[], &[]);
        let instance = Instance::new(&app_name, desc.validation, extra_instance)?;
        let filter = desc.preferred_device.clone().or_else(|| std::env::var("PROXIMA_DEVICE").ok().filter(|s| !s.is_empty()));
        let (physical, queue_family, info) = pick_physical_device(&instance.raw, filter.as_deref())?;

        let mut info = info;
        info.features.timestamps &= desc.timestamps;
        info.features.texture_compression_bc &= desc.texture_compression_bc;
        let features = info.features;
        let raw = create_logical_device(&instance.raw, physical, queue_family, features, extra_device)?;
        // SAFETY: queue 0 of `queue_family` was requested above.
        let queue = unsafe { raw.get_device_queue(queue_family, 0) };

        let allocator = match create_allocator(&instance, &raw, physical) {
            Ok(a) => a,
            Err(e) => {
                // SAFETY: nothing else was created from the device yet.
                unsafe { raw.destroy_device(None) };
                return Err(e);
            }
        };
        let memory_type_heap_sizes = memory_type_heap_sizes(&instance, physical);
        let memory_budget =
            MemoryBudget::new(desc.emulate_discrete_gpu, desc.device_local_budget, largest_device_local_heap(&instance, physical));
        log::info!(
            "Vulkan device: {} ({}), validation {}{}; queue families {:?}",
            info.name,
            info.device_type,
            if instance.counters.enabled() { "on" } else { "off" },
            if desc.emulate_discrete_gpu { ", emulating a discrete GPU's memory" } else { "" },
            info.queue_families
        );
        // From here on the device owns everything: if a later step fails,
        // dropping it destroys what was made (null handles are no-ops).
        let mut device = Self {
            raw,
            id: NEXT_DEVICE_ID.fetch_add(1, Ordering::Relaxed),
            physical,
            queue: Mutex::new(queue),
            queue_family,
            allocator: ManuallyDrop::new(Mutex::new(allocator)),
            resources: Resources {
                buffers: Default::default(),
                textures: Default::default(),
                samplers: Default::default(),
                shaders: Default::default(),
                pipelines: Default::default(),
                bind_groups: Default::default(),
            },
            layouts: LayoutCache::default(),
            bind_group_pools: PersistentPools::default(),
            pipeline_cache: PipelineCache::default(),
            timeline: Timeline::null(),
            deletion: Mutex::new(DeletionQueue::default()),
            frame_open: AtomicBool::new(false),
            frames: Vec::new(),
            frame_counter: Default::default(),
            timestamps: Timestamps::new(info.timestamp_period_ns, info.timestamp_valid_bits),
            immediate_pools: Mutex::new(Vec::new()),
            pool_counts: PoolCounts::default(),
            destroyed: false,
            abandoned: false,
            memory_type_heap_sizes,
            memory_budget,
            info,
            #[cfg(feature = "window")]
            presentable: !desc.surface_extensions.is_empty(),
            instance: ManuallyDrop::new(instance),
        };
        device.timeline = Timeline::new(&device.raw, desc.gpu_wait_timeout)?;
        for _ in 0..desc.frames_in_flight {
            let slot = FrameSlot::new(&device.raw, queue_family)?;
            device.pool_counts.command.fetch_add(1, Ordering::Relaxed);
            device.pool_counts.command_buffers.fetch_add(1, Ordering::Relaxed);
            device.frames.push(Mutex::new(slot));
            if features.timestamps {
                device.timestamps.create(&device.raw, &device.allocator)?;
            }
        }
        Ok(device)
    }

    /// This device's identity (unique in the process): what a resource
    /// shared between devices (a mesh's render data) is checked against.
    pub fn id(&self) -> u64 {
        self.id
    }

    /// The raw `ash` device, for code that calls Vulkan directly (benchmarks
    /// measuring the unchecked floor, interop). Using it is `unsafe` in
    /// `ash`'s terms; objects made through it are the caller's to destroy.
    pub fn raw_device(&self) -> &ash::Device {
        &self.raw
    }

    pub(crate) fn instance_raw(&self) -> &ash::Instance {
        &self.instance.raw
    }

    #[cfg(feature = "window")]
    pub(crate) fn entry(&self) -> &ash::Entry {
        &self.instance.entry
    }

    /// Whether the device was created to present ([`DeviceDesc`]'s `surface_extensions`).
    #[cfg(feature = "window")]
    pub fn presentable(&self) -> bool {
        self.presentable
    }

    /// The largest heap behind the memory types in `type_bits`.
    pub(crate) fn largest_heap(&self, type_bits: u32) -> u64 {
        self.memory_type_heap_sizes.iter().enumerate().filter(|(i, _)| type_bits & (1 << i) != 0).map(|(_, &size)| size).max().unwrap_or(0)
    }

    /// What the chosen physical device is and its limits.
    pub fn info(&self) -> &DeviceInfo {
        &self.info
    }

    /// The device name, e.g. `llvmpipe (LLVM 15.0.6, 256 bits)`.
    pub fn name(&self) -> &str {
        &self.info.name
    }

    /// The optional features the device turned on.
    pub fn features(&self) -> DeviceFeatures {
        self.info.features
    }

    /// Whether the device treats memory as a discrete GPU has it
    /// ([`DeviceDesc::emulate_discrete_gpu`]).
    pub fn emulates_discrete_gpu(&self) -> bool {
        self.memory_budget.emulated()
    }

    /// Bytes uploaded through staging buffers so far (every write to
    /// `GpuOnly` memory and every texture upload).
    pub fn staging_upload_bytes(&self) -> u64 {
        self.memory_budget.staging_upload_bytes()
    }

    /// Device-local bytes allocated now (`GpuOnly` buffers and textures)
    /// and the budget they are held to (`u64::MAX` without the emulation).
    pub fn device_local_memory(&self) -> (u64, u64) {
        (self.memory_budget.device_local_bytes(), self.memory_budget.budget())
    }

    /// The validation layer's counters (shared; they outlive the device).
    pub fn validation(&self) -> Arc<ValidationCounters> {
        self.instance.counters.clone()
    }

    /// Frames the CPU may record ahead of the GPU (frame slots), as asked in
    /// [`DeviceDesc::frames_in_flight`].
    pub fn frames_in_flight(&self) -> usize {
        self.frames.len()
    }

    /// Live objects, pending deletions and pipeline-cache figures.
    pub fn counts(&self) -> DeviceCounts {
        DeviceCounts {
            buffers: read(&self.resources.buffers).len(),
            textures: read(&self.resources.textures).len(),
            samplers: read(&self.resources.samplers).len(),
            shaders: read(&self.resources.shaders).len(),
            pipelines: read(&self.resources.pipelines).len(),
            bind_groups: read(&self.resources.bind_groups).len(),
            pending_deletions: lock(&self.deletion).len(),
            layouts: self.layouts.len(),
            // Counted as they are made: an open frame holds its slot's lock.
            descriptor_pools: self.pool_counts.descriptor.load(Ordering::Relaxed),
            command_pools: self.pool_counts.command.load(Ordering::Relaxed),
            command_buffers: self.pool_counts.command_buffers.load(Ordering::Relaxed),
            query_pools: self.timestamps.slots.len(),
            allocations: lock(&self.allocator).generate_report().allocations.len(),
            pipeline_cache_hits: self.pipeline_cache.hits(),
            pipeline_cache_misses: self.pipeline_cache.misses(),
            host_write_waits: self.pool_counts.host_write_waits.load(Ordering::Relaxed),
        }
    }

    /// Whether the device is lost: a submission or wait answered
    /// `VK_ERROR_DEVICE_LOST` (or a wait timed out, see [`RhiError::DeviceLost`]),
    /// or [`Self::simulate_device_lost`] was called. A lost device stays
    /// lost: every later submission, wait, frame, immediate submission and
    /// present is [`RhiError::DeviceLost`]; destroying objects and shutting
    /// down still work and free everything.
    pub fn is_lost(&self) -> bool {
        self.timeline.is_lost()
    }

    /// Fault injection for tests: from now on the device behaves as lost
    /// ([`Self::is_lost`]) without the driver being asked — lavapipe, a CPU
    /// driver, cannot lose its device. Work already submitted still runs
    /// on the real device, and shutdown waits for it before destroying.
    #[doc(hidden)]
    pub fn simulate_device_lost(&self) {
        self.timeline.mark_lost();
    }

    /// Blocks until the GPU has finished everything submitted, then destroys
    /// what the deletion queue holds.
    pub fn wait_idle(&self) -> Result<()> {
        self.timeline.wait(&self.raw, self.timeline.last_submitted())?;
        self.collect_garbage()
    }

    /// Blocks until the submission that signalled `value` has finished.
    pub fn wait_for(&self, value: u64) -> Result<()> {
        self.timeline.wait(&self.raw, value)
    }

    /// The timeline value the GPU has reached.
    pub fn completed_value(&self) -> Result<u64> {
        self.timeline.completed(&self.raw)
    }

    /// The GPU timestamps of a submitted frame (see [`crate::CommandList::write_timestamp`]):
    /// waits until its GPU work has finished, then reads them, in
    /// milliseconds since its `frame begin`. `None` where the device has no
    /// timestamps ([`DeviceFeatures::timestamps`]). They can be read until
    /// the frame's slot is begun again (`frames_in_flight` frames later);
    /// after that, or for a frame that was not submitted, it is
    /// [`RhiError::InvalidState`].
    pub fn frame_timestamps(&self, submission: FrameSubmission) -> Result<Option<FrameTimestamps>> {
        if self.timestamps.slots.is_empty() {
            return Ok(None);
        }
        self.wait_for(submission.value)?;
        let slot = (submission.frame % self.timestamps.slots.len() as u64) as usize;
        self.timestamps.read(slot, submission.frame).map(Some)
    }

    /// Destroys the deletion queue's resources whose last use has finished.
    pub fn collect_garbage(&self) -> Result<()> {
        let completed = self.timeline.completed(&self.raw)?;
        let ready = lock(&self.deletion).collect(completed);
        for item in ready {
            self.destroy_now(item);
        }
        Ok(())
    }

    pub(crate) fn retire(&self, item: Retired) {
        let mut queue = lock(&self.deletion);
        queue.push(item, self.timeline.last_submitted());
    }

    /// A command buffer starts recording: resources destroyed until the
    /// matching [`Self::end_recording`] wait for its submission too. Call it
    /// before the recording looks up a handle.
    pub(crate) fn begin_recording(&self) {
        lock(&self.deletion).begin_recording();
    }

    /// The recording begun with [`Self::begin_recording`] was submitted or
    /// discarded.
    pub(crate) fn end_recording(&self) {
        let mut queue = lock(&self.deletion);
        queue.end_recording(self.timeline.last_submitted());
    }

    fn destroy_now(&self, item: Retired) {
        match item {
            Retired::Buffer(b) => b.destroy(self),
            Retired::Texture(t) => t.destroy(self),
            Retired::Sampler(s) => s.destroy(self),
            Retired::Shader(s) => s.destroy(self),
            Retired::Pipeline(p) => p.destroy(self),
            Retired::BindGroup(g) => g.destroy(self),
        }
    }

    /// Submits one primary command buffer, signalling the next timeline value.
    pub(crate) fn submit(&self, cmd: vk::CommandBuffer) -> Result<u64> {
        self.submit_with(cmd, &[], None)
    }

    /// [`Self::submit`] that also waits for `waits` and signals the binary
    /// semaphore `signal` (the swapchain's acquire and present semaphores).
    pub(crate) fn submit_with(
        &self,
        cmd: vk::CommandBuffer,
        waits: &[vk::SemaphoreSubmitInfo<'_>],
        signal: Option<vk::SemaphoreSubmitInfo<'_>>,
    ) -> Result<u64> {
        self.timeline.check_lost()?;
        let queue = lock(&self.queue);
        let value = self.timeline.next_value();
        let cmd_infos = [vk::CommandBufferSubmitInfo::default().command_buffer(cmd)];
        let signals = [
            vk::SemaphoreSubmitInfo::default().semaphore(self.timeline.raw).value(value).stage_mask(vk::PipelineStageFlags2::ALL_COMMANDS),
            signal.unwrap_or_default(),
        ];
        let signal_count = if signal.is_some() { 2 } else { 1 };
        let submit = vk::SubmitInfo2::default()
            .command_buffer_infos(&cmd_infos)
            .wait_semaphore_infos(waits)
            .signal_semaphore_infos(&signals[..signal_count]);
        // SAFETY: the queue is externally synchronized by the `queue` lock; the
        // command buffer is fully recorded and its resources are alive until
        // the timeline passes `value` (deletion queue).
        let submitted = unsafe { self.raw.queue_submit2(*queue, &[submit], vk::Fence::null()) };
        self.timeline.note(submitted.map_err(vk_err("vkQueueSubmit2")))?;
        self.timeline.mark_submitted(value);
        Ok(value)
    }

    /// Runs `f` with the queue, locked (for `vkQueuePresentKHR`).
    #[cfg(feature = "window")]
    pub(crate) fn with_queue<R>(&self, f: impl FnOnce(vk::Queue) -> R) -> R {
        f(*lock(&self.queue))
    }

    /// Records commands with `f`, submits them and waits for the GPU. For
    /// uploads, readbacks and set-up work outside the frame loop. Callable
    /// from any thread, also from inside another `immediate`: each call
    /// records into a command pool of its own. A render pass left open by
    /// `f` is an error and nothing is submitted.
    pub fn immediate<R>(&self, f: impl FnOnce(&mut CommandList<'_>) -> Result<R>) -> Result<R> {
        // A lost device runs nothing: `f` is not called.
        self.timeline.check_lost()?;
        let recording = Recording::begin(self);
        let taken = lock(&self.immediate_pools).pop();
        let mut pool = match taken {
            Some(p) => p,
            None => {
                let info =
                    vk::CommandPoolCreateInfo::default().queue_family_index(self.queue_family).flags(vk::CommandPoolCreateFlags::TRANSIENT);
                // SAFETY: valid device and create info.
                let raw = unsafe { self.raw.create_command_pool(&info, None) }.map_err(vk_err("vkCreateCommandPool"))?;
                self.pool_counts.command.fetch_add(1, Ordering::Relaxed);
                ImmediatePool { raw, cmd: vk::CommandBuffer::null(), ready: false, pending: 0 }
            }
        };
        let result = self.record_immediate(&mut pool, f);
        drop(recording);
        self.give_back_immediate_pool(pool);
        result
    }

    fn record_immediate<R>(&self, pool: &mut ImmediatePool, f: impl FnOnce(&mut CommandList<'_>) -> Result<R>) -> Result<R> {
        let cmd = if pool.ready {
            pool.cmd
        } else {
            // The first call, or the last submission may still be pending
            // (its buffer cannot be reused): a new buffer. Pools are reset,
            // not freed, so this happens once per pool outside failures.
            let alloc = vk::CommandBufferAllocateInfo::default()
                .command_pool(pool.raw)
                .level(vk::CommandBufferLevel::PRIMARY)
                .command_buffer_count(1);
            // SAFETY: this thread alone holds the pool (taken from the free list).
            let cmd = unsafe { self.raw.allocate_command_buffers(&alloc) }.map_err(vk_err("vkAllocateCommandBuffers"))?[0];
            self.pool_counts.command_buffers.fetch_add(1, Ordering::Relaxed);
            pool.cmd = cmd;
            cmd
        };
        pool.ready = false;
        let begin = vk::CommandBufferBeginInfo::default().flags(vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT);
        // SAFETY: a freshly allocated command buffer, or one its pool's reset
        // returned to the initial state.
        unsafe { self.raw.begin_command_buffer(cmd, &begin) }.map_err(vk_err("vkBeginCommandBuffer"))?;
        let mut list = CommandList::new(self, cmd, None, u64::MAX);
        let r = f(&mut list);
        if list.in_pass() {
            // Not ended, not submitted: the pool's reset discards it.
            r?;
            let found = list.pass_state();
            return Err(RhiError::WrongPass { command: "the end of Device::immediate", found, needed: crate::PassState::Outside });
        }
        // SAFETY: the buffer is in the recording state with no pass open.
        unsafe { self.raw.end_command_buffer(cmd) }.map_err(vk_err("vkEndCommandBuffer"))?;
        let r = r?;
        let value = self.submit(cmd)?;
        self.stamp_buffer_uses(&mut list.uses, value);
        // Until the wait succeeds the pool's buffer may be pending on the GPU.
        pool.pending = pool.pending.max(value);
        self.timeline.wait(&self.raw, value)?;
        pool.pending = 0;
        Ok(r)
    }

    /// Resets an immediate pool and keeps it for the next call. A pool whose
    /// submission may still be pending (a failed or timed-out wait) is kept
    /// without a reset: allocating from it stays valid, and a later call
    /// resets it once the GPU is past every submission made from it
    /// (`pending` only grows, as timeline values do).
    fn give_back_immediate_pool(&self, mut pool: ImmediatePool) {
        let done = pool.pending == 0 || self.timeline.completed(&self.raw).is_ok_and(|v| v >= pool.pending);
        if done {
            // SAFETY: nothing recorded from the pool is pending (checked) and
            // this thread alone holds it.
            if unsafe { self.raw.reset_command_pool(pool.raw, vk::CommandPoolResetFlags::empty()) }.is_ok() {
                pool.pending = 0;
                pool.ready = pool.cmd != vk::CommandBuffer::null();
            }
        }
        lock(&self.immediate_pools).push(pool);
    }

    /// Destroys every object, checks the allocator and returns the final
    /// figures. Dropping the device does the same without reporting.
    pub fn shutdown(mut self) -> ShutdownReport {
        let report = self.destroy_all();
        // Drop runs next and finds nothing left to do.
        report
    }

    fn destroy_all(&mut self) -> ShutdownReport {
        if self.destroyed {
            return ShutdownReport::default();
        }
        self.destroyed = true;
        if self.timeline.is_lost() {
            log::warn!("shutting down a lost device: its work in flight is abandoned");
        }
        // Bounded, lost or not: the GPU's work finishes within the wait
        // timeout (or the driver says the device is lost, when destroying
        // is allowed), or it is still running and nothing it may use can
        // be destroyed: the device's objects are abandoned instead.
        match self.timeline.wait_bounded(&self.raw, self.timeline.last_submitted()) {
            Ok(false) => {
                log::error!("the GPU did not finish its work within the wait timeout at shutdown: the device's objects are abandoned (leaked), not destroyed while in use");
                self.abandoned = true;
                let counters = self.instance.counters.clone();
                // Every allocation is abandoned with the device: all leak.
                let leaked = lock(&self.allocator).generate_report().allocations.len();
                return ShutdownReport {
                    leaked_allocations: leaked,
                    validation_errors: counters.errors(),
                    validation_warnings: counters.warnings(),
                };
            }
            Err(e) => log::warn!("waiting for the GPU at shutdown: {e}"),
            Ok(true) => {}
        }
        // Everything submitted has finished (or the device is lost): this
        // answers at once, covering presents' waits too.
        // SAFETY: shutting down; no other thread uses the device (we have `&mut self`).
        let _ = unsafe { self.raw.device_wait_idle() };
        let retired = lock(&self.deletion).drain_all();
        for item in retired {
            self.destroy_now(item);
        }
        let groups: Vec<_> = write(&self.resources.bind_groups).drain().collect();
        groups.into_iter().for_each(|g| g.destroy(self));
        self.bind_group_pools.destroy(&self.raw);
        let pipelines: Vec<_> = write(&self.resources.pipelines).drain().collect();
        pipelines.into_iter().for_each(|p| p.destroy(self));
        let shaders: Vec<_> = write(&self.resources.shaders).drain().collect();
        shaders.into_iter().for_each(|s| s.destroy(self));
        let samplers: Vec<_> = write(&self.resources.samplers).drain().collect();
        samplers.into_iter().for_each(|s| s.destroy(self));
        let textures: Vec<_> = write(&self.resources.textures).drain().collect();
        textures.into_iter().for_each(|t| t.destroy(self));
        let buffers: Vec<_> = write(&self.resources.buffers).drain().collect();
        buffers.into_iter().for_each(|b| b.destroy(self));
        self.layouts.destroy(&self.raw);
        for slot in self.frames.drain(..) {
            let slot = slot.into_inner().unwrap_or_else(|p| p.into_inner());
            slot.destroy(&self.raw);
        }
        self.timestamps.destroy(&self.raw, &self.allocator);
        for pool in lock(&self.immediate_pools).drain(..) {
            // SAFETY: the device is idle; the pool's command buffers have all completed.
            unsafe { self.raw.destroy_command_pool(pool.raw, None) };
        }
        self.timeline.destroy(&self.raw);
        let leaked = lock(&self.allocator).generate_report().allocations.len();
        let counters = self.instance.counters.clone();
        ShutdownReport { leaked_allocations: leaked, validation_errors: counters.errors(), validation_warnings: counters.warnings() }
    }
}

/// Marks an open recording on the device's deletion queue for as long as it
/// lives (see `deletion_queue.rs`): ends it on every path, panics included.
pub(crate) struct Recording<'d>(&'d Device);

impl<'d> Recording<'d> {
    pub(crate) fn begin(device: &'d Device) -> Self {
        device.begin_recording();
        Self(device)
    }
}

impl Drop for Recording<'_> {
    fn drop(&mut self) {
        self.0.end_recording();
    }
}

/// What [`Device::shutdown`] found.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ShutdownReport {
    /// gpu-allocator allocations still alive after every object was
    /// destroyed (after a GPU that did not finish, every allocation: the
    /// device's objects were abandoned, not destroyed).
    pub leaked_allocations: usize,
    /// Errors the validation layer reported over the device's life.
    pub validation_errors: u64,
    /// Warnings the validation layer reported over the device's life.
    pub validation_warnings: u64,
}

impl Drop for Device {
    fn drop(&mut self) {
        self.destroy_all();
        if self.abandoned {
            // The GPU may still run work that uses the memory, the device
            // and the instance: they are leaked, never freed under it.
            return;
        }
        // SAFETY: the allocator must go before the device (it frees its memory
        // blocks through it); it is dropped exactly once, here.
        unsafe { ManuallyDrop::drop(&mut self.allocator) };
        // SAFETY: every object created from the device was destroyed above.
        unsafe { self.raw.destroy_device(None) };
        // SAFETY: the device is gone; the instance (and messenger) go last.
        unsafe { ManuallyDrop::drop(&mut self.instance) };
    }
}

/// `vkCreateDevice` with the features Proxima needs (1.1 draw parameters,
/// 1.2 timeline semaphores, 1.3 dynamic rendering and synchronization2) and
/// the optional ones the adapter has, one graphics+compute queue.
fn create_logical_device(
    instance: &ash::Instance,
    physical: vk::PhysicalDevice,
    queue_family: u32,
    features: DeviceFeatures,
    extensions: &[*const std::ffi::c_char],
) -> Result<ash::Device> {
    let mut f11 = vk::PhysicalDeviceVulkan11Features::default().shader_draw_parameters(true);
    let mut f12 = vk::PhysicalDeviceVulkan12Features::default().timeline_semaphore(true);
    let mut f13 = vk::PhysicalDeviceVulkan13Features::default().dynamic_rendering(true).synchronization2(true);
    let base = vk::PhysicalDeviceFeatures::default()
        .fill_mode_non_solid(features.wireframe)
        .multi_draw_indirect(features.multi_draw_indirect)
        .draw_indirect_first_instance(features.draw_indirect_first_instance)
        .depth_clamp(features.depth_clamp)
        .robust_buffer_access(features.robust_buffer_access)
        .sampler_anisotropy(features.sampler_anisotropy)
        .texture_compression_bc(features.texture_compression_bc);
    let priorities = [1.0f32];
    let queue_infos = [vk::DeviceQueueCreateInfo::default().queue_family_index(queue_family).queue_priorities(&priorities)];
    let create_info = vk::DeviceCreateInfo::default()
        .queue_create_infos(&queue_infos)
        .enabled_extension_names(extensions)
        .enabled_features(&base)
        .push_next(&mut f11)
        .push_next(&mut f12)
        .push_next(&mut f13);
    // SAFETY: `physical` belongs to this instance; every pointer in
    // `create_info` refers to locals (or the caller's extension names) that
    // outlive the call.
    unsafe { instance.create_device(physical, &create_info, None) }.map_err(vk_err("vkCreateDevice"))
}
