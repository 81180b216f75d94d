//! The RHI's error type and the named conversions from `vk::Result`.
//!
//! Misuse the RHI refuses comes out as a variant that carries the data a
//! caller acts on (the range and the limit, the usage missing, the pass
//! state found and the one needed, the format), in the manner of wgpu-core's
//! `DrawError::VertexBeyondLimit { last_vertex, vertex_limit, slot }`; tests
//! match those variants and their fields. [`RhiError::InvalidDesc`] and
//! [`RhiError::InvalidState`] keep the rare, one-off descriptions.

use crate::types::{BufferUsage, Format, TextureState, TextureUsage};
use crate::{BindingResource, BindingType};
use ash::vk;
use std::ops::Range;

/// Where in a WGSL source a shader error was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShaderError {
    /// The file (or label) the source came from.
    pub file: String,
    /// 1-based line, 0 when naga gave no location.
    pub line: u32,
    /// 1-based column in bytes, 0 when naga gave no location.
    pub column: u32,
    /// naga's message, with its rendered snippet.
    pub message: String,
}

impl std::fmt::Display for ShaderError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}:{}: {}", self.file, self.line, self.column, self.message)
    }
}

/// Everything the RHI can fail with. Bad descriptions are errors, not panics.
#[derive(Debug, thiserror::Error)]
pub enum RhiError {
    /// The Vulkan loader (`libvulkan.so.1`, or `PROXIMA_VULKAN_LOADER`) could not be loaded.
    #[error("the Vulkan loader could not be loaded ({reason}); install `libvulkan1` and a driver such as `mesa-vulkan-drivers` (lavapipe), or run `cargo xtask test`, which installs them")]
    LoaderNotFound {
        /// Why loading failed (the loader's error).
        reason: String,
    },
    /// The loader found no Vulkan driver (ICD) at all.
    #[error("the Vulkan loader found no driver ({detail}); install `mesa-vulkan-drivers` (lavapipe, a CPU driver) or your GPU's Vulkan driver, or run `cargo xtask test`, which installs it")]
    DriverNotFound {
        /// What the loader said.
        detail: String,
    },
    /// No physical device offers Vulkan 1.3 with dynamic rendering and synchronization2.
    #[error("no Vulkan 1.3 device with dynamic rendering and synchronization2{filter} (found: {found:?}); install `mesa-vulkan-drivers` for the lavapipe CPU driver")]
    NoSuitableDevice {
        /// The names of the devices that were found.
        found: Vec<String>,
        /// ` matching PROXIMA_DEVICE="..."` when a device filter was given,
        /// else empty.
        filter: String,
    },
    /// Device memory ran out (`VK_ERROR_OUT_OF_DEVICE_MEMORY`, or an
    /// allocation larger than any heap that could hold it).
    #[error("out of device memory")]
    OutOfDeviceMemory,
    /// Host memory ran out (`VK_ERROR_OUT_OF_HOST_MEMORY`).
    #[error("out of host memory")]
    OutOfHostMemory,
    /// The device was lost (`VK_ERROR_DEVICE_LOST`, or a wait timed out);
    /// the device stays lost ([`crate::Device::is_lost`]).
    #[error("the Vulkan device was lost")]
    DeviceLost,
    /// The device lacks a feature, format or usage the call needs.
    #[error("unsupported: {0}")]
    Unsupported(String),
    /// WGSL that naga rejected, with where and why.
    #[error("shader error at {0}")]
    Shader(Box<ShaderError>),
    /// Elements, bytes or indices `range` of something that has `limit` of
    /// them: a write past a buffer's end, a draw past its bound vertex
    /// stream, a copy past its buffer, a mip level or bind group index past
    /// the last. Nothing was created, written or recorded.
    #[error("{what} {} out of range: {resource} has {limit}", span(.range))]
    OutOfRange {
        /// What the range counts (`"bytes"`, `"vertices"`, `"instances"`,
        /// `"indices"`, `"mip level"`, `"bind group"`…).
        what: &'static str,
        /// What holds them, by label or place (`buffer "instances"`,
        /// `vertex stream 1`, `texture "albedo"`).
        resource: String,
        /// The range asked for (one element for an index); its end
        /// saturates at `u64::MAX`.
        range: Range<u64>,
        /// How many `resource` has: `range` must end at or before it.
        limit: u64,
    },
    /// A size, count or extent outside what the RHI or the device allows
    /// (`min..=max`): a zero-sized buffer or one over `maxBufferSize`, more
    /// mip levels than the extent has, more color attachments than
    /// [`crate::MAX_COLOR_ATTACHMENTS`], a dispatch over the device's work
    /// group count, a frame's timestamps used up. Nothing was created or recorded.
    #[error("{what} of {resource} is {value}, outside {min}..={max}")]
    OutOfLimits {
        /// The quantity (`"size"`, `"width"`, `"mip levels"`, `"color attachments"`…).
        what: &'static str,
        /// Whose (`buffer "vertices"`, `texture "albedo" (64x64)`, `the dispatch`).
        resource: String,
        /// The value given.
        value: u64,
        /// The least allowed.
        min: u64,
        /// The most allowed.
        max: u64,
    },
    /// An offset, size or stride that is not a multiple of the alignment it
    /// needs (push constants and fills in 4-byte words, an index buffer
    /// offset of the index size, a binding offset of the device's minimum).
    #[error("{what} {value} of {resource} is not a multiple of {alignment}")]
    Misaligned {
        /// The quantity (`"offset"`, `"size"`, `"stride"`).
        what: &'static str,
        /// Whose (`index buffer "indices"`, `the push-constant block`).
        resource: String,
        /// The value given.
        value: u64,
        /// The multiple it must be.
        alignment: u64,
    },
    /// A buffer or texture lacks a usage flag the call needs; nothing was
    /// created or recorded.
    #[error("{label:?} lacks {usage}, needed for {needed_for}")]
    MissingUsage {
        /// The resource's label.
        label: String,
        /// The flags it lacks (those of the needed ones it does not have).
        usage: Usage,
        /// What needs them (`"a vertex stream"`, `"a copy source"`…).
        needed_for: &'static str,
    },
    /// A texture, target or layout format of the wrong kind (a depth format
    /// as a color target, a color format as depth, a block-compressed one
    /// rendered to).
    #[error("{resource} has format {format:?}; {expected} is needed")]
    WrongFormat {
        /// Which (`color target 0`, `texture "shadow" (the depth attachment)`).
        resource: String,
        /// Its format.
        format: Format,
        /// The kind needed (`"a depth format"`, `"a color format"`…).
        expected: &'static str,
    },
    /// A texture state a call cannot take (a barrier to `Undefined`, a
    /// present from `Undefined` or `Present`).
    #[error("a texture in state {state:?} cannot be {role}")]
    WrongTextureState {
        /// The state given.
        state: TextureState,
        /// What the texture was to be (`"the target of a barrier"`, `"presented"`).
        role: &'static str,
    },
    /// A count that must match another: level slices for the mip levels, a
    /// level's bytes for its extent and format, bind group entries for the
    /// layout's bindings.
    #[error("{resource} needs {expected} {what}, got {found}")]
    WrongCount {
        /// What is counted (`"level slices"`, `"bytes"`, `"entries"`).
        what: &'static str,
        /// What needs them (`level 1 (4x4 Rgba8Unorm) of texture "t"`).
        resource: String,
        /// How many it needs.
        expected: u64,
        /// How many were given.
        found: u64,
    },
    /// A number given twice where each may appear once (a vertex location,
    /// a bind group's binding).
    #[error("{what} {value} is given twice in {resource}")]
    Duplicate {
        /// What (`"vertex location"`, `"binding"`).
        what: &'static str,
        /// The number given twice.
        value: u32,
        /// Where (`the vertex buffers`, `bind group 0`).
        resource: String,
    },
    /// A number that names nothing where it is looked up (a binding the
    /// layout lacks, a vertex location no buffer provides, a released
    /// material shader).
    #[error("{resource} has no {what} {value}")]
    NotFound {
        /// What was looked for (`"binding"`, `"vertex location"`).
        what: &'static str,
        /// Its number.
        value: u32,
        /// Where it was looked for (`bind group 1's layout`).
        resource: String,
    },
    /// A shader with no entry point of that name.
    #[error("shader {shader:?} has no entry point {entry:?}")]
    NoEntryPoint {
        /// The shader's name.
        shader: String,
        /// The entry point asked for.
        entry: String,
    },
    /// A bind group entry whose resource does not suit the binding's type
    /// (a texture for a uniform buffer, a plain sampler for a comparison one).
    #[error("binding {binding} of bind group {group} expects {expected:?}, got {found:?}")]
    BindingMismatch {
        /// The bind group's index in the pipeline layout.
        group: u32,
        /// The binding.
        binding: u32,
        /// The type the layout has there.
        expected: BindingType,
        /// The resource given.
        found: BindingResource,
    },
    /// A bind group made for another layout than group `index` of the bound
    /// pipeline's layout; nothing was bound.
    #[error("the bind group was made for another layout than group {index} of the bound pipeline's")]
    IncompatibleBindGroup {
        /// Where it was to be bound.
        index: u32,
    },
    /// A command recorded in a pass state it does not belong in (a draw
    /// outside a pass, a copy inside one, state set in a pass whose contents
    /// come from secondaries, a pass begun in a secondary or left open at
    /// submit); nothing was recorded.
    #[error("{command} {found}: it belongs {needed}")]
    WrongPass {
        /// The command (`"draw"`, `"a copy"`, `"begin_rendering"`, `"Frame::submit"`).
        command: &'static str,
        /// Where the command list was.
        found: PassState,
        /// Where the command may be recorded.
        needed: PassState,
    },
    /// A command whose state is not bound or set yet (no pipeline, a bind
    /// group or vertex stream of the pipeline unbound, no index buffer,
    /// viewport or scissor unset, push constants unwritten); nothing was recorded.
    #[error("{command}: {missing}")]
    NotBound {
        /// The command (`"draw"`, `"draw_indexed"`, `"dispatch"`, `"bind_group"`…).
        command: &'static str,
        /// The first thing missing.
        missing: Unbound,
    },
    /// A call that needs no frame open made while one is (a second
    /// `begin_frame`, a present).
    #[error("{command} while a frame is open (one frame at a time; presents go between frames)")]
    FrameOpen {
        /// The call (`"begin_frame"`, `"present_texture"`).
        command: &'static str,
    },
    /// An object made by another device (a bind group, a secondary, a
    /// swapchain, a mesh's GPU buffers).
    #[error("{what} was made by another device")]
    OtherDevice {
        /// The object.
        what: &'static str,
    },
    /// An object of one frame used in another (a frame's bind group, a secondary).
    #[error("{what} of frame {made_in} used in {}", frame_name(.used_in))]
    OtherFrame {
        /// The object.
        what: &'static str,
        /// The frame it was made for.
        made_in: u64,
        /// The frame it was used in (`None`: an immediate submission).
        used_in: Option<u64>,
    },
    /// A description or argument the RHI refuses for a rare reason the
    /// variants above do not name; nothing was created or recorded.
    #[error("invalid description: {0}")]
    InvalidDesc(String),
    /// A call made in a state that does not allow it, for a rare reason the
    /// variants above do not name (a timestamp in an immediate submission,
    /// a present on a destroyed swapchain).
    #[error("invalid command order: {0}")]
    InvalidState(String),
    /// A handle that names no live object (destroyed, or from another device).
    #[error("invalid handle: {0}")]
    InvalidHandle(String),
    /// gpu-allocator failed for a reason other than running out of memory.
    #[error("memory allocation failed: {0}")]
    Allocation(String),
    /// A Vulkan call failed with a code the RHI has no own variant for.
    #[error("{context}: {result}")]
    Vulkan {
        /// The Vulkan function that failed.
        context: &'static str,
        /// The code it returned.
        result: vk::Result,
    },
}

/// Where a command list is as far as render passes go: what
/// [`RhiError::WrongPass`] found, and where the command belongs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PassState {
    /// A primary outside any render pass.
    Outside,
    /// Inside a render pass whose draws are recorded inline (a primary's
    /// pass begun with [`crate::RenderingContents::Inline`]).
    Inline,
    /// Inside a primary's pass begun with [`crate::RenderingContents::Secondary`],
    /// where only secondaries execute.
    Secondaries,
    /// A secondary command buffer (always inside the pass it continues).
    Secondary,
}

impl std::fmt::Display for PassState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            PassState::Outside => "outside a render pass",
            PassState::Inline => "inside a render pass",
            PassState::Secondaries => "inside a render pass whose contents come from secondaries",
            PassState::Secondary => "in a secondary command buffer",
        })
    }
}

/// What a command needs bound or set that is not ([`RhiError::NotBound`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Unbound {
    /// No pipeline is bound.
    Pipeline,
    /// The bound pipeline is a graphics pipeline; a dispatch needs a compute one.
    ComputePipeline,
    /// The bound pipeline is not a graphics pipeline for the open pass's
    /// attachment formats.
    PipelineForPass,
    /// This group of the bound pipeline's layout has no bind group bound
    /// (with a compatible layout).
    BindGroup(u32),
    /// This vertex stream of the bound pipeline has no buffer bound.
    VertexStream(u32),
    /// No index buffer is bound.
    IndexBuffer,
    /// No viewport is set.
    Viewport,
    /// No scissor is set.
    Scissor,
    /// Some word of the bound pipeline's push-constant block is unwritten.
    PushConstants,
}

impl std::fmt::Display for Unbound {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unbound::Pipeline => f.write_str("no pipeline is bound"),
            Unbound::ComputePipeline => f.write_str("the bound pipeline is not a compute pipeline"),
            Unbound::PipelineForPass => f.write_str("the bound pipeline is not a graphics pipeline for this pass's attachment formats"),
            Unbound::BindGroup(g) => write!(f, "group {g} of the bound pipeline's layout has no bind group bound"),
            Unbound::VertexStream(s) => write!(f, "vertex stream {s} of the bound pipeline has no buffer bound"),
            Unbound::IndexBuffer => f.write_str("no index buffer is bound"),
            Unbound::Viewport => f.write_str("no viewport is set"),
            Unbound::Scissor => f.write_str("no scissor is set"),
            Unbound::PushConstants => f.write_str("the bound pipeline's push constants are not all written"),
        }
    }
}

/// Usage flags a resource lacks ([`RhiError::MissingUsage`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Usage {
    /// A buffer's.
    Buffer(BufferUsage),
    /// A texture's.
    Texture(TextureUsage),
}

impl std::fmt::Display for Usage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Usage::Buffer(u) => write!(f, "buffer usage {u}"),
            Usage::Texture(u) => write!(f, "texture usage {u}"),
        }
    }
}

/// `a..b`, or `a` for a range of one.
fn span(r: &Range<u64>) -> String {
    if r.end == r.start.saturating_add(1) {
        r.start.to_string()
    } else {
        format!("{}..{}", r.start, r.end)
    }
}

fn frame_name(frame: &Option<u64>) -> String {
    match frame {
        Some(f) => format!("frame {f}"),
        None => "an immediate submission".into(),
    }
}

/// `start..start + len`, its end saturated (for [`RhiError::OutOfRange`]).
pub(crate) fn range_of(start: u64, len: u64) -> Range<u64> {
    start..start.saturating_add(len)
}

/// The RHI's result type ([`RhiError`] unless said otherwise).
pub type Result<T, E = RhiError> = std::result::Result<T, E>;

/// Maps a `vk::Result` from the call named by `context` to an [`RhiError`],
/// turning the codes callers act on into their own variants.
pub(crate) fn vk_err(context: &'static str) -> impl Fn(vk::Result) -> RhiError {
    move |result| match result {
        vk::Result::ERROR_OUT_OF_DEVICE_MEMORY => RhiError::OutOfDeviceMemory,
        vk::Result::ERROR_OUT_OF_HOST_MEMORY => RhiError::OutOfHostMemory,
        vk::Result::ERROR_DEVICE_LOST => RhiError::DeviceLost,
        vk::Result::ERROR_FORMAT_NOT_SUPPORTED | vk::Result::ERROR_FEATURE_NOT_PRESENT => {
            RhiError::Unsupported(format!("{context}: {result}"))
        }
        result => RhiError::Vulkan { context, result },
    }
}

impl From<gpu_allocator::AllocationError> for RhiError {
    fn from(e: gpu_allocator::AllocationError) -> Self {
        match e {
            gpu_allocator::AllocationError::OutOfMemory => RhiError::OutOfDeviceMemory,
            other => RhiError::Allocation(other.to_string()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every submit, wait and present path maps its `vk::Result` through
    /// `vk_err`: device lost and out-of-memory come out as their own variants.
    #[test]
    fn device_lost_and_out_of_memory_become_their_own_variants() {
        assert!(matches!(vk_err("vkQueueSubmit2")(vk::Result::ERROR_DEVICE_LOST), RhiError::DeviceLost));
        assert!(matches!(vk_err("vkWaitSemaphores")(vk::Result::ERROR_DEVICE_LOST), RhiError::DeviceLost));
        assert!(matches!(vk_err("vkAllocateMemory")(vk::Result::ERROR_OUT_OF_DEVICE_MEMORY), RhiError::OutOfDeviceMemory));
        assert!(matches!(vk_err("vkCreateBuffer")(vk::Result::ERROR_OUT_OF_HOST_MEMORY), RhiError::OutOfHostMemory));
        assert!(matches!(vk_err("vkCreateBuffer")(vk::Result::ERROR_UNKNOWN), RhiError::Vulkan { context: "vkCreateBuffer", .. }));
        assert!(matches!(gpu_allocator::AllocationError::OutOfMemory.into(), RhiError::OutOfDeviceMemory));
    }

    /// The messages of the data-carrying variants say the data.
    #[test]
    fn messages_name_the_range_the_limit_and_the_flags() {
        let write = RhiError::OutOfRange { what: "bytes", resource: "buffer \"parts\"".into(), range: 7..33, limit: 32 };
        assert_eq!(write.to_string(), "bytes 7..33 out of range: buffer \"parts\" has 32");
        let level = RhiError::OutOfRange { what: "mip level", resource: "texture \"t\"".into(), range: range_of(4, 1), limit: 4 };
        assert_eq!(level.to_string(), "mip level 4 out of range: texture \"t\" has 4");
        let usage = Usage::Buffer(BufferUsage::VERTEX | BufferUsage::INDEX);
        let lacks = RhiError::MissingUsage { label: "b".into(), usage, needed_for: "a vertex stream" };
        assert_eq!(lacks.to_string(), "\"b\" lacks buffer usage VERTEX | INDEX, needed for a vertex stream");
        assert_eq!(TextureUsage::empty().to_string(), "empty");
        let pass = RhiError::WrongPass { command: "a copy", found: PassState::Inline, needed: PassState::Outside };
        assert_eq!(pass.to_string(), "a copy inside a render pass: it belongs outside a render pass");
        let frame = RhiError::OtherFrame { what: "a bind group", made_in: 3, used_in: None };
        assert_eq!(frame.to_string(), "a bind group of frame 3 used in an immediate submission");
        let size = RhiError::OutOfLimits { what: "size", resource: "buffer \"z\"".into(), value: 0, min: 1, max: 1 << 30 };
        assert_eq!(size.to_string(), "size of buffer \"z\" is 0, outside 1..=1073741824");
        assert_eq!(range_of(u64::MAX - 1, 4), u64::MAX - 1..u64::MAX, "the end saturates");
    }

    #[test]
    fn missing_loader_and_driver_errors_name_the_packages() {
        let loader = RhiError::LoaderNotFound { reason: "libvulkan.so.1: cannot open".into() }.to_string();
        assert!(loader.contains("libvulkan1") && loader.contains("mesa-vulkan-drivers"), "{loader}");
        let driver = RhiError::DriverNotFound { detail: "VK_ICD_FILENAMES=/x".into() }.to_string();
        assert!(driver.contains("mesa-vulkan-drivers") && driver.contains("VK_ICD_FILENAMES=/x"), "{driver}");
    }
}
