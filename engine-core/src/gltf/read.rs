//! The import itself: parse and validate the document, load buffers (each
//! file once), count what the meshes and textures will make against the
//! limits, then build meshes and decode images (`texture.rs`) in parallel,
//! and read nodes, cameras, lights, skins and animations.

use super::accessor::{AccessorBudget, Buffer};
use super::error::json_pointer;
use super::material::{read_material, TextureKeys};
use super::mesh::{build_mesh, plan_meshes};
use super::texture;
use super::*;
use rayon::prelude::*;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

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

/// Where a URI's bytes are: a base64 data URI's payload, or a file (its
/// canonical path where it has one: one name however the URI spells it).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) enum UriSource<'d> {
    Data(&'d str),
    File(PathBuf),
}

/// Where `uri` (named at `json_path`) points, checked as far as can be
/// without reading: a data URI must be base64; a file must be relative to
/// `base` (and inside it unless the limits allow otherwise).
pub(crate) fn resolve_uri<'d>(
    uri: &'d str,
    base: Option<&Path>,
    json_path: &str,
    limits: &GltfLimits,
    missing: fn(String, String) -> GltfError,
) -> Result<UriSource<'d>, GltfError> {
    if let Some(rest) = uri.strip_prefix("data:") {
        let Some((meta, data)) = rest.split_once(',') else { return Err(missing(json_path.into(), "a data URI without ','".into())) };
        if !meta.ends_with(";base64") {
            return Err(missing(json_path.into(), "a data URI that is not base64".into()));
        }
        return Ok(UriSource::Data(data));
    }
    if uri.contains("://") {
        return Err(missing(json_path.into(), format!("URI {uri:?}: only data URIs and relative file paths are supported")));
    }
    let Some(base) = base else { return Err(missing(json_path.into(), format!("external file {uri:?} but no base directory"))) };
    let file = file_in_folder(base, &percent_decode(uri), json_path, limits)?;
    Ok(UriSource::File(file.canonicalize().unwrap_or(file)))
}

/// The bytes of a resolved URI (`json_path`: who names it).
pub(crate) fn read_uri(
    source: &UriSource<'_>,
    json_path: &str,
    limits: &GltfLimits,
    progress: &ImportProgress,
    missing: fn(String, String) -> GltfError,
) -> Result<Vec<u8>, GltfError> {
    match source {
        UriSource::Data(data) => {
            GltfError::check_limit(json_path, "data URI bytes", data.len() as u64 / 4 * 3, limits.max_file_bytes)?;
            let bytes = base64_decode(data).ok_or_else(|| missing(json_path.into(), "a data URI with invalid base64".into()))?;
            ImportProgress::add(&progress.bytes_read, bytes.len() as u64);
            Ok(bytes)
        }
        UriSource::File(file) => read_file(file, json_path, limits, progress),
    }
}

fn missing_buffer(path: String, problem: String) -> GltfError {
    GltfError::Buffer { path, problem }
}

pub(crate) fn missing_image(path: String, problem: String) -> GltfError {
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

/// The node tree: one parent at most, no cycles (a node on one is
/// [`GltfError::Invalid`]); each node's parent.
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
    // Linear in the nodes (a 100,000-deep chain walked to the root from
    // every node took seconds).
    super::check_acyclic(n, |i| parent[i])?;
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

/// Logs `line` as a warning and keeps it in `skipped`.
pub(crate) fn skip(skipped: &mut Vec<String>, line: String) {
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
    let (files, of_buffer) = read_buffer_files(doc, base, limits, progress)?;
    let buffers = buffers(doc, blob, &files, &of_buffer)?;
    // Materials and the textures they use.
    let mut keys = TextureKeys::default();
    let mut materials = doc
        .materials()
        .enumerate()
        .map(|(i, m)| read_material(&m, &format!("/materials/{i}"), &mut keys, &mut skipped))
        .collect::<Result<Vec<_>, _>>()?;
    // Everything the meshes and textures will make is counted against the
    // limits before any of it is read, built or decoded.
    let accessors = AccessorBudget::new(limits.max_accessor_bytes);
    plan_meshes(doc, &materials, limits, &accessors)?;
    let sources = texture::read_image_sources(doc, &keys, &buffers, base, limits, progress)?;
    let decodes = texture::Decodes::new(&keys, &sources, &required_images(doc));
    decodes.check_bytes(&sources, limits)?;
    progress.images_total.store(decodes.list.len() as u64, std::sync::atomic::Ordering::Relaxed);
    // Images decode while meshes build: each is parallel, and together
    // neither waits for the other's last tasks.
    let (textures, meshes) = rayon::join(
        || decodes.decode(doc, &sources, limits, progress),
        || build_meshes(doc, &buffers, &materials, limits, &accessors, progress, &mut skipped),
    );
    drop(sources);
    let textures = decodes.keep_decoded(textures?, &mut materials, &mut skipped);
    let (meshes, morph_targets) = meshes?;
    let cameras = read_cameras(doc)?;
    let lights = read_lights(doc)?;
    let nodes = read_nodes(doc, &parents)?;
    let skins = super::skin::read_skins(doc, &buffers, &accessors)?;
    let (animations, weight_channels) = super::animation::read_animations(doc, &buffers, limits, &accessors)?;
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

/// The bytes of the files and data URIs the buffers name, and per buffer
/// the index of its bytes there (`None`: the GLB's BIN chunk).
type BufferFiles = (Vec<Vec<u8>>, Vec<Option<usize>>);

/// The buffers' files and data URIs, each source read once however many
/// buffers name it.
fn read_buffer_files(
    doc: &gltf::Document,
    base: Option<&Path>,
    limits: &GltfLimits,
    progress: &ImportProgress,
) -> Result<BufferFiles, GltfError> {
    let (mut files, mut of_buffer) = (Vec::new(), Vec::with_capacity(doc.buffers().len()));
    let mut seen: HashMap<UriSource<'_>, usize> = HashMap::new();
    for b in doc.buffers() {
        let gltf::buffer::Source::Uri(uri) = b.source() else {
            of_buffer.push(None);
            continue;
        };
        let path = format!("/buffers/{}", b.index());
        let source = resolve_uri(uri, base, &path, limits, missing_buffer)?;
        let at = match seen.get(&source) {
            Some(&at) => at,
            None => {
                files.push(read_uri(&source, &path, limits, progress, missing_buffer)?);
                seen.insert(source, files.len() - 1);
                files.len() - 1
            }
        };
        of_buffer.push(Some(at));
    }
    Ok((files, of_buffer))
}

/// Every buffer's bytes, borrowed: the GLB BIN chunk (`blob`) or what
/// [`read_buffer_files`] read (`files`, `of_buffer`), each at least its
/// `byteLength`.
fn buffers<'b>(
    doc: &gltf::Document,
    blob: Option<&'b [u8]>,
    files: &'b [Vec<u8>],
    of_buffer: &[Option<usize>],
) -> Result<Vec<Buffer<'b>>, GltfError> {
    let mut buffers = Vec::with_capacity(doc.buffers().len());
    for (b, file) in doc.buffers().zip(of_buffer) {
        let path = format!("/buffers/{}", b.index());
        let data: &[u8] = match file {
            Some(i) => &files[*i],
            None => blob.ok_or_else(|| GltfError::Buffer { path: path.clone(), problem: "the file has no GLB BIN chunk".into() })?,
        };
        if data.len() < b.length() {
            return Err(GltfError::Buffer { path, problem: format!("{} bytes, byteLength says {}", data.len(), b.length()) });
        }
        buffers.push(Buffer::Borrowed(data));
    }
    Ok(buffers)
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

/// Every mesh, built in parallel (the first error in mesh order is
/// reported; [`plan_meshes`] charged what they make); their skipped lines
/// go to `skipped`. Returns the meshes and
/// the primitives that had morph targets.
fn build_meshes(
    doc: &gltf::Document,
    buffers: &[Buffer<'_>],
    materials: &[GltfMaterial],
    limits: &GltfLimits,
    budget: &AccessorBudget,
    progress: &ImportProgress,
    skipped: &mut Vec<String>,
) -> Result<(Vec<Option<GltfMesh>>, usize), GltfError> {
    progress.meshes_total.store(doc.meshes().len() as u64, std::sync::atomic::Ordering::Relaxed);
    let built: Vec<_> = (0..doc.meshes().len())
        .into_par_iter()
        .map(|i| {
            let m = doc.meshes().nth(i).expect("in range");
            let (mut lines, mut morphs) = (Vec::new(), 0);
            let mesh = build_mesh(&m, buffers, materials, limits, budget, &mut lines, &mut morphs);
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
