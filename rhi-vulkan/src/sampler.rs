//! Samplers (including depth-compare samplers for shadow maps).

use crate::conv;
use crate::device::{read, write, Device, Retired};
use crate::error::{vk_err, Result, RhiError};
use crate::handle::Handle;
use crate::types::{AddressMode, CompareOp, Filter};
use ash::vk;

/// A sampler's description: plain data.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct SamplerDesc {
    /// Magnification and minification filter.
    pub filter: Filter,
    /// How a sample blends between mip levels (nearest: the closest level).
    pub mipmap_filter: Filter,
    /// Whether minified samples read the mip levels (`true`) or level 0
    /// only (`false`: glTF's non-mipmapped `NEAREST` / `LINEAR`
    /// minification filters; the sampler's maximum level of detail is 0).
    pub mipmaps: bool,
    /// Wrap mode along U (x) and V (y).
    pub address_u: AddressMode,
    /// Wrap mode along V (y).
    pub address_v: AddressMode,
    /// Anisotropic filtering up to this many samples; 0 or 1 is off. Applied
    /// only where the device has `samplerAnisotropy`
    /// ([`crate::DeviceFeatures::sampler_anisotropy`]), clamped to its
    /// [`crate::DeviceInfo::max_sampler_anisotropy`].
    pub max_anisotropy: u8,
    /// `Some` makes a comparison sampler (`sampler_comparison` in WGSL).
    pub compare: Option<CompareOp>,
}

impl Default for SamplerDesc {
    /// [`SamplerDesc::linear_clamp`].
    fn default() -> Self {
        Self::linear_clamp()
    }
}

impl SamplerDesc {
    /// Trilinear filtering (linear, linear mipmaps), clamped to the edge.
    pub fn linear_clamp() -> Self {
        Self {
            filter: Filter::Linear,
            mipmap_filter: Filter::Linear,
            mipmaps: true,
            address_u: AddressMode::ClampToEdge,
            address_v: AddressMode::ClampToEdge,
            max_anisotropy: 1,
            compare: None,
        }
    }
    /// Nearest texel of the nearest level, clamped to the edge.
    pub fn nearest_clamp() -> Self {
        Self { filter: Filter::Nearest, mipmap_filter: Filter::Nearest, ..Self::linear_clamp() }
    }
    /// Trilinear filtering, repeating in both directions (tiled material textures).
    pub fn linear_repeat() -> Self {
        Self { address_u: AddressMode::Repeat, address_v: AddressMode::Repeat, ..Self::linear_clamp() }
    }
    /// A material texture's sampler: trilinear, repeating, anisotropic up
    /// to [`Self::MATERIAL_ANISOTROPY`] samples where the device filters
    /// anisotropically (not on CPU devices: see
    /// [`crate::DeviceFeatures::sampler_anisotropy`]), so surfaces seen at
    /// grazing angles stay sharp instead of blurring to a smaller mip.
    pub fn material() -> Self {
        Self::linear_repeat().with_anisotropy(Self::MATERIAL_ANISOTROPY)
    }
    /// The anisotropy of [`Self::material`].
    pub const MATERIAL_ANISOTROPY: u8 = 16;
    /// Percentage-closer filtering of a shadow map.
    pub fn shadow() -> Self {
        Self { mipmap_filter: Filter::Nearest, compare: Some(CompareOp::LessEqual), ..Self::linear_clamp() }
    }
    /// The same sampler with anisotropic filtering up to `max_anisotropy` samples.
    pub fn with_anisotropy(self, max_anisotropy: u8) -> Self {
        Self { max_anisotropy, ..self }
    }
}

/// Names a sampler of a [`Device`].
pub type SamplerHandle = Handle<SamplerEntry>;

#[doc(hidden)]
pub struct SamplerEntry {
    pub(crate) raw: vk::Sampler,
    pub(crate) desc: SamplerDesc,
    /// The anisotropy applied (1.0: off).
    anisotropy: f32,
}

impl SamplerEntry {
    pub(crate) fn destroy(self, device: &Device) {
        // SAFETY: no submitted work uses it any more; destroyed once.
        unsafe { device.raw.destroy_sampler(self.raw, None) };
    }
}

impl Device {
    /// Creates a sampler. Anisotropy is applied where the device has it
    /// (clamped to its limit) and ignored elsewhere; see
    /// [`Self::sampler_anisotropy`] for what was applied.
    pub fn create_sampler(&self, desc: &SamplerDesc) -> Result<SamplerHandle> {
        let filter = conv::filter(desc.filter);
        let mut info = vk::SamplerCreateInfo::default()
            .mag_filter(filter)
            .min_filter(filter)
            .mipmap_mode(conv::mipmap_mode(desc.mipmap_filter))
            .address_mode_u(conv::address_mode(desc.address_u))
            .address_mode_v(conv::address_mode(desc.address_v))
            .address_mode_w(conv::address_mode(desc.address_v))
            .max_lod(if desc.mipmaps { vk::LOD_CLAMP_NONE } else { 0.0 })
            .border_color(vk::BorderColor::FLOAT_OPAQUE_WHITE);
        if let Some(op) = desc.compare {
            info = info.compare_enable(true).compare_op(conv::compare_op(op));
        }
        let anisotropy = self.applied_anisotropy(desc.max_anisotropy);
        if anisotropy > 1.0 {
            info = info.anisotropy_enable(true).max_anisotropy(anisotropy);
        }
        // SAFETY: valid device and create info; anisotropy is enabled only
        // with the device feature on, within 1..=maxSamplerAnisotropy.
        let raw = unsafe { self.raw.create_sampler(&info, None) }.map_err(vk_err("vkCreateSampler"))?;
        Ok(write(&self.resources.samplers).insert(SamplerEntry { raw, desc: desc.clone(), anisotropy }))
    }

    /// The anisotropy a sampler asking for `wanted` gets on this device (1.0: off).
    fn applied_anisotropy(&self, wanted: u8) -> f32 {
        let info = self.info();
        if wanted <= 1 || !info.features.sampler_anisotropy {
            return 1.0;
        }
        f32::from(wanted).min(info.max_sampler_anisotropy).max(1.0)
    }

    /// The anisotropy `sampler` filters with (1.0: off): its
    /// `max_anisotropy` where the device has anisotropic filtering, clamped
    /// to the device's limit.
    pub fn sampler_anisotropy(&self, sampler: SamplerHandle) -> Result<f32> {
        read(&self.resources.samplers).get(sampler).map(|s| s.anisotropy).ok_or_else(|| RhiError::InvalidHandle(format!("{sampler:?}")))
    }

    /// Destroys the sampler once the GPU no longer uses it. Destroying twice
    /// is a no-op.
    pub fn destroy_sampler(&self, sampler: SamplerHandle) {
        let entry = write(&self.resources.samplers).remove(sampler);
        if let Some(entry) = entry {
            self.retire(Retired::Sampler(entry));
        }
    }
}
