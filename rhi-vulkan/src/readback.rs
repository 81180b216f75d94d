//! Reading a texture back as tightly packed RGBA8.

use crate::device::Device;
use crate::error::{Result, RhiError};
use crate::types::{BufferState, Format, TextureState};
use crate::{BufferDesc, TextureHandle};

/// An RGBA8 image in row-major order, top row first.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Image {
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// `width * height * 4` bytes, RGBA, rows top to bottom.
    pub rgba8: Vec<u8>,
}

impl Image {
    /// The pixel at (`x`, `y`), `y` = 0 at the top. Panics outside the image.
    pub fn pixel(&self, x: u32, y: u32) -> [u8; 4] {
        assert!(x < self.width && y < self.height, "pixel ({x}, {y}) outside {}x{}", self.width, self.height);
        let i = ((y * self.width + x) * 4) as usize;
        [self.rgba8[i], self.rgba8[i + 1], self.rgba8[i + 2], self.rgba8[i + 3]]
    }
}

fn f16_to_f32(h: u16) -> f32 {
    let sign = if h & 0x8000 != 0 { -1.0 } else { 1.0 };
    let exp = i32::from((h >> 10) & 0x1f);
    let mant = f32::from(h & 0x3ff);
    match exp {
        0 => sign * mant * 2f32.powi(-24),
        31 => {
            if mant == 0.0 {
                sign * f32::INFINITY
            } else {
                f32::NAN
            }
        }
        e => sign * (1.0 + mant / 1024.0) * 2f32.powi(e - 15),
    }
}

fn half_unorm8(le: [u8; 2]) -> u8 {
    unorm8(f16_to_f32(u16::from_le_bytes(le)))
}

fn unorm8(v: f32) -> u8 {
    (v.clamp(0.0, 1.0) * 255.0).round() as u8
}

impl Device {
    /// Waits for submitted work, copies `texture` (currently in `state`, left
    /// in `state` afterwards) and converts it to RGBA8: BGRA is swizzled,
    /// RGBA16F clamped to 0..1, R8 and RG8 padded with 0 (green, blue) and
    /// 255 (alpha). Level 0 of a mip chain. Depth and block-compressed
    /// textures are not readable this way ([`RhiError::Unsupported`]; copy
    /// a block-compressed level's blocks out with
    /// [`crate::CommandList::copy_texture_level_to_buffer`]).
    pub fn read_texture(&self, texture: TextureHandle, state: TextureState) -> Result<Image> {
        let (desc, bytes) = self.read_texels(texture, state)?;
        let rgba8 = match desc.format {
            Format::Rgba8Unorm | Format::Rgba8Srgb => bytes,
            Format::R8Unorm => bytes.iter().flat_map(|&r| [r, 0, 0, 255]).collect(),
            Format::Rg8Unorm => bytes.chunks_exact(2).flat_map(|p| [p[0], p[1], 0, 255]).collect(),
            Format::Bgra8Unorm | Format::Bgra8Srgb => bytes.chunks_exact(4).flat_map(|p| [p[2], p[1], p[0], p[3]]).collect(),
            Format::Rgba16Float => bytes.chunks_exact(2).map(|c| half_unorm8([c[0], c[1]])).collect(),
            Format::Rg16Float => {
                bytes.chunks_exact(4).flat_map(|c| [half_unorm8([c[0], c[1]]), half_unorm8([c[2], c[3]]), 0, 255]).collect()
            }
            Format::Depth32Float
            | Format::Bc1RgbaUnorm
            | Format::Bc1RgbaSrgb
            | Format::Bc3Unorm
            | Format::Bc3Srgb
            | Format::Bc4Unorm
            | Format::Bc5Unorm
            | Format::Bc7Unorm
            | Format::Bc7Srgb => unreachable!("rejected by read_texels"),
        };
        Ok(Image { width: desc.width, height: desc.height, rgba8 })
    }

    /// Waits for submitted work and copies `texture` (in `state`, left in
    /// `state`) out as its texels' bytes, tightly packed row by row, with
    /// its description: what [`Self::read_texture`] converts, for callers
    /// that need the values themselves (16-bit floats: motion vectors, HDR
    /// colour). The same textures as `read_texture`.
    pub fn read_texture_texels(&self, texture: TextureHandle, state: TextureState) -> Result<Vec<u8>> {
        self.read_texels(texture, state).map(|(_, bytes)| bytes)
    }

    fn read_texels(&self, texture: TextureHandle, state: TextureState) -> Result<(crate::TextureDesc, Vec<u8>)> {
        let desc = self.texture_desc(texture)?;
        if desc.format.is_depth() || desc.format.is_block_compressed() {
            return Err(RhiError::Unsupported(format!("{:?} textures cannot be read back", desc.format)));
        }
        if desc.dimension != crate::TextureDimension::D2 {
            return Err(RhiError::Unsupported(format!(
                "cube texture {:?} is not one image: copy its levels out with copy_texture_level_to_buffer",
                desc.label
            )));
        }
        if !desc.usage.contains(crate::TextureUsage::TRANSFER_SRC) {
            let usage = crate::Usage::Texture(crate::TextureUsage::TRANSFER_SRC);
            return Err(RhiError::MissingUsage { label: desc.label, usage, needed_for: "read_texture" });
        }
        let size = u64::from(desc.width) * u64::from(desc.height) * u64::from(desc.format.bytes_per_pixel());
        let staging = self.create_buffer(&BufferDesc::readback("texture readback", size))?;
        let copied = self.immediate(|cmd| {
            cmd.texture_barrier(texture, state, TextureState::TransferSrc)?;
            cmd.copy_texture_to_buffer(texture, staging, 0)?;
            cmd.buffer_barrier(staging, BufferState::TransferDst, BufferState::HostRead)?;
            if state != TextureState::Undefined {
                cmd.texture_barrier(texture, TextureState::TransferSrc, state)?;
            }
            Ok(())
        });
        let bytes = copied.and_then(|()| self.read_buffer(staging, 0, size));
        self.destroy_buffer(staging);
        Ok((desc, bytes?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn half_floats_convert() {
        assert_eq!(f16_to_f32(0x3c00), 1.0);
        assert_eq!(f16_to_f32(0x3800), 0.5);
        assert_eq!(f16_to_f32(0xc000), -2.0);
        assert_eq!(unorm8(f16_to_f32(0x3800)), 128);
    }
}
