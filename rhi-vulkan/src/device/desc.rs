//! What a [`Device`](super::Device) is asked for ([`DeviceDesc`]) and what it reports:
//! the optional features it turned on, the adapter's limits and queue
//! families ([`DeviceInfo`]) and its live objects ([`DeviceCounts`]).

use crate::instance::Validation;
use crate::memory_budget::emulation_from_env;

/// How to create a [`Device`](super::Device).
#[derive(Clone, Debug)]
pub struct DeviceDesc {
    /// The application name given to Vulkan (`VkApplicationInfo`).
    pub app_name: String,
    /// Whether to load the Khronos validation layer.
    pub validation: Validation,
    /// Frames the CPU may record ahead of the GPU (default 2).
    pub frames_in_flight: u32,
    /// A substring of the device name to pick; `None` reads `PROXIMA_DEVICE`.
    pub preferred_device: Option<String>,
    /// Instance extensions for presenting to a window, from
    /// [`crate::surface_instance_extensions`]. When non-empty the device also
    /// enables `VK_KHR_swapchain` (and creation fails if it cannot).
    #[cfg(feature = "window")]
    pub surface_extensions: Vec<&'static std::ffi::CStr>,
    /// GPU timestamps (a query pool per frame slot; see
    /// [`Device::frame_timestamps`](super::Device::frame_timestamps)) where the device has them (default on).
    /// Off, or on a device without them, nothing is recorded and the results
    /// are `None`.
    pub timestamps: bool,
    /// `textureCompressionBC` (block-compressed [`crate::Format`]s) where
    /// the device has it (default on). Off, the device is made without it,
    /// as one that lacks it: BC textures are [`crate::RhiError::Unsupported`]
    /// (tests of the paths that decode BCn on the CPU instead).
    pub texture_compression_bc: bool,
    /// The longest any CPU wait on the GPU may take (default 120 s): a
    /// frame, a read-back, an upload, shutdown. Past it the wait is
    /// [`crate::RhiError::DeviceLost`] and the device stays lost (a GPU
    /// that never finishes — a pixel shader that runs for minutes — does
    /// not hang the CPU). Shutdown waits at most this long too, then
    /// abandons the device's objects rather than destroying what the GPU
    /// may still use (a leak, logged, instead of a hang).
    pub gpu_wait_timeout: std::time::Duration,
    /// Treat memory as a discrete GPU has it, whatever the device
    /// (default: `PROXIMA_EMULATE_DISCRETE_GPU=1`): device-local
    /// allocations are held to a budget from the reported heaps
    /// (`PROXIMA_DEVICE_LOCAL_BUDGET_MB` overrides it), one past it is
    /// [`crate::RhiError::OutOfDeviceMemory`] before the driver is asked.
    /// `GpuOnly` memory is never mapped and always written and read
    /// through staging copies, emulated or not.
    pub emulate_discrete_gpu: bool,
    /// The emulated device-local budget in bytes (`None`: from
    /// `PROXIMA_DEVICE_LOCAL_BUDGET_MB`, else the largest device-local
    /// heap). Only with [`Self::emulate_discrete_gpu`].
    pub device_local_budget: Option<u64>,
}

impl Default for DeviceDesc {
    fn default() -> Self {
        Self {
            app_name: "proxima".into(),
            validation: Validation::Auto,
            frames_in_flight: 2,
            preferred_device: None,
            #[cfg(feature = "window")]
            surface_extensions: Vec::new(),
            timestamps: true,
            texture_compression_bc: true,
            gpu_wait_timeout: crate::sync::DEFAULT_WAIT_TIMEOUT,
            emulate_discrete_gpu: emulation_from_env(),
            device_local_budget: None,
        }
    }
}

/// Optional features the device turned on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DeviceFeatures {
    /// `fillModeNonSolid`: [`crate::PolygonMode::Line`] pipelines.
    pub wireframe: bool,
    /// `multiDrawIndirect`: an indirect draw may read more than one command
    /// ([`crate::CommandList::draw_indexed_indirect`] with a count above 1).
    pub multi_draw_indirect: bool,
    /// `drawIndirectFirstInstance`: indirect commands may start at an
    /// instance other than 0.
    pub draw_indirect_first_instance: bool,
    /// `depthClamp`: depth may be clamped instead of clipped.
    pub depth_clamp: bool,
    /// `robustBufferAccess`: out-of-range buffer reads in shaders and vertex
    /// fetches (an index buffer's *contents* are not checked by the RHI) are
    /// defined. On wherever the device has it, as wgpu does.
    pub robust_buffer_access: bool,
    /// GPU timestamps: the queue family has `timestampValidBits` > 0, the
    /// device a `timestampPeriod` and [`DeviceDesc`]'s `timestamps` is on.
    pub timestamps: bool,
    /// `samplerAnisotropy`: samplers filter anisotropically
    /// ([`crate::SamplerDesc::max_anisotropy`]). On wherever the device has
    /// it, except on CPU devices: lavapipe's anisotropic filtering (Mesa
    /// 22.3) costs far more than trilinear and picks the smallest mips on
    /// quads at triangle edges.
    pub sampler_anisotropy: bool,
    /// `textureCompressionBC`: the block-compressed formats
    /// ([`crate::Format::is_block_compressed`]: BC1, BC3, BC4, BC5, BC7) can
    /// be sampled ([`crate::Device::supports_sampled_format`]). On wherever
    /// the device has it and [`DeviceDesc`]'s `texture_compression_bc` is on.
    pub texture_compression_bc: bool,
}

/// What the chosen physical device is.
#[derive(Clone, Debug)]
pub struct DeviceInfo {
    /// The driver's name for the device, e.g. `llvmpipe (LLVM 15.0.6, 256 bits)`.
    pub name: String,
    /// `discrete GPU`, `integrated GPU`, `virtual GPU`, `CPU` or `other`.
    pub device_type: String,
    /// The Vulkan version the device supports (major, minor, patch).
    pub api_version: (u32, u32, u32),
    /// The largest push-constant block, in bytes (`maxPushConstantsSize`).
    pub max_push_constants_size: u32,
    /// The largest storage-buffer binding, in bytes (`maxStorageBufferRange`).
    pub max_storage_buffer_range: u32,
    /// The largest uniform-buffer binding (`maxUniformBufferRange`).
    pub max_uniform_buffer_range: u32,
    /// Offsets of uniform / storage buffer bindings are multiples of these.
    pub min_uniform_buffer_offset_alignment: u64,
    /// Storage buffer binding offsets are multiples of this (at least 1).
    pub min_storage_buffer_offset_alignment: u64,
    /// The largest dispatch, in work groups per dimension.
    pub max_compute_work_group_count: [u32; 3],
    /// The largest viewport (and scissor) width and height.
    pub max_viewport_dimensions: [u32; 2],
    /// The largest 2D texture width or height (`maxImageDimension2D`).
    pub max_image_dimension_2d: u32,
    /// The most anisotropic samples a sampler may take (`maxSamplerAnisotropy`;
    /// used only with [`DeviceFeatures::sampler_anisotropy`]).
    pub max_sampler_anisotropy: f32,
    /// Descriptors of each kind one shader stage may see (`maxPerStageDescriptor*`).
    pub max_per_stage_uniform_buffers: u32,
    /// Storage buffers one shader stage may see.
    pub max_per_stage_storage_buffers: u32,
    /// Sampled textures one shader stage may see.
    pub max_per_stage_sampled_images: u32,
    /// Storage textures one shader stage may see.
    pub max_per_stage_storage_images: u32,
    /// Samplers one shader stage may see.
    pub max_per_stage_samplers: u32,
    /// Bind groups a pipeline layout may have (`maxBoundDescriptorSets`).
    pub max_bound_descriptor_sets: u32,
    /// The largest buffer `create_buffer` accepts (`maxBufferSize`).
    pub max_buffer_size: u64,
    /// The largest single allocation the driver promises (`maxMemoryAllocationSize`).
    pub max_memory_allocation_size: u64,
    /// Sizes of the memory heaps, in bytes, by heap index.
    pub memory_heaps: Vec<u64>,
    /// Nanoseconds per timestamp tick (`timestampPeriod`).
    pub timestamp_period_ns: f32,
    /// The bits of the queue family's timestamps that count
    /// (`timestampValidBits`; 0: none); `timestampComputeAndGraphics` says
    /// every graphics and compute queue has them.
    pub timestamp_valid_bits: u32,
    /// `timestampComputeAndGraphics`.
    pub timestamp_compute_and_graphics: bool,
    /// The optional features the device turned on.
    pub features: DeviceFeatures,
    /// The queue families it offers, as a discrete GPU offers them; every
    /// submission goes to `graphics` (no ownership transfers: uploads are
    /// recorded on the graphics queue; the other families are reported).
    pub queue_families: crate::adapter::QueueFamilies,
}

/// Counts of live objects and cache figures, for tests and stats.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DeviceCounts {
    /// Live buffers (not counting those waiting in the deletion queue).
    pub buffers: usize,
    /// Live textures.
    pub textures: usize,
    /// Live samplers.
    pub samplers: usize,
    /// Live shader modules.
    pub shaders: usize,
    /// Live pipelines (cached until [`Device::destroy_pipeline`](super::Device::destroy_pipeline) or shutdown).
    pub pipelines: usize,
    /// Persistent bind groups ([`Device::create_bind_group`](super::Device::create_bind_group)).
    pub bind_groups: usize,
    /// Objects destroyed by the caller that wait in the deletion queue for the
    /// GPU to finish with them.
    pub pending_deletions: usize,
    /// Descriptor set and pipeline layouts (cached by value, kept until shutdown).
    pub layouts: usize,
    /// Descriptor pools of every frame slot, and the device's pools for
    /// persistent bind groups (kept until shutdown).
    pub descriptor_pools: usize,
    /// Command pools: frame slots' primary and recorder pools, and the
    /// pools kept for `immediate` submissions.
    pub command_pools: usize,
    /// Command buffers allocated from those pools (each reset and reused).
    pub command_buffers: usize,
    /// Timestamp query pools: one per frame slot where the device has
    /// timestamps, made with the device and kept until shutdown.
    pub query_pools: usize,
    /// Live gpu-allocator allocations.
    pub allocations: usize,
    /// Pipeline requests answered from the cache (an equal description was
    /// created before).
    pub pipeline_cache_hits: u64,
    /// Pipeline requests that created a pipeline.
    pub pipeline_cache_misses: u64,
    /// Host writes to a host-visible buffer ([`Device::write_buffer`](super::Device::write_buffer))
    /// that waited for a submission still using it (`buffer_uses`): 0 for
    /// a renderer whose per-frame data has a buffer per frame slot.
    pub host_write_waits: u64,
}
