//! Equirectangular images of radiance: the environment's source.

use super::EnvironmentError;
use glam::Vec3;
use std::f32::consts::PI;

/// The widest equirectangular image an environment takes (a 8192x4096
/// panorama decodes to 400 MB of `f32` texels).
pub const MAX_EQUIRECT_WIDTH: u32 = 8192;
/// The tallest.
pub const MAX_EQUIRECT_HEIGHT: u32 = 4096;

/// Linear RGB radiance over every direction, in rows of an
/// equirectangular projection (`crate::environment`'s module docs give its
/// directions). Valid by construction: within the size limits, every texel
/// finite and at least 0.
#[derive(Clone, Debug, PartialEq)]
pub struct EquirectImage {
    width: u32,
    height: u32,
    texels: Vec<[f32; 3]>,
}

impl EquirectImage {
    /// An image of `width` x `height` texels, top row first. A size outside
    /// the limits is [`EnvironmentError::Size`]; a texel count other than
    /// width x height, or a negative or non-finite channel,
    /// [`EnvironmentError::Texels`].
    pub fn new(width: u32, height: u32, texels: Vec<[f32; 3]>) -> Result<Self, EnvironmentError> {
        check_size(width, height)?;
        let want = width as usize * height as usize;
        if texels.len() != want {
            return Err(EnvironmentError::Texels(format!("{} texels for a {width}x{height} image ({want})", texels.len())));
        }
        if let Some(i) = texels.iter().position(|t| t.iter().any(|c| !c.is_finite() || *c < 0.0)) {
            return Err(EnvironmentError::Texels(format!("texel {i} is {:?}: channels must be finite and >= 0", texels[i])));
        }
        Ok(Self { width, height, texels })
    }

    /// The same radiance from every direction (an 8x4 image): the white
    /// furnace's environment.
    pub fn uniform(radiance: [f32; 3]) -> Result<Self, EnvironmentError> {
        Self::new(8, 4, vec![radiance; 32])
    }

    /// `radiance(direction)` at every texel's centre.
    pub fn from_fn(width: u32, height: u32, radiance: impl Fn(Vec3) -> [f32; 3]) -> Result<Self, EnvironmentError> {
        check_size(width, height)?;
        let texels = (0..height)
            .flat_map(|y| (0..width).map(move |x| (x, y)))
            .map(|(x, y)| radiance(Self::direction((x as f32 + 0.5) / width as f32, (y as f32 + 0.5) / height as f32)))
            .collect();
        Self::new(width, height, texels)
    }

    /// Decodes a Radiance `.hdr` (RGBE) image. Its size is checked from the
    /// header before any texel is decoded: too large is
    /// [`EnvironmentError::Size`]; a truncated or malformed file
    /// [`EnvironmentError::Decode`].
    pub fn decode_hdr(bytes: &[u8]) -> Result<Self, EnvironmentError> {
        use ::image::ImageDecoder;
        let decoder =
            ::image::codecs::hdr::HdrDecoder::new(std::io::Cursor::new(bytes)).map_err(|e| EnvironmentError::Decode(e.to_string()))?;
        let (width, height) = decoder.dimensions();
        check_size(width, height)?;
        let mut buf = vec![0u8; decoder.total_bytes() as usize];
        decoder.read_image(&mut buf).map_err(|e| EnvironmentError::Decode(e.to_string()))?;
        let texels = buf
            .chunks_exact(12)
            .map(|t| std::array::from_fn(|c| f32::from_le_bytes(t[c * 4..c * 4 + 4].try_into().expect("4 bytes"))))
            .collect();
        Self::new(width, height, texels)
    }

    /// Reads and decodes a Radiance `.hdr` file ([`Self::decode_hdr`]); an
    /// unreadable file is [`EnvironmentError::Io`].
    pub fn load_hdr(path: impl AsRef<std::path::Path>) -> Result<Self, EnvironmentError> {
        let path = path.as_ref();
        let io = |source| EnvironmentError::Io { path: path.display().to_string(), source };
        let meta = std::fs::metadata(path).map_err(io)?;
        if !meta.is_file() {
            return Err(io(std::io::Error::other("not a regular file")));
        }
        // The header's size limit bounds the decoded texels; the file itself
        // is at most 4 bytes a texel plus a header (RGBE, run-length or flat).
        let max = u64::from(MAX_EQUIRECT_WIDTH) * u64::from(MAX_EQUIRECT_HEIGHT) * 4 + 65536;
        if meta.len() > max {
            return Err(io(std::io::Error::other(format!(
                "{} bytes: more than a {MAX_EQUIRECT_WIDTH}x{MAX_EQUIRECT_HEIGHT} image",
                meta.len()
            ))));
        }
        Self::decode_hdr(&std::fs::read(path).map_err(io)?)
    }

    /// Width in texels.
    pub fn width(&self) -> u32 {
        self.width
    }

    /// Height in texels.
    pub fn height(&self) -> u32 {
        self.height
    }

    /// The texels, rows top first.
    pub fn texels(&self) -> &[[f32; 3]] {
        &self.texels
    }

    /// The direction at image coordinates (u, v), each 0..1 (module docs).
    pub fn direction(u: f32, v: f32) -> Vec3 {
        let (phi, theta) = (PI * (1.0 - 2.0 * u), PI * v);
        Vec3::new(theta.sin() * phi.cos(), theta.sin() * phi.sin(), theta.cos())
    }

    /// The image coordinates (u in 0..1, v in 0..1) of direction `d` (unit).
    pub fn coordinates(d: Vec3) -> (f32, f32) {
        let u = 0.5 - d.y.atan2(d.x) / (2.0 * PI);
        (u, d.z.clamp(-1.0, 1.0).acos() / PI)
    }

    /// The texel nearest to direction `d` (unit): what a mirror reflects.
    pub fn nearest(&self, d: Vec3) -> [f32; 3] {
        let (u, v) = Self::coordinates(d);
        let x = ((u * self.width as f32) as u32).min(self.width - 1);
        let y = ((v * self.height as f32) as u32).min(self.height - 1);
        self.texels[(y * self.width + x) as usize]
    }
}

fn check_size(width: u32, height: u32) -> Result<(), EnvironmentError> {
    if width == 0 || height == 0 || width > MAX_EQUIRECT_WIDTH || height > MAX_EQUIRECT_HEIGHT {
        return Err(EnvironmentError::Size { width, height, max_width: MAX_EQUIRECT_WIDTH, max_height: MAX_EQUIRECT_HEIGHT });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directions_and_coordinates_invert_each_other() {
        for (u, v) in [(0.5, 0.5), (0.25, 0.5), (0.75, 0.3), (0.1, 0.9)] {
            let (u2, v2) = EquirectImage::coordinates(EquirectImage::direction(u, v));
            assert!((u - u2).abs() < 1e-5 && (v - v2).abs() < 1e-5, "{u},{v} -> {u2},{v2}");
        }
        // The centre looks along +X, the left quarter along +Y, the top up.
        assert!(EquirectImage::direction(0.5, 0.5).abs_diff_eq(Vec3::X, 1e-6));
        assert!(EquirectImage::direction(0.25, 0.5).abs_diff_eq(Vec3::Y, 1e-6));
        assert!(EquirectImage::direction(0.3, 0.0).abs_diff_eq(Vec3::Z, 1e-6));
    }

    #[test]
    fn bad_sizes_and_texels_are_refused() {
        assert!(matches!(EquirectImage::new(0, 4, vec![]), Err(EnvironmentError::Size { .. })));
        assert!(matches!(EquirectImage::new(MAX_EQUIRECT_WIDTH + 1, 4, vec![]), Err(EnvironmentError::Size { .. })));
        assert!(matches!(EquirectImage::new(2, 1, vec![[0.0; 3]]), Err(EnvironmentError::Texels(_))));
        assert!(matches!(EquirectImage::new(1, 1, vec![[f32::NAN, 0.0, 0.0]]), Err(EnvironmentError::Texels(_))));
        assert!(matches!(EquirectImage::new(1, 1, vec![[-1.0, 0.0, 0.0]]), Err(EnvironmentError::Texels(_))));
    }

    /// A Radiance file: header, resolution line, flat (uncompressed) RGBE texels.
    fn hdr_file(width: u32, height: u32, rgbe: [u8; 4]) -> Vec<u8> {
        let mut f = format!("#?RADIANCE\nFORMAT=32-bit_rle_rgbe\n\n-Y {height} +X {width}\n").into_bytes();
        for _ in 0..width * height {
            f.extend(rgbe);
        }
        f
    }

    #[test]
    fn hdr_files_decode_and_bad_ones_are_typed_errors() {
        // RGBE (128, 64, 32, 129): mantissas / 256 * 2^(129 - 128).
        let img = EquirectImage::decode_hdr(&hdr_file(4, 2, [128, 64, 32, 129])).unwrap();
        assert_eq!((img.width(), img.height()), (4, 2));
        assert_eq!(img.texels()[5], [1.0, 0.5, 0.25]);
        // Truncated: texels missing.
        let mut short = hdr_file(4, 2, [128, 64, 32, 129]);
        short.truncate(short.len() - 6);
        assert!(matches!(EquirectImage::decode_hdr(&short), Err(EnvironmentError::Decode(_))));
        // A 100k x 100k header: refused before decoding (no 120 GB buffer).
        let huge = b"#?RADIANCE\nFORMAT=32-bit_rle_rgbe\n\n-Y 100000 +X 100000\n".to_vec();
        assert!(matches!(EquirectImage::decode_hdr(&huge), Err(EnvironmentError::Size { width: 100000, height: 100000, .. })));
        assert!(matches!(EquirectImage::decode_hdr(b"P6\n1 1\n255\n"), Err(EnvironmentError::Decode(_))));
        assert!(matches!(EquirectImage::load_hdr("/nonexistent.hdr"), Err(EnvironmentError::Io { .. })));
        assert!(matches!(EquirectImage::load_hdr("/dev/zero"), Err(EnvironmentError::Io { .. })));
    }
}
