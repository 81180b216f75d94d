//! KTX2 textures (`image/ktx2`, the images `KHR_texture_basisu` names):
//! the container is read with the `ktx2` crate and zstd supercompression
//! undone with `ruzstd` (both pure Rust). What is read: 2D textures,
//! uncompressed or zstd-supercompressed, with their mip levels, of
//! - `R8G8B8A8_UNORM` or `R8G8B8A8_SRGB` (a single level gets a generated
//!   chain);
//! - the block-compressed `BC1_RGBA`, `BC3`, `BC7` (`_UNORM` or `_SRGB`),
//!   `BC4_UNORM` and `BC5_UNORM` (VkFormat 133, 134, 137, 138, 145, 146,
//!   139, 141), kept as blocks ([`renderer::Texture2D::compressed`]: the
//!   file's levels, none generated — the GPU cannot write compressed
//!   levels — so a single-level file has no mips on the GPU);
//! - Basis Universal: ETC1S (BasisLZ) and UASTC LDR, uncompressed or
//!   zstd-supercompressed (UASTC), transcoded with the `basisu` crate (a
//!   pure-Rust port of the reference C++ transcoder, byte-identical to it
//!   by its own tests; built without its `zstd` feature: zstd levels are
//!   undone here with `ruzstd`, and the transcoder given the file rewritten
//!   without supercompression). The import transcodes to BC7 (sRGB or not
//!   by the slot; the file's levels) and keeps the file
//!   ([`super::GltfTexture::basis`]); where the device does not sample BC
//!   spawning transcodes the file again, to RGBA8
//!   ([`super::transcode_basis_rgba8`]; a single level then gets a
//!   generated chain), rather than decoding the BC7.
//!
//! The texture's colour space is its slot's (sRGB for base colour and
//! emissive), whatever the file's transfer function: for BC4 and BC5,
//! which have no sRGB form, always linear.
//!
//! **Where the device does not sample BC** (no `textureCompressionBC`), the
//! blocks are decoded to RGBA8 on the CPU ([`decompress_bc`], the `bcdec_rs`
//! crate: a pure-Rust port of bcdec), level by level — BC4 as (r, 0, 0,
//! 255), BC5 as (r, g, 0, 255), what sampling them gives — and a
//! single-level texture then gets a generated chain. That happens at spawn
//! time ([`super::GltfImport::spawn`]), not here: the importer runs on the
//! game thread without the device, so the [`super::GltfImport`] keeps the
//! blocks (4 to 8 times smaller than RGBA8, and what a device with BC
//! uploads as they are); spawning asks the render thread for its
//! [`renderer::TextureLimits`] before it validates anything and, where
//! `bc_sampled` is false, uploads the decoded texture instead. The renderer
//! itself never decompresses: a BC texture offered to a device without BC
//! is its typed error.
//!
//! What is not read, reported as [`GltfError::UndecodableImage`] with the
//! reason (the importer then skips the image unless the file requires the
//! extension):
//! - a Basis file that does not transcode (corrupt blocks or codebooks, an
//!   ETC1S video), with the transcoder's error; the other Basis Universal
//!   codecs (UASTC HDR, raw ASTC, XUASTC: [`NO_BASIS_TRANSCODER`]);
//! - BC6H: HDR, and nothing samples HDR material textures yet;
//! - the other block-compressed formats (BC1_RGB, whose 3-colour blocks are
//!   opaque black where BC1_RGBA's are transparent, BC2, BC4/BC5 SNORM,
//!   ETC2, EAC, ASTC);
//! - other formats, ZLIB supercompression, arrays, cube maps, 3D textures.

use super::{GltfError, GltfLimits};
use ktx2::{Format, SupercompressionScheme};
use renderer::{Texture2D, TextureFormat, TextureMips};

/// The first bytes of every KTX2 file.
const MAGIC: [u8; 12] = [0xAB, b'K', b'T', b'X', b' ', b'2', b'0', 0xBB, b'\r', b'\n', 0x1A, b'\n'];

/// The reason the Basis Universal codecs other than ETC1S and UASTC LDR
/// (UASTC HDR, ASTC, XUASTC) are not read.
pub(crate) const NO_BASIS_TRANSCODER: &str = "only the ETC1S (BasisLZ) and UASTC LDR Basis Universal codecs are transcoded";

/// Whether `bytes` are a KTX2 file (by its identifier).
pub(crate) fn is_ktx2(bytes: &[u8]) -> bool {
    bytes.starts_with(&MAGIC)
}

/// The block-compressed texture format of a KTX2 `format` in the colour
/// space `srgb` (linear for BC4 and BC5, which have no sRGB form); `None`
/// for a format that is not one of the BC formats read.
fn bc_format(format: Format, srgb: bool) -> Option<TextureFormat> {
    let pick = |s, u| Some(if srgb { s } else { u });
    match format {
        Format::BC1_RGBA_UNORM_BLOCK | Format::BC1_RGBA_SRGB_BLOCK => pick(TextureFormat::Bc1RgbaSrgb, TextureFormat::Bc1RgbaUnorm),
        Format::BC3_UNORM_BLOCK | Format::BC3_SRGB_BLOCK => pick(TextureFormat::Bc3Srgb, TextureFormat::Bc3Unorm),
        Format::BC7_UNORM_BLOCK | Format::BC7_SRGB_BLOCK => pick(TextureFormat::Bc7Srgb, TextureFormat::Bc7Unorm),
        Format::BC4_UNORM_BLOCK => Some(TextureFormat::Bc4Unorm),
        Format::BC5_UNORM_BLOCK => Some(TextureFormat::Bc5Unorm),
        _ => None,
    }
}

/// The bytes decoding the KTX2 file `bytes` (image `path`) may make, from
/// its header, after its size is checked against the dimension limit: each
/// of its levels (no more than a full chain) as RGBA8 — what BC blocks are
/// at most decoded to, and more than they or a Basis file's BC7 hold — plus,
/// for a Basis Universal file, the file itself, which its texture keeps.
/// `None` where the header does not read ([`decode`] refuses the file).
pub(crate) fn decoded_bytes(bytes: &[u8], path: &str, limits: &GltfLimits) -> Result<Option<u64>, GltfError> {
    let Ok(reader) = read_ktx2(bytes) else { return Ok(None) };
    let header = reader.header();
    let (width, height) = (header.pixel_width, header.pixel_height);
    GltfError::check_limit(path, "texture dimension", width.max(height) as u64, limits.max_texture_dimension as u64)?;
    let full_chain = 32 - width.max(height).leading_zeros();
    let levels = (reader.levels().len() as u32).min(full_chain);
    let texels: u64 = (0..levels).map(|i| u64::from((width >> i).max(1)) * u64::from((height >> i).max(1))).sum();
    let kept = if is_basis(bytes) { bytes.len() as u64 } else { 0 };
    Ok(Some(texels * 4 + kept))
}

/// The KTX2 file `bytes` (image `path`) as a texture in the colour space
/// its use asks for (`srgb`), held to `limits`: RGBA8, or BCn blocks.
pub(crate) fn decode(label: &str, bytes: &[u8], srgb: bool, path: &str, limits: &GltfLimits) -> Result<renderer::Texture2D, GltfError> {
    let undecodable = |problem: String| GltfError::UndecodableImage { path: path.into(), problem };
    let reader = read_ktx2(bytes).map_err(|e| undecodable(format!("not a valid KTX2 file: {e}")))?;
    let header = reader.header();
    let (width, height) = (header.pixel_width, header.pixel_height);
    GltfError::check_limit(path, "texture dimension", width.max(height) as u64, limits.max_texture_dimension as u64)?;
    if height == 0 || header.pixel_depth > 0 || header.layer_count > 1 || header.face_count != 1 {
        return Err(undecodable(format!(
            "KTX2 {}x{}x{}, {} layers, {} faces: only 2D textures are read",
            width, height, header.pixel_depth, header.layer_count, header.face_count
        )));
    }
    let format = match header.format {
        None => {
            let kind = if header.supercompression_scheme == Some(SupercompressionScheme::BasisLZ) {
                "ETC1S (BasisLZ)"
            } else if is_uastc(bytes, &header.index) {
                "UASTC"
            } else {
                return Err(undecodable(format!("KTX2 VK_FORMAT_UNDEFINED without ETC1S or UASTC data: {NO_BASIS_TRANSCODER}")));
            };
            let full_chain = 32 - width.max(height).leading_zeros();
            if reader.levels().len() as u32 > full_chain {
                return Err(undecodable(format!("{} mip levels; a {width}x{height} texture has {full_chain}", reader.levels().len())));
            }
            return transcode_basis(label, bytes, srgb, true).map_err(|e| undecodable(format!("Basis Universal {kind}: {e}")));
        }
        Some(f) if f == Format::R8G8B8A8_UNORM || f == Format::R8G8B8A8_SRGB => {
            if srgb {
                TextureFormat::Rgba8Srgb
            } else {
                TextureFormat::Rgba8Unorm
            }
        }
        Some(f) => match bc_format(f, srgb) {
            Some(bc) => bc,
            None if f == Format::BC6H_UFLOAT_BLOCK || f == Format::BC6H_SFLOAT_BLOCK => {
                return Err(undecodable(format!("{f:?} is HDR block compression: not read (no HDR material textures yet)")));
            }
            // VkFormat 131..=184: BC1..BC7, ETC2/EAC, ASTC LDR.
            None if (131..=184).contains(&f.value()) => {
                return Err(undecodable(format!(
                    "{f:?} is a block-compressed format that is not read (BC1_RGBA, BC3, BC7, BC4_UNORM and BC5_UNORM are)"
                )));
            }
            None => {
                return Err(undecodable(format!(
                    "KTX2 format {f:?} is not read (R8G8B8A8_UNORM/_SRGB and the BC1_RGBA, BC3, BC4, BC5, BC7 formats are)"
                )))
            }
        },
    };
    let what = if format.is_block_compressed() { format!("{format:?}") } else { "RGBA8".into() };
    let full_chain = 32 - width.max(height).leading_zeros();
    let count = reader.levels().len();
    if count as u32 > full_chain {
        return Err(undecodable(format!("{count} mip levels; a {width}x{height} texture has {full_chain}")));
    }
    let mut levels = Vec::with_capacity(count);
    for (i, level) in reader.levels().enumerate() {
        let (w, h) = ((width >> i).max(1), (height >> i).max(1));
        // Texels, or whole 4x4 blocks (a level rounded up).
        let b = if format.is_block_compressed() { 4 } else { 1 };
        let size = w.div_ceil(b) as usize * h.div_ceil(b) as usize * format.bytes_per_block();
        let texels = match header.supercompression_scheme {
            None => level.data.to_vec(),
            Some(SupercompressionScheme::Zstandard) => unzstd(level.data, size).map_err(|e| undecodable(format!("level {i}: {e}")))?,
            Some(s) => return Err(undecodable(format!("KTX2 supercompression {s:?} is not read (zstd is)"))),
        };
        if texels.len() != size {
            return Err(undecodable(format!("level {i} has {} bytes; {w}x{h} {what} needs {size}", texels.len())));
        }
        levels.push(texels);
    }
    if format.is_block_compressed() {
        // The file's levels only: compressed levels cannot be generated.
        return Ok(Texture2D::compressed(label, width, height, format, levels));
    }
    let mut levels = levels.into_iter();
    let level0 = levels.next().expect("a KTX2 file has at least one level");
    let texture = Texture2D::new(label, width, height, format, level0);
    // One level: the chain is generated, as for PNG and JPEG images.
    Ok(if count > 1 { texture.with_mips(levels.collect()) } else { texture })
}

/// A block-compressed texture (as the KTX2 reader makes them) decoded to RGBA8
/// on the CPU, for a device that does not sample BC: each level's blocks
/// decoded with `bcdec_rs` and cut to the level's size; BC4 as (r, 0, 0,
/// 255) and BC5 as (r, g, 0, 255), as the GPU samples them; sRGB formats
/// become [`TextureFormat::Rgba8Srgb`], the others `Rgba8Unorm`. Supplied
/// levels stay supplied; a texture without mips gets a generated chain (as
/// an RGBA8 KTX2 or PNG would). Any other texture is returned as it is.
/// Levels of the wrong length (which [`Texture2D::validate`] refuses) are
/// decoded as far as they go, the rest zero.
pub fn decompress_bc(texture: &Texture2D) -> Texture2D {
    if !texture.format.is_block_compressed() {
        return texture.clone();
    }
    let level = |i: u32, data: &[u8]| -> Vec<u8> {
        let (w, h) = ((texture.width >> i).max(1) as usize, (texture.height >> i).max(1) as usize);
        let (bw, bh) = (w.div_ceil(4), h.div_ceil(4));
        let block_bytes = texture.format.bytes_per_block();
        let mut out = vec![0u8; w * h * 4];
        for (b, block) in data.chunks_exact(block_bytes).take(bw * bh).enumerate() {
            let mut rgba = [0u8; 64];
            match texture.format {
                TextureFormat::Bc1RgbaSrgb | TextureFormat::Bc1RgbaUnorm => bcdec_rs::bc1(block, &mut rgba, 16),
                TextureFormat::Bc3Srgb | TextureFormat::Bc3Unorm => bcdec_rs::bc3(block, &mut rgba, 16),
                TextureFormat::Bc7Srgb | TextureFormat::Bc7Unorm => bcdec_rs::bc7(block, &mut rgba, 16),
                TextureFormat::Bc4Unorm => {
                    let mut r = [0u8; 16];
                    bcdec_rs::bc4(block, &mut r, 4, false);
                    for (t, &v) in r.iter().enumerate() {
                        rgba[4 * t..4 * t + 4].copy_from_slice(&[v, 0, 0, 255]);
                    }
                }
                TextureFormat::Bc5Unorm => {
                    let mut rg = [0u8; 32];
                    bcdec_rs::bc5(block, &mut rg, 8, false);
                    for t in 0..16 {
                        rgba[4 * t..4 * t + 4].copy_from_slice(&[rg[2 * t], rg[2 * t + 1], 0, 255]);
                    }
                }
                _ => unreachable!("block-compressed formats only"),
            }
            // Texels of the block inside the level.
            let (x0, y0) = (4 * (b % bw), 4 * (b / bw));
            for y in y0..(y0 + 4).min(h) {
                let n = (x0 + 4).min(w) - x0;
                let src = 16 * (y - y0);
                out[4 * (y * w + x0)..4 * (y * w + x0 + n)].copy_from_slice(&rgba[src..src + 4 * n]);
            }
        }
        out
    };
    let format = if texture.format.is_srgb() { TextureFormat::Rgba8Srgb } else { TextureFormat::Rgba8Unorm };
    let decoded = Texture2D::new(&texture.label, texture.width, texture.height, format, level(0, &texture.data));
    match &texture.mips {
        TextureMips::Supplied(levels) => decoded.with_mips((1u32..).zip(levels).map(|(i, l)| level(i, l)).collect()),
        TextureMips::None | TextureMips::Generate => decoded,
    }
}

/// The `ktx2` crate's reader of `bytes`, or why the file is not one. The
/// crate (0.5) panics on a basic descriptor block whose texel block
/// dimension byte is 255 (it stores the dimension minus one, and the + 1
/// overflows): a hostile file, checked here first.
fn read_ktx2(bytes: &[u8]) -> Result<ktx2::Reader<&[u8]>, String> {
    let word = |at: usize| bytes.get(at..at + 4).map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]));
    if let (Some(offset), Some(length)) = (word(48), word(52)) {
        let (mut block, end) = (offset as usize + 4, (offset as usize).saturating_add(length as usize).min(bytes.len()));
        // Each block: vendor id and type (0: Khronos basic), version and
        // size, then (basic) model, primaries, transfer, flags and the
        // four texel block dimensions.
        while let (Some(kind), Some(version_size)) = (word(block), word(block + 4)) {
            let size = (version_size >> 16) as usize;
            if block + 16 > end || size < 16 {
                break;
            }
            if kind == 0 && bytes[block + 12..block + 16].contains(&255) {
                return Err("a data format descriptor with a texel block dimension of 256".into());
            }
            block += size;
        }
    }
    ktx2::Reader::new(bytes).map_err(|e| e.to_string())
}

/// Whether the KTX2 file `bytes`' data format descriptor (at `index`) is a
/// Khronos basic descriptor of colour model UASTC. Read here, not with
/// `ktx2::Reader::color_model`: the `ktx2` crate (0.5) parses the whole
/// descriptor for it and panics on a texel block dimension of 255 (its
/// stored value + 1 overflows), which a hostile file can hold.
fn is_uastc(bytes: &[u8], index: &ktx2::Index) -> bool {
    // dfdTotalSize (4 bytes), then the first block: vendor id and
    // descriptor type (0: Khronos basic), version and size, colour model.
    const KHR_DF_MODEL_UASTC: u8 = 166;
    let start = index.dfd_byte_offset as usize;
    let block_header = bytes.get(start + 4..start + 8).map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]));
    index.dfd_byte_length >= 4 + 24 && block_header == Some(0) && bytes.get(start + 12) == Some(&KHR_DF_MODEL_UASTC)
}

/// Whether `bytes` are a Basis Universal KTX2 file the importer transcodes
/// (ETC1S/BasisLZ or UASTC): a texture made from one keeps its file
/// ([`super::GltfTexture::basis`]).
pub(crate) fn is_basis(bytes: &[u8]) -> bool {
    read_ktx2(bytes).is_ok_and(|r| {
        r.header().format.is_none()
            && (r.header().supercompression_scheme == Some(SupercompressionScheme::BasisLZ) || is_uastc(bytes, &r.header().index))
    })
}

/// The Basis Universal (ETC1S or UASTC) KTX2 file `bytes` transcoded with
/// the `basisu` crate, level by level (the file's levels), to BC7 blocks
/// (`bc7`) or to RGBA8 texels, in the colour space `srgb`; an RGBA8
/// texture of a single level gets a generated chain. The error says why it
/// does not transcode. The KTX2 container is assumed checked by [`decode`]
/// (a 2D texture within the limits).
pub(crate) fn transcode_basis(label: &str, bytes: &[u8], srgb: bool, bc7: bool) -> Result<Texture2D, String> {
    use basisu::{DecodeFlags, TargetFormat, Transcoder};
    // zstd levels are undone here, with the ruzstd the RGBA8 path uses
    // (basisu's own `zstd` feature would build a second ruzstd).
    let unzstd_file;
    let file = if read_ktx2(bytes).is_ok_and(|r| r.header().supercompression_scheme == Some(SupercompressionScheme::Zstandard)) {
        unzstd_file = without_zstd(bytes)?;
        &unzstd_file[..]
    } else {
        bytes
    };
    let tex = Transcoder::new(file).map_err(|e| format!("not transcoded: {e:?}"))?;
    let target = if bc7 { TargetFormat::Bc7Rgba } else { TargetFormat::Rgba32 };
    let levels = (0..tex.level_count())
        .map(|i| tex.transcode(i, target, DecodeFlags::NONE).map_err(|e| format!("level {i} not transcoded: {e:?}")))
        .collect::<Result<Vec<_>, _>>()?;
    let (width, height) = tex.base_dimensions();
    Ok(if bc7 {
        let format = if srgb { TextureFormat::Bc7Srgb } else { TextureFormat::Bc7Unorm };
        Texture2D::compressed(label, width, height, format, levels)
    } else {
        let format = if srgb { TextureFormat::Rgba8Srgb } else { TextureFormat::Rgba8Unorm };
        let count = levels.len();
        let mut levels = levels.into_iter();
        let texture = Texture2D::new(label, width, height, format, levels.next().expect("at least one level"));
        if count > 1 {
            texture.with_mips(levels.collect())
        } else {
            texture
        }
    })
}

/// A zstd-supercompressed KTX2 file rewritten without supercompression:
/// the header (scheme 0), the level index pointing at the decompressed
/// levels, the same descriptor, key/value and global data, then the levels
/// (smallest first, each 16-byte aligned: a UASTC block's size).
fn without_zstd(bytes: &[u8]) -> Result<Vec<u8>, String> {
    let reader = read_ktx2(bytes).map_err(|e| format!("not a valid KTX2 file: {e}"))?;
    let (width, height) = (reader.header().pixel_width, reader.header().pixel_height);
    let levels = reader
        .levels()
        .enumerate()
        .map(|(i, l)| {
            // UASTC: 16 bytes a 4x4 block (zstd is not used with ETC1S).
            let size = ((width >> i).max(1).div_ceil(4) * (height >> i).max(1).div_ceil(4)) as usize * 16;
            let level = unzstd(l.data, size).map_err(|e| format!("level {i}: {e}"))?;
            match level.len() == size {
                true => Ok(level),
                false => Err(format!("level {i} has {} bytes; {size} expected", level.len())),
            }
        })
        .collect::<Result<Vec<_>, String>>()?;
    let index = reader.header().index;
    // Everything before the levels: header, level index, DFD, KVD, SGD.
    let meta_end = [
        80 + 24 * levels.len() as u64,
        u64::from(index.dfd_byte_offset) + u64::from(index.dfd_byte_length),
        u64::from(index.kvd_byte_offset) + u64::from(index.kvd_byte_length),
        index.sgd_byte_offset.saturating_add(index.sgd_byte_length),
    ]
    .into_iter()
    .max()
    .unwrap_or(0);
    let meta = usize::try_from(meta_end).ok().and_then(|end| bytes.get(..end));
    let mut out = meta.ok_or("KTX2 metadata past the end of the file")?.to_vec();
    out[44..48].copy_from_slice(&0u32.to_le_bytes());
    for (i, level) in levels.iter().enumerate().rev() {
        out.resize(out.len().next_multiple_of(16), 0);
        let entry = 80 + 24 * i;
        let (offset, length) = (out.len() as u64, level.len() as u64);
        out[entry..entry + 24].copy_from_slice(&[offset.to_le_bytes(), length.to_le_bytes(), length.to_le_bytes()].concat());
        out.extend_from_slice(level);
    }
    Ok(out)
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
