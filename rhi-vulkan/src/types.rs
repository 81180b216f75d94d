//! Plain-data enums and flag sets shared by the RHI's descriptions.
//!
//! They are the RHI's own vocabulary: the renderer speaks these, never
//! `vk::*`; `conv.rs` maps them to Vulkan.

use std::ops::{BitOr, BitOrAssign};

macro_rules! flags {
    ($(#[$m:meta])* $name:ident { $($(#[$fm:meta])* $flag:ident = $bit:expr),* $(,)? }) => {
        $(#[$m])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
        pub struct $name(u32);
        impl $name {
            $($(#[$fm])* pub const $flag: Self = Self($bit);)*
            /// No flag set.
            pub const fn empty() -> Self { Self(0) }
            /// Whether every flag of `other` is set in `self`.
            pub const fn contains(self, other: Self) -> bool { self.0 & other.0 == other.0 }
            /// Whether no flag is set.
            pub const fn is_empty(self) -> bool { self.0 == 0 }
            /// The raw bits.
            pub const fn bits(self) -> u32 { self.0 }
            /// The flags whose bits are set in `bits`; unknown bits are dropped.
            pub const fn from_bits_truncate(bits: u32) -> Self { Self(bits & (0 $(| $bit)*)) }
        }
        impl BitOr for $name {
            type Output = Self;
            fn bitor(self, rhs: Self) -> Self { Self(self.0 | rhs.0) }
        }
        impl BitOrAssign for $name {
            fn bitor_assign(&mut self, rhs: Self) { self.0 |= rhs.0 }
        }
    };
}

flags!(
    /// What a buffer may be used for.
    BufferUsage {
        VERTEX = 1, INDEX = 2, UNIFORM = 4, STORAGE = 8, INDIRECT = 16,
        TRANSFER_SRC = 32, TRANSFER_DST = 64,
    }
);

flags!(
    /// What a texture may be used for.
    TextureUsage {
        /// Color or depth attachment of a render pass.
        RENDER_TARGET = 1, SAMPLED = 2, STORAGE = 4, TRANSFER_SRC = 8, TRANSFER_DST = 16,
    }
);

flags!(
    /// Shader stages, for binding visibility and push constants.
    ShaderStages { VERTEX = 1, FRAGMENT = 2, COMPUTE = 4 }
);

/// Where a buffer's memory lives, as gpu-allocator names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MemoryLocation {
    /// Device-local; written only through the staging path (works on discrete GPUs).
    GpuOnly,
    /// Host-visible, written by the CPU every frame (dynamic vertex/instance data).
    CpuToGpu,
    /// Host-visible and cached, for readback.
    GpuToCpu,
}

/// Texture formats the RHI supports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Format {
    /// One 8-bit normalized channel (masks, roughness, height maps).
    R8Unorm,
    /// Two 8-bit normalized channels (two-channel normal maps, packed masks).
    Rg8Unorm,
    Rgba8Unorm,
    Rgba8Srgb,
    Bgra8Unorm,
    Bgra8Srgb,
    Rgba16Float,
    Depth32Float,
}

impl Format {
    pub fn is_depth(self) -> bool {
        matches!(self, Format::Depth32Float)
    }
    /// Bytes of one texel, tightly packed.
    pub fn bytes_per_pixel(self) -> u32 {
        match self {
            Format::R8Unorm => 1,
            Format::Rg8Unorm => 2,
            Format::Rgba8Unorm | Format::Rgba8Srgb | Format::Bgra8Unorm | Format::Bgra8Srgb => 4,
            Format::Depth32Float => 4,
            Format::Rgba16Float => 8,
        }
    }
}

/// Vertex attribute formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum VertexFormat {
    Float32,
    Float32x2,
    Float32x3,
    Float32x4,
    Uint32,
    Uint32x2,
    Uint32x4,
    /// Four normalized bytes (vertex colors).
    Unorm8x4,
    /// Four signed normalized bytes (packed tangents).
    Snorm8x4,
}

impl VertexFormat {
    pub fn size(self) -> u32 {
        match self {
            VertexFormat::Float32 | VertexFormat::Uint32 => 4,
            VertexFormat::Unorm8x4 | VertexFormat::Snorm8x4 => 4,
            VertexFormat::Float32x2 | VertexFormat::Uint32x2 => 8,
            VertexFormat::Float32x3 => 12,
            VertexFormat::Float32x4 | VertexFormat::Uint32x4 => 16,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum IndexFormat {
    Uint16,
    #[default]
    Uint32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum CompareOp {
    Never,
    Less,
    Equal,
    #[default]
    LessEqual,
    Greater,
    GreaterEqual,
    Always,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum PrimitiveTopology {
    #[default]
    TriangleList,
    TriangleStrip,
    LineList,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum PolygonMode {
    #[default]
    Fill,
    /// Needs the `fillModeNonSolid` feature ([`crate::DeviceFeatures::wireframe`]).
    Line,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum CullMode {
    #[default]
    None,
    Front,
    Back,
}

/// Which winding is front-facing, in framebuffer space (y down).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum FrontFace {
    #[default]
    CounterClockwise,
    Clockwise,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BlendFactor {
    Zero,
    One,
    SrcAlpha,
    OneMinusSrcAlpha,
    DstColor,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct BlendComponent {
    pub src: BlendFactor,
    pub dst: BlendFactor,
}

/// Additive blending of color and alpha (`op` is always add).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct BlendState {
    pub color: BlendComponent,
    pub alpha: BlendComponent,
}

impl BlendState {
    /// Classic "over" blending for translucency.
    pub const ALPHA: Self = Self {
        color: BlendComponent { src: BlendFactor::SrcAlpha, dst: BlendFactor::OneMinusSrcAlpha },
        alpha: BlendComponent { src: BlendFactor::One, dst: BlendFactor::OneMinusSrcAlpha },
    };
    /// Additive blending (sparks, glows).
    pub const ADDITIVE: Self = Self {
        color: BlendComponent { src: BlendFactor::SrcAlpha, dst: BlendFactor::One },
        alpha: BlendComponent { src: BlendFactor::Zero, dst: BlendFactor::One },
    };
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Filter {
    Nearest,
    #[default]
    Linear,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum AddressMode {
    Repeat,
    #[default]
    ClampToEdge,
    MirrorRepeat,
}

/// The state a texture is in, as far as barriers are concerned. A barrier
/// names the state before and after; `conv.rs` derives layout, stages and
/// access from it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TextureState {
    /// Contents are discarded.
    Undefined,
    ColorAttachment,
    DepthAttachment,
    /// Read by fragment or compute shaders (including depth compare sampling).
    ShaderRead,
    /// Storage image read/written by compute.
    General,
    TransferSrc,
    TransferDst,
    /// Handed to the presentation engine.
    Present,
}

/// Buffer access scopes for barriers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BufferState {
    TransferDst,
    TransferSrc,
    /// Read as vertex, index, uniform or storage data by draws or compute.
    ShaderRead,
    /// Written by compute shaders.
    ShaderWrite,
    /// Read as indirect draw arguments.
    Indirect,
    /// Read by the host after the GPU wrote it.
    HostRead,
}

/// A rectangle in pixels.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct Rect {
    pub x: i32,
    pub y: i32,
    pub width: u32,
    pub height: u32,
}

impl Rect {
    pub fn new(x: i32, y: i32, width: u32, height: u32) -> Self {
        Self { x, y, width, height }
    }
    pub fn from_size(width: u32, height: u32) -> Self {
        Self { x: 0, y: 0, width, height }
    }
}

/// How a swapchain hands finished images to the display (`VkPresentModeKHR`).
/// Plain data, available without the `window` feature so option parsers can
/// name it; parsed from and shown as `fifo`, `mailbox`, `immediate`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum PresentMode {
    /// Wait for vertical blank, queueing images (always supported; frame
    /// rate capped by the display's refresh).
    #[default]
    Fifo,
    /// Wait for vertical blank, the newest image replacing a waiting one:
    /// no tearing, no cap on the rendering rate.
    Mailbox,
    /// Present at once, tearing allowed, no cap.
    Immediate,
}

impl PresentMode {
    /// Every mode, in the order `fifo`, `mailbox`, `immediate`.
    pub const ALL: [PresentMode; 3] = [PresentMode::Fifo, PresentMode::Mailbox, PresentMode::Immediate];

    /// The mode's lower-case name, as parsed.
    pub const fn name(self) -> &'static str {
        match self {
            PresentMode::Fifo => "fifo",
            PresentMode::Mailbox => "mailbox",
            PresentMode::Immediate => "immediate",
        }
    }
}

impl std::fmt::Display for PresentMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for PresentMode {
    type Err = String;

    /// `fifo`, `mailbox` or `immediate` (case-insensitive).
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        Self::ALL
            .into_iter()
            .find(|m| m.name().eq_ignore_ascii_case(s.trim()))
            .ok_or_else(|| format!("unknown present mode {s:?} (one of fifo, mailbox, immediate)"))
    }
}

#[cfg(test)]
mod tests {
    use super::PresentMode;

    #[test]
    fn present_modes_parse_by_name() {
        for m in PresentMode::ALL {
            assert_eq!(m.to_string().parse::<PresentMode>(), Ok(m));
        }
        assert_eq!("Mailbox".parse::<PresentMode>(), Ok(PresentMode::Mailbox));
        assert!("vsync".parse::<PresentMode>().is_err());
        assert!("".parse::<PresentMode>().is_err());
        assert_eq!(PresentMode::default(), PresentMode::Fifo);
    }
}
