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
            /// Whether some flag of `other` is set in `self`.
            pub const fn intersects(self, other: Self) -> bool { self.0 & other.0 != 0 }
            /// Whether no flag is set.
            pub const fn is_empty(self) -> bool { self.0 == 0 }
            /// The raw bits.
            pub const fn bits(self) -> u32 { self.0 }
            /// The flags of `self` that `other` lacks.
            pub const fn difference(self, other: Self) -> Self { Self(self.0 & !other.0) }
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
        /// The set flags by name, `A | B` (`empty` for none).
        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                let names = [$((Self::$flag, stringify!($flag))),*];
                let mut set = names.iter().filter(|(flag, _)| self.contains(*flag)).map(|(_, name)| *name);
                match set.next() {
                    None => f.write_str("empty"),
                    Some(first) => {
                        f.write_str(first)?;
                        set.try_for_each(|name| write!(f, " | {name}"))
                    }
                }
            }
        }
    };
}

flags!(
    /// What a buffer may be used for.
    BufferUsage {
        /// Bound as a vertex stream.
        VERTEX = 1,
        /// Bound as the index buffer.
        INDEX = 2,
        /// Bound as a uniform buffer.
        UNIFORM = 4,
        /// Bound as a storage buffer.
        STORAGE = 8,
        /// Read as indirect draw arguments.
        INDIRECT = 16,
        /// The source of a copy (read-back, buffer-to-buffer).
        TRANSFER_SRC = 32,
        /// The destination of a copy (staging uploads).
        TRANSFER_DST = 64,
    }
);

flags!(
    /// What a texture may be used for.
    TextureUsage {
        /// Color or depth attachment of a render pass.
        RENDER_TARGET = 1,
        /// Sampled by shaders.
        SAMPLED = 2,
        /// Read and written by compute as a storage image.
        STORAGE = 4,
        /// The source of a copy or blit (read-back, mip generation).
        TRANSFER_SRC = 8,
        /// The destination of a copy or blit (uploads, mip generation).
        TRANSFER_DST = 16,
    }
);

flags!(
    /// Shader stages, for binding visibility and push constants.
    ShaderStages {
        /// The vertex stage.
        VERTEX = 1,
        /// The fragment stage.
        FRAGMENT = 2,
        /// The compute stage.
        COMPUTE = 4,
    }
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
    /// Four 8-bit normalized channels, linear.
    Rgba8Unorm,
    /// Four 8-bit channels, sRGB-encoded colour (decoded to linear when
    /// sampled, encoded when written) and linear alpha.
    Rgba8Srgb,
    /// Four 8-bit normalized channels in BGRA order (common swapchain format).
    Bgra8Unorm,
    /// BGRA order, sRGB-encoded colour.
    Bgra8Srgb,
    /// Four 16-bit floats (HDR colour).
    Rgba16Float,
    /// Two 16-bit floats (motion vectors).
    Rg16Float,
    /// 32-bit float depth; the one depth format.
    Depth32Float,
    /// BC1 (DXT1) with 1-bit alpha (`BC1_RGBA`), linear: 8 bytes per 4x4
    /// block. Block-compressed formats need
    /// [`crate::DeviceFeatures::texture_compression_bc`].
    Bc1RgbaUnorm,
    /// BC1 with 1-bit alpha, sRGB-encoded colour.
    Bc1RgbaSrgb,
    /// BC3 (DXT5): BC1 colour and interpolated alpha, linear; 16 bytes per block.
    Bc3Unorm,
    /// BC3, sRGB-encoded colour.
    Bc3Srgb,
    /// BC4: one channel (red), linear; 8 bytes per block.
    Bc4Unorm,
    /// BC5: two channels (red, green), linear; 16 bytes per block.
    Bc5Unorm,
    /// BC7: RGBA, linear; 16 bytes per block.
    Bc7Unorm,
    /// BC7, sRGB-encoded colour.
    Bc7Srgb,
}

impl Format {
    /// Whether it is a depth format (a depth attachment, sampled as a
    /// [`crate::BindingType::DepthTexture`]).
    pub fn is_depth(self) -> bool {
        matches!(self, Format::Depth32Float)
    }
    /// Every block-compressed format.
    pub const BLOCK_COMPRESSED: [Format; 8] = [
        Format::Bc1RgbaUnorm,
        Format::Bc1RgbaSrgb,
        Format::Bc3Unorm,
        Format::Bc3Srgb,
        Format::Bc4Unorm,
        Format::Bc5Unorm,
        Format::Bc7Unorm,
        Format::Bc7Srgb,
    ];

    /// Whether it is block-compressed (BCn: 4x4 texel blocks; sampled and
    /// copied only, needs [`crate::DeviceFeatures::texture_compression_bc`]).
    pub fn is_block_compressed(self) -> bool {
        self.block_extent() > 1
    }
    /// Texels per side of one block: 4 for block-compressed formats, 1 for
    /// the others (a "block" is then one texel).
    pub fn block_extent(self) -> u32 {
        match self {
            Format::Bc1RgbaUnorm
            | Format::Bc1RgbaSrgb
            | Format::Bc3Unorm
            | Format::Bc3Srgb
            | Format::Bc4Unorm
            | Format::Bc5Unorm
            | Format::Bc7Unorm
            | Format::Bc7Srgb => 4,
            _ => 1,
        }
    }
    /// Bytes of one block ([`Format::block_extent`] texels square), tightly
    /// packed: the bytes of one texel for uncompressed formats.
    pub fn bytes_per_block(self) -> u32 {
        match self {
            Format::R8Unorm => 1,
            Format::Rg8Unorm => 2,
            Format::Rg16Float => 4,
            Format::Rgba8Unorm | Format::Rgba8Srgb | Format::Bgra8Unorm | Format::Bgra8Srgb => 4,
            Format::Depth32Float => 4,
            Format::Rgba16Float => 8,
            Format::Bc1RgbaUnorm | Format::Bc1RgbaSrgb | Format::Bc4Unorm => 8,
            Format::Bc3Unorm | Format::Bc3Srgb | Format::Bc5Unorm | Format::Bc7Unorm | Format::Bc7Srgb => 16,
        }
    }
    /// Bytes of one texel, tightly packed; for block-compressed formats,
    /// which have no bytes per texel, the bytes of a block
    /// ([`Format::bytes_per_block`]).
    pub fn bytes_per_pixel(self) -> u32 {
        self.bytes_per_block()
    }
    /// Bytes of a `width` x `height` image, tightly packed: rows of whole
    /// blocks, an extent that is not a multiple of the block rounded up.
    pub fn image_size(self, width: u32, height: u32) -> u64 {
        let b = self.block_extent();
        u64::from(width.div_ceil(b)) * u64::from(height.div_ceil(b)) * u64::from(self.bytes_per_block())
    }
}

/// Vertex attribute formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum VertexFormat {
    /// One `f32` (`f32` in WGSL).
    Float32,
    /// Two `f32`s (`vec2<f32>`).
    Float32x2,
    /// Three `f32`s (`vec3<f32>`).
    Float32x3,
    /// Four `f32`s (`vec4<f32>`).
    Float32x4,
    /// One `u32`.
    Uint32,
    /// Two `u32`s (`vec2<u32>`).
    Uint32x2,
    /// Four `u32`s (`vec4<u32>`).
    Uint32x4,
    /// Four normalized bytes (vertex colors).
    Unorm8x4,
    /// Four signed normalized bytes (packed tangents).
    Snorm8x4,
}

impl VertexFormat {
    /// Bytes the attribute takes in a vertex buffer.
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

/// The type of an index buffer's indices.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum IndexFormat {
    /// 16-bit indices (2 bytes each).
    Uint16,
    /// 32-bit indices (4 bytes each).
    #[default]
    Uint32,
}

/// How a depth test or comparison sampler compares a new value with the
/// stored one (the test passes when `new OP stored`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum CompareOp {
    /// Never passes.
    Never,
    /// Passes when the new value is smaller.
    Less,
    /// Passes when the values are equal.
    Equal,
    /// Passes when the new value is smaller or equal.
    #[default]
    LessEqual,
    /// Passes when the new value is greater.
    Greater,
    /// Passes when the new value is greater or equal.
    GreaterEqual,
    /// Always passes.
    Always,
}

/// How a draw's vertices are assembled into primitives.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum PrimitiveTopology {
    /// Every three vertices make a triangle.
    #[default]
    TriangleList,
    /// Each vertex after the second makes a triangle with the two before it.
    TriangleStrip,
    /// Every two vertices make a line.
    LineList,
}

/// How triangles are rasterized.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum PolygonMode {
    /// Filled triangles.
    #[default]
    Fill,
    /// Needs the `fillModeNonSolid` feature ([`crate::DeviceFeatures::wireframe`]).
    Line,
}

/// Which triangles are discarded before rasterization, by facing (see
/// [`FrontFace`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum CullMode {
    /// None: both faces are drawn.
    #[default]
    None,
    /// Front faces are discarded.
    Front,
    /// Back faces are discarded.
    Back,
}

/// Which winding is front-facing, in framebuffer space (y down).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum FrontFace {
    /// Counter-clockwise triangles face the viewer.
    #[default]
    CounterClockwise,
    /// Clockwise triangles face the viewer.
    Clockwise,
}

/// What a blend multiplies the source (shader output) or destination
/// (target's value) by.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BlendFactor {
    /// 0.
    Zero,
    /// 1.
    One,
    /// The source's alpha.
    SrcAlpha,
    /// 1 minus the source's alpha.
    OneMinusSrcAlpha,
    /// The destination's colour (multiplicative blending).
    DstColor,
}

/// One channel group's blend: `src * src_factor + dst * dst_factor`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct BlendComponent {
    /// The factor of the shader's output.
    pub src: BlendFactor,
    /// The factor of the value in the target.
    pub dst: BlendFactor,
}

/// Additive blending of color and alpha (`op` is always add).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct BlendState {
    /// How RGB blends.
    pub color: BlendComponent,
    /// How alpha blends.
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

/// How a sampler picks texels (or mip levels) between sample points.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Filter {
    /// The nearest one.
    Nearest,
    /// Linear interpolation between the nearest ones.
    #[default]
    Linear,
}

/// What a sampler reads outside 0..1 texture coordinates.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum AddressMode {
    /// The texture tiles.
    Repeat,
    /// The edge texel.
    #[default]
    ClampToEdge,
    /// The texture tiles, every other copy mirrored.
    MirrorRepeat,
}

/// The state a texture is in, as far as barriers are concerned. A barrier
/// names the state before and after; `conv.rs` derives layout, stages and
/// access from it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TextureState {
    /// Contents are discarded.
    Undefined,
    /// Written as a color attachment of a render pass.
    ColorAttachment,
    /// Read and written as the depth attachment of a render pass.
    DepthAttachment,
    /// Read by fragment or compute shaders (including depth compare sampling).
    ShaderRead,
    /// Storage image read/written by compute.
    General,
    /// Read by a copy or blit.
    TransferSrc,
    /// Written by a copy or blit.
    TransferDst,
    /// Handed to the presentation engine.
    Present,
}

/// Buffer access scopes for barriers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BufferState {
    /// Written by a copy.
    TransferDst,
    /// Read by a copy.
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
    /// Left edge, in pixels.
    pub x: i32,
    /// Top edge, in pixels (y grows downwards).
    pub y: i32,
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
}

impl Rect {
    /// The rectangle at (`x`, `y`) of `width` by `height` pixels.
    pub fn new(x: i32, y: i32, width: u32, height: u32) -> Self {
        Self { x, y, width, height }
    }
    /// The rectangle at the origin of `width` by `height` pixels (a whole
    /// attachment of that size).
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
