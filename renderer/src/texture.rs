//! Texture assets (UE's UTexture2D): the data a user brings, checked on the
//! game thread, and the render thread's table of GPU textures that
//! materials sample.
//!
//! A [`Texture2D`] is plain data — format, size, level 0 and either a
//! supplied mip chain or a request to generate one on the GPU (linear
//! blits) — made from raw texels or decoded from PNG/JPEG
//! ([`Texture2D::decode`], the `image` crate with only those codecs), or
//! block-compressed (BC1, BC3, BC4, BC5, BC7: [`Texture2D::compressed`],
//! levels of 4x4 blocks, mips supplied or none: the GPU cannot generate
//! them). [`Texture2D::validate`] checks it against the device's limits
//! ([`TextureLimits`]: size, data length, mips, and whether the device
//! samples block-compressed formats at all) before anything is queued, so a
//! bad texture is a typed error and changes nothing. The renderer does not
//! decompress: where the device lacks BC, the asset's maker decodes it to
//! RGBA8 first (the glTF importer does so at spawn time).
//!
//! A [`TextureId`] is a slot of the render thread's [`TextureRegistry`] and
//! the slot's generation, handed out as material ids are
//! (`material::SlotIds`). Three built-in textures always exist —
//! [`TextureId::WHITE`], [`TextureId::BLACK`] and [`TextureId::FLAT_NORMAL`]
//! — and an id that names no live texture (destroyed, stale) samples white.
//! A destroyed texture's GPU image is freed by the RHI once no frame in
//! flight uses it; the materials that sampled it are re-bound to white.

use crate::error::{RendererError, Result};
pub use crate::ids::TextureId;
use rhi_vulkan::{Device, Format, SamplerDesc, SamplerHandle, TextureData, TextureDesc, TextureHandle};
use std::collections::HashMap;

/// Texel formats of texture assets.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TextureFormat {
    /// Colour (base colour, emissive): stored sRGB, sampled as linear.
    Rgba8Srgb,
    /// Data (normal maps, masks): sampled as stored.
    Rgba8Unorm,
    /// Two 8-bit channels of data (two-channel normal maps, packed masks).
    Rg8Unorm,
    /// One 8-bit channel of data (masks, roughness, height maps).
    R8Unorm,
    /// HDR, 16-bit floats (8 bytes per texel).
    Rgba16Float,
    /// BC1 (RGB with 1-bit alpha), colour: sRGB, sampled as linear. 8
    /// bytes per 4x4 block, like every BC format below; all need
    /// [`TextureLimits::bc_sampled`].
    Bc1RgbaSrgb,
    /// BC1 (RGB with 1-bit alpha), data.
    Bc1RgbaUnorm,
    /// BC3 (RGB and interpolated alpha), colour (sRGB); 16 bytes per block.
    Bc3Srgb,
    /// BC3, data.
    Bc3Unorm,
    /// BC4: one channel of data (red; green and blue sample 0); 8 bytes per block.
    Bc4Unorm,
    /// BC5: two channels of data (red, green; blue samples 0); 16 bytes per block.
    Bc5Unorm,
    /// BC7 (RGBA), colour (sRGB); 16 bytes per block.
    Bc7Srgb,
    /// BC7 (RGBA), data.
    Bc7Unorm,
}

impl TextureFormat {
    /// Every format, in declaration order.
    pub const ALL: [TextureFormat; 13] = [
        TextureFormat::Rgba8Srgb,
        TextureFormat::Rgba8Unorm,
        TextureFormat::Rg8Unorm,
        TextureFormat::R8Unorm,
        TextureFormat::Rgba16Float,
        TextureFormat::Bc1RgbaSrgb,
        TextureFormat::Bc1RgbaUnorm,
        TextureFormat::Bc3Srgb,
        TextureFormat::Bc3Unorm,
        TextureFormat::Bc4Unorm,
        TextureFormat::Bc5Unorm,
        TextureFormat::Bc7Srgb,
        TextureFormat::Bc7Unorm,
    ];

    /// Whether it is block-compressed (BCn: levels of 4x4 blocks).
    pub fn is_block_compressed(self) -> bool {
        self.rhi().is_block_compressed()
    }
    /// Whether it is sRGB-encoded colour (sampled as linear).
    pub fn is_srgb(self) -> bool {
        matches!(self, TextureFormat::Rgba8Srgb | TextureFormat::Bc1RgbaSrgb | TextureFormat::Bc3Srgb | TextureFormat::Bc7Srgb)
    }
    /// Bytes of one texel; for a block-compressed format, of one 4x4 block
    /// ([`TextureFormat::bytes_per_block`]).
    pub fn bytes_per_texel(self) -> usize {
        self.bytes_per_block()
    }
    /// Bytes of one block: a texel, or 4x4 texels of a block-compressed
    /// format (8 for BC1 and BC4, 16 for BC3, BC5 and BC7).
    pub fn bytes_per_block(self) -> usize {
        self.rhi().bytes_per_block() as usize
    }
    pub(crate) fn rhi(self) -> Format {
        match self {
            TextureFormat::Rgba8Srgb => Format::Rgba8Srgb,
            TextureFormat::Rgba8Unorm => Format::Rgba8Unorm,
            TextureFormat::Rg8Unorm => Format::Rg8Unorm,
            TextureFormat::R8Unorm => Format::R8Unorm,
            TextureFormat::Rgba16Float => Format::Rgba16Float,
            TextureFormat::Bc1RgbaSrgb => Format::Bc1RgbaSrgb,
            TextureFormat::Bc1RgbaUnorm => Format::Bc1RgbaUnorm,
            TextureFormat::Bc3Srgb => Format::Bc3Srgb,
            TextureFormat::Bc3Unorm => Format::Bc3Unorm,
            TextureFormat::Bc4Unorm => Format::Bc4Unorm,
            TextureFormat::Bc5Unorm => Format::Bc5Unorm,
            TextureFormat::Bc7Srgb => Format::Bc7Srgb,
            TextureFormat::Bc7Unorm => Format::Bc7Unorm,
        }
    }
}

/// A texture's mip levels below level 0.
#[derive(Clone, Debug, PartialEq)]
pub enum TextureMips {
    /// Level 0 only.
    None,
    /// The full chain, generated on the GPU from level 0 (box-filtered by
    /// linear blits).
    Generate,
    /// Levels 1.. as given: each half the size of the one before (rounded
    /// down, at least 1), tightly packed rows; the chain may stop early.
    Supplied(Vec<Vec<u8>>),
}

impl TextureMips {
    /// Bytes of the supplied levels (0 unless [`Self::Supplied`]).
    pub fn supplied_bytes(&self) -> u64 {
        match self {
            Self::Supplied(levels) => levels.iter().map(|l| l.len() as u64).sum(),
            Self::None | Self::Generate => 0,
        }
    }
}

/// A 2D texture asset.
#[derive(Clone, Debug, PartialEq)]
pub struct Texture2D {
    /// For errors and GPU debug names.
    pub label: String,
    /// Width of level 0 in texels, 1 to [`TextureLimits::max_dimension`].
    pub width: u32,
    /// Height of level 0 in texels, 1 to [`TextureLimits::max_dimension`].
    pub height: u32,
    /// How texels are stored and sampled.
    pub format: TextureFormat,
    /// Level 0: `width * height` texels, rows top to bottom, tightly
    /// packed; for a block-compressed format, `ceil(width / 4) *
    /// ceil(height / 4)` blocks, rows of blocks top to bottom.
    pub data: Vec<u8>,
    /// Its mip levels below level 0.
    pub mips: TextureMips,
}

/// What the device allows textures to be, taken once from it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TextureLimits {
    /// The largest width or height.
    pub max_dimension: u32,
    /// Per [`TextureFormat`] (in [`TextureFormat::ALL`] order): whether the
    /// device can generate its mip levels (linear blits); a texture asking
    /// for [`TextureMips::Generate`] in another format must supply them.
    pub mip_generation: [bool; TextureFormat::ALL.len()],
    /// Whether the device samples every block-compressed format
    /// (`textureCompressionBC`, [`rhi_vulkan::Device::supports_sampled_format`]);
    /// without it a block-compressed texture is refused.
    pub bc_sampled: bool,
}

impl TextureLimits {
    /// The limits of `device`.
    pub fn of(device: &Device) -> Self {
        Self {
            max_dimension: device.info().max_image_dimension_2d,
            mip_generation: TextureFormat::ALL.map(|f| device.supports_mip_generation(f.rhi())),
            bc_sampled: TextureFormat::ALL.iter().filter(|f| f.is_block_compressed()).all(|f| device.supports_sampled_format(f.rhi())),
        }
    }
}

impl Texture2D {
    /// A texture of `format` from raw level-0 texels, with a generated mip chain.
    pub fn new(label: &str, width: u32, height: u32, format: TextureFormat, data: Vec<u8>) -> Self {
        Self { label: label.into(), width, height, format, data, mips: TextureMips::Generate }
    }

    /// An RGBA8 texture from raw texels (`srgb`: colour data), mips generated.
    pub fn from_rgba8(label: &str, width: u32, height: u32, data: Vec<u8>, srgb: bool) -> Self {
        let format = if srgb { TextureFormat::Rgba8Srgb } else { TextureFormat::Rgba8Unorm };
        Self::new(label, width, height, format, data)
    }

    /// A block-compressed texture (`format` one of the BC formats) from its
    /// levels, level 0 first (each `ceil(w / 4) * ceil(h / 4)` blocks):
    /// levels past the first are supplied mips; a single level has none
    /// (the GPU cannot generate levels of a compressed format).
    pub fn compressed(label: &str, width: u32, height: u32, format: TextureFormat, levels: Vec<Vec<u8>>) -> Self {
        let mut levels = levels.into_iter();
        let data = levels.next().unwrap_or_default();
        let rest: Vec<Vec<u8>> = levels.collect();
        let mips = if rest.is_empty() { TextureMips::None } else { TextureMips::Supplied(rest) };
        Self { label: label.into(), width, height, format, data, mips }
    }

    /// Without a mip chain.
    pub fn without_mips(mut self) -> Self {
        self.mips = TextureMips::None;
        self
    }

    /// With levels 1.. supplied instead of generated.
    pub fn with_mips(mut self, levels: Vec<Vec<u8>>) -> Self {
        self.mips = TextureMips::Supplied(levels);
        self
    }

    /// Decodes a PNG or JPEG file's bytes into an RGBA8 texture (`srgb`:
    /// colour data; `false` for normal maps and masks), mips generated.
    /// Anything else — another format, a corrupt file — is
    /// [`RendererError::InvalidTexture`].
    pub fn decode(label: &str, bytes: &[u8], srgb: bool) -> Result<Self> {
        let invalid = |reason: String| RendererError::InvalidTexture { texture: label.into(), reason };
        let format = image::guess_format(bytes).map_err(|e| invalid(format!("not an image: {e}")))?;
        if !matches!(format, image::ImageFormat::Png | image::ImageFormat::Jpeg) {
            return Err(invalid(format!("{format:?} files are not supported (PNG and JPEG are)")));
        }
        let decoded = image::load_from_memory_with_format(bytes, format).map_err(|e| invalid(format!("cannot decode: {e}")))?;
        // (Moved, not copied, when it decoded as RGBA8 already.)
        let rgba = decoded.into_rgba8();
        Ok(Self::from_rgba8(label, rgba.width(), rgba.height(), rgba.into_raw(), srgb))
    }

    /// Levels the texture will have on the GPU.
    pub fn mip_levels(&self) -> u32 {
        match &self.mips {
            TextureMips::None => 1,
            TextureMips::Generate => TextureDesc::full_mip_count(self.width, self.height),
            TextureMips::Supplied(levels) => 1 + levels.len() as u32,
        }
    }

    /// Bytes of level `level`: its texels, or its 4x4 blocks (the level's
    /// size rounded up to whole blocks) for a block-compressed format.
    pub fn level_size(&self, level: u32) -> usize {
        let shrink = |n: u32| n.checked_shr(level).unwrap_or(0).max(1);
        self.format.rhi().image_size(shrink(self.width), shrink(self.height)) as usize
    }

    /// Checks the texture against `limits`: a non-zero size no larger than
    /// the device allows, a block-compressed format only where the device
    /// samples it, level 0 and every supplied level exactly as large as its
    /// size and format say, and no more levels than the size has.
    pub fn validate(&self, limits: &TextureLimits) -> Result<()> {
        let invalid = |reason: String| Err(RendererError::InvalidTexture { texture: self.label.clone(), reason });
        if self.width == 0 || self.height == 0 {
            return invalid(format!("size {}x{}", self.width, self.height));
        }
        if self.width > limits.max_dimension || self.height > limits.max_dimension {
            return invalid(format!("{}x{} is larger than the device allows ({} per side)", self.width, self.height, limits.max_dimension));
        }
        if self.format.is_block_compressed() && !limits.bc_sampled {
            return invalid(format!(
                "{:?} is block-compressed and the device does not sample BC formats (textureCompressionBC): decode it to RGBA8",
                self.format
            ));
        }
        let format_index = TextureFormat::ALL.iter().position(|f| *f == self.format).expect("every format is in ALL");
        if self.mips == TextureMips::Generate && self.mip_levels() > 1 && !limits.mip_generation[format_index] {
            return invalid(format!(
                "the device cannot generate mips of {:?}: supply them (TextureMips::Supplied) or use none",
                self.format
            ));
        }
        if self.data.len() != self.level_size(0) {
            return invalid(format!(
                "level 0 has {} bytes; {}x{} {:?} needs {}",
                self.data.len(),
                self.width,
                self.height,
                self.format,
                self.level_size(0)
            ));
        }
        if let TextureMips::Supplied(levels) = &self.mips {
            let full = TextureDesc::full_mip_count(self.width, self.height);
            if 1 + levels.len() as u32 > full {
                return invalid(format!("{} levels supplied; a {}x{} texture has {full}", 1 + levels.len(), self.width, self.height));
            }
            for (i, l) in levels.iter().enumerate() {
                let level = i as u32 + 1;
                if l.len() != self.level_size(level) {
                    return invalid(format!("level {level} has {} bytes, needs {}", l.len(), self.level_size(level)));
                }
            }
        }
        Ok(())
    }

    fn create(&self, device: &Device) -> rhi_vulkan::Result<TextureHandle> {
        let desc = TextureDesc::sampled(&self.label, self.width, self.height, self.format.rhi()).with_mip_levels(self.mip_levels());
        match &self.mips {
            TextureMips::None | TextureMips::Generate => device.create_texture_with_data(&desc, TextureData::Level0(&self.data)),
            TextureMips::Supplied(levels) => {
                let all: Vec<&[u8]> = std::iter::once(self.data.as_slice()).chain(levels.iter().map(|l| l.as_slice())).collect();
                device.create_texture_with_data(&desc, TextureData::AllLevels(&all))
            }
        }
    }
}

/// The GPU textures of the scene (render thread), by [`TextureId`] slot,
/// and the samplers materials read them with.
pub struct TextureRegistry {
    /// Per slot: the texture (`None` before its creation ran, after a
    /// failed creation, or once destroyed) and its generation.
    slots: Vec<(Option<TextureHandle>, u32)>,
    samplers: HashMap<SamplerDesc, SamplerHandle>,
    /// Slots whose texture changed since the last `take_changed`: the
    /// materials that sample them are re-bound.
    changed: Vec<u32>,
    /// Bytes of texel data uploaded (all time).
    pub bytes_uploaded: u64,
}

impl Default for TextureRegistry {
    fn default() -> Self {
        Self { slots: vec![(None, 0); TextureId::BUILTIN as usize], samplers: HashMap::new(), changed: Vec::new(), bytes_uploaded: 0 }
    }
}

impl TextureRegistry {
    /// Creates the built-in textures if they are not there yet.
    pub(crate) fn ensure_builtins(&mut self, device: &Device) -> rhi_vulkan::Result<()> {
        let builtins: [(&str, [u8; 4], TextureFormat); 3] = [
            ("white", [255; 4], TextureFormat::Rgba8Srgb),
            ("black", [0, 0, 0, 255], TextureFormat::Rgba8Srgb),
            ("flat normal", [128, 128, 255, 255], TextureFormat::Rgba8Unorm),
        ];
        for (slot, (label, texel, format)) in builtins.into_iter().enumerate() {
            if self.slots[slot].0.is_none() {
                let t = Texture2D::new(label, 1, 1, format, texel.to_vec()).without_mips();
                self.slots[slot].0 = Some(t.create(device)?);
            }
        }
        Ok(())
    }

    /// Creates the texture of `id` (a slot that exists in `id`'s generation,
    /// or the next slot). A creation the device refuses (out of memory)
    /// leaves the slot empty — it samples white — and is returned.
    pub(crate) fn create(&mut self, device: &Device, id: TextureId, texture: &Texture2D) -> Result<()> {
        let slot = id.slot() as usize;
        if slot == self.slots.len() && id.generation() == 0 {
            self.slots.push((None, 0));
        }
        match self.slots.get(slot) {
            Some((None, generation)) if *generation == id.generation() && slot >= TextureId::BUILTIN as usize => {}
            _ => return Err(RendererError::UnknownTexture(id)),
        }
        let handle = texture.create(device)?;
        self.bytes_uploaded += (0..texture.mip_levels()).map(|l| texture.level_size(l) as u64).sum::<u64>();
        self.slots[slot].0 = Some(handle);
        self.changed.push(slot as u32);
        Ok(())
    }

    /// Destroys the texture of `id` (freed once no frame in flight uses it);
    /// its slot moves to the next generation.
    pub(crate) fn destroy(&mut self, device: &Device, id: TextureId) -> Result<()> {
        let slot = id.slot() as usize;
        match self.slots.get_mut(slot) {
            Some((handle, generation)) if *generation == id.generation() && slot >= TextureId::BUILTIN as usize => {
                if let Some(h) = handle.take() {
                    device.destroy_texture(h);
                }
                *generation += 1;
                self.changed.push(slot as u32);
                Ok(())
            }
            _ => Err(RendererError::UnknownTexture(id)),
        }
    }

    /// The GPU texture `id` names, or white when it names none.
    pub fn resolve(&self, id: TextureId) -> Option<TextureHandle> {
        let live = self.slots.get(id.slot() as usize).filter(|(_, g)| *g == id.generation()).and_then(|(h, _)| *h);
        live.or(self.slots[TextureId::WHITE.slot() as usize].0)
    }

    /// The sampler for `desc`, created on first use.
    pub(crate) fn sampler(&mut self, device: &Device, desc: &SamplerDesc) -> rhi_vulkan::Result<SamplerHandle> {
        if let Some(&s) = self.samplers.get(desc) {
            return Ok(s);
        }
        let s = device.create_sampler(desc)?;
        self.samplers.insert(desc.clone(), s);
        Ok(s)
    }

    /// Slots whose texture was created or destroyed since the last call.
    pub(crate) fn take_changed(&mut self) -> Vec<u32> {
        std::mem::take(&mut self.changed)
    }

    /// Textures alive, the built-ins included.
    pub fn live(&self) -> usize {
        self.slots.iter().filter(|(h, _)| h.is_some()).count()
    }

    /// Destroys every texture and sampler (the scene is going).
    pub(crate) fn destroy_all(&mut self, device: &Device) {
        for (h, _) in &mut self.slots {
            if let Some(h) = h.take() {
                device.destroy_texture(h);
            }
        }
        for (_, s) in self.samplers.drain() {
            device.destroy_sampler(s);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIMITS: TextureLimits = TextureLimits { max_dimension: 4096, mip_generation: [true; TextureFormat::ALL.len()], bc_sampled: true };

    #[test]
    fn sizes_and_levels_are_checked() {
        let ok = Texture2D::from_rgba8("t", 4, 2, vec![0; 32], true);
        ok.validate(&LIMITS).unwrap();
        assert_eq!(ok.mip_levels(), 3);
        let short = Texture2D::from_rgba8("t", 4, 2, vec![0; 31], true);
        assert!(matches!(short.validate(&LIMITS), Err(RendererError::InvalidTexture { reason, .. }) if reason.contains("31 bytes")));
        assert!(Texture2D::from_rgba8("t", 0, 2, vec![], true).validate(&LIMITS).is_err());
        let huge = Texture2D::new("t", 8192, 1, TextureFormat::R8Unorm, vec![0; 8192]);
        assert!(
            matches!(huge.validate(&LIMITS), Err(RendererError::InvalidTexture { reason, .. }) if reason.contains("larger than the device"))
        );
        let supplied = Texture2D::new("t", 4, 4, TextureFormat::Rg8Unorm, vec![0; 32]).with_mips(vec![vec![0; 8], vec![0; 2]]);
        supplied.validate(&LIMITS).unwrap();
        assert_eq!(supplied.mip_levels(), 3);
        let bad_level = Texture2D::new("t", 4, 4, TextureFormat::Rg8Unorm, vec![0; 32]).with_mips(vec![vec![0; 9]]);
        assert!(bad_level.validate(&LIMITS).is_err());
        let too_many = Texture2D::new("t", 2, 2, TextureFormat::R8Unorm, vec![0; 4]).with_mips(vec![vec![0; 1], vec![0; 1]]);
        assert!(too_many.validate(&LIMITS).is_err());
        assert_eq!(Texture2D::new("t", 2, 2, TextureFormat::Rgba16Float, vec![0; 32]).level_size(0), 32);
        // A format the device cannot blit: generated mips are refused, supplied ones are fine.
        let mut no_blit = LIMITS;
        no_blit.mip_generation[3] = false;
        let r8 = Texture2D::new("r8", 2, 2, TextureFormat::R8Unorm, vec![0; 4]);
        assert!(
            matches!(r8.validate(&no_blit), Err(RendererError::InvalidTexture { reason, .. }) if reason.contains("cannot generate mips"))
        );
        r8.clone().with_mips(vec![vec![0; 1]]).validate(&no_blit).unwrap();
        r8.without_mips().validate(&no_blit).unwrap();
    }

    #[test]
    fn block_compressed_sizes_are_whole_blocks_and_need_the_device() {
        // What a device with BC has: no generated mips of compressed formats.
        let limits = TextureLimits { mip_generation: TextureFormat::ALL.map(|f| !f.is_block_compressed()), ..LIMITS };
        let bc_formats: Vec<TextureFormat> = TextureFormat::ALL.into_iter().filter(|f| f.is_block_compressed()).collect();
        assert_eq!(bc_formats.len(), 8);
        for f in bc_formats {
            let block = f.bytes_per_block();
            assert!(block == 8 || block == 16, "{f:?}");
            // 5x3: 2x1 blocks; its levels 2x1 and 1x1 a block each.
            let t = Texture2D::compressed("bc", 5, 3, f, vec![vec![0; 2 * block], vec![0; block], vec![0; block]]);
            assert_eq!((t.level_size(0), t.level_size(1), t.level_size(2), t.mip_levels()), (2 * block, block, block, 3));
            t.validate(&limits).unwrap();
            let single = Texture2D::compressed("bc", 8, 8, f, vec![vec![0; 4 * block]]);
            assert_eq!((single.mips.clone(), single.mip_levels()), (TextureMips::None, 1));
            single.validate(&limits).unwrap();
            // Wrong lengths, per level.
            let short = Texture2D::compressed("bc", 5, 3, f, vec![vec![0; 2 * block - 1]]);
            assert!(matches!(short.validate(&limits), Err(RendererError::InvalidTexture { reason, .. }) if reason.contains("level 0")));
            let texel_sized = Texture2D::compressed("bc", 4, 4, f, vec![vec![0; block], vec![0; 4 * block]]);
            assert!(
                matches!(texel_sized.validate(&limits), Err(RendererError::InvalidTexture { reason, .. }) if reason.contains("level 1"))
            );
            // Too many levels, and generated ones.
            let too_many = Texture2D::compressed("bc", 2, 2, f, vec![vec![0; block]; 3]);
            assert!(too_many.validate(&limits).is_err());
            let generated = Texture2D::new("bc", 8, 8, f, vec![0; 4 * block]);
            assert!(
                matches!(generated.validate(&limits), Err(RendererError::InvalidTexture { reason, .. }) if reason.contains("cannot generate mips"))
            );
            // A device that does not sample BC.
            let no_bc = TextureLimits { bc_sampled: false, ..limits };
            assert!(
                matches!(single.validate(&no_bc), Err(RendererError::InvalidTexture { reason, .. }) if reason.contains("does not sample BC"))
            );
            assert!(Texture2D::compressed("bc", 0, 4, f, vec![vec![]]).validate(&limits).is_err());
        }
        assert!(TextureFormat::Bc7Srgb.is_srgb() && !TextureFormat::Bc7Unorm.is_srgb() && !TextureFormat::Bc4Unorm.is_srgb());
        assert_eq!(TextureFormat::Bc5Unorm.rhi(), Format::Bc5Unorm);
    }

    #[test]
    fn png_decodes_and_other_bytes_are_typed_errors() {
        let mut png = Vec::new();
        {
            let mut enc = png::Encoder::new(&mut png, 2, 1);
            enc.set_color(png::ColorType::Rgba);
            enc.set_depth(png::BitDepth::Eight);
            enc.write_header().unwrap().write_image_data(&[255, 0, 0, 255, 0, 0, 255, 128]).unwrap();
        }
        let t = Texture2D::decode("red-blue.png", &png, true).unwrap();
        assert_eq!((t.width, t.height, t.format), (2, 1, TextureFormat::Rgba8Srgb));
        assert_eq!(t.data, [255, 0, 0, 255, 0, 0, 255, 128]);
        assert!(matches!(Texture2D::decode("x", b"not an image", true), Err(RendererError::InvalidTexture { .. })));
        assert!(Texture2D::decode("cut.png", &png[..png.len() / 2], true).is_err());
        // JPEG: an 8x8 mid grey (lossy, so within a few levels).
        let mut jpeg = Vec::new();
        image::codecs::jpeg::JpegEncoder::new_with_quality(&mut jpeg, 95)
            .encode(&[128u8; 8 * 8 * 3], 8, 8, image::ExtendedColorType::Rgb8)
            .unwrap();
        let t = Texture2D::decode("grey.jpg", &jpeg, false).unwrap();
        assert_eq!((t.width, t.height, t.format, t.data.len()), (8, 8, TextureFormat::Rgba8Unorm, 256));
        assert!(t.data.chunks(4).all(|p| p[0].abs_diff(128) <= 3 && p[3] == 255), "{:?}", &t.data[..8]);
        let gif = b"GIF89a\x01\x00\x01\x00\x00\x00\x00;";
        assert!(
            matches!(Texture2D::decode("x.gif", gif, true), Err(RendererError::InvalidTexture { reason, .. }) if reason.contains("not supported") || reason.contains("not an image"))
        );
    }
}
