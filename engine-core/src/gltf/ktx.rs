//! KTX2 textures (`image/ktx2`, the images `KHR_texture_basisu` names):
//! the container is read with the `ktx2` crate and zstd supercompression
//! undone with `ruzstd` (both pure Rust). What is read: 2D textures of
//! `R8G8B8A8_UNORM` or `R8G8B8A8_SRGB`, uncompressed or zstd-supercompressed,
//! with their mip levels (a single level gets a generated chain). What is
//! not, reported as [`GltfError::UndecodableImage`] with the reason (the
//! importer then skips the image unless the file requires the extension):
//! - Basis Universal (ETC1S/BasisLZ, UASTC): no maintained pure-Rust
//!   Basis Universal transcoder is used (the one on crates.io, `basisu`,
//!   is a first 0.1 release, not adopted yet);
//! - block-compressed formats (BCn, ETC2, ASTC): the renderer's textures
//!   have none ([`renderer::TextureFormat`]);
//! - other formats, ZLIB supercompression, arrays, cube maps, 3D textures.

use super::{GltfError, GltfLimits};
use ktx2::{ColorModel, Format, SupercompressionScheme};

/// The first bytes of every KTX2 file.
const MAGIC: [u8; 12] = [0xAB, b'K', b'T', b'X', b' ', b'2', b'0', 0xBB, b'\r', b'\n', 0x1A, b'\n'];

/// The reason a Basis Universal texture is not read.
pub(crate) const NO_BASIS_TRANSCODER: &str = "no maintained pure-Rust Basis Universal transcoder";

/// Whether `bytes` are a KTX2 file (by its identifier).
pub(crate) fn is_ktx2(bytes: &[u8]) -> bool {
    bytes.starts_with(&MAGIC)
}

/// The KTX2 file `bytes` (image `path`) as an RGBA8 texture in the colour
/// space its use asks for (`srgb`), held to `limits`.
pub(crate) fn decode(label: &str, bytes: &[u8], srgb: bool, path: &str, limits: &GltfLimits) -> Result<renderer::Texture2D, GltfError> {
    let undecodable = |problem: String| GltfError::UndecodableImage { path: path.into(), problem };
    let reader = ktx2::Reader::new(bytes).map_err(|e| undecodable(format!("not a valid KTX2 file: {e}")))?;
    let header = reader.header();
    let (width, height) = (header.pixel_width, header.pixel_height);
    GltfError::check_limit(path, "texture dimension", width.max(height) as u64, limits.max_texture_dimension as u64)?;
    if height == 0 || header.pixel_depth > 0 || header.layer_count > 1 || header.face_count != 1 {
        return Err(undecodable(format!(
            "KTX2 {}x{}x{}, {} layers, {} faces: only 2D textures are read",
            width, height, header.pixel_depth, header.layer_count, header.face_count
        )));
    }
    match header.format {
        None => {
            let kind = if header.supercompression_scheme == Some(SupercompressionScheme::BasisLZ) {
                "ETC1S (BasisLZ)"
            } else if reader.color_model() == Some(ColorModel::UASTC) {
                "UASTC"
            } else {
                return Err(undecodable("KTX2 VK_FORMAT_UNDEFINED without Basis Universal data".into()));
            };
            return Err(undecodable(format!("Basis Universal {kind} is not transcoded: {NO_BASIS_TRANSCODER}")));
        }
        Some(f) if f == Format::R8G8B8A8_UNORM || f == Format::R8G8B8A8_SRGB => {}
        // VkFormat 131..=184: BC1..BC7, ETC2/EAC, ASTC LDR.
        Some(f) if (131..=184).contains(&f.value()) => {
            return Err(undecodable(format!("{f:?} is block-compressed: the renderer has no block-compressed texture formats")));
        }
        Some(f) => return Err(undecodable(format!("KTX2 format {f:?} is not read (R8G8B8A8_UNORM and R8G8B8A8_SRGB are)"))),
    }
    let full_chain = 32 - width.max(height).leading_zeros();
    let count = reader.levels().len();
    if count as u32 > full_chain {
        return Err(undecodable(format!("{count} mip levels; a {width}x{height} texture has {full_chain}")));
    }
    let mut levels = Vec::with_capacity(count);
    for (i, level) in reader.levels().enumerate() {
        let size = (width >> i).max(1) as usize * (height >> i).max(1) as usize * 4;
        let texels = match header.supercompression_scheme {
            None => level.data.to_vec(),
            Some(SupercompressionScheme::Zstandard) => unzstd(level.data, size).map_err(|e| undecodable(format!("level {i}: {e}")))?,
            Some(s) => return Err(undecodable(format!("KTX2 supercompression {s:?} is not read (zstd is)"))),
        };
        if texels.len() != size {
            return Err(undecodable(format!("level {i} has {} bytes; {}x{} RGBA8 needs {size}", texels.len(), width >> i, height >> i)));
        }
        levels.push(texels);
    }
    let mut levels = levels.into_iter();
    let level0 = levels.next().expect("a KTX2 file has at least one level");
    let texture = renderer::Texture2D::from_rgba8(label, width, height, level0, srgb);
    // One level: the chain is generated, as for PNG and JPEG images.
    Ok(if count > 1 { texture.with_mips(levels.collect()) } else { texture })
}

/// A zstd frame's bytes, reading no more than `size` + 1 (a frame that
/// claims more is cut there and refused by the size check).
fn unzstd(data: &[u8], size: usize) -> Result<Vec<u8>, String> {
    use std::io::Read;
    let decoder = ruzstd::decoding::StreamingDecoder::new(data).map_err(|e| format!("zstd: {e}"))?;
    let mut out = Vec::with_capacity(size);
    decoder.take(size as u64 + 1).read_to_end(&mut out).map_err(|e| format!("zstd: {e}"))?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    #[test]
    fn only_ktx2_identifiers_are_ktx2() {
        assert!(super::is_ktx2(&super::MAGIC));
        assert!(!super::is_ktx2(b"\x89PNG\r\n\x1a\n"));
        assert!(!super::is_ktx2(&super::MAGIC[..11]));
    }
}
