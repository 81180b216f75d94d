//! Pure mappings from the RHI's plain-data types to `vk::*`. No device needed,
//! so each mapping is unit-tested on its own.

use crate::types::*;
use ash::vk;

/// Samples per pixel (1, 2, 4 or 8; checked before) as Vulkan's flag.
pub(crate) fn samples(n: u32) -> vk::SampleCountFlags {
    match n {
        2 => vk::SampleCountFlags::TYPE_2,
        4 => vk::SampleCountFlags::TYPE_4,
        8 => vk::SampleCountFlags::TYPE_8,
        _ => vk::SampleCountFlags::TYPE_1,
    }
}

pub(crate) fn format(f: Format) -> vk::Format {
    match f {
        Format::R8Unorm => vk::Format::R8_UNORM,
        Format::Rg8Unorm => vk::Format::R8G8_UNORM,
        Format::Rgba8Unorm => vk::Format::R8G8B8A8_UNORM,
        Format::Rgba8Srgb => vk::Format::R8G8B8A8_SRGB,
        Format::Bgra8Unorm => vk::Format::B8G8R8A8_UNORM,
        Format::Bgra8Srgb => vk::Format::B8G8R8A8_SRGB,
        Format::Rgba16Float => vk::Format::R16G16B16A16_SFLOAT,
        Format::Rg16Float => vk::Format::R16G16_SFLOAT,
        Format::Depth32Float => vk::Format::D32_SFLOAT,
        Format::Bc1RgbaUnorm => vk::Format::BC1_RGBA_UNORM_BLOCK,
        Format::Bc1RgbaSrgb => vk::Format::BC1_RGBA_SRGB_BLOCK,
        Format::Bc3Unorm => vk::Format::BC3_UNORM_BLOCK,
        Format::Bc3Srgb => vk::Format::BC3_SRGB_BLOCK,
        Format::Bc4Unorm => vk::Format::BC4_UNORM_BLOCK,
        Format::Bc5Unorm => vk::Format::BC5_UNORM_BLOCK,
        Format::Bc7Unorm => vk::Format::BC7_UNORM_BLOCK,
        Format::Bc7Srgb => vk::Format::BC7_SRGB_BLOCK,
    }
}

pub(crate) fn vertex_format(f: VertexFormat) -> vk::Format {
    match f {
        VertexFormat::Float32 => vk::Format::R32_SFLOAT,
        VertexFormat::Float32x2 => vk::Format::R32G32_SFLOAT,
        VertexFormat::Float32x3 => vk::Format::R32G32B32_SFLOAT,
        VertexFormat::Float32x4 => vk::Format::R32G32B32A32_SFLOAT,
        VertexFormat::Uint32 => vk::Format::R32_UINT,
        VertexFormat::Uint32x2 => vk::Format::R32G32_UINT,
        VertexFormat::Uint32x4 => vk::Format::R32G32B32A32_UINT,
        VertexFormat::Unorm8x4 => vk::Format::R8G8B8A8_UNORM,
        VertexFormat::Snorm8x4 => vk::Format::R8G8B8A8_SNORM,
    }
}

pub(crate) fn index_type(f: IndexFormat) -> vk::IndexType {
    match f {
        IndexFormat::Uint16 => vk::IndexType::UINT16,
        IndexFormat::Uint32 => vk::IndexType::UINT32,
    }
}

pub(crate) fn buffer_usage(u: BufferUsage) -> vk::BufferUsageFlags {
    let mut out = vk::BufferUsageFlags::empty();
    let map = [
        (BufferUsage::VERTEX, vk::BufferUsageFlags::VERTEX_BUFFER),
        (BufferUsage::INDEX, vk::BufferUsageFlags::INDEX_BUFFER),
        (BufferUsage::UNIFORM, vk::BufferUsageFlags::UNIFORM_BUFFER),
        (BufferUsage::STORAGE, vk::BufferUsageFlags::STORAGE_BUFFER),
        (BufferUsage::INDIRECT, vk::BufferUsageFlags::INDIRECT_BUFFER),
        (BufferUsage::TRANSFER_SRC, vk::BufferUsageFlags::TRANSFER_SRC),
        (BufferUsage::TRANSFER_DST, vk::BufferUsageFlags::TRANSFER_DST),
    ];
    for (ours, theirs) in map {
        if u.contains(ours) {
            out |= theirs;
        }
    }
    out
}

pub(crate) fn texture_usage(u: TextureUsage, format: Format) -> vk::ImageUsageFlags {
    let mut out = vk::ImageUsageFlags::empty();
    if u.contains(TextureUsage::RENDER_TARGET) {
        out |= if format.is_depth() { vk::ImageUsageFlags::DEPTH_STENCIL_ATTACHMENT } else { vk::ImageUsageFlags::COLOR_ATTACHMENT };
    }
    if u.contains(TextureUsage::SAMPLED) {
        out |= vk::ImageUsageFlags::SAMPLED;
    }
    if u.contains(TextureUsage::STORAGE) {
        out |= vk::ImageUsageFlags::STORAGE;
    }
    if u.contains(TextureUsage::TRANSFER_SRC) {
        out |= vk::ImageUsageFlags::TRANSFER_SRC;
    }
    if u.contains(TextureUsage::TRANSFER_DST) {
        out |= vk::ImageUsageFlags::TRANSFER_DST;
    }
    out
}

pub(crate) fn aspect(format: Format) -> vk::ImageAspectFlags {
    if format.is_depth() {
        vk::ImageAspectFlags::DEPTH
    } else {
        vk::ImageAspectFlags::COLOR
    }
}

pub(crate) fn memory_location(m: MemoryLocation) -> gpu_allocator::MemoryLocation {
    match m {
        MemoryLocation::GpuOnly => gpu_allocator::MemoryLocation::GpuOnly,
        MemoryLocation::CpuToGpu => gpu_allocator::MemoryLocation::CpuToGpu,
        MemoryLocation::GpuToCpu => gpu_allocator::MemoryLocation::GpuToCpu,
    }
}

pub(crate) fn shader_stages(s: ShaderStages) -> vk::ShaderStageFlags {
    let mut out = vk::ShaderStageFlags::empty();
    if s.contains(ShaderStages::VERTEX) {
        out |= vk::ShaderStageFlags::VERTEX;
    }
    if s.contains(ShaderStages::FRAGMENT) {
        out |= vk::ShaderStageFlags::FRAGMENT;
    }
    if s.contains(ShaderStages::COMPUTE) {
        out |= vk::ShaderStageFlags::COMPUTE;
    }
    out
}

pub(crate) fn compare_op(c: CompareOp) -> vk::CompareOp {
    match c {
        CompareOp::Never => vk::CompareOp::NEVER,
        CompareOp::Less => vk::CompareOp::LESS,
        CompareOp::Equal => vk::CompareOp::EQUAL,
        CompareOp::LessEqual => vk::CompareOp::LESS_OR_EQUAL,
        CompareOp::Greater => vk::CompareOp::GREATER,
        CompareOp::GreaterEqual => vk::CompareOp::GREATER_OR_EQUAL,
        CompareOp::Always => vk::CompareOp::ALWAYS,
    }
}

pub(crate) fn topology(t: PrimitiveTopology) -> vk::PrimitiveTopology {
    match t {
        PrimitiveTopology::TriangleList => vk::PrimitiveTopology::TRIANGLE_LIST,
        PrimitiveTopology::TriangleStrip => vk::PrimitiveTopology::TRIANGLE_STRIP,
        PrimitiveTopology::LineList => vk::PrimitiveTopology::LINE_LIST,
    }
}

pub(crate) fn polygon_mode(p: PolygonMode) -> vk::PolygonMode {
    match p {
        PolygonMode::Fill => vk::PolygonMode::FILL,
        PolygonMode::Line => vk::PolygonMode::LINE,
    }
}

pub(crate) fn cull_mode(c: CullMode) -> vk::CullModeFlags {
    match c {
        CullMode::None => vk::CullModeFlags::NONE,
        CullMode::Front => vk::CullModeFlags::FRONT,
        CullMode::Back => vk::CullModeFlags::BACK,
    }
}

pub(crate) fn front_face(f: FrontFace) -> vk::FrontFace {
    match f {
        FrontFace::CounterClockwise => vk::FrontFace::COUNTER_CLOCKWISE,
        FrontFace::Clockwise => vk::FrontFace::CLOCKWISE,
    }
}

pub(crate) fn blend_factor(b: BlendFactor) -> vk::BlendFactor {
    match b {
        BlendFactor::Zero => vk::BlendFactor::ZERO,
        BlendFactor::One => vk::BlendFactor::ONE,
        BlendFactor::SrcAlpha => vk::BlendFactor::SRC_ALPHA,
        BlendFactor::OneMinusSrcAlpha => vk::BlendFactor::ONE_MINUS_SRC_ALPHA,
        BlendFactor::DstColor => vk::BlendFactor::DST_COLOR,
    }
}

pub(crate) fn filter(f: Filter) -> vk::Filter {
    match f {
        Filter::Nearest => vk::Filter::NEAREST,
        Filter::Linear => vk::Filter::LINEAR,
    }
}

pub(crate) fn mipmap_mode(f: Filter) -> vk::SamplerMipmapMode {
    match f {
        Filter::Nearest => vk::SamplerMipmapMode::NEAREST,
        Filter::Linear => vk::SamplerMipmapMode::LINEAR,
    }
}

pub(crate) fn address_mode(a: AddressMode) -> vk::SamplerAddressMode {
    match a {
        AddressMode::Repeat => vk::SamplerAddressMode::REPEAT,
        AddressMode::ClampToEdge => vk::SamplerAddressMode::CLAMP_TO_EDGE,
        AddressMode::MirrorRepeat => vk::SamplerAddressMode::MIRRORED_REPEAT,
    }
}

/// Layout, pipeline stages and access of a texture in `state`.
/// An image's layout, pipeline stages and access: one side of a barrier.
pub(crate) type ImageAccess = (vk::ImageLayout, vk::PipelineStageFlags2, vk::AccessFlags2);

/// The barrier moving `range` of `image` from `from` to `to` (no queue
/// family transfer): the one image barrier every RHI path records.
pub(crate) fn image_barrier(
    image: vk::Image,
    range: vk::ImageSubresourceRange,
    from: ImageAccess,
    to: ImageAccess,
) -> vk::ImageMemoryBarrier2<'static> {
    vk::ImageMemoryBarrier2::default()
        .src_stage_mask(from.1)
        .src_access_mask(from.2)
        .dst_stage_mask(to.1)
        .dst_access_mask(to.2)
        .old_layout(from.0)
        .new_layout(to.0)
        .src_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
        .dst_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
        .image(image)
        .subresource_range(range)
}

pub(crate) fn texture_state(state: TextureState) -> (vk::ImageLayout, vk::PipelineStageFlags2, vk::AccessFlags2) {
    use vk::AccessFlags2 as A;
    use vk::PipelineStageFlags2 as S;
    match state {
        TextureState::Undefined => (vk::ImageLayout::UNDEFINED, S::TOP_OF_PIPE, A::NONE),
        TextureState::ColorAttachment => {
            (vk::ImageLayout::COLOR_ATTACHMENT_OPTIMAL, S::COLOR_ATTACHMENT_OUTPUT, A::COLOR_ATTACHMENT_READ | A::COLOR_ATTACHMENT_WRITE)
        }
        TextureState::DepthAttachment => (
            vk::ImageLayout::DEPTH_ATTACHMENT_OPTIMAL,
            S::EARLY_FRAGMENT_TESTS | S::LATE_FRAGMENT_TESTS,
            A::DEPTH_STENCIL_ATTACHMENT_READ | A::DEPTH_STENCIL_ATTACHMENT_WRITE,
        ),
        TextureState::ShaderRead => {
            (vk::ImageLayout::SHADER_READ_ONLY_OPTIMAL, S::FRAGMENT_SHADER | S::COMPUTE_SHADER | S::VERTEX_SHADER, A::SHADER_SAMPLED_READ)
        }
        TextureState::General => (vk::ImageLayout::GENERAL, S::COMPUTE_SHADER, A::SHADER_STORAGE_READ | A::SHADER_STORAGE_WRITE),
        // Copies and blits (mip generation) read and write textures in the
        // transfer states; sync2's COPY stage does not cover BLIT.
        TextureState::TransferSrc => (vk::ImageLayout::TRANSFER_SRC_OPTIMAL, S::COPY | S::BLIT, A::TRANSFER_READ),
        TextureState::TransferDst => (vk::ImageLayout::TRANSFER_DST_OPTIMAL, S::COPY | S::BLIT | S::CLEAR, A::TRANSFER_WRITE),
        TextureState::Present => (vk::ImageLayout::PRESENT_SRC_KHR, S::BOTTOM_OF_PIPE, A::NONE),
    }
}

/// Pipeline stages and access of a buffer in `state`.
pub(crate) fn buffer_state(state: BufferState) -> (vk::PipelineStageFlags2, vk::AccessFlags2) {
    use vk::AccessFlags2 as A;
    use vk::PipelineStageFlags2 as S;
    match state {
        BufferState::TransferDst => (S::COPY | S::CLEAR, A::TRANSFER_WRITE),
        BufferState::TransferSrc => (S::COPY, A::TRANSFER_READ),
        BufferState::ShaderRead => (
            S::VERTEX_INPUT | S::VERTEX_SHADER | S::FRAGMENT_SHADER | S::COMPUTE_SHADER,
            A::VERTEX_ATTRIBUTE_READ | A::INDEX_READ | A::UNIFORM_READ | A::SHADER_STORAGE_READ,
        ),
        BufferState::ShaderWrite => (S::COMPUTE_SHADER, A::SHADER_STORAGE_WRITE | A::SHADER_STORAGE_READ),
        BufferState::Indirect => (S::DRAW_INDIRECT, A::INDIRECT_COMMAND_READ),
        BufferState::HostRead => (S::HOST, A::HOST_READ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffer_usage_maps_every_flag() {
        let all = BufferUsage::VERTEX
            | BufferUsage::INDEX
            | BufferUsage::UNIFORM
            | BufferUsage::STORAGE
            | BufferUsage::INDIRECT
            | BufferUsage::TRANSFER_SRC
            | BufferUsage::TRANSFER_DST;
        let vk_all = buffer_usage(all);
        assert!(vk_all.contains(vk::BufferUsageFlags::INDIRECT_BUFFER));
        assert_eq!(vk_all.as_raw().count_ones(), 7);
        assert!(buffer_usage(BufferUsage::empty()).is_empty());
    }

    #[test]
    fn render_target_usage_depends_on_format() {
        let c = texture_usage(TextureUsage::RENDER_TARGET, Format::Rgba8Unorm);
        let d = texture_usage(TextureUsage::RENDER_TARGET, Format::Depth32Float);
        assert_eq!(c, vk::ImageUsageFlags::COLOR_ATTACHMENT);
        assert_eq!(d, vk::ImageUsageFlags::DEPTH_STENCIL_ATTACHMENT);
        assert_eq!(aspect(Format::Depth32Float), vk::ImageAspectFlags::DEPTH);
    }

    #[test]
    fn one_and_two_channel_formats_map_to_their_vulkan_formats() {
        assert_eq!(format(Format::R8Unorm), vk::Format::R8_UNORM);
        assert_eq!(format(Format::Rg8Unorm), vk::Format::R8G8_UNORM);
        assert_eq!(Format::R8Unorm.bytes_per_pixel(), 1);
        assert_eq!(Format::Rg8Unorm.bytes_per_pixel(), 2);
        assert_eq!(Format::Rgba16Float.bytes_per_pixel(), 8);
        assert_eq!((format(Format::Rg16Float), Format::Rg16Float.bytes_per_pixel()), (vk::Format::R16G16_SFLOAT, 4));
    }

    #[test]
    fn block_compressed_formats_map_and_size_by_whole_blocks() {
        assert_eq!(format(Format::Bc1RgbaSrgb), vk::Format::BC1_RGBA_SRGB_BLOCK);
        assert_eq!(format(Format::Bc7Unorm), vk::Format::BC7_UNORM_BLOCK);
        assert_eq!(format(Format::Bc5Unorm), vk::Format::BC5_UNORM_BLOCK);
        for f in Format::BLOCK_COMPRESSED {
            assert!(f.is_block_compressed() && !f.is_depth(), "{f:?}");
            assert_eq!(aspect(f), vk::ImageAspectFlags::COLOR);
        }
        assert!(!Format::Rgba8Unorm.is_block_compressed());
        assert_eq!((Format::Bc1RgbaUnorm.bytes_per_block(), Format::Bc4Unorm.bytes_per_block()), (8, 8));
        assert_eq!((Format::Bc3Srgb.bytes_per_block(), Format::Bc7Srgb.bytes_per_block()), (16, 16));
        // 5x3 is 2x1 blocks; 1x1 and 4x4 one block; uncompressed formats per texel.
        assert_eq!(Format::Bc1RgbaUnorm.image_size(5, 3), 16);
        assert_eq!(Format::Bc7Unorm.image_size(1, 1), 16);
        assert_eq!(Format::Bc7Unorm.image_size(4, 4), 16);
        assert_eq!(Format::Bc7Unorm.image_size(8, 5), 64);
        assert_eq!(Format::Rgba8Unorm.image_size(5, 3), 60);
    }

    #[test]
    fn texture_states_have_matching_layouts() {
        assert_eq!(texture_state(TextureState::ShaderRead).0, vk::ImageLayout::SHADER_READ_ONLY_OPTIMAL);
        assert_eq!(texture_state(TextureState::TransferSrc).0, vk::ImageLayout::TRANSFER_SRC_OPTIMAL);
        assert_eq!(texture_state(TextureState::Undefined).2, vk::AccessFlags2::NONE);
    }

    #[test]
    fn vertex_format_sizes_match_vulkan_formats() {
        assert_eq!(VertexFormat::Float32x3.size(), 12);
        assert_eq!(vertex_format(VertexFormat::Unorm8x4), vk::Format::R8G8B8A8_UNORM);
    }
}
