//! The import itself: parse and validate the document, load buffers,
//! decode images (in parallel), build meshes, read nodes, cameras, lights.

use super::accessor::Buffer;
use super::error::json_pointer;
use super::material::{read_material, TextureKeys};
use super::mesh::{build_mesh, Budget};
use super::*;
use rayon::prelude::*;
use std::path::Path;

/// Extensions the importer understands (a file may require these).
pub const SUPPORTED_EXTENSIONS: [&str; 6] = [
    "KHR_lights_punctual",
    "KHR_materials_emissive_strength",
    "KHR_materials_unlit",
    "KHR_texture_basisu",
    "KHR_texture_transform",
    "KHR_mesh_quantization",
];

/// Reads a file no larger than the limit (`json_path`: who names it; ""
/// for the model itself). A file the model names must be a regular file:
/// a device, pipe or folder is [`GltfError::Io`] (`/dev/zero` would never
/// end, a pipe could block for ever). The model's own path is the
/// caller's choice and may be a pipe (a streamed model). Either way the
/// read stops past the limit, even if the file grows after its size was
/// checked.
pub(crate) fn read_file(file: &Path, json_path: &str, limits: &GltfLimits, progress: &ImportProgress) -> Result<Vec<u8>, GltfError> {
    use std::io::Read;
    let io = |error| GltfError::Io { path: json_path.into(), file: file.to_path_buf(), error };
    let meta = std::fs::metadata(file).map_err(io)?;
    if !json_path.is_empty() && !meta.is_file() {
        return Err(io(std::io::Error::new(std::io::ErrorKind::InvalidInput, "not a regular file")));
    }
    GltfError::check_limit(json_path, "file bytes", meta.len(), limits.max_file_bytes)?;
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    std::fs::File::open(file).and_then(|f| f.take(limits.max_file_bytes.saturating_add(1)).read_to_end(&mut bytes)).map_err(io)?;
    GltfError::check_limit(json_path, "file bytes", bytes.len() as u64, limits.max_file_bytes)?;
    ImportProgress::add(&progress.bytes_read, bytes.len() as u64);
    Ok(bytes)
}

/// The file a relative URI names in the model's folder `base`: one outside
/// it (absolute, or out through `..` or a link) is [`GltfError::Io`]
/// unless the limits allow it.
fn file_in_folder(base: &Path, uri: &str, json_path: &str, limits: &GltfLimits) -> Result<std::path::PathBuf, GltfError> {
    let file = base.join(uri);
    if limits.allow_files_outside_model_folder {
        return Ok(file);
    }
    let io = |error| GltfError::Io { path: json_path.into(), file: file.clone(), error };
    let (folder, resolved) = (base.canonicalize().map_err(io)?, file.canonicalize().map_err(io)?);
    if !resolved.starts_with(&folder) {
        let message = format!("outside the model's folder {} (GltfLimits::allow_files_outside_model_folder)", folder.display());
        return Err(io(std::io::Error::new(std::io::ErrorKind::PermissionDenied, message)));
    }
    Ok(resolved)
}

fn base64_decode(s: &str) -> Option<Vec<u8>> {
    let s = s.trim_end_matches('=');
    let mut out = Vec::with_capacity(s.len() * 3 / 4);
    let (mut acc, mut bits) = (0u32, 0u32);
    for c in s.bytes() {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            b'\r' | b'\n' | b' ' => continue,
            _ => return None,
        };
        acc = (acc << 6) | v as u32;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    Some(out)
}

fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let hex = |c: u8| (c as char).to_digit(16);
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() {
            if let (Some(h), Some(l)) = (hex(b[i + 1]), hex(b[i + 2])) {
                out.push((h * 16 + l) as u8);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The bytes a URI names: a base64 data URI, or a file relative to `base`.
fn uri_bytes(
    uri: &str,
    base: Option<&Path>,
    json_path: &str,
    limits: &GltfLimits,
    progress: &ImportProgress,
    missing: fn(String, String) -> GltfError,
) -> Result<Vec<u8>, GltfError> {
    if let Some(rest) = uri.strip_prefix("data:") {
        let Some((meta, data)) = rest.split_once(',') else { return Err(missing(json_path.into(), "a data URI without ','".into())) };
        if !meta.ends_with(";base64") {
            return Err(missing(json_path.into(), "a data URI that is not base64".into()));
        }
        GltfError::check_limit(json_path, "data URI bytes", data.len() as u64 / 4 * 3, limits.max_file_bytes)?;
        let bytes = base64_decode(data).ok_or_else(|| missing(json_path.into(), "a data URI with invalid base64".into()))?;
        ImportProgress::add(&progress.bytes_read, bytes.len() as u64);
        return Ok(bytes);
    }
    if uri.contains("://") {
        return Err(missing(json_path.into(), format!("URI {uri:?}: only data URIs and relative file paths are supported")));
    }
    let Some(base) = base else { return Err(missing(json_path.into(), format!("external file {uri:?} but no base directory"))) };
    let file = file_in_folder(base, &percent_decode(uri), json_path, limits)?;
    read_file(&file, json_path, limits, progress)
}

fn missing_buffer(path: String, problem: String) -> GltfError {
    GltfError::Buffer { path, problem }
}

fn missing_image(path: String, problem: String) -> GltfError {
    GltfError::MissingImage { path, problem }
}

/// A `.glb`'s header: magic, version, length.
const GLB_HEADER_BYTES: u32 = 12;

fn parse(bytes: &[u8]) -> Result<(gltf::Document, Option<&[u8]>), GltfError> {
    let malformed = |e: gltf::Error| match e {
        gltf::Error::Binary(b) => GltfError::MalformedGlb(format!("{b}")),
        gltf::Error::Deserialize(d) => GltfError::MalformedJson(d.to_string()),
        other => GltfError::MalformedGlb(other.to_string()),
    };
    // As `gltf::Gltf::from_slice_without_validation`, but the BIN chunk
    // stays borrowed from `bytes` (that call copies it).
    let (json, blob) = if bytes.starts_with(b"glTF") {
        // gltf 1.4's `Glb::from_slice` subtracts the 12-byte header from the
        // declared length unchecked (a panic where overflow is checked, as
        // in debug builds): a shorter length is refused here.
        if let Some(length) = bytes.get(8..12).map(|l| u32::from_le_bytes([l[0], l[1], l[2], l[3]])) {
            if length < GLB_HEADER_BYTES {
                return Err(GltfError::MalformedGlb(format!(
                    "the header declares {length} bytes, less than the {GLB_HEADER_BYTES}-byte header itself"
                )));
            }
        }
        let glb = gltf::Glb::from_slice(bytes).map_err(malformed)?;
        let blob = match glb.bin {
            Some(std::borrow::Cow::Borrowed(b)) => Some(b),
            // (`Glb::from_slice` borrows; were it ever to copy, say so.)
            Some(std::borrow::Cow::Owned(_)) => return Err(GltfError::MalformedGlb("the BIN chunk could not be borrowed".into())),
            None => None,
        };
        (gltf::json::deserialize::from_slice(&glb.json), blob)
    } else {
        (gltf::json::deserialize::from_slice(bytes), None)
    };
    let json = json.map_err(|e| malformed(gltf::Error::Deserialize(e)))?;
    Ok((gltf::Document::from_json_without_validation(json), blob))
}

/// Checks `extensionsRequired`, then the schema (gltf-json's validation).
fn validate(doc: &gltf::Document) -> Result<(), GltfError> {
    use gltf::json::validation::Validate;
    for (i, ext) in doc.extensions_required().enumerate() {
        if !SUPPORTED_EXTENSIONS.contains(&ext) {
            return Err(GltfError::UnsupportedExtension { path: format!("/extensionsRequired/{i}"), extension: ext.into() });
        }
    }
    let root = doc.as_json();
    // gltf-json's primitive check indexes the POSITION accessor before
    // bounds are checked (it would panic): check that index first.
    let position = gltf::json::validation::Checked::Valid(gltf::json::mesh::Semantic::Positions);
    for (m, mesh) in root.meshes.iter().enumerate() {
        for (p, prim) in mesh.primitives.iter().enumerate() {
            if prim.attributes.get(&position).is_some_and(|a| a.value() >= root.accessors.len()) {
                return Err(GltfError::Invalid {
                    path: format!("/meshes/{m}/primitives/{p}/attributes/POSITION"),
                    problem: "Index out of bounds".into(),
                });
            }
        }
    }
    // gltf-json does not know KHR_texture_basisu: its image index is checked here.
    for t in doc.textures() {
        if let Some(v) = t.extension_value("KHR_texture_basisu") {
            if v.get("source").and_then(|s| s.as_u64()).is_none_or(|s| s as usize >= root.images.len()) {
                return Err(GltfError::Invalid {
                    path: format!("/textures/{}/extensions/KHR_texture_basisu/source", t.index()),
                    problem: "not the index of an image".into(),
                });
            }
        }
    }
    let mut errors = Vec::new();
    root.validate(root, gltf::json::Path::new, &mut |path, error| errors.push((path(), error)));
    // Required extensions were checked above (gltf-json does not know KHR_mesh_quantization).
    let first = errors.into_iter().find(|(p, _)| !p.as_str().starts_with("extensionsRequired"));
    match first {
        Some((path, error)) => Err(GltfError::Invalid { path: json_pointer(path.as_str()), problem: error.to_string() }),
        None => Ok(()),
    }
}

/// The node tree: one parent at most, no cycles; each node's parent.
fn check_tree(doc: &gltf::Document) -> Result<Vec<Option<usize>>, GltfError> {
    let n = doc.nodes().len();
    let mut parent = vec![None; n];
    for node in doc.nodes() {
        for (k, child) in node.children().enumerate() {
            let path = format!("/nodes/{}/children/{k}", node.index());
            if child.index() == node.index() {
                return Err(GltfError::Invalid { path, problem: "a node is its own child".into() });
            }
            if let Some(p) = parent[child.index()] {
                return Err(GltfError::Invalid { path, problem: format!("node {} already has parent {p}", child.index()) });
            }
            parent[child.index()] = Some(node.index());
        }
    }
    for start in 0..n {
        let (mut at, mut steps) = (start, 0);
        while let Some(p) = parent[at] {
            at = p;
            steps += 1;
            if steps > n {
                return Err(GltfError::Invalid { path: format!("/nodes/{start}"), problem: "the node hierarchy has a cycle".into() });
            }
        }
    }
    // A scene root may be another node's child (exporters write such
    // files, e.g. Kenney's kits under a "tmpParent"): the scene spawns it as
    // a root.
    Ok(parent)
}

fn node_transform(node: &gltf::Node, path: &str) -> Result<Transform, GltfError> {
    let (t, r, s) = match node.transform() {
        gltf::scene::Transform::Matrix { matrix } => {
            let m = glam::Mat4::from_cols_array_2d(&matrix);
            let (s, r, t) = m.to_scale_rotation_translation();
            (t, r, s)
        }
        gltf::scene::Transform::Decomposed { translation, rotation, scale } => {
            (Vec3::from(translation), Quat::from_array(rotation), Vec3::from(scale))
        }
    };
    let transform = Transform::new(t, r, s);
    if let Some(reason) = transform.invalid_reason() {
        return Err(GltfError::Invalid { path: path.into(), problem: reason });
    }
    Ok(transform)
}

fn skip(skipped: &mut Vec<String>, line: String) {
    log::warn!("glTF import: skipped {line}");
    skipped.push(line);
}

pub(crate) fn import_bytes(
    bytes: &[u8],
    base: Option<&Path>,
    limits: &GltfLimits,
    progress: &ImportProgress,
) -> Result<GltfImport, GltfError> {
    let (document, blob) = parse(bytes)?;
    let doc = &document;
    validate(doc)?;
    let parents = check_tree(doc)?;
    let mut skipped = Vec::new();
    let buffers = read_buffers(doc, blob, base, limits, progress)?;
    // Materials and the textures they use.
    let mut keys = TextureKeys::default();
    let mut materials = doc
        .materials()
        .enumerate()
        .map(|(i, m)| read_material(&m, &format!("/materials/{i}"), &mut keys, &mut skipped))
        .collect::<Result<Vec<_>, _>>()?;
    let image_bytes = read_image_bytes(doc, &keys, &buffers, base, limits, progress)?;
    progress.images_total.store(keys.keys.len() as u64, std::sync::atomic::Ordering::Relaxed);
    // Images decode while meshes build: each is parallel, and together
    // neither waits for the other's last tasks.
    let required = required_images(doc);
    let (textures, meshes) = rayon::join(
        || decode_textures(doc, &keys, &image_bytes, &required, limits, progress),
        || build_meshes(doc, &buffers, &materials, limits, progress, &mut skipped),
    );
    drop(image_bytes);
    let textures = keep_decoded(textures?, &keys, &mut materials, &mut skipped);
    let (meshes, morph_targets) = meshes?;
    let cameras = read_cameras(doc)?;
    let lights = read_lights(doc)?;
    let nodes = read_nodes(doc, &parents)?;
    let skins = super::skin::read_skins(doc, &buffers)?;
    let (animations, weight_channels) = super::animation::read_animations(doc, &buffers, limits)?;
    let scenes =
        doc.scenes().map(|s| GltfScene { name: s.name().unwrap_or("").into(), nodes: s.nodes().map(|n| n.index()).collect() }).collect();
    note_unsupported(doc, &mut skipped);
    if weight_channels > 0 {
        skip(&mut skipped, format!("morph-weight animation channels: {weight_channels} (their node's mesh has no morph targets)"));
    }
    Ok(GltfImport {
        meshes,
        materials,
        textures,
        nodes,
        cameras,
        lights,
        scenes,
        default_scene: doc.default_scene().map(|s| s.index()),
        skins,
        animations,
        morph_target_primitives: morph_targets,
        skipped,
    })
}

/// Every buffer's bytes: the GLB BIN chunk (`blob`, borrowed), a data URI
/// or a file beside the glTF.
fn read_buffers<'b>(
    doc: &gltf::Document,
    blob: Option<&'b [u8]>,
    base: Option<&Path>,
    limits: &GltfLimits,
    progress: &ImportProgress,
) -> Result<Vec<Buffer<'b>>, GltfError> {
    let mut buffers = Vec::with_capacity(doc.buffers().len());
    for b in doc.buffers() {
        let path = format!("/buffers/{}", b.index());
        let data = match b.source() {
            gltf::buffer::Source::Bin => Buffer::Borrowed(
                blob.ok_or_else(|| GltfError::Buffer { path: path.clone(), problem: "the file has no GLB BIN chunk".into() })?,
            ),
            gltf::buffer::Source::Uri(uri) => Buffer::Owned(uri_bytes(uri, base, &path, limits, progress, missing_buffer)?),
        };
        if data.len() < b.length() {
            return Err(GltfError::Buffer { path, problem: format!("{} bytes, byteLength says {}", data.len(), b.length()) });
        }
        buffers.push(data);
    }

    Ok(buffers)
}

/// The encoded bytes of every image a material uses (read in order; the
/// others stay `None`).
fn read_image_bytes<'b>(
    doc: &gltf::Document,
    keys: &TextureKeys,
    buffers: &'b [Buffer<'_>],
    base: Option<&Path>,
    limits: &GltfLimits,
    progress: &ImportProgress,
) -> Result<Vec<Option<Buffer<'b>>>, GltfError> {
    let mut image_bytes: Vec<Option<Buffer<'b>>> = vec![None; doc.images().len()];
    for &(image, _) in &keys.keys {
        if image_bytes[image].is_some() {
            continue;
        }
        // From the JSON: gltf's Image::source panics on an image with neither
        // a URI nor a buffer view, or a view without a MIME type.
        let json = &doc.as_json().images[image];
        let path = format!("/images/{image}");
        let bytes = match (&json.buffer_view, &json.uri) {
            (Some(view), _) => {
                let view = doc.views().nth(view.value()).expect("validated index");
                Buffer::Borrowed(
                    accessor::view_bytes(&view, buffers)
                        .map_err(|e| GltfError::MissingImage { path: path.clone(), problem: e.to_string() })?,
                )
            }
            (None, Some(uri)) => Buffer::Owned(uri_bytes(uri, base, &path, limits, progress, missing_image)?),
            (None, None) => return Err(GltfError::MissingImage { path, problem: "neither a uri nor a bufferView".into() }),
        };
        image_bytes[image] = Some(bytes);
    }
    Ok(image_bytes)
}

/// Per image: whether an extension in `extensionsRequired` needs it
/// (then an image that does not decode refuses the file instead of being
/// skipped): the `KHR_texture_basisu` sources when that extension is required.
fn required_images(doc: &gltf::Document) -> Vec<bool> {
    let mut required = vec![false; doc.images().len()];
    if doc.extensions_required().any(|e| e == "KHR_texture_basisu") {
        for t in doc.textures() {
            if let Some(i) = basisu_source(&t).filter(|&i| i < required.len()) {
                required[i] = true;
            }
        }
    }
    required
}

/// A texture's `KHR_texture_basisu` image index, if it has one.
pub(crate) fn basisu_source(t: &gltf::Texture) -> Option<usize> {
    t.extension_value("KHR_texture_basisu")?.get("source")?.as_u64().map(|i| i as usize)
}

/// The textures of `keys` (image, colour space), decoded in parallel after
/// a size check against the limits. An image that does not decode is
/// `Err(problem)` — unless `required` says an extension the file requires
/// needs it, or it is past a limit: then the file is refused.
fn decode_textures(
    doc: &gltf::Document,
    keys: &TextureKeys,
    image_bytes: &[Option<Buffer<'_>>],
    required: &[bool],
    limits: &GltfLimits,
    progress: &ImportProgress,
) -> Result<Vec<Result<GltfTexture, String>>, GltfError> {
    keys.keys
        .par_iter()
        .map(|&(image, srgb)| {
            let path = format!("/images/{image}");
            let bytes = image_bytes[image].as_deref().expect("read above");
            let decoded = decode_image(doc, image, srgb, bytes, &path, limits);
            ImportProgress::add(&progress.images_decoded, 1);
            match decoded {
                Ok(texture) => {
                    // A Basis texture (BC7 here) keeps its file: spawning transcodes
                    // it to RGBA8 where the device does not sample BC.
                    let basis = (super::ktx::is_ktx2(bytes) && super::ktx::is_basis(bytes)).then(|| Arc::from(bytes));
                    Ok(Ok(GltfTexture { image, srgb, texture, basis }))
                }
                Err(GltfError::UndecodableImage { problem, .. }) if !required[image] => Ok(Err(problem)),
                Err(e) => Err(e),
            }
        })
        .collect()
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
    let label = doc.images().nth(image).and_then(|i| i.name().map(str::to_string)).unwrap_or_else(|| format!("image {image}"));
    if super::ktx::is_ktx2(bytes) {
        return super::ktx::decode(&label, bytes, srgb, path, limits);
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

/// The decoded textures, in key order without the images that did not
/// decode (one skipped line each); the materials' texture references are
/// renumbered to match, and a slot whose image did not decode loses its
/// texture (its factor alone is used).
fn keep_decoded(
    decoded: Vec<Result<GltfTexture, String>>,
    keys: &TextureKeys,
    materials: &mut [GltfMaterial],
    skipped: &mut Vec<String>,
) -> Vec<GltfTexture> {
    let mut textures = Vec::with_capacity(decoded.len());
    let mut renumbered = Vec::with_capacity(decoded.len());
    let mut reported = std::collections::HashSet::new();
    for (d, &(image, _)) in decoded.into_iter().zip(&keys.keys) {
        match d {
            Ok(t) => {
                renumbered.push(Some(textures.len()));
                textures.push(t);
            }
            Err(problem) => {
                renumbered.push(None);
                if reported.insert(image) {
                    skip(skipped, format!("/images/{image}: does not decode ({problem}); the texture slots using it use their factors"));
                }
            }
        }
    }
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

/// Every mesh, built in parallel (the first error in mesh order is
/// reported); their skipped lines go to `skipped`. Returns the meshes and
/// the primitives that had morph targets.
fn build_meshes(
    doc: &gltf::Document,
    buffers: &[Buffer<'_>],
    materials: &[GltfMaterial],
    limits: &GltfLimits,
    progress: &ImportProgress,
    skipped: &mut Vec<String>,
) -> Result<(Vec<Option<GltfMesh>>, usize), GltfError> {
    progress.meshes_total.store(doc.meshes().len() as u64, std::sync::atomic::Ordering::Relaxed);
    let budget = Budget::default();
    let built: Vec<_> = (0..doc.meshes().len())
        .into_par_iter()
        .map(|i| {
            let m = doc.meshes().nth(i).expect("in range");
            let (mut lines, mut morphs) = (Vec::new(), 0);
            let mesh = build_mesh(&m, buffers, materials, limits, &budget, &mut lines, &mut morphs);
            ImportProgress::add(&progress.meshes_built, 1);
            mesh.map(|mesh| (mesh, lines, morphs))
        })
        .collect();
    let mut morph_targets = 0;
    let mut meshes = Vec::with_capacity(built.len());
    for b in built {
        let (mesh, lines, morphs) = b?;
        for line in lines {
            skip(skipped, line);
        }
        morph_targets += morphs;
        meshes.push(mesh);
    }

    Ok((meshes, morph_targets))
}

/// The cameras, read from the JSON: gltf's `Camera::projection` panics
/// when the object its type names is absent.
fn read_cameras(doc: &gltf::Document) -> Result<Vec<GltfCamera>, GltfError> {
    let mut cameras = Vec::with_capacity(doc.cameras().len());
    for (i, c) in doc.as_json().cameras.iter().enumerate() {
        use gltf::json::camera::Type;
        let projection = match (c.type_.as_ref(), &c.perspective, &c.orthographic) {
            (gltf::json::validation::Checked::Valid(Type::Perspective), Some(p), _) => {
                GltfProjection::Perspective { yfov: p.yfov, aspect_ratio: p.aspect_ratio, znear: p.znear, zfar: p.zfar }
            }
            (gltf::json::validation::Checked::Valid(Type::Orthographic), _, Some(o)) => {
                GltfProjection::Orthographic { xmag: o.xmag, ymag: o.ymag, znear: o.znear, zfar: o.zfar }
            }
            _ => {
                return Err(GltfError::Invalid {
                    path: format!("/cameras/{i}"),
                    problem: "the projection its type names is missing".into(),
                })
            }
        };
        cameras.push(GltfCamera { name: c.name.clone().unwrap_or_default(), projection });
    }
    Ok(cameras)
}

/// The `KHR_lights_punctual` lights, spot lights included. A spot light's
/// cone out of the extension's order (0 <= inner < outer <= π/2), or a
/// range that is not positive, is [`GltfError::Invalid`].
fn read_lights(doc: &gltf::Document) -> Result<Vec<Option<GltfLight>>, GltfError> {
    let Some(lights) = doc.lights() else { return Ok(Vec::new()) };
    let mut out = Vec::new();
    for l in lights {
        let path = format!("/extensions/KHR_lights_punctual/lights/{}", l.index());
        let invalid = |problem: &str| GltfError::Invalid { path: path.clone(), problem: problem.into() };
        let kind = match l.kind() {
            gltf::khr_lights_punctual::Kind::Directional => GltfLightKind::Directional,
            gltf::khr_lights_punctual::Kind::Point => GltfLightKind::Point,
            gltf::khr_lights_punctual::Kind::Spot { inner_cone_angle: inner, outer_cone_angle: outer } => {
                if !(0.0 <= inner && inner <= outer && outer <= std::f32::consts::FRAC_PI_2) {
                    return Err(invalid(&format!("spot cone angles {inner} and {outer} are not 0 <= inner < outer <= pi/2")));
                }
                GltfLightKind::Spot { inner_cone: inner, outer_cone: outer }
            }
        };
        if l.range().is_some_and(|r| !(r.is_finite() && r > 0.0)) {
            return Err(invalid("its range is not positive"));
        }
        out.push(Some(GltfLight {
            name: l.name().unwrap_or("").into(),
            kind,
            color: Vec3::from(l.color()),
            intensity: l.intensity(),
            range: l.range(),
        }));
    }
    Ok(out)
}

/// The nodes with their local transforms, parents and what they carry.
fn read_nodes(doc: &gltf::Document, parents: &[Option<usize>]) -> Result<Vec<GltfNode>, GltfError> {
    let mut nodes = Vec::with_capacity(doc.nodes().len());
    for node in doc.nodes() {
        let path = format!("/nodes/{}", node.index());
        nodes.push(GltfNode {
            name: node.name().unwrap_or("").into(),
            transform: node_transform(&node, &path)?,
            parent: parents[node.index()],
            children: node.children().map(|c| c.index()).collect(),
            mesh: node.mesh().map(|m| m.index()),
            camera: node.camera().map(|c| c.index()),
            light: node.light().map(|l| l.index()),
            skin: node.skin().map(|s| s.index()),
        });
    }
    Ok(nodes)
}

/// One skipped line per kind of thing the import does not support.
fn note_unsupported(doc: &gltf::Document, skipped: &mut Vec<String>) {
    for ext in doc.extensions_used() {
        if !SUPPORTED_EXTENSIONS.contains(&ext) {
            skip(skipped, format!("extension {ext}: not supported"));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_and_percent_decoding() {
        assert_eq!(base64_decode("aGVsbG8=").unwrap(), b"hello");
        assert_eq!(base64_decode("AAEC").unwrap(), [0, 1, 2]);
        assert!(base64_decode("a*b").is_none());
        assert_eq!(percent_decode("a%20b.bin"), "a b.bin");
        assert_eq!(percent_decode("100%"), "100%");
    }
}
