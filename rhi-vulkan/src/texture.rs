//! 2D textures: color and depth render targets, sampled and storage images.

use crate::conv;
use crate::device::{read, write, Device, Retired};
use crate::error::{vk_err, Result, RhiError};
use crate::handle::Handle;
use crate::types::{Format, TextureUsage};
use ash::vk;
use gpu_allocator::vulkan::{Allocation, AllocationCreateDesc, AllocationScheme};
use gpu_allocator::MemoryLocation;

/// A texture's description: plain data.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TextureDesc {
    pub label: String,
    pub width: u32,
    pub height: u32,
    pub format: Format,
    pub usage: TextureUsage,
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
        }
    }
}

/// Handle to a texture owned by the device.
pub type TextureHandle = Handle<TextureEntry>;

#[doc(hidden)]
pub struct TextureEntry {
    pub(crate) raw: vk::Image,
    pub(crate) view: vk::ImageView,
    allocation: Option<Allocation>,
    pub(crate) desc: TextureDesc,
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
        // SAFETY: as above.
        unsafe { device.raw.destroy_image(self.raw, None) };
    }
}

impl Device {
    /// Creates a texture. Zero or oversized extents, an empty usage and a
    /// format the device cannot use that way are errors.
    pub fn create_texture(&self, desc: &TextureDesc) -> Result<TextureHandle> {
        if desc.width == 0 || desc.height == 0 {
            return Err(RhiError::InvalidDesc(format!(
                "texture {:?} has extent {}x{}",
                desc.label, desc.width, desc.height
            )));
        }
        if desc.usage.is_empty() {
            return Err(RhiError::InvalidDesc(format!("texture {:?} has no usage", desc.label)));
        }
        if desc.format.is_depth() && desc.usage.contains(TextureUsage::STORAGE) {
            return Err(RhiError::Unsupported(format!(
                "texture {:?}: depth formats cannot be storage images",
                desc.label
            )));
        }
        let format = conv::format(desc.format);
        let usage = conv::texture_usage(desc.usage, desc.format);
        // SAFETY: plain query on a valid physical device.
        let props = unsafe {
            self.instance_raw().get_physical_device_image_format_properties(
                self.physical,
                format,
                vk::ImageType::TYPE_2D,
                vk::ImageTiling::OPTIMAL,
                usage,
                vk::ImageCreateFlags::empty(),
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
        if desc.width > props.max_extent.width || desc.height > props.max_extent.height {
            return Err(RhiError::InvalidDesc(format!(
                "texture {:?}: {}x{} exceeds the device maximum {}x{}",
                desc.label, desc.width, desc.height, props.max_extent.width, props.max_extent.height
            )));
        }
        let info = vk::ImageCreateInfo::default()
            .image_type(vk::ImageType::TYPE_2D)
            .format(format)
            .extent(vk::Extent3D { width: desc.width, height: desc.height, depth: 1 })
            .mip_levels(1)
            .array_layers(1)
            .samples(vk::SampleCountFlags::TYPE_1)
            .tiling(vk::ImageTiling::OPTIMAL)
            .usage(usage)
            .sharing_mode(vk::SharingMode::EXCLUSIVE)
            .initial_layout(vk::ImageLayout::UNDEFINED);
        // SAFETY: valid device and create info (format/usage checked above).
        let raw = unsafe { self.raw.create_image(&info, None) }.map_err(vk_err("vkCreateImage"))?;
        // SAFETY: `raw` is a live image of this device.
        let requirements = unsafe { self.raw.get_image_memory_requirements(raw) };
        let allocation = self.allocator.lock().unwrap_or_else(|p| p.into_inner()).allocate(
            &AllocationCreateDesc {
                name: &desc.label,
                requirements,
                location: MemoryLocation::GpuOnly,
                linear: false,
                allocation_scheme: AllocationScheme::GpuAllocatorManaged,
            },
        );
        let allocation = match allocation {
            Ok(a) => a,
            Err(e) => {
                // SAFETY: never bound or used.
                unsafe { self.raw.destroy_image(raw, None) };
                return Err(e.into());
            }
        };
        let cleanup = |allocation: Allocation| {
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
            .view_type(vk::ImageViewType::TYPE_2D)
            .format(format)
            .subresource_range(subresource_range(desc.format));
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
        let entry = TextureEntry { raw, view, allocation: Some(allocation), desc: desc.clone() };
        Ok(write(&self.resources.textures).insert(entry))
    }

    pub fn texture_desc(&self, texture: TextureHandle) -> Result<TextureDesc> {
        read(&self.resources.textures)
            .get(texture)
            .map(|t| t.desc.clone())
            .ok_or_else(|| RhiError::InvalidHandle(format!("{texture:?}")))
    }

    /// Destroys the texture once the GPU no longer uses it.
    pub fn destroy_texture(&self, texture: TextureHandle) {
        let entry = write(&self.resources.textures).remove(texture);
        if let Some(entry) = entry {
            self.retire(Retired::Texture(entry));
        }
    }
}

pub(crate) fn subresource_range(format: Format) -> vk::ImageSubresourceRange {
    vk::ImageSubresourceRange {
        aspect_mask: conv::aspect(format),
        base_mip_level: 0,
        level_count: 1,
        base_array_layer: 0,
        layer_count: 1,
    }
}
