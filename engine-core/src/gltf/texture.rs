//! The images the materials use: each source read once, every decode's
//! size counted from the headers against the limits, then decoded in
//! parallel, once per (source, colour space).
//!
//! An image's source is the bytes it names: a buffer view's range of a
//! loaded buffer, a file (by its canonical path), or a data URI. Images
//! naming one source — 256 images over one buffer view, or one file
//! spelled `a.png` and `./a.png` — share its bytes, its decode and the
//! [`GltfTexture`] it makes.

use super::accessor::{self, Buffer};
use super::material::TextureKeys;
use super::read::{missing_image, read_uri, resolve_uri, skip, UriSource};
use super::*;
use rayon::prelude::*;
use std::collections::HashMap;

/// What identifies an image source: bytes of a loaded buffer by address
/// and length (buffer views over the same range are one source), or a URI.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum SourceKey<'d> {
    Bytes(usize, usize),
    Uri(UriSource<'d>),
}

/// The encoded bytes of the images the materials use, each source read once.
pub(crate) struct ImageSources<'b> {
    /// Per glTF image: its source (an index into `bytes`); `None` for an
    /// image no material uses (not read).
    of_image: Vec<Option<usize>>,
    /// Per source: its bytes.
    bytes: Vec<Buffer<'b>>,
}

/// Reads the sources of the images `keys` names, in key order, each once.
pub(crate) fn read_image_sources<'b>(
    doc: &gltf::Document,
    keys: &TextureKeys,
    buffers: &'b [Buffer<'_>],
    base: Option<&Path>,
    limits: &GltfLimits,
    progress: &ImportProgress,
) -> Result<ImageSources<'b>, GltfError> {
    let mut out = ImageSources { of_image: vec![None; doc.images().len()], bytes: Vec::new() };
    let mut seen: HashMap<SourceKey<'_>, usize> = HashMap::new();
    for &(image, _) in &keys.keys {
        if out.of_image[image].is_some() {
            continue;
        }
        // From the JSON: gltf's Image::source panics on an image with neither
        // a URI nor a buffer view, or a view without a MIME type.
        let json = &doc.as_json().images[image];
        let path = format!("/images/{image}");
        let (key, view) = match (&json.buffer_view, &json.uri) {
            (Some(view), _) => {
                let view = doc.views().nth(view.value()).expect("validated index");
                let bytes = accessor::view_bytes(&view, buffers)
                    .map_err(|e| GltfError::MissingImage { path: path.clone(), problem: e.to_string() })?;
                (SourceKey::Bytes(bytes.as_ptr() as usize, bytes.len()), Some(bytes))
            }
            (None, Some(uri)) => (SourceKey::Uri(resolve_uri(uri, base, &path, limits, missing_image)?), None),
            (None, None) => return Err(GltfError::MissingImage { path, problem: "neither a uri nor a bufferView".into() }),
        };
        let at = match (seen.get(&key), view, &key) {
            (Some(&at), ..) => at,
            (None, Some(bytes), _) => out.push(Buffer::Borrowed(bytes)),
            (None, None, SourceKey::Uri(uri)) => out.push(Buffer::Owned(read_uri(uri, &path, limits, progress, missing_image)?)),
            (None, None, SourceKey::Bytes(..)) => unreachable!("a buffer view's key comes with its bytes"),
        };
        seen.insert(key, at);
        out.of_image[image] = Some(at);
    }
    Ok(out)
}

impl<'b> ImageSources<'b> {
    /// Adds a source's bytes; returns its index.
    fn push(&mut self, bytes: Buffer<'b>) -> usize {
        self.bytes.push(bytes);
        self.bytes.len() - 1
    }
}

/// One decode: an image source in one colour space.
#[derive(Clone, Copy)]
pub(crate) struct Decode {
    /// The source (an index into [`ImageSources`]' bytes).
    source: usize,
    /// The first image naming it (in key order): its path and label.
    image: usize,
    srgb: bool,
    /// Whether an extension the file requires needs one of its images
    /// (then a failed decode refuses the file).
    required: bool,
}

/// The decodes the materials' textures need: one per (image source, colour
/// space), and per texture key (image, colour space) the decode it uses.
pub(crate) struct Decodes {
    /// In the order the keys first name them.
    pub list: Vec<Decode>,
    /// Per [`TextureKeys::keys`] entry: its index in `list`.
    of_key: Vec<usize>,
}

impl Decodes {
    /// The decodes of `keys`, whose images `sources` read; `required`: per
    /// image, whether an extension the file requires needs it (a decode is
    /// required when any image of its source is).
    pub(crate) fn new(keys: &TextureKeys, sources: &ImageSources<'_>, required: &[bool]) -> Self {
        let mut out = Decodes { list: Vec::new(), of_key: Vec::with_capacity(keys.keys.len()) };
        let mut index: HashMap<(usize, bool), usize> = HashMap::new();
        for &(image, srgb) in &keys.keys {
            let source = sources.of_image[image].expect("every key's image was read");
            let at = *index.entry((source, srgb)).or_insert_with(|| {
                out.list.push(Decode { source, image, srgb, required: false });
                out.list.len() - 1
            });
            out.list[at].required |= required.get(image).copied().unwrap_or(false);
            out.of_key.push(at);
        }
        out
    }

    /// Counts every decode's texels against
    /// [`GltfLimits::max_decoded_texture_bytes`] (and each image's size
    /// against [`GltfLimits::max_texture_dimension`]) from the images'
    /// headers, before any is decoded. An image whose header does not read
    /// counts nothing: its decode fails the same way.
    pub(crate) fn check_bytes(&self, sources: &ImageSources<'_>, limits: &GltfLimits) -> Result<(), GltfError> {
        let mut total = 0u64;
        for d in &self.list {
            let path = format!("/images/{}", d.image);
            let Some(bytes) = decoded_bytes(&sources.bytes[d.source], &path, limits)? else { continue };
            total = total.saturating_add(bytes);
            GltfError::check_limit(&path, "decoded texture bytes", total, limits.max_decoded_texture_bytes)?;
        }
        Ok(())
    }

    /// Every decode, in parallel. An image that does not decode is
    /// `Err(problem)` — unless an extension the file requires needs it, or
    /// it is past a limit: then the file is refused.
    pub(crate) fn decode(
        &self,
        doc: &gltf::Document,
        sources: &ImageSources<'_>,
        limits: &GltfLimits,
        progress: &ImportProgress,
    ) -> Result<Vec<Result<GltfTexture, String>>, GltfError> {
        self.list
            .par_iter()
            .map(|&Decode { source, image, srgb, required }| {
                let path = format!("/images/{image}");
                let bytes = &sources.bytes[source];
                let decoded = decode_image(doc, image, srgb, bytes, &path, limits);
                ImportProgress::add(&progress.images_decoded, 1);
                match decoded {
                    Ok(texture) => {
                        // A Basis texture (BC7 here) keeps its file: spawning transcodes
                        // it to RGBA8 where the device does not sample BC.
                        let basis = (ktx::is_ktx2(bytes) && ktx::is_basis(bytes)).then(|| Arc::from(&bytes[..]));
                        Ok(Ok(GltfTexture { image, srgb, texture, basis }))
                    }
                    Err(GltfError::UndecodableImage { problem, .. }) if !required => Ok(Err(problem)),
                    Err(e) => Err(e),
                }
            })
            .collect()
    }

    /// The decoded textures, in decode order without those that did not
    /// decode (one skipped line each); the materials' texture references
    /// (key indices) are renumbered to match, and a slot whose image did
    /// not decode loses its texture (its factor alone is used).
    pub(crate) fn keep_decoded(
        &self,
        decoded: Vec<Result<GltfTexture, String>>,
        materials: &mut [GltfMaterial],
        skipped: &mut Vec<String>,
    ) -> Vec<GltfTexture> {
        let mut textures = Vec::with_capacity(decoded.len());
        let mut of_decode = Vec::with_capacity(decoded.len());
        let mut reported = std::collections::HashSet::new();
        for (d, &Decode { image, .. }) in decoded.into_iter().zip(&self.list) {
            match d {
                Ok(t) => {
                    of_decode.push(Some(textures.len()));
                    textures.push(t);
                }
                Err(problem) => {
                    of_decode.push(None);
                    if reported.insert(image) {
                        skip(
                            skipped,
                            format!("/images/{image}: does not decode ({problem}); the texture slots using it use their factors"),
                        );
                    }
                }
            }
        }
        let renumbered: Vec<Option<usize>> = self.of_key.iter().map(|&d| of_decode[d]).collect();
        for m in materials {
            for slot in [
                &mut m.base_color_texture,
                &mut m.metallic_roughness_texture,
                &mut m.normal_texture,
                &mut m.occlusion_texture,
                &mut m.emissive_texture,
            ] {
                match slot.as_ref().map(|t| renumbered.get(t.texture).copied().flatten()) {
                    Some(Some(at)) => slot.as_mut().expect("some").texture = at,
                    Some(None) => *slot = None,
                    None => {}
                }
            }
        }
        textures
    }
}

/// The bytes decoding `bytes` (image `path`) makes, from its header, after
/// its size is checked against the dimension limit: RGBA8 texels, or a KTX2
/// file's levels as RGBA8 (plus the file, which a Basis texture keeps).
/// `None` where the header does not read.
fn decoded_bytes(bytes: &[u8], path: &str, limits: &GltfLimits) -> Result<Option<u64>, GltfError> {
    if ktx::is_ktx2(bytes) {
        return ktx::decoded_bytes(bytes, path, limits);
    }
    let reader = image::ImageReader::new(std::io::Cursor::new(bytes)).with_guessed_format();
    let Some((w, h)) = reader.ok().and_then(|r| r.into_dimensions().ok()) else { return Ok(None) };
    GltfError::check_limit(path, "texture dimension", w.max(h) as u64, limits.max_texture_dimension as u64)?;
    Ok(Some(w as u64 * h as u64 * 4))
}

/// Image `image`'s bytes as a texture (`path`: its JSON pointer);
/// [`GltfError::UndecodableImage`] when they do not decode.
fn decode_image(
    doc: &gltf::Document,
    image: usize,
    srgb: bool,
    bytes: &[u8],
    path: &str,
    limits: &GltfLimits,
) -> Result<renderer::Texture2D, GltfError> {
    let label = doc.as_json().images[image].name.clone().unwrap_or_else(|| format!("image {image}"));
    if ktx::is_ktx2(bytes) {
        return ktx::decode(&label, bytes, srgb, path, limits);
    }
    let undecodable = |problem: String| GltfError::UndecodableImage { path: path.into(), problem };
    let (w, h) = image::ImageReader::new(std::io::Cursor::new(bytes))
        .with_guessed_format()
        .map_err(|e| undecodable(e.to_string()))?
        .into_dimensions()
        .map_err(|e| undecodable(e.to_string()))?;
    GltfError::check_limit(path, "texture dimension", w.max(h) as u64, limits.max_texture_dimension as u64)?;
    renderer::Texture2D::decode(&label, bytes, srgb).map_err(|e| undecodable(e.to_string()))
}
