//! glTF 2.0 import (feature `gltf`, on by default): a `.gltf` (external
//! `.bin` files and images relative to it, or data URIs) or a `.glb` becomes
//! plain data — [`StaticMesh`] assets, material descriptions, decoded
//! textures, the node tree, cameras and lights ([`GltfImport`]) — and
//! [`GltfImport::spawn`] puts it into a [`World`].
//!
//! The files a model names are read only when they are regular files inside the
//! model's folder (a URI that is absolute or climbs out through `..` or a
//! link is [`GltfError::Io`] unless
//! [`GltfLimits::allow_files_outside_model_folder`]), each with a read
//! capped at [`GltfLimits::max_file_bytes`]; URIs with a scheme other than
//! `data:` are refused. The model's own path is read as given (a pipe may
//! stream it), capped at the same limit.
//!
//! ## What is read
//! - **Meshes** → one [`StaticMesh`] per glTF mesh, one section (and
//!   material slot) per triangle primitive. Positions; normals (flat normals
//!   when missing: the triangles are unwelded); tangents (from the file, or
//!   generated with MikkTSpace when missing and the material has a normal
//!   map); `TEXCOORD_0..3`; `COLOR_0` (float, normalized `u8`/`u16`, RGB or
//!   RGBA → RGBA8); `u8`/`u16`/`u32` indices or none; normalized and
//!   integer attributes (`KHR_mesh_quantization`); sparse accessors;
//!   triangle strips and fans become lists. Points and lines are skipped
//!   with a warning, and so are application-specific attributes (names
//!   beginning with `_`, e.g. `_BARYCENTRIC`): ignored, one line each in
//!   [`GltfImport::skipped`].
//! - **Materials** → [`GltfMaterial`] descriptions; at spawn, instances of
//!   one PBR parent material ([`PBR_MATERIAL_WGSL`]) with the factors,
//!   five textures (base colour and emissive sRGB, the others linear; glTF's
//!   metallic-roughness texture: G = roughness, B = metallic; occlusion in
//!   R), the normal scale, occlusion strength, `KHR_materials_emissive_strength`,
//!   alpha mode and cutoff, the UV set of each texture and its
//!   `KHR_texture_transform`. `KHR_materials_unlit` materials are drawn
//!   with [`renderer::ShadingModel::Unlit`] (base colour, no lighting).
//!   Blend mode, sidedness, the shading model and samplers are parent
//!   properties, so there is one parent per (alpha mode, double-sided,
//!   unlit, the five texture slots' samplers) in use: at most 12 when every
//!   texture of a slot shares its sampler, as exporters write them.
//! - **Textures** → [`renderer::Texture2D`]s decoded in parallel (rayon),
//!   mips generated; each image source (a buffer view's bytes, a file, a
//!   data URI) read once and decoded once per colour space it is used in,
//!   however many images name it ([`GltfTexture::image`] is the first). PNG
//!   and JPEG; KTX2 (`KHR_texture_basisu`'s images, used where a texture
//!   has no PNG/JPEG `source`): `R8G8B8A8_UNORM`/`_SRGB`, uncompressed or
//!   zstd-supercompressed, with the file's mip levels, and the
//!   block-compressed BC1 (RGBA), BC3, BC4, BC5 and BC7, kept as blocks
//!   and uploaded as they are where the device samples BC, decoded to RGBA8
//!   at spawn time where it does not ([`decompress_bc`]); Basis Universal
//!   ETC1S and UASTC (the `basisu` crate) transcoded to BC7 by the import
//!   and, where the device does not sample BC, to RGBA8 at spawn time
//!   instead ([`transcode_basis_rgba8`]). Other Basis codecs, BC6H (HDR)
//!   and other block-compressed formats are not read. An image
//!   that does not decode (corrupt, or a format not read)
//!   is skipped with a warning and a [`GltfImport::skipped`] line with the
//!   reason, and every texture slot using it falls back to its factor —
//!   unless an extension in `extensionsRequired` needs that image (a
//!   `KHR_texture_basisu` source when that extension is required): then it
//!   is [`GltfError::UndecodableImage`]. A missing image file is an error;
//!   a texture with no image the importer knows is skipped the same way.
//! - **Scenes** → [`GltfNode`]s with local transforms (matrix or TRS),
//!   [`GltfCamera`]s, `KHR_lights_punctual` directional, point and spot
//!   lights (a spot cone out of order is [`GltfError::Invalid`]).
//! - **Extensions read** ([`SUPPORTED_EXTENSIONS`]): `KHR_lights_punctual`,
//!   `KHR_materials_emissive_strength`, `KHR_materials_unlit`,
//!   `KHR_texture_basisu` (KTX2 as above), `KHR_texture_transform`,
//!   `KHR_mesh_quantization`.
//! - **Skins and animations** → [`GltfSkin`]s (joints, inverse bind
//!   matrices checked invertible), each skinned primitive's `JOINTS_0` and
//!   `WEIGHTS_0` per vertex, with `JOINTS_1`/`WEIGHTS_1` where it has
//!   eight influences ([`GltfMesh::influences`]), and
//!   [`GltfAnimation`]s (translation, rotation and scale channels, step,
//!   linear and cubic-spline; samplers validated: input increasing,
//!   output counts matching). A node with a mesh and a skin spawns a
//!   [`crate::SkeletalMeshComponent`] at the scene's root (glTF places a
//!   skinned mesh by its joints) whose skeleton is the skin's joints and
//!   the nodes above them, with the animations that move it as clips
//!   ([`SpawnedScene::skeletal_meshes`]; none plays until asked);
//!   [`GltfImport::skeletal_mesh`] builds the same for a caller that
//!   places many copies.
//! - **Morph targets** → per mesh its targets' POSITION and NORMAL deltas
//!   per vertex ([`GltfMesh::morph_targets`], TANGENT deltas not read) and
//!   default weights; weight channels animate them. A mesh with targets
//!   and no skin spawns as a skeletal mesh of one joint at its node.
//! - **Not supported** (other extensions): skipped, one `log::warn!` line
//!   each, listed in [`GltfImport::skipped`]. A file that *requires* an
//!   unsupported extension is [`GltfError::UnsupportedExtension`].
//!
//! ## Axes
//! glTF is Y-up with a model's front towards +Z; Proxima is Z-up with +X
//! forward and +Y left. [`GltfImport::spawn`] puts the scene under a root
//! component rotated by [`gltf_to_proxima`]: glTF +Z → +X, +X → +Y,
//! +Y → +Z (a rotation, so winding and handedness are kept) — a model
//! facing the glTF viewer faces +X, upright. Mesh data stays in glTF space.
//!
//! ## Errors
//! A bad file is a [`GltfError`] naming the JSON path of what is wrong
//! (e.g. `/meshes/3/primitives/0/attributes/NORMAL`) and the problem, and
//! sizes are held to [`GltfLimits`], each counted from the file's counts
//! and headers before what it bounds is read, built or decoded (a
//! [`GltfError::LimitExceeded`] naming where the total passed the limit).
//! [`GltfImport::spawn`] checks every
//! texture, material and transform before it creates anything, so a failed
//! spawn adds nothing to the World.
//!
//! ## Seams
//! [`import_slice`] is the whole import on bytes (for fuzzing); the
//! stages report through [`ImportProgress`], which [`load_async`] shows
//! while it imports on a background thread ([`GltfLoad`]: progress, a
//! non-blocking `poll`, `wait`); the game keeps ticking meanwhile.

mod accessor;
mod animation;
mod async_load;
mod error;
mod ktx;
mod material;
mod mesh;
mod read;
mod skin;
mod spawn;
mod texture;

pub use animation::GltfAnimation;
pub use async_load::{load_async, GltfLoad};
pub use error::GltfError;
pub use ktx::decompress_bc;
pub use material::{AlphaMode, GltfMaterial, TextureRef, UvTransform, PBR_MATERIAL_WGSL};
pub use read::SUPPORTED_EXTENSIONS;
pub use skin::GltfSkin;
pub use spawn::SpawnedScene;

use crate::static_mesh::StaticMesh;
use crate::transform::Transform;
use crate::World;
use glam::{Mat3, Quat, Vec3};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// Size limits of an import. Each is checked before the data it bounds is
/// read, built or decoded: what a file asks for is counted from its counts
/// and headers first, so a small file cannot make the import allocate far
/// more than the limits allow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GltfLimits {
    /// The largest file read: the `.gltf`/`.glb`, each `.bin` and image.
    pub max_file_bytes: u64,
    /// Vertices of all meshes together, as built: after strips and fans
    /// become lists and unwelding. A primitive without normals counts a
    /// vertex per triangle corner (flat normals), and so does one whose
    /// tangents are generated (MikkTSpace works on the corners before they
    /// weld back). A primitive that uses an accessor another also uses
    /// counts it again.
    pub max_vertices: u64,
    /// Triangle-list indices of all meshes together (a strip or fan of n
    /// indices is 3(n - 2)).
    pub max_indices: u64,
    /// Accessor data all reads together make, at 4 bytes a component (the
    /// floats or `u32` indices it becomes), whether or not the file holds
    /// it: an accessor read twice (two primitives, two animation channels)
    /// counts twice, and one of zeros with sparse values (no buffer view)
    /// counts in full. Mesh attributes and indices, morph targets (and the
    /// deltas each gets per vertex of its mesh, 24 bytes a vertex), inverse
    /// bind matrices and animation samplers all count. The default, 4 GiB,
    /// is past what the vertex limit lets meshes read (2^25 vertices of
    /// position, normal, tangent and a UV set are 1.5 GiB); it bounds what
    /// the vertex and index limits do not: morph targets and animations.
    pub max_accessor_bytes: u64,
    /// The largest image width or height.
    pub max_texture_dimension: u32,
    /// The texels all decoded textures together hold, at 4 bytes a texel
    /// of every level the import makes (RGBA8; a KTX2 file's levels as if
    /// RGBA8, and a Basis Universal file's own bytes, which its texture
    /// keeps), summed from the images' headers before any is decoded. Each
    /// image source is decoded once per colour space it is used in, and
    /// counts once per decode. The default, 4 GiB, is 16 textures at the
    /// largest dimension (8192², 256 MiB each) or 256 at 2048²: more than a
    /// real model's textures, which a GPU must hold too, while 256 images
    /// of 8192² in a 110 KB file (64 GiB) are refused before decoding.
    pub max_decoded_texture_bytes: u64,
    /// Whether a buffer or image URI may name a file outside the model's
    /// folder (an absolute path, or one that climbs out with `..` or a
    /// symbolic link). Off by default: a model names its own files, and a
    /// file from elsewhere is [`GltfError::Io`]. Either way only regular
    /// files are read (not devices, pipes or folders), at most
    /// `max_file_bytes` of them.
    pub allow_files_outside_model_folder: bool,
}

impl Default for GltfLimits {
    fn default() -> Self {
        Self {
            max_file_bytes: 1 << 30,
            max_vertices: 1 << 25,
            max_indices: 1 << 27,
            max_accessor_bytes: 1 << 32,
            max_texture_dimension: 8192,
            max_decoded_texture_bytes: 1 << 32,
            allow_files_outside_model_folder: false,
        }
    }
}

/// How far an import is (shared with another thread: an asynchronous
/// loader shows it while the import runs).
#[derive(Debug, Default)]
pub struct ImportProgress {
    /// Bytes of the file, buffers and images read.
    pub bytes_read: AtomicU64,
    /// Images decoded, and how many will be.
    pub images_decoded: AtomicU64,
    pub images_total: AtomicU64,
    /// Meshes built, and how many will be.
    pub meshes_built: AtomicU64,
    pub meshes_total: AtomicU64,
}

impl ImportProgress {
    pub(crate) fn add(counter: &AtomicU64, n: u64) {
        counter.fetch_add(n, Ordering::Relaxed);
    }
}

/// A mesh of the file: the asset and, per material slot (= section =
/// primitive), the glTF material it uses (`None`: glTF's default material).
#[derive(Clone, Debug)]
pub struct GltfMesh {
    pub name: String,
    pub mesh: Arc<StaticMesh>,
    pub slot_materials: Vec<Option<usize>>,
    /// A skinned mesh's joints and weights per vertex of `mesh` (its
    /// `JOINTS_0`/`WEIGHTS_0` and `JOINTS_1`/`WEIGHTS_1`, joints indexing
    /// the node's skin's joints);
    /// `None` for a mesh that is not skinned.
    pub influences: Option<Vec<renderer::VertexInfluences>>,
    /// Its morph targets, each with a delta per vertex of `mesh` (empty:
    /// none), and their default weights (glTF's `mesh.weights`).
    pub morph_targets: Vec<renderer::MorphTarget>,
    pub default_weights: Vec<f32>,
}

/// A [`GltfTexture`]'s Basis Universal KTX2 file ([`GltfTexture::basis`])
/// transcoded to RGBA8 (the file's levels, a generated chain for a single
/// level) in the texture's colour space: what spawning uploads where the
/// device does not sample BC. `None` for a texture that is not Basis; the
/// error says why the file does not transcode.
pub fn transcode_basis_rgba8(texture: &GltfTexture) -> Option<Result<renderer::Texture2D, String>> {
    let file = texture.basis.as_deref()?;
    Some(ktx::transcode_basis(&texture.texture.label, file, texture.srgb, false))
}

/// A decoded texture: glTF image `image` in one colour space.
#[derive(Clone, Debug)]
pub struct GltfTexture {
    /// The glTF image decoded: the first (in the order materials use them)
    /// of the images naming its source, which share this texture.
    pub image: usize,
    /// Decoded in the sRGB colour space (base colour, emissive), or linear.
    pub srgb: bool,
    /// The decoded texture; for a Basis Universal image (ETC1S or UASTC)
    /// BC7 blocks, transcoded without knowing the device.
    pub texture: renderer::Texture2D,
    /// A Basis Universal image's KTX2 file, which spawning transcodes again,
    /// to RGBA8, where the device does not sample BC ([`transcode_basis_rgba8`]);
    /// `None` for every other image.
    pub basis: Option<Arc<[u8]>>,
}

/// A node: its local transform (in glTF space) and what it carries.
#[derive(Clone, Debug, PartialEq)]
pub struct GltfNode {
    pub name: String,
    pub transform: Transform,
    pub parent: Option<usize>,
    pub children: Vec<usize>,
    /// Index into [`GltfImport::meshes`] (`None` there: nothing drawable).
    pub mesh: Option<usize>,
    pub camera: Option<usize>,
    /// Index into [`GltfImport::lights`].
    pub light: Option<usize>,
    /// Index into [`GltfImport::skins`]: the mesh is skinned by it.
    pub skin: Option<usize>,
}

/// A camera's projection.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum GltfProjection {
    Perspective { yfov: f32, aspect_ratio: Option<f32>, znear: f32, zfar: Option<f32> },
    Orthographic { xmag: f32, ymag: f32, znear: f32, zfar: f32 },
}

#[derive(Clone, Debug, PartialEq)]
pub struct GltfCamera {
    pub name: String,
    pub projection: GltfProjection,
}

/// A `KHR_lights_punctual` light.
#[derive(Clone, Debug, PartialEq)]
pub struct GltfLight {
    pub name: String,
    pub kind: GltfLightKind,
    /// Linear RGB.
    pub color: Vec3,
    /// Lux for a directional light, candela for a point or spot light
    /// (passed to the light components as they are).
    pub intensity: f32,
    /// A point or spot light's range (`None`: unbounded; the component
    /// gets `renderer::range_for_intensity`).
    pub range: Option<f32>,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum GltfLightKind {
    Directional,
    Point,
    /// Cone half-angles in radians, as the file gives them.
    Spot {
        inner_cone: f32,
        outer_cone: f32,
    },
}

/// A scene: its root nodes.
#[derive(Clone, Debug, PartialEq)]
pub struct GltfScene {
    pub name: String,
    pub nodes: Vec<usize>,
}

/// What an import made: plain data, nothing on the GPU or in a World yet.
#[derive(Clone, Debug)]
pub struct GltfImport {
    /// By glTF mesh index; `None` for a mesh with no triangles.
    pub meshes: Vec<Option<GltfMesh>>,
    /// By glTF material index.
    pub materials: Vec<GltfMaterial>,
    /// The decoded textures ([`TextureRef::texture`] indexes this).
    pub textures: Vec<GltfTexture>,
    /// By glTF node index.
    pub nodes: Vec<GltfNode>,
    pub cameras: Vec<GltfCamera>,
    /// By glTF light index (`None` for a light the file leaves out of
    /// the extension's list; none is skipped).
    pub lights: Vec<Option<GltfLight>>,
    pub scenes: Vec<GltfScene>,
    pub default_scene: Option<usize>,
    /// By glTF skin index.
    pub skins: Vec<GltfSkin>,
    /// By glTF animation index (morph-weight channels left out).
    pub animations: Vec<GltfAnimation>,
    /// Primitives with morph targets.
    pub morph_target_primitives: usize,
    /// What was not imported, one line per kind (also logged as warnings).
    pub skipped: Vec<String>,
}

/// Imports a `.gltf` or `.glb` file with the default limits.
pub fn import(path: impl AsRef<Path>) -> Result<GltfImport, GltfError> {
    import_with(path.as_ref(), &GltfLimits::default(), &ImportProgress::default())
}

/// Imports a `.gltf` or `.glb` file, held to `limits`, reporting to `progress`.
pub fn import_with(path: &Path, limits: &GltfLimits, progress: &ImportProgress) -> Result<GltfImport, GltfError> {
    let bytes = read::read_file(path, "", limits, progress)?;
    let base = path.parent().unwrap_or(Path::new("."));
    read::import_bytes(&bytes, Some(base), limits, progress)
}

/// Imports glTF or GLB bytes; external files are resolved against
/// `base_dir` (`None`: only embedded data and data URIs are allowed).
pub fn import_slice(bytes: &[u8], base_dir: Option<&Path>) -> Result<GltfImport, GltfError> {
    import_slice_with(bytes, base_dir, &GltfLimits::default(), &ImportProgress::default())
}

/// [`import_slice`] held to `limits`, reporting to `progress`.
pub fn import_slice_with(
    bytes: &[u8],
    base_dir: Option<&Path>,
    limits: &GltfLimits,
    progress: &ImportProgress,
) -> Result<GltfImport, GltfError> {
    GltfError::check_limit("", "file bytes", bytes.len() as u64, limits.max_file_bytes)?;
    ImportProgress::add(&progress.bytes_read, bytes.len() as u64);
    read::import_bytes(bytes, base_dir, limits, progress)
}

/// The rotation from glTF's axes (Y up, front +Z) to Proxima's (Z up,
/// forward +X, left +Y): glTF +Z → +X, +X → +Y, +Y → +Z.
pub fn gltf_to_proxima() -> Quat {
    Quat::from_mat3(&Mat3::from_cols(Vec3::Y, Vec3::Z, Vec3::X))
}

/// The local rotation that makes a Proxima camera or light (looking or
/// shining along its +X, up +Z) look along a glTF node's -Z with +Y up.
pub fn gltf_look_rotation() -> Quat {
    Quat::from_mat3(&Mat3::from_cols(Vec3::NEG_Z, Vec3::NEG_X, Vec3::Y))
}

/// No node of `count` is its own ancestor (`parent`: each node's parent,
/// in range): [`GltfError::Invalid`] naming a node on a cycle otherwise.
/// Linear: each node's walk up is cut at the first node already known to
/// reach a root.
pub(crate) fn check_acyclic(count: usize, parent: impl Fn(usize) -> Option<usize>) -> Result<(), GltfError> {
    // 0: not seen, 1: on the current walk, 2: reaches a root.
    let mut state = vec![0u8; count];
    let mut walk = Vec::new();
    for start in 0..count {
        let mut at = Some(start);
        while let Some(n) = at {
            match state[n] {
                2 => break,
                1 => return Err(GltfError::Invalid { path: format!("/nodes/{n}"), problem: "the node is its own ancestor".into() }),
                _ => {
                    state[n] = 1;
                    walk.push(n);
                    at = parent(n);
                }
            }
        }
        for n in walk.drain(..) {
            state[n] = 2;
        }
    }
    Ok(())
}

impl GltfImport {
    /// Triangles of all meshes (LOD 0).
    pub fn triangle_count(&self) -> usize {
        self.meshes.iter().flatten().map(|m| m.mesh.render_data().lods()[0].indices.len() / 3).sum()
    }

    /// The scene spawned by [`Self::spawn`]: the default scene, else the
    /// first, else `None` (every root node).
    pub fn spawned_scene_index(&self) -> Option<usize> {
        self.default_scene.or(if self.scenes.is_empty() { None } else { Some(0) })
    }

    /// The skeletal mesh of glTF mesh `mesh` skinned by skin `skin` (as
    /// spawning makes it for a node with both), and the clips of the file's
    /// animations that move its skeleton: for a caller that places many
    /// copies itself (a crowd) rather than spawning the file's scene. Its
    /// model space is the file's scene space (glTF's axes). Errors: indices
    /// past the import's lists, a mesh without influences, a vertex naming
    /// a joint the skin lacks, a skeleton or clip the engine refuses.
    pub fn skeletal_mesh(
        &self,
        mesh: usize,
        skin: usize,
    ) -> Result<(Arc<crate::SkeletalMesh>, Vec<Arc<crate::animation::AnimationClip>>), GltfError> {
        self.check_indices()?;
        if skin >= self.skins.len() {
            return Err(GltfError::Invalid {
                path: format!("/skins/{skin}"),
                problem: format!("the import has {} skins", self.skins.len()),
            });
        }
        skin::skeletal_mesh(self, mesh, skin)
    }

    /// Checks that every index the import's public fields hold names
    /// something that is there: scenes' roots, nodes' parents, children,
    /// meshes, cameras and lights, meshes' materials, materials' textures,
    /// the default scene; that each node's children name it as their parent;
    /// that no node is its own ancestor; and that no mesh has more material
    /// slots (primitives) than a component takes (one past
    /// [`crate::MAX_MATERIAL_SLOT`]). An import made by [`import`] passes
    /// unless a mesh has more primitives than that; one whose fields were
    /// edited may not, and
    /// spawning it is then [`GltfError::Invalid`] (with the field's
    /// JSON-like path) before anything is created, rather than a panic.
    /// Linear in the import's size.
    pub fn check_indices(&self) -> Result<(), GltfError> {
        let invalid = |path: String, problem: String| Err(GltfError::Invalid { path, problem });
        let within = |path: String, index: usize, len: usize, what: &str| {
            if index < len {
                Ok(())
            } else {
                invalid(path, format!("names {what} {index}; the import has {len}"))
            }
        };
        if let Some(d) = self.default_scene {
            within("/scene".into(), d, self.scenes.len(), "scene")?;
        }
        for (i, scene) in self.scenes.iter().enumerate() {
            for (k, &n) in scene.nodes.iter().enumerate() {
                within(format!("/scenes/{i}/nodes/{k}"), n, self.nodes.len(), "node")?;
            }
        }
        for (i, node) in self.nodes.iter().enumerate() {
            if let Some(p) = node.parent {
                within(format!("/nodes/{i} (parent)"), p, self.nodes.len(), "node")?;
            }
            for (k, &c) in node.children.iter().enumerate() {
                within(format!("/nodes/{i}/children/{k}"), c, self.nodes.len(), "node")?;
                if self.nodes[c].parent != Some(i) {
                    return invalid(
                        format!("/nodes/{i}/children/{k}"),
                        format!("node {c}'s parent is {:?}, not {i}", self.nodes[c].parent),
                    );
                }
            }
            if let Some(m) = node.mesh {
                within(format!("/nodes/{i}/mesh"), m, self.meshes.len(), "mesh")?;
            }
            if let Some(c) = node.camera {
                within(format!("/nodes/{i}/camera"), c, self.cameras.len(), "camera")?;
            }
            if let Some(l) = node.light {
                within(format!("/nodes/{i}/light"), l, self.lights.len(), "light")?;
            }
            if let Some(s) = node.skin {
                within(format!("/nodes/{i}/skin"), s, self.skins.len(), "skin")?;
            }
        }
        for (i, skin) in self.skins.iter().enumerate() {
            for (k, &j) in skin.joints.iter().enumerate() {
                within(format!("/skins/{i}/joints/{k}"), j, self.nodes.len(), "node")?;
            }
            if skin.inverse_bind_matrices.len() != skin.joints.len() || skin.joints.is_empty() {
                return invalid(
                    format!("/skins/{i}"),
                    format!("{} joints, {} inverse bind matrices", skin.joints.len(), skin.inverse_bind_matrices.len()),
                );
            }
        }
        for (i, a) in self.animations.iter().enumerate() {
            for (k, c) in a.channels.iter().enumerate() {
                within(format!("/animations/{i}/channels/{k}/target/node"), c.target().node() as usize, self.nodes.len(), "node")?;
            }
        }
        self.check_acyclic()?;
        for (i, mesh) in self.meshes.iter().enumerate() {
            let slots = mesh.as_ref().map_or(0, |m| m.slot_materials.len());
            if slots > crate::MAX_MATERIAL_SLOT + 1 {
                let max = crate::MAX_MATERIAL_SLOT + 1;
                return invalid(format!("/meshes/{i}"), format!("{slots} material slots (primitives); a component takes {max}"));
            }
            for (k, m) in mesh.iter().flat_map(|m| m.slot_materials.iter().enumerate()) {
                if let Some(m) = *m {
                    within(format!("/meshes/{i} (material slot {k})"), m, self.materials.len(), "material")?;
                }
            }
        }
        for (i, m) in self.materials.iter().enumerate() {
            for t in m.textures().into_iter().flatten() {
                within(format!("/materials/{i} (texture)"), t.texture, self.textures.len(), "texture")?;
            }
        }
        Ok(())
    }

    /// No node is its own ancestor (parents in range, checked before).
    fn check_acyclic(&self) -> Result<(), GltfError> {
        check_acyclic(self.nodes.len(), |n| self.nodes[n].parent)
    }

    /// Spawns the default scene (see [`Self::spawn_scene`]).
    pub fn spawn(&self, world: &mut World) -> Result<SpawnedScene, GltfError> {
        self.spawn_scene(world, None)
    }

    /// Creates the textures and materials through the world's render
    /// thread and spawns scene `scene` (`None`: the default one) as one
    /// actor: a root component rotated by [`gltf_to_proxima`], a component
    /// per node (a static mesh where the node has a mesh) with the file's
    /// hierarchy and local transforms, camera and light components.
    /// Block-compressed textures go up as blocks where the render thread's
    /// device samples BC and are decoded to RGBA8 first where it does not
    /// ([`decompress_bc`]; Basis Universal ones transcoded to RGBA8 from
    /// their file instead, [`transcode_basis_rgba8`]). Everything is checked first; on an error nothing was added to the
    /// World or the render thread.
    pub fn spawn_scene(&self, world: &mut World, scene: Option<usize>) -> Result<SpawnedScene, GltfError> {
        spawn::spawn(self, world, scene)
    }
}
