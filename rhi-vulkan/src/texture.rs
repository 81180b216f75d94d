//! Textures: 2D color and depth render targets, sampled and storage images,
//! and sampled cube maps ([`TextureDimension::Cube`]: environment maps),
//! with mip chains (sampled textures) uploaded in one call
//! ([`Device::create_texture_with_data`]), the levels supplied or generated
//! on the GPU by linear blits.

use crate::conv;
use crate::device::{read, write, Device, Retired};
use crate::error::{vk_err, Result, RhiError, Usage};
use crate::handle::Handle;
use crate::types::{BufferUsage, Format, TextureState, TextureUsage};
use crate::BufferDesc;
use ash::vk;
use gpu_allocator::vulkan::{Allocation, AllocationCreateDesc, AllocationScheme};
use gpu_allocator::MemoryLocation;

/// A texture's description: plain data.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TextureDesc {
    /// Names the texture in errors and in its gpu-allocator allocation.
    pub label: String,
    /// Width in pixels of level 0: at least 1, at most what the device
    /// supports for the format and usage.
    pub width: u32,
    /// Height in pixels of level 0 (as for `width`).
    pub height: u32,
    /// The texel format.
    pub format: Format,
    /// What the texture may be used for; checked against the device's
    /// support for the format.
    pub usage: TextureUsage,
    /// Mip levels, 1 (no chain) up to [`TextureDesc::full_mip_count`]. Level
    /// `l` is `max(1, width >> l)` by `max(1, height >> l)`. Views and
    /// barriers cover every level; only sampled and transfer textures may
    /// have more than one (attachments and storage images have one).
    pub mip_levels: u32,
    /// A 2D image or a cube map (six square faces).
    pub dimension: TextureDimension,
    /// Samples per pixel: 1, or 2, 4 or 8 for a multisampled render target
    /// (MSAA: an attachment only, resolved into a one-sample texture at the
    /// end of a pass, `ColorAttachment::resolve`), where the device has them
    /// for the format ([`Device::supports_samples`]).
    pub samples: u32,
}

/// What a texture is: one 2D image per level, or a cube map's six.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum TextureDimension {
    /// One 2D image per mip level (`texture_2d`, `texture_depth_2d`,
    /// `texture_storage_2d` in WGSL).
    #[default]
    D2,
    /// Six square faces per mip level, in Vulkan's layer order +X, -X, +Y,
    /// -Y, +Z, -Z, sampled by direction (`texture_cube`). Face texel (u, v)
    /// of face +X looks along (1, -t, -s), -X (-1, -t, s), +Y (s, 1, t), -Y
    /// (s, -1, -t), +Z (s, -t, 1), -Z (-s, -t, -1), with s = 2u - 1 and
    /// t = 2v - 1 (the Vulkan specification's cube map face selection,
    /// inverted; row 0 is v = 0). Sampled and copied only: not a render
    /// target or storage image. A level's bytes are its six faces one
    /// after another ([`TextureDesc::level_size`]).
    Cube,
}

impl TextureDimension {
    /// Array layers: 1, or 6 for a cube.
    pub fn layers(self) -> u32 {
        match self {
            Self::D2 => 1,
            Self::Cube => 6,
        }
    }
}

impl TextureDesc {
    /// A color target that can also be copied out (readback) and sampled.
    pub fn render_target(label: &str, width: u32, height: u32, format: Format) -> Self {
        Self {
            label: label.into(),
            width,
            height,
            format,
            usage: TextureUsage::RENDER_TARGET | TextureUsage::TRANSFER_SRC | TextureUsage::SAMPLED,
            mip_levels: 1,
            dimension: TextureDimension::D2,
            samples: 1,
        }
    }
    /// A D32 depth target, sampleable (shadow maps).
    pub fn depth(label: &str, width: u32, height: u32) -> Self {
        Self {
            label: label.into(),
            width,
            height,
            format: Format::Depth32Float,
            usage: TextureUsage::RENDER_TARGET | TextureUsage::SAMPLED,
            mip_levels: 1,
            dimension: TextureDimension::D2,
            samples: 1,
        }
    }
    /// A texture sampled by shaders and filled by copies.
    pub fn sampled(label: &str, width: u32, height: u32, format: Format) -> Self {
        Self {
            label: label.into(),
            width,
            height,
            format,
            usage: TextureUsage::SAMPLED | TextureUsage::TRANSFER_DST,
            mip_levels: 1,
            dimension: TextureDimension::D2,
            samples: 1,
        }
    }

    /// A multisampled render target (color or depth by `format`) with
    /// `samples` samples per pixel: drawn into and resolved, never sampled
    /// or copied.
    pub fn multisampled(label: &str, width: u32, height: u32, format: Format, samples: u32) -> Self {
        Self {
            label: label.into(),
            width,
            height,
            format,
            usage: TextureUsage::RENDER_TARGET,
            mip_levels: 1,
            dimension: TextureDimension::D2,
            samples,
        }
    }

    /// A cube map of `size` x `size` faces, sampled by shaders and filled
    /// by copies.
    pub fn cube(label: &str, size: u32, format: Format) -> Self {
        Self { dimension: TextureDimension::Cube, ..Self::sampled(label, size, size, format) }
    }

    /// The same texture with `n` mip levels.
    pub fn with_mip_levels(self, n: u32) -> Self {
        Self { mip_levels: n, ..self }
    }

    /// The levels of a full mip chain down to 1x1 for an extent:
    /// `floor(log2(max(width, height))) + 1` (0 for an empty extent).
    pub fn full_mip_count(width: u32, height: u32) -> u32 {
        u32::BITS - width.max(height).leading_zeros()
    }

    /// Width and height of mip level `level` (at least 1 each).
    pub fn level_extent(&self, level: u32) -> (u32, u32) {
        let shrink = |n: u32| n.checked_shr(level).unwrap_or(0).max(1);
        (shrink(self.width), shrink(self.height))
    }

    /// Bytes of mip level `level`, tightly packed: rows of texels, or of
    /// whole 4x4 blocks for block-compressed formats (a level's extent
    /// rounded up to whole blocks: a 2x1 level of BC1 is one 8-byte block),
    /// times the layers (a cube's six faces, one after another).
    pub fn level_size(&self, level: u32) -> u64 {
        let (w, h) = self.level_extent(level);
        self.format.image_size(w, h) * u64::from(self.dimension.layers())
    }
}

/// The texels [`Device::create_texture_with_data`] uploads: tightly packed
/// rows (`width_l * bytes_per_pixel` bytes each, no padding), top row first;
/// for block-compressed formats, rows of 4x4 blocks
/// (`ceil(width_l / 4) * bytes_per_block` bytes each, `ceil(height_l / 4)`
/// rows: [`TextureDesc::level_size`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TextureData<'a> {
    /// Level 0 only; the remaining levels are generated on the GPU by linear
    /// blits, each from the level above ([`crate::CommandList::generate_mips`]).
    Level0(&'a [u8]),
    /// One slice per mip level, level 0 first.
    AllLevels(&'a [&'a [u8]]),
}

/// Handle to a texture owned by the device.
pub type TextureHandle = Handle<TextureEntry>;

#[doc(hidden)]
pub struct TextureEntry {
    pub(crate) raw: vk::Image,
    pub(crate) view: vk::ImageView,
    allocation: Option<Allocation>,
    pub(crate) desc: TextureDesc,
    /// Device-local bytes charged to the device's budget.
    charge: u64,
}

impl TextureEntry {
    pub(crate) fn destroy(mut self, device: &Device) {
        // SAFETY: no submitted work uses the view or image any more (deletion
        // queue or idle shutdown); each is destroyed once.
        unsafe { device.raw.destroy_image_view(self.view, None) };
        if let Some(a) = self.allocation.take() {
            if let Err(e) = device.allocator.lock().unwrap_or_else(|p| p.into_inner()).free(a) {
                log::error!("freeing texture {:?}: {e}", self.desc.label);
            }
        }
        device.memory_budget.release(self.charge);
        // SAFETY: as above.
        unsafe { device.raw.destroy_image(self.raw, None) };
    }
}

impl Device {
    /// Creates a texture. Zero or oversized extents, an empty usage, mip
    /// levels outside `1..=`[`TextureDesc::full_mip_count`] or past the
    /// format's maximum, and a format the device cannot use that way are
    /// errors; nothing is created then. A block-compressed format on a
    /// device without [`crate::DeviceFeatures::texture_compression_bc`] is
    /// [`RhiError::Unsupported`].
    pub fn create_texture(&self, desc: &TextureDesc) -> Result<TextureHandle> {
        check_desc(desc)?;
        if desc.format.is_block_compressed() && !self.features().texture_compression_bc {
            return Err(RhiError::Unsupported(format!(
                "texture {:?}: {:?} is block-compressed and {} has no textureCompressionBC (or it was turned off)",
                desc.label,
                desc.format,
                self.name()
            )));
        }
        let format = conv::format(desc.format);
        let usage = conv::texture_usage(desc.usage, desc.format);
        self.check_texture_support(desc, format, usage)?;
        let info = vk::ImageCreateInfo::default()
            .image_type(vk::ImageType::TYPE_2D)
            .format(format)
            .extent(vk::Extent3D { width: desc.width, height: desc.height, depth: 1 })
            .mip_levels(desc.mip_levels)
            .array_layers(desc.dimension.layers())
            .flags(create_flags(desc.dimension))
            .samples(conv::samples(desc.samples))
            .tiling(vk::ImageTiling::OPTIMAL)
            .usage(usage)
            .sharing_mode(vk::SharingMode::EXCLUSIVE)
            .initial_layout(vk::ImageLayout::UNDEFINED);
        // SAFETY: valid device and create info (format/usage checked above).
        let raw = unsafe { self.raw.create_image(&info, None) }.map_err(vk_err("vkCreateImage"))?;
        // SAFETY: `raw` is a live image of this device.
        let requirements = unsafe { self.raw.get_image_memory_requirements(raw) };
        // Device-local memory past the (emulated) budget: refused before asking.
        if let Err(e) = self.memory_budget.charge(requirements.size) {
            // SAFETY: never bound or used.
            unsafe { self.raw.destroy_image(raw, None) };
            return Err(e);
        }
        let allocation = self.allocator.lock().unwrap_or_else(|p| p.into_inner()).allocate(&AllocationCreateDesc {
            name: &desc.label,
            requirements,
            location: MemoryLocation::GpuOnly,
            linear: false,
            allocation_scheme: AllocationScheme::GpuAllocatorManaged,
        });
        let allocation = match allocation {
            Ok(a) => a,
            Err(e) => {
                self.memory_budget.release(requirements.size);
                // SAFETY: never bound or used.
                unsafe { self.raw.destroy_image(raw, None) };
                return Err(e.into());
            }
        };
        let cleanup = |allocation: Allocation| {
            self.memory_budget.release(requirements.size);
            let _ = self.allocator.lock().unwrap_or_else(|p| p.into_inner()).free(allocation);
            // SAFETY: never used by the GPU.
            unsafe { self.raw.destroy_image(raw, None) };
        };
        // SAFETY: the allocation satisfies the image's requirements.
        if let Err(e) = unsafe { self.raw.bind_image_memory(raw, allocation.memory(), allocation.offset()) } {
            cleanup(allocation);
            return Err(vk_err("vkBindImageMemory")(e));
        }
        let view_info = vk::ImageViewCreateInfo::default()
            .image(raw)
            .view_type(match desc.dimension {
                TextureDimension::D2 => vk::ImageViewType::TYPE_2D,
                TextureDimension::Cube => vk::ImageViewType::CUBE,
            })
            .format(format)
            .subresource_range(subresource_range(desc));
        // Only a texture shaders or passes can see gets a view (Vulkan
        // forbids views of transfer-only images); every use of the view
        // checks one of these usages first.
        let viewable = TextureUsage::RENDER_TARGET.bits() | TextureUsage::SAMPLED.bits() | TextureUsage::STORAGE.bits();
        let view = if desc.usage.bits() & viewable == 0 {
            vk::ImageView::null()
        } else {
            // SAFETY: `raw` is bound to memory, has a usage views allow, and
            // the view matches its format.
            match unsafe { self.raw.create_image_view(&view_info, None) } {
                Ok(v) => v,
                Err(e) => {
                    cleanup(allocation);
                    return Err(vk_err("vkCreateImageView")(e));
                }
            }
        };
        let entry = TextureEntry { raw, view, allocation: Some(allocation), desc: desc.clone(), charge: requirements.size };
        Ok(write(&self.resources.textures).insert(entry))
    }

    /// Checks `desc` against what the device supports for its format and
    /// usage: the format at all, the extent and the mip levels.
    fn check_texture_support(&self, desc: &TextureDesc, format: vk::Format, usage: vk::ImageUsageFlags) -> Result<()> {
        // SAFETY: plain query on a valid physical device.
        let props = unsafe {
            self.instance_raw().get_physical_device_image_format_properties(
                self.physical,
                format,
                vk::ImageType::TYPE_2D,
                vk::ImageTiling::OPTIMAL,
                usage,
                create_flags(desc.dimension),
            )
        }
        .map_err(|_| {
            RhiError::Unsupported(format!(
                "texture {:?}: format {:?} with usage {:?} is not supported by {}",
                desc.label,
                desc.format,
                desc.usage,
                self.name()
            ))
        })?;
        let resource = || format!("texture {:?} ({:?}, the device's maximum)", desc.label, desc.format);
        let limits = [
            ("width", desc.width, props.max_extent.width),
            ("height", desc.height, props.max_extent.height),
            ("mip levels", desc.mip_levels, props.max_mip_levels),
            ("array layers", desc.dimension.layers(), props.max_array_layers),
        ];
        for (what, value, max) in limits {
            if value > max {
                return Err(RhiError::OutOfLimits { what, resource: resource(), value: u64::from(value), min: 1, max: u64::from(max) });
            }
        }
        if !props.sample_counts.contains(conv::samples(desc.samples)) {
            return Err(RhiError::Unsupported(format!(
                "texture {:?}: {} samples of {:?} are not supported by {} (it has {:?})",
                desc.label,
                desc.samples,
                desc.format,
                self.name(),
                props.sample_counts
            )));
        }
        Ok(())
    }

    /// Whether a render target of `format` can have `samples` samples per
    /// pixel on this device (1 always can).
    pub fn supports_samples(&self, format: Format, samples: u32) -> bool {
        if check_samples(samples, "").is_err() {
            return false;
        }
        let usage = conv::texture_usage(TextureUsage::RENDER_TARGET, format);
        // SAFETY: plain query on a valid physical device.
        let props = unsafe {
            self.instance_raw().get_physical_device_image_format_properties(
                self.physical,
                conv::format(format),
                vk::ImageType::TYPE_2D,
                vk::ImageTiling::OPTIMAL,
                usage,
                vk::ImageCreateFlags::empty(),
            )
        };
        props.is_ok_and(|p| p.sample_counts.contains(conv::samples(samples)))
    }

    /// Creates a texture and fills it: every level from `data`, or level 0
    /// from it and the rest generated by linear blits. The usage gets
    /// `TRANSFER_DST` (and `TRANSFER_SRC` when generating) added and must
    /// include `SAMPLED`; every level is left in [`TextureState::ShaderRead`].
    /// The upload goes through a host-visible staging buffer and
    /// [`Device::immediate`] (it waits for the GPU).
    ///
    /// A slice count other than the mip levels or a slice whose length is
    /// not exactly its level's [`TextureDesc::level_size`] is
    /// [`RhiError::WrongCount`], a usage without `SAMPLED`
    /// [`RhiError::MissingUsage`], and a description `create_texture`
    /// refuses its error there;
    /// generating levels of a format without linear blits
    /// ([`Device::supports_mip_generation`]; never block-compressed formats,
    /// which are not blit destinations) is [`RhiError::Unsupported`].
    /// Nothing is created then; a later failure destroys what was made.
    pub fn create_texture_with_data(&self, desc: &TextureDesc, data: TextureData<'_>) -> Result<TextureHandle> {
        check_desc(desc)?;
        let (levels, generate): (&[&[u8]], bool) = match &data {
            TextureData::Level0(d) => (std::slice::from_ref(d), desc.mip_levels > 1),
            TextureData::AllLevels(ls) => (ls, false),
        };
        if !generate && levels.len() != desc.mip_levels as usize {
            let resource = format!("texture {:?} with {} mip levels", desc.label, desc.mip_levels);
            let (expected, found) = (u64::from(desc.mip_levels), levels.len() as u64);
            return Err(RhiError::WrongCount { what: "level slices", resource, expected, found });
        }
        for (level, d) in (0u32..).zip(levels) {
            let want = desc.level_size(level);
            if d.len() as u64 != want {
                let (w, h) = desc.level_extent(level);
                let resource = format!("level {level} ({w}x{h} {:?}) of texture {:?}", desc.format, desc.label);
                return Err(RhiError::WrongCount { what: "bytes", resource, expected: want, found: d.len() as u64 });
            }
        }
        if !desc.usage.contains(TextureUsage::SAMPLED) {
            let (label, usage) = (desc.label.clone(), Usage::Texture(TextureUsage::SAMPLED));
            return Err(RhiError::MissingUsage { label, usage, needed_for: "an upload (uploaded textures end in ShaderRead)" });
        }
        if generate {
            self.check_mip_generation(desc)?;
        }
        let mut usage = desc.usage | TextureUsage::TRANSFER_DST;
        if generate {
            usage |= TextureUsage::TRANSFER_SRC;
        }
        let desc = TextureDesc { usage, ..desc.clone() };
        // Each level at a 16-byte boundary: a multiple of every texel size and of 4.
        let mut offsets = Vec::with_capacity(levels.len());
        let mut total = 0u64;
        for d in levels {
            total = total.next_multiple_of(16);
            offsets.push(total);
            total += d.len() as u64;
        }
        let texture = self.create_texture(&desc)?;
        self.memory_budget.note_staged(total);
        let staging = match self.create_buffer(&BufferDesc::host_visible("texture staging", total, BufferUsage::TRANSFER_SRC)) {
            Ok(b) => b,
            Err(e) => {
                self.destroy_texture(texture);
                return Err(e);
            }
        };
        let uploaded = levels.iter().zip(&offsets).try_for_each(|(d, &offset)| self.write_buffer(staging, offset, d)).and_then(|()| {
            self.immediate(|cmd| {
                cmd.texture_barrier(texture, TextureState::Undefined, TextureState::TransferDst)?;
                for (level, &offset) in (0u32..).zip(&offsets) {
                    cmd.copy_buffer_to_texture_level(staging, offset, texture, level)?;
                }
                if generate {
                    cmd.generate_mips(texture)
                } else {
                    cmd.texture_barrier(texture, TextureState::TransferDst, TextureState::ShaderRead)
                }
            })
        });
        // `immediate` has waited for the GPU (or submitted nothing), and the
        // staging buffer's handle never left this function.
        self.destroy_idle_buffer(staging);
        match uploaded {
            Ok(()) => Ok(texture),
            Err(e) => {
                self.destroy_texture(texture);
                Err(e)
            }
        }
    }

    /// Whether mip levels of `format` can be generated on the GPU
    /// ([`TextureData::Level0`], [`crate::CommandList::generate_mips`]):
    /// a color format whose optimal-tiling features include blit source,
    /// blit destination and linear filtering.
    pub fn supports_mip_generation(&self, format: Format) -> bool {
        if format.is_depth() {
            return false; // Depth blits must use nearest filtering.
        }
        if format.is_block_compressed() {
            return false; // Compressed formats cannot be blit destinations.
        }
        let needed =
            vk::FormatFeatureFlags::BLIT_SRC | vk::FormatFeatureFlags::BLIT_DST | vk::FormatFeatureFlags::SAMPLED_IMAGE_FILTER_LINEAR;
        // SAFETY: plain query on a valid physical device.
        let props = unsafe { self.instance_raw().get_physical_device_format_properties(self.physical, conv::format(format)) };
        props.optimal_tiling_features.contains(needed)
    }

    /// Whether textures of `format` can be sampled with linear filtering on
    /// this device: its optimal-tiling features include `SAMPLED_IMAGE` and
    /// `SAMPLED_IMAGE_FILTER_LINEAR`, and, for a block-compressed format,
    /// the device has [`crate::DeviceFeatures::texture_compression_bc`] on.
    pub fn supports_sampled_format(&self, format: Format) -> bool {
        if format.is_block_compressed() && !self.features().texture_compression_bc {
            return false;
        }
        let needed = vk::FormatFeatureFlags::SAMPLED_IMAGE | vk::FormatFeatureFlags::SAMPLED_IMAGE_FILTER_LINEAR;
        // SAFETY: plain query on a valid physical device.
        let props = unsafe { self.instance_raw().get_physical_device_format_properties(self.physical, conv::format(format)) };
        props.optimal_tiling_features.contains(needed)
    }

    /// [`RhiError::Unsupported`] unless levels of `desc`'s format can be generated.
    pub(crate) fn check_mip_generation(&self, desc: &TextureDesc) -> Result<()> {
        if self.supports_mip_generation(desc.format) {
            return Ok(());
        }
        Err(RhiError::Unsupported(format!(
            "texture {:?}: {} cannot generate mip levels of {:?} (needs linear blits: BLIT_SRC, BLIT_DST and SAMPLED_IMAGE_FILTER_LINEAR)",
            desc.label,
            self.name(),
            desc.format
        )))
    }

    /// The description `texture` was created with; an
    /// [`RhiError::InvalidHandle`] if it is not alive.
    pub fn texture_desc(&self, texture: TextureHandle) -> Result<TextureDesc> {
        read(&self.resources.textures).get(texture).map(|t| t.desc.clone()).ok_or_else(|| RhiError::InvalidHandle(format!("{texture:?}")))
    }

    /// Destroys the texture once the GPU no longer uses it.
    pub fn destroy_texture(&self, texture: TextureHandle) {
        let entry = write(&self.resources.textures).remove(texture);
        if let Some(entry) = entry {
            self.retire(Retired::Texture(entry));
        }
    }
}

/// What `create_texture` checks before asking the device: extent, usage,
/// mip levels and the usages a format or a mip chain allows.
fn check_desc(desc: &TextureDesc) -> Result<()> {
    let resource = || format!("texture {:?} ({}x{})", desc.label, desc.width, desc.height);
    for (what, value) in [("width", desc.width), ("height", desc.height)] {
        if value == 0 {
            return Err(RhiError::OutOfLimits { what, resource: resource(), value: 0, min: 1, max: u64::from(u32::MAX) });
        }
    }
    if desc.usage.is_empty() {
        return Err(RhiError::InvalidDesc(format!("texture {:?} has no usage", desc.label)));
    }
    let full = TextureDesc::full_mip_count(desc.width, desc.height);
    if desc.mip_levels == 0 || desc.mip_levels > full {
        let (value, max) = (u64::from(desc.mip_levels), u64::from(full));
        return Err(RhiError::OutOfLimits { what: "mip levels", resource: resource(), value, min: 1, max });
    }
    if desc.format.is_block_compressed() && (desc.usage.contains(TextureUsage::RENDER_TARGET) || desc.usage.contains(TextureUsage::STORAGE))
    {
        return Err(RhiError::Unsupported(format!(
            "texture {:?}: {:?} is block-compressed: sampled and copied only, not a render target or storage image",
            desc.label, desc.format
        )));
    }
    if desc.format.is_depth() && desc.usage.contains(TextureUsage::STORAGE) {
        return Err(RhiError::Unsupported(format!("texture {:?}: depth formats cannot be storage images", desc.label)));
    }
    check_samples(desc.samples, &format!("texture {:?}", desc.label))?;
    if desc.samples > 1 && (desc.usage != TextureUsage::RENDER_TARGET || desc.mip_levels != 1 || desc.dimension != TextureDimension::D2) {
        return Err(RhiError::Unsupported(format!(
            "texture {:?}: a multisampled texture is a 2D render target of one level only (resolved, never sampled or copied)",
            desc.label
        )));
    }
    if desc.dimension == TextureDimension::Cube {
        if desc.width != desc.height {
            return Err(RhiError::InvalidDesc(format!(
                "cube texture {:?} is {}x{}: a cube's faces are square",
                desc.label, desc.width, desc.height
            )));
        }
        if desc.usage.intersects(TextureUsage::RENDER_TARGET | TextureUsage::STORAGE) || desc.format.is_depth() {
            return Err(RhiError::Unsupported(format!(
                "cube texture {:?}: cubes are sampled colour textures filled by copies, not render targets, storage or depth",
                desc.label
            )));
        }
    }
    // A view of several levels cannot be an attachment or a storage image
    // (and the RHI makes one view per texture).
    if desc.mip_levels > 1 && (desc.usage.contains(TextureUsage::RENDER_TARGET) || desc.usage.contains(TextureUsage::STORAGE)) {
        return Err(RhiError::Unsupported(format!(
            "texture {:?}: render targets and storage images have one mip level, not {}",
            desc.label, desc.mip_levels
        )));
    }
    Ok(())
}

/// Every mip level and layer of a texture.
pub(crate) fn subresource_range(desc: &TextureDesc) -> vk::ImageSubresourceRange {
    vk::ImageSubresourceRange {
        aspect_mask: conv::aspect(desc.format),
        base_mip_level: 0,
        level_count: desc.mip_levels,
        base_array_layer: 0,
        layer_count: desc.dimension.layers(),
    }
}

/// Errors unless `samples` is 1, 2, 4 or 8.
pub(crate) fn check_samples(samples: u32, resource: &str) -> Result<()> {
    if matches!(samples, 1 | 2 | 4 | 8) {
        return Ok(());
    }
    Err(RhiError::InvalidDesc(format!("{resource}: {samples} samples per pixel (1, 2, 4 or 8)")))
}

/// The image flags a dimension needs (a cube's view needs `CUBE_COMPATIBLE`).
fn create_flags(dimension: TextureDimension) -> vk::ImageCreateFlags {
    match dimension {
        TextureDimension::D2 => vk::ImageCreateFlags::empty(),
        TextureDimension::Cube => vk::ImageCreateFlags::CUBE_COMPATIBLE,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn full_mip_chains_end_at_one_by_one() {
        assert_eq!(TextureDesc::full_mip_count(1, 1), 1);
        assert_eq!(TextureDesc::full_mip_count(64, 64), 7);
        assert_eq!(TextureDesc::full_mip_count(64, 1), 7);
        assert_eq!(TextureDesc::full_mip_count(65, 3), 7);
        assert_eq!(TextureDesc::full_mip_count(u32::MAX, 1), 32);
        assert_eq!(TextureDesc::full_mip_count(0, 0), 0);
        let d = TextureDesc::sampled("t", 64, 16, Format::Rg8Unorm).with_mip_levels(7);
        assert_eq!(d.level_extent(0), (64, 16));
        assert_eq!(d.level_extent(3), (8, 2));
        assert_eq!(d.level_extent(6), (1, 1));
        assert_eq!(d.level_extent(40), (1, 1));
        assert_eq!(d.level_size(2), 16 * 4 * 2);
        // Block-compressed levels round up to whole 4x4 blocks.
        let bc = TextureDesc::sampled("bc", 8, 4, Format::Bc1RgbaUnorm).with_mip_levels(4);
        assert_eq!([0, 1, 2, 3].map(|l| bc.level_size(l)), [16, 8, 8, 8]);
        let bc7 = TextureDesc::sampled("bc7", 5, 3, Format::Bc7Srgb);
        assert_eq!(bc7.level_size(0), 2 * 16);
        assert!(check_desc(&bc7).is_ok());
        let target = TextureDesc::render_target("bc rt", 4, 4, Format::Bc7Unorm);
        assert!(matches!(check_desc(&target), Err(RhiError::Unsupported(_))));
    }

    #[test]
    fn mip_levels_are_checked_before_the_device_is_asked() {
        let d = TextureDesc::sampled("t", 8, 8, Format::Rgba8Unorm);
        assert!(check_desc(&d).is_ok());
        assert!(check_desc(&d.clone().with_mip_levels(4)).is_ok());
        for levels in [0, 5] {
            let r = check_desc(&d.clone().with_mip_levels(levels));
            assert!(matches!(r, Err(RhiError::OutOfLimits { what: "mip levels", min: 1, max: 4, .. })), "{levels}: {r:?}");
        }
        let rt = TextureDesc::render_target("rt", 8, 8, Format::Rgba8Unorm).with_mip_levels(2);
        assert!(matches!(check_desc(&rt), Err(RhiError::Unsupported(_))));
    }
}
