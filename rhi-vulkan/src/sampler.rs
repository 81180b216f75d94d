//! Samplers (including depth-compare samplers for shadow maps).

use crate::conv;
use crate::device::{write, Device, Retired};
use crate::error::{vk_err, Result};
use crate::handle::Handle;
use crate::types::{AddressMode, CompareOp, Filter};
use ash::vk;

/// A sampler's description: plain data.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct SamplerDesc {
    pub filter: Filter,
    pub address_mode: AddressMode,
    /// `Some` makes a comparison sampler (`sampler_comparison` in WGSL).
    pub compare: Option<CompareOp>,
}

impl SamplerDesc {
    pub fn linear_clamp() -> Self {
        Self::default()
    }
    pub fn nearest_clamp() -> Self {
        Self { filter: Filter::Nearest, ..Self::default() }
    }
    /// Percentage-closer filtering of a shadow map.
    pub fn shadow() -> Self {
        Self { filter: Filter::Linear, address_mode: AddressMode::ClampToEdge, compare: Some(CompareOp::LessEqual) }
    }
}

pub type SamplerHandle = Handle<SamplerEntry>;

#[doc(hidden)]
pub struct SamplerEntry {
    pub(crate) raw: vk::Sampler,
    pub(crate) desc: SamplerDesc,
}

impl SamplerEntry {
    pub(crate) fn destroy(self, device: &Device) {
        // SAFETY: no submitted work uses it any more; destroyed once.
        unsafe { device.raw.destroy_sampler(self.raw, None) };
    }
}

impl Device {
    pub fn create_sampler(&self, desc: &SamplerDesc) -> Result<SamplerHandle> {
        let filter = conv::filter(desc.filter);
        let address = conv::address_mode(desc.address_mode);
        let mut info = vk::SamplerCreateInfo::default()
            .mag_filter(filter)
            .min_filter(filter)
            .mipmap_mode(vk::SamplerMipmapMode::NEAREST)
            .address_mode_u(address)
            .address_mode_v(address)
            .address_mode_w(address)
            .max_lod(vk::LOD_CLAMP_NONE)
            .border_color(vk::BorderColor::FLOAT_OPAQUE_WHITE);
        if let Some(op) = desc.compare {
            info = info.compare_enable(true).compare_op(conv::compare_op(op));
        }
        // SAFETY: valid device and create info.
        let raw = unsafe { self.raw.create_sampler(&info, None) }.map_err(vk_err("vkCreateSampler"))?;
        Ok(write(&self.resources.samplers).insert(SamplerEntry { raw, desc: desc.clone() }))
    }

    pub fn destroy_sampler(&self, sampler: SamplerHandle) {
        let entry = write(&self.resources.samplers).remove(sampler);
        if let Some(entry) = entry {
            self.retire(Retired::Sampler(entry));
        }
    }
}
