//! # rhi-vulkan
//!
//! Proxima's render hardware interface: a safe Rust API over Vulkan 1.3
//! (through `ash`), GPU memory (through `gpu-allocator`) and WGSL shaders
//! (through `naga`). The renderer above it never touches `ash`.
//!
//! ## What it promises
//! - Objects are named by generational [`Handle`]s (`Copy + Hash + Eq`, usable
//!   across threads and inside draw commands); a stale handle is an error, never
//!   another object.
//! - Descriptions (`*Desc`) are plain data; bad ones are [`RhiError`]s, not panics.
//! - A destroyed resource lives until the GPU has finished every submission that
//!   may use it (a deletion queue keyed by the queue's timeline semaphore).
//!   That covers every recording — frames, [`Device::immediate`] submissions
//!   (uploads, read-backs) and presents — on any thread: while one is being
//!   recorded, destroyed resources wait for its submission too.
//! - Every command checks the command list's recording state before it
//!   reaches Vulkan: a pass open (or not) as the command needs, a pipeline
//!   for the pass's attachment formats bound, every bind group of its layout
//!   bound with a compatible layout, every vertex stream bound and the draw's
//!   vertex, instance, index and indirect ranges inside the bound buffers,
//!   push constants written, viewport and scissor set; offsets and sizes with
//!   checked arithmetic. Misuse is [`RhiError::InvalidState`] (wrong order)
//!   or [`RhiError::InvalidDesc`] (bad arguments), and nothing is recorded.
//!   The checks cost a few branches per draw (`cargo xtask bench` measures
//!   them against raw `ash` calls).
//! - Bind groups check their entries against the layout (each binding once,
//!   the usage its kind needs, offset alignment and range limits); pipeline
//!   layouts are checked against the device's per-stage limits.
//! - Bind groups, secondaries and swapchains carry their device and are
//!   refused by another one. Handles carry no device tag: a handle of one
//!   device used with another names one of its objects or none, which is
//!   wrong but never unsound.
//! - `robustBufferAccess` is on wherever the device has it, so an index
//!   buffer's *contents* (which the RHI cannot check) cannot read outside a
//!   vertex buffer.
//! - Dropping the [`Device`] destroys every object before the device itself
//!   (also when creating it fails half-way); [`Device::shutdown`] reports
//!   leaked allocations (zero when the RHI's bookkeeping is right) and the
//!   validation counts.
//! - GPU timestamps: each frame slot has a timestamp query pool; a frame's
//!   primary begins and ends with a timestamp, [`CommandList::write_timestamp`]
//!   adds labelled ones and [`Device::frame_timestamps`] reads them in
//!   milliseconds once the frame's GPU work is done (`None` on a device
//!   without timestamps).
//! - Faults are typed errors, not aborts: out of memory is
//!   [`RhiError::OutOfDeviceMemory`] / [`RhiError::OutOfHostMemory`], a
//!   missing loader or driver names the package to install, and a lost
//!   device is [`RhiError::DeviceLost`] — and stays lost ([`Device::is_lost`]):
//!   once a submission, wait or present has answered `VK_ERROR_DEVICE_LOST`
//!   (or a wait timed out), every later submission, wait, frame begin and
//!   submit, [`Device::immediate`] and present is `DeviceLost` without the
//!   driver being asked, while destroying objects and shutting down still
//!   free everything. Tests inject it with `Device::simulate_device_lost`
//!   (`tests/faults.rs`).
//! - In debug builds and tests the Khronos validation layer is on when
//!   installed, with synchronization validation; [`ValidationCounters`] lets a
//!   test assert that it reported nothing.
//!
//! ## What the caller upholds
//! - Barriers: textures and buffers move between [`TextureState`]s /
//!   [`BufferState`]s by explicit barriers that name both states (the RHI
//!   does not track the state a texture is in; a wrong `from` state is
//!   reported by the validation layer, not by the RHI).
//! - Host-visible buffers written with [`Device::write_buffer`] must not be in
//!   use by a frame in flight (ring them per frame); GPU-only buffers go
//!   through staging and are always safe.
//! - One [`Frame`] is open at a time; secondaries may be recorded from many
//!   threads at once ([`Frame::record_secondary`]), and [`Device::immediate`]
//!   may be called from any thread, also from inside another.

//! ## Windows
//! With the `window` feature (off by default), [`DeviceDesc`]'s
//! `surface_extensions` (from `surface_instance_extensions(display)`) makes a
//! device that can present, and `Swapchain` blits a texture to a window and
//! presents it. It takes the window as an `Arc<dyn WindowSource>` (e.g.
//! `Arc<winit::window::Window>`) and keeps it until it is destroyed, so the
//! window cannot go before its surface. A `Swapchain` must be destroyed with
//! `Swapchain::destroy` (with its own device) before its device goes.
//!
//! ## A frame
//! ```no_run
//! use rhi_vulkan::*;
//! # fn main() -> Result<(), RhiError> {
//! let device = Device::new(&DeviceDesc::default())?;
//! let target = device.create_texture(&TextureDesc::render_target("color", 64, 64, Format::Rgba8Unorm))?;
//! let mut frame = device.begin_frame()?;
//! let cmd = frame.cmd();
//! cmd.texture_barrier(target, TextureState::Undefined, TextureState::ColorAttachment)?;
//! cmd.begin_rendering(&RenderingDesc {
//!     color: vec![ColorAttachment { texture: target, load: LoadOp::Clear([0.1, 0.2, 0.3, 1.0]), store: true }],
//!     depth: None,
//!     area: Rect::from_size(64, 64),
//! }, RenderingContents::Inline)?;
//! cmd.end_rendering();
//! frame.submit()?;
//! let image = device.read_texture(target, TextureState::ColorAttachment)?;
//! assert_eq!(image.pixel(0, 0), [26, 51, 77, 255]);
//! # Ok(()) }
//! ```

mod adapter;
mod bind_group;
mod buffer;
mod command;
mod conv;
mod deletion_queue;
mod descriptor;
mod device;
mod error;
mod frame;
mod handle;
mod instance;
mod pipeline;
mod quad_grid;
mod readback;
mod sampler;
mod shader;
#[cfg(feature = "window")]
mod swapchain;
mod sync;
mod texture;
mod timestamp;
mod types;

pub use bind_group::{BindGroupHandle, PersistentBindGroup};
pub use buffer::{BufferDesc, BufferEntry, BufferHandle};
pub use command::{
    ColorAttachment, CommandList, DepthAttachment, LoadOp, RenderingContents, RenderingDesc, MAX_BIND_GROUPS,
    MAX_VERTEX_STREAMS,
};
pub use descriptor::{BindGroup, BindGroupEntry, BindGroupLayoutDesc, BindGroupLayoutEntry, BindingResource};
pub use device::{Device, DeviceCounts, DeviceDesc, DeviceFeatures, DeviceInfo, ShutdownReport};
pub use error::{Result, RhiError, ShaderError};
pub use frame::{Frame, FrameSubmission, RenderingLayout, SecondaryCommandBuffer, MAX_COLOR_ATTACHMENTS};
pub use handle::Handle;
pub use instance::{Validation, ValidationCounters};
pub use pipeline::{
    ColorTargetState, ComputePipelineDesc, DepthBias, DepthState, GraphicsPipelineDesc, PipelineEntry,
    PipelineHandle, PrimitiveState, ShaderStageDesc, VertexAttribute, VertexBufferLayout, VertexStepMode,
};
pub use quad_grid::{QuadGrid, QUAD_GRID_WGSL};
pub use readback::Image;
pub use sampler::{SamplerDesc, SamplerEntry, SamplerHandle};
pub use shader::{
    compile_wgsl, BindingType, CompiledShader, EntryPointReflection, ReflectedBinding, ShaderEntry,
    ShaderHandle, VertexInput,
};
#[cfg(feature = "window")]
pub use swapchain::{surface_instance_extensions, Swapchain, WindowSource};
/// The raw-window-handle version the `window` feature speaks.
#[cfg(feature = "window")]
pub use raw_window_handle;
pub use texture::{TextureData, TextureDesc, TextureEntry, TextureHandle};
pub use timestamp::{FrameTimestamps, FRAME_BEGIN, FRAME_END, MAX_TIMESTAMPS_PER_FRAME};
pub use types::*;
